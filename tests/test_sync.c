/*
 * __syncthreads' timing (sim/units/sync.c) and the forms a block barrier compiles to: one unit of the
 * SM counts every block's arrivals a warp at a time, and block.sync() carries its convergence check.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support/h100_csv.h"
#include "support/run_kernel.h"

static struct sim_report r;
static struct diag d;

/* traces/h100/callforms.csv: a form's cycles an iteration at w warps per scheduler. */
static double callforms_row(const char *form, int w)
{
	char fo[256], wp[40];
	snprintf(fo, sizeof fo, "form=%s", form), snprintf(wp, sizeof wp, "warps_per_scheduler=%d", w);
	return h100_cell("callforms.csv", "cycles_per_iteration_median", fo, wp, NULL);
}

/* callforms.cu k_barrier<2>: a loop (not unrolled) of __syncthreads; cycles an iteration. */
static double barrier_loop(const struct machine *m, int block_size, int blocks)
{
	uint64_t c[2];
	int n[2] = {64, 192};
	for (int i = 0; i < 2; i++) {
		char text[512];
		snprintf(text, sizeof text,
			 "{\"kernel\": \"t\", \"source\": \"test\", \"body\": [{\"op\": \"for\", \"var\": \"i\", \"type\": \"int\", "
			 "\"from\": 0, \"to\": %d, \"body\": [{\"op\": \"syncthreads\"}]}]}",
			 n[i]);
		cr_assert_eq(run_kernel_text(text, block_size, blocks, m, &r, &d), 0, "%s", d.msg);
		c[i] = r.cycles;
	}
	return (double)(c[1] - c[0]) / (n[1] - n[0]);
}

/*
 * callforms.csv, syncthreads: every warp of a block arriving at once is released
 * syncthreads_base_latency + nwarps x syncthreads_warp_latency later (barrier.csv's back-to-back
 * barriers); the loop's own trip adds its latency once, not a share per warp (31 cycles at 4 warps,
 * 87 at 32), and two blocks of 32 warps take turns at the SM's one counting unit (150 cycles, twice
 * one block's period and more). Each within 10% of the H100; a unit per block instead would leave the
 * two blocks at one block's period.
 */
Test(sync, the_sm_counts_every_blocks_arrivals_a_warp_at_a_time)
{
	struct machine m;
	cr_assert_eq(machine_load("configs/machines/h100.json", &m, &d), 0, "%s", d.msg);
	struct {
		int block_size, blocks, wps;
	} rows[] = {{128, 1, 1}, {256, 1, 2}, {512, 1, 4}, {1024, 1, 8}, {1024, 2, 16}};
	double got[5];
	for (int i = 0; i < 5; i++) {
		got[i] = barrier_loop(&m, rows[i].block_size, rows[i].blocks);
		double hw = callforms_row("syncthreads", rows[i].wps);
		cr_assert(fabs(got[i] - hw) <= 0.10 * hw, "%d blocks of %d threads: %.1f cycles an iteration, the H100 %.1f",
			  rows[i].blocks, rows[i].block_size, got[i], hw);
	}
	cr_assert_gt(got[4], 1.6 * got[3], "two blocks share the unit: %.1f against one block's %.1f", got[4], got[3]);
}

/*
 * Cooperative groups' block.sync() (cg::sync(block), cg::wait's group.sync()) is compiled with a
 * convergence check before its BAR.SYNC (traces/h100/pipelines.sass, with_staging_scope_thread<2>
 * 0x1130-0x1150: UMOV, BRA.DIV, BAR.SYNC); __syncthreads() is the BAR.SYNC alone (forms.sass).
 */
Test(sync, block_sync_carries_its_convergence_check)
{
	const char *fmt = "{\"kernel\": \"t\", \"source\": \"test\", \"body\": [{\"op\": \"syncthreads\"%s}]}";
	const enum iclass want[] = {IC_UNI, IC_BRA, IC_BAR};
	for (int cg = 0; cg < 2; cg++) {
		char text[256];
		snprintf(text, sizeof text, fmt, cg ? ", \"form\": \"block.sync\"" : "");
		struct launch l = {64, 1, 1};
		struct kernel k;
		cr_assert_eq(load_kernel_text(text, &l, &k, &d), 0, "%s", d.msg);
		const struct lform *q = &k.lowered[0];
		cr_assert_eq(q->n, cg ? 3 : 1, "%s: %d instructions", cg ? "block.sync()" : "__syncthreads()", q->n);
		for (int i = 0; i < q->n; i++)
			cr_assert_eq(q->code[i].cls, want[cg ? i : 2], "instruction %d", i);
		kernel_free(&k);
	}
}

/*
 * What the lowering issues against what the H100 executes: the validation kernels' warp-instructions
 * per warp and batch, as ncu counts them (smsp__inst_executed over warps and batches, one block per
 * SM, 128 and 256 threads, k = 0, 32 and 128; traces/h100/instruction_counts.csv), against the
 * shipped experiments run with the same settings.  Instruction counts are not timing: they check
 * that each op compiles to about what nvcc's SASS executes, whatever the clock.  Today the lowering
 * is within 3% for the unified pipeline at 2-8 stages; it issues ~12 too many a batch for the single
 * stage and ~6 for the 1-stage unified pipeline, ~12 too few for the thread-scope pipeline (the
 * fetch loop's unrolled remainder, README "What is still off"); the bounds hold it there.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support/run_experiment.h"

Test(counts, the_lowering_issues_about_what_the_h100_executes)
{
	FILE *f = fopen("traces/h100/instruction_counts.csv", "r");
	cr_assert(f);
	char line[512];
	cr_assert(fgets(line, sizeof line, f));
	double sum = 0;
	int rows = 0;
	while (fgets(line, sizeof line, f)) {
		char kernel[64];
		int stages, bs, bps, k, batches;
		double per;
		cr_assert_eq(sscanf(line, "%63[^,],%d,%d,%d,%d,%d,%*[^,],%*d,%*d,%*d,%lf", kernel, &stages, &bs, &bps, &k,
				    &batches, &per),
			     7, "%s", line);
		char s_stages[32], s_bs[32], s_k[32], s_batches[32];
		snprintf(s_stages, sizeof s_stages, "stages=%d", stages);
		snprintf(s_bs, sizeof s_bs, "block_size=%d", bs);
		snprintf(s_k, sizeof s_k, "k=%d", k);
		snprintf(s_batches, sizeof s_batches, "batch_sz=%d", batches);
		/* with_single_stage has no stages parameter */
		const char *with_stages[] = {s_bs, s_k, s_batches, "blocks=1", "machine_set=none", s_stages};
		int nsets = strcmp(kernel, "with_single_stage") ? 6 : 5;
		struct sim_report r;
		struct diag d = {0};
		cr_assert_eq(run_experiment(kernel, with_stages, nsets, &r, &d), 0, "%s: %s", kernel, d.msg);
		double got = (double)r.warp_insts / ((bs / 32) * (double)batches);
		double err = (got - per) / per;
		cr_expect(fabs(err) < 0.16, "%s, %d stages, %d threads, k = %d: %.1f warp-instructions a warp and batch, the H100 %.1f",
			  kernel, stages, bs, k, got, per);
		sum += fabs(err);
		rows++;
	}
	fclose(f);
	cr_assert_eq(rows, 54);
	cr_expect_lt(sum / rows, 0.05, "mean difference %.1f%% over %d rows", 100 * sum / rows, rows);
}

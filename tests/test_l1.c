/*
 * l1: the L1 data cache as local-array loads see it, and the shared-memory carveout the driver
 * picks (sim/units/l1.c): the carveouts ncu reported on the H100 (traces/h100/carveout.csv), the
 * law of reuse distance and its draws, the first load of an element, the microbenchmark's loop and
 * the pipelines' local misses against those ncu counted (traces/h100/l1_local.csv,
 * l1_local_validation.csv), and what they cost a long input.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/machine.h"
#include "sim/units/l1.h"
#include "support/run_experiment.h"

static struct machine h100(void)
{
	struct machine m;
	struct diag d = {0};
	cr_assert_eq(machine_load("configs/machines/h100.json", &m, &d), 0, "%s", d.msg);
	return m;
}

Test(l1, the_driver_rule_gives_the_carveouts_ncu_reported)
{
	struct machine m = h100();
	FILE *f = fopen("traces/h100/carveout.csv", "r");
	cr_assert(f);
	char line[256];
	cr_assert(fgets(line, sizeof line, f)); /* block_size,dynamic_smem,carveout_kb */
	int rows = 0, match = 0;
	long bs, smem, kb;
	while (fscanf(f, "%ld,%ld,%ld\n", &bs, &smem, &kb) == 3) {
		rows++;
		uint64_t got = l1_carveout(&m, (uint64_t)smem, bs);
		if (got == (uint64_t)kb * 1024)
			match++;
		else /* the two launches without any shared memory at 256 and 512 threads: ncu 32 and 16 KB */
			cr_expect(smem == 0 && (bs == 256 || bs == 512), "%ld threads, %ld bytes: %llu KB, ncu %ld KB", bs,
				  smem, (unsigned long long)got / 1024, kb);
	}
	fclose(f);
	cr_assert_eq(rows, 60);
	cr_assert_eq(match, 58);
	/* the validation kernels' shapes (l1_local_validation.csv): 2, 4 and 8 stages of 256 threads */
	cr_expect_eq(l1_carveout(&m, 2 * 256 * 4 + 32, 256), 64 * 1024);
	cr_expect_eq(l1_carveout(&m, 4 * 256 * 4 + 64, 256), 100 * 1024);
	cr_expect_eq(l1_carveout(&m, 8 * 256 * 4 + 128, 256), 132 * 1024);
}

/* An L1 of 1,024 lines (128 KB) missing by the law 0.5 x (d / lines) ^ 1.5. */
static struct l1 small_l1(void)
{
	struct machine m;
	machine_defaults(&m);
	m.l1_bytes = 1024 * 128;
	struct l1 c;
	l1_init(&c, &m, 0, 0.5, 1.5, 0);
	cr_assert_eq(c.lines, 1024);
	return c;
}

Test(l1, a_first_load_hits_and_nothing_leaves_before_the_stream_fills_l1)
{
	struct l1 c = small_l1();
	for (int e = 0; e < 8; e++)
		cr_assert(l1_local(&c, 0, e), "the stores that filled the array put element %d in L1", e);
	for (int i = 0; i < 1023; i++)
		l1_stream(&c);
	for (int e = 0; e < 8; e++)
		cr_assert(l1_local(&c, 0, e), "1,023 lines do not fill 1,024: element %d stays", e);
	l1_free(&c);
}

Test(l1, the_miss_chance_grows_with_the_stream_between_two_loads)
{
	cr_assert_float_eq(l1_miss_chance(0.5, 1.5, 1024, 1024), 0.5, 1e-12, "one L1 of lines between: the coefficient");
	cr_assert_float_eq(l1_miss_chance(0.5, 1.5, 256, 1024), 0.5 * 0.125, 1e-12, "a quarter: (1/4)^1.5 of it");
	cr_assert_float_eq(l1_miss_chance(0.5, 1.5, 8192, 1024), 1.0, 1e-12, "a chance, at most 1");
	cr_assert_float_eq(l1_miss_chance(0.5, 1.5, 0, 1024), 0.0, 1e-12);
	cr_assert_float_eq(l1_miss_chance(0.5, 1.5, 1, 0), 1.0, 1e-12, "no L1 at all");
}

/* Many elements, each loaded again after 200 k lines: the share that misses is the law's, draw by draw. */
static double share_after(uint64_t k)
{
	struct l1 c = small_l1();
	for (int i = 0; i < 2048; i++) /* fill L1 first */
		l1_stream(&c);
	int misses = 0, loads = 0;
	for (int round = 0; round < 40; round++)
		for (int e = 0; e < 100; e++) {
			if (round)
				misses += !l1_local(&c, (uint32_t)e, round & 1), loads++;
			else
				l1_local(&c, (uint32_t)e, 1), l1_local(&c, (uint32_t)e, 0);
			for (uint64_t i = 0; i < k; i++)
				l1_stream(&c);
		}
	l1_free(&c);
	return (double)misses / loads;
}

Test(l1, the_loads_miss_as_the_law_says)
{
	/* element e, parity p, is loaded again two rounds later: 2 x 100 x k lines in between */
	double near = share_after(2), far = share_after(8);
	double want_near = l1_miss_chance(0.5, 1.5, 400, 1024), want_far = l1_miss_chance(0.5, 1.5, 1600, 1024);
	cr_expect(fabs(near - want_near) < 0.03, "%.3f of the loads missed after 400 lines, the law %.3f", near, want_near);
	cr_expect(fabs(far - want_far) < 0.03, "%.3f after 1,600 lines, the law %.3f", far, want_far);
	cr_expect_lt(near, far);
	cr_expect_eq(share_after(2), near, "the draws are a hash: the same run misses the same loads");
}

Test(l1, no_l1_left_beside_the_carveout_misses_every_load_after_the_first)
{
	struct machine m;
	machine_defaults(&m);
	struct l1 c;
	l1_init(&c, &m, (uint64_t)m.l1_bytes, m.l1_reuse_coeff, m.l1_reuse_exponent, m.l1_reuse_size_exponent);
	cr_assert(l1_local(&c, 0, 7));
	cr_assert_not(l1_local(&c, 0, 7));
	l1_free(&c);
}

/* l1_local.cu's loop as calibrate.c replays it: an offset read twice a batch, a line streamed after the first read and, with store, after the second. */
static double replica(const struct machine *m, int stages, int warps, int batches, uint64_t carveout, bool store)
{
	struct l1 c;
	l1_init(&c, m, carveout, m->l1_reuse_coeff, m->l1_reuse_exponent, m->l1_reuse_size_exponent);
	int misses = 0, loads = 0;
	for (int f = 0; f < batches + stages - 1; f++)
		for (int w = 0; w < warps; w++) {
			if (f < batches) {
				misses += !l1_local(&c, (uint32_t)w, f % stages), loads++;
				l1_stream(&c);
			}
			if (f >= stages - 1) {
				misses += !l1_local(&c, (uint32_t)w, (f + 1) % stages), loads++;
				if (store)
					l1_stream(&c);
			}
		}
	l1_free(&c);
	return (double)misses / loads;
}

/*
 * tests/hw/l1_local.cu's loop on the shipped law, the draws and all, against ncu's miss share of the
 * H100 (traces/h100/l1_local.csv): long runs (1552 batches, L1 long past full) and short ones (128, L1
 * filling) at the driver's carveout, 8 stages of 256 threads with a store a batch, 1-8 blocks per SM.
 * An LRU cache of 4 ways (the model before) missed 0.35% of the one-block long run's loads and 42% at
 * 8 blocks, against the H100's 1.5% and 18%.
 */
Test(l1, the_microbenchmarks_loop_misses_as_on_the_h100)
{
	struct machine m = h100();
	static const struct {
		int batches, blocks;
		double ncu;
	} rows[] = {{1552, 1, 0.01541}, {1552, 2, 0.03690}, {1552, 4, 0.08472}, {1552, 8, 0.18461},
		    {128, 2, 0.02296},  {128, 4, 0.07343},  {128, 8, 0.18281}};
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		double got = replica(&m, 8, 8 * rows[i].blocks, rows[i].batches, 132 * 1024, true);
		cr_expect(got > rows[i].ncu / 1.6 && got < rows[i].ncu * 1.6, "%d batches, %d blocks: %.4f against ncu's %.4f",
			  rows[i].batches, rows[i].blocks, got, rows[i].ncu);
	}
	double short_one = replica(&m, 8, 8, 128, 132 * 1024, true), long_one = replica(&m, 8, 8, 1552, 132 * 1024, true);
	/* ncu: 0.0074 and 0.0154 (2,000 draws against 24,000 in the replica) */
	cr_expect_lt(short_one, long_one, "one block, 128 batches: %.4f, the stream fills L1 halfway through (long: %.4f)",
		     short_one, long_one);
}

/*
 * A larger carveout shrinks L1, and the H100's misses rise faster with that than with the stream
 * (l1_local.csv, 8 stages, 32 warps, no store, 128 batches: 0.58%, 1.9%, 3.7-4.1% and 9.5% at 64,
 * 100, 132 and 164 KB, L1 1.23, 1.26 and 1.35 times smaller a step, where twice the stages take 100 KB's
 * 0.5% to 1.9%).  The shipped law (its size term, l1_reuse_size_exponent) follows each within 1.6
 * times (0.92, 1.6, 3.0 and 6.0%) and rises 3.2 times from 64 to 132 KB, the H100 6.7; the stream's
 * power alone (session 22's law: 0.6024, 1.35) gave 1.5, 2.4, 3.4 and 5.5% (the 64 KB row 2.6 times
 * over, the 164 KB one 1.7 times under) and a rise of 2.2.
 */
Test(l1, a_larger_carveout_misses_more_than_the_stream_alone_says)
{
	struct machine m = h100();
	static const struct {
		int kb;
		double ncu;
	} rows[] = {{64, 0.00579}, {100, 0.01935}, {132, 0.03870}, {164, 0.09480}};
	double got[4];
	for (int i = 0; i < 4; i++) {
		got[i] = replica(&m, 8, 32, 128, (uint64_t)rows[i].kb * 1024, false);
		cr_expect(got[i] > rows[i].ncu / 1.6 && got[i] < rows[i].ncu * 1.6, "%d KB: %.4f against ncu's %.4f",
			  rows[i].kb, got[i], rows[i].ncu);
	}
	cr_expect_gt(got[2] / got[0], 2.8, "64 -> 132 KB: %.1f times (the H100 6.7)", got[2] / got[0]);
	cr_expect_gt(l1_size_term((uint64_t)m.l1_bytes, 1024, m.l1_reuse_size_exponent),
		     l1_size_term((uint64_t)m.l1_bytes, 1536, m.l1_reuse_size_exponent), "a smaller L1, a larger term");
	cr_expect_eq(l1_size_term((uint64_t)m.l1_bytes, 1024, 0.0), 1.0, "without the size exponent, the stream's law");
}

/* The pipeline as ncu's rows ran it (validation --ncu: k = 0, 64 batches, the input in DRAM), on the shipped machine. */
static double local_miss_share(const char *stages, const char *blocks)
{
	const char *sets[] = {stages, blocks, "block_size=256", "k=0", "batch_sz=64", "machine_set=none",
			      "machine.l2_hit_fraction=0"};
	struct sim_report r;
	struct diag d = {0};
	cr_assert_eq(run_experiment("with_staging_unified", sets, 7, &r, &d), 0, "%s", d.msg);
	cr_assert_gt(r.local_hits + r.local_misses, 0, "the pipeline loads shared_offset[] from local memory");
	return (double)r.local_misses / (double)(r.local_hits + r.local_misses);
}

/*
 * ncu on the H100 (l1_local_validation.csv): the 8-stage pipeline's LDLs miss 0.1%, 1.3%, 5.8% and 19%
 * at 1, 2, 4 and 8 blocks of 256 threads per SM; the 4-stage one's 0, 0.1%, 0.6% and 3.5%.  The model
 * was fitted on tests/hw/l1_local.cu alone; here it meets the pipeline within a factor of two where
 * the misses matter, and keeps the order.  (Until session 26 the runs took the experiment's k = 256
 * and L2 input, not the rows' own k = 0 from DRAM; the law with L1's size in it gives 0.0945 at 8
 * stages and 8 blocks there, 0.136 as ncu's row ran.)
 */
Test(l1, more_stages_and_more_blocks_miss_more_as_on_the_h100)
{
	double s8b8 = local_miss_share("stages=8", "blocks=8"), s8b4 = local_miss_share("stages=8", "blocks=4");
	double s4b8 = local_miss_share("stages=4", "blocks=8"), s8b1 = local_miss_share("stages=8", "blocks=1");
	cr_expect(s8b8 > 0.19266 / 2 && s8b8 < 0.19266 * 2, "8 stages, 8 blocks: %.4f against ncu's 0.1927", s8b8);
	cr_expect(s8b4 > 0.05828 / 2 && s8b4 < 0.05828 * 2, "8 stages, 4 blocks: %.4f against ncu's 0.0583", s8b4);
	cr_expect(s4b8 > 0.03460 / 2 && s4b8 < 0.03460 * 2, "4 stages, 8 blocks: %.4f against ncu's 0.0346", s4b8);
	cr_expect_lt(s8b1, 0.005, "8 stages, one block: %.4f (ncu 0.0013)", s8b1);
	cr_expect(s8b8 > s8b4 && s8b4 > s8b1 && s8b8 > s4b8, "the order ncu counts");
}

/* Where the LDLs miss, the 8-stage pipeline slows down against the 4-stage one, as the H100 does at 2-8 blocks per SM. */
Test(l1, local_misses_cost_the_8_stage_pipeline_its_lead)
{
	const char *s4[] = {"stages=4", "blocks=8", "block_size=256", "batch_sz=128"};
	const char *s8[] = {"stages=8", "blocks=8", "block_size=256", "batch_sz=128"};
	struct sim_report r4, r8;
	struct diag d = {0};
	cr_assert_eq(run_experiment("with_staging_unified", s4, 4, &r4, &d), 0, "%s", d.msg);
	cr_assert_eq(run_experiment("with_staging_unified", s8, 4, &r8, &d), 0, "%s", d.msg);
	cr_assert_gt(r8.local_misses, 0);
	cr_expect_gt(r8.cycles, r4.cycles, "8 stages at 8 blocks: %llu cycles, 4 stages %llu (H100: 3069 and 2805 a batch)",
		     (unsigned long long)r8.cycles, (unsigned long long)r4.cycles);
}

/*
 * A long input (validation.csv, with_staging_unified, 256 threads, one block per SM, k = 128, 1552
 * batches from DRAM): on the H100 more stages are slower, 1305, 1359 and 1433 cycles a batch at 2, 4 and
 * 8 stages, where 64 batches take 1318, 1342 and 1333: the stream fills L1 and the larger carveouts
 * leave less of it, so the LDLs of shared_offset[] miss (ncu: 0.04%, 0.32% and 1.45% of their sectors)
 * and the block's warps wait at producer_acquire for the one whose LDL went to DRAM
 * (validation_pcsamp-style sampling of 2 and 8 stages: that try_wait's long-scoreboard stall 40 -> 137
 * cycles a batch).  The model with an LRU L1 gave 1283, 1285 and 1299.
 */
Test(l1, a_long_input_makes_more_stages_slower_as_on_the_h100)
{
	const char *s2[] = {"stages=2", "k=128", "batch_sz=1552"}, *s4[] = {"stages=4", "k=128", "batch_sz=1552"},
		   *s8[] = {"stages=8", "k=128", "batch_sz=1552"};
	static const double h100[] = {1305.0, 1358.8, 1433.2};
	const char *const *sets[] = {s2, s4, s8};
	double got[3];
	for (int i = 0; i < 3; i++) {
		struct sim_report r;
		struct diag d = {0};
		cr_assert_eq(run_experiment("with_staging_unified", sets[i], 3, &r, &d), 0, "%s", d.msg);
		got[i] = (double)r.cycles / 1552.0;
		cr_expect(fabs(got[i] - h100[i]) < 0.04 * h100[i], "%s: %.1f cycles a batch, H100 %.1f", sets[i][0], got[i],
			  h100[i]);
	}
	cr_expect(got[0] < got[1] && got[1] < got[2], "2 < 4 < 8 stages: %.1f, %.1f, %.1f", got[0], got[1], got[2]);
}

/*
 * l1: the L1 data cache as local-array loads see it, and the shared-memory carveout the driver
 * picks (sim/units/l1.c): the carveouts ncu reported on the H100 (traces/h100/carveout.csv), LRU in
 * a set, where streamed global lines go in, the first load of an element, and the pipelines'
 * local misses against those ncu counted (traces/h100/l1_local_validation.csv).
 */
#include <criterion/criterion.h>
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

/* A machine whose L1, beside the carveout, is one set of four ways. */
static struct l1 one_set(bool stream_mru)
{
	struct machine m;
	machine_defaults(&m);
	m.l1_bytes = 4 * 128;
	struct l1 c;
	cr_assert_eq(l1_init(&c, &m, 0, 4, stream_mru), 0);
	cr_assert_eq(c.sets, 1);
	return c;
}

Test(l1, a_first_load_hits_and_the_least_recent_line_goes_first)
{
	struct l1 c = one_set(true);
	for (int e = 0; e < 4; e++)
		cr_assert(l1_local(&c, 0, e), "the stores that filled the array put element %d in L1", e);
	cr_assert(l1_local(&c, 0, 0), "four lines fit four ways");
	cr_assert(l1_local(&c, 0, 4), "a fifth element's first load hits too, and evicts the least recent: 1");
	cr_assert_not(l1_local(&c, 0, 1), "element 1 was the least recently used");
	cr_assert(l1_local(&c, 0, 0), "element 0 was used again after 1 and stayed");
	cr_assert(l1_local(&c, 1, 0), "another warp's element 0 is its own line: its first load");
	cr_assert_not(l1_local(&c, 0, 3), "which took the least recent way, element 3's");
	l1_free(&c);
}

Test(l1, streamed_lines_at_the_lru_end_only_displace_each_other)
{
	struct l1 lru = one_set(false), mru = one_set(true);
	for (int e = 0; e < 3; e++) {
		l1_local(&lru, 0, e);
		l1_local(&mru, 0, e);
	}
	for (uint64_t line = 100; line < 110; line++) {
		l1_stream(&lru, line);
		l1_stream(&mru, line);
	}
	for (int e = 0; e < 3; e++) {
		cr_expect(l1_local(&lru, 0, e), "at the LRU end the stream takes only the fourth way: element %d stays", e);
		cr_expect_not(l1_local(&mru, 0, e), "at the MRU end ten lines push element %d out", e);
	}
	l1_free(&lru);
	l1_free(&mru);
}

Test(l1, no_l1_left_beside_the_carveout_misses_every_load_after_the_first)
{
	struct machine m;
	machine_defaults(&m);
	struct l1 c;
	cr_assert_eq(l1_init(&c, &m, (uint64_t)m.l1_bytes, 4, true), 0);
	cr_assert(l1_local(&c, 0, 7));
	cr_assert_not(l1_local(&c, 0, 7));
	l1_free(&c);
}

static double local_miss_share(const char *stages, const char *blocks)
{
	const char *sets[] = {stages, blocks, "block_size=256"};
	struct sim_report r;
	struct diag d = {0};
	cr_assert_eq(run_experiment("with_staging_unified", sets, 3, &r, &d), 0, "%s", d.msg);
	cr_assert_gt(r.local_hits + r.local_misses, 0, "the pipeline loads shared_offset[] from local memory");
	return (double)r.local_misses / (double)(r.local_hits + r.local_misses);
}

/*
 * ncu on the H100 (l1_local_validation.csv): the 8-stage pipeline's LDLs miss 0.1%, 1.3%, 5.8% and 19%
 * at 1, 2, 4 and 8 blocks of 256 threads per SM; the 4-stage one's 0, 0.1%, 0.6% and 3.5%.  The model
 * was fitted on tests/hw/l1_local.cu alone; here it meets the pipeline within a factor of two where
 * the misses matter, and keeps the order.
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

/*
 * smemport: the shared-memory port that the warps' accesses and the copies' fills take in turn
 * (sim/units/smemport.c): in arrival order, a fill delaying the accesses behind it and none before;
 * a cp.async fill takes it for its bytes at its width, whatever its lanes' banks (sim/units/copy.c).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "sim/engine/simint.h"
#include "support/run_experiment.h"

static struct machine m;
static struct sim s;

static void setup(void)
{
	machine_defaults(&m);
	m.smem_wavefront_cycles = 1;
	memset(&s, 0, sizeof s);
	s.m = &m;
}

static void teardown(void) { smem_port_free(&s); }

TestSuite(smemport, .init = setup, .fini = teardown);

Test(smemport, accesses_queue_behind_each_other)
{
	cr_assert_eq(smem_port_take(&s, 100, 4), 100, "an idle port starts at once");
	cr_assert_eq(smem_port_take(&s, 101, 2), 104, "the next waits for the first's 4 wavefronts");
	cr_assert_eq(smem_port_take(&s, 200, 1), 200, "a later one finds the port free again");
}

Test(smemport, a_fill_delays_the_accesses_behind_it_and_none_before)
{
	smem_port_fill(&s, 150, 64); /* a copy's 8 KB arriving at cycle 150: 64 wavefronts */
	cr_assert_eq(smem_port_take(&s, 100, 8), 100, "an access before the fill arrives goes first");
	cr_assert_eq(smem_port_take(&s, 149, 8), 149, "and so does one just before it");
	cr_assert_eq(smem_port_take(&s, 160, 8), 149 + 8 + 64, "the fill waited for that one; one after it waits for both");
}

Test(smemport, fills_join_in_arrival_order_whatever_order_they_were_announced_in)
{
	smem_port_fill(&s, 300, 10);
	smem_port_fill(&s, 100, 10);
	smem_port_fill(&s, 200, 10);
	smem_port_fill(&s, 105, 10); /* arrives while the fill of cycle 100 still has the port */
	cr_assert_eq(smem_port_take(&s, 120, 1), 120, "100's and 105's fills end at 120");
	cr_assert_eq(smem_port_take(&s, 205, 1), 210, "200's fill holds the port until 210");
	cr_assert_eq(smem_port_take(&s, 1000, 1), 1000, "300's is long past");
	cr_assert_eq(s.mem.port.n, 0, "every fill joined the port");
}

Test(smemport, many_fills_grow_the_heap)
{
	for (int i = 0; i < 5000; i++)
		smem_port_fill(&s, (uint64_t)(5000 - i) * 10, 1);
	cr_assert_eq(smem_port_take(&s, 100000, 1), 100000, "5000 fills of one wavefront, 10 cycles apart, are past");
	cr_assert_eq(s.mem.port.n, 0);
}

/*
 * primitive_copies with its lanes in 4 groups (lane % 4), 4 warps an SM, a commit per group: a
 * group's 16-byte copy is 8 lanes 64 bytes apart in global and shared memory alike, 4 bank
 * wavefronts by its lanes' shared addresses.  On the H100 a warp's compute after its wait (an LDS
 * of the batch before, the STG) takes 89 cycles here as at D = 1, the fills of the copies still
 * landing holding nothing up (traces/h100/overwait_stamps.csv, DRAM, per_group 1, D = 4, 4 blocks):
 * the fill writes its 128 bytes as one wavefront.  A batch is then per warp 4 fills of 32 bytes
 * (the 4-byte copies), 64 of 128 and compute's conflict-free LDS: 69 wavefronts and no conflict,
 * where the lanes' banks made it 261 and 192 (the load queued behind them ~580 cycles a batch).
 */
Test(smemport, a_divergent_groups_fill_takes_the_port_for_its_bytes_not_its_lanes_banks)
{
	const char *sets[] = {"blocks=4", "grid_blocks=528", "divergence=4", "per_group=1", "batch_sz=8", "machine_set=none"};
	struct sim_report r;
	struct diag d = {0};
	cr_assert_eq(run_experiment("primitive_copies", sets, 6, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(r.smem_wavefronts, 4 * 8 * (4 + 64 + 1), "%llu wavefronts", (unsigned long long)r.smem_wavefronts);
	cr_assert_eq(r.bank_conflicts, 0, "%llu bank-conflict wavefronts", (unsigned long long)r.bank_conflicts);
	double smem = (double)r.stalls[STALL_SMEM]; /* all 4 warps */
	cr_assert_lt(smem / (4 * 8), 250, "%.0f cycles a warp and batch waiting on shared memory", smem / (4 * 8));
}

/*
 * The same kernel with the commit per group against the converged commit, 4 warps an SM: a
 * warp's wait covers all but the newest group of its batch (the over-wait), and its copies' fills
 * wait for its own copies only, so the four warps drift apart and keep DRAM busy, as the H100's
 * do (traces/h100/holdout_primitives.csv: 3,268 against 3,201 cycles a batch, 1.02x;
 * overwait_order.csv).  Filled in one queue for the SM in issue order the warps waited in step:
 * 4,202 against 3,101 (1.35x).
 */
Test(smemport, per_group_commits_cost_four_warps_little_beside_one_commit)
{
	double batch[2];
	for (int pg = 0; pg < 2; pg++) {
		const char *sets[] = {"blocks=4", "grid_blocks=528", "divergence=4", pg ? "per_group=1" : "per_group=0",
				      "batch_sz=64", "machine_set=none", "machine.l2_hit_fraction=0"};
		struct sim_report r;
		struct diag d = {0};
		cr_assert_eq(run_experiment("primitive_copies", sets, 7, &r, &d), 0, "%s", d.msg);
		batch[pg] = (double)r.cycles / 64;
	}
	cr_assert_lt(batch[1] / batch[0], 1.2, "per-group commits %.0f cycles a batch, one commit %.0f", batch[1], batch[0]);
}

/*
 * Issue 15: the semantics of CUDA 13's libcu++ (NVIDIA/cccl,
 * libcudacxx/include/cuda/...) and the PTX ISA, each pinned on a small
 * kernel of tests/semantics/ that an expert user would write.  Every test
 * names the library line or PTX section it follows (cccl at the snapshot
 * read for this issue).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "support/run_file.h"

static struct sim_report r;
static struct diag d;

/*
 * Point 1.  cuda/pipeline lines 247-262 (make_pipeline(group, state)):
 * rank 0 inits produced and consumed with group.size(); lines 267-284
 * (producer count form) with P and group.size() - P.  Threads that
 * returned before the call are still expected: the run deadlocks.
 */
Test(libcu, exit_before_make_pipeline_deadlocks_on_group_size)
{
	int rc = run_file_ov("exit_before_make_pipeline", "n=224", 256, NULL, &r, &d);
	cr_assert_eq(rc, DIAG_DEADLOCK, "rc %d: %s", rc, d.msg);
	cr_assert(strstr(r.hint, "32 thread(s) of block 0 exited before make_pipeline(\"pipe\")"), "%s", r.hint);
	cr_assert(strstr(r.hint, "group.size() = 256"), "%s", r.hint);
	cr_assert_eq(r.blocked[0].expected, 256, "the stage barrier expects the whole group");
	cr_assert_eq(r.blocked[0].arrived, 224, "only the threads that stayed arrive");
	/* everyone stays: it runs clean */
	rc = run_file_ov("exit_before_make_pipeline", "n=256", 256, NULL, &r, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 0);
}

Test(libcu, exit_before_partitioned_make_pipeline_expects_p_and_the_rest)
{
	/* 64 producers, 256 - 64 = 192 consumers expected; 32 consumers left */
	int rc = run_file_ov("exit_before_make_pipeline", "n=224 producers=64", 256, NULL, &r, &d);
	cr_assert_eq(rc, DIAG_DEADLOCK, "rc %d: %s", rc, d.msg);
	cr_assert(strstr(r.hint, "produced 64, consumed 192"), "%s", r.hint);
	rc = run_file_ov("exit_before_make_pipeline", "n=256 producers=64", 256, NULL, &r, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
}

/* Rank 0 initialises the barriers (cuda/pipeline line 252): if it returned, no thread does. */
Test(libcu, rank_0_exiting_before_make_pipeline_is_a_program_error)
{
	int rc = run_file_ov("exit_before_make_pipeline", "lo=1 n=256", 64, NULL, &r, &d);
	cr_assert_eq(rc, DIAG_INPUT, "rc %d: %s", rc, d.msg);
	cr_assert(strstr(d.msg, "thread 0 of block 0 exited before make_pipeline(\"pipe\")"), "%s", d.msg);
	cr_assert(strstr(d.msg, "exit_before_make_pipeline.json"), "the message names the file: %s", d.msg);
}

/*
 * Point 2.  cuda/pipeline lines 373-384: a thread-scope consumer_wait()
 * waits wait_group(head - tail - 1) with the calling thread's own counts
 * and then ++tail; consumer_release() is empty (no program error without
 * a wait, line 384).  Lanes with different counts take different paths.
 */
Test(libcu, thread_scope_wait_counts_are_per_thread)
{
	int rc = run_file_ov("thread_pipe_counts", NULL, 32, NULL, &r, &d);
	cr_assert_eq(rc, 0, "rc %d: %s", rc, d.msg);
	cr_assert_eq(r.hazards, 0, "odd lanes wait for their own newest batch: %s", r.hazard_text[0]);
	/* waits: 16 even + 16 odd lanes, then only the 16 even lanes (the odd ones have head == tail) */
	cr_assert_eq(r.overwait_waits, 48);
	/* each even lane's wait covers one batch it did not need (E2, then O1); the odd lanes none */
	cr_assert_eq(r.overwait_extra_batches, 32);
	cr_assert_eq(r.cp_async_batches, 3, "E1, E2, O1");
	rc = run_file_ov("thread_pipe_counts", "release_first=1", 32, NULL, &r, &d);
	cr_assert_eq(rc, 0, "a release before any wait is empty, not a program error: %s", d.msg);
	cr_assert_eq(r.hazards, 0);
}

/* Lines 403-404, 377-379 and 426-431: uint8_t head and tail, wait_group min(prior, 8). */
Test(libcu, thread_scope_head_and_tail_are_8_bit)
{
	int rc = run_file_ov("thread_pipe_wrap", "commits=255", 32, NULL, &r, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 0, "prior 254 waits wait_group 8: batch 246 has landed (%s)", r.hazard_text[0]);
	cr_assert_gt(r.stalls[STALL_CONSUMER_WAIT], 0);
	rc = run_file_ov("thread_pipe_wrap", "commits=256", 32, NULL, &r, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	cr_assert_eq(r.stalls[STALL_CONSUMER_WAIT], 0, "head == tail modulo 256: consumer_wait returns at once");
	cr_assert_eq(r.hazards, 32, "every thread reads batch 247 before it lands");
	cr_assert(strstr(r.hazard_text[0], "lands only at cycle"), "%s", r.hazard_text[0]);
}

/*
 * Point 4.  PTX ISA "cp.async": the shared and global addresses are
 * aligned to cp-size; libcudacxx cuda/__memcpy_async/check_preconditions.h
 * (__memcpy_async_check_pre): both pointers aligned to max(alignof(T),
 * aligned_size_t N); cuda/__memory/aligned_size.h line 42: the size is a
 * multiple of N; PTX "cp.async.bulk": 16-byte aligned addresses.
 */
Test(libcu, copy_preconditions_are_program_errors)
{
	cr_assert_eq(run_file_ov("copy_preconditions", "case=0", 64, NULL, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(run_file_ov("copy_preconditions", "case=5", 64, NULL, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(run_file_ov("copy_preconditions", "case=1 off=4", 64, NULL, &r, &d), 0, "16-byte steps: %s", d.msg);

	cr_assert_eq(run_file_ov("copy_preconditions", "case=1 off=1", 64, NULL, &r, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "thread 0: __pipeline_memcpy_async of 16 bytes to s[1] (shared address 4)"), "%s", d.msg);
	cr_assert(strstr(d.msg, "not aligned to 16 bytes") && strstr(d.msg, "cp.async"), "%s", d.msg);
	cr_assert(strstr(d.msg, "$.body[4].then[0]"), "the statement: %s", d.msg);

	cr_assert_eq(run_file_ov("copy_preconditions", "case=2", 64, NULL, &r, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "from g[2] (global address 8): the source address is not aligned to 16"), "%s", d.msg);

	cr_assert_eq(run_file_ov("copy_preconditions", "case=3", 64, NULL, &r, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "aligned_size_t<16>(40)") && strstr(d.msg, "multiple of the alignment"), "%s", d.msg);

	cr_assert_eq(run_file_ov("copy_preconditions", "case=4", 64, NULL, &r, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "bulk copy of 64 bytes to s[2] (shared address 8)") && strstr(d.msg, "16-byte aligned"),
		  "%s", d.msg);
}

/*
 * Point 5.  PTX ISA "mbarrier.test_wait / mbarrier.try_wait": the token
 * names the current or the immediately preceding phase; libcudacxx
 * cuda/std/__barrier/barrier.h: arrive_and_drop takes the thread out of
 * later phases; a phase completes at its expected count (an arrival past
 * it has no phase of its own); init needs a count of at least 1.
 */
Test(libcu, barrier_misuse_is_a_program_error)
{
	cr_assert_eq(run_file_ov("barrier_rules", "case=0", 64, NULL, &r, &d), 0, "%s", d.msg);

	cr_assert_eq(run_file_ov("barrier_rules", "case=1", 64, NULL, &r, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "thread 0: wait on bar with a token of phase 0 while the barrier is in phase 2"), "%s",
		  d.msg);

	cr_assert_eq(run_file_ov("barrier_rules", "case=2", 64, NULL, &r, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "thread 0 calls arrive on bar after its arrive_and_drop"), "%s", d.msg);

	/* init(&bar, 32) and 64 arrivals in phase 0: the second warp's has no phase */
	cr_assert_eq(run_file_ov("barrier_rules", "case=0 count=32", 64, NULL, &r, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "arrive on bar in phase 0, which already completed with its 32 expected arrivals"), "%s",
		  d.msg);
	cr_assert(strstr(d.msg, "$.body[2] (barrier_arrive, line 10:5)"), "names the statement: %s", d.msg);

	cr_assert_eq(run_file_ov("barrier_rules", "case=0 count=-1", 64, NULL, &r, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "init(&bar, 0)"), "%s", d.msg);
}

/* cuda/pipeline lines 267-284: consumed is initialised with group.size() - P; a count of 0 is invalid. */
Test(libcu, partitioned_pipeline_without_consumers_is_a_program_error)
{
	int rc = run_file_ov("exit_before_make_pipeline", "n=256 producers=256", 256, NULL, &r, &d);
	cr_assert_eq(rc, DIAG_INPUT, "rc %d: %s", rc, d.msg);
	cr_assert(strstr(d.msg, "256 producer(s) initialises its consumed barriers with an expected count of 0"), "%s",
		  d.msg);
}

/*
 * Point 3.  CUDA Programming Guide "Warp Synchronization Functions":
 * __syncwarp() orders the participating threads' memory accesses; PTX ISA
 * "mbarrier" / memory consistency model: arrive releases, a completed wait
 * acquires.  A hazard is reported only where no ordering point lies
 * between the write (or the writer's wait for its copy) and the read.
 */
Test(libcu, syncwarp_and_barrier_phases_order_memory)
{
	static const struct {
		const char *set;
		uint64_t hazards;
	} cases[] = {
		{"order=0", 64}, /* no ordering point: every read races */
		{"order=1", 0},  /* __syncwarp between the wait and the read */
		{"order=2", 0},  /* a cuda::barrier phase the writer arrived on after its wait */
		{"order=3", 0},  /* a plain store, __syncwarp, the read */
		{"order=4", 64}, /* a plain store read by another lane, no __syncwarp */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int rc = run_file_ov("ordering_exchange", cases[i].set, 64, NULL, &r, &d);
		cr_assert_eq(rc, 0, "%s: %s", cases[i].set, d.msg);
		cr_assert_eq(r.hazards, cases[i].hazards, "%s: %llu hazards (%s)", cases[i].set,
			     (unsigned long long)r.hazards, r.hazard_text[0]);
	}
	struct machine m;
	machine_defaults(&m);
	m.reconverge = RECONVERGE_INDEPENDENT;
	cr_assert_eq(run_file_ov("ordering_exchange", "order=1", 64, &m, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 0, "independent scheduling: %s", r.hazard_text[0]);
}

/*
 * Point 6.  CUDA Programming Guide, "Shared Memory" (compute capability
 * 5.x and later): a 64-bit access is served in two half-warp phases, a
 * 128-bit one in four quarter-warp phases; only wavefronts beyond one per
 * phase are bank conflicts, and only they add latency.
 */
Test(libcu, wide_shared_accesses_count_only_conflicts_beyond_their_phases)
{
	static const struct {
		const char *set;
		uint64_t wavefronts, conflicts;
	} cases[] = {
		{"width=4 stride=1", 1, 0}, {"width=8 stride=1", 2, 0}, {"width=16 stride=1", 4, 0},
		/* 16 lanes 16 bytes apart: 2 words per bank in each half-warp phase */
		{"width=8 stride=2", 4, 2},
		/* 8 lanes 32 bytes apart: 2 words per bank in each quarter-warp phase */
		{"width=16 stride=2", 8, 4},
	};
	uint64_t cycles[5];
	for (size_t i = 0; i < 5; i++) {
		cr_assert_eq(run_file_ov("wide_shared", cases[i].set, 32, NULL, &r, &d), 0, "%s", d.msg);
		cr_assert_eq(r.smem_wavefronts, cases[i].wavefronts, "%s: %llu", cases[i].set,
			     (unsigned long long)r.smem_wavefronts);
		cr_assert_eq(r.bank_conflicts, cases[i].conflicts, "%s: %llu", cases[i].set,
			     (unsigned long long)r.bank_conflicts);
		cycles[i] = r.cycles;
	}
	struct machine m;
	machine_defaults(&m);
	/* the mandatory phases cost port time only; a 2-way conflict adds its latency on top */
	cr_assert_leq(cycles[2] - cycles[0], 3 * (uint64_t)m.smem_wavefront_cycles, "%llu vs %llu",
		      (unsigned long long)cycles[2], (unsigned long long)cycles[0]);
	cr_assert_geq(cycles[3] - cycles[1], (uint64_t)m.smem_conflict_latency, "%llu vs %llu",
		      (unsigned long long)cycles[3], (unsigned long long)cycles[1]);
}

/*
 * Point 8.  __pipeline_arrive_on and cuda::pipeline_producer_commit(pipe,
 * bar) (cuda/pipeline lines 484-491): cp.async.mbarrier.arrive, per
 * cuda/__memcpy_async/memcpy_completion.h (__defer, async_group): the
 * barrier's phase waits for the thread's copies.  barrier_expect_tx with
 * memcpy_async_tx: PTX mbarrier.expect_tx / cp.async.bulk complete_tx.
 * zfill: PTX cp.async src-size, the rest zero-filled and never read.
 */
Test(libcu, arrive_on_expect_tx_and_zfill)
{
	static const struct {
		const char *set;
		int rc;
		uint64_t hazards;
	} cases[] = {
		{"case=0 n=64", 0, 64}, /* nothing ties the copies to the barrier: a race */
		{"case=1 n=64", 0, 0},  /* __pipeline_arrive_on */
		{"case=2 n=64", 0, 0},  /* pipeline_producer_commit(pipe, bar) */
		{"case=3 n=64", 0, 0},  /* expect_tx + memcpy_async_tx */
		{"case=4 n=64", 0, 64}, /* memcpy_async_tx without expect_tx: the phase ends before the bytes */
		{"case=5 n=32", 0, 0},  /* threads 32..63 zero-fill from out of range: nothing read */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int rc = run_file_ov("api_extras", cases[i].set, 64, NULL, &r, &d);
		cr_assert_eq(rc, cases[i].rc, "%s: %s", cases[i].set, d.msg);
		cr_assert_eq(r.hazards, cases[i].hazards, "%s: %llu (%s)", cases[i].set, (unsigned long long)r.hazards,
			     r.hazard_text[0]);
		if (i == 1)
			cr_assert_gt(r.stalls[STALL_BARRIER], 2 * 500, "both warps wait out the copies' round trip");
		if (i == 3)
			cr_assert_eq(r.bulk_copies, 1);
	}
	int rc = run_file_ov("api_extras", "case=6 n=32", 64, NULL, &r, &d);
	cr_assert_eq(rc, DIAG_INPUT, "without zfill the source is out of range: %s", d.msg);
	cr_assert(strstr(d.msg, "thread 32 copies 16 bytes from g[128]"), "%s", d.msg);
}

/*
 * Point 8.  cooperative_groups::memcpy_async / wait / wait_prior (CUDA
 * Programming Guide, cooperative groups "memcpy_async", "wait and
 * wait_prior"): one cp.async batch per call, wait_group N then the
 * group's sync, which orders the copies for the group only.
 */
Test(libcu, cooperative_groups_memcpy_async_and_wait)
{
	cr_assert_eq(run_file_ov("cg_copy", "prior=0", 64, NULL, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 0, "%s", r.hazard_text[0]);
	cr_assert_eq(r.cp_async_batches, 4, "two batches per warp");
	cr_assert_eq(r.copies, 128, "64 threads, two 4-byte chunks each");
	cr_assert_eq(run_file_ov("cg_copy", "prior=1", 64, NULL, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 64, "the second batch is not waited for: every thread's read of it races");
	cr_assert_eq(run_file_ov("cg_copy", "warp_sync=1", 64, NULL, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 128, "a tile's sync does not order the other warp's copies");
}

/*
 * Point 8.  consumer_wait_for (cuda/pipeline lines 178-186, block scope:
 * false once the duration passes with the stage not produced; lines
 * 386-392, thread scope: consumer_wait() then true).
 */
Test(libcu, consumer_wait_for_times_out_at_block_scope_only)
{
	cr_assert_eq(run_file_ov("wait_for", "ns=10", 64, NULL, &r, &d), 0, "%s", d.msg);
	uint64_t timed_out = r.cycles;
	cr_assert_lt(r.stalls[STALL_CONSUMER_WAIT], 2 * 300, "10 ns is about 20 cycles, then it gives up");
	cr_assert_eq(r.hazards, 0);
	cr_assert_eq(run_file_ov("wait_for", "ns=100000", 64, NULL, &r, &d), 0, "%s", d.msg);
	cr_assert_gt(r.stalls[STALL_CONSUMER_WAIT], 2 * 500, "it waits the copy out");
	cr_assert_lt(r.cycles + 2000, timed_out, "no FMA detour: %llu vs %llu", (unsigned long long)r.cycles,
		     (unsigned long long)timed_out);
	cr_assert_eq(r.hazards, 0);
	cr_assert_eq(run_file_ov("wait_for", "ns=10 scope_thread=1", 64, NULL, &r, &d), 0, "%s", d.msg);
	cr_assert_lt(r.cycles, timed_out - 2000, "thread scope waits in full and returns true");
	cr_assert_eq(r.hazards, 0);
}

/*
 * Point 8.  A pipeline over a tile of 32 threads with a shared state per
 * warp (cuda/pipeline lines 247-262: group.size() = 32, tile rank 0 inits).
 */
Test(libcu, pipeline_over_a_warp_tile)
{
	cr_assert_eq(run_file_ov("warp_pipeline", NULL, 96, NULL, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(r.batches, 3 * 4, "three warps, four batches each");
	cr_assert_eq(r.hazards, 0, "a lane reads its neighbour's word after the warp's consumer_wait: %s",
		     r.hazard_text[0]);
	cr_assert_eq(run_file_ov("warp_pipeline", "other_warp=1", 96, NULL, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 96 * 4, "another warp's pipeline orders nothing for this one");
	cr_assert_eq(run_file_ov("warp_pipeline", "keep=16", 96, NULL, &r, &d), DIAG_DEADLOCK, "%s", d.msg);
	cr_assert(strstr(r.hint, "16 thread(s) of block 0 exited before make_pipeline(\"p\")") &&
		  strstr(r.hint, "group.size() = 32"), "%s", r.hint);
	cr_assert_eq(r.nblocked, 1, "only warp 1 waits: the other warps' pipelines are whole");
	cr_assert(strstr(r.blocked[0].on, "p[warp 1]"), "%s", r.blocked[0].on);
}

/* Point 8.  barrier.arrive(update) (cuda/std/__barrier/barrier.h): update arrivals at once, within the phase's count. */
Test(libcu, barrier_arrive_with_an_update_count)
{
	cr_assert_eq(run_file_ov("barrier_rules", "case=0 count=128 update=2", 64, NULL, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(run_file_ov("barrier_rules", "case=0 count=64 update=2", 64, NULL, &r, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "expected arrivals") || strstr(d.msg, "expects only"), "%s", d.msg);
}

Test(libcu, a_consumer_wait_for_loop_that_cannot_end_is_a_deadlock)
{
	cr_assert_eq(run_file_ov("wait_for_spin", NULL, 64, NULL, &r, &d), DIAG_DEADLOCK, "%s", d.msg);
	cr_assert_eq(r.nblocked, 2, "both warps spin");
	cr_assert(strstr(r.blocked[0].on, "p.produced[0]"), "%s", r.blocked[0].on);
	cr_assert_lt(r.cycles, 100000, "found within a few spin checks: %llu", (unsigned long long)r.cycles);
}

/*
 * Completion follows the thread's cp.async history, not the API that issued a copy (cccl
 * 571f2fc).  A block pipeline's producer_commit is cp.async.mbarrier.arrive.noinc on the stage
 * (libcudacxx/include/cuda/pipeline lines 149-154), a memcpy_async on a cuda::barrier completes
 * with cp.async.mbarrier.arrive too (cuda/__memcpy_async/memcpy_completion.h lines 71-83: "all
 * thread-local cp.async instructions"), and PTX's cp.async.mbarrier.arrive tracks every prior
 * cp.async of the thread; a thread-scope producer_commit is cp.async.commit_group (cuda/pipeline
 * lines 368-371), which takes every uncommitted cp.async, a block pipeline's own copies included
 * (lines 493-521: its memcpy_async defers nothing).  Variants 0-3 complete a copy through another
 * mechanism than its own and read it clean; 4 and 5 stay hazards.
 */
Test(libcu, a_copy_completes_through_any_later_commit_or_arrive_of_its_thread)
{
	static const char *const clean[] = {"variant=0", "variant=1", "variant=2", "variant=3"};
	for (int v = 0; v < 4; v++) {
		cr_assert_eq(run_file_ov("mixed_completion", clean[v], 64, NULL, &r, &d), 0, "%s: %s", clean[v], d.msg);
		cr_assert_eq(r.hazards, 0, "%s: %s", clean[v], r.hazard_text[0]);
	}
	cr_assert_eq(run_file_ov("mixed_completion", "variant=4", 64, NULL, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 64, "a block producer_commit is not a cp.async group: wait_prior(0) leaves its copy");
	cr_assert_eq(run_file_ov("mixed_completion", "variant=5", 64, NULL, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 64, "stage 1's arrivals are not in the stage 0 phase its readers waited for");
}

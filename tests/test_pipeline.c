/*
 * cuda::pipeline<thread_scope_block> semantics, run through the simulator
 * on small kernel descriptions (DESIGN.md §3, documented behaviours 1-3).
 */
#include <criterion/criterion.h>

#include "support/run_kernel.h"

#define HEADER(stages)                                                                              \
	"{\"kernel\": \"t\", \"source\": \"test\", \"params\": {\"k\": 8},"                         \
	"\"shared\": {\"smem\": {\"elems\": \"4 * block_size\"}},"                                  \
	"\"global\": {\"gin\": {\"elems\": \"64 * block_size\"}, \"gout\": {\"elems\": \"64 * block_size\"}}," \
	"\"pipelines\": {\"pipe\": {\"scope\": \"block\", \"stages\": " #stages "}},"

#define MAKE "{\"op\": \"make_pipeline\", \"pipeline\": \"pipe\"},"
#define ACQ "{\"op\": \"producer_acquire\", \"pipeline\": \"pipe\"},"
#define COMMIT "{\"op\": \"producer_commit\", \"pipeline\": \"pipe\"},"
#define WAIT "{\"op\": \"consumer_wait\", \"pipeline\": \"pipe\"},"
#define RELEASE "{\"op\": \"consumer_release\", \"pipeline\": \"pipe\"},"
#define COPY(s, b)                                                                                   \
	"{\"op\": \"memcpy_async\", \"group\": \"block\", \"dst\": \"smem[" #s " * block_size]\","       \
	"\"src\": \"gin[" #b " * block_size]\", \"bytes\": \"4 * block_size\", \"pipeline\": \"pipe\"},"
#define END "{\"op\": \"syncwarp\"}]}"

static struct sim_report r;
static struct diag d;

Test(pipeline, acquire_blocks_once_all_stages_are_in_flight)
{
	/* Warp 0 produces three batches into two stages; warp 1 consumes them after a 600-FMA delay. */
	const char *text = HEADER(2) "\"body\": [{\"op\": \"make_pipeline\", \"pipeline\": \"pipe\", \"producers\": 32},"
		"{\"op\": \"if\", \"cond\": \"warp == 0\", \"then\": [" ACQ COPY(0, 0) COMMIT ACQ COPY(1, 1) COMMIT
		"{\"op\": \"producer_acquire\", \"pipeline\": \"pipe\"}" "],"
		"\"else\": [{\"op\": \"fma\", \"n\": 600}," WAIT RELEASE "{\"op\": \"syncwarp\"}]}," END;
	int rc = run_kernel_text(text, 64, 1, NULL, &r, &d);
	cr_assert_eq(rc, 0, "rc %d: %s", rc, d.msg);
	/* The third acquire waits for the consumer's release, which comes after its 2400-cycle chain. */
	cr_assert_gt(r.stalls[STALL_PRODUCER_ACQUIRE], 1500, "producer_acquire stall %llu",
		     (unsigned long long)r.stalls[STALL_PRODUCER_ACQUIRE]);
	cr_assert_gt(r.cycles, 600 * 4);
}

Test(pipeline, acquire_without_release_blocks_forever_and_is_reported)
{
	const char *text = HEADER(2) "\"body\": [{\"op\": \"make_pipeline\", \"pipeline\": \"pipe\", \"producers\": 32},"
		"{\"op\": \"if\", \"cond\": \"warp == 0\", \"then\": [" ACQ COPY(0, 0) COMMIT ACQ COPY(1, 1) COMMIT
		"{\"op\": \"producer_acquire\", \"pipeline\": \"pipe\"}]}," END;
	int rc = run_kernel_text(text, 64, 1, NULL, &r, &d);
	cr_assert_eq(rc, DIAG_DEADLOCK, "rc %d: %s", rc, d.msg);
	cr_assert_eq(r.nblocked, 1, "only the producer warp is stuck; the consumer warp finished");
	cr_assert_str_eq(r.blocked[0].op, "producer_acquire");
	cr_assert_str_eq(r.blocked[0].on, "pipe.consumed[0]");
	cr_assert_eq(r.blocked[0].expected, 32, "consumed expects the 32 consumer threads");
	cr_assert_eq(r.blocked[0].arrived, 0);
}

Test(pipeline, unified_thread_acquiring_more_than_s_stages_is_a_program_error)
{
	const char *text = HEADER(2) "\"body\": [" MAKE ACQ COPY(0, 0) COMMIT ACQ COPY(1, 1) COMMIT ACQ END;
	int rc = run_kernel_text(text, 64, 1, NULL, &r, &d);
	cr_assert_eq(rc, DIAG_INPUT, "rc %d: %s", rc, d.msg);
	cr_assert(strstr(d.msg, "holds all 2 stages") && strstr(d.msg, "$.body[7]"), "%s", d.msg);
}

/*
 * libcudacxx cuda/pipeline lines 168-175: consumer_release() arrives on
 * consumed[tail] and advances tail; nothing asks for a wait before it (the
 * documentation's only preconditions: not a producer, not quit).  Legal:
 * the release counts, so the third acquire of stage 0 needs no other.
 */
Test(pipeline, release_without_wait_arrives_and_is_no_program_error)
{
	const char *text = HEADER(1) "\"body\": [" MAKE ACQ COPY(0, 0) COMMIT RELEASE ACQ COPY(0, 1) COMMIT WAIT RELEASE END;
	int rc = run_kernel_text(text, 32, 1, NULL, &r, &d);
	cr_assert_eq(rc, 0, "rc %d: %s", rc, d.msg);
	cr_assert_eq(r.batches, 2);
}

Test(pipeline, release_lets_the_blocked_acquire_go)
{
	const char *text = HEADER(2) "\"body\": [" MAKE ACQ COPY(0, 0) COMMIT ACQ COPY(1, 1) COMMIT WAIT RELEASE ACQ
		COPY(0, 2) COMMIT WAIT RELEASE WAIT RELEASE END;
	int rc = run_kernel_text(text, 64, 1, NULL, &r, &d);
	cr_assert_eq(rc, 0, "rc %d: %s", rc, d.msg);
	cr_assert_eq(r.batches, 3);
	cr_assert_gt(r.stalls[STALL_PRODUCER_ACQUIRE], 0, "the third acquire waits for the release to be counted");
}

Test(pipeline, consumer_wait_waits_for_the_copies_to_land)
{
	const char *text = HEADER(1) "\"body\": [" MAKE ACQ COPY(0, 0) COMMIT WAIT RELEASE END;
	struct machine m;
	machine_defaults(&m);
	int rc = run_kernel_text(text, 64, 1, &m, &r, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	uint64_t fast = r.cycles;
	cr_assert_geq(fast, (uint64_t)(m.dram_latency + m.cp_async_extra_latency));
	cr_assert_gt(r.stalls[STALL_CONSUMER_WAIT], 0);
	m.dram_latency = 2000;
	rc = run_kernel_text(text, 64, 1, &m, &r, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	cr_assert_geq(r.cycles, fast + 2000 - 688 - 5, "cycles %llu vs %llu", (unsigned long long)r.cycles,
		      (unsigned long long)fast);
	/* Only the commit's and the wait's own instructions (isa/lower_forms.c) overlap the only copy. */
	cr_assert_lt(r.hidden_fraction, 0.05, "almost nothing overlaps the only copy: %.3f", r.hidden_fraction);
}

Test(pipeline, successive_waits_consume_stages_in_order)
{
	/* Three stages committed and consumed; a fourth wait is on stage 0's next lap, never produced. */
	const char *text = HEADER(3) "\"body\": [" MAKE ACQ COPY(0, 0) COMMIT ACQ COPY(1, 1) COMMIT ACQ COPY(2, 2)
		COMMIT WAIT RELEASE WAIT RELEASE WAIT RELEASE WAIT END;
	int rc = run_kernel_text(text, 32, 1, NULL, &r, &d);
	cr_assert_eq(rc, DIAG_DEADLOCK, "%s", d.msg);
	cr_assert_eq(r.batches, 3);
	cr_assert_str_eq(r.blocked[0].op, "consumer_wait");
	cr_assert_str_eq(r.blocked[0].on, "pipe.produced[0]");
	cr_assert_eq(r.blocked[0].phase, 1, "stage 0 completed its first lap only");
}

Test(pipeline, a_stage_completes_only_when_every_producer_committed)
{
	/* Warp 1 runs a long FMA chain before it commits: warp 0's wait must outlast it. */
	const char *slow = HEADER(1) "\"body\": [" MAKE ACQ COPY(0, 0)
		"{\"op\": \"if\", \"cond\": \"warp == 1\", \"then\": [{\"op\": \"fma\", \"n\": 1000}]}," COMMIT WAIT
			RELEASE END;
	const char *fast = HEADER(1) "\"body\": [" MAKE ACQ COPY(0, 0) COMMIT WAIT RELEASE END;
	int rc = run_kernel_text(fast, 64, 1, NULL, &r, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	uint64_t base = r.cycles;
	rc = run_kernel_text(slow, 64, 1, NULL, &r, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	cr_assert_geq(r.cycles, 1000 * 4, "the stage waited for the slow producer");
	cr_assert_gt(r.cycles, base + 3000);
	/* Warp 0 sits in consumer_wait for most of warp 1's chain. */
	cr_assert_gt(r.stalls[STALL_CONSUMER_WAIT], 3000);
}

Test(pipeline, use_before_make_pipeline_is_a_program_error)
{
	const char *text = HEADER(1) "\"body\": [" ACQ END;
	int rc = run_kernel_text(text, 32, 1, NULL, &r, &d);
	cr_assert_eq(rc, DIAG_INPUT);
	cr_assert(strstr(d.msg, "before make_pipeline"), "%s", d.msg);
}

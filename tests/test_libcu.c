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

/*
 * limits: loop iterations, threads and memory stop a runaway input with
 * DIAG_LIMIT at exactly their value, and their defaults leave every shipped
 * experiment far behind.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/experiment.h"
#include "support/run_kernel.h"

static struct sim_report r;
static struct diag d;

/* 50 outer x 50 inner iterations: 2550 backward jumps per warp. */
static const char nested[] = "{\"kernel\": \"nested\", \"source\": \"test\", \"body\": ["
			     "{\"op\": \"for\", \"var\": \"i\", \"from\": 0, \"to\": 50, \"body\": ["
			     "{\"op\": \"for\", \"var\": \"j\", \"from\": 0, \"to\": 50, \"body\": []}]}]}";

/* Loads text for the launch and runs it under lim; the diag code of load or run. */
static int run_with(const char *text, struct launch l, const struct sim_limits *lim)
{
	struct kernel k;
	int rc = load_kernel_text(text, &l, &k, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	struct machine m;
	machine_defaults(&m);
	r = (struct sim_report){0};
	rc = sim_run(&k, &m, &l, lim, &r, &d);
	kernel_free(&k);
	return rc;
}

Test(limits, loop_iterations_count_every_back_edge_of_one_warp)
{
	struct sim_limits lim = sim_default_limits();
	struct launch l = {64, 1, 1}; /* two warps: each takes its own 2550, they do not add up */
	lim.max_loop_iterations = 2550;
	cr_assert_eq(run_with(nested, l, &lim), 0, "%s", d.msg);
	lim.max_loop_iterations = 2549;
	cr_assert_eq(run_with(nested, l, &lim), DIAG_LIMIT);
	cr_assert(strstr(d.msg, "limit.loop_iterations = 2549"), "%s", d.msg);
	cr_assert(strstr(d.msg, "--set limit.loop_iterations=N"), "%s", d.msg);
	cr_assert(strstr(d.msg, "$.body[0]"), "the outer loop's back-edge is the 2550th: %s", d.msg);
}

Test(limits, forward_jumps_of_if_else_are_not_loop_iterations)
{
	static const char text[] =
		"{\"kernel\": \"ifs\", \"source\": \"test\", \"body\": ["
		"{\"op\": \"for\", \"var\": \"i\", \"from\": 0, \"to\": 10, \"body\": ["
		"{\"op\": \"if\", \"cond\": \"i % 2\", \"then\": [{\"op\": \"fma\", \"n\": 1}], \"else\": [{\"op\": \"fma\", \"n\": 2}]},"
		"{\"op\": \"if\", \"cond\": \"tid < 16\", \"then\": [{\"op\": \"fma\", \"n\": 1}], \"else\": []}]}]}";
	struct sim_limits lim = sim_default_limits();
	lim.max_loop_iterations = 10;
	cr_assert_eq(run_with(text, (struct launch){32, 1, 1}, &lim), 0, "%s", d.msg);
	lim.max_loop_iterations = 9;
	cr_assert_eq(run_with(text, (struct launch){32, 1, 1}, &lim), DIAG_LIMIT);
}

Test(limits, a_loop_without_waits_stops_at_the_loop_limit_first)
{
	static const char text[] = "{\"kernel\": \"forever\", \"source\": \"test\", \"body\": ["
				   "{\"op\": \"while\", \"cond\": 1, \"body\": []}]}";
	struct sim_limits lim = sim_default_limits();
	lim.max_loop_iterations = 20000;
	cr_assert_eq(run_with(text, (struct launch){32, 1, 1}, &lim), DIAG_LIMIT);
	cr_assert(strstr(d.msg, "limit.loop_iterations"), "%s", d.msg);
	/* A cycle or two an iteration (its branch): far from the cycle and event limits, as at the defaults. */
	const char *at = strstr(d.msg, "cycle ");
	cr_assert(at, "%s", d.msg);
	long cycle = strtol(at + 6, NULL, 10);
	cr_assert(cycle >= 20000 && cycle <= 60000, "stopped at cycle %ld: %s", cycle, d.msg);
}

Test(limits, threads_are_the_whole_grid)
{
	static const char text[] = "{\"kernel\": \"t\", \"source\": \"test\", \"body\": [{\"op\": \"fma\", \"n\": 1}]}";
	struct sim_limits lim = sim_default_limits();
	struct launch l = {64, 1, 132};
	lim.max_threads = 64 * 132;
	cr_assert_eq(run_with(text, l, &lim), 0, "%s", d.msg);
	lim.max_threads = 64 * 132 - 1;
	cr_assert_eq(run_with(text, l, &lim), DIAG_LIMIT);
	cr_assert(strstr(d.msg, "8448 threads") && strstr(d.msg, "limit.threads = 8447"), "%s", d.msg);
	cr_assert_eq(r.cycles, 0, "nothing ran");
	/* A product past 2^64 is over any limit, not wrapped under it. */
	lim = sim_default_limits();
	l = (struct launch){1024, 1, INT64_MAX};
	cr_assert_eq(sim_check_threads(&l, &lim, &d), DIAG_LIMIT);
	cr_assert(strstr(d.msg, "more than 2^64"), "%s", d.msg);
}

Test(limits, memory_is_checked_at_its_value_before_anything_runs)
{
	static const char text[] = "{\"kernel\": \"m\", \"source\": \"test\", \"shared\": {\"s\": {\"elems\": 8192}},"
				   "\"barriers\": {\"b\": {\"count\": 64}}, \"body\": [{\"op\": \"fma\", \"n\": 1}]}";
	struct launch l = {256, 2, 2};
	struct kernel k;
	cr_assert_eq(load_kernel_text(text, &l, &k, &d), 0, "%s", d.msg);
	struct machine m;
	machine_defaults(&m);
	uint64_t need = sim_state_bytes(&k, &m, &l);
	/* At least the shadow of 2 x 32 KiB of shared memory and 2 x 256 x 64 barrier phases. */
	cr_assert_gt(need, 2 * 8192 + 2 * 256 * 64 * 4);
	struct launch l1 = {256, 1, 1};
	cr_assert_lt(sim_state_bytes(&k, &m, &l1), need, "fewer resident blocks, less state");
	struct sim_limits lim = sim_default_limits();
	lim.max_memory = need;
	cr_assert_eq(sim_run(&k, &m, &l, &lim, &r, &d), 0, "%s", d.msg);
	lim.max_memory = need - 1;
	cr_assert_eq(sim_run(&k, &m, &l, &lim, &r, &d), DIAG_LIMIT);
	cr_assert(strstr(d.msg, "limit.memory") && strstr(d.msg, "--set limit.memory=N"), "%s", d.msg);
	cr_assert_eq(r.cycles, 0, "nothing ran");
	kernel_free(&k);
}

Test(limits, defaults_leave_every_shipped_experiment_far_behind)
{
	DIR *dp = opendir("configs/experiments");
	cr_assert(dp, "run from the project root");
	struct dirent *de;
	int n = 0;
	while ((de = readdir(dp))) {
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json"))
			continue;
		char file[512];
		snprintf(file, sizeof file, "configs/experiments/%s", de->d_name);
		struct experiment *e = calloc(1, sizeof *e);
		cr_assert_eq(experiment_load(file, NULL, 0, e, &d), 0, "%s", d.msg);
		uint64_t threads = (uint64_t)(e->launch.grid_blocks * e->launch.block_size);
		uint64_t bytes = sim_state_bytes(&e->kernel, &e->machine, &e->launch);
		cr_expect_lt(threads * 1000, e->limits.max_threads, "%s: %llu threads", file, (unsigned long long)threads);
		cr_expect_lt(bytes * 100, e->limits.max_memory, "%s: %llu bytes", file, (unsigned long long)bytes);
		experiment_free(e);
		free(e);
		n++;
	}
	closedir(dp);
	cr_assert_geq(n, 10);
}

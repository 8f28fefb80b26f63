/*
 * Every ratio a JSON report gives stays within its bound — fractions,
 * efficiency and utilizations in 0..1, percentages in 0..100, per-issue
 * stalls and latencies not negative — for every shipped experiment and for
 * runs that did not finish (a deadlock under several --set, a limit), which
 * report over the cycles that ran and say they are partial.  Also the
 * latency-hiding figures at their two ends: a single stage hides nothing,
 * two stages with enough compute hide nearly all.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>
#include "support/sh.h"


static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

/* Walks the report; counts the ratios checked. */
static int check(const cJSON *o, const char *where, const char *run)
{
	int n = 0;
	for (const cJSON *c = o->child; c; c = c->next) {
		char path[256];
		snprintf(path, sizeof path, "%s.%s", where, c->string ? c->string : "[]");
		if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
			n += check(c, path, run);
			continue;
		}
		if (!cJSON_IsNumber(c) || !c->string)
			continue;
		double v = c->valuedouble;
		cr_assert(isfinite(v), "%s: %s is not finite", run, path);
		if (strstr(c->string, "fraction") || !strcmp(c->string, "efficiency") ||
		    !strcmp(c->string, "utilization") || !strcmp(c->string, "issued_warps_per_scheduler_per_cycle")) {
			cr_assert(v >= 0 && v <= 1, "%s: %s = %f is outside 0..1", run, path, v);
			n++;
		} else if (ends_with(c->string, "_pct")) {
			cr_assert(v >= 0 && v <= 100, "%s: %s = %f is outside 0..100", run, path, v);
			n++;
		} else if (strstr(path, ".warp_state.") || strstr(c->string, "latency") || !strcmp(c->string, "queueing") ||
			   strstr(c->string, "cycles")) {
			cr_assert(v >= 0, "%s: %s = %f is negative", run, path, v);
			n++;
		}
	}
	return n;
}

static void run_and_check(const char *args, const char *expect_status)
{
	char cmd[1024], *out;
	snprintf(cmd, sizeof cmd, SMSIM_BIN " run %s --json --no-timing 2>/dev/null", args);
	int rc = sh(cmd, &out);
	cJSON *o = cJSON_Parse(out);
	cr_assert(o, "%s (exit %d) gave no JSON report: %.200s", args, rc, out);
	const char *status = cJSON_GetObjectItem(o, "status")->valuestring;
	cr_assert_str_eq(status, expect_status, "%s", args);
	bool partial = cJSON_IsTrue(cJSON_GetObjectItem(o, "partial"));
	cr_assert_eq(partial, strcmp(status, "ok") != 0, "%s: partial is %d with status %s", args, partial, status);
	const cJSON *b = cJSON_GetObjectItem(o, "binding_limit");
	cr_assert(b && cJSON_IsTrue(cJSON_GetObjectItem(b, "partial")) == partial, "%s", args);
	if (partial)
		cr_assert(strstr(cJSON_GetObjectItem(b, "consequence")->valuestring, "partial"), "%s", args);
	int n = check(o, "$", args);
	cr_assert_geq(n, 20, "%s: only %d ratios found", args, n);
	/* the stalls add up to warps x cycles over what ran */
	double sum = 0;
	for (const cJSON *c = cJSON_GetObjectItem(o, "stalls")->child; c; c = c->next)
		sum += c->valuedouble;
	double warps = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "launch"), "warps")->valuedouble;
	cr_assert_float_eq(sum, warps * cJSON_GetObjectItem(o, "cycles")->valuedouble, 0.5, "%s", args);
	cJSON_Delete(o);
	free(out);
}

Test(ratios, every_shipped_experiment, .timeout = 300)
{
	DIR *d = opendir("configs/experiments");
	cr_assert(d);
	int n = 0;
	for (struct dirent *de; (de = readdir(d));) {
		if (!ends_with(de->d_name, ".json"))
			continue;
		char args[512];
		snprintf(args, sizeof args, "configs/experiments/%s", de->d_name);
		run_and_check(args, strstr(de->d_name, "deadlock") ? "deadlock" : "ok");
		n++;
	}
	closedir(d);
	cr_assert_geq(n, 15);
}

Test(ratios, unfinished_runs_are_partial_and_bounded, .timeout = 300)
{
	static const char *const deadlocks[] = {
		"configs/experiments/early_exit_deadlock.json",
		"configs/experiments/early_exit_deadlock.json --set stages=1",
		"configs/experiments/early_exit_deadlock.json --set stages=3 --set blocks=2",
		"configs/experiments/early_exit_deadlock.json --set k=0 --set batch_sz=64",
		"configs/experiments/early_exit_deadlock.json --set k=512 --set leavers=64",
		"configs/experiments/early_exit_deadlock.json --set machine.dram_latency=5000",
		"tests/fixtures/deadlock_acquire_experiment.json",
	};
	for (size_t i = 0; i < sizeof deadlocks / sizeof deadlocks[0]; i++)
		run_and_check(deadlocks[i], "deadlock");
	run_and_check("configs/experiments/with_staging_unified.json --set limit.cycles=3000", "limit");
	run_and_check("configs/experiments/with_staging_unified.json --set blocks=8 --set limit.events=2000", "limit");
	char *out;
	/* compare keeps a run cut short by a limit, marked, and exits 4 */
	int rc = sh(SMSIM_BIN " compare configs/experiments/with_staging_unified.json --vary limit.cycles=3000,1000000000 "
			      "--json --no-timing 2>/dev/null",
		    &out);
	cr_assert_eq(rc, 4);
	cJSON *o = cJSON_Parse(out);
	cr_assert(o, "%s", out);
	const cJSON *runs = cJSON_GetObjectItem(o, "runs");
	cr_assert_eq(cJSON_GetArraySize(runs), 2);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(runs, 0), "partial")));
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(runs, 1), "partial")));
	cr_assert_eq(check(cJSON_GetArrayItem(runs, 0), "$", "compare") > 20, true);
	cJSON_Delete(o);
	free(out);
	sh(SMSIM_BIN " run configs/experiments/with_staging_unified.json --set limit.cycles=3000 2>&1", &out);
	/* the run stops at the limit: the cycles it reports are its last event's, a few either side of it */
	const char *said = strstr(out, "status: limit — the figures below are partial: over the ");
	cr_assert(said, "%s", out);
	long ran = strtol(said + strlen("status: limit — the figures below are partial: over the "), NULL, 10);
	cr_assert(ran >= 2900 && ran <= 3100, "%ld cycles ran: %s", ran, out);
	free(out);
}

static cJSON *report(const char *args)
{
	char cmd[512], *out;
	snprintf(cmd, sizeof cmd, SMSIM_BIN " run configs/experiments/%s --json --no-timing", args);
	cr_assert_eq(sh(cmd, &out), 0, "%s", args);
	cJSON *o = cJSON_Parse(out);
	free(out);
	cr_assert(o);
	return o;
}

static double num(const cJSON *o, const char *a, const char *b)
{
	return cJSON_GetObjectItem(cJSON_GetObjectItem(o, a), b)->valuedouble;
}

/* Nothing overlapped reads as nothing hidden; everything overlapped as all hidden. */
Test(ratios, hidden_fraction_ends)
{
	static const char *const none[] = {"with_single_stage.json", "with_single_stage.json --set k=0",
					   "with_single_stage.json --set blocks=8",
					   "with_staging_unified.json --set stages=1 --set k=0"};
	for (int i = 0; i < 4; i++) {
		cJSON *o = report(none[i]);
		double h = num(o, "latency_hiding", "hidden_fraction");
		cr_assert_leq(h, 0.02, "%s: a single stage hides nothing, read %f", none[i], h);
		cJSON_Delete(o);
	}
	cJSON *o = report("with_staging_unified.json --set stages=4");
	cr_assert_geq(num(o, "latency_hiding", "hidden_fraction"), 0.97);
	cr_assert_gt(num(o, "latency_hiding", "compute_overlap_fraction"), 0.3);
	cJSON_Delete(o);
}

/* Copies' latency against their unloaded latency: queueing grows with the load, unloaded does not. */
Test(ratios, queueing_shown_apart)
{
	cJSON *one = report("with_single_stage.json --set k=0");
	cJSON *eight = report("with_single_stage.json --set k=0 --set blocks=8 --set machine.dram_bytes_per_cycle=2");
	double u1 = num(one, "copies", "unloaded_latency"), u8 = num(eight, "copies", "unloaded_latency");
	double q1 = num(one, "copies", "queueing"), q8 = num(eight, "copies", "queueing");
	/*
	 * Within the spread of its copies' own draws around the median: one block's
	 * 512 warp-copies (8 warps x 64 batches) each draw uniformly within
	 * dram_spread (147) of it, a mean's standard error of 147 / sqrt(3 x 512) =
	 * 3.75 cycles; three of them.
	 */
	cr_assert_float_eq(u1, u8, 3 * 147 / sqrt(3.0 * 512), "unloaded latency does not depend on the load: %f %f", u1, u8);
	cr_assert_geq(u1, 727, "at least dram_latency");
	cr_assert(q1 >= 0 && q1 < 100, "%f", q1);
	cr_assert_gt(q8, 10 * (q1 + 1), "a saturated DRAM queues: %f against %f", q8, q1);
	cr_assert_float_eq(num(eight, "copies", "mean_latency"), u8 + q8, 1e-3);
	cr_assert_leq(num(eight, "latency_hiding", "hidden_fraction"), 0.02, "queueing is not hiding");
	cJSON_Delete(one);
	cJSON_Delete(eight);
}

/*
 * End-to-end: the smsim command line on the shipped configs, as a user
 * runs it — exit codes, messages, JSON reports and the headline result
 * (two stages hide the copy latency that one stage exposes).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "isa/jdoc.h"

#define SINGLE "configs/experiments/with_single_stage.json"
#define STAGED "configs/experiments/with_staging_unified.json"

struct cli {
	int status;
	char *out;
	char *err;
};

static struct cli run_cli(const char *args)
{
	struct cli c = {0};
	char errfile[] = "/tmp/smsim_cli_err_XXXXXX";
	int fd = mkstemp(errfile);
	cr_assert_geq(fd, 0);
	close(fd);
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "%s %s 2>%s", SMSIM_BIN, args, errfile);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	size_t cap = 1 << 16, n = 0;
	c.out = malloc(cap);
	size_t got;
	while ((got = fread(c.out + n, 1, cap - n - 1, p)) > 0) {
		n += got;
		if (n + 1 >= cap)
			c.out = realloc(c.out, cap *= 2);
	}
	c.out[n] = '\0';
	int st = pclose(p);
	c.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	c.err = jdoc_read_file(errfile, NULL);
	remove(errfile);
	return c;
}

static void cli_free(struct cli *c)
{
	free(c->out);
	free(c->err);
}

static double num(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
	if (b)
		x = cJSON_GetObjectItemCaseSensitive(x, b);
	cr_assert(cJSON_IsNumber(x), "missing number %s.%s", a, b ? b : "");
	return x->valuedouble;
}

static cJSON *run_json_expect(const char *args, int status)
{
	char full[2048];
	snprintf(full, sizeof full, "run %s --json --no-timing", args);
	struct cli c = run_cli(full);
	cr_assert_eq(c.status, status, "smsim %s: exit %d: %s", full, c.status, c.err);
	cJSON *o = cJSON_Parse(c.out);
	cr_assert(o, "not JSON: %s", c.out);
	cli_free(&c);
	return o;
}

static cJSON *run_json(const char *args) { return run_json_expect(args, 0); }

Test(cli, help_and_version)
{
	struct cli c = run_cli("--help");
	cr_assert_eq(c.status, 0);
	cr_assert(strstr(c.out, "smsim run EXPERIMENT.json"));
	cli_free(&c);
	c = run_cli("--version");
	cr_assert_eq(c.status, 0);
	cr_assert(strncmp(c.out, "smsim ", 6) == 0, "%s", c.out);
	cli_free(&c);
	c = run_cli("frobnicate");
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "unknown command"));
	cli_free(&c);
}

Test(cli, list_shows_every_shipped_experiment)
{
	struct cli c = run_cli("list");
	cr_assert_eq(c.status, 0, "%s", c.err);
	DIR *dp = opendir("configs/experiments");
	cr_assert(dp);
	struct dirent *de;
	int n = 0;
	while ((de = readdir(dp))) {
		if (!strstr(de->d_name, ".json"))
			continue;
		cr_assert(strstr(c.out, de->d_name), "list does not show %s", de->d_name);
		n++;
	}
	closedir(dp);
	cr_assert_geq(n, 13, "every documented example and study kernel has an experiment");
	cli_free(&c);
}

Test(cli, every_shipped_experiment_runs_and_accounts_every_warp_cycle)
{
	DIR *dp = opendir("configs/experiments");
	cr_assert(dp);
	struct dirent *de;
	while ((de = readdir(dp))) {
		if (!strstr(de->d_name, ".json"))
			continue;
		char args[1024];
		snprintf(args, sizeof args, "configs/experiments/%s", de->d_name);
		/* The deliberate deadlocks are named so, and must end with exit code 3. */
		bool deadlock = strstr(de->d_name, "deadlock") != NULL;
		cJSON *o = run_json_expect(args, deadlock ? 3 : 0);
		if (deadlock)
			cr_assert(cJSON_GetObjectItemCaseSensitive(o, "deadlock"), "%s has no deadlock report", de->d_name);
		double cycles = num(o, "cycles", NULL), warps = num(o, "launch", "warps");
		double sum = 0;
		const cJSON *stalls = cJSON_GetObjectItemCaseSensitive(o, "stalls");
		for (const cJSON *s = stalls->child; s; s = s->next)
			sum += s->valuedouble;
		cr_assert_eq(sum, warps * cycles, "%s: stalls sum %.0f != %.0f warps x %.0f cycles", de->d_name, sum,
			     warps, cycles);
		cr_assert_gt(num(o, "sim", "warp_instructions"), 0);
		cJSON_Delete(o);
	}
	closedir(dp);
}

Test(cli, two_stages_hide_the_latency_one_stage_exposes)
{
	/* 256 threads, 64 batches, and a compute chain (k=256 FMAs, ~1000 cycles) that covers a ~760-cycle copy. */
	cJSON *one = run_json(SINGLE " --set block_size=256 --set batch_sz=64 --set k=256");
	cJSON *two = run_json(STAGED " --set block_size=256 --set batch_sz=64 --set k=256 --set stages=2");
	double c1 = num(one, "cycles", NULL), c2 = num(two, "cycles", NULL);
	double h1 = num(one, "latency_hiding", "hidden_fraction"), h2 = num(two, "latency_hiding", "hidden_fraction");
	/* The H100 (traces/h100/pipelines.csv, DRAM, block 256, between k = 128 and 512): 0.79. */
	cr_assert_lt(c2, 0.85 * c1, "two stages %.0f cycles vs one stage %.0f", c2, c1);
	cr_assert_lt(h1, 0.2, "single stage hides almost nothing (only the commit call overlaps), got %f", h1);
	cr_assert_gt(h2, 0.9, "two stages hide nearly all, got %f", h2);
	cr_assert_gt(num(one, "latency_hiding", "exposed_cycles"), 10 * num(two, "latency_hiding", "exposed_cycles"));
	cr_assert_eq(num(one, "copies", "count"), 64 * 256, "one 4-byte cp.async per thread per batch");
	cr_assert_eq(num(one, "copies", "bytes"), 64 * 256 * 4);
	cr_assert_gt(num(one, "copies", "mean_latency"), 688, "a DRAM round trip at least");
	cJSON_Delete(one);
	cJSON_Delete(two);
}

Test(cli, same_run_twice_gives_identical_json)
{
	struct cli a = run_cli("run " STAGED " --json --no-timing");
	struct cli b = run_cli("run " STAGED " --json --no-timing");
	cr_assert_eq(a.status, 0);
	cr_assert_str_eq(a.out, b.out);
	cr_assert_null(strstr(a.out, "host_seconds"), "--no-timing leaves host timing out");
	cli_free(&a);
	cli_free(&b);
	struct cli t = run_cli("run " STAGED " --json");
	cr_assert(strstr(t.out, "host_seconds"));
	cli_free(&t);
}

Test(cli, set_overrides_params_launch_and_machine)
{
	cJSON *base = run_json(SINGLE);
	cJSON *slow = run_json(SINGLE " --set machine.dram_latency=1500");
	cr_assert_gt(num(slow, "cycles", NULL), num(base, "cycles", NULL) + 64 * 700,
		     "each of 64 exposed copies is ~800 cycles slower");
	/* the report names the scheduling policy that produced it: the machine file's, or the --set's */
	cJSON *lrr = run_json(SINGLE " --set machine.scheduler=lrr");
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(base, "scheduler")->valuestring, "gto_lri");
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(lrr, "scheduler")->valuestring, "lrr");
	cJSON_Delete(lrr);
	struct cli text = run_cli("run " SINGLE " --set machine.scheduler=gto --no-timing");
	cr_assert(strstr(text.out, "model: scheduler=gto, reconverge="), "%s", text.out);
	cli_free(&text);
	cJSON *four = run_json(STAGED " --set stages=4 --set blocks=2 --set launch.block_size=128");
	cr_assert_eq(num(four, "params", "stages"), 4);
	cr_assert_eq(num(four, "launch", "blocks"), 2);
	cr_assert_eq(num(four, "launch", "warps"), 8);
	cJSON_Delete(base);
	cJSON_Delete(slow);
	cJSON_Delete(four);
}

Test(cli, bad_input_exits_2_with_a_clear_message)
{
	struct cli c = run_cli("run " STAGED " --set stagse=4");
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "did you mean \"stages\""), "%s", c.err);
	cli_free(&c);
	c = run_cli("run " STAGED " --set machine.dram_latncy=4");
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "did you mean \"dram_latency\""), "%s", c.err);
	cli_free(&c);
	c = run_cli("run configs/experiments/no_such_thing.json");
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "no_such_thing.json"), "%s", c.err);
	cli_free(&c);
	c = run_cli("run " STAGED " --set block_size=4096");
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "block_size"), "%s", c.err);
	cli_free(&c);

	char path[] = "/tmp/smsim_bad_exp_XXXXXX";
	int fd = mkstemp(path);
	const char *text = "{\n  \"experiment\": \"x\",\n  \"machine\": \"/work/none.json\",\n  \"kernal\": 1\n}\n";
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	char args[256];
	snprintf(args, sizeof args, "run %s", path);
	c = run_cli(args);
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, ":4:13: at $.kernal: unknown field \"kernal\"; did you mean \"kernel\"?"), "%s", c.err);
	cli_free(&c);
	remove(path);
}

Test(cli, deadlock_exits_3_and_names_the_blocked_warps)
{
	struct cli c = run_cli("run tests/fixtures/deadlock_acquire_experiment.json --json --no-timing");
	cr_assert_eq(c.status, 3, "%s", c.err);
	cJSON *o = cJSON_Parse(c.out);
	cr_assert(o);
	const cJSON *dl = cJSON_GetObjectItemCaseSensitive(o, "deadlock");
	const cJSON *blocked = cJSON_GetObjectItemCaseSensitive(dl, "blocked");
	cr_assert_eq(cJSON_GetArraySize(blocked), 1, "the producer warp");
	const cJSON *first = cJSON_GetArrayItem(blocked, 0);
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(first, "op")->valuestring, "producer_acquire");
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(first, "waits_on")->valuestring, "pipe.consumed[0]");
	cr_assert(strstr(c.err, "deadlock"));
	cJSON_Delete(o);
	cli_free(&c);
}

Test(cli, runaway_runs_stop_at_a_limit_with_exit_4)
{
	struct cli c = run_cli("run " SINGLE " --set limit.cycles=5000");
	cr_assert_eq(c.status, 4);
	cr_assert(strstr(c.err, "limit.cycles"), "%s", c.err);
	cli_free(&c);
	c = run_cli("run " SINGLE " --set limit.events=100");
	cr_assert_eq(c.status, 4);
	cr_assert(strstr(c.err, "limit.events"), "%s", c.err);
	cli_free(&c);
}

/* Several --vary: every combination, labelled "stages=2 k=64", the last varying fastest; a name twice is an error. */
Test(cli, compare_several_vary_is_the_cartesian_product)
{
	struct cli c = run_cli("compare " STAGED " --vary stages=1,2 --vary k=0,64 --json --no-timing");
	cr_assert_eq(c.status, 0, "%s", c.err);
	cJSON *o = cJSON_Parse(c.out);
	cr_assert(o);
	const cJSON *runs = cJSON_GetObjectItem(o, "runs");
	cr_assert_eq(cJSON_GetArraySize(runs), 4);
	static const char *const labels[] = {"stages=1 k=0", "stages=1 k=64", "stages=2 k=0", "stages=2 k=64"};
	static const int stages[] = {1, 1, 2, 2}, ks[] = {0, 64, 0, 64};
	double cycles[4];
	for (int i = 0; i < 4; i++) {
		const cJSON *r = cJSON_GetArrayItem(runs, i);
		cr_assert_str_eq(cJSON_GetObjectItem(r, "label")->valuestring, labels[i]);
		const cJSON *p = cJSON_GetObjectItem(r, "params");
		cr_assert_eq(cJSON_GetObjectItem(p, "stages")->valueint, stages[i]);
		cr_assert_eq(cJSON_GetObjectItem(p, "k")->valueint, ks[i]);
		cycles[i] = cJSON_GetObjectItem(r, "cycles")->valuedouble;
	}
	cr_assert_gt(cycles[1], cycles[0], "more compute takes longer");
	cr_assert_lt(cycles[2], cycles[0], "two stages beat one at k = 0, one block");
	cJSON_Delete(o);
	cli_free(&c);
	c = run_cli("compare " STAGED " --vary stages=1,2 --vary k=0 --vary stages=3");
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "--vary stages is given twice"), "%s", c.err);
	cli_free(&c);
	/* an empty value is said, not skipped (strtok would have run stages 1 and 2 under three labels' worth of intent) */
	static const char *const empty[] = {"stages=1,,2", "stages=,1", "stages=1,"};
	for (int i = 0; i < 3; i++) {
		char cmd[256];
		snprintf(cmd, sizeof cmd, "compare " STAGED " --vary %s", empty[i]);
		c = run_cli(cmd);
		cr_assert_eq(c.status, 2, "%s", empty[i]);
		cr_assert(strstr(c.err, "an empty value"), "%s: %s", empty[i], c.err);
		cli_free(&c);
	}
}

/* A kernel file runs alone on the default machine with its own params and one block, saying so. */
Test(cli, a_kernel_file_runs_alone)
{
	struct cli c = run_cli("run kernels/with_staging_unified.json");
	cr_assert_eq(c.status, 0, "%s", c.err);
	cr_assert(strstr(c.out, "defaults: a kernel file run alone — machine kernels/../configs/machines/h100.json, the "
				"kernel's own params, a launch of one block of 256 threads"),
		  "%s", c.out);
	cr_assert(strstr(c.out, "params: stages=2 batch_sz=64 k=64"), "%s", c.out);
	cli_free(&c);
	/* the same as the experiment at the kernel's params and one block */
	struct cli a = run_cli("run kernels/with_staging_unified.json --json --no-timing");
	struct cli b = run_cli("run " STAGED " --set k=64 --set grid_blocks=1 --json --no-timing");
	cJSON *x = cJSON_Parse(a.out), *y = cJSON_Parse(b.out);
	cr_assert(x && y);
	cr_assert_eq(cJSON_GetObjectItem(x, "cycles")->valuedouble, cJSON_GetObjectItem(y, "cycles")->valuedouble);
	cr_assert(cJSON_GetObjectItem(x, "defaults") && !cJSON_GetObjectItem(y, "defaults"));
	cJSON_Delete(x);
	cJSON_Delete(y);
	cli_free(&a);
	cli_free(&b);
	c = run_cli("compare kernels/with_staging_unified.json --vary stages=1,2");
	cr_assert_eq(c.status, 0, "%s", c.err);
	cli_free(&c);
	c = run_cli("run configs/comparisons/stages.json");
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "is a comparison file (smsim compare runs it); this command takes an experiment"), "%s",
		  c.err);
	cli_free(&c);
	c = run_cli("run configs/machines/h100.json");
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "is a machine config"), "%s", c.err);
	cli_free(&c);
}

/* Errors that say what to change: the --set, the range, the expression with its values, the buffer and line. */
Test(cli, errors_name_the_set_the_expression_and_the_buffer)
{
	struct cli c = run_cli("run " STAGED " --set stages=0");
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "smsim: --set stages=0: stages must be 1..64 (the range "), "%s", c.err);
	cr_assert(strstr(c.err, "kernels/with_staging_unified.json declares at 6:"), "%s", c.err);
	cli_free(&c);
	c = run_cli("check " STAGED " --set stages=65");
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "--set stages=65: stages must be 1..64"), "%s", c.err);
	cr_assert(!strstr(c.err, "shared.elems"), "nothing sized from a bad parameter is checked: %s", c.err);
	cli_free(&c);
	/* a size derived from a parameter without a range: the expression and the values that made it */
	c = run_cli("run configs/experiments/producer_consumer_pattern.json --set buffer_len=0");
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "at $.shared.buffer.elems: shared.buffer.elems = stages * buffer_len = 2 * 0 = 0, outside "
				"1..17179869184"),
		  "%s", c.err);
	cli_free(&c);
	/* a launch error caused by --set names the --set */
	c = run_cli("run " STAGED " --set blocks=40");
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "smsim: --set blocks=40: launch: 40 resident blocks"), "%s", c.err);
	cli_free(&c);
	/* a copy out of bounds: buffer, size, index expression with values, line:column, thread */
	c = run_cli("run tests/bad/k_oob_copy.json");
	cr_assert_eq(c.status, 2);
	cr_assert(strstr(c.err, "k_oob_copy.kernel.json:32:3: at $.body[2] (memcpy_async, block 0 warp 0, cycle "), "%s",
		  c.err);
	cr_assert(strstr(c.err, "thread 0 copies 4 bytes from gin[0] + 256 to smem[64] + 256, outside smem (128 elements "
				"of 4 bytes): dst \"smem[block_size]\" = smem[64]"),
		  "%s", c.err);
	cli_free(&c);
}

/*
 * validate's rows name the workload beside the design: primitive_copies' 60 holdout rows are six
 * divergences of each design and occupancy, and without their D the rows read as repeats.
 */
Test(cli, validate_rows_show_the_workload_that_tells_them_apart, .timeout = 300)
{
	FILE *f = fopen("/tmp/smsim_cli_validate.csv", "w");
	cr_assert(f);
	fputs("kernel,divergence,per_group,stages,block_size,blocks_per_sm,k,batch_sz,grid_blocks,source,cycles_per_batch_median\n"
	      "primitive_copies,4,1,2,32,1,0,8,132,DRAM,2000\n"
	      "primitive_copies,16,1,2,32,1,0,8,132,DRAM,5000\n",
	      f);
	fclose(f);
	struct cli c = run_cli("validate /tmp/smsim_cli_validate.csv");
	cr_assert_eq(c.status, 0, "%s", c.err);
	cr_assert(strstr(c.out, "per_group=1 stages=2 divergence=4 "), "%s", c.out);
	cr_assert(strstr(c.out, "per_group=1 stages=2 divergence=16 "), "%s", c.out);
	cli_free(&c);
	remove("/tmp/smsim_cli_validate.csv");
}

/* Writes text to a fresh file under /tmp named for suffix; returns its path (static storage, one at a time per suffix). */
static const char *tmp_file(const char *suffix, const char *text)
{
	static char paths[8][96];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, 96, "/tmp/smsim_cli_%d_%s", (int)getpid(), suffix);
	FILE *f = fopen(p, "w");
	cr_assert(f, "%s", p);
	fputs(text, f);
	fclose(f);
	return p;
}

/*
 * validate reads its CSVs strictly (an adversarial pass found each of these taken): a measured value
 * that is nan, inf or 1e999 would make every bound pass; a file with no rows compared nothing and
 * passed; a source other than L2 or DRAM ran as DRAM; a bound option that is not a percentage turned
 * the bound off; a row whose kernel does not exist was not named by file and line.
 */
Test(cli, validate_refuses_what_it_cannot_measure_against)
{
	static const char *const head = "kernel,stages,block_size,k,batch_sz,grid_blocks,source,cycles_per_batch_median\n";
	char text[512];
	static const char *const bad[][2] = {
		{"with_single_stage,1,128,0,4,132,DRAM,nan\n", "cycles_per_batch_median is \"nan\"; expected a finite number"},
		{"with_single_stage,1,128,0,4,132,DRAM,inf\n", "expected a finite number"},
		{"with_single_stage,1,128,0,4,132,DRAM,1e999\n", "expected a finite number"},
		{"with_single_stage,1,128,0,4,132,HBM,900\n", "source \"HBM\": expected L2 or DRAM"},
		{"with_single_stage,1,12x,0,4,132,DRAM,900\n", "block_size is \"12x\"; expected a decimal integer"},
		{"", "no rows"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(text, sizeof text, "%s%s", head, bad[i][0]);
		char args[256];
		snprintf(args, sizeof args, "validate %s", tmp_file("v.csv", text));
		struct cli c = run_cli(args);
		cr_assert_eq(c.status, 2, "%s: %s", bad[i][0], c.err);
		cr_assert(strstr(c.err, bad[i][1]), "%s: %s", bad[i][0], c.err);
		if (bad[i][0][0])
			cr_assert(strstr(c.err, "v.csv:2:"), "names the file and line: %s", c.err);
		cli_free(&c);
	}
	snprintf(text, sizeof text, "%sno_such_kernel,1,128,0,4,132,DRAM,900\n", head);
	char args[256];
	snprintf(args, sizeof args, "validate %s", tmp_file("v.csv", text));
	struct cli c = run_cli(args);
	cr_assert_eq(c.status, 2, "%s", c.err);
	cr_assert(strstr(c.err, "v.csv:2: kernel no_such_kernel"), "%s", c.err);
	cli_free(&c);
	static const char *const bounds[] = {"--max-error -5", "--max-error abc", "--max-family-error 5x",
					     "--min-limit-agreement nan"};
	for (int i = 0; i < 4; i++) {
		snprintf(args, sizeof args, "validate traces/h100/pipelines.csv %s", bounds[i]);
		c = run_cli(args);
		cr_assert_eq(c.status, 2, "%s: %s", bounds[i], c.err);
		cr_assert(strstr(c.err, "expected a percentage"), "%s: %s", bounds[i], c.err);
		cli_free(&c);
	}
}

/* calibrate refuses a derived field outside the machine loader's range, naming the row it came from. */
Test(cli, calibrate_refuses_fields_the_machine_loader_would)
{
	char dir[] = "/tmp/smsim_cal_XXXXXX", cmd[512];
	cr_assert(mkdtemp(dir));
	snprintf(cmd, sizeof cmd, "cp traces/h100/*.csv %s/ && sed -i 's/^clock_mhz_measured,[0-9.]*/clock_mhz_measured,0/' %s/device.csv",
		 dir, dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "calibrate %s -o %s/out.json", dir, dir);
	struct cli c = run_cli(cmd);
	cr_assert_eq(c.status, 2, "%s", c.err);
	cr_assert(strstr(c.err, "clock_ghz = 0 is outside 0.1..10") && strstr(c.err, "device.csv row"), "%s", c.err);
	cli_free(&c);
	snprintf(cmd, sizeof cmd, "test ! -e %s/out.json && rm -rf %s", dir, dir);
	cr_assert_eq(system(cmd), 0, "no machine file is written");
	c = run_cli("calibrate traces/h100 > /dev/full");
	cr_assert_eq(c.status, 2, "a write to a full device fails: %s", c.err);
	cli_free(&c);
}

/* Sweeps and plots: a name twice in vary or set, a table cell that is not a finite number, several experiments with --vary. */
Test(cli, sweeps_refuse_duplicate_names_and_plots_refuse_nan)
{
	const char *dup = tmp_file("dup.json", "{\"sweep\": \"d\", \"experiment\": \"" STAGED "\", \"set\": {\"batch_sz\": 4},"
					       " \"vary\": {\"stages\": [1, 2], \"stages\": [3]}, \"plot\": {\"x\": \"stages\", \"y\": \"cycles\"}}\n");
	char args[512];
	snprintf(args, sizeof args, "sweep %s", dup);
	struct cli c = run_cli(args);
	cr_assert_eq(c.status, 2, "%s", c.err);
	cr_assert(strstr(c.err, "at $.vary.stages: duplicate field \"stages\""), "%s", c.err);
	cli_free(&c);
	char cwd[256], json[512];
	cr_assert(getcwd(cwd, sizeof cwd));
	snprintf(json, sizeof json,
		 "{\"sweep\": \"t\", \"experiment\": \"%s/" STAGED "\", \"set\": {\"batch_sz\": 4},"
		 " \"vary\": {\"stages\": [1, 2]}, \"plot\": {\"x\": \"stages\", \"y\": \"cycles\"}}\n",
		 cwd);
	const char *sw = tmp_file("sw.json", json);
	snprintf(args, sizeof args, "sweep %s --csv /dev/stdout | sed '3s/,ok,[0-9]*,/,ok,nan,/' > /tmp/smsim_cli_%d_t.csv", sw,
		 (int)getpid());
	c = run_cli(args);
	cr_assert_eq(c.status, 0, "--csv /dev/stdout into a pipe: %s", c.err);
	cli_free(&c);
	snprintf(args, sizeof args, "plot %s /tmp/smsim_cli_%d_t.csv --svg /tmp/smsim_cli_%d_t.svg", sw, (int)getpid(),
		 (int)getpid());
	c = run_cli(args);
	cr_assert_eq(c.status, 2, "%s", c.err);
	cr_assert(strstr(c.err, "run 1's cycles is \"nan\"; expected a finite number"), "%s", c.err);
	cli_free(&c);
	snprintf(json, sizeof json,
		 "{\"sweep\": \"l\", \"experiment\": \"%s/" STAGED "\", \"set\": {\"batch_sz\": 4, \"limit.cycles\": 1000},"
		 " \"vary\": {\"stages\": [1, 2]}, \"plot\": {\"x\": \"stages\", \"y\": \"cycles\"}}\n",
		 cwd);
	snprintf(args, sizeof args, "sweep %s --csv /dev/null", tmp_file("lim.json", json));
	c = run_cli(args);
	cr_assert_eq(c.status, 0, "a sweep's unfinished runs are rows: %s", c.err);
	cr_assert(strstr(c.err, "2 of 2 runs did not finish"), "and said on stderr: %s", c.err);
	cli_free(&c);
	snprintf(args, sizeof args, "sweep %s --csv /tmp/smsim_cli_same --svg /tmp/smsim_cli_same", sw);
	c = run_cli(args);
	cr_assert_eq(c.status, 2, "%s", c.err);
	cr_assert(strstr(c.err, "--csv and --svg name the same file"), "%s", c.err);
	cli_free(&c);
	snprintf(args, sizeof args, "sweep %s --csv ''", sw);
	c = run_cli(args);
	cr_assert_eq(c.status, 2, "%s", c.err);
	cr_assert(strstr(c.err, "an empty output file name"), "%s", c.err);
	cli_free(&c);
	c = run_cli("compare configs/experiments/with_single_stage.json " STAGED " --vary stages=1,2");
	cr_assert_eq(c.status, 2, "%s", c.err);
	cr_assert(strstr(c.err, "--vary runs one experiment"), "%s", c.err);
	cli_free(&c);
}

/*
 * bench: how fast the simulator is, on a fixed set of workloads.
 *
 * Each workload runs in a child process (so its peak memory is its own),
 * several times; the median host time gives warp-instructions and events
 * per second.  Then the scaling checks: cost against the number of batches
 * (1x..8x) and against resident warps should be linear, and peak memory
 * should not grow with simulated cycles.  --callgrind counts host
 * instructions per simulated warp-instruction, a figure machine noise does
 * not move.  Speed targets live here, never in a timed unit test.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "runner.h"

struct workload {
	const char *name;
	const char *experiment;
	const char *sets[8];
};

static const struct workload workloads[] = {
	{"with_single_stage", "with_single_stage", {"blocks=4", "batch_sz=4096", "k=64"}},
	{"with_staging", "with_staging", {"blocks=4", "batch_sz=4096", "k=64", "corrected=1"}},
	{"with_staging_unified", "with_staging_unified", {"blocks=4", "batch_sz=4096", "k=64"}},
	{"with_specialized_staging_unified", "with_specialized_staging_unified", {"blocks=4", "batch_sz=4096", "k=64"}},
	{"with_staging_scope_thread", "with_staging_scope_thread", {"blocks=4", "batch_sz=4096", "k=64"}},
	{"producer_consumer_pattern", "producer_consumer_pattern", {"blocks=4", "batch_sz=4096", "k=64"}},
	{"split_arrive_wait", "split_arrive_wait", {"blocks=4", "iteration_count=4096", "k=64"}},
	{"overwait D=32", "diverged_commit", {"blocks=4", "batch_sz=1024", "divergence=32"}},
	{"bulk_staging (TMA)", "bulk_staging", {"blocks=4", "batch_sz=4096", "k=64"}},
	/* issue 20's two GEMM main loops, 4 blocks per SM as the README's speed figure */
	{"gemm cp.async multistage", "gemm_cp_async_multistage", {"blocks=4", "batch_sz=1024", "stages=3"}},
	{"gemm warp-specialised bulk", "gemm_warp_specialized_bulk", {"blocks=4", "batch_sz=1024", "stages=3"}},
};

struct sample {
	double seconds;
	long maxrss_kb;
	unsigned long long insts, events;
	int status;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Runs one experiment in a child; its time, peak memory and counts come back through a pipe.  With
 * trace_dir the run records its timeline and writes it as a Chrome trace file there (timed, then removed),
 * as run --trace does.
 */
static struct sample measure_run(const char *configs, const char *experiment, const char *const *sets, int nsets,
				 const char *trace_dir)
{
	struct sample out = {.status = -1};
	int p[2];
	if (pipe(p))
		return out;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return out;
	if (pid == 0) {
		close(p[0]);
		char file[1200], buf[16][64];
		snprintf(file, sizeof file, "%.1000s/experiments/%.100s.json", configs, experiment);
		struct setting st[16];
		int n = 0;
		for (int i = 0; i < nsets && sets[i] && n < 15; i++) {
			snprintf(buf[n], sizeof buf[n], "%s", sets[i]);
			runner_split_setting(buf[n], &st[n]);
			n++;
		}
		st[n++] = (struct setting){"check.dataflow", "0"};
		struct experiment *e = calloc(1, sizeof *e);
		struct sim_report *r = calloc(1, sizeof *r);
		struct diag d;
		struct sample s = {0};
		double t0 = now_s();
		s.status = runner_run(file, st, n, trace_dir ? RUNNER_TRACE : 0, e, r, &d);
		char path[1200] = "";
		if (trace_dir && !s.status && r->trace) {
			snprintf(path, sizeof path, "%.1000s/trace-%d.json", trace_dir, (int)getpid());
			FILE *f = fopen(path, "w");
			if (!f || trace_write_chrome(r->trace, f, experiment, r->clock_ghz))
				s.status = 2;
			if (f && fclose(f))
				s.status = 2;
		}
		s.seconds = now_s() - t0;
		/* deleting the file is the bench's tidying, not what run --trace costs (0.1 s of a 1.3 GB file) */
		if (path[0])
			remove(path);
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		s.maxrss_kb = ru.ru_maxrss;
		s.insts = r->warp_insts;
		s.events = r->events;
		if (s.status)
			fprintf(stderr, "smsim bench: %s: %s\n", experiment, d.msg);
		if (write(p[1], &s, sizeof s) != (ssize_t)sizeof s)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &out, sizeof out) != (ssize_t)sizeof out)
		out.status = -1;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	return out;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static struct sample median_run(const char *configs, const char *exp, const char *const *sets, int nsets, int reps,
				const char *trace_dir)
{
	double t[32];
	struct sample s = {0};
	for (int i = 0; i < reps && i < 32; i++) {
		s = measure_run(configs, exp, sets, nsets, trace_dir);
		if (s.status)
			return s;
		t[i] = s.seconds;
	}
	qsort(t, (size_t)reps, sizeof t[0], cmp_double);
	s.seconds = t[reps / 2];
	return s;
}

static struct sample median_of(const char *configs, const char *exp, const char *const *sets, int nsets, int reps)
{
	return median_run(configs, exp, sets, nsets, reps, NULL);
}

/* Wall seconds of `smsim sweep FILE -j jobs` (output discarded); negative if it failed. */
static double time_sweep(const char *self, const char *file, int jobs)
{
	char j[16];
	snprintf(j, sizeof j, "%d", jobs);
	fflush(NULL);
	double t0 = now_s();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execl(self, self, "sweep", file, "-j", j, (char *)NULL);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return now_s() - t0;
}

static double median_sweep(const char *self, const char *file, int jobs, int reps)
{
	double t[32];
	for (int i = 0; i < reps && i < 32; i++)
		if ((t[i] = time_sweep(self, file, jobs)) < 0)
			return -1;
	qsort(t, (size_t)reps, sizeof t[0], cmp_double);
	return t[reps / 2];
}

/*
 * Parallel sweeps and traces: sweep -j 2 against -j 1 (stages x k of with_staging_unified, 20 runs),
 * and a run that writes its trace against one that does not.
 */
static int bench_sweep_and_trace(const char *self, const char *configs, bool quick, int reps)
{
	char dir[] = "/tmp/smsim-bench-XXXXXX";
	if (!mkdtemp(dir)) {
		fprintf(stderr, "smsim bench: cannot make a temporary directory\n");
		return 2;
	}
	char file[1200], cwd[1024] = "", abs[2200] = "";
	int rc = 0;
	snprintf(file, sizeof file, "%s/sweep.json", dir);
	FILE *f = fopen(file, "w");
	/* the sweep file names its experiment relative to itself, so an absolute path */
	if (configs[0] == '/')
		snprintf(abs, sizeof abs, "%.1000s", configs);
	else if (getcwd(cwd, sizeof cwd))
		snprintf(abs, sizeof abs, "%.1000s/%.1000s", cwd, configs);
	if (!f || !abs[0]) {
		if (f)
			fclose(f);
		fprintf(stderr, "smsim bench: cannot write %s\n", file);
		rc = 2;
		goto out;
	}
	fprintf(f,
		"{\"sweep\": \"bench\", \"experiment\": \"%s/experiments/with_staging_unified.json\",\n"
		" \"set\": {\"blocks\": 4, \"batch_sz\": %d, \"check.dataflow\": 0},\n"
		" \"vary\": {\"stages\": [1, 2, 3, 4], \"k\": [0, 32, 128, 256, 512]}}\n",
		abs, quick ? 32 : 128);
	fclose(f);
	double j1 = median_sweep(self, file, 1, reps), j2 = median_sweep(self, file, 2, reps);
	if (j1 <= 0 || j2 <= 0) {
		fprintf(stderr, "smsim bench: sweep %s failed\n", file);
		rc = 2;
		goto out;
	}
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	printf("\nsweep (with_staging_unified, 4 blocks, 4 stages x 5 k, %d batches; median wall time): -j 1 %.3f s, "
	       "-j 2 %.3f s: ratio %.2f (target <= 0.60 on %ld cores)\n",
	       quick ? 32 : 128, j1, j2, j2 / j1, cores);
	const char *sets[] = {"blocks=4", "k=64", quick ? "batch_sz=256" : "batch_sz=1024"};
	struct sample plain = median_run(configs, "with_staging_unified", sets, 3, reps, NULL);
	struct sample traced = median_run(configs, "with_staging_unified", sets, 3, reps, dir);
	if (plain.status || traced.status) {
		fprintf(stderr, "smsim bench: trace run failed\n");
		rc = 2;
		goto out;
	}
	printf("trace (with_staging_unified, %s): without %.3f s, with --trace %.3f s: ratio %.2f (target <= 3), "
	       "peak %.1f MiB vs %.1f MiB\n",
	       sets[2], plain.seconds, traced.seconds, traced.seconds / plain.seconds, traced.maxrss_kb / 1024.0,
	       plain.maxrss_kb / 1024.0);
out:
	remove(file);
	rmdir(dir);
	return rc;
}

/* Host instructions per simulated warp-instruction of one run under callgrind; 0 if it failed. */
static double callgrind_one(const char *self, const char *configs, const char *experiment, const char *const *sets,
			    int nsets)
{
	char cmd[4096], out[] = "/tmp/smsim-callgrind-XXXXXX";
	int fd = mkstemp(out);
	if (fd < 0)
		return 0;
	close(fd);
	int n = snprintf(cmd, sizeof cmd, "valgrind --tool=callgrind --callgrind-out-file=%s %s run %s/experiments/%s.json",
			 out, self, configs, experiment);
	for (int i = 0; i < nsets && sets[i] && n > 0 && (size_t)n < sizeof cmd; i++)
		n += snprintf(cmd + n, sizeof cmd - (size_t)n, " --set %s", sets[i]);
	if (n > 0 && (size_t)n < sizeof cmd)
		snprintf(cmd + n, sizeof cmd - (size_t)n, " --set check.dataflow=0 --json --no-timing 2>/dev/null");
	FILE *p = popen(cmd, "r");
	if (!p) {
		remove(out);
		return 0;
	}
	char line[512];
	unsigned long long insts = 0;
	while (fgets(line, sizeof line, p)) {
		char *w = strstr(line, "\"warp_instructions\":");
		if (w)
			insts = strtoull(w + 20, NULL, 10);
	}
	int st = pclose(p);
	FILE *f = fopen(out, "r");
	unsigned long long ir = 0;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "summary:", 8) == 0 || strncmp(line, "totals:", 7) == 0)
			ir = strtoull(strchr(line, ':') + 1, NULL, 10);
	if (f)
		fclose(f);
	remove(out);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !insts || !ir)
		return 0;
	return (double)ir / (double)insts;
}

/*
 * Host instructions per warp-instruction, a figure the machine's load does not move: the reference run
 * (with_staging_unified, 4 blocks x 256 batches), each workload at 1/16 of its size, and 8 to 64 warps.
 */
static int callgrind(const char *self, const char *configs)
{
	const char *ref[] = {"blocks=4", "batch_sz=256", "k=64"};
	double per = callgrind_one(self, configs, "with_staging_unified", ref, 3);
	if (!per) {
		fprintf(stderr, "smsim bench: callgrind run failed (is valgrind installed?)\n");
		return 2;
	}
	printf("\ncallgrind: with_staging_unified, 4 blocks x 256 batches: %.0f host instructions per warp-instruction\n",
	       per);
	printf("callgrind, each workload at 1/16 of its size: host instructions per warp-instruction\n");
	for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++) {
		const struct workload *w = &workloads[i];
		char buf[8][64];
		const char *sets[8];
		int ns = 0;
		for (int k = 0; k < 8 && w->sets[k]; k++) {
			const char *eq = strchr(w->sets[k], '=');
			if (eq && (!strncmp(w->sets[k], "batch_sz=", 9) || !strncmp(w->sets[k], "iteration_count=", 16))) {
				snprintf(buf[ns], sizeof buf[ns], "%.*s=%lld", (int)(eq - w->sets[k]), w->sets[k],
					 atoll(eq + 1) / 16);
				sets[ns] = buf[ns];
			} else {
				sets[ns] = w->sets[k];
			}
			ns++;
		}
		per = callgrind_one(self, configs, w->experiment, sets, ns);
		printf("  %-34s %6.0f\n", w->name, per);
	}
	printf("callgrind, with_staging_unified k=64, 2048 warp-batches: host instructions per warp-instruction\n");
	static const char *const blocks[][2] = {{"blocks=1", "batch_sz=256"}, {"blocks=2", "batch_sz=128"},
						{"blocks=4", "batch_sz=64"}, {"blocks=8", "batch_sz=32"}};
	double base = 0;
	for (int i = 0; i < 4; i++) {
		const char *sets[] = {blocks[i][0], blocks[i][1], "k=64"};
		per = callgrind_one(self, configs, "with_staging_unified", sets, 3);
		if (!i)
			base = per;
		printf("  %-10s %2d warps  %6.0f  ratio %.2f\n", blocks[i][0], 8 << i, per, base ? per / base : 0);
	}
	return 0;
}

int cmd_bench(int argc, char **argv, const char *self)
{
	int reps = 3;
	bool quick = false, use_callgrind = false;
	const char *configs = "configs";
	for (int i = 0; i < argc; i++) {
		const char *v = NULL;
		int got;
		if (!strcmp(argv[i], "--quick")) {
			quick = true;
		} else if (!strcmp(argv[i], "--callgrind")) {
			use_callgrind = true;
		} else if ((got = cli_value(argc, argv, &i, "bench", "--reps", &v))) {
			if (got < 0)
				return 2;
			reps = atoi(v);
		} else if ((got = cli_value(argc, argv, &i, "bench", "--configs", &configs))) {
			if (got < 0)
				return 2;
		} else {
			return cli_unknown_option("bench", argv[i]);
		}
	}
	if (reps < 1 || reps > 31)
		reps = 3;
	printf("%-34s %14s %12s %9s %14s %12s %9s\n", "workload", "warp-insts", "events", "host s", "warp-insts/s",
	       "events/s", "peak MiB");
	size_t n = quick ? 2 : sizeof workloads / sizeof workloads[0];
	for (size_t i = 0; i < n; i++) {
		const struct workload *w = &workloads[i];
		const char *sets[8];
		int ns = 0;
		for (int k = 0; k < 8 && w->sets[k]; k++)
			sets[ns++] = quick && !strncmp(w->sets[k], "batch_sz=", 9) ? "batch_sz=256" : w->sets[k];
		struct sample s = median_of(configs, w->experiment, sets, ns, reps);
		if (s.status) {
			printf("%-34s failed\n", w->name);
			return 2;
		}
		printf("%-34s %14llu %12llu %9.3f %13.2fM %11.2fM %9.1f\n", w->name, s.insts, s.events, s.seconds,
		       (double)s.insts / s.seconds / 1e6, (double)s.events / s.seconds / 1e6, s.maxrss_kb / 1024.0);
	}
	/* Scaling: cost per warp-instruction against batches and against resident warps. */
	printf("\nscaling (with_staging_unified, k=64): host seconds per million warp-instructions\n");
	const char *batches[] = {"batch_sz=512", "batch_sz=1024", "batch_sz=2048", "batch_sz=4096"};
	double base = 0;
	long rss0 = 0;
	for (int i = 0; i < (quick ? 2 : 4); i++) {
		const char *sets[] = {"blocks=4", "k=64", batches[i]};
		struct sample s = median_of(configs, "with_staging_unified", sets, 3, reps);
		double per = s.seconds / ((double)s.insts / 1e6);
		if (!i) {
			base = per;
			rss0 = s.maxrss_kb;
		}
		printf("  %-14s x%-2d  %8.4f s/M  ratio %.2f   peak %.1f MiB (%+ld KiB vs 1x)\n", batches[i], 1 << i, per,
		       per / base, s.maxrss_kb / 1024.0, s.maxrss_kb - rss0);
	}
	const char *blocks[] = {"blocks=1", "blocks=2", "blocks=4", "blocks=8"};
	for (int i = 0; i < (quick ? 2 : 4); i++) {
		const char *sets[] = {blocks[i], "k=64", "batch_sz=1024"};
		struct sample s = median_of(configs, "with_staging_unified", sets, 3, reps);
		double per = s.seconds / ((double)s.insts / 1e6);
		if (!i)
			base = per;
		printf("  %-14s %2d warps  %8.4f s/M  ratio %.2f\n", blocks[i], 8 << i, per, per / base);
	}
	printf("  (wall clock; one block's warps run in step and cost less per warp-instruction on the host than two\n"
	       "   blocks' out of phase, for the same host instructions: --callgrind counts those; sim/PERFORMANCE.md)\n");
	int rc = bench_sweep_and_trace(self, configs, quick, reps);
	if (rc)
		return rc;
	if (use_callgrind)
		return callgrind(self, configs);
	return 0;
}

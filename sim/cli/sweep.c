/*
 * sweep: the cartesian product of named parameter lists, run in worker
 * processes, one CSV row per run in a stable order — the same bytes
 * whatever -j — and optionally a line plot.  With --shard I/N only the runs
 * I, I+N, I+2N, ... are run and written as a part, which `smsim merge`
 * joins with the other shards' (sweepint.h describes the part format).
 *
 * SWEEP.json: {"sweep", "description", "experiment", "set": {...},
 *              "vary": {"NAME": [values...], ...},
 *              "plot": {"x": NAME, "y": METRIC, "series": NAME,
 *                       "xlabel": TEXT, "ylabel": TEXT}}
 *
 * The plot's axes are labelled with what they are and their unit: the
 * plot file's xlabel and ylabel, else a known parameter's or metric's
 * label, else the name with its kind (a machine field's unit).  A part's
 * header carries both labels, so a merged table draws the same picture.
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../isa/jdoc.h"
#include "../../isa/suggest.h"
#include "cli.h"
#include "commands.h"
#include "limit.h"
#include "machine.h"
#include "outfile.h"
#include "runner.h"
#include "sweepint.h"

#ifndef SMSIM_VERSION
#define SMSIM_VERSION "dev"
#endif

#define MAX_WORKERS 64

/* ORDER METRIC: the CSV's columns after the parameters, with what a plot's axis calls them. */
#define METRICS(X)                                                                                       \
	X(cycles, "cycles (SM clock, whole run)", (double)r->cycles)                                     \
	X(hidden_fraction, "hidden fraction of the copy latency (0 to 1)", r->hidden_fraction)           \
	X(exposed_cycles, "exposed copy wait (cycles, summed over batches)", (double)r->exposed)         \
	X(copy_latency_cycles, "copy latency (cycles, summed over batches)", (double)r->batch_latency)   \
	X(lower_bound, "lower bound (cycles)", (double)r->lower_bound)                                    \
	X(efficiency, "efficiency (lower bound / cycles, 0 to 1)", r->efficiency)                        \
	X(overwait_cycles, "over-wait (cycles, summed over threads)", (double)r->overwait_cycles)        \
	X(overwait_extra_batches, "extra batches waited for (batches, summed over threads)",             \
	  (double)r->overwait_extra_batches)                                                             \
	X(overwait_waits, "thread-scope waits (count)", (double)r->overwait_waits)                        \
	X(overwait_cycles_per_wait, "over-wait per wait (cycles)",                                        \
	  r->overwait_waits ? (double)r->overwait_cycles / (double)r->overwait_waits : 0)                \
	X(actual_batches, "cp.async batches per warp sequence (batches)", (double)r->cp_async_batches)   \
	X(thread_commits, "thread commits (count)", (double)r->cp_async_commits)                          \
	X(hazards, "dataflow hazards (count)", (double)r->hazards)                                        \
	X(provenance_mismatches, "provenance mismatches (count)", (double)r->provenance_mismatches)      \
	X(dram_bytes, "DRAM traffic (bytes)", (double)r->dram_bytes)                                      \
	X(warp_instructions, "warp-instructions issued (count)", (double)r->warp_insts)                   \
	X(binding_limit, "binding limit (0 dram, 1 tensor, 2 mio, 3 issue, 4 memory-latency, "             \
	  "5 instruction-latency)", (double)lim.resource)                                                \
	X(limit_utilization, "binding limit's utilization (0 to 1 of its peak)", lim.utilization)        \
	X(dram_pct, "DRAM throughput (% of peak)", lim.dram_pct)                                          \
	X(mio_busy_pct, "busiest memory pipe (% of cycles)", lim.mio_busy_pct)                          \
	X(issued_per_scheduler, "warps issued per scheduler per cycle", lim.issue_per_scheduler)

enum {
#define METRIC_ENUM(name, label, expr) M_##name,
	METRICS(METRIC_ENUM)
#undef METRIC_ENUM
	M_STALLS,
	NMETRICS = M_STALLS + STALL_COUNT
};

static const char *const metric_names[M_STALLS + 1] = {
#define METRIC_NAME(name, label, expr) #name,
	METRICS(METRIC_NAME)
#undef METRIC_NAME
	NULL,
};

static const char *const metric_labels[M_STALLS] = {
#define METRIC_LABEL(name, label, expr) label,
	METRICS(METRIC_LABEL)
#undef METRIC_LABEL
};

struct result {
	int32_t index;
	int32_t status;
	double m[NMETRICS];
	char error[256]; /* a run that could not start (bad input) */
};


/* True when s can stand in a CSV cell and a part's header unquoted: no comma, quote or control character. */
static bool csv_safe(const char *s, bool commas)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || (!commas && (*s == ',' || *s == '"')))
			return false;
	return true;
}

static int word(const cJSON *v, char *out, size_t n)
{
	if (cJSON_IsNumber(v))
		snprintf(out, n, "%.17g", v->valuedouble);
	else if (cJSON_IsString(v))
		snprintf(out, n, "%s", v->valuestring);
	else
		return -1;
	return 0;
}

static int metric_index(const char *name)
{
	for (int m = 0; m < M_STALLS; m++)
		if (strcmp(metric_names[m], name) == 0)
			return m;
	for (int c = 0; c < STALL_COUNT; c++)
		if (strncmp(name, "stall_", 6) == 0 && strcmp(name + 6, stall_key[c]) == 0)
			return M_STALLS + c;
	return -1;
}

static int vary_index(const struct sweep *sw, const char *name)
{
	for (int k = 0; k < sw->nvary; k++)
		if (strcmp(sw->vary_name[k], name) == 0)
			return k;
	return -1;
}

int sweep_load(const char *file, struct sweep *sw, struct diag *d)
{
	struct jdoc doc;
	int rc = jdoc_load(file, &doc, d);
	if (rc)
		return rc;
	struct jpath at;
	jpath_root(&at);
	static const char *const keys[] = {"sweep", "description", "experiment", "set", "vary", "plot", "comment", NULL};
	const char *name = NULL, *exp = NULL;
	if ((rc = jdoc_check_keys(&doc, doc.root, &at, keys, d)) ||
	    (rc = jdoc_string(&doc, doc.root, &at, "sweep", true, &name, d)) ||
	    (rc = jdoc_string(&doc, doc.root, &at, "experiment", true, &exp, d)))
		goto out;
	if (!csv_safe(name, true)) {
		jpath_key(&at, "sweep");
		rc = jdoc_error(&doc, &at, d, "expected a name without control characters");
		goto out;
	}
	snprintf(sw->name, sizeof sw->name, "%s", name);
	const char *slash = strrchr(file, '/');
	if (exp[0] == '/' || !slash)
		snprintf(sw->experiment, sizeof sw->experiment, "%s", exp);
	else
		snprintf(sw->experiment, sizeof sw->experiment, "%.*s/%s", (int)(slash - file), file, exp);
	const cJSON *set = cJSON_GetObjectItemCaseSensitive(doc.root, "set");
	if ((rc = jdoc_check_unique(&doc, doc.root, "set", &at, d)) || (rc = jdoc_check_unique(&doc, doc.root, "vary", &at, d)))
		goto out;
	for (const cJSON *s = set ? set->child : NULL; s && sw->nfixed < SWEEP_MAX_FIXED; s = s->next) {
		snprintf(sw->fixed_name[sw->nfixed], 64, "%s", s->string);
		if (word(s, sw->fixed_value[sw->nfixed], 128)) {
			size_t o = jpath_key(&at, "set");
			jpath_key(&at, s->string);
			rc = jdoc_error(&doc, &at, d, "expected a number or a string");
			jpath_pop(&at, o);
			goto out;
		}
		sw->nfixed++;
	}
	const cJSON *vary = cJSON_GetObjectItemCaseSensitive(doc.root, "vary");
	size_t old = jpath_key(&at, "vary");
	if (!cJSON_IsObject(vary) || !vary->child || cJSON_GetArraySize(vary) > SWEEP_MAX_VARY) {
		rc = jdoc_error(&doc, &at, d, "expected an object of 1 to %d parameter lists", SWEEP_MAX_VARY);
		goto out;
	}
	long long runs = 1; /* at most 64^8: no overflow */
	for (const cJSON *v = vary->child; v; v = v->next) {
		size_t o2 = jpath_key(&at, v->string);
		if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1 || cJSON_GetArraySize(v) > SWEEP_MAX_VALUES) {
			rc = jdoc_error(&doc, &at, d, "expected a list of 1 to %d values", SWEEP_MAX_VALUES);
			goto out;
		}
		if (!csv_safe(v->string, false)) {
			rc = jdoc_error(&doc, &at, d, "expected a parameter name without commas, quotes or control characters (it heads a CSV column)");
			goto out;
		}
		int k = sw->nvary++;
		snprintf(sw->vary_name[k], SWEEP_NAME_LEN, "%s", v->string);
		for (const cJSON *x = v->child; x; x = x->next) {
			char *val = sw->vary_value[k][sw->nvalues[k]];
			if (word(x, val, SWEEP_NAME_LEN)) {
				rc = jdoc_error(&doc, &at, d, "expected numbers or strings");
				goto out;
			}
			if (!csv_safe(val, false)) {
				rc = jdoc_error(&doc, &at, d, "expected values without commas, quotes or control characters (they fill CSV cells)");
				goto out;
			}
			sw->nvalues[k]++;
		}
		runs *= sw->nvalues[k];
		jpath_pop(&at, o2);
	}
	jpath_pop(&at, old);
	if (runs > SWEEP_MAX_RUNS) {
		rc = jdoc_error(&doc, &at, d, "the sweep has %lld runs; the limit is %d", runs, SWEEP_MAX_RUNS);
		goto out;
	}
	sw->runs = (int)runs;
	const cJSON *plot = cJSON_GetObjectItemCaseSensitive(doc.root, "plot");
	snprintf(sw->plot_x, sizeof sw->plot_x, "%s", sw->vary_name[0]);
	snprintf(sw->plot_y, sizeof sw->plot_y, "cycles");
	if (sw->nvary > 1)
		snprintf(sw->plot_series, sizeof sw->plot_series, "%s", sw->vary_name[1]);
	if (plot) {
		old = jpath_key(&at, "plot");
		static const char *const pkeys[] = {"x", "y", "series", "xlabel", "ylabel", "comment", NULL};
		const char *x = NULL, *y = NULL, *series = NULL, *xl = NULL, *yl = NULL;
		if ((rc = jdoc_check_keys(&doc, plot, &at, pkeys, d)) || (rc = jdoc_string(&doc, plot, &at, "x", false, &x, d)) ||
		    (rc = jdoc_string(&doc, plot, &at, "y", false, &y, d)) ||
		    (rc = jdoc_string(&doc, plot, &at, "series", false, &series, d)) ||
		    (rc = jdoc_string(&doc, plot, &at, "xlabel", false, &xl, d)) ||
		    (rc = jdoc_string(&doc, plot, &at, "ylabel", false, &yl, d)))
			goto out;
		if (x)
			snprintf(sw->plot_x, sizeof sw->plot_x, "%s", x);
		if (y)
			snprintf(sw->plot_y, sizeof sw->plot_y, "%s", y);
		if (series)
			snprintf(sw->plot_series, sizeof sw->plot_series, "%s", series);
		snprintf(sw->xlabel, sizeof sw->xlabel, "%s", xl ? xl : "");
		snprintf(sw->ylabel, sizeof sw->ylabel, "%s", yl ? yl : "");
		/* Checked here, where the file can be pointed at, not after the runs (or on a cluster's nodes). */
		if (vary_index(sw, sw->plot_x) < 0) {
			size_t o2 = jpath_key(&at, "x");
			const char *names[SWEEP_MAX_VARY + 1];
			for (int k = 0; k < sw->nvary; k++)
				names[k] = sw->vary_name[k];
			names[sw->nvary] = NULL;
			const char *hint = suggest_name(sw->plot_x, names);
			rc = jdoc_error(&doc, &at, d, "\"%s\" is not a varied parameter%s%s%s", sw->plot_x,
					hint ? "; did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "");
			jpath_pop(&at, o2);
			goto out;
		}
		if (metric_index(sw->plot_y) < 0) {
			size_t o2 = jpath_key(&at, "y");
			const char *hint = suggest_name(sw->plot_y, metric_names);
			rc = jdoc_error(&doc, &at, d, "\"%s\" is not a metric (a CSV column such as cycles or hidden_fraction)%s%s%s",
					sw->plot_y, hint ? "; did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "");
			jpath_pop(&at, o2);
			goto out;
		}
		/* A part's header carries them, one line each. */
		if (!csv_safe(sw->plot_series, true) || !csv_safe(sw->xlabel, true) || !csv_safe(sw->ylabel, true)) {
			rc = jdoc_error(&doc, &at, d, "expected names and labels without control characters");
			goto out;
		}
		jpath_pop(&at, old);
	}
out:
	jdoc_free(&doc);
	return rc;
}

/* The value index of parameter k in run i (the last parameter varies fastest). */
int sweep_value_of(const struct sweep *sw, int run, int k)
{
	for (int j = sw->nvary - 1; j > k; j--)
		run /= sw->nvalues[j];
	return run % sw->nvalues[k];
}

static void run_one(const struct sweep *sw, int index, struct result *res)
{
	struct setting sets[SWEEP_MAX_FIXED + SWEEP_MAX_VARY];
	int n = 0;
	for (int i = 0; i < sw->nfixed; i++)
		sets[n++] = (struct setting){sw->fixed_name[i], sw->fixed_value[i]};
	for (int k = 0; k < sw->nvary; k++)
		sets[n++] = (struct setting){sw->vary_name[k], sw->vary_value[k][sweep_value_of(sw, index, k)]};
	struct experiment *e = calloc(1, sizeof *e);
	struct sim_report *r = calloc(1, sizeof *r);
	struct diag d = {0};
	memset(res, 0, sizeof *res);
	res->index = index;
	if (!e || !r) {
		res->status = 4;
		snprintf(res->error, sizeof res->error, "out of memory");
	} else {
		res->status = runner_run(sw->experiment, sets, n, 0, e, r, &d);
		if (res->status == 2)
			snprintf(res->error, sizeof res->error, "%.255s", d.msg);
		struct limit lim;
		limit_of(r, res->status, &lim);
#define METRIC_SET(name, label, expr) res->m[M_##name] = (expr);
		METRICS(METRIC_SET)
#undef METRIC_SET
		if (res->status == 2)
			res->m[M_binding_limit] = -1; /* did not run: no limit */
		for (int c = 0; c < STALL_COUNT; c++)
			res->m[M_STALLS + c] = (double)r->stalls[c];
	}
	if (e)
		experiment_free(e);
	free(e);
	free(r);
}

/* Which runs this invocation makes: every one, or one shard's. */
struct plan {
	int shard, nshards; /* nshards == 0: the whole sweep */
	int *runs_of;       /* the shard's run indices, increasing */
	int n;
};

static void progress(const struct sweep *sw, const struct plan *p, int done)
{
	if (!isatty(2))
		return;
	if (p->nshards)
		fprintf(stderr, "\rsmsim sweep %s, shard %d/%d: %d/%d runs%s", sw->name, p->shard, p->nshards, done, p->n,
			done == p->n ? "\n" : "");
	else
		fprintf(stderr, "\rsmsim sweep %s: %d/%d runs%s", sw->name, done, p->n, done == p->n ? "\n" : "");
}

/* Moves all len bytes through the pipe, across short transfers and signals; false at EOF or error. */
static bool transfer_all(int fd, void *buf, size_t len, bool out)
{
	char *b = buf;
	while (len) {
		ssize_t n = out ? write(fd, b, len) : read(fd, b, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		b += n;
		len -= (size_t)n;
	}
	return true;
}

/*
 * Runs every run of the plan into res[run index]; with jobs > 1 in worker
 * processes.  Work is handed out one run at a time: a worker reads the plan
 * position of its next run from its command pipe, and is sent another when
 * its result comes back, so a few long runs do not leave the other workers
 * idle (a fixed split by index would, when the costly values fall on one
 * worker's share).
 */
static int run_all(const struct sweep *sw, const struct plan *p, int jobs, struct result *res)
{
	if (jobs > p->n)
		jobs = p->n;
	if (jobs <= 1) {
		for (int i = 0; i < p->n; i++) {
			run_one(sw, p->runs_of[i], &res[p->runs_of[i]]);
			progress(sw, p, i + 1);
		}
		return 0;
	}
	int fds[MAX_WORKERS], cmd[MAX_WORKERS];
	pid_t pids[MAX_WORKERS];
	int started = 0, next = 0, bad = 0;
	for (int w = 0; w < jobs; w++) {
		int pr[2], c[2];
		if (pipe(pr))
			return -1;
		if (pipe(c)) {
			close(pr[0]);
			close(pr[1]);
			return -1;
		}
		fflush(NULL);
		pid_t parent = getpid(), pid = fork();
		if (pid < 0)
			return -1;
		if (pid == 0) {
			/* A killed sweep takes its workers with it, mid-run (they would finish a long run first). */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
				_exit(1);
			close(pr[0]);
			close(c[1]);
			for (int i = 0; i < w; i++)
				close(cmd[i]); /* the other workers' command pipes stay the parent's alone */
			int32_t pos;
			while (transfer_all(c[0], &pos, sizeof pos, false) && pos >= 0 && pos < p->n) {
				struct result r;
				run_one(sw, p->runs_of[pos], &r);
				if (!transfer_all(pr[1], &r, sizeof r, true))
					_exit(1);
			}
			_exit(0);
		}
		close(pr[1]);
		close(c[0]);
		fds[w] = pr[0];
		cmd[w] = c[1];
		pids[w] = pid;
		started++;
	}
	/* One run each to start with. */
	for (int w = 0; w < jobs; w++) {
		int32_t pos = next < p->n ? next++ : -1;
		if (!transfer_all(cmd[w], &pos, sizeof pos, true))
			bad = 1;
	}
	struct pollfd pfd[MAX_WORKERS];
	size_t got[MAX_WORKERS] = {0};
	struct result partial[MAX_WORKERS];
	int open = jobs, done = 0;
	while (open && !bad) {
		for (int w = 0; w < jobs; w++)
			pfd[w] = (struct pollfd){.fd = fds[w], .events = POLLIN};
		if (poll(pfd, (nfds_t)jobs, -1) < 0) {
			if (errno == EINTR)
				continue;
			bad = 1;
			break;
		}
		for (int w = 0; w < jobs; w++) {
			if (fds[w] < 0 || !(pfd[w].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(fds[w], (char *)&partial[w] + got[w], sizeof partial[w] - got[w]);
			if (n <= 0) {
				if (n < 0 && errno == EINTR)
					continue;
				close(fds[w]);
				fds[w] = -1;
				pfd[w].fd = -1;
				open--;
				continue;
			}
			got[w] += (size_t)n;
			if (got[w] == sizeof partial[w]) {
				got[w] = 0;
				if (partial[w].index >= 0 && partial[w].index < sw->runs) {
					res[partial[w].index] = partial[w];
					progress(sw, p, ++done);
				}
				/* Its next run, or -1: no more. */
				int32_t pos = next < p->n ? next++ : -1;
				if (cmd[w] >= 0 && !transfer_all(cmd[w], &pos, sizeof pos, true))
					bad = 1;
				if (pos < 0 && cmd[w] >= 0) {
					close(cmd[w]);
					cmd[w] = -1;
				}
			}
		}
	}
	for (int w = 0; w < started; w++) {
		if (cmd[w] >= 0)
			close(cmd[w]);
		if (fds[w] >= 0)
			close(fds[w]);
		int st;
		waitpid(pids[w], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad = 1;
	}
	return bad || done != p->n ? -1 : 0;
}

void sweep_write_columns(FILE *out, const struct sweep *sw)
{
	for (int k = 0; k < sw->nvary; k++)
		fprintf(out, "%s,", sw->vary_name[k]);
	fprintf(out, "status");
	for (int m = 0; m < M_STALLS; m++)
		fprintf(out, ",%s", metric_names[m]);
	for (int c = 0; c < STALL_COUNT; c++)
		fprintf(out, ",stall_%s", stall_key[c]);
	fputc('\n', out);
}

static void write_row(FILE *out, const struct sweep *sw, int run, const struct result *r)
{
	static const char *const st[] = {"ok", "?", "error", "deadlock", "limit"};
	for (int k = 0; k < sw->nvary; k++)
		fprintf(out, "%s,", sw->vary_value[k][sweep_value_of(sw, run, k)]);
	fprintf(out, "%s", r->status >= 0 && r->status <= 4 ? st[r->status] : "?");
	for (int m = 0; m < NMETRICS; m++) {
		double v = r->m[m];
		if (m == M_binding_limit)
			fprintf(out, ",%s", v >= 0 && v < 6 ? limit_resource_name[(int)v] : "none");
		else if (v < 9e15 && v > -9e15 && v == (double)(int64_t)v)
			fprintf(out, ",%lld", (long long)v);
		else
			fprintf(out, ",%.6f", v);
	}
	fputc('\n', out);
}

/* Names the launch and the shipped kernels give their parameters, as an axis says them. */
static const struct {
	const char *name, *label;
} param_labels[] = {
	{"stages", "pipeline stages (stages)"},
	{"k", "compute length k (dependent FMAs per element)"},
	{"batch_sz", "batches per block (batch_sz)"},
	{"divergence", "thread groups per warp, D (divergence)"},
	{"syncwarp", "__syncwarp before the commit (syncwarp: 0 no, 1 yes)"},
	{"per_group", "commits in divergent branches (per_group: 0 no, 1 yes)"},
	{"block_size", "threads per block (block_size)"},
	{"launch.block_size", "threads per block (block_size)"},
	{"blocks", "blocks resident on the SM (blocks)"},
	{"launch.blocks", "blocks resident on the SM (blocks)"},
	{"grid_blocks", "blocks in the grid (grid_blocks)"},
	{"launch.grid_blocks", "blocks in the grid (grid_blocks)"},
};

/* What the x axis says for a varied name: the plot file's xlabel, a known name, a machine field's unit. */
static void x_label(const struct sweep *sw, char *buf, size_t n)
{
	const char *name = sw->plot_x;
	if (sw->xlabel[0]) {
		snprintf(buf, n, "%s", sw->xlabel);
		return;
	}
	for (size_t i = 0; i < sizeof param_labels / sizeof param_labels[0]; i++)
		if (strcmp(param_labels[i].name, name) == 0) {
			snprintf(buf, n, "%s", param_labels[i].label);
			return;
		}
	if (strncmp(name, "machine.", 8) == 0) {
#define MACHINE_UNIT(f, t, dflt, lo, hi, unit)                   \
	if (strcmp(name + 8, #f) == 0) {                         \
		snprintf(buf, n, "%s (%.60s)", name, unit);      \
		return;                                          \
	}
		MACHINE_FIELDS(MACHINE_UNIT)
#undef MACHINE_UNIT
	}
	if (strncmp(name, "limit.", 6) == 0)
		snprintf(buf, n, "%s (limit)", name);
	else if (strncmp(name, "machine.", 8) == 0)
		snprintf(buf, n, "%s (machine setting)", name);
	else
		snprintf(buf, n, "%s (kernel parameter)", name);
}

/* What the y axis says for a metric: the plot file's ylabel, or the metric with its unit. */
static void y_label(const struct sweep *sw, char *buf, size_t n)
{
	int metric = metric_index(sw->plot_y);
	if (sw->ylabel[0])
		snprintf(buf, n, "%s", sw->ylabel);
	else if (metric >= 0 && metric < M_STALLS)
		snprintf(buf, n, "%s", metric_labels[metric]);
	else if (metric >= M_STALLS)
		snprintf(buf, n, "warp-cycles in %s (warp-cycles, all warps)", stall_key[metric - M_STALLS]);
	else
		snprintf(buf, n, "%s", sw->plot_y);
}

void sweep_axis_labels(const struct sweep *sw, char xl[SWEEP_LABEL_LEN], char yl[SWEEP_LABEL_LEN])
{
	x_label(sw, xl, SWEEP_LABEL_LEN);
	y_label(sw, yl, SWEEP_LABEL_LEN);
}

/* ORDER FILE: the files a part's fingerprint covers, in the order its header lists them. */
const char *const sweep_file_label[SWEEP_FILES] = {"sweep", "experiment", "machine", "kernel"};

/* What a part's header says about where it comes from (sweepint.h). */
struct fingerprint {
	char path[SWEEP_FILES][1024];
	uint64_t hash[SWEEP_FILES];
	uint64_t all;
};

/* FNV-1a, 64 bits: it tells versions of a file apart, it does not defend against forgery. */
static uint64_t fnv1a(uint64_t h, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

#define FNV_OFFSET 0xcbf29ce484222325ull

/* dir of file + rel, unless rel is absolute (as the experiment resolves its machine and kernel). */
static void resolve(const char *file, const char *rel, char *out, size_t outsz)
{
	const char *slash = strrchr(file, '/');
	if (rel[0] == '/' || !slash)
		snprintf(out, outsz, "%s", rel);
	else
		snprintf(out, outsz, "%.*s/%s", (int)(slash - file), file, rel);
}

/* Hashes the sweep file, its experiment and the machine and kernel files the experiment names. */
static int fingerprint(const char *file, const struct sweep *sw, struct fingerprint *fp, struct diag *d)
{
	struct jdoc doc;
	int rc = jdoc_load(sw->experiment, &doc, d);
	if (rc)
		return rc;
	struct jpath at;
	jpath_root(&at);
	const char *machine = NULL, *kernel = NULL;
	if ((rc = jdoc_string(&doc, doc.root, &at, "machine", true, &machine, d)) ||
	    (rc = jdoc_string(&doc, doc.root, &at, "kernel", true, &kernel, d))) {
		jdoc_free(&doc);
		return rc;
	}
	snprintf(fp->path[0], sizeof fp->path[0], "%s", file);
	snprintf(fp->path[1], sizeof fp->path[1], "%s", sw->experiment);
	resolve(sw->experiment, machine, fp->path[2], sizeof fp->path[2]);
	resolve(sw->experiment, kernel, fp->path[3], sizeof fp->path[3]);
	jdoc_free(&doc);
	for (int f = 0; f < SWEEP_FILES; f++) {
		size_t n;
		char *text = jdoc_read_file(fp->path[f], &n);
		if (!text)
			return diag_set(d, DIAG_INPUT, "%s: cannot read: %s", fp->path[f], strerror(errno));
		fp->hash[f] = fnv1a(FNV_OFFSET, text, n);
		free(text);
	}
	fp->all = sweep_fingerprint_of(SMSIM_VERSION, fp->hash);
	return 0;
}

uint64_t sweep_fingerprint_of(const char *smsim, const uint64_t hash[SWEEP_FILES])
{
	char summary[256];
	size_t len = (size_t)snprintf(summary, sizeof summary, "smsim %.64s\n", smsim);
	for (int f = 0; f < SWEEP_FILES; f++)
		len += (size_t)snprintf(summary + len, sizeof summary - len, "%s %016llx\n", sweep_file_label[f],
					(unsigned long long)hash[f]);
	return fnv1a(FNV_OFFSET, summary, len);
}

static void write_part_header(FILE *out, const struct sweep *sw, const struct plan *p, const struct fingerprint *fp)
{
	fprintf(out, SWEEP_PART_MAGIC "%d/%d\n# sweep: %s\n# runs: %d\n# values:", p->shard, p->nshards, sw->name, sw->runs);
	for (int k = 0; k < sw->nvary; k++)
		fprintf(out, " %d", sw->nvalues[k]);
	char xl[SWEEP_LABEL_LEN], yl[SWEEP_LABEL_LEN];
	sweep_axis_labels(sw, xl, yl);
	fprintf(out, "\n# plot x: %s\n# plot y: %s\n# plot x label: %s\n# plot y label: %s\n# fingerprint: %016llx\n# smsim: %s\n",
		sw->plot_x, sw->plot_y, xl, yl, (unsigned long long)fp->all, SMSIM_VERSION);
	for (int f = 0; f < SWEEP_FILES; f++) {
		fprintf(out, "# %s file: %016llx ", sweep_file_label[f], (unsigned long long)fp->hash[f]);
		for (const char *c = fp->path[f]; *c; c++) /* for a reader only: a line break must not end the line */
			fputc((unsigned char)*c < 0x20 ? '?' : *c, out);
		fputc('\n', out);
	}
}

/*
 * The plan's table as CSV text (caller frees): the whole sweep's, or a
 * part's with its header and each row's run index in front.  NULL when out
 * of memory.
 */
static char *table_text(const struct sweep *sw, const struct plan *p, const struct fingerprint *fp,
			const struct result *res)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (!out)
		return NULL;
	if (p->nshards) {
		write_part_header(out, sw, p, fp);
		fputs("run,", out);
	}
	sweep_write_columns(out, sw);
	for (int i = 0; i < p->n; i++) {
		if (p->nshards)
			fprintf(out, "%d,", p->runs_of[i]);
		write_row(out, sw, p->runs_of[i], &res[p->runs_of[i]]);
	}
	if (fclose(out) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

bool sweep_parse_shard(const char *s, int *shard, int *nshards)
{
	long v[2];
	for (int i = 0; i < 2; i++) {
		if (!isdigit((unsigned char)*s))
			return false;
		char *end;
		errno = 0;
		v[i] = strtol(s, &end, 10);
		if (errno || *end != (i == 0 ? '/' : '\0'))
			return false;
		s = end + 1;
	}
	if (v[1] < 1 || v[1] > SWEEP_MAX_SHARDS || v[0] >= v[1])
		return false;
	*shard = (int)v[0];
	*nshards = (int)v[1];
	return true;
}

/* --list: one line per run of the plan, "INDEX<TAB>NAME=VALUE<TAB>NAME=VALUE...". */
static void list_runs(FILE *out, const struct sweep *sw, const struct plan *p)
{
	for (int i = 0; i < p->n; i++) {
		fprintf(out, "%d", p->runs_of[i]);
		for (int k = 0; k < sw->nvary; k++)
			fprintf(out, "\t%s=%s", sw->vary_name[k], sw->vary_value[k][sweep_value_of(sw, p->runs_of[i], k)]);
		fputc('\n', out);
	}
}

int sweep_fill_text(FILE *out, void *text, struct diag *d)
{
	(void)d;
	fputs(text, out);
	return 0;
}

/* A sweep and its table, for drawing it into an output file. */
struct drawing {
	const struct sweep *sw;
	const char *table;
	const char *measured; /* --measured FILE.csv, or NULL */
};

static int fill_plot(FILE *out, void *ctx, struct diag *d)
{
	const struct drawing *t = ctx;
	return sweep_plot(out, t->sw, t->table, t->measured, d);
}

int cmd_sweep(int argc, char **argv, const char *self)
{
	(void)self;
	const char *file = NULL, *csv = NULL, *svg = NULL, *jarg = NULL, *shard_arg = NULL, *measured = NULL;
	bool list = false;
	struct plan plan = {0};
	for (int i = 0; i < argc; i++) {
		int got;
		if (strncmp(argv[i], "-j", 2) == 0 && argv[i][2] >= '0' && argv[i][2] <= '9') {
			jarg = argv[i] + 2;
		} else if (strcmp(argv[i], "--list") == 0) {
			list = true;
		} else if ((got = cli_value(argc, argv, &i, "sweep", "-j", &jarg)) ||
			   (got = cli_value(argc, argv, &i, "sweep", "--csv", &csv)) ||
			   (got = cli_value(argc, argv, &i, "sweep", "--svg", &svg)) ||
			   (got = cli_value(argc, argv, &i, "sweep", "--measured", &measured)) ||
			   (got = cli_value(argc, argv, &i, "sweep", "--shard", &shard_arg))) {
			if (got < 0)
				return 2;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_unknown_option("sweep", argv[i]);
		} else if (!file) {
			file = argv[i];
		} else {
			fprintf(stderr, "smsim sweep: one sweep file at a time (got %s and %s)\n", file, argv[i]);
			return 2;
		}
	}
	if (!file) {
		fprintf(stderr, "smsim sweep: which sweep? (smsim sweep configs/sweeps/NAME.json)\n");
		return 2;
	}
	char *end = NULL;
	long jobs = jarg ? strtol(jarg, &end, 10) : 1;
	if ((jarg && (!*jarg || *end)) || jobs < 1 || jobs > MAX_WORKERS) {
		fprintf(stderr, "smsim sweep: -j expects a number of workers from 1 to %d\n", MAX_WORKERS);
		return 2;
	}
	if (shard_arg && !sweep_parse_shard(shard_arg, &plan.shard, &plan.nshards)) {
		fprintf(stderr, "smsim sweep: --shard expects I/N, shard I of N counted from 0 (0 <= I < N <= %d), not \"%s\"\n",
			SWEEP_MAX_SHARDS, shard_arg);
		return 2;
	}
	if (shard_arg && svg) {
		fprintf(stderr, "smsim sweep: --svg draws the whole sweep, and --shard runs only part of it: merge the "
				"parts first (smsim merge PART.csv... --svg FILE, or smsim plot SWEEP.json MERGED.csv --svg FILE)\n");
		return 2;
	}
	if (measured && !svg) {
		fprintf(stderr, "smsim sweep: --measured adds a measured series to the picture; give --svg FILE too\n");
		return 2;
	}
	if (csv && svg && outfile_is_stdout(csv) && outfile_is_stdout(svg)) {
		fprintf(stderr, "smsim sweep: --csv and --svg cannot both be - (stdout)\n");
		return 2;
	}
	if (csv && svg && !strcmp(csv, svg)) { /* the plot would replace the table it was drawn from */
		fprintf(stderr, "smsim sweep: --csv and --svg name the same file (%s)\n", csv);
		return 2;
	}
	/* stdout carries one thing: with --svg -, the CSV goes to --csv's file, or to stderr. */
	if (!csv)
		csv = svg && outfile_is_stdout(svg) ? NULL : "-";
	struct sweep *sw = calloc(1, sizeof *sw);
	struct diag d = {0};
	struct fingerprint fp = {0};
	struct result *res = NULL;
	char *text = NULL;
	int rc = 2;
	if (!sw || sweep_load(file, sw, &d)) {
		fprintf(stderr, "smsim: %s\n", sw ? d.msg : "out of memory");
		goto out;
	}
	/* Round robin over the fixed run order: shards differ by at most one run, and each is the same every time. */
	int step = plan.nshards ? plan.nshards : 1;
	plan.runs_of = calloc((size_t)sw->runs, sizeof *plan.runs_of);
	res = calloc((size_t)sw->runs, sizeof *res);
	if (!plan.runs_of || !res) {
		fprintf(stderr, "smsim: out of memory\n");
		rc = 4;
		goto out;
	}
	for (int i = plan.shard; i < sw->runs; i += step)
		plan.runs_of[plan.n++] = i;
	if (list) {
		list_runs(stdout, sw, &plan);
		rc = fflush(stdout) != 0 || ferror(stdout) ? 2 : 0;
		if (rc)
			fprintf(stderr, "smsim: error writing to stdout\n");
		goto out;
	}
	if (plan.nshards && fingerprint(file, sw, &fp, &d)) {
		fprintf(stderr, "smsim: sweep %s: %s\n", sw->name, d.msg);
		goto out;
	}
	if (run_all(sw, &plan, (int)jobs, res)) {
		fprintf(stderr, "smsim: sweep %s: a worker failed\n", sw->name);
		rc = 4;
		goto out;
	}
	for (int i = 0; i < plan.n; i++)
		if (res[plan.runs_of[i]].status == 2) {
			fprintf(stderr, "smsim: sweep %s, run %d: %s\n", sw->name, plan.runs_of[i], res[plan.runs_of[i]].error);
			goto out;
		}
	/* A run that deadlocked or hit a limit is a row with its status, said once here too (its cycles are partial). */
	int unfinished = 0, first_unfinished = -1;
	for (int i = 0; i < plan.n; i++)
		if (res[plan.runs_of[i]].status != 0 && unfinished++ == 0)
			first_unfinished = plan.runs_of[i];
	if (unfinished)
		fprintf(stderr,
			"smsim: sweep %s: %d of %d runs did not finish (the first, run %d: %s); their rows say so in the "
			"status column, their cycles are where they stopped\n",
			sw->name, unfinished, plan.n, first_unfinished,
			res[first_unfinished].status == 3 ? "deadlock" : "a limit, raised with --set limit.NAME=N");
	text = table_text(sw, &plan, &fp, res);
	if (!text) {
		fprintf(stderr, "smsim: out of memory for the table\n");
		rc = 4;
		goto out;
	}
	rc = 0;
	if (csv)
		rc = outfile_write(csv, sweep_fill_text, text, &d);
	else
		fputs(text, stderr);
	if (!rc && svg) {
		struct drawing t = {sw, text, measured};
		rc = outfile_write(svg, fill_plot, &t, &d);
	}
	if (rc)
		fprintf(stderr, "smsim: %s\n", d.msg);
out:
	free(text);
	free(res);
	free(plan.runs_of);
	free(sw);
	return rc;
}

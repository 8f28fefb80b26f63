/*
 * sweep: the cartesian product of named parameter lists, run in worker
 * processes, one CSV row per run in a stable order — the same bytes
 * whatever -j — and optionally a line plot.
 *
 * SWEEP.json: {"sweep", "description", "experiment", "set": {...},
 *              "vary": {"NAME": [values...], ...},
 *              "plot": {"x": NAME, "y": METRIC, "series": NAME}}
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../isa/jdoc.h"
#include "../isa/suggest.h"
#include "cli.h"
#include "commands.h"
#include "machine.h"
#include "outfile.h"
#include "runner.h"
#include "svg.h"

#define MAX_VARY 8
#define MAX_VALUES 64
#define MAX_FIXED 64
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
	X(warp_instructions, "warp-instructions issued (count)", (double)r->warp_insts)

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

struct sweep {
	char name[128];
	char experiment[1024];
	char fixed_name[MAX_FIXED][64], fixed_value[MAX_FIXED][128];
	int nfixed;
	char vary_name[MAX_VARY][64];
	char vary_value[MAX_VARY][MAX_VALUES][64];
	int nvalues[MAX_VARY];
	int nvary;
	char plot_x[64], plot_y[64], plot_series[64];
	char xlabel[128], ylabel[128]; /* the plot file's own axis titles; "" for the built-in ones */
	int runs;
};

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

static int load_sweep(const char *file, struct sweep *sw, struct diag *d)
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
	snprintf(sw->name, sizeof sw->name, "%s", name);
	const char *slash = strrchr(file, '/');
	if (exp[0] == '/' || !slash)
		snprintf(sw->experiment, sizeof sw->experiment, "%s", exp);
	else
		snprintf(sw->experiment, sizeof sw->experiment, "%.*s/%s", (int)(slash - file), file, exp);
	const cJSON *set = cJSON_GetObjectItemCaseSensitive(doc.root, "set");
	for (const cJSON *s = set ? set->child : NULL; s && sw->nfixed < MAX_FIXED; s = s->next) {
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
	if (!cJSON_IsObject(vary) || !vary->child || cJSON_GetArraySize(vary) > MAX_VARY) {
		rc = jdoc_error(&doc, &at, d, "expected an object of 1 to %d parameter lists", MAX_VARY);
		goto out;
	}
	sw->runs = 1;
	for (const cJSON *v = vary->child; v; v = v->next) {
		size_t o2 = jpath_key(&at, v->string);
		if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1 || cJSON_GetArraySize(v) > MAX_VALUES) {
			rc = jdoc_error(&doc, &at, d, "expected a list of 1 to %d values", MAX_VALUES);
			goto out;
		}
		int k = sw->nvary++;
		snprintf(sw->vary_name[k], 64, "%s", v->string);
		for (const cJSON *x = v->child; x; x = x->next) {
			if (word(x, sw->vary_value[k][sw->nvalues[k]], 64)) {
				rc = jdoc_error(&doc, &at, d, "expected numbers or strings");
				goto out;
			}
			sw->nvalues[k]++;
		}
		sw->runs *= sw->nvalues[k];
		jpath_pop(&at, o2);
	}
	jpath_pop(&at, old);
	if (sw->runs > 100000) {
		rc = jdoc_error(&doc, &at, d, "the sweep has %d runs; the limit is 100000", sw->runs);
		goto out;
	}
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
		/* Checked here, where the file can be pointed at, not after the runs. */
		if (vary_index(sw, sw->plot_x) < 0) {
			size_t o2 = jpath_key(&at, "x");
			const char *names[MAX_VARY + 1];
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
		jpath_pop(&at, old);
	}
out:
	jdoc_free(&doc);
	return rc;
}

/* The value index of parameter k in run i (the last parameter varies fastest). */
static int value_of(const struct sweep *sw, int run, int k)
{
	for (int j = sw->nvary - 1; j > k; j--)
		run /= sw->nvalues[j];
	return run % sw->nvalues[k];
}

static void run_one(const struct sweep *sw, int index, struct result *res)
{
	struct setting sets[MAX_FIXED + MAX_VARY];
	int n = 0;
	for (int i = 0; i < sw->nfixed; i++)
		sets[n++] = (struct setting){sw->fixed_name[i], sw->fixed_value[i]};
	for (int k = 0; k < sw->nvary; k++)
		sets[n++] = (struct setting){sw->vary_name[k], sw->vary_value[k][value_of(sw, index, k)]};
	struct experiment *e = calloc(1, sizeof *e);
	struct sim_report *r = calloc(1, sizeof *r);
	struct diag d = {0};
	memset(res, 0, sizeof *res);
	res->index = index;
	if (!e || !r) {
		res->status = 4;
		snprintf(res->error, sizeof res->error, "out of memory");
	} else {
		res->status = runner_run(sw->experiment, sets, n, false, e, r, &d);
		if (res->status == 2)
			snprintf(res->error, sizeof res->error, "%.255s", d.msg);
#define METRIC_SET(name, label, expr) res->m[M_##name] = (expr);
		METRICS(METRIC_SET)
#undef METRIC_SET
		for (int c = 0; c < STALL_COUNT; c++)
			res->m[M_STALLS + c] = (double)r->stalls[c];
	}
	if (e)
		experiment_free(e);
	free(e);
	free(r);
}

static void progress(const struct sweep *sw, int done)
{
	if (isatty(2))
		fprintf(stderr, "\rsmsim sweep %s: %d/%d runs%s", sw->name, done, sw->runs, done == sw->runs ? "\n" : "");
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
 * Runs every index; with jobs > 1 in worker processes.  Work is handed out
 * one run at a time: a worker reads the index of its next run from its
 * command pipe, and is sent another when its result comes back, so a few
 * long runs do not leave the other workers idle (a fixed split by index
 * would, when the costly values fall on one worker's share).
 */
static int run_all(const struct sweep *sw, int jobs, struct result *res)
{
	if (jobs > sw->runs)
		jobs = sw->runs;
	if (jobs <= 1) {
		for (int i = 0; i < sw->runs; i++) {
			run_one(sw, i, &res[i]);
			progress(sw, i + 1);
		}
		return 0;
	}
	int fds[MAX_WORKERS], cmd[MAX_WORKERS];
	pid_t pids[MAX_WORKERS];
	int started = 0, next = 0, bad = 0;
	for (int w = 0; w < jobs; w++) {
		int p[2], c[2];
		if (pipe(p))
			return -1;
		if (pipe(c)) {
			close(p[0]);
			close(p[1]);
			return -1;
		}
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0)
			return -1;
		if (pid == 0) {
			close(p[0]);
			close(c[1]);
			for (int i = 0; i < w; i++)
				close(cmd[i]); /* the other workers' command pipes stay the parent's alone */
			int32_t index;
			while (transfer_all(c[0], &index, sizeof index, false) && index >= 0) {
				struct result r;
				run_one(sw, index, &r);
				if (!transfer_all(p[1], &r, sizeof r, true))
					_exit(1);
			}
			_exit(0);
		}
		close(p[1]);
		close(c[0]);
		fds[w] = p[0];
		cmd[w] = c[1];
		pids[w] = pid;
		started++;
	}
	/* One run each to start with. */
	for (int w = 0; w < jobs; w++) {
		int32_t index = next < sw->runs ? next++ : -1;
		if (!transfer_all(cmd[w], &index, sizeof index, true))
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
					progress(sw, ++done);
				}
				/* Its next run, or -1: no more. */
				int32_t index = next < sw->runs ? next++ : -1;
				if (cmd[w] >= 0 && !transfer_all(cmd[w], &index, sizeof index, true))
					bad = 1;
				if (index < 0 && cmd[w] >= 0) {
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
	return bad || done != sw->runs ? -1 : 0;
}

static void write_csv(FILE *out, const struct sweep *sw, const struct result *res)
{
	for (int k = 0; k < sw->nvary; k++)
		fprintf(out, "%s,", sw->vary_name[k]);
	fprintf(out, "status");
	for (int m = 0; m < M_STALLS; m++)
		fprintf(out, ",%s", metric_names[m]);
	for (int c = 0; c < STALL_COUNT; c++)
		fprintf(out, ",stall_%s", stall_key[c]);
	fputc('\n', out);
	static const char *const st[] = {"ok", "?", "error", "deadlock", "limit"};
	for (int i = 0; i < sw->runs; i++) {
		for (int k = 0; k < sw->nvary; k++)
			fprintf(out, "%s,", sw->vary_value[k][value_of(sw, i, k)]);
		fprintf(out, "%s", res[i].status >= 0 && res[i].status <= 4 ? st[res[i].status] : "?");
		for (int m = 0; m < NMETRICS; m++) {
			double v = res[i].m[m];
			if (v < 9e15 && v > -9e15 && v == (double)(int64_t)v)
				fprintf(out, ",%lld", (long long)v);
			else
				fprintf(out, ",%.6f", v);
		}
		fputc('\n', out);
	}
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
		snprintf(buf, n, "%s (%s)", name, unit);         \
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
static void y_label(const struct sweep *sw, int metric, char *buf, size_t n)
{
	if (sw->ylabel[0])
		snprintf(buf, n, "%s", sw->ylabel);
	else if (metric < M_STALLS)
		snprintf(buf, n, "%s", metric_labels[metric]);
	else
		snprintf(buf, n, "warp-cycles in %s (warp-cycles, all warps)", stall_key[metric - M_STALLS]);
}

/* How much of an axis label comes before its unit ("over-wait per wait (cycles)": 18). */
static int unit_free(const char *label)
{
	size_t n = strcspn(label, "(");
	while (n && label[n - 1] == ' ')
		n--;
	return n ? (int)n : (int)strlen(label);
}

/* A sweep's results, for the writers of its outputs. */
struct table {
	const struct sweep *sw;
	const struct result *res;
};

/* One series per combination of every varied parameter except x. */
static int fill_plot(FILE *out, void *ctx, struct diag *d)
{
	const struct sweep *sw = ((const struct table *)ctx)->sw;
	const struct result *res = ((const struct table *)ctx)->res;
	int xk = vary_index(sw, sw->plot_x), ym = metric_index(sw->plot_y);
	if (xk < 0 || ym < 0)
		return diag_set(d, DIAG_INPUT, "sweep %s: plot x \"%s\" must be a varied parameter and y \"%s\" a metric",
				sw->name, sw->plot_x, sw->plot_y);
	int nseries = sw->runs / sw->nvalues[xk];
	struct svg_series *series = calloc((size_t)nseries, sizeof *series);
	double *xs = calloc((size_t)sw->runs, sizeof *xs), *ys = calloc((size_t)sw->runs, sizeof *ys);
	if (!series || !xs || !ys) {
		free(series);
		free(xs);
		free(ys);
		return diag_set(d, DIAG_LIMIT, "out of memory for the plot");
	}
	int ns = 0;
	for (int i = 0; i < sw->runs; i++) {
		if (value_of(sw, i, xk) != 0)
			continue;
		struct svg_series *s = &series[ns++];
		s->x = xs + (size_t)(ns - 1) * (size_t)sw->nvalues[xk];
		s->y = ys + (size_t)(ns - 1) * (size_t)sw->nvalues[xk];
		size_t len = 0;
		for (int k = 0; k < sw->nvary; k++)
			if (k != xk && len < sizeof s->name)
				len += (size_t)snprintf(s->name + len, sizeof s->name - len, "%s%s=%s", len ? ", " : "",
							sw->vary_name[k], sw->vary_value[k][value_of(sw, i, k)]);
		/* Runs of this series: same values for every other parameter. */
		int stride = 1;
		for (int j = sw->nvary - 1; j > xk; j--)
			stride *= sw->nvalues[j];
		for (int v = 0; v < sw->nvalues[xk]; v++) {
			const struct result *r = &res[i + v * stride];
			((double *)s->x)[s->n] = atof(sw->vary_value[xk][v]);
			((double *)s->y)[s->n] = r->m[ym];
			s->n++;
		}
	}
	char title[400], xl[160], yl[160];
	x_label(sw, xl, sizeof xl);
	y_label(sw, ym, yl, sizeof yl);
	/* "overwait: over-wait per wait against thread groups per warp, D": the labels less their units */
	snprintf(title, sizeof title, "%.100s: %.*s against %.*s", sw->name, unit_free(yl), yl, unit_free(xl), xl);
	svg_plot(out, title, xl, yl, series, ns);
	free(series);
	free(xs);
	free(ys);
	return 0;
}

static int fill_csv(FILE *out, void *ctx, struct diag *d)
{
	(void)d;
	const struct table *t = ctx;
	write_csv(out, t->sw, t->res);
	return 0;
}

int cmd_sweep(int argc, char **argv, const char *self)
{
	(void)self;
	const char *file = NULL, *csv = NULL, *svg = NULL, *jarg = NULL;
	for (int i = 0; i < argc; i++) {
		int got;
		if (strncmp(argv[i], "-j", 2) == 0 && argv[i][2] >= '0' && argv[i][2] <= '9') {
			jarg = argv[i] + 2;
		} else if ((got = cli_value(argc, argv, &i, "sweep", "-j", &jarg)) ||
			   (got = cli_value(argc, argv, &i, "sweep", "--csv", &csv)) ||
			   (got = cli_value(argc, argv, &i, "sweep", "--svg", &svg))) {
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
	if (csv && svg && outfile_is_stdout(csv) && outfile_is_stdout(svg)) {
		fprintf(stderr, "smsim sweep: --csv and --svg cannot both be - (stdout)\n");
		return 2;
	}
	/* stdout carries one thing: with --svg -, the CSV goes to --csv's file, or to stderr. */
	if (!csv)
		csv = svg && outfile_is_stdout(svg) ? NULL : "-";
	struct sweep *sw = calloc(1, sizeof *sw);
	struct diag d = {0};
	if (!sw || load_sweep(file, sw, &d)) {
		fprintf(stderr, "smsim: %s\n", sw ? d.msg : "out of memory");
		free(sw);
		return 2;
	}
	if (jobs > sw->runs)
		jobs = sw->runs;
	struct result *res = calloc((size_t)sw->runs, sizeof *res);
	int rc = res ? run_all(sw, (int)jobs, res) : -1;
	if (rc) {
		fprintf(stderr, "smsim: sweep %s: a worker failed\n", sw->name);
		rc = 4;
		goto out;
	}
	for (int i = 0; i < sw->runs; i++)
		if (res[i].status == 2) {
			fprintf(stderr, "smsim: sweep %s, run %d: %s\n", sw->name, i, res[i].error);
			rc = 2;
			goto out;
		}
	struct table t = {sw, res};
	if (csv)
		rc = outfile_write(csv, fill_csv, &t, &d);
	else
		write_csv(stderr, sw, res);
	if (!rc && svg)
		rc = outfile_write(svg, fill_plot, &t, &d);
	if (rc)
		fprintf(stderr, "smsim: %s\n", d.msg);
out:
	free(res);
	free(sw);
	return rc;
}

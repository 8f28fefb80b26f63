/*
 * validate: the simulator against the hardware reference traces.
 *
 * Every row of the reference CSVs (traces/h100/pipelines.csv and
 * validation.csv: a kernel at a launch, input source and parameters,
 * measured on the H100) is simulated with the same settings; the table
 * shows measured and predicted cycles per batch and the error, then the
 * mean absolute error per family (kernel x blocks per SM) and overall, and
 * the pairs of designs the model ranks differently from the hardware.
 * Exit status 1 past --max-error, --max-family-error (percent) or, with
 * --require-ranking, on a mis-ranked pair.
 *
 * A CSV with a "class" column (traces/h100/ncu_limits.csv: Nsight Compute's
 * reading of what binds a configuration, tests/hw/ncu_limits.py) is read
 * as binding-limit rows instead: each is simulated and smsim's binding limit
 * (sim/out/limit.h) set beside ncu's class; the agreement counts the rows
 * that name ncu's class, and apart those that name the class ncu_limits.py
 * also accepts near a threshold.  Exit status 1 when the agreement (class or
 * accepted neighbour) is below --min-limit-agreement (percent).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../isa/jdoc.h"
#include "cli.h"
#include "commands.h"
#include "limit.h"
#include "runner.h"

#define MAX_ROWS 2048
#define MAX_SETS 24 /* what a row sets itself: launch, source, its kernel's parameters */
#define MAX_EXTRA_SETS 64
#define MAX_FILES 8
#define MAX_LIMIT_ROWS 256

/*
 * A row of a reference CSV: the kernel, the launch (block_size, blocks_per_sm,
 * grid_blocks), the input source, the kernel's parameters (every other
 * column that is not a measurement) and cycles_per_batch_median.
 */
struct row {
	const char *file; /* the reference CSV and its line, for messages */
	int line;
	char kernel[64], source[8];
	char names[MAX_SETS][32], values[MAX_SETS][32];
	int nsets;
	int block_size, blocks, k, batch_sz;
	char workload[64]; /* the other workload columns (workload_column), name=value each */
	char design[96]; /* kernel and the parameters that are not the shared conditions */
	double measured, predicted;
	int status;
};

/* Columns that describe the measurement, not the run. */
static bool measurement_column(const char *c)
{
	static const char *const skip[] = {"reps", "block_cycles_median", "mismatches", "resident_check", "source",
					   "kernel", "blocks_per_sm", "block_size", "grid_blocks", NULL};
	if (!strncmp(c, "cycles_per_batch", 16))
		return true;
	for (int i = 0; skip[i]; i++)
		if (!strcmp(c, skip[i]))
			return true;
	return false;
}

/*
 * Columns that say what work a run does, not how it is designed: two rows
 * are two designs to rank only where these agree.  k and R (the GEMM's
 * repeats of each MMA) are compute per batch, divergence the warp's split,
 * dram the GEMM's input (the source column again), batch_sz the length.
 */
static bool workload_column(const char *c)
{
	static const char *const names[] = {"k", "batch_sz", "R", "divergence", "dram", NULL};
	for (int i = 0; names[i]; i++)
		if (!strcmp(c, names[i]))
			return true;
	return false;
}

/* A cell as a finite number, all of it (atof took "nan", "inf", "1e999" and "12abc"). */
static bool cell_number(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return false;
	*out = v;
	return true;
}

/* A cell as a decimal integer, all of it. */
static bool cell_int(const char *s, int *out)
{
	const char *digits = s + (*s == '-' || *s == '+');
	if (!isdigit((unsigned char)*digits))
		return false;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (*end || errno || v < INT_MIN || v > INT_MAX)
		return false;
	*out = (int)v;
	return true;
}

/*
 * The header's problems that the rows would only show later as a run that
 * cannot start: a name twice, a quoted field (the CSV is read unquoted).
 */
static int check_header(char *const *f, int nf, struct diag *d, const char *file)
{
	for (int i = 0; i < nf; i++) {
		if (f[i][0] == '"')
			return -diag_set(d, DIAG_INPUT, "%s:1: column %d is quoted (%s); expected plain CSV, no quotes",
					 file, i + 1, f[i]);
		for (int j = 0; j < i; j++)
			if (!strcmp(f[i], f[j]))
				return -diag_set(d, DIAG_INPUT, "%s:1: column %s appears twice (columns %d and %d)", file,
						 f[i], j + 1, i + 1);
	}
	return 0;
}

/* The row's source: the validation set's two inputs. */
static int check_source(const char *src, struct diag *d, const char *file, int line)
{
	if (strcmp(src, "L2") && strcmp(src, "DRAM"))
		return -diag_set(d, DIAG_INPUT, "%s:%d: source \"%s\": expected L2 or DRAM", file, line, src);
	return 0;
}

static int set_of(struct row *r, const char *name, const char *value)
{
	if (r->nsets == MAX_SETS)
		return -1;
	snprintf(r->names[r->nsets], 32, "%.31s", name);
	snprintf(r->values[r->nsets], 32, "%.31s", value);
	r->nsets++;
	return 0;
}

static int parse(char *text, struct row *rows, int have, int max, struct diag *d, const char *file)
{
	int n = have, line = 0, ncols = 0, col_kernel = -1, col_src = -1, col_cpb = -1, col_span = -1;
	char *hdr[32];
	for (char *l = strtok(text, "\r\n"); l; l = strtok(NULL, "\r\n")) {
		line++;
		char *f[32];
		int nf = cli_split_csv(l, f, 32);
		if (line == 1) {
			ncols = nf;
			if (check_header(f, nf, d, file))
				return -1;
			for (int i = 0; i < nf; i++) {
				hdr[i] = f[i];
				if (!strcmp(f[i], "kernel"))
					col_kernel = i;
				else if (!strcmp(f[i], "source"))
					col_src = i;
				else if (!strcmp(f[i], "cycles_per_batch_median"))
					col_cpb = i;
				else if (!strcmp(f[i], "cycles_per_batch_sm_span_median"))
					col_span = i;
			}
			if (col_kernel < 0 || col_src < 0 || col_cpb < 0)
				return -diag_set(d, DIAG_INPUT,
						 "%s:1: expected columns kernel, source, cycles_per_batch_median (and the "
						 "launch and the kernel's parameters)",
						 file);
			continue;
		}
		if (nf != ncols || n >= max)
			return -diag_set(d, DIAG_INPUT, "%s:%d: expected %d columns", file, line, ncols);
		struct row *r = &rows[n++];
		memset(r, 0, sizeof *r);
		r->file = file;
		r->line = line;
		snprintf(r->kernel, sizeof r->kernel, "%.63s", f[col_kernel]);
		snprintf(r->source, sizeof r->source, "%.7s", f[col_src]);
		if (check_source(f[col_src], d, file, line))
			return -1;
		r->blocks = 1;
		/*
		 * smsim's cycles run from the SM's first issue to its last block's end:
		 * with several blocks per SM, whose times spread widely on the H100, the
		 * like figure is the SM's span (first block start to last block end).
		 */
		int mc = col_span >= 0 ? col_span : col_cpb;
		if (!cell_number(f[mc], &r->measured))
			return -diag_set(d, DIAG_INPUT, "%s:%d: %s is \"%s\"; expected a finite number of cycles", file,
					 line, hdr[mc], f[mc]);
		snprintf(r->design, sizeof r->design, "%.60s", r->kernel);
		for (int i = 0; i < nf; i++) {
			const char *c = hdr[i];
			int *to_int = !strcmp(c, "block_size")	   ? &r->block_size
				      : !strcmp(c, "blocks_per_sm") ? &r->blocks
				      : !strcmp(c, "k")		   ? &r->k
				      : !strcmp(c, "batch_sz")	   ? &r->batch_sz
								   : NULL;
			if (to_int && !cell_int(f[i], to_int))
				return -diag_set(d, DIAG_INPUT, "%s:%d: %s is \"%s\"; expected a decimal integer", file, line,
						 c, f[i]);
			if (!strcmp(c, "grid_blocks") && set_of(r, "grid_blocks", f[i]))
				return -diag_set(d, DIAG_INPUT, "%s:%d: too many columns", file, line);
			if (measurement_column(c))
				continue;
			if (set_of(r, c, f[i]))
				return -diag_set(d, DIAG_INPUT, "%s:%d: too many columns", file, line);
			char *to = workload_column(c) ? r->workload : r->design;
			size_t cap = workload_column(c) ? sizeof r->workload : sizeof r->design;
			if (strcmp(c, "k") && strcmp(c, "batch_sz"))
				snprintf(to + strlen(to), cap - strlen(to), " %s=%s", c, f[i]);
		}
		if (r->measured <= 0 || r->batch_sz <= 0 || r->block_size <= 0 || r->blocks <= 0)
			return -diag_set(d, DIAG_INPUT,
					 "%s:%d: expected positive cycles_per_batch_median, batch_sz, block_size and "
					 "blocks_per_sm",
					 file, line);
	}
	return n;
}

/* A row of ncu_limits.csv: the configuration, ncu's class and its accepted neighbours, and smsim's limit. */
struct limit_row {
	const char *file; /* the CSV and its line, for messages */
	int line;
	char kernel[64], source[8];
	char names[MAX_SETS][32], values[MAX_SETS][32];
	int nsets;
	char ncu_class[24], also[64], ncu_top[32];
	double ncu_issue, ncu_dram, ncu_pipes;
	char stall[3][32]; /* ncu's three largest stalls (stall_1..3), per issued instruction; "" when absent */
	double stall_per_issue[3];
	struct limit lim;
	int status;
};

static bool limit_file(const char *text)
{
	const char *nl = strchr(text, '\n');
	size_t n = nl ? (size_t)(nl - text) : strlen(text);
	for (const char *p = text; p && p < text + n; p = strchr(p, ',')) {
		p += *p == ',';
		if (!strncmp(p, "class,", 6))
			return true;
	}
	return false;
}

/* The configuration columns of ncu_limits.csv: they are --set as they are, the kernel's own params only. */
static bool limit_config_column(const char *c)
{
	static const char *const cfg[] = {"stages", "block_size", "blocks_per_sm", "k", "batch_sz", "divergence",
					  "per_group", "grid", NULL};
	for (int i = 0; cfg[i]; i++)
		if (!strcmp(c, cfg[i]))
			return true;
	return false;
}

static int parse_limits(char *text, struct limit_row *rows, int max, struct diag *d, const char *file)
{
	int n = 0, line = 0, ncols = 0;
	char *hdr[32];
	int col[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
	static const char *const need[] = {"kernel", "source", "class", "also_accepted", "issue_per_scheduler",
					   "dram_pct", "mem_pipes_pct", "top_stall"};
	for (char *l = strtok(text, "\r\n"); l; l = strtok(NULL, "\r\n")) {
		line++;
		char *f[32];
		int nf = cli_split_csv(l, f, 32);
		if (line == 1) {
			ncols = nf;
			if (check_header(f, nf, d, file))
				return -1;
			for (int i = 0; i < nf; i++) {
				hdr[i] = f[i];
				for (int j = 0; j < 8; j++)
					if (!strcmp(f[i], need[j]))
						col[j] = i;
			}
			for (int j = 0; j < 8; j++)
				if (col[j] < 0)
					return -diag_set(d, DIAG_INPUT, "%s:1: a binding-limit CSV needs the column %s", file,
							 need[j]);
			continue;
		}
		if (nf != ncols || n >= max)
			return -diag_set(d, DIAG_INPUT, "%s:%d: expected %d columns", file, line, ncols);
		struct limit_row *r = &rows[n++];
		memset(r, 0, sizeof *r);
		r->file = file;
		r->line = line;
		snprintf(r->kernel, sizeof r->kernel, "%.63s", f[col[0]]);
		snprintf(r->source, sizeof r->source, "%.7s", f[col[1]]);
		if (check_source(f[col[1]], d, file, line))
			return -1;
		snprintf(r->ncu_class, sizeof r->ncu_class, "%.23s", f[col[2]]);
		snprintf(r->also, sizeof r->also, "%.63s", f[col[3]]);
		double *num[3] = {&r->ncu_issue, &r->ncu_dram, &r->ncu_pipes};
		for (int j = 0; j < 3; j++)
			if (!cell_number(f[col[4 + j]], num[j]))
				return -diag_set(d, DIAG_INPUT, "%s:%d: %s is \"%s\"; expected a finite number", file, line,
						 need[4 + j], f[col[4 + j]]);
		snprintf(r->ncu_top, sizeof r->ncu_top, "%.31s", f[col[7]]);
		if (limit_parse(r->ncu_class) < 0)
			return -diag_set(d, DIAG_INPUT, "%s:%d: class \"%s\" is not a binding limit", file, line,
					 r->ncu_class);
		for (int i = 0; i < nf; i++) {
			for (int j = 0; j < 3; j++) {
				char name[24];
				snprintf(name, sizeof name, "stall_%d", j + 1);
				if (!strcmp(hdr[i], name))
					snprintf(r->stall[j], sizeof r->stall[j], "%.31s", f[i]);
				snprintf(name, sizeof name, "stall_%d_per_issue", j + 1);
				if (!strcmp(hdr[i], name) && !cell_number(f[i], &r->stall_per_issue[j]))
					return -diag_set(d, DIAG_INPUT, "%s:%d: %s is \"%s\"; expected a finite number", file,
							 line, name, f[i]);
			}
			if (!limit_config_column(hdr[i]))
				continue;
			const char *name = !strcmp(hdr[i], "blocks_per_sm") ? "blocks"
					   : !strcmp(hdr[i], "grid")        ? "grid_blocks"
									    : hdr[i];
			if (r->nsets == MAX_SETS)
				return -diag_set(d, DIAG_INPUT, "%s:%d: too many columns", file, line);
			snprintf(r->names[r->nsets], 32, "%.31s", name);
			snprintf(r->values[r->nsets], 32, "%.31s", f[i]);
			r->nsets++;
		}
	}
	return n;
}

static bool kernel_has_param(const struct experiment *e, const char *name)
{
	if (!strcmp(name, "blocks") || !strcmp(name, "grid_blocks") || !strcmp(name, "block_size"))
		return true;
	for (int i = 0; i < e->kernel.nparams; i++)
		if (!strcmp(e->kernel.params[i].name, name))
			return true;
	return false;
}

static void simulate_limit(const char *configs, struct limit_row *r, const struct setting *extra, int nextra)
{
	char file[1200];
	snprintf(file, sizeof file, "%.1000s/experiments/%.63s.json", configs, r->kernel);
	/* as the cycle rows: the machine as calibrated, the experiment's machine_set what-ifs left out */
	struct setting sets[MAX_SETS + 2 + MAX_EXTRA_SETS] = {
		{"machine_set", "none"},
		{"machine.l2_hit_fraction", strcmp(r->source, "L2") == 0 ? "1" : "0"},
	};
	int n = 2;
	struct experiment *e = calloc(1, sizeof *e);
	struct sim_report *rep = calloc(1, sizeof *rep);
	struct diag d;
	if (!e || !rep) {
		r->status = 4;
		goto out;
	}
	/* Columns that are not the kernel's params (divergence for the examples) are the CSV's, not the run's. */
	if ((r->status = experiment_load(file, NULL, 0, e, &d)) != 0) {
		fprintf(stderr, "smsim: %s:%d: kernel %s: %s\n", r->file, r->line, r->kernel, d.msg);
		goto out;
	}
	for (int i = 0; i < r->nsets; i++)
		if (kernel_has_param(e, r->names[i]))
			sets[n++] = (struct setting){r->names[i], r->values[i]};
	experiment_free(e);
	memset(e, 0, sizeof *e);
	for (int i = 0; i < nextra; i++)
		sets[n++] = extra[i];
	r->status = runner_run(file, sets, n, 0, e, rep, &d);
	if (r->status)
		fprintf(stderr, "smsim: %s:%d: kernel %s: %s\n", r->file, r->line, r->kernel, d.msg);
	limit_of(rep, r->status, &r->lim);
	experiment_free(e);
out:
	free(e);
	free(rep);
}

/* Whether smsim's limit is ncu's class (2), a class ncu_limits.py accepts beside it (1), or neither (0). */
static int limit_match(const struct limit_row *r)
{
	const char *mine = limit_name(&r->lim);
	if (!strcmp(mine, r->ncu_class))
		return 2;
	char also[64];
	snprintf(also, sizeof also, "%s", r->also);
	for (char *t = strtok(also, "|"); t; t = strtok(NULL, "|"))
		if (!strcmp(t, mine))
			return 1;
	return 0;
}

/* The binding-limit table and agreement; the agreement in percent (class or accepted neighbour), -1 on a bad run. */
static double limit_report(const char *configs, struct limit_row *rows, int n, const struct setting *extra,
			   int nextra)
{
	printf("\nbinding limit: smsim against Nsight Compute (ncu_limits.py's rule on both)\n");
	printf("%-28s %3s %4s %3s %4s %-20s %-20s %5s %5s %5s %5s %6s %6s %-16s %-16s %s\n", "kernel", "stg", "bs",
	       "bpm", "k", "ncu class", "smsim limit", "iss", "iss", "dram%", "dram%", "pipes%", "pipes%", "ncu top",
	       "smsim top", "match");
	printf("%-28s %3s %4s %3s %4s %-20s %-20s %5s %5s %5s %5s %6s %6s %-16s %-16s\n", "", "", "", "", "", "", "",
	       "ncu", "smsim", "ncu", "smsim", "ncu", "smsim", "", "");
	int strict = 0, accepted = 0;
	for (int i = 0; i < n; i++) {
		struct limit_row *r = &rows[i];
		simulate_limit(configs, r, extra, nextra);
		if (r->status == 2)
			return -1;
		char cfg[4][16] = {"", "", "", ""};
		static const char *const keys[4] = {"stages", "block_size", "blocks", "k"};
		for (int s = 0; s < r->nsets; s++)
			for (int k = 0; k < 4; k++)
				if (!strcmp(r->names[s], keys[k]))
					snprintf(cfg[k], sizeof cfg[k], "%.15s", r->values[s]);
		int m = limit_match(r);
		strict += m == 2;
		accepted += m >= 1;
		printf("%-28.28s %3s %4s %3s %4s %-20s %-20s %5.2f %5.2f %5.1f %5.1f %6.1f %6.1f %-16s %-16s %s\n",
		       r->kernel, cfg[0], cfg[1], cfg[2], cfg[3], r->ncu_class, limit_name(&r->lim), r->ncu_issue,
		       r->lim.issue_per_scheduler, r->ncu_dram, r->lim.dram_pct, r->ncu_pipes, r->lim.mio_busy_pct,
		       r->ncu_top, warpstate_key[r->lim.top], m == 2 ? "yes" : m ? "accepted" : "NO");
		/* ncu's largest stalls beside smsim's figure for the same reasons (stalled warps per issue) */
		if (r->stall[0][0]) {
			printf("  warp state per issue, ncu / smsim:");
			for (int j = 0; j < 3 && r->stall[j][0]; j++) {
				double mine = 0;
				for (int w = 0; w < WS_COUNT; w++)
					if (!strcmp(warpstate_key[w], r->stall[j]))
						mine = r->lim.per_issue[w];
				printf("%s %s %.2f / %.2f", j ? "," : "", r->stall[j], r->stall_per_issue[j], mine);
			}
			printf("\n");
		}
	}
	double pct = n ? 100.0 * accepted / n : 100.0;
	printf("binding limit agreement: %d of %d rows name ncu's class; %d of %d (%.0f%%) counting the neighbouring "
	       "class ncu_limits.py accepts near a threshold\n",
	       strict, n, accepted, n, pct);
	return pct;
}

static void simulate(const char *configs, struct row *r, const struct setting *extra, int nextra)
{
	char file[1200], bs[32], blocks[32];
	snprintf(file, sizeof file, "%.1000s/experiments/%.63s.json", configs, r->kernel);
	snprintf(bs, sizeof bs, "%d", r->block_size);
	snprintf(blocks, sizeof blocks, "%d", r->blocks);
	/* The microbenchmarks warm the input into L2 for the L2 rows and flush L2 before the DRAM rows. */
	/*
	 * The rows are the machine's measurements: the experiment runs on the machine file as calibrated, its
	 * machine_set what-ifs (diverged_commit's independent scheduling) left out.
	 */
	struct setting sets[MAX_SETS + 4 + MAX_EXTRA_SETS] = {
		{"machine_set", "none"},
		{"block_size", bs},
		{"blocks", blocks},
		{"machine.l2_hit_fraction", strcmp(r->source, "L2") == 0 ? "1" : "0"},
	};
	int n = 4;
	for (int i = 0; i < r->nsets; i++)
		sets[n++] = (struct setting){r->names[i], r->values[i]};
	for (int i = 0; i < nextra; i++)
		sets[n++] = extra[i];
	struct experiment *e = calloc(1, sizeof *e);
	struct sim_report *rep = calloc(1, sizeof *rep);
	struct diag d;
	r->status = e && rep ? runner_run(file, sets, n, 0, e, rep, &d) : 4;
	if (r->status)
		fprintf(stderr, "smsim: %s:%d: kernel %s: %s\n", r->file, r->line, r->kernel, d.msg);
	r->predicted = rep ? (double)rep->cycles / r->batch_sz : 0;
	if (e)
		experiment_free(e);
	free(e);
	free(rep);
}

/*
 * Two designs (kernel and stage count, or another parameter) run at the same
 * occupancy, block size, input and workload (workload_column) must order as
 * measured where the hardware tells them apart by tolerance or more.
 */
static int rank_mismatches(const struct row *rows, int n, double tolerance)
{
	int bad = 0;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			const struct row *a = &rows[i], *b = &rows[j];
			if (strcmp(a->source, b->source) || a->block_size != b->block_size || a->blocks != b->blocks ||
			    a->k != b->k || a->batch_sz != b->batch_sz || strcmp(a->workload, b->workload) ||
			    !strcmp(a->design, b->design))
				continue;
			double dm = b->measured - a->measured, dp = b->predicted - a->predicted;
			if (fabs(dm) < tolerance * fmax(a->measured, b->measured))
				continue;
			if ((dm > 0) != (dp > 0)) {
				printf("  rank: k=%d%s bs=%d blocks=%d %s: [%s] %.0f vs [%s] %.0f measured, %.0f vs %.0f "
				       "predicted\n",
				       a->k, a->workload, a->block_size, a->blocks, a->source, a->design, a->measured, b->design,
				       b->measured, a->predicted, b->predicted);
				bad++;
			}
		}
	return bad;
}

/* Mean absolute error per family (kernel x blocks per SM), in the order families first appear. */
static double family_report(const struct row *rows, int n, double *worst)
{
	char seen[256][80];
	int nseen = 0;
	*worst = 0;
	printf("\n%-40s %6s %8s\n", "family (kernel x blocks per SM)", "rows", "MAE");
	for (int i = 0; i < n; i++) {
		char fam[80];
		snprintf(fam, sizeof fam, "%.63s x%d", rows[i].kernel, rows[i].blocks);
		int s = 0;
		while (s < nseen && strcmp(seen[s], fam))
			s++;
		if (s < nseen || nseen == 256)
			continue;
		snprintf(seen[nseen++], sizeof seen[0], "%s", fam);
		double sum = 0;
		int cnt = 0;
		for (int j = i; j < n; j++)
			if (!strcmp(rows[j].kernel, rows[i].kernel) && rows[j].blocks == rows[i].blocks) {
				sum += fabs(100.0 * (rows[j].predicted - rows[j].measured) / rows[j].measured);
				cnt++;
			}
		double mae = sum / cnt;
		*worst = fmax(*worst, mae);
		printf("%-40s %6d %7.1f%%\n", fam, cnt, mae);
	}
	return *worst;
}

int cmd_validate(int argc, char **argv, const char *self)
{
	(void)self;
	const char *files[MAX_FILES], *configs = "configs";
	int nfiles = 0;
	double max_error = -1, max_family = -1, min_limit = -1;
	bool require_ranking = false;
	struct setting extra[MAX_EXTRA_SETS];
	int nextra = 0;
	for (int i = 0; i < argc; i++) {
		const char *v = NULL;
		int got;
		if (!strcmp(argv[i], "--require-ranking")) {
			require_ranking = true;
		} else if ((got = cli_value(argc, argv, &i, "validate", "--max-error", &v))) {
			if (got < 0)
				return 2;
			if (!cell_number(v, &max_error) || max_error < 0) {
				fprintf(stderr, "smsim validate: --max-error %s: expected a percentage, 0 or more\n", v);
				return 2;
			}
		} else if ((got = cli_value(argc, argv, &i, "validate", "--max-family-error", &v))) {
			if (got < 0)
				return 2;
			if (!cell_number(v, &max_family) || max_family < 0) {
				fprintf(stderr, "smsim validate: --max-family-error %s: expected a percentage, 0 or more\n", v);
				return 2;
			}
		} else if ((got = cli_value(argc, argv, &i, "validate", "--min-limit-agreement", &v))) {
			if (got < 0)
				return 2;
			if (!cell_number(v, &min_limit) || min_limit < 0) {
				fprintf(stderr, "smsim validate: --min-limit-agreement %s: expected a percentage, 0 or more\n", v);
				return 2;
			}
		} else if ((got = cli_value(argc, argv, &i, "validate", "--configs", &configs))) {
			if (got < 0)
				return 2;
		} else if ((got = cli_value(argc, argv, &i, "validate", "--set", &v))) {
			if (got < 0)
				return 2;
			if (nextra == MAX_EXTRA_SETS) {
				fprintf(stderr, "smsim validate: at most %d --set options\n", MAX_EXTRA_SETS);
				return 2;
			}
			if (!runner_split_setting((char *)v, &extra[nextra++])) {
				fprintf(stderr, "smsim validate: --set expects NAME=VALUE, not \"%s\"\n", v);
				return 2;
			}
		} else if (argv[i][0] == '-') {
			return cli_unknown_option("validate", argv[i]);
		} else if (nfiles == MAX_FILES) {
			fprintf(stderr, "smsim validate: at most %d reference files\n", MAX_FILES);
			return 2;
		} else {
			files[nfiles++] = argv[i];
		}
	}
	if (nfiles == 0) {
		files[nfiles++] = "traces/h100/pipelines.csv";
		static const char *const more[] = {"traces/h100/validation.csv", "traces/h100/validation_primitives.csv",
						   "traces/h100/ncu_limits.csv"};
		for (int i = 0; i < 3; i++) {
			FILE *probe = fopen(more[i], "r");
			if (probe) {
				fclose(probe);
				files[nfiles++] = more[i];
			}
		}
	}
	struct diag d;
	static struct row rows[MAX_ROWS];
	static struct limit_row lrows[MAX_LIMIT_ROWS];
	int n = 0, nl = 0;
	for (int i = 0; i < nfiles; i++) {
		size_t len = 0;
		char *text = jdoc_read_file(files[i], &len);
		if (!text) {
			fprintf(stderr, "smsim: %s: cannot read: %s\n", files[i], strerror(errno));
			return errno == EFBIG ? 4 : 2;
		}
		if (strlen(text) != len) {
			fprintf(stderr, "smsim: %s: contains a NUL byte; expected CSV text\n", files[i]);
			free(text);
			return 2;
		}
		if (limit_file(text)) {
			int got = parse_limits(text, lrows + nl, MAX_LIMIT_ROWS - nl, &d, files[i]);
			free(text);
			if (got < 0) {
				fprintf(stderr, "smsim: %s\n", d.msg);
				return 2;
			}
			nl += got;
			continue;
		}
		n = parse(text, rows, n, MAX_ROWS, &d, files[i]);
		free(text);
		if (n < 0) {
			fprintf(stderr, "smsim: %s\n", d.msg);
			return 2;
		}
	}
	if (n == 0 && nl == 0) {
		fprintf(stderr, "smsim validate: no rows in %s%s: nothing to compare (a header and at least one row expected)\n",
			files[0], nfiles > 1 ? " and the others" : "");
		return 2;
	}
	if (min_limit >= 0 && !nl) {
		fprintf(stderr, "smsim validate: --min-limit-agreement needs a binding-limit CSV (traces/h100/ncu_limits.csv)\n");
		return 2;
	}
	int rc = 0;
	if (nl) {
		double agree = limit_report(configs, lrows, nl, extra, nextra);
		if (agree < 0)
			return 2;
		if (min_limit >= 0 && agree < min_limit) {
			printf("FAIL: the binding limit agrees with ncu on %.0f%% of rows, below the bound of %.0f%%\n", agree,
			       min_limit);
			rc = 1;
		}
		if (!n)
			return rc;
		printf("\n");
	}
	printf("%-34s %6s %5s %3s %4s %-36s %10s %10s %8s\n", "kernel", "source", "bs", "bpm", "k", "design (and workload)",
	       "measured", "predicted", "error");
	double sum = 0;
	for (int i = 0; i < n; i++) {
		struct row *r = &rows[i];
		simulate(configs, r, extra, nextra);
		if (r->status == 2)
			return 2;
		double err = 100.0 * (r->predicted - r->measured) / r->measured;
		/* the design's parameters, then the workload's but k (R, divergence): rows that differ only there apart */
		const char *design = strchr(r->design, ' ');
		char label[160];
		snprintf(label, sizeof label, "%s%s", design ? design + 1 : "", r->workload);
		printf("%-34s %6s %5d %3d %4d %-36.36s %10.1f %10.1f %+7.1f%%\n", r->kernel, r->source, r->block_size,
		       r->blocks, r->k, label[0] == ' ' ? label + 1 : label, r->measured, r->predicted, err);
		sum += fabs(err);
	}
	double mae = n ? sum / n : 0, worst;
	family_report(rows, n, &worst);
	printf("\nrows %d, mean absolute error %.1f%% (cycles per batch), worst family %.1f%%\n", n, mae, worst);
	int bad = rank_mismatches(rows, n, 0.05);
	printf("ranking: %d pair(s) of designs ordered differently from the hardware (same occupancy, block size, "
	       "input and workload: k, R, divergence; measured differences under 5%% ignored)\n",
	       bad);
	if (max_error >= 0 && mae > max_error) {
		printf("FAIL: mean absolute error %.1f%% is above the bound of %.1f%%\n", mae, max_error);
		rc = 1;
	}
	if (max_family >= 0 && worst > max_family) {
		printf("FAIL: a family's mean absolute error, %.1f%%, is above the bound of %.1f%%\n", worst, max_family);
		rc = 1;
	}
	if (require_ranking && bad > 0) {
		printf("FAIL: %d pair(s) of designs ranked differently from the hardware\n", bad);
		rc = 1;
	}
	return rc;
}

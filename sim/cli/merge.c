/*
 * merge: joins the parts that `smsim sweep --shard I/N` wrote into the
 * table a single `smsim sweep` would have written, byte for byte, or
 * refuses and says why: a file that is no part, a part cut short, parts of
 * different sweeps (their fingerprints differ: sweepint.h), parts of
 * different splits, a shard or a run given twice, or runs that no part
 * holds.  A file may hold several parts back to back, as when GNU parallel
 * collects every shard's output into one stream.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../isa/jdoc.h"
#include "cli.h"
#include "commands.h"
#include "outfile.h"
#include "sweepint.h"

/* What one part's header says, and where its column line is. */
struct part {
	const char *file; /* as given on the command line */
	int line;         /* of its first line */
	int shard, nshards;
	char name[128];
	int runs;
	int nvalues[SWEEP_MAX_VARY];
	int nvary;
	char plot_x[SWEEP_NAME_LEN], plot_y[SWEEP_NAME_LEN];
	char xlabel[SWEEP_LABEL_LEN], ylabel[SWEEP_LABEL_LEN];
	char fingerprint[17], smsim[64];
	char file_hash[SWEEP_FILES][17];
	char file_path[SWEEP_FILES][1024];
	const char *columns; /* the column line, "run," first, into the file's text */
	size_t columns_len;  /* newline included */
	int ncolumns;
};

/* One run's row, once a part has supplied it. */
struct slot {
	const char *text; /* after "INDEX,", newline included; NULL while no part has the run */
	size_t len;
	int part; /* index into merge.parts */
	int line;
};

struct merge {
	struct part *parts;
	int nparts, cap;
	struct slot *slots; /* one per run, sized by the first part */
};

/* A file's text, line by line. */
struct cursor {
	const char *file;
	const char *p, *end;
	int line; /* number of the line at p, from 1 */
};

/* The next line without its newline; complete is false when the text ends without one.  False at the end. */
static bool next_line(struct cursor *c, const char **s, size_t *n, bool *complete)
{
	if (c->p >= c->end)
		return false;
	const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	*s = c->p;
	*n = (size_t)((nl ? nl : c->end) - c->p);
	*complete = nl != NULL;
	c->p = nl ? nl + 1 : c->end;
	c->line++;
	return true;
}

static bool starts_with(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);
	return n >= k && memcmp(s, prefix, k) == 0;
}

/* A decimal integer in [lo, hi] filling all of s[0..n). */
static bool parse_int(const char *s, size_t n, long lo, long hi, int *out)
{
	if (n == 0 || n > 9)
		return false;
	long v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	if (v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

static bool parse_hash(const char *s, size_t n, char *out)
{
	if (n != 16 || strspn(s, "0123456789abcdef") < 16)
		return false;
	memcpy(out, s, 16);
	out[16] = '\0';
	return true;
}

/* Fields of a CSV line (never quoted: sweepint.h). */
static int count_fields(const char *s, size_t n)
{
	int k = 1;
	for (size_t i = 0; i < n; i++)
		k += s[i] == ',';
	return k;
}

/* ORDER KEY: the header lines after the first, as sweep.c writes them. */
enum {
	K_SWEEP,
	K_RUNS,
	K_VALUES,
	K_PLOT_X,
	K_PLOT_Y,
	K_X_LABEL,
	K_Y_LABEL,
	K_FINGERPRINT,
	K_SMSIM,
	K_FILES,
	NKEYS = K_FILES + SWEEP_FILES
};

static const char *key_name(int k, char *buf, size_t n)
{
	static const char *const names[K_FILES] = {"sweep",	   "runs",	  "values",	 "plot x", "plot y",
						   "plot x label", "plot y label", "fingerprint", "smsim"};
	if (k < K_FILES)
		return names[k];
	snprintf(buf, n, "%s file", sweep_file_label[k - K_FILES]);
	return buf;
}

/* One "# KEY: VALUE" line into pt; returns the key's number, or -1 when the line is none of them or is malformed. */
static int header_line(const char *s, size_t n, struct part *pt)
{
	if (!starts_with(s, n, "# "))
		return -1;
	const char *colon = memchr(s, ':', n);
	if (!colon || colon + 1 >= s + n || colon[1] != ' ')
		return -1;
	size_t klen = (size_t)(colon - s - 2);
	const char *v = colon + 2;
	size_t vlen = (size_t)(s + n - v);
	char buf[64];
	int k = 0;
	for (; k < NKEYS; k++) {
		const char *name = key_name(k, buf, sizeof buf);
		if (strlen(name) == klen && memcmp(s + 2, name, klen) == 0)
			break;
	}
	switch (k) {
	case K_SWEEP:
		if (vlen >= sizeof pt->name)
			return -1;
		memcpy(pt->name, v, vlen);
		pt->name[vlen] = '\0';
		return k;
	case K_RUNS:
		return parse_int(v, vlen, 1, SWEEP_MAX_RUNS, &pt->runs) ? k : -1;
	case K_VALUES:
		pt->nvary = 0;
		for (size_t i = 0; i < vlen;) {
			size_t j = i;
			while (j < vlen && v[j] != ' ')
				j++;
			if (pt->nvary == SWEEP_MAX_VARY || !parse_int(v + i, j - i, 1, SWEEP_MAX_VALUES, &pt->nvalues[pt->nvary]))
				return -1;
			pt->nvary++;
			i = j + 1;
		}
		return pt->nvary ? k : -1;
	case K_PLOT_X:
	case K_PLOT_Y:
		if (vlen >= SWEEP_NAME_LEN)
			return -1;
		memcpy(k == K_PLOT_X ? pt->plot_x : pt->plot_y, v, vlen);
		(k == K_PLOT_X ? pt->plot_x : pt->plot_y)[vlen] = '\0';
		return k;
	case K_X_LABEL:
	case K_Y_LABEL:
		if (vlen >= SWEEP_LABEL_LEN)
			return -1;
		memcpy(k == K_X_LABEL ? pt->xlabel : pt->ylabel, v, vlen);
		(k == K_X_LABEL ? pt->xlabel : pt->ylabel)[vlen] = '\0';
		return k;
	case K_FINGERPRINT:
		return parse_hash(v, vlen, pt->fingerprint) ? k : -1;
	case K_SMSIM:
		if (vlen >= sizeof pt->smsim)
			return -1;
		memcpy(pt->smsim, v, vlen);
		pt->smsim[vlen] = '\0';
		return k;
	default:
		if (k >= NKEYS || vlen < 18 || v[16] != ' ' || vlen - 17 >= sizeof pt->file_path[0] ||
		    !parse_hash(v, 16, pt->file_hash[k - K_FILES]))
			return -1;
		memcpy(pt->file_path[k - K_FILES], v + 17, vlen - 17);
		pt->file_path[k - K_FILES][vlen - 17] = '\0';
		return k;
	}
}

/*
 * Reads a part's header and column line at the cursor (its first line
 * already read: s, n).  Errors name the file and line.
 */
static int parse_header(struct cursor *c, const char *s, size_t n, struct part *pt, struct diag *d)
{
	char num[32];
	size_t m = strlen(SWEEP_PART_MAGIC);
	if (!starts_with(s, n, SWEEP_PART_MAGIC) || n - m >= sizeof num)
		return diag_set(d, DIAG_INPUT,
				"%s:%d: not a part of a sweep (a part begins with \"" SWEEP_PART_MAGIC "I/N\", as smsim "
				"sweep SWEEP.json --shard I/N writes it)", c->file, c->line);
	memcpy(num, s + m, n - m);
	num[n - m] = '\0';
	if (!sweep_parse_shard(num, &pt->shard, &pt->nshards))
		return diag_set(d, DIAG_INPUT, "%s:%d: expected \"" SWEEP_PART_MAGIC "I/N\" with 0 <= I < N", c->file,
				c->line);
	pt->line = c->line;
	unsigned seen = 0;
	bool complete;
	while (next_line(c, &s, &n, &complete)) {
		if (!complete)
			break;
		if (n && s[0] != '#') {
			for (int k = 0; k < NKEYS; k++)
				if (!(seen & 1u << k)) {
					char buf[64];
					return diag_set(d, DIAG_INPUT, "%s:%d: the part's header lacks its \"# %s:\" line",
							c->file, c->line, key_name(k, buf, sizeof buf));
				}
			uint64_t hash[SWEEP_FILES];
			for (int f = 0; f < SWEEP_FILES; f++)
				hash[f] = strtoull(pt->file_hash[f], NULL, 16);
			char fp[17];
			snprintf(fp, sizeof fp, "%016llx", (unsigned long long)sweep_fingerprint_of(pt->smsim, hash));
			if (strcmp(fp, pt->fingerprint) != 0)
				return diag_set(d, DIAG_INPUT, "%s:%d: the part's fingerprint does not match its header (edited or "
						"damaged?)", c->file, pt->line);
			int prod = 1;
			for (int k = 0; k < pt->nvary; k++)
				prod = prod > SWEEP_MAX_RUNS ? prod : prod * pt->nvalues[k];
			if (prod != pt->runs)
				return diag_set(d, DIAG_INPUT, "%s:%d: the header's values (%d runs) and runs (%d) disagree",
						c->file, pt->line, prod, pt->runs);
			pt->columns = s;
			pt->columns_len = n + 1;
			pt->ncolumns = count_fields(s, n);
			/* run, the parameters, status, the metrics */
			const char *status = s;
			for (int k = 0; k <= pt->nvary && status; k++) {
				status = memchr(status, ',', (size_t)(s + n - status));
				status = status ? status + 1 : NULL;
			}
			if (!starts_with(s, n, "run,") || !status || !starts_with(status, (size_t)(s + n - status), "status,"))
				return diag_set(d, DIAG_INPUT,
						"%s:%d: expected the column line \"run,PARAMETER...,status,...\" with the "
						"header's %d parameters", c->file, c->line, pt->nvary);
			return 0;
		}
		int k = header_line(s, n, pt);
		if (k < 0)
			return diag_set(d, DIAG_INPUT, "%s:%d: not a line of a part's header: \"%.*s\"", c->file, c->line,
					n > 80 ? 80 : (int)n, s);
		seen |= 1u << k;
	}
	return diag_set(d, DIAG_INPUT, "%s:%d: the part ends before its column line (cut short?)", c->file, c->line);
}

static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...) DIAG_PRINTF(4, 5);
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	if (*len >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (k > 0)
		*len += (size_t)k;
}

/* Why pt cannot join ref's sweep, or 0 when it can. */
static int check_same_sweep(const struct part *ref, const struct part *pt, struct diag *d)
{
	if (strcmp(pt->fingerprint, ref->fingerprint) != 0) {
		if (strcmp(pt->name, ref->name) != 0)
			return diag_set(d, DIAG_INPUT,
					"%s:%d is a part of sweep %s, %s:%d of sweep %s: parts of different sweeps do not "
					"merge", pt->file, pt->line, pt->name, ref->file, ref->line, ref->name);
		char why[1400] = "";
		size_t len = 0;
		for (int f = 0; f < SWEEP_FILES; f++) {
			if (strcmp(pt->file_hash[f], ref->file_hash[f]) == 0)
				continue;
			append(why, sizeof why, &len, "%sthe %s file (%s", len ? " and " : "", sweep_file_label[f],
			       ref->file_path[f]);
			if (strcmp(pt->file_path[f], ref->file_path[f]) != 0)
				append(why, sizeof why, &len, " and %s", pt->file_path[f]);
			append(why, sizeof why, &len, ")");
		}
		if (strcmp(pt->smsim, ref->smsim) != 0)
			append(why, sizeof why, &len, "%sthe smsim version (%s and %s)", len ? " and " : "", ref->smsim,
			       pt->smsim);
		return diag_set(d, DIAG_INPUT,
				"%s:%d and %s:%d are parts of different versions of sweep %s (fingerprints %s and %s): they "
				"differ in %s; make every part from the same files with the same smsim",
				ref->file, ref->line, pt->file, pt->line, pt->name, ref->fingerprint, pt->fingerprint,
				why);
	}
	if (pt->nshards != ref->nshards)
		return diag_set(d, DIAG_INPUT,
				"%s:%d is shard %d/%d, %s:%d shard %d/%d: merge the parts of one split (--shard I/N with "
				"the same N)", pt->file, pt->line, pt->shard, pt->nshards, ref->file, ref->line, ref->shard,
				ref->nshards);
	if (pt->columns_len != ref->columns_len || memcmp(pt->columns, ref->columns, pt->columns_len) != 0 ||
	    pt->runs != ref->runs || pt->nvary != ref->nvary ||
	    memcmp(pt->nvalues, ref->nvalues, sizeof pt->nvalues) != 0 || strcmp(pt->name, ref->name) != 0 ||
	    strcmp(pt->plot_x, ref->plot_x) != 0 || strcmp(pt->plot_y, ref->plot_y) != 0 ||
	    strcmp(pt->xlabel, ref->xlabel) != 0 || strcmp(pt->ylabel, ref->ylabel) != 0)
		return diag_set(d, DIAG_INPUT, "%s:%d: its header or columns differ from %s:%d's though the fingerprints "
				"agree (edited by hand?)", pt->file, pt->line, ref->file, ref->line);
	return 0;
}

/* Reads the rows of part pi up to the next part or the end of the file. */
static int parse_rows(struct merge *m, int pi, struct cursor *c, struct diag *d)
{
	const struct part *pt = &m->parts[pi];
	const char *s;
	size_t n;
	bool complete;
	struct cursor before = *c;
	while (next_line(c, &s, &n, &complete)) {
		if (starts_with(s, n, SWEEP_PART_MAGIC)) {
			*c = before; /* the next part's */
			return 0;
		}
		if (!complete)
			return diag_set(d, DIAG_INPUT, "%s:%d: the last row is cut short (no end of line): was the shard "
					"stopped while writing?", c->file, c->line);
		const char *comma = memchr(s, ',', n);
		int run;
		if (!comma || !parse_int(s, (size_t)(comma - s), 0, pt->runs - 1, &run))
			return diag_set(d, DIAG_INPUT, "%s:%d: expected a row \"RUN,...\" with RUN in 0..%d", c->file,
					c->line, pt->runs - 1);
		if (run % pt->nshards != pt->shard)
			return diag_set(d, DIAG_INPUT, "%s:%d: run %d does not belong to shard %d/%d (its runs are %d, %d, "
					"...)", c->file, c->line, run, pt->shard, pt->nshards, pt->shard,
					pt->shard + pt->nshards);
		if (count_fields(s, n) != pt->ncolumns)
			return diag_set(d, DIAG_INPUT, "%s:%d: %d fields where the columns are %d", c->file, c->line,
					count_fields(s, n), pt->ncolumns);
		struct slot *sl = &m->slots[run];
		if (sl->text)
			return diag_set(d, DIAG_INPUT, "run %d appears twice: %s:%d and %s:%d", run,
					m->parts[sl->part].file, sl->line, c->file, c->line);
		*sl = (struct slot){comma + 1, (size_t)(s + n - comma), pi, c->line};
		before = *c;
	}
	return 0;
}

/* Every part in one file's text. */
static int parse_file(struct merge *m, const char *file, const char *text, size_t len, struct diag *d)
{
	struct cursor c = {file, text, text + len, 0};
	const char *s;
	size_t n;
	bool complete;
	if (!next_line(&c, &s, &n, &complete))
		return diag_set(d, DIAG_INPUT, "%s: empty; expected a part of a sweep (smsim sweep SWEEP.json --shard I/N)",
				file);
	do {
		if (m->nparts == m->cap) {
			int cap = m->cap ? 2 * m->cap : 16;
			struct part *p = realloc(m->parts, (size_t)cap * sizeof *p);
			if (!p)
				return diag_set(d, DIAG_LIMIT, "out of memory");
			m->parts = p;
			m->cap = cap;
		}
		struct part *pt = &m->parts[m->nparts];
		*pt = (struct part){.file = file};
		int rc = parse_header(&c, s, n, pt, d);
		if (rc)
			return rc;
		if (m->nparts == 0) {
			m->slots = calloc((size_t)pt->runs, sizeof *m->slots);
			if (!m->slots)
				return diag_set(d, DIAG_LIMIT, "out of memory");
		} else {
			if ((rc = check_same_sweep(&m->parts[0], pt, d)))
				return rc;
			for (int i = 0; i < m->nparts; i++)
				if (m->parts[i].shard == pt->shard)
					return diag_set(d, DIAG_INPUT, "shard %d/%d is given twice: %s:%d and %s:%d", pt->shard,
							pt->nshards, m->parts[i].file, m->parts[i].line, pt->file, pt->line);
		}
		m->nparts++;
		if ((rc = parse_rows(m, m->nparts - 1, &c, d)))
			return rc;
	} while (next_line(&c, &s, &n, &complete));
	return 0;
}

/* The runs no part holds, and which shards they belong to: a DIAG_INPUT, or 0 when none is missing. */
static int check_complete(const struct merge *m, struct diag *d)
{
	const struct part *ref = &m->parts[0];
	int missing = 0;
	for (int i = 0; i < ref->runs; i++)
		missing += !m->slots[i].text;
	if (!missing)
		return 0;
	char msg[sizeof d->msg];
	size_t len = 0;
	append(msg, sizeof msg, &len, "sweep %s: %d of its %d runs %s missing: ", ref->name, missing, ref->runs,
	       missing == 1 ? "is" : "are");
	int listed = 0;
	for (int i = 0; i < ref->runs && listed < 24; i++)
		if (!m->slots[i].text)
			append(msg, sizeof msg, &len, "%s%d", listed++ ? ", " : "", i);
	if (missing > listed)
		append(msg, sizeof msg, &len, " and %d more", missing - listed);
	/* Their shards: absent, or present but short of rows. */
	int shards = 0;
	for (int s = 0; s < ref->nshards && s < ref->runs; s++) {
		bool lacks = false;
		for (int i = s; i < ref->runs && !lacks; i += ref->nshards)
			lacks = !m->slots[i].text;
		if (!lacks)
			continue;
		if (shards++ == 8) {
			append(msg, sizeof msg, &len, "; and more shards");
			break;
		}
		const struct part *has = NULL;
		for (int p = 0; p < m->nparts; p++)
			if (m->parts[p].shard == s)
				has = &m->parts[p];
		if (has)
			append(msg, sizeof msg, &len, "; shard %d/%d: its part %s:%d lacks some (cut short?)", s, ref->nshards,
			       has->file, has->line);
		else
			append(msg, sizeof msg, &len, "; shard %d/%d: no part given (smsim sweep %s --shard %d/%d writes it)", s,
			       ref->nshards, ref->file_path[0], s, ref->nshards);
	}
	return diag_set(d, DIAG_INPUT, "%s", msg);
}

/* The sweep the parts describe, enough to plot it: names from the columns, values from the rows. */
static void rebuild_sweep(const struct merge *m, struct sweep *sw)
{
	const struct part *ref = &m->parts[0];
	memset(sw, 0, sizeof *sw);
	snprintf(sw->name, sizeof sw->name, "%s", ref->name);
	snprintf(sw->plot_x, sizeof sw->plot_x, "%s", ref->plot_x);
	snprintf(sw->plot_y, sizeof sw->plot_y, "%s", ref->plot_y);
	snprintf(sw->xlabel, sizeof sw->xlabel, "%s", ref->xlabel); /* as sweep drew them */
	snprintf(sw->ylabel, sizeof sw->ylabel, "%s", ref->ylabel);
	sw->nvary = ref->nvary;
	sw->runs = ref->runs;
	memcpy(sw->nvalues, ref->nvalues, sizeof sw->nvalues);
	const char *col = ref->columns + 4; /* after "run," */
	for (int k = 0; k < sw->nvary; k++) {
		size_t n = strcspn(col, ",");
		snprintf(sw->vary_name[k], SWEEP_NAME_LEN, "%.*s", (int)n, col);
		col += n + 1;
	}
	/* Value v of parameter k is in run v * stride(k), where every other parameter takes its first value. */
	int stride = 1;
	for (int k = sw->nvary - 1; k >= 0; k--) {
		for (int v = 0; v < sw->nvalues[k]; v++) {
			const char *f = m->slots[v * stride].text;
			for (int j = 0; j < k; j++)
				f = strchr(f, ',') + 1;
			snprintf(sw->vary_value[k][v], SWEEP_NAME_LEN, "%.*s", (int)strcspn(f, ","), f);
		}
		stride *= sw->nvalues[k];
	}
}

/* The merged table: the column line without "run,", then every run's row in run order (caller frees). */
static char *merged_text(const struct merge *m)
{
	const struct part *ref = &m->parts[0];
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (!out)
		return NULL;
	fwrite(ref->columns + 4, 1, ref->columns_len - 4, out);
	for (int i = 0; i < ref->runs; i++)
		fwrite(m->slots[i].text, 1, m->slots[i].len, out);
	if (fclose(out) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The merged table and its parts, for drawing it into an output file. */
struct drawing {
	const struct merge *m;
	const char *table;
};

static int fill_plot(FILE *out, void *ctx, struct diag *d)
{
	const struct drawing *t = ctx;
	struct sweep *sw = malloc(sizeof *sw);
	if (!sw)
		return diag_set(d, DIAG_LIMIT, "out of memory for the plot");
	rebuild_sweep(t->m, sw);
	int rc = sweep_plot(out, sw, t->table, NULL, d);
	free(sw);
	return rc;
}

int cmd_merge(int argc, char **argv, const char *self)
{
	(void)self;
	const char *csv = NULL, *svg = NULL;
	const char **files = calloc((size_t)argc + 1, sizeof *files);
	char **texts = calloc((size_t)argc + 1, sizeof *texts);
	int nfiles = 0, rc = 2;
	struct merge m = {0};
	struct diag d = {0};
	char *text = NULL;
	if (!files || !texts) {
		fprintf(stderr, "smsim: out of memory\n");
		rc = 4;
		goto out;
	}
	for (int i = 0; i < argc; i++) {
		int got;
		if ((got = cli_value(argc, argv, &i, "merge", "--csv", &csv)) ||
		    (got = cli_value(argc, argv, &i, "merge", "--svg", &svg))) {
			if (got < 0)
				goto out;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			rc = cli_unknown_option("merge", argv[i]);
			goto out;
		} else {
			files[nfiles++] = argv[i];
		}
	}
	if (!nfiles) {
		fprintf(stderr, "smsim: merge needs the parts: smsim merge PART.csv... [--csv FILE] [--svg FILE]\n");
		goto out;
	}
	if (csv && svg && outfile_is_stdout(csv) && outfile_is_stdout(svg)) {
		fprintf(stderr, "smsim merge: --csv and --svg cannot both be - (stdout)\n");
		goto out;
	}
	/* stdout carries one thing, as with sweep: with --svg -, the table goes to --csv's file, or to stderr. */
	if (!csv)
		csv = svg && outfile_is_stdout(svg) ? NULL : "-";
	for (int i = 0; i < nfiles; i++) {
		size_t len;
		texts[i] = jdoc_read_file(files[i], &len);
		if (!texts[i]) {
			diag_set(&d, DIAG_INPUT, "%s: cannot read: %s", files[i], strerror(errno));
			goto fail;
		}
		if (strlen(texts[i]) != len) {
			diag_set(&d, DIAG_INPUT, "%s: contains a NUL byte; expected a part of a sweep", files[i]);
			goto fail;
		}
		if (parse_file(&m, files[i], texts[i], len, &d))
			goto fail;
	}
	if (check_complete(&m, &d))
		goto fail;
	text = merged_text(&m);
	if (!text) {
		diag_set(&d, DIAG_LIMIT, "out of memory for the table");
		goto fail;
	}
	if (csv) {
		if (outfile_write(csv, sweep_fill_text, text, &d))
			goto fail;
	} else {
		fputs(text, stderr);
	}
	if (svg) {
		struct drawing t = {&m, text};
		if (outfile_write(svg, fill_plot, &t, &d))
			goto fail;
	}
	rc = 0;
	goto out;
fail:
	rc = d.code ? (int)d.code : 2;
	fprintf(stderr, "smsim: merge: %s\n", d.msg);
out:
	for (int i = 0; texts && i < nfiles; i++)
		free(texts[i]);
	free(texts);
	free(files);
	free(m.parts);
	free(m.slots);
	free(text);
	return rc;
}

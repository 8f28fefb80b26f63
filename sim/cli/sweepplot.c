/*
 * sweepplot: a sweep's line plot, drawn from its table (the CSV text), and
 * `smsim plot SWEEP.json TABLE.csv`, which draws a table made elsewhere —
 * merged from shards, or kept from an earlier run — after checking that it
 * is that sweep's: its columns, one row per run, in run order.
 */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../isa/jdoc.h"
#include "cli.h"
#include "commands.h"
#include "outfile.h"
#include "svg.h"
#include "sweepint.h"

/* The start of field f of a CSV line (never quoted: sweepint.h), or NULL when the line has fewer fields. */
static const char *field(const char *line, int f)
{
	for (; f > 0; f--) {
		line = strpbrk(line, ",\n");
		if (!line || *line == '\n')
			return NULL;
		line++;
	}
	return line;
}

static size_t field_len(const char *p) { return strcspn(p, ",\n"); }

static bool field_is(const char *p, const char *s)
{
	size_t n = field_len(p);
	return n == strlen(s) && strncmp(p, s, n) == 0;
}

/* The start of each of the table's runs rows into rows[]; false when it has fewer, or a row is cut short. */
static bool split_rows(const char *table, int runs, const char **rows)
{
	const char *p = strchr(table, '\n');
	for (int i = 0; i < runs; i++) {
		if (!p || !p[1])
			return false;
		rows[i] = ++p;
		p = strchr(p, '\n');
	}
	return p != NULL;
}

/* How much of an axis label comes before its unit ("over-wait per wait (cycles)": 18). */
static int unit_free(const char *label)
{
	size_t n = strcspn(label, "(");
	while (n && label[n - 1] == ' ')
		n--;
	return n ? (int)n : (int)strlen(label);
}

#define MEASURED_MAX_ROWS 1024
#define MEASURED_MAX_SERIES 16

/*
 * --measured FILE.csv: series measured on the hardware, drawn beside the sweep's.  Its header names
 * the plot's x column and its y metric (lines starting with # are comments); a column named as
 * another varied parameter splits the rows into one series per value.  Adds them after series[n].
 */
static int measured_series(const struct sweep *sw, const char *file, struct svg_series *series, int *n,
			   double *xs, double *ys, struct diag *d)
{
	char *text = jdoc_read_file(file, NULL);
	if (!text)
		return diag_set(d, DIAG_INPUT, "--measured %s: cannot read it", file);
	int rc = 0, xc = -1, yc = -1, ncols = 0, group[8], ngroup = 0, rows = 0, first = *n, line = 0;
	char *hdr[32];
	for (char *l = strtok(text, "\r\n"); l; l = strtok(NULL, "\r\n")) {
		line++;
		if (l[0] == '#' || !l[0])
			continue;
		char *f[32];
		int nf = cli_split_csv(l, f, 32);
		if (ncols == 0) {
			ncols = nf;
			for (int i = 0; i < nf; i++) {
				hdr[i] = f[i];
				if (!strcmp(f[i], sw->plot_x))
					xc = i;
				else if (!strcmp(f[i], sw->plot_y))
					yc = i;
				else
					for (int k = 0; k < sw->nvary && ngroup < 8; k++)
						if (!strcmp(f[i], sw->vary_name[k]))
							group[ngroup++] = i;
			}
			if (xc < 0 || yc < 0) {
				rc = diag_set(d, DIAG_INPUT, "--measured %s:%d: expected the columns %s (x) and %s (y)", file,
					      line, sw->plot_x, sw->plot_y);
				goto out;
			}
			continue;
		}
		if (nf != ncols || rows == MEASURED_MAX_ROWS) {
			rc = diag_set(d, DIAG_INPUT, "--measured %s:%d: expected %d columns (at most %d rows)", file, line,
				      ncols, MEASURED_MAX_ROWS);
			goto out;
		}
		char *end1, *end2;
		double x = strtod(f[xc], &end1), y = strtod(f[yc], &end2);
		if (end1 == f[xc] || *end1 || end2 == f[yc] || *end2 || !isfinite(x) || !isfinite(y)) {
			rc = diag_set(d, DIAG_INPUT, "--measured %s:%d: %s and %s must be finite numbers", file, line,
				      sw->plot_x, sw->plot_y);
			goto out;
		}
		char name[96] = "H100 measured";
		size_t len = strlen(name);
		for (int g = 0; g < ngroup && len < sizeof name; g++)
			len += (size_t)snprintf(name + len, sizeof name - len, "%s%s=%s", g ? ", " : ": ", hdr[group[g]],
						f[group[g]]);
		int si = first;
		while (si < *n && strcmp(series[si].name, name))
			si++;
		if (si == *n) {
			if (*n - first == MEASURED_MAX_SERIES) {
				rc = diag_set(d, DIAG_INPUT, "--measured %s: more than %d series", file, MEASURED_MAX_SERIES);
				goto out;
			}
			struct svg_series *s = &series[(*n)++];
			snprintf(s->name, sizeof s->name, "%s", name);
			s->measured = true;
			s->x = xs + (size_t)(si - first) * MEASURED_MAX_ROWS;
			s->y = ys + (size_t)(si - first) * MEASURED_MAX_ROWS;
			s->n = 0;
		}
		struct svg_series *s = &series[si];
		((double *)s->x)[s->n] = x;
		((double *)s->y)[s->n] = y;
		s->n++;
		rows++;
	}
	if (!rows)
		rc = diag_set(d, DIAG_INPUT, "--measured %s: no rows", file);
out:
	free(text);
	return rc;
}

int sweep_plot(FILE *out, const struct sweep *sw, const char *table, const char *measured, struct diag *d)
{
	int xk = -1, yc = -1;
	for (int k = 0; k < sw->nvary; k++)
		if (strcmp(sw->vary_name[k], sw->plot_x) == 0)
			xk = k;
	/* y: a column after status, which follows the parameters */
	const char *c;
	for (int i = sw->nvary + 1; (c = field(table, i)) != NULL && yc < 0; i++)
		if (field_is(c, sw->plot_y))
			yc = i;
	if (xk < 0 || yc < 0)
		return diag_set(d, DIAG_INPUT, "sweep %s: plot x \"%s\" must be a varied parameter and y \"%s\" a metric",
				sw->name, sw->plot_x, sw->plot_y);
	int nseries = sw->runs / sw->nvalues[xk];
	struct svg_series *series = calloc((size_t)nseries + MEASURED_MAX_SERIES, sizeof *series);
	double *xs = calloc((size_t)sw->runs, sizeof *xs), *ys = calloc((size_t)sw->runs, sizeof *ys);
	double *mx = measured ? calloc(MEASURED_MAX_ROWS * MEASURED_MAX_SERIES, sizeof *mx) : NULL;
	double *my = measured ? calloc(MEASURED_MAX_ROWS * MEASURED_MAX_SERIES, sizeof *my) : NULL;
	const char **rows = calloc((size_t)sw->runs, sizeof *rows);
	int rc = 0;
	if (!series || !xs || !ys || !rows || (measured && (!mx || !my))) {
		rc = diag_set(d, DIAG_LIMIT, "out of memory for the plot");
		goto out;
	}
	if (!split_rows(table, sw->runs, rows)) {
		rc = diag_set(d, DIAG_INPUT, "sweep %s: the table has fewer than its %d rows", sw->name, sw->runs);
		goto out;
	}
	int ns = 0;
	for (int i = 0; i < sw->runs; i++) {
		if (sweep_value_of(sw, i, xk) != 0)
			continue;
		struct svg_series *s = &series[ns++];
		s->x = xs + (size_t)(ns - 1) * (size_t)sw->nvalues[xk];
		s->y = ys + (size_t)(ns - 1) * (size_t)sw->nvalues[xk];
		size_t len = 0;
		for (int k = 0; k < sw->nvary; k++)
			if (k != xk && len < sizeof s->name)
				len += (size_t)snprintf(s->name + len, sizeof s->name - len, "%s%s=%s", len ? ", " : "",
							sw->vary_name[k], sw->vary_value[k][sweep_value_of(sw, i, k)]);
		/* Runs of this series: same values for every other parameter. */
		int stride = 1;
		for (int j = sw->nvary - 1; j > xk; j--)
			stride *= sw->nvalues[j];
		for (int v = 0; v < sw->nvalues[xk]; v++) {
			const char *y = field(rows[i + v * stride], yc);
			if (!y) {
				rc = diag_set(d, DIAG_INPUT, "sweep %s: run %d's row has no %s", sw->name, i + v * stride,
					      sw->plot_y);
				goto out;
			}
			char *end;
			double yv = strtod(y, &end);
			size_t cell = strcspn(y, ",\r\n"); /* y points into the row: its cell ends at the next comma */
			if (end == y || end != y + cell || !isfinite(yv)) { /* "nan", "inf" or an empty cell: nan or 0 drawn */
				rc = diag_set(d, DIAG_INPUT, "sweep %s: run %d's %s is \"%.*s\"; expected a finite number",
					      sw->name, i + v * stride, sw->plot_y, (int)(cell < 64 ? cell : 64), y);
				goto out;
			}
			((double *)s->x)[s->n] = atof(sw->vary_value[xk][v]);
			((double *)s->y)[s->n] = yv;
			s->n++;
		}
	}
	if (measured && (rc = measured_series(sw, measured, series, &ns, mx, my, d)))
		goto out;
	char title[400], xl[SWEEP_LABEL_LEN], yl[SWEEP_LABEL_LEN];
	sweep_axis_labels(sw, xl, yl);
	/* "overwait: over-wait per wait against thread groups per warp, D": the labels less their units */
	snprintf(title, sizeof title, "%.100s: %.*s against %.*s", sw->name, unit_free(yl), yl, unit_free(xl), xl);
	svg_plot(out, title, xl, yl, series, ns);
out:
	free(rows);
	free(series);
	free(xs);
	free(ys);
	free(mx);
	free(my);
	return rc;
}

/* Checks that table (read from file) is sw's: its column line, then one row per run with that run's values. */
static int check_table(const struct sweep *sw, const char *file, const char *table, struct diag *d)
{
	if (strncmp(table, SWEEP_PART_MAGIC, strlen(SWEEP_PART_MAGIC)) == 0)
		return diag_set(d, DIAG_INPUT,
				"%s: one part of a sweep (smsim sweep --shard), not its whole table: merge the parts "
				"first (smsim merge PART.csv... --svg FILE)", file);
	char *want = NULL;
	size_t wlen = 0;
	FILE *f = open_memstream(&want, &wlen);
	if (!f)
		return diag_set(d, DIAG_LIMIT, "out of memory");
	sweep_write_columns(f, sw);
	if (fclose(f) != 0) {
		free(want);
		return diag_set(d, DIAG_LIMIT, "out of memory");
	}
	int rc = 0;
	if (strncmp(table, want, wlen) != 0) {
		int i = 0;
		const char *a = table, *b = want;
		while (a && b && field_len(a) == field_len(b) && strncmp(a, b, field_len(a)) == 0) {
			a = field(a, 1);
			b = field(b, 1);
			i++;
		}
		if (!a && !b)
			rc = diag_set(d, DIAG_INPUT, "%s:1: the column line is not sweep %s's: is this the sweep's table?",
				      file, sw->name);
		else if (!b)
			rc = diag_set(d, DIAG_INPUT, "%s:1: more columns than sweep %s's %d: is this the sweep's table?", file,
				      sw->name, i);
		else if (!a)
			rc = diag_set(d, DIAG_INPUT, "%s:1: %d columns where sweep %s has more (next: %.*s): is this the "
				      "sweep's table?", file, i, sw->name, (int)field_len(b), b);
		else
			rc = diag_set(d, DIAG_INPUT, "%s:1: column %d is \"%.*s\" where sweep %s has \"%.*s\": is this the "
				      "sweep's table?", file, i + 1, (int)field_len(a) > 64 ? 64 : (int)field_len(a), a,
				      sw->name, (int)field_len(b), b);
		goto out;
	}
	int ncols = 1;
	for (const char *p = want; *p != '\n'; p++)
		ncols += *p == ',';
	const char *row = table + wlen;
	int i = 0;
	for (; *row; i++) {
		const char *end = strchr(row, '\n');
		if (!end) {
			rc = diag_set(d, DIAG_INPUT, "%s:%d: the last row is cut short (no end of line)", file, i + 2);
			goto out;
		}
		if (i >= sw->runs) {
			rc = diag_set(d, DIAG_INPUT, "%s:%d: more rows than sweep %s's %d runs", file, i + 2, sw->name,
				      sw->runs);
			goto out;
		}
		int n = 1;
		for (const char *p = row; p < end; p++)
			n += *p == ',';
		if (n != ncols) {
			rc = diag_set(d, DIAG_INPUT, "%s:%d: %d fields where the columns are %d", file, i + 2, n, ncols);
			goto out;
		}
		for (int k = 0; k < sw->nvary; k++) {
			const char *v = field(row, k), *want_v = sw->vary_value[k][sweep_value_of(sw, i, k)];
			if (!field_is(v, want_v)) {
				rc = diag_set(d, DIAG_INPUT, "%s:%d: run %d has %s=%.*s where sweep %s has %s=%s: is this the "
					      "sweep's table, in run order?", file, i + 2, i, sw->vary_name[k],
					      (int)field_len(v) > 64 ? 64 : (int)field_len(v), v, sw->name, sw->vary_name[k],
					      want_v);
				goto out;
			}
		}
		row = end + 1;
	}
	if (i < sw->runs)
		rc = diag_set(d, DIAG_INPUT, "%s: %d rows, but sweep %s has %d runs", file, i, sw->name, sw->runs);
out:
	free(want);
	return rc;
}

/* A checked table, for drawing it into an output file. */
struct drawing {
	const struct sweep *sw;
	const char *table;
};

static int fill_plot(FILE *out, void *ctx, struct diag *d)
{
	const struct drawing *t = ctx;
	return sweep_plot(out, t->sw, t->table, NULL, d);
}

int cmd_plot(int argc, char **argv, const char *self)
{
	(void)self;
	const char *files[2] = {NULL, NULL}, *svg = "-";
	int nfiles = 0;
	for (int i = 0; i < argc; i++) {
		int got;
		if ((got = cli_value(argc, argv, &i, "plot", "--svg", &svg))) {
			if (got < 0)
				return 2;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_unknown_option("plot", argv[i]);
		} else if (nfiles < 2) {
			files[nfiles++] = argv[i];
		} else {
			fprintf(stderr, "smsim plot: a sweep file and its table, not a third file (%s): smsim plot SWEEP.json "
					"TABLE.csv --svg FILE\n", argv[i]);
			return 2;
		}
	}
	if (nfiles < 2) {
		fprintf(stderr, "smsim: plot needs a sweep file and its table: smsim plot SWEEP.json TABLE.csv --svg FILE\n");
		return 2;
	}
	struct sweep *sw = calloc(1, sizeof *sw);
	struct diag d = {0};
	char *table = NULL;
	int rc = 2;
	if (!sw) {
		fprintf(stderr, "smsim: out of memory\n");
		return 4;
	}
	if (sweep_load(files[0], sw, &d))
		goto fail;
	size_t len;
	table = jdoc_read_file(files[1], &len);
	if (!table) {
		diag_set(&d, DIAG_INPUT, "%s: cannot read: %s", files[1], strerror(errno));
		goto fail;
	}
	if (strlen(table) != len) {
		diag_set(&d, DIAG_INPUT, "%s: contains a NUL byte; expected a sweep's CSV table", files[1]);
		goto fail;
	}
	if (check_table(sw, files[1], table, &d))
		goto fail;
	struct drawing t = {sw, table};
	if (outfile_write(svg, fill_plot, &t, &d) == 0) {
		rc = 0;
		goto out;
	}
fail:
	rc = d.code ? (int)d.code : 2;
	fprintf(stderr, "smsim: %s\n", d.msg);
out:
	free(table);
	free(sw);
	return rc;
}

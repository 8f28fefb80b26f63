/*
 * run: simulate one experiment and report it, with its timeline as a trace
 * file and as a picture when asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "limit.h"
#include "outfile.h"
#include "report.h"
#include "runner.h"
#include "opcounts.h"
#include "svg.h"

#define MAX_SETS 256

struct run_args {
	const char *file, *trace_file, *svg_file;
	bool json, timing, ops;
	struct setting sets[MAX_SETS];
	int nsets;
	struct svg_view view;
	const char *view_option; /* --window or --batches, when given */
};

/* --window or --batches: what --svg draws. */
static int set_view(struct run_args *a, const char *option, const char *arg)
{
	struct diag d;
	if (a->view_option) {
		fprintf(stderr, "smsim run: give one of --window and --batches, once\n");
		return 2;
	}
	if (svg_view_parse(option, arg, &a->view, &d)) {
		fprintf(stderr, "smsim run: %s\n", d.msg);
		return 2;
	}
	a->view_option = option;
	return 0;
}

/* Fills a from the command line; returns 0 or the exit status of a usage error (said on stderr). */
static int parse_args(int argc, char **argv, struct run_args *a)
{
	*a = (struct run_args){.timing = true};
	for (int i = 0; i < argc; i++) {
		const char *v = NULL;
		int got;
		if (strcmp(argv[i], "--json") == 0) {
			a->json = true;
		} else if (strcmp(argv[i], "--no-timing") == 0) {
			a->timing = false;
		} else if (strcmp(argv[i], "--ops") == 0) {
			a->ops = true;
		} else if ((got = cli_value(argc, argv, &i, "run", "--trace", &a->trace_file)) ||
			   (got = cli_value(argc, argv, &i, "run", "--svg", &a->svg_file))) {
			if (got < 0)
				return 2;
		} else if ((got = cli_value(argc, argv, &i, "run", "--window", &v))) {
			if (got < 0 || set_view(a, "--window", v))
				return 2;
		} else if ((got = cli_value(argc, argv, &i, "run", "--batches", &v))) {
			if (got < 0 || set_view(a, "--batches", v))
				return 2;
		} else if ((got = cli_value(argc, argv, &i, "run", "--set", &v))) {
			if (got < 0)
				return 2;
			if (a->nsets == MAX_SETS) {
				fprintf(stderr, "smsim run: more than %d --set options\n", MAX_SETS);
				return 2;
			}
			if (!runner_split_setting((char *)v, &a->sets[a->nsets++])) {
				fprintf(stderr, "smsim run: --set expects NAME=VALUE, not \"%s\"\n", v);
				return 2;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_unknown_option("run", argv[i]);
		} else if (!a->file) {
			a->file = argv[i];
		} else {
			fprintf(stderr, "smsim run: one experiment file at a time (got %s and %s); compare runs several\n",
				a->file, argv[i]);
			return 2;
		}
	}
	if (!a->file) {
		fprintf(stderr, "smsim run: which experiment? (smsim run EXPERIMENT.json; smsim list shows them)\n");
		return 2;
	}
	if (a->view_option && !a->svg_file) {
		fprintf(stderr, "smsim run: %s chooses what --svg draws; give --svg FILE too\n", a->view_option);
		return 2;
	}
	if (a->trace_file && a->svg_file && outfile_is_stdout(a->trace_file) && outfile_is_stdout(a->svg_file)) {
		fprintf(stderr, "smsim run: --trace and --svg cannot both be - (stdout)\n");
		return 2;
	}
	return 0;
}

struct picture {
	const struct run_args *a;
	const struct sim_report *r;
	const char *title;     /* one line: the trace's */
	const char *svg_title; /* the picture's title block: the run, then its figures on a second line */
};

static int fill_trace(FILE *f, void *ctx, struct diag *d)
{
	const struct picture *p = ctx;
	if (trace_write_chrome(p->r->trace, f, p->title, p->r->clock_ghz))
		return diag_set(d, DIAG_INPUT, "%s: write failed", p->a->trace_file);
	return 0;
}

static int fill_svg(FILE *f, void *ctx, struct diag *d)
{
	const struct picture *p = ctx;
	return svg_timeline(f, p->r->trace, p->svg_title, &p->a->view, d);
}

int cmd_run(int argc, char **argv, const char *self)
{
	(void)self;
	struct run_args *a = malloc(sizeof *a);
	if (!a) {
		fprintf(stderr, "smsim run: out of memory\n");
		return 4;
	}
	int rc = parse_args(argc, argv, a);
	if (rc) {
		free(a);
		return rc;
	}
	/* stdout carries one thing: with an output to "-", the report goes to stderr. */
	bool to_stdout = (a->trace_file && outfile_is_stdout(a->trace_file)) ||
			 (a->svg_file && outfile_is_stdout(a->svg_file));
	FILE *report = to_stdout ? stderr : stdout;
	struct experiment *e = calloc(1, sizeof *e);
	struct sim_report *r = calloc(1, sizeof *r);
	struct diag d = {0};
	rc = e && r ? runner_run(a->file, a->sets, a->nsets,
				 (a->trace_file || a->svg_file ? RUNNER_TRACE : 0) | (a->ops ? RUNNER_OP_COUNTS : 0), e, r, &d)
		    : diag_set(&d, DIAG_LIMIT, "out of memory");
	/* A deadlock, or a limit hit while running (warps were set up), still reports what ran: partial. */
	if (rc && rc != DIAG_DEADLOCK && !(rc == DIAG_LIMIT && r && r->warps && r->cycles)) {
		fprintf(stderr, "smsim: %s\n", d.msg);
		goto out;
	}
	if (a->json) {
		cJSON *o = report_json(e, r, rc, a->timing);
		cJSON *ops = opcounts_json(&e->kernel, r);
		if (o && ops)
			cJSON_AddItemToObject(o, "ops", ops);
		else
			cJSON_Delete(ops);
		char *text = cJSON_Print(o);
		if (text)
			fprintf(report, "%s\n", text);
		free(text);
		cJSON_Delete(o);
	} else {
		report_text(report, e, r, rc, a->timing);
		opcounts_text(report, &e->kernel, r);
	}
	if (rc)
		fprintf(stderr, "smsim: %s\n", d.msg);
	if (r->trace && r->trace->failed) {
		fprintf(stderr, "smsim: out of memory recording the trace\n");
		rc = DIAG_LIMIT;
	}
	/* The picture's title block: what ran, its cycles, how much was hidden and what binds. */
	char title[300], svg_title[300];
	struct limit lim;
	limit_of(r, rc, &lim);
	snprintf(title, sizeof title, "%.60s: %.60s on %.40s, %llu cycles%s, hidden fraction %.3f, binding limit %s (%.2f)",
		 e->name, r->kernel, r->machine, (unsigned long long)r->cycles, rc ? " (partial)" : "",
		 r->hidden_fraction, limit_name(&lim), lim.utilization);
	snprintf(svg_title, sizeof svg_title,
		 "%.60s: %.60s on %.40s\n%llu cycles%s · hidden fraction %.3f · binding limit %s at %.2f",
		 e->name, r->kernel, r->machine, (unsigned long long)r->cycles, rc ? " (partial)" : "", r->hidden_fraction,
		 limit_name(&lim), lim.utilization);
	struct picture p = {a, r, title, svg_title};
	struct diag wd;
	if (a->trace_file && r->trace && (rc == 0 || rc == DIAG_DEADLOCK) &&
	    outfile_write(a->trace_file, fill_trace, &p, &wd)) {
		fprintf(stderr, "smsim: %s\n", wd.msg);
		rc = DIAG_INPUT;
	}
	if (a->svg_file && r->trace && (rc == 0 || rc == DIAG_DEADLOCK) &&
	    outfile_write(a->svg_file, fill_svg, &p, &wd)) {
		fprintf(stderr, "smsim: %s\n", wd.msg);
		rc = DIAG_INPUT;
	}
	if (fflush(report) != 0 || ferror(report)) {
		fprintf(stderr, "smsim: error writing the report\n");
		rc = DIAG_INPUT;
	}
out:
	if (r) {
		trace_free(r->trace);
		free(r->op_issued);
	}
	if (e)
		experiment_free(e);
	free(e);
	free(r);
	free(a);
	return rc;
}

/*
 * compare: several runs side by side — several experiments, one experiment
 * at several --vary values, or a comparison file — as a table, JSON, and
 * their timelines stacked in one picture.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../isa/jdoc.h"
#include "cli.h"
#include "limit.h"
#include "commands.h"
#include "outfile.h"
#include "report.h"
#include "runner.h"
#include "svg.h"

#define MAX_RUNS 64
#define MAX_SETS 64
#define MAX_VARY 8

struct run_spec {
	char file[1024];
	char label[128];
	struct setting sets[MAX_SETS];
	int nsets;
	char store[MAX_SETS][2][128]; /* backing for sets */
};

struct run_result {
	int status;
	struct experiment e;
	struct sim_report r;
};

static void add_set(struct run_spec *rs, const char *name, const char *value)
{
	if (rs->nsets >= MAX_SETS)
		return;
	snprintf(rs->store[rs->nsets][0], sizeof rs->store[0][0], "%.127s", name);
	snprintf(rs->store[rs->nsets][1], sizeof rs->store[0][1], "%.127s", value);
	rs->sets[rs->nsets] = (struct setting){rs->store[rs->nsets][0], rs->store[rs->nsets][1]};
	rs->nsets++;
}

/* A comparison file: {"comparison", "description", "runs": [{"label", "experiment", "set": {...}}]}. */
static int load_comparison(const char *file, struct run_spec *specs, int *nspecs, char *title, size_t titlesz,
			   struct diag *d)
{
	struct jdoc doc;
	int rc = jdoc_load(file, &doc, d);
	if (rc)
		return rc;
	struct jpath at;
	jpath_root(&at);
	static const char *const keys[] = {"comparison", "description", "runs", "comment", NULL};
	const char *name = NULL;
	if ((rc = jdoc_check_keys(&doc, doc.root, &at, keys, d)) ||
	    (rc = jdoc_string(&doc, doc.root, &at, "comparison", true, &name, d)))
		goto out;
	snprintf(title, titlesz, "%s", name);
	const cJSON *runs = cJSON_GetObjectItemCaseSensitive(doc.root, "runs");
	size_t old = jpath_key(&at, "runs");
	if (!cJSON_IsArray(runs) || cJSON_GetArraySize(runs) < 1 || cJSON_GetArraySize(runs) > MAX_RUNS) {
		rc = jdoc_error(&doc, &at, d, "expected a list of 1 to %d runs", MAX_RUNS);
		goto out;
	}
	int i = 0;
	for (const cJSON *r = runs->child; r; r = r->next, i++) {
		size_t o2 = jpath_index(&at, i);
		static const char *const rkeys[] = {"label", "experiment", "set", "comment", NULL};
		const char *label = NULL, *exp = NULL;
		if ((rc = jdoc_check_keys(&doc, r, &at, rkeys, d)) ||
		    (rc = jdoc_string(&doc, r, &at, "experiment", true, &exp, d)) ||
		    (rc = jdoc_string(&doc, r, &at, "label", false, &label, d)))
			goto out;
		struct run_spec *rs = &specs[(*nspecs)++];
		memset(rs, 0, sizeof *rs);
		const char *slash = strrchr(file, '/');
		if (exp[0] == '/' || !slash)
			snprintf(rs->file, sizeof rs->file, "%s", exp);
		else
			snprintf(rs->file, sizeof rs->file, "%.*s/%s", (int)(slash - file), file, exp);
		snprintf(rs->label, sizeof rs->label, "%s", label ? label : exp);
		const cJSON *set = cJSON_GetObjectItemCaseSensitive(r, "set");
		if ((rc = jdoc_check_unique(&doc, r, "set", &at, d)))
			goto out;
		for (const cJSON *s = set ? set->child : NULL; s; s = s->next) {
			char value[128];
			if (cJSON_IsNumber(s))
				snprintf(value, sizeof value, "%.17g", s->valuedouble);
			else if (cJSON_IsString(s))
				snprintf(value, sizeof value, "%s", s->valuestring);
			else {
				size_t o3 = jpath_key(&at, "set");
				rc = jdoc_error(&doc, &at, d, "expected numbers or strings as values");
				jpath_pop(&at, o3);
				goto out;
			}
			add_set(rs, s->string, value);
		}
		jpath_pop(&at, o2);
	}
	jpath_pop(&at, old);
out:
	jdoc_free(&doc);
	return rc;
}

static double pct(const struct sim_report *r, int cause)
{
	uint64_t total = 0;
	for (int c = 0; c < STALL_COUNT; c++)
		total += r->stalls[c];
	return total ? 100.0 * (double)r->stalls[cause] / (double)total : 0;
}

static void print_table(FILE *out, const struct run_spec *specs, const struct run_result *res, int n)
{
	const int w = 19; /* "instruction-latency" */
	fprintf(out, "%-26s", "");
	for (int i = 0; i < n; i++)
		fprintf(out, " %*.*s", w, w, specs[i].label);
	fprintf(out, "\n%-26s", "status");
	static const char *const st[] = {"ok", "?", "error", "deadlock", "limit"};
	for (int i = 0; i < n; i++)
		fprintf(out, " %*s", w, res[i].status >= 0 && res[i].status <= 4 ? st[res[i].status] : "?");
#define ROW(name, fmt, expr)                                  \
	do {                                                  \
		fprintf(out, "\n%-26s", name);                      \
		for (int i = 0; i < n; i++) {                 \
			const struct sim_report *r = &res[i].r; \
			(void)r;                              \
			fprintf(out, " %*" fmt, w, expr);           \
		}                                             \
	} while (0)
	ROW("cycles", "llu", (unsigned long long)r->cycles);
	ROW("speedup vs first", ".2f", r->cycles ? (double)res[0].r.cycles / (double)r->cycles : 0.0);
	ROW("hidden fraction", ".3f", r->hidden_fraction);
	ROW("exposed wait (cycles)", "llu", (unsigned long long)r->exposed);
	ROW("copy latency (cycles)", "llu", (unsigned long long)r->batch_latency);
	ROW("copy unloaded (mean)", ".1f", r->copies ? (double)r->copy_unloaded_sum / (double)r->copies : 0.0);
	ROW("copy queueing (mean)", ".1f",
	    r->copies ? ((double)r->copy_latency_sum - (double)r->copy_unloaded_sum) / (double)r->copies : 0.0);
	ROW("lower bound (cycles)", "llu", (unsigned long long)r->lower_bound);
	ROW("efficiency", ".3f", r->efficiency);
	ROW("over-wait (cycles)", "llu", (unsigned long long)r->overwait_cycles);
	ROW("hazards", "llu", (unsigned long long)r->hazards);
	struct limit lim[MAX_RUNS];
	for (int i = 0; i < n; i++)
		limit_of(&res[i].r, res[i].status, &lim[i]);
	ROW("binding limit", "s", limit_name(&lim[i]));
	ROW("  utilization", ".2f", lim[i].utilization);
	ROW("  DRAM % of peak", ".1f", lim[i].dram_pct);
	ROW("  memory pipes % busy", ".1f", lim[i].mio_busy_pct);
	ROW("  issued / scheduler", ".2f", lim[i].issue_per_scheduler);
	ROW("  top stall (ncu)", "s", warpstate_key[lim[i].top]);
	fprintf(out, "\nwarp cycles by cause (%%)");
	for (int c = 0; c < STALL_COUNT; c++) {
		char name[40];
		snprintf(name, sizeof name, "  %s", stall_key[c]);
		ROW(name, ".1f", pct(r, c));
	}
#undef ROW
	fprintf(out, "\n");
}

struct picture {
	const struct trace *traces[MAX_RUNS];
	const char *labels[MAX_RUNS];
	int n;
	const char *title;
	const struct svg_view *view;
};

static int fill_svg(FILE *f, void *ctx, struct diag *d)
{
	const struct picture *p = ctx;
	return svg_compare(f, p->traces, p->labels, p->n, p->title, p->view, d);
}

/* --window or --batches: what --svg draws; 0 or 2 (said). */
static int set_view(const char *option, const char *arg, struct svg_view *view, const char **view_option)
{
	struct diag d;
	if (*view_option) {
		fprintf(stderr, "smsim compare: give one of --window and --batches, once\n");
		return 2;
	}
	if (svg_view_parse(option, arg, view, &d)) {
		fprintf(stderr, "smsim compare: %s\n", d.msg);
		return 2;
	}
	*view_option = option;
	return 0;
}

/* An experiment or a comparison file named on the command line; 0 or 2 (said). */
static int add_file(const char *file, struct run_spec *specs, int *nspecs, char *title, size_t titlesz)
{
	struct jdoc doc;
	struct diag d;
	if (jdoc_load(file, &doc, &d)) {
		fprintf(stderr, "smsim: %s\n", d.msg);
		return 2;
	}
	bool is_cmp = cJSON_GetObjectItemCaseSensitive(doc.root, "comparison") != NULL;
	jdoc_free(&doc);
	if (is_cmp) {
		if (*nspecs) {
			fprintf(stderr, "smsim compare: %s is a comparison file; give it alone\n", file);
			return 2;
		}
		if (load_comparison(file, specs, nspecs, title, titlesz, &d)) {
			fprintf(stderr, "smsim: %s\n", d.msg);
			return 2;
		}
		return 0;
	}
	if (*nspecs == MAX_RUNS) {
		fprintf(stderr, "smsim compare: at most %d runs\n", MAX_RUNS);
		return 2;
	}
	struct run_spec *rs = &specs[(*nspecs)++];
	memset(rs, 0, sizeof *rs);
	snprintf(rs->file, sizeof rs->file, "%s", file);
	const char *slash = strrchr(file, '/');
	snprintf(rs->label, sizeof rs->label, "%s", slash ? slash + 1 : file);
	char *dot = strrchr(rs->label, '.');
	if (dot)
		*dot = '\0';
	return 0;
}

/*
 * --vary NAME=V1,V2,... (repeatable): the first experiment once per combination of the values,
 * the last --vary varying fastest (as sweep does), labelled "stages=2 k=64"; 0 or 2 (said).
 */
static int expand_vary(struct run_spec *specs, int *nspecs, const char *const *vary, int nvary, char *title,
		       size_t titlesz)
{
	static char names[MAX_VARY][128], vals[MAX_VARY][MAX_RUNS][128];
	int nvals[MAX_VARY];
	int total = 1;
	for (int v = 0; v < nvary; v++) {
		char buf[1024];
		snprintf(buf, sizeof buf, "%s", vary[v]);
		char *eq = strchr(buf, '=');
		if (!eq || eq == buf || !eq[1]) {
			fprintf(stderr, "smsim compare: --vary expects NAME=V1,V2,..., not \"%s\"\n", vary[v]);
			return 2;
		}
		*eq = '\0';
		snprintf(names[v], sizeof names[v], "%.127s", buf);
		for (int u = 0; u < v; u++)
			if (!strcmp(names[u], names[v])) {
				fprintf(stderr, "smsim compare: --vary %s is given twice; give its values once (--vary %s=V1,V2,...)\n",
					names[v], names[v]);
				return 2;
			}
		nvals[v] = 0;
		size_t vn = strlen(eq + 1);
		if (eq[1] == ',' || eq[vn] == ',' || strstr(eq + 1, ",,")) { /* strtok would skip an empty value unsaid */
			fprintf(stderr, "smsim compare: --vary %s=%s: an empty value; expected V1,V2,...\n", names[v], eq + 1);
			return 2;
		}
		for (char *val = strtok(eq + 1, ","); val; val = strtok(NULL, ",")) {
			if (nvals[v] == MAX_RUNS) {
				fprintf(stderr, "smsim compare: --vary %s: at most %d values\n", names[v], MAX_RUNS);
				return 2;
			}
			snprintf(vals[v][nvals[v]++], sizeof vals[0][0], "%.127s", val);
		}
		if (!nvals[v]) {
			fprintf(stderr, "smsim compare: --vary %s has no values\n", names[v]);
			return 2;
		}
		total *= nvals[v];
		if (total > MAX_RUNS) {
			fprintf(stderr, "smsim compare: the --vary values make more than %d runs\n", MAX_RUNS);
			return 2;
		}
	}
	struct run_spec base = specs[0];
	*nspecs = 0;
	for (int run = 0; run < total; run++) {
		specs[run] = base;
		struct run_spec *rs = &specs[(*nspecs)++];
		for (int k = 0; k < rs->nsets; k++)
			rs->sets[k] = (struct setting){rs->store[k][0], rs->store[k][1]};
		size_t len = 0;
		rs->label[0] = '\0';
		for (int v = 0, stride = total; v < nvary; v++) {
			stride /= nvals[v];
			const char *val = vals[v][(run / stride) % nvals[v]];
			add_set(rs, names[v], val);
			if (len < sizeof rs->label)
				len += (size_t)snprintf(rs->label + len, sizeof rs->label - len, "%s%s=%s", v ? " " : "",
							names[v], val);
		}
	}
	size_t len = (size_t)snprintf(title, titlesz, "%s", base.label);
	for (int v = 0; v < nvary && len < titlesz; v++)
		len += (size_t)snprintf(title + len, titlesz - len, ", %s", vary[v]);
	return 0;
}

int cmd_compare(int argc, char **argv, const char *self)
{
	(void)self;
	static struct run_spec specs[MAX_RUNS];
	struct setting common[MAX_SETS];
	int ncommon = 0, nspecs = 0;
	const char *svg = NULL, *view_option = NULL, *vary[MAX_VARY];
	int nvary = 0;
	struct svg_view view = {.kind = SVG_VIEW_ALL};
	bool json = false, timing = true;
	char title[256] = "comparison";
	struct diag d = {0};
	for (int i = 0; i < argc; i++) {
		const char *v = NULL;
		int got;
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--no-timing") == 0) {
			timing = false;
		} else if ((got = cli_value(argc, argv, &i, "compare", "--svg", &svg))) {
			if (got < 0)
				return 2;
		} else if ((got = cli_value(argc, argv, &i, "compare", "--vary", &v))) {
			if (got < 0)
				return 2;
			if (nvary == MAX_VARY) {
				fprintf(stderr, "smsim compare: at most %d --vary options\n", MAX_VARY);
				return 2;
			}
			vary[nvary++] = v;
		} else if ((got = cli_value(argc, argv, &i, "compare", "--window", &v))) {
			if (got < 0 || set_view("--window", v, &view, &view_option))
				return 2;
		} else if ((got = cli_value(argc, argv, &i, "compare", "--batches", &v))) {
			if (got < 0 || set_view("--batches", v, &view, &view_option))
				return 2;
		} else if ((got = cli_value(argc, argv, &i, "compare", "--set", &v))) {
			if (got < 0)
				return 2;
			if (ncommon == MAX_SETS || !runner_split_setting((char *)v, &common[ncommon++])) {
				fprintf(stderr, "smsim compare: --set expects NAME=VALUE (at most %d)\n", MAX_SETS);
				return 2;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_unknown_option("compare", argv[i]);
		} else if (add_file(argv[i], specs, &nspecs, title, sizeof title)) {
			return 2;
		}
	}
	if (!nspecs) {
		fprintf(stderr, "smsim compare: needs experiment files or a comparison file\n");
		return 2;
	}
	if (view_option && !svg) {
		fprintf(stderr, "smsim compare: %s chooses what --svg draws; give --svg FILE too\n", view_option);
		return 2;
	}
	if (nvary && nspecs > 1) { /* expand_vary runs the first alone: the others would be dropped unsaid */
		fprintf(stderr, "smsim compare: --vary runs one experiment at several values; got %d runs (give one experiment "
				"file, or compare the runs without --vary)\n", nspecs);
		return 2;
	}
	/* stdout carries one thing: with --svg -, the table or JSON goes to stderr. */
	FILE *report = svg && outfile_is_stdout(svg) ? stderr : stdout;
	if (nvary && expand_vary(specs, &nspecs, vary, nvary, title, sizeof title))
		return 2;
	static struct run_result res[MAX_RUNS];
	int worst = 0;
	for (int i = 0; i < nspecs; i++) {
		struct setting all[2 * MAX_SETS];
		int n = 0;
		for (int k = 0; k < specs[i].nsets; k++)
			all[n++] = (struct setting){specs[i].store[k][0], specs[i].store[k][1]};
		for (int k = 0; k < ncommon; k++)
			all[n++] = common[k];
		res[i].status = runner_run(specs[i].file, all, n, svg ? RUNNER_TRACE : 0, &res[i].e, &res[i].r, &d);
		/* a limit hit while running still has a partial report (its warps ran); one hit before is an error */
		bool ran = res[i].status == 4 && res[i].r.warps && res[i].r.cycles;
		if (res[i].status == 2 || (res[i].status == 4 && !ran)) {
			fprintf(stderr, "smsim: %s: %s\n", specs[i].label, d.msg);
			for (int k = 0; k <= i; k++) {
				trace_free(res[k].r.trace);
				experiment_free(&res[k].e);
			}
			return res[i].status;
		}
		if (ran)
			fprintf(stderr, "smsim: %s: %s (its figures are partial)\n", specs[i].label, d.msg);
		if (res[i].status > worst)
			worst = res[i].status;
	}
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "comparison", title);
		cJSON *runs = cJSON_AddArrayToObject(o, "runs");
		for (int i = 0; i < nspecs; i++) {
			cJSON *r = report_json(&res[i].e, &res[i].r, res[i].status, timing);
			cJSON_AddStringToObject(r, "label", specs[i].label);
			cJSON_AddNumberToObject(r, "speedup",
						res[i].r.cycles ? (double)res[0].r.cycles / (double)res[i].r.cycles : 0);
			cJSON_AddItemToArray(runs, r);
		}
		char *text = cJSON_Print(o);
		if (text)
			fprintf(report, "%s\n", text);
		free(text);
		cJSON_Delete(o);
	} else {
		fprintf(report, "smsim compare: %s\n\n", title);
		print_table(report, specs, res, nspecs);
	}
	int rc = worst;
	if (svg) {
		struct picture p = {.n = nspecs, .title = title, .view = &view};
		for (int i = 0; i < nspecs; i++) {
			p.traces[i] = res[i].r.trace;
			p.labels[i] = specs[i].label;
		}
		if (outfile_write(svg, fill_svg, &p, &d)) {
			fprintf(stderr, "smsim: %s\n", d.msg);
			rc = 2;
		}
	}
	for (int i = 0; i < nspecs; i++) {
		trace_free(res[i].r.trace);
		experiment_free(&res[i].e);
	}
	if (fflush(report) != 0 || ferror(report)) {
		fprintf(stderr, "smsim: error writing the comparison\n");
		rc = 2;
	}
	return rc;
}

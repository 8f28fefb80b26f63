#include "compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../isa/jdoc.h"
#include "outfile.h"
#include "report.h"
#include "runner.h"
#include "svg.h"

#define MAX_RUNS 64
#define MAX_SETS 64

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

static void print_table(const struct run_spec *specs, const struct run_result *res, int n)
{
	const int w = 16;
	printf("%-26s", "");
	for (int i = 0; i < n; i++)
		printf(" %*.*s", w, w, specs[i].label);
	printf("\n%-26s", "status");
	static const char *const st[] = {"ok", "?", "error", "deadlock", "limit"};
	for (int i = 0; i < n; i++)
		printf(" %*s", w, res[i].status >= 0 && res[i].status <= 4 ? st[res[i].status] : "?");
#define ROW(name, fmt, expr)                                  \
	do {                                                  \
		printf("\n%-26s", name);                      \
		for (int i = 0; i < n; i++) {                 \
			const struct sim_report *r = &res[i].r; \
			(void)r;                              \
			printf(" %*" fmt, w, expr);           \
		}                                             \
	} while (0)
	ROW("cycles", "llu", (unsigned long long)r->cycles);
	ROW("speedup vs first", ".2f", r->cycles ? (double)res[0].r.cycles / (double)r->cycles : 0.0);
	ROW("hidden fraction", ".3f", r->hidden_fraction);
	ROW("exposed wait (cycles)", "llu", (unsigned long long)r->exposed);
	ROW("copy latency (cycles)", "llu", (unsigned long long)r->batch_latency);
	ROW("lower bound (cycles)", "llu", (unsigned long long)r->lower_bound);
	ROW("efficiency", ".3f", r->efficiency);
	ROW("over-wait (cycles)", "llu", (unsigned long long)r->overwait_cycles);
	ROW("hazards", "llu", (unsigned long long)r->hazards);
	printf("\nwarp cycles by cause (%%)");
	for (int c = 0; c < STALL_COUNT; c++) {
		char name[40];
		snprintf(name, sizeof name, "  %s", stall_key[c]);
		ROW(name, ".1f", pct(r, c));
	}
#undef ROW
	printf("\n");
}

int cmd_compare(int argc, char **argv)
{
	static struct run_spec specs[MAX_RUNS];
	struct setting common[MAX_SETS];
	int ncommon = 0, nspecs = 0;
	const char *svg = NULL, *vary = NULL;
	bool json = false, timing = true;
	char title[256] = "comparison";
	struct diag d = {0};
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--no-timing") == 0) {
			timing = false;
		} else if (strcmp(argv[i], "--svg") == 0 && i + 1 < argc) {
			svg = argv[++i];
		} else if (strcmp(argv[i], "--vary") == 0 && i + 1 < argc) {
			vary = argv[++i];
		} else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
			if (ncommon == MAX_SETS || !runner_split_setting(argv[++i], &common[ncommon++])) {
				fprintf(stderr, "smsim: --set expects NAME=VALUE\n");
				return 2;
			}
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "smsim: compare: unknown option %s\n", argv[i]);
			return 2;
		} else if (nspecs < MAX_RUNS) {
			struct jdoc doc;
			if (jdoc_load(argv[i], &doc, &d)) {
				fprintf(stderr, "smsim: %s\n", d.msg);
				return 2;
			}
			bool is_cmp = cJSON_GetObjectItemCaseSensitive(doc.root, "comparison") != NULL;
			jdoc_free(&doc);
			if (is_cmp) {
				if (load_comparison(argv[i], specs, &nspecs, title, sizeof title, &d)) {
					fprintf(stderr, "smsim: %s\n", d.msg);
					return 2;
				}
				continue;
			}
			struct run_spec *rs = &specs[nspecs++];
			memset(rs, 0, sizeof *rs);
			snprintf(rs->file, sizeof rs->file, "%s", argv[i]);
			const char *slash = strrchr(argv[i], '/');
			snprintf(rs->label, sizeof rs->label, "%s", slash ? slash + 1 : argv[i]);
			char *dot = strrchr(rs->label, '.');
			if (dot)
				*dot = '\0';
		}
	}
	if (!nspecs) {
		fprintf(stderr, "smsim: compare needs experiment files or a comparison file\n");
		return 2;
	}
	if (vary) {
		/* NAME=v1,v2,...: the first experiment once per value. */
		char buf[1024];
		snprintf(buf, sizeof buf, "%s", vary);
		char *eq = strchr(buf, '=');
		if (!eq || eq == buf) {
			fprintf(stderr, "smsim: --vary expects NAME=V1,V2,...\n");
			return 2;
		}
		*eq = '\0';
		struct run_spec base = specs[0];
		nspecs = 0;
		for (char *v = strtok(eq + 1, ","); v && nspecs < MAX_RUNS; v = strtok(NULL, ",")) {
			specs[nspecs] = base;
			struct run_spec *rs = &specs[nspecs++];
			for (int k = 0; k < rs->nsets; k++)
				rs->sets[k] = (struct setting){rs->store[k][0], rs->store[k][1]};
			add_set(rs, buf, v);
			snprintf(rs->label, sizeof rs->label, "%.60s=%.60s", buf, v);
		}
		snprintf(title, sizeof title, "%s, %s", base.label, vary);
	}
	static struct run_result res[MAX_RUNS];
	int worst = 0;
	for (int i = 0; i < nspecs; i++) {
		struct setting all[2 * MAX_SETS];
		int n = 0;
		for (int k = 0; k < specs[i].nsets; k++)
			all[n++] = (struct setting){specs[i].store[k][0], specs[i].store[k][1]};
		for (int k = 0; k < ncommon; k++)
			all[n++] = common[k];
		res[i].status = runner_run(specs[i].file, all, n, svg != NULL, &res[i].e, &res[i].r, &d);
		if (res[i].status == 2 || res[i].status == 4) {
			fprintf(stderr, "smsim: %s: %s\n", specs[i].label, d.msg);
			for (int k = 0; k <= i; k++) {
				trace_free(res[k].r.trace);
				experiment_free(&res[k].e);
			}
			return res[i].status;
		}
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
			printf("%s\n", text);
		free(text);
		cJSON_Delete(o);
	} else {
		printf("smsim compare: %s\n\n", title);
		print_table(specs, res, nspecs);
	}
	int rc = worst;
	if (svg) {
		const struct trace *traces[MAX_RUNS];
		const char *labels[MAX_RUNS];
		for (int i = 0; i < nspecs; i++) {
			traces[i] = res[i].r.trace;
			labels[i] = specs[i].label;
		}
		struct outfile of;
		if (outfile_open(&of, svg, &d) == 0) {
			svg_compare(of.f, traces, labels, nspecs, title);
			if (outfile_commit(&of, &d))
				rc = 2;
		} else {
			rc = 2;
		}
		if (rc == 2)
			fprintf(stderr, "smsim: %s\n", d.msg);
	}
	for (int i = 0; i < nspecs; i++) {
		trace_free(res[i].r.trace);
		experiment_free(&res[i].e);
	}
	if (fflush(stdout) != 0)
		rc = 2;
	return rc;
}

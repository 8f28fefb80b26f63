/*
 * main: the smsim command line.  The only place that prints diagnostics
 * and chooses exit codes: 0 ok, 2 bad input or program error, 3 simulated
 * deadlock, 4 limit exceeded.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../isa/jdoc.h"
#include "compare.h"
#include "experiment.h"
#include "outfile.h"
#include "report.h"
#include "runner.h"
#include "svg.h"

#ifndef SMSIM_VERSION
#define SMSIM_VERSION "dev"
#endif

#define MAX_SETS 256

static const char usage[] =
	"usage: smsim run EXPERIMENT.json [--set NAME=VALUE]... [--json] [--no-timing]\n"
	"                 [--trace FILE.json] [--svg FILE.svg]\n"
	"       smsim compare EXPERIMENT.json... | COMPARISON.json [--vary NAME=V1,V2,...]\n"
	"                 [--set NAME=VALUE]... [--json] [--svg FILE.svg]\n"
	"       smsim sweep SWEEP.json [-j N] [--csv FILE.csv] [--svg FILE.svg] [--shard I/N] [--list]\n"
	"       smsim merge PART.csv... [--csv FILE.csv] [--svg FILE.svg]\n"
	"       smsim plot SWEEP.json TABLE.csv [--svg FILE.svg]\n"
	"       smsim validate [REFERENCE.csv] [--max-error PERCENT] [--require-ranking] [--set NAME=VALUE]...\n"
	"       smsim calibrate DIR [-o MACHINE.json] [--name NAME]\n"
	"       smsim bench [--quick] [--reps N] [--callgrind]\n"
	"       smsim list [CONFIG_DIR]\n"
	"       smsim --help | --version\n"
	"\n"
	"Simulates one NVIDIA SM running a kernel description and reports how\n"
	"much async-copy latency was hidden and where every warp's cycles went.\n"
	"\n"
	"run      run an experiment (configs/experiments/NAME.json)\n"
	"  --set NAME=VALUE   override a kernel parameter (stages=4), the launch\n"
	"                     (block_size=128, blocks=2, grid_blocks=132), a machine\n"
	"                     field (machine.dram_latency=600) or a limit\n"
	"                     (limit.cycles=N; also limit.events, limit.loop_iterations,\n"
	"                     limit.threads, limit.memory); repeatable\n"
	"  --json             print the report as JSON\n"
	"  --no-timing        leave host timings out (byte-identical reruns)\n"
	"  --trace FILE       write the timeline as a Chrome trace-event file\n"
	"                     (Perfetto, chrome://tracing; layout: traces/README.md)\n"
	"  --svg FILE         draw the timeline: warps x cycles, copies per stage\n"
	"compare  run several experiments (or one at each --vary value, or a\n"
	"         comparison file such as configs/comparisons/stages.json) and show\n"
	"         them side by side; --svg stacks their timelines on one axis\n"
	"sweep    run the cartesian product of a sweep file's parameter lists in N\n"
	"         worker processes; CSV to stdout or --csv, line plot with --svg\n"
	"  --shard I/N        run only shard I of N (from 0: runs I, I+N, I+2N, ...)\n"
	"                     and write them as a part, for smsim merge\n"
	"  --list             print the runs (index and settings) instead of running\n"
	"merge    join the parts of a sharded sweep into the table sweep would\n"
	"         write, refusing missing, duplicated or foreign parts\n"
	"plot     draw a sweep's line plot from its table (e.g. a merged one)\n"
	"validate simulate every row of a hardware reference (default\n"
	"         traces/h100/pipelines.csv): measured vs predicted cycles per batch,\n"
	"         mean absolute error; exit 1 when it is above --max-error\n"
	"calibrate derive every machine field from a GPU's microbenchmark CSVs\n"
	"         (tests/hw/run_all.sh, run_calib.sh): traces/h100 -> h100.json\n"
	"bench    simulator speed on fixed workloads, scaling, and with --callgrind\n"
	"         host instructions per simulated warp-instruction\n"
	"list     list the shipped experiments (default: configs)\n"
	"\n"
	"exit status: 0 ok, 2 bad input or program error, 3 simulated deadlock,\n"
	"             4 a limit was exceeded\n";

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int cmd_list(const char *dir)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/experiments", dir);
	DIR *dp = opendir(path);
	if (!dp) {
		fprintf(stderr, "smsim: %s: cannot open (run from the smsim checkout, or give the configs dir)\n", path);
		return 2;
	}
	char *names[1024];
	int n = 0;
	struct dirent *de;
	while ((de = readdir(dp)) && n < 1024) {
		size_t len = strlen(de->d_name);
		if (len > 5 && strcmp(de->d_name + len - 5, ".json") == 0)
			names[n++] = strdup(de->d_name);
	}
	closedir(dp);
	qsort(names, (size_t)n, sizeof names[0], cmp_str);
	printf("%-36s %-34s %s\n", "experiment", "kernel", "description");
	for (int i = 0; i < n; i++) {
		char file[2048];
		snprintf(file, sizeof file, "%s/%s", path, names[i]);
		struct jdoc doc;
		struct diag d;
		if (jdoc_load(file, &doc, &d) == 0) {
			const cJSON *k = cJSON_GetObjectItemCaseSensitive(doc.root, "kernel");
			const cJSON *desc = cJSON_GetObjectItemCaseSensitive(doc.root, "description");
			const char *kname = cJSON_IsString(k) ? k->valuestring : "?";
			const char *slash = strrchr(kname, '/');
			printf("%-36s %-34s %s\n", file, slash ? slash + 1 : kname,
			       cJSON_IsString(desc) ? desc->valuestring : "");
			jdoc_free(&doc);
		} else {
			printf("%-36s (unreadable: %s)\n", file, d.msg);
		}
		free(names[i]);
	}
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	const char *file = NULL, *trace_file = NULL, *svg_file = NULL;
	bool json = false, timing = true;
	struct setting sets[MAX_SETS];
	int nsets = 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--no-timing") == 0) {
			timing = false;
		} else if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc) {
			trace_file = argv[++i];
		} else if (strcmp(argv[i], "--svg") == 0 && i + 1 < argc) {
			svg_file = argv[++i];
		} else if (strcmp(argv[i], "--set") == 0 || strncmp(argv[i], "--set=", 6) == 0) {
			char *arg = argv[i][5] == '=' ? argv[i] + 6 : (i + 1 < argc ? argv[++i] : NULL);
			if (nsets == MAX_SETS) {
				fprintf(stderr, "smsim: more than %d --set options\n", MAX_SETS);
				return 2;
			}
			if (!runner_split_setting(arg, &sets[nsets++])) {
				fprintf(stderr, "smsim: --set expects NAME=VALUE\n");
				return 2;
			}
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "smsim: unknown option %s\n%s", argv[i], usage);
			return 2;
		} else if (!file) {
			file = argv[i];
		} else {
			fprintf(stderr, "smsim: run takes one experiment file (got %s and %s)\n", file, argv[i]);
			return 2;
		}
	}
	if (!file) {
		fprintf(stderr, "smsim: run needs an experiment file\n%s", usage);
		return 2;
	}
	struct experiment *e = calloc(1, sizeof *e);
	struct sim_report *r = calloc(1, sizeof *r);
	struct diag d = {0};
	int rc = e && r ? runner_run(file, sets, nsets, trace_file || svg_file, e, r, &d)
			: diag_set(&d, DIAG_LIMIT, "out of memory");
	if (rc && rc != DIAG_DEADLOCK) {
		fprintf(stderr, "smsim: %s\n", d.msg);
		goto out;
	}
	if (json) {
		cJSON *o = report_json(e, r, rc, timing);
		char *text = cJSON_Print(o);
		if (text)
			printf("%s\n", text);
		free(text);
		cJSON_Delete(o);
	} else {
		report_text(stdout, e, r, rc, timing);
	}
	if (rc)
		fprintf(stderr, "smsim: %s\n", d.msg);
	if (r->trace && r->trace->failed) {
		fprintf(stderr, "smsim: out of memory recording the trace\n");
		rc = DIAG_LIMIT;
	}
	struct outfile of;
	char title[256];
	snprintf(title, sizeof title, "%s: %s on %s, %llu cycles", e->name, r->kernel, r->machine,
		 (unsigned long long)r->cycles);
	if (trace_file && r->trace && (rc == 0 || rc == DIAG_DEADLOCK)) {
		struct diag wd;
		if (outfile_open(&of, trace_file, &wd) || trace_write_chrome(r->trace, of.f, title, r->clock_ghz) ||
		    outfile_commit(&of, &wd)) {
			outfile_abort(&of);
			fprintf(stderr, "smsim: %s\n", wd.msg);
			rc = DIAG_INPUT;
		}
	}
	if (svg_file && r->trace && (rc == 0 || rc == DIAG_DEADLOCK)) {
		struct diag wd;
		if (outfile_open(&of, svg_file, &wd) == 0) {
			svg_timeline(of.f, r->trace, title);
			if (outfile_commit(&of, &wd) == 0)
				goto svg_done;
		}
		fprintf(stderr, "smsim: %s\n", wd.msg);
		rc = DIAG_INPUT;
	}
svg_done:
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "smsim: error writing the report\n");
		rc = 2;
	}
out:
	if (r)
		trace_free(r->trace);
	if (e)
		experiment_free(e);
	free(e);
	free(r);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("smsim %s\n", SMSIM_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 2, argv + 2);
	if (strcmp(argv[1], "compare") == 0)
		return cmd_compare(argc - 2, argv + 2);
	if (strcmp(argv[1], "sweep") == 0)
		return cmd_sweep(argc - 2, argv + 2);
	if (strcmp(argv[1], "merge") == 0)
		return cmd_merge(argc - 2, argv + 2);
	if (strcmp(argv[1], "plot") == 0)
		return cmd_plot(argc - 2, argv + 2);
	if (strcmp(argv[1], "bench") == 0)
		return cmd_bench(argc - 2, argv + 2, argv[0]);
	if (strcmp(argv[1], "calibrate") == 0)
		return cmd_calibrate(argc - 2, argv + 2);
	if (strcmp(argv[1], "validate") == 0)
		return cmd_validate(argc - 2, argv + 2);
	if (strcmp(argv[1], "list") == 0)
		return cmd_list(argc > 2 ? argv[2] : "configs");
	fprintf(stderr, "smsim: unknown command \"%s\"\n%s", argv[1], usage);
	return 2;
}

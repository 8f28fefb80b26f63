#include "cli.h"

#include <stdbool.h>
#include <string.h>

#include "../../isa/suggest.h"
#include "commands.h"
#include "machine.h"

#ifndef SMSIM_VERSION
#define SMSIM_VERSION "dev"
#endif

/* Options several commands share, worded once. */
#define OPT_SET                                                                                               \
	{"--set", "NAME=VALUE",                                                                               \
	 "Override a kernel parameter (stages=4), the launch (block_size=128, blocks=2, grid_blocks=132; the " \
	 "launch. prefix is optional), a machine field (machine.dram_latency=600, machine.scheduler=lrr), a "   \
	 "limit (limit.cycles, limit.events, limit.loop_iterations, limit.threads, limit.memory) or "           \
	 "check.dataflow=0; machine_set=none runs on the machine file as it is, without the experiment's "      \
	 "machine_set.  Repeatable; applied in order, after the experiment's own values.",                      \
	 "set"}
#define OPT_NO_TIMING                                                                                     \
	{"--no-timing", NULL, "Leave the host timings out of the report, so that reruns are byte-identical.", \
	 NULL}
#define OPT_CONFIGS {"--configs", "DIR", "Where experiments/NAME.json are (default: configs).", "dir"}

static const char about_outputs[] =
	"FILE - is stdout; the report then goes to stderr.  Any other FILE that is a regular file (or not there "
	"yet) is written to a temporary file beside it and renamed over it, so an interrupted run leaves no "
	"truncated file; a symbolic link is followed and its target replaced; a FIFO or a device is written "
	"straight through.  A write error is exit status 2.";

const struct cli_command cli_commands[] = {
	{
		.name = "run",
		.synopsis = "EXPERIMENT.json [OPTION]...",
		.summary = "run an experiment and report where the cycles went",
		.about = "Simulates an experiment (configs/experiments/NAME.json: a machine, a kernel, its "
			 "parameters and launch) and prints the report: cycles, the lower bound and efficiency, the "
			 "binding limit as Nsight Compute names it (with its evidence and warp-state breakdown), how "
			 "much of the copy latency was hidden behind compute, and every warp's cycles by cause.  A "
			 "kernel file (kernels/NAME.json) runs alone on the default machine with its own params and "
			 "one block of 256 threads, the report's header saying so.",
		.examples = "smsim run configs/experiments/with_staging_unified.json --set stages=4\n"
			    "smsim run configs/experiments/with_staging_unified.json --json --no-timing\n"
			    "smsim run configs/experiments/with_staging_unified.json --svg run.svg --batches 8:11\n"
			    "smsim run configs/experiments/with_staging_unified.json --trace - | gzip > run.json.gz\n"
			    "smsim run kernels/with_staging_unified.json --set k=0",
		.operands = "experiment",
		.run = cmd_run,
		.options = {
			OPT_SET,
			{"--json", NULL, "Print the report as JSON (its keys are listed in the README).", NULL},
			OPT_NO_TIMING,
			{"--ops", NULL,
			 "Also count each op's warp-instructions by class and list them (JSON: \"ops\"): what each "
			 "statement issued, to set beside the SASS of its line and ncu's per-line counts.",
			 NULL},
			{"--trace", "FILE",
			 "Write the timeline as a Chrome trace-event file, for Perfetto or chrome://tracing (layout: "
			 "traces/README.md).",
			 "json"},
			{"--svg", "FILE",
			 "Draw the timeline: a row per warp coloured by what it is doing, a row per copy-engine stage "
			 "with a bar per batch.  A long run adds a zoomed inset of its first steady-state batches.",
			 "svg"},
			{"--window", "FROM:TO",
			 "Draw only cycles FROM to TO of the run, at full width, each copy batch labelled with its "
			 "index (with --svg).",
			 NULL},
			{"--batches", "A:B",
			 "Draw only copy batches A through B: from the first copy issue of batch A to the last "
			 "landing of batch B, at full width and labelled (with --svg).",
			 NULL},
		},
	},
	{
		.name = "compare",
		.synopsis = "EXPERIMENT.json... | COMPARISON.json [OPTION]...",
		.summary = "run several experiments and show them side by side",
		.about = "Runs several experiments, one experiment at each --vary value, or a comparison file "
			 "(configs/comparisons/*.json: {\"comparison\", \"runs\": [{\"label\", \"experiment\", "
			 "\"set\"}]}), and prints them side by side: cycles, speedup against the first, hidden "
			 "fraction, exposed wait, copy latency, lower bound, efficiency, over-wait, hazards and the "
			 "stall breakdown.",
		.examples = "smsim compare configs/comparisons/stages.json --svg stages.svg\n"
			    "smsim compare configs/experiments/with_staging_unified.json --vary stages=1,2,3,4\n"
			    "smsim compare configs/comparisons/stages.json --svg zoom.svg --batches 8:11",
		.operands = "experiment",
		.run = cmd_compare,
		.options = {
			{"--vary", "NAME=V1,V2,...",
			 "Run the first experiment once per value of NAME (any name --set takes); several --vary "
			 "run every combination, labelled \"stages=2 k=64\" (the last varying fastest); a name "
			 "given twice is an error.",
			 NULL},
			OPT_SET,
			{"--json", NULL, "Print every run's full report, with its label and speedup, as JSON.", NULL},
			OPT_NO_TIMING,
			{"--svg", "FILE", "Stack the runs' timelines on one cycle axis.", "svg"},
			{"--window", "FROM:TO",
			 "Draw cycles FROM to TO of every run, on one axis at full width (with --svg).", NULL},
			{"--batches", "A:B",
			 "Draw copy batches A through B of each run at full width, each run on its own cycle axis "
			 "(with --svg).",
			 NULL},
		},
	},
	{
		.name = "sweep",
		.synopsis = "SWEEP.json [OPTION]...",
		.summary = "run every combination of parameter values; CSV and a plot",
		.about = "Runs the cartesian product of a sweep file's parameter lists (configs/sweeps/*.json: "
			 "{\"sweep\", \"experiment\", \"set\": {...}, \"vary\": {\"NAME\": [values]}, \"plot\": "
			 "{\"x\", \"y\", \"series\", \"xlabel\", \"ylabel\"}}) in worker processes and writes CSV: the "
			 "varied parameters, status, the metrics and the stall causes, one row per run, the last "
			 "parameter varying fastest and the same bytes whatever -j.  A progress line goes to stderr "
			 "when it is a terminal.  With --svg - the CSV goes to --csv's FILE, or else to stderr.\n\n"
			 "On a cluster, each task runs one shard (--shard I/N: runs I, I+N, I+2N, ...) and writes it "
			 "as a part; smsim merge joins the parts into the very bytes a single sweep writes, and "
			 "configs/sweeps/sweep.sbatch does both as a Slurm job array.",
		.examples = "smsim sweep configs/sweeps/stages_by_compute.json -j 4 --csv out.csv --svg out.svg\n"
			    "smsim sweep configs/sweeps/stages_by_compute.json --list\n"
			    "smsim sweep configs/sweeps/stages_by_compute.json --shard 2/8 --csv parts/2.csv",
		.operands = "json",
		.run = cmd_sweep,
		.options = {
			{"-j", "N", "Run N worker processes (1 to 64; default 1).", NULL},
			{"--csv", "FILE", "Write the CSV (with --shard, the part) to FILE instead of stdout.", "csv"},
			{"--svg", "FILE",
			 "Plot the plot's y against its x, one line per value of the other parameters, the axes "
			 "labelled with their units.  Not with --shard: merge the parts first.",
			 "svg"},
			{"--measured", "FILE",
			 "With --svg: draw the series measured on the hardware beside the sweep's (a CSV with the "
			 "plot's x and y columns; a column named as another varied parameter gives one series per "
			 "value).",
			 "csv"},
			{"--shard", "I/N",
			 "Run only shard I of N, counted from 0 (0 <= I < N): runs I, I+N, I+2N, ...  Writes them as a "
			 "part for smsim merge: a header with a fingerprint of the smsim version and of the sweep, "
			 "experiment, machine and kernel files, then each row with its run index in front.",
			 NULL},
			{"--list", NULL,
			 "Print the runs instead of running them, one per line: the run index, then NAME=VALUE for "
			 "each varied parameter, tab-separated (with --shard, that shard's runs).",
			 NULL},
		},
	},
	{
		.name = "merge",
		.synopsis = "PART.csv... [OPTION]...",
		.summary = "join a sharded sweep's parts into its table",
		.about = "Joins the parts that smsim sweep --shard I/N wrote (in any order; a file may hold several "
			 "parts back to back, as GNU parallel collects them) into the table a single smsim sweep "
			 "writes, byte for byte, and can draw its plot.  It refuses, saying which part and line, a "
			 "file that is no part, a part cut short, parts of different sweeps or of different versions "
			 "of the sweep's files or of smsim (their fingerprints differ), parts of different splits, "
			 "a shard or a run given twice, and runs that no part holds (naming their shards).  With "
			 "--svg - the table goes to --csv's FILE, or else to stderr.",
		.examples = "smsim merge parts/*.csv --csv stages.csv --svg stages.svg\n"
			    "parallel smsim sweep SWEEP.json --shard {}/8 ::: 0 1 2 3 4 5 6 7 > parts.csv\n"
			    "smsim merge parts.csv --csv out.csv",
		.operands = "csv",
		.run = cmd_merge,
		.options = {
			{"--csv", "FILE", "Write the merged table to FILE instead of stdout.", "csv"},
			{"--svg", "FILE", "Draw the sweep's plot, the picture smsim sweep --svg draws.", "svg"},
		},
	},
	{
		.name = "plot",
		.synopsis = "SWEEP.json TABLE.csv [OPTION]...",
		.summary = "draw a sweep's plot from its table",
		.about = "Draws the plot of a sweep from its table, made elsewhere (merged from shards, or kept "
			 "from an earlier run), as smsim sweep --svg draws it, after checking that the table is that "
			 "sweep's: its columns, and one row per run with the run's values, in run order.  A part is "
			 "refused: merge the parts first.",
		.examples = "smsim plot configs/sweeps/stages_by_compute.json merged.csv --svg stages.svg",
		.operands = "json csv",
		.run = cmd_plot,
		.options = {
			{"--svg", "FILE", "Write the picture to FILE (default: stdout).", "svg"},
		},
	},
	{
		.name = "check",
		.synopsis = "KERNEL.json [EXPERIMENT.json] [OPTION]...",
		.summary = "validate kernels and experiments without simulating",
		.about = "Loads and validates kernel descriptions and experiments without simulating, and prints "
			 "what it found: the parameters and where their values come from, the launch, every buffer "
			 "and its bytes, the pipelines and barriers, and the statements per op.  Every error goes to "
			 "stderr as FILE:LINE:COL: at JSON.PATH: what was expected, the form editors jump to.\n\n"
			 "A kernel alone is checked with its parameter defaults, one block of 256 threads and the "
			 "built-in H100 machine; given with an experiment, with that experiment's machine, launch and "
			 "parameters (instead of the experiment's own kernel).  An experiment alone is checked with "
			 "its own kernel.  Several files are checked one after another.  Exit status 0 when every "
			 "file is valid, 2 otherwise.",
		.examples = "smsim check kernels/my_kernel.json\n"
			    "smsim check kernels/my_kernel.json configs/experiments/with_staging_unified.json\n"
			    "smsim check configs/experiments/*.json",
		.operands = "experiment",
		.run = cmd_check,
		.options = {
			OPT_SET,
			{"--names", NULL,
			 "Print only the names --set takes for the file (its kernel's parameters, the launch, the "
			 "limits and the machine fields), one per line.",
			 NULL},
			{"--lowered", NULL,
			 "Also print what each op compiles to as the timing model issues it: its instruction classes, "
			 "the instructions each waits for, its anchor and flags.",
			 NULL},
		},
	},
	{
		.name = "validate",
		.synopsis = "[REFERENCE.csv]... [OPTION]...",
		.summary = "compare predictions with the H100 measurements",
		.about = "Simulates every row of the hardware references (default traces/h100/pipelines.csv, "
			 "validation.csv and validation_primitives.csv: a kernel at a launch, blocks per SM, input "
			 "source and parameters, measured on the H100) with the same settings, and prints measured "
			 "against predicted cycles per batch (the SM's span per batch where a row has it), the mean "
			 "absolute error per family (kernel x blocks per SM) and overall, and the pairs of designs "
			 "ordered differently from the hardware (same occupancy, block size, input and workload: k, R "
			 "and divergence; measured differences under 5% ignored).  A CSV with a class column (default traces/h100/ncu_limits.csv: "
			 "Nsight Compute's reading of what binds, on the H100) is read as binding-limit rows: each "
			 "configuration is simulated and smsim's binding limit set beside ncu's class, with the "
			 "agreement.  Exit status 1 when a bound set by --max-error, --max-family-error, "
			 "--require-ranking or --min-limit-agreement is not met.",
		.examples = "smsim validate\n"
			    "smsim validate traces/h100/pipelines.csv traces/h100/validation.csv --max-error 12.5\n"
			    "smsim validate traces/h100/ncu_limits.csv --min-limit-agreement 90",
		.operands = "csv",
		.run = cmd_validate,
		.options = {
			{"--max-error", "PERCENT", "Fail (exit 1) when the mean absolute error is above PERCENT.", NULL},
			{"--max-family-error", "PERCENT",
			 "Fail (exit 1) when a family's (kernel x blocks per SM) mean absolute error is above PERCENT.",
			 NULL},
			{"--require-ranking", NULL,
			 "Fail (exit 1) when two designs are ranked differently from the hardware (differences under 5% "
			 "ignored).",
			 NULL},
			{"--min-limit-agreement", "PERCENT",
			 "Fail (exit 1) when fewer than PERCENT of the binding-limit rows name ncu's class (or the "
			 "neighbouring class it accepts near a threshold).",
			 NULL},
			OPT_SET,
			OPT_CONFIGS,
		},
	},
	{
		.name = "calibrate",
		.synopsis = "DIR [OPTION]...",
		.summary = "derive a machine config from a GPU's microbenchmark CSVs",
		.about = "Reads the CSVs that tests/hw/run_all.sh, run_calib.sh and device.cu write on a GPU "
			 "(instruction classes at 1-16 warps per scheduler, memory latencies and bandwidths, "
			 "synchronisation, the device's limits and clock) and writes every field of a machine config "
			 "with its value, unit and the rows it came from.  No field is edited by hand: the shipped "
			 "configs/machines/h100.json is exactly `smsim calibrate traces/h100`.",
		.examples = "smsim calibrate traces/h100 -o configs/machines/h100.json",
		.operands = "dir",
		.run = cmd_calibrate,
		.options = {
			{"-o", "FILE", "Write the machine config to FILE (default: standard output; - is standard output).",
			 "json"},
			{"--name", "NAME", "The machine's name in the config (default h100-sxm5).", NULL},
		},
	},
	{
		.name = "bench",
		.synopsis = "[OPTION]...",
		.summary = "measure the simulator's own speed",
		.about = "Measures the simulator itself: warp-instructions and events per host second on fixed "
			 "workloads (each in its own process, the median of several runs), how the cost scales with "
			 "batches and resident warps, peak memory, and what a trace and a sweep cost.",
		.examples = "smsim bench --quick",
		.operands = NULL,
		.run = cmd_bench,
		.options = {
			{"--quick", NULL, "Two workloads at smaller sizes (the meson benchmark).", NULL},
			{"--reps", "N", "Runs per workload, the median taken (1 to 31; default 3).", NULL},
			{"--callgrind", NULL,
			 "Also count host instructions per simulated warp-instruction under valgrind's callgrind, a "
			 "figure machine noise does not move.",
			 NULL},
			OPT_CONFIGS,
		},
	},
	{
		.name = "list",
		.synopsis = "[CONFIG_DIR]",
		.summary = "list the shipped experiments",
		.about = "Lists the experiments in CONFIG_DIR/experiments (default: configs) with their kernel and "
			 "description.",
		.examples = "smsim list",
		.operands = "dir",
		.run = cmd_list,
	},
	{
		.name = "help",
		.synopsis = "[COMMAND]",
		.summary = "show a command's help",
		.about = "Prints the usage of every command, or with COMMAND that command's synopsis, description "
			 "and options (as smsim COMMAND --help does).",
		.examples = "smsim help sweep",
		.operands = "command",
		.run = cmd_help,
	},
	{0},
};

/* The options smsim takes before any command. */
static const struct cli_option global_options[] = {
	{"-h, --help", NULL, "Print the usage; after a command, that command's help.", NULL},
	{"--version", NULL, "Print the version.", NULL},
	{"--man", NULL, "Print the manual page, in roff: smsim --man | man -l -", NULL},
	{"--bash-completion", NULL, "Print the bash completion script (meson install installs it).", NULL},
};
#define N_GLOBAL_OPTIONS (sizeof global_options / sizeof global_options[0])

static const char intro[] =
	"Simulates one NVIDIA streaming multiprocessor (H100 by default) running a kernel description, a JSON "
	"program that mirrors a CUDA kernel line by line, and reports how much of the async-copy latency was "
	"hidden and where every warp's cycles went.";

static const char exit_status[] =
	"0 ok; 1 validate: a bound was not met; 2 bad input (the file, JSON path, line:column and what was "
	"expected), a program error found while simulating, or an output that could not be written; 3 the "
	"simulated kernel deadlocked (the report lists every blocked warp); 4 a limit was exceeded (the message "
	"names it and the --set that raises it).";

const struct cli_command *cli_find(const char *name)
{
	for (const struct cli_command *c = cli_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/*
 * Prints text wrapped to width columns, every line indented by indent; the
 * first line continues from column col (already printed).  Paragraphs are
 * separated by "\n\n" in text and by an empty line in the output.
 */
static void wrap(FILE *out, const char *text, int col, int indent, int width)
{
	const char *p = text;
	while (*p) {
		if (p[0] == '\n' && p[1] == '\n') {
			fprintf(out, "\n\n%*s", indent, "");
			col = indent;
			p += 2;
			continue;
		}
		if (*p == ' ' || *p == '\n') {
			p++;
			continue;
		}
		size_t len = strcspn(p, " \n");
		if (col > indent && col + 1 + (int)len > width) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, len, out);
		col += (int)len;
		p += len;
	}
	fputc('\n', out);
}

enum { WIDTH = 79, OPTION_COLUMN = 24 };

static void option_line(FILE *out, const char *names, const char *arg, const char *help)
{
	int col = fprintf(out, "  %s%s%s", names, arg ? " " : "", arg ? arg : "");
	if (col + 2 > OPTION_COLUMN) {
		fprintf(out, "\n%*s", OPTION_COLUMN, "");
	} else {
		fprintf(out, "%*s", OPTION_COLUMN - col, "");
	}
	wrap(out, help, OPTION_COLUMN, OPTION_COLUMN, WIDTH);
}

void cli_usage(FILE *out)
{
	const char *lead = "usage: ";
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		fprintf(out, "%ssmsim %s %s\n", lead, c->name, c->synopsis);
		lead = "       ";
	}
	fprintf(out, "%ssmsim COMMAND --help\n%ssmsim --help | --version | --man | --bash-completion\n\n", lead, lead);
	wrap(out, intro, 0, 0, WIDTH);
	fputs("\ncommands:\n", out);
	for (const struct cli_command *c = cli_commands; c->name; c++)
		fprintf(out, "  %-10s%s\n", c->name, c->summary);
	fputs("\noptions:\n", out);
	for (size_t i = 0; i < N_GLOBAL_OPTIONS; i++)
		option_line(out, global_options[i].name, NULL, global_options[i].help);
	fputs("\n'smsim COMMAND --help' lists a command's options.\n\nexit status: ", out);
	wrap(out, exit_status, 13, 13, WIDTH);
}

void cli_help(FILE *out, const struct cli_command *c)
{
	fprintf(out, "usage: smsim %s %s\n\n", c->name, c->synopsis);
	wrap(out, c->about, 0, 0, WIDTH);
	fputs("\noptions:\n", out);
	CLI_FOR_EACH_OPTION(c, o)
		option_line(out, o->name, o->arg, o->help);
	option_line(out, "-h, --help", NULL, "Print this help and exit.");
	/* Commands that write files say how. */
	CLI_FOR_EACH_OPTION(c, o)
		if (o->arg && strcmp(o->arg, "FILE") == 0) {
			fputc('\n', out);
			wrap(out, about_outputs, 0, 0, WIDTH);
			break;
		}
	if (c->examples) {
		fputs("\nexamples:\n", out);
		for (const char *p = c->examples; *p;) {
			size_t len = strcspn(p, "\n");
			fprintf(out, "  %.*s\n", (int)len, p);
			p += len + (p[len] == '\n');
		}
	}
	fputs("\nexit status: ", out);
	wrap(out, exit_status, 13, 13, WIDTH);
}

int cli_value(int argc, char **argv, int *i, const char *cmd, const char *name, const char **value)
{
	size_t len = strlen(name);
	const char *a = argv[*i];
	if (strncmp(a, name, len) != 0 || (a[len] != '\0' && a[len] != '='))
		return 0;
	if (a[len] == '=') {
		*value = a + len + 1;
		return 1;
	}
	if (*i + 1 >= argc) {
		const struct cli_command *c = cli_find(cmd);
		const char *arg = "a value";
		if (c) {
			CLI_FOR_EACH_OPTION(c, o)
			{
				if (strcmp(o->name, name) == 0 && o->arg)
					arg = o->arg;
			}
		}
		fprintf(stderr, "smsim %s: %s needs %s\n", cmd, name, arg);
		return -1;
	}
	*value = argv[++*i];
	return 1;
}

int cli_unknown_option(const char *cmd, const char *arg)
{
	const struct cli_command *c = cli_find(cmd);
	const char *names[CLI_MAX_OPTIONS + 2];
	int n = 0;
	if (c) {
		CLI_FOR_EACH_OPTION(c, o)
		{
			names[n++] = o->name;
		}
	}
	names[n++] = "--help";
	names[n] = NULL;
	char word[64];
	snprintf(word, sizeof word, "%.*s", (int)strcspn(arg, "="), arg);
	const char *hint = suggest_name(word, names);
	if (hint)
		fprintf(stderr, "smsim %s: unknown option %s; did you mean %s? ('smsim %s --help' lists them)\n", cmd, arg,
			hint, cmd);
	else
		fprintf(stderr, "smsim %s: unknown option %s ('smsim %s --help' lists them)\n", cmd, arg, cmd);
	return 2;
}

int cmd_help(int argc, char **argv, const char *self)
{
	(void)self;
	if (argc == 0) {
		cli_usage(stdout);
		return 0;
	}
	const struct cli_command *c = cli_find(argv[0]);
	if (!c || argc > 1) {
		fprintf(stderr, "smsim: help: %s \"%s\"; the commands are", c ? "one command at a time, not" : "no command",
			c ? argv[1] : argv[0]);
		for (const struct cli_command *k = cli_commands; k->name; k++)
			fprintf(stderr, " %s", k->name);
		fputc('\n', stderr);
		return 2;
	}
	cli_help(stdout, c);
	return 0;
}

/* --- the manual page ------------------------------------------------------ */

/* Text for roff: backslashes, minus signs and a leading dot or quote escaped. */
static void roff(FILE *out, const char *s, size_t n)
{
	bool line_start = true;
	for (size_t i = 0; i < n && s[i]; i++) {
		char ch = s[i];
		if (line_start && (ch == '.' || ch == '\''))
			fputs("\\&", out);
		if (ch == '\\')
			fputs("\\e", out);
		else if (ch == '-')
			fputs("\\-", out);
		else
			fputc(ch, out);
		line_start = ch == '\n';
	}
}

static void roff_str(FILE *out, const char *s) { roff(out, s, strlen(s)); }

/* Paragraphs: "\n\n" in the text starts a new one. */
static void roff_paragraphs(FILE *out, const char *text)
{
	for (const char *p = text; *p;) {
		const char *end = strstr(p, "\n\n");
		size_t len = end ? (size_t)(end - p) : strlen(p);
		roff(out, p, len);
		fputc('\n', out);
		p += len;
		if (*p) {
			fputs(".PP\n", out);
			p += 2;
		}
	}
}

void cli_man(FILE *out)
{
	fputs(".\\\" Generated by `smsim --man` from the help texts in sim/cli.c; edit those, not this.\n", out);
	fprintf(out, ".TH SMSIM 1 \"\" \"smsim %s\" \"User Commands\"\n", SMSIM_VERSION);
	fputs(".nh\n.SH NAME\nsmsim \\- simulate one NVIDIA SM running a CUDA kernel description\n", out);
	fputs(".SH SYNOPSIS\n.nf\n", out);
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		fprintf(out, "\\fBsmsim %s\\fR ", c->name);
		roff_str(out, c->synopsis);
		fputc('\n', out);
	}
	fputs("\\fBsmsim\\fR \\fICOMMAND\\fR \\-\\-help\n\\fBsmsim\\fR \\-\\-help | \\-\\-version | \\-\\-man | "
	      "\\-\\-bash\\-completion\n.fi\n",
	      out);
	fputs(".SH DESCRIPTION\n", out);
	roff_str(out, intro);
	fputs("\n.SH COMMANDS\n", out);
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		fprintf(out, ".SS \"smsim %s ", c->name);
		roff_str(out, c->synopsis);
		fputs("\"\n", out);
		roff_paragraphs(out, c->about);
		CLI_FOR_EACH_OPTION(c, o) {
			fputs(".TP\n\\fB", out);
			roff_str(out, o->name);
			fputs("\\fR", out);
			if (o->arg) {
				fputs(" \\fI", out);
				roff_str(out, o->arg);
				fputs("\\fR", out);
			}
			fputc('\n', out);
			roff_str(out, o->help);
			fputc('\n', out);
		}
		if (c->examples) {
			fputs(".PP\nExamples:\n.PP\n.RS\n.nf\n", out);
			roff_str(out, c->examples);
			fputs("\n.fi\n.RE\n", out);
		}
	}
	fputs(".SH OPTIONS\n", out);
	for (size_t i = 0; i < N_GLOBAL_OPTIONS; i++) {
		fputs(".TP\n\\fB", out);
		roff_str(out, global_options[i].name);
		fputs("\\fR\n", out);
		roff_str(out, global_options[i].help);
		fputc('\n', out);
	}
	fputs(".SH OUTPUT FILES\n", out);
	roff_str(out, about_outputs);
	fputs("\n.SH EXIT STATUS\n", out);
	roff_str(out, exit_status);
	fputs("\n.SH FILES\n.TP\n\\fIconfigs/experiments/*.json\\fR\nExperiments: a machine, a kernel, its "
	      "parameters and launch.\n.TP\n\\fIkernels/*.json\\fR\nKernel descriptions.\n.TP\n"
	      "\\fIconfigs/machines/*.json\\fR\nMachine configurations; every field gives its value, unit and "
	      "source.\n.TP\n\\fIconfigs/comparisons/*.json\\fR, \\fIconfigs/sweeps/*.json\\fR\nComparisons and "
	      "sweeps.\n.TP\n\\fIconfigs/sweeps/sweep.sbatch\\fR\nA sweep as a Slurm job array, one task per "
	      "shard, and the dependent job that merges the parts.\n.SH SEE ALSO\nThe README.md of the smsim source (the kernel-description language, the "
	      "report's keys, the model), traces/README.md (the trace layout) and DESIGN.md.\n",
	      out);
}

/* --- bash completion ---------------------------------------------------------- */

void cli_print_set_names(FILE *out, const char *end)
{
	static const char *const fixed[] = {"block_size",     "blocks",		"grid_blocks",	     "check.dataflow",
					    "limit.cycles",   "limit.events",	"limit.loop_iterations", "limit.threads",
					    "limit.memory",   "machine.scheduler", "machine.reconverge",    "machine.quit"};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		fprintf(out, "%s%s", fixed[i], end);
#define MACHINE_NAME(n, t, d, lo, hi, u) fprintf(out, "machine.%s%s", #n, end);
	MACHINE_FIELDS(MACHINE_NAME)
#undef MACHINE_NAME
}

void cli_bash_completion(FILE *out)
{
	fputs("# bash completion for smsim: commands, options, experiment paths and --set names.\n"
	      "# Generated by `smsim --bash-completion` from the help texts in sim/cli.c; edit those, not this.\n\n",
	      out);
	fputs("# Directories, and files ending in each extension given (\"dir\": directories only).\n"
	      "_smsim_files()\n{\n"
	      "    local IFS=$'\\n' ext\n"
	      "    compopt -o filenames 2>/dev/null\n"
	      "    COMPREPLY+=( $(compgen -d -- \"$cur\") )\n"
	      "    [[ $1 == dir ]] && return\n"
	      "    for ext in \"$@\"; do\n"
	      "        COMPREPLY+=( $(compgen -f -X \"!*.$ext\" -- \"$cur\") )\n"
	      "    done\n"
	      "}\n\n",
	      out);
	fputs("# An experiment: any .json file, and the shipped ones by name (\"with_st\" completes to\n"
	      "# configs/experiments/with_st...) when the word has no slash yet.\n"
	      "_smsim_experiments()\n{\n"
	      "    _smsim_files json\n"
	      "    if [[ $cur != */* && -d configs/experiments ]]; then\n"
	      "        local IFS=$'\\n'\n"
	      "        COMPREPLY+=( $(compgen -f -X '!*.json' -- \"configs/experiments/$cur\") )\n"
	      "    fi\n"
	      "}\n\n",
	      out);
	fputs("# --set NAME=: what smsim check --names says the experiment (or kernel) on the line takes,\n"
	      "# or else the names every experiment takes.\n"
	      "_smsim_set()\n{\n"
	      "    local names= w\n"
	      "    for w in \"${COMP_WORDS[@]:2}\"; do\n"
	      "        if [[ $w == *.json && -f $w ]]; then\n"
	      "            names=$(\"${COMP_WORDS[0]}\" check \"$w\" --names 2>/dev/null | sed 's/$/=/')\n"
	      "            break\n"
	      "        fi\n"
	      "    done\n"
	      "    [[ -n $names ]] || names=\"",
	      out);
	cli_print_set_names(out, "= ");
	fputs("\"\n"
	      "    compopt -o nospace 2>/dev/null\n"
	      "    COMPREPLY=( $(compgen -W \"$names\" -- \"$cur\") )\n}\n\n",
	      out);
	fputs("_smsim()\n{\n"
	      "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "    COMPREPLY=()\n"
	      "    if (( COMP_CWORD == 1 )); then\n"
	      "        COMPREPLY=( $(compgen -W \"",
	      out);
	for (const struct cli_command *c = cli_commands; c->name; c++)
		fprintf(out, "%s ", c->name);
	for (size_t i = 0; i < N_GLOBAL_OPTIONS; i++) /* "-h, --help": the long name */
		fprintf(out, "%s ", strrchr(global_options[i].name, ' ') ? strrchr(global_options[i].name, ' ') + 1
									   : global_options[i].name);
	fputs("\" -- \"$cur\") )\n"
	      "        return\n"
	      "    fi\n"
	      "    # the value after NAME= or FROM: (bash splits words there): typed by hand\n"
	      "    [[ $prev == = || $prev == : ]] && return\n"
	      "    local opts= operands=\n"
	      "    case ${COMP_WORDS[1]} in\n",
	      out);
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		fprintf(out, "    %s)\n        opts=\"", c->name);
		CLI_FOR_EACH_OPTION(c, o)
			fprintf(out, "%s ", o->name);
		fprintf(out, "--help\"\n        operands=\"%s\"\n", c->operands ? c->operands : "");
		bool any = false;
		CLI_FOR_EACH_OPTION(c, o) {
			if (!o->arg)
				continue;
			if (!any)
				fputs("        case $prev in\n", out);
			any = true;
			const char *what = o->complete;
			if (!what)
				fprintf(out, "        %s) return ;;\n", o->name);
			else if (strcmp(what, "set") == 0)
				fprintf(out, "        %s) _smsim_set; return ;;\n", o->name);
			else
				fprintf(out, "        %s) _smsim_files %s; return ;;\n", o->name, what);
		}
		if (any)
			fputs("        esac\n", out);
		fputs("        ;;\n", out);
	}
	fputs("    *) return ;;\n"
	      "    esac\n"
	      "    if [[ $cur == -* ]]; then\n"
	      "        COMPREPLY=( $(compgen -W \"$opts\" -- \"$cur\") )\n"
	      "        return\n"
	      "    fi\n"
	      "    case $operands in\n"
	      "    experiment) _smsim_experiments ;;\n"
	      "    command) COMPREPLY=( $(compgen -W \"",
	      out);
	for (const struct cli_command *c = cli_commands; c->name; c++)
		fprintf(out, "%s ", c->name);
	fputs("\" -- \"$cur\") ) ;;\n"
	      "    ?*) _smsim_files $operands ;;\n"
	      "    esac\n"
	      "}\n\n"
	      "complete -F _smsim smsim\n",
	      out);
}

int cli_split_csv(char *line, char **field, int max)
{
	int n = 0;
	for (char *p = line; n < max;) {
		field[n++] = p;
		char *c = strchr(p, ',');
		if (!c)
			break;
		*c = '\0';
		p = c + 1;
	}
	return n;
}

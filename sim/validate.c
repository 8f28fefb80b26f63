/*
 * validate: the simulator against the hardware reference traces.
 *
 * Every row of traces/h100/pipelines.csv (a documented example at a stage
 * count, compute length, block size and input source, measured on the H100)
 * is simulated with the same settings; the table shows measured and
 * predicted cycles per batch and the error, then the mean absolute error
 * and whether every stage count is ranked as on the hardware.  Exit status
 * 1 when the mean absolute error passes --max-error (percent).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../isa/jdoc.h"
#include "cli.h"
#include "commands.h"
#include "runner.h"

#define MAX_ROWS 1024
/* What a row sets itself (stages, block_size, k, batch_sz, grid_blocks, blocks, the L2 fraction), then --set. */
#define ROW_SETTINGS 7
#define MAX_EXTRA_SETS 64

struct row {
	char kernel[64], source[8];
	int stages, block_size, k, batch_sz, grid_blocks;
	double measured, predicted;
	int status;
};

static int parse(char *text, struct row *rows, int max, struct diag *d, const char *file)
{
	int n = 0, line = 0;
	int col_kernel = -1, col_stages = -1, col_bs = -1, col_k = -1, col_bsz = -1, col_grid = -1, col_src = -1,
	    col_cpb = -1;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		line++;
		char *f[32];
		int nf = 0;
		for (char *p = l; nf < 32;) {
			f[nf++] = p;
			char *c = strchr(p, ',');
			if (!c)
				break;
			*c = '\0';
			p = c + 1;
		}
		if (line == 1) {
			for (int i = 0; i < nf; i++) {
				if (!strcmp(f[i], "kernel"))
					col_kernel = i;
				else if (!strcmp(f[i], "stages"))
					col_stages = i;
				else if (!strcmp(f[i], "block_size"))
					col_bs = i;
				else if (!strcmp(f[i], "k"))
					col_k = i;
				else if (!strcmp(f[i], "batch_sz"))
					col_bsz = i;
				else if (!strcmp(f[i], "grid_blocks"))
					col_grid = i;
				else if (!strcmp(f[i], "source"))
					col_src = i;
				else if (!strcmp(f[i], "cycles_per_batch_median"))
					col_cpb = i;
			}
			if (col_kernel < 0 || col_stages < 0 || col_bs < 0 || col_k < 0 || col_bsz < 0 || col_src < 0 ||
			    col_cpb < 0)
				return -diag_set(d, DIAG_INPUT,
						 "%s:1: expected columns kernel, stages, block_size, k, batch_sz, source, "
						 "cycles_per_batch_median",
						 file);
			continue;
		}
		int need = col_cpb > col_src ? col_cpb : col_src;
		if (nf <= need || n >= max)
			return -diag_set(d, DIAG_INPUT, "%s:%d: expected %d columns", file, line, need + 1);
		struct row *r = &rows[n++];
		memset(r, 0, sizeof *r);
		snprintf(r->kernel, sizeof r->kernel, "%.63s", f[col_kernel]);
		snprintf(r->source, sizeof r->source, "%.7s", f[col_src]);
		r->stages = atoi(f[col_stages]);
		r->block_size = atoi(f[col_bs]);
		r->k = atoi(f[col_k]);
		r->batch_sz = atoi(f[col_bsz]);
		r->grid_blocks = col_grid >= 0 ? atoi(f[col_grid]) : 132;
		r->measured = atof(f[col_cpb]);
		if (r->measured <= 0 || r->batch_sz <= 0)
			return -diag_set(d, DIAG_INPUT, "%s:%d: expected positive cycles and batch_sz", file, line);
	}
	return n;
}

static void simulate(const char *configs, struct row *r, const struct setting *extra, int nextra)
{
	char file[1200], v[8][32];
	snprintf(file, sizeof file, "%.1000s/experiments/%.63s.json", configs, r->kernel);
	snprintf(v[0], 32, "%d", r->stages);
	snprintf(v[1], 32, "%d", r->block_size);
	snprintf(v[2], 32, "%d", r->k);
	snprintf(v[3], 32, "%d", r->batch_sz);
	snprintf(v[4], 32, "%d", r->grid_blocks);
	/* The microbenchmarks warm the input into L2 for the L2 rows and stream 1 GiB for the DRAM rows. */
	snprintf(v[5], 32, "%s", strcmp(r->source, "L2") == 0 ? "1" : "0");
	struct setting sets[ROW_SETTINGS + MAX_EXTRA_SETS] = {
		{"stages", v[0]}, {"block_size", v[1]}, {"k", v[2]}, {"batch_sz", v[3]},
		{"grid_blocks", v[4]}, {"blocks", "1"}, {"machine.l2_hit_fraction", v[5]},
	};
	int n = ROW_SETTINGS;
	for (int i = 0; i < nextra; i++)
		sets[n++] = extra[i];
	struct experiment *e = calloc(1, sizeof *e);
	struct sim_report *rep = calloc(1, sizeof *rep);
	struct diag d;
	r->status = e && rep ? runner_run(file, sets, n, false, e, rep, &d) : 4;
	if (r->status)
		fprintf(stderr, "smsim: validate %s: %s\n", r->kernel, d.msg);
	r->predicted = rep ? (double)rep->cycles / r->batch_sz : 0;
	if (e)
		experiment_free(e);
	free(e);
	free(rep);
}

/* Rank check: within one kernel, block size, k and source, stage counts must order as measured. */
static int rank_mismatches(const struct row *rows, int n, double tolerance)
{
	int bad = 0;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			const struct row *a = &rows[i], *b = &rows[j];
			if (strcmp(a->kernel, b->kernel) || strcmp(a->source, b->source) || a->block_size != b->block_size ||
			    a->k != b->k || a->stages == b->stages)
				continue;
			double dm = b->measured - a->measured, dp = b->predicted - a->predicted;
			/* Differences within the measurement's noise do not define an order. */
			if (fabs(dm) < tolerance * fmax(a->measured, b->measured))
				continue;
			if ((dm > 0) != (dp > 0)) {
				printf("  rank: %s k=%d bs=%d %s: %d stages %.0f vs %d stages %.0f measured, %.0f vs %.0f "
				       "predicted\n",
				       a->kernel, a->k, a->block_size, a->source, a->stages, a->measured, b->stages,
				       b->measured, a->predicted, b->predicted);
				bad++;
			}
		}
	return bad;
}

int cmd_validate(int argc, char **argv, const char *self)
{
	(void)self;
	const char *file = "traces/h100/pipelines.csv", *configs = "configs";
	double max_error = -1;
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
			max_error = atof(v);
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
		} else {
			file = argv[i];
		}
	}
	struct diag d;
	char *text = jdoc_read_file(file, NULL);
	if (!text) {
		fprintf(stderr, "smsim: %s: cannot read\n", file);
		return 2;
	}
	static struct row rows[MAX_ROWS];
	int n = parse(text, rows, MAX_ROWS, &d, file);
	free(text);
	if (n < 0) {
		fprintf(stderr, "smsim: %s\n", d.msg);
		return 2;
	}
	printf("%-34s %6s %5s %4s %6s %10s %10s %8s\n", "kernel", "source", "bs", "k", "stages", "measured",
	       "predicted", "error");
	double sum = 0;
	int counted = 0;
	for (int i = 0; i < n; i++) {
		struct row *r = &rows[i];
		simulate(configs, r, extra, nextra);
		if (r->status == 2)
			return 2;
		double err = 100.0 * (r->predicted - r->measured) / r->measured;
		printf("%-34s %6s %5d %4d %6d %10.1f %10.1f %+7.1f%%\n", r->kernel, r->source, r->block_size, r->k,
		       r->stages, r->measured, r->predicted, err);
		sum += fabs(err);
		counted++;
	}
	double mae = counted ? sum / counted : 0;
	printf("\nrows %d, mean absolute error %.1f%% (cycles per batch)\n", counted, mae);
	int bad = rank_mismatches(rows, n, 0.03);
	printf("stage-count ranking: %d pair(s) ordered differently from the hardware (differences under 3%% "
	       "ignored)\n",
	       bad);
	if (max_error >= 0 && mae > max_error) {
		printf("FAIL: mean absolute error %.1f%% is above the bound of %.1f%%\n", mae, max_error);
		return 1;
	}
	if (require_ranking && bad > 0) {
		printf("FAIL: %d stage-count pair(s) ranked differently from the hardware\n", bad);
		return 1;
	}
	return 0;
}

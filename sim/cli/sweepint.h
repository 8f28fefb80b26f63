/*
 * sweep internals: what running a sweep (sweep.c), joining its shards
 * (merge.c) and drawing it (sweepplot.c) share.
 *
 * A sweep is the cartesian product of named parameter lists.  Its runs are
 * numbered in one fixed order, the last parameter varying fastest, and its
 * table is CSV text: the column line, then one row per run in that order.
 * Everything downstream of the runs (merge, --svg, plot) reads that text,
 * so a table merged from shards is the same bytes as the one a single
 * `smsim sweep` writes, and draws the same picture.
 *
 * A part (`smsim sweep --shard I/N`, runs I, I+N, I+2N, ...) is the table
 * of some runs with a header and each row's run index in front:
 *
 *   # smsim sweep part 1/4
 *   # sweep: stages_by_compute
 *   # runs: 20
 *   # values: 4 5                (how many values each varied parameter has)
 *   # plot x: stages
 *   # plot y: cycles
 *   # plot x label: pipeline stages (stages)        (the axes' titles, as sweep --svg draws them)
 *   # plot y label: cycles (SM clock, whole run)
 *   # fingerprint: 0f1e2d3c4b5a6978
 *   # smsim: 0.1.0
 *   # sweep file: 89abcdef01234567 configs/sweeps/stages_by_compute.json
 *   # experiment file: ... configs/sweeps/../experiments/with_staging_unified.json
 *   # machine file: ... configs/sweeps/../experiments/../machines/h100.json
 *   # kernel file: ... configs/sweeps/../experiments/../../kernels/with_staging_unified.json
 *   run,stages,k,status,cycles,...
 *   1,1,32,ok,91780,...
 *   5,2,0,ok,...
 *
 * The fingerprint is a hash of the smsim version and of the bytes of the
 * four files (not their paths, which differ between machines); the hash
 * after each file's name says which of them differs when two parts'
 * fingerprints do.  Names and values never hold commas, quotes or control
 * characters (sweep_load refuses them), so neither the CSV nor the header
 * needs quoting.
 */
#ifndef SMSIM_SWEEPINT_H
#define SMSIM_SWEEPINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../../isa/diag.h"

#define SWEEP_MAX_VARY 8
#define SWEEP_MAX_VALUES 64
#define SWEEP_MAX_FIXED 64
#define SWEEP_MAX_RUNS 100000
#define SWEEP_MAX_SHARDS 1000000
#define SWEEP_NAME_LEN 64 /* bytes for a parameter's name or value, NUL included */
#define SWEEP_LABEL_LEN 160 /* bytes for an axis title, NUL included */

/* The first line of every part, followed by "I/N". */
#define SWEEP_PART_MAGIC "# smsim sweep part "

/* ORDER FILE: the files a fingerprint covers, "sweep", "experiment", "machine", "kernel". */
#define SWEEP_FILES 4
extern const char *const sweep_file_label[SWEEP_FILES];

struct sweep {
	char name[128];
	char experiment[1024]; /* as the runs open it: relative to the working directory */
	char fixed_name[SWEEP_MAX_FIXED][SWEEP_NAME_LEN], fixed_value[SWEEP_MAX_FIXED][128];
	int nfixed;
	char vary_name[SWEEP_MAX_VARY][SWEEP_NAME_LEN];
	char vary_value[SWEEP_MAX_VARY][SWEEP_MAX_VALUES][SWEEP_NAME_LEN];
	int nvalues[SWEEP_MAX_VARY];
	int nvary;
	char plot_x[SWEEP_NAME_LEN], plot_y[SWEEP_NAME_LEN], plot_series[SWEEP_NAME_LEN];
	char xlabel[SWEEP_LABEL_LEN], ylabel[SWEEP_LABEL_LEN]; /* the plot file's own axis titles; "" for the built-in ones */
	int runs;
};

/* A part's fingerprint from the smsim version and the hashes of the SWEEP_FILES files. */
uint64_t sweep_fingerprint_of(const char *smsim, const uint64_t hash[SWEEP_FILES]);

/* Reads a sweep file; errors name the file, line:column and JSON path. */
int sweep_load(const char *file, struct sweep *sw, struct diag *d);

/* "I/N", digits only, with 0 <= I < N <= SWEEP_MAX_SHARDS: shard I of N, counted from 0. */
bool sweep_parse_shard(const char *s, int *shard, int *nshards);

/* The index into vary_value[k] of run number run. */
int sweep_value_of(const struct sweep *sw, int run, int k);

/* The table's column line, newline included: the varied parameters, status, the metrics. */
void sweep_write_columns(FILE *out, const struct sweep *sw);

/*
 * The titles of the plot's axes, with their units: xlabel and ylabel when
 * set, else what smsim knows of plot_x (a kernel parameter, the launch, a
 * machine field) and of the metric plot_y.
 */
void sweep_axis_labels(const struct sweep *sw, char xl[SWEEP_LABEL_LEN], char yl[SWEEP_LABEL_LEN]);

/* outfile_write's fill for text already made (a table): writes the NUL-terminated text. */
int sweep_fill_text(FILE *out, void *text, struct diag *d);

/*
 * Draws plot_y against plot_x from a whole table (column line and sw->runs
 * rows, as sweep writes it), one line per combination of the other
 * parameters.  A DIAG_INPUT when plot_x or plot_y is not a column or a row
 * is missing; that the rows are sw's is the caller's to check (plot does).
 */
int sweep_plot(FILE *out, const struct sweep *sw, const char *table, const char *measured, struct diag *d);

#endif

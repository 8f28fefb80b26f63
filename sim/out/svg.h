/*
 * svg: pictures a person reads at a glance.
 *
 * A run's timeline (a row per warp coloured by what it is doing, a row per
 * copy-engine stage with a bar per batch), several runs stacked on one cycle
 * axis, and line plots for sweeps.  Each has a title, axes with ticks and
 * units, and a legend.  Timelines are drawn per pixel column, coloured by
 * the cause that took most of the column's cycles, so the file stays small
 * for long runs.
 *
 * A timeline can show part of a run at full width (a view: a cycle window
 * or a range of copy batches), its copy bars labelled with their batch
 * index.  The whole-run picture of a long run adds such a view as an inset:
 * the first few batches after the pipeline has filled, where the overlap of
 * copies and compute is at its steady state.
 *
 * For tests and scripts, each timeline panel is a <g class="timeline">
 * with data-from and data-to (its cycles, end exclusive), and each copy bar
 * carries data-batch, data-begin and data-end (the cycles drawn, inside the
 * panel's).
 */
#ifndef SMSIM_SVG_H
#define SMSIM_SVG_H

#include <stdint.h>
#include <stdio.h>

#include "../../isa/diag.h"
#include "trace.h"

/* The part of a run a timeline draws. */
enum svg_view_kind {
	SVG_VIEW_ALL,     /* the whole run (and an inset when it is long) */
	SVG_VIEW_CYCLES,  /* cycles from (inclusive) to to (exclusive) */
	SVG_VIEW_BATCHES, /* copy batches first through last: first issue of one to last landing of the other */
};

struct svg_view {
	enum svg_view_kind kind;
	uint64_t from, to;    /* SVG_VIEW_CYCLES; to == UINT64_MAX: the run's end */
	uint32_t first, last; /* SVG_VIEW_BATCHES; last == UINT32_MAX: the run's last batch */
};

/*
 * Parses the argument of --window (FROM:TO, cycles; either side may be
 * left out: "5000:" is to the end) or of --batches (A:B, batch indices,
 * both drawn).  DIAG_INPUT naming the option when it is malformed.
 */
int svg_view_parse(const char *option, const char *arg, struct svg_view *v, struct diag *d);

/* The cycles [*from, *to) a view covers in run t; DIAG_INPUT when t has no such cycles or batches. */
int svg_view_cycles(const struct svg_view *v, const struct trace *t, uint64_t *from, uint64_t *to, struct diag *d);

/* Each returns 0, DIAG_INPUT when the view does not fit a run, or DIAG_LIMIT when out of memory (d says). */
int svg_timeline(FILE *out, const struct trace *t, const char *title, const struct svg_view *v, struct diag *d);
/* A view of kind SVG_VIEW_BATCHES gives each run its own window and cycle axis; the others share one. */
int svg_compare(FILE *out, const struct trace *const *runs, const char *const *labels, int n, const char *title,
		const struct svg_view *v, struct diag *d);

struct svg_series {
	char name[96];
	int n;
	const double *x, *y;
	bool measured; /* a hardware measurement beside the simulated series: drawn dashed */
};

/* A line plot; xlabel and ylabel say what each axis is and in which unit. */
void svg_plot(FILE *out, const char *title, const char *xlabel, const char *ylabel, const struct svg_series *series,
	      int nseries);

#endif

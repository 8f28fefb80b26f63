/*
 * svg: pictures a person reads at a glance.
 *
 * A run's timeline (a row per warp coloured by what it is doing, a row per
 * copy-engine stage with a bar per batch), several runs stacked on one cycle
 * axis, and line plots for sweeps.  Each has a title, axes with ticks and a
 * legend.  Timelines are drawn per pixel column, coloured by the cause that
 * took most of the column's cycles, so the file stays small for long runs.
 */
#ifndef SMSIM_SVG_H
#define SMSIM_SVG_H

#include <stdio.h>

#include "trace.h"

struct svg_series {
	char name[96];
	int n;
	const double *x, *y;
};

void svg_timeline(FILE *out, const struct trace *t, const char *title);
void svg_compare(FILE *out, const struct trace *const *runs, const char *const *labels, int n, const char *title);
void svg_plot(FILE *out, const char *title, const char *xlabel, const char *ylabel, const struct svg_series *series,
	      int nseries);

#endif

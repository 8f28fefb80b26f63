/*
 * svg: the parts of a run a timeline draws (views), checked on traces
 * built by hand so that every expected span is known: a window holds only
 * what lies in it, at full width and without gaps, a long run gets its
 * inset of steady-state batches, and a view that misses the run is an
 * error that says what the run has.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/out/svg.h"

/* The picture's plot area, as svg.c lays it out. */
#define PLOT_LEFT 150.0
#define PLOT_RIGHT 1170.0

enum { BATCHES = 20, BATCH_EVERY = 50, BATCH_LEN = 120 };

/*
 * Two warps over 1000 cycles (one computing throughout, one issuing then
 * waiting on memory) and batches b = 0..n-1 on two stage tracks, batch b
 * from 50b to 50b + 120.
 */
static struct trace *make_trace(uint32_t batches)
{
	struct trace *t = trace_new(2, 2);
	cr_assert(t);
	snprintf(t->warps[0].name, sizeof t->warps[0].name, "block 0 warp 0");
	snprintf(t->warps[1].name, sizeof t->warps[1].name, "block 0 warp 1");
	snprintf(t->copies[0].name, sizeof t->copies[0].name, "block 0 pipe stage 0");
	snprintf(t->copies[1].name, sizeof t->copies[1].name, "block 0 pipe stage 1");
	trace_warp(t, 0, STALL_ALU, 0, 1000);
	trace_warp(t, 1, STALL_ISSUE, 0, 500);
	trace_warp(t, 1, STALL_MEMORY, 500, 1000);
	for (uint32_t b = 0; b < batches; b++)
		trace_copy(t, b % 2, b, (uint64_t)b * BATCH_EVERY, (uint64_t)b * BATCH_EVERY + BATCH_LEN);
	trace_finish(t);
	t->end = 1000;
	return t;
}

/* The picture as text (caller frees), and its return code. */
static char *draw(const struct trace *t, const struct svg_view *v, int *rc, struct diag *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert(f);
	*rc = svg_timeline(f, t, "test", v, d);
	fclose(f);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static double attr(const char *tag, const char *name)
{
	char key[40];
	snprintf(key, sizeof key, " %s=\"", name);
	const char *p = strstr(tag, key);
	cr_assert(p, "no %s in %.80s", name, tag);
	return strtod(p + strlen(key), NULL);
}

/* The n-th <g class="timeline" ...> and where it ends. */
static const char *panel(const char *svg, int n, const char **end)
{
	const char *p = svg;
	for (int i = 0; i <= n; i++) {
		p = strstr(i ? p + 1 : p, "<g class=\"timeline\"");
		if (!p)
			return NULL;
	}
	*end = strstr(p, "</g>");
	cr_assert(*end);
	return p;
}

Test(svg, views_parse_and_reject_what_is_not_a_range)
{
	struct svg_view v;
	struct diag d;
	cr_assert_eq(svg_view_parse("--window", "100:300", &v, &d), 0);
	cr_assert(v.kind == SVG_VIEW_CYCLES && v.from == 100 && v.to == 300);
	cr_assert_eq(svg_view_parse("--window", "100:", &v, &d), 0);
	cr_assert(v.from == 100 && v.to == UINT64_MAX);
	cr_assert_eq(svg_view_parse("--window", ":300", &v, &d), 0);
	cr_assert(v.from == 0 && v.to == 300);
	cr_assert_eq(svg_view_parse("--batches", "3:5", &v, &d), 0);
	cr_assert(v.kind == SVG_VIEW_BATCHES && v.first == 3 && v.last == 5);
	cr_assert_eq(svg_view_parse("--batches", "7:7", &v, &d), 0);
	const char *bad[] = {"300:100", "100:100", "a:b", "100", "1:2:3", ":", "-5:10", "1e3:2e3", ""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(svg_view_parse("--window", bad[i], &v, &d), DIAG_INPUT, "--window %s accepted", bad[i]);
		cr_assert(strstr(d.msg, "--window"), "%s", d.msg);
	}
	cr_assert_eq(svg_view_parse("--batches", "5:3", &v, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "A <= B"), "%s", d.msg);
	cr_assert_eq(svg_view_parse("--batches", "1:99999999999", &v, &d), DIAG_INPUT);
}

Test(svg, a_view_outside_the_run_says_what_the_run_has)
{
	struct trace *t = make_trace(BATCHES);
	struct svg_view v;
	struct diag d;
	uint64_t from, to;
	svg_view_parse("--window", "1000:2000", &v, &d);
	cr_assert_eq(svg_view_cycles(&v, t, &from, &to, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "1000 cycles"), "%s", d.msg);
	svg_view_parse("--window", "900:5000", &v, &d);
	cr_assert_eq(svg_view_cycles(&v, t, &from, &to, &d), 0);
	cr_assert(from == 900 && to == 1000, "a window past the end stops there: %llu-%llu", (unsigned long long)from,
		  (unsigned long long)to);
	svg_view_parse("--batches", "20:30", &v, &d);
	cr_assert_eq(svg_view_cycles(&v, t, &from, &to, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "0 to 19"), "%s", d.msg);
	svg_view_parse("--batches", "3:5", &v, &d);
	cr_assert_eq(svg_view_cycles(&v, t, &from, &to, &d), 0);
	cr_assert(from == 3 * BATCH_EVERY && to == 5 * BATCH_EVERY + BATCH_LEN, "%llu-%llu", (unsigned long long)from,
		  (unsigned long long)to);
	svg_view_parse("--batches", "18:", &v, &d);
	cr_assert_eq(svg_view_cycles(&v, t, &from, &to, &d), 0);
	cr_assert_eq(to, 19 * BATCH_EVERY + BATCH_LEN, "an open end is the last batch");
	struct trace *none = trace_new(1, 0);
	none->end = 10;
	cr_assert_eq(svg_view_cycles(&v, none, &from, &to, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "no copy batches"), "%s", d.msg);
	trace_free(none);
	trace_free(t);
}

Test(svg, a_window_draws_only_what_lies_in_it_at_full_width)
{
	struct trace *t = make_trace(BATCHES);
	struct svg_view v;
	struct diag d;
	int rc;
	svg_view_parse("--window", "100:300", &v, &d);
	char *svg = draw(t, &v, &rc, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	cr_assert_eq(count(svg, "<g class=\"timeline\""), 1, "a window has no inset");
	const char *end, *p = panel(svg, 0, &end);
	cr_assert(p);
	cr_assert_eq(attr(p, "data-from"), 100);
	cr_assert_eq(attr(p, "data-to"), 300);
	bool seen[BATCHES] = {false};
	for (const char *r = strstr(p, "<rect"); r && r < end; r = strstr(r + 1, "<rect")) {
		double x = attr(r, "x"), w = attr(r, "width");
		cr_assert(x >= PLOT_LEFT - 1e-6 && x + w <= PLOT_RIGHT + 1e-6, "a rect at %.2f+%.2f outside the plot", x, w);
		if (!strstr(r, "data-batch") || strstr(r, "data-batch") > strchr(r, '>'))
			continue;
		int b = (int)attr(r, "data-batch");
		double begin = attr(r, "data-begin"), stop = attr(r, "data-end");
		cr_assert(begin >= 100 && stop <= 300 && begin < stop, "batch %d drawn over %.0f-%.0f", b, begin, stop);
		/* what is drawn is the batch's span cut to the window */
		cr_assert_eq(begin, b * BATCH_EVERY > 100 ? b * BATCH_EVERY : 100);
		double e = b * BATCH_EVERY + BATCH_LEN;
		cr_assert_eq(stop, e < 300 ? e : 300);
		cr_assert(!seen[b], "batch %d drawn twice", b);
		seen[b] = true;
	}
	for (int b = 0; b < BATCHES; b++) {
		bool inside = b * BATCH_EVERY < 300 && b * BATCH_EVERY + BATCH_LEN > 100;
		cr_assert_eq(seen[b], inside, "batch %d: drawn %d, in the window %d", b, seen[b], inside);
	}
	cr_assert(strstr(svg, ">batch 3<"), "the bars say their batch");
	cr_assert(strstr(svg, "cycles 100\xe2\x80\x93" "300"), "the title says the window");
	free(svg);
	trace_free(t);
}

Test(svg, a_window_narrower_than_the_plot_leaves_no_gaps)
{
	struct trace *t = make_trace(BATCHES);
	struct svg_view v;
	struct diag d;
	int rc;
	svg_view_parse("--window", "10:60", &v, &d); /* 50 cycles over 1020 columns */
	char *svg = draw(t, &v, &rc, &d);
	cr_assert_eq(rc, 0);
	/* Warp 0 computes throughout, warp 1 issues throughout: one full-width bar each. */
	cr_assert_eq(count(svg, "fill=\"#59a14f\"/>"), 1, "alu, warp 0");
	cr_assert(strstr(svg, "<rect x=\"150\" y=\"44.0\" width=\"1020\""), "warp 0 is not one full-width bar");
	cr_assert_eq(count(svg, "width=\"1020\" height"), 2, "both warps span the window");
	free(svg);
	trace_free(t);
}

Test(svg, a_long_run_gets_an_inset_of_its_first_steady_batches)
{
	struct trace *t = make_trace(BATCHES);
	struct svg_view all = {.kind = SVG_VIEW_ALL};
	struct diag d;
	int rc;
	char *svg = draw(t, &all, &rc, &d);
	cr_assert_eq(rc, 0);
	cr_assert_eq(count(svg, "<g class=\"timeline\""), 2, "the whole run and its inset");
	cr_assert_eq(count(svg, "class=\"inset-mark\""), 1, "the whole run marks where the inset is");
	const char *end, *p = panel(svg, 0, &end);
	cr_assert(attr(p, "data-from") == 0 && attr(p, "data-to") == 1000);
	/* Batch 0 lands at 120; batches 1 and 2 issued before were the fill, batch 3 is the first after. */
	p = panel(svg, 1, &end);
	cr_assert_eq(attr(p, "data-from"), 3 * BATCH_EVERY);
	cr_assert_eq(attr(p, "data-to"), 6 * BATCH_EVERY + BATCH_LEN);
	cr_assert(strstr(svg, "batches 3\xe2\x80\x93" "6"), "the inset says which batches");
	free(svg);
	trace_free(t);

	t = make_trace(8);
	svg = draw(t, &all, &rc, &d);
	cr_assert_eq(count(svg, "<g class=\"timeline\""), 1, "a short run needs no inset");
	cr_assert_eq(count(svg, "inset-mark"), 0);
	cr_assert_eq(count(svg, "\">batch "), 0, "the whole run has no labels");
	free(svg);
	trace_free(t);
}

Test(svg, compare_by_batches_gives_each_run_its_window_and_names_a_run_without_them)
{
	struct trace *a = make_trace(BATCHES), *b = make_trace(6);
	const struct trace *runs[] = {a, b};
	const char *labels[] = {"long", "short"};
	struct svg_view v;
	struct diag d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	svg_view_parse("--batches", "2:4", &v, &d);
	cr_assert_eq(svg_compare(f, runs, labels, 2, "cmp", &v, &d), 0, "%s", d.msg);
	fclose(f);
	cr_assert_eq(count(buf, "<g class=\"run\""), 2);
	cr_assert_eq(count(buf, "<g class=\"timeline\" data-from=\"100\" data-to=\"320\""), 2);
	cr_assert_eq(count(buf, ">SM cycles<"), 2, "an axis per run");
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	svg_view_parse("--batches", "10:12", &v, &d);
	cr_assert_eq(svg_compare(f, runs, labels, 2, "cmp", &v, &d), DIAG_INPUT);
	fclose(f);
	cr_assert(strstr(d.msg, "short") && strstr(d.msg, "0 to 5"), "%s", d.msg);
	free(buf);

	/* A shared window reaches past the shorter run's end without an error. */
	buf = NULL;
	f = open_memstream(&buf, &len);
	svg_view_parse("--window", "200:900", &v, &d);
	cr_assert_eq(svg_compare(f, runs, labels, 2, "cmp", &v, &d), 0, "%s", d.msg);
	fclose(f);
	cr_assert_eq(count(buf, "<g class=\"timeline\" data-from=\"200\" data-to=\"900\""), 2);
	cr_assert_eq(count(buf, ">SM cycles<"), 1, "one shared axis");
	free(buf);
	trace_free(a);
	trace_free(b);
}

#include "svg.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A colour per cause (Tableau 10 and its lighter tones, exited pale), by cause so none is left out. */
static const char *const cause_colour[STALL_COUNT] = {
	[STALL_ISSUE] = "#4e79a7",	   [STALL_NOT_SELECTED] = "#bab0ac", [STALL_ALU] = "#59a14f",
	[STALL_BRANCH] = "#86bcb6",	   [STALL_PIPE_BUSY] = "#a0cbe8",    [STALL_MIO_THROTTLE] = "#8cd17d",
	[STALL_SMEM] = "#76b7b2",	   [STALL_MEMORY] = "#9c755f",	     [STALL_CONSUMER_WAIT] = "#e15759",
	[STALL_PRODUCER_ACQUIRE] = "#f28e2b", [STALL_BARRIER] = "#b07aa1",   [STALL_SYNCTHREADS] = "#edc948",
	[STALL_SYNCWARP] = "#ff9da7",	   [STALL_SLEEP] = "#d4a6c8",	     [STALL_EXITED] = "#f4f4f4",
};
_Static_assert(STALL_COUNT == 15, "a new stall cause needs its colour in cause_colour");

static const char *const series_colour[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1",
					    "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac"};

enum { WIDTH = 1200, LEFT = 150, RIGHT = 30, PLOT_W = WIDTH - LEFT - RIGHT };

/* s with XML's special characters escaped; control characters, which XML 1.0 does not allow, as U+FFFD. */
static void escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 && *s != '\t')
			fputs("&#xfffd;", out);
		else if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if (*s == '&')
			fputs("&amp;", out);
		else if (*s == '"')
			fputs("&quot;", out);
		else
			fputc(*s, out);
	}
}

static void text(FILE *out, double x, double y, const char *anchor, int size, const char *s)
{
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">", x, y, anchor, size);
	escaped(out, s);
	fputs("</text>\n", out);
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) giving about n ticks over span. */
static double nice_step(double span, int n)
{
	if (span <= 0)
		return 1;
	double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static void number(char *buf, size_t n, double v)
{
	double a = fabs(v);
	if (a >= 1e6)
		snprintf(buf, n, "%gM", v / 1e6);
	else if (a >= 1e4)
		snprintf(buf, n, "%gk", v / 1e3);
	else
		snprintf(buf, n, "%g", v);
}

static void header(FILE *out, int height, const char *title)
{
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		WIDTH, height, WIDTH, height);
	/* "TITLE\nFIGURES": a title block of two lines (a run's cycles, hidden fraction and binding limit) */
	const char *nl = strchr(title, '\n');
	if (!nl) {
		text(out, WIDTH / 2.0, 24, "middle", 16, title);
		return;
	}
	char first[512];
	snprintf(first, sizeof first, "%.*s", (int)(nl - title < 511 ? nl - title : 511), title);
	text(out, WIDTH / 2.0, 18, "middle", 15, first);
	text(out, WIDTH / 2.0, 35, "middle", 12, nl + 1);
}

/* --- views ---------------------------------------------------------------- */

/* The cycles [from, to) a timeline panel draws over the plot's width; labels: the copy bars say their batch. */
struct frame {
	uint64_t from, to;
	bool labels;
};

static double frame_x(const struct frame *f, double cycle)
{
	return LEFT + (cycle - (double)f->from) * PLOT_W / (double)(f->to - f->from);
}

/* "A:B" with either side optional; false when malformed. */
static bool parse_range(const char *arg, uint64_t *lo, uint64_t *hi, bool *has_lo, bool *has_hi)
{
	const char *colon = strchr(arg, ':');
	if (!colon || strchr(colon + 1, ':'))
		return false;
	const char *part[2] = {arg, colon + 1};
	size_t len[2] = {(size_t)(colon - arg), strlen(colon + 1)};
	uint64_t *out[2] = {lo, hi};
	bool *has[2] = {has_lo, has_hi};
	for (int i = 0; i < 2; i++) {
		*has[i] = len[i] > 0;
		*out[i] = 0;
		for (size_t k = 0; k < len[i]; k++) {
			char ch = part[i][k];
			if (ch < '0' || ch > '9' || *out[i] > (UINT64_MAX - 9) / 10)
				return false;
			*out[i] = *out[i] * 10 + (uint64_t)(ch - '0');
		}
	}
	return *has_lo || *has_hi;
}

int svg_view_parse(const char *option, const char *arg, struct svg_view *v, struct diag *d)
{
	uint64_t lo, hi;
	bool has_lo, has_hi;
	bool batches = strcmp(option, "--batches") == 0;
	*v = (struct svg_view){.kind = batches ? SVG_VIEW_BATCHES : SVG_VIEW_CYCLES};
	if (!arg || !parse_range(arg, &lo, &hi, &has_lo, &has_hi))
		return diag_set(d, DIAG_INPUT, "%s %s: expected %s", option, arg ? arg : "",
				batches ? "A:B, the first and last batch index (e.g. 8:11)"
					: "FROM:TO in cycles (e.g. 20000:30000; 20000: runs to the end)");
	if (batches) {
		if (!has_hi)
			hi = UINT32_MAX;
		if (lo > hi || hi > UINT32_MAX)
			return diag_set(d, DIAG_INPUT, "%s %s: expected A <= B, batch indices below 2^32", option, arg);
		v->first = (uint32_t)lo;
		v->last = (uint32_t)hi;
		return 0;
	}
	if (!has_hi)
		hi = UINT64_MAX;
	if (lo >= hi)
		return diag_set(d, DIAG_INPUT, "%s %s: expected FROM < TO", option, arg);
	v->from = lo;
	v->to = hi;
	return 0;
}

/* The last batch index any copy track has, plus one (0: no copies). */
static uint32_t batch_count(const struct trace *t)
{
	uint32_t n = 0;
	for (uint32_t c = 0; c < t->ncopies; c++)
		for (uint32_t i = 0; i < t->copies[c].n; i++)
			if (t->copies[c].spans[i].what >= n)
				n = t->copies[c].spans[i].what + 1;
	return n;
}

/* From the first copy issue of batch first to the last landing of batch last, over every track; false: none. */
static bool batch_cycles(const struct trace *t, uint32_t first, uint32_t last, uint64_t *from, uint64_t *to)
{
	bool any = false;
	for (uint32_t c = 0; c < t->ncopies; c++)
		for (uint32_t i = 0; i < t->copies[c].n; i++) {
			const struct trace_span *s = &t->copies[c].spans[i];
			if (s->what < first || s->what > last)
				continue;
			if (!any || s->begin < *from)
				*from = s->begin;
			if (!any || s->end > *to)
				*to = s->end;
			any = true;
		}
	if (any && *to <= *from)
		*to = *from + 1;
	return any;
}

int svg_view_cycles(const struct svg_view *v, const struct trace *t, uint64_t *from, uint64_t *to, struct diag *d)
{
	uint64_t end = t->end ? t->end : 1;
	switch (v->kind) {
	case SVG_VIEW_ALL:
		*from = 0;
		*to = end;
		return 0;
	case SVG_VIEW_CYCLES:
		if (v->from >= end)
			return diag_set(d, DIAG_INPUT, "--window: cycle %llu is past the run's end (%llu cycles)",
					(unsigned long long)v->from, (unsigned long long)end);
		*from = v->from;
		*to = v->to < end ? v->to : end;
		return 0;
	case SVG_VIEW_BATCHES: {
		uint32_t n = batch_count(t);
		if (!n)
			return diag_set(d, DIAG_INPUT, "--batches: the run has no copy batches to draw");
		uint32_t last = v->last < n ? v->last : n - 1;
		if (v->first >= n || !batch_cycles(t, v->first, last, from, to))
			return diag_set(d, DIAG_INPUT, "--batches %u:%u: the run's copy batches are 0 to %u", v->first,
					v->last, n - 1);
		return 0;
	}
	}
	return diag_set(d, DIAG_INPUT, "svg: unknown view");
}

/* A run with at least this many batches gets a zoomed inset of INSET_BATCHES of them. */
enum { LONG_RUN_BATCHES = 16, INSET_BATCHES = 4 };

/*
 * The inset of a long run: the first INSET_BATCHES batches issued after the
 * first batch landed.  Those before were the pipeline filling, issued back
 * to back; from there on a batch issues when a consumer frees its stage, the
 * steady state the picture is there to show.  False when the run is short.
 */
static bool steady_batches(const struct trace *t, uint32_t *first, uint32_t *last)
{
	uint32_t n = batch_count(t);
	uint64_t from, landed;
	if (n < LONG_RUN_BATCHES || !batch_cycles(t, 0, 0, &from, &landed))
		return false;
	/* the first landing of batch 0, on any track */
	for (uint32_t c = 0; c < t->ncopies; c++)
		for (uint32_t i = 0; i < t->copies[c].n; i++)
			if (t->copies[c].spans[i].what == 0 && t->copies[c].spans[i].end < landed)
				landed = t->copies[c].spans[i].end;
	for (uint32_t b = 1; b + INSET_BATCHES <= n; b++) {
		uint64_t issue, end;
		if (batch_cycles(t, b, b, &issue, &end) && issue >= landed) {
			*first = b;
			*last = b + INSET_BATCHES - 1;
			return true;
		}
	}
	return false;
}

/* --- timelines --------------------------------------------------------------- */

static void cycle_axis(FILE *out, double y, const struct frame *f)
{
	fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>\n", LEFT, y, LEFT + PLOT_W, y);
	double span = (double)(f->to - f->from);
	double step = nice_step(span, 10);
	for (double c = ceil((double)f->from / step) * step; c <= (double)f->to + 0.5; c += step) {
		double x = frame_x(f, c);
		char buf[32];
		number(buf, sizeof buf, c);
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", x, y, x, y + 5);
		text(out, x, y + 18, "middle", 11, buf);
	}
	text(out, LEFT + PLOT_W / 2.0, y + 34, "middle", 12, "SM cycles");
}

static void legend(FILE *out, double y, bool labels)
{
	double x = LEFT;
	for (int c = 0; c < STALL_COUNT; c++) {
		if (x + 30 + 7.0 * (double)strlen(stall_key[c]) > WIDTH - 20) {
			x = LEFT;
			y += 18;
		}
		fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\" stroke=\"#999\"/>\n", x,
			y, cause_colour[c]);
		text(out, x + 16, y + 10, "start", 11, stall_key[c]);
		x += 30 + 7.0 * (double)strlen(stall_key[c]);
	}
	const char *copy = labels ? "copy batch in flight (its index)" : "copy batch in flight";
	if (x + 60 + 6.0 * (double)strlen(copy) > WIDTH - 20) {
		x = LEFT;
		y += 18;
	}
	fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"#4e79a7\" fill-opacity=\"0.55\"/>\n", x, y);
	text(out, x + 16, y + 10, "start", 11, copy);
}

/* How many rows legend() takes from y, for the picture's height. */
enum { LEGEND_H = 44 };

/*
 * One warp row: per pixel column, the cause that took most of its cycles.  A
 * spread op's parts are spread evenly over its length: where in it each slot
 * fell is not recorded.  A column covers a fraction of a cycle when the
 * frame is narrower than the plot, so cycles are shared out by overlap.
 */
static void warp_row(FILE *out, const struct trace_timeline *tr, double y, double h, const struct frame *f, double *acc)
{
	memset(acc, 0, sizeof(double) * PLOT_W * STALL_COUNT);
	double per_px = (double)(f->to - f->from) / PLOT_W;
	struct trace_cursor cur = trace_cursor(tr);
	struct trace_slice s;
	while (trace_next_span(&cur, &s)) {
		if (s.end <= f->from)
			continue;
		if (s.begin >= f->to)
			break;
		double len = (double)(s.end - s.begin);
		double b = (double)((s.begin > f->from ? s.begin : f->from) - f->from);
		double e = (double)((s.end < f->to ? s.end : f->to) - f->from);
		int px0 = (int)(b / per_px), px1 = (int)ceil(e / per_px);
		if (px1 > PLOT_W)
			px1 = PLOT_W;
		for (int px = px0; px < px1; px++) {
			double lo = fmax(b, px * per_px), hi = fmin(e, (px + 1) * per_px);
			if (hi <= lo)
				continue;
			double part = hi - lo, *col = &acc[px * STALL_COUNT];
			for (int c = 0; c < STALL_COUNT; c++)
				if (s.parts[c])
					col[c] += part * (double)s.parts[c] / len;
		}
	}
	int run_start = 0, run_cause = -1;
	for (int px = 0; px <= PLOT_W; px++) {
		int best = -1;
		double most = 0;
		for (int c = 0; px < PLOT_W && c < STALL_COUNT; c++)
			if (acc[px * STALL_COUNT + c] > most) {
				most = acc[px * STALL_COUNT + c];
				best = c;
			}
		if (best != run_cause || px == PLOT_W) {
			if (run_cause >= 0)
				fprintf(out, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"/>\n",
					LEFT + run_start, y, px - run_start, h, cause_colour[run_cause]);
			run_start = px;
			run_cause = best;
		}
	}
}

/* A bar per batch that overlaps the frame, cut to it; labelled with the batch index where it fits. */
static void copy_row(FILE *out, const struct trace_track *tr, double y, double h, const struct frame *f)
{
	for (uint32_t i = 0; i < tr->n; i++) {
		const struct trace_span *s = &tr->spans[i];
		if (s->end <= f->from || s->begin >= f->to)
			continue;
		uint64_t b = s->begin > f->from ? s->begin : f->from, e = s->end < f->to ? s->end : f->to;
		double x = frame_x(f, (double)b), w = frame_x(f, (double)e) - x;
		fprintf(out,
			"<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"0.55\" "
			"stroke=\"#333\" stroke-width=\"0.3\" data-batch=\"%u\" data-begin=\"%llu\" data-end=\"%llu\">"
			"<title>batch %u: cycles %llu-%llu</title></rect>\n",
			x, y, w < 0.5 ? 0.5 : w, h, s->what % 2 ? "#a0cbe8" : "#4e79a7", s->what, (unsigned long long)b,
			(unsigned long long)e, s->what, (unsigned long long)s->begin, (unsigned long long)s->end);
		if (!f->labels || h < 8)
			continue;
		char label[32];
		snprintf(label, sizeof label, w >= 64 ? "batch %u" : "%u", s->what);
		if (w >= 6.5 * (double)strlen(label) + 4)
			text(out, x + w / 2, y + h * 0.5 + 4, "middle", h >= 12 ? 10 : 8, label);
	}
}

static uint32_t used_copy_rows(const struct trace *t)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->ncopies; i++)
		n += t->copies[i].n > 0;
	return n;
}

/* Draws one run from y, in a <g class="timeline"> that says its cycles; returns the height used. */
static double draw_run(FILE *out, const struct trace *t, double y, double max_h, const struct frame *f, double *acc)
{
	uint32_t rows = t->nwarps + used_copy_rows(t);
	double h = max_h / (rows ? rows : 1);
	if (h > 14)
		h = 14;
	if (h < 1)
		h = 1;
	/* Copy rows stay tall enough for their labels. */
	double hc = f->labels && h < 12 ? 12 : h;
	double y0 = y;
	fprintf(out, "<g class=\"timeline\" data-from=\"%llu\" data-to=\"%llu\">\n", (unsigned long long)f->from,
		(unsigned long long)f->to);
	for (uint32_t w = 0; w < t->nwarps; w++, y += h) {
		warp_row(out, &t->warps[w], y, h * 0.9, f, acc);
		if (h >= 7 || w % (uint32_t)ceil(8 / h) == 0)
			text(out, LEFT - 6, y + h * 0.8, "end", h >= 9 ? 10 : 8, t->warps[w].name);
	}
	for (uint32_t c = 0; c < t->ncopies; c++) {
		if (!t->copies[c].n)
			continue;
		copy_row(out, &t->copies[c], y, hc * 0.9, f);
		text(out, LEFT - 6, y + hc * 0.8, "end", hc >= 9 ? 10 : 8, t->copies[c].name);
		y += hc;
	}
	fputs("</g>\n", out);
	return y - y0;
}

/* The height draw_run takes for t within max_h. */
static double run_height(const struct trace *t, double max_h, bool labels)
{
	uint32_t rows = t->nwarps + used_copy_rows(t);
	double h = max_h / (rows ? rows : 1);
	h = h > 14 ? 14 : h < 1 ? 1 : h;
	double hc = labels && h < 12 ? 12 : h;
	return t->nwarps * h + used_copy_rows(t) * hc;
}

/* A view's cycles as words: " — batches 8–11, cycles 5200–7400". */
static void view_words(char *buf, size_t n, const struct svg_view *v, const struct frame *f)
{
	if (v->kind == SVG_VIEW_BATCHES)
		snprintf(buf, n, " \xe2\x80\x94 batches %u\xe2\x80\x93%u, cycles %llu\xe2\x80\x93%llu", v->first,
			 v->last == UINT32_MAX ? v->first : v->last, (unsigned long long)f->from, (unsigned long long)f->to);
	else if (v->kind == SVG_VIEW_CYCLES)
		snprintf(buf, n, " \xe2\x80\x94 cycles %llu\xe2\x80\x93%llu", (unsigned long long)f->from,
			 (unsigned long long)f->to);
	else
		buf[0] = '\0';
}

int svg_timeline(FILE *out, const struct trace *t, const char *title, const struct svg_view *v, struct diag *d)
{
	struct frame f = {0};
	int rc = svg_view_cycles(v, t, &f.from, &f.to, d);
	if (rc)
		return rc;
	f.labels = v->kind != SVG_VIEW_ALL;
	struct svg_view iv = {.kind = SVG_VIEW_BATCHES};
	struct frame fi = {.labels = true};
	bool inset = v->kind == SVG_VIEW_ALL && steady_batches(t, &iv.first, &iv.last) &&
		     svg_view_cycles(&iv, t, &fi.from, &fi.to, NULL) == 0;
	double *acc = malloc(sizeof(double) * PLOT_W * STALL_COUNT);
	if (!acc)
		return diag_set(d, DIAG_LIMIT, "out of memory drawing the timeline");
	uint32_t rows = t->nwarps + used_copy_rows(t);
	double body = rows * 14.0 > 700 ? 700 : rows * 14.0, inset_body = rows * 14.0 > 420 ? 420 : rows * 14.0;
	double main_h = run_height(t, body, f.labels), inset_h = inset ? run_height(t, inset_body, true) : 0;
	int height = (int)(50 + main_h + 60 + (inset ? 30 + inset_h + 60 : 0) + LEGEND_H);
	char full[512], words[160];
	view_words(words, sizeof words, v, &f);
	const char *nl = strchr(title, '\n'); /* the view's words end the first line of a title block */
	if (nl)
		snprintf(full, sizeof full, "%.*s%s%.200s", (int)(nl - title < 300 ? nl - title : 300), title, words, nl);
	else
		snprintf(full, sizeof full, "%.300s%s", title, words);
	header(out, height, full);
	double y = 44, used = draw_run(out, t, y, body, &f, acc);
	if (inset) {
		/* Where the inset is, on the whole run. */
		double x0 = frame_x(&f, (double)fi.from), x1 = frame_x(&f, (double)fi.to);
		fprintf(out,
			"<rect class=\"inset-mark\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
			"stroke=\"black\" stroke-dasharray=\"4 2\"/>\n",
			x0 - 1, y - 2, x1 - x0 + 2, used + 4);
	}
	cycle_axis(out, y + used + 4, &f);
	y += used + 60;
	if (inset) {
		char what[160];
		view_words(what, sizeof what, &iv, &fi);
		char line[256];
		snprintf(line, sizeof line, "zoomed in (dashed box above)%s: the first batches after the pipeline filled",
			 what);
		text(out, LEFT, y + 8, "start", 13, line);
		used = draw_run(out, t, y + 20, inset_body, &fi, acc);
		cycle_axis(out, y + 24 + used, &fi);
		y += 20 + used + 60;
	}
	legend(out, y, f.labels || inset);
	fputs("</svg>\n", out);
	free(acc);
	return 0;
}

int svg_compare(FILE *out, const struct trace *const *runs, const char *const *labels, int n, const char *title,
		const struct svg_view *v, struct diag *d)
{
	struct frame *frames = calloc((size_t)(n ? n : 1), sizeof *frames);
	double *acc = malloc(sizeof(double) * PLOT_W * STALL_COUNT);
	int rc = 0;
	if (!frames || !acc) {
		rc = diag_set(d, DIAG_LIMIT, "out of memory drawing the comparison");
		goto out;
	}
	/* One axis for all, unless each run shows its own batches. */
	bool own_axis = v->kind == SVG_VIEW_BATCHES;
	uint64_t cycles = 1;
	for (int i = 0; i < n; i++)
		if (runs[i]->end > cycles)
			cycles = runs[i]->end;
	for (int i = 0; i < n; i++) {
		struct trace whole = *runs[i];
		whole.end = cycles; /* a shared window may run past a shorter run's end */
		if ((rc = svg_view_cycles(v, own_axis ? runs[i] : &whole, &frames[i].from, &frames[i].to, d))) {
			size_t len = strlen(d->msg);
			snprintf(d->msg + len, sizeof d->msg - len, " (run %s)", labels[i]);
			goto out;
		}
		frames[i].labels = v->kind != SVG_VIEW_ALL;
	}
	double band = 180, axis_h = own_axis ? 44 : 0, body = 0;
	for (int i = 0; i < n; i++)
		body += 30 + run_height(runs[i], band, frames[i].labels) + axis_h;
	int height = (int)(44 + body + 50 + LEGEND_H);
	char full[512], words[160];
	view_words(words, sizeof words, v, n ? &frames[0] : &(struct frame){0, 1, false});
	snprintf(full, sizeof full, "%.300s%s", title, own_axis ? "" : words);
	header(out, height, full);
	double y = 44;
	for (int i = 0; i < n; i++) {
		const struct frame *f = &frames[i];
		char label[256];
		snprintf(label, sizeof label, "%.120s — %llu cycles", labels[i], (unsigned long long)runs[i]->end);
		if (own_axis) {
			size_t len = strlen(label);
			view_words(label + len, sizeof label - len, v, f);
		}
		fprintf(out, "<g class=\"run\" data-label=\"%d\">\n", i);
		text(out, LEFT, y + 14, "start", 13, label);
		double used = draw_run(out, runs[i], y + 20, band, f, acc);
		/* Where this run ends, on the shared axis. */
		if (runs[i]->end > f->from && runs[i]->end <= f->to) {
			double xe = frame_x(f, (double)runs[i]->end);
			fprintf(out,
				"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\" "
				"stroke-dasharray=\"4 3\"/>\n",
				xe, y + 16, xe, y + 22 + used);
		}
		if (own_axis)
			cycle_axis(out, y + 24 + used, f);
		fputs("</g>\n", out);
		y += 30 + used + axis_h;
	}
	if (!own_axis)
		cycle_axis(out, y, &frames[0]);
	legend(out, y + 50, v->kind != SVG_VIEW_ALL);
	fputs("</svg>\n", out);
out:
	free(frames);
	free(acc);
	return rc;
}

void svg_plot(FILE *out, const char *title, const char *xlabel, const char *ylabel, const struct svg_series *series,
	      int nseries)
{
	enum { H = 560, TOP = 50, BOTTOM = 70, PW = 820, PL = 110 };
	double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
	for (int s = 0; s < nseries; s++)
		for (int i = 0; i < series[s].n; i++) {
			xmin = fmin(xmin, series[s].x[i]);
			xmax = fmax(xmax, series[s].x[i]);
			ymax = fmax(ymax, series[s].y[i]);
		}
	if (!isfinite(xmin)) {
		xmin = 0;
		xmax = 1;
	}
	bool logx = xmin > 0 && xmax / xmin >= 16;
	double lx0 = logx ? log2(xmin) : xmin, lx1 = logx ? log2(xmax) : xmax;
	if (lx1 <= lx0)
		lx1 = lx0 + 1;
	double ystep = nice_step(ymax > 0 ? ymax : 1, 6);
	double ytop = ceil((ymax > 0 ? ymax * 1.05 : 1) / ystep) * ystep;
	int ph = H - TOP - BOTTOM;
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		WIDTH, H, WIDTH, H);
	text(out, PL + PW / 2.0, 28, "middle", 16, title);
#define PX(v) (PL + ((logx ? log2(v) : (v)) - lx0) * PW / (lx1 - lx0))
#define PY(v) (TOP + ph - (v) * ph / ytop)
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\"/>\n", PL, TOP, PW, ph);
	for (double v = 0; v <= ytop + ystep / 2; v += ystep) {
		char buf[32];
		number(buf, sizeof buf, v);
		fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", PL, PY(v), PL + PW, PY(v));
		text(out, PL - 8, PY(v) + 4, "end", 11, buf);
	}
	/* x ticks at the data's x values (parameters are few and discrete) */
	for (int s = 0; s < nseries; s++)
		for (int i = 0; i < series[s].n; i++) {
			bool seen = false;
			for (int t = 0; t < s && !seen; t++)
				for (int j = 0; j < series[t].n; j++)
					seen = seen || series[t].x[j] == series[s].x[i];
			for (int j = 0; j < i && !seen; j++)
				seen = series[s].x[j] == series[s].x[i];
			if (seen)
				continue;
			char buf[32];
			number(buf, sizeof buf, series[s].x[i]);
			double x = PX(series[s].x[i]);
			fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\"/>\n", x, TOP + ph, x,
				TOP + ph + 5);
			text(out, x, TOP + ph + 18, "middle", 11, buf);
		}
	char xl[160];
	snprintf(xl, sizeof xl, "%s%s", xlabel, logx ? " (log scale)" : "");
	text(out, PL + PW / 2.0, H - 22, "middle", 13, xl);
	fprintf(out, "<text x=\"24\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 24 %.1f)\">",
		TOP + ph / 2.0, TOP + ph / 2.0);
	escaped(out, ylabel);
	fputs("</text>\n", out);
	for (int s = 0; s < nseries; s++) {
		const char *col = series_colour[s % 10];
		fputs("<g class=\"series\" data-name=\"", out);
		escaped(out, series[s].name);
		fprintf(out, "\">\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", col,
			series[s].measured ? " stroke-dasharray=\"6 3\"" : "");
		for (int i = 0; i < series[s].n; i++)
			fprintf(out, "%.1f,%.1f ", PX(series[s].x[i]), PY(series[s].y[i]));
		fputs("\"/>\n", out);
		for (int i = 0; i < series[s].n; i++)
			fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", PX(series[s].x[i]),
				PY(series[s].y[i]), col);
		fputs("</g>\n", out);
		double ly = TOP + 10 + s * 20;
		fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>\n",
			PL + PW + 14, ly, PL + PW + 38, ly, col);
		text(out, PL + PW + 44, ly + 4, "start", 12, series[s].name);
	}
#undef PX
#undef PY
	fputs("</svg>\n", out);
}

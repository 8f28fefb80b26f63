#include "svg.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ORDER STALL: a colour per cause (Tableau 10 and its lighter tones, exited pale). */
static const char *const cause_colour[STALL_COUNT] = {
	"#4e79a7", "#bab0ac", "#59a14f", "#a0cbe8", "#8cd17d", "#76b7b2", "#9c755f",
	"#e15759", "#f28e2b", "#b07aa1", "#edc948", "#ff9da7", "#d4a6c8", "#f4f4f4",
};

static const char *const series_colour[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1",
					    "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac"};

enum { WIDTH = 1200, LEFT = 150, RIGHT = 30, PLOT_W = WIDTH - LEFT - RIGHT };

static void text(FILE *out, double x, double y, const char *anchor, int size, const char *s)
{
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">", x, y, anchor, size);
	for (; *s; s++) {
		if (*s == '<')
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
	text(out, WIDTH / 2.0, 24, "middle", 16, title);
}

static void cycle_axis(FILE *out, double y, uint64_t cycles)
{
	fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>\n", LEFT, y, LEFT + PLOT_W, y);
	double step = nice_step((double)cycles, 10);
	for (double c = 0; c <= (double)cycles + 0.5; c += step) {
		double x = LEFT + c * PLOT_W / (double)(cycles ? cycles : 1);
		char buf[32];
		number(buf, sizeof buf, c);
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", x, y, x, y + 5);
		text(out, x, y + 18, "middle", 11, buf);
	}
	text(out, LEFT + PLOT_W / 2.0, y + 34, "middle", 12, "SM cycles");
}

static void legend(FILE *out, double y)
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
	if (x + 180 > WIDTH - 20) {
		x = LEFT;
		y += 18;
	}
	fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"#4e79a7\" fill-opacity=\"0.55\"/>\n", x, y);
	text(out, x + 16, y + 10, "start", 11, "copy batch in flight");
}

/*
 * One warp row: per pixel column, the cause that took most of its cycles.  A
 * spread op's parts are spread evenly over its length: where in it each slot
 * fell is not recorded.
 */
static void warp_row(FILE *out, const struct trace_timeline *tr, double y, double h, uint64_t cycles, double *acc)
{
	memset(acc, 0, sizeof(double) * PLOT_W * STALL_COUNT);
	double per_px = (double)(cycles ? cycles : 1) / PLOT_W;
	struct trace_cursor cur = trace_cursor(tr);
	struct trace_slice s;
	while (trace_next_span(&cur, &s)) {
		double len = (double)(s.end - s.begin);
		double issue = (double)s.issue / len, not_sel = (double)s.not_selected / len;
		double rest = 1.0 - issue - not_sel;
		for (uint64_t c = s.begin; c < s.end;) {
			int px = (int)((double)c / per_px);
			if (px >= PLOT_W)
				break;
			uint64_t px_end = (uint64_t)ceil((px + 1) * per_px);
			if (px_end <= c)
				px_end = c + 1;
			uint64_t upto = s.end < px_end ? s.end : px_end;
			double part = (double)(upto - c);
			double *col = &acc[px * STALL_COUNT];
			col[s.cause] += part * rest;
			if (s.spread) {
				col[STALL_ISSUE] += part * issue;
				col[STALL_NOT_SELECTED] += part * not_sel;
			}
			c = upto;
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

static void copy_row(FILE *out, const struct trace_track *tr, double y, double h, uint64_t cycles)
{
	double scale = (double)PLOT_W / (double)(cycles ? cycles : 1);
	for (uint32_t i = 0; i < tr->n; i++) {
		const struct trace_span *s = &tr->spans[i];
		double x = LEFT + (double)s->begin * scale, w = (double)(s->end - s->begin) * scale;
		fprintf(out,
			"<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"0.55\" "
			"stroke=\"#333\" stroke-width=\"0.3\"><title>batch %u: cycles %llu-%llu</title></rect>\n",
			x, y, w < 0.5 ? 0.5 : w, h, s->what % 2 ? "#a0cbe8" : "#4e79a7", s->what,
			(unsigned long long)s->begin, (unsigned long long)s->end);
	}
}

static uint32_t used_copy_rows(const struct trace *t)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->ncopies; i++)
		n += t->copies[i].n > 0;
	return n;
}

/* Draws one run from y; returns the height used. */
static double draw_run(FILE *out, const struct trace *t, double y, double max_h, uint64_t cycles, double *acc)
{
	uint32_t rows = t->nwarps + used_copy_rows(t);
	double h = max_h / (rows ? rows : 1);
	if (h > 14)
		h = 14;
	if (h < 1)
		h = 1;
	double y0 = y;
	for (uint32_t w = 0; w < t->nwarps; w++, y += h) {
		warp_row(out, &t->warps[w], y, h * 0.9, cycles, acc);
		if (h >= 7 || w % (uint32_t)ceil(8 / h) == 0)
			text(out, LEFT - 6, y + h * 0.8, "end", h >= 9 ? 10 : 8, t->warps[w].name);
	}
	for (uint32_t c = 0; c < t->ncopies; c++) {
		if (!t->copies[c].n)
			continue;
		copy_row(out, &t->copies[c], y, h * 0.9, cycles);
		text(out, LEFT - 6, y + h * 0.8, "end", h >= 9 ? 10 : 8, t->copies[c].name);
		y += h;
	}
	return y - y0;
}

void svg_timeline(FILE *out, const struct trace *t, const char *title)
{
	double *acc = malloc(sizeof(double) * PLOT_W * STALL_COUNT);
	if (!acc)
		return;
	uint32_t rows = t->nwarps + used_copy_rows(t);
	double body = rows * 14.0 > 700 ? 700 : rows * 14.0;
	int height = (int)(50 + body + 110);
	header(out, height, title);
	double used = draw_run(out, t, 44, body, t->end, acc);
	cycle_axis(out, 48 + used, t->end);
	legend(out, 48 + used + 50);
	fputs("</svg>\n", out);
	free(acc);
}

void svg_compare(FILE *out, const struct trace *const *runs, const char *const *labels, int n, const char *title)
{
	double *acc = malloc(sizeof(double) * PLOT_W * STALL_COUNT);
	if (!acc)
		return;
	uint64_t cycles = 0;
	for (int i = 0; i < n; i++)
		if (runs[i]->end > cycles)
			cycles = runs[i]->end;
	double band = 180;
	int height = (int)(50 + n * (band + 30) + 110);
	header(out, height, title);
	double y = 44;
	for (int i = 0; i < n; i++) {
		char label[256];
		snprintf(label, sizeof label, "%s — %llu cycles", labels[i], (unsigned long long)runs[i]->end);
		fprintf(out, "<g class=\"run\" data-label=\"%d\">\n", i);
		text(out, LEFT, y + 14, "start", 13, label);
		double used = draw_run(out, runs[i], y + 20, band, cycles, acc);
		/* Where this run ends, on the shared axis. */
		double xe = LEFT + (double)runs[i]->end * PLOT_W / (double)(cycles ? cycles : 1);
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\" stroke-dasharray=\"4 3\"/>\n",
			xe, y + 16, xe, y + 22 + used);
		fputs("</g>\n", out);
		y += 30 + (used > band ? used : band);
	}
	cycle_axis(out, y, cycles);
	legend(out, y + 50);
	fputs("</svg>\n", out);
	free(acc);
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
	fputs(ylabel, out);
	fputs("</text>\n", out);
	for (int s = 0; s < nseries; s++) {
		const char *col = series_colour[s % 10];
		fprintf(out, "<g class=\"series\" data-name=\"%s\">\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
			series[s].name, col);
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

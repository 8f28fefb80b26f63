#include "trace.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct trace *trace_new(uint32_t nwarps, uint32_t ncopy_tracks)
{
	struct trace *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->warps = calloc(nwarps + 1, sizeof *t->warps);
	t->copies = calloc(ncopy_tracks + 1, sizeof *t->copies);
	if (!t->warps || !t->copies) {
		trace_free(t);
		return NULL;
	}
	t->nwarps = nwarps;
	t->ncopies = ncopy_tracks;
	return t;
}

void trace_free(struct trace *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; t->warps && i < t->nwarps; i++)
		free(t->warps[i].spans);
	for (uint32_t i = 0; t->copies && i < t->ncopies; i++)
		free(t->copies[i].spans);
	free(t->warps);
	free(t->copies);
	free(t->inflight.d);
	free(t->stages.d);
	free(t->dram.d);
	free(t);
}

static struct trace_span *grow(struct trace *t, struct trace_track *tr)
{
	if (tr->n == tr->cap) {
		uint32_t cap = tr->cap ? tr->cap * 2 : 64;
		struct trace_span *s = realloc(tr->spans, cap * sizeof *s);
		if (!s) {
			t->failed = 1;
			return NULL;
		}
		tr->spans = s;
		tr->cap = cap;
	}
	return &tr->spans[tr->n++];
}

void trace_warp(struct trace *t, uint32_t warp, enum stall cause, uint64_t begin, uint64_t end)
{
	if (!t || end <= begin || warp >= t->nwarps)
		return;
	struct trace_track *tr = &t->warps[warp];
	if (tr->n && tr->spans[tr->n - 1].what == (uint32_t)cause && tr->spans[tr->n - 1].end == begin) {
		tr->spans[tr->n - 1].end = end;
		return;
	}
	struct trace_span *s = grow(t, tr);
	if (s)
		*s = (struct trace_span){begin, end, (uint32_t)cause};
}

void trace_copy(struct trace *t, uint32_t track, uint32_t seq, uint64_t begin, uint64_t end)
{
	if (!t || track >= t->ncopies || end < begin)
		return;
	struct trace_span *s = grow(t, &t->copies[track]);
	if (s)
		*s = (struct trace_span){begin, end, seq};
}

void trace_count(struct trace_series *c, uint64_t cycle, int64_t delta)
{
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 256;
		struct trace_delta *d = realloc(c->d, cap * sizeof *d);
		if (!d)
			return;
		c->d = d;
		c->cap = cap;
	}
	c->d[c->n++] = (struct trace_delta){cycle, delta};
}

static int by_cycle(const void *a, const void *b)
{
	const struct trace_delta *x = a, *y = b;
	return x->cycle < y->cycle ? -1 : x->cycle > y->cycle;
}

/* A counter track: the running sum of the deltas, one event per cycle it changes. */
static void write_counter(FILE *out, const struct trace_series *c, const char *name, int pid, bool *first)
{
	if (!c->n)
		return;
	struct trace_delta *d = malloc((c->n + 1) * sizeof *d);
	if (!d)
		return;
	memcpy(d, c->d, c->n * sizeof *d);
	/* qsort is not stable, but equal cycles are summed, so the order among them does not show. */
	qsort(d, c->n, sizeof *d, by_cycle);
	int64_t v = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		v += d[i].delta;
		if (i + 1 < c->n && d[i + 1].cycle == d[i].cycle)
			continue;
		fprintf(out, "%s\n{\"ph\":\"C\",\"pid\":%d,\"name\":\"%s\",\"ts\":%llu,\"args\":{\"value\":%lld}}",
			*first ? "" : ",", pid, name, (unsigned long long)d[i].cycle, (long long)v);
		*first = false;
	}
	free(d);
}

/* DRAM traffic as bytes per cycle over windows of 256 cycles. */
static void write_dram(FILE *out, const struct trace_series *c, int pid, bool *first)
{
	enum { WINDOW = 256 };
	if (!c->n)
		return;
	struct trace_delta *d = malloc((c->n + 1) * sizeof *d);
	if (!d)
		return;
	memcpy(d, c->d, c->n * sizeof *d);
	qsort(d, c->n, sizeof *d, by_cycle);
	for (uint32_t i = 0; i < c->n;) {
		uint64_t w = d[i].cycle / WINDOW;
		int64_t bytes = 0;
		while (i < c->n && d[i].cycle / WINDOW == w)
			bytes += d[i++].delta;
		fprintf(out, "%s\n{\"ph\":\"C\",\"pid\":%d,\"name\":\"DRAM bytes/cycle\",\"ts\":%llu,\"args\":{\"value\":%.3f}}",
			*first ? "" : ",", pid, (unsigned long long)(w * WINDOW), (double)bytes / WINDOW);
		*first = false;
		uint64_t next = i < c->n ? d[i].cycle / WINDOW : w + 2;
		if (next > w + 1) {
			fprintf(out, ",\n{\"ph\":\"C\",\"pid\":%d,\"name\":\"DRAM bytes/cycle\",\"ts\":%llu,\"args\":{\"value\":0}}",
				pid, (unsigned long long)((w + 1) * WINDOW));
		}
	}
	free(d);
}

int trace_write_chrome(const struct trace *t, FILE *out, const char *title, double clock_ghz)
{
	enum { PID_WARPS = 1, PID_COPIES = 2, PID_COUNTERS = 3 };
	fprintf(out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"title\":\"%s\",\"time_unit\":\"1 us in the viewer = 1 SM "
		     "cycle\",\"clock_ghz\":%.3f,\"cycles\":%llu},\n\"traceEvents\":[",
		title, clock_ghz, (unsigned long long)t->end);
	bool first = true;
	static const char *const procs[] = {"", "warps", "copy engine (per stage)", "counters"};
	for (int p = PID_WARPS; p <= PID_COUNTERS; p++) {
		fprintf(out, "%s\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"%s\"}}",
			first ? "" : ",", p, procs[p]);
		fprintf(out, ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}", p, p);
		first = false;
	}
	for (uint32_t w = 0; w < t->nwarps; w++) {
		const struct trace_track *tr = &t->warps[w];
		fprintf(out, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}}",
			PID_WARPS, w, tr->name);
		fprintf(out, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%u}}",
			PID_WARPS, w, w);
		for (uint32_t i = 0; i < tr->n; i++) {
			const struct trace_span *s = &tr->spans[i];
			fprintf(out, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"name\":\"%s\",\"cat\":\"warp\",\"ts\":%llu,\"dur\":%llu}",
				PID_WARPS, w, stall_key[s->what], (unsigned long long)s->begin,
				(unsigned long long)(s->end - s->begin));
		}
	}
	for (uint32_t c = 0; c < t->ncopies; c++) {
		const struct trace_track *tr = &t->copies[c];
		if (!tr->n)
			continue;
		fprintf(out, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}}",
			PID_COPIES, c, tr->name);
		for (uint32_t i = 0; i < tr->n; i++) {
			const struct trace_span *s = &tr->spans[i];
			fprintf(out,
				",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"name\":\"%s batch %u\",\"cat\":\"copy\",\"ts\":%llu,"
				"\"dur\":%llu,\"args\":{\"batch\":%u}}",
				PID_COPIES, c, tr->name, s->what, (unsigned long long)s->begin,
				(unsigned long long)(s->end - s->begin), s->what);
		}
	}
	write_counter(out, &t->inflight, "bytes in flight", PID_COUNTERS, &first);
	write_counter(out, &t->stages, "stages full", PID_COUNTERS, &first);
	write_dram(out, &t->dram, PID_COUNTERS, &first);
	fprintf(out, "\n]}\n");
	return ferror(out) ? -1 : 0;
}

/*
 * trace: a run's timeline, recorded while it runs (only when asked for).
 *
 * Per warp: spans of one stall cause each (issue, alu, consumer_wait, ...),
 * adjacent spans of the same cause merged, so the span totals per cause are
 * exactly the report's stall counts.  Per copy engine: a span per batch
 * from its first copy issue to its last landing, on a track per stage.
 * Counters: bytes of copies in flight, pipeline stages full, DRAM bytes per
 * cycle.  Written as a Chrome trace-event file (Perfetto, chrome://tracing)
 * and read by the SVG pictures; the layout is documented in traces/README.md.
 */
#ifndef SMSIM_TRACE_H
#define SMSIM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stall.h"

/* A copy batch's span. */
struct trace_span {
	uint64_t begin, end; /* cycles, end exclusive */
	uint32_t what;       /* warp spans (as trace_next_span gives them): enum stall; copy spans: batch sequence */
};

struct trace_track {
	struct trace_span *spans;
	uint32_t n, cap;
	char name[128];
};

/*
 * A warp's timeline.  Its spans are contiguous (each starts where the last
 * ended: the stall charge hands the warp's time on without a gap), so a span
 * is stored as its length and cause in 8 bytes instead of a 24-byte
 * trace_span: a third of the memory a long run's trace faults in.  A length
 * that does not fit in TRACE_STEP_LEN_MAX is stored in pieces, and a gap
 * (none is recorded today) as a TRACE_GAP step; trace_next_span joins the
 * pieces again.
 */
typedef uint64_t trace_step; /* length << 8 | cause */
#define TRACE_STEP_LEN_MAX ((1ull << 56) - 1)
#define TRACE_GAP 0xffu

struct trace_timeline {
	trace_step *steps;
	uint32_t n, cap;
	uint64_t end; /* where the last step ends (0 before any) */
	char name[128];
};

struct trace_delta {
	uint64_t cycle;
	int64_t delta;
};

struct trace_series {
	struct trace_delta *d;
	uint32_t n, cap;
};

struct trace {
	struct trace_timeline *warps; /* one per warp */
	uint32_t nwarps;
	struct trace_track *copies; /* one per (block, pipeline or barrier, stage) */
	uint32_t ncopies;
	struct trace_series inflight; /* bytes of copies issued and not landed */
	struct trace_series stages;   /* stages produced and not yet released */
	struct trace_series dram;     /* DRAM bytes requested */
	uint64_t end;                 /* cycles of the run */
	int failed;                   /* ran out of memory: the trace is incomplete */
};

struct trace *trace_new(uint32_t nwarps, uint32_t ncopy_tracks);
void trace_free(struct trace *t);
void trace_warp_span(struct trace *t, struct trace_timeline *tl, enum stall cause, uint64_t begin, uint64_t end);
/* A span of the warp's timeline; it extends the last one when that has the same cause and ends at begin. */
static inline void trace_warp(struct trace *t, uint32_t warp, enum stall cause, uint64_t begin, uint64_t end)
{
	if (!t || end <= begin || warp >= t->nwarps)
		return;
	struct trace_timeline *tl = &t->warps[warp];
	uint64_t len = end - begin;
	if (tl->end == begin && len <= TRACE_STEP_LEN_MAX) {
		trace_step *last = tl->n ? &tl->steps[tl->n - 1] : NULL;
		if (last && (*last & 0xff) == (uint32_t)cause && (*last >> 8) <= TRACE_STEP_LEN_MAX - len) {
			*last += len << 8;
			tl->end = end;
			return;
		}
		if (tl->n < tl->cap) {
			tl->steps[tl->n++] = len << 8 | (uint32_t)cause;
			tl->end = end;
			return;
		}
	}
	trace_warp_span(t, tl, cause, begin, end); /* grows the timeline, or records a gap or a long span */
}
/* Walks a warp's timeline span by span. */
struct trace_cursor {
	const trace_step *at, *stop;
	uint64_t cycle;
};
static inline struct trace_cursor trace_cursor(const struct trace_timeline *tl)
{
	return (struct trace_cursor){tl->steps, tl->steps + tl->n, 0};
}
/* The next span (what: its cause), pieces of one span joined; false after the last. */
static inline bool trace_next_span(struct trace_cursor *c, struct trace_span *out)
{
	while (c->at < c->stop && (*c->at & 0xff) == TRACE_GAP)
		c->cycle += *c->at++ >> 8;
	if (c->at == c->stop)
		return false;
	uint32_t cause = (uint32_t)(*c->at & 0xff);
	out->begin = c->cycle;
	out->what = cause;
	while (c->at < c->stop && (*c->at & 0xff) == cause)
		c->cycle += *c->at++ >> 8;
	out->end = c->cycle;
	return true;
}
void trace_copy(struct trace *t, uint32_t track, uint32_t seq, uint64_t begin, uint64_t end);
void trace_count(struct trace_series *c, uint64_t cycle, int64_t delta);
/* Chrome trace-event JSON; returns -1 on a write error. */
int trace_write_chrome(const struct trace *t, FILE *out, const char *title, double clock_ghz);

#endif

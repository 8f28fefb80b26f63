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

#include <stdint.h>
#include <stdio.h>

#include "stall.h"

struct trace_span {
	uint64_t begin, end; /* cycles, end exclusive */
	uint32_t what;       /* warp spans: enum stall; copy spans: batch sequence */
};

struct trace_track {
	struct trace_span *spans;
	uint32_t n, cap;
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
	struct trace_track *warps; /* one per warp */
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
void trace_warp_span(struct trace *t, struct trace_track *tr, enum stall cause, uint64_t begin, uint64_t end);
/* A span of the warp's timeline; it extends the last one when that has the same cause and ends at begin. */
static inline void trace_warp(struct trace *t, uint32_t warp, enum stall cause, uint64_t begin, uint64_t end)
{
	if (!t || end <= begin || warp >= t->nwarps)
		return;
	struct trace_track *tr = &t->warps[warp];
	if (tr->n && tr->spans[tr->n - 1].what == (uint32_t)cause && tr->spans[tr->n - 1].end == begin) {
		tr->spans[tr->n - 1].end = end;
		return;
	}
	if (tr->n < tr->cap) {
		tr->spans[tr->n++] = (struct trace_span){begin, end, (uint32_t)cause};
		return;
	}
	trace_warp_span(t, tr, cause, begin, end); /* grows the track */
}
void trace_copy(struct trace *t, uint32_t track, uint32_t seq, uint64_t begin, uint64_t end);
void trace_count(struct trace_series *c, uint64_t cycle, int64_t delta);
/* Chrome trace-event JSON; returns -1 on a write error. */
int trace_write_chrome(const struct trace *t, FILE *out, const char *title, double clock_ghz);

#endif

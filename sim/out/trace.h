/*
 * trace: a run's timeline, recorded while it runs (only when asked for).
 *
 * Per warp: spans of one stall cause each (issue, alu, consumer_wait, ...),
 * adjacent spans of the same cause merged, and a span per op that spreads its
 * instructions over its latency, split into its issue slots, its cycles not
 * selected and the rest, so the totals per cause are exactly the report's
 * stall counts.  Per copy engine: a span per batch
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
#include <string.h>

#include "stall.h"

/* A copy batch's span. */
struct trace_span {
	uint64_t begin, end; /* cycles, end exclusive */
	uint32_t what;       /* the batch sequence */
};

struct trace_track {
	struct trace_span *spans;
	uint32_t n, cap;
	char name[128];
};

/*
 * A warp's timeline.  Its spans are contiguous (each starts where the last
 * ended: the stall charge hands the warp's time on without a gap), so a span
 * is stored as its length and cause in 4 bytes instead of a 24-byte
 * trace_span: a sixth of the memory a long run's trace faults in (before
 * an op's span kept its instruction-level waits, about two spans a
 * warp-instruction: 141 MiB at the bench's traced size with 8-byte steps;
 * 20 MiB of peak memory now).  A length that does not fit in
 * TRACE_STEP_LEN_MAX (2^24 - 1 cycles) is stored in pieces, and a gap (none
 * is recorded today) as a TRACE_GAP step; trace_next_span joins the pieces
 * again.
 *
 * An op that issues its instructions spread over its latency (a
 * statement, pipeline call, copy, compute setup, chain or store) is one
 * span: a TRACE_SPREAD | cause step with its whole length, then a
 * TRACE_SPREAD_PART | c step for each other cause c that took some of it
 * (its issue slots, cycles not selected, and the instruction-level waits
 * between its slots: a dependency, a busy pipe, the MIO queue); the rest
 * of it went to the cause (a part longer than a step holds goes on in more
 * steps: TRACE_SPREAD_MORE for the length, the same code for the others).
 * Slot by slot it would be an issue, a gap and often a not_selected or
 * pipe_busy span for every instruction: several times the spans of a
 * traced run (a 1.2 GB trace at the bench's traced size, session 32), and
 * a comb of one-cycle slices no viewer makes sense of.  A wait of the
 * semantic kind (consumer_wait, a barrier, __syncthreads, a sleep) that is
 * not the op's own cause closes the span: it shows as its own.
 */
typedef uint32_t trace_step; /* length << 8 | cause */
#define TRACE_STEP_LEN_MAX ((1ull << 24) - 1)
#define TRACE_GAP 0xffu
#define TRACE_SPREAD 0x40u          /* | cause: a spread op's whole length */
#define TRACE_SPREAD_PART 0x80u     /* | cause: the part of it that cause took */
#define TRACE_SPREAD_OP 0xfcu       /* which op it is: 1 + its index into trace.ops (in the length's place) */
#define TRACE_SPREAD_MORE 0xfbu     /* more of its whole length, beyond TRACE_STEP_LEN_MAX */
/* A spread op's length may go on past one step (its parts are stored in pieces), as far as it did in 8 bytes. */
#define TRACE_SPREAD_LEN_MAX ((1ull << 56) - 1)
_Static_assert(STALL_COUNT < TRACE_SPREAD, "a cause fits below the spread flag");
_Static_assert((TRACE_SPREAD_PART | (STALL_COUNT - 1)) < TRACE_SPREAD_MORE, "a part's code is below the other spread codes");
/* The causes a spread op takes into its span; any other (a semantic wait) closes it. */
#define TRACE_SPREAD_TAKES                                                                                          \
	(1u << STALL_ISSUE | 1u << STALL_NOT_SELECTED | 1u << STALL_ALU | 1u << STALL_BRANCH | 1u << STALL_PIPE_BUSY | \
	 1u << STALL_MIO_THROTTLE | 1u << STALL_SMEM | 1u << STALL_MEMORY)

struct trace_timeline {
	trace_step *steps;
	uint32_t n, cap;
	uint64_t end; /* where the last step ends, or the open spread op (0 before any) */
	/* The spread op being recorded, not yet in steps (its cycles are in end already). */
	bool spread_open;
	bool spread_kept; /* the slot being issued is one of its op's */
	uint8_t spread_cause;
	uint64_t spread_len;
	uint64_t spread_part[STALL_COUNT]; /* its cycles by cause, but for spread_cause's (the rest) */
	uint32_t spread_op; /* 1 + the op's index into trace.ops, 0: not known */
	char name[128];
};

/* An op of the kernel, as a span names it: its kind, the statement's JSON path and line. */
struct trace_op {
	char label[48]; /* "compute", "memcpy_async", ... */
	char path[96];
	int line;
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
	struct trace_op *ops;         /* the kernel's ops by instruction index (trace_set_ops), or NULL */
	uint32_t nops;
};

/* Copies the ops' labels, paths and lines, so that spans can name them after the kernel is gone. */
int trace_set_ops(struct trace *t, uint32_t n, const struct trace_op *ops);
/* The warp issued a slot of op (an index into trace.ops): its open spread span, if not named yet, is that op's. */
static inline void trace_op_at(struct trace *t, uint32_t warp, uint32_t op)
{
	if (t && warp < t->nwarps && t->warps[warp].spread_open && !t->warps[warp].spread_op && op < t->nops &&
	    op < TRACE_STEP_LEN_MAX)
		t->warps[warp].spread_op = op + 1;
}

struct trace *trace_new(uint32_t nwarps, uint32_t ncopy_tracks);
void trace_free(struct trace *t);
void trace_warp_span(struct trace *t, struct trace_timeline *tl, enum stall cause, uint64_t begin, uint64_t end);
void trace_spread_close(struct trace *t, struct trace_timeline *tl);
/* Adds a span to the open spread op; false (the op closed) when it is not part of it. */
static inline bool trace_spread_add(struct trace *t, struct trace_timeline *tl, enum stall cause, uint64_t begin,
				    uint64_t end)
{
	uint64_t len = end - begin;
	if (begin == tl->end && len <= TRACE_SPREAD_LEN_MAX - tl->spread_len &&
	    (cause == tl->spread_cause || (TRACE_SPREAD_TAKES >> cause & 1))) {
		if (cause != tl->spread_cause)
			tl->spread_part[cause] += len;
		tl->spread_len += len;
		tl->end = end;
		return true;
	}
	trace_spread_close(t, tl);
	return false;
}
/* trace_warp's other cases: an open spread op, the first step, a full timeline, a gap or a long span. */
void trace_warp_other(struct trace *t, struct trace_timeline *tl, enum stall cause, uint64_t begin, uint64_t end);
/*
 * A span of the warp's timeline; it extends the last one when that has the
 * same cause and ends at begin.  About two per warp-instruction in a traced
 * run: the usual case (no spread op open, room for a step) is the only one
 * inline.
 */
static inline void trace_warp(struct trace *t, uint32_t warp, enum stall cause, uint64_t begin, uint64_t end)
{
	if (!t || end <= begin || warp >= t->nwarps)
		return;
	struct trace_timeline *tl = &t->warps[warp];
	uint64_t len = end - begin;
	if (!tl->spread_open && tl->end == begin && len <= TRACE_STEP_LEN_MAX && tl->n && tl->n < tl->cap) {
		trace_step *last = &tl->steps[tl->n - 1];
		tl->end = end;
		if ((*last & 0xff) == (uint32_t)cause && (*last >> 8) <= TRACE_STEP_LEN_MAX - len)
			*last += (trace_step)(len << 8);
		else
			tl->steps[tl->n++] = (trace_step)(len << 8 | (uint32_t)cause);
		return;
	}
	trace_warp_other(t, tl, cause, begin, end);
}
/*
 * The op the warp is issuing spreads its instructions over its latency (or
 * is a chain of dependent instructions): this issue slot and what follows,
 * up to the issue of another op, are one span.  An issue slot that is
 * another of the op's own instructions keeps the span open
 * (trace_spread_keep); trace_issue closes it at any other.
 */
void trace_spread_begin(struct trace *t, uint32_t warp, enum stall cause);
static inline void trace_spread_keep(struct trace *t, uint32_t warp)
{
	if (t && warp < t->nwarps)
		t->warps[warp].spread_kept = true;
}
/* A slot of a chain of dependent instructions: the first begins the op's span, a later one keeps it. */
static inline void trace_chain_slot(struct trace *t, uint32_t warp, enum stall cause, bool first)
{
	if (first)
		trace_spread_begin(t, warp, cause);
	else
		trace_spread_keep(t, warp);
}
/* The warp's issue slot at now, recorded after its op ran. */
static inline void trace_issue(struct trace *t, uint32_t warp, uint64_t now)
{
	if (!t || warp >= t->nwarps)
		return;
	struct trace_timeline *tl = &t->warps[warp];
	if (tl->spread_open && !tl->spread_kept)
		trace_spread_close(t, tl);
	tl->spread_kept = false;
	trace_warp(t, warp, STALL_ISSUE, now, now + 1);
}
/* Closes every warp's open spread op: the timeline is complete. */
void trace_finish(struct trace *t);

/* A span of a warp's timeline, as trace_next_span gives it (a slice in the Chrome file). */
struct trace_slice {
	uint64_t begin, end;          /* cycles, end exclusive */
	uint64_t parts[STALL_COUNT];  /* its cycles by cause (a plain span: all to cause) */
	uint32_t cause;               /* enum stall: all of a plain span; the rest of a spread op */
	bool spread;
	uint32_t op;                  /* a spread op: 1 + its index into trace.ops, 0: not known */
};
/* Walks a warp's timeline span by span. */
struct trace_cursor {
	const trace_step *at, *stop;
	uint64_t cycle;
};
static inline struct trace_cursor trace_cursor(const struct trace_timeline *tl)
{
	return (struct trace_cursor){tl->steps, tl->steps + tl->n, 0};
}
/* The next span, pieces of one span joined; false after the last. */
static inline bool trace_next_span(struct trace_cursor *c, struct trace_slice *out)
{
	while (c->at < c->stop && (*c->at & 0xff) == TRACE_GAP)
		c->cycle += *c->at++ >> 8;
	if (c->at == c->stop)
		return false;
	uint32_t code = (uint32_t)(*c->at & 0xff);
	out->begin = c->cycle;
	memset(out->parts, 0, sizeof out->parts);
	out->op = 0;
	if ((code & 0xc0) == TRACE_SPREAD) {
		out->cause = code & ~TRACE_SPREAD;
		out->spread = true;
		c->cycle += *c->at++ >> 8;
		uint64_t others = 0;
		for (; c->at < c->stop && (*c->at & 0xff) >= TRACE_SPREAD_PART && (*c->at & 0xff) != TRACE_GAP; c->at++) {
			uint32_t part = (uint32_t)(*c->at & 0xff);
			if (part == TRACE_SPREAD_MORE) {
				c->cycle += *c->at >> 8;
			} else if (part == TRACE_SPREAD_OP) {
				out->op = (uint32_t)(*c->at >> 8);
			} else if ((part & ~TRACE_SPREAD_PART) < STALL_COUNT) {
				out->parts[part & ~TRACE_SPREAD_PART] += *c->at >> 8;
				others += *c->at >> 8;
			}
		}
		out->end = c->cycle;
		out->parts[out->cause] += out->end - out->begin - others;
		return true;
	}
	out->cause = code;
	out->spread = false;
	while (c->at < c->stop && (*c->at & 0xff) == code)
		c->cycle += *c->at++ >> 8;
	out->end = c->cycle;
	out->parts[code] = out->end - out->begin;
	return true;
}
void trace_copy(struct trace *t, uint32_t track, uint32_t seq, uint64_t begin, uint64_t end);
void trace_count(struct trace_series *c, uint64_t cycle, int64_t delta);
/* Chrome trace-event JSON; returns -1 on a write error. */
int trace_write_chrome(const struct trace *t, FILE *out, const char *title, double clock_ghz);

#endif

/*
 * mbar: PTX mbarriers (the machinery under cuda::barrier and cuda::pipeline).
 *
 * State: completed phases, pending and expected arrivals, tx-count.  When
 * pending reaches 0 with no outstanding tx, the phase completes: pending
 * is reset to expected and every waiter wakes after the wake latency.
 * Arrivals past the expected count are a program error, reported.
 * Arrivals serialize on the barrier (a shared-memory atomic each).
 */
#include <stdio.h>
#include <stdlib.h>

#include "simint.h"

uint32_t mbar_new(struct sim *s, uint32_t block, const char *what)
{
	struct mbar *b = &s->mbars[s->nmbars];
	*b = (struct mbar){.waiters = NONE,
			   .block = block,
			   .filling = {.seq = NEVER, .first_issue = NEVER},
			   .filled = {.seq = NEVER, .first_issue = NEVER}};
	snprintf(b->what, sizeof b->what, "%s", what);
	return s->nmbars++;
}

void mbar_init(struct mbar *b, int64_t expected)
{
	b->epoch++; /* arrivals still on their way belong to the barrier before this init */
	b->initialized = true;
	b->phase = 0;
	b->pending = b->expected = expected;
	b->tx = 0;
	b->inflight = 0; /* what is on its way belongs to the old epoch (mbar_arrive_event drops it) */
	b->inflight_warp = -1;
}

static void complete_phase(struct sim *s, struct mbar *b, uint64_t now)
{
	if (b->filled.seq != NEVER)
		stats_batch(s, &b->filled, b->track, 0);
	if (s->trace && b->stage_kind)
		trace_count(&s->trace->stages, now, b->stage_kind);
	b->filled = b->filling;
	if (b->filled.first_issue != NEVER)
		b->filled.seq = b->phase;
	b->filling = (struct batch_rec){.seq = NEVER, .first_issue = NEVER};
	b->completed_at = now;
	b->phase++;
	b->pending = b->expected;
	uint32_t id = b->waiters;
	b->waiters = NONE;
	while (id != NONE) {
		const struct simt_entry *e = &s->warps[WAITER_WARP(id)].stack[WAITER_ENTRY(id)];
		uint32_t next = e->next_waiter;
		/*
		 * A suspended try_wait returns mbarrier_wake_latency after the phase
		 * completes, with its result: it does not issue again. One that reached
		 * the barrier just before (trywait_window.csv: arrive 1 cycle after the
		 * try) cannot answer before its own latency either.
		 */
		uint64_t at = now + (uint64_t)s->m->mbarrier_wake_latency;
		if (e->wait_start != NEVER && e->wait_start + s->cls_lat[IC_SYNCS] > at)
			at = e->wait_start + s->cls_lat[IC_SYNCS];
		sched_wake_waiter(s, id, at);
		id = next;
	}
}

void mbar_arrive(struct sim *s, uint32_t bar, uint32_t count, bool drop, uint64_t now)
{
	struct mbar *b = &s->mbars[bar];
	if (!b->initialized) {
		sim_fail(s, DIAG_INPUT, NULL, "program error: arrival on %s (block %u) before it was initialised",
			 b->what, b->block);
		return;
	}
	if (drop)
		b->expected -= count; /* arrive_drop: this phase counts it, later phases no longer expect it */
	if ((int64_t)count > b->pending) {
		sim_fail(s, DIAG_INPUT, NULL,
			 "program error: %u arrivals on %s (block %u) in phase %u, which expects only %lld more of %lld",
			 count, b->what, b->block, b->phase, (long long)b->pending, (long long)b->expected);
		return;
	}
	b->pending -= count;
	if (b->pending == 0 && b->tx == 0)
		complete_phase(s, b, now);
}

/*
 * An EV_MBAR_ARRIVE argument: the count (bits 0-31), the drop flag (32),
 * the init epoch the arrivals belong to (33-47, modulo 2^15: an arrival is
 * in flight for a few latencies, not 32768 inits), and for a cuda::barrier
 * arrival the flag (48) and index (49-58) of its record in s->arrivals.
 */
#define ARG_EPOCH(e) ((uint64_t)((e) & 0x7fffu) << 33)
#define ARG_CHECKED (1ull << 48)
static uint64_t arrival_arg(const struct mbar *b, uint32_t count, bool drop)
{
	return (uint64_t)count | (drop ? 1ull << 32 : 0) | ARG_EPOCH(b->epoch);
}

void mbar_arrive_event(struct sim *s, uint32_t bar, uint64_t arg, uint64_t now)
{
	/*
	 * Sent before the barrier was initialised again (make_pipeline on a
	 * shared state whose last pipeline every thread quit): it belonged to
	 * the barrier that init replaced, whose phases no thread waits on.
	 */
	if ((arg & ARG_EPOCH(0x7fffu)) != ARG_EPOCH(s->mbars[bar].epoch))
		return;
	struct mbar *b = &s->mbars[bar];
	b->inflight -= (uint32_t)arg;
	if (arg & ARG_CHECKED) {
		/*
		 * Sent in phase p (its token), it finds p completed: p had all its
		 * expected arrivals without it, so it is one more than the phase
		 * expects (the hardware would count it in p + 1 and hand back a
		 * token the thread does not hold).
		 */
		const struct arrival_rec *a = &s->arrivals[(arg >> 49) & (ARRIVAL_RING - 1)];
		if (a->phase != b->phase) {
			const struct warp *w = &s->warps[a->warp];
			const struct insn *in = &s->k->code[a->pc < (uint32_t)s->k->ncode ? a->pc : 0];
			sim_fail(s, DIAG_INPUT, NULL,
				 "program error: at %s (%s, line %d:%d), threads %u..%u of block %u arrive on %s in phase %u, "
				 "which already completed with its %lld expected arrivals: more arrivals in a phase than the "
				 "barrier's expected count",
				 s->k->paths[in->where], op_table[in->op].name,
				 s->k->path_line ? (int)s->k->path_line[in->where] : 0,
				 s->k->path_col ? (int)s->k->path_col[in->where] : 0, w->in_block * 32 + (uint32_t)__builtin_ctz(a->lanes),
				 w->in_block * 32 + 31 - (uint32_t)__builtin_clz(a->lanes), b->block, b->what, a->phase,
				 (long long)b->expected);
			return;
		}
	}
	mbar_arrive(s, bar, (uint32_t)arg, (arg >> 32 & 1) != 0, now);
}

/*
 * The phase an arrival by warp `warp` sent now belongs to.  Arrivals reach
 * the barrier in the order they were sent: where the warp's own earlier
 * arrivals, still on their way, complete the current phase, the warp knows
 * it (program order) and arrives in the next one, as a thread arriving
 * again on a barrier of count 1 does on the hardware.  Arrivals of other
 * warps on their way do not move it: a phase that gets more arrivals than
 * it expects from threads that could not know it completed is the excess
 * mbar_arrive_event reports.  With transaction bytes outstanding no phase
 * completes.
 */
uint32_t mbar_landing_phase(const struct mbar *b, uint32_t warp)
{
	int64_t beyond = b->inflight - b->pending;
	if (beyond < 0 || b->tx > 0 || b->expected <= 0 || b->inflight_warp != (int64_t)warp)
		return b->phase;
	return b->phase + 1 + (uint32_t)(beyond / b->expected);
}

static void note_inflight(struct mbar *b, int64_t warp, uint32_t count)
{
	b->inflight_warp = b->inflight == 0 || b->inflight_warp == warp ? warp : -1;
	b->inflight += count;
}

/* A cuda::barrier arrival by the warp's active threads: as mbar_arrive_later, checked against its token's phase. */
void mbar_arrive_checked(struct sim *s, const struct warp *w, uint32_t bar, uint64_t at, uint32_t count, bool drop)
{
	struct mbar *b = &s->mbars[bar];
	uint32_t idx = s->arrivals_next++ & (ARRIVAL_RING - 1);
	s->arrivals[idx] = (struct arrival_rec){.warp = (uint32_t)(w - s->warps), .lanes = simt_mask(w),
						.pc = simt_pc(w), .phase = mbar_landing_phase(b, (uint32_t)(w - s->warps))};
	note_inflight(b, w - s->warps, count);
	if (at < b->busy_until)
		at = b->busy_until;
	b->busy_until = at + (uint64_t)s->m->mbarrier_arrive_interval;
	if (evq_push(&s->q, at, EV_MBAR_ARRIVE, bar, arrival_arg(b, count, drop) | ARG_CHECKED | (uint64_t)idx << 49))
		sim_fail(s, DIAG_LIMIT, NULL, "out of memory for events");
}

void mbar_arrive_later(struct sim *s, uint32_t bar, uint64_t at, uint32_t count, bool drop)
{
	struct mbar *b = &s->mbars[bar];
	note_inflight(b, -1, count); /* a pipeline's or a copy's arrival: no thread's own */
	if (at < b->busy_until)
		at = b->busy_until;
	b->busy_until = at + (uint64_t)s->m->mbarrier_arrive_interval;
	if (evq_push(&s->q, at, EV_MBAR_ARRIVE, bar, arrival_arg(b, count, drop)))
		sim_fail(s, DIAG_LIMIT, NULL, "out of memory for events");
}

/*
 * A library wait (cuda::barrier's wait, the pipeline's consumer_wait and
 * producer_acquire) on a phase of barrier bar, complete or not as the op
 * finds it now: whether the wait is over.  libcu++ tries once and then
 * loops on YIELD and TRYWAIT (traces/h100/pipelines.sass 0x1510-0x16d0).
 * A converged warp's TRYWAIT suspends it until the phase completes (woken
 * mbarrier_wake_latency after).  In a diverged warp it does not
 * (traces/h100/trywait_paths.csv): the first try answers after a try's
 * latency and the retry loop's first poll begins; each poll reads the
 * phase diverged_poll_look cycles in and answers diverged_poll_cycles after
 * it began, whatever the phase did meanwhile.  The lanes waiting at the
 * path's joins stay there until a poll fails: its YIELD lets them go on,
 * and the next poll begins when the path issues again, after they have had
 * the warp.  So a phase completed up to a look after the try keeps the
 * warp in step (traces/h100/trywait_restep_fine.csv, trywait_rejoin_fine.csv,
 * and the stamped partitioned pipeline, specialized_trace.csv.gz: the other
 * path's next stamp 257-273 cycles after a spinning wait began).  The op
 * runs again at each answer and at each poll's start.
 */
bool mbar_await(struct sim *s, struct warp *w, bool complete, uint32_t bar, enum stall cause, uint64_t now)
{
	struct simt_entry *e = simt_cur(w);
	if (complete && e->polling == POLL_NONE)
		return true; /* the first try, or a converged warp woken */
	if (e->polling == POLL_NONE && !simt_polls_apart(s, w, e)) {
		sched_block(s, w, cause, WAIT_MBAR, now);
		simt_detach(s, w, now);
		mbar_wait_on(s, w, bar);
		return false;
	}
	if (e->polling == POLL_LOOKING) {
		/* a poll ends: it saw the phase as it was at its look (a phase that completed later is the one waited on) */
		if (complete && (e->poll < 0 || s->mbars[e->poll].completed_at <= e->poll_look)) {
			e->polling = POLL_NONE;
			return true;
		}
		e->polling = POLL_ON;
		simt_failed_poll(e, (int32_t)bar);
	}
	if (e->polling == POLL_NONE) {
		/* the first try failed: its answer comes after a try's latency, and the first poll begins */
		e->polling = POLL_TRIED;
		simt_failed_poll(e, (int32_t)bar);
		simt_yield(s, w);
		sched_block(s, w, cause, WAIT_SLEEP, now);
		sched_timer(s, w, now + (uint64_t)s->cls_lat[IC_SYNCS]);
		return false;
	}
	if (e->polling == POLL_ON) {
		/* a failed answer: the YIELD; with lanes let go, they issue before the next poll begins */
		e->polling = POLL_TRIED;
		if (simt_detach(s, w, now)) {
			simt_yield(s, w);
			sched_block(s, w, cause, WAIT_SLEEP, now);
			sched_timer(s, w, now + (uint64_t)s->m->path_switch_latency);
			return false;
		}
	}
	/* a poll begins */
	e->polling = POLL_LOOKING;
	e->poll_look = now + (uint64_t)s->m->diverged_poll_look;
	simt_yield(s, w); /* between polls the warp's other paths issue first */
	sched_block(s, w, cause, WAIT_SLEEP, now);
	sched_timer(s, w, now + (uint64_t)s->m->diverged_poll_cycles);
	if (e->polls >= SPIN_POLLS)
		sim_check_spin(s, now);
	return false;
}

void mbar_wait_on(struct sim *s, struct warp *w, uint32_t bar)
{
	struct mbar *b = &s->mbars[bar];
	struct simt_entry *e = simt_cur(w);
	e->next_waiter = b->waiters;
	e->blocked_obj = (int32_t)bar;
	b->waiters = WAITER(w);
}

void mbar_unwait(struct sim *s, uint32_t bar, uint32_t waiter)
{
	struct mbar *b = &s->mbars[bar];
	for (uint32_t *link = &b->waiters; *link != NONE;) {
		struct simt_entry *e = &s->warps[WAITER_WARP(*link)].stack[WAITER_ENTRY(*link)];
		if (*link == waiter) {
			*link = e->next_waiter;
			e->next_waiter = NONE;
			return;
		}
		link = &e->next_waiter;
	}
}

void mbar_expect_tx(struct sim *s, uint32_t bar, int64_t bytes, uint64_t now)
{
	(void)now;
	s->mbars[bar].tx += bytes;
}

/* A non-bulk memcpy_async completing on a barrier: the pending count grows now, shrinks at landing. */
void mbar_track_copies(struct sim *s, uint32_t bar, uint32_t count, uint64_t land)
{
	s->mbars[bar].pending += count;
	if (evq_push(&s->q, land, EV_MBAR_ARRIVE, bar, arrival_arg(&s->mbars[bar], count, false)))
		sim_fail(s, DIAG_LIMIT, NULL, "out of memory for events");
}

void mbar_complete_tx_later(struct sim *s, uint32_t bar, uint64_t at, int64_t bytes)
{
	if (evq_push(&s->q, at, EV_MBAR_TX, bar, (uint64_t)bytes))
		sim_fail(s, DIAG_LIMIT, NULL, "out of memory for events");
}

/* tx may go negative for a while (bytes landing before expect_tx), as PTX allows. */
void mbar_complete_tx(struct sim *s, uint32_t bar, int64_t bytes, uint64_t now)
{
	struct mbar *b = &s->mbars[bar];
	b->tx -= bytes;
	if (b->pending == 0 && b->tx == 0)
		complete_phase(s, b, now);
}

void mbar_note_copy(struct sim *s, uint32_t bar, uint64_t issue, uint64_t land)
{
	struct batch_rec *r = &s->mbars[bar].filling;
	if (issue < r->first_issue)
		r->first_issue = issue;
	if (land > r->last_land)
		r->last_land = land;
}

void mbar_finish_stats(struct sim *s)
{
	for (uint32_t i = 0; i < s->nmbars; i++)
		if (s->mbars[i].filled.seq != NEVER) {
			stats_batch(s, &s->mbars[i].filled, s->mbars[i].track, 0);
			s->mbars[i].filled.seq = NEVER;
		}
}

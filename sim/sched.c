/*
 * sched: the sub-partition schedulers and per-warp stall accounting.
 *
 * Each sub-partition issues at most one warp-instruction per cycle.  It
 * ticks only at cycles where one of its warps can issue (the event loop in
 * sim.c runs the SM's ticks between events): a tick picks a warp (gto: the last one while it stays ready, else
 * the oldest; lrr: round robin), issues it, and schedules the next tick at
 * the earliest cycle any of its warps is ready.  Blocked warps have
 * ready_at = NEVER and cost nothing until something wakes them.
 */
#include <stdlib.h>

#include "simint.h"

const char *const stall_key[STALL_COUNT] = {
#define STALL_KEY(e, key, doc) key,
	STALL_LIST(STALL_KEY)
#undef STALL_KEY
};

/* Charges the warp's time from since to now: its cause until ready_at, then not_selected. */
void sched_charge(struct sim *s, struct warp *w, uint64_t now)
{
	if (now <= w->since)
		return;
	uint64_t split = w->ready_at < w->since ? w->since : w->ready_at;
	if (split > now)
		split = now;
	w->stalls[w->cause] += split - w->since;
	w->stalls[STALL_NOT_SELECTED] += now - split;
	if (s->trace) {
		trace_warp(s->trace, w->id, w->cause, w->since, split);
		trace_warp(s->trace, w->id, STALL_NOT_SELECTED, split, now);
	}
	w->since = now;
}

void sched_block(struct sim *s, struct warp *w, enum stall cause, enum wait_kind kind, uint64_t now)
{
	struct simt_entry *e = simt_cur(w);
	e->blocked = (uint8_t)kind;
	if (e->wait_start == NEVER)
		e->wait_start = now;
	if (simt_runnable(s, w))
		return; /* another group of the warp can issue next cycle */
	w->ready_at = NEVER;
	w->cause = cause;
}

void sched_kick(struct sim *s, uint32_t sp, uint64_t at)
{
	struct subpart *p = &s->sps[sp];
	if (p->last_issue != NEVER && at <= p->last_issue)
		at = p->last_issue + 1;
	if (at < s->now)
		at = s->now;
	if (at >= p->next_tick)
		return;
	p->next_tick = at;
	if (at < s->sm_next)
		s->sm_next = at;
}

/* A blocked group may issue again at cycle at; the wait until then stays charged to the warp's cause. */
void sched_wake(struct sim *s, struct warp *w, int entry, uint64_t at)
{
	struct simt_entry *e = &w->stack[entry];
	e->blocked = WAIT_NONE;
	e->blocked_obj = -1;
	e->next_waiter = NONE;
	if (w->done)
		return;
	sched_charge(s, w, s->now);
	if (w->ready_at == NEVER || w->ready_at > at)
		w->ready_at = at;
	sched_kick(s, w->sp, w->ready_at);
}

void sched_wake_waiter(struct sim *s, uint32_t waiter, uint64_t at)
{
	sched_wake(s, &s->warps[WAITER_WARP(waiter)], WAITER_ENTRY(waiter), at);
}

static uint32_t pick(struct sim *s, struct subpart *p, uint64_t now)
{
	if (s->m->scheduler == SCHED_GTO) {
		if (p->greedy != NONE) {
			struct warp *g = &s->warps[p->greedy];
			if (!g->done && g->ready_at <= now)
				return p->greedy;
		}
		for (uint32_t i = 0; i < p->nwarps; i++) {
			struct warp *w = &s->warps[p->warps[i]];
			if (!w->done && w->ready_at <= now)
				return p->warps[i];
		}
		return NONE;
	}
	for (uint32_t n = 0; n < p->nwarps; n++) {
		uint32_t i = (p->rr + n) % p->nwarps;
		struct warp *w = &s->warps[p->warps[i]];
		if (!w->done && w->ready_at <= now) {
			p->rr = (i + 1) % p->nwarps;
			return p->warps[i];
		}
	}
	return NONE;
}

void sched_tick(struct sim *s, uint32_t sp, uint64_t now)
{
	struct subpart *p = &s->sps[sp];
	p->next_tick = NEVER;
	uint32_t wi = pick(s, p, now);
	if (wi != NONE) {
		struct warp *w = &s->warps[wi];
		p->last_issue = now;
		p->greedy = wi;
		p->issued++;
		sched_charge(s, w, now);
		w->stalls[STALL_ISSUE]++;
		trace_warp(s->trace, w->id, STALL_ISSUE, now, now + 1);
		w->insts++;
		w->since = now + 1;
		w->ready_at = now + 1;
		w->cause = STALL_NOT_SELECTED;
		exec_issue(s, w, now);
	}
	uint64_t next = NEVER;
	for (uint32_t i = 0; i < p->nwarps; i++) {
		const struct warp *w = &s->warps[p->warps[i]];
		if (!w->done && w->ready_at < next)
			next = w->ready_at;
	}
	if (next != NEVER)
		sched_kick(s, sp, next);
}

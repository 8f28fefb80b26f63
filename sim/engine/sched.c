/*
 * sched: the sub-partition schedulers and per-warp stall accounting.
 *
 * Each sub-partition issues at most one warp-instruction per cycle.  It
 * ticks only at cycles where one of its warps can issue (sched_run runs the
 * SM's ticks between the events of sim.c's loop): a tick picks a warp (gto:
 * the last one while it stays ready, else the oldest; gto_lri: the last one
 * while it stays ready, else of the oldest block's ready warps the one that
 * issued least recently; lrr: round robin),
 * issues it, and schedules the next tick at the earliest cycle any of its
 * warps is ready.  Blocked warps have a ready cycle of NEVER and cost
 * nothing until something wakes them.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "chain.h"

/* The deepest ready tree a copy of the tick is made for (16 warps a sub-partition): see tree_fix. */
#define TREE_DEPTH_MAX 4

const char *const stall_key[STALL_COUNT] = {
#define STALL_KEY(e, key, doc) key,
	STALL_LIST(STALL_KEY)
#undef STALL_KEY
};

/*
 * Charges the warp's time from since to now: its cause until it is ready,
 * then not_selected (tr: s->trace).  Every cycle of a warp is charged once,
 * from 0 to the run's end, so stats_finish counts not_selected as the time
 * no other cause took instead of an add here at every issue and deferral.
 */
static ISSUE_INLINE void charge(struct trace *tr, struct warp *w, uint64_t ready, uint64_t now)
{
	if (now <= w->since)
		return;
	uint64_t split = ready < w->since ? w->since : ready;
	if (split > now)
		split = now;
	w->stalls[w->cause] += split - w->since;
	if (tr) {
		trace_warp(tr, w->id, w->cause, w->since, split);
		trace_warp(tr, w->id, STALL_NOT_SELECTED, split, now);
	}
	w->since = now;
}

void sched_charge(struct sim *s, struct warp *w, uint64_t now) { charge(s->trace, w, warp_ready(w), now); }

void sched_block(struct sim *s, struct warp *w, enum stall cause, enum wait_kind kind, uint64_t now)
{
	struct simt_entry *e = simt_cur(w);
	e->blocked = (uint8_t)kind;
	e->cause = (uint8_t)cause;
	e->ticket++;
	simt_mark(w, w->cur);
	if (e->wait_start == NEVER)
		e->wait_start = now;
	if (simt_runnable(s, w))
		return; /* another group of the warp can issue next cycle */
	warp_set_ready(s, w, NEVER);
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
	w->next_known = false;
	e->blocked = WAIT_NONE;
	e->resumed = true;
	simt_mark(w, entry);
	e->blocked_obj = -1;
	e->next_waiter = NONE;
	if (w->done)
		return;
	sched_charge(s, w, s->now);
	if (warp_ready(w) > at)
		warp_set_ready(s, w, at);
	sched_kick(s, w->sp, warp_ready(w));
}

void sched_wake_waiter(struct sim *s, uint32_t waiter, uint64_t at)
{
	sched_wake(s, &s->warps[WAITER_WARP(waiter)], WAITER_ENTRY(waiter), at);
}

void sched_timer(struct sim *s, struct warp *w, uint64_t at)
{
	if (evq_push(&s->q, at, EV_WAKE, WAITER(w), simt_cur(w)->ticket))
		sim_fail(s, DIAG_LIMIT, w, "out of memory for events");
}

void sched_sleep(struct sim *s, struct warp *w, uint64_t until, uint64_t now)
{
	sched_block(s, w, STALL_SLEEP, WAIT_SLEEP, now);
	sched_timer(s, w, until);
}

/*
 * __nanosleep(ns): PTX promises a sleep in [0, 2 ns], at most 1 ms.  The
 * H100 sleeps the next power of two of nanoseconds at or above ns (200 ns:
 * 236, 5 us: 8.2, 50 us: 65.5; traces/h100/forward_progress.csv), and a
 * converged warp whose lanes ask for different times wakes together, after
 * about the shortest (lane * ns / 32: 734 cycles whatever ns).  The group
 * sleeps that long as one; the warp's other groups issue meanwhile.  True
 * once it has slept (its anchor runs again when it wakes).
 */
bool sched_nanosleep(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct simt_entry *e = simt_cur(w);
	if (e->op_step)
		return true; /* woken: the sleep is over */
	int64_t ns[32], least = INT64_MAX;
	uint32_t mask = simt_mask(w);
	simt_eval_lanes(s, w, &in->e[0], mask, ns);
	for (uint32_t m = mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		if (ns[lane] < 0) {
			sim_fail(s, DIAG_INPUT, w, "nanosleep with ns = %lld (thread %u): expected 0 or more",
				 (long long)ns[lane], w->in_block * 32 + (unsigned)lane);
			return true;
		}
		least = ns[lane] < least ? ns[lane] : least;
	}
	if (s->error || least == 0)
		return true;
	uint64_t slept = 1;
	while (slept < (uint64_t)least && slept < 1000000)
		slept <<= 1;
	if (slept > 1000000)
		slept = 1000000; /* PTX: the longest sleep is 1 ms */
	uint64_t cycles = (uint64_t)llround((double)slept * s->m->clock_ghz);
	e->op_step = 1;
	sched_sleep(s, w, now + (cycles ? cycles : 1), now);
	return false;
}

/*
 * A timer set when the group blocked (its ticket then) fires: a sleep is
 * over, or a try_wait reached its time limit before the phase completed —
 * it leaves the barrier's waiters and its anchor, run again, returns false.
 * A group woken, or blocked again, since then has another ticket.
 */
void sched_timer_fired(struct sim *s, uint32_t waiter, uint64_t ticket, uint64_t now)
{
	struct warp *w = &s->warps[WAITER_WARP(waiter)];
	int i = WAITER_ENTRY(waiter);
	struct simt_entry *e = &w->stack[i];
	if (w->done || i >= w->depth || !e->mask || !e->blocked || e->ticket != (uint32_t)ticket)
		return;
	if (e->blocked == WAIT_MBAR && e->blocked_obj >= 0)
		mbar_unwait(s, (uint32_t)e->blocked_obj, waiter);
	else if (e->blocked != WAIT_SLEEP)
		return;
	sched_wake(s, w, i, now);
}

int sched_setup(struct sim *s)
{
	s->tree_depth = 0;
	for (int64_t sp = 0; sp < s->m->subpartitions; sp++) {
		struct subpart *p = &s->sps[sp];
		p->leaves = 2; /* at least one step from the root to a leaf: pick's walk tests after the step */
		unsigned depth = 1;
		while (p->leaves < p->nwarps) {
			p->leaves *= 2;
			depth++;
		}
		s->tree_depth = sp == 0 || s->tree_depth == depth ? depth : 0;
		if (s->tree_depth > TREE_DEPTH_MAX)
			s->tree_depth = 0;
		p->tree = malloc(2 * (size_t)p->leaves * sizeof *p->tree);
		p->issued_at = calloc(p->nwarps ? p->nwarps : 1, sizeof *p->issued_at);
		p->block_end = malloc((p->nwarps ? p->nwarps : 1) * sizeof *p->block_end);
		if (!p->tree || !p->issued_at || !p->block_end)
			return -1;
		/* sim.c adds a block's warps here together, oldest block first */
		for (uint32_t end = p->nwarps; end > 0;) {
			uint32_t first = end - 1;
			while (first > 0 && p->warps[first - 1]->block == p->warps[end - 1]->block)
				first--;
			for (uint32_t i = first; i < end; i++)
				p->block_end[i] = end;
			end = first;
		}
		for (uint32_t i = 0; i < 2 * p->leaves; i++)
			p->tree[i] = NEVER;
		p->ready = p->tree + p->leaves;
		for (uint32_t i = 0; i < p->nwarps; i++) {
			struct warp *w = p->warps[i];
			w->rtree = p->tree;
			w->rleaf = p->leaves + i;
			w->pipe_free = p->pipe_free;
			warp_set_ready(s, w, 0);
		}
	}
	return 0;
}

void sched_free(struct sim *s)
{
	for (int64_t sp = 0; sp < s->m->subpartitions; sp++) {
		free(s->sps[sp].tree);
		free(s->sps[sp].issued_at);
		free(s->sps[sp].block_end);
		s->sps[sp].tree = s->sps[sp].ready = NULL;
		s->sps[sp].issued_at = NULL;
		s->sps[sp].block_end = NULL;
	}
}

/*
 * The ready tree's depth (log2 of its leaves) where a copy of the tick
 * knows it, 0 where it reads p->leaves: with the depth a constant the walk
 * and the fix are a few straight steps, without the loop's counter, its
 * tests and the load of p->leaves (sched_run makes a copy for each depth
 * up to TREE_DEPTH_MAX; with_staging_unified at 4 blocks has 8 warps a
 * sub-partition, depth 3).  GCC 12 at -O2 did not unroll the loops itself.
 */

/* One level of tree_fix: the parent of node i takes the smaller of m (node i's value) and its sibling. */
#define TREE_FIX_STEP(t, i, m)                                                                                     \
	do {                                                                                                       \
		uint64_t sib_ = (t)[(i) ^ 1];                                                                      \
		(m) = sib_ < (m) ? sib_ : (m);                                                                     \
		(t)[(i) >> 1] = (m);                                                                               \
		(i) >>= 1;                                                                                         \
	} while (0)

/* ready_tree_fix for a tree of depth levels below its root (0: p->leaves' own), written out level by level. */
static ISSUE_INLINE void tree_fix(const struct subpart *p, size_t i, unsigned depth)
{
	if (!depth) {
		ready_tree_fix(p->tree, i);
		return;
	}
	uint64_t *t = p->tree, m = t[i];
	TREE_FIX_STEP(t, i, m);
	if (depth > 1)
		TREE_FIX_STEP(t, i, m);
	if (depth > 2)
		TREE_FIX_STEP(t, i, m);
	if (depth > 3)
		TREE_FIX_STEP(t, i, m);
}

/*
 * gto_lri's pick from the oldest ready warp i (the walk's): of the ready
 * warps of i's block, the one that issued least recently (the oldest of
 * equals).  No warp of the block before i is ready.
 */
static ISSUE_INLINE uint32_t least_recent_in_block(const struct subpart *p, uint32_t i, uint64_t now)
{
	uint32_t best = i;
	uint64_t best_at = p->issued_at[i];
	for (uint32_t j = i + 1, end = p->block_end[i]; j < end; j++)
		if (p->ready[j] <= now && p->issued_at[j] < best_at) {
			best = j;
			best_at = p->issued_at[j];
		}
	return best;
}

/*
 * The index (in p->warps) of the warp to issue at now, which some warp is
 * ready by (p->tree[1] <= now).  GTO's greedy warp starts as warp 0: the
 * oldest, which is what the walk would pick while it is ready.
 */
static ISSUE_INLINE uint32_t pick(struct subpart *p, enum sched_policy pol, unsigned depth, uint64_t now)
{
	const uint64_t *ready = p->ready;
	if (pol != SCHED_LRR) {
		if (ready[p->greedy] <= now)
			return p->greedy;
		/* The leftmost leaf at or before now: the oldest ready warp. */
		uint32_t i = 1;
		if (depth) {
			const uint64_t *t = p->tree;
			i = 2 + (t[2] > now);
			if (depth > 1)
				i = 2 * i + (t[2 * i] > now);
			if (depth > 2)
				i = 2 * i + (t[2 * i] > now);
			if (depth > 3)
				i = 2 * i + (t[2 * i] > now);
			i -= 1u << depth;
		} else {
			do
				i = 2 * i + (p->tree[2 * i] > now);
			while (i < p->leaves);
			i -= p->leaves;
		}
		return pol == SCHED_GTO_LRI ? least_recent_in_block(p, i, now) : i;
	}
	for (uint32_t n = 0;; n++) {
		uint32_t i = (p->rr + n) % p->nwarps;
		if (ready[i] <= now) {
			p->rr = (i + 1) % p->nwarps;
			return i;
		}
	}
}

/* The sub-partition issues at now if a warp is ready; returns its next tick (NEVER: sched_kick set it). */
static ISSUE_INLINE uint64_t tick(struct sim *s, struct trace *tr, struct subpart *p, enum sched_policy pol, unsigned depth,
				   uint64_t now)
{
	p->next_tick = NEVER;
	uint64_t next = p->tree[1];
	if (next > now) {
		if (next != NEVER)
			sched_kick(s, (uint32_t)(p - s->sps), next);
		return NEVER;
	}
	/* The picked warp's next instruction may still wait on a result, its pipe or the MIO queue: defer it. */
	uint32_t i;
	struct warp *w;
	for (;;) {
		i = pick(p, pol, depth, now);
		w = p->warps[i];
		/*
		 * cause is apart from what issue_check writes through a pointer, which
		 * would keep it in memory on the inline path too.
		 */
		enum stall cause;
		uint64_t at;
		if (w->next_known) {
			at = issue_when_planned_on(s, w, p->pipe_free, now, &cause); /* reads the plan, changes nothing */
		} else {
			/* finding the next instruction may run ops that issue none: the warp is the one issuing */
			enum stall checked = (enum stall)w->cause;
			s->issuing = w;
			at = issue_check(s, w, now, &checked);
			s->issuing = NULL;
			if (s->error)
				return NEVER;
			cause = checked;
		}
		if (at == now)
			break;
		charge(tr, w, p->ready[i], now);
		if (at != NEVER) /* NEVER: every group waits, and what blocked the last one set the cause */
			w->cause = cause;
		p->ready[i] = at;
		tree_fix(p, p->leaves + i, depth);
		next = p->tree[1];
		if (next > now) {
			if (next != NEVER)
				sched_kick(s, (uint32_t)(p - s->sps), next);
			return NEVER;
		}
	}
	uint64_t *ready = &p->ready[i];
	p->last_issue = now;
	p->greedy = i;
	if (pol == SCHED_GTO_LRI)
		p->issued_at[i] = now;
	charge(tr, w, *ready, now);
	w->stalls[STALL_ISSUE]++;
	w->since = now + 1;
	w->cause = STALL_NOT_SELECTED;
	/* Ready next cycle unless the op says otherwise; the tree above the leaf is fixed once, after it. */
	*ready = now + 1;
	int32_t pc = w->depth > 0 ? simt_pc(w) : -1; /* the op this slot issues from, for the trace */
	/*
	 * s->issuing only spares warp_set_ready a fix of the tree that the end
	 * of the tick makes anyway: it is set around what runs ops, not the
	 * inline slots (a chain's end may fix the path twice).
	 */
	if (w->next_known && !w->next.f) { /* a planned FMA of a chain, or a plain instruction of a form: inline (chain.h) */
		issue_fma(s, tr, w, w->next.e, w->next.in, now);
	} else if (w->next_known && w->next_plain) {
		issue_plain(s, tr, w, now);
	} else {
		s->issuing = w;
		issue_one(s, tr, w, now);
		s->issuing = NULL;
	}
	if (tr && pc >= 0)
		trace_op_at(tr, w->id, (uint32_t)pc); /* names the span the slot began or kept */
	if (*ready == now + 1 && !s->error) {
		/* when its next instruction can issue, known now: one pick instead of a deferral later */
		enum stall cause;
		uint64_t at;
		if (w->next_known) {
			at = issue_when_planned_on(s, w, p->pipe_free, now + 1, &cause);
		} else {
			enum stall checked = STALL_NOT_SELECTED; /* apart, as in the pick above */
			s->issuing = w;
			at = issue_check(s, w, now + 1, &checked);
			s->issuing = NULL;
			cause = checked;
		}
		if (at > now + 1) {
			*ready = at;
			if (at != NEVER)
				w->cause = cause;
		}
	}
	if (tr)
		trace_issue(tr, w->id, now); /* after the op: it says whether the slot is part of a spread op */
	tree_fix(p, p->leaves + i, depth);
	/* sched_kick, knowing that it issued now (and s->now is now): not before now + 1. */
	next = p->tree[1];
	if (next <= now)
		next = now + 1;
	if (next >= p->next_tick)
		return NEVER;
	p->next_tick = next;
	return next;
}

/*
 * The SM's tick at cycle now: each sub-partition due by now issues once, in
 * order.  Only an op run through exec_op can raise an error.  The next ticks
 * gather in s->sm_next itself, which sched_kick lowers meanwhile: a local
 * minimum merged after the loop took a register the inlined tick needed
 * (1.3% more host instructions on every workload, round 13).
 */
static ISSUE_INLINE void tick_sm(struct sim *s, struct trace *tr, enum sched_policy pol, unsigned depth, uint64_t now)
{
	struct subpart *p = s->sps, *end = p + s->m->subpartitions;
	s->sm_next = NEVER;
	for (; p < end; p++) {
		uint64_t next = p->next_tick;
		if (next <= now) {
			next = tick(s, tr, p, pol, depth, now);
			if (s->error)
				break;
		}
		if (next < s->sm_next)
			s->sm_next = next;
	}
}

/*
 * The ticks until the next event (sched_run).  tr is s->trace and pol the
 * machine's policy, constants in each copy sched_run makes: the GTO run
 * without a trace tests for neither on the issue path and has the
 * registers those tests took.
 */
static ISSUE_INLINE void run(struct sim *s, struct trace *tr, enum sched_policy pol, unsigned depth)
{
	/*
	 * The limits as this run's bounds: no event is popped until it
	 * returns, so popped + sm_ticks > max_events is sm_ticks > tick_cap,
	 * and an event or the cycle limit stops it at the same next tick.
	 */
	const uint64_t popped = s->q.popped, max_events = s->limits.max_events;
	const uint64_t tick_cap = popped > max_events ? 0 : max_events - popped;
	const uint64_t cycle_cap = s->limits.max_cycles == NEVER ? NEVER : s->limits.max_cycles + 1;
	for (uint64_t now = s->sm_next;; now = s->sm_next) {
		s->now = now;
		s->q.now = now; /* nothing may be scheduled before the tick */
		s->sm_ticks++;
		tick_sm(s, tr, pol, depth, now);
		/* What the event loop would test before its next tick: an event by then, the limits. */
		uint64_t ev_cycle = evq_empty(&s->q) ? NEVER : s->q.heap[0].cycle;
		uint64_t stop = ev_cycle < cycle_cap ? ev_cycle : cycle_cap;
		if (s->error || s->sm_next >= stop || s->sm_ticks > tick_cap)
			return;
	}
}

/* run with the tree's depth a constant where sched_setup found one all sub-partitions share (tree_fix). */
static ISSUE_INLINE void run_greedy(struct sim *s, struct trace *tr, enum sched_policy pol)
{
	switch (s->tree_depth) {
	case 1: run(s, tr, pol, 1); break;
	case 2: run(s, tr, pol, 2); break;
	case 3: run(s, tr, pol, 3); break;
	case 4: run(s, tr, pol, 4); break;
	default: run(s, tr, pol, 0); break;
	}
}

void sched_run(struct sim *s)
{
	switch (s->m->scheduler) {
	case SCHED_LRR: run(s, s->trace, SCHED_LRR, 0); break;
	case SCHED_GTO_LRI:
		if (s->trace)
			run_greedy(s, s->trace, SCHED_GTO_LRI);
		else
			run_greedy(s, NULL, SCHED_GTO_LRI);
		break;
	default:
		if (s->trace)
			run_greedy(s, s->trace, SCHED_GTO);
		else
			run_greedy(s, NULL, SCHED_GTO);
		break;
	}
}

/*
 * pipe: cuda::pipeline, block scope (pipeline_shared_state<S>) and thread
 * scope.
 *
 * Block scope: per stage two mbarriers, produced[s] and consumed[s]; per
 * thread a head and a tail (commits and releases so far: stage = count % S,
 * lap = count / S), as libcudacxx keeps them.
 *   producer_acquire: wait until consumed[head % S] completed lap head/S - 1
 *                     (first lap: at once) — the back-pressure of S stages;
 *   producer_commit:  arrive on produced[head % S] once the thread's copies
 *                     of the open batch have landed, then head++;
 *   consumer_wait:    wait until produced[tail % S] completed lap tail/S;
 *   consumer_release: arrive on consumed[tail % S], then tail++.
 * Unified pipelines expect |group| arrivals on both; partitioned ones P on
 * produced and |group| - P on consumed.
 *
 * Thread scope has no shared state: commits and waits are cp.async groups
 * (cpasync.c): consumer_wait = wait_prior(head - tail - 1).
 *
 * quit(): "guide" drops the thread out of every stage barrier it is counted
 * in, as the Programming Guide promises; "libcudacxx" only decrements the
 * reference count, as the library's code does, so the barriers keep
 * expecting the thread.
 *
 * make_pipeline on a shared state whose last pipeline every thread has
 * quit (or exited) makes a new pipeline on it, as libcu++'s
 * producer/consumer test does: the roles and counts start over and the
 * stage barriers are initialised again.  The stage sequences go on (the
 * new pipeline's first stage is `base`, a multiple of S), so what the old
 * one copied keeps its place in the dataflow checks.  Making it while a
 * thread is still in the old one is a program error: the library would
 * initialise the barriers under that thread.
 *
 * It also keeps, per consumed batch, the first copy issue, the last landing
 * and how long consumers were blocked on it: the latency-hiding metrics.
 */
#include <stdio.h>
#include <stdlib.h>

#include "simint.h"

int pipe_setup(struct sim *s, struct block *b)
{
	const struct kernel *k = s->k;
	uint32_t W = (uint32_t)((s->launch.block_size + 31) / 32);
	b->pipe_warps = W;
	b->pipes = calloc((size_t)k->npipes * W + 1, sizeof *b->pipes);
	if (!b->pipes)
		return -1;
	size_t n = (size_t)s->launch.block_size;
	uint32_t track = 0;
	for (uint32_t slot = 0; slot < (uint32_t)k->npipes * W; slot++) {
		int i = (int)(slot / W);
		uint32_t warp = slot % W;
		const struct pipeline_decl *pd = &k->pipes[i];
		if (warp && !pd->warp_group)
			continue; /* a block's pipeline has one shared state: slot i * W */
		struct pipe_block *pb = &b->pipes[slot];
		pb->decl = pd;
		pb->first = pd->warp_group ? warp * 32 : 0;
		pb->size = pd->warp_group ? (uint32_t)(n - pb->first < 32 ? n - pb->first : 32) : (uint32_t)n;
		pb->role = calloc(n, 1);
		pb->quit = calloc(n, 1);
		pb->may_produce = calloc((n + 31) / 32, sizeof *pb->may_produce);
		pb->may_consume = calloc((n + 31) / 32, sizeof *pb->may_consume);
		pb->waiting = calloc(n, 1);
		pb->head = calloc(n, sizeof *pb->head);
		pb->tail = calloc(n, sizeof *pb->tail);
		pb->seen = calloc(n, sizeof *pb->seen);
		pb->ring = malloc(pd->stages * sizeof *pb->ring);
		if (!pb->role || !pb->quit || !pb->may_produce || !pb->may_consume || !pb->waiting || !pb->head ||
		    !pb->tail || !pb->seen || !pb->ring)
			return -1;
		for (uint32_t st = 0; st < pd->stages; st++)
			pb->ring[st] = (struct batch_rec){.seq = NEVER};
		pb->track = b->id * s->copy_tracks_per_block + track;
		if (!pd->warp_group || warp == W - 1)
			track += pd->stages; /* the warps of a pipeline over warps share its trace tracks */
		if (s->trace)
			for (uint32_t st = 0; st < pd->stages; st++)
				snprintf(s->trace->copies[pb->track + st].name, sizeof s->trace->copies[0].name,
					 "block %u %s stage %u", b->id, pd->name, st);
		if (pd->scope != PIPE_SCOPE_BLOCK)
			continue;
		char what[128], name[72];
		if (pd->warp_group)
			snprintf(name, sizeof name, "%s[warp %u]", pd->name, warp);
		else
			snprintf(name, sizeof name, "%s", pd->name);
		for (uint32_t st = 0; st < pd->stages; st++) {
			snprintf(what, sizeof what, "%s.produced[%u]", name, st);
			uint32_t id = mbar_new(s, b->id, what);
			s->mbars[id].stage_kind = 1;
			if (st == 0)
				pb->produced = id;
		}
		for (uint32_t st = 0; st < pd->stages; st++) {
			snprintf(what, sizeof what, "%s.consumed[%u]", name, st);
			uint32_t id = mbar_new(s, b->id, what);
			s->mbars[id].stage_kind = -1;
			if (st == 0)
				pb->consumed = id;
		}
	}
	return 0;
}

void pipe_free(struct sim *s, struct block *b)
{
	for (uint32_t i = 0; b->pipes && i < (uint32_t)s->k->npipes * b->pipe_warps; i++) {
		struct pipe_block *pb = &b->pipes[i];
		free(pb->role);
		free(pb->quit);
		free(pb->may_produce);
		free(pb->may_consume);
		free(pb->waiting);
		free(pb->head);
		free(pb->tail);
		free(pb->seen);
		free(pb->ring);
	}
	free(b->pipes);
	b->pipes = NULL;
}

/* The shared state of pipeline `pipe` that thread tid of the block works on. */
static struct pipe_block *pipe_at(struct sim *s, uint32_t block, int pipe, uint32_t tid)
{
	struct block *b = &s->blocks[block];
	return &b->pipes[(uint32_t)pipe * b->pipe_warps + (s->k->pipes[pipe].warp_group ? tid / 32 : 0)];
}

static struct pipe_block *pipe_of(struct sim *s, const struct warp *w, int pipe)
{
	return pipe_at(s, w->block, pipe, w->in_block * 32);
}

static uint32_t tid_of(const struct warp *w, int lane) { return w->in_block * 32 + (uint32_t)lane; }

static bool block_scope(const struct pipe_block *pb) { return pb->decl->scope == PIPE_SCOPE_BLOCK; }

static bool thread_live(const struct sim *s, const struct warp *w, uint32_t t);

/* The barriers are set up by the first call after make_pipeline's group sync. */
static bool ensure_ready(struct sim *s, struct warp *w, struct pipe_block *pb)
{
	if (pb->ready)
		return true;
	if (!pb->made) {
		sim_fail(s, DIAG_INPUT, w, "program error: pipeline \"%s\" used before make_pipeline", pb->decl->name);
		return false;
	}
	/*
	 * libcudacxx (cuda/pipeline, make_pipeline): group rank 0 initialises
	 * every stage's barriers with group.size() (unified), or P and
	 * group.size() - P (partitioned; by role, P counts the producers that
	 * reached it), whoever else reached the call: a thread that returned
	 * before make_pipeline is still expected.
	 */
	uint32_t group = pb->size;
	pb->absent = group - pb->members;
	if (block_scope(pb)) {
		const struct block *b = &s->blocks[w->block];
		if (!pb->role[pb->first] && !thread_live(s, w, pb->first)) {
			sim_fail(s, DIAG_INPUT, w,
				 "program error: thread %u of block %u exited before make_pipeline(\"%s\"): group rank 0 is "
				 "the thread that initialises the stage barriers, so no thread does",
				 pb->first, b->id, pb->decl->name);
			return false;
		}
		int64_t P = pb->split == SPLIT_UNIFIED ? group : pb->split == SPLIT_COUNT ? pb->pcount : pb->producers;
		int64_t C = pb->split == SPLIT_UNIFIED ? group : (int64_t)group - P;
		if (P <= 0 || C <= 0) {
			sim_fail(s, DIAG_INPUT, w,
				 "program error: make_pipeline(\"%s\") of a group of %u threads with %lld producer(s) "
				 "initialises its %s barriers with an expected count of %lld: init needs a count of at "
				 "least 1 (a partitioned pipeline needs producers and consumers)",
				 pb->decl->name, group, (long long)P, P <= 0 ? "produced" : "consumed",
				 (long long)(P <= 0 ? P : C));
			return false;
		}
		pb->producers = (uint32_t)P;
		pb->consumers = (uint32_t)C;
	}
	for (uint32_t st = 0; block_scope(pb) && st < pb->decl->stages; st++) {
		struct mbar *p = &s->mbars[pb->produced + st], *c = &s->mbars[pb->consumed + st];
		mbar_init(p, pb->producers);
		mbar_init(c, pb->consumers);
	}
	pb->refcount = group;
	pb->ready = true;
	return true;
}

/* Thread t's role or quit changed: its bits in may_produce and may_consume follow. */
static void note_role(struct pipe_block *pb, uint32_t t)
{
	uint32_t bit = 1u << (t % 32);
	bool live = !pb->quit[t];
	pb->may_produce[t / 32] = (pb->may_produce[t / 32] & ~bit) | (live && (pb->role[t] & ROLE_PRODUCER) ? bit : 0);
	pb->may_consume[t / 32] = (pb->may_consume[t / 32] & ~bit) | (live && (pb->role[t] & ROLE_CONSUMER) ? bit : 0);
}

/* Program errors: a thread using the half of a partitioned pipeline that is not its role. */
static bool check_role(struct sim *s, struct warp *w, struct pipe_block *pb, uint8_t need, const char *call)
{
	/* Every lane in role and not quit: the usual case, one mask test (need is one role bit). */
	uint32_t ok = need == ROLE_PRODUCER ? pb->may_produce[w->in_block] : pb->may_consume[w->in_block];
	if (!(simt_mask(w) & ~ok))
		return true;
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		uint32_t t = tid_of(w, __builtin_ctz(m));
		if (pb->quit[t]) {
			sim_fail(s, DIAG_INPUT, w, "program error: thread %u calls %s after quit()", t, call);
			return false;
		}
		if (!(pb->role[t] & need)) {
			sim_fail(s, DIAG_INPUT, w, "program error: thread %u is a %s of pipeline \"%s\" and calls %s", t,
				 pb->role[t] & ROLE_PRODUCER ? "producer" : pb->role[t] ? "consumer" : "non-member",
				 pb->decl->name, call);
			return false;
		}
	}
	return true;
}

/* Whether thread t of the block has not exited. */
static bool thread_live(const struct sim *s, const struct warp *w, uint32_t t)
{
	const struct block *b = &s->blocks[w->block];
	return s->warps[b->first_warp + t / 32].live >> (t % 32) & 1;
}

/*
 * make_pipeline by lanes some of which are members of the pipeline made
 * last: a new pipeline on the shared state begins (libcu++ re-initialises
 * the stage barriers and the reference count).  Legal once every member of
 * the old one has quit() or exited; false after a program error.
 */
static bool make_again(struct sim *s, struct warp *w, struct pipe_block *pb, uint32_t mask)
{
	uint32_t again = 0;
	for (uint32_t m = mask; m; m &= m - 1)
		if (pb->role[tid_of(w, __builtin_ctz(m))])
			again |= m & -m;
	if (!again)
		return true; /* they join the pipeline being made */
	uint32_t n = (uint32_t)s->launch.block_size;
	if (!block_scope(pb)) {
		/* a thread's own pipeline object: a fresh one has no batch to wait for */
		for (uint32_t m = again; m; m &= m - 1) {
			uint32_t t = tid_of(w, __builtin_ctz(m));
			pb->tail[t] = pb->head[t];
			pb->waiting[t] = 0;
			pb->quit[t] = 0;
		}
		return true;
	}
	for (uint32_t m = again; m; m &= m - 1) {
		uint32_t t = tid_of(w, __builtin_ctz(m));
		if (!pb->quit[t]) {
			sim_fail(s, DIAG_INPUT, w,
				 "program error: thread %u makes pipeline \"%s\" while it is still in the one it made "
				 "before on the same shared state (quit() it first, as ~pipeline() does)",
				 t, pb->decl->name);
			return false;
		}
	}
	uint32_t S = pb->decl->stages, last = pb->base;
	for (uint32_t t = 0; t < n; t++) {
		if (pb->role[t] && !pb->quit[t] && thread_live(s, w, t)) {
			sim_fail(s, DIAG_INPUT, w,
				 "program error: thread %u makes a new pipeline on \"%s\"'s shared state while thread %u "
				 "is still in the one made on it before (it has not quit()): the library would "
				 "initialise the stage barriers under it",
				 tid_of(w, __builtin_ctz(again)), pb->decl->name, t);
			return false;
		}
		last = pb->head[t] > last ? pb->head[t] : last;
		last = pb->tail[t] > last ? pb->tail[t] : last;
	}
	pb->base = (last + S - 1) / S * S;
	for (uint32_t t = 0; t < n; t++) {
		pb->role[t] = 0;
		pb->quit[t] = 0;
		pb->waiting[t] = 0;
		pb->head[t] = pb->tail[t] = pb->base;
		note_role(pb, t);
	}
	pb->members = pb->producers = pb->consumers = 0;
	pb->refcount = 0;
	pb->ready = false; /* the first call after the group's sync initialises the barriers again */
	return true;
}

bool pipe_make(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct pipe_block *pb = pipe_of(s, w, in->obj);
	if (pb->made && !make_again(s, w, pb, simt_mask(w)))
		return true;
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		uint32_t t = tid_of(w, lane);
		bool producer = true;
		if (in->split == SPLIT_COUNT) {
			int64_t P = simt_eval(s, w, lane, &in->e[0]);
			producer = (int64_t)(t - pb->first) < P; /* the group's ranks below P */
			if (t == pb->first)
				pb->pcount = P; /* rank 0 initialises the barriers: its argument is the one that counts */
		}
		else if (in->split == SPLIT_ROLE)
			producer = simt_eval(s, w, lane, &in->e[0]) != 0;
		uint8_t role = in->split == SPLIT_UNIFIED ? ROLE_PRODUCER | ROLE_CONSUMER
							  : producer ? ROLE_PRODUCER : ROLE_CONSUMER;
		if (!pb->role[t]) {
			pb->members++;
			pb->producers += (role & ROLE_PRODUCER) != 0;
			pb->consumers += (role & ROLE_CONSUMER) != 0;
		}
		pb->role[t] = role;
		note_role(pb, t);
	}
	pb->made = true;
	pb->split = (uint8_t)in->split;
	if (!block_scope(pb))
		return true; /* cuda::make_pipeline() of a thread is free: no shared state */
	/* libcudacxx: thread 0 initialises the stage barriers, then the group syncs. */
	if (pb->decl->warp_group)
		return true; /* a tile's sync: the warp's threads that reach it together (a diverged tile is not modelled) */
	return sync_threads(s, w, now, STALL_SYNCTHREADS);
}

/* The consumed barrier the stage of head h waits on, or -1 when the stage is free (its consumers released it a lap ago). */
static int64_t stage_taken(const struct sim *s, const struct pipe_block *pb, uint32_t h)
{
	uint32_t S = pb->decl->stages;
	uint32_t lap = (h - pb->base) / S;
	uint32_t bar = pb->consumed + h % S;
	return lap > 0 && !mbar_phase_done(&s->mbars[bar], lap - 1) ? (int64_t)bar : -1;
}

/* The acquire waits for the stage's barrier (libcu++'s wait_parity: a try_wait loop) unless `taken` is -1. */
static bool acquire_stage(struct sim *s, struct warp *w, const struct pipe_block *pb, int64_t taken, uint64_t now)
{
	return mbar_await(s, w, taken < 0, taken < 0 ? pb->consumed : (uint32_t)taken, STALL_PRODUCER_ACQUIRE, now);
}

bool pipe_acquire(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct pipe_block *pb = pipe_of(s, w, in->obj);
	if (!ensure_ready(s, w, pb) || !check_role(s, w, pb, ROLE_PRODUCER, "producer_acquire"))
		return true;
	if (!block_scope(pb))
		return true;
	uint32_t S = pb->decl->stages;
	if (simt_mask(w) == FULL_WARP) {
		/* The usual call: 32 threads on one head, none of them holding every stage; one barrier test. */
		const uint32_t *head = pb->head + tid_of(w, 0), *tail = pb->tail + tid_of(w, 0);
		const uint8_t *role = pb->role + tid_of(w, 0);
		uint32_t h = head[0], odd = 0; /* a lane on another head, or a consumer holding every stage */
		for (int l = 0; l < 32; l++)
			odd |= (head[l] ^ h) | ((uint32_t)(role[l] & ROLE_CONSUMER) & (uint32_t)(h - tail[l] >= S) << 1);
		if (!odd)
			return acquire_stage(s, w, pb, stage_taken(s, pb, h), now);
	}
	uint32_t checked = 0;
	int64_t taken = -1;
	bool any = false; /* head value `checked` already found free: lanes mostly share it (a divide less each) */
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		uint32_t t = tid_of(w, __builtin_ctz(m));
		uint32_t h = pb->head[t];
		if ((pb->role[t] & ROLE_CONSUMER) && h - pb->tail[t] >= S) {
			sim_fail(s, DIAG_INPUT, w,
				 "program error: thread %u acquires a stage while it holds all %u stages of \"%s\" "
				 "(%u committed, %u released): it would wait for itself",
				 t, S, pb->decl->name, h, pb->tail[t]);
			return true;
		}
		if (any && h == checked)
			continue;
		any = true;
		checked = h;
		if ((taken = stage_taken(s, pb, h)) >= 0)
			break;
	}
	return acquire_stage(s, w, pb, taken, now);
}

/* Arrivals of one warp-instruction, grouped by barrier and cycle (usually one group). */
struct arrivals {
	uint32_t bar[32];
	uint64_t at[32];
	uint32_t count[32];
	int n;
};

static inline void add_arrival(struct arrivals *a, uint32_t bar, uint64_t at)
{
	/* Pairs are unique, so the one just added, when it matches, is the one the search would find. */
	if (a->n && a->bar[a->n - 1] == bar && a->at[a->n - 1] == at) {
		a->count[a->n - 1]++;
		return;
	}
	for (int i = 0; i < a->n; i++)
		if (a->bar[i] == bar && a->at[i] == at) {
			a->count[i]++;
			return;
		}
	a->bar[a->n] = bar;
	a->at[a->n] = at;
	a->count[a->n++] = 1;
}

static void send_arrivals(struct sim *s, const struct arrivals *a)
{
	for (int i = 0; i < a->n; i++)
		mbar_arrive_later(s, a->bar[i], a->at[i], a->count[i], false);
}

static struct batch_rec *batch_for(struct sim *s, struct pipe_block *pb, uint64_t seq)
{
	struct batch_rec *r = &pb->ring[seq % pb->decl->stages];
	if (r->seq != seq) {
		if (r->seq != NEVER)
			stats_batch(s, r, pb->track, (uint32_t)(r->seq % pb->decl->stages));
		*r = (struct batch_rec){.seq = seq, .first_issue = NEVER};
	}
	return r;
}

/* A thread-scope batch record takes in a committing thread's copies: its earliest issue and latest landing. */
static void batch_span(struct batch_rec *r, uint64_t first, uint64_t land)
{
	if (first < r->first_issue)
		r->first_issue = first;
	if (land > r->last_land)
		r->last_land = land;
}

bool pipe_commit(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct pipe_block *pb = pipe_of(s, w, in->obj);
	if (!ensure_ready(s, w, pb) || !check_role(s, w, pb, ROLE_PRODUCER, "producer_commit"))
		return true;
	uint32_t mask = simt_mask(w);
	uint32_t S = pb->decl->stages;
	if (!block_scope(pb)) {
		cpa_settle(s, w);
		uint32_t *head = pb->head + tid_of(w, 0);
		if (mask == FULL_WARP) {
			/*
			 * A full warp on one head (the usual commit): one stage record, which takes the threads'
			 * earliest copy and latest landing (a minimum and a maximum: in any order, as thread by
			 * thread), and one batch_for instead of 32 of the same sequence number.
			 */
			uint32_t h = head[0], odd = 0;
			for (int l = 0; l < 32; l++)
				odd |= head[l] ^ h;
			if (!odd) {
				const struct cpa_open *o = &s->blocks[w->block].cpa_open[tid_of(w, 0)];
				uint64_t first = o[0].first, land = o[0].land;
				for (int l = 1; l < 32; l++) {
					first = o[l].first < first ? o[l].first : first;
					land = o[l].land > land ? o[l].land : land;
				}
				for (int l = 0; l < 32; l++)
					head[l] = h + 1;
				batch_span(batch_for(s, pb, h), first, land);
				cpa_commit(s, w, mask);
				return true;
			}
		}
		for (uint32_t m = mask; m; m &= m - 1) {
			uint32_t t = tid_of(w, __builtin_ctz(m));
			const struct cpa_open *o = &s->blocks[w->block].cpa_open[t];
			batch_span(batch_for(s, pb, pb->head[t]++), o->first, o->land);
		}
		cpa_commit(s, w, mask);
		return true;
	}
	struct arrivals a;
	a.n = 0;
	uint64_t soonest = now + (uint64_t)s->m->mbarrier_count_latency;
	struct cpa_open *ct = &s->blocks[w->block].cpa_open[tid_of(w, 0)];
	uint32_t *head = pb->head + tid_of(w, 0);
	/* cp.async.mbarrier.arrive: the stage's phase tracks the thread's copies so far, primitive ones included */
	flow_cp_arrive(s, w, mask, FLOW_PIPE, in->obj, head);
	if (mask == FULL_WARP) {
		/* The usual call: 32 threads on one head, one stage record and barrier, whole-warp loops. */
		uint32_t h = head[0], odd = 0; /* a lane on another head */
		for (int l = 0; l < 32; l++)
			odd |= head[l] ^ h;
		if (!odd) {
			struct batch_rec *r = batch_for(s, pb, h);
			uint32_t bar = pb->produced + h % S;
			uint64_t land[32], first;
			/* one landing for every thread (its copies were the group's): one arrival of 32 */
			bool one = cpa_take_whole(s, w, &first, land);
			for (int l = 0; l < 32; l++)
				head[l] = h + 1;
			if (first < r->first_issue)
				r->first_issue = first;
			if (one) {
				if (land[0] > r->last_land)
					r->last_land = land[0];
				mbar_arrive_later(s, bar, land[0] > soonest ? land[0] : soonest, 32, false);
				return true;
			}
			for (int l = 0; l < 32; l++) {
				r->last_land = land[l] > r->last_land ? land[l] : r->last_land;
				add_arrival(&a, bar, land[l] > soonest ? land[l] : soonest);
			}
			send_arrivals(s, &a);
			return true;
		}
	}
	cpa_settle(s, w);
	uint32_t last_h = 0, bar = 0;
	struct batch_rec *r = NULL; /* the record and barrier of last_h: lanes mostly share their head */
	for (uint32_t m = mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		uint32_t h = head[lane]++;
		if (!r || h != last_h) {
			r = batch_for(s, pb, h);
			bar = pb->produced + h % S;
			last_h = h;
		}
		/* the thread's open cp.async batch closes: its copies are the stage's */
		uint64_t first = ct[lane].first, land = ct[lane].land;
		ct[lane].first = NEVER;
		ct[lane].land = 0;
		/* cp.async.mbarrier.arrive: the arrival happens when the thread's copies have landed. */
		add_arrival(&a, bar, land > soonest ? land : soonest);
		if (first < r->first_issue)
			r->first_issue = first;
		if (land > r->last_land)
			r->last_land = land;
	}
	send_arrivals(s, &a);
	return true;
}

static void record_exposure(struct sim *s, struct warp *w, struct pipe_block *pb, uint32_t seq, uint64_t now)
{
	struct simt_entry *e = simt_cur(w);
	if (e->wait_start == NEVER)
		return;
	struct batch_rec *r = batch_for(s, pb, seq);
	uint64_t from = e->wait_start;
	if (w->calls_from && w->calls_from - 1 < from)
		from = w->calls_from - 1;
	uint64_t blocked = now - from;
	if (blocked > r->exposed)
		r->exposed = blocked;
}

/*
 * Thread scope: cp.async.wait_group over the warp's batches, the wait
 * timed.  n[lane] is each thread's own count (NO_WAIT: it does not wait);
 * lanes with different counts run different paths of the compiled switch
 * (cuda/pipeline, __pipeline_consumer_wait(pipe, prior)) one after the
 * other, so the warp goes on when the last of them is released, while
 * each thread's over-wait is measured against its own count.  tail_to:
 * what the thread's tail becomes (TAIL_KEEP, TAIL_PLUS_ONE, TAIL_HEAD_MINUS_N).
 */
#define NO_WAIT UINT32_MAX
enum tail_update { TAIL_KEEP, TAIL_PLUS_ONE, TAIL_HEAD_MINUS_N };

static bool thread_wait(struct sim *s, struct warp *w, struct pipe_block *pb, const uint32_t n[32],
			enum tail_update tail_to, uint64_t now)
{
	uint32_t mask = simt_mask(w);
	struct simt_entry *e = simt_cur(w);
	if (e->wait_start == NEVER) {
		uint64_t release = now;
		uint32_t left = mask;
		while (left) {
			uint32_t v = n[__builtin_ctz(left)], same = 0;
			for (uint32_t m = left; m; m &= m - 1)
				if (n[__builtin_ctz(m)] == v)
					same |= m & -m;
			left &= ~same;
			if (v == NO_WAIT)
				continue;
			/* a pipeline's batches count as its stages; the primitives' as the warp's groups */
			uint64_t r = cpa_wait_prior(s, w, same, v, now, !pb);
			if (r > release)
				release = r;
		}
		if (release > now) {
			e->wait_start = now;
			warp_set_ready(s, w, release);
			w->cause = STALL_CONSUMER_WAIT;
			return false; /* issue again at release, when the batches have landed */
		}
	}
	if (!pb)
		return true;
	uint32_t first = tid_of(w, __builtin_ctz(mask));
	if (pb->tail[first] < pb->head[first])
		record_exposure(s, w, pb, pb->tail[first], now);
	for (uint32_t m = mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		uint32_t t = tid_of(w, lane);
		if (n[lane] == NO_WAIT)
			continue;
		if (tail_to == TAIL_PLUS_ONE)
			pb->tail[t]++;
		else if (tail_to == TAIL_HEAD_MINUS_N)
			pb->tail[t] = pb->head[t] - n[lane]; /* modulo 2^8 as the library's uint8_t, see thread_pending */
		pb->waiting[t] = 1;
	}
	return true;
}

/*
 * Batches committed and not yet waited for by a thread-scope pipeline, as
 * the library's uint8_t __head - __tail (cuda/pipeline lines 403-404): 256
 * commits without a wait read as none.
 */
static uint32_t thread_pending(const struct pipe_block *pb, uint32_t t)
{
	return (uint8_t)(pb->head[t] - pb->tail[t]);
}

/* The produced barrier the stage of tail t waits on, or -1 when it has landed (its lap's phase completed). */
static int64_t stage_pending(const struct sim *s, const struct pipe_block *pb, uint32_t t)
{
	uint32_t S = pb->decl->stages;
	uint32_t bar = pb->produced + t % S;
	return mbar_phase_done(&s->mbars[bar], (t - pb->base) / S) ? -1 : (int64_t)bar;
}

/* The consumer waits for the stage's barrier (libcu++'s wait_parity: a try_wait loop) unless `pending` is -1. */
static bool stage_landed(struct sim *s, struct warp *w, const struct pipe_block *pb, int64_t pending, uint64_t now)
{
	return mbar_await(s, w, pending < 0, pending < 0 ? pb->produced : (uint32_t)pending, STALL_CONSUMER_WAIT, now);
}

bool pipe_wait(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct pipe_block *pb = pipe_of(s, w, in->obj);
	if (!ensure_ready(s, w, pb) || !check_role(s, w, pb, ROLE_CONSUMER, "consumer_wait"))
		return true;
	uint32_t m = simt_mask(w);
	if (!block_scope(pb)) {
		/*
		 * cuda/pipeline lines 373-382: head == tail returns at once;
		 * otherwise wait_group(min(head - tail - 1, 8)) of the thread's
		 * own counts, then ++tail.
		 */
		uint32_t n[32];
		for (uint32_t mm = m; mm; mm &= mm - 1) {
			int lane = __builtin_ctz(mm);
			uint32_t pending = thread_pending(pb, tid_of(w, lane));
			n[lane] = pending ? pending - 1 : NO_WAIT;
		}
		return thread_wait(s, w, pb, n, TAIL_PLUS_ONE, now);
	}
	if (m == FULL_WARP) {
		/* The usual call: 32 threads on one tail, one barrier test and whole-warp loops. */
		uint8_t *waiting = pb->waiting + tid_of(w, 0);
		uint32_t *tail = pb->tail + tid_of(w, 0), *seen = pb->seen + tid_of(w, 0), t = tail[0];
		uint32_t odd = 0; /* a lane on another tail */
		for (int l = 0; l < 32; l++)
			odd |= tail[l] ^ t;
		if (!odd) {
			if (!stage_landed(s, w, pb, stage_pending(s, pb, t), now))
				return false;
			record_exposure(s, w, pb, t, now);
			for (int l = 0; l < 32; l++) {
				waiting[l] = 1;
				seen[l] = t + 1 > seen[l] ? t + 1 : seen[l];
			}
			return true;
		}
	}
	uint32_t checked = 0;
	int64_t pending = -1;
	bool any = false; /* tail value `checked` already found complete: lanes mostly share it */
	for (uint32_t mm = m; mm; mm &= mm - 1) {
		uint32_t t = pb->tail[tid_of(w, __builtin_ctz(mm))];
		if (any && t == checked)
			continue;
		any = true;
		checked = t;
		if ((pending = stage_pending(s, pb, t)) >= 0)
			break;
	}
	if (!stage_landed(s, w, pb, pending, now))
		return false;
	record_exposure(s, w, pb, pb->tail[tid_of(w, __builtin_ctz(m))], now);
	for (uint32_t mm = m; mm; mm &= mm - 1) {
		uint32_t t = tid_of(w, __builtin_ctz(mm));
		pb->waiting[t] = 1;
		if (pb->tail[t] + 1 > pb->seen[t])
			pb->seen[t] = pb->tail[t] + 1;
	}
	return true;
}

/*
 * ok = consumer_wait_for(ns).  Block scope (cuda/pipeline lines 178-186):
 * poll produced[tail] with back-off until its phase completes or the
 * duration (ns at the machine's clock, from the group's first try) has
 * passed: 1 in the lanes whose stage landed — they hold it as after
 * consumer_wait — 0 in the others, which may try again.  Thread scope
 * (lines 386-392): consumer_wait(), then true.
 */
bool pipe_wait_for(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct pipe_block *pb = pipe_of(s, w, in->obj);
	if (!ensure_ready(s, w, pb) || !check_role(s, w, pb, ROLE_CONSUMER, "consumer_wait_for"))
		return true;
	uint32_t mask = simt_mask(w);
	int64_t ok[32];
	if (!block_scope(pb)) {
		if (!pipe_wait(s, w, in, now))
			return false;
		for (int l = 0; l < 32; l++)
			ok[l] = 1;
		simt_assign_values(s, w, in->slot, mask, ok);
		return true;
	}
	struct simt_entry *e = simt_cur(w);
	int64_t ns = simt_eval(s, w, __builtin_ctz(mask), &in->e[0]);
	/* cycles at the machine's clock; capped far beyond any run (no overflow for huge durations) */
	uint64_t limit = ns <= 0 ? 0 : ns >= (1ll << 40) ? 1ull << 44 : (uint64_t)((double)ns * s->m->clock_ghz);
	uint32_t S = pb->decl->stages, done = 0;
	int64_t missing = -1;
	for (uint32_t m = mask; m; m &= m - 1) {
		uint32_t t = pb->tail[tid_of(w, __builtin_ctz(m))];
		uint32_t bar = pb->produced + t % S;
		if (mbar_phase_done(&s->mbars[bar], (t - pb->base) / S))
			done |= m & -m;
		else if (missing < 0)
			missing = bar;
	}
	uint64_t start = e->wait_start == NEVER ? now : e->wait_start;
	bool over = done == mask || now >= start + limit;
	if (e->polling || simt_polls_apart(s, w, e)) {
		/* a diverged warp's try_wait loop polls (mbar_await) until the phase completes or the time is up */
		if (!mbar_await(s, w, over, missing < 0 ? pb->produced : (uint32_t)missing, STALL_CONSUMER_WAIT, now))
			return false;
	} else if (!over) {
		sched_block(s, w, STALL_CONSUMER_WAIT, WAIT_MBAR, now);
		simt_detach(s, w, now); /* a try_wait loop with back-off */
		mbar_wait_on(s, w, (uint32_t)missing);
		sched_timer(s, w, start + limit);
		return false;
	}
	if (done)
		record_exposure(s, w, pb, pb->tail[tid_of(w, __builtin_ctz(done))], now);
	if (done == mask) {
		e->poll = -1;
	} else {
		/* timed out: a loop of nothing but such tries is a spin, and one that can never end a deadlock */
		simt_failed_poll(e, (int32_t)missing);
		simt_detach(s, w, now); /* the caller's retry loop YIELDs: the others go on past the join */
		if (e->polls >= SPIN_POLLS)
			sim_check_spin(s, now);
	}
	for (uint32_t m = mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		uint32_t t = tid_of(w, lane);
		ok[lane] = (done >> lane) & 1;
		if (!ok[lane])
			continue;
		pb->waiting[t] = 1;
		if (pb->tail[t] + 1 > pb->seen[t])
			pb->seen[t] = pb->tail[t] + 1;
	}
	simt_assign_values(s, w, in->slot, mask, ok);
	return true;
}

bool pipe_wait_prior(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	uint32_t n[32];
	for (int l = 0; l < 32; l++)
		n[l] = (uint32_t)in->e[0].value;
	if (in->op == OP_PIPELINE_WAIT_PRIOR)
		return thread_wait(s, w, NULL, n, TAIL_KEEP, now);
	struct pipe_block *pb = pipe_of(s, w, in->obj);
	if (!ensure_ready(s, w, pb) || !check_role(s, w, pb, ROLE_CONSUMER, "consumer_wait_prior"))
		return true;
	/* cuda/pipeline lines 477-482: wait_group(min(N, 8)), then tail = head - N */
	return thread_wait(s, w, pb, n, TAIL_HEAD_MINUS_N, now);
}

bool pipe_release(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct pipe_block *pb = pipe_of(s, w, in->obj);
	if (!ensure_ready(s, w, pb) || !check_role(s, w, pb, ROLE_CONSUMER, "consumer_release"))
		return true;
	if (!block_scope(pb))
		return true; /* cuda/pipeline line 384: consumer_release() of a thread-scope pipeline is empty */
	uint32_t S = pb->decl->stages;
	struct arrivals a;
	a.n = 0;
	uint64_t at = now + (uint64_t)s->m->mbarrier_count_latency;
	bool block = true, any = false;
	if (block && simt_mask(w) == FULL_WARP) {
		/* The usual call: 32 threads that have all waited, on one tail; whole-warp loops, one arrival. */
		uint8_t *waiting = pb->waiting + tid_of(w, 0);
		uint32_t *tail = pb->tail + tid_of(w, 0), t = tail[0];
		uint32_t odd = 0; /* a lane on another tail, or one that has not waited */
		for (int l = 0; l < 32; l++)
			odd |= (tail[l] ^ t) | (waiting[l] == 0);
		if (!odd) {
			for (int l = 0; l < 32; l++) {
				waiting[l] = 0;
				tail[l] = t + 1;
			}
			mbar_arrive_later(s, pb->consumed + t % S, at, 32, false);
			return true;
		}
	}
	uint32_t last_t = 0, bar = 0; /* the barrier of tail last_t: lanes mostly share their tail */
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		uint32_t tid = tid_of(w, __builtin_ctz(m));
		/* cuda/pipeline lines 168-175: release arrives and advances, with or without a wait before it */
		pb->waiting[tid] = 0;
		uint32_t t = pb->tail[tid]++;
		if (!block)
			continue;
		if (!any || t != last_t) {
			bar = pb->consumed + t % S;
			last_t = t;
			any = true;
		}
		add_arrival(&a, bar, at);
	}
	send_arrivals(s, &a);
	return true;
}

/* Arrivals a thread has made on stage s's barrier after `count` calls (commits or releases). */
static uint32_t arrivals_on(uint32_t count, uint32_t stage, uint32_t S)
{
	return count > stage ? (count - stage - 1) / S + 1 : 0;
}

/* The thread leaves one barrier: from the next phase on, or from this one if it has not arrived yet. */
static void drop_from(struct sim *s, uint32_t bar, uint32_t arrived, uint64_t now)
{
	struct mbar *b = &s->mbars[bar];
	if (arrived > b->phase) {
		b->expected--;
		return;
	}
	mbar_arrive_later(s, bar, now + (uint64_t)s->m->mbarrier_count_latency, 1, true);
}

bool pipe_quit(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct pipe_block *pb = pipe_of(s, w, in->obj);
	if (!ensure_ready(s, w, pb))
		return true;
	uint32_t S = pb->decl->stages;
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		uint32_t t = tid_of(w, __builtin_ctz(m));
		if (pb->quit[t]) {
			sim_fail(s, DIAG_INPUT, w, "program error: thread %u calls quit() twice", t);
			return true;
		}
		pb->quit[t] = 1;
		note_role(pb, t);
		pb->refcount--;
		s->rep->quits++;
		if (!block_scope(pb) || s->m->quit == QUIT_LIBCUDACXX)
			continue; /* libcudacxx: only the reference count drops */
		for (uint32_t st = 0; st < S; st++) {
			if (pb->role[t] & ROLE_PRODUCER)
				drop_from(s, pb->produced + st, arrivals_on(pb->head[t] - pb->base, st, S), now);
			if (pb->role[t] & ROLE_CONSUMER)
				drop_from(s, pb->consumed + st, arrivals_on(pb->tail[t] - pb->base, st, S), now);
		}
	}
	return true;
}

/*
 * Threads return while in a block pipeline: the pipeline object's
 * destructor runs, and ~pipeline() calls quit() (cuda/pipeline lines
 * 98-104) — under "guide" they drop out of the stage barriers, under
 * "libcudacxx" only the reference count drops and the barriers keep
 * expecting them (the deadlock hint names them).
 */
void pipe_thread_exits(struct sim *s, struct warp *w, uint32_t lanes)
{
	struct block *b = &s->blocks[w->block];
	for (int i = 0; i < s->k->npipes; i++) {
		struct pipe_block *pb = pipe_of(s, w, i);
		if (!block_scope(pb) || !pb->made)
			continue;
		uint32_t in = 0;
		for (uint32_t m = lanes; m; m &= m - 1) {
			uint32_t t = tid_of(w, __builtin_ctz(m));
			if (pb->role[t] && !pb->quit[t])
				in |= m & -m;
		}
		if (!in || !ensure_ready(s, w, pb))
			continue;
		uint32_t S = pb->decl->stages;
		for (uint32_t m = in; m; m &= m - 1) {
			uint32_t t = tid_of(w, __builtin_ctz(m));
			b->exited_in_pipe[t] = 1;
			pb->quit[t] = 1;
			note_role(pb, t);
			pb->refcount--;
			if (s->m->quit == QUIT_LIBCUDACXX)
				continue;
			for (uint32_t st = 0; st < S; st++) {
				if (pb->role[t] & ROLE_PRODUCER)
					drop_from(s, pb->produced + st, arrivals_on(pb->head[t] - pb->base, st, S), s->now);
				if (pb->role[t] & ROLE_CONSUMER)
					drop_from(s, pb->consumed + st, arrivals_on(pb->tail[t] - pb->base, st, S), s->now);
			}
		}
	}
}

uint32_t pipe_copy_seq(struct sim *s, const struct warp *w, int pipe, int lane)
{
	return pipe_of(s, w, pipe)->head[tid_of(w, lane)];
}

bool pipe_visible(struct sim *s, uint32_t block, int pipe, uint32_t writer, uint32_t tid, uint32_t seq)
{
	const struct pipe_block *pb = pipe_at(s, block, pipe, writer);
	/* a pipeline over warps orders its stages for its own warp only */
	return (!pb->decl->warp_group || writer / 32 == tid / 32) && pb->seen[tid] > seq;
}

bool pipe_released(struct sim *s, uint32_t block, int pipe, uint32_t writer, uint32_t seq)
{
	const struct pipe_block *pb = pipe_at(s, block, pipe, writer);
	if (!block_scope(pb) || !pb->ready || seq < pb->base)
		return true; /* a stage of a pipeline every thread has quit is free */
	uint32_t S = pb->decl->stages;
	return mbar_phase_done(&s->mbars[pb->consumed + seq % S], (seq - pb->base) / S);
}

void pipe_finish_stats(struct sim *s)
{
	for (uint32_t b = 0; b < s->nblocks; b++)
		for (uint32_t i = 0; s->blocks[b].pipes && i < (uint32_t)s->k->npipes * s->blocks[b].pipe_warps; i++) {
			struct pipe_block *pb = &s->blocks[b].pipes[i];
			for (uint32_t st = 0; pb->decl && st < pb->decl->stages; st++)
				if (pb->ring[st].seq != NEVER) {
					stats_batch(s, &pb->ring[st], pb->track, st);
					pb->ring[st].seq = NEVER;
				}
		}
}

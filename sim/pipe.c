/*
 * pipe: cuda::pipeline<thread_scope_block> over pipeline_shared_state<S>.
 *
 * Per stage two mbarriers, produced[s] and consumed[s]; per thread a head
 * and a tail (commits and releases so far: stage = count % S, lap =
 * count / S), as libcudacxx keeps them.
 *   producer_acquire: wait until consumed[head % S] completed lap head/S - 1
 *                     (first lap: at once) — the back-pressure of S stages;
 *   producer_commit:  arrive on produced[head % S] once the thread's copies
 *                     of the open batch have landed, then head++;
 *   consumer_wait:    wait until produced[tail % S] completed lap tail/S;
 *   consumer_release: arrive on consumed[tail % S], then tail++.
 * Unified pipelines expect |group| arrivals on both barriers.
 *
 * It also keeps, per consumed batch, the first copy issue, the last
 * landing and how long consumers were blocked on it: the latency-hiding
 * metrics of the report.
 */
#include <stdio.h>
#include <stdlib.h>

#include "simint.h"

int pipe_setup(struct sim *s, struct block *b)
{
	const struct kernel *k = s->k;
	b->pipes = calloc((size_t)k->npipes + 1, sizeof *b->pipes);
	if (!b->pipes)
		return -1;
	size_t n = (size_t)s->launch.block_size;
	for (int i = 0; i < k->npipes; i++) {
		struct pipe_block *pb = &b->pipes[i];
		const struct pipeline_decl *pd = &k->pipes[i];
		pb->decl = pd;
		pb->head = calloc(n, sizeof *pb->head);
		pb->tail = calloc(n, sizeof *pb->tail);
		pb->open_first = malloc(n * sizeof *pb->open_first);
		pb->open_land = calloc(n, sizeof *pb->open_land);
		pb->ring = malloc(pd->stages * sizeof *pb->ring);
		if (!pb->head || !pb->tail || !pb->open_first || !pb->open_land || !pb->ring)
			return -1;
		for (size_t t = 0; t < n; t++)
			pb->open_first[t] = NEVER;
		for (uint32_t st = 0; st < pd->stages; st++)
			pb->ring[st] = (struct batch_rec){.seq = NEVER};
		char what[96];
		for (uint32_t st = 0; st < pd->stages; st++) {
			snprintf(what, sizeof what, "%s.produced[%u]", pd->name, st);
			uint32_t id = mbar_new(s, b->id, what);
			if (st == 0)
				pb->produced = id;
		}
		for (uint32_t st = 0; st < pd->stages; st++) {
			snprintf(what, sizeof what, "%s.consumed[%u]", pd->name, st);
			uint32_t id = mbar_new(s, b->id, what);
			if (st == 0)
				pb->consumed = id;
		}
	}
	return 0;
}

void pipe_free(struct sim *s, struct block *b)
{
	for (int i = 0; b->pipes && i < s->k->npipes; i++) {
		struct pipe_block *pb = &b->pipes[i];
		free(pb->head);
		free(pb->tail);
		free(pb->open_first);
		free(pb->open_land);
		free(pb->ring);
	}
	free(b->pipes);
	b->pipes = NULL;
}

static struct pipe_block *pipe_of(struct sim *s, const struct warp *w, int pipe)
{
	return &s->blocks[w->block].pipes[pipe];
}

static uint32_t tid_of(const struct warp *w, int lane) { return w->in_block * 32 + (uint32_t)lane; }

static bool check_ready(struct sim *s, struct warp *w, const struct pipe_block *pb)
{
	if (!pb->ready)
		sim_fail(s, DIAG_INPUT, w, "program error: pipeline \"%s\" used before make_pipeline",
			 pb->decl->name);
	return pb->ready;
}

bool pipe_make(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct pipe_block *pb = pipe_of(s, w, in->obj);
	if (!pb->ready) {
		/* Thread 0 of the group initialises the barriers before the group syncs. */
		int64_t group = s->launch.block_size;
		for (uint32_t st = 0; st < pb->decl->stages; st++) {
			mbar_init(&s->mbars[pb->produced + st], group);
			mbar_init(&s->mbars[pb->consumed + st], group);
		}
		pb->ready = true;
	}
	return sync_threads(s, w, now, STALL_SYNCTHREADS);
}

bool pipe_acquire(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct pipe_block *pb = pipe_of(s, w, in->obj);
	if (!check_ready(s, w, pb))
		return true;
	uint32_t S = pb->decl->stages;
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		uint32_t h = pb->head[tid_of(w, __builtin_ctz(m))];
		uint32_t lap = h / S;
		uint32_t bar = pb->consumed + h % S;
		if (lap > 0 && !mbar_phase_done(&s->mbars[bar], lap - 1)) {
			sched_block(s, w, STALL_PRODUCER_ACQUIRE, WAIT_MBAR, now);
			mbar_wait_on(s, w, bar);
			return false;
		}
	}
	return true;
}

/* Arrivals of one warp-instruction, grouped by barrier and cycle (usually one group). */
struct arrivals {
	uint32_t bar[32];
	uint64_t at[32];
	uint32_t count[32];
	int n;
};

static void add_arrival(struct arrivals *a, uint32_t bar, uint64_t at)
{
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
		mbar_arrive_later(s, a->bar[i], a->at[i], a->count[i]);
}

static struct batch_rec *batch_for(struct sim *s, struct pipe_block *pb, uint64_t seq)
{
	struct batch_rec *r = &pb->ring[seq % pb->decl->stages];
	if (r->seq != seq) {
		if (r->seq != NEVER)
			stats_batch(s, r);
		*r = (struct batch_rec){.seq = seq, .first_issue = NEVER};
	}
	return r;
}

bool pipe_commit(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct pipe_block *pb = pipe_of(s, w, in->obj);
	if (!check_ready(s, w, pb))
		return true;
	uint32_t S = pb->decl->stages;
	struct arrivals a = {.n = 0};
	uint64_t soonest = now + (uint64_t)s->m->mbarrier_arrive_latency;
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		uint32_t t = tid_of(w, __builtin_ctz(m));
		uint32_t h = pb->head[t]++;
		/* cp.async.mbarrier.arrive: the arrival happens when the thread's copies have landed. */
		uint64_t at = pb->open_land[t] > soonest ? pb->open_land[t] : soonest;
		add_arrival(&a, pb->produced + h % S, at);
		struct batch_rec *r = batch_for(s, pb, h);
		if (pb->open_first[t] < r->first_issue)
			r->first_issue = pb->open_first[t];
		if (pb->open_land[t] > r->last_land)
			r->last_land = pb->open_land[t];
		pb->open_first[t] = NEVER;
		pb->open_land[t] = 0;
	}
	send_arrivals(s, &a);
	return true;
}

bool pipe_wait(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct pipe_block *pb = pipe_of(s, w, in->obj);
	if (!check_ready(s, w, pb))
		return true;
	uint32_t S = pb->decl->stages;
	uint32_t m = simt_mask(w);
	for (uint32_t mm = m; mm; mm &= mm - 1) {
		uint32_t t = pb->tail[tid_of(w, __builtin_ctz(mm))];
		uint32_t bar = pb->produced + t % S;
		if (!mbar_phase_done(&s->mbars[bar], t / S)) {
			sched_block(s, w, STALL_CONSUMER_WAIT, WAIT_MBAR, now);
			mbar_wait_on(s, w, bar);
			return false;
		}
	}
	if (simt_cur(w)->wait_start != NEVER && m) {
		uint32_t t = pb->tail[tid_of(w, __builtin_ctz(m))];
		struct batch_rec *r = batch_for(s, pb, t);
		uint64_t blocked = now - simt_cur(w)->wait_start;
		if (blocked > r->exposed)
			r->exposed = blocked;
	}
	return true;
}

bool pipe_release(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct pipe_block *pb = pipe_of(s, w, in->obj);
	if (!check_ready(s, w, pb))
		return true;
	uint32_t S = pb->decl->stages;
	struct arrivals a = {.n = 0};
	uint64_t at = now + (uint64_t)s->m->mbarrier_arrive_latency;
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		uint32_t t = pb->tail[tid_of(w, __builtin_ctz(m))]++;
		add_arrival(&a, pb->consumed + t % S, at);
	}
	send_arrivals(s, &a);
	return true;
}

void pipe_copy_issued(struct sim *s, struct warp *w, int pipe, int lane, uint64_t now, uint64_t land)
{
	if (pipe < 0)
		return;
	struct pipe_block *pb = pipe_of(s, w, pipe);
	uint32_t t = tid_of(w, lane);
	if (now < pb->open_first[t])
		pb->open_first[t] = now;
	if (land > pb->open_land[t])
		pb->open_land[t] = land;
}

void pipe_finish_stats(struct sim *s)
{
	for (uint32_t b = 0; b < s->nblocks; b++)
		for (int i = 0; s->blocks[b].pipes && i < s->k->npipes; i++) {
			struct pipe_block *pb = &s->blocks[b].pipes[i];
			for (uint32_t st = 0; st < pb->decl->stages; st++)
				if (pb->ring[st].seq != NEVER) {
					stats_batch(s, &pb->ring[st]);
					pb->ring[st].seq = NEVER;
				}
		}
}

/*
 * barrier: cuda::barrier<thread_scope_block> over an mbarrier (seed 004).
 *
 * init(&bar, n) sets the expected count; token = bar.arrive(update) never
 * blocks and its token is the phase it arrived in; bar.wait(token) blocks
 * until that phase has completed — at once if it already has.
 * arrive_and_wait is both; arrive_and_drop also removes the thread from
 * later phases.  The polls a spin-wait is written with (PTX
 * mbarrier.test_wait / try_wait, by token or by parity, as libcudacxx's
 * wait and wait_parity loop on them) return whether the phase completed.
 * Arrivals and waits on a barrier nobody initialised are program errors.
 */
#include <stdio.h>
#include <stdlib.h>

#include "simint.h"

int cbar_setup(struct sim *s, struct block *b)
{
	const struct kernel *k = s->k;
	b->bars = calloc((size_t)k->nbars + 1, sizeof *b->bars);
	if (!b->bars)
		return -1;
	uint32_t elems = 0, track = b->id * s->copy_tracks_per_block;
	for (int i = 0; i < k->npipes; i++)
		track += k->pipes[i].stages;
	for (int i = 0; i < k->nbars; i++) {
		b->bars[i] = s->nmbars;
		for (uint32_t e = 0; e < k->bars[i].count; e++) {
			char what[96];
			if (k->bars[i].count == 1)
				snprintf(what, sizeof what, "%s", k->bars[i].name);
			else
				snprintf(what, sizeof what, "%s[%u]", k->bars[i].name, e);
			uint32_t id = mbar_new(s, b->id, what);
			s->mbars[id].track = track + elems + e;
			if (s->trace)
				snprintf(s->trace->copies[track + elems + e].name, sizeof s->trace->copies[0].name,
					 "block %u %s", b->id, what);
		}
		elems += k->bars[i].count;
	}
	b->nbar_elems = elems;
	b->bar_seen = calloc((size_t)elems * (size_t)s->launch.block_size + 1, sizeof *b->bar_seen);
	b->bar_dropped = calloc((size_t)elems * (size_t)s->launch.block_size + 1, 1);
	return b->bar_seen && b->bar_dropped ? 0 : -1;
}

void cbar_free(struct block *b)
{
	free(b->bars);
	free(b->bar_seen);
	free(b->bar_dropped);
	b->bars = NULL;
	b->bar_seen = NULL;
	b->bar_dropped = NULL;
}

int64_t cbar_resolve(struct sim *s, struct warp *w, const struct insn *in, uint32_t *elem)
{
	const struct barrier_decl *bd = &s->k->bars[in->bar];
	uint32_t mask = simt_mask(w);
	int64_t idx = in->bar_index.value;
	/* an index every lane computes alike (a stage) needs neither the lanes' values nor their compare */
	if (!in->bar_index.is_const && !simt_eval_shared(s, w, &in->bar_index, __builtin_ctz(mask), &idx)) {
		/* Every lane's index, evaluated for the warp at once; the checks run lane by lane as before. */
		int64_t v[32];
		enum expr_fault f = EXPR_OK;
		int bad = simt_eval_each(s, w, &in->bar_index, mask, v, &f);
		int first = __builtin_ctz(mask);
		idx = v[first];
		for (uint32_t m = mask; m; m &= m - 1) {
			int lane = __builtin_ctz(m);
			if (lane == bad)
				simt_fault(s, w, lane, f);
			if (lane != first && v[lane] != idx) {
				sim_fail(s, DIAG_INPUT, w, "threads of one warp name different elements of %s in one call",
					 bd->name);
				return -1;
			}
		}
	}
	if (idx < 0 || idx >= bd->count) {
		sim_fail(s, DIAG_INPUT, w, "program error: %s[%lld] is outside its %u barriers", bd->name,
			 (long long)idx, bd->count);
		return -1;
	}
	struct block *b = &s->blocks[w->block];
	*elem = b->bars[in->bar] - b->bars[0] + (uint32_t)idx;
	return (int64_t)(b->bars[in->bar] + (uint32_t)idx);
}

static bool check_init(struct sim *s, struct warp *w, struct mbar *b, const char *call)
{
	if (!b->initialized)
		sim_fail(s, DIAG_INPUT, w, "program error: %s on %s, which no thread has initialised (init(&bar, n))",
			 call, b->what);
	if (!b->initialized || !s->checks || b->init_race_said)
		return b->initialized;
	/*
	 * The init is a plain store to the barrier's shared memory: another thread may use the
	 * barrier only once something orders it after that store (the CUDA guide's
	 * init, then __syncthreads()).  Unordered, it may see the barrier uninitialised; smsim's
	 * run only caught that when the use came first in time.
	 */
	const struct block *blk = &s->blocks[w->block];
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		uint32_t tid = w->in_block * 32 + (uint32_t)__builtin_ctz(m);
		if (flow_plain_ordered(blk, b->init_thread, b->init_gen, b->init_at, tid))
			continue;
		b->init_race_said = true;
		flow_report(s, w, __builtin_ctz(m),
			    "%s on %s, which thread %u initialised at cycle %llu with no __syncthreads() or barrier "
			    "wait between: the init may not be visible to this thread yet",
			    call, b->what, b->init_thread, (unsigned long long)b->init_at);
		break;
	}
	return true;
}

/*
 * A thread that left the barrier with arrive_and_drop arrives on it again:
 * a program error (libcudacxx cuda/std/__barrier/barrier.h: arrive_and_drop
 * takes the thread out of every later phase's expected count).  `drop`:
 * the lanes leave now.
 */
static bool check_dropped(struct sim *s, struct warp *w, const struct mbar *b, uint32_t elem, const char *call,
			  bool drop)
{
	uint8_t *dropped = &s->blocks[w->block].bar_dropped[(size_t)elem * (size_t)s->launch.block_size];
	if (!drop && simt_mask(w) == 0xffffffffu) {
		/* a full warp's arrival (the usual one): none dropped out, one OR over its threads' flags */
		uint8_t any = 0;
		for (int l = 0; l < 32; l++)
			any |= dropped[w->in_block * 32 + (uint32_t)l];
		if (!any)
			return true;
	}
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		uint32_t t = w->in_block * 32 + (uint32_t)__builtin_ctz(m);
		if (dropped[t]) {
			sim_fail(s, DIAG_INPUT, w,
				 "program error: thread %u calls %s on %s after its arrive_and_drop: it is no longer a "
				 "participant of the barrier",
				 t, call, b->what);
			return false;
		}
		if (drop)
			dropped[t] = 1;
	}
	return true;
}

/*
 * A wait by token: the token must be of the current phase or the one just
 * completed (PTX mbarrier.test_wait/try_wait: "the phase indicated by the
 * state operand" must be the current or the immediately preceding phase).
 */
static bool check_token(struct sim *s, struct warp *w, int lane, const struct mbar *b, int64_t token,
			const char *call)
{
	uint32_t t = w->in_block * 32 + (uint32_t)lane;
	if (token < 0 || token > (int64_t)mbar_landing_phase(b, (uint32_t)(w - s->warps))) { /* a token is at most the phase the warp's arrivals land in */
		sim_fail(s, DIAG_INPUT, w, "program error: thread %u: %s on %s with token %lld, which no arrive returned", t,
			 call, b->what, (long long)token);
		return false;
	}
	if (token + 1 < (int64_t)b->phase) {
		sim_fail(s, DIAG_INPUT, w,
			 "program error: thread %u: %s on %s with a token of phase %lld while the barrier is in phase %u: "
			 "a token must be of the current or the immediately preceding phase (PTX "
			 "mbarrier.test_wait/try_wait)",
			 t, call, b->what, (long long)token, b->phase);
		return false;
	}
	return true;
}

/* The lanes waited for phase `phase`, completed: what its arrivals ordered is visible to them. */
static void saw_phase(struct sim *s, struct warp *w, uint32_t bar, uint32_t elem, uint32_t phase, uint32_t lanes)
{
	struct mbar *b = &s->mbars[bar];
	struct block *blk = &s->blocks[w->block];
	if (simt_lanes_solid(lanes)) {
		/* a full warp's wait (the GEMM's): its threads' records lie together, a straight loop without the mask walk */
		uint32_t *seen = &blk->bar_seen[(size_t)elem * (size_t)s->launch.block_size + w->in_block * 32];
		uint64_t *sync = &blk->bar_sync[w->in_block * 32], at = b->completed_at;
		for (int l = __builtin_ctz(lanes), hi = 31 - __builtin_clz(lanes); l <= hi; l++) {
			seen[l] = phase + 1 > seen[l] ? phase + 1 : seen[l];
			sync[l] = at > sync[l] ? at : sync[l];
		}
		return;
	}
	for (uint32_t m = lanes; m; m &= m - 1) {
		uint32_t t = w->in_block * 32 + (uint32_t)__builtin_ctz(m);
		uint32_t *seen = &blk->bar_seen[(size_t)elem * (size_t)s->launch.block_size + t];
		if (phase + 1 > *seen)
			*seen = phase + 1;
		if (b->completed_at > blk->bar_sync[t])
			blk->bar_sync[t] = b->completed_at;
	}
}

/* Whether the lanes of mask hold one value in v. */
static bool lanes_agree(const int64_t v[32], uint32_t mask)
{
	int64_t x = v[__builtin_ctz(mask)];
	if (mask == FULL_WARP) {
		uint64_t odd = 0;
		for (int l = 0; l < 32; l++)
			odd |= (uint64_t)(v[l] ^ x);
		return !odd;
	}
	for (uint32_t m = mask & (mask - 1); m; m &= m - 1)
		if (v[__builtin_ctz(m)] != x)
			return false;
	return true;
}

/* Blocks the group until phase `token` of the barrier has completed; true when it has. */
static bool wait_phase(struct sim *s, struct warp *w, uint32_t bar, uint32_t elem, uint32_t token, uint64_t now)
{
	struct mbar *b = &s->mbars[bar];
	if (!mbar_await(s, w, b->phase > token, bar, STALL_BARRIER, now)) /* libcu++'s wait: a try_wait loop */
		return false;
	struct simt_entry *e = simt_cur(w);
	if (e->wait_start != NEVER && b->filled.seq == token && now - e->wait_start > b->filled.exposed)
		b->filled.exposed = now - e->wait_start;
	saw_phase(s, w, bar, elem, token, simt_mask(w)); /* the lanes have seen phase token: bar_seen at least token + 1 */
	return true;
}

bool cbar_exec(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	uint32_t elem;
	int64_t id = cbar_resolve(s, w, in, &elem);
	if (id < 0)
		return true;
	uint32_t bar = (uint32_t)id;
	struct mbar *b = &s->mbars[bar];
	uint32_t mask = simt_mask(w);
	uint32_t count = (uint32_t)__builtin_popcount(mask);
	uint64_t at = now + (uint64_t)s->m->mbarrier_count_latency;
	struct simt_entry *e = simt_cur(w);
	switch (in->op) {
	case OP_BARRIER_INIT: {
		int64_t n = simt_eval(s, w, __builtin_ctz(mask), &in->e[0]);
		/* PTX mbarrier.init: a count in 1 .. 2^20 - 1; arrive(update) lets it exceed the threads */
		if (n < 1 || n > (1 << 20) - 1) {
			sim_fail(s, DIAG_INPUT, w, "program error: init(&%s, %lld): expected count 1..%d (PTX mbarrier.init)",
				 b->what, (long long)n, (1 << 20) - 1);
			return true;
		}
		/*
		 * PTX ISA, mbarrier.init: an init on a location that holds a valid
		 * mbarrier object is undefined (mbarrier.inval first, which these
		 * kernels do not have): a second init, or the lanes of a warp all
		 * initialising it, would reset the phase under arrivals already made.
		 */
		if (b->initialized || count > 1) {
			if (count > 1)
				sim_fail(s, DIAG_INPUT, w,
					 "program error: init(&%s, %lld) by %u threads at once: all but the first initialise an "
					 "mbarrier that is already valid, which PTX leaves undefined (init from one thread, then "
					 "__syncthreads())",
					 b->what, (long long)n, count);
			else
				sim_fail(s, DIAG_INPUT, w,
					 "program error: init(&%s, %lld) again: the barrier is already initialised, and PTX "
					 "leaves mbarrier.init on a valid mbarrier undefined (its pending arrivals would be lost)",
					 b->what, (long long)n);
			return true;
		}
		mbar_init(b, n);
		b->init_thread = w->in_block * 32 + (uint32_t)__builtin_ctz(mask);
		b->init_gen = s->blocks[w->block].sync_gen;
		b->init_at = now;
		b->init_race_said = false;
		return true;
	}
	case OP_BARRIER_ARRIVE: {
		if (!check_init(s, w, b, "arrive"))
			return true;
		if (!check_dropped(s, w, b, elem, "arrive", false))
			return true;
		/* arrive(update): every thread of the group arrives `update` times at once (one count for the group) */
		int64_t update = simt_eval(s, w, __builtin_ctz(mask), &in->e[0]);
		for (uint32_t m = mask & (mask - 1); !in->e[0].is_const && m; m &= m - 1)
			if (simt_eval(s, w, __builtin_ctz(m), &in->e[0]) != update) {
				sim_fail(s, DIAG_INPUT, w, "program error: threads arriving together on %s ask for different counts",
					 b->what);
				return true;
			}
		if (update < 1 || update > b->expected) {
			sim_fail(s, DIAG_INPUT, w, "program error: arrive(%lld) on %s, which expects %lld per phase",
				 (long long)update, b->what, (long long)b->expected);
			return true;
		}
		if ((uint64_t)update * count >= 1ull << 31) {
			sim_fail(s, DIAG_INPUT, w, "program error: arrive(%lld) by %u threads on %s: too many arrivals",
				 (long long)update, count, b->what);
			return true;
		}
		if (in->e[1].len > 0 || in->e[1].is_const) { /* arrive.expect_tx: each arriving thread announces its bytes first */
			int64_t tx = 0;
			for (uint32_t m = mask; m; m &= m - 1)
				tx += simt_eval(s, w, __builtin_ctz(m), &in->e[1]);
			if (tx < 0) {
				sim_fail(s, DIAG_INPUT, w, "program error: arrive.expect_tx of %lld bytes on %s", (long long)tx, b->what);
				return true;
			}
			mbar_expect_tx(s, bar, tx, now);
		}
		simt_materialize(w, in->slot < 63 ? 1ull << in->slot : 0);
		simt_disagree(s, w, in->slot);
		/* every lane's token is the phase the warp's arrivals land in, which nothing here moves */
		int64_t landing = mbar_landing_phase(b, (uint32_t)(w - s->warps)), *token = simt_reg(w, in->slot, 0);
		if (mask == 0xffffffffu) {
			for (int l = 0; l < 32; l++)
				token[l] = landing;
		} else {
			for (uint32_t m = mask; m; m &= m - 1)
				token[__builtin_ctz(m)] = landing;
		}
		flow_release(s, w, now);
		mbar_arrive_checked(s, w, bar, at, count * (uint32_t)update, false);
		return true;
	}
	case OP_BARRIER_WAIT: {
		if (!check_init(s, w, b, "wait"))
			return true;
		if (in->e[0].shape == EXPR_SHAPE_SLOT) {
			/*
			 * The token variable as it is (a read: no fault): each lane's value once, the latest and
			 * check_token's tests of them all in one walk, instead of up to three simt_eval and a
			 * landing phase a lane (a fifth of split_arrive_wait); a lane that fails goes through the
			 * walks below, which word it.
			 */
			int64_t landing = mbar_landing_phase(b, (uint32_t)(w - s->warps)), phase = b->phase;
			unsigned slot = in->e[0].shape_slot;
			const int64_t *row = simt_reg(w, slot, 0);
			int64_t latest = lane_reg(w, slot, __builtin_ctz(mask)), least = latest;
			if (!(slot < 63 && (w->stale >> slot & 1))) { /* a stale slot's lanes all read its uval */
				for (uint32_t m = mask; m; m &= m - 1) {
					int64_t t = row[__builtin_ctz(m)];
					latest = t > latest ? t : latest;
					least = t < least ? t : least;
				}
			}
			/* check_token's bounds hold for every lane where they hold for the least and the latest */
			if (least >= 0 && latest <= landing && least + 1 >= phase)
				return wait_phase(s, w, bar, elem, (uint32_t)latest, now);
		}
		int64_t token = simt_eval(s, w, __builtin_ctz(mask), &in->e[0]);
		for (uint32_t m = mask & (mask - 1); m; m &= m - 1)
			if (simt_eval(s, w, __builtin_ctz(m), &in->e[0]) > token)
				token = simt_eval(s, w, __builtin_ctz(m), &in->e[0]);
		for (uint32_t m = mask; m; m &= m - 1)
			if (!check_token(s, w, __builtin_ctz(m), b, simt_eval(s, w, __builtin_ctz(m), &in->e[0]), "wait"))
				return true;
		return wait_phase(s, w, bar, elem, (uint32_t)token, now);
	}
	case OP_BARRIER_ARRIVE_AND_WAIT:
		if (!check_init(s, w, b, "arrive_and_wait"))
			return true;
		if (e->wait_start == NEVER && e->op_step < 1000000) {
			if (!check_dropped(s, w, b, elem, "arrive_and_wait", false))
				return true;
			e->token = mbar_landing_phase(b, (uint32_t)(w - s->warps));
			flow_release(s, w, now);
		mbar_arrive_checked(s, w, bar, at, count, false);
			e->op_step = 1000000; /* arrived; retries only wait */
		}
		return wait_phase(s, w, bar, elem, e->token, now);
	case OP_BARRIER_ARRIVE_AND_DROP:
		if (!check_init(s, w, b, "arrive_and_drop") || !check_dropped(s, w, b, elem, "arrive_and_drop", true))
			return true;
		flow_release(s, w, now);
		mbar_arrive_checked(s, w, bar, at, count, true);
		return true;
	case OP_BARRIER_EXPECT_TX: {
		/* cuda::device::barrier_expect_tx: each calling thread adds its bytes to the phase's tx-count */
		if (!check_init(s, w, b, "barrier_expect_tx"))
			return true;
		int64_t v[32], bytes = 0;
		simt_eval_lanes(s, w, &in->e[0], mask, v);
		for (uint32_t m = mask; m; m &= m - 1) {
			int64_t n = v[__builtin_ctz(m)];
			if (n < 0 || n >= (1ll << 20)) {
				sim_fail(s, DIAG_INPUT, w,
					 "program error: thread %u: barrier_expect_tx(%s, %lld): PTX mbarrier.expect_tx takes "
					 "0 .. 2^20 - 1 bytes",
					 w->in_block * 32 + (uint32_t)__builtin_ctz(m), b->what, (long long)n);
				return true;
			}
			bytes += n;
		}
		mbar_expect_tx(s, bar, bytes, now);
		return true;
	}
	case OP_PIPELINE_ARRIVE_ON: {
		/*
		 * cp.async.mbarrier.arrive (libcudacxx memcpy_completion.h, the
		 * async_group case of __defer): the pending count grows by one per
		 * thread now and shrinks when all the thread's earlier cp.async
		 * copies have landed; the thread still arrives itself.
		 */
		if (!check_init(s, w, b, "pipeline_arrive_on"))
			return true;
		uint64_t land[32];
		uint32_t left = mask;
		for (uint32_t m = mask; m; m &= m - 1) {
			uint64_t l = cpa_last_land(s, w, __builtin_ctz(m));
			land[__builtin_ctz(m)] = l > now ? l : now;
		}
		while (left) {
			uint64_t at = land[__builtin_ctz(left)];
			uint32_t n = 0;
			for (uint32_t m = left; m; m &= m - 1)
				if (land[__builtin_ctz(m)] == at) {
					n++;
					left &= ~(m & -m);
				}
			mbar_track_copies(s, bar, n, at);
			mbar_note_copy(s, bar, now, at);
		}
		flow_arrive_on(s, w, now);
		if (s->checks) {
			uint32_t phase[32];
			for (int l = 0; l < 32; l++)
				phase[l] = b->phase;
			flow_cp_arrive(s, w, mask, FLOW_BAR, (int)elem, phase);
		}
		return true;
	}
	default: return true;
	}
}

/* Whether a wait that passes on barrier b (by parity, or on token v) waits for its latest completed phase. */
static bool awaits_latest(const struct mbar *b, bool parity, int64_t v)
{
	return parity ? ((b->phase - 1) & 1) == (uint32_t)(v & 1) : (int64_t)b->phase - 1 == v;
}

/*
 * barrier_test_wait / barrier_try_wait (PTX mbarrier.test_wait / try_wait,
 * by token or .parity): var = 1 in each lane whose phase has completed —
 * by token, the phase that arrive returned; by parity p, the last phase of
 * parity p, i.e. the current phase has the other parity (mbar_parity_done)
 * — and what that phase ordered becomes visible to it; 0 elsewhere.
 * test_wait never blocks.  try_wait, finding the phase of a whole group
 * incomplete, suspends it (its warp's other groups issue) until the phase
 * completes or its time limit passes (mbarrier_try_wait_limit: the H100
 * ignores the suspend-time hint, traces/h100/forward_progress.csv), and then
 * says which.  A group whose lanes wait for different phases and get
 * different answers is answered at once, lane by lane.  In a diverged
 * warp (simt_polls_apart) a try_wait loop runs as ptxas compiles it, as
 * libcu++'s wait does (mbar_await): one TRYWAIT, then an out-of-line retry
 * loop (YIELD, TRYWAIT; traces/h100/tma_user.sass trywait_probe
 * 0x05a0-0x06d0).  The first try reads the phase trywait_look cycles after
 * its issue (traces/h100/trywait_read.csv) and answers after its own
 * latency, passing or not (a phase completed before it: 47 cycles diverged
 * as converged, traces/h100/tma_user_probe.csv), and its failure keeps the
 * warp's other lanes at their join; each retry is a poll that reads the phase
 * diverged_poll_look cycles in and answers diverged_poll_cycles after it
 * began, and a failed poll's YIELD lets the other lanes go.  Failed polls
 * of one barrier in a row, nothing but a spin loop between them, count
 * towards a spin (sim_check_spin).
 */
bool cbar_poll(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct simt_entry *e = simt_cur(w);
	bool ending = e->op_step == 2; /* a diverged poll's time is up: it answers as the phase was at its look */
	uint32_t elem;
	int64_t id = cbar_resolve(s, w, in, &elem);
	if (id < 0)
		return true;
	uint32_t bar = (uint32_t)id;
	struct mbar *b = &s->mbars[bar];
	bool try_wait = in->op == OP_BARRIER_TRY_WAIT;
	if (!check_init(s, w, b, try_wait ? "try_wait" : "test_wait"))
		return true;
	bool trying = e->op_step == 3; /* a diverged path's first try answers: as the phase was at its read */
	bool apart = try_wait && e->op_step == 0 && simt_polls_apart(s, w, e);
	if (apart) {
		/*
		 * A retry begins a poll; a first try reads the phase trywait_look cycles after its issue
		 * (an arrive counted by then is seen: traces/h100/trywait_read.csv) and answers after
		 * its latency.
		 */
		bool retry = e->poll == (int32_t)bar;
		e->op_step = retry ? 2 : 3;
		e->poll_look = now + (uint64_t)(retry ? s->m->diverged_poll_look : s->m->trywait_look);
		sched_block(s, w, STALL_BARRIER, WAIT_SLEEP, now);
		sched_timer(s, w, now + (retry ? (uint64_t)s->m->diverged_poll_cycles : (uint64_t)s->cls_lat[IC_SYNCS]));
		return false;
	}
	/* a poll or try answering does not see the barrier's latest phase if that completed after its look */
	bool latest_unseen = (ending || trying) && b->completed_at > e->poll_look;
	uint32_t mask = simt_mask(w), done = 0;
	int64_t v[32], ok[32];
	simt_eval_lanes(s, w, &in->e[0], mask, v);
	int first = __builtin_ctz(mask);
	bool one = !(in->parity && s->checks) && lanes_agree(v, mask);
	if (one) {
		/*
		 * One token or parity in every lane (the usual wait): one answer for them all, as each
		 * lane would find it, and the lanes' records in one walk.
		 */
		if (!in->parity && !check_token(s, w, first, b, v[first], try_wait ? "try_wait" : "test_wait"))
			return true;
		bool pass = in->parity ? mbar_parity_done(b, (uint32_t)(v[first] & 1)) : b->phase > (uint32_t)v[first];
		if (pass && latest_unseen && awaits_latest(b, in->parity, v[first]))
			pass = false;
		if (pass) {
			uint32_t phase = in->parity ? b->phase - 1 : (uint32_t)v[first];
			done = mask;
			if (!in->parity)
				saw_phase(s, w, bar, elem, phase, mask);
			if (e->wait_start != NEVER && b->filled.seq == phase && now - e->wait_start > b->filled.exposed)
				b->filled.exposed = now - e->wait_start;
		}
		for (int l = first, hi = 31 - __builtin_clz(mask); l <= hi; l++)
			ok[l] = pass; /* the lanes outside mask between are not read */
	}
	for (uint32_t m = one ? 0 : mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		if (!in->parity && !check_token(s, w, lane, b, v[lane], try_wait ? "try_wait" : "test_wait"))
			return true;
		ok[lane] = in->parity ? mbar_parity_done(b, (uint32_t)(v[lane] & 1)) : b->phase > (uint32_t)v[lane];
		if (ok[lane] && latest_unseen && awaits_latest(b, in->parity, v[lane]))
			ok[lane] = 0;
		if (ok[lane] && in->parity && s->checks) {
			/*
			 * The phase a parity wait means is the first of that parity it has not waited
			 * for; when a later phase of the same parity has completed too, the wait is two
			 * phases behind and cannot tell them apart (PTX: the parity names only the
			 * current or the immediately preceding phase).
			 */
			const struct block *blk = &s->blocks[w->block];
			int64_t seen = blk->bar_seen[(size_t)elem * (size_t)s->launch.block_size + w->in_block * 32 + (uint32_t)lane];
			int64_t p = v[lane] & 1, meant = seen + ((seen & 1) != p), last = (int64_t)b->phase - 1;
			if ((last & 1) != p)
				last--;
			if (last > meant)
				flow_report(s, w, lane,
					    "waits on %s by parity %lld two phases behind: phases %lld and %lld of that parity have "
					    "completed (cycle %llu)",
					    b->what, (long long)p, (long long)meant, (long long)last, (unsigned long long)now);
		}
		if (ok[lane]) {
			uint32_t phase = in->parity ? b->phase - 1 : (uint32_t)v[lane];
			done |= 1u << lane;
			if (!in->parity)
				saw_phase(s, w, bar, elem, phase, 1u << lane);
			/* how long a wait that blocked on the phase of a copy's batch exposed its latency */
			if (e->wait_start != NEVER && b->filled.seq == phase && now - e->wait_start > b->filled.exposed)
				b->filled.exposed = now - e->wait_start;
		}
	}
	/* a parity wait sees one phase in every lane it passes, each lane's own record: one walk for them all */
	if (in->parity && done)
		saw_phase(s, w, bar, elem, b->phase - 1, done);
	if (try_wait && !done && e->op_step == 0 && !apart) {
		e->op_step = 1; /* suspended: woken with the phase still incomplete means the time limit passed */
		sched_block(s, w, STALL_BARRIER, WAIT_MBAR, now);
		simt_detach(s, w, now);
		mbar_wait_on(s, w, bar);
		sched_timer(s, w, now + (uint64_t)s->m->mbarrier_try_wait_limit);
		return false;
	}
	simt_assign_values(s, w, in->slot, mask, ok);
	if (done) {
		e->poll = -1;
	} else {
		simt_failed_poll(e, (int32_t)bar);
		if (!trying) /* the spin loop's YIELD: the others go on past the join (not at a diverged first try) */
			simt_detach(s, w, now);
	}
	if (!done) {
		simt_yield(s, w); /* the warp's other paths first: one of them may be what it waits for */
		if (e->polls >= SPIN_POLLS)
			sim_check_spin(s, now);
	}
	return true;
}

bool cbar_visible(struct sim *s, uint32_t block, uint32_t elem, uint32_t tid, uint32_t phase)
{
	const struct block *b = &s->blocks[block];
	return b->bar_seen[(size_t)elem * (size_t)s->launch.block_size + tid] > phase;
}

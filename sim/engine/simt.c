/*
 * simt: a warp's threads, their registers, and how they diverge and
 * reconverge.
 *
 * post_dominator: the entries form the classic SIMT stack.  A divergent
 * branch turns the top entry into the reconvergence entry (pc = the
 * branch's reconv, all its threads) and pushes one entry per side; an entry
 * that reaches its reconv pc is popped, so the sides rejoin where the
 * structured if/loop ends.
 *
 * independent (Volta+ independent thread scheduling): a divergent branch
 * splits the group into two groups that stay apart after the if; only a
 * __syncwarp, a block barrier or the end re-converges them.  The warp's
 * issue slots rotate among its runnable groups.
 */
#include <stdio.h>

#include "simint.h"

void simt_fault(struct sim *s, struct warp *w, int lane, enum expr_fault f)
{
	sim_fail(s, DIAG_INPUT, w, "%s (thread %u)", expr_fault_name(f), w->in_block * 32 + (unsigned)lane);
}

/* A register of one lane (a stale slot's value is its uval). */
static inline int64_t lane_reg(const struct warp *w, uint64_t slot, int lane)
{
	return slot < 63 && (w->stale >> slot & 1) ? w->uval[slot] : *simt_reg(w, (unsigned)slot, lane);
}

/*
 * One lane's value of e.  A simple shape (a loop bound, an increment: most
 * warp-uniform expressions) applies its operator here; anything else runs
 * through expr_eval_code on the slots it reads, gathered into s->lane_regs.
 */
static int64_t eval_lane(struct sim *s, struct warp *w, int lane, const struct expr *e, enum expr_fault *f)
{
	int64_t v = 0;
	switch (e->shape) {
	case EXPR_SHAPE_SLOT: return lane_reg(w, e->shape_slot, lane);
	case EXPR_SHAPE_SLOT_CONST:
		*f = expr_apply((enum opc)e->shape_op, lane_reg(w, e->shape_slot, lane), e->value, &v);
		return *f ? 0 : v;
	case EXPR_SHAPE_SLOT_SLOT:
		*f = expr_apply((enum opc)e->shape_op, lane_reg(w, e->shape_slot, lane),
				lane_reg(w, (uint64_t)e->value, lane), &v);
		return *f ? 0 : v;
	default: break;
	}
	int64_t *r = s->lane_regs;
	for (uint64_t b = e->slots & ~(1ull << 63); b; b &= b - 1) {
		unsigned slot = (unsigned)__builtin_ctzll(b);
		r[slot] = w->stale >> slot & 1 ? w->uval[slot] : *simt_reg(w, slot, lane);
	}
	if (e->slots >> 63) /* bit 63 stands for every slot from 63 on */
		for (unsigned slot = 63; slot < (unsigned)s->k->nslots; slot++)
			r[slot] = *simt_reg(w, slot, lane);
	return expr_eval_code(&s->k->pool, e, r, f);
}

int64_t simt_eval(struct sim *s, struct warp *w, int lane, const struct expr *e)
{
	if (e->is_const)
		return e->value;
	enum expr_fault f = EXPR_OK;
	int64_t v = eval_lane(s, w, lane, e, &f);
	if (f)
		simt_fault(s, w, lane, f);
	return v;
}

int simt_eval_each(struct sim *s, struct warp *w, const struct expr *e, uint32_t mask, int64_t out[32],
		   enum expr_fault *fault)
{
	if (!(mask & (mask - 1))) {
		/* One lane (a group that divergence split off): the warp-wide pass would pay its setup for it alone. */
		int lane = __builtin_ctz(mask);
		enum expr_fault f = EXPR_OK;
		out[lane] = eval_lane(s, w, lane, e, &f);
		if (!f)
			return -1;
		*fault = f;
		return lane;
	}
	simt_materialize(w, e->slots & ~(1ull << 63));
	if (e->shape == EXPR_SHAPE_SLOT_CONST || e->shape == EXPR_SHAPE_SLOT_SLOT) {
		/* j < group, j + 1: the operator over the two rows of registers, no program to run */
		const int64_t *b = e->shape == EXPR_SHAPE_SLOT_SLOT ? simt_reg(w, (unsigned)e->value, 0) : NULL;
		return expr_apply_lanes((enum opc)e->shape_op, simt_reg(w, e->shape_slot, 0), b, e->value, mask, out,
					fault);
	}
	/* the slots whose live lanes agree (bit 63, every slot from 63 on, is never set: expr_eval_lanes ignores it) */
	uint64_t uniform = ~w->divergent & ~s->token_slots;
	int first = expr_eval_lanes(&s->k->pool, e, w->regs, 1, 32, uniform, mask, out, fault);
	if (first != EXPR_LANES_BY_THREAD)
		return first;
	first = -1;
	for (uint32_t m = mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		enum expr_fault f = EXPR_OK;
		out[lane] = eval_lane(s, w, lane, e, &f);
		if (f && first < 0) {
			first = lane;
			*fault = f;
		}
	}
	return first;
}

void simt_eval_lanes(struct sim *s, struct warp *w, const struct expr *e, uint32_t mask, int64_t out[32])
{
	if (!mask)
		return;
	if (simt_uniform(w, e)) {
		int64_t v = simt_eval(s, w, __builtin_ctz(mask), e);
		for (uint32_t m = mask; m; m &= m - 1)
			out[__builtin_ctz(m)] = v;
		return;
	}
	enum expr_fault f = EXPR_OK;
	int lane = simt_eval_each(s, w, e, mask, out, &f);
	if (lane >= 0)
		simt_fault(s, w, lane, f);
}

bool simt_eval_some(struct sim *s, struct warp *w, const struct expr *e, uint32_t mask, int64_t *uni, int64_t out[32])
{
	/* A group that divergence split down to one lane has one value whatever it reads. */
	if (mask && (!(mask & (mask - 1)) || simt_uniform(w, e))) {
		*uni = simt_eval(s, w, __builtin_ctz(mask), e);
		return true;
	}
	simt_eval_lanes(s, w, e, mask, out);
	return false;
}

void simt_assign(struct sim *s, struct warp *w, uint16_t slot, const struct expr *e, uint32_t mask)
{
	if (simt_uniform(w, e)) {
		/* One value for every lane: no per-lane evaluation, nothing to compare. */
		int64_t u = simt_eval(s, w, __builtin_ctz(mask), e);
		if (slot < 63 && mask == w->live) {
			/* Every live lane gets it: keep the one value, write the lanes only if one is read. */
			w->uval[slot] = u;
			w->stale |= 1ull << slot;
			w->divergent &= ~(1ull << slot);
			return;
		}
		simt_materialize(w, slot < 63 ? 1ull << slot : 0);
		int64_t *r = simt_reg(w, slot, 0);
		if (mask == 0xffffffffu) {
			for (int lane = 0; lane < 32; lane++)
				r[lane] = u;
		} else {
			for (uint32_t m = mask; m; m &= m - 1)
				r[__builtin_ctz(m)] = u;
		}
		if (slot < 63) {
			if (mask == w->live)
				w->divergent &= ~(1ull << slot);
			else
				w->divergent |= 1ull << slot;
		}
		return;
	}
	int64_t v[32];
	simt_eval_lanes(s, w, e, mask, v);
	simt_materialize(w, slot < 63 ? 1ull << slot : 0); /* the lanes outside mask keep their value */
	bool same = true;
	int64_t first = v[__builtin_ctz(mask)];
	for (uint32_t m = mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		*simt_reg(w, slot, lane) = v[lane];
		same = same && v[lane] == first;
	}
	if (slot >= 63)
		return;
	/* Uniform again only when every live lane got the same value. */
	if (same && mask == w->live)
		w->divergent &= ~(1ull << slot);
	else
		w->divergent |= 1ull << slot;
}

static bool independent(const struct sim *s) { return s->m->reconverge == RECONVERGE_INDEPENDENT; }

static struct simt_entry new_entry(int32_t pc, int32_t reconv, uint32_t mask)
{
	return (struct simt_entry){.pc = pc,
				   .reconv = reconv,
				   .mask = mask,
				   .wait_start = NEVER,
				   .next_waiter = NONE,
				   .blocked_obj = -1};
}

/* post_dominator: pops entries that reached their reconvergence point or have no threads left. */
static void settle(const struct sim *s, struct warp *w)
{
	if (independent(s)) {
		while (w->depth > 0 && w->stack[w->depth - 1].mask == 0)
			simt_mark(w, --w->depth);
		return;
	}
	while (w->depth > 0) {
		struct simt_entry *top = &w->stack[w->depth - 1];
		if (top->mask != 0 && top->pc != top->reconv)
			break;
		simt_mark(w, --w->depth);
	}
	w->cur = w->depth - 1;
}

bool simt_runnable(const struct sim *s, const struct warp *w)
{
	if (!independent(s))
		return w->depth > 0 && !w->stack[w->depth - 1].blocked;
	return w->runnable != 0;
}

/* independent: the next runnable group after the current one. */
bool simt_pick_group(struct warp *w)
{
	if (!w->runnable)
		return false;
	/*
	 * Round robin from the group after the last one, so no group starves: cur + 1 .. depth - 1, then 0 .. cur.
	 * From is (cur + 1) % depth, without a divide per issue in the usual cases (the next entry, or the wrap).
	 */
	int next = w->cur + 1;
	int from = next < w->depth ? next : next == w->depth ? 0 : next % w->depth;
	uint64_t after = w->runnable & (~0ull << from);
	w->cur = __builtin_ctzll(after ? after : w->runnable);
	return true;
}

void simt_advance(struct sim *s, struct warp *w)
{
	struct simt_entry *e = simt_cur(w);
	e->pc++;
	e->op_step = 0;
	e->li = 0;
	e->wait_start = NEVER;
	settle(s, w);
}

void simt_jump(struct sim *s, struct warp *w, int32_t target)
{
	struct simt_entry *e = simt_cur(w);
	/* Only a loop's back-edge jumps backwards: a compare per iteration catches a loop without end. */
	if (target <= e->pc && ++w->loop_iterations > s->limits.max_loop_iterations) {
		sim_fail(s, DIAG_LIMIT, w,
			 "the warp looped more than limit.loop_iterations = %llu times (all its loops together); raise "
			 "it with --set limit.loop_iterations=N or \"limits\": {\"loop_iterations\": N} in the experiment",
			 (unsigned long long)s->limits.max_loop_iterations);
		return;
	}
	e->pc = target;
	e->op_step = 0;
	e->li = 0;
	settle(s, w);
}

static int free_slot(struct warp *w)
{
	for (int i = 0; i < w->depth; i++)
		if (w->stack[i].mask == 0 && !w->stack[i].blocked)
			return i;
	return w->depth < SIMT_MAX_DEPTH ? w->depth++ : -1;
}

void simt_branch(struct sim *s, struct warp *w, const struct insn *in)
{
	struct simt_entry *top = simt_cur(w);
	uint32_t taken = 0; /* threads whose condition is false: they jump */
	if (top->mask && simt_uniform(w, &in->e[0])) {
		taken = simt_eval(s, w, __builtin_ctz(top->mask), &in->e[0]) == 0 ? top->mask : 0;
	} else {
		int64_t cond[32];
		simt_eval_lanes(s, w, &in->e[0], top->mask, cond);
		for (uint32_t m = top->mask; m; m &= m - 1) {
			int lane = __builtin_ctz(m);
			if (cond[lane] == 0)
				taken |= 1u << lane;
		}
	}
	int32_t pc = top->pc;
	top->op_step = 0;
	top->li = 0;
	if (taken == 0) {
		top->pc = pc + 1;
	} else if (taken == top->mask) {
		top->pc = in->target;
	} else if (independent(s)) {
		int slot = free_slot(w);
		if (slot < 0) {
			sim_fail(s, DIAG_LIMIT, w, "more than %d thread groups in one warp", SIMT_MAX_DEPTH);
			return;
		}
		top = simt_cur(w);
		top->mask &= ~taken;
		top->pc = pc + 1;
		w->stack[slot] = new_entry(in->target, -1, taken);
		simt_mark(w, slot);
	} else {
		if (w->depth + 2 > SIMT_MAX_DEPTH) {
			sim_fail(s, DIAG_LIMIT, w, "divergence nests deeper than %d levels", SIMT_MAX_DEPTH);
			return;
		}
		uint32_t fall = top->mask & ~taken;
		if (top->reconv != in->reconv)
			top->pc = in->reconv;
		else
			w->depth--; /* already the entry that waits at this reconv: reuse it, do not stack a copy */
		w->stack[w->depth++] = new_entry(in->target, in->reconv, taken);
		w->stack[w->depth++] = new_entry(pc + 1, in->reconv, fall);
		simt_mark(w, w->depth - 2);
		simt_mark(w, w->depth - 1);
	}
	settle(s, w);
}

/* independent: groups at the same pc, none of them waiting, become one. */
void simt_merge(struct sim *s, struct warp *w)
{
	if (!independent(s))
		return;
	w->next_known = false;
	for (int i = 0; i < w->depth; i++) {
		struct simt_entry *a = &w->stack[i];
		if (!a->mask || a->blocked)
			continue;
		for (int j = i + 1; j < w->depth; j++) {
			struct simt_entry *b = &w->stack[j];
			if (b->mask && !b->blocked && b->pc == a->pc && b->op_step == a->op_step && b->li == a->li) {
				a->mask |= b->mask;
				b->mask = 0;
				simt_mark(w, j);
				if (w->cur == j)
					w->cur = i;
			}
		}
	}
	settle(s, w);
}

/*
 * __syncwarp.  post_dominator: the warp is already converged at every
 * structured point, so it only costs its issue slot.  independent: the
 * group waits until every group of the warp is at a __syncwarp; then all
 * go on, and groups at the same one become one.
 */
void simt_syncwarp(struct sim *s, struct warp *w, uint64_t now)
{
	if (!independent(s)) {
		simt_advance(s, w);
		return;
	}
	sched_block(s, w, STALL_SYNCWARP, WAIT_SYNCWARP, now);
	for (int i = 0; i < w->depth; i++)
		if (w->stack[i].mask && w->stack[i].blocked != WAIT_SYNCWARP)
			return;
	for (int i = 0; i < w->depth; i++) {
		struct simt_entry *e = &w->stack[i];
		if (!e->mask)
			continue;
		e->pc++;
		e->op_step = 0;
		e->li = 0;
		e->wait_start = NEVER;
		sched_wake(s, w, i, now + 1);
	}
	simt_merge(s, w);
}

static void release_syncwarp_if_complete(struct sim *s, struct warp *w, uint64_t now)
{
	if (!independent(s))
		return;
	int waiting = -1;
	for (int i = 0; i < w->depth; i++) {
		if (!w->stack[i].mask)
			continue;
		if (w->stack[i].blocked != WAIT_SYNCWARP)
			return;
		waiting = i;
	}
	if (waiting < 0)
		return;
	int cur = w->cur;
	w->cur = waiting;
	w->stack[waiting].blocked = WAIT_NONE;
	simt_mark(w, waiting);
	simt_syncwarp(s, w, now);
	if (w->stack[cur].mask)
		w->cur = cur;
}

/* The lanes end: they leave every entry; the warp is done when none are left. */
void simt_exit_lanes(struct sim *s, struct warp *w, uint32_t lanes, uint64_t now)
{
	lanes &= w->live;
	pipe_thread_exits(s, w, lanes);
	w->live &= ~lanes;
	for (int i = 0; i < w->depth; i++) {
		w->stack[i].mask &= ~lanes;
		simt_mark(w, i);
	}
	struct block *b = &s->blocks[w->block];
	b->live_threads -= (uint32_t)__builtin_popcount(lanes);
	simt_cur(w)->op_step = 0;
	simt_cur(w)->li = 0;
	settle(s, w);
	if (w->depth == 0 || w->live == 0) {
		w->depth = 0;
		w->runnable = 0;
		w->done = true;
		/* the end of the program issues nothing: the warp is done once its last instruction has issued */
		sched_charge(s, w, now);
		w->done_at = w->since > now ? w->since : now;
		warp_set_ready(s, w, NEVER);
		s->warps_left--;
	} else {
		if (w->cur >= w->depth)
			w->cur = w->depth - 1;
		release_syncwarp_if_complete(s, w, now);
	}
	/* Exited threads no longer count at __syncthreads or grid.sync. */
	sync_check_release(s, b, now);
	sync_grid_check_release(s, now);
}

/*
 * simt: a warp's threads, their registers and the SIMT reconvergence stack.
 *
 * Post-dominator reconvergence: a divergent branch turns the top entry into
 * the reconvergence entry (pc = the branch's reconv, all its threads) and
 * pushes one entry per side; an entry that reaches its reconv pc is popped,
 * so the sides rejoin where the structured if/loop ends.
 */
#include <stdio.h>

#include "simint.h"

int64_t simt_eval(struct sim *s, struct warp *w, int lane, const struct expr *e)
{
	if (e->is_const)
		return e->value;
	enum expr_fault f = EXPR_OK;
	int64_t v = expr_eval_code(&s->k->pool, e, simt_regs(s, w, lane), &f);
	if (f)
		sim_fail(s, DIAG_INPUT, w, "%s (thread %u)", expr_fault_name(f), w->in_block * 32 + (unsigned)lane);
	return v;
}

/* Pops entries that reached their reconvergence point or have no threads left. */
static void settle(struct warp *w)
{
	while (w->depth > 0) {
		struct simt_entry *top = &w->stack[w->depth - 1];
		if (top->mask != 0 && top->pc != top->reconv)
			break;
		w->depth--;
	}
}

void simt_advance(struct sim *s, struct warp *w)
{
	(void)s;
	w->stack[w->depth - 1].pc++;
	w->op_step = 0;
	w->wait_start = NEVER;
	settle(w);
}

void simt_jump(struct sim *s, struct warp *w, int32_t target)
{
	(void)s;
	w->stack[w->depth - 1].pc = target;
	w->op_step = 0;
	settle(w);
}

void simt_branch(struct sim *s, struct warp *w, const struct insn *in)
{
	struct simt_entry *top = &w->stack[w->depth - 1];
	uint32_t taken = 0; /* threads whose condition is false: they jump */
	for (uint32_t m = top->mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		if (simt_eval(s, w, lane, &in->e[0]) == 0)
			taken |= 1u << lane;
	}
	int32_t pc = top->pc;
	w->op_step = 0;
	if (taken == 0) {
		top->pc = pc + 1;
	} else if (taken == top->mask) {
		top->pc = in->target;
	} else {
		if (w->depth + 2 > SIMT_MAX_DEPTH) {
			sim_fail(s, DIAG_LIMIT, w, "divergence nests deeper than %d levels", SIMT_MAX_DEPTH);
			return;
		}
		uint32_t fall = top->mask & ~taken;
		if (top->reconv != in->reconv) {
			top->pc = in->reconv;
		} else {
			/* Already the entry that waits at this reconv: reuse it rather than stack a copy. */
			w->depth--;
		}
		w->stack[w->depth++] = (struct simt_entry){in->target, in->reconv, taken};
		w->stack[w->depth++] = (struct simt_entry){pc + 1, in->reconv, fall};
	}
	settle(w);
}

/* The lanes end: they leave every stack entry; the warp is done when none are left. */
void simt_exit_lanes(struct sim *s, struct warp *w, uint32_t lanes, uint64_t now)
{
	lanes &= w->live;
	w->live &= ~lanes;
	for (int i = 0; i < w->depth; i++)
		w->stack[i].mask &= ~lanes;
	struct block *b = &s->blocks[w->block];
	b->live_threads -= (uint32_t)__builtin_popcount(lanes);
	w->op_step = 0;
	settle(w);
	if (w->depth == 0 || w->live == 0) {
		w->depth = 0;
		w->done = true;
		w->done_at = now + 1;
		w->ready_at = NEVER;
		s->warps_left--;
	}
	/* Exited threads no longer count at __syncthreads. */
	sync_check_release(s, b, now);
}

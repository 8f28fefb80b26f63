/*
 * chain: the issue slots the tick takes inline (internal header).
 *
 * compute's and fma's chains of dependent FMAs: a chain's FMA has no form,
 * the op repeats one FFMA that reads its chain's last result.  Its issue
 * and the plan of the chain's next FMA are inline here, so the tick
 * (sched.c) issues a planned FMA without the call into issue_one, and
 * issue_one (issue.c) issues an FMA it has just found the same way.  Most
 * other slots are a form's plain instructions (issue_plain), whose plan
 * (plan_form) is here for the same reason: together 79% of the slots of
 * with_staging_unified at 4 blocks.
 */
#ifndef SMSIM_CHAIN_H
#define SMSIM_CHAIN_H

#include "simint.h"

/*
 * Plans a chain's FMA: it reads its chain's last result (compute's first,
 * the loaded value), after the last SASS instruction's stall count and
 * a taken branch's redirect (plan_waits).
 */
static ISSUE_INLINE void plan_fma(struct warp *w, const struct insn *in, struct simt_entry *e)
{
	w->next_cls = IC_FMA;
	w->next_free = false;
	plan_waits(w, e, w->chain_ready[in->chains > 1 ? e->op_step % in->chains : 0], STALL_ALU);
	w->next = (struct cursor){in, NULL, e};
	w->next_known = true;
}

/*
 * The chain's next FMA, planned after one of it issued: w->next, next_cls,
 * next_free and next_known still hold what plan_fma gave the one before
 * (the same op, group and class), so only when it may issue is new; the
 * stores of the rest were 7 host instructions an FMA.
 */
static ISSUE_INLINE void plan_fma_again(struct warp *w, const struct insn *in, struct simt_entry *e)
{
	plan_waits(w, e, w->chain_ready[in->chains > 1 ? e->op_step % in->chains : 0], STALL_ALU);
}

/*
 * compute's loop as compiled around the chain: the tests of k before it
 * (or, for k = 0, the branch over it) and the ends of its regions after it
 * issue in a row before the next FMA or the store.
 */
static ISSUE_INLINE void compute_insert(struct simt_entry *e, enum lform_id form)
{
	if (lform_table[form].n == 0)
		return;
	e->again = true;
	e->aux = (uint8_t)form;
	e->li = 0;
}

/*
 * What a wait on a class's result is charged to (the pipeline ops override SYNCS with their own).
 * S2R / S2UR come back through the MIO scoreboard, as shared loads do: ncu counts the wait on one
 * short_scoreboard (tests/test_binding.c a_wait_on_a_special_register_is_short_scoreboard).
 */
static const uint8_t class_cause[IC_COUNT] = {
	[IC_ALU] = STALL_ALU,	 [IC_IMAD] = STALL_ALU,     [IC_IMADW] = STALL_ALU,	    [IC_FMA] = STALL_ALU,     [IC_CONV] = STALL_ALU,
	[IC_UNI] = STALL_ALU,	 [IC_S2R] = STALL_SMEM,	    [IC_BRA] = STALL_ALU,     [IC_LDS] = STALL_SMEM,
	[IC_STS] = STALL_SMEM,	 [IC_LDG] = STALL_MEMORY,   [IC_STG] = STALL_MEMORY,  [IC_LDGSTS] = STALL_MEMORY,
	[IC_DEPBAR] = STALL_MEMORY, [IC_LDGDEPBAR] = STALL_MEMORY, [IC_SYNCS] = STALL_BARRIER, [IC_BAR] = STALL_SYNCTHREADS, [IC_SHFL] = STALL_SMEM,
	[IC_MMA] = STALL_ALU,
};

/* The class and the ready-by cycle of the cursor's instruction in its form (its results and inputs; not its pipe). */
static ISSUE_INLINE enum iclass next_inst(const struct sim *s, const struct warp *w, const struct cursor *c,
					   uint64_t *deps_at, enum stall *cause)
{
	const struct simt_entry *e = c->e;
	const struct linst *li = &c->f->code[e->li];
	uint64_t at = 0;
	int last = -1; /* the dependency ready last (the first of equals): what the wait is charged to */
	/*
	 * A compare smsim lowered reaches a branch later than a register
	 * reaches an ALU; after ptxas's compare its stall count says when
	 * (13 cycles before a predicated BRA), and the class latency only
	 * guards a result whose stall counts were left out with the set-up.
	 */
	uint64_t pred_extra = li->cls == IC_BRA ? s->pred_extra : 0;
	/* a statement's arithmetic on a load's result waits at its reader, not here (lform.after_load) */
	uint64_t deps = c->f->after_load >> e->li & 1 ? 0 : li->deps;
	if (!pred_extra) {
		/* most instructions: the loop without the branch's case keeps its values in registers in the tick */
		for (uint64_t d = deps; d; d &= d - 1) {
			int j = __builtin_ctzll(d);
			uint64_t ready = w->res[j];
			last = ready > at ? j : last;
			at = ready > at ? ready : at;
		}
	}
	for (uint64_t d = pred_extra ? deps : 0; d; d &= d - 1) {
		int j = __builtin_ctzll(d);
		uint64_t ready = w->res[j];
		if (c->f->code[j].cls == IC_ALU && ready && !c->f->code[j].stall)
			ready += pred_extra;
		last = ready > at ? j : last;
		at = ready > at ? ready : at;
	}
	enum stall why = STALL_ALU;
	if (last >= 0) {
		enum iclass lc = (enum iclass)c->f->code[last].cls;
		why = lc == IC_SYNCS ? (enum stall)w->op_cause : (enum stall)class_cause[lc];
	}
	if ((li->flags & LI_EXTERN) && w->ext_ready > at) {
		at = w->ext_ready;
		why = STALL_ALU;
	}
	if ((li->flags & LI_WAR) && w->ldgsts_read > at) { /* it overwrites a register that LDGSTS has yet to read */
		at = w->ldgsts_read;
		why = STALL_MEMORY;
	}
	/* what a chain hands on: compute's store writes the chain's value, a shuffle step adds the last one's sum */
	bool chained = c->f->chained >> e->li & 1; /* issue_setup */
	if (chained && w->chain_ready[0] > at) {
		at = w->chain_ready[0];
		why = c->in->op == OP_SHFL ? STALL_SMEM : STALL_ALU;
	}
	*deps_at = at;
	*cause = why;
	return (enum iclass)li->cls;
}

/*
 * Plans the cursor's instruction of a form (c->f): what issue_when_planned
 * checks at the pick, and whether it is plain (issue_plain).  Inline where
 * an issue goes on in the same form, the most common slot after a chain's
 * FMA.  plan_form_in_place leaves w->next and next_known to the caller:
 * issue_plain's cursor is w->next already (its group moved on within it).
 */
static ISSUE_INLINE void plan_form_in_place(const struct sim *s, struct warp *w, const struct cursor *c)
{
	uint64_t at;
	enum stall why;
	w->next_cls = (uint8_t)next_inst(s, w, c, &at, &why);
	w->next_free = c->e->li == c->f->anchor && c->e->resumed && c->f->code[c->e->li].cls == IC_SYNCS;
	/*
	 * bit li of the form's plain mask (an mma's loop end is not in it: lower_kernel), unless the group
	 * goes round again; !again is 0 or 1, so the AND leaves that bit alone (with an "& 1" of its own
	 * GCC stored the byte and masked it again in memory, at every plan)
	 */
	w->next_plain = (uint8_t)(c->f->plain >> c->e->li & !c->e->again);
	plan_waits(w, c->e, at, why);
}
static ISSUE_INLINE void plan_form(const struct sim *s, struct warp *w, const struct cursor *c)
{
	plan_form_in_place(s, w, c);
	w->next = *c;
	w->next_known = true;
}

/* Whether a wmma runs a later trip of its unrolled loop, whose lanes' offsets are in registers (isa/lower.c). */
static inline bool mma_lanes_kept(const struct warp *w, const struct insn *in, const struct simt_entry *e)
{
	return in->op == OP_MMA && in->mma.lane_slot >= 0 &&
	       lane_reg(w, (uint64_t)in->mma.lane_slot, __builtin_ctz(e->mask)) != in->mma.lane_first;
}

/*
 * Where the op's sequence starts: at its first instruction, but for a wmma
 * in a later trip of its unrolled loop after its S2R, and after its lanes'
 * offsets too where no address arithmetic comes between (issue_one steps
 * over them where some does).
 */
static inline uint16_t op_first_li(const struct warp *w, const struct insn *in, const struct simt_entry *e)
{
	if (!mma_lanes_kept(w, in, e))
		return 0;
	return in->mma.lane_at > 1 ? 1 : (uint16_t)(1 + in->mma.lane_n);
}

/*
 * A planned instruction of a form that issues as most do (next_plain): not
 * its anchor or its last, no latency of its own, no taken branch, no
 * LDGSTS operand read, no round of a loop.  Its result is ready its
 * class's latency after it issues, and the form's next instruction is
 * planned: issue_one's path for it without that path's other cases.
 */
static ISSUE_INLINE void issue_plain(struct sim *s, struct trace *tr, struct warp *w, uint64_t now)
{
	const struct cursor *c = &w->next;
	struct simt_entry *e = c->e;
	const struct linst *li = &c->f->code[e->li];
	enum iclass cls = (enum iclass)w->next_cls;
	/*
	 * Nothing here reads next_known or moves the group out of the form:
	 * the plan of its next instruction keeps w->next as it is, and
	 * next_known stays true (7 host instructions of the 80 a plain slot
	 * took, stores of what they held already).  The cursor is read where
	 * it is, not copied: in the tick a copy went to the stack and back.
	 */
	s->cls_issued[cls]++;
	uint64_t start = issue_occupy(s, w, cls, false, now);
	if (tr) {
		count_op_issue(s, c->in, cls);
		trace_chain_slot(tr, w->id, (enum stall)w->op_cause,
				 e->op_step == 0 && (e->li == 0 || e->li == op_first_li(w, c->in, e)));
	}
	if (li->stall)
		w->stall_until = now + li->stall; /* the SASS's schedule: its stall count holds the next instruction back */
	w->res[e->li] = start + s->cls_lat[cls];
	e->li++;
	plan_form_in_place(s, w, c);
}

/* The warp goes on in the same op (issue.c): its next instruction, planned now instead of at the next pick. */
void issue_plan_here(const struct sim *s, struct warp *w);
/* The same for compute once its chain has begun, whose instruction in at group e is (issue.c). */
void issue_plan_compute(const struct sim *s, struct warp *w, const struct insn *in, struct simt_entry *e);
/* An op is over (issue.c): under independent scheduling the warp's next group in turn issues. */
void issue_next_group(struct sim *s, struct warp *w);

/* One FMA of the chain of the op in at entry e issues at now (tr: s->trace). */
static ISSUE_INLINE void issue_fma(struct sim *s, struct trace *tr, struct warp *w, struct simt_entry *e,
				   const struct insn *in, uint64_t now)
{
	/*
	 * the FMA is w->next (planned by plan_fma); next_known is cleared only where the warp leaves the chain.
	 * compute_issues counts it, not cls_issued, which stats_finish reads for the tensor pipe alone.
	 */
	issue_occupy(s, w, IC_FMA, false, now);
	uint64_t lat = s->cls_lat[IC_FMA];
	if (tr) {
		count_op_issue(s, in, IC_FMA);
		trace_chain_slot(tr, w->id, (enum stall)w->op_cause, e->li == 0 && e->op_step == 0);
	}
	count_compute_issue(s, now, copy_latest_land(s));
	uint32_t chain = in->chains > 1 ? e->op_step % in->chains : 0;
	w->chain_ready[chain] = now + lat;
	if (chain == 0)
		w->alu_chain_cycles += lat;
	e->op_step++;
	if (in->op == OP_FMA) {
		if ((int64_t)e->op_step >= w->op_count) {
			w->next_known = false;
			simt_advance(s, w);
			issue_next_group(s, w);
		} else {
			plan_fma_again(w, in, e);
		}
		return;
	}
	/*
	 * A trip of compute's compiled loop ends after chain_unroll FMAs: its
	 * back-edge and the constant it rematerialises hold the next FMA back.
	 */
	uint64_t chains = in->chains > 1 ? in->chains : 1, per_trip = (uint64_t)s->m->chain_unroll * chains;
	uint64_t done_fmas = e->op_step - 1;
	/* where in its trip the chain is (done_fmas % per_trip, counted: a division per FMA costs the host more) */
	if (++e->trip_fmas >= per_trip)
		e->trip_fmas = 0;
	if (e->trip_fmas == 0 && (int64_t)done_fmas < w->op_count)
		for (uint64_t i = 0; i < chains; i++)
			w->chain_ready[i] += (uint64_t)s->m->chain_trip_cycles;
	if (chains > 1 && (int64_t)e->op_step > w->op_count) {
		/* ilp: the chains' sums join in a tree of FADDs before the store reads one value */
		uint64_t last = 0, depth = 0;
		for (uint64_t i = 0; i < chains; i++)
			last = w->chain_ready[i] > last ? w->chain_ready[i] : last;
		while ((1ull << depth) < chains)
			depth++;
		w->chain_ready[0] = last + depth * s->cls_lat[IC_FMA];
	}
	/* compute's compiled loop: a trip's counter, compare and branch go between its first FMAs */
	uint32_t trip_n = lform_table[LF_CHAIN_TRIP].n;
	if (trip_n > 0 && e->trip_fmas == (per_trip > 1 ? 1 : 0))
		e->trip = (uint8_t)trip_n;
	if (e->trip) {
		e->again = true;
		e->aux = LF_CHAIN_TRIP;
		e->li = (uint16_t)(trip_n - e->trip);
	} else if ((int64_t)e->op_step > w->op_count) {
		compute_insert(e, LF_COMPUTE_EXIT);
	}
	if (!e->again && (int64_t)e->op_step <= w->op_count) {
		plan_fma_again(w, in, e); /* the chain's next FMA: form_at's case, without asking it */
	} else {
		w->next_known = false;
		issue_plan_compute(s, w, in, e);
	}
}

#endif

/*
 * chain: compute's and fma's chains of dependent FMAs (internal header).
 *
 * A chain's FMA is most of the warp-instructions a kernel issues, and it
 * has no form: the op repeats one FFMA that reads its chain's last result.
 * Its issue and the plan of the chain's next FMA are inline here, so the
 * tick (sched.c) issues a planned FMA without the call into issue_one,
 * and issue_one (issue.c) issues an FMA it has just found the same way.
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

/* The warp goes on in the same op (issue.c): its next instruction, planned now instead of at the next pick. */
void issue_plan_here(const struct sim *s, struct warp *w);
/* An op is over (issue.c): under independent scheduling the warp's next group in turn issues. */
void issue_next_group(struct sim *s, struct warp *w);

/* One FMA of the chain of the op in at entry e issues at now (tr: s->trace). */
static ISSUE_INLINE void issue_fma(struct sim *s, struct trace *tr, struct warp *w, struct simt_entry *e,
				   const struct insn *in, uint64_t now)
{
	w->next_known = false;
	issue_occupy(s, w, IC_FMA, false, now);
	uint64_t lat = s->cls_lat[IC_FMA];
	if (tr)
		trace_chain_slot(tr, w->id, (enum stall)w->op_cause, e->li == 0 && e->op_step == 0);
	count_compute_issue(s, now, copy_latest_land(s));
	uint32_t chain = in->chains > 1 ? e->op_step % in->chains : 0;
	w->chain_ready[chain] = now + lat;
	if (chain == 0)
		w->alu_chain_cycles += lat;
	e->op_step++;
	if (in->op == OP_FMA) {
		if ((int64_t)e->op_step >= w->op_count) {
			simt_advance(s, w);
			issue_next_group(s, w);
		} else {
			plan_fma(w, in, e);
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
	if (!e->again && (int64_t)e->op_step <= w->op_count)
		plan_fma(w, in, e); /* the chain's next FMA: form_at's case, without asking it */
	else
		issue_plan_here(s, w);
}

#endif

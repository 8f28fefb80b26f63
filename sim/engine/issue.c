/*
 * issue: the instruction-level timing core.
 *
 * Every op issues the instruction sequence it was lowered to at load time
 * (isa/lower.c: its operands' arithmetic and its form's SASS), one
 * warp-instruction per issue slot, in program order.  An instruction may
 * issue when
 *   - the results it reads are ready: each instruction's result is ready
 *     its class's latency after it issued (a load's when the memory model
 *     says the data is back), and an op's inputs when the statements that
 *     wrote its variables have their results (a scoreboard per register
 *     slot), so a warp's independent instructions overlap;
 *   - its class's pipe on the sub-partition is free again (each class has
 *     an issue interval), and
 *   - for memory-path instructions, the SM's memory-instruction (MIO) queue
 *     is not full: it works off a fixed number of cycles per instruction.
 * A warp that cannot issue is charged to what it waits for.  At the op's
 * anchor instruction the op takes effect (exec_anchor); a wait that
 * blocks parks the group there.  compute's chain of k dependent FMAs, fma
 * and shfl issue their repeated instructions here without a table per
 * step.  Nothing here calls back into the semantic units except through
 * exec_anchor, and the question of an S2R, a SHFL or a MEMBAR to the
 * shared-memory port of when it has worked off its queue (smem_port_drained).
 */
#include <string.h>

#include "chain.h"

/* The op's own cause: what its span in the trace, its waits inside and its blocked anchor mean to a reader. */
static enum stall op_cause(enum op op)
{
	switch (op) {
	case OP_PRODUCER_ACQUIRE: return STALL_PRODUCER_ACQUIRE;
	case OP_CONSUMER_WAIT:
	case OP_CONSUMER_WAIT_FOR:
	case OP_CONSUMER_WAIT_PRIOR:
	case OP_PIPELINE_WAIT_PRIOR: return STALL_CONSUMER_WAIT;
	case OP_SYNCTHREADS:
	case OP_MAKE_PIPELINE:
	case OP_GRID_SYNC: return STALL_SYNCTHREADS;
	case OP_SYNCWARP: return STALL_SYNCWARP;
	case OP_MEMCPY_ASYNC:
	case OP_PIPELINE_MEMCPY_ASYNC:
	case OP_GLOBAL_LOAD:
	case OP_GLOBAL_STORE: return STALL_MEMORY;
	case OP_SHARED_LOAD:
	case OP_SHARED_STORE:
	case OP_SHFL: return STALL_SMEM;
	case OP_LET:
	case OP_SET:
	case OP_BRZ:
	case OP_JMP:
	case OP_EXIT:
	case OP_COMPUTE:
	case OP_FMA:
	case OP_MMA: return STALL_ALU;
	case OP_FENCE_PROXY_ASYNC: return STALL_SMEM;
	default: return STALL_BARRIER; /* the other pipeline, mbarrier and cuda::barrier calls */
	}
}

int issue_setup(struct sim *s)
{
	const struct machine *m = s->m;
	const int64_t lat[IC_COUNT] = {
#define LAT(c) m->iclass_##c##_latency
		LAT(alu), LAT(imad), LAT(imad_wide), LAT(fma), LAT(conv), LAT(uniform), LAT(s2r), LAT(branch), LAT(lds), LAT(sts),
		LAT(ldg), LAT(stg), LAT(ldgsts), LAT(depbar), LAT(ldgdepbar), LAT(syncs), LAT(bar), LAT(shfl), LAT(mma),
#undef LAT
	};
	const int64_t ivl[IC_COUNT] = {
#define IVL(c) m->iclass_##c##_interval
		IVL(alu), IVL(imad), IVL(imad_wide), IVL(fma), IVL(conv), IVL(uniform), IVL(s2r), IVL(branch), IVL(lds), IVL(sts),
		IVL(ldg), IVL(stg), IVL(ldgsts), IVL(depbar), IVL(ldgdepbar), IVL(syncs), IVL(bar), IVL(shfl), IVL(mma),
#undef IVL
	};
	const int64_t mio[IC_COUNT] = {
#define MIO(c) m->iclass_##c##_mio
		MIO(alu), MIO(imad), MIO(imad_wide), MIO(fma), MIO(conv), MIO(uniform), MIO(s2r), MIO(branch), MIO(lds), MIO(sts),
		MIO(ldg), MIO(stg), MIO(ldgsts), MIO(depbar), MIO(ldgdepbar), MIO(syncs), MIO(bar), MIO(shfl), MIO(mma),
#undef MIO
	};
	for (int c = 0; c < IC_COUNT; c++) {
		s->cls_lat[c] = (uint64_t)lat[c];
		s->cls_ivl[c] = (uint64_t)ivl[c];
		s->cls_mio[c] = (uint64_t)mio[c];
	}
	/* a branch reads a compare's predicate this much later than an ALU reads its register (iclass.csv, BRA) */
	s->pred_extra = (uint64_t)m->branch_predicate_latency > s->cls_lat[IC_ALU]
				? (uint64_t)m->branch_predicate_latency - s->cls_lat[IC_ALU]
				: 0;
	for (int i = 0; i < LF_COUNT; i++) {
		s->forms[i] = lform_table[i];
		s->forms[i].plain = lform_plain(&lform_table[i]);
	}
	/*
	 * What a chain hands on (next_inst): compute's store, and its loop's
	 * instructions around the chain (which form_at gives only once the chain
	 * has begun, op_step > 0), wait for the chain's value at their anchor; a
	 * shuffle step's first instruction adds the last step's sum.  No other
	 * form's instruction does, the kernel's lowered ones included.
	 */
	const enum lform_id after_chain[] = {LF_COMPUTE_STORE, LF_COMPUTE_ENTER, LF_COMPUTE_SKIP, LF_COMPUTE_EXIT,
					     LF_CHAIN_TRIP};
	for (size_t i = 0; i < sizeof after_chain / sizeof *after_chain; i++) {
		struct lform *f = &s->forms[after_chain[i]];
		f->chained = f->anchor >= 0 ? 1ull << f->anchor : 0;
	}
	s->forms[LF_SHFL_STEP].chained = 1;
	return 0;
}

/*
 * The form the group issues from: compute's load form (op_step 0), its
 * chain (op_step 1..k: NULL for an FMA; while e->again the form of the
 * loop's instructions around the FMAs, e->aux: its trip, entry, exit, or
 * the skip of k = 0),
 * its store form (op_step k + 1); fma's FMAs (NULL); a shuffle step's
 * form; every other op's lowered sequence.
 */
static const struct lform *form_at(const struct sim *s, const struct warp *w, const struct insn *in,
				   const struct simt_entry *e)
{
	switch (in->op) {
	case OP_COMPUTE:
		if (e->op_step == 0)
			return &s->k->lowered[e->pc];
		if (e->again)
			return &s->forms[e->aux];
		if ((int64_t)e->op_step <= w->op_count)
			return NULL;
		return &s->forms[LF_COMPUTE_STORE];
	case OP_FMA: return NULL;
	case OP_SHFL: return &s->forms[LF_SHFL_STEP];
	default: return &s->k->lowered[e->pc];
	}
}

/* The inputs of the op at the group's pc are ready by then: its variables' statements have their results. */
static uint64_t inputs_ready(const struct warp *w, const struct insn *in)
{
	uint64_t at = 0;
	for (uint64_t b = in->reads; b; b &= b - 1) {
		uint64_t r = w->slot_ready[__builtin_ctzll(b)];
		at = r > at ? r : at;
	}
	return at;
}

/*
 * How many FMAs (or shuffle steps) the warp issues for an op whose count
 * its lanes may hold apart: the largest, as a loop of per-lane trip counts
 * runs until its last lane is done, the others masked off.  A negative
 * count in any lane is returned as is, for the caller to report.
 */
static int64_t op_count_of(struct sim *s, struct warp *w, uint32_t mask, const struct expr *count)
{
	int64_t uni, v[32];
	if (simt_eval_some(s, w, count, mask, &uni, v))
		return uni;
	int64_t most = 0;
	for (uint32_t m = mask; m; m &= m - 1) {
		int64_t n = v[__builtin_ctz(m)];
		if (n < 0)
			return n;
		if (n > most)
			most = n;
	}
	return most;
}

/*
 * An S2R of a per-thread register, a SHFL or a fence's MEMBAR waits in the MIO queue behind the
 * shared-memory work queued before it (tests/hw/s2r_mio.cu, s2r_mio.csv), and the port idles a
 * few cycles for it before what was queued after it (tests/hw/port_share.cu, port_share.csv):
 * those cycles, or -1 where the instruction does not wait.
 */
static inline int64_t port_bubble(const struct machine *m, enum iclass cls, uint16_t flags)
{
	if (cls == IC_S2R && (flags & LI_SREG_THREAD) && m->s2r_behind_smem_port)
		return m->s2r_port_bubble;
	if ((flags & LI_MEMBAR) && m->membar_behind_smem_port)
		return m->membar_port_bubble;
	if (cls == IC_SHFL && m->shfl_behind_smem_port)
		return 0;
	return -1;
}

/* The op at pc begins: its count and its inputs' readiness. */
static void op_begin(struct sim *s, struct warp *w, const struct insn *in, struct simt_entry *e)
{
	w->ext_ready = in->reads ? inputs_ready(w, in) : 0;
	w->op_cause = (uint8_t)op_cause(in->op);
	w->op_wait = 0;
	e->again = false;
	e->trip = 0;
	e->trip_fmas = 0;
	e->resumed = false;
	if (in->op == OP_COMPUTE || in->op == OP_FMA || in->op == OP_SHFL) {
		w->op_count = op_count_of(s, w, e->mask, &in->e[0]);
		if (w->op_count < 0) {
			static const char *const what[] = {"k", "n", "n"}, *const expected[] = {
				"a chain length", "a count", "a step count"};
			int i = in->op == OP_COMPUTE ? 0 : in->op == OP_FMA ? 1 : 2;
			sim_fail(s, DIAG_INPUT, w, "%s with %s = %lld: expected %s of 0 or more", op_table[in->op].name,
				 what[i], (long long)w->op_count, expected[i]);
			w->op_count = 0;
		}
		if (in->op == OP_FMA || (in->op == OP_COMPUTE && in->chains > 1))
			w->op_count *= in->chains; /* compute with ilp: that many chains of k FMAs, interleaved */
		if (in->op != OP_COMPUTE)
			memset(w->chain_ready, 0, sizeof w->chain_ready);
	}
	e->li = op_first_li(w, in, e);
	for (int j = 0; j < e->li; j++)
		w->res[j] = 0;
}

/*
 * A group goes on with an op it was parked in (a wait's anchor) after
 * another group of the warp issued ops: what it had issued of this op is
 * long done, and its inputs were ready, so nothing before the anchor holds
 * it up; the op's cause is its own again.
 */
static void op_resume(struct warp *w, const struct insn *in, const struct simt_entry *e)
{
	w->ext_ready = 0;
	w->op_cause = (uint8_t)op_cause(in->op);
	for (int j = 0; j < e->li && j < LOWER_SEQ_MAX; j++)
		w->res[j] = 0;
}

/* Runs an op that issues no instruction: it takes effect at once. */
static enum anchor_status run_empty(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	struct warp *was = s->issuing;
	s->issuing = w;
	enum anchor_status st;
	do
		st = exec_anchor(s, w, in, now);
	while (st == ANCHOR_AGAIN && !s->error && !w->done);
	s->issuing = was;
	if (st == ANCHOR_DONE && !s->error && !w->done)
		simt_advance(s, w);
	return st;
}

/*
 * Runs the ops that issue no instruction (a back-edge, a call that
 * compiles to nothing) and finds the group's next instruction.  False
 * when the warp has nothing to issue (done, blocked, or an error).
 */
static bool cursor_at(struct sim *s, struct warp *w, uint64_t now, struct cursor *c)
{
	for (int guard = 0; guard < 1 << 20; guard++) {
		if (s->error || w->done)
			return false;
		struct simt_entry *e = simt_cur(w);
		/* independent: the group that issued last, until its op ends; the others: simt_pick's choice */
		bool stay = s->m->reconverge == RECONVERGE_INDEPENDENT && w->cur < w->depth && e->mask && !e->blocked;
		if (!stay && !simt_pick(s, w))
			return false;
		e = simt_cur(w);
		if (e->pc >= s->k->ncode) {
			simt_exit_lanes(s, w, e->mask, now);
			continue;
		}
		const struct insn *in = &s->k->code[e->pc];
		if (e->li == 0 && e->op_step == 0)
			op_begin(s, w, in, e);
		else if (w->op_entry != w->cur)
			op_resume(w, in, e);
		w->op_entry = (int8_t)w->cur;
		const struct lform *f = form_at(s, w, in, e);
		bool empty = f ? f->n == 0 : in->op == OP_FMA && w->op_count == 0;
		if (in->op == OP_SHFL && w->op_count == 0)
			empty = true;
		if (!empty) {
			*c = (struct cursor){in, f, e};
			return true;
		}
		if (in->op == OP_BRZ) {
			/*
			 * an if that compiles to no instruction (its condition a kernel parameter): exec_anchor's
			 * branch (no work to note, the group moved) without run_empty and the anchor's dispatch, a
			 * third of the ops overwait searches through
			 */
			struct warp *was = s->issuing;
			s->issuing = w;
			simt_branch(s, w, in);
			s->issuing = was;
			continue;
		}
		if (run_empty(s, w, in, now) == ANCHOR_BLOCKED && warp_ready(w) == NEVER)
			return false;
	}
	sim_fail(s, DIAG_LIMIT, w, "more than a million ops in a row issued no instruction");
	return false;
}

/* Plans the cursor's instruction: what issue_when_planned checks at the pick. */
static void plan(const struct sim *s, struct warp *w, const struct cursor *c)
{
	if (!c->f)
		plan_fma(w, c->in, c->e);
	else
		plan_form(s, w, c);
}

uint64_t issue_check(struct sim *s, struct warp *w, uint64_t now, enum stall *cause)
{
	if (!w->next_known) {
		struct cursor c;
		if (!cursor_at(s, w, now, &c))
			return NEVER;
		/* plan's two cases inline: the post-issue search after every op ends here (a call less an op) */
		if (!c.f)
			plan_fma(w, c.in, c.e);
		else
			plan_form(s, w, &c);
	}
	return issue_when_planned(s, w, now, cause);
}

/* Independent scheduling: once an op is over, the warp's next group in turn issues (simt_pick_group). */
void issue_next_group(struct sim *s, struct warp *w)
{
	if (s->m->reconverge == RECONVERGE_INDEPENDENT && !w->done && w->depth > 0)
		simt_pick_group(w);
}

/* The op is over; what follows may issue from the next cycle, once a value it uses is back. */
static void op_end(struct sim *s, struct warp *w, const struct insn *in, const struct lform *f)
{
	if (in->op == OP_LET || in->op == OP_SET || in->op == OP_BARRIER_TRY_WAIT || in->op == OP_BARRIER_TEST_WAIT) {
		uint64_t at = 0;
		for (int i = 0; i < f->n; i++)
			if ((f->code[i].flags & LI_RESULT) && w->res[i] > at)
				at = w->res[i];
		w->slot_ready[in->slot] = at;
	}
	uint64_t wait = w->op_wait;
	simt_advance(s, w);
	issue_next_group(s, w);
	if (wait > s->now + 1 && !w->done && warp_ready(w) != NEVER) {
		warp_set_ready(s, w, wait);
		w->cause = in->op == OP_SHARED_LOAD ? STALL_SMEM : STALL_MEMORY;
	}
}

/*
 * An LDL of a local array: an L1 hit comes back after local_load_latency, a
 * miss as a global read does (gmem_read_local).  Its element is what the op's
 * operand holds now, read in the group's first lane (the examples index their
 * arrays by a warp-uniform stage).
 */
static uint64_t local_load(struct sim *s, struct warp *w, const struct simt_entry *e, const struct linst *li)
{
	int site = li->flags >> LI_LOCAL_SITE;
	uint64_t hit = (uint64_t)s->m->local_load_latency;
	if (site == 0 || site > s->k->nlocal_reads || !e->mask)
		return hit;
	int64_t element = simt_peek(s, w, __builtin_ctz(e->mask), &s->k->local_reads[site - 1]);
	if (l1_local(&s->l1, w->id, element)) {
		s->rep->local_hits++;
		return hit;
	}
	s->rep->local_misses++;
	uint64_t line = 1ull << 52 | (uint64_t)w->id << 32 | ((uint64_t)element & 0xffffffffu); /* apart from global lines */
	return gmem_read_local(s, w, s->now, line) - s->now;
}

/* A load's value, or a synchronous copy's, is used by what follows the op: the warp waits for it at the op's end. */
static bool value_used(const struct insn *in)
{
	return in->op == OP_SHARED_LOAD || in->op == OP_GLOBAL_LOAD || in->op == OP_MEMCPY_ASYNC;
}

/*
 * A branch of a form that the compiled path takes: the warp fetches its
 * target after the branch's stall count and the redirect a taken branch
 * adds (iclass.csv's taken loop: 11 cycles from BRA to the next issue,
 * its stall count 5).
 */
static uint64_t taken_redirect(const struct sim *s, uint64_t now, uint8_t stall)
{
	return now + stall + 1 + (uint64_t)s->m->branch_redirect;
}

/* A group holding lanes of the branch that is at its target fetches from there until at (fetch_target). */
static void fetch_later(struct simt_entry *g, uint32_t branching, int32_t target, uint64_t at)
{
	/* later, not sooner: a join the branch lands on has set its own reconvergence */
	if ((g->mask & branching) && g->pc == target && g->redirect < at)
		g->redirect = at;
}

/*
 * The lanes that took a branch (a loop's exit, an if's skip: branching
 * held them before it) fetch its target before they issue again
 * (iclass.csv: BRA), until at; a loop's back-edge goes to code just run
 * and costs only its slot.  Every group holding such lanes at the target
 * waits.  Under independent scheduling a lane is in one group only, so
 * the walk starts at the branching group (where a group that did not
 * split, such as a lone lane, keeps them all), goes on from the newest
 * slot down (a split's other group is put in the lowest free slot, most
 * often a new one on top) and stops once every lane is found: with 32
 * groups the walk over the 33 entries was 2.4% of overwait D=32.  The
 * other models keep a lane in a convergence barrier or a stack entry too,
 * and walk them all.
 */
static void fetch_target(const struct sim *s, struct warp *w, int32_t target, uint32_t branching, uint64_t at)
{
	if (s->m->reconverge != RECONVERGE_INDEPENDENT || w->cur < 0 || w->cur >= w->depth) {
		for (int i = 0; i < w->depth; i++)
			fetch_later(&w->stack[i], branching, target, at);
		return;
	}
	fetch_later(&w->stack[w->cur], branching, target, at);
	uint32_t left = branching & ~w->stack[w->cur].mask;
	for (int i = w->depth - 1; left && i >= 0; i--) {
		if (i == w->cur)
			continue;
		fetch_later(&w->stack[i], branching, target, at);
		left &= ~w->stack[i].mask;
	}
}

/* The warp goes on in the same op: its next instruction, planned now instead of at the next pick. */
void issue_plan_here(const struct sim *s, struct warp *w)
{
	struct cursor c;
	c.e = simt_cur(w);
	c.in = &s->k->code[c.e->pc];
	c.f = form_at(s, w, c.in, c.e);
	if (!c.f || c.e->li < c.f->n)
		plan(s, w, &c);
}

/*
 * compute's next instruction once its chain has begun (op_step > 0): the
 * form of its loop's instructions while e->again, else the chain's next
 * FMA, else its store; form_at's case for it without the cursor's look-up
 * and the switch on the op (issue_plan_here cost 50 host instructions a
 * call at every trip of every chain).
 */
void issue_plan_compute(const struct sim *s, struct warp *w, const struct insn *in, struct simt_entry *e)
{
	if (!e->again && (int64_t)e->op_step <= w->op_count) {
		plan_fma(w, in, e);
		return;
	}
	struct cursor c = {in, &s->forms[e->again ? e->aux : LF_COMPUTE_STORE], e};
	if (e->li < c.f->n)
		plan_form(s, w, &c);
}

/*
 * One instruction of compute's compiled loop around its chain (e->again)
 * issued at now, its result ready at result: a trip's counter, compare or
 * branch between two FMAs, or the loop's entry, exit or skip, in a row.
 */
static void compute_loop_step(struct sim *s, struct warp *w, const struct insn *in, struct simt_entry *e,
			      const struct lform *f, uint64_t now, uint64_t result)
{
	w->res[e->li] = result;
	if (e->aux == LF_CHAIN_TRIP) {
		e->trip--;
		e->again = false;
		e->li = 0;
		if (e->trip && (int64_t)e->op_step > w->op_count) { /* the chain is over: the trip's rest in a row */
			e->again = true;
			e->li = (uint16_t)(f->n - e->trip);
		} else if (!e->trip && (int64_t)e->op_step > w->op_count) {
			compute_insert(e, LF_COMPUTE_EXIT);
		}
	} else {
		const struct linst *li = &f->code[e->li];
		if (li->stall)
			w->stall_until = now + li->stall;
		if (li->flags & LI_TAKEN)
			e->redirect = taken_redirect(s, now, li->stall);
		if (++e->li >= f->n) {
			e->again = false;
			e->li = 0;
		}
	}
	issue_plan_compute(s, w, in, e);
}

/*
 * What an LDGSTS of these lanes holds the SM's memory-instruction path for:
 * from ldgsts_mio_least at one lane to the class's cost at a full warp, in
 * proportion to its lanes, to the nearest cycle (lane_copies_sm.csv, 4-byte
 * copies issued back to back by 32 warps: 2.19 cycles a copy instruction
 * SM-wide at 1-8 lanes, 3.26 at 16, 3.38 at 24, 4.40 at 32).  A divergent
 * warp's one-lane copies share the path at half a full warp's cost.
 */
static uint64_t ldgsts_mio(const struct sim *s, uint32_t mask)
{
	uint64_t full = s->cls_mio[IC_LDGSTS], least = (uint64_t)s->m->ldgsts_mio_least;
	least = least < full ? least : full;
	uint64_t lanes = (uint64_t)__builtin_popcount(mask);
	lanes = lanes ? lanes : 1;
	return (least * 31 + (full - least) * (lanes - 1) + 15) / 31;
}

void issue_one(struct sim *s, struct trace *tr, struct warp *w, uint64_t now)
{
	struct cursor c;
	if (w->next_known) {
		/* planned at the pick or after the last issue: the group and its op have not moved since */
		c = w->next;
	} else if (!cursor_at(s, w, now, &c)) {
		return;
	} else {
		plan(s, w, &c);
	}
	if (!c.f) { /* one FMA of a chain */
		issue_fma(s, tr, w, c.e, c.in, now);
		return;
	}
	w->next_known = false;
	struct simt_entry *e = c.e;
	const struct insn *in = c.in;
	const struct lform *f = c.f;
	enum iclass cls = (enum iclass)w->next_cls;
	const struct linst *li = &f->code[e->li];
	s->cls_issued[cls]++;
	uint64_t start = cls == IC_LDGSTS && !(li->flags & LI_BULK)
				 ? issue_occupy_mio(s, w, cls, false, ldgsts_mio(s, e->mask), now)
				 : issue_occupy(s, w, cls, li->flags & LI_ARRIVE, now);
	uint64_t lat = s->cls_lat[cls];
	if (tr) {
		count_op_issue(s, in, cls);
		trace_chain_slot(tr, w->id, (enum stall)w->op_cause,
				 e->op_step == 0 && (e->li == 0 || e->li == op_first_li(w, in, e)));
	}

	if (in->op == OP_COMPUTE && e->again) {
		compute_loop_step(s, w, in, e, f, now, now + lat);
		return;
	}

	/* the SASS's schedule: its stall count holds the warp's next instruction back */
	uint8_t stall = li->stall;
	if (stall)
		w->stall_until = now + stall;
	if (cls == IC_LDGSTS)
		w->ldgsts_read = start + (uint64_t)s->m->ldgsts_operand_read;
	uint16_t own = li->flags & (LI_LOCAL | LI_LDC | LI_ARRIVE | LI_MEMBAR); /* an instruction with its own latency */
	if (own)
		lat = (uint64_t)(own & LI_LOCAL	   ? (int64_t)local_load(s, w, e, li)
				 : own & LI_LDC	   ? s->m->ldc_latency
				 : own & LI_MEMBAR ? s->m->fence_membar_latency
						   : s->m->mbarrier_arrive_latency);
	/* a woken try_wait (plan's next_free) came back with its result (mbarrier_wake_latency) */
	if (w->next_free)
		lat = 0;
	uint64_t result = start + lat;
	if (f->after_load >> e->li & 1) /* issued past its inputs, as ptxas places it: its result waits for them */
		for (uint64_t d = li->deps; d; d &= d - 1) {
			uint64_t input = w->res[__builtin_ctzll(d)];
			result = input + lat > result ? input + lat : result;
		}
	int64_t bubble = port_bubble(s->m, cls, li->flags);
	if (bubble >= 0) {
		uint64_t drained = smem_port_drained(s, now);
		result = drained + lat;
		smem_port_hold(s, drained + (uint64_t)bubble);
	}
	if (e->li == f->anchor && in->op != OP_SHFL) {
		s->anchor_result = 0;
		e->resumed = false;
		uint32_t branching = e->mask;
		bool fetches = in->op == OP_BRZ && (li->flags & LI_RESULT);
		if (in->op == OP_BRZ && li->cls == IC_BRA && !fetches)
			/* a loop's test: the compiled bottom branch reads this compare's predicate (exec.c, OP_JMP) */
			e->loop_pred = now - 1 + (uint64_t)s->m->branch_predicate_latency;
		enum anchor_status st = exec_anchor(s, w, in, start);
		if (fetches)
			fetch_target(s, w, in->target, branching, start + (uint64_t)s->m->branch_redirect);
		if (st == ANCHOR_MOVED)
			issue_next_group(s, w);
		if (s->error || w->done || st == ANCHOR_BLOCKED || st == ANCHOR_MOVED)
			return; /* parked, timed or moved by the op; a blocked anchor issues again when it can go on */
		if (s->anchor_result > result)
			result = s->anchor_result;
		if (in->op == OP_MMA) /* each HMMA waits for its own fragments (isa/lower.c) */
			for (int fr = 0; fr + 1 < mma_ldsm_count(in); fr++)
				w->res[in->mma.ldsm_at + fr] = s->mma_fragment_back[fr];
		if (s->anchor_result && value_used(in) && s->anchor_result > w->op_wait)
			w->op_wait = s->anchor_result;
		e->again = st == ANCHOR_AGAIN;
		li = &f->code[e->li]; /* the op may have moved the group within its form */
	}
	w->res[e->li] = result;
	if (li->flags & LI_TAKEN) /* a try_wait's ready case jumps over its retry loop */
		e->redirect = taken_redirect(s, now, stall);
	e->li++;
	if (in->op == OP_MMA) {
		if (e->li == in->mma.lane_at && in->mma.lane_n && mma_lanes_kept(w, in, e))
			for (int j = 0; j < in->mma.lane_n; j++) /* a later trip: its lanes' offsets are in registers */
				w->res[e->li++] = 0;
		/* its HMMAs: its form's loop, once per repeat (isa/lower.c) */
		if (f->loop_begin >= 0 && e->li == (uint16_t)f->loop_end && ++e->op_step < in->mma.rep)
			e->li = (uint16_t)f->loop_begin;
	}
	/* a form with rounds: back to its loop (or its anchor) while the anchor wants another round */
	if (e->again) {
		int lb = f->loop_begin >= 0 ? f->loop_begin : f->anchor;
		int le = f->loop_begin >= 0 ? f->loop_end : f->anchor + 1;
		if (e->li >= le) {
			e->li = (uint16_t)lb;
			e->again = false;
		}
	}
	if (e->li < f->n) { /* the same form goes on */
		plan_form(s, w, &c);
		return;
	}
	switch (in->op) {
	case OP_COMPUTE:
		if (e->op_step == 0) { /* the loaded values feed the chains (or, with k = 0, the store) */
			uint64_t loaded = 0;
			for (int i = 0; i < f->n; i++)
				loaded = w->res[i] > loaded ? w->res[i] : loaded;
			for (int i = 0; i < (in->chains > 1 ? in->chains : 1); i++)
				w->chain_ready[i] = loaded;
			e->op_step = 1;
			e->li = 0;
			compute_insert(e, w->op_count > 0 ? LF_COMPUTE_ENTER : LF_COMPUTE_SKIP);
			issue_plan_compute(s, w, in, e);
			return;
		}
		op_end(s, w, in, f);
		return;
	case OP_SHFL:
		w->chain_ready[0] = w->res[f->n - 1];
		e->li = 0;
		if ((int64_t)++e->op_step >= w->op_count) {
			simt_advance(s, w);
			issue_next_group(s, w);
		} else {
			issue_plan_here(s, w);
		}
		return;
	default: op_end(s, w, in, f); return;
	}
}

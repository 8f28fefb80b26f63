/*
 * simt: a warp's threads, their registers, and how they diverge and
 * reconverge.
 *
 * convergence_barrier (Volta and later, the default): nvcc brackets a
 * divergent region with BSSY/BSYNC, a convergence barrier.  A divergent
 * branch turns its group into that barrier's entry — pc = the branch's
 * reconvergence point (its post-dominator), all the group's lanes, waiting
 * (WAIT_CONVERGE) — and makes one child path per side.  A path that reaches
 * its barrier's pc joins it; when no path of the barrier is left (every
 * live lane arrived or exited) the entry goes on as one group.  So paths
 * rejoin exactly where the SIMT stack rejoins them (commit coalescing and
 * over-wait as on the H100).  Unlike the stack, every path that is not
 * blocked may issue: the newest split (the one the stack would run, its
 * fall-through side first) goes first and keeps its op until the op ends,
 * and when it blocks (a barrier or mbarrier wait, an acquire, a sleep, a
 * try_wait) or waits at the barrier, the next newest issues; a path whose
 * poll (test_wait, try_wait) failed yields below every other, so a spin
 * loop does not starve the path it waits for — the starvation-freedom
 * Volta's independent thread scheduling guarantees.
 * Entries live in stable slots (waiter lists name them), linked by parent.
 *
 * simt_stack (pre-Volta): the entries form the classic SIMT stack.  A
 * divergent branch turns the top entry into the reconvergence entry (pc =
 * the branch's reconv, all its threads) and pushes one entry per side; an
 * entry that reaches its reconv pc is popped, so the sides rejoin where the
 * structured if/loop ends.  Only the top issues: a path that waits on
 * another path of its warp waits forever.
 *
 * independent: a divergent branch splits the group into two groups that
 * stay apart after the if; only a __syncwarp, a block barrier or the end
 * re-converges them.  The warp's issue slots rotate among its runnable
 * groups.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "simint.h"

void simt_fault(struct sim *s, struct warp *w, int lane, enum expr_fault f)
{
	sim_fail(s, DIAG_INPUT, w, "%s (thread %u)", expr_fault_name(f), w->in_block * 32 + (unsigned)lane);
}

void simt_substitute(const struct sim *s, const struct warp *w, int lane, const char *text, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	for (const char *p = text; *p && len + 1 < n;) {
		if (!isalpha((unsigned char)*p) && *p != '_') {
			out[len++] = *p++;
			out[len] = '\0';
			continue;
		}
		const char *q = p;
		while (isalnum((unsigned char)*q) || *q == '_')
			q++;
		int nl = (int)(q - p);
		bool found = false;
		int64_t v = 0;
		for (int slot = s->k->nslots - 1; slot >= 0 && !found; slot--)
			if ((int)strlen(s->k->slot_names[slot]) == nl && !strncmp(s->k->slot_names[slot], p, (size_t)nl)) {
				v = lane_reg(w, (uint64_t)slot, lane);
				found = true;
			}
		for (int i = 0; i < s->k->nparams && !found; i++)
			if ((int)strlen(s->k->params[i].name) == nl && !strncmp(s->k->params[i].name, p, (size_t)nl)) {
				v = s->k->params[i].value;
				found = true;
			}
		if (!found && nl == 10 && !strncmp(p, "block_size", 10)) {
			v = s->launch.block_size;
			found = true;
		} else if (!found && nl == 9 && !strncmp(p, "grid_size", 9)) {
			v = s->launch.block_size * s->launch.grid_blocks;
			found = true;
		}
		const char *ws = q;
		while (*ws == ' ')
			ws++;
		if (found && *ws != '(')
			len += (size_t)snprintf(out + len, n - len, "%lld", (long long)v);
		else
			len += (size_t)snprintf(out + len, n - len, "%.*s", nl, p);
		p = q;
	}
}

void simt_describe_lane(const struct sim *s, const struct warp *w, int lane, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	for (int slot = SLOT_BUILTINS; slot < s->k->nslots && len + 1 < n; slot++)
		len += (size_t)snprintf(out + len, n - len, "%s%s=%lld", len ? " " : "", s->k->slot_names[slot],
					(long long)lane_reg(w, (uint64_t)slot, lane));
}

/*
 * One lane's value of e from its linear form (expr.h), as the program would
 * compute it; false where a slot lies outside the form's bound.
 */
static inline bool linear_lane(const struct sim *s, const struct warp *w, int lane, const struct expr *e, int64_t *v)
{
	const int64_t *t = s->k->pool.words + e->lin_at;
	uint64_t bound = (uint64_t)t[EXPR_LIN_BOUND], acc = (uint64_t)t[EXPR_LIN_K];
	const int64_t *term = t + EXPR_LIN_HEAD, *end = term + t[EXPR_LIN_TERMS] * EXPR_TERM_WORDS;
	for (; term < end; term += EXPR_TERM_WORDS)
		if (!expr_lin_term(term, lane_reg(w, (uint64_t)term[EXPR_TERM_SLOT], lane), bound, &acc))
			return false;
	*v = (int64_t)acc;
	return true;
}

/*
 * One lane's value of a side of a condition form (expr.h) at p into *v:
 * the word after it, or NULL where a slot lies outside bound.
 */
static inline const int64_t *side_lane(const struct warp *w, int lane, const int64_t *p, uint64_t bound, int64_t *v)
{
	uint64_t acc = (uint64_t)p[1];
	const int64_t *term = p + 2, *end = term + p[0] * EXPR_TERM_WORDS;
	for (; term < end; term += EXPR_TERM_WORDS)
		if (!expr_lin_term(term, lane_reg(w, (uint64_t)term[EXPR_TERM_SLOT], lane), bound, &acc))
			return NULL;
	*v = (int64_t)acc;
	return end;
}

/*
 * One lane's value of e from its condition form (expr.h), as the program
 * would compute it; false where a slot lies outside the form's bound.
 */
static inline bool cond_lane(const struct sim *s, const struct warp *w, int lane, const struct expr *e, int64_t *v)
{
	const int64_t *t = s->k->pool.words + e->cond_at, *p = t + EXPR_COND_HEAD;
	uint64_t bound = (uint64_t)t[EXPR_COND_BOUND];
	int64_t holds[2] = {0, 0};
	for (int i = 0; i < t[EXPR_COND_CMPS]; i++) {
		enum opc op = (enum opc)*p++;
		int64_t a, b;
		if (!(p = side_lane(w, lane, p, bound, &a)) || !(p = side_lane(w, lane, p, bound, &b)))
			return false;
		expr_apply(op, a, b, &holds[i]); /* a comparison: no fault */
	}
	if (t[EXPR_COND_CMPS] == 1)
		*v = holds[0];
	else
		*v = t[EXPR_COND_JOIN] == OPC_AND ? holds[0] && holds[1] : holds[0] || holds[1];
	return true;
}

/*
 * One lane's value of e.  A simple shape (a loop bound, an increment: most
 * warp-uniform expressions) applies its operator here, a linear one (an
 * index) adds up its terms, a condition compares its sides' sums; anything
 * else runs expr_eval_code on the slots it reads, gathered in s->lane_regs.
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
	case EXPR_SHAPE_LINEAR:
		if (linear_lane(s, w, lane, e, &v))
			return v;
		break;
	case EXPR_SHAPE_COND:
		if (cond_lane(s, w, lane, e, &v))
			return v;
		break;
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

int64_t simt_peek(struct sim *s, struct warp *w, int lane, const struct expr *e)
{
	enum expr_fault f = EXPR_OK;
	int64_t v = e->is_const ? e->value : eval_lane(s, w, lane, e, &f);
	return f ? 0 : v;
}

/*
 * The slots among check (materialized, below 63) whose lanes of mask hold
 * one value: a few compares per slot, stopping at the first lane that
 * differs, against a program run per lane.  A slot whose lanes of mask
 * were last written one value together (s->agree: a split group's let of
 * a warp-uniform expression, such as a producer's stage) needs none; the
 * compares were 1.9% of specialized.
 */
static inline uint64_t agreeing_slots(const struct sim *s, const struct warp *w, uint64_t check, uint32_t mask)
{
	uint64_t agree = 0;
	int first = __builtin_ctz(mask);
	const uint32_t *known = simt_agree(s, w);
	for (uint64_t b = check; b; b &= b - 1) {
		unsigned slot = (unsigned)__builtin_ctzll(b);
		if ((known[slot] & mask) == mask) {
			agree |= b & -b;
			continue;
		}
		const int64_t *r = simt_reg(w, slot, 0);
		int64_t v = r[first];
		uint32_t m = mask & (mask - 1);
		while (m && r[__builtin_ctz(m)] == v)
			m &= m - 1;
		if (!m)
			agree |= b & -b;
	}
	return agree;
}

/* eval_each's answer where the lanes of mask share one value, which went to *one instead of out (no fault). */
#define EACH_ONE (-3)

/*
 * e, whose every slot holds one value in the lanes of mask, run once: each
 * lane would compute, and fault, as its first.  Without a fault the value
 * goes to *one where the caller takes it so (EACH_ONE), else into out.
 */
static int eval_once(struct sim *s, struct warp *w, const struct expr *e, uint32_t mask, int64_t out[32],
		     enum expr_fault *fault, int64_t *one)
{
	int first = __builtin_ctz(mask);
	enum expr_fault f = EXPR_OK;
	int64_t v = eval_lane(s, w, first, e, &f);
	if (one && !f) {
		*one = v;
		return EACH_ONE;
	}
	for (uint32_t m = mask; m; m &= m - 1)
		out[__builtin_ctz(m)] = v;
	if (!f)
		return -1;
	*fault = f;
	return first;
}

/* simt_eval_each; with one, a value the lanes of mask share may come back in *one instead (EACH_ONE). */
static int eval_each(struct sim *s, struct warp *w, const struct expr *e, uint32_t mask, int64_t out[32],
		     enum expr_fault *fault, int64_t *one)
{
	if (!(mask & (mask - 1)))
		/* One lane (a group that divergence split off): the warp-wide pass would pay its setup for it alone. */
		return eval_once(s, w, e, mask, out, fault, one);
	simt_materialize(w, e->slots & ~(1ull << 63));
	if (e->shape == EXPR_SHAPE_SLOT) {
		/* a variable as it is (a branch's flag, an op's default element tid): its row, nothing to compute */
		const int64_t *r = simt_reg(w, e->shape_slot, 0);
		int lo = __builtin_ctz(mask), hi = 31 - __builtin_clz(mask);
		if (mask == 0xffffffffu)
			memcpy(out, r, 32 * sizeof *out);
		else
			memcpy(out + lo, r + lo, (size_t)(hi - lo + 1) * sizeof *out);
		return -1;
	}
	/* the slots whose live lanes agree (bit 63, every slot from 63 on, is never set: expr_eval_lanes ignores it) */
	uint64_t uniform = ~w->divergent & ~s->token_slots;
	if (mask != w->live && __builtin_clz(mask) + __builtin_ctz(mask) <= 24) {
		/*
		 * A group split off the warp: what it set apart from the other lanes (a producer's batch) holds
		 * one value in its lanes where the warp's tracking cannot vouch for it.  tid and lane never do.
		 * Where its lanes span fewer than 8, the lane loops below cost less than the compares.
		 */
		uint64_t varying = 1ull << SLOT_TID | 1ull << SLOT_LANE | 1ull << 63;
		uniform |= agreeing_slots(s, w, e->slots & ~uniform & ~varying, mask);
		if (!(e->slots & ~uniform) && !(e->slots >> 63))
			return eval_once(s, w, e, mask, out, fault, one);
	}
	if (e->shape == EXPR_SHAPE_SLOT_CONST || e->shape == EXPR_SHAPE_SLOT_SLOT) {
		/* j < group, j + 1: the operator over the two rows of registers, no program to run */
		const int64_t *b = e->shape == EXPR_SHAPE_SLOT_SLOT ? simt_reg(w, (unsigned)e->value, 0) : NULL;
		return expr_apply_lanes((enum opc)e->shape_op, simt_reg(w, e->shape_slot, 0), b, e->value, mask, out,
					fault);
	}
	int first = expr_eval_lanes(&s->k->pool, e, w->regs, 1, 32, uniform, mask, out, fault);
	if (first != EXPR_LANES_BY_THREAD)
		return first;
	/* a group whose lanes agree on every slot e reads, though the warp's tracking cannot vouch for them */
	if (!(e->slots >> 63) && agreeing_slots(s, w, e->slots, mask) == e->slots)
		return eval_once(s, w, e, mask, out, fault, one);
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

int simt_eval_each(struct sim *s, struct warp *w, const struct expr *e, uint32_t mask, int64_t out[32],
		   enum expr_fault *fault)
{
	return eval_each(s, w, e, mask, out, fault, NULL);
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
	/* simt_eval_lanes' per-lane case, which is what is left: its uniform test was just made */
	enum expr_fault f = EXPR_OK;
	int lane = mask ? eval_each(s, w, e, mask, out, &f, NULL) : -1;
	if (lane >= 0)
		simt_fault(s, w, lane, f);
	return false;
}

bool simt_eval_rise(struct sim *s, struct warp *w, const struct expr *e, int64_t ends[2], int64_t *step)
{
	/* where simt_eval_some would take e as one value, or a group split off the warp, it is not a rise */
	if (!e->lane_affine || simt_uniform(w, e) || w->live != 0xffffffffu)
		return false;
	simt_materialize(w, e->slots & ~(1ull << 63));
	return expr_eval_rise(&s->k->pool, e, w->regs, 1, 32, ~w->divergent & ~s->token_slots, ends, step);
}

bool simt_eval_shared(struct sim *s, struct warp *w, const struct expr *e, int lane, int64_t *v)
{
	if (e->slots & (w->divergent | s->token_slots | 1ull << 63))
		return false;
	enum expr_fault f = EXPR_OK;
	*v = eval_lane(s, w, lane, e, &f);
	return !f;
}

/* u into slot's lanes of mask: the slot is uniform again only when they are every live lane. */
static void assign_one(const struct sim *s, struct warp *w, uint16_t slot, int64_t u, uint32_t mask)
{
	simt_materialize(w, slot < 63 ? 1ull << slot : 0);
	simt_agreeing(s, w, slot, mask);
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
}

/* v's lanes of mask into slot: simt_assign_values, inline in simt_assign. */
static inline void assign_values(const struct sim *s, struct warp *w, uint16_t slot, uint32_t mask, const int64_t v[32])
{
	if (!mask)
		return;
	simt_materialize(w, slot < 63 ? 1ull << slot : 0); /* the lanes outside mask keep their value */
	simt_disagree(s, w, slot);
	int lo = __builtin_ctz(mask), hi = 31 - __builtin_clz(mask);
	int64_t first = v[lo], *r = simt_reg(w, slot, 0);
	uint64_t differ = 0;
	if (simt_lanes_solid(mask)) {
		/* a straight loop the compiler widens: the mask walk cost 12 host instructions a lane (2.3% of the cp.async GEMM) */
		for (int lane = lo; lane <= hi; lane++) {
			r[lane] = v[lane];
			differ |= (uint64_t)v[lane] ^ (uint64_t)first;
		}
	} else {
		for (uint32_t m = mask; m; m &= m - 1) {
			int lane = __builtin_ctz(m);
			r[lane] = v[lane];
			differ |= (uint64_t)v[lane] ^ (uint64_t)first;
		}
	}
	if (slot >= 63)
		return;
	/* uniform again only when every live lane got the same value */
	if (!differ && mask == w->live)
		w->divergent &= ~(1ull << slot);
	else
		w->divergent |= 1ull << slot;
}

void simt_assign(struct sim *s, struct warp *w, uint16_t slot, const struct expr *e, uint32_t mask)
{
	if (simt_uniform(w, e)) {
		/* One value for every lane: no per-lane evaluation, nothing to compare. */
		int64_t u = simt_eval(s, w, __builtin_ctz(mask), e);
		if (slot < 63 && mask == w->live) {
			/* Every live lane gets it: keep the one value, write the lanes only if one is read. */
			w->uval[slot] = u;
			w->stale |= 1ull << slot; /* every lane reads as the one value: whatever s->agree says of it holds */
			w->divergent &= ~(1ull << slot);
			return;
		}
		assign_one(s, w, slot, u, mask);
		return;
	}
	int64_t v[32], u;
	enum expr_fault f = EXPR_OK;
	int bad = eval_each(s, w, e, mask, v, &f, &u);
	if (bad == EACH_ONE) {
		/* the group's lanes agree on what e reads (or it is one lane): as the lanes below, with nothing to compare */
		assign_one(s, w, slot, u, mask);
		return;
	}
	if (bad >= 0)
		simt_fault(s, w, bad, f);
	assign_values(s, w, slot, mask, v);
}

static bool independent(const struct sim *s) { return s->m->reconverge == RECONVERGE_INDEPENDENT; }
static bool stack_mode(const struct sim *s) { return s->m->reconverge == RECONVERGE_SIMT_STACK; }
static bool paths_mode(const struct sim *s) { return s->m->reconverge == RECONVERGE_CONVERGENCE_BARRIER; }

/* Puts a fresh group into slot i; the slot's ticket goes on counting, so a timer set for its last occupant stays stale. */
static void put_entry(struct warp *w, int i, int32_t pc, int32_t reconv, int parent, uint32_t mask)
{
	uint32_t ticket = w->stack[i].ticket;
	w->stack[i] = (struct simt_entry){.pc = pc,
					  .reconv = reconv,
					  .parent = (int8_t)parent,
					  .mask = mask,
					  .wait_start = NEVER,
					  .next_waiter = NONE,
					  .blocked_obj = -1,
					  .poll = -1,
					  .ticket = ticket};
	simt_mark(w, i);
}

/* A group split off another goes on fetching and looping where that one was (its branch redirect, its loop trip). */
static void inherit(struct simt_entry *to, uint64_t redirect, uint64_t loop_pred)
{
	to->redirect = redirect;
	to->loop_pred = loop_pred;
}

/* convergence_barrier: the lanes of the paths still out of barrier entry p (its children's masks). */
static uint32_t out_lanes(const struct warp *w, int p)
{
	uint32_t lanes = 0;
	for (int i = 0; i < w->depth; i++)
		if (w->stack[i].mask && w->stack[i].parent == p)
			lanes |= w->stack[i].mask;
	return lanes;
}

uint32_t simt_arrived(const struct warp *w, int entry) { return w->stack[entry].mask & ~out_lanes(w, entry); }

/*
 * Whether a try_wait of entry e polls as in a diverged warp: with
 * independent thread scheduling, while some of the warp's live lanes are
 * not in e.  The H100 suspends a converged warp's try_wait until the phase
 * completes, but a diverged path's retry loop (YIELD, TRYWAIT) takes
 * diverged_poll_cycles a poll, reports the phase as it was when the poll
 * began, is not woken by the completion, and polls again only when the
 * warp's other paths let it issue (traces/h100/trywait_paths.csv;
 * mbar_await).
 */
bool simt_polls_apart(const struct sim *s, const struct warp *w, const struct simt_entry *e)
{
	return !stack_mode(s) && e->mask != w->live;
}

/* What a warp none of whose groups can issue is charged to: its newest blocked path's cause. */
static enum stall blocked_cause(const struct warp *w)
{
	int best = -1;
	for (int i = 0; i < w->depth; i++) {
		const struct simt_entry *e = &w->stack[i];
		if (e->mask && e->blocked && e->blocked != WAIT_CONVERGE && (best < 0 || e->order > w->stack[best].order))
			best = i;
	}
	return best < 0 ? STALL_BARRIER : (enum stall)w->stack[best].cause;
}

/*
 * convergence_barrier: a path at its barrier's pc (and at the start of
 * the op there) joins the barrier; a barrier with no path out goes on as
 * one group; slots without lanes are freed.  Until nothing changes: a
 * released barrier may itself be a path of an outer one.  When no group
 * of a live warp can issue any more, the warp waits for its blocked ones.
 */
static void later(struct simt_entry *e, uint64_t at)
{
	if (e->redirect < at)
		e->redirect = at;
}

/*
 * diverge.csv: a warp whose paths join again pays reconverge_latency before
 * it issues on (a divergent if), and a path that ends while another still
 * has to run hands over after path_switch_latency (an if/else) — but not a
 * side that jumps straight to the join when the warp splits (at_split).
 */
static void converge_at(struct sim *s, struct warp *w, bool at_split)
{
	bool changed;
	do {
		changed = false;
		for (int i = 0; i < w->depth; i++) {
			struct simt_entry *e = &w->stack[i];
			if (!e->mask) {
				if (e->parent >= 0 || e->blocked == WAIT_CONVERGE) {
					e->parent = -1;
					e->blocked = WAIT_NONE;
					simt_mark(w, i);
					changed = true;
				}
			} else if (e->blocked == WAIT_CONVERGE) {
				if (!out_lanes(w, i)) { /* BSYNC: every live lane of the barrier is here */
					e->blocked = WAIT_NONE;
					e->wait_start = NEVER;
					later(e, s->now + (uint64_t)s->m->reconverge_latency);
					simt_mark(w, i);
					changed = true;
				}
			} else if (!e->blocked && e->parent >= 0 && e->li == 0 && e->op_step == 0 &&
				   e->pc == w->stack[e->parent].pc) {
				/* its lanes are the barrier entry's already: the path ends here */
				int barrier = e->parent;
				e->mask = 0;
				e->parent = -1;
				e->poll = -1;
				simt_mark(w, i);
				changed = true;
				if (!at_split)
					for (int j = 0; j < w->depth; j++)
						if (w->stack[j].mask && w->stack[j].parent == barrier)
							later(&w->stack[j], s->now + (uint64_t)s->m->path_switch_latency);
			}
		}
	} while (changed);
	while (w->depth > 1 && !w->stack[w->depth - 1].mask && !w->stack[w->depth - 1].blocked)
		simt_mark(w, --w->depth);
	if (w->cur >= w->depth)
		w->cur = w->depth - 1;
	if (!w->runnable && w->live && !w->done) {
		sched_charge(s, w, s->now);
		warp_set_ready(s, w, NEVER);
		w->cause = blocked_cause(w);
	}
}

static void converge(struct sim *s, struct warp *w) { converge_at(s, w, false); }

/*
 * After the current group moved.  simt_stack: pops entries that reached
 * their reconvergence point or have no threads left.  convergence_barrier:
 * the group joins its barrier if it reached it.  independent: drops empty
 * slots at the end.
 */
static void settle(struct sim *s, struct warp *w)
{
	if (paths_mode(s)) {
		const struct simt_entry *e = simt_cur(w);
		if (w->depth > 1 && (!e->mask || (e->parent >= 0 && e->pc == w->stack[e->parent].pc)))
			converge(s, w);
		return;
	}
	if (independent(s)) {
		while (w->depth > 0 && w->stack[w->depth - 1].mask == 0)
			simt_mark(w, --w->depth);
		return;
	}
	int32_t joined = -1; /* the reconvergence point of the last path that ended here */
	bool ran = false;	     /* a path with lanes ended: the warp had diverged */
	while (w->depth > 0) {
		struct simt_entry *top = &w->stack[w->depth - 1];
		if (top->mask != 0 && top->pc != top->reconv)
			break;
		if (top->mask && top->pc == top->reconv) {
			joined = top->reconv;
			ran = true;
		}
		simt_mark(w, --w->depth);
	}
	w->cur = w->depth - 1;
	/* as converge_at: the other path starts after a hand-over, the rejoined warp after reconverging */
	if (ran && w->depth > 0) {
		struct simt_entry *top = &w->stack[w->depth - 1];
		if (top->reconv == joined)
			later(top, s->now + (uint64_t)s->m->path_switch_latency);
		else if (top->pc == joined)
			later(top, s->now + (uint64_t)s->m->reconverge_latency);
	}
}

bool simt_runnable(const struct sim *s, const struct warp *w)
{
	if (stack_mode(s))
		return w->depth > 0 && !w->stack[w->depth - 1].blocked;
	return w->runnable != 0;
}

/*
 * The H100 runs a diverged warp's path until it waits or its poll fails,
 * and only then another (tests/hw/specialized_trace.cu: a consumer path
 * computes two batches on while its producer path's acquire could have
 * gone on, and hands over only when its own wait fails).  Then the newest
 * runnable path issues.
 */
bool simt_pick_path(struct warp *w)
{
	uint64_t r = w->runnable;
	if (!r)
		return false;
	if (w->cur >= 0 && w->cur < w->depth && (r >> w->cur & 1) && !w->yielded)
		return true;
	w->yielded = false;
	int best = __builtin_ctzll(r);
	for (r &= r - 1; r; r &= r - 1) {
		int i = __builtin_ctzll(r);
		if (w->stack[i].order > w->stack[best].order)
			best = i;
	}
	w->cur = best;
	return true;
}

void simt_yield(const struct sim *s, struct warp *w)
{
	if (paths_mode(s) && w->depth > 1) {
		simt_cur(w)->order = --w->order_low;
		w->yielded = true;
	}
}

static int free_slot(struct warp *w)
{
	for (int i = 0; i < w->depth; i++)
		if (w->stack[i].mask == 0 && !w->stack[i].blocked)
			return i;
	return w->depth < SIMT_MAX_DEPTH ? w->depth++ : -1;
}

/*
 * A path whose wait spins (nvcc's retry loop around a failed try_wait
 * YIELDs) no longer holds back the lanes waiting at the convergence
 * barriers it is in: on the H100 they go on past the join without it, a
 * consumer path into the next trip of its loop while the producer path
 * still waits in producer_acquire (tests/hw/specialized_trace.cu,
 * traces/h100/specialized_trace.csv.gz), and run on until a wait of their
 * own or the closing __syncwarp (trywait_rejoin.csv).  The spinning path
 * stays in those barriers: lanes that reach one of them later wait there
 * until its next failed poll, or until it arrives.
 */
static bool release_joins(struct sim *s, struct warp *w, int i, uint64_t now)
{
	bool released = false;
	for (int b = w->stack[i].parent; b >= 0; b = w->stack[b].parent) {
		uint32_t arrived = simt_arrived(w, b);
		if (!arrived)
			continue;
		int above = w->stack[b].parent;
		int r = free_slot(w);
		if (r < 0) {
			sim_fail(s, DIAG_LIMIT, w, "more than %d thread groups in one warp", SIMT_MAX_DEPTH);
			return released;
		}
		put_entry(w, r, w->stack[b].pc, -1, above, arrived);
		inherit(&w->stack[r], now + (uint64_t)s->m->path_switch_latency, w->stack[b].loop_pred);
		w->stack[r].order = ++w->order_next;
		w->stack[b].mask &= ~arrived;
		simt_mark(w, b);
		released = true;
	}
	if (!released)
		return false;
	converge(s, w);
	if (!w->stack[i].blocked)
		return true; /* a failed poll: the warp issues on, its released lanes among its runnable paths */
	if (w->runnable && !w->done) {
		w->next_known = false;
		sched_charge(s, w, now);
		if (warp_ready(w) > now)
			warp_set_ready(s, w, now);
		sched_kick(s, w->sp, warp_ready(w));
	}
	return true;
}

bool simt_detach(struct sim *s, struct warp *w, uint64_t now)
{
	return paths_mode(s) && release_joins(s, w, w->cur, now);
}

uint32_t simt_held_back(const struct warp *w)
{
	if (w->depth < 2)
		return 0;
	const struct simt_entry *top = &w->stack[w->depth - 1];
	if (!top->blocked && top->poll < 0)
		return 0;
	uint32_t lanes = 0;
	for (int i = 0; i < w->depth - 1; i++) {
		const struct simt_entry *e = &w->stack[i];
		/* an entry the ones above it rejoin waits for them; any other is a path waiting for its turn */
		bool join = w->stack[i + 1].reconv == e->pc;
		if (e->mask && !join && e->pc != e->reconv)
			lanes |= e->mask;
	}
	return lanes & ~top->mask;
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

/* Ops a spin-wait loop is made of: a group that runs only these after a failed poll is still spinning. */
static bool keeps_polling(enum op op)
{
	switch (op) {
	case OP_LET:
	case OP_SET:
	case OP_BRZ:
	case OP_JMP:
	case OP_NANOSLEEP:
	case OP_BARRIER_TRY_WAIT:
	case OP_BARRIER_TEST_WAIT:
	case OP_CONSUMER_WAIT_FOR: return true;
	default: return false;
	}
}

void simt_advance(struct sim *s, struct warp *w)
{
	struct simt_entry *e = simt_cur(w);
	if (e->poll >= 0 && !keeps_polling(s->k->code[e->pc].op))
		e->poll = -1;
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

/*
 * convergence_barrier: the group at the current slot diverges at a branch
 * rejoining at reconv.  Where its barrier already rejoins there (a loop's
 * exit test, an if that ends the block it is in) the path splits under the
 * same barrier; otherwise the group becomes a new barrier's entry with two
 * paths.  The fall-through side is the newer, as the stack pushes it last.
 */
/*
 * groups.csv: a branch that splits a warp costs each of its paths
 * split_latency before it issues on (a loop whose trips lose one group of
 * lanes each, split_loop, is that much slower a trip than the same trips
 * with no lane leaving, even_loop).  A loop's test splits at the compiled
 * loop's bottom branch, whose back edge the staying lanes then take: their
 * trip ends that much later (exec.c, OP_JMP, waits for loop_pred).
 */
static void split_cost(struct sim *s, const struct insn *in, int32_t pc, struct simt_entry *jumped, struct simt_entry *fell)
{
	uint64_t cost = (uint64_t)s->m->split_latency;
	const struct insn *last = in->target > 0 ? &s->k->code[in->target - 1] : NULL;
	if (last && last->op == OP_JMP && last->target <= pc) {
		fell->loop_pred = (fell->loop_pred > s->now ? fell->loop_pred : s->now) + cost;
		return;
	}
	later(jumped, s->now + cost);
	later(fell, s->now + cost);
}

static void split_path(struct sim *s, struct warp *w, const struct insn *in, uint32_t taken)
{
	int cur = w->cur;
	struct simt_entry *g = &w->stack[cur];
	uint32_t fall = g->mask & ~taken;
	int32_t pc = g->pc;
	uint64_t red = g->redirect, lp = g->loop_pred;
	if (g->parent >= 0 && w->stack[g->parent].pc == in->reconv) {
		int t = free_slot(w);
		if (t < 0) {
			sim_fail(s, DIAG_LIMIT, w, "more than %d thread groups in one warp", SIMT_MAX_DEPTH);
			return;
		}
		g = &w->stack[cur];
		put_entry(w, t, in->target, -1, g->parent, taken);
		inherit(&w->stack[t], red, lp);
		w->stack[t].order = ++w->order_next;
		g->mask = fall;
		g->pc = pc + 1;
		g->order = ++w->order_next;
		g->poll = -1;
		split_cost(s, in, pc, &w->stack[t], g);
		simt_mark(w, cur);
		return;
	}
	int t = free_slot(w);
	if (t >= 0)
		w->stack[t].mask = taken; /* taken: the next free_slot passes it over */
	int f = t >= 0 ? free_slot(w) : -1;
	if (f < 0) {
		sim_fail(s, DIAG_LIMIT, w, "more than %d thread groups in one warp", SIMT_MAX_DEPTH);
		return;
	}
	put_entry(w, t, in->target, -1, cur, taken);
	inherit(&w->stack[t], red, lp);
	w->stack[t].order = ++w->order_next;
	put_entry(w, f, pc + 1, -1, cur, fall);
	inherit(&w->stack[f], red, lp);
	w->stack[f].order = ++w->order_next;
	g = &w->stack[cur];
	g->pc = in->reconv;
	g->reconv = pc; /* unused by this model otherwise: the branch, for a deadlock report */
	g->blocked = WAIT_CONVERGE;
	g->poll = -1;
	split_cost(s, in, pc, &w->stack[t], &w->stack[f]);
	simt_mark(w, cur);
	w->cur = f;
}

void simt_branch(struct sim *s, struct warp *w, const struct insn *in)
{
	struct simt_entry *top = simt_cur(w);
	uint32_t taken = 0; /* threads whose condition is false: they jump */
	if (top->mask && simt_uniform(w, &in->e[0])) {
		taken = simt_eval(s, w, __builtin_ctz(top->mask), &in->e[0]) == 0 ? top->mask : 0;
	} else if (top->mask) {
		int64_t cond[32], one;
		enum expr_fault f = EXPR_OK;
		int bad = eval_each(s, w, &in->e[0], top->mask, cond, &f, &one);
		if (bad == EACH_ONE) {
			/* the group's lanes agree on what the condition reads (or it is one lane): they go one way */
			taken = one == 0 ? top->mask : 0;
		} else {
			if (bad >= 0)
				simt_fault(s, w, bad, f);
			/* a full warp (the lanes of a per-lane loop test) without the mask walk and a branch per lane */
			for (int lane = 0; top->mask == 0xffffffffu && lane < 32; lane++)
				taken |= (uint32_t)(cond[lane] == 0) << lane;
			for (uint32_t m = top->mask == 0xffffffffu ? 0 : top->mask; m; m &= m - 1) {
				int lane = __builtin_ctz(m);
				if (cond[lane] == 0)
					taken |= 1u << lane;
			}
		}
	}
	int32_t pc = top->pc;
	top->op_step = 0;
	top->li = 0;
	if (taken == 0) {
		top->pc = pc + 1;
	} else if (taken == top->mask) {
		top->pc = in->target;
	} else if (paths_mode(s)) {
		split_path(s, w, in, taken);
		converge_at(s, w, true); /* a side that jumps straight to the reconvergence point joins at once */
		return;
	} else if (independent(s)) {
		int slot = free_slot(w);
		if (slot < 0) {
			sim_fail(s, DIAG_LIMIT, w, "more than %d thread groups in one warp", SIMT_MAX_DEPTH);
			return;
		}
		top = simt_cur(w);
		top->mask &= ~taken;
		top->pc = pc + 1;
		put_entry(w, slot, in->target, -1, -1, taken);
		inherit(&w->stack[slot], top->redirect, top->loop_pred);
		split_cost(s, in, pc, &w->stack[slot], top);
	} else {
		if (w->depth + 2 > SIMT_MAX_DEPTH) {
			sim_fail(s, DIAG_LIMIT, w, "divergence nests deeper than %d levels", SIMT_MAX_DEPTH);
			return;
		}
		uint32_t fall = top->mask & ~taken;
		uint64_t red = top->redirect, lp = top->loop_pred;
		if (top->reconv != in->reconv)
			top->pc = in->reconv;
		else
			w->depth--; /* already the entry that waits at this reconv: reuse it, do not stack a copy */
		w->depth += 2;
		put_entry(w, w->depth - 2, in->target, in->reconv, -1, taken);
		inherit(&w->stack[w->depth - 2], red, lp);
		put_entry(w, w->depth - 1, pc + 1, in->reconv, -1, fall);
		inherit(&w->stack[w->depth - 1], red, lp);
		split_cost(s, in, pc, &w->stack[w->depth - 2], &w->stack[w->depth - 1]);
	}
	settle(s, w);
}

/*
 * Groups at the same point (same pc and place in their op, the same
 * convergence barrier), none of them waiting, become one: the first slot
 * keeps the lanes and the newest order.
 */
static void merge_groups(struct sim *s, struct warp *w)
{
	w->next_known = false;
	for (int i = 0; i < w->depth; i++) {
		struct simt_entry *a = &w->stack[i];
		if (!a->mask || a->blocked)
			continue;
		for (int j = i + 1; j < w->depth; j++) {
			struct simt_entry *b = &w->stack[j];
			if (b->mask && !b->blocked && b->pc == a->pc && b->op_step == a->op_step && b->li == a->li &&
			    b->parent == a->parent) {
				a->mask |= b->mask;
				a->order = b->order > a->order ? b->order : a->order;
				a->polls = b->polls < a->polls ? b->polls : a->polls;
				a->poll = a->poll == b->poll ? a->poll : -1;
				b->mask = 0;
				simt_mark(w, j);
				if (w->cur == j)
					w->cur = i;
			}
		}
	}
	if (paths_mode(s))
		converge(s, w);
	else
		settle(s, w);
}

void simt_merge(struct sim *s, struct warp *w)
{
	if (independent(s))
		merge_groups(s, w);
}

void simt_release(struct sim *s, struct warp *w, int entry, uint64_t at)
{
	struct simt_entry *e = &w->stack[entry];
	e->pc++;
	e->op_step = 0;
	e->li = 0;
	e->wait_start = NEVER;
	e->poll = -1; /* it passed a barrier: not a spin */
	sched_wake(s, w, entry, at);
	if (paths_mode(s) && e->parent >= 0 && e->pc == w->stack[e->parent].pc)
		converge(s, w);
}

/* Once every live lane of the warp waits at a __syncwarp, all go on (next cycle) and groups at one point merge. */
static void release_syncwarp(struct sim *s, struct warp *w, uint64_t now)
{
	/*
	 * Independent: a lane is in one group only, so one group with lanes
	 * that does not wait here means not every live lane does.  The walk
	 * goes from the newest slot down, where the groups yet to arrive
	 * usually are: with 32 groups arriving one by one the walk over every
	 * entry at every arrival was 1.9% of overwait D=32.  In the other
	 * models a convergence barrier holds its paths' lanes too.
	 */
	if (independent(s))
		for (int i = w->depth - 1; i >= 0; i--)
			if (w->stack[i].mask && w->stack[i].blocked != WAIT_SYNCWARP)
				return;
	uint32_t at = 0;
	for (int i = 0; i < w->depth; i++)
		if (w->stack[i].mask && w->stack[i].blocked == WAIT_SYNCWARP)
			at |= w->stack[i].mask;
	if (!at || at != w->live)
		return;
	flow_syncwarp(s, w, at, now);
	for (int i = 0; i < w->depth; i++)
		if (w->stack[i].mask && w->stack[i].blocked == WAIT_SYNCWARP)
			simt_release(s, w, i, now + 1);
	merge_groups(s, w);
}

/*
 * __syncwarp.  simt_stack: the warp is already converged at every
 * structured point, so it only costs its issue slot; so under
 * convergence_barrier when the whole warp reaches it together.  Otherwise
 * (independent, or paths of a diverged warp) the group waits until every
 * live lane of the warp is at a __syncwarp — lanes held at a convergence
 * barrier are not, and a __syncwarp that part of the warp never reaches
 * hangs, as the CUDA guide says it may — then all go on, and groups at the
 * same one become one.
 */
void simt_syncwarp(struct sim *s, struct warp *w, uint64_t now)
{
	if (stack_mode(s) || (paths_mode(s) && simt_mask(w) == w->live)) {
		flow_syncwarp(s, w, simt_mask(w), now);
		simt_advance(s, w);
		return;
	}
	sched_block(s, w, STALL_SYNCWARP, WAIT_SYNCWARP, now);
	release_syncwarp(s, w, now);
}

void simt_assign_values(struct sim *s, struct warp *w, uint16_t slot, uint32_t mask, const int64_t v[32])
{
	assign_values(s, w, slot, mask, v);
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
	if (paths_mode(s))
		converge(s, w); /* a barrier whose paths all ended or exited goes on */
	else
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
		if (!stack_mode(s))
			release_syncwarp(s, w, now); /* the exited lanes no longer hold a __syncwarp back */
	}
	/* Exited threads no longer count at __syncthreads or grid.sync. */
	sync_check_release(s, b, now);
	sync_grid_check_release(s, now);
}

void simt_lanes_text(uint32_t mask, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	if (!mask) {
		snprintf(out, n, "none");
		return;
	}
	for (int l = 0; l < 32 && len < n;) {
		if (!(mask >> l & 1)) {
			l++;
			continue;
		}
		int e = l;
		while (e + 1 < 32 && (mask >> (e + 1) & 1))
			e++;
		int k = e > l ? snprintf(out + len, n - len, "%s%d-%d", len ? "," : "", l, e)
			      : snprintf(out + len, n - len, "%s%d", len ? "," : "", l);
		len += k > 0 ? (size_t)k : 0;
		l = e + 1;
	}
}

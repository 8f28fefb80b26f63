/*
 * lower: each op of a compiled kernel becomes the instruction sequence the
 * timing core issues.
 *
 * An op's sequence is its operands' arithmetic followed by its form's SASS
 * (isa/lower_forms.c).  The arithmetic is lowered here from the compiled
 * expressions, as nvcc would emit it for the variables' declared width:
 * a 64-bit (size_t) add is IADD3 then IADD3.X on its carry, a 64-bit
 * compare ISETP then ISETP.EX, a multiply IMADs, a division by a constant
 * other than a power of two a multiply-high sequence, by a variable a
 * subroutine.  What reads only constants and builtins (tid, block, ...) is
 * loop-invariant: the compiler computes it once, outside the loops, so it
 * costs nothing per execution here.  The form's instructions that read the
 * op's inputs (LI_EXTERN) wait for the arithmetic's results.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "lower.h"
#include "ops.h"

#define SEQ_MAX 32 /* a form's deps are a 32-bit mask */

/* A sequence being built. */
struct seq {
	struct linst code[SEQ_MAX];
	int n;
	bool full; /* instructions were left out: the expression was longer than SEQ_MAX */
};

/* An operand on the lowering stack: the instruction that produced it, or none (-1: a register ready before the op, or an immediate). */
struct val {
	int at;
	bool variant; /* depends on a variable: it must be computed here */
	bool input;   /* reads a variable directly (LI_EXTERN) */
};

static uint32_t dep_bit(int at) { return at >= 0 ? 1u << at : 0; }

static int emit(struct seq *q, enum iclass cls, uint32_t deps, bool input)
{
	if (q->n >= SEQ_MAX) {
		q->full = true;
		return q->n - 1;
	}
	q->code[q->n] = (struct linst){.cls = (uint8_t)cls, .flags = input ? LI_EXTERN : 0, .deps = deps};
	return q->n++;
}

/* A chain of n dependent instructions of one class after deps; returns the last. */
static int chain(struct seq *q, enum iclass cls, int n, uint32_t deps, bool input)
{
	int at = -1;
	for (int i = 0; i < n; i++) {
		at = emit(q, cls, i == 0 ? deps : dep_bit(at), i == 0 && input);
		deps = 0;
	}
	return at;
}

static bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/*
 * One operator on operands a and b (b.at may be -1 for a unary one).
 * wide: 64-bit.  bconst: b is an immediate with value bval.
 */
static int lower_op(struct seq *q, enum opc op, struct val a, struct val b, bool wide, bool bconst, int64_t bval)
{
	uint32_t d = dep_bit(a.at) | dep_bit(b.at);
	bool in = a.input || b.input;
	switch (op) {
	case OPC_ADD:
	case OPC_SUB:
	case OPC_NEG:
		/* IADD3, and for 64 bits IADD3.X on its carry */
		return wide ? chain(q, IC_ALU, 2, d, in) : emit(q, IC_ALU, d, in);
	case OPC_MUL:
		if (bconst && is_pow2(bval))
			return wide ? chain(q, IC_ALU, 2, d, in) : emit(q, IC_IMAD, d, in); /* SHF pair / IMAD.SHL */
		if (!wide)
			return emit(q, IC_IMAD, d, in);
		{ /* IMAD.WIDE.U32 for the low half, IMADs for the cross terms, IADD3 */
			int lo = emit(q, IC_IMAD, d, in);
			int hi = emit(q, IC_IMAD, d, in);
			return emit(q, IC_ALU, dep_bit(lo) | dep_bit(hi), false);
		}
	case OPC_DIV:
	case OPC_MOD:
		if (bconst && is_pow2(bval))
			return wide ? chain(q, IC_ALU, 2, d, in) : emit(q, IC_ALU, d, in); /* shift or mask */
		if (bconst) {
			/* a multiply-high by the reciprocal and a shift; % multiplies back and subtracts */
			int at = chain(q, IC_IMAD, wide ? 4 : 1, d, in);
			at = chain(q, IC_ALU, wide ? 2 : 1, dep_bit(at), false);
			if (op == OPC_MOD) {
				at = chain(q, IC_IMAD, wide ? 2 : 1, dep_bit(at), false);
				at = chain(q, IC_ALU, wide ? 2 : 1, dep_bit(at), false);
			}
			return at;
		}
		{
			/* a variable divisor: the reciprocal's estimate (I2F.RP, MUFU.RCP, F2I) and Newton steps */
			int at = chain(q, IC_CONV, 3, d, in);
			at = chain(q, IC_IMAD, wide ? 10 : 4, dep_bit(at), false);
			return chain(q, IC_ALU, wide ? 6 : 3, dep_bit(at), false);
		}
	case OPC_SHL:
	case OPC_SHR:
	case OPC_AND:
	case OPC_OR:
	case OPC_XOR:
		if (!wide)
			return emit(q, IC_ALU, d, in);
		emit(q, IC_ALU, d, in); /* the two halves are independent */
		return emit(q, IC_ALU, d, in);
	case OPC_LT:
	case OPC_LE:
	case OPC_GT:
	case OPC_GE:
	case OPC_EQ:
	case OPC_NE:
	case OPC_LNOT:
	case OPC_BOOL:
	case OPC_BNOT:
		/* ISETP, and for 64 bits ISETP.EX on its predicate */
		return wide ? chain(q, IC_ALU, 2, d, in) : emit(q, IC_ALU, d, in);
	case OPC_MIN:
	case OPC_MAX:
		/* IMNMX; 64 bits: ISETP, ISETP.EX, two SELs */
		return wide ? chain(q, IC_ALU, 3, d, in) : emit(q, IC_ALU, d, in);
	default: return emit(q, IC_ALU, d, in); /* JZ/JMP of && || ?: become a PLOP3 or SEL */
	}
}

static bool binary(enum opc op)
{
	switch (op) {
	case OPC_PUSH:
	case OPC_LOAD:
	case OPC_NEG:
	case OPC_LNOT:
	case OPC_BNOT:
	case OPC_BOOL:
	case OPC_JZ:
	case OPC_JMP: return false;
	default: return true;
	}
}

/*
 * Appends the arithmetic of e; returns the instruction holding its value
 * (-1: it needs none here, an immediate or a register computed earlier).
 * wide: the statement computes in 64 bits.
 */
static int lower_expr(struct seq *q, const struct kernel *k, const struct expr *e, bool wide)
{
	if (e->is_const || e->len == 0)
		return -1;
	struct val st[64];
	int sp = 0;
	const int64_t *w = k->pool.words + e->at, *end = w + e->len;
	while (w < end) {
		enum opc op = (enum opc)*w++;
		switch (op) {
		case OPC_PUSH:
		case OPC_LOAD: {
			int64_t v = *w++;
			bool var = op == OPC_LOAD && v >= SLOT_BUILTINS &&
				   !(v < 63 && (k->unrolled_slots >> v & 1)); /* an unrolled loop's variable is an immediate */
			if (sp < 64)
				st[sp++] = (struct val){.at = -1, .variant = var, .input = var};
			/* an immediate right operand: remember it for the operator that follows */
			if (op == OPC_PUSH && w < end && binary((enum opc)*w) && sp >= 2) {
				enum opc bop = (enum opc)*w++;
				struct val b = st[--sp], a = st[--sp];
				struct val r = {.at = -1, .variant = a.variant};
				if (a.variant)
					r.at = lower_op(q, bop, a, b, wide, true, v);
				st[sp++] = r;
			}
			continue;
		}
		case OPC_JZ:
		case OPC_JMP:
			w++;
			if (op == OPC_JZ && sp > 0)
				sp--;
			continue;
		case OPC_NEG:
		case OPC_LNOT:
		case OPC_BNOT:
		case OPC_BOOL:
			if (sp > 0 && st[sp - 1].variant) {
				struct val none = {.at = -1};
				st[sp - 1] = (struct val){.at = lower_op(q, op, st[sp - 1], none, wide, false, 0), .variant = true};
			}
			continue;
		default:
			if (sp < 2)
				continue;
			{
				struct val b = st[--sp], a = st[--sp];
				struct val r = {.at = -1, .variant = a.variant || b.variant};
				if (r.variant)
					r.at = lower_op(q, op, a, b, wide, false, 0);
				st[sp++] = r;
			}
		}
	}
	if (sp == 0)
		return -1;
	struct val top = st[sp - 1];
	if (top.variant && top.at < 0) /* a variable as it is: a move */
		return emit(q, IC_ALU, 0, true);
	return top.at;
}

/* Whether e reads a 64-bit variable (or is on a 64-bit statement). */
static bool wide_expr(const struct kernel *k, const struct expr *e) { return (e->slots & k->wide_slots) != 0; }

/*
 * The index arithmetic of ref (the form's own SASS scales it and adds the
 * base: its address instructions read this result as their input).
 */
static int lower_index(struct seq *q, const struct kernel *k, const struct memref *ref)
{
	if (ref->buf < 0 || ref->index.is_const)
		return -1;
	return lower_expr(q, k, &ref->index, wide_expr(k, &ref->index));
}

/* Appends a static form after the prefix; its inputs wait for the prefix's results. */
static void append_form(struct seq *q, const struct lform *f, uint32_t inputs, int8_t *anchor, int8_t *lb, int8_t *le)
{
	int base = q->n;
	for (int i = 0; i < f->n; i++) {
		struct linst li = f->code[i];
		li.deps <<= base;
		if (li.flags & LI_EXTERN)
			li.deps |= inputs;
		if (q->n >= SEQ_MAX) {
			q->full = true;
			break;
		}
		q->code[q->n++] = li;
	}
	*anchor = f->anchor >= 0 && base + f->anchor < q->n ? (int8_t)(base + f->anchor) : -1;
	*lb = f->loop_begin >= 0 && base + f->loop_begin < q->n ? (int8_t)(base + f->loop_begin) : -1;
	*le = f->loop_end >= 0 && base + f->loop_end <= q->n ? (int8_t)(base + f->loop_end) : -1;
	if (*lb < 0 || *le < 0)
		*lb = *le = -1;
}

/*
 * What nvcc makes of a branch.  A loop's test is a branch back to code the
 * warp just ran.  An if whose body holds no warp-level side effect (a
 * commit, arrive, wait, barrier, exit, nested control flow) and is short is
 * if-converted: its ops issue under a predicate and no branch remains
 * (DESIGN.md section 3; diverged_commit.sass).  Any other if is a
 * convergence region, BSSY/BSYNC around a real branch whose paths fetch
 * their targets.
 */
enum branch_kind { BRANCH_LOOP, BRANCH_PREDICATED, BRANCH_REGION };
#define PREDICATED_MAX_OPS 8

static enum branch_kind branch_kind(const struct kernel *k, const struct insn *in)
{
	int pc = (int)(in - k->code), end = in->target;
	if (end > 0 && end <= k->ncode && k->code[end - 1].op == OP_JMP && k->code[end - 1].target <= pc)
		return BRANCH_LOOP;
	if (!in->e[0].per_thread)
		return BRANCH_REGION;
	int ops = 0;
	for (int i = pc + 1; i < end && i < k->ncode; i++, ops++) {
		switch (k->code[i].op) {
		case OP_LET:
		case OP_SET:
		case OP_FMA:
		case OP_COMPUTE:
		case OP_SHARED_LOAD:
		case OP_SHARED_STORE:
		case OP_GLOBAL_LOAD:
		case OP_GLOBAL_STORE:
		case OP_PIPELINE_MEMCPY_ASYNC: continue;
		case OP_JMP:
			if (k->code[i].target > i) /* the jump over an else: its body must qualify too */
				continue;
			return BRANCH_REGION;
		default: return BRANCH_REGION;
		}
	}
	return ops <= PREDICATED_MAX_OPS ? BRANCH_PREDICATED : BRANCH_REGION;
}

/* The static form of an op (LF_COUNT: none, its sequence is generated). */
static enum lform_id form_of(const struct kernel *k, const struct insn *in)
{
	bool block = in->obj >= 0 && k->pipes[in->obj].scope == PIPE_SCOPE_BLOCK;
	switch (in->op) {
	case OP_EXIT: return LF_COUNT;
	case OP_SYNCTHREADS: return LF_SYNCTHREADS;
	case OP_SYNCWARP: return LF_SYNCWARP;
	case OP_GRID_SYNC: return LF_GRID_SYNC;
	case OP_MAKE_PIPELINE: return LF_MAKE_PIPELINE;
	case OP_PRODUCER_ACQUIRE: return block ? LF_ACQUIRE_BLOCK : LF_ACQUIRE_THREAD;
	case OP_PRODUCER_COMMIT: return block ? LF_COMMIT_BLOCK : LF_COMMIT_THREAD;
	case OP_CONSUMER_WAIT:
	case OP_CONSUMER_WAIT_FOR: return block ? LF_WAIT_BLOCK : LF_WAIT_THREAD;
	case OP_CONSUMER_RELEASE: return block ? LF_RELEASE_BLOCK : LF_RELEASE_THREAD;
	case OP_CONSUMER_WAIT_PRIOR:
	case OP_PIPELINE_WAIT_PRIOR: return LF_WAIT_PRIOR;
	case OP_QUIT: return LF_QUIT;
	case OP_PIPELINE_COMMIT: return LF_PRIM_COMMIT;
	case OP_PIPELINE_MEMCPY_ASYNC: return LF_PRIM_COPY;
	case OP_MEMCPY_ASYNC:
		if (in->bar >= 0)
			return in->align >= 16 ? LF_COPY_BULK : LF_COPY_BARRIER;
		return in->group == GROUP_BLOCK ? LF_COPY_GROUP : LF_COPY_THREAD;
	case OP_BARRIER_INIT: return LF_BARRIER_INIT;
	case OP_BARRIER_ARRIVE: return LF_BARRIER_ARRIVE;
	case OP_BARRIER_WAIT: return LF_BARRIER_WAIT;
	case OP_BARRIER_ARRIVE_AND_WAIT: return LF_BARRIER_ARRIVE_WAIT;
	case OP_BARRIER_ARRIVE_AND_DROP: return LF_BARRIER_ARRIVE_DROP;
	case OP_BARRIER_EXPECT_TX:
	case OP_PIPELINE_ARRIVE_ON: return LF_BARRIER_ARRIVE; /* one SYNCS / cp.async.mbarrier.arrive, as an arrive */
	case OP_COMPUTE: return LF_COMPUTE_LOAD;
	case OP_SHFL: return LF_SHFL_STEP;
	case OP_SHARED_LOAD: return LF_SHARED_LOAD;
	case OP_SHARED_STORE: return LF_SHARED_STORE;
	case OP_GLOBAL_LOAD: return LF_GLOBAL_LOAD;
	case OP_GLOBAL_STORE: return LF_GLOBAL_STORE;
	default: return LF_COUNT;
	}
}

/* The sequence of one op, into *out (its code allocated); -1 when out of memory. */
static int lower_insn(const struct kernel *k, const struct insn *in, struct lform *out)
{
	struct seq q = {.n = 0};
	int8_t anchor = -1, lb = -1, le = -1;
	switch (in->unrolled ? OP_JMP : in->op) {
	case OP_JMP:
	case OP_FMA:
		break; /* a back-edge takes no slot; an fma chain is issued FMA by FMA by the core */
	case OP_LET:
	case OP_SET: {
		int at = lower_expr(&q, k, &in->e[0], !in->narrow);
		if (at < 0)
			at = emit(&q, IC_ALU, 0, false); /* MOV of an immediate or an invariant */
		q.code[at].flags |= LI_RESULT;
		anchor = (int8_t)at;
		break;
	}
	case OP_BRZ: {
		int at = lower_expr(&q, k, &in->e[0], !in->narrow);
		enum branch_kind kind = branch_kind(k, in);
		if (kind == BRANCH_PREDICATED) {
			/* the body issues under a predicate: only the condition's compare remains */
			if (at < 0)
				at = emit(&q, IC_ALU, 0, !in->e[0].is_const);
			anchor = (int8_t)at;
			break;
		}
		if (kind == BRANCH_REGION) {
			/*
			 * A branch that may diverge around a warp-level side effect is a
			 * convergence region: BSSY before it, BSYNC where the paths meet
			 * (traces/h100/forms.sass, diverge; the BSYNC issues here, on the
			 * path that reaches it).
			 */
			emit(&q, IC_BRA, 0, false);
			emit(&q, IC_BRA, 0, false);
		}
		anchor = (int8_t)emit(&q, IC_BRA, dep_bit(at), at < 0 && !in->e[0].is_const);
		q.code[anchor].flags |= LI_RESULT; /* LI_RESULT: the lanes that take it fetch its target (issue.c) */
		break;
	}
	case OP_EXIT: anchor = (int8_t)emit(&q, IC_BRA, 0, false); break;
	case OP_NANOSLEEP: {
		/* the duration's arithmetic, then NANOSLEEP (a control instruction) */
		int at = lower_expr(&q, k, &in->e[0], wide_expr(k, &in->e[0]));
		anchor = (int8_t)emit(&q, IC_BRA, dep_bit(at), false);
		break;
	}
	case OP_BARRIER_TRY_WAIT:
	case OP_BARRIER_TEST_WAIT: {
		/*
		 * The token's or parity's arithmetic, SYNCS.PHASECHK.TRANS64[.TRYWAIT] P, [bar], R (the anchor,
		 * as in the waits' forms), then the SEL that turns its predicate into the variable.
		 */
		int at = lower_expr(&q, k, &in->e[0], wide_expr(k, &in->e[0]));
		anchor = (int8_t)emit(&q, IC_SYNCS, dep_bit(at), false);
		int sel = emit(&q, IC_ALU, dep_bit(anchor), false);
		if (sel >= 0 && sel < SEQ_MAX)
			q.code[sel].flags |= LI_RESULT;
		break;
	}
	default: {
		enum lform_id id = form_of(k, in);
		if (id == LF_COUNT)
			break;
		uint32_t inputs = 0;
		int a = lower_index(&q, k, &in->src), b = lower_index(&q, k, &in->dst);
		inputs = dep_bit(a) | dep_bit(b);
		for (int i = 0; i < 2; i++) {
			/* a count (compute's k, shfl's steps) is a loop bound, not an input of the op's own code */
			bool count = i == 0 && (in->op == OP_COMPUTE || in->op == OP_SHFL);
			if (in->e[i].is_const || in->e[i].len == 0 || count)
				continue;
			inputs |= dep_bit(lower_expr(&q, k, &in->e[i], wide_expr(k, &in->e[i])));
		}
		append_form(&q, &lform_table[id], inputs, &anchor, &lb, &le);
		break;
	}
	}
	struct linst *code = NULL;
	if (q.n > 0) {
		code = malloc((size_t)q.n * sizeof *code);
		if (!code)
			return -1;
		memcpy(code, q.code, (size_t)q.n * sizeof *code);
	}
	*out = (struct lform){.name = op_table[in->op].name, .source = "lowered", .code = code, .n = (uint8_t)q.n,
			      .anchor = anchor, .loop_begin = lb, .loop_end = le};
	return 0;
}

int lower_kernel(struct kernel *k)
{
	k->lowered = calloc((size_t)(k->ncode > 0 ? k->ncode : 1), sizeof *k->lowered);
	if (!k->lowered)
		return -1;
	uint64_t builtins = (1ull << SLOT_BUILTINS) - 1;
	for (int pc = 0; pc < k->ncode; pc++) {
		struct insn *in = &k->code[pc];
		in->reads = (in->e[0].slots | in->e[1].slots | in->dst.index.slots | in->src.index.slots |
			     in->bar_index.slots) & ~builtins & ~k->unrolled_slots & ~(1ull << 63);
		if (lower_insn(k, in, &k->lowered[pc]))
			return -1;
	}
	return 0;
}

void lower_free(struct kernel *k)
{
	for (int pc = 0; k->lowered && pc < k->ncode; pc++)
		free((void *)k->lowered[pc].code);
	free(k->lowered);
	k->lowered = NULL;
}

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

#define SEQ_MAX LOWER_SEQ_MAX
#define TREE_MAX 64  /* nodes of one expression's tree */
#define AVAIL_MAX 64 /* values one block (or one preheader) remembers */
#define WMMA_LANE_N 9 /* S2R SR_LANEID and the lane's fragment offsets (OP_MMA) */

/* A sequence being built. */
struct seq {
	struct linst code[SEQ_MAX];
	int n;
	bool full; /* instructions were left out: the expression was longer than SEQ_MAX */
	int before; /* ALU less FMA-heavy instructions of the straight-line block before this sequence (emit_add) */
};

/* A value some earlier code computed into a register: later code reads it instead of computing it again. */
struct avail_value {
	uint64_t key;   /* its expression's words and width */
	uint64_t slots; /* the variables it read: a write to one of them ends it */
	int pc;         /* the op whose sequence holds it */
	int at;         /* its instruction there */
};

struct avail {
	struct avail_value v[AVAIL_MAX];
	int n;
};

/*
 * A loop of the compiled kernel: ops [head, back], back the JMP to head.
 * pre is the op just before it that runs once per entry (a for's init),
 * where nvcc's loop-invariant code motion puts what the body computes from
 * values the loop does not change; -1 when there is none (a while).
 */
struct loop {
	int head, back, pre;
	uint64_t writes; /* variables some op of the loop assigns */
	bool remainder;  /* ptxas unrolls it by 4: a trip count and a remainder loop per entry (unrolled_by_ptxas) */
	bool region;     /* ptxas puts it in a convergence region: BSSY per entry, BSYNC after its exit (in_region) */
	bool remat;      /* "remat": its ops re-read the special registers they use (rematerialised, not kept) */
};

/* Where lowered instructions go: an op's own sequence, or the preheader of a loop they were hoisted out of. */
struct sink {
	struct seq *q;
	struct avail *av;
	int pc;
};

/* A loop preheader's sequence: its own code, then what was hoisted into it, and the values those hold. */
struct preheader {
	struct seq q;
	struct avail av;
	uint64_t forms; /* forms whose set-up was hoisted into it */
};

struct lower_ctx {
	const struct kernel *k;
	bool root_low;         /* the statement being lowered is read for its value's low word alone */
	struct seq op;         /* the sequence of the op being lowered */
	int block_balance;     /* ALU less FMA-heavy instructions of the current straight-line block so far */
	struct preheader **pre; /* per op: its sequence while it is a loop's preheader, else NULL */
	struct avail block;   /* what the current straight-line block has computed */
	uint64_t forms_seen;  /* forms lowered in this block: their set-up is in registers */
	struct loop *loops;
	int nloops;
	uint64_t *hoisted_reads; /* per op: variables read by the arithmetic hoisted into it */
	int pc;                  /* the op being lowered */
	struct expr locals[LI_LOCAL_SITES]; /* the local-array loads' operands (kernel local_reads) */
	int nlocals;
	int mma_lane_n;  /* the wmma op just lowered: its lane offsets' instructions after its S2R, the first (0: none) */
	int mma_lane_at; /* where they begin: after the S2R and the tiles' address arithmetic */
	int mma_ldsm_at; /* ... and its first LDSM's place */
	/*
	 * Rematerialisation: in the ops of a "remat" loop, the builtins (bits below SLOT_BUILTINS) and the
	 * variables set once from builtins alone (def[slot] their value) that remat_slots holds are read
	 * anew: an S2R for a builtin, the definition's arithmetic for such a variable.
	 */
	uint64_t remat_slots;
	const struct expr **def;
	uint64_t low_vars;     /* 64-bit variables whose every read wants only the low word (low_word_vars) */
	uint64_t address_vars; /* ... or is a global index */
};

/* An operand: the instruction that produced it in sink pc, or none (-1: a register ready before the op, or an immediate). */
struct val {
	int at;
	int pc;     /* the sink holding at */
	bool input; /* reads a variable directly (LI_EXTERN) */
};

/* One node of an expression's tree, rebuilt from its postfix words. */
struct node {
	enum opc op;      /* OPC_JZ: c ? a : b (and && ||), a SEL on three children */
	int a, b, c;     /* children (-1: none) */
	int64_t value;   /* PUSH: the immediate; LOAD: the slot */
	uint32_t w0, w1; /* its subtree's words [w0, w1) in the pool */
	uint64_t slots;  /* variables its subtree reads */
	bool konst;      /* an immediate */
	bool invariant;  /* reads no variable: computed once at kernel entry */
	bool remat;      /* reads a builtin or variable the op re-reads (lower_ctx remat_slots): computed in the op */
};

struct tree {
	struct node n[TREE_MAX];
	int count, root;
};

static uint64_t dep_bit(int at) { return at >= 0 ? 1ull << at : 0; }

static int emit(struct seq *q, enum iclass cls, uint64_t deps, bool input)
{
	if (q->n >= SEQ_MAX) {
		q->full = true;
		return q->n - 1;
	}
	q->code[q->n] = (struct linst){.cls = (uint8_t)cls, .flags = input ? LI_EXTERN : 0, .deps = deps};
	return q->n++;
}

/* An integer instruction of the FMA-heavy pipe: IMAD and its forms, IMAD.WIDE among them. */
static int fma_heavy(uint8_t cls) { return cls == IC_IMAD || cls == IC_IMADW; }

/*
 * A 32-bit add, subtraction or negation, or the carry half of a 64-bit one:
 * ptxas writes it as IADD3 (IADD3.X) for the ALU pipe or as VIADD, IMAD.IADD,
 * IMAD.MOV (IMAD.X) for the FMA-heavy pipe, to even out the two pipes' work
 * in a straight-line block (validation.sass: both beside each other;
 * pipe_dual.sass: x + y beside an xor becomes VIADD); here the one the block
 * has used less so far.
 */
static int emit_add(struct seq *q, uint64_t deps, bool input)
{
	int alu_over_imad = q->before;
	for (int i = 0; i < q->n; i++)
		alu_over_imad += (q->code[i].cls == IC_ALU) - fma_heavy(q->code[i].cls);
	return emit(q, alu_over_imad > 0 ? IC_IMAD : IC_ALU, deps, input);
}

/* A chain of n dependent instructions of one class after deps; returns the last. */
static int chain(struct seq *q, enum iclass cls, int n, uint64_t deps, bool input)
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
 * A 64-bit unsigned x / c or x % c by a constant c, as ptxas compiles it
 * (callforms.sass k_mod<3> 0x0600-0x06c0, pipelines.sass with_staging_unified<3>
 * 0x09c0-0x0a40): the 128-bit product's high word by the reciprocal from four
 * IMAD.WIDE.U32 (the last .X on the carries) with the carry's IMAD.X, IADD3
 * and IMAD.MOV between them, the quotient's two shifts; % multiplies the
 * quotient back (IMAD.WIDE.U32 on the low word, IMAD on the high) and
 * subtracts (IADD3).  Where only the result's low word is read (low: an
 * index into a local array), the quotient is its low word's shift and %
 * one 32-bit IMAD (pipelines.sass with_staging_unified<3> 0x09c0-0x0a40).
 */
static int wide_by_constant(struct seq *q, bool mod, bool low, uint64_t d, bool in)
{
	int hi_lo = emit(q, IC_IMADW, d, in);                    /* x.hi * c.lo */
	int mid = emit(q, IC_IMADW, d | dep_bit(hi_lo), in);     /* x.lo * c.hi + that, carry out */
	int lo_lo = emit(q, IC_IMADW, d, in);                    /* x.lo * c.lo */
	int carry = emit(q, IC_IMAD, dep_bit(mid), false);       /* IMAD.X: the carry as a word */
	int sum = emit(q, IC_ALU, dep_bit(lo_lo) | dep_bit(mid), false); /* IADD3 RZ, P0: the low words' carry */
	int move = emit(q, IC_IMAD, dep_bit(mid), false);        /* IMAD.MOV of the middle's high word */
	int high = emit(q, IC_IMADW, d | dep_bit(carry) | dep_bit(sum) | dep_bit(move), in); /* .X: x.hi * c.hi + carries */
	int q_lo = emit(q, IC_ALU, dep_bit(high), false);        /* SHF.R.U64 */
	if (low)
		return mod ? emit(q, IC_IMAD, d | dep_bit(q_lo), in) : q_lo; /* x - q * c in 32 bits */
	int q_hi = emit(q, IC_ALU, dep_bit(high), false);        /* SHF.R.U32.HI */
	if (!mod)
		return q_hi;
	int back_lo = emit(q, IC_IMADW, d | dep_bit(q_lo), in);  /* x - q * c, low word and borrow */
	int back_hi = emit(q, IC_IMAD, dep_bit(q_hi), false);
	return emit(q, IC_ALU, dep_bit(back_lo) | dep_bit(back_hi) | dep_bit(q_lo), false);
}

/*
 * One operator on operands with deps d (in: one reads a variable directly).
 * wide: 64-bit; low: only the result's low word is read.  bconst: the right
 * operand is an immediate with value bval.
 */
static int lower_op(struct seq *q, enum opc op, uint64_t d, bool in, bool wide, bool low, bool bconst, int64_t bval)
{
	switch (op) {
	case OPC_LOCAL: {
		/*
		 * LDL from the array's slot: the index scaled and added to the stack
		 * pointer, then the load (with_staging_unified4.sass 0x0a30-0x0a80; the
		 * LOP3 between them is x % S's mask, its own node).  ptxas writes the
		 * scale as IMAD.SHL or SHF.L and the add as IMAD.IADD or IADD3, as it
		 * evens out the two pipes (pipelines.sass: IMAD.SHL in the unified and
		 * partitioned pipelines, SHF.L in the thread scope's fetch loop), so
		 * both go where an add would.
		 */
		int addr = emit_add(q, dep_bit(emit_add(q, d, in)), false);
		int at = emit(q, IC_LDG, dep_bit(addr), false);
		if (at >= 0 && at < SEQ_MAX)
			q->code[at].flags |= LI_LOCAL;
		return at;
	}
	case OPC_INT32: /* an int widened where 64 bits are wanted: SHF.R.S32.HI makes the high word */
		return emit(q, IC_ALU, d, in);
	case OPC_ADD:
	case OPC_SUB:
	case OPC_NEG:
		/* IADD3 or VIADD, and for 64 bits IADD3.X or IMAD.X on its carry */
		if (!wide)
			return emit_add(q, d, in);
		return emit_add(q, dep_bit(emit(q, IC_ALU, d, in)), false); /* the low half's carry-out: IADD3 */
	case OPC_MUL:
		if (bconst && is_pow2(bval))
			return wide ? chain(q, IC_ALU, 2, d, in) : emit(q, IC_IMAD, d, in); /* SHF pair / IMAD.SHL */
		if (!wide)
			return emit(q, IC_IMAD, d, in);
		{ /* IMAD.WIDE.U32 for the low half, IMADs for the cross terms, IADD3 */
			int lo = emit(q, IC_IMADW, d, in);
			int hi = emit(q, IC_IMAD, d, in);
			return emit(q, IC_ALU, dep_bit(lo) | dep_bit(hi), false);
		}
	case OPC_DIV:
	case OPC_MOD:
		if (op == OPC_MOD && bconst && is_pow2(bval) && bval <= (int64_t)1 << 32)
			return emit(q, IC_ALU, d, in); /* a mask of the low word; the high word is zero, no instruction */
		if (bconst && is_pow2(bval))
			return wide ? chain(q, IC_ALU, 2, d, in) : emit(q, IC_ALU, d, in); /* shift or mask */
		if (bconst && wide)
			return wide_by_constant(q, op == OPC_MOD, low, d, in);
		if (bconst) {
			/* 32 bits: IMAD.HI by the reciprocal and a shift; % multiplies back (IMAD) and subtracts */
			int at = emit(q, IC_ALU, dep_bit(emit(q, IC_IMAD, d, in)), false);
			if (op == OPC_MOD)
				at = emit(q, IC_ALU, dep_bit(emit(q, IC_IMAD, dep_bit(at), false)), false);
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
		if (!wide || (op == OPC_AND && bconst && bval >= 0 && bval <= 0xffffffff)) /* & a 32-bit mask: high word 0 */
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

static bool unary(enum opc op)
{
	return op == OPC_NEG || op == OPC_LNOT || op == OPC_BNOT || op == OPC_BOOL || op == OPC_LOCAL ||
	       op == OPC_INT32;
}

static uint64_t slot_bit(int64_t slot) { return 1ull << (slot < 63 ? slot : 63); }

/* Whether slot is a variable of the compiled code (not a builtin, not an unrolled loop's immediate). */
static bool is_variable(const struct kernel *k, int64_t slot)
{
	return slot >= SLOT_BUILTINS && !(slot < 63 && (k->unrolled_slots >> slot & 1));
}

/* Rebuilds e's tree from its postfix words; false when it has none or is too big. */
static bool build_tree(const struct kernel *k, const struct expr *e, uint64_t remat_slots, struct tree *t)
{
	int st[TREE_MAX], sp = 0;
	/* c ? x : y (&& and || compile to it): [c] JZ [x] JMP [y]; open ones, innermost last */
	struct open_sel {
		int cond, then_value;
		uint32_t w0;
		const int64_t *end; /* where y ends: the JMP's target */
	} open[16];
	int nopen = 0;
	t->count = 0;
	const int64_t *base = k->pool.words, *w = base + e->at, *end = w + e->len;
	while (w < end) {
		uint32_t w0 = (uint32_t)(w - base);
		enum opc op = (enum opc)*w++;
		if (op == OPC_JZ) {
			if (sp < 1 || nopen == 16)
				return false;
			w++;
			sp--;
			open[nopen++] = (struct open_sel){.cond = st[sp], .then_value = -1, .w0 = t->n[st[sp]].w0, .end = NULL};
			continue;
		}
		if (op == OPC_JMP) {
			int64_t off = *w++;
			if (sp < 1 || nopen == 0)
				return false;
			open[nopen - 1].then_value = st[--sp];
			open[nopen - 1].end = w + off;
			continue;
		}
		if (t->count >= TREE_MAX || sp >= TREE_MAX)
			return false;
		struct node *n = &t->n[t->count];
		*n = (struct node){.op = op, .a = -1, .b = -1, .c = -1, .w0 = w0};
		if (op == OPC_PUSH || op == OPC_LOAD) {
			n->value = *w++;
			n->konst = op == OPC_PUSH ||
				   (op == OPC_LOAD && n->value >= 0 && n->value < 63 && (k->const_slots >> n->value & 1));
			n->slots = op == OPC_LOAD && is_variable(k, n->value) ? slot_bit(n->value) : 0;
			n->remat = op == OPC_LOAD && n->value >= 0 && n->value < 63 && (remat_slots >> n->value & 1);
		} else if (unary(op)) {
			if (sp < 1)
				return false;
			n->a = st[--sp];
			n->w0 = t->n[n->a].w0;
			n->slots = t->n[n->a].slots;
			n->konst = t->n[n->a].konst;
			n->remat = t->n[n->a].remat;
		} else {
			if (sp < 2)
				return false;
			n->b = st[--sp];
			n->a = st[--sp];
			n->w0 = t->n[n->a].w0;
			n->slots = t->n[n->a].slots | t->n[n->b].slots;
			n->konst = t->n[n->a].konst && t->n[n->b].konst;
			n->remat = t->n[n->a].remat || t->n[n->b].remat;
		}
		n->w1 = (uint32_t)(w - base);
		n->invariant = n->slots == 0 && !n->remat;
		st[sp++] = t->count++;
		/* the end of an else part: c, x and y meet in one SEL (or PLOP3) */
		while (nopen > 0 && open[nopen - 1].end == w) {
			if (t->count >= TREE_MAX || sp < 1)
				return false;
			nopen--;
			struct node *sel = &t->n[t->count];
			int c = open[nopen].cond, x = open[nopen].then_value, y = st[--sp];
			*sel = (struct node){.op = OPC_JZ, .a = x, .b = y, .c = c, .w0 = open[nopen].w0,
					     .w1 = (uint32_t)(w - base)};
			sel->slots = t->n[c].slots | t->n[x].slots | t->n[y].slots;
			sel->konst = t->n[c].konst && t->n[x].konst && t->n[y].konst;
			sel->remat = t->n[c].remat || t->n[x].remat || t->n[y].remat;
			sel->invariant = sel->slots == 0 && !sel->remat;
			st[sp++] = t->count++;
		}
	}
	if (nopen > 0)
		return false;
	if (sp < 1)
		return false;
	t->root = st[sp - 1];
	return true;
}

/* The key of a subtree: its words (not where they sit in the pool) and its width. */
static uint64_t node_key(const struct kernel *k, const struct node *n, bool wide)
{
	uint64_t h = 1469598103934665603ull ^ (wide ? 0x9e3779b97f4a7c15ull : 0);
	for (uint32_t i = n->w0; i < n->w1; i++) {
		h ^= (uint64_t)k->pool.words[i];
		h *= 1099511628211ull;
	}
	return h ^ (uint64_t)(n->w1 - n->w0) << 48;
}

static const struct avail_value *avail_find(const struct avail *av, uint64_t key)
{
	for (int i = 0; i < av->n; i++)
		if (av->v[i].key == key)
			return &av->v[i];
	return NULL;
}

static void avail_add(struct avail *av, uint64_t key, uint64_t slots, int pc, int at)
{
	if (at < 0)
		return;
	if (av->n == AVAIL_MAX) /* the oldest value's register is the one the compiler would have reused */
		memmove(av->v, av->v + 1, (AVAIL_MAX - 1) * sizeof av->v[0]), av->n--;
	av->v[av->n++] = (struct avail_value){.key = key, .slots = slots, .pc = pc, .at = at};
}

/* A write of the variables in slots: the values computed from them are stale. */
static void avail_kill(struct avail *av, uint64_t slots)
{
	int j = 0;
	for (int i = 0; i < av->n; i++)
		if (!(av->v[i].slots & slots))
			av->v[j++] = av->v[i];
	av->n = j;
}

/*
 * Where a value reading the variables in slots is computed, seen from the
 * op being lowered: in the op itself, in the preheader of the outermost
 * loop around it whose body changes none of them (nvcc's loop-invariant
 * code motion), or nowhere per execution when no loop around it changes
 * them (-2: computed once, like what reads only constants and builtins).
 */
static int placement(const struct lower_ctx *c, uint64_t slots)
{
	int best = -1, inner = -1;
	for (;;) { /* the loops around pc, innermost first */
		int next = -1;
		for (int i = 0; i < c->nloops; i++) {
			const struct loop *l = &c->loops[i];
			if (l->head > c->pc || l->back < c->pc)
				continue;
			if (inner >= 0 && (l->back - l->head <= c->loops[inner].back - c->loops[inner].head ||
					   l->head > c->loops[inner].head || l->back < c->loops[inner].back))
				continue;
			if (next < 0 || l->back - l->head < c->loops[next].back - c->loops[next].head)
				next = i;
		}
		if (next < 0)
			return inner < 0 ? c->pc : best >= 0 ? best : -2;
		if (c->loops[next].writes & slots)
			return best >= 0 ? best : c->pc;
		if (c->loops[next].pre >= 0)
			best = c->loops[next].pre;
		else if (best < 0)
			return c->pc; /* no preheader to hoist into: a while's body computes it */
		inner = next;
	}
}

static struct sink sink_at(struct lower_ctx *c, int pc)
{
	if (pc == c->pc)
		return (struct sink){c->pre[pc] ? &c->pre[pc]->q : &c->op, &c->block, pc};
	return (struct sink){&c->pre[pc]->q, &c->pre[pc]->av, pc};
}

/* x % 2^k with 2^k at most 2^32: a mask of x's low word, the high word zero. */
static bool low_mask(const struct tree *t, const struct node *n)
{
	const struct node *b = n->b >= 0 ? &t->n[n->b] : NULL;
	return b && b->op == OPC_PUSH && is_pow2(b->value) && b->value <= (int64_t)1 << 32;
}

/* Whether an operator's low 32 bits depend only on its operands' low 32 bits (+ - * << and the bitwise operators). */
static bool keeps_low_word(enum opc op)
{
	switch (op) {
	case OPC_ADD:
	case OPC_SUB:
	case OPC_MUL:
	case OPC_SHL:
	case OPC_AND:
	case OPC_OR:
	case OPC_XOR:
	case OPC_NEG:
	case OPC_BNOT: return true;
	default: return false;
	}
}

/*
 * Whether the low 32 bits of node i depend only on the low 32 bits of what it
 * reads: converted to int, nvcc computes it in 32 bits, as the examples'
 * block_batch lambda (-> int) compiles to one IMAD
 * (traces/h100/pipelines.sass, with_single_stage 0x05d0).
 */
static bool low_word_only(const struct tree *t, int i)
{
	const struct node *n = &t->n[i];
	switch (n->op) {
	case OPC_PUSH:
	case OPC_LOAD: return true;
	case OPC_INT32: return low_word_only(t, n->a);
	case OPC_MOD: return low_mask(t, n) && low_word_only(t, n->a);
	case OPC_LOCAL: return true; /* an element of a local array: a 32-bit address, the low word's own load */
	default:
		return keeps_low_word(n->op) && low_word_only(t, n->a) && (n->b < 0 || low_word_only(t, n->b));
	}
}

/*
 * Whether node i is C arithmetic on ints (32-bit variables, builtins,
 * immediates of 32 bits, int helpers): an int itself, whatever the
 * statement's width, converted only where it is stored or used.
 */
static bool int_valued(const struct kernel *k, const struct tree *t, int i)
{
	const struct node *n = &t->n[i];
	switch (n->op) {
	case OPC_PUSH: return n->value >= INT32_MIN && n->value <= INT32_MAX;
	case OPC_LOAD: return n->value < SLOT_BUILTINS || !(k->wide_slots & slot_bit(n->value));
	case OPC_INT32: return true;
	case OPC_ADD:
	case OPC_SUB:
	case OPC_MUL:
	case OPC_DIV:
	case OPC_MOD:
	case OPC_SHL:
	case OPC_SHR:
	case OPC_AND:
	case OPC_OR:
	case OPC_XOR: return int_valued(k, t, n->a) && int_valued(k, t, n->b);
	case OPC_NEG:
	case OPC_BNOT: return int_valued(k, t, n->a);
	default: return false;
	}
}

/* Marks in *full the variables node i reads where their high word counts (low: only i's low word is wanted). */
static void demand_walk(const struct tree *t, int i, bool low, uint64_t *full)
{
	const struct node *n = &t->n[i];
	bool keep;
	switch (n->op) {
	case OPC_LOAD: if (!low) *full |= n->slots; return;
	case OPC_PUSH: return;
	case OPC_INT32:
	case OPC_LOCAL: low = keep = true; break; /* an int, an index */
	case OPC_MOD: keep = low_mask(t, n); break;
	case OPC_JZ: /* c ? a : b: the value's low word is a's or b's; c is a condition */
		demand_walk(t, n->a, low, full);
		demand_walk(t, n->b, low, full);
		demand_walk(t, n->c, false, full);
		return;
	default: keep = keeps_low_word(n->op); break;
	}
	if (n->a >= 0)
		demand_walk(t, n->a, keep && low, full);
	if (n->b >= 0)
		demand_walk(t, n->b, keep && low, full);
	if (n->c >= 0)
		demand_walk(t, n->c, keep && low, full);
}

/* Reads of variables in e where the high word counts (low: only e's low word is wanted); all of them when e is too big. */
static uint64_t full_reads(const struct kernel *k, const struct expr *e, bool low)
{
	if (e->len == 0 || e->is_const)
		return 0;
	struct tree t;
	if (!build_tree(k, e, 0, &t))
		return e->slots;
	uint64_t full = 0;
	demand_walk(&t, t.root, low, &full);
	return full;
}

static bool shared_index(const struct kernel *k, const struct memref *ref)
{
	return ref->buf >= 0 && k->bufs[ref->buf].space == SPACE_SHARED;
}

/*
 * The variable a global index is, alone or plus an immediate (its address's
 * offset): an int there is sign-extended by the address's IMAD.WIDE
 * (validation.sass, with_specialized_staging_unified<2> 0x1220), no SHF.
 */
static uint64_t address_read(const struct kernel *k, const struct memref *ref)
{
	struct tree t;
	if (ref->buf < 0 || shared_index(k, ref) || ref->index.len == 0 || ref->index.is_const ||
	    !build_tree(k, &ref->index, 0, &t))
		return 0;
	const struct node *r = &t.n[t.root];
	if ((r->op == OPC_ADD || r->op == OPC_SUB) && r->b >= 0 && t.n[r->b].konst)
		r = &t.n[r->a];
	return r->op == OPC_LOAD ? r->slots : 0;
}

static uint64_t memref_full_reads(const struct kernel *k, const struct memref *ref, bool count_address)
{
	uint64_t full = full_reads(k, &ref->index, shared_index(k, ref));
	return count_address ? full : full & ~address_read(k, ref);
}

/*
 * Which 64-bit variables only ever reach the low 32 bits of what reads
 * them: a size_t used as a shared-memory or local-array index (addresses
 * of 32 bits) or converted to int.  ptxas computes such a variable in one
 * register, its high word dead (validation.sass,
 * with_specialized_staging_unified<2> 0x1160-0x1240: shared_offset[fetch_batch
 * % 2] + thread_idx, a size_t, is IMAD.SHL, LOP3, IMAD.IADD, LDL, IMAD.IADD,
 * LEA, no high word).  Starts from every 64-bit variable and drops those
 * read where the high word counts, until none drops.  With address true,
 * also those read as a global index (an int stored there needs no high
 * word: the address's IMAD.WIDE extends it).
 */
static uint64_t low_word_vars(const struct kernel *k, bool address)
{
	uint64_t low = k->wide_slots & ~(1ull << 63);
	for (;;) {
		uint64_t full = 0;
		for (int pc = 0; pc < k->ncode; pc++) {
			const struct insn *in = &k->code[pc];
			bool into_low = (in->op == OP_LET || in->op == OP_SET) &&
					(!(k->wide_slots & slot_bit(in->slot)) || (low & slot_bit(in->slot)));
			full |= full_reads(k, &in->e[0], into_low && !address) | full_reads(k, &in->e[1], false) |
				full_reads(k, &in->bar_index, false) | memref_full_reads(k, &in->dst, !address) |
				memref_full_reads(k, &in->src, !address) | memref_full_reads(k, &in->src2, !address);
		}
		if (!(low & full))
			return low;
		low &= ~full;
	}
}

/*
 * Lowers node i of t where it is computed (the op, a preheader, or at
 * kernel entry); returns where its value is, as seen by sink s.
 * wide: the statement computes in 64 bits.
 */
/* The words [w0, w1) of the pool, a subtree's, as an expression of their own (an LDL's operand). */
static struct expr sub_expr(const struct kernel *k, uint32_t w0, uint32_t w1)
{
	struct expr e = {.at = w0, .len = w1 - w0, .per_thread = true};
	for (const int64_t *w = k->pool.words + w0, *end = k->pool.words + w1; w < end;) {
		enum opc op = (enum opc)*w++;
		if (op == OPC_LOAD)
			e.slots |= slot_bit(*w);
		if (op == OPC_PUSH || op == OPC_LOAD || op == OPC_JZ || op == OPC_JMP)
			w++;
	}
	return e;
}

static struct val lower_node(struct lower_ctx *c, const struct tree *t, int i, bool wide);

/*
 * A local array's element is the helper's fill formula (s * block_size) at
 * its index: the compiled code loads it from the index's slot and computes
 * only the index, the formula's multiply and constant terms not at all.
 */
static int local_index(const struct tree *t, int i)
{
	for (;;) {
		const struct node *n = &t->n[i];
		bool linear = n->op == OPC_MUL || n->op == OPC_ADD || n->op == OPC_SHL;
		if (linear && n->b >= 0 && (t->n[n->b].konst || t->n[n->b].invariant))
			i = n->a;
		else if (linear && n->op != OPC_SHL && n->b >= 0 && (t->n[n->a].konst || t->n[n->a].invariant))
			i = n->b;
		else
			return i;
	}
}

/*
 * A builtin or builtin-made variable the op re-reads: S2R of the special register (the warp index
 * is SR_TID.X shifted), or the variable's definition computed again, each once per op.
 */
static struct val remat_load(struct lower_ctx *c, const struct node *n, bool wide)
{
	struct sink s = sink_at(c, c->pc);
	uint64_t key = node_key(c->k, n, wide);
	const struct avail_value *had = avail_find(s.av, key);
	if (had && had->pc == c->pc)
		return (struct val){.at = had->at, .pc = c->pc};
	int at;
	if (n->value < SLOT_BUILTINS) {
		at = emit(s.q, IC_S2R, 0, false);
		if (n->value != SLOT_BLOCK)
			s.q->code[at].flags |= LI_SREG_THREAD;
		if (n->value == SLOT_WARP)
			at = emit(s.q, IC_ALU, dep_bit(at), false);
	} else {
		struct tree def;
		if (!c->def[n->value] || !build_tree(c->k, c->def[n->value], c->remat_slots, &def))
			return (struct val){.at = -1, .pc = -1, .input = true};
		struct val v = lower_node(c, &def, def.root, wide);
		at = v.pc == c->pc ? v.at : emit(s.q, IC_ALU, 0, false);
	}
	avail_add(s.av, key, 0, c->pc, at);
	return (struct val){.at = at, .pc = c->pc};
}

static struct val lower_node(struct lower_ctx *c, const struct tree *t, int i, bool wide)
{
	const struct node *n = &t->n[i];
	if (n->konst || n->invariant)
		return (struct val){.at = -1, .pc = -1};
	if (n->op == OPC_LOAD && n->remat)
		return remat_load(c, n, wide);
	if (n->op == OPC_LOAD) /* a variable as it is: its register */
		return (struct val){.at = -1, .pc = -1, .input = true};
	if (n->op == OPC_INT32 && (!wide || !low_word_only(t, n->a)))
		/* an int used as one, or converted from what needs 64 bits: the low word is the value */
		return lower_node(c, t, n->a, wide);
	if (n->op == OPC_BOOL && n->a >= 0) {
		/* !!x of a compare is the compare's predicate itself (ISETP ... .AND folds && into it) */
		enum opc inner = t->n[n->a].op;
		if ((inner >= OPC_LT && inner <= OPC_NE) || inner == OPC_LNOT || inner == OPC_BOOL)
			return lower_node(c, t, n->a, wide);
	}
	int where = n->remat ? c->pc : placement(c, n->slots);
	if (where == -2)
		return (struct val){.at = -1, .pc = -1};
	struct sink s = sink_at(c, where);
	uint64_t key = node_key(c->k, n, wide);
	const struct avail_value *had = avail_find(s.av, key);
	if (had && (!n->remat || had->pc == c->pc)) /* a re-read value: only the op's own is reused */
		return (struct val){.at = had->pc == s.pc ? had->at : -1, .pc = had->pc};
	/*
	 * x * y + z in 32 bits is one IMAD (ptxas contracts the multiply into the add,
	 * tests/hw/diverge.cu's chains): the product is not made on its own.
	 */
	int mul = -1, addend = -1;
	if (n->op == OPC_ADD && !wide && n->b >= 0) {
		if (t->n[n->a].op == OPC_MUL && !t->n[n->a].konst && !t->n[n->a].invariant)
			mul = n->a, addend = n->b;
		else if (t->n[n->b].op == OPC_MUL && !t->n[n->b].konst && !t->n[n->b].invariant)
			mul = n->b, addend = n->a;
	}
	bool fused = mul >= 0 && placement(c, t->n[mul].slots) == where;
	/* the operands: of the fused IMAD, the product's two and the addend */
	/* an int widened: what it converts computes in 32 bits */
	/* a local array's index: its address is 32 bits */
	struct val a = lower_node(c, t, fused ? t->n[mul].a : n->op == OPC_LOCAL ? local_index(t, n->a) : n->a,
				  wide && n->op != OPC_INT32 && n->op != OPC_LOCAL);
	struct val b = fused ? lower_node(c, t, t->n[mul].b, wide)
		       : n->b >= 0 ? lower_node(c, t, n->b, wide) : (struct val){.at = -1, .pc = -1};
	struct val cv = fused ? lower_node(c, t, addend, wide)
		       : n->c >= 0 ? lower_node(c, t, n->c, wide) : (struct val){.at = -1, .pc = -1};
	uint64_t d = (a.pc == s.pc ? dep_bit(a.at) : 0) | (b.pc == s.pc ? dep_bit(b.at) : 0) |
		     (cv.pc == s.pc ? dep_bit(cv.at) : 0);
	/* a variable read directly: in the op it waits for the statements that wrote it; a preheader reads it as its own input */
	bool in = a.input || b.input || cv.input;
	bool bconst = !fused && n->b >= 0 && t->n[n->b].konst && t->n[n->b].op == OPC_PUSH;
	int at = fused ? emit(s.q, IC_IMAD, d, in)
		       : lower_op(s.q, n->op, d, in, wide, c->root_low && i == t->root, bconst, bconst ? t->n[n->b].value : 0);
	if (n->op == OPC_LOCAL && at >= 0 && at < SEQ_MAX && c->nlocals < LI_LOCAL_SITES) {
		c->locals[c->nlocals++] = sub_expr(c->k, t->n[n->a].w0, t->n[n->a].w1);
		s.q->code[at].flags |= (uint16_t)(c->nlocals << LI_LOCAL_SITE);
	}
	if (s.pc != c->pc)
		c->hoisted_reads[s.pc] |= n->slots;
	avail_add(s.av, key, n->slots, s.pc, at);
	return (struct val){.at = at, .pc = s.pc};
}

/*
 * Appends the arithmetic of e; returns the instruction of the op's own
 * sequence holding its value (-1: it needs none here: an immediate, a
 * register computed earlier, hoisted or once at entry).  address: e is a
 * memory index, whose last add of a constant is the address's immediate
 * offset.
 */
static int lower_expr_at(struct lower_ctx *c, const struct expr *e, bool wide, bool address, bool condition,
			 bool low_word, bool int_ok)
{
	if (e->is_const || e->len == 0)
		return -1;
	struct tree t;
	if (!build_tree(c->k, e, c->remat_slots, &t))
		return emit(sink_at(c, c->pc).q, IC_ALU, 0, true);
	int root = t.root;
	/* only the low word is wanted and it needs no high word, or an int is (the address extends it): 32 bits */
	if ((low_word && low_word_only(&t, root)) || (int_ok && int_valued(c->k, &t, root)))
		wide = false;
	const struct node *r = &t.n[root];
	if (address && (r->op == OPC_ADD || r->op == OPC_SUB) && r->b >= 0 && t.n[r->b].konst)
		root = r->a;
	if (address && t.n[root].op == OPC_INT32 && low_word_only(&t, t.n[root].a)) {
		/* an int index: the address's IMAD.WIDE (or LEA.HI.X.SX32) sign-extends it on the way */
		root = t.n[root].a;
		wide = false;
	}
	if (condition && r->op == OPC_JZ) {
		/*
		 * A branch on && or ||: the compares combine into the predicate
		 * (ISETP ... .AND/.OR P, or a BRA on two predicates), no SEL makes a value.
		 */
		struct val x = lower_node(c, &t, r->a, wide), y = lower_node(c, &t, r->b, wide);
		struct val k = lower_node(c, &t, r->c, wide);
		int at = -1;
		if (k.pc == c->pc)
			at = k.at;
		if (x.pc == c->pc && x.at > at)
			at = x.at;
		if (y.pc == c->pc && y.at > at)
			at = y.at;
		return at;
	}
	c->root_low = low_word && root == t.root;
	struct val v = lower_node(c, &t, root, wide);
	c->root_low = false;
	if (v.pc == c->pc)
		return v.at;
	if (v.input && root == t.root && !address) /* a variable as it is, where a value is wanted: a move */
		return emit(sink_at(c, c->pc).q, IC_ALU, 0, true);
	return -1;
}

/* Whether e reads a 64-bit variable (or is on a 64-bit statement). */
static bool wide_expr(const struct kernel *k, const struct expr *e) { return (e->slots & k->wide_slots) != 0; }

/*
 * The index arithmetic of ref (the form's own SASS scales it and adds the
 * base: its address instructions read this result as their input).
 */
static int lower_index(struct lower_ctx *c, const struct memref *ref)
{
	if (ref->buf < 0 || ref->index.is_const)
		return -1;
	return lower_expr_at(c, &ref->index, wide_expr(c->k, &ref->index), true, false, shared_index(c->k, ref), false);
}

/*
 * The instructions of form f that only set up registers every use of the
 * form computes alike (the shared window's base: S2UR SR_CgaCtaId, UMOV,
 * ULEA; constant loads) and ptxas's @!PT padding before a run of LDGSTS:
 * where the same form ran before in the block, nvcc emits them once.
 * Instructions of a multi-round form's loop are kept.
 */
static uint64_t setup_of(const struct lform *f)
{
	uint64_t setup = 0;
	for (int i = 0; i < f->n && i < SEQ_MAX; i++) {
		const struct linst *li = &f->code[i];
		bool in_loop = f->loop_begin >= 0 && i >= f->loop_begin && i < f->loop_end;
		bool plain = li->cls == IC_UNI || li->cls == IC_S2R || li->cls == IC_ALU || li->cls == IC_IMAD;
		if ((li->flags & LI_PAD) && !in_loop) {
			setup |= 1ull << i;
			continue;
		}
		if (in_loop || i == f->anchor || !plain || (li->flags & (LI_EXTERN | LI_RESULT | LI_TAKEN)) ||
		    (li->deps & ~setup))
			continue;
		setup |= 1ull << i;
	}
	return setup;
}

/* The instructions of form f before its anchor that the anchor reads, directly or through others. */
static uint64_t anchor_inputs(const struct lform *f)
{
	uint64_t need = f->anchor >= 0 && f->anchor < SEQ_MAX ? f->code[f->anchor].deps : 0, seen = 0;
	while (need & ~seen) {
		int i = __builtin_ctzll(need & ~seen);
		seen |= 1ull << i;
		need |= f->code[i].deps;
	}
	return seen;
}

static uint64_t pads_of(const struct lform *f)
{
	uint64_t pads = 0;
	for (int i = 0; i < f->n && i < SEQ_MAX; i++)
		if (f->code[i].flags & LI_PAD)
			pads |= 1ull << i;
	return pads;
}

/*
 * The instructions of form f that only steer control flow: a branch, or
 * what feeds nothing but such instructions.
 */
static uint64_t control_only(const struct lform *f)
{
	int n = f->n < SEQ_MAX ? f->n : SEQ_MAX;
	uint64_t consumers[SEQ_MAX] = {0}, control = 0;
	for (int i = 0; i < n; i++)
		for (uint64_t d = f->code[i].deps; d; d &= d - 1)
			consumers[__builtin_ctzll(d)] |= 1ull << i;
	/* an instruction reads only earlier ones: its consumers are decided before it */
	for (int i = n - 1; i >= 0; i--)
		if (f->code[i].cls == IC_BRA || (consumers[i] && !(consumers[i] & ~control)))
			control |= 1ull << i;
	return control;
}

/* The values an op's form reads from the statements before it (its inputs' arithmetic). */
struct form_inputs {
	uint64_t shared, global; /* the results of a copy's destination and source addresses */
	uint64_t counts;         /* the rest: byte counts and other operands */
};

/*
 * What instruction i of form f waits for of the op's inputs: a copy's
 * address arithmetic only where i computes that address, and for any form
 * nothing but the counts where i only steers control flow.  ptxas issues a
 * thread's trip test and the source's address before the destination's
 * comes back from its local-array load (validation_pcsamp
 * L2_with_staging_unified_4_128_1_0: ISETP, @P0 BRA and IMAD.WIDE at
 * 0x0a00-0x0ae0 while the LDL of the stage's offset at 0x0a80 is in flight).
 */
static uint64_t extern_deps(const struct lform *f, int i, uint64_t control, const struct form_inputs *in)
{
	uint64_t bit = 1ull << i, all = in->shared | in->global | in->counts;
	if (i == f->anchor)
		return all;
	if (f->to_shared | f->to_global) {
		/* what feeds both addresses is the group's partition of the bytes, not an operand */
		bool shared = f->to_shared & bit, global = f->to_global & bit;
		return in->counts | (shared && !global ? in->shared : 0) | (global && !shared ? in->global : 0);
	}
	return control & bit ? in->counts : all;
}

/* Appends a static form after the prefix, leaving out the instructions in drop; what it reads of the op's inputs waits for them (extern_deps). */
static void append_form(struct seq *q, const struct lform *f, const struct form_inputs *inputs, uint64_t drop,
			int8_t *anchor, int8_t *lb, int8_t *le)
{
	int map[SEQ_MAX];
	int base = q->n;
	uint64_t control = control_only(f);
	*anchor = *lb = *le = -1;
	for (int i = 0; i < f->n && i < SEQ_MAX; i++) {
		map[i] = -1;
		if (drop >> i & 1)
			continue;
		if (q->n >= SEQ_MAX) {
			q->full = true;
			break;
		}
		struct linst li = f->code[i];
		uint64_t deps = 0;
		for (uint64_t d = li.deps & ~drop; d; d &= d - 1) {
			int j = __builtin_ctzll(d);
			if (map[j] >= 0)
				deps |= 1ull << map[j];
		}
		li.deps = deps;
		if (li.flags & LI_EXTERN)
			li.deps |= extern_deps(f, i, control, inputs);
		map[i] = q->n;
		if (i == f->anchor)
			*anchor = (int8_t)q->n;
		if (i == f->loop_begin)
			*lb = (int8_t)q->n;
		q->code[q->n++] = li;
	}
	if (f->loop_end >= 0 && f->loop_end <= f->n && *lb >= 0)
		*le = f->loop_end == f->n ? (int8_t)q->n : map[f->loop_end] >= 0 ? (int8_t)map[f->loop_end] : -1;
	if (*lb < 0 || *le < 0)
		*lb = *le = -1;
	(void)base;
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
		/* ptxas if-converts by instructions: an fma of n FFMAs is n (exits' 8-FMA block branches) */
		if (k->code[i].op == OP_FMA && k->code[i].e[0].is_const && k->code[i].e[0].value > 1)
			ops += (int)(k->code[i].e[0].value < 64 ? k->code[i].e[0].value : 64) - 1;
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
	case OP_SYNCTHREADS: return in->group == GROUP_BLOCK ? LF_SYNC_BLOCK : LF_SYNCTHREADS;
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
	case OP_PIPELINE_MEMCPY_ASYNC: return in->chained || in->own_register ? LF_PRIM_COPY_RUN : LF_PRIM_COPY;
	case OP_MEMCPY_ASYNC:
		if (in->bar >= 0)
			return in->align >= 16 ? LF_COPY_BULK : LF_COPY_BARRIER;
		return in->group == GROUP_BLOCK ? LF_COPY_GROUP : LF_COPY_THREAD;
	case OP_BULK_STORE: return LF_BULK_STORE;
	case OP_BULK_COMMIT_GROUP: return LF_BULK_COMMIT;
	case OP_BULK_WAIT_GROUP: return LF_BULK_WAIT;
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

/* Whether a form branches (a try_wait's retry loop, a group copy's chunk loop, a region's BSSY). */
static bool form_branches(const struct lform *f)
{
	for (int i = 0; i < f->n; i++)
		if (f->code[i].cls == IC_BRA && !(f->code[i].flags & LI_PAD))
			return true;
	return false;
}

/*
 * The preheader of the innermost loop around the op being lowered when that
 * loop's body is one basic block (no branch but its own test, no op whose
 * compiled form branches): there ptxas hoists a form's set-up (the shared
 * window's base, constant loads) out of the loop; in a body with control
 * flow it recomputes them where they are used (traces/h100/callforms.sass:
 * k_copy_thread hoists them, k_copy_group and the block pipeline's calls do
 * not).  -1: none.
 */
static bool folded_jump(const struct kernel *k, int pc)
{
	const struct insn *op = &k->code[pc];
	if (op->op == OP_BRZ)
		return op->e[0].is_const && branch_kind(k, op) != BRANCH_LOOP;
	/* the then side's jump over the else of an if whose condition is a constant */
	if (op->op != OP_JMP || op->target <= pc)
		return false;
	for (int i = pc - 1; i >= 0; i--)
		if (k->code[i].op == OP_BRZ && k->code[i].target == pc + 1)
			return k->code[i].e[0].is_const;
	return false;
}

static bool straight_loop(const struct kernel *k, const struct loop *l)
{
	for (int pc = l->head + 1; pc < l->back; pc++) {
		const struct insn *op = &k->code[pc];
		if (op->unrolled || folded_jump(k, pc))
			continue;
		if (op->op == OP_BRZ || op->op == OP_JMP)
			return false;
		enum lform_id id = form_of(k, op);
		if (id != LF_COUNT && form_branches(&lform_table[id]))
			return false;
	}
	return true;
}

static int straight_preheader(const struct lower_ctx *c)
{
	const struct loop *in = NULL;
	for (int i = 0; i < c->nloops; i++) {
		const struct loop *l = &c->loops[i];
		if (l->head <= c->pc && c->pc <= l->back && (!in || l->back - l->head < in->back - in->head))
			in = l;
	}
	if (!in || in->pre < 0 || !straight_loop(c->k, in))
		return -1;
	return in->pre;
}

/*
 * Whether ptxas unrolls loop l by 4 (traces/h100/pipelines.sass,
 * with_staging_scope_thread<2> 0x05b0-0x0a70: the fetch loop of LDGSTS and
 * LDGDEPBAR): its body is one basic block and its trip count is known only at
 * run time (its test reads a variable the loop does not change).  The body
 * then runs as four copies and a remainder loop, and every entry first
 * computes the trip count and the remainder (remainder_overhead).  A loop
 * whose exit is the enclosing loop's back edge is left as it is: the
 * overhead would have no op to issue in.
 */
static bool unrolled_by_ptxas(const struct kernel *k, const struct loop *l)
{
	const struct insn *test = &k->code[l->head];
	if (test->op != OP_BRZ || test->unrolled || l->back + 1 >= k->ncode)
		return false;
	enum op after = k->code[l->back + 1].op;
	if (after == OP_JMP || after == OP_FMA)
		return false;
	uint64_t bound = test->e[0].slots & ~l->writes & ~k->const_slots & ~((1ull << SLOT_BUILTINS) - 1);
	return bound != 0 && (test->e[0].slots & l->writes) != 0 && straight_loop(k, l);
}

/*
 * Whether ptxas compiles loop l inside a convergence region of its own: a
 * loop nested in another whose trip count each thread computes (its test
 * reads a variable the loop does not step) gets BSSY before its first test
 * and BSYNC after its exit, once per entry (traces/h100/pipelines.sass, the
 * fetch loops: with_staging_unified<2> 0x0640/0x0ca0,
 * with_staging_scope_thread<2> 0x0540/0x0d50,
 * with_specialized_staging_unified<2> 0x0e50/0x1430; the outer loops have
 * none, their exits meet at the kernel's end).  As with the unrolled loops'
 * overhead, both go into the op after the loop; a loop whose exit is the
 * enclosing loop's back edge, an unrolled loop's op or a preheader has no
 * such op to issue them in.
 */
static bool in_region(const struct lower_ctx *c, const struct loop *l)
{
	const struct kernel *k = c->k;
	const struct insn *test = &k->code[l->head];
	if (test->op != OP_BRZ || test->unrolled || l->back + 1 >= k->ncode || k->code[l->back + 1].op == OP_JMP ||
	    k->code[l->back + 1].unrolled)
		return false;
	if (!(test->e[0].slots & ~l->writes & ~k->const_slots & ~((1ull << SLOT_BUILTINS) - 1)))
		return false; /* its trip count is the same in every thread: no divergent exit */
	bool nested = false;
	for (int i = 0; i < c->nloops; i++) {
		const struct loop *o = &c->loops[i];
		if (o->pre == l->back + 1)
			return false; /* the op after it is the next loop's preheader, which holds hoisted code */
		nested |= o != l && o->head < l->head && o->back > l->back;
	}
	return nested;
}

/*
 * What an entry of a loop ptxas unrolled by 4 issues besides its trips, as
 * with_staging_scope_thread<2> runs it (traces/h100/pipelines.sass): before
 * the first trip (0x05b0-0x0680), per bound of the test the trips left (a
 * subtraction), their minimum (a compare and a select per further bound),
 * the remainder (-trips & 3), its test and branch in a convergence region
 * (BSSY); after the loop (0x0a40-0x0a70) the BSYNC, the test for four trips
 * more and its branch, and the outer BSYNC.  64-bit counters pair every
 * subtraction, compare and select.
 */
static int test_bounds(const struct kernel *k, const struct expr *test)
{
	int bounds = 0;
	for (const int64_t *w = k->pool.words + test->at, *end = w + test->len; w < end;) {
		enum opc op = (enum opc)*w++;
		bounds += op >= OPC_LT && op <= OPC_NE;
		if (op == OPC_PUSH || op == OPC_LOAD || op == OPC_JZ || op == OPC_JMP)
			w++;
	}
	return bounds;
}

static void remainder_entry(struct seq *q, const struct kernel *k, const struct expr *test)
{
	int bounds = test_bounds(k, test);
	bool wide = wide_expr(k, test);
	/* the trips left per bound: IADD3, and its high word's IADD3.X or IMAD.X on the carry */
	uint64_t lows = 0, highs = 0;
	for (int i = 0; i < bounds; i++) {
		int lo = emit(q, IC_ALU, 0, true);
		lows |= dep_bit(lo);
		if (wide)
			highs |= dep_bit(emit_add(q, dep_bit(lo), true));
		if (i == 0)
			emit(q, IC_BRA, 0, false); /* BSSY, where ptxas puts it */
	}
	/* their minimum: per further bound a compare (ISETP, ISETP.EX) and a SEL of each word */
	uint64_t trips = lows | highs;
	for (int i = 1; i < bounds; i++) {
		int cmp = emit(q, IC_ALU, lows, false);
		if (wide)
			cmp = emit(q, IC_ALU, dep_bit(cmp) | highs, false);
		trips = dep_bit(emit(q, IC_ALU, dep_bit(cmp), false));
		if (wide)
			emit(q, IC_ALU, dep_bit(cmp), false);
	}
	/* the remainder, -trips & 3 (IMAD.MOV, LOP3), its test (ISETP, .EX for 64 bits) and branch */
	int at = emit(q, IC_IMAD, trips, false);
	at = emit(q, IC_ALU, dep_bit(at), false);
	at = chain(q, IC_ALU, wide ? 2 : 1, dep_bit(at), false);
	emit(q, IC_BRA, dep_bit(at), false);
}

static void remainder_exit(struct seq *q, const struct kernel *k, const struct expr *test)
{
	/* BSYNC, four trips more? (ISETP, .EX) on the trip count computed at the entry, its branch, the outer BSYNC */
	emit(q, IC_BRA, 0, false);
	int at = chain(q, IC_ALU, wide_expr(k, test) ? 2 : 1, 0, false);
	emit(q, IC_BRA, dep_bit(at), false);
	emit(q, IC_BRA, 0, false);
}

/*
 * Where a loop's entry issues what ptxas computes once per entry: the op
 * just before its head when that op runs once each time the loop is
 * reached (a for's init, a statement, the enclosing loop's test); -1 when
 * it is a jump, the kernel's first op or an unrolled op: the entry's part
 * then goes after the loop with the rest.
 */
static int entry_op(const struct kernel *k, const struct loop *l)
{
	int pc = l->head - 1;
	if (pc < 0 || k->code[pc].unrolled || k->code[pc].op == OP_JMP)
		return -1;
	return pc;
}

/* The variable an op assigns (a statement, an arrive's token, a poll's result); 0 when none. */
static uint64_t writes_of(const struct kernel *k, const struct insn *in)
{
	switch (in->op) {
	case OP_LET:
	case OP_SET:
	case OP_BARRIER_ARRIVE:
	case OP_BARRIER_TRY_WAIT:
	case OP_BARRIER_TEST_WAIT: return is_variable(k, in->slot) ? slot_bit(in->slot) : 0;
	default: return 0;
	}
}

/*
 * Instructions `bits` of form f, which a loop around the op does not change:
 * issued once in the preheader at `where` (placement's answer; none where it
 * is negative or has no sequence), less the form's set-up already there.
 * Returns bits, for the op to drop from its own sequence.
 */
static uint64_t before_loop(struct lower_ctx *c, const struct lform *f, enum lform_id id, uint64_t setup, int where,
			    uint64_t bits)
{
	if (where >= 0 && c->pre[where]) {
		const struct form_inputs no_inputs = {0};
		uint64_t have = c->pre[where]->forms >> id & 1 ? setup : 0;
		int8_t none[3];
		append_form(&c->pre[where]->q, f, &no_inputs, ~(bits & ~have), &none[0], &none[1], &none[2]);
		c->pre[where]->forms |= 1ull << id;
	}
	return bits;
}

/* The op's own sequence into c->seqs[c->pc]; its anchor and form loop into *anchor, *lb, *le. */
static void lower_insn(struct lower_ctx *c, const struct insn *in, int8_t mark[3])
{
	int8_t *anchor = &mark[0], *lb = &mark[1], *le = &mark[2];
	const struct kernel *k = c->k;
	struct seq *q = sink_at(c, c->pc).q;
	*anchor = *lb = *le = -1;
	switch (in->unrolled ? OP_JMP : in->op) {
	case OP_JMP:
	case OP_FMA:
		break; /* a back-edge takes no slot; an fma chain is issued FMA by FMA by the core */
	case OP_LET:
	case OP_SET: {
		/* into an int, or a size_t whose reads want its low word alone: 32 bits where they suffice */
		bool low = !(k->wide_slots & slot_bit(in->slot)) || (c->low_vars & slot_bit(in->slot));
		int at = lower_expr_at(c, &in->e[0], !in->narrow, false, false, low, (c->address_vars & slot_bit(in->slot)) != 0);
		if (at < 0)
			at = emit(q, IC_ALU, 0, false); /* MOV of an immediate, an invariant or a value computed before */
		q->code[at].flags |= LI_RESULT;
		*anchor = (int8_t)at;
		break;
	}
	case OP_BRZ: {
		/*
		 * An if on a condition known at compile time (a kernel parameter is a
		 * template parameter): nvcc keeps one side and no branch
		 * (validation.sass, primitive_copies<true> has no test of kPerGroup).
		 * The op runs without an instruction; its lanes go the one way.  A
		 * loop's constant test keeps its bottom branch (while (true)).
		 */
		if (in->e[0].is_const && branch_kind(k, in) != BRANCH_LOOP)
			break;
		if (in->reload && branch_kind(k, in) == BRANCH_LOOP)
			emit(q, IC_UNI, 0, false); /* ULDC of the bound (pipelines.sass with_staging_unified<4> 0x06f0, 0x0c60) */
		int at = lower_expr_at(c, &in->e[0], !in->narrow, false, true, false, false);
		enum branch_kind kind = branch_kind(k, in);
		if (kind == BRANCH_PREDICATED) {
			/* the body issues under a predicate: only the condition's compare remains */
			if (at < 0)
				at = emit(q, IC_ALU, 0, !in->e[0].is_const);
			*anchor = (int8_t)at;
			break;
		}
		if (kind == BRANCH_REGION) {
			/*
			 * A branch that may diverge around a warp-level side effect is a
			 * convergence region: BSSY before it, BSYNC where the paths meet
			 * (traces/h100/forms.sass, diverge; the BSYNC issues here, on the
			 * path that reaches it).
			 */
			emit(q, IC_BRA, 0, false);
			emit(q, IC_BRA, 0, false);
		}
		/*
		 * nvcc computes a loop's test early in the trip, so its bottom branch
		 * finds the predicate ready; an if's branch reads the compare just made.
		 */
		*anchor = (int8_t)emit(q, IC_BRA, kind == BRANCH_LOOP ? 0 : dep_bit(at), at < 0 && !in->e[0].is_const);
		/*
		 * LI_RESULT: the lanes that take it fetch its target (issue.c).  A loop's
		 * test is, compiled, the bottom BRA back to its top: leaving the loop
		 * falls through, and each trip pays the back-edge (exec.c, OP_JMP).
		 */
		if (kind != BRANCH_LOOP)
			q->code[*anchor].flags |= LI_RESULT;
		break;
	}
	case OP_EXIT: *anchor = (int8_t)emit(q, IC_BRA, 0, false); break;
	case OP_FENCE_PROXY_ASYNC: {
		/* traces/h100/gemm.sass, fence.proxy.async.shared::cta: MEMBAR.ALL.CTA, then FENCE.VIEW.ASYNC.S after it is done */
		int membar = emit(q, IC_BRA, 0, false);
		q->code[membar].flags |= LI_MEMBAR;
		*anchor = (int8_t)emit(q, IC_BRA, dep_bit(membar), false);
		break;
	}
	case OP_MMA: {
		/*
		 * traces/h100/gemm.sass (wmma 16x16x16 on a 32x32 warp tile): per k-step an
		 * LDSM.16.M88.4 per A fragment and an LDSM.16.MT88.4 (B row-major) or M88.4
		 * (B n-major) per 16 columns of B, then two HMMA.16816.F32 per 16x16x16 (one per
		 * m16n8k16), each repeat unrolled.  The last LDSM is the anchor: the op's shared
		 * reads happen there, and it says when each fragment is back (exec_mma).  The
		 * HMMAs are the form's loop, issued rep times.  Each LDSM's address is an IMAD.U32
		 * of the lane's row offset and the tile's.
		 */
		int n8 = in->mma.n8 ? in->mma.tn : 2 * in->mma.tn, ldsm = mma_ldsm_count(in);
		int start = q->n;
		bool lanes = !in->mma.n8 && start + WMMA_LANE_N + 2 * ldsm + in->mma.tm * n8 <= SEQ_MAX;
		int sr = -1;
		if (lanes) {
			/*
			 * wmma::load_matrix_sync reads %laneid: ptxas re-reads SR_LANEID and
			 * recomputes each lane's row and column in the fragment every time
			 * the loop around the loads comes round (gemm.sass gemm_ws_bulk<3>
			 * 0x04e0-0x05d0, the consumer's k-tile loop; the second k-step of the
			 * unrolled loop reuses them).  The S2R goes first and what does not
			 * wait for it next, in its shadow: the tiles' addresses (gemm.sass
			 * gemm_cp_async<3> 0x0c90-0x0d60, the stage's modulo between the S2R
			 * and its first reader), then the lane's row ((lane >> 3 & 1) * 8 +
			 * (lane & 7)) and column ((lane >> 4) * 8), row * lda + column for A
			 * and row * ldb + column for B.
			 */
			sr = emit(q, IC_S2R, 0, false);
			q->code[sr].flags |= LI_SREG_THREAD;
		}
		int before_index = q->n;
		int a = lower_index(c, &in->src), b = lower_index(c, &in->dst);
		uint64_t inputs = dep_bit(a) | dep_bit(b);
		bool ext = false;
		int addr_n = lanes ? ldsm : 0;
		if (q->n + (lanes ? WMMA_LANE_N - 1 : 0) + addr_n + ldsm + in->mma.tm * n8 > SEQ_MAX) {
			/* a long index: its arithmetic stays outside the form */
			q->n = before_index;
			inputs = 0;
			ext = true;
		}
		int lane_a = -1, lane_b = -1;
		c->mma_lane_at = q->n;
		if (lanes) {
			int hi = emit(q, IC_ALU, dep_bit(sr), false);  /* SHF lane >> 3 */
			int lo = emit(q, IC_ALU, dep_bit(sr), false);  /* LOP3 lane & 7 */
			int hi8 = emit(q, IC_IMAD, dep_bit(hi), false); /* IMAD.SHL (lane >> 3) * 8 */
			int row = emit(q, IC_ALU, dep_bit(hi8) | dep_bit(lo), false); /* LOP3 (.. & 8) | (lane & 7) */
			int col = emit(q, IC_ALU, dep_bit(sr), false);  /* SHF lane >> 4 */
			int col8 = emit(q, IC_IMAD, dep_bit(col), false); /* IMAD.SHL (lane >> 4) * 8 */
			lane_a = emit(q, IC_IMAD, dep_bit(row) | dep_bit(col8), false);
			lane_b = emit(q, IC_IMAD, dep_bit(row) | dep_bit(col8), false);
		}
		c->mma_lane_n = q->n - c->mma_lane_at;
		int frag[MMA_MAX_INSNS];
		if (lane_a >= 0) {
			int addr[MMA_MAX_INSNS];
			for (int i = 0; i < ldsm; i++)
				addr[i] = emit(q, IC_IMAD, dep_bit(i < in->mma.tm ? lane_a : lane_b) | inputs, ext || !inputs);
			for (int i = 0; i < ldsm; i++)
				frag[i] = emit(q, IC_LDS, dep_bit(addr[i]), false);
		} else {
			for (int i = 0; i < ldsm; i++)
				frag[i] = emit(q, IC_LDS, inputs, ext || !inputs);
		}
		*anchor = (int8_t)frag[ldsm - 1];
		c->mma_ldsm_at = frag[0];
		/*
		 * Each HMMA waits for its own A and B fragments' LDSMs, not for the last (gemm.sass
		 * gemm_ws_bulk<3> 0x0960-0x09d0: the first HMMA waits on the scoreboards of the first A
		 * and B LDSMs, the next ones on theirs); exec_mma says when each fragment is back.
		 */
		*lb = (int8_t)q->n;
		for (int i = 0; i < in->mma.tm; i++)
			for (int j = 0; j < n8; j++)
				emit(q, IC_MMA, dep_bit(frag[i]) | dep_bit(frag[in->mma.tm + j / 2]), false);
		*le = (int8_t)q->n;
		if (start > 0) /* the S2R is not the sequence's first: every execution issues it */
			c->mma_lane_n = 0;
		break;
	}
	case OP_NANOSLEEP: {
		/* the duration's arithmetic, then NANOSLEEP (a control instruction) */
		int at = lower_expr_at(c, &in->e[0], wide_expr(k, &in->e[0]), false, false, false, false);
		*anchor = (int8_t)emit(q, IC_BRA, dep_bit(at), false);
		break;
	}
	case OP_BARRIER_TRY_WAIT:
	case OP_BARRIER_TEST_WAIT: {
		/*
		 * The token's or parity's arithmetic, SYNCS.PHASECHK.TRANS64[.TRYWAIT] P, [bar], R (the anchor,
		 * as in the waits' forms), then the SEL that turns its predicate into the variable.
		 */
		int at = lower_expr_at(c, &in->e[0], wide_expr(k, &in->e[0]), false, false, false, false);
		*anchor = (int8_t)emit(q, IC_SYNCS, dep_bit(at), false);
		int sel = emit(q, IC_ALU, dep_bit(*anchor), false);
		if (sel >= 0 && sel < SEQ_MAX)
			q->code[sel].flags |= LI_RESULT;
		break;
	}
	default: {
		enum lform_id id = form_of(k, in);
		if (id == LF_COUNT)
			break;
		int a = lower_index(c, &in->src), b = lower_index(c, &in->dst);
		uint64_t counts = 0;
		for (int i = 0; i < 2; i++) {
			/* a count (compute's k, shfl's steps) is a loop bound, not an input of the op's own code */
			bool count = i == 0 && (in->op == OP_COMPUTE || in->op == OP_SHFL);
			if (in->e[i].is_const || in->e[i].len == 0 || count)
				continue;
			counts |= dep_bit(lower_expr_at(c, &in->e[i], wide_expr(k, &in->e[i]), false, false, false, false));
		}
		struct form_inputs inputs = {.shared = dep_bit(b), .global = dep_bit(a), .counts = counts}, no_inputs = {0};
		/*
		 * The form's set-up: in registers where the form ran earlier in the
		 * block; inside a loop, hoisted to the outermost preheader once per
		 * form (ptxas's padding stays: it precedes each block's first LDGSTS).
		 */
		const struct lform *f = &lform_table[id];
		uint64_t setup = setup_of(f), pads = pads_of(f), drop = 0;
		/* stages_count = 1: the stage index is always 0, so ptxas folds its advance and wrap away */
		uint64_t one_stage = in->obj >= 0 && k->pipes[in->obj].stages == 1 ? f->per_stage : 0;
		if (c->forms_seen >> id & 1) {
			drop = setup;
		} else {
			int where = straight_preheader(c);
			if (where >= 0 && c->pre[where]) {
				drop = setup & ~pads;
				if (!(c->pre[where]->forms >> id & 1)) {
					int8_t none[3];
					append_form(&c->pre[where]->q, f, &no_inputs, ~drop, &none[0], &none[1], &none[2]);
					c->pre[where]->forms |= 1ull << id;
				}
			}
		}
		if (in->op == OP_COMPUTE && in->src2.buf < 0) {
			/*
			 * An input address no loop around the op changes (with_single_stage's shared[tid]): ptxas
			 * computes it once before the loop, the window base included, and the loop issues only
			 * the LDS (traces/h100/validation_pcsamp/L2_with_single_stage_1_256_1_0: LDS R2, [R8]).
			 */
			int where = placement(c, (in->src.index.slots | in->e[1].slots) & ~k->const_slots);
			if (where != c->pc)
				drop |= before_loop(c, f, id, setup, where, anchor_inputs(f));
		}
		if (in->op == OP_MEMCPY_ASYNC && in->own_register) {
			/*
			 * Its shared destination's base is in a register (the kernel's SASS): what of the form
			 * computes that address alone, outside the per-round loop, is issued once before the
			 * loop around the op, where it has a preheader (with_single_stage's S2R SR_CgaCtaId,
			 * MOV, VIADD and LEA before its loop, traces/h100/pipelines.sass 0x04b0-0x0570).
			 */
			uint64_t rounds = f->loop_begin >= 0 ? (~0ull << f->loop_begin) & ~(~0ull << f->loop_end) : 0;
			uint64_t base = f->to_shared & ~f->to_global & ~rounds & ~(1ull << f->anchor);
			int where = placement(c, 0);
			drop |= before_loop(c, f, id, setup, where != c->pc ? where : -1, base);
		}
		if (in->op == OP_PIPELINE_MEMCPY_ASYNC && in->own_register)
			drop |= ~(1ull << f->anchor); /* its address is ready in its register: the LDGSTS alone */
		append_form(q, f, &inputs, drop | one_stage, anchor, lb, le);
		c->forms_seen |= 1ull << id;
		if (in->op == OP_COMPUTE && in->src2.buf >= 0) {
			/* the second input: its address and another LDS (and I2F); the op's anchor stays the first */
			int8_t first[3] = {*anchor, *lb, *le}, none[3];
			int i2 = lower_index(c, &in->src2);
			struct form_inputs second = inputs;
			second.shared |= dep_bit(i2);
			append_form(q, f, &second, setup, &none[0], &none[1], &none[2]);
			*anchor = first[0], *lb = first[1], *le = first[2];
		}
		break;
	}
	}
}

/* The loops of the compiled code (an unrolled one is straight code, not a loop); -1 when out of memory. */
static int find_loops(struct lower_ctx *c)
{
	const struct kernel *k = c->k;
	int n = 0;
	for (int pc = 0; pc < k->ncode; pc++)
		n += k->code[pc].op == OP_JMP && k->code[pc].target <= pc && !k->code[pc].unrolled;
	c->loops = calloc((size_t)(n > 0 ? n : 1), sizeof *c->loops);
	if (!c->loops)
		return -1;
	for (int pc = 0; pc < k->ncode; pc++) {
		const struct insn *in = &k->code[pc];
		if (in->op != OP_JMP || in->target > pc || in->unrolled)
			continue;
		struct loop l = {.head = in->target, .back = pc, .pre = -1};
		const struct insn *head = &k->code[l.head];
		if (l.head > 0 && k->code[l.head - 1].op == OP_LET && !k->code[l.head - 1].unrolled && head->op == OP_BRZ &&
		    head->target == pc + 1)
			l.pre = l.head - 1; /* a for: its init runs once per entry */
		for (int i = l.head; i <= l.back; i++)
			l.writes |= writes_of(k, &k->code[i]);
		l.remat = in->remat;
		c->loops[c->nloops++] = l;
	}
	return 0;
}

_Static_assert(LF_COUNT <= 64, "forms_seen is a 64-bit set of forms");

/* The lowered form of op pc from its sequence; -1 when out of memory. */
static int finish(struct kernel *k, int pc, const struct seq *q, const int8_t mark[3])
{
	struct linst *code = NULL;
	if (q->n > 0) {
		code = malloc((size_t)q->n * sizeof *code);
		if (!code)
			return -1;
		memcpy(code, q->code, (size_t)q->n * sizeof *code);
	}
	k->lowered[pc] = (struct lform){.name = op_table[k->code[pc].op].name, .source = "lowered", .code = code,
					.n = (uint8_t)q->n, .anchor = mark[0], .loop_begin = mark[1], .loop_end = mark[2]};
	/*
	 * An mma's HMMAs are its form's loop, issued once per repeat: the last
	 * of the loop goes back to its first through issue_one, which counts
	 * the repeats; the others issue as most instructions do.
	 */
	struct lform *f = &k->lowered[pc];
	f->plain = lform_plain(f);
	if (k->code[pc].op == OP_LET || k->code[pc].op == OP_SET) {
		uint64_t loads = 0;
		for (int i = 0; i < f->n && i < 64; i++) {
			if (f->code[i].flags & LI_LOCAL)
				loads |= 1ull << i;
			else if (f->code[i].deps & (loads | f->after_load))
				f->after_load |= 1ull << i;
		}
		f->plain &= ~f->after_load; /* issue_one gives its result the load's time */
	}
	if (k->code[pc].op == OP_MMA && f->loop_begin >= 0 && f->loop_end > 0 && f->loop_end <= 64)
		f->plain &= ~(1ull << (f->loop_end - 1));
	/* a wmma's later trips skip its lane offsets: issue_one steps over them after the instruction before */
	const struct insn *in = &k->code[pc];
	if (in->op == OP_MMA && in->mma.lane_n && in->mma.lane_at > 1 && in->mma.lane_at <= 64)
		f->plain &= ~(1ull << (in->mma.lane_at - 1));
	return 0;
}

uint64_t lform_plain(const struct lform *f)
{
	uint64_t plain = 0;
	for (int i = 0; i + 1 < f->n && i < 64; i++) {
		const struct linst *li = &f->code[i];
		/* a per-thread S2R or a SHFL may wait behind the shared-memory port (issue.c port_bubble) */
		bool queued = (li->cls == IC_S2R && (li->flags & LI_SREG_THREAD)) || li->cls == IC_SHFL;
		if (!(li->flags & (LI_LOCAL | LI_LDC | LI_ARRIVE | LI_MEMBAR | LI_TAKEN)) && li->cls != IC_LDGSTS &&
		    !queued && i != f->anchor)
			plain |= 1ull << i;
	}
	return plain;
}

/*
 * An mma's places in its sequence: its first LDSM, where a wmma's lane
 * offsets begin, and when the wmma reads SR_LANEID and computes them: in the
 * first trip of the #pragma unroll loop right around it, whose later trips
 * reuse them (gemm.sass gemm_ws_bulk<3>: the k-steps' second LDSMs at
 * 0x0b90-0x0c00 read R58 and R59 from the first's), else in every execution.
 */
static void mma_places(const struct lower_ctx *c, struct insn *in)
{
	const struct kernel *k = c->k;
	in->mma.lane_n = (uint8_t)c->mma_lane_n;
	in->mma.lane_at = (uint8_t)c->mma_lane_at;
	in->mma.ldsm_at = (uint8_t)c->mma_ldsm_at;
	in->mma.lane_slot = -1;
	if (!in->mma.lane_n)
		return;
	/* the innermost loop around the op, unrolled or not: its back-edge is the nearest JMP back over it */
	int back = -1;
	for (int pc = c->pc + 1; pc < k->ncode && back < 0; pc++)
		if (k->code[pc].op == OP_JMP && k->code[pc].target <= c->pc)
			back = pc;
	if (back < 0 || !k->code[back].unrolled || k->code[back].target < 1)
		return;
	const struct insn *init = &k->code[k->code[back].target - 1];
	if (init->op == OP_LET && init->unrolled && init->e[0].is_const) {
		in->mma.lane_slot = (int16_t)init->slot;
		in->mma.lane_first = init->e[0].value;
	}
}

/*
 * The variables a "remat" loop recomputes rather than reads: each set by one let alone (no other
 * statement writes it), from builtins and constants only (gemm_warp_specialized_bulk's wm and wn,
 * from warp), their definitions into def and their bits into *vars.
 */
static void find_builtin_defs(const struct kernel *k, const struct expr **def, uint64_t *vars)
{
	uint64_t builtins = (1ull << SLOT_BUILTINS) - 1, written = 0, twice = 0;
	for (int pc = 0; pc < k->ncode; pc++) {
		uint64_t w = writes_of(k, &k->code[pc]);
		twice |= written & w;
		written |= w;
	}
	for (int pc = 0; pc < k->ncode; pc++) {
		const struct insn *in = &k->code[pc];
		if (in->op != OP_LET || in->unrolled || in->slot >= 63 || (twice >> in->slot & 1) || in->e[0].is_const ||
		    (in->e[0].slots & ~builtins) || !(in->e[0].slots & builtins))
			continue;
		def[in->slot] = &in->e[0];
		*vars |= slot_bit(in->slot);
	}
}

int lower_kernel(struct kernel *k)
{
	int rc = -1;
	struct lower_ctx c = {.k = k};
	int n = k->ncode > 0 ? k->ncode : 1;
	int8_t(*marks)[3] = calloc((size_t)n, sizeof *marks);
	bool *target = calloc((size_t)n + 1, sizeof *target);
	c.pre = calloc((size_t)n, sizeof *c.pre);
	c.hoisted_reads = calloc((size_t)n, sizeof *c.hoisted_reads);
	k->lowered = calloc((size_t)n, sizeof *k->lowered);
	if (!marks || !target || !c.pre || !c.hoisted_reads || !k->lowered || find_loops(&c))
		goto out;
	for (int i = 0; i < c.nloops; i++) {
		c.loops[i].remainder = unrolled_by_ptxas(k, &c.loops[i]);
		c.loops[i].region = in_region(&c, &c.loops[i]);
	}
	uint64_t builtins = (1ull << SLOT_BUILTINS) - 1, remat_vars = 0;
	if (!(c.def = calloc(63, sizeof *c.def)))
		goto out;
	find_builtin_defs(k, c.def, &remat_vars);
	c.low_vars = low_word_vars(k, false);
	c.address_vars = low_word_vars(k, true);
	for (int i = 0; i < c.nloops; i++)
		if (c.loops[i].pre >= 0 && !c.pre[c.loops[i].pre] &&
		    !(c.pre[c.loops[i].pre] = calloc(1, sizeof *c.pre[c.loops[i].pre])))
			goto out;
	for (int pc = 0; pc < k->ncode; pc++)
		if ((k->code[pc].op == OP_BRZ || k->code[pc].op == OP_JMP) && k->code[pc].target >= 0 &&
		    k->code[pc].target <= k->ncode && !folded_jump(k, pc))
			target[k->code[pc].target] = true;
	for (int pc = 0; pc < k->ncode; pc++) {
		struct insn *in = &k->code[pc];
		in->reads = (in->e[0].slots | in->e[1].slots | in->dst.index.slots | in->src.index.slots | in->src2.index.slots |
			     in->bar_index.slots) & ~builtins & ~k->unrolled_slots & ~(1ull << 63);
		if (target[pc]) { /* paths meet here: what one of them computed is not known on the other */
			c.block.n = 0;
			c.forms_seen = 0;
			c.block_balance = 0;
		}
		c.pc = pc;
		c.op.n = 0;
		c.op.before = c.block_balance;
		c.op.full = false;
		c.remat_slots = 0;
		for (int i = 0; i < c.nloops; i++)
			if (c.loops[i].remat && c.loops[i].head <= pc && c.loops[i].back >= pc)
				c.remat_slots = builtins | remat_vars;
		for (int i = 0; i < c.nloops; i++) {
			if (c.loops[i].back + 1 != pc)
				continue;
			struct seq *q = sink_at(&c, pc).q;
			if (c.loops[i].region) /* its BSSY; the unrolled loop's overhead ends with the BSYNC */
				emit(q, IC_BRA, 0, false);
			if (c.loops[i].remainder) {
				if (entry_op(k, &c.loops[i]) < 0)
					remainder_entry(q, k, &k->code[c.loops[i].head].e[0]);
				remainder_exit(q, k, &k->code[c.loops[i].head].e[0]);
			} else if (c.loops[i].region) {
				emit(q, IC_BRA, 0, false);
			}
		}
		for (int i = 0; i < c.nloops; i++)
			if (c.loops[i].remainder && entry_op(k, &c.loops[i]) == pc) /* before this op's own instructions */
				remainder_entry(sink_at(&c, pc).q, k, &k->code[c.loops[i].head].e[0]);
		lower_insn(&c, in, marks[pc]);
		if (in->op == OP_MMA)
			mma_places(&c, in);
		avail_kill(&c.block, writes_of(k, in));
		for (int i = 0; i < c.op.n; i++)
			c.block_balance += (c.op.code[i].cls == IC_ALU) - fma_heavy(c.op.code[i].cls);
		if (!c.pre[pc] && finish(k, pc, &c.op, marks[pc]))
			goto out;
	}
	/* a preheader's sequence is complete once the loops after it are lowered */
	for (int pc = 0; pc < k->ncode; pc++) {
		k->code[pc].reads |= c.hoisted_reads[pc] & ~(1ull << 63);
		if (c.pre[pc] && finish(k, pc, &c.pre[pc]->q, marks[pc]))
			goto out;
	}
	if (c.nlocals) {
		k->local_reads = malloc((size_t)c.nlocals * sizeof *k->local_reads);
		if (!k->local_reads)
			goto out;
		memcpy(k->local_reads, c.locals, (size_t)c.nlocals * sizeof *k->local_reads);
		k->nlocal_reads = c.nlocals;
	}
	rc = 0;
out:
	for (int pc = 0; c.pre && pc < k->ncode; pc++)
		free(c.pre[pc]);
	free(c.pre);
	free(marks);
	free(target);
	free(c.hoisted_reads);
	free(c.loops);
	free(c.def);
	return rc;
}

void lower_free(struct kernel *k)
{
	for (int pc = 0; k->lowered && pc < k->ncode; pc++)
		free((void *)k->lowered[pc].code);
	free(k->lowered);
	k->lowered = NULL;
	free(k->local_reads);
	k->local_reads = NULL;
	k->nlocal_reads = 0;
}

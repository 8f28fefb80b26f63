/*
 * expr: integer expressions of kernel descriptions, compiled once.
 *
 * Source text such as "block * block_size + grid_size * batch" is parsed
 * with C precedence, helpers like block_batch(b) are inlined, constant
 * sub-expressions (parameters included) are folded, and what is left
 * becomes a short stack program over int64 evaluated per thread.  Names
 * resolve through a caller-supplied lookup to constants or register slots.
 */
#ifndef SMSIM_EXPR_H
#define SMSIM_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ORDER OPC: the stack machine's instructions. */
enum opc {
	OPC_PUSH, /* operand: value */
	OPC_LOAD, /* operand: slot */
	OPC_NEG,
	OPC_LNOT,
	OPC_BNOT,
	OPC_BOOL,
	OPC_ADD,
	OPC_SUB,
	OPC_MUL,
	OPC_DIV,
	OPC_MOD,
	OPC_SHL,
	OPC_SHR,
	OPC_AND,
	OPC_OR,
	OPC_XOR,
	OPC_LT,
	OPC_LE,
	OPC_GT,
	OPC_GE,
	OPC_EQ,
	OPC_NE,
	OPC_MIN,
	OPC_MAX,
	OPC_JZ,  /* operand: forward offset; pops the condition */
	OPC_JMP, /* operand: forward offset */
	OPC_LOCAL, /* unary: an element of a per-thread array in local memory (a helper with "local_array"); its value is the operand */
	OPC_INT32, /* unary: the operand converted to int (a helper with "type": "int"); a value int cannot hold is a fault */
};

enum expr_fault { EXPR_OK = 0, EXPR_DIV_ZERO, EXPR_BAD_SHIFT, EXPR_OVERFLOW };

static inline int64_t expr_shift_right(int64_t a, int64_t b)
{
	return a >= 0 ? a >> b : (int64_t)~(~(uint64_t)a >> b);
}

/*
 * Index arithmetic that leaves int64 is a bug in the kernel description: a
 * wrapped value would quietly address the wrong element, or pass a bounds
 * check it should fail, so overflow is a fault as it is undefined in C.
 */
static inline enum expr_fault expr_apply(enum opc op, int64_t a, int64_t b, int64_t *r)
{
	switch (op) {
	case OPC_ADD: return __builtin_add_overflow(a, b, r) ? EXPR_OVERFLOW : EXPR_OK;
	case OPC_SUB: return __builtin_sub_overflow(a, b, r) ? EXPR_OVERFLOW : EXPR_OK;
	case OPC_MUL: return __builtin_mul_overflow(a, b, r) ? EXPR_OVERFLOW : EXPR_OK;
	case OPC_DIV:
	case OPC_MOD:
		if (b == 0)
			return EXPR_DIV_ZERO;
		if (a == INT64_MIN && b == -1)
			return EXPR_OVERFLOW;
		*r = op == OPC_DIV ? a / b : a % b;
		return EXPR_OK;
	case OPC_SHL:
		if (b < 0 || b > 63)
			return EXPR_BAD_SHIFT;
		/* a << b is a * 2^b: a bit shifted out, or into the sign, is an overflow (-1 << 63 is not). */
		*r = (int64_t)((uint64_t)a << b);
		return expr_shift_right(*r, b) == a ? EXPR_OK : EXPR_OVERFLOW;
	case OPC_SHR:
		if (b < 0 || b > 63)
			return EXPR_BAD_SHIFT;
		*r = expr_shift_right(a, b);
		return EXPR_OK;
	case OPC_AND: *r = a & b; return EXPR_OK;
	case OPC_OR: *r = a | b; return EXPR_OK;
	case OPC_XOR: *r = a ^ b; return EXPR_OK;
	case OPC_LT: *r = a < b; return EXPR_OK;
	case OPC_LE: *r = a <= b; return EXPR_OK;
	case OPC_GT: *r = a > b; return EXPR_OK;
	case OPC_GE: *r = a >= b; return EXPR_OK;
	case OPC_EQ: *r = a == b; return EXPR_OK;
	case OPC_NE: *r = a != b; return EXPR_OK;
	case OPC_MIN: *r = a < b ? a : b; return EXPR_OK;
	case OPC_MAX: *r = a > b ? a : b; return EXPR_OK;
	default: return EXPR_OVERFLOW;
	}
}

/* All compiled expressions of one program live in one pool. */
struct expr_pool {
	int64_t *words;
	uint32_t len, cap;
};

struct expr {
	uint32_t at;     /* first word in the pool */
	uint32_t len;    /* words; 0 when is_const */
	bool is_const;   /* value holds the result */
	bool per_thread; /* reads a slot that differs between threads */
	uint8_t slow_divides; /* '/' and '%' by other than a constant power of two */
	uint8_t shape;        /* enum expr_shape */
	uint8_t shape_op;     /* enum opc: a shape's operator */
	/*
	 * Nonzero: in every lane, the value is a warp-uniform one plus the lane times a warp-uniform step, when
	 * the slots it reads other than these (the lane slots among 0..7 it reads, a bit each) are warp-uniform:
	 * expr_eval_lanes then evaluates two lanes and fills the others (see expr_names.lane_slots).
	 */
	uint8_t lane_affine;
	uint16_t shape_slot;  /* a shape's first slot */
	int64_t value;        /* is_const: the value; a shape with a second operand: the constant or the slot */
	uint64_t slots;  /* bit i: reads register slot i (slots from 63 on all set bit 63) */
	uint32_t lin_at; /* nonzero: where the expression's linear form starts in the pool (below) */
	uint32_t cond_at; /* nonzero: where its condition form starts in the pool (below) */
	uint32_t sel_at;  /* nonzero: where its select form starts in the pool (below) */
};

/*
 * A linear form: k plus a sum of terms coef * atom, an atom a slot or a
 * slot divided by (or modulo) a nonzero constant, for a program of sums,
 * differences, products and left shifts by constants, negations, int
 * conversions and local-array elements.  Where every slot a term reads lies
 * within +-bound, no value the program computes on the way can leave int64
 * (or an int conversion's range), so the program does not fault and its
 * value is the form's, summed in any order: a caller adds the terms up
 * without the stack machine, and runs the program where a slot lies outside
 * the bound.  Words at lin_at: the term count, k, the bound, 4 words a term.
 */
enum { EXPR_LIN_TERMS, EXPR_LIN_K, EXPR_LIN_BOUND, EXPR_LIN_HEAD };
enum { EXPR_TERM_SLOT, EXPR_TERM_OP, EXPR_TERM_DIV, EXPR_TERM_COEF, EXPR_TERM_WORDS };

/*
 * A condition form: one or two comparisons of linear forms (a value's truth
 * is a comparison with 0), the two joined by && or ||, for a program such as
 * a loop's "i < n && i < j + stages" or "!flag".  Where every slot a form
 * reads lies within +-bound, no value the program computes leaves int64, so
 * it does not fault whichever side of a jump it takes, and its value is the
 * comparisons' joined.  Words at cond_at: the comparison count, the join
 * (OPC_AND or OPC_OR; 0 for one), the bound, then each comparison: its
 * operator (OPC_LT..OPC_NE) and its two sides, each a term count, k and 4
 * words a term.
 */
enum { EXPR_COND_CMPS, EXPR_COND_JOIN, EXPR_COND_BOUND, EXPR_COND_HEAD };

/*
 * A select form: c ? a : b with c one comparison of linear forms (as in a
 * condition form) and a and b linear, for a program such as the cp.async
 * GEMM's "chunk < 256 ? kt * 2048 + chunk * 8 : kt * 2048 + (chunk - 256) *
 * 8".  Where every slot that c and the side it picks read lies within
 * +-bound, neither faults, and the program's value is that side's (the
 * other is not run).  Words at sel_at: the bound, c's operator and its two
 * sides, then a's and b's forms, each a term count, k and 4 words a term.
 */
enum { EXPR_SEL_BOUND, EXPR_SEL_HEAD };

/* Adds the term at t for a slot value x to *acc; false where x lies outside bound. */
static inline bool expr_lin_term(const int64_t *t, int64_t x, uint64_t bound, uint64_t *acc)
{
	if ((uint64_t)x + bound > 2 * bound)
		return false;
	if (t[EXPR_TERM_OP] == OPC_DIV)
		x /= t[EXPR_TERM_DIV];
	else if (t[EXPR_TERM_OP] == OPC_MOD)
		x %= t[EXPR_TERM_DIV];
	*acc += (uint64_t)x * (uint64_t)t[EXPR_TERM_COEF];
	return true;
}

/*
 * Programs simple enough to run without the stack machine (a loop bound,
 * an increment): callers that evaluate one thread at a time may apply the
 * operator themselves, through expr_apply, as expr_eval_code would.
 */
enum expr_shape {
	EXPR_SHAPE_NONE,
	EXPR_SHAPE_SLOT,       /* slot shape_slot */
	EXPR_SHAPE_SLOT_CONST, /* slot shape_slot shape_op the constant value */
	EXPR_SHAPE_SLOT_SLOT,  /* slot shape_slot shape_op slot value */
	EXPR_SHAPE_LINEAR,     /* none of those, with a linear form at lin_at */
	EXPR_SHAPE_COND,       /* none of those, with a condition form at cond_at */
};

enum expr_name_kind { EXPR_NAME_UNKNOWN, EXPR_NAME_CONST, EXPR_NAME_SLOT };

struct expr_helper {
	const char *name;
	const char *params[8];
	int nparams;
	const char *body;
	bool local_array; /* the helper stands for a run-time indexed per-thread array: a call is a local-memory load */
	bool returns_int; /* "type": "int": the helper returns int, as the examples' block_batch lambda does */
};

/* How identifiers resolve: a constant value, or a per-thread register slot. */
struct expr_names {
	enum expr_name_kind (*lookup)(void *ctx, const char *name, int64_t *value_or_slot, bool *per_thread);
	void *ctx;
	const struct expr_helper *helpers;
	size_t nhelpers;
	/*
	 * Optional (NULL: none): puts up to max of the names lookup knows into out and
	 * returns how many, so that an undefined name can be answered with "did you mean".
	 */
	size_t (*list)(void *ctx, const char **out, size_t max);
	/*
	 * Slots among 0..7 whose value in lane l of a warp is a warp-uniform value plus l times a constant
	 * (tid, lane), whatever the program does: never assigned.  Expressions affine in them get lane_affine.
	 */
	uint8_t lane_slots;
};

/* Compiles src; on error writes a message (with the column) into err and returns -1. */
int expr_compile(struct expr_pool *pool, const char *src, const struct expr_names *names, struct expr *out,
		 char *err, size_t errsz);

/* Evaluates with a thread's registers; *fault is set (and 0 returned) on a fault. */
int64_t expr_eval_code(const struct expr_pool *pool, const struct expr *e, const int64_t *slots,
		       enum expr_fault *fault);

static inline int64_t expr_eval(const struct expr_pool *pool, const struct expr *e, const int64_t *slots,
				enum expr_fault *fault)
{
	return e->is_const ? e->value : expr_eval_code(pool, e, slots, fault);
}

/*
 * Evaluates for every lane in mask at once, register slot i of lane l at
 * regs[l * lane_stride + i * slot_stride], as expr_eval_code would lane by
 * lane (out[l] is 0 where it faulted), but faster.  A slot i < 63 with bit i
 * set in uniform has one value in every lane of mask: it is read once, and
 * what is computed from it alone once.  Returns the lowest lane
 * that faulted, with its fault in *fault, or -1; or EXPR_LANES_BY_THREAD for
 * a program it does not run warp-wide (a jump: &&, ||, ?:, or a deep stack),
 * which the caller evaluates lane by lane with expr_eval_code.  Lanes outside
 * mask between its lowest and highest may be written.  A lane_affine
 * expression whose other slots are all in uniform runs, jumps or not, as its
 * lowest and highest lanes of mask (as expr_eval_code would) with the lanes
 * between filled in, unless one of the two faults (then as above).
 */
#define EXPR_LANES_BY_THREAD (-2)
int expr_eval_lanes(const struct expr_pool *pool, const struct expr *e, const int64_t *regs, size_t lane_stride,
		    size_t slot_stride, uint64_t uniform, uint32_t mask, int64_t out[32], enum expr_fault *fault);

/*
 * A full warp's lane_affine expression as expr_eval_lanes would run it, without the lanes between:
 * true with lane 0's and lane 31's values in ends and the step from each lane to the next in *step,
 * every lane's value ends[0] + lane * step, none faulting; false where expr_eval_lanes would not take
 * its affine path (not lane_affine, another slot it reads not in uniform, or an end faulted).
 */
bool expr_eval_rise(const struct expr_pool *pool, const struct expr *e, const int64_t *regs, size_t lane_stride,
		    size_t slot_stride, uint64_t uniform, int64_t ends[2], int64_t *step);
/* out[l] = first + l * step for the 32 lanes (the lanes of a rise that expr_eval_rise left out). */
void expr_fill_rise(int64_t out[32], int64_t first, int64_t step);

/*
 * out[l] = a[l] op (b ? b[l] : c) for the lanes of mask, as expr_apply
 * lane by lane: a simple shape for a warp (out[l] is 0 where it faulted,
 * and lanes outside mask between its lowest and highest may be written).
 * Returns the lowest lane of mask that faulted, its fault in *fault, or -1.
 */
int expr_apply_lanes(enum opc op, const int64_t *a, const int64_t *b, int64_t c, uint32_t mask, int64_t out[32],
		     enum expr_fault *fault);

const char *expr_fault_name(enum expr_fault f);
void expr_pool_free(struct expr_pool *pool);

#endif

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
	int64_t value;
	uint64_t slots;  /* bit i: reads register slot i (slots from 63 on all set bit 63) */
};

enum expr_name_kind { EXPR_NAME_UNKNOWN, EXPR_NAME_CONST, EXPR_NAME_SLOT };

struct expr_helper {
	const char *name;
	const char *params[8];
	int nparams;
	const char *body;
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
};

enum expr_fault { EXPR_OK = 0, EXPR_DIV_ZERO, EXPR_BAD_SHIFT, EXPR_OVERFLOW };

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
 * mask between its lowest and highest may be written.
 */
#define EXPR_LANES_BY_THREAD (-2)
int expr_eval_lanes(const struct expr_pool *pool, const struct expr *e, const int64_t *regs, size_t lane_stride,
		    size_t slot_stride, uint64_t uniform, uint32_t mask, int64_t out[32], enum expr_fault *fault);

const char *expr_fault_name(enum expr_fault f);
void expr_pool_free(struct expr_pool *pool);

#endif

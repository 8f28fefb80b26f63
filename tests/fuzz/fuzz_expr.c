/*
 * libFuzzer harness: the expression compiler (isa/expr.h) and evaluator.
 * The input is the expression text; a few names resolve to constants and
 * register slots, and a few helpers (one recursive) are available.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "isa/expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { S_TID, S_LANE, S_X, NSLOTS };

static enum expr_name_kind lookup(void *ctx, const char *name, int64_t *v, bool *per_thread)
{
	(void)ctx;
	static const struct {
		const char *name;
		int64_t value;
	} consts[] = {{"block_size", 256}, {"grid_size", 256 * 132}, {"stages", 3}, {"zero", 0},
		      {"big", INT64_MAX}, {"small", INT64_MIN}, {"neg", -1}};
	for (size_t i = 0; i < sizeof consts / sizeof consts[0]; i++)
		if (strcmp(name, consts[i].name) == 0) {
			*v = consts[i].value;
			return EXPR_NAME_CONST;
		}
	if (strcmp(name, "tid") == 0 || strcmp(name, "lane") == 0 || strcmp(name, "x") == 0) {
		*v = name[0] == 't' ? S_TID : name[0] == 'l' ? S_LANE : S_X;
		*per_thread = name[0] != 'x';
		return EXPR_NAME_SLOT;
	}
	return EXPR_NAME_UNKNOWN;
}

static const struct expr_helper helpers[] = {
	{"block_batch", {"b"}, 1, "block * block_size + grid_size * b", false, false},
	{"twice", {"v"}, 1, "v * 2", false, false},
	{"pair", {"a", "b"}, 2, "a - b", false, false},
	{"none", {0}, 0, "tid + 1", false, false},
	{"rec", {"x"}, 1, "rec(x) + 1", false, false},
	{"divz", {"a"}, 1, "a / zero", false, false},
	{"as_int", {"v"}, 1, "v * 4", false, true},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *src = malloc(size + 1);
	if (!src)
		return 0;
	memcpy(src, data, size);
	src[size] = '\0';
	struct expr_pool pool = {0};
	struct expr_names names = {lookup, NULL, helpers, sizeof helpers / sizeof helpers[0], NULL, 0};
	struct expr e;
	char err[512];
	if (expr_compile(&pool, src, &names, &e, err, sizeof err) == 0) {
		static const int64_t regs[][NSLOTS] = {{0, 0, 0}, {37, 5, -3}, {255, 31, INT64_MAX}, {1, 1, INT64_MIN}};
		enum { NREGS = sizeof regs / sizeof regs[0] };
		int first = -1;
		enum expr_fault first_fault = EXPR_OK;
		int64_t want[NREGS];
		for (size_t i = 0; i < NREGS; i++) {
			enum expr_fault fault = EXPR_OK;
			want[i] = expr_eval(&pool, &e, regs[i], &fault);
			(void)expr_fault_name(fault);
			if (fault && first < 0) {
				first = (int)i;
				first_fault = fault;
			}
		}
		/* The warp-wide evaluator must agree with the per-thread one, value by value and on the first fault. */
		int64_t out[32];
		enum expr_fault fault = EXPR_OK;
		int got = expr_eval_lanes(&pool, &e, &regs[0][0], NSLOTS, 1, 0, (1u << NREGS) - 1, out, &fault);
		if (got != EXPR_LANES_BY_THREAD) {
			if (got != first || (got >= 0 && fault != first_fault))
				abort();
			for (size_t i = 0; i < NREGS; i++)
				if (out[i] != want[i])
					abort();
		}
	} else {
		/* The message must be a terminated string. */
		(void)strlen(err);
	}
	expr_pool_free(&pool);
	free(src);
	return 0;
}

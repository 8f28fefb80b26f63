/*
 * expr: parsing with C precedence, helper inlining, folding, evaluation, errors.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/expr.h"

#define BLOCK_SIZE 256
#define GRID_SIZE (256 * 132)

enum { SLOT_TID_, SLOT_X, SLOT_Y, NSLOTS };

static enum expr_name_kind lookup(void *ctx, const char *name, int64_t *v, bool *per_thread)
{
	(void)ctx;
	if (strcmp(name, "block_size") == 0) {
		*v = BLOCK_SIZE;
		return EXPR_NAME_CONST;
	}
	if (strcmp(name, "grid_size") == 0) {
		*v = GRID_SIZE;
		return EXPR_NAME_CONST;
	}
	if (strcmp(name, "stages") == 0) {
		*v = 3;
		return EXPR_NAME_CONST;
	}
	if (strcmp(name, "tid") == 0) {
		*v = SLOT_TID_;
		*per_thread = true;
		return EXPR_NAME_SLOT;
	}
	if (strcmp(name, "x") == 0) {
		*v = SLOT_X;
		*per_thread = false;
		return EXPR_NAME_SLOT;
	}
	if (strcmp(name, "y") == 0) {
		*v = SLOT_Y;
		*per_thread = false;
		return EXPR_NAME_SLOT;
	}
	return EXPR_NAME_UNKNOWN;
}

static size_t list(void *ctx, const char **out, size_t max)
{
	(void)ctx;
	static const char *const known[] = {"block_size", "grid_size", "stages", "tid", "x", "y"};
	size_t n = 0;
	for (; n < max && n < sizeof known / sizeof known[0]; n++)
		out[n] = known[n];
	return n;
}

static const struct expr_helper helpers[] = {
	{"block_batch", {"b"}, 1, "block_size * 3 + grid_size * b", false, false},
	{"twice", {"v"}, 1, "v * 2", false, false},
	{"bb2", {"b"}, 1, "twice(block_batch(b))", false, false}, /* a helper calling helpers */
	{"pair", {"a", "b"}, 2, "a - b", false, false},
	{"shadow", {"x"}, 1, "x * 10", false, false}, /* the parameter hides the slot x */
	{"uses_slot", {0}, 0, "tid + 1", false, false},
	{"dbl", {"v"}, 1, "v + v", false, false},
	{"h", {"x"}, 1, "h(x)+1", false, false}, /* recursive */
	{"ping", {"a"}, 1, "pong(a)", false, false},
	{"pong", {"a"}, 1, "ping(a) + 1", false, false},
	{"bad_body", {0}, 0, "1 +", false, false},
	{"undef_body", {0}, 0, "nowhere * 2", false, false},
	{"typo_body", {"value"}, 1, "valeu + 1", false, false},
	{"slot_of", {"s"}, 1, "s * 64", true, false}, /* a run-time indexed local array: a call is a load */
	{"as_int", {"v"}, 1, "v * 4", false, true},   /* returns int, as the examples' block_batch lambda */
};

static const struct expr_names names = {lookup, NULL, helpers, sizeof helpers / sizeof helpers[0], list, 0};

static struct expr_pool pool;

static void pool_fini(void) { expr_pool_free(&pool); }

TestSuite(expr, .fini = pool_fini);

/* Compiles src, which must succeed. */
static struct expr compile_ok(const char *src)
{
	struct expr e;
	char err[512] = "";
	int rc = expr_compile(&pool, src, &names, &e, err, sizeof err);
	cr_assert_eq(rc, 0, "\"%s\" failed to compile: %s", src, err);
	return e;
}

/* Compiles src, which must fail; returns the message (room for long sources). */
static const char *compile_err(const char *src)
{
	static char err[8192];
	struct expr e;
	strcpy(err, "<no message>");
	int rc = expr_compile(&pool, src, &names, &e, err, sizeof err);
	cr_assert_eq(rc, -1, "\"%.80s\" compiled but should not", src);
	cr_assert_neq(strcmp(err, "<no message>"), 0, "\"%.80s\": no message", src);
	return err;
}

static int64_t eval_with(const struct expr *e, int64_t tid, int64_t x, int64_t y, enum expr_fault *fault)
{
	int64_t slots[NSLOTS] = {tid, x, y};
	*fault = EXPR_OK;
	return expr_eval(&pool, e, slots, fault);
}

/* Evaluates src with slots; no fault allowed. */
static int64_t eval_src(const char *src, int64_t tid, int64_t x, int64_t y)
{
	struct expr e = compile_ok(src);
	enum expr_fault f;
	int64_t v = eval_with(&e, tid, x, y, &f);
	cr_assert_eq(f, EXPR_OK, "\"%s\" (tid %lld, x %lld, y %lld) faulted: %s", src, (long long)tid, (long long)x,
		     (long long)y, expr_fault_name(f));
	return v;
}

struct case_ {
	const char *src;
	int64_t want;
};

static void check_consts(const struct case_ *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct expr e = compile_ok(cases[i].src);
		cr_assert(e.is_const, "\"%s\" should fold to a constant", cases[i].src);
		cr_assert_eq(e.len, 0, "\"%s\": constant with code", cases[i].src);
		cr_assert_eq(e.value, cases[i].want, "\"%s\" = %lld, expected %lld", cases[i].src, (long long)e.value,
			     (long long)cases[i].want);
	}
}

Test(expr, precedence_and_associativity)
{
	static const struct case_ cases[] = {
		{"1+2*3", 7},
		{"(1+2)*3", 9},
		{"2 * 3 + 4 * 5", 26},
		{"10-3-2", 5},
		{"100/10/5", 2},
		{"2*3%4", 2},
		{"64 >> 2 >> 1", 8},
		{"1<<3+1", 16},
		{"1 << 2 < 3", 0},
		{"7&3|8", 11},
		{"6^3&1", 7},
		{"1|2^3", 1},
		{"5 & 3 == 3", 1},
		{"1 ? 2 : 3 ? 4 : 5", 2},
		{"0 ? 2 : 3 ? 4 : 5", 4},
		{"0 ? 2 : 0 ? 4 : 5", 5},
		{"1 + 1 ? 2 : 3", 2},
		{"0 ? 2 : 3 + 4", 7},
		{"1 ? 0 ? 6 : 7 : 8", 7},
		{"1 < 2", 1},
		{"2 < 2", 0},
		{"2 <= 2", 1},
		{"3 > 4", 0},
		{"4 > 3", 1},
		{"4 >= 5", 0},
		{"5 >= 5", 1},
		{"3 == 3", 1},
		{"3 != 3", 0},
		{"3 != 4", 1},
		{"1 < 2 == 1", 1},
		{"2 == 2 < 1", 0},
		{"1 + 2 < 4", 1},
		{"1 || 0 && 0", 1},
		{"0 && 1 || 1", 1},
		{"2 && 3", 1},
		{"0 || 7", 1},
		{"0 || 0", 0},
		{"  1 +\t2\n", 3},
		{"9223372036854775807", INT64_MAX},
	};
	check_consts(cases, sizeof cases / sizeof cases[0]);
}

Test(expr, unary_numbers_and_functions)
{
	static const struct case_ cases[] = {
		{"-3 * -3", 9},
		{"-2 - -2", 0},
		{"- - 3", 3},
		{"-(3 + 4)", -7},
		{"+5", 5},
		{"1 + +2", 3},
		{"!0", 1},
		{"!5", 0},
		{"!!5", 1},
		{"! !5", 1},
		{"~0", -1},
		{"~5", -6},
		{"~-1", 0},
		{"-~0", 1},
		{"0x10", 16},
		{"0xff + 1", 256},
		{"0X1F", 31},
		{"0xFFFFFFFF", 4294967295LL},
		{"min(3, 7)", 3},
		{"max(3, 7)", 7},
		{"min(-1, 2) * max(4, 5)", -5},
		{"max(min(10, 20), 15)", 15},
		{"min(1 ? 2 : 3, 4)", 2},
		{"-7 / 2", -3},
		{"-7 % 2", -1},
		{"7 % -2", 1},
		{"-16 >> 2", -4},
		{"1 << 62", (int64_t)1 << 62},
	};
	check_consts(cases, sizeof cases / sizeof cases[0]);
}

Test(expr, names_and_helpers_fold)
{
	static const struct case_ cases[] = {
		{"block_size", BLOCK_SIZE},
		{"block_size * 2", 512},
		{"grid_size", GRID_SIZE},
		{"stages * block_size", 768},
		{"block_batch(0)", 768},
		{"block_batch(2)", 768 + 2 * GRID_SIZE},
		{"block_batch(1 + 1) - block_batch(1)", GRID_SIZE},
		{"bb2(1)", 2 * (768 + GRID_SIZE)},
		{"twice(twice(twice(1)))", 8},
		{"pair(10, 3)", 7},
		{"pair(3, 10)", -7},
		{"shadow(4)", 40},
		{"block_batch (2)", 768 + 2 * GRID_SIZE},
		{"0 && tid", 0},
		{"1 || tid", 1},
		{"1 ? 5 : tid", 5},
	};
	check_consts(cases, sizeof cases / sizeof cases[0]);
}

Test(expr, slots_are_not_constant)
{
	struct expr e;
	e = compile_ok("x + 1");
	cr_assert_not(e.is_const);
	cr_assert_gt(e.len, 0);
	cr_assert_not(e.per_thread, "x is uniform across threads");
	e = compile_ok("tid + 1");
	cr_assert_not(e.is_const);
	cr_assert(e.per_thread);
	e = compile_ok("x * block_size + tid");
	cr_assert(e.per_thread);
	e = compile_ok("x * y");
	cr_assert_not(e.per_thread);
	e = compile_ok("min(tid, 5)");
	cr_assert(e.per_thread);
	cr_assert_not(e.is_const);
	e = compile_ok("-tid");
	cr_assert(e.per_thread);
	e = compile_ok("1 ? x : tid");
	cr_assert_not(e.is_const);
	cr_assert_not(e.per_thread, "the folded ?: keeps only x");
	e = compile_ok("0 ? x : tid");
	cr_assert(e.per_thread);
	e = compile_ok("x ? 1 : tid");
	cr_assert(e.per_thread);
	e = compile_ok("x && tid");
	cr_assert(e.per_thread);
	e = compile_ok("uses_slot()");
	cr_assert_not(e.is_const);
	cr_assert(e.per_thread);
	e = compile_ok("block_batch(tid)");
	cr_assert(e.per_thread);
	e = compile_ok("block_batch(x)");
	cr_assert_not(e.per_thread);
	cr_assert_not(e.is_const);
}

Test(expr, evaluates_with_slots)
{
	struct expr e = compile_ok("tid * 4 + x");
	for (int64_t tid = 0; tid < 32; tid++) {
		enum expr_fault f;
		cr_assert_eq(eval_with(&e, tid, 100, 0, &f), tid * 4 + 100);
		cr_assert_eq(f, EXPR_OK);
	}
	cr_assert_eq(eval_src("block_batch(tid)", 5, 0, 0), 768 + 5 * GRID_SIZE);
	cr_assert_eq(eval_src("bb2(x)", 0, 2, 0), 2 * (768 + 2 * GRID_SIZE));
	cr_assert_eq(eval_src("shadow(2) + x", 0, 7, 0), 27);
	cr_assert_eq(eval_src("pair(x, y)", 0, 3, 10), -7);
	cr_assert_eq(eval_src("uses_slot() * 2", 20, 0, 0), 42);
	cr_assert_eq(eval_src("x ? 10 : 20", 0, 0, 0), 20);
	cr_assert_eq(eval_src("x ? 10 : 20", 0, -1, 0), 10);
	cr_assert_eq(eval_src("x ? y ? 1 : 2 : 3", 0, 1, 0), 2);
	cr_assert_eq(eval_src("x ? y ? 1 : 2 : 3", 0, 1, 1), 1);
	cr_assert_eq(eval_src("x ? y ? 1 : 2 : 3", 0, 0, 1), 3);
	cr_assert_eq(eval_src("-x", 0, 5, 0), -5);
	cr_assert_eq(eval_src("!x", 0, 5, 0), 0);
	cr_assert_eq(eval_src("!x", 0, 0, 0), 1);
	cr_assert_eq(eval_src("~x", 0, 5, 0), -6);
	cr_assert_eq(eval_src("x >> 1", 0, -16, 0), -8);
	cr_assert_eq(eval_src("x >> 63", 0, -1, 0), -1);
	cr_assert_eq(eval_src("x << 63", 0, -1, 0), INT64_MIN, "the sign bit: -1 * 2^63 fits");
	cr_assert_eq(eval_src("x << 62", 0, 1, 0), (int64_t)1 << 62);
	cr_assert_eq(eval_src("x << 4", 0, -3, 0), -48);
	cr_assert_eq(eval_src("x % 7", 0, 23, 0), 2);
	cr_assert_eq(eval_src("x / y", 0, -23, 5), -4);
	cr_assert_eq(eval_src("min(x, tid)", 3, 9, 0), 3);
	cr_assert_eq(eval_src("max(x, tid)", 3, 9, 0), 9);
	cr_assert_eq(eval_src("x < 5 && tid > 2", 3, 4, 0), 1);
	cr_assert_eq(eval_src("x < 5 && tid > 2", 2, 4, 0), 0);
	cr_assert_eq(eval_src("x && y", 0, 7, 9), 1, "&& yields 0 or 1");
	cr_assert_eq(eval_src("x || y", 0, 0, 9), 1, "|| yields 0 or 1");
	cr_assert_eq(eval_src("x || y", 0, 0, 0), 0);
	cr_assert_eq(eval_src("1 && x", 0, 0, 5), 0);
	cr_assert_eq(eval_src("1 && x", 0, 6, 5), 1, "folded 1 && x still yields 0 or 1");
	cr_assert_eq(eval_src("(x && tid) ? (tid || x) : !x", 1, 1, 0), 1);
	cr_assert_eq(eval_src("(x && tid) ? (tid || x) : !x", 0, 1, 0), 0);
	cr_assert_eq(eval_src("x < y", 0, -1, 0), 1, "comparisons are signed");
	cr_assert_eq(eval_src("x >= y == (y <= x)", 0, 4, 4), 1);
	cr_assert_eq(eval_src("x != y", 0, 4, 4), 0);
}

Test(expr, short_circuit_at_run_time)
{
	/* The right side would fault; a zero in a slot keeps it from running. */
	cr_assert_eq(eval_src("x && (100 / x)", 0, 0, 0), 0);
	cr_assert_eq(eval_src("x && (100 / x)", 0, 4, 0), 1);
	cr_assert_eq(eval_src("x == 0 || 100 / x > 10", 0, 0, 0), 1);
	cr_assert_eq(eval_src("x == 0 || 100 / x > 10", 0, 5, 0), 1);
	cr_assert_eq(eval_src("x == 0 || 100 / x > 10", 0, 20, 0), 0);
	cr_assert_eq(eval_src("x ? 100 / x : -1", 0, 0, 0), -1);
	cr_assert_eq(eval_src("x ? 100 / x : -1", 0, 25, 0), 4);
	cr_assert_eq(eval_src("y != 0 && x / y > 1", 0, 9, 0), 0);
	cr_assert_eq(eval_src("y != 0 && x / y > 1", 0, 9, 3), 1);
	/* And the other side does run. */
	struct expr e = compile_ok("x || (100 / y)");
	enum expr_fault f;
	eval_with(&e, 0, 0, 0, &f);
	cr_assert_eq(f, EXPR_DIV_ZERO, "x == 0: the right side runs and divides by y == 0");
	cr_assert_eq(eval_with(&e, 0, 1, 0, &f), 1);
	cr_assert_eq(f, EXPR_OK);
}

static void check_fault(const char *src, int64_t x, int64_t y, enum expr_fault want)
{
	struct expr e = compile_ok(src);
	cr_assert_not(e.is_const, "\"%s\" must not fold", src);
	enum expr_fault f;
	int64_t v = eval_with(&e, 0, x, y, &f);
	cr_assert_eq(f, want, "\"%s\" with x=%lld y=%lld: fault %d (%s), expected %d (%s)", src, (long long)x,
		     (long long)y, f, expr_fault_name(f), want, expr_fault_name(want));
	cr_assert_eq(v, 0, "a fault returns 0");
}

Test(expr, runtime_faults)
{
	check_fault("x / 0 + 1", 5, 0, EXPR_DIV_ZERO);
	check_fault("100 / x", 0, 0, EXPR_DIV_ZERO);
	check_fault("100 % x", 0, 0, EXPR_DIV_ZERO);
	check_fault("x / y", 7, 0, EXPR_DIV_ZERO);
	check_fault("x << 64", 1, 0, EXPR_BAD_SHIFT);
	check_fault("1 << x", 64, 0, EXPR_BAD_SHIFT);
	check_fault("1 << x", -1, 0, EXPR_BAD_SHIFT);
	check_fault("x >> 64", 1, 0, EXPR_BAD_SHIFT);
	check_fault("x >> y", 1, 100, EXPR_BAD_SHIFT);
	check_fault("x / -1", INT64_MIN, 0, EXPR_OVERFLOW);
	check_fault("x % -1", INT64_MIN, 0, EXPR_OVERFLOW);
	check_fault("x / y", INT64_MIN, -1, EXPR_OVERFLOW);
	/* The same expressions are fine with other values. */
	cr_assert_eq(eval_src("x / -1", 0, INT64_MIN + 1, 0), INT64_MAX);
	cr_assert_eq(eval_src("-1 << x", 0, 63, 0), INT64_MIN);
	cr_assert_eq(eval_src("x / y", 0, INT64_MIN, 1), INT64_MIN);
	cr_assert(strstr(expr_fault_name(EXPR_DIV_ZERO), "division by zero"));
	cr_assert(strstr(expr_fault_name(EXPR_BAD_SHIFT), "shift"));
	cr_assert(strstr(expr_fault_name(EXPR_OVERFLOW), "overflow"));
}

Test(expr, signed_overflow_is_a_fault_not_a_wrap)
{
	/* + - * leave int64: a fault, where C would be undefined and a wrap would index elsewhere. */
	check_fault("x + 1", INT64_MAX, 0, EXPR_OVERFLOW);
	check_fault("x + y", INT64_MIN, -1, EXPR_OVERFLOW);
	check_fault("x - 1", INT64_MIN, 0, EXPR_OVERFLOW);
	check_fault("x - y", 0, INT64_MIN, EXPR_OVERFLOW);
	check_fault("x * 2", INT64_MAX / 2 + 1, 0, EXPR_OVERFLOW);
	check_fault("x * y", INT64_MIN, -1, EXPR_OVERFLOW);
	check_fault("x * y", 3037000500, 3037000500, EXPR_OVERFLOW); /* just past sqrt(2^63) */
	check_fault("-x", INT64_MIN, 0, EXPR_OVERFLOW);
	/* << is x * 2^n: bits shifted out or into the sign overflow. */
	check_fault("1 << x", 63, 0, EXPR_OVERFLOW);
	check_fault("x << 63", 1, 0, EXPR_OVERFLOW);
	check_fault("x << 62", 2, 0, EXPR_OVERFLOW);
	check_fault("x << 1", INT64_MIN, 0, EXPR_OVERFLOW);
	check_fault("x << y", 3, 62, EXPR_OVERFLOW);
	/* A fault deep inside stops the whole evaluation, short-circuit or not. */
	check_fault("y == 0 || (x + 1) > 0", INT64_MAX, 1, EXPR_OVERFLOW);
	check_fault("tid + (x * x) / 2", 3037000500, 0, EXPR_OVERFLOW);
	/* Right at the edges nothing faults. */
	cr_assert_eq(eval_src("x + y", 0, INT64_MAX - 1, 1), INT64_MAX);
	cr_assert_eq(eval_src("x + y", 0, INT64_MIN + 1, -1), INT64_MIN);
	cr_assert_eq(eval_src("x - y", 0, -1, INT64_MAX), INT64_MIN);
	cr_assert_eq(eval_src("x * y", 0, 3037000499, 3037000499), (int64_t)3037000499 * 3037000499);
	cr_assert_eq(eval_src("x * y", 0, INT64_MIN, 1), INT64_MIN);
	cr_assert_eq(eval_src("-x", 0, INT64_MAX, 0), -INT64_MAX);
	cr_assert_eq(eval_src("~x", 0, INT64_MIN, 0), INT64_MAX, "~ is a bit operation, never an overflow");
	cr_assert_eq(eval_src("x >> 63", 0, INT64_MIN, 0), -1);
	/* A short circuit that skips the overflowing side does not fault. */
	cr_assert_eq(eval_src("y != 0 && x + y > 0", 0, INT64_MAX, 0), 0);
}

#define ASSERT_ERR(src, fragment)                                                                         \
	do {                                                                                              \
		const char *msg_ = compile_err(src);                                                     \
		cr_assert(strstr(msg_, fragment), "\"%.60s\": message \"%s\" lacks \"%s\"", src, msg_, fragment); \
	} while (0)

Test(expr, compile_errors)
{
	ASSERT_ERR("foo + 1", "foo");
	ASSERT_ERR("foo + 1", "undefined name");
	ASSERT_ERR("1 + block_sise", "block_sise");
	ASSERT_ERR("1 + bar(2)", "unknown function 'bar'");
	ASSERT_ERR("tid(1)", "unknown function 'tid'");
	ASSERT_ERR("block_batch(1, 2)", "block_batch takes 1 argument");
	ASSERT_ERR("block_batch()", "block_batch takes 1 argument");
	ASSERT_ERR("pair(1)", "pair takes 2 arguments");
	ASSERT_ERR("min(1)", "min takes 2 arguments");
	ASSERT_ERR("max(1, 2, 3)", "max takes 2 arguments");
	ASSERT_ERR("min(1, 2", "expected ')'");
	ASSERT_ERR("(1 + 2", "expected ')'");
	ASSERT_ERR("((x)", "expected ')'");
	ASSERT_ERR("1 + 2)", "unexpected ')'");
	ASSERT_ERR("1 2", "unexpected '2'");
	ASSERT_ERR("x y", "unexpected 'y'");
	ASSERT_ERR("1, 2", "unexpected ', 2'");
	ASSERT_ERR("x = 1", "unexpected '= 1'");
	ASSERT_ERR("1 +", "unexpected end of expression");
	ASSERT_ERR("", "unexpected end of expression");
	ASSERT_ERR("()", "unexpected ')'");
	ASSERT_ERR("1 ? 2", "expected ':'");
	ASSERT_ERR("4 / 0", "division by zero");
	ASSERT_ERR("4 % (2 - 2)", "division by zero");
	ASSERT_ERR("block_size / (stages - 3)", "division by zero");
	ASSERT_ERR("1 << 64", "shift");
	ASSERT_ERR("(-9223372036854775807 - 1) / -1", "overflow");
	ASSERT_ERR("99999999999999999999", "out of range");
	ASSERT_ERR("9223372036854775808", "out of range");
	ASSERT_ERR("0x", "bad number");
	ASSERT_ERR("12abc", "bad number");
	ASSERT_ERR("bad_body()", "bad_body");
	ASSERT_ERR("undef_body()", "nowhere");
	/* Messages say where: the column, counted from 1. */
	ASSERT_ERR("1 + 2)", "column 6");
	ASSERT_ERR("1 + foo", "column");
	ASSERT_ERR("1 + bar(2)", "column 5"); /* the unknown function's name, not past its arguments */
}

Test(expr, constant_overflow_is_a_compile_error)
{
	ASSERT_ERR("9223372036854775807 + 1", "arithmetic overflow in a constant expression");
	ASSERT_ERR("-9223372036854775807 - 2", "arithmetic overflow");
	ASSERT_ERR("4611686018427387904 * 2", "arithmetic overflow");
	ASSERT_ERR("-(-9223372036854775807 - 1)", "arithmetic overflow");
	ASSERT_ERR("1 << 63", "arithmetic overflow");
	ASSERT_ERR("block_size << 60", "arithmetic overflow"); /* parameters fold first */
	ASSERT_ERR("grid_size * grid_size * grid_size * grid_size * grid_size", "arithmetic overflow");
	/* ... and the message still says where. */
	ASSERT_ERR("tid + 9223372036854775807 * 2", "column");
	/* The edges fold. */
	cr_assert_eq(compile_ok("-9223372036854775807 - 1").value, INT64_MIN);
	cr_assert_eq(compile_ok("-1 << 63").value, INT64_MIN);
	cr_assert_eq(compile_ok("4611686018427387903 * 2 + 1").value, INT64_MAX);
}

Test(expr, undefined_names_suggest_the_closest_known_one)
{
	/* Constants and slots the lookup knows, launch names among them. */
	ASSERT_ERR("stagse + 1", "undefined name 'stagse'; did you mean 'stages'?");
	ASSERT_ERR("1 + block_sise", "did you mean 'block_size'?");
	ASSERT_ERR("2 * tdi", "did you mean 'tid'?");
	/* A helper's parameters, inside its body. */
	ASSERT_ERR("typo_body(3)", "undefined name 'valeu'; did you mean 'value'? (in helper typo_body");
	/* A helper used without its arguments is offered as a call. */
	ASSERT_ERR("twice + 1", "undefined name 'twice'; did you mean 'twice(...)'?");
	ASSERT_ERR("block_bach", "did you mean 'block_batch(...)'?");
	/* Functions: the helpers and min/max. */
	ASSERT_ERR("blok_batch(1)", "unknown function 'blok_batch'; did you mean 'block_batch'?");
	ASSERT_ERR("mni(1, 2)", "unknown function 'mni'; did you mean 'min'?");
	/* Nothing close: no guess. */
	const char *msg = compile_err("xyzzy + 1");
	cr_assert(strstr(msg, "undefined name 'xyzzy'") && !strstr(msg, "did you mean"), "%s", msg);
	msg = compile_err("frobnicate(1)");
	cr_assert(strstr(msg, "unknown function 'frobnicate'") && !strstr(msg, "did you mean"), "%s", msg);
	/* Without a list, names are still refused, just without a guess. */
	struct expr_names bare = names;
	bare.list = NULL;
	struct expr e;
	char err[512] = "";
	cr_assert_eq(expr_compile(&pool, "stagse", &bare, &e, err, sizeof err), -1);
	cr_assert(strstr(err, "undefined name 'stagse'") && !strstr(err, "did you mean"), "%s", err);
}

Test(expr, deep_parentheses_fail_cleanly)
{
	char src[4096];
	size_t n = 0;
	for (int i = 0; i < 500; i++)
		src[n++] = '(';
	src[n++] = '1';
	for (int i = 0; i < 500; i++)
		src[n++] = ')';
	src[n] = '\0';
	ASSERT_ERR(src, "deep");
	src[500] = 'x';
	ASSERT_ERR(src, "deep");
	/* Unclosed as well. */
	src[501] = '\0';
	compile_err(src);
	/* 500 unary minus signs. */
	n = 0;
	for (int i = 0; i < 500; i++)
		src[n++] = '-';
	src[n++] = '1';
	src[n] = '\0';
	ASSERT_ERR(src, "deep");
	/* 500 nested calls. */
	n = 0;
	for (int i = 0; i < 500; i++) {
		memcpy(src + n, "min(", 4);
		n += 4;
	}
	src[n++] = '1';
	for (int i = 0; i < 500; i++) {
		memcpy(src + n, ",1)", 3);
		n += 3;
	}
	src[n] = '\0';
	cr_assert_lt(n, sizeof src);
	ASSERT_ERR(src, "deep");
}

Test(expr, moderate_nesting_works)
{
	/* 40 levels of parentheses around an addition chain that needs a deep stack. */
	char src[1024];
	size_t n = 0;
	for (int i = 0; i < 40; i++) {
		memcpy(src + n, "x+(", 3);
		n += 3;
	}
	src[n++] = 'x';
	for (int i = 0; i < 40; i++)
		src[n++] = ')';
	src[n] = '\0';
	cr_assert_eq(eval_src(src, 0, 3, 0), 41 * 3);
	/* A constant nested 150 deep folds. */
	n = 0;
	for (int i = 0; i < 150; i++)
		src[n++] = '(';
	src[n++] = '7';
	for (int i = 0; i < 150; i++)
		src[n++] = ')';
	src[n] = '\0';
	struct expr e = compile_ok(src);
	cr_assert(e.is_const);
	cr_assert_eq(e.value, 7);
}

Test(expr, too_deep_for_the_eval_stack_fails_cleanly)
{
	/* x+(x+(...)) 100 deep: parses, but the evaluator would need 101 stack entries. */
	char src[1024];
	size_t n = 0;
	for (int i = 0; i < 100; i++) {
		memcpy(src + n, "x+(", 3);
		n += 3;
	}
	src[n++] = 'x';
	for (int i = 0; i < 100; i++)
		src[n++] = ')';
	src[n] = '\0';
	ASSERT_ERR(src, "nested");
}

/* A helper with "type": "int" converts its value to int: the value where int holds it, a fault where not. */
Test(expr, int_helpers_convert_and_fault_outside_int)
{
	cr_assert_eq(eval_src("as_int(x) + 1", 0, 5, 0), 21);
	cr_assert_eq(eval_src("as_int(x)", 0, -536870912, 0), -2147483648LL);
	enum expr_fault f;
	struct expr e = compile_ok("as_int(x)");
	eval_with(&e, 0, 536870912, 0, &f); /* 2^31 */
	cr_assert_eq(f, EXPR_OVERFLOW);
	check_consts((const struct case_[]){{"as_int(3)", 12}}, 1);
	cr_assert(strstr(compile_err("as_int(1 << 30)"), "overflow in a constant expression"));
}

Test(expr, recursive_helpers_fail_cleanly)
{
	ASSERT_ERR("h(1)", "helper h calls itself");
	ASSERT_ERR("h(x)", "h");
	ASSERT_ERR("1 + ping(2)", "calls itself");
	/* The pool stays usable after a failure. */
	cr_assert_eq(eval_src("twice(x)", 0, 21, 0), 42);
}

Test(expr, long_source_keeps_the_explanation)
{
	/*
	 * The kernel loader passes a 512-byte buffer and allows 1023-character
	 * expressions: the explanation must survive a long source text.
	 */
	char src[1024];
	size_t n = 0;
	while (n < 900) {
		memcpy(src + n, "x + 1 + ", 8);
		n += 8;
	}
	strcpy(src + n, "nowhere");
	struct expr e;
	char err[512] = "";
	cr_assert_eq(expr_compile(&pool, src, &names, &e, err, sizeof err), -1);
	cr_assert(strstr(err, "undefined name 'nowhere'"), "message lost its explanation: \"%s\"", err);
}

Test(expr, helper_argument_reuse_stays_small, .timeout = 10)
{
	/*
	 * dbl(v) = v + v uses its argument twice.  Nested 40 deep over a slot the
	 * expansion is 2^40 leaves; the compiler must refuse (or share), not hang.
	 */
	char src[1024];
	size_t n = 0;
	for (int i = 0; i < 40; i++) {
		memcpy(src + n, "dbl(", 4);
		n += 4;
	}
	src[n++] = 'x';
	for (int i = 0; i < 40; i++)
		src[n++] = ')';
	src[n] = '\0';
	struct expr e;
	char err[512] = "";
	if (expr_compile(&pool, src, &names, &e, err, sizeof err) == 0) {
		enum expr_fault f;
		cr_assert_eq(eval_with(&e, 0, 1, 0, &f), (int64_t)1 << 40);
	} else {
		cr_assert_neq(err[0], '\0');
	}
	/* 8 deep is fine and exact. */
	cr_assert_eq(eval_src("dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(x))))))))", 0, 3, 0), 3 * 256);
}

Test(expr, pool_holds_many_expressions)
{
	struct expr es[200];
	char src[64];
	for (int i = 0; i < 200; i++) {
		snprintf(src, sizeof src, "x * %d + tid", i);
		es[i] = compile_ok(src);
	}
	for (int i = 0; i < 200; i++) {
		enum expr_fault f;
		cr_assert_eq(eval_with(&es[i], 5, 3, 0, &f), 3 * i + 5, "expression %d", i);
		cr_assert_eq(f, EXPR_OK);
	}
	expr_pool_free(&pool);
	cr_assert_null(pool.words);
	cr_assert_eq(pool.len, 0);
	expr_pool_free(NULL);
}

/*
 * expr_eval_lanes against expr_eval_code lane by lane: values, 0 for a lane that faulted, and the
 * lowest faulting lane with its fault, for straight programs, fused operands and partial masks, with
 * registers lane-major and slot-major.  Programs it leaves to the caller (a jump whose condition the
 * lanes do not agree on, deep stacks) say so.
 */
Test(expr, lanes_agree_with_thread_by_thread)
{
	static const char *const srcs[] = {
		"tid", "tid + x * 3 - y", "x / (tid - 5)", "(tid - 40) % 7 + (tid >> 2) - -tid + ~x + !tid",
		"min(tid, 3) * max(x, 9)", "1 << (tid + 40)", "tid * tid * tid * tid * tid * tid * tid * tid * tid * tid",
		"tid > 3 && 7 / (tid - 8)", "tid < 10 ? 7 % (tid - 2) : 1 << tid", "x - 9223372036854775807 - tid",
		"((((((((((((((((((tid+1)*2+1)*2+1)*2+1)*2+1)*2+1)*2+1)*2+1)*2+1)*2+1)*2+1)*2+1)*2+1)*2+1)*2+1)*2+1)*2+1)*2+1) / (tid - 4)",
		"tid + (1 + (2 + (3 + (4 + (5 + (6 + (7 + (8 + (9 + (10 + (11 + (12 + (13 + (14 + (15 + (16 + (17 + y)))))))))))))))))",
		"(tid - 17) / (x - 3) + tid % (y + 1)", "x / tid", "tid % x", "1 << tid", "tid >> 70", "y - tid * 2 < x",
		/* a condition the lanes agree on (the GEMM's chunk < 256 ? ...: one side for all), or not */
		"tid + 128 < 256 ? x * 2048 + (tid + 128) * 8 : x * 2048 + (tid - 128) * 8",
		"tid + 256 < 256 ? 7 / (tid - 300) : y - tid", "tid < 100 && x > 2 ? tid / (x - 3) : -tid",
	};
	static const uint32_t masks[] = {0xffffffffu, 1u, 0x80000000u, 0x00f0f00fu, 0x7ffffffeu, 0x00000300u};
	int64_t lane_major[32][NSLOTS], slot_major[NSLOTS][32];
	int warp_wide = 0;
	for (size_t si = 0; si < sizeof srcs / sizeof srcs[0]; si++) {
		struct expr e = compile_ok(srcs[si]);
		for (int trial = 0; trial < 3; trial++) {
			for (int l = 0; l < 32; l++) {
				lane_major[l][SLOT_TID_] = l + trial * 7;
				lane_major[l][SLOT_X] = trial == 2 ? INT64_MIN + l : 3 + trial;
				lane_major[l][SLOT_Y] = trial == 1 ? -1 : l * 1000;
				for (int k = 0; k < NSLOTS; k++)
					slot_major[k][l] = lane_major[l][k];
			}
			for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; mi++) {
				for (int layout = 0; layout < 4; layout++) {
					uint32_t mask = masks[mi];
					/* layouts 2 and 3: the slots whose lanes agree in this trial are passed as uniform */
					uint64_t uniform = layout < 2 ? 0
								      : (trial != 2 ? 1ull << SLOT_X : 0) |
									(trial == 1 ? 1ull << SLOT_Y : 0);
					int64_t out[32];
					enum expr_fault f = EXPR_OK;
					int first = layout % 2 ? expr_eval_lanes(&pool, &e, &slot_major[0][0], 1, 32, uniform, mask,
									     out, &f)
							   : expr_eval_lanes(&pool, &e, &lane_major[0][0], NSLOTS, 1, uniform,
									     mask, out, &f);
					if (first == EXPR_LANES_BY_THREAD)
						continue;
					warp_wide++;
					int want_first = -1;
					enum expr_fault want_f = EXPR_OK;
					for (int l = 0; l < 32; l++) {
						if (!(mask >> l & 1))
							continue;
						enum expr_fault lf = EXPR_OK;
						int64_t v = expr_eval(&pool, &e, lane_major[l], &lf);
						if (lf && want_first < 0) {
							want_first = l;
							want_f = lf;
						}
						cr_assert_eq(out[l], v, "\"%s\" trial %d mask %08x lane %d: %lld, thread by thread %lld",
							     srcs[si], trial, mask, l, (long long)out[l], (long long)v);
					}
					cr_assert_eq(first, want_first, "\"%s\" trial %d mask %08x: first fault at %d, expected %d",
						     srcs[si], trial, mask, first, want_first);
					if (first >= 0)
						cr_assert_eq(f, want_f, "\"%s\": fault %s, expected %s", srcs[si],
							     expr_fault_name(f), expr_fault_name(want_f));
				}
			}
		}
	}
	/* 1,416 since a condition the lanes agree on runs warp-wide (1,092 when every jump went thread by thread) */
	cr_assert_gt(warp_wide, 1300, "most of these run warp-wide (%d did)", warp_wide);
}

/*
 * expr_apply_lanes against expr_apply lane by lane, near the ends of the range (its ADD and SUB
 * run as one wrapped pass with the overflow found afterwards): the same values and the same
 * first fault.
 */
Test(expr, apply_lanes_agrees_with_expr_apply)
{
	static const int64_t edges[] = {0, 1, -1, 2, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 1ll << 62, -(1ll << 62)};
	static const enum opc ops[] = {OPC_ADD, OPC_SUB, OPC_MUL, OPC_DIV, OPC_SHL, OPC_AND, OPC_LT};
	static const uint32_t masks[] = {0xffffffffu, 1u, 0x80000000u, 0x00f0f00fu, 0x7ffffffeu};
	const size_t ne = sizeof edges / sizeof edges[0];
	uint64_t seed = 7;
	for (int trial = 0; trial < 200; trial++) {
		int64_t a[32], b[32];
		for (int l = 0; l < 32; l++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			a[l] = edges[(seed >> 33) % ne];
			b[l] = trial % 3 ? edges[(seed >> 13) % ne] : (int64_t)(seed >> 40) - (1ll << 23);
		}
		int64_t c = edges[(size_t)trial % ne];
		for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
			for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; mi++)
				for (int row = 0; row < 2; row++) {
					uint32_t mask = masks[mi];
					int64_t out[32];
					enum expr_fault f = EXPR_OK, want_f = EXPR_OK;
					int first = expr_apply_lanes(ops[oi], a, row ? b : NULL, c, mask, out, &f), want_first = -1;
					for (int l = 0; l < 32; l++) {
						if (!(mask >> l & 1))
							continue;
						int64_t r = 0;
						enum expr_fault lf = expr_apply(ops[oi], a[l], row ? b[l] : c, &r);
						if (lf && want_first < 0) {
							want_first = l;
							want_f = lf;
						}
						cr_assert_eq(out[l], r, "op %d trial %d lane %d: %lld, expr_apply %lld", (int)ops[oi],
							     trial, l, (long long)out[l], (long long)r);
					}
					cr_assert_eq(first, want_first, "op %d trial %d mask %08x: first fault at %d, expected %d",
						     (int)ops[oi], trial, mask, first, want_first);
					if (first >= 0)
						cr_assert_eq(f, want_f);
				}
	}
}

/* names, with tid a lane slot: in lane l it is a warp-uniform value plus l times a constant */
static const struct expr_names lane_names = {lookup, NULL, helpers, sizeof helpers / sizeof helpers[0], list,
					     1u << SLOT_TID_};

static struct expr compile_lanes(const char *src)
{
	struct expr e;
	char err[512] = "";
	cr_assert_eq(expr_compile(&pool, src, &lane_names, &e, err, sizeof err), 0, "\"%s\": %s", src, err);
	return e;
}

/*
 * An expression is lane_affine when the lane slots meet only ADD, SUB, NEG, the int conversion, and
 * MUL or SHL by what reads no lane slot (x and y may be anything: whether they are uniform is the
 * caller's to say at run time); a ?: only with a condition that reads no lane slot or is an ordered
 * comparison of such values (its truth changes once at most over the lanes: isa/expr.c ordered_form).
 */
Test(expr, lane_affine_chosen_for_affine_expressions_only)
{
	static const char *const affine[] = {
		"tid", "tid * 8 + x", "(x % 3) * 2048 + tid * 8 + 1024", "0 * x * 128 * 2048 + y * 2048 + tid * 8 + 1024",
		"-tid + y", "(tid + x) << 3", "x * tid - tid * (y / 3)", "x > 2 ? tid * 4 : tid - y", "as_int(tid + x)",
		"twice(tid) - block_batch(x)", "(x && y) + tid", "(x << y) + tid * min(x, y)", "tid > 3 ? 1 : 2",
		"tid + 128 < 256 ? x * 2048 + (tid + 128) * 8 : x * 2048 + (tid - 128) * 8", "x - tid >= y ? -tid : y",
	};
	static const char *const other[] = {
		"x + y * 3", "tid * tid", "tid / 2", "tid % 4", "1 << tid", "min(tid, x)", "tid == 3 ? 1 : 2",
		"tid > 3 && tid < 9 ? tid : 0", "tid * tid > 3 ? 1 : tid", "tid != x ? tid : 0", "tid < x && y", "tid & 7", "tid >> 1", "slot_of(tid)", "!tid + 1", "~tid", "x ? tid : tid * tid",
		"(tid == 3) + tid", "7 - (tid | 1)",
	};
	for (size_t i = 0; i < sizeof affine / sizeof affine[0]; i++) {
		struct expr e = compile_lanes(affine[i]);
		cr_assert_eq(e.lane_affine, 1u << SLOT_TID_, "\"%s\" should be lane_affine (%u)", affine[i], e.lane_affine);
		cr_assert_eq(compile_ok(affine[i]).lane_affine, 0, "\"%s\" without lane slots", affine[i]);
	}
	for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
		cr_assert_eq(compile_lanes(other[i]).lane_affine, 0, "\"%s\" should not be lane_affine", other[i]);
}

/*
 * expr_eval_lanes on lane_affine expressions against expr_eval_code lane by lane, as
 * lanes_agree_with_thread_by_thread: the same values, and the same lowest faulting lane and fault
 * where a lane overflows (at an end or only at an intermediate step), divides by zero or shifts too
 * far; with x and y passed as uniform (the two ends and a fill) or not (the general pass), x
 * differing between lanes once, tid rising or falling by 1 or 3 from several starts, partial masks,
 * both register layouts.
 */
Test(expr, lane_affine_agrees_with_thread_by_thread)
{
	static const char *const srcs[] = {
		"(x % 3) * 2048 + tid * 8 + 1024", "x * tid - tid * (y / 3)", "tid * 4611686018427387904 + x",
		"(tid + 9223372036854775800) - 9223372036854775800 + x", "x / y + tid", "(tid + x) << y",
		"as_int(tid * x)", "x > 2 ? tid * 4 : tid - y", "-tid - y", "x - 9223372036854775807 - tid",
		/* conditions whose truth the lanes share only where the ends take one side */
		"tid + 128 < 256 ? x * 2048 + (tid + 128) * 8 : x * 2048 + (tid - 128) * 8", "tid > x ? tid * 4 : y - tid",
		"x - tid >= 5 ? 1 : 7 / (y - 5)", "tid <= 9223372036854775800 ? tid + x : -tid",
	};
	static const int64_t starts[] = {0, 7 * 32, -40, INT64_MAX - 100, INT64_MIN + 5};
	static const uint32_t masks[] = {0xffffffffu, 1u, 0x80000000u, 0x00f0f00fu, 0x7ffffffeu, 0x00000300u, 0x0000ffffu};
	int64_t lane_major[32][NSLOTS], slot_major[NSLOTS][32];
	int filled = 0, faulted = 0;
	for (size_t si = 0; si < sizeof srcs / sizeof srcs[0]; si++) {
		struct expr e = compile_lanes(srcs[si]);
		cr_assert_neq(e.lane_affine, 0, "\"%s\"", srcs[si]);
		for (size_t start = 0; start < sizeof starts / sizeof starts[0]; start++) {
			for (int trial = 0; trial < 4; trial++) {
				int64_t step = trial % 2 ? 3 : 1;
				for (int l = 0; l < 32; l++) {
					lane_major[l][SLOT_TID_] = starts[start] + (starts[start] > 0 ? -step * l : step * l);
					lane_major[l][SLOT_X] = trial == 0 ? 3 : trial == 1 ? 4 + l : -70000 * trial;
					lane_major[l][SLOT_Y] = trial == 2 ? 0 : trial == 3 ? 70 : 5;
					for (int k = 0; k < NSLOTS; k++)
						slot_major[k][l] = lane_major[l][k];
				}
				for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; mi++) {
					for (int layout = 0; layout < 4; layout++) {
						uint32_t mask = masks[mi];
						/* layouts 2 and 3: the slots whose lanes agree in this trial are passed as uniform */
						uint64_t uniform = layout < 2 ? 0 : (trial == 1 ? 0 : 1ull << SLOT_X) | 1ull << SLOT_Y;
						int64_t out[32];
						enum expr_fault f = EXPR_OK;
						int first = layout % 2 ? expr_eval_lanes(&pool, &e, &slot_major[0][0], 1, 32,
											 uniform, mask, out, &f)
								   : expr_eval_lanes(&pool, &e, &lane_major[0][0], NSLOTS, 1,
										     uniform, mask, out, &f);
						/* the ?: without uniform x, or with an end that faults: thread by thread */
						if (first == EXPR_LANES_BY_THREAD)
							continue;
						int want_first = -1;
						enum expr_fault want_f = EXPR_OK;
						for (int l = 0; l < 32; l++) {
							if (!(mask >> l & 1))
								continue;
							enum expr_fault lf = EXPR_OK;
							int64_t v = expr_eval(&pool, &e, lane_major[l], &lf);
							if (lf && want_first < 0) {
								want_first = l;
								want_f = lf;
							}
							cr_assert_eq(out[l], v, "\"%s\" start %lld trial %d mask %08x lane %d: %lld, "
										"thread by thread %lld",
								     srcs[si], (long long)starts[start], trial, mask, l,
								     (long long)out[l], (long long)v);
						}
						cr_assert_eq(first, want_first, "\"%s\" start %lld trial %d mask %08x: first "
										"fault at %d, expected %d",
							     srcs[si], (long long)starts[start], trial, mask, first, want_first);
						if (first >= 0) {
							cr_assert_eq(f, want_f, "\"%s\": fault %s, expected %s", srcs[si],
								     expr_fault_name(f), expr_fault_name(want_f));
							faulted++;
						} else if (layout >= 2) {
							filled++;
						}
					}
				}
			}
		}
	}
	cr_assert_gt(filled, 500, "most run as two ends and a fill (%d did)", filled);
	cr_assert_gt(faulted, 100, "faults are covered (%d)", faulted);
}

/*
 * The GEMM's copy source, chunk < 256 ? A's : B's with chunk = tid + 128 (kernels/gemm_cp_async_multistage.json
 * chunk_src), as a rise over the warp: at tids 0-31 (chunks 128-159) and 128-159 (256-287) every lane takes one
 * side and the ends and step are that side's; at tids 112-143 the lanes part at chunk 256 and it is no rise.
 */
Test(expr, a_condition_the_lanes_share_keeps_the_rise)
{
	struct expr e = compile_lanes("tid + 128 < 256 ? x * 2048 + (tid + 128) * 8 : x * 2048 + (tid - 128) * 8");
	cr_assert_eq(e.lane_affine, 1u << SLOT_TID_);
	int64_t slot_major[NSLOTS][32];
	static const struct {
		int64_t tid0;
		bool rise;
		int64_t first;
	} cases[] = {{0, true, 5 * 2048 + 128 * 8}, {128, true, 5 * 2048 + 0}, {112, false, 0}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		for (int l = 0; l < 32; l++) {
			slot_major[SLOT_TID_][l] = cases[c].tid0 + l;
			slot_major[SLOT_X][l] = 5;
			slot_major[SLOT_Y][l] = 0;
		}
		int64_t ends[2] = {0, 0}, step = 0;
		bool rise = expr_eval_rise(&pool, &e, &slot_major[0][0], 1, 32, 1ull << SLOT_X | 1ull << SLOT_Y, ends, &step);
		cr_assert_eq(rise, cases[c].rise, "tids from %lld", (long long)cases[c].tid0);
		if (rise) {
			cr_assert_eq(ends[0], cases[c].first);
			cr_assert_eq(ends[1], cases[c].first + 31 * 8);
			cr_assert_eq(step, 8);
		}
	}
}

/* e's value from its linear form, as simt.c and affine_ends take it; false where a slot lies outside the bound. */
static bool linear_value(const struct expr *e, const int64_t *slots, int64_t *v)
{
	const int64_t *t = pool.words + e->lin_at;
	uint64_t bound = (uint64_t)t[EXPR_LIN_BOUND], acc = (uint64_t)t[EXPR_LIN_K];
	for (int64_t i = 0; i < t[EXPR_LIN_TERMS]; i++) {
		const int64_t *term = t + EXPR_LIN_HEAD + i * EXPR_TERM_WORDS;
		if (!expr_lin_term(term, slots[term[EXPR_TERM_SLOT]], bound, &acc))
			return false;
	}
	*v = (int64_t)acc;
	return true;
}

/*
 * One set of slot values through a form's evaluator (linear_value, select_value) and the program:
 * where the form answers (the slots inside its bound), the program must not fault and must agree.
 */
static void form_against_program(const char *src, const struct expr *e,
				 bool (*form)(const struct expr *, const int64_t *, int64_t *), const int64_t *slots,
				 int *inside, int *outside)
{
	enum expr_fault f = EXPR_OK;
	int64_t want = expr_eval_code(&pool, e, slots, &f), v;
	if (!form(e, slots, &v)) {
		(*outside)++;
		return;
	}
	(*inside)++;
	cr_assert_eq(f, EXPR_OK, "\"%s\" (%lld, %lld, %lld): inside the bound but faulted", src, (long long)slots[0],
		     (long long)slots[1], (long long)slots[2]);
	cr_assert_eq(v, want, "\"%s\" (%lld, %lld, %lld): form %lld, program %lld", src, (long long)slots[0],
		     (long long)slots[1], (long long)slots[2], (long long)v, (long long)want);
}

Test(expr, linear_form_agrees_with_the_program)
{
	static const char *const linear[] = {
		"(x % 3) * 2048 + tid * 8 + 1024", "block_batch(x) + tid", "-tid - y * 7", "x / 5 - y % 4 * 3 + 2",
		"(tid << 3) + (x << 62)", "as_int(tid * 3 + x)", "tid * 4611686018427387904 + x", "x * 0 + tid",
		"tid + 9223372036854775000 + x", "y % -1 + x / -1", "slot_of(x % 3) + tid",
	};
	static const char *const other[] = {"x * tid", "x / y", "(x + 1) % 3", "x > 2 ? tid : y", "tid << x", "x & 3",
					    "slot_of(x * y)"};
	static const int64_t values[] = {0, 1, -1, 5, -7, 1000, INT32_MAX, INT32_MIN, (int64_t)1 << 40, -((int64_t)1 << 61),
					 ((int64_t)1 << 62) - 1, INT64_MAX, INT64_MIN, INT64_MAX - 3};
	const size_t nv = sizeof values / sizeof values[0];
	int inside = 0, outside = 0;
	for (size_t si = 0; si < sizeof linear / sizeof linear[0]; si++) {
		struct expr e = compile_ok(linear[si]);
		cr_assert_neq(e.lin_at, 0, "\"%s\" should have a linear form", linear[si]);
		for (size_t a = 0; a < nv; a++)
			for (size_t b = 0; b < nv; b++)
				for (size_t c = 0; c < nv; c += 3) {
					int64_t slots[NSLOTS] = {values[a], values[b], values[c]};
					form_against_program(linear[si], &e, linear_value, slots, &inside, &outside);
				}
	}
	cr_assert_gt(inside, 1000, "values inside the bounds are covered (%d)", inside);
	cr_assert_gt(outside, 1000, "values outside the bounds are covered (%d)", outside);
	for (size_t si = 0; si < sizeof other / sizeof other[0]; si++)
		cr_assert_eq(compile_ok(other[si]).lin_at, 0, "\"%s\" is not linear", other[si]);
}

Test(expr, linear_lanes_agree_with_thread_by_thread)
{
	/* a uniform part plus one slot whose lanes differ, as it is; and forms that run the program instead */
	static const char *const srcs[] = {"block_batch(x) + tid", "x * 3 + tid - 7", "as_int(x * 4) + y + tid",
					   "tid + 9223372036854775000 + x", "x - tid", "tid * 2 + x"};
	static const int64_t bases[] = {0, 5, -3, 1000000, INT32_MAX, INT64_MAX - 40, INT64_MIN + 3, (int64_t)1 << 61};
	static const uint32_t masks[] = {0xffffffffu, 0x55555555u, 0xaaaaaaaau, 1u, 0x80000000u, 0x00f0f00fu};
	int64_t slot_major[NSLOTS][32];
	int checked = 0;
	for (size_t si = 0; si < sizeof srcs / sizeof srcs[0]; si++) {
		struct expr e = compile_ok(srcs[si]);
		for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
			for (size_t x = 0; x < sizeof bases / sizeof bases[0]; x += 2)
				for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; mi++) {
					for (int l = 0; l < 32; l++) {
						/* odd lanes step down from the base, so a negative or a wrapped lane is among them
						 * (two's complement wrap, computed unsigned: the test itself must not overflow) */
						slot_major[SLOT_TID_][l] = l % 2 ? (int64_t)((uint64_t)bases[b] - (uint64_t)l) : bases[b] / 2 + l;
						slot_major[SLOT_X][l] = bases[x] / 3;
						slot_major[SLOT_Y][l] = 11;
					}
					uint32_t mask = masks[mi];
					int64_t out[32];
					enum expr_fault f = EXPR_OK;
					int first = expr_eval_lanes(&pool, &e, &slot_major[0][0], 1, 32,
								    1ull << SLOT_X | 1ull << SLOT_Y, mask, out, &f);
					if (first == EXPR_LANES_BY_THREAD)
						continue;
					int want_first = -1;
					for (int l = 0; l < 32; l++) {
						if (!(mask >> l & 1))
							continue;
						int64_t lane[NSLOTS] = {slot_major[0][l], slot_major[1][l], slot_major[2][l]};
						enum expr_fault lf = EXPR_OK;
						int64_t v = expr_eval(&pool, &e, lane, &lf);
						if (lf && want_first < 0)
							want_first = l;
						cr_assert_eq(out[l], v, "\"%s\" base %lld x %lld mask %08x lane %d: %lld, thread by "
									"thread %lld",
							     srcs[si], (long long)bases[b], (long long)bases[x], mask, l,
							     (long long)out[l], (long long)v);
						checked++;
					}
					cr_assert_eq(first, want_first, "\"%s\" base %lld mask %08x: first fault at %d, expected %d",
						     srcs[si], (long long)bases[b], mask, first, want_first);
				}
	}
	cr_assert_gt(checked, 5000, "lanes are covered (%d)", checked);
}

/* The side of a condition form at p (expr.h) into *v; the word after it, or NULL outside the bound. */
static const int64_t *cond_side(const int64_t *p, const int64_t *slots, uint64_t bound, int64_t *v)
{
	uint64_t acc = (uint64_t)p[1];
	const int64_t *term = p + 2, *end = term + p[0] * EXPR_TERM_WORDS;
	for (; term < end; term += EXPR_TERM_WORDS)
		if (!expr_lin_term(term, slots[term[EXPR_TERM_SLOT]], bound, &acc))
			return NULL;
	*v = (int64_t)acc;
	return end;
}

/* e's value from its condition form, as simt.c takes it; false where a slot lies outside the bound. */
static bool cond_value(const struct expr *e, const int64_t *slots, int64_t *v)
{
	const int64_t *t = pool.words + e->cond_at, *p = t + EXPR_COND_HEAD;
	int64_t holds[2] = {0, 0};
	for (int i = 0; i < t[EXPR_COND_CMPS]; i++) {
		enum opc op = (enum opc)*p++;
		int64_t a, b;
		if (!(p = cond_side(p, slots, (uint64_t)t[EXPR_COND_BOUND], &a)) ||
		    !(p = cond_side(p, slots, (uint64_t)t[EXPR_COND_BOUND], &b)))
			return false;
		cr_assert_eq(expr_apply(op, a, b, &holds[i]), EXPR_OK);
	}
	*v = t[EXPR_COND_CMPS] == 1 ? holds[0]
	     : t[EXPR_COND_JOIN] == OPC_AND ? holds[0] && holds[1]
					    : holds[0] || holds[1];
	return true;
}

Test(expr, condition_form_agrees_with_the_program)
{
	static const char *const conds[] = {
		"x < y && x < tid + stages", "!x", "x * 3 - 1 >= tid || y == 7", "tid != y * 4611686018427387904",
		"x && y - 1", "x || !y", "as_int(x * 4) <= tid", "x / 3 > y % 5 && tid", "x == -y",
		"x > 9223372036854775000 + y",
	};
	static const char *const other[] = {"x < y && y < tid && x", "(x < y) + 1", "x * y < 3", "x ? y < 1 : tid > 2",
					    "x < y ? 1 : 0"};
	static const int64_t values[] = {0, 1, -1, 3, 7, -7, 1000, INT32_MAX, INT32_MIN, (int64_t)1 << 40,
					 ((int64_t)1 << 62) - 1, INT64_MAX, INT64_MIN, INT64_MAX - 3};
	const size_t nv = sizeof values / sizeof values[0];
	int inside = 0, outside = 0, held = 0;
	for (size_t si = 0; si < sizeof conds / sizeof conds[0]; si++) {
		struct expr e = compile_ok(conds[si]);
		cr_assert_neq(e.cond_at, 0, "\"%s\" should have a condition form", conds[si]);
		cr_assert_eq(e.shape, EXPR_SHAPE_COND, "\"%s\"", conds[si]);
		for (size_t a = 0; a < nv; a++)
			for (size_t b = 0; b < nv; b++)
				for (size_t c = 0; c < nv; c += 2) {
					int64_t slots[NSLOTS] = {values[c], values[a], values[b]}, v;
					enum expr_fault f = EXPR_OK;
					int64_t want = expr_eval_code(&pool, &e, slots, &f);
					if (!cond_value(&e, slots, &v)) {
						outside++;
						continue;
					}
					inside++;
					held += v != 0;
					cr_assert_eq(f, EXPR_OK, "\"%s\" (%lld, %lld, %lld): inside the bound but faulted",
						     conds[si], (long long)slots[0], (long long)slots[1], (long long)slots[2]);
					cr_assert_eq(v, want, "\"%s\" (%lld, %lld, %lld): form %lld, program %lld", conds[si],
						     (long long)slots[0], (long long)slots[1], (long long)slots[2], (long long)v,
						     (long long)want);
				}
	}
	cr_assert_gt(inside, 5000, "values inside the bounds are covered (%d)", inside);
	cr_assert_gt(outside, 1000, "values outside the bounds are covered (%d)", outside);
	cr_assert_gt(held, 1000, "conditions that hold are covered (%d)", held);
	cr_assert_lt(held, inside - 1000, "conditions that fail are covered (%d of %d hold)", held, inside);
	for (size_t si = 0; si < sizeof other / sizeof other[0]; si++)
		cr_assert_eq(compile_ok(other[si]).cond_at, 0, "\"%s\" has no condition form", other[si]);
}

/* e's value from its select form, as affine_ends takes each end; false where a slot lies outside the bound. */
static bool select_value(const struct expr *e, const int64_t *slots, int64_t *v)
{
	const int64_t *t = pool.words + e->sel_at, *p = t + EXPR_SEL_HEAD + 1;
	uint64_t bound = (uint64_t)t[EXPR_SEL_BOUND];
	int64_t a, b, holds;
	if (!(p = cond_side(p, slots, bound, &a)) || !(p = cond_side(p, slots, bound, &b)))
		return false;
	cr_assert_eq(expr_apply((enum opc)t[EXPR_SEL_HEAD], a, b, &holds), EXPR_OK);
	if (!holds)
		p += 2 + p[0] * EXPR_TERM_WORDS;
	return cond_side(p, slots, bound, v) != NULL;
}

/*
 * The select form (a ?: of a comparison between linear sides and two linear values: the cp.async GEMM's
 * chunk_src) against the program at slot values inside and outside its bound, on both sides; a side
 * that faults is not run by either where the condition does not take it.  The lanes' evaluation of
 * such a rise is lane_affine_agrees_with_thread_by_thread's.
 */
Test(expr, select_form_agrees_with_the_program)
{
	static const char *const sels[] = {
		"tid + 128 < 256 ? x * 2048 + (tid + 128) * 8 : x * 2048 + (tid - 128) * 8", "x > 2 ? tid * 4 : tid - y",
		"!x ? tid : y * 3", "x ? 4611686018427387904 - tid : tid + x", "x % 4 >= y / 2 ? 5 : -tid",
		"tid <= 9223372036854775800 ? tid + x : -tid", "x == y ? as_int(tid + 1) : 7",
	};
	static const char *const other[] = {"x > 2 && y ? tid : 1", "x ? tid * y : 1", "x + (y ? 1 : 2)",
					    "x < y ? 1 : 7 / x", "x * y < 3 ? tid : x"};
	static const int64_t values[] = {0, 1, -1, 3, 7, -7, 1000, INT32_MAX, INT32_MIN, (int64_t)1 << 40,
					 ((int64_t)1 << 62) - 1, INT64_MAX, INT64_MIN, INT64_MAX - 3};
	const size_t nv = sizeof values / sizeof values[0];
	int inside = 0, outside = 0;
	for (size_t si = 0; si < sizeof sels / sizeof sels[0]; si++) {
		struct expr e = compile_ok(sels[si]);
		cr_assert_neq(e.sel_at, 0, "\"%s\" should have a select form", sels[si]);
		for (size_t a = 0; a < nv; a++)
			for (size_t b = 0; b < nv; b++)
				for (size_t c = 0; c < nv; c++) {
					int64_t slots[NSLOTS] = {values[c], values[a], values[b]};
					form_against_program(sels[si], &e, select_value, slots, &inside, &outside);
				}
	}
	cr_assert_gt(inside, 5000, "values inside the bounds are covered (%d)", inside);
	cr_assert_gt(outside, 1000, "values outside the bounds are covered (%d)", outside);
	for (size_t si = 0; si < sizeof other / sizeof other[0]; si++)
		cr_assert_eq(compile_ok(other[si]).sel_at, 0, "\"%s\" has no select form", other[si]);
}

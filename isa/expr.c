#include "expr.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"

enum node_kind { N_CONST, N_SLOT, N_UNARY, N_BINARY, N_AND, N_OR, N_COND };

struct node {
	enum node_kind kind;
	enum opc op;
	int a, b, c; /* children */
	int64_t value;
	bool per_thread;
	uint32_t size; /* nodes once expanded: helper arguments are shared, not copied */
};

/* Helpers may use an argument many times; the expanded tree must stay small. */
#define MAX_EXPANDED 100000

#define MAX_NODES 4096
#define MAX_HELPER_DEPTH 16

struct binding {
	const char *name;
	int node;
};

struct parser {
	const char *src;
	size_t pos;
	const struct expr_names *names;
	struct node *nodes;
	int nnodes;
	char *err;
	size_t errsz;
	bool failed;
	const struct binding *bind; /* helper parameters in scope */
	int nbind;
	int depth;
	const char *where; /* helper being expanded, for messages */
	const struct parser *outer; /* the parser of the expression that called it */
	int nest;	   /* parentheses and unary operators open now */
};

#define MAX_NEST 200

static int fail(struct parser *p, const char *fmt, const char *arg)
{
	if (!p->failed) {
		char what[256];
		snprintf(what, sizeof what, fmt, arg ? arg : "");
		/* The explanation first: long sources are shortened, never the reason. */
		size_t len = strlen(p->src);
		if (p->where)
			snprintf(p->err, p->errsz, "%s (in helper %s, column %zu)", what, p->where, p->pos + 1);
		else
			snprintf(p->err, p->errsz, "%s (column %zu of \"%.60s%s\")", what, p->pos + 1, p->src,
				 len > 60 ? "..." : "");
	}
	p->failed = true;
	return -1;
}

/*
 * An unknown name (call: used as a function) with the closest known one, if any is close.
 * Helpers are offered for plain names as calls, since "block_batch" without its
 * arguments is a call the writer forgot to finish.
 */
static int fail_unknown(struct parser *p, const char *name, bool call)
{
	/* Room for every variable a kernel may declare, its parameters and launch constants. */
	enum { MAX_LISTED = 2048 };
	size_t nh = p->names->nhelpers;
	const char **cand = malloc((MAX_LISTED + 16 + nh + 1) * sizeof *cand);
	size_t n = 0;
	if (cand) {
		if (call) {
			cand[n++] = "min";
			cand[n++] = "max";
		} else {
			for (int i = 0; i < p->nbind; i++)
				cand[n++] = p->bind[i].name;
			if (p->names->list)
				n += p->names->list(p->names->ctx, cand + n, MAX_LISTED);
		}
		for (size_t i = 0; i < nh; i++)
			cand[n++] = p->names->helpers[i].name;
		cand[n] = NULL;
	}
	const char *hint = cand ? suggest_name(name, cand) : NULL;
	bool hint_is_helper = false;
	for (size_t i = 0; hint && !call && i < p->names->nhelpers; i++)
		hint_is_helper = hint_is_helper || hint == p->names->helpers[i].name;
	char what[160];
	if (hint)
		snprintf(what, sizeof what, "%s '%s'; did you mean '%s%s'?", call ? "unknown function" : "undefined name",
			 name, hint, hint_is_helper ? "(...)" : "");
	else
		snprintf(what, sizeof what, "%s '%s'", call ? "unknown function" : "undefined name", name);
	free(cand);
	return fail(p, "%s", what);
}

/* Arithmetic shift right, spelled out: >> of a negative value is implementation-defined in C. */
static enum expr_fault apply_unary(enum opc op, int64_t a, int64_t *r)
{
	switch (op) {
	case OPC_NEG: return __builtin_sub_overflow((int64_t)0, a, r) ? EXPR_OVERFLOW : EXPR_OK;
	case OPC_LNOT: *r = !a; return EXPR_OK;
	case OPC_BNOT: *r = ~a; return EXPR_OK;
	case OPC_LOCAL: *r = a; return EXPR_OK;
	case OPC_INT32:
		/* C would wrap (implementation-defined); a wrapped index addresses the wrong element, so a fault as overflow is */
		*r = a;
		return a < INT32_MIN || a > INT32_MAX ? EXPR_OVERFLOW : EXPR_OK;
	default: *r = a != 0; return EXPR_OK;
	}
}

static int new_node(struct parser *p, struct node n)
{
	if (p->nnodes >= MAX_NODES)
		return fail(p, "expression too large", NULL);
	uint64_t size = 1;
	if (n.kind == N_UNARY || n.kind == N_BINARY || n.kind == N_AND || n.kind == N_OR || n.kind == N_COND)
		size += p->nodes[n.a].size;
	if (n.kind == N_BINARY || n.kind == N_AND || n.kind == N_OR || n.kind == N_COND)
		size += p->nodes[n.b].size;
	if (n.kind == N_COND)
		size += p->nodes[n.c].size;
	if (size > MAX_EXPANDED)
		return fail(p, "expression too large once its helpers are expanded", NULL);
	n.size = (uint32_t)size;
	p->nodes[p->nnodes] = n;
	return p->nnodes++;
}

static int mk_const(struct parser *p, int64_t v)
{
	return new_node(p, (struct node){.kind = N_CONST, .value = v});
}

static int mk_unary(struct parser *p, enum opc op, int a)
{
	if (a < 0)
		return -1;
	if (p->nodes[a].kind == N_CONST) {
		int64_t r;
		enum expr_fault f = apply_unary(op, p->nodes[a].value, &r);
		if (f)
			return fail(p, "%s in a constant expression", expr_fault_name(f));
		return mk_const(p, r);
	}
	return new_node(p, (struct node){.kind = N_UNARY, .op = op, .a = a, .per_thread = p->nodes[a].per_thread});
}

static int mk_binary(struct parser *p, enum opc op, int a, int b)
{
	if (a < 0 || b < 0)
		return -1;
	if (p->nodes[a].kind == N_CONST && p->nodes[b].kind == N_CONST) {
		int64_t r;
		enum expr_fault f = expr_apply(op, p->nodes[a].value, p->nodes[b].value, &r);
		if (f)
			return fail(p, "%s in a constant expression", expr_fault_name(f));
		return mk_const(p, r);
	}
	/*
	 * What the compiler folds whatever x holds (a template parameter of 1, as stages_count = 1
	 * makes of the examples' x % stages_count: the H100's code has neither the remainder nor the
	 * local array it indexes): x % 1 is 0, x * 1, x / 1, x + 0 and x - 0 are x.
	 */
	if (p->nodes[b].kind == N_CONST) {
		int64_t v = p->nodes[b].value;
		if (op == OPC_MOD && v == 1)
			return mk_const(p, 0);
		if (((op == OPC_MUL || op == OPC_DIV) && v == 1) || ((op == OPC_ADD || op == OPC_SUB) && v == 0))
			return a;
	}
	if (p->nodes[a].kind == N_CONST &&
	    ((op == OPC_MUL && p->nodes[a].value == 1) || (op == OPC_ADD && p->nodes[a].value == 0)))
		return b;
	return new_node(p, (struct node){.kind = N_BINARY,
					 .op = op,
					 .a = a,
					 .b = b,
					 .per_thread = p->nodes[a].per_thread || p->nodes[b].per_thread});
}

static int mk_logic(struct parser *p, enum node_kind kind, int a, int b)
{
	if (a < 0 || b < 0)
		return -1;
	if (p->nodes[a].kind == N_CONST) {
		bool av = p->nodes[a].value != 0;
		if (kind == N_AND && !av)
			return mk_const(p, 0);
		if (kind == N_OR && av)
			return mk_const(p, 1);
		return mk_unary(p, OPC_BOOL, b);
	}
	return new_node(p, (struct node){.kind = kind,
					 .a = a,
					 .b = b,
					 .per_thread = p->nodes[a].per_thread || p->nodes[b].per_thread});
}

static int mk_cond(struct parser *p, int c, int a, int b)
{
	if (c < 0 || a < 0 || b < 0)
		return -1;
	if (p->nodes[c].kind == N_CONST)
		return p->nodes[c].value ? a : b;
	return new_node(p, (struct node){.kind = N_COND,
					 .a = c,
					 .b = a,
					 .c = b,
					 .per_thread = p->nodes[a].per_thread || p->nodes[b].per_thread ||
						       p->nodes[c].per_thread});
}

static void skip_space(struct parser *p)
{
	while (isspace((unsigned char)p->src[p->pos]))
		p->pos++;
}

static bool accept(struct parser *p, const char *tok)
{
	skip_space(p);
	size_t n = strlen(tok);
	if (strncmp(p->src + p->pos, tok, n) != 0)
		return false;
	/* "<" must not swallow "<<" or "<=", "&" not "&&", and so on. */
	char next = p->src[p->pos + n];
	if (n == 1 && strchr("<>&|", tok[0]) && (next == '=' || next == tok[0]))
		return false;
	if (n == 1 && tok[0] == '!' && next == '=')
		return false;
	p->pos += n;
	return true;
}

static int parse_expr(struct parser *p);

/* name( has been read; at is where the name starts, for messages about it. */
static int parse_call(struct parser *p, const char *name, size_t at)
{
	int args[8];
	int nargs = 0;
	if (!accept(p, ")")) {
		do {
			if (nargs == 8)
				return fail(p, "too many arguments to %s", name);
			args[nargs] = parse_expr(p);
			if (args[nargs++] < 0)
				return -1;
		} while (accept(p, ","));
		if (!accept(p, ")"))
			return fail(p, "expected ')' after the arguments of %s", name);
	}
	if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0) {
		if (nargs != 2)
			return fail(p, "%s takes 2 arguments", name);
		return mk_binary(p, name[1] == 'i' ? OPC_MIN : OPC_MAX, args[0], args[1]);
	}
	for (size_t i = 0; i < p->names->nhelpers; i++) {
		const struct expr_helper *h = &p->names->helpers[i];
		if (strcmp(h->name, name) != 0)
			continue;
		if (nargs != h->nparams) {
			char msg[128];
			snprintf(msg, sizeof msg, "%%s takes %d argument%s", h->nparams, h->nparams == 1 ? "" : "s");
			return fail(p, msg, name);
		}
		if (p->depth >= MAX_HELPER_DEPTH) {
			bool recursive = false; /* is name already being expanded further out? */
			for (const struct parser *q = p; q && !recursive; q = q->outer)
				recursive = q->where && !strcmp(q->where, name);
			char msg[128];
			snprintf(msg, sizeof msg, recursive ? "helper %%s calls itself: helpers cannot recurse"
							    : "helpers nest more than %d deep at %%s",
				 MAX_HELPER_DEPTH);
			return fail(p, msg, name);
		}
		struct binding bind[8];
		for (int a = 0; a < nargs; a++)
			bind[a] = (struct binding){h->params[a], args[a]};
		struct parser sub = *p;
		sub.src = h->body;
		sub.pos = 0;
		sub.bind = bind;
		sub.nbind = nargs;
		sub.depth = p->depth + 1;
		sub.where = h->name;
		sub.outer = p;
		int r = parse_expr(&sub);
		skip_space(&sub);
		if (r >= 0 && sub.src[sub.pos])
			r = fail(&sub, "unexpected '%s'", sub.src + sub.pos);
		p->nnodes = sub.nnodes;
		p->failed = sub.failed;
		/* an element of a local array: what the helper computes is where it was stored; a constant index folds */
		if (h->local_array && r >= 0)
			r = mk_unary(p, OPC_LOCAL, r);
		return h->returns_int && r >= 0 ? mk_unary(p, OPC_INT32, r) : r;
	}
	p->pos = at;
	return fail_unknown(p, name, true);
}

static int parse_primary(struct parser *p)
{
	skip_space(p);
	const char *s = p->src + p->pos;
	if (accept(p, "(")) {
		int r = parse_expr(p);
		if (r >= 0 && !accept(p, ")"))
			return fail(p, "expected ')'", NULL);
		return r;
	}
	if (isdigit((unsigned char)*s)) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(s, &end, 0);
		if (errno || v > (unsigned long long)INT64_MAX)
			return fail(p, "number out of range", NULL);
		if (isalnum((unsigned char)*end) || *end == '_')
			return fail(p, "bad number", NULL);
		p->pos += (size_t)(end - s);
		return mk_const(p, (int64_t)v);
	}
	if (isalpha((unsigned char)*s) || *s == '_') {
		char name[64];
		size_t n = 0;
		while ((isalnum((unsigned char)s[n]) || s[n] == '_') && n + 1 < sizeof name) {
			name[n] = s[n];
			n++;
		}
		name[n] = '\0';
		p->pos += n;
		if (accept(p, "("))
			return parse_call(p, name, (size_t)(s - p->src));
		for (int i = 0; i < p->nbind; i++)
			if (strcmp(p->bind[i].name, name) == 0)
				return p->bind[i].node;
		int64_t v = 0;
		bool per_thread = false;
		switch (p->names->lookup(p->names->ctx, name, &v, &per_thread)) {
		case EXPR_NAME_CONST: return mk_const(p, v);
		case EXPR_NAME_SLOT:
			return new_node(p, (struct node){.kind = N_SLOT, .value = v, .per_thread = per_thread});
		default:
			p->pos = (size_t)(s - p->src);
			return fail_unknown(p, name, false);
		}
	}
	if (!*s)
		return fail(p, "unexpected end of expression", NULL);
	return fail(p, "unexpected '%s'", s);
}

static int parse_unary_inner(struct parser *p);

static int parse_unary(struct parser *p)
{
	if (++p->nest > MAX_NEST)
		return fail(p, "expression nests too deeply", NULL);
	int r = parse_unary_inner(p);
	p->nest--;
	return r;
}

static int parse_unary_inner(struct parser *p)
{
	if (accept(p, "-"))
		return mk_unary(p, OPC_NEG, parse_unary(p));
	if (accept(p, "!"))
		return mk_unary(p, OPC_LNOT, parse_unary(p));
	if (accept(p, "~"))
		return mk_unary(p, OPC_BNOT, parse_unary(p));
	if (accept(p, "+"))
		return parse_unary(p);
	return parse_primary(p);
}

struct binop {
	const char *tok;
	int prec;
	enum opc op;
};

/* Longer tokens first so that "<=" is tried before "<". */
static const struct binop binops[] = {
	{"||", 2, 0},	   {"&&", 3, 0},       {"==", 7, OPC_EQ},  {"!=", 7, OPC_NE},	 {"<=", 8, OPC_LE},
	{">=", 8, OPC_GE}, {"<<", 9, OPC_SHL}, {">>", 9, OPC_SHR}, {"|", 4, OPC_OR},	 {"^", 5, OPC_XOR},
	{"&", 6, OPC_AND}, {"<", 8, OPC_LT},   {">", 8, OPC_GT},   {"+", 10, OPC_ADD}, {"-", 10, OPC_SUB},
	{"*", 11, OPC_MUL}, {"/", 11, OPC_DIV}, {"%", 11, OPC_MOD},
};

static int parse_binary(struct parser *p, int min_prec)
{
	int lhs = parse_unary(p);
	while (lhs >= 0) {
		const struct binop *found = NULL;
		size_t save = p->pos;
		for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++) {
			if (binops[i].prec < min_prec)
				continue;
			if (accept(p, binops[i].tok)) {
				found = &binops[i];
				break;
			}
		}
		if (!found) {
			p->pos = save;
			break;
		}
		int rhs = parse_binary(p, found->prec + 1);
		if (found->prec == 2)
			lhs = mk_logic(p, N_OR, lhs, rhs);
		else if (found->prec == 3)
			lhs = mk_logic(p, N_AND, lhs, rhs);
		else
			lhs = mk_binary(p, found->op, lhs, rhs);
	}
	return lhs;
}

static int parse_expr(struct parser *p)
{
	int c = parse_binary(p, 2);
	if (c < 0 || !accept(p, "?"))
		return c;
	int a = parse_expr(p);
	if (a < 0)
		return -1;
	if (!accept(p, ":"))
		return fail(p, "expected ':' in ?:", NULL);
	int b = parse_expr(p);
	return mk_cond(p, c, a, b);
}

/* --- emission ---------------------------------------------------------------- */

#define EVAL_STACK 64

static int stack_need(const struct node *nodes, int n)
{
	const struct node *nd = &nodes[n];
	int a, b, c;
	switch (nd->kind) {
	case N_CONST:
	case N_SLOT: return 1;
	case N_UNARY: return stack_need(nodes, nd->a);
	case N_BINARY:
		a = stack_need(nodes, nd->a);
		b = stack_need(nodes, nd->b) + 1;
		return a > b ? a : b;
	default:
		a = stack_need(nodes, nd->a);
		b = stack_need(nodes, nd->b);
		c = nd->kind == N_COND ? stack_need(nodes, nd->c) : 1;
		return a > b ? (a > c ? a : c) : (b > c ? b : c);
	}
}

static int emit_word(struct expr_pool *pool, int64_t w)
{
	if (pool->len == pool->cap) {
		uint32_t cap = pool->cap ? pool->cap * 2 : 256;
		int64_t *words = realloc(pool->words, cap * sizeof *words);
		if (!words)
			return -1;
		pool->words = words;
		pool->cap = cap;
	}
	pool->words[pool->len++] = w;
	return 0;
}

/* The register slots an expression reads, as a bit set (63 stands for every slot from 63 on). */
static uint64_t slots_read(const struct node *nodes, int n)
{
	const struct node *nd = &nodes[n];
	switch (nd->kind) {
	case N_CONST: return 0;
	case N_SLOT: return 1ull << (nd->value < 63 ? nd->value : 63);
	case N_UNARY: return slots_read(nodes, nd->a);
	case N_COND: return slots_read(nodes, nd->a) | slots_read(nodes, nd->b) | slots_read(nodes, nd->c);
	default: return slots_read(nodes, nd->a) | slots_read(nodes, nd->b);
	}
}

/*
 * Divisions and remainders the compiler cannot turn into a shift or a mask:
 * by a constant that is not a power of two (a multiply-high sequence) or by
 * a run-time value (a division routine).
 */
static uint32_t slow_divides(const struct node *nodes, int n)
{
	const struct node *nd = &nodes[n];
	switch (nd->kind) {
	case N_CONST:
	case N_SLOT: return 0;
	case N_UNARY: return slow_divides(nodes, nd->a);
	case N_COND: return slow_divides(nodes, nd->a) + slow_divides(nodes, nd->b) + slow_divides(nodes, nd->c);
	case N_BINARY: {
		uint32_t here = 0;
		if (nd->op == OPC_DIV || nd->op == OPC_MOD) {
			const struct node *d = &nodes[nd->b];
			bool pow2 = d->kind == N_CONST && d->value > 0 && (d->value & (d->value - 1)) == 0;
			here = !pow2;
		}
		return here + slow_divides(nodes, nd->a) + slow_divides(nodes, nd->b);
	}
	default: return slow_divides(nodes, nd->a) + slow_divides(nodes, nd->b);
	}
}

/* How an expression's value varies over a warp's lanes, given which slots vary (lane_form). */
enum lane_form {
	FORM_UNIFORM, /* reads no lane slot */
	FORM_AFFINE,  /* a uniform value plus the lane times a uniform step */
	FORM_OTHER,
};

/*
 * The form of node n when the slots of lane_slots are affine in the lane
 * and every other slot is uniform.  Only operators whose fault is the exact
 * value leaving a range keep the affine form (ADD, SUB, NEG, MUL and SHL by
 * a uniform value, the int conversion): over lanes lo..hi each node's exact
 * value then lies between its values at lo and hi, so a program that faults
 * at neither end faults at no lane between.  A ?: keeps it when its
 * condition is uniform, since every lane takes the same side, or an
 * ordered comparison of affine values (ordered_form): where the ends take
 * the same side every lane between does (eval_pair runs the ends and gives
 * up where they part).
 */
static enum lane_form lane_form(const struct node *nodes, int n, uint8_t lane_slots);

/*
 * A ?:'s condition as lane_form sees it: an ordered comparison (<, <=, >,
 * >=) of two affine values is FORM_AFFINE, since their difference is
 * affine in the lane and so changes sign at most once over lanes lo..hi
 * (a chunk index against the end of the first tile: gemm_cp_async_multistage's
 * chunk_src); == and != are not monotone over the lanes, nor && and ||.
 */
static enum lane_form ordered_form(const struct node *nodes, int n, uint8_t lane_slots)
{
	const struct node *nd = &nodes[n];
	enum lane_form f = lane_form(nodes, n, lane_slots);
	if (f != FORM_OTHER || nd->kind != N_BINARY || nd->op < OPC_LT || nd->op > OPC_GE)
		return f;
	enum lane_form a = lane_form(nodes, nd->a, lane_slots), b = lane_form(nodes, nd->b, lane_slots);
	return a == FORM_OTHER || b == FORM_OTHER ? FORM_OTHER : FORM_AFFINE;
}

static enum lane_form lane_form(const struct node *nodes, int n, uint8_t lane_slots)
{
	const struct node *nd = &nodes[n];
	enum lane_form a, b, c;
	switch (nd->kind) {
	case N_CONST: return FORM_UNIFORM;
	case N_SLOT: return nd->value < 8 && (lane_slots >> nd->value & 1) ? FORM_AFFINE : FORM_UNIFORM;
	case N_UNARY:
		a = lane_form(nodes, nd->a, lane_slots);
		return a == FORM_UNIFORM || nd->op == OPC_NEG || nd->op == OPC_INT32 ? a : FORM_OTHER;
	case N_BINARY:
		a = lane_form(nodes, nd->a, lane_slots);
		b = lane_form(nodes, nd->b, lane_slots);
		if (a == FORM_OTHER || b == FORM_OTHER)
			return FORM_OTHER;
		if (a == FORM_UNIFORM && b == FORM_UNIFORM)
			return FORM_UNIFORM;
		if (nd->op == OPC_ADD || nd->op == OPC_SUB)
			return FORM_AFFINE;
		if (nd->op == OPC_MUL && (a == FORM_UNIFORM || b == FORM_UNIFORM))
			return FORM_AFFINE;
		return nd->op == OPC_SHL && b == FORM_UNIFORM ? FORM_AFFINE : FORM_OTHER;
	case N_COND:
		a = ordered_form(nodes, nd->a, lane_slots);
		b = lane_form(nodes, nd->b, lane_slots);
		c = lane_form(nodes, nd->c, lane_slots);
		if (a == FORM_OTHER || b == FORM_OTHER || c == FORM_OTHER)
			return FORM_OTHER;
		return a == FORM_AFFINE || b == FORM_AFFINE || c == FORM_AFFINE ? FORM_AFFINE : FORM_UNIFORM;
	default:
		a = lane_form(nodes, nd->a, lane_slots);
		b = lane_form(nodes, nd->b, lane_slots);
		return a == FORM_UNIFORM && b == FORM_UNIFORM ? FORM_UNIFORM : FORM_OTHER;
	}
}

static int emit(struct expr_pool *pool, const struct node *nodes, int n)
{
	const struct node *nd = &nodes[n];
	int rc = 0;
	uint32_t patch, patch2;
	switch (nd->kind) {
	case N_CONST: return emit_word(pool, OPC_PUSH) || emit_word(pool, nd->value);
	case N_SLOT: return emit_word(pool, OPC_LOAD) || emit_word(pool, nd->value);
	case N_UNARY: return emit(pool, nodes, nd->a) || emit_word(pool, nd->op);
	case N_BINARY: return emit(pool, nodes, nd->a) || emit(pool, nodes, nd->b) || emit_word(pool, nd->op);
	case N_AND:
	case N_OR:
	case N_COND:
		/* c ? a : b, with a && b = a ? !!b : 0 and a || b = a ? 1 : !!b */
		rc = emit(pool, nodes, nd->a) || emit_word(pool, OPC_JZ) || emit_word(pool, 0);
		if (rc)
			return rc;
		patch = pool->len - 1;
		if (nd->kind == N_AND)
			rc = emit(pool, nodes, nd->b) || emit_word(pool, OPC_BOOL);
		else if (nd->kind == N_OR)
			rc = emit_word(pool, OPC_PUSH) || emit_word(pool, 1);
		else
			rc = emit(pool, nodes, nd->b);
		rc = rc || emit_word(pool, OPC_JMP) || emit_word(pool, 0);
		if (rc)
			return rc;
		patch2 = pool->len - 1;
		pool->words[patch] = pool->len - patch - 1;
		if (nd->kind == N_AND)
			rc = emit_word(pool, OPC_PUSH) || emit_word(pool, 0);
		else if (nd->kind == N_OR)
			rc = emit(pool, nodes, nd->b) || emit_word(pool, OPC_BOOL);
		else
			rc = emit(pool, nodes, nd->c);
		if (rc)
			return rc;
		pool->words[patch2] = pool->len - patch2 - 1;
		return 0;
	}
	return -1;
}

/* The most terms a linear form keeps (expr.h): an index of a few parts. */
#define LIN_MAX_TERMS 4

/* A node's linear form (expr.h) while expr_compile builds it; its value's magnitude is at most b0 + b1 * the bound. */
struct lin {
	int64_t k;
	int n;
	int64_t t[LIN_MAX_TERMS][EXPR_TERM_WORDS];
	uint64_t b0, b1;
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t magnitude(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

/* Lowers *bound so that the node's value stays within +-limit; false where no bound keeps it there. */
static bool lin_within(const struct lin *l, uint64_t limit, uint64_t *bound)
{
	if (l->b0 > limit)
		return false;
	if (l->b1 && (limit - l->b0) / l->b1 < *bound)
		*bound = (limit - l->b0) / l->b1;
	return true;
}

/* The form times c; false where a coefficient would leave int64. */
static bool lin_scale(struct lin *l, int64_t c)
{
	if (__builtin_mul_overflow(l->k, c, &l->k))
		return false;
	for (int i = 0; i < l->n; i++)
		if (__builtin_mul_overflow(l->t[i][EXPR_TERM_COEF], c, &l->t[i][EXPR_TERM_COEF]))
			return false;
	l->b0 = sat_mul(l->b0, magnitude(c));
	l->b1 = sat_mul(l->b1, magnitude(c));
	return true;
}

/*
 * Node n's linear form, with *bound lowered so that every value the
 * program computes for n and below stays in range; false where n is not
 * linear (a product of two variables, a comparison, a jump...).
 */
static bool linear_of(const struct node *nodes, int n, struct lin *l, uint64_t *bound)
{
	const struct node *nd = &nodes[n];
	struct lin b;
	*l = (struct lin){0};
	switch (nd->kind) {
	case N_CONST:
		l->k = nd->value;
		l->b0 = magnitude(nd->value);
		break;
	case N_SLOT:
		l->n = 1;
		l->t[0][EXPR_TERM_SLOT] = nd->value;
		l->t[0][EXPR_TERM_OP] = OPC_LOAD;
		l->t[0][EXPR_TERM_COEF] = 1;
		l->b1 = 1;
		break;
	case N_UNARY:
		if (!linear_of(nodes, nd->a, l, bound))
			return false;
		if (nd->op == OPC_INT32) {
			if (!lin_within(l, INT32_MAX, bound))
				return false;
		} else if (nd->op != OPC_LOCAL && (nd->op != OPC_NEG || !lin_scale(l, -1))) {
			/* a local array's element is its index's value (apply_unary): the load is the lowering's */
			return false;
		}
		break;
	case N_BINARY:
		if (nd->op == OPC_DIV || nd->op == OPC_MOD) {
			/* a slot by a constant: |slot / d| and |slot % d| are at most |slot| */
			const struct node *d = &nodes[nd->b];
			if (nodes[nd->a].kind != N_SLOT || d->kind != N_CONST || d->value == 0 || d->value == INT64_MIN ||
			    !linear_of(nodes, nd->a, l, bound))
				return false;
			l->t[0][EXPR_TERM_OP] = nd->op;
			l->t[0][EXPR_TERM_DIV] = d->value;
			break;
		}
		if (!linear_of(nodes, nd->a, l, bound) || !linear_of(nodes, nd->b, &b, bound))
			return false;
		if (nd->op == OPC_ADD || nd->op == OPC_SUB) {
			if (l->n + b.n > LIN_MAX_TERMS || (nd->op == OPC_SUB && !lin_scale(&b, -1)) ||
			    __builtin_add_overflow(l->k, b.k, &l->k))
				return false;
			memcpy(l->t[l->n], b.t, (size_t)b.n * sizeof b.t[0]);
			l->n += b.n;
			l->b0 = sat_add(l->b0, b.b0);
			l->b1 = sat_add(l->b1, b.b1);
		} else if (nd->op == OPC_MUL && b.n == 0) {
			if (!lin_scale(l, b.k))
				return false;
		} else if (nd->op == OPC_MUL && l->n == 0) {
			int64_t c = l->k;
			*l = b;
			if (!lin_scale(l, c))
				return false;
		} else if (nd->op == OPC_SHL && b.n == 0 && b.k >= 0 && b.k <= 62) {
			/* no bit shifted out (the bound): a times 2^b */
			if (!lin_scale(l, (int64_t)1 << b.k))
				return false;
		} else {
			return false;
		}
		break;
	default: return false;
	}
	return lin_within(l, INT64_MAX, bound);
}

/* Appends the linear form of the tree at root to the pool, if it has one with a slot, and says where in e->lin_at. */
static int emit_linear(struct expr_pool *pool, const struct node *nodes, int root, struct expr *e)
{
	struct lin l;
	uint64_t bound = (uint64_t)1 << 62;
	if (!linear_of(nodes, root, &l, &bound) || l.n == 0 || bound == 0)
		return 0;
	uint32_t at = pool->len;
	if (emit_word(pool, l.n) || emit_word(pool, l.k) || emit_word(pool, (int64_t)bound))
		return -1;
	for (int i = 0; i < l.n; i++)
		for (int j = 0; j < EXPR_TERM_WORDS; j++)
			if (emit_word(pool, l.t[i][j]))
				return -1;
	e->lin_at = at;
	if (e->shape == EXPR_SHAPE_NONE)
		e->shape = EXPR_SHAPE_LINEAR;
	return 0;
}

/* A comparison of a condition form (expr.h): a op b, each side a linear form. */
struct cmp {
	int64_t op;
	struct lin a, b;
};

static bool is_comparison(const struct node *nd)
{
	return (nd->kind == N_BINARY && nd->op >= OPC_LT && nd->op <= OPC_NE) ||
	       (nd->kind == N_UNARY && (nd->op == OPC_LNOT || nd->op == OPC_BOOL));
}

/* Node n as a comparison of linear sides, a value's truth as one with 0 (inside && and ||); false where it is not. */
static bool cmp_of(const struct node *nodes, int n, struct cmp *c, uint64_t *bound)
{
	const struct node *nd = &nodes[n];
	c->b = (struct lin){0};
	if (nd->kind == N_BINARY && is_comparison(nd)) {
		c->op = nd->op;
		return linear_of(nodes, nd->a, &c->a, bound) && linear_of(nodes, nd->b, &c->b, bound);
	}
	c->op = nd->kind == N_UNARY && nd->op == OPC_LNOT ? OPC_EQ : OPC_NE;
	return linear_of(nodes, is_comparison(nd) ? nd->a : n, &c->a, bound);
}

/* One side of a comparison: its term count, k and terms. */
static int emit_side(struct expr_pool *pool, const struct lin *l)
{
	if (emit_word(pool, l->n) || emit_word(pool, l->k))
		return -1;
	for (int i = 0; i < l->n; i++)
		for (int j = 0; j < EXPR_TERM_WORDS; j++)
			if (emit_word(pool, l->t[i][j]))
				return -1;
	return 0;
}

/* Appends the condition form of the tree at root to the pool, if it has one and no simpler shape, at e->cond_at. */
static int emit_cond(struct expr_pool *pool, const struct node *nodes, int root, struct expr *e)
{
	const struct node *nd = &nodes[root];
	struct cmp c[2];
	uint64_t bound = (uint64_t)1 << 62;
	int n = 1;
	int64_t join = 0;
	if (e->shape != EXPR_SHAPE_NONE)
		return 0;
	if (nd->kind == N_AND || nd->kind == N_OR) {
		if (!cmp_of(nodes, nd->a, &c[0], &bound) || !cmp_of(nodes, nd->b, &c[1], &bound))
			return 0;
		n = 2;
		join = nd->kind == N_AND ? OPC_AND : OPC_OR;
	} else if (!is_comparison(nd) || !cmp_of(nodes, root, &c[0], &bound)) {
		return 0;
	}
	if (bound == 0)
		return 0;
	uint32_t at = pool->len;
	if (emit_word(pool, n) || emit_word(pool, join) || emit_word(pool, (int64_t)bound))
		return -1;
	for (int i = 0; i < n; i++)
		if (emit_word(pool, c[i].op) || emit_side(pool, &c[i].a) || emit_side(pool, &c[i].b))
			return -1;
	e->cond_at = at;
	e->shape = EXPR_SHAPE_COND;
	return 0;
}

/* Appends the select form (expr.h) of the tree at root to the pool, if it has one, at e->sel_at. */
static int emit_select(struct expr_pool *pool, const struct node *nodes, int root, struct expr *e)
{
	const struct node *nd = &nodes[root];
	struct cmp c;
	struct lin a, b;
	uint64_t bound = (uint64_t)1 << 62;
	if (nd->kind != N_COND || !cmp_of(nodes, nd->a, &c, &bound) || !linear_of(nodes, nd->b, &a, &bound) ||
	    !linear_of(nodes, nd->c, &b, &bound) || bound == 0)
		return 0;
	uint32_t at = pool->len;
	if (emit_word(pool, (int64_t)bound) || emit_word(pool, c.op) || emit_side(pool, &c.a) || emit_side(pool, &c.b) ||
	    emit_side(pool, &a) || emit_side(pool, &b))
		return -1;
	e->sel_at = at;
	return 0;
}

/* Whether op is one of expr_apply()'s binary operators. */
static inline bool is_binary(enum opc op) { return op >= OPC_ADD && op <= OPC_MAX; }

/* The program is one of the simple shapes callers may run without the stack machine (enum expr_shape). */
static void find_shape(const int64_t *w, struct expr *out)
{
	out->shape = EXPR_SHAPE_NONE;
	if (w[0] != OPC_LOAD || w[1] < 0 || w[1] > UINT16_MAX)
		return;
	if (out->len == 2) {
		out->shape = EXPR_SHAPE_SLOT;
	} else if (out->len == 5 && (w[2] == OPC_PUSH || w[2] == OPC_LOAD) && is_binary((enum opc)w[4])) {
		out->shape = w[2] == OPC_PUSH ? EXPR_SHAPE_SLOT_CONST : EXPR_SHAPE_SLOT_SLOT;
		out->shape_op = (uint8_t)w[4];
		out->value = w[3];
	} else {
		return;
	}
	out->shape_slot = (uint16_t)w[1];
}

int expr_compile(struct expr_pool *pool, const char *src, const struct expr_names *names, struct expr *out,
		 char *err, size_t errsz)
{
	struct node *nodes = malloc(MAX_NODES * sizeof *nodes);
	if (!nodes) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	struct parser p = {.src = src, .names = names, .nodes = nodes, .err = err, .errsz = errsz};
	int root = parse_expr(&p);
	skip_space(&p);
	if (root >= 0 && src[p.pos])
		root = fail(&p, "unexpected '%s'", src + p.pos);
	int rc = -1;
	if (root >= 0) {
		const struct node *r = &nodes[root];
		*out = (struct expr){.is_const = r->kind == N_CONST, .value = r->value, .per_thread = r->per_thread};
		if (r->kind != N_CONST) {
			if (stack_need(nodes, root) > EVAL_STACK) {
				snprintf(err, errsz, "expression too deeply nested to evaluate: \"%s\"", src);
				goto done;
			}
			out->at = pool->len;
			if (emit(pool, nodes, root)) {
				snprintf(err, errsz, "out of memory");
				goto done;
			}
			out->len = pool->len - out->at;
			find_shape(pool->words + out->at, out);
			if (emit_linear(pool, nodes, root, out) || emit_cond(pool, nodes, root, out) ||
			    emit_select(pool, nodes, root, out)) {
				snprintf(err, errsz, "out of memory");
				goto done;
			}
			out->slots = slots_read(nodes, root);
			if (lane_form(nodes, root, names->lane_slots) == FORM_AFFINE)
				out->lane_affine = (uint8_t)(out->slots & names->lane_slots);
			uint32_t sd = slow_divides(nodes, root);
			out->slow_divides = (uint8_t)(sd > 255 ? 255 : sd);
		}
		rc = 0;
	}
done:
	free(nodes);
	return rc;
}


/*
 * A warp-uniform expression runs here once per warp-instruction, so the
 * arithmetic is expr_apply() inlined, and a PUSH or LOAD followed by a binary
 * operator (most operands) goes straight in as its right operand, one
 * dispatch and one stack write less.
 */
__attribute__((flatten)) int64_t expr_eval_code(const struct expr_pool *pool, const struct expr *e,
						const int64_t *slots, enum expr_fault *fault)
{
	int64_t st[EVAL_STACK];
	int sp = 0;
	const int64_t *w = pool->words + e->at;
	const int64_t *end = w + e->len;
	while (w < end) {
		enum opc op = (enum opc)*w++;
		int64_t b; /* the right operand of a binary operator */
		switch (op) {
		case OPC_PUSH:
		case OPC_LOAD:
			b = op == OPC_PUSH ? *w : slots[*w];
			w++;
			if (sp >= 1 && w < end && is_binary((enum opc)*w)) {
				op = (enum opc)*w++;
				break;
			}
			if (sp == EVAL_STACK)
				goto overflow;
			st[sp++] = b;
			continue;
		case OPC_NEG:
		case OPC_LNOT:
		case OPC_BNOT:
		case OPC_LOCAL:
		case OPC_INT32:
		case OPC_BOOL: {
			enum expr_fault f = apply_unary(op, st[sp - 1], &st[sp - 1]);
			if (f) {
				*fault = f;
				return 0;
			}
			continue;
		}
		case OPC_JZ:
			sp--;
			if (st[sp] == 0)
				w += *w;
			w++;
			continue;
		case OPC_JMP: w += *w + 1; continue;
		default: b = st[--sp];
		}
		int64_t r;
		enum expr_fault f = expr_apply(op, st[sp - 1], b, &r);
		if (f) {
			*fault = f;
			return 0;
		}
		st[sp - 1] = r;
	}
	return st[0];
overflow:
	*fault = EXPR_OVERFLOW;
	return 0;
}

/*
 * The same program for many threads at once: each instruction is decoded
 * once and applied to every lane, instead of running the whole program per
 * thread.  The arithmetic is expr_apply() and apply_unary(), as in
 * expr_eval_code, so the two cannot disagree; a program with a jump (&&,
 * ||, ?:, where threads may take different paths) or a deeper stack than
 * LANES_STACK is left to the caller, to run thread by thread.
 */
#define LANES_STACK 16

/*
 * One binary operator over the lanes, dst = a OP b; with a constant op,
 * flatten (below) inlines expr_apply() and folds its switch, so each lane is the
 * bare operation.  ADD and SUB take LANES_WRAP.
 */
#define LANES_OP(OP, DST, A, B)                                                         \
	if ((OP) == OPC_ADD || (OP) == OPC_SUB)                                         \
		LANES_WRAP(OP, DST, A, B);                                              \
	else                                                                            \
		for (int l = lo; l <= hi; l++) {                                        \
			int64_t r = 0;                                                  \
			enum expr_fault f = expr_apply((OP), (A), (B), &r);             \
			if (f && !(bad >> l & 1)) {                                     \
				bad |= 1u << l;                                         \
				why[l] = f;                                             \
			}                                                               \
			(DST) = r;                                                      \
		}

/* Whether a + b (add) or a - b wrapped to r: the sign bit of the result. */
#define WRAP_OVERFLOW(add, a, b, r) ((add) ? ((a) ^ (r)) & ((b) ^ (r)) : ((a) ^ (b)) & ((a) ^ (r)))
/*
 * ADD and SUB over the lanes: every lane's wrapped result (what
 * expr_apply's __builtin_add_overflow leaves too) and the overflow ORed
 * over them, a loop without a branch that the compiler vectorises.  Only
 * when a lane overflowed does a second pass find which, from its result
 * and its right operand (its left one is r - b or r + b: dst may be the
 * row it came from), and mark it as expr_apply's fault would.
 */
#define LANES_WRAP(OP, DST, A, B)                                                       \
	do {                                                                            \
		uint64_t ovf_ = 0;                                                      \
		for (int l = lo; l <= hi; l++) {                                        \
			uint64_t a_ = (uint64_t)(A), b_ = (uint64_t)(B);                \
			uint64_t r_ = (OP) == OPC_ADD ? a_ + b_ : a_ - b_;              \
			ovf_ |= WRAP_OVERFLOW((OP) == OPC_ADD, a_, b_, r_);             \
			(DST) = (int64_t)r_;                                            \
		}                                                                       \
		for (int l = lo; (int64_t)ovf_ < 0 && l <= hi; l++) {                   \
			uint64_t b_ = (uint64_t)(B), r_ = (uint64_t)(DST);              \
			uint64_t a_ = (OP) == OPC_ADD ? r_ - b_ : r_ + b_;              \
			if ((int64_t)WRAP_OVERFLOW((OP) == OPC_ADD, a_, b_, r_) < 0 &&  \
			    !(bad >> l & 1)) {                                          \
				bad |= 1u << l;                                         \
				why[l] = EXPR_OVERFLOW;                                 \
			}                                                               \
		}                                                                       \
	} while (0)

/* The two operands per lane: the left at sp - 1, the right just popped, at sp. */
#define LANES_STACKED(OP) LANES_OP(OP, st[sp - 1][l], st[sp - 1][l], st[sp][l])
/* A per-lane left operand and one right value c (a PUSH, or a uniform operand). */
#define LANES_CONST(OP) LANES_OP(OP, st[sp - 1][l], st[sp - 1][l], c)
/* LOAD slot then the operator: the right operand comes straight from the registers. */
#define LANES_REG(OP) LANES_OP(OP, st[sp - 1][l], st[sp - 1][l], src[(size_t)l * lane_stride])
/* ... with a uniform left operand, which meets the lanes here instead of being spread first. */
#define LANES_ONE_REG(OP) LANES_OP(OP, st[sp - 1][l], u, src[(size_t)l * lane_stride])
/* A uniform left operand and a per-lane right one from the stack. */
#define LANES_ONE_STACKED(OP) LANES_OP(OP, st[sp - 1][l], u, st[sp][l])

/* The binary operators, each with its op a constant. */
#define BINARY_SWITCH(op, BODY)            \
	switch (op) {                      \
	case OPC_ADD: BODY(OPC_ADD) break; \
	case OPC_SUB: BODY(OPC_SUB) break; \
	case OPC_MUL: BODY(OPC_MUL) break; \
	case OPC_DIV: BODY(OPC_DIV) break; \
	case OPC_MOD: BODY(OPC_MOD) break; \
	case OPC_SHL: BODY(OPC_SHL) break; \
	case OPC_SHR: BODY(OPC_SHR) break; \
	case OPC_AND: BODY(OPC_AND) break; \
	case OPC_OR: BODY(OPC_OR) break;   \
	case OPC_XOR: BODY(OPC_XOR) break; \
	case OPC_LT: BODY(OPC_LT) break;   \
	case OPC_LE: BODY(OPC_LE) break;   \
	case OPC_GT: BODY(OPC_GT) break;   \
	case OPC_GE: BODY(OPC_GE) break;   \
	case OPC_EQ: BODY(OPC_EQ) break;   \
	case OPC_NE: BODY(OPC_NE) break;   \
	case OPC_MIN: BODY(OPC_MIN) break; \
	case OPC_MAX: BODY(OPC_MAX) break; \
	default: BODY(op) break;           \
	}

/* Whether the word at w is an operator that expr_eval_code would run as binary (its default). */
static bool binary_at(const int64_t *w, const int64_t *end)
{
	if (w >= end)
		return false;
	switch ((enum opc)*w) {
	case OPC_PUSH:
	case OPC_LOAD:
	case OPC_NEG:
	case OPC_LNOT:
	case OPC_BNOT:
	case OPC_LOCAL:
	case OPC_INT32:
	case OPC_BOOL:
	case OPC_JZ:
	case OPC_JMP: return false;
	default: return true;
	}
}

/* Lanes lo..hi fault with f where they had not faulted before (their first fault is the one reported). */
static inline void fault_lanes(int lo, int hi, enum expr_fault f, uint32_t *bad, enum expr_fault why[32])
{
	for (int l = lo; l <= hi; l++)
		if (!(*bad >> l & 1)) {
			*bad |= 1u << l;
			why[l] = f;
		}
}

/* A uniform operation: computed once, and when it faults every lane faults there. */
static inline int64_t once(enum opc op, int64_t a, int64_t b, int lo, int hi, uint32_t *bad, enum expr_fault why[32])
{
	int64_t r = 0;
	enum expr_fault f = expr_apply(op, a, b, &r);
	if (f)
		fault_lanes(lo, hi, f, bad, why);
	return r;
}

/*
 * Stack entries that read only uniform slots and constants (a helper's
 * "block * block_size + grid_size * batch" before "+ tid") are one value
 * (uni[i], in one[i]) until a per-lane operand meets them, when they are
 * spread over the lanes: such sub-expressions cost one operation, not one
 * per lane.
 */
static inline int eval_lanes(const struct expr_pool *pool, const struct expr *e, const int64_t *regs,
			     size_t lane_stride, size_t slot_stride, uint64_t uniform, uint32_t mask, int64_t out[32],
			     enum expr_fault *fault)
{
	if (!mask)
		return -1;
	int lo = __builtin_ctz(mask), hi = 31 - __builtin_clz(mask);
	if (e->is_const) {
		for (int l = lo; l <= hi; l++)
			out[l] = e->value;
		return -1;
	}
	int64_t st[LANES_STACK][32], one[LANES_STACK];
	bool uni[LANES_STACK] = {false};
	uint32_t bad = 0; /* lanes that faulted; their values are garbage from then on */
	enum expr_fault why[32];
	int sp = 0;
	const int64_t *w = pool->words + e->at;
	const int64_t *end = w + e->len;
/* The entry at i as a row of lanes. */
#define SPREAD(i)                                         \
	do {                                              \
		if (uni[i]) {                             \
			for (int l = lo; l <= hi; l++)    \
				st[i][l] = one[i];        \
			uni[i] = false;                   \
		}                                         \
	} while (0)
	while (w < end) {
		enum opc op = (enum opc)*w++;
		switch (op) {
		case OPC_PUSH:
		case OPC_LOAD: {
			/* a LOAD of a uniform slot reads its one value from the first lane (every lane of mask has it) */
			bool u = op == OPC_PUSH || (w[0] < 63 && (uniform >> w[0] & 1));
			const int64_t *src = op == OPC_LOAD ? regs + (size_t)w[0] * slot_stride : NULL;
			int64_t c = op == OPC_PUSH ? w[0] : u ? src[(size_t)lo * lane_stride] : 0;
			if (sp >= 1 && binary_at(w + 1, end)) {
				/* fused: the operand goes straight in as the right side of the operator after it */
				enum opc bop = (enum opc)w[1];
				w += 2;
				if (u && uni[sp - 1]) {
					one[sp - 1] = once(bop, one[sp - 1], c, lo, hi, &bad, why);
				} else if (u) {
					BINARY_SWITCH(bop, LANES_CONST)
				} else if (uni[sp - 1]) {
					int64_t u = one[sp - 1];
					uni[sp - 1] = false;
					BINARY_SWITCH(bop, LANES_ONE_REG)
				} else {
					BINARY_SWITCH(bop, LANES_REG)
				}
				break;
			}
			if (sp == LANES_STACK)
				return EXPR_LANES_BY_THREAD;
			uni[sp] = u;
			one[sp] = c;
			if (!u)
				for (int l = lo; l <= hi; l++)
					st[sp][l] = src[(size_t)l * lane_stride];
			sp++;
			w++;
			break;
		}
		case OPC_NEG:
		case OPC_LNOT:
		case OPC_BNOT:
		case OPC_LOCAL:
		case OPC_INT32:
		case OPC_BOOL:
			if (uni[sp - 1]) {
				enum expr_fault f = apply_unary(op, one[sp - 1], &one[sp - 1]);
				if (f)
					fault_lanes(lo, hi, f, &bad, why);
				break;
			}
			for (int l = lo; l <= hi; l++) {
				enum expr_fault f = apply_unary(op, st[sp - 1][l], &st[sp - 1][l]);
				if (f && !(bad >> l & 1)) {
					bad |= 1u << l;
					why[l] = f;
				}
			}
			break;
		case OPC_JZ: {
			/*
			 * c ? a : b (and && ||) where the lanes agree on c (chunk < 256 over a warp's tid + 128 * c,
			 * which ptxas cannot see through either): every lane takes the same side; where they do
			 * not, each lane runs alone (expr_eval_code).  Lanes that faulted already do not count.
			 */
			sp--;
			bool zero;
			if (uni[sp]) {
				zero = one[sp] == 0;
			} else {
				uint32_t live = mask & ~bad ? mask & ~bad : mask;
				zero = st[sp][__builtin_ctz(live)] == 0;
				for (uint32_t m = live; m; m &= m - 1)
					if ((st[sp][__builtin_ctz(m)] == 0) != zero)
						return EXPR_LANES_BY_THREAD;
			}
			if (zero)
				w += *w;
			w++;
			break;
		}
		case OPC_JMP: w += *w + 1; break;
		default: {
			sp--;
			int64_t c = one[sp];
			if (uni[sp] && uni[sp - 1]) {
				one[sp - 1] = once(op, one[sp - 1], c, lo, hi, &bad, why);
			} else if (uni[sp]) {
				BINARY_SWITCH(op, LANES_CONST)
			} else if (uni[sp - 1]) {
				int64_t u = one[sp - 1];
				uni[sp - 1] = false;
				BINARY_SWITCH(op, LANES_ONE_STACKED)
			} else {
				BINARY_SWITCH(op, LANES_STACKED)
			}
		}
		}
	}
	/* Lanes outside mask were computed for a straight loop; their faults do not count. */
	bad &= mask;
	if (!bad && uni[0]) {
		for (int l = lo; l <= hi; l++)
			out[l] = one[0];
		return -1;
	}
	if (!bad) {
		for (int l = lo; l <= hi; l++)
			out[l] = st[0][l];
		return -1;
	}
	SPREAD(0);
#undef SPREAD
	for (int l = lo; l <= hi; l++)
		out[l] = bad >> l & 1 ? 0 : st[0][l];
	*fault = why[__builtin_ctz(bad)];
	return __builtin_ctz(bad);
}

/*
 * expr_eval_code for two threads at once, slots a and b: one dispatch per
 * instruction for both.  False where either faults, or where they would
 * take different sides of a jump (a lane_affine program's conditions are
 * uniform or ordered comparisons of affine values, lane_form: the ends of
 * lanes whose comparison changes sign, or a caller's slot that was not
 * uniform).
 */
static bool eval_pair(const struct expr_pool *pool, const struct expr *e, const int64_t *a, const int64_t *b,
		      int64_t out[2])
{
	int64_t st[EVAL_STACK][2];
	int sp = 0;
	const int64_t *w = pool->words + e->at;
	const int64_t *end = w + e->len;
	while (w < end) {
		enum opc op = (enum opc)*w++;
		int64_t ra, rb; /* the right operand of a binary operator */
		switch (op) {
		case OPC_PUSH:
		case OPC_LOAD:
			ra = op == OPC_PUSH ? *w : a[*w];
			rb = op == OPC_PUSH ? *w : b[*w];
			w++;
			if (sp >= 1 && w < end && is_binary((enum opc)*w)) {
				op = (enum opc)*w++;
				break;
			}
			if (sp == EVAL_STACK)
				return false;
			st[sp][0] = ra;
			st[sp++][1] = rb;
			continue;
		case OPC_NEG:
		case OPC_LNOT:
		case OPC_BNOT:
		case OPC_LOCAL:
		case OPC_INT32:
		case OPC_BOOL:
			if (apply_unary(op, st[sp - 1][0], &st[sp - 1][0]) || apply_unary(op, st[sp - 1][1], &st[sp - 1][1]))
				return false;
			continue;
		case OPC_JZ:
			sp--;
			if ((st[sp][0] == 0) != (st[sp][1] == 0))
				return false;
			if (st[sp][0] == 0)
				w += *w;
			w++;
			continue;
		case OPC_JMP: w += *w + 1; continue;
		default:
			sp--;
			ra = st[sp][0];
			rb = st[sp][1];
		}
		if (expr_apply(op, st[sp - 1][0], ra, &st[sp - 1][0]) || expr_apply(op, st[sp - 1][1], rb, &st[sp - 1][1]))
			return false;
	}
	out[0] = st[0][0];
	out[1] = st[0][1];
	return true;
}

/*
 * A linear form's value at lanes lo and hi into v: k plus its n terms
 * (term ... term + n terms), each read at both lanes; false where a slot
 * lies outside bound.
 */
static bool terms_ends(uint64_t k, const int64_t *term, int64_t n, const int64_t *regs, size_t lane_stride,
		       size_t slot_stride, int lo, int hi, uint64_t bound, int64_t v[2])
{
	uint64_t at_lo = k, at_hi = k;
	for (const int64_t *end = term + n * EXPR_TERM_WORDS; term < end; term += EXPR_TERM_WORDS) {
		const int64_t *r = regs + (size_t)term[EXPR_TERM_SLOT] * slot_stride;
		if (!expr_lin_term(term, r[(size_t)lo * lane_stride], bound, &at_lo) ||
		    !expr_lin_term(term, r[(size_t)hi * lane_stride], bound, &at_hi))
			return false;
	}
	v[0] = (int64_t)at_lo;
	v[1] = (int64_t)at_hi;
	return true;
}

/*
 * e's values at lanes lo and hi from its linear form (expr.h), as eval_pair
 * would find them; false where a slot lies outside the form's bound (then
 * eval_pair runs the program).
 */
static bool linear_ends(const struct expr_pool *pool, const struct expr *e, const int64_t *regs, size_t lane_stride,
			size_t slot_stride, int lo, int hi, int64_t ends[2])
{
	const int64_t *t = pool->words + e->lin_at;
	return terms_ends((uint64_t)t[EXPR_LIN_K], t + EXPR_LIN_HEAD, t[EXPR_LIN_TERMS], regs, lane_stride, slot_stride,
			  lo, hi, (uint64_t)t[EXPR_LIN_BOUND], ends);
}

/*
 * A side of a select form at p (expr.h: its term count, k, terms) at lanes
 * lo and hi into v: the word after it, or NULL where a slot lies outside
 * bound.
 */
static const int64_t *side_ends(const int64_t *p, const int64_t *regs, size_t lane_stride, size_t slot_stride, int lo,
				int hi, uint64_t bound, int64_t v[2])
{
	if (!terms_ends((uint64_t)p[1], p + 2, p[0], regs, lane_stride, slot_stride, lo, hi, bound, v))
		return NULL;
	return p + 2 + p[0] * EXPR_TERM_WORDS;
}

/*
 * e's values at lanes lo and hi from its select form (expr.h), as eval_pair
 * would find them; false where a slot lies outside the form's bound or the
 * ends take different sides (then eval_pair runs the program, and gives up
 * where they part).
 */
static bool select_ends(const struct expr_pool *pool, const struct expr *e, const int64_t *regs, size_t lane_stride,
			size_t slot_stride, int lo, int hi, int64_t ends[2])
{
	const int64_t *t = pool->words + e->sel_at, *p = t + EXPR_SEL_HEAD + 1;
	uint64_t bound = (uint64_t)t[EXPR_SEL_BOUND];
	int64_t a[2], b[2], holds[2];
	if (!(p = side_ends(p, regs, lane_stride, slot_stride, lo, hi, bound, a)) ||
	    !(p = side_ends(p, regs, lane_stride, slot_stride, lo, hi, bound, b)))
		return false;
	for (int i = 0; i < 2; i++)
		expr_apply((enum opc)t[EXPR_SEL_HEAD], a[i], b[i], &holds[i]); /* a comparison: no fault */
	if ((holds[0] == 0) != (holds[1] == 0))
		return false;
	if (!holds[0])
		p += 2 + p[0] * EXPR_TERM_WORDS; /* past the first side: the program's jump */
	return side_ends(p, regs, lane_stride, slot_stride, lo, hi, bound, ends) != NULL;
}

/*
 * A lane_affine expression's values at lanes lo and hi (ends), run as one
 * thread each, and the step between adjacent lanes: a program that faults
 * at neither end faults at no lane between (lane_form), and lane l's value
 * is ends[0] + (l - lo) * step exactly.  False where that does not apply:
 * a slot it reads other than its lane slots is not uniform, or an end
 * faulted, which the warp-wide pass then reports lane by lane.
 */
static bool affine_ends(const struct expr_pool *pool, const struct expr *e, const int64_t *regs, size_t lane_stride,
			size_t slot_stride, uint64_t uniform, int lo, int hi, int64_t ends[2], int64_t *step)
{
	if (e->slots >> 63 || e->slots & ~uniform & ~(uint64_t)e->lane_affine)
		return false;
	int64_t rise;
	if (!(e->lin_at && linear_ends(pool, e, regs, lane_stride, slot_stride, lo, hi, ends)) &&
	    !(e->sel_at && select_ends(pool, e, regs, lane_stride, slot_stride, lo, hi, ends))) {
		int64_t at_lo[63], at_hi[63];
		for (uint64_t b = e->slots; b; b &= b - 1) {
			size_t slot = (size_t)__builtin_ctzll(b);
			at_lo[slot] = regs[(size_t)lo * lane_stride + slot * slot_stride];
			at_hi[slot] = regs[(size_t)hi * lane_stride + slot * slot_stride];
		}
		if (!eval_pair(pool, e, at_lo, at_hi, ends))
			return false;
	}
	if (__builtin_sub_overflow(ends[1], ends[0], &rise))
		return false;
	*step = hi > lo ? rise / (hi - lo) : 0;
	return true;
}

/*
 * A lane_affine expression over lanes lo..hi of mask (affine_ends), the
 * lanes between filled in exactly as running them would give.
 */
static bool affine_lanes(const struct expr_pool *pool, const struct expr *e, const int64_t *regs, size_t lane_stride,
			 size_t slot_stride, uint64_t uniform, uint32_t mask, int64_t out[32])
{
	int lo = __builtin_ctz(mask), hi = 31 - __builtin_clz(mask);
	int64_t ends[2], step;
	if (!affine_ends(pool, e, regs, lane_stride, slot_stride, uniform, lo, hi, ends, &step))
		return false;
	if (lo == 0 && hi == 31) {
		expr_fill_rise(out, ends[0], step);
		return true;
	}
	/* every lane's value lies between the ends, so no lane's step overflows; the one past hi is never stored */
	uint64_t v = (uint64_t)ends[0];
	for (int l = lo; l <= hi; l++, v += (uint64_t)step)
		out[l] = (int64_t)v;
	return true;
}

void expr_fill_rise(int64_t out[32], int64_t first, int64_t step)
{
	/* four lanes a round: the lanes of a round do not wait on each other's sums */
	uint64_t v = (uint64_t)first, step1 = (uint64_t)step, step2 = 2 * step1, step3 = 3 * step1, step4 = 4 * step1;
	for (int l = 0; l < 32; l += 4, v += step4) {
		out[l] = (int64_t)v;
		out[l + 1] = (int64_t)(v + step1);
		out[l + 2] = (int64_t)(v + step2);
		out[l + 3] = (int64_t)(v + step3);
	}
}

__attribute__((flatten)) bool expr_eval_rise(const struct expr_pool *pool, const struct expr *e, const int64_t *regs,
					     size_t lane_stride, size_t slot_stride, uint64_t uniform, int64_t ends[2],
					     int64_t *step)
{
	return e->lane_affine && affine_ends(pool, e, regs, lane_stride, slot_stride, uniform, 0, 31, ends, step);
}

/*
 * e over lanes lo..hi of mask from its linear form (expr.h) where one term
 * reads a slot whose lanes differ, as it is (a uniform base plus a per-lane
 * index: the producers' and consumers' batch indices), and the others are
 * uniform; false where it is not so, or a lane between lo and hi holds a
 * negative value or one outside the form's bound (then the program runs).
 */
static inline bool linear_lanes(const struct expr_pool *pool, const struct expr *e, const int64_t *regs,
				size_t lane_stride, size_t slot_stride, uint64_t uniform, uint32_t mask, int64_t out[32])
{
	int lo = __builtin_ctz(mask), hi = 31 - __builtin_clz(mask);
	const int64_t *t = pool->words + e->lin_at;
	uint64_t bound = (uint64_t)t[EXPR_LIN_BOUND], one = (uint64_t)t[EXPR_LIN_K];
	const int64_t *term = t + EXPR_LIN_HEAD, *end = term + t[EXPR_LIN_TERMS] * EXPR_TERM_WORDS, *row = NULL;
	for (; term < end; term += EXPR_TERM_WORDS) {
		size_t slot = (size_t)term[EXPR_TERM_SLOT];
		if (slot < 63 && uniform >> slot & 1) {
			if (!expr_lin_term(term, regs[(size_t)lo * lane_stride + slot * slot_stride], bound, &one))
				return false;
		} else if (row || term[EXPR_TERM_OP] != OPC_LOAD || term[EXPR_TERM_COEF] != 1) {
			return false;
		} else {
			row = regs + slot * slot_stride;
		}
	}
	if (!row)
		return false; /* every slot uniform: eval_lanes runs it once */
	/*
	 * Inside the bound where every lane's value lies in 0..2^k - 1 <= bound, which their OR says: a test
	 * the lane loop can widen (no 64-bit compare on the baseline target); a negative index runs the program.
	 */
	uint64_t within = (1ull << (63 - __builtin_clzll(bound + 1))) - 1, any = 0;
	for (int l = lo; l <= hi; l++) {
		uint64_t x = (uint64_t)row[(size_t)l * lane_stride];
		any |= x;
		out[l] = (int64_t)(one + x);
	}
	return !(any & ~within);
}

__attribute__((flatten)) int expr_eval_lanes(const struct expr_pool *pool, const struct expr *e, const int64_t *regs,
					     size_t lane_stride, size_t slot_stride, uint64_t uniform, uint32_t mask,
					     int64_t out[32], enum expr_fault *fault)
{
	if (mask && e->lane_affine && affine_lanes(pool, e, regs, lane_stride, slot_stride, uniform, mask, out))
		return -1;
	if (mask && e->lin_at &&
	    (lane_stride == 1 ? linear_lanes(pool, e, regs, 1, slot_stride, uniform, mask, out)
			      : linear_lanes(pool, e, regs, lane_stride, slot_stride, uniform, mask, out)))
		return -1;
	/* A copy for adjacent lanes (slot-major registers), whose lane loops the compiler can widen. */
	if (lane_stride == 1)
		return eval_lanes(pool, e, regs, 1, slot_stride, uniform, mask, out, fault);
	return eval_lanes(pool, e, regs, lane_stride, slot_stride, uniform, mask, out, fault);
}

/*
 * A simple shape over the lanes: one lane loop per operator (LANES_OP, whose
 * lanes start without a fault here), the right operand a row of registers or
 * one constant.
 */
#define SHAPE_ROW(OP) LANES_OP(OP, out[l], a[l], b[l])
#define SHAPE_CONST(OP) LANES_OP(OP, out[l], a[l], c)

__attribute__((flatten)) int expr_apply_lanes(enum opc op, const int64_t *a, const int64_t *b, int64_t c,
					      uint32_t mask, int64_t out[32], enum expr_fault *fault)
{
	if (!mask)
		return -1;
	int lo = __builtin_ctz(mask), hi = 31 - __builtin_clz(mask);
	uint32_t bad = 0;
	enum expr_fault why[32];
	if (b) {
		BINARY_SWITCH(op, SHAPE_ROW)
	} else {
		BINARY_SWITCH(op, SHAPE_CONST)
	}
	bad &= mask;
	if (!bad)
		return -1;
	int first = __builtin_ctz(bad);
	*fault = why[first];
	return first;
}

const char *expr_fault_name(enum expr_fault f)
{
	switch (f) {
	case EXPR_DIV_ZERO: return "division by zero";
	case EXPR_BAD_SHIFT: return "shift count outside 0..63";
	case EXPR_OVERFLOW: return "arithmetic overflow";
	default: return "no fault";
	}
}

void expr_pool_free(struct expr_pool *pool)
{
	if (!pool)
		return;
	free(pool->words);
	*pool = (struct expr_pool){0};
}

#include "kernel.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"

#define MAX_CODE 65536
#define MAX_SLOTS 1024
#define MAX_DEPTH 64

struct scope_var {
	char name[48];
	int slot;
};

struct compiler {
	const struct jdoc *doc;
	struct jpath at;
	struct kernel *k;
	const struct launch *launch;
	struct diag *d;
	struct expr_helper *helpers;
	int nhelpers;
	struct scope_var vars[MAX_SLOTS];
	int nvars; /* visible now, innermost last */
	int depth;
	uint64_t wide_slots; /* variables declared 64-bit (size_t, the default); bit 63 stands for slots 63 on */
	struct diag_list *all; /* a check: every error goes here and compiling goes on (NULL: stop at the first) */
	int errors;            /* how many went to all */
	bool launch_read;      /* an expression compiled since it was cleared named a launch size */
	struct jdoc_locator loc; /* where the last statement's path was, for the next one's */
};

/*
 * In a check (c->all), an input error is recorded and the compiler goes on
 * with the next statement or declaration; otherwise, and for any other
 * failure (out of memory), it stops there.
 */
static int recover(struct compiler *c, int rc)
{
	if (rc != DIAG_INPUT || !c->all)
		return rc;
	diag_list_add(c->all, c->d);
	c->errors++;
	return 0;
}

static const char *const builtin_names[SLOT_BUILTINS] = {"tid", "lane", "warp", "block"};

static enum expr_name_kind lookup(void *ctx, const char *name, int64_t *v, bool *per_thread)
{
	struct compiler *c = ctx;
	for (int i = c->nvars - 1; i >= 0; i--)
		if (strcmp(c->vars[i].name, name) == 0) {
			*v = c->vars[i].slot;
			*per_thread = c->vars[i].slot != SLOT_BLOCK;
			return EXPR_NAME_SLOT;
		}
	for (int i = 0; i < c->k->nparams; i++)
		if (strcmp(c->k->params[i].name, name) == 0) {
			*v = c->k->params[i].value;
			return EXPR_NAME_CONST;
		}
	/* blockDim and gridDim are run-time values in CUDA: ptxas cannot fold them into immediates */
	if (strcmp(name, "block_size") == 0) {
		*v = c->launch->block_size;
		c->launch_read = true;
		return EXPR_NAME_CONST;
	}
	if (strcmp(name, "nblocks") == 0) {
		*v = c->launch->grid_blocks;
		c->launch_read = true;
		return EXPR_NAME_CONST;
	}
	if (strcmp(name, "grid_size") == 0) {
		*v = c->launch->grid_blocks * c->launch->block_size;
		c->launch_read = true;
		return EXPR_NAME_CONST;
	}
	if (strcmp(name, "warp_size") == 0) {
		*v = 32;
		return EXPR_NAME_CONST;
	}
	return EXPR_NAME_UNKNOWN;
}

/* Every name lookup resolves, innermost variables first, for "did you mean". */
static size_t list_names(void *ctx, const char **out, size_t max)
{
	/* the launch constants lookup() resolves */
	static const char *const launch_names[] = {"block_size", "nblocks", "grid_size", "warp_size"};
	struct compiler *c = ctx;
	size_t n = 0;
	for (int i = c->nvars - 1; i >= 0 && n < max; i--)
		out[n++] = c->vars[i].name;
	for (int i = 0; i < c->k->nparams && n < max; i++)
		out[n++] = c->k->params[i].name;
	for (size_t i = 0; i < sizeof launch_names / sizeof launch_names[0] && n < max; i++)
		out[n++] = launch_names[i];
	return n;
}

static struct expr_names names_of(struct compiler *c)
{
	return (struct expr_names){
		.lookup = lookup,
		.ctx = c,
		.helpers = c->helpers,
		.nhelpers = (size_t)c->nhelpers,
		.list = list_names,
		.lane_slots = 1u << SLOT_TID | 1u << SLOT_LANE};
}

/* text as an expression over the names in scope; an error is the compiler's message at the current path. */
static int compile_text(struct compiler *c, const char *text, struct expr *out)
{
	struct expr_names names = names_of(c);
	char err[512];
	if (expr_compile(&c->k->pool, text, &names, out, err, sizeof err))
		return jdoc_error(c->doc, &c->at, c->d, "%s", err);
	return 0;
}

/* Compiles the expression in field key of obj (path c->at is obj). */
static int compile_field(struct compiler *c, const cJSON *obj, const char *key, bool required, const char *dflt,
			 struct expr *out)
{
	char text[1024];
	text[0] = '\0';
	int rc = jdoc_expr_text(c->doc, obj, &c->at, key, required, text, sizeof text, c->d);
	if (rc)
		return rc;
	if (!text[0]) {
		if (!dflt)
			return 0;
		snprintf(text, sizeof text, "%s", dflt);
	}
	size_t old = jpath_key(&c->at, key);
	rc = compile_text(c, text, out);
	jpath_pop(&c->at, old);
	return rc;
}

/* text with every parameter and launch size replaced by its value ("stages * block_size" -> "0 * 256"). */
static void with_values(struct compiler *c, const char *text, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	for (const char *p = text; *p && len + 1 < n;) {
		if (isalpha((unsigned char)*p) || *p == '_') {
			const char *q = p;
			while (isalnum((unsigned char)*q) || *q == '_')
				q++;
			char name[64];
			snprintf(name, sizeof name, "%.*s", (int)(q - p < 63 ? q - p : 63), p);
			int64_t v = 0;
			bool per_thread = false;
			const char *ws = q;
			while (*ws == ' ')
				ws++;
			/* a constant (parameter, launch size) shows its value; a variable, even a uniform one, its name */
			if (*ws != '(' && lookup(c, name, &v, &per_thread) == EXPR_NAME_CONST)
				len += (size_t)snprintf(out + len, n - len, "%lld", (long long)v);
			else
				len += (size_t)snprintf(out + len, n - len, "%s", name);
			p = q;
		} else {
			out[len++] = *p++;
			out[len] = '\0';
		}
	}
}

static int const_field(struct compiler *c, const cJSON *obj, const char *key, bool required, const char *dflt,
		       int64_t lo, int64_t hi, int64_t *out)
{
	struct expr e = {0};
	int rc = compile_field(c, obj, key, required, dflt, &e);
	if (rc)
		return rc;
	size_t old = jpath_key(&c->at, key);
	if (!e.is_const)
		rc = jdoc_error(c->doc, &c->at, c->d, "expected a constant (parameters and launch sizes only)");
	else if (e.value < lo || e.value > hi) {
		/* A size derived from the parameters: show the expression and the values that made it. */
		char text[512] = "", vals[512];
		struct diag ignore;
		jpath_pop(&c->at, old);
		jdoc_expr_text(c->doc, obj, &c->at, key, false, text, sizeof text, &ignore);
		old = jpath_key(&c->at, key);
		with_values(c, text, vals, sizeof vals);
		if (text[0] && strcmp(text, vals))
			rc = jdoc_error(c->doc, &c->at, c->d, "%s = %s = %s = %lld, outside %lld..%lld", c->at.s + 2, text,
					vals, (long long)e.value, (long long)lo, (long long)hi);
		else
			rc = jdoc_error(c->doc, &c->at, c->d, "value %lld outside %lld..%lld", (long long)e.value,
					(long long)lo, (long long)hi);
	}
	else
		*out = e.value;
	jpath_pop(&c->at, old);
	return rc;
}

/*
 * "reload": a constant condition (on the parameters) that each test of the
 * compiled loop reloads a bound from the constant bank with a ULDC, a
 * kernel argument ptxas does not keep in a register (traces/h100/
 * line_counts.csv: one uniform instruction a test on the examples' loops
 * over batch_sz, none on the thread scope's).  smsim cannot tell when ptxas
 * will; the kernel says so from the SASS.  An unrolled loop has no test.
 */
static int loop_reload(struct compiler *c, const cJSON *st, bool unrolled, int64_t *reload)
{
	int rc = const_field(c, st, "reload", false, "0", 0, 1, reload);
	if (rc || !*reload || !unrolled)
		return rc;
	size_t old = jpath_key(&c->at, "reload");
	rc = jdoc_error(c->doc, &c->at, c->d, "an unrolled loop has no test to reload a bound in");
	jpath_pop(&c->at, old);
	return rc;
}

/*
 * A copy's "align" (bytes the pointers' alignment promises): a power of two,
 * by default the smaller element size of its two buffers; into in->align.
 */
static int copy_align(struct compiler *c, const cJSON *st, struct insn *in)
{
	uint32_t dst = c->k->bufs[in->dst.buf].elem_bytes, src = c->k->bufs[in->src.buf].elem_bytes;
	char dflt[16];
	snprintf(dflt, sizeof dflt, "%u", dst < src ? dst : src);
	int64_t align;
	int rc = const_field(c, st, "align", false, dflt, 1, 256, &align);
	if (rc)
		return rc;
	if (align & (align - 1)) {
		size_t old = jpath_key(&c->at, "align");
		rc = jdoc_error(c->doc, &c->at, c->d, "alignment must be a power of two, got %lld", (long long)align);
		jpath_pop(&c->at, old);
		return rc;
	}
	in->align = (uint32_t)align;
	return 0;
}

/* An optional string field that must be one of choices (NULL-terminated); *out: its index, 0 when absent. */
static int choice_field(struct compiler *c, const cJSON *obj, const char *key, const char *const *choices, int *out)
{
	const char *text = NULL;
	*out = 0;
	if (!cJSON_GetObjectItemCaseSensitive(obj, key))
		return 0;
	int rc = jdoc_string(c->doc, obj, &c->at, key, true, &text, c->d);
	if (rc)
		return rc;
	for (int i = 0; choices[i]; i++)
		if (strcmp(text, choices[i]) == 0) {
			*out = i;
			return 0;
		}
	size_t old = jpath_key(&c->at, key);
	char list[256] = "";
	for (int i = 0; choices[i]; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", i ? ", " : "", choices[i]);
	rc = jdoc_error(c->doc, &c->at, c->d, "expected one of %s, not \"%s\"", list, text);
	jpath_pop(&c->at, old);
	return rc;
}

static int find_buf(const struct kernel *k, const char *name)
{
	for (int i = 0; i < k->nbufs; i++)
		if (strcmp(k->bufs[i].name, name) == 0)
			return i;
	return -1;
}

static int find_pipe(const struct kernel *k, const char *name)
{
	for (int i = 0; i < k->npipes; i++)
		if (strcmp(k->pipes[i].name, name) == 0)
			return i;
	return -1;
}

/*
 * The optional "[index]" after a buffer or barrier name (p points just past the name),
 * compiled into out; no suffix means index 0.  Errors point at the current path.
 */
static int compile_index(struct compiler *c, const char *name, const char *p, struct expr *out)
{
	char idx[1024] = "0";
	if (*p == '[') {
		size_t len = strlen(p);
		if (len < 2 || p[len - 1] != ']' || len - 2 >= sizeof idx)
			return jdoc_error(c->doc, &c->at, c->d, "expected \"%s[index]\" with a closing ']'", name);
		memcpy(idx, p + 1, len - 2);
		idx[len - 2] = '\0';
	} else if (*p) {
		return jdoc_error(c->doc, &c->at, c->d, "expected \"%s\" or \"%s[index]\"", name, name);
	}
	struct expr_names names = names_of(c);
	char err[512];
	if (expr_compile(&c->k->pool, idx, &names, out, err, sizeof err))
		return jdoc_error(c->doc, &c->at, c->d, "in the index: %s", err);
	return 0;
}

/* "buf[index]" or "buf". */
static int compile_memref(struct compiler *c, const cJSON *obj, const char *key, enum space want,
			  struct memref *out)
{
	const char *text = NULL;
	int rc = jdoc_string(c->doc, obj, &c->at, key, true, &text, c->d);
	if (rc)
		return rc;
	size_t old = jpath_key(&c->at, key);
	char name[48];
	size_t n = 0;
	while (text[n] && text[n] != '[' && text[n] != ' ' && n + 1 < sizeof name) {
		name[n] = text[n];
		n++;
	}
	name[n] = '\0';
	out->buf = (int16_t)find_buf(c->k, name);
	if (out->buf < 0) {
		const char *names[64];
		int nn = 0;
		for (int i = 0; i < c->k->nbufs && nn < 63; i++)
			names[nn++] = c->k->bufs[i].name;
		names[nn] = NULL;
		const char *hint = suggest_name(name, names);
		rc = hint ? jdoc_error(c->doc, &c->at, c->d, "unknown buffer \"%s\"; did you mean \"%s\"?", name, hint)
			  : jdoc_error(c->doc, &c->at, c->d,
				       "unknown buffer \"%s\"; expected \"name[index]\" with a buffer declared under "
				       "\"shared\" or \"global\"",
				       name);
		goto out;
	}
	if (c->k->bufs[out->buf].space != want) {
		rc = jdoc_error(c->doc, &c->at, c->d, "buffer \"%s\" is in %s memory; expected a %s buffer", name,
				want == SPACE_SHARED ? "global" : "shared", want == SPACE_SHARED ? "shared" : "global");
		goto out;
	}
	const char *p = text + n;
	while (*p == ' ')
		p++;
	rc = compile_index(c, name, p, &out->index);
out:
	jpath_pop(&c->at, old);
	return rc;
}

static uint64_t slot_bit(int slot)
{
	return 1ull << (slot < 63 ? slot : 63);
}

/*
 * compute's "from": the global pointer its input was copied from (the
 * provenance check adds the thread's element), or false for none.  Without
 * it the check takes out's index, which holds for the documented examples;
 * a stencil reading a neighbour, a transpose or a gather says its own map.
 */
static int compile_from(struct compiler *c, const cJSON *st, const cJSON *from, struct memref *out)
{
	if (!from)
		return 0;
	if (cJSON_IsFalse(from)) {
		out->buf = FROM_OFF;
		return 0;
	}
	if (!cJSON_IsString(from)) {
		size_t old = jpath_key(&c->at, "from");
		int rc = jdoc_error(c->doc, &c->at, c->d,
				    "expected \"buffer[index]\", the global pointer the input was copied from, or false");
		jpath_pop(&c->at, old);
		return rc;
	}
	return compile_memref(c, st, "from", SPACE_GLOBAL, out);
}

static int emit(struct compiler *c, struct insn in)
{
	struct kernel *k = c->k;
	if (k->ncode >= MAX_CODE)
		return jdoc_error(c->doc, &c->at, c->d, "kernel too long (more than %d instructions)", MAX_CODE);
	if (k->npaths == 0 || strcmp(k->paths[k->npaths - 1], c->at.s) != 0) {
		k->paths[k->npaths] = strdup(c->at.s);
		if (!k->paths[k->npaths])
			return diag_set(c->d, DIAG_LIMIT, "out of memory");
		jdoc_locate_near(&c->loc, c->doc, c->at.s, &k->path_line[k->npaths], &k->path_col[k->npaths]);
		k->npaths++;
	}
	in.where = (uint32_t)(k->npaths - 1);
	if (in.op == OP_LET || in.op == OP_SET || in.op == OP_BRZ)
		in.narrow = (in.e[0].slots & c->wide_slots) == 0 &&
			    (in.op == OP_BRZ || !(c->wide_slots & slot_bit(in.slot)));
	k->code[k->ncode++] = in;
	return 0;
}

static int declare_var(struct compiler *c, const char *name, bool narrow)
{
	for (int i = 0; i < c->nvars; i++)
		if (strcmp(c->vars[i].name, name) == 0)
			return -jdoc_error(c->doc, &c->at, c->d, "variable \"%s\" is already declared in this scope",
					   name);
	int64_t v;
	bool pt;
	if (lookup(c, name, &v, &pt) != EXPR_NAME_UNKNOWN)
		return -jdoc_error(c->doc, &c->at, c->d, "\"%s\" is a parameter or launch constant", name);
	if (c->k->nslots >= MAX_SLOTS || c->nvars >= MAX_SLOTS)
		return -jdoc_error(c->doc, &c->at, c->d, "too many variables (limit %d)", MAX_SLOTS);
	int slot = c->k->nslots++;
	if (!narrow)
		c->wide_slots |= slot_bit(slot);
	snprintf(c->k->slot_names[slot], sizeof c->k->slot_names[0], "%s", name);
	snprintf(c->vars[c->nvars].name, sizeof c->vars[0].name, "%s", name);
	c->vars[c->nvars++].slot = slot;
	return slot;
}

static int var_name(struct compiler *c, const cJSON *obj, const char **name)
{
	int rc = jdoc_string(c->doc, obj, &c->at, "var", true, name, c->d);
	if (rc)
		return rc;
	const char *s = *name;
	bool ok = (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_';
	for (size_t i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_') ||
		    i >= 40)
			ok = false;
	if (!ok) {
		size_t old = jpath_key(&c->at, "var");
		rc = jdoc_error(c->doc, &c->at, c->d, "expected an identifier for the variable name");
		jpath_pop(&c->at, old);
	}
	return rc;
}

/*
 * "type": "int" declares a 32-bit variable (or a helper returning int),
 * "size_t" (the default: the documented examples index with size_t) a 64-bit
 * one.  Statements on 32-bit values only take single integer instructions on
 * hardware; 64-bit ones take pairs with a carry between them.
 */
static int var_type(struct compiler *c, const cJSON *obj, bool *narrow)
{
	const char *type = "size_t";
	int rc = jdoc_string(c->doc, obj, &c->at, "type", false, &type, c->d);
	if (rc)
		return rc;
	*narrow = strcmp(type, "int") == 0;
	if (*narrow || strcmp(type, "size_t") == 0)
		return 0;
	size_t old = jpath_key(&c->at, "type");
	rc = jdoc_error(c->doc, &c->at, c->d, "expected \"int\" or \"size_t\" as the type, not \"%s\"", type);
	jpath_pop(&c->at, old);
	return rc;
}

static int compile_block(struct compiler *c, const cJSON *arr, const char *key);

static int pipe_field(struct compiler *c, const cJSON *obj, int16_t *out)
{
	const char *name = NULL;
	int rc = jdoc_string(c->doc, obj, &c->at, "pipeline", true, &name, c->d);
	if (rc)
		return rc;
	int p = find_pipe(c->k, name);
	if (p < 0) {
		size_t old = jpath_key(&c->at, "pipeline");
		rc = jdoc_error(c->doc, &c->at, c->d, "unknown pipeline \"%s\"; declare it under \"pipelines\"", name);
		jpath_pop(&c->at, old);
		return rc;
	}
	*out = (int16_t)p;
	return 0;
}

/* "bar" or "bar[index]": a cuda::barrier declared under "barriers". */
static int barrier_field(struct compiler *c, const cJSON *obj, struct insn *in)
{
	const char *text = NULL;
	int rc = jdoc_string(c->doc, obj, &c->at, "barrier", true, &text, c->d);
	if (rc)
		return rc;
	size_t old = jpath_key(&c->at, "barrier");
	char name[48];
	size_t n = 0;
	while (text[n] && text[n] != '[' && n + 1 < sizeof name) {
		name[n] = text[n];
		n++;
	}
	name[n] = '\0';
	in->bar = -1;
	for (int i = 0; i < c->k->nbars; i++)
		if (strcmp(c->k->bars[i].name, name) == 0)
			in->bar = (int16_t)i;
	if (in->bar < 0) {
		rc = jdoc_error(c->doc, &c->at, c->d, "unknown barrier \"%s\"; declare it under \"barriers\"", name);
		goto out;
	}
	if ((rc = compile_index(c, name, text + n, &in->bar_index)))
		goto out;
	if (in->bar_index.is_const &&
		 (in->bar_index.value < 0 || in->bar_index.value >= c->k->bars[in->bar].count))
		rc = jdoc_error(c->doc, &c->at, c->d, "index %lld outside %s[%u]", (long long)in->bar_index.value,
				name, c->k->bars[in->bar].count);
out:
	jpath_pop(&c->at, old);
	return rc;
}

/* A variable to assign (declared here if it is new in this scope). */
static int target_var(struct compiler *c, const cJSON *obj, const char *key, uint16_t *slot)
{
	const char *name = NULL;
	int rc = jdoc_string(c->doc, obj, &c->at, key, true, &name, c->d);
	if (rc)
		return rc;
	int64_t v;
	bool pt;
	if (lookup(c, name, &v, &pt) == EXPR_NAME_SLOT && v >= SLOT_BUILTINS) {
		*slot = (uint16_t)v;
		return 0;
	}
	int s = declare_var(c, name, false); /* a barrier token is 64 bits */
	if (s < 0)
		return -s;
	*slot = (uint16_t)s;
	return 0;
}

/*
 * {"op": "mma", "a": "sa[i]", "lda": n, "b": "sb[j]", "ldb": n, "shape", "type", "b_layout",
 * "tiles_m", "tiles_n", "repeat"}: one k-step of 16 of a warp's tile (see struct insn).
 */
static int compile_mma(struct compiler *c, const cJSON *st, struct insn *in)
{
	static const char *const keys[] = {"op", "a", "lda", "b", "ldb", "shape", "type", "b_layout",
					   "tiles_m", "tiles_n", "repeat", "comment", NULL};
	static const char *const shapes[] = {"m16n16k16", "m16n8k16", NULL};
	static const char *const types[] = {"f16", "bf16", NULL};
	static const char *const layouts[] = {"row", "col", NULL};
	int shape, type, layout, rc;
	int64_t tm = 1, tn = 1, rep = 1;
	if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
	    (rc = compile_memref(c, st, "a", SPACE_SHARED, &in->src)) ||
	    (rc = compile_field(c, st, "lda", true, NULL, &in->e[0])) ||
	    (rc = compile_memref(c, st, "b", SPACE_SHARED, &in->dst)) ||
	    (rc = compile_field(c, st, "ldb", true, NULL, &in->e[1])) ||
	    (rc = choice_field(c, st, "shape", shapes, &shape)) || (rc = choice_field(c, st, "type", types, &type)) ||
	    (rc = choice_field(c, st, "b_layout", layouts, &layout)) ||
	    (rc = const_field(c, st, "tiles_m", false, "1", 1, 4, &tm)) ||
	    (rc = const_field(c, st, "tiles_n", false, "1", 1, 8, &tn)) ||
	    (rc = const_field(c, st, "repeat", false, "1", 1, 16, &rep)))
		return rc;
	for (int i = 0; i < 2; i++) {
		const struct memref *r = i ? &in->dst : &in->src;
		if (c->k->bufs[r->buf].elem_bytes != 2) {
			size_t old = jpath_key(&c->at, i ? "b" : "a");
			rc = jdoc_error(c->doc, &c->at, c->d, "buffer \"%s\" has %u-byte elements; mma reads 16-bit %s",
					c->k->bufs[r->buf].name, c->k->bufs[r->buf].elem_bytes, types[type]);
			jpath_pop(&c->at, old);
			return rc;
		}
	}
	in->mma.tm = (uint8_t)tm;
	in->mma.tn = (uint8_t)tn;
	in->mma.rep = (uint8_t)rep;
	in->mma.n8 = shape == 1;
	in->mma.b_col = layout == 1;
	in->mma.bf16 = type == 1;
	/* the lowered sequence: an LDSM per A fragment and per 16 columns of B, then the HMMAs */
	int n8 = in->mma.n8 ? (int)tn : 2 * (int)tn, nb = (n8 + 1) / 2;
	if ((int)tm + nb + (int)tm * n8 > MMA_MAX_INSNS) {
		size_t old = jpath_key(&c->at, "tiles_n");
		rc = jdoc_error(c->doc, &c->at, c->d,
				"%lld x %lld tiles take %d LDSM and %d HMMA per k-step; at most %d instructions per op "
				"(split the warp tile into several mma ops)",
				(long long)tm, (long long)tn, (int)tm + nb, (int)tm * n8, MMA_MAX_INSNS);
		jpath_pop(&c->at, old);
		return rc;
	}
	return emit(c, *in);
}

/*
 * A for loop whose body is FMAs alone (constant n, one chain), over a
 * trip count known only at run time, as ptxas compiles it (-O3,
 * traces/h100/diverged_commit.sass 0x0330-0x07a0): nvcc unrolls it by 4
 * with a remainder, and ptxas the unrolled loop by 4 again with an 8-trip
 * tail, so t trips run as 16-FMA trips while more than 12 are left, one
 * 8-FMA block if more than 4 are, 4-FMA trips to the multiple of 4, then
 * up to 3 FMAs each behind its own test.  Emitted as the ops of that code.
 */
static bool unrollable_fma_body(const cJSON *body, int64_t *fmas)
{
	*fmas = 0;
	if (!cJSON_IsArray(body) || cJSON_GetArraySize(body) == 0)
		return false;
	const cJSON *st;
	cJSON_ArrayForEach(st, body) {
		const cJSON *op = cJSON_GetObjectItemCaseSensitive(st, "op");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(st, "n");
		const cJSON *ilp = cJSON_GetObjectItemCaseSensitive(st, "ilp");
		const cJSON *key;
		cJSON_ArrayForEach(key, st) {
			if (strcmp(key->string, "op") && strcmp(key->string, "n") && strcmp(key->string, "ilp") &&
			    strcmp(key->string, "comment"))
				return false; /* compiled as written, so its error is reported */
		}
		if (!cJSON_IsString(op) || strcmp(op->valuestring, "fma") != 0 || !cJSON_IsNumber(n) ||
		    n->valuedouble != (double)(int64_t)n->valuedouble || n->valuedouble < 1 ||
		    (ilp && !(cJSON_IsNumber(ilp) && ilp->valuedouble == 1)))
			return false;
		*fmas += (int64_t)n->valuedouble;
	}
	return *fmas <= 1000;
}


/*
 * An optional string field that names one of a few choices (a NULL-ended list, the first the
 * default): its index into *choice, or the error "expected WHAT, got ..." at the field.
 */
static int one_of(struct compiler *c, const cJSON *st, const char *key, const char *const *names, const char *what,
		  int *choice)
{
	const char *got = names[0];
	int rc = jdoc_string(c->doc, st, &c->at, key, false, &got, c->d);
	if (rc)
		return rc;
	for (*choice = 0; names[*choice]; ++*choice)
		if (strcmp(got, names[*choice]) == 0)
			return 0;
	size_t old = jpath_key(&c->at, key);
	rc = jdoc_error(c->doc, &c->at, c->d, "expected %s, got \"%s\"", what, got);
	jpath_pop(&c->at, old);
	return rc;
}

static int emit_text(struct compiler *c, enum op op, int slot, const char *text)
{
	struct insn in = {.op = op, .slot = (uint16_t)slot, .obj = -1};
	int rc = compile_text(c, text, &in.e[0]);
	return rc ? rc : emit(c, in);
}

static int emit_fmas(struct compiler *c, int64_t n)
{
	struct insn in = {.op = OP_FMA, .obj = -1, .chains = 1};
	char text[32];
	snprintf(text, sizeof text, "%lld", (long long)n);
	int rc = compile_text(c, text, &in.e[0]);
	return rc ? rc : emit(c, in);
}

/* A BRZ on text; its target and reconvergence point are set once its block is emitted (end_brz). */
static int emit_brz(struct compiler *c, const char *text, int *at)
{
	*at = c->k->ncode;
	return emit_text(c, OP_BRZ, 0, text);
}

static void end_brz(struct compiler *c, int at) { c->k->code[at].target = c->k->code[at].reconv = c->k->ncode; }

/* while (or, once, if) left TEST: `per` trips' FMAs, left -= per. */
static int emit_fma_trips(struct compiler *c, const char *left, int slot, const char *test, int64_t per, int64_t f,
			  bool loop)
{
	char text[96];
	int rc, top;
	snprintf(text, sizeof text, "%s %s", left, test);
	if ((rc = emit_brz(c, text, &top)) || (rc = emit_fmas(c, per * f)))
		return rc;
	snprintf(text, sizeof text, "%s - %lld", left, (long long)per);
	if ((rc = emit_text(c, OP_SET, slot, text)) ||
	    (loop && (rc = emit(c, (struct insn){.op = OP_JMP, .target = top, .obj = -1}))))
		return rc;
	end_brz(c, top);
	return 0;
}

static int emit_ptxas_fma_loop(struct compiler *c, const char *from, const char *to, bool narrow, int64_t f)
{
	char t[40], m[40], r[40], text[2400];
	snprintf(t, sizeof t, "__ptxas_trips%d", c->k->ncode);
	snprintf(m, sizeof m, "__ptxas_left%d", c->k->ncode);
	snprintf(r, sizeof r, "__ptxas_rem%d", c->k->ncode);
	int ts = declare_var(c, t, narrow), ms = ts < 0 ? ts : declare_var(c, m, narrow),
	    rs = ms < 0 ? ms : declare_var(c, r, narrow);
	if (rs < 0)
		return -rs;
	int rc, any, four, rem[3];
	snprintf(text, sizeof text, "(%s) - (%s)", to, from);
	if ((rc = emit_text(c, OP_LET, ts, text)))
		return rc;
	snprintf(text, sizeof text, "%s >= 1", t);
	if ((rc = emit_brz(c, text, &any)))
		return rc;
	snprintf(text, sizeof text, "%s >= 4", t);
	if ((rc = emit_brz(c, text, &four)))
		return rc;
	snprintf(text, sizeof text, "%s - %s %% 4", t, t);
	if ((rc = emit_text(c, OP_LET, ms, text)) || (rc = emit_fma_trips(c, m, ms, "> 12", 16, f, true)) ||
	    (rc = emit_fma_trips(c, m, ms, "> 4", 8, f, false)) || (rc = emit_fma_trips(c, m, ms, "!= 0", 4, f, true)))
		return rc;
	end_brz(c, four);
	snprintf(text, sizeof text, "%s %% 4", t);
	if ((rc = emit_text(c, OP_LET, rs, text)))
		return rc;
	for (int i = 0; i < 3; i++) {
		snprintf(text, sizeof text, "%s != %d", r, i);
		if ((rc = emit_brz(c, text, &rem[i])) || (rc = emit_fmas(c, f)))
			return rc;
	}
	for (int i = 0; i < 3; i++)
		end_brz(c, rem[i]);
	end_brz(c, any);
	return 0;
}

static int compile_stmt(struct compiler *c, const cJSON *st)
{
	const char *opname = NULL;
	if (!cJSON_IsObject(st))
		return jdoc_error(c->doc, &c->at, c->d, "expected a statement object with an \"op\" field");
	int rc = jdoc_string(c->doc, st, &c->at, "op", true, &opname, c->d);
	if (rc)
		return rc;
	struct insn in = {.obj = -1, .bar = -1, .dst = {.buf = -1}, .src = {.buf = -1}, .src2 = {.buf = -1},
			  .from = {.buf = FROM_OUT}};
	int mark = c->nvars;

	if (strcmp(opname, "for") == 0) {
		static const char *const keys[] = {"op",    "var",   "type",   "from", "to",	"cond",	   "step",
						   "unroll", "remat", "reload", "body", "comment", NULL};
		const char *name;
		bool narrow;
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) || (rc = var_name(c, st, &name)) ||
		    (rc = var_type(c, st, &narrow)))
			return rc;
		struct expr init;
		if ((rc = compile_field(c, st, "from", true, NULL, &init)))
			return rc;
		/*
		 * "unroll": true is #pragma unroll over a constant trip count: nvcc
		 * unrolls the loop whole, so its test, increment and back-edge issue
		 * nothing and its variable becomes an immediate in each copy.
		 */
		const cJSON *unroll_j = cJSON_GetObjectItemCaseSensitive(st, "unroll");
		bool unroll = cJSON_IsTrue(unroll_j);
		if (unroll_j && !cJSON_IsBool(unroll_j)) {
			size_t old = jpath_key(&c->at, "unroll");
			rc = jdoc_error(c->doc, &c->at, c->d, "expected true or false");
			jpath_pop(&c->at, old);
			return rc;
		}
		if (unroll && (!init.is_const || !cJSON_GetObjectItemCaseSensitive(st, "to") ||
			       cJSON_GetObjectItemCaseSensitive(st, "step"))) {
			size_t old = jpath_key(&c->at, "unroll");
			rc = jdoc_error(c->doc, &c->at, c->d,
					"an unrolled loop needs a constant trip count: constant \"from\" and \"to\", no \"step\"");
			jpath_pop(&c->at, old);
			return rc;
		}
		int64_t fmas;
		/* a run-time trip count over FMAs alone: ptxas's unrolled form (emit_ptxas_fma_loop) */
		if (!unroll && cJSON_GetObjectItemCaseSensitive(st, "to") && !cJSON_GetObjectItemCaseSensitive(st, "step") &&
		    unrollable_fma_body(cJSON_GetObjectItemCaseSensitive(st, "body"), &fmas)) {
			char from[1024], to[1024];
			if ((rc = jdoc_expr_text(c->doc, st, &c->at, "from", true, from, sizeof from, c->d)) ||
			    (rc = jdoc_expr_text(c->doc, st, &c->at, "to", true, to, sizeof to, c->d)))
				return rc;
			struct expr to_e;
			if ((rc = compile_field(c, st, "to", true, NULL, &to_e)))
				return rc;
			if (!(init.is_const && to_e.is_const)) { /* a constant count is unrolled otherwise, or whole */
				rc = emit_ptxas_fma_loop(c, from, to, narrow, fmas);
				goto out;
			}
		}
		int slot = declare_var(c, name, narrow);
		if (slot < 0)
			return -slot;
		if (unroll)
			c->k->unrolled_slots |= slot_bit(slot);
		in = (struct insn){.op = OP_LET, .slot = (uint16_t)slot, .e = {init}, .obj = -1, .unrolled = unroll};
		if ((rc = emit(c, in)))
			return rc;
		bool has_to = cJSON_GetObjectItemCaseSensitive(st, "to") != NULL;
		bool has_cond = cJSON_GetObjectItemCaseSensitive(st, "cond") != NULL;
		if (has_to == has_cond) {
			rc = jdoc_error(c->doc, &c->at, c->d, "a for loop needs exactly one of \"to\" or \"cond\"");
			goto out;
		}
		struct expr cond, step;
		if (has_to) {
			/* "to" is sugar for the condition var < (to); compiled alone first so errors point at it. */
			struct expr to;
			if ((rc = compile_field(c, st, "to", true, NULL, &to)))
				goto out;
			if (unroll && !to.is_const) {
				rc = jdoc_error(c->doc, &c->at, c->d,
						"an unrolled loop needs a constant trip count: \"to\" must fold to a constant");
				goto out;
			}
			char tsrc[1024];
			if ((rc = jdoc_expr_text(c->doc, st, &c->at, "to", true, tsrc, sizeof tsrc, c->d)))
				goto out;
			char csrc[1200];
			snprintf(csrc, sizeof csrc, "%s < (%s)", name, tsrc);
			struct expr_names names = names_of(c);
			char err[512];
			if (expr_compile(&c->k->pool, csrc, &names, &cond, err, sizeof err)) {
				rc = jdoc_error(c->doc, &c->at, c->d, "%s", err);
				goto out;
			}
		} else if ((rc = compile_field(c, st, "cond", true, NULL, &cond))) {
			goto out;
		}
		char dstep[64];
		snprintf(dstep, sizeof dstep, "%s + 1", name);
		if ((rc = compile_field(c, st, "step", false, dstep, &step)))
			goto out;
		/*
		 * "remat": a constant condition (on the parameters) that the compiled loop
		 * re-reads the special registers its ops use, and recomputes the variables
		 * set from them alone, instead of keeping them in registers: what ptxas
		 * does when it rematerialises them (isa/lower.c).  smsim cannot tell when
		 * ptxas will; the kernel says so from the SASS.
		 */
		int64_t remat = 0, reload = 0;
		if ((rc = const_field(c, st, "remat", false, "0", 0, 1, &remat)) ||
		    (rc = loop_reload(c, st, unroll, &reload)))
			goto out;
		int top = c->k->ncode;
		int brz = top;
		if ((rc = emit(c, (struct insn){.op = OP_BRZ, .e = {cond}, .obj = -1, .unrolled = unroll, .reload = reload != 0})))
			goto out;
		if ((rc = compile_block(c, st, "body")))
			goto out;
		if ((rc = emit(c, (struct insn){.op = OP_SET, .slot = (uint16_t)slot, .e = {step}, .obj = -1, .unrolled = unroll})) ||
		    (rc = emit(c, (struct insn){.op = OP_JMP, .target = top, .obj = -1, .unrolled = unroll, .remat = remat != 0})))
			goto out;
		c->k->code[brz].target = c->k->code[brz].reconv = c->k->ncode;
		goto out;
	}
	if (strcmp(opname, "while") == 0) {
		static const char *const keys[] = {"op", "cond", "reload", "body", "comment", NULL};
		struct expr cond;
		int64_t reload = 0;
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
		    (rc = compile_field(c, st, "cond", true, NULL, &cond)) || (rc = loop_reload(c, st, false, &reload)))
			return rc;
		int top = c->k->ncode;
		if ((rc = emit(c, (struct insn){.op = OP_BRZ, .e = {cond}, .obj = -1, .reload = reload != 0})) ||
		    (rc = compile_block(c, st, "body")) ||
		    (rc = emit(c, (struct insn){.op = OP_JMP, .target = top, .obj = -1})))
			goto out;
		c->k->code[top].target = c->k->code[top].reconv = c->k->ncode;
		goto out;
	}
	if (strcmp(opname, "if") == 0) {
		static const char *const keys[] = {"op", "cond", "then", "else", "comment", NULL};
		struct expr cond;
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
		    (rc = compile_field(c, st, "cond", true, NULL, &cond)))
			return rc;
		int brz = c->k->ncode;
		if ((rc = emit(c, (struct insn){.op = OP_BRZ, .e = {cond}, .obj = -1})) ||
		    (rc = compile_block(c, st, "then")))
			goto out;
		c->nvars = mark;
		if (cJSON_GetObjectItemCaseSensitive(st, "else")) {
			int jmp = c->k->ncode;
			if ((rc = emit(c, (struct insn){.op = OP_JMP, .obj = -1})))
				goto out;
			c->k->code[brz].target = c->k->ncode;
			if ((rc = compile_block(c, st, "else")))
				goto out;
			c->k->code[jmp].target = c->k->ncode;
		} else {
			c->k->code[brz].target = c->k->ncode;
		}
		c->k->code[brz].reconv = c->k->ncode;
		goto out;
	}

	enum op op = op_by_name(opname);
	if (op == OP_COUNT) {
		const char *names[OP_COUNT + 8];
		int nn = 0;
		for (int i = 0; i < OP_COUNT; i++)
			if (op_table[i].name[0])
				names[nn++] = op_table[i].name;
		names[nn++] = "for";
		names[nn++] = "while";
		names[nn++] = "if";
		names[nn] = NULL;
		const char *hint = suggest_name(opname, names);
		size_t old = jpath_key(&c->at, "op");
		rc = hint ? jdoc_error(c->doc, &c->at, c->d, "unknown op \"%s\"; did you mean \"%s\"?", opname, hint)
			  : jdoc_error(c->doc, &c->at, c->d, "unknown op \"%s\"", opname);
		jpath_pop(&c->at, old);
		return rc;
	}
	in.op = op;
	switch (op) {
	case OP_LET:
	case OP_SET: {
		static const char *const let_keys[] = {"op", "var", "type", "value", "comment", NULL};
		static const char *const set_keys[] = {"op", "var", "value", "comment", NULL};
		const char *name;
		bool narrow = false;
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, op == OP_LET ? let_keys : set_keys, c->d)) ||
		    (rc = var_name(c, st, &name)) || (op == OP_LET && (rc = var_type(c, st, &narrow))) ||
		    (rc = compile_field(c, st, "value", true, NULL, &in.e[0])))
			return rc;
		if (op == OP_LET) {
			int slot = declare_var(c, name, narrow);
			if (slot < 0)
				return -slot;
			in.slot = (uint16_t)slot;
			return emit(c, in);
		}
		int64_t v;
		bool pt;
		if (lookup(c, name, &v, &pt) != EXPR_NAME_SLOT || v < SLOT_BUILTINS) {
			size_t old = jpath_key(&c->at, "var");
			rc = jdoc_error(c->doc, &c->at, c->d,
					"\"%s\" is not a variable of this kernel (declare it with \"let\")", name);
			jpath_pop(&c->at, old);
			return rc;
		}
		in.slot = (uint16_t)v;
		return emit(c, in);
	}
	case OP_EXIT:
	case OP_SYNCTHREADS: {
		/* "form": how the source writes it, which sets what nvcc compiles (isa/lower_forms.c) */
		static const char *const keys[] = {"op", "form", "comment", NULL};
		static const char *const forms[] = {"__syncthreads", "block.sync", NULL};
		int form;
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
		    (rc = one_of(c, st, "form", forms, "\"__syncthreads\" or \"block.sync\" (cooperative groups' block.sync(), cg::sync(block))", &form)))
			return rc;
		in.group = form == 1 ? GROUP_BLOCK : GROUP_THREAD;
		return emit(c, in);
	}
	case OP_SYNCWARP:
	case OP_GRID_SYNC:
	case OP_PIPELINE_COMMIT: {
		static const char *const keys[] = {"op", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)))
			return rc;
		return emit(c, in);
	}
	case OP_MAKE_PIPELINE: {
		static const char *const keys[] = {"op", "pipeline", "producers", "role", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) || (rc = pipe_field(c, st, &in.obj)))
			return rc;
		bool count = cJSON_GetObjectItemCaseSensitive(st, "producers") != NULL;
		bool role = cJSON_GetObjectItemCaseSensitive(st, "role") != NULL;
		if (count && role)
			return jdoc_error(c->doc, &c->at, c->d, "give \"producers\" (a count) or \"role\", not both");
		if (count || role) {
			if (c->k->pipes[in.obj].scope != PIPE_SCOPE_BLOCK)
				return jdoc_error(c->doc, &c->at, c->d, "only block-scope pipelines can be partitioned");
			in.split = count ? SPLIT_COUNT : SPLIT_ROLE;
			if ((rc = compile_field(c, st, count ? "producers" : "role", true, NULL, &in.e[0])))
				return rc;
		}
		return emit(c, in);
	}
	case OP_PRODUCER_ACQUIRE:
	case OP_PRODUCER_COMMIT:
	case OP_CONSUMER_WAIT:
	case OP_CONSUMER_RELEASE:
	case OP_QUIT: {
		static const char *const keys[] = {"op", "pipeline", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) || (rc = pipe_field(c, st, &in.obj)))
			return rc;
		return emit(c, in);
	}
	case OP_CONSUMER_WAIT_PRIOR:
	case OP_PIPELINE_WAIT_PRIOR: {
		static const char *const keys[] = {"op", "pipeline", "n", "comment", NULL};
		int64_t n;
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
		    (rc = const_field(c, st, "n", true, NULL, 0, 1000000, &n)))
			return rc;
		in.e[0] = (struct expr){.is_const = true, .value = n};
		if (op == OP_CONSUMER_WAIT_PRIOR) {
			if ((rc = pipe_field(c, st, &in.obj)))
				return rc;
			if (c->k->pipes[in.obj].scope != PIPE_SCOPE_THREAD)
				return jdoc_error(c->doc, &c->at, c->d,
						  "pipeline_consumer_wait_prior<N> needs a thread-scope pipeline");
			if (n > 255) /* cuda/pipeline: template <uint8_t _Prior> */
				return jdoc_error(c->doc, &c->at, c->d,
						  "pipeline_consumer_wait_prior<N> takes a uint8_t N (0..255), not %lld",
						  (long long)n);
		}
		return emit(c, in);
	}
	case OP_BARRIER_INIT:
	case OP_BARRIER_ARRIVE:
	case OP_BARRIER_WAIT:
	case OP_BARRIER_ARRIVE_AND_WAIT:
	case OP_BARRIER_ARRIVE_AND_DROP: {
		static const char *const init_keys[] = {"op", "barrier", "count", "comment", NULL};
		static const char *const arrive_keys[] = {"op", "barrier", "token", "count", "expect_tx", "comment", NULL};
		static const char *const tok_keys[] = {"op", "barrier", "token", "comment", NULL};
		static const char *const keys[] = {"op", "barrier", "comment", NULL};
		const char *const *k = op == OP_BARRIER_INIT ? init_keys : op == OP_BARRIER_ARRIVE ? arrive_keys
								   : op == OP_BARRIER_WAIT ? tok_keys : keys;
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, k, c->d)) || (rc = barrier_field(c, st, &in)))
			return rc;
		if (op == OP_BARRIER_INIT && (rc = compile_field(c, st, "count", true, NULL, &in.e[0])))
			return rc;
		/* bar.arrive(update): count arrivals by each thread at once (default 1) */
		/* mbarrier.arrive.expect_tx: the bytes the phase's bulk copies (complete_tx) will bring */
		if (op == OP_BARRIER_ARRIVE && (rc = compile_field(c, st, "expect_tx", false, NULL, &in.e[1])))
			return rc;
		if (op == OP_BARRIER_ARRIVE && (rc = compile_field(c, st, "count", false, "1", &in.e[0])))
			return rc;
		if (op == OP_BARRIER_ARRIVE && (rc = target_var(c, st, "token", &in.slot)))
			return rc;
		if (op == OP_BARRIER_WAIT && (rc = compile_field(c, st, "token", true, NULL, &in.e[0])))
			return rc;
		return emit(c, in);
	}
	case OP_BARRIER_TRY_WAIT:
	case OP_BARRIER_TEST_WAIT: {
		static const char *const try_keys[] = {"op", "barrier", "token", "parity", "var", "suspend_ns", "comment", NULL};
		static const char *const test_keys[] = {"op", "barrier", "token", "parity", "var", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, op == OP_BARRIER_TRY_WAIT ? try_keys : test_keys, c->d)) ||
		    (rc = barrier_field(c, st, &in)))
			return rc;
		bool token = cJSON_GetObjectItemCaseSensitive(st, "token") != NULL;
		in.parity = cJSON_GetObjectItemCaseSensitive(st, "parity") != NULL;
		if (token == in.parity)
			return jdoc_error(c->doc, &c->at, c->d,
					  "give the phase to wait for as exactly one of \"token\" (what barrier_arrive returned) "
					  "or \"parity\" (0 or 1, the phase's parity)");
		if ((rc = compile_field(c, st, in.parity ? "parity" : "token", true, NULL, &in.e[0])) ||
		    (op == OP_BARRIER_TRY_WAIT && (rc = compile_field(c, st, "suspend_ns", false, NULL, &in.e[1]))) ||
		    (rc = target_var(c, st, "var", &in.slot)))
			return rc;
		/*
		 * A run-time parity is read by its low bit, as the SASS does (the PHASECHK's
		 * operand is the value shifted to bit 31); a constant other than 0 or 1 is a
		 * slip that the low bit would turn into the wrong phase silently (a bool
		 * parameter, as libcu++'s try_wait_parity, reads 2 as 1).
		 */
		if (in.parity && in.e[0].is_const && in.e[0].value != 0 && in.e[0].value != 1) {
			size_t old = jpath_key(&c->at, "parity");
			rc = jdoc_error(c->doc, &c->at, c->d, "expected 0 or 1 (the parity of the phase to wait for); got %lld",
					(long long)in.e[0].value);
			jpath_pop(&c->at, old);
			return rc;
		}
		return emit(c, in);
	}
	case OP_CG_MEMCPY_ASYNC: {
		/*
		 * cooperative_groups::memcpy_async (CUDA Programming Guide,
		 * "memcpy_async" of cooperative groups): the group's cp.async
		 * copies, then a commit of the calling threads' batch; lowered to a
		 * memcpy_async completing on no object and a __pipeline_commit.
		 */
		static const char *const keys[] = {"op", "group", "dst", "src", "bytes", "align", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)))
			return rc;
		static const char *const groups[] = {"block", "thread", NULL};
		int group;
		if ((rc = one_of(c, st, "group", groups, "\"block\" or \"thread\"", &group)))
			return rc;
		in.op = OP_MEMCPY_ASYNC;
		in.group = group == 0 ? GROUP_BLOCK : GROUP_THREAD;
		if ((rc = compile_memref(c, st, "dst", SPACE_SHARED, &in.dst)) ||
		    (rc = compile_memref(c, st, "src", SPACE_GLOBAL, &in.src)) ||
		    (rc = compile_field(c, st, "bytes", true, NULL, &in.e[0])))
			return rc;
		if ((rc = copy_align(c, st, &in)))
			return rc;
		in.sized = cJSON_GetObjectItemCaseSensitive(st, "align") != NULL;
		if ((rc = emit(c, in)))
			return rc;
		return emit(c, (struct insn){.op = OP_PIPELINE_COMMIT, .obj = -1, .bar = -1, .dst = {.buf = -1},
					     .src = {.buf = -1}});
	}
	case OP_CG_WAIT: {
		/* cooperative_groups::wait(g) = wait_prior<0>(g): cp.async.wait_group N, then g.sync() */
		static const char *const keys[] = {"op", "group", "n", "comment", NULL};
		int64_t n;
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
		    (rc = const_field(c, st, "n", false, "0", 0, 8, &n)))
			return rc;
		static const char *const groups[] = {"block", "warp", NULL};
		int group;
		if ((rc = one_of(c, st, "group", groups, "\"block\" or \"warp\" (a tile of 32)", &group)))
			return rc;
		in.op = OP_PIPELINE_WAIT_PRIOR;
		in.e[0] = (struct expr){.is_const = true, .value = n};
		if ((rc = emit(c, in)))
			return rc;
		/* cg::wait(group) ends in group.sync(): a block's is block.sync() */
		return emit(c, (struct insn){.op = group == 0 ? OP_SYNCTHREADS : OP_SYNCWARP, .obj = -1,
					     .bar = -1, .dst = {.buf = -1}, .src = {.buf = -1}, .group = GROUP_BLOCK});
	}
	case OP_CONSUMER_WAIT_FOR: {
		/* ok = consumer_wait_for(ns) (consumer_wait_until(tp) is wait_for(tp - now), cuda/pipeline line 191) */
		static const char *const keys[] = {"op", "pipeline", "ns", "var", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) || (rc = pipe_field(c, st, &in.obj)) ||
		    (rc = compile_field(c, st, "ns", true, NULL, &in.e[0])) || (rc = target_var(c, st, "var", &in.slot)))
			return rc;
		return emit(c, in);
	}
	case OP_BARRIER_EXPECT_TX: {
		static const char *const keys[] = {"op", "barrier", "bytes", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) || (rc = barrier_field(c, st, &in)) ||
		    (rc = compile_field(c, st, "bytes", true, NULL, &in.e[0])))
			return rc;
		return emit(c, in);
	}
	case OP_PIPELINE_ARRIVE_ON: {
		static const char *const keys[] = {"op", "barrier", "pipeline", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) || (rc = barrier_field(c, st, &in)))
			return rc;
		if (cJSON_GetObjectItemCaseSensitive(st, "pipeline")) {
			if ((rc = pipe_field(c, st, &in.obj)))
				return rc;
			if (c->k->pipes[in.obj].scope != PIPE_SCOPE_THREAD)
				return jdoc_error(c->doc, &c->at, c->d,
						  "cuda::pipeline_producer_commit(pipe, bar) needs a thread-scope pipeline");
		}
		return emit(c, in);
	}
	case OP_NANOSLEEP: {
		static const char *const keys[] = {"op", "ns", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
		    (rc = compile_field(c, st, "ns", true, NULL, &in.e[0])))
			return rc;
		return emit(c, in);
	}
	case OP_SHFL: {
		static const char *const keys[] = {"op", "n", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
		    (rc = compile_field(c, st, "n", true, NULL, &in.e[0])))
			return rc;
		return emit(c, in);
	}
	case OP_PIPELINE_MEMCPY_ASYNC: {
		static const char *const keys[] = {"op", "dst", "src", "bytes", "zfill", "own_register", "comment", NULL};
		int64_t bytes, own = 0;
		c->launch_read = false;
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
		    (rc = compile_memref(c, st, "dst", SPACE_SHARED, &in.dst)))
			return rc;
		/*
		 * A copy right after another whose shared address names a launch size: the
		 * distance between the two is a run-time value, so ptxas computes this
		 * address from the register the previous LDGSTS read (copy_burst_chained.sass).
		 */
		in.chained = c->launch_read && c->k->ncode > 0 && c->k->code[c->k->ncode - 1].op == OP_PIPELINE_MEMCPY_ASYNC;
		/*
		 * "own_register": 1 where the kernel's SASS shows ptxas kept this copy's shared address in a
		 * register of its own, computed before the run (primitive_copies.sass: 4 of its 16), so the
		 * LDGSTS issues alone and waits for no earlier copy's operand read.
		 */
		if ((rc = compile_memref(c, st, "src", SPACE_GLOBAL, &in.src)) ||
		    (rc = const_field(c, st, "bytes", true, NULL, 4, 16, &bytes)) ||
		    (rc = const_field(c, st, "own_register", false, "0", 0, 1, &own)))
			return rc;
		in.own_register = own != 0;
		if (in.own_register)
			in.chained = false;
		if (bytes != 4 && bytes != 8 && bytes != 16) {
			size_t old = jpath_key(&c->at, "bytes");
			rc = jdoc_error(c->doc, &c->at, c->d, "__pipeline_memcpy_async copies 4, 8 or 16 bytes, not %lld",
					(long long)bytes);
			jpath_pop(&c->at, old);
			return rc;
		}
		in.group = GROUP_THREAD;
		in.align = (uint32_t)bytes;
		in.e[0] = (struct expr){.is_const = true, .value = bytes};
		/* __pipeline_memcpy_async(dst, src, size, zfill): the last zfill bytes are zeros, not read */
		in.zfill = cJSON_GetObjectItemCaseSensitive(st, "zfill") != NULL;
		if (in.zfill && (rc = compile_field(c, st, "zfill", true, NULL, &in.e[1])))
			return rc;
		return emit(c, in);
	}
	case OP_MEMCPY_ASYNC: {
		static const char *const keys[] = {"op", "group", "dst", "src", "bytes", "align", "pipeline",
						   "barrier", "complete_tx", "tx", "own_register", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)))
			return rc;
		static const char *const groups[] = {"thread", "block", NULL};
		int group;
		if ((rc = one_of(c, st, "group", groups, "\"block\" or \"thread\"", &group)))
			return rc;
		in.group = group == 1 ? GROUP_BLOCK : GROUP_THREAD;
		if ((rc = compile_memref(c, st, "dst", SPACE_SHARED, &in.dst)) ||
		    (rc = compile_memref(c, st, "src", SPACE_GLOBAL, &in.src)) ||
		    (rc = compile_field(c, st, "bytes", true, NULL, &in.e[0])))
			return rc;
		bool has_pipe = cJSON_GetObjectItemCaseSensitive(st, "pipeline") != NULL;
		bool has_bar = cJSON_GetObjectItemCaseSensitive(st, "barrier") != NULL;
		if (has_pipe == has_bar)
			return jdoc_error(c->doc, &c->at, c->d,
					  "memcpy_async completes on exactly one of \"pipeline\" or \"barrier\"");
		if ((has_pipe && (rc = pipe_field(c, st, &in.obj))) || (has_bar && (rc = barrier_field(c, st, &in))))
			return rc;
		if ((rc = copy_align(c, st, &in)))
			return rc;
		uint32_t align = in.align;
		/* "complete_tx": true: cp.async.bulk ... mbarrier::complete_tx only, the kernel's own arrive.expect_tx announces the bytes */
		const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(st, "complete_tx");
		if (ctx && (!cJSON_IsBool(ctx) || (cJSON_IsTrue(ctx) && (!has_bar || align < 16)))) {
			size_t old = jpath_key(&c->at, "complete_tx");
			rc = jdoc_error(c->doc, &c->at, c->d,
					"expected true or false; true only for a bulk copy (a barrier and \"align\" 16 or more)");
			jpath_pop(&c->at, old);
			return rc;
		}
		in.complete_tx = cJSON_IsTrue(ctx);
		in.sized = cJSON_GetObjectItemCaseSensitive(st, "align") != NULL;
		const cJSON *tx = cJSON_GetObjectItemCaseSensitive(st, "tx");
		if (tx) {
			/* cuda::device::memcpy_async_tx(dst, src, aligned_size_t<16>, bar): bulk, no expect_tx of its own */
			if (!cJSON_IsBool(tx) || (cJSON_IsTrue(tx) && (!has_bar || align < 16 || in.group != GROUP_THREAD))) {
				size_t old = jpath_key(&c->at, "tx");
				rc = jdoc_error(c->doc, &c->at, c->d,
						"\"tx\": true is cuda::device::memcpy_async_tx: a thread's own copy "
						"(\"group\": \"thread\") with a barrier and \"align\" >= 16");
				jpath_pop(&c->at, old);
				return rc;
			}
			in.tx_only = cJSON_IsTrue(tx);
		}
		/*
		 * "own_register": 1 where the kernel's SASS shows ptxas kept the shared destination's
		 * base in a register computed before the loop around the copy (with_single_stage:
		 * traces/h100/pipelines.sass 0x04b0-0x0570 before the loop, the copy's IMAD.IADD reading
		 * R21 at 0x08f0), so the copy issues none of the window-base arithmetic its form has.
		 */
		int64_t own = 0;
		if ((rc = const_field(c, st, "own_register", false, "0", 0, 1, &own)))
			return rc;
		in.own_register = own != 0;
		return emit(c, in);
	}
	case OP_COMPUTE: {
		static const char *const keys[] = {"op", "out", "in", "in2", "k", "elem", "ilp", "from", "comment", NULL};
		int64_t ilp = 1;
		const cJSON *from = cJSON_GetObjectItemCaseSensitive(st, "from");
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
		    (rc = compile_from(c, st, from, &in.from)) ||
		    (rc = compile_memref(c, st, "out", SPACE_GLOBAL, &in.dst)) ||
		    (rc = compile_memref(c, st, "in", SPACE_SHARED, &in.src)) ||
		    (cJSON_GetObjectItemCaseSensitive(st, "in2") &&
		     (rc = compile_memref(c, st, "in2", SPACE_SHARED, &in.src2))) ||
		    (rc = compile_field(c, st, "k", false, "k", &in.e[0])) ||
		    (rc = compile_field(c, st, "elem", false, "tid", &in.e[1])) ||
		    (rc = const_field(c, st, "ilp", false, "1", 1, FMA_MAX_CHAINS, &ilp)))
			return rc;
		in.chains = (uint8_t)ilp;
		return emit(c, in);
	}
	case OP_FMA: {
		static const char *const keys[] = {"op", "n", "ilp", "comment", NULL};
		int64_t ilp = 1;
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
		    (rc = compile_field(c, st, "n", true, NULL, &in.e[0])) ||
		    (rc = const_field(c, st, "ilp", false, "1", 1, FMA_MAX_CHAINS, &ilp)))
			return rc;
		in.chains = (uint8_t)ilp;
		return emit(c, in);
	}
	case OP_SHARED_LOAD:
	case OP_SHARED_STORE:
	case OP_GLOBAL_LOAD:
	case OP_GLOBAL_STORE: {
		static const char *const keys[] = {"op", "addr", "comment", NULL};
		enum space sp = (op == OP_SHARED_LOAD || op == OP_SHARED_STORE) ? SPACE_SHARED : SPACE_GLOBAL;
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
		    (rc = compile_memref(c, st, "addr", sp, &in.src)))
			return rc;
		return emit(c, in);
	}
	case OP_FENCE_PROXY_ASYNC: {
		static const char *const keys[] = {"op", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)))
			return rc;
		return emit(c, in);
	}
	case OP_MMA: return compile_mma(c, st, &in);
	case OP_BULK_STORE: {
		/* cuda::ptx::cp_async_bulk(space_global, space_shared, dst, src, size): 16-byte aligned, size % 16 (checked at run time) */
		static const char *const keys[] = {"op", "dst", "src", "bytes", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
		    (rc = compile_memref(c, st, "dst", SPACE_GLOBAL, &in.dst)) ||
		    (rc = compile_memref(c, st, "src", SPACE_SHARED, &in.src)) ||
		    (rc = compile_field(c, st, "bytes", true, NULL, &in.e[0])))
			return rc;
		in.group = GROUP_THREAD;
		in.align = 16;
		return emit(c, in);
	}
	case OP_BULK_COMMIT_GROUP: {
		static const char *const keys[] = {"op", "comment", NULL};
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)))
			return rc;
		return emit(c, in);
	}
	case OP_BULK_WAIT_GROUP: {
		/* cuda::ptx::cp_async_bulk_wait_group[_read](n32_t<N>): N an immediate */
		static const char *const keys[] = {"op", "n", "read", "comment", NULL};
		int64_t n;
		if ((rc = jdoc_check_keys(c->doc, st, &c->at, keys, c->d)) ||
		    (rc = const_field(c, st, "n", false, "0", 0, BULK_MAX_PRIOR, &n)))
			return rc;
		const cJSON *rd = cJSON_GetObjectItemCaseSensitive(st, "read");
		if (rd && !cJSON_IsBool(rd)) {
			size_t old = jpath_key(&c->at, "read");
			rc = jdoc_error(c->doc, &c->at, c->d,
					"expected true (cp.async.bulk.wait_group.read: the source may be reused) or false");
			jpath_pop(&c->at, old);
			return rc;
		}
		in.read_only = cJSON_IsTrue(rd);
		in.e[0] = (struct expr){.is_const = true, .value = n};
		return emit(c, in);
	}
	default: return jdoc_error(c->doc, &c->at, c->d, "op \"%s\" cannot be written directly", opname);
	}
out:
	c->nvars = mark;
	return rc;
}

/*
 * In a check, a let that failed still declares its variable, so that each
 * later use of it is not one more "unknown name" error.  Declares nothing
 * that declare_var would refuse (it would report, over the error recorded).
 */
static void keep_let_name(struct compiler *c, const cJSON *st)
{
	const cJSON *op = cJSON_GetObjectItemCaseSensitive(st, "op");
	const cJSON *var = cJSON_GetObjectItemCaseSensitive(st, "var");
	if (!cJSON_IsString(op) || strcmp(op->valuestring, "let") != 0 || !cJSON_IsString(var) ||
	    strlen(var->valuestring) >= sizeof c->vars[0].name || c->k->nslots >= MAX_SLOTS || c->nvars >= MAX_SLOTS)
		return;
	int64_t v;
	bool pt;
	if (lookup(c, var->valuestring, &v, &pt) == EXPR_NAME_UNKNOWN)
		declare_var(c, var->valuestring, false);
}

static int compile_block(struct compiler *c, const cJSON *obj, const char *key)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, key);
	size_t old = jpath_key(&c->at, key);
	int rc = 0;
	if (!arr) {
		jpath_pop(&c->at, old);
		return jdoc_error(c->doc, &c->at, c->d, "missing required field \"%s\" (a list of statements)", key);
	}
	if (!cJSON_IsArray(arr)) {
		rc = jdoc_error(c->doc, &c->at, c->d, "expected a list of statements");
		goto out;
	}
	if (++c->depth > MAX_DEPTH) {
		c->depth--;
		rc = jdoc_error(c->doc, &c->at, c->d, "statements nest more than %d deep", MAX_DEPTH);
		goto out;
	}
	int mark = c->nvars;
	int i = 0;
	for (const cJSON *st = arr->child; st && !rc; st = st->next, i++) {
		size_t o2 = jpath_index(&c->at, i);
		rc = recover(c, compile_stmt(c, st));
		if (c->all)
			keep_let_name(c, st);
		jpath_pop(&c->at, o2);
	}
	c->nvars = mark;
	c->depth--;
out:
	jpath_pop(&c->at, old);
	return rc;
}

static int load_params(struct compiler *c, const cJSON *root, struct param_override *ov, int nov)
{
	const cJSON *ps = cJSON_GetObjectItemCaseSensitive(root, "params");
	if (!ps)
		return 0;
	size_t old = jpath_key(&c->at, "params");
	int rc = 0;
	if (!cJSON_IsObject(ps)) {
		rc = jdoc_error(c->doc, &c->at, c->d, "expected an object of parameter defaults");
		goto out;
	}
	int n = cJSON_GetArraySize(ps);
	c->k->params = calloc((size_t)n + 1, sizeof *c->k->params);
	for (const cJSON *p = ps->child; p; p = p->next) {
		size_t o2 = jpath_key(&c->at, p->string);
		double x = p->valuedouble;
		if (!cJSON_IsNumber(p) || !jdoc_is_integer(x, -9e15, 9e15)) {
			rc = jdoc_error(c->doc, &c->at, c->d, "expected an integer default for parameter \"%s\"",
					p->string);
		} else if (strlen(p->string) >= sizeof c->k->params[0].name || !p->string[0]) {
			rc = jdoc_error(c->doc, &c->at, c->d, "parameter name too long");
		} else {
			int64_t bv;
			bool pt;
			if (lookup(c, p->string, &bv, &pt) != EXPR_NAME_UNKNOWN)
				rc = jdoc_error(c->doc, &c->at, c->d, "\"%s\" is already a builtin or parameter name",
						p->string);
			struct param *dst = &c->k->params[c->k->nparams++];
			snprintf(dst->name, sizeof dst->name, "%s", p->string);
			dst->value = (int64_t)x;
			for (int i = 0; i < nov; i++)
				if (strcmp(ov[i].name, p->string) == 0) {
					dst->value = ov[i].value;
					ov[i].used = true;
				}
		}
		jpath_pop(&c->at, o2);
		if ((rc = recover(c, rc)))
			break;
	}
out:
	jpath_pop(&c->at, old);
	return rc;
}

/*
 * "ranges": {"NAME": [LO, HI]}: the values a parameter may take, checked before anything is sized
 * or compiled, so that a bad value is named as the value it is (and the --set that gave it).
 */
static int load_ranges(struct compiler *c, const cJSON *root, const struct param_override *ov, int nov)
{
	const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "ranges");
	if (!rs)
		return 0;
	size_t old = jpath_key(&c->at, "ranges");
	int rc = 0;
	if (!cJSON_IsObject(rs)) {
		rc = jdoc_error(c->doc, &c->at, c->d, "expected an object of parameter ranges ({\"stages\": [1, 64]})");
		goto out;
	}
	for (const cJSON *r = rs->child; r; r = r->next) {
		size_t o2 = jpath_key(&c->at, r->string);
		const struct param *p = NULL;
		for (int i = 0; i < c->k->nparams; i++)
			if (!strcmp(c->k->params[i].name, r->string))
				p = &c->k->params[i];
		const cJSON *lo = cJSON_GetArrayItem(r, 0), *hi = cJSON_GetArrayItem(r, 1);
		if (!p) {
			rc = jdoc_error(c->doc, &c->at, c->d, "\"%s\" is not a parameter of this kernel (\"params\")",
					r->string);
		} else if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != 2 || !cJSON_IsNumber(lo) || !cJSON_IsNumber(hi) ||
			   !jdoc_is_integer(lo->valuedouble, -9e15, 9e15) || !jdoc_is_integer(hi->valuedouble, -9e15, 9e15) ||
			   lo->valuedouble > hi->valuedouble) {
			rc = jdoc_error(c->doc, &c->at, c->d, "expected [LO, HI], two integers with LO <= HI");
		} else if (p->value < (int64_t)lo->valuedouble || p->value > (int64_t)hi->valuedouble) {
			const char *from = NULL;
			for (int i = 0; i < nov; i++)
				if (!strcmp(ov[i].name, p->name) && ov[i].from[0])
					from = ov[i].from;
			int line, col;
			jdoc_locate(c->doc, c->at.s, &line, &col);
			if (from)
				rc = diag_set(c->d, DIAG_INPUT, "%s: %s must be %lld..%lld (the range %s declares at %d:%d)", from,
					      p->name, (long long)lo->valuedouble, (long long)hi->valuedouble, c->doc->file,
					      line, col);
			else
				rc = jdoc_error(c->doc, &c->at, c->d, "%s = %lld is outside its range %lld..%lld", p->name,
						(long long)p->value, (long long)lo->valuedouble, (long long)hi->valuedouble);
		}
		jpath_pop(&c->at, o2);
		if ((rc = recover(c, rc)))
			break;
	}
out:
	jpath_pop(&c->at, old);
	return rc;
}

static int load_helpers(struct compiler *c, const cJSON *root)
{
	const cJSON *hs = cJSON_GetObjectItemCaseSensitive(root, "helpers");
	if (!hs)
		return 0;
	size_t old = jpath_key(&c->at, "helpers");
	int rc = 0;
	if (!cJSON_IsObject(hs)) {
		rc = jdoc_error(c->doc, &c->at, c->d, "expected an object of helpers");
		goto out;
	}
	c->helpers = calloc((size_t)cJSON_GetArraySize(hs) + 1, sizeof *c->helpers);
	for (const cJSON *h = hs->child; h && !rc; h = h->next) {
		size_t o2 = jpath_key(&c->at, h->string);
		static const char *const keys[] = {"args", "expr", "local_array", "type", "comment", NULL};
		struct expr_helper *eh = &c->helpers[c->nhelpers];
		*eh = (struct expr_helper){.name = h->string}; /* over what a helper that failed left */
		if ((rc = jdoc_check_keys(c->doc, h, &c->at, keys, c->d)) ||
		    (rc = jdoc_string(c->doc, h, &c->at, "expr", true, &eh->body, c->d)))
			goto next;
		const cJSON *local = cJSON_GetObjectItemCaseSensitive(h, "local_array");
		if (local && !cJSON_IsBool(local)) {
			size_t o3 = jpath_key(&c->at, "local_array");
			rc = jdoc_error(c->doc, &c->at, c->d, "expected true or false");
			jpath_pop(&c->at, o3);
			goto next;
		}
		eh->local_array = cJSON_IsTrue(local);
		bool returns_int;
		if ((rc = var_type(c, h, &returns_int)))
			goto next;
		eh->returns_int = returns_int;
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(h, "args");
		if (args && (!cJSON_IsArray(args) || cJSON_GetArraySize(args) > 8)) {
			size_t o3 = jpath_key(&c->at, "args");
			rc = jdoc_error(c->doc, &c->at, c->d, "expected a list of at most 8 argument names");
			jpath_pop(&c->at, o3);
			goto next;
		}
		for (const cJSON *a = args ? args->child : NULL; a; a = a->next) {
			if (!cJSON_IsString(a)) {
				size_t o3 = jpath_key(&c->at, "args");
				rc = jdoc_error(c->doc, &c->at, c->d, "expected argument names (strings)");
				jpath_pop(&c->at, o3);
				goto next;
			}
			eh->params[eh->nparams++] = a->valuestring;
		}
		c->nhelpers++;
	next:
		jpath_pop(&c->at, o2);
		rc = recover(c, rc);
	}
out:
	jpath_pop(&c->at, old);
	return rc;
}

static int load_buffers(struct compiler *c, const cJSON *root, const char *key, enum space space)
{
	const cJSON *bs = cJSON_GetObjectItemCaseSensitive(root, key);
	if (!bs)
		return 0;
	size_t old = jpath_key(&c->at, key);
	int rc = 0;
	if (!cJSON_IsObject(bs)) {
		rc = jdoc_error(c->doc, &c->at, c->d, "expected an object of buffers");
		goto out;
	}
	for (const cJSON *b = bs->child; b && !rc; b = b->next) {
		size_t o2 = jpath_key(&c->at, b->string);
		static const char *const keys[] = {"elems", "elem_bytes", "comment", NULL};
		int64_t elems = 0, eb = 4;
		if (c->k->nbufs >= 64) {
			rc = jdoc_error(c->doc, &c->at, c->d, "too many buffers (limit 64)");
		} else if (find_buf(c->k, b->string) >= 0 || strlen(b->string) >= sizeof c->k->bufs[0].name) {
			rc = jdoc_error(c->doc, &c->at, c->d, "buffer name \"%s\" is taken or too long", b->string);
		} else if (!(rc = jdoc_check_keys(c->doc, b, &c->at, keys, c->d)) &&
			   !(rc = const_field(c, b, "elems", true, NULL, 1, (int64_t)1 << 34, &elems)) &&
			   !(rc = const_field(c, b, "elem_bytes", false, "4", 1, 16, &eb))) {
			if (eb & (eb - 1)) {
				rc = jdoc_error(c->doc, &c->at, c->d, "elem_bytes must be 1, 2, 4, 8 or 16");
			} else {
				struct buffer *buf = &c->k->bufs[c->k->nbufs++];
				snprintf(buf->name, sizeof buf->name, "%s", b->string);
				buf->space = space;
				buf->elems = (uint64_t)elems;
				buf->elem_bytes = (uint32_t)eb;
				uint64_t *top = space == SPACE_SHARED ? &c->k->shared_bytes : &c->k->global_bytes;
				/* 128-byte aligned bases, as CUDA aligns allocations at least this much. */
				buf->base = (*top + 127) & ~(uint64_t)127;
				*top = buf->base + buf->elems * buf->elem_bytes;
			}
		}
		jpath_pop(&c->at, o2);
		rc = recover(c, rc);
	}
out:
	jpath_pop(&c->at, old);
	return rc;
}

static int load_pipelines(struct compiler *c, const cJSON *root)
{
	const cJSON *ps = cJSON_GetObjectItemCaseSensitive(root, "pipelines");
	if (!ps)
		return 0;
	size_t old = jpath_key(&c->at, "pipelines");
	int rc = 0;
	if (!cJSON_IsObject(ps)) {
		rc = jdoc_error(c->doc, &c->at, c->d, "expected an object of pipelines");
		goto out;
	}
	c->k->pipes = calloc((size_t)cJSON_GetArraySize(ps) + 1, sizeof *c->k->pipes);
	for (const cJSON *p = ps->child; p && !rc; p = p->next) {
		size_t o2 = jpath_key(&c->at, p->string);
		static const char *const keys[] = {"scope", "stages", "group", "comment", NULL};
		const char *scope = NULL, *group = "block";
		int64_t stages = 1;
		if (c->k->npipes >= 16 || strlen(p->string) >= sizeof c->k->pipes[0].name) {
			rc = jdoc_error(c->doc, &c->at, c->d, "too many pipelines or name too long");
		} else if (!(rc = jdoc_check_keys(c->doc, p, &c->at, keys, c->d)) &&
			   !(rc = jdoc_string(c->doc, p, &c->at, "scope", true, &scope, c->d)) &&
			   !(rc = const_field(c, p, "stages", true, NULL, 1, 64, &stages)) &&
			   !(rc = jdoc_string(c->doc, p, &c->at, "group", false, &group, c->d))) {
			struct pipeline_decl *pd = &c->k->pipes[c->k->npipes];
			snprintf(pd->name, sizeof pd->name, "%s", p->string);
			pd->stages = (uint32_t)stages;
			pd->warp_group = strcmp(group, "warp") == 0;
			if (strcmp(group, "block") && (strcmp(group, "warp") || strcmp(scope, "block"))) {
				size_t o3 = jpath_key(&c->at, "group");
				rc = jdoc_error(c->doc, &c->at, c->d,
						"expected \"block\" or, for a block-scope pipeline, \"warp\" (a tile of 32 "
						"threads with its own shared state), got \"%s\"",
						group);
				jpath_pop(&c->at, o3);
			} else if (strcmp(scope, "block") == 0 || strcmp(scope, "thread") == 0) {
				pd->scope = scope[0] == 'b' ? PIPE_SCOPE_BLOCK : PIPE_SCOPE_THREAD;
				c->k->npipes++;
			} else {
				size_t o3 = jpath_key(&c->at, "scope");
				rc = jdoc_error(c->doc, &c->at, c->d, "expected \"block\" or \"thread\", got \"%s\"",
						scope);
				jpath_pop(&c->at, o3);
			}
		}
		jpath_pop(&c->at, o2);
		rc = recover(c, rc);
	}
out:
	jpath_pop(&c->at, old);
	return rc;
}

static int load_barriers(struct compiler *c, const cJSON *root)
{
	const cJSON *bs = cJSON_GetObjectItemCaseSensitive(root, "barriers");
	if (!bs)
		return 0;
	size_t old = jpath_key(&c->at, "barriers");
	int rc = 0;
	if (!cJSON_IsObject(bs)) {
		rc = jdoc_error(c->doc, &c->at, c->d, "expected an object of barriers");
		goto out;
	}
	c->k->bars = calloc((size_t)cJSON_GetArraySize(bs) + 1, sizeof *c->k->bars);
	for (const cJSON *b = bs->child; b && !rc; b = b->next) {
		size_t o2 = jpath_key(&c->at, b->string);
		static const char *const keys[] = {"count", "comment", NULL};
		int64_t count = 1;
		if (c->k->nbars >= 16 || strlen(b->string) >= sizeof c->k->bars[0].name)
			rc = jdoc_error(c->doc, &c->at, c->d, "too many barrier declarations or name too long");
		else if (!(rc = jdoc_check_keys(c->doc, b, &c->at, keys, c->d)) &&
			 !(rc = const_field(c, b, "count", false, "1", 1, 1024, &count))) {
			struct barrier_decl *bd = &c->k->bars[c->k->nbars++];
			snprintf(bd->name, sizeof bd->name, "%s", b->string);
			bd->count = (uint32_t)count;
		}
		jpath_pop(&c->at, o2);
		rc = recover(c, rc);
	}
out:
	jpath_pop(&c->at, old);
	return rc;
}

/*
 * "roles": {"producer": "warp == 4", "consumer": "warp < 4"}: a name per
 * condition on the warp index (parameters, launch constants and helpers
 * allowed; no other builtin or variable), evaluated for every warp of the
 * block at load.  A warp two conditions hold for is an error; one that none
 * holds for has no role.  What the kernel's branches on `warp` do is the
 * body's business: the roles only name the warps in the trace, the
 * pictures and the messages.
 */
static int load_roles(struct compiler *c, const cJSON *root)
{
	const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "roles");
	if (!rs)
		return 0;
	size_t old = jpath_key(&c->at, "roles");
	int rc = 0;
	int64_t nwarps = (c->launch->block_size + 31) / 32;
	int64_t *slots = NULL;
	if (!cJSON_IsObject(rs)) {
		rc = jdoc_error(c->doc, &c->at, c->d,
				"expected an object of roles: a name and a condition on warp each, e.g. "
				"{\"producer\": \"warp == 4\", \"consumer\": \"warp < 4\"}");
		goto out;
	}
	c->k->warp_role = malloc((size_t)nwarps);
	slots = calloc((size_t)MAX_SLOTS, sizeof *slots);
	if (!c->k->warp_role || !slots) {
		rc = diag_set(c->d, DIAG_LIMIT, "out of memory");
		goto out;
	}
	memset(c->k->warp_role, -1, (size_t)nwarps);
	c->k->nwarp_roles = (int)nwarps;
	for (const cJSON *r = rs->child; r && !rc; r = r->next) {
		struct expr e;
		if (strcmp(r->string, "comment") == 0)
			continue; /* as in every other object of the language */
		if ((rc = compile_field(c, rs, r->string, true, NULL, &e)))
			goto next;
		size_t o2 = jpath_key(&c->at, r->string);
		if (c->k->nroles >= KERNEL_MAX_ROLES || !r->string[0] || strlen(r->string) >= sizeof c->k->role_names[0]) {
			rc = jdoc_error(c->doc, &c->at, c->d, "at most %d roles, each a name of 1..%zu characters",
					KERNEL_MAX_ROLES, sizeof c->k->role_names[0] - 1);
		} else if (e.slots & ~slot_bit(SLOT_WARP)) {
			rc = jdoc_error(c->doc, &c->at, c->d,
					"a role's condition may read warp (the warp's index in the block), parameters, launch "
					"constants and helpers, not tid, lane, block or a variable");
		} else {
			int id = c->k->nroles++;
			snprintf(c->k->role_names[id], sizeof c->k->role_names[0], "%s", r->string);
			for (int64_t w = 0; w < nwarps && !rc; w++) {
				enum expr_fault fault = EXPR_OK;
				slots[SLOT_WARP] = w;
				int64_t v = expr_eval(&c->k->pool, &e, slots, &fault);
				if (fault != EXPR_OK)
					rc = jdoc_error(c->doc, &c->at, c->d, "for warp %lld: %s", (long long)w,
							expr_fault_name(fault));
				else if (v && c->k->warp_role[w] >= 0)
					rc = jdoc_error(c->doc, &c->at, c->d, "warp %lld is \"%s\" already: a warp has one role",
							(long long)w, c->k->role_names[c->k->warp_role[w]]);
				else if (v)
					c->k->warp_role[w] = (int8_t)id;
			}
		}
		jpath_pop(&c->at, o2);
	next:
		rc = recover(c, rc);
	}
out:
	free(slots);
	jpath_pop(&c->at, old);
	return rc;
}

const char *kernel_warp_role(const struct kernel *k, uint32_t w)
{
	if (!k->warp_role || w >= (uint32_t)k->nwarp_roles || k->warp_role[w] < 0)
		return NULL;
	return k->role_names[k->warp_role[w]];
}

/*
 * The loader behind kernel_load and kernel_check: with all, every error is
 * added to it and what was compiled comes back in *out whatever the errors.
 */
static int load(const char *file, struct param_override *ov, int nov, const struct launch *launch,
		struct kernel *out, struct diag *d, struct diag_list *all)
{
	struct jdoc doc = {0};
	struct kernel k = {0};
	struct compiler *c = calloc(1, sizeof *c);
	int rc = c ? jdoc_load(file, &doc, d) : diag_set(d, DIAG_LIMIT, "out of memory");
	if (rc)
		goto out;
	c->doc = &doc;
	c->k = &k;
	c->launch = launch;
	c->d = d;
	c->all = all;
	jpath_root(&c->at);
	snprintf(k.file, sizeof k.file, "%s", file);
	k.bufs = calloc(64, sizeof *k.bufs);
	k.code = calloc(MAX_CODE, sizeof *k.code);
	k.paths = calloc(MAX_CODE, sizeof *k.paths);
	k.path_line = calloc(MAX_CODE, sizeof *k.path_line);
	k.path_col = calloc(MAX_CODE, sizeof *k.path_col);
	k.slot_names = calloc(MAX_SLOTS, sizeof *k.slot_names);
	if (!k.bufs || !k.code || !k.paths || !k.path_line || !k.path_col || !k.slot_names) {
		rc = diag_set(d, DIAG_LIMIT, "%s: out of memory", file);
		goto out;
	}
	for (int i = 0; i < SLOT_BUILTINS; i++) {
		snprintf(k.slot_names[i], sizeof k.slot_names[0], "%s", builtin_names[i]);
		snprintf(c->vars[i].name, sizeof c->vars[0].name, "%s", builtin_names[i]);
		c->vars[i].slot = i;
	}
	k.nslots = c->nvars = SLOT_BUILTINS;

	static const char *const keys[] = {"kernel",    "source",   "notes", "params",  "ranges", "helpers", "shared",
					   "global",    "pipelines", "barriers", "roles", "body",  "comment", NULL};
	const char *name = "", *source = "";
	/* Each part on its own, so that a check goes on to the next after an error in one. */
	if ((rc = recover(c, jdoc_check_keys(&doc, doc.root, &c->at, keys, d))) ||
	    (rc = recover(c, jdoc_string(&doc, doc.root, &c->at, "kernel", true, &name, d))) ||
	    (rc = recover(c, jdoc_string(&doc, doc.root, &c->at, "source", true, &source, d))) ||
	    (rc = recover(c, load_params(c, doc.root, ov, nov))))
		goto out;
	/* A parameter outside its range makes every size that uses it wrong: nothing after it is compiled. */
	int before = c->errors;
	if ((rc = recover(c, load_ranges(c, doc.root, ov, nov))) || c->errors > before) {
		rc = DIAG_INPUT;
		goto out;
	}
	if ((rc = recover(c, load_helpers(c, doc.root))) ||
	    (rc = recover(c, load_buffers(c, doc.root, "shared", SPACE_SHARED))) ||
	    (rc = recover(c, load_buffers(c, doc.root, "global", SPACE_GLOBAL))) ||
	    (rc = recover(c, load_pipelines(c, doc.root))) || (rc = recover(c, load_barriers(c, doc.root))) ||
	    (rc = recover(c, load_roles(c, doc.root))) ||
	    (rc = recover(c, compile_block(c, doc.root, "body"))))
		goto out;
	if (c->errors)
		rc = DIAG_INPUT;
	snprintf(k.name, sizeof k.name, "%s", name ? name : "");
	snprintf(k.source, sizeof k.source, "%s", source ? source : "");
	k.wide_slots = c->wide_slots;
	k.const_slots = rc == 0 ? constant_variables(&k) : 0;
	if (rc == 0 && lower_kernel(&k)) {
		rc = diag_set(d, DIAG_LIMIT, "%s: out of memory", file);
		goto out;
	}
	if (rc == 0 || all) {
		*out = k;
		k = (struct kernel){0};
	}
out:
	if (rc && all && (!c || c->errors == 0 || rc != DIAG_INPUT))
		diag_list_add(all, d); /* what stopped it: the syntax, or out of memory */
	kernel_free(&k);
	if (c)
		free(c->helpers);
	free(c);
	jdoc_free(&doc);
	return rc;
}

int kernel_load(const char *file, struct param_override *ov, int nov, const struct launch *launch,
		struct kernel *out, struct diag *d)
{
	return load(file, ov, nov, launch, out, d, NULL);
}

int kernel_check(const char *file, struct param_override *ov, int nov, const struct launch *launch,
		 struct kernel *out, struct diag_list *errs)
{
	struct diag d = {0};
	*out = (struct kernel){0};
	return load(file, ov, nov, launch, out, &d, errs);
}

void kernel_free(struct kernel *k)
{
	if (!k)
		return;
	free(k->params);
	free(k->bufs);
	free(k->pipes);
	free(k->bars);
	free(k->warp_role);
	lower_free(k);
	free(k->code);
	free(k->slot_names);
	for (int i = 0; k->paths && i < k->npaths; i++)
		free(k->paths[i]);
	free(k->paths);
	free(k->path_line);
	free(k->path_col);
	expr_pool_free(&k->pool);
	*k = (struct kernel){0};
}

/*
 * The variables the compiler propagates as constants: every statement that writes one is a let or
 * set of the same constant (nothing else writes it: an op's result, a loop's counter).  Their
 * reads are immediates in the compiled code (isa/lower.c); the simulation still runs the lets.
 */
uint64_t constant_variables(const struct kernel *k)
{
	uint64_t seen = 0, bad = 0;
	int64_t value[63] = {0};
	for (int i = 0; i < k->ncode; i++) {
		const struct insn *in = &k->code[i];
		int s = in->slot;
		if (s <= 0 || s >= 63)
			continue;
		uint64_t bit = 1ull << s;
		if ((in->op != OP_LET && in->op != OP_SET) || !in->e[0].is_const) {
			bad |= bit;
			continue;
		}
		if ((seen & bit) && value[s] != in->e[0].value)
			bad |= bit;
		seen |= bit;
		value[s] = in->e[0].value;
	}
	return seen & ~bad & ~k->unrolled_slots;
}

int kernel_param_value(const struct kernel *k, const char *name, int64_t *value)
{
	for (int i = 0; i < k->nparams; i++)
		if (strcmp(k->params[i].name, name) == 0) {
			*value = k->params[i].value;
			return 0;
		}
	return -1;
}

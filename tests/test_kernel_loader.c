/*
 * kernel_load: the shipped kernels, parameter overrides, control-flow
 * flattening, and the messages for malformed descriptions.
 *
 * JSON is written here with single quotes for readability; write_json()
 * turns them into double quotes (no test text needs a real apostrophe).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "isa/jdoc.h"
#include "isa/kernel.h"
#include "isa/suggest.h"

static const struct launch launch = {.block_size = 256, .blocks = 1, .grid_blocks = 132};

static char dir[64];
static char written[16][128];
static int nwritten;

static void make_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/smsim_kl_XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp failed");
	nwritten = 0;
}

static void remove_dir(void)
{
	for (int i = 0; i < nwritten; i++)
		unlink(written[i]);
	rmdir(dir);
}

TestSuite(kernel_loader, .init = make_dir, .fini = remove_dir);

static void squote_to_dquote(char *s)
{
	for (; *s; s++)
		if (*s == '\'')
			*s = '"';
}

/* Writes text (single-quoted JSON) to dir/name; returns the path. */
static const char *write_json(const char *name, const char *text)
{
	cr_assert_lt(nwritten, 16);
	char *path = written[nwritten++];
	snprintf(path, sizeof written[0], "%s/%s", dir, name);
	char *t = strdup(text);
	squote_to_dquote(t);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "cannot write %s", path);
	fputs(t, f);
	fclose(f);
	free(t);
	return path;
}

/* 1-based line and column of the first occurrence of marker (single-quoted) in text. */
static void locate(const char *text, const char *marker, int *line, int *col)
{
	char *t = strdup(text), *m = strdup(marker);
	squote_to_dquote(t);
	squote_to_dquote(m);
	const char *hit = strstr(t, m);
	cr_assert_not_null(hit, "test bug: marker <%s> not in the text", m);
	*line = 1;
	*col = 1;
	for (const char *p = t; p < hit; p++) {
		if (*p == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
	free(t);
	free(m);
}

static int load(const char *path, struct param_override *ov, int nov, struct kernel *k, struct diag *d)
{
	*k = (struct kernel){0};
	*d = (struct diag){0};
	return kernel_load(path, ov, nov, &launch, k, d);
}

static int load_text(const char *text, struct kernel *k, struct diag *d)
{
	return load(write_json("k.json", text), NULL, 0, k, d);
}

/* A text that must load. */
static void load_ok(const char *text, struct kernel *k)
{
	struct diag d;
	int rc = load_text(text, k, &d);
	cr_assert_eq(rc, 0, "load failed (%d): %s", rc, d.msg);
}

/*
 * A text that must fail with DIAG_INPUT, the message beginning
 * "FILE:LINE:COL: at JPATH: " where LINE:COL is where marker starts
 * (marker NULL: no position, "FILE: at JPATH: "), and containing fragment
 * (taken as is: real double quotes).
 */
static void expect_error(const char *name, const char *text, const char *jpath, const char *marker,
			 const char *fragment)
{
	const char *file = write_json(name, text);
	struct kernel k;
	struct diag d;
	int rc = load(file, NULL, 0, &k, &d);
	cr_assert_eq(rc, DIAG_INPUT, "%s: expected code 2, got %d: %s", name, rc, d.msg);
	cr_assert_eq(d.code, DIAG_INPUT, "%s: diag.code %d", name, d.code);
	char want[1024];
	if (marker) {
		int line, col;
		locate(text, marker, &line, &col);
		snprintf(want, sizeof want, "%s:%d:%d: at %s: ", file, line, col, jpath);
	} else {
		snprintf(want, sizeof want, "%s: at %s: ", file, jpath);
	}
	cr_assert(strncmp(d.msg, want, strlen(want)) == 0, "%s: message\n  %s\ndoes not begin\n  %s", name, d.msg,
		  want);
	cr_assert(strstr(d.msg, fragment), "%s: message\n  %s\nlacks\n  %s", name, d.msg, fragment);
}

/* The declarations most cases share: lines 1-5. */
#define HEAD                                                                                         \
	"{'kernel': 't', 'source': 'test',\n"                                                        \
	" 'params': {'k': 8, 'stages': 2},\n"                                                        \
	" 'shared': {'shared': {'elems': 'stages * block_size'}},\n"                                 \
	" 'global': {'global_in': {'elems': 'grid_size * k'}, 'global_out': {'elems': 'grid_size * k'}},\n" \
	" 'pipelines': {'pipe': {'scope': 'block', 'stages': 'stages'}},\n"
#define BODY(stmts) HEAD " 'body': [\n" stmts "\n ]}\n"

/* --- the shipped kernels ------------------------------------------------------ */

static const enum op single_stage_code[] = {
	OP_MAKE_PIPELINE, OP_LET,	    OP_BRZ,	      OP_LET,		 OP_PRODUCER_ACQUIRE, OP_MEMCPY_ASYNC,
	OP_PRODUCER_COMMIT, OP_CONSUMER_WAIT, OP_COMPUTE, OP_CONSUMER_RELEASE, OP_SET,		  OP_JMP,
};

Test(kernel_loader, with_single_stage_loads)
{
	struct kernel k;
	struct diag d = {0};
	int rc = kernel_load("kernels/with_single_stage.json", NULL, 0, &launch, &k, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	cr_assert_str_eq(k.name, "with_single_stage");
	cr_assert_str_eq(k.file, "kernels/with_single_stage.json");
	int64_t v;
	cr_assert_eq(kernel_param_value(&k, "batch_sz", &v), 0);
	cr_assert_eq(v, 64);
	cr_assert_eq(kernel_param_value(&k, "k", &v), 0);
	cr_assert_eq(v, 64);
	cr_assert_eq(kernel_param_value(&k, "nosuch", &v), -1);
	cr_assert_eq(k.nbufs, 3);
	cr_assert_str_eq(k.bufs[0].name, "shared");
	cr_assert_eq(k.bufs[0].space, SPACE_SHARED);
	cr_assert_eq(k.bufs[0].elems, 256);
	cr_assert_eq(k.bufs[0].elem_bytes, 4);
	cr_assert_eq(k.shared_bytes, 1024);
	cr_assert_str_eq(k.bufs[1].name, "global_in");
	cr_assert_eq(k.bufs[1].space, SPACE_GLOBAL);
	cr_assert_eq(k.bufs[1].elems, 64 * 256 * 132);
	cr_assert_eq(k.bufs[1].base, 0);
	cr_assert_eq(k.bufs[2].base, 64 * 256 * 132 * 4);
	cr_assert_eq(k.global_bytes, 2ull * 64 * 256 * 132 * 4);
	cr_assert_eq(k.npipes, 1);
	cr_assert_eq(k.pipes[0].stages, 1);
	cr_assert_eq(k.pipes[0].scope, PIPE_SCOPE_BLOCK);

	int n = (int)(sizeof single_stage_code / sizeof single_stage_code[0]);
	cr_assert_eq(k.ncode, n, "%d instructions", k.ncode);
	for (int i = 0; i < n; i++)
		cr_assert_eq(k.code[i].op, single_stage_code[i], "code[%d] is %s", i, op_table[k.code[i].op].name);
	cr_assert_eq(k.code[0].obj, 0);
	cr_assert_eq(k.code[2].target, 12);
	cr_assert_eq(k.code[2].reconv, 12);
	cr_assert_eq(k.code[11].target, 2);
	const struct insn *cp = &k.code[5];
	cr_assert_eq(cp->group, GROUP_BLOCK);
	cr_assert_eq(cp->dst.buf, 0);
	cr_assert_eq(cp->src.buf, 1);
	cr_assert(cp->e[0].is_const);
	cr_assert_eq(cp->e[0].value, 1024);
	cr_assert_eq(cp->align, 4, "default alignment is the element size");
	cr_assert_eq(cp->obj, 0);
	const struct insn *co = &k.code[8];
	cr_assert_eq(co->dst.buf, 2);
	cr_assert_eq(co->src.buf, 0);
	cr_assert(co->e[0].is_const);
	cr_assert_eq(co->e[0].value, 64, "k");
	cr_assert(co->e[1].per_thread, "elem defaults to tid");
	cr_assert_str_eq(k.paths[k.code[8].where], "$.body[1].body[5]");
	kernel_free(&k);
	cr_assert_null(k.code);
}

static const enum op unified_code[] = {
	OP_MAKE_PIPELINE, OP_LET,	     OP_LET,	     OP_BRZ,	   OP_BRZ,	    OP_PRODUCER_ACQUIRE,
	OP_LET,		  OP_LET,	     OP_MEMCPY_ASYNC, OP_PRODUCER_COMMIT, OP_SET, OP_JMP,
	OP_CONSUMER_WAIT, OP_LET,	     OP_COMPUTE,     OP_CONSUMER_RELEASE, OP_SET, OP_JMP,
};

Test(kernel_loader, with_staging_unified_loads)
{
	struct kernel k;
	struct diag d = {0};
	int rc = kernel_load("kernels/with_staging_unified.json", NULL, 0, &launch, &k, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	cr_assert_str_eq(k.name, "with_staging_unified");
	cr_assert_eq(k.nparams, 3);
	cr_assert_eq(k.pipes[0].stages, 2);
	cr_assert_eq(k.bufs[0].elems, 2 * 256);
	cr_assert_eq(k.shared_bytes, 2 * 256 * 4);
	int n = (int)(sizeof unified_code / sizeof unified_code[0]);
	cr_assert_eq(k.ncode, n, "%d instructions", k.ncode);
	for (int i = 0; i < n; i++)
		cr_assert_eq(k.code[i].op, unified_code[i], "code[%d] is %s", i, op_table[k.code[i].op].name);
	/* for: BRZ at 3 exits past the back-edge at 17; while: BRZ at 4 exits past its JMP at 11. */
	cr_assert_eq(k.code[3].target, 18);
	cr_assert_eq(k.code[3].reconv, 18);
	cr_assert_eq(k.code[17].target, 3);
	cr_assert_eq(k.code[4].target, 12);
	cr_assert_eq(k.code[4].reconv, 12);
	cr_assert_eq(k.code[11].target, 4);
	/* Builtins, fetch_batch, compute_batch, shared_idx, block_batch_idx, and the second shared_idx. */
	cr_assert_eq(k.nslots, SLOT_BUILTINS + 5);
	cr_assert_str_eq(k.slot_names[SLOT_TID], "tid");
	cr_assert_str_eq(k.slot_names[SLOT_BUILTINS], "fetch_batch");
	cr_assert_str_eq(k.slot_names[SLOT_BUILTINS + 1], "compute_batch");
	cr_assert_eq(k.code[13].slot, SLOT_BUILTINS + 4);

	/* The helper folds launch sizes: block_batch(b) = block * 256 + 33792 * b. */
	const struct insn *let = &k.code[7];
	cr_assert_not(let->e[0].is_const);
	int64_t slots[16] = {0};
	slots[SLOT_BLOCK] = 3;
	slots[SLOT_BUILTINS] = 5; /* fetch_batch */
	enum expr_fault f = EXPR_OK;
	cr_assert_eq(expr_eval(&k.pool, &let->e[0], slots, &f), 3 * 256 + 256 * 132 * 5);
	cr_assert_eq(f, EXPR_OK);
	/* The while condition: fetch_batch < 64 && fetch_batch < compute_batch + 2. */
	slots[SLOT_BUILTINS + 1] = 4;
	cr_assert_eq(expr_eval(&k.pool, &k.code[4].e[0], slots, &f), 1);
	slots[SLOT_BUILTINS + 1] = 3;
	cr_assert_eq(expr_eval(&k.pool, &k.code[4].e[0], slots, &f), 0);
	kernel_free(&k);
}

Test(kernel_loader, overrides_apply_and_are_marked)
{
	struct param_override ov[] = {
		{.name = "stages", .value = 4},
		{.name = "k", .value = 16},
		{.name = "no_such_param", .value = 1},
	};
	struct kernel k;
	struct diag d = {0};
	int rc = kernel_load("kernels/with_staging_unified.json", ov, 3, &launch, &k, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	cr_assert(ov[0].used);
	cr_assert(ov[1].used);
	cr_assert_not(ov[2].used, "an override naming no parameter stays unused");
	cr_assert_eq(k.pipes[0].stages, 4);
	cr_assert_eq(k.bufs[0].elems, 4 * 256);
	cr_assert_eq(k.shared_bytes, 4 * 256 * 4);
	int64_t v;
	cr_assert_eq(kernel_param_value(&k, "stages", &v), 0);
	cr_assert_eq(v, 4);
	cr_assert_eq(kernel_param_value(&k, "batch_sz", &v), 0);
	cr_assert_eq(v, 64, "parameters without overrides keep defaults");
	cr_assert(k.code[14].e[0].is_const);
	cr_assert_eq(k.code[14].e[0].value, 16, "compute's k follows the override");
	kernel_free(&k);
}

Test(kernel_loader, launch_sizes_fold)
{
	struct launch l = {.block_size = 128, .blocks = 2, .grid_blocks = 10};
	struct kernel k;
	struct diag d = {0};
	int rc = kernel_load("kernels/with_single_stage.json", NULL, 0, &l, &k, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	cr_assert_eq(k.bufs[0].elems, 128);
	cr_assert_eq(k.bufs[1].elems, 64 * 128 * 10);
	cr_assert_eq(k.code[5].e[0].value, 4 * 128);
	kernel_free(&k);
}

/* --- flattening ------------------------------------------------------------------ */

Test(kernel_loader, for_flattens)
{
	struct kernel k;
	load_ok(BODY("  {'op': 'let', 'var': 'acc', 'value': 0},\n"
		     "  {'op': 'for', 'var': 'i', 'from': 2, 'to': 'k', 'step': 'i + 3', 'body': [\n"
		     "    {'op': 'set', 'var': 'acc', 'value': 'acc + i'},\n"
		     "    {'op': 'fma', 'n': 'i'}\n"
		     "  ]},\n"
		     "  {'op': 'exit'}"),
		&k);
	cr_assert_eq(k.ncode, 8);
	int acc = SLOT_BUILTINS, i = SLOT_BUILTINS + 1;
	cr_assert_eq(k.nslots, SLOT_BUILTINS + 2);
	cr_assert_str_eq(k.slot_names[i], "i");

	cr_assert_eq(k.code[0].op, OP_LET);
	cr_assert_eq(k.code[0].slot, acc);

	const struct insn *let = &k.code[1];
	cr_assert_eq(let->op, OP_LET);
	cr_assert_eq(let->slot, i);
	cr_assert(let->e[0].is_const);
	cr_assert_eq(let->e[0].value, 2);

	const struct insn *brz = &k.code[2];
	cr_assert_eq(brz->op, OP_BRZ);
	cr_assert_eq(brz->target, 7, "BRZ leaves the loop to just after the JMP");
	cr_assert_eq(brz->reconv, 7);
	int64_t slots[8] = {0};
	enum expr_fault f = EXPR_OK;
	slots[i] = 7;
	cr_assert_eq(expr_eval(&k.pool, &brz->e[0], slots, &f), 1, "7 < k");
	slots[i] = 8;
	cr_assert_eq(expr_eval(&k.pool, &brz->e[0], slots, &f), 0, "8 < k");
	cr_assert_eq(f, EXPR_OK);

	cr_assert_eq(k.code[3].op, OP_SET);
	cr_assert_eq(k.code[3].slot, acc);
	cr_assert_eq(k.code[4].op, OP_FMA);

	const struct insn *step = &k.code[5];
	cr_assert_eq(step->op, OP_SET);
	cr_assert_eq(step->slot, i);
	slots[i] = 2;
	cr_assert_eq(expr_eval(&k.pool, &step->e[0], slots, &f), 5);

	cr_assert_eq(k.code[6].op, OP_JMP);
	cr_assert_eq(k.code[6].target, 2, "the back-edge returns to the BRZ");
	cr_assert_eq(k.code[7].op, OP_EXIT);

	cr_assert_str_eq(k.paths[k.code[1].where], "$.body[1]");
	cr_assert_str_eq(k.paths[k.code[3].where], "$.body[1].body[0]");
	cr_assert_str_eq(k.paths[k.code[7].where], "$.body[2]");
	kernel_free(&k);
}

Test(kernel_loader, for_default_step_and_cond)
{
	struct kernel k;
	load_ok(BODY("  {'op': 'for', 'var': 'j', 'from': 'tid', 'cond': 'j * j < 100', 'body': []}"), &k);
	cr_assert_eq(k.ncode, 4);
	int j = SLOT_BUILTINS;
	cr_assert_not(k.code[0].e[0].is_const);
	cr_assert(k.code[0].e[0].per_thread);
	int64_t slots[8] = {0};
	enum expr_fault f = EXPR_OK;
	slots[j] = 9;
	cr_assert_eq(expr_eval(&k.pool, &k.code[1].e[0], slots, &f), 1);
	slots[j] = 10;
	cr_assert_eq(expr_eval(&k.pool, &k.code[1].e[0], slots, &f), 0);
	cr_assert_eq(k.code[2].op, OP_SET);
	cr_assert_eq(expr_eval(&k.pool, &k.code[2].e[0], slots, &f), 11, "default step is +1");
	cr_assert_eq(k.code[3].op, OP_JMP);
	cr_assert_eq(k.code[3].target, 1);
	cr_assert_eq(k.code[1].target, 4);
	cr_assert_eq(k.code[1].reconv, 4);
	kernel_free(&k);
}

Test(kernel_loader, if_else_and_while_flatten)
{
	struct kernel k;
	load_ok(BODY("  {'op': 'if', 'cond': 'tid < 32', 'then': [\n"
		     "    {'op': 'syncwarp'}\n"
		     "  ], 'else': [\n"
		     "    {'op': 'fma', 'n': 1},\n"
		     "    {'op': 'fma', 'n': 2}\n"
		     "  ]},\n"
		     "  {'op': 'if', 'cond': 'lane == 0', 'then': [{'op': 'exit'}]},\n"
		     "  {'op': 'let', 'var': 'n', 'value': 3},\n"
		     "  {'op': 'while', 'cond': 'n', 'body': [{'op': 'set', 'var': 'n', 'value': 'n - 1'}]},\n"
		     "  {'op': 'syncthreads'}"),
		&k);
	static const enum op want[] = {OP_BRZ, OP_SYNCWARP, OP_JMP, OP_FMA, OP_FMA, OP_BRZ, OP_EXIT,
				       OP_LET, OP_BRZ, OP_SET,	   OP_JMP, OP_SYNCTHREADS};
	cr_assert_eq(k.ncode, 12);
	for (int i = 0; i < 12; i++)
		cr_assert_eq(k.code[i].op, want[i], "code[%d] is %s", i, op_table[k.code[i].op].name);
	/* if/else: BRZ to the else branch, JMP over it, both meet after it. */
	cr_assert_eq(k.code[0].target, 3);
	cr_assert_eq(k.code[0].reconv, 5);
	cr_assert_eq(k.code[2].target, 5);
	/* if without else */
	cr_assert_eq(k.code[5].target, 7);
	cr_assert_eq(k.code[5].reconv, 7);
	/* while */
	cr_assert_eq(k.code[8].target, 11);
	cr_assert_eq(k.code[8].reconv, 11);
	cr_assert_eq(k.code[10].target, 8);
	kernel_free(&k);
}

Test(kernel_loader, memcpy_fields)
{
	struct kernel k;
	load_ok(BODY("  {'op': 'memcpy_async', 'dst': 'shared[tid]', 'src': 'global_in[block * block_size + tid]',\n"
		     "   'bytes': 16, 'align': 16, 'pipeline': 'pipe'},\n"
		     "  {'op': 'memcpy_async', 'group': 'block', 'dst': 'shared', 'src': 'global_in[0]',\n"
		     "   'bytes': '4 * block_size', 'pipeline': 'pipe'}"),
		&k);
	cr_assert_eq(k.ncode, 2);
	cr_assert_eq(k.code[0].group, GROUP_THREAD, "group defaults to thread");
	cr_assert_eq(k.code[0].align, 16);
	cr_assert_eq(k.code[0].dst.buf, 0);
	cr_assert_eq(k.code[0].src.buf, 1);
	cr_assert(k.code[0].dst.index.per_thread);
	int64_t slots[8] = {0};
	slots[SLOT_TID] = 5;
	slots[SLOT_BLOCK] = 2;
	enum expr_fault f = EXPR_OK;
	cr_assert_eq(expr_eval(&k.pool, &k.code[0].src.index, slots, &f), 2 * 256 + 5);
	cr_assert_eq(k.code[1].group, GROUP_BLOCK);
	cr_assert(k.code[1].dst.index.is_const, "a bare buffer name is index 0");
	cr_assert_eq(k.code[1].dst.index.value, 0);
	cr_assert_eq(k.code[1].e[0].value, 1024);
	/* Global buffers are 128-byte aligned one after another. */
	cr_assert_eq(k.bufs[2].base, 256ull * 132 * 8 * 4);
	kernel_free(&k);
}

Test(kernel_loader, scopes_end_with_their_block)
{
	struct kernel k;
	/* The same name may be declared again once its block has closed. */
	load_ok(BODY("  {'op': 'if', 'cond': 1, 'then': [{'op': 'let', 'var': 'a', 'value': 1}]},\n"
		     "  {'op': 'let', 'var': 'a', 'value': 2}"),
		&k);
	cr_assert_eq(k.nslots, SLOT_BUILTINS + 2);
	cr_assert_neq(k.code[1].slot, k.code[2].slot);
	kernel_free(&k);
}

/* --- malformed descriptions ------------------------------------------------------- */

Test(kernel_loader, invalid_json)
{
	const char *text = "{'kernel': 't',\n 'source': 's'\n 'body': []}\n";
	const char *file = write_json("syntax.json", text);
	struct kernel k;
	struct diag d;
	cr_assert_eq(load(file, NULL, 0, &k, &d), DIAG_INPUT, "%s", d.msg);
	char want[256];
	snprintf(want, sizeof want, "%s:3:2: invalid JSON", file);
	cr_assert(strstr(d.msg, want), "message \"%s\" lacks \"%s\"", d.msg, want);
}

Test(kernel_loader, invalid_json_truncated)
{
	const char *file = write_json("trunc.json", "{'kernel': 't',\n 'body': [\n");
	struct kernel k;
	struct diag d;
	cr_assert_eq(load(file, NULL, 0, &k, &d), DIAG_INPUT, "%s", d.msg);
	cr_assert(strstr(d.msg, file), "%s", d.msg);
	cr_assert(strstr(d.msg, "invalid JSON"), "%s", d.msg);
}

Test(kernel_loader, file_not_found)
{
	char path[128];
	snprintf(path, sizeof path, "%s/does_not_exist.json", dir);
	struct kernel k;
	struct diag d;
	cr_assert_eq(load(path, NULL, 0, &k, &d), DIAG_INPUT, "%s", d.msg);
	cr_assert(strstr(d.msg, path), "message \"%s\" lacks the path", d.msg);
	cr_assert(strstr(d.msg, "cannot read"), "%s", d.msg);
}

Test(kernel_loader, top_level_not_an_object)
{
	expect_error("array.json", "[1, 2]\n", "$", "[1", "expected an object");
}

Test(kernel_loader, missing_kernel)
{
	expect_error("nokernel.json", "{'source': 's', 'body': []}\n", "$", "{'source'",
		     "missing required field \"kernel\"");
}

Test(kernel_loader, missing_body)
{
	expect_error("nobody.json", "{'kernel': 't', 'source': 's'}\n", "$", "{'kernel'",
		     "missing required field \"body\"");
}

Test(kernel_loader, kernel_not_a_string)
{
	expect_error("kname.json", "{'kernel': 7, 'source': 's', 'body': []}\n", "$.kernel", "7",
		     "expected a string");
}

Test(kernel_loader, unknown_top_level_field)
{
	expect_error("bdy.json", "{'kernel': 't', 'source': 's',\n 'bdy': []}\n", "$.bdy", "[]",
		     "unknown field \"bdy\"; did you mean \"body\"?");
}

Test(kernel_loader, unknown_top_level_field_without_suggestion)
{
	expect_error("zzz.json", "{'kernel': 't', 'source': 's', 'body': [],\n 'zzzzzzzz': 1}\n", "$.zzzzzzzz", "1}",
		     "expected one of: kernel, source");
}

Test(kernel_loader, duplicate_field)
{
	expect_error("dup.json", BODY("  {'op': 'exit', 'op': 'syncthreads'}"), "$.body[0].op", "'exit'",
		     "duplicate field \"op\"");
}

Test(kernel_loader, unknown_op)
{
	expect_error("op.json",
		     BODY("  {'op': 'make_pipeline', 'pipeline': 'pipe'},\n"
			  "  {'op': 'producer_aquire', 'pipeline': 'pipe'}"),
		     "$.body[1].op", "'producer_aquire'",
		     "unknown op \"producer_aquire\"; did you mean \"producer_acquire\"?");
}

Test(kernel_loader, builtin_op_name_rejected)
{
	/* BRZ and JMP exist only after flattening. */
	expect_error("brz.json", BODY("  {'op': ''}"), "$.body[0].op", "''}", "unknown op \"\"");
}

Test(kernel_loader, op_not_a_string)
{
	expect_error("opnum.json", BODY("  {'op': 5}"), "$.body[0].op", "5}", "expected a string");
}

Test(kernel_loader, unknown_statement_field)
{
	expect_error("field.json", BODY("  {'op': 'let', 'var': 'a', 'vlaue': 1}"), "$.body[0].vlaue", "1}",
		     "unknown field \"vlaue\"; did you mean \"value\"?");
}

Test(kernel_loader, missing_statement_field)
{
	expect_error("noval.json", BODY("  {'op': 'let', 'var': 'a'}"), "$.body[0]", "{'op': 'let'",
		     "missing required field \"value\"");
}

Test(kernel_loader, non_integer_param)
{
	expect_error("param.json",
		     "{'kernel': 't', 'source': 's',\n"
		     " 'params': {'k': 8, 'stages': 2.5},\n"
		     " 'body': []}\n",
		     "$.params.stages", "2.5", "expected an integer default for parameter \"stages\"");
}

Test(kernel_loader, string_param)
{
	expect_error("sparam.json",
		     "{'kernel': 't', 'source': 's',\n"
		     " 'params': {'stages': 'two'},\n"
		     " 'body': []}\n",
		     "$.params.stages", "'two'", "expected an integer default");
}

Test(kernel_loader, param_shadows_builtin)
{
	expect_error("pbuiltin.json",
		     "{'kernel': 't', 'source': 's',\n"
		     " 'params': {'block_size': 128},\n"
		     " 'body': []}\n",
		     "$.params.block_size", "128", "already a builtin or parameter name");
}

Test(kernel_loader, undefined_variable)
{
	expect_error("undef.json",
		     BODY("  {'op': 'let', 'var': 'a', 'value': 1},\n"
			  "  {'op': 'let', 'var': 'c', 'value': 'a + b'}"),
		     "$.body[1].value", "'a + b'", "undefined name 'b'");
}

Test(kernel_loader, variable_out_of_scope)
{
	expect_error("scope.json",
		     BODY("  {'op': 'if', 'cond': 'tid', 'then': [{'op': 'let', 'var': 'a', 'value': 1}]},\n"
			  "  {'op': 'fma', 'n': 'a'}"),
		     "$.body[1].n", "'a'}", "undefined name 'a'");
}

Test(kernel_loader, set_undeclared)
{
	expect_error("set.json", BODY("  {'op': 'set', 'var': 'total', 'value': 1}"), "$.body[0].var", "'total'",
		     "\"total\" is not a variable of this kernel");
}

Test(kernel_loader, set_builtin_or_param)
{
	expect_error("settid.json", BODY("  {'op': 'set', 'var': 'tid', 'value': 1}"), "$.body[0].var", "'tid'",
		     "is not a variable of this kernel");
	expect_error("setk.json", BODY("  {'op': 'set', 'var': 'k', 'value': 1}"), "$.body[0].var", "'k',",
		     "is not a variable of this kernel");
}

Test(kernel_loader, let_redeclared)
{
	expect_error("redecl.json",
		     BODY("  {'op': 'let', 'var': 'a', 'value': 1},\n"
			  "  {'op': 'let', 'var': 'a', 'value': 2}"),
		     "$.body[1]", "{'op': 'let', 'var': 'a', 'value': 2}", "variable \"a\" is already declared");
}

Test(kernel_loader, let_of_a_parameter)
{
	expect_error("letk.json", BODY("  {'op': 'let', 'var': 'k', 'value': 2}"), "$.body[0]", "{'op': 'let'",
		     "\"k\" is a parameter or launch constant");
}

Test(kernel_loader, bad_variable_name)
{
	expect_error("varname.json", BODY("  {'op': 'let', 'var': '1a', 'value': 2}"), "$.body[0].var", "'1a'",
		     "expected an identifier");
}

Test(kernel_loader, unknown_buffer)
{
	expect_error("buf.json", BODY("  {'op': 'shared_load', 'addr': 'shard[tid]'}"), "$.body[0].addr",
		     "'shard[tid]'", "unknown buffer \"shard\"; did you mean \"shared\"?");
}

Test(kernel_loader, global_buffer_as_memcpy_dst)
{
	expect_error("dst.json",
		     BODY("  {'op': 'make_pipeline', 'pipeline': 'pipe'},\n"
			  "  {'op': 'memcpy_async', 'dst': 'global_out[tid]', 'src': 'global_in[tid]', 'bytes': 4,"
			  " 'pipeline': 'pipe'}"),
		     "$.body[1].dst", "'global_out[tid]'",
		     "buffer \"global_out\" is in global memory; expected a shared buffer");
}

Test(kernel_loader, shared_buffer_as_global_store)
{
	expect_error("gstore.json", BODY("  {'op': 'global_store', 'addr': 'shared[tid]'}"), "$.body[0].addr",
		     "'shared[tid]'", "is in shared memory; expected a global buffer");
}

Test(kernel_loader, memref_missing_bracket)
{
	expect_error("bracket.json", BODY("  {'op': 'shared_store', 'addr': 'shared[tid'}"), "$.body[0].addr",
		     "'shared[tid'", "closing ']'");
}

Test(kernel_loader, memref_bad_index)
{
	expect_error("index.json", BODY("  {'op': 'shared_store', 'addr': 'shared[tid +]'}"), "$.body[0].addr",
		     "'shared[tid +]'", "in the index");
}

Test(kernel_loader, unknown_pipeline)
{
	expect_error("pipe.json", BODY("  {'op': 'producer_acquire', 'pipeline': 'pipe2'}"), "$.body[0].pipeline",
		     "'pipe2'", "unknown pipeline \"pipe2\"");
}

Test(kernel_loader, bad_pipeline_scope)
{
	expect_error("pscope.json",
		     "{'kernel': 't', 'source': 's',\n"
		     " 'pipelines': {'p': {'scope': 'grid', 'stages': 2}},\n"
		     " 'body': []}\n",
		     "$.pipelines.p.scope", "'grid'", "expected \"block\"");
	expect_error("pscope2.json",
		     "{'kernel': 't', 'source': 's',\n"
		     " 'pipelines': {'p': {'scope': 'grid', 'stages': 2}},\n"
		     " 'body': []}\n",
		     "$.pipelines.p.scope", "'grid'", "got \"grid\"");
}

Test(kernel_loader, pipeline_stages_out_of_range)
{
	expect_error("stages.json",
		     "{'kernel': 't', 'source': 's',\n"
		     " 'pipelines': {'p': {'scope': 'block', 'stages': 65}},\n"
		     " 'body': []}\n",
		     "$.pipelines.p.stages", "65", "value 65 outside 1..64");
}

Test(kernel_loader, for_with_to_and_cond)
{
	expect_error("forboth.json",
		     BODY("  {'op': 'exit'},\n"
			  "  {'op': 'for', 'var': 'i', 'from': 0, 'to': 4, 'cond': 'i < 4', 'body': []}"),
		     "$.body[1]", "{'op': 'for'", "exactly one of \"to\" or \"cond\"");
}

Test(kernel_loader, for_with_neither_to_nor_cond)
{
	expect_error("forneither.json", BODY("  {'op': 'for', 'var': 'i', 'from': 0, 'body': []}"), "$.body[0]",
		     "{'op': 'for'", "exactly one of \"to\" or \"cond\"");
}

Test(kernel_loader, for_to_with_undefined_name)
{
	/* Like every other expression field, the error points at the field itself. */
	expect_error("forto.json", BODY("  {'op': 'for', 'var': 'i', 'from': 0, 'to': 'nn', 'body': []}"),
		     "$.body[0].to", "'nn'", "undefined name 'nn'");
}

Test(kernel_loader, align_not_power_of_two)
{
	expect_error("align.json",
		     BODY("  {'op': 'memcpy_async', 'dst': 'shared[tid]', 'src': 'global_in[tid]', 'bytes': 12,\n"
			  "   'align': 12, 'pipeline': 'pipe'}"),
		     "$.body[0].align", "12, 'p", "alignment must be a power of two, got 12");
}

Test(kernel_loader, memcpy_bad_group)
{
	expect_error("group.json",
		     BODY("  {'op': 'memcpy_async', 'group': 'warp', 'dst': 'shared[tid]', 'src': 'global_in[tid]',"
			  " 'bytes': 4, 'pipeline': 'pipe'}"),
		     "$.body[0].group", "'warp'", "expected \"block\" or \"thread\", got \"warp\"");
}

Test(kernel_loader, buffer_size_divides_by_zero)
{
	expect_error("div0.json",
		     "{'kernel': 't', 'source': 's',\n"
		     " 'params': {'k': 8},\n"
		     " 'shared': {'buf': {'elems': '256 / (k - 8)'}},\n"
		     " 'body': []}\n",
		     "$.shared.buf.elems", "'256 /", "division by zero");
}

Test(kernel_loader, buffer_size_not_constant)
{
	expect_error("elems.json",
		     "{'kernel': 't', 'source': 's',\n"
		     " 'shared': {'buf': {'elems': 'tid * 4'}},\n"
		     " 'body': []}\n",
		     "$.shared.buf.elems", "'tid * 4'", "expected a constant");
}

Test(kernel_loader, bad_elem_bytes)
{
	expect_error("eb.json",
		     "{'kernel': 't', 'source': 's',\n"
		     " 'shared': {'buf': {'elems': 16, 'elem_bytes': 3}},\n"
		     " 'body': []}\n",
		     "$.shared.buf", "{'elems'", "elem_bytes must be 1, 2, 4, 8 or 16");
}

Test(kernel_loader, body_not_an_array)
{
	expect_error("bodyobj.json", "{'kernel': 't', 'source': 's',\n 'body': {'op': 'exit'}}\n", "$.body",
		     "{'op'", "expected a list of statements");
}

Test(kernel_loader, statement_not_an_object)
{
	expect_error("stmt.json", BODY("  {'op': 'exit'},\n  42"), "$.body[1]", "42", "expected a statement object");
}

Test(kernel_loader, expression_of_the_wrong_type)
{
	expect_error("exprtype.json", BODY("  {'op': 'fma', 'n': true}"), "$.body[0].n", "true",
		     "expected an expression");
	expect_error("exprfrac.json", BODY("  {'op': 'fma', 'n': 1.5}"), "$.body[0].n", "1.5",
		     "expected an integer expression");
}

Test(kernel_loader, helper_wrong_arg_count)
{
	expect_error("helper.json",
		     "{'kernel': 't', 'source': 's',\n"
		     " 'helpers': {'bb': {'args': ['b'], 'expr': 'block * block_size + b'}},\n"
		     " 'body': [\n"
		     "  {'op': 'let', 'var': 'a', 'value': 'bb(1, 2)'}\n"
		     " ]}\n",
		     "$.body[0].value", "'bb(1, 2)'", "bb takes 1 argument");
}

Test(kernel_loader, helper_args_not_a_list)
{
	expect_error("hargs.json",
		     "{'kernel': 't', 'source': 's',\n"
		     " 'helpers': {'bb': {'args': 'b', 'expr': 'b'}},\n"
		     " 'body': []}\n",
		     "$.helpers.bb.args", "'b', 'expr'", "expected a list of at most 8 argument names");
}

Test(kernel_loader, recursive_helper)
{
	expect_error("hrec.json",
		     "{'kernel': 't', 'source': 's',\n"
		     " 'helpers': {'h': {'args': ['x'], 'expr': 'h(x) + 1'}},\n"
		     " 'body': [{'op': 'fma', 'n': 'h(tid)'}]}\n",
		     "$.body[0].n", "'h(tid)'", "helper h calls itself: helpers cannot recurse");
}

Test(kernel_loader, error_in_nested_body)
{
	expect_error("nested.json",
		     BODY("  {'op': 'for', 'var': 'i', 'from': 0, 'to': 4, 'body': [\n"
			  "    {'op': 'producer_acquire', 'pipeline': 'pipe'},\n"
			  "    {'op': 'let', 'var': 'j', 'value': 'i * 2'},\n"
			  "    {'op': 'memcpy_async', 'dst': 'nope[j]', 'src': 'global_in[0]', 'bytes': 4,"
			  " 'pipeline': 'pipe'}\n"
			  "  ]}"),
		     "$.body[0].body[2].dst", "'nope[j]'", "unknown buffer \"nope\"");
}

Test(kernel_loader, error_in_first_nested_body)
{
	expect_error("nested0.json",
		     BODY("  {'op': 'while', 'cond': 1, 'body': [\n"
			  "    {'op': 'fma', 'n': 1},\n"
			  "    {'op': 'fma', 'n': 2},\n"
			  "    {'op': 'global_load', 'adr': 'global_in[tid]'}\n"
			  "  ]}"),
		     "$.body[0].body[2].adr", "'global_in[tid]'", "did you mean \"addr\"?");
}

Test(kernel_loader, else_branch_error)
{
	expect_error("else.json",
		     BODY("  {'op': 'if', 'cond': 'tid', 'then': [], 'else': [\n"
			  "    {'op': 'syncthreads', 'extra': 1}\n"
			  "  ]}"),
		     "$.body[0].else[0].extra", "1}", "unknown field \"extra\"");
}

Test(kernel_loader, statements_nest_too_deep)
{
	/* 80 nested whiles: past the loader's nesting limit, reported, not a crash. */
	char text[8192];
	size_t n = (size_t)snprintf(text, sizeof text, "{'kernel': 't', 'source': 's', 'body': [\n");
	for (int i = 0; i < 80; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "{'op': 'while', 'cond': 0, 'body': [");
	for (int i = 0; i < 80; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "]}");
	snprintf(text + n, sizeof text - n, "]}\n");
	const char *file = write_json("deep.json", text);
	struct kernel k;
	struct diag d;
	cr_assert_eq(load(file, NULL, 0, &k, &d), DIAG_INPUT, "%s", d.msg);
	cr_assert(strstr(d.msg, file), "%s", d.msg);
	cr_assert(strstr(d.msg, "nest more than"), "%s", d.msg);
}

Test(kernel_loader, source_position_counts_lines)
{
	/* The same mistake on a later line reports that line. */
	const char *text = BODY("  {'op': 'exit'},\n"
				"  {'op': 'syncthreads'},\n"
				"  {'op': 'fma',\n"
				"   'n': 'undefined_thing'}");
	expect_error("lines.json", text, "$.body[2].n", "'undefined_thing'", "undefined_thing");
	int line, col;
	locate(text, "'undefined_thing'", &line, &col);
	cr_assert_eq(line, 10, "test layout: HEAD is 5 lines, body opens on 6");
	cr_assert_eq(col, 9);
}

/* --- jdoc directly ---------------------------------------------------------------- */

Test(kernel_loader, jpath_builds_and_pops)
{
	struct jpath p;
	jpath_root(&p);
	cr_assert_str_eq(p.s, "$");
	size_t a = jpath_key(&p, "body");
	size_t b = jpath_index(&p, 3);
	jpath_key(&p, "then");
	cr_assert_str_eq(p.s, "$.body[3].then");
	jpath_pop(&p, b);
	cr_assert_str_eq(p.s, "$.body");
	jpath_index(&p, 12);
	cr_assert_str_eq(p.s, "$.body[12]");
	jpath_pop(&p, a);
	cr_assert_str_eq(p.s, "$");
	cr_assert_eq(p.len, 1);
	/* Overlong paths are cut, not overrun. */
	for (int i = 0; i < 200; i++)
		jpath_key(&p, "abcdefgh");
	cr_assert_lt(p.len, sizeof p.s);
	cr_assert_eq(strlen(p.s), p.len);
}

static void locate_at(const struct jdoc *doc, const char *path, int line, int col)
{
	int l, c;
	jdoc_locate(doc, path, &l, &c);
	cr_assert(l == line && c == col, "%s: at %d:%d, expected %d:%d", path, l, c, line, col);
}

Test(kernel_loader, jdoc_locate_paths)
{
	const char *text = "  {\"a\": {\"b\": 1},\n"
			   "   \"s\": \"x}]{[,\\\"\", \"b\": [10,\n"
			   "     {\"c\": [], \"d\": {\"e\": true}},\n"
			   "     30]}\n";
	struct jdoc doc;
	struct diag d = {0};
	cr_assert_eq(jdoc_parse("mem.json", text, &doc, &d), 0, "%s", d.msg);
	locate_at(&doc, "$", 1, 3);
	locate_at(&doc, "$.a", 1, 9);
	locate_at(&doc, "$.a.b", 1, 15);
	locate_at(&doc, "$.b", 2, 26);
	locate_at(&doc, "$.b[0]", 2, 27);
	locate_at(&doc, "$.b[1]", 3, 6);
	locate_at(&doc, "$.b[1].d.e", 3, 27);
	locate_at(&doc, "$.b[2]", 4, 6);
	/* What is absent resolves to its deepest present ancestor. */
	locate_at(&doc, "$.b[1].d.zz", 3, 21);
	locate_at(&doc, "$.b[7]", 2, 26);
	locate_at(&doc, "$.nope", 1, 3);
	jdoc_free(&doc);
	cr_assert_null(doc.root);
}

/* A locator resumed from each path before gives what a scan from the start gives, in any order. */
Test(kernel_loader, jdoc_locate_near_agrees_with_locate)
{
	const char *text = "  {\"a\": {\"b\": 1},\n"
			   "   \"s\": \"x}]{[,\\\"\", \"b\": [10,\n"
			   "     {\"c\": [], \"d\": {\"e\": true}},\n"
			   "     30, [[1, 2], [3,\n 4]], {\"b\": [5, 6]}]}\n";
	const char *paths[] = {"$", "$.b[1].d.e", "$.b[1].d", "$.b[1].c", "$.b[1].c[0]", "$.b[2]", "$.b[3][1][1]",
			       "$.b[3][1][0]", "$.b[3][0][1]", "$.b[3][1]", "$.b[4].b[1]", "$.b[4].b[0]", "$.b[4]",
			       "$.b[7]", "$.b[1].d.zz", "$.b[1].d.e", "$.a.b", "$.a", "$.nope", "$.b[0]", "$.b[4].b[1]",
			       "$.b[-1]", "$.b[x]", "$.b[2", "$.s", "$.s.x", "$..b", "$.b[1]x", "$.a.b", "x", "$.b"};
	struct jdoc doc;
	struct diag d = {0};
	cr_assert_eq(jdoc_parse("mem.json", text, &doc, &d), 0, "%s", d.msg);
	struct jdoc_locator loc = {0};
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
			int l, c, nl, nc;
			jdoc_locate(&doc, paths[i], &l, &c);
			jdoc_locate_near(&loc, &doc, paths[i], &nl, &nc);
			cr_assert(l == nl && c == nc, "%s: near %d:%d, from the start %d:%d", paths[i], nl, nc, l, c);
		}
	locate_at(&doc, "$.b[3][1][1]", 5, 2);
	jdoc_free(&doc);
}

/* want: how the message starts (NULL: no error). */
static void keys_give(const char *text, const char *const *allowed, const char *want)
{
	struct jdoc doc;
	struct diag d = {0};
	cr_assert_eq(jdoc_parse("k.json", text, &doc, &d), 0, "%s", d.msg);
	struct jpath at;
	jpath_root(&at);
	int rc = jdoc_check_keys(&doc, doc.root, &at, allowed, &d);
	if (want)
		cr_expect(rc == DIAG_INPUT && strncmp(d.msg, want, strlen(want)) == 0, "%s: got \"%s\"", text, rc ? d.msg : "ok");
	else
		cr_expect_eq(rc, 0, "%s: %s", text, d.msg);
	cr_assert_str_eq(at.s, "$");
	jdoc_free(&doc);
}

/* The first key that repeats an earlier one or is not allowed is the error, with few allowed names or many. */
Test(kernel_loader, jdoc_check_keys_first_repeat_or_unknown)
{
	static char many_names[300][8];
	const char *many[302];
	for (int i = 0; i < 300; i++) {
		snprintf(many_names[i], sizeof many_names[i], "n%d", i);
		many[i] = many_names[i];
	}
	many[300] = "a";
	many[301] = NULL;
	const char *few[] = {"a", "b", "c", NULL};
	const char *const *lists[] = {few, many};
	for (int l = 0; l < 2; l++) {
		const char *const *allowed = lists[l];
		keys_give("{\"a\": 1, \"b\": 2}", allowed, l ? "k.json:1:15: at $.b: unknown field \"b\"; did you mean \"a\"?" : NULL);
		keys_give("{\"a\": 1, \"a\": 2}", allowed, "k.json:1:7: at $.a: duplicate field \"a\"");
		keys_give("{\"a\": 1, \"zz\": 2, \"zz\": 3}", allowed,
			  l ? "k.json:1:16: at $.zz: unknown field \"zz\"; expected one of: n0, n1, n2, "
			    : "k.json:1:16: at $.zz: unknown field \"zz\"; expected one of: a, b, c");
		keys_give("{}", allowed, NULL);
	}
	keys_give("{\"b\": 1, \"c\": 2, \"b\": 3, \"q\": 4}", few, "k.json:1:7: at $.b: duplicate field \"b\"");
	keys_give("{\"c\": 1, \"a\": 2, \"b\": 3}", few, NULL);
	keys_give("{\"n299\": 1, \"n0\": 2, \"n299\": 3}", many, "k.json:1:10: at $.n299: duplicate field \"n299\"");
}

Test(kernel_loader, jdoc_error_format)
{
	struct jdoc doc;
	struct diag d = {0};
	cr_assert_eq(jdoc_parse("mem.json", "{\n  \"x\": [1, 2]\n}", &doc, &d), 0, "%s", d.msg);
	struct jpath p;
	jpath_root(&p);
	jpath_key(&p, "x");
	jpath_index(&p, 1);
	cr_assert_eq(jdoc_error(&doc, &p, &d, "bad %s %d", "thing", 7), DIAG_INPUT);
	cr_assert_str_eq(d.msg, "mem.json:2:12: at $.x[1]: bad thing 7");
	cr_assert_eq(d.code, DIAG_INPUT);
	jdoc_free(&doc);
	cr_assert_eq(jdoc_error(NULL, NULL, &d, "no document"), DIAG_INPUT);
	cr_assert_str_eq(d.msg, "<input>: at $: no document");
	/* A NULL diag is allowed. */
	cr_assert_eq(jdoc_error(NULL, NULL, NULL, "dropped"), DIAG_INPUT);
}

Test(kernel_loader, jdoc_parse_errors)
{
	struct jdoc doc;
	struct diag d = {0};
	cr_assert_eq(jdoc_parse("p.json", "{\"a\": 1,\n \"b\": tru}", &doc, &d), DIAG_INPUT);
	cr_assert(strncmp(d.msg, "p.json:2:", 9) == 0, "%s", d.msg);
	cr_assert(strstr(d.msg, "invalid JSON"), "%s", d.msg);
	cr_assert_null(doc.root);
	cr_assert_eq(jdoc_parse("p.json", "{} trailing", &doc, &d), DIAG_INPUT, "text after the value is an error");
	cr_assert(strncmp(d.msg, "p.json:1:4:", 11) == 0, "%s", d.msg);
	cr_assert_eq(jdoc_parse("p.json", "", &doc, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "p.json:1:1:"), "%s", d.msg);
}

Test(kernel_loader, jdoc_load_rejects_nul_and_reads_big_files)
{
	char path[128];
	snprintf(path, sizeof path, "%s/nul.json", dir);
	cr_assert_lt(nwritten, 16);
	strcpy(written[nwritten++], path);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	fwrite("{\"a\":\0 1}", 1, 9, f);
	fclose(f);
	struct jdoc doc;
	struct diag d = {0};
	cr_assert_eq(jdoc_load(path, &doc, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "NUL"), "%s", d.msg);

	/* Well past the reader's first buffer. */
	enum { N = 20000 };
	char *big = malloc(N + 16);
	size_t n = 0;
	int elems = 1;
	big[n++] = '[';
	while (n < N) {
		memcpy(big + n, "12345678,", 9);
		n += 9;
		elems++;
	}
	memcpy(big + n, "0]", 3);
	n += 2;
	const char *file = write_json("big.json", big);
	size_t len = 0;
	char *back = jdoc_read_file(file, &len);
	cr_assert_not_null(back);
	cr_assert_eq(len, n);
	cr_assert_str_eq(back, big);
	free(back);
	cr_assert_eq(jdoc_load(file, &doc, &d), 0, "%s", d.msg);
	cr_assert_eq(cJSON_GetArraySize(doc.root), elems);
	jdoc_free(&doc);
	free(big);
	cr_assert_null(jdoc_read_file("/nonexistent/dir/x.json", NULL));
}

Test(kernel_loader, suggest_name_and_check_keys)
{
	static const char *const names[] = {"kernel", "source", "body", "producer_acquire", NULL};
	cr_assert_str_eq(suggest_name("bdy", names), "body");
	cr_assert_str_eq(suggest_name("kernal", names), "kernel");
	cr_assert_str_eq(suggest_name("producer_aquire", names), "producer_acquire");
	cr_assert_null(suggest_name("xyzzy", names));
	cr_assert_null(suggest_name("b", names), "one letter is too little to guess from");
	cr_assert_null(suggest_name("body", NULL));

	struct jdoc doc;
	struct diag d = {0};
	cr_assert_eq(jdoc_parse("keys.json", "{\"kernel\": 1, \"sorce\": 2}", &doc, &d), 0, "%s", d.msg);
	struct jpath p;
	jpath_root(&p);
	cr_assert_eq(jdoc_check_keys(&doc, doc.root, &p, names, &d), DIAG_INPUT);
	cr_assert_str_eq(d.msg, "keys.json:1:24: at $.sorce: unknown field \"sorce\"; did you mean \"source\"?");
	cr_assert_str_eq(p.s, "$", "the path is restored");
	static const char *const all[] = {"kernel", "sorce", NULL};
	cr_assert_eq(jdoc_check_keys(&doc, doc.root, &p, all, &d), 0);
	jdoc_free(&doc);
}

Test(kernel_loader, jdoc_typed_fields)
{
	struct jdoc doc;
	struct diag d = {0};
	const char *text = "{\"s\": \"str\", \"n\": 42, \"f\": 2.5, \"big\": 1e19, \"b\": true}";
	cr_assert_eq(jdoc_parse("t.json", text, &doc, &d), 0, "%s", d.msg);
	struct jpath p;
	jpath_root(&p);
	const char *s = NULL;
	cr_assert_eq(jdoc_string(&doc, doc.root, &p, "s", true, &s, &d), 0);
	cr_assert_str_eq(s, "str");
	s = "untouched";
	cr_assert_eq(jdoc_string(&doc, doc.root, &p, "absent", false, &s, &d), 0);
	cr_assert_str_eq(s, "untouched");
	cr_assert_eq(jdoc_string(&doc, doc.root, &p, "absent", true, &s, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "missing required field \"absent\""), "%s", d.msg);
	cr_assert_eq(jdoc_string(&doc, doc.root, &p, "n", true, &s, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "at $.n: expected a string"), "%s", d.msg);

	char buf[32];
	cr_assert_eq(jdoc_expr_text(&doc, doc.root, &p, "n", true, buf, sizeof buf, &d), 0);
	cr_assert_str_eq(buf, "42");
	cr_assert_eq(jdoc_expr_text(&doc, doc.root, &p, "s", true, buf, sizeof buf, &d), 0);
	cr_assert_str_eq(buf, "str");
	cr_assert_eq(jdoc_expr_text(&doc, doc.root, &p, "s", true, buf, 3, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "longer than 2 characters"), "%s", d.msg);
	cr_assert_eq(jdoc_expr_text(&doc, doc.root, &p, "f", true, buf, sizeof buf, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "at $.f: expected an integer expression, got 2.5"), "%s", d.msg);
	cr_assert_eq(jdoc_expr_text(&doc, doc.root, &p, "big", true, buf, sizeof buf, &d), DIAG_INPUT);
	cr_assert_eq(jdoc_expr_text(&doc, doc.root, &p, "b", true, buf, sizeof buf, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "expected an expression"), "%s", d.msg);

	double x = 0;
	cr_assert_eq(jdoc_number(&doc, doc.root, &p, "f", true, &x, &d), 0);
	cr_assert_float_eq(x, 2.5, 1e-12);
	cr_assert_eq(jdoc_number(&doc, doc.root, &p, "s", true, &x, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "at $.s: expected a number"), "%s", d.msg);
	cr_assert_str_eq(p.s, "$");
	jdoc_free(&doc);
}

/* --- variable types ----------------------------------------------------------- */

Test(kernel_loader, int_variables_make_narrow_statements)
{
	struct kernel k;
	load_ok(BODY("  {'op': 'let', 'var': 'a', 'type': 'int', 'value': 'tid'},\n"
		     "  {'op': 'let', 'var': 'b', 'value': 'a + 1'},\n"
		     "  {'op': 'for', 'var': 'j', 'type': 'int', 'from': 0, 'cond': 'j < a', 'body': [\n"
		     "    {'op': 'set', 'var': 'a', 'value': 'a - lane'}]},\n"
		     "  {'op': 'set', 'var': 'a', 'value': 'b'}"),
		&k);
	/* let a; let b; let j; brz j < a; set a; set j; jmp; set a = b */
	enum op want[] = {OP_LET, OP_LET, OP_LET, OP_BRZ, OP_SET, OP_SET, OP_JMP, OP_SET};
	bool narrow[] = {true, false, true, true, true, true, false, false};
	cr_assert_eq(k.ncode, 8);
	for (int i = 0; i < 8; i++) {
		cr_assert_eq(k.code[i].op, want[i], "insn %d", i);
		if (want[i] != OP_JMP)
			cr_assert_eq(k.code[i].narrow, narrow[i], "insn %d: an int statement reads and writes only ints", i);
	}
	kernel_free(&k);
}

Test(kernel_loader, variable_type_must_be_int_or_size_t)
{
	const char *text = BODY("  {'op': 'let', 'var': 'a', 'type': 'long', 'value': 1}");
	expect_error("type.json", text, "$.body[0].type", "'long'", "expected \"int\" or \"size_t\"");
	const char *set = BODY("  {'op': 'let', 'var': 'a', 'value': 1},\n"
			       "  {'op': 'set', 'var': 'a', 'type': 'int', 'value': 2}");
	expect_error("settype.json", set, "$.body[1].type", "'int', 'value': 2", "unknown field \"type\"");
}

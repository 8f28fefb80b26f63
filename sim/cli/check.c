/*
 * check: kernels and experiments loaded and validated without simulating,
 * what a user runs while writing a kernel.
 *
 * For each file it prints on stdout what it found — the kernel's source,
 * the machine and launch, the parameters and where each value came from,
 * every buffer with its bytes, the pipelines, barriers and helpers, and the
 * statements per op — then "ok" or how many errors there were.  Every error
 * goes to stderr as FILE:LINE:COL: at JSON.PATH: what was expected (the
 * loaders' own messages), the form editors jump to.  The kernel loader goes
 * on past an error to the next statement or declaration, so one run shows
 * them all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../isa/jdoc.h"
#include "../../isa/lower.h"
#include "cli.h"
#include "commands.h"
#include "experiment.h"
#include "runner.h"

#define MAX_FILES 256
#define MAX_SETS 256
#define MAX_OPS 64

enum file_kind { FILE_BAD, FILE_KERNEL, FILE_EXPERIMENT };

struct check_args {
	const char *files[MAX_FILES];
	int nfiles;
	struct setting sets[MAX_SETS];
	int nsets;
	bool names;   /* --names: only the names --set takes */
	bool lowered; /* --lowered: each op's instruction sequence as the timing core issues it */
};

/* What a file is, from its top-level fields; FILE_BAD (with the reason in errs) when it cannot be read. */
static enum file_kind kind_of(const char *file, struct diag_list *errs)
{
	struct jdoc doc;
	struct diag d;
	if (jdoc_load(file, &doc, &d)) {
		diag_list_add(errs, &d);
		return FILE_BAD;
	}
	enum file_kind k = FILE_KERNEL;
	/* A sweep or a comparison names an experiment too: look for them first. */
	bool sweep = cJSON_GetObjectItemCaseSensitive(doc.root, "sweep") != NULL;
	if (sweep || cJSON_GetObjectItemCaseSensitive(doc.root, "comparison")) {
		diag_set(&d, DIAG_INPUT,
			 "%s: a %s file; check takes kernel descriptions and experiments (smsim %s checks its own "
			 "file when it starts)",
			 file, sweep ? "sweep" : "comparison", sweep ? "sweep" : "compare");
		diag_list_add(errs, &d);
		k = FILE_BAD;
	} else if (cJSON_GetObjectItemCaseSensitive(doc.root, "experiment")) {
		k = FILE_EXPERIMENT;
	}
	jdoc_free(&doc);
	return k;
}

/* --- what was found ------------------------------------------------------- */

/* Counts the statements of a body (and the bodies inside it) per op, in order of first appearance. */
struct op_count {
	const char *op;
	int n;
};

static void count_ops(const cJSON *body, struct op_count *ops, int *nops, int *total)
{
	if (!cJSON_IsArray(body))
		return;
	for (const cJSON *st = body->child; st; st = st->next) {
		const cJSON *op = cJSON_GetObjectItemCaseSensitive(st, "op");
		if (!cJSON_IsString(op))
			continue;
		(*total)++;
		int i = 0;
		while (i < *nops && strcmp(ops[i].op, op->valuestring) != 0)
			i++;
		if (i == *nops && *nops < MAX_OPS)
			ops[(*nops)++] = (struct op_count){op->valuestring, 0};
		if (i < *nops)
			ops[i].n++;
		static const char *const inner[] = {"body", "then", "else"};
		for (size_t k = 0; k < 3; k++)
			count_ops(cJSON_GetObjectItemCaseSensitive(st, inner[k]), ops, nops, total);
	}
}

/* A number with thousands separated by commas, as the report's byte counts read best. */
static const char *grouped(unsigned long long v, char *buf, size_t n)
{
	char digits[32];
	int len = snprintf(digits, sizeof digits, "%llu", v);
	size_t o = 0;
	for (int i = 0; i < len && o + 2 < n; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/* The integer at key of object obj, when it is one. */
static bool int_field(const cJSON *obj, const char *key, long long *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsNumber(v))
		return false;
	*out = (long long)v->valuedouble;
	return true;
}

static void print_params(const struct experiment *e, const cJSON *kroot, const cJSON *eroot,
			 const struct check_args *a)
{
	const struct kernel *k = &e->kernel;
	const cJSON *defaults = kroot ? cJSON_GetObjectItemCaseSensitive(kroot, "params") : NULL;
	const cJSON *given = eroot ? cJSON_GetObjectItemCaseSensitive(eroot, "params") : NULL;
	printf("  %-11s", "params");
	if (!k->nparams)
		printf("none");
	for (int i = 0; i < k->nparams; i++) {
		const char *name = k->params[i].name;
		long long dflt = 0;
		bool has_dflt = int_field(defaults, name, &dflt), from_set = false;
		for (int s = 0; s < a->nsets; s++)
			from_set = from_set || strcmp(a->sets[s].name, name) == 0;
		const char *from = from_set ? "--set" : given && cJSON_GetObjectItemCaseSensitive(given, name) ? "experiment" : NULL;
		printf("%s%s = %lld", i ? ", " : "", name, (long long)k->params[i].value);
		if (from && has_dflt && dflt != k->params[i].value)
			printf(" (%s; default %lld)", from, dflt);
		else if (from)
			printf(" (%s)", from);
	}
	printf("\n");
}

static void print_buffers(const struct experiment *e)
{
	const struct kernel *k = &e->kernel;
	char b1[32], b2[32], b3[32];
	static const char *const space_name[] = {"shared", "global"};
	for (int sp = SPACE_SHARED; sp <= SPACE_GLOBAL; sp++) {
		int shown = 0;
		for (int i = 0; i < k->nbufs; i++) {
			const struct buffer *b = &k->bufs[i];
			if ((int)b->space != sp)
				continue;
			printf("  %-11s%-22s %14s x %2u B = %16s B\n", shown ? "" : space_name[sp], b->name,
			       grouped(b->elems, b1, sizeof b1), b->elem_bytes,
			       grouped(b->elems * b->elem_bytes, b2, sizeof b2));
			shown++;
		}
		if (!shown)
			printf("  %-11snone\n", space_name[sp]);
		else if (sp == SPACE_SHARED)
			printf("  %-11s%-46s %16s B per block (the machine allows %s)\n", "", "total, 128-byte aligned",
			       grouped(k->shared_bytes, b1, sizeof b1), grouped((unsigned long long)e->machine.smem_block_bytes, b3, sizeof b3));
		else
			printf("  %-11s%-46s %16s B\n", "", "total, 128-byte aligned", grouped(k->global_bytes, b1, sizeof b1));
	}
}

static void describe(const struct experiment *e, const char *exp_file, const struct check_args *a)
{
	const struct kernel *k = &e->kernel;
	struct jdoc kdoc = {0}, edoc = {0};
	bool has_k = e->kernel_file[0] && jdoc_load(e->kernel_file, &kdoc, NULL) == 0;
	bool has_e = exp_file && jdoc_load(exp_file, &edoc, NULL) == 0;
	if (has_e)
		printf("%s: experiment %s\n", exp_file, e->name[0] ? e->name : "?");
	if (e->kernel_file[0] && (k->name[0] || has_k))
		printf("%s%s: kernel %s\n", has_e ? "  kernel     " : "", e->kernel_file, k->name[0] ? k->name : "(unnamed)");
	else if (e->kernel_file[0])
		printf("%s%s: not loaded\n", has_e ? "  kernel     " : "", e->kernel_file);
	if (k->source[0])
		printf("  %-11s%s\n", "source", k->source);
	if (has_e)
		printf("  %-11s%s (%s)\n", "machine", e->machine_file, e->machine.name);
	else
		printf("  %-11sbuilt-in H100 defaults (no machine file)\n", "machine");
	printf("  %-11s%lld threads per block, %lld block%s on the SM, %lld in the grid%s\n", "launch",
	       (long long)e->launch.block_size, (long long)e->launch.blocks, e->launch.blocks == 1 ? "" : "s",
	       (long long)e->launch.grid_blocks, has_e ? "" : " (a kernel alone; --set block_size=N to change)");
	if (!has_k) {
		jdoc_free(&edoc);
		return;
	}
	print_params(e, kdoc.root, has_e ? edoc.root : NULL, a);
	print_buffers(e);
	printf("  %-11s", "pipelines");
	if (!k->npipes)
		printf("none");
	for (int i = 0; i < k->npipes; i++)
		printf("%s%s (%s scope, %u stage%s)", i ? ", " : "", k->pipes[i].name,
		       k->pipes[i].scope == PIPE_SCOPE_BLOCK ? "block" : "thread", k->pipes[i].stages,
		       k->pipes[i].stages == 1 ? "" : "s");
	printf("\n  %-11s", "barriers");
	if (!k->nbars)
		printf("none");
	for (int i = 0; i < k->nbars; i++)
		printf("%s%s[%u]", i ? ", " : "", k->bars[i].name, k->bars[i].count);
	printf("\n  %-11s", "helpers");
	const cJSON *helpers = cJSON_GetObjectItemCaseSensitive(kdoc.root, "helpers");
	int nh = 0;
	for (const cJSON *h = cJSON_IsObject(helpers) ? helpers->child : NULL; h; h = h->next) {
		printf("%s%s(", nh++ ? ", " : "", h->string);
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(h, "args");
		int na = 0;
		for (const cJSON *x = cJSON_IsArray(args) ? args->child : NULL; x; x = x->next)
			if (cJSON_IsString(x))
				printf("%s%s", na++ ? ", " : "", x->valuestring);
		printf(")");
	}
	if (!nh)
		printf("none");
	struct op_count ops[MAX_OPS];
	int nops = 0, total = 0;
	count_ops(cJSON_GetObjectItemCaseSensitive(kdoc.root, "body"), ops, &nops, &total);
	printf("\n  %-11s%d:", "statements", total);
	for (int i = 0; i < nops; i++)
		printf("%s %s %d", i ? "," : "", ops[i].op, ops[i].n);
	printf("\n");
	jdoc_free(&kdoc);
	jdoc_free(&edoc);
}

/*
 * --lowered: per op, the instruction classes it issues (isa/lower.c) with the
 * instructions each waits for, its anchor (*) and flags, after the loop-invariant
 * code motion, common subexpressions and set-up sharing the lowering does.
 */
static void print_lowered(const struct kernel *k)
{
	if (!k->lowered)
		return;
	printf("  lowered (op: class[deps]/stall per instruction; * the anchor, X reads the op's inputs, R a result,\n"
	       "           T a branch taken, P padding, L an LDL, C an LDC, A an arrive; /n ptxas's stall count,\n"
	       "           on the instructions taken from SASS)\n");
	int total = 0;
	for (int pc = 0; pc < k->ncode; pc++) {
		const struct lform *f = &k->lowered[pc];
		const struct insn *in = &k->code[pc];
		printf("    %3d %-24s %-28s %2d:", pc, f->name ? f->name : "?",
		       k->paths && k->paths[in->where] ? k->paths[in->where] : "", f->n);
		total += f->n;
		for (int i = 0; i < f->n; i++) {
			const struct linst *li = &f->code[i];
			printf(" %s%s", i == f->anchor ? "*" : "", iclass_name[li->cls]);
			static const struct {
				int flag;
				char c;
			} marks[] = {{LI_EXTERN, 'X'}, {LI_RESULT, 'R'}, {LI_TAKEN, 'T'}, {LI_PAD, 'P'},
				     {LI_LOCAL, 'L'}, {LI_LDC, 'C'}, {LI_ARRIVE, 'A'}};
			for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++)
				if (li->flags & marks[m].flag)
					putchar(marks[m].c);
			if (li->deps) {
				printf("[");
				int first = 1;
				for (uint64_t d = li->deps; d; d &= d - 1) {
					printf("%s%d", first ? "" : ",", __builtin_ctzll(d));
					first = 0;
				}
				printf("]");
			}
			if (li->stall)
				printf("/%u", li->stall);
		}
		printf("\n");
	}
	printf("  lowered total: %d instructions over %d ops (each op's per execution; a loop's repeat)\n", total, k->ncode);
}

/* --names: what --set takes for this kernel and experiment, one a line. */
static void print_names(const struct experiment *e)
{
	for (int i = 0; i < e->kernel.nparams; i++)
		printf("%s\n", e->kernel.params[i].name);
	cli_print_set_names(stdout, "\n");
}

/* Checks one kernel (with an experiment, or alone) or one experiment; returns how many errors it found. */
static int check_one(const char *exp_file, const char *kernel_file, const struct check_args *a)
{
	struct experiment *e = calloc(1, sizeof *e);
	struct diag_list errs = {0};
	if (!e) {
		fprintf(stderr, "smsim check: out of memory\n");
		return 1;
	}
	experiment_check(exp_file, kernel_file, a->sets, a->nsets, e, &errs);
	if (a->names) {
		print_names(e);
	} else {
		describe(e, exp_file, a);
		int n = errs.n + errs.more;
		if (a->lowered && !n)
			print_lowered(&e->kernel);
		if (n)
			printf("  %d error%s (on stderr)\n\n", n, n == 1 ? "" : "s");
		else
			printf("  ok\n\n");
	}
	fflush(stdout);
	for (int i = 0; i < errs.n; i++)
		fprintf(stderr, "%s\n", errs.items[i].msg);
	if (errs.more)
		fprintf(stderr, "(and %d more errors)\n", errs.more);
	int n = errs.n + errs.more;
	diag_list_free(&errs);
	experiment_free(e);
	free(e);
	return n;
}

static int parse_args(int argc, char **argv, struct check_args *a)
{
	for (int i = 0; i < argc; i++) {
		const char *v = NULL;
		int got;
		if (strcmp(argv[i], "--lowered") == 0) {
			a->lowered = true;
			continue;
		}
		if (strcmp(argv[i], "--names") == 0) {
			a->names = true;
		} else if ((got = cli_value(argc, argv, &i, "check", "--set", &v))) {
			if (got < 0)
				return 2;
			if (a->nsets == MAX_SETS || !runner_split_setting((char *)v, &a->sets[a->nsets++])) {
				fprintf(stderr, "smsim check: --set expects NAME=VALUE (at most %d)\n", MAX_SETS);
				return 2;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_unknown_option("check", argv[i]);
		} else if (a->nfiles == MAX_FILES) {
			fprintf(stderr, "smsim check: at most %d files at a time\n", MAX_FILES);
			return 2;
		} else {
			a->files[a->nfiles++] = argv[i];
		}
	}
	if (!a->nfiles) {
		fprintf(stderr, "smsim check: which file? (smsim check KERNEL.json [EXPERIMENT.json])\n");
		return 2;
	}
	return 0;
}

int cmd_check(int argc, char **argv, const char *self)
{
	(void)self;
	struct check_args *a = calloc(1, sizeof *a);
	if (!a) {
		fprintf(stderr, "smsim check: out of memory\n");
		return 4;
	}
	int rc = parse_args(argc, argv, a);
	if (rc) {
		free(a);
		return rc;
	}
	enum file_kind kinds[MAX_FILES];
	int experiments = 0, kernels = 0, errors = 0;
	const char *experiment = NULL;
	for (int i = 0; i < a->nfiles; i++) {
		struct diag_list errs = {0};
		kinds[i] = kind_of(a->files[i], &errs);
		if (kinds[i] == FILE_EXPERIMENT && !experiments++)
			experiment = a->files[i];
		kernels += kinds[i] == FILE_KERNEL;
		if (kinds[i] == FILE_BAD && !a->names) {
			printf("%s\n  %d error (on stderr)\n\n", a->files[i], errs.n + errs.more);
			fflush(stdout);
		}
		for (int k = 0; k < errs.n; k++)
			fprintf(stderr, "%s\n", errs.items[k].msg);
		errors += errs.n + errs.more;
		diag_list_free(&errs);
	}
	/* One experiment with kernels: each kernel under the experiment's machine, launch and parameters. */
	bool pair = experiments == 1 && kernels >= 1;
	for (int i = 0; i < a->nfiles; i++) {
		if (kinds[i] == FILE_KERNEL)
			errors += check_one(pair ? experiment : NULL, a->files[i], a);
		else if (kinds[i] == FILE_EXPERIMENT && !pair)
			errors += check_one(a->files[i], NULL, a);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "smsim: error writing to stdout\n");
		errors++;
	}
	free(a);
	return errors ? 2 : 0;
}

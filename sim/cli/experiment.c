#include "experiment.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../isa/jdoc.h"
#include "../../isa/suggest.h"

/* dir of file + rel, unless rel is absolute. */
static void resolve(const char *file, const char *rel, char *out, size_t outsz)
{
	if (rel[0] == '/') {
		snprintf(out, outsz, "%s", rel);
		return;
	}
	const char *slash = strrchr(file, '/');
	if (!slash)
		snprintf(out, outsz, "%s", rel);
	else
		snprintf(out, outsz, "%.*s/%s", (int)(slash - file), file, rel);
}

/*
 * A --set or --vary value: decimal digits with an optional sign, nothing
 * around them.  strtoll's base 0 read "010" as 8 and "0x10" as 16, and its
 * leading spaces were taken where trailing ones were not.
 */
static int parse_int(const char *text, int64_t *out)
{
	const char *digits = text + (*text == '-' || *text == '+');
	if (!isdigit((unsigned char)*digits))
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (*end || errno)
		return -1;
	*out = v;
	return 0;
}

/* from: where the value comes from for messages ("--set stages=0"), "" for the experiment's params. */
static int set_param(struct experiment *e, const char *name, int64_t value, const char *from)
{
	for (int i = 0; i < e->nparams; i++)
		if (strcmp(e->params[i].name, name) == 0) {
			e->params[i].value = value;
			snprintf(e->params[i].from, sizeof e->params[i].from, "%s", from);
			return 0;
		}
	if (e->nparams >= EXP_MAX_PARAMS || strlen(name) >= sizeof e->params[0].name)
		return -1;
	struct param_override *p = &e->params[e->nparams++];
	snprintf(p->name, sizeof p->name, "%s", name);
	p->value = value;
	p->used = false;
	snprintf(p->from, sizeof p->from, "%s", from);
	return 0;
}

static int64_t *launch_field(struct experiment *e, const char *name)
{
	if (strcmp(name, "block_size") == 0)
		return &e->launch.block_size;
	if (strcmp(name, "blocks") == 0)
		return &e->launch.blocks;
	if (strcmp(name, "grid_blocks") == 0)
		return &e->launch.grid_blocks;
	return NULL;
}

/* The limits by name, as the "limits" object and --set limit.NAME spell them. */
static const char *const limit_names[] = {"cycles", "events", "threads", "loop_iterations", "memory", NULL};

static uint64_t *limit_field(struct sim_limits *l, const char *name)
{
	uint64_t *fields[] = {&l->max_cycles, &l->max_events, &l->max_threads, &l->max_loop_iterations,
			      &l->max_memory};
	for (size_t i = 0; limit_names[i]; i++)
		if (strcmp(name, limit_names[i]) == 0)
			return fields[i];
	return NULL;
}

/* A limit's value: a positive integer, in JSON's 1e9 form too (below 2^63, so the cast is defined). */
static bool limit_value(double x, uint64_t *out)
{
	if (!jdoc_is_integer(x, 1, 9e18))
		return false;
	*out = (uint64_t)x;
	return true;
}

/*
 * without_machine_set: the experiment runs on its machine as the machine
 * file has it (--set machine_set=none; validate, whose rows are that
 * machine's measurements), its "machine_set" what-ifs left out.
 */
static int load_file(const char *file, bool without_machine_set, struct experiment *e, struct diag *d)
{
	struct jdoc doc;
	int rc = jdoc_load(file, &doc, d);
	if (rc)
		return rc;
	struct jpath at;
	jpath_root(&at);
	static const char *const keys[] = {"experiment", "description", "machine", "machine_set", "kernel",
					   "params",     "launch",      "limits",  "comment",     NULL};
	const char *name = NULL, *desc = NULL, *machine = NULL, *kernel = NULL;
	if ((rc = jdoc_check_keys(&doc, doc.root, &at, keys, d)) ||
	    (rc = jdoc_string(&doc, doc.root, &at, "experiment", true, &name, d)) ||
	    (rc = jdoc_string(&doc, doc.root, &at, "description", false, &desc, d)) ||
	    (rc = jdoc_string(&doc, doc.root, &at, "machine", true, &machine, d)) ||
	    (rc = jdoc_string(&doc, doc.root, &at, "kernel", true, &kernel, d)))
		goto out;
	snprintf(e->name, sizeof e->name, "%s", name);
	resolve(file, machine, e->machine_file, sizeof e->machine_file);
	resolve(file, kernel, e->kernel_file, sizeof e->kernel_file);
	if ((rc = machine_load(e->machine_file, &e->machine, d)))
		goto out;

	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(doc.root, "machine_set");
	if (ms && !without_machine_set) {
		size_t old = jpath_key(&at, "machine_set");
		if (!cJSON_IsObject(ms)) {
			rc = jdoc_error(&doc, &at, d, "expected an object of machine fields and values");
			goto out;
		}
		for (const cJSON *f = ms->child; f; f = f->next) {
			size_t o2 = jpath_key(&at, f->string);
			char value[64];
			if (cJSON_IsNumber(f))
				snprintf(value, sizeof value, "%.17g", f->valuedouble);
			else if (cJSON_IsString(f))
				snprintf(value, sizeof value, "%s", f->valuestring);
			else
				value[0] = '\0';
			struct diag sd;
			if (machine_set(&e->machine, f->string, value, &sd)) {
				rc = jdoc_error(&doc, &at, d, "%s", sd.msg);
				goto out;
			}
			jpath_pop(&at, o2);
		}
		jpath_pop(&at, old);
	}

	const cJSON *launch = cJSON_GetObjectItemCaseSensitive(doc.root, "launch");
	size_t old = jpath_key(&at, "launch");
	static const char *const lkeys[] = {"block_size", "blocks", "grid_blocks", "comment", NULL};
	if (!launch) {
		jpath_pop(&at, old);
		rc = jdoc_error(&doc, &at, d, "missing required field \"launch\" ({\"block_size\", \"blocks\"})");
		goto out;
	}
	if ((rc = jdoc_check_keys(&doc, launch, &at, lkeys, d)))
		goto out;
	for (const cJSON *f = launch->child; f; f = f->next) {
		if (strcmp(f->string, "comment") == 0)
			continue;
		size_t o2 = jpath_key(&at, f->string);
		if (!cJSON_IsNumber(f) || !jdoc_is_integer(f->valuedouble, 1, 1e9)) {
			rc = jdoc_error(&doc, &at, d, "expected a positive integer");
			goto out;
		}
		*launch_field(e, f->string) = (int64_t)f->valuedouble;
		jpath_pop(&at, o2);
	}
	jpath_pop(&at, old);

	const cJSON *limits = cJSON_GetObjectItemCaseSensitive(doc.root, "limits");
	if (limits) {
		old = jpath_key(&at, "limits");
		if ((rc = jdoc_check_keys(&doc, limits, &at, limit_names, d)))
			goto out;
		for (const cJSON *f = limits->child; f; f = f->next) {
			size_t o2 = jpath_key(&at, f->string);
			if (!cJSON_IsNumber(f) || !limit_value(f->valuedouble, limit_field(&e->limits, f->string))) {
				rc = jdoc_error(&doc, &at, d, "expected a positive integer (at most 9e18)");
				goto out;
			}
			jpath_pop(&at, o2);
		}
		jpath_pop(&at, old);
	}

	const cJSON *params = cJSON_GetObjectItemCaseSensitive(doc.root, "params");
	if (params) {
		old = jpath_key(&at, "params");
		if (!cJSON_IsObject(params)) {
			rc = jdoc_error(&doc, &at, d, "expected an object of parameter values");
			goto out;
		}
		for (const cJSON *f = params->child; f; f = f->next) {
			size_t o2 = jpath_key(&at, f->string);
			if (!cJSON_IsNumber(f) || !jdoc_is_integer(f->valuedouble, -9e15, 9e15)) {
				rc = jdoc_error(&doc, &at, d, "expected an integer");
				goto out;
			}
			if (set_param(e, f->string, (int64_t)f->valuedouble, "")) {
				rc = jdoc_error(&doc, &at, d, "too many parameters or name too long");
				goto out;
			}
			jpath_pop(&at, o2);
		}
		jpath_pop(&at, old);
	}
out:
	jdoc_free(&doc);
	return rc;
}

static int apply_setting(struct experiment *e, const struct setting *st, struct diag *d)
{
	const char *name = st->name;
	if (strncmp(name, "machine.", 8) == 0)
		return machine_set(&e->machine, name + 8, st->value, d);
	int64_t v;
	if (strncmp(name, "limit.", 6) == 0) {
		uint64_t *lf = limit_field(&e->limits, name + 6);
		if (!lf) {
			const char *hint = suggest_name(name + 6, limit_names);
			if (hint)
				return diag_set(d, DIAG_INPUT, "--set %s: unknown limit; did you mean limit.%s?", name, hint);
			return diag_set(d, DIAG_INPUT,
					"--set %s: unknown limit; expected limit.cycles, limit.events, limit.threads, "
					"limit.loop_iterations or limit.memory",
					name);
		}
		char *end;
		errno = 0;
		double x = strtod(st->value, &end);
		if (parse_int(st->value, &v) == 0 && v >= 1)
			*lf = (uint64_t)v;
		else if (!*st->value || *end || errno || !limit_value(x, lf))
			return diag_set(d, DIAG_INPUT, "--set %s=%s: expected a positive integer (at most 9e18)", name,
					st->value);
		return 0;
	}
	if (strcmp(name, "machine_set") == 0)
		return strcmp(st->value, "none") == 0
			       ? 0
			       : diag_set(d, DIAG_INPUT,
					  "--set machine_set=%s: expected none (run on the machine file as it is, without "
					  "the experiment's machine_set)",
					  st->value);
	if (strcmp(name, "check.dataflow") == 0) {
		if (strcmp(st->value, "0") && strcmp(st->value, "1"))
			return diag_set(d, DIAG_INPUT, "--set check.dataflow=%s: expected 0 or 1", st->value);
		e->limits.no_checks = st->value[0] == '0';
		return 0;
	}
	if (strncmp(name, "launch.", 7) == 0)
		name += 7;
	if (parse_int(st->value, &v))
		return diag_set(d, DIAG_INPUT, "--set %s=%s: expected a decimal integer", st->name, st->value);
	int64_t *lf = launch_field(e, name);
	if (lf) {
		if (v < 1)
			return diag_set(d, DIAG_INPUT, "--set %s=%s: expected a positive integer", st->name, st->value);
		*lf = v;
		snprintf(e->launch_from, sizeof e->launch_from, "--set %.40s=%.40s", st->name, st->value);
		return 0;
	}
	char from[96];
	snprintf(from, sizeof from, "--set %.40s=%.40s", st->name, st->value);
	if (set_param(e, name, v, from))
		return diag_set(d, DIAG_INPUT, "--set %s: too many parameters or name too long", st->name);
	return 0;
}

/*
 * An error found while putting an experiment together: a load stops there
 * (returns rc), a check (errs) records it and goes on (returns 0).
 */
static int found(struct diag_list *errs, const struct diag *d, int rc)
{
	if (!errs || rc != DIAG_INPUT)
		return rc;
	diag_list_add(errs, d);
	return 0;
}

/* The launch check's message, pointed at the --set that changed the launch, else at the experiment's launch. */
static int launch_error(const char *file, const char *launch_from, const struct diag *ld, struct diag *d)
{
	if (launch_from[0])
		return diag_set(d, DIAG_INPUT, "%s: %s", launch_from, ld->msg);
	struct jdoc doc;
	struct jpath at;
	jpath_root(&at);
	jpath_key(&at, "launch");
	if (file && jdoc_load(file, &doc, NULL) == 0) {
		int rc = jdoc_error(&doc, &at, d, "%s", ld->msg);
		jdoc_free(&doc);
		return rc;
	}
	return diag_set(d, DIAG_INPUT, "%s%s%s", file ? file : "", file ? ": " : "", ld->msg);
}

static int unused_param(const struct experiment *e, const struct param_override *p, struct diag *d)
{
	const char *names[EXP_MAX_PARAMS + 8];
	int n = 0;
	for (int j = 0; j < e->kernel.nparams && n < EXP_MAX_PARAMS; j++)
		names[n++] = e->kernel.params[j].name;
	names[n++] = "block_size";
	names[n++] = "blocks";
	names[n++] = "grid_blocks";
	names[n] = NULL;
	const char *where = e->file[0] ? e->file : "--set";
	const char *hint = suggest_name(p->name, names);
	if (hint)
		return diag_set(d, DIAG_INPUT, "%s: kernel %s has no parameter \"%s\"; did you mean \"%s\"?", where,
				e->kernel.name, p->name, hint);
	return diag_set(d, DIAG_INPUT, "%s: kernel %s has no parameter \"%s\"", where, e->kernel.name, p->name);
}

/*
 * experiment_load and experiment_check: file may be NULL (a kernel alone),
 * kernel_file NULL (the experiment's own), errs NULL (stop at the first
 * error, in d).
 */
static int assemble(const char *file, const char *kernel_file, const struct setting *sets, int nsets,
		    struct experiment *e, struct diag *d, struct diag_list *errs, const char *machine_file)
{
	*e = (struct experiment){0};
	e->limits = sim_default_limits();
	machine_defaults(&e->machine);
	int rc = 0;
	if (file) {
		snprintf(e->file, sizeof e->file, "%s", file);
		bool without_machine_set = false;
		for (int i = 0; i < nsets; i++)
			without_machine_set |= strcmp(sets[i].name, "machine_set") == 0 && strcmp(sets[i].value, "none") == 0;
		if ((rc = found(errs, d, load_file(file, without_machine_set, e, d))))
			return rc;
	} else {
		/* A kernel alone: one block of the documented examples' 256 threads. */
		e->launch.block_size = EXP_DEFAULT_BLOCK_SIZE;
		if (machine_file) {
			if ((rc = machine_load(machine_file, &e->machine, d)))
				return rc;
			snprintf(e->machine_file, sizeof e->machine_file, "%s", machine_file);
		}
	}
	if (kernel_file)
		snprintf(e->kernel_file, sizeof e->kernel_file, "%s", kernel_file);
	for (int i = 0; i < nsets; i++)
		if ((rc = found(errs, d, apply_setting(e, &sets[i], d))))
			return rc;
	if (e->launch.block_size == 0) {
		if ((rc = found(errs, d, diag_set(d, DIAG_INPUT, "%s: launch.block_size is required", file))))
			return rc;
		e->launch.block_size = EXP_DEFAULT_BLOCK_SIZE;
	}
	if (e->launch.blocks == 0)
		e->launch.blocks = 1;
	if (e->launch.grid_blocks == 0)
		e->launch.grid_blocks = e->launch.blocks;
	if (e->launch.grid_blocks < e->launch.blocks) {
		rc = diag_set(d, DIAG_INPUT, "%s: launch.grid_blocks (%lld) is less than the resident blocks (%lld)",
			      e->launch_from[0] ? e->launch_from : file ? file : "--set", (long long)e->launch.grid_blocks, (long long)e->launch.blocks);
		if ((rc = found(errs, d, rc)))
			return rc;
		e->launch.grid_blocks = e->launch.blocks;
	}
	/* Before the kernel compiles: a runaway grid_size would otherwise surface as a buffer size error. */
	if ((rc = sim_check_threads(&e->launch, &e->limits, d)))
		return found(errs, d, rc) ? rc : DIAG_INPUT;
	/* The launch against the machine first (block size, resident blocks, warps): the kernel's sizes come after. */
	struct kernel none = {0};
	struct diag ld;
	bool launch_bad = sim_check_launch(&none, &e->machine, &e->launch, &ld) != 0;
	if (launch_bad && (rc = found(errs, d, launch_error(file, e->launch_from, &ld, d))))
		return rc;
	if (!e->kernel_file[0])
		return errs ? DIAG_INPUT : diag_set(d, DIAG_INPUT, "%s: no kernel to load", file ? file : "");
	if (errs) {
		int before = errs->n + errs->more;
		if ((rc = kernel_check(e->kernel_file, e->params, e->nparams, &e->launch, &e->kernel, errs)) &&
		    rc != DIAG_INPUT)
			return rc;
		if (errs->n + errs->more > before)
			return DIAG_INPUT; /* the launch and parameter checks need a whole kernel */
	} else if ((rc = kernel_load(e->kernel_file, e->params, e->nparams, &e->launch, &e->kernel, d))) {
		return rc;
	}
	if (!launch_bad && sim_check_launch(&e->kernel, &e->machine, &e->launch, &ld) &&
	    (rc = found(errs, d, launch_error(file, e->launch_from, &ld, d))))
		return rc;
	for (int i = 0; i < e->nparams; i++)
		if (!e->params[i].used && (rc = found(errs, d, unused_param(e, &e->params[i], d))))
			return rc;
	return 0;
}

int experiment_load(const char *file, const struct setting *sets, int nsets, struct experiment *e, struct diag *d)
{
	return assemble(file, NULL, sets, nsets, e, d, NULL, NULL);
}

/* What a JSON file that is not an experiment or a kernel is, for the message; NULL: one of those. */
static const char *other_kind(const cJSON *root)
{
	if (!cJSON_IsObject(root) || cJSON_GetObjectItemCaseSensitive(root, "experiment") || cJSON_GetObjectItemCaseSensitive(root, "body"))
		return NULL;
	if (cJSON_GetObjectItemCaseSensitive(root, "comparison"))
		return "a comparison file (smsim compare runs it)";
	if (cJSON_GetObjectItemCaseSensitive(root, "sweep"))
		return "a sweep file (smsim sweep runs it)";
	if (cJSON_GetObjectItemCaseSensitive(root, "fields") && cJSON_GetObjectItemCaseSensitive(root, "machine"))
		return "a machine config (an experiment names it in \"machine\")";
	return NULL; /* neither: let the experiment loader say what is wrong with it */
}

int experiment_open(const char *file, const struct setting *sets, int nsets, struct experiment *e, struct diag *d)
{
	struct jdoc doc;
	int rc = jdoc_load(file, &doc, d);
	if (rc)
		return rc;
	const char *other = other_kind(doc.root);
	bool kernel = cJSON_IsObject(doc.root) && !cJSON_GetObjectItemCaseSensitive(doc.root, "experiment") &&
		      cJSON_GetObjectItemCaseSensitive(doc.root, "body");
	jdoc_free(&doc);
	if (other) {
		*e = (struct experiment){0};
		return diag_set(d, DIAG_INPUT,
				"%s is %s; this command takes an experiment (configs/experiments/*.json) or a kernel "
				"file (kernels/*.json)",
				file, other);
	}
	if (!kernel)
		return experiment_load(file, sets, nsets, e, d);
	/* The checkout's machine beside the kernels (kernels/ and configs/ are siblings), else the built-in one. */
	char machine[1200];
	const char *slash = strrchr(file, '/');
	snprintf(machine, sizeof machine, "%.*s%s../" EXP_DEFAULT_MACHINE, slash ? (int)(slash - file) : 0, file,
		 slash ? "/" : "");
	FILE *probe = fopen(machine, "r");
	if (probe)
		fclose(probe);
	rc = assemble(NULL, file, sets, nsets, e, d, NULL, probe ? machine : NULL);
	e->kernel_alone = true;
	const char *base = slash ? slash + 1 : file;
	size_t len = strlen(base);
	if (len > 5 && !strcmp(base + len - 5, ".json"))
		len -= 5;
	snprintf(e->name, sizeof e->name, "%.*s", (int)(len < 63 ? len : 63), base);
	snprintf(e->file, sizeof e->file, "%s", file);
	return rc;
}

int experiment_check(const char *file, const char *kernel_file, const struct setting *sets, int nsets,
		     struct experiment *e, struct diag_list *errs)
{
	struct diag d = {0};
	int before = errs->n + errs->more;
	int rc = assemble(file, kernel_file, sets, nsets, e, &d, errs, NULL);
	if (rc && errs->n + errs->more == before)
		diag_list_add(errs, &d); /* what stopped it and was not recorded yet */
	return rc ? rc : errs->n + errs->more > before ? DIAG_INPUT : 0;
}

void experiment_free(struct experiment *e)
{
	if (!e)
		return;
	kernel_free(&e->kernel);
}

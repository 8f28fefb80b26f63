#include "machine.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../isa/jdoc.h"
#include "../../isa/suggest.h"

void machine_defaults(struct machine *m)
{
	*m = (struct machine){0};
	snprintf(m->name, sizeof m->name, "default");
#define MACHINE_DEFAULT(n, t, d, lo, hi, u) m->n = d;
	MACHINE_FIELDS(MACHINE_DEFAULT)
#undef MACHINE_DEFAULT
	m->scheduler = SCHED_GTO;
	m->reconverge = RECONVERGE_CONVERGENCE_BARRIER;
	m->quit = QUIT_LIBCUDACXX; /* what CUDA 13's libcu++ does (issue 15) */
}

const char *machine_reconverge_name(enum reconverge r)
{
	switch (r) {
	case RECONVERGE_SIMT_STACK: return "simt_stack";
	case RECONVERGE_INDEPENDENT: return "independent";
	default: return "convergence_barrier";
	}
}

const char *machine_quit_name(enum quit_model q) { return q == QUIT_LIBCUDACXX ? "libcudacxx" : "guide"; }

const char *machine_scheduler_name(enum sched_policy p)
{
	switch (p) {
	case SCHED_LRR: return "lrr";
	case SCHED_GTO_LRI: return "gto_lri";
	default: return "gto";
	}
}

static const char *const field_names[] = {
#define MACHINE_NAME(n, t, d, lo, hi, u) #n,
	MACHINE_FIELDS(MACHINE_NAME)
#undef MACHINE_NAME
	"scheduler", "reconverge", "quit", NULL};

/*
 * The fields whose values are words, not numbers: word i is enum value i.
 * An alias is a former name that still loads: "post_dominator" named the
 * reconvergence point before the model let a blocked path's siblings run,
 * and it still means paths rejoin there (convergence_barrier).
 */
struct word_field {
	const char *name;
	const char *words[4];
	const char *alias;
	int alias_value;
	size_t offset;
};

static const struct word_field word_fields[] = {
	{"scheduler", {"gto", "lrr", "gto_lri", NULL}, NULL, 0, offsetof(struct machine, scheduler)},
	{"reconverge", {"convergence_barrier", "simt_stack", "independent", NULL}, "post_dominator",
	 RECONVERGE_CONVERGENCE_BARRIER, offsetof(struct machine, reconverge)},
	{"quit", {"guide", "libcudacxx", NULL}, NULL, 0, offsetof(struct machine, quit)},
};

/* "expected \"a\" or \"b\"" / "expected \"a\", \"b\" or \"c\"": the field's words, for a refusal. */
static const char *word_choices(const struct word_field *f, char *buf, size_t bufsz)
{
	int n = 0;
	while (f->words[n])
		n++;
	size_t len = (size_t)snprintf(buf, bufsz, "expected");
	for (int i = 0; i < n && len < bufsz; i++)
		len += (size_t)snprintf(buf + len, bufsz - len, "%s\"%s\"", i == 0 ? " " : i == n - 1 ? " or " : ", ",
					f->words[i]);
	return buf;
}

static const struct word_field *word_field(const char *name)
{
	for (size_t i = 0; i < sizeof word_fields / sizeof word_fields[0]; i++)
		if (strcmp(word_fields[i].name, name) == 0)
			return &word_fields[i];
	return NULL;
}

/* Sets a word field; -1 when the word is not one of its choices. */
static int set_word(struct machine *m, const struct word_field *f, const char *v)
{
	int value = -1;
	for (int i = 0; f->words[i]; i++)
		if (strcmp(f->words[i], v) == 0)
			value = i;
	if (value < 0 && f->alias && strcmp(f->alias, v) == 0)
		value = f->alias_value;
	if (value < 0)
		return -1;
	memcpy((char *)m + f->offset, &value, sizeof value);
	return 0;
}

/* Stores x into field name after checking type and range; msg explains a refusal. */
static int store(struct machine *m, const char *name, double x, char *msg, size_t msgsz)
{
	/* a sector, two or a line: the blocks a miss's fetch can cover in a 128-byte line of 32-byte sectors */
	if (strcmp(name, "l2_fetch_bytes") == 0 && x != 32 && x != 64 && x != 128) {
		snprintf(msg, msgsz, "l2_fetch_bytes = %g: expected 32, 64 or 128 (a sector, two, or the line)", x);
		return -1;
	}
#define MACHINE_STORE_I(n, lo, hi)                                                                        \
	if (x != floor(x)) {                                                                              \
		snprintf(msg, msgsz, "expected an integer for %s, got %g", #n, x);                        \
		return -1;                                                                                \
	}                                                                                                 \
	m->n = (int64_t)x;
#define MACHINE_STORE_F(n, lo, hi) m->n = x;
#define MACHINE_STORE(n, t, d, lo, hi, u)                                                                 \
	if (strcmp(name, #n) == 0) {                                                                      \
		if (!(x >= (lo) && x <= (hi))) {                                                          \
			snprintf(msg, msgsz, "%s = %g is outside %g..%g (%s)", #n, x, (double)(lo), (double)(hi), u); \
			return -1;                                                                        \
		}                                                                                         \
		MACHINE_STORE_##t(n, lo, hi) return 0;                                                    \
	}
	MACHINE_FIELDS(MACHINE_STORE)
#undef MACHINE_STORE
#undef MACHINE_STORE_I
#undef MACHINE_STORE_F
	const char *hint = suggest_name(name, field_names);
	if (hint)
		snprintf(msg, msgsz, "unknown machine field \"%s\"; did you mean \"%s\"?", name, hint);
	else
		snprintf(msg, msgsz, "unknown machine field \"%s\"", name);
	return -1;
}

int machine_set(struct machine *m, const char *name, const char *value, struct diag *d)
{
	const struct word_field *wf = word_field(name);
	if (wf) {
		char choices[160];
		if (set_word(m, wf, value))
			return diag_set(d, DIAG_INPUT, "--set machine.%s=%s: %s", name, value,
					word_choices(wf, choices, sizeof choices));
		return 0;
	}
	char *end;
	errno = 0;
	double x = strtod(value, &end);
	char msg[256];
	if (!*value || *end || errno || !isfinite(x)) {
		if (store(m, name, 0, msg, sizeof msg) && strstr(msg, "unknown"))
			return diag_set(d, DIAG_INPUT, "--set machine.%s: %s", name, msg);
		return diag_set(d, DIAG_INPUT, "--set machine.%s=%s: expected a number", name, value);
	}
	struct machine probe = *m;
	if (store(&probe, name, x, msg, sizeof msg))
		return diag_set(d, DIAG_INPUT, "--set machine.%s=%s: %s", name, value, msg);
	*m = probe;
	return 0;
}

int machine_load(const char *file, struct machine *m, struct diag *d)
{
	struct jdoc doc;
	int rc = jdoc_load(file, &doc, d);
	if (rc)
		return rc;
	struct jpath at;
	jpath_root(&at);
	machine_defaults(m);
	static const char *const keys[] = {"machine", "description", "fields", "comment", NULL};
	const char *name = NULL;
	const cJSON *fields;
	if ((rc = jdoc_check_keys(&doc, doc.root, &at, keys, d)) ||
	    (rc = jdoc_string(&doc, doc.root, &at, "machine", true, &name, d)))
		goto out;
	snprintf(m->name, sizeof m->name, "%s", name);
	fields = cJSON_GetObjectItemCaseSensitive(doc.root, "fields");
	size_t old = jpath_key(&at, "fields");
	if (!cJSON_IsObject(fields)) {
		rc = jdoc_error(&doc, &at, d, "expected an object of fields, each {\"value\", \"unit\", \"source\"}");
		goto out;
	}
	if ((rc = jdoc_check_keys(&doc, fields, &at, field_names, d)))
		goto out;
	for (const cJSON *f = fields->child; f; f = f->next) {
		size_t o2 = jpath_key(&at, f->string);
		static const char *const fkeys[] = {"value", "unit", "source", NULL};
		const char *unit = NULL, *source = NULL;
		if ((rc = jdoc_check_keys(&doc, f, &at, fkeys, d)) ||
		    (rc = jdoc_string(&doc, f, &at, "source", true, &source, d)))
			goto out;
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, "value");
		size_t o3 = jpath_key(&at, "value");
		const struct word_field *wf = word_field(f->string);
		if (wf) {
			if (!cJSON_IsString(v) || set_word(m, wf, v->valuestring)) {
				char choices[160];
				rc = jdoc_error(&doc, &at, d, "%s", word_choices(wf, choices, sizeof choices));
				goto out;
			}
		} else {
			jpath_pop(&at, o3);
			if ((rc = jdoc_string(&doc, f, &at, "unit", true, &unit, d)))
				goto out;
			jpath_key(&at, "value");
			char msg[256];
			if (!cJSON_IsNumber(v)) {
				rc = jdoc_error(&doc, &at, d, "expected a number");
				goto out;
			}
			if (store(m, f->string, v->valuedouble, msg, sizeof msg)) {
				rc = jdoc_error(&doc, &at, d, "%s", msg);
				goto out;
			}
		}
		jpath_pop(&at, o2);
	}
	jpath_pop(&at, old);
	if (m->smem_block_bytes > m->smem_bytes)
		rc = jdoc_error(&doc, &at, d, "smem_block_bytes (%lld) exceeds smem_bytes (%lld)",
				(long long)m->smem_block_bytes, (long long)m->smem_bytes);
out:
	jdoc_free(&doc);
	return rc;
}

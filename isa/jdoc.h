/*
 * jdoc: a JSON document that can say where things are.
 *
 * cJSON parses the text but keeps no positions, so a jdoc keeps the text
 * beside the tree and, only when something is wrong, walks the text along
 * the JSON path of the offending value to turn it into line:column.
 * Every message reads "FILE:LINE:COL: at $.json.path: what was expected".
 */
#ifndef SMSIM_JDOC_H
#define SMSIM_JDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "diag.h"

struct jdoc {
	char *file;  /* as given by the user, for messages */
	char *text;  /* the whole file, NUL-terminated */
	cJSON *root; /* owned */
};

/* A JSON path under construction: "$.body[3].then". */
struct jpath {
	char s[512];
	size_t len;
};

/*
 * The most bytes read of one input file: kernels, machines and the CSVs smsim
 * reads are kilobytes to a few megabytes, and a device such as /dev/zero never
 * ends.  jdoc_read_file returns NULL with errno EFBIG beyond it.
 */
#define JDOC_MAX_BYTES ((size_t)64 << 20)

/* Reads a whole file, NUL-terminated (caller frees); NULL (errno set) when it cannot, or when it is larger than JDOC_MAX_BYTES. */
char *jdoc_read_file(const char *file, size_t *len);

/* Reads and parses a file; on failure d says where the syntax broke. */
int jdoc_load(const char *file, struct jdoc *doc, struct diag *d);
/* Parses text already in memory (tests, --set values); file names it. */
int jdoc_parse(const char *file, const char *text, struct jdoc *doc, struct diag *d);
void jdoc_free(struct jdoc *doc);

/* Reports an error at a JSON path; returns DIAG_INPUT. */
int jdoc_error(const struct jdoc *doc, const struct jpath *at, struct diag *d, const char *fmt, ...)
	DIAG_PRINTF(4, 5);

/* 1-based line and column of the value at a path (0,0 when not found). */
void jdoc_locate(const struct jdoc *doc, const char *path, int *line, int *col);

/*
 * What jdoc_locate gives, from where the locator's last path led: a loader
 * locates every statement in document order, each path sharing most of its
 * components with the one before, and scanning the text from its start for
 * each made the GEMM kernel's load cost 2.6 M host instructions (a sweep pays
 * it every run).  A zeroed locator is empty; one that is given another
 * document forgets the last.
 */
#define JDOC_LOCATOR_DEPTH 32
struct jdoc_step {
	bool is_key;
	size_t key_at, key_len; /* the key's characters in path */
	long index;
	size_t at; /* in the text: where the component's value starts */
};
struct jdoc_locator {
	const struct jdoc *doc;
	char path[512]; /* the last path located */
	int depth;      /* how many of its components were found (at most JDOC_LOCATOR_DEPTH kept) */
	struct jdoc_step steps[JDOC_LOCATOR_DEPTH];
	size_t counted; /* a text offset whose line and column are below */
	int line, col;
};
void jdoc_locate_near(struct jdoc_locator *loc, const struct jdoc *doc, const char *path, int *line, int *col);

void jpath_root(struct jpath *p);
/* Push a ".key" or "[i]" component; returns the length to pop back to. */
size_t jpath_key(struct jpath *p, const char *key);
size_t jpath_index(struct jpath *p, int index);
void jpath_pop(struct jpath *p, size_t len);

/*
 * Checks that no key of parent's member `key` (an object of free-form names:
 * a sweep's "vary", a "set") appears twice: cJSON keeps both and a lookup
 * finds the first.  at is parent's path; a missing member passes.
 */
int jdoc_check_unique(const struct jdoc *doc, const cJSON *parent, const char *key, struct jpath *at, struct diag *d);

/*
 * Checks that obj is an object whose keys are all in allowed (NULL-ended);
 * an unknown key is an error with a "did you mean" suggestion.
 */
int jdoc_check_keys(const struct jdoc *doc, const cJSON *obj, struct jpath *at, const char *const *allowed,
		    struct diag *d);

/*
 * Typed field readers.  Each returns 0 and fills *out, or an error naming
 * the field.  A missing optional field leaves *out untouched and returns 0.
 */
int jdoc_string(const struct jdoc *doc, const cJSON *obj, struct jpath *at, const char *key, bool required,
		const char **out, struct diag *d);
/* An expression may be written as a JSON string or an integer. */
int jdoc_expr_text(const struct jdoc *doc, const cJSON *obj, struct jpath *at, const char *key, bool required,
		   char *buf, size_t bufsz, struct diag *d);
int jdoc_number(const struct jdoc *doc, const cJSON *obj, struct jpath *at, const char *key, bool required,
		double *out, struct diag *d);

/* True when x is an integer within [lo, hi] (checked before any conversion, which would be UB). */
bool jdoc_is_integer(double x, double lo, double hi);

#endif

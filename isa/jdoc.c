#include "jdoc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"

char *jdoc_read_file(const char *file, size_t *len)
{
	FILE *f = fopen(file, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
		if (n > JDOC_MAX_BYTES) { /* a device or pipe that never ends would otherwise take all memory */
			free(buf);
			fclose(f);
			errno = EFBIG;
			return NULL;
		}
		if (n + 1 >= cap) {
			char *bigger = realloc(buf, cap * 2);
			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	if (buf && ferror(f)) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = n;
	}
	return buf;
}

static void offset_to_line_col(const char *text, size_t off, int *line, int *col)
{
	int l = 1, c = 1;
	for (size_t i = 0; i < off && text[i]; i++) {
		if (text[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}

/*
 * The first offset at which text is not JSON that cJSON keeps whole: a byte
 * sequence that is not UTF-8 (cJSON copies it through into names and then
 * into the reports, which no JSON or XML reader takes), or a \u0000 escape in
 * a string (cJSON ends the C string there, so "fma\u0000x" would read as the
 * op "fma").  *why says which; returns SIZE_MAX when the text is clean.
 */
static size_t text_problem(const char *text, const char **why)
{
	const unsigned char *s = (const unsigned char *)text;
	bool in_string = false;
	for (size_t i = 0; s[i];) {
		unsigned char c = s[i];
		if (c >= 0x80) {
			/* lead byte: the count of continuation bytes and the least code point it may start */
			int more = c >= 0xf0 && c <= 0xf4 ? 3 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xc2 && c <= 0xdf ? 1 : -1;
			uint32_t cp = more == 3 ? c & 0x07u : more == 2 ? c & 0x0fu : c & 0x1fu;
			for (int k = 1; more > 0 && k <= more; k++) {
				if ((s[i + (size_t)k] & 0xc0) != 0x80) {
					more = -1;
					break;
				}
				cp = cp << 6 | (s[i + (size_t)k] & 0x3fu);
			}
			uint32_t least = more == 3 ? 0x10000u : more == 2 ? 0x800u : 0x80u;
			if (more < 0 || cp < least || cp > 0x10ffffu || (cp >= 0xd800u && cp <= 0xdfffu)) {
				*why = "a byte sequence that is not UTF-8; expected JSON text in UTF-8";
				return i;
			}
			i += (size_t)more + 1;
			continue;
		}
		if (c == '"') {
			in_string = !in_string;
		} else if (in_string && c == '\\') {
			if (s[i + 1] == 'u' && !strncmp(text + i + 2, "0000", 4)) {
				*why = "a \\u0000 (NUL) in a string; names, ops and expressions cannot hold one";
				return i;
			}
			if (s[i + 1])
				i++; /* the escaped character, so an escaped quote does not end the string */
		}
		i++;
	}
	return SIZE_MAX;
}

int jdoc_parse(const char *file, const char *text, struct jdoc *doc, struct diag *d)
{
	*doc = (struct jdoc){0};
	doc->file = strdup(file);
	doc->text = strdup(text);
	if (!doc->file || !doc->text) {
		jdoc_free(doc);
		return diag_set(d, DIAG_LIMIT, "%s: out of memory", file);
	}
	const char *end = NULL;
	doc->root = cJSON_ParseWithOpts(doc->text, &end, true);
	if (!doc->root) {
		int line, col;
		size_t off = end ? (size_t)(end - doc->text) : 0;
		offset_to_line_col(doc->text, off, &line, &col);
		int rc = diag_set(d, DIAG_INPUT, "%s:%d:%d: invalid JSON near '%.12s'", file, line, col,
				  doc->text[off] ? doc->text + off : "end of file");
		jdoc_free(doc);
		return rc;
	}
	const char *why = NULL;
	size_t bad = text_problem(doc->text, &why);
	if (bad != SIZE_MAX) {
		int line, col;
		offset_to_line_col(doc->text, bad, &line, &col);
		int rc = diag_set(d, DIAG_INPUT, "%s:%d:%d: %s", file, line, col, why);
		jdoc_free(doc);
		return rc;
	}
	return 0;
}

int jdoc_load(const char *file, struct jdoc *doc, struct diag *d)
{
	size_t len = 0;
	char *text = jdoc_read_file(file, &len);
	if (!text && errno == EFBIG)
		return diag_set(d, DIAG_LIMIT, "%s: more than %zu MiB; smsim reads no input file larger (is it the file you meant?)",
				file, JDOC_MAX_BYTES >> 20);
	if (!text)
		return diag_set(d, DIAG_INPUT, "%s: cannot read: %s", file, strerror(errno));
	if (strlen(text) != len) {
		free(text);
		return diag_set(d, DIAG_INPUT, "%s: contains a NUL byte; expected JSON text", file);
	}
	int rc = jdoc_parse(file, text, doc, d);
	free(text);
	return rc;
}

void jdoc_free(struct jdoc *doc)
{
	if (!doc)
		return;
	cJSON_Delete(doc->root);
	free(doc->text);
	free(doc->file);
	*doc = (struct jdoc){0};
}

/* --- locating a path in the raw text ------------------------------------ */

struct scan {
	const char *s;
	size_t i;
};

static void skip_ws(struct scan *sc)
{
	while (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\t' || sc->s[sc->i] == '\n' || sc->s[sc->i] == '\r')
		sc->i++;
}

/* Copies the string at sc (which must start with '"') into buf, unescaped enough for keys. */
static bool scan_string(struct scan *sc, char *buf, size_t bufsz)
{
	if (sc->s[sc->i] != '"')
		return false;
	sc->i++;
	size_t n = 0;
	while (sc->s[sc->i] && sc->s[sc->i] != '"') {
		char ch = sc->s[sc->i];
		if (ch == '\\' && sc->s[sc->i + 1]) {
			sc->i++;
			ch = sc->s[sc->i];
		}
		if (buf && n + 1 < bufsz)
			buf[n++] = ch;
		sc->i++;
	}
	if (buf)
		buf[n] = '\0';
	if (sc->s[sc->i] != '"')
		return false;
	sc->i++;
	return true;
}

static bool skip_value(struct scan *sc, int depth)
{
	if (depth > 512)
		return false;
	skip_ws(sc);
	char ch = sc->s[sc->i];
	if (ch == '"')
		return scan_string(sc, NULL, 0);
	if (ch == '{' || ch == '[') {
		char close = ch == '{' ? '}' : ']';
		sc->i++;
		skip_ws(sc);
		if (sc->s[sc->i] == close) {
			sc->i++;
			return true;
		}
		for (;;) {
			skip_ws(sc);
			if (ch == '{') {
				if (!scan_string(sc, NULL, 0))
					return false;
				skip_ws(sc);
				if (sc->s[sc->i] != ':')
					return false;
				sc->i++;
			}
			if (!skip_value(sc, depth + 1))
				return false;
			skip_ws(sc);
			if (sc->s[sc->i] == ',') {
				sc->i++;
				continue;
			}
			if (sc->s[sc->i] == close) {
				sc->i++;
				return true;
			}
			return false;
		}
	}
	if (!ch)
		return false;
	while (sc->s[sc->i] && !strchr(",]} \t\r\n", sc->s[sc->i]))
		sc->i++;
	return true;
}

/* One component of a JSON path as descend reads it: ".key" (cut at 255 characters) or "[index]". */
struct component {
	bool is_key;
	char key[256];
	size_t key_len;
	size_t key_at; /* where the key starts in the path */
	long index;
};

/* Reads the component at *path and moves past it; false at anything else. */
static bool next_component(const char *path, const char **p, struct component *c)
{
	const char *q = *p;
	if (*q == '.') {
		size_t n = 0;
		q++;
		c->key_at = (size_t)(q - path);
		while (*q && *q != '.' && *q != '[' && n + 1 < sizeof c->key)
			c->key[n++] = *q++;
		c->key[n] = '\0';
		c->key_len = n;
		c->is_key = true;
	} else if (*q == '[') {
		c->index = strtol(q + 1, (char **)&q, 10);
		if (*q == ']')
			q++;
		c->is_key = false;
		c->key_at = c->key_len = 0;
	} else {
		return false;
	}
	*p = q;
	return true;
}

/* Moves sc past the value it stands at and the comma after it; false when no comma follows. */
static bool past_value(struct scan *sc)
{
	if (!skip_value(sc, 0))
		return false;
	skip_ws(sc);
	if (sc->s[sc->i] != ',')
		return false;
	sc->i++;
	return true;
}

/*
 * Moves sc, standing at element `from` of an array (0: at its '['), to
 * element want; false when the array has no such element.
 */
static bool to_element(struct scan *sc, long from, long want)
{
	for (long k = from;; k++) {
		skip_ws(sc);
		if (k == want)
			return sc->s[sc->i] != ']';
		if (!past_value(sc))
			return false;
	}
}

/* Moves sc to the value the component names; false when absent. */
static bool descend(struct scan *sc, const struct component *c)
{
	skip_ws(sc);
	if (c->is_key) {
		if (sc->s[sc->i] != '{')
			return false;
		sc->i++;
		for (;;) {
			skip_ws(sc);
			char key[256];
			if (!scan_string(sc, key, sizeof key))
				return false;
			skip_ws(sc);
			if (sc->s[sc->i] != ':')
				return false;
			sc->i++;
			skip_ws(sc);
			if (strcmp(key, c->key) == 0)
				return true;
			if (!past_value(sc))
				return false;
		}
	}
	if (sc->s[sc->i] != '[')
		return false;
	sc->i++;
	return to_element(sc, 0, c->index);
}

/* Whether the located path's component d is c (its key is read from the path kept). */
static bool same_component(const struct jdoc_locator *loc, int d, const struct component *c)
{
	const struct jdoc_step *s = &loc->steps[d];
	if (s->is_key != c->is_key)
		return false;
	if (!c->is_key)
		return s->index == c->index;
	return s->key_len == c->key_len && memcmp(loc->path + s->key_at, c->key, c->key_len) == 0;
}

/*
 * The scan from the text's start, resumed where the located path's steps
 * already went: a component equal to the located one at the same depth (all
 * before it equal too) is where that one was found, and a later element of
 * the same array is reached from the located element rather than from the
 * array's '['.  Every state resumed is one the scan from the start passes
 * through, so the position found is the same.
 */
void jdoc_locate_near(struct jdoc_locator *loc, const struct jdoc *doc, const char *path, int *line, int *col)
{
	*line = *col = 0;
	if (!doc || !doc->text || !path || path[0] != '$')
		return;
	if (loc->doc != doc) {
		*loc = (struct jdoc_locator){.doc = doc};
		loc->line = loc->col = 1;
	}
	struct scan sc = {doc->text, 0};
	const char *p = path + 1;
	skip_ws(&sc);
	size_t best = sc.i;
	bool resumable = true; /* every component so far was the located path's */
	int d = 0;
	struct component c;
	while (*p) {
		if (!next_component(path, &p, &c))
			break;
		bool found;
		if (resumable && d < loc->depth && same_component(loc, d, &c)) {
			sc.i = loc->steps[d].at;
			found = true;
		} else if (resumable && d < loc->depth && !c.is_key && !loc->steps[d].is_key &&
			   c.index > loc->steps[d].index) {
			sc.i = loc->steps[d].at;
			found = to_element(&sc, loc->steps[d].index, c.index);
			resumable = false;
		} else {
			found = descend(&sc, &c);
			resumable = false;
		}
		if (!found)
			break;
		skip_ws(&sc);
		best = sc.i;
		if (d < JDOC_LOCATOR_DEPTH)
			loc->steps[d] = (struct jdoc_step){.is_key = c.is_key,
							   .key_at = c.key_at,
							   .key_len = c.key_len,
							   .index = c.index,
							   .at = sc.i};
		d++;
	}
	size_t n = strlen(path);
	if (n < sizeof loc->path) {
		memcpy(loc->path, path, n + 1);
		loc->depth = d < JDOC_LOCATOR_DEPTH ? d : JDOC_LOCATOR_DEPTH;
	} else {
		loc->depth = 0;
	}
	if (best < loc->counted) {
		loc->counted = 0;
		loc->line = loc->col = 1;
	}
	int l, cl;
	offset_to_line_col(doc->text + loc->counted, best - loc->counted, &l, &cl);
	loc->line += l - 1;
	loc->col = l > 1 ? cl : loc->col + cl - 1;
	loc->counted = best;
	*line = loc->line;
	*col = loc->col;
}

void jdoc_locate(const struct jdoc *doc, const char *path, int *line, int *col)
{
	struct jdoc_locator fresh = {0};
	jdoc_locate_near(&fresh, doc, path, line, col);
}

int jdoc_error(const struct jdoc *doc, const struct jpath *at, struct diag *d, const char *fmt, ...)
{
	char what[1536];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	const char *path = at ? at->s : "$";
	int line = 0, col = 0;
	jdoc_locate(doc, path, &line, &col);
	const char *file = doc && doc->file ? doc->file : "<input>";
	if (line > 0)
		return diag_set(d, DIAG_INPUT, "%s:%d:%d: at %s: %s", file, line, col, path, what);
	return diag_set(d, DIAG_INPUT, "%s: at %s: %s", file, path, what);
}

/* --- paths ---------------------------------------------------------------- */

void jpath_root(struct jpath *p)
{
	p->s[0] = '$';
	p->s[1] = '\0';
	p->len = 1;
}

size_t jpath_key(struct jpath *p, const char *key)
{
	size_t old = p->len;
	int n = snprintf(p->s + p->len, sizeof p->s - p->len, ".%s", key);
	if (n > 0)
		p->len = p->len + (size_t)n < sizeof p->s ? p->len + (size_t)n : sizeof p->s - 1;
	return old;
}

size_t jpath_index(struct jpath *p, int index)
{
	size_t old = p->len;
	int n = snprintf(p->s + p->len, sizeof p->s - p->len, "[%d]", index);
	if (n > 0)
		p->len = p->len + (size_t)n < sizeof p->s ? p->len + (size_t)n : sizeof p->s - 1;
	return old;
}

void jpath_pop(struct jpath *p, size_t len)
{
	p->len = len;
	p->s[len] = '\0';
}

/* --- keys ------------------------------------------------------------------ */

int jdoc_check_unique(const struct jdoc *doc, const cJSON *parent, const char *key, struct jpath *at, struct diag *d)
{
	const cJSON *obj = cJSON_GetObjectItemCaseSensitive(parent, key);
	for (const cJSON *it = obj ? obj->child : NULL; it; it = it->next)
		for (const cJSON *prev = obj->child; prev != it; prev = prev->next)
			if (it->string && prev->string && !strcmp(prev->string, it->string)) {
				size_t old = jpath_key(at, key);
				jpath_key(at, it->string);
				int rc = jdoc_error(doc, at, d, "duplicate field \"%s\"", it->string);
				jpath_pop(at, old);
				return rc;
			}
	return 0;
}

int jdoc_check_keys(const struct jdoc *doc, const cJSON *obj, struct jpath *at, const char *const *allowed,
		    struct diag *d)
{
	if (!cJSON_IsObject(obj))
		return jdoc_error(doc, at, d, "expected an object");
	/*
	 * Every key before this one was allowed (the first that is not ends the
	 * check), so a key repeats an earlier one exactly when it is allowed and
	 * its allowed name was seen: a mark per name instead of comparing with
	 * every earlier key (a machine file's 110 fields cost 12,000 strcmps).
	 */
	size_t nallowed = 0;
	while (allowed[nallowed])
		nallowed++;
	bool seen_marks[256];
	bool *seen = nallowed <= sizeof seen_marks / sizeof *seen_marks ? seen_marks : NULL;
	if (seen)
		memset(seen, 0, nallowed * sizeof *seen);
	for (const cJSON *it = obj->child; it; it = it->next) {
		size_t name = 0;
		while (name < nallowed && strcmp(it->string, allowed[name]) != 0)
			name++;
		bool known = name < nallowed;
		bool repeated = false;
		if (seen) {
			repeated = known && seen[name];
			if (known)
				seen[name] = true;
		} else {
			for (const cJSON *prev = obj->child; prev != it && !repeated; prev = prev->next)
				repeated = strcmp(prev->string, it->string) == 0;
		}
		if (repeated) {
			size_t old = jpath_key(at, it->string);
			int rc = jdoc_error(doc, at, d, "duplicate field \"%s\"", it->string);
			jpath_pop(at, old);
			return rc;
		}
		if (!known) {
			size_t old = jpath_key(at, it->string);
			const char *hint = suggest_name(it->string, allowed);
			char list[512] = "";
			for (size_t i = 0; allowed[i]; i++) {
				strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
				strncat(list, allowed[i], sizeof list - strlen(list) - 1);
			}
			int rc = hint ? jdoc_error(doc, at, d, "unknown field \"%s\"; did you mean \"%s\"?", it->string,
						   hint)
				      : jdoc_error(doc, at, d, "unknown field \"%s\"; expected one of: %s", it->string,
						   list);
			jpath_pop(at, old);
			return rc;
		}
	}
	return 0;
}

/* --- typed fields ------------------------------------------------------------ */

static const cJSON *field(const struct jdoc *doc, const cJSON *obj, struct jpath *at, const char *key,
			  bool required, struct diag *d, int *rc)
{
	*rc = 0;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v && required)
		*rc = jdoc_error(doc, at, d, "missing required field \"%s\"", key);
	return v;
}

int jdoc_string(const struct jdoc *doc, const cJSON *obj, struct jpath *at, const char *key, bool required,
		const char **out, struct diag *d)
{
	int rc;
	const cJSON *v = field(doc, obj, at, key, required, d, &rc);
	if (!v)
		return rc;
	if (!cJSON_IsString(v)) {
		size_t old = jpath_key(at, key);
		rc = jdoc_error(doc, at, d, "expected a string");
		jpath_pop(at, old);
		return rc;
	}
	*out = v->valuestring;
	return 0;
}

int jdoc_expr_text(const struct jdoc *doc, const cJSON *obj, struct jpath *at, const char *key, bool required,
		   char *buf, size_t bufsz, struct diag *d)
{
	int rc;
	const cJSON *v = field(doc, obj, at, key, required, d, &rc);
	if (!v)
		return rc;
	size_t old = jpath_key(at, key);
	if (cJSON_IsString(v)) {
		if (strlen(v->valuestring) >= bufsz)
			rc = jdoc_error(doc, at, d, "expression longer than %zu characters", bufsz - 1);
		else
			snprintf(buf, bufsz, "%s", v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		double x = v->valuedouble;
		if (!jdoc_is_integer(x, -9.2e18, 9.2e18))
			rc = jdoc_error(doc, at, d, "expected an integer expression, got %g", x);
		else
			snprintf(buf, bufsz, "%lld", (long long)x);
	} else {
		rc = jdoc_error(doc, at, d, "expected an expression (a string or an integer)");
	}
	jpath_pop(at, old);
	return rc;
}

int jdoc_number(const struct jdoc *doc, const cJSON *obj, struct jpath *at, const char *key, bool required,
		double *out, struct diag *d)
{
	int rc;
	const cJSON *v = field(doc, obj, at, key, required, d, &rc);
	if (!v)
		return rc;
	if (!cJSON_IsNumber(v)) {
		size_t old = jpath_key(at, key);
		rc = jdoc_error(doc, at, d, "expected a number");
		jpath_pop(at, old);
		return rc;
	}
	*out = v->valuedouble;
	return 0;
}

bool jdoc_is_integer(double x, double lo, double hi)
{
	return x >= lo && x <= hi && x == (double)(long long)x;
}

#include "trace.h"

#include "../../isa/diag.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct trace *trace_new(uint32_t nwarps, uint32_t ncopy_tracks)
{
	struct trace *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->warps = calloc(nwarps + 1, sizeof *t->warps);
	t->copies = calloc(ncopy_tracks + 1, sizeof *t->copies);
	if (!t->warps || !t->copies) {
		trace_free(t);
		return NULL;
	}
	t->nwarps = nwarps;
	t->ncopies = ncopy_tracks;
	return t;
}

void trace_free(struct trace *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; t->warps && i < t->nwarps; i++)
		free(t->warps[i].steps);
	for (uint32_t i = 0; t->copies && i < t->ncopies; i++)
		free(t->copies[i].spans);
	free(t->warps);
	free(t->copies);
	free(t->inflight.d);
	free(t->stages.d);
	free(t->dram.d);
	free(t->ops);
	free(t);
}

int trace_set_ops(struct trace *t, uint32_t n, const struct trace_op *ops)
{
	if (!t)
		return 0;
	t->ops = malloc((n + 1) * sizeof *t->ops);
	if (!t->ops)
		return -1;
	memcpy(t->ops, ops, n * sizeof *ops);
	t->nops = n;
	return 0;
}

static inline struct trace_span *grow(struct trace *t, struct trace_track *tr)
{
	if (tr->n == tr->cap) {
		uint32_t cap = tr->cap ? tr->cap * 2 : 64;
		struct trace_span *s = realloc(tr->spans, cap * sizeof *s);
		if (!s) {
			t->failed = 1;
			return NULL;
		}
		tr->spans = s;
		tr->cap = cap;
	}
	return &tr->spans[tr->n++];
}

static bool push_step(struct trace *t, struct trace_timeline *tl, trace_step step)
{
	if (tl->n == tl->cap) {
		uint32_t cap = tl->cap ? tl->cap * 2 : 64;
		trace_step *steps = realloc(tl->steps, cap * sizeof *steps);
		if (!steps) {
			t->failed = 1;
			return false;
		}
		tl->steps = steps;
		tl->cap = cap;
	}
	tl->steps[tl->n++] = step;
	return true;
}

/*
 * What trace_warp leaves here: a full timeline, a gap before begin, or a
 * span too long for one step.  Spans never overlap (the stall charge
 * moves on from where it stopped); one that did would be cut to the part
 * after the timeline's end.
 */
void trace_warp_span(struct trace *t, struct trace_timeline *tl, enum stall cause, uint64_t begin, uint64_t end)
{
	if (begin < tl->end)
		begin = tl->end;
	if (end <= begin)
		return;
	for (uint64_t gap = begin - tl->end; gap;) {
		uint64_t piece = gap < TRACE_STEP_LEN_MAX ? gap : TRACE_STEP_LEN_MAX;
		if (!push_step(t, tl, (trace_step)(piece << 8 | TRACE_GAP)))
			return;
		gap -= piece;
	}
	tl->end = begin;
	/* The last step may still have room for a piece of this one; trace_next_span joins them either way. */
	for (uint64_t len = end - begin; len;) {
		uint64_t piece = len < TRACE_STEP_LEN_MAX ? len : TRACE_STEP_LEN_MAX;
		if (!push_step(t, tl, (trace_step)(piece << 8 | (uint32_t)cause)))
			return;
		len -= piece;
		tl->end += piece;
	}
}

/* A spread op's part of n cycles as steps of code, in pieces of TRACE_STEP_LEN_MAX (first: the first piece's code). */
static bool push_part(struct trace *t, struct trace_timeline *tl, uint64_t n, uint32_t first, uint32_t code)
{
	for (uint32_t c = first; n; c = code) {
		uint64_t piece = n < TRACE_STEP_LEN_MAX ? n : TRACE_STEP_LEN_MAX;
		if (!push_step(t, tl, (trace_step)(piece << 8 | c)))
			return false;
		n -= piece;
	}
	return true;
}

void trace_warp_other(struct trace *t, struct trace_timeline *tl, enum stall cause, uint64_t begin, uint64_t end)
{
	if (tl->spread_open && trace_spread_add(t, tl, cause, begin, end))
		return;
	uint64_t len = end - begin;
	if (tl->end == begin && len <= TRACE_STEP_LEN_MAX) {
		trace_step *last = tl->n ? &tl->steps[tl->n - 1] : NULL;
		if (last && (*last & 0xff) == (uint32_t)cause && (*last >> 8) <= TRACE_STEP_LEN_MAX - len) {
			*last += (trace_step)(len << 8);
			tl->end = end;
			return;
		}
		if (tl->n < tl->cap) {
			tl->steps[tl->n++] = (trace_step)(len << 8 | (uint32_t)cause);
			tl->end = end;
			return;
		}
	}
	trace_warp_span(t, tl, cause, begin, end); /* grows the timeline, or records a gap or a long span */
}

void trace_spread_close(struct trace *t, struct trace_timeline *tl)
{
	tl->spread_open = false;
	if (!tl->spread_len)
		return;
	bool ok = push_part(t, tl, tl->spread_len, TRACE_SPREAD | tl->spread_cause, TRACE_SPREAD_MORE);
	for (uint32_t c = 0; ok && c < STALL_COUNT; c++)
		if (tl->spread_part[c])
			ok = push_part(t, tl, tl->spread_part[c], TRACE_SPREAD_PART | c, TRACE_SPREAD_PART | c);
	if (ok && tl->spread_op)
		push_step(t, tl, (trace_step)(tl->spread_op << 8 | TRACE_SPREAD_OP));
}

void trace_spread_begin(struct trace *t, uint32_t warp, enum stall cause)
{
	if (!t || warp >= t->nwarps)
		return;
	struct trace_timeline *tl = &t->warps[warp];
	if (tl->spread_open)
		trace_spread_close(t, tl);
	tl->spread_open = tl->spread_kept = true;
	tl->spread_cause = (uint8_t)cause;
	tl->spread_len = 0;
	memset(tl->spread_part, 0, sizeof tl->spread_part);
	tl->spread_op = 0;
}

void trace_finish(struct trace *t)
{
	for (uint32_t w = 0; t && w < t->nwarps; w++)
		if (t->warps[w].spread_open)
			trace_spread_close(t, &t->warps[w]);
}

void trace_copy(struct trace *t, uint32_t track, uint32_t seq, uint64_t begin, uint64_t end)
{
	if (!t || track >= t->ncopies || end < begin)
		return;
	struct trace_span *s = grow(t, &t->copies[track]);
	if (s)
		*s = (struct trace_span){begin, end, seq};
}

void trace_count(struct trace_series *c, uint64_t cycle, int64_t delta)
{
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 256;
		struct trace_delta *d = realloc(c->d, cap * sizeof *d);
		if (!d)
			return;
		c->d = d;
		c->cap = cap;
	}
	c->d[c->n++] = (struct trace_delta){cycle, delta};
}

static int by_cycle(const void *a, const void *b)
{
	const struct trace_delta *x = a, *y = b;
	return x->cycle < y->cycle ? -1 : x->cycle > y->cycle;
}

/*
 * The file is tens of megabytes of short records: they are formatted by
 * hand into a buffer and written in large blocks, at a small fraction of
 * fprintf's cost per field (the bytes are the same).  256 KB per write:
 * the bench's traced run (1.3 GB) spent 0.46-0.69 s of system time
 * against 0.59-0.76 s with 64 KB, and 1.45-2.0 s with 1 MB (the buffer
 * no longer stays in the core's cache between formatting and the copy).
 */
struct obuf {
	FILE *f;
	size_t n;
	char buf[1 << 18];
};

static void ob_flush(struct obuf *o)
{
	if (o->n)
		fwrite(o->buf, 1, o->n, o->f);
	o->n = 0;
}

static inline void ob_mem(struct obuf *o, const char *s, size_t n)
{
	if (n > sizeof o->buf - o->n) {
		ob_flush(o);
		if (n > sizeof o->buf) {
			fwrite(s, 1, n, o->f);
			return;
		}
	}
	memcpy(o->buf + o->n, s, n);
	o->n += n;
}

static inline void ob_str(struct obuf *o, const char *s) { ob_mem(o, s, strlen(s)); }

static void ob_printf(struct obuf *o, const char *fmt, ...) DIAG_PRINTF(2, 3);

/* s inside a JSON string: names and titles come from the user's files, which may hold quotes, backslashes or control characters. */
static void ob_json(struct obuf *o, const char *s)
{
	for (const char *run = s;; s++) {
		unsigned char c = (unsigned char)*s;
		if (c && c != '"' && c != '\\' && c >= 0x20)
			continue;
		ob_mem(o, run, (size_t)(s - run));
		if (!c)
			return;
		if (c == '"' || c == '\\')
			ob_printf(o, "\\%c", c);
		else
			ob_printf(o, "\\u%04x", c);
		run = s + 1;
	}
}

/*
 * The hot loops make room for a whole record first, then write it
 * unchecked: an op span with a part for every cause, its label and path
 * is under 1.2 KB.
 */
enum { OB_RECORD = 2048 };

static inline char *ob_room(struct obuf *o)
{
	if (sizeof o->buf - o->n < OB_RECORD)
		ob_flush(o);
	return o->buf + o->n;
}

static inline char *put_mem(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

#define PUT_LIT(p, lit) put_mem((p), (lit), sizeof(lit) - 1)

/* Copies n <= 32 bytes from s, which must have 32 readable bytes (the record has room for the rest). */
static inline char *put_short(char *p, const char *s, size_t n)
{
	memcpy(p, s, 32);
	return p + n;
}

static const char digits2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
			       "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
			       "8081828384858687888990919293949596979899";

static inline int ndigits(uint64_t v)
{
	static const uint64_t pow10[20] = {1ull,
					   10ull,
					   100ull,
					   1000ull,
					   10000ull,
					   100000ull,
					   1000000ull,
					   10000000ull,
					   100000000ull,
					   1000000000ull,
					   10000000000ull,
					   100000000000ull,
					   1000000000000ull,
					   10000000000000ull,
					   100000000000000ull,
					   1000000000000000ull,
					   10000000000000000ull,
					   100000000000000000ull,
					   1000000000000000000ull,
					   10000000000000000000ull};
	if (!v)
		return 1;
	int t = ((64 - __builtin_clzll(v)) * 1233) >> 12; /* about log10(2^bits) */
	return t + 1 - (v < pow10[t]);
}

/*
 * Decimal, two digits at a time, written from the end straight into the
 * record (through a scratch buffer the wide copy would stall on: a load
 * that spans narrow stores cannot be forwarded).
 */
static inline char *put_u64(char *p, uint64_t v)
{
	int n = ndigits(v);
	char *q = p + n;
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;
		v /= 100;
		q -= 2;
		memcpy(q, digits2 + d, 2);
	}
	if (v >= 10) {
		q -= 2;
		memcpy(q, digits2 + v * 2, 2);
	} else {
		*--q = (char)('0' + v);
	}
	return p + n;
}

/*
 * A warp's spans follow each other, so each one's ts is the last one's
 * plus its dur: kept as a decimal string and added to digit by digit
 * (most durations are a digit or two), instead of converted afresh.
 */
struct dec {
	uint64_t v;
	int n;
	char s[32]; /* its n digits, then zeros: copied whole by put_short */
};

static void dec_set(struct dec *d, uint64_t v)
{
	memset(d->s, 0, sizeof d->s);
	d->v = v;
	d->n = (int)(put_u64(d->s, v) - d->s);
}

static inline void dec_to(struct dec *d, uint64_t v)
{
	if (v == d->v)
		return;
	if (v < d->v || v - d->v > 1000000000) {
		dec_set(d, v);
		return;
	}
	uint64_t carry = v - d->v;
	d->v = v;
	for (int i = d->n - 1; i >= 0; i--) {
		uint64_t digit = (uint64_t)(d->s[i] - '0') + carry;
		if (digit < 10) { /* the usual end: no carry out of this digit */
			d->s[i] = (char)('0' + digit);
			return;
		}
		d->s[i] = (char)('0' + digit % 10);
		carry = digit / 10;
	}
	dec_set(d, v); /* one digit more: rare enough to write afresh */
}

static inline void ob_u64(struct obuf *o, uint64_t v)
{
	char *p = ob_room(o);
	o->n = (size_t)(put_u64(p, v) - o->buf);
}

static inline void ob_i64(struct obuf *o, int64_t v)
{
	if (v < 0) {
		ob_mem(o, "-", 1);
		ob_u64(o, 0 - (uint64_t)v);
	} else {
		ob_u64(o, (uint64_t)v);
	}
}

/* printf-style, for the few records with real numbers. */

static void ob_printf(struct obuf *o, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		ob_mem(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A series' deltas in cycle order, in a copy the caller frees; NULL when empty or out of memory. */
static struct trace_delta *sorted_deltas(const struct trace_series *c)
{
	if (!c->n)
		return NULL;
	struct trace_delta *d = malloc((c->n + 1) * sizeof *d);
	if (!d)
		return NULL;
	memcpy(d, c->d, c->n * sizeof *d);
	qsort(d, c->n, sizeof *d, by_cycle);
	return d;
}

/* A counter track: the running sum of the deltas, one event per cycle it changes. */
static void write_counter(struct obuf *out, const struct trace_series *c, const char *name, int pid, bool *first)
{
	/* qsort is not stable, but equal cycles are summed, so the order among them does not show. */
	struct trace_delta *d = sorted_deltas(c);
	if (!d)
		return;
	int64_t v = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		v += d[i].delta;
		if (i + 1 < c->n && d[i + 1].cycle == d[i].cycle)
			continue;
		ob_str(out, *first ? "\n{\"ph\":\"C\",\"pid\":" : ",\n{\"ph\":\"C\",\"pid\":");
		ob_i64(out, pid);
		ob_str(out, ",\"name\":\"");
		ob_str(out, name);
		ob_str(out, "\",\"ts\":");
		ob_u64(out, d[i].cycle);
		ob_str(out, ",\"args\":{\"value\":");
		ob_i64(out, v);
		ob_str(out, "}}");
		*first = false;
	}
	free(d);
}

/* DRAM traffic as bytes per cycle over windows of 256 cycles. */
static void write_dram(struct obuf *out, const struct trace_series *c, int pid, bool *first)
{
	enum { WINDOW = 256 };
	struct trace_delta *d = sorted_deltas(c);
	if (!d)
		return;
	for (uint32_t i = 0; i < c->n;) {
		uint64_t w = d[i].cycle / WINDOW;
		int64_t bytes = 0;
		while (i < c->n && d[i].cycle / WINDOW == w)
			bytes += d[i++].delta;
		ob_printf(out, "%s\n{\"ph\":\"C\",\"pid\":%d,\"name\":\"DRAM bytes/cycle\",\"ts\":%llu,\"args\":{\"value\":%.3f}}",
			  *first ? "" : ",", pid, (unsigned long long)(w * WINDOW), (double)bytes / WINDOW);
		*first = false;
		uint64_t next = i < c->n ? d[i].cycle / WINDOW : w + 2;
		if (next > w + 1) {
			ob_printf(out, ",\n{\"ph\":\"C\",\"pid\":%d,\"name\":\"DRAM bytes/cycle\",\"ts\":%llu,\"args\":{\"value\":0}}",
				  pid, (unsigned long long)((w + 1) * WINDOW));
		}
	}
	free(d);
}

/* The metadata record that names a track (tid) of a process (pid). */
static void write_track_name(struct obuf *out, int pid, uint32_t tid, const char *name)
{
	ob_str(out, ",\n{\"ph\":\"M\",\"pid\":");
	ob_u64(out, (uint64_t)pid);
	ob_str(out, ",\"tid\":");
	ob_u64(out, tid);
	ob_str(out, ",\"name\":\"thread_name\",\"args\":{\"name\":\"");
	ob_json(out, name);
	ob_str(out, "\"}}");
}

int trace_write_chrome(const struct trace *t, FILE *f, const char *title, double clock_ghz)
{
	enum { PID_WARPS = 1, PID_COPIES = 2, PID_COUNTERS = 3 };
	struct obuf *out = malloc(sizeof *out);
	if (!out)
		return -1;
	out->f = f;
	out->n = 0;
	ob_printf(out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"title\":\"");
	ob_json(out, title);
	ob_printf(out, "\",\"time_unit\":\"1 us in the viewer = 1 SM cycle\",\"clock_ghz\":%.3f,\"cycles\":%llu},\n\"traceEvents\":[",
		  clock_ghz, (unsigned long long)t->end);
	bool first = true;
	static const char *const procs[] = {"", "warps", "copy engine (per stage)", "counters"};
	for (int p = PID_WARPS; p <= PID_COUNTERS; p++) {
		ob_printf(out, "%s\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"%s\"}}",
			  first ? "" : ",", p, procs[p]);
		ob_printf(out, ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}", p, p);
		first = false;
	}
	/* The stall names padded to 32 bytes for put_short (each is far shorter). */
	char key[STALL_COUNT][32] = {{0}};
	size_t keylen[STALL_COUNT];
	for (int c = 0; c < STALL_COUNT; c++) {
		keylen[c] = strlen(stall_key[c]);
		if (keylen[c] > sizeof key[c])
			keylen[c] = sizeof key[c];
		memcpy(key[c], stall_key[c], keylen[c]);
	}
	for (uint32_t w = 0; w < t->nwarps; w++) {
		const struct trace_timeline *tr = &t->warps[w];
		write_track_name(out, PID_WARPS, w, tr->name);
		ob_str(out, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":");
		ob_u64(out, w);
		ob_str(out, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
		ob_u64(out, w);
		ob_str(out, "}}");
		/* ",\n{...\"tid\":W,\"name\":\"" is the same for every span of the warp */
		char head[64] = {0};
		int hn = snprintf(head, sizeof head, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"name\":\"", PID_WARPS, w);
		/* and a plain span's record up to its ts depends on its cause alone: one fixed-size copy */
		char pre[STALL_COUNT][128] = {{0}};
		size_t pren[STALL_COUNT];
		for (int c = 0; c < STALL_COUNT; c++)
			pren[c] = (size_t)snprintf(pre[c], sizeof pre[c], "%s%.*s\",\"cat\":\"warp\",\"ts\":", head,
						   (int)keylen[c], key[c]);
		struct trace_cursor cur = trace_cursor(tr);
		struct trace_slice s;
		struct dec ts;
		dec_set(&ts, 0);
		while (cur.at < cur.stop) {
			uint32_t code = (uint32_t)(*cur.at & 0xff);
			if (code < TRACE_SPREAD) {
				/*
				 * A plain span, most of them: its steps read here, as trace_next_span
				 * would join them, and its record written without a trace_slice.
				 */
				uint64_t len = 0;
				do
					len += *cur.at++ >> 8;
				while (cur.at < cur.stop && (*cur.at & 0xff) == code);
				char *p = ob_room(out);
				memcpy(p, pre[code], sizeof pre[0]); /* whole, for a fixed-size copy; pren bytes count */
				p += pren[code];
				dec_to(&ts, cur.cycle);
				p = put_short(p, ts.s, (size_t)ts.n);
				p = PUT_LIT(p, ",\"dur\":");
				if (len < 10)
					*p++ = (char)('0' + len);
				else
					p = put_u64(p, len);
				*p++ = '}';
				out->n = (size_t)(p - out->buf);
				cur.cycle += len;
				continue;
			}
			if (!trace_next_span(&cur, &s))
				break; /* only gaps were left */
			char *p = ob_room(out);
			const struct trace_op *op = s.op && s.op <= t->nops ? &t->ops[s.op - 1] : NULL;
			if (!s.spread) { /* after a gap */
				memcpy(p, pre[s.cause], sizeof pre[0]);
				p += pren[s.cause];
			} else {
				memcpy(p, head, sizeof head);
				p += hn;
				if (op) {
					size_t ln = strlen(op->label);
					memcpy(p, op->label, ln);
					p += ln;
					*p++ = ' ';
				}
				p = put_short(p, key[s.cause], keylen[s.cause]);
				p = PUT_LIT(p, "+issue\",\"cat\":\"warp\",\"ts\":");
			}
			dec_to(&ts, s.begin);
			p = put_short(p, ts.s, (size_t)ts.n);
			p = PUT_LIT(p, ",\"dur\":");
			p = put_u64(p, s.end - s.begin);
			if (s.spread) {
				/* The args split dur by cause, issue first; a zero part but issue is left out. */
				p = PUT_LIT(p, ",\"args\":{\"issue\":");
				p = put_u64(p, s.parts[STALL_ISSUE]);
				for (int c = 0; c < STALL_COUNT; c++) {
					if (c == STALL_ISSUE || !s.parts[c])
						continue;
					p = PUT_LIT(p, ",\"");
					p = put_short(p, key[c], keylen[c]);
					p = PUT_LIT(p, "\":");
					p = put_u64(p, s.parts[c]);
				}
				if (op) {
					/* where the op is in the kernel file: a span leads back to its line */
					p = PUT_LIT(p, ",\"op\":\"");
					size_t ln = strlen(op->label);
					memcpy(p, op->label, ln);
					p += ln;
					p = PUT_LIT(p, "\",\"at\":\"");
					ln = strlen(op->path);
					memcpy(p, op->path, ln);
					p += ln;
					p = PUT_LIT(p, "\",\"line\":");
					p = put_u64(p, (uint64_t)(op->line > 0 ? op->line : 0));
				}
				*p++ = '}';
			}
			*p++ = '}';
			out->n = (size_t)(p - out->buf);
		}
	}
	for (uint32_t c = 0; c < t->ncopies; c++) {
		const struct trace_track *tr = &t->copies[c];
		if (!tr->n)
			continue;
		write_track_name(out, PID_COPIES, c, tr->name);
		for (uint32_t i = 0; i < tr->n; i++) {
			const struct trace_span *s = &tr->spans[i];
			ob_str(out, ",\n{\"ph\":\"X\",\"pid\":2,\"tid\":");
			ob_u64(out, c);
			ob_str(out, ",\"name\":\"");
			ob_json(out, tr->name);
			ob_str(out, " batch ");
			ob_u64(out, s->what);
			ob_str(out, "\",\"cat\":\"copy\",\"ts\":");
			ob_u64(out, s->begin);
			ob_str(out, ",\"dur\":");
			ob_u64(out, s->end - s->begin);
			ob_str(out, ",\"args\":{\"batch\":");
			ob_u64(out, s->what);
			ob_str(out, "}}");
		}
	}
	write_counter(out, &t->inflight, "bytes in flight", PID_COUNTERS, &first);
	write_counter(out, &t->stages, "stages full", PID_COUNTERS, &first);
	write_dram(out, &t->dram, PID_COUNTERS, &first);
	ob_str(out, "\n]}\n");
	ob_flush(out);
	free(out);
	return ferror(f) ? -1 : 0;
}

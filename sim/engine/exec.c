/*
 * exec: what each op does when its instruction sequence reaches its anchor.
 *
 * The issue core (issue.c) issues an op's lowered instructions one by one
 * and calls exec_anchor at the instruction where the op takes effect: a
 * wait's try_wait, a copy's LDGSTS, a load's LDS.  This file decides what
 * happens there and reports it; when the other instructions issue, and
 * what a warp waits for, is the core's business.  An op that cannot
 * proceed blocks its group and runs again, from the anchor, when woken.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../isa/jdoc.h"
#include "smem.h"
#include "simint.h"

/* The op at path in the kernel's JSON (read again: this is the error path only); NULL if not found. */
static const cJSON *node_at(const cJSON *root, const char *path)
{
	const cJSON *n = root;
	for (const char *p = path + 1; n && *p;) {
		if (*p == '.') {
			const char *q = ++p;
			while (*q && *q != '.' && *q != '[')
				q++;
			char key[128];
			snprintf(key, sizeof key, "%.*s", (int)(q - p < 127 ? q - p : 127), p);
			n = cJSON_GetObjectItemCaseSensitive(n, key);
			p = q;
		} else if (*p == '[') {
			n = cJSON_GetArrayItem(n, atoi(p + 1));
			p = strchr(p, ']');
			p = p ? p + 1 : "";
		} else {
			return NULL;
		}
	}
	return n;
}

void sim_op_text(const struct sim *s, const struct warp *w, const char *key, char *out, size_t n)
{
	out[0] = '\0';
	if (!w || w->depth <= 0 || simt_pc(w) >= s->k->ncode)
		return;
	struct jdoc doc;
	if (jdoc_load(s->k->file, &doc, NULL))
		return;
	const cJSON *op = node_at(doc.root, s->k->paths[s->k->code[simt_pc(w)].where]);
	const cJSON *v = op ? cJSON_GetObjectItemCaseSensitive(op, key) : NULL;
	if (cJSON_IsString(v))
		snprintf(out, n, "%s", v->valuestring);
	jdoc_free(&doc);
}

const char *sim_warp_name(const struct sim *s, const struct warp *w, char *out, size_t n)
{
	const char *role = kernel_warp_role(s->k, w->in_block);
	if (role)
		snprintf(out, n, "warp %u (%s)", w->in_block, role);
	else
		snprintf(out, n, "warp %u", w->in_block);
	return out;
}

int sim_fail(struct sim *s, enum diag_code code, const struct warp *w, const char *fmt, ...)
{
	if (s->error)
		return s->error;
	char what[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (w && w->depth > 0 && simt_pc(w) < s->k->ncode) {
		const struct insn *in = &s->k->code[simt_pc(w)];
		char pos[32] = "";
		if (s->k->path_line && s->k->path_line[in->where] > 0)
			snprintf(pos, sizeof pos, ":%d:%d", s->k->path_line[in->where], s->k->path_col[in->where]);
		diag_set(s->d, code, "%s%s: at %s (%s, block %u warp %u, cycle %llu): %s", s->k->file, pos,
			 s->k->paths[in->where], op_table[in->op].name[0] ? op_table[in->op].name : "branch", w->block,
			 w->in_block, (unsigned long long)s->now, what);
	} else {
		diag_set(s->d, code, "%s: cycle %llu: %s", s->k->file, (unsigned long long)s->now, what);
	}
	s->error = code;
	return code;
}

/*
 * A full warp's element indices first, first + step, ... (one part rising
 * from lane to lane, the other uniform): their addresses a stride apart
 * when both ends lie inside the buffer, and so every lane between; the
 * stride, or 0 where they lie outside or the sum leaves int64 at an end
 * (then the lane loops find and word the lane).
 */
static uint64_t rise_addrs(const struct buffer *b, int64_t uni, const int64_t ends[2], int64_t step,
			   uint64_t addr[32])
{
	int64_t first, last;
	if (__builtin_add_overflow(uni, ends[0], &first) || __builtin_add_overflow(uni, ends[1], &last) ||
	    first < 0 || (uint64_t)first >= b->elems || last < 0 || (uint64_t)last >= b->elems)
		return 0;
	uint64_t stride = (uint64_t)step * b->elem_bytes;
	expr_fill_rise((int64_t *)addr, (int64_t)(b->base + (uint64_t)first * b->elem_bytes), (int64_t)stride);
	return stride;
}

/*
 * Each lane's byte address of ref[index + elem] (elem may be NULL: 0); a lane outside the buffer fails.
 * Returns the stride between adjacent lanes' addresses where a full warp's rise (tid, or an index
 * affine in it) put them evenly apart, else 0: what the caller's bank and sector counts may take
 * as given instead of finding it in the addresses.
 */
static uint64_t lane_addrs(struct sim *s, struct warp *w, const struct memref *ref, const struct expr *elem,
			   uint32_t mask, uint64_t addr[32], const char *verb)
{
	const struct buffer *b = &s->k->bufs[ref->buf];
	int64_t base[32], off[32], ubase, uoff = 0, ends[2], step;
	bool full = mask == 0xffffffffu;
	/* Warp-uniform parts (the index, usually) stay one value; a rising part, its ends and step. */
	bool base_rise = full && ref->index.lane_affine && simt_eval_rise(s, w, &ref->index, ends, &step);
	bool uni_base = !base_rise && simt_eval_some(s, w, &ref->index, mask, &ubase, base);
	bool off_rise = elem && uni_base && full && elem->lane_affine && simt_eval_rise(s, w, elem, ends, &step);
	bool uni_off = !elem || (!off_rise && simt_eval_some(s, w, elem, mask, &uoff, off));
	if (base_rise && uni_off) {
		uint64_t stride = rise_addrs(b, uoff, ends, step, addr);
		if (stride)
			return stride;
	}
	if (off_rise) {
		uint64_t stride = rise_addrs(b, ubase, ends, step, addr);
		if (stride)
			return stride;
		expr_fill_rise(off, ends[0], step);
	} else if (base_rise) {
		expr_fill_rise(base, ends[0], step);
	}
	if (uni_base != uni_off) {
		/*
		 * The usual cases (a uniform index plus a per-lane element, a per-lane index plus a uniform
		 * element: a compute's load and store): every lane first, checked once; lanes that lie
		 * together in a loop without the mask walk.
		 */
		const int64_t *part = uni_base ? off : base;
		int64_t u = uni_base ? ubase : uoff;
		bool outside = false;
		if (simt_lanes_solid(mask)) {
			for (int lane = __builtin_ctz(mask), hi = 31 - __builtin_clz(mask); lane <= hi; lane++) {
				int64_t idx;
				outside |= __builtin_add_overflow(u, part[lane], &idx) | (idx < 0) | ((uint64_t)idx >= b->elems);
				addr[lane] = b->base + (uint64_t)idx * b->elem_bytes;
			}
		} else {
			for (uint32_t m = mask; m; m &= m - 1) {
				int lane = __builtin_ctz(m);
				int64_t idx;
				outside |= __builtin_add_overflow(u, part[lane], &idx) | (idx < 0) | ((uint64_t)idx >= b->elems);
				addr[lane] = b->base + (uint64_t)idx * b->elem_bytes;
			}
		}
		if (!outside)
			return 0;
	}
	for (uint32_t m = mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		int64_t idx;
		bool overflow = __builtin_add_overflow(uni_base ? ubase : base[lane], uni_off ? uoff : off[lane], &idx);
		if (overflow || idx < 0 || (uint64_t)idx >= b->elems) {
			char vars[512];
			simt_describe_lane(s, w, lane, vars, sizeof vars);
			if (overflow)
				sim_fail(s, DIAG_INPUT, w, "thread %u %s %s at an index beyond 64 bits (%s)",
					 w->in_block * 32 + (unsigned)lane, verb, b->name, vars[0] ? vars : "no variables");
			else
				sim_fail(s, DIAG_INPUT, w, "thread %u %s %s[%lld], outside its %llu elements (%s)",
					 w->in_block * 32 + (unsigned)lane, verb, b->name, (long long)idx,
					 (unsigned long long)b->elems, vars[0] ? vars : "no variables");
			idx = 0;
		}
		addr[lane] = b->base + (uint64_t)idx * b->elem_bytes;
	}
	return 0;
}

static uint64_t smem_lane_addrs(struct sim *s, struct warp *w, const struct memref *ref, const struct expr *elem,
				uint32_t mask, uint64_t addr[32])
{
	return lane_addrs(s, w, ref, elem, mask, addr, "reads");
}

/* An access whose cost is known, through the shared-memory port; returns when its data is back. */
static uint64_t smem_access_c(struct sim *s, struct smem_cost c, uint64_t now)
{
	struct sim_report *r = s->rep;
	r->smem_accesses++;
	r->smem_wavefronts += c.wavefronts;
	r->bank_conflicts += c.wavefronts > c.phases ? c.wavefronts - c.phases : 0;
	uint64_t start = smem_port_take(s, now, c.wavefronts);
	uint64_t extra = c.ways > 1 ? (uint64_t)(c.ways - 1) * (uint64_t)s->m->smem_conflict_latency : 0;
	return start + (uint64_t)s->m->smem_latency + extra;
}

/*
 * A shared-memory access of `bytes` per lane (the element: 4, 8 or 16;
 * narrower ones take a word, wider ones are taken as 16) through the SM's
 * shared-memory port; returns when its data is back.  8- and 16-byte
 * accesses run in 2 and 4 phases, a wavefront each at least: only the
 * wavefronts beyond those count as bank conflicts, and the latency grows
 * with the worst phase's conflict degree, not with the phases.  stride:
 * lane_addrs' (0: unknown); lanes width apart are consecutive.
 */
static uint64_t smem_access(struct sim *s, const uint64_t addr[32], uint32_t mask, uint32_t bytes, uint64_t stride,
			    uint64_t now)
{
	uint32_t width = bytes <= 4 ? 4 : bytes <= 8 ? 8 : 16;
	return smem_access_c(s, stride == width ? smem_consecutive_cost(mask, width)
						: smem_access_cost_memo(s->smem_memo, addr, mask, width),
			     now);
}

/*
 * Lane L of an ldmatrix .x4 gives row L%8 of matrix L/8; in elements its
 * row is the fragment's first plus ldsm_row[L] * the row stride plus
 * ldsm_col[L].  A, and B stored k-major (ldmatrix .trans): matrices (rows
 * 0-7 | 8-15) x (columns 0-7 | 8-15).  B stored n-major: the rows are n,
 * ldsm_row_n and ldsm_col_n.
 */
static const int8_t ldsm_row[32] = {0, 1, 2,  3,  4,  5,  6,  7,  8, 9, 10, 11, 12, 13, 14, 15,
				    0, 1, 2,  3,  4,  5,  6,  7,  8, 9, 10, 11, 12, 13, 14, 15};
static const int8_t ldsm_col[32] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				    8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
static const int8_t ldsm_row_n[32] = {0, 1, 2,	3,  4,	5,  6,	7,  0,	1,  2,	3,  4,	5,  6,	7,
				      8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15};
static const int8_t ldsm_col_n[32] = {0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8,
				      0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8};

/* The shared addresses of an ldmatrix .x4's rows: lane L's is row[L] rows and col[L] elements past first. */
static void ldsm_addrs(const struct buffer *buf, int64_t first, int64_t ld, const int8_t row[32], const int8_t col[32],
		       uint64_t addr[32])
{
	for (int L = 0; L < 32; L++)
		addr[L] = buf->base + (uint64_t)(first + row[L] * ld + col[L]) * buf->elem_bytes;
}

/*
 * mma's shared reads, at its last LDSM: one ldmatrix .x4 per A fragment and per 16
 * columns of B.  Lane L gives the address of row L%8 of 8x8 matrix L/8 (16 bytes), so
 * the four quarter-warp phases of a 16-byte access are its four matrices: their bank
 * conflicts count as for any shared access (iclass.csv ldsm rows: one 128-byte
 * wavefront per cycle); an LDSM's data comes back ldsm_latency plus
 * ldsm_latency_per_wavefront per wavefront after it issues (a dependent chain: 29
 * cycles conflict-free, 128 at 8-way), and one warp's LDSMs follow each other by ldsm_warp_cycles
 * plus ldsm_warp_wavefront_cycles per wavefront (one warp alone issues a conflict-free
 * one every 21 cycles, an 8-way one every 77).  ldmatrix is warp-collective: all 32
 * lanes' rows are read;
 * the dataflow checks see the rows of the lanes in mask.  Returns when the last
 * fragment is back.
 */
static uint64_t exec_mma(struct sim *s, struct warp *w, const struct insn *in, uint32_t mask, uint64_t now)
{
	int l0 = __builtin_ctz(mask);
	int64_t ai = simt_eval(s, w, l0, &in->src.index), bi = simt_eval(s, w, l0, &in->dst.index);
	int64_t lda = simt_eval(s, w, l0, &in->e[0]), ldb = simt_eval(s, w, l0, &in->e[1]);
	int n8 = in->mma.n8 ? in->mma.tn : 2 * in->mma.tn;
	uint64_t back = now, warp_t = now;
	for (int f = 0; f < mma_ldsm_count(in); f++) {
		bool is_a = f < in->mma.tm;
		const struct memref *ref = is_a ? &in->src : &in->dst;
		const struct buffer *buf = &s->k->bufs[ref->buf];
		/* A[m][k] row-major: 16 rows of m per fragment; B[k][n] row-major: 16 columns; B n-major: 16 rows of n */
		bool n_major = !is_a && in->mma.b_col;
		int64_t ld = is_a ? lda : ldb;
		int64_t first = is_a ? ai + 16 * f * lda : n_major ? bi + 16 * (f - in->mma.tm) * ldb : bi + 16 * (f - in->mma.tm);
		const int8_t *row = n_major ? ldsm_row_n : ldsm_row, *col = n_major ? ldsm_col_n : ldsm_col;
		/*
		 * Every lane's row first, one flag for the bounds: a warp's rows are in them.  Both layouts
		 * have lanes at rows 0 and 15 with columns 0 and 8, and a row's first element is linear in
		 * its row and column, so the lowest and the highest are at those corners.
		 */
		int64_t low = first + (ld < 0 ? 15 * ld : 0), high = first + (ld < 0 ? 0 : 15 * ld) + 8;
		bool out = low < 0 || (uint64_t)high + 8 > buf->elems;
		for (int L = 0; out && L < 32; L++) {
			int64_t idx = first + row[L] * ld + col[L];
			if (idx < 0 || (uint64_t)idx + 8 > buf->elems) {
				sim_fail(s, DIAG_INPUT, w, "mma's ldmatrix row of lane %d reads %s[%lld..%lld], outside its %llu elements",
					 L, buf->name, (long long)idx, (long long)idx + 7, (unsigned long long)buf->elems);
				return now;
			}
		}
		uint64_t addr[32]; /* the rows' addresses, where the checks or the cost below read them */
		bool have_addr = false;
		if (s->checks) {
			ldsm_addrs(buf, first, ld, row, col, addr);
			have_addr = true;
		}
		for (uint32_t m = mask; s->checks && m; m &= m - 1) {
			int lane = __builtin_ctz(m);
			for (uint32_t o = 0; o < 16; o += s->flow_grain)
				flow_read(s, w, lane, addr[lane] + o, now);
		}
		/* the warp's own LDSMs follow each other by their per-warp cost (iclass.csv ldsm, one warp) */
		/*
		 * The cost depends on the rows' addresses relative to each other and to the banks:
		 * an op's fragments repeat theirs from one k-tile to the next (its buffers' stages
		 * are whole multiples of 128 bytes apart), so the last cost of each is kept.  The
		 * rows relative to the first are the op's (its buffer, its layout) and the stride's,
		 * which the key holds with the first row's place among the banks.  Warps whose rows
		 * start at other places (a GEMM's quadrants) keep theirs in other slots.
		 */
		uint64_t key = ((buf->base + (uint64_t)first * buf->elem_bytes) % 128) | (uint64_t)(is_a ? lda : ldb) << 8;
		uint64_t h = ((uint64_t)(in - s->k->code) * 8 + (uint64_t)f) * 0x9e3779b97f4a7c15ull ^ key * 0x100000001b3ull;
		struct mma_cost *mc = &s->mma_costs[(h ^ h >> 29) % MMA_COST_SLOTS];
		struct smem_cost wc;
		if (mc->in == in && mc->f == f + 1 && mc->key == key) {
			wc = (struct smem_cost){.wavefronts = mc->wavefronts, .ways = mc->ways, .phases = mc->phases};
		} else {
			if (!have_addr)
				ldsm_addrs(buf, first, ld, row, col, addr);
			wc = smem_access_cost_memo(s->smem_memo, addr, 0xffffffffu, 16);
			*mc = (struct mma_cost){.in = in, .f = f + 1, .key = key, .wavefronts = wc.wavefronts, .ways = wc.ways,
					       .phases = wc.phases,
					       .wave_latency = (uint64_t)llround(s->m->ldsm_latency_per_wavefront *
										 (double)wc.wavefronts)};
		}
		uint64_t t = smem_access_c(s, wc, now);
		uint64_t alone = warp_t + (uint64_t)s->m->ldsm_latency + mc->wave_latency;
		if (alone > t)
			t = alone;
		warp_t += (uint64_t)s->m->ldsm_warp_cycles + (uint64_t)s->m->ldsm_warp_wavefront_cycles * wc.wavefronts;
		s->mma_fragment_back[f] = t;
		if (t > back)
			back = t;
	}
	s->rep->mma_ops++;
	uint64_t h = (uint64_t)in->mma.tm * (uint64_t)n8 * in->mma.rep;
	s->rep->hmma += h;
	s->rep->tensor_busy += (double)(h * s->cls_ivl[IC_MMA]) / (double)s->m->subpartitions;
	return back;
}

static void global_store(struct sim *s, struct warp *w, const struct memref *ref, const struct expr *elem,
			 uint32_t mask, uint64_t now)
{
	const struct buffer *b = &s->k->bufs[ref->buf];
	uint64_t addr[32];
	uint64_t stride = lane_addrs(s, w, ref, elem, mask, addr, "writes");
	uint64_t sectors[64];
	/* lanes an element apart: gmem_sectors would find them one run */
	uint32_t n = stride && stride == b->elem_bytes ? gmem_sectors_span(addr[0], addr[31] + stride, sectors)
						       : gmem_sectors(addr, mask, b->elem_bytes, sectors);
	gmem_through_l1(s, sectors, n);
	gmem_write(s, now, n);
}

static uint64_t global_load(struct sim *s, struct warp *w, const struct memref *ref, uint32_t mask, uint64_t now)
{
	const struct buffer *b = &s->k->bufs[ref->buf];
	uint64_t addr[32];
	for (uint32_t m = mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		int64_t idx = simt_eval(s, w, lane, &ref->index);
		if (idx < 0 || (uint64_t)idx >= b->elems) {
			sim_fail(s, DIAG_INPUT, w, "thread %u reads %s[%lld], outside its %llu elements",
				 w->in_block * 32 + (unsigned)lane, b->name, (long long)idx,
				 (unsigned long long)b->elems);
			idx = 0;
		}
		addr[lane] = b->base + (uint64_t)idx * b->elem_bytes;
	}
	uint64_t sectors[64];
	uint32_t n = gmem_sectors(addr, mask, b->elem_bytes, sectors);
	return gmem_read_cached(s, w, now, sectors, n, NULL);
}


/* compute(out, in)'s load of in[elem] (op_step 0) or its store of out[elem] (after the chain). */
static void exec_compute(struct sim *s, struct warp *w, const struct insn *in, uint32_t mask, uint64_t now)
{
	if (simt_cur(w)->op_step == 0) {
		uint64_t addr[32], done = 0;
		for (int input = 0; input < (in->src2.buf >= 0 ? 2 : 1); input++) {
			const struct memref *ref = input ? &in->src2 : &in->src;
			uint64_t stride = smem_lane_addrs(s, w, ref, &in->e[1], mask, addr);
			for (uint32_t m = mask; s->checks && m; m &= m - 1) {
				int lane = __builtin_ctz(m);
				const struct flow_word *fw = flow_read(s, w, lane, addr[lane], now);
				if (input || in->from.buf == FROM_OFF)
					continue; /* the provenance check follows the first input's element */
				const struct memref *want = in->from.buf == FROM_OUT ? &in->dst : &in->from;
				flow_provenance(s, w, lane, fw, simt_eval(s, w, lane, &in->e[1]), in->from.buf, want->buf,
						simt_eval(s, w, lane, &want->index));
			}
			uint64_t back = smem_access(s, addr, mask, s->k->bufs[ref->buf].elem_bytes, stride, now);
			done = back > done ? back : done;
		}
		s->anchor_result = done;
		return;
	}
	global_store(s, w, &in->dst, &in->e[1], mask, now);
}

static enum anchor_status done_if(bool done) { return done ? ANCHOR_DONE : ANCHOR_BLOCKED; }

/* Work (copies, compute, memory) and pipeline calls, for the exposure of a wait (warp.calls_from). */
static void note_work(struct warp *w, enum op op, uint64_t now)
{
	switch (op) {
	case OP_PRODUCER_ACQUIRE:
	case OP_PRODUCER_COMMIT:
	case OP_CONSUMER_WAIT:
	case OP_CONSUMER_RELEASE:
	case OP_CONSUMER_WAIT_PRIOR:
	case OP_PIPELINE_WAIT_PRIOR:
	case OP_PIPELINE_COMMIT:
		if (!w->calls_from)
			w->calls_from = now + 1;
		break;
	case OP_MEMCPY_ASYNC:
	case OP_PIPELINE_MEMCPY_ASYNC:
	case OP_BULK_STORE:
	case OP_COMPUTE:
	case OP_FMA:
	case OP_SHFL:
	case OP_SHARED_LOAD:
	case OP_SHARED_STORE:
	case OP_GLOBAL_LOAD:
	case OP_GLOBAL_STORE: w->calls_from = 0; break;
	default: break;
	}
}

enum anchor_status exec_anchor(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	uint32_t mask = simt_mask(w);
	note_work(w, in->op, now);
	switch (in->op) {
	case OP_JMP: {
		/*
		 * A loop's back-edge is the compiled loop's taken BRA at its bottom: the
		 * warp fetches the loop's top before it issues again (chain.csv; an
		 * unrolled loop has no branch).  Its exit falls through.
		 */
		bool back = in->target <= (int32_t)(in - s->k->code) && !in->unrolled;
		simt_jump(s, w, in->target);
		struct simt_entry *e = simt_cur(w);
		/* the bottom branch issues once its predicate is there (a short trip waits for it), then redirects */
		uint64_t bra = e->loop_pred > now ? e->loop_pred : now;
		if (back && bra + s->m->backedge_redirect > e->redirect)
			e->redirect = bra + s->m->backedge_redirect;
		return ANCHOR_MOVED;
	}
	case OP_LET:
	case OP_SET: simt_assign(s, w, in->slot, &in->e[0], mask); return ANCHOR_DONE;
	case OP_BRZ: simt_branch(s, w, in); return ANCHOR_MOVED;
	case OP_EXIT: simt_exit_lanes(s, w, mask, now); return ANCHOR_MOVED;
	case OP_SYNCTHREADS: sync_threads(s, w, now, STALL_SYNCTHREADS); return ANCHOR_BLOCKED;
	case OP_SYNCWARP: simt_syncwarp(s, w, now); return ANCHOR_MOVED;
	case OP_GRID_SYNC: return done_if(sync_grid(s, w, now));
	case OP_MAKE_PIPELINE: return done_if(pipe_make(s, w, in, now));
	case OP_PRODUCER_ACQUIRE: return done_if(pipe_acquire(s, w, in, now));
	case OP_PRODUCER_COMMIT: return done_if(pipe_commit(s, w, in, now));
	case OP_CONSUMER_WAIT: return done_if(pipe_wait(s, w, in, now));
	case OP_CONSUMER_WAIT_FOR: return done_if(pipe_wait_for(s, w, in, now));
	case OP_CONSUMER_RELEASE: return done_if(pipe_release(s, w, in, now));
	case OP_CONSUMER_WAIT_PRIOR:
	case OP_PIPELINE_WAIT_PRIOR: return done_if(pipe_wait_prior(s, w, in, now));
	case OP_QUIT: return done_if(pipe_quit(s, w, in, now));
	case OP_PIPELINE_COMMIT: cpa_commit(s, w, mask); return ANCHOR_DONE;
	case OP_BARRIER_INIT:
	case OP_BARRIER_ARRIVE:
	case OP_BARRIER_WAIT:
	case OP_BARRIER_ARRIVE_AND_WAIT:
	case OP_BARRIER_ARRIVE_AND_DROP:
	case OP_BARRIER_EXPECT_TX:
	case OP_PIPELINE_ARRIVE_ON: return done_if(cbar_exec(s, w, in, now));
	case OP_CG_MEMCPY_ASYNC:
	case OP_CG_WAIT: return ANCHOR_DONE; /* the loader lowers them to memcpy_async, commit, wait_prior and a sync */
	case OP_BARRIER_TRY_WAIT:
	case OP_BARRIER_TEST_WAIT: return done_if(cbar_poll(s, w, in, now));
	case OP_NANOSLEEP: return done_if(sched_nanosleep(s, w, in, now));
	case OP_MEMCPY_ASYNC:
	case OP_PIPELINE_MEMCPY_ASYNC: return copy_issue(s, w, in, now) ? ANCHOR_DONE : ANCHOR_AGAIN;
	case OP_COMPUTE: exec_compute(s, w, in, mask, now); return ANCHOR_DONE;
	case OP_SHARED_LOAD:
	case OP_SHARED_STORE: {
		uint64_t addr[32];
		uint64_t stride = smem_lane_addrs(s, w, &in->src, NULL, mask, addr);
		for (uint32_t m = mask; s->checks && m; m &= m - 1) {
			int lane = __builtin_ctz(m);
			if (in->op == OP_SHARED_LOAD)
				flow_read(s, w, lane, addr[lane], now);
			else
				flow_copy(s, w, lane, addr[lane], s->k->bufs[in->src.buf].elem_bytes, -1, -1, now, FLOW_PLAIN, -1,
					  s->blocks[w->block].sync_gen);
		}
		uint64_t back = smem_access(s, addr, mask, s->k->bufs[in->src.buf].elem_bytes, stride, now);
		if (in->op == OP_SHARED_LOAD)
			s->anchor_result = back;
		return ANCHOR_DONE;
	}
	case OP_GLOBAL_LOAD: s->anchor_result = global_load(s, w, &in->src, mask, now); return ANCHOR_DONE;
	case OP_GLOBAL_STORE: global_store(s, w, &in->src, NULL, mask, now); return ANCHOR_DONE;
	case OP_MMA: s->anchor_result = exec_mma(s, w, in, mask, now); return ANCHOR_DONE;
	case OP_FENCE_PROXY_ASYNC: flow_proxy_fence(s, w, mask); return ANCHOR_DONE;
	case OP_BULK_STORE: bulk_store(s, w, in, now); return ANCHOR_DONE;
	case OP_BULK_COMMIT_GROUP: bulk_commit(s, w); return ANCHOR_DONE;
	case OP_BULK_WAIT_GROUP: return done_if(bulk_wait(s, w, in, now));
	case OP_FMA:
	case OP_SHFL:
	case OP_COUNT: break;
	}
	return ANCHOR_DONE;
}

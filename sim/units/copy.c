/*
 * copy: memcpy_async and __pipeline_memcpy_async through the copy engines.
 *
 * LDGSTS: a group copy is split among the group's threads as libcudacxx
 * does: chunks of c = min(align, 16) bytes, thread r copying offsets r*c,
 * r*c + |g|*c, ... below bytes.  Each chunk is one cp.async by that thread;
 * one warp-instruction issues one round of chunks for its lanes.  A chunk
 * reads global memory (sectors, latency, bandwidth), is written into shared
 * memory after the warp's copies before it (gmem_fill) at the port's width
 * (a wavefront per 128 bytes, whatever its lanes' banks) and lands; the landing
 * cycle is known when it issues.  Where the copy completes:
 *   pipeline (block or thread scope), primitives: the thread's open
 *     cp.async batch, closed by the next commit;
 *   cuda::barrier: the barrier's pending count grows now and shrinks when
 *     the thread's copies land (cp.async.mbarrier.arrive, net zero).
 * Bulk (TMA): with a barrier and 16-byte alignment Hopper elects one thread
 * of the group to issue one cp.async.bulk of all the bytes, with
 * expect_tx now and complete_tx at landing.  Pipelines never take it.
 * Alignment below 4 bytes: no async copy at all — the threads load and
 * store, waiting for memory (the report warns about it).
 */
#include <string.h>

#include "smem.h"
#include "simint.h"


/* Chunks thread r of a group of n threads copies out of bytes, chunk size c. */
static int64_t chunks_of(int64_t r, int64_t n, int64_t c, int64_t bytes)
{
	int64_t first = r * c;
	if (first >= bytes)
		return 0;
	/* The usual copy fits in the group's first round: one chunk, and no divide per lane. */
	if (bytes - first <= n * c)
		return 1;
	return (bytes - first + n * c - 1) / (n * c);
}

/*
 * Where a copy's lanes put their chunks: the two buffers' bases, element
 * sizes and byte limits and the chunk size, held apart from the buffers
 * so that the stores of the lanes' addresses cannot alias them.
 */
struct chunk_geom {
	uint64_t dbase, sbase, deb, seb, dlim, slim, c;
};

/* The chunk at byte off of dst[di] and src[si]: its addresses; true when it lies outside either buffer. */
static inline bool chunk_at(const struct chunk_geom *g, int64_t di, int64_t si, uint64_t off, uint64_t *gaddr,
			    uint64_t *saddr)
{
	uint64_t dbyte = (uint64_t)di * g->deb + off, sbyte = (uint64_t)si * g->seb + off;
	*gaddr = g->sbase + sbyte;
	*saddr = g->dbase + dbyte;
	return (di < 0) | (si < 0) | (dbyte + g->c > g->dlim) | (sbyte + g->c > g->slim);
}

/*
 * Per-lane indices of a full warp that rise by one step from lane to lane
 * (tid * 8 + ...): their steps, for address and bound checks from the two
 * ends.  rising is false where they do not, or would leave int64 on the
 * way (then lane 0 and lane 31 would not bound the others).  ends_only:
 * the index arrays hold lanes 0 and 31 alone (both indices came from
 * simt_eval_rise), and rise_fill writes the lanes between before a lane
 * loop reads them.
 */
struct rise {
	bool rising, ends_only;
	int64_t dst_step, src_step;
};

static void rise_fill(struct rise *r, int64_t dsti[32], int64_t srci[32])
{
	if (!r->ends_only)
		return;
	expr_fill_rise(dsti, dsti[0], r->dst_step);
	expr_fill_rise(srci, srci[0], r->src_step);
	r->ends_only = false;
}

/* Whether v rises by *step from each lane to the next, lane 31 reached within int64. */
static bool progression(const int64_t v[32], int64_t *step)
{
	uint64_t d = (uint64_t)v[1] - (uint64_t)v[0], differ = 0;
	for (int l = 1; l < 32; l++)
		differ |= ((uint64_t)v[l] - (uint64_t)v[l - 1]) ^ d;
	int64_t rise, last;
	*step = (int64_t)d;
	return !differ && !__builtin_mul_overflow((int64_t)d, (int64_t)31, &rise) &&
	       !__builtin_add_overflow(v[0], rise, &last) && last == v[31];
}

static struct rise rise_of(uint32_t mask, bool uni_dst, const int64_t dsti[32], bool uni_src, const int64_t srci[32])
{
	struct rise r = {false, false, 0, 0};
	r.rising = mask == 0xffffffffu && !uni_dst && !uni_src && progression(dsti, &r.dst_step) &&
		   progression(srci, &r.src_step);
	return r;
}

/*
 * This round's chunks when the byte count is warp-uniform (the usual
 * copy): lane l's chunk lies l chunks after the warp's first (a group copy)
 * or at the same offset (a thread's own copy), so the lanes with a chunk
 * are a prefix of mask and each lane's addresses are a multiply-add, with
 * one out-of-bounds flag for all.  The index of lane l is dsti[l * dstep]
 * (dstep 0: one uniform value), srci likewise.  Returns the rounds the copy
 * takes (copy_issue's lane loop would find the same), or -1 where that loop
 * has an error to word.  *run: a full warp's chunks lie back to back in
 * both memories, each c bytes after the one before (gaddr and saddr then
 * hold lanes 0 and 31 alone: the range they span says the rest).
 */
static int64_t uniform_chunks(struct sim *s, const struct warp *w, const struct insn *in, uint32_t round,
			      int64_t bytes, int64_t *dsti, size_t dstep, int64_t *srci, size_t sstep, struct rise *rise,
			      uint64_t gaddr[32], uint64_t saddr[32], int64_t sidx[32], uint32_t *lanes, bool *run)
{
	uint32_t mask = simt_mask(w);
	const struct buffer *dst = &s->k->bufs[in->dst.buf], *src = &s->k->bufs[in->src.buf];
	int64_t c = in->align < 16 ? in->align : 16;
	bool block = in->group == GROUP_BLOCK;
	int64_t group = block ? s->launch.block_size : 1;
	if (bytes < 0 || c <= 0)
		return -1;
	int64_t step = block ? c : 0;                       /* bytes between adjacent lanes' chunks */
	int64_t r = block ? (int64_t)w->in_block * 32 : 0; /* lane 0's rank in the group */
	int64_t off0 = r * c + (int64_t)round * group * c;  /* lane 0's chunk offset */
	const struct chunk_geom g = {dst->base, src->base, dst->elem_bytes, src->elem_bytes,
				     dst->elems * dst->elem_bytes, src->elems * src->elem_bytes, (uint64_t)c};
	uint32_t got = 0;
	bool bad = false, per_lane = dstep || sstep;
	int64_t last = 0;
	if (!block && per_lane && mask == 0xffffffffu && !s->checks) {
		/*
		 * A full warp's own copies at per-lane indices (the usual thread-scope
		 * copy): every lane's chunk is at off0, so all 32 copy or none, in a
		 * loop without the mask walk.
		 */
		if (off0 < bytes && rise->rising && !chunk_at(&g, dsti[0], srci[0], (uint64_t)off0, &gaddr[0], &saddr[0]) &&
		    !chunk_at(&g, dsti[31], srci[31], (uint64_t)off0, &gaddr[31], &saddr[31])) {
			/* both ends inside: so is every lane between, its addresses a step past the one before */
			uint64_t ga = gaddr[0], sa = saddr[0];
			uint64_t gstep = (uint64_t)rise->src_step * g.seb, sstep_bytes = (uint64_t)rise->dst_step * g.deb;
			*run = gstep == g.c && sstep_bytes == g.c && (c == 4 || c == 8 || c == 16);
			for (int lane = 1; lane < 31 && !*run; lane++) {
				ga += gstep;
				sa += sstep_bytes;
				gaddr[lane] = ga;
				saddr[lane] = sa;
			}
			got = mask;
		} else if (off0 < bytes) {
			rise_fill(rise, dsti, srci);
			for (int lane = 0; lane < 32; lane++)
				bad |= chunk_at(&g, dsti[(size_t)lane * dstep], srci[(size_t)lane * sstep], (uint64_t)off0,
						&gaddr[lane], &saddr[lane]);
			got = mask;
		}
	} else if (block && !per_lane && mask == 0xffffffffu && !s->checks && (c == 4 || c == 8 || c == 16) &&
		   off0 + 31 * step < bytes) {
		/*
		 * A full warp's group copy at uniform indices (the usual block copy)
		 * with a chunk in every lane: lane l's lies l chunks after lane 0's
		 * in both memories, so lanes 0 and 31 say the rest (*run), as the
		 * loop below and the sector and bank counts' run cases would find;
		 * the loop over 32 lanes, gmem_sectors and the bank cost's memo were
		 * 1 000 host instructions a copy of with_staging_unified.
		 */
		last = off0 + 31 * step;
		chunk_at(&g, dsti[0], srci[0], (uint64_t)off0, &gaddr[0], &saddr[0]);
		chunk_at(&g, dsti[0], srci[0], (uint64_t)last, &gaddr[31], &saddr[31]);
		*run = true;
		got = mask;
	} else {
		rise_fill(rise, dsti, srci);
		for (uint32_t m = mask; m; m &= m - 1) {
			int lane = __builtin_ctz(m);
			int64_t off = off0 + lane * step;
			if (off >= bytes)
				break; /* this lane's copy is done, and so are those after it */
			bool out = chunk_at(&g, dsti[(size_t)lane * dstep], srci[(size_t)lane * sstep], (uint64_t)off,
					    &gaddr[lane], &saddr[lane]);
			if (per_lane)
				bad |= out;
			last = off;
			if (s->checks)
				sidx[lane] = (int64_t)((gaddr[lane] - g.sbase) / g.seb);
			got |= 1u << lane;
		}
	}
	if (got && !per_lane) {
		/* uniform indices inside their buffers: nothing wraps, so the furthest chunk is the last one */
		uint64_t dbyte = (uint64_t)dsti[0] * dst->elem_bytes + (uint64_t)last;
		uint64_t sbyte = (uint64_t)srci[0] * src->elem_bytes + (uint64_t)last;
		bad = dsti[0] < 0 || srci[0] < 0 || (uint64_t)dsti[0] >= dst->elems || (uint64_t)srci[0] >= src->elems ||
		      dbyte + (uint64_t)c > g.dlim || sbyte + (uint64_t)c > g.slim;
	}
	if (bad)
		return -1;
	*lanes = got;
	/* chunks_of falls with the rank: the first lane of mask has the most */
	return chunks_of(block ? r + __builtin_ctz(mask) : 0, group, c, bytes);
}

/* Lane's zero-filled tail bytes: zf's where the copy has a zfill (copy_issue evaluates them only then), else 0. */
static inline int64_t zfill_at(const struct insn *in, const int64_t zf[32], int lane)
{
	return in->zfill ? zf[lane] : 0;
}

bool copy_bulk(const struct insn *in) { return in->op == OP_MEMCPY_ASYNC && in->bar >= 0 && in->align >= 16; }

/* What completes a copy by this lane, for the dataflow checks. */
static void completion(struct sim *s, struct warp *w, const struct insn *in, int lane, uint32_t bar_elem,
		       enum flow_kind *kind, int *obj, uint32_t *seq)
{
	if (in->bar >= 0) {
		*kind = FLOW_BAR;
		*obj = (int)bar_elem;
		*seq = 0;
	} else if (in->obj >= 0 && s->k->pipes[in->obj].scope == PIPE_SCOPE_BLOCK) {
		/* Synchronous fallback copies too: the stage's barrier orders them before consumer_wait. */
		*kind = FLOW_PIPE;
		*obj = in->obj;
		*seq = pipe_copy_seq(s, w, in->obj, lane);
	} else if (in->align < 4) {
		*kind = FLOW_PLAIN;
		*obj = -1;
		*seq = s->blocks[w->block].sync_gen;
	} else {
		*kind = FLOW_GROUP;
		*obj = -1;
		*seq = cpa_epoch(s, w, lane);
	}
}

/*
 * The copy's preconditions for one thread, at its first round; false after
 * a program error naming the thread, the addresses and the rule.
 *   __pipeline_memcpy_async (PTX cp.async, "cp-size"): shared and global
 *     addresses aligned to the 4, 8 or 16 bytes copied;
 *   memcpy_async (libcudacxx __memcpy_async_check_pre): both pointers
 *     aligned to align = max(alignof(T), aligned_size_t's N); with an
 *     aligned_size_t<N> ("align" given), bytes a multiple of N (its
 *     constructor asserts it, cuda/__memory/aligned_size.h);
 *   bulk (PTX cp.async.bulk): 16-byte aligned addresses, a size that is a
 *     positive multiple of 16 (checked in bulk_issue).
 */
static bool copy_pre(struct sim *s, struct warp *w, const struct insn *in, int lane, int64_t bytes, int64_t di,
		     int64_t si)
{
	const struct buffer *dst = &s->k->bufs[in->dst.buf], *src = &s->k->bufs[in->src.buf];
	uint32_t tid = w->in_block * 32 + (uint32_t)lane;
	uint64_t da = dst->base + (uint64_t)di * dst->elem_bytes, sa = src->base + (uint64_t)si * src->elem_bytes;
	uint64_t a = in->align;
	bool prim = in->op == OP_PIPELINE_MEMCPY_ASYNC;
	const char *call = prim ? "__pipeline_memcpy_async" : "memcpy_async";
	if (da % a || sa % a) {
		bool d_bad = da % a != 0;
		sim_fail(s, DIAG_INPUT, w,
			 "program error: thread %u: %s of %lld bytes to %s[%lld] (shared address %llu) from %s[%lld] "
			 "(global address %llu): the %s address is not aligned to %llu bytes, and %s",
			 tid, call, (long long)bytes, dst->name, (long long)di, (unsigned long long)da, src->name,
			 (long long)si, (unsigned long long)sa, d_bad ? "destination" : "source", (unsigned long long)a,
			 prim ? "PTX cp.async needs both aligned to the copy size"
			      : "memcpy_async needs both pointers aligned to max(alignof(T), aligned_size_t's N) "
				"(libcudacxx __memcpy_async_check_pre)");
		return false;
	}
	if (in->sized && bytes % (int64_t)a) {
		sim_fail(s, DIAG_INPUT, w,
			 "program error: thread %u: memcpy_async to %s[%lld] with cuda::aligned_size_t<%llu>(%lld): "
			 "the size must be a multiple of the alignment (aligned_size_t's precondition)",
			 tid, dst->name, (long long)di, (unsigned long long)a, (long long)bytes);
		return false;
	}
	return true;
}

bool copy_bulk_ok(struct sim *s, struct warp *w, const char *what, uint32_t tid, int64_t bytes,
		  const struct buffer *dst, int64_t di, const struct buffer *src, int64_t si)
{
	uint64_t dbyte = (uint64_t)di * dst->elem_bytes, sbyte = (uint64_t)si * src->elem_bytes;
	if (bytes <= 0 || bytes % 16 || di < 0 || si < 0 || dbyte + (uint64_t)bytes > dst->elems * dst->elem_bytes ||
	    sbyte + (uint64_t)bytes > src->elems * src->elem_bytes) {
		sim_fail(s, DIAG_INPUT, w,
			 "program error: thread %u: %s of %lld bytes from %s[%lld] to %s[%lld]: PTX "
			 "cp.async.bulk needs a size that is a positive multiple of 16, inside both buffers",
			 tid, what, (long long)bytes, src->name, (long long)si, dst->name, (long long)di);
		return false;
	}
	uint64_t da = dst->base + dbyte, sa = src->base + sbyte;
	if (da % 16 || sa % 16) {
		sim_fail(s, DIAG_INPUT, w,
			 "program error: thread %u: %s of %lld bytes to %s[%lld] (%s address %llu) from %s[%lld] (%s "
			 "address %llu): PTX cp.async.bulk needs both addresses 16-byte aligned",
			 tid, what, (long long)bytes, dst->name, (long long)di,
			 dst->space == SPACE_SHARED ? "shared" : "global", (unsigned long long)da, src->name, (long long)si,
			 src->space == SPACE_SHARED ? "shared" : "global", (unsigned long long)sa);
		return false;
	}
	return true;
}

static bool bulk_issue(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	uint32_t mask = simt_mask(w);
	uint32_t elem = 0;
	int64_t id = cbar_resolve(s, w, in, &elem);
	if (id < 0)
		return true;
	const struct buffer *dst = &s->k->bufs[in->dst.buf], *src = &s->k->bufs[in->src.buf];
	for (uint32_t m = mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		uint32_t tid = w->in_block * 32 + (uint32_t)lane;
		/* The group elects its rank-0 thread; a thread-sized group is its own. */
		if (in->group == GROUP_BLOCK && tid != 0)
			continue;
		int64_t bytes = simt_eval(s, w, lane, &in->e[0]);
		int64_t di = simt_eval(s, w, lane, &in->dst.index), si = simt_eval(s, w, lane, &in->src.index);
		if (!copy_bulk_ok(s, w, "bulk copy", tid, bytes, dst, di, src, si))
			return true;
		uint64_t dbyte = (uint64_t)di * dst->elem_bytes, sbyte = (uint64_t)si * src->elem_bytes;
		if (!copy_pre(s, w, in, lane, bytes, di, si))
			return true;
		uint32_t nsec = (uint32_t)((bytes + 31) / 32);
		uint64_t unloaded = gmem_unloaded_bulk(s, (src->base + sbyte) / 32, nsec); /* before the read fetches */
		/* The bulk engine streams the whole request through the DRAM (or L2) queue at once. */
		uint64_t arrive = gmem_read_bulk(s, now, (src->base + sbyte) / 32, nsec) +
				  (uint64_t)s->m->bulk_extra_latency;
		uint64_t land = gmem_fill(w, s->m, arrive, (uint32_t)bytes) + (uint64_t)bytes / 128;
		smem_port_fill(s, land - (uint64_t)bytes / 128, (uint32_t)((uint64_t)bytes / 128));
		if (land > s->mem.copies_land)
			s->mem.copies_land = land;
		if (!in->complete_tx && !in->tx_only) /* the kernel's own expect_tx (arrive.expect_tx, barrier_expect_tx) announced the bytes */
			mbar_expect_tx(s, (uint32_t)id, bytes, now);
		mbar_note_copy(s, (uint32_t)id, now, land);
		mbar_complete_tx_later(s, (uint32_t)id, land, bytes);
		s->rep->bulk_copies++;
		s->rep->bulk_bytes += (uint64_t)bytes;
		stats_copy(s, 1, (uint32_t)bytes, now, land,
			   unloaded + (uint64_t)s->m->bulk_extra_latency +
				   (uint64_t)bytes / 128);
		flow_async_write(s, w, lane, dst->base + dbyte, (uint32_t)bytes);
		flow_copy(s, w, lane, dst->base + dbyte, (uint32_t)bytes, in->src.buf, si, land, FLOW_BAR, (int)elem,
			  s->mbars[id].phase);
	}
	return true;
}

/*
 * Whether a rise's lanes all pass copy_pre's alignment test, from lane 0's
 * addresses and the steps (every lane's address is lane 0's plus a
 * multiple of the step); false where that cannot tell (then lanes_aligned).
 */
static bool rise_aligned(const struct sim *s, const struct insn *in, const int64_t *dsti, const int64_t *srci,
			 const struct rise *rise)
{
	uint64_t a = in->align;
	if (!rise->rising || in->sized || a == 0 || (a & (a - 1)))
		return false;
	const struct buffer *dst = &s->k->bufs[in->dst.buf], *src = &s->k->bufs[in->src.buf];
	uint64_t any = (dst->base + (uint64_t)dsti[0] * dst->elem_bytes) | (uint64_t)rise->dst_step * dst->elem_bytes |
		       (src->base + (uint64_t)srci[0] * src->elem_bytes) | (uint64_t)rise->src_step * src->elem_bytes;
	return (any & (a - 1)) == 0;
}

/*
 * Whether copy_pre would pass every lane of mask: both addresses aligned (and an aligned_size_t's
 * size a multiple of it), checked at once on their OR for a power-of-two alignment; false sends
 * the lanes through copy_pre, which reports the first that fails.
 */
static bool lanes_aligned(const struct sim *s, const struct insn *in, uint32_t mask, bool uni_bytes, int64_t ubytes,
			  const int64_t *nbytes, bool uni_dst, int64_t udst, const int64_t *dsti, bool uni_src,
			  int64_t usrc, const int64_t *srci)
{
	uint64_t a = in->align;
	if (a == 0 || (a & (a - 1)))
		return false;
	const struct buffer *dst = &s->k->bufs[in->dst.buf], *src = &s->k->bufs[in->src.buf];
	uint64_t any = 0;
	if (mask == 0xffffffffu && !uni_dst && !uni_src && !in->sized) {
		/* a full warp's own indices (the usual copy at per-lane indices): no mask walk, no choice per lane */
		uint64_t dbase = dst->base, deb = dst->elem_bytes, sbase = src->base, seb = src->elem_bytes;
		for (int lane = 0; lane < 32; lane++)
			any |= (dbase + (uint64_t)dsti[lane] * deb) | (sbase + (uint64_t)srci[lane] * seb);
		return (any & (a - 1)) == 0;
	}
	for (uint32_t mm = mask; mm; mm &= mm - 1) {
		int lane = __builtin_ctz(mm);
		any |= (dst->base + (uint64_t)(uni_dst ? udst : dsti[lane]) * dst->elem_bytes) |
		       (src->base + (uint64_t)(uni_src ? usrc : srci[lane]) * src->elem_bytes);
		if (in->sized)
			any |= (uint64_t)(uni_bytes ? ubytes : nbytes[lane]);
	}
	return (any & (a - 1)) == 0;
}

bool copy_issue(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	const struct machine *m = s->m;
	struct simt_entry *e = simt_cur(w);
	if (copy_bulk(in))
		return bulk_issue(s, w, in, now);
	uint32_t mask = simt_mask(w);
	uint32_t round = e->op_step;
	int64_t group = in->group == GROUP_BLOCK ? s->launch.block_size : 1;
	int64_t c = in->align < 16 ? in->align : 16;
	const struct buffer *dst = &s->k->bufs[in->dst.buf], *src = &s->k->bufs[in->src.buf];
	uint32_t bar_elem = 0;
	int64_t bar = -1;
	if (in->bar >= 0 && (bar = cbar_resolve(s, w, in, &bar_elem)) < 0)
		return true;

	uint64_t gaddr[32], saddr[32];
	int64_t sidx[32], nbytes[32], dsti[32], srci[32];
	uint32_t lanes = 0;
	int64_t rounds = -1; /* -1: lane by lane below */
	/* Warp-uniform operands (the usual case) stay one value instead of 32 copies. */
	int64_t ubytes, udst, usrc;
	bool uni_bytes = simt_eval_some(s, w, &in->e[0], mask, &ubytes, nbytes);
	bool uni_dst, uni_src;
	struct rise rise;
	int64_t dends[2], sends[2];
	bool dst_rises = mask == 0xffffffffu && in->dst.index.lane_affine &&
			 simt_eval_rise(s, w, &in->dst.index, dends, &rise.dst_step);
	if (dst_rises) {
		dsti[0] = dends[0];
		dsti[31] = (int64_t)((uint64_t)dends[0] + 31 * (uint64_t)rise.dst_step);
	}
	if (dst_rises && in->src.index.lane_affine && simt_eval_rise(s, w, &in->src.index, sends, &rise.src_step)) {
		/* both rise from lane to lane (tid * 8 + ...): their ends, the lanes between only if a lane loop needs them */
		uni_dst = uni_src = false;
		rise.rising = rise.ends_only = true;
		srci[0] = sends[0];
		srci[31] = (int64_t)((uint64_t)sends[0] + 31 * (uint64_t)rise.src_step);
	} else if (dst_rises) {
		/*
		 * The destination rises and the source is a variable's lanes (the cp.async GEMM's chunk_src):
		 * the destination's ends as above, and the source's lanes say whether it rises too, as rise_of
		 * would (a rise's lanes are a progression).  rise_fill writes the source's lanes again, the same.
		 */
		uni_dst = false;
		uni_src = simt_eval_some(s, w, &in->src.index, mask, &usrc, srci);
		rise.rising = !uni_src && progression(srci, &rise.src_step);
		rise.ends_only = rise.rising;
		if (!rise.rising)
			expr_fill_rise(dsti, dends[0], rise.dst_step);
	} else {
		uni_dst = simt_eval_some(s, w, &in->dst.index, mask, &udst, dsti);
		uni_src = simt_eval_some(s, w, &in->src.index, mask, &usrc, srci);
		rise = rise_of(mask, uni_dst, dsti, uni_src, srci);
	}
	if (round == 0 && in->group == GROUP_BLOCK && !(uni_bytes && uni_dst && uni_src)) {
		/*
		 * cooperative_groups::memcpy_async(group, dst, src, size) is collective: every
		 * thread of the group passes the same arguments (libcudacxx splits the one copy
		 * among them by rank).  Threads that pass their own would each be read as
		 * copying a share of a different copy.
		 */
		rise_fill(&rise, dsti, srci);
		int l0 = __builtin_ctz(mask);
		for (uint32_t mm = mask & (mask - 1); mm; mm &= mm - 1) {
			int l = __builtin_ctz(mm);
			const char *what = !uni_dst && dsti[l] != dsti[l0]	       ? "destination"
					   : !uni_src && srci[l] != srci[l0]	       ? "source"
					   : !uni_bytes && nbytes[l] != nbytes[l0] ? "size"
										   : NULL;
			if (what) {
				sim_fail(s, DIAG_INPUT, w,
					 "program error: memcpy_async(block, ...) with a %s that differs between threads %u and "
					 "%u: a group copy takes the same arguments from every thread of the group",
					 what, w->in_block * 32 + (uint32_t)l0, w->in_block * 32 + (uint32_t)l);
				return true;
			}
		}
	}
	if (round == 0) {
		if (uni_bytes && uni_dst && uni_src) {
			if (!copy_pre(s, w, in, __builtin_ctz(mask), ubytes, udst, usrc))
				return true;
		} else if (!rise_aligned(s, in, dsti, srci, &rise)) {
			rise_fill(&rise, dsti, srci);
			if (!lanes_aligned(s, in, mask, uni_bytes, ubytes, nbytes, uni_dst, udst, dsti, uni_src, usrc, srci)) {
				/* one lane is not: copy_pre finds it and says which */
				for (uint32_t mm = mask; mm; mm &= mm - 1) {
					int lane = __builtin_ctz(mm);
					if (!copy_pre(s, w, in, lane, uni_bytes ? ubytes : nbytes[lane],
						      uni_dst ? udst : dsti[lane], uni_src ? usrc : srci[lane]))
						return true;
				}
			}
		}
	}
	/*
	 * Per lane: zero-filled tail bytes (__pipeline_memcpy_async's zfill), read as zfill_at; zeroed
	 * only for a copy with a zfill (a copy's 256-byte memset was 37 host instructions).
	 */
	int64_t zf[32];
	if (in->zfill) {
		memset(zf, 0, sizeof zf);
		simt_eval_lanes(s, w, &in->e[1], mask, zf);
	}
	bool run = false; /* gaddr and saddr: lanes 0 and 31 of a run of chunks (uniform_chunks) */
	if (uni_bytes && !in->zfill)
		rounds = uniform_chunks(s, w, in, round, ubytes, uni_dst ? &udst : dsti, uni_dst ? 0 : 1,
					uni_src ? &usrc : srci, uni_src ? 0 : 1, &rise, gaddr, saddr, sidx, &lanes, &run);
	bool by_lane = rounds < 0;
	if (by_lane) {
		rounds = 0;
		run = false;
		rise_fill(&rise, dsti, srci);
	}
	for (uint32_t mm = by_lane ? mask : 0; mm; mm &= mm - 1) {
		int lane = __builtin_ctz(mm);
		int64_t r = in->group == GROUP_BLOCK ? (int64_t)(w->in_block * 32 + (uint32_t)lane) : 0;
		int64_t bytes = uni_bytes ? ubytes : nbytes[lane];
		if (bytes < 0) {
			sim_fail(s, DIAG_INPUT, w, "memcpy_async of %lld bytes", (long long)bytes);
			return true;
		}
		int64_t n = chunks_of(r, group, c, bytes);
		if (n > rounds)
			rounds = n;
		if ((int64_t)round >= n)
			continue;
		int64_t off = r * c + (int64_t)round * group * c;
		int64_t di = uni_dst ? udst : dsti[lane], si = uni_src ? usrc : srci[lane];
		uint64_t dbyte = (uint64_t)di * dst->elem_bytes + (uint64_t)off;
		uint64_t sbyte = (uint64_t)si * src->elem_bytes + (uint64_t)off;
		int64_t zfill = zfill_at(in, zf, lane);
		if (zfill < 0 || zfill > c) {
			sim_fail(s, DIAG_INPUT, w,
				 "program error: thread %u: __pipeline_memcpy_async of %lld bytes with zfill %lld: PTX "
				 "cp.async's src-size (bytes - zfill) must lie in 0..%lld",
				 w->in_block * 32 + (unsigned)lane, (long long)c, (long long)zfill, (long long)c);
			return true;
		}
		uint64_t sread = (uint64_t)(c - zfill); /* bytes read from the source: only they must be valid */
		if (di < 0 || (sread && si < 0) || dbyte + (uint64_t)c > dst->elems * dst->elem_bytes ||
		    (sread && sbyte + sread > src->elems * src->elem_bytes)) {
			bool dst_bad = di < 0 || dbyte + (uint64_t)c > dst->elems * dst->elem_bytes;
			const struct buffer *bad = dst_bad ? dst : src;
			char text[256], vals[256], vars[512];
			sim_op_text(s, w, dst_bad ? "dst" : "src", text, sizeof text);
			simt_substitute(s, w, lane, text, vals, sizeof vals);
			simt_describe_lane(s, w, lane, vars, sizeof vars);
			sim_fail(s, DIAG_INPUT, w,
				 "thread %u copies %lld bytes from %s[%lld] + %lld to %s[%lld] + %lld, outside %s (%llu "
				 "elements of %u bytes): %s \"%s\" = %s (%s)",
				 w->in_block * 32 + (unsigned)lane, (long long)c, src->name, (long long)si, (long long)off,
				 dst->name, (long long)di, (long long)off, bad->name, (unsigned long long)bad->elems,
				 (unsigned)bad->elem_bytes, dst_bad ? "dst" : "src", text, vals, vars[0] ? vars : "no variables");
			return true;
		}
		gaddr[lane] = src->base + sbyte;
		saddr[lane] = dst->base + dbyte;
		if (s->checks)
			sidx[lane] = (int64_t)(sbyte / src->elem_bytes); /* for the dataflow checks only */
		lanes |= 1u << lane;
	}
	if (lanes) {
		uint64_t sectors[64];
		uint32_t reads = lanes; /* lanes that read global memory: all but those zero-filling their whole copy */
		for (uint32_t mm = in->zfill ? lanes : 0; mm; mm &= mm - 1)
			if (zf[__builtin_ctz(mm)] >= c)
				reads &= ~(mm & -mm);
		uint32_t nsec = !reads ? 0
				: run ? gmem_sectors_span(gaddr[0], gaddr[31] + (uint64_t)c, sectors)
				      : gmem_sectors(gaddr, reads, (uint32_t)c, sectors);
		uint64_t unloaded; /* before the read fetches */
		/* a 4- or 8-byte cp.async is LDGSTS.E, through L1; a 16-byte one LDGSTS.E.BYPASS.128 */
		struct gmem_spread spread = {0, 0};
		uint64_t arrive = gmem_read_copy(s, w, now, sectors, nsec, c < 16, &spread, &unloaded) +
				  (c >= 4 ? (uint64_t)m->cp_async_extra_latency : 0);
		/* the warp's fill queue serves its copies in issue order: at their median arrival, each landing its own spread later */
		arrive = (uint64_t)((int64_t)arrive - spread.landed);
		uint32_t nl = (uint32_t)__builtin_popcount(lanes);
		uint32_t bytes = nl * (uint32_t)c;
		uint32_t ideal = (bytes + 127) / 128;
		/*
		 * A cp.async fill writes what it brings at the port's width, whatever its lanes'
		 * banks: one warp's compute load waits ~89 cycles after a wait_prior whether the
		 * copies before it were 32 lanes wide or 2-8 lanes 64-256 bytes apart (D = 1-16 at
		 * 1-4 warps an SM, overwait_stamps.csv), where a fill by its lanes' bank wavefronts
		 * queued that load 200-750 cycles.  A copy under 4 bytes is the threads' own
		 * load and STS, whose banks count.
		 */
		struct smem_cost sc = {.wavefronts = ideal};
		if (c < 4)
			sc = run ? smem_consecutive_cost(lanes, (uint32_t)c)
				 : smem_access_cost_memo(s->smem_memo, saddr, lanes, 4);
		s->rep->smem_wavefronts += sc.wavefronts;
		s->rep->bank_conflicts += sc.wavefronts > ideal ? sc.wavefronts - ideal : 0;
		uint64_t land = (uint64_t)((int64_t)gmem_fill(w, s->m, arrive, bytes) + spread.landed) +
				(uint64_t)sc.wavefronts * (uint64_t)m->smem_wavefront_cycles;
		smem_port_fill(s, land - (uint64_t)sc.wavefronts * (uint64_t)m->smem_wavefront_cycles, sc.wavefronts);
		if (land > s->mem.copies_land)
			s->mem.copies_land = land;
		stats_copy(s, nl, (uint32_t)c, now, land,
			   (uint64_t)((int64_t)unloaded + spread.idle) +
				   (c >= 4 ? (uint64_t)m->cp_async_extra_latency : 0) +
				   (uint64_t)sc.wavefronts * (uint64_t)m->smem_wavefront_cycles);
		if (c < 4) {
			/*
			 * Under 4-byte alignment libcudacxx gives up on cp.async: the
			 * threads load into registers and store, waiting for memory.
			 */
			s->rep->sync_copies += nl;
			s->anchor_result = land;
		}
		for (uint32_t mm = s->checks ? lanes : 0; mm; mm &= mm - 1) {
			int lane = __builtin_ctz(mm);
			enum flow_kind kind;
			int obj;
			uint32_t seq;
			completion(s, w, in, lane, bar_elem, &kind, &obj, &seq);
			if (kind == FLOW_BAR)
				seq = s->mbars[bar].phase;
			uint32_t sread = (uint32_t)(c - zfill_at(in, zf, lane));
			if (sread)
				flow_copy(s, w, lane, saddr[lane], sread, in->src.buf, sidx[lane], land, kind, obj, seq);
			if (sread < (uint32_t)c) /* the zero-filled tail: written by the copy, from no global element */
				flow_copy(s, w, lane, saddr[lane] + sread, (uint32_t)c - sread, -1, -1, land, kind, obj, seq);
		}
		if (c >= 4)
			cpa_copy(s, w, lanes, now, land);
	}
	e->op_step++;
	bool done = (int64_t)round + 1 >= rounds;
	if (done && bar >= 0 && in->align >= 4) {
		/* cp.async.mbarrier.arrive per thread: tracks all its copies so far; grouped by landing cycle. */
		if (s->checks) {
			uint32_t phase[32];
			for (int l = 0; l < 32; l++)
				phase[l] = s->mbars[bar].phase;
			flow_cp_arrive(s, w, mask, FLOW_BAR, (int)bar_elem, phase);
		}
		uint64_t at[32];
		uint32_t count[32];
		int n = 0;
		for (uint32_t mm = mask; mm; mm &= mm - 1) {
			uint64_t land = cpa_last_land(s, w, __builtin_ctz(mm));
			int i = 0;
			while (i < n && at[i] != land)
				i++;
			if (i == n) {
				at[n] = land;
				count[n++] = 0;
			}
			count[i]++;
		}
		for (int i = 0; i < n; i++) {
			mbar_track_copies(s, (uint32_t)bar, count[i], at[i] > now ? at[i] : now);
			mbar_note_copy(s, (uint32_t)bar, now, at[i]);
		}
	}
	return done;
}

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
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "smem.h"
#include "simint.h"

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
		char at[32] = "";
		if (s->k->path_line && s->k->path_line[in->where] > 0)
			snprintf(at, sizeof at, ":%d:%d", (int)s->k->path_line[in->where], (int)s->k->path_col[in->where]);
		diag_set(s->d, code, "%s%s: at %s (%s, block %u warp %u, cycle %llu): %s", s->k->file, at,
			 s->k->paths[in->where], op_table[in->op].name[0] ? op_table[in->op].name : "branch", w->block,
			 w->in_block, (unsigned long long)s->now, what);
	} else {
		diag_set(s->d, code, "%s: cycle %llu: %s", s->k->file, (unsigned long long)s->now, what);
	}
	s->error = code;
	return code;
}

/* Each lane's byte address of ref[index + elem] (elem may be NULL: 0); a lane outside the buffer fails. */
static void lane_addrs(struct sim *s, struct warp *w, const struct memref *ref, const struct expr *elem, uint32_t mask,
		       uint64_t addr[32], const char *verb)
{
	const struct buffer *b = &s->k->bufs[ref->buf];
	int64_t base[32], off[32], ubase, uoff = 0;
	/* Warp-uniform parts (the index, usually) stay one value. */
	bool uni_base = simt_eval_some(s, w, &ref->index, mask, &ubase, base);
	bool uni_off = !elem || simt_eval_some(s, w, elem, mask, &uoff, off);
	if (uni_base && !uni_off) {
		/* The usual case (a uniform index plus a per-lane element): every lane first, checked once. */
		bool outside = false;
		for (uint32_t m = mask; m; m &= m - 1) {
			int lane = __builtin_ctz(m);
			int64_t idx = ubase + off[lane];
			outside |= idx < 0 || (uint64_t)idx >= b->elems;
			addr[lane] = b->base + (uint64_t)idx * b->elem_bytes;
		}
		if (!outside)
			return;
	}
	for (uint32_t m = mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		int64_t idx = (uni_base ? ubase : base[lane]) + (uni_off ? uoff : off[lane]);
		if (idx < 0 || (uint64_t)idx >= b->elems) {
			sim_fail(s, DIAG_INPUT, w, "thread %u %s %s[%lld], outside its %llu elements",
				 w->in_block * 32 + (unsigned)lane, verb, b->name, (long long)idx,
				 (unsigned long long)b->elems);
			idx = 0;
		}
		addr[lane] = b->base + (uint64_t)idx * b->elem_bytes;
	}
}

static void smem_lane_addrs(struct sim *s, struct warp *w, const struct memref *ref, const struct expr *elem,
			    uint32_t mask, uint64_t addr[32])
{
	lane_addrs(s, w, ref, elem, mask, addr, "reads");
}

/*
 * A shared-memory access of `bytes` per lane (the element: 4, 8 or 16;
 * narrower ones take a word, wider ones are taken as 16) through the SM's
 * shared-memory port; returns when its data is back.  8- and 16-byte
 * accesses run in 2 and 4 phases, a wavefront each at least: only the
 * wavefronts beyond those count as bank conflicts, and the latency grows
 * with the worst phase's conflict degree, not with the phases.
 */
static uint64_t smem_access(struct sim *s, const uint64_t addr[32], uint32_t mask, uint32_t bytes, uint64_t now)
{
	uint32_t width = bytes <= 4 ? 4 : bytes <= 8 ? 8 : 16;
	struct smem_cost c = smem_access_cost(addr, mask, width);
	struct sim_report *r = s->rep;
	r->smem_accesses++;
	r->smem_wavefronts += c.wavefronts;
	r->bank_conflicts += c.wavefronts > c.phases ? c.wavefronts - c.phases : 0;
	uint64_t start = s->mem.smem_free > now ? s->mem.smem_free : now;
	s->mem.smem_free = start + (uint64_t)c.wavefronts * (uint64_t)s->m->smem_wavefront_cycles;
	uint64_t extra = c.ways > 1 ? (uint64_t)(c.ways - 1) * (uint64_t)s->m->smem_conflict_latency : 0;
	return start + (uint64_t)s->m->smem_latency + extra;
}

static void global_store(struct sim *s, struct warp *w, const struct memref *ref, const struct expr *elem,
			 uint32_t mask, uint64_t now)
{
	const struct buffer *b = &s->k->bufs[ref->buf];
	uint64_t addr[32];
	lane_addrs(s, w, ref, elem, mask, addr, "writes");
	uint64_t sectors[64];
	uint32_t n = gmem_sectors(addr, mask, b->elem_bytes, sectors);
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
	return gmem_read(s, now, sectors, n);
}


/* compute(out, in)'s load of in[elem] (op_step 0) or its store of out[elem] (after the chain). */
static void exec_compute(struct sim *s, struct warp *w, const struct insn *in, uint32_t mask, uint64_t now)
{
	if (simt_cur(w)->op_step == 0) {
		uint64_t addr[32];
		smem_lane_addrs(s, w, &in->src, &in->e[1], mask, addr);
		for (uint32_t m = mask; s->checks && m; m &= m - 1) {
			int lane = __builtin_ctz(m);
			const struct flow_word *fw = flow_read(s, w, lane, addr[lane], now);
			flow_provenance(s, w, lane, fw, simt_eval(s, w, lane, &in->e[1]), in->dst.buf,
					simt_eval(s, w, lane, &in->dst.index));
		}
		s->anchor_result = smem_access(s, addr, mask, s->k->bufs[in->src.buf].elem_bytes, now);
		return;
	}
	global_store(s, w, &in->dst, &in->e[1], mask, now);
}

static enum anchor_status done_if(bool done) { return done ? ANCHOR_DONE : ANCHOR_BLOCKED; }

enum anchor_status exec_anchor(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	uint32_t mask = simt_mask(w);
	switch (in->op) {
	case OP_JMP: simt_jump(s, w, in->target); return ANCHOR_MOVED;
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
		smem_lane_addrs(s, w, &in->src, NULL, mask, addr);
		for (uint32_t m = mask; s->checks && m; m &= m - 1) {
			int lane = __builtin_ctz(m);
			if (in->op == OP_SHARED_LOAD)
				flow_read(s, w, lane, addr[lane], now);
			else
				flow_copy(s, w, lane, addr[lane], s->k->bufs[in->src.buf].elem_bytes, -1, -1, now, FLOW_PLAIN, -1,
					  s->blocks[w->block].sync_gen);
		}
		uint64_t back = smem_access(s, addr, mask, s->k->bufs[in->src.buf].elem_bytes, now);
		if (in->op == OP_SHARED_LOAD)
			s->anchor_result = back;
		return ANCHOR_DONE;
	}
	case OP_GLOBAL_LOAD: s->anchor_result = global_load(s, w, &in->src, mask, now); return ANCHOR_DONE;
	case OP_GLOBAL_STORE: global_store(s, w, &in->src, NULL, mask, now); return ANCHOR_DONE;
	case OP_FMA:
	case OP_SHFL:
	case OP_COUNT: break;
	}
	return ANCHOR_DONE;
}

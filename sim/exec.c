/*
 * exec: what one issue slot of a warp does, op by op.
 *
 * An op may take several issue slots (simt_cur(w)->op_step counts them): pipeline
 * calls spend machine.pipe_call_instructions slots on their index and
 * barrier arithmetic before the call itself; compute is a shared load, k
 * dependent FMAs and a store.  An op that cannot proceed blocks the warp
 * and is retried, from the same step, when the warp is woken.
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
		diag_set(s->d, code, "%s: at %s (%s, block %u warp %u, cycle %llu): %s", s->k->file,
			 s->k->paths[in->where], op_table[in->op].name[0] ? op_table[in->op].name : "branch", w->block,
			 w->in_block, (unsigned long long)s->now, what);
	} else {
		diag_set(s->d, code, "%s: cycle %llu: %s", s->k->file, (unsigned long long)s->now, what);
	}
	s->error = code;
	return code;
}

/* Spends the op's leading bookkeeping slots; true once they are all issued. */
static bool overhead_done(struct warp *w, int64_t slots)
{
	struct simt_entry *e = simt_cur(w);
	if ((int64_t)e->op_step + 1 < slots) {
		e->op_step++;
		return false;
	}
	return true;
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

/* A shared-memory access through the SM's shared-memory port; returns when its data is back. */
static uint64_t smem_access(struct sim *s, const uint64_t addr[32], uint32_t mask, uint64_t now)
{
	struct smem_cost c = smem_access_cost(addr, mask, 4);
	struct sim_report *r = s->rep;
	r->smem_accesses++;
	r->smem_wavefronts += c.wavefronts;
	r->bank_conflicts += c.wavefronts > 1 ? c.wavefronts - 1 : 0;
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
	exec_spread(s, w, now, now + (uint64_t)s->m->store_issue_latency, s->m->store_issue_instructions, STALL_MEMORY);
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


/* compute(out, in): step 0 loads in[elem], steps 1..k are dependent FMAs, the last stores out[elem]. */
static bool exec_compute(struct sim *s, struct warp *w, const struct insn *in, uint32_t mask, uint64_t now)
{
	int64_t k = simt_eval(s, w, __builtin_ctz(mask), &in->e[0]);
	if (k < 0) {
		sim_fail(s, DIAG_INPUT, w, "compute with k = %lld: expected a chain length of 0 or more", (long long)k);
		return true;
	}
	if (simt_cur(w)->op_step == 0) {
		uint64_t addr[32];
		smem_lane_addrs(s, w, &in->src, &in->e[1], mask, addr);
		for (uint32_t m = mask; s->checks && m; m &= m - 1) {
			int lane = __builtin_ctz(m);
			const struct flow_word *fw = flow_read(s, w, lane, addr[lane], now);
			flow_provenance(s, w, lane, fw, simt_eval(s, w, lane, &in->e[1]), in->dst.buf,
					simt_eval(s, w, lane, &in->dst.index));
		}
		uint64_t back = smem_access(s, addr, mask, now);
		exec_spread(s, w, now, back + (uint64_t)s->m->compute_setup_latency, s->m->compute_setup_instructions,
			    STALL_SMEM);
		simt_cur(w)->op_step++;
		return false;
	}
	if ((int64_t)simt_cur(w)->op_step <= k) {
		fma_step(s, s->trace, w, &w->rtree[w->rleaf], chain_cycles(s->m, simt_cur(w)->op_step), now, simt_cur(w)->op_step == 1);
		return false;
	}
	global_store(s, w, &in->dst, &in->e[1], mask, now);
	return true;
}

/* n dependent steps of shfl_down + add: a warp reduction's tree. */
static bool exec_shfl(struct sim *s, struct warp *w, const struct insn *in, uint32_t mask, uint64_t now)
{
	int64_t n = simt_eval(s, w, __builtin_ctz(mask), &in->e[0]);
	if (n < 0) {
		sim_fail(s, DIAG_INPUT, w, "shfl with n = %lld: expected a step count of 0 or more", (long long)n);
		return true;
	}
	if ((int64_t)simt_cur(w)->op_step + 1 >= n) {
		if (n > 1 && s->trace)
			trace_spread_keep(s->trace, w->id); /* the tree's last step */
		return true;
	}
	warp_set_ready(s, w, now + (uint64_t)s->m->shfl_latency);
	w->cause = STALL_ALU;
	if (s->trace)
		trace_chain_slot(s->trace, w->id, STALL_ALU, simt_cur(w)->op_step == 0);
	simt_cur(w)->op_step++;
	return false;
}

static bool exec_fma(struct sim *s, struct warp *w, const struct insn *in, uint32_t mask, uint64_t now)
{
	int64_t n = simt_eval(s, w, __builtin_ctz(mask), &in->e[0]);
	if (n < 0) {
		sim_fail(s, DIAG_INPUT, w, "fma with n = %lld: expected a count of 0 or more", (long long)n);
		return true;
	}
	if ((int64_t)simt_cur(w)->op_step + 1 >= n) {
		if (n > 1 && s->trace)
			trace_spread_keep(s->trace, w->id); /* the chain's last FMA */
		return true;
	}
	fma_step(s, s->trace, w, &w->rtree[w->rleaf], (uint64_t)s->m->alu_latency, now, simt_cur(w)->op_step == 0);
	return false;
}

/* The warp may not issue again before from + cycles (unless it is blocked: then its waker decides). */
void exec_hold(struct sim *s, struct warp *w, uint64_t from, int64_t cycles, enum stall cause)
{
	uint64_t ready = warp_ready(w);
	if (cycles <= 0 || ready == NEVER || from + (uint64_t)cycles <= ready)
		return;
	warp_set_ready(s, w, from + (uint64_t)cycles);
	w->cause = cause;
}

/*
 * An op that keeps its warp until end issues its compiled instructions in
 * that time: this slot and `instructions - 1` more, evenly spaced.  Alone on
 * its sub-partition the warp is ready at end, as exec_hold would make it;
 * beside other ready warps each of those slots may lose its cycle to one of
 * them.  That is the issue contention a block pays for having two or more
 * warps per scheduler (traces/h100/pipelines.csv: every example is slower at
 * block size 256 than at 128 though its per-warp work is the same).
 */
void exec_spread(struct sim *s, struct warp *w, uint64_t now, uint64_t end, int64_t instructions, enum stall cause)
{
	int64_t more = instructions - 1;
	if (end <= now + 1 || more <= 0 || warp_ready(w) != now + 1) {
		exec_hold(s, w, now, end > now ? (int64_t)(end - now) : 0, cause);
		return;
	}
	uint64_t span = end - now;
	if ((uint64_t)more >= span)
		more = (int64_t)span - 1;
	uint64_t gap = span / (uint64_t)(more + 1);
	if (gap > UINT32_MAX || more > UINT16_MAX) {
		exec_hold(s, w, now, (int64_t)span, cause);
		return;
	}
	w->tail_slots = (uint16_t)more;
	w->tail_gap = (uint32_t)gap;
	w->tail_cause = (uint8_t)cause;
	warp_set_ready(s, w, end - (uint64_t)more * gap);
	w->cause = cause;
	if (s->trace)
		trace_spread_begin(s->trace, w->id, cause);
}

/*
 * A pipeline call that went through still holds its warp: libcudacxx's
 * stage index and parity arithmetic and the mbarrier atomics on shared
 * memory take their time (traces/h100/anatomy.csv times each call).  A call
 * that blocked ends no sooner than it would have, had it found its stage
 * ready when it began.
 */
static void pipe_call_done(struct sim *s, struct warp *w, const struct insn *in, uint64_t now, enum stall cause)
{
	const struct machine *m = s->m;
	bool block = in->obj >= 0 && s->k->pipes[in->obj].scope == PIPE_SCOPE_BLOCK;
	int64_t cycles = 0, instructions = 1;
	switch (in->op) {
	case OP_PRODUCER_ACQUIRE:
		if (block) {
			cycles = m->pipe_acquire_latency;
			instructions = m->pipe_acquire_instructions;
		}
		break;
	case OP_PRODUCER_COMMIT:
		if (block) {
			cycles = m->pipe_commit_latency;
			instructions = m->pipe_commit_instructions;
		}
		break;
	case OP_CONSUMER_WAIT:
		cycles = block ? m->pipe_wait_latency : m->thread_pipe_wait_latency;
		instructions = m->pipe_wait_instructions;
		break;
	case OP_CONSUMER_RELEASE:
		cycles = m->pipe_release_latency;
		instructions = m->pipe_release_instructions;
		break;
	case OP_CONSUMER_WAIT_PRIOR:
	case OP_PIPELINE_WAIT_PRIOR:
		cycles = m->wait_prior_latency;
		instructions = m->pipe_wait_instructions;
		break;
	default: break;
	}
	uint64_t began = simt_cur(w)->wait_start != NEVER ? simt_cur(w)->wait_start : now;
	exec_spread(s, w, now, began + (uint64_t)cycles, instructions, cause);
}

/*
 * A let, set or branch whose expression reads registers is a few dependent
 * integer instructions on hardware (the examples' 64-bit size_t index
 * arithmetic and loop bounds, about half as many for 32-bit ints), more for
 * each division the compiler cannot reduce to a shift or a mask.  One on constants folds into an immediate
 * and costs only its slot.
 */
static void statement_done(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	const struct expr *e = &in->e[0];
	if (!e->is_const) {
		const struct machine *m = s->m;
		int64_t cycles = (in->narrow ? m->int_statement_latency : m->statement_latency) +
				 e->slow_divides * m->divide_latency;
		int64_t instructions = (in->narrow ? m->int_statement_instructions : m->statement_instructions) +
				       e->slow_divides * m->divide_instructions;
		exec_spread(s, w, now, now + (uint64_t)cycles, instructions, STALL_ALU);
	}
}

void exec_op(struct sim *s, struct warp *w, uint64_t now)
{
	for (;;) {
		if (s->error || w->done)
			return;
		int32_t pc = simt_pc(w);
		uint32_t mask = simt_mask(w);
		if (pc >= s->k->ncode) {
			simt_exit_lanes(s, w, mask, now);
			return;
		}
		const struct insn *in = &s->k->code[pc];
		bool done = true;
		switch (in->op) {
		case OP_JMP:
			simt_jump(s, w, in->target);
			continue; /* a back-edge takes no slot of its own */
		case OP_LET:
		case OP_SET:
			simt_assign(s, w, in->slot, &in->e[0], mask);
			statement_done(s, w, in, now);
			break;
		case OP_BRZ:
			simt_branch(s, w, in);
			statement_done(s, w, in, now);
			return;
		case OP_EXIT: simt_exit_lanes(s, w, mask, now); return;
		case OP_SYNCTHREADS: done = sync_threads(s, w, now, STALL_SYNCTHREADS); break;
		case OP_SYNCWARP: simt_syncwarp(s, w, now); return;
		case OP_GRID_SYNC: done = sync_grid(s, w, now); break;
		case OP_MAKE_PIPELINE: done = pipe_make(s, w, in, now); break;
		case OP_PRODUCER_ACQUIRE:
			done = overhead_done(w, s->m->pipe_call_instructions) && pipe_acquire(s, w, in, now);
			if (done)
				pipe_call_done(s, w, in, now, STALL_PRODUCER_ACQUIRE);
			break;
		case OP_PRODUCER_COMMIT:
			done = overhead_done(w, s->m->pipe_call_instructions) && pipe_commit(s, w, in, now);
			if (done)
				pipe_call_done(s, w, in, now, STALL_BARRIER);
			break;
		case OP_CONSUMER_WAIT:
			done = overhead_done(w, s->m->pipe_call_instructions) && pipe_wait(s, w, in, now);
			if (done)
				pipe_call_done(s, w, in, now, STALL_CONSUMER_WAIT);
			break;
		case OP_CONSUMER_RELEASE:
			done = overhead_done(w, s->m->pipe_call_instructions) && pipe_release(s, w, in, now);
			if (done)
				pipe_call_done(s, w, in, now, STALL_BARRIER);
			break;
		case OP_CONSUMER_WAIT_PRIOR:
		case OP_PIPELINE_WAIT_PRIOR:
			done = overhead_done(w, 1) && pipe_wait_prior(s, w, in, now);
			if (done)
				pipe_call_done(s, w, in, now, STALL_CONSUMER_WAIT);
			break;
		case OP_QUIT: done = overhead_done(w, s->m->pipe_call_instructions) && pipe_quit(s, w, in, now); break;
		case OP_PIPELINE_COMMIT: cpa_commit(s, w, mask); break;
		case OP_BARRIER_INIT:
		case OP_BARRIER_ARRIVE:
		case OP_BARRIER_WAIT:
		case OP_BARRIER_ARRIVE_AND_WAIT:
		case OP_BARRIER_ARRIVE_AND_DROP:
			done = overhead_done(w, s->m->pipe_call_instructions) && cbar_exec(s, w, in, now);
			break;
		case OP_SHFL: done = exec_shfl(s, w, in, mask, now); break;
		case OP_MEMCPY_ASYNC:
		case OP_PIPELINE_MEMCPY_ASYNC: done = copy_issue(s, w, in, now); break;
		case OP_COMPUTE: done = exec_compute(s, w, in, mask, now); break;
		case OP_FMA: done = exec_fma(s, w, in, mask, now); break;
		case OP_SHARED_LOAD:
		case OP_SHARED_STORE: {
			uint64_t addr[32];
			smem_lane_addrs(s, w, &in->src, NULL, mask, addr);
			for (uint32_t m = mask; s->checks && m; m &= m - 1) {
				int lane = __builtin_ctz(m);
				if (in->op == OP_SHARED_LOAD)
					flow_read(s, w, lane, addr[lane], now);
				else
					flow_copy(s, w, lane, addr[lane], 4, -1, -1, now, FLOW_PLAIN, -1,
						  s->blocks[w->block].sync_gen);
			}
			uint64_t back = smem_access(s, addr, mask, now);
			if (in->op == OP_SHARED_LOAD) {
				warp_set_ready(s, w, back);
				w->cause = STALL_SMEM;
			}
			break;
		}
		case OP_GLOBAL_LOAD:
			warp_set_ready(s, w, global_load(s, w, &in->src, mask, now));
			w->cause = STALL_MEMORY;
			break;
		case OP_GLOBAL_STORE: global_store(s, w, &in->src, NULL, mask, now); break;
		case OP_COUNT: break;
		}
		if (done && !s->error && !w->done)
			simt_advance(s, w);
		return;
	}
}

/*
 * sim: set up the SM for a launch, run the event loop, and finish the report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simint.h"

static double host_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Shared memory a block of k takes: its buffers and its pipelines' stage barriers. */
static uint64_t block_smem(const struct kernel *k)
{
	uint64_t smem = k->shared_bytes;
	for (int i = 0; i < k->npipes; i++)
		smem += 16ull * k->pipes[i].stages; /* two 8-byte mbarriers per stage */
	return smem;
}

int sim_check_launch(const struct kernel *k, const struct machine *m, const struct launch *l, struct diag *d)
{
	if (l->block_size < 1 || l->block_size > m->max_block_threads)
		return diag_set(d, DIAG_INPUT, "launch: block_size %lld is outside 1..%lld (machine max_block_threads)",
				(long long)l->block_size, (long long)m->max_block_threads);
	if (l->blocks < 1 || l->blocks > m->max_blocks)
		return diag_set(d, DIAG_INPUT, "launch: %lld resident blocks; the machine allows 1..%lld",
				(long long)l->blocks, (long long)m->max_blocks);
	int64_t warps = (l->block_size + 31) / 32 * l->blocks;
	if (warps > m->max_warps || l->block_size * l->blocks > m->max_threads)
		return diag_set(d, DIAG_INPUT,
				"launch: %lld blocks of %lld threads (%lld warps) do not fit on the SM (%lld warps, "
				"%lld threads)",
				(long long)l->blocks, (long long)l->block_size, (long long)warps,
				(long long)m->max_warps, (long long)m->max_threads);
	/*
	 * grid.sync() needs every block of the grid resident at once: a cooperative
	 * launch larger than that fails (cudaErrorCooperativeLaunchTooLarge), and
	 * without one the resident blocks would wait for blocks that cannot start.
	 * The model's other SMs run what this one does: l->blocks each.
	 */
	for (int i = 0; i < k->ncode; i++)
		if (k->code[i].op == OP_GRID_SYNC && l->grid_blocks > l->blocks * m->sm_count)
			return diag_set(d, DIAG_INPUT,
					"%s: grid_sync with a grid of %lld blocks, but %lld blocks per SM on %lld SMs hold "
					"%lld at once: a cooperative launch refuses it (cudaErrorCooperativeLaunchTooLarge)",
					k->file, (long long)l->grid_blocks, (long long)l->blocks, (long long)m->sm_count,
					(long long)(l->blocks * m->sm_count));
	uint64_t smem = block_smem(k);
	if (smem > (uint64_t)m->smem_block_bytes)
		return diag_set(d, DIAG_INPUT, "%s: needs %llu bytes of shared memory per block; the machine allows %lld",
				k->file, (unsigned long long)smem, (long long)m->smem_block_bytes);
	if (smem * (uint64_t)l->blocks > (uint64_t)m->smem_bytes)
		return diag_set(d, DIAG_INPUT,
				"%s: %lld blocks need %llu bytes of shared memory; the SM has %lld",
				k->file, (long long)l->blocks, (unsigned long long)(smem * (uint64_t)l->blocks),
				(long long)m->smem_bytes);
	return 0;
}

static int setup(struct sim *s)
{
	const struct launch *l = &s->launch;
	uint32_t per_block = (uint32_t)((l->block_size + 31) / 32);
	s->nblocks = (uint32_t)l->blocks;
	s->nwarps = per_block * s->nblocks;
	s->warps = calloc(s->nwarps, sizeof *s->warps);
	s->blocks = calloc(s->nblocks, sizeof *s->blocks);
	s->sps = calloc((size_t)s->m->subpartitions, sizeof *s->sps);
	uint32_t nbars = 0;
	for (int i = 0; i < s->k->npipes; i++) /* a pipeline over warps has a shared state per warp */
		nbars += 2 * s->k->pipes[i].stages * (s->k->pipes[i].warp_group ? per_block : 1);
	for (int i = 0; i < s->k->nbars; i++)
		nbars += s->k->bars[i].count;
	s->mbars = calloc((size_t)nbars * s->nblocks + 1, sizeof *s->mbars);
	s->lane_regs = calloc((size_t)s->k->nslots + 1, sizeof *s->lane_regs);
	s->agree = calloc((size_t)s->nwarps * SIMT_AGREE_SLOTS, sizeof *s->agree);
	s->cpa_apart = calloc(s->nwarps, sizeof *s->cpa_apart);
	s->cpa_whole = calloc(s->nwarps, sizeof *s->cpa_whole);
	s->smem_memo = calloc(1, sizeof *s->smem_memo);
	if (!s->warps || !s->blocks || !s->sps || !s->mbars || !s->lane_regs || !s->agree || !s->cpa_apart || !s->cpa_whole || !s->smem_memo)
		return -1;
	l1_init(&s->l1, s->m, l1_carveout(s->m, block_smem(s->k), l->block_size), s->m->l1_reuse_coeff,
		s->m->l1_reuse_exponent, s->m->l1_reuse_size_exponent);
	s->rep->carveout_bytes = s->l1.carveout;
	gmem_setup(s);
	for (int32_t pc = 0; pc < s->k->ncode; pc++)
		if (s->k->code[pc].op == OP_BARRIER_ARRIVE && s->k->code[pc].slot < 63)
			s->token_slots |= 1ull << s->k->code[pc].slot;
	for (int64_t p = 0; p < s->m->subpartitions; p++) {
		s->sps[p].warps = calloc(s->nwarps, sizeof *s->sps[p].warps);
		if (!s->sps[p].warps)
			return -1;
		s->sps[p].next_tick = s->sps[p].last_issue = NEVER;
	}
	size_t nslots = (size_t)s->k->nslots;
	for (uint32_t b = 0; b < s->nblocks; b++) {
		struct block *blk = &s->blocks[b];
		blk->id = b;
		blk->first_warp = b * per_block;
		blk->nwarps = per_block;
		blk->live_threads = (uint32_t)l->block_size;
		blk->bar_waiters = NONE;
		blk->cpa = calloc((size_t)l->block_size, sizeof *blk->cpa);
		blk->cpa_open = calloc((size_t)l->block_size, sizeof *blk->cpa_open);
		blk->exited_in_pipe = calloc((size_t)l->block_size, 1);
		if (!blk->cpa || !blk->cpa_open || !blk->exited_in_pipe || pipe_setup(s, blk) || cbar_setup(s, blk) || flow_setup(s, blk) ||
		    bulk_setup(s, blk))
			return -1;
		for (int64_t t = 0; t < l->block_size; t++)
			blk->cpa_open[t].first = NEVER;
		for (uint32_t i = 0; i < per_block; i++) {
			uint32_t id = b * per_block + i;
			struct warp *w = &s->warps[id];
			int64_t threads = l->block_size - (int64_t)i * 32;
			w->id = id;
			s->cpa_whole[id].kept.first = NEVER;
			w->block = b;
			w->in_block = i;
			w->sp = id % (uint32_t)s->m->subpartitions;
			w->live = threads >= 32 ? 0xffffffffu : (1u << threads) - 1;
			w->stack[0] = (struct simt_entry){.pc = 0, .reconv = -1, .parent = -1, .mask = w->live,
							  .wait_start = NEVER, .next_waiter = NONE, .blocked_obj = -1,
							  .poll = -1};
			w->depth = 1;
			w->stack[0].order = w->order_next = w->order_low = SIMT_ORDER_MID;
			simt_mark(w, 0);
			w->cur = 0;
			w->cause = STALL_NOT_SELECTED;
			w->divergent = 1ull << SLOT_TID | 1ull << SLOT_LANE | 1ull << 63;
			w->regs = calloc(34 * nslots, sizeof *w->regs);
			w->uval = w->regs + 32 * nslots;
			w->slot_ready = (uint64_t *)(w->uval + nslots); /* all 0: the builtins and fresh variables are ready */
			w->cpa.land = calloc(CPA_WARP_RING, sizeof *w->cpa.land);
			w->cpa.first = calloc(CPA_WARP_RING, sizeof *w->cpa.first);
			if (!w->regs || !w->cpa.land || !w->cpa.first)
				return -1;
			for (int lane = 0; lane < 32; lane++) {
				*simt_reg(w, SLOT_TID, lane) = (int64_t)i * 32 + lane;
				*simt_reg(w, SLOT_LANE, lane) = lane;
				*simt_reg(w, SLOT_WARP, lane) = i;
				*simt_reg(w, SLOT_BLOCK, lane) = b;
			}
			struct subpart *sp = &s->sps[w->sp];
			sp->warps[sp->nwarps++] = w;
		}
	}
	s->warps_left = s->nwarps;
	return issue_setup(s) ? -1 : sched_setup(s);
}

static void teardown(struct sim *s)
{
	for (uint32_t i = 0; s->warps && i < s->nwarps; i++) {
		free(s->warps[i].regs);
		free(s->warps[i].cpa.land);
		free(s->warps[i].cpa.first);
	}
	for (uint32_t b = 0; s->blocks && b < s->nblocks; b++) {
		pipe_free(s, &s->blocks[b]);
		cbar_free(&s->blocks[b]);
		flow_free(&s->blocks[b]);
		bulk_free(s, &s->blocks[b]);
		free(s->blocks[b].cpa);
		free(s->blocks[b].cpa_open);
		free(s->blocks[b].exited_in_pipe);
	}
	if (s->sps)
		sched_free(s);
	for (int64_t p = 0; s->sps && p < s->m->subpartitions; p++)
		free(s->sps[p].warps);
	free(s->warps);
	free(s->blocks);
	free(s->sps);
	free(s->mbars);
	free(s->lane_regs);
	free(s->agree);
	free(s->cpa_apart);
	free(s->cpa_whole);
	free(s->smem_memo);
	l1_free(&s->l1);
	gmem_free(s);
	smem_port_free(s);
	evq_free(&s->q);
}

static const char *wait_name(enum wait_kind k)
{
	switch (k) {
	case WAIT_SYNCTHREADS: return "__syncthreads";
	case WAIT_SYNCWARP: return "__syncwarp";
	case WAIT_GRID: return "grid.sync";
	case WAIT_CONVERGE: return "the warp's other paths of this branch (reconvergence)";
	case WAIT_SLEEP: return "__nanosleep";
	default: return "";
	}
}

/*
 * Nothing can move and warps remain: describe every stuck group of every
 * warp — blocked, held at a convergence barrier, or spinning on a poll
 * that cannot succeed (sim_check_spin).
 */
static void report_deadlock(struct sim *s)
{
	struct sim_report *r = s->rep;
	uint32_t exited = 0;
	for (uint32_t i = 0; i < s->nwarps; i++) {
		struct warp *w = &s->warps[i];
		for (int g = 0; !w->done && g < w->depth && r->nblocked < SIM_MAX_BLOCKED; g++) {
			const struct simt_entry *e = &w->stack[g];
			/* spinning: between polls, or inside a diverged warp's poll (a timed hold) */
			bool spin = e->poll >= 0 && (!e->blocked || e->blocked == WAIT_SLEEP);
			if (!e->mask || (!e->blocked && e->poll < 0))
				continue;
			if (e->blocked == WAIT_CONVERGE && !simt_arrived(w, g))
				continue; /* a join no lane has reached: its lanes are listed where they wait */
			struct blocked_warp *bw = &r->blocked[r->nblocked++];
			const struct insn *in = &s->k->code[e->pc < s->k->ncode ? e->pc : s->k->ncode - 1];
			bw->warp = w->in_block;
			bw->block = w->block;
			const char *role = kernel_warp_role(s->k, w->in_block);
			snprintf(bw->role, sizeof bw->role, "%s", role ? role : "");
			bw->threads = (uint32_t)__builtin_popcount(e->mask);
			snprintf(bw->op, sizeof bw->op, "%s", op_table[in->op].name);
			snprintf(bw->where, sizeof bw->where, "%s", s->k->paths[in->where]);
			if ((e->blocked == WAIT_MBAR && e->blocked_obj >= 0) || spin) {
				const struct mbar *b = &s->mbars[spin ? e->poll : e->blocked_obj];
				snprintf(bw->on, sizeof bw->on, "%s%s", b->what, spin ? " (spinning on a failed try_wait/test_wait)" : "");
				bw->phase = b->phase;
				bw->expected = b->expected;
				bw->arrived = b->expected - b->pending;
			} else if (e->blocked == WAIT_CONVERGE) {
				/* BSYNC of the branch that split it, waiting for the warp's other paths */
				const struct insn *br = &s->k->code[e->reconv >= 0 && e->reconv < s->k->ncode ? e->reconv : 0];
				snprintf(bw->op, sizeof bw->op, "BSYNC");
				snprintf(bw->where, sizeof bw->where, "%s", s->k->paths[br->where]);
				snprintf(bw->on, sizeof bw->on, "%s", wait_name(WAIT_CONVERGE));
				bw->threads = (uint32_t)__builtin_popcount(simt_arrived(w, g));
				bw->expected = __builtin_popcount(e->mask);
				bw->arrived = bw->threads;
			} else if (e->blocked == WAIT_SYNCTHREADS) {
				const struct block *b = &s->blocks[w->block];
				snprintf(bw->on, sizeof bw->on, "%s", wait_name(WAIT_SYNCTHREADS));
				bw->expected = b->live_threads;
				bw->arrived = b->bar_arrived;
			} else {
				snprintf(bw->on, sizeof bw->on, "%s", wait_name((enum wait_kind)e->blocked));
				bw->expected = __builtin_popcount(w->live);
				bw->arrived = bw->threads;
			}
		}
	}
	uint32_t held = 0, held_warp = 0, held_block = 0, held_lanes = 0;
	for (uint32_t i = 0; s->m->reconverge == RECONVERGE_SIMT_STACK && i < s->nwarps; i++) {
		uint32_t lanes = s->warps[i].done ? 0 : simt_held_back(&s->warps[i]);
		if (lanes && held++ == 0) {
			held_warp = s->warps[i].in_block;
			held_block = s->warps[i].block;
			held_lanes = lanes;
		}
	}
	uint32_t no_quit = 0, first_no_quit = 0, first_block = 0;
	for (uint32_t b = 0; b < s->nblocks; b++) {
		exited += (uint32_t)s->launch.block_size - s->blocks[b].live_threads;
		for (int64_t t = 0; t < s->launch.block_size; t++)
			if (s->blocks[b].exited_in_pipe[t] && no_quit++ == 0) {
				first_no_quit = (uint32_t)t;
				first_block = b;
			}
	}
	uint32_t absent = 0, absent_block = 0;
	const struct pipe_block *absent_pipe = NULL;
	for (uint32_t b = 0; b < s->nblocks && !absent; b++)
		for (uint32_t i = 0; s->blocks[b].pipes && i < (uint32_t)s->k->npipes * s->blocks[b].pipe_warps && !absent;
		     i++) {
			const struct pipe_block *pb = &s->blocks[b].pipes[i];
			if (pb->decl && pb->ready && pb->decl->scope == PIPE_SCOPE_BLOCK && pb->absent) {
				absent = pb->absent;
				absent_block = b;
				absent_pipe = pb;
			}
		}
	if (held)
		snprintf(r->hint, sizeof r->hint,
			 "block %u warp %u%s: %d thread(s) on another path of the warp never run while the path on top of "
			 "its SIMT stack waits; reconverge=simt_stack runs a diverged warp's paths one at a time (pre-Volta), "
			 "so if it waits for them this pattern needs independent thread scheduling: "
			 "reconverge=convergence_barrier (Volta+, the default) runs them",
			 held_block, held_warp, held > 1 ? " (and other warps)" : "", __builtin_popcount(held_lanes));
	else if (sync_deadlock_hint(s, r->hint, sizeof r->hint))
		;
	else if (absent)
		snprintf(r->hint, sizeof r->hint,
			 "%u thread(s) of block %u exited before make_pipeline(\"%s\"), but its stage barriers expect "
			 "group.size() = %u (produced %u, consumed %u per phase, as libcudacxx initialises them): "
			 "the leavers' arrivals never come",
			 absent, absent_block, absent_pipe->decl->name, absent_pipe->size,
			 absent_pipe->producers, absent_pipe->consumers);
	else if (no_quit && s->m->quit == QUIT_LIBCUDACXX)
		snprintf(r->hint, sizeof r->hint,
			 "thread %u of block %u%s returned while in the pipeline: ~pipeline() called quit(), which under "
			 "the libcudacxx model only drops a reference count, so the stage barriers still count %s "
			 "(machine.quit=guide would let the others on)",
			 first_no_quit, first_block, no_quit > 1 ? " (and others)" : "", no_quit > 1 ? "them" : "it");
	else if (r->quits && s->m->quit == QUIT_LIBCUDACXX)
		snprintf(r->hint, sizeof r->hint,
			 "%llu thread(s) called quit(); under the libcudacxx model quit() only drops a reference "
			 "count, so the stage barriers still expect them (the guide model would let the others on)",
			 (unsigned long long)r->quits);
	else if (exited)
		snprintf(r->hint, sizeof r->hint,
			 "%u thread(s) exited while others still wait on barriers they were counted in", exited);
	else
		snprintf(r->hint, sizeof r->hint, "no thread exited; the waits above can never be satisfied");
	diag_set(s->d, DIAG_DEADLOCK, "%s: deadlock at cycle %llu: %u group(s) of threads can never proceed",
		 s->k->file, (unsigned long long)s->now, r->nblocked);
}

/*
 * A group spins: SPIN_POLLS polls (try_wait, test_wait) of one barrier in
 * a row found its phase incomplete, with nothing but the loop between
 * them (a group that goes on to other work after a failed poll or two is
 * not spinning).  Every so often (SPIN_CHECK_CYCLES: a spin loop polls far
 * more often), see whether the SM is stuck: no event pending but timers
 * (sleeps, try_wait limits), and every live group blocked, held at a
 * convergence barrier, or spinning (asleep in its loop included).  Then no
 * poll can ever succeed — a deadlock as surely as one of blocked waits,
 * reported as one.
 */
#define SPIN_CHECK_CYCLES 1024
void sim_check_spin(struct sim *s, uint64_t now)
{
	if (now < s->spin_check_at || s->error)
		return;
	s->spin_check_at = now + SPIN_CHECK_CYCLES;
	for (uint32_t i = 0; i < s->q.len; i++)
		if (s->q.heap[i].kind != EV_WAKE)
			return;
	for (uint32_t i = 0; i < s->nwarps; i++) {
		const struct warp *w = &s->warps[i];
		if (w->done)
			continue;
		int from = s->m->reconverge == RECONVERGE_SIMT_STACK ? w->depth - 1 : 0; /* the stack: its top alone issues */
		for (int g = from; g < w->depth; g++) {
			const struct simt_entry *e = &w->stack[g];
			bool spins = e->poll >= 0 && e->polls >= SPIN_POLLS;
			if (e->mask && !spins && (!e->blocked || e->blocked == WAIT_SLEEP))
				return; /* it will do something else than poll */
		}
	}
	report_deadlock(s);
	s->error = DIAG_DEADLOCK;
}

int sim_run(const struct kernel *k, const struct machine *m, const struct launch *launch,
	    const struct sim_limits *limits, struct sim_report *rep, struct diag *d)
{
	double t0 = host_now();
	*rep = (struct sim_report){0};
	snprintf(rep->kernel, sizeof rep->kernel, "%s", k->name);
	snprintf(rep->machine, sizeof rep->machine, "%s", m->name);
	rep->clock_ghz = m->clock_ghz;
	int rc = sim_check_launch(k, m, launch, d);
	if (!rc)
		rc = sim_check_limits(k, m, launch, limits, d);
	if (rc)
		return rc;
	struct sim s = {.m = m,
			.k = k,
			.launch = *launch,
			.limits = *limits,
			.rep = rep,
			.d = d,
			.checks = !limits->no_checks,
			.sm_next = NEVER,
			.grid_waiters = NONE};
	rep->checks = s.checks;
	snprintf(rep->quit_model, sizeof rep->quit_model, "%s", machine_quit_name(m->quit));
	snprintf(rep->reconverge, sizeof rep->reconverge, "%s", machine_reconverge_name(m->reconverge));
	snprintf(rep->scheduler, sizeof rep->scheduler, "%s", machine_scheduler_name(m->scheduler));
	evq_init(&s.q);
	s.copy_tracks_per_block = 0;
	for (int i = 0; i < k->npipes; i++)
		s.copy_tracks_per_block += k->pipes[i].stages;
	for (int i = 0; i < k->nbars; i++)
		s.copy_tracks_per_block += k->bars[i].count;
	if (limits->op_counts) {
		s.op_issued = calloc((size_t)(k->ncode > 0 ? k->ncode : 1) * IC_COUNT, sizeof *s.op_issued);
		if (!s.op_issued)
			return diag_set(d, DIAG_LIMIT, "out of memory for the per-op counts");
		rep->op_issued = s.op_issued; /* the caller's to free, whatever happens next */
		rep->op_issued_ops = (uint32_t)k->ncode;
	}
	if (limits->trace) {
		uint32_t nwarps = (uint32_t)((launch->block_size + 31) / 32 * launch->blocks);
		s.trace = trace_new(nwarps, s.copy_tracks_per_block * (uint32_t)launch->blocks);
		if (!s.trace)
			return diag_set(d, DIAG_LIMIT, "out of memory for the trace");
		for (uint32_t i = 0; i < nwarps; i++)
		{
			uint32_t in_block = i % (uint32_t)((launch->block_size + 31) / 32);
			const char *role = kernel_warp_role(k, in_block);
			snprintf(s.trace->warps[i].name, sizeof s.trace->warps[0].name, "block %u warp %u%s%s%s",
				 i / (uint32_t)((launch->block_size + 31) / 32), in_block, role ? " (" : "", role ? role : "",
				 role ? ")" : "");
		}
		/* What each op's spans are called: its kind, and where the statement is in the kernel file. */
		struct trace_op *ops = calloc((size_t)k->ncode + 1, sizeof *ops);
		if (!ops)
			return diag_set(d, DIAG_LIMIT, "out of memory for the trace");
		for (int i = 0; i < k->ncode; i++) {
			const struct insn *in = &k->code[i];
			snprintf(ops[i].label, sizeof ops[i].label, "%s", op_table[in->op].name[0] ? op_table[in->op].name : "branch");
			snprintf(ops[i].path, sizeof ops[i].path, "%s", (int)in->where < k->npaths ? k->paths[in->where] : "");
			ops[i].line = k->path_line && (int)in->where < k->npaths ? k->path_line[in->where] : 0;
		}
		int rc = trace_set_ops(s.trace, (uint32_t)k->ncode, ops);
		free(ops);
		if (rc)
			return diag_set(d, DIAG_LIMIT, "out of memory for the trace");
	}
	if (setup(&s)) {
		trace_free(s.trace);
		teardown(&s);
		return diag_set(d, DIAG_LIMIT, "out of memory setting up %u warps", s.nwarps);
	}
	rep->blocks = s.nblocks;
	rep->warps = s.nwarps;
	rep->block_size = (uint32_t)launch->block_size;
	for (int64_t p = 0; p < m->subpartitions; p++)
		if (s.sps[p].nwarps)
			sched_kick(&s, (uint32_t)p, 0);

	/*
	 * The event loop.  Schedulers are not events: the SM ticks at the
	 * earliest cycle any sub-partition can issue, after every event of that
	 * cycle (arrivals, landings) has been delivered, and then lets each
	 * sub-partition in order issue once.  This keeps the heap for the
	 * sparse events and costs no heap operation per instruction; sched_run
	 * goes on ticking while no event comes first.  After the last warp
	 * exits, arrivals and tx still in flight are delivered: they can be
	 * errors.
	 */
	while (!s.error) {
		uint64_t ev_cycle = evq_empty(&s.q) ? NEVER : s.q.heap[0].cycle;
		if (ev_cycle == NEVER && s.sm_next == NEVER)
			break;
		uint64_t at = ev_cycle <= s.sm_next ? ev_cycle : s.sm_next;
		if (at > s.limits.max_cycles) {
			diag_set(d, DIAG_LIMIT,
				 "%s: simulated cycles passed the limit of %llu; raise it with --set limit.cycles=N or "
				 "\"limits\": {\"cycles\": N} in the experiment",
				 k->file, (unsigned long long)s.limits.max_cycles);
			s.error = DIAG_LIMIT;
			break;
		}
		if (s.q.popped + s.sm_ticks > s.limits.max_events) {
			diag_set(d, DIAG_LIMIT, "%s: events passed the limit of %llu; raise it with --set limit.events=N or "
				 "\"limits\": {\"events\": N} in the experiment",
				 k->file, (unsigned long long)s.limits.max_events);
			s.error = DIAG_LIMIT;
			break;
		}
		if (ev_cycle <= s.sm_next) {
			struct event ev;
			evq_pop(&s.q, &ev);
			s.now = ev.cycle;
			if (ev.kind == EV_MBAR_ARRIVE)
				mbar_arrive_event(&s, ev.owner, ev.arg, ev.cycle);
			else if (ev.kind == EV_WAKE)
				sched_timer_fired(&s, ev.owner, ev.arg, ev.cycle);
			else
				mbar_complete_tx(&s, ev.owner, (int64_t)ev.arg, ev.cycle);
			continue;
		}
		sched_run(&s);
	}
	if (!s.error && s.warps_left)
		report_deadlock(&s);
	stats_finish(&s);
	rc = s.error ? s.error : (s.warps_left ? DIAG_DEADLOCK : 0);
	teardown(&s);
	rep->trace = s.trace;
	rep->host_seconds = host_now() - t0;
	return rc;
}

/*
 * sync: __syncthreads (bar.sync 0) of a block.
 *
 * Arriving threads are counted; when every thread that has not exited has
 * arrived, all waiting warps leave the barrier once the SM's barrier unit
 * has counted the block's last warp and released it (count_arrival): with
 * every warp arriving at once, a latency that grows with the block's warp
 * count (DESIGN.md §4, barrier.csv).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "simint.h"

/* Every group in the waiter list steps past its barrier and may issue at cycle at. */
static void release_waiters(struct sim *s, uint32_t id, uint64_t at)
{
	while (id != NONE) {
		struct warp *w = &s->warps[WAITER_WARP(id)];
		struct simt_entry *e = &w->stack[WAITER_ENTRY(id)];
		uint32_t next = e->next_waiter;
		e->pc++;
		e->op_step = 0;
		e->li = 0;
		e->wait_start = NEVER;
		sched_wake_waiter(s, id, at);
		id = next;
	}
}

/*
 * One unit of the SM counts the arrivals at every block's __syncthreads, a
 * warp's at a time: a warp arriving while it counts another's waits its turn.
 * Every warp of a block arriving at once is thus released
 * syncthreads_base_latency + nwarps x syncthreads_warp_latency after them, as
 * barrier.csv's back-to-back barriers measure; arrivals spread by the
 * warps' own work between two barriers are counted as they come
 * (callforms.csv, syncthreads: a trip of loop control adds its own latency,
 * not a share of it per warp), and two blocks' barriers take turns at the
 * unit (2 blocks of 1,024 threads: twice the period of one).
 */
static void count_arrival(struct sim *s, struct block *b, uint64_t now)
{
	uint64_t start = now > s->bar_unit_free ? now : s->bar_unit_free;
	s->bar_unit_free = start + (uint64_t)s->m->syncthreads_warp_latency;
	b->bar_counted = s->bar_unit_free;
}

void sync_check_release(struct sim *s, struct block *b, uint64_t now)
{
	if (b->bar_waiters == NONE || b->bar_arrived < b->live_threads)
		return;
	uint32_t id = b->bar_waiters;
	b->bar_waiters = NONE;
	b->bar_arrived = 0;
	for (uint32_t i = 0; i < b->nwarps; i++)
		b->bar_lanes[i] = 0;
	uint64_t counted = b->bar_counted > now ? b->bar_counted : now;
	uint64_t released = counted + (uint64_t)s->m->syncthreads_base_latency;
	if (s->bar_unit_free < released)
		s->bar_unit_free = released;
	release_waiters(s, id, released);
	flow_sync(s, b);
	/* A block barrier re-converges the groups it held (independent scheduling). */
	for (uint32_t i = 0; i < b->nwarps; i++)
		simt_merge(s, &s->warps[b->first_warp + i]);
}

/*
 * A warp whose lanes reach different __syncthreads: the CUDA Programming
 * Guide allows __syncthreads in conditional code only where the condition
 * is the same across the block.  Every __syncthreads is bar.sync 0, and on
 * sm_70+ it counts threads, an arriving thread waiting for the non-exited
 * threads of its warp (PTX ISA, "barrier"), so the barrier completes once
 * every live thread has arrived, wherever (the counting below does the
 * same) — reported all the same.  A warp whose groups reach the same
 * __syncthreads one after the other (independent scheduling) is fine; one
 * whose other lanes never come deadlocks, and the deadlock report says so.
 */
static void partial_warp(struct sim *s, struct warp *w)
{
	struct block *b = &s->blocks[w->block];
	uint32_t i = w->in_block, mask = simt_mask(w), before = b->bar_lanes[i];
	int32_t pc = (int32_t)simt_pc(w);
	b->bar_lanes[i] |= mask;
	if (!before) {
		b->bar_pc[i] = pc;
		return;
	}
	if (!s->checks || b->bar_pc[i] == pc)
		return;
	char name[64], here[100], there[100], other[160];
	simt_lanes_text(mask, here, sizeof here);
	simt_lanes_text(before, there, sizeof there);
	uint32_t p = s->k->code[b->bar_pc[i]].where;
	snprintf(other, sizeof other, "%s (line %d)", s->k->paths[p], s->k->path_line ? s->k->path_line[p] : 0);
	flow_report(s, w, __builtin_ctz(mask), "%s's lanes %s reach this __syncthreads, its lanes %s another at %s",
		    sim_warp_name(s, w, name, sizeof name), here, there, other);
}

/* The warp's active threads arrive; true when the warp may go on at once (it was the last). */
bool sync_threads(struct sim *s, struct warp *w, uint64_t now, enum stall cause)
{
	struct block *b = &s->blocks[w->block];
	partial_warp(s, w);
	b->bar_arrived += (uint32_t)__builtin_popcount(simt_mask(w));
	count_arrival(s, b, now);
	sched_block(s, w, cause, WAIT_SYNCTHREADS, now);
	simt_cur(w)->next_waiter = b->bar_waiters;
	b->bar_waiters = WAITER(w);
	sync_check_release(s, b, now);
	/* Released warps were advanced by sync_check_release; this one stays parked either way. */
	return false;
}

/*
 * grid.sync() for the co-resident grid: every live thread of every
 * resident block arrives; blocks of the grid on other SMs are taken to
 * arrive no later (the simulated SM is representative).
 */
void sync_grid_check_release(struct sim *s, uint64_t now)
{
	uint32_t live = 0;
	for (uint32_t i = 0; i < s->nblocks; i++)
		live += s->blocks[i].live_threads;
	if (s->grid_waiters == NONE || s->grid_arrived < live)
		return;
	uint32_t id = s->grid_waiters;
	s->grid_waiters = NONE;
	s->grid_arrived = 0;
	release_waiters(s, id, now + (uint64_t)s->m->grid_sync_latency);
	for (uint32_t i = 0; i < s->nblocks; i++) {
		flow_sync(s, &s->blocks[i]);
		for (uint32_t j = 0; j < s->blocks[i].nwarps; j++)
			simt_merge(s, &s->warps[s->blocks[i].first_warp + j]);
	}
}

bool sync_grid(struct sim *s, struct warp *w, uint64_t now)
{
	s->grid_arrived += (uint32_t)__builtin_popcount(simt_mask(w));
	sched_block(s, w, STALL_SYNCTHREADS, WAIT_GRID, now);
	simt_cur(w)->next_waiter = s->grid_waiters;
	s->grid_waiters = WAITER(w);
	sync_grid_check_release(s, now);
	return false;
}

/* Appends to out[*len..n). */
static void add(char *out, size_t n, size_t *len, const char *fmt, ...) DIAG_PRINTF(4, 5);
static void add(char *out, size_t n, size_t *len, const char *fmt, ...)
{
	if (*len >= n)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(out + *len, n - *len, fmt, ap);
	va_end(ap);
	*len += k > 0 ? (size_t)k : 0;
}

/* One side of the deadlock hint: "warp 0 lanes 0-15, warp 1 (consumer) lanes 0-31" over lanes[warp]; "none". */
static void add_warps(struct sim *s, const struct block *b, const uint32_t *lanes, char *out, size_t n, size_t *len)
{
	bool any = false;
	for (uint32_t i = 0; i < b->nwarps; i++) {
		if (!lanes[i])
			continue;
		char name[64], which[100];
		simt_lanes_text(lanes[i], which, sizeof which);
		add(out, n, len, "%s%s lanes %s", any ? ", " : "", sim_warp_name(s, &s->warps[b->first_warp + i], name, sizeof name),
		    which);
		any = true;
	}
	if (!any)
		add(out, n, len, "none");
}

bool sync_deadlock_hint(struct sim *s, char *out, size_t n)
{
	const struct block *b = NULL;
	for (uint32_t i = 0; i < s->nblocks && !b; i++)
		if (s->blocks[i].bar_waiters != NONE)
			b = &s->blocks[i];
	if (!b)
		return false;
	uint32_t *at = calloc(b->nwarps, sizeof *at), *away = calloc(b->nwarps, sizeof *away),
		 *gone = calloc(b->nwarps, sizeof *gone);
	if (!at || !away || !gone) {
		free(at);
		free(away);
		free(gone);
		return false;
	}
	int entry[64];
	for (uint32_t id = b->bar_waiters; id != NONE;) {
		const struct warp *w = &s->warps[WAITER_WARP(id)];
		const struct simt_entry *e = &w->stack[WAITER_ENTRY(id)];
		at[w->in_block] |= e->mask;
		entry[w->in_block % 64] = WAITER_ENTRY(id);
		id = e->next_waiter;
	}
	for (uint32_t i = 0; i < b->nwarps; i++) {
		const struct warp *w = &s->warps[b->first_warp + i];
		int64_t threads = s->launch.block_size - (int64_t)i * 32;
		uint32_t all = threads >= 32 ? 0xffffffffu : (1u << threads) - 1;
		away[i] = w->live & ~at[i];
		gone[i] = all & ~w->live;
	}
	/* The run is over: each warp part of which waits is reported at its __syncthreads (its waiting group made current). */
	for (uint32_t i = 0; s->checks && i < b->nwarps; i++) {
		struct warp *w = &s->warps[b->first_warp + i];
		if (!at[i] || !away[i])
			continue;
		char name[64], here[100], there[100];
		w->cur = entry[i % 64];
		simt_lanes_text(at[i], here, sizeof here);
		simt_lanes_text(away[i], there, sizeof there);
		flow_report(s, w, __builtin_ctz(at[i]),
			    "%s waits at this __syncthreads with lanes %s, its live lanes %s on another path never arrive",
			    sim_warp_name(s, w, name, sizeof name), here, there);
	}
	size_t len = 0;
	add(out, n, &len, "__syncthreads of block %u can never complete: %u of its %u live threads arrived. At it: ", b->id,
	    b->bar_arrived, b->live_threads);
	add_warps(s, b, at, out, n, &len);
	add(out, n, &len, ". Elsewhere (their waits above): ");
	add_warps(s, b, away, out, n, &len);
	add(out, n, &len, ". Exited: ");
	add_warps(s, b, gone, out, n, &len);
	add(out, n, &len, ". bar.sync counts threads: every live thread must arrive, at this __syncthreads or another");
	free(at);
	free(away);
	free(gone);
	return true;
}

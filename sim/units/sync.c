/*
 * sync: __syncthreads (bar.sync 0) of a block.
 *
 * Arriving threads are counted; when every thread that has not exited has
 * arrived, all waiting warps leave the barrier after a release latency
 * that grows with the block's warp count (measured: DESIGN.md §4).
 */
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

static uint64_t release_latency(const struct sim *s, const struct block *b)
{
	return (uint64_t)s->m->syncthreads_base_latency + (uint64_t)s->m->syncthreads_warp_latency * b->nwarps;
}

void sync_check_release(struct sim *s, struct block *b, uint64_t now)
{
	if (b->bar_waiters == NONE || b->bar_arrived < b->live_threads)
		return;
	uint32_t id = b->bar_waiters;
	b->bar_waiters = NONE;
	b->bar_arrived = 0;
	release_waiters(s, id, now + release_latency(s, b));
	flow_sync(s, b);
	/* A block barrier re-converges the groups it held (independent scheduling). */
	for (uint32_t i = 0; i < b->nwarps; i++)
		simt_merge(s, &s->warps[b->first_warp + i]);
}

/* The warp's active threads arrive; true when the warp may go on at once (it was the last). */
bool sync_threads(struct sim *s, struct warp *w, uint64_t now, enum stall cause)
{
	struct block *b = &s->blocks[w->block];
	b->bar_arrived += (uint32_t)__builtin_popcount(simt_mask(w));
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

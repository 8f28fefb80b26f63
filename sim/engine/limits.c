/*
 * limits: the limits a launch is held to before it runs.
 *
 * limit.threads and limit.memory are known from the launch and the kernel
 * alone, so they are checked before anything is sized or allocated, and a
 * mistyped launch stops with a message instead of a swapping host.  The
 * limits that grow while simulating are checked where they are counted:
 * cycles and events in sim.c's loop, loop iterations at a warp's backward
 * jump (simt.c).
 */
#include <stdio.h>

#include "simint.h"

#define RAISE(name) "raise it with --set limit." name "=N or \"limits\": {\"" name "\": N} in the experiment"

struct sim_limits sim_default_limits(void)
{
	return (struct sim_limits){.max_cycles = SIM_DEFAULT_MAX_CYCLES,
				   .max_events = SIM_DEFAULT_MAX_EVENTS,
				   .max_threads = SIM_DEFAULT_MAX_THREADS,
				   .max_loop_iterations = SIM_DEFAULT_MAX_LOOP_ITERATIONS,
				   .max_memory = SIM_DEFAULT_MAX_MEMORY};
}

int sim_check_threads(const struct launch *l, const struct sim_limits *lim, struct diag *d)
{
	/* The grid, not only the resident blocks: it sizes grid_size and the buffers indexed by it. */
	int64_t blocks = l->grid_blocks > l->blocks ? l->grid_blocks : l->blocks;
	uint64_t threads;
	bool huge = blocks < 0 || l->block_size < 0 ||
		    __builtin_mul_overflow((uint64_t)blocks, (uint64_t)l->block_size, &threads);
	if (!huge && threads <= lim->max_threads)
		return 0;
	char count[32] = "more than 2^64";
	if (!huge)
		snprintf(count, sizeof count, "%llu", (unsigned long long)threads);
	return diag_set(d, DIAG_LIMIT,
			"launch: a grid of %lld block%s of %lld threads is %s threads, more than limit.threads = %llu; "
			RAISE("threads"),
			(long long)blocks, blocks == 1 ? "" : "s", (long long)l->block_size, count,
			(unsigned long long)lim->max_threads);
}

/*
 * What setup() in sim.c and the per-block setups it calls (pipe_setup,
 * cbar_setup, flow_setup) allocate, term by term; a change there belongs
 * here too.  Global buffers take no host memory (only their addresses are
 * simulated); shared memory does, as the dataflow checks' shadow of every
 * word.  What grows while running (event heap, trace) is bounded by
 * limit.events instead.
 */
uint64_t sim_state_bytes(const struct kernel *k, const struct machine *m, const struct launch *l)
{
	uint64_t threads = (uint64_t)l->block_size, blocks = (uint64_t)l->blocks;
	uint64_t warps = (threads + 31) / 32 * blocks;
	uint64_t stages = 0, bar_elems = 0;
	for (int i = 0; i < k->npipes; i++) /* a pipeline over warps: a shared state per warp */
		stages += k->pipes[i].stages * (k->pipes[i].warp_group ? (threads + 31) / 32 : 1);
	for (int i = 0; i < k->nbars; i++)
		bar_elems += k->bars[i].count;

	uint64_t per_warp = sizeof(struct warp) + 32 * (uint64_t)k->nslots * sizeof(int64_t) /* registers */
			    + CPA_WARP_RING * sizeof(uint64_t);				 /* cp.async batches */
	uint64_t per_thread = sizeof(struct cpa_thread) + 1			 /* exited_in_pipe */
			      + (uint64_t)k->npipes * (3 + 3 * sizeof(uint32_t)) /* role, quit, waiting; head, tail, seen */
			      + bar_elems * (sizeof(uint32_t) + 1)		 /* bar_seen, bar_dropped */
			      + 2 * sizeof(uint32_t) + sizeof(uint64_t)		 /* flow: vis, proxy_fences, bar_sync */
			      + 3 * sizeof(uint32_t) + 2 * sizeof(uint64_t)	 /* __syncwarp and barrier-arrive ordering */
			      + sizeof(struct flow_thread);			 /* its copies and cp.async.mbarrier.arrives */
	uint64_t per_block = sizeof(struct block) + threads * per_thread +
			     ((uint64_t)k->npipes + 1) * sizeof(struct pipe_block) + stages * sizeof(struct batch_rec) +
			     ((uint64_t)k->nbars + 1) * sizeof(uint32_t) +
			     ((k->shared_bytes + flow_grain(k) - 1) / flow_grain(k) + 1) * sizeof(struct flow_word); /* the shared-memory shadow */
	uint64_t mbars = (2 * stages + bar_elems) * blocks + 1;
	return warps * per_warp + blocks * per_block + mbars * sizeof(struct mbar) +
	       (uint64_t)m->subpartitions * (sizeof(struct subpart) + warps * sizeof(uint32_t));
}

int sim_check_limits(const struct kernel *k, const struct machine *m, const struct launch *l,
		     const struct sim_limits *lim, struct diag *d)
{
	int rc = sim_check_threads(l, lim, d);
	if (rc)
		return rc;
	uint64_t bytes = sim_state_bytes(k, m, l);
	if (bytes <= lim->max_memory)
		return 0;
	return diag_set(d, DIAG_LIMIT,
			"%s: simulating %lld resident block%s of %lld threads needs %llu bytes (registers, per-thread "
			"state, barriers, the shadow of shared memory), more than limit.memory = %llu; " RAISE("memory"),
			k->file, (long long)l->blocks, l->blocks == 1 ? "" : "s", (long long)l->block_size,
			(unsigned long long)bytes, (unsigned long long)lim->max_memory);
}

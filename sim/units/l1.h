/*
 * l1: the SM's L1 data cache, as the loads of a per-thread local array see it.
 *
 * L1 and shared memory are one array per SM (machine l1_bytes); the driver
 * gives a launch's blocks a shared-memory carveout from a fixed set of sizes
 * and L1 keeps the rest.  A kernel asking for more shared memory per block
 * gets a larger carveout, and the local arrays of its warps (the guide's
 * size_t shared_offset[stages], an LDL per use) then compete for less L1
 * with the lines its cached global reads bring in (tests/hw/l1_local.cu,
 * traces/h100/l1_local.csv).  An LDL that misses reads its line from where
 * the kernel's input sits (gmem_read_local).
 *
 * The cache is set-associative with LRU in a set, its sets indexed by a hash
 * of the line (the hardware's index function is not documented; a hash
 * spreads lines as evenly as any).  A local line is a warp's word of one
 * array element: the warp's 32 lanes read one 128-byte line of interleaved
 * local memory.  Global lines that allocate in L1 (4- and 8-byte cp.async,
 * which compiles to LDGSTS.E, and loads) go in at the set's LRU end or its
 * MRU end (machine l1_stream_mru), as the microbenchmark decides.
 */
#ifndef SMSIM_L1_H
#define SMSIM_L1_H

#include <stdbool.h>
#include <stdint.h>

struct machine;

struct l1 {
	uint64_t *tags; /* sets x ways, each set MRU first; 0: an empty way */
	uint32_t sets, ways;
	bool stream_mru;
	uint64_t carveout; /* bytes of shared memory the launch's carveout takes */
	/*
	 * The local lines loaded so far (an open-addressing set of tags): the
	 * first load of one finds it in L1, where the stores that filled the
	 * array at the kernel's start put it (STL.128 allocates, l1_local.sass).
	 */
	uint64_t *seen;
	uint32_t seen_cap, nseen;
};

/*
 * The carveout the driver picks when the program leaves it to the driver:
 * smem_block bytes of shared memory per block of block_size threads.
 */
uint64_t l1_carveout(const struct machine *m, uint64_t smem_block, int64_t block_size);

/* An L1 of l1_bytes - carveout bytes with ways ways; -1 when out of memory. */
int l1_init(struct l1 *c, const struct machine *m, uint64_t carveout, uint32_t ways, bool stream_mru);
void l1_free(struct l1 *c);

/*
 * A warp's load of one local-array word, value naming the element: true on
 * a hit (the first load of an element always hits: see seen).
 */
bool l1_local(struct l1 *c, uint32_t warp, int64_t value);

/* A global line (address / 128) read through L1. */
void l1_stream(struct l1 *c, uint64_t line);

#endif

/*
 * l1: the SM's L1 data cache, as the loads of a per-thread local array see it.
 *
 * L1 and shared memory are one array per SM (machine l1_bytes); the driver
 * gives a launch's blocks a shared-memory carveout from a fixed set of sizes
 * and L1 keeps the rest.  A kernel asking for more shared memory per block
 * gets a larger carveout, and the local arrays of its warps (the guide's
 * size_t shared_offset[stages], an LDL per use) then compete for less L1
 * with the lines its cached global reads and its stores bring in
 * (tests/hw/l1_local.cu, traces/h100/l1_local.csv).  An LDL that misses
 * reads its line from where the kernel's input sits (gmem_read_local).
 *
 * Which LDLs miss is a law of reuse distance, not a cache of sets: an
 * element loaded again after d global lines went through L1 (loads, stores,
 * 4- and 8-byte cp.async, which compiles to LDGSTS.E; 16-byte copies bypass
 * L1) misses with probability l1_reuse_coeff x (d / L1's lines) ^
 * l1_reuse_exponent x (the array's lines / L1's lines) ^
 * l1_reuse_size_exponent, and never while the lines streamed so far would
 * not have filled L1 (nothing has been evicted yet).  On the H100 the miss
 * share rises smoothly with the stream between two uses (l1_local.csv's long
 * rows: 0.02-49% over a 500-fold range of it, one power law within about
 * 20%), where the caches tried on the same rows (LRU of 1-32 ways with the
 * stream at either end, tree pseudo-LRU, random victims) miss by a cliff or
 * too evenly: 2-8 times off (mean absolute log ratio 0.66-1.5 against the
 * law's 0.16).  It rises faster as a larger carveout shrinks L1 than as the
 * stream grows (8 stages of 32 warps: 0.58 / 1.9 / 3.9% of the loads at 64 /
 * 100 / 132 KB carveouts, L1 1.23 and 1.26 times smaller a step, where twice
 * the stream takes 100 KB's 0.55% to 1.9%), hence the second power, of L1's
 * size alone (session 26).  The draw is a hash of the line and the stream's
 * count, so a run is deterministic.
 */
#ifndef SMSIM_L1_H
#define SMSIM_L1_H

#include <stdbool.h>
#include <stdint.h>

struct machine;

struct l1 {
	uint64_t lines;	   /* L1's 128-byte lines beside the carveout */
	uint64_t streamed; /* global lines read or written through L1 so far */
	double coeff, exponent; /* coeff: l1_reuse_coeff with this L1's size term (l1_size_term) in it */
	uint64_t carveout; /* bytes of shared memory the launch's carveout takes */
	/*
	 * The local lines loaded so far (open addressing: tag, and streamed at
	 * its last load).  The first load of one finds it in L1, where the
	 * stores that filled the array at the kernel's start put it (STL.128
	 * allocates, l1_local.sass).
	 */
	uint64_t *seen, *seen_at;
	uint32_t seen_cap, nseen;
};

/*
 * The carveout the driver picks when the program leaves it to the driver:
 * smem_block bytes of shared memory per block of block_size threads.
 */
uint64_t l1_carveout(const struct machine *m, uint64_t smem_block, int64_t block_size);

/*
 * An L1 of l1_bytes - carveout bytes missing by the law coeff x (d / lines) ^
 * exponent x l1_size_term(l1_bytes, lines, size_exponent).
 */
void l1_init(struct l1 *c, const struct machine *m, uint64_t carveout, double coeff, double exponent,
	     double size_exponent);
void l1_free(struct l1 *c);

/*
 * A warp's load of one local-array word, value naming the element: true on
 * a hit (the first load of an element always hits: see seen; one that
 * cannot be remembered for want of memory counts as a hit).
 */
bool l1_local(struct l1 *c, uint32_t warp, int64_t value);

/*
 * The law: the chance that a local line loaded again after since global
 * lines went through an L1 of lines lines has left it (at most 1), coeff
 * holding the size term.
 */
double l1_miss_chance(double coeff, double exponent, uint64_t since, uint64_t lines);

/* The law's size term: (the array's lines / lines) ^ size_exponent; 1 where lines is 0 (nothing to scale). */
double l1_size_term(uint64_t array_bytes, uint64_t lines, double size_exponent);

/* A global line read or written through L1. */
void l1_stream(struct l1 *c);

#endif

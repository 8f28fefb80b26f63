/*
 * cpasync: cp.async groups — what the hardware keeps per warp, and what each
 * thread believes (DESIGN.md §3, "commit coalescing").
 *
 * Each thread has an open batch of copies it issued since its last commit.
 * A commit by the converged threads of one group closes their open batches
 * into ONE new batch of the warp's actual sequence (PB, latest PL); each
 * committing thread's perceived sequence (TB, latest TL) grows by one.
 * wait_prior(N) releases once every actual batch up to PL - N has landed;
 * a thread needed only the actual batch its perceived batch TL - N went
 * into; the extra batches and the cycles between that batch's landing and
 * the release are its over-wait (zero when the warp committed converged).
 * Landing cycles are known when copies issue, so waits are timed, and
 * only the last CPA_RING batches need remembering (N is capped at 8).
 */
#ifndef SMSIM_CPASYNC_H
#define SMSIM_CPASYNC_H

#include <stdbool.h>
#include <stdint.h>

#define CPA_RING 16        /* a thread's perceived batches remembered (N <= 8) */
#define CPA_WARP_RING 1024 /* a warp's actual batches remembered: a diverged warp adds up to 32 a round */
#define CPA_MAX_PRIOR 8

/* What every copy updates, apart from the rest of struct cpa_thread: 32 lanes in 12 cache lines, not 32. */
struct cpa_open {
	uint64_t first; /* first issue of the open batch; NEVER if empty */
	uint64_t land;  /* last landing in the open batch */
	uint64_t last_land; /* last landing of any copy it issued */
};

/*
 * Per warp, the copies of all 32 lanes, kept once (cpa_copy): those since the
 * lanes' open batches were last read, merged as each lane would take them
 * (first NEVER and land 0: none), and the latest landing of any.  While no
 * lane holds a copy of its own in its open batch (lanes_open false) the
 * lanes' batches are what these say.
 */
struct cpa_whole {
	struct cpa_open kept; /* first, land and last_land as a lane's open batch has them */
	bool lanes_open;
};

struct cpa_thread {
	uint32_t commits;    /* perceived batches committed (TL + 1) */
	uint32_t waited;     /* own batches known landed: epochs below this are visible to it */
	uint64_t own_land[CPA_RING]; /* landing of own batches 0..n, prefix max, by n % ring */
	uint32_t actual[CPA_RING];   /* the actual batch each perceived batch went into */
};

struct cpa_warp {
	uint32_t batches;          /* PL + 1 */
	uint32_t reported;         /* actual batches handed to the latency-hiding figures (stats_batch) */
	uint64_t *land;            /* landing of actual batches 0..m, prefix max, by m % CPA_WARP_RING */
	uint64_t *first;           /* first copy issue of actual batch m (NEVER: none), by m % CPA_WARP_RING */
};

#endif

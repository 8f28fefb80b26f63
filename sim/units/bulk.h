/*
 * bulk: TMA stores, cp.async.bulk.global.shared::cta.bulk_group, and the
 * bulk async-groups that complete them (PTX ISA, "cp.async.bulk",
 * "cp.async.bulk.commit_group", "cp.async.bulk.wait_group").
 *
 * Each thread has an open bulk group of the stores it issued since its
 * last cp.async.bulk.commit_group; a commit makes it the thread's newest
 * group.  cp.async.bulk.wait_group N waits until at most the newest N
 * groups are pending; .read waits only until their stores have read their
 * shared source (it may be reused then), without it until their writes to
 * global memory are done too.  Stores that no commit closed belong to no
 * group and are waited for by nothing.  Completion cycles are known at
 * issue, so waits are timed and only the newest BULK_RING groups need
 * remembering (N <= BULK_MAX_PRIOR).
 */
#ifndef SMSIM_BULK_H
#define SMSIM_BULK_H

#include <stdint.h>

#define BULK_RING 64 /* BULK_MAX_PRIOR + 1 */

struct bulk_thread {
	uint32_t stores;            /* bulk stores issued: store i is the thread's i-th */
	uint32_t commits;           /* groups committed */
	uint64_t open_read, open_write; /* the open group's last source read / global write completion (cycles) */
	uint64_t read_done[BULK_RING];  /* group g's reads done, prefix max over groups 0..g, by g % ring */
	uint64_t write_done[BULK_RING]; /* ... its writes done */
	uint32_t upto[BULK_RING];       /* stores issued when group g was committed */
	uint32_t read_known;        /* its stores below this are known to have read their source (a finished wait) */
};

#endif

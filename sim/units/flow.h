/*
 * flow: dataflow checks — smsim knows which copy wrote each shared word and
 * when it landed, so it can say a pipeline is wrong, not only slow.
 *
 * Every shared word remembers its source (global buffer and
 * element), the thread that copied it, when it landed, and what completes
 * it for a reader: a block-pipeline stage, the writer's cp.async batch, a
 * cuda::barrier phase, or (plain stores, synchronous copies) nothing but a
 * __syncthreads.  A shared read is a hazard when the word has not landed
 * or the reader has not synchronised with its completion; a copy into a
 * stage buffer a consumer has not released is a hazard too.  compute()
 * checks provenance: the output it writes must belong to the batch it read.
 * A "word" is 4 bytes, or the smallest element of the kernel's shared
 * buffers when that is smaller (flow_grain), so copies into neighbouring
 * 1- or 2-byte elements are told apart.
 *
 * Proxy ordering: shared memory written by the bulk-copy engine (the async
 * proxy) after a thread read it through the generic proxy (LDS, LDSM) is a
 * hazard unless that thread executed fence.proxy.async between its read and
 * the copy (the PTX memory model; on the H100 the warp-specialised GEMM
 * without the fence issues its release arrive while the stage's LDSMs are
 * still in flight).  The converse: a bulk store (cp.async.bulk to global,
 * the async proxy) reading words a thread wrote through the generic proxy
 * (st.shared, cp.async) with no fence.proxy.async by that writer since.
 * And a word a bulk store reads must not be overwritten, by any proxy,
 * until a cp.async.bulk.wait_group.read covering the store has finished in
 * the storing thread (or, for another writer, before a __syncthreads the
 * writer passed after it).
 */
#ifndef SMSIM_FLOW_H
#define SMSIM_FLOW_H

#include <stdbool.h>
#include <stdint.h>

enum flow_kind {
	FLOW_NONE,  /* never written */
	FLOW_PIPE,  /* a block-pipeline stage: seq */
	FLOW_GROUP, /* the writer's cp.async batch (thread-scope pipeline, primitives): seq = epoch */
	FLOW_BAR,   /* a cuda::barrier phase: obj = element, seq = phase */
	FLOW_PLAIN, /* a plain store or synchronous copy: seq = the block's sync generation */
};

struct flow_word {
	int64_t src;     /* element of the global buffer it came from; -1: not from global memory */
	int16_t src_buf; /* -1: none */
	uint8_t kind;    /* enum flow_kind */
	int16_t obj;     /* pipeline index or barrier element */
	uint16_t writer; /* thread rank in the block */
	uint32_t seq;
	uint32_t epoch;  /* a cp.async's: the writer's commits when it issued (the cp.async group it falls in) */
	uint32_t cpi;    /* a cp.async's: the writer's cp.async copies before it (struct flow_thread.issued) */
	uint64_t land;
	/* the last generic-proxy read since it was written (proxy ordering, flow_async_write) */
	uint32_t rd_op;    /* code index + 1 of the reading op; 0: none */
	uint16_t reader;   /* thread rank in the block */
	uint32_t rd_fence; /* the reader's fence.proxy.async count at the read */
	/* the write, for a bulk store that reads the word (flow_bulk_read) */
	uint32_t wr_op;    /* code index + 1 of the writing op; 0: none */
	uint32_t wr_fence; /* the writer's fence.proxy.async count at the write */
	bool wr_async;     /* written by the async proxy (a bulk copy): no fence needed before a bulk store */
	/* the last bulk store that read it (an overwrite waits for it to be known done) */
	uint32_t bs_op;    /* code index + 1 of the bulk_store; 0: none */
	uint16_t bs_thread;
	uint32_t bs_store; /* that thread's store number (struct bulk_thread.stores) */
};

/*
 * A thread's cp.async.mbarrier.arrive (a block pipeline's producer_commit, a memcpy_async's
 * completion on a cuda::barrier, pipeline_arrive_on): the phase it arrives in tracks every
 * cp.async the thread issued before it, whatever issued them (PTX cp.async.mbarrier.arrive;
 * libcudacxx cuda/__memcpy_async/memcpy_completion.h).  The last FLOW_ARRIVES are kept.
 */
#define FLOW_ARRIVES 4
struct flow_arrive {
	uint32_t cover; /* the thread's cp.async copies before the arrive */
	uint32_t seq;   /* the stage sequence (FLOW_PIPE) or the barrier's phase (FLOW_BAR) */
	int16_t obj;    /* pipeline index or barrier element */
	uint8_t kind;   /* FLOW_PIPE or FLOW_BAR */
};
struct flow_thread {
	uint32_t issued;   /* cp.async copies so far */
	uint32_t narrives; /* arrives so far: ring[narrives % FLOW_ARRIVES] is the next */
	struct flow_arrive ring[FLOW_ARRIVES];
};

#define FLOW_MAX_SHOWN 8

#endif

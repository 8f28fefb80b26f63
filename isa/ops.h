/*
 * ops: the one table of the kernel-description instruction set.
 *
 * Each line: enum name, JSON "op" name, timing class, and what it models.
 * The loader, the simulator's dispatch and the docs all follow this order
 * (grep ORDER OP).  Control ops ("for", "if", ...) are structured in JSON
 * and flattened to BRZ/JMP by the loader; they never reach the SM as such.
 */
#ifndef SMSIM_OPS_H
#define SMSIM_OPS_H

/* Timing classes: how many issue slots an op takes (see machine.h). */
enum op_class {
	OPCLASS_FREE,    /* no issue slot: structural jumps */
	OPCLASS_CONTROL, /* one integer/branch instruction */
	OPCLASS_PIPE,    /* a pipeline/barrier call: machine.pipeline_call_instructions */
	OPCLASS_COPY,    /* async copy issue: setup plus one LDGSTS per chunk */
	OPCLASS_MEM,     /* one memory instruction */
	OPCLASS_ALU,     /* dependent FMA chain */
	OPCLASS_SYNC,    /* bar.sync / bar.warp.sync */
};

/* ORDER OP */
#define OP_LIST(X)                                                                                       \
	X(LET, "let", OPCLASS_CONTROL, "declare a per-thread variable: var = value")                      \
	X(SET, "set", OPCLASS_CONTROL, "assign a per-thread variable")                                   \
	X(BRZ, "", OPCLASS_CONTROL, "branch where cond == 0 (from if/for/while), may diverge")          \
	X(JMP, "", OPCLASS_FREE, "loop back-edge")                                                       \
	X(EXIT, "exit", OPCLASS_CONTROL, "the executing threads end (return)")                           \
	X(SYNCTHREADS, "syncthreads", OPCLASS_SYNC, "__syncthreads() / block.sync()")                    \
	X(SYNCWARP, "syncwarp", OPCLASS_SYNC, "__syncwarp(): re-converge the warp")                      \
	X(GRID_SYNC, "grid_sync", OPCLASS_SYNC, "cg::sync(grid): every thread of the co-resident grid")  \
	X(NANOSLEEP, "nanosleep", OPCLASS_CONTROL, "__nanosleep(ns): the group sleeps, the warp's other groups issue") \
	X(MAKE_PIPELINE, "make_pipeline", OPCLASS_SYNC, "cuda::make_pipeline(group, &state[, P|role])") \
	X(PRODUCER_ACQUIRE, "producer_acquire", OPCLASS_PIPE, "pipeline.producer_acquire()")             \
	X(PRODUCER_COMMIT, "producer_commit", OPCLASS_PIPE, "pipeline.producer_commit()")                \
	X(CONSUMER_WAIT, "consumer_wait", OPCLASS_PIPE, "pipeline.consumer_wait()")                      \
	X(CONSUMER_WAIT_PRIOR, "consumer_wait_prior", OPCLASS_PIPE, "cuda::pipeline_consumer_wait_prior<N>") \
	X(CONSUMER_WAIT_FOR, "consumer_wait_for", OPCLASS_PIPE, "ok = pipeline.consumer_wait_for(duration) / consumer_wait_until(tp)") \
	X(CONSUMER_RELEASE, "consumer_release", OPCLASS_PIPE, "pipeline.consumer_release()")             \
	X(QUIT, "quit", OPCLASS_PIPE, "pipeline.quit(): leave the pipeline early")                       \
	X(MEMCPY_ASYNC, "memcpy_async", OPCLASS_COPY, "cuda::memcpy_async(group, dst, src, bytes, pipe|bar)") \
	X(PIPELINE_MEMCPY_ASYNC, "pipeline_memcpy_async", OPCLASS_COPY, "__pipeline_memcpy_async(dst, src, 4|8|16)") \
	X(PIPELINE_COMMIT, "pipeline_commit", OPCLASS_PIPE, "__pipeline_commit()")                       \
	X(PIPELINE_WAIT_PRIOR, "pipeline_wait_prior", OPCLASS_PIPE, "__pipeline_wait_prior(N)")         \
	X(BARRIER_INIT, "barrier_init", OPCLASS_PIPE, "init(&bar, count)")                              \
	X(BARRIER_ARRIVE, "barrier_arrive", OPCLASS_PIPE, "token = bar.arrive()")                        \
	X(BARRIER_WAIT, "barrier_wait", OPCLASS_PIPE, "bar.wait(std::move(token))")                      \
	X(BARRIER_TRY_WAIT, "barrier_try_wait", OPCLASS_PIPE, "ok = mbarrier.try_wait(token | parity): may suspend, bounded") \
	X(BARRIER_TEST_WAIT, "barrier_test_wait", OPCLASS_PIPE, "ok = mbarrier.test_wait(token | parity): never blocks") \
	X(BARRIER_ARRIVE_AND_WAIT, "barrier_arrive_and_wait", OPCLASS_PIPE, "bar.arrive_and_wait()")    \
	X(BARRIER_ARRIVE_AND_DROP, "barrier_arrive_and_drop", OPCLASS_PIPE, "bar.arrive_and_drop()")    \
	X(BARRIER_EXPECT_TX, "barrier_expect_tx", OPCLASS_PIPE, "cuda::device::barrier_expect_tx(bar, bytes)") \
	X(CG_MEMCPY_ASYNC, "cg_memcpy_async", OPCLASS_COPY, "cooperative_groups::memcpy_async(group, dst, src, bytes): copy + commit") \
	X(CG_WAIT, "cg_wait", OPCLASS_PIPE, "cooperative_groups::wait(group) / wait_prior<N>(group): wait_group N + group.sync()") \
	X(PIPELINE_ARRIVE_ON, "pipeline_arrive_on", OPCLASS_PIPE, "__pipeline_arrive_on(&bar) / cuda::pipeline_producer_commit(pipe, bar)") \
	X(COMPUTE, "compute", OPCLASS_ALU, "compute(out, in): shared load, k dependent FMAs, store")      \
	X(FMA, "fma", OPCLASS_ALU, "a chain of n dependent FMAs")                                        \
	X(SHFL, "shfl", OPCLASS_ALU, "n dependent shfl_down + add steps (a warp reduction)")             \
	X(SHARED_LOAD, "shared_load", OPCLASS_MEM, "a shared-memory load per thread")                    \
	X(SHARED_STORE, "shared_store", OPCLASS_MEM, "a shared-memory store per thread")                 \
	X(GLOBAL_LOAD, "global_load", OPCLASS_MEM, "a global load per thread")                          \
	X(GLOBAL_STORE, "global_store", OPCLASS_MEM, "a global store per thread")                        \
	X(MMA, "mma", OPCLASS_ALU, "warp-wide tensor-core MMA, one k-step of 16: ldmatrix fragments from shared tiles, HMMA.16816.F32") \
	X(FENCE_PROXY_ASYNC, "fence_proxy_async", OPCLASS_CONTROL, "fence.proxy.async.shared::cta: the thread's generic-proxy shared accesses before it, its async-proxy ones after") \
	X(BULK_STORE, "bulk_store", OPCLASS_COPY, "cp.async.bulk.global.shared::cta.bulk_group [dst], [src], bytes: each thread's TMA store into its open bulk group") \
	X(BULK_COMMIT_GROUP, "bulk_commit_group", OPCLASS_PIPE, "cp.async.bulk.commit_group: the thread's open bulk group becomes its newest") \
	X(BULK_WAIT_GROUP, "bulk_wait_group", OPCLASS_PIPE, "cp.async.bulk.wait_group[.read] N: all but the newest N bulk groups complete (.read: their shared reads)")

enum op {
#define OP_ENUM(e, name, cls, doc) OP_##e,
	OP_LIST(OP_ENUM)
#undef OP_ENUM
	OP_COUNT
};

struct op_info {
	const char *name;
	enum op_class cls;
	const char *doc;
};

extern const struct op_info op_table[OP_COUNT];

/* OP_COUNT when name is not an op a kernel description may use. */
enum op op_by_name(const char *name);

#endif

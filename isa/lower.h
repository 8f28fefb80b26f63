/*
 * lower: what an op compiles to, as the timing core sees it.
 *
 * At load time every op of a kernel description lowers to a short
 * sequence of instruction classes with the dependencies between them,
 * taken from the SASS nvcc emits for that op's real form (isa/lower_forms.c
 * holds one table per form, each citing the SASS it was read from).  The
 * semantic units decide what an op does; the issue core (sim/engine/issue.c)
 * decides when each of its instructions issues, from the class's pipe and
 * the results it waits for.
 */
#ifndef SMSIM_LOWER_H
#define SMSIM_LOWER_H

#include <stdint.h>

/*
 * ORDER ICLASS: X(enum, name, SASS it stands for).  Each class has a pipe
 * with an issue interval and a latency in the machine config
 * (iclass_<name>_interval, iclass_<name>_latency).
 */
#define ICLASS_LIST(X)                                                                                 \
	X(ALU, "alu", "32-bit integer and logic: IADD3, LOP3, ISETP, SEL, MOV, SHF, LEA, IMNMX, PLOP3, P2R, R2P, FSEL, PRMT, CS2R, I2FP") \
	X(IMAD, "imad", "the FMA-heavy pipe's integer work: IMAD, IMAD.HI, IMAD.SHL, IMAD.MOV, IMAD.X, VIADD") \
	X(IMADW, "imad_wide", "64-bit products: IMAD.WIDE, IMAD.WIDE.U32 (.X); the FMA-heavy pipe, then a dispatch hold") \
	X(FMA, "fma", "FP32 FFMA, FADD, FMUL, FSETP")                                                 \
	X(CONV, "conv", "conversions and special functions: I2F, F2I, F2F, MUFU, POPC, FLO, BREV")       \
	X(UNI, "uniform", "uniform datapath: ULDC, UIADD3, UIMAD, UMOV, ULOP3, USHF, UISETP, R2UR, S2UR, LDC") \
	X(S2R, "s2r", "special registers: S2R, CS2R")                                                     \
	X(BRA, "branch", "control: BRA, BSSY, BSYNC, WARPSYNC, BMOV, CALL, RET, EXIT, NOP, YIELD")       \
	X(LDS, "lds", "shared load: LDS, LDSM")                                                           \
	X(STS, "sts", "shared store: STS")                                                                \
	X(LDG, "ldg", "global load: LDG, LD")                                                             \
	X(STG, "stg", "global store: STG, ST")                                                            \
	X(LDGSTS, "ldgsts", "cp.async: LDGSTS")                                                           \
	X(DEPBAR, "depbar", "cp.async wait_group: DEPBAR")                                               \
	X(LDGDEPBAR, "ldgdepbar", "cp.async commit_group: LDGDEPBAR")                                     \
	X(SYNCS, "syncs", "mbarrier: SYNCS.ARRIVE, SYNCS.PHASECHK (try_wait), SYNCS.EXCH (init)")         \
	X(BAR, "bar", "block barrier: BAR.SYNC, BAR.ARV, BAR.RED")                                       \
	X(SHFL, "shfl", "warp shuffle: SHFL, VOTE, MATCH, REDUX")                                         \
	X(MMA, "mma", "tensor core: HMMA")

enum iclass {
#define ICLASS_ENUM(e, name, doc) IC_##e,
	ICLASS_LIST(ICLASS_ENUM)
#undef ICLASS_ENUM
	IC_COUNT
};

extern const char *const iclass_name[IC_COUNT];

/* flags of a lowered instruction */
enum {
	LI_ANCHOR = 1, /* the op takes effect here (a wait blocks here, a copy issues here) */
	LI_EXTERN = 2, /* reads a register the op's inputs set (waits for the statements that wrote them) */
	LI_RESULT = 4, /* writes the op's result (a statement's variable); a kernel branch: its taking lanes fetch */
	LI_TAKEN = 8,  /* a branch the path takes: the warp fetches its target before it issues again */
	LI_PAD = 16,   /* never executes (@!PT): ptxas's padding before a run of LDGSTS, an issue slot only */
	LI_LOCAL = 32, /* LDL: a load of a per-thread local array, an L1 hit (machine local_load_latency) */
	LI_LDC = 64,   /* LDC: a constant into a vector register (machine ldc_latency; ULDC is the uniform path's) */
	LI_ARRIVE = 128, /* SYNCS.ARRIVE: its token is back after mbarrier_arrive_latency (iclass_syncs_latency is PHASECHK's) */
	LI_MEMBAR = 256, /* MEMBAR.ALL.CTA: done after fence_membar_latency (fence.csv); what reads it waits */
	LI_WAR = 512,    /* writes a register the warp's previous LDGSTS reads: not before ldgsts_operand_read after it */
};
/*
 * An LDL's site: flags >> LI_LOCAL_SITE is 1 + its index in the kernel's
 * local_reads (the element it loads), 0 when the kernel has more sites than fit.
 */
#define LI_LOCAL_SITE 10
#define LI_LOCAL_SITES 63
/*
 * On an S2R (never an LDL, whose site the bit is part of): it reads a
 * per-thread special register (SR_TID, SR_LANEID), which waits in the MIO
 * queue behind the shared-memory port's work (s2r_mio.csv, SR_VIRTID); a
 * per-CTA or per-SM one (SR_CgaCtaId, SR_VIRTUALSMID) does not.
 */
#define LI_SREG_THREAD (1u << LI_LOCAL_SITE)
/*
 * On an LDGSTS-class instruction (the same bit, never an LDL or S2R): a bulk
 * copy (UBLKCP, UTMALDG, UTMASTG), one instruction of the uniform datapath
 * whatever lanes the warp has, where an LDGSTS works for its lanes
 * (issue.c ldgsts_mio).
 */
#define LI_BULK (1u << LI_LOCAL_SITE)

/* The longest sequence of one op (a loop preheader's hoisted arithmetic included): deps are 64-bit masks. */
#define LOWER_SEQ_MAX 64

/* One instruction of a form. */
struct linst {
	uint8_t cls;   /* enum iclass */
	uint16_t flags; /* LI_* */
	/*
	 * A form's instruction as ptxas scheduled it (its SASS control bits):
	 * the cycles the warp waits before its next instruction, and whether
	 * its result comes back through a scoreboard (variable latency).  0 for
	 * the instructions smsim lowers itself, which wait on their classes'
	 * latencies instead.
	 */
	uint8_t stall;
	uint8_t scoreboard;
	uint64_t deps; /* bit j: reads the result of instruction j (< this one) of the same form */
};

/*
 * One op form's compiled code: code[0..n), the anchor at code[anchor].
 * Instructions [loop_begin, loop_end) repeat once per round of a
 * multi-round op (a group copy's chunks per thread); -1 when none.
 */
struct lform {
	const char *name;   /* e.g. "producer_acquire.block" */
	const char *source; /* the SASS it was read from: file and addresses */
	const struct linst *code;
	uint8_t n;
	int8_t anchor;
	int8_t loop_begin, loop_end;
	uint32_t per_stage; /* bit i: code[i] advances a stage index, which a pipeline of one stage does not have */
	/*
	 * A copy form (anchor LDGSTS): bit i, code[i] computes the copy's shared
	 * destination (to_shared) or its global source (to_global) address, the
	 * anchor in both; 0 for other forms.
	 */
	uint64_t to_shared, to_global;
	uint64_t plain;     /* bit i: code[i] issues as most do, as far as the form says (lform_plain); 0 in lform_table */
	uint64_t chained;   /* bit i: code[i] waits for what a chain hands on (sim/engine/issue.c issue_setup); 0 here */
	/*
	 * bit i: code[i] of a statement reads an LDL's result, directly or
	 * through another: ptxas places it at the statement's first reader, past
	 * the independent instructions between (the partitioned pipeline's
	 * pipelines.sass: LDL R27 at 0x8fa0, its add at 0x9030 after the copy's
	 * S2UR, LDC and ULEA; with_staging_unified4.sass: LDL at 0x0a80, its LEA
	 * at 0x0af0).  It takes its issue slot in order and does not hold the
	 * warp; its result comes its class's latency after the load's (issue.c),
	 * and the reader waits for that.  Set by isa/lower.c finish.
	 */
	uint64_t after_load;
};

/*
 * ORDER LFORM: X(enum, name, what it is).  The op forms with a table in
 * isa/lower_forms.c.  A statement's integer arithmetic is not here: it is
 * lowered from its expression (isa/lower.c).
 */
#define LFORM_LIST(X)                                                                                   \
	X(ACQUIRE_BLOCK, "producer_acquire.block", "block-scope pipeline: try_wait on consumed[head] (anchor)") \
	X(ACQUIRE_THREAD, "producer_acquire.thread", "thread-scope pipeline: nothing but what the call compiles to") \
	X(COMMIT_BLOCK, "producer_commit.block", "block scope: cp.async.mbarrier.arrive.noinc on produced[head] (anchor), head++") \
	X(COMMIT_THREAD, "producer_commit.thread", "thread scope: LDGDEPBAR (anchor), head++")             \
	X(WAIT_BLOCK, "consumer_wait.block", "block scope: try_wait on produced[tail] (anchor) and its retry branch") \
	X(WAIT_THREAD, "consumer_wait.thread", "thread scope: DEPBAR.LE with head - tail - 1 (anchor), tail++") \
	X(RELEASE_BLOCK, "consumer_release.block", "block scope: mbarrier arrive on consumed[tail] (anchor), tail++") \
	X(RELEASE_THREAD, "consumer_release.thread", "thread scope: what the empty call compiles to")      \
	X(WAIT_PRIOR, "wait_prior", "__pipeline_wait_prior(N) / pipeline_consumer_wait_prior<N>: DEPBAR.LE SB0, N (anchor)") \
	X(PRIM_COMMIT, "pipeline_commit", "__pipeline_commit(): LDGDEPBAR (anchor)")                       \
	X(PRIM_COPY, "pipeline_memcpy_async", "__pipeline_memcpy_async(dst, src, 4|8|16): address arithmetic, LDGSTS (anchor)") \
	X(PRIM_COPY_RUN, "pipeline_memcpy_async.run", "a copy continuing a run whose addresses step by a run-time stride: the IMAD into the register the previous LDGSTS read (it waits for that read), LDGSTS (anchor)") \
	X(COPY_THREAD, "memcpy_async.thread", "cuda::memcpy_async(thread, ..., pipeline): LDGSTS per chunk (loop, anchor in it)") \
	X(COPY_GROUP, "memcpy_async.group", "cuda::memcpy_async(block, ..., pipeline): partition, LDGSTS per round (loop, anchor in it)") \
	X(COPY_BARRIER, "memcpy_async.barrier", "cuda::memcpy_async(group, ..., barrier) below 16-byte alignment: LDGSTS rounds, then the barrier's arrive") \
	X(COPY_BULK, "memcpy_async.bulk", "cuda::memcpy_async(group, ..., barrier) with 16-byte alignment: elect, expect_tx, UBLKCP (anchor)") \
	X(BULK_STORE, "bulk_store", "cp.async.bulk.global.shared::cta.bulk_group: uniform address arithmetic, UBLKCP.G.S (anchor)") \
	X(BULK_COMMIT, "bulk_commit_group", "cp.async.bulk.commit_group: UTMACMDFLUSH (anchor)")          \
	X(BULK_WAIT, "bulk_wait_group", "cp.async.bulk.wait_group(.read) N: DEPBAR.LE SB0, N (anchor), the scoreboard cp.async's groups use") \
	X(MAKE_PIPELINE, "make_pipeline", "init of the stage barriers by one thread, then the group's BAR.SYNC (anchor)") \
	X(QUIT, "quit", "pipeline quit(): reference count atomics")                                     \
	X(BARRIER_INIT, "barrier_init", "init(&bar, n): SYNCS.EXCH (anchor)")                               \
	X(BARRIER_ARRIVE, "barrier_arrive", "bar.arrive(): SYNCS.ARRIVE returning the token (anchor)")       \
	X(BARRIER_WAIT, "barrier_wait", "bar.wait(token): try_wait loop (anchor)")                           \
	X(BARRIER_ARRIVE_WAIT, "barrier_arrive_and_wait", "arrive, then the try_wait loop (anchor)")       \
	X(BARRIER_ARRIVE_DROP, "barrier_arrive_and_drop", "arrive_drop (anchor)")                           \
	X(SYNCTHREADS, "syncthreads", "__syncthreads(): BAR.SYNC (anchor)")                                 \
	X(SYNC_BLOCK, "syncthreads.block_sync", "cooperative groups' block.sync(): UMOV, BRA.DIV, BAR.SYNC (anchor)") \
	X(SYNCWARP, "syncwarp", "__syncwarp(): WARPSYNC (anchor)")                                          \
	X(GRID_SYNC, "grid_sync", "cooperative groups grid.sync(): the arrive/spin sequence (anchor: its wait)") \
	X(COMPUTE_LOAD, "compute.load", "compute(): address, LDS of in[elem] (anchor), I2F")              \
	X(CHAIN_TRIP, "compute.trip", "one trip of compute's FMA chain loop, beside its unrolled FFMAs: counter, compare, branch") \
	X(COMPUTE_ENTER, "compute.enter", "k >= 1: the tests of k before the chain loop, its convergence region and counter")      \
	X(COMPUTE_EXIT, "compute.exit", "after the chain loop: the skipped remainder loop's test and the regions' ends")          \
	X(COMPUTE_SKIP, "compute.skip", "k = 0: the test of k that jumps over the chain to the store")                          \
	X(COMPUTE_STORE, "compute.store", "compute(): address, STG of out[elem] (anchor)")                \
	X(SHFL_STEP, "shfl.step", "one step of a shuffle reduction: SHFL (anchor), FADD on its result")   \
	X(SHARED_LOAD, "shared_load", "address, LDS (anchor)")                                            \
	X(SHARED_STORE, "shared_store", "address, STS (anchor)")                                          \
	X(GLOBAL_LOAD, "global_load", "address (64-bit), LDG (anchor)")                                  \
	X(GLOBAL_STORE, "global_store", "address (64-bit), STG (anchor)")                                \
	X(BRANCH, "branch", "an if/while/for test: ISETP on the condition, BRA (anchor)")                  \
	X(DIVERGE, "diverge", "a divergent if: BSSY before the branch, BSYNC at its reconvergence point")

enum lform_id {
#define LFORM_ENUM(e, name, doc) LF_##e,
	LFORM_LIST(LFORM_ENUM)
#undef LFORM_ENUM
	LF_COUNT
};

struct kernel;
/* Lowers every op of k into k->lowered; -1 when out of memory. */
int lower_kernel(struct kernel *k);
void lower_free(struct kernel *k);

/* The SASS tables, indexed by enum lform_id (isa/lower_forms.c). */
extern const struct lform lform_table[LF_COUNT];

/*
 * The instructions of f that the tick may issue inline (sim/engine/chain.h,
 * issue_plain) as far as they themselves decide it: not the form's anchor or
 * its last, no latency of their own (local, LDC, arrive, membar), no wait
 * behind the shared-memory port (a per-thread S2R, a SHFL), no taken branch,
 * no LDGSTS operand read.  Found once per form rather than at each
 * plan of one of its instructions; the op and the group add what they decide.
 */
uint64_t lform_plain(const struct lform *f);

#endif

/*
 * simint: the state the simulator's modules share (internal header).
 *
 * One struct sim holds the SM: resident blocks, their warps, the
 * sub-partition schedulers, memories, barriers and pipelines.  Modules
 * (sched, simt, exec, copy, gmem, mbar, pipe, sync, stats) each own a
 * part and reach the rest only through the functions declared here.
 */
#ifndef SMSIM_SIMINT_H
#define SMSIM_SIMINT_H

#include <stdbool.h>
#include <stdint.h>

#include "../../isa/kernel.h"
#include "../../isa/lower.h"
#include "bulk.h"
#include "cpasync.h"
#include "l1.h"
#include "smem.h"
#include "flow.h"
#include "evq.h"
#include "machine.h"
#include "sim.h"
#include "stall.h"

/*
 * The issue path's helpers: sched_run makes two copies of it (with and
 * without a trace), and GCC would then call a helper from both instead of
 * inlining it, which costs more than the copy it saves.
 */
#define ISSUE_INLINE inline __attribute__((always_inline))

#define NEVER UINT64_MAX
#define NONE UINT32_MAX
#define SIMT_MAX_DEPTH 64
#define FULL_WARP 0xffffffffu /* a group mask with all 32 lanes */
#define SIMT_ORDER_MID 0x80000000u /* a warp's first group's order: splits count up from it, yields down */

/* Event kinds. */
enum ev_kind {
	EV_MBAR_ARRIVE, /* owner: mbarrier; arg: arrival count, bit 32: arrive_drop, bits 33..63: the barrier's init epoch */
	EV_MBAR_TX,     /* owner: mbarrier; arg: bytes of a bulk copy that landed */
	EV_WAKE,        /* owner: a waiter (WAITER); arg: its ticket when the timer was set (a nanosleep, a try_wait's limit) */
};

/*
 * Why a thread group is not runnable.  WAIT_CONVERGE: a convergence
 * barrier's entry (reconverge: convergence_barrier) holding the lanes that
 * reached its reconvergence point while its other paths are still out.
 */
enum wait_kind { WAIT_NONE, WAIT_MBAR, WAIT_SYNCTHREADS, WAIT_SYNCWARP, WAIT_GRID, WAIT_CONVERGE, WAIT_SLEEP };

/*
 * A group of a warp's threads with one pc.  simt_stack: the entries form a
 * stack and only the top runs.  convergence_barrier: the entries form a
 * tree in stable slots — a divergent branch turns its group into the
 * convergence barrier (pc = the reconvergence point, WAIT_CONVERGE) of two
 * child paths, which rejoin it there; every path that is not blocked may
 * issue (simt.c).  independent: each live entry is a group of its own
 * (reconv -1, never stacked) and the warp's issue slots rotate among them.
 */
struct simt_entry {
	/* What an issue reads first: its place in its op and its fetch (most groups are stack[0]). */
	int32_t pc;
	uint32_t mask;        /* 0: a dead slot (independent mode) */
	uint32_t op_step;     /* the op's own progress: copy rounds, compute's phase and FMA, shuffle steps */
	uint16_t li;          /* the next instruction of the op's lowered sequence (isa/lower.h) */
	bool again;           /* the anchor asked for another round of the form's loop; compute: a trip instruction is next */
	uint8_t trip;         /* compute: instructions of the chain loop's current trip still to issue */
	uint64_t redirect;    /* a branch of the kernel's control flow issued: the group fetches from its target until then */
	uint8_t aux;          /* compute, while again: the form of the instructions between its FMAs (enum lform_id) */
	uint8_t blocked;      /* enum wait_kind */
	uint8_t cause;        /* enum stall: what its current block is charged to (sched_block) */
	bool resumed;         /* woken at its anchor: a try_wait held in the SYNCS unit returns, it does not issue again */
	uint8_t polling;      /* a diverged path in a library wait's retry loop: enum wait_poll (mbar_await ends it with the wait) */
	uint16_t trip_fmas;   /* compute: FMAs issued in the chain loop's current trip (of chain_unroll x chains) */
	uint16_t polls;       /* failed polls of that barrier in a row (saturating): SPIN_POLLS of them make a spin */
	int32_t reconv;       /* simt_stack: pc where it rejoins the entry below, -1: none; convergence_barrier: a barrier's branch */
	uint32_t order;       /* convergence_barrier: the newest runnable path issues first: split off later = higher; a spin yields below all (SIMT_ORDER_MID) */
	uint32_t ticket;      /* counts its blocks: a timer set for one block (EV_WAKE) is stale after the next */
	int32_t poll;         /* the mbarrier a test_wait/try_wait of its found incomplete, while it runs nothing but a spin loop; -1: none */
	uint64_t loop_pred;   /* when the predicate of its current loop trip's bottom branch is ready (its compare + branch_predicate_latency) */
	uint64_t wait_start;  /* when the current op first blocked; NEVER if it has not */
	uint32_t next_waiter; /* link in the waiter list of a barrier */
	int32_t blocked_obj;  /* mbarrier waited on (-1: none), for deadlock reports */
	uint32_t token;       /* arrive_and_wait: the phase it arrived in */
	int8_t parent;        /* convergence_barrier: the entry it rejoins at that entry's pc; -1: none */
	uint64_t poll_look;   /* a library wait's poll in a diverged warp: when it reads the phase (mbar_await) */
};

/* A waiter is one group of one warp: warp id << 6 | entry. */
#define WAITER(w) ((w)->id << 6 | (uint32_t)(w)->cur)
#define WAITER_WARP(id) ((id) >> 6)
#define WAITER_ENTRY(id) ((int)((id) & 63))

/* Where a warp's group is in its op: the form it is issuing, or NULL while it issues a chain's FMAs. */
struct cursor {
	const struct insn *in;
	const struct lform *f;
	struct simt_entry *e;
};

struct warp {
	/*
	 * What an issue touches comes first and together: the schedule's and the
	 * plan's fields, the stall counts, the current op's results, then the
	 * group stack (a converged warp issues from stack[0]).  At 4 blocks the
	 * 32 warps' share of these lines no longer fits the host's L1 with the
	 * rest; what only ops and the report read goes last.
	 */
	uint32_t id;       /* index in the SM */
	uint32_t block;    /* resident block */
	uint32_t in_block; /* warp index within its block */
	uint32_t sp;       /* sub-partition */
	uint32_t live;     /* threads that have not exited */
	int depth;         /* entries in use (convergence_barrier, independent: slots, some may be dead) */
	uint32_t order_next; /* convergence_barrier: the last split's order (counts up from SIMT_ORDER_MID) */
	uint32_t order_low;  /* ... and the last yield's (counts down from it) */
	int cur;           /* the entry issuing now */
	bool yielded;      /* convergence_barrier: the current path's poll failed; the next pick hands over */
	uint32_t rleaf;
	uint64_t *rtree;   /* its sub-partition's ready tree, and its leaf there (warp_ready, warp_set_ready) */
	uint64_t *pipe_free; /* its sub-partition's pipe_free: one load less at every check and issue */
	uint64_t runnable; /* bit i: entry i (below depth) has threads and is not blocked; see simt_mark */
	enum stall cause;  /* what the time until it is ready is charged to */
	bool done;
	uint8_t op_cause;  /* what waits inside the current op are charged to when no class says better */
	int8_t op_entry;   /* the group whose op the per-op state below (ext_ready, res, ...) belongs to */
	/*
	 * The next instruction of the op the warp is in, as issue_one planned it
	 * after the last: its class, what it waits for and until when (its
	 * results and inputs, the stall count, the group's branch redirect:
	 * plan_waits; its pipe and the MIO are checked at the pick).
	 * Anything else that moves the warp clears next_known.
	 */
	bool next_known;
	uint8_t next_cls, next_why;
	bool next_plain; /* ... and it issues as most do: issue_plain (chain.h) */
	uint64_t next_deps;
	uint64_t stall_until; /* ptxas's stall count after its last SASS-scheduled instruction: no issue before */
	uint64_t ldgsts_read;  /* its last LDGSTS has read its registers (ldgsts_operand_read after its issue) */
	bool next_free;       /* the planned instruction is a woken try_wait returning: no pipe, no MIO */
	struct cursor next; /* where the planned instruction is: kept, so that no check or issue looks it up again */
	uint64_t since;    /* stalls are charged up to here */
	uint64_t ext_ready;   /* the current op's inputs (its variables) are ready by then */
	uint64_t op_wait;     /* a value the op loaded, which what follows uses, is back then */
	int64_t op_count;     /* the current op's count: compute's k, fma's n, shfl's steps */
	uint64_t stalls[STALL_COUNT];
	uint64_t chain_ready[FMA_MAX_CHAINS]; /* the results the chains' next steps read (compute's value, a shuffle's sum, fma's chains) */
	uint64_t alu_chain_cycles; /* dependent-FMA latency it had to sit through at best */
	uint64_t res[LOWER_SEQ_MAX]; /* per instruction of the current op's sequence: when its result is ready */
	struct simt_entry stack[SIMT_MAX_DEPTH];
	/* What ops and the end of the run touch. */
	int64_t *regs; /* nslots x 32 lanes: slot i of lane l at regs[i * 32 + l] (simt_reg) */
	int64_t *uval; /* nslots: a stale slot's one value */
	uint64_t loop_iterations; /* backward jumps taken, held to limit.loop_iterations */
	uint64_t divergent; /* register slots whose values may differ among the live lanes (bit 63: all from 63 on) */
	uint64_t stale;     /* slots below 63 set warp-uniformly whose 32 lanes were not written: the value is uval[slot] */
	uint64_t *slot_ready; /* per register slot: when the statement that last wrote it has its result */
	uint64_t done_at;
	/*
	 * 1 + the cycle of the first pipeline call (acquire, commit, wait, release) since the warp's
	 * last work (a copy, compute, load or store); 0 after work.  A wait that blocks is exposed from
	 * there: the calls on the way to it do not hide the copy.
	 */
	uint64_t calls_from;
	struct cpa_warp cpa;
	uint32_t l1_dram_lines; /* its DRAM lines in flight through L1 (gmem_read_cached) */
	uint64_t fill_free;     /* its copies' fills into shared memory are written in its issue order (gmem_fill) */
};

/*
 * The warps of a sub-partition and the first cycle each may issue (NEVER
 * while blocked or done), kept in a min-tree: leaf i (ready[i], in
 * tree[leaves + i]) is warps[i], every inner node the minimum of its two
 * children, so the next tick is the root and the oldest ready warp a walk
 * down.  The tree is the only copy of those cycles and changes only
 * through warp_set_ready, at log2(warps) per change instead of a scan of
 * every warp per issue.  Measured against it (host instructions per
 * warp-instruction, 8 to 64 warps, wall time no better): a 4-ary tree
 * (half the depth, but each level reads and compares four children) 7-11%
 * more; a scan of the leaves, even at 2 to 4 warps a sub-partition, 10-80%
 * more.
 */
struct subpart {
	struct warp **warps; /* oldest first (pointers: an issue starts with one load less on its way to the warp) */
	uint64_t *tree;   /* [1, 2 * leaves); unused leaves are NEVER */
	uint64_t *ready;  /* tree + leaves */
	uint32_t leaves;  /* a power of two >= nwarps, 2 or more */
	uint32_t nwarps;
	uint64_t next_tick;   /* the next cycle it may issue; NEVER while none of its warps can */
	uint64_t last_issue;  /* cycle of the last tick that ran; NEVER before any */
	uint32_t greedy;      /* GTO: the index (in warps) of the warp that issued last; 0 before any */
	uint64_t *issued_at;  /* gto_lri: per warp (index in warps), the cycle it last issued; 0 before any */
	uint32_t *block_end;  /* gto_lri: per warp, one past the index of the last warp of its block here */
	uint32_t rr;          /* LRR: where the next search starts */
	uint64_t issued;      /* its warps' issues, summed from their counts at the end (stats.c), not counted per issue */
	uint64_t pipe_free[IC_COUNT]; /* per instruction class: the next cycle its pipe takes an instruction */
};

/* Latency bookkeeping for one consumed batch (stage instance) of a block pipeline. */
struct batch_rec {
	uint64_t seq;        /* NEVER: empty */
	uint64_t first_issue;
	uint64_t last_land;
	uint64_t exposed;    /* longest a consumer warp was blocked on it */
};

#define ARRIVAL_RING 1024 /* cuda::barrier arrivals in flight remembered (a few latencies' worth) */

struct mbar {
	uint32_t phase;    /* completed phases */
	int64_t pending;   /* arrivals still needed in the current phase */
	int64_t expected;  /* arrivals per phase */
	int64_t tx;        /* outstanding transaction bytes */
	int64_t inflight;  /* arrivals sent and not yet counted (they land in order) */
	int64_t inflight_warp; /* the warp that sent all of them; -1: several warps */
	uint64_t busy_until; /* arrivals serialize on the barrier */
	uint32_t waiters;  /* waiter list */
	uint32_t block;
	uint32_t epoch;    /* inits so far: an arrival sent before the last init is dropped (EV_MBAR_ARRIVE) */
	uint32_t init_thread; /* cuda::barrier: the thread that initialised it, */
	uint32_t init_gen;    /* the block's __syncthreads completed then */
	uint64_t init_at;     /* and the cycle: other threads need an order after it (check_init) */
	bool init_race_said;  /* a use not ordered after the init was reported (once a barrier) */
	char what[96];     /* "pipeline.produced[1]", for reports */
	bool initialized;
	int8_t stage_kind;     /* +1: a pipeline's produced barrier, -1: consumed, 0: other */
	uint32_t track;        /* trace track of its copies (cuda::barrier) */
	uint64_t completed_at; /* cycle its last phase completed */
	struct batch_rec filling; /* copies completing the current phase (cuda::barrier) */
	struct batch_rec filled;  /* ... and the last completed phase, while waiters may still be blocked on it */
};

/* Pipeline roles of a thread (bits). */
enum { ROLE_PRODUCER = 1, ROLE_CONSUMER = 2 };

struct pipe_block {
	const struct pipeline_decl *decl;
	uint32_t produced; /* first of S mbarriers (block scope) */
	uint32_t consumed; /* first of S mbarriers (block scope) */
	bool made;         /* some thread ran make_pipeline */
	bool ready;        /* the barriers are initialised */
	uint32_t base;     /* stage sequence where the pipeline made on this shared state last begins (a multiple of S) */
	uint32_t producers;  /* threads that produce (partitioned: P) */
	uint32_t consumers;  /* threads that consume (partitioned: |group| - P) */
	uint32_t members;    /* threads that ran make_pipeline */
	uint8_t split;       /* enum pipe_split of the make_pipeline call */
	int64_t pcount;      /* SPLIT_COUNT: the producer count rank 0 passed */
	uint32_t absent;     /* threads of the group that exited before make_pipeline (set when ready) */
	uint32_t first, size; /* the group: threads first .. first + size - 1 of the block (the block, or a warp) */
	int64_t refcount;    /* libcudacxx: threads still in the pipeline */
	uint8_t *role;       /* per thread: ROLE_* bits; 0 before make_pipeline */
	uint8_t *quit;       /* per thread: left with quit() */
	uint32_t *may_produce; /* per warp of the block: lanes whose thread is a producer and has not quit */
	uint32_t *may_consume; /* ... a consumer and has not quit */
	uint8_t *waiting;    /* per thread: a consumer_wait completed, not yet released */
	uint32_t *head;      /* per thread: commits so far */
	uint32_t *tail;      /* per thread: releases so far */
	uint32_t *seen;      /* per thread: stage sequences below this are visible (waited) */
	struct batch_rec *ring; /* S records, seq % S */
	uint32_t track;         /* trace track of stage 0; stage s is track + s */
};

struct block {
	uint32_t id;
	uint32_t first_warp, nwarps;
	uint32_t live_threads;
	uint32_t bar_arrived;  /* threads at __syncthreads now */
	uint32_t bar_waiters;  /* waiter list */
	uint64_t bar_counted;  /* when the SM's barrier unit has counted the latest of its warps' arrivals */
	struct pipe_block *pipes; /* npipes x pipe_warps: pipeline i of warp w at i * pipe_warps + w (block groups: w = 0) */
	uint32_t pipe_warps;      /* warps of the block */
	struct cpa_thread *cpa; /* per thread */
	struct cpa_open *cpa_open; /* per thread: its open cp.async batch */
	uint32_t *bars;         /* first mbarrier of each cuda::barrier declaration */
	uint32_t nbar_elems;    /* cuda::barrier objects in all */
	uint32_t *bar_seen;     /* [element][thread]: phases below this it has waited for */
	uint8_t *bar_dropped;   /* [element][thread]: it left the barrier with arrive_and_drop */
	uint8_t *exited_in_pipe; /* per thread: exited while in a block pipeline, without quit() */
	struct flow_word *flow;  /* shadow of shared memory, a word per 4 bytes */
	uint32_t *vis;           /* per thread: its cp.async batches below this are visible to all */
	uint32_t sync_gen;       /* __syncthreads completed */
	uint64_t *bar_sync;      /* per thread: completion cycle of the latest barrier phase it waited for */
	uint32_t *proxy_fences;  /* per thread: fence.proxy.async it has executed */
	uint32_t *wsync_vis;     /* per thread: its cp.async batches below this were waited for at its last __syncwarp */
	uint32_t *wsync_mask;    /* per thread: the lanes of that __syncwarp */
	uint64_t *wsync_at;      /* per thread: its cycle */
	uint32_t *rel_vis;       /* per thread: its cp.async batches below this were waited for at its last barrier arrive */
	uint64_t *rel_at;        /* per thread: the cycle of that arrive */
	struct bulk_thread **bulk; /* per thread: its bulk async-groups (TMA stores); NULL until its first bulk op */
	uint32_t *bulk_vis;      /* per thread: its bulk stores below this had read their source at the last __syncthreads */
	struct flow_thread *flow_threads; /* per thread: its cp.async copies and recent cp.async.mbarrier.arrives */
	uint32_t *bar_lanes;     /* per warp: its lanes at the pending __syncthreads */
	int32_t *bar_pc;         /* per warp: the __syncthreads (code index) its first lanes there reached */
};

/* Reads in flight: a min-heap by landing (gmem.c flights_push, flights_pop). */
struct flights {
	struct flight {
		uint64_t land;
		uint32_t warp;  /* the warp that read */
		uint32_t count; /* what it holds: lines through L1, or sectors from DRAM */
	} *heap;
	size_t n, cap;
};

struct gmem {
	uint64_t dram_free; /* 1/1024 cycles: when the DRAM share has drained the stores written back */
	/* 1/1024 cycles: when the DRAM share has served every read and write-back so far, as their bytes would
	 * reach the SM (a DRAM trip after the request); dram_free, without the trip, ends the kernel */
	uint64_t dram_share_free;
	struct flights dram_reads; /* this SM's DRAM reads not yet landed, count in sectors (gmem.c dram_read) */
	uint64_t dram_sectors;     /* their sectors */
	struct fetched {
		uint64_t sector; /* + 1; 0: an empty slot */
		uint64_t ready;  /* when it has arrived */
	} *fetched;             /* sectors fetched from DRAM lately, by slot (gmem.c l2_fetched); NULL until the first */
	uint64_t l2_free;
	struct smem_port {
		uint64_t free;          /* cycles: the port has served what it was given */
		struct port_fill *heap; /* copies' fills not yet at the port, by arrival (smemport.c) */
		size_t n, cap;
	} port;
	uint64_t copies_land; /* latest landing of any copy issued so far */
	uint64_t mio_free;    /* cycles: the SM's memory-instruction path has worked off what it was given */
	uint64_t mio_room;    /* ... and has room again (mio_queue_cycles before that; 0: room now) */
	/* DRAM lines read through L1 still in flight, and their count (each warp keeps its own share, warp.l1_dram_lines). */
	struct flights l1_misses;
	uint64_t l1_dram_lines;
	double l2_kept; /* the share of the kernel's global data a warmed L2 still holds (gmem_setup) */
	double l2_written_back;     /* the share of stored bytes the L2 writes back while the kernel runs (gmem_write) */
	uint64_t written_back_fp;   /* 1/1024 bytes: written back, not yet charged to the DRAM share */
};

struct sim {
	const struct machine *m;
	const struct kernel *k;
	struct launch launch;
	struct sim_limits limits;
	struct evq q;
	struct warp *warps;
	uint32_t nwarps;
	struct block *blocks;
	uint32_t nblocks;
	struct subpart *sps;
	struct mbar *mbars;
	uint32_t nmbars;
	struct gmem mem;
	struct l1 l1;
	uint64_t now;
	uint32_t warps_left;
	struct sim_report *rep;
	struct diag *d;
	int error; /* first error raised during the run (diag code) */
	bool checks; /* dataflow checks on */
	struct trace *trace; /* NULL unless recording */
	uint64_t *op_issued; /* NULL unless counting per op (sim_report.op_issued) */
	uint32_t copy_tracks_per_block;
	uint32_t grid_arrived, grid_waiters; /* grid.sync over the resident blocks */
	uint64_t bar_unit_free; /* when the SM's barrier unit can count the next __syncthreads arrival (sync.c) */
	struct warp *issuing; /* the warp whose op runs now (exec_issue), else NULL */
	uint64_t sm_next;  /* the earliest next_tick of the sub-partitions */
	uint64_t sm_ticks; /* cycles the schedulers ran, counted as events */
	unsigned tree_depth; /* log2 of every sub-partition's ready-tree leaves where they share it, else 0 (sched_run) */
	uint64_t l2_hash_seed;
	int64_t *lane_regs; /* nslots: one lane's registers gathered for expr_eval_code */
	/*
	 * Slots an arrive writes its token into: it does not update the warp's
	 * divergent slots (simt_uniform has always taken them as tracked, and
	 * results depend on it), so per-lane evaluation does not trust them.
	 */
	uint64_t token_slots;
	/*
	 * SIMT_AGREE_SLOTS per warp (simt_agree): per slot below 63, lanes known
	 * to hold one value in it.  Set where a value was written to them all at
	 * once (simt_agreeing), cleared by every other write of its lanes
	 * (simt_disagree).  Apart from struct warp, whose size the memory
	 * limit's estimate and its message count.
	 */
	uint32_t *agree;
	/*
	 * Per warp: its threads' cp.async records (commits, the actual batch of
	 * each, what they waited for) may differ, since a commit or a wait of
	 * some of its lanes only.  While they cannot, a whole warp's wait is
	 * one thread's (cpa_wait_prior).  Apart from struct warp, as agree is.
	 */
	uint8_t *cpa_apart;
	struct cpa_whole *cpa_whole; /* per warp: its whole-warp copies, kept once (cpasync.h) */
	/* The machine's per-class timing, indexed by enum iclass (machine_iclass). */
	uint64_t cls_lat[IC_COUNT], cls_ivl[IC_COUNT], cls_mio[IC_COUNT];
	uint64_t pred_extra; /* a compare's predicate reaches a branch this long after its register reaches an ALU */
	struct lform forms[LF_COUNT]; /* lform_table with each form's plain bits (issue_setup): the forms issue takes */
	uint64_t cls_issued[IC_COUNT]; /* warp-instructions issued per class, a chain's FMAs (compute_issues) left out */
	uint64_t cls_mio_busy[IC_COUNT]; /* MIO cycles charged per class: an arrive's, a woken try_wait's none */
	/* Set by an anchor whose result comes from the memory model (a load's data): when it is back. */
	uint64_t anchor_result;
	/* Set by an mma's anchor: when each of its LDSMs' fragments is back (exec.c exec_mma), in order */
	uint64_t mma_fragment_back[MMA_MAX_INSNS];
	/* mma's recent ldmatrix costs by op (code index), fragment and key (exec.c) */
#define MMA_COST_SLOTS 128
	struct mma_cost {
		const struct insn *in;
		int f;        /* fragment + 1; 0: empty */
		uint64_t key; /* first row's offset in its 128 bytes, the row stride */
		uint32_t wavefronts, ways, phases; /* its smem_cost */
		uint64_t wave_latency; /* llround(ldsm_latency_per_wavefront * wavefronts): a libm call a fragment */
	} mma_costs[MMA_COST_SLOTS];
	struct smem_memo *smem_memo; /* the costs of recent shared-memory access shapes */
	uint64_t spin_check_at; /* a failed poll checks whether the SM is stuck spinning again from this cycle on */
	uint32_t flow_grain;    /* bytes per entry of the dataflow checks' shadow of shared memory (flow_grain) */
	/* cuda::barrier arrivals on their way (mbar_arrive_checked): who sent them, for the excess-arrival check */
	struct arrival_rec {
		uint32_t warp;  /* index into warps */
		uint32_t lanes; /* the arriving threads */
		uint32_t pc;    /* the statement */
		uint32_t phase; /* the phase it arrived in: its token */
	} arrivals[ARRIVAL_RING];
	uint32_t arrivals_next;
};

/* sched.c */
static inline uint64_t warp_ready(const struct warp *w) { return w->rtree[w->rleaf]; }
/*
 * Brings the ancestors of leaf i up to date, all of them: stopping where a
 * node keeps its value saves up to 9 host instructions per warp-instruction
 * at 64 warps (and costs 1-2 at 8 and 16), but its branch mispredicts as
 * the warps interleave: 30% more wall time at 16 to 64 warps.
 */
static inline void ready_tree_fix(uint64_t *t, size_t i)
{
	uint64_t m = t[i];
	do { /* a leaf is never the root (sched_setup: 2 leaves or more) */
		uint64_t sib = t[i ^ 1];
		m = sib < m ? sib : m;
		t[i >> 1] = m;
		i >>= 1;
	} while (i > 1);
}
/*
 * The first cycle the warp may issue; NEVER: blocked or done.  The warp
 * issuing now only writes its leaf: its tick fixes the tree above it
 * once, after the op (until then only that leaf's parent may be stale, and
 * the tree is not read).
 */
static inline void warp_set_ready(struct sim *s, struct warp *w, uint64_t at)
{
	w->rtree[w->rleaf] = at;
	if (w != s->issuing)
		ready_tree_fix(w->rtree, w->rleaf);
}
/* After the warps are made: each sub-partition's ready tree, every warp ready at cycle 0. */
int sched_setup(struct sim *s);
void sched_free(struct sim *s);
void sched_charge(struct sim *s, struct warp *w, uint64_t now);
/* The issuing group blocks; the warp stays ready while another group can run. */
void sched_block(struct sim *s, struct warp *w, enum stall cause, enum wait_kind kind, uint64_t now);
/* Group `entry` of the warp may issue again at cycle at. */
void sched_wake(struct sim *s, struct warp *w, int entry, uint64_t at);
void sched_wake_waiter(struct sim *s, uint32_t waiter, uint64_t at);
/* The issuing group sleeps (__nanosleep) until cycle until: blocked, its warp's other groups may issue. */
void sched_sleep(struct sim *s, struct warp *w, uint64_t until, uint64_t now);
/* Wakes the issuing group, blocked now, at cycle at unless something else wakes it first (EV_WAKE). */
void sched_timer(struct sim *s, struct warp *w, uint64_t at);
/* nanosleep's anchor: the group sleeps (false) the first time; true once it has slept. */
bool sched_nanosleep(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
/* An EV_WAKE event fired: a sleep ended or a try_wait reached its time limit. */
void sched_timer_fired(struct sim *s, uint32_t waiter, uint64_t ticket, uint64_t now);
void sched_kick(struct sim *s, uint32_t sp, uint64_t at);
/*
 * The SM ticks at s->sm_next (every sub-partition due then issues once), and
 * again at each next tick while that comes before the next event and within
 * the limits: the event loop's own tests, without a round trip through it
 * per tick.
 */
void sched_run(struct sim *s);

/* simt.c */
static inline struct simt_entry *simt_cur(struct warp *w) { return &w->stack[w->cur]; }
static inline uint32_t simt_mask(const struct warp *w) { return w->stack[w->cur].mask; }
/* Whether mask's lanes lie together, lowest to highest without a gap (a full warp, a half): a straight lane loop takes them. */
static inline bool simt_lanes_solid(uint32_t mask)
{
	if (!mask)
		return false;
	uint32_t m = mask >> __builtin_ctz(mask);
	return !(m & (m + 1));
}
static inline int32_t simt_pc(const struct warp *w) { return w->stack[w->cur].pc; }
/* Entry i's mask, blocked or the depth changed: its bit in w->runnable follows. */
static inline void simt_mark(struct warp *w, int i)
{
	if (i < w->depth && w->stack[i].mask && !w->stack[i].blocked)
		w->runnable |= 1ull << i;
	else
		w->runnable &= ~(1ull << i);
}
/* independent: the next runnable group after the current one, round robin. */
bool simt_pick_group(struct warp *w);
/* convergence_barrier, a diverged warp: the path to issue (simt.c). */
bool simt_pick_path(struct warp *w);
/*
 * convergence_barrier: the issuing group's poll failed; it goes below the
 * warp's other paths, so a spin cannot starve the path it waits for.
 */
void simt_yield(const struct sim *s, struct warp *w);
/* convergence_barrier: the issuing group, in a wait that spins or whose poll failed, lets the lanes at the convergence barriers it is in go on; whether any went. */
bool simt_detach(struct sim *s, struct warp *w, uint64_t now);
/* Chooses the group to issue; false when none can. */
static inline bool simt_pick(const struct sim *s, struct warp *w)
{
	switch (s->m->reconverge) {
	case RECONVERGE_INDEPENDENT: return simt_pick_group(w);
	case RECONVERGE_SIMT_STACK:
		/* the top of the stack, unless it waits */
		w->cur = w->depth - 1;
		return w->depth > 0 && !w->stack[w->cur].blocked;
	default:
		if (w->depth == 1) { /* converged: the one group */
			w->cur = 0;
			w->yielded = false;
			return w->runnable != 0;
		}
		return simt_pick_path(w);
	}
}
bool simt_runnable(const struct sim *s, const struct warp *w);
void simt_syncwarp(struct sim *s, struct warp *w, uint64_t now);
/* independent: groups at the same pc, none of them waiting, become one (after a block barrier). */
void simt_merge(struct sim *s, struct warp *w);
/*
 * A waiting group is released past its op (a block barrier, a __syncwarp):
 * it may issue the next op at cycle at.  Under convergence_barrier a group
 * released onto its reconvergence point joins the barrier there instead.
 */
void simt_release(struct sim *s, struct warp *w, int entry, uint64_t at);
/* Assigns per-lane values (v[lane] for the lanes in mask) to a variable, keeping its uniformity right. */
void simt_assign_values(struct sim *s, struct warp *w, uint16_t slot, uint32_t mask, const int64_t v[32]);
/* convergence_barrier: the lanes a convergence barrier's entry holds at its point (the deadlock report's count). */
uint32_t simt_arrived(const struct warp *w, int entry);
bool simt_polls_apart(const struct sim *s, const struct warp *w, const struct simt_entry *e);
/* A poll of barrier bar found its phase incomplete: failed polls of one barrier in a row make a spin (SPIN_POLLS). */
static inline void simt_failed_poll(struct simt_entry *e, int32_t bar)
{
	e->polls = e->poll == bar ? (uint16_t)(e->polls + (e->polls < UINT16_MAX)) : 1;
	e->poll = bar;
}
/*
 * simt_stack: the lanes on paths the stack holds back below a blocked top,
 * which independent thread scheduling would run (0: none); for the
 * deadlock report's hint.
 */
uint32_t simt_held_back(const struct warp *w);
int64_t simt_eval(struct sim *s, struct warp *w, int lane, const struct expr *e);
/* As simt_eval, without reporting a fault (the value is then 0): a look ahead at what the op will compute. */
int64_t simt_peek(struct sim *s, struct warp *w, int lane, const struct expr *e);
/* The current op's field key ("dst", "src") as the kernel file writes it, for messages ("" if none). */
/* "warp W", or "warp W (ROLE)" when the kernel names its role; into out, which it returns. */
const char *sim_warp_name(const struct sim *s, const struct warp *w, char *out, size_t n);
void sim_op_text(const struct sim *s, const struct warp *w, const char *key, char *out, size_t n);
/* text with the lane's variables, the params and the launch sizes replaced by their values, for messages. */
void simt_substitute(const struct sim *s, const struct warp *w, int lane, const char *text, char *out, size_t n);
/* One lane's variables as "name=value ...", for messages. */
void simt_describe_lane(const struct sim *s, const struct warp *w, int lane, char *out, size_t n);
/*
 * Evaluates in every lane of mask, whatever the uniformity tracking says, and reports nothing:
 * returns the lowest lane that faulted (its fault in *fault; out is 0 there) or -1.
 */
int simt_eval_each(struct sim *s, struct warp *w, const struct expr *e, uint32_t mask, int64_t out[32],
		   enum expr_fault *fault);
/* The program error of an expression that faulted in this lane. */
void simt_fault(struct sim *s, struct warp *w, int lane, enum expr_fault f);
/* Whether e has one value for all the warp's live lanes: it reads no slot that may differ between them. */
static inline bool simt_uniform(const struct warp *w, const struct expr *e)
{
	return e->is_const || !(e->slots & w->divergent);
}
/* Evaluates for every lane in mask, once for the warp when nothing it reads differs between lanes. */
void simt_eval_lanes(struct sim *s, struct warp *w, const struct expr *e, uint32_t mask, int64_t out[32]);
/*
 * As simt_eval_lanes, but a value all lanes of mask share (a warp-uniform one, or a lone lane's) is only
 * stored in *uni (true is returned, out is untouched).
 */
bool simt_eval_some(struct sim *s, struct warp *w, const struct expr *e, uint32_t mask, int64_t *uni, int64_t out[32]);
/*
 * For a full warp (mask all 32 lanes) a lane-affine e (tid * 8 + ...) as simt_eval_some would find it,
 * without the lanes between: true with lane 0's and lane 31's values in ends and the step from each
 * lane to the next in *step (no lane faults); false where simt_eval_some would take another path or
 * would report a fault, and then it is to be called as before.
 */
bool simt_eval_rise(struct sim *s, struct warp *w, const struct expr *e, int64_t ends[2], int64_t *step);
/*
 * e's value in lane, where every lane of the warp computes the same: it reads no slot that the warp's
 * tracking cannot vouch for (not even an arrive's token, which it does not track) and lane's run
 * faults nowhere.  False otherwise, changing nothing: the caller then takes its lanes one by one.
 */
bool simt_eval_shared(struct sim *s, struct warp *w, const struct expr *e, int lane, int64_t *v);
/* Assigns a variable for the lanes in mask, keeping track of whether it is still warp-uniform. */
void simt_assign(struct sim *s, struct warp *w, uint16_t slot, const struct expr *e, uint32_t mask);
void simt_advance(struct sim *s, struct warp *w);
void simt_branch(struct sim *s, struct warp *w, const struct insn *in);
void simt_jump(struct sim *s, struct warp *w, int32_t target);
void simt_exit_lanes(struct sim *s, struct warp *w, uint32_t lanes, uint64_t now);
/*
 * A slot's 32 lanes lie together, so a warp-wide read or write of a
 * variable touches four cache lines, not one per lane.
 */
static inline int64_t *simt_reg(const struct warp *w, unsigned slot, int lane)
{
	return &w->regs[(size_t)slot * 32 + (size_t)lane];
}
/* A register of one lane (a stale slot's value is its uval). */
static inline int64_t lane_reg(const struct warp *w, uint64_t slot, int lane)
{
	return slot < 63 && (w->stale >> slot & 1) ? w->uval[slot] : *simt_reg(w, (unsigned)slot, lane);
}
#define SIMT_AGREE_SLOTS 63
/* The warp's lanes known to agree, per slot below 63 (s->agree). */
static inline uint32_t *simt_agree(const struct sim *s, const struct warp *w)
{
	return &s->agree[(size_t)w->id * SIMT_AGREE_SLOTS];
}
/*
 * A slot's lanes of mask were just written one value; a split group's
 * reads find them agreeing without a compare per lane.
 */
static inline void simt_agreeing(const struct sim *s, const struct warp *w, unsigned slot, uint32_t mask)
{
	if (slot < SIMT_AGREE_SLOTS)
		simt_agree(s, w)[slot] = mask;
}
/* A slot's lanes are about to be written one by one: nothing is known of their agreement. */
static inline void simt_disagree(const struct sim *s, const struct warp *w, unsigned slot)
{
	if (slot < SIMT_AGREE_SLOTS)
		simt_agree(s, w)[slot] = 0;
}
/* Writes the stale ones among slots into their 32 lanes, before lanes are read or written one by one. */
static inline void simt_materialize(struct warp *w, uint64_t slots)
{
	for (uint64_t b = slots & w->stale; b; b &= b - 1) {
		unsigned slot = (unsigned)__builtin_ctzll(b);
		int64_t u = w->uval[slot], *r = simt_reg(w, slot, 0);
		for (int lane = 0; lane < 32; lane++)
			r[lane] = u;
	}
	w->stale &= ~slots;
}

/* exec.c: what an op does when its sequence reaches its anchor instruction. */
enum anchor_status {
	ANCHOR_DONE,    /* took effect: the rest of the sequence follows */
	ANCHOR_AGAIN,   /* took effect for one round: the form's loop runs again */
	ANCHOR_BLOCKED, /* waits (the group is parked); the anchor runs again when it wakes */
	ANCHOR_MOVED,   /* took effect and moved the pc itself (a branch, exit, a released barrier) */
};
enum anchor_status exec_anchor(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
int sim_fail(struct sim *s, enum diag_code code, const struct warp *w, const char *fmt, ...) DIAG_PRINTF(4, 5);
/*
 * sim.c: a group failed SPIN_POLLS polls of one barrier in a row, running
 * nothing but its loop in between: it spins.  Ends the run as a deadlock
 * when nothing but spinning and waiting is left.
 */
#define SPIN_POLLS 16
void sim_check_spin(struct sim *s, uint64_t now);

/* gmem.c: completion cycle of a request of nsectors 32-byte sectors. */
uint64_t gmem_read(struct sim *s, uint64_t now, const uint64_t *sectors, uint32_t nsectors);
/*
 * The same for a read through L1 by warp w (a load, a 4- or 8-byte cp.async):
 * its lines take room in L1 (gmem_through_l1), and what misses L2 lands
 * spread around its median, the wider the more lines the SM's other warps
 * have in flight through L1 (dram_spread_per_line).
 */
/* How far a read through L1 lands from its median (dram_spread), and would on an idle SM. */
struct gmem_spread {
	int64_t landed, idle;
};
uint64_t gmem_read_cached(struct sim *s, const struct warp *w, uint64_t now, const uint64_t *sectors, uint32_t nsectors,
			  struct gmem_spread *spread);
/* A local-memory line that missed in L1, named by line: its completion cycle. */
uint64_t gmem_read_local(struct sim *s, const struct warp *w, uint64_t now, uint64_t line);
void gmem_free(struct sim *s);
void gmem_setup(struct sim *s);
/*
 * An access whose lines take room in L1 (a load, a store, a 4- or 8-byte
 * cp.async: LDGSTS.E; a 16-byte one bypasses L1): they push the local arrays
 * out (l1_local.csv: a store a batch doubles the local misses).  Whether the
 * access's own lines hit is not modelled: every read goes to L2.
 */
void gmem_through_l1(struct sim *s, const uint64_t *sectors, uint32_t nsectors);
void gmem_write(struct sim *s, uint64_t now, uint32_t nsectors);
/* A bulk store's write of nsectors starting now; returns when the L2 has them. */
uint64_t gmem_write_bulk(struct sim *s, uint64_t now, uint32_t nsectors);
uint32_t gmem_sectors(const uint64_t addr[32], uint32_t mask, uint32_t width, uint64_t out[64]);
/* The sectors of the bytes from lo up to end, in increasing order (at most 64): gmem_sectors' list for lanes back to back. */
uint32_t gmem_sectors_span(uint64_t lo, uint64_t end, uint64_t out[64]);
uint64_t gmem_fill(struct warp *w, const struct machine *m, uint64_t arrive, uint32_t bytes);
/* Cycles such a read (gmem_read, gmem_read_bulk) takes on an idle SM: no queue ahead of it. */
uint64_t gmem_unloaded(const struct sim *s, const uint64_t *sectors, uint32_t nsectors);
uint64_t gmem_unloaded_bulk(const struct sim *s, uint64_t first_sector, uint32_t nsectors);
/*
 * A copy's read of nsectors (0: none, done now): through L1 (gmem_read_cached)
 * or not (gmem_read), and in *unloaded what it takes on an idle SM as the L2
 * holds its sectors before it (gmem_unloaded); the L2 is looked at once for both.
 */
uint64_t gmem_read_copy(struct sim *s, const struct warp *w, uint64_t now, const uint64_t *sectors, uint32_t nsectors,
			bool cached, struct gmem_spread *spread, uint64_t *unloaded);
/* A bulk (TMA) read of nsectors consecutive sectors. */
uint64_t gmem_read_bulk(struct sim *s, uint64_t now, uint64_t first_sector, uint32_t nsectors);

/* mbar.c */
uint32_t mbar_new(struct sim *s, uint32_t block, const char *what);
void mbar_init(struct mbar *b, int64_t expected);
/* Arrivals (drop: arrive_drop) counted at cycle at, serialized on the barrier. */
void mbar_arrive_later(struct sim *s, uint32_t bar, uint64_t at, uint32_t count, bool drop);
void mbar_arrive_checked(struct sim *s, const struct warp *w, uint32_t bar, uint64_t at, uint32_t count, bool drop);
uint32_t mbar_landing_phase(const struct mbar *b, uint32_t warp);
void mbar_arrive(struct sim *s, uint32_t bar, uint32_t count, bool drop, uint64_t now);
void mbar_track_copies(struct sim *s, uint32_t bar, uint32_t count, uint64_t land);
void mbar_complete_tx_later(struct sim *s, uint32_t bar, uint64_t at, int64_t bytes);
/* A copy that completes this barrier's current phase, for the latency-hiding metrics. */
void mbar_note_copy(struct sim *s, uint32_t bar, uint64_t issue, uint64_t land);
void mbar_finish_stats(struct sim *s);
void mbar_wait_on(struct sim *s, struct warp *w, uint32_t bar);
/*
 * A library wait's (cuda::barrier, pipeline) state of its retry loop in a diverged warp (mbar_await):
 * a failed answer due (its YIELD next), a poll to begin, a poll under way.
 */
enum wait_poll { POLL_NONE, POLL_ON, POLL_TRIED, POLL_LOOKING };
bool mbar_await(struct sim *s, struct warp *w, bool complete, uint32_t bar, enum stall cause, uint64_t now);
/* Takes a waiter off the barrier's list (a try_wait whose time limit came first). */
void mbar_unwait(struct sim *s, uint32_t bar, uint32_t waiter);
/* An EV_MBAR_ARRIVE event: the arrivals it carries, unless the barrier was initialised again since. */
void mbar_arrive_event(struct sim *s, uint32_t bar, uint64_t arg, uint64_t now);
static inline bool mbar_phase_done(const struct mbar *b, uint32_t phase) { return b->phase > phase; }
/* PTX try_wait.parity: true once the phase of this parity has completed (the current one has the other). */
static inline bool mbar_parity_done(const struct mbar *b, uint32_t parity) { return (b->phase & 1u) != (parity & 1u); }
void mbar_expect_tx(struct sim *s, uint32_t bar, int64_t bytes, uint64_t now);
void mbar_complete_tx(struct sim *s, uint32_t bar, int64_t bytes, uint64_t now);

/* pipe.c */
int pipe_setup(struct sim *s, struct block *b);
void pipe_free(struct sim *s, struct block *b);
bool pipe_make(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
bool pipe_acquire(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
bool pipe_commit(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
bool pipe_wait(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
bool pipe_wait_for(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
bool pipe_release(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
bool pipe_wait_prior(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
bool pipe_quit(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
void pipe_thread_exits(struct sim *s, struct warp *w, uint32_t lanes);
/* The stage sequence a copy by this thread joins (its head), for the dataflow checks. */
uint32_t pipe_copy_seq(struct sim *s, const struct warp *w, int pipe, int lane);
bool pipe_visible(struct sim *s, uint32_t block, int pipe, uint32_t writer, uint32_t tid, uint32_t seq);
bool pipe_released(struct sim *s, uint32_t block, int pipe, uint32_t writer, uint32_t seq);
void pipe_finish_stats(struct sim *s);

/* cpasync.c */
/* Copies by the lanes issued now that land at land. */
void cpa_copy(struct sim *s, struct warp *w, uint32_t lanes, uint64_t issue, uint64_t land);
/* The warp's whole-warp copies, kept once (s->cpa_whole), go into its threads' open batches before they are read. */
void cpa_settle(struct sim *s, struct warp *w);
/*
 * A whole warp's open batches close, its kept copies in them as cpa_settle would put them: the earliest
 * first issue in *first, and true with the one latest landing of every lane in *land where they share
 * it (no lane copied on its own), else false with each lane's in land[].
 */
bool cpa_take_whole(struct sim *s, struct warp *w, uint64_t *first, uint64_t land[32]);
uint32_t cpa_epoch(struct sim *s, const struct warp *w, int lane);
uint64_t cpa_last_land(struct sim *s, const struct warp *w, int lane);
void cpa_commit(struct sim *s, struct warp *w, uint32_t mask);
/*
 * The cycle the warp's threads in mask may go on; records each thread's over-wait.  batches:
 * the groups the wait covers count in the latency-hiding figures (the primitives; a pipeline
 * counts its stages instead).
 */
uint64_t cpa_wait_prior(struct sim *s, struct warp *w, uint32_t mask, uint32_t n, uint64_t now, bool batches);

/* bulk.c: TMA stores and their bulk async-groups */
int bulk_setup(struct sim *s, struct block *b);
void bulk_free(struct sim *s, struct block *b);
void bulk_store(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
void bulk_commit(struct sim *s, struct warp *w);
bool bulk_wait(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
/* Thread tid's bulk stores below this are known (by its own finished wait_group.read) to have read their source. */
uint32_t bulk_read_known(const struct block *b, uint32_t tid);

/* barrier.c: cuda::barrier<thread_scope_block> */
int cbar_setup(struct sim *s, struct block *b);
void cbar_free(struct block *b);
/* The mbarrier (and element index within the block) named by the op, or -1 after a program error. */
int64_t cbar_resolve(struct sim *s, struct warp *w, const struct insn *in, uint32_t *elem);
bool cbar_exec(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
bool cbar_visible(struct sim *s, uint32_t block, uint32_t elem, uint32_t tid, uint32_t phase);
/* barrier_try_wait / barrier_test_wait: the phase's completion into the op's variable; false while suspended. */
bool cbar_poll(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);

/* smemport.c: the shared-memory port.  A copy's fill (or a bulk store's read) arriving at arrive. */
void smem_port_fill(struct sim *s, uint64_t arrive, uint32_t wavefronts);
/* A warp's access of wavefronts at now: when the port starts it (the fills arrived by now go first). */
uint64_t smem_port_take(struct sim *s, uint64_t now, uint32_t wavefronts);
/* When the port has worked off what was asked of it by now (fills arrived by then included). */
uint64_t smem_port_drained(struct sim *s, uint64_t now);
/* Nothing asked of the port after now starts before until (an instruction holding the queue behind it). */
void smem_port_hold(struct sim *s, uint64_t until);
void smem_port_free(struct sim *s);

/* copy.c: one issue slot of memcpy_async; true when the op is complete. */
/* Whether the op is a bulk copy into shared memory (cp.async.bulk, the async proxy). */
bool copy_bulk(const struct insn *in);
/*
 * A cp.async.bulk's operands by thread tid (what: "bulk copy", "bulk store"): a size that is a
 * positive multiple of 16 inside both buffers, both addresses 16-byte aligned (PTX; cuda::ptx
 * cp_async_bulk's notes); false after a program error naming them.
 */
bool copy_bulk_ok(struct sim *s, struct warp *w, const char *what, uint32_t tid, int64_t bytes,
		  const struct buffer *dst, int64_t di, const struct buffer *src, int64_t si);
bool copy_issue(struct sim *s, struct warp *w, const struct insn *in, uint64_t now);
/* The latest landing of any copy issued so far: copies are in flight until then. */
static inline uint64_t copy_latest_land(const struct sim *s) { return s->mem.copies_land; }

/* sync.c */
/* The lanes of mask as ranges ("0-15,20"; "none" when empty), into out. */
void simt_lanes_text(uint32_t mask, char *out, size_t n);
bool sync_threads(struct sim *s, struct warp *w, uint64_t now, enum stall cause);
void sync_check_release(struct sim *s, struct block *b, uint64_t now);
/*
 * At a deadlock: which threads of the first block whose __syncthreads waits are at it, elsewhere and
 * exited, into out, and each warp only part of which waits reported as a hazard; false when none waits.
 */
bool sync_deadlock_hint(struct sim *s, char *out, size_t n);
bool sync_grid(struct sim *s, struct warp *w, uint64_t now);
void sync_grid_check_release(struct sim *s, uint64_t now);

/* flow.c */
/* Bytes one shadow entry covers: 4, or the kernel's smallest shared element when that is smaller. */
uint32_t flow_grain(const struct kernel *k);
int flow_setup(struct sim *s, struct block *b);
void flow_free(struct block *b);
void flow_sync(struct sim *s, struct block *b);
void flow_syncwarp(struct sim *s, struct warp *w, uint32_t lanes, uint64_t now);
void flow_release(struct sim *s, struct warp *w, uint64_t now);
void flow_arrive_on(struct sim *s, struct warp *w, uint64_t now);
void flow_copy(struct sim *s, struct warp *w, int lane, uint64_t saddr, uint32_t bytes, int src_buf,
	       int64_t src_elem, uint64_t land, enum flow_kind kind, int obj, uint32_t seq);
const struct flow_word *flow_read(struct sim *s, struct warp *w, int lane, uint64_t saddr, uint64_t now);
void flow_proxy_fence(struct sim *s, struct warp *w, uint32_t mask);
/* cp.async.mbarrier.arrive by the lanes: on pipeline stage / barrier element obj, seq[lane] its stage or phase. */
void flow_cp_arrive(struct sim *s, struct warp *w, uint32_t lanes, enum flow_kind kind, int obj, const uint32_t *seq);
void flow_report(struct sim *s, struct warp *w, int lane, const char *fmt, ...) DIAG_PRINTF(4, 5);
/*
 * Whether a plain store by thread writer at cycle at, with gen __syncthreads completed then, is ordered
 * before what thread tid does now: the same thread, a __syncthreads or a barrier phase tid waited for
 * since, or a __syncwarp of both after it (the dataflow checks' rule; needs s->checks).
 */
bool flow_plain_ordered(const struct block *b, uint32_t writer, uint32_t gen, uint64_t at, uint32_t tid);
void flow_async_write(struct sim *s, struct warp *w, int lane, uint64_t saddr, uint32_t bytes);
/* The lane's bulk store (the async proxy), its store-th, reads [saddr, saddr + bytes) of shared memory. */
void flow_bulk_read(struct sim *s, struct warp *w, int lane, uint64_t saddr, uint32_t bytes, uint32_t store);
void flow_provenance(struct sim *s, struct warp *w, int lane, const struct flow_word *fw, int64_t elem, int from,
		     int want_buf, int64_t want_index);

/* stats.c */
/* Copies by lanes issued at issue that land at land, and would take unloaded cycles on an idle SM. */
void stats_copy(struct sim *s, uint32_t lanes, uint32_t bytes_each, uint64_t issue, uint64_t land, uint64_t unloaded);
/* STATS_NO_TRACK: a batch with no copy-engine track in the trace (a warp's cp.async group). */
#define STATS_NO_TRACK UINT32_MAX
void stats_batch(struct sim *s, const struct batch_rec *r, uint32_t track, uint32_t stage);
void stats_finish(struct sim *s);

/*
 * A warp-instruction of class cls of op in issued, where per-op counts were
 * asked for: called where the timeline is recorded (per-op counts record
 * it too), so that a run without either pays no test for them.
 */
static inline void count_op_issue(struct sim *s, const struct insn *in, enum iclass cls)
{
	if (s->op_issued)
		s->op_issued[(size_t)(in - s->k->code) * IC_COUNT + cls]++;
}

/* In-flight copies end at the latest landing issued so far: an FMA issued before it overlaps a copy. */
static inline void count_compute_issue(struct sim *s, uint64_t now, uint64_t copies_land)
{
	s->rep->compute_issues++;
	if (copies_land > now)
		s->rep->compute_overlapped++;
}

/*
 * issue.c: the instruction-level core.  The next cycle at which the warp's
 * next instruction can issue (now or later, NEVER when it cannot; what it
 * waits for in *cause, which means nothing when it can issue now), and
 * the issue of that instruction at now (tr: s->trace).
 */
uint64_t issue_check(struct sim *s, struct warp *w, uint64_t now, enum stall *cause);
/*
 * What the planned instruction of group e waits for (next_deps, next_why):
 * its results and inputs (at, why), then the last SASS instruction's stall
 * count, then a taken branch's redirect of the group.  None of them moves
 * before it issues (whatever moves the group clears next_known), so the
 * pick adds only the pipe and the MIO queue.  Which is later is data, not
 * a pattern a branch predictor learns: selects.
 */
static ISSUE_INLINE void plan_waits(struct warp *w, const struct simt_entry *e, uint64_t at, enum stall why)
{
	why = w->stall_until > at ? STALL_ALU : why;
	at = w->stall_until > at ? w->stall_until : at;
	why = e->redirect > at ? STALL_BRANCH : why;
	at = e->redirect > at ? e->redirect : at;
	w->next_deps = at;
	w->next_why = (uint8_t)why;
}
/*
 * The planned next instruction (w->next_known): when its pipe and the MIO
 * queue let it issue, at now or later.  pipe_free is its sub-partition's
 * (w->pipe_free; the tick passes the one it holds, a load less on the way
 * from the pick to the issue).
 */
static inline uint64_t issue_when_planned_on(const struct sim *s, const struct warp *w, const uint64_t *pipe_free,
					     uint64_t now, enum stall *cause)
{
	uint64_t at = w->next_deps;
	enum stall why = (enum stall)w->next_why;
	if (!w->next_free) { /* a woken try_wait returning takes neither */
		uint64_t pipe = pipe_free[w->next_cls];
		why = pipe > at ? STALL_PIPE_BUSY : why;
		at = pipe > at ? pipe : at;
		if (s->cls_mio[w->next_cls]) {
			uint64_t room = s->mem.mio_room;
			why = room > at ? STALL_MIO_THROTTLE : why;
			at = room > at ? room : at;
		}
	}
	*cause = why;
	return at > now ? at : now;
}
static inline uint64_t issue_when_planned(const struct sim *s, const struct warp *w, uint64_t now, enum stall *cause)
{
	return issue_when_planned_on(s, w, w->pipe_free, now, cause);
}
/*
 * An IMAD.WIDE has issued at now: it holds the FMA-heavy pipe, which an
 * IMAD shares, for its own interval, and its sub-partition dispatches
 * nothing for imad_wide_dispatch cycles after it, whatever the pipe
 * (imad_wide.csv, tests/hw/imad_wide.cu: IMAD.WIDEs alone every 4 cycles a
 * scheduler, with an IMAD every 6, with two LOP3s every 6 where the LOP3s
 * alone take 4; ncu: the ALU pipe busy 2 cycles an ALU instruction all the
 * same, and dispatch_stall rising with the IMAD.WIDEs).
 */
static inline void issue_wide(const struct sim *s, struct warp *w, uint64_t now)
{
	uint64_t *pipe = w->pipe_free;
	uint64_t fma_heavy = now + s->cls_ivl[IC_IMADW];
	pipe[IC_IMAD] = pipe[IC_IMAD] > fma_heavy ? pipe[IC_IMAD] : fma_heavy;
	uint64_t held = now + 1 + (uint64_t)s->m->imad_wide_dispatch;
	if (held <= now + 1)
		return;
	for (int c = 0; c < IC_COUNT; c++)
		pipe[c] = pipe[c] > held ? pipe[c] : held;
}
/*
 * The instruction has issued at now: its pipe is busy, and a memory-path
 * one holds the MIO for mio cycles, queued behind what it has; when it
 * starts.  An mbarrier arrive (LI_ARRIVE) is a SYNCS instruction that the
 * unit takes faster than a try_wait (iclass.csv: SYNCS.ARRIVE alone every 6
 * cycles, PHASECHK every 18.6).
 */
static ISSUE_INLINE uint64_t issue_occupy_mio(struct sim *s, struct warp *w, enum iclass cls, bool arrive, uint64_t mio,
					       uint64_t now)
{
	if (w->next_free)
		return now;
	w->pipe_free[cls] = now + (arrive ? (uint64_t)s->m->syncs_arrive_interval : s->cls_ivl[cls]);
	if (cls == IC_IMADW)
		issue_wide(s, w, now);
	else if (cls == IC_IMAD && w->pipe_free[IC_IMADW] < w->pipe_free[IC_IMAD])
		w->pipe_free[IC_IMADW] = w->pipe_free[IC_IMAD];
	if (!mio)
		return now;
	s->cls_mio_busy[cls] += mio;
	uint64_t start = s->mem.mio_free > now ? s->mem.mio_free : now;
	s->mem.mio_free = start + mio;
	uint64_t queue = (uint64_t)s->m->mio_queue_cycles;
	s->mem.mio_room = s->mem.mio_free > queue ? s->mem.mio_free - queue : 0;
	return start;
}
/* issue_occupy_mio at the class's MIO cost, or an arrive's. */
static ISSUE_INLINE uint64_t issue_occupy(struct sim *s, struct warp *w, enum iclass cls, bool arrive, uint64_t now)
{
	return issue_occupy_mio(s, w, cls, arrive, arrive ? (uint64_t)s->m->syncs_arrive_mio : s->cls_mio[cls], now);
}
void issue_one(struct sim *s, struct trace *tr, struct warp *w, uint64_t now);
int issue_setup(struct sim *s);

#endif

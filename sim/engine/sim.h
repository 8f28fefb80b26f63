/*
 * sim: run one kernel on one SM and say where the cycles went.
 *
 * sim_run takes a loaded kernel, a machine and a launch, simulates until
 * every warp has exited (or nothing can move, or a limit is hit), and
 * fills a sim_report.  Its return value is a diag code: 0, DIAG_INPUT for
 * a program error found while running, DIAG_DEADLOCK, DIAG_LIMIT.  The
 * report is filled in all cases, so a deadlock is a result to read.
 */
#ifndef SMSIM_SIM_H
#define SMSIM_SIM_H

#include <stdint.h>

#include "../../isa/diag.h"
#include "../../isa/kernel.h"
#include "machine.h"
#include "stall.h"
#include "trace.h"

/* Runaway inputs stop at one of these with DIAG_LIMIT; each is raised by --set limit.NAME=N. */
struct sim_limits {
	uint64_t max_cycles;
	uint64_t max_events;
	uint64_t max_threads;         /* threads in the launch: grid_blocks x block_size */
	uint64_t max_loop_iterations; /* backward jumps one warp takes, all its loops together */
	uint64_t max_memory;          /* bytes of simulator state the launch needs, checked before allocating */
	bool no_checks; /* turn the dataflow checks off (speed) */
	bool trace;     /* record the timeline into sim_report.trace */
	bool op_counts; /* count each op's warp-instructions per class into sim_report.op_issued */
};

/*
 * Far above any shipped experiment or benchmark (at most ~1e7 cycles or events, 33 792 threads,
 * 32 769 loop iterations per warp, 1.5 MB of state), low enough that a kernel looping forever
 * stops within seconds (a loop without waits at the loop limit, in about 1e7 cycles) and a
 * launch that would need hundreds of MB (thousands of barriers per thread) stops before it is
 * allocated.  A loop of 1e7 iterations with a realistic body is near 1e9 cycles anyway.
 */
#define SIM_DEFAULT_MAX_CYCLES 1000000000ull
#define SIM_DEFAULT_MAX_EVENTS 100000000ull
#define SIM_DEFAULT_MAX_THREADS 1000000000ull
#define SIM_DEFAULT_MAX_LOOP_ITERATIONS 10000000ull
#define SIM_DEFAULT_MAX_MEMORY (256ull << 20)
#define SIM_MAX_BLOCKED 256

/* One warp that cannot move, in a deadlock report. */
#define FLOW_TEXT 320 /* bytes of one hazard's or mismatch's description */

struct blocked_warp {
	uint32_t warp, block;
	char role[32];   /* the kernel's name for the warp ("roles"); "": none */
	char op[32];
	char where[160]; /* JSON path of the statement */
	char on[160];    /* the barrier or stage (and how it is waited on) */
	uint32_t phase;
	int64_t expected, arrived;
	uint32_t threads; /* threads of the warp waiting there */
};

struct sim_report {
	char kernel[64];
	char machine[64];
	uint64_t cycles;
	double clock_ghz;
	uint32_t blocks, warps, block_size;
	uint64_t stalls[STALL_COUNT];

	uint64_t copies, copy_bytes, copy_latency_sum, copy_latency_max;
	uint64_t copy_unloaded_sum, copy_unloaded_max; /* what they would take on an idle SM (no queue ahead) */
	uint64_t sync_copies; /* chunks copied synchronously (alignment < 4) */

	uint64_t batches;           /* consumed pipeline batches */
	uint64_t batch_latency;     /* sum: first copy issue to last landing */
	uint64_t exposed;           /* sum: cycles consumers were blocked on them */
	uint64_t exposed_unloaded;  /* sum over batches: exposed, at most the unloaded copy latency */
	uint64_t unloaded_budget;   /* sum over batches: the unloaded copy latency (the largest so far) */
	double hidden_fraction;     /* 1 - exposed_unloaded / unloaded_budget */

	uint64_t compute_issues;    /* FMA issue slots of compute ops */
	uint64_t compute_overlapped; /* ... issued while a copy was in flight */
	uint64_t compute_bound;     /* cycles: issue- or dependency-limited */
	uint64_t memory_bound;      /* cycles: DRAM bytes / bandwidth */
	uint64_t lower_bound;
	double efficiency;

	uint64_t cp_async_batches;    /* actual batches committed (warp sequences) */
	uint64_t cp_async_commits;    /* thread commits (perceived batches) */
	uint64_t overwait_waits, overwait_cycles, overwait_extra_batches;
	uint64_t overwait_worst_cycles;
	uint32_t overwait_worst_block, overwait_worst_thread;

	uint64_t hazards, provenance_mismatches;
	char hazard_text[8][FLOW_TEXT];
	char provenance_text[8][FLOW_TEXT];
	uint64_t quits;
	uint64_t bulk_copies, bulk_bytes;
	uint64_t mma_ops, hmma; /* mma ops executed (per warp) and the HMMA.16816 they issued */
	double tensor_busy;     /* HMMA x the mma pipe's interval, over the sub-partitions: cycles of a busy SM */
	char quit_model[16];
	char reconverge[24];
	char scheduler[16];
	bool checks;

	uint64_t smem_accesses, smem_wavefronts, bank_conflicts;
	uint64_t dram_bytes;
	uint64_t local_hits, local_misses; /* local-array loads (LDL) that hit and missed in L1 */
	uint64_t global_bytes;              /* the kernel's global buffers, input and output (gmem_setup) */
	double l2_warm;                     /* machine l2_hit_fraction: the share of sectors warmed into L2 */
	double l2_hit_fraction;             /* the share of sectors that hit in L2, what the L2 can hold of them */
	uint64_t carveout_bytes;            /* the launch's shared-memory carveout (the rest of the array is L1) */

	/* For the binding limit (sim/out/limit.h): the figures Nsight Compute's rule reads. */
	double dram_peak_bytes_per_cycle; /* the machine's dram_peak_bytes_per_cycle: ncu's DRAM peak, this SM's share */
	uint32_t subpartitions;
	uint64_t sp_active_cycles;  /* sum over sub-partitions: cycles from launch until its last warp exited */
	uint64_t mio_busy_cycles;   /* the MIO path: sum over issued instructions of their class's MIO cycles */
	uint64_t mio_pipe_cycles;   /* the busiest memory pipe: max over classes of issued x MIO cycles */
	char mio_pipe[16];          /* its instruction class (isa/lower.h), "" when no memory instruction issued */
	uint64_t tensor_busy_cycles; /* sum over issued MMAs of the mma pipe's interval */
	uint64_t pipe_issues[IC_COUNT]; /* warp-instructions issued per instruction class (its pipe), compute's FMAs in fma */

	uint64_t warp_insts, events;
	double host_seconds;

	uint32_t nblocked;
	struct blocked_warp blocked[SIM_MAX_BLOCKED];
	char hint[512];

	struct trace *trace; /* when asked for: the timeline (the caller frees it with trace_free) */
	/*
	 * When asked for (op_counts): warp-instructions issued per op and class,
	 * op_issued[pc * IC_COUNT + class] for the kernel's op_issued_ops ops,
	 * compute's FMAs in fma (the caller frees it).
	 */
	uint64_t *op_issued;
	uint32_t op_issued_ops;
};

/* Whether the launch fits the machine (block size, resident blocks, warps, shared memory). */
int sim_check_launch(const struct kernel *k, const struct machine *m, const struct launch *launch, struct diag *d);

/* limits.c: every limit at its default. */
struct sim_limits sim_default_limits(void);
/* limit.threads, which needs only the launch: checked before the kernel is even compiled. */
int sim_check_threads(const struct launch *launch, const struct sim_limits *limits, struct diag *d);
/* Bytes of host memory sim_run allocates for this launch before it starts (a fitting launch). */
uint64_t sim_state_bytes(const struct kernel *k, const struct machine *m, const struct launch *launch);
/* limit.threads and limit.memory, before anything is allocated; a DIAG_LIMIT naming the limit. */
int sim_check_limits(const struct kernel *k, const struct machine *m, const struct launch *launch,
		     const struct sim_limits *limits, struct diag *d);

int sim_run(const struct kernel *k, const struct machine *m, const struct launch *launch,
	    const struct sim_limits *limits, struct sim_report *rep, struct diag *d);

#endif

/*
 * machine: the timing parameters of one SM, loaded from a machine config.
 *
 * Every field has a unit and a default (H100 SXM, DESIGN.md §4); the config
 * file gives each field as {"value", "unit", "source"} so the number always
 * travels with where it came from.  The one X-macro list below drives the
 * struct, the loader, --set machine.NAME=VALUE and the report.
 */
#ifndef SMSIM_MACHINE_H
#define SMSIM_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "../isa/diag.h"

/* X(name, type, default, min, max, unit) — type is I (integer) or F (real). */
#define MACHINE_FIELDS(X)                                                                \
	X(clock_ghz, F, 1.98, 0.1, 10, "GHz")                                            \
	X(subpartitions, I, 4, 1, 8, "schedulers per SM")                                \
	X(max_warps, I, 64, 1, 256, "warps per SM")                                      \
	X(max_blocks, I, 32, 1, 64, "blocks per SM")                                     \
	X(max_threads, I, 2048, 32, 8192, "threads per SM")                              \
	X(max_block_threads, I, 1024, 32, 1024, "threads per block")                     \
	X(smem_bytes, I, 233472, 1024, 1048576, "bytes of shared memory per SM")        \
	X(smem_block_bytes, I, 232448, 1024, 1048576, "bytes of shared memory per block") \
	X(alu_latency, I, 4, 1, 1000, "cycles, dependent FFMA")                          \
	X(pipe_call_instructions, I, 4, 0, 100, "warp-instructions per pipeline call")   \
	X(statement_latency, I, 0, 0, 10000, "cycles a let/set/branch on registers keeps its warp (index arithmetic)") \
	X(int_statement_latency, I, 0, 0, 10000, "cycles a let/set/branch on 32-bit variables only keeps its warp") \
	X(divide_latency, I, 0, 0, 10000, "cycles a statement adds per / or % by other than a power of two") \
	X(pipe_acquire_latency, I, 0, 0, 10000, "cycles a block-scope producer_acquire keeps its warp") \
	X(pipe_commit_latency, I, 0, 0, 10000, "cycles a block-scope producer_commit keeps its warp") \
	X(pipe_wait_latency, I, 0, 0, 10000, "cycles at least a block-scope consumer_wait keeps its warp") \
	X(pipe_release_latency, I, 0, 0, 10000, "cycles a pipeline consumer_release keeps its warp") \
	X(thread_pipe_wait_latency, I, 0, 0, 10000, "cycles at least a thread-scope consumer_wait keeps its warp") \
	X(wait_prior_latency, I, 0, 0, 10000, "cycles at least a pipeline_wait_prior keeps its warp") \
	X(copy_issue_latency, I, 0, 0, 10000, "cycles a memcpy_async (LDGSTS) keeps its warp after issue") \
	X(group_copy_latency, I, 0, 0, 10000, "cycles a group-wide memcpy_async adds (partitioning)") \
	X(store_issue_latency, I, 0, 0, 10000, "cycles a global store keeps its warp after issue") \
	X(chain_setup_latency, I, 0, 0, 10000, "cycles a dependent-FMA chain of k > 0 adds (loop entry)") \
	X(chain_unroll, I, 32, 1, 4096, "FMAs per trip of a compiled chain loop") \
	X(chain_trip_latency, I, 0, 0, 10000, "cycles each trip of a chain loop adds (counter, compare, branch)") \
	X(compute_setup_latency, I, 0, 0, 10000, "cycles compute adds between its shared load and its chain") \
	X(copy_setup_instructions, I, 2, 0, 100, "warp-instructions per memcpy_async")   \
	X(statement_instructions, I, 1, 1, 1000, "issue slots a let/set/branch on registers takes over its latency") \
	X(int_statement_instructions, I, 1, 1, 1000, "issue slots a let/set/branch on 32-bit variables takes") \
	X(divide_instructions, I, 0, 0, 1000, "issue slots a statement adds per / or % by other than a power of two") \
	X(pipe_acquire_instructions, I, 1, 1, 1000, "issue slots a block-scope producer_acquire takes over its latency") \
	X(pipe_commit_instructions, I, 1, 1, 1000, "issue slots a block-scope producer_commit takes over its latency") \
	X(pipe_wait_instructions, I, 1, 1, 1000, "issue slots a consumer_wait or wait_prior takes over its latency") \
	X(pipe_release_instructions, I, 1, 1, 1000, "issue slots a consumer_release takes over its latency") \
	X(copy_issue_instructions, I, 1, 1, 1000, "issue slots a memcpy_async takes over its hold") \
	X(compute_setup_instructions, I, 1, 1, 1000, "issue slots compute takes between its shared load and its chain") \
	X(store_issue_instructions, I, 1, 1, 1000, "issue slots a global store takes over its hold") \
	X(smem_latency, I, 23, 1, 1000, "cycles, shared load issue to data")            \
	X(smem_conflict_latency, I, 2, 0, 100, "cycles added per extra bank-conflict way") \
	X(smem_wavefront_cycles, I, 1, 1, 100, "cycles the shared-memory port is busy per wavefront") \
	X(l2_latency, I, 283, 1, 10000, "cycles, L2 hit load")                           \
	X(dram_latency, I, 688, 1, 100000, "cycles, DRAM load")                          \
	X(l2_hit_fraction, F, 0.0, 0.0, 1.0, "fraction of sectors that hit in L2")       \
	X(dram_bytes_per_cycle, F, 12.8, 0.01, 100000, "bytes per cycle, this SM's DRAM share") \
	X(l2_bytes_per_cycle, F, 115, 0.01, 100000, "bytes per cycle, L2 to this SM")    \
	X(cp_async_extra_latency, I, 42, 0, 10000, "cycles a cp.async adds over a load") \
	X(bulk_extra_latency, I, 61, 0, 10000, "cycles a bulk (TMA) copy adds over a load") \
	X(shfl_latency, I, 27, 1, 1000, "cycles, dependent shfl_down + add")             \
	X(grid_sync_latency, I, 2000, 0, 1000000, "cycles, grid.sync release after the last arrival") \
	X(mbarrier_arrive_latency, I, 20, 0, 10000, "cycles, arrive to counted")         \
	X(mbarrier_arrive_interval, I, 5, 0, 1000, "cycles a barrier is busy per warp arrival") \
	X(mbarrier_wake_latency, I, 60, 0, 10000, "cycles, phase completion to waiter issue") \
	X(syncthreads_base_latency, I, 13, 0, 10000, "cycles, __syncthreads release base") \
	X(syncthreads_warp_latency, I, 2, 0, 1000, "cycles added per warp in the block")

enum sched_policy { SCHED_GTO, SCHED_LRR };
/* How a diverged warp's threads come back together (DESIGN.md §3). */
enum reconverge { RECONVERGE_POST_DOMINATOR, RECONVERGE_INDEPENDENT };
/* What pipeline quit() does: the Programming Guide's promise, or libcudacxx's code. */
enum quit_model { QUIT_GUIDE, QUIT_LIBCUDACXX };

struct machine {
	char name[64];
#define MACHINE_STRUCT_I(n) int64_t n;
#define MACHINE_STRUCT_F(n) double n;
#define MACHINE_STRUCT(n, t, d, lo, hi, u) MACHINE_STRUCT_##t(n)
	MACHINE_FIELDS(MACHINE_STRUCT)
#undef MACHINE_STRUCT
#undef MACHINE_STRUCT_I
#undef MACHINE_STRUCT_F
	enum sched_policy scheduler;
	enum reconverge reconverge;
	enum quit_model quit;
};

const char *machine_reconverge_name(enum reconverge r);
const char *machine_quit_name(enum quit_model q);

void machine_defaults(struct machine *m);
/* Loads a machine config file; fields it lacks keep their defaults. */
int machine_load(const char *file, struct machine *m, struct diag *d);
/* Sets one field by name (--set machine.NAME=VALUE); errors name the field. */
int machine_set(struct machine *m, const char *name, const char *value, struct diag *d);

#endif

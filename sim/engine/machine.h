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

#include "../../isa/diag.h"

/*
 * Per instruction class (isa/lower.h, ORDER ICLASS): the latency from issue
 * to a dependent instruction, the issue interval of its pipe on one
 * sub-partition, and the cycles it occupies the SM's shared memory-
 * instruction (MIO) path, 0 for classes that do not use it.  A memory
 * class's latency is its issue cost only: the data's return comes from
 * the memory model (smem_latency, l2_latency, ...).
 */
#define ICLASS_FIELD3(X, c, lat, ivl, mio)                                                                 \
	X(iclass_##c##_latency, I, lat, 0, 100000, "cycles, issue to a dependent instruction (" #c ")")        \
	X(iclass_##c##_interval, I, ivl, 1, 1000, "cycles between two issues on one sub-partition's " #c " pipe") \
	X(iclass_##c##_mio, I, mio, 0, 1000, "cycles the SM's MIO path is busy per " #c " warp-instruction")
#define ICLASS_FIELDS(X)                          \
	ICLASS_FIELD3(X, alu, 4, 2, 0)            \
	ICLASS_FIELD3(X, imad, 4, 2, 0)           \
	ICLASS_FIELD3(X, imad_wide, 4, 2, 0)      \
	ICLASS_FIELD3(X, fma, 4, 1, 0)            \
	ICLASS_FIELD3(X, conv, 6, 4, 0)           \
	ICLASS_FIELD3(X, uniform, 2, 1, 0)        \
	ICLASS_FIELD3(X, s2r, 20, 1, 0)           \
	ICLASS_FIELD3(X, branch, 6, 2, 0)         \
	ICLASS_FIELD3(X, lds, 0, 1, 1)            \
	ICLASS_FIELD3(X, sts, 0, 1, 1)            \
	ICLASS_FIELD3(X, ldg, 0, 1, 1)            \
	ICLASS_FIELD3(X, stg, 0, 1, 1)            \
	ICLASS_FIELD3(X, ldgsts, 0, 1, 4)         \
	ICLASS_FIELD3(X, depbar, 4, 1, 0)         \
	ICLASS_FIELD3(X, ldgdepbar, 12, 12, 0)    \
	ICLASS_FIELD3(X, syncs, 20, 1, 2)         \
	ICLASS_FIELD3(X, bar, 0, 1, 1)            \
	ICLASS_FIELD3(X, shfl, 23, 2, 1)          \
	ICLASS_FIELD3(X, mma, 16, 8, 0)

/* X(name, type, default, min, max, unit) — type is I (integer) or F (real). */
#define MACHINE_FIELDS(X)                                                                \
	X(clock_ghz, F, 1.98, 0.1, 10, "GHz")                                            \
	X(subpartitions, I, 4, 1, 8, "schedulers per SM")                                \
	X(sm_count, I, 132, 1, 4096, "SMs on the GPU, each running the experiment's blocks per SM") \
	X(max_warps, I, 64, 1, 256, "warps per SM")                                      \
	X(max_blocks, I, 32, 1, 64, "blocks per SM")                                     \
	X(max_threads, I, 2048, 32, 8192, "threads per SM")                              \
	X(max_block_threads, I, 1024, 32, 1024, "threads per block")                     \
	X(smem_bytes, I, 233472, 1024, 1048576, "bytes of shared memory per SM")        \
	X(smem_block_bytes, I, 232448, 1024, 1048576, "bytes of shared memory per block") \
	X(chain_unroll, I, 8, 1, 4096, "FMAs per trip of compute's compiled chain loop (tests/hw/pipelines.cu unrolls 8)") \
	X(chain_trip_cycles, I, 0, 0, 10000, "cycles a trip of compute's compiled chain loop adds to the chain (its taken back-edge and the constant rematerialised at the loop top)") \
	X(backedge_redirect, I, 0, 0, 10000, "cycles from a loop's taken back-edge branch to the warp's next issue") \
	X(branch_predicate_latency, I, 4, 0, 10000, "cycles from a compare (ISETP) to a branch reading its predicate") \
	X(branch_redirect, I, 29, 0, 10000, "cycles from a taken forward branch to the warp's next issue") \
	X(reconverge_latency, I, 54, 0, 10000, "cycles from a diverged warp's paths joining at their BSYNC to its next issue") \
	X(split_latency, I, 13, 0, 10000, "cycles a diverged warp's paths wait after the branch that split them") \
	X(path_switch_latency, I, 9, 0, 10000, "cycles from one path of a diverged warp reaching its BSYNC to the other path's next issue") \
	X(local_load_latency, I, 32, 1, 10000, "cycles, a local-memory load (LDL) hitting in L1 to its data") \
	X(ldc_latency, I, 4, 1, 10000, "cycles, a constant loaded into a vector register (LDC) to its use") \
	X(l1_bytes, I, 262144, 0, 16777216, "bytes of the SM's one array of L1 data cache and shared memory") \
	X(l1_reuse_coeff, F, 0.6, 0.0, 1000.0, "probability that a local load misses an L1 of the whole array (no carveout) when one L1's worth of global lines went through it since its element's last load") \
	X(l1_reuse_exponent, F, 1.35, 0.0, 10.0, "how that probability grows with the lines streamed between two loads of an element: (lines / L1's lines) to this power") \
	X(l1_reuse_size_exponent, F, 0.0, 0.0, 10.0, "how that probability grows as a carveout leaves L1 less of the array: (the array's lines / L1's lines) to this power, beside the stream's") \
	X(smem_carveout_step, I, 32768, 1024, 1048576, "bytes between the larger shared-memory carveouts the driver chooses from") \
	X(smem_block_reserved, I, 768, 0, 65536, "bytes of shared memory the system keeps per block") \
	X(smem_carveout_prefer, I, 135168, 0, 1048576, "bytes, the largest carveout the driver takes beyond what its blocks need") \
	ICLASS_FIELDS(X)                                                                 \
	X(mio_queue_cycles, I, 16, 0, 100000, "cycles of MIO work queued before a warp stalls (mio_throttle)") \
	X(smem_latency, I, 23, 1, 1000, "cycles, shared load issue to data")            \
	X(smem_conflict_latency, I, 2, 0, 100, "cycles added per extra bank-conflict way") \
	X(smem_wavefront_cycles, I, 1, 1, 100, "cycles the shared-memory port is busy per wavefront") \
	X(ldsm_latency, I, 15, 0, 1000, "cycles, ldmatrix .x4 issue to data, besides its wavefronts") \
	X(ldsm_latency_per_wavefront, F, 3.5, 0, 100, "cycles an ldmatrix's data takes per wavefront") \
	X(ldsm_warp_cycles, I, 13, 0, 1000, "cycles one warp's ldmatrix .x4 holds its next one, besides its wavefronts") \
	X(ldsm_warp_wavefront_cycles, I, 2, 0, 100, "cycles per wavefront one warp's ldmatrix holds its next one") \
	X(l2_latency, I, 283, 1, 10000, "cycles, L2 hit load")                           \
	X(dram_latency, I, 688, 1, 100000, "cycles, DRAM load")                          \
	X(dram_spread, I, 0, 0, 100000, "cycles either side of its median a DRAM line through L1 lands, with no other line in flight") \
	X(dram_spread_per_line, F, 0, 0, 10000, "cycles the spread grows per DRAM line the SM's other warps have in flight through L1") \
	X(dram_line_latency, F, 9, 0, 10000, "cycles a DRAM read waits beyond dram_latency per 128-byte line this SM has in flight from DRAM when it issues") \
	X(l2_hit_fraction, F, 0.0, 0.0, 1.0, "fraction of sectors that hit in L2")       \
	X(l2_fetch_bytes, I, 64, 32, 128, "bytes the L2 fetches from DRAM for a sector that misses: the aligned block this size around it (32: the sector alone)") \
	X(l2_keep_mb, F, 33.5, 0, 100000, "MB of a kernel's global data (input and output together) up to which a warmed L2 keeps all of it") \
	X(l2_lose_mb, F, 46, 0, 100000, "MB of a kernel's global data from which a warmed L2 keeps none of it (linear between)") \
	X(dram_bytes_per_cycle, F, 12.8, 0.01, 100000, "bytes per cycle, this SM's DRAM share") \
	X(dram_peak_bytes_per_cycle, F, 12.8, 0.01, 100000, "bytes per cycle, this SM's share of the DRAM peak Nsight Compute measures DRAM % against") \
	X(l2_bytes_per_cycle, F, 115, 0.01, 100000, "bytes per cycle, L2 to this SM")    \
	X(l2_line_cycles, F, 0, 0, 1000, "cycles the L2 path to this SM takes per 128-byte line a read asks, however few of its bytes: a floor under the bytes' time (0: none)") \
	X(cp_async_extra_latency, I, 42, 0, 10000, "cycles a cp.async adds over a load") \
	X(bulk_extra_latency, I, 61, 0, 10000, "cycles a bulk (TMA) copy adds over a load") \
	X(grid_sync_latency, I, 2000, 0, 1000000, "cycles, grid.sync release after the last arrival") \
	X(mbarrier_arrive_latency, I, 20, 0, 10000, "cycles, an arrive's token back in its register") \
	X(mbarrier_count_latency, I, 50, 0, 10000, "cycles, an arrive's issue to its count at the barrier") \
	X(mbarrier_arrive_interval, I, 5, 0, 1000, "cycles a barrier is busy per warp arrival") \
	X(syncs_arrive_interval, I, 6, 1, 1000, "cycles between two mbarrier arrives (SYNCS.ARRIVE) on one sub-partition's syncs pipe") \
	X(syncs_arrive_mio, I, 2, 0, 1000, "cycles the SM's MIO path is busy per mbarrier arrive") \
	X(ldgsts_mio_least, I, 2, 0, 1000, "cycles the SM's MIO path is busy per LDGSTS warp-instruction of one lane: a warp's holds it from this at one lane to iclass_ldgsts_mio at 32, in proportion to its lanes") \
	X(imad_wide_dispatch, I, 0, 0, 100, "cycles after an IMAD.WIDE in which its sub-partition dispatches nothing (ncu's dispatch_stall)") \
	X(mbarrier_wake_latency, I, 60, 0, 10000, "cycles, phase completion to a suspended try_wait's result") \
	X(fence_membar_latency, I, 29, 0, 10000, "cycles from fence.proxy.async's MEMBAR.ALL.CTA to the warp's next instruction, nothing outstanding") \
	X(ldgsts_operand_read, I, 9, 0, 10000, "cycles from an LDGSTS's issue until it has read its registers: an instruction overwriting one waits that long") \
	X(mbarrier_try_wait_limit, I, 7852, 1, 100000000, "cycles a try_wait suspends on an incomplete phase before it returns false (PTX: a system-dependent time limit)") \
	X(s2r_behind_smem_port, I, 1, 0, 1, "1: an S2R's value is back iclass_s2r_latency after the shared-memory port has worked off what was queued when it issued (it waits in the MIO queue behind the shared loads); 0: after its issue") \
	X(s2r_port_bubble, I, 3, 0, 10000, "cycles the shared-memory port idles after working off its queue for an S2R waiting behind it") \
	X(membar_port_bubble, I, 8, 0, 10000, "cycles the shared-memory port idles after working off its queue for a fence's MEMBAR waiting behind it") \
	X(shfl_behind_smem_port, I, 1, 0, 1, "1: a SHFL's value is back iclass_shfl_latency after the shared-memory port has worked off what was queued when it issued; 0: after its issue") \
	X(membar_behind_smem_port, I, 1, 0, 1, "1: a fence's MEMBAR.ALL.CTA is done fence_membar_latency after the shared-memory port has worked off what was queued when it issued, the other warps' loads included; 0: after its issue") \
	X(diverged_poll_cycles, I, 172, 1, 100000, "cycles one poll of a try_wait retry loop (YIELD, TRYWAIT) takes in a diverged warp; it answers at its end") \
	X(diverged_poll_look, I, 62, 0, 100000, "cycles into such a poll at which it reads the barrier's phase: one completed later is not seen by it") \
	X(trywait_look, I, 26, 0, 100000, "cycles into a try_wait at which it reads the barrier's phase: an arrive counted later is not seen by it (a diverged path's first try)") \
	X(syncthreads_base_latency, I, 13, 0, 10000, "cycles from the SM counting a block's last __syncthreads arrival to its release") \
	X(syncthreads_warp_latency, I, 2, 0, 1000, "cycles the SM's barrier unit takes to count one warp's __syncthreads arrival (every block's)")

/*
 * gto: greedy, then the oldest ready warp; lrr: round robin; gto_lri:
 * greedy, then the oldest block with a ready warp, and of its ready warps
 * the one that issued least recently (README "Model and decisions": the
 * H100's dependent chains in traces/h100/issue_order.csv).
 */
enum sched_policy { SCHED_GTO, SCHED_LRR, SCHED_GTO_LRI };
/*
 * How a diverged warp's threads come back together and which of its paths
 * issue (DESIGN.md §3, README "Model and decisions"): convergence_barrier
 * (Volta+, nvcc's BSSY/BSYNC: paths rejoin at the post-dominator, and a
 * blocked path lets the others issue), simt_stack (pre-Volta: one path at a
 * time, to its reconvergence point), independent (apart until a syncwarp,
 * a block barrier or the end; issue slots rotate among the groups).
 */
enum reconverge { RECONVERGE_CONVERGENCE_BARRIER, RECONVERGE_SIMT_STACK, RECONVERGE_INDEPENDENT };
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
const char *machine_scheduler_name(enum sched_policy p);

void machine_defaults(struct machine *m);
/* Loads a machine config file; fields it lacks keep their defaults. */
int machine_load(const char *file, struct machine *m, struct diag *d);
/* Sets one field by name (--set machine.NAME=VALUE); errors name the field. */
int machine_set(struct machine *m, const char *name, const char *value, struct diag *d);

#endif

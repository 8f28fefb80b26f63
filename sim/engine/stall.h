/*
 * stall: the causes a warp's cycles are charged to.
 *
 * Every cycle of every warp, from launch to the end of the run, goes to
 * exactly one cause, so the per-cause totals sum to warps x cycles.
 */
#ifndef SMSIM_STALL_H
#define SMSIM_STALL_H

/* ORDER STALL: X(enum, report key, meaning) */
#define STALL_LIST(X)                                                                   \
	X(ISSUE, "issue", "issuing a warp-instruction")                                 \
	X(NOT_SELECTED, "not_selected", "ready, but the scheduler picked another warp") \
	X(ALU, "alu", "waiting on a fixed-latency dependency (ALU, FMA, IMAD, branch)")  \
	X(BRANCH, "branch", "after a branch, fetching from its target")                   \
	X(PIPE_BUSY, "pipe_busy", "its next instruction's pipe is busy with another warp's")   \
	X(MIO_THROTTLE, "mio_throttle", "the SM's memory-instruction queue is full")  \
	X(SMEM, "smem", "waiting on a shared-memory access (latency and conflicts) or another MIO result (S2R, SHFL)") \
	X(MEMORY, "memory", "waiting on a global-memory access")                        \
	X(CONSUMER_WAIT, "consumer_wait", "in consumer_wait for a stage to land")       \
	X(PRODUCER_ACQUIRE, "producer_acquire", "in producer_acquire: all stages full") \
	X(BARRIER, "barrier", "arriving on or waiting for an mbarrier")                 \
	X(SYNCTHREADS, "syncthreads", "in __syncthreads / make_pipeline")               \
	X(SYNCWARP, "syncwarp", "in __syncwarp, waiting for the warp's other groups")   \
	X(SLEEP, "sleep", "in __nanosleep (ncu: sleeping)")                            \
	X(EXITED, "exited", "finished, waiting for the rest of the SM")

enum stall {
#define STALL_ENUM(e, key, doc) STALL_##e,
	STALL_LIST(STALL_ENUM)
#undef STALL_ENUM
	STALL_COUNT
};

extern const char *const stall_key[STALL_COUNT];

#endif

/*
 * limit: what binds a run, named as Nsight Compute names it.
 *
 * From a finished (or partial) sim_report, limit_of computes the figures
 * ncu's SpeedOfLight, SchedulerStats and WarpStateStats sections give — DRAM
 * throughput in % of peak, memory pipes busy %, tensor pipe active %, warps
 * issued per scheduler per active cycle, and the stalled-warp cycles per
 * issued instruction by ncu's warp-state reason — and applies ncu's reading
 * (/work/shared/tools/ncu_limits.py, tests/hw/ncu_limits.py) in this order:
 *
 *   dram                 DRAM >= 70% of peak
 *   tensor               tensor pipe >= 60% active
 *   mio                  memory pipes (LSU, shared memory, LDGSTS) >= 60% busy
 *   issue                >= 0.6 warps issued per scheduler per cycle
 *   memory-latency       else, when long_scoreboard (loads and copies in flight) leads the stalls
 *   instruction-latency  otherwise (fixed-latency dependencies, barriers, pipeline calls)
 */
#ifndef SMSIM_LIMIT_H
#define SMSIM_LIMIT_H

#include <cjson/cJSON.h>

#include "sim.h"
#include "stall.h"

/* ORDER WARPSTATE: ncu's warp-state reasons that smsim's stall causes map onto (JSON key, ncu metric suffix). */
#define WARPSTATE_LIST(X)                                  \
	X(LONG_SCOREBOARD, "long_scoreboard")              \
	X(WAIT, "wait")                                    \
	X(SHORT_SCOREBOARD, "short_scoreboard")            \
	X(NOT_SELECTED, "not_selected")                    \
	X(MATH_PIPE_THROTTLE, "math_pipe_throttle")        \
	X(MIO_THROTTLE, "mio_throttle")                    \
	X(BARRIER, "barrier")                              \
	X(BRANCH_RESOLVING, "branch_resolving")            \
	X(SLEEPING, "sleeping")

enum warpstate {
#define WS_ENUM(e, key) WS_##e,
	WARPSTATE_LIST(WS_ENUM)
#undef WS_ENUM
	WS_COUNT,
	WS_SELECTED = WS_COUNT, /* issuing: ncu's "selected", left out of the breakdown as ncu_limits.py does */
	WS_NONE                 /* not resident (exited): ncu does not count it */
};

extern const char *const warpstate_key[WS_COUNT];
/* The warp-state reason each stall cause is counted under (WS_SELECTED, WS_NONE for issue, exited). */
extern const enum warpstate limit_stall_state[STALL_COUNT];

/* ORDER RESOURCE */
enum limit_resource { LIM_DRAM, LIM_TENSOR, LIM_MIO, LIM_ISSUE, LIM_MEMORY_LATENCY, LIM_INSTRUCTION_LATENCY };
extern const char *const limit_resource_name[6];

struct limit {
	enum limit_resource resource;
	double utilization;       /* 0..1 of the resource's peak (latency classes: of the issue slots) */
	double dram_pct;          /* DRAM bytes over cycles x the machine's dram_peak_bytes_per_cycle, % */
	double mio_busy_pct;      /* the busiest memory pipe (one instruction class's MIO cost), % of cycles */
	double mio_path_pct;      /* the SM's whole MIO path (every class's cost), % of cycles */
	const char *mio_pipe;     /* the busiest memory pipe's instruction class */
	double tensor_pct;        /* mma pipe busy, % of scheduler-cycles */
	double issue_per_scheduler; /* warp-instructions per scheduler per active cycle, 0..1 */
	double per_issue[WS_COUNT]; /* stalled-warp cycles per issued warp-instruction */
	enum warpstate top;       /* the reason that leads (ties: the earlier in WARPSTATE_LIST) */
	bool partial;             /* the run did not finish: figures over the cycles that ran */
	char consequence[256];
};

/* The binding limit of a run; partial when the run stopped early (status != 0). */
void limit_of(const struct sim_report *r, int status, struct limit *out);
/* "binding_limit": {"resource", "utilization", "evidence": {...}, "consequence"[, "partial"]}. */
cJSON *limit_json(const struct limit *l);
/* The resource's name, as in the JSON and ncu_limits.csv's class column. */
const char *limit_name(const struct limit *l);
/* A resource name back to its enum; -1 when it is none of them. */
int limit_parse(const char *name);

#endif

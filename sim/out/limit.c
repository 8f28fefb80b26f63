#include "limit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const warpstate_key[WS_COUNT] = {
#define WS_KEY(e, key) key,
	WARPSTATE_LIST(WS_KEY)
#undef WS_KEY
};

/*
 * ORDER STALL: smsim's causes onto ncu's warp states (README "The binding limit").
 * A copy or load in flight is long_scoreboard (ncu's variable-latency
 * scoreboard: LDG, LDGSTS/DEPBAR), and so is every mbarrier wait — a
 * pipeline's consumer_wait and producer_acquire, a cuda::barrier's wait —
 * since SYNCS.PHASECHK (try_wait) returns through that scoreboard (with
 * this, smsim's long_scoreboard per issue at one block per SM reads 0.88,
 * 0.75 and 0.33 where ncu reads 0.87, 0.66 and 0.31); a fixed-latency
 * dependency is wait (Hopper encodes those latencies as stall counts); a
 * shared-memory result is short_scoreboard (the MIO scoreboard); a busy
 * pipe is math_pipe_throttle; the MIO queue full is mio_throttle;
 * bar.sync and __syncwarp are barrier; after a branch, branch_resolving.
 */
const enum warpstate limit_stall_state[STALL_COUNT] = {
	[STALL_ISSUE] = WS_SELECTED,
	[STALL_NOT_SELECTED] = WS_NOT_SELECTED,
	[STALL_ALU] = WS_WAIT,
	[STALL_BRANCH] = WS_BRANCH_RESOLVING,
	[STALL_PIPE_BUSY] = WS_MATH_PIPE_THROTTLE,
	[STALL_MIO_THROTTLE] = WS_MIO_THROTTLE,
	[STALL_SMEM] = WS_SHORT_SCOREBOARD,
	[STALL_MEMORY] = WS_LONG_SCOREBOARD,
	[STALL_CONSUMER_WAIT] = WS_LONG_SCOREBOARD,
	[STALL_PRODUCER_ACQUIRE] = WS_LONG_SCOREBOARD,
	[STALL_BARRIER] = WS_LONG_SCOREBOARD,
	[STALL_SYNCTHREADS] = WS_BARRIER,
	[STALL_SYNCWARP] = WS_BARRIER,
	[STALL_SLEEP] = WS_SLEEPING,
	[STALL_EXITED] = WS_NONE,
};

const char *const limit_resource_name[6] = {"dram", "tensor", "mio", "issue", "memory-latency",
					    "instruction-latency"};

/* ncu_limits.py's thresholds. */
#define DRAM_PCT 70.0
#define TENSOR_PCT 60.0
#define MIO_PCT 60.0
#define ISSUE_RATE 0.6

static double clamp01(double x) { return !isfinite(x) || x < 0 ? 0 : x > 1 ? 1 : x; }
static double pct(double part, double whole) { return whole > 0 ? 100.0 * clamp01(part / whole) : 0.0; }

void limit_of(const struct sim_report *r, int status, struct limit *out)
{
	memset(out, 0, sizeof *out);
	out->partial = status != 0;
	double cycles = (double)r->cycles;
	out->dram_pct = pct((double)r->dram_bytes, cycles * r->dram_peak_bytes_per_cycle);
	out->mio_busy_pct = pct((double)r->mio_pipe_cycles, cycles);
	out->mio_path_pct = pct((double)r->mio_busy_cycles, cycles);
	out->mio_pipe = r->mio_pipe[0] ? r->mio_pipe : "none";
	out->tensor_pct = pct((double)r->tensor_busy_cycles, cycles * r->subpartitions);
	out->issue_per_scheduler =
		r->sp_active_cycles ? clamp01((double)r->warp_insts / (double)r->sp_active_cycles) : 0.0;
	for (int c = 0; c < STALL_COUNT; c++) {
		enum warpstate ws = limit_stall_state[c];
		if (ws < WS_COUNT && r->warp_insts)
			out->per_issue[ws] += (double)r->stalls[c] / (double)r->warp_insts;
	}
	out->top = WS_LONG_SCOREBOARD;
	for (int ws = 0; ws < WS_COUNT; ws++)
		if (out->per_issue[ws] > out->per_issue[out->top])
			out->top = (enum warpstate)ws;

	const char *cut = out->partial ? " (partial: over the cycles that ran)" : "";
	char *c = out->consequence;
	size_t n = sizeof out->consequence;
	if (out->dram_pct >= DRAM_PCT) {
		out->resource = LIM_DRAM;
		out->utilization = out->dram_pct / 100;
		snprintf(c, n, "dram-bound at %.2f of peak DRAM bandwidth%s: more stages or warps cannot help; "
			 "fewer bytes from DRAM (reuse, narrower types) can", out->utilization, cut);
	} else if (out->tensor_pct >= TENSOR_PCT) {
		out->resource = LIM_TENSOR;
		out->utilization = out->tensor_pct / 100;
		snprintf(c, n, "tensor-bound at %.2f of the tensor pipe%s: only fewer or cheaper MMAs can help",
			 out->utilization, cut);
	} else if (out->mio_busy_pct >= MIO_PCT) {
		out->resource = LIM_MIO;
		out->utilization = out->mio_busy_pct / 100;
		snprintf(c, n, "mio-bound at %.2f of the memory pipes%s: more stages cannot help; fewer or wider "
			 "memory instructions (16-byte copies, fewer shared loads) can", out->utilization, cut);
	} else if (out->issue_per_scheduler >= ISSUE_RATE) {
		out->resource = LIM_ISSUE;
		out->utilization = out->issue_per_scheduler;
		snprintf(c, n, "issue-bound at %.2f of 1 warp/cycle per scheduler%s: more stages cannot help; fewer "
			 "instructions per batch can", out->utilization, cut);
	} else if (out->top == WS_LONG_SCOREBOARD) {
		out->resource = LIM_MEMORY_LATENCY;
		out->utilization = out->issue_per_scheduler;
		snprintf(c, n, "memory-latency-bound: warps wait on loads and copies in flight (long_scoreboard %.2f "
			 "per issue), issuing %.2f of 1 warp/cycle per scheduler%s: more stages or more warps per SM can "
			 "hide it", out->per_issue[WS_LONG_SCOREBOARD], out->utilization, cut);
	} else {
		out->resource = LIM_INSTRUCTION_LATENCY;
		out->utilization = out->issue_per_scheduler;
		snprintf(c, n, "instruction-latency-bound: warps wait on their own dependencies (%s %.2f per issue), "
			 "issuing %.2f of 1 warp/cycle per scheduler%s: more stages cannot help; more warps per "
			 "scheduler or independent work per warp can", warpstate_key[out->top],
			 out->per_issue[out->top], out->utilization, cut);
	}
}

const char *limit_name(const struct limit *l) { return limit_resource_name[l->resource]; }

int limit_parse(const char *name)
{
	for (int i = 0; i < 6; i++)
		if (!strcmp(name, limit_resource_name[i]))
			return i;
	return -1;
}

/* Six decimals, as the rest of the report: byte-stable across libcs. */
static double round6(double x) { return isfinite(x) ? round(x * 1e6) / 1e6 : 0.0; }

cJSON *limit_json(const struct limit *l)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "resource", limit_name(l));
	cJSON_AddNumberToObject(o, "utilization", round6(l->utilization));
	cJSON *ev = cJSON_AddObjectToObject(o, "evidence");
	cJSON_AddNumberToObject(ev, "dram_pct", round6(l->dram_pct));
	cJSON_AddNumberToObject(ev, "tensor_pct", round6(l->tensor_pct));
	cJSON_AddNumberToObject(ev, "mio_busy_pct", round6(l->mio_busy_pct));
	cJSON_AddStringToObject(ev, "mio_busiest_pipe", l->mio_pipe);
	cJSON_AddNumberToObject(ev, "mio_path_pct", round6(l->mio_path_pct));
	cJSON_AddNumberToObject(ev, "issued_warps_per_scheduler_per_cycle", round6(l->issue_per_scheduler));
	cJSON_AddStringToObject(ev, "top_stall", warpstate_key[l->top]);
	cJSON *ws = cJSON_AddObjectToObject(ev, "warp_state");
	for (int i = 0; i < WS_COUNT; i++)
		cJSON_AddNumberToObject(ws, warpstate_key[i], round6(l->per_issue[i]));
	cJSON_AddStringToObject(o, "consequence", l->consequence);
	cJSON_AddBoolToObject(o, "partial", l->partial);
	return o;
}

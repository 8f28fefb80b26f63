/*
 * The binding limit (sim/out/limit.h): Nsight Compute's rule in its order,
 * the mapping of smsim's stall causes onto ncu's warp states, the issue's
 * named case, and the agreement with the H100's ncu readings
 * (traces/h100/ncu_limits.csv) through `smsim validate`.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "sim/out/limit.h"
#include "support/run_experiment.h"
#include "support/sh.h"


/* A report of 1000 cycles on 4 schedulers, 1000 instructions (0.25 per scheduler), nothing busy. */
static struct sim_report quiet(void)
{
	struct sim_report r;
	memset(&r, 0, sizeof r);
	r.cycles = 1000;
	r.subpartitions = 4;
	r.sp_active_cycles = 4000;
	r.warp_insts = 1000;
	r.stalls[STALL_ISSUE] = 1000;
	r.dram_peak_bytes_per_cycle = 10;
	return r;
}

Test(binding, rule_order_is_ncus)
{
	struct limit l;
	struct sim_report r = quiet();
	/* everything past its threshold: dram first */
	r.dram_bytes = 7500; /* 75% of 10 B/cycle x 1000 */
	r.tensor_busy_cycles = 3000; /* 75% of 4 x 1000 */
	r.mio_pipe_cycles = 800;
	r.warp_insts = 3600; /* 0.9 per scheduler */
	limit_of(&r, 0, &l);
	cr_assert_eq(l.resource, LIM_DRAM);
	cr_assert_float_eq(l.utilization, 0.75, 1e-9);
	r.dram_bytes = 6900; /* 69%: below */
	limit_of(&r, 0, &l);
	cr_assert_eq(l.resource, LIM_TENSOR);
	r.tensor_busy_cycles = 2300; /* 57.5% */
	limit_of(&r, 0, &l);
	cr_assert_eq(l.resource, LIM_MIO);
	cr_assert_float_eq(l.utilization, 0.8, 1e-9);
	r.mio_pipe_cycles = 590;
	r.mio_busy_cycles = 900; /* the whole MIO path busy does not make it mio: the busiest pipe does */
	limit_of(&r, 0, &l);
	cr_assert_eq(l.resource, LIM_ISSUE);
	cr_assert_float_eq(l.utilization, 0.9, 1e-9);
	cr_assert(strstr(l.consequence, "issue-bound at 0.90 of 1 warp/cycle per scheduler: more stages cannot help"),
		  "%s", l.consequence);
	r.warp_insts = 2360; /* 0.59 */
	r.stalls[STALL_CONSUMER_WAIT] = 5000;
	r.stalls[STALL_ALU] = 4000;
	limit_of(&r, 0, &l);
	cr_assert_eq(l.resource, LIM_MEMORY_LATENCY);
	cr_assert_eq(l.top, WS_LONG_SCOREBOARD);
	r.stalls[STALL_ALU] = 6000;
	limit_of(&r, 0, &l);
	cr_assert_eq(l.resource, LIM_INSTRUCTION_LATENCY);
	cr_assert_eq(l.top, WS_WAIT);
	cr_assert_float_eq(l.per_issue[WS_WAIT], 6000.0 / 2360, 1e-9);
	cr_assert(!l.partial);
	limit_of(&r, 3, &l);
	cr_assert(l.partial && strstr(l.consequence, "partial"), "%s", l.consequence);
}

Test(binding, warp_states_cover_every_stall_but_issue_and_exited)
{
	struct sim_report r = quiet();
	for (int c = 0; c < STALL_COUNT; c++)
		r.stalls[c] = 100 * (uint64_t)(c + 1);
	struct limit l;
	limit_of(&r, 0, &l);
	double sum = 0;
	for (int w = 0; w < WS_COUNT; w++)
		sum += l.per_issue[w] * (double)r.warp_insts;
	double expect = 0;
	for (int c = 0; c < STALL_COUNT; c++)
		if (c != STALL_ISSUE && c != STALL_EXITED)
			expect += (double)r.stalls[c];
	cr_assert_float_eq(sum, expect, 1e-6);
	cr_assert_eq(limit_stall_state[STALL_MEMORY], WS_LONG_SCOREBOARD);
	cr_assert_eq(limit_stall_state[STALL_CONSUMER_WAIT], WS_LONG_SCOREBOARD);
	cr_assert_eq(limit_stall_state[STALL_PRODUCER_ACQUIRE], WS_LONG_SCOREBOARD, "an mbarrier try_wait");
	cr_assert_eq(limit_stall_state[STALL_SYNCTHREADS], WS_BARRIER);
	cr_assert_eq(limit_stall_state[STALL_ALU], WS_WAIT);
	cr_assert_eq(limit_stall_state[STALL_NOT_SELECTED], WS_NOT_SELECTED);
	cr_assert_eq(limit_stall_state[STALL_SMEM], WS_SHORT_SCOREBOARD);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(limit_parse(limit_resource_name[i]), i);
	cr_assert_eq(limit_parse("latency"), -1);
}

static void limit_of_run(const char *name, const char *const *sets, int n, struct limit *l)
{
	struct sim_report *r = calloc(1, sizeof *r);
	struct diag d;
	cr_assert_eq(run_experiment(name, sets, n, r, &d), 0, "%s", d.msg);
	limit_of(r, 0, l);
	free(r);
}

/* The issue's case: 2 stages, k = 0, 8 blocks of 256 per SM: ncu reads issue (0.74), DRAM 40%. */
Test(binding, eight_blocks_two_stages_is_issue_not_dram)
{
	const char *sets[] = {"stages=2", "k=0", "blocks=8", "grid_blocks=1056", "block_size=256",
			      "machine.l2_hit_fraction=0"};
	struct limit l;
	limit_of_run("with_staging_unified", sets, 6, &l);
	cr_assert_eq(l.resource, LIM_ISSUE, "%s", limit_name(&l));
	cr_assert(l.issue_per_scheduler >= 0.6 && l.issue_per_scheduler <= 0.85, "%f", l.issue_per_scheduler);
	cr_assert(l.dram_pct > 30 && l.dram_pct < 70, "%f", l.dram_pct);
	cr_assert(l.mio_busy_pct < 60, "%f", l.mio_busy_pct);
	cr_assert(l.mio_path_pct > l.mio_busy_pct, "the whole MIO path is busier than its busiest pipe");
}

/* One block per SM: one stage waits on memory; two stages with k = 128 on fixed-latency dependencies (ncu: wait). */
Test(binding, one_block_latency_classes)
{
	const char *one[] = {"stages=1", "k=0", "blocks=1", "machine.l2_hit_fraction=0"};
	const char *two[] = {"stages=2", "k=128", "blocks=1", "machine.l2_hit_fraction=0"};
	struct limit l;
	limit_of_run("with_staging_unified", one, 4, &l);
	cr_assert_eq(l.resource, LIM_MEMORY_LATENCY, "%s", limit_name(&l));
	cr_assert(l.issue_per_scheduler < 0.3);
	limit_of_run("with_staging_unified", two, 4, &l);
	cr_assert_eq(l.resource, LIM_INSTRUCTION_LATENCY, "%s", limit_name(&l));
	cr_assert_eq(l.top, WS_WAIT);
}

/*
 * A wait on an S2R / S2UR result is short_scoreboard, as the H100 counts it: the special register
 * comes back through the MIO scoreboard.  ncu's samples of the unified pipeline at one block of 128
 * threads from L2 (traces/h100/validation_pcsamp/L2_with_staging_unified_2_128_1_0.source.csv.gz)
 * put 371 of its 477 short_scoreboard samples on the ULEA that reads S2UR SR_CgaCtaId (0x6e40,
 * 0x7430, 0x76b0, 0x7110), and its warp states at 0.88 short_scoreboard and 1.81 wait per issued
 * instruction; charged as a fixed-latency wait, smsim read 0.18 and 2.40.
 */
Test(binding, a_wait_on_a_special_register_is_short_scoreboard)
{
	char *out;
	int rc = sh(SMSIM_BIN " run configs/experiments/with_staging_unified.json --set stages=2 --set k=0 --set block_size=128"
		       " --set machine.l2_hit_fraction=1 --json --no-timing",
		    &out);
	cr_assert_eq(rc, 0, "%s", out);
	cJSON *o = cJSON_Parse(out);
	cr_assert(o, "%s", out);
	const cJSON *ws = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "binding_limit"), "evidence"), "warp_state");
	double shortsb = cJSON_GetObjectItemCaseSensitive(ws, "short_scoreboard")->valuedouble;
	double wait = cJSON_GetObjectItemCaseSensitive(ws, "wait")->valuedouble;
	cr_assert(shortsb > 0.6 && shortsb < 1.2, "short_scoreboard %.2f per issue (ncu 0.88)", shortsb);
	cr_assert(wait > 1.4 && wait < 2.1, "wait %.2f per issue (ncu 1.81)", wait);
	cJSON_Delete(o);
	free(out);
}

/*
 * Every row of ncu_limits.csv: what the model reaches today (README "The binding limit"): 16 of 18
 * name ncu's class, 16 counting the neighbour ncu_limits.py accepts near a threshold.  It was 17
 * until session 30's DRAM latency by lines in flight: the 2-stage unified pipeline at 256 threads,
 * one block, now reads memory-latency, its long_scoreboard 1.74 per issue (1.63 before; ncu 0.87)
 * past its wait's 1.70 (ncu 1.80), its cycles within 2% of the H100's either way.  Until
 * session 26's law of local misses the 4-stage unified pipeline at 1,024 threads read
 * memory-latency where ncu reads issue (15 and 17); until session 27's S2R waits counted as
 * short_scoreboard (the test above) 16 and 18: the 2-stage unified pipeline at 512 threads reads
 * memory-latency since, its long_scoreboard 1.80 per issue against ncu's 0.92, which the
 * fixed-latency waits (2.29 against ncu's 1.81) had outweighed.
 */
Test(binding, validate_agrees_with_ncu, .timeout = 300)
{
	char *out;
	int rc = sh(SMSIM_BIN " validate traces/h100/ncu_limits.csv --min-limit-agreement 80 2>&1", &out);
	cr_assert_eq(rc, 0, "%s", out);
	const char *a = strstr(out, "binding limit agreement: ");
	cr_assert(a, "%s", out);
	int strict, n, accepted, n2;
	cr_assert_eq(sscanf(a, "binding limit agreement: %d of %d rows name ncu's class; %d of %d", &strict, &n, &accepted,
			    &n2),
		     4, "%s", a);
	cr_assert_eq(n, 18);
	cr_assert_geq(strict, 16, "%s", out);
	cr_assert_geq(accepted, 16, "%s", out);
	/* the issue's case names issue, and no row names dram or mio, which ncu never reads for these kernels */
	cr_assert(strstr(out, "with_staging_unified           2  256   8    0 issue                issue "), "%s", out);
	cr_assert(!strstr(out, " dram  ") && !strstr(out, " mio  "), "%s", out);
	free(out);
	/* a bound above what is reached fails with status 1 */
	const char *tmp = "/tmp/smsim_binding_limits.csv";
	FILE *f = fopen(tmp, "w");
	cr_assert(f);
	fputs("kernel,stages,block_size,blocks_per_sm,k,batch_sz,source,grid,class,also_accepted,dram_pct,mem_pipes_pct,"
	      "issue_per_scheduler,top_stall\n"
	      "with_staging_unified,2,256,8,0,64,DRAM,1056,dram,,90,10,0.2,long_scoreboard\n",
	      f);
	fclose(f);
	rc = sh(SMSIM_BIN " validate /tmp/smsim_binding_limits.csv --min-limit-agreement 50 2>&1", &out);
	cr_assert_eq(rc, 1, "%s", out);
	cr_assert(strstr(out, "0 of 1 rows name ncu's class"), "%s", out);
	free(out);
	remove(tmp);
}

/* The JSON report's binding_limit object: the vocabulary and evidence of the issue. */
Test(binding, json_report_has_binding_limit)
{
	char *out;
	int rc = sh(SMSIM_BIN " run configs/experiments/with_staging_unified.json --set blocks=8 --set k=0 --json", &out);
	cr_assert_eq(rc, 0);
	cJSON *o = cJSON_Parse(out);
	cr_assert(o);
	const cJSON *b = cJSON_GetObjectItem(o, "binding_limit");
	cr_assert(cJSON_IsObject(b));
	cr_assert_str_eq(cJSON_GetObjectItem(b, "resource")->valuestring, "issue");
	double u = cJSON_GetObjectItem(b, "utilization")->valuedouble;
	cr_assert(u >= 0.6 && u <= 1);
	const cJSON *ev = cJSON_GetObjectItem(b, "evidence");
	static const char *const keys[] = {"dram_pct", "mio_busy_pct", "issued_warps_per_scheduler_per_cycle"};
	for (int i = 0; i < 3; i++)
		cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(ev, keys[i])), "%s", keys[i]);
	const cJSON *ws = cJSON_GetObjectItem(ev, "warp_state");
	cr_assert(cJSON_GetObjectItem(ws, "long_scoreboard") && cJSON_GetObjectItem(ws, "not_selected") &&
		  cJSON_GetObjectItem(ws, "wait") && cJSON_GetObjectItem(ws, "barrier"));
	cr_assert(strstr(cJSON_GetObjectItem(b, "consequence")->valuestring, "more stages cannot help"));
	cJSON_Delete(o);
	free(out);
	rc = sh(SMSIM_BIN " run configs/experiments/with_staging_unified.json --set blocks=8 --set k=0", &out);
	cr_assert(strstr(out, "\nbinding limit   issue — issue-bound at 0."), "%s", out);
	cr_assert(strstr(out, "warp state, stalled-warp cycles per issued instruction (ncu WarpStateStats): long_scoreboard") ||
		  strstr(out, "warp state, stalled-warp cycles per issued instruction (ncu WarpStateStats): not_selected"),
		  "%s", out);
	free(out);
}

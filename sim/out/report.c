#include "report.h"

#include "limit.h"

#include <math.h>
#include <string.h>

/* Six decimals are plenty and make reports byte-stable across libcs. */
static double round6(double x) { return isfinite(x) ? round(x * 1e6) / 1e6 : 0.0; }

/* The warp-instructions each pipe took, its share of all: what to set beside ncu's sm__inst_executed_pipe_*. */
static void print_pipes(FILE *out, const struct sim_report *r)
{
	uint64_t all = 0;
	for (int c = 0; c < IC_COUNT; c++)
		all += r->pipe_issues[c];
	if (!all)
		return;
	fprintf(out, "pipes           ");
	for (int c = 0, n = 0; c < IC_COUNT; c++)
		if (r->pipe_issues[c])
			fprintf(out, "%s %s %.1f%%", n++ ? "," : "", iclass_name[c], 100.0 * (double)r->pipe_issues[c] / (double)all);
	fprintf(out, " of %llu warp-instructions\n", (unsigned long long)all);
}

static double mean_latency(const struct sim_report *r)
{
	return r->copies ? (double)r->copy_latency_sum / (double)r->copies : 0.0;
}

static double mean_unloaded(const struct sim_report *r)
{
	return r->copies ? (double)r->copy_unloaded_sum / (double)r->copies : 0.0;
}

static const char *status_name(int status)
{
	switch (status) {
	case 0: return "ok";
	case 2: return "program_error";
	case 3: return "deadlock";
	case 4: return "limit";
	default: return "error";
	}
}

cJSON *report_json(const struct experiment *e, const struct sim_report *r, int status, bool timing)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "experiment", e->name);
	if (e->kernel_alone)
		cJSON_AddStringToObject(o, "defaults",
					"a kernel file run alone: the default machine, the kernel's own params, one block "
					"per SM and a grid of one block");
	cJSON_AddStringToObject(o, "kernel", r->kernel);
	cJSON_AddStringToObject(o, "machine", r->machine);
	cJSON_AddStringToObject(o, "status", status_name(status));
	/* A run that stopped early (deadlock, a limit): every figure is over the cycles that ran. */
	cJSON_AddBoolToObject(o, "partial", status != 0);
	cJSON *params = cJSON_AddObjectToObject(o, "params");
	for (int i = 0; i < e->kernel.nparams; i++)
		cJSON_AddNumberToObject(params, e->kernel.params[i].name, (double)e->kernel.params[i].value);
	cJSON *launch = cJSON_AddObjectToObject(o, "launch");
	cJSON_AddNumberToObject(launch, "block_size", (double)e->launch.block_size);
	cJSON_AddNumberToObject(launch, "blocks", (double)e->launch.blocks);
	cJSON_AddNumberToObject(launch, "grid_blocks", (double)e->launch.grid_blocks);
	cJSON_AddNumberToObject(launch, "warps", r->warps);

	cJSON_AddNumberToObject(o, "cycles", (double)r->cycles);
	cJSON_AddNumberToObject(o, "time_us", round6((double)r->cycles / (r->clock_ghz * 1e3)));
	cJSON *stalls = cJSON_AddObjectToObject(o, "stalls");
	for (int c = 0; c < STALL_COUNT; c++)
		cJSON_AddNumberToObject(stalls, stall_key[c], (double)r->stalls[c]);

	cJSON *copies = cJSON_AddObjectToObject(o, "copies");
	cJSON_AddNumberToObject(copies, "count", (double)r->copies);
	cJSON_AddNumberToObject(copies, "bytes", (double)r->copy_bytes);
	cJSON_AddNumberToObject(copies, "mean_latency", round6(mean_latency(r)));
	cJSON_AddNumberToObject(copies, "max_latency", (double)r->copy_latency_max);
	cJSON_AddNumberToObject(copies, "unloaded_latency", round6(mean_unloaded(r)));
	cJSON_AddNumberToObject(copies, "queueing", round6(mean_latency(r) - mean_unloaded(r)));
	cJSON_AddNumberToObject(copies, "sync_fallback", (double)r->sync_copies);
	cJSON_AddNumberToObject(copies, "bulk", (double)r->bulk_copies);
	cJSON_AddNumberToObject(copies, "bulk_bytes", (double)r->bulk_bytes);

	cJSON *lh = cJSON_AddObjectToObject(o, "latency_hiding");
	cJSON_AddNumberToObject(lh, "batches", (double)r->batches);
	cJSON_AddNumberToObject(lh, "copy_latency_cycles", (double)r->batch_latency);
	cJSON_AddNumberToObject(lh, "exposed_cycles", (double)r->exposed);
	cJSON_AddNumberToObject(lh, "unloaded_latency_cycles", (double)r->unloaded_budget);
	cJSON_AddNumberToObject(lh, "exposed_unloaded_cycles", (double)r->exposed_unloaded);
	cJSON_AddNumberToObject(lh, "hidden_fraction", round6(r->hidden_fraction));
	cJSON_AddNumberToObject(lh, "compute_overlap_fraction",
				round6(r->compute_issues ? (double)r->compute_overlapped / (double)r->compute_issues : 0));

	cJSON *bounds = cJSON_AddObjectToObject(o, "bounds");
	cJSON_AddNumberToObject(bounds, "compute_cycles", (double)r->compute_bound);
	cJSON_AddNumberToObject(bounds, "memory_cycles", (double)r->memory_bound);
	cJSON_AddNumberToObject(bounds, "lower_bound", (double)r->lower_bound);
	cJSON_AddNumberToObject(bounds, "efficiency", round6(r->efficiency));

	struct limit lim;
	limit_of(r, status, &lim);
	cJSON_AddItemToObject(o, "binding_limit", limit_json(&lim));

	cJSON *cpa = cJSON_AddObjectToObject(o, "cp_async");
	cJSON_AddNumberToObject(cpa, "actual_batches", (double)r->cp_async_batches);
	cJSON_AddNumberToObject(cpa, "thread_commits", (double)r->cp_async_commits);

	cJSON *ow = cJSON_AddObjectToObject(o, "overwait");
	cJSON_AddNumberToObject(ow, "waits", (double)r->overwait_waits);
	cJSON_AddNumberToObject(ow, "cycles", (double)r->overwait_cycles);
	cJSON_AddNumberToObject(ow, "extra_batches", (double)r->overwait_extra_batches);
	cJSON_AddNumberToObject(ow, "mean_cycles_per_wait",
				round6(r->overwait_waits ? (double)r->overwait_cycles / (double)r->overwait_waits : 0));
	cJSON *worst = cJSON_AddObjectToObject(ow, "worst_thread");
	cJSON_AddNumberToObject(worst, "block", r->overwait_worst_block);
	cJSON_AddNumberToObject(worst, "thread", r->overwait_worst_thread);
	cJSON_AddNumberToObject(worst, "cycles", (double)r->overwait_worst_cycles);

	cJSON_AddBoolToObject(o, "checks", r->checks);
	cJSON *hz = cJSON_AddObjectToObject(o, "hazards");
	cJSON_AddNumberToObject(hz, "count", (double)r->hazards);
	cJSON *hzf = cJSON_AddArrayToObject(hz, "first");
	for (uint64_t i = 0; i < r->hazards && i < 8; i++)
		cJSON_AddItemToArray(hzf, cJSON_CreateString(r->hazard_text[i]));
	cJSON *pv = cJSON_AddObjectToObject(o, "provenance");
	cJSON_AddNumberToObject(pv, "mismatches", (double)r->provenance_mismatches);
	cJSON *pvf = cJSON_AddArrayToObject(pv, "first");
	for (uint64_t i = 0; i < r->provenance_mismatches && i < 8; i++)
		cJSON_AddItemToArray(pvf, cJSON_CreateString(r->provenance_text[i]));
	cJSON_AddStringToObject(o, "quit_model", r->quit_model);
	cJSON_AddStringToObject(o, "reconverge", r->reconverge);
	cJSON_AddStringToObject(o, "scheduler", r->scheduler);

	cJSON *smem = cJSON_AddObjectToObject(o, "smem");
	cJSON_AddNumberToObject(smem, "accesses", (double)r->smem_accesses);
	cJSON_AddNumberToObject(smem, "wavefronts", (double)r->smem_wavefronts);
	cJSON_AddNumberToObject(smem, "bank_conflicts", (double)r->bank_conflicts);

	if (r->mma_ops) { /* only kernels with mma ops: the others' reports stay as they were */
		cJSON *tc = cJSON_AddObjectToObject(o, "tensor");
		cJSON_AddNumberToObject(tc, "mma_ops", (double)r->mma_ops);
		cJSON_AddNumberToObject(tc, "hmma", (double)r->hmma);
		cJSON_AddNumberToObject(tc, "pipe_utilisation", round6(r->cycles ? r->tensor_busy / (double)r->cycles : 0));
	}

	if (r->local_hits + r->local_misses) { /* only kernels with local arrays */
		cJSON *l1 = cJSON_AddObjectToObject(o, "l1");
		cJSON_AddNumberToObject(l1, "carveout_bytes", (double)r->carveout_bytes);
		cJSON_AddNumberToObject(l1, "local_loads", (double)(r->local_hits + r->local_misses));
		cJSON_AddNumberToObject(l1, "local_misses", (double)r->local_misses);
	}

	if (r->l2_warm > 0) { /* only runs with data warmed into L2 */
		cJSON *l2 = cJSON_AddObjectToObject(o, "l2");
		cJSON_AddNumberToObject(l2, "global_bytes", (double)r->global_bytes);
		cJSON_AddNumberToObject(l2, "warm_fraction", round6(r->l2_warm));
		cJSON_AddNumberToObject(l2, "hit_fraction", round6(r->l2_hit_fraction));
	}

	cJSON *dram = cJSON_AddObjectToObject(o, "dram");
	cJSON_AddNumberToObject(dram, "bytes", (double)r->dram_bytes);
	cJSON_AddNumberToObject(dram, "bytes_per_cycle",
				round6(r->cycles ? (double)r->dram_bytes / (double)r->cycles : 0));

	cJSON *pipes = cJSON_AddObjectToObject(o, "pipes");
	for (int c = 0; c < IC_COUNT; c++)
		cJSON_AddNumberToObject(pipes, iclass_name[c], (double)r->pipe_issues[c]);

	cJSON *sim = cJSON_AddObjectToObject(o, "sim");
	cJSON_AddNumberToObject(sim, "warp_instructions", (double)r->warp_insts);
	cJSON_AddNumberToObject(sim, "events", (double)r->events);
	if (timing) {
		cJSON_AddNumberToObject(sim, "host_seconds", round6(r->host_seconds));
		cJSON_AddNumberToObject(sim, "warp_instructions_per_second",
					round(r->host_seconds > 0 ? (double)r->warp_insts / r->host_seconds : 0));
	}

	if (status == 3) {
		cJSON *dl = cJSON_AddObjectToObject(o, "deadlock");
		cJSON *arr = cJSON_AddArrayToObject(dl, "blocked");
		for (uint32_t i = 0; i < r->nblocked; i++) {
			const struct blocked_warp *b = &r->blocked[i];
			cJSON *x = cJSON_CreateObject();
			cJSON_AddNumberToObject(x, "block", b->block);
			cJSON_AddNumberToObject(x, "warp", b->warp);
			if (b->role[0])
				cJSON_AddStringToObject(x, "role", b->role);
			cJSON_AddNumberToObject(x, "threads", b->threads);
			cJSON_AddStringToObject(x, "op", b->op);
			cJSON_AddStringToObject(x, "at", b->where);
			cJSON_AddStringToObject(x, "waits_on", b->on);
			cJSON_AddNumberToObject(x, "phase", b->phase);
			cJSON_AddNumberToObject(x, "expected", (double)b->expected);
			cJSON_AddNumberToObject(x, "arrived", (double)b->arrived);
			cJSON_AddItemToArray(arr, x);
		}
		cJSON_AddStringToObject(dl, "hint", r->hint);
	}
	return o;
}

void report_text(FILE *out, const struct experiment *e, const struct sim_report *r, int status, bool timing)
{
	fprintf(out, "smsim: %s — kernel %s on %s\n", e->name, r->kernel, r->machine);
	if (e->kernel_alone)
		fprintf(out, "  defaults: a kernel file run alone — machine %s, the kernel's own params, a launch of "
			"one block of %lld threads (an experiment file sets these; --set changes them)\n",
			e->machine_file[0] ? e->machine_file : "built-in default", (long long)e->launch.block_size);
	fprintf(out, "  params:");
	for (int i = 0; i < e->kernel.nparams; i++)
		fprintf(out, " %s=%lld", e->kernel.params[i].name, (long long)e->kernel.params[i].value);
	fprintf(out, "\n  launch: %lld block(s) of %lld threads resident (%u warps), grid of %lld blocks\n",
		(long long)e->launch.blocks, (long long)e->launch.block_size, r->warps, (long long)e->launch.grid_blocks);
	fprintf(out, "  model: scheduler=%s, reconverge=%s, quit=%s, dataflow checks %s\n", r->scheduler, r->reconverge, r->quit_model,
		r->checks ? "on" : "off");
	if (status)
		fprintf(out, "  status: %s — the figures below are partial: over the %llu cycles that ran\n",
			status_name(status), (unsigned long long)r->cycles);

	fprintf(out, "\ncycles          %12llu   (%.3f us at %.2f GHz)\n", (unsigned long long)r->cycles,
		(double)r->cycles / (r->clock_ghz * 1e3), r->clock_ghz);
	fprintf(out, "lower bound     %12llu   (compute %llu, memory %llu)  efficiency %.1f%%\n",
		(unsigned long long)r->lower_bound, (unsigned long long)r->compute_bound,
		(unsigned long long)r->memory_bound, 100 * r->efficiency);

	struct limit lim;
	limit_of(r, status, &lim);
	fprintf(out, "binding limit   %s — %s\n", limit_name(&lim), lim.consequence);
	fprintf(out,
		"  evidence: DRAM %.1f%% of peak, memory pipes %.1f%% busy (%s; MIO path %.1f%%), %.2f warps issued "
		"per scheduler per cycle\n",
		lim.dram_pct, lim.mio_busy_pct, lim.mio_pipe, lim.mio_path_pct, lim.issue_per_scheduler);
	fprintf(out, "  warp state, stalled-warp cycles per issued instruction (ncu WarpStateStats):");
	bool done[WS_COUNT] = {false};
	for (int n = 0; n < WS_COUNT; n++) {
		int best = -1;
		for (int i = 0; i < WS_COUNT; i++)
			if (!done[i] && lim.per_issue[i] >= 0.005 && (best < 0 || lim.per_issue[i] > lim.per_issue[best]))
				best = i;
		if (best < 0)
			break;
		done[best] = true;
		fprintf(out, "%s %s %.2f", n ? "," : "", warpstate_key[best], lim.per_issue[best]);
	}
	fputc('\n', out);

	fprintf(out, "\nlatency hiding\n");
	fprintf(out, "  batches consumed        %12llu\n", (unsigned long long)r->batches);
	fprintf(out, "  copy latency (sum)      %12llu cycles   first issue to last landing, per batch\n",
		(unsigned long long)r->batch_latency);
	fprintf(out, "  exposed (sum)           %12llu cycles   consumers blocked waiting for them\n",
		(unsigned long long)r->exposed);
	fprintf(out, "  hidden fraction         %12.3f          of each batch's unloaded copy latency, the part consumers did not wait\n",
		r->hidden_fraction);
	fprintf(out, "  compute during copies   %11.1f%%          of FMA issue slots\n",
		r->compute_issues ? 100.0 * (double)r->compute_overlapped / (double)r->compute_issues : 0.0);

	fprintf(out, "\nasync copies     %llu chunks, %llu bytes, latency mean %.1f max %llu cycles",
		(unsigned long long)r->copies, (unsigned long long)r->copy_bytes, mean_latency(r),
		(unsigned long long)r->copy_latency_max);
	if (r->copies)
		fprintf(out, "\n  unloaded %.1f cycles (an idle SM), queueing %.1f cycles (the rest, mean)", mean_unloaded(r),
			mean_latency(r) - mean_unloaded(r));
	if (r->sync_copies)
		fprintf(out, "\n  WARNING: %llu chunk(s) fell back to synchronous copies (alignment < 4 bytes)",
			(unsigned long long)r->sync_copies);
	if (r->bulk_copies)
		fprintf(out, "\n  bulk (TMA)       %llu copies, %llu bytes", (unsigned long long)r->bulk_copies,
			(unsigned long long)r->bulk_bytes);
	if (r->cp_async_batches)
		fprintf(out, "\ncp.async groups  %llu actual batches (per warp) for %llu thread commits",
			(unsigned long long)r->cp_async_batches, (unsigned long long)r->cp_async_commits);
	if (r->overwait_waits)
		fprintf(out,
			"\nover-wait        %llu cycles and %llu extra batches over %llu waits (mean %.1f cycles); "
			"worst: block %u thread %u, %llu cycles",
			(unsigned long long)r->overwait_cycles, (unsigned long long)r->overwait_extra_batches,
			(unsigned long long)r->overwait_waits, (double)r->overwait_cycles / (double)r->overwait_waits,
			r->overwait_worst_block, r->overwait_worst_thread, (unsigned long long)r->overwait_worst_cycles);
	fprintf(out, "\nshared memory    %llu accesses, %llu wavefronts, %llu bank-conflict wavefronts\n",
		(unsigned long long)r->smem_accesses, (unsigned long long)r->smem_wavefronts,
		(unsigned long long)r->bank_conflicts);
	if (r->local_hits + r->local_misses)
		fprintf(out, "L1               %llu local loads, %llu missed (%.2f%%), %llu KB carveout\n",
			(unsigned long long)(r->local_hits + r->local_misses), (unsigned long long)r->local_misses,
			100.0 * (double)r->local_misses / (double)(r->local_hits + r->local_misses),
			(unsigned long long)(r->carveout_bytes / 1024));
	if (r->l2_warm > 0)
		fprintf(out, "L2               %.1f MB of global data, %.0f%% warmed, %.0f%% of sectors hit (what the L2 keeps)\n",
			(double)r->global_bytes / 1e6, 100.0 * r->l2_warm, 100.0 * r->l2_hit_fraction);
	fprintf(out, "DRAM             %llu bytes, %.2f bytes/cycle\n", (unsigned long long)r->dram_bytes,
		r->cycles ? (double)r->dram_bytes / (double)r->cycles : 0.0);
	print_pipes(out, r);
	if (r->mma_ops)
		fprintf(out, "tensor pipe      %llu HMMA from %llu mma ops, %.1f%% busy\n", (unsigned long long)r->hmma,
			(unsigned long long)r->mma_ops, r->cycles ? 100.0 * r->tensor_busy / (double)r->cycles : 0.0);

	uint64_t total = 0;
	for (int c = 0; c < STALL_COUNT; c++)
		total += r->stalls[c];
	fprintf(out, "\nwarp cycles by cause (%u warps x %llu cycles = %llu)\n", r->warps,
		(unsigned long long)r->cycles, (unsigned long long)total);
	for (int c = 0; c < STALL_COUNT; c++) {
		if (!r->stalls[c])
			continue;
		double pct = total ? 100.0 * (double)r->stalls[c] / (double)total : 0;
		int bar = (int)(pct / 2.5 + 0.5);
		fprintf(out, "  %-17s %12llu %5.1f%% ", stall_key[c], (unsigned long long)r->stalls[c], pct);
		for (int i = 0; i < bar; i++)
			fputc('#', out);
		fputc('\n', out);
	}

	if (r->checks) {
		fprintf(out, "\ndataflow         %llu hazard(s), %llu provenance mismatch(es)\n",
			(unsigned long long)r->hazards, (unsigned long long)r->provenance_mismatches);
		for (uint64_t i = 0; i < r->hazards && i < 8; i++)
			fprintf(out, "  hazard: %s\n", r->hazard_text[i]);
		for (uint64_t i = 0; i < r->provenance_mismatches && i < 8; i++)
			fprintf(out, "  provenance: %s\n", r->provenance_text[i]);
	}

	if (status == 3) {
		fprintf(out, "\nDEADLOCK: %u warp(s) can never proceed\n", r->nblocked);
		for (uint32_t i = 0; i < r->nblocked; i++) {
			const struct blocked_warp *b = &r->blocked[i];
			fprintf(out, "  block %u warp %u (%s%s%u threads) in %s at %s: waits on %s phase %u, %lld of %lld arrived\n",
				b->block, b->warp, b->role, b->role[0] ? "; " : "", b->threads, b->op, b->where, b->on, b->phase,
				(long long)b->arrived, (long long)b->expected);
		}
		fprintf(out, "  hint: %s\n", r->hint);
	}

	fprintf(out, "\nsimulator        %llu warp-instructions, %llu events", (unsigned long long)r->warp_insts,
		(unsigned long long)r->events);
	if (timing && r->host_seconds > 0)
		fprintf(out, ", %.3f s, %.2f M warp-instructions/s", r->host_seconds,
			(double)r->warp_insts / r->host_seconds / 1e6);
	fputc('\n', out);
}

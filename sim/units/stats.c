/*
 * stats: the run's metrics (DESIGN.md §5), gathered as the run goes and
 * completed at its end.
 */
#include <string.h>

#include "simint.h"

void stats_copy(struct sim *s, uint32_t lanes, uint32_t bytes_each, uint64_t issue, uint64_t land, uint64_t unloaded)
{
	struct sim_report *r = s->rep;
	if (s->trace) {
		trace_count(&s->trace->inflight, issue, (int64_t)lanes * bytes_each);
		trace_count(&s->trace->inflight, land, -(int64_t)lanes * bytes_each);
	}
	uint64_t lat = land - issue;
	r->copies += lanes;
	r->copy_bytes += (uint64_t)lanes * bytes_each;
	r->copy_latency_sum += lat * lanes;
	if (lat > r->copy_latency_max)
		r->copy_latency_max = lat;
	if (unloaded > lat)
		unloaded = lat; /* never more than it took: a line from DRAM may land before its median (dram_spread) */
	r->copy_unloaded_sum += unloaded * lanes;
	if (unloaded > r->copy_unloaded_max)
		r->copy_unloaded_max = unloaded;
}

void stats_batch(struct sim *s, const struct batch_rec *b, uint32_t track, uint32_t stage)
{
	struct sim_report *r = s->rep;
	r->batches++;
	if (b->first_issue == NEVER || b->last_land < b->first_issue)
		return;
	if (track != STATS_NO_TRACK)
		trace_copy(s->trace, track + stage, (uint32_t)b->seq, b->first_issue, b->last_land);
	uint64_t lat = b->last_land - b->first_issue;
	r->batch_latency += lat;
	/* A consumer can be blocked longer than the copy took (wake-up latency); only the copy's share counts. */
	r->exposed += b->exposed < lat ? b->exposed : lat;
	/*
	 * Hidden, against what one copy takes on an idle SM (the largest such so far, at least this
	 * batch's): a consumer that waited that long hid nothing, whatever the queues added.
	 */
	uint64_t u = r->copy_unloaded_max;
	r->exposed_unloaded += b->exposed < u ? b->exposed : u;
	r->unloaded_budget += u;
}

void stats_finish(struct sim *s)
{
	struct sim_report *r = s->rep;
	pipe_finish_stats(s);
	mbar_finish_stats(s);
	uint64_t end = 0;
	for (uint32_t i = 0; i < s->nwarps; i++)
		if (s->warps[i].done && s->warps[i].done_at > end)
			end = s->warps[i].done_at;
	if (s->warps_left) {
		end = s->now + 1;
	} else { /* the kernel ends when its copies have landed and its stores have drained too */
		if (s->mem.copies_land > end)
			end = s->mem.copies_land;
		if ((s->mem.dram_free + 1023) / 1024 > end)
			end = (s->mem.dram_free + 1023) / 1024;
	}
	r->cycles = end;
	uint64_t longest_chain = 0;
	for (uint32_t i = 0; i < s->nwarps; i++) {
		struct warp *w = &s->warps[i];
		if (!w->done) {
			sched_charge(s, w, end);
		} else {
			w->stalls[STALL_EXITED] += end - w->done_at;
			trace_warp(s->trace, w->id, STALL_EXITED, w->done_at, end);
		}
		/*
		 * Its cycles from 0 to end, each charged once (sched.c's charge, ISSUE
		 * and EXITED here): not_selected is what the other causes did not take.
		 */
		uint64_t taken = 0;
		for (int c = 0; c < STALL_COUNT; c++)
			taken += c == STALL_NOT_SELECTED ? 0 : w->stalls[c];
		w->stalls[STALL_NOT_SELECTED] = end - taken;
		for (int c = 0; c < STALL_COUNT; c++)
			r->stalls[c] += w->stalls[c];
		r->warp_insts += w->stalls[STALL_ISSUE]; /* a cycle of issue per warp-instruction */
		if (w->alu_chain_cycles > longest_chain)
			longest_chain = w->alu_chain_cycles;
	}
	trace_finish(s->trace);
	r->hidden_fraction =
		r->unloaded_budget ? 1.0 - (double)r->exposed_unloaded / (double)r->unloaded_budget : 0.0;
	/*
	 * A sub-partition's issues are its warps' (each issue counts one
	 * STALL_ISSUE cycle of the warp that issued): summed here instead of
	 * an increment at every issue in the tick.
	 */
	uint64_t busiest = 0;
	for (int64_t p = 0; p < s->m->subpartitions; p++) {
		struct subpart *sp = &s->sps[p];
		sp->issued = 0;
		for (uint32_t i = 0; i < sp->nwarps; i++)
			sp->issued += sp->warps[i]->stalls[STALL_ISSUE];
		if (sp->issued > busiest)
			busiest = sp->issued;
	}
	r->compute_bound = busiest > longest_chain ? busiest : longest_chain;
	r->memory_bound = (uint64_t)((double)r->dram_bytes / s->m->dram_bytes_per_cycle + 0.5);
	r->lower_bound = r->compute_bound > r->memory_bound ? r->compute_bound : r->memory_bound;
	r->efficiency = r->cycles ? (double)r->lower_bound / (double)r->cycles : 0.0;
	if (r->efficiency > 1.0)
		r->efficiency = 1.0; /* a run cut short: its stores' drain (the memory bound) runs past its end */
	r->events = s->q.popped + s->sm_ticks;

	/* The binding limit's figures: each scheduler is active until its last warp exits (ncu's cycles_active). */
	r->dram_peak_bytes_per_cycle = s->m->dram_peak_bytes_per_cycle;
	r->subpartitions = (uint32_t)s->m->subpartitions;
	r->sp_active_cycles = 0;
	for (int64_t p = 0; p < s->m->subpartitions; p++) {
		uint64_t last = 0;
		for (uint32_t i = 0; i < s->nwarps; i++) {
			const struct warp *w = &s->warps[i];
			uint64_t at = w->done ? w->done_at : end;
			if (w->sp == (uint32_t)p && at > last)
				last = at;
		}
		r->sp_active_cycles += last;
	}
	/*
	 * ncu's "Mem Pipes Busy" is the busiest of the SM's memory units, each against its own peak;
	 * the model's one MIO path takes every class's cost in turn, so each class stands for its unit,
	 * busy for what the issue charged it (an arrive takes syncs_arrive_mio, a woken try_wait none).
	 */
	r->mio_busy_cycles = r->mio_pipe_cycles = 0;
	r->mio_pipe[0] = '\0';
	for (int c = 0; c < IC_COUNT; c++) {
		uint64_t busy = s->cls_mio_busy[c];
		r->mio_busy_cycles += busy;
		if (busy > r->mio_pipe_cycles) {
			r->mio_pipe_cycles = busy;
			snprintf(r->mio_pipe, sizeof r->mio_pipe, "%s", iclass_name[c]);
		}
	}
	r->tensor_busy_cycles = s->cls_issued[IC_MMA] * s->cls_ivl[IC_MMA];
	memcpy(r->pipe_issues, s->cls_issued, sizeof r->pipe_issues);
	r->pipe_issues[IC_FMA] += r->compute_issues;
	if (s->trace)
		s->trace->end = end;
}

#include "flow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "simint.h"

uint32_t flow_grain(const struct kernel *k)
{
	uint32_t g = 4;
	for (int i = 0; i < k->nbufs; i++)
		if (k->bufs[i].space == SPACE_SHARED && k->bufs[i].elem_bytes < g)
			g = k->bufs[i].elem_bytes;
	return g ? g : 1;
}

int flow_setup(struct sim *s, struct block *b)
{
	s->flow_grain = flow_grain(s->k);
	size_t words = (size_t)(s->k->shared_bytes + s->flow_grain - 1) / s->flow_grain;
	b->flow = malloc((words + 1) * sizeof *b->flow);
	b->vis = calloc((size_t)s->launch.block_size, sizeof *b->vis);
	b->bar_sync = calloc((size_t)s->launch.block_size, sizeof *b->bar_sync);
	b->proxy_fences = calloc((size_t)s->launch.block_size, sizeof *b->proxy_fences);
	b->wsync_vis = calloc((size_t)s->launch.block_size, sizeof *b->wsync_vis);
	b->wsync_mask = calloc((size_t)s->launch.block_size, sizeof *b->wsync_mask);
	b->wsync_at = calloc((size_t)s->launch.block_size, sizeof *b->wsync_at);
	b->rel_vis = calloc((size_t)s->launch.block_size, sizeof *b->rel_vis);
	b->rel_at = calloc((size_t)s->launch.block_size, sizeof *b->rel_at);
	b->bulk_vis = calloc((size_t)s->launch.block_size, sizeof *b->bulk_vis);
	b->bar_lanes = calloc(b->nwarps + 1, sizeof *b->bar_lanes);
	b->bar_pc = calloc(b->nwarps + 1, sizeof *b->bar_pc);
	b->flow_threads = calloc((size_t)s->launch.block_size, sizeof *b->flow_threads);
	if (!b->flow || !b->vis || !b->bar_sync || !b->proxy_fences || !b->wsync_vis || !b->wsync_mask || !b->wsync_at ||
	    !b->rel_vis || !b->rel_at || !b->bulk_vis || !b->bar_lanes || !b->bar_pc || !b->flow_threads)
		return -1;
	for (size_t i = 0; i <= words; i++)
		b->flow[i] = (struct flow_word){.src = -1, .src_buf = -1, .obj = -1};
	return 0;
}

void flow_free(struct block *b)
{
	free(b->flow);
	free(b->vis);
	free(b->bar_sync);
	free(b->proxy_fences);
	b->proxy_fences = NULL;
	free(b->wsync_vis);
	free(b->wsync_mask);
	free(b->wsync_at);
	free(b->rel_vis);
	free(b->rel_at);
	free(b->bulk_vis);
	free(b->bar_lanes);
	free(b->bar_pc);
	free(b->flow_threads);
	b->flow_threads = NULL;
	b->bulk_vis = b->bar_lanes = NULL;
	b->bar_pc = NULL;
	b->flow = NULL;
	b->vis = NULL;
	b->bar_sync = NULL;
	b->wsync_vis = b->rel_vis = b->wsync_mask = NULL;
	b->wsync_at = b->rel_at = NULL;
}

/*
 * __syncwarp by `lanes` of warp w at cycle now: it orders memory among
 * them (CUDA Programming Guide, "Warp Synchronization Functions": the
 * threads' memory accesses before it are visible to the others after it),
 * so what each had waited for, and stored, becomes visible to the rest.
 */
void flow_syncwarp(struct sim *s, struct warp *w, uint32_t lanes, uint64_t now)
{
	if (!s->checks)
		return;
	struct block *b = &s->blocks[w->block];
	for (uint32_t m = lanes; m; m &= m - 1) {
		uint32_t t = w->in_block * 32 + (uint32_t)__builtin_ctz(m);
		b->wsync_vis[t] = b->cpa[t].waited;
		b->wsync_mask[t] = lanes;
		b->wsync_at[t] = now;
	}
}

/*
 * The warp's active threads arrive on a cuda::barrier at cycle now (a
 * release): the copies each had waited for are ordered before the phase's
 * completion, so a thread that waits for a phase completing after it sees
 * them (PTX memory model: mbarrier arrive has release, the completed wait
 * acquire semantics).
 */
void flow_release(struct sim *s, struct warp *w, uint64_t now)
{
	if (!s->checks)
		return;
	struct block *b = &s->blocks[w->block];
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		uint32_t t = w->in_block * 32 + (uint32_t)__builtin_ctz(m);
		if (b->cpa[t].waited > b->rel_vis[t]) /* an earlier arrive_on's copies stay covered */
			b->rel_vis[t] = b->cpa[t].waited;
		b->rel_at[t] = now;
	}
}

/*
 * cp.async.mbarrier.arrive by the warp's active threads: a phase that
 * completes after it has waited for all their copies so far, so a thread
 * that waits for it sees them (the same record as a release).
 */
void flow_arrive_on(struct sim *s, struct warp *w, uint64_t now)
{
	if (!s->checks)
		return;
	struct block *b = &s->blocks[w->block];
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		uint32_t t = w->in_block * 32 + (uint32_t)__builtin_ctz(m);
		b->rel_vis[t] = b->cpa[t].commits + 1; /* its open batch included */
		b->rel_at[t] = now;
	}
}

/* Reader tid took part in writer's last __syncwarp (same warp), which came after `since`. */
static bool warp_synced(const struct block *b, uint32_t writer, uint32_t tid)
{
	return writer / 32 == tid / 32 && (b->wsync_mask[writer] >> (tid % 32) & 1);
}

/* __syncthreads released: what each thread had waited for becomes visible to all. */
void flow_sync(struct sim *s, struct block *b)
{
	b->sync_gen++;
	for (int64_t t = 0; s->checks && t < s->launch.block_size; t++) {
		b->vis[t] = b->cpa[t].waited;
		b->bulk_vis[t] = bulk_read_known(b, (uint32_t)t);
	}
}

static void note(struct sim *s, char (*list)[FLOW_TEXT], uint64_t count, const char *fmt, ...) DIAG_PRINTF(4, 5);

static void note(struct sim *s, char (*list)[FLOW_TEXT], uint64_t count, const char *fmt, ...)
{
	(void)s;
	if (count > FLOW_MAX_SHOWN)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(list[count - 1], FLOW_TEXT, fmt, ap);
	va_end(ap);
}

/* "block B thread T", and "of warp W (ROLE)" when the kernel names the warp's role. */
static const char *who(const struct sim *s, uint32_t block, uint32_t tid, char *buf, size_t n)
{
	const char *role = kernel_warp_role(s->k, tid / 32);
	if (role)
		snprintf(buf, n, "block %u thread %u of warp %u (%s)", block, tid, tid / 32, role);
	else
		snprintf(buf, n, "block %u thread %u", block, tid);
	return buf;
}

static const char *where(const struct sim *s, const struct warp *w)
{
	return s->k->paths[s->k->code[simt_pc(w)].where];
}

/* "path (line N)" of the op at code index pc. */
static const char *where_line(const struct sim *s, uint32_t pc, char *buf, size_t n)
{
	uint32_t p = s->k->code[pc].where;
	snprintf(buf, n, "%s (line %d)", s->k->paths[p], s->k->path_line ? s->k->path_line[p] : 0);
	return buf;
}

/* A hazard found by another unit: counted and, among the first few, described (fmt after "block B thread T: OP at PATH (line N): "). */
void flow_report(struct sim *s, struct warp *w, int lane, const char *fmt, ...)
{
	struct sim_report *r = s->rep;
	r->hazards++;
	if (r->hazards > FLOW_MAX_SHOWN)
		return;
	char here[160], what[200], me[96];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	note(s, r->hazard_text, r->hazards, "%s: %s at %s: %s", who(s, w->block, w->in_block * 32 + (uint32_t)lane, me, sizeof me),
	     op_table[s->k->code[simt_pc(w)].op].name, where_line(s, (uint32_t)simt_pc(w), here, sizeof here), what);
}

/* fence.proxy.async by the lanes in mask: their generic accesses so far are ordered before their async ones. */
void flow_proxy_fence(struct sim *s, struct warp *w, uint32_t mask)
{
	if (!s->checks)
		return;
	struct block *b = &s->blocks[w->block];
	for (uint32_t m = mask; m; m &= m - 1)
		b->proxy_fences[w->in_block * 32 + (uint32_t)__builtin_ctz(m)]++;
}

/*
 * A bulk copy (the async proxy) by lane is about to write [saddr, saddr + bytes): a word some
 * thread last read through the generic proxy, with no fence.proxy.async by that thread since,
 * is a hazard.  Reported once per copy, at the copy and at the read.
 */
void flow_async_write(struct sim *s, struct warp *w, int lane, uint64_t saddr, uint32_t bytes)
{
	if (!s->checks)
		return;
	struct block *b = &s->blocks[w->block];
	uint32_t g = s->flow_grain;
	for (uint64_t a = saddr / g * g; a < saddr + bytes; a += g) {
		const struct flow_word *fw = &b->flow[a / g];
		if (!fw->rd_op || b->proxy_fences[fw->reader] != fw->rd_fence)
			continue;
		struct sim_report *r = s->rep;
		r->hazards++;
		char here[160], there[160], me[96];
		note(s, r->hazard_text, r->hazards,
		     "%s: %s at %s: bulk copy (async proxy) overwrites shared byte %llu that thread %u "
		     "read at %s without fence.proxy.async since (cycle %llu)",
		     who(s, w->block, w->in_block * 32 + (uint32_t)lane, me, sizeof me), op_table[s->k->code[simt_pc(w)].op].name,
		     where_line(s, (uint32_t)simt_pc(w), here, sizeof here), (unsigned long long)a, fw->reader,
		     where_line(s, fw->rd_op - 1, there, sizeof there), (unsigned long long)s->now);
		return;
	}
}

/* Whether writer tid knows the bulk store that last read fw has read it: its own wait, or the storer's before a __syncthreads. */
static bool bulk_done(const struct block *b, const struct flow_word *fw, uint32_t tid)
{
	uint32_t known = fw->bs_thread == tid ? bulk_read_known(b, tid) : b->bulk_vis[fw->bs_thread];
	return known > fw->bs_store;
}

/* One overwrite, one report: the rest of [a, end)'s pending bulk reads are forgotten with it. */
static void clear_bulk_reads(struct block *b, uint32_t g, uint64_t a, uint64_t end)
{
	for (; a < end; a += g)
		b->flow[a / g].bs_op = 0;
}

void flow_copy(struct sim *s, struct warp *w, int lane, uint64_t saddr, uint32_t bytes, int src_buf,
	       int64_t src_elem, uint64_t land, enum flow_kind kind, int obj, uint32_t seq)
{
	if (!s->checks)
		return;
	struct block *b = &s->blocks[w->block];
	uint32_t tid = w->in_block * 32 + (uint32_t)lane;
	uint32_t src_bytes = src_buf >= 0 ? s->k->bufs[src_buf].elem_bytes : 4, g = s->flow_grain;
	for (uint64_t a = saddr / g * g; a < saddr + bytes; a += g) {
		struct flow_word *fw = &b->flow[a / g];
		char me[96];
		if (fw->kind == FLOW_PIPE && kind == FLOW_PIPE && fw->seq != seq &&
		    !pipe_released(s, w->block, fw->obj, fw->writer, fw->seq)) {
			struct sim_report *r = s->rep;
			r->hazards++;
			note(s, r->hazard_text, r->hazards,
			     "%s: %s at %s overwrites shared byte %llu, still holding stage batch %u "
			     "that a consumer has not released (cycle %llu)",
			     who(s, w->block, tid, me, sizeof me), op_table[s->k->code[simt_pc(w)].op].name, where(s, w),
			     (unsigned long long)a, fw->seq, (unsigned long long)s->now);
		}
		if (fw->bs_op && !bulk_done(b, fw, tid)) {
			struct sim_report *r = s->rep;
			r->hazards++;
			char here[160], there[160];
			note(s, r->hazard_text, r->hazards,
			     "%s: %s at %s overwrites shared byte %llu that the bulk store by thread %u at %s "
			     "reads, before a bulk_wait_group with \"read\" covering it%s (cycle %llu)",
			     who(s, w->block, tid, me, sizeof me), op_table[s->k->code[simt_pc(w)].op].name,
			     where_line(s, (uint32_t)simt_pc(w), here, sizeof here), (unsigned long long)a, fw->bs_thread,
			     where_line(s, fw->bs_op - 1, there, sizeof there),
			     fw->bs_thread == tid ? "" : " and a __syncthreads after it", (unsigned long long)s->now);
			clear_bulk_reads(b, g, a, saddr + bytes);
		}
		*fw = (struct flow_word){
			/* a sub-word copy starts inside the word: the offset can be negative */
			.src = src_buf >= 0 ? src_elem + ((int64_t)a - (int64_t)saddr) / (int64_t)src_bytes : -1,
			.src_buf = (int16_t)src_buf,
			.kind = (uint8_t)kind,
			.obj = (int16_t)obj,
			.writer = (uint16_t)tid,
			.seq = seq,
			.epoch = kind == FLOW_GROUP ? seq : b->cpa[tid].commits,
			.cpi = b->flow_threads[tid].issued,
			.land = land,
			.wr_op = (uint32_t)simt_pc(w) + 1,
			.wr_fence = b->proxy_fences[tid],
			.wr_async = copy_bulk(&s->k->code[simt_pc(w)]),
		};
	}
	b->flow_threads[tid].issued++;
}

void flow_cp_arrive(struct sim *s, struct warp *w, uint32_t lanes, enum flow_kind kind, int obj, const uint32_t *seq)
{
	if (!s->checks)
		return;
	struct block *b = &s->blocks[w->block];
	for (uint32_t m = lanes; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		struct flow_thread *t = &b->flow_threads[w->in_block * 32 + (uint32_t)lane];
		t->ring[t->narrives++ % FLOW_ARRIVES] = (struct flow_arrive){t->issued, seq[lane], (int16_t)obj, (uint8_t)kind};
	}
}

/* Whether a cp.async.mbarrier.arrive of the writer after its copy cpi arrived in a phase tid has waited for. */
static bool arrive_visible(struct sim *s, const struct block *b, uint32_t block, uint32_t writer, uint32_t cpi,
			   uint32_t tid)
{
	const struct flow_thread *t = &b->flow_threads[writer];
	for (uint32_t j = t->narrives > FLOW_ARRIVES ? t->narrives - FLOW_ARRIVES : 0; j < t->narrives; j++) {
		const struct flow_arrive *a = &t->ring[j % FLOW_ARRIVES];
		if (a->cover > cpi && (a->kind == FLOW_PIPE ? pipe_visible(s, block, a->obj, writer, tid, a->seq)
							     : cbar_visible(s, block, (uint32_t)a->obj, tid, a->seq)))
			return true;
	}
	return false;
}

bool flow_plain_ordered(const struct block *b, uint32_t writer, uint32_t gen, uint64_t at, uint32_t tid)
{
	/* A barrier phase that completed after the store orders it before the reader's wait. */
	return tid == writer || b->sync_gen > gen || b->bar_sync[tid] > at ||
	       (warp_synced(b, writer, tid) && b->wsync_at[writer] >= at);
}

/*
 * Every cp.async falls in a cp.async group and is tracked by the thread's later
 * cp.async.mbarrier.arrives, whatever API issued it (PTX: cp.async.commit_group takes all the
 * thread's uncommitted copies, cp.async.mbarrier.arrive tracks all its copies so far), so a copy
 * made through one completion mechanism can be completed by another: a block pipeline's copy by a
 * __pipeline_commit and wait_prior, a primitive copy by a block pipeline's producer_commit.  The
 * group rule: group `epoch` (the writer's commits when it issued) waited for by the writer, then
 * ordered to others by a __syncthreads or a __syncwarp.
 */
static bool group_waited(const struct block *b, uint32_t writer, uint32_t epoch, uint32_t tid)
{
	return (tid == writer && b->cpa[tid].waited > epoch) || b->vis[writer] > epoch ||
	       (warp_synced(b, writer, tid) && b->wsync_vis[writer] > epoch);
}

static bool visible(struct sim *s, const struct block *b, const struct flow_word *fw, uint32_t block, uint32_t tid)
{
	switch (fw->kind) {
	case FLOW_PIPE:
		return pipe_visible(s, block, fw->obj, fw->writer, tid, fw->seq) || group_waited(b, fw->writer, fw->epoch, tid) ||
		       arrive_visible(s, b, block, fw->writer, fw->cpi, tid);
	case FLOW_GROUP:
		return group_waited(b, fw->writer, fw->seq, tid) ||
		       (b->rel_vis[fw->writer] > fw->seq && b->bar_sync[tid] > b->rel_at[fw->writer]) ||
		       arrive_visible(s, b, block, fw->writer, fw->cpi, tid);
	case FLOW_BAR:
		return cbar_visible(s, block, (uint32_t)fw->obj, tid, fw->seq) || group_waited(b, fw->writer, fw->epoch, tid) ||
		       arrive_visible(s, b, block, fw->writer, fw->cpi, tid);
	case FLOW_PLAIN: return flow_plain_ordered(b, fw->writer, fw->seq, fw->land, tid);
	default: return false;
	}
}

/* Why reader tid may not read fw now ("that nothing has written", ...); NULL when it may. */
static const char *unseen(struct sim *s, const struct block *b, const struct flow_word *fw, uint32_t block, uint32_t tid,
			  uint64_t now, char *buf, size_t n)
{
	if (fw->kind == FLOW_NONE)
		return "that nothing has written";
	if (fw->land > now) {
		snprintf(buf, n, "whose copy by thread %u lands only at cycle %llu", fw->writer, (unsigned long long)fw->land);
		return buf;
	}
	if (!visible(s, b, fw, block, tid)) {
		snprintf(buf, n, "copied by thread %u, without waiting for it or a barrier after its wait", fw->writer);
		return buf;
	}
	return NULL;
}

/*
 * The bulk store's read of its source: a word it may not read yet (as any
 * read), or one a thread wrote through the generic proxy with no
 * fence.proxy.async by that thread since (the PTX memory model orders
 * generic writes before async-proxy reads only through the fence), is a
 * hazard, reported once per store.  Every word then remembers the store,
 * which an overwrite must wait for (flow_copy).
 */
void flow_bulk_read(struct sim *s, struct warp *w, int lane, uint64_t saddr, uint32_t bytes, uint32_t store)
{
	if (!s->checks)
		return;
	struct block *b = &s->blocks[w->block];
	uint32_t tid = w->in_block * 32 + (uint32_t)lane, g = s->flow_grain;
	bool told = false;
	for (uint64_t a = saddr / g * g; a < saddr + bytes; a += g) {
		struct flow_word *fw = &b->flow[a / g];
		char buf[96], here[160], there[160], me[96];
		const char *why = told ? NULL : unseen(s, b, fw, w->block, tid, s->now, buf, sizeof buf);
		if (why) {
			told = true;
			struct sim_report *r = s->rep;
			r->hazards++;
			note(s, r->hazard_text, r->hazards, "%s: %s at %s reads shared byte %llu %s (cycle %llu)",
			     who(s, w->block, tid, me, sizeof me), op_table[s->k->code[simt_pc(w)].op].name,
			     where_line(s, (uint32_t)simt_pc(w), here, sizeof here), (unsigned long long)a, why,
			     (unsigned long long)s->now);
		} else if (!told && fw->wr_op && !fw->wr_async && b->proxy_fences[fw->writer] == fw->wr_fence) {
			told = true;
			struct sim_report *r = s->rep;
			r->hazards++;
			note(s, r->hazard_text, r->hazards,
			     "%s: %s at %s: bulk store (async proxy) reads shared byte %llu that thread %u "
			     "wrote through the generic proxy at %s without fence.proxy.async since (cycle %llu)",
			     who(s, w->block, tid, me, sizeof me), op_table[s->k->code[simt_pc(w)].op].name,
			     where_line(s, (uint32_t)simt_pc(w), here, sizeof here), (unsigned long long)a, fw->writer,
			     where_line(s, fw->wr_op - 1, there, sizeof there), (unsigned long long)s->now);
		}
		fw->bs_op = (uint32_t)simt_pc(w) + 1;
		fw->bs_thread = (uint16_t)tid;
		fw->bs_store = store;
	}
}

const struct flow_word *flow_read(struct sim *s, struct warp *w, int lane, uint64_t saddr, uint64_t now)
{
	if (!s->checks)
		return NULL;
	struct block *b = &s->blocks[w->block];
	struct flow_word *fw = &b->flow[saddr / s->flow_grain];
	uint32_t tid = w->in_block * 32 + (uint32_t)lane;
	/* a generic-proxy read: what a later bulk copy into this word must be fenced from */
	fw->rd_op = (uint32_t)simt_pc(w) + 1;
	fw->reader = (uint16_t)tid;
	fw->rd_fence = b->proxy_fences[tid];
	char buf[96], me[96];
	const char *why = unseen(s, b, fw, w->block, tid, now, buf, sizeof buf);
	if (why) {
		struct sim_report *r = s->rep;
		r->hazards++;
		note(s, r->hazard_text, r->hazards, "%s: %s at %s reads shared byte %llu %s (cycle %llu)",
		     who(s, w->block, tid, me, sizeof me), op_table[s->k->code[simt_pc(w)].op].name, where(s, w), (unsigned long long)saddr,
		     why, (unsigned long long)now);
	}
	return fw;
}

/*
 * compute's input word fw, read at the thread's element elem, came from the
 * batch it is meant to: from FROM_OUT, the documented examples' identity map
 * (its source less elem is out's index want_index, whatever the buffers);
 * else from want_buf[want_index + elem], as the compute's "from" says.
 */
void flow_provenance(struct sim *s, struct warp *w, int lane, const struct flow_word *fw, int64_t elem, int from,
		     int want_buf, int64_t want_index)
{
	if (!fw || fw->src_buf < 0)
		return;
	int64_t batch = fw->src - elem;
	if (batch == want_index && (from == FROM_OUT || fw->src_buf == want_buf))
		return;
	struct sim_report *r = s->rep;
	char me[96];
	r->provenance_mismatches++;
	if (from == FROM_OUT)
		note(s, r->provenance_text, r->provenance_mismatches,
		     "%s: compute at %s reads the batch at %s[%lld] but writes %s[%lld]",
		     who(s, w->block, w->in_block * 32 + (uint32_t)lane, me, sizeof me), where(s, w),
		     s->k->bufs[fw->src_buf].name, (long long)batch, s->k->bufs[want_buf].name, (long long)want_index);
	else
		note(s, r->provenance_text, r->provenance_mismatches,
		     "%s: compute at %s reads a word copied from %s[%lld] where its from says %s[%lld]",
		     who(s, w->block, w->in_block * 32 + (uint32_t)lane, me, sizeof me), where(s, w),
		     s->k->bufs[fw->src_buf].name, (long long)fw->src, s->k->bufs[want_buf].name,
		     (long long)(want_index + elem));
}

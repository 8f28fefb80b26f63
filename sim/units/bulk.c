#include "bulk.h"

#include <stdlib.h>

#include "simint.h"

/* The lane's bulk state, made at its first bulk op (most threads never issue one); NULL when out of memory. */
static struct bulk_thread *thread_of(struct sim *s, const struct warp *w, int lane)
{
	struct block *b = &s->blocks[w->block];
	uint32_t tid = w->in_block * 32 + (uint32_t)lane;
	if (!b->bulk[tid])
		b->bulk[tid] = calloc(1, sizeof *b->bulk[tid]);
	if (!b->bulk[tid])
		sim_fail(s, DIAG_LIMIT, w, "out of memory for thread %u's bulk groups", tid);
	return b->bulk[tid];
}

int bulk_setup(struct sim *s, struct block *b)
{
	b->bulk = calloc((size_t)s->launch.block_size, sizeof *b->bulk);
	return b->bulk ? 0 : -1;
}

void bulk_free(struct sim *s, struct block *b)
{
	for (int64_t t = 0; b->bulk && t < s->launch.block_size; t++)
		free(b->bulk[t]);
	free(b->bulk);
	b->bulk = NULL;
}

uint32_t bulk_read_known(const struct block *b, uint32_t tid) { return b->bulk[tid] ? b->bulk[tid]->read_known : 0; }

/*
 * Each active lane's cp.async.bulk.global.shared::cta.bulk_group, its
 * operands checked as a bulk load's (copy_bulk_ok).  The bulk engine reads the
 * source through its shared-memory port (as a bulk load fills through it),
 * then writes global memory through the L2 queue; DRAM drains the lines as
 * it does any store's.
 */
void bulk_store(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	const struct buffer *dst = &s->k->bufs[in->dst.buf], *src = &s->k->bufs[in->src.buf];
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		uint32_t tid = w->in_block * 32 + (uint32_t)lane;
		int64_t bytes = simt_eval(s, w, lane, &in->e[0]);
		int64_t di = simt_eval(s, w, lane, &in->dst.index), si = simt_eval(s, w, lane, &in->src.index);
		if (!copy_bulk_ok(s, w, "bulk store", tid, bytes, dst, di, src, si))
			return;
		uint64_t sa = src->base + (uint64_t)si * src->elem_bytes, ga = dst->base + (uint64_t)di * dst->elem_bytes;
		struct bulk_thread *t = thread_of(s, w, lane);
		if (!t)
			return;
		uint64_t read = gmem_fill(w, s->m, now + (uint64_t)s->m->bulk_extra_latency, (uint32_t)bytes) +
				(uint64_t)bytes / 128;
		smem_port_fill(s, read - (uint64_t)bytes / 128, (uint32_t)((uint64_t)bytes / 128));
		uint32_t nsec = (uint32_t)((ga + (uint64_t)bytes - 1) / 32 - ga / 32 + 1);
		uint64_t written = gmem_write_bulk(s, read, nsec);
		if (read > t->open_read)
			t->open_read = read;
		if (written > t->open_write)
			t->open_write = written;
		flow_bulk_read(s, w, lane, sa, (uint32_t)bytes, t->stores);
		t->stores++;
		s->rep->bulk_copies++;
		s->rep->bulk_bytes += (uint64_t)bytes;
	}
}

/* cp.async.bulk.commit_group by the active lanes: each one's open group becomes its newest (an empty one too). */
void bulk_commit(struct sim *s, struct warp *w)
{
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		struct bulk_thread *t = thread_of(s, w, __builtin_ctz(m));
		if (!t)
			return;
		uint32_t g = t->commits++, i = g % BULK_RING, prev = (g + BULK_RING - 1) % BULK_RING;
		uint64_t rd = t->open_read, wr = t->open_write;
		if (g > 0 && t->read_done[prev] > rd)
			rd = t->read_done[prev];
		if (g > 0 && t->write_done[prev] > wr)
			wr = t->write_done[prev];
		t->read_done[i] = rd;
		t->write_done[i] = wr;
		t->upto[i] = t->stores;
		t->open_read = t->open_write = 0;
	}
}

/*
 * cp.async.bulk.wait_group[.read] N by the active lanes: the warp goes on
 * when every lane's groups but its newest N are complete (read: have read
 * their source).  Then each lane knows those stores have read their
 * source, which the dataflow checks hold an overwrite of it against.
 */
bool bulk_wait(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	uint32_t n = (uint32_t)in->e[0].value;
	struct simt_entry *e = simt_cur(w);
	uint64_t release = now;
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		struct bulk_thread *t = thread_of(s, w, __builtin_ctz(m));
		if (!t)
			return true;
		if (t->commits <= n)
			continue;
		uint32_t i = (t->commits - 1 - n) % BULK_RING;
		uint64_t done = in->read_only ? t->read_done[i] : t->write_done[i];
		if (done > release)
			release = done;
	}
	if (e->wait_start == NEVER && release > now) {
		e->wait_start = now;
		warp_set_ready(s, w, release);
		w->cause = STALL_CONSUMER_WAIT;
		return false; /* issue again at release, when the groups are complete */
	}
	for (uint32_t m = simt_mask(w); m; m &= m - 1) {
		struct bulk_thread *t = s->blocks[w->block].bulk[w->in_block * 32 + (uint32_t)__builtin_ctz(m)];
		if (t->commits > n && t->upto[(t->commits - 1 - n) % BULK_RING] > t->read_known)
			t->read_known = t->upto[(t->commits - 1 - n) % BULK_RING];
	}
	return true;
}

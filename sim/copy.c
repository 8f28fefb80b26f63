/*
 * copy: memcpy_async through the LDGSTS copy engine.
 *
 * A group copy is split among the group's threads as libcudacxx does:
 * chunks of c = min(align, 16) bytes, thread r copying offsets r*c,
 * r*c + |g|*c, ... below bytes.  Each chunk is one cp.async by that thread;
 * one warp-instruction issues the chunks of all its active lanes at the
 * same round.  A chunk reads global memory (sectors, latency, bandwidth),
 * crosses the engine's fill port into shared memory (bank wavefronts) and
 * lands; its landing cycle is known when it issues, and the pipeline the
 * copy belongs to records it in the thread's open batch.
 */
#include "smem.h"
#include "simint.h"

uint64_t copy_latest_land(const struct sim *s) { return s->mem.copies_land; }

/* Chunks thread r of a group of n threads copies out of bytes, chunk size c. */
static int64_t chunks_of(int64_t r, int64_t n, int64_t c, int64_t bytes)
{
	int64_t first = r * c;
	if (first >= bytes)
		return 0;
	return (bytes - first + n * c - 1) / (n * c);
}

bool copy_issue(struct sim *s, struct warp *w, const struct insn *in, uint64_t now)
{
	const struct machine *m = s->m;
	if ((int64_t)simt_cur(w)->op_step < m->copy_setup_instructions) {
		simt_cur(w)->op_step++;
		return false;
	}
	uint32_t mask = simt_mask(w);
	uint32_t round = simt_cur(w)->op_step - (uint32_t)m->copy_setup_instructions;
	int64_t group = in->group == GROUP_BLOCK ? s->launch.block_size : 1;
	int64_t c = in->align < 16 ? in->align : 16;
	const struct buffer *dst = &s->k->bufs[in->dst.buf], *src = &s->k->bufs[in->src.buf];

	uint64_t gaddr[32], saddr[32];
	uint32_t lanes = 0;
	int64_t rounds = 0;
	for (uint32_t mm = mask; mm; mm &= mm - 1) {
		int lane = __builtin_ctz(mm);
		int64_t r = in->group == GROUP_BLOCK ? (int64_t)(w->in_block * 32 + (uint32_t)lane) : 0;
		int64_t bytes = simt_eval(s, w, lane, &in->e[0]);
		if (bytes < 0) {
			sim_fail(s, DIAG_INPUT, w, "memcpy_async of %lld bytes", (long long)bytes);
			return true;
		}
		int64_t n = chunks_of(r, group, c, bytes);
		if (n > rounds)
			rounds = n;
		if ((int64_t)round >= n)
			continue;
		int64_t off = r * c + (int64_t)round * group * c;
		int64_t di = simt_eval(s, w, lane, &in->dst.index), si = simt_eval(s, w, lane, &in->src.index);
		uint64_t dbyte = (uint64_t)di * dst->elem_bytes + (uint64_t)off;
		uint64_t sbyte = (uint64_t)si * src->elem_bytes + (uint64_t)off;
		if (di < 0 || si < 0 || dbyte + (uint64_t)c > dst->elems * dst->elem_bytes ||
		    sbyte + (uint64_t)c > src->elems * src->elem_bytes) {
			sim_fail(s, DIAG_INPUT, w,
				 "thread %u copies %lld bytes from %s[%lld] + %lld to %s[%lld] + %lld, outside the buffers",
				 w->in_block * 32 + (unsigned)lane, (long long)c, src->name, (long long)si,
				 (long long)off, dst->name, (long long)di, (long long)off);
			return true;
		}
		gaddr[lane] = src->base + sbyte;
		saddr[lane] = dst->base + dbyte;
		lanes |= 1u << lane;
	}
	if (lanes) {
		uint64_t sectors[64];
		uint32_t nsec = gmem_sectors(gaddr, lanes, (uint32_t)c, sectors);
		uint64_t arrive = gmem_read(s, now, sectors, nsec) + (uint64_t)m->cp_async_extra_latency;
		uint32_t bytes = (uint32_t)__builtin_popcount(lanes) * (uint32_t)c;
		struct smem_cost sc = smem_access_cost(saddr, lanes, (uint32_t)(c < 4 ? 4 : c));
		s->rep->smem_wavefronts += sc.wavefronts;
		s->rep->bank_conflicts += sc.wavefronts > (uint32_t)((bytes + 127) / 128)
						  ? sc.wavefronts - (uint32_t)((bytes + 127) / 128)
						  : 0;
		uint64_t land = gmem_fill(s, arrive, bytes) + (uint64_t)sc.wavefronts * (uint64_t)m->smem_wavefront_cycles;
		if (land > s->mem.copies_land)
			s->mem.copies_land = land;
		stats_copy(s, (uint32_t)__builtin_popcount(lanes), (uint32_t)c, now, land);
		if (c < 4) {
			/*
			 * Under 4-byte alignment libcudacxx gives up on cp.async: the
			 * threads load into registers and store, waiting for memory.
			 */
			s->rep->sync_copies += (uint32_t)__builtin_popcount(lanes);
			w->ready_at = land;
			w->cause = STALL_MEMORY;
		}
		for (uint32_t mm = lanes; mm; mm &= mm - 1)
			pipe_copy_issued(s, w, in->obj, __builtin_ctz(mm), now, land);
	}
	simt_cur(w)->op_step++;
	return (int64_t)round + 1 >= rounds;
}

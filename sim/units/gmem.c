/*
 * gmem: global memory seen from one SM.
 *
 * Lanes coalesce into 32-byte sectors.  Each sector is an L2 hit with the
 * configured probability (decided by a hash of its address, so runs are
 * deterministic) or goes to DRAM, unless a read of this SM brought it from
 * DRAM lately: then it is in L2.  A miss brings in the whole aligned block
 * of l2_fetch_bytes around its sector (the H100 fetches 64 bytes:
 * fetch_granularity.csv), which is what DRAM serves and what a later read of
 * the block's other sector finds.  L2 bandwidth is a queue: a request
 * finishes at max(now + latency, previous finish + bytes / rate), in 1/1024
 * cycles so fractional rates do not drift.  DRAM's latency grows with the
 * lines the SM has in flight from it, and DRAM serves no faster than the
 * SM's share (dram_read).
 */
#include <stdlib.h>

#include "simint.h"

#define FP 1024u

uint32_t gmem_sectors_span(uint64_t lo, uint64_t end, uint64_t out[64])
{
	uint32_t n = 0;
	for (uint64_t sec = lo / 32, last = (end - 1) / 32; sec <= last && n < 64; sec++)
		out[n++] = sec;
	return n;
}

uint32_t gmem_sectors(const uint64_t addr[32], uint32_t mask, uint32_t width, uint64_t out[64])
{
	uint32_t n = 0;
	/*
	 * A run of lanes at consecutive addresses (width apart) covers one range
	 * of sectors, which the search below would list in increasing order.
	 */
	if (mask && width && ((mask >> __builtin_ctz(mask)) & ((mask >> __builtin_ctz(mask)) + 1)) == 0) {
		int l0 = __builtin_ctz(mask), l1 = 31 - __builtin_clz(mask);
		bool run = true; /* every lane tested, no early exit: a loop the compiler vectorises */
		for (int l = l0 + 1; l <= l1; l++)
			run &= addr[l] == addr[l0] + (uint64_t)(l - l0) * width;
		if (run)
			return gmem_sectors_span(addr[l0], addr[l1] + width, out);
	}
	uint64_t added = UINT64_MAX; /* out[n - 1]; no sector is numbered this */
	for (uint32_t m = mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		uint64_t first = addr[lane] / 32, last = (addr[lane] + width - 1) / 32;
		/* Neighbouring lanes mostly share the sector just added. */
		if (first == last && first == added)
			continue;
		for (uint64_t sec = first; sec <= last; sec++) {
			if (sec == added)
				continue;
			bool seen = false;
			for (uint32_t i = 0; i < n; i++)
				if (out[i] == sec) {
					seen = true;
					break;
				}
			if (!seen && n < 64)
				added = out[n++] = sec;
		}
	}
	return n;
}

void gmem_through_l1(struct sim *s, const uint64_t *sectors, uint32_t nsectors)
{
	uint64_t last = UINT64_MAX;
	for (uint32_t i = 0; i < nsectors; i++) {
		uint64_t line = sectors[i] / 4; /* four 32-byte sectors to a 128-byte line */
		if (line != last)
			l1_stream(&s->l1);
		last = line;
	}
}

#define L2_LOST_STRETCH_BYTES 65536

/*
 * A warmed L2 ("the input is in L2": l2_hit_fraction) keeps a kernel's data
 * only as far as it holds it: from l2_keep_mb of global buffers (every one,
 * input and output, as the warm-up launch left them) a growing share is gone
 * again, all of it by l2_lose_mb (tests/hw/l2_capacity.cu: a streaming
 * kernel's second launch over 8-96 MB).
 */
void gmem_setup(struct sim *s)
{
	uint64_t bytes = 0;
	for (int i = 0; i < s->k->nbufs; i++)
		if (s->k->bufs[i].space == SPACE_GLOBAL)
			bytes += s->k->bufs[i].elems * s->k->bufs[i].elem_bytes;
	double mb = (double)bytes / 1e6, keep = s->m->l2_keep_mb, lose = s->m->l2_lose_mb;
	double lost = mb <= keep ? 0.0 : mb >= lose ? 1.0 : (mb - keep) / (lose - keep);
	s->mem.l2_kept = 1.0 - lost;
	s->mem.l2_written_back = bytes && mb > keep ? 1.0 - keep / mb : 0.0;
	s->rep->global_bytes = bytes;
	s->rep->l2_warm = s->m->l2_hit_fraction;
	s->rep->l2_hit_fraction = s->m->l2_hit_fraction * s->mem.l2_kept;
}

/* A deterministic draw in [0, 1e6) for key. */
static uint64_t draw(uint64_t key)
{
	uint64_t h = key * 0x9E3779B97F4A7C15ull;
	h ^= h >> 29;
	return h % 1000000;
}

/*
 * What the L2 lost of a kernel's data went as the warm-up touched it, in
 * stretches (l2_lost_stretch_bytes), not line by line: a block's batch then
 * misses whole or not at all, as the H100's one-stage pipelines at 34.6 MB
 * show (a stall of ~15% of a DRAM trip a batch where a tenth of the lines,
 * scattered, would stall nearly every batch).
 */
static bool l2_hit(const struct sim *s, uint64_t sector)
{
	if (s->m->l2_hit_fraction <= 0)
		return false;
	if (s->mem.l2_kept < 1.0 && (double)draw(sector * 32 / L2_LOST_STRETCH_BYTES + 0x5bd1e995) >= s->mem.l2_kept * 1e6)
		return false;
	return (double)draw(sector) < s->m->l2_hit_fraction * 1e6;
}

/*
 * A sector a read of this SM fetched from DRAM lately is in L2 for the next
 * read of it (two half-warps' copies of one line, a diverged warp's groups
 * one after another), once it has arrived there: a read that comes sooner
 * waits for it (the L2 merges the two).  A direct-mapped table of the last
 * FETCHED_SLOTS sectors fetched and when each arrives, by a hash of the sector.
 */
#define FETCHED_SLOTS (1u << 16)

static struct fetched *fetched_entry(const struct sim *s, uint64_t sector)
{
	if (!s->mem.fetched)
		return NULL;
	return &s->mem.fetched[(uint32_t)((sector * 0x9E3779B97F4A7C15ull) >> 48) & (FETCHED_SLOTS - 1)];
}

/* Whether the sector is in L2 (or on its way there: *ready, else 0). */
static bool l2_holds(const struct sim *s, uint64_t sector, uint64_t *ready)
{
	*ready = 0;
	if (l2_hit(s, sector))
		return true;
	const struct fetched *f = fetched_entry(s, sector);
	if (f && f->sector == sector + 1) {
		*ready = f->ready;
		return true;
	}
	return false;
}

/*
 * A read's sectors: how many the L2 holds, and the latest arrival among those
 * still on their way.  Where no sector hits a warmed L2 (l2_hit_fraction 0),
 * only the fetched table is looked at.
 */
struct l2_view {
	uint32_t hits;
	uint32_t hit_lines; /* the 128-byte lines those hits fall in */
	uint64_t ready;
	uint64_t missed; /* bit i: sectors[i] is neither (for the first 64: a request's most, gmem_sectors) */
};

static struct l2_view l2_look(const struct sim *s, const uint64_t *sectors, uint32_t nsectors)
{
	struct l2_view v = {0, 0, 0, 0};
	bool warm = !(s->m->l2_hit_fraction <= 0);
	const struct fetched *table = s->mem.fetched;
	uint64_t last_line = UINT64_MAX;
	bool ascending = true; /* the hits so far rose sector by sector: a line seen is the last one */
	for (uint32_t i = 0; i < nsectors; i++) {
		uint64_t sector = sectors[i];
		bool hit = warm && l2_hit(s, sector);
		if (!hit) {
			const struct fetched *f = table ? fetched_entry(s, sector) : NULL;
			if (f && f->sector == sector + 1) {
				hit = true;
				v.ready = f->ready > v.ready ? f->ready : v.ready;
			} else if (i < 64) {
				v.missed |= 1ull << i;
			}
		}
		if (!hit)
			continue;
		v.hits++;
		uint64_t line = sector / 4;
		if (line == last_line)
			continue;
		bool seen = false;
		if (last_line != UINT64_MAX && line < last_line)
			ascending = false;
		for (uint32_t j = 0; !ascending && j < i && !seen; j++) /* lanes out of address order: look back */
			seen = sectors[j] / 4 == line && !(j < 64 && v.missed >> j & 1);
		v.hit_lines += !seen;
		last_line = line;
	}
	return v;
}

/* Sectors to the block the L2 fetches for a miss (l2_fetch_bytes: 32, 64 or 128, machine.c). */
static uint64_t fetch_sectors(const struct sim *s)
{
	return (uint64_t)s->m->l2_fetch_bytes / 32;
}

/* Remembers the sectors of a read the L2 did not hold (v), and the rest of their fetch blocks, as fetched, arriving at ready (not when memory runs out). */
static void l2_fetched(struct sim *s, const uint64_t *sectors, uint32_t nsectors, struct l2_view v, uint64_t ready)
{
	if (!s->mem.fetched && !(s->mem.fetched = calloc(FETCHED_SLOTS, sizeof *s->mem.fetched)))
		return;
	uint64_t span = fetch_sectors(s);
	for (uint64_t m = v.missed; m; m &= m - 1) {
		uint64_t sector = sectors[__builtin_ctzll(m)];
		*fetched_entry(s, sector) = (struct fetched){sector + 1, ready};
		for (uint64_t first = sector / span * span, mate = first; mate < first + span; mate++) {
			uint64_t was;
			if (mate != sector && !l2_holds(s, mate, &was))
				*fetched_entry(s, mate) = (struct fetched){mate + 1, ready};
		}
	}
	for (uint32_t i = 64; i < nsectors; i++) { /* beyond the mask: looked at again */
		uint64_t was;
		if (!l2_holds(s, sectors[i], &was))
			*fetched_entry(s, sectors[i]) = (struct fetched){sectors[i] + 1, ready};
	}
}

/* The bytes DRAM serves for a read's missed sectors (bit i of missed: sectors[i]): a fetch block each, once. */
static uint64_t miss_bytes(const struct sim *s, const uint64_t *sectors, uint64_t missed)
{
	uint64_t span = fetch_sectors(s), blocks = 0, prev = 0;
	bool ascending = false; /* the missed sectors so far rose one after another: the last holds any earlier block */
	for (uint64_t m = missed; m; m &= m - 1) {
		int i = __builtin_ctzll(m);
		uint64_t block = sectors[i] / span, earlier = missed & ((1ull << i) - 1);
		bool counted = false;
		if (ascending && sectors[i] > prev) {
			counted = prev / span == block;
		} else {
			/* lanes list their sectors in the order they first touch them, not always in address order */
			for (uint64_t e = earlier; e && !counted && span > 1; e &= e - 1)
				counted = sectors[__builtin_ctzll(e)] / span == block;
			ascending = !earlier;
		}
		prev = sectors[i];
		blocks += !counted;
	}
	return 32ull * span * blocks;
}

static uint64_t queue(uint64_t *free_fp, uint64_t now, uint64_t latency, uint64_t bytes, double bytes_per_cycle)
{
	uint64_t ready = (now + latency) * FP;
	uint64_t busy = *free_fp + (uint64_t)((double)bytes * FP / bytes_per_cycle + 0.5);
	uint64_t finish = ready > busy ? ready : busy;
	*free_fp = finish;
	return (finish + FP - 1) / FP;
}

/* Takes the earliest read off the heap if it has landed by now. */
static bool flights_pop(struct flights *f, uint64_t now, struct flight *landed)
{
	if (!f->n || f->heap[0].land > now)
		return false;
	*landed = f->heap[0];
	struct flight last = f->heap[--f->n];
	size_t i = 0;
	for (;;) { /* sift the last entry down from the root */
		size_t c = 2 * i + 1;
		if (c >= f->n)
			break;
		if (c + 1 < f->n && f->heap[c + 1].land < f->heap[c].land)
			c++;
		if (last.land <= f->heap[c].land)
			break;
		f->heap[i] = f->heap[c];
		i = c;
	}
	if (f->n)
		f->heap[i] = last;
	return true;
}

/* Remembers a read in flight until e.land; false (untracked) when memory runs out. */
static bool flights_push(struct flights *f, struct flight e)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 256;
		struct flight *h = realloc(f->heap, cap * sizeof *h);
		if (!h)
			return false;
		f->heap = h;
		f->cap = cap;
	}
	size_t i = f->n++;
	while (i > 0 && f->heap[(i - 1) / 2].land > e.land) {
		f->heap[i] = f->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	f->heap[i] = e;
	return true;
}

/*
 * DRAM's latency under load (tests/hw/inflight_latency.cu lines mode,
 * inflight_lines.csv): on every SM a copy's latency rises with the lines the
 * SM has in flight from DRAM, about 9 cycles a 128-byte line up to ~256
 * lines whoever issued them, and not at all on one SM alone: the load is the
 * whole GPU's.  Every SM runs this SM's kernel, so this SM's lines in flight
 * stand for DRAM's load: a read waits dram_latency plus dram_line_latency a
 * line in flight when it issues (the reads before it not yet landed,
 * counted in sectors).  Reads and write-backs together are served no faster
 * than the SM's share (dram_bytes_per_cycle), which binds past ~256 lines.
 * Returns when the read's bytes are back.
 */
static uint64_t dram_read(struct sim *s, uint64_t now, uint64_t bytes)
{
	struct gmem *g = &s->mem;
	struct flight landed;
	while (flights_pop(&g->dram_reads, now, &landed))
		g->dram_sectors -= landed.count;
	uint64_t wait = (uint64_t)(s->m->dram_line_latency * (double)g->dram_sectors / 4.0 + 0.5);
	uint64_t done = queue(&g->dram_share_free, now, (uint64_t)s->m->dram_latency + wait, bytes,
			      s->m->dram_bytes_per_cycle);
	uint32_t sectors = (uint32_t)(bytes / 32);
	if (flights_push(&g->dram_reads, (struct flight){.land = done, .count = sectors}))
		g->dram_sectors += sectors;
	return done;
}

/*
 * What hits of these sectors in these 128-byte lines take of the L2 path to the SM, in bytes at
 * its rate: their sectors' bytes, but no less than l2_line_cycles for each line asked.  The path
 * serves requests, a line each: a divergent warp's group of 4 lanes 128 bytes apart, a sector on
 * each of 4 lines, holds it about as long as 4 whole lines (ldgsts_spread.csv, calibrate).
 */
static uint64_t l2_path_bytes(const struct sim *s, uint32_t hits, uint32_t lines)
{
	uint64_t bytes = 32ull * hits;
	uint64_t floor = (uint64_t)(s->m->l2_line_cycles * s->m->l2_bytes_per_cycle * (double)lines + 0.5);
	return bytes > floor ? bytes : floor;
}

/* Hits (l2 bytes on the path) go through the L2 queue, misses (dram bytes of fetch blocks) to DRAM at its latency under load; done when both have. */
static uint64_t read_split(struct sim *s, uint64_t now, uint64_t l2, uint64_t dram)
{
	uint64_t done = now;
	if (l2) {
		uint64_t t = queue(&s->mem.l2_free, now, (uint64_t)s->m->l2_latency, l2, s->m->l2_bytes_per_cycle);
		done = t > done ? t : done;
	}
	if (dram) {
		uint64_t t = dram_read(s, now, dram);
		done = t > done ? t : done;
		s->rep->dram_bytes += dram;
		if (s->trace)
			trace_count(&s->trace->dram, now, (int64_t)dram);
	}
	return done;
}

/* gmem_read of sectors the L2 held as v says. */
static uint64_t read_seen(struct sim *s, uint64_t now, const uint64_t *sectors, uint32_t nsectors, struct l2_view v)
{
	uint64_t done = read_split(s, now, l2_path_bytes(s, v.hits, v.hit_lines), miss_bytes(s, sectors, v.missed));
	if (v.hits < nsectors)
		l2_fetched(s, sectors, nsectors, v, done);
	return done > v.ready ? done : v.ready;
}

uint64_t gmem_read(struct sim *s, uint64_t now, const uint64_t *sectors, uint32_t nsectors)
{
	return read_seen(s, now, sectors, nsectors, l2_look(s, sectors, nsectors));
}

/* Forgets the DRAM lines through L1 that have landed by now. */
static void l1_misses_land(struct sim *s, uint64_t now)
{
	struct flight landed;
	while (flights_pop(&s->mem.l1_misses, now, &landed)) {
		s->warps[landed.warp].l1_dram_lines -= landed.count;
		s->mem.l1_dram_lines -= landed.count;
	}
}

/* Remembers lines of warp w in flight until land; untracked when memory runs out (they then add no delay). */
static void l1_misses_add(struct sim *s, const struct warp *w, uint64_t land, uint32_t lines)
{
	if (!flights_push(&s->mem.l1_misses, (struct flight){.land = land, .warp = w->id, .count = lines}))
		return;
	s->warps[w->id].l1_dram_lines += lines;
	s->mem.l1_dram_lines += lines;
}

/* A read through L1 of sectors that hit L2 (l2: their bytes on the path) and misses that do not; key draws its DRAM lines' spread. */
static uint64_t read_through_l1(struct sim *s, const struct warp *w, uint64_t now, uint64_t l2, uint32_t misses,
				uint64_t dram, uint64_t key, struct gmem_spread *spread)
{
	if (spread)
		*spread = (struct gmem_spread){0, 0};
	if (!misses)
		return read_split(s, now, l2, 0);
	l1_misses_land(s, now);
	uint64_t others = s->mem.l1_dram_lines - w->l1_dram_lines;
	/*
	 * Lines from DRAM land spread around their median, the wider the more are in flight
	 * (inflight_spread.csv): a warp waiting for its own line sees the median, a barrier over
	 * the block's lines the slowest.  One late line holds up none of the others (the warp's
	 * fill queue takes its copies in issue order: spread).
	 */
	uint64_t done = read_split(s, now, l2, dram);
	double u = (double)draw(key ^ now * 0x2545F4914F6CDD1Dull) / 500000.0 - 1.0; /* in [-1, 1) */
	int64_t jitter = (int64_t)(((double)s->m->dram_spread + s->m->dram_spread_per_line * (double)others) * u);
	int64_t landed = (int64_t)done + jitter, soonest = (int64_t)now + s->m->l2_latency; /* never before an L2 hit */
	landed = landed > soonest ? landed : soonest;
	if (spread) /* the same line on an idle SM draws dram_spread alone */
		*spread = (struct gmem_spread){landed - (int64_t)done, (int64_t)((double)s->m->dram_spread * u)};
	done = (uint64_t)landed;
	l1_misses_add(s, w, done, (misses + 3) / 4); /* four 32-byte sectors to a line */
	return done;
}

/* gmem_read_cached of sectors the L2 held as v says (gmem_through_l1 does not change it). */
static uint64_t read_cached_seen(struct sim *s, const struct warp *w, uint64_t now, const uint64_t *sectors,
				 uint32_t nsectors, struct gmem_spread *spread, struct l2_view v)
{
	gmem_through_l1(s, sectors, nsectors);
	uint64_t done = read_through_l1(s, w, now, l2_path_bytes(s, v.hits, v.hit_lines), nsectors - v.hits, miss_bytes(s, sectors, v.missed), sectors[0],
					spread);
	if (v.hits < nsectors)
		l2_fetched(s, sectors, nsectors, v, done);
	return done > v.ready ? done : v.ready;
}

uint64_t gmem_read_cached(struct sim *s, const struct warp *w, uint64_t now, const uint64_t *sectors, uint32_t nsectors,
			  struct gmem_spread *spread)
{
	return read_cached_seen(s, w, now, sectors, nsectors, spread, l2_look(s, sectors, nsectors));
}

/*
 * A local line L1 lost comes back the way the kernel's global data does: where
 * its input streams from DRAM, so does the line (local_latency.csv: such misses
 * take 640-1620 cycles, a DRAM read's time in that traffic, against 335 where the
 * input sits in L2).  line names it for the L2 draw.
 */
uint64_t gmem_read_local(struct sim *s, const struct warp *w, uint64_t now, uint64_t line)
{
	uint32_t hits = 0;
	uint64_t sectors[4], missed = 0;
	for (uint32_t i = 0; i < 4; i++) {
		sectors[i] = 4 * line + i;
		bool hit = l2_hit(s, sectors[i]);
		hits += hit;
		missed |= (uint64_t)!hit << i;
	}
	return read_through_l1(s, w, now, l2_path_bytes(s, hits, hits ? 1 : 0), 4 - hits, miss_bytes(s, sectors, missed), 4 * line, NULL);
}

void gmem_free(struct sim *s)
{
	free(s->mem.fetched);
	s->mem.fetched = NULL;
	free(s->mem.l1_misses.heap);
	s->mem.l1_misses = (struct flights){0};
	free(s->mem.dram_reads.heap);
	s->mem.dram_reads = (struct flights){0};
}

/*
 * A store's lines stay in L2, dirty, until the L2 needs their room: of a
 * kernel whose global data fits (l2_keep_mb) none is written back while it
 * runs; of a larger one the share beyond what the L2 keeps, 1 - l2_keep_mb /
 * its data, as least-recently-used lines leave in the order they came.  That
 * share takes its bytes of the SM's DRAM share, which the reads after it
 * then wait behind (dram_read), and drains at that share (the kernel ends
 * when it has: stats); nobody waits for it.
 */
void gmem_write(struct sim *s, uint64_t now, uint32_t nsectors)
{
	s->mem.written_back_fp += (uint64_t)(32.0 * nsectors * s->mem.l2_written_back * FP + 0.5);
	uint64_t bytes = s->mem.written_back_fp / FP;
	s->mem.written_back_fp -= bytes * FP;
	if (!bytes)
		return;
	/* counted as the reads are, at the SM a DRAM trip after it leaves */
	(void)queue(&s->mem.dram_share_free, now, (uint64_t)s->m->dram_latency, bytes, s->m->dram_bytes_per_cycle);
	(void)queue(&s->mem.dram_free, now, 0, bytes, s->m->dram_bytes_per_cycle);
	s->rep->dram_bytes += bytes;
	if (s->trace)
		trace_count(&s->trace->dram, now, (int64_t)bytes);
}

/*
 * A bulk store's write of nsectors: done when the L2 has taken the lines
 * (its queue and latency); the DRAM share drains them as any store's.
 */
uint64_t gmem_write_bulk(struct sim *s, uint64_t now, uint32_t nsectors)
{
	uint64_t done = queue(&s->mem.l2_free, now, (uint64_t)s->m->l2_latency, 32ull * nsectors, s->m->l2_bytes_per_cycle);
	gmem_write(s, now, nsectors);
	return done;
}

/* What a read of these hits and misses takes with every queue empty: its latency, or its bytes at the rate. */
static uint64_t idle_split(const struct sim *s, uint32_t hits, uint32_t misses)
{
	uint64_t done = 0;
	if (hits) {
		uint64_t stream = (uint64_t)((double)(32ull * hits) / s->m->l2_bytes_per_cycle + 0.999999);
		uint64_t lat = (uint64_t)s->m->l2_latency;
		done = lat > stream ? lat : stream;
	}
	if (misses) {
		uint64_t stream = (uint64_t)((double)(32ull * misses) / s->m->dram_bytes_per_cycle + 0.999999);
		uint64_t lat = (uint64_t)s->m->dram_latency;
		uint64_t t = lat > stream ? lat : stream;
		done = t > done ? t : done;
	}
	return done;
}

uint64_t gmem_unloaded(const struct sim *s, const uint64_t *sectors, uint32_t nsectors)
{
	uint32_t hits = l2_look(s, sectors, nsectors).hits;
	return idle_split(s, hits, nsectors - hits);
}

uint64_t gmem_read_copy(struct sim *s, const struct warp *w, uint64_t now, const uint64_t *sectors, uint32_t nsectors,
			bool cached, struct gmem_spread *spread, uint64_t *unloaded)
{
	struct l2_view v = l2_look(s, sectors, nsectors);
	*unloaded = idle_split(s, v.hits, nsectors - v.hits);
	if (!nsectors)
		return now;
	return cached ? read_cached_seen(s, w, now, sectors, nsectors, spread, v) : read_seen(s, now, sectors, nsectors, v);
}

uint64_t gmem_unloaded_bulk(const struct sim *s, uint64_t first_sector, uint32_t nsectors)
{
	uint32_t hits = 0;
	for (uint32_t i = 0; i < nsectors; i++) /* a bulk copy reads its tile once: no fetched sectors to find */
		hits += l2_hit(s, first_sector + i);
	return idle_split(s, hits, nsectors - hits);
}

/*
 * A copy's data written into shared memory: after its data arrive, at the fill rate, after the
 * issuing warp's copies before it (a warp's copies complete in order: LDGDEPBAR / DEPBAR count
 * them).  Not behind other warps' copies whose data come later: one SM-wide queue in issue order
 * held a warp's DRAM copies behind its neighbours' and kept primitive_copies' warps waiting in
 * step (4 warps, D = 4, per-group commits: 4,202 cycles a batch against the H100's 3,268), where
 * the H100's warps drift apart (traces/h100/overwait_order.csv).  The SM's path from L2 stays
 * one queue (l2_free), and DRAM's share another.
 */
uint64_t gmem_fill(struct warp *w, const struct machine *m, uint64_t arrive, uint32_t bytes)
{
	return queue(&w->fill_free, arrive, 0, bytes, m->l2_bytes_per_cycle);
}

uint64_t gmem_read_bulk(struct sim *s, uint64_t now, uint64_t first_sector, uint32_t nsectors)
{
	uint32_t hits = 0, hit_lines = 0;
	uint64_t span = fetch_sectors(s), blocks = 0, last = UINT64_MAX, last_line = UINT64_MAX;
	for (uint32_t i = 0; i < nsectors; i++) {
		if (l2_hit(s, first_sector + i)) {
			hits++;
			hit_lines += (first_sector + i) / 4 != last_line; /* the sectors rise: a line seen is the last */
			last_line = (first_sector + i) / 4;
		} else {
			blocks += (first_sector + i) / span != last;
			last = (first_sector + i) / span;
		}
	}
	return read_split(s, now, l2_path_bytes(s, hits, hit_lines), 32ull * span * blocks);
}

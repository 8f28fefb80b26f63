/*
 * gmem: sector coalescing against a brute-force reference (the distinct
 * 32-byte sectors the lanes touch, in the order lanes first touch them).
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim/engine/simint.h"

static uint32_t ref_sectors(const uint64_t addr[32], uint32_t mask, uint32_t width, uint64_t out[64])
{
	uint32_t n = 0;
	for (int lane = 0; lane < 32; lane++) {
		if (!(mask >> lane & 1))
			continue;
		for (uint64_t sec = addr[lane] / 32; sec <= (addr[lane] + width - 1) / 32; sec++) {
			uint32_t i = 0;
			while (i < n && out[i] != sec)
				i++;
			if (i == n && n < 64)
				out[n++] = sec;
		}
	}
	return n;
}

static void check(const uint64_t addr[32], uint32_t mask, uint32_t width, const char *what)
{
	uint64_t got[64], want[64];
	uint32_t ng = gmem_sectors(addr, mask, width, got), nw = ref_sectors(addr, mask, width, want);
	cr_assert_eq(ng, nw, "%s (mask %08x, width %u): %u sectors, reference %u", what, mask, width, ng, nw);
	for (uint32_t i = 0; i < ng; i++)
		cr_assert_eq(got[i], want[i], "%s (mask %08x, width %u): sector %u is %llu, reference %llu", what, mask,
			     width, i, (unsigned long long)got[i], (unsigned long long)want[i]);
}

Test(gmem, sectors_match_reference)
{
	static const uint32_t masks[] = {0xffffffffu, 0x0000ffffu, 0xffff0000u, 0x00ff00ffu, 0x80000001u, 0x7ffffffeu,
					 1u, 0x00000ff0u};
	static const uint32_t widths[] = {1, 2, 4, 8, 16, 64};
	static const uint64_t bases[] = {0, 4, 30, 124, 4096 + 20};
	uint64_t a[32];
	srand(7);
	for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
		for (size_t bi = 0; bi < sizeof bases / sizeof bases[0]; bi++)
			for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; mi++) {
				for (uint32_t lane = 0; lane < 32; lane++)
					a[lane] = bases[bi] + (uint64_t)lane * widths[wi];
				check(a, masks[mi], widths[wi], "consecutive");
				a[20] += 32;
				check(a, masks[mi], widths[wi], "consecutive but lane 20");
				for (uint32_t lane = 0; lane < 32; lane++)
					a[lane] = bases[bi] + (uint64_t)(31 - lane) * widths[wi];
				check(a, masks[mi], widths[wi], "descending");
				for (uint32_t lane = 0; lane < 32; lane++)
					a[lane] = bases[bi] + (uint64_t)(rand() % 512) * 4;
				check(a, masks[mi], widths[wi], "random");
				for (uint32_t lane = 0; lane < 32; lane++)
					a[lane] = bases[bi] + (uint64_t)lane * 128;
				check(a, masks[mi], widths[wi], "one sector each");
			}
}

/*
 * DRAM's latency grows with the lines this SM has in flight from it (inflight_lines.csv, which
 * every SM puts on DRAM alike): dram_line_latency a 128-byte line not yet landed when a read
 * issues, counted in sectors.  A lone read waits the latency; L2 hits load nothing; a sector this
 * SM fetched from DRAM lately is in L2 for the next read of it, which waits for it to arrive if it
 * comes sooner; and reads and write-backs together go no faster than the SM's DRAM share.
 */
Test(gmem, dram_latency_grows_with_the_lines_in_flight)
{
	struct machine m;
	machine_defaults(&m);
	m.dram_latency = 700;
	m.l2_latency = 300;
	m.dram_line_latency = 9;
	m.dram_bytes_per_cycle = 1e6;
	m.l2_bytes_per_cycle = 1e9;
	struct warp warps[1] = {{.id = 0}};
	struct sim_report rep = {0};
	struct sim s = {.m = &m, .warps = warps, .nwarps = 1, .rep = &rep};
	l1_init(&s.l1, &m, 0, m.l1_reuse_coeff, m.l1_reuse_exponent, m.l1_reuse_size_exponent);
	const uint64_t line0[4] = {0, 1, 2, 3};
	cr_assert_eq(gmem_read(&s, 100, line0, 4), 800, "alone: the DRAM latency");
	cr_assert_eq(gmem_unloaded(&s, line0, 4), 300, "fetched lately: in L2 now");
	cr_assert_eq(gmem_read(&s, 200, line0, 4), 800, "a read before it has arrived waits for it");
	cr_assert_eq(gmem_read(&s, 900, line0, 4), 1200, "one after hits there");
	cr_assert_eq(rep.dram_bytes, 128, "the L2 hits loaded no DRAM");
	const uint64_t a[4] = {100, 101, 102, 103}, b[4] = {104, 105, 106, 107}, c[4] = {108, 109, 110, 111};
	const uint64_t d[2] = {112, 113};
	cr_assert_eq(gmem_read(&s, 2000, a, 4), 2700, "nothing in flight");
	cr_assert_eq(gmem_read(&s, 2001, b, 4), 2710, "one line in flight: 9 cycles more");
	cr_assert_eq(gmem_read(&s, 2002, c, 4), 2720, "two");
	cr_assert_eq(gmem_read(&s, 2705, d, 2), 2705 + 700 + 18, "the first has landed: two left");
	cr_assert_eq(gmem_read(&s, 5000, (const uint64_t[2]){200, 201}, 2), 5700, "a half line, after all landed");
	gmem_free(&s);

	/* At a share of 10 bytes a cycle a line takes 12.8 cycles of it, more than its 9 of latency: the share sets the pace. */
	m.dram_bytes_per_cycle = 10;
	s.mem = (struct gmem){0};
	uint64_t last = 0;
	for (uint64_t i = 0; i < 40; i++) {
		uint64_t line[4] = {4 * i + 1000, 4 * i + 1001, 4 * i + 1002, 4 * i + 1003};
		last = gmem_read(&s, 10000, line, 4);
	}
	cr_assert(last >= 10700 + 39 * 128 / 10 && last <= 10700 + 39 * 128 / 10 + 1,
		  "40 lines at once: the last lands 39 x 12.8 cycles after the first (%llu)", (unsigned long long)last);
	/* 100 stores written back at once, 32,000 bytes, take 3,200 cycles of the share: a read issued with them lands behind. */
	s.mem.l2_written_back = 1.0;
	for (int i = 0; i < 100; i++)
		gmem_write(&s, 20000, 10);
	const uint64_t e[4] = {3000, 3001, 3002, 3003};
	uint64_t after = gmem_read(&s, 20000, e, 4);
	cr_assert(after >= 20700 + 3200 - 32 + 12 && after <= 20700 + 3200 - 32 + 14, "behind the write-backs: %llu",
		  (unsigned long long)after);
	gmem_free(&s);
	l1_free(&s.l1);
}

/* DRAM 700 and L2 300 cycles away, with no load and no queue: a read takes the latency alone; nothing warmed. */
static struct machine unloaded_memory(void)
{
	struct machine m;
	machine_defaults(&m);
	m.dram_latency = 700;
	m.l2_latency = 300;
	m.dram_bytes_per_cycle = m.l2_bytes_per_cycle = 1e6;
	m.dram_line_latency = 0;
	m.l2_hit_fraction = 0;
	return m;
}

/*
 * A sector that misses brings its whole aligned block of l2_fetch_bytes into L2
 * (traces/h100/fetch_granularity.csv: a 16-byte copy 32 or 48 bytes past a DRAM miss's takes
 * an L2 hit's 330 cycles, one 64 bytes past a DRAM trip's 740): the block's other sector
 * is then a hit, the next block's is not, and DRAM serves the block once.
 */
Test(gmem, a_miss_fetches_its_whole_block_and_dram_serves_it_once)
{
	struct machine m = unloaded_memory();
	struct warp warps[1] = {{.id = 0}};
	struct sim_report rep = {0};
	struct sim s = {.m = &m, .warps = warps, .nwarps = 1, .rep = &rep};
	l1_init(&s.l1, &m, 0, m.l1_reuse_coeff, m.l1_reuse_exponent, m.l1_reuse_size_exponent);
	m.l2_fetch_bytes = 64;
	const uint64_t first[1] = {8}, mate[1] = {9}, next[1] = {10}, both[2] = {12, 13};
	cr_assert_eq(gmem_read(&s, 100, first, 1), 800, "a miss");
	cr_assert_eq(rep.dram_bytes, 64, "DRAM serves the 64-byte block");
	cr_assert_eq(gmem_read(&s, 2000, mate, 1), 2300, "the block's other sector: an L2 hit");
	cr_assert_eq(gmem_read(&s, 2000, next, 1), 2700, "the next block's: another DRAM trip");
	cr_assert_eq(rep.dram_bytes, 128);
	cr_assert_eq(gmem_read(&s, 3000, both, 2), 3700, "both sectors of a block in one read");
	cr_assert_eq(rep.dram_bytes, 192, "one block");
	const uint64_t scattered[3] = {31, 40, 30}; /* lanes touching a block's sectors apart, another block between */
	gmem_read(&s, 3100, scattered, 3);
	cr_assert_eq(rep.dram_bytes, 320, "two blocks, each once: %llu", (unsigned long long)rep.dram_bytes);
	/* rising lists count a block at its first sector; one that falls back is looked up among all before it */
	const uint64_t rising_then_back[5] = {50, 51, 52, 53, 49}, back_into_one[3] = {60, 62, 61}, over_one[3] = {70, 71, 72};
	gmem_read(&s, 3200, rising_then_back, 5);
	cr_assert_eq(rep.dram_bytes, 512, "three blocks: %llu", (unsigned long long)rep.dram_bytes);
	gmem_read(&s, 3300, back_into_one, 3);
	cr_assert_eq(rep.dram_bytes, 640, "two blocks, the first's sectors apart: %llu", (unsigned long long)rep.dram_bytes);
	gmem_read(&s, 3400, over_one, 3);
	cr_assert_eq(rep.dram_bytes, 768, "two blocks: %llu", (unsigned long long)rep.dram_bytes);
	m.l2_fetch_bytes = 32;
	const uint64_t alone[1] = {20}, beside[1] = {21};
	cr_assert_eq(gmem_read(&s, 4000, alone, 1), 4700);
	cr_assert_eq(gmem_read(&s, 6000, beside, 1), 6700, "with 32-byte fetches the sector beside is a miss");
	cr_assert_eq(rep.dram_bytes, 832);
	gmem_free(&s);
	l1_free(&s.l1);
}

/*
 * The L2 path to the SM serves a request per 128-byte line, however few of its sectors the
 * request wants (l2_line_cycles; traces/h100/ldgsts_spread.csv, grouped_copies from a 16 MB L2
 * source at 16 warps an SM: a group of 4 lanes 128 bytes apart, a sector on each of 4 lines,
 * costs an LDGSTS 4.24 cycles SM-wide where its 4 sectors' bytes alone would take 1.39).  Warm
 * L2, 128 bytes and one line a cycle: back-to-back reads queue.
 */
Test(gmem, the_l2_path_serves_a_whole_line_for_each_line_a_read_asks)
{
	struct machine m = unloaded_memory();
	m.l2_hit_fraction = 1;
	m.l2_bytes_per_cycle = 128;
	m.l2_line_cycles = 1;
	struct warp warps[1] = {{.id = 0}};
	struct sim_report rep = {0};
	struct sim s = {.m = &m, .warps = warps, .nwarps = 1, .rep = &rep};
	s.mem.l2_kept = 1; /* the kernel's data fits */
	l1_init(&s.l1, &m, 0, m.l1_reuse_coeff, m.l1_reuse_exponent, m.l1_reuse_size_exponent);
	const uint64_t full[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
	const uint64_t spread[4] = {100, 104, 108, 112}, packed[4] = {200, 201, 202, 203};
	const uint64_t backwards[4] = {312, 308, 304, 300}, twice[4] = {400, 404, 401, 405};
	/* each read queues behind the one before: its finish less the last one's is what it held the path */
	uint64_t t0 = gmem_read(&s, 0, full, 16);
	cr_assert_eq(t0, 300, "the first: the latency");
	uint64_t tf = gmem_read(&s, 0, full, 16);
	cr_assert_eq(tf - t0, 4, "16 sectors, 4 lines: 512 bytes at 128 a cycle");
	t0 = tf;
	uint64_t t1 = gmem_read(&s, 0, spread, 4);
	cr_assert_eq(t1 - t0, 4, "a sector on each of 4 lines holds the path as a full warp's 4 lines do");
	uint64_t t2 = gmem_read(&s, 0, packed, 4);
	cr_assert_eq(t2 - t1, 1, "4 sectors of one line: one line");
	uint64_t t3 = gmem_read(&s, 0, backwards, 4);
	cr_assert_eq(t3 - t2, 4, "lanes in falling address order: still 4 lines");
	uint64_t t4 = gmem_read(&s, 0, twice, 4);
	cr_assert_eq(t4 - t3, 2, "two lines, each asked twice out of order: 2");
	m.l2_line_cycles = 0;
	uint64_t t5 = gmem_read(&s, 0, spread, 4);
	cr_assert_eq(t5 - t4, 1, "without a cost a line, only the 4 sectors' bytes");
	m.l2_line_cycles = 0.5;
	uint64_t t6 = gmem_read(&s, 0, full, 16);
	cr_assert_eq(t6 - t5, 4, "the lines' floor under a full warp's bytes changes nothing");
	gmem_free(&s);
	l1_free(&s.l1);
}

/*
 * A local line L1 lost comes back from where the kernel's input sits (local_latency.csv: 640-1620
 * cycles from a DRAM-input run, a DRAM read's time in that traffic; 335 from an L2-input run), and
 * loads DRAM as any read does.
 */
Test(gmem, a_local_line_l1_lost_comes_back_from_where_the_input_sits)
{
	struct machine m = unloaded_memory();
	struct warp warps[2] = {{.id = 0}, {.id = 1}};
	struct sim_report rep = {0};
	struct sim s = {.m = &m, .warps = warps, .nwarps = 2, .rep = &rep};
	l1_init(&s.l1, &m, 0, m.l1_reuse_coeff, m.l1_reuse_exponent, m.l1_reuse_size_exponent);
	m.l2_hit_fraction = 0;
	const uint64_t line0[4] = {0, 1, 2, 3};
	cr_assert_eq(gmem_read_cached(&s, &warps[0], 100, line0, 4, NULL), 800);
	cr_assert_eq(gmem_read_local(&s, &warps[1], 110, 1ull << 52), 110 + 700, "from DRAM");
	cr_assert_eq(rep.dram_bytes, 256, "its four sectors came from DRAM too");
	cr_assert_eq(gmem_read_local(&s, &warps[1], 120, 1ull << 52), 120 + 700, "and again: L1 lost it, and the L2 with it");
	m.l2_hit_fraction = 1;
	s.mem.l2_kept = 1; /* what gmem_setup leaves for data that fits */
	cr_assert_eq(gmem_read_local(&s, &warps[1], 5000, 1ull << 52 | 2), 5300, "from an L2-input run: an L2 hit");
	cr_assert_eq(rep.dram_bytes, 384);
	gmem_free(&s);
	l1_free(&s.l1);
}

/* The kernel's global buffers at total MB, two halves (input and output), and gmem_setup's view of them. */
static void setup_with(struct sim *s, struct kernel *k, struct buffer bufs[2], double total_mb)
{
	for (int i = 0; i < 2; i++)
		bufs[i] = (struct buffer){.space = SPACE_GLOBAL, .elem_bytes = 4, .elems = (uint64_t)(total_mb * 1e6 / 8)};
	k->bufs = bufs;
	k->nbufs = 2;
	s->k = k;
	gmem_setup(s);
}

/*
 * A warmed L2 keeps a kernel's data up to l2_keep_mb, none of it from l2_lose_mb, a linear share
 * between (traces/h100/l2_capacity.csv); what it lost goes in 64 KB stretches, so a 1 KB batch hits
 * or misses whole.
 */
Test(gmem, a_warmed_l2_keeps_what_it_can_hold_and_loses_whole_stretches)
{
	struct machine m;
	machine_defaults(&m);
	m.l2_hit_fraction = 1;
	m.l2_keep_mb = 30;
	m.l2_lose_mb = 40;
	m.l2_latency = 300;
	m.dram_latency = 700;
	m.l2_bytes_per_cycle = m.dram_bytes_per_cycle = 1e9; /* no queues: a sector's latency tells where it hit */
	struct sim_report rep = {0};
	struct sim s = {.m = &m, .rep = &rep};
	struct kernel k = {0};
	struct buffer bufs[2];
	const double sizes[3] = {20, 35, 45}, kept[3] = {1.0, 0.5, 0.0};
	for (int c = 0; c < 3; c++) {
		gmem_free(&s); /* each size its own run: nothing fetched yet */
		setup_with(&s, &k, bufs, sizes[c]);
		cr_assert_float_eq(rep.l2_hit_fraction, kept[c], 1e-9, "%.0f MB: keeps %.2f", sizes[c], rep.l2_hit_fraction);
		int hits = 0, batches = 2000;
		for (int b = 0; b < batches; b++) {
			uint64_t first = (uint64_t)b * 7919 * 32; /* a 1 KB batch: 32 sectors at a scattered 1 KB boundary */
			int batch_hits = 0;
			for (uint64_t sec = first; sec < first + 32; sec++)
				batch_hits += gmem_read(&s, 0, &sec, 1) == 300;
			cr_assert(batch_hits == 0 || batch_hits == 32, "%.0f MB, batch %d: %d of 32 sectors hit", sizes[c], b,
				  batch_hits);
			hits += batch_hits == 32;
		}
		cr_assert(fabs((double)hits / batches - kept[c]) < 0.05, "%.0f MB: %d of %d batches hit", sizes[c], hits,
			  batches);
	}
	gmem_free(&s);
}

/*
 * Stores stay in L2 until it needs their room: none reaches DRAM while a kernel whose data fits runs,
 * and of a larger one the share beyond what the L2 keeps (ncu's DRAM % of the examples at one block
 * per SM, 6.3-6.5%, is their loads alone).
 */
Test(gmem, stores_reach_dram_only_beyond_what_the_l2_keeps)
{
	struct machine m;
	machine_defaults(&m);
	m.l2_keep_mb = 30;
	m.l2_lose_mb = 40;
	m.dram_bytes_per_cycle = 1e9;
	struct sim_report rep = {0};
	struct sim s = {.m = &m, .rep = &rep};
	struct kernel k = {0};
	struct buffer bufs[2];
	const double sizes[3] = {20, 40, 60}, share[3] = {0, 0.25, 0.5};
	for (int c = 0; c < 3; c++) {
		setup_with(&s, &k, bufs, sizes[c]);
		rep.dram_bytes = 0;
		s.mem.written_back_fp = 0;
		for (int i = 0; i < 1000; i++)
			gmem_write(&s, (uint64_t)i, 4);
		cr_assert(fabs((double)rep.dram_bytes - share[c] * 128000) <= 1, "%.0f MB: %llu of 128000 bytes written back",
			  sizes[c], (unsigned long long)rep.dram_bytes);
	}
}

/*
 * Lines from DRAM through L1 land spread around their median, dram_spread + dram_spread_per_line
 * per other line in flight either side (inflight_spread.csv): alone within 100 of it, about as many
 * early as late; with ten other lines in flight, wider.
 */
Test(gmem, dram_lines_land_spread_around_their_median)
{
	struct machine m;
	machine_defaults(&m);
	m.dram_latency = 700;
	m.dram_spread = 100;
	m.dram_spread_per_line = 10;
	m.dram_line_latency = 0; /* the spread alone, not the latency the lines add */
	m.dram_bytes_per_cycle = 1e9;
	struct warp warps[2] = {{.id = 0}, {.id = 1}};
	struct sim_report rep = {0};
	struct sim s = {.m = &m, .warps = warps, .nwarps = 2, .rep = &rep};
	l1_init(&s.l1, &m, 0, m.l1_reuse_coeff, m.l1_reuse_exponent, m.l1_reuse_size_exponent);
	int early = 0, late = 0, lo = 1000, hi = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t now = 100000 * (uint64_t)(i + 1), line[4] = {4u * i, 4u * i + 1, 4u * i + 2, 4u * i + 3};
		int lat = (int)(gmem_read_cached(&s, &warps[0], now, line, 4, NULL) - now);
		early += lat < 700, late += lat > 700;
		lo = lat < lo ? lat : lo, hi = lat > hi ? lat : hi;
	}
	cr_assert(lo >= 600 && hi <= 800 && lo < 620 && hi > 780, "alone: %d to %d cycles", lo, hi);
	cr_assert(early > 400 && late > 400, "%d early, %d late of 1000", early, late);
	/* warp 1 has ten lines in flight: warp 0's lines spread 100 + 10 x 10 either side */
	for (int i = 0; i < 10; i++) {
		uint64_t line[4] = {900000u + 4u * i, 900001u + 4u * i, 900002u + 4u * i, 900003u + 4u * i};
		gmem_read_cached(&s, &warps[1], 200000000, line, 4, NULL);
	}
	lo = 1000, hi = 0;
	for (int i = 0; i < 200; i++) {
		uint64_t now = 200000000 + (uint64_t)i, line[4] = {8000u + 4u * i, 8001u + 4u * i, 8002u + 4u * i, 8003u + 4u * i};
		int lat = (int)(gmem_read_cached(&s, &warps[0], now, line, 4, NULL) - now);
		lo = lat < lo ? lat : lo, hi = lat > hi ? lat : hi;
	}
	cr_assert(lo < 540 && hi > 860 && lo >= 500 && hi <= 900, "ten other lines in flight: %d to %d cycles", lo, hi);
	gmem_free(&s);
	l1_free(&s.l1);
}

/*
 * A copy's fill waits for the issuing warp's copies before it, not another warp's: warp a's 512
 * bytes from DRAM arrive at 1,000, warp b's from L2, issued after them, at 400 and land at once
 * (one queue for the SM in issue order put them after a's, at 1,008: with primitive_copies'
 * per-group commits at 4 warps a warp then waited for its neighbours' DRAM copies and the four
 * stayed in step, 4,202 cycles a batch where the H100, its warps drifting apart, took 3,268).
 */
Test(gmem, a_fill_waits_for_its_own_warps_copies_not_anothers)
{
	struct machine m;
	machine_defaults(&m);
	m.l2_bytes_per_cycle = 64;
	struct warp a = {0}, b = {0};
	cr_assert_eq(gmem_fill(&a, &m, 1000, 512), 1000, "an idle queue: the data land as they arrive");
	cr_assert_eq(gmem_fill(&b, &m, 400, 512), 400, "b's land before a's, whose data come later");
	cr_assert_eq(gmem_fill(&a, &m, 900, 512), 1008, "a's next waits for a's first, 512 bytes at 64 a cycle");
}

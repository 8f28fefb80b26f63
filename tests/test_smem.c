/*
 * smem: bank-conflict cost against a brute-force reference.
 */
#include <criterion/criterion.h>

#include <stdint.h>

#include "sim/units/smem.h"

/*
 * Reference: for each phase, for each bank, count the distinct 4-byte words
 * the phase's lanes touch there (a w-byte access touches w/4 consecutive
 * words); the phase costs its busiest bank's count.
 */
static struct smem_cost ref_cost(const uint64_t addr[32], uint32_t mask, uint32_t width)
{
	uint32_t per_phase = width == 16 ? 8 : width == 8 ? 16 : 32;
	struct smem_cost c = {0, 0, 0};
	for (uint32_t first = 0; first < 32; first += per_phase) {
		uint64_t words[32 * 4];
		uint32_t nwords = 0;
		for (uint32_t lane = first; lane < first + per_phase; lane++) {
			if (!(mask & (1u << lane)))
				continue;
			for (uint32_t w = 0; w < width / 4; w++)
				words[nwords++] = addr[lane] / 4 + w;
		}
		uint32_t worst = 0;
		for (uint32_t bank = 0; bank < 32; bank++) {
			uint32_t distinct = 0;
			for (uint32_t i = 0; i < nwords; i++) {
				if (words[i] % 32 != bank)
					continue;
				uint32_t j = 0;
				while (j < i && words[j] != words[i])
					j++;
				if (j == i)
					distinct++;
			}
			if (distinct > worst)
				worst = distinct;
		}
		c.wavefronts += worst;
		c.phases += worst > 0; /* a phase with a lane costs a wavefront even without a conflict */
		if (worst > c.ways)
			c.ways = worst;
	}
	return c;
}

static void strided(uint64_t addr[32], uint64_t base, uint32_t stride_words)
{
	for (uint32_t lane = 0; lane < 32; lane++)
		addr[lane] = base + (uint64_t)lane * stride_words * 4;
}

static void check(const uint64_t addr[32], uint32_t mask, uint32_t width, const char *what)
{
	struct smem_cost got = smem_access_cost(addr, mask, width);
	struct smem_cost want = ref_cost(addr, mask, width);
	cr_assert(got.wavefronts == want.wavefronts && got.ways == want.ways && got.phases == want.phases,
		  "%s (mask %08x, width %u): got %u wavefronts / %u ways / %u phases, reference %u / %u / %u", what,
		  mask, width, got.wavefronts, got.ways, got.phases, want.wavefronts, want.ways, want.phases);
}

Test(smem, known_strides)
{
	uint64_t a[32];
	struct smem_cost c;
	strided(a, 0, 1);
	c = smem_access_cost(a, 0xffffffffu, 4);
	cr_assert_eq(c.wavefronts, 1, "stride 1: %u", c.wavefronts);
	cr_assert_eq(c.ways, 1);
	strided(a, 0, 2);
	c = smem_access_cost(a, 0xffffffffu, 4);
	cr_assert_eq(c.wavefronts, 2, "stride 2: %u", c.wavefronts);
	cr_assert_eq(c.ways, 2);
	strided(a, 0, 4);
	c = smem_access_cost(a, 0xffffffffu, 4);
	cr_assert_eq(c.wavefronts, 4, "stride 4: %u", c.wavefronts);
	strided(a, 0, 3);
	c = smem_access_cost(a, 0xffffffffu, 4);
	cr_assert_eq(c.wavefronts, 1, "stride 3 (odd): %u", c.wavefronts);
	strided(a, 0, 32);
	c = smem_access_cost(a, 0xffffffffu, 4);
	cr_assert_eq(c.wavefronts, 32, "stride 32: %u", c.wavefronts);
	cr_assert_eq(c.ways, 32);
	strided(a, 0, 33);
	c = smem_access_cost(a, 0xffffffffu, 4);
	cr_assert_eq(c.wavefronts, 1, "stride 33: %u", c.wavefronts);
	/* An unaligned base shifts banks but not conflicts. */
	strided(a, 4 * 7, 1);
	c = smem_access_cost(a, 0xffffffffu, 4);
	cr_assert_eq(c.wavefronts, 1);
}

Test(smem, broadcast)
{
	uint64_t a[32];
	for (int i = 0; i < 32; i++)
		a[i] = 1000;
	struct smem_cost c = smem_access_cost(a, 0xffffffffu, 4);
	cr_assert_eq(c.wavefronts, 1, "all lanes one address: %u", c.wavefronts);
	cr_assert_eq(c.ways, 1);
	/* Different bytes of one word are still one word. */
	for (int i = 0; i < 32; i++)
		a[i] = 1000 + (uint64_t)(i % 4);
	c = smem_access_cost(a, 0xffffffffu, 4);
	cr_assert_eq(c.wavefronts, 1, "bytes of one word: %u", c.wavefronts);
	/* Half the lanes on word 0, half on word 32: same bank, 2 distinct words. */
	for (int i = 0; i < 32; i++)
		a[i] = i < 16 ? 0 : 128;
	c = smem_access_cost(a, 0xffffffffu, 4);
	cr_assert_eq(c.wavefronts, 2, "two words in one bank: %u", c.wavefronts);
	check(a, 0xffffffffu, 4, "two words, one bank");
	/* 8-byte broadcast: each half-warp phase reads one 8-byte pair. */
	for (int i = 0; i < 32; i++)
		a[i] = 256;
	c = smem_access_cost(a, 0xffffffffu, 8);
	cr_assert_eq(c.wavefronts, 2, "8-byte broadcast: %u", c.wavefronts);
	cr_assert_eq(c.ways, 1);
	c = smem_access_cost(a, 0xffffffffu, 16);
	cr_assert_eq(c.wavefronts, 4, "16-byte broadcast: %u", c.wavefronts);
	cr_assert_eq(c.ways, 1);
}

Test(smem, wide_known_numbers)
{
	uint64_t a[32];
	struct smem_cost c;
	/* Contiguous 8-byte: each half-warp covers 128 bytes, conflict-free. */
	for (int i = 0; i < 32; i++)
		a[i] = (uint64_t)i * 8;
	c = smem_access_cost(a, 0xffffffffu, 8);
	cr_assert_eq(c.wavefronts, 2, "contiguous 8-byte: %u", c.wavefronts);
	cr_assert_eq(c.ways, 1);
	/* Contiguous 16-byte: four quarter-warp phases. */
	for (int i = 0; i < 32; i++)
		a[i] = (uint64_t)i * 16;
	c = smem_access_cost(a, 0xffffffffu, 16);
	cr_assert_eq(c.wavefronts, 4, "contiguous 16-byte: %u", c.wavefronts);
	cr_assert_eq(c.ways, 1);
	/* 8-byte with a 16-byte stride: 2-way in each half. */
	for (int i = 0; i < 32; i++)
		a[i] = (uint64_t)i * 16;
	c = smem_access_cost(a, 0xffffffffu, 8);
	cr_assert_eq(c.wavefronts, 4, "8-byte, stride 16 bytes: %u", c.wavefronts);
	cr_assert_eq(c.ways, 2);
	/* Only the first half-warp active: one phase. */
	for (int i = 0; i < 32; i++)
		a[i] = (uint64_t)i * 8;
	c = smem_access_cost(a, 0x0000ffffu, 8);
	cr_assert_eq(c.wavefronts, 1, "first half only: %u", c.wavefronts);
}

Test(smem, empty_mask_costs_nothing)
{
	uint64_t a[32] = {0};
	for (uint32_t width = 4; width <= 16; width *= 2) {
		struct smem_cost c = smem_access_cost(a, 0, width);
		cr_assert_eq(c.wavefronts, 0, "width %u", width);
		cr_assert_eq(c.ways, 0);
	}
}

Test(smem, single_lane)
{
	uint64_t a[32] = {0};
	for (int lane = 0; lane < 32; lane++) {
		a[lane] = 4096 + 4;
		struct smem_cost c = smem_access_cost(a, 1u << lane, 4);
		cr_assert_eq(c.wavefronts, 1, "lane %d", lane);
		c = smem_access_cost(a, 1u << lane, 16);
		cr_assert_eq(c.wavefronts, 1, "lane %d, 16 bytes", lane);
	}
}

Test(smem, strides_full_mask_match_reference)
{
	static const uint32_t widths[] = {4, 8, 16};
	uint64_t a[32];
	for (int w = 0; w < 3; w++)
		for (uint32_t stride = 1; stride <= 33; stride++) {
			/* Wide accesses stride in units of their own width, as real code would. */
			uint32_t words = stride * (widths[w] / 4);
			strided(a, 0, words);
			check(a, 0xffffffffu, widths[w], "strided");
			strided(a, 0, stride);
			check(a, 0xffffffffu, widths[w], "strided, word units");
		}
}

Test(smem, stride_ways_formula)
{
	/* For 4-byte accesses the conflict degree of word stride s is gcd(s, 32). */
	uint64_t a[32];
	for (uint32_t stride = 1; stride <= 64; stride++) {
		uint32_t g = 32, s = stride;
		while (s) {
			uint32_t t = g % s;
			g = s;
			s = t;
		}
		strided(a, 0, stride);
		struct smem_cost c = smem_access_cost(a, 0xffffffffu, 4);
		cr_assert_eq(c.wavefronts, g, "stride %u: %u wavefronts, expected gcd = %u", stride, c.wavefronts, g);
	}
}

Test(smem, partial_masks_match_reference)
{
	static const uint32_t masks[] = {0x1u,	      0x80000000u, 0x0000ffffu, 0xffff0000u, 0x55555555u,
					 0xaaaaaaaau, 0x000000ffu, 0xff00ff00u, 0x0f0f0f0fu, 0x12345678u,
					 0x80000001u, 0x00010001u};
	static const uint32_t widths[] = {4, 8, 16};
	uint64_t a[32];
	for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++)
		for (int w = 0; w < 3; w++)
			for (uint32_t stride = 1; stride <= 32; stride++) {
				strided(a, 64, stride);
				check(a, masks[m], widths[w], "partial mask");
			}
	/* Stride 32 with every other lane: 16 distinct words in bank 0. */
	strided(a, 0, 32);
	struct smem_cost c = smem_access_cost(a, 0x55555555u, 4);
	cr_assert_eq(c.wavefronts, 16, "stride 32, half the lanes: %u", c.wavefronts);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

Test(smem, random_addresses_match_reference)
{
	static const uint32_t widths[] = {4, 8, 16};
	uint64_t a[32];
	for (int trial = 0; trial < 2000; trial++) {
		uint32_t width = widths[trial % 3];
		/* Small spans make repeats (broadcasts) and conflicts likely; addresses aligned to width. */
		uint64_t span = trial % 2 ? 64 : 4096;
		for (int i = 0; i < 32; i++)
			a[i] = (rng() % span) / width * width;
		uint32_t mask = trial % 4 == 0 ? 0xffffffffu : (uint32_t)rng();
		check(a, mask, width, "random");
	}
}

/* Lanes at consecutive addresses (the fast path), aligned or not, with gaps in the mask. */
Test(smem, consecutive_lanes_match_reference)
{
	static const uint32_t masks[] = {0xffffffffu, 0x0000ffffu, 0xffff0000u, 0x00ff00ffu, 0x80000001u, 0x7ffffffeu, 1u};
	static const uint32_t widths[] = {4, 8, 16};
	static const uint64_t bases[] = {0, 4, 8, 12, 124, 4096 + 20};
	uint64_t a[32];
	for (size_t wi = 0; wi < 3; wi++)
		for (size_t bi = 0; bi < sizeof bases / sizeof bases[0]; bi++)
			for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; mi++) {
				for (uint32_t lane = 0; lane < 32; lane++)
					a[lane] = bases[bi] + (uint64_t)lane * widths[wi];
				check(a, masks[mi], widths[wi], "consecutive");
				a[31] += 4; /* one lane off the run: the general path */
				check(a, masks[mi], widths[wi], "consecutive but the last lane");
			}
}

/* ldmatrix .x4 rows (16 bytes each, lane L row L%8 of matrix L/8): the GEMM tiles' strides. */
Test(smem, ldmatrix_rows_conflict_by_their_stride)
{
	uint64_t a[32];
	const uint32_t stride[] = {16, 64, 128, 80};
	const uint32_t ways[] = {1, 4, 8, 1};
	for (int s = 0; s < 4; s++) {
		for (int l = 0; l < 32; l++)
			a[l] = 4096 + (uint64_t)l * stride[s];
		struct smem_cost c = smem_access_cost(a, 0xffffffffu, 16);
		cr_assert_eq(c.ways, ways[s], "stride %u: %u ways", stride[s], c.ways);
		cr_assert_eq(c.wavefronts, 4 * ways[s], "stride %u: %u wavefronts", stride[s], c.wavefronts);
	}
	/* two lanes of a phase on the same row: one chunk, no conflict */
	for (int l = 0; l < 32; l++)
		a[l] = (uint64_t)(l / 2) * 128;
	struct smem_cost c = smem_access_cost(a, 0xffffffffu, 16);
	cr_assert_eq(c.ways, 4, "4 distinct rows 128 bytes apart per phase");
	/* unaligned 16-byte lanes take the general path: lane 1 straddles groups */
	for (int l = 0; l < 32; l++)
		a[l] = 8 + (uint64_t)l * 16;
	c = smem_access_cost(a, 0xffffffffu, 16);
	cr_assert_eq(c.wavefronts, 4);
}

/*
 * The memo of access shapes answers what the model computes: the same lanes' offsets at a base
 * moved by whole rows of banks (a loop's next stage) hit it, a base moved within a row does not
 * alias, and a slot reused by another shape answers for the new one.
 */
Test(smem, the_memo_of_access_shapes_answers_as_the_model)
{
	static struct smem_memo memo; /* zeroed: every slot empty */
	uint64_t seed = 12345;
	const uint32_t widths[] = {4, 8, 16};
	for (int i = 0; i < 4000; i++) {
		uint64_t addr[32];
		uint32_t width = widths[i % 3];
		uint32_t mask = i % 5 ? 0xffffffffu : (uint32_t)(seed >> 7) | 1u;
		uint64_t base = 4096 + (uint64_t)(i % 7) * 128 + (uint64_t)(i % 11 == 0 ? 4 : 0);
		for (int l = 0; l < 32; l++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			/* a few shapes repeat (i / 3 % 9), the rest are fresh */
			uint64_t off = i % 4 ? (uint64_t)((i / 3 % 9) * 37 + l * 5 % 23) : (seed >> 33) % 512;
			addr[l] = base + off * width;
		}
		struct smem_cost a = smem_access_cost_memo(&memo, addr, mask, width), b = smem_access_cost(addr, mask, width);
		cr_assert(a.wavefronts == b.wavefronts && a.ways == b.ways && a.phases == b.phases,
			  "draw %d: the memo says %u wavefronts, %u ways, %u phases; the model %u, %u, %u", i, a.wavefronts,
			  a.ways, a.phases, b.wavefronts, b.ways, b.phases);
	}
}

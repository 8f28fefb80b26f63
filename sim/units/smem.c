#include "smem.h"

#include <stdbool.h>
#include <string.h>

/* Distinct words per bank among the lanes of one phase: the phase's wavefronts. */
static uint32_t phase_ways(const uint64_t addr[32], uint32_t mask, uint32_t width)
{
	/*
	 * 16-byte accesses at 16-byte-aligned addresses (LDS.128, ldmatrix rows): a lane's four
	 * words fill one of the 8 groups of 4 banks, so the wavefronts are the most distinct
	 * 16-byte chunks any group holds (at most 8 lanes in a phase).
	 */
	if (width == 16) {
		uint64_t chunk[8];
		uint32_t group[8], n = 0, worst = 0;
		bool aligned = true;
		for (uint32_t m = mask; m && aligned; m &= m - 1) {
			uint64_t a = addr[__builtin_ctz(m)];
			aligned = a % 16 == 0 && n < 8;
			if (!aligned)
				break;
			uint64_t c = a / 16;
			bool seen = false;
			for (uint32_t i = 0; i < n && !seen; i++)
				seen = chunk[i] == c;
			if (!seen) {
				chunk[n] = c;
				group[n++] = (uint32_t)(c % (SMEM_BANKS / 4));
			}
		}
		if (aligned) {
			for (uint32_t i = 0; i < n; i++) {
				uint32_t same = 0;
				for (uint32_t j = 0; j < n; j++)
					same += group[j] == group[i];
				if (same > worst)
					worst = same;
			}
			return worst;
		}
	}
	/* The usual case first: no bank holds two different words (one wavefront, or none). */
	uint64_t first[SMEM_BANKS];
	uint32_t used = 0;
	for (uint32_t m = mask; m; m &= m - 1) {
		int lane = __builtin_ctz(m);
		for (uint32_t w = 0; w < width / 4; w++) {
			uint64_t word = addr[lane] / 4 + w;
			uint32_t bank = (uint32_t)(word % SMEM_BANKS);
			if (!(used >> bank & 1)) {
				used |= 1u << bank;
				first[bank] = word;
			} else if (first[bank] != word) {
				goto conflict;
			}
		}
	}
	return used ? 1 : 0;
conflict:;
	uint64_t words[SMEM_BANKS][32];
	uint32_t nwords[SMEM_BANKS] = {0};
	uint32_t worst = 0;
	for (int lane = 0; lane < 32; lane++) {
		if (!(mask >> lane & 1))
			continue;
		/* A wide access touches width/4 consecutive words, each in its own bank. */
		for (uint32_t w = 0; w < width / 4; w++) {
			uint64_t word = addr[lane] / 4 + w;
			uint32_t bank = (uint32_t)(word % SMEM_BANKS);
			bool seen = false;
			for (uint32_t i = 0; i < nwords[bank]; i++)
				if (words[bank][i] == word)
					seen = true;
			if (!seen) {
				words[bank][nwords[bank]++] = word;
				if (nwords[bank] > worst)
					worst = nwords[bank];
			}
		}
	}
	return worst;
}

/* Whether lane l's address is addr[lowest lane] + (l - lowest) * width for every lane in mask. */
static bool consecutive(const uint64_t addr[32], uint32_t mask, uint32_t width)
{
	int l0 = __builtin_ctz(mask);
	for (uint32_t m = mask; m; m &= m - 1) {
		int l = __builtin_ctz(m);
		if (addr[l] != addr[l0] + (uint64_t)(l - l0) * width)
			return false;
	}
	return true;
}

struct smem_cost smem_consecutive_cost(uint32_t mask, uint32_t width)
{
	struct smem_cost c = {.ways = 1};
	uint32_t lanes_per_phase = width >= 16 ? 8 : width == 8 ? 16 : 32;
	for (uint32_t first = 0; first < 32; first += lanes_per_phase)
		if (lanes_per_phase == 32 ? mask : mask & (((1u << lanes_per_phase) - 1) << first))
			c.wavefronts++;
	c.phases = c.wavefronts;
	return c;
}

struct smem_cost smem_access_cost(const uint64_t addr[32], uint32_t mask, uint32_t width)
{
	struct smem_cost c = {0, 0, 0};
	if (width < 4)
		width = 4;
	/* 8-byte accesses run as 2 half-warp phases, 16-byte ones as 4 quarter-warp phases. */
	uint32_t lanes_per_phase = width >= 16 ? 8 : width == 8 ? 16 : 32;
	/*
	 * Lanes at consecutive addresses (4, 8 or 16 bytes apart) touch at most
	 * 32 consecutive words per phase, one per bank: one wavefront for each
	 * phase with a lane in it.
	 */
	if (mask && (width == 4 || width == 8 || width == 16) && consecutive(addr, mask, width))
		return smem_consecutive_cost(mask, width);
	for (uint32_t first = 0; first < 32; first += lanes_per_phase) {
		uint32_t phase_mask = lanes_per_phase == 32 ? mask : mask & (((1u << lanes_per_phase) - 1) << first);
		if (!phase_mask)
			continue;
		uint32_t ways = phase_ways(addr, phase_mask, width);
		c.phases++;
		c.wavefronts += ways;
		if (ways > c.ways)
			c.ways = ways;
	}
	return c;
}

/*
 * A shape is its lanes' addresses relative to the lowest lane's.  A full
 * warp (the usual access) computes its 32 offsets in a loop the compiler
 * vectorises, hashes their sum and a few lanes' offsets, and compares all
 * 32 in one memcmp; a group of fewer lanes hashes and compares each of its
 * lanes in turn (a single lane costs one).  Shapes that a full warp's hash
 * cannot tell apart share a slot and evict each other: a hit still
 * compares every lane.
 */
struct smem_cost smem_access_cost_memo(struct smem_memo *memo, const uint64_t addr[32], uint32_t mask, uint32_t width)
{
	if (!mask)
		return smem_access_cost(addr, mask, width);
	static const int probe[] = {1, 2, 3, 5, 8, 13, 21, 31};
	bool full = mask == 0xffffffffu;
	uint64_t a0 = addr[__builtin_ctz(mask)];
	uint32_t bank_base = (uint32_t)(a0 % (4 * SMEM_BANKS));
	uint64_t h = (uint64_t)mask * 0x9e3779b97f4a7c15ull ^ (uint64_t)width << 7 ^ bank_base;
	int64_t rel[32]; /* the lanes in mask */
	if (full) {
		int64_t sum = 0;
		for (int l = 0; l < 32; l++) {
			rel[l] = (int64_t)(addr[l] - a0);
			sum += rel[l];
		}
		h ^= (uint64_t)sum << 12;
		for (size_t i = 0; i < sizeof probe / sizeof *probe; i++)
			h = (h ^ (uint64_t)rel[probe[i]]) * 0x100000001b3ull;
	} else {
		for (uint32_t m = mask; m; m &= m - 1) {
			int l = __builtin_ctz(m);
			rel[l] = (int64_t)(addr[l] - a0);
			h = (h ^ (uint64_t)rel[l]) * 0x100000001b3ull;
		}
	}
	struct smem_shape *e = &memo->slot[(h ^ h >> 29) % SMEM_MEMO_SLOTS];
	bool hit = e->width == width && e->mask == mask && e->bank_base == bank_base;
	if (hit && full)
		hit = !memcmp(e->rel, rel, sizeof rel);
	for (uint32_t m = full ? 0 : mask; hit && m; m &= m - 1) {
		int l = __builtin_ctz(m);
		hit = e->rel[l] == rel[l];
	}
	if (hit)
		return e->cost;
	e->cost = smem_access_cost(addr, mask, width);
	e->mask = mask;
	e->width = width;
	e->bank_base = bank_base;
	for (uint32_t m = mask; m; m &= m - 1) {
		int l = __builtin_ctz(m);
		e->rel[l] = rel[l];
	}
	return e->cost;
}

/*
 * gmem: sector coalescing against a brute-force reference (the distinct
 * 32-byte sectors the lanes touch, in the order lanes first touch them).
 */
#include <criterion/criterion.h>

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

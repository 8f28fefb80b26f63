#include "l1.h"

#include <math.h>
#include <stdlib.h>

#include "../engine/machine.h"

#define L1_LINE 128u

/*
 * The carveouts the driver chooses from, ascending: 0, then powers of two up
 * to two steps, then steps of smem_carveout_step from three steps up to
 * smem_bytes.  On the H100 (32 KB steps, 228 KB): 0, 8, 16, 32, 64, 100, 132,
 * 164, 196, 228 KB, the sizes ncu reports in carveout.csv and l1_local.csv.
 */
static int carveouts(const struct machine *m, uint64_t out[40])
{
	uint64_t step = (uint64_t)m->smem_carveout_step, top = (uint64_t)m->smem_bytes;
	int n = 0;
	out[n++] = 0;
	for (uint64_t c = step / 4; c && c <= 2 * step && c < top; c *= 2)
		out[n++] = c;
	uint64_t k = 0;
	while (top >= (k + 1) * step + 3 * step && k < 30)
		k++;
	for (uint64_t i = k + 1; i-- > 0;)
		if (top - i * step > out[n - 1])
			out[n++] = top - i * step;
	return n;
}

static uint64_t at_least(const uint64_t *cfg, int n, uint64_t need)
{
	for (int i = 0; i < n; i++)
		if (cfg[i] >= need)
			return cfg[i];
	return UINT64_MAX;
}

/*
 * The driver's choice is not documented; this rule reproduces carveout.csv
 * (58 of its 60 launches: all but the two without any shared memory at 256
 * and 512 threads): it makes room for twice the blocks the threads allow
 * (where four or more fit; exactly those where fewer do), unless that takes
 * more than smem_carveout_prefer, where it takes what the blocks need but
 * never less than that size.  smem_block_reserved is the shared memory the
 * system keeps per block.
 */
uint64_t l1_carveout(const struct machine *m, uint64_t smem_block, int64_t block_size)
{
	uint64_t cfg[40];
	int n = carveouts(m, cfg);
	uint64_t per = smem_block + (uint64_t)m->smem_block_reserved;
	int64_t warps = (block_size + 31) / 32, blocks = m->max_blocks;
	if (block_size > 0 && m->max_threads / block_size < blocks)
		blocks = m->max_threads / block_size;
	if (warps > 0 && m->max_warps / warps < blocks)
		blocks = m->max_warps / warps;
	if (per > 0 && (uint64_t)m->smem_bytes / per < (uint64_t)blocks)
		blocks = (int64_t)((uint64_t)m->smem_bytes / per);
	if (blocks < 1)
		blocks = 1;
	int64_t room = blocks >= 4 ? 2 * blocks : blocks;
	if (room > m->max_blocks)
		room = m->max_blocks;
	uint64_t want = at_least(cfg, n, per * (uint64_t)room);
	if (want <= (uint64_t)m->smem_carveout_prefer)
		return want;
	uint64_t need = at_least(cfg, n, per * (uint64_t)blocks);
	if (need == UINT64_MAX)
		need = cfg[n - 1];
	return need > (uint64_t)m->smem_carveout_prefer ? need : (uint64_t)m->smem_carveout_prefer;
}

void l1_init(struct l1 *c, const struct machine *m, uint64_t carveout, double coeff, double exponent,
	     double size_exponent)
{
	uint64_t bytes = (uint64_t)m->l1_bytes > carveout ? (uint64_t)m->l1_bytes - carveout : 0;
	*c = (struct l1){.lines = bytes / L1_LINE, .exponent = exponent, .carveout = carveout};
	c->coeff = coeff * l1_size_term((uint64_t)m->l1_bytes, c->lines, size_exponent);
}

double l1_size_term(uint64_t array_bytes, uint64_t lines, double size_exponent)
{
	if (lines == 0 || size_exponent == 0)
		return 1.0;
	return pow((double)(array_bytes / L1_LINE) / (double)lines, size_exponent);
}

void l1_free(struct l1 *c)
{
	free(c->seen);
	free(c->seen_at);
	c->seen = c->seen_at = NULL;
	c->seen_cap = c->nseen = 0;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* Doubles the table of local lines; false when there is no memory for it. */
static bool grow(struct l1 *c)
{
	uint32_t cap = c->seen_cap ? 2 * c->seen_cap : 1024;
	uint64_t *tags = calloc(cap, sizeof *tags), *at = calloc(cap, sizeof *at);
	if (!tags || !at) {
		free(tags);
		free(at);
		return false;
	}
	for (uint32_t i = 0; i < c->seen_cap; i++)
		if (c->seen[i])
			for (uint32_t j = (uint32_t)mix(c->seen[i]) & (cap - 1);; j = (j + 1) & (cap - 1))
				if (!tags[j]) {
					tags[j] = c->seen[i];
					at[j] = c->seen_at[i];
					break;
				}
	free(c->seen);
	free(c->seen_at);
	c->seen = tags;
	c->seen_at = at;
	c->seen_cap = cap;
	return true;
}

bool l1_local(struct l1 *c, uint32_t warp, int64_t value)
{
	uint64_t tag = mix(((uint64_t)warp << 40) ^ (uint64_t)value) | 1ull << 63;
	if (c->nseen * 2 >= c->seen_cap && !grow(c))
		return true;
	uint32_t j = (uint32_t)mix(tag) & (c->seen_cap - 1);
	while (c->seen[j] && c->seen[j] != tag)
		j = (j + 1) & (c->seen_cap - 1);
	if (!c->seen[j]) { /* its first load */
		c->seen[j] = tag;
		c->seen_at[j] = c->streamed;
		c->nseen++;
		return true;
	}
	uint64_t since = c->streamed - c->seen_at[j];
	c->seen_at[j] = c->streamed;
	if (c->lines == 0)
		return false;
	if (c->streamed < c->lines || since == 0) /* L1 has not filled yet, or nothing came in between */
		return true;
	double p = l1_miss_chance(c->coeff, c->exponent, since, c->lines);
	return (double)(mix(tag ^ mix(c->streamed)) >> 11) * 0x1p-53 >= p;
}

double l1_miss_chance(double coeff, double exponent, uint64_t since, uint64_t lines)
{
	if (lines == 0)
		return 1.0;
	double p = coeff * pow((double)since / (double)lines, exponent);
	return p < 1.0 ? p : 1.0;
}

void l1_stream(struct l1 *c) { c->streamed++; }

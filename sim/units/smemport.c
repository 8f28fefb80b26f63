/*
 * smemport: the shared-memory port, which the warps' shared loads and
 * stores (LDS, STS, LDSM) and the copies' writes into shared memory (the
 * cp.async and bulk copies' fills, a bulk store's reads) take in turn, one
 * wavefront per smem_wavefront_cycles.
 *
 * A warp's access asks for the port when it issues; a copy's fill when its
 * data arrives, which is known when the copy issues and usually lies
 * ahead.  The fills wait in a heap by arrival and join the port's queue
 * when the port is next asked for at or after their arrival: the port
 * serves in arrival order, so a fill delays the accesses behind it and
 * none before.  (A fill's own landing is not moved by the accesses ahead
 * of it: the copy's landing is decided when it issues.)
 */
#include <stdlib.h>

#include "simint.h"

struct port_fill {
	uint64_t arrive;
	uint64_t cycles;
};

/* Grows the heap; false when out of memory (the fill is then not counted against the port). */
static bool reserve(struct smem_port *p)
{
	if (p->n < p->cap)
		return true;
	size_t cap = p->cap ? 2 * p->cap : 256;
	struct port_fill *h = realloc(p->heap, cap * sizeof *h);
	if (!h)
		return false;
	p->heap = h;
	p->cap = cap;
	return true;
}

void smem_port_fill(struct sim *s, uint64_t arrive, uint32_t wavefronts)
{
	struct smem_port *p = &s->mem.port;
	if (!wavefronts || !reserve(p))
		return;
	struct port_fill f = {arrive, (uint64_t)wavefronts * (uint64_t)s->m->smem_wavefront_cycles};
	size_t i = p->n++;
	while (i > 0 && p->heap[(i - 1) / 2].arrive > f.arrive) {
		p->heap[i] = p->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	p->heap[i] = f;
}

static struct port_fill pop(struct smem_port *p)
{
	struct port_fill top = p->heap[0], last = p->heap[--p->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= p->n)
			break;
		if (c + 1 < p->n && p->heap[c + 1].arrive < p->heap[c].arrive)
			c++;
		if (p->heap[c].arrive >= last.arrive)
			break;
		p->heap[i] = p->heap[c];
		i = c;
	}
	if (p->n)
		p->heap[i] = last;
	return top;
}

/* The fills that have arrived by now join the port's queue. */
static void admit_fills(struct smem_port *p, uint64_t now)
{
	while (p->n && p->heap[0].arrive <= now) {
		struct port_fill f = pop(p);
		p->free = (p->free > f.arrive ? p->free : f.arrive) + f.cycles;
	}
}

uint64_t smem_port_drained(struct sim *s, uint64_t now)
{
	struct smem_port *p = &s->mem.port;
	admit_fills(p, now);
	return p->free > now ? p->free : now;
}

void smem_port_hold(struct sim *s, uint64_t until)
{
	struct smem_port *p = &s->mem.port;
	if (p->free < until)
		p->free = until;
}

uint64_t smem_port_take(struct sim *s, uint64_t now, uint32_t wavefronts)
{
	struct smem_port *p = &s->mem.port;
	admit_fills(p, now);
	uint64_t start = p->free > now ? p->free : now;
	p->free = start + (uint64_t)wavefronts * (uint64_t)s->m->smem_wavefront_cycles;
	return start;
}

void smem_port_free(struct sim *s)
{
	free(s->mem.port.heap);
	s->mem.port = (struct smem_port){0};
}

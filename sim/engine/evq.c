#include "evq.h"

#include <stdio.h>
#include <stdlib.h>

/* Earlier first; equal times in the order they were scheduled. */
static bool ev_before(const struct event *a, const struct event *b)
{
	if (a->cycle != b->cycle)
		return a->cycle < b->cycle;
	return a->seq < b->seq;
}

void evq_init(struct evq *q) { *q = (struct evq){0}; }

void evq_free(struct evq *q)
{
	if (!q)
		return;
	free(q->heap);
	*q = (struct evq){0};
}

int evq_push(struct evq *q, uint64_t cycle, uint32_t kind, uint32_t owner, uint64_t arg)
{
	if (cycle < q->now) {
		fprintf(stderr, "smsim: evq: event kind %u scheduled at cycle %llu, before now (%llu)\n", kind,
			(unsigned long long)cycle, (unsigned long long)q->now);
		abort();
	}
	if (q->len == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 1024;
		struct event *heap = realloc(q->heap, (size_t)cap * sizeof *heap);
		if (!heap)
			return -1;
		q->heap = heap;
		q->cap = cap;
	}
	struct event ev = {cycle, q->next_seq++, kind, owner, arg};
	uint32_t i = q->len++;
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!ev_before(&ev, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = ev;
	return 0;
}

/*
 * The hole the earliest event leaves goes down to a leaf by the earlier
 * child alone (one comparison a level, not two), and the last event climbs
 * back from there: it belongs near the bottom, so it rarely climbs.  Events
 * are totally ordered (cycle, then sequence), so they come out in the same
 * order whatever shape the heap has.
 */
bool evq_pop(struct evq *q, struct event *out)
{
	if (q->len == 0)
		return false;
	*out = q->heap[0];
	uint32_t n = --q->len, i = 0;
	if (n) {
		struct event *h = q->heap;
		for (uint32_t child = 1; child < n; child = 2 * i + 1) {
			if (child + 1 < n && ev_before(&h[child + 1], &h[child]))
				child++;
			h[i] = h[child];
			i = child;
		}
		struct event last = h[n];
		while (i > 0 && ev_before(&last, &h[(i - 1) / 2])) {
			h[i] = h[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		h[i] = last;
	}
	q->now = out->cycle;
	q->popped++;
	return true;
}

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

bool evq_pop(struct evq *q, struct event *out)
{
	if (q->len == 0)
		return false;
	*out = q->heap[0];
	struct event last = q->heap[--q->len];
	uint32_t i = 0;
	for (;;) {
		uint32_t child = 2 * i + 1;
		if (child >= q->len)
			break;
		if (child + 1 < q->len && ev_before(&q->heap[child + 1], &q->heap[child]))
			child++;
		if (!ev_before(&q->heap[child], &last))
			break;
		q->heap[i] = q->heap[child];
		i = child;
	}
	if (q->len)
		q->heap[i] = last;
	q->now = out->cycle;
	q->popped++;
	return true;
}

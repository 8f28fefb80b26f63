/*
 * evq: the event queue pops by (cycle, order of scheduling).
 */
#include <criterion/criterion.h>

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim/engine/evq.h"

Test(evq, empty_queue_pops_nothing)
{
	struct evq q;
	evq_init(&q);
	struct event ev;
	cr_assert(evq_empty(&q));
	cr_assert_not(evq_pop(&q, &ev));
	cr_assert_eq(q.popped, 0);
	evq_free(&q);
}

Test(evq, pops_in_cycle_order)
{
	static const uint64_t cycles[] = {50, 3, 17, 1000, 0, 42, 8, 9, 2, 77};
	static const uint64_t sorted[] = {0, 2, 3, 8, 9, 17, 42, 50, 77, 1000};
	struct evq q;
	evq_init(&q);
	for (uint32_t i = 0; i < 10; i++)
		cr_assert_eq(evq_push(&q, cycles[i], 7, i, cycles[i] * 10), 0);
	cr_assert_not(evq_empty(&q));
	struct event ev;
	for (uint32_t i = 0; i < 10; i++) {
		cr_assert(evq_pop(&q, &ev), "pop %u", i);
		cr_assert_eq(ev.cycle, sorted[i], "pop %u: cycle %llu, expected %llu", i,
			     (unsigned long long)ev.cycle, (unsigned long long)sorted[i]);
		/* The payload travels with its event. */
		cr_assert_eq(ev.arg, sorted[i] * 10);
		cr_assert_eq(ev.kind, 7);
		cr_assert_eq(cycles[ev.owner], ev.cycle);
		cr_assert_eq(q.now, sorted[i]);
		cr_assert_eq(q.popped, i + 1);
	}
	cr_assert(evq_empty(&q));
	cr_assert_not(evq_pop(&q, &ev));
	cr_assert_eq(q.popped, 10);
	cr_assert_eq(q.now, 1000);
	evq_free(&q);
}

Test(evq, same_cycle_is_fifo)
{
	struct evq q;
	evq_init(&q);
	for (uint32_t i = 0; i < 100; i++)
		evq_push(&q, 5, 0, i, 0);
	struct event ev;
	for (uint32_t i = 0; i < 100; i++) {
		cr_assert(evq_pop(&q, &ev));
		cr_assert_eq(ev.owner, i, "pop %u came from push %u", i, ev.owner);
		cr_assert_eq(ev.cycle, 5);
	}
	evq_free(&q);
}

Test(evq, same_cycle_fifo_interleaved_with_other_cycles)
{
	/* Pushes for cycles 10 and 20 alternate with earlier and later ones. */
	static const uint64_t cycles[] = {20, 10, 30, 10, 5, 20, 10, 1, 20, 10, 30, 5};
	static const uint32_t order[] = {7, 4, 11, 1, 3, 6, 9, 0, 5, 8, 2, 10};
	struct evq q;
	evq_init(&q);
	for (uint32_t i = 0; i < 12; i++)
		evq_push(&q, cycles[i], 0, i, 0);
	struct event ev;
	for (uint32_t i = 0; i < 12; i++) {
		cr_assert(evq_pop(&q, &ev));
		cr_assert_eq(ev.owner, order[i], "pop %u: got push %u (cycle %llu), expected push %u", i, ev.owner,
			     (unsigned long long)ev.cycle, order[i]);
	}
	evq_free(&q);
}

Test(evq, push_during_pops_keeps_order)
{
	/* What the simulator does: pop an event, schedule follow-ups at now and later. */
	struct evq q;
	evq_init(&q);
	evq_push(&q, 10, 0, 0, 0);
	evq_push(&q, 10, 0, 1, 0);
	evq_push(&q, 12, 0, 2, 0);
	struct event ev;
	cr_assert(evq_pop(&q, &ev));
	cr_assert_eq(ev.owner, 0);
	cr_assert_eq(q.now, 10);
	evq_push(&q, 10, 0, 3, 0); /* same cycle as now: allowed, after owner 1 */
	evq_push(&q, 11, 0, 4, 0);
	static const uint32_t order[] = {1, 3, 4, 2};
	static const uint64_t when[] = {10, 10, 11, 12};
	for (int i = 0; i < 4; i++) {
		cr_assert(evq_pop(&q, &ev));
		cr_assert_eq(ev.owner, order[i], "pop %d: got %u, expected %u", i, ev.owner, order[i]);
		cr_assert_eq(ev.cycle, when[i]);
		cr_assert_eq(q.now, when[i]);
	}
	cr_assert_eq(q.popped, 5);
	evq_free(&q);
}

struct pushed {
	uint64_t cycle;
	uint32_t id;
};

static int by_cycle(const void *a, const void *b)
{
	const struct pushed *x = a, *y = b;
	if (x->cycle != y->cycle)
		return x->cycle < y->cycle ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id; /* ids are push order: makes qsort stable */
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	/* xorshift64: deterministic across libcs. */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

Test(evq, random_pushes_match_stable_sort)
{
	enum { N = 5000 };
	static struct pushed want[N];
	struct evq q;
	evq_init(&q);
	for (uint32_t i = 0; i < N; i++) {
		/* Few distinct cycles, so many ties. */
		want[i] = (struct pushed){rng() % 64, i};
		cr_assert_eq(evq_push(&q, want[i].cycle, 1, i, i), 0);
	}
	cr_assert_eq(q.len, N);
	qsort(want, N, sizeof want[0], by_cycle);
	struct event ev;
	for (uint32_t i = 0; i < N; i++) {
		cr_assert(evq_pop(&q, &ev));
		cr_assert(ev.cycle == want[i].cycle && ev.owner == want[i].id,
			  "pop %u: got (cycle %llu, push %u), expected (cycle %llu, push %u)", i,
			  (unsigned long long)ev.cycle, ev.owner, (unsigned long long)want[i].cycle, want[i].id);
		cr_assert_eq(ev.arg, ev.owner);
	}
	cr_assert(evq_empty(&q));
	cr_assert_eq(q.popped, N);
	evq_free(&q);
}

Test(evq, random_pushes_and_pops_interleaved)
{
	/* Pushes always at now or later, pops in between: must match a brute-force pick of the minimum. */
	enum { N = 3000 };
	static struct pushed pending[N];
	int npending = 0;
	uint32_t next_id = 0;
	struct evq q;
	evq_init(&q);
	while (next_id < N || npending) {
		if (next_id < N && (npending == 0 || rng() % 3)) {
			uint64_t c = q.now + rng() % 16;
			pending[npending++] = (struct pushed){c, next_id};
			evq_push(&q, c, 0, next_id++, 0);
			continue;
		}
		int best = 0;
		for (int i = 1; i < npending; i++)
			if (by_cycle(&pending[i], &pending[best]) < 0)
				best = i;
		struct event ev;
		cr_assert(evq_pop(&q, &ev));
		cr_assert(ev.cycle == pending[best].cycle && ev.owner == pending[best].id,
			  "got (cycle %llu, push %u), expected (cycle %llu, push %u)", (unsigned long long)ev.cycle,
			  ev.owner, (unsigned long long)pending[best].cycle, pending[best].id);
		cr_assert_eq(q.now, ev.cycle);
		pending[best] = pending[--npending];
	}
	cr_assert_eq(q.popped, N);
	cr_assert(evq_empty(&q));
	evq_free(&q);
}

Test(evq, free_resets)
{
	struct evq q;
	evq_init(&q);
	for (int i = 0; i < 2000; i++) /* past the first growth */
		evq_push(&q, (uint64_t)i, 0, 0, 0);
	cr_assert_eq(q.len, 2000);
	cr_assert_geq(q.cap, 2000);
	evq_free(&q);
	cr_assert_null(q.heap);
	cr_assert_eq(q.len, 0);
	cr_assert(evq_empty(&q));
	evq_free(NULL);
}

Test(evq, push_into_the_past_aborts, .signal = SIGABRT)
{
	struct evq q;
	evq_init(&q);
	evq_push(&q, 100, 0, 0, 0);
	struct event ev;
	evq_pop(&q, &ev);
	evq_push(&q, 99, 0, 0, 0);
}

Test(evq, push_at_now_does_not_abort)
{
	struct evq q;
	evq_init(&q);
	evq_push(&q, 100, 0, 0, 0);
	struct event ev;
	evq_pop(&q, &ev);
	cr_assert_eq(evq_push(&q, 100, 0, 1, 0), 0);
	cr_assert(evq_pop(&q, &ev));
	cr_assert_eq(ev.owner, 1);
	evq_free(&q);
}

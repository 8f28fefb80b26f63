/* trace: a warp's timeline as 8-byte steps gives back the spans it was handed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/out/trace.h"

/* The timeline's spans, joined as the Chrome writer and the SVG read them. */
static int spans_of(const struct trace_timeline *tl, struct trace_slice *out, int max)
{
	struct trace_cursor c = trace_cursor(tl);
	int n = 0;
	while (n < max && trace_next_span(&c, &out[n]))
		n++;
	return n;
}

Test(trace, adjacent_spans_of_one_cause_merge)
{
	struct trace *t = trace_new(1, 0);
	cr_assert(t);
	trace_warp(t, 0, STALL_ISSUE, 0, 1);
	trace_warp(t, 0, STALL_ALU, 1, 5);
	trace_warp(t, 0, STALL_ALU, 5, 9);
	trace_warp(t, 0, STALL_ISSUE, 9, 10);
	trace_warp(t, 0, STALL_ISSUE, 10, 10); /* empty: nothing */
	struct trace_slice s[8];
	cr_assert_eq(spans_of(&t->warps[0], s, 8), 3);
	cr_assert_eq(t->warps[0].n, 3);
	cr_assert(s[1].begin == 1 && s[1].end == 9 && s[1].cause == STALL_ALU);
	cr_assert(s[2].begin == 9 && s[2].end == 10 && s[2].cause == STALL_ISSUE);
	trace_free(t);
}

Test(trace, a_gap_and_an_over_long_span_come_back_whole)
{
	struct trace *t = trace_new(1, 0);
	cr_assert(t);
	uint64_t far = 3 * TRACE_STEP_LEN_MAX + 7;
	trace_warp(t, 0, STALL_ALU, 4, 6); /* after a gap from 0 */
	trace_warp(t, 0, STALL_MEMORY, 6, far);
	trace_warp(t, 0, STALL_MEMORY, far, far + 2);
	trace_warp(t, 0, STALL_ISSUE, far + 2, far + 3);
	struct trace_slice s[8];
	cr_assert_eq(spans_of(&t->warps[0], s, 8), 3);
	cr_assert(s[0].begin == 4 && s[0].end == 6 && s[0].cause == STALL_ALU);
	cr_assert(s[1].begin == 6 && s[1].end == far + 2 && s[1].cause == STALL_MEMORY);
	cr_assert(s[2].begin == far + 2 && s[2].end == far + 3 && s[2].cause == STALL_ISSUE);
	cr_assert_eq(t->warps[0].end, far + 3);
	trace_free(t);
}

Test(trace, a_timeline_grows_past_its_first_block)
{
	struct trace *t = trace_new(1, 0);
	cr_assert(t);
	for (uint64_t c = 0; c < 1000; c++)
		trace_warp(t, 0, c % 2 ? STALL_ALU : STALL_ISSUE, c, c + 1);
	struct trace_slice s[1001];
	cr_assert_eq(spans_of(&t->warps[0], s, 1001), 1000);
	for (int i = 0; i < 1000; i++)
		cr_assert(s[i].begin == (uint64_t)i && s[i].end == (uint64_t)i + 1);
	cr_assert(!t->failed);
	trace_free(t);
}

/*
 * A statement's slots as the tick records them: the op begins its span and
 * each later slot of it keeps it open; gaps, one lost slot.
 */
static void record_spread_op(struct trace *t, uint64_t at)
{
	trace_spread_begin(t, 0, STALL_ALU);
	trace_issue(t, 0, at);
	trace_warp(t, 0, STALL_ALU, at + 1, at + 4);
	trace_spread_keep(t, 0);
	trace_issue(t, 0, at + 4);
	trace_warp(t, 0, STALL_ALU, at + 5, at + 8);
	trace_warp(t, 0, STALL_NOT_SELECTED, at + 8, at + 10);
	trace_spread_keep(t, 0);
	trace_issue(t, 0, at + 10);
	trace_warp(t, 0, STALL_ALU, at + 11, at + 14);
}

Test(trace, a_spread_op_is_one_span_split_by_cause)
{
	struct trace *t = trace_new(1, 0);
	cr_assert(t);
	trace_warp(t, 0, STALL_MEMORY, 0, 6);
	record_spread_op(t, 6);
	trace_warp(t, 0, STALL_ALU, 20, 21); /* the last gap, charged at the next op's issue */
	trace_issue(t, 0, 21);               /* a plain op: its slot closes the spread */
	struct trace_slice s[8];
	cr_assert_eq(spans_of(&t->warps[0], s, 8), 3);
	cr_assert(!s[0].spread && s[0].cause == STALL_MEMORY && s[0].end == 6);
	cr_assert(s[1].spread && s[1].cause == STALL_ALU);
	cr_assert(s[1].begin == 6 && s[1].end == 21, "from the op's first slot to its end: %llu..%llu",
		  (unsigned long long)s[1].begin, (unsigned long long)s[1].end);
	cr_assert_eq(s[1].parts[STALL_ISSUE], 3);
	cr_assert_eq(s[1].parts[STALL_NOT_SELECTED], 2);
	cr_assert(!s[2].spread && s[2].cause == STALL_ISSUE && s[2].begin == 21 && s[2].end == 22);
	cr_assert_eq(t->warps[0].n, 5, "memory, the op's three steps, issue");
	trace_free(t);
}

Test(trace, back_to_back_spread_ops_stay_apart_and_another_cause_closes_one)
{
	struct trace *t = trace_new(1, 0);
	cr_assert(t);
	record_spread_op(t, 0);
	record_spread_op(t, 14); /* begins its own span */
	trace_warp(t, 0, STALL_CONSUMER_WAIT, 28, 40); /* not the op's: it closes it */
	trace_warp(t, 0, STALL_ALU, 40, 41);           /* and a later alu span is a plain one */
	trace_finish(t);
	struct trace_slice s[8];
	cr_assert_eq(spans_of(&t->warps[0], s, 8), 4);
	cr_assert(s[0].spread && s[0].begin == 0 && s[0].end == 14 && s[0].parts[STALL_ISSUE] == 3);
	cr_assert(s[1].spread && s[1].begin == 14 && s[1].end == 28 && s[1].parts[STALL_ISSUE] == 3);
	cr_assert(!s[2].spread && s[2].cause == STALL_CONSUMER_WAIT && s[2].end == 40);
	cr_assert(!s[3].spread && s[3].cause == STALL_ALU && s[3].end == 41);
	trace_free(t);
}

/*
 * The instruction-level waits between an op's slots (a busy pipe, the MIO
 * queue, a shared or global load's result) stay parts of its span: before
 * session 32 the first of them closed it, and every later slot of a
 * compute's chain was an issue span and a wait span of its own (1.2 GB of
 * trace at the bench's traced size, 3.8x the plain run's time).
 */
Test(trace, instruction_level_waits_stay_in_the_op_span_and_a_semantic_wait_closes_it)
{
	struct trace *t = trace_new(1, 0);
	cr_assert(t);
	trace_spread_begin(t, 0, STALL_ALU);
	trace_issue(t, 0, 0);
	trace_warp(t, 0, STALL_PIPE_BUSY, 1, 3);
	trace_spread_keep(t, 0);
	trace_issue(t, 0, 3);
	trace_warp(t, 0, STALL_SMEM, 4, 10);
	trace_spread_keep(t, 0);
	trace_issue(t, 0, 10);
	trace_warp(t, 0, STALL_MIO_THROTTLE, 11, 12);
	trace_warp(t, 0, STALL_MEMORY, 12, 20);
	trace_spread_keep(t, 0);
	trace_issue(t, 0, 20);
	trace_warp(t, 0, STALL_ALU, 21, 25);
	trace_warp(t, 0, STALL_BARRIER, 25, 40); /* not the op's, and not an instruction's wait: its own span */
	trace_finish(t);
	struct trace_slice s[4];
	cr_assert_eq(spans_of(&t->warps[0], s, 4), 2);
	cr_assert(s[0].spread && s[0].cause == STALL_ALU && s[0].begin == 0 && s[0].end == 25);
	cr_assert_eq(s[0].parts[STALL_ISSUE], 4);
	cr_assert_eq(s[0].parts[STALL_PIPE_BUSY], 2);
	cr_assert_eq(s[0].parts[STALL_SMEM], 6);
	cr_assert_eq(s[0].parts[STALL_MIO_THROTTLE], 1);
	cr_assert_eq(s[0].parts[STALL_MEMORY], 8);
	cr_assert_eq(s[0].parts[STALL_ALU], 4, "the rest is the op's own cause");
	cr_assert(!s[1].spread && s[1].cause == STALL_BARRIER && s[1].begin == 25 && s[1].end == 40);
	cr_assert_eq(s[1].parts[STALL_BARRIER], 15);
	trace_free(t);
}

/* The writer adds each span's dur to the last ts as decimal digits: carries, a new digit and a gap. */
Test(trace, chrome_ts_carry_into_new_digits_and_across_gaps)
{
	struct trace *t = trace_new(1, 0);
	cr_assert(t);
	uint64_t ends[] = {9, 10, 99, 100, 101, 999, 1000, 1000000, 1000003};
	uint64_t at = 0;
	for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
		trace_warp(t, 0, i % 2 ? STALL_ALU : STALL_ISSUE, at, ends[i]);
		at = ends[i];
	}
	trace_warp(t, 0, STALL_ISSUE, 123456789012, 123456789013); /* after a gap */
	trace_warp(t, 0, STALL_ALU, 123456789013, 123456789099);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert(f);
	cr_assert_eq(trace_write_chrome(t, f, "t", 1.0), 0);
	fclose(f);
	uint64_t want[] = {0, 9, 10, 99, 100, 101, 999, 1000, 1000000, 123456789012, 123456789013};
	const char *p = buf;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		p = strstr(p, "\"ts\":");
		cr_assert(p, "span %zu", i);
		p += 5;
		cr_assert_eq(strtoull(p, NULL, 10), want[i], "span %zu", i);
	}
	cr_assert_null(strstr(p, "\"ts\":"));
	free(buf);
	trace_free(t);
}

/* A spread op longer than one step holds, in each of its parts, comes back as one span with its parts whole. */
Test(trace, a_spread_op_longer_than_a_step_comes_back_whole)
{
	struct trace *t = trace_new(1, 0);
	cr_assert(t);
	uint64_t big = 2 * TRACE_STEP_LEN_MAX + 5, at = 1;
	trace_spread_begin(t, 0, STALL_CONSUMER_WAIT);
	trace_issue(t, 0, 0); /* its first slot */
	trace_warp(t, 0, STALL_ISSUE, at, at + big);
	at += big;
	trace_warp(t, 0, STALL_NOT_SELECTED, at, at + big);
	at += big;
	trace_warp(t, 0, STALL_CONSUMER_WAIT, at, at + big);
	at += big;
	trace_issue(t, 0, at); /* a slot of another op closes it */
	struct trace_slice s[4];
	cr_assert_eq(spans_of(&t->warps[0], s, 4), 2);
	cr_assert(s[0].spread && s[0].cause == STALL_CONSUMER_WAIT && s[0].begin == 0 && s[0].end == 3 * big + 1);
	cr_assert_eq(s[0].parts[STALL_ISSUE], big + 1);
	cr_assert_eq(s[0].parts[STALL_NOT_SELECTED], big);
	cr_assert(!s[1].spread && s[1].cause == STALL_ISSUE && s[1].begin == at && s[1].end == at + 1);
	trace_free(t);
}

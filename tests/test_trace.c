/* trace: a warp's timeline as 8-byte steps gives back the spans it was handed. */
#include <criterion/criterion.h>

#include "sim/trace.h"

/* The timeline's spans, joined as the Chrome writer and the SVG read them. */
static int spans_of(const struct trace_timeline *tl, struct trace_span *out, int max)
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
	struct trace_span s[8];
	cr_assert_eq(spans_of(&t->warps[0], s, 8), 3);
	cr_assert_eq(t->warps[0].n, 3);
	cr_assert(s[1].begin == 1 && s[1].end == 9 && s[1].what == STALL_ALU);
	cr_assert(s[2].begin == 9 && s[2].end == 10 && s[2].what == STALL_ISSUE);
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
	struct trace_span s[8];
	cr_assert_eq(spans_of(&t->warps[0], s, 8), 3);
	cr_assert(s[0].begin == 4 && s[0].end == 6 && s[0].what == STALL_ALU);
	cr_assert(s[1].begin == 6 && s[1].end == far + 2 && s[1].what == STALL_MEMORY);
	cr_assert(s[2].begin == far + 2 && s[2].end == far + 3 && s[2].what == STALL_ISSUE);
	cr_assert_eq(t->warps[0].end, far + 3);
	trace_free(t);
}

Test(trace, a_timeline_grows_past_its_first_block)
{
	struct trace *t = trace_new(1, 0);
	cr_assert(t);
	for (uint64_t c = 0; c < 1000; c++)
		trace_warp(t, 0, c % 2 ? STALL_ALU : STALL_ISSUE, c, c + 1);
	struct trace_span s[1001];
	cr_assert_eq(spans_of(&t->warps[0], s, 1001), 1000);
	for (int i = 0; i < 1000; i++)
		cr_assert(s[i].begin == (uint64_t)i && s[i].end == (uint64_t)i + 1);
	cr_assert(!t->failed);
	trace_free(t);
}

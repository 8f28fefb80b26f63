/*
 * mbarrier semantics (PTX mbarrier.*), against the rules of DESIGN.md §3:
 * phases, pending/expected arrivals, tx-count, parity waits, waiter wake-up
 * and the over-arrival program error.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/simint.h"

static struct machine m;
static struct kernel k;
static struct sim s;
static struct sim_report rep;
static struct diag d;

static void setup(void)
{
	machine_defaults(&m);
	m.subpartitions = 1; /* all four warps on one scheduler */
	memset(&k, 0, sizeof k);
	snprintf(k.file, sizeof k.file, "test.json");
	memset(&s, 0, sizeof s);
	memset(&rep, 0, sizeof rep);
	memset(&d, 0, sizeof d);
	s.m = &m;
	s.k = &k;
	s.rep = &rep;
	s.d = &d;
	evq_init(&s.q);
	s.mbars = calloc(8, sizeof *s.mbars);
	s.nwarps = 4;
	s.warps = calloc(4, sizeof *s.warps);
	s.sps = calloc(1, sizeof *s.sps);
	s.sps[0].warps = calloc(4, sizeof *s.sps[0].warps);
	s.sps[0].nwarps = 4;
	s.sps[0].next_tick = s.sps[0].last_issue = NEVER;
	s.sm_next = NEVER;
	s.sps[0].greedy = NONE;
	for (uint32_t i = 0; i < 4; i++)
		s.warps[i] = (struct warp){.id = i, .cause = STALL_BARRIER, .depth = 1, .live = 1,
					   .stack = {{.mask = 1, .blocked = WAIT_MBAR, .next_waiter = NONE,
						      .blocked_obj = -1, .wait_start = NEVER}}};
	for (uint32_t i = 0; i < 4; i++)
		s.sps[0].warps[i] = &s.warps[i];
	cr_assert_eq(sched_setup(&s), 0);
	for (uint32_t i = 0; i < 4; i++)
		warp_set_ready(&s, &s.warps[i], NEVER);
}

static void teardown(void)
{
	free(s.mbars);
	free(s.warps);
	sched_free(&s);
	free(s.sps[0].warps);
	free(s.sps);
	evq_free(&s.q);
}

TestSuite(mbar, .init = setup, .fini = teardown);

Test(mbar, phase_completes_when_all_expected_arrive)
{
	uint32_t b = mbar_new(&s, 0, "bar");
	mbar_init(&s.mbars[b], 3);
	cr_assert_eq(s.mbars[b].phase, 0);
	mbar_arrive(&s, b, 2, false, 10);
	cr_assert_eq(s.mbars[b].phase, 0, "two of three arrivals must not complete the phase");
	cr_assert_eq(s.mbars[b].pending, 1);
	mbar_arrive(&s, b, 1, false, 11);
	cr_assert_eq(s.mbars[b].phase, 1);
	cr_assert_eq(s.mbars[b].pending, 3, "pending resets to expected for the next phase");
	mbar_arrive(&s, b, 3, false, 12);
	cr_assert_eq(s.mbars[b].phase, 2);
}

Test(mbar, parity_waits)
{
	uint32_t b = mbar_new(&s, 0, "bar");
	mbar_init(&s.mbars[b], 1);
	/* A fresh barrier is in phase 0: waiting on parity 1 (the phase "before") returns at once. */
	cr_assert(mbar_parity_done(&s.mbars[b], 1));
	cr_assert_not(mbar_parity_done(&s.mbars[b], 0));
	mbar_arrive(&s, b, 1, false, 5);
	cr_assert(mbar_parity_done(&s.mbars[b], 0));
	cr_assert_not(mbar_parity_done(&s.mbars[b], 1));
	mbar_arrive(&s, b, 1, false, 6);
	cr_assert(mbar_parity_done(&s.mbars[b], 1));
	cr_assert(mbar_phase_done(&s.mbars[b], 1));
	cr_assert_not(mbar_phase_done(&s.mbars[b], 2));
}

Test(mbar, tx_count_holds_the_phase_until_bytes_land)
{
	uint32_t b = mbar_new(&s, 0, "bar");
	mbar_init(&s.mbars[b], 1);
	mbar_expect_tx(&s, b, 4096, 0);
	mbar_arrive(&s, b, 1, false, 1);
	cr_assert_eq(s.mbars[b].phase, 0, "arrivals alone must not complete while tx bytes are outstanding");
	mbar_complete_tx(&s, b, 4000, 50);
	cr_assert_eq(s.mbars[b].phase, 0);
	mbar_complete_tx(&s, b, 96, 60);
	cr_assert_eq(s.mbars[b].phase, 1);
	cr_assert_eq(s.mbars[b].tx, 0);
}

Test(mbar, tx_may_go_negative_before_expect)
{
	uint32_t b = mbar_new(&s, 0, "bar");
	mbar_init(&s.mbars[b], 1);
	mbar_complete_tx(&s, b, 64, 3);
	cr_assert_eq(s.mbars[b].tx, -64);
	mbar_expect_tx(&s, b, 64, 4);
	mbar_arrive(&s, b, 1, false, 5);
	cr_assert_eq(s.mbars[b].phase, 1);
}

Test(mbar, waiters_wake_after_the_wake_latency)
{
	uint32_t b = mbar_new(&s, 0, "bar");
	mbar_init(&s.mbars[b], 2);
	s.now = 50; /* suspended well before the phase completes */
	mbar_wait_on(&s, &s.warps[1], b);
	mbar_wait_on(&s, &s.warps[3], b);
	s.now = 100;
	cr_assert_eq(s.warps[1].stack[0].blocked_obj, (int32_t)b);
	cr_assert_eq(s.mbars[b].waiters, (3u << 6), "the last waiter heads the list");
	mbar_arrive(&s, b, 2, false, 100);
	uint64_t want = 100 + (uint64_t)m.mbarrier_wake_latency;
	cr_assert_eq(warp_ready(&s.warps[1]), want);
	cr_assert_eq(warp_ready(&s.warps[3]), want);
	cr_assert_eq(warp_ready(&s.warps[0]), NEVER, "a warp that did not wait stays as it was");
	cr_assert_eq(s.mbars[b].waiters, NONE);
	cr_assert_eq(s.warps[3].stack[0].blocked, WAIT_NONE, "the woken group is runnable again");
	cr_assert_eq(s.sps[0].next_tick, want, "the sub-partition must tick to issue the woken warps");
	cr_assert_eq(s.sm_next, want);
}

/*
 * A suspended try_wait returns mbarrier_wake_latency after the phase completes, with its
 * result; one the phase completes right behind (trywait_window.csv: an arrive 1 cycle after the
 * try still wakes it, 90 cycles after the try) answers no earlier than its own latency.
 */
Test(mbar, a_try_wait_just_before_completion_answers_at_its_own_latency_at_the_earliest)
{
	m.mbarrier_wake_latency = 31; /* h100.json's */
	s.cls_lat[IC_SYNCS] = 43;	/* iclass_syncs_latency */
	uint32_t b = mbar_new(&s, 0, "bar");
	mbar_init(&s.mbars[b], 1);
	s.now = 100;
	s.warps[1].stack[0].wait_start = s.now; /* sched_block's, when the try_wait suspends */
	mbar_wait_on(&s, &s.warps[1], b);
	mbar_arrive(&s, b, 1, false, 150);
	cr_assert_eq(warp_ready(&s.warps[1]), 150 + 31, "suspended: woken 31 after the phase completes");
	s.now = 200;
	s.warps[2].stack[0].wait_start = s.now;
	mbar_wait_on(&s, &s.warps[2], b);
	mbar_arrive(&s, b, 1, false, 201);
	cr_assert_eq(warp_ready(&s.warps[2]), 200 + 43, "completed a cycle after the try: its own latency");
}

Test(mbar, arrivals_past_expected_are_a_program_error)
{
	uint32_t b = mbar_new(&s, 0, "pipeline.consumed[1]");
	mbar_init(&s.mbars[b], 4);
	mbar_arrive(&s, b, 3, false, 1);
	mbar_arrive(&s, b, 2, false, 2);
	cr_assert_eq(s.error, DIAG_INPUT);
	cr_assert(strstr(d.msg, "program error") && strstr(d.msg, "pipeline.consumed[1]"), "got: %s", d.msg);
	cr_assert_eq(s.mbars[b].phase, 0, "the bad arrival must not be absorbed into a completed phase");
}

Test(mbar, delayed_arrivals_serialize_on_the_barrier)
{
	uint32_t b = mbar_new(&s, 0, "bar");
	mbar_init(&s.mbars[b], 3);
	mbar_arrive_later(&s, b, 10, 1, false);
	mbar_arrive_later(&s, b, 10, 1, false);
	mbar_arrive_later(&s, b, 10, 1, false);
	struct event ev;
	uint64_t want = 10;
	for (int i = 0; i < 3; i++) {
		cr_assert(evq_pop(&s.q, &ev));
		cr_assert_eq(ev.kind, EV_MBAR_ARRIVE);
		cr_assert_eq(ev.cycle, want, "arrival %d at %llu, expected %llu", i, (unsigned long long)ev.cycle,
			     (unsigned long long)want);
		want += (uint64_t)m.mbarrier_arrive_interval;
	}
}

Test(mbar, arrive_drop_counts_now_and_shrinks_later_phases)
{
	uint32_t b = mbar_new(&s, 0, "bar");
	mbar_init(&s.mbars[b], 3);
	mbar_arrive(&s, b, 1, true, 1);
	mbar_arrive(&s, b, 2, false, 2);
	cr_assert_eq(s.mbars[b].phase, 1, "the drop counted as an arrival of this phase");
	cr_assert_eq(s.mbars[b].pending, 2, "the next phase expects one thread fewer");
	mbar_arrive(&s, b, 2, false, 3);
	cr_assert_eq(s.mbars[b].phase, 2);
}

Test(mbar, arrival_before_init_is_a_program_error)
{
	uint32_t b = mbar_new(&s, 0, "bar[0]");
	mbar_arrive(&s, b, 1, false, 1);
	cr_assert_eq(s.error, DIAG_INPUT);
	cr_assert(strstr(d.msg, "before it was initialised"), "%s", d.msg);
}

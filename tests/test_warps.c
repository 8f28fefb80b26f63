/*
 * Warps as a kernel sees them: a __syncthreads reached by part of a warp
 * (CUDA Programming Guide, "Synchronization Functions": in conditional
 * code only if the condition is the same across the block; PTX ISA,
 * "barrier": on sm_70+ bar.sync counts threads and an arriving thread
 * waits for the non-exited threads of its warp), the deadlock report of a
 * __syncthreads that cannot complete, and the warp roles a kernel names
 * ("roles"), in the trace, the picture and the messages.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "support/run_kernel.h"
#include "support/sh.h"

static struct sim_report r;
static struct diag d;

/* A 64-thread kernel: body is the JSON of its statements. */
static int run_body(const char *roles, const char *body)
{
	char text[4096];
	snprintf(text, sizeof text,
		 "{\"kernel\": \"w\", \"source\": \"test_warps.c\", \"shared\": {\"s\": {\"elems\": 64}},\n"
		 " \"global\": {\"g\": {\"elems\": 64}},%s\n \"body\": [\n%s\n ]}",
		 roles, body);
	return run_kernel_text(text, 64, 1, NULL, &r, &d);
}

/*
 * Warp 1 splits: lanes 0-15 reach one __syncthreads, lanes 16-31 another.  bar.sync 0 counts
 * threads whichever instruction they arrive at, so the barrier completes (as on sm_70+), and
 * the second half is reported at its __syncthreads, naming the first's.
 */
Test(warps, a_warp_split_across_two_syncthreads_completes_and_is_reported)
{
	int rc = run_body("", "  {\"op\": \"if\", \"cond\": \"warp == 0 || lane < 16\",\n"
			      "   \"then\": [{\"op\": \"syncthreads\"}], \"else\": [{\"op\": \"syncthreads\"}]},\n"
			      "  {\"op\": \"shared_store\", \"addr\": \"s[tid]\"}");
	cr_assert_eq(rc, 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 1, "%s", r.hazard_text[0]);
	cr_assert(strstr(r.hazard_text[0], "block 0 thread 48: syncthreads at $.body[0].else[0] (line 5): warp 1's lanes "
					   "16-31 reach this __syncthreads, its lanes 0-15 another at $.body[0].then[0] (line 5)"),
		  "%s", r.hazard_text[0]);
}

/* Groups of a warp reaching the same __syncthreads one after another (independent scheduling) are fine. */
Test(warps, one_syncthreads_reached_by_a_warp_in_groups_is_fine)
{
	struct machine m;
	machine_defaults(&m);
	m.reconverge = RECONVERGE_INDEPENDENT;
	char text[1024];
	snprintf(text, sizeof text,
		 "{\"kernel\": \"w\", \"source\": \"t\", \"shared\": {\"s\": {\"elems\": 64}}, \"body\": ["
		 " {\"op\": \"if\", \"cond\": \"lane < 16\", \"then\": [{\"op\": \"fma\", \"n\": 8}]},"
		 " {\"op\": \"syncthreads\"}, {\"op\": \"shared_store\", \"addr\": \"s[tid]\"}]}");
	cr_assert_eq(run_kernel_text(text, 64, 1, &m, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 0, "%s", r.hazard_text[0]);
}

/* Lanes that exited are not live: the rest of the warp reaching __syncthreads together is fine. */
Test(warps, exited_lanes_do_not_make_a_partial_warp)
{
	int rc = run_body("", "  {\"op\": \"if\", \"cond\": \"lane >= 16\", \"then\": [{\"op\": \"exit\"}]},\n"
			      "  {\"op\": \"syncthreads\"},\n  {\"op\": \"shared_store\", \"addr\": \"s[tid]\"}");
	cr_assert_eq(rc, 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 0, "%s", r.hazard_text[0]);
}

/* Half of each warp waits at the __syncthreads, the other half at the if's reconvergence: exit 3, and who is where. */
Test(warps, the_deadlock_report_says_who_is_at_the_barrier_and_who_is_not)
{
	int rc = run_body(" \"roles\": {\"lead\": \"warp == 0\"},",
			  "  {\"op\": \"if\", \"cond\": \"warp == 1 && lane >= 24\", \"then\": [{\"op\": \"exit\"}]},\n"
			  "  {\"op\": \"if\", \"cond\": \"lane < 16\", \"then\": [{\"op\": \"syncthreads\"}]},\n"
			  "  {\"op\": \"shared_store\", \"addr\": \"s[tid]\"}");
	cr_assert_eq(rc, DIAG_DEADLOCK, "%s", d.msg);
	cr_assert(strstr(r.hint, "__syncthreads of block 0 can never complete: 32 of its 56 live threads arrived. At it: "
				 "warp 0 (lead) lanes 0-15, warp 1 lanes 0-15. Elsewhere (their waits above): warp 0 (lead) "
				 "lanes 16-31, warp 1 lanes 16-23. Exited: warp 1 lanes 24-31."),
		  "%s", r.hint);
	bool role_line = false;
	for (uint32_t i = 0; i < r.nblocked; i++)
		role_line |= r.blocked[i].warp == 0 && strcmp(r.blocked[i].role, "lead") == 0;
	cr_assert(role_line, "the blocked warp 0 carries its role");
	cr_assert_eq(r.hazards, 2, "each warp's half at the barrier: %s", r.hazard_text[0]);
	cr_assert(strstr(r.hazard_text[0], "block 0 thread 0 of warp 0 (lead): syncthreads at $.body[1].then[0] (line 5): "
					   "warp 0 (lead) waits at this __syncthreads with lanes 0-15, its live lanes 16-31 "
					   "on another path never arrive"),
		  "%s", r.hazard_text[0]);
	cr_assert(strstr(r.hazard_text[1], "warp 1 waits at this __syncthreads with lanes 0-15, its live lanes 16-23"), "%s",
		  r.hazard_text[1]);
}

/* Roles: one per warp, from conditions on warp; the kernel's name for each. */
Test(warps, roles_name_the_warps)
{
	struct launch l = {160, 1, 1};
	struct kernel k;
	int rc = load_kernel_text("{\"kernel\": \"w\", \"source\": \"t\", \"params\": {\"P\": 4},"
				  " \"roles\": {\"producer\": \"warp == P\", \"consumer\": \"warp < P\", \"comment\": \"c\"},"
				  " \"body\": []}",
				  &l, &k, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
	for (uint32_t w = 0; w < 4; w++)
		cr_assert_str_eq(kernel_warp_role(&k, w), "consumer");
	cr_assert_str_eq(kernel_warp_role(&k, 4), "producer");
	cr_assert_null(kernel_warp_role(&k, 5), "no such warp");
	kernel_free(&k);
}

/* The shipped warp-specialised GEMM names its warps: the trace's threads, the picture's rows, the report. */
Test(warps, the_gemm_roles_show_in_the_trace_the_picture_and_the_messages)
{
	char *out, *trace, *svg;
	cr_assert_eq(sh(SMSIM_BIN " run configs/experiments/gemm_warp_specialized_bulk.json --set batch_sz=8 --set fence=0"
			    " --no-timing --trace /tmp/smsim_test_warps_trace.json --svg /tmp/smsim_test_warps.svg",
			&out),
		     0);
	cr_assert(strstr(out, "hazard: block 0 thread 128 of warp 4 (producer): memcpy_async at"), "%s", out);
	cr_assert_eq(sh("cat /tmp/smsim_test_warps_trace.json", &trace), 0);
	cr_assert(strstr(trace, "\"thread_name\",\"args\":{\"name\":\"block 0 warp 4 (producer)\"}") &&
		  strstr(trace, "\"thread_name\",\"args\":{\"name\":\"block 0 warp 0 (consumer)\"}"),
		  "the trace's thread names");
	cr_assert_eq(sh("cat /tmp/smsim_test_warps.svg", &svg), 0);
	cr_assert(strstr(svg, ">block 0 warp 4 (producer)<") && strstr(svg, ">block 0 warp 3 (consumer)<"),
		  "the picture's row labels");
	remove("/tmp/smsim_test_warps_trace.json");
	remove("/tmp/smsim_test_warps.svg");
	free(out);
	free(trace);
	free(svg);
}

/*
 * A group's per-lane set writes its lanes and no other: lanes 0-15 together (simt_assign_values'
 * straight loop), then every third lane (its mask walk).  Lane 13 is the first whose index
 * leaves g, lane 15 the last lane of the first group; under both models that reconverge before
 * the store (independent scheduling lets the other lanes store first).
 */
Test(warps, a_group_s_per_lane_set_writes_its_lanes_alone)
{
	const char *text = "{\"kernel\": \"w\", \"source\": \"t\", \"global\": {\"g\": {\"elems\": 64}}, \"body\": ["
			   " {\"op\": \"let\", \"var\": \"x\", \"type\": \"int\", \"value\": 0},"
			   " {\"op\": \"if\", \"cond\": \"lane < 16\", \"then\": [{\"op\": \"set\", \"var\": \"x\", \"value\": "
			   "\"lane * 3\"}]},"
			   " {\"op\": \"if\", \"cond\": \"lane % 3 == 1\", \"then\": [{\"op\": \"set\", \"var\": \"x\", "
			   "\"value\": \"x + 7\"}]},"
			   " {\"op\": \"global_store\", \"addr\": \"g[x + 20]\"}]}";
	for (int model = 0; model < 2; model++) {
		struct machine m;
		machine_defaults(&m);
		if (model)
			m.reconverge = RECONVERGE_SIMT_STACK;
		cr_assert_neq(run_kernel_text(text, 64, 1, &m, &r, &d), 0);
		cr_assert(strstr(d.msg, "thread 13 writes g[66], outside its 64 elements (x=46)"), "%s", d.msg);
	}
	/* without the third lanes' set, lane 15 (x = 45) is the first outside */
	const char *solid = "{\"kernel\": \"w\", \"source\": \"t\", \"global\": {\"g\": {\"elems\": 64}}, \"body\": ["
			    " {\"op\": \"let\", \"var\": \"x\", \"type\": \"int\", \"value\": 0},"
			    " {\"op\": \"if\", \"cond\": \"lane < 16\", \"then\": [{\"op\": \"set\", \"var\": \"x\", "
			    "\"value\": \"lane * 3\"}]},"
			    " {\"op\": \"global_store\", \"addr\": \"g[x + 20]\"}]}";
	cr_assert_neq(run_kernel_text(solid, 64, 1, NULL, &r, &d), 0);
	cr_assert(strstr(d.msg, "thread 15 writes g[65], outside its 64 elements (x=45)"), "%s", d.msg);
	/* the odd lanes' store (lane_addrs' per-lane index and uniform element over a mask with gaps) */
	const char *odd = "{\"kernel\": \"w\", \"source\": \"t\", \"global\": {\"g\": {\"elems\": 64}}, \"body\": ["
			  " {\"op\": \"let\", \"var\": \"x\", \"type\": \"int\", \"value\": \"lane * 3\"},"
			  " {\"op\": \"if\", \"cond\": \"lane % 2\", \"then\": [{\"op\": \"global_store\", \"addr\": "
			  "\"g[x + 20]\"}]}]}";
	cr_assert_neq(run_kernel_text(odd, 64, 1, NULL, &r, &d), 0);
	cr_assert(strstr(d.msg, "thread 15 writes g[65], outside its 64 elements (x=45)"), "%s", d.msg);
}

/*
 * A cuda::barrier wait reads each lane's token (barrier.c's walk over a token variable): lanes
 * that share the phase just arrived in wait for it, and one lane's token that no arrive returned,
 * or that is negative, is named by its thread, in warp 1 as in warp 0.
 */
Test(warps, a_wait_names_the_lane_whose_token_is_wrong)
{
	static const struct {
		const char *set, *msg;
	} cases[] = {
		{"0", NULL},
		{"lane == 5 ? token + 3 : token", "thread 5: wait on bar with token 3, which no arrive returned"},
		{"warp == 1 && lane == 7 ? -2 : token", "thread 39: wait on bar with token -2, which no arrive returned"},
		{"lane < 16 ? token : token + 1", "thread 16: wait on bar with token 1, which no arrive returned"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[1024];
		snprintf(text, sizeof text,
			 "{\"kernel\": \"w\", \"source\": \"t\", \"barriers\": {\"bar\": {}}, \"body\": ["
			 " {\"op\": \"if\", \"cond\": \"tid == 0\", \"then\": [{\"op\": \"barrier_init\", \"barrier\": \"bar\","
			 " \"count\": \"block_size\"}]}, {\"op\": \"syncthreads\"},"
			 " {\"op\": \"barrier_arrive\", \"barrier\": \"bar\", \"token\": \"token\"},"
			 " {\"op\": \"set\", \"var\": \"token\", \"value\": \"%s\"},"
			 " {\"op\": \"barrier_wait\", \"barrier\": \"bar\", \"token\": \"token\"}]}",
			 cases[i].msg ? cases[i].set : "token");
		int rc = run_kernel_text(text, 64, 1, NULL, &r, &d);
		if (!cases[i].msg) {
			cr_assert_eq(rc, 0, "%s", d.msg);
			continue;
		}
		cr_assert_neq(rc, 0, "\"%s\" should fail", cases[i].set);
		cr_assert(strstr(d.msg, cases[i].msg), "\"%s\": %s", cases[i].set, d.msg);
	}
}

/*
 * Bulk stores (TMA stores) and proxy ordering, issue 20: the converse of
 * the bulk-load proxy hazard.  PTX ISA references, as cuda::ptx wraps them
 * (NVIDIA/cccl libcudacxx/include/cuda/__ptx/instructions/generated/):
 *   cp_async_bulk.h lines 172-196: cp.async.bulk.global.shared::cta.bulk_group
 *     [dstMem], [srcMem], size (PTX ISA 8.0, sm_90; 16-byte aligned, size % 16);
 *   cp_async_bulk_commit_group.h line 7: cp.async.bulk.commit_group;
 *   cp_async_bulk_wait_group.h lines 7 and 27: cp.async.bulk.wait_group N and
 *     cp.async.bulk.wait_group.read N (PTX ISA "cp.async.bulk.wait_group": wait
 *     until at most the newest N bulk async-groups are pending; .read: until
 *     their reads of the source are done);
 *   fence_proxy_async.h line 49: fence.proxy.async.shared::cta (PTX ISA "Memory
 *     Consistency Model", proxies: generic-proxy accesses and async-proxy ones of
 *     the same memory are ordered only through a proxy fence).
 * The epilogue is kernels/epilogue_bulk_store.json (line 20: the shared_store,
 * line 26: the bulk_store).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "support/run_experiment.h"
#include "support/run_kernel.h"
#include "support/sh.h"

static struct sim_report r;
static struct diag d;

#define RUN(name, ...)                                                                                  \
	run_experiment(name, (const char *const[]){__VA_ARGS__},                                       \
		       (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)), &r, &d)

#define STORE_AT "bulk_store at $.body[0].body[6].then[0] (line 26)"
#define WRITE_AT "$.body[0].body[3] (line 20)"

Test(proxy, the_fenced_and_waited_epilogue_is_clean)
{
	for (int stages = 1; stages <= 3; stages++) {
		char set[32];
		snprintf(set, sizeof set, "stages=%d", stages);
		cr_assert_eq(RUN("epilogue_bulk_store", set), 0, "%s", d.msg);
		cr_assert_eq(r.hazards + r.provenance_mismatches, 0, "stages=%d: %s", stages, r.hazard_text[0]);
		cr_assert_eq(r.bulk_copies, 8, "one bulk store per tile");
		cr_assert_eq(r.bulk_bytes, 8 * 512, "128 floats per tile");
	}
}

/* (a) st.shared then the async proxy's read with no fence.proxy.async: one hazard per bulk store, at it. */
Test(proxy, generic_writes_read_by_a_bulk_store_need_the_fence)
{
	cr_assert_eq(RUN("epilogue_bulk_store", "fence=0"), 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 8, "%s", r.hazard_text[0]);
	const char *h = r.hazard_text[0];
	cr_assert(strstr(h, "block 0 thread 0: " STORE_AT) && strstr(h, "wrote through the generic proxy at " WRITE_AT) &&
		  strstr(h, "without fence.proxy.async"),
		  "%s", h);
	cr_assert(strstr(r.hazard_text[1], "shared byte 512"), "the second tile's staging buffer: %s", r.hazard_text[1]);
}

/* (b) a refill of the staging buffer before a wait_group.read covers the store that reads it. */
Test(proxy, overwriting_a_bulk_stores_source_needs_wait_group_read)
{
	cr_assert_eq(RUN("epilogue_bulk_store", "wait=0"), 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 128 * (8 - 2), "each thread's refill of tiles 2..7: %s", r.hazard_text[0]);
	cr_assert(strstr(r.hazard_text[0], "block 0 thread 0: shared_store at " WRITE_AT) &&
		  strstr(r.hazard_text[0], "the bulk store by thread 0 at $.body[0].body[6].then[0] (line 26)") &&
		  strstr(r.hazard_text[0], "before a bulk_wait_group with \"read\" covering it (cycle"),
		  "%s", r.hazard_text[0]);
	cr_assert(strstr(r.hazard_text[1], "thread 1: shared_store") &&
		  strstr(r.hazard_text[1], "covering it and a __syncthreads after it"),
		  "another thread learns of the wait only through a barrier: %s", r.hazard_text[1]);
}

/* Checks off: the same run, no hazards counted. */
Test(proxy, checks_off_count_nothing)
{
	cr_assert_eq(RUN("epilogue_bulk_store", "fence=0", "wait=0", "check.dataflow=0"), 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 0);
}

/*
 * Thread 0 stores the warp's 128 bytes, commits, and waits: .read goes on once the source is read, the plain
 * wait once global memory has the bytes too; N = 1 with one group pending waits for nothing,
 * and a store no commit closed is in no group.
 */
static uint64_t wait_cycles(const char *wait, bool commit)
{
	char text[2048];
	snprintf(text, sizeof text,
		 "{\"kernel\": \"w\", \"source\": \"test_proxy.c\", \"shared\": {\"s\": {\"elems\": 1024}}, \"global\": {\"g\": {\"elems\": 1024}},"
		 " \"body\": [{\"op\": \"shared_store\", \"addr\": \"s[tid]\"}, {\"op\": \"fence_proxy_async\"},"
		 " {\"op\": \"syncthreads\"}, {\"op\": \"if\", \"cond\": \"tid == 0\", \"then\": ["
		 " {\"op\": \"bulk_store\", \"dst\": \"g[0]\", \"src\": \"s[0]\", \"bytes\": 128}%s%s%s]}]}",
		 commit ? ", {\"op\": \"bulk_commit_group\"}" : "", wait[0] ? ", " : "", wait);
	cr_assert_eq(run_kernel_text(text, 32, 1, NULL, &r, &d), 0, "%s", d.msg);
	cr_assert_eq(r.hazards, 0, "%s", r.hazard_text[0]);
	return r.cycles;
}

Test(proxy, wait_group_read_goes_on_before_the_writes_complete)
{
	uint64_t none = wait_cycles("", true);
	uint64_t rd = wait_cycles("{\"op\": \"bulk_wait_group\", \"n\": 0, \"read\": true}", true);
	uint64_t all = wait_cycles("{\"op\": \"bulk_wait_group\", \"n\": 0}", true);
	uint64_t n1 = wait_cycles("{\"op\": \"bulk_wait_group\", \"n\": 1}", true);
	uint64_t open = wait_cycles("{\"op\": \"bulk_wait_group\", \"n\": 0}", false);
	cr_assert(none < rd && rd < all, "no wait %llu < .read %llu < full %llu", (unsigned long long)none,
		  (unsigned long long)rd, (unsigned long long)all);
	cr_assert_lt(n1, rd, "N = 1 leaves the only group pending: %llu", (unsigned long long)n1);
	cr_assert_lt(open, rd, "an uncommitted store is in no group: %llu", (unsigned long long)open);
}

/* End to end: smsim run prints the hazard with the op, path and line, and exits 0; same output twice. */
Test(proxy, the_cli_reports_the_missing_fence)
{
	char *a, *b, *clean;
	cr_assert_eq(sh(SMSIM_BIN " run configs/experiments/epilogue_bulk_store.json --set fence=0 --no-timing", &a), 0);
	cr_assert_eq(sh(SMSIM_BIN " run configs/experiments/epilogue_bulk_store.json --set fence=0 --no-timing", &b), 0);
	cr_assert(strstr(a, "dataflow         8 hazard(s)") && strstr(a, STORE_AT), "%s", a);
	cr_assert_str_eq(a, b, "deterministic");
	cr_assert_eq(sh(SMSIM_BIN " run configs/experiments/epilogue_bulk_store.json", &clean), 0);
	cr_assert(strstr(clean, "dataflow         0 hazard(s)"), "%s", clean);
	free(a);
	free(b);
	free(clean);
}

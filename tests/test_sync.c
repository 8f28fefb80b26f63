/*
 * The forms a block barrier compiles to: block.sync() carries its convergence check.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "support/run_kernel.h"

static struct diag d;

/*
 * Cooperative groups' block.sync() (cg::sync(block), cg::wait's group.sync()) is compiled with a
 * convergence check before its BAR.SYNC (traces/h100/pipelines.sass, with_staging_scope_thread<2>
 * 0x1130-0x1150: UMOV, BRA.DIV, BAR.SYNC); __syncthreads() is the BAR.SYNC alone (forms.sass).
 */
Test(sync, block_sync_carries_its_convergence_check)
{
	const char *fmt = "{\"kernel\": \"t\", \"source\": \"test\", \"body\": [{\"op\": \"syncthreads\"%s}]}";
	const enum iclass want[] = {IC_UNI, IC_BRA, IC_BAR};
	for (int cg = 0; cg < 2; cg++) {
		char text[256];
		snprintf(text, sizeof text, fmt, cg ? ", \"form\": \"block.sync\"" : "");
		struct launch l = {64, 1, 1};
		struct kernel k;
		cr_assert_eq(load_kernel_text(text, &l, &k, &d), 0, "%s", d.msg);
		const struct lform *q = &k.lowered[0];
		cr_assert_eq(q->n, cg ? 3 : 1, "%s: %d instructions", cg ? "block.sync()" : "__syncthreads()", q->n);
		for (int i = 0; i < q->n; i++)
			cr_assert_eq(q->code[i].cls, want[cg ? i : 2], "instruction %d", i);
		kernel_free(&k);
	}
}

/*
 * libFuzzer harness: the kernel loader, then (when the input loads) a short
 * simulation on the default machine.  Exercises jdoc, the expression
 * compiler through the loader, flattening, and the engine under small limits.
 * Every input also goes through kernel_check (smsim check), whose loader goes
 * on past each error with whatever the failed part left behind.
 *
 * Build: meson setup build-fuzz -Dfuzz=true (CC=clang); see tests/fuzz/smoke.sh.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "isa/kernel.h"
#include "sim/engine/machine.h"
#include "sim/engine/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static void cleanup(void)
{
	if (path[0])
		unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		snprintf(path, sizeof path, "/tmp/smsim_fuzz_kernel_%ld.json", (long)getpid());
		atexit(cleanup);
	}
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);

	static struct kernel k;
	static struct diag d;
	static struct sim_report rep;
	struct launch launch = {.block_size = 64, .blocks = 1, .grid_blocks = 2};
	struct diag_list errs = {0};
	int checked = kernel_check(path, NULL, 0, &launch, &k, &errs);
	if ((checked == 0) != (errs.n + errs.more == 0))
		abort(); /* an error without a message, or a message without an error */
	kernel_free(&k);
	diag_list_free(&errs);
	memset(&d, 0, sizeof d);
	int loaded = kernel_load(path, NULL, 0, &launch, &k, &d);
	if ((loaded == 0) != (checked == 0))
		abort(); /* check and load disagree on whether the kernel is valid */
	if (loaded != 0)
		return 0;
	struct machine m;
	machine_defaults(&m);
	struct sim_limits lim = sim_default_limits();
	lim.max_cycles = 200000;
	lim.max_events = 200000;
	memset(&rep, 0, sizeof rep);
	(void)sim_run(&k, &m, &launch, &lim, &rep, &d);
	kernel_free(&k);
	return 0;
}

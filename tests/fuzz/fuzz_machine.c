/*
 * libFuzzer harness: the machine config loader (sim/machine.h), plus a few
 * machine_set calls on whatever loaded.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/engine/machine.h"

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
		snprintf(path, sizeof path, "/tmp/smsim_fuzz_machine_%ld.json", (long)getpid());
		atexit(cleanup);
	}
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	struct machine m;
	struct diag d = {0};
	machine_defaults(&m);
	if (machine_load(path, &m, &d) == 0) {
		(void)machine_set(&m, "dram_latency", "1e3", &d);
		(void)machine_set(&m, "scheduler", "lrr", &d);
		(void)machine_set(&m, "clock_ghz", "nan", &d);
		(void)machine_set(&m, "max_warps", "99999999999999999999", &d);
	}
	return 0;
}

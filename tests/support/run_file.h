/*
 * run_file: test support — load a kernel description from tests/semantics/
 * with NAME=VALUE parameter overrides and simulate it on a machine (NULL:
 * the H100 defaults).  rc is the diag code of load or run.
 */
#ifndef SMSIM_TEST_RUN_FILE_H
#define SMSIM_TEST_RUN_FILE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/kernel.h"
#include "sim/engine/machine.h"
#include "sim/engine/sim.h"
#include "run_kernel.h"

static inline int run_file_ov(const char *name, const char *sets, int64_t block_size, const struct machine *m,
			      struct sim_report *r, struct diag *d)
{
	char path[256];
	snprintf(path, sizeof path, "tests/semantics/%s.json", name);
	struct param_override ov[16];
	int nov = 0;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", sets ? sets : "");
	for (char *tok = strtok(buf, " "); tok && nov < 16; tok = strtok(NULL, " ")) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return -1;
		*eq = '\0';
		ov[nov] = (struct param_override){.value = strtoll(eq + 1, NULL, 0)};
		snprintf(ov[nov].name, sizeof ov[nov].name, "%s", tok);
		nov++;
	}
	struct launch l = {block_size, 1, 1};
	struct kernel k;
	int rc = kernel_load(path, ov, nov, &l, &k, d);
	return rc == 0 ? run_loaded_kernel(&k, &l, m, r, d) : rc;
}

#endif

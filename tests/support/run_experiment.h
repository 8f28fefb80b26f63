/*
 * Test helper: runs a shipped experiment (configs/experiments/NAME.json)
 * with NAME=VALUE settings ("stages=1", "machine.reconverge=simt_stack"),
 * as `smsim run --set` would, into *r; rc is the diag code of load or run.
 */
#ifndef SMSIM_TEST_RUN_EXPERIMENT_H
#define SMSIM_TEST_RUN_EXPERIMENT_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/experiment.h"

/* As run_experiment, with the run's timeline recorded into r->trace where trace is set. */
static inline int run_experiment_traced(const char *name, const char *const *sets, int nsets, bool trace,
					struct sim_report *r, struct diag *d)
{
	char file[256];
	snprintf(file, sizeof file, "configs/experiments/%s.json", name);
	struct setting st[16];
	char buf[16][64];
	cr_assert_leq(nsets, 16);
	for (int i = 0; i < nsets; i++) {
		snprintf(buf[i], sizeof buf[i], "%s", sets[i]);
		char *eq = strchr(buf[i], '=');
		cr_assert(eq, "a setting is NAME=VALUE: %s", sets[i]);
		*eq = '\0';
		st[i] = (struct setting){buf[i], eq + 1};
	}
	struct experiment *e = calloc(1, sizeof *e);
	int rc = experiment_load(file, st, nsets, e, d);
	if (rc == 0) {
		e->limits.trace = trace;
		rc = sim_run(&e->kernel, &e->machine, &e->launch, &e->limits, r, d);
	}
	experiment_free(e);
	free(e);
	return rc;
}

static inline int run_experiment(const char *name, const char *const *sets, int nsets, struct sim_report *r,
				 struct diag *d)
{
	return run_experiment_traced(name, sets, nsets, false, r, d);
}

#endif

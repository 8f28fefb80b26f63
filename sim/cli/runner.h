/*
 * runner: load an experiment with its settings and simulate it — the one
 * path that run, compare and sweep share.
 */
#ifndef SMSIM_RUNNER_H
#define SMSIM_RUNNER_H

#include <stdbool.h>

#include "experiment.h"
#include "sim.h"

/* What a run records besides its report (sim_limits trace and op_counts). */
enum runner_record { RUNNER_TRACE = 1, RUNNER_OP_COUNTS = 2 };

/*
 * Returns the exit status the CLI would give: 0, 2 (input), 3 (deadlock) or 4 (limit).
 * record: enum runner_record bits.
 */
int runner_run(const char *file, const struct setting *sets, int nsets, unsigned record, struct experiment *e,
	       struct sim_report *r, struct diag *d);

/* Splits "NAME=VALUE" in place; false when it has no '=' or no name. */
bool runner_split_setting(char *arg, struct setting *out);

#endif

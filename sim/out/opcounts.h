/*
 * opcounts: where a run's warp-instructions were issued, op by op (run
 * --ops): the simulated counterpart of Nsight Compute's per-source-line
 * instruction counts, to set each statement's lowering beside the SASS
 * nvcc makes of it.
 */
#ifndef SMSIM_OPCOUNTS_H
#define SMSIM_OPCOUNTS_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "../../isa/kernel.h"
#include "sim.h"

/* The table of ops that issued (r->op_issued); nothing when it was not recorded. */
void opcounts_text(FILE *out, const struct kernel *k, const struct sim_report *r);
/* The same as a JSON array, one object per op that issued; NULL when not recorded. */
cJSON *opcounts_json(const struct kernel *k, const struct sim_report *r);

#endif

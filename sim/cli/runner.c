#include "runner.h"

#include <string.h>

int runner_run(const char *file, const struct setting *sets, int nsets, unsigned record, struct experiment *e,
	       struct sim_report *r, struct diag *d)
{
	*r = (struct sim_report){0};
	int rc = experiment_open(file, sets, nsets, e, d);
	if (rc)
		return rc;
	e->limits.trace = record & (RUNNER_TRACE | RUNNER_OP_COUNTS); /* the counts are kept where the trace is */
	e->limits.op_counts = record & RUNNER_OP_COUNTS;
	return sim_run(&e->kernel, &e->machine, &e->launch, &e->limits, r, d);
}

bool runner_split_setting(char *arg, struct setting *out)
{
	char *eq = arg ? strchr(arg, '=') : NULL;
	if (!eq || eq == arg)
		return false;
	*eq = '\0';
	*out = (struct setting){arg, eq + 1};
	return true;
}

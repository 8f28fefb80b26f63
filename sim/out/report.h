/*
 * report: a run's sim_report as text for people and as JSON for programs.
 * The JSON keys are stable and documented in the README.
 */
#ifndef SMSIM_REPORT_H
#define SMSIM_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "experiment.h"
#include "sim.h"

/* The JSON report; timing=false leaves out the host-timing fields under "sim". */
cJSON *report_json(const struct experiment *e, const struct sim_report *r, int status, bool timing);
void report_text(FILE *out, const struct experiment *e, const struct sim_report *r, int status, bool timing);

#endif

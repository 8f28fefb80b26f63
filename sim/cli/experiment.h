/*
 * experiment: what to run — a machine, a kernel, its parameters and launch
 * — read from configs/experiments/NAME.json and adjusted by --set.
 */
#ifndef SMSIM_EXPERIMENT_H
#define SMSIM_EXPERIMENT_H

#include "../../isa/kernel.h"
#include "machine.h"
#include "sim.h"

#define EXP_MAX_PARAMS 64

struct experiment {
	char name[64];
	char file[512];
	char kernel_file[1024];
	char machine_file[1024];
	struct machine machine;
	struct launch launch;
	struct sim_limits limits;
	struct param_override params[EXP_MAX_PARAMS];
	int nparams;
	struct kernel kernel; /* compiled for the final params and launch */
	bool kernel_alone;    /* a kernel file run without an experiment (experiment_open) */
	char launch_from[96]; /* the last --set of a launch field ("--set blocks=40"), "" when none */
};

/* One --set NAME=VALUE. */
struct setting {
	const char *name;
	const char *value;
};

/*
 * Loads the experiment, its machine and kernel, applying settings in
 * order after the file's own values.  Errors name the file and JSON path,
 * or the --set that is wrong.
 */
int experiment_load(const char *file, const struct setting *sets, int nsets, struct experiment *e, struct diag *d);

/* The launch a kernel checked without an experiment gets: one block of this many threads. */
#define EXP_DEFAULT_BLOCK_SIZE 256
/* The machine a kernel file run alone gets, relative to the checkout (else the built-in defaults). */
#define EXP_DEFAULT_MACHINE "configs/machines/h100.json"

/*
 * For run, compare and the other commands that simulate: an experiment as
 * experiment_load does, or a kernel file alone (kernel_alone: the machine
 * EXP_DEFAULT_MACHINE of the checkout the kernel is in, else the built-in
 * one; the kernel's own params; one block of EXP_DEFAULT_BLOCK_SIZE
 * threads; then sets).  Any other file (a comparison, a sweep, a machine)
 * is an error that says what the command takes.
 */
int experiment_open(const char *file, const struct setting *sets, int nsets, struct experiment *e, struct diag *d);

/*
 * For smsim check: as experiment_load, but every error goes to errs and it
 * goes on as far as it can.  file is the experiment, or NULL for a kernel
 * alone (the built-in machine, one block of EXP_DEFAULT_BLOCK_SIZE threads,
 * then sets); kernel_file replaces the experiment's own kernel (NULL: keep
 * it).  *e is filled as far as it got, for the caller to describe and
 * experiment_free.  Returns 0 when there was no error.
 */
int experiment_check(const char *file, const char *kernel_file, const struct setting *sets, int nsets,
		     struct experiment *e, struct diag_list *errs);
void experiment_free(struct experiment *e);

#endif

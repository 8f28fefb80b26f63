/*
 * run_kernel: test support — write a kernel description to a temporary
 * file and simulate it on the default (H100) machine.
 */
#ifndef SMSIM_TEST_RUN_KERNEL_H
#define SMSIM_TEST_RUN_KERNEL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "isa/kernel.h"
#include "sim/engine/machine.h"
#include "sim/engine/sim.h"

/* Writes text to a fresh temporary .json file; returns its path (static buffer per call site). */
static inline const char *write_temp_json(const char *text, char *path, size_t pathsz)
{
	snprintf(path, pathsz, "/tmp/smsim_test_XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	size_t len = strlen(text);
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		return NULL;
	}
	close(fd);
	return path;
}

/* Loads a kernel description given as text for launch l; rc as kernel_load's (-1: no temporary file). */
static inline int load_kernel_text(const char *text, const struct launch *l, struct kernel *k, struct diag *d)
{
	char path[64];
	if (!write_temp_json(text, path, sizeof path))
		return -1;
	int rc = kernel_load(path, NULL, 0, l, k, d);
	unlink(path);
	return rc;
}

/* Runs a loaded kernel with the default limits on m (NULL: the defaults) and frees it. */
static inline int run_loaded_kernel(struct kernel *k, const struct launch *l, const struct machine *m,
				    struct sim_report *r, struct diag *d)
{
	struct machine def;
	machine_defaults(&def);
	struct sim_limits lim = sim_default_limits();
	int rc = sim_run(k, m ? m : &def, l, &lim, r, d);
	kernel_free(k);
	return rc;
}

/* Loads and runs; rc is the diag code of load or run.  m may be NULL for defaults. */
static inline int run_kernel_text(const char *text, int64_t block_size, int64_t blocks, const struct machine *m,
				  struct sim_report *r, struct diag *d)
{
	struct launch l = {block_size, blocks, blocks};
	struct kernel k;
	int rc = load_kernel_text(text, &l, &k, d);
	return rc == 0 ? run_loaded_kernel(&k, &l, m, r, d) : rc;
}

#endif

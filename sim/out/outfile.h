/*
 * outfile: output files that appear whole or not at all.
 *
 * Written to a temporary name in the same directory and renamed over the
 * target only once every byte is out, so an interrupted run never leaves a
 * truncated trace, picture or CSV behind.  Write errors (full disk,
 * unwritable path) come back as a DIAG_INPUT naming the file.
 */
#ifndef SMSIM_OUTFILE_H
#define SMSIM_OUTFILE_H

#include <stdio.h>

#include "../../isa/diag.h"

struct outfile {
	FILE *f;
	char path[1024];
	char tmp[1100];
};

int outfile_open(struct outfile *o, const char *path, struct diag *d);
/* Flushes, closes and renames; on any error removes the temporary file. */
int outfile_commit(struct outfile *o, struct diag *d);
void outfile_abort(struct outfile *o);

#endif

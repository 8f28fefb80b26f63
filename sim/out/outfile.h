/*
 * outfile: where --trace, --svg and --csv write, safe whatever the path is.
 *
 * A regular file, or a path where nothing is yet, is written to a temporary
 * file beside it and renamed over it only once every byte is out, so an
 * interrupted run never leaves a truncated trace, picture or CSV behind.  A
 * symbolic link is followed to its target first: the target is what gets
 * replaced (keeping its permission bits), and the link stays a link.
 * Anything else that can be written — a FIFO, a character device, a
 * socket's node — is written straight through, since renaming over it would
 * replace the node instead of feeding its reader.  "-" is stdout.
 *
 * Write errors (a full disk, ENOSPC from /dev/full, a FIFO or pipe whose
 * reader went away) come back as a DIAG_INPUT naming the path.  While a
 * stream (not a regular file) is open, SIGPIPE is ignored, so a reader that
 * closes early is a write error and not a silent death; it is restored at
 * commit or abort.
 */
#ifndef SMSIM_OUTFILE_H
#define SMSIM_OUTFILE_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "../../isa/diag.h"

enum outfile_kind {
	OUTFILE_RENAME, /* a regular file: temporary beside the target, then rename */
	OUTFILE_STREAM, /* a FIFO, device or the like: written in place */
	OUTFILE_STDOUT, /* "-" */
};

struct outfile {
	FILE *f;
	enum outfile_kind kind;
	char path[1024];   /* as the user gave it, for messages */
	char target[4096]; /* OUTFILE_RENAME: the file replaced (path with its links followed) */
	char tmp[4200];    /* OUTFILE_RENAME: the temporary beside target */
	int err;           /* the errno of a write that failed while filling, when known (0: none) */
	bool pipe_ignored; /* SIGPIPE is ignored until commit or abort; old_pipe restores it */
	struct sigaction old_pipe;
};

/* True for "-", the name of stdout. */
bool outfile_is_stdout(const char *path);

/*
 * Opens path for writing as above.  Blocks on a FIFO until it has a reader,
 * as any writer does.  On failure nothing is left behind and d names path.
 */
int outfile_open(struct outfile *o, const char *path, struct diag *d);
/* Flushes and closes (a regular file: renames over the target); on any error removes the temporary. */
int outfile_commit(struct outfile *o, struct diag *d);
/* Gives up: removes the temporary; o may be zeroed or already committed. */
void outfile_abort(struct outfile *o);

/*
 * The whole of writing one output: opens path, lets fill write it and
 * commits.  fill returns 0, or nonzero when it could not finish: when the
 * stream itself failed that is reported as a write error, otherwise fill
 * has filled d and its code is returned; either way nothing is left behind.
 */
int outfile_write(const char *path, int (*fill)(FILE *f, void *ctx, struct diag *d), void *ctx, struct diag *d);

#endif

#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* As the kernel's own limit on links followed in one lookup (Linux MAXSYMLINKS). */
#define MAX_LINK_HOPS 40

bool outfile_is_stdout(const char *path)
{
	return strcmp(path, "-") == 0;
}

/*
 * Follows path's symbolic links to the file they finally name, which need
 * not exist (a link to a file not written yet).  Fills out and, when that
 * file exists, *st; returns 0 or an errno.
 */
static int follow_links(const char *path, char *out, size_t outsz, struct stat *st, bool *exists)
{
	char cur[4096], link[4096];
	if (strlen(path) >= sizeof cur)
		return ENAMETOOLONG;
	snprintf(cur, sizeof cur, "%s", path);
	for (int hops = 0;; hops++) {
		if (lstat(cur, st) != 0) {
			if (errno != ENOENT)
				return errno;
			*exists = false;
			break;
		}
		if (!S_ISLNK(st->st_mode)) {
			*exists = true;
			break;
		}
		if (hops == MAX_LINK_HOPS)
			return ELOOP;
		ssize_t n = readlink(cur, link, sizeof link - 1);
		if (n < 0)
			return errno;
		link[n] = '\0';
		/* A relative link is relative to the directory that holds it. */
		const char *slash = strrchr(cur, '/');
		if (link[0] == '/' || !slash) {
			snprintf(cur, sizeof cur, "%s", link);
		} else {
			int dir = (int)(slash - cur);
			if ((size_t)dir + 1 + (size_t)n >= sizeof cur)
				return ENAMETOOLONG;
			memmove(cur + dir + 1, link, (size_t)n + 1);
		}
	}
	if (strlen(cur) >= outsz)
		return ENAMETOOLONG;
	snprintf(out, outsz, "%s", cur);
	return 0;
}

static void ignore_sigpipe(struct outfile *o)
{
	struct sigaction ign = {0};
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	o->pipe_ignored = sigaction(SIGPIPE, &ign, &o->old_pipe) == 0;
}

static void restore_sigpipe(struct outfile *o)
{
	if (o->pipe_ignored)
		sigaction(SIGPIPE, &o->old_pipe, NULL);
	o->pipe_ignored = false;
}

/* A regular file (or none yet): a temporary beside it with the mode the result should have. */
static int open_rename(struct outfile *o, const struct stat *st, bool exists, struct diag *d)
{
	o->kind = OUTFILE_RENAME;
	snprintf(o->tmp, sizeof o->tmp, "%s.tmp-XXXXXX", o->target);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		int e = errno;
		o->tmp[0] = '\0';
		return diag_set(d, DIAG_INPUT, "%s: cannot create: %s", o->path, strerror(e));
	}
	/* mkstemp makes the file private; give it the replaced file's mode, or the one a plain fopen would. */
	mode_t mode;
	if (exists) {
		mode = st->st_mode & 07777;
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		unlink(o->tmp);
		o->tmp[0] = '\0';
		return diag_set(d, DIAG_INPUT, "%s: cannot write: %s", o->path, strerror(e));
	}
	return 0;
}

/* Anything else: written in place, as a shell's redirection would. */
static int open_stream(struct outfile *o, struct diag *d)
{
	o->kind = OUTFILE_STREAM;
	int fd = open(o->target, O_WRONLY | O_NOCTTY);
	if (fd < 0)
		return diag_set(d, DIAG_INPUT, "%s: cannot write: %s", o->path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		close(fd);
		return diag_set(d, DIAG_INPUT, "%s: changed while it was being opened; try again", o->path);
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		close(fd);
		return diag_set(d, DIAG_INPUT, "%s: cannot write: %s", o->path, strerror(e));
	}
	ignore_sigpipe(o);
	return 0;
}

int outfile_open(struct outfile *o, const char *path, struct diag *d)
{
	*o = (struct outfile){0};
	if (!path[0])
		return diag_set(d, DIAG_INPUT, "an empty output file name; expected a path, or - for standard output");
	if (strlen(path) >= sizeof o->path)
		return diag_set(d, DIAG_INPUT, "%s: output path too long", path);
	snprintf(o->path, sizeof o->path, "%s", path);
	if (outfile_is_stdout(path)) {
		o->kind = OUTFILE_STDOUT;
		o->f = stdout;
		ignore_sigpipe(o);
		return 0;
	}
	struct stat st;
	bool exists = false;
	/*
	 * A pipe, FIFO or device reached through links the walk below cannot name
	 * (/dev/stdout -> /proc/self/fd/1 -> "pipe:[N]") is opened as given.
	 */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		snprintf(o->target, sizeof o->target, "%s", path);
		return open_stream(o, d);
	}
	int e = follow_links(path, o->target, sizeof o->target, &st, &exists);
	if (e)
		return diag_set(d, DIAG_INPUT, "%s: cannot create: %s", path, strerror(e));
	if (!exists || S_ISREG(st.st_mode))
		return open_rename(o, &st, exists, d);
	if (S_ISDIR(st.st_mode))
		return diag_set(d, DIAG_INPUT, "%s: is a directory; expected a file name", path);
	return open_stream(o, d);
}

int outfile_commit(struct outfile *o, struct diag *d)
{
	if (!o->f)
		return diag_set(d, DIAG_INPUT, "%s: not open", o->path);
	/* Flushing again after a failed write may give its reason; else it is what filling saw. */
	errno = 0;
	bool bad = fflush(o->f) != 0 || ferror(o->f);
	int e = errno ? errno : o->err;
	if (o->kind != OUTFILE_STDOUT && fclose(o->f) != 0 && !bad) {
		bad = true;
		e = errno;
	}
	o->f = NULL;
	restore_sigpipe(o);
	if (!bad && o->kind == OUTFILE_RENAME && rename(o->tmp, o->target) != 0) {
		bad = true;
		e = errno;
	}
	if (o->kind == OUTFILE_RENAME && bad)
		unlink(o->tmp);
	o->tmp[0] = '\0';
	if (!bad)
		return 0;
	const char *name = o->kind == OUTFILE_STDOUT ? "stdout" : o->path;
	if (e)
		return diag_set(d, DIAG_INPUT, "%s: write failed: %s", name, strerror(e));
	return diag_set(d, DIAG_INPUT, "%s: write failed", name);
}

void outfile_abort(struct outfile *o)
{
	if (o->f && o->kind != OUTFILE_STDOUT)
		fclose(o->f);
	else if (o->f)
		fflush(o->f);
	o->f = NULL;
	restore_sigpipe(o);
	if (o->kind == OUTFILE_RENAME && o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = '\0';
}

int outfile_write(const char *path, int (*fill)(FILE *f, void *ctx, struct diag *d), void *ctx, struct diag *d)
{
	struct outfile o;
	int rc = outfile_open(&o, path, d);
	if (rc)
		return rc;
	errno = 0;
	rc = fill(o.f, ctx, d);
	if (ferror(o.f))
		o.err = errno; /* stdio keeps the error flag, not the reason: this is the failed write's */
	if (rc && !ferror(o.f)) {
		outfile_abort(&o);
		return rc;
	}
	return outfile_commit(&o, d);
}

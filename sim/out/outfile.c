#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_open(struct outfile *o, const char *path, struct diag *d)
{
	*o = (struct outfile){0};
	if (strlen(path) >= sizeof o->path)
		return diag_set(d, DIAG_INPUT, "%s: output path too long", path);
	snprintf(o->path, sizeof o->path, "%s", path);
	snprintf(o->tmp, sizeof o->tmp, "%s.tmp-XXXXXX", path);
	int fd = mkstemp(o->tmp);
	if (fd < 0)
		return diag_set(d, DIAG_INPUT, "%s: cannot create: %s", path, strerror(errno));
	/* mkstemp makes the file private; give it the mode a plain fopen would have. */
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0) {
		int e = errno;
		close(fd);
		unlink(o->tmp);
		return diag_set(d, DIAG_INPUT, "%s: cannot write: %s", path, strerror(e));
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		close(fd);
		unlink(o->tmp);
		return diag_set(d, DIAG_INPUT, "%s: cannot write: %s", path, strerror(e));
	}
	return 0;
}

int outfile_commit(struct outfile *o, struct diag *d)
{
	if (!o->f)
		return diag_set(d, DIAG_INPUT, "%s: not open", o->path);
	int bad = ferror(o->f) || fflush(o->f) != 0;
	int e = errno;
	if (fclose(o->f) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	o->f = NULL;
	if (!bad && rename(o->tmp, o->path) != 0) {
		bad = 1;
		e = errno;
	}
	if (bad) {
		unlink(o->tmp);
		return diag_set(d, DIAG_INPUT, "%s: write failed: %s", o->path, strerror(e));
	}
	return 0;
}

void outfile_abort(struct outfile *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp[0])
		unlink(o->tmp);
}

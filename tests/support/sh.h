/* Runs a shell command for a test: its exit status (128 when it did not exit), its stdout into *out (malloc'd) or dropped. */
#ifndef SMSIM_TEST_SH_H
#define SMSIM_TEST_SH_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

static inline int sh(const char *cmd, char **out)
{
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	size_t cap = 1 << 16, n = 0, got;
	char *buf = malloc(cap);
	while ((got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
		n += got;
		if (n + 1 >= cap)
			buf = realloc(buf, cap *= 2);
	}
	buf[n] = '\0';
	int st = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

#endif

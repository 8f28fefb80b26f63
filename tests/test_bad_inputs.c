/*
 * Malformed inputs, end to end: every row of tests/bad/expected.tsv runs
 * the smsim command line on one experiment and checks the exit code, the
 * message (every fragment, and FILE:LINE:COL: where the row asks; fragments
 * starting with > are looked for in the report on stdout), that
 * the run ends within a few seconds, and that no sanitizer spoke up.
 * The table's format is described at its top.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "isa/jdoc.h"

#define TABLE "tests/bad/expected.tsv"
#define BAD_DIR "tests/bad/"
/* Wall-clock budget of one run; every runaway case sets small limits. */
#define MAX_SECONDS 5.0
/* A hang still ends: coreutils timeout kills the run (exit 124 fails the row). */
#define KILL_AFTER "30"
#define MAX_ROWS 1024

struct row {
	int line;
	char *file, *args, *frags;
	int code;
};

struct run {
	int status;
	double seconds;
	char *out, *err;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct run run_smsim(const char *file, const char *args)
{
	struct run r = {0};
	char errfile[] = "/tmp/smsim_bad_err_XXXXXX";
	int fd = mkstemp(errfile);
	cr_assert_geq(fd, 0);
	close(fd);
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "timeout -k 2 " KILL_AFTER " %s run " BAD_DIR "%s %s 2>%s </dev/null", SMSIM_BIN,
		 file, strcmp(args, "-") ? args : "", errfile);
	double t0 = now_s();
	FILE *p = popen(cmd, "r");
	cr_assert(p, "popen %s", cmd);
	size_t cap = 1 << 16, n = 0, got;
	r.out = malloc(cap);
	cr_assert(r.out);
	while ((got = fread(r.out + n, 1, cap - n - 1, p)) > 0) {
		n += got;
		if (n + 1 >= cap) {
			r.out = realloc(r.out, cap *= 2);
			cr_assert(r.out);
		}
	}
	r.out[n] = '\0';
	int st = pclose(p);
	r.seconds = now_s() - t0;
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	size_t len = 0;
	r.err = jdoc_read_file(errfile, &len);
	if (!r.err)
		r.err = strdup("");
	else
		for (size_t i = 0; i < len; i++) /* keep a stray NUL from hiding the rest */
			if (!r.err[i])
				r.err[i] = '?';
	remove(errfile);
	return r;
}

/* "FILE:" then digits ":" digits ":" somewhere in text. */
static bool has_location(const char *text, const char *file)
{
	size_t fl = strlen(file);
	for (const char *p = strstr(text, file); p; p = strstr(p + 1, file)) {
		const char *q = p + fl;
		if (*q++ != ':' || !(*q >= '0' && *q <= '9'))
			continue;
		while (*q >= '0' && *q <= '9')
			q++;
		if (*q++ != ':' || !(*q >= '0' && *q <= '9'))
			continue;
		while (*q >= '0' && *q <= '9')
			q++;
		if (*q == ':')
			return true;
	}
	return false;
}

/* A location fragment: "FILE" (any line:col) or "FILE:LINE:COL" (exactly). */
static bool location_ok(const char *err, const char *loc)
{
	const char *c2 = strrchr(loc, ':');
	if (c2 && c2[1]) {
		const char *c1 = c2;
		while (c1 > loc && c1[-1] != ':')
			c1--;
		bool digits = c1 > loc;
		for (const char *p = c1; p < c2 && digits; p++)
			digits = *p >= '0' && *p <= '9';
		for (const char *p = c2 + 1; *p && digits; p++)
			digits = *p >= '0' && *p <= '9';
		if (digits && c1 - 1 > loc) {
			char want[1100];
			snprintf(want, sizeof want, "%s:", loc);
			return strstr(err, want) != NULL;
		}
	}
	return has_location(err, loc);
}

static char *text_dup;

static int load_table(struct row *rows)
{
	size_t len = 0;
	text_dup = jdoc_read_file(TABLE, &len);
	cr_assert(text_dup, "cannot read " TABLE " (run from the project root)");
	int n = 0, line = 0;
	for (char *save = NULL, *l = strtok_r(text_dup, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		line++;
		if (l[0] == '#' || l[0] == '\0')
			continue;
		char *cols[4];
		int nc = 0;
		for (char *p = l; nc < 4; nc++) {
			cols[nc] = p;
			char *tab = strchr(p, '\t');
			if (!tab) {
				nc++;
				break;
			}
			*tab = '\0';
			p = tab + 1;
		}
		cr_assert_eq(nc, 4, TABLE ":%d: expected 4 tab-separated columns", line);
		cr_assert_lt(n, MAX_ROWS);
		char *end;
		long code = strtol(cols[2], &end, 10);
		cr_assert(*cols[2] && !*end && code >= 0 && code <= 4, TABLE ":%d: bad exit code \"%s\"", line, cols[2]);
		rows[n++] = (struct row){line, cols[0], cols[1], cols[3], (int)code};
	}
	return n;
}

static bool sanitizer_spoke(const char *s)
{
	return strstr(s, "AddressSanitizer") || strstr(s, "LeakSanitizer") || strstr(s, "runtime error") ||
	       strstr(s, "UndefinedBehaviorSanitizer");
}

Test(bad_inputs, every_row_exits_as_expected_with_its_message, .timeout = 600)
{
	static struct row rows[MAX_ROWS];
	int n = load_table(rows);
	int failed = 0;
	for (int i = 0; i < n; i++) {
		const struct row *rw = &rows[i];
		struct run r = run_smsim(rw->file, rw->args);
		bool ok = true;
		char why[4096] = "";
		size_t wl = 0;
#define WHY(...)                                                                              \
	do {                                                                                  \
		ok = false;                                                                   \
		if (wl < sizeof why)                                                          \
			wl += (size_t)snprintf(why + wl, sizeof why - wl, __VA_ARGS__);      \
	} while (0)
		if (r.status != rw->code)
			WHY(" exit %d, expected %d;", r.status, rw->code);
		if (r.seconds > MAX_SECONDS)
			WHY(" took %.1f s (limit %.0f s);", r.seconds, MAX_SECONDS);
		if (sanitizer_spoke(r.err) || sanitizer_spoke(r.out))
			WHY(" a sanitizer reported an error;");
		if (strcmp(rw->frags, "-") != 0) {
			char frags[2048];
			snprintf(frags, sizeof frags, "%s", rw->frags);
			char *p = frags;
			while (p) {
				char *sep = strstr(p, " && ");
				if (sep)
					*sep = '\0';
				if (p[0] == '>') {
					if (!strstr(r.out, p + 1))
						WHY(" report lacks \"%s\";", p + 1);
				} else if (p[0] == '@') {
					if (!location_ok(r.err, p + 1))
						WHY(" no \"%s:LINE:COL:\" location;", p + 1);
				} else if (!strstr(r.err, p)) {
					WHY(" message lacks \"%s\";", p);
				}
				p = sep ? sep + 4 : NULL;
			}
		}
#undef WHY
		if (!ok) {
			failed++;
			cr_log_error(TABLE ":%d: smsim run %s %s:%s\n    stderr: %.600s", rw->line, rw->file,
				     strcmp(rw->args, "-") ? rw->args : "", why, r.err);
		}
		free(r.out);
		free(r.err);
	}
	cr_assert_eq(failed, 0, "%d of %d bad-input cases failed (see the log above)", failed, n);
	free(text_dup);
}

Test(bad_inputs, table_is_large_and_names_every_experiment_in_tests_bad)
{
	static struct row rows[MAX_ROWS];
	int n = load_table(rows);
	cr_assert_geq(n, 60, "the corpus has %d cases", n);
	DIR *dp = opendir(BAD_DIR);
	cr_assert(dp);
	struct dirent *de;
	while ((de = readdir(dp))) {
		size_t len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 5, ".json") != 0 || strstr(de->d_name, ".kernel.json") ||
		    strstr(de->d_name, ".machine.json"))
			continue;
		bool found = false;
		for (int i = 0; i < n && !found; i++)
			found = strcmp(rows[i].file, de->d_name) == 0;
		cr_expect(found, BAD_DIR "%s is an experiment no row of " TABLE " runs", de->d_name);
	}
	closedir(dp);
	free(text_dup);
}

Test(bad_inputs, location_matcher)
{
	cr_assert(location_ok("smsim: a/b.json:4:13: at $.x: y", "a/b.json"));
	cr_assert(location_ok("smsim: a/b.json:4:13: at $.x: y", "a/b.json:4:13"));
	cr_assert_not(location_ok("smsim: a/b.json:4:13: at $.x: y", "a/b.json:4:12"));
	cr_assert_not(location_ok("smsim: a/b.json: at $.x: y", "a/b.json"));
	cr_assert_not(location_ok("smsim: a/b.json:4: y", "a/b.json"));
}

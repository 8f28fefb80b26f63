/*
 * outfile: what an output path is decides how it is written.  A regular
 * file (or none yet) is replaced whole by a rename, a symlink's target is
 * what gets replaced, a FIFO is written straight through, and nothing is
 * ever left half-written or beside the target.  Device nodes are not
 * written here: a wrong implementation would replace them.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "isa/jdoc.h"
#include "sim/out/outfile.h"

static char dir[64];

static void make_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/smsim_outfile_XXXXXX");
	cr_assert(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(outfile, .init = make_dir, .fini = remove_dir);

static char *in_dir(const char *name)
{
	static char bufs[4][256];
	static int next;
	char *p = bufs[next++ % 4];
	snprintf(p, sizeof bufs[0], "%s/%s", dir, name);
	return p;
}

static int write_all(const char *path, const char *text, struct diag *d)
{
	struct outfile o;
	int rc = outfile_open(&o, path, d);
	if (rc)
		return rc;
	fputs(text, o.f);
	return outfile_commit(&o, d);
}

/* The names in dir, as one space-separated sorted string. */
static char *listing(void)
{
	static char out[1024];
	char cmd[128];
	snprintf(cmd, sizeof cmd, "ls -A %s | sort | tr '\\n' ' '", dir);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	size_t n = fread(out, 1, sizeof out - 1, p);
	out[n] = '\0';
	pclose(p);
	return out;
}

static char *contents(const char *path)
{
	char *s = jdoc_read_file(path, NULL);
	cr_assert(s, "cannot read %s", path);
	return s;
}

Test(outfile, a_new_file_appears_whole_and_nothing_else_is_left)
{
	struct diag d;
	cr_assert_eq(write_all(in_dir("out.json"), "{}\n", &d), 0, "%s", d.msg);
	char *s = contents(in_dir("out.json"));
	cr_assert_str_eq(s, "{}\n");
	free(s);
	cr_assert_str_eq(listing(), "out.json ");
}

Test(outfile, replacing_a_file_keeps_its_permission_bits)
{
	struct diag d;
	cr_assert_eq(write_all(in_dir("f"), "old", &d), 0);
	cr_assert_eq(chmod(in_dir("f"), 0640), 0);
	cr_assert_eq(write_all(in_dir("f"), "new", &d), 0, "%s", d.msg);
	struct stat st;
	cr_assert_eq(stat(in_dir("f"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0640, "mode %o", st.st_mode & 07777);
	char *s = contents(in_dir("f"));
	cr_assert_str_eq(s, "new");
	free(s);
}

Test(outfile, a_symlink_stays_a_link_and_its_target_is_written)
{
	struct diag d;
	cr_assert_eq(write_all(in_dir("run42.json"), "old", &d), 0);
	cr_assert_eq(symlink("run42.json", in_dir("latest.json")), 0); /* relative, as users make them */
	cr_assert_eq(write_all(in_dir("latest.json"), "new", &d), 0, "%s", d.msg);
	struct stat st;
	cr_assert_eq(lstat(in_dir("latest.json"), &st), 0);
	cr_assert(S_ISLNK(st.st_mode), "the link was replaced by a file");
	char target[64] = "";
	cr_assert_gt(readlink(in_dir("latest.json"), target, sizeof target - 1), 0);
	cr_assert_str_eq(target, "run42.json");
	char *s = contents(in_dir("run42.json"));
	cr_assert_str_eq(s, "new");
	free(s);
	cr_assert_str_eq(listing(), "latest.json run42.json ", "a temporary was left: %s", listing());
}

Test(outfile, a_chain_of_links_into_another_directory_writes_the_last_target)
{
	struct diag d;
	cr_assert_eq(mkdir(in_dir("sub"), 0755), 0);
	cr_assert_eq(symlink("sub/real.csv", in_dir("mid.csv")), 0);
	cr_assert_eq(symlink("mid.csv", in_dir("top.csv")), 0);
	/* The target does not exist yet: a dangling link gets its file. */
	cr_assert_eq(write_all(in_dir("top.csv"), "a,b\n", &d), 0, "%s", d.msg);
	char *s = contents(in_dir("sub/real.csv"));
	cr_assert_str_eq(s, "a,b\n");
	free(s);
	struct stat st;
	cr_assert(lstat(in_dir("top.csv"), &st) == 0 && S_ISLNK(st.st_mode));
	cr_assert(lstat(in_dir("mid.csv"), &st) == 0 && S_ISLNK(st.st_mode));
}

Test(outfile, a_symlink_loop_is_an_error_naming_the_path)
{
	struct diag d;
	cr_assert_eq(symlink("b", in_dir("a")), 0);
	cr_assert_eq(symlink("a", in_dir("b")), 0);
	cr_assert_eq(write_all(in_dir("a"), "x", &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, in_dir("a")) && strstr(d.msg, strerror(ELOOP)), "%s", d.msg);
}

Test(outfile, a_directory_is_an_error_and_stays_a_directory)
{
	struct diag d;
	cr_assert_eq(mkdir(in_dir("d"), 0755), 0);
	cr_assert_eq(write_all(in_dir("d"), "x", &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, "is a directory"), "%s", d.msg);
	struct stat st;
	cr_assert(stat(in_dir("d"), &st) == 0 && S_ISDIR(st.st_mode));
}

Test(outfile, a_fifo_is_written_through_and_stays_a_fifo)
{
	const char *fifo = in_dir("pipe");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	char got[64] = "";
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) { /* the reader: whatever comes through the FIFO goes back up the pipe */
		close(p[0]);
		int fd = open(fifo, O_RDONLY);
		char buf[64];
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
		_exit(n > 0 && write(p[1], buf, (size_t)n) == n ? 0 : 1);
	}
	close(p[1]);
	struct diag d;
	cr_assert_eq(write_all(fifo, "through", &d), 0, "%s", d.msg);
	ssize_t n = read(p[0], got, sizeof got - 1);
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	cr_assert(n > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the reader got nothing");
	cr_assert_str_eq(got, "through");
	struct stat sb;
	cr_assert(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "the FIFO was replaced");
	cr_assert_str_eq(listing(), "pipe ");
}

Test(outfile, a_fifo_whose_reader_left_is_a_write_error_and_sigpipe_comes_back)
{
	const char *fifo = in_dir("pipe");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) { /* opens, then leaves without reading */
		int fd = open(fifo, O_RDONLY);
		_exit(fd < 0);
	}
	struct sigaction before, now;
	sigaction(SIGPIPE, NULL, &before);
	struct outfile o;
	struct diag d;
	cr_assert_eq(outfile_open(&o, fifo, &d), 0, "%s", d.msg);
	int st;
	waitpid(pid, &st, 0);
	/* More than a pipe holds, so that the writes fail with the reader gone. */
	for (int i = 0; i < 1 << 16; i++)
		fputs("0123456789abcdef", o.f);
	cr_assert_eq(outfile_commit(&o, &d), DIAG_INPUT);
	cr_assert(strstr(d.msg, fifo) && strstr(d.msg, "write failed"), "%s", d.msg);
	sigaction(SIGPIPE, NULL, &now);
	cr_assert(now.sa_handler == before.sa_handler, "SIGPIPE's handler not restored after the output closed");
}

Test(outfile, dash_is_stdout_and_is_not_closed)
{
	struct outfile o;
	struct diag d;
	cr_assert(outfile_is_stdout("-"));
	cr_assert(!outfile_is_stdout("./-"));
	cr_assert_eq(outfile_open(&o, "-", &d), 0);
	cr_assert_eq(o.f, stdout);
	cr_assert_eq(outfile_commit(&o, &d), 0);
	cr_assert_neq(fcntl(STDOUT_FILENO, F_GETFD), -1, "stdout was closed");
}

static int fill_fails(FILE *f, void *ctx, struct diag *d)
{
	(void)ctx;
	fputs("half", f);
	return diag_set(d, DIAG_LIMIT, "out of memory drawing");
}

Test(outfile, a_writer_that_gives_up_leaves_the_old_file_untouched)
{
	struct diag d;
	cr_assert_eq(write_all(in_dir("keep.svg"), "old", &d), 0);
	cr_assert_eq(outfile_write(in_dir("keep.svg"), fill_fails, NULL, &d), DIAG_LIMIT);
	cr_assert(strstr(d.msg, "out of memory drawing"), "%s", d.msg);
	char *s = contents(in_dir("keep.svg"));
	cr_assert_str_eq(s, "old");
	free(s);
	cr_assert_str_eq(listing(), "keep.svg ");
}

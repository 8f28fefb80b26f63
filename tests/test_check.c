/*
 * smsim check, as a user runs it while writing a kernel: what it prints
 * about a valid kernel or experiment, that every shipped one passes, and
 * that a file with several errors gets every one of them, each with its
 * file, JSON path and line:column, and exit status 2.  Inputs in
 * tests/check/ (see its README).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "isa/jdoc.h"
#include "isa/lower.h"

#define KERNEL "kernels/with_staging_unified.json"
#define EXPERIMENT "configs/experiments/with_staging_unified.json"

struct out {
	int status;
	char *out, *err;
};

static struct out check(const char *args)
{
	char cmd[4096], errfile[] = "/tmp/smsim_check_err_XXXXXX";
	int fd = mkstemp(errfile);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(cmd, sizeof cmd, "%s check %s 2>%s", SMSIM_BIN, args, errfile);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	struct out o = {0};
	size_t cap = 1 << 16, n = 0, got;
	o.out = malloc(cap);
	while ((got = fread(o.out + n, 1, cap - n - 1, p)) > 0)
		if ((n += got) + 1 >= cap)
			o.out = realloc(o.out, cap *= 2);
	o.out[n] = '\0';
	int st = pclose(p);
	o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	o.err = jdoc_read_file(errfile, NULL);
	remove(errfile);
	return o;
}

static void out_free(struct out *o)
{
	free(o->out);
	free(o->err);
}

/* The first line of check --lowered's output that holds op (its name padded as printed): into line. */
static void lowered_line(const struct out *o, const char *op, char *line, size_t size)
{
	const char *at = strstr(o->out, op);
	cr_assert(at, "%s", o->out);
	const char *end = strchr(at, '\n');
	cr_assert(end);
	snprintf(line, size, "%.*s", (int)(end - at), at);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

Test(check, a_valid_kernel_shows_what_was_found_and_exits_0)
{
	struct out o = check(KERNEL);
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_str_empty(o.err);
	const char *want[] = {
		KERNEL ": kernel with_staging_unified\n",
		"  source     CUDA C++ Programming Guide",
		"  machine    built-in H100 defaults",
		"  launch     256 threads per block, 1 block on the SM, 1 in the grid",
		"  params     stages = 2, batch_sz = 64, k = 64\n",
		/* 2 stages x 256 threads x 4 bytes; 64 batches x 256 threads x 1 block x 4 bytes */
		"  shared     shared                            512 x  4 B =            2,048 B\n",
		"  global     global_in                      16,384 x  4 B =           65,536 B\n",
		"  pipelines  pipeline (block scope, 2 stages)\n",
		"  barriers   none\n",
		"  helpers    block_batch(batch)",
		"memcpy_async 1",
		"\n  ok\n",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_assert(strstr(o.out, want[i]), "no \"%s\" in:\n%s", want[i], o.out);
	out_free(&o);
}

Test(check, a_kernel_with_an_experiment_takes_its_machine_launch_and_parameters)
{
	struct out a = check(KERNEL " " EXPERIMENT), b = check(EXPERIMENT " " KERNEL);
	cr_assert_eq(a.status, 0, "%s", a.err);
	cr_assert_str_eq(a.out, b.out, "the order of the two files does not matter");
	cr_assert(strstr(a.out, "experiment with_staging_unified"), "%s", a.out);
	cr_assert(strstr(a.out, "k = 256 (experiment; default 64)"), "%s", a.out);
	cr_assert(strstr(a.out, "132 in the grid") && strstr(a.out, "h100.json (h100"), "%s", a.out);
	out_free(&a);
	out_free(&b);
	a = check(KERNEL " --set k=7 --set block_size=128");
	cr_assert_eq(a.status, 0, "%s", a.err);
	cr_assert(strstr(a.out, "k = 7 (--set; default 64)") && strstr(a.out, "128 threads per block"), "%s", a.out);
	out_free(&a);
}

Test(check, every_shipped_kernel_and_experiment_is_valid)
{
	const char *dirs[] = {"kernels", "configs/experiments"};
	for (int i = 0; i < 2; i++) {
		DIR *dp = opendir(dirs[i]);
		cr_assert(dp);
		char args[8192] = "";
		size_t len = 0;
		int n = 0;
		for (struct dirent *de; (de = readdir(dp));)
			if (strstr(de->d_name, ".json")) {
				len += (size_t)snprintf(args + len, sizeof args - len, " %s/%s", dirs[i], de->d_name);
				n++;
			}
		closedir(dp);
		struct out o = check(args);
		cr_assert_eq(o.status, 0, "%s", o.err);
		cr_assert_eq(count(o.out, "\n  ok\n"), n, "%d files, %d ok:\n%s", n, count(o.out, "\n  ok\n"), o.out);
		out_free(&o);
	}
}

Test(check, every_error_of_a_kernel_is_reported_with_its_place)
{
	struct out o = check("tests/check/many_errors.kernel.json");
	cr_assert_eq(o.status, 2);
	/* One line each, in file order, each where an editor can jump to it. */
	const char *want[] = {
		"tests/check/many_errors.kernel.json:4:32: at $.params.n: expected an integer",
		"tests/check/many_errors.kernel.json:5:68: at $.shared.buf.elem_bytez: unknown field \"elem_bytez\"; did you "
		"mean \"elem_bytes\"?",
		"tests/check/many_errors.kernel.json:7:35: at $.pipelines.pipe.scope: expected \"block\" or \"thread\"",
		"tests/check/many_errors.kernel.json:9:40: at $.body[0].value: undefined name 'undefined_thing'",
		"tests/check/many_errors.kernel.json:11:12: at $.body[2].op: unknown op \"producer_aquire\"; did you mean "
		"\"producer_acquire\"?",
		"tests/check/many_errors.kernel.json:13:37: at $.body[3].body[0].addr: unknown buffer \"bufx\"",
		"tests/check/many_errors.kernel.json:14:26: at $.body[3].body[1].n: unexpected end of expression",
	};
	const char *line = o.err;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		cr_assert(line && strncmp(line, want[i], strlen(want[i])) == 0, "error %zu: expected \"%s\", got \"%.120s\"", i,
			  want[i], line ? line : "(none)");
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	cr_assert(line && !*line, "more errors than expected: %s", line);
	/* The let that failed still declares x: its later use is not an error too. */
	cr_assert_eq(count(o.err, "'x'"), 0, "%s", o.err);
	/* What could be loaded is still shown, with the count. */
	cr_assert(strstr(o.out, "gin                             1,024 x  4 B") && strstr(o.out, "\n  7 errors (on stderr)\n"),
		  "%s", o.out);
	out_free(&o);
	/* Through an experiment the same seven; smsim run stops at the first, as a load does. */
	o = check("tests/check/many_errors_experiment.json");
	cr_assert_eq(o.status, 2);
	cr_assert_eq(count(o.err, "tests/check/many_errors.kernel.json:"), 7, "%s", o.err);
	out_free(&o);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s run tests/check/many_errors_experiment.json 2>&1 >/dev/null", SMSIM_BIN);
	FILE *p = popen(cmd, "r");
	char buf[4096];
	size_t n = fread(buf, 1, sizeof buf - 1, p);
	buf[n] = '\0';
	cr_assert_eq(WEXITSTATUS(pclose(p)), 2);
	cr_assert_eq(count(buf, "\n"), 1, "run reports one error: %s", buf);
	cr_assert(strstr(buf, ":4:32: at $.params.n"), "%s", buf);
}

Test(check, broken_files_and_experiments_are_exit_2_with_the_reason)
{
	const char *cases[][2] = {
		{"tests/check/syntax.kernel.json", "tests/check/syntax.kernel.json:6:3: invalid JSON"},
		{"tests/check/missing_kernel.json", "tests/check/no_such_kernel.json: cannot read"},
		{"tests/check/unknown_param.json", "has no parameter \"stagez\"; did you mean \"stages\"?"},
		{KERNEL " --set stagez=3", "has no parameter \"stagez\"; did you mean \"stages\"?"},
		{KERNEL " --set block_size=4096", "block_size 4096 is outside"},
		{"configs/sweeps/overwait.json", "a sweep file"},
		{"configs/comparisons/stages.json", "a comparison file"},
		{"no/such/file.json", "no/such/file.json"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct out o = check(cases[i][0]);
		cr_assert_eq(o.status, 2, "check %s: exit %d", cases[i][0], o.status);
		cr_assert(strstr(o.err, cases[i][1]), "check %s: %s", cases[i][0], o.err);
		cr_assert(strstr(o.out, "1 error (on stderr)"), "check %s:\n%s", cases[i][0], o.out);
		out_free(&o);
	}
	/* One bad file among good ones fails the lot, and the good ones are still checked. */
	struct out o = check(KERNEL " tests/check/syntax.kernel.json kernels/with_single_stage.json");
	cr_assert_eq(o.status, 2);
	cr_assert_eq(count(o.out, "\n  ok\n"), 2, "%s", o.out);
	out_free(&o);
	o = check("");
	cr_assert_eq(o.status, 2);
	cr_assert(strstr(o.err, "which file?"), "%s", o.err);
	out_free(&o);
}

Test(check, names_lists_what_set_takes)
{
	struct out o = check(EXPERIMENT " --names");
	cr_assert_eq(o.status, 0, "%s", o.err);
	const char *want[] = {"stages\n", "batch_sz\n", "k\n", "block_size\n", "limit.cycles\n", "machine.dram_latency\n",
			      "machine.scheduler\n"};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_assert(strstr(o.out, want[i]), "no %s", want[i]);
	cr_assert(!strstr(o.out, "params"), "--names prints only names");
	out_free(&o);
}

/*
 * A copy's form waits for the op's address arithmetic only where it computes
 * that address: with_staging_unified's destination is the local array
 * shared_offset[] (an LDL, instruction 2), and the thread's trip test (@P0 BRA)
 * and the source's address issue while it is in flight, as ptxas orders them
 * (traces/h100/validation_pcsamp/L2_with_staging_unified_4_128_1_0: ISETP,
 * @P0 BRA and IMAD.WIDE at 0x0a00-0x0ae0, the LDL at 0x0a80 read by LEA at 0x0af0).
 */
Test(check, a_copys_trip_test_does_not_wait_for_its_destination_address)
{
	struct out o = check(KERNEL " --lowered");
	cr_assert_eq(o.status, 0, "%s", o.err);
	char line[1024];
	lowered_line(&o, " memcpy_async             $", line, sizeof line);
	cr_assert(strstr(line, "ldgL[1] branch/4 branchX/5 "), "the trip test reads no address: %s", line);
	cr_assert(strstr(line, "aluX[7]/1 imadX/3 aluX[7,9]/1"), "the source's address and the partition offset neither: %s",
		  line);
	cr_assert(strstr(line, "aluX[2,12]/7"), "the destination's LEA waits for the LDL: %s", line);
	cr_assert(strstr(line, "*ldgstsX[2,"), "and the LDGSTS for everything: %s", line);
	out_free(&o);
}

/*
 * own_register on a block copy: with_single_stage's SASS keeps the copy's shared destination base
 * in a register from before its loop (traces/h100/pipelines.sass with_single_stage: S2R SR_CgaCtaId,
 * MOV, VIADD and LEA R21 at 0x04b0-0x0570; the copy's IMAD.IADD reads R21 at 0x08f0).  The copy
 * issues its form less the five instructions that compute that base alone (S2UR, UMOV, UIADD3,
 * ULEA, LEA: 22 - 5), the loop's preheader (the for's init) issues them once, and what computes the
 * source or steps the partition stays.
 */
Test(check, a_block_copys_destination_base_in_its_own_register_is_computed_before_the_loop)
{
	struct out o = check("kernels/with_single_stage.json --lowered");
	cr_assert_eq(o.status, 0, "%s", o.err);
	char line[1024];
	lowered_line(&o, " memcpy_async             $", line, sizeof line);
	char count[16];
	snprintf(count, sizeof count, " %d: ", lform_table[LF_COPY_GROUP].n - 5);
	cr_assert(strstr(line, count), "the form less the base's five instructions: %s", line);
	cr_assert(!strstr(line, "s2r"), "no S2UR of the window base: %s", line);
	cr_assert(strstr(line, "*ldgstsX"), "the LDGSTS and the partition loop stay: %s", line);
	const char *pre = strstr(o.out, " let                      $.body[1] ");
	cr_assert(pre, "%s", o.out);
	cr_assert(strstr(pre, "s2r/1 uniform/1 uniform[2]/1 uniform[1,3]/6 aluX[4]/7"),
		  "the preheader issues the base once, with the form's stall counts: %s", pre);
	out_free(&o);
}

/* --lowered: each op's compiled sequence, its anchor marked, the address arithmetic of a copy shared, not repeated. */
Test(check, lowered_prints_what_each_op_compiles_to)
{
	struct out o = check("tests/callforms/experiments/cf_prim.json --set n=8 --lowered");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert(strstr(o.out, "lowered total:"), "%s", o.out);
	cr_assert(strstr(o.out, " pipeline_memcpy_async    $.body[1].body[0].body[0]"), "the copy op and its JSON path: %s", o.out);
	cr_assert(strstr(o.out, "*ldgstsX"), "the copy's anchor is its LDGSTS, reading the op's inputs: %s", o.out);
	cr_assert(strstr(o.out, "branchP"), "ptxas's padding before the run of LDGSTS: %s", o.out);
	/*
	 * the form's instructions carry ptxas's stall counts (forms.sass 0x01d0-0x0210: LEA 5, the pads and LDGSTS
	 * 1); the LEA computes the shared destination, a constant here (j unrolled), so it waits for nothing, and
	 * the LDGSTS for the source's IADD3 and LOP3 (1) and the LEA (2)
	 */
	cr_assert(strstr(o.out, "aluX/5 branchP/1 branchP/1 branchP/1 *ldgstsX[1,2]/1"), "the copy's stall counts: %s", o.out);
	out_free(&o);
}

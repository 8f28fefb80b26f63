/*
 * Sharded sweeps, the way a cluster runs them: `smsim sweep --shard I/N`
 * writes parts, `smsim merge` joins them into the very bytes `smsim sweep
 * -j 1` writes in the same test (never pinned cycle counts), and a part
 * that is missing, cut short, given twice or made from other files is
 * refused with a message that says which.  Merged pictures keep the
 * sweep's axis titles, and merge and plot write their outputs as every
 * command does (- is stdout, files whole, symlinks followed, write errors
 * exit 2).  The same checks through GNU parallel and a real Slurm live
 * in tests/parallel_sweep.sh and tests/slurm_sweep.sh (run by .ci/run).
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/sh.h"
#include "isa/jdoc.h"
#include "sim/cli/sweepint.h"

#define SWEEP "configs/sweeps/stages_by_compute.json" /* 4 stages x 5 k = 20 runs */
#define RUNS 20

static char dir[64]; /* this test's scratch directory */

static void make_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/smsim_shards_XXXXXX");
	cr_assert(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(shards, .init = make_dir, .fini = remove_dir);

/* Runs a formatted shell command; its stdout into *out (when out is not NULL), its exit status returned. */
static int shf(char **out, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	return sh(cmd, out);
}

static char *file_text(const char *fmt, ...)
{
	char path[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof path, fmt, ap);
	va_end(ap);
	char *t = jdoc_read_file(path, NULL);
	cr_assert(t, "cannot read %s", path);
	return t;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert(f, "%s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

/* The whole sweep the plain way, as every comparison's reference. */
static char *whole(const char *sweep)
{
	char *t;
	cr_assert_eq(shf(&t, "%s sweep %s -j 1", SMSIM_BIN, sweep), 0);
	return t;
}

/* Writes shard i of n of sweep into DIR/part-i.csv. */
static void shard(const char *sweep, int i, int n, int jobs)
{
	cr_assert_eq(shf(NULL, "%s sweep %s --shard %d/%d -j %d --csv %s/part-%d.csv", SMSIM_BIN, sweep, i, n, jobs, dir, i),
		     0, "shard %d/%d", i, n);
}

/* Runs merge over the named parts, stdout into *out, stderr into *err; returns the exit status. */
static int merge(char **out, char **err, const char *parts)
{
	int rc = shf(out, "%s merge %s 2>%s/err", SMSIM_BIN, parts, dir);
	*err = file_text("%s/err", dir);
	return rc;
}

static bool has(const char *text, const char *fragment) { return strstr(text, fragment) != NULL; }

Test(shards, merged_parts_are_the_bytes_of_one_sweep_for_any_split)
{
	char *ref = whole(SWEEP);
	static const int splits[] = {1, 2, 3, 7, RUNS, RUNS + 3};
	for (size_t s = 0; s < sizeof splits / sizeof splits[0]; s++) {
		int n = splits[s];
		char parts[4096] = "";
		size_t len = 0;
		for (int i = n - 1; i >= 0; i--) { /* given in reverse: merge restores run order */
			shard(SWEEP, i, n, 1 + i % 2);
			len += (size_t)snprintf(parts + len, sizeof parts - len, " %s/part-%d.csv", dir, i);
		}
		char *out, *err;
		cr_assert_eq(merge(&out, &err, parts), 0, "split into %d: %s", n, err);
		cr_assert_str_eq(out, ref, "split into %d", n);
		cr_assert_eq(shf(NULL, "%s merge %s --csv %s/merged.csv", SMSIM_BIN, parts, dir), 0);
		char *csv = file_text("%s/merged.csv", dir);
		cr_assert_str_eq(csv, ref);
		free(csv);
		free(out);
		free(err);
		cr_assert_eq(shf(NULL, "rm -f %s/part-*.csv", dir), 0);
	}
	free(ref);
}

Test(shards, parts_collected_into_one_stream_merge_too)
{
	char *ref = whole(SWEEP);
	for (int i = 0; i < 3; i++)
		shard(SWEEP, i, 3, 1);
	/* As GNU parallel collects the shards' stdout, in whatever order they finish. */
	cr_assert_eq(shf(NULL, "cat %s/part-2.csv %s/part-0.csv %s/part-1.csv >%s/all.csv", dir, dir, dir, dir), 0);
	char *out, *err, parts[256];
	snprintf(parts, sizeof parts, "%s/all.csv", dir);
	cr_assert_eq(merge(&out, &err, parts), 0, "%s", err);
	cr_assert_str_eq(out, ref);
	free(out);
	free(err);
	free(ref);
}

Test(shards, a_shard_is_the_same_whatever_j)
{
	char *one, *two;
	cr_assert_eq(shf(&one, "%s sweep %s --shard 1/3 -j 1", SMSIM_BIN, SWEEP), 0);
	cr_assert_eq(shf(&two, "%s sweep %s --shard 1/3 -j 2", SMSIM_BIN, SWEEP), 0);
	cr_assert_str_eq(one, two);
	free(one);
	free(two);
}

/* Field k (from 0) of a CSV line, copied. */
static void csv_field(const char *line, int k, char *out, size_t n)
{
	for (; k > 0; k--)
		line = strchr(line, ',') + 1;
	snprintf(out, n, "%.*s", (int)strcspn(line, ",\n"), line);
}

Test(shards, list_names_every_run_as_the_table_has_it)
{
	char *ref = whole(SWEEP), *list;
	cr_assert_eq(shf(&list, "%s sweep %s --list", SMSIM_BIN, SWEEP), 0);
	const char *row = strchr(ref, '\n') + 1, *line = list;
	for (int i = 0; i < RUNS; i++) {
		char want[128], stages[32], k[32];
		csv_field(row, 0, stages, sizeof stages);
		csv_field(row, 1, k, sizeof k);
		snprintf(want, sizeof want, "%d\tstages=%s\tk=%s\n", i, stages, k);
		cr_assert_eq(strncmp(line, want, strlen(want)), 0, "run %d: expected %s", i, want);
		line += strlen(want);
		row = strchr(row, '\n') + 1;
	}
	cr_assert_str_eq(line, "", "one line per run, no more");
	free(list);
	/* With --shard: that shard's runs, dealt round robin. */
	cr_assert_eq(shf(&list, "%s sweep %s --list --shard 2/7 | cut -f 1 | tr '\\n' ' '", SMSIM_BIN, SWEEP), 0);
	cr_assert_str_eq(list, "2 9 16 ");
	free(list);
	free(ref);
}

Test(shards, shard_i_of_runs_is_run_i_alone)
{
	char *ref = whole(SWEEP), *part;
	cr_assert_eq(shf(&part, "%s sweep %s --shard 5/%d | grep -v '^#'", SMSIM_BIN, SWEEP, RUNS), 0);
	/* column line with "run," in front, then run 5's row with "5," in front */
	const char *row5 = ref;
	for (int i = 0; i < 6; i++)
		row5 = strchr(row5, '\n') + 1;
	char want[4096];
	snprintf(want, sizeof want, "run,%.*s5,%.*s", (int)(strchr(ref, '\n') + 1 - ref), ref,
		 (int)(strchr(row5, '\n') + 1 - row5), row5);
	cr_assert_str_eq(part, want);
	free(part);
	free(ref);
}

Test(shards, a_missing_shard_is_refused_naming_its_runs)
{
	for (int i = 0; i < 4; i++)
		if (i != 2)
			shard(SWEEP, i, 4, 1);
	char parts[512], *out, *err;
	snprintf(parts, sizeof parts, "%s/part-0.csv %s/part-1.csv %s/part-3.csv --csv %s/merged.csv", dir, dir, dir, dir);
	cr_assert_eq(merge(&out, &err, parts), 2);
	cr_assert(has(err, "5 of its 20 runs are missing: 2, 6, 10, 14, 18"), "%s", err);
	cr_assert(has(err, "shard 2/4: no part given") && has(err, "--shard 2/4"), "%s", err);
	char merged[128];
	snprintf(merged, sizeof merged, "%s/merged.csv", dir);
	cr_assert_neq(access(merged, F_OK), 0, "no table, not even a short one");
	free(out);
	free(err);
}

Test(shards, a_part_cut_short_is_refused)
{
	for (int i = 0; i < 2; i++)
		shard(SWEEP, i, 2, 1);
	char *text = file_text("%s/part-1.csv", dir), path[128], parts[512], *out, *err;
	/* in the middle of its last row */
	text[strlen(text) - 10] = '\0';
	snprintf(path, sizeof path, "%s/cut.csv", dir);
	write_text(path, text);
	snprintf(parts, sizeof parts, "%s/part-0.csv %s", dir, path);
	cr_assert_eq(merge(&out, &err, parts), 2);
	cr_assert(has(err, "cut.csv:") && has(err, "cut short"), "%s", err);
	cr_assert_str_eq(out, "");
	free(out);
	free(err);
	/* at the end of a row: the runs after it are missing */
	*(strrchr(text, '\n') + 1) = '\0';
	write_text(path, text);
	cr_assert_eq(merge(&out, &err, parts), 2);
	cr_assert(has(err, "1 of its 20 runs is missing: 19") && has(err, "shard 1/2: its part") && has(err, "lacks some"),
		  "%s", err);
	free(out);
	free(err);
	free(text);
}

Test(shards, a_duplicated_part_or_run_is_refused)
{
	for (int i = 0; i < 4; i++)
		shard(SWEEP, i, 4, 1);
	char parts[512], *out, *err;
	snprintf(parts, sizeof parts, "%s/part-0.csv %s/part-1.csv %s/part-2.csv %s/part-3.csv %s/part-1.csv", dir, dir, dir,
		 dir, dir);
	cr_assert_eq(merge(&out, &err, parts), 2);
	cr_assert(has(err, "shard 1/4 is given twice"), "%s", err);
	cr_assert_str_eq(out, "");
	free(out);
	free(err);
	/* A row repeated inside a part. */
	cr_assert_eq(shf(NULL, "cd %s && grep '^5,' part-1.csv >row5 && cat row5 >>part-1.csv", dir), 0);
	snprintf(parts, sizeof parts, "%s/part-0.csv %s/part-1.csv %s/part-2.csv %s/part-3.csv", dir, dir, dir, dir);
	cr_assert_eq(merge(&out, &err, parts), 2);
	cr_assert(has(err, "run 5 appears twice"), "%s", err);
	free(out);
	free(err);
}

Test(shards, a_part_of_another_sweep_or_split_is_refused)
{
	shard(SWEEP, 0, 2, 1);
	char *out, *err, parts[512];
	cr_assert_eq(shf(NULL, "%s sweep configs/sweeps/overwait.json --shard 1/2 --csv %s/other.csv", SMSIM_BIN, dir), 0);
	snprintf(parts, sizeof parts, "%s/part-0.csv %s/other.csv", dir, dir);
	cr_assert_eq(merge(&out, &err, parts), 2);
	cr_assert(has(err, "sweep overwait") && has(err, "parts of different sweeps do not merge"), "%s", err);
	free(out);
	free(err);
	/* The same sweep split two ways. */
	cr_assert_eq(shf(NULL, "%s sweep %s --shard 1/3 --csv %s/third.csv", SMSIM_BIN, SWEEP, dir), 0);
	snprintf(parts, sizeof parts, "%s/part-0.csv %s/third.csv", dir, dir);
	cr_assert_eq(merge(&out, &err, parts), 2);
	cr_assert(has(err, "shard 1/3") && has(err, "shard 0/2") && has(err, "one split"), "%s", err);
	free(out);
	free(err);
	/* A whole table is no part. */
	cr_assert_eq(shf(NULL, "%s sweep %s >%s/whole.csv", SMSIM_BIN, SWEEP, dir), 0);
	snprintf(parts, sizeof parts, "%s/part-0.csv %s/whole.csv", dir, dir);
	cr_assert_eq(merge(&out, &err, parts), 2);
	cr_assert(has(err, "whole.csv:1: not a part of a sweep"), "%s", err);
	free(out);
	free(err);
}

Test(shards, a_part_made_from_another_kernel_file_is_refused_naming_it)
{
	/* A second checkout of the configs, whose kernel file then changes by one space. */
	cr_assert_eq(shf(NULL, "mkdir -p %s/co/configs && cp -r configs/sweeps configs/experiments configs/machines "
			      "%s/co/configs/ && cp -r kernels %s/co/", dir, dir, dir), 0);
	cr_assert_eq(shf(NULL, "cd %s/co && %s sweep %s --shard 0/2 --csv p0.csv && %s sweep %s --shard 1/2 --csv p1.csv",
			dir, SMSIM_BIN, SWEEP, SMSIM_BIN, SWEEP), 0);
	char *out, *err, parts[512];
	snprintf(parts, sizeof parts, "%s/co/p0.csv %s/co/p1.csv", dir, dir);
	cr_assert_eq(merge(&out, &err, parts), 0, "the same files elsewhere merge: %s", err);
	char *ref = whole(SWEEP);
	cr_assert_str_eq(out, ref);
	free(ref);
	free(out);
	free(err);
	cr_assert_eq(shf(NULL, "cd %s/co && sed -i 's/\"notes\"/\"notes\" /' kernels/with_staging_unified.json && "
			      "%s sweep %s --shard 1/2 --csv p1.csv", dir, SMSIM_BIN, SWEEP), 0);
	cr_assert_eq(merge(&out, &err, parts), 2);
	cr_assert(has(err, "different versions of sweep stages_by_compute") &&
		  has(err, "the kernel file (configs/sweeps/../experiments/../../kernels/with_staging_unified.json)") &&
		  !has(err, "machine file"), "%s", err);
	free(out);
	free(err);
}

/* Replaces the line that starts with prefix by prefix + value. */
static void set_line(char *text, const char *prefix, const char *value)
{
	char *at = strstr(text, prefix);
	cr_assert(at, "no line %s", prefix);
	char *rest = strchr(at, '\n');
	char *tail = strdup(rest);
	sprintf(at, "%s%s%s", prefix, value, tail); /* value is no longer than what it replaces */
	free(tail);
}

Test(shards, a_part_of_another_smsim_or_an_edited_header_is_refused)
{
	for (int i = 0; i < 2; i++)
		shard(SWEEP, i, 2, 1);
	char *text = file_text("%s/part-1.csv", dir), path[128], parts[512], *out, *err;
	snprintf(path, sizeof path, "%s/edited.csv", dir);
	snprintf(parts, sizeof parts, "%s/part-0.csv %s", dir, path);
	/* Only the version changed: the fingerprint no longer matches the header. */
	set_line(text, "# smsim: ", "9.9.9");
	write_text(path, text);
	cr_assert_eq(merge(&out, &err, parts), 2);
	cr_assert(has(err, "edited.csv:1: the part's fingerprint does not match its header"), "%s", err);
	free(out);
	free(err);
	/* With a fingerprint that matches, as another smsim would write it. */
	uint64_t hash[SWEEP_FILES];
	for (int f = 0; f < SWEEP_FILES; f++) {
		char key[64];
		snprintf(key, sizeof key, "# %s file: ", sweep_file_label[f]);
		hash[f] = strtoull(strstr(text, key) + strlen(key), NULL, 16);
	}
	char fp[17];
	snprintf(fp, sizeof fp, "%016llx", (unsigned long long)sweep_fingerprint_of("9.9.9", hash));
	set_line(text, "# fingerprint: ", fp);
	write_text(path, text);
	cr_assert_eq(merge(&out, &err, parts), 2);
	cr_assert(has(err, "the smsim version (") && has(err, " and 9.9.9)"), "%s", err);
	free(out);
	free(err);
	free(text);
}

Test(shards, shard_options_are_checked)
{
	static const char *const bad[] = {"--shard 4/4", "--shard 1", "--shard a/4", "--shard 1/0", "--shard -1/4",
					  "--shard 1/4x", "--shard"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *out;
		cr_assert_eq(shf(&out, "%s sweep %s %s 2>&1", SMSIM_BIN, SWEEP, bad[i]), 2, "%s", bad[i]);
		cr_assert(has(out, "--shard"), "%s: %s", bad[i], out);
		free(out);
	}
	char *out;
	cr_assert_eq(shf(&out, "%s sweep %s --shard 1/4 --svg %s/x.svg 2>&1", SMSIM_BIN, SWEEP, dir), 2);
	cr_assert(has(out, "merge the parts first"), "%s", out);
	free(out);
	cr_assert_eq(shf(&out, "%s merge 2>&1", SMSIM_BIN), 2);
	cr_assert(has(out, "merge needs the parts"), "%s", out);
	free(out);
	cr_assert_eq(shf(&out, "%s merge %s/none.csv 2>&1", SMSIM_BIN, dir), 2);
	cr_assert(has(out, "none.csv: cannot read"), "%s", out);
	free(out);
}

Test(shards, merged_tables_draw_the_sweeps_picture)
{
	char *ref = whole(SWEEP);
	cr_assert_eq(shf(NULL, "%s sweep %s -j 2 --svg %s/sweep.svg >/dev/null", SMSIM_BIN, SWEEP, dir), 0);
	for (int i = 0; i < 3; i++)
		shard(SWEEP, i, 3, 1);
	cr_assert_eq(shf(NULL, "%s merge %s/part-*.csv --csv %s/merged.csv --svg %s/merge.svg", SMSIM_BIN, dir, dir, dir), 0);
	cr_assert_eq(shf(NULL, "%s plot %s %s/merged.csv --svg %s/plot.svg", SMSIM_BIN, SWEEP, dir, dir), 0);
	char *a = file_text("%s/sweep.svg", dir), *b = file_text("%s/merge.svg", dir), *c = file_text("%s/plot.svg", dir);
	cr_assert(has(a, "<g class=\"series\""));
	cr_assert_str_eq(b, a);
	cr_assert_str_eq(c, a);
	free(a);
	free(b);
	free(c);
	/* plot refuses what is not that sweep's whole table */
	char *out;
	cr_assert_eq(shf(&out, "%s plot %s %s/part-1.csv --svg %s/x.svg 2>&1", SMSIM_BIN, SWEEP, dir, dir), 2);
	cr_assert(has(out, "one part of a sweep") && has(out, "merge the parts first"), "%s", out);
	free(out);
	cr_assert_eq(shf(&out, "%s plot configs/sweeps/overwait.json %s/merged.csv --svg %s/x.svg 2>&1", SMSIM_BIN, dir, dir),
		     2);
	cr_assert(has(out, "merged.csv:1: column 1 is \"stages\" where sweep overwait has \"syncwarp\""), "%s", out);
	free(out);
	cr_assert_eq(shf(NULL, "head -n 20 %s/merged.csv >%s/short.csv", dir, dir), 0);
	cr_assert_eq(shf(&out, "%s plot %s %s/short.csv --svg %s/x.svg 2>&1", SMSIM_BIN, SWEEP, dir, dir), 2);
	cr_assert(has(out, "19 rows, but sweep stages_by_compute has 20 runs"), "%s", out);
	free(out);
	cr_assert_eq(shf(NULL, "(head -n 1 %s/merged.csv; tail -n +2 %s/merged.csv | sort -r) >%s/shuffled.csv", dir, dir, dir),
		     0);
	cr_assert_eq(shf(&out, "%s plot %s %s/shuffled.csv --svg %s/x.svg 2>&1", SMSIM_BIN, SWEEP, dir, dir), 2);
	cr_assert(has(out, "shuffled.csv:2: run 0 has stages=4") && has(out, "in run order"), "%s", out);
	free(out);
	char svg[128];
	snprintf(svg, sizeof svg, "%s/x.svg", dir);
	cr_assert_neq(access(svg, F_OK), 0, "a refused plot leaves no picture");
	free(ref);
}

Test(shards, names_and_values_that_would_break_a_csv_cell_are_refused)
{
	static const char *const vary[] = {"{\"stages\": [\"1,2\"]}", "{\"stages\": [\"\\\"1\\\"\"]}", "{\"sta,ges\": [1]}",
					   "{\"stages\": [\"1\\n\"]}"};
	char path[128], cwd[512];
	cr_assert(getcwd(cwd, sizeof cwd));
	snprintf(path, sizeof path, "%s/bad.json", dir);
	for (size_t i = 0; i < sizeof vary / sizeof vary[0]; i++) {
		char text[1024], *out;
		snprintf(text, sizeof text,
			 "{\"sweep\": \"bad\", \"experiment\": \"%s/configs/experiments/with_staging_unified.json\",\n"
			 " \"vary\": %s}\n", cwd, vary[i]);
		write_text(path, text);
		cr_assert_eq(shf(&out, "%s sweep %s --list 2>&1", SMSIM_BIN, path), 2, "%s", vary[i]);
		cr_assert(has(out, "bad.json:2:") && has(out, "without commas, quotes or control characters"), "%s: %s",
			  vary[i], out);
		free(out);
	}
}

Test(shards, a_sweeps_own_axis_titles_survive_the_shards)
{
	char path[128], cwd[512], text[1024];
	cr_assert(getcwd(cwd, sizeof cwd));
	snprintf(path, sizeof path, "%s/labels.json", dir);
	snprintf(text, sizeof text,
		 "{\"sweep\": \"labels\", \"experiment\": \"%s/configs/experiments/with_staging_unified.json\",\n"
		 " \"set\": {\"batch_sz\": 2}, \"vary\": {\"stages\": [1, 2], \"k\": [0, 8]},\n"
		 " \"plot\": {\"y\": \"hidden_fraction\", \"xlabel\": \"stages: how many, \\\"deep\\\"\", \"ylabel\": \"hidden (0 to 1)\"}}\n",
		 cwd);
	write_text(path, text);
	cr_assert_eq(shf(NULL, "%s sweep %s --svg %s/sweep.svg >%s/whole.csv", SMSIM_BIN, path, dir, dir), 0);
	for (int i = 0; i < 3; i++)
		shard(path, i, 3, 1);
	char *part = file_text("%s/part-1.csv", dir);
	cr_assert(has(part, "\n# plot x label: stages: how many, \"deep\"\n# plot y label: hidden (0 to 1)\n"), "%s", part);
	free(part);
	cr_assert_eq(shf(NULL, "%s merge %s/part-*.csv --csv %s/merged.csv --svg %s/merge.svg", SMSIM_BIN, dir, dir, dir), 0);
	char *a = file_text("%s/sweep.svg", dir), *b = file_text("%s/merge.svg", dir);
	cr_assert(has(a, ">stages: how many, &quot;deep&quot;<") && has(a, ">hidden (0 to 1)<"));
	cr_assert_str_eq(b, a, "the merged picture has the sweep's own axis titles");
	free(a);
	free(b);
	/* Without titles of its own, the axes say what they are and in which unit, merged or not. */
	cr_assert_eq(shf(NULL, "rm -f %s/part-*.csv", dir), 0);
	for (int i = 0; i < 2; i++)
		shard(SWEEP, i, 2, 1);
	cr_assert_eq(shf(NULL, "%s merge %s/part-*.csv --svg %s/merge.svg >/dev/null", SMSIM_BIN, dir, dir), 0);
	a = file_text("%s/merge.svg", dir);
	cr_assert(has(a, ">pipeline stages (stages)<") && has(a, ">cycles (SM clock, whole run)<"), "%s", a);
	free(a);
	/* A title with a line break would end its header line: refused where it is written. */
	snprintf(text, sizeof text,
		 "{\"sweep\": \"labels\", \"experiment\": \"%s/configs/experiments/with_staging_unified.json\",\n"
		 " \"vary\": {\"stages\": [1, 2]}, \"plot\": {\"xlabel\": \"two\\nlines\"}}\n", cwd);
	write_text(path, text);
	char *out;
	cr_assert_eq(shf(&out, "%s sweep %s --list 2>&1", SMSIM_BIN, path), 2);
	cr_assert(has(out, "labels.json:2:") && has(out, "without control characters"), "%s", out);
	free(out);
}

Test(shards, merge_and_plot_write_their_outputs_as_every_command_does)
{
	char *ref = whole(SWEEP);
	cr_assert_eq(shf(NULL, "%s sweep %s --svg %s/sweep.svg >/dev/null", SMSIM_BIN, SWEEP, dir), 0);
	char *picture = file_text("%s/sweep.svg", dir);
	for (int i = 0; i < 2; i++)
		shard(SWEEP, i, 2, 1);
	/* --svg -: the picture on stdout, the table on stderr, whole */
	char *out;
	cr_assert_eq(shf(&out, "%s merge %s/part-*.csv --svg - 2>%s/table.csv", SMSIM_BIN, dir, dir), 0);
	cr_assert_str_eq(out, picture);
	free(out);
	char *table = file_text("%s/table.csv", dir);
	cr_assert_str_eq(table, ref);
	free(table);
	/* --csv - is stdout, as no --csv is */
	cr_assert_eq(shf(&out, "%s merge %s/part-*.csv --csv - --svg %s/m.svg", SMSIM_BIN, dir, dir), 0);
	cr_assert_str_eq(out, ref);
	free(out);
	cr_assert_eq(shf(&out, "%s merge %s/part-*.csv --csv - --svg - 2>&1", SMSIM_BIN, dir), 2);
	cr_assert(has(out, "cannot both be -"), "%s", out);
	free(out);
	/* plot: stdout by default and with --svg -; a file through a symlink replaces its target */
	cr_assert_eq(shf(NULL, "%s merge %s/part-*.csv --csv %s/merged.csv", SMSIM_BIN, dir, dir), 0);
	cr_assert_eq(shf(&out, "%s plot %s %s/merged.csv", SMSIM_BIN, SWEEP, dir), 0);
	cr_assert_str_eq(out, picture);
	free(out);
	cr_assert_eq(shf(&out, "%s plot %s %s/merged.csv --svg -", SMSIM_BIN, SWEEP, dir), 0);
	cr_assert_str_eq(out, picture);
	free(out);
	cr_assert_eq(shf(NULL, "echo old >%s/target.svg && ln -s target.svg %s/link.svg", dir, dir), 0);
	cr_assert_eq(shf(NULL, "%s plot %s %s/merged.csv --svg %s/link.svg", SMSIM_BIN, SWEEP, dir, dir), 0);
	char *target = file_text("%s/target.svg", dir);
	cr_assert_str_eq(target, picture);
	free(target);
	struct stat st;
	char link[256];
	snprintf(link, sizeof link, "%s/link.svg", dir);
	cr_assert(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link stays a link");
	/* a write that fails is exit 2 with the reason, and leaves nothing behind */
	cr_assert_eq(shf(&out, "%s merge %s/part-*.csv --csv /dev/full 2>&1", SMSIM_BIN, dir), 2);
	cr_assert(has(out, "/dev/full") && has(out, "No space left on device"), "%s", out);
	free(out);
	cr_assert_eq(shf(&out, "%s plot %s %s/merged.csv --svg /dev/full 2>&1", SMSIM_BIN, SWEEP, dir), 2);
	cr_assert(has(out, "/dev/full"), "%s", out);
	free(out);
	free(picture);
	free(ref);
}

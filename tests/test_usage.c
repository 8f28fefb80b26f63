/*
 * The command line's own surface, for every command in cli.c's table (a
 * command added there is tested here without a line more): its --help,
 * -h and `help CMD` exit 0 and list its options, every documented option
 * is one the command accepts, a typo gets a "did you mean", and the man
 * page and bash completion made from the same table say the same and are
 * installed by meson install.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "isa/jdoc.h"
#include "sim/cli/cli.h"

struct out {
	int status;
	char *out, *err;
};

static struct out run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static struct out run(const char *fmt, ...)
{
	char args[2048], cmd[4096], errfile[] = "/tmp/smsim_usage_err_XXXXXX";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	int fd = mkstemp(errfile);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(cmd, sizeof cmd, "%s 2>%s", args, errfile);
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

#define FOR_EACH_OPTION CLI_FOR_EACH_OPTION

Test(usage, every_command_has_help_that_exits_0_and_lists_its_options)
{
	int n = 0;
	for (const struct cli_command *c = cli_commands; c->name; c++, n++) {
		struct out h = run("%s %s --help", SMSIM_BIN, c->name);
		cr_assert_eq(h.status, 0, "smsim %s --help: exit %d: %s", c->name, h.status, h.err);
		cr_assert_str_empty(h.err, "smsim %s --help wrote to stderr: %s", c->name, h.err);
		char head[128];
		snprintf(head, sizeof head, "usage: smsim %s ", c->name);
		cr_assert(strncmp(h.out, head, strlen(head)) == 0, "smsim %s --help: %.80s", c->name, h.out);
		FOR_EACH_OPTION(c, o)
		{
			char line[128];
			snprintf(line, sizeof line, "\n  %s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
			cr_assert(strstr(h.out, line), "smsim %s --help does not list %s", c->name, o->name);
		}
		cr_assert(strstr(h.out, "-h, --help") && strstr(h.out, "exit status"));
		/* -h, help CMD, and --help after other arguments say the same. */
		const char *forms[] = {"%s %s -h", "%s help %s", "%s %s some.json --help"};
		for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
			char cmd[256];
			snprintf(cmd, sizeof cmd, forms[f], SMSIM_BIN, c->name);
			struct out o = run("%s", cmd);
			cr_assert_eq(o.status, 0, "%s: exit %d", cmd, o.status);
			cr_assert_str_eq(o.out, h.out, "%s differs from --help", cmd);
			out_free(&o);
		}
		out_free(&h);
	}
	cr_assert_geq(n, 11, "run, compare, sweep, merge, plot, check, validate, calibrate, bench, list, help");
	cr_assert(cli_find("bench") && cli_find("check") && cli_find("merge") && cli_find("plot") && !cli_find("nosuch"));
}

Test(usage, the_top_level_help_lists_every_command)
{
	struct out h = run("%s --help", SMSIM_BIN);
	cr_assert_eq(h.status, 0);
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		char line[256];
		snprintf(line, sizeof line, "smsim %s %s\n", c->name, c->synopsis);
		cr_assert(strstr(h.out, line), "no synopsis of %s", c->name);
		snprintf(line, sizeof line, "  %-10s%s\n", c->name, c->summary);
		cr_assert(strstr(h.out, line), "no summary of %s", c->name);
	}
	struct out s = run("%s -h", SMSIM_BIN), hh = run("%s help", SMSIM_BIN);
	cr_assert(s.status == 0 && hh.status == 0);
	cr_assert_str_eq(s.out, h.out);
	cr_assert_str_eq(hh.out, h.out);
	out_free(&s);
	out_free(&hh);
	out_free(&h);
	struct out none = run("%s", SMSIM_BIN);
	cr_assert_eq(none.status, 2, "no command is a usage error");
	cr_assert(strstr(none.err, "usage: smsim run"));
	out_free(&none);
	struct out bad = run("%s help frobnicate", SMSIM_BIN);
	cr_assert_eq(bad.status, 2);
	cr_assert(strstr(bad.err, "frobnicate") && strstr(bad.err, "run"), "%s", bad.err);
	out_free(&bad);
}

/* A value that gets past each option's own parsing, by what its help calls the argument. */
static const char *sample(const char *arg)
{
	static const char *const samples[][2] = {
		{"NAME=VALUE", "a=1"}, {"FILE", "/tmp/smsim_usage_never_written"}, {"FROM:TO", "0:10"}, {"A:B", "0:1"},
		{"N", "1"},	       {"DIR", "configs"},				     {"PERCENT", "10"},
		{"NAME=V1,V2,...", "a=1,2"}, {"I/N", "0/2"}, {"NAME", "x"},
	};
	for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
		if (strcmp(samples[i][0], arg) == 0)
			return samples[i][1];
	cr_assert_fail("no sample value for an option argument called %s: add one", arg);
	return NULL;
}

Test(usage, every_documented_option_is_accepted_and_a_typo_gets_a_suggestion)
{
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		FOR_EACH_OPTION(c, o)
		{
			/* The parser takes the option (and its value) and stops at the next, unknown one. */
			const char *forms[] = {"%s %s %s %s --zz-not-an-option", "%s %s %s=%s --zz-not-an-option"};
			for (int f = 0; f < (o->arg ? 2 : 1); f++) {
				char cmd[512];
				snprintf(cmd, sizeof cmd, forms[f], SMSIM_BIN, c->name, o->name, o->arg ? sample(o->arg) : "");
				struct out r = run("%s", cmd);
				cr_assert_eq(r.status, 2, "%s: exit %d", cmd, r.status);
				cr_assert(strstr(r.err, "unknown option --zz-not-an-option"), "%s: %s", cmd, r.err);
				out_free(&r);
			}
		}
	}
	struct out r = run("%s run x.json --jsno", SMSIM_BIN);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "did you mean --json") && strstr(r.err, "smsim run --help"), "%s", r.err);
	out_free(&r);
	r = run("%s sweep x.json --svg", SMSIM_BIN);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "--svg needs FILE"), "%s", r.err);
	out_free(&r);
	r = run("%s swep", SMSIM_BIN);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "did you mean \"sweep\""), "%s", r.err);
	out_free(&r);
	r = run("%s sweep configs/sweeps/overwait.json -j x", SMSIM_BIN);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "-j expects"), "%s", r.err);
	out_free(&r);
}

static char *read_build_file(const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/share/%s", SMSIM_BUILD_ROOT, name);
	char *s = jdoc_read_file(path, NULL);
	cr_assert(s, "%s was not built", path);
	return s;
}

Test(usage, the_man_page_is_the_help_in_roff_and_is_built)
{
	struct out m = run("%s --man", SMSIM_BIN);
	cr_assert_eq(m.status, 0);
	char *built = read_build_file("smsim.1");
	cr_assert_str_eq(built, m.out, "build/share/smsim.1 is not what smsim --man prints");
	free(built);
	cr_assert(strstr(m.out, "\n.TH SMSIM 1 "));
	const char *sections[] = {".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS", ".SH OPTIONS",
				  ".SH EXIT STATUS", ".SH FILES"};
	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
		cr_assert(strstr(m.out, sections[i]), "no %s", sections[i]);
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		char ss[128];
		snprintf(ss, sizeof ss, ".SS \"smsim %s ", c->name);
		cr_assert(strstr(m.out, ss), "no section for %s", c->name);
		FOR_EACH_OPTION(c, o)
		{
			/* as roff writes it: every minus escaped */
			char name[64] = "\\fB", *p = name + 3;
			for (const char *s = o->name; *s; s++)
				p += sprintf(p, *s == '-' ? "\\-" : "%c", *s);
			cr_assert(strstr(m.out, name), "%s %s is not in the man page", c->name, o->name);
		}
	}
	/* No line may start with a quote or a dot that roff would take for a request. */
	for (const char *l = m.out; l; l = strchr(l, '\n')) {
		l += *l == '\n';
		cr_assert(*l != '\'', "a line starts with a quote: %.40s", l);
	}
	/* groff itself finds nothing wrong (warnings go to stderr). */
	if (system("command -v groff >/dev/null 2>&1") == 0) {
		struct out g = run("%s --man | groff -man -Tutf8 -ww -z", SMSIM_BIN);
		cr_assert_eq(g.status, 0);
		cr_assert_str_empty(g.err, "groff: %s", g.err);
		out_free(&g);
	}
	out_free(&m);
}

/* COMPREPLY for a command line (words, the last one being completed), one per line. */
static char *complete(const char *words)
{
	char script[4096];
	snprintf(script, sizeof script,
		 "cd '%s' && PATH='%s':$PATH bash -c 'source \"%s/share/smsim\"; COMP_WORDS=(%s); "
		 "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _smsim; printf \"%%s\\n\" \"${COMPREPLY[@]}\"'",
		 SMSIM_SOURCE_ROOT, SMSIM_BUILD_ROOT, SMSIM_BUILD_ROOT, words);
	struct out r = run("%s", script);
	cr_assert_eq(r.status, 0, "%s: %s", words, r.err);
	cr_assert_str_empty(r.err, "%s: %s", words, r.err);
	free(r.err);
	return r.out;
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, line, n) == 0 && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

Test(usage, bash_completion_offers_commands_options_paths_and_set_names)
{
	char *built = read_build_file("smsim");
	struct out g = run("%s --bash-completion", SMSIM_BIN);
	cr_assert_str_eq(built, g.out, "build/share/smsim is not what smsim --bash-completion prints");
	free(built);
	out_free(&g);
	struct out syntax = run("bash -n %s/share/smsim", SMSIM_BUILD_ROOT);
	cr_assert_eq(syntax.status, 0, "%s", syntax.err);
	out_free(&syntax);

	char *r = complete("smsim \"\"");
	for (const struct cli_command *c = cli_commands; c->name; c++)
		cr_assert(has_line(r, c->name), "command %s not offered: %s", c->name, r);
	free(r);
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		char words[128];
		snprintf(words, sizeof words, "smsim %s -", c->name);
		r = complete(words);
		FOR_EACH_OPTION(c, o)
		cr_assert(has_line(r, o->name), "smsim %s: %s not offered: %s", c->name, o->name, r);
		cr_assert(has_line(r, "--help"));
		free(r);
	}
	r = complete("smsim run with_staging_u");
	cr_assert(has_line(r, "configs/experiments/with_staging_unified.json"), "%s", r);
	free(r);
	r = complete("smsim run configs/experiments/with_sin");
	cr_assert(has_line(r, "configs/experiments/with_single_stage.json"), "%s", r);
	free(r);
	r = complete("smsim compare configs/comparisons/stages.json --svg traces/study/st");
	cr_assert(has_line(r, "traces/study/stages.svg") && !has_line(r, "traces/study/stages_by_compute.csv"), "%s", r);
	free(r);
	r = complete("smsim sweep configs/sweeps/overwait.json --csv traces/study/ov");
	cr_assert(has_line(r, "traces/study/overwait.csv") && !has_line(r, "traces/study/overwait.svg"), "%s", r);
	free(r);
	/* --set: the experiment's kernel parameters (from smsim check --names) and the machine's fields. */
	r = complete("smsim run configs/experiments/with_staging_unified.json --set st");
	cr_assert(has_line(r, "stages="), "%s", r);
	free(r);
	r = complete("smsim run configs/experiments/diverged_commit.json --set \"\"");
	cr_assert(has_line(r, "divergence=") && has_line(r, "machine.dram_latency=") && has_line(r, "limit.cycles="), "%s", r);
	free(r);
	/* plot takes a sweep file and its table: both kinds are offered */
	r = complete("smsim plot configs/sweeps/stages");
	cr_assert(has_line(r, "configs/sweeps/stages_by_compute.json"), "%s", r);
	free(r);
	r = complete("smsim plot configs/sweeps/stages_by_compute.json traces/study/stages");
	cr_assert(has_line(r, "traces/study/stages_by_compute.csv") && !has_line(r, "traces/study/stages.svg"), "%s", r);
	free(r);
	r = complete("smsim merge traces/study/ov");
	cr_assert(has_line(r, "traces/study/overwait.csv") && !has_line(r, "traces/study/overwait.svg"), "%s", r);
	free(r);
	r = complete("smsim sweep configs/sweeps/overwait.json --shard \"\"");
	cr_assert_str_eq(r, "\n", "I/N is typed by hand: %s", r);
	free(r);
	r = complete("smsim help sw");
	cr_assert(has_line(r, "sweep"), "%s", r);
	free(r);
	r = complete("smsim sweep configs/sweeps/overwait.json -j \"\"");
	cr_assert_str_eq(r, "\n", "a number is typed by hand: %s", r);
	free(r);
}

Test(usage, meson_install_puts_the_man_page_and_completion_where_tools_look)
{
	char dest[] = "/tmp/smsim_install_XXXXXX";
	cr_assert(mkdtemp(dest));
	struct out r = run("meson install -C %s --no-rebuild --destdir %s --quiet", SMSIM_BUILD_ROOT, dest);
	cr_assert_eq(r.status, 0, "meson install: %s %s", r.out, r.err);
	out_free(&r);
	const char *want[][2] = {{"share/man/man1/smsim.1", "smsim.1"},
				 {"share/bash-completion/completions/smsim", "smsim"}};
	for (size_t i = 0; i < 2; i++) {
		struct out f = run("find %s -path '*/%s' -type f", dest, want[i][0]);
		cr_assert(f.out[0], "meson install did not install %s", want[i][0]);
		f.out[strcspn(f.out, "\n")] = '\0';
		char *installed = jdoc_read_file(f.out, NULL), *built = read_build_file(want[i][1]);
		cr_assert(installed && strcmp(installed, built) == 0, "%s differs from the build's", f.out);
		free(installed);
		free(built);
		out_free(&f);
	}
	struct out bin = run("find %s -path '*/bin/smsim' -type f", dest);
	cr_assert(bin.out[0], "no bin/smsim");
	out_free(&bin);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dest);
	cr_assert_eq(system(cmd), 0);
}

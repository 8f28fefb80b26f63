/*
 * main: the smsim command line.  Finds the command in cli.c's table, or
 * answers --help, --version, --man and --bash-completion itself; each
 * command prints its own diagnostics.  Exit status: 0 ok, 1 validate's
 * bound not met, 2 bad input, a program error or an output that could not
 * be written, 3 simulated deadlock, 4 limit exceeded.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../isa/suggest.h"
#include "cli.h"

#ifndef SMSIM_VERSION
#define SMSIM_VERSION "dev"
#endif

static bool is_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }

/* What was printed to stdout reached it: 0, or 2 with a message. */
static int stdout_status(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "smsim: error writing to stdout\n");
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		cli_usage(stderr);
		return 2;
	}
	const char *first = argv[1];
	if (is_help(first)) {
		cli_usage(stdout);
		return stdout_status();
	}
	if (strcmp(first, "--version") == 0) {
		printf("smsim %s\n", SMSIM_VERSION);
		return stdout_status();
	}
	if (strcmp(first, "--man") == 0) {
		cli_man(stdout);
		return stdout_status();
	}
	if (strcmp(first, "--bash-completion") == 0) {
		cli_bash_completion(stdout);
		return stdout_status();
	}
	const struct cli_command *c = cli_find(first);
	if (!c) {
		const char *names[64];
		int n = 0;
		for (const struct cli_command *k = cli_commands; k->name && n < 63; k++)
			names[n++] = k->name;
		names[n] = NULL;
		const char *hint = suggest_name(first, names);
		if (hint)
			fprintf(stderr, "smsim: unknown command \"%s\"; did you mean \"%s\"? (smsim --help lists them)\n",
				first, hint);
		else
			fprintf(stderr, "smsim: unknown command \"%s\" (smsim --help lists them)\n", first);
		return 2;
	}
	for (int i = 2; i < argc; i++)
		if (is_help(argv[i])) {
			cli_help(stdout, c);
			return stdout_status();
		}
	return c->run(argc - 2, argv + 2, argv[0]);
}

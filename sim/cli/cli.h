/*
 * cli: the table of smsim's commands, and everything made from it.
 *
 * One entry per command holds its name, synopsis, what it does, its options
 * and the function that runs it.  From that one table come the top-level
 * usage (`smsim --help`), each command's help (`smsim CMD --help`,
 * `smsim help CMD`), the man page (`smsim --man`, installed as smsim.1) and
 * the bash completion (`smsim --bash-completion`), so none of them can
 * drift from another.  Adding a command is adding its entry to
 * cli_commands in cli.c.
 */
#ifndef SMSIM_CLI_H
#define SMSIM_CLI_H

#include <stdio.h>

#define CLI_MAX_OPTIONS 16

struct cli_option {
	const char *name;     /* "--set", "-j" */
	const char *arg;      /* its argument as the help shows it ("NAME=VALUE"); NULL for a flag */
	const char *help;     /* what it does: one paragraph, wrapped when printed */
	const char *complete; /* what the shell offers for arg: "json", "svg", "csv" (files), "dir", "set"; NULL: nothing */
};

struct cli_command {
	const char *name;
	const char *synopsis; /* what follows the name: "EXPERIMENT.json [OPTION]..." */
	const char *summary;  /* one line for the command list */
	const char *about;    /* what it does; paragraphs separated by "\n\n", wrapped when printed */
	const char *examples; /* command lines, one per line */
	const char *operands; /* what the shell offers for operands: "experiment", "dir", "command", or file extensions
				 ("json", "csv", "json csv"); NULL: none */
	int (*run)(int argc, char **argv, const char *self);
	struct cli_option options[CLI_MAX_OPTIONS]; /* ends at the first without a name */
};

extern const struct cli_command cli_commands[];

/* Each option of command c, in the order its help lists them. */
#define CLI_FOR_EACH_OPTION(c, o) \
	for (const struct cli_option *o = (c)->options; o < (c)->options + CLI_MAX_OPTIONS && o->name; o++)

/* The command called name, or NULL. */
const struct cli_command *cli_find(const char *name);

/* `smsim --help`: the synopsis of every command and what each does. */
void cli_usage(FILE *out);
/* `smsim CMD --help`: the command's synopsis, description and options. */
void cli_help(FILE *out, const struct cli_command *c);
/* `smsim --man`: the manual page, in roff (man(7) macros). */
void cli_man(FILE *out);
/* `smsim --bash-completion`: a bash completion script for commands, options and paths. */
void cli_bash_completion(FILE *out);

/*
 * Argument parsing the commands share.  cli_value: when argv[*i] is option
 * name, as "NAME VALUE" or "NAME=VALUE", sets *value, steps *i onto the
 * last word it used and returns 1; returns 0 when argv[*i] is something
 * else, and -1 (having said so on stderr) when the value is missing.
 */
int cli_value(int argc, char **argv, int *i, const char *cmd, const char *name, const char **value);
/* Splits a CSV line in place at its commas (no quoting) into at most max fields; returns how many. */
int cli_split_csv(char *line, char **field, int max);
/* Says that arg is no option of cmd (with a "did you mean" from its table) and returns exit status 2. */
int cli_unknown_option(const char *cmd, const char *arg);

/* The names --set takes whatever the kernel (launch, limits, checks, machine fields), each followed by end. */
void cli_print_set_names(FILE *out, const char *end);

/* The help command: `smsim help [COMMAND]`. */
int cmd_help(int argc, char **argv, const char *self);

#endif

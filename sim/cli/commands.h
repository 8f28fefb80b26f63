/*
 * commands: smsim's commands, one function each, as the command line calls
 * them: argc and argv are the arguments after the command's name, self is
 * the program's own path (argv[0]).  Each returns the exit status (main's
 * header lists them) and prints its own diagnostics.  cli.c's table says
 * which name runs which, with its help.
 */
#ifndef SMSIM_COMMANDS_H
#define SMSIM_COMMANDS_H

/* Simulates one experiment and reports it (run.c). */
int cmd_run(int argc, char **argv, const char *self);
/* Several experiments side by side (compare.c). */
int cmd_compare(int argc, char **argv, const char *self);
/* The cartesian product of parameter lists, in worker processes, whole or one shard; CSV and a plot (sweep.c). */
int cmd_sweep(int argc, char **argv, const char *self);
/* Joins the parts of a sharded sweep (sweep --shard I/N) into the table sweep would write (merge.c). */
int cmd_merge(int argc, char **argv, const char *self);
/* Draws a sweep's line plot from its table (sweepplot.c). */
int cmd_plot(int argc, char **argv, const char *self);
/* Loads and validates kernels and experiments without simulating (check.c). */
int cmd_check(int argc, char **argv, const char *self);
/* Simulates every row of a hardware reference CSV and reports the error (validate.c). */
int cmd_validate(int argc, char **argv, const char *self);
int cmd_calibrate(int argc, char **argv, const char *self);
/* Simulator speed on fixed workloads; self is run again under valgrind for --callgrind (bench.c). */
int cmd_bench(int argc, char **argv, const char *self);
/* The shipped experiments (list.c). */
int cmd_list(int argc, char **argv, const char *self);

#endif

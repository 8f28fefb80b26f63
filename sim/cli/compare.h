/*
 * compare and sweep: the multi-run commands of the CLI.
 *
 * compare runs several experiments (or one at several --vary values, or a
 * comparison file) and prints them side by side; sweep runs the cartesian
 * product of parameter lists in worker processes and writes CSV, whole or
 * one shard of it; merge joins the shards and plot draws a finished table.
 */
#ifndef SMSIM_COMPARE_H
#define SMSIM_COMPARE_H

int cmd_compare(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
/* Joins the parts of a sharded sweep (sweep --shard I/N) into the table sweep would write. */
int cmd_merge(int argc, char **argv);
/* Draws a sweep's line plot from its table. */
int cmd_plot(int argc, char **argv);
/* Simulates every row of a hardware reference CSV and reports the error. */
int cmd_validate(int argc, char **argv);
/* smsim calibrate DIR [-o MACHINE.json]: a machine config from microbenchmark CSVs (calibrate.c). */
int cmd_calibrate(int argc, char **argv);
/* Simulator speed on fixed workloads; self is argv[0], for --callgrind. */
int cmd_bench(int argc, char **argv, const char *self);

#endif

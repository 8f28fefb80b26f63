/*
 * What the lowering issues against what the H100 executes: the validation kernels' warp-instructions
 * per warp and batch, as ncu counts them (smsp__inst_executed over warps and batches, one block per
 * SM, 128 and 256 threads, k = 0, 32 and 128; traces/h100/instruction_counts.csv), against the
 * shipped experiments run with the same settings.  Instruction counts are not timing: they check
 * that each op compiles to about what nvcc's SASS executes, whatever the clock.  Since session 21
 * the block pipeline's acquire, commit and waits and the thread scope's wait are the examples'
 * own SASS (traces/h100/FORMS.md), a nested loop pays its convergence region and the index
 * arithmetic keeps only the words it needs: the thread scope is within 1%, the unified pipeline
 * 1-4% under, the single stage within 1.5% since session 25 (it was 4-6% over: at one stage ptxas
 * keeps the group copy's shared destination base in a register from before the loop, which its
 * kernel file now says, own_register).  The specialised pipeline at k = 0 counts its paths'
 * try_wait retries, which depend on timing (bounded at 15% there).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "isa/lower.h"
#include "support/run_experiment.h"

/* A trace CSV opened past its header line. */
static FILE *csv_rows(const char *path)
{
	FILE *f = fopen(path, "r");
	cr_assert(f, "%s", path);
	int c;
	while ((c = fgetc(f)) != EOF && c != '\n')
		;
	return f;
}

/*
 * A shipped experiment's warp-instructions per warp and batch at one block per SM with this launch
 * (extra: one more --set, or NULL; with_single_stage has no stages parameter).
 */
static double per_warp_batch(const char *kernel, int stages, int bs, int k, int batches, const char *extra)
{
	char s_stages[32], s_bs[32], s_k[32], s_batches[32];
	snprintf(s_stages, sizeof s_stages, "stages=%d", stages);
	snprintf(s_bs, sizeof s_bs, "block_size=%d", bs);
	snprintf(s_k, sizeof s_k, "k=%d", k);
	snprintf(s_batches, sizeof s_batches, "batch_sz=%d", batches);
	const char *sets[7] = {s_bs, s_k, s_batches, "blocks=1", "machine_set=none"};
	int n = 5;
	if (extra)
		sets[n++] = extra;
	if (strcmp(kernel, "with_single_stage"))
		sets[n++] = s_stages;
	struct sim_report r;
	struct diag d = {0};
	cr_assert_eq(run_experiment(kernel, sets, n, &r, &d), 0, "%s: %s", kernel, d.msg);
	return (double)r.warp_insts / ((bs / 32) * (double)batches);
}

Test(counts, the_lowering_issues_about_what_the_h100_executes)
{
	FILE *f = csv_rows("traces/h100/instruction_counts.csv");
	char line[512];
	double sum = 0;
	int rows = 0;
	while (fgets(line, sizeof line, f)) {
		char kernel[64];
		int stages, bs, bps, k, batches;
		double per;
		cr_assert_eq(sscanf(line, "%63[^,],%d,%d,%d,%d,%d,%*[^,],%*d,%*d,%*d,%lf", kernel, &stages, &bs, &bps, &k,
				    &batches, &per),
			     7, "%s", line);
		double got = per_warp_batch(kernel, stages, bs, k, batches, NULL);
		double err = (got - per) / per;
		bool exact = strcmp(kernel, "with_staging_scope_thread") == 0, single = strcmp(kernel, "with_single_stage") == 0;
		/*
		 * The partitioned pipeline at k = 0 is mostly its paths' polls (nothing else to do between them): its
		 * count is its retries, which follow the timing (session 15: a diverged path polls, each poll a
		 * re-issue of the wait, and smsim's k = 0 rows from DRAM run long, so it polls more than the H100).
		 * Since session 31 each of its loop tests reloads batch_sz (the kernel's "reload", a ULDC a test,
		 * as line_counts.csv has it on lines 175-176), and its paths apart run those tests more often than
		 * the H100's: 128 threads from DRAM 166 against 141 (160 before the ULDCs).
		 */
		bool polls = strcmp(kernel, "with_specialized_staging_unified") == 0 && k == 0;
		cr_expect(fabs(err) < (exact || single ? 0.02 : polls ? 0.18 : 0.10),
			  "%s, %d stages, %d threads, k = %d: %.1f warp-instructions a warp and batch, the H100 %.1f", kernel,
			  stages, bs, k, got, per);
		sum += fabs(err);
		rows++;
	}
	fclose(f);
	cr_assert_eq(rows, 54);
	cr_expect_lt(sum / rows, 0.03, "mean difference %.1f%% over %d rows", 100 * sum / rows, rows);
}

/*
 * Which pipes the lowered instructions take, against Nsight Compute's per-pipe counts
 * (traces/h100/pipes_ncu.csv, sm__inst_executed_pipe_alu and _fma less the float opcodes: the
 * FMA-heavy pipe's integer work) over the rows whose opcode counts add up to the instructions
 * executed (exact = 1: no try_wait loop spun differently in ncu's two passes).  In those rows the
 * ALU runs ISETP, IADD3, LOP3, LEA, SHF, SEL, PLOP3, PRMT, MOV, CS2R and I2FP and the FMA-heavy
 * pipe IMAD and VIADD, to the instruction (pipe_dual.csv settles the pairs that ncu's counts
 * alone could not tell apart).  The two pipes' sum is checked close in every row.  How ptxas
 * splits the adds and shifts between them (IADD3 or IMAD.IADD, SHF.L or IMAD.SHL, to even out
 * the pipes) the lowering only approximates (emit_add): the thread scope's FMA-heavy share is
 * 0.035 high and its ALU share 0.045 low, so each share is bounded loosely.
 */
Test(counts, the_alu_and_fma_heavy_pipes_take_about_what_ncu_counts)
{
	FILE *f = csv_rows("traces/h100/pipes_ncu.csv");
	static char line[8192];
	int checked = 0;
	while (fgets(line, sizeof line, f)) {
		/* kernel,stages,block_size,blocks_per_sm,k,batch_sz,source,divergence,per_group,inst_executed,
		 * pipe_alu,pipe_fmaheavy,pipe_fma,pipe_adu,pipe_cbu,pipe_lsu,pipe_uniform,pipe_xu,opcode_total,exact,opcodes */
		char *field[21];
		int nf = 0;
		for (char *p = line; nf < 21; p++) {
			field[nf++] = p;
			p = strchr(p, ',');
			if (!p)
				break;
			*p = '\0';
		}
		cr_assert_eq(nf, 21, "21 columns");
		const char *kernel = field[0], *opcodes = field[20];
		int stages = atoi(field[1]), bs = atoi(field[2]), bps = atoi(field[3]), k = atoi(field[4]),
		    batch_sz = atoi(field[5]), exact = atoi(field[19]);
		double inst = atof(field[9]), alu = atof(field[10]), fma = atof(field[12]);
		bool scope = strcmp(kernel, "with_staging_scope_thread") == 0, single = strcmp(kernel, "with_single_stage") == 0;
		if (!exact || !(scope || single))
			continue;
		/* the FMA-heavy pipe's integer work: the fma pipes' count less the float opcodes */
		for (const char *op = opcodes; op && *op; op = strchr(op, ';') ? strchr(op, ';') + 1 : NULL) {
			double n = 0;
			if (!strncmp(op, "FFMA:", 5) || !strncmp(op, "FADD:", 5) || !strncmp(op, "FMUL:", 5) ||
			    !strncmp(op, "HFMA2:", 6))
				n = atof(strchr(op, ':') + 1);
			fma -= n;
		}
		char s_stages[32], s_bs[32], s_bps[32], s_k[32], s_batches[32];
		snprintf(s_stages, sizeof s_stages, "stages=%d", stages);
		snprintf(s_bs, sizeof s_bs, "block_size=%d", bs);
		snprintf(s_bps, sizeof s_bps, "blocks=%d", bps);
		snprintf(s_k, sizeof s_k, "k=%d", k);
		snprintf(s_batches, sizeof s_batches, "batch_sz=%d", batch_sz);
		const char *sets[] = {s_bs, s_bps, s_k, s_batches, "machine_set=none", "machine.l2_hit_fraction=0", s_stages};
		struct sim_report r;
		struct diag d = {0};
		cr_assert_eq(run_experiment(kernel, sets, single ? 6 : 7, &r, &d), 0, "%s: %s", kernel, d.msg);
		double all = (double)r.warp_insts, s_alu = (double)r.pipe_issues[IC_ALU] / all,
		       s_imad = (double)r.pipe_issues[IC_IMAD] / all;
		if (scope) {
			cr_expect(fabs(s_imad - fma / inst) < 0.05, "%s, %d stages, %d threads x %d, k = %d: FMA-heavy %.3f, ncu %.3f",
				  kernel, stages, bs, bps, k, s_imad, fma / inst);
			cr_expect(fabs(s_alu - alu / inst) < 0.06, "%s, %d stages, %d threads x %d, k = %d: ALU %.3f, ncu %.3f",
				  kernel, stages, bs, bps, k, s_alu, alu / inst);
		}
		cr_expect(fabs(s_alu + s_imad - (alu + fma) / inst) < (scope ? 0.02 : 0.04),
			  "%s, %d stages, %d threads x %d, k = %d: ALU + FMA-heavy %.3f, ncu %.3f", kernel, stages, bs, bps, k,
			  s_alu + s_imad, (alu + fma) / inst);
		checked++;
	}
	fclose(f);
	cr_assert_eq(checked, 4, "three thread-scope rows and a single-stage one");
}

/* Per warp and batch, what ncu counts on one statement line of tests/hw/examples.cuh (traces/h100/line_counts.csv). */
static double line_count(const char *kernel, int stages, int line)
{
	FILE *f = csv_rows("traces/h100/line_counts.csv");
	char row[512], name[64];
	double got = -1;
	while (fgets(row, sizeof row, f)) {
		int st, at;
		double per;
		cr_assert_eq(sscanf(row, "%63[^,],%d,%*d,%*d,%*d,%*d,%d,%lf", name, &st, &at, &per), 4, "%s", row);
		if (!strcmp(name, kernel) && st == stages && at == line) {
			got = per;
			break;
		}
	}
	fclose(f);
	cr_assert_geq(got, 0, "%s<%d> line %d in line_counts.csv", kernel, stages, line);
	return got;
}

/*
 * The pipeline calls' forms are what the examples execute per call (ncu's SourceCounters summed
 * per statement line, tests/hw/ncu_lines.py; in these converged kernels no path's timing decides
 * what runs): the block pipeline's commit (examples.cuh line 98) and consumer_wait (100), its
 * producer_acquire (92, less the group copy's thread test and BSSY that ptxas schedules into it),
 * and the thread scope's consumer_wait (138, less the UMOV and BRA.DIV of block.sync's convergence
 * check), at 2 and 4 stages.  forms.cu's straight-line kernel compiled them without the retry
 * loop's convergence region and with the barrier's address uniform: 11, 14, 11 and 18.
 */
Test(counts, the_pipeline_call_forms_issue_what_the_examples_lines_execute)
{
	for (int stages = 2; stages <= 4; stages += 2) {
		double acquire = line_count("with_staging_unified", stages, 92) - 2,
		       commit = line_count("with_staging_unified", stages, 98),
		       wait = line_count("with_staging_unified", stages, 100),
		       thread_wait = line_count("with_staging_scope_thread", stages, 138) - 2;
		cr_expect(fabs(lform_table[LF_ACQUIRE_BLOCK].n - acquire) < 0.6, "acquire %d, ncu %.2f",
			  lform_table[LF_ACQUIRE_BLOCK].n, acquire);
		cr_expect(fabs(lform_table[LF_COMMIT_BLOCK].n - commit) < 0.6, "commit %d, ncu %.2f", lform_table[LF_COMMIT_BLOCK].n,
			  commit);
		cr_expect(fabs(lform_table[LF_WAIT_BLOCK].n - wait) < 0.6, "wait %d, ncu %.2f", lform_table[LF_WAIT_BLOCK].n, wait);
		cr_expect(fabs(lform_table[LF_WAIT_THREAD].n - thread_wait) < 0.6, "thread-scope wait %d, ncu %.2f",
			  lform_table[LF_WAIT_THREAD].n, thread_wait);
	}
}

/*
 * Whether the partitioned pipeline's paths stay in step, as the hardware counts say
 * (traces/h100/specialized_counts.csv: smsp__inst_executed, no SASS patching): at one block per SM
 * the H100 keeps them in step from L2 (128 warp-instructions a warp and batch at k = 0: the loop
 * control once) and runs them apart from DRAM (each trip apart issues the loop control twice, and
 * polls).  smsim in step issues within 3% of the L2 rows, and apart within 18% of the DRAM rows
 * (13% before session 31's reloaded loop bounds: each test of the loops its paths apart run more
 * often than the H100's issues a ULDC more, 128 threads at k = 0: 166 against 142.6).
 */
Test(counts, the_partitioned_pipelines_paths_stay_in_step_from_l2_and_part_from_dram)
{
	FILE *f = csv_rows("traces/h100/specialized_counts.csv");
	char line[256];
	int checked = 0;
	while (fgets(line, sizeof line, f)) {
		char kernel[64], source[8];
		int stages, bs, bps, k, batches;
		double per;
		cr_assert_eq(sscanf(line, "%63[^,],%d,%d,%d,%d,%d,%7[^,],%lf", kernel, &stages, &bs, &bps, &k, &batches, source,
				    &per),
			     8, "%s", line);
		if (bps != 1)
			continue;
		bool l2 = strcmp(source, "L2") == 0;
		double got = per_warp_batch(kernel, stages, bs, k, batches,
					    l2 ? "machine.l2_hit_fraction=1" : "machine.l2_hit_fraction=0");
		cr_expect(fabs(got - per) / per < (l2 ? 0.03 : 0.18),
			  "%s, %d threads, k = %d, %s: %.1f warp-instructions a warp and batch, the H100 %.1f", kernel, bs, k,
			  source, got, per);
		checked++;
	}
	fclose(f);
	cr_assert_eq(checked, 12, "k = 0, 32, 128 at 128 and 256 threads, from L2 and DRAM");
}

/*
 * The cp.async GEMM's k-tile against its SASS (traces/h100/gemm.sass gemm_cp_async<3>, R = 1: the main
 * loop 0x07e0-0x1950 as executed, 163 instructions a warp and k-tile).  Its four copies' sources are
 * gemm.cu's `chunk < 256 ? gA + ... : gB + ...`, which ptxas computes on both sides, predicated, in 64
 * bits (0x0840-0x0bd0, 65 instructions with the four LDGSTS); the kernel file says so (chunk_src) and
 * the lowering issues both sides and a select.  What smsim still leaves out is the dispatch of the
 * run-time R loop around the HMMAs (README, What is still off): so the count sits between 70% of the
 * SASS's and the SASS's.  With each chunk's index written straight, as before session 25, it was 90.
 */
Test(counts, the_cp_async_gemm_computes_its_copy_sources_as_compiled)
{
	const char *sets[] = {"stages=3", "batch_sz=32", "R=1", "blocks=1", "machine_set=none"};
	struct sim_report r;
	struct diag d = {0};
	cr_assert_eq(run_experiment("gemm_cp_async_multistage", sets, 5, &r, &d), 0, "%s", d.msg);
	double per = (double)r.warp_insts / (4 * 32.0);
	cr_expect(per > 0.7 * 163 && per <= 163, "%.1f warp-instructions a warp and k-tile, the SASS 163", per);
}

/*
 * The over-wait study's kernels: diverged_commit (128 threads, k = 64, converged and per-group
 * commits) and primitive_copies (one warp, a 4-byte and sixteen 16-byte copies a lane and group)
 * at D = 1-32 groups, against ncu's counts of validation.cu's kernels (traces/h100/divergent_counts.csv,
 * session 28).  diverged_commit is 6-7% over at D = 1-4 with converged commits and within 5%
 * elsewhere; primitive_copies 7-9% under throughout: the H100 executes 150 + 47 (D - 1) a warp and
 * batch, the lowering 140 + 43 (D - 1) (its SASS computes each copy's addresses inside the group
 * loop, primitive_copies.sass, with a few more instructions than the copy forms issue).  Every
 * row within 10%, and the cost of each further group within 10% of the H100's where the groups
 * commit apart (per_group, and every primitive_copies row: 10.2 against 10.2, 43-44 against 47-48)
 * and 20% where a group adds only a divergent FMA trip: what the over-wait study rests on.
 */
Test(counts, the_divergent_commit_kernels_issue_about_what_the_h100_executes)
{
	FILE *f = csv_rows("traces/h100/divergent_counts.csv");
	char line[512];
	int rows = 0;
	double first[2][2] = {{0}}, last[2][2] = {{0}}, first_h[2][2] = {{0}}, last_h[2][2] = {{0}};
	while (fgets(line, sizeof line, f)) {
		char kernel[64];
		int bs, bps, k, batches, d, per_group;
		double per;
		cr_assert_eq(sscanf(line, "%63[^,],%d,%d,%d,%d,%d,%d,%*d,%*d,%*d,%lf", kernel, &bs, &bps, &k, &batches, &d,
				    &per_group, &per),
			     8, "%s", line);
		char s_bs[32], s_bps[32], s_k[32], s_b[32], s_d[32], s_pg[32];
		snprintf(s_bs, sizeof s_bs, "block_size=%d", bs);
		snprintf(s_bps, sizeof s_bps, "blocks=%d", bps);
		snprintf(s_k, sizeof s_k, "k=%d", k);
		snprintf(s_b, sizeof s_b, "batch_sz=%d", batches);
		snprintf(s_d, sizeof s_d, "divergence=%d", d);
		snprintf(s_pg, sizeof s_pg, "per_group=%d", per_group);
		const char *sets[] = {s_bs, s_bps, s_k, s_b, s_d, s_pg, "stages=2", "machine_set=none"};
		struct sim_report r;
		struct diag dg = {0};
		cr_assert_eq(run_experiment(kernel, sets, 8, &r, &dg), 0, "%s: %s", kernel, dg.msg);
		double got = (double)r.warp_insts / ((bs / 32) * bps * (double)batches);
		cr_expect(fabs(got - per) / per < 0.10, "%s, D = %d, per_group %d, %d blocks, k = %d: %.1f warp-instructions a warp and batch, the H100 %.1f",
			  kernel, d, per_group, bps, k, got, per);
		int kk = strcmp(kernel, "primitive_copies") == 0;
		bool ends = bps == 1 && (!kk || k == 0); /* the rows each D runs at: one block, primitive copies at k = 0 */
		if (ends && d == 1) {
			first[kk][per_group] = got;
			first_h[kk][per_group] = per;
		} else if (ends && d == 32) {
			last[kk][per_group] = got;
			last_h[kk][per_group] = per;
		}
		rows++;
	}
	fclose(f);
	cr_assert_eq(rows, 28);
	for (int kk = 0; kk < 2; kk++)
		for (int pg = 0; pg < 2; pg++) {
			double step = (last[kk][pg] - first[kk][pg]) / 31, step_h = (last_h[kk][pg] - first_h[kk][pg]) / 31;
			/* diverged_commit's converged commit: a further group is a further trip of the j loop's FMA, which
			 * ptxas unrolls by four with a remainder (diverged_commit.sass 0x0330-0x07a0): 2.4 a trip, smsim 2.0 */
			double bound = kk == 0 && pg == 0 ? 0.20 : 0.10;
			cr_expect(fabs(step - step_h) / step_h < bound, "%s, per_group %d: %.2f warp-instructions a further group, the H100 %.2f",
				  kk ? "primitive_copies" : "diverged_commit", pg, step, step_h);
		}
}

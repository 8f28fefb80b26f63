/*
 * calibrate: a machine config derived from a GPU's microbenchmark CSVs.
 *
 * `smsim calibrate traces/h100/ -o configs/machines/h100.json` reads the
 * CSVs tests/hw/ writes (run_all.sh, run_calib.sh) and writes every field
 * of the machine config with its value, unit and the rows it came from, so
 * no field is edited by hand and another GPU is one device run and one
 * command.  Each derivation below says which benchmark isolates the
 * quantity; the documented examples (pipelines.csv, validation.csv) are
 * never read here: they validate, they do not fit.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../isa/lower.h"
#include "machine.h"
#include "l1.h"
#include "cli.h"
#include "commands.h"
#include "outfile.h"

#define CSV_MAX_COLS 32

/* One CSV file: its header and rows, every cell a string. */
struct csv {
	char name[64];   /* file name without directory, e.g. "iclass.csv" */
	char *text;      /* the file, cut into cells in place */
	char **cells;    /* rows x ncols */
	int ncols, nrows;
	char *header[CSV_MAX_COLS];
};

struct calib {
	const char *dir;
	struct csv files[32]; /* every CSV calibrate reads (15 today) */
	int nfiles;
	struct machine m;
	char *sources[256]; /* per field (in MACHINE_FIELDS order, then the word fields): where it came from */
	int nfields;
	struct diag *d;
};

static int csv_load(struct calib *c, const char *name, struct csv **out)
{
	for (int i = 0; i < c->nfiles; i++)
		if (!strcmp(c->files[i].name, name)) {
			*out = &c->files[i];
			return 0;
		}
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", c->dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return diag_set(c->d, DIAG_INPUT, "%s: %s (calibrate needs it)", path, strerror(errno));
	if (c->nfiles == (int)(sizeof c->files / sizeof c->files[0])) {
		fclose(f);
		return diag_set(c->d, DIAG_LIMIT, "%s: calibrate reads at most %d CSV files", path, c->nfiles);
	}
	struct csv *v = &c->files[c->nfiles];
	*v = (struct csv){0};
	snprintf(v->name, sizeof v->name, "%s", name);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	v->text = malloc((size_t)len + 1);
	if (!v->text || fread(v->text, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		free(v->text);
		return diag_set(c->d, DIAG_INPUT, "%s: could not be read", path);
	}
	fclose(f);
	v->text[len] = '\0';
	int lines = 1;
	for (char *p = v->text; *p; p++)
		lines += *p == '\n';
	v->cells = calloc((size_t)lines * CSV_MAX_COLS, sizeof *v->cells);
	if (!v->cells) {
		free(v->text);
		return diag_set(c->d, DIAG_LIMIT, "out of memory");
	}
	int row = -1;
	for (char *l = strtok(v->text, "\r\n"); l; l = strtok(NULL, "\r\n")) {
		if (!*l || *l == '#')
			continue;
		char **dst = row < 0 ? v->header : &v->cells[(size_t)row * CSV_MAX_COLS];
		int n = 0;
		for (char *p = l; n < CSV_MAX_COLS;) {
			dst[n++] = p;
			char *comma = strchr(p, ',');
			if (!comma)
				break;
			*comma = '\0';
			p = comma + 1;
		}
		if (row < 0)
			v->ncols = n;
		else if (n != v->ncols) {
			free(v->cells);
			free(v->text);
			return diag_set(c->d, DIAG_INPUT, "%s: data row %d has %d cells, the header %d", path, row + 1, n,
					v->ncols);
		}
		row++;
	}
	v->nrows = row < 0 ? 0 : row;
	c->nfiles++;
	*out = v;
	return 0;
}

static int col_of(struct calib *c, const struct csv *v, const char *col)
{
	for (int i = 0; i < v->ncols; i++)
		if (!strcmp(v->header[i], col))
			return i;
	diag_set(c->d, DIAG_INPUT, "%s/%s: no column \"%s\"", c->dir, v->name, col);
	return -1;
}

/* Column col of data row r (0-based) of v, as a number; NAN when it is not one. */
static double row_num(struct calib *c, const struct csv *v, int r, const char *col)
{
	int i = col_of(c, v, col);
	if (i < 0)
		return NAN;
	const char *cellv = v->cells[(size_t)r * CSV_MAX_COLS + (size_t)i];
	char *end;
	double x = strtod(cellv, &end);
	return end == cellv || *end || !isfinite(x) ? NAN : x; /* "inf" and 1e999 are no measurement either */
}

/* A least-squares line through points added one by one. */
struct line_fit {
	double sx, sy, sxx, sxy;
	int n;
};

static void fit_add(struct line_fit *f, double x, double y)
{
	f->sx += x, f->sy += y, f->sxx += x * x, f->sxy += x * y;
	f->n++;
}

/* The line's slope and intercept; false when fewer than two distinct x leave it undetermined. */
static bool fit_line(const struct line_fit *f, double *slope, double *intercept)
{
	double den = f->n * f->sxx - f->sx * f->sx;
	if (f->n < 2 || den <= 0)
		return false;
	*slope = (f->n * f->sxy - f->sx * f->sy) / den;
	*intercept = (f->sy - *slope * f->sx) / f->n;
	return true;
}

/* File `name` loaded into *v and the index of its column `col`; -1 (with the error set) when either is missing. */
static int csv_column(struct calib *c, const char *name, const char *col, struct csv **v)
{
	*v = NULL;
	if (c->d->code || csv_load(c, name, v))
		return -1;
	return col_of(c, *v, col);
}

/*
 * The value of column `col` in the one row of file `name` whose cells match
 * every "column=value" of the NULL-terminated key list; NAN (and an error)
 * when there is no such row.  *row gets its 1-based data row number.
 */
static double cell(struct calib *c, const char *name, const char *col, int *row, ...)
{
	struct csv *v = NULL;
	if (c->d->code || csv_load(c, name, &v))
		return NAN;
	int want = col_of(c, v, col);
	if (want < 0)
		return NAN;
	const char *keys[8];
	int nkeys = 0;
	va_list ap;
	va_start(ap, row);
	for (const char *k; nkeys < 8 && (k = va_arg(ap, const char *));)
		keys[nkeys++] = k;
	va_end(ap);
	int kcol[8];
	const char *kval[8];
	size_t klen[8];
	for (int i = 0; i < nkeys; i++) {
		const char *eq = strchr(keys[i], '=');
		char cname[64];
		klen[i] = eq ? (size_t)(eq - keys[i]) : strlen(keys[i]);
		snprintf(cname, sizeof cname, "%.*s", (int)klen[i], keys[i]);
		if ((kcol[i] = col_of(c, v, cname)) < 0)
			return NAN;
		kval[i] = eq ? eq + 1 : "";
	}
	for (int r = 0; r < v->nrows; r++) {
		char **cells = &v->cells[(size_t)r * CSV_MAX_COLS];
		bool match = true;
		for (int i = 0; i < nkeys && match; i++)
			match = !strcmp(cells[kcol[i]], kval[i]);
		if (!match)
			continue;
		double x = row_num(c, v, r, col);
		if (isnan(x)) {
			diag_set(c->d, DIAG_INPUT, "%s/%s: data row %d, column %s: \"%s\" is not a finite number", c->dir, name,
				 r + 1, col, cells[want]);
			return NAN;
		}
		*row = r + 1;
		return x;
	}
	char what[256] = "";
	for (int i = 0; i < nkeys; i++)
		snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s", i ? ", " : "", keys[i]);
	diag_set(c->d, DIAG_INPUT, "%s/%s: no row with %s", c->dir, name, what);
	return NAN;
}

/* Where a field's value came from, kept for the output. */
static void cite(struct calib *c, const char *field, const char *fmt, ...)
{
	static const char *const names[] = {
#define MACHINE_NAME(n, t, d, lo, hi, u) #n,
		MACHINE_FIELDS(MACHINE_NAME)
#undef MACHINE_NAME
		"scheduler", "reconverge", "quit"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(names[i], field)) {
			char buf[1024];
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(buf, sizeof buf, fmt, ap);
			va_end(ap);
			free(c->sources[i]);
			c->sources[i] = strdup(buf);
			return;
		}
	diag_set(c->d, DIAG_INPUT, "calibrate: no machine field %s", field);
}

static int64_t iround(double x) { return (int64_t)llround(x); }

/* The device's limits and clock: device.csv (tests/hw/device.cu, cudaGetDeviceProperties and a clock64 / globaltimer ratio). */
static void derive_device(struct calib *c)
{
	struct machine *m = &c->m;
	int r;
	double mhz = cell(c, "device.csv", "value", &r, "property=clock_mhz_measured", NULL);
	m->clock_ghz = round(mhz) / 1000.0;
	cite(c, "clock_ghz", "device.csv row %d: clock64 over %%globaltimer during a 100 ms spin, %.1f MHz", r, mhz);
	static const struct {
		const char *field, *property, *why;
		int64_t div;
	} limits[] = {
		{"subpartitions", "subpartitions", "SM sub-partitions (warp schedulers) of this compute capability", 1},
		{"sm_count", "sm_count", "cudaDevAttrMultiProcessorCount", 1},
		{"max_warps", "max_threads_per_sm", "cudaDevAttrMaxThreadsPerMultiProcessor / 32", 32},
		{"max_blocks", "max_blocks_per_sm", "cudaDevAttrMaxBlocksPerMultiprocessor", 1},
		{"max_threads", "max_threads_per_sm", "cudaDevAttrMaxThreadsPerMultiProcessor", 1},
		{"max_block_threads", "max_threads_per_block", "cudaDevAttrMaxThreadsPerBlock", 1},
		{"smem_bytes", "smem_per_sm", "cudaDevAttrMaxSharedMemoryPerMultiprocessor", 1},
		{"smem_block_bytes", "smem_per_block_optin", "cudaDevAttrMaxSharedMemoryPerBlockOptin", 1},
	};
	for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
		char key[96];
		snprintf(key, sizeof key, "property=%s", limits[i].property);
		int64_t v = iround(cell(c, "device.csv", "value", &r, key, NULL)) / limits[i].div;
		if (!strcmp(limits[i].field, "subpartitions"))
			m->subpartitions = v;
		else if (!strcmp(limits[i].field, "sm_count"))
			m->sm_count = v;
		else if (!strcmp(limits[i].field, "max_warps"))
			m->max_warps = v;
		else if (!strcmp(limits[i].field, "max_blocks"))
			m->max_blocks = v;
		else if (!strcmp(limits[i].field, "max_threads"))
			m->max_threads = v;
		else if (!strcmp(limits[i].field, "max_block_threads"))
			m->max_block_threads = v;
		else if (!strcmp(limits[i].field, "smem_bytes"))
			m->smem_bytes = v;
		else
			m->smem_block_bytes = v;
		cite(c, limits[i].field, "device.csv row %d: %s", r, limits[i].why);
	}
}

/*
 * One instruction class from iclass.csv (tests/hw/iclass.cu, loops of one
 * SASS instruction with no clock reads inside, at 1-16 warps per
 * scheduler).  Its latency is a dependent chain's cycles per instruction
 * with one warp per scheduler (for a branch, the cycles before a warp
 * issues again after a taken BRA); its issue interval the cycles per
 * instruction per scheduler at 16 warps per scheduler, where the pipe is
 * saturated (from the independent chains, or the dependent ones where a
 * class has no independent form); its MIO cost, for the memory-path
 * classes, that interval over the schedulers that share the MIO path.
 * A memory class's latency is 0: its data comes from the memory model.
 */
static void derive_class(struct calib *c, const char *cls, const char *csv_class, const char *sass, int64_t *lat,
			 int64_t *ivl, int64_t *mio, bool has_latency, bool uses_mio, const char *sat_mode)
{
	int r1, r2;
	char kc[64], ks[64], km[64];
	snprintf(kc, sizeof kc, "class=%s", csv_class);
	snprintf(ks, sizeof ks, "sass=%s", sass);
	snprintf(km, sizeof km, "mode=%s", sat_mode);
	double dep = cell(c, "iclass.csv", "cycles_per_instruction", &r1, kc, ks, "mode=dep", "warps_per_scheduler=1", NULL);
	/* 8 warps per scheduler: at 16, two blocks' warps start apart and the row undercounts (traces/h100/README.md) */
	double sat = cell(c, "iclass.csv", "cycles_per_instruction", &r2, kc, ks, km, "warps_per_scheduler=8", NULL);
	double per_sched = sat / 8.0;
	char field[64];
	*lat = has_latency ? iround(dep) : 0;
	*ivl = iround(per_sched) < 1 ? 1 : iround(per_sched);
	*mio = uses_mio ? (iround(per_sched / (double)c->m.subpartitions) < 1 ? 1 : iround(per_sched / (double)c->m.subpartitions)) : 0;
	snprintf(field, sizeof field, "iclass_%s_latency", cls);
	if (has_latency)
		cite(c, field, "iclass.csv row %d: %s dependent, 1 warp per scheduler, %.2f cycles per instruction", r1, sass, dep);
	else
		cite(c, field, "0: a %s's data comes from the memory model (iclass.csv row %d: %.2f cycles back to back)", sass,
		     r1, dep);
	snprintf(field, sizeof field, "iclass_%s_interval", cls);
	cite(c, field, "iclass.csv row %d: %s (%s), 8 warps per scheduler, %.2f cycles per instruction per warp / 8", r2,
	     sass, sat_mode, sat);
	snprintf(field, sizeof field, "iclass_%s_mio", cls);
	if (uses_mio)
		cite(c, field, "iclass.csv row %d: %.2f cycles per instruction per scheduler, over the %lld schedulers sharing the MIO path", r2, per_sched, (long long)c->m.subpartitions);
	else
		cite(c, field, "0: %s does not use the shared memory-instruction path", sass);
}

/*
 * IMAD.WIDE from imad_wide.csv (tests/hw/imad_wide.cu: mul.wide.u32 d, hi(d),
 * lo(d), one IMAD.WIDE.U32 a step, alone or beside LOP3s and IMADs, no clock
 * read inside).  Its latency is a dependent chain's cycles a step at one
 * warp; its interval (on the FMA-heavy pipe, which IMAD shares) the
 * independent steps' at 8 warps a scheduler.  Beside two LOP3s a step takes
 * 6 cycles where the pipes need 4: the IMAD.WIDE's slot, the cycles its
 * sub-partition then dispatches nothing, a LOP3 and the ALU interval to the
 * next (ncu counts the ALU pipe busy 2 cycles a LOP3 all the same, and
 * dispatch stalls with the IMAD.WIDEs).  Done after alu and imad.
 */
static void derive_imad_wide(struct calib *c)
{
	struct machine *m = &c->m;
	int r1, r2, r3;
	double dep = cell(c, "imad_wide.csv", "cycles_per_step_per_scheduler", &r1, "mode=P", "chains=1",
			  "warps_per_scheduler=1", NULL);
	double sat = cell(c, "imad_wide.csv", "cycles_per_step_per_scheduler", &r2, "mode=P", "chains=8",
			  "warps_per_scheduler=8", NULL);
	double two_alu = cell(c, "imad_wide.csv", "cycles_per_step_per_scheduler", &r3, "mode=P+2A", "chains=8",
			      "warps_per_scheduler=8", NULL);
	m->iclass_imad_wide_latency = iround(dep);
	cite(c, "iclass_imad_wide_latency", "imad_wide.csv row %d: a dependent IMAD.WIDE.U32 chain, 1 warp per scheduler, %.2f cycles a step", r1, dep);
	m->iclass_imad_wide_interval = iround(sat) < 1 ? 1 : iround(sat);
	cite(c, "iclass_imad_wide_interval", "imad_wide.csv row %d: independent IMAD.WIDE.U32s, 8 warps per scheduler, %.2f cycles a step per scheduler (the FMA-heavy pipe, which an IMAD then waits for too)", r2, sat);
	m->iclass_imad_wide_mio = 0;
	cite(c, "iclass_imad_wide_mio", "0: IMAD.WIDE does not use the shared memory-instruction path");
	int64_t hold = iround(two_alu - 2.0 - (double)m->iclass_alu_interval);
	m->imad_wide_dispatch = hold < 0 ? 0 : hold;
	cite(c, "imad_wide_dispatch", "imad_wide.csv row %d: IMAD.WIDE.U32 + 2 LOP3, 8 warps per scheduler, %.2f cycles a step per scheduler: its slot, the hold, a LOP3 and iclass_alu_interval to the next", r3, two_alu);
}

static void derive_classes(struct calib *c)
{
	struct machine *m = &c->m;
#define CLASS_IN(name, csv, sass, lat, mio, mode)                                                                      \
	derive_class(c, #name, csv, sass, &m->iclass_##name##_latency, &m->iclass_##name##_interval, &m->iclass_##name##_mio, \
		     lat, mio, mode)
#define CLASS(name, sass, lat, mio, mode) CLASS_IN(name, #name, sass, lat, mio, mode)
	CLASS(alu, "IADD3", true, false, "indep");
	CLASS(imad, "IMAD", true, false, "indep");
	derive_imad_wide(c);
	CLASS(fma, "FFMA", true, false, "indep");
	CLASS(conv, "I2F+F2I", true, false, "indep");
	CLASS(uniform, "UIADD3", true, false, "dep"); /* uniform registers: no independent form was timed */
	CLASS(s2r, "S2R+S2UR", true, false, "indep");
	{
		/*
		 * ptxas issues a loop's special-register reads ahead of their use, so the
		 * iclass row times their issue, not their latency: that comes from the
		 * compiled mbarrier calls, which read SR_CgaCtaId right before its use
		 * (tests/hw/pcsamp_latency.py, ncu's per-instruction sampling of callforms).
		 */
		int r;
		double s2r = cell(c, "pcsamp_latency.csv", "latency", &r, "kind=S2R", "kernel=median", NULL);
		m->iclass_s2r_latency = iround(s2r);
		cite(c, "iclass_s2r_latency", "pcsamp_latency.csv row %d: S2R/S2UR SR_CgaCtaId to its reader in the call-form loops, median %.1f cycles (ncu's warp sampling)", r, s2r);
	}
	CLASS(branch, "BRA", true, false, "indep");
	{
		/* the branch row's step is three instructions (sub, setp, bra): the other two take their issue slots */
		int rb;
		double step = cell(c, "iclass.csv", "cycles_per_instruction", &rb, "class=branch", "sass=BRA", "mode=indep",
				   "warps_per_scheduler=8", NULL) / 8.0;
		m->iclass_branch_interval = iround(step - 2.0) < 1 ? 1 : iround(step - 2.0);
		cite(c, "iclass_branch_interval", "iclass.csv row %d: a step of sub, setp and bra (7 in 8 not taken) every %.2f cycles per scheduler at 8 warps per scheduler, less the sub's and setp's issue slots", rb, step);
	}
	CLASS(lds, "LDS", false, true, "indep");
	CLASS(sts, "STS", false, true, "indep");
	CLASS(ldg, "LDG(L1)", false, true, "indep"); /* the issue path; L2 and DRAM are the memory model's */
	CLASS(stg, "STG", false, true, "indep");
	CLASS(ldgsts, "LDGSTS(4B;L2)", false, true, "indep");
	{
		/*
		 * At 8 warps per scheduler the SM's MIO path binds (iclass_ldgsts_mio): the
		 * pipe's own interval is what one warp alone sees, with no scheduler beside it.
		 */
		int r;
		double alone = cell(c, "iclass.csv", "cycles_per_instruction", &r, "class=ldgsts", "sass=LDGSTS(4B;L2)",
				    "mode=indep_1warp", NULL);
		m->iclass_ldgsts_interval = iround(alone) < 1 ? 1 : iround(alone);
		cite(c, "iclass_ldgsts_interval", "iclass.csv row %d: LDGSTS(4B;L2) independent, one warp alone on the SM, %.2f cycles per instruction (from two schedulers on the MIO path's share, iclass_ldgsts_mio, binds)", r, alone);
	}
	CLASS(depbar, "DEPBAR", true, false, "indep");
	CLASS_IN(ldgdepbar, "depbar", "LDGDEPBAR", true, false, "indep"); /* iclass.csv times it under depbar */
	CLASS(syncs, "SYNCS.PHASECHK", true, true, "indep");
	CLASS(bar, "BAR.SYNC", false, false, "indep");
	CLASS(shfl, "SHFL", true, true, "indep");
	CLASS(mma, "HMMA", true, false, "indep");
	int r_bar;
#undef CLASS
#undef CLASS_IN
	/*
	 * BAR.SYNC at 8 warps per scheduler is the barrier of 32 warps, not a pipe busy 76 cycles: its
	 * time is syncthreads_base_latency + 32 syncthreads_warp_latency (barrier.csv), which the
	 * barrier unit charges; the instruction takes its issue slot.
	 */
	double bar8 = cell(c, "iclass.csv", "cycles_per_instruction", &r_bar, "class=bar", "sass=BAR.SYNC", "mode=indep",
			   "warps_per_scheduler=8", NULL);
	m->iclass_bar_interval = 1;
	cite(c, "iclass_bar_interval", "iclass.csv row %d: BAR.SYNC at 8 warps per scheduler, %.2f cycles, is one 32-warp barrier (syncthreads_base_latency and syncthreads_warp_latency, barrier.csv): the instruction itself takes one issue slot", r_bar, bar8);
	int r;
	double q = cell(c, "iclass.csv", "cycles_per_instruction", &r, "class=lds", "sass=LDS", "mode=indep",
			"warps_per_scheduler=8", NULL);
	m->mio_queue_cycles = iround(q / 8.0) * m->subpartitions;
	cite(c, "mio_queue_cycles", "one LDS per scheduler in flight: iclass.csv row %d (%.2f cycles per LDS per warp at 8 warps per scheduler, times the schedulers)", r, q);
}

/* Memory latencies and bandwidths, synchronisation: the benchmarks of run_all.sh. */
static void derive_memory(struct calib *c)
{
	struct machine *m = &c->m;
	int r, r2, r3, r4;
	double lds = cell(c, "smem_latency.csv", "cycles_per_load_median", &r, "threads=32", "conflict_ways=1", NULL);
	double c32 = cell(c, "smem_latency.csv", "cycles_per_load_median", &r2, "threads=32", "conflict_ways=32", NULL);
	m->smem_latency = iround(lds);
	cite(c, "smem_latency", "smem_latency.csv row %d: dependent LDS chase, one warp, no conflict, %.2f cycles", r, lds);
	m->smem_conflict_latency = iround((c32 - lds) / 31.0);
	cite(c, "smem_conflict_latency", "smem_latency.csv rows %d and %d: (%.2f - %.2f) / 31 extra ways", r2, r, c32, lds);
	double wf = cell(c, "iclass.csv", "cycles_per_instruction", &r, "class=lds", "sass=LDS", "mode=indep",
			 "warps_per_scheduler=8", NULL);
	m->smem_wavefront_cycles = iround(wf / 8.0 / (double)m->subpartitions) < 1 ? 1 : iround(wf / 8.0 / (double)m->subpartitions);
	cite(c, "smem_wavefront_cycles", "iclass.csv row %d: conflict-free LDS (one wavefront each) from all schedulers, %.2f cycles per LDS per warp at 8 warps per scheduler", r, wf);

	/* One warp alone, 8 independent chains of LDSM.x4 (the (x) rows): conflict-free (4 wavefronts) and 8-way (32). */
	double l4 = cell(c, "iclass.csv", "cycles_per_instruction", &r, "class=ldsm", "sass=LDSM.16.M88.4(x)", "mode=indep_1warp", NULL);
	double l32 = cell(c, "iclass.csv", "cycles_per_instruction", &r2, "class=ldsm", "sass=LDSM.16.M88.4(x;8-way)",
			  "mode=indep_1warp", NULL);
	double per_wf = (l32 - l4) / (32.0 - 4.0);
	m->ldsm_warp_wavefront_cycles = iround(per_wf);
	cite(c, "ldsm_warp_wavefront_cycles", "iclass.csv rows %d and %d: one warp's LDSM.16.M88.4, (%.2f - %.2f) / (32 - 4) wavefronts", r2, r, l32, l4);
	m->ldsm_warp_cycles = iround(l4 - 4.0 * per_wf);
	double d4 = cell(c, "iclass.csv", "cycles_per_instruction", &r3, "class=ldsm", "sass=LDSM.16.M88.4", "mode=dep",
			 "warps_per_scheduler=1", NULL);
	double d32 = cell(c, "iclass.csv", "cycles_per_instruction", &r4, "class=ldsm", "sass=LDSM.16.M88.4(8-way)",
			  "mode=dep", "warps_per_scheduler=1", NULL);
	m->ldsm_latency_per_wavefront = round((d32 - d4) / (32.0 - 4.0) * 100.0) / 100.0;
	cite(c, "ldsm_latency_per_wavefront", "iclass.csv rows %d and %d: dependent LDSM.16.M88.4 chains, 8-way and conflict-free, (%.2f - %.2f) / (32 - 4) wavefronts", r4, r3, d32, d4);
	m->ldsm_latency = iround(d4 - 4.0 * m->ldsm_latency_per_wavefront);
	cite(c, "ldsm_latency", "iclass.csv row %d: dependent conflict-free LDSM.16.M88.4, %.2f cycles, less 4 wavefronts at %.2f", r3, d4, m->ldsm_latency_per_wavefront);
	cite(c, "ldsm_warp_cycles", "iclass.csv row %d: one warp's conflict-free LDSM.16.M88.4 every %.2f cycles, less 4 wavefronts at %.2f", r, l4, per_wf);

	double lds_trip = cell(c, "roundtrip.csv", "cycles_per_batch_median", &r, "mode=lds", "block_size=128", NULL);
	double loop = lds_trip - lds;
	double ldg_l2 = cell(c, "roundtrip.csv", "cycles_per_batch_median", &r2, "mode=ldg", "block_size=128", "source=L2", NULL);
	double ldg_dram = cell(c, "roundtrip.csv", "cycles_per_batch_median", &r3, "mode=ldg", "block_size=128", "source=DRAM", NULL);
	m->l2_latency = iround(ldg_l2 - loop);
	cite(c, "l2_latency", "roundtrip.csv row %d less the loop's own %.1f cycles (row %d less smem_latency): the examples' streaming pattern, every SM at once", r2, loop, r);
	m->dram_latency = iround(ldg_dram - loop);
	cite(c, "dram_latency", "roundtrip.csv row %d less the loop's own %.1f cycles (row %d less smem_latency)", r3, loop, r);
	/*
	 * A miss's fetch block: the first offset from a missed byte whose copy misses too (its time nearer
	 * the first copy's DRAM trip than the same sector's L2 hit); every offset is a power of two.
	 */
	int rf;
	double miss = cell(c, "fetch_granularity.csv", "first_cycles_median", &rf, "off=0", NULL);
	double hit = cell(c, "fetch_granularity.csv", "second_cycles_median", &rf, "off=0", NULL);
	for (int off = 16; off <= 128; off *= 2) {
		char key[16];
		snprintf(key, sizeof key, "off=%d", off);
		int ro;
		double t = cell(c, "fetch_granularity.csv", "second_cycles_median", &ro, key, NULL);
		if (isnan(t) || off == 128 || t > (hit + miss) / 2.0) {
			m->l2_fetch_bytes = off < 32 ? 32 : off;
			cite(c, "l2_fetch_bytes", "fetch_granularity.csv rows %d and %d: a 16-byte copy %d bytes past a DRAM miss's (%.1f cycles) takes %.1f, as a miss does, where the same sector takes %.1f", rf, ro, off, miss, t, hit);
			break;
		}
	}
	/* the loops differ by more than the copy (the LDS, LDGDEPBAR, DEPBAR): their sampled round trips do not */
	int r6, r7;
	double rt_ldg = cell(c, "pcsamp_latency.csv", "latency", &r6, "kind=roundtrip", "kernel=ldg", NULL);
	double rt_cp = cell(c, "pcsamp_latency.csv", "latency", &r7, "kind=roundtrip", "kernel=cp_async", NULL);
	m->cp_async_extra_latency = iround(rt_cp - rt_ldg);
	cite(c, "cp_async_extra_latency", "pcsamp_latency.csv rows %d and %d: roundtrip.cu's LDGSTS to the LDS after its DEPBAR, %.1f cycles, against its LDG to the loaded value's reader, %.1f (L2, ncu's warp sampling)", r7, r6, rt_cp, rt_ldg);

	double ldc = cell(c, "special_latency.csv", "cycles_per_trip", &r, "kind=LDC", NULL);
	/* the chase's trip: the LDC and the three address instructions before the next (SHL, LOP3, IADD) */
	m->ldc_latency = iround(ldc - 3.0 * (double)m->iclass_alu_latency);
	cite(c, "ldc_latency", "special_latency.csv row %d: a dependent chase through a __constant__ table, %.2f cycles a trip, less its three address instructions at iclass_alu_latency", r, ldc);

	double l1 = cell(c, "global_latency.csv", "cycles_per_load_median", &r, "level=L1", NULL);
	m->local_load_latency = iround(l1);
	cite(c, "local_load_latency", "global_latency.csv row %d: a dependent load chase hitting in L1, %.2f cycles (LDL of a local array goes the same way)", r, l1);

	double rd = cell(c, "dram_bandwidth.csv", "bytes_per_cycle_per_sm", &r, "kernel=read", NULL);
	m->dram_bytes_per_cycle = round(rd * 10.0) / 10.0;
	cite(c, "dram_bytes_per_cycle", "dram_bandwidth.csv row %d: streaming read, all SMs, %.2f B/cycle/SM", r, rd);
	/* ncu's "DRAM Throughput" is a share of the DRAM's peak, above what streaming achieves */
	double peak = cell(c, "device.csv", "value", &r, "property=dram_peak_bytes_per_s", NULL);
	double sms = cell(c, "device.csv", "value", &r2, "property=sm_count", NULL);
	m->dram_peak_bytes_per_cycle = round(peak / sms / (m->clock_ghz * 1e9) * 100.0) / 100.0;
	cite(c, "dram_peak_bytes_per_cycle", "device.csv row %d: %.4g B/s, Nsight Compute's DRAM peak, over row %d's %.0f SMs at clock_ghz", r,
	     peak, r2, sms);
	/*
	 * The L2-to-SM rate of copies: 16-byte LDGSTS from an L2-resident buffer, 32 warps per SM issuing
	 * them back to back (iclass.csv).  ldgsts_throughput.csv's loop commits and waits on every copy: it
	 * measures one LDGSTS per ~12 cycles whatever the chunk (traces/h100/README.md), not the rate.
	 */
	double l2_per_warp = cell(c, "iclass.csv", "cycles_per_instruction", &r, "class=ldgsts", "sass=LDGSTS(16B;L2)", "mode=indep",
			       "warps_per_scheduler=8", NULL);
	double fill = 8.0 * (double)m->subpartitions * 16.0 * 32.0 / l2_per_warp;
	m->l2_bytes_per_cycle = round(fill * 10.0) / 10.0;
	cite(c, "l2_bytes_per_cycle", "iclass.csv row %d: 16-byte LDGSTS from L2, 8 warps per scheduler, %.2f cycles per instruction per warp: %lld warps x 512 bytes per %.2f cycles", r, l2_per_warp, (long long)(8 * m->subpartitions), l2_per_warp);
	/*
	 * What a line asked of that path takes however few of its bytes a request wants: a divergent
	 * warp's groups of 4 lanes 128 bytes apart (ldgsts_spread.csv grouped_copies, D = 8: each
	 * lane's 16 bytes on a line of its own), 16 warps an SM copying from a 16 MB L2-resident
	 * source, SM-wide cycles per LDGSTS over its 4 lines.
	 */
	double per_copy = cell(c, "ldgsts_spread.csv", "cycles_per_copy_sm", &r, "source=L2_grouped", "d=8", "warps_per_sm=16", NULL);
	m->l2_line_cycles = round(per_copy / 4.0 * 100.0) / 100.0;
	cite(c, "l2_line_cycles", "ldgsts_spread.csv row %d: grouped_copies from L2, 4 lanes 128 bytes apart a copy (D = 8), 16 warps an SM, %.3f cycles an LDGSTS SM-wide over its 4 lines (its 4 sectors alone would take %.2f)", r, per_copy, 128.0 / m->l2_bytes_per_cycle);
	double bulk_l2 = cell(c, "bulk_copy_latency.csv", "cycles_per_roundtrip_median", &r, "source=L2", "footprint_bytes=8388608", "bytes=16", NULL);
	double ld_l2 = cell(c, "global_latency.csv", "cycles_per_load_median", &r2, "level=L2", "footprint_bytes=8388608", NULL);
	double bulk_dram = cell(c, "bulk_copy_latency.csv", "cycles_per_roundtrip_median", &r3, "source=DRAM", "bytes=16", NULL);
	double ld_dram = cell(c, "global_latency.csv", "cycles_per_load_median", &r4, "level=DRAM", "footprint_bytes=268435456", NULL);
	m->bulk_extra_latency = iround(((bulk_l2 - ld_l2) + (bulk_dram - ld_dram)) / 2.0);
	cite(c, "bulk_extra_latency", "bulk_copy_latency.csv rows %d, %d against global_latency.csv rows %d, %d: a 16-byte bulk copy's round trip over a load's, mean of L2 and DRAM", r, r3, r2, r4);

	double b32 = cell(c, "barrier.csv", "cycles_per_phase_median", &r, "primitive=syncthreads", "block_size=32", NULL);
	double b1024 = cell(c, "barrier.csv", "cycles_per_phase_median", &r2, "primitive=syncthreads", "block_size=1024", NULL);
	double per_warp = (b1024 - b32) / 31.0;
	m->syncthreads_warp_latency = iround(per_warp);
	m->syncthreads_base_latency = iround(b32 - per_warp);
	cite(c, "syncthreads_warp_latency", "barrier.csv rows %d and %d: (%.2f - %.2f) / 31 warps, back-to-back barriers (the loop nvcc unrolls by 4: every warp arrives at once)", r, r2, b1024, b32);
	cite(c, "syncthreads_base_latency", "barrier.csv row %d: %.2f cycles for one warp, less one warp's share", r, b32);
	double a32 = cell(c, "barrier.csv", "cycles_per_phase_median", &r, "primitive=cuda_barrier_arrive_and_wait", "block_size=32", NULL);
	double a1024 = cell(c, "barrier.csv", "cycles_per_phase_median", &r2, "primitive=cuda_barrier_arrive_and_wait", "block_size=1024", NULL);
	m->mbarrier_arrive_interval = iround((a1024 - a32) / 31.0);
	cite(c, "mbarrier_arrive_interval", "barrier.csv rows %d and %d: cuda::barrier arrive_and_wait, (%.2f - %.2f) / 31 warps arriving", r, r2, a1024, a32);
	int ra, rb;
	double alone = cell(c, "iclass.csv", "cycles_per_instruction", &ra, "class=syncs", "sass=SYNCS.ARRIVE", "mode=indep_1warp", "warps_per_scheduler=1", NULL);
	double four = cell(c, "iclass.csv", "cycles_per_instruction", &rb, "class=syncs", "sass=SYNCS.ARRIVE", "mode=indep", "warps_per_scheduler=1", NULL);
	m->syncs_arrive_interval = iround(alone);
	cite(c, "syncs_arrive_interval", "iclass.csv row %d: independent SYNCS.ARRIVEs of one warp alone on the SM, %.2f cycles apart", ra, alone);
	m->syncs_arrive_mio = iround(four / (double)m->subpartitions) < 1 ? 1 : iround(four / (double)m->subpartitions);
	cite(c, "syncs_arrive_mio", "iclass.csv row %d: one warp per scheduler, %.2f cycles per SYNCS.ARRIVE per warp, over the %lld schedulers sharing the MIO path", rb, four, (long long)m->subpartitions);
	double arrive = cell(c, "iclass.csv", "cycles_per_instruction", &r, "class=syncs", "sass=SYNCS.ARRIVE", "mode=dep", "warps_per_scheduler=1", NULL);
	m->mbarrier_arrive_latency = iround(arrive);
	cite(c, "mbarrier_arrive_latency", "iclass.csv row %d: SYNCS.ARRIVE back to back, one warp, %.2f cycles", r, arrive);
	/*
	 * A suspended try_wait returns with its result mbarrier_wake_latency after the phase
	 * completes. roundtrip.cu's mbarrier mode waits on a phase its copy completes: its LDGSTS
	 * to the branch on the try_wait's predicate (the form's stall count 2 after the try_wait)
	 * against the cp_async mode's LDGSTS to the LDS after DEPBAR (iclass_depbar_latency).
	 */
	int r9;
	double rt_mbar = cell(c, "pcsamp_latency.csv", "latency", &r9, "kind=roundtrip", "kernel=mbarrier", NULL);
	m->mbarrier_wake_latency = iround(rt_mbar - rt_cp) + m->iclass_depbar_latency - 2;
	if (m->mbarrier_wake_latency < 0)
		m->mbarrier_wake_latency = 0;
	cite(c, "mbarrier_wake_latency", "pcsamp_latency.csv rows %d and %d: roundtrip.cu's copy-completed mbarrier phase, %.1f cycles from the LDGSTS to the try_wait's branch, against %.1f to the LDS after DEPBAR, plus DEPBAR's latency, less the try_wait's stall count 2", r9, r7, rt_mbar, rt_cp);
	/*
	 * trywait_window.csv (tests/hw/trywait_window.cu): another warp's arrive completing the phase
	 * a suspended try_wait.parity waits on, from the arrive's issue to the waiter's first
	 * instruction past its wait: the arrive's count at the barrier, the wake, and the ready
	 * path's branch (its stall count 5, trywait_window.sass 0x02a0, then branch_redirect + 1).
	 */
	double wake = cell(c, "trywait_window.csv", "wake_after_arrive_median", &r2, "gap_target=160", NULL);
	m->mbarrier_count_latency = iround(wake) - m->mbarrier_wake_latency - (5 + 1 + m->branch_redirect);
	if (m->mbarrier_count_latency < 0)
		m->mbarrier_count_latency = 0;
	cite(c, "mbarrier_count_latency", "trywait_window.csv row %d: arrive to the suspended waiter's next instruction %.1f cycles, less mbarrier_wake_latency and the ready branch (stall 5, branch_redirect + 1)", r2, wake);
}

/*
 * When a diverged path's poll reads the phase: trywait_restep_fine.csv (trywait_window.cu restep_fine),
 * shape 1 (the partitioned pipeline's: a fetch loop around P's region, then C's region), trip 2, whose
 * last fetch waits on barrier X completed gap_x cycles from the start.  While X comes early enough for
 * P's first poll to see it the paths stay in step (c_minus_p > 0) and P's stamp is the same in every
 * such row: that poll answers then; from the first later X on they are apart.  The poll read the phase
 * between the last in-step row's X and the first apart row's (their midpoint), so it answered
 * P's stamp less that midpoint after its look, diverged_poll_cycles after it began.  (P's stamp comes
 * a few instructions after the answer: the look is that much later than this puts it.)
 */
static void derive_poll_look(struct calib *c)
{
	struct csv *v;
	if (csv_column(c, "trywait_restep_fine.csv", "shape", &v) < 0)
		return;
	int in_step = -1, apart = -1;
	for (int i = 0; i < v->nrows && apart < 0; i++) {
		if (row_num(c, v, i, "shape") != 1 || row_num(c, v, i, "trip") != 2 || !(row_num(c, v, i, "gap_x") > 0))
			continue;
		if (row_num(c, v, i, "c_minus_p_median") > 0)
			in_step = i;
		else
			apart = i;
	}
	if (in_step < 0 || apart < 0) {
		diag_set(c->d, DIAG_INPUT, "%s/trywait_restep_fine.csv: expected shape 1 trip 2 rows in step and then apart as gap_x grows", c->dir);
		return;
	}
	double seen = row_num(c, v, in_step, "x_median"), missed = row_num(c, v, apart, "x_median");
	double look = (seen + missed) / 2, answer = row_num(c, v, in_step, "p_stamp_median");
	c->m.diverged_poll_look = iround((double)c->m.diverged_poll_cycles - (answer - look));
	if (c->m.diverged_poll_look < 0)
		c->m.diverged_poll_look = 0;
	cite(c, "diverged_poll_look", "trywait_restep_fine.csv rows %d and %d (shape 1, trip 2): P's first poll saw X completed at %.1f cycles, not at %.1f, and answered at %.1f (P's stamp, in step): it read the phase %.1f cycles before its answer, diverged_poll_cycles after its start", in_step + 1, apart + 1, seen, missed, answer, answer - look);
}

/*
 * When a try reads the phase: trywait_read.csv (tests/hw/trywait_read.cu), lane 0 of a diverged warp
 * tries a phase that three other warps' arrives complete, its first TRYWAIT from ~120 cycles before
 * their arrive to ~120 after.  Its first try passes (the loop under 100 cycles) in none of the rows up to
 * some offset and in every row from a later one on: an arrive issued theta cycles before the try is the
 * earliest it sees, theta interpolated where first_try_share crosses one half.  The arrive counts
 * mbarrier_count_latency after its issue, so the try reads the barrier that much less theta after its
 * own issue.
 */
static void derive_try_look(struct calib *c)
{
	struct csv *v;
	if (csv_column(c, "trywait_read.csv", "diverged", &v) < 0)
		return;
	int below = -1, above = -1;
	for (int i = 0; i < v->nrows; i++) {
		if (row_num(c, v, i, "diverged") != 1)
			continue;
		double off = row_num(c, v, i, "try_after_arrive_median"), share = row_num(c, v, i, "first_try_share");
		if (share < 0.5 && (below < 0 || off > row_num(c, v, below, "try_after_arrive_median")))
			below = i;
		if (share >= 0.5 && (above < 0 || off < row_num(c, v, above, "try_after_arrive_median")))
			above = i;
	}
	double o1 = 0, s1 = 0, o2 = 0, s2 = 0;
	if (below >= 0 && above >= 0) {
		o1 = row_num(c, v, below, "try_after_arrive_median");
		s1 = row_num(c, v, below, "first_try_share");
		o2 = row_num(c, v, above, "try_after_arrive_median");
		s2 = row_num(c, v, above, "first_try_share");
	}
	if (!(o2 > o1) || !(s2 > s1)) {
		diag_set(c->d, DIAG_INPUT, "%s/trywait_read.csv: expected diverged rows whose first tries fail before some offset and pass after it", c->dir);
		return;
	}
	double theta = o1 + (0.5 - s1) / (s2 - s1) * (o2 - o1);
	c->m.trywait_look = iround((double)c->m.mbarrier_count_latency - theta);
	if (c->m.trywait_look < 0)
		c->m.trywait_look = 0;
	cite(c, "trywait_look", "trywait_read.csv rows %d and %d (diverged): a first try %.0f cycles after the arrive passes in %.0f%% of the runs, %.0f after in %.0f%%: it sees an arrive issued %.1f cycles before it (one half), which counts mbarrier_count_latency after its issue", below + 1, above + 1, o1, 100 * s1, o2, 100 * s2, theta);
}

/* Forward progress: forward_progress.csv (tests/hw/forward_progress.cu), a try_wait on a phase nobody completes. */
static void derive_progress(struct calib *c)
{
	int r;
	double limit = cell(c, "forward_progress.csv", "cycles_median", &r, "primitive=try_wait_parity", "ns=0", NULL);
	c->m.mbarrier_try_wait_limit = iround(limit);
	cite(c, "mbarrier_try_wait_limit", "forward_progress.csv row %d: mbarrier.try_wait.parity returns false after %.0f cycles (a suspend-time hint does not lengthen it)", r, limit);
	/*
	 * trywait_paths.csv (trywait_window.cu paths mode), the "bare" "solo_arrive" rows: lanes 0-15 of one
	 * warp wait as libcu++'s waits do (one try, then a loop of YIELD and TRYWAIT) for a phase another
	 * warp completes gap_x cycles on, while lanes 16-31 wait at the __syncwarp.  Each poll takes the
	 * same time whatever the phase does meanwhile, so the wait's length grows by one poll per try: the
	 * least-squares slope of a_done_after_try over a_tries, over the rows of three tries or more (the
	 * second try also waits for the other path to reach the __syncwarp).
	 */
	struct csv *v;
	int first_try = csv_column(c, "trywait_paths.csv", "first_try", &v);
	int variant = first_try < 0 ? -1 : col_of(c, v, "variant");
	if (variant < 0)
		return;
	struct line_fit fit = {0};
	int first_row = 0, last_row = 0;
	for (int i = 0; i < v->nrows; i++) {
		char **cells = &v->cells[(size_t)i * CSV_MAX_COLS];
		double tries = row_num(c, v, i, "a_tries_median"), done = row_num(c, v, i, "a_done_after_try_median");
		if (strcmp(cells[first_try], "bare") || strcmp(cells[variant], "solo_arrive") || !(tries >= 3))
			continue;
		fit_add(&fit, tries, done);
		first_row = first_row ? first_row : i + 1;
		last_row = i + 1;
	}
	double period, at_none;
	if (!fit_line(&fit, &period, &at_none)) {
		diag_set(c->d, DIAG_INPUT, "%s/trywait_paths.csv: expected two or more bare solo_arrive rows of three tries or more", c->dir);
		return;
	}
	c->m.diverged_poll_cycles = iround(period);
	cite(c, "diverged_poll_cycles", "trywait_paths.csv rows %d-%d (%d rows, bare solo_arrive, three tries or more): a diverged path's libcu++-shaped wait lengthens by %.1f cycles a try (least-squares slope of a_done_after_try_median over a_tries_median)", first_row, last_row, fit.n, period);
	derive_poll_look(c);
	derive_try_look(c);
}

/*
 * Loops: chain.csv (tests/hw/chain.cu), compute's chain alone, k = 512 and 4096, one warp per scheduler.
 * With the constants in registers a compiled trip of chain_unroll dependent FFMAs costs its chain plus the
 * taken back-edge: the trip's first FFMA issues backedge_redirect cycles after the BRA, which issues one
 * cycle after the trip's last FFMA.  In the examples' kernels (traces/h100/with_staging_unified4.sass
 * 0x1140-0x1370) the trip also rematerialises its multiplier with an IMAD.MOV at the loop top, and the
 * trip's first FFMA reads it: that FFMA issues an IMAD latency after the redirect instead of an FFMA
 * latency after the last one.  chain_trip_cycles is all a trip adds to the chain.  (chain.csv's
 * "examples" row, 4.54 cycles per FMA, is chain.cu's own compile of the same source, whose constant is an
 * HFMA2.MMA of a longer latency than IMAD: not the code the examples run.)
 */
static void derive_loops(struct calib *c)
{
	struct machine *m = &c->m;
	int r2;
	double unroll = (double)m->chain_unroll, lat = (double)m->iclass_fma_latency;
	double reg = cell(c, "chain.csv", "cycles_per_fma", &r2, "variant=registers", "warps_per_scheduler=1", NULL);
	m->backedge_redirect = iround(reg * unroll - (unroll - 1.0) * lat - 1.0);
	m->chain_trip_cycles = 1 + m->backedge_redirect + m->iclass_imad_latency - m->iclass_fma_latency;
	cite(c, "chain_trip_cycles", "with_staging_unified4.sass 0x1140-0x1370, compute's trip as the examples compile it: the BRA's slot, backedge_redirect, then the IMAD.MOV of the multiplier the trip's first FFMA reads (iclass_imad_latency instead of iclass_fma_latency)");

	/*
	 * iclass.csv's branch loops, one warp per scheduler: a step is sub (IADD3), setp (ISETP on its result),
	 * @p bra (on the predicate).  All taken (dep): alu + predicate + one slot + redirect per step; 7 not
	 * taken and 1 taken per 8 steps (indep): 8 (alu + predicate + one slot) + redirect.  Two equations,
	 * the compare-to-branch latency and the taken branch's redirect.
	 */
	int r3, r4;
	double taken = cell(c, "iclass.csv", "cycles_per_instruction", &r3, "class=branch", "sass=BRA", "mode=dep", "warps_per_scheduler=1", NULL);
	double mixed = cell(c, "iclass.csv", "cycles_per_instruction", &r4, "class=branch", "sass=BRA", "mode=indep", "warps_per_scheduler=1", NULL);
	double alu = (double)m->iclass_alu_latency;
	double pred = (8.0 * mixed - taken - 7.0 * (alu + 1.0)) / 7.0;
	m->branch_predicate_latency = iround(pred);
	cite(c, "branch_predicate_latency", "iclass.csv rows %d and %d: branch loops of sub, setp, @p bra, all taken %.2f and 1 in 8 taken %.2f cycles per step: (8 x %.2f - %.2f) / 7 - iclass_alu_latency - 1", r3, r4, taken, mixed, mixed, taken);
	m->branch_redirect = iround(taken - alu - pred - 1.0);
	cite(c, "branch_redirect", "iclass.csv row %d: a taken step, %.2f cycles, less its sub (iclass_alu_latency), the compare-to-branch latency and the branch's slot", r3, taken);
	cite(c, "backedge_redirect", "chain.csv row %d: the chain with its constants in registers, %.3f cycles per FMA: a trip of chain_unroll FFMAs less its chain (chain_unroll - 1 FFMA latencies) and the BRA's slot", r2, reg);

	/*
	 * diverge.csv (tests/hw/diverge.cu), one warp per scheduler: a loop whose trip is 12 dependent
	 * IMADs on one side of an if. Half the lanes taking an if with no else costs if_only - none
	 * over the same side taken by all; smsim's own region (BSSY, the branch, BSYNC: three slots)
	 * and a taken branch's redirect are part of that. An if/else split the same way runs both
	 * sides (12 IMAD latencies more) and hands over from one to the other once more.
	 */
	int r5, r6, r7;
	double none = cell(c, "diverge.csv", "cycles_per_trip", &r5, "mode=none", "warps_per_scheduler=1", NULL);
	double if_only = cell(c, "diverge.csv", "cycles_per_trip", &r6, "mode=if_only", "warps_per_scheduler=1", NULL);
	double both = cell(c, "diverge.csv", "cycles_per_trip", &r7, "mode=diverge", "warps_per_scheduler=1", NULL);
	/*
	 * groups.csv (tests/hw/groups.cu), one warp: a loop of one dependent IMAD a trip (not unrolled)
	 * that group g = lane % D leaves after g trips, against the same D - 1 trips run by every lane.
	 * What the splits add grows by split_latency per group that leaves while others go on: the
	 * least-squares slope of (split_loop - even_loop) over D - 1, D = 2..32.
	 */
	static const int groups_d[] = {2, 4, 8, 16, 32};
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	int rows[5][2], ng = 0;
	for (int i = 0; i < 5; i++) {
		char d[32];
		snprintf(d, sizeof d, "divergence=%d", groups_d[i]);
		double split = cell(c, "groups.csv", "cycles_per_trip", &rows[i][0], "shape=split_loop", "block_size=32", d, NULL);
		double even = cell(c, "groups.csv", "cycles_per_trip", &rows[i][1], "shape=even_loop", "block_size=32", d, NULL);
		double x = groups_d[i] - 1.0, y = split - even;
		sx += x, sy += y, sxx += x * x, sxy += x * y, ng++;
	}
	double slope = (ng * sxy - sx * sy) / (ng * sxx - sx * sx);
	m->split_latency = iround(slope) < 0 ? 0 : iround(slope);
	cite(c, "split_latency", "groups.csv rows %d-%d against rows %d-%d: a loop whose trips each lose a group of lanes (split_loop) against the same trips in every lane (even_loop), D = 2-32 at one warp: %.2f cycles more per group that leaves (least-squares slope)", rows[0][0], rows[4][0], rows[0][1], rows[4][1], slope);
	/* the divergent if splits the warp once: its join is the rest */
	m->reconverge_latency = iround(if_only - none) - 3 - m->branch_redirect - m->split_latency;
	if (m->reconverge_latency < 0)
		m->reconverge_latency = 0;
	cite(c, "reconverge_latency", "diverge.csv rows %d and %d: a divergent if around 12 IMADs, %.2f cycles a trip, against the same IMADs in every lane, %.2f, less the region's three branch instructions, branch_redirect and the split's split_latency", r6, r5, if_only, none);
	m->path_switch_latency = iround(both - none - 12.0 * (double)m->iclass_imad_latency - (if_only - none));
	if (m->path_switch_latency < 0)
		m->path_switch_latency = 0;
	cite(c, "path_switch_latency", "diverge.csv rows %d, %d and %d: a divergent if/else, %.2f cycles a trip, less the other side's 12 IMAD latencies and what the if alone adds", r7, r5, r6, both);

	/*
	 * fence.csv (tests/hw/fence.cu), one warp per scheduler: fence.proxy.async.shared::cta is MEMBAR.ALL.CTA
	 * and FENCE.VIEW.ASYNC.S; a loop trip with it against the same trip without, nothing outstanding.
	 * The FENCE.VIEW issues once the MEMBAR is done: the difference less its slot.
	 */
	int r8, r9;
	double fenced = cell(c, "fence.csv", "cycles_per_trip", &r8, "mode=fence", "warps_per_scheduler=1", NULL);
	double plain = cell(c, "fence.csv", "cycles_per_trip", &r9, "mode=none", "warps_per_scheduler=1", NULL);
	m->fence_membar_latency = iround(fenced - plain) - 1;
	if (m->fence_membar_latency < 0)
		m->fence_membar_latency = 0;
	cite(c, "fence_membar_latency", "fence.csv rows %d and %d: a loop trip with fence.proxy.async.shared::cta, %.2f cycles, against the trip without, %.2f, less the FENCE.VIEW.ASYNC.S's slot", r8, r9, fenced, plain);
}

/*
 * s2r_mio.csv (tests/hw/s2r_mio.cu): one warp per scheduler reads a special register (S2R SR_VIRTID,
 * %warpid, which ptxas re-reads every trip) and an IMAD waits for it, alone and beside three warps per
 * scheduler streaming 8-way LDSMs.  Where the S2R queues behind the LDSMs' wavefronts its trip grows
 * many times over; an S2R that did not would slow as the trip without it (alu) does, by the issue
 * slots the streams take.  The rule: behind the port when the S2R's trip grows more than twice as
 * much as the alu trip's, relative to their trips alone.  The shfl and fence probes (a SHFL.IDX, a
 * fence.proxy.async's MEMBAR in place of the S2R) ask the same of theirs; the mbarrier arrive and
 * test_wait probes (SYNCS) and the LDC do not wait, and the model does not make them.
 */
static void derive_s2r_queue(struct calib *c)
{
	int r1, r2;
	double alu_alone = cell(c, "s2r_mio.csv", "cycles_per_trip", &r1, "probe=alu", "load=none", NULL);
	double alu_beside = cell(c, "s2r_mio.csv", "cycles_per_trip", &r2, "probe=alu", "load=ldsm8", "load_warps_per_scheduler=3", NULL);
	if (!(alu_alone > 0))
		return;
	double alu_grows = alu_beside / alu_alone;
	static const struct {
		const char *probe, *field, *what, *waits;
	} probes[] = {
		{"warpid", "s2r_behind_smem_port", "an S2R (SR_VIRTID) and its reader", "it waits for the shared-memory port"},
		{"shfl", "shfl_behind_smem_port", "a SHFL.IDX and its reader", "it waits for the shared-memory port"},
		{"fence", "membar_behind_smem_port", "a fence.proxy.async and the IMAD after it", "its MEMBAR waits for the shared-memory port"},
	};
	for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
		char want[32];
		snprintf(want, sizeof want, "probe=%s", probes[i].probe);
		int r3, r4;
		double alone = cell(c, "s2r_mio.csv", "cycles_per_trip", &r3, want, "load=none", NULL);
		double beside = cell(c, "s2r_mio.csv", "cycles_per_trip", &r4, want, "load=ldsm8", "load_warps_per_scheduler=3", NULL);
		if (!(alone > 0))
			return;
		int64_t behind = beside / alone > 2.0 * alu_grows;
		if (i == 0)
			c->m.s2r_behind_smem_port = behind;
		else if (i == 1)
			c->m.shfl_behind_smem_port = behind;
		else
			c->m.membar_behind_smem_port = behind;
		cite(c, probes[i].field, "s2r_mio.csv rows %d and %d: %s take %.1f cycles a trip alone and %.1f beside three 8-way LDSM streams per scheduler (x %.2f); rows %d and %d, the trip without it, %.1f and %.1f (x %.2f): %s", r3, r4, probes[i].what, alone, beside, beside / alone, r1, r2, alu_alone, alu_beside, alu_grows, behind ? probes[i].waits : "it does not wait for the port");
	}
}

/*
 * port_share.csv (tests/hw/port_share.cu): four warps stream 8-way LDSMs through the port, a
 * wavefront a cycle, while a fifth warp runs fences (or S2Rs) in a loop, each waiting for the port's
 * queue.  What the LDSMs' time grows by over their time alone, per fence (S2R) the fifth warp ran,
 * is how long the port idles each time: the instructions queued behind the waiting one wait that
 * much more.
 */
static void derive_port_bubble(struct calib *c)
{
	int r0, r1, r2;
	double none = cell(c, "port_share.csv", "ldsm_cycles_median", &r0, "mode=none", NULL);
	double fenced = cell(c, "port_share.csv", "ldsm_cycles_median", &r1, "mode=fence", NULL);
	double fences = cell(c, "port_share.csv", "fifth_count_median", &r1, "mode=fence", NULL);
	double s2red = cell(c, "port_share.csv", "ldsm_cycles_median", &r2, "mode=s2r", NULL);
	double s2rs = cell(c, "port_share.csv", "fifth_count_median", &r2, "mode=s2r", NULL);
	if (!(none > 0 && fences > 0 && s2rs > 0))
		return;
	double membar = (fenced - none) / fences, s2r = (s2red - none) / s2rs;
	c->m.membar_port_bubble = iround(membar) > 0 ? iround(membar) : 0;
	cite(c, "membar_port_bubble", "port_share.csv rows %d and %d: four 8-way LDSM streams take %.0f cycles alone and %.0f beside a warp running %.0f fences, %.1f cycles more a fence", r0, r1, none, fenced, fences, membar);
	c->m.s2r_port_bubble = iround(s2r) > 0 ? iround(s2r) : 0;
	cite(c, "s2r_port_bubble", "port_share.csv rows %d and %d: the same streams beside a warp running %.0f S2R (SR_VIRTID) reads, %.0f cycles, %.1f cycles more an S2R", r0, r2, s2rs, s2red, s2r);
}

/*
 * copy_burst_chained.csv (tests/hw/copy_burst.cu, chained, -maxrregcount=24): one warp's 16-byte copies
 * whose shared address runs through one register, each LDGSTS followed by the IMAD that overwrites it
 * (traces/h100/copy_burst_chained.sass).  A copy of the run takes the slope of its issue time from 16 to
 * 64 copies; the IMAD's stall count (the continuation form's, lower_forms.c) is the rest of it.
 */
static void derive_operand_read(struct calib *c)
{
	int r16, r64;
	double t16 = cell(c, "copy_burst_chained.csv", "issue_cycles_median", &r16, "bytes=16", "active_lanes=32",
			  "source=L2", "copies=16", NULL);
	double t64 = cell(c, "copy_burst_chained.csv", "issue_cycles_median", &r64, "bytes=16", "active_lanes=32",
			  "source=L2", "copies=64", NULL);
	const struct lform *run = &lform_table[LF_PRIM_COPY_RUN];
	double per = (t64 - t16) / 48.0;
	c->m.ldgsts_operand_read = iround(per) - run->code[0].stall < 0 ? 0 : iround(per) - run->code[0].stall;
	cite(c, "ldgsts_operand_read", "copy_burst_chained.csv rows %d and %d: 16 and 64 chained 16-byte copies issue in %.1f and %.1f cycles, %.2f a copy, less the IMAD's stall count (%d) before the LDGSTS", r16, r64, t16, t64, per, run->code[0].stall);
}

/*
 * tests/hw/l1_local.cu's loop as the L1 model sees it: how many of its local
 * loads come again after how many global lines went through L1 since the
 * element's last load (dist[d] loads at distance d; L1 not yet full counts
 * as distance 0, a first load is not counted: both hit).  l1_local.sass: at 4
 * stages and more a batch loads two offsets (LDL), the copy's (batch f % S)
 * and the add's ((f + 1) % S, the batch S - 1 back), around one LDGSTS.E
 * line a warp and, with stores, one STG line; at 2 stages ptxas unrolls the
 * loop and keeps both offsets in registers, so those rows measure no loop
 * and are left out.  The warps take turns a batch at a time.
 */
struct reuse {
	uint64_t lines, loads, ndist;
	uint64_t *dist;
	double size; /* the array's lines over L1's: the law's size term is size ^ l1_reuse_size_exponent */
};

static int local_reuse_distances(const struct machine *m, int stages, int warps, uint64_t carveout, bool store,
				 int batches, struct reuse *r)
{
	struct l1 l;
	l1_init(&l, m, carveout, 0, 1, 0);
	*r = (struct reuse){.lines = l.lines,
			    .ndist = (uint64_t)(stages + 1) * (uint64_t)warps * 2 + 1,
			    .size = l.lines ? (double)((uint64_t)m->l1_bytes / 128) / (double)l.lines : 1.0};
	r->dist = calloc(r->ndist, sizeof *r->dist);
	uint64_t *at = calloc((size_t)stages * (size_t)warps, sizeof *at);
	if (!r->dist || !at) {
		free(r->dist);
		free(at);
		return -1;
	}
	for (int f = 0; f < batches + stages - 1; f++)
		for (int w = 0; w < warps; w++)
			for (int use = 0; use < 2; use++) {
				if (use == 0 ? f >= batches : f < stages - 1)
					continue;
				uint64_t *last = &at[(size_t)w * (size_t)stages + (size_t)((f + use) % stages)];
				if (*last) {
					uint64_t d = l.streamed < l.lines ? 0 : l.streamed + 1 - *last;
					r->dist[d < r->ndist ? d : r->ndist - 1]++;
				}
				*last = l.streamed + 1;
				r->loads++;
				if (use == 0 || store)
					l1_stream(&l);
			}
	free(at);
	return 0;
}

/*
 * A row's reuse distances at one stream exponent, for the fit's inner loops:
 * each distance's loads and (d / L1's lines) ^ exponent, which the law
 * scales by its coefficient and size term (l1_miss_chance, capped at 1).
 */
struct reuse_powers {
	uint32_t n;
	double *loads, *power;
};

static int reuse_powers_of(const struct reuse *r, double exponent, struct reuse_powers *out)
{
	out->n = 0;
	out->loads = calloc(r->ndist, sizeof *out->loads);
	out->power = calloc(r->ndist, sizeof *out->power);
	if (!out->loads || !out->power)
		return -1;
	for (uint64_t d = 1; d < r->ndist; d++)
		if (r->dist[d]) {
			out->loads[out->n] = (double)r->dist[d];
			out->power[out->n++] = pow((double)d / (double)r->lines, exponent);
		}
	return 0;
}

/* The share of the loop's local loads that miss under the law with scale (coeff x size term) at those powers. */
static double local_reuse_misses(const struct reuse *r, const struct reuse_powers *p, double scale)
{
	double miss = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		double chance = scale * p->power[i];
		miss += p->loads[i] * (chance < 1.0 ? chance : 1.0);
	}
	return r->loads ? miss / (double)r->loads : 0.0;
}

/*
 * DRAM's latency under load (tests/hw/inflight_latency.cu lines mode,
 * inflight_lines.csv: one stage, 1-8 copies of 16 bytes a thread, 1-32 warps,
 * on every SM and on one SM alone).  Each row of the grid-wide rows pattern on
 * every SM gives how much longer its copies took than the same loop on one SM
 * alone (a warp's latency: its first copy's issue to its wait's end, so that of
 * its last copy), and the lines that copy found in flight when it issued: its
 * own warp's others (lines a warp - 1) and the other warps' (warps - 1) x lines
 * a warp, each in flight for the share of the batch its latency is (latency /
 * cycles a batch), lines a warp being copies x 4.  dram_line_latency
 * is the least-squares slope through the origin of the first against the
 * second, over the rows up to 256 lines an SM; beyond, the DRAM share binds
 * (dram_bytes_per_cycle, the model's queue).
 */
static void derive_dram_line_latency(struct calib *c)
{
	struct csv *v;
	int pattern = csv_column(c, "inflight_lines.csv", "pattern", &v);
	if (pattern < 0)
		return;
	double sxy = 0, sxx = 0;
	int n = 0;
	for (int r = 0; r < v->nrows; r++) {
		if (strcmp(v->cells[(size_t)r * CSV_MAX_COLS + (size_t)pattern], "rows") ||
		    row_num(c, v, r, "bytes") != 16 || row_num(c, v, r, "grid_blocks") == 1 ||
		    row_num(c, v, r, "lines_per_sm") > 256)
			continue;
		char copies[32], warps[32];
		snprintf(copies, sizeof copies, "copies=%.0f", row_num(c, v, r, "copies"));
		snprintf(warps, sizeof warps, "warps=%.0f", row_num(c, v, r, "warps"));
		int alone_row;
		double alone = cell(c, "inflight_lines.csv", "latency_median", &alone_row, "pattern=rows", "bytes=16", copies,
				    warps, "grid_blocks=1", NULL);
		double latency = row_num(c, v, r, "latency_median"), batch = row_num(c, v, r, "cycles_per_batch");
		if (c->d->code)
			return;
		double own = 4.0 * row_num(c, v, r, "copies");
		double in_flight = batch > 0 && latency < batch ? latency / batch : 1.0; /* of the batch, a line's time */
		double found = (row_num(c, v, r, "warps") - 1.0) * own * in_flight + own - 1.0;
		sxy += found * (latency - alone);
		sxx += found * found;
		n++;
	}
	if (n == 0 || sxx <= 0) {
		diag_set(c->d, DIAG_INPUT, "%s/inflight_lines.csv: expected 16-byte rows of the rows pattern on every SM, up to 256 lines an SM", c->dir);
		return;
	}
	c->m.dram_line_latency = round(sxy / sxx * 100.0) / 100.0;
	cite(c, "dram_line_latency", "inflight_lines.csv, %d rows (16-byte copies, rows pattern, every SM, up to 256 lines an SM): a copy's median latency beyond the same loop's on one SM alone against the lines its warp's last copy found in flight at its issue (its own warp's others, and the other warps' lines for the share of the batch they are in flight); least squares through the origin", n);
}

/*
 * L1 and the shared-memory carveout (tests/hw/l1_local.cu, run_l1_local.sh):
 * the carveout sizes, the driver's choice of one (carveout.csv, an empty
 * kernel at 64-1024 threads and 0-48 KB of dynamic shared memory), and the
 * law of local misses (sim/units/l1.h) whose replica of the microbenchmark's
 * loop misses most like it (l1_local.csv: 4-16 stages, 4-64 warps per SM,
 * carveouts of 64-228 KB, with and without a store a batch, 128 batches and
 * 1552).
 */
static void derive_l1(struct calib *c)
{
	struct machine *m = &c->m;
	int r;
	m->l1_bytes = iround(cell(c, "device.csv", "value", &r, "property=l1_smem_bytes", NULL));
	cite(c, "l1_bytes", "device.csv row %d: unified L1 data cache and shared memory per SM of this compute capability", r);
	struct csv *cv = NULL, *lv = NULL;
	if (c->d->code || csv_load(c, "carveout.csv", &cv) || csv_load(c, "l1_local.csv", &lv))
		return;
	/* the step between the two largest carveouts ncu reports */
	double top = 0, second = 0;
	for (int i = 0; i < cv->nrows + lv->nrows; i++) {
		double kb = i < cv->nrows ? row_num(c, cv, i, "carveout_kb") : row_num(c, lv, i - cv->nrows, "carveout_kb");
		if (kb > top)
			second = top, top = kb;
		else if (kb < top && kb > second)
			second = kb;
	}
	m->smem_carveout_step = iround((top - second) * 1024);
	cite(c, "smem_carveout_step", "carveout.csv and l1_local.csv: the two largest carveouts ncu reports, %.0f and %.0f KB", top, second);
	/* the reserve and the preferred largest carveout that reproduce the most of the driver's choices */
	int best = -1, rows = cv->nrows;
	int64_t best_reserve = 0, best_prefer = 0;
	for (int64_t reserve = 0; reserve <= 4096; reserve += 128)
		for (int64_t prefer = m->smem_carveout_step / 4; prefer <= m->smem_bytes; prefer += 1024) {
			m->smem_block_reserved = reserve;
			m->smem_carveout_prefer = prefer;
			int match = 0;
			for (int i = 0; i < rows; i++)
				match += (double)l1_carveout(m, (uint64_t)row_num(c, cv, i, "dynamic_smem"),
							     (int64_t)row_num(c, cv, i, "block_size")) ==
					 row_num(c, cv, i, "carveout_kb") * 1024;
			if (match > best)
				best = match, best_reserve = reserve, best_prefer = prefer;
		}
	m->smem_block_reserved = best_reserve;
	m->smem_carveout_prefer = best_prefer;
	cite(c, "smem_block_reserved", "carveout.csv: with it the driver's rule (sim/units/l1.c l1_carveout) gives the carveout ncu reports for %d of the %d launches", best, rows);
	cite(c, "smem_carveout_prefer", "carveout.csv: with it the driver's rule (sim/units/l1.c l1_carveout) gives the carveout ncu reports for %d of the %d launches", best, rows);
	/*
	 * The law whose replica of the loop misses most like it, over every row of 4 stages and more, in
	 * ratio (the mean absolute log of replica + 0.1% over measured + 0.1%): fitted in absolute
	 * difference, the few rows at the 228 KB carveout that miss 40-90% set the law and it misses
	 * up to 2.5 times too often where most kernels run, at 0.3-2%.
	 */
	struct reuse reuse_rows[512];
	double measured[512];
	int n = 0;
	for (int i = 0; i < lv->nrows && n < 512; i++) {
		int stages = (int)row_num(c, lv, i, "stages");
		double miss = row_num(c, lv, i, "local_miss_rate"), batches = row_num(c, lv, i, "batches");
		if (c->d->code)
			break;
		if (stages < 4 || isnan(miss) || !(batches >= 1))
			continue;
		if (local_reuse_distances(m, stages, (int)row_num(c, lv, i, "warps_per_sm"),
					  (uint64_t)row_num(c, lv, i, "carveout_kb") * 1024, row_num(c, lv, i, "store") != 0,
					  (int)batches, &reuse_rows[n])) {
			diag_set(c->d, DIAG_LIMIT, "out of memory for the replica of l1_local.cu's loop");
			break;
		}
		measured[n++] = miss;
	}
	double best_err = INFINITY, stream_only = INFINITY; /* stream_only: the best law without the size term */
	struct reuse_powers powers[512];
	double size_term[512];
	for (int e = 10; e <= 60 && !c->d->code; e++) { /* stream exponent 0.50-3.00 in steps of 0.05 */
		double exponent = 0.05 * e;
		int made = 0;
		while (made < n && !reuse_powers_of(&reuse_rows[made], exponent, &powers[made]))
			made++;
		if (made < n)
			diag_set(c->d, DIAG_LIMIT, "out of memory for the fit of the law of local misses");
		for (int z = 0; z <= 12 && !c->d->code; z++) { /* size exponent 0-3 in steps of 0.25 */
			double size_exponent = 0.25 * z;
			for (int i = 0; i < n; i++)
				size_term[i] = pow(reuse_rows[i].size, size_exponent);
			for (int k = 0; k <= 140; k++) { /* coefficient 0.01-9.6, 5% apart */
				double coeff = 0.01 * pow(1.05, k), err = 0;
				/* relative: the rows span 0.02% to 87%; under 0.1% a run's time does not feel it */
				for (int i = 0; i < n; i++)
					err += fabs(log((local_reuse_misses(&reuse_rows[i], &powers[i], coeff * size_term[i]) + 0.001) /
							(measured[i] + 0.001)));
				if (n && z == 0 && err / n < stream_only)
					stream_only = err / n;
				if (n && err / n < best_err) {
					best_err = err / n;
					m->l1_reuse_coeff = coeff;
					m->l1_reuse_exponent = exponent;
					m->l1_reuse_size_exponent = size_exponent;
				}
			}
		}
		for (int i = 0; i <= made && i < n; i++) { /* the one that failed, if one did, half made */
			free(powers[i].loads);
			free(powers[i].power);
		}
	}
	for (int i = 0; i < n; i++)
		free(reuse_rows[i].dist);
	cite(c, "l1_reuse_coeff", "l1_local.csv: with l1_reuse_exponent and l1_reuse_size_exponent, the law whose replica of the loop (calibrate.c local_reuse_distances) misses most like its %d rows of 4-16 stages, 128 and 1552 batches, carveouts of 64-228 KB: mean absolute log ratio %.3f of the miss shares (each + 0.001)", n, best_err);
	cite(c, "l1_reuse_exponent", "l1_local.csv: with l1_reuse_coeff and l1_reuse_size_exponent, the best fit (exponents 0.50-3.00 in steps of 0.05, coefficients 5%% apart; mean absolute log ratio %.3f over %d rows)", best_err, n);
	cite(c, "l1_reuse_size_exponent", "l1_local.csv: with l1_reuse_coeff and l1_reuse_exponent, the best fit (0-3 in steps of 0.25; mean absolute log ratio %.3f over %d rows, where the stream's power alone fits %.3f)", best_err, n, stream_only);
}

/*
 * What a warmed L2 keeps of a kernel's data (tests/hw/l2_capacity.cu): a
 * streaming kernel's second launch over 8-96 MB of input and output, against
 * the same launch after an L2 flush.  A row's lost share is how far its warm
 * time sits above the all-hit line (the two smallest footprints' times
 * against their batches) towards its flushed time; l2_keep_mb and
 * l2_lose_mb are the ramp from nothing lost to everything lost that fits
 * those shares best (least squares, 0.1 MB steps).
 */
static void derive_l2_capacity(struct calib *c)
{
	struct csv *v;
	int mode = csv_column(c, "l2_capacity.csv", "mode", &v);
	if (mode < 0)
		return;
	double mb[64], lost[64], batches[64], warm[64];
	int n = 0;
	for (int r = 0; r < v->nrows && n < 64; r++) {
		if (strcmp(v->cells[(size_t)r * CSV_MAX_COLS + mode], "rw") != 0)
			continue;
		mb[n] = row_num(c, v, r, "footprint_mb");
		batches[n] = row_num(c, v, r, "batches");
		warm[n] = row_num(c, v, r, "warm_ms_median");
		lost[n] = row_num(c, v, r, "flushed_ms_median"); /* the flushed time, until it becomes the share below */
		if (c->d->code)
			return;
		n++;
	}
	if (n < 3 || batches[1] == batches[0]) {
		diag_set(c->d, DIAG_INPUT, "%s/l2_capacity.csv: expected three or more rows of mode rw", c->dir);
		return;
	}
	double per_batch = (warm[1] - warm[0]) / (batches[1] - batches[0]);
	for (int i = 0; i < n; i++) {
		double all_hit = warm[0] + per_batch * (batches[i] - batches[0]);
		double share = lost[i] > all_hit ? (warm[i] - all_hit) / (lost[i] - all_hit) : 0.0;
		lost[i] = share < 0 ? 0 : share > 1 ? 1 : share;
	}
	double best = INFINITY;
	for (int k10 = 1; k10 < 1000; k10++)
		for (int l10 = k10 + 1; l10 <= 1000; l10++) {
			double keep = k10 / 10.0, lose = l10 / 10.0, err = 0;
			for (int i = 0; i < n; i++) {
				double ramp = mb[i] <= keep ? 0 : mb[i] >= lose ? 1 : (mb[i] - keep) / (lose - keep);
				err += (ramp - lost[i]) * (ramp - lost[i]);
			}
			if (err < best - 1e-12) {
				best = err;
				c->m.l2_keep_mb = keep;
				c->m.l2_lose_mb = lose;
			}
		}
	cite(c, "l2_keep_mb", "l2_capacity.csv, mode rw, %d rows: the least-squares ramp of the lost share (warm time above the all-hit line, towards the flushed time) against the footprint, residual %.4f", n, best);
	cite(c, "l2_lose_mb", "l2_capacity.csv: the same ramp's end, where the second launch finds none of its data in L2");
}

/*
 * What a one-lane LDGSTS holds the SM's memory-instruction path for
 * (tests/hw/lane_copies_sm.cu, lane_copies_sm.csv): 4-byte copies of one
 * active lane a warp, issued back to back by 32 warps on every SM, take this
 * many cycles a copy instruction SM-wide (up to eight lanes the same, a full
 * warp's twice as long: iclass_ldgsts_mio; the lanes between in proportion).
 */
static void derive_ldgsts_mio_least(struct calib *c)
{
	int row, row_full;
	double per = cell(c, "lane_copies_sm.csv", "cycles_per_copy_sm", &row, "bytes=4", "active_lanes=1", "warps_per_sm=32",
			  NULL);
	double full = cell(c, "lane_copies_sm.csv", "cycles_per_copy_sm", &row_full, "bytes=4", "active_lanes=32",
			   "warps_per_sm=32", NULL);
	if (c->d->code)
		return;
	c->m.ldgsts_mio_least = iround(per) < 1 ? 1 : iround(per);
	cite(c, "ldgsts_mio_least", "lane_copies_sm.csv row %d: 4-byte copies of one lane a warp, 32 warps a SM issuing back to back, %.2f cycles a copy instruction SM-wide (row %d, a full warp's: %.2f; 16 and 24 lanes between, in proportion to their lanes)", row, per, row_full, full);
}

/*
 * How widely lines from DRAM land around their median (inflight_spread.csv,
 * tests/hw/inflight_latency.cu's spread mode: one block's eight warps, one
 * 4-byte copy each a batch, at 1-8 blocks per SM): smsim draws a line's
 * landing uniformly within dram_spread + dram_spread_per_line x the SM's other
 * lines in flight either side of the median, so the slowest of a batch's
 * eight lands 7/9 of that after the median.  Least squares of 9/7 x the
 * measured slowest-over-median against the other lines (8 x blocks per SM - 1).
 */
static void derive_dram_spread(struct calib *c)
{
	struct csv *v = NULL;
	if (c->d->code || csv_load(c, "inflight_spread.csv", &v))
		return;
	struct line_fit fit = {0};
	for (int r = 0; r < v->nrows; r++) {
		double warps = row_num(c, v, r, "warps"), bps = row_num(c, v, r, "blocks_per_sm");
		double over = row_num(c, v, r, "batch_max_over_median_mean");
		if (c->d->code)
			return;
		fit_add(&fit, warps * bps - 1, over * (warps + 1) / (warps - 1));
	}
	double slope, at_none;
	if (!fit_line(&fit, &slope, &at_none)) {
		diag_set(c->d, DIAG_INPUT, "%s/inflight_spread.csv: expected rows at two or more occupancies", c->dir);
		return;
	}
	c->m.dram_spread = iround(at_none);
	c->m.dram_spread_per_line = round(slope * 10.0) / 10.0;
	cite(c, "dram_spread", "inflight_spread.csv, %d rows: the least-squares line of a batch's slowest copy over its median (x 9/7, a uniform spread's maximum of eight) against the other lines in flight, at none", fit.n);
	cite(c, "dram_spread_per_line", "inflight_spread.csv: the same line's slope, cycles per other line in flight");
}

/*
 * The scheduler's choice between ready warps (tests/hw/issue_order.cu,
 * issue_order.csv): every warp runs the same dependent FFMA chain, so where
 * the scheduler is oversubscribed only its choice between warps ready at the
 * same cycle orders their ends.  Four warps per scheduler of one block end
 * together or one after another (the latest last stamp over the earliest);
 * four of each of two blocks show whether the older block goes first (the
 * younger block's earliest end over the older's latest).  Greedy-then-oldest
 * ends one block's warps one after another; taking the least recently
 * issued ready warp of the oldest block with one ready ends them together
 * and still lets the older block go first; round robin ends both blocks
 * together.  A spread of 10% and a lead of half the run tell them apart.
 */
static void derive_scheduler(struct calib *c)
{
	struct csv *v;
	int mode = csv_column(c, "issue_order.csv", "mode", &v);
	int layout = mode < 0 ? -1 : col_of(c, v, "layout"), block = layout < 0 ? -1 : col_of(c, v, "block");
	if (block < 0)
		return;
	double one_lo = INFINITY, one_hi = 0, older_hi = 0, younger_lo = INFINITY;
	int rows = 0;
	for (int r = 0; r < v->nrows; r++) {
		char **cells = &v->cells[(size_t)r * CSV_MAX_COLS];
		if (strcmp(cells[mode], "dep") || row_num(c, v, r, "warps_per_scheduler_per_block") != 4)
			continue;
		double last = row_num(c, v, r, "last_stamp_median");
		if (isnan(last))
			continue;
		rows++;
		if (!strcmp(cells[layout], "one")) {
			one_lo = last < one_lo ? last : one_lo;
			one_hi = last > one_hi ? last : one_hi;
		} else if (!strcmp(cells[block], "first")) {
			older_hi = last > older_hi ? last : older_hi;
		} else {
			younger_lo = last < younger_lo ? last : younger_lo;
		}
	}
	if (one_hi == 0 || older_hi == 0 || isinf(younger_lo)) {
		diag_set(c->d, DIAG_INPUT, "%s/issue_order.csv: expected dep rows at 4 warps per scheduler, one block and two", c->dir);
		return;
	}
	bool together = one_hi / one_lo <= 1.1, older_first = younger_lo / older_hi >= 1.5;
	c->m.scheduler = together && older_first ? SCHED_GTO_LRI : together ? SCHED_LRR : SCHED_GTO;
	cite(c, "scheduler", "issue_order.csv, %d rows (dependent FFMA chains, 4 warps per scheduler and block): one block's warps end within %.1f%% of each other (%s), of two blocks the younger's first end comes %.2fx after the older's last (%s)",
	     rows, 100.0 * (one_hi / one_lo - 1.0), together ? "together: the least recently issued goes" : "one after another: the oldest goes",
	     younger_lo / older_hi, older_first ? "the older block goes first" : "neither block goes first");
}

/* What no benchmark measures: the model's choices, each saying so. */
static void derive_choices(struct calib *c)
{
	struct machine *m = &c->m;
	m->chain_unroll = 32;
	cite(c, "chain_unroll", "compute() as tests/hw/pipelines.cu compiles it: the source unrolls 8 FMAs a trip and ptxas 4 trips more, so a compiled trip is 32 FFMAs and its counter, compare and branch (traces/h100/FORMS.md, compute.trip)");
	m->l2_hit_fraction = 0.0;
	cite(c, "l2_hit_fraction", "model: the examples stream each input once, so sectors miss L2 unless an experiment says otherwise");
	cite(c, "grid_sync_latency", "not measured (no grid.sync benchmark yet): the built-in estimate of about 1 us over 132 SMs");
	m->reconverge = RECONVERGE_CONVERGENCE_BARRIER;
	cite(c, "reconverge", "model: nvcc closes divergent regions with BSSY/BSYNC (traces/h100/diverged_commit.sass), where the paths rejoin; a path that waits lets the others issue, as Volta+ independent thread scheduling guarantees (the libcu++ barrier and pipeline tests need it)");
	m->quit = QUIT_LIBCUDACXX;
	cite(c, "quit", "model: what CUDA 13's libcu++ does (cuda/pipeline quit(): only the reference count drops); "
			"'guide' models the Programming Guide's promise");
}

static void write_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void write_machine(const struct calib *c, FILE *f, const char *name, const char *description)
{
	const struct machine *m = &c->m;
	fprintf(f, "{\n  \"machine\": ");
	write_json_string(f, name);
	fprintf(f, ",\n  \"description\": ");
	write_json_string(f, description);
	fprintf(f, ",\n  \"fields\": {\n");
	int i = 0;
#define WRITE_I(n) fprintf(f, "%lld", (long long)m->n)
#define WRITE_F(n) fprintf(f, "%.4g", m->n)
#define WRITE(n, t, d, lo, hi, u)                                          \
	fprintf(f, "    \"%s\": {\"value\": ", #n);                       \
	WRITE_##t(n);                                                    \
	fprintf(f, ", \"unit\": ");                                      \
	write_json_string(f, u);                                         \
	fprintf(f, ", \"source\": ");                                    \
	write_json_string(f, c->sources[i] ? c->sources[i] : "built-in default"); \
	fprintf(f, "},\n");                                              \
	i++;
	MACHINE_FIELDS(WRITE)
#undef WRITE
#undef WRITE_I
#undef WRITE_F
	const char *words[3] = {machine_scheduler_name(m->scheduler), machine_reconverge_name(m->reconverge),
				machine_quit_name(m->quit)};
	const char *keys[3] = {"scheduler", "reconverge", "quit"};
	for (int w = 0; w < 3; w++, i++) {
		fprintf(f, "    \"%s\": {\"value\": \"%s\", \"source\": ", keys[w], words[w]);
		write_json_string(f, c->sources[i] ? c->sources[i] : "built-in default");
		fprintf(f, "}%s\n", w < 2 ? "," : "");
	}
	fprintf(f, "  }\n}\n");
}

/*
 * Every derived field within the range the machine loader accepts: a CSV
 * value that is finite but absurd (a clock of 0, a latency of -32 or 1e30)
 * derives a field the loader would refuse, or an infinity JSON cannot hold.
 * The message names the field and the rows it came from.
 */
static void check_ranges(struct calib *c)
{
	int i = 0;
#define MACHINE_RANGE(n, t, dflt, lo, hi, u)                                                                  \
	if (!c->d->code && !(isfinite((double)c->m.n) && (double)c->m.n >= (lo) && (double)c->m.n <= (hi)))    \
		diag_set(c->d, DIAG_INPUT, "%s: %s = %g is outside %g..%g (%s): derived from %s", c->dir, #n,      \
			 (double)c->m.n, (double)(lo), (double)(hi), u, c->sources[i] ? c->sources[i] : "the default"); \
	i++;
	MACHINE_FIELDS(MACHINE_RANGE)
#undef MACHINE_RANGE
}

int cmd_calibrate(int argc, char **argv, const char *self)
{
	(void)self;
	const char *dir = NULL, *out = NULL, *name = "h100-sxm5";
	for (int i = 0; i < argc; i++) {
		int got;
		if ((got = cli_value(argc, argv, &i, "calibrate", "-o", &out)) ||
		    (got = cli_value(argc, argv, &i, "calibrate", "--name", &name))) {
			if (got < 0)
				return 2;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_unknown_option("calibrate", argv[i]);
		} else if (dir) {
			fprintf(stderr, "smsim calibrate: one directory, not \"%s\" too\n", argv[i]);
			return 2;
		} else {
			dir = argv[i];
		}
	}
	if (!dir) {
		fprintf(stderr, "smsim calibrate: which directory of CSVs? (smsim calibrate --help)\n");
		return 2;
	}
	struct diag d = {0};
	struct calib *c = calloc(1, sizeof *c);
	if (!c)
		return 2;
	c->dir = dir;
	c->d = &d;
	machine_defaults(&c->m);
	derive_device(c);
	derive_classes(c);
	derive_choices(c);
	derive_scheduler(c);
	derive_loops(c); /* the branch costs: the mbarrier wake (derive_memory) subtracts a taken branch */
	derive_memory(c);
	derive_progress(c);
	derive_operand_read(c);
	derive_s2r_queue(c);
	derive_port_bubble(c);
	derive_l1(c);
	derive_dram_line_latency(c);
	derive_l2_capacity(c);
	derive_dram_spread(c);
	derive_ldgsts_mio_least(c);
	check_ranges(c);
	int rc = 0;
	if (d.code) {
		fprintf(stderr, "smsim: calibrate: %s\n", d.msg);
		rc = 2;
	} else {
		char desc[512];
		snprintf(desc, sizeof desc,
			 "One SM, every field derived by `smsim calibrate %s` from the microbenchmarks in tests/hw/ "
			 "(clock64 cycles at %.2f GHz); see %s/README.md for the runs.", dir, c->m.clock_ghz, dir);
		if (out && strcmp(out, "-") != 0) {
			struct outfile of;
			if (outfile_open(&of, out, &d) == 0) {
				write_machine(c, of.f, name, desc);
				rc = outfile_commit(&of, &d) ? 2 : 0;
			} else {
				rc = 2;
			}
			if (rc)
				fprintf(stderr, "smsim: calibrate: %s\n", d.msg);
		} else {
			write_machine(c, stdout, name, desc);
			if (fflush(stdout) || ferror(stdout)) { /* a full disk or /dev/full must not pass for a written file */
				fprintf(stderr, "smsim: calibrate: writing to standard output failed: %s\n", strerror(errno));
				rc = 2;
			}
		}
	}
	for (int i = 0; i < c->nfiles; i++) {
		free(c->files[i].cells);
		free(c->files[i].text);
	}
	for (int i = 0; i < 256; i++)
		free(c->sources[i]);
	free(c);
	return rc;
}

/*
 * machine: the shipped H100 config, --set machine.NAME=VALUE, bad files.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "isa/jdoc.h"
#include "sim/engine/machine.h"

#define H100 "configs/machines/h100.json"

static char dir[64];
static char written[8][128];
static int nwritten;

static void make_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/smsim_machine_XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp failed");
	nwritten = 0;
}

static void remove_dir(void)
{
	for (int i = 0; i < nwritten; i++)
		unlink(written[i]);
	rmdir(dir);
}

TestSuite(machine, .init = make_dir, .fini = remove_dir);

/* Writes text to dir/name, single quotes turned into double quotes; returns the path. */
static const char *write_file(const char *name, const char *text)
{
	cr_assert_lt(nwritten, 8);
	char *path = written[nwritten++];
	snprintf(path, sizeof written[0], "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "cannot write %s", path);
	for (const char *p = text; *p; p++)
		fputc(*p == '\'' ? '"' : *p, f);
	fclose(f);
	return path;
}

static void load_h100(struct machine *m)
{
	struct diag d = {0};
	int rc = machine_load(H100, m, &d);
	cr_assert_eq(rc, 0, "%s", d.msg);
}

Test(machine, h100_values)
{
	struct machine m;
	load_h100(&m);
	cr_assert_str_eq(m.name, "h100-sxm5");
	cr_assert_eq(m.dram_latency, 727, "calibrated: traces/h100/roundtrip.csv");
	cr_assert_eq(m.smem_latency, 23);
	cr_assert_eq(m.iclass_fma_latency, 4);
	cr_assert_eq(m.subpartitions, 4);
	cr_assert_eq(m.l2_latency, 285);
	cr_assert_eq(m.cp_async_extra_latency, 11, "measured: traces/h100/pcsamp_latency.csv, roundtrip.cu sampled per instruction");
	cr_assert_eq(m.iclass_syncs_latency, 43, "measured: traces/h100/iclass.csv, SYNCS.PHASECHK chain");
	cr_assert_eq(m.iclass_branch_latency, 29, "measured: traces/h100/iclass.csv, taken BRA");
	cr_assert_eq(m.iclass_alu_interval, 2, "measured: IADD3 at 8 warps per scheduler");
	cr_assert_eq(m.iclass_fma_interval, 1);
	cr_assert_eq(m.max_warps, 64);
	cr_assert_eq(m.smem_bytes, 233472);
	cr_assert_eq(m.smem_block_bytes, 232448);
	cr_assert_eq(m.scheduler, SCHED_GTO_LRI, "derived: traces/h100/issue_order.csv");
	cr_assert_float_eq(m.dram_bytes_per_cycle, 11.4, 1e-12);
	cr_assert_float_eq(m.clock_ghz, 1.98, 1e-12);
	cr_assert_float_eq(m.l2_hit_fraction, 0.0, 1e-12);
}

Test(machine, defaults_are_documented_values)
{
	struct machine m;
	machine_defaults(&m);
	cr_assert_eq(m.dram_latency, 688);
	cr_assert_eq(m.smem_latency, 23);
	cr_assert_eq(m.iclass_fma_latency, 4);
	cr_assert_eq(m.subpartitions, 4);
	cr_assert_eq(m.scheduler, SCHED_GTO);
	cr_assert_float_eq(m.dram_bytes_per_cycle, 12.8, 1e-12);
}

Test(machine, file_lists_every_field_with_value_unit_source)
{
	size_t len = 0;
	char *text = jdoc_read_file(H100, &len);
	cr_assert_not_null(text, "cannot read " H100);
	cJSON *root = cJSON_Parse(text);
	free(text);
	cr_assert_not_null(root, H100 " is not JSON");
	const cJSON *fields = cJSON_GetObjectItemCaseSensitive(root, "fields");
	cr_assert(cJSON_IsObject(fields));
	static const char *const numeric[] = {
#define NAME(n, t, d, lo, hi, u) #n,
		MACHINE_FIELDS(NAME)
#undef NAME
	};
	int nnumeric = (int)(sizeof numeric / sizeof numeric[0]);
	int found = 0;
	for (const cJSON *f = fields->child; f; f = f->next) {
		cr_assert(cJSON_IsObject(f), "%s: not an object", f->string);
		const cJSON *value = cJSON_GetObjectItemCaseSensitive(f, "value");
		const cJSON *unit = cJSON_GetObjectItemCaseSensitive(f, "unit");
		const cJSON *source = cJSON_GetObjectItemCaseSensitive(f, "source");
		cr_assert_not_null(value, "%s: no value", f->string);
		cr_assert(cJSON_IsString(source) && strlen(source->valuestring) > 3, "%s: no source", f->string);
		bool is_numeric = false;
		for (int i = 0; i < nnumeric; i++)
			if (strcmp(numeric[i], f->string) == 0)
				is_numeric = true;
		if (is_numeric) {
			found++;
			cr_assert(cJSON_IsNumber(value), "%s: value is not a number", f->string);
			cr_assert(cJSON_IsString(unit) && unit->valuestring[0], "%s: no unit", f->string);
		} else {
			/* Word fields such as the scheduler: a name, no unit needed. */
			cr_assert(cJSON_IsString(value), "%s: neither a numeric field nor a word", f->string);
		}
	}
	/* Every numeric field the simulator has is in the file, so each number carries its source. */
	for (int i = 0; i < nnumeric; i++)
		cr_assert_not_null(cJSON_GetObjectItemCaseSensitive(fields, numeric[i]), "%s missing from " H100,
				   numeric[i]);
	cr_assert_eq(found, nnumeric);
	const cJSON *sched = cJSON_GetObjectItemCaseSensitive(fields, "scheduler");
	cr_assert_not_null(sched, "scheduler missing from " H100);
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(sched, "value")->valuestring, "gto_lri");
	cJSON_Delete(root);
}

Test(machine, set_valid_values)
{
	struct machine m;
	load_h100(&m);
	struct diag d = {0};
	cr_assert_eq(machine_set(&m, "dram_latency", "700", &d), 0, "%s", d.msg);
	cr_assert_eq(m.dram_latency, 700);
	cr_assert_eq(machine_set(&m, "dram_bytes_per_cycle", "25.6", &d), 0, "%s", d.msg);
	cr_assert_float_eq(m.dram_bytes_per_cycle, 25.6, 1e-12);
	cr_assert_eq(machine_set(&m, "iclass_fma_latency", "6.0", &d), 0, "%s", d.msg);
	cr_assert_eq(m.iclass_fma_latency, 6);
	cr_assert_eq(machine_set(&m, "subpartitions", "8", &d), 0, "upper bound is inclusive: %s", d.msg);
	cr_assert_eq(m.subpartitions, 8);
	cr_assert_eq(machine_set(&m, "l2_hit_fraction", "1", &d), 0, "%s", d.msg);
	cr_assert_float_eq(m.l2_hit_fraction, 1.0, 1e-12);
	cr_assert_eq(machine_set(&m, "scheduler", "lrr", &d), 0, "%s", d.msg);
	cr_assert_eq(m.scheduler, SCHED_LRR);
	cr_assert_eq(machine_set(&m, "scheduler", "gto_lri", &d), 0, "%s", d.msg);
	cr_assert_eq(m.scheduler, SCHED_GTO_LRI);
	cr_assert_eq(machine_set(&m, "scheduler", "gto", &d), 0, "%s", d.msg);
	cr_assert_eq(m.scheduler, SCHED_GTO);
	/* Other fields are untouched. */
	cr_assert_eq(m.smem_latency, 23);
}

/* machine_set must fail with code 2, mention fragment, and leave m as it was. */
static void set_fails(const char *name, const char *value, const char *fragment)
{
	struct machine m, before;
	load_h100(&m);
	before = m;
	struct diag d = {0};
	int rc = machine_set(&m, name, value, &d);
	cr_assert_eq(rc, DIAG_INPUT, "machine.%s=%s: expected 2, got %d", name, value, rc);
	cr_assert_eq(d.code, DIAG_INPUT);
	cr_assert(strstr(d.msg, fragment), "machine.%s=%s: message \"%s\" lacks \"%s\"", name, value, d.msg,
		  fragment);
	char prefix[128];
	snprintf(prefix, sizeof prefix, "machine.%s", name);
	cr_assert(strstr(d.msg, prefix), "message \"%s\" does not name the field", d.msg);
	cr_assert(memcmp(&m, &before, sizeof m) == 0, "machine.%s=%s changed the machine", name, value);
}

Test(machine, set_unknown_field)
{
	set_fails("dram_latncy", "700", "unknown machine field \"dram_latncy\"; did you mean \"dram_latency\"?");
	set_fails("schedular", "700", "did you mean \"scheduler\"?");
	set_fails("dram_latncy", "fast", "did you mean \"dram_latency\"?");
	set_fails("warp_speed", "9", "unknown machine field \"warp_speed\"");
}

Test(machine, set_not_a_number)
{
	set_fails("dram_latency", "fast", "expected a number");
	set_fails("dram_latency", "", "expected a number");
	set_fails("dram_latency", "12abc", "expected a number");
	set_fails("clock_ghz", "nan", "expected a number");
	set_fails("clock_ghz", "inf", "expected a number");
	set_fails("scheduler", "fifo", "expected \"gto\", \"lrr\" or \"gto_lri\"");
}

/*
 * reconverge: convergence_barrier (Volta+, the default), simt_stack (pre-Volta), independent; the former
 * name post_dominator still loads, as the model where paths rejoin at the post-dominator that it named.
 */
Test(machine, reconverge_models)
{
	struct machine m;
	machine_defaults(&m);
	cr_assert_eq(m.reconverge, RECONVERGE_CONVERGENCE_BARRIER);
	cr_assert_str_eq(machine_reconverge_name(m.reconverge), "convergence_barrier");
	struct diag d = {0};
	cr_assert_eq(machine_set(&m, "reconverge", "simt_stack", &d), 0, "%s", d.msg);
	cr_assert_eq(m.reconverge, RECONVERGE_SIMT_STACK);
	cr_assert_str_eq(machine_reconverge_name(m.reconverge), "simt_stack");
	cr_assert_eq(machine_set(&m, "reconverge", "independent", &d), 0, "%s", d.msg);
	cr_assert_eq(m.reconverge, RECONVERGE_INDEPENDENT);
	cr_assert_eq(machine_set(&m, "reconverge", "post_dominator", &d), 0, "%s", d.msg);
	cr_assert_eq(m.reconverge, RECONVERGE_CONVERGENCE_BARRIER);
	cr_assert_eq(machine_set(&m, "reconverge", "convergence_barrier", &d), 0, "%s", d.msg);
	cr_assert_eq(m.reconverge, RECONVERGE_CONVERGENCE_BARRIER);
	set_fails("reconverge", "stack", "expected \"convergence_barrier\", \"simt_stack\" or \"independent\"");
	cr_assert_gt(m.mbarrier_try_wait_limit, 0);
}

Test(machine, set_out_of_range)
{
	set_fails("subpartitions", "9", "subpartitions = 9 is outside 1..8");
	set_fails("subpartitions", "0", "outside 1..8");
	set_fails("smem_latency", "-4", "outside");
	set_fails("l2_hit_fraction", "1.5", "outside 0..1");
	set_fails("dram_latency", "1e9", "outside");
}

Test(machine, set_non_integer_for_integer_field)
{
	set_fails("smem_latency", "4.5", "expected an integer for smem_latency");
	set_fails("subpartitions", "2.25", "expected an integer");
}

/* machine_load must fail with code 2; message begins "FILE:LINE:COL: at JPATH: " (line, col given). */
static void load_fails(const char *name, const char *text, const char *jpath, int line, int col,
		       const char *fragment)
{
	const char *file = write_file(name, text);
	struct machine m;
	struct diag d = {0};
	int rc = machine_load(file, &m, &d);
	cr_assert_eq(rc, DIAG_INPUT, "%s: expected 2, got %d: %s", name, rc, d.msg);
	char want[512];
	snprintf(want, sizeof want, "%s:%d:%d: at %s: ", file, line, col, jpath);
	cr_assert(strncmp(d.msg, want, strlen(want)) == 0, "%s: message\n  %s\ndoes not begin\n  %s", name, d.msg,
		  want);
	cr_assert(strstr(d.msg, fragment), "%s: message\n  %s\nlacks\n  %s", name, d.msg, fragment);
}

Test(machine, bad_file_unknown_field)
{
	load_fails("unknown.json",
		   "{'machine': 'x',\n"
		   " 'fields': {\n"
		   "  'dram_latencyy': {'value': 700, 'unit': 'cycles', 'source': 'test'}\n"
		   " }}\n",
		   "$.fields.dram_latencyy", 3, 20, "unknown field \"dram_latencyy\"; did you mean \"dram_latency\"?");
}

Test(machine, bad_file_unknown_top_level_field)
{
	load_fails("top.json", "{'machine': 'x', 'feilds': {}}\n", "$.feilds", 1, 28,
		   "did you mean \"fields\"?");
}

Test(machine, bad_file_value_not_a_number)
{
	load_fails("nan.json",
		   "{'machine': 'x',\n"
		   " 'fields': {\n"
		   "  'dram_latency': {'value': '700', 'unit': 'cycles', 'source': 'test'}\n"
		   " }}\n",
		   "$.fields.dram_latency.value", 3, 29, "expected a number");
}

Test(machine, bad_file_out_of_range)
{
	load_fails("range.json",
		   "{'machine': 'x',\n"
		   " 'fields': {\n"
		   "  'subpartitions': {'value': 0, 'unit': 'schedulers', 'source': 'test'}\n"
		   " }}\n",
		   "$.fields.subpartitions.value", 3, 30, "outside 1..8");
}

Test(machine, bad_file_non_integer)
{
	load_fails("int.json",
		   "{'machine': 'x',\n"
		   " 'fields': {\n"
		   "  'smem_latency': {'value': 4.5, 'unit': 'cycles', 'source': 'test'}\n"
		   " }}\n",
		   "$.fields.smem_latency.value", 3, 29, "expected an integer for smem_latency");
}

Test(machine, bad_file_missing_source)
{
	load_fails("nosource.json",
		   "{'machine': 'x',\n"
		   " 'fields': {\n"
		   "  'smem_latency': {'value': 4, 'unit': 'cycles'}\n"
		   " }}\n",
		   "$.fields.smem_latency", 3, 19, "missing required field \"source\"");
}

Test(machine, bad_file_missing_unit)
{
	load_fails("nounit.json",
		   "{'machine': 'x',\n"
		   " 'fields': {\n"
		   "  'smem_latency': {'value': 4, 'source': 'test'}\n"
		   " }}\n",
		   "$.fields.smem_latency", 3, 19, "missing required field \"unit\"");
}

Test(machine, bad_file_bad_scheduler)
{
	load_fails("sched.json",
		   "{'machine': 'x',\n"
		   " 'fields': {\n"
		   "  'scheduler': {'value': 'fifo', 'source': 'test'}\n"
		   " }}\n",
		   "$.fields.scheduler.value", 3, 26, "expected \"gto\", \"lrr\" or \"gto_lri\"");
}

Test(machine, bad_file_smem_block_exceeds_sm)
{
	load_fails("smem.json",
		   "{'machine': 'x',\n"
		   " 'fields': {\n"
		   "  'smem_block_bytes': {'value': 65536, 'unit': 'bytes', 'source': 'test'},\n"
		   "  'smem_bytes': {'value': 32768, 'unit': 'bytes', 'source': 'test'}\n"
		   " }}\n",
		   "$", 1, 1, "smem_block_bytes (65536) exceeds smem_bytes (32768)");
}

Test(machine, bad_file_missing_name)
{
	load_fails("noname.json", "{'fields': {}}\n", "$", 1, 1, "missing required field \"machine\"");
}

Test(machine, bad_file_invalid_json)
{
	const char *file = write_file("syntax.json", "{'machine': 'x',\n 'fields': {,}}\n");
	struct machine m;
	struct diag d = {0};
	cr_assert_eq(machine_load(file, &m, &d), DIAG_INPUT, "%s", d.msg);
	/* cJSON stops at or just after the stray comma: line 2, column 13 or 14. */
	char want13[256], want14[256];
	snprintf(want13, sizeof want13, "%s:2:13: invalid JSON", file);
	snprintf(want14, sizeof want14, "%s:2:14: invalid JSON", file);
	cr_assert(strstr(d.msg, want13) || strstr(d.msg, want14), "message \"%s\" lacks \"%s\"", d.msg, want13);
}

Test(machine, missing_file)
{
	char path[128];
	snprintf(path, sizeof path, "%s/none.json", dir);
	struct machine m;
	struct diag d = {0};
	cr_assert_eq(machine_load(path, &m, &d), DIAG_INPUT, "%s", d.msg);
	cr_assert(strstr(d.msg, path), "%s", d.msg);
}

Test(machine, partial_file_keeps_defaults)
{
	const char *file = write_file("partial.json",
				      "{'machine': 'small', 'description': 'test',\n"
				      " 'fields': {\n"
				      "  'dram_latency': {'value': 500, 'unit': 'cycles', 'source': 'test'},\n"
				      "  'scheduler': {'value': 'lrr', 'source': 'test'}\n"
				      " }}\n");
	struct machine m, def;
	struct diag d = {0};
	cr_assert_eq(machine_load(file, &m, &d), 0, "%s", d.msg);
	machine_defaults(&def);
	cr_assert_str_eq(m.name, "small");
	cr_assert_eq(m.dram_latency, 500);
	cr_assert_eq(m.scheduler, SCHED_LRR);
	cr_assert_eq(m.smem_latency, def.smem_latency);
	cr_assert_eq(m.l2_latency, def.l2_latency);
	cr_assert_float_eq(m.dram_bytes_per_cycle, def.dram_bytes_per_cycle, 1e-12);
}

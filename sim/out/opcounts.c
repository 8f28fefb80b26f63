#include "opcounts.h"

#include "../../isa/lower.h"

/* What an op is called in the table: its form ("let", "producer_acquire.block"), a loop's or if's test "branch". */
static const char *op_label(const struct kernel *k, uint32_t pc)
{
	const char *name = k->lowered && k->lowered[pc].name ? k->lowered[pc].name : "";
	return *name ? name : "branch";
}

static uint64_t op_total(const struct sim_report *r, uint32_t pc)
{
	uint64_t n = 0;
	for (int c = 0; c < IC_COUNT; c++)
		n += r->op_issued[(size_t)pc * IC_COUNT + c];
	return n;
}

static const char *op_path(const struct kernel *k, uint32_t pc)
{
	const struct insn *in = &k->code[pc];
	return k->paths && k->paths[in->where] ? k->paths[in->where] : "";
}

static int op_line(const struct kernel *k, uint32_t pc)
{
	return k->path_line ? k->path_line[k->code[pc].where] : 0;
}

void opcounts_text(FILE *out, const struct kernel *k, const struct sim_report *r)
{
	if (!r->op_issued || !r->warps)
		return;
	uint64_t all = 0;
	for (uint32_t pc = 0; pc < r->op_issued_ops; pc++)
		all += op_total(r, pc);
	fprintf(out, "\nwarp-instructions by op (issued: all %u warps together; per warp: over them; classes as in pipes)\n",
		r->warps);
	fprintf(out, "  %4s %5s %-26s %-34s %10s %9s  %s\n", "op", "line", "form", "where", "issued", "per warp",
		"per warp by class");
	for (uint32_t pc = 0; pc < r->op_issued_ops; pc++) {
		uint64_t n = op_total(r, pc);
		if (!n)
			continue;
		fprintf(out, "  %4u %5d %-26.26s %-34.34s %10llu %9.2f ", pc, op_line(k, pc), op_label(k, pc), op_path(k, pc),
			(unsigned long long)n, (double)n / r->warps);
		for (int c = 0, first = 1; c < IC_COUNT; c++) {
			uint64_t v = r->op_issued[(size_t)pc * IC_COUNT + c];
			if (v) {
				fprintf(out, "%s%s %.2f", first ? " " : ", ", iclass_name[c], (double)v / r->warps);
				first = 0;
			}
		}
		fprintf(out, "\n");
	}
	fprintf(out, "  total %llu warp-instructions\n", (unsigned long long)all);
}

cJSON *opcounts_json(const struct kernel *k, const struct sim_report *r)
{
	if (!r->op_issued)
		return NULL;
	cJSON *ops = cJSON_CreateArray();
	for (uint32_t pc = 0; ops && pc < r->op_issued_ops; pc++) {
		uint64_t n = op_total(r, pc);
		if (!n)
			continue;
		cJSON *o = cJSON_CreateObject(), *by = cJSON_CreateObject();
		if (!o || !by) {
			cJSON_Delete(o);
			cJSON_Delete(by);
			cJSON_Delete(ops);
			return NULL;
		}
		cJSON_AddNumberToObject(o, "op", pc);
		cJSON_AddStringToObject(o, "form", op_label(k, pc));
		cJSON_AddStringToObject(o, "at", op_path(k, pc));
		cJSON_AddNumberToObject(o, "line", op_line(k, pc));
		cJSON_AddNumberToObject(o, "warp_instructions", (double)n);
		for (int c = 0; c < IC_COUNT; c++)
			if (r->op_issued[(size_t)pc * IC_COUNT + c])
				cJSON_AddNumberToObject(by, iclass_name[c], (double)r->op_issued[(size_t)pc * IC_COUNT + c]);
		cJSON_AddItemToObject(o, "classes", by);
		cJSON_AddItemToArray(ops, o);
	}
	return ops;
}

#include "ops.h"

#include <string.h>

const struct op_info op_table[OP_COUNT] = {
#define OP_ROW(e, name, cls, doc) [OP_##e] = {name, cls, doc},
	OP_LIST(OP_ROW)
#undef OP_ROW
};

enum op op_by_name(const char *name)
{
	for (int i = 0; i < OP_COUNT; i++)
		if (op_table[i].name[0] && strcmp(op_table[i].name, name) == 0)
			return (enum op)i;
	return OP_COUNT;
}

#include "suggest.h"

#include <stddef.h>
#include <string.h>

/* Levenshtein distance; names longer than any identifier we hold are never close. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 99;
	size_t row[64];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag_prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = diag_prev + cost;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag_prev = up;
		}
	}
	return row[lb];
}

const char *suggest_name(const char *name, const char *const *names)
{
	const char *best = NULL;
	size_t best_d = 99;
	for (size_t i = 0; names && names[i]; i++) {
		size_t dist = edit_distance(name, names[i]);
		if (dist < best_d) {
			best_d = dist;
			best = names[i];
		}
	}
	/* About one edit per three letters: a guess from less is noise. */
	size_t limit = strlen(name) / 3 + 1;
	return best_d <= limit ? best : NULL;
}

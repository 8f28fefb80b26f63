/*
 * One number from a microbenchmark CSV in traces/h100/: the column col of the last row whose
 * columns match every "name=value" given (NULL-ended), compared as text. A test asserts it found one.
 */
#pragma once
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits line in place at its commas into at most n fields; returns how many. */
static inline int h100_csv_split(char *line, char **field, int n)
{
	int k = 0;
	line[strcspn(line, "\r\n")] = '\0';
	for (char *p = line; k < n; p++) {
		field[k++] = p;
		if (!(p = strchr(p, ',')))
			break;
		*p = '\0';
	}
	return k;
}

static inline double h100_cell(const char *file, const char *col, ...)
{
	char path[256], head[1024], line[1024];
	snprintf(path, sizeof path, "traces/h100/%s", file);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	cr_assert_not_null(fgets(head, sizeof head, f), "%s: no header", path);
	char *names[32];
	int ncols = h100_csv_split(head, names, 32), want = -1;
	for (int i = 0; i < ncols; i++)
		if (!strcmp(names[i], col))
			want = i;
	cr_assert_geq(want, 0, "%s: no column %s", path, col);
	const char *keys[8];
	int nkeys = 0;
	va_list ap;
	va_start(ap, col);
	for (const char *k; nkeys < 8 && (k = va_arg(ap, const char *));)
		keys[nkeys++] = k;
	va_end(ap);
	double v = NAN;
	while (fgets(line, sizeof line, f)) {
		char *cell[32];
		int n = h100_csv_split(line, cell, 32);
		bool match = want < n;
		for (int i = 0; i < nkeys && match; i++) {
			size_t len = strcspn(keys[i], "=");
			int c = -1;
			for (int j = 0; j < ncols; j++)
				if (strlen(names[j]) == len && !strncmp(names[j], keys[i], len))
					c = j;
			match = c >= 0 && c < n && !strcmp(cell[c], keys[i] + len + (keys[i][len] == '='));
		}
		if (match)
			v = strtod(cell[want], NULL);
	}
	fclose(f);
	cr_assert(!isnan(v), "%s: no row with %s", path, nkeys ? keys[0] : "any key");
	return v;
}

#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int diag_set(struct diag *d, enum diag_code code, const char *fmt, ...)
{
	if (!d)
		return (int)code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof d->msg, fmt, ap);
	va_end(ap);
	d->code = code;
	return (int)code;
}

void diag_list_add(struct diag_list *l, const struct diag *d)
{
	if (!l->items && l->n == 0)
		l->items = malloc(DIAG_LIST_MAX * sizeof *l->items);
	if (!l->items || l->n == DIAG_LIST_MAX) {
		l->more++;
		return;
	}
	l->items[l->n++] = *d;
}

void diag_list_free(struct diag_list *l)
{
	if (!l)
		return;
	free(l->items);
	*l = (struct diag_list){0};
}

#include "diag.h"

#include <stdarg.h>
#include <stdio.h>

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

/*
 * diag: the one error report every loader and the simulator fill in.
 *
 * Library code never prints or exits; it fills a struct diag and returns
 * its code.  Only the command line turns a diag into a message and an exit
 * status.  The codes are the exit statuses the CLI promises.
 */
#ifndef SMSIM_DIAG_H
#define SMSIM_DIAG_H

enum diag_code {
	DIAG_OK = 0,
	DIAG_INPUT = 2,    /* bad input or a program error in the kernel */
	DIAG_DEADLOCK = 3, /* the simulated kernel can never finish */
	DIAG_LIMIT = 4,    /* a runaway input hit a configured limit */
};

struct diag {
	enum diag_code code;
	char msg[2048];
};

#if defined(__GNUC__)
#define DIAG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DIAG_PRINTF(a, b)
#endif

/* Fills d (when not NULL) and returns code, so callers can `return diag_set(...)`. */
int diag_set(struct diag *d, enum diag_code code, const char *fmt, ...) DIAG_PRINTF(3, 4);

/*
 * Every error a check finds, in the order found, where a load stops at the
 * first (smsim check).  The first DIAG_LIST_MAX are kept; more counts the
 * rest, and any that could not be stored for want of memory.
 */
#define DIAG_LIST_MAX 100

struct diag_list {
	struct diag *items;
	int n;
	int more;
};

/* Appends a copy of d. */
void diag_list_add(struct diag_list *l, const struct diag *d);
/* Frees the items; l is empty again.  NULL is fine. */
void diag_list_free(struct diag_list *l);

#endif

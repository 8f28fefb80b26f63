/*
 * evq: the event queue, a binary heap ordered by (cycle, sequence).
 *
 * The sequence number is assigned at push, so events of one cycle fire in
 * the order they were scheduled: a total order, hence deterministic runs.
 * Scheduling into the past is a simulator bug and aborts.  The queue holds
 * plain records; what an event means is up to its owner (see sim.c).
 */
#ifndef SMSIM_EVQ_H
#define SMSIM_EVQ_H

#include <stdbool.h>
#include <stdint.h>

struct event {
	uint64_t cycle;
	uint64_t seq;
	uint32_t kind;  /* the owner's event type */
	uint32_t owner; /* index of the component the event belongs to */
	uint64_t arg;
};

struct evq {
	struct event *heap;
	uint32_t len, cap;
	uint64_t next_seq;
	uint64_t now;    /* cycle of the last popped event */
	uint64_t popped; /* events delivered so far */
};

void evq_init(struct evq *q);
void evq_free(struct evq *q);
/* Returns -1 only when memory runs out; cycle < now aborts. */
int evq_push(struct evq *q, uint64_t cycle, uint32_t kind, uint32_t owner, uint64_t arg);
/* Removes the earliest event into *ev; false when empty. */
bool evq_pop(struct evq *q, struct event *ev);
static inline bool evq_empty(const struct evq *q) { return q->len == 0; }

#endif

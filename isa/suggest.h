/*
 * suggest: the "did you mean" of every error about an unknown name.
 *
 * JSON keys, ops, buffers, machine fields, parameters, limits and the
 * names inside expressions all guess the same way, so a typo is answered
 * alike wherever it is made.
 */
#ifndef SMSIM_SUGGEST_H
#define SMSIM_SUGGEST_H

/* Closest name in a NULL-ended list within a small edit distance, or NULL. */
const char *suggest_name(const char *name, const char *const *names);

#endif

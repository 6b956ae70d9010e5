/*
 * load_util.h - helpers shared by the YAML and CSV loaders: error messages
 * with file and line, and strict parsers for integers, numbers, booleans,
 * durations and names.  Every parser takes the whole string: trailing junk
 * is an error.  They return MU_OK, MU_EPARSE or MU_ERANGE and never write
 * to *out on failure.
 */
#ifndef MUSTER_LOAD_UTIL_H
#define MUSTER_LOAD_UTIL_H

#include <stdarg.h>

#include "muster/load.h"

/* Formats "FILE:LINE:COL: msg" (":COL" left out when col <= 0, ":LINE" when
 * line <= 0) into diag, if diag is not NULL.  Returns err for chaining. */
int mu__diag(mu_diag_t *diag, int err, const char *file, long line, long col,
	     const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* A decimal integer in [min, max]. */
int mu__parse_int(const char *s, int64_t min, int64_t max, int64_t *out);
/* A finite decimal number (strtod) in [min, max]. */
int mu__parse_num(const char *s, double min, double max, double *out);
/* true/false (also yes/no, 1/0). */
int mu__parse_bool(const char *s, bool *out);
/* A non-negative duration ("90", "1.5", "250ms", "5m", "1h30m", "2d") in
 * milliseconds, at most 100 years. */
int mu__parse_duration(const char *s, mu_time_t *out);
/* A name: 1..253 chars of [A-Za-z0-9._-], starting alphanumeric. */
bool mu__valid_name(const char *s);
/* Quotes s for messages, truncated to a sane length: writes into buf. */
const char *mu__quote(const char *s, char *buf, size_t len);

#endif

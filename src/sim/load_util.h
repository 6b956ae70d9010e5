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

/* The priority of a job of type t that gives neither a priority nor a
 * priority class: train 0, batch 0, inference 100, interactive 1000. */
int32_t mu__type_priority(mu_job_type_t t);

/* --- Device strings of scenario expectations (docs/scenarios.md) --------
 * "NODE:gpus=0-1;numa=0;nic=0;cpus=0-3": a bound pod's node, GPU devices,
 * NUMA node, NIC index and pinned CPUs.  The canonical form lists the
 * fields in that order, leaves out the empty ones (no GPUs, numa or nic
 * -1, no CPUs) and the ':' when none is left, and writes sets as
 * cpulists. */
#define MU__DEVSTR_MAX 4096 /* room for any canonical device string */

/* Writes the canonical string into buf (always NUL-terminated). */
void mu__devstr_format(const char *node, uint64_t gpus, int numa, int nic,
		       const mu_cpuset_t *cpus, char *buf, size_t len);
/* Reads s (fields in any order, each at most once; GPU and CPU sets as
 * cpulists) and writes its canonical form into buf; *node_len gets the
 * length of the node part.  MU_EPARSE or MU_ERANGE with *why naming the
 * problem. */
int mu__devstr_norm(const char *s, char *buf, size_t len, size_t *node_len,
		    const char **why);

#endif

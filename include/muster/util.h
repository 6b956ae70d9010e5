/*
 * util.h - small helpers that several layers share: strict parsers for
 * integers, numbers, booleans, durations and names (every parser takes the
 * whole string, trailing junk is an error; they return MU_OK, MU_EPARSE or
 * MU_ERANGE and never write to *out on failure), and text formats for
 * people and for JSON (UTF-8 aware HTML escaping, durations, counts,
 * percentages, JSON strings).
 *
 * The names keep the internal mu__ prefix: they are muster's own building
 * blocks, not part of the engine's API.  Nothing here allocates, keeps state
 * or depends on any other room (src/util is the bottom floor).  See
 * docs/architecture.md.
 */
#ifndef MUSTER_UTIL_H
#define MUSTER_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "muster/error.h"

/* --- strict parsers (src/util/parse.c) ---------------------------------- */

/* A decimal integer in [min, max]. */
int mu__parse_int(const char *s, int64_t min, int64_t max, int64_t *out);
/* A finite decimal number (strtod) in [min, max]. */
int mu__parse_num(const char *s, double min, double max, double *out);
/* true/false (also yes/no, 1/0). */
int mu__parse_bool(const char *s, bool *out);
/* A non-negative duration ("90", "1.5", "250ms", "5m", "1h30m", "2d") in
 * milliseconds, at most 100 years. */
int mu__parse_duration(const char *s, int64_t *out);
/* A name: 1..253 chars of [A-Za-z0-9._-], starting alphanumeric. */
bool mu__valid_name(const char *s);
/* Quotes s for messages, truncated to a sane length: writes into buf. */
const char *mu__quote(const char *s, char *buf, size_t len);

/* --- random numbers (src/util/rng.c) ----------------------------------- */

/* splitmix64: the next 64 bits of the stream whose state *s the caller
 * owns (and seeds).  O(1). */
uint64_t mu__splitmix64(uint64_t *s);
/* Uniform in [0, n), n >= 1, from the next 53 bits of that stream (no
 * modulo bias beyond 2^-53).  O(1). */
uint64_t mu__rand_below(uint64_t *s, uint64_t n);

/* --- text formats (src/util/fmt.c) ------------------------------------- */


/* Length (1..4) of the valid UTF-8 sequence at s, or 0 when s starts with
 * NUL or with a byte that begins no valid sequence. */
size_t mu__utf8_seq(const char *s);
/* The same within the first `avail` bytes of s (a counted buffer, in which
 * a NUL byte is a character of its own); O(1). */
size_t mu__utf8_seqn(const char *s, size_t avail);
/* Characters (valid sequences or stray bytes) in s, counting at most
 * `stop`; O(min(len, stop)). */
size_t mu__utf8_chars(const char *s, size_t stop);

/* Writes s HTML-escaped (& < > " ' and control characters; invalid UTF-8
 * becomes U+FFFD).  At most max_chars characters are written, the last one
 * an ellipsis when s was longer; max_chars 0 means no limit.  NULL writes
 * nothing. */
void mu__html_text(FILE *f, const char *s, size_t max_chars);

/* "12.5µs", "850ms", "45.2s", "12m 5s", "3h 12m", "2d 4h"; "-" when not
 * finite. */
void mu__fmt_duration(char *buf, size_t n, double seconds);
/* "12,345" */
void mu__fmt_count(char *buf, size_t n, int64_t v);
/* A ratio as a percentage with `decimals` decimals: "87.3%"; "-" when not
 * finite. */
void mu__fmt_pct(char *buf, size_t n, double ratio, int decimals);
/* s as a JSON string: quotes, backslashes and control characters escaped,
 * invalid UTF-8 as U+FFFD; NULL as null. */
void mu__json_str(FILE *f, const char *s);
/* The same three written to f (a percentage with one decimal). */
void mu__put_dur(FILE *f, double seconds);
void mu__put_count(FILE *f, int64_t v);
void mu__put_pct(FILE *f, double ratio);

/* --- time stamps and base64 (src/util/time.c, base64.c) ------------- */

/* RFC 3339 ("2006-01-02T15:04:05Z", a fraction and an offset allowed) into
 * milliseconds since the epoch.  MU_OK or MU_EPARSE. */
int mu__rfc3339_parse(const char *s, int64_t *ms);
/* us (microseconds since the epoch) as RFC 3339 in UTC, with microseconds
 * when micro (metav1.MicroTime), else to the second (metav1.Time). */
void mu__rfc3339_format(int64_t us, bool micro, char *buf, size_t len);
/* Standard base64 of n bytes: a malloc'd string, NULL without memory. */
char *mu__b64enc(const void *data, size_t n);
/* Decodes s (line breaks skipped) into out, at most cap bytes with the
 * NUL; MU_EPARSE on a character outside the alphabet or no room. */
int mu__b64dec(const char *s, char *out, size_t cap, size_t *outlen);

/* --- the heap (src/util/heap.c) ------------------------------------- */

/* True when the process runs on jemalloc (the release builds link it). */
bool mu__heap_is_jemalloc(void);
/* Gives the heap's free pages back to the system now: jemalloc's purge of
 * every arena, else glibc's malloc_trim(0). */
void mu__heap_trim(void);
/* Bytes the program holds in allocations, and bytes the heap keeps
 * resident for them (jemalloc's statistics, the sanitizers', else glibc's
 * mallinfo2).  Flushes jemalloc's cache of the calling thread. */
void mu__heap_stats(size_t *in_use, size_t *held);

#endif

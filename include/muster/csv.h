/*
 * csv.h - a small, strict CSV reader over a buffer, and a name -> index hash
 * map that the CSV loader and mu_specs_validate() share.
 *
 * The reader hands out one row at a time; the first row is the header and
 * fixes the number of fields of every later row.  Fields may be quoted with
 * '"' ("" is a quote inside), unquoted fields are trimmed of blanks, CRLF line
 * ends are accepted, blank lines and lines starting with '#' are skipped.
 * Errors (NUL bytes, an unterminated quote, a quote inside an unquoted field,
 * too many or too long fields, a row with the wrong number of fields) come
 * back as MU_EPARSE with "FILE:LINE: ..." in the diag.
 */
#ifndef MUSTER_SIM_CSV_H
#define MUSTER_SIM_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "muster/load.h"

#define MU__CSV_MAX_FIELDS 64   /* fields per row */
#define MU__CSV_MAX_FIELD 4096  /* bytes per field, after unquoting */

typedef struct mu__csv {
	const char *file;      /* name for messages; not owned */
	const char *p, *end;   /* unread input; not owned */
	long line;             /* line of *p, from 1 */
	long row_line;         /* line where the current row starts */
	size_t ncols;          /* fields of the header; 0 before it is read */
	size_t nf;             /* fields of the current row */
	char *f[MU__CSV_MAX_FIELDS]; /* the current row, NUL-terminated; valid
	                              * until the next mu__csv_next() */
	char *scratch;         /* owned: holds the current row's fields */
	size_t scratch_cap;
} mu__csv_t;

/* Starts reading buf[0..len) (a UTF-8 byte-order mark is skipped).  Fails
 * with MU_EPARSE on a NUL byte anywhere, MU_ENOMEM.  On success the caller
 * calls mu__csv_release(); on failure there is nothing to release. */
int mu__csv_open(mu__csv_t *c, const char *file, const char *buf, size_t len,
		 mu_diag_t *diag);
void mu__csv_release(mu__csv_t *c);

/* Reads the next row into c->f / c->nf.  Returns 1 for a row, 0 at the end
 * of input, or MU_EPARSE.  The first row read is the header.  O(row bytes). */
int mu__csv_next(mu__csv_t *c, mu_diag_t *diag);

/* True when the first line of buf that is not blank or a '#' comment looks
 * like a CSV header: printable ASCII names separated by at least one comma.
 * Reads at most that line. */
bool mu__csv_sniff(const char *buf, size_t len);

/* "YYYY-MM-DD HH:MM:SS" as UTC seconds since 1970-01-01 (proleptic
 * Gregorian calendar, years 1..9999).  MU_EPARSE on anything else. */
int mu__parse_utc(const char *s, int64_t *out);

/* The CSV headers muster reads, as a phrase for messages (load_csv.c). */
extern const char mu__csv_headers[];

/* --- name -> index map ---------------------------------------------------
 * Open addressing with linear probing.  Keys are borrowed: they must outlive
 * the map.  Operations are O(1) expected; the table doubles at half full. */
typedef struct mu__namemap {
	const char **keys;
	size_t *vals;
	size_t cap, n;
} mu__namemap_t;

void mu__namemap_init(mu__namemap_t *m);
void mu__namemap_release(mu__namemap_t *m);
/* MU_OK with *val set when name is present, else MU_ENOENT. */
int mu__namemap_get(const mu__namemap_t *m, const char *name, size_t *val);
/* The key stored for name (the caller's string given to put), or NULL. */
const char *mu__namemap_key(const mu__namemap_t *m, const char *name);
/* Adds name -> val.  MU_OK when added; MU_EEXIST (and *old, if not NULL, set
 * to the value already there) when present; MU_ENOMEM. */
int mu__namemap_put(mu__namemap_t *m, const char *name, size_t val,
		    size_t *old);

#endif

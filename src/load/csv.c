/*
 * csv.c - the strict CSV reader, header sniffing, UTC timestamps, and the
 * name -> index hash map (see csv.h).
 *
 * The reader walks the caller's buffer once, without copying it whole: the
 * fields of the current row go, unquoted, into one scratch buffer it owns.
 * Work per row is linear in the row's bytes; memory is bounded by
 * MU__CSV_MAX_FIELDS fields of MU__CSV_MAX_FIELD bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "muster/csv.h"
#include "load/load_util.h"

int mu__csv_open(mu__csv_t *c, const char *file, const char *buf, size_t len,
		 mu_diag_t *diag)
{
	memset(c, 0, sizeof *c);
	const char *nul = len ? memchr(buf, '\0', len) : NULL;
	if (nul) {
		long line = 1;
		for (const char *q = buf; q < nul; q++)
			line += *q == '\n';
		return mu__diag(diag, MU_EPARSE, file, line, 0,
				"NUL byte: expected a text file");
	}
	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
		buf += 3;
		len -= 3;
	}
	size_t body = len < MU__CSV_MAX_FIELDS * (size_t)MU__CSV_MAX_FIELD ?
		len : MU__CSV_MAX_FIELDS * (size_t)MU__CSV_MAX_FIELD;
	c->scratch_cap = body + MU__CSV_MAX_FIELDS + 1;
	c->scratch = malloc(c->scratch_cap);
	if (!c->scratch)
		return mu__diag(diag, MU_ENOMEM, file, 0, 0, "out of memory");
	c->file = file;
	c->p = buf;
	c->end = buf + len;
	c->line = 1;
	return MU_OK;
}

void mu__csv_release(mu__csv_t *c)
{
	free(c->scratch);
	memset(c, 0, sizeof *c);
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* Skips blank lines (only blanks and CRs) and comment lines (first
 * non-blank character '#').  Returns false at the end of input. */
static bool skip_empty_lines(mu__csv_t *c)
{
	while (c->p < c->end) {
		const char *q = c->p;
		while (q < c->end && (is_blank(*q) || *q == '\r'))
			q++;
		if (q < c->end && *q == '#')
			q = memchr(q, '\n', (size_t)(c->end - q));
		else if (q < c->end && *q != '\n')
			return true;
		if (!q || q >= c->end)
			break;
		c->p = q + 1;
		c->line++;
	}
	c->p = c->end;
	return false;
}

/* Reads a quoted field whose '"' is at c->p, appending to *out (at most
 * MU__CSV_MAX_FIELD bytes).  Leaves c->p after the closing quote. */
static int read_quoted(mu__csv_t *c, char **out, const char *start,
		       mu_diag_t *diag)
{
	long open_line = c->line;
	char *o = *out;
	c->p++;
	for (;;) {
		if (c->p >= c->end)
			return mu__diag(diag, MU_EPARSE, c->file, open_line, 0,
					"unterminated quoted field (the quote "
					"opened here is never closed)");
		char ch = *c->p;
		if (ch == '"') {
			if (c->p + 1 < c->end && c->p[1] == '"') {
				c->p++;
			} else {
				c->p++;
				break;
			}
		} else if (ch == '\n') {
			c->line++;
		}
		if ((size_t)(o - start) >= MU__CSV_MAX_FIELD)
			return mu__diag(diag, MU_ELIMIT, c->file, open_line, 0,
					"field %zu is longer than %d bytes",
					c->nf + 1, MU__CSV_MAX_FIELD);
		*o++ = ch;
		c->p++;
	}
	*out = o;
	return MU_OK;
}

/* Reads an unquoted field at c->p up to a comma or the end of the line,
 * appending it to *out without trailing blanks. */
static int read_plain(mu__csv_t *c, char **out, const char *start,
		      mu_diag_t *diag)
{
	char *o = *out;
	while (c->p < c->end && *c->p != ',' && *c->p != '\n') {
		char ch = *c->p;
		if (ch == '"')
			return mu__diag(diag, MU_EPARSE, c->file, c->line, 0,
					"field %zu: a quote inside an unquoted "
					"field (quote the whole field and double "
					"the quote)", c->nf + 1);
		if (ch == '\r' && c->p + 1 < c->end && c->p[1] != '\n')
			return mu__diag(diag, MU_EPARSE, c->file, c->line, 0,
					"field %zu: carriage return inside a "
					"field", c->nf + 1);
		if (ch != '\r') {
			if ((size_t)(o - start) >= MU__CSV_MAX_FIELD)
				return mu__diag(diag, MU_ELIMIT, c->file, c->line,
						0, "field %zu is longer than %d "
						"bytes", c->nf + 1,
						MU__CSV_MAX_FIELD);
			*o++ = ch;
		}
		c->p++;
	}
	while (o > start && is_blank(o[-1]))
		o--;
	*out = o;
	return MU_OK;
}

/* After field c->nf (counted from 1): consumes a comma (returns 1: more fields follow) or the
 * line end (returns 0), else fails. */
static int field_end(mu__csv_t *c, mu_diag_t *diag)
{
	while (c->p < c->end && (is_blank(*c->p) || *c->p == '\r'))
		c->p++;
	if (c->p >= c->end)
		return 0;
	if (*c->p == ',') {
		c->p++;
		return 1;
	}
	if (*c->p == '\n') {
		c->p++;
		c->line++;
		return 0;
	}
	return mu__diag(diag, MU_EPARSE, c->file, c->line, 0,
			"field %zu: unexpected text after the closing quote "
			"(expected a comma or the end of the line)", c->nf);
}

int mu__csv_next(mu__csv_t *c, mu_diag_t *diag)
{
	if (!skip_empty_lines(c))
		return 0;
	c->row_line = c->line;
	c->nf = 0;
	char *o = c->scratch;
	for (;;) {
		if (c->nf == MU__CSV_MAX_FIELDS)
			return mu__diag(diag, MU_ELIMIT, c->file, c->row_line, 0,
					"more than %d fields in a row",
					MU__CSV_MAX_FIELDS);
		char *start = o;
		while (c->p < c->end && is_blank(*c->p))
			c->p++;
		int rc = c->p < c->end && *c->p == '"' ?
			read_quoted(c, &o, start, diag) :
			read_plain(c, &o, start, diag);
		if (rc < 0)
			return rc;
		*o++ = '\0';
		c->f[c->nf++] = start;
		rc = field_end(c, diag);
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
	}
	if (c->ncols == 0)
		c->ncols = c->nf;
	else if (c->nf != c->ncols)
		return mu__diag(diag, MU_EPARSE, c->file, c->row_line, 0,
				"expected %zu fields as in the header, got %zu",
				c->ncols, c->nf);
	return 1;
}

bool mu__csv_sniff(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		p += 3;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *q = p;
		while (q < eol && (is_blank(*q) || *q == '\r'))
			q++;
		if (q == eol || *q == '#') {
			p = eol + 1;
			continue;
		}
		bool comma = false;
		for (q = p; q < eol; q++) {
			unsigned char ch = (unsigned char)*q;
			if (ch == ',')
				comma = true;
			else if (ch != '\r' && ch != '\t' && (ch < 32 || ch >= 127))
				return false;
			else if (ch == ':' || ch == '{' || ch == '[')
				return false; /* looks like YAML or JSON */
		}
		return comma;
	}
	return false;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Reads exactly n digits at s into *v. */
static bool digits(const char *s, int n, int *v)
{
	int x = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		x = x * 10 + (s[i] - '0');
	}
	*v = x;
	return true;
}

int mu__parse_utc(const char *s, int64_t *out)
{
	static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int y, mo, d, h, mi, se;
	if (strlen(s) != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' ||
	    s[13] != ':' || s[16] != ':')
		return MU_EPARSE;
	if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) ||
	    !digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) ||
	    !digits(s + 17, 2, &se))
		return MU_EPARSE;
	if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 ||
	    mi > 59 || se > 60)
		return MU_EPARSE;
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo == 2 && d == 29 && !leap)
		return MU_EPARSE;
	*out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
	return MU_OK;
}

/* --- name -> index map --------------------------------------------------- */

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

void mu__namemap_init(mu__namemap_t *m)
{
	memset(m, 0, sizeof *m);
}

void mu__namemap_release(mu__namemap_t *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

/* The slot holding name, or the empty slot where it would go.  cap > 0. */
static size_t namemap_slot(const mu__namemap_t *m, const char *name)
{
	size_t i = (size_t)name_hash(name) & (m->cap - 1);
	while (m->keys[i] && strcmp(m->keys[i], name) != 0)
		i = (i + 1) & (m->cap - 1);
	return i;
}

int mu__namemap_get(const mu__namemap_t *m, const char *name, size_t *val)
{
	if (m->cap == 0)
		return MU_ENOENT;
	size_t i = namemap_slot(m, name);
	if (!m->keys[i])
		return MU_ENOENT;
	*val = m->vals[i];
	return MU_OK;
}

const char *mu__namemap_key(const mu__namemap_t *m, const char *name)
{
	return m->cap ? m->keys[namemap_slot(m, name)] : NULL;
}

/* Doubles the table (or makes the first one) and rehashes: O(n). */
static int namemap_grow(mu__namemap_t *m)
{
	mu__namemap_t nm = {0};
	nm.cap = m->cap ? m->cap * 2 : 64;
	nm.keys = calloc(nm.cap, sizeof *nm.keys);
	nm.vals = calloc(nm.cap, sizeof *nm.vals);
	if (!nm.keys || !nm.vals) {
		mu__namemap_release(&nm);
		return MU_ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = namemap_slot(&nm, m->keys[i]);
		nm.keys[j] = m->keys[i];
		nm.vals[j] = m->vals[i];
	}
	nm.n = m->n;
	mu__namemap_release(m);
	*m = nm;
	return MU_OK;
}

int mu__namemap_put(mu__namemap_t *m, const char *name, size_t val,
		    size_t *old)
{
	if ((m->n + 1) * 2 > m->cap && namemap_grow(m) != MU_OK)
		return MU_ENOMEM;
	size_t i = namemap_slot(m, name);
	if (m->keys[i]) {
		if (old)
			*old = m->vals[i];
		return MU_EEXIST;
	}
	m->keys[i] = name;
	m->vals[i] = val;
	m->n++;
	return MU_OK;
}

/*
 * jparse.c - JSON text into a jansson tree, faster than json_loadb, for
 * the scheduler daemon's watch events and list pages.
 *
 * json_loadb reads its input a byte at a time through a stream with a
 * lookahead, saves every token's bytes into a buffer as it goes and then
 * converts them again (strings are checked for UTF-8 and copied twice).
 * That was about 130,000 instructions for one watch event of a bound pod
 * (about 1 KB) and over a third of the daemon's instructions per bind
 * (docs/evaluation.md, "The scheduler's side of a bind, round 9").  This
 * parser scans the text once, in place, and builds the same tree with
 * jansson's own constructors (the *_nocheck ones, having checked the
 * UTF-8 itself): objects keep their members in order, and a repeated
 * name keeps its first place with the last value, as json_loadb does.
 *
 * It accepts only what json_loadb accepts with flags 0 (an object or an
 * array at the top, nothing but white space after it, strict numbers,
 * valid UTF-8, no \u0000, paired surrogates) and gives the same tree for
 * it (test_jparse compares the two, and so does fuzz_jparse).  Anything
 * it does not take (an error, nesting deeper than JP_DEPTH, an integer
 * out of range, no memory) goes to json_loadb, whose answer stands.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "muster/jpath.h"
#include "muster/util.h"

#define JP_DEPTH 512 /* below jansson's JSON_PARSER_MAX_DEPTH (2048) */

typedef struct jp {
	const char *s, *e; /* the next byte, the end */
	char *buf;         /* an unescaped string or a number's text */
	size_t cap;
	bool strict;       /* a name repeated in an object is an error */
} jp_t;

static void ws(jp_t *p)
{
	while (p->s < p->e && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

/* Room for n bytes in p->buf; false when out of memory. */
static bool room(jp_t *p, size_t n)
{
	if (n <= p->cap)
		return true;
	size_t cap = p->cap ? p->cap : 256;
	while (cap < n)
		cap *= 2;
	char *b = realloc(p->buf, cap);
	if (!b)
		return false;
	p->buf = b;
	p->cap = cap;
	return true;
}

/* Four hex digits at s (within e) as a number, or -1. */
static long hex4(const char *s, const char *e)
{
	if (e - s < 4)
		return -1;
	long v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Appends code point cp as UTF-8 at p->buf[*n] (room made by the caller). */
static void put_utf8(char *b, size_t *n, unsigned long cp)
{
	if (cp < 0x80) {
		b[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		b[(*n)++] = (char)(0xC0 | (cp >> 6));
		b[(*n)++] = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		b[(*n)++] = (char)(0xE0 | (cp >> 12));
		b[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[(*n)++] = (char)(0x80 | (cp & 0x3F));
	} else {
		b[(*n)++] = (char)(0xF0 | (cp >> 18));
		b[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
		b[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[(*n)++] = (char)(0x80 | (cp & 0x3F));
	}
}

/* The string that opens at p->s (a '"'): its bytes in *out and *len,
 * pointing into the text when it has no escape, else into p->buf.  False
 * on an error.  O(its length). */
static bool str(jp_t *p, const char **out, size_t *len)
{
	const char *s = ++p->s, *start = s;
	while (s < p->e) { /* the plain run */
		unsigned char c = (unsigned char)*s;
		if (c == '"') {
			*out = start;
			*len = (size_t)(s - start);
			p->s = s + 1;
			return true;
		}
		if (c == '\\')
			break;
		if (c < 0x20)
			return false;
		if (c < 0x80) {
			s++;
			continue;
		}
		size_t l = mu__utf8_seqn(s, (size_t)(p->e - s));
		if (!l)
			return false;
		s += l;
	}
	if (s >= p->e)
		return false;
	/* escapes: unescaped into p->buf, with room for the string's own
	 * bytes up to its closing quote (unescaping never lengthens a
	 * string).  Room for every byte left, as before, asked glibc for a
	 * block the size of the rest of a stored pod at its first escaped
	 * quote (a managedFields key): a large-bin request, which made it
	 * consolidate its fast bins at every parse. */
	const char *q = s;
	while (q < p->e && *q != '"')
		q += *q == '\\' ? 2 : 1;
	if (q > p->e)
		q = p->e;
	if (!room(p, (size_t)(q - start) + 1))
		return false;
	size_t n = (size_t)(s - start);
	memcpy(p->buf, start, n);
	while (s < p->e) {
		unsigned char c = (unsigned char)*s;
		if (c == '"') {
			*out = p->buf;
			*len = n;
			p->s = s + 1;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c >= 0x80) {
			size_t l = mu__utf8_seqn(s, (size_t)(p->e - s));
			if (!l)
				return false;
			memcpy(p->buf + n, s, l);
			n += l;
			s += l;
			continue;
		}
		if (c != '\\') {
			p->buf[n++] = (char)c;
			s++;
			continue;
		}
		if (++s >= p->e)
			return false;
		switch (*s) {
		case '"': case '\\': case '/': p->buf[n++] = *s; break;
		case 'b': p->buf[n++] = '\b'; break;
		case 'f': p->buf[n++] = '\f'; break;
		case 'n': p->buf[n++] = '\n'; break;
		case 'r': p->buf[n++] = '\r'; break;
		case 't': p->buf[n++] = '\t'; break;
		case 'u': {
			long cp = hex4(s + 1, p->e);
			if (cp <= 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
				return false; /* \u0000, a bad digit, a lone low surrogate */
			s += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF) { /* a pair, "\uD8xx\uDCxx" */
				long lo = s + 2 < p->e && s[1] == '\\' && s[2] == 'u' ? hex4(s + 3, p->e) : -1;
				if (lo < 0xDC00 || lo > 0xDFFF)
					return false;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				s += 6;
			}
			put_utf8(p->buf, &n, (unsigned long)cp); /* at most 4 bytes for 6 or 12 read */
			break;
		}
		default:
			return false;
		}
		s++;
	}
	return false;
}

static bool digit(const char *s, const char *e)
{
	return s < e && *s >= '0' && *s <= '9';
}

/* The number at p->s: an integer without a fraction or an exponent, else a
 * real; NULL on an error or an integer out of range (json_loadb refuses
 * those; it is asked again anyway).  O(its length). */
static json_t *number(jp_t *p)
{
	const char *s = p->s, *e = p->e;
	bool real = false;
	if (*s == '-')
		s++;
	if (!digit(s, e))
		return NULL;
	if (*s == '0') {
		s++;
		if (digit(s, e))
			return NULL;
	} else {
		while (digit(s, e))
			s++;
	}
	if (s < e && *s == '.') {
		real = true;
		if (!digit(++s, e))
			return NULL;
		while (digit(s, e))
			s++;
	}
	if (s < e && (*s == 'e' || *s == 'E')) {
		real = true;
		s++;
		if (s < e && (*s == '+' || *s == '-'))
			s++;
		if (!digit(s, e))
			return NULL;
		while (digit(s, e))
			s++;
	}
	size_t n = (size_t)(s - p->s);
	if (!room(p, n + 1))
		return NULL;
	memcpy(p->buf, p->s, n);
	p->buf[n] = '\0';
	p->s = s;
	char *end;
	errno = 0;
	if (!real) {
		long long v = strtoll(p->buf, &end, 10);
		return errno == ERANGE || end != p->buf + n ? NULL : json_integer((json_int_t)v);
	}
	double v = strtod(p->buf, &end);
	return end != p->buf + n || isinf(v) ? NULL : json_real(v);
}

static json_t *value(jp_t *p, int depth);

/* The object or array that opens at p->s.  NULL on an error. */
static json_t *container(jp_t *p, int depth)
{
	bool obj = *p->s == '{';
	char close = obj ? '}' : ']';
	json_t *c = obj ? json_object() : json_array();
	if (!c || depth > JP_DEPTH)
		goto fail;
	p->s++;
	ws(p);
	if (p->s < p->e && *p->s == close) {
		p->s++;
		return c;
	}
	for (;;) {
		const char *k = NULL;
		size_t kl = 0;
		char kb[128], *key = kb;
		if (obj) {
			if (p->s >= p->e || *p->s != '"' || !str(p, &k, &kl))
				goto fail;
			/* the name may sit in p->buf, which the value reuses */
			if (kl >= sizeof kb && !(key = malloc(kl + 1)))
				goto fail;
			memcpy(key, k, kl);
			key[kl] = '\0';
			ws(p);
			if (p->s >= p->e || *p->s != ':') {
				if (key != kb)
					free(key);
				goto fail;
			}
			p->s++;
			ws(p);
		}
		json_t *v = value(p, depth + 1);
		if (v && obj && p->strict && json_object_getn(c, key, kl)) {
			json_decref(v); /* a repeated name: json_loadb's error */
			v = NULL;
		}
		int rc = !v ? -1 : obj ? json_object_setn_new_nocheck(c, key, kl, v) : json_array_append_new(c, v);
		if (obj && key != kb)
			free(key);
		if (rc)
			goto fail;
		ws(p);
		if (p->s >= p->e)
			goto fail;
		if (*p->s == close) {
			p->s++;
			return c;
		}
		if (*p->s != ',')
			goto fail;
		p->s++;
		ws(p);
	}
fail:
	json_decref(c);
	return NULL;
}

/* The value at p->s (white space skipped before it).  NULL on an error. */
static json_t *value(jp_t *p, int depth)
{
	if (p->s >= p->e)
		return NULL;
	size_t left = (size_t)(p->e - p->s);
	switch (*p->s) {
	case '{':
	case '[':
		return container(p, depth);
	case '"': {
		const char *s;
		size_t n;
		return str(p, &s, &n) ? json_stringn_nocheck(s, n) : NULL;
	}
	case 't':
		if (left >= 4 && !memcmp(p->s, "true", 4)) {
			p->s += 4;
			return json_true();
		}
		return NULL;
	case 'f':
		if (left >= 5 && !memcmp(p->s, "false", 5)) {
			p->s += 5;
			return json_false();
		}
		return NULL;
	case 'n':
		if (left >= 4 && !memcmp(p->s, "null", 4)) {
			p->s += 4;
			return json_null();
		}
		return NULL;
	default:
		return number(p);
	}
}

/* The pass of mu__json_fast and mu__json_fast_strict. */
static json_t *fast(const char *s, size_t n, bool strict)
{
	jp_t p = {s, s + n, NULL, 0, strict};
	ws(&p);
	json_t *v = p.s < p.e && (*p.s == '{' || *p.s == '[') ? container(&p, 1) : NULL;
	ws(&p);
	if (v && p.s != p.e) {
		json_decref(v);
		v = NULL;
	}
	free(p.buf);
	return v;
}

json_t *mu__json_fast(const char *s, size_t n)
{
	return fast(s, n, false);
}

json_t *mu__json_fast_strict(const char *s, size_t n)
{
	return fast(s, n, true);
}

json_t *mu__json_loadb(const char *s, size_t n)
{
	json_t *v = mu__json_fast(s, n);
	return v ? v : json_loadb(s, n, 0, NULL);
}

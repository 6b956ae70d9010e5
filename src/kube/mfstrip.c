/*
 * mfstrip.c - takes metadata.managedFields out of a watch event's or a
 * list's text before it is parsed.
 *
 * The daemon reads nothing of managedFields (kube-controller-manager's
 * shared informers drop them too, with a transform: "trim ManagedFields for
 * memory efficiency" in cmd/kube-controller-manager/app/
 * controllermanager.go), yet they are a large share of a
 * bound, running pod's JSON (the kubelet's status entry alone names every
 * condition and container status).  Parsing them into a jansson tree and
 * freeing it again was a large part of the daemon's CPU per bind, so the
 * reflector cuts the member out of the text first, from a watch event's
 * object and from each item of a list page: one pass over the bytes, no
 * allocation: what is kept is moved down once, behind a write cursor
 * (it was moved for every cut, and a list page of 500 pods, each with its
 * managedFields, moved the rest of the page 500 times: a fifth of the
 * daemon's instructions in a backlog's drain, docs/evaluation.md "The
 * scheduler's side of a bind, round 9").  For pods the reflector also
 * cuts the status lists the daemon never reads (conditions and container
 * statuses, about half of a running pod's text without managedFields).
 * The text is JSON from the API server; anything
 * this scanner does not understand (nesting deeper than 64, an unclosed
 * string, no such member) leaves it as it was, for the parser to judge.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kube/kube_int.h"

/* The index just after the string that opens at s[i] (a '"'), or n when
 * it does not close: the next '"' (memchr) that an even number of
 * backslashes precedes. */
static size_t str_end(const char *s, size_t i, size_t n)
{
	for (i++; i < n;) {
		const char *q = memchr(s + i, '"', n - i);
		if (!q)
			return n;
		size_t j = (size_t)(q - s), k = j;
		while (k > i && s[k - 1] == '\\')
			k--;
		if ((j - k) % 2 == 0)
			return j + 1;
		i = j + 1;
	}
	return n;
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The index just after the JSON value that starts at or after s[i]
 * (whitespace skipped): a string, an object or array with everything in
 * it, or a scalar up to the next ',', '}', ']' or space; n when it does
 * not end. */
static size_t value_end(const char *s, size_t i, size_t n)
{
	while (i < n && is_ws(s[i]))
		i++;
	if (i >= n)
		return n;
	if (s[i] == '"')
		return str_end(s, i, n);
	if (s[i] != '{' && s[i] != '[') {
		while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && !is_ws(s[i]))
			i++;
		return i;
	}
	size_t depth = 0;
	while (i < n) {
		if (s[i] == '"') {
			i = str_end(s, i, n);
			continue;
		}
		if (s[i] == '{' || s[i] == '[')
			depth++;
		else if ((s[i] == '}' || s[i] == ']') && --depth == 0)
			return i + 1;
		i++;
	}
	return n;
}

/* The bounds [*from, *to) of the member whose name starts at s[i] (a '"'
 * ending before e) of the object whose last ',' or '{' before it is at
 * `last` (comma: whether that was a ','): ", name: value" when a comma
 * precedes it, else "name: value," with the comma after it.  False when
 * the member does not end. */
static bool member(const char *s, size_t n, size_t last, bool comma, size_t i, size_t e, size_t *from,
		   size_t *to)
{
	size_t j = e;
	while (j < n && is_ws(s[j]))
		j++;
	if (j >= n || s[j] != ':')
		return false;
	size_t v = value_end(s, j + 1, n);
	if (v >= n)
		return false;
	*from = comma ? last : i;
	*to = v;
	if (!comma) {
		while (*to < n && is_ws(s[*to]))
			(*to)++;
		if (*to < n && s[*to] == ',')
			(*to)++;
	}
	return true;
}

/* Whether the string s[i..e) (quotes included) is one of the members of
 * a pod's status that the daemon does not read. */
static bool pod_status_cut(const char *s, size_t i, size_t e)
{
	static const char *const names[] = {"\"conditions\"", "\"containerStatuses\"",
		"\"initContainerStatuses\"", "\"ephemeralContainerStatuses\""};
	for (size_t k = 0; k < sizeof names / sizeof *names; k++)
		if (e - i == strlen(names[k]) && !memcmp(s + i, names[k], e - i))
			return true;
	return false;
}

size_t mu__kstrip(char *s, size_t n, unsigned what)
{
	uint64_t objs = 0;   /* bit d: the container at depth d+1 is an object */
	size_t depth = 0;
	bool key = false;    /* the next string is a member name */
	int next = 0;        /* the value about to open: 1 the event's "object", 2 an
			      * object's "metadata", 3 the list's "items", 4 an
			      * object's "status" */
	bool items = false;  /* inside the list's items (an array at depth 2) */
	size_t obj = 0;      /* the depth of the object being read (2 or 3), 0 none */
	size_t meta = 0;     /* the depth of its metadata, 0 = not in it */
	size_t stat = 0;     /* the depth of its status, 0 = not in it */
	size_t last = 0;     /* the last ',' or '{' seen ... */
	bool comma = false;  /* ... and whether it was a ',' */
	size_t w = 0, kept = 0; /* s[kept..i) is kept, to be moved down to s[w] */
	size_t i = 0;
	for (; i < n; i++) {
		char c = s[i];
		if (c == '{' || c == '[') {
			if (depth < 64 && c == '{')
				objs |= (uint64_t)1 << depth;
			else if (depth < 64)
				objs &= ~((uint64_t)1 << depth);
			depth++;
			if (c == '{' && ((next == 1 && depth == 2) || (items && depth == 3)))
				obj = depth;
			else if (c == '[' && next == 3 && depth == 2)
				items = true;
			else if (c == '{' && next == 2 && obj && depth == obj + 1)
				meta = depth;
			else if (c == '{' && next == 4 && obj && depth == obj + 1)
				stat = depth;
			next = 0;
			key = c == '{';
			last = i;
			comma = false;
		} else if (c == '}' || c == ']') {
			if (!depth)
				break;
			if (depth == meta)
				meta = 0;
			if (depth == stat)
				stat = 0;
			if (depth == obj)
				obj = 0;
			if (depth == 2)
				items = false;
			depth--;
			key = false;
		} else if (c == ',') {
			key = depth > 0 && depth <= 64 && (objs >> (depth - 1) & 1);
			last = i;
			comma = true;
		} else if (c == '"') {
			size_t e = str_end(s, i, n);
			if (e >= n)
				break;
			if (key && depth == 1)
				next = e - i == 8 && !memcmp(s + i, "\"object\"", 8) ? 1 :
				       e - i == 7 && !memcmp(s + i, "\"items\"", 7) ? 3 : 0;
			else if (key && obj && depth == obj)
				next = e - i == 10 && !memcmp(s + i, "\"metadata\"", 10) ? 2 :
				       e - i == 8 && !memcmp(s + i, "\"status\"", 8) ? 4 : 0;
			bool drop = key && ((meta && depth == meta && (what & MU__KSTRIP_MF) && e - i == 15 &&
					     !memcmp(s + i, "\"managedFields\"", 15)) ||
					    (stat && depth == stat && (what & MU__KSTRIP_POD_STATUS) &&
					     pod_status_cut(s, i, e)));
			size_t from, to;
			if (drop) {
				if (!member(s, n, last, comma, i, e, &from, &to) || from < kept)
					break;
				memmove(s + w, s + kept, from - kept);
				w += from - kept;
				kept = to;
				i = to - 1; /* go on from what followed (a duplicate name) */
				continue;
			}
			key = false;
			i = e - 1;
		}
	}
	if (!kept) /* nothing cut */
		return n;
	memmove(s + w, s + kept, n - kept);
	w += n - kept;
	s[w] = '\0';
	return w;
}

size_t mu__kstrip_mf(char *s, size_t n)
{
	return mu__kstrip(s, n, MU__KSTRIP_MF);
}

/* --- a watch event's frame, read without parsing (round 17) -------------- */

static size_t skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n && is_ws(s[i]))
		i++;
	return i;
}

/* Whether s[i..e) is a plain string's text (quotes excluded): printable
 * ASCII, no escape, no quote, at most max bytes.  An escaped or non-ASCII
 * name is left to the parser (its bytes are not its value). */
static bool plain(const char *s, size_t i, size_t e, size_t max)
{
	if (e - i > max)
		return false;
	for (; i < e; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f || s[i] == '\\' ||
		    s[i] == '"')
			return false;
	return true;
}

/* The members names[0..k) of the object that opens at s[i] (a '{'): for
 * each, the bounds of its last value (a repeated name's last value is the
 * one a parser keeps), 0 and 0 when absent; *end just after the object,
 * *count its members.
 * A member name with an escape, or an object that does not close, gives
 * false.  O(object's bytes); nested values are skipped, not read. */
static bool members_of(const char *s, size_t i, size_t n, const char *const *names, int k,
		       size_t *vs, size_t *ve, size_t *end, size_t *count)
{
	for (int x = 0; x < k; x++)
		vs[x] = ve[x] = 0;
	*count = 0;
	if (i >= n || s[i] != '{')
		return false;
	i = skip_ws(s, i + 1, n);
	if (i < n && s[i] == '}') {
		*end = i + 1;
		return true;
	}
	for (;;) {
		if (i >= n || s[i] != '"')
			return false;
		size_t e = str_end(s, i, n);
		if (e >= n || memchr(s + i + 1, '\\', e - i - 2))
			return false;
		size_t c = skip_ws(s, e, n);
		if (c >= n || s[c] != ':')
			return false;
		size_t v = skip_ws(s, c + 1, n), v2 = value_end(s, v, n);
		if (v >= n || v2 >= n || v2 == v)
			return false;
		(*count)++;
		for (int x = 0; x < k; x++)
			if (e - i - 2 == strlen(names[x]) && !memcmp(s + i + 1, names[x], e - i - 2)) {
				vs[x] = v;
				ve[x] = v2;
			}
		i = skip_ws(s, v2, n);
		if (i < n && s[i] == '}') {
			*end = i + 1;
			return true;
		}
		if (i >= n || s[i] != ',')
			return false;
		i = skip_ws(s, i + 1, n);
	}
}

bool mu__kevent_scan(const char *s, size_t n, mu__kevent_t *ev)
{
	memset(ev, 0, sizeof *ev);
	static const char *const obj[] = {"metadata"};
	static const char *const meta[] = {"name", "namespace", "resourceVersion"};
	size_t vs[3], ve[3], end, count;
	/* exactly {"type": "WORD", "object": {...}} in that order (as
	 * kube-apiserver and muster up write it), nothing after it: anything
	 * else is left to the parser, which judges the whole text.  The
	 * object's end is found from the text's end, not by reading the
	 * object through (its parse checks that it is one object) */
	size_t i = skip_ws(s, 0, n);
	if (i >= n || s[i] != '{')
		return false;
	i = skip_ws(s, i + 1, n);
	if (n - i < 6 || memcmp(s + i, "\"type\"", 6))
		return false;
	i = skip_ws(s, i + 6, n);
	if (i >= n || s[i] != ':')
		return false;
	size_t ts = skip_ws(s, i + 1, n), te = ts + 1;
	if (ts >= n || s[ts] != '"')
		return false;
	while (te < n && s[te] >= 'A' && s[te] <= 'Z')
		te++;
	if (te >= n || s[te] != '"')
		return false;
	i = skip_ws(s, te + 1, n);
	if (i >= n || s[i] != ',')
		return false;
	i = skip_ws(s, i + 1, n);
	if (n - i < 8 || memcmp(s + i, "\"object\"", 8))
		return false;
	i = skip_ws(s, i + 8, n);
	if (i >= n || s[i] != ':')
		return false;
	size_t os = skip_ws(s, i + 1, n), oe = n;
	while (oe > os && is_ws(s[oe - 1]))
		oe--;
	if (oe <= os || s[oe - 1] != '}')
		return false;
	oe--;
	while (oe > os && is_ws(s[oe - 1]))
		oe--;
	if (os >= n || s[os] != '{' || oe <= os + 1 || s[oe - 1] != '}')
		return false;
	ev->type = s + ts + 1;
	ev->type_len = te - ts - 1;
	ev->obj = s + os;
	ev->obj_len = oe - os;
	if (!members_of(s, os, oe, obj, 1, vs, ve, &end, &count) || end != oe || !vs[0] || s[vs[0]] != '{' ||
	    !members_of(s, vs[0], oe, meta, 3, vs, ve, &end, &count))
		return false;
	const char **out[3] = {&ev->name, &ev->ns, &ev->rv};
	size_t *len[3] = {&ev->name_len, &ev->ns_len, &ev->rv_len};
	for (int x = 0; x < 3; x++) {
		if (!vs[x])
			continue;
		if (s[vs[x]] != '"' || !plain(s, vs[x] + 1, ve[x] - 1, 512))
			return false;
		*out[x] = s + vs[x] + 1;
		*len[x] = ve[x] - vs[x] - 2;
	}
	return ev->name != NULL;
}

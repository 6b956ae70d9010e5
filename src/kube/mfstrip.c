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
 * allocation.  The text is JSON from the API server; anything
 * this scanner does not understand (nesting deeper than 64, an unclosed
 * string, no such member) leaves it as it was, for the parser to judge.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kube/kube_int.h"

/* The index just after the string that opens at s[i] (a '"'), or n when
 * it does not close. */
static size_t str_end(const char *s, size_t i, size_t n)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
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

/* Cuts the member whose name starts at s[i] (a '"' ending before e) of the
 * object whose last ',' or '{' before it is s[last]: ", name: value" when
 * a comma precedes it, else "name: value," with the comma after it.
 * Returns the new length and sets *at to where the scan goes on, or
 * returns n (nothing cut) when the member does not end. */
static size_t cut(char *s, size_t n, size_t last, size_t i, size_t e, size_t *at)
{
	size_t j = e;
	while (j < n && is_ws(s[j]))
		j++;
	if (j >= n || s[j] != ':')
		return n;
	size_t v = value_end(s, j + 1, n);
	if (v >= n)
		return n;
	size_t from = s[last] == ',' ? last : i, to = v;
	if (s[last] != ',') {
		while (to < n && is_ws(s[to]))
			to++;
		if (to < n && s[to] == ',')
			to++;
	}
	memmove(s + from, s + to, n - to);
	n -= to - from;
	s[n] = '\0';
	*at = from;
	return n;
}

size_t mu__kstrip_mf(char *s, size_t n)
{
	uint64_t objs = 0;   /* bit d: the container at depth d+1 is an object */
	size_t depth = 0;
	bool key = false;    /* the next string is a member name */
	int next = 0;        /* the value about to open: 1 the event's "object", 2 an
			      * object's "metadata", 3 the list's "items" */
	bool items = false;  /* inside the list's items (an array at depth 2) */
	size_t obj = 0;      /* the depth of the object being read (2 or 3), 0 none */
	size_t meta = 0;     /* the depth of its metadata, 0 = not in it */
	size_t last = 0;     /* the last ',' or '{' seen */
	for (size_t i = 0; i < n; i++) {
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
			next = 0;
			key = c == '{';
			last = i;
		} else if (c == '}' || c == ']') {
			if (!depth)
				return n;
			if (depth == meta)
				meta = 0;
			if (depth == obj)
				obj = 0;
			if (depth == 2)
				items = false;
			depth--;
			key = false;
		} else if (c == ',') {
			key = depth > 0 && depth <= 64 && (objs >> (depth - 1) & 1);
			last = i;
		} else if (c == '"') {
			size_t e = str_end(s, i, n);
			if (e >= n)
				return n;
			if (key && depth == 1)
				next = e - i == 8 && !memcmp(s + i, "\"object\"", 8) ? 1 :
				       e - i == 7 && !memcmp(s + i, "\"items\"", 7) ? 3 : 0;
			else if (key && obj && depth == obj)
				next = e - i == 10 && !memcmp(s + i, "\"metadata\"", 10) ? 2 : 0;
			if (key && meta && depth == meta && e - i == 15 && !memcmp(s + i, "\"managedFields\"", 15)) {
				size_t at, m = cut(s, n, last, i, e, &at);
				if (m == n)
					return n;
				n = m;
				i = at - 1; /* go on from what followed (a duplicate name) */
				continue;
			}
			key = false;
			i = e - 1;
		}
	}
	return n;
}

/*
 * jobidx.c - the completion indexes of an Indexed Job as ordered
 * intervals, as Kubernetes' Job controller keeps them (orderedIntervals
 * of pkg/controller/job/indexed_job_utils.go) and its API checks them
 * (validateIndexesFormat of pkg/apis/batch/validation): the lenient
 * reading of status.completedIndexes and failedIndexes, the strict one of
 * a successPolicy's succeededIndexes, union with new indexes, the
 * compressed text ("1,3-5"), membership, and the first free indexes.
 * Used by the Job controller (jobctl.c) and the Job validation
 * (validate.c); calls nothing else of muster up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

/* --- completion indexes: ordered intervals -------------------------------- */

void mu__ivls_release(mu__ivls_t *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* Appends [f, l] to s, merged into its last interval when they touch or
 * overlap (s is built in order).  MU_OK or MU_ENOMEM.  O(1) amortised. */
static int ivls_push(mu__ivls_t *s, long long f, long long l)
{
	if (s->n && f <= s->v[s->n - 1].last + 1) {
		if (l > s->v[s->n - 1].last)
			s->v[s->n - 1].last = l;
		return MU_OK;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		mu__ivl_t *v = realloc(s->v, cap * sizeof *v);
		if (!v)
			return MU_ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (mu__ivl_t){f, l};
	return MU_OK;
}

/* A decimal integer of text p..p+n (a sign allowed, as strconv.Atoi), or
 * false.  O(n). */
static bool ivl_atoi(const char *p, size_t n, long long *out)
{
	size_t i = 0;
	bool neg = false;
	if (n && (p[0] == '-' || p[0] == '+')) {
		neg = p[0] == '-';
		i = 1;
	}
	if (i == n || n - i > 18)
		return false;
	long long v = 0;
	for (; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (p[i] - '0');
	}
	*out = neg ? -v : v;
	return true;
}

int mu__ivls_parse(const char *s, long long completions, mu__ivls_t *out)
{
	memset(out, 0, sizeof *out);
	if (!s || !*s)
		return MU_OK;
	for (const char *p = s;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *dash = memchr(p, '-', len);
		long long f, l;
		/* strings.Split on "-": a leading '-' makes an empty first part */
		bool ok = ivl_atoi(p, dash ? (size_t)(dash - p) : len, &f);
		if (ok && f >= completions)
			break;
		if (ok && dash) {
			const char *q = dash + 1;
			size_t ql = len - (size_t)(q - p);
			const char *dash2 = memchr(q, '-', ql);
			ok = ivl_atoi(q, dash2 ? (size_t)(dash2 - q) : ql, &l);
			if (ok && l >= completions)
				l = completions - 1;
		} else {
			l = f;
		}
		if (ok) {
			/* kube merges with the last one only when adjacent */
			if (out->n && out->v[out->n - 1].last == f - 1) {
				out->v[out->n - 1].last = l;
			} else {
				if (out->n == out->cap) {
					size_t cap = out->cap ? 2 * out->cap : 8;
					mu__ivl_t *v = realloc(out->v, cap * sizeof *v);
					if (!v) {
						mu__ivls_release(out);
						return MU_ENOMEM;
					}
					out->v = v;
					out->cap = cap;
				}
				out->v[out->n++] = (mu__ivl_t){f, l};
			}
		}
		if (!end)
			break;
		p = end + 1;
	}
	return MU_OK;
}

/* parseIndexInterval: one "X" or "X-Y" of a strict list.  O(len). */
static int ivl_check_one(const char *p, size_t len, long long completions, long long *x, long long *y,
			 char *msg, size_t msz)
{
	const char *dash = memchr(p, '-', len);
	if (dash && memchr(dash + 1, '-', len - (size_t)(dash + 1 - p))) {
		snprintf(msg, msz, "the fragment \"%.*s\" violates the requirement that an index interval can have at "
			 "most two parts separated by '-'", (int)(len > 60 ? 60 : len), p);
		return MU_EINVAL;
	}
	size_t xl = dash ? (size_t)(dash - p) : len;
	if (!ivl_atoi(p, xl, x)) {
		snprintf(msg, msz, "cannot convert string to integer for index: \"%.*s\"", (int)(xl > 60 ? 60 : xl), p);
		return MU_EINVAL;
	}
	if (*x >= completions) {
		snprintf(msg, msz, "too large index: \"%.*s\"", (int)(xl > 60 ? 60 : xl), p);
		return MU_EINVAL;
	}
	*y = *x;
	if (!dash)
		return MU_OK;
	const char *q = dash + 1;
	size_t yl = len - (size_t)(q - p);
	if (!ivl_atoi(q, yl, y)) {
		snprintf(msg, msz, "cannot convert string to integer for index: \"%.*s\"", (int)(yl > 60 ? 60 : yl), q);
		return MU_EINVAL;
	}
	if (*y >= completions) {
		snprintf(msg, msz, "too large index: \"%.*s\"", (int)(yl > 60 ? 60 : yl), q);
		return MU_EINVAL;
	}
	if (*x >= *y) {
		snprintf(msg, msz, "non-increasing order, previous: %lld, current: %lld", *x, *y);
		return MU_EINVAL;
	}
	return MU_OK;
}

int mu__ivls_check(const char *s, long long completions, long long *total, char *msg, size_t msz)
{
	*total = 0;
	if (!s || !*s)
		return MU_OK;
	bool have = false;
	long long lastidx = 0;
	for (const char *p = s;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		long long x, y;
		if (ivl_check_one(p, len, completions, &x, &y, msg, msz) != MU_OK)
			return MU_EINVAL;
		if (have && lastidx >= x) {
			snprintf(msg, msz, "non-increasing order, previous: %lld, current: %lld", lastidx, x);
			return MU_EINVAL;
		}
		*total += y - x + 1;
		lastidx = y;
		have = true;
		if (!end)
			break;
		p = end + 1;
	}
	return MU_OK;
}

int mu__ivls_with(const mu__ivls_t *a, const long long *ix, size_t n, mu__ivls_t *out)
{
	memset(out, 0, sizeof *out);
	size_t i = 0, j = 0;
	int rc = MU_OK;
	while (rc == MU_OK && i < a->n && j < n) {
		if (a->v[i].first < ix[j]) {
			rc = ivls_push(out, a->v[i].first, a->v[i].last);
			i++;
		} else {
			rc = ivls_push(out, ix[j], ix[j]);
			j++;
		}
	}
	for (; rc == MU_OK && i < a->n; i++)
		rc = ivls_push(out, a->v[i].first, a->v[i].last);
	for (; rc == MU_OK && j < n; j++)
		rc = ivls_push(out, ix[j], ix[j]);
	if (rc != MU_OK)
		mu__ivls_release(out);
	return rc;
}

long long mu__ivls_total(const mu__ivls_t *s)
{
	long long t = 0;
	for (size_t i = 0; i < s->n; i++)
		t += s->v[i].last - s->v[i].first + 1;
	return t;
}

bool mu__ivls_has(const mu__ivls_t *s, long long ix)
{
	size_t lo = 0, hi = s->n;
	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].last >= ix)
			hi = mid;
		else
			lo = mid + 1;
	}
	return hi < s->n && s->v[hi].first <= ix;
}

char *mu__ivls_str(const mu__ivls_t *s)
{
	size_t cap = 1 + s->n * 42, at = 0;
	char *b = malloc(cap);
	if (!b)
		return NULL;
	b[0] = '\0';
	for (size_t i = 0; i < s->n; i++) {
		const mu__ivl_t *v = &s->v[i];
		at += (size_t)snprintf(b + at, cap - at, "%s%lld", i ? "," : "", v->first);
		if (v->last > v->first)
			at += (size_t)snprintf(b + at, cap - at, "%c%lld", v->last == v->first + 1 ? ',' : '-', v->last);
	}
	return b;
}

size_t mu__ivls_first_free(const mu__ivls_t *taken, size_t count, long long completions, long long *out)
{
	size_t n = 0;
	long long cand = 0;
	for (size_t i = 0; i < taken->n && n < count; i++) {
		for (; cand < completions && n < count && cand < taken->v[i].first; cand++)
			out[n++] = cand;
		if (cand < taken->v[i].last + 1)
			cand = taken->v[i].last + 1;
	}
	for (; cand < completions && n < count; cand++)
		out[n++] = cand;
	return n;
}

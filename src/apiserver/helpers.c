/*
 * helpers.c - small helpers every file of the control plane shares: clocks,
 * time in RFC 3339 (written and parsed), kubectl's short ages, setting a
 * dotted JSON path, base64, and the server's uids and generated-name
 * suffixes (from its seeded generator), and the text of one value of a
 * stored object's compact JSON found without a parse (mu__text_at: the Job
 * controller's no-op check, the garbage collector's references;
 * mu__text_members: several top-level members in one scan).  They
 * call nothing else of the room, so
 * that the registry (resources.c) and validation (validate.c) can both use
 * them without calling each other in a loop.  Each is bounded by the size
 * of its input.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apiserver/apiserver_int.h"

/* --- helpers ------------------------------------------------------------ */

int64_t mu__now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec;
}

int64_t mu__mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t mu__parse_rfc3339(const char *s)
{
	int64_t ms;
	if (!s || mu__rfc3339_parse(s, &ms) != MU_OK)
		return -1;
	return ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
}

/* As k8s.io/apimachinery/pkg/util/duration.HumanDuration. */
void mu__age(int64_t secs, char *buf, size_t len)
{
	if (secs < 0)
		secs = 0;
	int64_t m = secs / 60, h = secs / 3600, d = h / 24, y = d / 365;
	if (secs < 120)
		snprintf(buf, len, "%llds", (long long)secs);
	else if (m < 10)
		snprintf(buf, len, "%lldm%llds", (long long)m, (long long)(secs % 60));
	else if (m < 180)
		snprintf(buf, len, "%lldm", (long long)m);
	else if (h < 8)
		snprintf(buf, len, "%lldh%lldm", (long long)h, (long long)(m % 60));
	else if (h < 48)
		snprintf(buf, len, "%lldh", (long long)h);
	else if (h < 192)
		snprintf(buf, len, "%lldd%lldh", (long long)d, (long long)(h % 24));
	else if (y < 2)
		snprintf(buf, len, "%lldd", (long long)d);
	else if (y < 8)
		snprintf(buf, len, "%lldy%lldd", (long long)y, (long long)(d % 365));
	else
		snprintf(buf, len, "%lldy", (long long)y);
}

int mu__jset(json_t *o, const char *path, json_t *v)
{
	char seg[128];
	if (!v)
		return MU_ENOMEM;
	for (;;) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof seg || !json_is_object(o)) {
			json_decref(v);
			return MU_EINVAL;
		}
		memcpy(seg, path, n);
		seg[n] = '\0';
		if (!dot)
			return json_object_set_new(o, seg, v) ? MU_ENOMEM : MU_OK;
		json_t *next = json_object_get(o, seg);
		if (!json_is_object(next)) {
			next = json_object();
			if (!next || json_object_set_new(o, seg, next)) {
				json_decref(v);
				return MU_ENOMEM;
			}
		}
		o = next;
		path = dot + 1;
	}
}

void mu__uid(mu_apiserver_t *s, char out[37])
{
	pthread_mutex_lock(&s->rnd_mu);
	uint64_t a = (s->rnd = s->rnd * 6364136223846793005ull + 1442695040888963407ull);
	uint64_t b = (s->rnd = s->rnd * 6364136223846793005ull + 1442695040888963407ull);
	pthread_mutex_unlock(&s->rnd_mu);
	a ^= a >> 29;
	b ^= b >> 31;
	snprintf(out, 37, "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(a >> 32), (unsigned)(a >> 16 & 0xffff),
		 (unsigned)(a & 0xfff), (unsigned)((b >> 48 & 0x3fff) | 0x8000),
		 (unsigned long long)(b & 0xffffffffffffull));
}

void mu__name_suffix(mu_apiserver_t *s, char out[6])
{
	static const char alpha[] = "bcdfghjklmnpqrstvwxz2456789";
	pthread_mutex_lock(&s->rnd_mu);
	uint64_t a = (s->rnd = s->rnd * 6364136223846793005ull + 1442695040888963407ull);
	pthread_mutex_unlock(&s->rnd_mu);
	a ^= a >> 33;
	for (int i = 0; i < 5; i++, a /= 27)
		out[i] = alpha[a % 27];
	out[5] = '\0';
}

/* --- values in a stored object's text ------------------------------------ */

/* The index of the quote that closes the JSON string whose opening quote
 * is at t[i], or n when the text ends first.  memchr from quote to quote,
 * an escaped one (odd backslashes before it) passed over.  O(the string). */
static size_t string_end(const char *t, size_t i, size_t n)
{
	for (size_t k = i + 1; k < n;) {
		const char *q = memchr(t + k, '"', n - k);
		if (!q)
			return n;
		size_t e = (size_t)(q - t), b = e;
		while (b > i + 1 && t[b - 1] == '\\')
			b--;
		if ((e - b) % 2 == 0)
			return e;
		k = e + 1;
	}
	return n;
}

/* The length of the JSON value that starts at v (of at most n
 * characters): an object or array to its closing bracket, a string to its
 * closing quote, else to the next ',', '}' or ']'; 0 when the text ends
 * first.  Strings are skipped.  O(the value). */
static size_t value_len(const char *v, size_t n)
{
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		char c = v[i];
		if (c == '"') {
			if ((i = string_end(v, i, n)) >= n)
				return 0;
			if (depth == 0)
				return i + 1;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return i;
			if (--depth == 0)
				return i + 1;
		} else if (c == ',' && depth == 0) {
			return i;
		}
	}
	return depth == 0 ? n : 0;
}

bool mu__text_at(const char *t, size_t len, const char *k1, const char *k2, const char **v, size_t *vlen)
{
	int depth = 0;
	bool in = false; /* inside k1's object */
	size_t l1 = strlen(k1), l2 = k2 ? strlen(k2) : 0;
	for (size_t i = 0; i < len; i++) {
		char c = t[i];
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (--depth <= 1 && in)
				return false;
		} else if (c == '"') {
			size_t k = string_end(t, i, len);
			if (k + 1 >= len || t[k + 1] != ':') {
				i = k;
				continue; /* a string value */
			}
			const char *key = t + i + 1;
			size_t klen = k - i - 1;
			i = k + 1; /* at the ':' */
			bool top = depth == 1 && klen == l1 && !memcmp(key, k1, l1);
			if ((top && !k2) || (depth == 2 && in && klen == l2 && !memcmp(key, k2, l2))) {
				*v = t + i + 1;
				*vlen = value_len(*v, len - i - 1);
				return *vlen > 0;
			}
			if (top)
				in = i + 1 < len && t[i + 1] == '{';
		}
	}
	return false;
}

int mu__text_members(const char *t, size_t len, const char *const *keys, int nk, const char **v, size_t *vlen)
{
	int seen = 0, depth = 0;
	for (int q = 0; q < nk; q++) {
		v[q] = NULL;
		vlen[q] = 0;
	}
	for (size_t i = 0; i < len && seen < nk; i++) {
		char c = t[i];
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			depth--;
		} else if (c == '"') {
			size_t k = string_end(t, i, len);
			if (k + 1 >= len || t[k + 1] != ':') {
				i = k;
				continue; /* a string value */
			}
			const char *key = t + i + 1;
			size_t klen = k - i - 1;
			i = k + 1; /* at the ':' */
			for (int q = 0; depth == 1 && q < nk; q++)
				if (!v[q] && strlen(keys[q]) == klen && !memcmp(key, keys[q], klen)) {
					/* the first one only, as mu__text_at: one whose
					 * text ends early stays absent (vlen 0) */
					v[q] = t + i + 1;
					vlen[q] = value_len(v[q], len - i - 1);
					seen++;
					break;
				}
		}
	}
	int found = 0;
	for (int q = 0; q < nk; q++) {
		if (!vlen[q])
			v[q] = NULL;
		found += vlen[q] > 0;
	}
	return found;
}

int mu__exit_code(const char *s, const char *container, int *code)
{
	*code = 0;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end != s && !*end) { /* one code for every container */
		if (errno || v < -2147483647LL - 1 || v > 2147483647LL)
			return -1;
		*code = (int)v;
		return 0;
	}
	for (const char *p = s;;) { /* NAME=CODE[,NAME=CODE...] */
		const char *eq = strchr(p, '=');
		if (!eq || eq == p)
			return -1;
		errno = 0;
		v = strtoll(eq + 1, &end, 10);
		if (end == eq + 1 || (*end && *end != ',') || errno || v < -2147483647LL - 1 || v > 2147483647LL)
			return -1;
		for (const char *q = p; q < eq; q++)
			if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '-'))
				return -1;
		if (container && (size_t)(eq - p) == strlen(container) && !memcmp(p, container, (size_t)(eq - p)))
			*code = (int)v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

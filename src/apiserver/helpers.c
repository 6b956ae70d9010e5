/*
 * helpers.c - small helpers every file of the control plane shares: clocks,
 * time in RFC 3339 (written and parsed), kubectl's short ages, setting a
 * dotted JSON path, and base64.  They call nothing else of the room, so
 * that the registry (resources.c) and validation (validate.c) can both use
 * them without calling each other in a loop.  Each is bounded by the size
 * of its input.
 */
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

void mu__rfc3339(int64_t secs, long usec, bool micro, char *buf, size_t len)
{
	time_t t = (time_t)secs;
	struct tm tm;
	gmtime_r(&t, &tm);
	if (micro)
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, usec);
	else
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int64_t mu__parse_rfc3339(const char *s)
{
	int y, mo, d, h, mi, se, n = 0;
	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &se, &n) != 6 ||
	    n != 19 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
		return -1;
	const char *p = s + n;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	int64_t off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om, k = 0;
		if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &k) != 2 || k != 5)
			return -1;
		off = (oh * 3600 + om * 60) * (*p == '+' ? 1 : -1);
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
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

/* --- base64 (kubeconfig data, continue tokens) -------------------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *mu__b64enc(const void *data, size_t n)
{
	const unsigned char *p = data;
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? b64[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

int mu__b64dec(const char *s, char *out, size_t cap, size_t *outlen)
{
	size_t n = 0;
	unsigned acc = 0;
	int bits = 0;
	for (; *s && *s != '='; s++) {
		const char *at = strchr(b64, *s);
		if (!at || !*s)
			return MU_EPARSE;
		acc = (acc << 6 | (unsigned)(at - b64)) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n + 1 >= cap)
				return MU_EPARSE;
			out[n++] = (char)(acc >> bits & 0xff);
		}
	}
	while (*s == '=')
		s++;
	if (*s)
		return MU_EPARSE;
	out[n] = '\0';
	*outlen = n;
	return MU_OK;
}

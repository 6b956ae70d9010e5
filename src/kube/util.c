/*
 * util.c - small helpers of the Kubernetes daemon: JSON paths, RFC 3339
 * times, base64, whole files, and structured log lines.  Nothing here
 * keeps state; the logger's mutex lives in the caller's mu__klog_t.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "muster/jpath.h"
#include "kube/kube_int.h"

/* One implementation of dotted paths serves both modules. */
json_t *mu__kj(const json_t *o, const char *path)
{
	return mu__jget(o, path);
}

const char *mu__kjs(const json_t *o, const char *path)
{
	return json_string_value(mu__kj(o, path));
}

int64_t mu__kji(const json_t *o, const char *path, int64_t def)
{
	const json_t *v = mu__kj(o, path);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

const char *mu__kmap(const json_t *o, const char *map_path, const char *key)
{
	return json_string_value(json_object_get(mu__kj(o, map_path), key));
}

int64_t mu__k_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t mu__k_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Reads n digits at *p into *v. */
static bool digits(const char **p, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return false;
		*v = *v * 10 + (**p - '0');
	}
	return true;
}

int mu__k_parse_time(const char *s, int64_t *ms)
{
	int y, mo, d, h, mi, se, frac = 0, fd = 0;
	const char *p = s;
	if (!s || !digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) ||
	    *p++ != '-' || !digits(&p, 2, &d) || (*p != 'T' && *p != 't' && *p != ' '))
		return MU_EPARSE;
	p++;
	if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) ||
	    *p++ != ':' || !digits(&p, 2, &se))
		return MU_EPARSE;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
		return MU_EPARSE;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, fd++)
			if (fd < 3)
				frac = frac * 10 + (*p - '0');
		while (fd > 0 && fd < 3)
			frac *= 10, fd++;
	}
	int64_t off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, oh, om;
		if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om))
			return MU_EPARSE;
		off = sign * (oh * 3600 + om * 60);
	} else {
		return MU_EPARSE;
	}
	if (*p)
		return MU_EPARSE;
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
	*ms = secs * 1000 + frac;
	return MU_OK;
}

void mu__k_fmt_time(int64_t ms, bool micro, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	char base[32];
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	if (micro)
		snprintf(buf, len, "%s.%06dZ", base, (int)(ms % 1000) * 1000);
	else
		snprintf(buf, len, "%sZ", base);
}

/* The value of a base64 character, -1 for others. */
static int b64v(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

char *mu__k_b64dec(const char *s, size_t *len)
{
	size_t n = strlen(s), o = 0;
	char *out = malloc(n / 4 * 3 + 4);
	if (!out)
		return NULL;
	uint32_t acc = 0;
	int bits = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '=' || *p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
			continue;
		int v = b64v(*p);
		if (v < 0) {
			free(out);
			return NULL;
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)(acc >> bits & 0xff);
		}
	}
	out[o] = '\0';
	if (len)
		*len = o;
	return out;
}

char *mu__k_readfile(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (n + 1 < cap) {
			if (ferror(f)) {
				free(buf);
				buf = NULL;
			}
			break;
		}
		if (cap >= ((size_t)64 << 20)) { /* credentials, not data */
			free(buf);
			buf = NULL;
			errno = EFBIG;
			break;
		}
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = n;
	}
	return buf;
}

/* Appends s to a JSON string being built in b (at most len), escaped. */
static size_t json_esc(char *b, size_t at, size_t len, const char *s, size_t n)
{
	for (size_t i = 0; i < n && at + 7 < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			b[at++] = '\\';
			b[at++] = (char)c;
		} else if (c < 0x20) {
			at += (size_t)snprintf(b + at, len - at, "\\u%04x", c);
		} else {
			b[at++] = (char)c;
		}
	}
	b[at] = '\0';
	return at;
}

/* Writes msg as a JSON line: "k=v" words after " | " become fields. */
static void log_json_line(FILE *f, const char *ts, const char *lvl, const char *msg)
{
	char b[4096];
	size_t at = (size_t)snprintf(b, sizeof b, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"", ts, lvl);
	const char *bar = strstr(msg, " | ");
	at = json_esc(b, at, sizeof b, msg, bar ? (size_t)(bar - msg) : strlen(msg));
	at += (size_t)snprintf(b + at, sizeof b - at, "\"");
	for (const char *p = bar ? bar + 3 : NULL; p && *p && at + 8 < sizeof b;) {
		while (*p == ' ')
			p++;
		const char *sp = strchr(p, ' '), *eq = strchr(p, '=');
		size_t wl = sp ? (size_t)(sp - p) : strlen(p);
		if (!wl)
			break;
		if (eq && eq < p + wl) {
			at += (size_t)snprintf(b + at, sizeof b - at, ",\"");
			at = json_esc(b, at, sizeof b, p, (size_t)(eq - p));
			at += (size_t)snprintf(b + at, sizeof b - at, "\":\"");
			at = json_esc(b, at, sizeof b, eq + 1, wl - (size_t)(eq - p) - 1);
			at += (size_t)snprintf(b + at, sizeof b - at, "\"");
		}
		p += wl;
	}
	if (at >= sizeof b - 3)
		at = sizeof b - 3;
	snprintf(b + at, sizeof b - at, "}");
	fprintf(f, "%s\n", b);
}

void mu__klog(mu__klog_t *l, int level, const char *fmt, ...)
{
	if (level > l->level)
		return;
	char msg[2048], ts[40];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	mu__k_fmt_time(mu__k_now_ms(), true, ts, sizeof ts);
	static const char *const names[] = {"error", "info", "debug"};
	const char *lvl = names[level < 0 ? 0 : level > 2 ? 2 : level];
	pthread_mutex_lock(&l->mu);
	if (l->json)
		log_json_line(stderr, ts, lvl, msg);
	else
		fprintf(stderr, "%s %-5s %s\n", ts, lvl, msg);
	fflush(stderr);
	pthread_mutex_unlock(&l->mu);
}

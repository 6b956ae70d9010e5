/*
 * util.c - small helpers of the Kubernetes daemon: JSON paths, RFC 3339
 * times, base64, whole files, structured log lines, and JSON text
 * written directly (mu__kjt_t: request bodies, shape keys).  Nothing here
 * keeps state; the logger's mutex lives in the caller's mu__klog_t.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "muster/jpath.h"
#include "muster/util.h"
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
	mu__rfc3339_format(mu__k_now_ms() * 1000, true, ts, sizeof ts);
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

/* --- JSON text ----------------------------------------------------------------- */

void mu__kjt_put(mu__kjt_t *b, const char *s, size_t n)
{
	if (b->bad)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 512;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *t = realloc(b->s, cap);
		if (!t) {
			b->bad = true;
			return;
		}
		b->s = t;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

void mu__kjt_raw(mu__kjt_t *b, const char *s)
{
	mu__kjt_put(b, s, strlen(s));
}

void mu__kjt_strn(mu__kjt_t *b, const char *s, size_t n)
{
	const char *end = s + n, *run = s;
	mu__kjt_put(b, "\"", 1);
	while (s < end) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c != '"' && c != '\\') {
			size_t l = c < 0x80 ? 1 : mu__utf8_seq(s);
			if (!l || l > (size_t)(end - s)) {
				b->bad = true;
				return;
			}
			s += l;
			continue;
		}
		mu__kjt_put(b, run, (size_t)(s - run));
		char e[8];
		const char *t = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b" : c == '\f' ? "\\f" :
				c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
		if (!t) {
			snprintf(e, sizeof e, "\\u%04X", c);
			t = e;
		}
		mu__kjt_raw(b, t);
		run = ++s;
	}
	mu__kjt_put(b, run, (size_t)(s - run));
	mu__kjt_put(b, "\"", 1);
}

void mu__kjt_str(mu__kjt_t *b, const char *s)
{
	if (s)
		mu__kjt_strn(b, s, strlen(s));
	else
		mu__kjt_put(b, "null", 4);
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void mu__kjt_sorted(mu__kjt_t *b, const json_t *v)
{
	char num[32];
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		size_t n = json_object_size(v), i = 0;
		const char *stack[16], **keys = n <= 16 ? stack : malloc(n * sizeof *keys);
		if (!keys) {
			b->bad = true;
			return;
		}
		const char *k;
		json_t *m;
		json_object_foreach((json_t *)v, k, m)
			keys[i++] = k;
		qsort(keys, n, sizeof *keys, key_cmp);
		mu__kjt_put(b, "{", 1);
		for (i = 0; i < n; i++) {
			if (i)
				mu__kjt_put(b, ",", 1);
			mu__kjt_str(b, keys[i]);
			mu__kjt_put(b, ":", 1);
			mu__kjt_sorted(b, json_object_get(v, keys[i]));
		}
		mu__kjt_put(b, "}", 1);
		if (keys != stack)
			free(keys);
		return;
	}
	case JSON_ARRAY:
		mu__kjt_put(b, "[", 1);
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i)
				mu__kjt_put(b, ",", 1);
			mu__kjt_sorted(b, json_array_get(v, i));
		}
		mu__kjt_put(b, "]", 1);
		return;
	case JSON_STRING:
		mu__kjt_strn(b, json_string_value(v), json_string_length(v));
		return;
	case JSON_INTEGER:
		snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		mu__kjt_raw(b, num);
		return;
	case JSON_REAL: { /* jansson's own digits */
		char *t = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		if (t)
			mu__kjt_raw(b, t);
		else
			b->bad = true;
		free(t);
		return;
	}
	case JSON_TRUE: mu__kjt_raw(b, "true"); return;
	case JSON_FALSE: mu__kjt_raw(b, "false"); return;
	case JSON_NULL: mu__kjt_raw(b, "null"); return;
	}
}

char *mu__kjt_done(mu__kjt_t *b)
{
	if (b->bad) {
		free(b->s);
		return NULL;
	}
	/* to its size: a backlog's queued Bindings are kept a while, tens of
	 * thousands of them, and the doubling left up to half of each unused */
	char *t = realloc(b->s, b->n + 1);
	return t ? t : b->s;
}

/*
 * dutil.c - what every file of the hub daemon shares: the clocks, logs,
 * one JSON request, and reading labels, annotations and "k=v,k=v" lists.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"

int64_t mu__d_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

mu_time_t mu__d_now(const mu__dd_t *d)
{
	return mu__d_mono_ms() - d->t0;
}

void mu__dlog(const mu__dd_t *d, int level, const char *fmt, ...)
{
	if (level > 0 && d->o->quiet)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	fprintf(stderr, "%02d:%02d:%02d.%03ld %s %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
		ts.tv_nsec / 1000000, level ? "info " : "error", line);
}

long mu__dreq(const mu__dd_t *d, mu_kube_client_t *c, const char *method,
	      const char *path, const char *ctype, const json_t *body,
	      json_t **out)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	char *ans = NULL;
	long st = 0;
	mu_kube_client_do(c, method, path, body ? (ctype ? ctype : "application/json") : NULL,
			  text, d->o->request_timeout_ms, &st, &ans);
	free(text);
	if (out) {
		*out = ans && *ans ? json_loads(ans, 0, NULL) : NULL;
		if (!*out && st == 0 && ans)
			*out = json_pack("{s:s}", "message", ans);
	}
	free(ans);
	return st;
}

const char *mu__dmeta(const json_t *o, const char *map, const char *key)
{
	const json_t *m = json_object_get(json_object_get(o, "metadata"), map);
	return json_string_value(json_object_get(m, key));
}

int mu__dlabels(const char *s, mu_arena_t *a, mu_label_t **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!s || !*s)
		return MU_OK;
	size_t cap = 1;
	for (const char *p = s; *p; p++)
		cap += *p == ',';
	mu_label_t *v = mu_arena_alloc(a, cap * sizeof *v);
	if (!v)
		return MU_ENOMEM;
	const char *p = s;
	while (*p) {
		size_t len = strcspn(p, ",");
		char term[512];
		snprintf(term, sizeof term, "%.*s", (int)(len < 511 ? len : 511), p);
		char *eq = strchr(term, '=');
		if (!eq || eq == term)
			return MU_EINVAL;
		*eq = '\0';
		v[*n].key = mu_arena_strdup(a, term);
		v[*n].value = mu_arena_strdup(a, eq + 1);
		if (!v[*n].key || !v[*n].value)
			return MU_ENOMEM;
		(*n)++;
		p += len;
		if (*p == ',')
			p++;
	}
	*out = v;
	return MU_OK;
}

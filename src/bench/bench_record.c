/*
 * bench_record.c - the result records of `muster bench`: clearing, adding,
 * writing them as JSON lines and parsing those lines back, and the speed
 * and memory targets each record is checked against.  The shapes
 * (bench.c, bench_cycle.c) and the runner (bench_run.c) use these; this
 * file calls neither.  Every function is bounded by one record.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_int.h"
#include "muster/util.h"

/* --- records ------------------------------------------------------------- */

typedef enum ftype { F_I32, F_I64, F_DBL, F_STR } ftype_t;

/* One key of a record: its type, where it lives and how it prints. */
typedef struct field {
	const char *key;
	ftype_t t;
	size_t off, size;
	const char *fmt; /* doubles */
} field_t;

#define FD(k, f, t, fmt) {k, t, offsetof(mu_bench_result_t, f), \
			   sizeof(((mu_bench_result_t *)0)->f), fmt}

static const field_t fields[] = {
	FD("shape", shape, F_STR, NULL),
	FD("nodes", nodes, F_I32, NULL),
	FD("pods", pods, F_I64, NULL),
	FD("decisions_per_s", decisions_per_s, F_DBL, "%.0f"),
	FD("p50_us", p50_us, F_DBL, "%.2f"),
	FD("p99_us", p99_us, F_DBL, "%.2f"),
	FD("peak_rss_mb", peak_rss_mb, F_DBL, "%.1f"),
	FD("decisions", decisions, F_I64, NULL),
	FD("placed", placed, F_I64, NULL),
	FD("source", source, F_STR, NULL),
	FD("level", level, F_STR, NULL),
	FD("gang_pods", gang_pods, F_I32, NULL),
	FD("queues", queues, F_I32, NULL),
	FD("pending", pending, F_I64, NULL),
	FD("preemptors", preemptors, F_I64, NULL),
	FD("evicted", evicted, F_I64, NULL),
	FD("p50_wall_us", p50_wall_us, F_DBL, "%.2f"),
	FD("p99_wall_us", p99_wall_us, F_DBL, "%.2f"),
	FD("p50_cpu_us", p50_cpu_us, F_DBL, "%.2f"),
	FD("p99_cpu_us", p99_cpu_us, F_DBL, "%.2f"),
	FD("submit_us", submit_us, F_DBL, "%.2f"),
	FD("build_ms", build_ms, F_DBL, "%.1f"),
	FD("build_place_ms", build_place_ms, F_DBL, "%.1f"),
	FD("cold_cycle_ms", cold_cycle_ms, F_DBL, "%.3f"),
	FD("idle_cycle_ms", idle_cycle_ms, F_DBL, "%.3f"),
	FD("cycle_ms", cycle_ms, F_DBL, "%.3f"),
	FD("cycle_p99_ms", cycle_p99_ms, F_DBL, "%.3f"),
	FD("engine_ms", engine_ms, F_DBL, "%.1f"),
	FD("rss_base_mb", rss_base_mb, F_DBL, "%.1f"),
	FD("running", running, F_I64, NULL),
	FD("skipped", skipped, F_STR, NULL),
};

#define NFIELDS (sizeof fields / sizeof *fields)

void mu_bench_result_clear(mu_bench_result_t *r, const char *shape)
{
	memset(r, 0, sizeof *r);
	for (size_t i = 0; i < NFIELDS; i++) {
		char *p = (char *)r + fields[i].off;
		if (fields[i].t == F_I32)
			*(int32_t *)p = -1;
		else if (fields[i].t == F_I64)
			*(int64_t *)p = -1;
		else if (fields[i].t == F_DBL)
			*(double *)p = NAN;
	}
	snprintf(r->shape, sizeof r->shape, "%s", shape ? shape : "");
}

void mu_bench_results_init(mu_bench_results_t *rs)
{
	memset(rs, 0, sizeof *rs);
}

void mu_bench_results_release(mu_bench_results_t *rs)
{
	free(rs->v);
	memset(rs, 0, sizeof *rs);
}

void mu_bench_json(FILE *f, const mu_bench_result_t *r)
{
	bool first = true;
	fputc('{', f);
	for (size_t i = 0; i < NFIELDS; i++) {
		const field_t *d = &fields[i];
		const char *p = (const char *)r + d->off;
		if ((d->t == F_I32 && *(const int32_t *)p < 0) ||
		    (d->t == F_I64 && *(const int64_t *)p < 0) ||
		    (d->t == F_DBL && !isfinite(*(const double *)p)) ||
		    (d->t == F_STR && !*p))
			continue;
		fprintf(f, "%s\"%s\": ", first ? "" : ", ", d->key);
		first = false;
		if (d->t == F_I32)
			fprintf(f, "%d", (int)*(const int32_t *)p);
		else if (d->t == F_I64)
			fprintf(f, "%lld", (long long)*(const int64_t *)p);
		else if (d->t == F_DBL)
			fprintf(f, d->fmt, *(const double *)p);
		else
			mu__json_str(f, p);
	}
	fputs("}\n", f);
}

/* Stores JSON value v into field d of r; wrong types are ignored. */
static void parse_field(const field_t *d, json_t *v, mu_bench_result_t *r)
{
	char *p = (char *)r + d->off;
	if (d->t == F_STR && json_is_string(v))
		snprintf(p, d->size, "%s", json_string_value(v));
	else if (d->t == F_I32 && json_is_number(v))
		*(int32_t *)p = (int32_t)json_number_value(v);
	else if (d->t == F_I64 && json_is_number(v))
		*(int64_t *)p = (int64_t)json_number_value(v);
	else if (d->t == F_DBL && json_is_number(v))
		*(double *)p = json_number_value(v);
}

int mu_bench_parse(const char *line, mu_bench_result_t *r)
{
	json_error_t err;
	json_t *o = json_loads(line, JSON_DECODE_ANY, &err);
	mu_bench_result_clear(r, NULL);
	if (!o || !json_is_object(o) || !json_is_string(json_object_get(o, "shape"))) {
		json_decref(o);
		return MU_EPARSE;
	}
	for (size_t i = 0; i < NFIELDS; i++) {
		json_t *v = json_object_get(o, fields[i].key);
		if (v)
			parse_field(&fields[i], v, r);
	}
	json_decref(o);
	return MU_OK;
}

/* --- targets ------------------------------------------------------------- */

bool mu_bench_check_met(const mu_bench_check_t *c)
{
	if (!isfinite(c->value))
		return false;
	return c->at_most ? c->value <= c->target : c->value >= c->target;
}

/* Appends a check when there is room. */
static size_t add_check(mu_bench_check_t *out, size_t n, size_t max,
			mu_bench_check_t c)
{
	if (n < max)
		out[n] = c;
	return n + 1;
}

size_t mu_bench_checks(const mu_bench_result_t *r, mu_bench_check_t *out,
		       size_t max)
{
	size_t n = 0;
	const char *s = r->shape;
	if (r->skipped[0])
		return 0;
	if (!strcmp(s, "basic"))
		n = add_check(out, n, max, (mu_bench_check_t){"decisions/s",
			r->decisions_per_s, 1e6, false, "/s", NULL});
	/* No peer figure here: kube-scheduler's 810 pods/s CI floor is end to
	 * end through an API server; compare it with docs/kubernetes.md's
	 * daemon figures, not with this engine-only one. */
	else if (!strcmp(s, "affinity")) /* every pod has anti-affinity or spread */
		n = add_check(out, n, max, (mu_bench_check_t){"decisions/s",
			r->decisions_per_s, 6000, false, "/s",
			"kube-scheduler scheduler_perf SchedulingPodAntiAffinity 5000Nodes floor: 60 pods/s"});
	else if (!strcmp(s, "basic-mixed"))
		n = add_check(out, n, max, (mu_bench_check_t){"decisions/s",
			r->decisions_per_s, 2e5, false, "/s", NULL});
	else if (!strcmp(s, "gang-topology") && (r->gang_pods <= 64 || r->gang_pods == 512))
		n = add_check(out, n, max, (mu_bench_check_t){"p99 per gang",
			r->p99_us, r->gang_pods <= 64 ? 1000 : 20000, true, "us",
			"kube-scheduler: 3.7-5.7 ms per 3-pod gang attempt"});
	else if (!strcmp(s, "preempt") || !strcmp(s, "preempt-varied")) /* 570 pods/s */
		n = add_check(out, n, max, (mu_bench_check_t){"p50 per preempting pod",
			r->p50_us, 1e6 / 570, true, "us",
			"kube-scheduler preemption floor 570 pods/s"});
	else if (!strcmp(s, "cycle")) {
		n = add_check(out, n, max, (mu_bench_check_t){"cycle, little changed",
			r->cycle_ms, 10, true, "ms", "KAI: 2.35 s per cycle"});
		n = add_check(out, n, max, (mu_bench_check_t){"build from scratch",
			r->build_ms, 500, true, "ms", NULL});
	} else if (!strcmp(s, "unique"))
		n = add_check(out, n, max, (mu_bench_check_t){"decisions/s",
			r->decisions_per_s, 5e5, false, "/s", NULL});
	else if (!strcmp(s, "backlog") || !strcmp(s, "blocked-selectors") ||
		 !strcmp(s, "reclaim-queues"))
		n = add_check(out, n, max, (mu_bench_check_t){"cycle, little changed",
			r->cycle_ms, 10, true, "ms", NULL});
	else if (!strcmp(s, "gangs4"))
		n = add_check(out, n, max, (mu_bench_check_t){"engine time",
			r->engine_ms, 10000, true, "ms", NULL});
	else if (!strcmp(s, "gang-blocked")) {
		n = add_check(out, n, max, (mu_bench_check_t){"first cycle, gangs blocked",
			r->cold_cycle_ms, 1000, true, "ms", NULL});
		n = add_check(out, n, max, (mu_bench_check_t){"cycle, little changed",
			r->cycle_ms, 1000, true, "ms", NULL});
	} else if (!strcmp(s, "classes"))
		n = add_check(out, n, max, (mu_bench_check_t){"RSS over no classes",
			r->peak_rss_mb / r->rss_base_mb, 1.2, true, "x", NULL});
	else if (!strcmp(s, "fleet")) {
		n = add_check(out, n, max, (mu_bench_check_t){"dispatch decisions/s",
			r->decisions_per_s, 1e4, false, "/s",
			"Armada: 1,000 pods/s or more on average"});
		n = add_check(out, n, max, (mu_bench_check_t){"hub peak RSS",
			r->peak_rss_mb, 2048, true, "MiB", NULL});
	} else if (!strcmp(s, "scale"))
		n = add_check(out, n, max, (mu_bench_check_t){"peak RSS",
			r->peak_rss_mb, 1024, true, "MiB",
			"YuniKorn: 30-40 GB at 5k nodes, 50k pods"});
	return n < max ? n : max;
}

mu_bench_result_t *mu_bench_results_add(mu_bench_results_t *rs, const char *shape)
{
	if (rs->n == rs->cap) {
		size_t ncap = rs->cap ? rs->cap * 2 : 16;
		mu_bench_result_t *nv = realloc(rs->v, ncap * sizeof *nv);
		if (!nv)
			return NULL;
		rs->v = nv;
		rs->cap = ncap;
	}
	mu_bench_result_t *r = &rs->v[rs->n++];
	mu_bench_result_clear(r, shape);
	return r;
}

/*
 * bench_varied2.c - more varied shapes of `muster bench`: gang-blocked (four
 * 4,096-pod gangs with a required block that cannot start over a background
 * load, so reservations run), classes (5,000 host-pinned selector classes:
 * peak RSS against the same pods without selectors, each run in its own
 * child process) and openb-replay (openb's 1,213 real GPU nodes and its pod list,
 * replayed with arrivals and departures; skipped when the data is absent).
 * The harness is bench_varied.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench_int.h"
#include "bench/bench_varied.h"

#define GI (1LL << 30)
#define MI (1LL << 20)

/* --- gang-blocked ----------------------------------------------------------- */

/* The rack a background job was pinned to, from its name "bg<rack>-<n>". */
static int32_t bg_rack(const mu__vb_t *v, mu_id_t job)
{
	mu_job_info_t ji;
	if (mu_engine_job_info(v->e, job, &ji) != MU_OK || strncmp(ji.name, "bg", 2))
		return -1;
	return (int32_t)atoi(ji.name + 2);
}

/* A background job of 2 GPUs pinned to rack `rack`, expected to run an
 * hour or so. */
static int bg_submit(mu__vb_t *v, int32_t rack, mu_time_t now)
{
	char name[40], val[16];
	snprintf(name, sizeof name, "bg%d-%lld", rack, (long long)v->njobs);
	snprintf(val, sizeof val, "r%d", rack);
	mu__bench_job_t b = {.name = name, .queue = "q", .replicas = 1,
			     .sel_key = "rack", .sel_value = val,
			     .est = 3600 * 1000 + (mu_time_t)(mu__bench_rand(&v->rng) % 3600) * 1000};
	b.req.v[MU_RES_CPU] = 16000;
	b.req.v[MU_RES_MEM] = 128 * GI;
	b.req.v[MU_RES_GPU] = 2;
	return mu__vb_submit(v, &b, now);
}

static int bg_arrive(mu__vb_t *v, void *ctx, int32_t q, mu_time_t now)
{
	int32_t racks = *(const int32_t *)ctx;
	return bg_submit(v, q >= 0 ? q : (int32_t)(mu__bench_rand(&v->rng) % (uint64_t)racks), now);
}

int mu__bench_gang_blocked(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	int32_t nodes = (int32_t)mu__bench_size(o, 5000, 1024);
	int32_t racks = (nodes + 31) / 32, gangs = 4, pods = 4096;
	mu__vb_t v;
	int rc = mu__vb_init(&v, o);
	mu_engine_free(v.e);
	v.e = NULL;
	v.queue_of = bg_rack;
	if (rc == MU_OK)
		rc = mu__bench_gang_cluster(o->seed, nodes, &v.e);
	/* Background: 8 two-GPU jobs in every rack, so that no block of 512
	 * nodes is ever wholly free. */
	for (int32_t k = 0; rc == MU_OK && k < 8; k++)
		for (int32_t rk = 0; rc == MU_OK && rk < racks; rk++)
			rc = bg_submit(&v, rk, 0);
	rc = rc ? rc : mu__vb_cycle(&v, 0, NULL);
	mu_time_t now = 3600 * 1000;
	for (int32_t g = 0; rc == MU_OK && g < gangs; g++) {
		char name[32];
		snprintf(name, sizeof name, "gang%d", g);
		mu__bench_job_t b = {.name = name, .queue = "q", .replicas = pods,
				     .required = "block", .est = 3600 * 1000};
		b.req.v[MU_RES_CPU] = 8000;
		b.req.v[MU_RES_MEM] = 64 * GI;
		b.req.v[MU_RES_GPU] = 1;
		rc = mu__vb_submit(&v, &b, now);
	}
	mu_bench_result_t *r = rc ? NULL : mu_bench_results_add(out, "gang-blocked");
	if (rc == MU_OK && !r)
		rc = MU_ENOMEM;
	if (rc == MU_OK)
		rc = mu__vb_measure(&v, &now, 3, 5, bg_arrive, &racks, r);
	if (rc == MU_OK) {
		r->nodes = nodes;
		r->gang_pods = pods;
		r->pending = (int64_t)gangs * pods;
		r->pods = r->pending + v.nrun;
		snprintf(r->level, sizeof r->level, "block");
	}
	mu__vb_release(&v);
	return rc;
}

/* --- classes -------------------------------------------------------------- */

/* Builds the classes state (pinned: one pod per node carries a hostname
 * selector, so each is its own class) and returns the peak RSS. */
static int classes_build(const mu_bench_opts_t *o, bool pinned, double *rss)
{
	int32_t nodes = (int32_t)mu__bench_size(o, 5000, 200);
	int64_t pods = mu__bench_size(o, 20000, 800);
	mu__vb_t v;
	int rc = mu__vb_init(&v, o);
	if (rc == MU_OK)
		rc = mu__vb_nodes(&v, nodes, 16000, 64 * GI, 110, NULL, 0);
	if (rc == MU_OK)
		rc = mu__bench_queue(v.e, "q", NULL);
	for (int64_t i = 0; rc == MU_OK && i < pods; i++) {
		char host[32];
		snprintf(host, sizeof host, "n%06d", (int)(i % nodes));
		mu__bench_job_t b = {.queue = "q", .replicas = 1};
		if (pinned && i < nodes) {
			b.sel_key = "kubernetes.io/hostname";
			b.sel_value = host;
		}
		b.req.v[MU_RES_CPU] = 500;
		b.req.v[MU_RES_MEM] = GI;
		rc = mu__vb_submit(&v, &b, 0);
		if (rc == MU_OK && (i + 1) % 2000 == 0)
			rc = mu__vb_cycle(&v, i, NULL);
	}
	for (int k = 0; rc == MU_OK && k < 3; k++)
		rc = mu__vb_cycle(&v, pods + k, NULL);
	*rss = mu__bench_rss_mb();
	mu__vb_release(&v);
	return rc;
}

/* classes_build() in a child process, for its own peak RSS. */
static int classes_forked(const mu_bench_opts_t *o, bool pinned, double *rss)
{
	int fds[2];
	if (pipe(fds) != 0)
		return MU_EIO;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return MU_EIO;
	}
	if (pid == 0) {
		close(fds[0]);
		double x = NAN;
		int rc = classes_build(o, pinned, &x);
		ssize_t w = write(fds[1], &x, sizeof x);
		_exit(rc == MU_OK && w == (ssize_t)sizeof x ? 0 : 1);
	}
	close(fds[1]);
	ssize_t got = read(fds[0], rss, sizeof *rss);
	close(fds[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		;
	return got == (ssize_t)sizeof *rss && WIFEXITED(st) && !WEXITSTATUS(st) ? MU_OK : MU_EIO;
}

int mu__bench_classes(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	double with = NAN, without = NAN;
	int rc = classes_forked(o, false, &without);
	if (rc == MU_OK)
		rc = classes_forked(o, true, &with);
	mu_bench_result_t *r = rc ? NULL : mu_bench_results_add(out, "classes");
	if (rc == MU_OK && !r)
		rc = MU_ENOMEM;
	if (rc == MU_OK) {
		r->nodes = (int32_t)mu__bench_size(o, 5000, 200);
		r->pods = mu__bench_size(o, 20000, 800);
		r->peak_rss_mb = with;
		r->rss_base_mb = without;
	}
	return rc;
}

/* --- openb-replay --------------------------------------------------------- */

/* A running job's expected departure. */
typedef struct dep {
	mu_time_t at;
	mu_id_t job;
} dep_t;

/* A binary min-heap of departures. */
typedef struct deps {
	dep_t *v;
	size_t n, cap;
} deps_t;

static int deps_push(deps_t *h, dep_t x)
{
	if (h->n == h->cap) {
		size_t ncap = h->cap ? h->cap * 2 : 1024;
		dep_t *nv = realloc(h->v, ncap * sizeof *nv);
		if (!nv)
			return MU_ENOMEM;
		h->v = nv;
		h->cap = ncap;
	}
	size_t i = h->n++;
	while (i && h->v[(i - 1) / 2].at > x.at) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = x;
	return MU_OK;
}

static dep_t deps_pop(deps_t *h)
{
	dep_t top = h->v[0], x = h->v[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1].at < h->v[c].at)
			c++;
		if (h->v[c].at >= x.at)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
	return top;
}

static int cmp_submit(const void *a, const void *b)
{
	const mu_job_spec_t *x = *(const mu_job_spec_t *const *)a;
	const mu_job_spec_t *y = *(const mu_job_spec_t *const *)b;
	return (x->submit > y->submit) - (x->submit < y->submit);
}

/* Replays the arrivals of specs (sorted) and their departures: one timed
 * cycle per arrival time.  Started jobs leave after their duration. */
static int replay(mu__vb_t *v, const mu_job_spec_t **jobs, size_t n,
		  mu__bench_samples_t *s)
{
	deps_t h = {0};
	const mu_job_spec_t **byid = calloc(n + 1, sizeof *byid); /* ids are dense */
	int rc = byid ? MU_OK : MU_ENOMEM;
	size_t i = 0;
	while (rc == MU_OK && i < n) {
		mu_time_t t = jobs[i]->submit;
		while (rc == MU_OK && h.n && h.v[0].at <= t)
			rc = mu_engine_job_finish(v->e, deps_pop(&h).job, t);
		for (; rc == MU_OK && i < n && jobs[i]->submit == t; i++) {
			mu_job_spec_t j = *jobs[i];
			j.queue = "q";
			mu_id_t id;
			double t0 = mu__bench_cpu_us();
			rc = mu_engine_job_submit(v->e, &j, t, &id);
			v->engine_us += mu__bench_cpu_us() - t0 - v->cost;
			if (rc == MU_OK && id >= 0 && (size_t)id <= n)
				byid[id] = jobs[i];
		}
		size_t before = (size_t)v->nrun;
		double us;
		rc = rc ? rc : mu__vb_cycle(v, t, &us);
		rc = rc ? rc : mu__bench_sample(s, us);
		for (size_t k = before; rc == MU_OK && k < (size_t)v->nrun; k++) {
			mu_id_t id = v->run[k];
			const mu_job_spec_t *sp = id >= 0 && (size_t)id <= n ? byid[id] : NULL;
			if (sp && sp->duration > 0)
				rc = deps_push(&h, (dep_t){t + sp->duration, id});
		}
		v->nrun = 0; /* departures are replayed from the trace */
	}
	free(h.v);
	free(byid);
	return rc;
}

int mu__bench_openb_replay(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	mu_specs_t specs;
	mu_specs_init(&specs);
	mu_bench_result_t *r = mu_bench_results_add(out, "openb-replay");
	if (!r)
		return MU_ENOMEM;
	if (!mu__bench_load_openb(o, true, &specs)) {
		snprintf(r->skipped, sizeof r->skipped, "openb data not found under %s",
			 o->data_dir ? o->data_dir : "(none)");
		mu_specs_release(&specs);
		return MU_OK;
	}
	size_t n = specs.njobs;
	if (o->quick && n > 600)
		n = 600;
	const mu_job_spec_t **jobs = calloc(specs.njobs, sizeof *jobs);
	mu__vb_t v;
	int rc = jobs ? mu__vb_init(&v, o) : MU_ENOMEM;
	if (rc != MU_OK) {
		free(jobs);
		mu_specs_release(&specs);
		return rc;
	}
	for (size_t i = 0; i < specs.njobs; i++)
		jobs[i] = &specs.jobs[i];
	qsort(jobs, specs.njobs, sizeof *jobs, cmp_submit);
	for (size_t i = 0; rc == MU_OK && i < specs.nnodes; i++)
		rc = mu_engine_node_upsert(v.e, &specs.nodes[i], NULL);
	if (rc == MU_OK)
		rc = mu__bench_queue(v.e, "q", NULL);
	mu__bench_samples_t s = {0};
	if (rc == MU_OK)
		rc = replay(&v, jobs, n, &s);
	if (rc == MU_OK) {
		snprintf(r->source, sizeof r->source, "openb");
		r->nodes = (int32_t)specs.nnodes;
		r->pods = (int64_t)n;
		r->placed = v.binds;
		r->decisions = v.real;
		r->decisions_per_s = s.sum > 0 ? (double)v.real / (s.sum / 1e6) : NAN;
		r->p50_us = mu__bench_quantile(&s, 0.5);
		r->p99_us = mu__bench_quantile(&s, 0.99);
		r->cycle_ms = r->p50_us / 1e3;
		r->cycle_p99_ms = r->p99_us / 1e3;
		r->engine_ms = v.engine_us / 1e3;
		r->peak_rss_mb = mu__bench_rss_mb();
	}
	mu__bench_samples_release(&s);
	mu__vb_release(&v);
	free(jobs);
	mu_specs_release(&specs);
	return rc;
}

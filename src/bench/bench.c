/*
 * bench.c - the placement shapes of `muster bench`: basic, basic-mixed and
 * gang-topology, and the helpers every shape uses (thread CPU clock,
 * quantiles, a seeded random stream, engine-building shortcuts).
 *
 * Every shape builds its cluster through the public engine API only, with
 * specs filled directly from include/muster/model.h, and times each
 * decision with the thread's CPU clock, minus the measured cost of reading
 * that clock.  `basic` submits one one-pod job and runs one cycle per pod;
 * `basic-mixed` does the same with pod shapes sampled from the openb trace
 * (or a built-in table of its most common shapes) on openb-shaped nodes,
 * dropping pods that fit nowhere as the FGD protocol does; `gang-topology`
 * submits gangs one at a time on a cluster kept at most 70% busy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "muster/load.h"
#include "bench/bench_int.h"

#define GI (1LL << 30)
#define MI (1LL << 20)

/* --- clock, samples, random ---------------------------------------------- */

double mu__bench_cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double mu__bench_clock_cost_us(void)
{
	double d[63];
	for (int i = 0; i < 63; i++) {
		double t0 = mu__bench_cpu_us();
		d[i] = mu__bench_cpu_us() - t0;
	}
	qsort(d, 63, sizeof *d, cmp_double);
	return d[31];
}

double mu__bench_rss_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
}

int mu__bench_sample(mu__bench_samples_t *s, double us)
{
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 1024;
		double *nv = realloc(s->v, ncap * sizeof *nv);
		if (!nv)
			return MU_ENOMEM;
		s->v = nv;
		s->cap = ncap;
	}
	us = us > 0 ? us : 0;
	s->v[s->n++] = us;
	s->sum += us;
	return MU_OK;
}

double mu__bench_quantile(mu__bench_samples_t *s, double q)
{
	if (s->n == 0)
		return NAN;
	qsort(s->v, s->n, sizeof *s->v, cmp_double);
	size_t i = (size_t)ceil(q * (double)s->n);
	return s->v[i ? i - 1 : 0];
}

void mu__bench_samples_release(mu__bench_samples_t *s)
{
	free(s->v);
	memset(s, 0, sizeof *s);
}

uint64_t mu__bench_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* --- engine helpers ------------------------------------------------------ */

int mu__bench_engine(uint64_t seed, mu_engine_t **out)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.seed = seed;
	return mu_engine_new(&cfg, out);
}

int mu__bench_queue(mu_engine_t *e, const char *name, const mu_res_t *deserved)
{
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = name;
	if (deserved)
		q.deserved = *deserved;
	return mu_engine_queue_upsert(e, &q);
}

int mu__bench_submit(mu_engine_t *e, const mu__bench_job_t *b, mu_time_t now,
		     mu_id_t *id)
{
	mu_label_t sel = {b->sel_key, b->sel_value};
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = b->replicas;
	ps.req = b->req;
	if (b->sel_key) {
		ps.node_selector = &sel;
		ps.nnode_selector = 1;
	}
	ps.gpu_models = (const char **)b->models;
	ps.ngpu_models = b->nmodels;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = b->name;
	j.queue = b->queue;
	j.priority = b->priority;
	j.type = MU_JOB_BATCH;
	j.preemptible = true;
	j.podsets = &ps;
	j.npodsets = 1;
	j.topo.required = b->required;
	j.submit = now;
	return mu_engine_job_submit(e, &j, now, id);
}

int64_t mu__bench_binds(const mu_decisions_t *d)
{
	int64_t n = 0;
	for (size_t i = 0; i < d->n; i++)
		n += d->v[i].kind == MU_DEC_BIND;
	return n;
}

/* Fills r's timing figures from per-decision samples. */
static void fill_timing(mu_bench_result_t *r, mu__bench_samples_t *s)
{
	r->decisions = (int64_t)s->n;
	r->decisions_per_s = s->sum > 0 ? (double)s->n / (s->sum / 1e6) : NAN;
	r->p50_us = mu__bench_quantile(s, 0.50);
	r->p99_us = mu__bench_quantile(s, 0.99);
	r->peak_rss_mb = mu__bench_rss_mb();
}

/* --- a stream of one-pod jobs, one cycle each ---------------------------- */

/* A pod shape of a stream; models point at static or specs memory. */
typedef struct pod_shape {
	mu_res_t req;
	const char *const *models;
	size_t nmodels;
} pod_shape_t;

/* Where a stream takes its pods from: shape i of n (picked by pick). */
typedef struct stream {
	const pod_shape_t *(*pick)(void *ctx, int64_t i);
	void *ctx;
	int64_t max_pods;
	int64_t gpu_milli_cap; /* stop once the GPU request reaches it; 0 none */
	bool drop_unplaced;    /* delete a job that did not fit */
} stream_t;

/* Submits the stream's pods one at a time into queue "q" and times each
 * one's cycle (the submit is timed apart, into r->submit_us).  Fills the
 * timing figures of r.  Work: pods x one cycle. */
static int run_stream(mu_engine_t *e, const stream_t *st, mu_bench_result_t *r)
{
	mu__bench_samples_t s = {0};
	mu_decisions_t d;
	mu_decisions_init(&d);
	double cost = mu__bench_clock_cost_us(), submit = 0;
	int64_t milli = 0, placed = 0, i;
	int rc = MU_OK;
	for (i = 0; rc == MU_OK && i < st->max_pods; i++) {
		const pod_shape_t *p = st->pick(st->ctx, i);
		int64_t gm = p->req.v[MU_RES_GPU] * 1000 + p->req.v[MU_RES_GPU_MILLI];
		if (st->gpu_milli_cap && milli + gm > st->gpu_milli_cap)
			break;
		milli += gm;
		char name[32];
		snprintf(name, sizeof name, "p%07lld", (long long)i);
		mu__bench_job_t b = {.name = name, .queue = "q", .replicas = 1,
				     .req = p->req, .models = p->models,
				     .nmodels = p->nmodels};
		mu_id_t id;
		double t0 = mu__bench_cpu_us();
		rc = mu__bench_submit(e, &b, i, &id);
		double t1 = mu__bench_cpu_us();
		d.n = 0;
		if (rc == MU_OK)
			rc = mu_engine_cycle(e, i, &d);
		double t2 = mu__bench_cpu_us();
		submit += t1 - t0 - cost;
		if (rc == MU_OK)
			rc = mu__bench_sample(&s, t2 - t1 - cost);
		int64_t b1 = mu__bench_binds(&d);
		placed += b1;
		if (rc == MU_OK && !b1 && st->drop_unplaced)
			rc = mu_engine_job_finish(e, id, i);
	}
	if (rc == MU_OK) {
		fill_timing(r, &s);
		r->pods = i;
		r->placed = placed;
		r->submit_us = i ? submit / (double)i : NAN;
	}
	mu__bench_samples_release(&s);
	mu_decisions_release(&d);
	return rc;
}

/* --- basic ---------------------------------------------------------------- */

static const pod_shape_t *pick_basic(void *ctx, int64_t i)
{
	(void)i;
	return ctx;
}

int mu__bench_basic(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	int32_t nodes = o->quick ? 200 : 5000;
	mu_engine_t *e;
	int rc = mu__bench_engine(o->seed, &e);
	if (rc)
		return rc;
	for (int32_t i = 0; rc == MU_OK && i < nodes; i++) {
		char name[32];
		snprintf(name, sizeof name, "n%05d", i);
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		n.name = name;
		n.alloc.v[MU_RES_CPU] = 4000;
		n.alloc.v[MU_RES_MEM] = 32 * GI;
		n.alloc.v[MU_RES_PODS] = 110;
		rc = mu_engine_node_upsert(e, &n, NULL);
	}
	if (rc == MU_OK)
		rc = mu__bench_queue(e, "q", NULL);
	pod_shape_t pod = {.req = {{[MU_RES_CPU] = 100, [MU_RES_MEM] = 500 * MI}}};
	stream_t st = {pick_basic, &pod, o->quick ? 2000 : 50000, 0, false};
	mu_bench_result_t *r = rc ? NULL : mu_bench_results_add(out, "basic");
	if (rc == MU_OK && !r)
		rc = MU_ENOMEM;
	if (rc == MU_OK) {
		r->nodes = nodes;
		rc = run_stream(e, &st, r);
	}
	mu_engine_free(e);
	return rc;
}

/* --- basic-mixed ---------------------------------------------------------- */

/* openb-like node and pod shapes: the most common rows of openb's node
 * list (all nodes) and default pod list, weighted by their counts. */
typedef struct node_row {
	int64_t cpu, mib;
	int32_t gpus;
	const char *model;
	int32_t weight;
} node_row_t;

static const node_row_t builtin_nodes[] = {
	{96000, 393216, 8, "G2", 549},      {104000, 524288, 2, "T4", 387},
	{32000, 262144, 0, NULL, 129},      {16000, 122880, 2, "P100", 107},
	{96000, 524288, 0, NULL, 59},       {128000, 786432, 8, "G3", 39},
	{96000, 393216, 0, NULL, 30},       {32000, 131072, 4, "V100M16", 28},
	{96000, 786432, 8, "V100M32", 21},  {96000, 393216, 4, "T4", 17},
};

typedef struct pod_row {
	int64_t cpu, mib;
	int32_t gpus, milli; /* milli: a share of one GPU when gpus is 0 */
	int32_t weight;
} pod_row_t;

static const pod_row_t builtin_pods[] = {
	{3152, 5600, 0, 810, 1047},   {11300, 49152, 1, 0, 857},
	{11400, 48128, 1, 0, 534},    {3152, 5600, 1, 0, 470},
	{11908, 47104, 0, 470, 388},  {12500, 57344, 0, 0, 364},
	{8000, 30517, 0, 470, 360},   {32000, 49152, 0, 0, 284},
	{18708, 64512, 1, 0, 255},    {11908, 47104, 0, 650, 237},
	{9810, 41560, 1, 0, 195},     {8000, 30517, 0, 0, 163},
	{12000, 24576, 1, 0, 158},    {4000, 22888, 0, 320, 111},
	{88000, 327680, 8, 0, 44},    {16200, 66560, 2, 0, 16},
	{32200, 132096, 4, 0, 15},
};

/* The pods to sample from: pod shapes with cumulative weights. */
typedef struct mixed {
	pod_shape_t *shapes;
	int64_t *cum;        /* cumulative weights */
	int32_t n;
	uint64_t rng;
} mixed_t;

static const pod_shape_t *pick_mixed(void *ctx, int64_t i)
{
	(void)i;
	mixed_t *m = ctx;
	int64_t x = (int64_t)(mu__bench_rand(&m->rng) % (uint64_t)m->cum[m->n - 1]);
	int32_t lo = 0, hi = m->n - 1;
	while (lo < hi) { /* first cum > x */
		int32_t mid = (lo + hi) / 2;
		if (m->cum[mid] > x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return &m->shapes[lo];
}

/* Fills m from the openb pod list in specs, or the built-in table when
 * specs is NULL.  Shapes point into specs, which must outlive m. */
static int mixed_pods(mixed_t *m, const mu_specs_t *specs)
{
	size_t n = specs ? specs->njobs : sizeof builtin_pods / sizeof *builtin_pods;
	m->shapes = calloc(n ? n : 1, sizeof *m->shapes);
	m->cum = calloc(n ? n : 1, sizeof *m->cum);
	if (!m->shapes || !m->cum)
		return MU_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		pod_shape_t *p = &m->shapes[i];
		if (specs) {
			const mu_podset_spec_t *ps = &specs->jobs[i].podsets[0];
			p->req = ps->req;
			p->models = (const char *const *)ps->gpu_models;
			p->nmodels = ps->ngpu_models;
		} else {
			const pod_row_t *b = &builtin_pods[i];
			p->req.v[MU_RES_CPU] = b->cpu;
			p->req.v[MU_RES_MEM] = b->mib * MI;
			p->req.v[MU_RES_GPU] = b->gpus;
			p->req.v[MU_RES_GPU_MILLI] = b->milli;
			p->req.v[MU_RES_PODS] = 1;
		}
		m->cum[i] = (i ? m->cum[i - 1] : 0) + (specs ? 1 : builtin_pods[i].weight);
	}
	m->n = (int32_t)n;
	return n ? MU_OK : MU_EINVAL;
}

/* Adds `nodes` nodes drawn from the openb node list in specs (or the
 * built-in rows, weighted); returns the cluster's GPUs in milli-GPU in
 * *gpu_milli. */
static int mixed_nodes(mu_engine_t *e, const mu_specs_t *specs, int32_t nodes,
		       uint64_t *rng, int64_t *gpu_milli)
{
	int64_t wsum = 0;
	for (size_t i = 0; i < sizeof builtin_nodes / sizeof *builtin_nodes; i++)
		wsum += builtin_nodes[i].weight;
	*gpu_milli = 0;
	int rc = MU_OK;
	for (int32_t i = 0; rc == MU_OK && i < nodes; i++) {
		char name[32];
		snprintf(name, sizeof name, "m%05d", i);
		mu_node_spec_t n;
		mu_label_t label;
		if (specs) {
			n = specs->nodes[mu__bench_rand(rng) % specs->nnodes];
		} else {
			int64_t x = (int64_t)(mu__bench_rand(rng) % (uint64_t)wsum);
			size_t k = 0;
			while (x >= builtin_nodes[k].weight)
				x -= builtin_nodes[k++].weight;
			const node_row_t *b = &builtin_nodes[k];
			memset(&n, 0, sizeof n);
			n.alloc.v[MU_RES_CPU] = b->cpu;
			n.alloc.v[MU_RES_MEM] = b->mib * MI;
			n.alloc.v[MU_RES_GPU] = b->gpus;
			n.alloc.v[MU_RES_PODS] = 110;
			n.gpu_model = b->model;
			label = (mu_label_t){"nvidia.com/gpu.product", b->model};
			n.labels = b->model ? &label : NULL;
			n.nlabels = b->model ? 1 : 0;
		}
		n.name = name;
		*gpu_milli += n.alloc.v[MU_RES_GPU] * 1000;
		rc = mu_engine_node_upsert(e, &n, NULL);
	}
	return rc;
}

/* Loads the openb node and pod lists from o->data_dir into specs; false
 * when either is missing or unreadable (the built-in tables are used). */
static bool load_openb(const mu_bench_opts_t *o, mu_specs_t *specs)
{
	if (!o->data_dir)
		return false;
	static const char *const files[] = {"openb/openb_node_list_all_node.csv",
					    "openb/openb_pod_list_default.csv"};
	for (size_t i = 0; i < 2; i++) {
		char path[4096];
		mu_diag_t diag;
		snprintf(path, sizeof path, "%s/%s", o->data_dir, files[i]);
		if (mu_load_file(path, NULL, specs, &diag) != MU_OK)
			return false;
	}
	for (size_t i = 0; i < specs->njobs; i++)
		if (specs->jobs[i].npodsets != 1)
			return false;
	return specs->nnodes > 0 && specs->njobs > 0;
}

int mu__bench_basic_mixed(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	int32_t nodes = o->quick ? 200 : 5000;
	mu_specs_t specs;
	mu_specs_init(&specs);
	bool openb = load_openb(o, &specs);
	mixed_t m = {.rng = o->seed ^ 0x6d69786564ULL};
	uint64_t rng = o->seed;
	int64_t gpu_milli = 0;
	mu_engine_t *e = NULL;
	int rc = mixed_pods(&m, openb ? &specs : NULL);
	if (rc == MU_OK)
		rc = mu__bench_engine(o->seed, &e);
	if (rc == MU_OK)
		rc = mixed_nodes(e, openb ? &specs : NULL, nodes, &rng, &gpu_milli);
	if (rc == MU_OK)
		rc = mu__bench_queue(e, "q", NULL);
	stream_t st = {pick_mixed, &m, o->quick ? 2000 : 50000, gpu_milli, true};
	mu_bench_result_t *r = rc ? NULL : mu_bench_results_add(out, "basic-mixed");
	if (rc == MU_OK && !r)
		rc = MU_ENOMEM;
	if (rc == MU_OK) {
		r->nodes = nodes;
		snprintf(r->source, sizeof r->source, "%s", openb ? "openb" : "builtin");
		rc = run_stream(e, &st, r);
	}
	mu_engine_free(e);
	free(m.shapes);
	free(m.cum);
	mu_specs_release(&specs);
	return rc;
}

/* --- gang-topology ------------------------------------------------------- */

/* 8-GPU nodes in racks of 32 and blocks of 512, topology "net". */
static int gang_cluster(uint64_t seed, int32_t nodes, mu_engine_t **out)
{
	int rc = mu__bench_engine(seed, out);
	mu_engine_t *e = *out;
	static const char *levels[] = {"block", "rack"};
	mu_topology_spec_t t = {"net", levels, 2};
	if (rc == MU_OK)
		rc = mu_engine_topology_upsert(e, &t);
	for (int32_t i = 0; rc == MU_OK && i < nodes; i++) {
		char name[32], rack[32], block[32];
		snprintf(name, sizeof name, "g%05d", i);
		snprintf(rack, sizeof rack, "r%d", i / 32);
		snprintf(block, sizeof block, "b%d", i / 512);
		mu_label_t labels[] = {{"block", block}, {"rack", rack}};
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		n.name = name;
		n.labels = labels;
		n.nlabels = 2;
		n.alloc.v[MU_RES_CPU] = 128000;
		n.alloc.v[MU_RES_MEM] = 1024 * GI;
		n.alloc.v[MU_RES_GPU] = 8;
		n.alloc.v[MU_RES_PODS] = 110;
		rc = mu_engine_node_upsert(e, &n, NULL);
	}
	return rc == MU_OK ? mu__bench_queue(e, "q", NULL) : rc;
}

/* State of one gang size's run: the gangs alive, oldest first. */
typedef struct gang_run {
	mu_engine_t *e;
	int32_t pods;
	const char *level;
	mu_id_t *live;
	int32_t nlive, oldest;
	int64_t busy, cap; /* GPUs */
	mu_decisions_t d;  /* reused: its growth is not timed */
} gang_run_t;

/* Submits gang i and runs its cycle; *us gets the cycle's CPU time, and
 * *placed whether all its pods were bound (else it is deleted).  Before
 * that, the oldest gangs finish until the new one fits in 70%. */
static int gang_round(gang_run_t *g, int32_t i, double cost, double *us,
		      bool *placed)
{
	while (g->busy + g->pods * 8 > g->cap * 7 / 10 && g->oldest < g->nlive) {
		int rc = mu_engine_job_finish(g->e, g->live[g->oldest++], i);
		if (rc)
			return rc;
		g->busy -= g->pods * 8;
	}
	char name[32];
	snprintf(name, sizeof name, "gang%06d", i);
	mu__bench_job_t b = {.name = name, .queue = "q", .replicas = g->pods,
			     .req = {{[MU_RES_CPU] = 8000, [MU_RES_MEM] = 64 * GI,
				      [MU_RES_GPU] = 8}},
			     .required = g->level};
	mu_id_t id;
	int rc = mu__bench_submit(g->e, &b, i, &id);
	g->d.n = 0;
	double t0 = mu__bench_cpu_us();
	if (rc == MU_OK)
		rc = mu_engine_cycle(g->e, i, &g->d);
	*us = mu__bench_cpu_us() - t0 - cost;
	*placed = mu__bench_binds(&g->d) == g->pods;
	if (rc == MU_OK && *placed) {
		g->live[g->nlive++] = id;
		g->busy += g->pods * 8;
	} else if (rc == MU_OK) {
		rc = mu_engine_job_finish(g->e, id, i);
	}
	return rc;
}

/* One gang size: a fresh cluster, one untimed warm-up gang (the class and
 * topology caches are built then), `rounds` timed gangs. */
static int gang_size(const mu_bench_opts_t *o, int32_t nodes, int32_t pods,
		     int32_t rounds, mu_bench_result_t *r)
{
	gang_run_t g = {.pods = pods, .level = pods <= 32 ? "rack" : "block",
			.cap = (int64_t)nodes * 8};
	mu__bench_samples_t s = {0};
	g.live = calloc((size_t)rounds + 1, sizeof *g.live);
	int rc = g.live ? gang_cluster(o->seed, nodes, &g.e) : MU_ENOMEM;
	double cost = mu__bench_clock_cost_us(), us;
	bool placed;
	int64_t nplaced = 0;
	if (rc == MU_OK)
		rc = gang_round(&g, 0, cost, &us, &placed);
	for (int32_t i = 1; rc == MU_OK && i <= rounds; i++) {
		rc = gang_round(&g, i, cost, &us, &placed);
		if (rc == MU_OK)
			rc = mu__bench_sample(&s, us);
		nplaced += placed;
	}
	if (rc == MU_OK) {
		fill_timing(r, &s);
		r->nodes = nodes;
		r->pods = (int64_t)pods * rounds;
		r->gang_pods = pods;
		r->placed = nplaced;
		snprintf(r->level, sizeof r->level, "%s", g.level);
	}
	mu__bench_samples_release(&s);
	mu_decisions_release(&g.d);
	mu_engine_free(g.e);
	free(g.live);
	return rc;
}

int mu__bench_gang(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	static const int32_t full[] = {8, 16, 32, 64, 128, 256, 512};
	static const int32_t quick[] = {8, 64, 512};
	const int32_t *sizes = o->quick ? quick : full;
	size_t n = o->quick ? sizeof quick / sizeof *quick : sizeof full / sizeof *full;
	int rc = MU_OK;
	for (size_t i = 0; rc == MU_OK && i < n; i++) {
		mu_bench_result_t *r = mu_bench_results_add(out, "gang-topology");
		if (!r)
			return MU_ENOMEM;
		rc = gang_size(o, o->quick ? 1024 : 5000, sizes[i],
			       o->quick ? 6 : 200, r);
	}
	return rc;
}

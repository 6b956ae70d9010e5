/*
 * eval_philly.c - the Philly evaluations behind `muster eval philly`
 * (protocol in include/muster/eval_philly.h and docs/evaluation.md).
 *
 * From a whole Philly load, mu_philly_pick() finds the busiest window with
 * a sliding sum over the jobs sorted by submit time; mu_philly_size() sizes
 * the cluster and the arrival scaling; mu_philly_build() copies the
 * window's jobs into a fresh spec set with one queue and generated nodes.
 * Each run sets the jobs' declared estimates, maps its policy to an engine
 * config, runs the simulator and reduces the result to the figures of the
 * two experiments (utilization while jobs arrive, waits of large and
 * 1-GPU jobs, JCT, preemptions).  The writers live in
 * eval_philly_report.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "muster/eval_philly.h"
#include "muster/util.h"

#define SEC 1000LL
#define HOUR (3600 * SEC)
#define GIB (1LL << 30)
#define EVP_MAX_NODES 100000
#define EVP_SAMPLES 2000 /* utilization samples over the arrival window */

/* --- Policies ---------------------------------------------------------------- */

static const char *const evp_names[MU_PHILLY_NPOLICIES] = {
	"fifo", "greedy", "easy", "muster", "sjf", "tiresias", "muster-arrival",
};

static const char *const evp_labels[MU_PHILLY_NPOLICIES] = {
	"FIFO", "priority, no reservations", "EASY backfill", "muster default",
	"SJF (known durations)", "Tiresias (2D-LAS)", "muster, arrival order",
};

const char *mu_philly_policy_name(mu_philly_policy_t p)
{
	return p >= 0 && p < MU_PHILLY_NPOLICIES ? evp_names[p] : NULL;
}

const char *mu_philly_policy_label(mu_philly_policy_t p)
{
	return p >= 0 && p < MU_PHILLY_NPOLICIES ? evp_labels[p] : NULL;
}

/* Every policy starts from the defaults (binpack, preemption and reclaim
 * on, 60 s minimum runtime).  With one queue and equal priorities,
 * preemption acts only where a policy makes it: a reserved job evicting
 * a preemptible job that started in its reservation's hole, consolidation
 * moves, and LAS levels.  Baselines have no consolidation. */
int mu_philly_policy_config(mu_philly_policy_t p, mu_engine_config_t *cfg)
{
	mu_engine_config_defaults(cfg);
	if (p != MU_PHILLY_MUSTER)
		cfg->order = MU_ORDER_PRIORITY; /* baselines set their own order */
	switch (p) {
	case MU_PHILLY_FIFO:
		cfg->backfill = MU_BACKFILL_NONE;
		cfg->consolidate = false;
		break;
	case MU_PHILLY_GREEDY:
		cfg->backfill = MU_BACKFILL_GREEDY;
		cfg->consolidate = false;
		break;
	case MU_PHILLY_EASY:
		cfg->backfill = MU_BACKFILL_RESERVE;
		cfg->reservations = 1;
		cfg->consolidate = false;
		break;
	case MU_PHILLY_MUSTER:
		break;
	case MU_PHILLY_ARRIVAL:
		cfg->order = MU_ORDER_PRIORITY;
		break;
	case MU_PHILLY_SJF:
		cfg->order = MU_ORDER_SJF;
		cfg->backfill = MU_BACKFILL_GREEDY;
		cfg->consolidate = false;
		break;
	case MU_PHILLY_TIRESIAS:
		cfg->order = MU_ORDER_LAS;
		cfg->las_base_gpu_hours = 1;
		cfg->preemption = true;
		cfg->backfill = MU_BACKFILL_GREEDY;
		cfg->consolidate = false;
		break;
	default:
		return MU_EINVAL;
	}
	return MU_OK;
}

void mu_philly_opts_defaults(mu_philly_opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->days = 7;
	o->load = 0.9;
	o->cap = 48 * HOUR;
	o->step = HOUR;
	o->from_s = -1;
	o->checkpoint_cost = 30 * SEC;
	o->gpus_per_node = 8;
	o->seed = 1;
}

void mu_philly_opts_quick(mu_philly_opts_t *o)
{
	mu_philly_opts_defaults(o);
	o->days = 0.25;
	o->cap = 6 * HOUR;
}

/* --- Window and cluster ---------------------------------------------------- */

/* Whole GPUs of a job (shares of one GPU count as their fraction, rounded
 * down). */
static int64_t job_gpus(const mu_job_spec_t *j)
{
	int64_t milli = 0;
	for (size_t p = 0; p < j->npodsets; p++) {
		mu_res_t a = mu_res_acct(&j->podsets[p].req);
		milli += a.v[MU_RES_GPU] * j->podsets[p].replicas;
	}
	return milli / 1000;
}

static mu_time_t capped(mu_time_t d, mu_time_t cap)
{
	return cap > 0 && d > cap ? cap : d;
}

/* a + b for non-negative values, saturating at INT64_MAX. */
static int64_t sat_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* GPU-ms of a job, saturating. */
static int64_t job_work(const mu_job_spec_t *j, mu_time_t cap)
{
	int64_t g = job_gpus(j), d = capped(j->duration, cap);
	if (g <= 0 || d <= 0)
		return 0;
	return d > INT64_MAX / g ? INT64_MAX : g * d;
}

typedef struct evp_arrival {
	mu_time_t t;
	int64_t work;
} evp_arrival_t;

static int cmp_arrival(const void *a, const void *b)
{
	const evp_arrival_t *x = a, *y = b;
	return (x->t > y->t) - (x->t < y->t);
}

/* The best start over the sorted arrivals and their prefix sums of work:
 * two cursors slide with the candidate start.  O(n + candidates). */
static mu_time_t pick_best(const evp_arrival_t *a, const int64_t *pre, size_t n,
			   mu_time_t span, mu_time_t step, int64_t *work)
{
	mu_time_t last = n ? a[n - 1].t : 0, best = 0;
	int64_t kmax = last > span ? (last - span) / step : 0;
	size_t lo = 0, hi = 0;
	*work = -1;
	for (int64_t k = 0; k <= kmax; k++) {
		mu_time_t s = k * step;
		while (lo < n && a[lo].t < s)
			lo++;
		while (hi < n && a[hi].t < s + span)
			hi++;
		int64_t w = pre[hi] - pre[lo];
		if (w > *work) {
			*work = w;
			best = s;
		}
	}
	return best;
}

int mu_philly_pick(const mu_specs_t *all, mu_time_t span, mu_time_t step,
		   mu_time_t cap, mu_time_t *start, int64_t *work)
{
	if (span <= 0 || step <= 0)
		return MU_EINVAL;
	size_t n = all->njobs;
	evp_arrival_t *a = malloc((n ? n : 1) * sizeof *a);
	int64_t *pre = malloc((n + 1) * sizeof *pre);
	if (!a || !pre) {
		free(a);
		free(pre);
		return MU_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = (evp_arrival_t){all->jobs[i].submit, job_work(&all->jobs[i], cap)};
	qsort(a, n, sizeof *a, cmp_arrival);
	pre[0] = 0;
	for (size_t i = 0; i < n; i++)
		pre[i + 1] = sat_add(pre[i], a[i].work);
	*start = pick_best(a, pre, n, span, step, work);
	free(a);
	free(pre);
	return MU_OK;
}

void mu_philly_size(int64_t work, mu_time_t span, double load, int32_t gpn,
		    int32_t min_nodes, int32_t *nodes, double *scale)
{
	double n = 0;
	gpn = gpn > 0 ? gpn : 1;
	if (work > 0 && span > 0 && load > 0)
		n = round((double)work / ((double)span * load) / gpn);
	if (n < min_nodes)
		n = min_nodes;
	if (n < 1)
		n = 1;
	if (n > EVP_MAX_NODES)
		n = EVP_MAX_NODES;
	*nodes = (int32_t)n;
	*scale = 1;
	if (work > 0 && span > 0 && load > 0)
		*scale = (double)work / ((double)span * n * gpn * load);
}

/* Appends n nodes "gpu-NNN" of gpn GPUs, 8 CPUs and 64 GiB per GPU; the
 * names live in sp's arena.  O(n). */
static int add_nodes(mu_specs_t *sp, int32_t n, int32_t gpn)
{
	for (int32_t i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "gpu-%03d", (int)i);
		char *nm = mu_arena_strdup(&sp->arena, name);
		mu_node_spec_t *node = nm ? mu_specs_add_node(sp) : NULL;
		if (!node)
			return MU_ENOMEM;
		node->name = nm;
		node->alloc.v[MU_RES_CPU] = 8000LL * gpn;
		node->alloc.v[MU_RES_MEM] = 64 * GIB * gpn;
		node->alloc.v[MU_RES_GPU] = gpn;
		node->alloc.v[MU_RES_PODS] = 110;
	}
	return MU_OK;
}

/* Counts the jobs of `all` submitted in [from, to) into w (jobs, capped,
 * sizes, work).  O(jobs). */
static void window_stats(const mu_specs_t *all, mu_time_t from, mu_time_t to,
			 mu_time_t cap, mu_philly_window_t *w)
{
	for (size_t i = 0; i < all->njobs; i++) {
		const mu_job_spec_t *j = &all->jobs[i];
		if (j->submit < from || j->submit >= to)
			continue;
		int64_t g = job_gpus(j);
		w->jobs++;
		w->capped += cap > 0 && j->duration > cap;
		w->large_jobs += g >= MU_PHILLY_LARGE_GPUS;
		w->one_gpu_jobs += g == 1;
		if (g > w->max_gpus)
			w->max_gpus = (int32_t)(g < INT32_MAX ? g : INT32_MAX);
		w->work = sat_add(w->work, job_work(j, cap));
		w->raw_work = sat_add(w->raw_work, job_work(j, 0));
	}
}

/* Copies the window's jobs into sp: one queue, submit times from the
 * window's start times the scale, durations capped (and at least 1 ms:
 * the simulator runs a 0 forever), no estimates.  Names
 * and pod sets stay shared with `all` (which must outlive sp).  O(jobs). */
static int copy_jobs(const mu_specs_t *all, mu_time_t from, mu_time_t to,
		     mu_time_t cap, double scale, mu_specs_t *sp)
{
	char *qname = mu_arena_strdup(&sp->arena, "philly");
	mu_queue_spec_t *q = qname ? mu_specs_add_queue(sp) : NULL;
	if (!q)
		return MU_ENOMEM;
	q->name = qname;
	for (size_t i = 0; i < all->njobs; i++) {
		const mu_job_spec_t *src = &all->jobs[i];
		if (src->submit < from || src->submit >= to)
			continue;
		mu_job_spec_t *j = mu_specs_add_job(sp);
		if (!j)
			return MU_ENOMEM;
		*j = *src;
		j->queue = qname;
		j->submit = llround((double)(src->submit - from) * scale);
		j->duration = capped(src->duration, cap);
		j->duration = j->duration > 0 ? j->duration : 1; /* 0: forever */
		j->runtime_estimate = 0;
		j->runtime_limit = 0;
	}
	return MU_OK;
}

int mu_philly_build(const mu_specs_t *all, const mu_philly_opts_t *o,
		    mu_specs_t *out, mu_philly_window_t *w, mu_diag_t *diag)
{
	memset(w, 0, sizeof *w);
	mu_time_t span = llround(o->days * 86400.0 * SEC), from;
	int32_t gpn = o->gpus_per_node > 0 ? o->gpus_per_node : 8;
	int64_t work;
	if (span <= 0 || !(o->load > 0))
		return mu__diag(diag, MU_EINVAL, "options", 0, 0,
				"the window and the load must be positive");
	if (o->from_s >= 0) {
		from = o->from_s * SEC;
	} else {
		int rc = mu_philly_pick(all, span, o->step > 0 ? o->step : HOUR,
					o->cap, &from, &work);
		if (rc)
			return mu__diag(diag, rc, "window", 0, 0, "%s", mu_strerror(rc));
	}
	w->from_s = from / SEC;
	w->to_s = (from + span) / SEC;
	window_stats(all, from, from + span, o->cap, w);
	if (w->jobs == 0)
		return mu__diag(diag, MU_EINVAL, "window", 0, 0,
				"no job with GPUs was submitted from %.1f h to %.1f h "
				"after the trace's first row", w->from_s / 3600.0,
				w->to_s / 3600.0);
	mu_philly_size(w->work, span, o->load, gpn,
		       (int32_t)((w->max_gpus + gpn - 1) / gpn), &w->nodes, &w->scale);
	w->gpus = (int64_t)w->nodes * gpn;
	w->offered_raw = (double)w->work / ((double)span * (double)w->gpus);
	w->span = llround((double)span * w->scale);
	w->offered = w->span > 0 ? (double)w->work / ((double)w->span * (double)w->gpus) : 0;
	int rc = add_nodes(out, w->nodes, gpn);
	if (rc == MU_OK)
		rc = copy_jobs(all, from, from + span, o->cap, w->scale, out);
	if (rc == MU_OK)
		rc = mu_specs_validate(out, diag);
	if (rc && diag && !diag->msg[0])
		mu__diag(diag, rc, "workload", 0, 0, "%s", mu_strerror(rc));
	return rc;
}

/* --- Runs ------------------------------------------------------------------ */

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts c->waits[0..started) and fills the means (jct_mean_s holds the
 * sum of JCTs until here) and percentiles. */
static void class_finish(mu_philly_class_t *c)
{
	double sum = 0;
	size_t n = (size_t)c->started;
	if (n > 1)
		qsort(c->waits, n, sizeof *c->waits, cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += c->waits[i];
	c->mean_s = n ? sum / (double)n : 0;
	c->jct_mean_s = c->completed ? c->jct_mean_s / (double)c->completed : 0;
	c->p50_s = mu_percentile(c->waits, n, 50);
	c->p99_s = mu_percentile(c->waits, n, 99);
}

/* The waits of large and 1-GPU jobs, and jobs preempted.  The class
 * arrays are allocated here, owned by out.  O(jobs log jobs). */
static int reduce_jobs(const mu_sim_result_t *r, mu_philly_run_t *out)
{
	size_t n = r->njobs ? r->njobs : 1;
	out->large.waits = malloc(n * sizeof(double));
	out->one.waits = malloc(n * sizeof(double));
	if (!out->large.waits || !out->one.waits)
		return MU_ENOMEM;
	for (size_t i = 0; i < r->njobs; i++) {
		const mu_sim_job_t *j = &r->jobs[i];
		int64_t g = j->gpu_milli / 1000;
		mu_philly_class_t *c = g >= MU_PHILLY_LARGE_GPUS ? &out->large :
				       g == 1 ? &out->one : NULL;
		out->jobs_preempted += j->preemptions > 0;
		if (!c)
			continue;
		c->n++;
		if (j->start_s >= 0)
			c->waits[c->started++] = j->start_s - j->submit_s;
		if (j->end_s >= 0) {
			c->jct_mean_s += j->end_s - j->submit_s; /* a sum until finish */
			c->completed++;
		}
	}
	class_finish(&out->large);
	class_finish(&out->one);
	return MU_OK;
}

/* Mean utilization of the samples inside the arrival window, which ends
 * at span on the specs' clock (the result counts from t_first); the
 * whole run's figure when no sample falls in it.  O(samples). */
static double window_util(const mu_sim_result_t *r, mu_time_t span, mu_time_t t_first)
{
	double end_s = (double)(span - t_first) / SEC, sum = 0;
	size_t n = 0;
	for (size_t i = 0; i < r->nsamples && r->samples[i].t_s < end_s; i++, n++)
		sum += r->samples[i].gpu_util;
	return n ? sum / (double)n : r->summary.gpu_utilization;
}

/* Reduces a finished simulation (the caller's) into out, which gets the
 * class arrays.  O(jobs log jobs). */
static int reduce(const mu_sim_result_t *r, const mu_specs_t *sp,
		  const mu_philly_window_t *w, mu_philly_run_t *out)
{
	const mu_sim_summary_t *s = &r->summary;
	mu_time_t t_first = INT64_MAX;
	for (size_t i = 0; i < sp->njobs; i++)
		if (sp->jobs[i].submit < t_first)
			t_first = sp->jobs[i].submit;
	out->util_window = window_util(r, w->span, sp->njobs ? t_first : 0);
	out->util_run = s->gpu_utilization;
	out->makespan_s = s->makespan_s;
	out->jobs = s->jobs;
	out->completed = s->completed;
	out->wait_mean_s = s->avg_wait_s;
	out->wait_p99_s = s->p99_wait_s;
	out->jct_mean_s = s->avg_jct_s;
	out->jct_p50_s = s->p50_jct_s;
	out->jct_p99_s = s->p99_jct_s;
	out->preemptions = s->preemptions;
	out->moves = s->moves;
	out->cycles = s->cycles;
	out->engine_s = s->engine_s;
	return reduce_jobs(r, out);
}

/* Forwards the simulator's progress with the run's place and label. */
typedef struct evp_prog {
	const mu_philly_opts_t *o;
	size_t i, n;
	char label[96];
} evp_prog_t;

static void prog_fwd(void *ctx, double frac)
{
	const evp_prog_t *p = ctx;
	p->o->progress(p->o->progress_ctx, p->i, p->n, p->label, frac);
}

/* One run, as run i of n for progress: sets sp's estimates, simulates,
 * reduces.  The simulator's result is released here; out's arrays are
 * the caller's (mu_philly_run_release), also on error.  O(simulation). */
static int run_one(mu_specs_t *sp, const mu_philly_window_t *w,
		   const mu_philly_opts_t *o, mu_philly_policy_t p, bool declared,
		   double base, size_t i, size_t n, mu_philly_run_t *out, mu_diag_t *diag)
{
	memset(out, 0, sizeof *out);
	out->policy = p;
	out->declared = declared;
	mu_sim_config_t sc;
	mu_sim_config_defaults(&sc);
	if (mu_philly_policy_config(p, &sc.engine) != MU_OK)
		return mu__diag(diag, MU_EINVAL, "policy", 0, 0, "unknown policy %d", (int)p);
	if (base > 0)
		sc.engine.jct_base_gpu_hours = base;
	out->jct_base_gpu_hours = sc.engine.jct_base_gpu_hours;
	sc.seed = o->seed;
	sc.checkpoint_cost = o->checkpoint_cost;
	sc.sample_interval = w->span / EVP_SAMPLES > SEC ? w->span / EVP_SAMPLES : SEC;
	evp_prog_t pg = {.o = o, .i = i, .n = n};
	if (base > 0)
		snprintf(pg.label, sizeof pg.label, "%s, levels from %g GPU-hours",
			 mu_philly_policy_label(p), base);
	else
		snprintf(pg.label, sizeof pg.label, "%s, %s", mu_philly_policy_label(p),
			 declared ? "declared durations" : "history estimates");
	if (o->progress) {
		sc.progress = prog_fwd;
		sc.progress_ctx = &pg;
	}
	for (size_t k = 0; k < sp->njobs; k++)
		sp->jobs[k].runtime_estimate = declared ? sp->jobs[k].duration : 0;
	mu_sim_result_t res;
	double t0 = wall_now();
	int rc = mu_sim_run(sp, &sc, &res, diag);
	out->wall_s = wall_now() - t0;
	if (rc == MU_OK && (rc = reduce(&res, sp, w, out)) != MU_OK)
		mu__diag(diag, rc, mu_philly_policy_name(p), 0, 0, "%s", mu_strerror(rc));
	mu_sim_result_release(&res);
	return rc;
}

int mu_philly_run(mu_specs_t *sp, const mu_philly_window_t *w,
		  const mu_philly_opts_t *o, mu_philly_policy_t p,
		  bool declared, mu_philly_run_t *out, mu_diag_t *diag)
{
	return run_one(sp, w, o, p, declared, 0, 0, 1, out, diag);
}

void mu_philly_run_release(mu_philly_run_t *r)
{
	free(r->large.waits);
	free(r->one.waits);
	r->large.waits = r->one.waits = NULL;
}

/* --- The whole evaluation ---------------------------------------------------- */

/* The runs, in order: experiment 1 with history estimates, then with
 * declared durations, then what only experiment 2 needs. */
typedef struct evp_plan {
	mu_philly_policy_t p;
	bool declared;
} evp_plan_t;

static const evp_plan_t evp_plan[MU_PHILLY_NRUNS] = {
	{MU_PHILLY_FIFO, false}, {MU_PHILLY_GREEDY, false},
	{MU_PHILLY_EASY, false}, {MU_PHILLY_MUSTER, false},
	{MU_PHILLY_FIFO, true}, {MU_PHILLY_GREEDY, true},
	{MU_PHILLY_EASY, true}, {MU_PHILLY_MUSTER, true},
	{MU_PHILLY_SJF, true}, {MU_PHILLY_TIRESIAS, false},
	{MU_PHILLY_ARRIVAL, false},
};

const double mu_philly_sweep_bases[MU_PHILLY_NSWEEP] = {10, 30, 100, 200, 400, 1000};

int mu_philly_eval_init(mu_philly_eval_t *ev, const mu_specs_t *all,
			const mu_philly_opts_t *o, mu_specs_t *sp, mu_diag_t *diag)
{
	memset(ev, 0, sizeof *ev);
	ev->opts = *o;
	return mu_philly_build(all, o, sp, &ev->win, diag);
}

int mu_philly_eval_runs(mu_philly_eval_t *ev, mu_specs_t *sp, mu_diag_t *diag)
{
	double t0 = wall_now();
	int rc = MU_OK;
	size_t total = MU_PHILLY_NRUNS + MU_PHILLY_NSWEEP;
	for (size_t i = 0; i < MU_PHILLY_NRUNS && rc == MU_OK; i++) {
		ev->nruns = i + 1;
		rc = run_one(sp, &ev->win, &ev->opts, evp_plan[i].p, evp_plan[i].declared,
			     0, i, total, &ev->runs[i], diag);
	}
	for (size_t i = 0; i < MU_PHILLY_NSWEEP && rc == MU_OK; i++) {
		ev->nsweep = i + 1;
		rc = run_one(sp, &ev->win, &ev->opts, MU_PHILLY_MUSTER, false,
			     mu_philly_sweep_bases[i], MU_PHILLY_NRUNS + i, total,
			     &ev->sweep[i], diag);
	}
	ev->wall_s = wall_now() - t0;
	return rc;
}

int mu_philly_eval(const mu_specs_t *all, const mu_philly_opts_t *o,
		   mu_philly_eval_t *ev, mu_diag_t *diag)
{
	mu_specs_t sp;
	mu_specs_init(&sp);
	int rc = mu_philly_eval_init(ev, all, o, &sp, diag);
	if (rc == MU_OK)
		rc = mu_philly_eval_runs(ev, &sp, diag);
	mu_specs_release(&sp);
	return rc;
}

void mu_philly_eval_release(mu_philly_eval_t *ev)
{
	for (size_t i = 0; i < ev->nruns; i++)
		mu_philly_run_release(&ev->runs[i]);
	for (size_t i = 0; i < ev->nsweep; i++)
		mu_philly_run_release(&ev->sweep[i]);
	ev->nruns = ev->nsweep = 0;
}

const mu_philly_run_t *mu_philly_find(const mu_philly_eval_t *ev,
				      mu_philly_policy_t p, bool declared)
{
	for (size_t i = 0; i < ev->nruns; i++)
		if (ev->runs[i].policy == p && ev->runs[i].declared == declared)
			return &ev->runs[i];
	return NULL;
}

/* Appends the index of run (p, declared) to rows when it was run. */
static size_t add_row(const mu_philly_eval_t *ev, mu_philly_policy_t p,
		      bool declared, size_t *rows, size_t n, size_t max)
{
	const mu_philly_run_t *r = mu_philly_find(ev, p, declared);
	if (r && n < max)
		rows[n++] = (size_t)(r - ev->runs);
	return n;
}

size_t mu_philly_backfill_rows(const mu_philly_eval_t *ev, size_t *rows, size_t max)
{
	size_t n = 0;
	for (int d = 0; d < 2; d++) {
		for (int p = MU_PHILLY_FIFO; p <= MU_PHILLY_MUSTER; p++) {
			if (p == MU_PHILLY_MUSTER && d == 0) /* the old default first */
				n = add_row(ev, MU_PHILLY_ARRIVAL, false, rows, n, max);
			n = add_row(ev, (mu_philly_policy_t)p, d == 1, rows, n, max);
		}
	}
	return n;
}

size_t mu_philly_jct_rows(const mu_philly_eval_t *ev, size_t *rows, size_t max)
{
	size_t n = add_row(ev, MU_PHILLY_FIFO, false, rows, 0, max);
	n = add_row(ev, MU_PHILLY_SJF, true, rows, n, max);
	n = add_row(ev, MU_PHILLY_TIRESIAS, false, rows, n, max);
	n = add_row(ev, MU_PHILLY_ARRIVAL, false, rows, n, max);
	n = add_row(ev, MU_PHILLY_MUSTER, false, rows, n, max);
	return add_row(ev, MU_PHILLY_MUSTER, true, rows, n, max);
}

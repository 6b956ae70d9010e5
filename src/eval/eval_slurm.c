/*
 * eval_slurm.c - `muster eval slurm`: the workload, muster's side and the
 * figures (protocol in include/muster/eval_slurm.h and docs/evaluation.md).
 *
 * mu_slurm_eval_init() builds the Philly window with eval_philly.c's
 * builder and turns it into compressed jobs; the specs are then put on the
 * compressed clock in place, so that muster's simulator sees exactly the
 * jobs Slurm gets, with the Slurm time limit as declared estimate.
 * mu_slurm_eval_muster() runs muster twice; mu_slurm_eval_slurm() runs
 * each Slurm variant (slurm_run.c).  mu_slurm_reduce() computes every
 * figure from per-job records, the same code for both schedulers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/slurm_int.h"
#include "muster/util.h"

#define SEC 1000LL
#define EST_CLOSE_S 600.0 /* "within" for estimates: 10 trace minutes */
#define UTIL_STEPS 4000   /* integration steps of utilization */

static const char *const class_labels[MU_SLURM_NCLASSES] = {
	"1 GPU", "2-4 GPUs", "5-8 GPUs", ">8 GPUs (multi-node)",
};

const char *mu_slurm_class_label(int c)
{
	return c >= 0 && c < MU_SLURM_NCLASSES ? class_labels[c] : NULL;
}

int mu_slurm_class_of(int64_t gpus)
{
	return gpus <= 1 ? 0 : gpus <= 4 ? 1 : gpus <= 8 ? 2 : 3;
}

void mu_slurm_opts_defaults(mu_slurm_opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->hours = 3;
	o->load = 0.9;
	o->cap = 2 * 3600 * SEC;
	o->from_s = -1;
	o->compress = 60;
	o->gpus_per_node = 8;
	o->checkpoint_cost = 30 * SEC;
	o->variants[0] = "bf_interval=1,bf_resolution=60,bf_window=120,bf_continue,"
			 "bf_max_job_test=1000";
	o->variants[1] = "bf_interval=1,bf_resolution=1,bf_window=120,bf_continue,"
			 "bf_max_job_test=1000";
	o->nvariants = 2;
	o->poll_s = 1;
}

/* --- Workload ------------------------------------------------------------------- */

/* GPUs and pods of a job spec. */
static void job_shape(const mu_job_spec_t *j, int32_t *gpus, int32_t *pods)
{
	int64_t milli = 0, p = 0;
	for (size_t k = 0; k < j->npodsets; k++) {
		mu_res_t a = mu_res_acct(&j->podsets[k].req);
		milli += a.v[MU_RES_GPU] * j->podsets[k].replicas;
		p += j->podsets[k].replicas;
	}
	*gpus = (int32_t)(milli / 1000);
	*pods = (int32_t)p;
}

/* Moves sp onto the compressed clock and fills ev->jobs. */
static int compress_jobs(mu_slurm_eval_t *ev, mu_specs_t *sp, mu_diag_t *diag)
{
	double c = ev->opts.compress;
	ev->jobs = calloc(sp->njobs ? sp->njobs : 1, sizeof *ev->jobs);
	if (!ev->jobs)
		return MU_ENOMEM;
	for (size_t i = 0; i < sp->njobs; i++) {
		mu_job_spec_t *j = &sp->jobs[i];
		mu_slurm_job_t *s = &ev->jobs[i];
		int32_t gpus, pods;
		job_shape(j, &gpus, &pods);
		if (gpus < 1 || pods < 1)
			return mu__diag(diag, MU_EINVAL, "workload", 0, 0,
					"job %s asks for no whole GPU", j->name);
		j->submit = llround((double)j->submit / c);
		j->duration = llround((double)j->duration / c);
		j->duration = j->duration > 0 ? j->duration : 1;
		s->name = j->name;
		s->submit_s = (double)j->submit / SEC;
		s->dur_s = (double)j->duration / SEC;
		s->gpus = gpus;
		s->nodes = pods;
		s->limit_min = (int32_t)ceil(s->dur_s / 60 - 1e-9);
		s->limit_min = s->limit_min > 0 ? s->limit_min : 1;
		j->runtime_estimate = (mu_time_t)s->limit_min * 60 * SEC;
		j->runtime_limit = 0;
		ev->njobs++;
	}
	return MU_OK;
}

static int cmp_submit(const void *a, const void *b)
{
	const mu_job_spec_t *x = a, *y = b;
	return (x->submit > y->submit) - (x->submit < y->submit);
}

typedef struct arr {
	mu_time_t t;
	bool big;
} arr_t;

static int cmp_arr(const void *a, const void *b)
{
	const arr_t *x = a, *y = b;
	return (x->t > y->t) - (x->t < y->t);
}

/* The whole-hour start of the window of `span` with the most multi-node
 * gangs (more than gpn GPUs), ties to the most jobs, then the earliest:
 * the comparison is about how backfill treats gangs among small jobs.
 * O(jobs log jobs + trace hours). */
static int pick_window(const mu_specs_t *all, mu_time_t span, int32_t gpn, int64_t *from_s)
{
	size_t n = all->njobs;
	arr_t *a = malloc((n ? n : 1) * sizeof *a);
	if (!a)
		return MU_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int32_t g, p;
		job_shape(&all->jobs[i], &g, &p);
		a[i] = (arr_t){all->jobs[i].submit, g > gpn};
	}
	qsort(a, n, sizeof *a, cmp_arr);
	mu_time_t step = 3600 * SEC, last = n ? a[n - 1].t : 0;
	size_t lo = 0, hi = 0, big = 0, best_big = 0, best_n = 0;
	*from_s = 0;
	for (mu_time_t s = 0; s <= last; s += step) {
		while (hi < n && a[hi].t < s + span)
			big += a[hi++].big;
		while (lo < hi && a[lo].t < s)
			big -= a[lo++].big;
		if (big > best_big || (big == best_big && hi - lo > best_n)) {
			best_big = big;
			best_n = hi - lo;
			*from_s = s / SEC;
		}
	}
	free(a);
	return MU_OK;
}

int mu_slurm_eval_init(mu_slurm_eval_t *ev, const mu_specs_t *all,
		       const mu_slurm_opts_t *o, mu_specs_t *sp, mu_diag_t *diag)
{
	memset(ev, 0, sizeof *ev);
	ev->opts = *o;
	ev->best_slurm = -1;
	if (!(o->compress >= 1) || !(o->hours > 0) || o->nvariants > MU_SLURM_MAX_VARIANTS)
		return mu__diag(diag, MU_EINVAL, "options", 0, 0,
				"the compression must be at least 1 and the window positive");
	mu_philly_opts_t po;
	mu_philly_opts_defaults(&po);
	po.days = o->hours / 24;
	po.load = o->load;
	po.cap = o->cap;
	po.from_s = o->from_s;
	po.gpus_per_node = o->gpus_per_node;
	int rc = MU_OK;
	if (po.from_s < 0 &&
	    (rc = pick_window(all, llround(o->hours * 3600 * SEC), o->gpus_per_node,
			      &po.from_s)) != MU_OK)
		return rc;
	rc = mu_philly_build(all, &po, sp, &ev->win, diag);
	if (rc)
		return rc;
	if (ev->win.nodes > MU_SLURM_MAX_NODES)
		return mu__diag(diag, MU_EINVAL, "workload", 0, 0,
				"the window needs %d nodes; this runs at most %d slurmd "
				"(a shorter --hours or a lower --load)", (int)ev->win.nodes,
				MU_SLURM_MAX_NODES);
	bool sorted = true; /* the loader sorts by submit, ties in file order */
	for (size_t i = 1; i < sp->njobs; i++)
		sorted = sorted && sp->jobs[i - 1].submit <= sp->jobs[i].submit;
	if (!sorted)
		qsort(sp->jobs, sp->njobs, sizeof *sp->jobs, cmp_submit);
	ev->span_s = (double)ev->win.span / SEC / o->compress;
	return compress_jobs(ev, sp, diag);
}

void mu_slurm_eval_release(mu_slurm_eval_t *ev)
{
	for (size_t i = 0; i < ev->nsides; i++) {
		free(ev->sides[i].recs);
		ev->sides[i].recs = NULL;
	}
	ev->nsides = 0;
	free(ev->jobs);
	ev->jobs = NULL;
}

/* --- muster's side -------------------------------------------------------------- */

typedef struct name_idx {
	const char *name;
	size_t i;
} name_idx_t;

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const name_idx_t *)a)->name, ((const name_idx_t *)b)->name);
}

typedef struct mrun {
	const mu_slurm_eval_t *ev;
	name_idx_t *names;        /* sorted by name */
	mu_slurm_rec_t *recs;
	bool *seen;               /* by engine job id */
	size_t nseen;
} mrun_t;

/* Records the first expected start of every job left pending by a cycle. */
static void on_decisions(void *ctx, const mu_engine_t *e, const mu_decisions_t *d,
			 mu_time_t now)
{
	mrun_t *m = ctx;
	(void)now;
	for (size_t k = 0; k < d->n; k++) {
		const mu_decision_t *x = &d->v[k];
		if (x->kind != MU_DEC_PENDING || x->job < 0 || (size_t)x->job >= m->nseen ||
		    m->seen[x->job])
			continue;
		mu_job_info_t info;
		if (mu_engine_job_info(e, x->job, &info) != MU_OK || !info.name)
			continue;
		name_idx_t key = {info.name, 0}, *hit;
		hit = bsearch(&key, m->names, m->ev->njobs, sizeof key, cmp_name);
		if (!hit || info.expected_start == MU_TIME_NONE)
			continue;
		m->seen[x->job] = true;
		m->recs[hit->i].est_s = (double)info.expected_start / SEC;
	}
}

/* The engine's time constants on the compressed clock, so that the
 * simulator sees the trace's minimum runtime, default estimate, cool-down
 * and disruption budget (pods per hour: an hour of the compressed clock
 * is c trace hours; GPU-hours per hour keep their value, as both the work
 * and the time shrink by c). */
static void compress_config(mu_engine_config_t *e, double c)
{
	e->min_runtime = llround((double)e->min_runtime / c);
	e->default_runtime = llround((double)e->default_runtime / c);
	e->reclaim_cooldown = llround((double)e->reclaim_cooldown / c);
	e->starvation_after = llround((double)e->starvation_after / c);
	double pods = (double)e->move_pods_per_hour * c;
	e->move_pods_per_hour = pods < INT32_MAX ? (int32_t)pods : INT32_MAX;
}

/* One muster run into side; preempt = the engine's defaults with
 * preemptible jobs, else nothing may be evicted or moved. */
static int muster_run(mu_slurm_eval_t *ev, mu_specs_t *sp, bool preempt,
		      mu_slurm_side_t *side, mu_diag_t *diag)
{
	mu_sim_config_t sc;
	mu_sim_config_defaults(&sc);
	mu_engine_config_defaults(&sc.engine);
	if (!preempt) {
		sc.engine.preemption = false;
		sc.engine.reclaim = false;
		sc.engine.consolidate = false;
	}
	compress_config(&sc.engine, ev->opts.compress);
	sc.checkpoint_cost = llround((double)ev->opts.checkpoint_cost / ev->opts.compress);
	snprintf(side->label, sizeof side->label, "%s", preempt ? "muster default" :
		 "muster, nothing evicted or moved");
	snprintf(side->params, sizeof side->params, "backfill reserve, %d reservations, "
		 "consolidation %s, preemption %s", (int)sc.engine.reservations,
		 sc.engine.consolidate ? "on" : "off", preempt ? "on" : "off");
	size_t n = ev->njobs ? ev->njobs : 1;
	mrun_t m = {.ev = ev, .nseen = ev->njobs};
	m.names = malloc(n * sizeof *m.names);
	m.seen = calloc(n, sizeof *m.seen);
	side->recs = malloc(n * sizeof *side->recs);
	m.recs = side->recs;
	if (!m.names || !m.seen || !side->recs) {
		free(m.names);
		free(m.seen);
		return MU_ENOMEM;
	}
	for (size_t i = 0; i < ev->njobs; i++) {
		m.names[i] = (name_idx_t){ev->jobs[i].name, i};
		side->recs[i] = (mu_slurm_rec_t){ev->jobs[i].submit_s, -1, -1, -1, false};
		sp->jobs[i].preemptible = true; /* a non-preemptible job needs quota */
	}
	qsort(m.names, ev->njobs, sizeof *m.names, cmp_name);
	sc.on_decisions = on_decisions;
	sc.on_decisions_ctx = &m;
	sc.keep_jobs = true; /* m.seen is by engine job id */
	mu_sim_result_t res;
	double t0 = mu__slurm_mono();
	int rc = mu_sim_run(sp, &sc, &res, diag);
	side->wall_s = mu__slurm_mono() - t0;
	for (size_t i = 0; rc == MU_OK && i < res.njobs; i++) {
		name_idx_t key = {res.jobs[i].name, 0};
		name_idx_t *hit = bsearch(&key, m.names, ev->njobs, sizeof key, cmp_name);
		if (!hit)
			continue;
		side->recs[hit->i].start_s = res.jobs[i].start_s;
		side->recs[hit->i].end_s = res.jobs[i].end_s;
	}
	if (rc == MU_OK) {
		side->preemptions = res.summary.preemptions;
		side->moves = res.summary.moves;
		if (res.summary.completed != (int64_t)ev->njobs)
			rc = mu__diag(diag, MU_ESTATE, side->label, 0, 0,
				      "%lld of %zu jobs finished", (long long)res.summary.completed,
				      ev->njobs);
	}
	mu_sim_result_release(&res);
	free(m.names);
	free(m.seen);
	return rc;
}

int mu_slurm_eval_muster(mu_slurm_eval_t *ev, mu_specs_t *sp, mu_diag_t *diag)
{
	for (int k = 0; k < 2; k++) {
		mu_slurm_side_t *s = &ev->sides[ev->nsides];
		memset(s, 0, sizeof *s);
		ev->nsides++;
		int rc = muster_run(ev, sp, k == 0, s, diag);
		if (rc)
			return rc;
		mu_slurm_reduce(ev, s);
	}
	return MU_OK;
}

/* --- Slurm's side ---------------------------------------------------------------- */

/* Better for this protocol: higher utilization, then the lower p99 wait
 * of multi-node gangs, then of 1-GPU jobs. */
static bool better(const mu_slurm_side_t *a, const mu_slurm_side_t *b)
{
	if (fabs(a->util - b->util) > 0.005)
		return a->util > b->util;
	if (a->cls[3].p99_s != b->cls[3].p99_s)
		return a->cls[3].p99_s < b->cls[3].p99_s;
	return a->cls[0].p99_s < b->cls[0].p99_s;
}

int mu_slurm_eval_slurm(mu_slurm_eval_t *ev, mu_diag_t *diag)
{
	for (size_t v = 0; v < ev->opts.nvariants; v++) {
		mu_slurm_side_t *s = &ev->sides[ev->nsides];
		memset(s, 0, sizeof *s);
		s->is_slurm = true;
		snprintf(s->params, sizeof s->params, "%s", ev->opts.variants[v]);
		const char *res = strstr(ev->opts.variants[v], "bf_resolution=");
		snprintf(s->label, sizeof s->label, "%.*s", res ? (int)strcspn(res, ",") : 40,
			 res ? res : ev->opts.variants[v]);
		ev->nsides++;
		int rc = mu__slurm_run(ev, ev->opts.variants[v], s, diag);
		if (rc)
			return rc;
		mu_slurm_reduce(ev, s);
		if (ev->best_slurm < 0 || better(s, &ev->sides[ev->best_slurm]))
			ev->best_slurm = (int)(s - ev->sides);
	}
	return MU_OK;
}

/* --- Figures -------------------------------------------------------------------- */

static void class_fill(mu_slurm_class_t *c, double *w, size_t n)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += w[i];
	c->started = (int64_t)n;
	c->mean_s = n ? sum / (double)n : 0;
	c->p50_s = mu_percentile(w, n, 50);
	c->p99_s = mu_percentile(w, n, 99);
}

/* Waits per class and over all jobs, JCTs. */
static int reduce_waits(const mu_slurm_eval_t *ev, mu_slurm_side_t *s, double c)
{
	size_t n = ev->njobs ? ev->njobs : 1, nall = 0, nj = 0;
	double *w = malloc(n * sizeof *w), *all = malloc(n * sizeof *all);
	double *jct = malloc(n * sizeof *jct);
	if (!w || !all || !jct) {
		free(w);
		free(all);
		free(jct);
		return MU_ENOMEM;
	}
	double jsum = 0;
	for (int k = 0; k < MU_SLURM_NCLASSES; k++) {
		size_t m = 0;
		s->cls[k].n = 0;
		for (size_t i = 0; i < ev->njobs; i++) {
			const mu_slurm_rec_t *r = &s->recs[i];
			if (mu_slurm_class_of(ev->jobs[i].gpus) != k)
				continue;
			s->cls[k].n++;
			if (r->start_s < 0 || r->submit_s < 0)
				continue;
			double x = fmax(0, r->start_s - r->submit_s) * c;
			w[m++] = x;
			all[nall++] = x;
			if (r->end_s >= 0) {
				jct[nj++] = (r->end_s - r->submit_s) * c;
				jsum += jct[nj - 1];
			}
		}
		class_fill(&s->cls[k], w, m);
	}
	s->all.n = (int64_t)ev->njobs;
	class_fill(&s->all, all, nall);
	s->completed = (int64_t)nj;
	s->jct_mean_s = nj ? jsum / (double)nj : 0;
	s->jct_p50_s = mu_percentile(jct, nj, 50);
	s->jct_p99_s = mu_percentile(jct, nj, 99);
	free(w);
	free(all);
	free(jct);
	return MU_OK;
}

/* Utilization: allocated GPU-time over [0, span] and over the whole run,
 * from the records' intervals.  O(jobs). */
static void reduce_util(const mu_slurm_eval_t *ev, mu_slurm_side_t *s)
{
	double gpus = (double)ev->win.gpus, span = ev->span_s, in = 0, tot = 0, last = 0;
	for (size_t i = 0; i < ev->njobs; i++) {
		const mu_slurm_rec_t *r = &s->recs[i];
		if (r->start_s < 0 || r->end_s < r->start_s)
			continue;
		double g = ev->jobs[i].gpus;
		in += g * fmax(0, fmin(r->end_s, span) - fmax(r->start_s, 0));
		tot += g * (r->end_s - r->start_s);
		last = fmax(last, r->end_s);
	}
	s->util = span > 0 && gpus > 0 ? in / (span * gpus) : 0;
	s->util_run = last > 0 && gpus > 0 ? tot / (last * gpus) : 0;
	s->makespan_s = last * ev->opts.compress;
}

/* Jobs that started while a job ahead of them in the queue (submitted
 * earlier, or at the same time and handed in first) still waited: a
 * prefix maximum of starts in queue order.  O(jobs). */
static void reduce_order(const mu_slurm_eval_t *ev, mu_slurm_side_t *s)
{
	double maxstart = -1;
	bool never = false;
	s->out_of_order = 0;
	s->by_backfill = s->is_slurm ? 0 : -1;
	for (size_t i = 0; i < ev->njobs; i++) {
		const mu_slurm_rec_t *r = &s->recs[i];
		if (s->is_slurm)
			s->by_backfill += r->by_backfill;
		if (r->start_s >= 0 && (never || maxstart > r->start_s))
			s->out_of_order++;
		never = never || r->start_s < 0;
		maxstart = fmax(maxstart, r->start_s);
	}
}

/* Estimates against real starts, over jobs that had one and waited. */
static int reduce_est(const mu_slurm_eval_t *ev, mu_slurm_side_t *s, double c)
{
	size_t n = 0;
	double *e = malloc((ev->njobs ? ev->njobs : 1) * sizeof *e), bias = 0;
	if (!e)
		return MU_ENOMEM;
	int64_t close = 0;
	for (size_t i = 0; i < ev->njobs; i++) {
		const mu_slurm_rec_t *r = &s->recs[i];
		if (r->est_s < 0 || r->start_s < 0)
			continue;
		double d = (r->est_s - r->start_s) * c;
		bias += d;
		e[n++] = fabs(d);
		close += fabs(d) <= EST_CLOSE_S;
	}
	s->est_n = (int64_t)n;
	s->est_bias_s = n ? bias / (double)n : 0;
	s->est_within = n ? (double)close / (double)n : 0;
	s->est_p50_s = mu_percentile(e, n, 50);
	s->est_p90_s = mu_percentile(e, n, 90);
	free(e);
	return MU_OK;
}

void mu_slurm_reduce(const mu_slurm_eval_t *ev, mu_slurm_side_t *s)
{
	double c = ev->opts.compress;
	reduce_util(ev, s);
	if (reduce_waits(ev, s, c) != MU_OK || reduce_est(ev, s, c) != MU_OK)
		s->all.n = -1; /* out of memory: the figures are not there */
	reduce_order(ev, s);
}

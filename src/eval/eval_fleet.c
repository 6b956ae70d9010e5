/*
 * eval_fleet.c - the fleet evaluation's workload, fleet and runs: one
 * discrete-event loop (arrivals, completions, a decision at every event
 * time) and four strategies that decide where a job goes
 * (include/muster/eval_fleet.h).  Each cluster's own scheduler is a muster
 * engine with preemption, reclaim and consolidation off, so that a job runs
 * once it starts and ends at start + duration.  The page and JSON writers
 * are eval_fleet_report.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "muster/eval_fleet.h"
#include "muster/fleet.h"

#define SEC 1000LL
#define NC MU_FLEET_EVAL_CLUSTERS

void mu_fleet_eval_opts_defaults(mu_fleet_eval_opts_t *o)
{
	memset(o, 0, sizeof *o);
	mu_philly_opts_defaults(&o->philly);
	o->burst_after = 30 * 60 * SEC;
	o->public_cost = 2.5;
}

void mu_fleet_eval_opts_quick(mu_fleet_eval_opts_t *o)
{
	mu_fleet_eval_opts_defaults(o);
	mu_philly_opts_quick(&o->philly);
}

const char *mu_fleet_strategy_name(mu_fleet_strategy_t s)
{
	static const char *const n[MU_FS_COUNT] = {"static", "mcad", "multikueue", "muster"};
	return s >= 0 && s < MU_FS_COUNT ? n[s] : NULL;
}

/* One job of the workload and its run under the current strategy. */
typedef struct fj {
	mu_job_spec_t spec;    /* queue: its team; preemptible, no estimate */
	mu_fleet_job_spec_t fspec;
	int32_t team;
	int64_t gpus;
	mu_time_t start, end;
	int32_t cluster;
	mu_id_t hub;           /* muster: its fleet id */
	mu_id_t eid[NC];       /* its id in each cluster engine, or -1 */
} fj_t;

/* A completion: a min-heap entry. */
typedef struct done {
	mu_time_t t;
	int32_t job;
} done_t;

/* The state of one run. */
typedef struct world {
	mu_fleet_eval_t *ev;
	mu_fleet_strategy_t s;
	fj_t *jobs;
	int32_t njobs;
	char (*teams)[64];
	int32_t *team_cluster; /* static */
	mu_engine_t *eng[NC];
	int32_t *emap[NC];     /* engine job id -> job */
	int32_t emap_cap[NC];
	mu_fleet_t *fleet;
	int32_t *hub2job;      /* muster: fleet id -> job */
	done_t *heap;
	int32_t nheap;
	int32_t *wait;         /* mcad: jobs not yet sent, in arrival order */
	int32_t nwait;
	int64_t pend_gpus[NC]; /* mcad: sent there, not started */
	uint64_t rng;
	mu_decisions_t dec;
	mu_fleet_decisions_t fdec;
	mu_fleet_eval_run_t *run;
} world_t;

static uint64_t rnd(world_t *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

static void heap_push(world_t *w, mu_time_t t, int32_t job)
{
	int32_t i = w->nheap++;
	while (i > 0) {
		int32_t p = (i - 1) / 2;
		if (w->heap[p].t <= t)
			break;
		w->heap[i] = w->heap[p];
		i = p;
	}
	w->heap[i] = (done_t){t, job};
}

static done_t heap_pop(world_t *w)
{
	done_t top = w->heap[0], last = w->heap[--w->nheap];
	int32_t i = 0;
	for (;;) {
		int32_t c = 2 * i + 1;
		if (c >= w->nheap)
			break;
		if (c + 1 < w->nheap && w->heap[c + 1].t < w->heap[c].t)
			c++;
		if (w->heap[c].t >= last.t)
			break;
		w->heap[i] = w->heap[c];
		i = c;
	}
	if (w->nheap)
		w->heap[i] = last;
	return top;
}

/* Job j starts on cluster c at now; its end goes in the heap. */
static void job_start(world_t *w, int32_t j, int32_t c, mu_time_t now)
{
	fj_t *x = &w->jobs[j];
	x->start = now;
	x->cluster = c;
	x->end = now + x->spec.duration;
	heap_push(w, x->end, j);
}

/* Submits job j to cluster engine c and remembers its engine id. */
static int engine_submit(world_t *w, int32_t j, int32_t c, mu_time_t now)
{
	fj_t *x = &w->jobs[j];
	mu_job_spec_t s = x->spec;
	s.submit = now;
	mu_id_t id;
	int rc = mu_engine_job_submit(w->eng[c], &s, now, &id);
	if (rc)
		return rc;
	if (id >= w->emap_cap[c]) {
		int32_t cap = w->emap_cap[c] ? w->emap_cap[c] * 2 : 1024;
		while (cap <= id)
			cap *= 2;
		int32_t *m = realloc(w->emap[c], (size_t)cap * sizeof *m);
		if (!m)
			return MU_ENOMEM;
		w->emap[c] = m;
		w->emap_cap[c] = cap;
	}
	w->emap[c][id] = j;
	x->eid[c] = id;
	return MU_OK;
}

/* Runs a cycle on engine c; *out gets the jobs that started (first bind
 * of a job not started), ended by -1.  started has room for njobs + 1. */
static int engine_cycle(world_t *w, int32_t c, mu_time_t now, int32_t *started)
{
	w->dec.n = 0;
	int rc = mu_engine_cycle(w->eng[c], now, &w->dec);
	int32_t n = 0;
	for (size_t i = 0; rc == MU_OK && i < w->dec.n; i++) {
		const mu_decision_t *d = &w->dec.v[i];
		if (d->kind != MU_DEC_BIND || d->pod != 0 || d->podset != 0)
			continue;
		started[n++] = w->emap[c][d->job];
	}
	started[n] = -1;
	return rc;
}

/* --- strategies ---------------------------------------------------------- */

static int arrive(world_t *w, int32_t j, mu_time_t now)
{
	fj_t *x = &w->jobs[j];
	switch (w->s) {
	case MU_FS_STATIC:
		return engine_submit(w, j, w->team_cluster[x->team], now);
	case MU_FS_MCAD:
		w->wait[w->nwait++] = j;
		return MU_OK;
	case MU_FS_MULTIKUEUE:
		for (int32_t c = 0; c < NC; c++) {
			int rc = engine_submit(w, j, c, now);
			if (rc)
				return rc;
		}
		return MU_OK;
	case MU_FS_MUSTER: {
		int rc = mu_fleet_job_submit(w->fleet, &x->fspec, now, &x->hub);
		if (rc == MU_OK)
			w->hub2job[x->hub] = j;
		return rc;
	}
	default:
		return MU_EINVAL;
	}
}

static int complete(world_t *w, int32_t j, mu_time_t now)
{
	fj_t *x = &w->jobs[j];
	if (w->s == MU_FS_MUSTER)
		return mu_fleet_job_finish(w->fleet, x->hub, now);
	return mu_engine_job_finish(w->eng[x->cluster], x->eid[x->cluster], now);
}

/* mcad: sends waiting jobs, in arrival order, each to a random cluster
 * whose free GPUs (less what was sent there and has not started) cover it
 * in aggregate. */
static int mcad_send(world_t *w, mu_time_t now, int32_t *sent, int32_t *nsent)
{
	int32_t keep = 0;
	for (int32_t i = 0; i < w->nwait; i++) {
		int32_t j = w->wait[i], ok[NC], n = 0;
		for (int32_t c = 0; c < NC; c++) {
			mu_res_t alloc, used;
			mu_engine_totals(w->eng[c], &alloc, &used);
			int64_t free_g = (alloc.v[MU_RES_GPU] - used.v[MU_RES_GPU]) / 1000 -
					 w->pend_gpus[c];
			if (free_g >= w->jobs[j].gpus)
				ok[n++] = c;
		}
		if (!n) {
			w->wait[keep++] = j;
			continue;
		}
		int32_t c = ok[rnd(w) % (uint64_t)n];
		int rc = engine_submit(w, j, c, now);
		if (rc)
			return rc;
		w->pend_gpus[c] += w->jobs[j].gpus;
		sent[(*nsent)++] = j;
	}
	w->nwait = keep;
	return MU_OK;
}

/* multikueue: among the clusters that admitted job j in this instant
 * (mask), a random one wins; the copies elsewhere are deleted. */
static int mk_resolve(world_t *w, int32_t j, unsigned mask, mu_time_t now)
{
	int32_t cand[NC], n = 0;
	for (int32_t c = 0; c < NC; c++)
		if (mask & (1u << c))
			cand[n++] = c;
	int32_t win = cand[rnd(w) % (uint64_t)n];
	w->run->wasted += n - 1;
	w->run->duplicates += n > 1;
	for (int32_t c = 0; c < NC; c++) {
		if (c == win)
			continue;
		int rc = mu_engine_job_withdraw(w->eng[c], w->jobs[j].eid[c], now);
		if (rc)
			return rc;
	}
	job_start(w, j, win, now);
	return MU_OK;
}

/* One decision point at now for engine-based strategies: mcad sends, every
 * cluster runs a cycle, multikueue resolves the admitted copies.  Rounds
 * repeat while deleted copies freed room (multikueue).  list and mask
 * have room for every job (mask all 0 between calls). */
static int decide_engines(world_t *w, mu_time_t now, int32_t *started,
			  int32_t *list, unsigned *mask)
{
	int32_t nlist = 0;
	if (w->s == MU_FS_MCAD) {
		int rc = mcad_send(w, now, list, &nlist);
		if (rc)
			return rc;
	}
	int32_t nsent = nlist;
	for (int round = 0; round < 4; round++) {
		int32_t dup = 0, nk = w->s == MU_FS_MULTIKUEUE ? 0 : nlist;
		for (int32_t c = 0; c < NC; c++) {
			int rc = engine_cycle(w, c, now, started);
			if (rc)
				return rc;
			for (int32_t i = 0; started[i] >= 0; i++) {
				int32_t j = started[i];
				if (w->s != MU_FS_MULTIKUEUE) {
					job_start(w, j, c, now);
					if (w->s == MU_FS_MCAD)
						w->pend_gpus[c] -= w->jobs[j].gpus;
					continue;
				}
				if (!mask[j])
					list[nk++] = j;
				mask[j] |= 1u << c;
			}
		}
		if (w->s != MU_FS_MULTIKUEUE)
			break;
		for (int32_t i = 0; i < nk; i++) {
			int32_t j = list[i];
			dup += __builtin_popcount(mask[j]) > 1;
			int rc = mk_resolve(w, j, mask[j], now);
			if (rc)
				return rc;
			mask[j] = 0;
		}
		if (!dup)
			break;
	}
	for (int32_t i = 0; w->s == MU_FS_MCAD && i < nsent; i++)
		w->run->misplaced += w->jobs[list[i]].start == MU_TIME_NONE;
	return MU_OK;
}

static int decide(world_t *w, mu_time_t now, int32_t *started, int32_t *list,
		  unsigned *mask)
{
	if (w->s != MU_FS_MUSTER)
		return decide_engines(w, now, started, list, mask);
	w->fdec.n = 0;
	int rc = mu_fleet_dispatch(w->fleet, now, &w->fdec);
	for (size_t i = 0; rc == MU_OK && i < w->fdec.n; i++) {
		const mu_fleet_decision_t *d = &w->fdec.v[i];
		int32_t j = w->hub2job[d->job];
		job_start(w, j, d->cluster, now);
	}
	return rc;
}

/* --- the fleet and the workload ------------------------------------------ */

static int64_t spec_gpus(const mu_job_spec_t *j)
{
	int64_t milli = 0;
	for (size_t p = 0; p < j->npodsets; p++) {
		mu_res_t a = mu_res_acct(&j->podsets[p].req);
		milli += a.v[MU_RES_GPU] * j->podsets[p].replicas;
	}
	return milli / 1000;
}

/* Splits the window's nodes into the four clusters (see the header). */
static void size_clusters(mu_fleet_eval_t *ev)
{
	static const char *const names[NC] = {"onprem-big", "onprem-mid", "onprem-small",
					      "cloud"};
	static const char *const models[NC] = {"A100", "V100", "H100", "H100"};
	int32_t n = ev->win.nodes, gpn = 8;
	int32_t big = (int32_t)ceil(0.5 * n), need = (ev->win.max_gpus + gpn - 1) / gpn;
	if (big < need)
		big = need;
	int32_t mid = (int32_t)lround(0.3 * n), small = n - big - mid;
	mid = mid < 1 ? 1 : mid;
	small = small < 1 ? 1 : small;
	int32_t pub = (int32_t)lround(0.25 * n);
	int32_t nodes[NC] = {big, mid, small, pub < 1 ? 1 : pub};
	for (int32_t c = 0; c < NC; c++) {
		mu_fleet_eval_cluster_t *k = &ev->clusters[c];
		snprintf(k->name, sizeof k->name, "%s", names[c]);
		snprintf(k->model, sizeof k->model, "%s", models[c]);
		k->public_ = c == NC - 1;
		k->nodes = nodes[c];
		k->gpus = nodes[c] * gpn;
	}
}

static mu_node_spec_t node_of(const mu_fleet_eval_cluster_t *k, char *name,
			      size_t len, int32_t i)
{
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	snprintf(name, len, "%s-%04d", k->name, (int)i);
	n.name = name;
	n.alloc.v[MU_RES_CPU] = 64 * 1000;
	n.alloc.v[MU_RES_MEM] = 512LL * 1024 * 1024 * 1024;
	n.alloc.v[MU_RES_GPU] = 8;
	n.alloc.v[MU_RES_PODS] = 110;
	n.gpu_model = k->model;
	return n;
}

/* The jobs of the window with their teams: sp's jobs are `all`'s jobs
 * submitted in the window, in the same order (mu_philly_build). */
static int load_jobs(world_t *w, const mu_specs_t *all, const mu_specs_t *sp)
{
	mu_time_t from = w->ev->win.from_s * SEC, to = w->ev->win.to_s * SEC;
	w->jobs = calloc(sp->njobs ? sp->njobs : 1, sizeof *w->jobs);
	w->teams = calloc(all->nqueues + 1, sizeof *w->teams);
	if (!w->jobs || !w->teams)
		return MU_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < all->njobs && k < sp->njobs; i++) {
		const mu_job_spec_t *src = &all->jobs[i];
		if (src->submit < from || src->submit >= to)
			continue;
		fj_t *x = &w->jobs[k];
		int32_t t = 0;
		while (t < w->ev->nteams && strcmp(w->teams[t], src->queue) != 0)
			t++;
		if (t == w->ev->nteams) {
			if ((size_t)t >= all->nqueues + 1)
				return MU_ELIMIT;
			snprintf(w->teams[t], sizeof w->teams[t], "%s", src->queue);
			w->ev->nteams++;
		}
		x->spec = sp->jobs[k];
		x->spec.queue = w->teams[t];
		x->spec.preemptible = true;
		x->team = t;
		x->gpus = spec_gpus(&x->spec);
		x->fspec.job = &x->spec;
		k++;
	}
	w->njobs = (int32_t)k;
	return MU_OK;
}

/* static: teams by work, each to the private cluster least loaded by
 * work per GPU so far. */
static int assign_teams(world_t *w)
{
	int32_t nt = w->ev->nteams;
	double *work = calloc((size_t)nt + 1, sizeof *work), load[NC] = {0};
	w->team_cluster = calloc((size_t)nt + 1, sizeof *w->team_cluster);
	if (!work || !w->team_cluster) {
		free(work);
		return MU_ENOMEM;
	}
	for (int32_t j = 0; j < w->njobs; j++)
		work[w->jobs[j].team] += (double)w->jobs[j].gpus * (double)w->jobs[j].spec.duration;
	for (int32_t done = 0; done < nt; done++) {
		int32_t t = -1;
		for (int32_t i = 0; i < nt; i++)
			if (work[i] >= 0 && (t < 0 || work[i] > work[t]))
				t = i;
		int32_t best = 0;
		for (int32_t c = 1; c < NC - 1; c++)
			if ((load[c] + work[t]) / w->ev->clusters[c].gpus <
			    (load[best] + work[t]) / w->ev->clusters[best].gpus)
				best = c;
		load[best] += work[t];
		w->team_cluster[t] = best;
		w->ev->clusters[best].teams++;
		work[t] = -1;
	}
	free(work);
	return MU_OK;
}

/* The cluster engines (every team a queue) or the fleet (every team a hub
 * queue deserving its share of work of the private GPUs). */
static int build_world(world_t *w)
{
	char name[64];
	mu_engine_config_t ec;
	mu_engine_config_defaults(&ec);
	ec.preemption = ec.reclaim = ec.consolidate = false;
	ec.seed = w->ev->opts.philly.seed;
	mu_fleet_config_t fc;
	mu_fleet_config_defaults(&fc);
	fc.burst_after = w->ev->opts.burst_after;
	int rc = w->s == MU_FS_MUSTER ? mu_fleet_new(&fc, &w->fleet) : MU_OK;
	double total = 0, *work = calloc((size_t)w->ev->nteams + 1, sizeof *work);
	if (!work)
		return MU_ENOMEM;
	for (int32_t j = 0; j < w->njobs; j++) {
		double x = (double)w->jobs[j].gpus * (double)w->jobs[j].spec.duration;
		work[w->jobs[j].team] += x;
		total += x;
	}
	int64_t private_gpus = 0;
	for (int32_t c = 0; c < NC - 1; c++)
		private_gpus += w->ev->clusters[c].gpus;
	for (int32_t c = 0; rc == MU_OK && c < NC; c++) {
		const mu_fleet_eval_cluster_t *k = &w->ev->clusters[c];
		int32_t id = c;
		if (w->fleet) {
			mu_cluster_spec_t cs = {.name = k->name,
				.tier = k->public_ ? MU_TIER_PUBLIC : MU_TIER_PRIVATE,
				.cost_gpu_hour = k->public_ ? w->ev->opts.public_cost : 0};
			rc = mu_fleet_cluster_add(w->fleet, &cs, &id);
		} else {
			rc = mu_engine_new(&ec, &w->eng[c]);
		}
		for (int32_t i = 0; rc == MU_OK && i < k->nodes; i++) {
			mu_node_spec_t n = node_of(k, name, sizeof name, i);
			rc = w->fleet ? mu_fleet_node_upsert(w->fleet, id, &n) :
				mu_engine_node_upsert(w->eng[c], &n, NULL);
		}
	}
	for (int32_t t = 0; rc == MU_OK && t < w->ev->nteams; t++) {
		mu_queue_spec_t q;
		mu_queue_spec_defaults(&q);
		q.name = w->teams[t];
		if (w->fleet) {
			q.deserved.v[MU_RES_GPU] = total > 0 ?
				llround(work[t] / total * (double)private_gpus) * 1000 : 0;
			rc = mu_fleet_queue_upsert(w->fleet, &q);
		}
		for (int32_t c = 0; !w->fleet && rc == MU_OK && c < NC; c++)
			rc = mu_engine_queue_upsert(w->eng[c], &q);
	}
	free(work);
	return rc;
}

static void world_release(world_t *w)
{
	for (int32_t c = 0; c < NC; c++) {
		mu_engine_free(w->eng[c]);
		free(w->emap[c]);
		w->eng[c] = NULL;
		w->emap[c] = NULL;
		w->emap_cap[c] = 0;
	}
	mu_fleet_free(w->fleet);
	w->fleet = NULL;
	free(w->heap);
	free(w->wait);
	free(w->hub2job);
	w->heap = NULL;
	w->wait = NULL;
	w->hub2job = NULL;
	mu_decisions_release(&w->dec);
	mu_fleet_decisions_release(&w->fdec);
}

/* --- one run ------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The gang-size bucket of a job of g GPUs. */
static int bucket_of(int64_t g)
{
	return g <= 1 ? 0 : g <= 4 ? 1 : g <= 8 ? 2 : g <= 16 ? 3 : 4;
}

/* Fills the run's figures from the jobs' starts and ends. */
static int reduce(world_t *w, mu_fleet_eval_run_t *r)
{
	double *jct = malloc(((size_t)w->njobs + 1) * sizeof *jct);
	double *wt = malloc(((size_t)w->njobs + 1) * sizeof *wt);
	if (!jct || !wt) {
		free(jct);
		free(wt);
		return MU_ENOMEM;
	}
	mu_time_t last = 0;
	double used[NC] = {0}, sum = 0;
	size_t n = 0;
	for (int32_t j = 0; j < w->njobs; j++) {
		const fj_t *x = &w->jobs[j];
		if (x->start == MU_TIME_NONE) {
			r->never++;
			continue;
		}
		last = x->end > last ? x->end : last;
		jct[n++] = (double)(x->end - x->spec.submit) / SEC;
		sum += jct[n - 1];
		double gh = (double)x->gpus * (double)(x->end - x->start) / 3600e3;
		used[x->cluster] += gh;
		if (w->ev->clusters[x->cluster].public_)
			r->public_gpu_h += gh;
	}
	r->jobs = w->njobs;
	r->completed = (int64_t)n;
	qsort(jct, n, sizeof *jct, cmp_double);
	r->jct_mean_s = n ? sum / (double)n : 0;
	r->jct_p50_s = mu_percentile(jct, n, 50);
	r->jct_p99_s = mu_percentile(jct, n, 99);
	r->makespan_s = (double)last / SEC;
	r->cost = r->public_gpu_h * w->ev->opts.public_cost;
	for (int32_t c = 0; c < NC; c++)
		r->util[c] = last > 0 ? used[c] / ((double)w->ev->clusters[c].gpus *
						   (double)last / 3600e3) : 0;
	for (int b = 0; b < MU_FLEET_EVAL_BUCKETS; b++) {
		size_t m = 0;
		double s = 0;
		for (int32_t j = 0; j < w->njobs; j++) {
			const fj_t *x = &w->jobs[j];
			if (x->start == MU_TIME_NONE || bucket_of(x->gpus) != b)
				continue;
			wt[m++] = (double)(x->start - x->spec.submit) / SEC;
			s += wt[m - 1];
		}
		qsort(wt, m, sizeof *wt, cmp_double);
		r->bucket_jobs[b] = (int64_t)m;
		r->wait_mean_s[b] = m ? s / (double)m : 0;
		r->wait_p99_s[b] = mu_percentile(wt, m, 99);
	}
	free(jct);
	free(wt);
	return MU_OK;
}

static int cmp_submit(const void *a, const void *b, const fj_t *jobs)
{
	mu_time_t x = jobs[*(const int32_t *)a].spec.submit;
	mu_time_t y = jobs[*(const int32_t *)b].spec.submit;
	if (x != y)
		return x < y ? -1 : 1;
	return (*(const int32_t *)a > *(const int32_t *)b) -
	       (*(const int32_t *)a < *(const int32_t *)b);
}

/* Arrival order: an insertion-free merge sort by submit time, then index
 * (qsort has no context argument in C11).  O(n log n). */
static void sort_arrivals(int32_t *v, int32_t *tmp, int32_t n, const fj_t *jobs)
{
	if (n < 2)
		return;
	int32_t h = n / 2;
	sort_arrivals(v, tmp, h, jobs);
	sort_arrivals(v + h, tmp, n - h, jobs);
	int32_t i = 0, k = h, o = 0;
	while (i < h && k < n)
		tmp[o++] = cmp_submit(&v[i], &v[k], jobs) <= 0 ? v[i++] : v[k++];
	while (i < h)
		tmp[o++] = v[i++];
	while (k < n)
		tmp[o++] = v[k++];
	memcpy(v, tmp, (size_t)n * sizeof *v);
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The event loop: completions, then arrivals, then one decision, at every
 * event time.  order: jobs by submit.  scratch: 3 x (njobs + 1) int32. */
static int run_loop(world_t *w, const int32_t *order, int32_t *scratch)
{
	int32_t *started = scratch, *list = scratch + w->njobs + 1;
	unsigned *mask = (unsigned *)(scratch + 2 * ((size_t)w->njobs + 1));
	int32_t next = 0;
	int rc = MU_OK;
	while (rc == MU_OK && (next < w->njobs || w->nheap > 0)) {
		mu_time_t t = next < w->njobs ? w->jobs[order[next]].spec.submit : INT64_MAX;
		if (w->nheap && w->heap[0].t < t)
			t = w->heap[0].t;
		while (rc == MU_OK && w->nheap && w->heap[0].t == t)
			rc = complete(w, heap_pop(w).job, t);
		while (rc == MU_OK && next < w->njobs && w->jobs[order[next]].spec.submit == t)
			rc = arrive(w, order[next++], t);
		if (rc == MU_OK)
			rc = decide(w, t, started, list, mask);
	}
	return rc;
}

/* Runs strategy s on the jobs in w into r. */
static int run_one(world_t *w, mu_fleet_strategy_t s, const int32_t *order,
		   int32_t *scratch, mu_fleet_eval_run_t *r)
{
	double t0 = wall_now();
	memset(r, 0, sizeof *r);
	r->strategy = s;
	w->s = s;
	w->run = r;
	w->rng = w->ev->opts.philly.seed * 2654435761u + 88172645463325252ull;
	w->nheap = w->nwait = 0;
	memset(w->pend_gpus, 0, sizeof w->pend_gpus);
	for (int32_t j = 0; j < w->njobs; j++) {
		fj_t *x = &w->jobs[j];
		x->start = x->end = MU_TIME_NONE;
		x->cluster = -1;
		x->hub = -1;
		for (int32_t c = 0; c < NC; c++)
			x->eid[c] = -1;
	}
	memset(scratch, 0, 3 * ((size_t)w->njobs + 1) * sizeof *scratch);
	w->heap = malloc(((size_t)w->njobs + 1) * sizeof *w->heap);
	w->wait = malloc(((size_t)w->njobs + 1) * sizeof *w->wait);
	w->hub2job = malloc(((size_t)w->njobs + 1) * sizeof *w->hub2job);
	mu_decisions_init(&w->dec);
	mu_fleet_decisions_init(&w->fdec);
	int rc = w->heap && w->wait && w->hub2job ? build_world(w) : MU_ENOMEM;
	if (rc == MU_OK)
		rc = run_loop(w, order, scratch);
	if (rc == MU_OK)
		rc = reduce(w, r);
	world_release(w);
	r->wall_s = wall_now() - t0;
	return rc;
}

int mu_fleet_eval(const mu_specs_t *all, const mu_fleet_eval_opts_t *o,
		  mu_fleet_eval_t *ev, mu_diag_t *diag)
{
	double t0 = wall_now();
	memset(ev, 0, sizeof *ev);
	ev->opts = *o;
	mu_specs_t sp;
	mu_specs_init(&sp);
	world_t w;
	memset(&w, 0, sizeof w);
	w.ev = ev;
	int rc = mu_philly_build(all, &o->philly, &sp, &ev->win, diag);
	if (rc == MU_OK) {
		size_clusters(ev);
		rc = load_jobs(&w, all, &sp);
	}
	if (rc == MU_OK)
		rc = assign_teams(&w);
	int32_t *order = malloc(((size_t)w.njobs + 1) * sizeof *order);
	int32_t *scratch = malloc(3 * ((size_t)w.njobs + 1) * sizeof *scratch);
	if (rc == MU_OK && (!order || !scratch))
		rc = MU_ENOMEM;
	if (rc == MU_OK) {
		for (int32_t j = 0; j < w.njobs; j++)
			order[j] = j;
		sort_arrivals(order, scratch, w.njobs, w.jobs);
	}
	for (int s = 0; rc == MU_OK && s < MU_FS_COUNT; s++) {
		if (o->philly.progress)
			o->philly.progress(o->philly.progress_ctx, (size_t)s, MU_FS_COUNT,
					   mu_fleet_strategy_name((mu_fleet_strategy_t)s), 0);
		rc = run_one(&w, (mu_fleet_strategy_t)s, order, scratch, &ev->runs[s]);
		ev->nruns += rc == MU_OK;
	}
	if (rc && diag && !diag->msg[0])
		mu__diag(diag, rc, "fleet", 0, 0, "%s", mu_strerror(rc));
	free(order);
	free(scratch);
	free(w.jobs);
	free(w.teams);
	free(w.team_cluster);
	mu_specs_release(&sp);
	ev->wall_s = wall_now() - t0;
	return rc;
}

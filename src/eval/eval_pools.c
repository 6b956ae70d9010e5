/*
 * eval_pools.c - `muster eval pools` (protocol in include/muster/eval_pools.h
 * and docs/evaluation.md, "Node pools").
 *
 * The cluster is the openb node list; each GPU model is a pool (a label
 * muster.io/gpu-pool on its nodes and a NodePool selecting it).  The jobs
 * are the busiest window of the Philly trace (mu_philly_build, 1 GPU per
 * pod), submit times scaled so that their work is the target load on the
 * openb GPUs.  The four virtual clusters with the most work are teams and
 * the rest one team "other"; a team's quota share is its share of the work.
 * Each team has a home pool (the largest pools, in turn); a share `home` of
 * its jobs prefer it, the others a pool drawn by GPUs.  Three runs differ in
 * quotas and in the pools jobs name (mu_evp_mode_t).  A hook after every
 * cycle integrates each pool's GPUs in use and notes, for every job that
 * starts, whether its pool was its first choice.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "muster/eval_philly.h"
#include "muster/eval_pools.h"

#define SEC 1000

const char *mu_evp_mode_name(mu_evp_mode_t m)
{
	static const char *const n[] = {"fallback", "pooled", "strict"};
	return m < MU_EVP_NMODES ? n[m] : "?";
}

void mu_evp_opts_defaults(mu_evp_opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->days = 7;
	o->load = 1.0;
	o->home = 0.6;
	o->cap = 6 * 3600 * SEC;
	o->seed = 1;
}

void mu_evp_opts_quick(mu_evp_opts_t *o)
{
	o->days = 0.25;
	o->cap = 2 * 3600 * SEC;
}

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* What the whole evaluation builds once: the specs of every run differ
 * only in queues and job pool lists. */
typedef struct evp {
	mu_specs_t sp;             /* nodes (openb, labelled), pools, jobs */
	mu_evp_result_t *r;
	int32_t *team_of;          /* per job */
	int32_t *pref;             /* per job: preferred pool */
	const char **order[MU_EVP_MAXPOOLS]; /* per preferred pool: all pools,
	                                      * it first, then by GPUs */
	const char *pool_names[MU_EVP_MAXPOOLS];
} evp_t;

/* The pool name of a GPU model: lower case. */
static void pool_name(const char *model, char *out, size_t len)
{
	size_t i = 0;
	for (; model[i] && i + 1 < len; i++)
		out[i] = (char)tolower((unsigned char)model[i]);
	out[i] = 0;
}

/* Copies the openb GPU nodes into e->sp with their pool label, and makes
 * the pools, largest first.  O(nodes x pools). */
static int build_nodes(evp_t *e, const mu_specs_t *nodes, mu_diag_t *diag)
{
	mu_evp_result_t *r = e->r;
	for (size_t i = 0; i < nodes->nnodes; i++) {
		const mu_node_spec_t *src = &nodes->nodes[i];
		if (!src->gpu_model || src->alloc.v[MU_RES_GPU] <= 0)
			continue;
		char pn[24];
		pool_name(src->gpu_model, pn, sizeof pn);
		int32_t p = 0;
		while (p < r->npools && strcmp(r->pools[p].name, pn))
			p++;
		if (p == r->npools) {
			if (r->npools == MU_EVP_MAXPOOLS)
				return mu__diag(diag, MU_ELIMIT, "nodes", 0, 0, "more than %d "
						"GPU models", MU_EVP_MAXPOOLS);
			snprintf(r->pools[r->npools++].name, sizeof r->pools[0].name, "%s", pn);
		}
		r->pools[p].gpus += src->alloc.v[MU_RES_GPU];
		r->pools[p].nodes++;
		mu_node_spec_t *n = mu_specs_add_node(&e->sp);
		mu_label_t *l = n ? mu_arena_alloc(&e->sp.arena, (src->nlabels + 1) * sizeof *l) : NULL;
		const char *v = l ? mu_arena_strdup(&e->sp.arena, pn) : NULL;
		if (!v)
			return MU_ENOMEM;
		*n = *src;
		if (src->nlabels)
			memcpy(l, src->labels, src->nlabels * sizeof *l);
		l[src->nlabels] = (mu_label_t){"muster.io/gpu-pool", v};
		n->labels = l;
		n->nlabels = src->nlabels + 1;
		r->gpus += src->alloc.v[MU_RES_GPU];
	}
	if (!r->npools)
		return mu__diag(diag, MU_EINVAL, "nodes", 0, 0, "no GPU node with a "
				"GPU model (expected the openb node list)");
	/* largest first (a stable insertion sort of a few entries) */
	for (int32_t i = 1; i < r->npools; i++)
		for (int32_t k = i; k > 0 && r->pools[k].gpus > r->pools[k - 1].gpus; k--) {
			mu_evp_pool_t t = r->pools[k];
			r->pools[k] = r->pools[k - 1];
			r->pools[k - 1] = t;
		}
	for (int32_t p = 0; p < r->npools; p++) {
		mu_pool_spec_t *ps = mu_specs_add_pool(&e->sp);
		mu_label_t *m = ps ? mu_arena_alloc(&e->sp.arena, sizeof *m) : NULL;
		const char *nm = m ? mu_arena_strdup(&e->sp.arena, r->pools[p].name) : NULL;
		if (!nm)
			return MU_ENOMEM;
		*m = (mu_label_t){"muster.io/gpu-pool", nm};
		*ps = (mu_pool_spec_t){.name = nm, .match = m, .nmatch = 1};
		e->pool_names[p] = nm;
	}
	return MU_OK;
}

/* Teams from the Philly virtual clusters of the window's jobs (the top
 * MU_EVP_MAXTEAMS - 1 by work, then "other"), each job's team and its
 * preferred pool.  `all` is the Philly load the window was copied from
 * (same order, same name pointers). */
static int build_teams(evp_t *e, const mu_specs_t *all, const mu_evp_opts_t *o)
{
	mu_evp_result_t *r = e->r;
	size_t n = e->sp.njobs;
	const char **vc = calloc(n ? n : 1, sizeof *vc);
	double *work = calloc(n ? n : 1, sizeof *work);
	e->team_of = calloc(n ? n : 1, sizeof *e->team_of);
	e->pref = calloc(n ? n : 1, sizeof *e->pref);
	if (!vc || !work || !e->team_of || !e->pref) {
		free(vc);
		free(work);
		return MU_ENOMEM;
	}
	size_t k = 0, nvc = 0;
	const char **names = calloc(n ? n : 1, sizeof *names);
	if (!names) {
		free(vc);
		free(work);
		return MU_ENOMEM;
	}
	double total = 0;
	for (size_t i = 0; i < n; i++) {
		const mu_job_spec_t *j = &e->sp.jobs[i];
		for (size_t tries = 0; tries < all->njobs && all->jobs[k].name != j->name; tries++)
			k = (k + 1) % all->njobs;
		vc[i] = all->jobs[k].queue;
		double w = (double)mu_job_spec_pods(j) * (double)j->duration;
		size_t v = 0;
		while (v < nvc && strcmp(names[v], vc[i]))
			v++;
		if (v == nvc)
			names[nvc++] = vc[i];
		work[v] += w;
		total += w;
	}
	/* the top VCs by work become teams; the rest "other" */
	int32_t named = 0;
	int32_t *team_vc = calloc(nvc ? nvc : 1, sizeof *team_vc);
	if (!team_vc) {
		free(vc);
		free(work);
		free(names);
		return MU_ENOMEM;
	}
	for (size_t v = 0; v < nvc; v++)
		team_vc[v] = -1;
	while (named < MU_EVP_MAXTEAMS - 1) {
		size_t best = nvc;
		for (size_t v = 0; v < nvc; v++)
			if (team_vc[v] < 0 && (best == nvc || work[v] > work[best]))
				best = v;
		if (best == nvc)
			break;
		team_vc[best] = named;
		snprintf(r->teams[named].name, sizeof r->teams[0].name, "%s", names[best]);
		r->teams[named].share = total > 0 ? work[best] / total : 0;
		named++;
	}
	int32_t other = named;
	double rest = 0;
	for (size_t v = 0; v < nvc; v++)
		if (team_vc[v] < 0) {
			team_vc[v] = other;
			rest += work[v];
		}
	r->nteams = named + (rest > 0);
	if (rest > 0) {
		snprintf(r->teams[other].name, sizeof r->teams[0].name, "other");
		r->teams[other].share = rest / total;
	}
	for (int32_t t = 0; t < r->nteams; t++) /* homes: the largest pools in turn */
		memcpy(r->teams[t].home, r->pools[t % (r->npools > 1 ? r->npools - 1 : 1)].name,
		       sizeof r->teams[0].home);
	for (size_t i = 0; i < n; i++) {
		size_t v = 0;
		while (strcmp(names[v], vc[i]))
			v++;
		int32_t t = team_vc[v];
		e->team_of[i] = t;
		int32_t gpus = mu_job_spec_pods(&e->sp.jobs[i]);
		uint64_t h = mix64(o->seed * 1000003u + i);
		int32_t p = t % (r->npools > 1 ? r->npools - 1 : 1);
		if ((double)(h >> 11) / 9007199254740992.0 >= o->home) {
			double x = (double)(mix64(h) >> 11) / 9007199254740992.0 * (double)r->gpus;
			for (p = 0; p < r->npools - 1 && x >= (double)r->pools[p].gpus; p++)
				x -= (double)r->pools[p].gpus;
		}
		while (p > 0 && r->pools[p].gpus < gpus) /* a pool that can hold it */
			p--;
		e->pref[i] = p;
	}
	free(team_vc);
	free(names);
	free(vc);
	free(work);
	return MU_OK;
}

/* The pool lists: for each preferred pool, it first, then every other pool
 * largest first. */
static int build_orders(evp_t *e)
{
	int32_t np = e->r->npools;
	for (int32_t p = 0; p < np; p++) {
		const char **l = mu_arena_alloc(&e->sp.arena, (size_t)np * sizeof *l);
		if (!l)
			return MU_ENOMEM;
		l[0] = e->pool_names[p];
		for (int32_t q = 0, k = 1; q < np; q++)
			if (q != p)
				l[k++] = e->pool_names[q];
		e->order[p] = l;
	}
	return MU_OK;
}

/* Queues and job pool lists for mode m (into e->sp, replacing the last
 * mode's). */
static int set_mode(evp_t *e, mu_evp_mode_t m, mu_pool_quota_t *pq)
{
	mu_evp_result_t *r = e->r;
	e->sp.nqueues = 0;
	for (int32_t t = 0; t < r->nteams; t++) {
		mu_queue_spec_t *q = mu_specs_add_queue(&e->sp);
		if (!q)
			return MU_ENOMEM;
		q->name = r->teams[t].name;
		q->deserved.v[MU_RES_GPU] = llround(r->teams[t].share * (double)r->gpus * 1000);
		q->limit.v[MU_RES_GPU] = MU_RES_UNLIMITED;
		if (m != MU_EVP_POOLED) {
			mu_pool_quota_t *x = &pq[t * MU_EVP_MAXPOOLS];
			for (int32_t p = 0; p < r->npools; p++)
				x[p] = (mu_pool_quota_t){.pool = e->pool_names[p],
					.deserved = llround(r->teams[t].share * (double)r->pools[p].gpus) * 1000,
					.limit = MU_RES_UNLIMITED, .weight = -1};
			q->pools = x;
			q->npools = (size_t)r->npools;
		}
	}
	for (size_t i = 0; i < e->sp.njobs; i++) {
		mu_job_spec_t *j = &e->sp.jobs[i];
		j->queue = r->teams[e->team_of[i]].name;
		j->pools = m == MU_EVP_POOLED ? NULL : e->order[e->pref[i]];
		j->npools = m == MU_EVP_POOLED ? 0 : m == MU_EVP_STRICT ? 1 : (size_t)r->npools;
	}
	return MU_OK;
}

/* The hook's state: pool usage integrated, first starts noted. */
typedef struct hook {
	evp_t *e;
	mu_evp_run_t *run;
	mu_time_t last, window;
	double used[MU_EVP_MAXPOOLS], acc[MU_EVP_MAXPOOLS];
	uint8_t *seen;            /* per engine job id */
	int32_t nseen;
	int32_t *pool_of;         /* engine pool index -> result pool */
} hook_t;

static void on_decisions(void *ctx, const mu_engine_t *eng, const mu_decisions_t *d,
			 mu_time_t now)
{
	hook_t *h = ctx;
	mu_evp_result_t *r = h->e->r;
	mu_time_t until = now < h->window ? now : h->window;
	if (until > h->last)
		for (int32_t p = 0; p < r->npools; p++)
			h->acc[p] += h->used[p] * (double)(until - h->last);
	if (until > h->last)
		h->last = until;
	for (int32_t p = 0; p < mu_engine_npools(eng) && p < MU_EVP_MAXPOOLS; p++) {
		mu_pool_info_t pi;
		mu_engine_pool_info(eng, p, &pi);
		h->used[p] = (double)pi.used / 1000.0; /* pools were added in order */
	}
	for (size_t i = 0; i < d->n; i++) {
		const mu_decision_t *x = &d->v[i];
		if (x->kind != MU_DEC_BIND || x->job < 0 || x->job >= h->nseen || h->seen[x->job])
			continue;
		mu_job_info_t ji;
		if (mu_engine_job_info(eng, x->job, &ji) || ji.state != MU_JOB_RUNNING)
			continue;
		h->seen[x->job] = 1;
		h->run->started_all++;
		if (ji.npools && ji.pool_rank > 0)
			h->run->fallback++;
		if (!ji.npools) { /* pooled: was it its preferred pool? */
			int32_t np = mu_engine_node_pool(eng, x->node);
			const char *want = NULL;
			for (size_t k = 0; k < h->e->sp.njobs && !want; k++)
				if (!strcmp(h->e->sp.jobs[k].name, ji.name))
					want = h->e->pool_names[h->e->pref[k]];
			mu_pool_info_t pi;
			if (np >= 0 && want && mu_engine_pool_info(eng, np, &pi) == MU_OK &&
			    strcmp(pi.name, want))
				h->run->off_home++;
		}
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One mode: its queues and pools lists, the simulation, the figures. */
static int run_mode(evp_t *e, mu_evp_mode_t m, const mu_evp_opts_t *o, mu_diag_t *diag)
{
	mu_evp_result_t *r = e->r;
	mu_evp_run_t *run = &r->runs[m];
	memset(run, 0, sizeof *run);
	run->mode = m;
	mu_pool_quota_t *pq = calloc(MU_EVP_MAXTEAMS * MU_EVP_MAXPOOLS, sizeof *pq);
	hook_t h = {.e = e, .run = run, .window = llround(r->window_s * SEC)};
	h.nseen = (int32_t)e->sp.njobs + 1;
	h.seen = calloc((size_t)h.nseen, 1);
	if (!pq || !h.seen) {
		free(pq);
		free(h.seen);
		return MU_ENOMEM;
	}
	int rc = set_mode(e, m, pq);
	mu_sim_config_t cfg;
	mu_sim_config_defaults(&cfg);
	cfg.seed = o->seed;
	cfg.on_decisions = on_decisions;
	cfg.on_decisions_ctx = &h;
	cfg.keep_jobs = true; /* h.seen is by engine job id */
	cfg.horizon = h.window * 3; /* jobs that cannot start do not hold the run */
	mu_sim_result_t res;
	memset(&res, 0, sizeof res);
	if (rc == MU_OK)
		rc = mu_sim_run(&e->sp, &cfg, &res, diag);
	if (rc == MU_OK) {
		double all = 0, cap = 0;
		for (int32_t p = 0; p < r->npools; p++) {
			double c = (double)r->pools[p].gpus * r->window_s * SEC;
			run->util[p] = c > 0 ? h.acc[p] / c : 0;
			all += h.acc[p];
			cap += c;
		}
		run->util_all = cap > 0 ? all / cap : 0;
		run->engine_s = res.summary.engine_s;
		double *w = calloc(res.njobs ? res.njobs : 1, sizeof *w);
		if (!w)
			rc = MU_ENOMEM;
		for (int32_t t = 0; w && t < r->nteams; t++) {
			size_t nw = 0;
			double sum = 0;
			for (size_t i = 0; i < res.njobs; i++) {
				if (strcmp(res.jobs[i].queue, r->teams[t].name))
					continue;
				run->jobs[t]++;
				if (res.jobs[i].start_s < 0)
					continue;
				w[nw] = res.jobs[i].start_s - res.jobs[i].submit_s;
				sum += w[nw++];
			}
			run->started[t] = (int64_t)nw;
			qsort(w, nw, sizeof *w, cmp_d);
			run->wait_mean_s[t] = nw ? sum / (double)nw : 0;
			run->wait_p95_s[t] = mu_percentile(w, nw, 95);
		}
		free(w);
	}
	mu_sim_result_release(&res);
	free(pq);
	free(h.seen);
	return rc;
}

int mu_evp_run(const mu_specs_t *nodes, const mu_specs_t *philly,
	       const mu_evp_opts_t *o, mu_evp_result_t *out, mu_diag_t *diag)
{
	memset(out, 0, sizeof *out);
	evp_t e = {.r = out};
	mu_specs_init(&e.sp);
	mu_specs_t win;
	mu_specs_init(&win);
	mu_philly_opts_t po;
	mu_philly_opts_defaults(&po);
	po.days = o->days;
	po.load = o->load;
	po.cap = o->cap;
	po.gpus_per_node = 1;
	mu_philly_window_t w;
	int rc = build_nodes(&e, nodes, diag);
	if (rc == MU_OK)
		rc = mu_philly_build(philly, &po, &win, &w, diag);
	/* The window's jobs, their arrivals rescaled from its sized cluster to
	 * the openb GPUs at the same load. */
	double f = rc == MU_OK && out->gpus ? (double)w.gpus / (double)out->gpus : 1;
	for (size_t i = 0; rc == MU_OK && i < win.njobs; i++) {
		mu_job_spec_t *j = mu_specs_add_job(&e.sp);
		if (!j) {
			rc = MU_ENOMEM;
			break;
		}
		*j = win.jobs[i];
		j->submit = llround((double)j->submit * f);
	}
	if (rc == MU_OK) {
		out->jobs = (int64_t)e.sp.njobs;
		out->window_s = (double)w.span * f / SEC;
		out->offered = w.offered;
		rc = build_teams(&e, philly, o);
	}
	if (rc == MU_OK)
		rc = build_orders(&e);
	for (int m = 0; rc == MU_OK && m < MU_EVP_NMODES; m++) {
		if (o->progress)
			o->progress(o->progress_ctx, m, 0);
		rc = run_mode(&e, (mu_evp_mode_t)m, o, diag);
	}
	if (rc && diag && !diag->msg[0])
		mu__diag(diag, rc, "eval pools", 0, 0, "%s", mu_strerror(rc));
	free(e.team_of);
	free(e.pref);
	mu_specs_release(&e.sp);
	mu_specs_release(&win);
	return rc;
}

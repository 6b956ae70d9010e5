/*
 * sim.c - the discrete-event simulator.
 *
 * Events are job arrivals (from the specs' submit times), job completions
 * (start + duration) and scheduling cycles.  At each event time the
 * simulator applies every arrival and completion due, then runs a cycle (at
 * once, or on the next tick of cycle_interval), and reads the engine's
 * decisions back.  Pods with DRA claims get their devices around each
 * cycle as in scenario runs (scn_dra.c).  Everything is deterministic: the
 * seed only permutes jobs that arrive at the same instant.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "muster/sim.h"
#include "muster/util.h"
#include "scn_dra.h"

/* Per-job state of a run, indexed like the sorted arrival order. */
typedef struct sim_job {
	const mu_job_spec_t *spec;
	mu_id_t id;          /* engine id, -1 before arrival */
	mu_time_t start, end; /* first start, end */
	mu_time_t run_start; /* start of the current run */
	double remaining;    /* work left, in ms at full speed */
	double rate;         /* current speed: (bound/pods)^speedup_exp */
	mu_time_t settled;   /* when remaining was last brought up to date */
	int32_t bound;       /* pods bound now */
	int32_t moves;
	bool dirty, moved;   /* touched by this cycle's decisions */
	bool waits;          /* this cycle evicted others for it: it starts
	                      * once they are gone (cfg->evict_grace) */
	int32_t epoch;       /* bumped on suspension: stale completions */
	int32_t preemptions;
	mu_time_t held;      /* time its gang held resources, past runs */
	bool running;
	uint64_t tiebreak;
} sim_job_t;

/* A state change, for the time series. */
typedef struct sim_point {
	mu_time_t t;
	int64_t used_gpu;    /* milli */
	int32_t pending, running;
} sim_point_t;

/* Min-heap of (end time, job index, job epoch). */
typedef struct sim_heap {
	mu_time_t *t;
	int32_t *j;
	int32_t *ep;
	size_t n, cap;
} sim_heap_t;

typedef struct sim {
	const mu_sim_config_t *cfg;
	mu_engine_t *eng;
	sim_job_t *jobs;
	size_t njobs, next_arrival;
	int32_t *by_id;      /* engine id -> job index */
	sim_heap_t done;
	sim_point_t *pts;
	size_t npts, pts_cap;
	int32_t pending, running;
	mu_decisions_t dec;
	int32_t *dirty;      /* jobs touched by the current cycle */
	size_t ndirty;
	mu_time_t now;
	int64_t preemptions, moves, cycles;
	double engine_s;
	/* Fair share per spec queue: GPUs at the last cycle, and its integral
	 * (GPU-seconds) up to fair_at. */
	double *fair_now, *fair_gs;
	mu_time_t fair_at;
	const mu_specs_t *sp;
	/* DRA claims (scn_dra.c, as the scenario runner gives them), NULL
	 * when the input has none; ids and finished per spec job for it. */
	mu__sdra_t *dra;
	mu_id_t *dra_ids;
	bool *dra_fin;
} sim_t;

void mu_sim_config_defaults(mu_sim_config_t *c)
{
	memset(c, 0, sizeof *c);
	c->seed = 1;
	mu_engine_config_defaults(&c->engine);
}

static int heap_push(sim_heap_t *h, mu_time_t t, int32_t j, int32_t ep)
{
	if (h->n == h->cap) {
		size_t ncap = h->cap ? h->cap * 2 : 256;
		mu_time_t *nt = realloc(h->t, ncap * sizeof *nt);
		if (!nt)
			return MU_ENOMEM;
		h->t = nt;
		int32_t *nj = realloc(h->j, ncap * sizeof *nj);
		if (!nj)
			return MU_ENOMEM;
		h->j = nj;
		int32_t *ne = realloc(h->ep, ncap * sizeof *ne);
		if (!ne)
			return MU_ENOMEM;
		h->ep = ne;
		h->cap = ncap;
	}
	size_t i = h->n++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (h->t[p] < t || (h->t[p] == t && h->j[p] <= j))
			break;
		h->t[i] = h->t[p];
		h->j[i] = h->j[p];
		h->ep[i] = h->ep[p];
		i = p;
	}
	h->t[i] = t;
	h->j[i] = j;
	h->ep[i] = ep;
	return MU_OK;
}

static void heap_pop(sim_heap_t *h)
{
	mu_time_t t = h->t[--h->n];
	int32_t j = h->j[h->n];
	int32_t ep = h->ep[h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && (h->t[c + 1] < h->t[c] ||
				     (h->t[c + 1] == h->t[c] && h->j[c + 1] < h->j[c])))
			c++;
		if (t < h->t[c] || (t == h->t[c] && j <= h->j[c]))
			break;
		h->t[i] = h->t[c];
		h->j[i] = h->j[c];
		h->ep[i] = h->ep[c];
		i = c;
	}
	h->t[i] = t;
	h->j[i] = j;
	h->ep[i] = ep;
}

static int cmp_arrival(const void *a, const void *b)
{
	const sim_job_t *x = a, *y = b;
	if (x->spec->submit != y->spec->submit)
		return x->spec->submit < y->spec->submit ? -1 : 1;
	return (x->tiebreak > y->tiebreak) - (x->tiebreak < y->tiebreak);
}

/* Upserts queues parents-first, whatever their order in the specs.
 * O(queues^2) in the worst case, for trees of a few hundred queues. */
static int sim_add_queues(sim_t *s, const mu_specs_t *sp, mu_diag_t *diag)
{
	bool *done = calloc(sp->nqueues ? sp->nqueues : 1, sizeof *done);
	if (!done)
		return MU_ENOMEM;
	size_t left = sp->nqueues;
	int rc = MU_OK;
	while (left && rc == MU_OK) {
		size_t before = left;
		for (size_t i = 0; i < sp->nqueues && rc == MU_OK; i++) {
			const mu_queue_spec_t *q = &sp->queues[i];
			if (done[i] || (q->parent && mu_engine_queue_find(s->eng, q->parent) < 0))
				continue;
			rc = mu_engine_queue_upsert(s->eng, q);
			if (rc)
				mu__diag(diag, rc, "simulate", 0, 0, "queue \"%s\": %s",
					 q->name, mu_strerror(rc));
			done[i] = true;
			left--;
		}
		if (left == before && rc == MU_OK)
			rc = mu__diag(diag, MU_EINVAL, "simulate", 0, 0,
				      "queues have missing or cyclic parents");
	}
	free(done);
	return rc;
}

/* Records the state after the events at s->now. */
static int sim_point(sim_t *s)
{
	mu_res_t used;
	mu_engine_totals(s->eng, NULL, &used);
	if (s->npts && s->pts[s->npts - 1].t == s->now)
		s->npts--;
	if (s->npts == s->pts_cap) {
		size_t ncap = s->pts_cap ? s->pts_cap * 2 : 1024;
		sim_point_t *np = realloc(s->pts, ncap * sizeof *np);
		if (!np)
			return MU_ENOMEM;
		s->pts = np;
		s->pts_cap = ncap;
	}
	int64_t dra_total = 0, dra_used = 0;
	if (s->dra)
		mu__sdra_gpus(s->dra, &dra_total, &dra_used);
	s->pts[s->npts++] = (sim_point_t){s->now, used.v[MU_RES_GPU] + dra_used * 1000, s->pending,
					  s->running};
	return MU_OK;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The speed of a job with `bound` of its pods: (bound/pods)^exp. */
static double sim_rate(const sim_job_t *j)
{
	int32_t pods = mu_job_spec_pods(j->spec);
	double x = pods > 0 ? (double)j->bound / (double)pods : 0;
	double e = j->spec->speedup_exp > 0 ? j->spec->speedup_exp : 1.0;
	return x >= 1.0 ? 1.0 : pow(x, e);
}

/* The configured slowdown of job j in its current placement, clamped to
 * [0.001, 1000]; 1 without a hook or for NaN. */
static double sim_slowdown(const sim_t *s, const sim_job_t *j)
{
	if (!s->cfg->slowdown)
		return 1;
	double f = s->cfg->slowdown(s->cfg->slowdown_ctx, s->eng, j->id);
	return isnan(f) ? 1 : f < 1e-3 ? 1e-3 : f > 1e3 ? 1e3 : f;
}

/* Brings a job up to date after this cycle changed its pods: progress made
 * at the old speed, a restart's checkpoint cost, start or suspension, and
 * its new completion time.  O(log jobs). */
static int sim_settle(sim_t *s, sim_job_t *j)
{
	bool was = j->running, now_running = j->bound > 0;
	/* When its pods really run: after its victims' grace period. */
	mu_time_t t0 = s->now + (j->waits && !was ? s->cfg->evict_grace : 0);
	if (was && s->now > j->settled)
		j->remaining -= (double)(s->now - j->settled) * j->rate;
	if ((was && !now_running) || j->moved) /* suspended, or restarted */
		j->remaining += (double)s->cfg->checkpoint_cost;
	if (j->remaining < 1)
		j->remaining = 1;
	if (was && !now_running) {
		j->held += s->now > j->run_start ? s->now - j->run_start : 0;
		j->preemptions++;
		s->running--;
		s->pending++;
	} else if (!was && now_running) {
		if (j->start == MU_TIME_NONE)
			j->start = t0;
		j->run_start = t0;
		s->pending--;
		s->running++;
	}
	if (j->moved)
		j->moves++;
	j->running = now_running;
	j->rate = now_running ? sim_rate(j) / sim_slowdown(s, j) : 0;
	j->settled = was || !now_running ? s->now : t0;
	j->epoch++;
	j->dirty = j->moved = j->waits = false;
	if (!now_running || j->spec->duration <= 0)
		return MU_OK;
	mu_time_t left = (mu_time_t)(j->remaining / j->rate + 0.5);
	return heap_push(&s->done, j->settled + (left > 0 ? left : 1), (int32_t)(j - s->jobs),
			 j->epoch);
}

/* Adds each queue's fair share since the last call to its integral, up
 * to `to`; with `sample`, reads the new fair shares from the engine.
 * O(queues). */
static void sim_fair(sim_t *s, const mu_specs_t *sp, mu_time_t to, bool sample)
{
	if (!s->fair_now)
		return;
	double dt = s->fair_at ? (double)(to - s->fair_at) / 1000.0 : 0;
	for (size_t q = 0; q < sp->nqueues; q++) {
		s->fair_gs[q] += s->fair_now[q] * (dt > 0 ? dt : 0);
		mu_queue_info_t qi;
		if (sample && mu_engine_queue_info(s->eng, mu_engine_queue_find(s->eng, sp->queues[q].name),
						   &qi) == MU_OK)
			s->fair_now[q] = (double)qi.fair.v[MU_RES_GPU] / 1000.0;
	}
	s->fair_at = to;
}

/* Runs one cycle and applies its decisions: pods bound and evicted per
 * job, then each touched job settled once.  With DRA, the nodes are
 * labelled for the claims before (mu__sdra_prepare) and the binds'
 * claims allocated after (mu__sdra_binds): a bind whose devices another
 * pod of the cycle took is undone, and does not count; *undone says how
 * many were. */
static int sim_cycle(sim_t *s, int *undone)
{
	s->dec.n = 0;
	*undone = 0;
	double t0 = now_s();
	int rc = s->dra ? mu__sdra_prepare(s->dra, s->eng, s->dra_ids, s->dra_fin, s->now) : MU_OK;
	if (rc == MU_OK)
		rc = mu_engine_cycle(s->eng, s->now, &s->dec);
	if (rc == MU_OK && s->dra) {
		*undone = mu__sdra_binds(s->dra, s->eng, s->dra_ids, s->dra_fin, &s->dec, s->now);
		rc = *undone < 0 ? *undone : MU_OK;
	}
	s->engine_s += now_s() - t0;
	s->cycles++;
	if (rc)
		return rc;
	sim_fair(s, s->sp, s->now, true);
	if (s->cfg->on_decisions)
		s->cfg->on_decisions(s->cfg->on_decisions_ctx, s->eng, &s->dec, s->now);
	s->ndirty = 0;
	for (size_t i = 0; i < s->dec.n; i++) {
		const mu_decision_t *d = &s->dec.v[i];
		if (d->kind != MU_DEC_BIND && d->kind != MU_DEC_EVICT)
			continue;
		if (*undone && d->kind == MU_DEC_BIND &&
		    mu_engine_pod_node(s->eng, d->job, d->podset, d->pod) != d->node)
			continue; /* its devices went to another pod */
		int32_t idx = s->by_id[d->job];
		sim_job_t *j = &s->jobs[idx];
		if (d->kind == MU_DEC_EVICT) {
			j->bound--;
			if (d->move) {
				j->moved = true;
				s->moves++;
			} else {
				s->preemptions++;
				if (d->by >= 0) /* the claimant waits for it to go */
					s->jobs[s->by_id[d->by]].waits = true;
			}
		} else {
			j->bound++;
		}
		if (!j->dirty) {
			j->dirty = true;
			s->dirty[s->ndirty++] = idx;
		}
	}
	for (size_t i = 0; i < s->ndirty; i++)
		if ((rc = sim_settle(s, &s->jobs[s->dirty[i]])) != MU_OK)
			return rc;
	return sim_point(s);
}

/* A cycle, and (at most SIM_DRA_AGAIN times) another at once when a bind
 * was undone because two pods of it wanted the same devices, so that the
 * loser is placed where its claims fit now. */
#define SIM_DRA_AGAIN 3
static int sim_cycles(sim_t *s)
{
	int undone = 0, rc = sim_cycle(s, &undone);
	for (int k = 0; rc == MU_OK && undone > 0 && k < SIM_DRA_AGAIN; k++)
		rc = sim_cycle(s, &undone);
	return rc;
}

/* Applies the arrivals and completions due at s->now.  Returns whether
 * anything happened. */
static int sim_events(sim_t *s, bool *any, mu_diag_t *diag)
{
	*any = false;
	while (s->done.n && s->done.t[0] <= s->now) {
		sim_job_t *j = &s->jobs[s->done.j[0]];
		bool stale = s->done.ep[0] != j->epoch;
		heap_pop(&s->done);
		if (stale)
			continue;
		int rc = mu_engine_job_finish(s->eng, j->id, s->now);
		if (rc == MU_OK && !s->cfg->keep_jobs) /* its id goes to a later arrival */
			rc = mu_engine_job_forget(s->eng, j->id);
		if (rc)
			return rc;
		if (s->dra)
			s->dra_fin[j->spec - s->sp->jobs] = true;
		j->end = s->now;
		j->held += s->now - j->run_start;
		j->running = false;
		j->bound = 0;
		s->running--;
		*any = true;
	}
	while (s->next_arrival < s->njobs &&
	       s->jobs[s->next_arrival].spec->submit <= s->now) {
		sim_job_t *j = &s->jobs[s->next_arrival];
		size_t k = (size_t)(j->spec - s->sp->jobs);
		int rc = mu_engine_job_submit(s->eng, s->dra ? mu__sdra_job(s->dra, k) : j->spec, s->now, &j->id);
		if (rc)
			return mu__diag(diag, rc, "simulate", 0, 0, "job \"%s\": %s",
					j->spec->name, mu_strerror(rc));
		char why[600];
		if (s->dra && (s->dra_ids[k] = j->id, rc = mu__sdra_submitted(s->dra, k, why, sizeof why)))
			return mu__diag(diag, rc, "simulate", 0, 0, "%s", why);
		for (size_t p = 0; s->cfg->muster_horizon && p < j->spec->npodsets; p++) {
			const mu_podset_spec_t *ps = &j->spec->podsets[p];
			if (ps->replicas > 0 &&
			    (rc = mu_horizon_seen(s->cfg->muster_horizon, &ps->req, ps->gpu_models,
						  ps->ngpu_models, ps->replicas)))
				return rc;
		}
		s->by_id[j->id] = (int32_t)s->next_arrival;
		s->next_arrival++;
		s->pending++;
		*any = true;
	}
	return MU_OK;
}

/* The event loop.  O(events x cycle cost). */
static int sim_loop(sim_t *s, mu_diag_t *diag)
{
	const mu_sim_config_t *c = s->cfg;
	mu_time_t tick = MU_TIME_NONE;
	size_t last_progress = 0;
	for (;;) {
		mu_time_t next = INT64_MAX;
		if (s->next_arrival < s->njobs)
			next = s->jobs[s->next_arrival].spec->submit;
		if (s->done.n && s->done.t[0] < next)
			next = s->done.t[0];
		if (c->cycle_interval > 0 && s->pending > 0 && tick != MU_TIME_NONE &&
		    tick < next)
			next = tick;
		if (next == INT64_MAX || (c->horizon > 0 && next > c->horizon))
			break;
		s->now = next;
		bool any;
		int rc = sim_events(s, &any, diag);
		if (rc)
			return rc;
		if (c->cycle_interval > 0) {
			if (tick == MU_TIME_NONE || tick < s->now)
				tick = s->now + (c->cycle_interval -
						 s->now % c->cycle_interval) % c->cycle_interval;
			if (tick == s->now) {
				rc = sim_cycles(s);
				tick += c->cycle_interval;
			} else {
				rc = sim_point(s);
			}
		} else {
			rc = any ? sim_cycles(s) : MU_OK;
		}
		mu_horizon_choice_t hc;
		if (rc == MU_OK && c->muster_horizon &&
		    (rc = mu_horizon_step(c->muster_horizon, s->eng, s->now, &hc)) == 1) {
			rc = MU_OK;
			if (c->on_choice)
				c->on_choice(c->on_choice_ctx, &hc);
		}
		if (rc)
			return rc;
		if (c->progress && s->next_arrival - last_progress >= 256) {
			last_progress = s->next_arrival;
			c->progress(c->progress_ctx, (double)s->next_arrival /
				    (double)(s->njobs ? s->njobs : 1));
		}
	}
	if (c->progress)
		c->progress(c->progress_ctx, 1.0);
	if (c->at_end) {
		int rc = mu_engine_settle(s->eng); /* reservation-based starts */
		if (rc)
			return rc;
		c->at_end(c->at_end_ctx, s->eng, c->horizon > 0 ? c->horizon : s->now);
	}
	return MU_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double mu_percentile(double *v, size_t n, double pct)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, cmp_double);
	double pos = pct / 100.0 * (double)(n - 1);
	size_t lo = (size_t)pos;
	if (lo + 1 >= n)
		return v[n - 1];
	double f = pos - (double)lo;
	return v[lo] * (1 - f) + v[lo + 1] * f;
}

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

/* Fills the per-job records and the wait/JCT statistics. */
static int sim_result_jobs(const sim_t *s, mu_time_t t_first, mu_time_t t_end,
			   mu_sim_result_t *out)
{
	mu_sim_summary_t *sum = &out->summary;
	out->jobs = calloc(s->njobs ? s->njobs : 1, sizeof *out->jobs);
	double *wait = malloc((s->njobs ? s->njobs : 1) * sizeof *wait);
	double *jct = malloc((s->njobs ? s->njobs : 1) * sizeof *jct);
	if (!out->jobs || !wait || !jct) {
		free(wait);
		free(jct);
		return MU_ENOMEM;
	}
	size_t nw = 0, nj = 0;
	double wsum = 0, jsum = 0;
	for (size_t i = 0; i < s->njobs; i++) {
		const sim_job_t *j = &s->jobs[i];
		mu_sim_job_t *o = &out->jobs[out->njobs++];
		o->name = dup_str(j->spec->name);
		o->queue = dup_str(j->spec->queue);
		if (!o->name || !o->queue)
			goto oom;
		o->type = j->spec->type;
		o->submit_s = (double)(j->spec->submit - t_first) / 1000.0;
		o->start_s = j->start == MU_TIME_NONE ? -1 : (double)(j->start - t_first) / 1000.0;
		o->end_s = j->end == MU_TIME_NONE ? -1 : (double)(j->end - t_first) / 1000.0;
		o->preemptions = j->preemptions;
		o->moves = j->moves;
		o->pods = mu_job_spec_pods(j->spec);
		for (size_t p = 0; p < j->spec->npodsets; p++) {
			mu_res_t a = mu_res_acct(&j->spec->podsets[p].req);
			o->gpu_milli += a.v[MU_RES_GPU] * j->spec->podsets[p].replicas;
		}
		if (j->start != MU_TIME_NONE) {
			wait[nw] = o->start_s - o->submit_s;
			wsum += wait[nw++];
		}
		if (j->end != MU_TIME_NONE) {
			jct[nj] = o->end_s - o->submit_s;
			jsum += jct[nj++];
		}
	}
	sum->jobs = (int64_t)s->njobs;
	sum->completed = (int64_t)nj;
	sum->avg_wait_s = nw ? wsum / (double)nw : 0;
	sum->p50_wait_s = mu_percentile(wait, nw, 50);
	sum->p95_wait_s = mu_percentile(wait, nw, 95);
	sum->p99_wait_s = mu_percentile(wait, nw, 99);
	sum->avg_jct_s = nj ? jsum / (double)nj : 0;
	sum->p50_jct_s = mu_percentile(jct, nj, 50);
	sum->p95_jct_s = mu_percentile(jct, nj, 95);
	sum->p99_jct_s = mu_percentile(jct, nj, 99);
	sum->makespan_s = (double)(t_end - t_first) / 1000.0;
	free(wait);
	free(jct);
	return MU_OK;
oom:
	free(wait);
	free(jct);
	return MU_ENOMEM;
}

/* GPU time per queue, from each job's held interval (until t_end). */
static int sim_result_queues(const sim_t *s, const mu_specs_t *sp,
			     mu_time_t t_end, mu_sim_result_t *out)
{
	out->queues = calloc(sp->nqueues ? sp->nqueues : 1, sizeof *out->queues);
	if (!out->queues)
		return MU_ENOMEM;
	for (size_t q = 0; q < sp->nqueues; q++) {
		out->queues[q].name = dup_str(sp->queues[q].name);
		out->nqueues++;
		if (!out->queues[q].name)
			return MU_ENOMEM;
	}
	double total = 0;
	for (size_t i = 0; i < s->njobs; i++) {
		const sim_job_t *j = &s->jobs[i];
		const mu_sim_job_t *o = &out->jobs[i];
		for (size_t q = 0; q < out->nqueues; q++) {
			if (strcmp(out->queues[q].name, j->spec->queue) != 0)
				continue;
			out->queues[q].jobs++;
			if (j->start != MU_TIME_NONE) {
				mu_time_t held = j->held + (j->running && t_end > j->run_start ?
							    t_end - j->run_start : 0);
				double gs = (double)o->gpu_milli / 1000.0 * (double)held / 1000.0;
				out->queues[q].gpu_seconds += gs;
				total += gs;
			}
			break;
		}
	}
	for (size_t q = 0; q < out->nqueues; q++) {
		out->queues[q].share = total > 0 ? out->queues[q].gpu_seconds / total : 0;
		int64_t des = sp->queues[q].deserved.v[MU_RES_GPU];
		out->queues[q].deserved_gpus = des > 0 ? (double)des / 1000.0 : 0;
		out->queues[q].fair_gpu_seconds = s->fair_gs ? s->fair_gs[q] : NAN;
	}
	return MU_OK;
}

/* Utilization integral and evenly spaced samples of the step function. */
static int sim_result_series(const sim_t *s, mu_time_t t_first, mu_time_t t_end,
			     int64_t total_milli, mu_sim_result_t *out)
{
	double area = 0;
	for (size_t i = 0; i + 1 < s->npts; i++) {
		mu_time_t a = s->pts[i].t, b = s->pts[i + 1].t;
		if (b > t_end)
			b = t_end;
		if (b > a)
			area += (double)s->pts[i].used_gpu * (double)(b - a);
	}
	double span = (double)(t_end - t_first);
	out->summary.gpu_utilization = span > 0 && total_milli > 0 ?
		area / ((double)total_milli * span) : 0;
	mu_time_t step = s->cfg->sample_interval;
	if (step <= 0)
		step = (t_end - t_first) / 500 > 0 ? (t_end - t_first) / 500 : 1;
	size_t n = s->npts ? (size_t)((t_end - t_first) / step) + 1 : 0;
	if (n > 100000)
		n = 100000;
	out->samples = calloc(n ? n : 1, sizeof *out->samples);
	if (!out->samples)
		return MU_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		mu_time_t t = t_first + (mu_time_t)i * step;
		while (k + 1 < s->npts && s->pts[k + 1].t <= t)
			k++;
		const sim_point_t *p = &s->pts[k];
		mu_sim_sample_t *o = &out->samples[out->nsamples++];
		o->t_s = (double)(t - t_first) / 1000.0;
		o->gpu_util = total_milli > 0 ? (double)p->used_gpu / (double)total_milli : 0;
		o->pending_jobs = p->t <= t ? p->pending : 0;
		o->running_jobs = p->t <= t ? p->running : 0;
	}
	return MU_OK;
}

static int sim_result(sim_t *s, const mu_specs_t *sp, mu_sim_result_t *out)
{
	mu_time_t t_first = s->njobs ? s->jobs[0].spec->submit : 0;
	mu_time_t t_end = s->npts ? s->pts[s->npts - 1].t : t_first;
	mu_res_t alloc;
	mu_engine_totals(s->eng, &alloc, NULL);
	int64_t dra_total = 0, dra_used = 0;
	if (s->dra)
		mu__sdra_gpus(s->dra, &dra_total, &dra_used);
	out->summary.total_gpus = alloc.v[MU_RES_GPU] / 1000 + dra_total;
	out->summary.dra = s->dra != NULL;
	out->summary.dra_gpus = dra_total;
	out->summary.preemptions = s->preemptions;
	out->summary.moves = s->moves;
	out->summary.cycles = s->cycles;
	out->summary.engine_s = s->engine_s;
	sim_fair(s, sp, t_end, false); /* the last cycle's share, to the end */
	int rc = sim_result_jobs(s, t_first, t_end, out);
	if (rc == MU_OK)
		rc = sim_result_queues(s, sp, t_end, out);
	if (rc == MU_OK)
		rc = sim_result_series(s, t_first, t_end, alloc.v[MU_RES_GPU] + dra_total * 1000, out);
	return rc;
}

/* Creates the engine and loads the cluster into it. */
static int sim_setup(sim_t *s, const mu_specs_t *sp, mu_diag_t *diag)
{
	mu_engine_config_t ec = s->cfg->engine;
	if (ec.restart_cost <= 0) /* the engine weighs what a preemption costs */
		ec.restart_cost = s->cfg->checkpoint_cost;
	int rc = mu_engine_new(&ec, &s->eng);
	if (rc)
		return mu__diag(diag, rc, "simulate", 0, 0, "%s", mu_strerror(rc));
	for (size_t i = 0; i < sp->npools; i++)
		if ((rc = mu_engine_pool_upsert(s->eng, &sp->pools[i])) != MU_OK)
			return mu__diag(diag, rc, "simulate", 0, 0, "pool \"%s\": %s",
					sp->pools[i].name, mu_strerror(rc));
	if ((rc = sim_add_queues(s, sp, diag)) != MU_OK)
		return rc;
	for (size_t i = 0; i < sp->ntopologies; i++) {
		rc = mu_engine_topology_upsert(s->eng, &sp->topologies[i]);
		if (rc)
			return mu__diag(diag, rc, "simulate", 0, 0, "topology \"%s\": %s",
					sp->topologies[i].name, mu_strerror(rc));
	}
	for (size_t i = 0; i < sp->nnodes; i++) {
		rc = mu_engine_node_upsert(s->eng, &sp->nodes[i], NULL);
		if (rc)
			return mu__diag(diag, rc, "simulate", 0, 0, "node \"%s\": %s",
					sp->nodes[i].name, mu_strerror(rc));
	}
	s->njobs = sp->njobs;
	s->jobs = calloc(s->njobs ? s->njobs : 1, sizeof *s->jobs);
	s->by_id = calloc(s->njobs ? s->njobs : 1, sizeof *s->by_id);
	s->dirty = calloc(s->njobs ? s->njobs : 1, sizeof *s->dirty);
	s->fair_now = calloc(sp->nqueues ? sp->nqueues : 1, sizeof *s->fair_now);
	s->fair_gs = calloc(sp->nqueues ? sp->nqueues : 1, sizeof *s->fair_gs);
	s->sp = sp;
	if (!s->jobs || !s->by_id || !s->dirty || !s->fair_now || !s->fair_gs)
		return MU_ENOMEM;
	uint64_t seed = s->cfg->seed;
	for (size_t i = 0; i < s->njobs; i++)
		s->jobs[i] = (sim_job_t){.spec = &sp->jobs[i], .id = -1,
					 .start = MU_TIME_NONE, .end = MU_TIME_NONE,
					 .remaining = (double)sp->jobs[i].duration,
					 .tiebreak = mu__splitmix64(&seed)};
	qsort(s->jobs, s->njobs, sizeof *s->jobs, cmp_arrival);
	return MU_OK;
}

/* Reads the DRA objects and claims of sp (scn_dra.c) when it has any:
 * the simulation gives pods their devices as the scenario runner does.
 * MU_EINVAL with why in diag for what the runner cannot read. */
static int sim_dra(sim_t *s, const mu_specs_t *sp, mu_diag_t *diag)
{
	char why[600] = "";
	int rc = mu__sdra_new(sp, &s->dra, why, sizeof why);
	if (rc)
		return mu__diag(diag, rc, "simulate", 0, 0, "%s", why[0] ? why : mu_strerror(rc));
	if (!s->dra)
		return MU_OK;
	s->dra_ids = malloc((sp->njobs ? sp->njobs : 1) * sizeof *s->dra_ids);
	s->dra_fin = calloc(sp->njobs ? sp->njobs : 1, sizeof *s->dra_fin);
	if (!s->dra_ids || !s->dra_fin)
		return MU_ENOMEM;
	for (size_t i = 0; i < sp->njobs; i++)
		s->dra_ids[i] = -1;
	return MU_OK;
}

int mu_sim_run(const mu_specs_t *sp, const mu_sim_config_t *cfg,
	       mu_sim_result_t *out, mu_diag_t *diag)
{
	mu_sim_config_t defaults;
	if (!cfg) {
		mu_sim_config_defaults(&defaults);
		cfg = &defaults;
	}
	memset(out, 0, sizeof *out);
	if (diag)
		diag->msg[0] = '\0';
	sim_t s = {.cfg = cfg};
	mu_decisions_init(&s.dec);
	int rc = sim_dra(&s, sp, diag);
	if (rc == MU_OK)
		rc = sim_setup(&s, sp, diag);
	if (rc == MU_OK)
		rc = sim_loop(&s, diag);
	if (rc == MU_OK)
		rc = sim_result(&s, sp, out);
	if (rc && diag && !diag->msg[0])
		mu__diag(diag, rc, "simulate", 0, 0, "%s", mu_strerror(rc));
	mu_engine_free(s.eng);
	mu_decisions_release(&s.dec);
	mu__sdra_free(s.dra);
	free(s.dra_ids);
	free(s.dra_fin);
	free(s.jobs);
	free(s.by_id);
	free(s.dirty);
	free(s.fair_now);
	free(s.fair_gs);
	free(s.done.t);
	free(s.done.j);
	free(s.done.ep);
	free(s.pts);
	return rc;
}

void mu_sim_result_release(mu_sim_result_t *r)
{
	for (size_t i = 0; i < r->njobs; i++) {
		free(r->jobs[i].name);
		free(r->jobs[i].queue);
	}
	for (size_t i = 0; i < r->nqueues; i++)
		free(r->queues[i].name);
	free(r->jobs);
	free(r->samples);
	free(r->queues);
	memset(r, 0, sizeof *r);
}

int mu_sim_workload_mix(const mu_specs_t *sp, mu_workload_mix_t *m)
{
	for (size_t j = 0; j < sp->njobs; j++)
		for (size_t p = 0; p < sp->jobs[j].npodsets; p++) {
			const mu_podset_spec_t *ps = &sp->jobs[j].podsets[p];
			if (ps->replicas <= 0)
				continue;
			int rc = mu_workload_mix_add(m, &ps->req, ps->gpu_models,
						     ps->ngpu_models, ps->replicas);
			if (rc)
				return rc;
		}
	int rc = mu_workload_mix_finish(m);
	/* The cluster's devices per model, for muster's press_over where no
	 * engine counts them (the rollouts; an engine reads its own). */
	for (size_t i = 0; rc == MU_OK && i < sp->nnodes; i++)
		rc = mu_workload_mix_supply(m, sp->nodes[i].gpu_model,
					    sp->nodes[i].alloc.v[MU_RES_GPU]);
	return rc;
}

/*
 * scenario.c - runs one scenario (docs/scenarios.md) against a fresh engine.
 *
 * The runner builds the cluster from the specs (topologies, queues parents
 * first, then nodes), then walks the steps in order.  At each step it submits the jobs
 * whose submit time has come, removes nodes, finishes jobs, and runs the
 * step's cycles; after every cycle it checks the step's expectations against
 * the engine's queries and the cycle's decisions, and after every repeated
 * cycle it checks that a steady state makes no binds or evictions.  When an
 * expectation checks devices, it also records every bind decision (node,
 * GPUs, NUMA node, NIC, pinned CPUs), keeping the latest per pod.  Failed
 * checks print one line each; malformed scenarios (an unknown job or node,
 * steps out of time order) stop the run with a diagnostic.
 */
#include <stdlib.h>
#include <string.h>

#include "muster/engine.h"
#include "muster/scenario.h"
#include "muster/sim.h"
#include "muster/util.h"
#include "scn_dra.h"
#include "scn_mig.h"

/* The devices of a pod's latest bind decision. */
typedef struct scn_dev {
	mu_id_t node;       /* -1: never bound */
	uint64_t gpus;
	int8_t numa, nic;
	mu_cpuset_t cpus;
} scn_dev_t;

/* A job waiting for its submit time. */
typedef struct scn_due {
	mu_time_t submit;
	size_t idx; /* in the specs */
} scn_due_t;

/* The state of one run.  It lives on mu_scenario_run()'s stack; the arrays
 * are malloc'ed by it and freed before it returns. */
typedef struct scn {
	const mu_specs_t *s;
	const mu_scenario_spec_t *sc;
	const char *file;
	FILE *out;
	mu_diag_t *diag;
	mu_engine_t *e;
	mu_id_t *ids;        /* per spec job: engine id, -1 until submitted */
	bool *finished;      /* per spec job: finished by a step */
	scn_due_t *order;    /* spec jobs by (submit, file order) */
	size_t next;         /* first entry of order not yet submitted */
	long *xjob;          /* per expectation of the step: spec job index */
	int32_t *evicted;    /* per expectation of the step: pods evicted */
	long *spec_of;       /* per engine job id: spec job index */
	size_t *pod0;        /* per spec job: its first pod in dev, or NULL
	                      * when no expectation checks devices */
	scn_dev_t *dev;      /* per pod of every spec job */
	mu_decisions_t dec;  /* the current cycle's decisions */
	size_t step;         /* 0-based index of the current step */
	int32_t cycle;       /* 1-based cycle within the step */
	int passed, failed;
	mu_workload_mix_t mix; /* the scenario's jobs, for MU_SCORE_MIX policies */
	mu__sdra_t *dra;     /* DRA claims (scn_dra.c), NULL when none */
	mu__smig_t *mig;     /* MIG layouts (scn_mig.c), NULL when none */
	mu_horizon_t hz;     /* muster-horizon's state */
	bool has_hz;         /* the policy is muster-horizon */
} scn_t;

/* Writes t (ms) as seconds, "30s" or "1.5s", into buf. */
static const char *scn_time(mu_time_t t, char *buf, size_t len)
{
	if (t % 1000 == 0) {
		snprintf(buf, len, "%llds", (long long)(t / 1000));
	} else {
		snprintf(buf, len, "%lld.%03lld", (long long)(t / 1000),
			 (long long)(t % 1000));
		char *p = buf + strlen(buf) - 1; /* the last decimal */
		while (*p == '0')
			*p-- = '\0';
		if (strlen(buf) + 1 < len)
			strcat(buf, "s");
	}
	return buf;
}

/* Starts a failure line: "FILE: step K (at T) cycle C: ".  The caller
 * writes the rest and the newline. */
static void scn_fail_head(scn_t *r)
{
	char t[48];
	const mu_scenario_step_t *st = &r->sc->steps[r->step];
	fprintf(r->out, "%s: step %zu (at %s) cycle %d: ", r->file, r->step + 1,
		scn_time(st->at, t, sizeof t), (int)r->cycle);
	r->failed++;
}

static int scn_cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The spec index of the job called name, or -1.  Linear in the jobs. */
static long scn_job_index(const scn_t *r, const char *name)
{
	for (size_t i = 0; i < r->s->njobs; i++)
		if (strcmp(r->s->jobs[i].name, name) == 0)
			return (long)i;
	return -1;
}

/* Adds every queue, each after its parent, in O(queues^2) at worst.
 * MU_EINVAL when a parent is missing or the parents form a cycle. */
static int scn_add_queues(scn_t *r)
{
	size_t n = r->s->nqueues, added = 0;
	bool *done = calloc(n ? n : 1, sizeof *done);
	if (!done)
		return mu__diag(r->diag, MU_ENOMEM, r->file, 0, 0, "out of memory");
	int rc = MU_OK;
	while (added < n && rc == MU_OK) {
		size_t before = added;
		for (size_t i = 0; i < n && rc == MU_OK; i++) {
			const mu_queue_spec_t *q = &r->s->queues[i];
			if (done[i] || (q->parent &&
			    mu_engine_queue_find(r->e, q->parent) < 0))
				continue;
			rc = mu_engine_queue_upsert(r->e, q);
			if (rc != MU_OK)
				mu__diag(r->diag, rc, r->file, 0, 0,
					 "queue \"%s\": %s", q->name,
					 mu_strerror(rc));
			done[i] = true;
			added++;
		}
		if (rc == MU_OK && added == before)
			rc = mu__diag(r->diag, MU_EINVAL, r->file, 0, 0,
				      "queues: a parent is missing or the parents form a cycle");
	}
	free(done);
	return rc;
}

/* Whether a step expects anything of muster-horizon. */
static bool scn_step_hz(const mu_scenario_step_t *st)
{
	return st->expect_choices >= 0 || st->expect_changes >= 0 ||
	       st->expect_settings;
}

/* For policy muster-horizon, starts its state (spec.horizon's options),
 * the settings of the scenario's mix; refuses spec.horizon and
 * expectHorizon under any other policy. */
static int scn_setup_horizon(scn_t *r, const mu_score_ops_t *score)
{
	const mu_scenario_spec_t *sc = r->sc;
	if (score != &mu_score_muster_horizon) {
		bool any = sc->has_horizon;
		for (size_t i = 0; i < sc->nsteps; i++)
			any |= scn_step_hz(&sc->steps[i]);
		if (any)
			return mu__diag(r->diag, MU_EINVAL, r->file, 0, 0, "horizon and "
					"expectHorizon need policy muster-horizon");
		return MU_OK;
	}
	mu_horizon_config_t hc = {0};
	hc.at.from = sc->horizon_from;
	hc.at.every = sc->horizon_every;
	hc.min_interval = sc->horizon_min_interval;
	hc.rollout.rollouts = sc->horizon_rollouts;
	char why[160];
	if (mu_horizon_init(&r->hz, &hc, why, sizeof why))
		return mu__diag(r->diag, MU_EINVAL, r->file, 0, 0, "horizon: %s", why);
	r->has_hz = true;
	r->mix.muster = &r->hz.params;
	return MU_OK;
}

/* Checks a step's expectHorizon against the choices so far. */
static void scn_check_hz(scn_t *r, const mu_scenario_step_t *st)
{
	char p[96];
	mu_muster_params_format(&r->hz.params, p, sizeof p);
	int32_t want[2] = {st->expect_choices, st->expect_changes};
	int32_t got[2] = {r->hz.choices, r->hz.changes};
	for (int i = 0; i < 2; i++) {
		if (want[i] < 0)
			continue;
		if (got[i] == want[i]) {
			r->passed++;
			continue;
		}
		scn_fail_head(r);
		fprintf(r->out, "muster-horizon: %d %s, expected %d (settings now: %s)\n",
			(int)got[i], i ? "changes" : "choices", (int)want[i], p);
	}
	if (!st->expect_settings)
		return;
	if (strstr(p, st->expect_settings)) {
		r->passed++;
		return;
	}
	scn_fail_head(r);
	fprintf(r->out, "muster-horizon: settings \"%s\", expected them to contain \"%s\"\n",
		p, st->expect_settings);
}

/* Creates the engine with the scenario's policy and adds queues and nodes. */
static int scn_setup(scn_t *r)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.usage_half_life = r->sc->usage_half_life;
	if (r->sc->policy && *r->sc->policy) {
		cfg.score = mu_score_find(r->sc->policy);
		if (!cfg.score)
			return mu__diag(r->diag, MU_EINVAL, r->file, 0, 0,
					"policy \"%s\": unknown scoring policy (expected binpack, "
					"spread, random, dotprod, clustering, packing, bestfit, fgd, "
					"muster or muster-horizon)", r->sc->policy);
		if (cfg.score == &mu_score_muster_rollout)
			return mu__diag(r->diag, MU_EINVAL, r->file, 0, 0, "policy \"%s\": "
					"chooses muster's settings once from the whole workload, "
					"which only muster eval openb knows in advance; use "
					"muster-horizon or muster", r->sc->policy);
		if (cfg.score->flags & MU_SCORE_MIX) { /* against its own jobs */
			int rc = mu_sim_workload_mix(r->s, &r->mix);
			if (rc)
				return mu__diag(r->diag, rc, r->file, 0, 0, "policy \"%s\": "
						"the jobs' pod shapes: %s", r->sc->policy,
						mu_strerror(rc));
			cfg.score_state = &r->mix;
		}
	}
	int rc = scn_setup_horizon(r, cfg.score);
	if (rc != MU_OK)
		return rc;
	rc = mu_engine_new(&cfg, &r->e);
	if (rc != MU_OK)
		return mu__diag(r->diag, rc, r->file, 0, 0, "engine: %s",
				mu_strerror(rc));
	for (size_t i = 0; i < r->s->ntopologies && rc == MU_OK; i++) {
		rc = mu_engine_topology_upsert(r->e, &r->s->topologies[i]);
		if (rc != MU_OK)
			mu__diag(r->diag, rc, r->file, 0, 0, "topology \"%s\": %s",
				 r->s->topologies[i].name, mu_strerror(rc));
	}
	for (size_t i = 0; i < r->s->npools && rc == MU_OK; i++) {
		rc = mu_engine_pool_upsert(r->e, &r->s->pools[i]);
		if (rc != MU_OK)
			mu__diag(r->diag, rc, r->file, 0, 0, "pool \"%s\": %s",
				 r->s->pools[i].name, mu_strerror(rc));
	}
	if (rc == MU_OK)
		rc = scn_add_queues(r);
	for (size_t i = 0; i < r->s->nnodes && rc == MU_OK; i++) {
		rc = mu_engine_node_upsert(r->e, &r->s->nodes[i], NULL);
		if (rc != MU_OK)
			mu__diag(r->diag, rc, r->file, 0, 0, "node \"%s\": %s",
				 r->s->nodes[i].name, mu_strerror(rc));
	}
	return rc;
}

static int scn_cmp_due(const void *a, const void *b)
{
	const scn_due_t *x = a, *y = b;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Allocates the per-pod device records when some expectation checks
 * devices.  Memory is linear in the pods of all jobs. */
static int scn_alloc_devs(scn_t *r)
{
	bool want = false;
	for (size_t i = 0; i < r->sc->nsteps; i++)
		for (size_t k = 0; k < r->sc->steps[i].nexpect; k++)
			want |= r->sc->steps[i].expect[k].check_devices;
	if (!want)
		return MU_OK;
	size_t n = r->s->njobs ? r->s->njobs : 1, pods = 0;
	r->pod0 = malloc(n * sizeof *r->pod0);
	r->spec_of = malloc(n * sizeof *r->spec_of);
	if (!r->pod0 || !r->spec_of)
		return MU_ENOMEM;
	for (size_t i = 0; i < r->s->njobs; i++) {
		r->pod0[i] = pods;
		r->spec_of[i] = -1;
		pods += (size_t)mu_job_spec_pods(&r->s->jobs[i]);
	}
	r->dev = malloc((pods ? pods : 1) * sizeof *r->dev);
	if (!r->dev)
		return MU_ENOMEM;
	for (size_t p = 0; p < pods; p++)
		r->dev[p].node = -1;
	return MU_OK;
}

/* Allocates the per-job arrays and sorts the jobs by arrival. */
static int scn_alloc(scn_t *r)
{
	size_t n = r->s->njobs ? r->s->njobs : 1;
	r->ids = malloc(n * sizeof *r->ids);
	r->finished = calloc(n, sizeof *r->finished);
	r->order = malloc(n * sizeof *r->order);
	size_t nexp = 1;
	for (size_t i = 0; i < r->sc->nsteps; i++)
		if (r->sc->steps[i].nexpect > nexp)
			nexp = r->sc->steps[i].nexpect;
	r->evicted = calloc(nexp, sizeof *r->evicted);
	r->xjob = calloc(nexp, sizeof *r->xjob);
	if (!r->ids || !r->finished || !r->order || !r->evicted || !r->xjob ||
	    scn_alloc_devs(r) != MU_OK)
		return mu__diag(r->diag, MU_ENOMEM, r->file, 0, 0, "out of memory");
	for (size_t i = 0; i < r->s->njobs; i++) {
		r->ids[i] = -1;
		r->order[i].submit = r->s->jobs[i].submit;
		r->order[i].idx = i;
	}
	qsort(r->order, r->s->njobs, sizeof *r->order, scn_cmp_due);
	return MU_OK;
}

/* Submits, at `now`, every job not yet submitted whose submit time is at or
 * before now, in (submit, file) order. */
static int scn_submit_due(scn_t *r, mu_time_t now)
{
	while (r->next < r->s->njobs && r->order[r->next].submit <= now) {
		size_t i = r->order[r->next++].idx;
		const mu_job_spec_t *j = r->dra ? mu__sdra_job(r->dra, i) : &r->s->jobs[i];
		int rc = MU_OK;
		for (size_t p = 0; r->has_hz && p < j->npodsets && rc == MU_OK; p++)
			if (j->podsets[p].replicas > 0)
				rc = mu_horizon_seen(&r->hz, &j->podsets[p].req,
						     j->podsets[p].gpu_models,
						     j->podsets[p].ngpu_models,
						     j->podsets[p].replicas);
		if (rc == MU_OK)
			rc = mu_engine_job_submit(r->e, j, now, &r->ids[i]);
		if (rc != MU_OK)
			return mu__diag(r->diag, rc, r->file, 0, 0,
					"job \"%s\": submit failed: %s", j->name,
					mu_strerror(rc));
		char why[600];
		if (r->dra && (rc = mu__sdra_submitted(r->dra, i, why, sizeof why)))
			return mu__diag(r->diag, rc, r->file, 0, 0, "%s", why);
		if (r->spec_of && r->ids[i] >= 0 && (size_t)r->ids[i] < r->s->njobs)
			r->spec_of[r->ids[i]] = (long)i;
	}
	return MU_OK;
}

/* Applies a step's events before its cycles: node removals, finished
 * jobs, then disruption budgets.  Unknown names are errors in the
 * scenario. */
static int scn_step_events(scn_t *r, const mu_scenario_step_t *st)
{
	for (size_t i = 0; i < st->nremove_nodes; i++) {
		int rc = mu_engine_node_remove(r->e, st->remove_nodes[i], st->at);
		if (rc != MU_OK)
			return mu__diag(r->diag, rc, r->file, 0, 0,
					"step %zu: removeNodes: node \"%s\": %s",
					r->step + 1, st->remove_nodes[i],
					mu_strerror(rc));
	}
	for (size_t i = 0; i < st->nfinish; i++) {
		long k = scn_job_index(r, st->finish[i]);
		int rc = k < 0 ? MU_ENOENT :
			 r->ids[k] < 0 || r->finished[k] ? MU_ESTATE :
			 mu_engine_job_finish(r->e, r->ids[k], st->at);
		if (rc != MU_OK)
			return mu__diag(r->diag, rc, r->file, 0, 0,
					"step %zu: finish: job \"%s\": %s",
					r->step + 1, st->finish[i],
					k < 0 ? "no such job" :
					r->ids[k] < 0 ? "not submitted yet" :
					r->finished[k] ? "already finished" :
					mu_strerror(rc));
		r->finished[k] = true;
	}
	for (size_t i = 0; i < st->nbudgets; i++) {
		long k = scn_job_index(r, st->budget_jobs[i]);
		int rc = k < 0 ? MU_ENOENT : r->ids[k] < 0 ? MU_ESTATE :
			 mu_engine_job_disruptions(r->e, r->ids[k], st->budget_allowed[i]);
		if (rc != MU_OK)
			return mu__diag(r->diag, rc, r->file, 0, 0,
					"step %zu: disruptionsAllowed: job \"%s\": %s",
					r->step + 1, st->budget_jobs[i],
					k < 0 ? "no such job" :
					r->ids[k] < 0 ? "not submitted yet" : mu_strerror(rc));
	}
	return MU_OK;
}

/* Checks that every job an expectation names exists and has been submitted
 * by the step's time, and notes its index in r->xjob.  Linear in
 * expectations x jobs. */
static int scn_check_names(scn_t *r, const mu_scenario_step_t *st)
{
	for (size_t i = 0; i < st->nexpect; i++) {
		const char *name = st->expect[i].job;
		long k = name ? scn_job_index(r, name) : -1;
		if (k < 0)
			return mu__diag(r->diag, MU_ENOENT, r->file, 0, 0,
					"step %zu: expect: no job named \"%s\"",
					r->step + 1, name ? name : "");
		r->xjob[i] = k;
		char t[48];
		if (r->ids[k] < 0)
			return mu__diag(r->diag, MU_ESTATE, r->file, 0, 0,
					"step %zu: expect: job \"%s\" arrives at %s, after the step",
					r->step + 1, name,
					scn_time(r->s->jobs[k].submit, t, sizeof t));
	}
	return MU_OK;
}

/* Prints names as "[a, b]". */
static void scn_print_list(FILE *f, const char *const *v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? ", " : "", v[i]);
	fputc(']', f);
}

/* Compares got (n strings, sorted here) with the expected multiset want
 * and counts one check; `field` names it in the failure line.  O((n +
 * nwant) log). */
static void scn_multiset(scn_t *r, const char *job, const char *field,
			 const char **got, size_t n, const char *const *want,
			 size_t nwant)
{
	const char **w = malloc((nwant ? nwant : 1) * sizeof *w);
	if (!w) {
		scn_fail_head(r);
		fprintf(r->out, "job \"%s\": out of memory comparing %s\n", job,
			field);
		return;
	}
	if (nwant)
		memcpy(w, want, nwant * sizeof *w);
	qsort(got, n, sizeof *got, scn_cmp_name);
	qsort(w, nwant, sizeof *w, scn_cmp_name);
	bool same = n == nwant;
	for (size_t i = 0; same && i < n; i++)
		same = strcmp(got[i], w[i]) == 0;
	if (same) {
		r->passed++;
	} else {
		scn_fail_head(r);
		fprintf(r->out, "job \"%s\": %s ", job, field);
		scn_print_list(r->out, got, n);
		fprintf(r->out, ", expected ");
		scn_print_list(r->out, w, nwant);
		fputc('\n', r->out);
	}
	free(w);
}

/* Compares the node names of job k's bound pods with the expected
 * multiset.  Work is O(pods log pods); the name array is freed here. */
static void scn_check_nodes(scn_t *r, const mu_expect_job_t *x, long k)
{
	const mu_job_spec_t *j = &r->s->jobs[k];
	size_t np = (size_t)mu_job_spec_pods(j), n = 0;
	const char **got = malloc((np ? np : 1) * sizeof *got);
	if (!got) {
		scn_fail_head(r);
		fprintf(r->out, "job \"%s\": out of memory comparing nodes\n", x->job);
		return;
	}
	for (size_t ps = 0; ps < j->npodsets && !r->finished[k]; ps++) {
		for (int32_t p = 0; p < j->podsets[ps].replicas; p++) {
			mu_id_t nd = mu_engine_pod_node(r->e, r->ids[k],
							(int32_t)ps, p);
			const char *name = nd >= 0 ? mu_engine_node_name(r->e, nd) : NULL;
			if (nd >= 0 && n < np)
				got[n++] = name ? name : "?";
		}
	}
	scn_multiset(r, x->job, "nodes", got, n, x->nodes, x->nnodes);
	free(got);
}

/* Records the cycle's bind decisions in r->dev, the latest per pod (a
 * pod that is moved or rebound gets its new devices).  O(decisions x pod
 * sets). */
static void scn_note_binds(scn_t *r)
{
	for (size_t i = 0; r->dev && i < r->dec.n; i++) {
		const mu_decision_t *d = &r->dec.v[i];
		if (d->kind != MU_DEC_BIND || d->job < 0 ||
		    (size_t)d->job >= r->s->njobs || r->spec_of[d->job] < 0)
			continue;
		long k = r->spec_of[d->job];
		const mu_job_spec_t *j = &r->s->jobs[k];
		if (d->podset < 0 || (size_t)d->podset >= j->npodsets ||
		    d->pod < 0 || d->pod >= j->podsets[d->podset].replicas)
			continue;
		size_t idx = r->pod0[k] + (size_t)d->pod;
		for (int32_t ps = 0; ps < d->podset; ps++)
			idx += (size_t)j->podsets[ps].replicas;
		r->dev[idx] = (scn_dev_t){d->node, d->gpus, d->numa, d->nic,
					  d->cpus};
	}
}

/* Compares the devices of job k's bound pods (as the latest bind of each
 * gave them) with the expected multiset.  O(pods log pods); the strings
 * are freed here. */
static void scn_check_devices(scn_t *r, const mu_expect_job_t *x, long k)
{
	const mu_job_spec_t *j = &r->s->jobs[k];
	size_t np = (size_t)mu_job_spec_pods(j), n = 0, idx = r->pod0[k];
	char **got = calloc(np ? np : 1, sizeof *got);
	char buf[MU__DEVSTR_MAX];
	bool oom = !got;
	for (size_t ps = 0; !oom && ps < j->npodsets; ps++) {
		for (int32_t p = 0; p < j->podsets[ps].replicas; p++, idx++) {
			mu_id_t nd = r->finished[k] ? -1 :
				mu_engine_pod_node(r->e, r->ids[k], (int32_t)ps, p);
			if (nd < 0)
				continue;
			const scn_dev_t *v = &r->dev[idx];
			const char *name = mu_engine_node_name(r->e, nd);
			if (v->node == nd)
				mu__devstr_format(name ? name : "?", v->gpus,
						  v->numa, v->nic, &v->cpus, buf,
						  sizeof buf);
			else
				snprintf(buf, sizeof buf, "%s", name ? name : "?");
			if (!(got[n++] = strdup(buf)))
				oom = true;
		}
	}
	if (oom) {
		scn_fail_head(r);
		fprintf(r->out, "job \"%s\": out of memory comparing devices\n",
			x->job);
	} else {
		scn_multiset(r, x->job, "devices", (const char **)got, n,
			     x->devices, x->ndevices);
	}
	for (size_t i = 0; got && i < n; i++)
		free(got[i]);
	free(got);
}

/* Compares the DRA devices of job k's bound pods' claims with the
 * expected multiset (`draDevices`). */
static void scn_check_dra(scn_t *r, const mu_expect_job_t *x, long k)
{
	char **got = NULL;
	long n = 0;
	if (r->dra && !r->finished[k] && r->ids[k] >= 0)
		n = mu__sdra_devices(r->dra, r->e, (size_t)k, r->ids[k], &got);
	if (n < 0) {
		scn_fail_head(r);
		fprintf(r->out, "job \"%s\": out of memory comparing DRA devices\n", x->job);
		return;
	}
	char *none[1];
	scn_multiset(r, x->job, "draDevices", got ? (const char **)got : (const char **)none,
		     (size_t)n, x->dra_devices, x->ndra_devices);
	for (long i = 0; i < n; i++)
		free(got[i]);
	free(got);
}

/* Formats the job's last reason into a malloc'ed string (NULL on OOM). */
static char *scn_reason_text(const scn_t *r, const mu_reason_t *why)
{
	char small[256];
	int want = mu_reason_format(r->e, why, small, sizeof small);
	size_t len = want > 0 ? (size_t)want + 1 : 1;
	char *buf = malloc(len > sizeof small ? len : sizeof small);
	if (!buf)
		return NULL;
	if ((size_t)want < sizeof small)
		memcpy(buf, small, sizeof small);
	else
		mu_reason_format(r->e, why, buf, len);
	return buf;
}

/* Checks `pending`: the job waits (pending, or running with unbound pods)
 * for the named reason, or, with "", does not wait. */
static void scn_check_pending(scn_t *r, const mu_expect_job_t *x,
			      const mu_job_info_t *in)
{
	bool waiting = in->state == MU_JOB_PENDING ||
		       (in->state == MU_JOB_RUNNING && in->bound < in->pods);
	const char *why = mu_why_name(in->last.why);
	bool ok = *x->pending ? waiting && strcmp(why, x->pending) == 0 : !waiting;
	if (ok) {
		r->passed++;
		return;
	}
	scn_fail_head(r);
	if (!waiting)
		fprintf(r->out, "job \"%s\": not pending (%d of %d pods bound), expected pending %s\n",
			x->job, (int)in->bound, (int)in->pods, x->pending);
	else if (*x->pending)
		fprintf(r->out, "job \"%s\": pending %s, expected pending %s\n",
			x->job, why, x->pending);
	else
		fprintf(r->out, "job \"%s\": pending %s (%d of %d pods bound), expected not pending\n",
			x->job, why, (int)in->bound, (int)in->pods);
}

/* The explain text of the last reason, followed (for a job that names
 * pools and fits none) by each pool's reason, and by its class of service
 * (a job with a maximum wait); malloc'ed, NULL on OOM. */
static char *scn_full_text(const scn_t *r, const mu_job_info_t *in, long job)
{
	char *text = scn_reason_text(r, &in->last);
	const char *dm = mu__sdra_msg(r->dra, (size_t)job);
	bool waits = in->state == MU_JOB_PENDING ||
		     (in->state == MU_JOB_RUNNING && in->bound < in->pods);
	if (text && *dm && waits) { /* why its DRA claims fit nowhere */
		size_t len = strlen(text), dl = strlen(dm);
		char *all = realloc(text, len + 3 + dl + 1);
		if (!all) {
			free(text);
			return NULL;
		}
		memcpy(all + len, " | ", 3);
		memcpy(all + len + 3, dm, dl + 1);
		text = all;
	}
	mu_id_t id = mu_engine_job_find(r->e, in->name ? in->name : "");
	for (int k = 0; k < 2 && text && id >= 0; k++) {
		int want = k ? mu_engine_service_explain(r->e, id, NULL, 0) :
			       mu_engine_pool_explain(r->e, id, NULL, 0);
		if (want <= 0)
			continue;
		size_t len = strlen(text);
		char *all = realloc(text, len + 3 + (size_t)want + 1);
		if (!all) {
			free(text);
			return NULL;
		}
		memcpy(all + len, " | ", 3);
		if (k)
			mu_engine_service_explain(r->e, id, all + len + 3, (size_t)want + 1);
		else
			mu_engine_pool_explain(r->e, id, all + len + 3, (size_t)want + 1);
		text = all;
	}
	return text;
}

/* Checks `pool` and `escalated` (classes of service). */
static void scn_check_pool(scn_t *r, const mu_expect_job_t *x,
			   const mu_job_info_t *in)
{
	if (x->pool) {
		if (in->pool && !strcmp(in->pool, x->pool)) {
			r->passed++;
		} else {
			scn_fail_head(r);
			fprintf(r->out, "job \"%s\": in pool %s, expected %s\n",
				x->job, in->pool ? in->pool : "(none)", x->pool);
		}
	}
	if (x->escalated >= 0) {
		if (in->escalated == (x->escalated == 1)) {
			r->passed++;
		} else {
			scn_fail_head(r);
			fprintf(r->out, "job \"%s\": %sescalated, expected %sescalated\n",
				x->job, in->escalated ? "" : "not ",
				x->escalated ? "" : "not ");
		}
	}
}

/* Checks `message`: the explain text of the last reason (and of each
 * pool, for a job that names pools) contains it. */
static void scn_check_message(scn_t *r, const mu_expect_job_t *x,
			      const mu_job_info_t *in, long k)
{
	char *text = scn_full_text(r, in, k);
	if (text && strstr(text, x->message)) {
		r->passed++;
	} else {
		scn_fail_head(r);
		fprintf(r->out, "job \"%s\": message \"%s\", expected it to contain \"%s\"\n",
			x->job, text ? text : "(out of memory)", x->message);
	}
	free(text);
}

/* Checks every field an expectation gives for job k after a cycle.  The
 * evictions of the cycle were already added to *evicted. */
static void scn_check_one(scn_t *r, const mu_expect_job_t *x, long k,
			  int32_t evicted)
{
	mu_job_info_t in;
	memset(&in, 0, sizeof in);
	if (mu_engine_job_info(r->e, r->ids[k], &in) != MU_OK) {
		if (!r->finished[k]) {
			scn_fail_head(r);
			fprintf(r->out, "job \"%s\": the engine has no such job\n", x->job);
			return;
		}
		in.state = MU_JOB_FINISHED; /* it left the engine */
		in.pods = mu_job_spec_pods(&r->s->jobs[k]);
	}
	if (in.state == MU_JOB_FINISHED)
		in.bound = 0;
	if (x->bound >= 0) {
		if (in.bound == x->bound) {
			r->passed++;
		} else {
			scn_fail_head(r);
			fprintf(r->out, "job \"%s\": bound %d, expected %d\n",
				x->job, (int)in.bound, (int)x->bound);
		}
	}
	if (x->check_nodes)
		scn_check_nodes(r, x, k);
	if (x->check_devices)
		scn_check_devices(r, x, k);
	if (x->check_dra)
		scn_check_dra(r, x, k);
	if (x->pending)
		scn_check_pending(r, x, &in);
	if (x->message)
		scn_check_message(r, x, &in, k);
	scn_check_pool(r, x, &in);
	if (x->evicted >= 0) {
		if (evicted == x->evicted) {
			r->passed++;
		} else {
			scn_fail_head(r);
			fprintf(r->out, "job \"%s\": %d pods evicted in this step, expected %d\n",
				x->job, (int)evicted, (int)x->evicted);
		}
	}
}

/* Adds the cycle's evictions per expectation and checks every expectation
 * of the step.  O(expectations x (decisions + pods)). */
static void scn_check_step(scn_t *r, const mu_scenario_step_t *st)
{
	for (size_t i = 0; i < st->nexpect; i++) {
		const mu_expect_job_t *x = &st->expect[i];
		long k = r->xjob[i];
		for (size_t d = 0; d < r->dec.n; d++)
			if (r->dec.v[d].kind == MU_DEC_EVICT &&
			    r->dec.v[d].job == r->ids[k])
				r->evicted[i]++;
		scn_check_one(r, x, k, r->evicted[i]);
	}
}

/* True when some job in the engine waits: pending, or running with pods
 * not bound.  Linear in the jobs the engine has seen. */
static bool scn_any_waiting(const scn_t *r)
{
	int32_t n = mu_engine_njobs(r->e);
	for (mu_id_t id = 0; id < n; id++) {
		mu_job_info_t in;
		if (mu_engine_job_info(r->e, id, &in) != MU_OK)
			continue;
		if (in.state == MU_JOB_PENDING ||
		    (in.state == MU_JOB_RUNNING && in.bound < in.pods))
			return true;
	}
	return false;
}

/* The stability rule, for a repeated cycle: when the cycle before it left
 * no job waiting, this one must neither bind nor evict. */
static void scn_check_stable(scn_t *r, bool was_waiting)
{
	if (was_waiting)
		return;
	int binds = 0, evicts = 0;
	for (size_t d = 0; d < r->dec.n; d++) {
		binds += r->dec.v[d].kind == MU_DEC_BIND;
		evicts += r->dec.v[d].kind == MU_DEC_EVICT;
	}
	if (binds == 0 && evicts == 0) {
		r->passed++;
		return;
	}
	scn_fail_head(r);
	fprintf(r->out, "stability: %d binds and %d evictions in a repeated cycle after one that left no job pending, expected none\n",
		binds, evicts);
}

/* Checks the step's migLayouts against the re-plan after its cycles:
 * one check per node named, the layouts compared GPU by GPU in canonical
 * text.  O(GPUs). */
static void scn_check_mig(scn_t *r, const mu_scenario_step_t *st)
{
	for (size_t i = 0; i < st->nexpect_mig; i++) {
		const mu_mig_layout_spec_t *l = &st->expect_mig[i];
		char got[MU_MAX_GPUS][96], want[MU_MAX_GPUS][96];
		bool same = true;
		for (size_t g = 0; g < l->ngpus && g < MU_MAX_GPUS; g++) {
			mu__smig_format(r->mig, l->node, (long)g, got[g], sizeof got[g]);
			if (!mu__smig_canon(r->mig, l->node, l->gpus[g], want[g], sizeof want[g]))
				same = false; /* want[g] says why */
			else
				same = same && !strcmp(got[g], want[g]);
		}
		if (same) {
			r->passed++;
			continue;
		}
		scn_fail_head(r);
		fprintf(r->out, "node \"%s\": migLayouts [", l->node);
		for (size_t g = 0; g < l->ngpus && g < MU_MAX_GPUS; g++)
			fprintf(r->out, "%s%s", g ? ", " : "", got[g]);
		fprintf(r->out, "], expected [");
		for (size_t g = 0; g < l->ngpus && g < MU_MAX_GPUS; g++)
			fprintf(r->out, "%s%s", g ? ", " : "", want[g]);
		fprintf(r->out, "]\n");
	}
}

/* Runs one step: arrivals, events, then its cycles with their checks. */
static int scn_run_step(scn_t *r, const mu_scenario_step_t *st)
{
	int rc = scn_submit_due(r, st->at);
	if (rc == MU_OK)
		rc = scn_step_events(r, st);
	if (rc == MU_OK)
		rc = scn_check_names(r, st);
	if (rc != MU_OK)
		return rc;
	char why[300] = "";
	if (r->mig && (rc = mu__smig_apply(r->mig, r->e, why, sizeof why)))
		return mu__diag(r->diag, rc, r->file, 0, 0, "step %zu: %s", r->step + 1, why);
	memset(r->evicted, 0, (st->nexpect ? st->nexpect : 1) * sizeof *r->evicted);
	int32_t cycles = st->cycles >= 1 ? st->cycles : 1;
	bool was_waiting = true;
	for (r->cycle = 1; r->cycle <= cycles; r->cycle++) {
		r->dec.n = 0;
		if (r->dra)
			rc = mu__sdra_prepare(r->dra, r->e, r->ids, r->finished, st->at);
		if (rc == MU_OK)
			rc = mu_engine_cycle(r->e, st->at, &r->dec);
		if (rc == MU_OK && r->dra) {
			int undone = mu__sdra_binds(r->dra, r->e, r->ids, r->finished, &r->dec, st->at);
			rc = undone < 0 ? undone : MU_OK;
		}
		if (rc != MU_OK)
			return mu__diag(r->diag, rc, r->file, 0, 0,
					"step %zu cycle %d: the engine failed: %s",
					r->step + 1, (int)r->cycle, mu_strerror(rc));
		if (r->has_hz && (rc = mu_horizon_step(&r->hz, r->e, st->at, NULL)) < 0)
			return mu__diag(r->diag, rc, r->file, 0, 0,
					"step %zu cycle %d: muster-horizon's choice: %s",
					r->step + 1, (int)r->cycle, mu_strerror(rc));
		rc = MU_OK;
		scn_note_binds(r);
		scn_check_step(r, st);
		if (r->has_hz)
			scn_check_hz(r, st);
		if (r->cycle > 1)
			scn_check_stable(r, was_waiting);
		was_waiting = cycles > 1 ? scn_any_waiting(r) : true;
	}
	r->cycle = cycles;
	if (r->mig) {
		if ((rc = mu__smig_replan(r->mig, r->e, r->ids, r->finished, why, sizeof why)))
			return mu__diag(r->diag, rc, r->file, 0, 0, "step %zu: %s",
					r->step + 1, why);
		scn_check_mig(r, st);
	}
	return MU_OK;
}

int mu_scenario_run(const mu_specs_t *s, const char *file, FILE *out,
		    int *passed, int *failed, mu_diag_t *diag)
{
	scn_t r;
	memset(&r, 0, sizeof r);
	mu_workload_mix_init(&r.mix);
	r.s = s;
	r.sc = s->scenario;
	r.file = file ? file : "scenario";
	r.out = out;
	r.diag = diag;
	mu_decisions_init(&r.dec);
	if (!r.sc)
		return mu__diag(diag, MU_EINVAL, r.file, 0, 0,
				"no Scenario document (kind: Scenario) in the file");
	char why[600] = "";
	int rc = scn_alloc(&r);
	if (rc == MU_OK)
		rc = scn_setup(&r);
	if (rc == MU_OK && (rc = mu__sdra_new(s, &r.dra, why, sizeof why)))
		mu__diag(diag, rc, r.file, 0, 0, "DRA: %s", why);
	if (rc == MU_OK && (rc = mu__smig_new(s, &r.mig, why, sizeof why)))
		mu__diag(diag, rc, r.file, 0, 0, "%s", why);
	for (r.step = 0; rc == MU_OK && r.step < r.sc->nsteps; r.step++) {
		const mu_scenario_step_t *st = &r.sc->steps[r.step];
		if (r.step > 0 && st->at < r.sc->steps[r.step - 1].at)
			rc = mu__diag(diag, MU_EINVAL, r.file, 0, 0,
				      "step %zu: its time is before the previous step's",
				      r.step + 1);
		else
			rc = scn_run_step(&r, st);
	}
	mu_decisions_release(&r.dec);
	if (r.e)
		mu_engine_free(r.e);
	mu__sdra_free(r.dra);
	mu__smig_free(r.mig);
	mu_workload_mix_release(&r.mix);
	if (r.has_hz)
		mu_horizon_release(&r.hz);
	free(r.ids);
	free(r.finished);
	free(r.order);
	free(r.evicted);
	free(r.xjob);
	free(r.spec_of);
	free(r.pod0);
	free(r.dev);
	if (passed)
		*passed += r.passed;
	if (failed)
		*failed += r.failed;
	return rc;
}

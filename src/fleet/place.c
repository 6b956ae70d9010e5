/*
 * place.c - the dispatch pass: when a job leaves the hub and where it goes;
 * and explain, per cluster.
 *
 * For one job the candidate clusters are those that are ready, match its
 * cluster selector, are not public before its burst wait (or priority
 * class) allows, have room under its queue's cap there, and have the free
 * capacity in aggregate and a node large enough for its largest pod.  They
 * are ranked: those with all its data-locality labels first, then
 * private, edge, public, then the tightest fit (least GPUs, or CPU for a
 * CPU-only job, left free after it).  Each is asked, in that order,
 * whether the gang fits now node by node (mu_engine_job_whatif()); the
 * first that says yes gets it, and the job is placed in that cluster's
 * model.  A cluster held for a reclaim's claimant takes another job only
 * if the claimant still fits there once its victims are gone (its room
 * is kept, not the whole cluster), and the claimants whose victims are
 * gone go first.  Since round 22 the claimant's room is nominated node by
 * node (where its what-if with the victims gone puts its pods) and counted
 * as taken while a job of its priority or lower is placed there, as
 * kube-scheduler counts a nominated pod on its node: such a job lands on
 * the cluster's other nodes when they have room.  Since round 23 its
 * filters between pods run a second time without the nominated pods, as
 * kube-scheduler's do, and explain runs the pass's own trial.
 * The top file of src/fleet: it calls hubq.c and the public calls of
 * fleet.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet_int.h"

/* A candidate cluster and its rank. */
typedef struct cand {
	int32_t c;
	int8_t far;    /* 0: has the job's locality labels */
	int8_t tier;
	int64_t left;  /* free GPUs (milli) or CPU left after the job */
} cand_t;

static int cmp_cand(const void *a, const void *b)
{
	const cand_t *x = a, *y = b;
	if (x->far != y->far)
		return x->far - y->far;
	if (x->tier != y->tier)
		return x->tier - y->tier;
	if (x->left != y->left)
		return x->left < y->left ? -1 : 1;
	return x->c - y->c;
}

static bool has_labels(const mu__cluster_t *c, const mu_label_t *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool found = false;
		for (size_t k = 0; k < c->nlabels && !found; k++)
			found = strcmp(c->labels[k].key, l[i].key) == 0 &&
				strcmp(c->labels[k].value, l[i].value) == 0;
		if (!found)
			return false;
	}
	return true;
}

static bool burst_ok(const mu_fleet_t *f, const mu__fjob_t *fj, mu_time_t now)
{
	return fj->spec.job->priority >= f->cfg.burst_priority ||
	       now - fj->submit >= f->cfg.burst_after;
}

/* Whether the job can never fit on c, even empty: in aggregate, or a pod
 * larger than its largest node. */
static bool too_big(const mu__cluster_t *c, const mu_job_spec_t *j,
		    const mu_res_t *acct)
{
	mu_res_t alloc;
	mu_engine_totals(c->eng, &alloc, NULL);
	/* even empty: with what other pods take there back */
	if (acct->v[MU_RES_GPU] > alloc.v[MU_RES_GPU] + c->taken_sum.v[MU_RES_GPU] ||
	    acct->v[MU_RES_CPU] > alloc.v[MU_RES_CPU] + c->taken_sum.v[MU_RES_CPU])
		return true;
	for (size_t p = 0; p < j->npodsets; p++)
		if (j->podsets[p].req.v[MU_RES_GPU] > c->max_node_gpu ||
		    j->podsets[p].req.v[MU_RES_CPU] > c->max_node_cpu)
			return true;
	return false;
}

/* --- failed shapes within one pass ----------------------------------------
 * Inside a pass capacity only shrinks (jobs are sent, none end), so a job
 * of a simple shape (one pod set with no node constraints, no cluster
 * selector or locality) that fitted nowhere means every later job of the
 * same shape, queue and burst right fails too: it is skipped at O(1). */

#define MEMO_SLOTS 4096

typedef struct shape_key {
	int64_t gpu, milli, cpu, mem;
	int32_t replicas, min_member, queue;
	int32_t used;  /* 0: empty slot; else 1 + burst right + 2 x
	                * non-preemptible */
} shape_key_t;

typedef struct memo {
	shape_key_t slot[MEMO_SLOTS];
	int8_t why[MEMO_SLOTS];      /* the failure of the first of a shape */
	bool blocked[MEMO_SLOTS];    /* and whether the burst wait held it */
	int32_t n;
} memo_t;

/* Whether q has a limit or a cap: then its jobs' failures are its own. */
static bool queue_bounded(const mu__hubq_t *q)
{
	if (q->ncaps)
		return true;
	for (int r = 0; r < MU_RES_MAX; r++)
		if (q->limit.v[r] != MU_RES_UNLIMITED)
			return true;
	return false;
}

/* Fills k for a job of simple shape; false if the job is not simple.  The
 * queue is part of the key only when it has a limit or a cap. */
static bool shape_of(const mu_fleet_t *f, const mu__fjob_t *fj, bool burst,
		     shape_key_t *k)
{
	const mu_job_spec_t *j = fj->spec.job;
	if (j->npodsets != 1 || fj->spec.ncluster_selector || fj->spec.nlocality ||
	    fj->spec.min_resources || fj->spec.dra ||
	    j->topo.required || j->topo.preferred)
		return false;
	const mu_podset_spec_t *p = &j->podsets[0];
	if (p->next || p->nnode_selector || p->naffinity || p->ntolerations ||
	    p->ngpu_models || p->align || p->want_nic || p->pin_cpus)
		return false;
	/* a non-preemptible job's failure may be its queue's quota: its
	 * queue is part of its key, and it never stands for a preemptible
	 * one */
	bool own = queue_bounded(&f->queues[fj->queue]) || !j->preemptible;
	*k = (shape_key_t){p->req.v[MU_RES_GPU], p->req.v[MU_RES_GPU_MILLI],
			   p->req.v[MU_RES_CPU], p->req.v[MU_RES_MEM], p->replicas,
			   j->min_member, own ? fj->queue : -1,
			   1 + burst + 2 * !j->preemptible};
	return true;
}

static uint32_t shape_hash(const shape_key_t *k)
{
	uint64_t h = 1469598103934665603ull;
	const int64_t v[8] = {k->gpu, k->milli, k->cpu, k->mem, k->replicas,
			      k->min_member, k->queue, k->used};
	for (int i = 0; i < 8; i++)
		h = (h ^ (uint64_t)v[i]) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 29));
}

/* The slot of k in m, or -1; with fj, inserts k with fj's failure when
 * missing (while there is room). */
static int32_t memo_find(memo_t *m, const shape_key_t *k, const mu__fjob_t *fj)
{
	uint32_t i = shape_hash(k) & (MEMO_SLOTS - 1);
	for (; m->slot[i].used; i = (i + 1) & (MEMO_SLOTS - 1))
		if (!memcmp(&m->slot[i], k, sizeof *k))
			return (int32_t)i;
	if (fj && m->n < MEMO_SLOTS / 2) {
		m->slot[i] = *k;
		m->why[i] = fj->why;
		m->blocked[i] = fj->burst_blocked;
		m->n++;
	}
	return -1;
}

/* What kept clusters out, for the reason of a job that went nowhere. */
typedef struct tally {
	int32_t selected, not_ready, burst, capped, big, full, tried, minres, held;
} tally_t;

/* Whether a group's minResources (NULL: none) fit in a cluster's free
 * capacity summed over its nodes (alloc - used, accounting units), slot
 * by slot, as the coscheduling plugin's PreFilter checks them against the
 * nodes' allocatable less their pods' requests.  O(resources). */
static bool min_resources_free(const mu_res_t *min, const mu_res_t *alloc, const mu_res_t *used)
{
	for (int r = 0; min && r < MU_RES_MAX; r++)
		if (min->v[r] > 0 && alloc->v[r] - used->v[r] < min->v[r])
			return false;
	return true;
}

/* The gate of cluster c for job fj: NULL when it is a candidate (and
 * fills *cd), else a static word saying why not; counts it in t. */
static const char *gate(const mu_fleet_t *f, const mu__fjob_t *fj, int32_t c,
			const mu_res_t *acct, mu_time_t now, cand_t *cd,
			tally_t *t)
{
	const mu__cluster_t *k = &f->clusters[c];
	if (!has_labels(k, fj->spec.cluster_selector, fj->spec.ncluster_selector))
		return "selector";
	t->selected++;
	if (too_big(k, fj->spec.job, acct))
		return t->big++, "too big";
	if (k->state != MU_CLUSTER_READY)
		return t->not_ready++, "not ready";
	if (k->tier == MU_TIER_PUBLIC && !burst_ok(f, fj, now))
		return t->burst++, "burst wait";
	if (!mu__hubq_within_cap(&f->queues[fj->queue], c, acct))
		return t->capped++, "cap";
	mu_res_t alloc, used;
	mu_engine_totals(k->eng, &alloc, &used);
	if (!min_resources_free(fj->spec.min_resources, &alloc, &used))
		return t->minres++, "min resources not free";
	int r = acct->v[MU_RES_GPU] > 0 ? MU_RES_GPU : MU_RES_CPU;
	int64_t left = alloc.v[r] - used.v[r] - acct->v[r];
	if (left < 0 || alloc.v[MU_RES_CPU] - used.v[MU_RES_CPU] < acct->v[MU_RES_CPU])
		return t->full++, "no fit";
	*cd = (cand_t){c, has_labels(k, fj->spec.locality, fj->spec.nlocality) ? 0 : 1,
		       (int8_t)k->tier, left};
	return NULL;
}

const char *mu__fleet_gate(const mu_fleet_t *f, int32_t j, int32_t c, mu_time_t now)
{
	const mu__fjob_t *fj = &f->jobs[j];
	mu_res_t acct = mu__job_acct(fj->spec.job);
	cand_t cd;
	tally_t t = {0};
	return gate(f, fj, c, &acct, now, &cd, &t);
}

/* Whether cluster c is held for a claimant other than job j at now, one
 * of j's priority or higher: as kube-scheduler counts a nominated pod on
 * its node only against pods of equal or lower priority (round 20; a job
 * of a higher priority passes the hold).  O(1). */
static bool held_for_other(const mu_fleet_t *f, int32_t c, int32_t j, mu_time_t now)
{
	const mu__cluster_t *k = &f->clusters[c];
	return k->hold_job >= 0 && k->hold_job != j && now < k->hold_until &&
	       f->jobs[k->hold_job].state == MU_FJ_QUEUED &&
	       f->jobs[j].spec.job->priority <= f->jobs[k->hold_job].spec.job->priority;
}

/* The victims of c's hold still on their way out, into ids (their model
 * jobs) and np (a shrinking victim's pods; 0: all), both with room for
 * MU__RECLAIM_MAXV; returns their count.  O(victims). */
static int32_t hold_gone(const mu_fleet_t *f, int32_t c, mu_id_t *ids, int32_t *np)
{
	const mu__cluster_t *k = &f->clusters[c];
	int32_t n = 0;
	for (int32_t i = 0; i < k->hold_nvic; i++) {
		const mu__fjob_t *v = &f->jobs[k->hold_vic[i]];
		if (v->reclaim_out && v->state == MU_FJ_DISPATCHED && v->cluster == c &&
		    v->reclaimed_for == k->hold_job) {
			np[n] = v->shrink_out;
			ids[n++] = v->ejob;
		}
	}
	return n;
}

/* Whether the claimant cluster c is held for still fits there, as things
 * now stand in its model, with its victims still on their way out gone
 * (the room the hold keeps: a job placed that takes it is taken back).
 * O(one what-if). */
static int hold_keeps(mu_fleet_t *f, int32_t c, mu_time_t now, bool *keeps)
{
	mu__cluster_t *k = &f->clusters[c];
	mu_id_t ids[MU__RECLAIM_MAXV];
	int32_t np[MU__RECLAIM_MAXV];
	int32_t n = hold_gone(f, c, ids, np);
	mu_job_spec_t s = *f->jobs[k->hold_job].spec.job;
	s.queue = MU__FLEET_QUEUE;
	mu_whatif_t w;
	int rc = mu_engine_job_whatif_without_pods(k->eng, &s, now, ids, np, n, &w);
	*keeps = rc == MU_OK && w.fits;
	return rc;
}

/* The nomination of c's hold (round 22): where its claimant's pods go
 * with its victims gone, as kube-scheduler's preemptor gets its
 * status.nominatedNodeName; none when it does not fit.  Worked out at
 * most once a pass per hold (k->nom_pass), not per job: the room stays
 * where it was nominated while the pass places others, as a nominated
 * node stays the preemptor's.  O(one what-if) then, else O(1). */
static int nominate(mu_fleet_t *f, int32_t c, mu_time_t now)
{
	mu__cluster_t *k = &f->clusters[c];
	if (k->nom_job == k->hold_job && k->nom_pass == f->pass)
		return MU_OK;
	const mu_job_spec_t *h = f->jobs[k->hold_job].spec.job;
	int32_t pods = 0;
	for (size_t p = 0; p < h->npodsets; p++)
		pods += h->podsets[p].replicas;
	int rc = mu__fleet_grow((void **)&k->nom, &k->nom_cap, pods, sizeof *k->nom);
	if (rc)
		return rc;
	mu_id_t ids[MU__RECLAIM_MAXV];
	int32_t np[MU__RECLAIM_MAXV];
	int32_t n = hold_gone(f, c, ids, np);
	mu_job_spec_t s = *h;
	s.queue = MU__FLEET_QUEUE;
	mu_whatif_t w;
	rc = mu_engine_job_whatif_where(k->eng, &s, now, ids, np, n, k->nom, pods, &w);
	k->nnom = rc == MU_OK && w.fits ? pods : 0;
	k->nom_job = k->hold_job;
	k->nom_pass = f->pass;
	return rc;
}

/* Takes back model job *ph (-1: nothing): what nominated_take() bound,
 * or a trial's job (pass_both(), explain), withdrawn and forgotten (no
 * run, no history), and sets *ph to -1.  O(its pods). */
static int unnominate(mu__cluster_t *k, mu_id_t *ph, mu_time_t now)
{
	if (*ph < 0)
		return MU_OK;
	int rc = mu_engine_job_withdraw(k->eng, *ph, now);
	rc = rc ? rc : mu_engine_job_forget(k->eng, *ph);
	*ph = -1;
	return rc;
}

/* The spec of the nominated pods of claimant h (nom, its pods' nodes):
 * per pod set of h with a pod nominated, one set in ps of that many
 * replicas with its requests and, when labels, its labels (what a node
 * and other pods see of a pod), set[p] its index (-1: none); js a gang of
 * them all.  ps and
 * set have room for h's pod sets.  O(h's pods). */
static void nominated_spec(const mu_job_spec_t *h, const mu_id_t *nom, bool labels,
			   mu_podset_spec_t *ps, int32_t *set, mu_job_spec_t *js)
{
	memset(js, 0, sizeof *js);
	js->podsets = ps;
	for (size_t p = 0, i = 0; p < h->npodsets; p++) {
		const mu_podset_spec_t *hp = &h->podsets[p];
		mu_podset_spec_t q = {.req = hp->req, .ext = hp->ext, .next = hp->next,
				      .gpu_memory = hp->gpu_memory,
				      .labels = labels ? hp->labels : NULL,
				      .nlabels = labels ? hp->nlabels : 0};
		for (int32_t r = 0; r < hp->replicas; r++, i++)
			q.replicas += nom[i] >= 0;
		set[p] = q.replicas ? (int32_t)js->npodsets : -1;
		if (q.replicas) {
			ps[js->npodsets++] = q;
			js->min_member += q.replicas;
		}
	}
	js->name = "~nominated";
	js->queue = MU__FLEET_QUEUE;
	js->never_preempt = js->no_move = true;
}

/* Counts the room nominated on c for its claimant as taken, for a job of
 * its priority or lower (held_for_other): the nominated pods are bound in
 * c's model on their nodes, as one job (*ph; -1 when none is nominated),
 * on top of the victims still there, as kube-scheduler adds a nominated
 * pod to its node's pods while it filters a pod of equal or lower
 * priority (addGENominatedPods, in kubernetes/kubernetes
 * pkg/scheduler/framework/runtime/framework.go).  A device no longer free
 * is not taken twice (the node is full either way).  Without labels the
 * pods count for the room they take only (no pod's affinity or spread
 * sees them: pass_both()).  unnominate() takes it back.  O(one what-if a
 * pass + the claimant's pods). */
static int nominated_take(mu_fleet_t *f, int32_t c, mu_time_t now, bool labels, mu_id_t *ph)
{
	mu__cluster_t *k = &f->clusters[c];
	*ph = -1;
	int rc = nominate(f, c, now);
	if (rc || !k->nnom)
		return rc;
	const mu_job_spec_t *h = f->jobs[k->hold_job].spec.job;
	mu_podset_spec_t *ps = calloc(h->npodsets, sizeof *ps);
	int32_t *set = calloc(h->npodsets, 2 * sizeof *set); /* and each set's next pod */
	if (!ps || !set) {
		free(ps);
		free(set);
		return MU_ENOMEM;
	}
	mu_job_spec_t js;
	nominated_spec(h, k->nom, labels, ps, set, &js);
	js.submit = now;
	int32_t *next = set + h->npodsets;
	rc = js.npodsets ? mu_engine_job_submit(k->eng, &js, now, ph) : MU_OK;
	for (size_t p = 0, i = 0; rc == MU_OK && *ph >= 0 && p < h->npodsets; p++)
		for (int32_t r = 0; rc == MU_OK && r < h->podsets[p].replicas; r++, i++)
			if (k->nom[i] >= 0)
				rc = mu_engine_pod_bound(k->eng, *ph, set[p], next[set[p]]++,
							 k->nom[i], NULL, now);
	free(set);
	free(ps); /* the engine keeps its own copy */
	if (rc && *ph >= 0)
		unnominate(k, ph, now);
	return rc;
}

/* Places s in c's model (a submit, a cycle), with c's claimant's room
 * counted as taken when held (nominated_take(); labels: with its pods'
 * labels) and taken back after; *ej the model job (-1 when the submit
 * failed), *added whether nominated pods were counted, *ok whether it
 * runs (or !must_run).  O(a cycle and its decisions + the claimant's
 * pods). */
static int place_once(mu_fleet_t *f, int32_t c, const mu_job_spec_t *s, mu_time_t now,
		      bool held, bool labels, bool must_run, mu_id_t *ej, bool *added, bool *ok)
{
	mu__cluster_t *k = &f->clusters[c];
	mu_id_t ph = -1;
	*ej = -1;
	*ok = false;
	int rc = held ? nominated_take(f, c, now, labels, &ph) : MU_OK;
	*added = ph >= 0;
	if (rc == MU_OK)
		rc = mu_engine_job_submit(k->eng, s, now, ej);
	bool bound = false;
	if (rc == MU_OK) {
		mu_decisions_t d;
		mu_decisions_init(&d);
		rc = mu_engine_cycle(k->eng, now, &d); /* places it where it fits */
		/* a gang starts whole or not at all: binds of it mean it runs
		 * (mu_engine_job_info() would also work out a start for one
		 * that waits, O(running jobs log them): round 23's bench) */
		for (size_t i = 0; i < d.n && !bound; i++)
			bound = d.v[i].kind == MU_DEC_BIND && d.v[i].job == *ej;
		mu_decisions_release(&d);
	}
	int rn = unnominate(k, &ph, now); /* the claimant's again for its check */
	rc = rc ? rc : rn;
	*ok = rc == MU_OK && (!must_run || bound);
	return rc;
}

/* Whether job ej's filters between pods pass on c as things stand, into
 * *ok.  O(its pods with terms x terms). */
static int recheck(mu__cluster_t *k, mu_id_t ej, bool *ok)
{
	mu_filter_t why;
	int32_t pod;
	int rc = mu_engine_job_recheck(k->eng, ej, &why, &pod);
	*ok = rc == MU_OK && why == MU_F_COUNT;
	return rc;
}

/* kube-scheduler's two filter passes for a pod where pods of equal or
 * higher priority are nominated (RunFilterPluginsWithNominatedPods,
 * kubernetes/kubernetes pkg/scheduler/framework/runtime/framework.go):
 * the filters with the nominated pods added, then again without them, so
 * that an affinity (or a spread) that only pods not there yet meet does
 * not let it in.  Job ej (spec s) was placed on held c with the nominated
 * pods bound, labels and all (pass 1); its filters between pods run again
 * without them (pass 2, mu_engine_job_recheck()).  When that fails, as
 * kube-scheduler then tries the node's neighbours, ej is taken back and
 * placed once more with the nominated pods taking their room but showing
 * no labels (pass 2's view for its own affinity and spread, pass 1's for
 * room), and its filters between pods run again with them bound, labels
 * and all (pass 1).  *ej is the job placed (-1: none); *ok whether it
 * passes both.  O(two cycles + rechecks). */
static int pass_both(mu_fleet_t *f, int32_t c, const mu_job_spec_t *s, mu_time_t now,
		     mu_id_t *ej, bool *ok)
{
	mu__cluster_t *k = &f->clusters[c];
	int rc = recheck(k, *ej, ok);
	if (rc || *ok)
		return rc;
	bool added;
	rc = unnominate(k, ej, now); /* taken back, no run and no record */
	if (rc == MU_OK)
		rc = place_once(f, c, s, now, true, false, true, ej, &added, ok);
	if (rc || !*ok)
		return rc;
	mu_id_t ph;
	rc = nominated_take(f, c, now, true, &ph);
	if (rc == MU_OK)
		rc = recheck(k, *ej, ok);
	int rn = unnominate(k, &ph, now);
	return rc ? rc : rn;
}

/* The pass's trial of s on c (commit_once(), explain): placed there, on
 * a cluster held for a claimant of its priority or higher (held) with
 * the claimant's nominated room counted as taken and both filter passes
 * (pass_both()); *ej the model job (-1: none), *ok whether it runs (or
 * !must_run) and passed.  O(one or two cycles + rechecks). */
static int trial(mu_fleet_t *f, int32_t c, const mu_job_spec_t *s, mu_time_t now, bool held,
		 bool must_run, mu_id_t *ej, bool *ok)
{
	bool added;
	int rc = place_once(f, c, s, now, held, true, must_run, ej, &added, ok);
	if (rc == MU_OK && *ok && added)
		rc = pass_both(f, c, s, now, ej, ok);
	return rc;
}

/* mu__fleet_commit() once; spread: a job with claims is spread over the
 * nodes its claims allow (its second try).  On a cluster held for a
 * claimant of its priority or higher, its nominated room counts as taken
 * while the job is placed, and the hold's check follows. */
static int commit_once(mu_fleet_t *f, int32_t j, int32_t c, uint32_t gen, mu_time_t now,
		       bool must_run, bool spread, bool *ok)
{
	mu__fjob_t *fj = &f->jobs[j];
	mu__cluster_t *k = &f->clusters[c];
	mu_job_spec_t s = *fj->spec.job;
	char name[512];
	snprintf(name, sizeof name, "%.400s.j%d.g%u", s.name, j, gen);
	s.name = name;
	s.queue = MU__FLEET_QUEUE;
	s.submit = now;
	void *steer = NULL; /* DRA: only where its claims can be allocated */
	int rc = fj->spec.dra && must_run ? mu__fleet_dra_steer(f, j, c, &s, spread, &steer) : MU_OK;
	/* a claimant's nominated room counts as taken (round 22), and both
	 * filter passes are run (round 23) */
	bool held = must_run && held_for_other(f, c, j, now);
	mu_id_t ej = -1;
	if (rc == MU_OK)
		rc = trial(f, c, &s, now, held, must_run, &ej, ok);
	mu__fleet_dra_unsteer(steer); /* s's pod sets with it */
	if (ej < 0)
		return rc;
	if (*ok && fj->spec.dra && (rc = mu__fleet_dra_take(f, j, c, ej, must_run, ok)) != MU_OK)
		*ok = false; /* taken back below; the error returned after */
	/* the hold's check, while it has room to keep (a claimant that no
	 * longer fits with its victims gone, nominated nowhere, has none) */
	if (rc == MU_OK && *ok && held && k->nnom && (rc = hold_keeps(f, c, now, ok)) != MU_OK)
		*ok = false; /* taken back below; the error returned after */
	int err = rc;
	if (!*ok) { /* taken back at once, and its record with it */
		mu__fleet_dra_drop(f, j, c); /* its claims' devices, if it got any */
		rc = mu_engine_job_withdraw(k->eng, ej, now);
		rc = rc ? rc : mu_engine_job_forget(k->eng, ej);
		return err ? err : rc;
	}
	mu_res_t a = mu__job_acct(fj->spec.job);
	mu__hubq_charge(f, fj->queue, c, &a, +1, fj->spec.job->preemptible);
	k->running++;
	fj->state = MU_FJ_DISPATCHED;
	fj->cluster = c;
	fj->ejob = ej;
	fj->gen = gen;
	fj->dispatched = now;
	fj->why = MU_FW_NONE;
	f->usage_gen++;
	mu__fleet_hold_drop(f, j); /* placed: its hold has done its work */
	return MU_OK;
}

int mu__fleet_commit(mu_fleet_t *f, int32_t j, int32_t c, uint32_t gen, mu_time_t now,
		     bool must_run, bool *ok)
{
	int rc = commit_once(f, j, c, gen, now, must_run, false, ok);
	/* a gang whose pods the model packed onto fewer devices than they
	 * claim: once more, spread over the nodes with devices */
	if (rc == MU_OK && !*ok && must_run && f->jobs[j].spec.dra &&
	    mu__fleet_dra_why(f, j, c))
		rc = commit_once(f, j, c, gen, now, must_run, true, ok);
	return rc;
}

/* Why a job that went nowhere waits, from what kept clusters out. */
static mu_fleet_why_t why_of(const tally_t *t)
{
	if (!t->selected)
		return MU_FW_NO_CLUSTER;
	if (t->big == t->selected)
		return MU_FW_TOO_BIG;
	if (t->tried || t->full || t->held)
		return t->burst ? MU_FW_BURST_WAIT : MU_FW_NO_FIT;
	if (t->minres)
		return MU_FW_MIN_RESOURCES;
	if (t->burst)
		return MU_FW_BURST_WAIT;
	if (t->capped)
		return MU_FW_CAP;
	return MU_FW_NOT_READY;
}

/* Tries job j at now: limit, candidates in rank order, the first fit.
 * cands has room for every cluster.  Appends a decision on success. */
static int try_job(mu_fleet_t *f, int32_t j, mu_time_t now, cand_t *cands,
		   mu_fleet_decisions_t *out)
{
	mu__fjob_t *fj = &f->jobs[j];
	mu_res_t acct = mu__job_acct(fj->spec.job);
	fj->fail_epoch = f->epoch;
	fj->closest = -1;
	json_object_clear(fj->dra_why); /* DRA: this try's reasons only */
	if (!mu__hubq_within_limit(f, fj->queue, &acct)) {
		fj->why = MU_FW_QUEUE_LIMIT;
		return MU_OK;
	}
	/* the engine keeps non-preemptible jobs within deserved quota */
	if (!fj->spec.job->preemptible && mu__hubq_np_over(f, fj->queue, &acct) >= 0) {
		fj->why = MU_FW_OVER_QUOTA;
		return MU_OK;
	}
	tally_t t = {0};
	int32_t n = 0;
	for (int32_t c = 0; c < f->nclusters; c++)
		if (!gate(f, fj, c, &acct, now, &cands[n], &t))
			n++;
	fj->burst_blocked = t.burst > 0;
	if (n > 1)
		qsort(cands, (size_t)n, sizeof *cands, cmp_cand);
	int32_t best_fit = -1;
	for (int32_t i = 0; i < n; i++) {
		if (f->cfg.max_tries > 0 && i >= f->cfg.max_tries)
			break;
		mu__cluster_t *k = &f->clusters[cands[i].c];
		mu_whatif_t w;
		mu_job_spec_t s = *fj->spec.job;
		s.queue = MU__FLEET_QUEUE;
		void *steer = NULL;
		int rc = fj->spec.dra ? mu__fleet_dra_steer(f, j, cands[i].c, &s, false, &steer) : MU_OK;
		if (rc == MU_OK)
			rc = mu_engine_job_whatif(k->eng, &s, now, false, &w);
		mu__fleet_dra_unsteer(steer);
		if (rc)
			return rc;
		t.tried++;
		if (w.fits) {
			bool ok = false;
			if ((rc = mu__fleet_commit(f, j, cands[i].c, f->jobs[j].gen + 1, now, true, &ok)) != MU_OK)
				return rc;
			if (!ok) { /* it did not start, or took a claimant's room */
				t.held += held_for_other(f, cands[i].c, j, now);
				continue;
			}
			if (out->n == out->cap) {
				size_t cap = out->cap ? out->cap * 2 : 64;
				mu_fleet_decision_t *v = realloc(out->v, cap * sizeof *v);
				if (!v)
					return MU_ENOMEM;
				out->v = v;
				out->cap = cap;
			}
			out->v[out->n++] = (mu_fleet_decision_t){j, cands[i].c, fj->gen};
			return MU_OK;
		}
		if (w.reason.pods_fit > best_fit) {
			best_fit = w.reason.pods_fit;
			fj->closest = cands[i].c;
		}
	}
	fj->why = (int8_t)why_of(&t);
	return MU_OK;
}

/* The holds of reclaim first: a claimant whose victims are all gone is
 * tried before any queue is served (it is the next job placed on the
 * cluster held for it, or anywhere else it fits), and its hold ends
 * whether it fits or not (no longer fitting ends it); a hold of a job no
 * longer waiting, or past cfg.reclaim_hold, ends.  O(clusters + what-ifs
 * of the claimants tried). */
static int try_holds(mu_fleet_t *f, mu_time_t now, cand_t *cands, mu_fleet_decisions_t *out)
{
	for (int32_t c = 0; c < f->nclusters; c++) {
		int32_t j = f->clusters[c].hold_job;
		if (j < 0)
			continue;
		mu__fjob_t *fj = &f->jobs[j];
		if (fj->state == MU_FJ_QUEUED && fj->victims == 0 && now < f->clusters[c].hold_until) {
			int rc = try_job(f, j, now, cands, out);
			if (rc)
				return rc;
		} else if (fj->state == MU_FJ_QUEUED && now < f->clusters[c].hold_until) {
			continue; /* its victims are on their way out */
		}
		mu__fleet_hold_drop(f, j);
	}
	return MU_OK;
}

int mu_fleet_dispatch(mu_fleet_t *f, mu_time_t now, mu_fleet_decisions_t *out)
{
	cand_t *cands = malloc((size_t)(f->nclusters ? f->nclusters : 1) * sizeof *cands);
	memo_t *memo = calloc(1, sizeof *memo);
	if (!cands || !memo) {
		free(cands);
		free(memo);
		return MU_ENOMEM;
	}
	f->pass++; /* holds' nominations are worked out again */
	mu__hubq_prepare(f);
	int rc = mu__hubq_fair(f, now);
	if (rc == MU_OK)
		rc = try_holds(f, now, cands, out);
	int32_t cur = -1;
	uint64_t seen = f->usage_gen;
	while (rc == MU_OK) {
		/* While no usage moved, shares stand still and the queue that
		 * went last still goes first while it has jobs in line. */
		if (cur < 0 || f->queues[cur].cursor >= f->queues[cur].nline ||
		    f->usage_gen != seen)
			cur = mu__hubq_pick(f);
		if (cur < 0)
			break;
		seen = f->usage_gen;
		mu__hubq_t *q = &f->queues[cur];
		int32_t j = q->line[q->cursor++].job;
		mu__fjob_t *fj = &f->jobs[j];
		if (fj->state != MU_FJ_QUEUED)
			continue;
		/* Nothing freed since it last failed, and no new burst right:
		 * it would fail again. */
		if (fj->fail_epoch == f->epoch &&
		    !(fj->burst_blocked && burst_ok(f, fj, now)))
			continue;
		shape_key_t key;
		bool simple = shape_of(f, fj, burst_ok(f, fj, now), &key);
		int32_t hit = simple ? memo_find(memo, &key, NULL) : -1;
		if (hit >= 0) {
			fj->fail_epoch = f->epoch; /* as the one it is shaped like */
			fj->why = memo->why[hit];
			fj->burst_blocked = memo->blocked[hit];
			fj->closest = -1;
			continue;
		}
		size_t before = out->n;
		if ((rc = try_job(f, j, now, cands, out)) != MU_OK)
			break;
		if (simple && out->n == before)
			memo_find(memo, &key, fj);
	}
	free(cands);
	free(memo);
	return rc;
}

/* Whether spec s, which fits on c, would be kept there by the pass, into
 * *keeps: its trial as commit_once() runs it (trial(): the room
 * nominated for c's claimant, worked out again, counted as taken, both
 * filter passes), then the hold's check; all it placed is taken back.
 * O(one or two cycles + three what-ifs + the pods of s and the
 * claimant). */
static int kept_beside(mu_fleet_t *f, int32_t c, const mu_job_spec_t *s, mu_time_t now,
		       bool *keeps)
{
	mu__cluster_t *k = &f->clusters[c];
	mu_job_spec_t t = *s;
	t.name = "~explain";
	t.submit = now;
	mu_id_t ej;
	/* worked out afresh: nodes may have changed since the last pass */
	k->nom_job = -1;
	int rc = trial(f, c, &t, now, true, true, &ej, keeps);
	if (rc == MU_OK && *keeps && k->nnom)
		rc = hold_keeps(f, c, now, keeps);
	int rn = unnominate(k, &ej, now); /* the trial, as the placeholder */
	return rc ? rc : rn;
}

int mu_fleet_job_explain(mu_fleet_t *f, mu_id_t j, mu_time_t now,
			 mu_fleet_explain_t *out)
{
	if (j < 0 || j >= f->njobs)
		return MU_ENOENT;
	mu__fjob_t *fj = &f->jobs[j];
	mu_res_t acct = mu__job_acct(fj->spec.job);
	tally_t t = {0};
	for (int32_t c = 0; c < f->nclusters; c++) {
		mu_fleet_explain_t *x = &out[c];
		memset(x, 0, sizeof *x);
		x->cluster = c;
		x->held_for = -1;
		x->whatif.expected_start = MU_TIME_NONE;
		cand_t cd;
		x->why = gate(f, fj, c, &acct, now, &cd, &t);
		if (x->why && strcmp(x->why, "no fit") != 0)
			continue;
		x->eligible = true;
		mu_job_spec_t s = *fj->spec.job;
		s.queue = MU__FLEET_QUEUE;
		void *steer = NULL;
		int rc = fj->spec.dra ? mu__fleet_dra_steer(f, (int32_t)j, c, &s, false, &steer) : MU_OK;
		if (rc == MU_OK)
			rc = mu_engine_job_whatif(f->clusters[c].eng, &s, now, true, &x->whatif);
		/* a fit on a cluster held for another job: held when the
		 * pass would not keep it there (round 22: the claimant's
		 * nominated room; round 23: the second filter pass and the
		 * hold's check, as the pass runs them) */
		bool room = true;
		if (rc == MU_OK && x->whatif.fits && held_for_other(f, c, (int32_t)j, now))
			rc = kept_beside(f, c, &s, now, &room);
		mu__fleet_dra_unsteer(steer); /* s's pod sets with it */
		if (rc)
			return rc;
		x->why = !x->whatif.fits ? "no fit" : "fits";
		if (!room) {
			x->why = "held";
			x->held_for = f->clusters[c].hold_job;
		}
		/* its nodes fit but its claims' devices did not, last time */
		if (fj->spec.dra && (x->devices = mu__fleet_dra_why(f, (int32_t)j, c)) != NULL)
			x->why = "no devices";
	}
	return MU_OK;
}

/*
 * preempt.c - preemption inside a queue and reclaim across queues.
 *
 * When a job does not fit as things are, its pods are placed one by one
 * again; a pod that fits nowhere looks, node by node, for the cheapest set
 * of victims on that node whose eviction makes it fit.  Victims are whole
 * gangs, or single surplus pods of elastic jobs (tried first).  Cost is
 * lexicographic: the highest victim priority, then whole jobs stopped, then
 * GPUs evicted, then the youngest victims first.  Every eviction and
 * placement is logged; unless the whole gang fits in the end, everything is
 * restored exactly (same nodes, same devices) and nothing is emitted.
 *
 * Who may be a victim of job J:
 *   - a running, preemptible job that has run min_runtime;
 *   - in J's queue: only a strictly lower priority (preemption);
 *   - in another queue (reclaim): J's queue path must stay within its fair
 *     share, the victim's queue path must stay at or above its deserved
 *     quota (in-quota usage is never reclaimed), and below their common
 *     ancestor J's side must not end up more satisfied than the victim's
 *     (no reversal); the victim's queue must be out of its cool-down.
 * Work per preempting pod is O(class nodes x pods per node).
 */
#include "engine/engine_int.h"

/* A candidate eviction on one node. */
typedef struct victim {
	int32_t job;
	int32_t pod;        /* surplus pod, or -1 for the whole job */
	int32_t prio;
	int64_t gpu;        /* accounting GPUs it frees cluster-wide */
	mu_time_t start;
} victim_t;

typedef struct pcost {
	int32_t prio, jobs;
	int64_t gpu;
	mu_time_t young;    /* latest start among victims (larger is better) */
} pcost_t;

typedef struct pctx {
	mu_engine_t *e;
	int32_t jid;
	mu_time_t now;
	mu_res_t need;      /* accounting of J's pods still unbound */
	bool gpu_dominant;
	mu_time_t retry_at; /* when a victim refused for time turns eligible */
	bool moving;        /* consolidation: victims are moved, not stopped */
	victim_t *v;
	int32_t nv, vcap;
} pctx_t;

static bool dom_res(const pctx_t *c, int r)
{
	return mu__dom_res(c->gpu_dominant, r);
}

/* The children of the lowest common ancestor on each side (the roots when
 * there is none). */
static void lca_sides(const mu_engine_t *e, int32_t a, int32_t b, int32_t *sa,
		      int32_t *sb)
{
	while (e->queues[a].depth > e->queues[b].depth)
		a = e->queues[a].parent;
	while (e->queues[b].depth > e->queues[a].depth)
		b = e->queues[b].parent;
	int32_t pa = a, pb = b;
	while (a != b) {
		pa = a;
		pb = b;
		a = e->queues[a].parent;
		b = e->queues[b].parent;
		if (a < 0 || b < 0) {
			pa = a < 0 ? pa : a;
			pb = b < 0 ? pb : b;
			/* different roots: the roots themselves */
			while (e->queues[pa].parent >= 0)
				pa = e->queues[pa].parent;
			while (e->queues[pb].parent >= 0)
				pb = e->queues[pb].parent;
			break;
		}
	}
	*sa = pa;
	*sb = pb;
}

static double ratio(int64_t used, int64_t fair)
{
	return fair > 0 ? (double)used / (double)fair : (used > 0 ? 1e18 : 0);
}

/* Whether removing `unit` (accounting) of job V's queue may serve J by
 * reclaim.  O(depth x resources). */
static bool reclaim_ok(pctx_t *c, const mu__job_t *v, const mu_res_t *unit)
{
	const mu_engine_t *e = c->e;
	int32_t jq = e->jobs[c->jid].queue, vq = v->queue, ja, va;
	if (e->cfg.reclaim_cooldown > 0 &&
	    e->queues[vq].last_reclaimed != MU_TIME_NONE &&
	    c->now - e->queues[vq].last_reclaimed < e->cfg.reclaim_cooldown) {
		mu_time_t at = e->queues[vq].last_reclaimed + e->cfg.reclaim_cooldown;
		c->retry_at = at < c->retry_at ? at : c->retry_at;
		return false;
	}
	lca_sides(e, jq, vq, &ja, &va);
	for (int32_t q = vq;; q = e->queues[q].parent) { /* in-quota kept */
		const mu__queue_t *qq = &e->queues[q];
		for (int r = 0; r < e->nres; r++)
			if (unit->v[r] && dom_res(c, r) &&
			    qq->used.v[r] - unit->v[r] < qq->deserved.v[r])
				return false;
		if (q == va)
			break;
	}
	for (int32_t q = jq;; q = e->queues[q].parent) { /* within fair share */
		const mu__queue_t *qq = &e->queues[q];
		for (int r = 0; r < e->nres; r++)
			if (dom_res(c, r) && c->need.v[r] &&
			    qq->used.v[r] + c->need.v[r] > qq->fair.v[r])
				return false;
		if (q == ja)
			break;
	}
	const mu__queue_t *A = &e->queues[ja], *V = &e->queues[va];
	for (int r = 0; r < e->nres; r++) /* no reversal */
		if (dom_res(c, r) &&
		    ratio(A->used.v[r] + c->need.v[r], A->fair.v[r]) >
		    ratio(V->used.v[r] - unit->v[r], V->fair.v[r]))
			return false;
	return true;
}

/* Whether pod `pod` of job V (-1: the whole job) may be evicted for J. */
static bool victim_ok(pctx_t *c, int32_t vid, int32_t pod)
{
	const mu_engine_t *e = c->e;
	const mu__job_t *v = &e->jobs[vid], *j = &e->jobs[c->jid];
	if (vid == c->jid || v->state != MU_JOB_RUNNING || !v->preemptible)
		return false;
	if (c->now - v->start < e->cfg.min_runtime) {
		if (v->start + e->cfg.min_runtime < c->retry_at)
			c->retry_at = v->start + e->cfg.min_runtime;
		return false;
	}
	if (c->moving) /* whole jobs of no higher priority, any queue */
		return pod < 0 && v->eprio <= j->eprio && j->topo < 0;
	if (v->backfill_for == c->jid)
		return true; /* it started in the hole of j's reservation */
	if (v->queue == j->queue)
		return e->cfg.preemption && v->eprio < j->eprio &&
		       mu__order_victim_ok(e, v, j, c->now, &c->retry_at);
	if (!e->cfg.reclaim)
		return false;
	mu_res_t unit = v->acct_bound;
	if (pod >= 0)
		unit = v->podsets[mu__pod_podset(v, pod)].acct;
	return reclaim_ok(c, v, &unit);
}

static int cmp_victim(const void *a, const void *b)
{
	const victim_t *x = a, *y = b;
	if ((x->pod >= 0) != (y->pod >= 0))
		return x->pod >= 0 ? -1 : 1; /* surplus replicas first */
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	if (x->start != y->start)
		return x->start > y->start ? -1 : 1; /* youngest first */
	return x->job - y->job;
}

/* Collects the sorted candidate victims with pods on node nid into c->v.
 * Surplus pods of an elastic job count at most (bound - minMember) times. */
static int gather(pctx_t *c, int32_t nid)
{
	mu_engine_t *e = c->e;
	mu__node_t *n = &e->nodes[nid];
	c->nv = 0;
	uint64_t stamp = ++e->gather_stamp; /* tags this call's per-job counts */
	mu_time_t min_start = INT64_MAX;
	for (int32_t i = 0; i < n->npods; i++) {
		int32_t vid = n->refs[i].job, pod = n->refs[i].pod;
		mu__job_t *v = &e->jobs[vid];
		if (v->state == MU_JOB_RUNNING && v->start < min_start)
			min_start = v->start;
		if (v->gather_stamp != stamp) {
			v->gather_stamp = stamp;
			v->gather_whole = false;
			v->gather_surplus = 0;
		}
		bool surplus = !c->moving && v->nbound - v->gather_surplus > v->min_member;
		if (!surplus && v->gather_whole)
			continue;
		if (!victim_ok(c, vid, surplus ? pod : -1)) {
			if (!surplus)
				v->gather_whole = true; /* refused as a whole */
			continue;
		}
		int rc = mu__grow((void **)&c->v, &c->vcap, c->nv + 1, sizeof *c->v);
		if (rc)
			return rc;
		const mu__podset_t *ps = &v->podsets[mu__pod_podset(v, pod)];
		if (surplus)
			v->gather_surplus++;
		else
			v->gather_whole = true;
		c->v[c->nv++] = (victim_t){vid, surplus ? pod : -1, v->eprio,
					   surplus ? ps->acct.v[MU_RES_GPU] :
						     v->acct_bound.v[MU_RES_GPU],
					   v->start};
	}
	/* Only running jobs' pods are here outside an attempt, so this is
	 * exact; during one, J's own tentative pods are newer anyway. */
	if (min_start != INT64_MAX)
		n->min_start = min_start;
	if (c->nv > 1)
		qsort(c->v, (size_t)c->nv, sizeof *c->v, cmp_victim);
	return MU_OK;
}

/* Whether pod p of job `job` is already freed by a surplus victim listed
 * before index k (surplus victims sort first). */
static bool freed_before(const pctx_t *c, int32_t k, int32_t job, int32_t p)
{
	for (int32_t i = 0; i < k; i++)
		if (c->v[i].job == job && c->v[i].pod == p)
			return true;
	return false;
}

/* Gives back, on a scratch copy of node nid, what victim k frees there. */
static void sim_free(const pctx_t *c, mu__node_t *copy, int32_t nid, int32_t k)
{
	const victim_t *x = &c->v[k];
	const mu__job_t *v = &c->e->jobs[x->job];
	for (int32_t p = 0; p < v->npods; p++) {
		if (v->pods[p].node != nid || (x->pod >= 0 && p != x->pod) ||
		    (x->pod < 0 && freed_before(c, k, x->job, p)))
			continue;
		mu__pod_t tmp = v->pods[p];
		mu__node_give(NULL, copy, &v->podsets[mu__pod_podset(v, p)], &tmp);
	}
}

/* How many of the sorted victims on nid must go for req to fit there, and
 * at what cost; -1 if all of them are not enough.  Works on a copy of the
 * node's free vector and devices. */
static int32_t node_plan(const pctx_t *c, int32_t nid, const mu__podset_t *ps,
			 pcost_t *cost)
{
	mu__node_t copy = c->e->nodes[nid];
	mu__ntopo_t topo;
	if (copy.topo) { /* the scratch copy must not touch the real devices */
		topo = *copy.topo;
		copy.topo = &topo;
	}
	*cost = (pcost_t){INT32_MIN, 0, 0, INT64_MAX};
	for (int32_t k = 0; k < c->nv; k++) {
		const victim_t *x = &c->v[k];
		sim_free(c, &copy, nid, k);
		if (x->prio > cost->prio)
			cost->prio = x->prio;
		cost->jobs += x->pod < 0;
		cost->gpu += x->gpu;
		if (x->start < cost->young)
			cost->young = x->start;
		if (mu__node_fit(c->e, &copy, ps) == MU_F_COUNT)
			return k + 1;
	}
	return -1;
}

static bool cost_less(const pcost_t *a, const pcost_t *b)
{
	if (a->prio != b->prio)
		return a->prio < b->prio;
	if (a->jobs != b->jobs)
		return a->jobs < b->jobs;
	if (a->gpu != b->gpu)
		return a->gpu < b->gpu;
	return a->young > b->young; /* evict the younger set */
}

/* Evicts one pod for real, logging it for rollback. */
static int evict_pod(pctx_t *c, int32_t vid, int32_t p)
{
	mu_engine_t *e = c->e;
	mu__job_t *v = &e->jobs[vid];
	if (v->pods[p].node < 0)
		return MU_OK;
	int rc = mu__grow((void **)&e->evl, &e->evl_cap, e->nevl + 1, sizeof *e->evl);
	if (rc)
		return rc;
	e->evl[e->nevl++] = (mu__evict_t){vid, p, v->pods[p]};
	mu__pod_release(e, v, p, false);
	return MU_OK;
}

/* Evicts the first k victims gathered for a node. */
static int evict_plan(pctx_t *c, int32_t k)
{
	for (int32_t i = 0; i < k; i++) {
		const victim_t *x = &c->v[i];
		const mu__job_t *v = &c->e->jobs[x->job];
		for (int32_t p = 0; p < v->npods; p++) {
			if (x->pod >= 0 && p != x->pod)
				continue;
			int rc = evict_pod(c, x->job, p);
			if (rc)
				return rc;
		}
	}
	return MU_OK;
}

/* Finds the cheapest node of class cls where evictions make req fit, and
 * evicts them.  Returns the node, -1 if none, or a negative error - 1. */
static int32_t victim_node(pctx_t *c, const mu__sclass_t *cls, const mu__podset_t *ps,
			   const mu__scope_t *sc)
{
	mu_engine_t *e = c->e;
	int32_t best = -1, examined = 0;
	pcost_t bc = {0}, cost;
	const int32_t *ids = sc ? sc->nodes : cls->nodes;
	int32_t nids = sc ? sc->n : cls->nnodes;
	/* With a cap, start where the last search stopped, so that every node
	 * gets its turn, and stop after that many nodes with a workable plan
	 * (nodes without victims do not count). */
	int32_t start = e->cfg.max_victim_nodes && nids ? (int32_t)(e->victim_cursor % (uint32_t)nids) : 0;
	for (int32_t k = 0; k < nids; k++) {
		int32_t i = (start + k) % nids;
		int32_t nid = ids[i];
		if (e->nodes[nid].npods == 0 || (sc && !cls->member[nid]))
			continue;
		mu_time_t old = e->nodes[nid].min_start + e->cfg.min_runtime;
		if (c->now < old) { /* every pod here is too young to go */
			if (old < c->retry_at)
				c->retry_at = old;
			continue;
		}
		if (gather(c, nid) != MU_OK)
			return -2;
		if (!c->nv || node_plan(c, nid, ps, &cost) < 0)
			continue;
		if (best < 0 || cost_less(&cost, &bc)) {
			best = nid;
			bc = cost;
		}
		if (e->cfg.max_victim_nodes && ++examined >= e->cfg.max_victim_nodes) {
			e->victim_cursor = (uint32_t)i + 1;
			break;
		}
	}
	if (best < 0)
		return -1;
	if (gather(c, best) != MU_OK)
		return -2;
	int32_t k = node_plan(c, best, ps, &cost);
	if (evict_plan(c, k) != MU_OK)
		return -2;
	return best;
}

/* Restores everything the attempt changed: J's pods, then the victims. */
static int rollback(pctx_t *c)
{
	mu_engine_t *e = c->e;
	mu__job_t *j = &e->jobs[c->jid];
	for (int32_t t = e->ntxn - 1; t >= 0; t--)
		mu__pod_release(e, j, e->txn[t], false);
	e->ntxn = 0;
	for (int32_t i = e->nevl - 1; i >= 0; i--) {
		const mu__evict_t *x = &e->evl[i];
		int rc = mu__pod_bind(e, &e->jobs[x->job], x->pod, x->was.node, &x->was);
		if (rc)
			return rc;
	}
	e->nevl = 0;
	return MU_OK;
}

/* Emits the evictions and suspends the victims that lost every pod.  They
 * go back to their queues (keeping their submit time) after this cycle's
 * loop, so they cannot bounce back in the same cycle. */
static int commit(pctx_t *c, mu_decisions_t *out)
{
	mu_engine_t *e = c->e;
	const mu__job_t *j = &e->jobs[c->jid];
	for (int32_t i = 0; i < e->nevl; i++) {
		const mu__evict_t *x = &e->evl[i];
		mu__job_t *v = &e->jobs[x->job];
		int32_t psi = mu__pod_podset(v, x->pod);
		mu_decision_t d = {.kind = MU_DEC_EVICT, .job = x->job, .podset = psi,
				   .pod = x->pod - v->podsets[psi].first, .node = x->was.node,
				   .gpus = x->was.gpus, .gpu_milli = x->was.milli,
				   .numa = x->was.numa, .nic = x->was.nic, .cpus = x->was.cpus,
				   .by = c->jid, .suspend = v->nbound == 0};
		int rc = mu__dec_push(out, &d);
		if (rc)
			return rc;
		if (v->queue != j->queue)
			e->queues[v->queue].last_reclaimed = c->now;
		if (v->state == MU_JOB_RUNNING && v->nbound == 0) {
			mu__job_set_pending(e, x->job);
			mu__backfill_forget(e, v);
			v->preemptions++;
			v->failed = false;
			memset(&v->last, 0, sizeof v->last);
			v->last.why = MU_WHY_PREEMPTED;
			v->last.blocked_by = c->jid;
			v->last.podset = v->last.limit_queue = v->last.fs_queue = -1;
		}
		if ((rc = mu__grow((void **)&e->relist, &e->relist_cap,
				   e->nrelist + 1, sizeof *e->relist)) != MU_OK)
			return rc;
		e->relist[e->nrelist++] = x->job;
	}
	/* Capacity grew only where a victim left and J did not land; else a
	 * job that failed before would fail again, and need not be retried. */
	bool grew = false;
	for (int32_t i = 0; i < e->nevl && !grew; i++) {
		bool taken = false;
		for (int32_t t = 0; t < e->ntxn && !taken; t++)
			taken = j->pods[e->txn[t]].node == e->evl[i].was.node;
		grew = !taken;
	}
	e->nevl = 0;
	if (grew)
		e->release_gen++;
	return MU_OK;
}

/* Fills r with the fair-share numbers when J's queue is at its share and
 * some other queue uses what reclaim could take. */
static void explain_fair(const pctx_t *c, mu_reason_t *r)
{
	const mu_engine_t *e = c->e;
	int32_t jq = e->jobs[c->jid].queue;
	const mu__queue_t *q = &e->queues[jq];
	bool others = false;
	for (int32_t i = 0; i < e->nqueues && !others; i++)
		others = i != jq && !e->queues[i].nchildren &&
			 e->queues[i].used.v[c->gpu_dominant ? MU_RES_GPU : MU_RES_CPU] > 0;
	if (!others)
		return;
	for (int res = 0; res < e->nres; res++) {
		if (!dom_res(c, res) || !c->need.v[res] ||
		    q->used.v[res] + c->need.v[res] <= q->fair.v[res])
			continue;
		r->fs_queue = e->jobs[c->jid].queue;
		r->fs_res = res;
		r->fs_used = q->used.v[res];
		r->fs_req = c->need.v[res];
		r->fs_fair = q->fair.v[res];
		r->fs_deserved = q->deserved.v[res];
		return;
	}
}

/* A cheap test before any search: is there any job J could evict at all?
 * Uses the per-cycle minimum victim priority of J's queue, and whether J's
 * queue is within its fair share while another queue is over quota. */
static bool could_preempt(const pctx_t *c)
{
	const mu_engine_t *e = c->e;
	const mu__job_t *j = &e->jobs[c->jid];
	const mu__queue_t *q = &e->queues[j->queue];
	if (e->cfg.preemption && q->min_victim_prio < j->eprio)
		return true;
	if (j->nbackfilled > 0)
		return true; /* jobs started in the hole of its reservation */
	bool reclaim = e->cfg.reclaim && e->nover_quota > 0 &&
		       !(e->nover_quota == 1 && q->over_quota);
	for (int r = 0; reclaim && r < e->nres; r++)
		if (dom_res(c, r) && c->need.v[r] &&
		    q->used.v[r] + c->need.v[r] > q->fair.v[r])
			reclaim = false;
	/* reclaim_ok()'s no-reversal rule needs, for some other leaf V with
	 * running jobs, J's side after placing to be no more satisfied than
	 * V's side before losing anything, in every dominant resource.
	 * O(queues x (depth + resources)). */
	for (int32_t v = 0; reclaim && v < e->nqueues; v++) {
		const mu__queue_t *vq = &e->queues[v];
		if (v == j->queue || vq->nchildren || !vq->nrunning)
			continue;
		int32_t sa, sv;
		lca_sides(e, j->queue, v, &sa, &sv);
		const mu__queue_t *A = &e->queues[sa], *V = &e->queues[sv];
		bool ok = true;
		for (int r = 0; ok && r < e->nres; r++)
			ok = !dom_res(c, r) || ratio(A->used.v[r] + c->need.v[r], A->fair.v[r]) <=
					       ratio(V->used.v[r], V->fair.v[r]);
		if (ok)
			return true;
	}
	return false;
}

/* Places J's unbound pods within scope sc (NULL: anywhere), evicting where
 * needed.  Returns pods placed. */
static int32_t place_with_victims(pctx_t *c, const mu__scope_t *sc)
{
	mu_engine_t *e = c->e;
	mu__job_t *j = &e->jobs[c->jid];
	int32_t placed = 0;
	for (int32_t p = 0; p < j->npodsets; p++) {
		mu__podset_t *ps = &j->podsets[p];
		mu__sclass_t *cls = &e->classes[ps->sclass];
		int rc0 = mu__sclass_refresh(e, cls);
		if (rc0)
			return rc0;
		for (int32_t i = 0; i < ps->replicas; i++) {
			int32_t pod = ps->first + i;
			if (j->pods[pod].node >= 0)
				continue;
			int32_t nid = mu__best_node_in(e, cls, ps, sc);
			if (nid < 0)
				nid = victim_node(c, cls, ps, sc);
			if (nid == -1)
				break;
			int rc = nid < -1 ? MU_ENOMEM :
				mu__grow((void **)&e->txn, &e->txn_cap, e->ntxn + 1,
					 sizeof *e->txn);
			if (rc == MU_OK)
				rc = mu__pod_bind(e, j, pod, nid, NULL);
			if (rc)
				return rc;
			e->txn[e->ntxn++] = pod;
			for (int r = 0; r < MU_RES_MAX; r++)
				c->need.v[r] -= ps->acct.v[r];
			placed++;
		}
	}
	return placed;
}

/* One attempt within scope sc: keeps the result when at least need pods
 * are placed (*ok), else restores everything. */
static int attempt(pctx_t *c, const mu__scope_t *sc, int32_t need, bool *ok)
{
	mu_engine_t *e = c->e;
	e->ntxn = 0;
	e->nevl = 0;
	mu_res_t need_before = c->need;
	int32_t placed = place_with_victims(c, sc);
	if (placed < 0)
		return placed;
	if (placed >= need) {
		*ok = true;
		return MU_OK;
	}
	c->need = need_before;
	return rollback(c);
}

/* Without a required topology level the gang may land anywhere; with one,
 * each domain of that level is tried in turn (victims are searched only
 * inside it).  Slices are not honoured when preempting. */
static int preempt_scoped(pctx_t *c, int32_t need, bool *ok)
{
	mu_engine_t *e = c->e;
	const mu__job_t *j = &e->jobs[c->jid];
	if (j->topo < 0 || j->req_level < 0)
		return attempt(c, NULL, need, ok);
	mu__topo_t *t = &e->topos[j->topo];
	int rc = mu__topo_refresh(e, t);
	for (int32_t d = 0; rc == MU_OK && !*ok && d < t->ndoms; d++) {
		if (t->doms[d].level != j->req_level)
			continue;
		mu__scope_t sc = {t->doms[d].nodes, t->doms[d].nnodes};
		rc = attempt(c, &sc, need, ok);
	}
	return rc;
}

int mu__preempt_try(mu_engine_t *e, int32_t jid, mu_time_t now, mu_reason_t *r,
		    mu_decisions_t *out, bool *ok)
{
	mu__job_t *j = &e->jobs[jid];
	pctx_t c = {.e = e, .jid = jid, .now = now, .retry_at = INT64_MAX};
	*ok = false;
	for (int32_t p = 0; p < j->npodsets; p++) {
		const mu__podset_t *ps = &j->podsets[p];
		for (int32_t i = 0; i < ps->replicas; i++)
			if (j->pods[ps->first + i].node < 0)
				for (int res = 0; res < MU_RES_MAX; res++)
					c.need.v[res] += ps->acct.v[res];
	}
	c.gpu_dominant = c.need.v[MU_RES_GPU] > 0;
	if (e->cfg.reclaim)
		explain_fair(&c, r);
	int32_t need = j->min_member - j->nbound;
	if (need < 1)
		need = 1;
	j->retry_at = INT64_MAX;
	if (!could_preempt(&c))
		return MU_OK;
	int rc = e->nowed ? mu__resv_settle(e) : MU_OK; /* victims under them */
	if (rc == MU_OK)
		rc = preempt_scoped(&c, need, ok);
	if (rc == MU_OK && *ok && e->nevl)
		rc = commit(&c, out);
	j->retry_at = c.retry_at;
	free(c.v);
	return rc;
}

/* --- Consolidation ---------------------------------------------------------- */

/* A move made recently, for the disruption budget. */
struct mu__move {
	mu_time_t t;
	int32_t pods;
	double gpu_hours;
};

/* Re-places every pod evicted by the attempt somewhere else, logging them
 * in e->mvl.  Returns MU_OK and *all when every one found a place. */
static int replace_victims(pctx_t *c, bool *all)
{
	mu_engine_t *e = c->e;
	*all = true;
	e->nmvl = 0;
	for (int32_t i = 0; i < e->nevl && *all; i++) {
		int32_t vid = e->evl[i].job, pod = e->evl[i].pod;
		mu__job_t *v = &e->jobs[vid];
		if (v->pods[pod].node >= 0)
			continue;
		mu__podset_t *ps = &v->podsets[mu__pod_podset(v, pod)];
		mu__sclass_t *cls = &e->classes[ps->sclass];
		int rc = mu__sclass_refresh(e, cls);
		if (rc)
			return rc;
		int32_t saved = e->placing;
		e->placing = vid;
		int32_t nid = mu__best_node(e, cls, ps);
		e->placing = saved;
		if (nid < 0) {
			*all = false;
			break;
		}
		rc = mu__grow((void **)&e->mvl, &e->mvl_cap, 2 * (e->nmvl + 1), sizeof *e->mvl);
		if (rc == MU_OK)
			rc = mu__pod_bind(e, v, pod, nid, NULL);
		if (rc)
			return rc;
		e->mvl[2 * e->nmvl] = vid;
		e->mvl[2 * e->nmvl + 1] = pod;
		e->nmvl++;
	}
	return MU_OK;
}

/* Whether the planned moves stay within the budgets: GPUs moved at most
 * move_ratio times the GPUs gained, and the pods and GPU-hours of work
 * moved in the last hour.  *gpuh gets this plan's GPU-hours. */
static bool move_budget(pctx_t *c, double *gpuh)
{
	mu_engine_t *e = c->e;
	const mu__job_t *j = &e->jobs[c->jid];
	int64_t moved = 0, gained = 0;
	*gpuh = 0;
	for (int32_t i = 0; i < e->nevl; i++) {
		const mu__job_t *v = &e->jobs[e->evl[i].job];
		int64_t g = v->podsets[mu__pod_podset(v, e->evl[i].pod)].acct.v[MU_RES_GPU];
		moved += g;
		*gpuh += (double)g / 1000.0 * (double)(c->now - v->start) / 3.6e6;
	}
	for (int32_t t = 0; t < e->ntxn; t++)
		gained += j->podsets[mu__pod_podset(j, e->txn[t])].acct.v[MU_RES_GPU];
	if ((double)moved > e->cfg.move_ratio * (double)gained)
		return false;
	int32_t k = 0, pods = 0;
	double hours = 0;
	for (int32_t i = 0; i < e->nmoves; i++) /* keep the last hour */
		if (c->now - e->moves[i].t < 3600 * 1000)
			e->moves[k++] = e->moves[i];
	e->nmoves = k;
	for (int32_t i = 0; i < e->nmoves; i++) {
		pods += e->moves[i].pods;
		hours += e->moves[i].gpu_hours;
	}
	return pods + e->nevl <= e->cfg.move_pods_per_hour &&
	       hours + *gpuh <= e->cfg.move_gpu_hours_per_hour;
}

/* Undoes a consolidation attempt: re-placements, J's pods, evictions. */
static int move_rollback(pctx_t *c)
{
	mu_engine_t *e = c->e;
	for (int32_t i = e->nmvl - 1; i >= 0; i--)
		mu__pod_release(e, &e->jobs[e->mvl[2 * i]], e->mvl[2 * i + 1], false);
	e->nmvl = 0;
	return rollback(c);
}

/* Emits the moves: each evicted pod, then its bind on the new node. */
static int move_commit(pctx_t *c, double gpuh, mu_decisions_t *out)
{
	mu_engine_t *e = c->e;
	for (int32_t i = 0; i < e->nevl; i++) {
		const mu__evict_t *x = &e->evl[i];
		mu__job_t *v = &e->jobs[x->job];
		int32_t psi = mu__pod_podset(v, x->pod);
		mu_decision_t d = {.kind = MU_DEC_EVICT, .job = x->job, .podset = psi,
				   .pod = x->pod - v->podsets[psi].first, .node = x->was.node,
				   .gpus = x->was.gpus, .gpu_milli = x->was.milli,
				   .numa = x->was.numa, .nic = x->was.nic, .cpus = x->was.cpus,
				   .by = c->jid, .move = true};
		int rc = mu__dec_push(out, &d);
		if (rc)
			return rc;
	}
	for (int32_t i = 0; i < e->nmvl; i++) {
		mu__job_t *v = &e->jobs[e->mvl[2 * i]];
		int32_t pod = e->mvl[2 * i + 1], psi = mu__pod_podset(v, pod);
		const mu__pod_t *p = &v->pods[pod];
		mu_decision_t d = {.kind = MU_DEC_BIND, .job = e->mvl[2 * i], .podset = psi,
				   .pod = pod - v->podsets[psi].first, .node = p->node,
				   .gpus = p->gpus, .gpu_milli = p->milli, .numa = p->numa,
				   .nic = p->nic, .cpus = p->cpus, .by = -1, .move = true};
		int rc = mu__dec_push(out, &d);
		if (rc)
			return rc;
		if (v->start != c->now) { /* the job restarts where it lands */
			mu__order_stop(e, v, c->now); /* its service so far counts */
			v->start = c->now;
			v->moves++;
		}
	}
	int rc = mu__grow((void **)&e->moves, &e->moves_cap, e->nmoves + 1, sizeof *e->moves);
	if (rc)
		return rc;
	e->moves[e->nmoves++] = (struct mu__move){c->now, e->nevl, gpuh};
	e->nevl = e->nmvl = 0;
	return MU_OK;
}

#define NOMOVE_SLOTS ((int)(sizeof ((mu__sclass_t *)0)->nomove / sizeof ((mu__sclass_t *)0)->nomove[0]))

/* Whether failed entry m covers `pods` pods of req: as many or more pods,
 * each at least as large, since capacity last grew.  O(resources). */
static bool nomove_covers(const mu_engine_t *e, const struct mu__nomove *m,
			  const mu_res_t *req, int32_t pods, mu_time_t now)
{
	if (m->gen != e->release_gen || now >= m->until || pods < m->pods)
		return false;
	for (int r = 0; r < MU_RES_MAX; r++)
		if (req->v[r] < m->req.v[r])
			return false;
	return true;
}

/* Whether consolidation is known to fail for `pods` pods of req in cls. */
static bool nomove_known(const mu_engine_t *e, const mu__sclass_t *cls,
			 const mu_res_t *req, int32_t pods, mu_time_t now)
{
	for (int k = 0; k < NOMOVE_SLOTS; k++)
		if (nomove_covers(e, &cls->nomove[k], req, pods, now))
			return true;
	return false;
}

/* Remembers a failed consolidation in a free or the oldest slot. */
static void nomove_note(const mu_engine_t *e, mu__sclass_t *cls, const mu_res_t *req,
			int32_t pods, mu_time_t until)
{
	int slot = -1;
	for (int k = 0; k < NOMOVE_SLOTS && slot < 0; k++)
		if (cls->nomove[k].gen != e->release_gen)
			slot = k;
	if (slot < 0)
		slot = (int)(cls->nomove_next++ % (uint32_t)NOMOVE_SLOTS);
	cls->nomove[slot] = (struct mu__nomove){e->release_gen, *req, pods, until};
}

int mu__consolidate_try(mu_engine_t *e, int32_t jid, mu_time_t now, mu_reason_t *r,
			mu_decisions_t *out, bool *ok)
{
	mu__job_t *j = &e->jobs[jid];
	pctx_t c = {.e = e, .jid = jid, .now = now, .retry_at = INT64_MAX, .moving = true};
	*ok = false;
	(void)r;
	if (j->topo >= 0)
		return MU_OK; /* moves do not know domains yet */
	mu__sclass_t *cls = &e->classes[j->podsets[0].sclass];
	int32_t unbound = j->npods - j->nbound;
	if (j->npodsets == 1 && nomove_known(e, cls, &j->podsets[0].req, unbound, now))
		return MU_OK;
	if (e->nowed) { /* moves are planned under the owed reservations */
		int rc0 = mu__resv_settle(e);
		if (rc0)
			return rc0;
	}
	for (int32_t p = 0; p < j->npodsets; p++) {
		const mu__podset_t *ps = &j->podsets[p];
		for (int32_t i = 0; i < ps->replicas; i++)
			if (j->pods[ps->first + i].node < 0)
				for (int res = 0; res < MU_RES_MAX; res++)
					c.need.v[res] += ps->acct.v[res];
	}
	c.gpu_dominant = c.need.v[MU_RES_GPU] > 0;
	int32_t need = j->min_member - j->nbound;
	if (need < 1)
		need = 1;
	e->ntxn = e->nevl = e->nmvl = 0;
	int32_t placed = place_with_victims(&c, NULL);
	int rc = placed < 0 ? placed : MU_OK;
	bool all = false;
	double gpuh = 0;
	if (rc == MU_OK && placed >= need && e->nevl > 0)
		rc = replace_victims(&c, &all);
	if (rc == MU_OK && all && move_budget(&c, &gpuh)) {
		rc = move_commit(&c, gpuh, out);
		*ok = rc == MU_OK;
	} else if (rc == MU_OK) {
		rc = move_rollback(&c);
		/* Until capacity is released, a refused victim ages in, or
		 * the hourly budget may have room again. */
		mu_time_t until = c.retry_at < now + 300 * 1000 ? c.retry_at : now + 300 * 1000;
		if (rc == MU_OK && j->npodsets == 1)
			nomove_note(e, cls, &j->podsets[0].req, unbound, until);
	}
	free(c.v);
	return rc;
}

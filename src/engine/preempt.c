/*
 * preempt.c - preemption inside a queue and reclaim across queues.
 *
 * When a job does not fit as things are, its pods are placed one by one
 * again; a pod that fits nowhere looks, node by node, for the cheapest set
 * of victims on that node whose eviction makes it fit (node_plan(): every
 * single victim, then every pair, then the greedy prefix made minimal, at
 * most PLAN_FITS fit tests per node).  Victims are whole gangs, or single
 * surplus pods of elastic jobs.  Cost is lexicographic: victims of J's own
 * queue (borrowed capacity of other queues goes first), whole jobs
 * stopped, GPUs evicted, the highest victim priority, pods, then the
 * youngest set.  Every eviction and placement is logged; unless the gang's
 * minimum fits in the end, everything is restored exactly and nothing is
 * emitted.
 *
 * Who may be a victim of job J (docs/policy.md states the rules with
 * worked examples):
 *   - a running, preemptible job that has run min_runtime;
 *   - in J's queue: only a strictly lower priority (preemption), also to
 *     make room under J's queue's limit (mu__preempt_limit_try());
 *   - in another queue (reclaim), judged on the resources J's claim needs
 *     (GPUs for a GPU job, else CPU and memory), with J's claim being the
 *     pods it needs to start (minMember) and J's usage counted after its
 *     own victims leave, by either of KAI-Scheduler's two strategies:
 *       (D) deserved quota: J's queue path stays within its deserved
 *           quota, and the victim's path is above its deserved quota
 *           before the victim leaves;
 *       (F) fair share: J's queue path stays within its fair share, and
 *           the victim's path is above its fair share (and its deserved
 *           quota) before the victim leaves.
 *     A victim that straddles its queue's deserved line (part of it
 *     within) is reclaimable, as in KAI; a queue at or below its deserved
 *     quota loses nothing.  Both sides are checked from the queue up to
 *     the child of the lowest common ancestor.  The victim's queue must be
 *     out of its cool-down.
 * Work per preempting pod is O(nodes with victims x PLAN_FITS x pods per
 * node), bounded further by max_victim_nodes.
 */
#include "engine/engine_int.h"

enum { VK_FREE, VK_RECLAIM, VK_PREEMPT }; /* victim kinds, in cost order */

/* Fit tests per node when seeking its cheapest victim set. */
#define PLAN_FITS 256
/* Candidates per node that pairs and minimisation look at. */
#define PLAN_MAXV 64
_Static_assert(PLAN_MAXV <= 64, "plan_bound() keeps a 64-bit mask of candidates");

/* A candidate eviction on one node. */
typedef struct victim {
	int32_t job;
	int32_t pod;        /* surplus pod, or -1 for the whole job */
	int32_t prio;
	int64_t gpu;        /* accounting GPUs it frees cluster-wide */
	mu_time_t start;
	int kind;           /* VK_* */
	int32_t dev;        /* whole GPU devices it can free on the node, at
	                     * most (for pruning) */
	int32_t pdb;        /* 1 when its eviction exceeds its job's
	                     * disruption budget */
	uint64_t seq;       /* its job's submission order (the last tie) */
} victim_t;

typedef struct pcost {
	int32_t pdb;        /* victims beyond their disruption budget */
	int32_t inq, jobs;
	int64_t gpu;
	int32_t prio, pods;
	mu_time_t young;    /* earliest start among victims (later is better) */
} pcost_t;

/* Removed usage per queue while a plan is judged. */
typedef struct qdelta {
	int32_t q;
	mu_res_t v;
} qdelta_t;

typedef struct pctx {
	mu_engine_t *e;
	int32_t jid;
	mu_time_t now;
	mu_res_t need;      /* accounting of J's claim still unplaced */
	int32_t need_pods;  /* pods J needs to start (or 1 to grow) */
	bool gpu_dominant;
	int dom;            /* dominant slots of the claim, a bit mask
	                     * (mu__dom_slot) */
	bool limit;         /* making room under J's queue's limit */
	mu_time_t retry_at; /* when a victim refused for time turns eligible */
	bool moving;        /* consolidation: victims are moved, not stopped */
	const mu_res_t *pod_acct; /* the pod being placed (limit mode) */
	bool out_of_budget; /* a move search stopped at the cycle's budget */
	victim_t *v;
	int32_t nv, vcap;
	/* The first refusal by a reclaim rule, for explain. */
	int32_t rq, rres;
	int64_t rused, rfair, rdes;
} pctx_t;

/* Whether escalated job j may evict v of its own queue whatever their
 * priorities: the class-of-service rule preempt, never against another
 * escalated job (docs/policy.md, "Classes of service"). */
static bool esc_may_evict(const mu__job_t *j, const mu__job_t *v)
{
	return j->escalated && j->esc == MU_ESC_PREEMPT && !v->escalated;
}

/* Whether v, escalated with the rule preempt, is kept from preemption by
 * priority in its own queue: evicting it would undo its escalation at the
 * next cycle, and it would evict its evictor back. */
static bool esc_kept(const mu__job_t *v)
{
	return v->escalated && v->esc == MU_ESC_PREEMPT;
}

static bool dom_res(const pctx_t *c, int r)
{
	return mu__dom_is(c->dom, r);
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

/* What victim x frees in accounting units (cluster-wide). */
static mu_res_t victim_unit(const mu_engine_t *e, const victim_t *x)
{
	const mu__job_t *v = &e->jobs[x->job];
	return x->pod >= 0 ? mu__pod_acct(e, &v->podsets[mu__pod_podset(v, x->pod)],
					  v->pods[x->pod].node) : mu__job_acct_bound(e, v);
}

/* Adds unit to q and its ancestors in the delta table d (at most cap
 * entries; *n in use).  O(depth x n). */
static void delta_add(const mu_engine_t *e, qdelta_t *d, int32_t *n, int32_t cap,
		      int32_t q, const mu_res_t *unit)
{
	for (; q >= 0; q = e->queues[q].parent) {
		int32_t k = 0;
		while (k < *n && d[k].q != q)
			k++;
		if (k == *n) {
			if (*n >= cap)
				return;
			d[k].q = q;
			memset(&d[k].v, 0, sizeof d[k].v);
			(*n)++;
		}
		for (int r = 0; r < MU_RES_MAX; r++)
			d[k].v.v[r] += unit->v[r];
	}
}

static int64_t delta_of(const qdelta_t *d, int32_t n, int32_t q, int r)
{
	for (int32_t k = 0; k < n; k++)
		if (d[k].q == q)
			return d[k].v.v[r];
	return 0;
}

/* Whether J's queue path from jq up to side ja stays within `bound`
 * (0: deserved, 1: fair share, 2: limit, to the root) with `claim` added,
 * after the usage in d leaves.  O(depth x (resources + n)). */
static bool claimant_within(const pctx_t *c, int32_t ja, int bound, const mu_res_t *claim,
			    const qdelta_t *d, int32_t n)
{
	const mu_engine_t *e = c->e;
	for (int32_t q = e->jobs[c->jid].queue; q >= 0; q = e->queues[q].parent) {
		const mu__queue_t *qq = &e->queues[q];
		const mu_res_t *b = bound == 0 ? &qq->deserved : bound == 1 ? &qq->fair : &qq->limit;
		mu_res_t used = qq->used;
		for (int r = 0; r < e->nres && n > 0; r++)
			used.v[r] -= delta_of(d, n, q, r);
		if (!mu_reclaim_within(&used, claim, b, bound == 2 ? -1 : c->dom, e->nres))
			return false;
		if (q == ja)
			break;
	}
	return true;
}

bool mu_reclaim_within(const mu_res_t *used, const mu_res_t *claim, const mu_res_t *bound,
		       int dom, int nres)
{
	for (int r = 0; r < nres && r < MU_RES_MAX; r++) {
		if (!claim->v[r] || !mu__dom_is(dom, r) || bound->v[r] == MU_RES_UNLIMITED)
			continue;
		if (used->v[r] + claim->v[r] > bound->v[r])
			return false;
	}
	return true;
}

int mu_reclaim_not_above(const mu_res_t *used, const mu_res_t *unit, const mu_res_t *deserved,
			 const mu_res_t *fair, int dom, int nres)
{
	for (int r = 0; r < nres && r < MU_RES_MAX; r++) {
		if (!unit->v[r] || !mu__dom_is(dom, r))
			continue;
		if (used->v[r] <= deserved->v[r] || (fair && used->v[r] <= fair->v[r]))
			return r;
	}
	return -1;
}

/* Whether the victim path from vq up to side va is above its deserved
 * quota (fair: and above its fair share) on the claim's resources that
 * unit holds, with the usage in d gone already.  Notes the first refusal
 * for explain.  O(depth x (resources + n)). */
static bool victim_above(pctx_t *c, int32_t vq, int32_t va, bool fair,
			 const mu_res_t *unit, const qdelta_t *d, int32_t n)
{
	const mu_engine_t *e = c->e;
	for (int32_t q = vq;; q = e->queues[q].parent) {
		const mu__queue_t *qq = &e->queues[q];
		mu_res_t used = qq->used;
		for (int r = 0; r < e->nres && n > 0; r++)
			used.v[r] -= delta_of(d, n, q, r);
		int r = mu_reclaim_not_above(&used, unit, &qq->deserved, fair ? &qq->fair : NULL,
					     c->dom, e->nres);
		if (r >= 0) {
			if (c->rq < 0) {
				c->rq = q;
				c->rres = r;
				c->rused = used.v[r];
				c->rfair = qq->fair.v[r];
				c->rdes = qq->deserved.v[r];
			}
			return false;
		}
		if (q == va)
			break;
	}
	return true;
}

/* Whether reclaiming victim x (of another queue) for J is allowed, with
 * the usage in `before` gone already and the usage in `all` (every victim
 * of the plan) gone before J lands. */
static bool reclaim_rule(pctx_t *c, const victim_t *x, const qdelta_t *before, int32_t nb,
			 const qdelta_t *all, int32_t na)
{
	const mu_engine_t *e = c->e;
	int32_t jq = e->jobs[c->jid].queue, vq = e->jobs[x->job].queue, ja, va;
	lca_sides(e, jq, vq, &ja, &va);
	mu_res_t unit = victim_unit(e, x);
	if (claimant_within(c, ja, 0, &c->need, all, na) &&
	    victim_above(c, vq, va, false, &unit, before, nb))
		return true; /* (D) */
	return claimant_within(c, ja, 1, &c->need, all, na) &&
	       victim_above(c, vq, va, true, &unit, before, nb); /* (F) */
}

/* The order in which the victims of set s[0..k) are judged and evicted:
 * J's own and free victims first, then the reclaim victims by GPUs, the
 * largest last (each is judged with the ones before it gone).  O(k^2). */
static void plan_order(const pctx_t *c, const int32_t *s, int32_t k, int32_t *order)
{
	int32_t m = 0;
	for (int32_t i = 0; i < k; i++)
		if (c->v[s[i]].kind != VK_RECLAIM)
			order[m++] = s[i];
	int32_t first = m;
	for (int32_t i = 0; i < k; i++) {
		if (c->v[s[i]].kind != VK_RECLAIM)
			continue;
		int32_t at = m++;
		while (at > first && c->v[order[at - 1]].gpu > c->v[s[i]].gpu) {
			order[at] = order[at - 1];
			at--;
		}
		order[at] = s[i];
	}
}

/* Whether set s[0..k) holds the whole job `job`. */
static bool set_has_whole(const pctx_t *c, const int32_t *s, int32_t k, int32_t job)
{
	for (int32_t i = 0; i < k; i++)
		if (c->v[s[i]].job == job && c->v[s[i]].pod < 0)
			return true;
	return false;
}

/* Whether candidate x of set s[0..k) is a surplus pod whose whole job is
 * in the set too: its usage leaves once, with the job. */
static bool dup_pod(const pctx_t *c, const int32_t *s, int32_t k, int32_t x)
{
	return c->v[x].pod >= 0 && set_has_whole(c, s, k, c->v[x].job);
}

/* Whether the victim set s[0..k) (indices into c->v) is allowed as a
 * whole: the reclaim rules judged in order (J's own victims first, then
 * the smallest), and in limit mode J's path within its limits after they
 * leave.  O(k^2 x depth). */
static bool plan_ok(pctx_t *c, const int32_t *s, int32_t k)
{
	const mu_engine_t *e = c->e;
	qdelta_t all[64], before[64];
	int32_t na = 0, nb = 0, order[PLAN_MAXV];
	all[0].q = before[0].q = -1; /* (entries are read only below na, nb) */
	bool cross = false;
	if (k > PLAN_MAXV)
		return false;
	for (int32_t i = 0; i < k && !cross; i++)
		cross = c->v[s[i]].kind == VK_RECLAIM;
	if (!cross && !c->limit)
		return true; /* preemption alone: nothing to judge */
	for (int32_t i = 0; i < k; i++) {
		if (dup_pod(c, s, k, s[i]))
			continue; /* its whole job is in the set: counted there */
		mu_res_t u = victim_unit(e, &c->v[s[i]]);
		delta_add(e, all, &na, 64, e->jobs[c->v[s[i]].job].queue, &u);
	}
	if (c->limit && !claimant_within(c, -1, 2, c->pod_acct, all, na))
		return false;
	if (!cross)
		return true;
	plan_order(c, s, k, order);
	for (int32_t i = 0; i < k; i++) {
		const victim_t *x = &c->v[order[i]];
		if (dup_pod(c, s, k, order[i]))
			continue; /* leaves with its whole job, judged there */
		if (x->kind == VK_RECLAIM && !reclaim_rule(c, x, before, nb, all, na))
			return false;
		mu_res_t u = victim_unit(e, x);
		delta_add(e, before, &nb, 64, e->jobs[x->job].queue, &u);
	}
	return true;
}

/* Whether pod `pod` of job V (-1: the whole job) may be a candidate for J,
 * and of what kind.  Reclaim candidates are judged alone here (is the
 * victim's path above its deserved quota at all); plan_ok() judges sets. */
static bool victim_ok(pctx_t *c, int32_t vid, int32_t pod, int *kind)
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
	*kind = VK_PREEMPT;
	if (c->moving) /* whole jobs, or single pods of elastic jobs, of no
			* higher priority, any queue, that something recreates */
		return !v->no_move && (pod < 0 || (v->min_member < v->npods && !v->parts)) &&
		       v->eprio <= j->eprio && j->topo < 0;
	if (j->state == MU_JOB_RUNNING && pod < 0)
		return false; /* growing past its minimum stops no gang */
	if (v->backfill_for == c->jid && !c->limit) {
		*kind = VK_FREE;
		return true; /* it started in the hole of j's reservation */
	}
	if (v->queue == j->queue)
		return e->cfg.preemption &&
		       ((v->eprio < j->eprio && !esc_kept(v) &&
			 mu__order_victim_ok(e, v, j, c->now, &c->retry_at)) ||
			esc_may_evict(j, v));
	if (c->limit)
		return false;
	*kind = VK_RECLAIM;
	if (!e->cfg.reclaim)
		return false;
	int32_t vq = v->queue;
	if (e->cfg.reclaim_cooldown > 0 &&
	    e->queues[vq].last_reclaimed != MU_TIME_NONE &&
	    c->now - e->queues[vq].last_reclaimed < e->cfg.reclaim_cooldown) {
		mu_time_t at = e->queues[vq].last_reclaimed + e->cfg.reclaim_cooldown;
		c->retry_at = at < c->retry_at ? at : c->retry_at;
		return false;
	}
	int32_t ja, va;
	lca_sides(e, j->queue, vq, &ja, &va);
	victim_t x = {vid, pod, 0, 0, 0, VK_RECLAIM, 0, 0, 0};
	mu_res_t unit = victim_unit(e, &x);
	return victim_above(c, vq, va, false, &unit, NULL, 0);
}

/* Whether evicting victim x (a whole job, or one surplus pod) takes more
 * pods than its job's disruption budget allows. */
static int32_t over_budget(const mu__job_t *v, int32_t pod)
{
	if (v->disrupt_allowed < 0)
		return 0;
	return (pod >= 0 ? 1 : v->nbound) > v->disrupt_allowed;
}

static int cmp_victim(const void *a, const void *b)
{
	const victim_t *x = a, *y = b;
	if (x->pdb != y->pdb)
		return x->pdb < y->pdb ? -1 : 1; /* within budgets first */
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1; /* borrowed before own queue */
	if ((x->pod >= 0) != (y->pod >= 0))
		return x->pod >= 0 ? -1 : 1; /* surplus replicas first */
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	if (x->start != y->start)
		return x->start > y->start ? -1 : 1; /* youngest first */
	if (x->seq != y->seq) /* ids are reused: submission order */
		return x->seq < y->seq ? -1 : 1;
	return x->job - y->job;
}

/* Collects the sorted candidate victims with pods on node nid into c->v.
 * Surplus pods of an elastic job count at most (bound - minMember) times. */
static int gather(pctx_t *c, int32_t nid)
{
	mu_engine_t *e = c->e;
	mu__node_t *n = &e->nodes[nid];
	c->nv = 0;
	/* At most one candidate per pod: grown once, not per candidate. */
	int rc = mu__grow((void **)&c->v, &c->vcap, n->npods, sizeof *c->v);
	if (rc)
		return rc;
	uint64_t stamp = ++e->gather_stamp; /* tags this call's per-job counts */
	mu_time_t min_start = INT64_MAX;
	e->victim_walks++;
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
		/* Pod by pod: surplus pods of elastic jobs, and when moving any
		 * pod of an elastic job (it is placed again at once). */
		bool surplus = !v->parts && (c->moving ? v->min_member < v->npods :
					     v->nbound - v->gather_surplus > v->min_member);
		if (!surplus && v->gather_whole)
			continue;
		int kind = VK_PREEMPT;
		if (!victim_ok(c, vid, surplus ? pod : -1, &kind)) {
			if (!surplus)
				v->gather_whole = true; /* refused as a whole */
			continue;
		}
		if (surplus)
			v->gather_surplus++;
		else
			v->gather_whole = true;
		int32_t dev = 0;
		int64_t gpu = v->bound_gpu;
		if (surplus) {
			gpu = v->podsets[mu__pod_podset(v, pod)].acct->v[MU_RES_GPU];
			dev = (int32_t)((gpu + 999) / 1000);
		} else if (v->npods == 1) {
			int64_t g = v->podsets[mu__pod_podset(v, 0)].acct->v[MU_RES_GPU];
			dev = (int32_t)((g + 999) / 1000);
		} else {
			for (int32_t p = 0; p < v->npods; p++)
				if (v->pods[p].node == nid) {
					int64_t g = v->podsets[mu__pod_podset(v, p)].acct->v[MU_RES_GPU];
					dev += (int32_t)((g + 999) / 1000);
				}
		}
		c->v[c->nv++] = (victim_t){vid, surplus ? pod : -1, v->eprio, gpu,
					   v->start, kind, dev,
					   over_budget(v, surplus ? pod : -1), v->seq};
	}
	/* Only running jobs' pods are here outside an attempt, so this is
	 * exact; during one, J's own tentative pods are newer anyway. */
	if (min_start != INT64_MAX)
		n->min_start = min_start;
	return MU_OK;
}

/* Sorts the gathered candidates for node_plan(). */
static void gather_sort(pctx_t *c)
{
	if (c->nv > 1)
		qsort(c->v, (size_t)c->nv, sizeof *c->v, cmp_victim);
}

/* Whether req fits on a scratch copy of node nid once the victims of set
 * s[0..k) have left it. */
static bool set_fits(const pctx_t *c, int32_t nid, const mu__podset_t *ps,
		     const int32_t *s, int32_t k)
{
	mu__node_t copy = c->e->nodes[nid];
	mu__ntopo_t topo;
	if (copy.topo) { /* the scratch copy must not touch the real devices */
		topo = *copy.topo;
		copy.topo = &topo;
	}
	for (int32_t i = 0; i < k; i++) {
		const victim_t *x = &c->v[s[i]];
		const mu__job_t *v = &c->e->jobs[x->job];
		if (x->pod >= 0 && set_has_whole(c, s, k, x->job))
			continue; /* freed with its whole job */
		for (int32_t p = 0; p < v->npods; p++) {
			if (v->pods[p].node != nid || (x->pod >= 0 && p != x->pod))
				continue;
			mu__pod_t tmp = v->pods[p];
			mu__node_give(NULL, &copy, &v->podsets[mu__pod_podset(v, p)], &tmp);
		}
	}
	return mu__node_fit(c->e, &copy, ps) == MU_F_COUNT;
}

/* The cost of victim set s[0..k): in-queue victims count by job (two
 * surplus pods of one elastic job disturb one job, as its whole would),
 * the rest by entry.  O(k^2). */
static pcost_t set_cost(const pctx_t *c, const int32_t *s, int32_t k)
{
	pcost_t cost = {0, 0, 0, 0, INT32_MIN, 0, INT64_MAX};
	for (int32_t i = 0; i < k; i++) {
		const victim_t *x = &c->v[s[i]];
		bool seen = false;
		for (int32_t i2 = 0; i2 < i && !seen; i2++)
			seen = c->v[s[i2]].job == x->job;
		cost.pdb += x->pdb;
		cost.inq += x->kind == VK_PREEMPT && !seen;
		cost.jobs += x->pod < 0;
		cost.pods++;
		cost.gpu += x->gpu;
		if (x->prio > cost.prio)
			cost.prio = x->prio;
		if (x->start < cost.young)
			cost.young = x->start;
	}
	return cost;
}

static bool cost_less(const pcost_t *a, const pcost_t *b)
{
	if (a->pdb != b->pdb) /* fewest budget violations, as kube-scheduler */
		return a->pdb < b->pdb;
	if (a->inq != b->inq)
		return a->inq < b->inq;
	if (a->jobs != b->jobs)
		return a->jobs < b->jobs;
	if (a->gpu != b->gpu)
		return a->gpu < b->gpu;
	if (a->prio != b->prio)
		return a->prio < b->prio;
	if (a->pods != b->pods)
		return a->pods < b->pods;
	return a->young > b->young; /* evict the younger set */
}

/* Offers set s[0..k) as a plan: keeps it in best/bk if it makes req fit,
 * is allowed, and is cheaper.  Counts a fit test against *budget. */
static void offer(pctx_t *c, int32_t nid, const mu__podset_t *ps, const int32_t *s,
		  int32_t k, int32_t *best, int32_t *bk, pcost_t *bc, int32_t *budget)
{
	pcost_t cost = set_cost(c, s, k);
	if (*bk > 0 && !cost_less(&cost, bc))
		return;
	(*budget)--;
	if (!set_fits(c, nid, ps, s, k) || !plan_ok(c, s, k))
		return;
	memcpy(best, s, (size_t)k * sizeof *s);
	*bk = k;
	*bc = cost;
}

/* Whether pod p of job `job` is freed already by a surplus entry among
 * the first k candidates (surplus entries sort before their whole job). */
static bool freed_before(const pctx_t *c, int32_t k, int32_t job, int32_t p)
{
	for (int32_t i = 0; i < k; i++)
		if (c->v[i].job == job && c->v[i].pod == p)
			return true;
	return false;
}

/* The shortest prefix of the sorted candidates whose leaving makes req fit
 * on nid, or -1: one scratch copy, freed victim by victim.  O(nv x pods
 * of the victims). */
static int32_t prefix_fit(const pctx_t *c, int32_t nid, const mu__podset_t *ps, int32_t nv)
{
	mu__node_t copy = c->e->nodes[nid];
	mu__ntopo_t topo;
	if (copy.topo) {
		topo = *copy.topo;
		copy.topo = &topo;
	}
	for (int32_t k = 0; k < nv; k++) {
		const victim_t *x = &c->v[k];
		const mu__job_t *v = &c->e->jobs[x->job];
		for (int32_t p = 0; p < v->npods; p++) {
			if (v->pods[p].node != nid || (x->pod >= 0 && p != x->pod) ||
			    (x->pod < 0 && freed_before(c, k, x->job, p)))
				continue;
			mu__pod_t tmp = v->pods[p];
			mu__node_give(NULL, &copy, &v->podsets[mu__pod_podset(v, p)], &tmp);
		}
		if (mu__node_fit(c->e, &copy, ps) == MU_F_COUNT)
			return k + 1;
	}
	return -1;
}

/* The cheapest victim set on nid that makes req fit, into best[0..*bk)
 * (*bk 0: none).  Tries every single victim and every pair, then the
 * greedy prefix of the sorted candidates made minimal by dropping what is
 * not needed; at most PLAN_FITS fit tests, and none where the devices the
 * victims could free cannot cover the pod's whole GPUs.  A plan found
 * ends the search, unless it stops a whole job while surplus pods are
 * candidates: then the larger sets are costed against it too, so that an
 * elastic job loses pods rather than stops (Volcano's preempt action,
 * "preempt enough tasks to fit large task of different job"). */
static void node_plan(pctx_t *c, int32_t nid, const mu__podset_t *ps, int32_t *best,
		      int32_t *bk, pcost_t *bc)
{
	int32_t budget = PLAN_FITS, nv = c->nv < PLAN_MAXV ? c->nv : PLAN_MAXV, s[PLAN_MAXV];
	int64_t need = ps->req->v[MU_RES_GPU] - c->e->nodes[nid].free.v[MU_RES_GPU], sum = 0;
	int32_t max1 = 0, max2 = 0;
	bool surplus = false;
	*bk = 0;
	for (int32_t i = 0; i < nv; i++) {
		sum += c->v[i].dev;
		surplus |= c->v[i].pod >= 0;
		if (c->v[i].dev > max1) {
			max2 = max1;
			max1 = c->v[i].dev;
		} else if (c->v[i].dev > max2) {
			max2 = c->v[i].dev;
		}
	}
	if (sum < need)
		return; /* all of them together free too few devices */
	for (int32_t i = 0; i < nv && budget > 0 && max1 >= need; i++) {
		s[0] = i;
		if (c->v[i].dev >= need)
			offer(c, nid, ps, s, 1, best, bk, bc, &budget);
	}
	if (*bk && (!surplus || bc->jobs == 0))
		return;
	/* after a whole-job single, only pairs of surplus pods (no job
	 * stopped) are worth costing: O(surplus pairs), not O(nv^2) */
	bool only_surplus = *bk > 0;
	for (int32_t i = 0; i < nv && budget > 0 && max1 + max2 >= need; i++)
		for (int32_t j = i + 1; j < nv && budget > 0; j++) {
			if (only_surplus && (c->v[i].pod < 0 || c->v[j].pod < 0))
				continue;
			s[0] = i;
			s[1] = j;
			if (c->v[i].dev + c->v[j].dev >= need)
				offer(c, nid, ps, s, 2, best, bk, bc, &budget);
		}
	if ((*bk && (!surplus || bc->jobs == 0)) || nv < 3)
		return;
	int32_t k = prefix_fit(c, nid, ps, nv); /* greedy prefix */
	budget -= k < 0 ? nv : k;
	if (k < 3)
		return;
	for (int32_t i = 0; i < k; i++)
		s[i] = i;
	int64_t ksum = 0;
	for (int32_t i = 0; i < k; i++)
		ksum += c->v[i].dev;
	for (int32_t i = k - 1; i >= 0 && budget > 0; i--) { /* drop the unneeded */
		int32_t t[PLAN_MAXV], m = 0;
		if (ksum - c->v[s[i]].dev < need)
			continue; /* needed for the devices alone */
		for (int32_t x = 0; x < k; x++)
			if (x != i)
				t[m++] = s[x];
		budget--;
		if (set_fits(c, nid, ps, t, m)) {
			ksum -= c->v[s[i]].dev;
			memcpy(s, t, (size_t)m * sizeof *t);
			k = m;
		}
	}
	pcost_t cost = set_cost(c, s, k);
	if ((!*bk || cost_less(&cost, bc)) && plan_ok(c, s, k)) {
		memcpy(best, s, (size_t)k * sizeof *s);
		*bk = k;
		*bc = cost;
	}
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

/* Evicts the victims of set s[0..k) gathered for a node, in the order
 * they were judged in. */
static int evict_plan(pctx_t *c, const int32_t *s0, int32_t k)
{
	int32_t s[PLAN_MAXV];
	plan_order(c, s0, k, s);
	for (int32_t i = 0; i < k; i++) {
		const victim_t *x = &c->v[s[i]];
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

/* A lower bound of the cost of any victim set on nid that frees the
 * devices req needs: every component is one no plan can beat, so a node
 * whose bound is not below the best plan so far can be skipped.
 * O(candidates x the devices needed). */
static pcost_t plan_bound(const pctx_t *c, int32_t nid, const mu__podset_t *ps)
{
	pcost_t lb = {0, 1, 0, 0, INT32_MAX, 0, INT64_MIN};
	int64_t need = ps->req->v[MU_RES_GPU] - c->e->nodes[nid].free.v[MU_RES_GPU];
	bool surplus = false;
	int64_t got = 0;
	uint64_t used = 0; /* bit i: candidate i counted (PLAN_MAXV is 64) */
	int32_t nv = c->nv < PLAN_MAXV ? c->nv : PLAN_MAXV;
	for (int32_t i = 0; i < nv; i++) {
		const victim_t *x = &c->v[i];
		lb.inq = x->kind != VK_PREEMPT ? 0 : lb.inq;
		surplus |= x->pod >= 0;
		lb.prio = x->prio < lb.prio ? x->prio : lb.prio;
	}
	while (got < need || lb.pods == 0) { /* fewest candidates by devices */
		int32_t m = -1;
		for (int32_t i = 0; i < nv; i++)
			if (!((used >> i) & 1) && (m < 0 || c->v[i].dev > c->v[m].dev))
				m = i;
		if (m < 0)
			break;
		used |= (uint64_t)1 << m;
		got += c->v[m].dev;
		lb.pods++;
	}
	lb.jobs = surplus ? 0 : lb.pods;
	/* all of its own queue: every victim, or one job for surplus pods */
	lb.inq = lb.inq ? (surplus ? 1 : lb.pods) : 0;
	/* The fewest GPUs that many candidates hold, and the latest that the
	 * earliest start among that many can be (the pods-th latest start). */
	int64_t g[PLAN_MAXV], t0[PLAN_MAXV];
	for (int32_t i = 0; i < nv; i++) {
		g[i] = c->v[i].gpu;
		t0[i] = c->v[i].start;
	}
	for (int32_t k = 0; k < lb.pods && k < nv; k++) {
		int32_t m = k, y = k;
		for (int32_t i = k + 1; i < nv; i++) {
			m = g[i] < g[m] ? i : m;
			y = t0[i] > t0[y] ? i : y;
		}
		int64_t t = g[k];
		g[k] = g[m];
		g[m] = t;
		lb.gpu += g[k];
		t = t0[k];
		t0[k] = t0[y];
		t0[y] = t;
		lb.young = t0[k];
	}
	return lb;
}

/* Whether every candidate of summary s, all of one other queue, is a
 * reclaim victim that victim_ok() refuses for J: reclaim off, or the
 * victims' queue path at or below its deserved GPUs (each candidate frees
 * GPUs).  The refusal is noted for explain as victim_ok()'s first would
 * be.  False where victim_ok() could note a time (cool-down) or list a
 * candidate of another kind.  O(depth). */
static bool reclaim_refused(pctx_t *c, const mu__vsum_t *s)
{
	mu_engine_t *e = c->e;
	const mu__job_t *j = &e->jobs[c->jid];
	int32_t vq = s->queue, ja, va;
	if (c->moving || c->limit || vq < 0 || vq == j->queue || j->state == MU_JOB_RUNNING ||
	    j->nbackfilled)
		return false;
	if (!e->cfg.reclaim)
		return true;
	const mu__queue_t *q = &e->queues[vq];
	if (e->cfg.reclaim_cooldown > 0 && q->last_reclaimed != MU_TIME_NONE &&
	    c->now - q->last_reclaimed < e->cfg.reclaim_cooldown)
		return false;
	if (c->dom != 1 << MU_RES_GPU || s->gmin <= 0)
		return false; /* only plain GPU claims (dom is a mask) */
	lca_sides(e, j->queue, vq, &ja, &va);
	mu_res_t unit;
	memset(&unit, 0, sizeof unit);
	unit.v[MU_RES_GPU] = 1;
	return !victim_above(c, vq, va, false, &unit, NULL, 0);
}

/* Whether node nid may be passed over on its summary (vsum.c) alone,
 * with the same outcome as walking it: it has no candidate, or its
 * candidates are reclaim victims that J may not take; or (an
 * uncapped search under priority order, where passing over a node has no
 * side effect: no candidate refused for its age, no reclaim refusal that
 * explain would report first) its candidates cannot free the devices the
 * pod needs, or the cheapest plan they allow cannot beat *bc (NULL: no
 * plan yet).  That plan's cost is a lower bound in every component: at
 * least ceil(need / most devices one candidate frees) victims, each of at
 * least the fewest GPUs one eviction takes, of the lowest priority and
 * the latest start; in-queue victims only when every candidate is of J's
 * queue.  Sets the node's min_start as gather() would.  O(1) on a fresh
 * summary, else O(pods on the node). */
static bool summary_skip(pctx_t *c, int32_t nid, const mu__podset_t *ps, const pcost_t *bc)
{
	mu_engine_t *e = c->e;
	const mu__vsum_t *s = mu__vsum_get(e, nid);
	if (!s)
		return false;
	const mu__job_t *j = &e->jobs[c->jid];
	bool young = s->ncand && c->now - s->max_start < e->cfg.min_runtime;
	if (s->ncand && !young && reclaim_refused(c, s)) { /* as gather() finding none */
		if (s->min_start != INT64_MAX)
			e->nodes[nid].min_start = s->min_start;
		return true;
	}
	bool quiet = c->moving || c->limit || !e->cfg.reclaim || s->queue == j->queue ||
		     (e->cfg.reclaim_cooldown <= 0 && c->rq >= 0);
	if (s->ncand && ((e->cfg.order == MU_ORDER_JCT && s->maxprio >= j->priority) ||
			 e->cfg.max_victim_nodes || young || !quiet))
		return false;
	if (s->min_start != INT64_MAX)
		e->nodes[nid].min_start = s->min_start;
	int64_t need = ps->req->v[MU_RES_GPU] - e->nodes[nid].free.v[MU_RES_GPU];
	if (!s->ncand || need > s->devsum)
		return true;
	if (!bc)
		return false;
	int32_t p = need > 0 ? (int32_t)((need + s->maxdev - 1) / s->maxdev) : 1;
	bool inq = c->moving || c->limit || (s->queue == j->queue && !j->nbackfilled);
	pcost_t lb = {0, inq ? (s->surplus ? 1 : p) : 0, s->surplus ? 0 : p, p * s->gmin, s->minprio, p,
		      s->max_start};
	return !cost_less(&lb, bc);
}

/* Finds the cheapest node of class cls where evictions make req fit, and
 * evicts them.  Returns the node, -1 if none, or a negative error - 1. */
static int32_t victim_node(pctx_t *c, const mu__sclass_t *cls, const mu__podset_t *ps,
			   const mu__scope_t *sc)
{
	mu_engine_t *e = c->e;
	int32_t best = -1, examined = 0, set[PLAN_MAXV], k = 0;
	pcost_t bc = {0}, cost;
	const int32_t *ids = sc ? sc->nodes : cls->nodes;
	int32_t nids = sc ? sc->n : cls->nnodes;
	/* With a cap, start where the last search stopped, so that every node
	 * gets its turn, and stop after that many nodes with a workable plan
	 * (nodes without victims do not count). */
	int32_t start = e->cfg.max_victim_nodes && nids ? (int32_t)(e->victim_cursor % (uint32_t)nids) : 0;
	for (int32_t i0 = 0; i0 < nids; i0++) {
		int32_t i = (start + i0) % nids;
		int32_t nid = ids[i];
		if (e->nodes[nid].npods == 0 || (sc && !mu__sclass_has(cls, nid)))
			continue;
		if (c->moving && e->move_nodes_left-- <= 0) {
			c->out_of_budget = true; /* the cycle's share is spent */
			break;
		}
		mu_time_t old = e->nodes[nid].min_start + e->cfg.min_runtime;
		if (c->now < old) { /* every pod here is too young to go */
			if (old < c->retry_at)
				c->retry_at = old;
			continue;
		}
		if (summary_skip(c, nid, ps, best >= 0 ? &bc : NULL))
			continue;
		if (gather(c, nid) != MU_OK)
			return -2;
		int32_t s[PLAN_MAXV], n = 0;
		if (!c->nv)
			continue;
		if (best >= 0) {
			pcost_t lb = plan_bound(c, nid, ps);
			if (!cost_less(&lb, &bc)) { /* cannot beat the best so far */
				if (e->cfg.max_victim_nodes && ++examined >= e->cfg.max_victim_nodes) {
					e->victim_cursor = (uint32_t)i + 1;
					break;
				}
				continue;
			}
		}
		gather_sort(c);
		node_plan(c, nid, ps, s, &n, &cost);
		if (!n)
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
	gather_sort(c);
	node_plan(c, best, ps, set, &k, &cost);
	if (!k)
		return -1;
	if (evict_plan(c, set, k) != MU_OK)
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
			mu_reason_t pr;
			memset(&pr, 0, sizeof pr);
			pr.why = MU_WHY_PREEMPTED;
			pr.blocked_by = c->jid;
			pr.podset = pr.limit_queue = pr.fs_queue = -1;
			if ((rc = mu__job_last_set(v, &pr)) != MU_OK)
				return rc;
		}
		if ((rc = mu__grow((void **)&e->relist, &e->relist_cap,
				   e->nrelist + 1, sizeof *e->relist)) != MU_OK)
			return rc;
		e->relist[e->nrelist++] = x->job;
	}
	/* Capacity grew where victims freed more than J took; else a job that
	 * failed before would fail again, and need not be retried.
	 * O(evictions x (evictions + J's pods)). */
	bool grew = false;
	for (int32_t i = 0; i < e->nevl && !grew; i++) {
		int32_t nid = e->evl[i].was.node;
		bool seen = false;
		for (int32_t k = 0; k < i && !seen; k++)
			seen = e->evl[k].was.node == nid;
		if (seen)
			continue; /* this node was summed already */
		mu_res_t left = {{0}};
		for (int32_t k = i; k < e->nevl; k++) {
			if (e->evl[k].was.node != nid)
				continue;
			const mu__job_t *v = &e->jobs[e->evl[k].job];
			const mu_res_t *a = v->podsets[mu__pod_podset(v, e->evl[k].pod)].acct;
			for (int r = 0; r < MU_RES_MAX; r++)
				left.v[r] += a->v[r];
		}
		for (int32_t t = 0; t < e->ntxn; t++)
			if (j->pods[e->txn[t]].node == nid) {
				const mu_res_t *a = j->podsets[mu__pod_podset(j, e->txn[t])].acct;
				for (int r = 0; r < MU_RES_MAX; r++)
					left.v[r] -= a->v[r];
			}
		for (int r = 0; r < MU_RES_MAX; r++)
			grew |= r != MU_RES_PODS && left.v[r] > 0;
	}
	e->nevl = 0;
	if (grew)
		e->release_gen++;
	return MU_OK;
}

/* Fills r with the fair-share numbers when J's queue is over its share
 * (and its deserved quota) with its claim while some other queue uses
 * what reclaim could take. */
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
		    q->used.v[res] + c->need.v[res] <= q->fair.v[res] ||
		    q->used.v[res] + c->need.v[res] <= q->deserved.v[res])
			continue;
		r->fs_rule = MU_RULE_CLAIMANT_FAIR;
		r->fs_queue = e->jobs[c->jid].queue;
		r->fs_res = res;
		r->fs_used = q->used.v[res];
		r->fs_req = c->need.v[res];
		r->fs_fair = q->fair.v[res];
		r->fs_deserved = q->deserved.v[res];
		return;
	}
}

/* Whether the victim side sv is above what protects it (deserved quota, or
 * fair share when J's side sa is only within its fair share), so that the
 * pair could be a reclaim at all.  O(resources). */
static bool side_reclaimable(pctx_t *c, const mu__queue_t *A, const mu__queue_t *V)
{
	bool des = true, fair = true, vdes = false, vfair = false;
	int vr = -1;
	for (int r = 0; r < c->e->nres; r++) {
		if (!dom_res(c, r))
			continue;
		if (c->need.v[r] && A->used.v[r] + c->need.v[r] > A->deserved.v[r])
			des = false;
		if (c->need.v[r] && A->used.v[r] + c->need.v[r] > A->fair.v[r])
			fair = false;
		if (V->used.v[r] > V->deserved.v[r]) {
			vdes = true;
			if (V->used.v[r] > V->fair.v[r])
				vfair = true;
		}
		if (V->used.v[r] > 0 && vr < 0)
			vr = r;
	}
	if ((des && vdes) || (fair && vfair))
		return true;
	if ((des || fair) && vr >= 0 && c->rq < 0) { /* the victim side's rule */
		c->rq = (int32_t)(V - c->e->queues);
		c->rres = vr;
		c->rused = V->used.v[vr];
		c->rfair = V->fair.v[vr];
		c->rdes = V->deserved.v[vr];
	}
	return false;
}

/* Whether some other leaf with running jobs passes the reclaim rules
 * against J's claim (side_reclaimable() where their paths meet), filling
 * c's first refusal for explain.  The answer depends only on J's queue,
 * the claim's dominant resources and the queues' usage, running jobs,
 * quotas and fair shares, so it is kept per leaf while e->qgen stands:
 * the jobs of a queue that all fail cost O(queues x depth) once, not
 * each (in a little-changed cycle every failed job is tried again).  */
static bool reclaim_any(pctx_t *c)
{
	mu_engine_t *e = c->e;
	const mu__job_t *j = &e->jobs[c->jid];
	mu__queue_t *q = &e->queues[j->queue];
	struct mu__rmemo *m = &q->rmemo;
	int64_t n0 = c->gpu_dominant ? c->need.v[MU_RES_GPU] : c->need.v[MU_RES_CPU];
	int64_t n1 = c->gpu_dominant ? 0 : c->need.v[MU_RES_MEM];
	if (m->gen == e->qgen && m->gpu == c->gpu_dominant && m->n0 == n0 && m->n1 == n1) {
		if (m->rq >= 0) { /* a refusal seen before the answer, as the loop does */
			c->rq = m->rq;
			c->rres = m->rres;
			c->rused = m->rused;
			c->rfair = m->rfair;
			c->rdes = m->rdes;
		}
		return m->ok;
	}
	bool ok = false;
	for (int32_t v = 0; !ok && v < e->nqueues; v++) {
		const mu__queue_t *vq = &e->queues[v];
		if (v == j->queue || vq->nchildren || !vq->nrunning)
			continue;
		int32_t sa, sv;
		lca_sides(e, j->queue, v, &sa, &sv);
		ok = side_reclaimable(c, &e->queues[sa], &e->queues[sv]);
	}
	*m = (struct mu__rmemo){e->qgen, n0, n1, c->gpu_dominant, ok, c->rq, c->rres,
				c->rused, c->rfair, c->rdes};
	return ok;
}

/* A cheap test before any search: is there any job J could evict at all?
 * Uses the lowest victim priority of J's queue, and the live usage of the
 * queues against the reclaim rules at the level where J's path and each
 * other leaf's meet (no state of an earlier moment is trusted, so a queue
 * that crossed its quota during this cycle counts).  O(queues x depth). */
static bool could_preempt(pctx_t *c)
{
	const mu_engine_t *e = c->e;
	const mu__job_t *j = &e->jobs[c->jid];
	const mu__queue_t *q = &e->queues[j->queue];
	if (e->cfg.preemption && (q->min_victim_prio < j->eprio ||
	    (j->escalated && j->esc == MU_ESC_PREEMPT && q->nrunning)))
		return true;
	if (c->limit)
		return false;
	if (j->nbackfilled > 0)
		return true; /* jobs started in the hole of its reservation */
	return e->cfg.reclaim && reclaim_any(c);
}

/* Whether one more pod of J (acct) keeps J's path within its limits. */
static bool limit_room(const pctx_t *c, const mu_res_t *acct)
{
	return claimant_within(c, -1, 2, acct, NULL, 0);
}

/* Gives back the evictions logged since mark (latest first).  O(pods). */
static int undo_evictions(pctx_t *c, int32_t mark)
{
	mu_engine_t *e = c->e;
	for (int32_t i = e->nevl - 1; i >= mark; i--) {
		const mu__evict_t *x = &e->evl[i];
		int rc = mu__pod_bind(e, &e->jobs[x->job], x->pod, x->was.node, &x->was);
		if (rc)
			return rc;
	}
	e->nevl = mark;
	return MU_OK;
}

/* Whether a pod of ps fits on nid and its terms (and bound pods' terms)
 * allow it there. */
static bool aff_fits(mu_engine_t *e, mu__sclass_t *cls, const mu__podset_t *ps, int32_t nid)
{
	return mu__fits(e, nid, ps) && mu__aff_node_ok(e, cls, ps, nid);
}

/* After aff_victim_node() made room on nid with the evictions since mark:
 * gives back every victim (a whole job at a time, the last evicted, of
 * the highest priority, first) without which the pod still fits and its
 * terms still allow nid, as kube-scheduler reprieves victims.  O(victims
 * x terms). */
static int reprieve(pctx_t *c, mu__sclass_t *cls, const mu__podset_t *ps, int32_t nid,
		    int32_t mark)
{
	mu_engine_t *e = c->e;
	int32_t b = e->nevl;
	while (b > mark) {
		int32_t a = b - 1, job = e->evl[a].job;
		while (a > mark && e->evl[a - 1].job == job)
			a--;
		mu__job_t *v = &e->jobs[job];
		for (int32_t i = a; i < b; i++) {
			int rc = mu__pod_bind(e, v, e->evl[i].pod, e->evl[i].was.node, &e->evl[i].was);
			if (rc)
				return rc;
		}
		if (aff_fits(e, cls, ps, nid)) { /* not needed: it stays */
			memmove(&e->evl[a], &e->evl[b], (size_t)(e->nevl - b) * sizeof *e->evl);
			e->nevl -= b - a;
		} else {
			for (int32_t i = a; i < b; i++)
				mu__pod_release(e, v, e->evl[i].pod, false);
		}
		b = a;
	}
	return MU_OK;
}

/* Evicts the candidates gathered on one node (c->v, cheapest first,
 * preemption only) until a pod of ps fits nid and its terms allow it
 * there.  Returns 1 when it does, 0 when not, -2 on error. */
static int evict_until_fits(pctx_t *c, mu__sclass_t *cls, const mu__podset_t *ps, int32_t nid)
{
	mu_engine_t *e = c->e;
	gather_sort(c);
	for (int32_t k = 0; k < c->nv; k++) {
		const victim_t *x = &c->v[k];
		if (x->kind == VK_RECLAIM)
			continue;
		const mu__job_t *v = &e->jobs[x->job];
		for (int32_t p = 0; p < v->npods; p++)
			if ((x->pod < 0 || p == x->pod) && evict_pod(c, x->job, p) != MU_OK)
				return -2;
		if (aff_fits(e, cls, ps, nid))
			return 1;
	}
	return 0;
}

#define ZONE_PEERS 64

/* Preemption for pod affinity terms, as kube-scheduler's preemption
 * removes a node's lower-priority pods and runs its filters again: on a
 * node where a pod of ps is refused (by its required terms, a bound pod's
 * anti-affinity, or room), evicts candidate victims of its own queue
 * (preemption by priority, never reclaim), cheapest first, until the pod
 * fits and the terms allow it there, then reprieves those not needed.
 * Where ps's own required anti-affinity has a topology key wider than a
 * node (a zone), the candidates on the other nodes of nid's domain that
 * hold pods the term selects are tried next, and so are those of the
 * domain's nodes with pods where bound pods' own zone-wide required
 * anti-affinity selects ps (symmetry) (at most ZONE_PEERS nodes):
 * kube-scheduler does not preempt across nodes (its docs, "Cross node
 * preemption"), so there the pod would stay pending.  The first node where
 * that works is taken.  Returns the node, -1 if none, -2 on error.
 * O(nodes x victims x terms), at most max_victim_nodes nodes with
 * candidates. */
static int32_t aff_victim_node(pctx_t *c, mu__sclass_t *cls, const mu__podset_t *ps,
			       const mu__scope_t *sc)
{
	mu_engine_t *e = c->e;
	const int32_t *ids = sc ? sc->nodes : cls->nodes;
	int32_t nids = sc ? sc->n : cls->nnodes, examined = 0, peers[ZONE_PEERS];
	for (int32_t i = 0; i < nids; i++) {
		int32_t nid = ids[i];
		if (sc && !mu__sclass_has(cls, nid))
			continue;
		int32_t np = mu__aff_anti_peers(e, ps, nid, peers, ZONE_PEERS);
		if (e->nodes[nid].npods == 0 && np == 0)
			continue;
		if (gather(c, nid) != MU_OK)
			return -2;
		if (!c->nv && np == 0)
			continue;
		int32_t mark = e->nevl;
		int ok = evict_until_fits(c, cls, ps, nid);
		for (int32_t k = 0; k < np && ok == 0; k++)
			ok = gather(c, peers[k]) != MU_OK ? -2 : evict_until_fits(c, cls, ps, nid);
		if (ok < 0)
			return -2;
		if (ok)
			return reprieve(c, cls, ps, nid, mark) == MU_OK ? nid : -2;
		if (undo_evictions(c, mark) != MU_OK)
			return -2;
		if (e->cfg.max_victim_nodes && ++examined >= e->cfg.max_victim_nodes)
			break;
	}
	return -1;
}

/* Limit fallback's fit tests per pod: sets of candidates tried for real. */
#define LIMIT_FITS 64

/* Limit fallback: evicts the candidates s[0..k) (whole jobs) and says
 * where one more pod of J then lands: a node of class cls when J's path
 * is under its limits and the pod fits there, else -1 (-2 on error).  The
 * evictions are given back unless keep and a node was found.  O(their
 * pods + one node search). */
static int32_t limit_set_try(pctx_t *c, mu__sclass_t *cls, const mu__podset_t *ps,
			     const mu__scope_t *sc, const int32_t *s, int32_t k, bool keep)
{
	mu_engine_t *e = c->e;
	int32_t mark = e->nevl;
	for (int32_t i = 0; i < k; i++) {
		const mu__job_t *v = &e->jobs[c->v[s[i]].job];
		for (int32_t p = 0; p < v->npods; p++)
			if (evict_pod(c, c->v[s[i]].job, p) != MU_OK)
				return -2;
	}
	int32_t nid = limit_room(c, ps->acct) ? mu__best_node_in(e, cls, ps, sc) : -1;
	if ((!keep || nid < 0) && undo_evictions(c, mark) != MU_OK)
		return -2;
	return nid;
}

/* Offers candidates s[0..k) to the limit fallback: kept in best/bk/bc
 * when cheaper than the best so far, under the limits once they leave (by
 * arithmetic, free) and, at the cost of one of *budget's fit tests,
 * leaving room for the pod on some node.  Returns -2 on error. */
static int limit_offer(pctx_t *c, mu__sclass_t *cls, const mu__podset_t *ps,
		       const mu__scope_t *sc, const int32_t *s, int32_t k, int32_t *best,
		       int32_t *bk, pcost_t *bc, int32_t *budget)
{
	mu_engine_t *e = c->e;
	pcost_t cost = set_cost(c, s, k);
	if (*bk > 0 && !cost_less(&cost, bc))
		return MU_OK;
	qdelta_t d[16];
	int32_t nd = 0;
	for (int32_t i = 0; i < k; i++) {
		const mu__job_t *v = &e->jobs[c->v[s[i]].job];
		mu_res_t held = mu__job_acct_bound(e, v);
		delta_add(e, d, &nd, 16, v->queue, &held);
	}
	if (!claimant_within(c, -1, 2, ps->acct, d, nd))
		return MU_OK; /* still over a limit */
	(*budget)--;
	int32_t nid = limit_set_try(c, cls, ps, sc, s, k, false);
	if (nid < -1)
		return -2;
	if (nid >= 0) {
		memcpy(best, s, (size_t)k * sizeof *s);
		*bk = k;
		*bc = cost;
	}
	return MU_OK;
}

/* After the greedy prefix of the limit fallback made room (its evictions
 * logged since mark, a job at a time): gives back, from the next-to-last
 * evicted job down to the first (as Kueue's minimalPreemptions adds
 * workloads back), every job without which the pod is still under the
 * limits and fits a node.  Returns that node, or -2 on error.  O(victims
 * x (their pods + one node search)). */
static int32_t limit_reprieve(pctx_t *c, mu__sclass_t *cls, const mu__podset_t *ps,
			      const mu__scope_t *sc, int32_t mark)
{
	mu_engine_t *e = c->e;
	int32_t b = e->nevl; /* the last job's entries [a, b) stay */
	while (b > mark && e->evl[b - 1].job == e->evl[e->nevl - 1].job)
		b--;
	while (b > mark) {
		int32_t a = b - 1, job = e->evl[a].job;
		while (a > mark && e->evl[a - 1].job == job)
			a--;
		mu__job_t *v = &e->jobs[job];
		for (int32_t i = a; i < b; i++)
			if (mu__pod_bind(e, v, e->evl[i].pod, e->evl[i].was.node, &e->evl[i].was))
				return -2;
		if (limit_room(c, ps->acct) && mu__best_node_in(e, cls, ps, sc) >= 0) {
			memmove(&e->evl[a], &e->evl[b], (size_t)(e->nevl - b) * sizeof *e->evl);
			e->nevl -= b - a; /* not needed: it stays */
		} else {
			for (int32_t i = a; i < b; i++)
				mu__pod_release(e, v, e->evl[i].pod, false);
		}
		b = a;
	}
	int32_t nid = mu__best_node_in(e, cls, ps, sc);
	return nid >= 0 ? nid : -2;
}

/* Limit mode, when no node-centric plan exists: the victims need not sit
 * where J lands.  Among J's queue's candidates (whole jobs of lower
 * priority), finds the cheapest set (as node plans are costed: fewest
 * jobs, then fewest GPUs, then the lowest priority) after which one more
 * pod of J is under the limit and fits some node of class cls: every
 * single candidate, then every pair, within LIMIT_FITS fit tests; else
 * the greedy prefix in victim order made minimal (limit_reprieve()).
 * Evicts it and returns that node, or -1 (the evictions stay logged: the
 * attempt's rollback undoes them), -2 on error.  O(queue's running jobs x
 * log + LIMIT_FITS x (pods of two jobs + a node search) + the prefix's
 * jobs x (their pods + a node search)). */
static int32_t limit_victims_anywhere(pctx_t *c, mu__sclass_t *cls, const mu__podset_t *ps,
				      const mu__scope_t *sc)
{
	mu_engine_t *e = c->e;
	const mu__queue_t *q = &e->queues[e->jobs[c->jid].queue];
	int rc = mu__grow((void **)&c->v, &c->vcap, q->nrunning, sizeof *c->v);
	if (rc)
		return -2;
	c->nv = 0;
	for (int32_t i = 0; i < q->nrunning; i++) {
		int32_t vid = q->running[i], kind = VK_PREEMPT;
		const mu__job_t *v = &e->jobs[vid];
		if (!victim_ok(c, vid, -1, &kind))
			continue;
		c->v[c->nv++] = (victim_t){vid, -1, v->eprio, v->bound_gpu, v->start,
					   kind, 0, over_budget(v, -1), v->seq};
	}
	gather_sort(c);
	int32_t nv = c->nv < PLAN_MAXV ? c->nv : PLAN_MAXV, budget = LIMIT_FITS;
	int32_t s[2], best[2], bk = 0;
	pcost_t bc = {0};
	for (int32_t i = 0; i < nv && budget > 0; i++) {
		s[0] = i;
		if (limit_offer(c, cls, ps, sc, s, 1, best, &bk, &bc, &budget) != MU_OK)
			return -2;
	}
	for (int32_t i = 0; i < nv && budget > 0 && !bk; i++)
		for (int32_t j = i + 1; j < nv && budget > 0; j++) {
			s[0] = i;
			s[1] = j;
			if (limit_offer(c, cls, ps, sc, s, 2, best, &bk, &bc, &budget) != MU_OK)
				return -2;
		}
	if (bk) {
		int32_t nid = limit_set_try(c, cls, ps, sc, best, bk, true);
		if (nid != -1)
			return nid;
	}
	int32_t mark = e->nevl;
	for (int32_t k = 0; k < c->nv; k++) {
		const mu__job_t *v = &e->jobs[c->v[k].job];
		for (int32_t p = 0; p < v->npods; p++)
			if ((rc = evict_pod(c, c->v[k].job, p)) != MU_OK)
				return -2;
		if (limit_room(c, ps->acct) && mu__best_node_in(e, cls, ps, sc) >= 0)
			return limit_reprieve(c, cls, ps, sc, mark);
	}
	return -1;
}

/* Whether J is an elastic job that takes in an attempt only the pods it
 * claims (c->need_pods); it grows in turns after the cycle's loop
 * (queue.c), as when placed without victims (mu__elastic_cap()). */
static bool elastic_claim(const pctx_t *c)
{
	const mu__job_t *j = &c->e->jobs[c->jid];
	return !c->moving && !j->parts && j->topo < 0 &&
	       mu__elastic_cap(c->e, j, c->need_pods) < j->npods;
}

/* Places J's unbound pods within scope sc (NULL: anywhere), evicting where
 * needed for the first c->need_pods of them (the rest only where there is
 * room).  Returns pods placed. */
static int32_t place_with_victims(pctx_t *c, const mu__scope_t *sc)
{
	mu_engine_t *e = c->e;
	mu__job_t *j = &e->jobs[c->jid];
	int32_t placed = 0;
	bool elastic = elastic_claim(c); /* it takes only the pods it claims */
	for (int32_t p = 0; p < j->npodsets && !(elastic && placed >= c->need_pods); p++) {
		mu__podset_t *ps = &j->podsets[p];
		mu__sclass_t *cls = &e->classes[ps->sclass];
		int rc0 = mu__sclass_refresh(e, cls);
		if (rc0)
			return rc0;
		c->pod_acct = ps->acct;
		int32_t in_part = 0; /* its pods bound, for its own minimum */
		for (int32_t i = 0; i < ps->replicas; i++)
			in_part += j->pods[ps->first + i].node >= 0;
		for (int32_t i = 0; i < ps->replicas && !(elastic && placed >= c->need_pods); i++) {
			int32_t pod = ps->first + i;
			if (j->pods[pod].node >= 0)
				continue;
			bool room = !c->limit || limit_room(c, ps->acct);
			bool want = placed < c->need_pods || in_part < ps->min_member;
			bool aff = e->aff && mu__aff_involved(e, ps);
			int32_t nid = room ? mu__best_node_in(e, cls, ps, sc) : -1, mark = e->nevl;
			if (nid < 0 && want) {
				nid = victim_node(c, cls, ps, sc);
				if (nid == -1 && c->limit && !room)
					nid = limit_victims_anywhere(c, cls, ps, sc);
			}
			if (nid >= 0 && aff && !mu__aff_node_ok(e, cls, ps, nid)) {
				/* its pod affinity or spread refuses: those evictions
				 * go back, and victims the terms need are sought */
				int rc = undo_evictions(c, mark);
				if (rc)
					return rc;
				nid = -1;
			}
			if (nid == -1 && want && aff && room && !c->moving && !c->limit)
				nid = aff_victim_node(c, cls, ps, sc);
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
			for (int r = 0; r < MU_RES_MAX; r++) {
				c->need.v[r] -= ps->acct->v[r];
				if (c->need.v[r] < 0)
					c->need.v[r] = 0;
			}
			placed++;
			in_part++;
		}
	}
	return placed;
}

/* Tries candidate k of c->v alone for a gang: evicts it, places as many
 * of J's pods as find room, keeps the result (*ok) when at least need
 * landed, else restores everything.  O(pods x class nodes). */
static int gang_try_one(pctx_t *c, const mu__scope_t *sc, int32_t k, int32_t need, bool *ok)
{
	mu_engine_t *e = c->e;
	mu__job_t *j = &e->jobs[c->jid];
	const mu__job_t *v = &e->jobs[c->v[k].job];
	e->ntxn = 0;
	e->nevl = 0;
	int32_t placed = 0;
	bool elastic = elastic_claim(c); /* it takes only the pods it claims */
	for (int32_t p = 0; p < v->npods; p++) {
		int rc = evict_pod(c, c->v[k].job, p);
		if (rc)
			return rc;
	}
	for (int32_t p = 0; p < j->npodsets; p++) {
		mu__podset_t *ps = &j->podsets[p];
		mu__sclass_t *cls = &e->classes[ps->sclass];
		int rc = mu__sclass_refresh(e, cls);
		if (rc)
			return rc;
		for (int32_t i = 0; i < ps->replicas && !(elastic && placed >= need); i++) {
			int32_t pod = ps->first + i;
			if (j->pods[pod].node >= 0 || (c->limit && !limit_room(c, ps->acct)))
				continue;
			int32_t nid = mu__best_node_in(e, cls, ps, sc);
			if (nid < 0)
				break;
			rc = mu__grow((void **)&e->txn, &e->txn_cap, e->ntxn + 1, sizeof *e->txn);
			if (rc == MU_OK)
				rc = mu__pod_bind(e, j, pod, nid, NULL);
			if (rc)
				return rc;
			e->txn[e->ntxn++] = pod;
			placed++;
		}
	}
	if (placed >= need && mu__parts_ok(e, j, NULL)) {
		*ok = true;
		return MU_OK;
	}
	return rollback(c);
}

static int cmp_single(const void *a, const void *b)
{
	const victim_t *x = a, *y = b;
	if (x->pdb != y->pdb)
		return x->pdb < y->pdb ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	if (x->start != y->start)
		return x->start > y->start ? -1 : 1;
	if (x->seq != y->seq) /* ids are reused: submission order */
		return x->seq < y->seq ? -1 : 1;
	return x->job - y->job;
}

/* For a gang that needs several pods to start: the cheapest single running
 * job whose eviction lets the minimum land (as KAI and Volcano evict job
 * by job; the node-by-node search would take a victim per pod).  Own-queue
 * victims only when `own`.  O(running jobs x depth) to list, then at most
 * GANG_TRIES placements. */
#define GANG_TRIES 16
static int gang_single(pctx_t *c, const mu__scope_t *sc, int32_t need, bool own, bool *ok)
{
	mu_engine_t *e = c->e;
	c->nv = 0;
	for (int32_t q = 0; q < e->nqueues; q++) {
		const mu__queue_t *qq = &e->queues[q];
		e->work += (uint64_t)qq->nrunning;
		for (int32_t i = 0; i < qq->nrunning; i++) {
			int32_t vid = qq->running[i];
			const mu__job_t *v = &e->jobs[vid];
			int kind = VK_PREEMPT;
			if (!victim_ok(c, vid, -1, &kind) || (kind == VK_PREEMPT) != own)
				continue;
			int rc = mu__grow((void **)&c->v, &c->vcap, c->nv + 1, sizeof *c->v);
			if (rc)
				return rc;
			c->v[c->nv++] = (victim_t){vid, -1, v->eprio, v->bound_gpu,
						   v->start, kind, 0, over_budget(v, -1), v->seq};
		}
	}
	if (c->nv > 1)
		qsort(c->v, (size_t)c->nv, sizeof *c->v, cmp_single);
	int64_t free_gpu = e->total_alloc.v[MU_RES_GPU] - e->total_used.v[MU_RES_GPU];
	for (int32_t k = 0, tries = 0; k < c->nv && tries < GANG_TRIES && !*ok; k++) {
		if (c->gpu_dominant && c->v[k].gpu + free_gpu < c->need.v[MU_RES_GPU])
			continue; /* cannot free enough */
		if (!plan_ok(c, &k, 1))
			continue;
		tries++;
		int rc = gang_try_one(c, sc, k, need, ok);
		if (rc)
			return rc;
	}
	return MU_OK;
}

/* One attempt within scope sc: keeps the result when at least need pods
 * are placed (*ok), else restores everything.  A gang first tries single
 * victims of other queues, then the node-by-node search, then single
 * victims of its own queue (borrowed capacity goes first). */
static int attempt(pctx_t *c, const mu__scope_t *sc, int32_t need, bool *ok)
{
	mu_engine_t *e = c->e;
	bool gang = need > 1 && !c->moving;
	int rc = gang ? gang_single(c, sc, need, false, ok) : MU_OK;
	if (rc || *ok)
		return rc;
	e->ntxn = 0;
	e->nevl = 0;
	mu_res_t need_before = c->need;
	int32_t placed = place_with_victims(c, sc);
	if (placed < 0)
		return placed;
	if (placed >= need && mu__parts_ok(e, &e->jobs[c->jid], NULL)) {
		*ok = true;
		return MU_OK;
	}
	c->need = need_before;
	rc = rollback(c);
	if (rc == MU_OK && gang)
		rc = gang_single(c, sc, need, true, ok);
	return rc;
}

/* Whether domain scope sc could hold J's unbound pods were every victim J
 * may evict there gone: free capacity plus those victims' requests must
 * cover the gang's requests in aggregate (a necessary condition), so that
 * a hopeless domain costs O(its pods), not O(pods x its nodes).  GPU
 * shares are not counted (whole devices are). */
static bool domain_could(pctx_t *c, const mu__scope_t *sc)
{
	mu_engine_t *e = c->e;
	const mu__job_t *j = &e->jobs[c->jid];
	static const int dims[] = {MU_RES_CPU, MU_RES_MEM, MU_RES_GPU, MU_RES_PODS};
	int64_t want[4] = {0}, have[4] = {0};
	for (int32_t p = 0; p < j->npods; p++)
		if (j->pods[p].node < 0)
			for (int k = 0; k < 4; k++)
				want[k] += j->podsets[mu__pod_podset(j, p)].req->v[dims[k]];
	for (int32_t i = 0; i < sc->n; i++) {
		const mu__node_t *n = &e->nodes[sc->nodes[i]];
		for (int k = 0; k < 4; k++)
			have[k] += n->free.v[dims[k]];
		for (int32_t q = 0; q < n->npods; q++) {
			int32_t vid = n->refs[q].job;
			int kind;
			if (!victim_ok(c, vid, -1, &kind))
				continue;
			const mu__job_t *v = &e->jobs[vid];
			const mu__podset_t *ps = &v->podsets[mu__pod_podset(v, n->refs[q].pod)];
			for (int k = 0; k < 4; k++)
				have[k] += ps->req->v[dims[k]];
		}
	}
	for (int k = 0; k < 4; k++)
		if (have[k] < want[k])
			return false;
	return true;
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
		if (domain_could(c, &sc))
			rc = attempt(c, &sc, need, ok);
	}
	return rc;
}

/* The claim of J: the accounting of the first `pods` of its unbound pods
 * (its minMember when it has not started, one pod to grow). */
static mu_res_t job_claim(const mu__job_t *j, int32_t pods)
{
	mu_res_t a = {{0}};
	for (int32_t p = 0; p < j->npodsets && pods > 0; p++) {
		const mu__podset_t *ps = &j->podsets[p];
		for (int32_t i = 0; i < ps->replicas && pods > 0; i++)
			if (j->pods[ps->first + i].node < 0) {
				for (int r = 0; r < MU_RES_MAX; r++)
					a.v[r] += ps->acct->v[r];
				pods--;
			}
	}
	return a;
}

/* Explains a refusal by a reclaim rule when nothing better was said. */
static void explain_rule(const pctx_t *c, mu_reason_t *r)
{
	if (r->fs_queue >= 0 || c->rq < 0)
		return;
	r->fs_rule = MU_RULE_VICTIM_QUOTA;
	r->fs_queue = c->rq;
	r->fs_res = c->rres;
	r->fs_used = c->rused;
	r->fs_req = c->need.v[c->rres];
	r->fs_fair = c->rfair;
	r->fs_deserved = c->rdes;
}

static int preempt_run(mu_engine_t *e, int32_t jid, mu_time_t now, bool limit,
		       mu_reason_t *r, mu_decisions_t *out, bool *ok)
{
	mu__job_t *j = &e->jobs[jid];
	pctx_t c = {.e = e, .jid = jid, .now = now, .retry_at = INT64_MAX,
		    .limit = limit, .rq = -1};
	*ok = false;
	int32_t need = j->min_member - j->nbound;
	if (need < 1)
		need = 1;
	c.need_pods = need;
	c.need = job_claim(j, need);
	c.gpu_dominant = c.need.v[MU_RES_GPU] > 0;
	c.dom = mu__dom_slot(e, &c.need);
	if (e->cfg.reclaim && !limit)
		explain_fair(&c, r);
	j->retry_at = INT64_MAX;
	if (!could_preempt(&c)) {
		explain_rule(&c, r);
		return MU_OK;
	}
	int rc = e->nowed ? mu__resv_settle(e) : MU_OK; /* victims under them */
	if (rc == MU_OK)
		rc = preempt_scoped(&c, need, ok);
	if (rc == MU_OK && *ok && e->nevl)
		rc = commit(&c, out);
	if (rc == MU_OK && !*ok)
		explain_rule(&c, r);
	if (rc == MU_OK && !*ok && r->fs_queue < 0 && c.retry_at != INT64_MAX &&
	    c.retry_at > now) { /* only time stood in the way */
		r->fs_rule = MU_RULE_MIN_RUNTIME;
		r->fs_queue = j->queue;
		r->fs_res = MU_RES_GPU;
		r->fs_used = e->cfg.min_runtime;
		r->fs_req = c.retry_at - now;
	}
	j->retry_at = c.retry_at;
	free(c.v);
	return rc;
}

int mu__preempt_try(mu_engine_t *e, int32_t jid, mu_time_t now, mu_reason_t *r,
		    mu_decisions_t *out, bool *ok)
{
	return preempt_run(e, jid, now, false, r, out, ok);
}

int mu__preempt_limit_try(mu_engine_t *e, int32_t jid, mu_time_t now, mu_reason_t *r,
			  mu_decisions_t *out, bool *ok)
{
	if (!e->cfg.preemption) {
		*ok = false;
		return MU_OK;
	}
	return preempt_run(e, jid, now, true, r, out, ok);
}

/* --- Consolidation ---------------------------------------------------------- */

/* A move made recently, for the disruption budget. */
struct mu__move {
	mu_time_t t;
	int32_t pods;
	int64_t gpus;       /* milli-GPUs moved */
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
 * move_ratio times the GPUs gained, and the pods, GPUs and GPU-hours of
 * work moved in the last hour.  *gpuh gets this plan's GPU-hours. */
static bool move_budget(pctx_t *c, double *gpuh, int64_t *gpus_moved)
{
	mu_engine_t *e = c->e;
	const mu__job_t *j = &e->jobs[c->jid];
	int64_t moved = 0, gained = 0;
	*gpuh = 0;
	for (int32_t i = 0; i < e->nevl; i++) {
		const mu__job_t *v = &e->jobs[e->evl[i].job];
		int64_t g = v->podsets[mu__pod_podset(v, e->evl[i].pod)].acct->v[MU_RES_GPU];
		moved += g;
		*gpuh += (double)g / 1000.0 * (double)(c->now - v->start) / 3.6e6;
	}
	for (int32_t t = 0; t < e->ntxn; t++)
		gained += j->podsets[mu__pod_podset(j, e->txn[t])].acct->v[MU_RES_GPU];
	*gpus_moved = moved;
	if ((double)moved > e->cfg.move_ratio * (double)gained)
		return false;
	int32_t k = 0, pods = 0;
	int64_t gpus = 0;
	double hours = 0;
	for (int32_t i = 0; i < e->nmoves; i++) /* keep the last hour */
		if (c->now - e->moves[i].t < 3600 * 1000)
			e->moves[k++] = e->moves[i];
	e->nmoves = k;
	for (int32_t i = 0; i < e->nmoves; i++) {
		pods += e->moves[i].pods;
		gpus += e->moves[i].gpus;
		hours += e->moves[i].gpu_hours;
	}
	if (e->cfg.move_gpus_per_hour > 0 && gpus + moved > (int64_t)e->cfg.move_gpus_per_hour * 1000)
		return false;
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
static int move_commit(pctx_t *c, double gpuh, int64_t gpus, mu_decisions_t *out)
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
			mu__vsum_touch_job(e, v);
			mu__ends_restart(e, e->mvl[2 * i]);
			mu__order_touch(e, e->mvl[2 * i]);
			v->moves++;
		}
	}
	int rc = mu__grow((void **)&e->moves, &e->moves_cap, e->nmoves + 1, sizeof *e->moves);
	if (rc)
		return rc;
	e->moves[e->nmoves++] = (struct mu__move){c->now, e->nevl, gpus, gpuh};
	e->nevl = e->nmvl = 0;
	return MU_OK;
}

#define NOMOVE_SLOTS MU__NOMOVE_SLOTS

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
	for (int k = 0; cls->nomove && k < NOMOVE_SLOTS; k++)
		if (nomove_covers(e, &cls->nomove[k], req, pods, now))
			return true;
	return false;
}

/* Remembers a failed consolidation: a frontier of failed shapes, none
 * covering another.  Entries the new one covers (as many pods or more,
 * each as large or larger, valid no longer) are dropped; then it takes a
 * free slot, else the oldest.  O(slots x resources). */
static void nomove_note(const mu_engine_t *e, mu__sclass_t *cls, const mu_res_t *req,
			int32_t pods, mu_time_t until)
{
	int slot = -1;
	if (!cls->nomove && !(cls->nomove = calloc(NOMOVE_SLOTS, sizeof *cls->nomove)))
		return; /* out of memory: not remembered, tried again */
	for (int k = 0; k < NOMOVE_SLOTS; k++) {
		struct mu__nomove *m = &cls->nomove[k];
		if (m->gen != e->release_gen || m->pods < pods || m->until > until)
			continue;
		bool covered = true;
		for (int r = 0; r < MU_RES_MAX && covered; r++)
			covered = m->req.v[r] >= req->v[r];
		if (covered)
			m->gen = e->release_gen - 1; /* dropped: the new one covers it */
	}
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
	pctx_t c = {.e = e, .jid = jid, .now = now, .retry_at = INT64_MAX, .moving = true,
		    .rq = -1, .need_pods = j->npods};
	*ok = false;
	(void)r;
	if (j->topo >= 0)
		return MU_OK; /* moves do not know domains yet */
	mu__sclass_t *cls = &e->classes[j->podsets[0].sclass];
	int32_t unbound = j->npods - j->nbound;
	if (j->npodsets == 1 && nomove_known(e, cls, j->podsets[0].req, unbound, now))
		return MU_OK;
	if (e->move_nodes_left <= 0)
		return MU_OK; /* this cycle's share is spent: next cycle */
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
					c.need.v[res] += ps->acct->v[res];
	}
	c.gpu_dominant = c.need.v[MU_RES_GPU] > 0;
	c.dom = mu__dom_slot(e, &c.need);
	int32_t need = j->min_member - j->nbound;
	if (need < 1)
		need = 1;
	e->ntxn = e->nevl = e->nmvl = 0;
	int32_t placed = place_with_victims(&c, NULL);
	int rc = placed < 0 ? placed : MU_OK;
	bool all = false;
	double gpuh = 0;
	int64_t gmoved = 0;
	if (rc == MU_OK && placed >= need && mu__parts_ok(e, j, NULL) && e->nevl > 0)
		rc = replace_victims(&c, &all);
	if (rc == MU_OK && all && move_budget(&c, &gpuh, &gmoved)) {
		rc = move_commit(&c, gpuh, gmoved, out);
		*ok = rc == MU_OK;
	} else if (rc == MU_OK) {
		rc = move_rollback(&c);
		/* Until capacity is released, a refused victim ages in, or
		 * the hourly budget may have room again. */
		mu_time_t until = c.retry_at < now + 300 * 1000 ? c.retry_at : now + 300 * 1000;
		if (rc == MU_OK && j->npodsets == 1 && !c.out_of_budget)
			nomove_note(e, cls, j->podsets[0].req, unbound, until);
	}
	free(c.v);
	return rc;
}

/*
 * queue.c - the queue tree and job submission.
 *
 * Queues form a forest; jobs wait only in leaf queues, each of which keeps
 * its pending jobs sorted in service order (priority, then submit time,
 * then arrival).  Usage is kept in accounting units on every queue,
 * including its descendants, so that limits and shares are O(depth).
 *
 * Elastic jobs grow in turns, by fair share (the end of this file).  An
 * elastic job (minMember below its pod count) places only the pods it
 * needs when the cycle tries it: its minMember to start, one more pod to
 * grow.  After the cycle's loop every job that could still grow is handed
 * one more pod at a time, always the one whose queue has the lowest
 * dominant share, inside a queue the one with fewer pods, until no pod
 * fits: two elastic jobs share the room the way their queues' shares say,
 * instead of the first one taking everything (as KAI-Scheduler and Volcano
 * hand out an elastic job's extra pods).  Cost: O(grown pods x (elastic
 * jobs + class nodes)).
 *
 * A pod set that asks for GPU memory (KAI's gpu-memory) is resolved to a
 * share on the smallest GPUs that hold it when its job is built
 * (gpumem_resolve below).
 */
#include <stdio.h>

#include "engine/engine_int.h"

/* Sets depth of q's subtree; O(subtree). */
static void queue_set_depth(mu_engine_t *e, int32_t q, int depth)
{
	e->queues[q].depth = depth;
	for (int32_t i = 0; i < e->queues[q].nchildren; i++)
		queue_set_depth(e, e->queues[q].children[i], depth + 1);
}

static bool queue_is_ancestor(const mu_engine_t *e, int32_t anc, int32_t q)
{
	for (; q >= 0; q = e->queues[q].parent)
		if (q == anc)
			return true;
	return false;
}

static void queue_unlink(mu_engine_t *e, int32_t q)
{
	int32_t p = e->queues[q].parent;
	if (p < 0)
		return;
	mu__queue_t *pq = &e->queues[p];
	for (int32_t i = 0; i < pq->nchildren; i++) {
		if (pq->children[i] == q) {
			memmove(&pq->children[i], &pq->children[i + 1],
				(size_t)(pq->nchildren - i - 1) * sizeof *pq->children);
			pq->nchildren--;
			break;
		}
	}
}

static int queue_link(mu_engine_t *e, int32_t q, int32_t p)
{
	e->queues[q].parent = p;
	if (p < 0) {
		queue_set_depth(e, q, 0);
		return MU_OK;
	}
	mu__queue_t *pq = &e->queues[p];
	int rc = mu__grow((void **)&pq->children, &pq->children_cap,
			  pq->nchildren + 1, sizeof *pq->children);
	if (rc)
		return rc;
	pq->children[pq->nchildren++] = q;
	queue_set_depth(e, q, pq->depth + 1);
	return MU_OK;
}

static int queue_spec_check(const mu_queue_spec_t *s)
{
	if (!s || !s->name || !*s->name ||
	    s->npools > MU_POOL_NRES * (MU_RES_MAX - MU_RES_NAMED0) ||
	    (s->npools && !s->pools) || s->max_wait < 0 ||
	    s->escalation < MU_ESC_DEFAULT || s->escalation > MU_ESC_PREEMPT)
		return MU_EINVAL;
	for (size_t i = 0; i < s->npools; i++) {
		const mu_pool_quota_t *p = &s->pools[i];
		if (p->deserved < 0 || p->limit < 0)
			return MU_ERANGE;
		if (p->limit < p->deserved || p->res < 0 || p->res >= MU_POOL_NRES)
			return MU_EINVAL;
		for (size_t k = 0; k < i; k++)
			if (p->pool && s->pools[k].pool && p->res == s->pools[k].res &&
			    !strcmp(p->pool, s->pools[k].pool))
				return MU_EINVAL;
	}
	if (s->order != MU_QORDER_DEFAULT && s->order != MU_QORDER_FIFO)
		return MU_EINVAL;
	for (int r = 0; r < MU_RES_MAX; r++) {
		if (s->deserved.v[r] < 0 || s->limit.v[r] < 0 || s->weight[r] < 0)
			return MU_ERANGE;
		if (s->limit.v[r] < s->deserved.v[r])
			return MU_EINVAL;
	}
	return MU_OK;
}

/* Adds v (accounting units) in slot sl to every pod of job j bound on a
 * node of pool p: the job's, its queues' and the cluster's usage. */
static void pool_slot_bound(mu_engine_t *e, mu__job_t *j, int32_t p, int sl, int b)
{
	for (int32_t i = 0; i < j->npodsets; i++) {
		const mu__podset_t *ps = &j->podsets[i];
		for (int32_t k = 0; k < ps->replicas; k++) {
			int32_t nid = j->pods[ps->first + k].node;
			if (nid < 0 || e->nodes[nid].pool != p)
				continue;
			mu_res_t a = {.v = {0}};
			a.v[sl] = ps->acct->v[b];
			e->total_used.v[sl] += a.v[sl];
			mu__queue_add_used(e, j->queue, &a, +1, j->preemptible);
		}
	}
}

/* Pool p's slot of resource k (mu_pool_res_t), made when no queue gave a
 * quota of it there before: the pool's nodes add their allocatable there,
 * the pods bound on them their accounting, and the jobs that name p claim
 * it there; every queue gets deserved 0, no limit and its weight of the
 * resource.  MU_ELIMIT when the named slots are used up.
 * O(queues + nodes + pods + job flavors). */
static int pool_res_slot(mu_engine_t *e, int32_t p, int k, int32_t *out)
{
	mu__pool_t *pl = &e->pools[p];
	if ((*out = pl->rslot[k]) >= 0)
		return MU_OK;
	if (e->nres >= MU_RES_MAX)
		return MU_ELIMIT;
	const char *pre = k == MU_POOL_CPU ? "cpu" : k == MU_POOL_MEM ? "memory" : "pods";
	size_t len = strlen(pre) + strlen(pl->name) + 2;
	char *nm = malloc(len);
	if (!nm)
		return MU_ENOMEM;
	snprintf(nm, len, "%s@%s", pre, pl->name);
	int b = mu__pool_base(k), sl = e->nres++;
	e->res_names[sl] = nm;
	e->slot_pool[sl] = p;
	e->slot_base[sl] = b;
	*out = pl->rslot[k] = sl;
	for (int32_t q = 0; q < e->nqueues; q++) {
		e->queues[q].deserved.v[sl] = 0;
		e->queues[q].limit.v[sl] = MU_RES_UNLIMITED;
		e->queues[q].weight[sl] = e->queues[q].weight[b];
	}
	for (int32_t n = 0; n < e->nnodes; n++)
		if (e->nodes[n].pool == p && !e->nodes[n].removed)
			e->total_alloc.v[sl] += e->nodes[n].alloc.v[b];
	for (int32_t jid = 0; jid < e->njobs; jid++) {
		mu__job_t *j = &e->jobs[jid];
		if (j->nbound)
			pool_slot_bound(e, j, p, sl, b);
		for (int32_t f = 0; f < j->nflav; f++) {
			if (j->flav_pool[f] != p)
				continue;
			for (int32_t i = 0; i < j->npodsets; i++) {
				/* Copy-on-write: the flavor's vector is shared. */
				mu__flav_t *fl = &j->flav_ps[f * j->npodsets + i];
				mu_res_t a = *fl->acct;
				a.v[sl] = a.v[b];
				const mu_res_t *na = mu__rvec_get(e, &a);
				if (!na)
					return MU_ENOMEM;
				if (j->flav == f) {
					mu__rvec_put(e, j->podsets[i].acct);
					j->podsets[i].acct = mu__rvec_ref(na);
				}
				mu__rvec_put(e, fl->acct);
				fl->acct = na;
			}
		}
	}
	e->node_gen++;
	e->release_gen++;
	e->qgen++;
	return MU_OK;
}

int mu_engine_queue_upsert(mu_engine_t *e, const mu_queue_spec_t *s)
{
	int rc = queue_spec_check(s);
	if (rc)
		return rc;
	int32_t parent = -1;
	e->qgen++; /* quotas and the tree may move */
	if (s->parent && *s->parent) {
		parent = mu__strmap_get(&e->queue_names, s->parent);
		if (parent < 0)
			return MU_ENOENT;
		if (e->queues[parent].npending || e->queues[parent].nrunning)
			return MU_ESTATE; /* jobs live in leaves only */
	}
	int32_t q = mu__strmap_get(&e->queue_names, s->name);
	if (q < 0) {
		rc = mu__grow((void **)&e->queues, &e->queues_cap, e->nqueues + 1,
			      sizeof *e->queues);
		if (rc)
			return rc;
		const char *name = mu__strmap_put(&e->queue_names, s->name, e->nqueues);
		if (!name)
			return MU_ENOMEM;
		q = e->nqueues++;
		memset(&e->queues[q], 0, sizeof e->queues[q]);
		e->queues[q].name = name;
		e->queues[q].parent = -1;
		e->queues[q].last_reclaimed = MU_TIME_NONE;
		for (int r = 0; r < MU_RES_MAX; r++)
			e->queues[q].decay_factor[r] = 1.0;
		if ((rc = queue_link(e, q, parent)) != MU_OK)
			return rc;
	} else if (e->queues[q].parent != parent) {
		mu__queue_t *old = &e->queues[q];
		if (parent >= 0 && queue_is_ancestor(e, q, parent))
			return MU_EINVAL; /* would make a cycle */
		for (int r = 0; r < MU_RES_MAX; r++)
			if (old->used.v[r])
				return MU_ESTATE;
		queue_unlink(e, q);
		if ((rc = queue_link(e, q, parent)) != MU_OK)
			return rc;
	}
	mu__queue_t *qq = &e->queues[q];
	qq->priority = s->priority;
	if (qq->order != s->order) {
		qq->order = s->order;
		qq->mvp_valid = false;
		for (int32_t i = 0; i < qq->nrunning; i++)
			e->jobs[qq->running[i]].level_until = 0; /* levels change */
		e->order_all = true; /* and the pending jobs' too */
		e->release_gen++; /* its jobs' levels change with it */
	}
	/* Per-pool quotas: looked up before anything changes. */
	int32_t slots[MU_POOL_NRES * MU_RES_MAX];
	for (size_t i = 0; i < s->npools; i++) {
		int32_t p = -1;
		for (int32_t k = 0; s->pools[i].pool && k < e->npools; k++)
			if (!strcmp(e->pools[k].name, s->pools[i].pool))
				p = k;
		if (p < 0)
			return MU_ENOENT;
	}
	for (size_t i = 0; i < s->npools; i++) {
		int32_t p = -1;
		for (int32_t k = 0; k < e->npools; k++)
			if (!strcmp(e->pools[k].name, s->pools[i].pool))
				p = k;
		if ((rc = pool_res_slot(e, p, (int)s->pools[i].res, &slots[i])) != MU_OK)
			return rc;
	}
	qq = &e->queues[q];
	qq->deserved = s->deserved;
	qq->limit = s->limit;
	memcpy(qq->weight, s->weight, sizeof qq->weight);
	for (int32_t k = 0; k < e->npools; k++)
		for (int r = 0; r < MU_POOL_NRES; r++) {
			int sl = e->pools[k].rslot[r];
			if (sl < 0)
				continue;
			qq->deserved.v[sl] = 0;
			qq->limit.v[sl] = MU_RES_UNLIMITED;
			qq->weight[sl] = s->weight[mu__pool_base(r)];
		}
	for (size_t i = 0; i < s->npools; i++) {
		const mu_pool_quota_t *pq = &s->pools[i];
		double w = s->weight[mu__pool_base((int)pq->res)];
		qq->deserved.v[slots[i]] = pq->deserved;
		qq->limit.v[slots[i]] = pq->limit;
		qq->weight[slots[i]] = pq->weight >= 0 ? pq->weight : w;
	}
	qq->max_wait = s->max_wait > 0 ? s->max_wait : 0;
	qq->esc = s->escalation ? s->escalation : MU_ESC_BOOST;
	qq->borrow_try_next = s->borrow_try_next;
	qq->preempt_try_next = s->preempt_try_next;
	e->release_gen++; /* a limit may have grown */
	return MU_OK;
}

void mu__queue_add_used(mu_engine_t *e, int32_t q, const mu_res_t *acct, int sign,
			bool preemptible)
{
	e->qgen++;
	for (; q >= 0; q = e->queues[q].parent) {
		mu__queue_t *qq = &e->queues[q];
		qq->share_at = 0; /* its cached share is stale */
		for (int r = 0; r < MU_RES_MAX; r++) {
			qq->used.v[r] += sign * acct->v[r];
			if (!preemptible)
				qq->used_np.v[r] += sign * acct->v[r];
		}
	}
}

/* Fills why with a queue's refusal (a limit or the deserved quota of
 * non-preemptible jobs) of resource r and returns the queue.  O(1). */
static int32_t why_limit(mu_reason_t *why, mu_why_t kind, int32_t q, int r,
			 int64_t used, int64_t max, int64_t req)
{
	why->why = kind;
	why->limit_queue = q;
	why->limit_res = r;
	why->limit_used = used;
	why->limit_max = max;
	why->limit_req = req;
	return q;
}

int32_t mu__queue_limit_check(const mu_engine_t *e, int32_t q,
			      const mu_res_t *acct, mu_reason_t *why)
{
	for (; q >= 0; q = e->queues[q].parent) {
		const mu__queue_t *qq = &e->queues[q];
		for (int r = 0; r < MU_RES_MAX; r++) {
			if (qq->limit.v[r] == MU_RES_UNLIMITED || !acct->v[r])
				continue;
			if (qq->used.v[r] + acct->v[r] > qq->limit.v[r])
				return why_limit(why, MU_WHY_QUEUE_LIMIT, q, r, qq->used.v[r],
						 qq->limit.v[r], acct->v[r]);
		}
	}
	return -1;
}

int32_t mu__queue_quota_check(const mu_engine_t *e, int32_t q,
			      const mu_res_t *acct, mu_reason_t *why)
{
	int dom = mu__dom_slot(e, acct);
	for (; q >= 0; q = e->queues[q].parent) {
		const mu__queue_t *qq = &e->queues[q];
		int r = mu_quota_np_over(&qq->used_np, acct, &qq->deserved, dom);
		if (r >= 0)
			return why_limit(why, MU_WHY_OVER_QUOTA, q, r, qq->used_np.v[r],
					 qq->deserved.v[r], acct->v[r]);
	}
	return -1;
}

int mu_quota_np_over(const mu_res_t *used_np, const mu_res_t *claim,
		     const mu_res_t *deserved, int dom)
{
	for (int r = 0; r < MU_RES_MAX; r++) {
		if (!claim->v[r] || !mu__dom_is(dom, r))
			continue;
		if (used_np->v[r] + claim->v[r] > deserved->v[r])
			return r;
	}
	return -1;
}

int mu_quota_dominant(const mu_res_t *claim)
{
	if (claim->v[MU_RES_GPU] > 0)
		return 1 << MU_RES_GPU;
	return 1 << MU_RES_CPU | 1 << MU_RES_MEM;
}

double mu__queue_share(const mu_engine_t *e, const mu__queue_t *q)
{
	return mu_fairshare_ratio(&q->used, &q->demand, &q->fair, &e->total_alloc, e->nres);
}

int mu__queue_pending_insert(mu_engine_t *e, int32_t job)
{
	mu__job_t *j = &e->jobs[job];
	if (j->listed)
		return MU_OK;
	mu__queue_t *q = &e->queues[j->queue];
	int rc = mu__grow((void **)&q->pending, &q->pending_cap, q->npending + 1,
			  sizeof *q->pending);
	if (rc)
		return rc;
	int32_t lo = 0, hi = q->npending; /* first position served after job */
	while (lo < hi) {
		int32_t mid = (lo + hi) / 2;
		if (mu__job_before(e, q->pending[mid], job))
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&q->pending[lo + 1], &q->pending[lo],
		(size_t)(q->npending - lo) * sizeof *q->pending);
	q->pending[lo] = job;
	q->npending++;
	j->listed = true;
	return MU_OK;
}

void mu__queue_pending_remove(mu_engine_t *e, int32_t job)
{
	mu__job_t *j = &e->jobs[job];
	if (!j->listed)
		return;
	mu__queue_t *q = &e->queues[j->queue];
	for (int32_t i = 0; i < q->npending; i++) {
		if (q->pending[i] == job) {
			memmove(&q->pending[i], &q->pending[i + 1],
				(size_t)(q->npending - i - 1) * sizeof *q->pending);
			q->npending--;
			break;
		}
	}
	j->listed = false;
}

/* Checks a job spec's shape and quantities. */
static int job_spec_check(const mu_job_spec_t *s)
{
	if (!s || !s->name || !*s->name || !s->queue || s->npodsets == 0)
		return MU_EINVAL;
	int64_t pods = 0;
	for (size_t i = 0; i < s->npodsets; i++) {
		const mu_podset_spec_t *ps = &s->podsets[i];
		if (ps->replicas < 1 || ps->min_member < 0 || ps->min_member > ps->replicas)
			return MU_ERANGE;
		pods += ps->replicas;
		for (int r = 0; r < MU_RES_MAX; r++)
			if (ps->req.v[r] < 0)
				return MU_ERANGE;
		if (ps->req.v[MU_RES_GPU] > MU_MAX_GPUS ||
		    ps->req.v[MU_RES_GPU_MILLI] > 999 ||
		    (ps->req.v[MU_RES_GPU_MILLI] && ps->req.v[MU_RES_GPU]))
			return MU_ERANGE;
		if (ps->pin_cpus && (ps->req.v[MU_RES_CPU] <= 0 ||
				     ps->req.v[MU_RES_CPU] % 1000 ||
				     ps->req.v[MU_RES_CPU] / 1000 > MU_MAX_CPUS))
			return MU_EINVAL; /* exclusive CPUs are whole CPUs */
		if (ps->align < MU_ALIGN_NONE || ps->align > MU_ALIGN_LINK)
			return MU_EINVAL;
		if (ps->gpu_memory < 0 || (ps->gpu_memory > 0 &&
		    (ps->req.v[MU_RES_GPU] || ps->req.v[MU_RES_GPU_MILLI])))
			return MU_EINVAL; /* GPU memory or GPUs, not both */
	}
	if (pods > 10000000 || s->min_member < 0 || s->min_member > pods)
		return MU_ERANGE;
	if (s->npools > MU_MAX_JOB_POOLS || (s->npools && !s->pools) || s->max_wait < 0 ||
	    s->escalation < MU_ESC_DEFAULT || s->escalation > MU_ESC_PREEMPT)
		return MU_EINVAL;
	for (size_t i = 0; i < s->npools; i++) {
		if (!s->pools[i])
			return MU_EINVAL;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(s->pools[i], s->pools[k]))
				return MU_EINVAL;
	}
	return MU_OK;
}

/* --- Flavor fallback: a job's pod sets in each of its pools ------------------ */

/* Adds pool pl's matchExpressions to every required node-affinity term of
 * ps (one term of them alone when it has none): a node must be in the pool
 * and match one of its terms.  The arrays (*terms, *reqs) are the caller's
 * to free; ps points at them.  O(terms x requirements). */
static int flav_terms(const mu__pool_t *pl, mu_podset_spec_t *ps,
		      mu_sel_term_t **terms, mu_sel_req_t **reqs)
{
	if (!pl->nexprs)
		return MU_OK;
	size_t nt = ps->naffinity ? ps->naffinity : 1, nr = 0;
	for (size_t t = 0; t < ps->naffinity; t++)
		nr += ps->affinity[t].nreqs;
	nr += nt * (size_t)pl->nexprs;
	*terms = calloc(nt, sizeof **terms);
	*reqs = calloc(nr, sizeof **reqs);
	if (!*terms || !*reqs)
		return MU_ENOMEM;
	size_t at = 0;
	for (size_t t = 0; t < nt; t++) {
		mu_sel_term_t *c = &(*terms)[t];
		c->reqs = *reqs + at;
		if (ps->naffinity) {
			memcpy(c->reqs, ps->affinity[t].reqs,
			       ps->affinity[t].nreqs * sizeof *c->reqs);
			c->nreqs = ps->affinity[t].nreqs;
		}
		memcpy(c->reqs + c->nreqs, pl->exprs, (size_t)pl->nexprs * sizeof *c->reqs);
		c->nreqs += (size_t)pl->nexprs;
		at += c->nreqs;
	}
	ps->affinity = *terms;
	ps->naffinity = nt;
	return MU_OK;
}

int mu__flav_build(mu_engine_t *e, mu__job_t *j, const mu_job_spec_t *s)
{
	j->flav = -1;
	if (!s->npools)
		return MU_OK;
	int32_t nf = (int32_t)s->npools, np = j->npodsets;
	j->flav_pool = calloc((size_t)nf, sizeof *j->flav_pool);
	j->flav_ps = calloc((size_t)(nf * np), sizeof *j->flav_ps);
	j->flav_last = calloc((size_t)nf, sizeof *j->flav_last);
	if (!j->flav_pool || !j->flav_ps || !j->flav_last)
		return MU_ENOMEM;
	j->nflav = nf;
	for (int32_t f = 0; f < nf; f++) {
		int32_t p = -1;
		for (int32_t k = 0; k < e->npools; k++)
			if (!strcmp(e->pools[k].name, s->pools[f]))
				p = k;
		if (p < 0)
			return MU_ENOENT;
		const mu__pool_t *pl = &e->pools[p];
		j->flav_pool[f] = p;
		for (int32_t i = 0; i < np; i++) {
			/* The pod set's constraints plus the pool's selector. */
			mu_podset_spec_t ps = s->podsets[i];
			size_t n = ps.nnode_selector + (size_t)pl->nsel;
			mu_label_t *sel = malloc(n * sizeof *sel);
			if (!sel)
				return MU_ENOMEM;
			if (ps.nnode_selector)
				memcpy(sel, ps.node_selector, ps.nnode_selector * sizeof *sel);
			for (int32_t k = 0; k < pl->nsel; k++)
				sel[ps.nnode_selector + (size_t)k] =
					(mu_label_t){pl->keys[k], pl->vals[k]};
			ps.node_selector = sel;
			ps.nnode_selector = n;
			mu_sel_term_t *terms = NULL;
			mu_sel_req_t *reqs = NULL;
			int rc = flav_terms(pl, &ps, &terms, &reqs);
			mu__flav_t *fl = &j->flav_ps[f * np + i];
			if (rc == MU_OK)
				rc = mu__sclass_get(e, &ps, &fl->sclass);
			free(sel);
			free(terms);
			free(reqs);
			if (rc)
				return rc;
			mu_res_t a = *j->podsets[i].acct;
			for (int k = 0; k < MU_POOL_NRES; k++)
				if (pl->rslot[k] >= 0)
					a.v[pl->rslot[k]] = a.v[mu__pool_base(k)];
			if (!(fl->acct = mu__rvec_get(e, &a)))
				return MU_ENOMEM;
		}
	}
	mu__flav_set(e, j, 0);
	return MU_OK;
}

void mu__flav_free(mu_engine_t *e, mu__job_t *j)
{
	for (int32_t k = 0; j->flav_ps && k < j->nflav * j->npodsets; k++)
		mu__rvec_put(e, j->flav_ps[k].acct);
	free(j->flav_pool);
	free(j->flav_ps);
	free(j->flav_last);
	j->flav_pool = NULL;
	j->flav_ps = NULL;
	j->flav_last = NULL;
	j->nflav = 0;
	j->flav = -1;
}

void mu__flav_set(mu_engine_t *e, mu__job_t *j, int32_t f)
{
	if (f < 0 || f >= j->nflav || j->flav == f)
		return;
	for (int32_t i = 0; i < j->npodsets; i++) {
		j->podsets[i].sclass = j->flav_ps[f * j->npodsets + i].sclass;
		mu__rvec_put(e, j->podsets[i].acct);
		j->podsets[i].acct = mu__rvec_ref(j->flav_ps[f * j->npodsets + i].acct);
	}
	j->flav = f;
}

bool mu__flav_within(const mu_engine_t *e, const mu__job_t *j)
{
	if (j->flav < 0)
		return false;
	mu_res_t need = {.v = {0}};
	for (int32_t i = 0; i < j->npodsets; i++)
		for (int r = 0; r < MU_RES_MAX; r++)
			need.v[r] += j->podsets[i].acct->v[r] * j->podsets[i].replicas;
	int dom = mu__dom_slot(e, &need);
	for (int sl = 0; sl < MU_RES_MAX; sl++) {
		if (!mu__dom_is(dom, sl))
			continue;
		int64_t n = need.v[sl];
		if (j->min_member < j->npods && j->npods > 0) /* elastic: its minimum */
			n = n * j->min_member / j->npods;
		for (int32_t q = j->queue; q >= 0; q = e->queues[q].parent)
			if (e->queues[q].used.v[sl] + n > e->queues[q].deserved.v[sl])
				return false;
	}
	return true;
}

/* --- GPU memory requests ----------------------------------------------------
 *
 * A pod set that asks for an amount of one GPU's memory (KAI-Scheduler's
 * `gpu-memory` annotation, in MiB) instead of a share.  A node says how much
 * memory each of its GPUs has with the label nvidia.com/gpu.memory (MiB, as
 * NVIDIA's GPU Feature Discovery writes it).  KAI-Scheduler turns a memory
 * request into a share per node: memory over the node's GPU memory.  The
 * engine keeps one request per pod set, so it resolves the request once,
 * when the job is built: among the live GPU nodes whose GPUs hold the
 * amount, it takes the smallest GPU memory S, pins the pod set to nodes
 * labelled with exactly S (a node selector), and asks for
 * ceil(memory x 1000 / S) milli-GPU there (a whole GPU when the amount is
 * all of it).  On those nodes the share is the one KAI computes; nodes with
 * bigger GPUs are not used for the pod set (docs/policy.md, "GPU memory
 * requests").  When no node's GPUs hold the amount, the pod set is pinned
 * to a label value no node has, so the job waits and explain says that no
 * node matched its selector. */

#define GPUMEM_LABEL "nvidia.com/gpu.memory"
#define GPUMEM_NONE "none-holds-the-request"

/* The smallest GPU memory (MiB) among the live GPU nodes whose GPUs hold
 * mib, 0 when none does; *label its label value (GPUMEM_NONE then).
 * O(label values): the engine keeps them (gpumodels.c). */
static int64_t gpumem_best(const mu_engine_t *e, int64_t mib, const char **label)
{
	*label = GPUMEM_NONE;
	return mu__gpu_mem_best(e, mib, label);
}

/* req asks what mib MiB of a GPU of `best` MiB is: ceil(mib x 1000 /
 * best) milli-GPU, a whole GPU when that is all of it.  O(1). */
static void gpumem_share(int64_t mib, int64_t best, mu_res_t *req)
{
	int64_t milli = (mib * 1000 + best - 1) / best;
	if (milli >= 1000)
		req->v[MU_RES_GPU] = 1;
	else
		req->v[MU_RES_GPU_MILLI] = milli;
}

int mu_engine_gpu_memory_req(const mu_engine_t *e, int64_t mib, mu_res_t *req)
{
	if (!e || !req || mib <= 0 || req->v[MU_RES_GPU] || req->v[MU_RES_GPU_MILLI])
		return MU_EINVAL;
	const char *label;
	int64_t best = gpumem_best(e, mib, &label);
	if (!best)
		return MU_ENOENT;
	gpumem_share(mib, best, req);
	return MU_OK;
}

/* The pod set as the engine keeps it (see above).  The selector copy
 * *sel is the caller's to free once the class is made.  O(label values +
 * node selector) (gpumem_best: the engine keeps the values). */
static int gpumem_resolve(const mu_engine_t *e, const mu_podset_spec_t *ps,
		       mu_podset_spec_t *out, mu_label_t **sel)
{
	*out = *ps;
	*sel = NULL;
	if (ps->gpu_memory <= 0)
		return MU_OK;
	if (ps->req.v[MU_RES_GPU] || ps->req.v[MU_RES_GPU_MILLI])
		return MU_EINVAL; /* memory or a share, not both */
	const char *best_s;
	int64_t best = gpumem_best(e, ps->gpu_memory, &best_s);
	mu_label_t *l = malloc((ps->nnode_selector + 1) * sizeof *l);
	if (!l)
		return MU_ENOMEM;
	if (ps->nnode_selector)
		memcpy(l, ps->node_selector, ps->nnode_selector * sizeof *l);
	l[ps->nnode_selector] = (mu_label_t){GPUMEM_LABEL, best_s};
	out->node_selector = l;
	out->nnode_selector = ps->nnode_selector + 1;
	*sel = l;
	if (!best) {
		out->req.v[MU_RES_GPU_MILLI] = 1; /* never placed: no node matches */
		return MU_OK;
	}
	gpumem_share(ps->gpu_memory, best, &out->req);
	return MU_OK;
}

/* A job's resolved minimum (model.h, mu_job_spec_t.min_member): with
 * parts, never below the sum of their minimums; 0 means every pod, or
 * with parts every part's minimum and all the pods of the other sets.
 * O(pod sets). */
static int32_t job_min(const mu__job_t *j, const mu_job_spec_t *s)
{
	if (!j->parts)
		return s->min_member ? s->min_member : j->npods;
	int32_t own = 0, dflt = 0;
	for (int32_t i = 0; i < j->npodsets; i++) {
		own += j->podsets[i].min_member;
		dflt += j->podsets[i].min_member ? j->podsets[i].min_member :
			j->podsets[i].replicas;
	}
	if (!s->min_member)
		return dflt;
	return s->min_member > own ? s->min_member : own;
}

/* Builds the engine's copy of a job's pod sets. */
static int job_fill_podsets(mu_engine_t *e, mu__job_t *j, const mu_job_spec_t *s)
{
	/* The pod sets' names live in the array's own block, after it: one
	 * block a job fewer (a one-pod job's name is "main"). */
	size_t names = 0;
	for (size_t i = 0; i < s->npodsets; i++)
		names += strlen(s->podsets[i].name ? s->podsets[i].name : "main") + 1;
	j->podsets = calloc(1, s->npodsets * sizeof *j->podsets + names);
	if (!j->podsets)
		return MU_ENOMEM;
	char *name_at = (char *)(j->podsets + s->npodsets);
	int32_t first = 0;
	for (size_t i = 0; i < s->npodsets; i++) {
		mu_podset_spec_t mem;
		mu_label_t *sel;
		const mu_podset_spec_t *ps = &mem;
		mu__podset_t *p = &j->podsets[i];
		j->npodsets = (int32_t)i + 1;
		int rc = gpumem_resolve(e, &s->podsets[i], &mem, &sel);
		if (rc)
			return rc;
		const char *nm = s->podsets[i].name ? s->podsets[i].name : "main";
		p->name = strcpy(name_at, nm); /* in the array's block */
		name_at += strlen(nm) + 1;
		p->replicas = ps->replicas;
		p->min_member = ps->min_member;
		j->parts |= ps->min_member > 0;
		p->first = first;
		first += ps->replicas;
		mu_res_t req = ps->req;
		if (req.v[MU_RES_PODS] < 1)
			req.v[MU_RES_PODS] = 1;
		rc = mu__map_ext(e, ps->ext, ps->next, &req);
		if (rc == MU_OK) {
			/* Shared: one copy a distinct vector (rvec.c). */
			mu_res_t acct = mu_res_acct(&req);
			p->req = mu__rvec_get(e, &req);
			p->acct = mu__rvec_get(e, &acct);
			if (!p->req || !p->acct)
				rc = MU_ENOMEM;
		}
		if (rc == MU_OK)
			rc = mu__sclass_get(e, ps, &p->sclass);
		if (rc == MU_OK)
			rc = mu__aff_podset_build(e, j, p, ps, s);
		free(sel);
		if (rc)
			return rc;
		p->align = ps->align;
		p->want_nic = ps->want_nic;
		p->pin_cpus = ps->pin_cpus;
		p->aligned = ps->align != MU_ALIGN_NONE || ps->want_nic || ps->pin_cpus;
		j->acct_gpu_total += p->acct->v[MU_RES_GPU] * p->replicas;
	}
	j->npods = first;
	j->pods = malloc((size_t)first * sizeof *j->pods);
	if (!j->pods)
		return MU_ENOMEM;
	for (int32_t i = 0; i < first; i++)
		j->pods[i] = (mu__pod_t){.node = -1, .numa = -1, .nic = -1};
	return MU_OK;
}

int mu__job_build(mu_engine_t *e, int32_t jid, const mu_job_spec_t *s,
		  mu_time_t now)
{
	int rc = job_spec_check(s);
	if (rc)
		return rc;
	int32_t q = mu__strmap_get(&e->queue_names, s->queue);
	if (q < 0)
		return MU_ENOENT;
	if (e->queues[q].nchildren)
		return MU_EINVAL; /* jobs go to leaf queues */
	mu__job_t *j = &e->jobs[jid];
	memset(j, 0, sizeof *j);
	j->seq = e->job_seq; /* after every job so far (a what-if job too) */
	j->queue = q;
	j->priority = s->priority;
	j->type = s->type;
	j->preemptible = s->preemptible;
	j->never_preempt = s->never_preempt;
	j->no_move = s->no_move;
	j->disrupt_allowed = -1;
	j->eprio = mu__order_eprio(e, j);
	j->submit = s->submit != MU_TIME_NONE ? s->submit : now;
	j->start = MU_TIME_NONE;
	j->state = MU_JOB_PENDING;
	if ((rc = job_fill_podsets(e, j, s)) != MU_OK ||
	    (rc = mu__flav_build(e, j, s)) != MU_OK)
		goto fail;
	j->max_wait = s->max_wait > 0 ? s->max_wait : e->queues[q].max_wait;
	j->esc = s->escalation ? s->escalation : e->queues[q].esc;
	if (!j->max_wait && s->type == MU_JOB_INTERACTIVE)
		j->max_wait = e->cfg.interactive_max_wait;
	j->min_member = job_min(j, s);
	j->declared_est = s->runtime_estimate > 0 ? s->runtime_estimate : 0;
	j->declared_limit = s->runtime_limit > 0 ? s->runtime_limit : 0;
	j->expected_start = MU_TIME_NONE;
	j->backfill_for = -1;
	j->bucket = mu__shape_bucket(j);
	if ((rc = mu__topo_resolve(e, &s->topo, j)) != MU_OK)
		goto fail;
	return MU_OK;
fail:
	mu__job_unbuild(e, j);
	return rc;
}

mu_reason_t mu__job_last(const mu__job_t *j)
{
	mu_reason_t r;
	if (j->last)
		return *j->last;
	memset(&r, 0, sizeof r);
	return r;
}

int mu__job_last_set(mu__job_t *j, const mu_reason_t *r)
{
	if (!j->last && !(j->last = malloc(sizeof *j->last)))
		return MU_ENOMEM;
	*j->last = *r;
	return MU_OK;
}

void mu__job_last_clear(mu__job_t *j)
{
	free(j->last);
	j->last = NULL;
	free(j->expl);
	j->expl = NULL;
}

void mu__job_unbuild(mu_engine_t *e, mu__job_t *j)
{
	mu__flav_free(e, j); /* before npodsets goes */
	for (int32_t p = 0; p < j->npodsets; p++) {
		mu__aff_podset_free(&j->podsets[p]); /* names: in the array's block */
		mu__rvec_put(e, j->podsets[p].req);
		mu__rvec_put(e, j->podsets[p].acct);
	}
	free(j->podsets);
	free(j->pods);
	mu__job_last_clear(j);
	j->podsets = NULL;
	j->pods = NULL;
	j->npodsets = 0;
}

int mu_engine_job_submit(mu_engine_t *e, const mu_job_spec_t *s, mu_time_t now,
			 mu_id_t *id)
{
	int rc = mu__grow((void **)&e->jobs, &e->jobs_cap, e->njobs + 1, sizeof *e->jobs);
	if (rc)
		return rc;
	/* A forgotten id first: the records follow the live jobs. */
	bool reuse = e->nfree_jobs > 0;
	int32_t jid = reuse ? e->free_jobs[e->nfree_jobs - 1] : e->njobs;
	mu__job_t keep = e->jobs[jid]; /* a forgotten record, if the build fails */
	if ((rc = mu__job_build(e, jid, s, now)) != MU_OK) {
		if (reuse)
			e->jobs[jid] = keep;
		return rc;
	}
	mu__job_t *j = &e->jobs[jid];
	if (mu__strmap_get(&e->job_names, s->name) >= 0) {
		mu__job_unbuild(e, j);
		if (reuse)
			e->jobs[jid] = keep;
		return MU_EEXIST;
	}
	if (!(j->name = mu__strmap_put(&e->job_names, s->name, jid))) {
		mu__job_unbuild(e, j);
		if (reuse)
			e->jobs[jid] = keep;
		return MU_ENOMEM;
	}
	if (reuse)
		e->nfree_jobs--;
	else
		e->njobs++;
	e->job_seq++;
	if ((rc = mu__queue_pending_insert(e, jid)) != MU_OK)
		return rc;
	if (j->max_wait && (rc = mu__maxwait_note(e, jid)) != MU_OK)
		return rc;
	if (id)
		*id = jid;
	return MU_OK;
}

/* --- Elastic growth in turns ----------------------------------------------- */

int32_t mu__elastic_cap(const mu_engine_t *e, const mu__job_t *j, int32_t need)
{
	(void)e;
	if (j->min_member >= j->npods || j->npodsets != 1)
		return j->npods; /* gangs and multi-set jobs: all their pods */
	int32_t p = 0;
	for (int32_t left = need; p < j->npods && left > 0; p++)
		left -= j->pods[p].node < 0;
	return p;
}

int mu__elastic_note(mu_engine_t *e, int32_t jid)
{
	const mu__job_t *j = &e->jobs[jid];
	if (j->min_member >= j->npods || j->npodsets != 1 || j->topo >= 0 ||
	    j->nbound >= j->npods)
		return MU_OK;
	for (int32_t i = 0; i < e->ngrow; i++)
		if (e->grow[i] == jid)
			return MU_OK;
	int rc = mu__grow((void **)&e->grow, &e->grow_cap, e->ngrow + 1, sizeof *e->grow);
	if (rc == MU_OK)
		e->grow[e->ngrow++] = jid;
	return rc;
}

/* Whether job a grows before job b: its queue's lower dominant share; in
 * one queue, the job with fewer pods bound (turns), then the queue order. */
static bool grows_before(const mu_engine_t *e, int32_t a, int32_t b)
{
	const mu__job_t *x = &e->jobs[a], *y = &e->jobs[b];
	double sx = mu__queue_share(e, &e->queues[x->queue]);
	double sy = mu__queue_share(e, &e->queues[y->queue]);
	if (sx != sy)
		return sx < sy;
	if (x->queue == y->queue && x->nbound != y->nbound)
		return x->nbound < y->nbound;
	return mu__job_before(e, a, b);
}

/* Places one more pod of job jid where it fits, honouring its queue's
 * limits and the reservations; emits the bind.  *placed says whether it
 * did. */
static int grow_one(mu_engine_t *e, int32_t jid, mu_decisions_t *out, bool *placed)
{
	mu__job_t *j = &e->jobs[jid];
	*placed = false;
	int32_t p = 0;
	while (p < j->npods && j->pods[p].node >= 0)
		p++;
	if (p == j->npods || j->state != MU_JOB_RUNNING)
		return MU_OK;
	mu_reason_t r = {.podset = -1, .limit_queue = -1, .limit_res = -1, .fs_queue = -1,
			 .blocked_by = -1};
	if (mu__queue_limit_check(e, j->queue, j->podsets[0].acct, &r) >= 0)
		return MU_OK;
	e->ntxn = 0;
	e->placing = jid;
	int32_t n = mu__place_range(e, j, p, p + 1, NULL, &r);
	e->placing = -1;
	if (n < 0)
		return n;
	if (n == 0)
		return MU_OK;
	*placed = true;
	return mu__job_commit(e, jid, out);
}

int mu__elastic_grow(mu_engine_t *e, mu_decisions_t *out)
{
	int rc = MU_OK;
	while (rc == MU_OK && e->ngrow > 0) {
		int32_t best = 0;
		for (int32_t i = 1; i < e->ngrow; i++)
			if (grows_before(e, e->grow[i], e->grow[best]))
				best = i;
		bool placed = false;
		rc = grow_one(e, e->grow[best], out, &placed);
		if (rc == MU_OK && !placed) /* it fits no more: done with it */
			e->grow[best] = e->grow[--e->ngrow];
	}
	e->ngrow = 0;
	return rc;
}

/*
 * backfill.c - runtime estimates, reservations and expected start times.
 *
 * Estimates: a job's declared runtime, else its limit, else the moving
 * average of finished jobs of its queue and shape (by GPUs), else of its
 * queue, else the configured default; the source is reported.
 *
 * Reservations (EASY backfill generalised to the top N blocked jobs): for a
 * blocked job the engine replays the expected ends of running jobs on a
 * scratch copy of the feasible nodes' free capacity until the job would fit
 * (in one domain of its required topology level, if any).  That time is its
 * expected start, and the nodes that reach room first are reserved: each
 * gets the time and a slack, what may still be taken there without
 * delaying it.  A job behind may use a reserved node only if it ends before
 * the reservation (by its estimate), fits in the slack, or is preemptible,
 * in which case the reserved job may evict it when due.  Reservations are
 * recomputed every cycle, so they follow reality instead of drifting.
 */
#include "engine/engine_int.h"

#define MU__EMA 0.2

int32_t mu__shape_bucket(const mu__job_t *j)
{
	int64_t gpus = j->acct_gpu_total / 1000;
	int32_t b = 0;
	while (gpus > 0 && b < 15) {
		gpus >>= 1;
		b++;
	}
	return b;
}

mu_time_t mu__job_estimate(const mu_engine_t *e, const mu__job_t *j,
			   mu_estimate_src_t *src)
{
	mu_estimate_src_t s;
	mu_time_t est;
	if (j->declared_est > 0) {
		s = MU_EST_DECLARED;
		est = j->declared_est;
	} else if (j->declared_limit > 0) {
		s = MU_EST_LIMIT;
		est = j->declared_limit;
	} else {
		return mu__queue_estimate(e, j->queue, j->bucket, src);
	}
	if (src)
		*src = s;
	return est;
}

mu_time_t mu__queue_estimate(const mu_engine_t *e, int32_t qi, int32_t b,
			     mu_estimate_src_t *src)
{
	mu_estimate_src_t s;
	mu_time_t est;
	const mu__queue_t *q = &e->queues[qi];
	if (q->hist[b] > 0) {
		s = MU_EST_HISTORY;
		est = (mu_time_t)q->hist[b];
	} else if (q->hist_all > 0) {
		s = MU_EST_HISTORY;
		est = (mu_time_t)q->hist_all;
	} else {
		s = MU_EST_DEFAULT;
		est = e->cfg.default_runtime > 0 ? e->cfg.default_runtime : 3600 * 1000;
	}
	if (src)
		*src = s;
	return est;
}

void mu__backfill_forget(mu_engine_t *e, mu__job_t *j)
{
	if (j->backfill_for >= 0)
		e->jobs[j->backfill_for].nbackfilled--;
	j->backfill_for = -1;
}

void mu__history_add(mu_engine_t *e, const mu__job_t *j, mu_time_t ran)
{
	if (ran <= 0)
		return;
	mu__queue_t *q = &e->queues[j->queue];
	mu__ends_history(e, j->queue);
	if (e->cfg.order == MU_ORDER_SJF)
		q->order_moved = true; /* its estimates move: re-sort (order.c) */
	double *h = &q->hist[j->bucket];
	*h = *h > 0 ? *h + MU__EMA * ((double)ran - *h) : (double)ran;
	q->hist_all = q->hist_all > 0 ? q->hist_all + MU__EMA * ((double)ran - q->hist_all)
				      : (double)ran;
}

const char *mu_estimate_src_name(mu_estimate_src_t s)
{
	switch (s) {
	case MU_EST_DECLARED: return "declared";
	case MU_EST_LIMIT: return "limit";
	case MU_EST_HISTORY: return "history";
	case MU_EST_DEFAULT: return "default";
	}
	return "unknown";
}

/* Whether req fits in the vector v (request units). */
static bool res_le(const mu_res_t *req, const mu_res_t *v)
{
	for (int r = 0; r < MU_RES_MAX; r++)
		if (req->v[r] > v->v[r])
			return false;
	return true;
}

/* The way j may use a node reserved for someone else: 0 no, 1 it ends
 * before, 2 it fits the slack, 3 it is preemptible. */
static int resv_mode(const mu_engine_t *e, const mu__job_t *j, const mu__node_t *n,
		     const mu__podset_t *ps)
{
	if (e->now + mu__job_estimate(e, j, NULL) <= n->resv_at)
		return 1;
	if (res_le(ps->req, &n->slack))
		return 2;
	if (j->preemptible && (e->cfg.preemption || e->cfg.reclaim))
		return 3; /* the reserved job will evict it when due */
	return 0;
}

bool mu__resv_allows(const mu_engine_t *e, const mu__job_t *j, int32_t nid,
		     const mu__podset_t *ps)
{
	const mu__node_t *n = &e->nodes[nid];
	if (n->resv_stamp != e->cycle_stamp || !e->nresv || n->resv_job == j - e->jobs)
		return true;
	return resv_mode(e, j, n, ps) != 0;
}

void mu__resv_note_bind(mu_engine_t *e, mu__job_t *j, int32_t nid,
			const mu__podset_t *ps)
{
	mu__node_t *n = &e->nodes[nid];
	if (n->resv_stamp != e->cycle_stamp || !e->nresv || n->resv_job == j - e->jobs)
		return;
	int mode = resv_mode(e, j, n, ps);
	if (mode == 2) {
		for (int r = 0; r < MU_RES_MAX; r++)
			n->slack.v[r] -= ps->req->v[r];
	} else if (mode == 3 && j->backfill_for < 0) {
		j->backfill_for = n->resv_job;
		e->jobs[n->resv_job].nbackfilled++;
	}
}

/* --- The shadow computation ------------------------------------------------ */

/* The resources a request asks for, so that counting pods that fit looks
 * at those only (a request names a few of MU_RES_MAX). */
typedef struct rlist {
	int32_t n;
	int8_t r[MU_RES_MAX];
} rlist_t;

static void rlist_of(const mu_res_t *req, rlist_t *l)
{
	l->n = 0;
	for (int r = 0; r < MU_RES_MAX; r++)
		if (req->v[r] > 0)
			l->r[l->n++] = (int8_t)r;
}

typedef struct shadow {
	mu_engine_t *e;
	const mu__job_t *j;
	mu_res_t req;        /* per pod: the largest of its pod sets */
	rlist_t rl;          /* the resources req asks for */
	int32_t need;        /* pods to place */
	int32_t n;           /* candidate nodes */
	int32_t *nid;        /* slot -> node id */
	int32_t *slot_of;    /* node id -> slot, or -1 */
	mu_res_t *vfree;     /* per slot: free capacity at the replayed time */
	int32_t *cap;        /* per slot: pods of the job that fit */
	mu_time_t *ready;    /* per slot: when cap last grew */
	int32_t *dom;        /* per slot: domain at the required level, -1 */
	int32_t *dom_cap;    /* per domain of that level: pods that fit */
	int32_t *heap;       /* shadow_commit()'s candidates, or NULL */
	int32_t ndoms;
	int64_t total;       /* pods that fit, over all slots */
	bool dom_full;       /* some domain holds the whole job */
} shadow_t;

static void shadow_release(shadow_t *s)
{
	free(s->nid);
	free(s->slot_of);
	free(s->vfree);
	free(s->cap);
	free(s->ready);
	free(s->dom);
	free(s->dom_cap);
	free(s->heap);
}

/* Pods of the job's shape (req, asking for the resources l) that fit in
 * v: the least quotient over those.  O(resources asked). */
static int32_t pods_in(const rlist_t *l, const mu_res_t *req, const mu_res_t *v)
{
	int64_t k = INT32_MAX;
	for (int32_t i = 0; i < l->n; i++) {
		int r = l->r[i];
		int64_t q = v->v[r] > 0 ? v->v[r] / req->v[r] : 0;
		if (q < k)
			k = q;
	}
	return (int32_t)(k < 0 ? 0 : k);
}

/* Candidate nodes: the job's first pod set's class (with the largest
 * request of all its sets), minus what earlier reservations hold. */
static int shadow_nodes(shadow_t *s, const mu__sclass_t *c)
{
	mu_engine_t *e = s->e;
	s->n = c->nnodes;
	size_t n = (size_t)(s->n ? s->n : 1);
	s->nid = malloc(n * sizeof *s->nid);
	s->slot_of = malloc((size_t)(e->nnodes ? e->nnodes : 1) * sizeof *s->slot_of);
	s->vfree = malloc(n * sizeof *s->vfree);
	s->cap = malloc(n * sizeof *s->cap);
	s->ready = malloc(n * sizeof *s->ready);
	s->dom = malloc(n * sizeof *s->dom);
	if (!s->nid || !s->slot_of || !s->vfree || !s->cap || !s->ready || !s->dom)
		return MU_ENOMEM;
	for (int32_t i = 0; i < e->nnodes; i++)
		s->slot_of[i] = -1;
	for (int32_t i = 0; i < s->n; i++) {
		int32_t nid = c->nodes[i];
		const mu__node_t *node = &e->nodes[nid];
		s->nid[i] = nid;
		s->slot_of[nid] = i;
		s->vfree[i] = node->free;
		if (node->resv_stamp == e->cycle_stamp)
			for (int r = 0; r < MU_RES_MAX; r++)
				s->vfree[i].v[r] -= node->resv_used.v[r];
		s->ready[i] = e->now;
		s->dom[i] = -1;
	}
	return MU_OK;
}

/* Whether the job fits now in the replayed capacity; *domain gets the
 * domain that holds it (-1 when no level is required). */
static bool shadow_fits(const shadow_t *s, int32_t *domain)
{
	*domain = -1;
	if (s->ndoms == 0)
		return s->total >= s->need;
	if (!s->dom_full)
		return false;
	for (int32_t d = 0; d < s->ndoms; d++)
		if (s->dom_cap[d] >= s->need) {
			*domain = d;
			return true;
		}
	return false;
}

/* Sets up per-domain counting at the job's required level. */
static int shadow_domains(shadow_t *s)
{
	mu_engine_t *e = s->e;
	const mu__job_t *j = s->j;
	if (j->topo < 0 || j->req_level < 0)
		return MU_OK;
	mu__topo_t *t = &e->topos[j->topo];
	int rc = mu__topo_refresh(e, t);
	if (rc)
		return rc;
	s->ndoms = t->ndoms;
	if (!(s->dom_cap = calloc((size_t)(t->ndoms ? t->ndoms : 1), sizeof *s->dom_cap)))
		return MU_ENOMEM;
	for (int32_t i = 0; i < s->n; i++)
		if (s->nid[i] < t->node_dom_n)
			s->dom[i] = t->node_dom[(size_t)s->nid[i] * MU_MAX_LEVELS +
						(size_t)j->req_level];
	return MU_OK;
}

/* Sets slot i's pod count to cap at time t, keeping the totals: O(1). */
static void shadow_setcap(shadow_t *s, int32_t i, int32_t cap, mu_time_t t)
{
	if (cap > s->cap[i])
		s->ready[i] = t;
	s->total += cap - s->cap[i];
	if (s->dom[i] >= 0) {
		s->dom_cap[s->dom[i]] += cap - s->cap[i];
		if (s->dom_cap[s->dom[i]] >= s->need)
			s->dom_full = true;
	}
	s->cap[i] = cap;
}

/* Whether slot a reached room before slot b: earlier ready, then the
 * lower slot (the order in which the argmin scan took them). */
static bool slot_before(const shadow_t *s, int32_t a, int32_t b)
{
	return s->ready[a] < s->ready[b] || (s->ready[a] == s->ready[b] && a < b);
}

/* Moves h[i] down the min-heap h[0..n) ordered by slot_before(): O(log n). */
static void slot_sift(const shadow_t *s, int32_t *h, int32_t n, int32_t i)
{
	for (;;) {
		int32_t m = i, l = 2 * i + 1, r = l + 1;
		if (l < n && slot_before(s, h[l], h[m]))
			m = l;
		if (r < n && slot_before(s, h[r], h[m]))
			m = r;
		if (m == i)
			return;
		int32_t t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Reserves k pods of the job on slot `best` (reached at `at`): the node's
 * reservation, slack and held resources.  O(resources). */
static void shadow_take(shadow_t *s, int32_t jid, mu_time_t at, int32_t best, int32_t k)
{
	mu_engine_t *e = s->e;
	mu__node_t *n = &e->nodes[s->nid[best]];
	mu_res_t slack = s->vfree[best];
	for (int r = 0; r < MU_RES_MAX; r++)
		slack.v[r] -= k * s->req.v[r];
	slack.v[MU_RES_GPU_MILLI] -= k * s->req.v[MU_RES_GPU] * 1000;
	if (n->resv_stamp != e->cycle_stamp) {
		n->resv_stamp = e->cycle_stamp;
		memset(&n->resv_used, 0, sizeof n->resv_used);
		n->resv_at = at;
		n->resv_job = jid;
		n->slack = slack;
	} else {
		for (int r = 0; r < MU_RES_MAX; r++)
			if (slack.v[r] < n->slack.v[r])
				n->slack.v[r] = slack.v[r];
		if (at < n->resv_at) {
			n->resv_at = at;
			n->resv_job = jid;
		}
	}
	for (int r = 0; r < MU_RES_MAX; r++)
		n->resv_used.v[r] += k * s->req.v[r];
	n->resv_used.v[MU_RES_GPU_MILLI] += k * s->req.v[MU_RES_GPU] * 1000;
}

/* Reserves the slots that reached room first, in `domain` (or anywhere),
 * in the order (ready, slot), until the job's pods are placed.  One scan
 * finds the first slot; when it alone does not hold the job, the
 * candidates go into a heap and are taken from it: O(slots + taken x
 * log candidates) slot visits, counted in e->resv_slots (the old repeated
 * scan was O(taken x slots): 512 scans of 20,000 slots for a 4,096-pod
 * gang).  The heap's scratch is the caller's to free (s->heap). */
static int shadow_commit(shadow_t *s, int32_t jid, mu_time_t at, int32_t domain)
{
	mu_engine_t *e = s->e;
	int32_t left = s->need, best = -1, m = 0;
	for (int32_t i = 0; i < s->n; i++)
		if (s->cap[i] > 0 && (domain < 0 || s->dom[i] == domain)) {
			m++;
			if (best < 0 || s->ready[i] < s->ready[best])
				best = i;
		}
	e->resv_slots += (uint64_t)s->n;
	if (best < 0 || left <= 0)
		return MU_OK;
	if (s->cap[best] >= left || m == 1) {
		shadow_take(s, jid, at, best, s->cap[best] < left ? s->cap[best] : left);
		return MU_OK;
	}
	if (!(s->heap = malloc((size_t)m * sizeof *s->heap)))
		return MU_ENOMEM;
	int32_t *h = s->heap, nh = 0;
	for (int32_t i = 0; i < s->n; i++)
		if (s->cap[i] > 0 && (domain < 0 || s->dom[i] == domain))
			h[nh++] = i;
	e->resv_slots += (uint64_t)s->n + (uint64_t)nh;
	for (int32_t i = nh / 2 - 1; i >= 0; i--)
		slot_sift(s, h, nh, i);
	while (left > 0 && nh > 0) {
		int32_t b = h[0];
		int32_t k = s->cap[b] < left ? s->cap[b] : left;
		left -= k;
		s->cap[b] = 0; /* taken */
		shadow_take(s, jid, at, b, k);
		h[0] = h[--nh];
		slot_sift(s, h, nh, 0);
		e->resv_slots++;
	}
	return MU_OK;
}

/* Whether the job could ever fit on class c's nodes, were they empty:
 * the replay never frees more than a node holds, so when even that falls
 * short it cannot find a start and is skipped, with the same outcome (a
 * required topology level only narrows this bound further).  O(1) for a
 * class without nodes (a selector nothing matches), else at most O(class
 * nodes). */
static bool resv_possible(const mu_engine_t *e, const mu__sclass_t *c,
			  const rlist_t *l, const mu_res_t *req, int32_t need)
{
	int64_t total = 0;
	for (int32_t i = 0; i < c->nnodes && total < need; i++) {
		const mu__node_t *n = &e->nodes[c->nodes[i]];
		mu_res_t room = n->alloc;
		int64_t m = n->alloc.v[MU_RES_GPU] * 1000;
		if (room.v[MU_RES_GPU_MILLI] < m)
			room.v[MU_RES_GPU_MILLI] = m;
		total += pods_in(l, req, &room);
	}
	return total >= need;
}

/* The shadow replay for job j: the first time its unbound pods fit on
 * its first pod set's class as running pods end in order (*at, or
 * MU_TIME_NONE for never), and the domain that holds them; s is left
 * filled for the caller to commit (mu__resv_make) and release.  Reads
 * the engine but for its end list, brought up to date.  O(running pods
 * + class nodes). */
static int resv_replay(mu_engine_t *e, const mu__job_t *j, shadow_t *s, mu_time_t *at,
		       int32_t *domain)
{
	*at = MU_TIME_NONE;
	*domain = -1;
	for (int32_t p = 0; p < j->npodsets; p++) {
		for (int r = 0; r < MU_RES_MAX; r++)
			if (j->podsets[p].req->v[r] > s->req.v[r])
				s->req.v[r] = j->podsets[p].req->v[r];
		for (int32_t i = 0; i < j->podsets[p].replicas; i++)
			s->need += j->pods[j->podsets[p].first + i].node < 0;
	}
	rlist_of(&s->req, &s->rl);
	mu__sclass_t *c = &e->classes[j->podsets[0].sclass];
	int rc = mu__sclass_refresh(e, c);
	if (rc == MU_OK && !resv_possible(e, c, &s->rl, &s->req, s->need))
		return MU_OK; /* no start, ever: no reservation, as the replay says */
	if (rc == MU_OK)
		rc = shadow_nodes(s, c);
	if (rc == MU_OK)
		rc = shadow_domains(s);
	if (rc == MU_OK)
		rc = mu__ends_build(e);
	if (rc)
		return rc;
	for (int32_t i = 0; i < s->n; i++) {
		s->cap[i] = 0;
		shadow_setcap(s, i, pods_in(&s->rl, &s->req, &s->vfree[i]), e->now);
	}
	if (shadow_fits(s, domain))
		*at = e->now;
	/* Replay the ends in order; overdue ones end at now + 1.  Stale
	 * entries (pods released since) are skipped. */
	for (int32_t k = 0; *at == MU_TIME_NONE && k < e->nends; k++) {
		const mu__end_t *ev = &e->ends[k];
		mu_time_t t = ev->t > e->now ? ev->t : e->now + 1;
		/* Its node first (in the entry): an end on a node the job
		 * cannot use frees nothing for it, current or stale. */
		int32_t slot = ev->node >= 0 && ev->node < e->nnodes ? s->slot_of[ev->node] : -1;
		if (slot >= 0 && mu__end_valid(e, ev)) {
			const mu__job_t *v = &e->jobs[ev->job];
			mu_res_t freed = *v->podsets[mu__pod_podset(v, ev->pod)].req;
			freed.v[MU_RES_GPU_MILLI] += freed.v[MU_RES_GPU] * 1000;
			for (int r = 0; r < MU_RES_MAX; r++)
				s->vfree[slot].v[r] += freed.v[r];
			shadow_setcap(s, slot, pods_in(&s->rl, &s->req, &s->vfree[slot]), t);
		}
		/* Checked after every end (O(1)): many ends share a time (all
		 * the overdue ones), and the first of them that makes room
		 * decides; the reserved nodes are those that had room by then. */
		if (shadow_fits(s, domain))
			*at = t;
	}
	return MU_OK;
}

int mu__resv_make(mu_engine_t *e, int32_t jid)
{
	mu__job_t *j = &e->jobs[jid];
	shadow_t s = {.e = e, .j = j};
	int32_t domain;
	mu_time_t at;
	int rc = resv_replay(e, j, &s, &at, &domain);
	if (rc == MU_OK && at != MU_TIME_NONE)
		rc = shadow_commit(&s, jid, at, domain);
	if (rc == MU_OK && at != MU_TIME_NONE) {
		j->expected_start = at;
		j->resv_stamp = e->cycle_stamp;
		e->nresv++;
	}
	shadow_release(&s);
	return rc;
}

int mu__resv_start(mu_engine_t *e, const mu__job_t *j, mu_time_t *at)
{
	shadow_t s = {.e = e, .j = j};
	int32_t domain;
	int rc = resv_replay(e, j, &s, at, &domain);
	shadow_release(&s);
	return rc;
}

/* --- Expected starts from aggregate capacity --------------------------------- */

typedef struct aev {
	mu_time_t t;
	int64_t gpu, cpu; /* accounting units freed */
} aev_t;

static int cmp_aev(const void *a, const void *b)
{
	const aev_t *x = a, *y = b;
	return (x->t > y->t) - (x->t < y->t);
}

/* Fills ev with running jobs' expected ends, and reserved jobs' (from their
 * expected start), with prefix sums of what they free. */
static int32_t agg_events(const mu_engine_t *e, aev_t **out)
{
	int32_t n = 0;
	for (int32_t q = 0; q < e->nqueues; q++)
		n += e->queues[q].nrunning + e->queues[q].npending;
	aev_t *ev = malloc((size_t)(n ? n : 1) * sizeof *ev);
	if (!ev)
		return MU_ENOMEM;
	n = 0;
	for (int32_t q = 0; q < e->nqueues; q++) {
		const mu__queue_t *qq = &e->queues[q];
		for (int32_t i = 0; i < qq->nrunning; i++) {
			const mu__job_t *v = &e->jobs[qq->running[i]];
			mu_time_t end = v->start + mu__job_estimate(e, v, NULL);
			ev[n++] = (aev_t){end > e->now ? end : e->now + 1,
					  v->bound_gpu, v->bound_cpu};
		}
		for (int32_t i = 0; i < qq->npending; i++) {
			const mu__job_t *v = &e->jobs[qq->pending[i]];
			if (!mu__job_reserved(e, v))
				continue;
			int64_t cpu = 0;
			for (int32_t p = 0; p < v->npodsets; p++)
				cpu += v->podsets[p].acct->v[MU_RES_CPU] * v->podsets[p].replicas;
			ev[n++] = (aev_t){v->expected_start + mu__job_estimate(e, v, NULL),
					  v->acct_gpu_total, cpu};
		}
	}
	if (n > 1)
		qsort(ev, (size_t)n, sizeof *ev, cmp_aev);
	for (int32_t i = 1; i < n; i++) {
		ev[i].gpu += ev[i - 1].gpu;
		ev[i].cpu += ev[i - 1].cpu;
	}
	*out = ev;
	return n;
}

mu_time_t mu__expected_start(const mu_engine_t *e, const mu__job_t *j)
{
	if (j->state != MU_JOB_PENDING && j->nbound == j->npods)
		return MU_TIME_NONE;
	if (mu__job_reserved(e, j))
		return j->expected_start;
	aev_t *ev;
	int32_t n = agg_events(e, &ev);
	if (n < 0)
		return MU_TIME_NONE;
	int64_t free_gpu = e->total_alloc.v[MU_RES_GPU] - e->total_used.v[MU_RES_GPU];
	int64_t free_cpu = e->total_alloc.v[MU_RES_CPU] - e->total_used.v[MU_RES_CPU];
	int64_t held_gpu = 0, held_cpu = 0; /* by reservations, in line first */
	for (int32_t q = 0; q < e->nqueues; q++) {
		const mu__queue_t *qq = &e->queues[q];
		for (int32_t i = 0; i < qq->npending; i++) {
			const mu__job_t *r = &e->jobs[qq->pending[i]];
			if (!mu__job_reserved(e, r))
				continue;
			held_gpu += r->acct_gpu_total - r->bound_gpu;
			for (int32_t p = 0; p < r->npodsets; p++)
				held_cpu += r->podsets[p].acct->v[MU_RES_CPU] * r->podsets[p].replicas;
			held_cpu -= r->bound_cpu;
		}
	}
	int64_t dg = j->acct_gpu_total - j->bound_gpu;
	int64_t dc = -j->bound_cpu;
	for (int32_t p = 0; p < j->npodsets; p++)
		dc += j->podsets[p].acct->v[MU_RES_CPU] * j->podsets[p].replicas;
	/* The first end after which enough is free in aggregate. */
	int32_t lo = 0, hi = n;
	while (lo < hi) {
		int32_t mid = (lo + hi) / 2;
		if (free_gpu + ev[mid].gpu - held_gpu >= dg &&
		    free_cpu + ev[mid].cpu - held_cpu >= dc)
			hi = mid;
		else
			lo = mid + 1;
	}
	mu_time_t at = lo < n ? ev[lo].t : MU_TIME_NONE;
	free(ev);
	return at;
}

/*
 * cycle.c - the scheduling cycle: pick a queue, try its next job as a gang,
 * commit or roll back, and explain whatever still waits.
 *
 * Queues are walked top-down: among siblings with untried jobs, the higher
 * priority and then the lower dominant share (usage over deserved quota)
 * goes first, re-evaluated after every job, so queues interleave fairly.
 * A job is placed pod by pod with the scoring policy inside a transaction:
 * the pods placed so far are logged, and if fewer than minMember fit they
 * are released again in reverse.  Nothing is copied.
 */
#include "engine/engine_int.h"

int32_t mu__pod_podset(const mu__job_t *j, int32_t pod)
{
	for (int32_t p = j->npodsets - 1; p > 0; p--)
		if (pod >= j->podsets[p].first)
			return p;
	return 0;
}

static void acct_add(mu_res_t *a, const mu_res_t *b, int sign)
{
	for (int r = 0; r < MU_RES_MAX; r++)
		a->v[r] += sign * b->v[r];
}

int mu__pod_bind(mu_engine_t *e, mu__job_t *j, int32_t pod, int32_t nid,
		 const mu__pod_t *was)
{
	mu__node_t *n = &e->nodes[nid];
	int rc = mu__grow((void **)&n->refs, &n->refs_cap, n->npods + 1,
			  sizeof *n->refs);
	if (rc)
		return rc;
	if (e->aff) /* before the pod is listed on the node (affinity.c) */
		mu__aff_pod(e, j, pod, nid, +1);
	const mu__podset_t *ps = &j->podsets[mu__pod_podset(j, pod)];
	mu__pod_t *p = &j->pods[pod];
	if (was)
		*p = *was;
	p->end_id = 0; /* a fresh end entry at the next merge */
	mu__node_take(e, n, ps, p, was != NULL);
	mu__node_dirty(e, n);
	mu__ends_note_bind(e, (int32_t)(j - e->jobs), pod);
	mu_time_t st = j->state == MU_JOB_RUNNING ? j->start : e->now;
	if (n->npods == 0 || st < n->min_start)
		n->min_start = st;
	n->refs[n->npods] = (mu__podref_t){(int32_t)(j - e->jobs), pod};
	p->npos = n->npods++;
	p->node = nid;
	j->nbound++;
	mu_res_t a = mu__pod_acct(e, ps, nid);
	j->bound_gpu += a.v[MU_RES_GPU];
	j->bound_cpu += a.v[MU_RES_CPU];
	acct_add(&e->total_used, &a, +1);
	mu__queue_add_used(e, j->queue, &a, +1, j->preemptible);
	e->alloc_gen++;
	e->commit_gen++;
	return MU_OK;
}

void mu__pod_release(mu_engine_t *e, mu__job_t *j, int32_t pod,
		     bool capacity_grew)
{
	mu__pod_t *p = &j->pods[pod];
	if (p->node < 0)
		return;
	if (e->aff) /* while the pod is still listed on the node */
		mu__aff_pod(e, j, pod, p->node, -1);
	mu__node_t *n = &e->nodes[p->node];
	const mu__podset_t *ps = &j->podsets[mu__pod_podset(j, pod)];
	mu_res_t a = mu__pod_acct(e, ps, p->node);
	mu__node_give(e, n, ps, p);
	mu__node_dirty(e, n);
	mu__podref_t last = n->refs[--n->npods];
	n->refs[p->npos] = last;
	e->jobs[last.job].pods[last.pod].npos = p->npos;
	p->node = -1;
	e->ends_stale += p->end_id != 0;
	p->end_id = 0; /* its end entry goes stale */
	j->nbound--;
	j->bound_gpu -= a.v[MU_RES_GPU];
	j->bound_cpu -= a.v[MU_RES_CPU];
	acct_add(&e->total_used, &a, -1);
	mu__queue_add_used(e, j->queue, &a, -1, j->preemptible);
	if (capacity_grew)
		e->release_gen++;
}

int mu__job_set_running(mu_engine_t *e, int32_t jid, mu_time_t now)
{
	mu__job_t *j = &e->jobs[jid];
	mu__queue_t *q = &e->queues[j->queue];
	int rc = mu__grow((void **)&q->running, &q->running_cap, q->nrunning + 1,
			  sizeof *q->running);
	if (rc)
		return rc;
	j->state = MU_JOB_RUNNING;
	j->start = now;
	mu__vsum_touch_job(e, j);
	if (e->ends_sweep && j->nbound > 0) /* pods kept while it was pending */
		mu__ends_restart(e, jid);
	e->qgen++; /* its queue's running jobs */
	mu__order_touch(e, jid);
	if (j->preemptible && j->eprio < q->min_victim_prio) {
		q->min_victim_prio = j->eprio;
		q->mvp_count = 1;
	} else if (j->preemptible && j->eprio == q->min_victim_prio) {
		q->mvp_count++;
	}
	j->rpos = q->nrunning;
	q->running[q->nrunning++] = jid;
	return MU_OK;
}

void mu__job_set_pending(mu_engine_t *e, int32_t jid)
{
	mu__job_t *j = &e->jobs[jid];
	mu__queue_t *q = &e->queues[j->queue];
	if (j->state == MU_JOB_RUNNING) {
		e->qgen++; /* its queue's running jobs */
		mu__order_stop(e, j, e->now);
		mu__order_touch(e, jid);
		if (j->preemptible && j->eprio == q->min_victim_prio && q->mvp_count > 1)
			q->mvp_count--; /* others hold it still */
		else if (j->preemptible && j->eprio <= q->min_victim_prio)
			q->mvp_valid = false;
		int32_t last = q->running[--q->nrunning];
		q->running[j->rpos] = last;
		e->jobs[last].rpos = j->rpos;
	}
	if (j->nbound > 0) /* its end entries lapse while it is pending */
		e->ends_sweep = true;
	j->state = MU_JOB_PENDING;
	mu__vsum_touch_job(e, j);
}

int mu__dec_push(mu_decisions_t *out, const mu_decision_t *d)
{
	if (out->sink) {
		int rc = out->sink(out->sink_arg, d);
		out->n += rc == MU_OK;
		return rc;
	}
	if (out->n == out->cap) {
		size_t ncap = out->cap ? out->cap * 2 : 256;
		mu_decision_t *nv = realloc(out->v, ncap * sizeof *nv);
		if (!nv)
			return MU_ENOMEM;
		out->v = nv;
		out->cap = ncap;
	}
	out->v[out->n++] = *d;
	return MU_OK;
}

uint64_t mu__random(mu_engine_t *e)
{
	uint64_t z = (e->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The place of node nid in kube-scheduler v1.20's list of feasible nodes
 * (mu_engine_config_t.kube_ties): its parallel filter hands chunks of cs
 * nodes, in order, to 16 workers, and a worker lists a node as soon as it
 * passes; with chunks of equal cost, node nid of chunk k = nid / cs is
 * found at step (k / 16) x cs + nid % cs, and of nodes found at the same
 * step the lower chunk comes first.  n counts every node id the engine
 * has given out (openb's evaluation removes none).  O(sqrt(nnodes)). */
static int64_t kube_list_rank(int32_t nid, int32_t nnodes)
{
	int32_t cs = 1; /* floor(sqrt(nnodes)), at least 1 */
	while ((int64_t)(cs + 1) * (cs + 1) <= nnodes)
		cs++;
	if (cs > nnodes / 16 + 1)
		cs = nnodes / 16 + 1;
	int32_t k = nid / cs;
	return ((int64_t)(k / 16) * cs + nid % cs) * ((int64_t)nnodes + 1) + k;
}

/* Whether nid beats the best so far, best, on equal score.
 * O(sqrt(nodes)) with kube_ties, else O(1). */
static bool tie_wins(const mu_engine_t *e, int32_t nid, int32_t best)
{
	if (!e->cfg.kube_ties)
		return nid < best;
	return kube_list_rank(nid, e->nnodes) < kube_list_rank(best, e->nnodes);
}

int32_t mu__best_node_in(mu_engine_t *e, mu__sclass_t *c,
			 const mu__podset_t *ps, const mu__scope_t *sc)
{
	if (e->aff && mu__aff_involved(e, ps)) /* pod affinity, spread */
		return mu__aff_best_node(e, c, ps, sc, NULL);
	if (!sc && !e->cfg.scan_all && !e->cfg.kube_ties &&
	    !(e->score->flags & (MU_SCORE_RANDOM | MU_SCORE_SUPPLY))) {
		int32_t nid = mu__best_node_indexed(e, c, ps);
		if (nid != -2)
			return nid;
	}
	const mu_res_t *req = ps->req;
	int32_t best = -1;
	double best_score = 0;
	mu_node_view_t v;
	mu_score_ctx_t ctx = {e->cfg.score_state, 0, mu__supply_ctx(e),
			       &e->gmodels};
	const int32_t *ids = sc ? sc->nodes : c->nodes;
	int32_t n_ids = sc ? sc->n : c->nnodes;
	for (int32_t i = 0; i < n_ids; i++) {
		int32_t nid = ids[i];
		if (sc && !mu__sclass_has(c, nid))
			continue;
		if (!mu__fits(e, nid, ps))
			continue;
		const mu__node_t *n = &e->nodes[nid];
		if (e->placing >= 0 && !mu__resv_allows(e, &e->jobs[e->placing], nid, ps))
			continue;
		mu__node_view(n, &v);
		if (e->score->flags & MU_SCORE_RANDOM)
			ctx.random = mu__random(e);
		double s = e->score->score(&ctx, &v, req);
		if (best < 0 || s > best_score ||
		    (s == best_score && tie_wins(e, nid, best))) {
			best = nid;
			best_score = s;
		}
	}
	return best;
}

int32_t mu__best_node(mu_engine_t *e, mu__sclass_t *c, const mu__podset_t *ps)
{
	return mu__best_node_in(e, c, ps, NULL);
}

/* Fills r with why one pod of podset ps fits nowhere: per-filter node
 * counts, static ones from the class.  A class of at least e->fcount_min
 * nodes is counted by its fit counts (fitcount.c) when the compact
 * records decide it: the same counts; a node that fits is then checked
 * against the reservations only when some fit (else the scan below).
 * O(class nodes) scanned, O(nodes near the request's boundary) counted. */
static void explain_fit(mu_engine_t *e, mu__sclass_t *c,
			const mu__podset_t *ps, int32_t psi, mu_reason_t *r)
{
	int32_t fail[MU_F_COUNT]; /* counted here, not through r: r may
	                           * alias what the loop reads, so every
	                           * increment through it was reloaded */
	memcpy(fail, c->fail, sizeof fail);
	/* From the compact records when they decide it (no named resource,
	 * no alignment): the same filters in the same order. */
	bool quick = !e->cfg.scan_all && !e->nfree_off && !ps->aligned &&
		     e->nres <= MU_RES_NAMED0;
	int32_t fit = -1;
	if (quick && c->nnodes >= e->fcount_min &&
	    (mu__fcount(e, c, ps->req, fail, &fit) != MU_OK ||
	     (fit > 0 && e->placing >= 0))) {
		memcpy(fail, c->fail, sizeof fail); /* the scan decides */
		fit = -1;
	}
	for (int32_t i = 0; fit < 0 && i < c->nnodes; i++) {
		int32_t nid = c->nodes[i];
		mu_filter_t f = quick && nid < e->nfree_cap ?
			mu__nfree_filter(&e->nfree[nid], ps->req) :
			mu__node_fit(e, &e->nodes[nid], ps);
		if (f == MU_F_COUNT && e->placing >= 0 &&
		    !mu__resv_allows(e, &e->jobs[e->placing], c->nodes[i], ps))
			f = MU_F_RESERVED;
		if (f != MU_F_COUNT)
			fail[f]++;
	}
	memcpy(r->fail, fail, sizeof r->fail);
	r->podset = psi;
	r->nodes_total = e->nlive;
}

/* explain_fit(), paid for: its class nodes are counted in e->expl_checks
 * and taken from this cycle's budget.  O(class nodes). */
static void explain_paid(mu_engine_t *e, mu__sclass_t *c, const mu__podset_t *ps,
			 int32_t psi, mu_reason_t *r)
{
	explain_fit(e, c, ps, psi, r);
	e->expl_checks += (uint64_t)c->nnodes;
	if (e->expl_left != INT64_MAX)
		e->expl_left -= c->nnodes;
}

/* explain_fit() within the cycle's budget: when the budget cannot pay for
 * c's nodes and j has counts for pod set psi, its own (expl_keep) or the
 * class memo's that last answered for it (expl_memo_keep), those are
 * given again, stale by the changes since (nodes that joined or left the
 * class included), and marked due: expl_refresh() recounts them in a
 * later cycle whose budget allows, without a placement search (the job's
 * failure stands until something is freed).  A job never explained is
 * always explained, and so is one whose gang holds tentative pods or that
 * is placed in a scope (committed false).  Returns whether the counts are
 * fresh.  O(class nodes) when fresh, else O(1). */
static bool explain_budgeted(mu_engine_t *e, mu__job_t *j, mu__sclass_t *c,
			     const mu__podset_t *ps, int32_t psi, bool committed,
			     mu_reason_t *r)
{
	mu__expl_t *x = j->expl;
	if (committed && e->expl_left < c->nnodes && x && (x->ok || x->memo) &&
	    x->ps == psi && !e->cfg.scan_all) {
		memcpy(r->fail, x->fail, sizeof r->fail);
		r->podset = psi;
		r->nodes_total = e->nlive;
		x->due = true;
		return false;
	}
	if (x)
		x->due = false;
	explain_paid(e, c, ps, psi, r);
	return true;
}

/* Accounting vector of j's pods that are not bound yet. */
static mu_res_t job_unbound_acct(const mu__job_t *j)
{
	mu_res_t a = {{0}};
	for (int32_t p = 0; p < j->npodsets; p++) {
		const mu__podset_t *ps = &j->podsets[p];
		int32_t unbound = 0;
		for (int32_t i = 0; i < ps->replicas; i++)
			unbound += j->pods[ps->first + i].node < 0;
		for (int r = 0; r < MU_RES_MAX; r++)
			a.v[r] += ps->acct->v[r] * unbound;
	}
	return a;
}

static uint8_t align_key(const mu__podset_t *ps)
{
	return (uint8_t)(ps->align | ps->want_nic << 2 | ps->pin_cpus << 3);
}

/* Whether class c is known to have no node for a pod of ps: a request at
 * least as large failed since capacity last grew.  O(resources). */
static bool nofit_known(const mu_engine_t *e, const mu__sclass_t *c,
			const mu__podset_t *ps)
{
	const mu__sclass_memo_t *m = c->memo;
	if (!m || m->nofit_gen != e->release_gen || m->nofit_align != align_key(ps))
		return false;
	for (int r = 0; r < MU_RES_MAX; r++)
		if (ps->req->v[r] < m->nofit_req.v[r])
			return false;
	return true;
}

/* c's memo, allocated at first use (NULL on out of memory: nothing is
 * remembered then). */
static mu__sclass_memo_t *class_memo(mu_engine_t *e, mu__sclass_t *c)
{
	if (!c->memo && (c->memo = calloc(1, sizeof *c->memo)) != NULL)
		c->memo->nofit_gen = e->release_gen - 1; /* nothing known yet */
	return c->memo;
}

/* Remembers that no node of class c fits ps's request (the smallest such
 * request wins), with the per-filter counts of the explanation. */
static void nofit_note(mu_engine_t *e, mu__sclass_t *c, const mu__podset_t *ps,
		       const mu_reason_t *r)
{
	mu__sclass_memo_t *m = class_memo(e, c);
	if (!m)
		return;
	if (m->nofit_gen == e->release_gen && m->nofit_align == align_key(ps)) {
		for (int k = 0; k < MU_RES_MAX; k++)
			if (ps->req->v[k] > m->nofit_req.v[k])
				return; /* a smaller request is known already */
	}
	m->nofit_gen = e->release_gen;
	m->nofit_req = *ps->req;
	m->nofit_align = align_key(ps);
	memcpy(m->nofit_fail, r->fail, sizeof m->nofit_fail);
}

/* Carries j's last explanation of pod set psi on class c forward to now:
 * for each class node changed since (the change log keeps each node's
 * record before the change), its old filter is taken out of the counts and
 * its new one put in.  The kept counts have, in the MU_F_RESERVED slot,
 * the class nodes whose resources fit (a kept explanation is one where
 * placement failed on committed state, so every such node was held by a
 * reservation, and the slot held exactly that count).  Returns that count
 * now (0: still no node fits, placement can be skipped), with
 * j->expl->fail brought up to date, or -1 when the carry is not possible
 * (then place and explain as usual).  The changed nodes are read from the
 * class's net changes since j's position (c->cd), which the carries of
 * the jobs that share that position share: O(nodes whose record moved)
 * per job, plus O(changes since) once per position and log end. */
static int32_t expl_carry(mu_engine_t *e, mu__job_t *j, mu__sclass_t *c,
			  const mu__podset_t *ps, int32_t psi)
{
	uint64_t end = e->chlog_base + (uint64_t)e->nchlog;
	mu__expl_t *x = j->expl;
	if (e->cfg.scan_all || !x || !(x->ok || x->memo) || x->gen != c->gen || x->ps != psi ||
	    !e->nindexes ||
	    x->pos < e->chlog_base || end - x->pos > (uint64_t)c->nnodes ||
	    e->nfree_off || ps->aligned || e->nres > MU_RES_NAMED0)
		return -1;
	if (x->pos == end) {
		if (x->ok)
			x->due = false;
		return x->fail[MU_F_RESERVED];
	}
	if (!c->cd && !(c->cd = calloc(1, sizeof *c->cd)))
		return -1;
	const mu__cdelta_t *d = mu__cdelta(e, c, c->cd, x->pos);
	if (!d)
		return -1;
	int32_t *fail = x->fail;
	e->carry_reads += (uint64_t)d->n;
	for (int32_t i = 0; i < d->n; i++) {
		mu_filter_t was = mu__nfree_filter(&d->v[i].was, ps->req);
		mu_filter_t now = mu__nfree_filter(&d->v[i].now, ps->req);
		if (x->memo) { /* only the count of nodes that fit is j's own */
			fail[MU_F_RESERVED] += (now == MU_F_COUNT) - (was == MU_F_COUNT);
			continue;
		}
		fail[was == MU_F_COUNT ? MU_F_RESERVED : was]--;
		fail[now == MU_F_COUNT ? MU_F_RESERVED : now]++;
	}
	x->pos = end;
	if (x->ok)
		x->due = false; /* brought up to date */
	return fail[MU_F_RESERVED];
}

/* Fills r from j's carried counts of pod set psi (expl_carry returned
 * them, so j->expl is set), after placement failed: the nodes that fit
 * are all held by reservations. */
static void expl_fill(const mu_engine_t *e, const mu__job_t *j, int32_t psi,
		      mu_reason_t *r)
{
	memcpy(r->fail, j->expl->fail, sizeof r->fail);
	r->podset = psi;
	r->nodes_total = e->nlive;
}

/* Keeps r, an explanation of j's pod set psi on committed state after
 * placement failed, to be carried forward (expl_carry), in j->expl.  Only
 * explanations from the compact records (explain_fit's quick path) are
 * kept; the record is allocated only for those (out of memory: not kept,
 * which costs a scan later, not a different answer).  O(1). */
static void expl_keep(mu_engine_t *e, mu__job_t *j, const mu__sclass_t *c,
		      const mu__podset_t *ps, int32_t psi, const mu_reason_t *r)
{
	bool ok = e->nindexes > 0 && !e->nfree_off && !e->cfg.scan_all &&
		  !ps->aligned && e->nres <= MU_RES_NAMED0;
	if (!ok) {
		if (j->expl)
			j->expl->ok = j->expl->memo = j->expl->due = false;
		return;
	}
	if (!j->expl && !(j->expl = malloc(sizeof *j->expl)))
		return;
	j->expl->ok = true;
	j->expl->memo = j->expl->due = false;
	j->expl->ps = psi;
	j->expl->gen = c->gen;
	j->expl->pos = e->chlog_base + (uint64_t)e->nchlog;
	memcpy(j->expl->fail, r->fail, sizeof j->expl->fail);
}

/* Keeps r, the class memo's counts just given to j for pod set psi on
 * committed state (a single pod set), so that when the memo lapses j need
 * neither a count of every class node at once nor a placement search per
 * cycle: the memo says no class node fits j's request now, so the count of
 * those that fit starts at 0 here (the MU_F_RESERVED slot) and expl_carry
 * keeps it exact through the change log; while it is 0, placement is
 * skipped as for j's own carried counts, and the memo's per-filter counts
 * are shown (stale: explain_budgeted recounts them when the budget
 * allows).  Counts of j's own are kept instead while they can be carried
 * (they are brought up to date here), so that a job the memo answers
 * again and again is not recounted again and again.  O(changes since j's
 * counts were taken), bounded by the class's nodes. */
static void expl_memo_keep(mu_engine_t *e, mu__job_t *j, mu__sclass_t *c,
			   const mu__podset_t *ps, int32_t psi, const mu_reason_t *r)
{
	mu__expl_t *x = j->expl;
	if (x)
		x->due = false; /* the memo's counts are what a recount gives */
	if (e->cfg.scan_all || (x && x->ok && expl_carry(e, j, c, ps, psi) >= 0))
		return;
	if (!x && !(x = j->expl = malloc(sizeof *x)))
		return; /* out of memory: recounted at the lapse, as before */
	x->ok = x->due = false;
	x->memo = true;
	x->ps = psi;
	x->gen = c->gen;
	x->pos = e->chlog_base + (uint64_t)e->nchlog;
	memcpy(x->fail, r->fail, sizeof x->fail);
	x->fail[MU_F_RESERVED] = 0; /* no node fits (the memo says) */
}

/* Places the unbound pods of j with index in [p0, p1) on nodes of scope sc
 * (NULL: anywhere), logging them in e->txn.  Fills r for the first pod set
 * that ran out of room; once a pod set fails its identical pods are not
 * tried.  Returns pods placed or a negative error.  O(pods x nodes). */
int32_t mu__place_range(mu_engine_t *e, mu__job_t *j, int32_t p0, int32_t p1,
			const mu__scope_t *sc, mu_reason_t *r)
{
	int32_t placed = 0;
	uint64_t failed = 0;
	for (int32_t pod = p0; pod < p1; pod++) {
		if (j->pods[pod].node >= 0)
			continue;
		int32_t psi = mu__pod_podset(j, pod);
		if (psi < 64 && ((failed >> psi) & 1))
			continue;
		mu__podset_t *ps = &j->podsets[psi];
		mu__sclass_t *c = &e->classes[ps->sclass];
		int rc = mu__sclass_refresh(e, c);
		if (rc)
			return rc;
		/* Affinity and spread depend on other pods, not only on free
		 * room: no memo of failures, explained by affinity.c. */
		bool inv = e->aff && mu__aff_involved(e, ps);
		bool cacheable = !sc && !inv;
		/* Carried forward: the same counts as explaining again (a
		 * single pod set on committed state only).  No node fits:
		 * placement is skipped; some fit: they are tried, and if
		 * reservations hold them all, the counts explain it. */
		int32_t carried = -1;
		if (cacheable && r->podset < 0 && e->ntxn == 0 && j->npodsets == 1 &&
		    !nofit_known(e, c, ps))
			carried = expl_carry(e, j, c, ps, psi);
		if (carried == 0 && j->expl->ok) {
			expl_fill(e, j, psi, r);
			nofit_note(e, c, ps, r);
			if (psi < 64)
				failed |= (uint64_t)1 << psi;
			continue;
		}
		if (carried == 0) {
			/* The memo's counts, carried: no node fits, exactly; the
			 * per-filter counts are recounted within the budget. */
			if (explain_budgeted(e, j, c, ps, psi, true, r)) {
				if (!r->fail[MU_F_RESERVED])
					nofit_note(e, c, ps, r);
				expl_keep(e, j, c, ps, psi, r);
			}
			if (psi < 64)
				failed |= (uint64_t)1 << psi;
			continue;
		}
		int32_t nid = -1;
		if (!cacheable || !nofit_known(e, c, ps)) {
			e->place_searches++;
			nid = mu__best_node_in(e, c, ps, sc);
		}
		if (nid < 0) {
			if (r->podset < 0) {
				if (carried > 0 && j->expl->ok) {
					expl_fill(e, j, psi, r);
				} else if (cacheable && nofit_known(e, c, ps)) {
					memcpy(r->fail, c->memo->nofit_fail, sizeof r->fail);
					r->podset = psi;
					r->nodes_total = e->nlive;
					if (e->ntxn == 0 && j->npodsets == 1)
						expl_memo_keep(e, j, c, ps, psi, r);
					else if (j->expl)
						j->expl->due = false;
				} else if (inv) {
					mu__aff_best_node(e, c, ps, NULL, r);
					r->podset = psi;
				} else if (explain_budgeted(e, j, c, ps, psi,
								    !sc && e->ntxn == 0, r)) {
					/* Only a failure on committed state may be
					 * remembered: a gang's own tentative pods are
					 * given back without bumping release_gen.
					 * Reservations only add restrictions, so a
					 * pure resource failure holds whatever they
					 * are; one they caused is kept for this job
					 * alone (its reserved count is the count of
					 * nodes that fit, see expl_carry). */
					if (cacheable && e->ntxn == 0) {
						if (!r->fail[MU_F_RESERVED])
							nofit_note(e, c, ps, r);
						if (j->npodsets == 1)
							expl_keep(e, j, c, ps, psi, r);
					}
				}
			}
			if (psi < 64)
				failed |= (uint64_t)1 << psi;
			continue;
		}
		rc = mu__grow((void **)&e->txn, &e->txn_cap, e->ntxn + 1, sizeof *e->txn);
		if (rc == MU_OK)
			rc = mu__pod_bind(e, j, pod, nid, NULL);
		if (rc)
			return rc;
		mu__resv_note_bind(e, j, nid, ps);
		e->txn[e->ntxn++] = pod;
		placed++;
	}
	return placed;
}

void mu__txn_truncate(mu_engine_t *e, mu__job_t *j, int32_t keep)
{
	while (e->ntxn > keep)
		mu__pod_release(e, j, e->txn[--e->ntxn], false);
}

bool mu__parts_ok(const mu_engine_t *e, const mu__job_t *j, mu_reason_t *r)
{
	if (!j->parts)
		return true;
	for (int32_t p = 0; p < j->npodsets; p++) {
		const mu__podset_t *ps = &j->podsets[p];
		int32_t bound = 0;
		for (int32_t i = 0; i < ps->replicas; i++)
			bound += j->pods[ps->first + i].node >= 0;
		if (bound >= ps->min_member)
			continue;
		if (r) {
			r->part = p;
			r->part_needed = ps->min_member;
			r->part_fit = bound;
			r->part_job = (mu_id_t)(j - e->jobs);
		}
		return false;
	}
	return true;
}

/* Places the first min_member pods of every part of j, then the rest, so
 * that one part's surplus cannot take the room another part's minimum
 * needs.  Returns pods placed or a negative error.  O(pods x nodes). */
static int32_t place_parts(mu_engine_t *e, mu__job_t *j, mu_reason_t *r)
{
	int32_t placed = 0;
	for (int32_t p = 0; p < j->npodsets; p++) {
		const mu__podset_t *ps = &j->podsets[p];
		if (!ps->min_member)
			continue;
		int32_t n = mu__place_range(e, j, ps->first, ps->first + ps->min_member, NULL, r);
		if (n < 0)
			return n;
		placed += n;
	}
	int32_t n = mu__place_range(e, j, 0, j->npods, NULL, r);
	return n < 0 ? n : placed + n;
}

/* Places as many unbound pods of j as fit, honouring its topology
 * constraint (topoplace.c) and placing its parts' minimums first.
 * Returns pods placed or a negative error; *short_part is set when the
 * count would do but a part is below its own minimum (r says which). */
static int32_t job_place(mu_engine_t *e, mu__job_t *j, int32_t need,
			 mu_reason_t *r, bool *short_part)
{
	e->ntxn = 0;
	*short_part = false;
	int32_t placed;
	if (j->topo >= 0)
		placed = mu__place_topo(e, j, need, r);
	else if (j->parts)
		placed = place_parts(e, j, r);
	else
		return mu__place_range(e, j, 0, mu__elastic_cap(e, j, need), NULL, r);
	if (placed >= need && !mu__parts_ok(e, j, r))
		*short_part = true;
	return placed;
}

/* Emits the binds logged in e->txn. */
int mu__job_commit(mu_engine_t *e, int32_t jid, mu_decisions_t *out)
{
	mu__job_t *j = &e->jobs[jid];
	for (int32_t t = 0; t < e->ntxn; t++) {
		int32_t pod = e->txn[t];
		int32_t psi = mu__pod_podset(j, pod);
		mu_decision_t d = {
			.kind = MU_DEC_BIND,
			.job = jid,
			.podset = psi,
			.pod = pod - j->podsets[psi].first,
			.node = j->pods[pod].node,
			.gpus = j->pods[pod].gpus,
			.gpu_milli = j->pods[pod].milli,
			.numa = j->pods[pod].numa,
			.nic = j->pods[pod].nic,
			.cpus = j->pods[pod].cpus,
			.by = -1,
		};
		int rc = mu__dec_push(out, &d);
		if (rc)
			return rc;
	}
	return MU_OK;
}

/* Whether the cluster's free capacity covers acct in aggregate: moving
 * pods cannot create capacity, only gather it. */
static bool free_covers(const mu_engine_t *e, const mu_res_t *acct)
{
	for (int r = 0; r < e->nres; r++)
		if (r != MU_RES_GPU_MILLI &&
		    e->total_alloc.v[r] - e->total_used.v[r] < acct->v[r])
			return false;
	return true;
}

/* Whether the free resources of the nodes of j's class add up to what its
 * unbound pods request: moving pods gathers capacity, it cannot create it.
 * Single-pod-set jobs only (others: true).  O(class nodes) when anything
 * was bound or freed since the class was last summed, else O(resources). */
static bool class_free_covers(mu_engine_t *e, const mu__job_t *j)
{
	if (j->npodsets != 1)
		return true;
	const mu__podset_t *ps = &j->podsets[0];
	mu__sclass_t *c = &e->classes[ps->sclass];
	mu__sclass_memo_t *m = class_memo(e, c);
	if (!m)
		return true; /* cannot tell: let the search decide */
	if (!m->fsum_valid || m->fsum_alloc != e->alloc_gen ||
	    m->fsum_release != e->release_gen || c->gen != e->node_gen) {
		/* Slots past e->nres are zero in every vector: not summed. */
		memset(&m->fsum, 0, sizeof m->fsum);
		for (int32_t i = 0; i < c->nnodes; i++) {
			const int64_t *f = e->nodes[c->nodes[i]].free.v;
			for (int r = 0; r < e->nres; r++)
				m->fsum.v[r] += f[r];
		}
		m->fsum_alloc = e->alloc_gen;
		m->fsum_release = e->release_gen;
		m->fsum_valid = true;
	}
	int64_t unbound = j->npods - j->nbound;
	for (int r = 0; r < e->nres; r++) {
		int64_t want = ps->req->v[r] * unbound;
		if (r == MU_RES_GPU_MILLI)
			want += ps->req->v[MU_RES_GPU] * 1000 * unbound;
		else if (r == MU_RES_GPU)
			continue; /* whole free devices: moves can make more */
		if (want > m->fsum.v[r])
			return false;
	}
	return true;
}

/* Marks j admitted (on its first pods) and emits the binds in e->txn. */
static int job_admit(mu_engine_t *e, int32_t jid, mu_time_t now,
		     mu_reason_t *r, mu_decisions_t *out)
{
	mu__job_t *j = &e->jobs[jid];
	int rc = mu__job_commit(e, jid, out);
	if (rc == MU_OK && j->state == MU_JOB_PENDING)
		rc = mu__job_set_running(e, jid, now);
	if (rc)
		return rc;
	j->failed = false;
	mu__job_last_clear(j);
	if (j->nbound < j->npods) { /* admitted, some pods still wait */
		r->why = MU_WHY_UNSCHEDULABLE;
		r->pods_needed = j->npods - j->nbound;
		return mu__job_last_set(j, r);
	}
	return MU_OK;
}

/* Tries one job as a gang at time now, with preemption and reclaim when
 * it does not fit as things are.  O(pods x class nodes), plus the victim
 * search (preempt.c). */
static int job_try_inner(mu_engine_t *e, int32_t jid, mu_time_t now,
			 mu_decisions_t *out);

/* One flavor attempt of job_try_flavors(): f's pod sets, with or without
 * preemption and reclaim.  Keeps the reason; *ok when it was admitted. */
static int flavor_try(mu_engine_t *e, int32_t jid, int32_t f, bool full,
		      mu_time_t now, mu_decisions_t *out, bool *ok)
{
	mu__job_t *j = &e->jobs[jid];
	bool never = j->never_preempt;
	mu__flav_set(e, j, f);
	j->never_preempt = never || !full;
	int rc = job_try_inner(e, jid, now, out);
	j->never_preempt = never;
	j->flav_last[f] = mu__job_last(j);
	*ok = rc == MU_OK && !j->failed;
	return rc;
}

/* Flavor fallback (docs/policy.md, "Node pools"): a job that names pools
 * and has nothing bound tries them in order, in up to three passes.
 * 1. Each pool in order: where its claim stays within its queue's deserved
 *    quota there, with preemption and reclaim (whenCanPreempt:
 *    MayStopSearch, the default) or on idle capacity only (TryNextFlavor);
 *    elsewhere on idle capacity, borrowing (whenCanBorrow: MayStopSearch,
 *    the default), or not yet (TryNextFlavor).
 * 2. The pools skipped in 1, on idle capacity (borrowing).
 * 3. The pools not yet tried with preemption, with preemption and reclaim
 *    by the fair-share rule.
 * It stays in the first pool that admits it; when none does it is left on
 * its preferred pool and each pool's reason is kept for explain.
 * O(pools x one try). */
static int job_try_flavors(mu_engine_t *e, int32_t jid, mu_time_t now,
			   mu_decisions_t *out)
{
	mu__job_t *j = &e->jobs[jid];
	const mu__queue_t *q = &e->queues[j->queue];
	bool can_preempt = !j->never_preempt && (e->cfg.preemption || e->cfg.reclaim);
	uint32_t free_done = 0, full_done = 0;
	bool ok = false;
	int rc = MU_OK;
	for (int32_t f = 0; f < j->nflav && !ok && !rc; f++) {
		mu__flav_set(e, j, f);
		bool within = mu__flav_within(e, j);
		bool full = within && !q->preempt_try_next && can_preempt;
		if (!within && q->borrow_try_next)
			continue;
		free_done |= 1u << f;
		if (full)
			full_done |= 1u << f;
		rc = flavor_try(e, jid, f, full, now, out, &ok);
	}
	for (int32_t f = 0; f < j->nflav && !ok && !rc; f++)
		if (!((free_done >> f) & 1))
			rc = flavor_try(e, jid, f, false, now, out, &ok);
	for (int32_t f = 0; f < j->nflav && !ok && !rc && can_preempt; f++)
		if (!((full_done >> f) & 1))
			rc = flavor_try(e, jid, f, true, now, out, &ok);
	if (rc || ok)
		return rc;
	j->flav_tried = true;
	mu__flav_set(e, j, 0);
	return mu__job_last_set(j, &j->flav_last[0]);
}

/* job_try_inner() with the job marked as the one being placed, so that
 * node choices respect reservations. */
static int job_try(mu_engine_t *e, int32_t jid, mu_time_t now,
		   mu_decisions_t *out)
{
	mu__job_t *j = &e->jobs[jid];
	if (j->state == MU_JOB_PENDING)
		mu__backfill_forget(e, j);
	e->placing = jid;
	int rc = j->nflav && j->nbound == 0 ? job_try_flavors(e, jid, now, out) :
		 job_try_inner(e, jid, now, out);
	e->placing = -1;
	if (j->failed && j->last && j->last->fail[MU_F_RESERVED])
		j->failed = false; /* reservations move: try again next cycle */
	return rc;
}

static int job_try_inner(mu_engine_t *e, int32_t jid, mu_time_t now,
			 mu_decisions_t *out)
{
	mu__job_t *j = &e->jobs[jid];
	mu_reason_t r = {.podset = -1, .limit_queue = -1, .limit_res = -1,
			 .fs_queue = -1, .blocked_by = -1};
	uint64_t commit_gen = e->commit_gen; /* put back if nothing stays */
	int32_t need = j->min_member - j->nbound;
	if (need < 1)
		need = 1; /* an admitted job grows by any number of pods */
	mu_res_t acct = job_unbound_acct(j), lacct = acct;
	if (mu__elastic_cap(e, j, need) < j->npods && !j->parts && j->topo < 0)
		for (int res = 0; res < MU_RES_MAX; res++) /* it places only `need` */
			lacct.v[res] = j->podsets[0].acct->v[res] * need;
	r.nodes_total = e->nlive;
	if (mu__queue_limit_check(e, j->queue, &lacct, &r) >= 0) {
		/* Lower priorities of its own queue may make room under it. */
		bool ok = false;
		j->retry_at = INT64_MAX;
		mu_reason_t tmp = r;
		if (!j->never_preempt && (j->preemptible ||
		    mu__queue_quota_check(e, j->queue, &acct, &tmp) < 0)) {
			int rc = mu__preempt_limit_try(e, jid, now, &r, out, &ok);
			if (rc)
				return rc;
		}
		if (ok)
			return job_admit(e, jid, now, &r, out);
		goto fail;
	}
	if (!j->preemptible && mu__queue_quota_check(e, j->queue, &acct, &r) >= 0)
		goto fail;
	bool short_part;
	int32_t placed = job_place(e, j, need, &r, &short_part);
	if (placed < 0)
		return placed;
	if (placed >= need && !short_part && e->nowed) {
		/* Placed while reservations are owed (and none made, see
		 * mu_engine_cycle): undo, make them, and place again under
		 * them.  A job that does not fit without them does not fit with
		 * them either, so a failure needs no second try. */
		mu__txn_truncate(e, j, 0);
		int rc = mu__resv_settle(e);
		if (rc)
			return rc;
		r = (mu_reason_t){.podset = -1, .limit_queue = -1, .limit_res = -1,
				  .fs_queue = -1, .blocked_by = -1, .nodes_total = e->nlive};
		if ((placed = job_place(e, j, need, &r, &short_part)) < 0)
			return placed;
	}
	if (placed >= need && !short_part) {
		int rc = job_admit(e, jid, now, &r, out);
		return rc ? rc : mu__elastic_note(e, jid);
	}
	mu__txn_truncate(e, j, 0);
	if (r.why != MU_WHY_TOPOLOGY)
		r.why = placed || short_part ? MU_WHY_GANG : MU_WHY_UNSCHEDULABLE;
	r.pods_needed = need;
	r.pods_fit = placed;
	j->retry_at = INT64_MAX;
	if ((e->cfg.preemption || e->cfg.reclaim) && !j->never_preempt) {
		bool ok = false;
		int rc = mu__preempt_try(e, jid, now, &r, out, &ok);
		if (rc)
			return rc;
		if (ok)
			return job_admit(e, jid, now, &r, out);
	}
	if (e->cfg.consolidate && !j->never_preempt && r.why != MU_WHY_TOPOLOGY && free_covers(e, &acct) &&
	    class_free_covers(e, j)) {
		bool ok = false;
		int rc = mu__consolidate_try(e, jid, now, &r, out, &ok);
		if (rc)
			return rc;
		if (ok)
			return job_admit(e, jid, now, &r, out);
	}
fail:
	/* Every tentative bind, the job's and its would-be victims', was
	 * undone exactly: the committed state is the one it started from. */
	e->commit_gen = commit_gen;
	int rc = mu__job_last_set(j, &r);
	if (rc != MU_OK)
		return rc;
	j->failed = true;
	j->fail_gen = e->release_gen;
	j->fail_alloc_gen = e->alloc_gen;
	j->fail_fair_gen = e->fair_gen;
	j->fail_commit_gen = e->commit_gen;
	if (e->order_next < j->retry_at) /* LAS: victims appear by themselves */
		j->retry_at = e->order_next;
	return MU_OK;
}

/* The lowest effective priority among q's preemptible running jobs, into
 * q->min_victim_prio, and how many hold it, into q->mvp_count, when the
 * last job that held it left or effective priorities moved (set_running
 * and set_pending keep both while they are valid).  O(q's running jobs)
 * then, else O(1). */
static void queue_victim_prio(mu_engine_t *e, mu__queue_t *q)
{
	if (q->mvp_valid)
		return;
	q->min_victim_prio = INT32_MAX;
	q->mvp_count = 0;
	e->work += (uint64_t)q->nrunning;
	for (int32_t i = 0; i < q->nrunning; i++) {
		const mu__job_t *j = &e->jobs[q->running[i]];
		if (!j->preemptible || j->eprio > q->min_victim_prio)
			continue;
		if (j->eprio < q->min_victim_prio)
			q->mvp_count = 0;
		q->min_victim_prio = j->eprio;
		q->mvp_count++;
	}
	q->mvp_valid = true;
}

/* Sets the per-cycle counters: untried jobs per subtree, victim bounds.
 * O(queues x depth), plus queue_victim_prio() where jobs stopped. */
static void cycle_init_queues(mu_engine_t *e)
{
	e->nover_quota = 0;
	for (int32_t q = 0; q < e->nqueues; q++) {
		mu__queue_t *qq = &e->queues[q];
		qq->cursor = 0;
		qq->remaining = 0;
		qq->blocked_at = -1;
		queue_victim_prio(e, qq);
		qq->over_quota = false;
		for (int r = 0; r < e->nres && !qq->nchildren; r++)
			if (r != MU_RES_PODS && qq->used.v[r] > qq->deserved.v[r])
				qq->over_quota = true;
		e->nover_quota += qq->over_quota;
	}
	for (int32_t q = 0; q < e->nqueues; q++)
		for (int32_t a = q; a >= 0; a = e->queues[a].parent)
			e->queues[a].remaining += e->queues[q].npending;
}

/* mu__queue_share() of q, cached until its usage or the fair shares
 * change.  O(1) when cached. */
static double queue_share(mu_engine_t *e, mu__queue_t *q)
{
	if (q->share_at != e->share_epoch) {
		q->share = mu__queue_share(e, q);
		q->share_at = e->share_epoch;
	}
	return q->share;
}

/* True if queue a is served before its sibling b. */
static bool queue_before(mu_engine_t *e, int32_t a, int32_t b)
{
	mu__queue_t *x = &e->queues[a], *y = &e->queues[b];
	if (x->priority != y->priority)
		return x->priority > y->priority;
	double sx = queue_share(e, x), sy = queue_share(e, y);
	if (sx != sy)
		return sx < sy;
	return a < b;
}

/* The leaf queue whose next job goes now, or -1.  O(queues). */
static int32_t cycle_pick_leaf(mu_engine_t *e)
{
	int32_t best = -1;
	for (int32_t q = 0; q < e->nqueues; q++)
		if (e->queues[q].parent < 0 && e->queues[q].remaining > 0 &&
		    (best < 0 || queue_before(e, q, best)))
			best = q;
	while (best >= 0 && e->queues[best].nchildren) {
		const mu__queue_t *p = &e->queues[best];
		int32_t next = -1;
		for (int32_t i = 0; i < p->nchildren; i++) {
			int32_t c = p->children[i];
			if (e->queues[c].remaining > 0 &&
			    (next < 0 || queue_before(e, c, next)))
				next = c;
		}
		best = next;
	}
	return best;
}

/* Drops placed jobs from the pending lists and explains the rest.  Jobs a
 * starving head blocked were not tried: they say so. */
static int cycle_finish(mu_engine_t *e, mu_decisions_t *out)
{
	for (int32_t q = 0; q < e->nqueues; q++) {
		mu__queue_t *qq = &e->queues[q];
		int32_t k = 0;
		for (int32_t i = 0; i < qq->npending; i++) {
			int32_t jid = qq->pending[i];
			mu__job_t *j = &e->jobs[jid];
			if (j->nbound == j->npods || j->state == MU_JOB_FINISHED) {
				j->listed = false;
				continue;
			}
			if (qq->blocked_at >= 0 && i >= qq->blocked_at &&
			    j->state == MU_JOB_PENDING) {
				mu_reason_t b;
				memset(&b, 0, sizeof b);
				b.why = MU_WHY_BLOCKED;
				b.blocked_by = qq->pending[0];
				b.podset = b.limit_queue = b.fs_queue = -1;
				int rc = mu__job_last_set(j, &b);
				if (rc)
					return rc;
				j->failed = false;
			}
			qq->pending[k++] = jid;
			mu_decision_t d = {.kind = MU_DEC_PENDING, .job = jid,
					   .podset = -1, .pod = -1, .node = -1,
					   .numa = -1, .nic = -1, .by = -1,
					   .reason = mu__job_last(j)};
			int rc = mu__dec_push(out, &d);
			if (rc)
				return rc;
		}
		qq->npending = k;
	}
	return MU_OK;
}

/* Stops trying the rest of leaf q this cycle: its head job starves. */
static void cycle_block(mu_engine_t *e, int32_t leaf)
{
	mu__queue_t *q = &e->queues[leaf];
	int32_t left = q->npending - q->cursor;
	q->blocked_at = q->cursor;
	q->cursor = q->npending;
	for (int32_t a = leaf; a >= 0; a = e->queues[a].parent)
		e->queues[a].remaining -= left;
}

/* Whether job jid, just tried as its queue's head, starves. */
static bool job_starves(const mu_engine_t *e, int32_t jid, mu_time_t now)
{
	const mu__job_t *j = &e->jobs[jid];
	return e->cfg.starvation_after > 0 && j->state == MU_JOB_PENDING &&
	       now - j->submit >= e->cfg.starvation_after;
}

/* Whether a job's last failure was about fit (not quota or order). */
static bool fit_failure(const mu__job_t *j)
{
	return j->failed && j->last && (j->last->why == MU_WHY_UNSCHEDULABLE ||
					j->last->why == MU_WHY_GANG ||
					j->last->why == MU_WHY_TOPOLOGY);
}

/* FIFO: the first job that cannot start holds back every queue. */
static void cycle_block_all(mu_engine_t *e)
{
	for (int32_t q = 0; q < e->nqueues; q++)
		if (!e->queues[q].nchildren && e->queues[q].cursor < e->queues[q].npending)
			cycle_block(e, q);
}

/* Starts a cycle: last cycle's reservations lapse with its stamp.  O(1). */
static void cycle_reset_backfill(mu_engine_t *e, mu_time_t now)
{
	e->now = now;
	e->cycle_stamp++;
	e->nresv = 0;
	e->nowed = 0;
	e->placing = -1;
	/* Consolidation may examine a sixteenth of the live nodes per cycle,
	 * over all the jobs that try it: a bounded share of the cycle. */
	e->move_nodes_left = (int64_t)e->nlive / 16 + 64;
}

/* Whether j is owed a reservation by its class of service (escalated with
 * the rule reserve): beyond cfg.reservations, in any backfill mode. */
static bool resv_by_service(const mu__job_t *j)
{
	return j->escalated && j->esc == MU_ESC_RESERVE;
}

/* Makes the reservations owed so far, in the order they were owed, until
 * cfg.reservations are made (and those of escalated jobs, beyond).  Called before anything they could restrict
 * (a pod placed, victims or moves sought), so nothing changed since they
 * were owed and they come out as if made at once.  O(reservations x
 * (class nodes + running pods)). */
int mu__resv_settle(mu_engine_t *e)
{
	int32_t n = e->nowed;
	e->nowed = 0;
	for (int32_t i = 0; i < n; i++) {
		if (e->jobs[e->owed[i]].state != MU_JOB_PENDING ||
		    e->jobs[e->owed[i]].resv_stamp == e->cycle_stamp)
			continue; /* finished since (mu_engine_settle), or made */
		if (e->nresv >= e->cfg.reservations && !resv_by_service(&e->jobs[e->owed[i]]))
			continue;
		int rc = mu__resv_make(e, e->owed[i]);
		if (rc)
			return rc;
	}
	return MU_OK;
}

/* Owes blocked job jid a reservation.  A reservation only holds nodes
 * against jobs tried after it, so it is made lazily (mu__resv_settle()),
 * for the owed jobs in order while fewer than cfg.reservations were made:
 * as if each were made at once, since nothing changes in between.
 * O(1) amortized. */
static int resv_owe(mu_engine_t *e, int32_t jid)
{
	if (e->nresv >= e->cfg.reservations && !resv_by_service(&e->jobs[jid]))
		return MU_OK;
	int32_t at = e->jobs[jid].owed_pos;
	if (at >= 0 && at < e->nowed && e->owed[at] == jid)
		return MU_OK; /* owed already (cycle_owe_service); O(1), as a
			       * scan of the list made a cycle with many
			       * blocked jobs quadratic */
	int rc = mu__grow((void **)&e->owed, &e->owed_cap, e->nowed + 1, sizeof *e->owed);
	if (rc)
		return rc;
	e->jobs[jid].owed_pos = e->nowed;
	e->owed[e->nowed++] = jid;
	return MU_OK;
}

int mu_engine_settle(mu_engine_t *e)
{
	if (!e->nowed)
		return MU_OK;
	if (e->owed_alloc != e->alloc_gen || e->owed_release != e->release_gen ||
	    e->owed_node != e->node_gen) {
		e->nowed = 0; /* things moved since: the estimates say it */
		return MU_OK;
	}
	return mu__resv_settle(e);
}

/* Owes the escalated jobs of the rule reserve that are still blocked a
 * reservation before any job is tried, so that it holds against every job
 * of the cycle, not only those tried after them; forgets those that
 * started or ended.  O(such jobs x owed). */
static int cycle_owe_service(mu_engine_t *e)
{
	int32_t k = 0;
	for (int32_t i = 0; i < e->nescres; i++) {
		int32_t jid = e->escres[i];
		const mu__job_t *j = &e->jobs[jid];
		if (j->state != MU_JOB_PENDING || j->nbound || j->start != MU_TIME_NONE)
			continue; /* its wait is over */
		e->escres[k++] = jid;
		int rc = fit_failure(j) && e->cfg.backfill != MU_BACKFILL_NONE ?
			 resv_owe(e, jid) : MU_OK;
		if (rc)
			return rc;
	}
	e->nescres = k;
	return MU_OK;
}

static int cycle_run(mu_engine_t *e, mu_time_t now, mu_decisions_t *out);

/* Recounts the stale counts that job jid was last shown (j->expl->due,
 * explain_budgeted) when this cycle's budget can pay for its class, with
 * no placement search: the caller found its failure still standing
 * (nothing freed since), so only the counts can have moved.  The fresh
 * counts replace those of its reason and are kept to be carried.  Out of
 * budget, or when the counts no longer belong to its reason: nothing
 * (still due, or dropped).  O(class nodes). */
static int expl_refresh(mu_engine_t *e, int32_t jid)
{
	mu__job_t *j = &e->jobs[jid];
	mu__expl_t *x = j->expl;
	int32_t psi = x->ps;
	if (j->npodsets != 1 || psi != 0 || !j->last || j->last->podset != psi) {
		x->due = false; /* its reason is some other one now */
		return MU_OK;
	}
	mu__podset_t *ps = &j->podsets[psi];
	mu__sclass_t *c = &e->classes[ps->sclass];
	if (e->expl_left < c->nnodes)
		return MU_OK; /* a later cycle's budget */
	if (e->aff && mu__aff_involved(e, ps)) {
		x->due = false; /* explained by affinity.c when retried */
		return MU_OK;
	}
	int rc = mu__sclass_refresh(e, c);
	if (rc)
		return rc;
	mu_reason_t r = *j->last;
	e->placing = jid; /* nodes that fit but are reserved for another */
	explain_paid(e, c, ps, psi, &r);
	e->placing = -1;
	memcpy(j->last->fail, r.fail, sizeof r.fail);
	j->last->nodes_total = r.nodes_total;
	expl_keep(e, j, c, ps, psi, &r); /* not due any more */
	x->due = false;                  /* also when it could not be kept */
	if (r.fail[MU_F_RESERVED])
		j->failed = false; /* reservations move: try again next cycle */
	return MU_OK;
}

int mu_engine_cycle(mu_engine_t *e, mu_time_t now, mu_decisions_t *out)
{
	e->expl_left = e->expl_budget; /* fresh explanations this cycle */
	int rc = cycle_run(e, now, out);
	e->expl_left = INT64_MAX;
	return rc;
}

/* One cycle (mu_engine_cycle without the explanation budget's set-up). */
static int cycle_run(mu_engine_t *e, mu_time_t now, mu_decisions_t *out)
{
	bool preempting = e->cfg.preemption || e->cfg.reclaim;
	mu__gpu_models_sync(e); /* the pressure before any score */
	int rc = e->nmaxwait ? mu__maxwait_check(e, now) : MU_OK;
	if (rc == MU_OK)
		rc = mu__fairshare(e, now);
	if (rc)
		return rc;
	cycle_reset_backfill(e, now);
	if (e->nescres && (rc = cycle_owe_service(e)) != MU_OK)
		return rc;
	mu__order_refresh(e);
	cycle_init_queues(e);
	int32_t leaf = -1;
	uint64_t seen_alloc = 0, seen_release = 0;
	for (;;) {
		/* While nothing was bound or freed, shares stand still and the
		 * leaf that went last still goes first while it has jobs. */
		if (leaf < 0 || e->queues[leaf].remaining <= 0 ||
		    e->alloc_gen != seen_alloc || e->release_gen != seen_release)
			leaf = cycle_pick_leaf(e);
		if (leaf < 0)
			break;
		seen_alloc = e->alloc_gen;
		seen_release = e->release_gen;
		mu__queue_t *q = &e->queues[leaf];
		int32_t pos = q->cursor++;
		int32_t jid = q->pending[pos];
		for (int32_t a = leaf; a >= 0; a = e->queues[a].parent)
			e->queues[a].remaining--;
		mu__job_t *j = &e->jobs[jid];
		if (j->state == MU_JOB_FINISHED || j->nbound == j->npods)
			continue;
		/* Nothing freed (and, with preemption, nothing new to evict:
		 * no bind that stayed) since it last failed: it would fail
		 * again. */
		bool cached = j->failed && j->fail_gen == e->release_gen &&
			      (!j->aff || j->fail_alloc_gen == e->alloc_gen) &&
			      (!preempting || (j->fail_commit_gen == e->commit_gen &&
					       j->fail_fair_gen == e->fair_gen &&
					       now < j->retry_at));
		/* Owed reservations are made before anything that they could
		 * restrict.  With none made yet, job_try_inner() makes them only
		 * once the job would place a pod or seek victims. */
		if (!cached && e->nowed && e->nresv && (rc = mu__resv_settle(e)) != MU_OK)
			return rc;
		if (cached && j->expl && j->expl->due && (rc = expl_refresh(e, jid)) != MU_OK)
			return rc;
		if (!cached && (rc = job_try(e, jid, now, out)) != MU_OK)
			return rc;
		if (pos == 0 && j->nbound == 0 && job_starves(e, jid, now))
			cycle_block(e, leaf);
		if (j->nbound == 0 && j->failed) {
			if (e->cfg.backfill == MU_BACKFILL_NONE) {
				cycle_block_all(e);
			} else if ((e->cfg.backfill == MU_BACKFILL_RESERVE ||
				    resv_by_service(j)) &&
				   fit_failure(j) && (rc = resv_owe(e, jid)) != MU_OK) {
				return rc;
			}
		}
	}
	if ((rc = mu__elastic_grow(e, out)) != MU_OK) /* surplus pods, in turns */
		return rc;
	for (int32_t i = 0; i < e->nrelist; i++) /* preempted, back in line */
		if (e->jobs[e->relist[i]].state != MU_JOB_FINISHED &&
		    (rc = mu__queue_pending_insert(e, e->relist[i])) != MU_OK)
			return rc;
	e->owed_alloc = e->alloc_gen;
	e->owed_release = e->release_gen;
	e->owed_node = e->node_gen;
	e->nrelist = 0;
	return cycle_finish(e, out);
}

/* Ends job jid at now: frees its pods and takes it out of its queue; with
 * record, a running job's run time goes into its queue's history.
 * O(pods + pending jobs of its queue). */
static int job_end(mu_engine_t *e, mu_id_t jid, mu_time_t now, bool record)
{
	if (jid < 0 || jid >= e->njobs)
		return MU_ENOENT;
	e->now = now;
	mu__job_t *j = &e->jobs[jid];
	if (j->state == MU_JOB_FINISHED)
		return MU_ESTATE;
	bool had = j->nbound > 0;
	if (record && j->state == MU_JOB_RUNNING)
		mu__history_add(e, j, now - j->start);
	for (int32_t p = 0; p < j->npods; p++)
		mu__pod_release(e, j, p, false);
	if (had)
		e->release_gen++;
	mu__queue_pending_remove(e, jid);
	mu__job_set_pending(e, jid);
	mu__backfill_forget(e, j);
	j->state = MU_JOB_FINISHED;
	free(j->pods);
	j->pods = NULL;
	return MU_OK;
}

int mu_engine_job_finish(mu_engine_t *e, mu_id_t jid, mu_time_t now)
{
	return job_end(e, jid, now, true);
}

int mu_engine_job_withdraw(mu_engine_t *e, mu_id_t jid, mu_time_t now)
{
	return job_end(e, jid, now, false);
}

int mu_engine_job_forget(mu_engine_t *e, mu_id_t jid)
{
	if (jid < 0 || jid >= e->njobs || e->jobs[jid].forgotten)
		return MU_ENOENT;
	mu__job_t *j = &e->jobs[jid];
	if (j->state != MU_JOB_FINISHED)
		return MU_ESTATE;
	int rc = mu__grow((void **)&e->free_jobs, &e->free_jobs_cap, e->nfree_jobs + 1,
			  sizeof *e->free_jobs);
	if (rc)
		return rc;
	mu__job_unbuild(e, j);
	mu__strmap_del(&e->job_names, j->name);
	j->name = NULL;
	j->npods = j->nbound = 0;
	j->forgotten = true;
	e->free_jobs[e->nfree_jobs++] = jid;
	return MU_OK;
}

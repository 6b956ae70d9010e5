/*
 * reclaim.c - reclaim across clusters: a hub queue below its share takes
 * back room from queues above theirs, by withdrawing their jobs.
 *
 * The rules are the engine's (src/engine/preempt.c, docs/policy.md), on
 * hub queues and through the engine's own per-queue predicates
 * (mu_reclaim_within, mu_reclaim_not_above): the claimant's queue path,
 * up to where it parts from the victim's, stays within its deserved
 * quota (KAI's strategy D) or its fair share (F) with the claim once the
 * victims have left; each victim's path is above its deserved quota (F:
 * and its fair share) before it leaves, on the claim's dominant resources.
 * Inside the claimant's own queue the engine's preemption rule holds
 * instead: a strictly lower priority (round 13).  A victim is
 * preemptible, has run cfg.min_runtime, is a victim once only (no
 * eviction storm: a job withdrawn for another is never withdrawn again),
 * and, taken by reclaim, its queue has not lost a job to reclaim within
 * cfg.reclaim_cooldown (the engine's cool-down).  Victims are taken in the
 * engine's order (within their worker's disruption budgets first, round
 * 14: mu_fleet_job_disruptions; other queues' before the claimant's own, then lower
 * priority, fewer GPUs, youngest, earlier submitted) on one cluster until
 * the claimant fits there (mu_engine_job_whatif_without: the cluster's
 * model with them gone), the set is made minimal, and of the clusters the
 * one with the fewest budgets broken, the fewest victims of the claimant's own queue, then the
 * fewest victims, then GPUs, wins (the engine's cost order).  Every
 * waiting job that fits nowhere may claim, queues in the engine's order
 * and each queue's line in its own, at most MU__RECLAIM_CLAIMS searches a
 * pass; one that found nothing is not searched again until the fleet
 * changes.  The victims stay dispatched until
 * the caller has withdrawn them (the exactly-once path: the copy's
 * deletion confirmed, then mu_fleet_job_requeue).  The claimant's room on
 * the winning cluster is held for it (cfg.reclaim_hold): another job goes
 * there only if the claimant still fits once its victims are gone
 * (place.c), until it is placed (tried first once its victims are gone),
 * finished, no longer fits, or the hold lapses; no second claim is made
 * on that cluster meanwhile.  Beside place.c: it
 * calls hubq.c and place.c's gate.
 */
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet_int.h"

/* Claimants searched per pass (each: clusters x (running jobs + up to
 * 2 x MAXV what-ifs)); the rest wait for a later pass. */
#define MU__RECLAIM_CLAIMS 32

/* A candidate victim: a whole job, or one surplus pod of an elastic job
 * (round 17: the engine's gather offers them pod by pod). */
typedef struct rvic {
	int32_t job;
	int32_t pod;        /* 1: one of its surplus pods; 0: the whole job */
	int32_t pdb;        /* 1: taking it breaks its disruption budget */
	int32_t inq;        /* 1: of the claimant's own queue */
	int32_t prio;
	int64_t gpu;
	mu_time_t start;
} rvic_t;

/* The engine's victim order (cmp_victim): within their disruption
 * budgets first, other queues' (borrowed room) before the claimant's own,
 * surplus pods before whole jobs, lower priority, fewer GPUs, the
 * youngest, then the earlier submitted. */
static int cmp_rvic(const void *a, const void *b)
{
	const rvic_t *x = a, *y = b;
	if (x->pdb != y->pdb)
		return x->pdb < y->pdb ? -1 : 1;
	if (x->inq != y->inq)
		return x->inq < y->inq ? -1 : 1;
	if (x->pod != y->pod)
		return x->pod > y->pod ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	if (x->start != y->start)
		return x->start > y->start ? -1 : 1;
	return x->job - y->job;
}

/* 1 when taking `pods` of job v's pods (0: all of them, the whole job)
 * takes more than its worker's disruption budgets let go (the engine's
 * over_budget: a surplus pod counts one). */
static int32_t over_budget(const mu__fjob_t *v, int32_t pods)
{
	if (v->disrupt < 0)
		return 0;
	if (pods == 0)
		for (size_t i = 0; i < v->spec.job->npodsets; i++)
			pods += v->spec.job->podsets[i].replicas;
	return pods > v->disrupt;
}

/* What taking npods of job v's pods (0: all) frees, in accounting units. */
static mu_res_t taken_acct(const mu__fjob_t *v, int32_t npods)
{
	if (npods == 0)
		return mu__job_acct(v->spec.job);
	mu_res_t a = mu__fjob_pod_acct(v);
	for (int r = 0; r < MU_RES_MAX; r++)
		a.v[r] *= npods;
	return a;
}

/* The state of one search: usage gone per queue (victims chosen, their
 * ancestors included), the claim and its dominant resources. */
typedef struct rctx {
	mu_fleet_t *f;
	int32_t *vic;       /* candidate victims (dispatched, preemptible,
	                     * never victims), grouped by cluster */
	int32_t *vat;       /* cluster c's are vic[vat[c] .. vat[c + 1]) */
	mu_time_t retry;    /* the earliest a victim refused for its
	                     * runtime turns eligible */
	mu_res_t *gone;     /* per queue: what victims on their way out use */
	int32_t jq;         /* the claimant's queue */
	int32_t jprio;      /* and its priority */
	mu_res_t claim;
	int dom;
} rctx_t;

static void gone_add(rctx_t *c, int32_t q, const mu_res_t *a, int sign)
{
	for (int d = 0; q >= 0 && d < 16; d++, q = c->f->queues[q].parent)
		for (int r = 0; r < MU_RES_MAX; r++)
			c->gone[q].v[r] += sign * a->v[r];
}

/* q's usage with what is on its way out taken off. */
static mu_res_t used_after(const rctx_t *c, int32_t q)
{
	mu_res_t u = c->f->queues[q].used;
	for (int r = 0; r < MU_RES_MAX; r++)
		u.v[r] -= c->gone[q].v[r];
	return u;
}

/* Whether the claimant's path up to side ja stays within deserved
 * (fair: its fair share) with the claim.  O(depth x resources). */
static bool claimant_ok(const rctx_t *c, int32_t ja, bool fair)
{
	const mu_fleet_t *f = c->f;
	for (int32_t q = c->jq, d = 0; q >= 0 && d < 16; q = f->queues[q].parent, d++) {
		mu_res_t u = used_after(c, q);
		const mu_res_t *b = fair ? &f->queues[q].fair : &f->queues[q].deserved;
		if (!mu_reclaim_within(&u, &c->claim, b, c->dom, MU_RES_NAMED0))
			return false;
		if (q == ja)
			break;
	}
	return true;
}

/* Whether victim v's path up to side va is above deserved (fair: and
 * above its fair share) before it leaves.  O(depth x resources). */
static bool victim_ok(const rctx_t *c, int32_t vq, int32_t va, const mu_res_t *unit, bool fair)
{
	const mu_fleet_t *f = c->f;
	for (int32_t q = vq, d = 0; q >= 0 && d < 16; q = f->queues[q].parent, d++) {
		mu_res_t u = used_after(c, q);
		const mu__hubq_t *qq = &f->queues[q];
		if (mu_reclaim_not_above(&u, unit, &qq->deserved, fair ? &qq->fair : NULL, c->dom,
					 MU_RES_NAMED0) >= 0)
			return false;
		if (q == va)
			break;
	}
	return true;
}

/* Which rule lets victim v go for the claimant: 0 none, 1 deserved
 * quota (D), 2 fair share (F), with the victims before it gone; 3
 * preemption in the claimant's own queue (plan_cluster took only lower
 * priorities there: the engine judges no quota for them).  unit: what
 * the victim frees (its whole job, or one surplus pod, round 17). */
static int rule_of(rctx_t *c, int32_t v, const mu_res_t *unitp)
{
	const mu__fjob_t *vj = &c->f->jobs[v];
	if (vj->queue == c->jq)
		return 3;
	int32_t ja, va;
	mu__hubq_sides(c->f, c->jq, vj->queue, &ja, &va);
	mu_res_t unit = *unitp; /* the whole job's, or one surplus pod's */
	if (victim_ok(c, vj->queue, va, &unit, false)) {
		gone_add(c, vj->queue, &unit, +1);
		bool ok = claimant_ok(c, ja, false);
		gone_add(c, vj->queue, &unit, -1);
		if (ok)
			return 1;
	}
	if (victim_ok(c, vj->queue, va, &unit, true)) {
		gone_add(c, vj->queue, &unit, +1);
		bool ok = claimant_ok(c, ja, true);
		gone_add(c, vj->queue, &unit, -1);
		if (ok)
			return 2;
	}
	return 0;
}

/* Whether claimant j fits on cluster k with set[0..n) gone (cnt[i] of
 * set[i]'s pods, its last ones; 0: all of them). */
static int fits_without(mu_fleet_t *f, int32_t j, int32_t k, const int32_t *set,
			const int32_t *cnt, int32_t n, mu_time_t now, bool *fits)
{
	mu_id_t ids[MU__RECLAIM_MAXV];
	for (int32_t i = 0; i < n; i++)
		ids[i] = f->jobs[set[i]].ejob;
	mu_job_spec_t s = *f->jobs[j].spec.job;
	s.queue = MU__FLEET_QUEUE;
	mu_whatif_t w;
	int rc = mu_engine_job_whatif_without_pods(f->clusters[k].eng, &s, now, ids, cnt, n, &w);
	*fits = rc == MU_OK && w.fits;
	return rc;
}

/* The candidate victims on cluster k for claimant j into cand (at most
 * MAXV x 4 whole jobs and as many surplus pods), sorted; *retry lowered
 * for those refused for their runtime or cool-down.  O(running jobs). */
static int32_t gather(rctx_t *c, int32_t k, mu_time_t now, rvic_t *cand)
{
	mu_fleet_t *f = c->f;
	int32_t nc = 0, nwhole = 0, nsur = 0;
	for (int32_t x = c->vat[k]; x < c->vat[k + 1] && nwhole < MU__RECLAIM_MAXV * 4; x++) {
		int32_t v = c->vic[x];
		const mu__fjob_t *vj = &f->jobs[v];
		bool inq = vj->queue == c->jq;
		if (vj->reclaimed_for >= 0 || vj->was_victim ||
		    (inq && vj->spec.job->priority >= c->jprio))
			continue; /* in its own queue: a lower priority only */
		if (now - vj->dispatched < f->cfg.min_runtime) {
			mu_time_t at = vj->dispatched + f->cfg.min_runtime;
			c->retry = at < c->retry ? at : c->retry;
			continue;
		}
		const mu__hubq_t *vq = &f->queues[vj->queue];
		if (!inq && f->cfg.reclaim_cooldown > 0 && vq->reclaimed &&
		    now - vq->reclaimed_at < f->cfg.reclaim_cooldown) {
			mu_time_t at = vq->reclaimed_at + f->cfg.reclaim_cooldown;
			c->retry = at < c->retry ? at : c->retry;
			continue; /* the engine's cool-down: protected a while */
		}
		/* an elastic job's pods above its minimum, one at a time (the
		 * engine's gather), then the job itself */
		int32_t sur = mu__fjob_surplus(f, vj);
		if (sur > 0) {
			mu_res_t pa = mu__fjob_pod_acct(vj);
			for (int32_t p = 0; p < sur && nsur < MU__RECLAIM_MAXV * 4; p++, nsur++)
				cand[nc++] = (rvic_t){v, 1, over_budget(vj, 1), inq,
						      vj->spec.job->priority, pa.v[MU_RES_GPU],
						      vj->dispatched};
		}
		mu_res_t a = mu__job_acct(vj->spec.job);
		cand[nc++] = (rvic_t){v, 0, over_budget(vj, 0), inq, vj->spec.job->priority,
				      a.v[MU_RES_GPU], vj->dispatched};
		nwhole++;
	}
	if (nc > 1)
		qsort(cand, (size_t)nc, sizeof *cand, cmp_rvic);
	return nc;
}

/* The entry of job v in set[0..n), or -1. */
static int32_t set_find(const int32_t *set, int32_t n, int32_t v)
{
	for (int32_t i = 0; i < n; i++)
		if (set[i] == v)
			return i;
	return -1;
}

/* Candidate x joins the set (set, cnt, rules of *n entries) when a rule
 * lets it go: a surplus pod adds one to its job's entry (none while the
 * whole job is in: it leaves with it, counted once, the engine's
 * dup_pod); the whole job replaces its surplus entry.  Its usage is gone
 * for the rest of the search.  Returns whether it joined. */
static bool set_add(rctx_t *c, const rvic_t *x, int32_t *set, int32_t *cnt, int8_t *rules,
		    int32_t *n)
{
	const mu__fjob_t *vj = &c->f->jobs[x->job];
	int32_t e = set_find(set, *n, x->job);
	if (e >= 0 && cnt[e] == 0)
		return false; /* its whole job is in the set already */
	if (e < 0 && *n >= MU__RECLAIM_MAXV)
		return false;
	mu_res_t unit = taken_acct(vj, x->pod ? 1 : 0);
	mu_res_t was = taken_acct(vj, e >= 0 ? cnt[e] : 0);
	if (e >= 0 && !x->pod) /* its surplus pods leave with it: judged once */
		gone_add(c, vj->queue, &was, -1);
	int rule = rule_of(c, x->job, &unit);
	if (!rule) {
		if (e >= 0 && !x->pod)
			gone_add(c, vj->queue, &was, +1);
		return false;
	}
	gone_add(c, vj->queue, &unit, +1);
	if (e < 0) {
		e = (*n)++;
		set[e] = x->job;
		cnt[e] = 0;
		rules[e] = 0;
	}
	cnt[e] = x->pod ? cnt[e] + 1 : 0;
	rules[e] = (int8_t)(rule > rules[e] ? rule : rules[e]);
	return true;
}

static void set_del(int32_t *set, int32_t *cnt, int8_t *rules, int32_t n, int32_t i)
{
	memmove(set + i, set + i + 1, (size_t)(n - i - 1) * sizeof *set);
	memmove(cnt + i, cnt + i + 1, (size_t)(n - i - 1) * sizeof *cnt);
	memmove(rules + i, rules + i + 1, (size_t)(n - i - 1) * sizeof *rules);
}

static void set_ins(int32_t *set, int32_t *cnt, int8_t *rules, int32_t n, int32_t i, int32_t v,
		    int32_t vc, int8_t vr)
{
	memmove(set + i + 1, set + i, (size_t)(n - i) * sizeof *set);
	memmove(cnt + i + 1, cnt + i, (size_t)(n - i) * sizeof *cnt);
	memmove(rules + i + 1, rules + i, (size_t)(n - i) * sizeof *rules);
	set[i] = v;
	cnt[i] = vc;
	rules[i] = vr;
}

/* The cheapest victim set on cluster k for claimant j: into set (its
 * length returned, 0: none), cnt[] the surplus pods each takes (0: the
 * whole job), rules[] the strategy of each.  O(running jobs + 2 x MAXV
 * what-ifs, and one per surplus pod tried). */
static int32_t plan_cluster(rctx_t *c, int32_t j, int32_t k, mu_time_t now, int32_t *set,
			    int32_t *cnt, int8_t *rules, int *rc)
{
	mu_fleet_t *f = c->f;
	rvic_t cand[MU__RECLAIM_MAXV * 8];
	int32_t nc = gather(c, k, now, cand);
	int32_t n = 0, tries = 0;
	bool fits = false;
	for (int32_t i = 0; i < nc && n < MU__RECLAIM_MAXV && tries < MU__RECLAIM_MAXV * 2 && !fits;
	     i++) {
		if (!set_add(c, &cand[i], set, cnt, rules, &n))
			continue;
		tries++;
		if ((*rc = fits_without(f, j, k, set, cnt, n, now, &fits)) != MU_OK)
			break;
	}
	for (int32_t i = 0; i < n; i++) { /* this search's usage back */
		mu_res_t a = taken_acct(&f->jobs[set[i]], cnt[i]);
		gone_add(c, f->jobs[set[i]].queue, &a, -1);
	}
	if (*rc || !fits)
		return 0;
	/* made minimal: a surplus pod, then a victim, whose staying still
	 * lets it fit stays (the others still hold by the rules: fewer leave
	 * before them) */
	for (int32_t i = 0; i < n;) {
		bool still = false;
		if (cnt[i] > 1) {
			cnt[i]--;
			if ((*rc = fits_without(f, j, k, set, cnt, n, now, &still)) != MU_OK)
				return 0;
			if (!still)
				cnt[i++]++;
			continue;
		}
		if (n == 1)
			break;
		int32_t keep = set[i], kc = cnt[i];
		int8_t kr = rules[i];
		set_del(set, cnt, rules, n, i);
		if ((*rc = fits_without(f, j, k, set, cnt, n - 1, now, &still)) != MU_OK)
			return 0;
		if (still) {
			n--;
			continue;
		}
		set_ins(set, cnt, rules, n - 1, i, keep, kc, kr);
		i++;
	}
	return n;
}

static int push(mu_fleet_reclaims_t *out, const mu_fleet_reclaim_t *x)
{
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 16;
		mu_fleet_reclaim_t *v = realloc(out->v, cap * sizeof *v);
		if (!v)
			return MU_ENOMEM;
		out->v = v;
		out->cap = cap;
	}
	out->v[out->n++] = *x;
	return MU_OK;
}

/* Tries claimant j: the cluster needing the fewest victims (then GPUs),
 * recorded and appended to out.  *done when it got some. */
static int claim_one(rctx_t *c, int32_t j, mu_time_t now, mu_fleet_reclaims_t *out, bool *done)
{
	mu_fleet_t *f = c->f;
	int32_t set[MU__RECLAIM_MAXV], best[MU__RECLAIM_MAXV];
	int32_t cnt[MU__RECLAIM_MAXV], bcnt[MU__RECLAIM_MAXV];
	int8_t rules[MU__RECLAIM_MAXV], brules[MU__RECLAIM_MAXV];
	int32_t bn = 0, bk = -1, binq = 0, bpdb = 0, bwhole = 0, bpods = 0;
	int64_t bgpu = 0;
	*done = false;
	c->jq = f->jobs[j].queue;
	c->jprio = f->jobs[j].spec.job->priority;
	c->claim = mu__job_acct(f->jobs[j].spec.job);
	c->dom = mu_quota_dominant(&c->claim);
	for (int32_t k = 0; k < f->nclusters; k++) {
		const char *why = mu__fleet_gate(f, j, k, now);
		if (why && strcmp(why, "no fit") != 0)
			continue;
		const mu__cluster_t *kc = &f->clusters[k];
		if (kc->hold_job >= 0 && kc->hold_job != j && now < kc->hold_until)
			continue; /* one claimant's room at a time per cluster */
		int rc = MU_OK;
		int32_t n = plan_cluster(c, j, k, now, set, cnt, rules, &rc);
		if (rc)
			return rc;
		if (n == 0)
			continue;
		int64_t gpu = 0;
		int32_t inq = 0, pdb = 0, whole = 0, pods = 0;
		for (int32_t i = 0; i < n; i++) {
			gpu += taken_acct(&f->jobs[set[i]], cnt[i]).v[MU_RES_GPU];
			/* as the engine's cost: each pod of its own queue's */
			inq += rules[i] == 3 ? (cnt[i] > 0 ? cnt[i] : 1) : 0;
			pdb += over_budget(&f->jobs[set[i]], cnt[i]);
			whole += cnt[i] == 0;
			pods += cnt[i];
		}
		/* the engine's cost: budgets broken (kube-scheduler's first
		 * criterion), its own queue's victims, then jobs stopped, then
		 * surplus pods taken, then GPUs */
		if (bk < 0 || pdb < bpdb ||
		    (pdb == bpdb &&
		     (inq < binq ||
		      (inq == binq &&
		       (whole < bwhole ||
			(whole == bwhole && (pods < bpods || (pods == bpods && gpu < bgpu)))))))) {
			bk = k;
			bpdb = pdb;
			bn = n;
			binq = inq;
			bwhole = whole;
			bpods = pods;
			bgpu = gpu;
			memcpy(best, set, (size_t)n * sizeof *set);
			memcpy(bcnt, cnt, (size_t)n * sizeof *cnt);
			memcpy(brules, rules, (size_t)n * sizeof *rules);
		}
	}
	if (bk < 0)
		return MU_OK;
	for (int32_t i = 0; i < bn; i++) {
		mu__fjob_t *v = &f->jobs[best[i]];
		mu_fleet_reclaim_t x = {best[i], j, bk, v->gen, brules[i] == 2, brules[i] == 3, bcnt[i]};
		int rc = push(out, &x);
		if (rc)
			return rc;
		if (brules[i] != 3) { /* lost to reclaim: its cool-down starts */
			f->queues[v->queue].reclaimed = true;
			f->queues[v->queue].reclaimed_at = now;
		}
		v->reclaimed_for = j;
		v->reclaim_out = true;
		v->shrink_out = bcnt[i]; /* > 0: only these pods, a shrink */
		mu_res_t a = taken_acct(v, bcnt[i]);
		gone_add(c, v->queue, &a, +1); /* on its way out for the rest */
	}
	f->jobs[j].victims = bn;
	if (f->cfg.reclaim_hold > 0) { /* the room is j's: held for it */
		mu__fleet_hold_drop(f, j);
		f->clusters[bk].hold_job = j;
		f->clusters[bk].hold_until = now + f->cfg.reclaim_hold;
		memcpy(f->clusters[bk].hold_vic, best, (size_t)bn * sizeof *best);
		f->clusters[bk].hold_nvic = bn;
		f->jobs[j].hold = bk;
	}
	*done = true;
	return MU_OK;
}

/* Queue order for claimants, the engine's: the higher queue priority,
 * then the lower dominant share. */
typedef struct qkey {
	int32_t prio;
	double share;
	int32_t q;
} qkey_t;

static int cmp_qkey(const void *a, const void *b)
{
	const qkey_t *x = a, *y = b;
	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if (x->share != y->share)
		return x->share < y->share ? -1 : 1;
	return x->q - y->q;
}

/* Whether queued job j may claim now: it fits nowhere, has no victims on
 * their way out, and something moved since it last found none (the
 * fleet's room, usage or jobs, or a victim refused for its runtime or a
 * cool-down came of age).  O(1). */
static bool may_claim(const mu_fleet_t *f, int32_t j, mu_time_t now)
{
	const mu__fjob_t *fj = &f->jobs[j];
	/* a job with DRA claims claims nothing: the what-if without victims
	 * counts no devices, so it could withdraw jobs and still find none
	 * (docs/dispatch.md, "DRA claims in the hub's model", Gaps) */
	if (fj->state != MU_FJ_QUEUED || fj->why != MU_FW_NO_FIT || fj->victims != 0 ||
	    fj->spec.dra)
		return false;
	return !(fj->rc_epoch == f->epoch && fj->rc_usage == f->usage_gen &&
		 fj->rc_njobs == f->njobs && now < fj->rc_retry);
}

/* The candidate victims, grouped by cluster (a counting sort), and the
 * usage of victims still on their way out, into c.  O(jobs + clusters). */
static int index_victims(rctx_t *c)
{
	mu_fleet_t *f = c->f;
	c->vat = calloc((size_t)f->nclusters + 1, sizeof *c->vat);
	int32_t n = 0;
	for (int32_t v = 0; c->vat && v < f->njobs; v++) {
		const mu__fjob_t *vj = &f->jobs[v];
		if (vj->state != MU_FJ_DISPATCHED)
			continue;
		if (vj->reclaim_out) { /* on its way out: gone already (a
					* shrink: its pods going only) */
			mu_res_t a = taken_acct(vj, vj->shrink_out);
			gone_add(c, vj->queue, &a, +1);
		} else if (vj->spec.job->preemptible && vj->reclaimed_for < 0 && !vj->was_victim) {
			c->vat[vj->cluster + 1]++;
			n++;
		}
	}
	c->vic = malloc((size_t)(n ? n : 1) * sizeof *c->vic);
	int32_t *at = malloc(((size_t)f->nclusters + 1) * sizeof *at);
	if (!c->vat || !c->vic || !at) {
		free(at);
		return MU_ENOMEM;
	}
	for (int32_t k = 0; k < f->nclusters; k++)
		c->vat[k + 1] += c->vat[k];
	memcpy(at, c->vat, ((size_t)f->nclusters + 1) * sizeof *at);
	for (int32_t v = 0; v < f->njobs; v++) {
		const mu__fjob_t *vj = &f->jobs[v];
		if (vj->state == MU_FJ_DISPATCHED && !vj->reclaim_out && vj->spec.job->preemptible &&
		    vj->reclaimed_for < 0 && !vj->was_victim)
			c->vic[at[vj->cluster]++] = v;
	}
	free(at);
	return MU_OK;
}

/* The search's state, made once the first claimant is met (most passes
 * have none): the usage gone per queue and the candidate victims.  O(jobs
 * + clusters). */
static int rctx_init(rctx_t *c, mu_fleet_t *f)
{
	c->f = f;
	c->gone = calloc((size_t)f->nqueues, sizeof *c->gone);
	return c->gone ? index_victims(c) : MU_ENOMEM;
}

/* Searches victims for claimant j, and remembers a search that found
 * none (not again before something moves).  O(one claim_one). */
static int claim_try(rctx_t *c, int32_t j, mu_time_t now, mu_fleet_reclaims_t *out)
{
	mu_fleet_t *f = c->f;
	bool done;
	c->retry = INT64_MAX;
	int rc = claim_one(c, j, now, out, &done);
	mu__fjob_t *fj = &f->jobs[j];
	if (rc == MU_OK && !done) {
		fj->rc_epoch = f->epoch;
		fj->rc_usage = f->usage_gen;
		fj->rc_njobs = f->njobs;
		fj->rc_retry = c->retry;
	}
	return rc;
}

int mu_fleet_reclaim(mu_fleet_t *f, mu_time_t now, mu_fleet_reclaims_t *out)
{
	if (!f || !out)
		return MU_EINVAL;
	if (f->nqueues == 0)
		return MU_OK;
	qkey_t *qs = malloc((size_t)f->nqueues * sizeof *qs);
	if (!qs)
		return MU_ENOMEM;
	for (int32_t q = 0; q < f->nqueues; q++)
		qs[q] = (qkey_t){f->queues[q].priority, mu__hubq_share(f, q), q};
	qsort(qs, (size_t)f->nqueues, sizeof *qs, cmp_qkey);
	rctx_t c = {0};
	bool ready = false;
	int rc = MU_OK;
	int32_t tries = 0;
	/* every waiting job, queues in order and each line in its own (the
	 * lines as the last dispatch pass sorted them; entries no longer
	 * queued are passed over) */
	for (int32_t i = 0; rc == MU_OK && i < f->nqueues && tries < MU__RECLAIM_CLAIMS; i++) {
		const mu__hubq_t *q = &f->queues[qs[i].q];
		for (int32_t k = 0; rc == MU_OK && k < q->nline && tries < MU__RECLAIM_CLAIMS; k++) {
			int32_t j = q->line[k].job;
			if (!may_claim(f, j, now))
				continue;
			if (!ready && (rc = rctx_init(&c, f)) != MU_OK)
				break;
			ready = true;
			tries++;
			rc = claim_try(&c, j, now, out);
		}
	}
	free(c.gone);
	free(c.vic);
	free(c.vat);
	free(qs);
	return rc;
}

int mu_fleet_job_mark_victim_for(mu_fleet_t *f, mu_id_t j, mu_id_t claimant, mu_time_t now)
{
	if (!f || j < 0 || j >= f->njobs || claimant < 0 || claimant >= f->njobs || j == claimant)
		return MU_ENOENT;
	mu__fjob_t *v = &f->jobs[j], *c = &f->jobs[claimant];
	v->was_victim = true;
	if (v->state != MU_FJ_DISPATCHED || c->state != MU_FJ_QUEUED || v->reclaimed_for >= 0)
		return MU_ESTATE;
	mu__cluster_t *k = &f->clusters[v->cluster];
	bool held = k->hold_job == claimant;
	if (f->cfg.reclaim_hold > 0 && !held &&
	    ((k->hold_job >= 0 && now < k->hold_until) || c->hold >= 0))
		return MU_ESTATE; /* another's room there, or its own elsewhere */
	if (held && k->hold_nvic >= MU__RECLAIM_MAXV)
		return MU_ESTATE;
	v->reclaimed_for = (int32_t)claimant;
	v->reclaim_out = true;
	c->victims++;
	if (f->cfg.reclaim_hold > 0) {
		if (!held) {
			if (k->hold_job >= 0) /* a lapsed one */
				mu__fleet_hold_drop(f, k->hold_job);
			k->hold_job = (int32_t)claimant;
			k->hold_nvic = 0;
			c->hold = v->cluster;
		}
		k->hold_until = now + f->cfg.reclaim_hold;
		k->hold_vic[k->hold_nvic++] = (int32_t)j;
	}
	return MU_OK;
}

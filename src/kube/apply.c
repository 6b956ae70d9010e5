/*
 * apply.c - decisions to writes, and the outcomes of those writes.
 *
 * The main loop turns a cycle's decisions into requests: a BIND becomes a
 * Binding (POST pods/NAME/binding) whose metadata.annotations carry the
 * devices (muster.io/gpus, numa, nic, cpus): the API server copies a
 * Binding's annotations onto the pod in the same write that sets its node,
 * so the devices are on the pod before (never after) it is bound.  An
 * EVICT becomes an Eviction (policy/v1), retried on 429 with backoff, or a
 * Job suspension (jobs.c).  A PENDING reason becomes the PodScheduled=False
 * condition and a FailedScheduling event, written only when the message
 * changes.  The requests go out through the write path (write.c); bind
 * and eviction outcomes come back here, and a failed bind is undone by
 * re-syncing the pod's group.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/daemon_int.h"


/* --- writes the main loop makes ------------------------------------------------- */

/* The pod of an engine decision of a SINGLE/GANG group, or NULL. */
static mu__kpod_t *dec_pod(const mu__kgroup_t *g, const mu_decision_t *dec)
{
	if (dec->podset < 0 || dec->podset >= g->nps)
		return NULL;
	int32_t at = g->ps_first[dec->podset] + dec->pod;
	return at >= 0 && at < g->nepods ? g->epods[at] : NULL;
}

/* A pending reason to the group's unbound pods (or its Job). */
static void apply_pending(mu__kd_t *d, mu__kgroup_t *g, const mu_decision_t *dec)
{
	if (g->last && !memcmp(g->last, &dec->reason, sizeof *g->last))
		return;
	char msg[2048];
	int n = mu_reason_format(d->e, &dec->reason, msg, sizeof msg);
	if (n >= 0 && (size_t)n + 4 < sizeof msg && /* each pool's reason */
	    mu_engine_pool_explain(d->e, dec->job, msg + n + 3, sizeof msg - (size_t)n - 3) > 0)
		memcpy(msg + n, " | ", 3);
	if (!g->last)
		g->last = malloc(sizeof *g->last);
	if (g->last)
		*g->last = dec->reason;
	if (g->wl_susp) {
		mu__kd_wl_pending(d, g, msg);
		return;
	}
	if (g->kind == MU__KG_JOB && g->admitted) {
		/* admitted elsewhere (a hub's copy) and not placed here: its
		 * pods say why, as kube-scheduler's failed attempt does (and
		 * those that come later, from g->msg: jobs.c, fill_slots) */
		free(g->msg);
		g->msg = strdup(msg);
		for (int32_t i = 0; i < g->npods; i++) {
			mu__kpod_t *p = g->pods[i];
			if (p->slot < 0 && !p->node && !p->an_node && !p->terminal && !p->deleting && !p->gated)
				mu__kd_pod_pending(d, p, msg);
		}
		return;
	}
	if (g->kind == MU__KG_JOB) {
		if (g->msg && !strcmp(g->msg, msg))
			return;
		free(g->msg);
		g->msg = strdup(msg);
		mu__kd_event_write(d, "Job", "batch/v1", g->ns, g->name, mu__kjs(g->job, "metadata.uid"),
				   "Warning", "FailedScheduling", msg);
		return;
	}
	for (int32_t i = 0; i < g->nepods; i++) {
		mu__kpod_t *p = g->epods[i];
		if (p && !p->node && !p->an_node)
			mu__kd_pod_pending(d, p, p->dra_msg ? p->dra_msg : msg);
	}
}

/* The move's bind that goes with eviction x (the same pod), into *out,
 * or NULL.  O(decisions); a cycle moves at most its move budget's pods. */
static const mu_decision_t *move_bind(const mu__kdecs_t *dec, const mu_decision_t *x, mu_decision_t *out)
{
	for (size_t i = 0; x->move && i < dec->n; i++) {
		const mu__kdec_t *b = &dec->v[i];
		if (b->kind == MU_DEC_BIND && b->move && b->job == x->job && b->podset == x->podset &&
		    b->pod == x->pod)
			return mu__kdecs_get(dec, i, out);
	}
	return NULL;
}

/* An eviction of a pod of a SINGLE/GANG group; for a move (bind: where
 * it goes), the place of its replacement is recorded before the eviction
 * is sent (move.c). */
static void apply_evict(mu__kd_t *d, mu__kgroup_t *g, const mu_decision_t *dec, const mu_decision_t *bind)
{
	mu__kpod_t *p = dec_pod(g, dec);
	if (!p || p->evicting)
		return;
	char msg[512];
	mu__kgroup_t *by = dec->by >= 0 && dec->by < d->ej_cap ? d->ej_group[dec->by] : NULL;
	snprintf(msg, sizeof msg, "%s by muster%s%s%s", dec->move ? "moved" : "preempted",
		 by ? " to make room for " : "", by ? by->key + 2 : "",
		 dec->suspend ? " (the whole gang is suspended)" :
		 dec->move ? " (its controller's next pod gets a place held on another node)" : "");
	if (bind)
		mu__kd_move_plan(d, p, mu__kd_queue_of(d, g), mu_engine_node_name(d->e, bind->node), bind,
				 mu__kd_evict_work(d, p, "Preempted", msg));
	else
		mu__kd_evict(d, p, "Preempted", msg);
	mu__kd_leaving_note(d, p);
	mu__kd_mark_dirty(d, g);
	int32_t left = 0; /* an admitted workload below its minimum: suspended again */
	for (int32_t i = 0; i < g->npods; i++) {
		const mu__kpod_t *q = g->pods[i];
		left += !q->terminal && (q->node || q->an_node) && !q->deleting && !q->evicting;
	}
	if (g->wl_admitted && left < g->min_member)
		mu__kd_wl_resuspend(d, g, "Preempted", msg);
}

/* One pass over the decisions (O(decisions), writes queued, nothing
 * waits), then admitted Jobs are un-suspended and their slots handed out. */
void mu__kd_apply(mu__kd_t *d, const mu__kdecs_t *dec, mu_time_t now)
{
	mu_decision_t xb, mb;
	for (size_t i = 0; i < dec->n; i++) {
		const mu_decision_t *x = mu__kdecs_get(dec, i, &xb);
		mu__kgroup_t *g = x->job >= 0 && x->job < d->ej_cap ? d->ej_group[x->job] : NULL;
		if (!g)
			continue;
		switch (x->kind) {
		case MU_DEC_BIND:
			if (g->wl_hold && g->nps == 0) {
				mu__kd_wl_admit(d, g, x); /* its template job was placed */
			} else if (g->kind == MU__KG_JOB) {
				mu__kd_job_bind(d, g, x);
			} else {
				mu__kpod_t *p = dec_pod(g, x);
				const char *node = mu_engine_node_name(d->e, x->node);
				if (x->move && p && p->evicting) {
					/* its replacement's place: planned with its eviction */
				} else if (p && !p->node && p->dra && !mu__kd_dra_bind(d, p, node)) {
					/* its claims did not fit there after all: place again */
					mu__kd_finish(d, g, now, false);
					mu__kd_mark_dirty(d, g);
				} else if (p && !p->node) {
					mu__kd_bind_or_hold(d, p, node, x);
				}
			}
			break;
		case MU_DEC_EVICT:
			if (g->kind == MU__KG_JOB)
				mu__kd_job_evict(d, g, x);
			else if (g->kind != MU__KG_EXTERNAL)
				apply_evict(d, g, x, move_bind(dec, x, &mb));
			break;
		case MU_DEC_PENDING:
			apply_pending(d, g, x);
			break;
		}
	}
	for (size_t i = 0; i < dec->n; i++) { /* workloads whose templates were placed */
		const mu__kdec_t *x = &dec->v[i];
		mu__kgroup_t *g = x->job >= 0 && x->job < d->ej_cap ? d->ej_group[x->job] : NULL;
		if (g && x->kind == MU_DEC_BIND && g->wl_hold && g->nps == 0 && !g->wl_admitted)
			mu__kd_wl_admitted(d, g);
	}
	for (size_t i = 0; i < dec->n; i++) {
		const mu__kdec_t *x = &dec->v[i];
		mu__kgroup_t *g = x->job >= 0 && x->job < d->ej_cap ? d->ej_group[x->job] : NULL;
		if (g && g->kind == MU__KG_JOB && x->kind != MU_DEC_PENDING)
			mu__kd_job_after_cycle(d, g);
	}
}

/* Takes back in the engine the bind of pod p (of a SINGLE/GANG group) to
 * node that did not go through.  False when the engine does not have p
 * bound there (its group was re-planned, or the pod moved meanwhile).
 * O(resources). */
static bool unbind(mu__kd_t *d, const mu__kpod_t *p, const char *node)
{
	const mu__kgroup_t *g = p->g;
	if (g->ej < 0 || p->ps < 0 || !node)
		return false;
	mu_id_t nid = mu_engine_node_find(d->e, node);
	return nid >= 0 && mu_engine_pod_node(d->e, g->ej, p->ps, p->idx) == nid &&
	       mu_engine_pod_unbind(d->e, g->ej, p->ps, p->idx, mu__k_now_ms()) == MU_OK;
}

/* One finished bind or eviction.  A failed bind is taken back in the
 * engine (mu_engine_pod_unbind), which places the pod again; an eviction
 * that finally failed (after its 429 retries) puts the pod back as holding
 * its room by re-syncing its group (its engine job finished and submitted
 * again, the pods that are bound replayed). */
static void outcome(mu__kd_t *d, mu__kwork_t *w)
{
	mu__kpod_t *p = w->pod_key ? mu__kmap_get(&d->pods, w->pod_key) : NULL;
	bool ok = w->status >= 200 && w->status < 300;
	if (w->kind == MU__KW_EVICT) {
		if (ok || w->status == 404)
			return;
		d->wfailed = true;
		mu__klog(&d->log, 0, "evict %s: HTTP %ld %.200s | pod=%s", w->pod_key, w->status,
			 w->answer ? w->answer : "", w->pod_key);
		if (p && !p->deleting) { /* still there: it holds its room again */
			p->evicting = false;
			if (d->nmoves)
				mu__kd_move_forget(d, p, mu__k_now_ms());
			if (p->g) {
				if (p->g->kind != MU__KG_JOB)
					mu__kd_finish(d, p->g, mu__k_now_ms(), false);
				mu__kd_mark_dirty(d, p->g);
			}
		}
		return;
	}
	if (w->status == 409 && w->answer && w->node) {
		/* a bind sent again after no answer: the first one landed */
		char same[400];
		snprintf(same, sizeof same, "already assigned to node \\\"%s\\\"", w->node);
		ok = strstr(w->answer, same) != NULL;
	}
	pthread_mutex_lock(&d->m.mu);
	if (ok)
		d->m.binds++;
	else
		d->m.bind_errors++;
	if (ok && p)
		mu__kd_metrics_hist(d->m.e2e_hist, (double)(mu__k_mono_ms() - p->pending_since));
	if (ok && p)
		d->m.e2e_sum += (double)(mu__k_mono_ms() - p->pending_since) / 1000.0;
	pthread_mutex_unlock(&d->m.mu);
	if (!p)
		return;
	if (ok) {
		char msg[600];
		snprintf(msg, sizeof msg, "Successfully assigned %s to %s", p->key, w->node);
		mu__kd_event_write(d, "Pod", "v1", p->ns, p->name, p->uid, "Normal", "Scheduled", msg);
		if (!p->node)
			p->node = w->node ? strdup(w->node) : NULL;
		free(p->an_node);
		p->an_node = NULL;
		free(p->msg);
		p->msg = NULL;
		if (p->g && p->g->kind == MU__KG_SINGLE) { /* pending again: say why again */
			free(p->g->last);
			p->g->last = NULL;
		}
		return;
	}
	d->wfailed = true;
	mu__klog(&d->log, 1, "bind %s to %s: HTTP %ld %.200s | pod=%s node=%s", p->key, w->node, w->status,
		 w->answer ? w->answer : "", p->key, w->node);
	if (p->node) /* bound after all (a 409 after a restart) */
		return;
	free(p->an_node);
	p->an_node = NULL;
	if (p->g) {
		if (p->g->kind == MU__KG_JOB && p->slot >= 0) {
			p->g->slots[p->slot].pod = NULL;
			p->slot = -1;
		}
		/* the engine takes the bind back and places the pod again; if
		 * it no longer has the pod there, re-plan the whole group */
		if (p->g->kind != MU__KG_JOB && !unbind(d, p, w->node))
			mu__kd_finish(d, p->g, mu__k_now_ms(), false);
		mu__kd_mark_dirty(d, p->g);
	}
}

void mu__kd_outcomes(mu__kd_t *d)
{
	pthread_mutex_lock(&d->wq.mu);
	mu__kwork_t *w = d->wq.done;
	d->wq.done = NULL;
	pthread_mutex_unlock(&d->wq.mu);
	/* oldest first */
	mu__kwork_t *rev = NULL;
	while (w) {
		mu__kwork_t *n = w->next;
		w->next = rev;
		rev = w;
		w = n;
	}
	while (rev) {
		mu__kwork_t *n = rev->next;
		outcome(d, rev);
		mu__kwork_free(rev);
		rev = n;
		d->changed = true;
	}
}

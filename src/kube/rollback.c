/*
 * rollback.c - no stranded partial gangs, and gangs that restart together.
 *
 * A gang (a PodGroup with minMember > 1) can end up with some of its pods
 * bound and the rest unplaceable: the scheduler was killed while it wrote
 * the gang's binds and other pods took the room before it came back, or a
 * node with some of its pods went away.  Those bound pods hold capacity
 * that nothing else can use and the gang cannot start.  KAI-Scheduler
 * calls such a gang stale and evicts it after a grace period (its
 * stalegangeviction action, 60 s by default); muster does the same:
 *
 *   - a gang is stale while 0 < (its pods bound or being bound, not
 *     finished, not leaving) < minMember;
 *   - a gang any of whose pods has Succeeded is never stale: it is
 *     completing, and evicting the rest would throw away finished work
 *     (the failure of KAI issue #1968);
 *   - once a gang has been stale for the grace period (--gang-rollback,
 *     negative = never), its bound pods are evicted with a GangRolledBack
 *     event on each pod and on the PodGroup, and the gang waits for all of
 *     its pods again.  Pods that a controller owns come back and are
 *     placed together; bare pods are gone, as with any eviction.
 *
 * A gang also recovers from failures together: when one of its pods has
 * Failed (its process failed, or its node was lost) while others still
 * run, the others are evicted at once (GangRestart events), so that its
 * controller starts the whole gang again rather than leaving the survivors
 * waiting for a peer that is gone.  A PodGroup annotated
 * muster.io/on-pod-failure: ignore keeps its survivors running (for
 * workloads that replace one pod at a time, such as elastic training);
 * if the replacement cannot be placed, the gang is below its minMember
 * and the stale-gang rule above applies to it.
 *
 * A workload muster admitted (suspend until admitted, wl.c) is not
 * restarted in place: it is suspended again and requeued, as Kueue evicts
 * a workload (mu__kd_wl_resuspend), and its controller removes its pods.
 *
 * The check runs after cycles, at most once a second, in O(groups).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"

typedef struct scan {
	mu__kd_t *d;
	int64_t now;            /* monotonic ms */
	mu__kgroup_t **stale;   /* groups to roll back or restart */
	int32_t n, cap;
} scan_t;

/* Pods of g that hold or are about to hold a node, that Succeeded, and
 * that Failed. */
static void count(const mu__kgroup_t *g, int32_t *active, int32_t *done, int32_t *failed)
{
	*active = *done = *failed = 0;
	for (int32_t i = 0; i < g->npods; i++) {
		const mu__kpod_t *p = g->pods[i];
		if (p->failed)
			(*failed)++;
		else if (p->terminal)
			(*done)++;
		else if ((p->node || p->an_node) && !p->deleting && !p->evicting)
			(*active)++;
	}
}

/* Whether g is a gang with a failed pod and survivors to stop now. */
static bool must_restart(const mu__kgroup_t *g, int32_t active, int32_t failed)
{
	return failed > 0 && active > 0 && !g->keep_on_failure;
}

/* kmap callback: updates g's stale mark; collects g once its grace ran out. */
static void visit(void *arg, void *val)
{
	scan_t *s = arg;
	mu__kgroup_t *g = val;
	if (g->kind != MU__KG_GANG || g->min_member <= 1) {
		g->stale_since = 0;
		return;
	}
	int32_t active, done, failed;
	count(g, &active, &done, &failed);
	bool restart = must_restart(g, active, failed);
	if (!restart && (done > 0 || active == 0 || active >= g->min_member)) {
		g->stale_since = 0;
		return;
	}
	if (!restart && !g->stale_since) {
		g->stale_since = s->now;
		return;
	}
	if (!restart && (s->d->o->gang_rollback_ms < 0 ||
			 s->now - g->stale_since < s->d->o->gang_rollback_ms))
		return;
	if (s->n == s->cap) {
		int32_t cap = s->cap ? s->cap * 2 : 16;
		mu__kgroup_t **nv = realloc(s->stale, (size_t)cap * sizeof *nv);
		if (!nv)
			return; /* tried again on the next pass */
		s->stale = nv;
		s->cap = cap;
	}
	s->stale[s->n++] = g;
}

/* Evicts the bound pods of gang g (stale, or with a failed pod) and says
 * why, on each pod and on the PodGroup. */
static void roll_back(mu__kd_t *d, mu__kgroup_t *g, int64_t now)
{
	int32_t active, done, failed;
	count(g, &active, &done, &failed);
	bool restart = must_restart(g, active, failed);
	const char *reason = restart ? "GangRestart" : "GangRolledBack";
	char msg[700];
	if (restart)
		snprintf(msg, sizeof msg,
			 "gang %s/%s lost %d of its pods (Failed): muster stops the other %d so that the "
			 "gang restarts together", g->ns, g->name, (int)failed, (int)active);
	else
		snprintf(msg, sizeof msg,
			 "gang %s/%s had %d of its minMember %d pods bound for %llds and could not place "
			 "the rest: muster evicts them so that the gang starts again, together",
			 g->ns, g->name, (int)active, (int)g->min_member,
			 (long long)((now - g->stale_since) / 1000));
	/* an admitted workload: queued again (Kueue's reason for a workload
	 * whose pods did not all start in time is PodsReadyTimeout) */
	if (mu__kd_wl_resuspend(d, g, restart ? "GangRestart" : "PodsReadyTimeout", msg)) {
		g->stale_since = 0;
		return;
	}
	for (int32_t i = 0; i < g->npods; i++) {
		mu__kpod_t *p = g->pods[i];
		if (!p->terminal && (p->node || p->an_node) && !p->deleting && !p->evicting)
		{
			mu__kd_evict(d, p, reason, msg);
			mu__kd_leaving_note(d, p);
		}
	}
	bool muster = g->key[0] == 'm';
	const json_t *pg = mu__kmap_get(muster ? &d->mpgs : &d->xpgs, g->key);
	if (g->key[0] != 'w') /* a workload kind's group: the events on its pods say it */
		mu__kd_event_write(d, "PodGroup", muster ? "muster.io/v1alpha1" : "scheduling.x-k8s.io/v1alpha1",
				   g->ns, g->name, mu__kjs(pg, "metadata.uid"), "Warning", reason, msg);
	mu__klog(&d->log, 1, "%s | group=%s", msg, g->key);
	g->stale_since = 0;
	mu__kd_mark_dirty(d, g);
}

void mu__kd_gang_rollback(mu__kd_t *d)
{
	int64_t now = mu__k_mono_ms();
	if (now - d->last_rollback < 1000)
		return;
	d->last_rollback = now;
	scan_t s = {.d = d, .now = now};
	mu__kmap_each(&d->groups, visit, &s);
	for (int32_t i = 0; i < s.n; i++)
		roll_back(d, s.stale[i], now);
	free(s.stale);
}

/*
 * release.c - binds that wait for the pods leaving their node.
 *
 * When muster evicts a pod (preemption, reclaim, a gang rollback) or a user
 * deletes one, the pod keeps its node, and its devices, until its
 * containers stop: up to its termination grace period.  The engine counts
 * that room as free the moment it decides the eviction, and places the
 * claimant there at once.  Binding the claimant then would put two pods on
 * the same GPUs, and a real kubelet refuses the second (OutOf...).  So,
 * as KAI-Scheduler pipelines a pod onto releasing resources, muster holds
 * such a bind: the pod is placed in the engine (nothing else takes its
 * room, and no more victims are evicted for it), its PodScheduled
 * condition says what it waits for, and the Binding is written once the
 * leaving pods are gone.
 *
 * A pod whose own bind is still in flight when it is evicted counts as
 * leaving the node it is being bound to: the bind may still land.
 *
 * A bind conflicts with a leaving pod on the same node that holds any of
 * its GPU devices; a bind that takes no GPU, and every bind beside a
 * leaving pod whose devices are not known (another scheduler's), waits
 * for every leaving pod of the node (CPU and memory are not tracked per
 * device).  The leaving list
 * holds only pods that are terminating, and pruning it is part of every
 * check: O(leaving pods) per check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"

void mu__kd_leaving_note(mu__kd_t *d, const mu__kpod_t *p)
{
	if ((!p->node && !p->an_node) || p->terminal)
		return; /* a pod whose bind is in flight may land: it counts */
	for (int32_t i = 0; i < d->nleaving; i++)
		if (!strcmp(d->leaving[i], p->key))
			return;
	if (d->nleaving == d->leaving_cap) {
		int32_t cap = d->leaving_cap ? d->leaving_cap * 2 : 16;
		char **nv = realloc(d->leaving, (size_t)cap * sizeof *nv);
		if (!nv)
			return; /* the bind then goes out at once, as before */
		d->leaving = nv;
		d->leaving_cap = cap;
	}
	char *k = strdup(p->key);
	if (k)
		d->leaving[d->nleaving++] = k;
}

/* Drops the leaving entries whose pods are gone, finished or no longer
 * leaving; then whether a pod still leaving node holds a device of gpus
 * (any pod of node when gpus is 0, or when the pod's devices are not
 * known).  Writes into *who the first such pod. */
static bool node_busy(mu__kd_t *d, const char *node, uint64_t gpus, const mu__kpod_t **who)
{
	bool busy = false;
	int32_t k = 0;
	for (int32_t i = 0; i < d->nleaving; i++) {
		const mu__kpod_t *p = mu__kmap_get(&d->pods, d->leaving[i]);
		const char *at = p ? (p->node ? p->node : p->an_node) : NULL;
		if (!at || p->terminal || !(p->deleting || p->evicting)) {
			free(d->leaving[i]);
			continue;
		}
		d->leaving[k++] = d->leaving[i];
		if (!busy && !strcmp(at, node) && (!gpus || !p->dev.gpus || (p->dev.gpus & gpus))) {
			busy = true;
			*who = p;
		}
	}
	d->nleaving = k;
	return busy;
}

/* Removes the held bind of pod key, if any. */
static void unhold(mu__kd_t *d, const char *key)
{
	for (int32_t i = 0; i < d->nheld; i++) {
		if (strcmp(d->held[i].pod_key, key))
			continue;
		free(d->held[i].pod_key);
		free(d->held[i].node);
		d->held[i] = d->held[--d->nheld];
		return;
	}
}

void mu__kd_bind_or_hold(mu__kd_t *d, mu__kpod_t *p, const char *node, const mu_decision_t *dev)
{
	const mu__kpod_t *who = NULL;
	unhold(d, p->key);
	if (!node_busy(d, node, dev->gpus, &who)) {
		mu__kd_bind(d, p, node, dev);
		return;
	}
	if (d->nheld == d->held_cap) {
		int32_t cap = d->held_cap ? d->held_cap * 2 : 16;
		mu__khold_t *nv = realloc(d->held, (size_t)cap * sizeof *nv);
		if (!nv) {
			mu__kd_bind(d, p, node, dev);
			return;
		}
		d->held = nv;
		d->held_cap = cap;
	}
	mu__khold_t *h = &d->held[d->nheld];
	if (!(h->pod_key = strdup(p->key)) || !(h->node = strdup(node))) {
		free(h->pod_key);
		mu__kd_bind(d, p, node, dev);
		return;
	}
	h->dev = *dev;
	d->nheld++;
	/* placed: in flight as far as the view and the engine are concerned */
	free(p->an_node);
	p->an_node = strdup(node);
	mu__kdev_keep(&p->dev, dev);
	char msg[900];
	snprintf(msg, sizeof msg, "placed on %s, waiting for %s to leave it (it is shutting down)", node,
		 who->key);
	mu__kd_pod_pending(d, p, msg);
}

void mu__kd_held_release(mu__kd_t *d)
{
	for (int32_t i = 0; i < d->nheld;) {
		mu__khold_t *h = &d->held[i];
		mu__kpod_t *p = mu__kmap_get(&d->pods, h->pod_key);
		const mu__kpod_t *who = NULL;
		bool stale = !p || p->node || !p->an_node || strcmp(p->an_node, h->node) || p->deleting;
		if (!stale && node_busy(d, h->node, h->dev.gpus, &who)) {
			i++;
			continue;
		}
		if (!stale)
			mu__kd_bind(d, p, h->node, &h->dev);
		free(h->pod_key);
		free(h->node);
		d->held[i] = d->held[--d->nheld];
	}
}

void mu__kd_release_free(mu__kd_t *d)
{
	for (int32_t i = 0; i < d->nleaving; i++)
		free(d->leaving[i]);
	free(d->leaving);
	for (int32_t i = 0; i < d->nheld; i++) {
		free(d->held[i].pod_key);
		free(d->held[i].node);
	}
	free(d->held);
	d->leaving = NULL;
	d->held = NULL;
	d->nleaving = d->leaving_cap = d->nheld = d->held_cap = 0;
}

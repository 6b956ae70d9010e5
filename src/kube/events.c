/*
 * events.c - where the daemon's watch events enter, and the pass that
 * syncs dirty groups with the engine before each cycle.
 *
 * An event goes to the part of the daemon that owns its kind: nodes,
 * topologies, queues, PodGroups and pods to the view (state.c), Jobs to
 * the Job admission controller (jobs.c).  A re-list clears the "seen"
 * marks first and, at its end, deletes whatever the list did not show.
 * mu__kd_sync() then hands each dirty group to its owner: Job groups to
 * jobs.c, every other group to state.c.  This file sits above both, so
 * that they never call each other in a loop.  Work is proportional to the
 * event, or to the dirty groups' members.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"

static void resource_event(mu__kd_t *d, mu__kres_t res, json_t *obj, bool deleted)
{
	switch (res) {
	case MU__KR_NODES: mu__kd_node_event(d, obj, deleted); break;
	case MU__KR_NRTS: mu__kd_nrt_event(d, obj, deleted); break;
	case MU__KR_TOPOS: mu__kd_topo_event(d, obj, deleted); break;
	case MU__KR_QUEUES: mu__kd_queue_event(d, obj, deleted); break;
	case MU__KR_POOLS: mu__kd_pool_event(d, obj, deleted); break;
	case MU__KR_MPGS: mu__kd_pg_event(d, obj, deleted, true); break;
	case MU__KR_XPGS: mu__kd_pg_event(d, obj, deleted, false); break;
	case MU__KR_JOBS: {
		char key[600];
		mu__kgroup_t *g;
		snprintf(key, sizeof key, "j:%s/%s", mu__kjs(obj, "metadata.namespace") ?
			 mu__kjs(obj, "metadata.namespace") : "default",
			 mu__kjs(obj, "metadata.name") ? mu__kjs(obj, "metadata.name") : "");
		mu__kd_job_event(d, key, obj, deleted);
		if ((g = mu__kmap_get(&d->groups, key)))
			g->seen = true;
		break;
	}
	case MU__KR_PODS:
		if (deleted) {
			char key[600];
			mu__kpodinfo_t in;
			if (mu__kpod_info(obj, &in) == MU_OK) {
				snprintf(key, sizeof key, "%s/%s", in.ns, in.name);
				mu__kd_pod_delete(d, key);
			}
		} else {
			mu__kd_pod_upsert(d, obj);
		}
		break;
	case MU__KR_PDBS: mu__kd_pdb_event(d, obj, deleted); break;
	case MU__KR_NSS: mu__kd_ns_event(d, obj, deleted); break;
	case MU__KR_PCS: mu__kd_pc_event(d, obj, deleted); break;
	case MU__KR_COUNT: break;
	default:
		if (res >= MU__KR_WL0 && res < MU__KR_COUNT)
			mu__kd_wl_event(d, (mu__wlkind_t)(res - MU__KR_WL0), obj, deleted);
		break;
	}
}

/* Clears the seen marks of a resource before a re-list. */
static void unsee(void *arg, void *val)
{
	(void)arg;
	((mu__kpod_t *)val)->seen = false;
}

static void unsee_node(void *arg, void *val)
{
	(void)arg;
	((mu__knode_t *)val)->seen = false;
}

/* Whether group g stands for an object of resource res. */
static bool group_of(const mu__kgroup_t *g, mu__kres_t res)
{
	return res == MU__KR_JOBS ? g->job != NULL :
	       res == MU__KR_MPGS ? g->has_pg && g->key[0] == 'm' :
	       res == MU__KR_XPGS ? g->has_pg && g->key[0] == 'x' : false;
}

/* After a re-list of Jobs or PodGroups: those not seen are gone. */
static void relist_end_groups(mu__kd_t *d, mu__kres_t res)
{
	json_t *gone = json_array();
	for (size_t i = 0; gone && i < d->groups.cap; i++)
		for (mu__kment_t *e = d->groups.tab[i]; e; e = e->next) {
			mu__kgroup_t *g = e->val;
			if (group_of(g, res) && !g->seen)
				json_array_append_new(gone, json_pack("{s:{s:s,s:s}}", "metadata", "namespace",
								      g->ns, "name", g->name));
		}
	size_t i;
	json_t *o;
	json_array_foreach(gone, i, o)
		resource_event(d, res, o, true);
	json_decref(gone);
}

static void unsee_groups(mu__kd_t *d, mu__kres_t res)
{
	for (size_t i = 0; i < d->groups.cap; i++)
		for (mu__kment_t *e = d->groups.tab[i]; e; e = e->next)
			if (group_of(e->val, res))
				((mu__kgroup_t *)e->val)->seen = false;
}

/* After a re-list: what was not seen is gone. */
static void relist_end(mu__kd_t *d, mu__kres_t res)
{
	char **gone = NULL;
	size_t n = 0;
	mu__kmap_t *m = res == MU__KR_PODS ? &d->pods : res == MU__KR_NODES ? &d->nodes : NULL;
	if (res == MU__KR_JOBS || res == MU__KR_MPGS || res == MU__KR_XPGS)
		relist_end_groups(d, res);
	if (res == MU__KR_PDBS)
		mu__kd_pdb_relisted(d);
	if (!m)
		return;
	gone = calloc(m->n + 1, sizeof *gone);
	for (size_t i = 0; gone && i < m->cap; i++)
		for (mu__kment_t *e = m->tab[i]; e; e = e->next) {
			bool seen = res == MU__KR_PODS ? ((mu__kpod_t *)e->val)->seen
						       : ((mu__knode_t *)e->val)->seen;
			if (!seen)
				gone[n++] = strdup(e->key);
		}
	for (size_t i = 0; i < n; i++) {
		if (res == MU__KR_PODS) {
			mu__kd_pod_delete(d, gone[i]);
		} else {
			json_t *o = json_pack("{s:{s:s}}", "metadata", "name", gone[i]);
			mu__kd_node_event(d, o, true);
			json_decref(o);
		}
		free(gone[i]);
	}
	free(gone);
}

void mu__kd_event(mu__kd_t *d, mu__kev_t *ev)
{
	switch (ev->type) {
	case MU__KE_SYNC_BEGIN:
		if (ev->res == MU__KR_PODS)
			mu__kmap_each(&d->pods, unsee, NULL);
		else if (ev->res == MU__KR_NODES)
			mu__kmap_each(&d->nodes, unsee_node, NULL);
		else if (ev->res == MU__KR_PDBS)
			mu__kd_pdb_forget(d);
		else
			unsee_groups(d, ev->res);
		break;
	case MU__KE_SYNC_END:
		relist_end(d, ev->res);
		break;
	case MU__KE_ADDED:
	case MU__KE_MODIFIED:
	case MU__KE_SYNC_ITEM:
		resource_event(d, ev->res, ev->obj, false);
		break;
	case MU__KE_DELETED:
		resource_event(d, ev->res, ev->obj, true);
		break;
	}
	json_decref(ev->obj);
	ev->obj = NULL;
}

/* Syncs the dirty groups and frees those nothing keeps.  O(members of the
 * dirty groups) per pass, at most 4 passes. */
/* Replacements that came before their places were held (a StatefulSet
 * makes one as soon as the old pod is gone): their groups are synced
 * again, which claims the places (move.c), before the cycle could put
 * them elsewhere.  O(pods), only when a place was first held; places are
 * few (the move budget). */
static void move_waiting(mu__kd_t *d, mu_time_t now)
{
	for (size_t i = 0; i < d->pods.cap; i++)
		for (mu__kment_t *e = d->pods.tab[i]; e; e = e->next) {
			mu__kpod_t *p = e->val;
			if (d->nmoves && mu__kd_move_waiting(d, p))
				mu__kd_group_sync(d, p->g, now);
		}
}

/* A Namespace's labels changed: the pods whose terms select namespaces
 * by label are read again (nsel.c); a pod whose shape changed has its
 * group planned again.  O(pods) per change of namespace labels. */
static void nss_reshape(mu__kd_t *d, mu_time_t now)
{
	d->nss_done = d->nss_gen;
	for (size_t i = 0; i < d->pods.cap; i++)
		for (mu__kment_t *e = d->pods.tab[i]; e; e = e->next) {
			mu__kpod_t *p = e->val;
			if (!p->nsobj)
				continue;
			json_t *pin = mu__kd_nssel_pin(d, p->nsobj);
			mu__kshape_t *s = pin ? mu__kshape_get(&d->shapes, pin, !p->ours) : NULL;
			json_decref(pin);
			if (!s || s == p->shape) {
				mu__kshape_put(&d->shapes, s);
				continue;
			}
			mu__kshape_put(&d->shapes, p->shape);
			p->shape = s;
			mu__kd_mix_pod(d, p, false);
			if (p->g && p->g->kind != MU__KG_JOB)
				mu__kd_finish(d, p->g, now, false);
			if (p->g)
				mu__kd_mark_dirty(d, p->g);
		}
}

/* Whether Job group g has pods but no Job the daemon has seen, and holds
 * nothing of the engine's (no engine job, no slots, not admitted): its
 * pods arrived before their Job (the Pods' and the Jobs' watches are
 * separate streams; a Job controller's pod follows its Job by a few ms).
 * Such a pod is not tried yet, and nothing is written for it: no
 * PodScheduled=False condition and no FailedScheduling Event, as
 * kube-scheduler writes neither for a pod a PreEnqueue plugin holds back
 * (the coscheduling plugin's for a PodGroup not seen yet; KEP-5501,
 * "Reflect PreEnqueue rejections in Pod status", names the DRA plugin's
 * claim not yet seen through its watch as a rejection that should stay
 * silent).  It cost two requests per pod that lost the race (all but 6
 * of 300 with the scheduler under callgrind; docs/dispatch.md, round 16).
 * The Job's event marks the group dirty, and the Job's sync places the
 * pods then.  A group that held anything (its Job deleted) is synced as
 * before, so that the engine lets it go.  O(1). */
static bool job_unseen(const mu__kgroup_t *g)
{
	return !g->job && g->ej < 0 && !g->slots && !g->admitted;
}

void mu__kd_sync(mu__kd_t *d, mu_time_t now)
{
	if (d->nss_gen != d->nss_done)
		nss_reshape(d, now);
	/* Syncing may mark more groups dirty (Job pods moving); bounded by
	 * the number of groups, since each is synced once per pass. */
	for (int pass = 0; pass < 4 && d->ndirty; pass++) {
		mu__kgroup_t **v = d->dirty;
		int32_t n = d->ndirty;
		d->dirty = NULL;
		d->ndirty = d->dirty_cap = 0;
		for (int32_t i = 0; i < n; i++)
			v[i]->listed_dirty = false;
		for (int32_t i = 0; i < n; i++) {
			mu__kgroup_t *g = v[i];
			if (!g->dirty)
				continue;
			g->dirty = false;
			if (g->kind == MU__KG_JOB && job_unseen(g))
				; /* its pods wait for their Job, silently */
			else if (g->kind == MU__KG_JOB)
				mu__kd_job_sync(d, g, now);
			else {
				if (g->wl_key && !g->wl)
					mu__kd_wl_attach(d, g);
				if (!(g->wl_susp || g->wl_hold) || !mu__kd_wl_sync(d, g, now))
					mu__kd_group_sync(d, g, now);
			}
			mu__kd_pdb_group(d, g);
			mu__kd_group_gc(d, g);
		}
		free(v);
	}
	if (d->nmoves && mu__kd_move_hold(d, now))
		move_waiting(d, now);
}

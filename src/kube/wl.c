/*
 * wl.c - the workload objects (JobSet, LeaderWorkerSet, PyTorchJob,
 * MPIJob, RayCluster, Volcano and KAI PodGroups) in the daemon's view.
 *
 * Each watched object is kept ("KIND:ns/name" -> a private copy) so that a
 * group made later finds it; when it changes, every group that belongs to
 * it takes what it says (kinds.c, mu__kw_read): its minimum and parts'
 * minimums, its queue.  Until its object is seen, a workload's group waits
 * ("not found", as a gang waits for its PodGroup).  O(groups) per object
 * event; nothing per cycle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"

/* Gives g what obj (kind k) says; an object that cannot be read leaves g
 * waiting, with the reason logged. */
static void wl_apply(mu__kd_t *d, mu__kgroup_t *g, mu__wlkind_t k, const json_t *obj)
{
	mu__kwinfo_t w;
	if (!obj || mu__kw_read(obj, k, &w) != MU_OK) {
		if (obj)
			mu__klog(&d->log, 0, "%s %s: cannot read its parts | group=%s", mu__kw_kind(k),
				 g->wl_key, g->key);
		g->has_pg = false;
		free(g->wl);
		g->wl = NULL;
		mu__kd_mark_dirty(d, g);
		return;
	}
	if (!g->wl && !(g->wl = malloc(sizeof *g->wl)))
		return;
	*g->wl = w;
	g->has_pg = true;
	g->min_member = w.min_member;
	free(g->pg_queue);
	g->pg_queue = w.queue[0] ? strdup(w.queue) : NULL;
	mu__kd_mark_dirty(d, g);
}

/* The kind of a workload key "KIND:...". */
static int key_kind(const char *key)
{
	for (int k = 0; k < MU__WL_COUNT; k++) {
		size_t n = strlen(mu__kw_kind((mu__wlkind_t)k));
		if (!strncmp(key, mu__kw_kind((mu__wlkind_t)k), n) && key[n] == ':')
			return k;
	}
	return -1;
}

void mu__kd_wl_attach(mu__kd_t *d, mu__kgroup_t *g)
{
	int k = g->wl_key ? key_kind(g->wl_key) : -1;
	const json_t *obj = k >= 0 ? mu__kmap_get(&d->wls, g->wl_key) : NULL;
	if (obj)
		wl_apply(d, g, (mu__wlkind_t)k, obj);
}

typedef struct wscan {
	mu__kd_t *d;
	const char *key;
	mu__wlkind_t kind;
	const json_t *obj;
} wscan_t;

static void group_take(void *arg, void *val)
{
	wscan_t *s = arg;
	mu__kgroup_t *g = val;
	if (g->wl_key && !strcmp(g->wl_key, s->key))
		wl_apply(s->d, g, s->kind, s->obj);
}

void mu__kd_wl_event(mu__kd_t *d, mu__wlkind_t k, json_t *obj, bool deleted)
{
	const char *ns = mu__kjs(obj, "metadata.namespace"), *name = mu__kjs(obj, "metadata.name");
	char key[600];
	if (!name)
		return;
	snprintf(key, sizeof key, "%s:%s/%s", mu__kw_kind(k), ns ? ns : "default", name);
	json_decref(mu__kmap_del(&d->wls, key));
	json_t *mine = NULL;
	if (!deleted) {
		/* the map's key lives in the value: a private copy holds it */
		mine = json_deep_copy(obj);
		if (!mine || json_object_set_new(mine, "__key", json_string(key)) ||
		    mu__kmap_put(&d->wls, json_string_value(json_object_get(mine, "__key")), mine)) {
			json_decref(mine);
			mine = NULL;
		}
	}
	wscan_t s = {d, key, k, mine};
	mu__kmap_each(&d->groups, group_take, &s);
	d->changed = true;
}

static void wl_free_cb(void *arg, void *val)
{
	(void)arg;
	json_decref(val);
}

void mu__kd_wl_release(mu__kd_t *d)
{
	mu__kmap_each(&d->wls, wl_free_cb, NULL);
	mu__kmap_release(&d->wls);
}

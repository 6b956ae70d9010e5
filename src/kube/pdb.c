/*
 * pdb.c - PodDisruptionBudgets (policy/v1) and the engine's victim choice.
 *
 * The daemon keeps every PDB it watches ("ns/name" -> the object) and
 * tells the engine, per group, how many of its pods the budgets covering
 * them let go now: the least status.disruptionsAllowed among the PDBs of
 * the group's namespace whose selector matches one of its pods
 * (mu_engine_job_disruptions; -1 when none does).  The engine then
 * chooses victims within their budgets first (docs/policy.md); the
 * eviction itself still meets the budget on the server, and a 429 is
 * retried (write.c).  A group gets its allowance when it is synced with
 * the engine (events.c calls mu__kd_pdb_group after each sync), and
 * again, for every group of the namespace, when a PDB there changes.
 * Nothing is done while no PDB exists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"
#include "muster/jpath.h"

/* Declared in include/muster/kube.h. */
int32_t mu_kube_pdb_allowed(const json_t *pdb)
{
	json_int_t n = json_integer_value(json_object_get(json_object_get(pdb, "status"),
							  "disruptionsAllowed"));
	return n < 0 ? 0 : n > INT32_MAX ? INT32_MAX : (int32_t)n;
}

typedef struct gscan {
	const mu__kgroup_t *g;
	int32_t allowed;
} gscan_t;

/* For each PDB: lowers s->allowed when it covers a pod of s->g. */
static void pdb_scan(void *arg, void *val)
{
	gscan_t *s = arg;
	const json_t *pdb = val;
	const char *ns = json_string_value(json_object_get(json_object_get(pdb, "metadata"),
							   "namespace"));
	if (!ns || strcmp(ns, s->g->ns))
		return;
	const json_t *sel = json_object_get(json_object_get(pdb, "spec"), "selector");
	for (int32_t i = 0; i < s->g->npods; i++) {
		const mu__kpod_t *p = s->g->pods[i];
		if (!mu_label_selector_match(sel, p->labels))
			continue;
		int32_t a = mu_kube_pdb_allowed(pdb);
		if (s->allowed < 0 || a < s->allowed)
			s->allowed = a;
		return;
	}
}

void mu__kd_pdb_group(mu__kd_t *d, mu__kgroup_t *g)
{
	if (g->ej < 0 || (!d->pdbs.n && !g->pdb_set))
		return;
	gscan_t s = {g, -1};
	mu__kmap_each(&d->pdbs, pdb_scan, &s);
	if (mu_engine_job_disruptions(d->e, g->ej, s.allowed) == MU_OK)
		g->pdb_set = s.allowed >= 0;
}

typedef struct nsscan {
	mu__kd_t *d;
	const char *ns;
} nsscan_t;

static void group_again(void *arg, void *val)
{
	nsscan_t *s = arg;
	mu__kgroup_t *g = val;
	if (!s->ns || !strcmp(g->ns, s->ns))
		mu__kd_pdb_group(s->d, g);
}

void mu__kd_pdb_event(mu__kd_t *d, json_t *obj, bool deleted)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	char key[600];
	if (!ns || !name)
		return;
	snprintf(key, sizeof key, "%s/%s", ns, name);
	json_decref(mu__kmap_del(&d->pdbs, key));
	if (!deleted) {
		/* The map's key lives in the value: a private copy holds it. */
		json_t *mine = json_deep_copy(obj);
		if (!mine || json_object_set_new(mine, "__key", json_string(key)) ||
		    mu__kmap_put(&d->pdbs, json_string_value(json_object_get(mine, "__key")), mine)) {
			json_decref(mine);
			return;
		}
		ns = json_string_value(json_object_get(json_object_get(mine, "metadata"), "namespace"));
	}
	nsscan_t s = {d, ns};
	mu__kmap_each(&d->groups, group_again, &s);
	d->changed = true;
}

static void pdb_free_cb(void *arg, void *val)
{
	(void)arg;
	json_decref(val);
}

void mu__kd_pdb_forget(mu__kd_t *d)
{
	mu__kd_pdb_release(d);
}

void mu__kd_pdb_relisted(mu__kd_t *d)
{
	nsscan_t s = {d, NULL};
	mu__kmap_each(&d->groups, group_again, &s);
	d->changed = true;
}

void mu__kd_pdb_release(mu__kd_t *d)
{
	mu__kmap_each(&d->pdbs, pdb_free_cb, NULL);
	mu__kmap_release(&d->pdbs);
}

/*
 * pdbs.c - a worker's PodDisruptionBudgets (policy/v1) for reclaim across
 * clusters (round 14).
 *
 * The fleet takes victims within their budgets first, as the engine and
 * kube-scheduler do (mu_fleet_job_disruptions, docs/dispatch.md).  What
 * it needs per dispatched job is the engine's figure (src/kube/pdb.c):
 * the least status.disruptionsAllowed among the budgets of the copy's
 * namespace whose selector matches one of its copy's pods (0 while the
 * disruption controller has not written it, as the Eviction API counts
 * it).  Here that figure is computed from a list of budgets and a list of
 * the copies' pods (labelled muster.io/hub-uid); worker.c applies it from
 * its push watches, and the hub from a pull agent's report.  Pure
 * functions of the JSON: no I/O, no state; above dutil.c (its metadata
 * reads), below worker.c and hub.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"
#include "muster/kube.h"

json_t *mu__dpdb_allowances(const json_t *pdbs, const json_t *pods)
{
	json_t *out = json_object();
	if (!out || !json_array_size(pdbs))
		return out;
	size_t i, k;
	json_t *p, *b;
	json_array_foreach(pods, i, p) {
		const char *uid = mu__dmeta(p, "labels", MU__D_HUBUID);
		const char *ns = mu__jstr(p, "metadata.namespace");
		const json_t *labels = mu__jget(p, "metadata.labels");
		if (!uid || !ns)
			continue;
		json_array_foreach(pdbs, k, b) {
			const char *bns = mu__jstr(b, "metadata.namespace");
			const json_t *sel = mu__jget(b, "spec.selector");
			/* policy/v1: an empty selector matches every pod of
			 * its namespace, a missing one none (src/kube/pdb.c) */
			if (!bns || strcmp(bns, ns) || !mu_label_selector_match(sel, labels))
				continue;
			int32_t a = mu_kube_pdb_allowed(b);
			json_t *cur = json_object_get(out, uid);
			if (!cur || json_integer_value(cur) > a)
				json_object_set_new(out, uid, json_integer(a));
		}
	}
	return out;
}

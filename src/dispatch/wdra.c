/*
 * wdra.c - a push-mode worker's DRA objects in the hub's model of it
 * (issue 18, round 15).  The fleet places a job whose pods claim devices
 * (resource.k8s.io ResourceClaims) only where its claims allocate, node by
 * node (src/fleet/dra.c); it needs each worker's ResourceSlices,
 * DeviceClasses, ResourceClaims and its Nodes' names and labels.  The
 * dispatcher asks each worker whether it serves those kinds (the group
 * version `muster up` serves, resource.k8s.io/v1beta1, as a client-go
 * informer is made only for what discovery lists), watches them while it
 * does, and gives the fleet a new set only when a watch changed or a
 * Node's name or labels did: a poll in which nothing changed reads three
 * change counters, and a worker that does not serve DRA costs nothing.
 *
 * Pull mode (round 16): the agent, which watches its worker's DRA
 * objects the same way, sends them cut to what the allocator reads in its
 * heartbeat (data.dra, mu__ddra_report: at most MU__DDRA_REPORT_MAX bytes,
 * only when they changed and at most once a second), and the hub gives
 * the fleet what the heartbeat says (mu__ddra_pull) as it gives it a push
 * worker's.
 * Above dutil.c (its requests and log); below worker.c and agent.c,
 * which call it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_int.h"

static const char *const PLURAL[MU__DDRA_N] = {"resourceslices", "deviceclasses",
					       "resourceclaims"};

/* Stops c's DRA watches and, when the fleet had its objects, takes them
 * away (jobs with claims no longer go there).  O(1). */
static void dra_stop(mu__dd_t *d, mu__dcl_t *c)
{
	for (int k = 0; k < MU__DDRA_N; k++)
		mu_kube_watch_signal(c->wdra[k]);
	mu_kube_watch_signal(c->wdtpl);
	for (int k = 0; k < MU__DDRA_N; k++) {
		mu_kube_watch_stop(c->wdra[k]);
		c->wdra[k] = NULL;
		c->dra_seq[k] = 0;
	}
	mu_kube_watch_stop(c->wdtpl);
	c->wdtpl = NULL;
	c->dtpl_seq[0] = c->dtpl_seq[1] = 0;
	c->dheld_seq[0] = c->dheld_seq[1] = 0;
	if (c->dra_fed && mu_fleet_cluster_dra(d->fleet, c->fid, NULL, NULL, NULL, NULL) == MU_OK)
		c->dra_fed++;
	json_decref(c->dra_nodes);
	c->dra_nodes = NULL;
}

int mu__ddra_serves(mu__dd_t *d, mu_kube_client_t *kc)
{
	json_t *ans = NULL;
	long st = mu__dreq(d, kc, "GET", "/apis/" MU__DDRA_API, NULL, NULL, &ans);
	int on = -1;
	if (st == 404) {
		on = 0;
	} else if (st == 200) {
		int n = 0;
		size_t i;
		json_t *r;
		json_array_foreach(json_object_get(ans, "resources"), i, r) {
			const char *name = json_string_value(json_object_get(r, "name"));
			for (int k = 0; k < MU__DDRA_N && name; k++)
				n += !strcmp(name, PLURAL[k]);
		}
		on = n == MU__DDRA_N; /* all three, or the allocator cannot tell */
	}
	json_decref(ans);
	return on;
}

void mu__ddra_discover(mu__dd_t *d, mu__dcl_t *c)
{
	if (!c->kc || !c->cfg)
		return;
	int on = mu__ddra_serves(d, c->kc);
	if (on < 0) /* no answer: as it was */
		return;
	if (on != c->dra_on)
		mu__dlog(d, 1, "cluster %s: %s DRA (%s)", c->name, on ? "serves" : "does not serve",
			 MU__DDRA_API);
	c->dra_on = (int8_t)on;
	if (!on) {
		if (c->wdra[0] || c->wdra[1] || c->wdra[2] || c->wdtpl || c->dra_nodes)
			dra_stop(d, c);
		return;
	}
	for (int k = 0; k < MU__DDRA_N; k++) {
		if (c->wdra[k])
			continue;
		char path[128];
		snprintf(path, sizeof path, "/apis/%s/%s", MU__DDRA_API, PLURAL[k]);
		if (mu_kube_watch_start(c->cfg, path, NULL, &c->wdra[k]) != MU_OK)
			c->wdra[k] = NULL; /* out of memory: started at the next discovery */
		c->dra_seq[k] = 0;
	}
	/* the copies of hub jobs' templates (hdra.c's sweep), and round 20
	 * the others too: a user's template of a copy's name holds a late
	 * pod, released when it goes (mu__dhdra_held_worker) */
	if (!c->wdtpl && mu_kube_watch_start(c->cfg, "/apis/" MU__DDRA_API "/resourceclaimtemplates",
					     NULL, &c->wdtpl) != MU_OK)
		c->wdtpl = NULL;
}

/* The Nodes of list nl cut to what the allocator reads (metadata.name and
 * labels), in a new array; NULL on OOM.  O(nodes). */
static json_t *nodes_slim(const json_t *nl)
{
	json_t *out = json_array();
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(nl, "items"), i, n) {
		json_t *m = json_object_get(n, "metadata"), *lab = json_object_get(m, "labels");
		json_t *o = json_pack("{s:{s:O,s:O}}", "metadata", "name",
				      json_object_get(m, "name") ? json_object_get(m, "name") : json_null(),
				      "labels", lab ? lab : json_null());
		if (!o || json_array_append_new(out, o)) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

bool mu__ddra_poll(mu__dd_t *d, mu__dcl_t *c, const json_t *nl)
{
	if (c->dra_on != 1 || !c->wdra[0] || !c->wdra[1] || !c->wdra[2])
		return false;
	uint64_t seq[MU__DDRA_N];
	bool changed = false;
	for (int k = 0; k < MU__DDRA_N; k++) {
		if (!mu_kube_watch_items(c->wdra[k], NULL, &seq[k]))
			return false; /* not listed yet, or failing: as it was */
		changed |= seq[k] != c->dra_seq[k];
	}
	json_t *nodes = NULL;
	if (nl || !c->dra_nodes) {
		json_t *own = NULL;
		if (!nl && (!c->wnodes || !mu_kube_watch_items(c->wnodes, &own, NULL))) {
			json_decref(own);
			return false;
		}
		nodes = nodes_slim(nl ? nl : own);
		json_decref(own);
		if (!nodes)
			return false;
		if (c->dra_nodes && json_equal(nodes, c->dra_nodes)) {
			json_decref(nodes);
			nodes = NULL;
		} else {
			changed = true;
		}
	}
	if (!changed)
		return false;
	json_t *l[MU__DDRA_N] = {NULL};
	bool ok = true;
	for (int k = 0; k < MU__DDRA_N; k++)
		ok = ok && mu_kube_watch_items(c->wdra[k], &l[k], &seq[k]);
	if (ok && nodes) {
		json_decref(c->dra_nodes);
		c->dra_nodes = nodes;
		nodes = NULL;
	}
	if (ok && mu_fleet_cluster_dra(d->fleet, c->fid, json_object_get(l[0], "items"),
				       json_object_get(l[1], "items"),
				       json_object_get(l[2], "items"), c->dra_nodes) != MU_OK)
		ok = false;
	if (ok) {
		memcpy(c->dra_seq, seq, sizeof seq);
		c->dra_fed++;
		mu__dlog(d, 2, "cluster %s: DRA: %zu slices, %zu classes, %zu claims, %zu nodes",
			 c->name, json_array_size(json_object_get(l[0], "items")),
			 json_array_size(json_object_get(l[1], "items")),
			 json_array_size(json_object_get(l[2], "items")), json_array_size(c->dra_nodes));
	}
	json_decref(nodes);
	for (int k = 0; k < MU__DDRA_N; k++)
		json_decref(l[k]);
	return ok;
}

/* --- pull mode ------------------------------------------------------------------ */

/* Object o cut to metadata.name (and namespace when ns) and the member
 * keep of o (spec; status.allocation for a claim).  Owned; NULL on OOM. */
static json_t *slim(const json_t *o, bool ns, const char *keep, const json_t *v)
{
	json_t *m = json_object_get(o, "metadata");
	json_t *out = json_pack("{s:{s:O}}", "metadata", "name",
				json_object_get(m, "name") ? json_object_get(m, "name") : json_null());
	if (out && ns && json_object_get(m, "namespace"))
		json_object_set(json_object_get(out, "metadata"), "namespace",
				json_object_get(m, "namespace"));
	if (out && v)
		json_object_set(out, keep, (json_t *)v);
	return out;
}

char *mu__ddra_report(const json_t *const l[MU__DDRA_N], size_t max)
{
	static const char *const KEY[MU__DDRA_N] = {"slices", "classes", "claims"};
	json_t *r = json_object();
	for (int k = 0; r && k < MU__DDRA_N; k++) {
		json_t *a = json_array();
		size_t i;
		json_t *o;
		json_array_foreach(json_object_get(l[k], "items"), i, o) {
			json_t *e;
			if (k == MU__DDRA_CLAIMS) { /* only what is allocated takes devices */
				const json_t *al = json_object_get(json_object_get(o, "status"),
								   "allocation");
				if (!al || json_is_null(al))
					continue;
				e = slim(o, true, "status", NULL);
				if (e)
					json_object_set_new(e, "status", json_pack("{s:O}", "allocation", al));
			} else {
				e = slim(o, false, "spec", json_object_get(o, "spec"));
			}
			if (!e || json_array_append_new(a, e)) {
				json_decref(a);
				a = NULL;
				break;
			}
		}
		if (!a || json_object_set_new(r, KEY[k], a)) {
			json_decref(r);
			r = NULL;
		}
	}
	char *text = r ? json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(r);
	if (text && strlen(text) > max) {
		size_t n = strlen(text);
		free(text);
		json_t *e = json_pack("{s:s}", "error", "");
		char m[300];
		snprintf(m, sizeof m, "the cluster's DRA objects take %zu bytes in the heartbeat, more "
			 "than its bound of %zu: not reported", n, max);
		json_object_set_new(e, "error", json_string(m));
		text = json_dumps(e, JSON_COMPACT);
		json_decref(e);
	}
	return text;
}

/* FNV-1a of s. */
static uint64_t text_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h | 1; /* never 0: 0 is "none" */
}

/* c's DRA objects taken from the fleet (a pull worker that reports none,
 * or whose report is refused).  O(1). */
static void pull_none(mu__dd_t *d, mu__dcl_t *c)
{
	if (c->dra_on == 1 && mu_fleet_cluster_dra(d->fleet, c->fid, NULL, NULL, NULL, NULL) == MU_OK)
		c->dra_fed++;
	c->dra_on = 0;
	json_decref(c->dra_nodes);
	c->dra_nodes = NULL;
}

bool mu__ddra_pull(mu__dd_t *d, mu__dcl_t *c, const char *text, const json_t *nl)
{
	if (!text || !*text) {
		if (c->dra_hash)
			mu__dlog(d, 1, "cluster %s: its agent reports no DRA objects", c->name);
		c->dra_hash = 0;
		pull_none(d, c);
		return false;
	}
	uint64_t h = text_hash(text);
	json_t *nodes = nl ? nodes_slim(nl) : NULL;
	bool nodes_moved = nodes && !(c->dra_nodes && json_equal(nodes, c->dra_nodes));
	if (h == c->dra_hash && !nodes_moved) {
		json_decref(nodes); /* nothing changed: one pass over the text */
		return false;
	}
	/* the agent's bound holds on the hub too: an edge cluster's text is
	 * not trusted to be the agent's (round 17) */
	size_t len = strlen(text);
	json_t *r = len <= MU__DDRA_REPORT_MAX ? json_loads(text, 0, NULL) : NULL;
	const char *err = json_string_value(json_object_get(r, "error"));
	bool ok = json_is_object(r) && !err && json_is_array(json_object_get(r, "slices")) &&
		  json_is_array(json_object_get(r, "classes")) &&
		  json_is_array(json_object_get(r, "claims"));
	if (!ok) {
		char why[160];
		if (len > MU__DDRA_REPORT_MAX)
			snprintf(why, sizeof why, "data.dra takes %zu bytes, more than its bound of %d",
				 len, MU__DDRA_REPORT_MAX);
		else
			snprintf(why, sizeof why, "%s", r ? "data.dra is not an object of arrays "
				 "\"slices\", \"classes\" and \"claims\"" : "data.dra is not JSON");
		if (h != c->dra_hash)
			mu__dlog(d, 0, "cluster %s: its agent's DRA report is not used: %s", c->name,
				 err ? err : why);
		c->dra_hash = h;
		pull_none(d, c);
		json_decref(nodes);
		json_decref(r);
		return false;
	}
	if (nodes) {
		json_decref(c->dra_nodes);
		c->dra_nodes = nodes;
	}
	if (mu_fleet_cluster_dra(d->fleet, c->fid, json_object_get(r, "slices"),
				 json_object_get(r, "classes"), json_object_get(r, "claims"),
				 c->dra_nodes) == MU_OK) {
		if (c->dra_on != 1)
			mu__dlog(d, 1, "cluster %s: serves DRA (its agent's report)", c->name);
		c->dra_on = 1;
		c->dra_hash = h;
		c->dra_fed++;
		mu__dlog(d, 2, "cluster %s: DRA: %zu slices, %zu classes, %zu claims, %zu nodes",
			 c->name, json_array_size(json_object_get(r, "slices")),
			 json_array_size(json_object_get(r, "classes")),
			 json_array_size(json_object_get(r, "claims")), json_array_size(c->dra_nodes));
	}
	json_decref(r);
	return true;
}

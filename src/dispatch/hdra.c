/*
 * hdra.c - a hub job's DRA claims (issue 18, round 15).  A hub job whose
 * pod templates name a ResourceClaimTemplate (resourceClaimTemplateName)
 * or a ResourceClaim (resourceClaimName) is read with those objects from
 * the hub, in the job's namespace (one GET each, only for a job that has
 * claims: jobs without pay nothing), into the fleet's spec
 * (mu_fleet_job_spec_t.dra), so the fleet sends it only where its claims
 * allocate (src/fleet/dra.c).  A template or claim that is not there yet
 * leaves the job waiting with a condition (as a pod whose template is
 * missing cannot start); it is read again once a second while it waits.
 *
 * When the job is dispatched to a push worker, each object is copied
 * there before the job's copy, under a name of its own dispatch
 * (NAME-UID8-GEN), labelled with the hub job's uid and annotated with the
 * generation as the job's copies are, and the copy's pod templates name
 * those copies.  A copy's name is never taken over: a worker object of
 * that name that the dispatcher did not make for this dispatch refuses
 * the job (NotAdmitted, naming the object).  The sweep (mu__dhdra_sweep)
 * deletes copied objects whose dispatch is no longer current (job gone
 * from the hub, requeued, withdrawn, another cluster or generation), as
 * stale copies are.  Above dutil.c (requests, log), below hub.c and
 * worker.c, which call it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"

#define API "/apis/" MU__DDRA_API

static const char *const RES[2] = {"resourceclaimtemplates", "resourceclaims"};
static const char *const KIND[2] = {"ResourceClaimTemplate", "ResourceClaim"};

void mu__dhdra_clear(mu__djob_t *j)
{
	json_decref(j->dra);
	json_decref(j->dra_src);
	j->dra = j->dra_src = NULL;
	j->fs.dra = NULL;
}

/* The name of hub object name's copy for dispatch (uid, gen) into buf;
 * false when it would pass 253 characters (a DNS subdomain). */
static bool copy_name(const char *name, const char *uid, uint32_t gen, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s-%.8s-%u", name, uid, gen);
	return n > 0 && n <= 253 && (size_t)n < len;
}

/* One claim entry e of a pod ({"name", "resourceClaimTemplateName" or
 * "resourceClaimName"}) of job j: the hub object GOT (into src, once per
 * name) and the fleet's entry into out.  0, or 1 with reason and message
 * set (waits), or -1 (InvalidJob). */
static int claim_one(mu__dd_t *d, mu__djob_t *j, const json_t *e, json_t *src, json_t *out,
		     char *why, size_t wl, char *msg, size_t ml)
{
	const char *tn = json_string_value(json_object_get(e, "resourceClaimTemplateName"));
	const char *cn = json_string_value(json_object_get(e, "resourceClaimName"));
	const char *pn = json_string_value(json_object_get(e, "name"));
	int r = tn ? 0 : 1;
	const char *name = tn ? tn : cn;
	char key[600];
	snprintf(key, sizeof key, "%d/%s", r, name);
	json_t *obj = json_object_get(json_object_get(src, key), "obj");
	if (!obj) {
		char path[1200];
		snprintf(path, sizeof path, API "/namespaces/%s/%s/%s", j->ns, RES[r], name);
		json_t *ans = NULL;
		long st = mu__dreq(d, d->hub, "GET", path, NULL, NULL, &ans);
		if (st != 200 || !json_is_object(ans)) {
			snprintf(why, wl, "%s", r ? "WaitingForResourceClaim" :
				 "WaitingForResourceClaimTemplate");
			if (st == 404)
				snprintf(msg, ml, "pod claim %s: %s %s/%s not found on the hub", pn,
					 KIND[r], j->ns, name);
			else
				snprintf(msg, ml, "pod claim %s: %s %s/%s not read from the hub: "
					 "HTTP %ld", pn, KIND[r], j->ns, name, st);
			json_decref(ans);
			return 1;
		}
		char cp[300];
		if (!copy_name(name, j->uid, UINT32_MAX, cp, sizeof cp)) {
			snprintf(why, wl, "InvalidJob");
			snprintf(msg, ml, "pod claim %s: %s name %s is too long to copy to a worker "
				 "(its copies are named NAME-UID8-GENERATION, at most 253 characters)",
				 pn, KIND[r], name);
			json_decref(ans);
			return -1;
		}
		json_object_set_new(src, key, json_pack("{s:i,s:s,s:o}", "r", r, "name", name,
							"obj", ans));
		obj = ans;
	}
	/* the fleet's claim: its spec (a template's spec.spec) */
	const json_t *spec = r ? json_object_get(obj, "spec") : mu__jget(obj, "spec.spec");
	json_t *claim = json_pack("{s:{s:s},s:O}", "metadata", "name", name, "spec",
				  spec ? (json_t *)spec : json_object());
	json_t *ent = json_pack("{s:s,s:o,s:b}", "name", pn, "claim", claim, "shared", r);
	if (!ent || json_array_append_new(out, ent)) {
		snprintf(why, wl, "InvalidJob");
		snprintf(msg, ml, "out of memory");
		return -1;
	}
	return 0;
}

int mu__dhdra_read(mu__dd_t *d, mu__djob_t *j, char *why, size_t wl, char *msg, size_t ml)
{
	mu__dhdra_clear(j);
	const mu_job_spec_t *js = &j->specs.jobs[0];
	bool any = false;
	for (size_t i = 0; i < js->npodsets; i++)
		any |= js->podsets[i].dra_claims != NULL;
	if (!any)
		return 0; /* the hot path: one test per pod set */
	if (mu__dkind_is_group(j->kind)) { /* its pods are sent one by one */
		snprintf(why, wl, "InvalidJob");
		snprintf(msg, ml, "spec.resourceClaims: DRA resource claims are not dispatched "
			 "for a group's pods, only in the pod templates of the other kinds");
		return -1;
	}
	json_t *dra = json_array(), *src = json_object();
	int rc = 0;
	for (size_t i = 0; i < js->npodsets && !rc; i++) {
		json_t *set = json_array();
		json_t *es = js->podsets[i].dra_claims ?
			json_loads(js->podsets[i].dra_claims, 0, NULL) : json_array();
		size_t k;
		json_t *e;
		json_array_foreach(es, k, e) {
			if ((rc = claim_one(d, j, e, src, set, why, wl, msg, ml)))
				break;
		}
		json_decref(es);
		json_array_append_new(dra, set);
	}
	if (rc) {
		json_decref(dra);
		json_decref(src);
		return rc;
	}
	j->dra = dra;
	j->dra_src = src;
	return 0;
}

/* --- copies on a push worker ---------------------------------------------- */

/* Hub object o (kind r) as its copy for j's dispatch, named cp.  Owned. */
static json_t *copy_obj(const mu__djob_t *j, int r, const json_t *o, const char *cp)
{
	char gen[16];
	snprintf(gen, sizeof gen, "%u", j->gen);
	json_t *labels = json_deep_copy(mu__jget(o, "metadata.labels"));
	if (!json_is_object(labels)) {
		json_decref(labels);
		labels = json_object();
	}
	json_object_set_new(labels, MU__D_HUBUID, json_string(j->uid));
	json_t *spec = json_deep_copy(json_object_get(o, "spec"));
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:o,s:{s:s,s:s,s:s}},s:o}", "apiVersion",
			 MU__DDRA_API, "kind", KIND[r], "metadata", "name", cp, "namespace", j->ns,
			 "labels", labels, "annotations", MU__D_GEN, gen, MU__D_HUBJOB, j->key,
			 "muster.io/dispatch-source", mu__jstr(o, "metadata.name"), "spec",
			 spec ? spec : json_object());
}

/* Pod template t's claims renamed to j's copies (src: j->dra_src). */
static void rename_tmpl(const mu__djob_t *j, json_t *t)
{
	size_t i;
	json_t *e;
	json_array_foreach(mu__jget(t, "spec.resourceClaims"), i, e) {
		for (int r = 0; r < 2; r++) {
			const char *f = r ? "resourceClaimName" : "resourceClaimTemplateName";
			const char *n = json_string_value(json_object_get(e, f));
			char cp[300];
			if (n && copy_name(n, j->uid, j->gen, cp, sizeof cp))
				json_object_set_new(e, f, json_string(cp));
		}
	}
}

void mu__dhdra_rename(const mu__djob_t *j, json_t *body)
{
	if (!j->dra_src)
		return;
	json_t *spec = json_object_get(body, "spec");
	if (j->kind == MU__DK_JOB) {
		rename_tmpl(j, json_object_get(spec, "template"));
		return;
	}
	mu__dtmpl_t t[16];
	int n = mu__dkind_templates(spec, j->kind, t, 16);
	for (int i = 0; i < n; i++)
		rename_tmpl(j, t[i].tmpl);
}

/* Whether worker object o is the copy for j's current dispatch. */
static bool ours(const mu__djob_t *j, const json_t *o)
{
	char g[16];
	snprintf(g, sizeof g, "%u", j->gen);
	const char *uid = mu__dmeta(o, "labels", MU__D_HUBUID);
	const char *gen = mu__dmeta(o, "annotations", MU__D_GEN);
	return uid && gen && !strcmp(uid, j->uid) && !strcmp(gen, g);
}

long mu__dhdra_create(mu__dd_t *d, mu_kube_client_t *kc, mu__djob_t *j)
{
	const char *key;
	json_t *s;
	json_object_foreach(j->dra_src, key, s) {
		int r = (int)json_integer_value(json_object_get(s, "r"));
		const char *name = json_string_value(json_object_get(s, "name"));
		char cp[300], path[1200];
		if (!copy_name(name, j->uid, j->gen, cp, sizeof cp))
			return 0;
		json_t *body = copy_obj(j, r, json_object_get(s, "obj"), cp), *ans = NULL;
		snprintf(path, sizeof path, API "/namespaces/%s/%s", j->ns, RES[r]);
		long st = mu__dreq_err(d, kc, "POST", path, NULL, body, &ans);
		if (st == 404) { /* its namespace, then once more */
			json_t *ns = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind",
					       "Namespace", "metadata", "name", j->ns);
			mu__dreq(d, kc, "POST", "/api/v1/namespaces", NULL, ns, NULL);
			json_decref(ns);
			json_decref(ans);
			ans = NULL;
			st = mu__dreq_err(d, kc, "POST", path, NULL, body, &ans);
		}
		json_decref(body);
		if (st == 409) { /* this dispatch's from before (a retry or a
				  * restart), or another's: never taken over */
			json_t *cur = NULL;
			char gp[1600];
			snprintf(gp, sizeof gp, "%s/%s", path, cp);
			long gs = mu__dreq(d, kc, "GET", gp, NULL, NULL, &cur);
			if (gs == 200 && ours(j, cur)) {
				st = 201;
			} else if (gs == 200) {
				char m[800];
				snprintf(m, sizeof m, "cluster %s has a %s %s/%s that the dispatcher did "
					 "not make for this dispatch: not overwritten", d->cls[j->cl].name,
					 KIND[r], j->ns, cp);
				free(j->refused);
				j->refused = strdup(m);
			}
			json_decref(cur);
		}
		if (st != 200 && st != 201) {
			const char *w = mu__jstr(ans, "message");
			mu__dlog(d, 0, "cluster %s: create %s %s/%s for job %s: HTTP %ld %s",
				 d->cls[j->cl].name, KIND[r], j->ns, cp, j->key, st, w ? w : "");
			if (mu__dwork_refused(st) && !j->refused) {
				char m[800];
				snprintf(m, sizeof m, "cluster %s refused the copy of %s %s/%s: HTTP %ld: "
					 "%.500s", d->cls[j->cl].name, KIND[r], j->ns, name, st, w ? w : "");
				j->refused = strdup(m);
			}
			json_decref(ans);
			return st;
		}
		json_decref(ans);
	}
	return 201;
}

/* Worker object o (kind r) on cluster c deleted when its dispatch is not
 * current.  Returns whether it was.  One request at most. */
static bool sweep_one(mu__dd_t *d, mu__dcl_t *c, int r, const json_t *o)
{
	const char *uid = mu__dmeta(o, "labels", MU__D_HUBUID);
	const char *ns = mu__jstr(o, "metadata.namespace"), *name = mu__jstr(o, "metadata.name");
	if (!uid || !ns || !name || mu__jget(o, "metadata.deletionTimestamp"))
		return false;
	/* current as its job's copy is (worker.c's copy_one): kept while the
	 * copy is, a finished one's too */
	if (mu__djob_current(d, uid, mu__dmeta(o, "annotations", MU__D_GEN), (int32_t)(c - d->cls)))
		return false;
	/* only once the hub's lists were read: a job not known yet is not
	 * stale */
	for (int k = 0; k < MU__DK_COUNT; k++)
		if ((k == MU__DK_JOB || d->hub_serves[k] > 0) && !d->kind_listed[k])
			return false;
	char path[1200];
	snprintf(path, sizeof path, API "/namespaces/%s/%s/%s", ns, RES[r], name);
	long st = mu__dreq(d, c->kc, "DELETE", path, NULL, NULL, NULL);
	mu__dlog(d, 1, "cluster %s: stale %s %s/%s (generation %s) deleted: HTTP %ld", c->name,
		 KIND[r], ns, name, mu__dmeta(o, "annotations", MU__D_GEN) ?
		 mu__dmeta(o, "annotations", MU__D_GEN) : "?", st);
	return true;
}

void mu__dhdra_sweep(mu__dd_t *d, mu__dcl_t *c)
{
	mu_kube_watch_t *w[2] = {c->wdtpl, c->wdra[MU__DDRA_CLAIMS]};
	uint64_t seq[2] = {0, 0};
	bool moved = d->full || d->gone || d->wdirty.n;
	for (int r = 0; r < 2; r++) {
		if (!w[r] || !mu_kube_watch_items(w[r], NULL, &seq[r]))
			return;
		moved |= seq[r] != c->dtpl_seq[r];
	}
	/* nothing of the hub's there and nothing changed: O(1) */
	if (!moved || (!c->dcopies && seq[0] == c->dtpl_seq[0] && seq[1] == c->dtpl_seq[1]))
		return;
	int n = 0;
	for (int r = 0; r < 2; r++) {
		json_t *l = NULL;
		if (!mu_kube_watch_items(w[r], &l, &seq[r])) {
			json_decref(l);
			return;
		}
		size_t i;
		json_t *o;
		json_array_foreach(json_object_get(l, "items"), i, o) {
			if (!mu__dmeta(o, "labels", MU__D_HUBUID))
				continue;
			sweep_one(d, c, r, o);
			n++; /* looked at again until its deletion shows */
		}
		json_decref(l);
		c->dtpl_seq[r] = seq[r];
	}
	c->dcopies = n;
}

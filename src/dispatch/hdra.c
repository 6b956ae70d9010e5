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
 * stale copies are.
 *
 * Round 16: a group's pods (PodGroups) with claims are dispatched too:
 * the objects their pods name are read and copied as a template's are,
 * and each pod sent has its claims renamed (mu__dhdra_rename_pod).  At
 * dispatch each object is read from the hub again, so the copy is the
 * hub's object as it is then (a template changed after the job was read
 * is copied changed); one deleted since leaves the job's copy unmade
 * (round 16: retried, withdrawn at --start-timeout; round 18: below).  A pull worker's agent makes
 * the same copies on its cluster before the job's copy
 * (mu__dhdra_agent_copy: same names, labels and refusal) and sweeps them
 * (mu__dhdra_agent_sweep): the hub needs no credentials for it.
 * Round 18: the hub's templates and claims are watched once a job names
 * one; an index from each object to the jobs that name it gives the
 * jobs an event moves (mu__dhdra_watch), which hub.c reads again; a
 * retried create that finds an object gone or changed marks the job
 * stale (read again at once by run.c, not at --start-timeout).
 * Round 19: a group's late pod whose object's copy the worker refuses is
 * held by worker.c, not the group; its objects join the index, and an
 * event of one releases the hold (mu__dhdra_watch: {uid: false}).
 * Round 20: an event showing an object at the resourceVersion the hold
 * kept releases nothing (a re-list, a restart's first list), and a push
 * worker's object that held a copy's name going releases the hold
 * (mu__dhdra_held_worker, from the worker's watches).
 * Round 23: an object deleted on the hub releases nothing (push or
 * pull): the hold keeps "" as its version, so the object made again is
 * one change and the pod is tried once then (mu__dhdra_orv_moved: the
 * pull agent's reading of the record).
 * Above dutil.c (requests, log), below hub.c, worker.c and agent.c, which
 * call it.
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
	json_decref(j->dra_keys);
	j->dra = j->dra_src = j->dra_keys = NULL;
	j->fs.dra = NULL;
}

/* --- the hub's templates and claims, watched (round 18) ---------------------- */

void mu__dhdra_forget(mu__dd_t *d, mu__djob_t *j)
{
	size_t i;
	json_t *k;
	json_array_foreach(j->dra_keys, i, k) {
		json_t *set = json_object_get(d->dra_idx, json_string_value(k));
		json_object_del(set, j->uid);
		if (set && !json_object_size(set))
			json_object_del(d->dra_idx, json_string_value(k));
	}
	json_decref(j->dra_keys);
	j->dra_keys = NULL;
}

/* j (reading its claims) named object name of kind r: in d->dra_idx, and
 * the watches of the hub's templates and claims started if they are not
 * (the first job with claims starts them: a hub without any pays
 * nothing).  O(1). */
static void idx_add(mu__dd_t *d, mu__djob_t *j, int r, const char *name)
{
	for (int x = 0; x < 2; x++)
		if (!d->wdhub[x] && d->o && d->o->hub &&
		    mu_kube_watch_start(d->o->hub, x ? API "/resourceclaims" :
					API "/resourceclaimtemplates", NULL, &d->wdhub[x]) != MU_OK)
			d->wdhub[x] = NULL; /* out of memory: read once a second (claims_retry) */
	char k[700];
	snprintf(k, sizeof k, "%d/%s/%s", r, j->ns, name);
	if (!d->dra_idx)
		d->dra_idx = json_object();
	if (!j->dra_keys)
		j->dra_keys = json_array();
	json_t *set = json_object_get(d->dra_idx, k);
	if (!set) {
		set = json_object();
		json_object_set_new(d->dra_idx, k, set);
	}
	if (set && !json_object_get(set, j->uid)) {
		json_object_set_new(set, j->uid, json_true());
		json_array_append_new(j->dra_keys, json_string(k));
	}
}

bool mu__dhdra_watched(mu__dd_t *d)
{
	return d->wdhub[0] && d->wdhub[1] && mu_kube_watch_items(d->wdhub[0], NULL, NULL) &&
		mu_kube_watch_items(d->wdhub[1], NULL, NULL);
}

/* How the hub's object now (NULL: gone) differs from s, the job's copy
 * of it in dra_src ({"obj": ...}): NULL when its spec is the same, else
 * the words a log line says it with.  The one comparison that the watch
 * (moves), the read at dispatch (mu__dhdra_stale) and a retried create
 * (mu__dhdra_create) make.  O(the spec's size). */
static const char *drift(const json_t *now, const json_t *s)
{
	if (!now)
		return "is no longer on the hub";
	return json_equal(json_object_get(now, "spec"), json_object_get(json_object_get(s, "obj"), "spec"))
		       ? NULL
		       : "changed on the hub since the job was read";
}

/* Whether hub object name of kind r, now o (NULL: gone), moves job j:
 * j waits for its claims' objects and o is there, or j is queued with a
 * copy of it whose spec is not o's (or o is gone).  What moved it, in
 * the words of a log line, or NULL.  O(1) but drift's compare. */
static const char *moves(const mu__djob_t *j, int r, const char *name, const json_t *o)
{
	if (j->state == MU__DJ_NEW)
		return o && j->reason && !strncmp(j->reason, "WaitingForResourceClaim", 23) ?
		       "is on the hub now" : NULL;
	if (j->state != MU__DJ_QUEUED || !j->dra_src)
		return NULL;
	char key[600];
	snprintf(key, sizeof key, "%d/%s", r, name);
	json_t *s = json_object_get(j->dra_src, key);
	return s ? drift(o, s) : NULL;
}

/* Round 19: the late pods of dispatched group j held because their
 * claims' copies were refused (worker.c's j->held) that name hub object
 * nsname of kind r: released, so that the next send tries them again.
 * Whether one was.  Round 21: not a pull cluster's, which its agent's
 * entry holds and releases (mu__dwork_pull_held).  Round 22: a pull
 * cluster's hold keeps its place, but the object's new resourceVersion
 * goes into its record ("orv", written to MU__D_HELD), where the agent
 * sees that the hold's objects changed and tries the pod again (agent.c's
 * pod_held); true then too (the group is touched, nothing is sent in pull
 * mode).  Round 23: the object deleted (o NULL) releases nothing, push or
 * pull: there is nothing to copy, so the pod stays held, and its record's
 * version of the object becomes "" (gone), so that the object made again
 * is a new version (a change: tried once then) and a re-list that still
 * lacks it is none; true (the record written).  O(held pods x their
 * keys). */
static bool held_release(mu__dd_t *d, mu__djob_t *j, int r, const char *nsname,
			 const json_t *o)
{
	bool pull = j->cl >= 0 && d->cls[j->cl].pull;
	const char *orv = o ? mu__jstr(o, "metadata.resourceVersion") : "";
	const char *name = strchr(nsname, '/');
	char key[600];
	snprintf(key, sizeof key, "%d/%s", r, name ? name + 1 : nsname);
	bool any = false;
	const char *pn;
	json_t *h, *tmp;
	json_object_foreach_safe(j->held, tmp, pn, h) {
		size_t i;
		json_t *k;
		bool hit = false;
		json_array_foreach(json_object_get(h, "keys"), i, k)
			hit |= json_string_value(k) && !strcmp(json_string_value(k), key);
		/* round 20: the object as it was when held (a re-list, a
		 * restart's first list) is no change; round 23: nor is one
		 * gone that was gone */
		const char *hrv = json_string_value(json_object_get(json_object_get(h, "orv"), key));
		if (!hit || (hrv && orv && !strcmp(hrv, orv)))
			continue;
		json_t *ov = json_object_get(h, "orv");
		if (!json_is_object(ov))
			json_object_set_new(h, "orv", ov = json_object());
		if (pull && !hrv && o && orv) {
			/* a pull hold is recorded from the hub's watch only (the
			 * agent read the object): one recorded before the watch
			 * had the object takes its first sight as the version
			 * held, not as a change (the agent would try again) */
			json_object_set_new(ov, key, json_string(orv));
			continue;
		}
		if (!o || pull) { /* round 23: gone, held; round 22: pull, its record moves */
			json_object_set_new(ov, key, json_string(orv ? orv : ""));
			if (!o)
				mu__dlog(d, 1, "job %s: pod %s: %s %s deleted on the hub (watched): held "
					 "until it is made again", j->key, pn, KIND[r], nsname);
			else
				mu__dlog(d, 1, "job %s: pod %s: %s %s changed on the hub (watched): "
					 "cluster %s's agent tries it again", j->key, pn, KIND[r], nsname,
					 d->cls[j->cl].name);
			any = true; /* the group touched: its record MU__D_HELD written */
			continue;
		}
		mu__dlog(d, 1, "job %s: pod %s: %s %s changed on the hub (watched): sent again", j->key,
			 pn, KIND[r], nsname);
		json_object_del(j->held, pn);
		any = true;
	}
	return any;
}

/* Hub object nsname ("NS/NAME") of kind r, now o (NULL: gone): the
 * jobs that name it and that it moves into back (uid -> true; round 19:
 * a dispatched group whose held pods it releases, uid -> false).
 * O(jobs naming it). */
static void key_changed(mu__dd_t *d, int r, const char *nsname, const json_t *o, json_t *back)
{
	char k[700];
	snprintf(k, sizeof k, "%d/%s", r, nsname);
	json_t *set = json_object_get(d->dra_idx, k);
	const char *name = strchr(nsname, '/');
	if (!set || !name)
		return;
	name++;
	const char *uid;
	json_t *v;
	json_object_foreach(set, uid, v) {
		json_t *at = json_object_get(d->by_uid, uid);
		mu__djob_t *j = at ? d->jobs[json_integer_value(at)] : NULL;
		if (j && j->state == MU__DJ_DISPATCHED && !json_object_get(back, uid) &&
		    held_release(d, j, r, nsname, o)) {
			json_object_set_new(back, uid, json_false()); /* sent again, not read */
			continue;
		}
		const char *how = j && !json_object_get(back, uid) ? moves(j, r, name, o) : NULL;
		if (!how)
			continue;
		mu__dlog(d, 1, "job %s: %s %s %s (watched): read again", j->key, KIND[r], nsname, how);
		json_object_set_new(back, uid, json_true());
	}
}

json_t *mu__dhdra_watch(mu__dd_t *d)
{
	json_t *back = NULL;
	for (int r = 0; r < 2; r++) {
		json_t *ch = NULL;
		uint64_t seq = 0;
		if (!d->wdhub[r] || !mu_kube_watch_changes(d->wdhub[r], d->dhub_seq[r], &ch, &seq) ||
		    seq == d->dhub_seq[r]) {
			json_decref(ch);
			continue; /* not answering (claims_retry reads), or nothing new */
		}
		if (!back)
			back = json_object();
		const char *k;
		json_t *o;
		if (ch) {
			json_object_foreach(ch, k, o)
				key_changed(d, r, k, json_is_null(o) ? NULL : o, back);
		} else { /* listed again (or the first list): each object named */
			json_object_foreach(d->dra_idx, k, o) {
				if (k[0] != '0' + r || k[1] != '/')
					continue;
				json_t *now = mu_kube_watch_get(d->wdhub[r], k + 2);
				key_changed(d, r, k + 2, now, back);
				json_decref(now);
			}
		}
		json_decref(ch);
		d->dhub_seq[r] = seq;
	}
	return back;
}

/* Pod claim entry e ({"name", "resourceClaimTemplateName" or
 * "resourceClaimName"}): the object it names (NULL: neither), its kind
 * into *r (0 a template, 1 a claim). */
static const char *claim_obj(const json_t *e, int *r)
{
	const char *tn = json_string_value(json_object_get(e, "resourceClaimTemplateName"));
	*r = tn ? 0 : 1;
	return tn ? tn : json_string_value(json_object_get(e, "resourceClaimName"));
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
	if (!obj && name)
		idx_add(d, j, r, name); /* its events read j again (round 18) */
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
	mu__dhdra_forget(d, j);
	mu__dhdra_clear(j);
	const mu_job_spec_t *js = &j->specs.jobs[0];
	bool any = false;
	for (size_t i = 0; i < js->npodsets; i++)
		any |= js->podsets[i].dra_claims != NULL;
	if (!any)
		return 0; /* the hot path: one test per pod set */
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

/* --- copies on a worker ------------------------------------------------------- */

/* The dispatch a copy is made for: the hub job's uid, namespace, key
 * ("NS/NAME" or "KIND:NS/NAME") and generation, and the cluster's name
 * (for messages).  Push mode fills it from a mu__djob_t, the pull agent
 * from the hub object it reads. */
typedef struct disp {
	const char *uid, *ns, *key, *cluster;
	uint32_t gen;
} disp_t;

static disp_t disp_of(const mu__dd_t *d, const mu__djob_t *j)
{
	return (disp_t){j->uid, j->ns, j->key, j->cl >= 0 ? d->cls[j->cl].name : "?", j->gen};
}

/* Hub object o (kind r) as its copy for dispatch p, named cp.  Owned. */
static json_t *copy_obj(const disp_t *p, int r, const json_t *o, const char *cp)
{
	char gen[16];
	snprintf(gen, sizeof gen, "%u", p->gen);
	json_t *labels = json_deep_copy(mu__jget(o, "metadata.labels"));
	if (!json_is_object(labels)) {
		json_decref(labels);
		labels = json_object();
	}
	json_object_set_new(labels, MU__D_HUBUID, json_string(p->uid));
	json_t *spec = json_deep_copy(json_object_get(o, "spec"));
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:o,s:{s:s,s:s,s:s}},s:o}", "apiVersion",
			 MU__DDRA_API, "kind", KIND[r], "metadata", "name", cp, "namespace", p->ns,
			 "labels", labels, "annotations", MU__D_GEN, gen, MU__D_HUBJOB, p->key,
			 "muster.io/dispatch-source", mu__jstr(o, "metadata.name"), "spec",
			 spec ? spec : json_object());
}

/* Pod spec holder t's claims (t's spec.resourceClaims: a pod template,
 * or a pod) renamed to dispatch (uid, gen)'s copies. */
static void rename_claims(const char *uid, uint32_t gen, json_t *t)
{
	size_t i;
	json_t *e;
	json_array_foreach(mu__jget(t, "spec.resourceClaims"), i, e) {
		for (int r = 0; r < 2; r++) {
			const char *f = r ? "resourceClaimName" : "resourceClaimTemplateName";
			const char *n = json_string_value(json_object_get(e, f));
			char cp[300];
			if (n && copy_name(n, uid, gen, cp, sizeof cp))
				json_object_set_new(e, f, json_string(cp));
		}
	}
}

/* The pod templates of copy body of kind k into t[0..max) (a Job's one;
 * the other kinds' as kinds.c finds them; a group's none: its pods are
 * sent one by one).  How many. */
static int body_templates(json_t *body, mu__dkind_t k, json_t **t, int max)
{
	json_t *spec = json_object_get(body, "spec");
	if (k == MU__DK_JOB) {
		t[0] = json_object_get(spec, "template");
		return t[0] ? 1 : 0;
	}
	if (mu__dkind_is_group(k))
		return 0;
	mu__dtmpl_t tt[16];
	int n = mu__dkind_templates(spec, k, tt, 16 < max ? 16 : max);
	for (int i = 0; i < n; i++)
		t[i] = tt[i].tmpl;
	return n;
}

void mu__dhdra_rename(const mu__djob_t *j, json_t *body)
{
	if (!j->dra_src)
		return;
	json_t *t[16];
	int n = body_templates(body, j->kind, t, 16);
	for (int i = 0; i < n; i++)
		rename_claims(j->uid, j->gen, t[i]);
}

void mu__dhdra_rename_pod(const mu__djob_t *j, json_t *pod)
{
	if (j->dra_src)
		rename_claims(j->uid, j->gen, pod);
}

json_t *mu__dhdra_held_rvs(mu__dd_t *d, const mu__djob_t *j, const json_t *keys)
{
	json_t *out = json_object();
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k) {
		const char *s = json_string_value(k);
		if (!s || (s[0] != '0' && s[0] != '1') || s[1] != '/' || !d->wdhub[s[0] - '0'])
			continue;
		char nsname[700];
		snprintf(nsname, sizeof nsname, "%s/%s", j->ns, s + 2);
		json_t *o = mu_kube_watch_get(d->wdhub[s[0] - '0'], nsname);
		const char *rv = mu__jstr(o, "metadata.resourceVersion");
		if (rv)
			json_object_set_new(out, s, json_string(rv));
		json_decref(o);
	}
	return out;
}

int mu__dhdra_orv_moved(const json_t *seen, const json_t *now)
{
	if (json_equal(seen, now))
		return 0;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)now, k, v)
		if (json_is_string(v) && !*json_string_value(v))
			return -1; /* one gone on the hub: nothing to copy yet */
	return 1;
}

/* Whether worker object o is the copy for dispatch p. */
static bool ours(const disp_t *p, const json_t *o);
static long copy_one(mu__dd_t *d, mu_kube_client_t *kc, const disp_t *p, int r, const char *name,
		     const json_t *obj, char **refused);
static long hub_get(mu__dd_t *d, mu_kube_client_t *hub, int r, const char *ns, const char *name,
		    json_t **out);
static int fetch_copy(mu__dd_t *d, mu_kube_client_t *hub, mu_kube_client_t *w, const disp_t *p,
		      int r, const char *name, const char *who, char *msg, size_t ml, json_t *rvs);

int mu__dhdra_pod(mu__dd_t *d, mu_kube_client_t *kc, mu__djob_t *j, json_t *pod, char *msg,
		  size_t ml, json_t *rvs)
{
	json_t *rc = mu__jget(pod, "spec.resourceClaims");
	if (!json_array_size(rc))
		return 0; /* the hot path: no claims, no request */
	disp_t p = disp_of(d, j);
	mu_kube_client_t *hub = NULL; /* made only for an object the group did not name */
	int out = 0;
	size_t i;
	json_t *e;
	json_array_foreach(rc, i, e) {
		int r;
		const char *name = claim_obj(e, &r);
		char key[600];
		snprintf(key, sizeof key, "%d/%s", r, name ? name : "");
		if (!name || json_object_get(j->dra_src, key))
			continue; /* read with the group: copied by mu__dhdra_create */
		/* a pod that came after the group was read (round 17): its
		 * object read from the hub and copied now, as the pull agent
		 * copies a pod's */
		if (!hub && mu_kube_client_new(d->o->hub, &hub) != MU_OK)
			hub = NULL; /* not made: fetch_copy says HTTP 0, retried */
		const char *who = mu__jstr(pod, "metadata.name");
		out = fetch_copy(d, hub, kc, &p, r, name, who ? who : "?", msg, ml, rvs);
		if (out)
			break;
		mu__dlog(d, 1, "job %s: %s %s/%s, named by a pod that came after the group was read, "
			 "copied to %s", j->key, KIND[r], j->ns, name, p.cluster);
	}
	mu_kube_client_free(hub);
	if (!out)
		rename_claims(j->uid, j->gen, pod);
	return out;
}

json_t *mu__dhdra_pod_keys(const mu__djob_t *j, const json_t *pod)
{
	json_t *keys = json_array();
	size_t i;
	json_t *e;
	json_array_foreach(mu__jget(pod, "spec.resourceClaims"), i, e) {
		int r;
		const char *name = claim_obj(e, &r);
		char key[600];
		snprintf(key, sizeof key, "%d/%s", r, name ? name : "");
		if (name && !(j && json_object_get(j->dra_src, key)))
			json_array_append_new(keys, json_string(key));
	}
	return keys;
}

void mu__dhdra_held_watch(mu__dd_t *d, mu__djob_t *j, const json_t *keys)
{
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k) {
		const char *s = json_string_value(k);
		if (s && (s[0] == '0' || s[0] == '1') && s[1] == '/')
			idx_add(d, j, s[0] - '0', s + 2);
	}
}

/* Whether worker object o is the copy for dispatch p. */
static bool ours(const disp_t *p, const json_t *o)
{
	char g[16];
	snprintf(g, sizeof g, "%u", p->gen);
	const char *uid = mu__dmeta(o, "labels", MU__D_HUBUID);
	const char *gen = mu__dmeta(o, "annotations", MU__D_GEN);
	return uid && gen && !strcmp(uid, p->uid) && !strcmp(gen, g);
}

/* Hub object obj (kind r, named name) copied through kc for dispatch p:
 * 201 when made or when this dispatch's copy is there already; else the
 * HTTP status, with *refused (owned) set when the worker refuses it for
 * good: an object of the copy's name the dispatcher did not make for this
 * dispatch, or a refusal mu__dwork_refused counts.  One POST (a GET on
 * 409, a namespace POST and a second POST on 404). */
static long copy_one(mu__dd_t *d, mu_kube_client_t *kc, const disp_t *p, int r, const char *name,
		     const json_t *obj, char **refused)
{
	char cp[300], path[1200];
	if (!copy_name(name, p->uid, p->gen, cp, sizeof cp))
		return 0;
	json_t *body = copy_obj(p, r, obj, cp), *ans = NULL;
	snprintf(path, sizeof path, API "/namespaces/%s/%s", p->ns, RES[r]);
	long st = mu__dreq_err(d, kc, "POST", path, NULL, body, &ans);
	if (st == 404) { /* its namespace, then once more */
		json_t *ns = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
				       "metadata", "name", p->ns);
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
		if (gs == 200 && ours(p, cur)) {
			st = 201;
		} else if (gs == 200 && !*refused) {
			char m[800];
			snprintf(m, sizeof m, "cluster %s has a %s %s/%s that the dispatcher did "
				 "not make for this dispatch: not overwritten", p->cluster, KIND[r],
				 p->ns, cp);
			*refused = strdup(m);
		}
		json_decref(cur);
	}
	if (st != 200 && st != 201) {
		const char *w = mu__jstr(ans, "message");
		mu__dlog(d, 0, "cluster %s: create %s %s/%s for job %s: HTTP %ld %s", p->cluster,
			 KIND[r], p->ns, cp, p->key, st, w ? w : "");
		if (mu__dwork_refused(st) && !*refused) {
			char m[800];
			snprintf(m, sizeof m, "cluster %s refused the copy of %s %s/%s: HTTP %ld: "
				 "%.500s", p->cluster, KIND[r], p->ns, name, st, w ? w : "");
			*refused = strdup(m);
		}
	}
	json_decref(ans);
	return st == 200 ? 201 : st;
}

/* Hub object name of kind r in namespace ns read again through hub into
 * *out (owned): the HTTP status.  One GET. */
static long hub_get(mu__dd_t *d, mu_kube_client_t *hub, int r, const char *ns, const char *name,
		    json_t **out)
{
	char path[1200];
	snprintf(path, sizeof path, API "/namespaces/%s/%s/%s", ns, RES[r], name);
	*out = NULL;
	long st = mu__dreq(d, hub, "GET", path, NULL, NULL, out);
	if (st == 200 && !json_is_object(*out))
		st = 0;
	if (st != 200) {
		json_decref(*out);
		*out = NULL;
	}
	return st;
}

bool mu__dhdra_stale(mu__dd_t *d, mu_kube_client_t *hub, mu__djob_t *j)
{
	j->dra_stale = j->dra_fresh = false;
	const char *key;
	json_t *s;
	json_object_foreach(j->dra_src, key, s) {
		int r = (int)json_integer_value(json_object_get(s, "r"));
		const char *name = json_string_value(json_object_get(s, "name"));
		json_t *now = NULL;
		long hs = hub_get(d, hub, r, j->ns, name, &now);
		const char *how = hs == 404 || now ? drift(now, s) : NULL;
		if (how) {
			mu__dlog(d, 1, "job %s: %s %s/%s %s: not sent, read again", j->key, KIND[r],
				 j->ns, name, how);
			json_decref(now);
			j->dra_stale = true;
			return true;
		}
		if (!now)
			return false; /* not answered: the copy's create reads it */
		json_object_set_new(s, "obj", now);
	}
	j->dra_fresh = true;
	return false;
}

long mu__dhdra_create(mu__dd_t *d, mu_kube_client_t *kc, mu__djob_t *j)
{
	disp_t p = disp_of(d, j);
	/* a client of its own for the hub: this runs on the senders'
	 * threads (run.c), and a client is one thread's at a time; none
	 * when the objects were read at this dispatch (mu__dhdra_stale) */
	bool fresh = j->dra_fresh;
	j->dra_fresh = false;
	mu_kube_client_t *hub = NULL;
	if (!fresh && mu_kube_client_new(d->o->hub, &hub) != MU_OK)
		return 0; /* out of memory: retried */
	long out = 201;
	const char *key;
	json_t *s;
	json_object_foreach(j->dra_src, key, s) {
		int r = (int)json_integer_value(json_object_get(s, "r"));
		const char *name = json_string_value(json_object_get(s, "name"));
		/* the hub's object as it is now: read just before the record
		 * (mu__dhdra_stale, round 17), it is not read again; a retry
		 * reads it (round 16), and one gone or changed since makes
		 * the job stale (round 18) */
		json_t *now = NULL;
		long hs = fresh ? 0 : hub_get(d, hub, r, j->ns, name, &now);
		const char *how = hs == 404 || now ? drift(now, s) : NULL;
		if (how) {
			/* round 18: gone or changed between the record and this
			 * (retried) create: not made, and the job goes back to be
			 * read again at once (run.c's created), as a stale job
			 * is at dispatch, not at --start-timeout */
			mu__dlog(d, 0, "job %s: %s %s/%s %s: its copy is not made, the job is read again",
				 j->key, KIND[r], j->ns, name, how);
			out = now ? 409 : 404;
			json_decref(now);
			j->dra_stale = true;
			break;
		}
		if (now)
			json_object_set_new(s, "obj", now);
		char *refused = NULL;
		long st = copy_one(d, kc, &p, r, name, json_object_get(s, "obj"), &refused);
		if (refused) {
			free(j->refused);
			j->refused = refused;
		}
		if (st != 201) {
			out = st;
			break;
		}
	}
	mu_kube_client_free(hub);
	return out;
}

/* --- copies on a pull worker, by its agent ----------------------------------- */

/* Hub object name (kind r, p's namespace) read now through hub (NULL: not
 * readable) and copied to worker w for dispatch p: 0 copied, 1 not now
 * (read or create failed: retried), -1 refused (a same-named object that
 * is not ours); msg says why, prefixed "pod WHO: " for a read of a pod's
 * object when who is given; its resourceVersion as read into rvs under
 * "R/NAME" when rvs is given (round 20).  Two requests at most. */
static int fetch_copy(mu__dd_t *d, mu_kube_client_t *hub, mu_kube_client_t *w, const disp_t *p,
		      int r, const char *name, const char *who, char *msg, size_t ml, json_t *rvs)
{
	json_t *obj = NULL;
	long hs = hub ? hub_get(d, hub, r, p->ns, name, &obj) : 0;
	const char *rv = mu__jstr(obj, "metadata.resourceVersion");
	if (rvs && rv) {
		char key[600];
		snprintf(key, sizeof key, "%d/%s", r, name);
		json_object_set_new(rvs, key, json_string(rv));
	}
	if (hs != 200) {
		snprintf(msg, ml, "%s%s%s%s %s/%s not read from the hub: HTTP %ld", who ? "pod " : "",
			 who ? who : "", who ? ": " : "", KIND[r], p->ns, name, hs);
		return 1;
	}
	char *refused = NULL;
	long st = copy_one(d, w, p, r, name, obj, &refused);
	json_decref(obj);
	if (refused) {
		snprintf(msg, ml, "%s", refused);
		free(refused);
		return -1;
	}
	if (st != 201) {
		snprintf(msg, ml, "%s %s/%s not copied: HTTP %ld", KIND[r], p->ns, name, st);
		return 1;
	}
	return 0;
}

int mu__dhdra_agent_copy(mu__dd_t *d, mu_kube_client_t *w, const char *cluster, mu__dkind_t k,
			 const json_t *hub, json_t *body, bool pod, char *msg, size_t ml)
{
	json_t *t[16];
	int n = pod ? 1 : body_templates(body, k, t, 16);
	if (pod)
		t[0] = body;
	bool any = false;
	for (int i = 0; i < n && !any; i++)
		any = json_array_size(mu__jget(t[i], "spec.resourceClaims")) > 0;
	if (!any)
		return 0; /* the hot path: no request */
	const char *uid = mu__jstr(hub, "metadata.uid");
	const char *gen = mu__dmeta(hub, "annotations", MU__D_GEN);
	const char *ns = mu__jstr(hub, "metadata.namespace");
	char key[700];
	if (k == MU__DK_JOB)
		snprintf(key, sizeof key, "%s/%s", ns ? ns : "default", mu__jstr(hub, "metadata.name"));
	else
		snprintf(key, sizeof key, "%s:%s/%s", mu__dkind_name(k), ns ? ns : "default",
			 mu__jstr(hub, "metadata.name"));
	disp_t p = {uid, ns ? ns : "default", key, cluster, gen ? (uint32_t)atol(gen) : 0};
	if (!uid || !gen)
		return 1;
	json_t *done = json_object(); /* "R/NAME" copied this call */
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		size_t e;
		json_t *c;
		json_array_foreach(mu__jget(t[i], "spec.resourceClaims"), e, c) {
			const char *tn = json_string_value(json_object_get(c, "resourceClaimTemplateName"));
			const char *cn = json_string_value(json_object_get(c, "resourceClaimName"));
			int r = tn ? 0 : 1;
			const char *name = tn ? tn : cn;
			char dk[400];
			snprintf(dk, sizeof dk, "%d/%s", r, name ? name : "");
			if (!name || json_object_get(done, dk))
				continue;
			/* read from the hub now: the copy is the hub's object as
			 * it is at dispatch */
			rc = fetch_copy(d, d->hub, w, &p, r, name, NULL, msg, ml, NULL);
			if (rc)
				break;
			json_object_set_new(done, dk, json_true());
		}
	}
	json_decref(done);
	if (!rc)
		for (int i = 0; i < n; i++)
			rename_claims(uid, p.gen, t[i]);
	return rc;
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

bool mu__dhdra_conflict(mu_kube_watch_t *const w[2], const char *uid, uint32_t gen, const char *ns,
			const json_t *keys)
{
	disp_t p = {uid, ns, NULL, NULL, gen};
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k) {
		const char *s = json_string_value(k);
		char cp[300], nsname[600];
		if (!s || (s[0] != '0' && s[0] != '1') || s[1] != '/' || !w[s[0] - '0'] ||
		    !copy_name(s + 2, uid, gen, cp, sizeof cp))
			continue;
		snprintf(nsname, sizeof nsname, "%s/%s", ns, cp);
		json_t *o = mu_kube_watch_get(w[s[0] - '0'], nsname);
		bool theirs = o && !ours(&p, o);
		json_decref(o);
		if (theirs)
			return true;
	}
	return false;
}

json_t *mu__dhdra_held_worker(mu__dd_t *d, mu__dcl_t *c)
{
	mu_kube_watch_t *w[2] = {c->wdtpl, c->wdra[MU__DDRA_CLAIMS]};
	uint64_t seq[2] = {0, 0};
	for (int r = 0; r < 2; r++)
		if (!w[r] || !mu_kube_watch_items(w[r], NULL, &seq[r]))
			return NULL; /* not listed yet: as it was */
	if (seq[0] == c->dheld_seq[0] && seq[1] == c->dheld_seq[1])
		return NULL;
	json_t *back = NULL;
	c->dheld_seq[0] = seq[0];
	c->dheld_seq[1] = seq[1];
	int32_t ci = (int32_t)(c - d->cls);
	for (int32_t x = 0; x < d->njobs; x++) {
		mu__djob_t *j = d->jobs[x];
		if (!j->held || j->cl != ci || j->state != MU__DJ_DISPATCHED)
			continue;
		const char *pn;
		json_t *h, *tmp;
		bool any = false;
		json_object_foreach_safe(j->held, tmp, pn, h) {
			if (json_integer_value(json_object_get(h, "gen")) != (json_int_t)j->gen)
				continue;
			if (mu__dhdra_conflict(w, j->uid, j->gen, j->ns, json_object_get(h, "keys"))) {
				json_object_set_new(h, "wseen", json_true());
				continue;
			}
			if (!json_is_true(json_object_get(h, "wseen")))
				continue; /* refused otherwise (a 4xx), or not seen yet */
			mu__dlog(d, 1, "job %s: pod %s: the object of its copy's name that cluster "
				 "%s had is gone: sent again", j->key, pn, c->name);
			json_object_del(j->held, pn);
			any = true;
		}
		if (any && (back || (back = json_object())))
			json_object_set_new(back, j->uid, json_false());
	}
	return back;
}

int mu__dhdra_agent_sweep(mu__dd_t *d, mu_kube_client_t *w, const json_t *const lists[2],
			  const json_t *current, const bool listed[MU__DK_COUNT])
{
	int n = 0;
	for (int r = 0; r < 2; r++) {
		size_t i;
		json_t *o;
		json_array_foreach(json_object_get(lists[r], "items"), i, o) {
			const char *uid = mu__dmeta(o, "labels", MU__D_HUBUID);
			const char *gen = mu__dmeta(o, "annotations", MU__D_GEN);
			const char *hj = mu__dmeta(o, "annotations", MU__D_HUBJOB);
			const char *ns = mu__jstr(o, "metadata.namespace");
			const char *name = mu__jstr(o, "metadata.name");
			if (!uid || !ns || !name || mu__jget(o, "metadata.deletionTimestamp"))
				continue;
			/* its job's kind: "KIND:NS/NAME", or a Job's "NS/NAME";
			 * a kind whose lists did not answer this pass keeps its
			 * copies, as its job copies are kept */
			int k = MU__DK_JOB;
			const char *colon = hj ? strchr(hj, ':') : NULL;
			if (colon) {
				char kn[64];
				bool on[MU__DK_COUNT];
				snprintf(kn, sizeof kn, "%.*s", (int)(colon - hj < 63 ? colon - hj : 63), hj);
				mu__dkind_list(kn, on);
				k = -1;
				for (int x = 1; x < MU__DK_COUNT && k < 0; x++)
					if (on[x])
						k = x;
			}
			if (k < 0 || !listed[k])
				continue;
			const char *cg = json_string_value(json_object_get(current, uid));
			if (cg && gen && !strcmp(cg, gen))
				continue;
			char path[1200];
			snprintf(path, sizeof path, API "/namespaces/%s/%s/%s", ns, RES[r], name);
			long st = mu__dreq(d, w, "DELETE", path, NULL, NULL, NULL);
			mu__dlog(d, 1, "stale %s %s/%s (generation %s) deleted: HTTP %ld", KIND[r], ns,
				 name, gen ? gen : "?", st);
			n++;
		}
	}
	return n;
}

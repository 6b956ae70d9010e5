/*
 * worker.c - the worker side of the daemon in push mode: each pass reads a
 * worker's Nodes (into that cluster's model in the fleet), and its copies
 * of hub Jobs with their pods (labelled muster.io/hub-uid), from the
 * watches dutil.c keeps of them (mu_kube_watch_t: no request per pass).  A copy that
 * is not the current dispatch of its hub Job (no such hub Job, another
 * cluster, or another generation) is deleted; the current ones' status
 * (phase; pods bound, running, succeeded, failed) goes to their hub job.
 * Copies are created here too: unsuspended, marked admitted
 * (muster.io/admitted, as muster's own Job admission does it), and
 * carrying the hub Job's uid and the dispatch generation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"
#include "muster/load.h"

/* --- nodes ------------------------------------------------------------------ */

/* What the model needs of a Node, as a v1 Node document for the loader:
 * name, labels, taints and allocatable; a node that is not Ready or is
 * cordoned gets a NoSchedule taint.  Owned text. */
static char *node_slim(const json_t *n)
{
	json_t *taints = json_deep_copy(mu__jget(n, "spec.taints"));
	if (!json_is_array(taints)) {
		json_decref(taints);
		taints = json_array();
	}
	bool ready = false;
	size_t i;
	json_t *cd;
	json_array_foreach(mu__jget(n, "status.conditions"), i, cd) {
		const char *t = json_string_value(json_object_get(cd, "type"));
		const char *s = json_string_value(json_object_get(cd, "status"));
		if (t && s && !strcmp(t, "Ready"))
			ready = !strcmp(s, "True");
	}
	if (!ready || json_is_true(mu__jget(n, "spec.unschedulable")))
		json_array_append_new(taints, json_pack("{s:s,s:s}", "key",
				      "node.kubernetes.io/unschedulable", "effect", "NoSchedule"));
	json_t *labels = mu__jget(n, "metadata.labels");
	json_t *alloc = mu__jget(n, "status.allocatable");
	json_t *o = json_pack("{s:s,s:s,s:{s:s,s:O},s:{s:o},s:{s:O}}", "apiVersion", "v1", "kind",
			      "Node", "metadata", "name", mu__jstr(n, "metadata.name"), "labels",
			      labels ? labels : json_object(), "spec", "taints", taints, "status",
			      "allocatable", alloc ? alloc : json_object());
	char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	return text;
}

/* Brings c's model up to date with the Node list l and c->used (the
 * room pods beside the hub's take on each).  O(nodes). */
static void nodes_sync(mu__dd_t *d, mu__dcl_t *c, const json_t *l)
{
	mu_time_t now = mu__d_now(d);
	json_t *seen = json_object();
	int64_t gpus = 0;
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(l, "items"), i, n) {
		const char *name = mu__jstr(n, "metadata.name");
		char *text = name ? node_slim(n) : NULL;
		if (!text)
			continue;
		json_t *gv = json_object_get(mu__jget(n, "status.allocatable"), "nvidia.com/gpu");
		const char *g = json_string_value(gv);
		gpus += g ? atoll(g) : json_integer_value(gv);
		json_object_set_new(seen, name, json_true());
		/* what pods beside the hub's take there (podcap.c): part of
		 * what the model has of the node */
		const char *u = json_string_value(json_object_get(c->used, name));
		mu_res_t used = {{0}};
		/* round 13: the shares of one GPU there, each its milli-GPU
		 * of its device in the model rather than a whole GPU */
		mu_fleet_share_t sh[2 * MU_MAX_GPUS];
		int32_t nsh = u ? mu__dused_model(u, &used, sh, 2 * MU_MAX_GPUS) : 0;
		if (nsh < 0) {
			u = NULL;
			nsh = 0;
		}
		size_t tl = strlen(text);
		char *had_key = malloc(tl + (u ? strlen(u) : 0) + 2);
		if (!had_key) {
			free(text);
			continue;
		}
		snprintf(had_key, tl + (u ? strlen(u) : 0) + 2, "%s|%s", text, u ? u : "");
		const char *had = json_string_value(json_object_get(c->nodes, name));
		if (had && !strcmp(had, had_key)) {
			free(had_key);
			free(text);
			continue;
		}
		mu_specs_t s;
		mu_specs_init(&s);
		mu_diag_t dg = {""};
		int rc = mu_load_yaml(name, text, tl, &s, &dg);
		if (rc == MU_OK && s.nnodes == 1 && u && mu__dused_ext(u, &s.nodes[0]) != MU_OK)
			mu__dlog(d, 0, "cluster %s: node %s: bad named resources in use", c->name, name);
		if (rc == MU_OK && s.nnodes == 1)
			rc = mu_fleet_node_upsert_shared(d->fleet, c->fid, &s.nodes[0], u ? &used : NULL,
							 sh, nsh, now);
		if (rc)
			mu__dlog(d, 0, "cluster %s: node %s: %s %s", c->name, name, mu_strerror(rc), dg.msg);
		else
			json_object_set_new(c->nodes, name, json_string(had_key));
		mu_specs_release(&s);
		free(had_key);
		free(text);
	}
	const char *k;
	json_t *v, *tmp;
	json_object_foreach_safe(c->nodes, tmp, k, v) {
		if (json_object_get(seen, k))
			continue;
		mu_fleet_node_remove(d->fleet, c->fid, k, now);
		json_object_del(c->nodes, k);
	}
	json_decref(seen);
	c->gpus = gpus;
}

/* --- copies ----------------------------------------------------------------- */

long mu__dwork_delete(mu__dd_t *d, mu__dcl_t *c, mu__dkind_t k, const char *ns,
		      const char *name)
{
	char path[1024];
	mu__dkind_path(k, ns, name, "?propagationPolicy=Background", path, sizeof path);
	long st = mu__dreq(d, c->kc, "DELETE", path, NULL, NULL, NULL);
	if (st != 200 && st != 202 && st != 404)
		mu__dlog(d, 0, "cluster %s: delete %s %s/%s: HTTP %ld", c->name, mu__dkind_name(k),
			 ns, name, st);
	return st;
}

/* Pod counts of one hub uid on a worker. */
typedef struct pc {
	int bound, running, succeeded, failed;
} pc_t;

json_t *mu__dpods_count(const json_t *l)
{
	json_t *m = json_object();
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(l, "items"), i, p) {
		const char *uid = mu__dmeta(p, "labels", MU__D_HUBUID);
		const char *gen = mu__dmeta(p, "labels", MU__D_GEN);
		if (!uid || !gen)
			continue;
		char key[300];
		snprintf(key, sizeof key, "%s/%s", uid, gen);
		json_t *a = json_object_get(m, key);
		if (!a) {
			a = json_pack("[i,i,i,i,i]", 0, 0, 0, 0, 0);
			json_object_set_new(m, key, a);
		}
		json_array_set_new(a, 4, json_integer(json_integer_value(json_array_get(a, 4)) + 1));
		const char *ph = mu__jstr(p, "status.phase");
		const char *node = mu__jstr(p, "spec.nodeName");
		int idx[4] = {node && *node, ph && !strcmp(ph, "Running"),
			      ph && !strcmp(ph, "Succeeded"), ph && !strcmp(ph, "Failed")};
		for (int k = 0; k < 4; k++)
			if (idx[k])
				json_array_set_new(a, (size_t)k,
						   json_integer(json_integer_value(json_array_get(a, (size_t)k)) + 1));
	}
	return m;
}

const char *mu__dcopy_done(const json_t *w)
{
	return mu__dkind_done(w, MU__DK_JOB);
}

void mu__dpods_of(const json_t *pods, const char *uid, uint32_t gen, int64_t c[5])
{
	char key[300];
	snprintf(key, sizeof key, "%s/%u", uid, gen);
	json_t *a = json_object_get(pods, key);
	for (size_t i = 0; i < 5; i++)
		c[i] = json_integer_value(json_array_get(a, i));
}

/* The pods of group j sent for its current generation. */
static int64_t group_nsent(const mu__djob_t *j)
{
	int64_t n = 0;
	const char *k;
	json_t *v;
	json_object_foreach(j->sent, k, v)
		n += json_integer_value(v) == (json_int_t)j->gen;
	return n;
}

/* Whether pod copy p on cluster ci (a pod the dispatcher made for a group:
 * annotation muster.io/hub-job) is not its group's current dispatch, once
 * the hub's list of that kind was read. */
static bool pod_stale(const mu__dd_t *d, int32_t ci, const json_t *p)
{
	const char *hj = mu__dmeta(p, "annotations", MU__D_HUBJOB);
	const char *uid = mu__dmeta(p, "labels", MU__D_HUBUID);
	const char *gen = mu__dmeta(p, "labels", MU__D_GEN);
	const char *colon = hj ? strchr(hj, ':') : NULL;
	if (!colon || mu__jget(p, "metadata.deletionTimestamp"))
		return false;
	int kind = -1;
	for (int k = 0; k < MU__DK_COUNT; k++)
		if (mu__dkind_is_group((mu__dkind_t)k) &&
		    strlen(mu__dkind_name((mu__dkind_t)k)) == (size_t)(colon - hj) &&
		    !strncmp(hj, mu__dkind_name((mu__dkind_t)k), (size_t)(colon - hj)))
			kind = k;
	if (kind < 0 || !d->kind_listed[kind])
		return false;
	mu__djob_t *j = mu__djob_current(d, uid, gen, ci);
	return !(j && (int)j->kind == kind);
}

/* Whether hold h (an entry of j->held) still holds group j's hub pod p:
 * made for the current dispatch and p not changed since (its
 * resourceVersion).  O(1). */
static bool held_now(const mu__djob_t *j, const json_t *h, const json_t *p)
{
	const char *rv = mu__jstr(p, "metadata.resourceVersion");
	const char *hrv = json_string_value(json_object_get(h, "rv"));
	return json_integer_value(json_object_get(h, "gen")) == (json_int_t)j->gen &&
	       (rv ? hrv && !strcmp(rv, hrv) : !hrv);
}

/* Late pod p (named name) of group j held: the worker refused the copy of
 * an object its claims name (msg).  Then, when the hub pods not held no
 * longer meet the group's minimum (as its read counts them,
 * mu__dkind_group_waits), j->refused, which ends the group NotAdmitted
 * (run.c).  O(the group's pods). */
static void hold(mu__dd_t *d, const mu__dcl_t *c, mu__djob_t *j, const json_t *p,
		 const char *name, const char *msg, const json_t *rvs)
{
	if (!j->held && !(j->held = json_object()))
		return;
	const char *rv = mu__jstr(p, "metadata.resourceVersion");
	json_t *keys = mu__dhdra_pod_keys(j, p), *orv = mu__dhdra_held_rvs(d, j, keys);
	json_object_update(orv, (json_t *)rvs); /* as read now, if read */
	json_object_set_new(j->held, name, json_pack("{s:I,s:s?,s:s,s:O,s:o,s:b}", "gen",
						      (json_int_t)j->gen, "rv", rv, "msg", msg,
						      "keys", keys, "orv", orv, "told", 0));
	json_decref(keys);
	json_t *kept = json_array();
	size_t i;
	json_t *q;
	json_array_foreach(j->gpods, i, q) {
		json_t *h = json_object_get(j->held, mu__jstr(q, "metadata.name") ?
					    mu__jstr(q, "metadata.name") : "");
		if (!h || !held_now(j, h, q))
			json_array_append(kept, q);
	}
	char m[300], r[1400];
	if (!j->refused && mu__dkind_group_waits(j->obj, j->kind, kept, m, sizeof m)) {
		char *semi = strchr(m, ';'); /* "...are on the hub; the group is sent ..." */
		if (semi)
			*semi = '\0';
		snprintf(r, sizeof r, "pod %s: %.800s; without the pods whose copies cluster %s "
			 "refused, the group can no longer meet its minimum: %s", name, msg, c->name, m);
		j->refused = strdup(r);
	}
	json_decref(kept);
}

/* Hub pod named name of group j (its j->gpods), or NULL.  O(its pods). */
static const json_t *gpod(const mu__djob_t *j, const char *name)
{
	size_t i;
	json_t *p;
	json_array_foreach(j->gpods, i, p)
		if (mu__jstr(p, "metadata.name") && !strcmp(mu__jstr(p, "metadata.name"), name))
			return p;
	return NULL;
}

void mu__dwork_pull_held(mu__dd_t *d, mu__dcl_t *c, mu__djob_t *j)
{
	const char *t = mu__dmeta(j->obj, "annotations", MU__D_PODSREFUSED);
	if ((!t && !j->held) || !mu__dkind_is_group(j->kind) || j->state != MU__DJ_DISPATCHED ||
	    j->cl != (int32_t)(c - d->cls))
		return;
	json_t *v = t ? json_loads(t, 0, NULL) : NULL;
	const char *name;
	json_t *e, *tmp;
	bool any = false;
	json_object_foreach(v, name, e) { /* the agent's entries: held */
		const json_t *p = gpod(j, name);
		const char *msg = json_string_value(json_object_get(e, "msg"));
		json_t *h = json_object_get(j->held, name);
		/* an entry of an earlier generation, or of the pod as it was
		 * (it changed since: the agent tries it again), holds nothing */
		if (!p || !msg || !held_now(j, e, p) || (h && held_now(j, h, p)))
			continue;
		hold(d, c, j, p, name, msg, NULL);
		any = true;
	}
	/* a hold whose entry the agent dropped (its worker's object of
	 * the copy's name gone): released, the agent creates the pod */
	json_object_foreach_safe(j->held, tmp, name, e) {
		if (json_object_get(v, name) ||
		    json_integer_value(json_object_get(e, "gen")) != (json_int_t)j->gen)
			continue;
		mu__dlog(d, 1, "job %s: pod %s: cluster %s's agent dropped its refusal (the object "
			 "of its copy's name gone): created there", j->key, name, c->name);
		json_object_del(j->held, name);
		mu__djob_dirty(d, j); /* its record (MU__D_HELD) written again */
	}
	json_decref(v);
	if (any)
		mu__dwork_held_tell(d, j);
}

long mu__dwork_group_send(mu__dd_t *d, mu_kube_client_t *kc, mu__djob_t *j)
{
	const mu__dcl_t *c = &d->cls[j->cl];
	if (!j->sent && !(j->sent = json_object()))
		return 0;
	long worst = 201;
	size_t i;
	json_t *p;
	json_array_foreach(j->gpods, i, p) {
		const char *name = mu__jstr(p, "metadata.name");
		if (!name || json_integer_value(json_object_get(j->sent, name)) == (json_int_t)j->gen)
			continue;
		json_t *h = json_object_get(j->held, name);
		if (h && held_now(j, h, p))
			continue; /* refused, nothing changed since (round 19) */
		if (h)
			json_object_del(j->held, name);
		json_t *body = mu__dkind_pod_copy(p, j->uid, j->key, j->gen), *ans = NULL;
		char dm[800]; /* its claims' copies, a late pod's too (hdra.c) */
		json_t *rvs = json_array_size(mu__jget(p, "spec.resourceClaims")) ? json_object() : NULL;
		int dr = mu__dhdra_pod(d, kc, j, body, dm, sizeof dm, rvs);
		if (dr) {
			mu__dlog(d, 0, "cluster %s: pod %s/%s of %s not sent: %s", c->name, j->ns, name,
				 j->key, dm);
			if (dr < 0) /* round 19: that pod only, unless below the minimum */
				hold(d, c, j, p, name, dm, rvs);
			json_decref(rvs);
			json_decref(body);
			worst = 0;
			continue;
		}
		json_decref(rvs);
		char path[1024], g[16];
		snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", j->ns);
		snprintf(g, sizeof g, "%u", j->gen);
		long st = mu__dreq(d, kc, "POST", path, NULL, body, &ans);
		if (st == 409) { /* ours from before a restart counts as sent */
			char gp[1400];
			json_t *cur = NULL;
			snprintf(gp, sizeof gp, "%s/%s", path, name);
			if (mu__dreq(d, kc, "GET", gp, NULL, NULL, &cur) == 200) {
				const char *uid = mu__dmeta(cur, "labels", MU__D_HUBUID);
				const char *gen = mu__dmeta(cur, "labels", MU__D_GEN);
				if (uid && gen && !strcmp(uid, j->uid) && !strcmp(gen, g))
					st = 201;
			}
			json_decref(cur);
		}
		if (st == 200 || st == 201) {
			json_object_set_new(j->sent, name, json_integer(j->gen));
		} else {
			mu__dlog(d, 0, "cluster %s: create pod %s/%s of %s: HTTP %ld %s", c->name, j->ns,
				 name, j->key, st, mu__jstr(ans, "message") ? mu__jstr(ans, "message") : "");
			worst = st;
		}
		json_decref(ans);
		json_decref(body);
	}
	return worst;
}

void mu__dwork_held_tell(mu__dd_t *d, mu__djob_t *j)
{
	const char *name;
	json_t *h;
	bool any = false;
	json_object_foreach(j->held, name, h) {
		if (json_is_true(json_object_get(h, "told")))
			continue;
		json_object_set_new(h, "told", json_true());
		any = true;
		const json_t *pod = NULL;
		size_t i;
		json_t *p;
		json_array_foreach(j->gpods, i, p)
			if (mu__jstr(p, "metadata.name") && !strcmp(mu__jstr(p, "metadata.name"), name))
				pod = p;
		const char *why = json_string_value(json_object_get(h, "msg"));
		char m[1200];
		snprintf(m, sizeof m, "not created on cluster %s: %.800s; it stays Pending here and is "
			 "sent again when it or an object its claims name changes",
			 j->cl >= 0 ? d->cls[j->cl].name : "?", why ? why : "");
		mu__dlog(d, 0, "job %s: pod %s %s", j->key, name, m);
		if (pod)
			mu__dhub_pod_event(d, pod, "Warning", "ClaimCopyRefused", m);
		char gm[1300];
		snprintf(gm, sizeof gm, "pod %s %s", name, m);
		mu__dhub_event(d, j, "Warning", "FailedCreate", gm);
		mu__dhdra_held_watch(d, j, json_object_get(h, "keys"));
	}
	/* below its minimum: ended by this pass (run.c); round 20: else the
	 * hold is written (MU__D_HELD) */
	if (j->refused || any)
		mu__djob_dirty(d, j);
}

bool mu__dpods_line(const json_t *pods, const char *uid, uint32_t gen, char *buf, size_t len)
{
	char key[300];
	snprintf(key, sizeof key, "%s/%u", uid, gen);
	json_t *a = json_object_get(pods, key);
	pc_t p = {(int)json_integer_value(json_array_get(a, 0)),
		  (int)json_integer_value(json_array_get(a, 1)),
		  (int)json_integer_value(json_array_get(a, 2)),
		  (int)json_integer_value(json_array_get(a, 3))};
	snprintf(buf, len, "bound=%d,running=%d,succeeded=%d,failed=%d", p.bound, p.running,
		 p.succeeded, p.failed);
	return p.bound + p.succeeded + p.failed > 0;
}

/* What a copy says (pods line, started, done) into its hub job j (marked
 * for the write-back when that changed anything). */
static void job_report(mu__dd_t *d, mu__djob_t *j, const char *pods, bool started,
		       const char *done)
{
	if (strcmp(j->pods, pods) || (started && !j->started) ||
	    (done && j->state == MU__DJ_DISPATCHED))
		mu__djob_dirty(d, j);
	snprintf(j->pods, sizeof j->pods, "%s", pods);
	if (started && !j->started && j->path_us[2] && d->lat) /* its path, once */
		mu__dlat_add(d->lat, (int64_t[4]){j->path_us[0], j->path_us[1], j->path_us[2],
						   mu__d_mono_us()});
	if (started && !j->started && j->state == MU__DJ_DISPATCHED)
		mu_fleet_job_started(d->fleet, j->fid); /* its claims: the worker's now */
	j->started |= started;
	if (j->state == MU__DJ_DISPATCHED) {
		const char *ph = done ? done : j->started ? "Running" : "Dispatched";
		snprintf(j->phase, sizeof j->phase, "%s", ph);
	}
	if (done && j->state == MU__DJ_DISPATCHED) {
		mu_fleet_job_finish(d->fleet, j->fid, mu__d_now(d));
		j->state = MU__DJ_DONE;
		mu__dlog(d, 1, "job %s: %s on %s", j->key, done, d->cls[j->cl].name);
	}
}

/* Copy w of kind k on cluster c (pods: c's pod counts): deleted when it
 * is stale, else its status read into its hub job.  Returns that job, or
 * NULL. */
static mu__djob_t *copy_one(mu__dd_t *d, mu__dcl_t *c, mu__dkind_t k, const json_t *w,
			    const json_t *pods)
{
	int32_t ci = (int32_t)(c - d->cls);
	const char *uid = mu__dmeta(w, "labels", MU__D_HUBUID);
	const char *gen = mu__dmeta(w, "annotations", MU__D_GEN);
	const char *ns = mu__jstr(w, "metadata.namespace"), *name = mu__jstr(w, "metadata.name");
	mu__djob_t *j = mu__djob_current(d, uid, gen, ci);
	bool current = j && j->kind == k;
	if (!current) {
		/* only once the hub's list of that kind was read: a
		 * copy whose hub object is not known yet is not stale */
		if (d->kind_listed[k] && ns && name && !mu__jget(w, "metadata.deletionTimestamp")) {
			mu__dlog(d, 1, "cluster %s: stale copy %s%s%s/%s (generation %s) deleted",
				 c->name, k ? mu__dkind_name(k) : "", k ? " " : "", ns, name,
				 gen ? gen : "?");
			mu__dwork_delete(d, c, k, ns, name);
			d->deleted_stale++;
		}
		return NULL;
	}
	if (!j->listed)
		mu__djob_dirty(d, j);
	j->listed = j->copy_seen = true;
	json_t *st = json_object_get(w, "status");
	if (!json_equal(st, j->wstatus) && (st || j->wstatus))
		mu__djob_dirty(d, j); /* another kind's status is its copy's */
	json_decref(j->wstatus);
	j->wstatus = json_incref(st);
	char line[96];
	bool started = mu__dpods_line(pods, j->uid, j->gen, line, sizeof line);
	const char *done = mu__dkind_done(w, k);
	if (mu__dkind_is_group(k)) { /* a group ends with its pods */
		int64_t pc[5];
		mu__dpods_of(pods, j->uid, j->gen, pc);
		int64_t sent = group_nsent(j);
		done = mu__dkind_group_end(pc[2], pc[3], pc[4] > sent ? pc[4] : sent);
	}
	job_report(d, j, line, started, done);
	return j;
}

/* The copies of kind k that cluster c's watch shows (jl): stale ones
 * deleted, the current ones' status read into their hub jobs. */
static void copies_read(mu__dd_t *d, mu__dcl_t *c, mu__dkind_t k, const json_t *jl,
			const json_t *pods)
{
	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(jl, "items"), i, w) {
		mu__djob_t *j = copy_one(d, c, k, w, pods);
		if (j && j->state == MU__DJ_DISPATCHED)
			*(j->started ? &c->running : &c->waiting) += 1;
	}
}

/* Pod p (key "ns/name"; NULL: deleted) into c's pod counts: its last
 * state taken out, its new one put in.  The uids of its hub jobs, before
 * and after, into uids (a JSON object, as keys).  O(1). */
static void pod_note(mu__dcl_t *c, const char *key, const json_t *p, json_t *uids)
{
	json_t *old = json_object_get(c->pinfo, key);
	if (old) {
		const char *ug = json_string_value(json_array_get(old, 0));
		json_t *a = json_object_get(c->pcount, ug);
		for (size_t k = 0; a && k < 5; k++)
			json_array_set_new(a, k, json_integer(json_integer_value(json_array_get(a, k)) -
				(k < 4 ? json_integer_value(json_array_get(old, k + 1)) : 1)));
		const char *sl = strchr(ug, '/');
		if (uids && sl)
			json_object_setn_new(uids, ug, (size_t)(sl - ug), json_true());
		json_object_del(c->pinfo, key);
	}
	const char *uid = p ? mu__dmeta(p, "labels", MU__D_HUBUID) : NULL;
	const char *gen = p ? mu__dmeta(p, "labels", MU__D_GEN) : NULL;
	if (!uid || !gen)
		return;
	char ug[300];
	snprintf(ug, sizeof ug, "%s/%s", uid, gen);
	const char *ph = mu__jstr(p, "status.phase");
	const char *node = mu__jstr(p, "spec.nodeName");
	int f[4] = {node && *node, ph && !strcmp(ph, "Running"), ph && !strcmp(ph, "Succeeded"),
		    ph && !strcmp(ph, "Failed")};
	json_t *a = json_object_get(c->pcount, ug);
	if (!a) {
		a = json_pack("[i,i,i,i,i]", 0, 0, 0, 0, 0);
		json_object_set_new(c->pcount, ug, a);
	}
	for (size_t k = 0; a && k < 5; k++)
		json_array_set_new(a, k, json_integer(json_integer_value(json_array_get(a, k)) +
						      (k < 4 ? f[k] : 1)));
	json_object_set_new(c->pinfo, key, json_pack("[s,i,i,i,i]", ug, f[0], f[1], f[2], f[3]));
	if (uids)
		json_object_set_new(uids, uid, json_true());
}

/* Deletes pod copy p of a group on cluster c when it is stale. */
static void pod_check(mu__dd_t *d, mu__dcl_t *c, const json_t *p)
{
	if (!pod_stale(d, (int32_t)(c - d->cls), p))
		return;
	char path[1024];
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s",
		 mu__jstr(p, "metadata.namespace"), mu__jstr(p, "metadata.name"));
	mu__dlog(d, 1, "cluster %s: stale pod %s of %s deleted", c->name, path,
		 mu__dmeta(p, "annotations", MU__D_HUBJOB));
	mu__dreq(d, c->kc, "DELETE", path, NULL, NULL, NULL);
	d->deleted_stale++;
}

/* Job j's copy on cluster c as c's watch holds it: read (copy_one), or
 * none (j->listed unset when j is dispatched there). */
static void copy_look(mu__dd_t *d, mu__dcl_t *c, mu__djob_t *j)
{
	char key[1200];
	snprintf(key, sizeof key, "%s/%s", j->ns, j->name);
	json_t *w = c->wcopies[j->kind] ? mu_kube_watch_get(c->wcopies[j->kind], key) : NULL;
	if (w) {
		if (copy_one(d, c, j->kind, w, c->pcount) != j && j->cl == c - d->cls && j->listed) {
			j->listed = false;
			mu__djob_dirty(d, j);
		}
	} else if (j->cl == c - d->cls && j->listed) {
		j->listed = false;
		mu__djob_dirty(d, j);
	}
	json_decref(w);
}

/* The poll of cluster c from what its watches changed since its last
 * poll (c->copies_seq, c->pods_seq), and the jobs the pass changed
 * (d->wdirty) or deleted (d->gone): false when a watch's changes are not
 * all known (the caller reads the snapshots).  O(changes + dirty jobs). */
static bool poll_changes(mu__dd_t *d, mu__dcl_t *c)
{
	json_t *ch[MU__DK_COUNT] = {NULL}, *pch = NULL;
	uint64_t seq[MU__DK_COUNT] = {0}, pseq = 0;
	bool ok = mu_kube_watch_changes(c->wpods, c->pods_seq, &pch, &pseq) && pch;
	for (int k = 0; ok && k < MU__DK_COUNT; k++)
		if (c->wcopies[k] && !mu_kube_watch_changes(c->wcopies[k], c->copies_seq[k], &ch[k],
							     &seq[k]) && k > 0) {
			json_decref(ch[k]); /* a kind whose watch fails: as it was */
			ch[k] = NULL;
			seq[k] = c->copies_seq[k];
		} else if (c->wcopies[k] && !ch[k]) {
			ok = false;
		}
	json_t *uids = ok ? json_object() : NULL;
	if (!uids) {
		json_decref(pch);
		for (int k = 0; k < MU__DK_COUNT; k++)
			json_decref(ch[k]);
		return false;
	}
	const char *key;
	json_t *o;
	json_object_foreach(pch, key, o) {
		pod_note(c, key, json_is_object(o) ? o : NULL, uids);
		if (json_is_object(o))
			pod_check(d, c, o);
	}
	c->pods_seq = pseq;
	/* the jobs whose copies or pods changed join the pass's */
	for (int k = 0; k < MU__DK_COUNT; k++) {
		json_object_foreach(ch[k], key, o) {
			if (!json_is_object(o)) {
				char jk[1200];
				snprintf(jk, sizeof jk, "%s%s%s", k ? mu__dkind_name((mu__dkind_t)k) : "",
					 k ? ":" : "", key);
				json_t *v = json_object_get(d->by_key, jk);
				if (v)
					mu__djlist_add(&d->wdirty, d->jobs[json_integer_value(v)],
						       MU__DM_WDIRTY);
				continue;
			}
			mu__djob_t *j = mu__dhub_job_by_uid(d, mu__dmeta(o, "labels", MU__D_HUBUID));
			if (j && (int)j->kind == k)
				mu__djlist_add(&d->wdirty, j, MU__DM_WDIRTY);
			else /* no such hub job (or another kind's): stale */
				copy_one(d, c, (mu__dkind_t)k, o, c->pcount);
		}
		c->copies_seq[k] = seq[k];
		json_decref(ch[k]);
	}
	json_object_foreach(uids, key, o) {
		mu__djob_t *j = mu__dhub_job_by_uid(d, key);
		if (j)
			mu__djlist_add(&d->wdirty, j, MU__DM_WDIRTY);
	}
	json_decref(uids);
	json_decref(pch);
	/* hub jobs deleted: their copies here are stale */
	size_t i;
	json_t *g;
	json_array_foreach(d->gone, i, g) {
		int k = (int)json_integer_value(json_array_get(g, 0));
		json_t *w = k >= 0 && k < MU__DK_COUNT && c->wcopies[k] ?
			mu_kube_watch_get(c->wcopies[k], json_string_value(json_array_get(g, 1))) : NULL;
		if (w)
			copy_one(d, c, (mu__dkind_t)k, w, c->pcount);
		json_decref(w);
	}
	int32_t ci = (int32_t)(c - d->cls);
	for (mu__djob_t *j = d->wdirty.head; j; j = j->next[MU__DM_WDIRTY]) {
		copy_look(d, c, j);
		/* a group's pods that came to the hub after it was sent */
		if (j->cl == ci && mu__dkind_is_group(j->kind) && j->state == MU__DJ_DISPATCHED &&
		    j->copy_seen) {
			mu__dwork_group_send(d, c->kc, j);
			mu__dwork_held_tell(d, j);
		}
	}
	return true;
}

/* The disruption budgets of cluster c's copies' pods to the fleet
 * (pdbs.c, mu_fleet_job_disruptions), when its budgets or its copies'
 * pods changed since they were last applied; nothing while it has and
 * had none.  O(pods x budgets + jobs) when something changed, else O(1). */
static void pdb_apply(mu__dd_t *d, mu__dcl_t *c)
{
	uint64_t bseq = 0;
	if (!c->wpdbs || !mu_kube_watch_items(c->wpdbs, NULL, &bseq) ||
	    (bseq == c->pdbs_seq && (!c->pdbs_any || c->pods_seq == c->pdbs_pods)))
		return;
	json_t *bl = NULL, *pl = NULL;
	if (!mu_kube_watch_items(c->wpdbs, &bl, &bseq))
		return;
	const json_t *items = json_object_get(bl, "items");
	bool any = json_array_size(items) > 0;
	if ((any || c->pdbs_any) && mu_kube_watch_items(c->wpods, &pl, NULL)) {
		json_t *al = mu__dpdb_allowances(items, json_object_get(pl, "items"));
		int32_t ci = (int32_t)(c - d->cls);
		if (al && (any != c->pdbs_any || bseq != c->pdbs_seq))
			mu__dlog(d, 1, "cluster %s: %zu disruption budgets, over %zu of its jobs", c->name,
				 json_array_size(items), json_object_size(al));
		for (int32_t i = 0; al && i < d->njobs; i++) {
			mu__djob_t *j = d->jobs[i];
			if (!j || j->cl != ci || j->fid < 0 || j->state != MU__DJ_DISPATCHED)
				continue;
			json_t *v = json_object_get(al, j->uid);
			mu_fleet_job_disruptions(d->fleet, j->fid,
						 v ? (int32_t)json_integer_value(v) : -1);
		}
		json_decref(al);
		json_decref(pl);
	} else if (any || c->pdbs_any) {
		json_decref(bl);
		return; /* the pods not known: again next poll */
	}
	c->pdbs_seq = bseq;
	c->pdbs_pods = c->pods_seq;
	c->pdbs_any = any;
	json_decref(bl);
}

bool mu__dwork_poll(mu__dd_t *d, mu__dcl_t *c)
{
	json_t *nl = NULL, *jl[MU__DK_COUNT] = {NULL}, *pl = NULL;
	uint64_t nseq = 0;
	/* the watches' snapshots: no request per pass.  The Jobs' watch must
	 * answer; another kind's fails where its CRD is not installed, and
	 * its copies then keep what they showed last. */
	bool ok = c->wnodes && mu_kube_watch_items(c->wnodes, NULL, &nseq) &&
		  mu_kube_watch_items(c->wcopies[MU__DK_JOB], NULL, NULL) &&
		  mu_kube_watch_items(c->wpods, NULL, NULL) &&
		  mu_kube_watch_items(c->wused, NULL, NULL);
	bool used = ok && mu__dused_poll(d, c);
	if (ok && (nseq != c->nodes_seq || used))
		ok = mu_kube_watch_items(c->wnodes, &nl, &nseq);
	if (!ok) {
		json_decref(nl);
		return false;
	}
	if (nl) {
		nodes_sync(d, c, nl);
		c->nodes_seq = nseq;
	}
	mu__dwork_discover(d, c);
	mu__ddra_poll(d, c, nl); /* its DRA objects, when they changed (wdra.c) */
	mu__dhdra_sweep(d, c);   /* its stale copied templates and claims */
	/* round 20: groups whose held pods' conflict on c went, sent again */
	json_t *rel = mu__dhdra_held_worker(d, c);
	const char *ru;
	json_t *rv;
	json_object_foreach(rel, ru, rv) {
		mu__djob_t *rj = mu__dhub_job_by_uid(d, ru);
		if (rj)
			mu__djob_touch(d, rj);
	}
	json_decref(rel);
	/* what changed, when it is all known and no full pass is due */
	if (!d->full && c->polled && c->reachable && c->pinfo && c->pcount &&
	    poll_changes(d, c)) {
		json_decref(nl);
		pdb_apply(d, c);
		return true;
	}
	c->polled = false;
	for (int k = 0; k < MU__DK_COUNT; k++)
		if (!c->wcopies[k] || !mu_kube_watch_items(c->wcopies[k], &jl[k], &c->copies_seq[k])) {
			json_decref(jl[k]);
			jl[k] = NULL;
		}
	if (!jl[MU__DK_JOB] || !mu_kube_watch_items(c->wpods, &pl, &c->pods_seq)) {
		json_decref(nl);
		json_decref(pl);
		for (int k = 0; k < MU__DK_COUNT; k++)
			json_decref(jl[k]);
		return false;
	}
	int32_t ci = (int32_t)(c - d->cls);
	for (int32_t i = 0; i < d->njobs; i++)
		if (d->jobs[i]->cl == ci && jl[d->jobs[i]->kind])
			d->jobs[i]->listed = false;
	/* pod copies of groups that are not the current dispatch; the
	 * pods' counts again, from the snapshot */
	json_decref(c->pinfo);
	json_decref(c->pcount);
	c->pinfo = json_object();
	c->pcount = json_object();
	size_t pi;
	json_t *pp;
	json_array_foreach(json_object_get(pl, "items"), pi, pp) {
		char key[1200];
		snprintf(key, sizeof key, "%s/%s", mu__jstr(pp, "metadata.namespace") ?
			 mu__jstr(pp, "metadata.namespace") : "", mu__jstr(pp, "metadata.name") ?
			 mu__jstr(pp, "metadata.name") : "");
		if (c->pinfo && c->pcount)
			pod_note(c, key, pp, NULL);
		pod_check(d, c, pp);
	}
	/* a group's pods that came to the hub after it was sent go to its
	 * cluster once its copy is there */
	for (int32_t i = 0; i < d->njobs; i++) {
		mu__djob_t *j = d->jobs[i];
		if (j->cl == ci && mu__dkind_is_group(j->kind) && j->state == MU__DJ_DISPATCHED &&
		    j->copy_seen) {
			mu__dwork_group_send(d, c->kc, j);
			mu__dwork_held_tell(d, j);
		}
	}
	mu__dfailed_poll(d, c, jl[MU__DK_JOB]); /* pods its worker refuses */
	/* the counts pod_note just built from the same list are what
	 * mu__dpods_count would build again (3.7% of the dispatcher's
	 * samples in bench/dispatch.sh, docs/dispatch.md round 12) */
	json_t *pods = c->pinfo && c->pcount ? json_incref(c->pcount) : mu__dpods_count(pl);
	c->polled = c->pinfo && c->pcount;
	c->running = c->waiting = 0;
	for (int k = 0; k < MU__DK_COUNT; k++)
		if (jl[k])
			copies_read(d, c, (mu__dkind_t)k, jl[k], pods);
		else /* not read: its jobs count as they did */
			for (int32_t i = 0; i < d->njobs; i++) {
				mu__djob_t *j = d->jobs[i];
				if (j->cl == ci && (int)j->kind == k && j->state == MU__DJ_DISPATCHED && j->listed)
					*(j->started ? &c->running : &c->waiting) += 1;
			}
	json_decref(pods);
	json_decref(nl);
	json_decref(pl);
	for (int k = 0; k < MU__DK_COUNT; k++)
		json_decref(jl[k]);
	pdb_apply(d, c);
	return true;
}

long mu__dwork_create(mu__dd_t *d, mu__djob_t *j)
{
	long st = mu__dwork_create_on(d, d->cls[j->cl].kc, j);
	if (st == 200 || st == 201)
		d->created++;
	return st;
}

long mu__dwork_create_on(mu__dd_t *d, mu_kube_client_t *kc, mu__djob_t *j)
{
	const mu__dcl_t *c = &d->cls[j->cl];
	if (!kc)
		return 0;
	/* its claims' templates and claims first (hdra.c): its pods name
	 * them from the start */
	long st = j->dra_src ? mu__dhdra_create(d, kc, j) : 201;
	if (st != 201)
		return st;
	json_t *body = mu__dcopy(j->obj, j->kind, j->uid, j->key, j->gen), *ans = NULL;
	mu__dhdra_rename(j, body);
	char path[1024];
	mu__dkind_path(j->kind, j->ns, NULL, "", path, sizeof path);
	st = mu__dreq_err(d, kc, "POST", path, NULL, body, &ans);
	if (st == 404) { /* its namespace, then once more */
		json_t *ns = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
				       "metadata", "name", j->ns);
		mu__dreq(d, kc, "POST", "/api/v1/namespaces", NULL, ns, NULL);
		json_decref(ns);
		json_decref(ans);
		ans = NULL;
		st = mu__dreq_err(d, kc, "POST", path, NULL, body, &ans);
	}
	if (st == 409) { /* ours from before a restart, or a stale one */
		char gp[1200], g[16];
		snprintf(gp, sizeof gp, "%s/%s", path, j->name);
		snprintf(g, sizeof g, "%u", j->gen);
		json_t *cur = NULL;
		if (mu__dreq(d, kc, "GET", gp, NULL, NULL, &cur) == 200) {
			const char *uid = mu__dmeta(cur, "labels", MU__D_HUBUID);
			const char *gen = mu__dmeta(cur, "annotations", MU__D_GEN);
			if (uid && gen && !strcmp(uid, j->uid) && !strcmp(gen, g))
				st = 201;
		}
		json_decref(cur);
	}
	/* a group's pods go with it (those that fail are sent again by the
	 * polls, mu__dwork_group_send) */
	if ((st == 200 || st == 201) && mu__dkind_is_group(j->kind))
		mu__dwork_group_send(d, kc, j);
	const char *why = mu__jstr(ans, "message") ? mu__jstr(ans, "message") : "";
	if (st != 201 && st != 200)
		mu__dlog(d, 0, "cluster %s: create %s%s: HTTP %ld %s", c->name,
			 j->kind ? "" : "job ", j->key, st, why);
	if (mu__dwork_refused(st)) {
		char m[800];
		snprintf(m, sizeof m, "cluster %s refused the copy: HTTP %ld: %.600s", c->name, st, why);
		free(j->refused);
		j->refused = strdup(m);
	}
	json_decref(ans);
	json_decref(body);
	return st;
}

/* --- the kinds a worker serves --------------------------------------------------- */

void mu__dcl_serves(mu__dd_t *d, mu__dcl_t *c, mu__dkind_t k, int on)
{
	if (k == MU__DK_JOB || c->serves[k] == on)
		return;
	char key[128];
	snprintf(key, sizeof key, MU__D_KINDS "%s", mu__dkind_name(k));
	if (mu_fleet_cluster_set_label(d->fleet, c->fid, key, on ? "true" : NULL) != MU_OK)
		return; /* out of memory: asked again next time */
	if (c->serves[k] >= 0 || on)
		mu__dlog(d, 1, "cluster %s: %s %s (%s)", c->name, on ? "serves" : "does not serve",
			 mu__dkind_name(k), mu__dkind_api(k));
	c->serves[k] = (int8_t)on;
}

void mu__dwork_discover(mu__dd_t *d, mu__dcl_t *c)
{
	int8_t on[MU__DK_COUNT];
	if (!mu__dserved_refresh(d, c->kc, c->serves, &c->disc_at, &c->probe_at, &c->apis,
				 mu__d_mono_ms(), on))
		return;
	for (int k = 1; k < MU__DK_COUNT; k++)
		if (on[k] >= 0) /* no answer: asked again soon */
			mu__dcl_serves(d, c, (mu__dkind_t)k, on[k]);
	mu__ddra_discover(d, c); /* resource.k8s.io, asked as often */
	/* a watch of its copies for each kind it serves only (served.c) */
	if (c->cfg && mu__dserved_watch(c->cfg, MU__D_COPY_SEL, on, c->wcopies,
					c->copies_seq))
		c->polled = false; /* the next poll reads the snapshots */
}

/* Pull mode: each dispatched copy's disruption allowance its agent
 * reports (heartbeat data.pdbs: hub uid -> allowed, pdbs.c) to the fleet;
 * -1 for a copy it does not name, and for all when text is NULL (an agent
 * without --budgets: logged once with --reclaim).  O(jobs). */
static void pull_pdbs(mu__dd_t *d, mu__dcl_t *c, const char *text)
{
	/* no data.pdbs: its agent runs without --budgets, and reclaim here
	 * orders victims without budgets; said once, not ignored silently */
	if (d->o->reclaim && !text != c->pdbs_unread) {
		c->pdbs_unread = !text;
		if (!text)
			mu__dlog(d, 0, "cluster %s: its agent reports no disruption budgets "
				 "(muster dispatch agent --budgets): reclaim there does not weigh them",
				 c->name);
	}
	json_t *al = text && *text ? json_loads(text, 0, NULL) : NULL;
	bool any = json_object_size(al) > 0;
	if (any || c->pdbs_any) {
		int32_t ci = (int32_t)(c - d->cls);
		for (int32_t i = 0; i < d->njobs; i++) {
			mu__djob_t *j = d->jobs[i];
			if (!j || j->cl != ci || j->fid < 0 || j->state != MU__DJ_DISPATCHED)
				continue;
			json_t *v = json_object_get(al, j->uid);
			mu_fleet_job_disruptions(d->fleet, j->fid,
						 json_is_integer(v) ? (int32_t)json_integer_value(v) : -1);
		}
	}
	if (any != c->pdbs_any)
		mu__dlog(d, 1, "cluster %s: its agent reports budgets over %zu of its jobs", c->name,
			 json_object_size(al));
	c->pdbs_any = any;
	json_decref(al);
}

/* --- pull mode ------------------------------------------------------------------ */

bool mu__dpull_poll(mu__dd_t *d, mu__dcl_t *c)
{
	char path[600];
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps/muster-cluster-%s", MU__D_NS,
		 c->name);
	json_t *cm = NULL;
	long st = 404;
	if (d->beats) { /* the watch's snapshot: no request */
		size_t i;
		json_t *o;
		json_array_foreach(json_object_get(d->beats, "items"), i, o) {
			const char *n = mu__jstr(o, "metadata.name");
			if (n && !strncmp(n, "muster-cluster-", 15) && !strcmp(n + 15, c->name)) {
				cm = json_incref(o);
				st = 200;
			}
		}
	} else {
		st = mu__dreq(d, d->hub, "GET", path, NULL, NULL, &cm);
	}
	const char *rv = mu__jstr(cm, "metadata.resourceVersion");
	int64_t t = mu__d_mono_ms();
	if (st == 200 && rv && (!c->beat_rv || strcmp(rv, c->beat_rv))) {
		free(c->beat_rv);
		c->beat_rv = strdup(rv);
		c->beat_at = t;
		c->beats++;
		/* what its pods beside the hub's take, per node (podcap.c) */
		json_t *u = json_loads(mu__jstr(cm, "data.used") ? mu__jstr(cm, "data.used") : "",
				       0, NULL);
		json_decref(c->used);
		c->used = json_is_object(u) ? json_incref(u) : NULL;
		json_decref(u);
		json_t *nl = json_loads(mu__jstr(cm, "data.nodes") ? mu__jstr(cm, "data.nodes") : "",
					0, NULL);
		if (nl)
			nodes_sync(d, c, nl);
		mu__ddra_pull(d, c, mu__jstr(cm, "data.dra"), nl); /* its DRA objects (wdra.c) */
		json_decref(nl);
		/* the kinds its agent makes: those the worker serves ("JobSet,...") */
		bool on[MU__DK_COUNT];
		mu__dkind_list(mu__jstr(cm, "data.kinds"), on);
		for (int k = 1; k < MU__DK_COUNT; k++)
			mu__dcl_serves(d, c, (mu__dkind_t)k, on[k]);
		pull_pdbs(d, c, mu__jstr(cm, "data.pdbs"));
	}
	json_decref(cm);
	if (st != 200 || t - c->beat_at > 3000)
		return false;
	int32_t ci = (int32_t)(c - d->cls);
	c->running = c->waiting = 0;
	for (int32_t i = 0; i < d->njobs; i++) {
		mu__djob_t *j = d->jobs[i];
		if (j->cl != ci || j->state < MU__DJ_DISPATCHED)
			continue;
		/* "GEN PHASE PODS" from the agent, for this generation only */
		const char *a = mu__dmeta(j->obj, "annotations", MU__D_AGENT);
		char phase[32] = "", pods[96] = "";
		unsigned gen = 0;
		bool was = j->listed;
		j->listed = a && sscanf(a, "%u %31s %95s", &gen, phase, pods) == 3 && gen == j->gen &&
			    strcmp(phase, "Deleted");
		if (was != j->listed)
			mu__djob_dirty(d, j); /* settled this pass */
		if (!j->listed)
			continue;
		j->copy_seen = true;
		/* the copy's status, where the agent sends it: "GEN {json}" */
		const char *cs = mu__dmeta(j->obj, "annotations", MU__D_COPYST);
		unsigned cgen = 0;
		int off = 0;
		if (cs && sscanf(cs, "%u %n", &cgen, &off) == 1 && cgen == j->gen && off > 0) {
			json_t *cst = json_loads(cs + off, JSON_DECODE_ANY, NULL);
			if (json_is_object(cst)) {
				if (!json_equal(cst, j->wstatus))
					mu__djob_dirty(d, j);
				json_decref(j->wstatus);
				j->wstatus = cst;
			} else {
				json_decref(cst);
			}
		}
		bool done = !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
		job_report(d, j, pods, strcmp(phase, "Pending") != 0, done ? phase : NULL);
		mu__dfailed_pull(d, c, j); /* its worker refuses its pods */
		mu__dwork_pull_held(d, c, j); /* round 21: or some of a group's */
		if (j->state == MU__DJ_DISPATCHED)
			*(j->started ? &c->running : &c->waiting) += 1;
	}
	return true;
}

/*
 * agent.c - `muster dispatch agent`: pull mode, for a worker the hub
 * cannot reach (an edge cluster behind NAT).  The agent runs beside the
 * worker and calls the hub, so the hub holds no credentials for it.
 *
 * Every pass: the hub Jobs labelled muster.io/cluster=NAME are this
 * cluster's current dispatches; a local copy (muster.io/hub-uid and the
 * dispatch generation) that is not one of them is deleted, and its hub Job
 * told so ("GEN Deleted -" in muster.io/agent-status); a current dispatch
 * without a copy gets one (mu__dcopy, as push mode creates it); each
 * copy's phase and pods go to its hub Job ("GEN PHASE bound=N,..."), and
 * the worker's Nodes and a heartbeat to the ConfigMap
 * muster-system/muster-cluster-NAME, which is what the hub's model of this
 * cluster is built from (worker.c, mu__dpull_poll).  The hub confirms a
 * withdrawal only two heartbeats after it took the label off, so that a
 * pass that listed the job before cannot create a copy after.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"

void mu_dispatch_agent_opts_defaults(mu_dispatch_agent_opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->interval_ms = 200;
	o->request_timeout_ms = 5000;
}

typedef struct agent {
	mu__dd_t d;               /* for mu__dreq and mu__dlog: hub client */
	mu_dispatch_opts_t dopts;
	const mu_dispatch_agent_opts_t *o;
	mu_kube_client_t *w;      /* the worker */
	uint64_t beat;
} agent_t;

/* Writes muster.io/agent-status of the hub Job ns/name when it differs
 * from cur (the value the hub object has). */
static void report(agent_t *a, const char *ns, const char *name, const char *cur,
		   const char *val)
{
	if (cur && !strcmp(cur, val))
		return;
	char path[1024];
	snprintf(path, sizeof path, "/apis/batch/v1/namespaces/%s/jobs/%s", ns, name);
	json_t *b = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", MU__D_AGENT, val);
	long st = mu__dreq(&a->d, a->d.hub, "PATCH", path, "application/merge-patch+json", b, NULL);
	json_decref(b);
	if (st != 200 && st != 404)
		mu__dlog(&a->d, 0, "hub job %s/%s: report: HTTP %ld", ns, name, st);
}

/* The local copies: stale ones deleted (and reported), current ones
 * reported; marks in `have` the hub uids with a current copy. */
static void copies(agent_t *a, const json_t *assigned, const json_t *jl, const json_t *pods,
		   json_t *have)
{
	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(jl, "items"), i, w) {
		const char *uid = mu__dmeta(w, "labels", MU__D_HUBUID);
		const char *gen = mu__dmeta(w, "annotations", MU__D_GEN);
		const char *key = mu__dmeta(w, "annotations", MU__D_HUBJOB);
		const char *ns = mu__jstr(w, "metadata.namespace"), *name = mu__jstr(w, "metadata.name");
		const json_t *hub = uid ? json_object_get(assigned, uid) : NULL;
		const char *hgen = mu__dmeta(hub, "annotations", MU__D_GEN);
		if (!uid || !gen || !ns || !name)
			continue;
		char val[160];
		if (!hub || !hgen || strcmp(gen, hgen)) {
			if (mu__jget(w, "metadata.deletionTimestamp"))
				continue;
			char path[1024];
			snprintf(path, sizeof path,
				 "/apis/batch/v1/namespaces/%s/jobs/%s?propagationPolicy=Background", ns, name);
			long st = mu__dreq(&a->d, a->w, "DELETE", path, NULL, NULL, NULL);
			mu__dlog(&a->d, 1, "stale copy %s/%s (generation %s) deleted: HTTP %ld", ns, name,
				 gen, st);
			const char *slash = key ? strchr(key, '/') : NULL;
			if ((st == 200 || st == 202 || st == 404) && slash) {
				char hns[300];
				snprintf(hns, sizeof hns, "%.*s", (int)(slash - key), key);
				snprintf(val, sizeof val, "%s Deleted -", gen);
				report(a, hns, slash + 1, NULL, val);
			}
			continue;
		}
		json_object_set_new(have, uid, json_true());
		char line[96];
		bool started = mu__dpods_line(pods, uid, (uint32_t)atol(gen), line, sizeof line);
		const char *done = mu__dcopy_done(w);
		snprintf(val, sizeof val, "%s %s %s", gen, done ? done : started ? "Running" : "Pending",
			 line);
		report(a, mu__jstr(hub, "metadata.namespace"), mu__jstr(hub, "metadata.name"),
		       mu__dmeta(hub, "annotations", MU__D_AGENT), val);
	}
}

/* Creates the copies of the current dispatches that have none. */
static void create_missing(agent_t *a, const json_t *assigned, const json_t *have)
{
	const char *uid;
	json_t *hub;
	json_object_foreach((json_t *)assigned, uid, hub) {
		const char *ph = mu__dmeta(hub, "annotations", MU__D_PHASE);
		const char *gen = mu__dmeta(hub, "annotations", MU__D_GEN);
		if (json_object_get(have, uid) || !gen ||
		    (ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"))))
			continue;
		const char *ns = mu__jstr(hub, "metadata.namespace");
		char key[600], path[600];
		snprintf(key, sizeof key, "%s/%s", ns ? ns : "default", mu__jstr(hub, "metadata.name"));
		json_t *body = mu__dcopy(hub, MU__DK_JOB, uid, key, (uint32_t)atol(gen));
		snprintf(path, sizeof path, "/apis/batch/v1/namespaces/%s/jobs", ns ? ns : "default");
		long st = mu__dreq(&a->d, a->w, "POST", path, NULL, body, NULL);
		if (st == 404) {
			json_t *nso = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind",
						"Namespace", "metadata", "name", ns ? ns : "default");
			mu__dreq(&a->d, a->w, "POST", "/api/v1/namespaces", NULL, nso, NULL);
			json_decref(nso);
			st = mu__dreq(&a->d, a->w, "POST", path, NULL, body, NULL);
		}
		json_decref(body);
		if (st != 201 && st != 200 && st != 409)
			mu__dlog(&a->d, 0, "create %s: HTTP %ld", key, st);
	}
}

/* The worker's Nodes and a heartbeat to the hub's ConfigMap. */
static void heartbeat(agent_t *a, const json_t *nl)
{
	json_t *items = json_array();
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(nl, "items"), i, n)
		json_array_append_new(items, mu__dnode_min(n));
	json_t *wrap = json_pack("{s:o}", "items", items);
	char *text = json_dumps(wrap, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(wrap);
	char beat[24], path[600];
	snprintf(beat, sizeof beat, "%llu", (unsigned long long)++a->beat);
	json_t *cm = json_pack("{s:s,s:s,s:{s:s+,s:s},s:{s:s,s:s}}", "apiVersion", "v1", "kind",
			       "ConfigMap", "metadata", "name", "muster-cluster-", a->o->cluster,
			       "namespace", MU__D_NS, "data", "nodes", text ? text : "{}", "beat", beat);
	free(text);
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps/muster-cluster-%s", MU__D_NS,
		 a->o->cluster);
	long st = mu__dreq(&a->d, a->d.hub, "PATCH", path, "application/merge-patch+json", cm, NULL);
	if (st == 404) {
		snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", MU__D_NS);
		st = mu__dreq(&a->d, a->d.hub, "POST", path, NULL, cm, NULL);
	}
	if (st != 200 && st != 201)
		mu__dlog(&a->d, 0, "heartbeat: HTTP %ld", st);
	json_decref(cm);
}

/* One pass; false when the hub or the worker did not answer. */
static bool agent_pass(agent_t *a)
{
	char path[600];
	snprintf(path, sizeof path, "/apis/batch/v1/jobs?labelSelector=muster.io%%2Fcluster%%3D%s",
		 a->o->cluster);
	json_t *hl = NULL, *nl = NULL, *jl = NULL, *pl = NULL;
	bool ok = mu__dreq(&a->d, a->d.hub, "GET", path, NULL, NULL, &hl) == 200 &&
		  mu__dreq(&a->d, a->w, "GET", "/api/v1/nodes", NULL, NULL, &nl) == 200 &&
		  mu__dreq(&a->d, a->w, "GET", "/apis/batch/v1/jobs?labelSelector=muster.io%2Fhub-uid",
			   NULL, NULL, &jl) == 200 &&
		  mu__dreq(&a->d, a->w, "GET", "/api/v1/pods?labelSelector=muster.io%2Fhub-uid", NULL,
			   NULL, &pl) == 200;
	if (ok) {
		json_t *assigned = json_object(), *have = json_object();
		size_t i;
		json_t *h;
		json_array_foreach(json_object_get(hl, "items"), i, h)
			if (mu__jstr(h, "metadata.uid"))
				json_object_set(assigned, mu__jstr(h, "metadata.uid"), h);
		json_t *pods = mu__dpods_count(pl);
		copies(a, assigned, jl, pods, have);
		create_missing(a, assigned, have);
		heartbeat(a, nl);
		json_decref(pods);
		json_decref(assigned);
		json_decref(have);
	}
	json_decref(hl);
	json_decref(nl);
	json_decref(jl);
	json_decref(pl);
	return ok;
}

int mu_dispatch_agent_run(const mu_dispatch_agent_opts_t *o, char *err, size_t errlen)
{
	agent_t a;
	memset(&a, 0, sizeof a);
	a.o = o;
	mu_dispatch_opts_defaults(&a.dopts);
	a.dopts.quiet = o->quiet;
	a.dopts.request_timeout_ms = o->request_timeout_ms;
	a.d.o = &a.dopts;
	if (!o->cluster || !*o->cluster) {
		snprintf(err, errlen, "--cluster NAME is required");
		return MU_EINVAL;
	}
	if (mu_kube_client_new(o->hub, &a.d.hub) || mu_kube_client_new(o->worker, &a.w)) {
		mu_kube_client_free(a.d.hub);
		snprintf(err, errlen, "cannot start: out of memory");
		return MU_ENOMEM;
	}
	mu__dlog(&a.d, 1, "agent of cluster %s: hub %s, worker %s", o->cluster, o->hub->server,
		 o->worker->server);
	bool was_ok = true;
	while (!*o->stop) {
		int64_t t = mu__d_mono_ms();
		bool ok = agent_pass(&a);
		if (ok != was_ok)
			mu__dlog(&a.d, ok ? 1 : 0, ok ? "hub and worker answer again" :
				 "the hub or the worker did not answer; retrying");
		was_ok = ok;
		int64_t left = t + o->interval_ms - mu__d_mono_ms();
		while (left > 0 && !*o->stop) {
			int64_t s = left < 50 ? left : 50;
			struct timespec ts = {0, (long)s * 1000000L};
			nanosleep(&ts, NULL);
			left -= s;
		}
	}
	mu_kube_client_free(a.d.hub);
	mu_kube_client_free(a.w);
	return MU_OK;
}

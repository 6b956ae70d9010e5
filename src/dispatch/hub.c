/*
 * hub.c - the hub side of the daemon: the hub's Clusters (with their
 * kubeconfig Secrets), Queues and queue-labelled jobs (batch/v1 Jobs,
 * the suspendable kinds of kinds.c, LeaderWorkerSets, and PodGroups with
 * the hub's pods that name them) are read
 * into the fleet, and what the hub learns goes back to the hub's objects:
 * a Job's dispatch annotations (cluster, generation, phase, pods, why it
 * waits), Events, and each Cluster's status.
 *
 * A hub Job's annotations are the daemon's only record: the cluster and
 * generation are written before its copy is created anywhere (run.c), so
 * a restarted daemon adopts what its predecessor dispatched
 * (mu_fleet_job_adopt) instead of dispatching it again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"
#include "muster/load.h"
#include "muster/util.h"

/* --- clusters ---------------------------------------------------------------- */

static char *sdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void set_err(mu__dcl_t *c, const char *msg)
{
	free(c->err);
	c->err = sdup(msg);
}

/* c's Secret from the watch of muster-system's (200, or 404 when it is
 * not there), or asked for (a Secret elsewhere, or no watch): the HTTP
 * status and the Secret in *out (owned). */
static long secret_get(mu__dd_t *d, const mu__dcl_t *c, json_t **out)
{
	*out = NULL;
	if (d->secrets && !strcmp(c->secret_ns, MU__D_NS)) {
		size_t i;
		json_t *o;
		json_array_foreach(json_object_get(d->secrets, "items"), i, o) {
			const char *n = mu__jstr(o, "metadata.name");
			if (n && !strcmp(n, c->secret_name)) {
				*out = json_incref(o);
				return 200;
			}
		}
		return 404;
	}
	char path[1024];
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/secrets/%s", c->secret_ns,
		 c->secret_name);
	return mu__dreq(d, d->hub, "GET", path, NULL, NULL, out);
}

/* Loads c's kubeconfig from its Secret when the Secret changed; on error
 * c->err says what is wrong and c has no client.  O(secrets), or one
 * request for a Secret outside muster-system. */
static void load_secret(mu__dd_t *d, mu__dcl_t *c)
{
	json_t *s = NULL;
	long st = secret_get(d, c, &s);
	char msg[1200];
	const char *rv = mu__jstr(s, "metadata.resourceVersion");
	if ((st == 200 && rv && c->secret_rv && !strcmp(rv, c->secret_rv)) ||
	    ((st == 0 || st >= 500) && c->kc)) {
		/* unchanged, or the hub did not answer: what works stays (its
		 * watches are not restarted for a hub's hiccup) */
		json_decref(s);
		return;
	}
	mu__dcl_disconnect(c);
	free(c->secret_rv);
	c->secret_rv = st == 200 ? sdup(rv) : NULL;
	const char *b64 = mu__jstr(s, "data.kubeconfig");
	if (st != 200) {
		snprintf(msg, sizeof msg, "kubeconfig Secret %s/%s: HTTP %ld", c->secret_ns,
			 c->secret_name, st);
		set_err(c, msg);
	} else if (!b64) {
		snprintf(msg, sizeof msg, "kubeconfig Secret %s/%s: no data key \"kubeconfig\"",
			 c->secret_ns, c->secret_name);
		set_err(c, msg);
	} else {
		size_t cap = strlen(b64) + 1, n = 0;
		char *text = malloc(cap);
		char err[512] = "";
		char name[600];
		snprintf(name, sizeof name, "secret %s/%s", c->secret_ns, c->secret_name);
		int rc = text ? mu__b64dec(b64, text, cap, &n) : MU_ENOMEM;
		if (rc == MU_OK)
			rc = (c->cfg = calloc(1, sizeof *c->cfg)) ?
				mu_kube_config_parse(name, text, n, NULL, c->cfg, err, sizeof err) :
				MU_ENOMEM;
		else
			snprintf(err, sizeof err, "data.kubeconfig is not base64");
		free(text);
		if (rc == MU_OK && mu__dcl_connect(c, d->o->reclaim) == MU_OK) {
			/* the kinds it served before, at once (served.c) */
			mu__dserved_watch(c->cfg, MU__D_COPY_SEL, c->serves,
					  c->wcopies, c->copies_seq);
			set_err(c, NULL);
			mu__dlog(d, 1, "cluster %s: kubeconfig loaded (%s)", c->name, c->cfg->server);
		} else {
			snprintf(msg, sizeof msg, "kubeconfig Secret %s/%s: %s", c->secret_ns,
				 c->secret_name, *err ? err : "cannot be used");
			set_err(c, msg);
		}
	}
	if (c->err)
		mu__dlog(d, 0, "cluster %s: %s", c->name, c->err);
	json_decref(s);
}

/* What of Cluster o the fleet reads (its labels, the mode as a label, tier
 * and price), as one string to compare with the last one seen; owned
 * (NULL without memory). */
static char *cluster_sig(const json_t *o)
{
	json_t *j = json_pack("{s:O?,s:O?,s:O?,s:O?}", "l", mu__jget(o, "metadata.labels"),
			      "m", mu__jget(o, "spec.mode"), "t", mu__jget(o, "spec.tier"),
			      "c", mu__jget(o, "spec.costPerGPUHour"));
	char *sig = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(j);
	return sig;
}

/* Cluster o's spec for the fleet (its name, labels with the mode as one,
 * tier, price); the labels live in tmp's arena, strings in o.  MU_EINVAL
 * for a bad tier. */
static int cluster_spec(const json_t *o, mu_specs_t *tmp, mu_cluster_spec_t *cs)
{
	mu_tier_t tier;
	if (mu_tier_parse(mu__jstr(o, "spec.tier"), &tier))
		return MU_EINVAL;
	const json_t *lm = mu__jget(o, "metadata.labels");
	mu_label_t *l = mu_arena_alloc(&tmp->arena, (json_object_size(lm) + 2) * sizeof *l);
	if (!l)
		return MU_ENOMEM;
	size_t nl = 0;
	const char *mode = mu__jstr(o, "spec.mode");
	/* the kinds only push mode sends select it (the agent makes Jobs) */
	bool pull = mode && !strcmp(mode, "pull");
	l[nl++] = (mu_label_t){MU__D_MODE, pull ? "pull" : "push"};
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)lm, k, v)
		if (json_is_string(v))
			l[nl++] = (mu_label_t){k, json_string_value(v)};
	const json_t *cost = mu__jget(o, "spec.costPerGPUHour");
	*cs = (mu_cluster_spec_t){.name = mu__jstr(o, "metadata.name"), .labels = l,
		.nlabels = nl, .tier = tier,
		.cost_gpu_hour = json_is_number(cost) ? json_number_value(cost) : 0};
	/* (round 22: no_shrink is off for pull clusters too: their agents
	 * shrink copies, reclaim.c and agent.c) */
	return MU_OK;
}

/* An existing cluster c takes Cluster o's labels, mode, tier and price
 * when they changed since last seen (a job waiting for them may go now;
 * the jobs it runs stay).  O(labels). */
static void cluster_relabel(mu__dd_t *d, mu__dcl_t *c, const json_t *o)
{
	char *sig = cluster_sig(o);
	if (!sig || (c->spec_sig && !strcmp(sig, c->spec_sig))) {
		free(sig);
		return;
	}
	mu_specs_t tmp;
	mu_specs_init(&tmp);
	mu_cluster_spec_t cs;
	int rc = cluster_spec(o, &tmp, &cs);
	if (rc == MU_OK)
		rc = mu_fleet_cluster_update(d->fleet, c->fid, &cs);
	/* the kinds its discovery found are labels too: kept */
	for (int k = 0; rc == MU_OK && k < MU__DK_COUNT; k++)
		if (k != MU__DK_JOB && c->serves[k] == 1) {
			char key[128];
			snprintf(key, sizeof key, MU__D_KINDS "%s", mu__dkind_name((mu__dkind_t)k));
			rc = mu_fleet_cluster_set_label(d->fleet, c->fid, key, "true");
		}
	if (rc == MU_OK) {
		if (c->spec_sig)
			mu__dlog(d, 1, "cluster %s: labels, tier or price changed (%s)", c->name,
				 mu_tier_name(cs.tier));
		c->tier = cs.tier;
		free(c->spec_sig);
		c->spec_sig = sig;
	} else {
		mu__dlog(d, 0, "cluster %s: new labels, tier or price not taken: %s", c->name,
			 mu_strerror(rc));
		free(sig);
	}
	mu_specs_release(&tmp);
}

/* The cluster named name, added to d->cls and the fleet when new; an
 * existing one takes changes of its labels, tier and price. */
static mu__dcl_t *cluster_get(mu__dd_t *d, const json_t *o)
{
	const char *name = mu__jstr(o, "metadata.name");
	for (int32_t i = 0; i < d->ncls; i++)
		if (!strcmp(d->cls[i].name, name)) {
			cluster_relabel(d, &d->cls[i], o);
			return &d->cls[i];
		}
	if (d->ncls == d->cls_cap) {
		int32_t cap = d->cls_cap ? d->cls_cap * 2 : 8;
		mu__dcl_t *v = realloc(d->cls, (size_t)cap * sizeof *v);
		if (!v)
			return NULL;
		d->cls = v;
		d->cls_cap = cap;
	}
	mu_specs_t tmp;
	mu_specs_init(&tmp);
	mu_cluster_spec_t cs;
	int32_t fid;
	int rc = cluster_spec(o, &tmp, &cs);
	if (rc == MU_OK)
		rc = mu_fleet_cluster_add(d->fleet, &cs, &fid);
	mu_tier_t tier = cs.tier;
	mu_specs_release(&tmp);
	if (rc)
		return NULL;
	mu__dcl_t *c = &d->cls[d->ncls++];
	memset(c, 0, sizeof *c);
	c->name = strdup(name);
	c->tier = tier;
	c->fid = fid;
	c->spec_sig = cluster_sig(o);
	c->nodes = json_object();
	memset(c->serves, -1, sizeof c->serves); /* not known until asked */
	c->last_ok = mu__d_mono_ms();
	/* no new jobs until its first poll answers */
	mu_fleet_cluster_set_state(d->fleet, fid, MU_CLUSTER_UNREACHABLE);
	mu__dlog(d, 1, "cluster %s: added (%s)", name, mu_tier_name(tier));
	return c;
}

int mu__dhub_clusters(mu__dd_t *d)
{
	json_t *l = NULL;
	uint64_t seq = 0, sseq = 0;
	if (!mu_kube_watch_items(d->wclusters, NULL, &seq))
		return MU_EIO;
	/* the Secrets of muster-system from their watch (without it, each
	 * push-mode cluster's Secret is asked for) */
	bool sw = mu_kube_watch_items(d->wsecrets, NULL, &sseq);
	int64_t t = mu__d_mono_ms();
	/* nothing changed: nothing to read (a Secret outside muster-system is
	 * asked for every 5 s; every Secret each second while their watch
	 * does not answer, e.g. without the right to list them) */
	if (d->clusters_at && seq == d->clusters_seq &&
	    (sw ? sseq == d->secrets_seq && t - d->clusters_at < 5000 : t - d->clusters_at < 1000))
		return MU_OK;
	if (!mu_kube_watch_items(d->wclusters, &l, &seq)) {
		json_decref(l);
		return MU_EIO;
	}
	json_decref(d->secrets);
	d->secrets = NULL;
	if (sw && !mu_kube_watch_items(d->wsecrets, &d->secrets, &sseq)) {
		json_decref(d->secrets);
		d->secrets = NULL;
	}
	d->clusters_seq = seq;
	d->secrets_seq = d->secrets ? sseq : 0;
	d->clusters_at = t;
	for (int32_t i = 0; i < d->ncls; i++)
		d->cls[i].seen = false;
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(l, "items"), i, o) {
		mu__dcl_t *c = cluster_get(d, o);
		if (!c)
			continue;
		c->seen = true;
		const char *mode = mu__jstr(o, "spec.mode");
		c->pull = mode && !strcmp(mode, "pull");
		const char *drain = mu__dmeta(o, "annotations", MU__D_DRAIN);
		c->draining = drain && !strcmp(drain, "true");
		if (c->pull) {
			set_err(c, NULL); /* its agent reports through the hub */
			continue;
		}
		const char *sn = mu__jstr(o, "spec.kubeconfigSecret.name");
		const char *sns = mu__jstr(o, "spec.kubeconfigSecret.namespace");
		if (!sns)
			sns = "muster-system";
		if (!c->secret_name || strcmp(c->secret_name, sn ? sn : "") ||
		    strcmp(c->secret_ns, sns)) {
			free(c->secret_name);
			free(c->secret_ns);
			free(c->secret_rv);
			c->secret_rv = NULL;
			c->secret_name = strdup(sn ? sn : "");
			c->secret_ns = strdup(sns);
		}
		load_secret(d, c);
	}
	for (int32_t k = 0; k < d->ncls; k++)
		if (!d->cls[k].seen)
			d->cls[k].draining = true; /* deleted: its jobs run out */
	json_decref(l);
	return MU_OK;
}

/* POSTs an Event about the object (api, kind, ns, name, uid) through hub:
 * in ns, or in "default" for a cluster-scoped object, as kube's event
 * recorder files them.  The name is the object's with a random-looking
 * suffix of the time and salt.  One request. */
static void event_post(mu__dd_t *d, mu_kube_client_t *hub, const char *api, const char *kind,
		       const char *ns, const char *name, const char *uid, uint64_t salt,
		       const char *type, const char *reason, const char *msg)
{
	char now[40], path[600];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	mu__rfc3339_format((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000, true, now, sizeof now);
	static const char hex[] = "0123456789abcdef";
	char ename[400], sfx[17];
	uint64_t x = (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)ts.tv_sec ^ salt;
	for (int i = 0; i < 16; i++, x >>= 4)
		sfx[i] = hex[x & 15];
	sfx[16] = '\0';
	snprintf(ename, sizeof ename, "%.200s.%s", name, sfx);
	const char *ens = ns ? ns : "default";
	json_t *e = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s?,s:s?},s:s,s:s,s:s,"
			      "s:{s:s},s:s,s:s,s:i}",
			      "apiVersion", "v1", "kind", "Event", "metadata", "name", ename,
			      "namespace", ens, "involvedObject", "apiVersion", api, "kind", kind,
			      "name", name, "namespace", ns, "uid", uid,
			      "type", type, "reason", reason, "message", msg ? msg : "",
			      "source", "component", "muster-dispatch", "firstTimestamp", now,
			      "lastTimestamp", now, "count", 1);
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/events", ens);
	mu__dreq(d, hub, "POST", path, NULL, e, NULL);
	json_decref(e);
}

/* --- queues -------------------------------------------------------------------- */

/* Queue q's caps per cluster from its annotation muster.io/cluster-caps
 * ("CLUSTER=gpu:N,CLUSTER=pods:N,CLUSTER=jobs:N": whole GPUs, pods, and
 * jobs at once): every cluster of the fleet gets its caps, or none.
 * MU_EINVAL (nothing changed) for a term of another form.  O(terms x
 * clusters). */
static int queue_caps(mu__dd_t *d, const char *q, const char *text)
{
	int32_t nc = d->ncls;
	mu_res_t *caps = calloc((size_t)nc + 1, sizeof *caps);
	int64_t *jobs = calloc((size_t)nc + 1, sizeof *jobs);
	if (!caps || !jobs) {
		free(caps);
		free(jobs);
		return MU_ENOMEM;
	}
	for (int32_t c = 0; c < nc; c++) {
		for (int r = 0; r < MU_RES_MAX; r++)
			caps[c].v[r] = MU_RES_UNLIMITED;
		jobs[c] = -1;
	}
	int rc = MU_OK;
	for (const char *p = text ? text : ""; *p && rc == MU_OK;) {
		size_t len = strcspn(p, ",");
		char term[300], cl[256], res[16];
		long long n;
		snprintf(term, sizeof term, "%.*s", (int)(len < 299 ? len : 299), p);
		int32_t ci = -1;
		if (sscanf(term, "%255[^=]=%15[^:]:%lld", cl, res, &n) != 3 || n < 0 ||
		    n > INT64_MAX / 1000 ||
		    (strcmp(res, "gpu") && strcmp(res, "pods") && strcmp(res, "jobs")))
			rc = MU_EINVAL;
		for (int32_t c = 0; rc == MU_OK && c < nc; c++)
			if (!strcmp(d->cls[c].name, cl))
				ci = c;
		if (ci >= 0 && !strcmp(res, "jobs")) /* a cluster not (yet) known: */
			jobs[ci] = n;                /* applied once it is */
		else if (ci >= 0)
			caps[ci].v[strcmp(res, "gpu") ? MU_RES_PODS : MU_RES_GPU] = n * 1000;
		p += len;
		if (*p == ',')
			p++;
	}
	for (int32_t c = 0; rc == MU_OK && c < nc; c++)
		if ((rc = mu_fleet_queue_cap(d->fleet, q, d->cls[c].fid, &caps[c])) == MU_OK)
			rc = mu_fleet_queue_cap_jobs(d->fleet, q, d->cls[c].fid, jobs[c]);
	free(caps);
	free(jobs);
	return rc;
}

/* One hub Queue into the fleet through the cluster-file loader, with its
 * parent and its caps per cluster; its condition Active written
 * (qstatus.c), rv the version that write made, or "". */
static void queue_load(mu__dd_t *d, const json_t *o, char *rv, size_t rvlen)
{
	json_t *c = json_deep_copy(o);
	json_object_set_new(c, "apiVersion", json_string("muster.io/v1alpha1"));
	json_object_set_new(c, "kind", json_string("Queue"));
	json_object_del(c, "status");
	char *text = json_dumps(c, JSON_COMPACT);
	json_decref(c);
	mu_specs_t s;
	mu_specs_init(&s);
	mu_diag_t dg = {""};
	int rc = text ? mu_load_yaml("queue", text, strlen(text), &s, &dg) : MU_ENOMEM;
	free(text);
	if (rc == MU_OK && s.nqueues == 1) {
		rc = mu_fleet_queue_upsert(d->fleet, &s.queues[0]);
		if (rc == MU_EINVAL)
			snprintf(dg.msg, sizeof dg.msg, "spec.parent %s would make a loop of queues",
				 s.queues[0].parent ? s.queues[0].parent : "");
	}
	const char *caps = mu__dmeta(o, "annotations", MU__D_CAPS);
	if (rc == MU_OK && s.nqueues == 1 &&
	    (rc = queue_caps(d, s.queues[0].name, caps)) == MU_EINVAL)
		snprintf(dg.msg, sizeof dg.msg, "annotation " MU__D_CAPS " \"%.200s\": expected "
			 "CLUSTER=gpu:N, CLUSTER=pods:N or CLUSTER=jobs:N, separated by commas", caps);
	if (rc) {
		/* said once per version of the Queue (queue_load is called
		 * when it changes), where `kubectl describe queue` shows it */
		const char *qn = mu__jstr(o, "metadata.name");
		mu__dlog(d, 0, "queue %s: %s %s", qn, mu_strerror(rc), dg.msg);
		char msg[1200];
		snprintf(msg, sizeof msg, "not taken by the dispatcher (%s): %s", mu_strerror(rc),
			 dg.msg);
		if (qn)
			event_post(d, d->hub, "muster.io/v1alpha1", "Queue", NULL, qn,
				   mu__jstr(o, "metadata.uid"), (uint64_t)(uintptr_t)o, "Warning",
				   "InvalidQueue", msg);
		mu__dqueue_cond(d, o, msg, rv, rvlen);
	} else {
		mu__dqueue_cond(d, o, NULL, rv, rvlen);
	}
	mu_specs_release(&s);
}

int mu__dhub_queues(mu__dd_t *d)
{
	json_t *l = NULL;
	uint64_t seq = 0;
	/* the watch's snapshot, read again only when it changed or the
	 * clusters did (every queue's caps then) */
	if (!mu_kube_watch_items(d->wqueues, NULL, &seq))
		return MU_EIO;
	if (seq == d->queues_wseq && d->caps_ncls == d->ncls)
		return MU_OK;
	if (!mu_kube_watch_items(d->wqueues, &l, &seq)) {
		json_decref(l);
		return MU_EIO;
	}
	d->queues_wseq = seq;
	if (d->caps_ncls != d->ncls) { /* new clusters: every queue's caps again */
		json_object_clear(d->queue_rv);
		d->caps_ncls = d->ncls;
	}
	size_t i;
	json_t *o;
	json_t *seen = json_object();
	bool moved = false;
	json_array_foreach(json_object_get(l, "items"), i, o) {
		const char *name = mu__jstr(o, "metadata.name");
		if (!name)
			continue;
		/* what queue_load reads, not the status the dispatcher writes
		 * (qstatus.c) */
		char *sig = mu__dqueue_sig(o);
		json_object_set_new(seen, name, json_true());
		const char *had = json_string_value(json_object_get(d->queue_rv, name));
		if (sig && had && !strcmp(had, sig)) {
			free(sig);
			continue;
		}
		char wrote[64];
		queue_load(d, o, wrote, sizeof wrote);
		json_object_set_new(d->queue_rv, name, json_string(sig ? sig : ""));
		free(sig);
		moved = true;
	}
	const char *k;
	json_t *v, *tmp;
	json_object_foreach_safe(d->queue_rv, tmp, k, v) /* deleted on the hub */
		if (!json_object_get(seen, k)) {
			if (d->queue_st)
				json_object_del(d->queue_st, k);
			json_object_del(d->queue_rv, k);
		}
	json_decref(seen);
	if (moved)
		d->queues_seq++;
	json_decref(l);
	return MU_OK;
}

/* --- priority classes ------------------------------------------------------------ */

static void set_why(mu__djob_t *j, const char *reason, const char *msg);

void mu__dhub_pclasses(mu__dd_t *d)
{
	int64_t t = mu__d_mono_ms();
	if (d->pcls_at && t - d->pcls_at < 1000)
		return;
	d->pcls_at = t;
	json_t *l = NULL;
	long st = mu__dreq(d, d->hub, "GET", "/apis/scheduling.k8s.io/v1/priorityclasses", NULL,
			   NULL, &l);
	if (st != 200) { /* said at the first failure and every 10th (~10 s) */
		char how[32] = "no answer";
		if (st)
			snprintf(how, sizeof how, "HTTP %ld", st);
		if (d->pcls_fails++ % 10 == 0)
			mu__dlog(d, 0, "priority classes: %s (keeping the last list; %d failure%s "
				 "in a row)", how, (int)d->pcls_fails, d->pcls_fails == 1 ? "" : "s");
		json_decref(l);
		return;
	}
	if (d->pcls_fails) {
		mu__dlog(d, 1, "priority classes: read again after %d failures", (int)d->pcls_fails);
		d->pcls_fails = 0;
	}
	json_object_clear(d->pcls);
	json_decref(d->pcls_default);
	d->pcls_default = NULL;
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(l, "items"), i, o) {
		const char *name = mu__jstr(o, "metadata.name");
		json_t *v = json_object_get(o, "value");
		if (!name || !json_is_integer(v))
			continue;
		json_object_set(d->pcls, name, v);
		if (json_is_true(json_object_get(o, "globalDefault")))
			d->pcls_default = json_incref(v);
	}
	json_decref(l);
	const char *bc = d->o->burst_priority_class;
	json_t *bv = bc ? json_object_get(d->pcls, bc) : NULL;
	if (bc && !bv)
		mu__dlog(d, 0, "--burst-priority-class %s: no such PriorityClass on the hub", bc);
	json_int_t p = d->o->burst_priority;
	if (bv && json_integer_value(bv) < p)
		p = json_integer_value(bv);
	mu_fleet_set_burst_priority(d->fleet, (int32_t)p);
}

/* Settles the priority of j's job: the value of the PriorityClass its pod
 * template names (or the hub's globalDefault class's when it names none
 * and gives no priority), as the hub's admission would.  false with j's
 * reason UnknownPriorityClass when the class does not exist (yet). */
static bool job_priority(mu__dd_t *d, mu__djob_t *j)
{
	for (size_t i = 0; i < j->specs.nrefs; i++) {
		const mu_spec_ref_t *r = &j->specs.refs[i];
		if (r->kind != MU_REF_PRIORITY || r->job != 0)
			continue;
		json_t *v = r->name ? json_object_get(d->pcls, r->name) : d->pcls_default;
		if (v) {
			j->specs.jobs[0].priority = (int32_t)json_integer_value(v);
		} else if (r->name) {
			char m[600];
			snprintf(m, sizeof m, "PriorityClass %.200s does not exist on the hub", r->name);
			set_why(j, "UnknownPriorityClass", m);
			return false;
		}
	}
	return true;
}

/* --- jobs ----------------------------------------------------------------------- */

mu__djob_t *mu__dhub_job_by_uid(const mu__dd_t *d, const char *uid)
{
	json_t *v = uid ? json_object_get(d->by_uid, uid) : NULL;
	return v ? d->jobs[json_integer_value(v)] : NULL;
}

int32_t mu__dhub_cluster_by_fid(const mu__dd_t *d, int32_t fid)
{
	for (int32_t i = 0; i < d->ncls; i++)
		if (d->cls[i].fid == fid)
			return i;
	return -1;
}

static int32_t cluster_by_name(const mu__dd_t *d, const char *name)
{
	for (int32_t i = 0; name && i < d->ncls; i++)
		if (!strcmp(d->cls[i].name, name))
			return i;
	return -1;
}

static void set_why(mu__djob_t *j, const char *reason, const char *msg)
{
	free(j->reason);
	free(j->msg);
	j->reason = sdup(reason);
	j->msg = sdup(msg);
}

/* Reads j's spec (the Job through the cluster-file loader) and its
 * selector and locality annotations into j->fs; false (with j's reason
 * set) when they cannot be read. */
static bool job_parse(mu__dd_t *d, mu__djob_t *j, mu_time_t now)
{
	json_t *c;
	if (j->kind == MU__DK_JOB) {
		c = json_deep_copy(j->obj);
		json_object_set_new(c, "apiVersion", json_string("batch/v1"));
		json_object_set_new(c, "kind", json_string("Job"));
		json_object_del(c, "status");
	} else { /* its parts' pod templates as a Workload's pod sets */
		char m[300];
		if (mu__dkind_check(j->obj, j->kind, m, sizeof m)) { /* its own admission's */
			char mm[sizeof m + 64];
			snprintf(mm, sizeof mm, "%s: %s", mu__dkind_name(j->kind), m);
			set_why(j, "InvalidJob", mm);
			return false;
		}
		if (mu__dkind_is_group(j->kind)) {
			/* a group is read once it has its minimum of pods (or
			 * one, without a minimum), and a KAI group each leaf
			 * sub-group's: until then it waits */
			j->gpods_parsed = json_array_size(j->gpods);
			if (mu__dkind_group_waits(j->obj, j->kind, j->gpods, m, sizeof m)) {
				set_why(j, "WaitingForPods", m);
				return false;
			}
		}
		c = mu__dkind_workload(j->obj, j->kind, j->gpods);
	}
	/* the loader reads the tree itself (through its text, 12% of the
	 * dispatcher's samples in bench/dispatch.sh, half of it libyaml's);
	 * a refusal is read again from the text for its message's place */
	mu_diag_t dg = {""};
	int rc = c ? mu_load_json(j->key, c, &j->specs, &dg) : MU_ENOMEM;
	if (rc && c) {
		char *text = json_dumps(c, JSON_COMPACT);
		mu_specs_release(&j->specs);
		mu_specs_init(&j->specs);
		dg.msg[0] = '\0';
		rc = text ? mu_load_yaml(j->key, text, strlen(text), &j->specs, &dg) : MU_ENOMEM;
		free(text);
	}
	json_decref(c);
	if (rc || j->specs.njobs != 1) {
		char m[sizeof dg.msg + 64];
		snprintf(m, sizeof m, "%s%s%s", j->kind ? mu__dkind_name(j->kind) : "",
			 j->kind ? " (read as a Workload of its parts): " : "", dg.msg);
		set_why(j, "InvalidJob", m);
		return false;
	}
	mu_job_spec_t *js = &j->specs.jobs[0];
	/* its pods' DRA claims: the hub's templates and claims they name
	 * (hdra.c; nothing for a job without claims) */
	char why[40], wm[800];
	int dr = mu__dhdra_read(d, j, why, sizeof why, wm, sizeof wm);
	if (dr) {
		set_why(j, why, wm);
		d->claims_waiting += dr > 0; /* read again (claims_retry) */
		return false;
	}
	int64_t created = 0;
	const char *ct = mu__jstr(j->obj, "metadata.creationTimestamp");
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t wall = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	js->submit = ct && !mu__rfc3339_parse(ct, &created) && created <= wall ?
		now - (wall - created) : now;
	mu_label_t *sel, *loc;
	size_t nsel, nloc;
	const char *st = mu__dmeta(j->obj, "annotations", MU__D_SEL);
	char sbuf[1200];
	if (j->kind != MU__DK_JOB) { /* only clusters that serve its kind */
		snprintf(sbuf, sizeof sbuf, "%.1000s%s" MU__D_KINDS "%s=true", st ? st : "",
			 st && *st ? "," : "", mu__dkind_name(j->kind));
		st = sbuf;
	}
	if (mu__dlabels(st, &j->specs.arena, &sel, &nsel) ||
	    mu__dlabels(mu__dmeta(j->obj, "annotations", MU__D_LOC), &j->specs.arena, &loc,
			&nloc)) {
		set_why(j, "InvalidJob", "annotations " MU__D_SEL " and " MU__D_LOC
			" are lists of KEY=VALUE separated by commas");
		return false;
	}
	j->fs = (mu_fleet_job_spec_t){.job = js, .cluster_selector = sel,
		.ncluster_selector = nsel, .locality = loc, .nlocality = nloc, .dra = j->dra,
		.shrinkable = mu__dkind_shrinks(j->obj, j->kind), .shrunk = mu__dreclaim_shrunk(j)};
	mu_res_t mr; /* the coscheduling minResources: fleet-checked in aggregate */
	char mm[200];
	if (mu__dkind_min_resources(j->obj, j->kind, &mr, mm, sizeof mm) > 0 &&
	    (j->fs.min_resources = mu_arena_alloc(&j->specs.arena, sizeof mr)))
		memcpy((void *)j->fs.min_resources, &mr, sizeof mr);
	return job_priority(d, j);
}

/* A victim adopted by a restarted daemon while its hub object said
 * Withdrawing (its record MU__D_PREEMPTED read back, reclaim.c): the
 * withdrawal goes on (push: its copy deleted again by settle_one once the
 * cluster answers), and it is requeued with reason Preempted.  O(1). */
static void reclaim_resume(mu__dd_t *d, mu__djob_t *j)
{
	mu__dcl_t *cl = &d->cls[j->cl];
	mu__dlog(d, 1, "job %s: its withdrawal for reclaim goes on after a restart", j->key);
	j->delete_again = !cl->pull;
	j->withdraw_beat = cl->beats;
	j->state = MU__DJ_WITHDRAWING;
	d->reclaim_relink |= j->preempted_for != NULL; /* reclaim.c links it */
	mu__djob_touch(d, j);
}

/* Puts j in the fleet: adopted where its annotations say an earlier run
 * dispatched it, else queued.  Unknown queues wait for the queue. */
static void job_enter(mu__dd_t *d, mu__djob_t *j, mu_time_t now)
{
	const char *cl = mu__dmeta(j->obj, "annotations", MU__D_CLUSTER);
	const char *ph = mu__dmeta(j->obj, "annotations", MU__D_PHASE);
	int32_t ci = cluster_by_name(d, cl);
	if (ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed") || !strcmp(ph, "NotAdmitted"))) {
		j->state = MU__DJ_DONE;
		j->cl = ci;
		snprintf(j->phase, sizeof j->phase, "%s", ph);
		/* its counts as recorded: a new leader does not rewrite them */
		const char *pods = mu__dmeta(j->obj, "annotations", MU__D_PODS);
		snprintf(j->pods, sizeof j->pods, "%s", pods ? pods : "");
		if (!strcmp(ph, "NotAdmitted")) /* why, as recorded */
			set_why(j, "NotAdmitted", mu__dmeta(j->obj, "annotations", MU__D_MSG));
		return;
	}
	int rc = mu_fleet_job_submit(d->fleet, &j->fs, now, &j->fid);
	if (rc == MU_ENOENT) {
		char m[600];
		snprintf(m, sizeof m, "hub queue %s does not exist", j->fs.job->queue);
		set_why(j, "UnknownQueue", m);
		return;
	}
	if (rc) {
		set_why(j, "InvalidJob", mu_strerror(rc));
		return;
	}
	j->state = MU__DJ_QUEUED;
	j->why = -1;
	if (j->fid >= d->by_fid_cap) {
		int32_t cap = d->by_fid_cap ? d->by_fid_cap : 256;
		while (cap <= j->fid)
			cap *= 2;
		mu__djob_t **v = realloc(d->by_fid, (size_t)cap * sizeof *v);
		if (!v) {
			set_why(j, "InvalidJob", "out of memory");
			return;
		}
		memset(v + d->by_fid_cap, 0, (size_t)(cap - d->by_fid_cap) * sizeof *v);
		d->by_fid = v;
		d->by_fid_cap = cap;
	}
	d->by_fid[j->fid] = j;
	if (j->preempted) /* a victim before a restart: never again */
		mu_fleet_job_mark_victim(d->fleet, j->fid);
	if (ci >= 0 && mu_fleet_job_adopt(d->fleet, j->fid, d->cls[ci].fid, j->gen, now) == MU_OK) {
		j->state = MU__DJ_DISPATCHED;
		j->cl = ci;
		j->dispatched = mu__d_mono_ms();
		snprintf(j->phase, sizeof j->phase, "%s", ph ? ph : "Dispatched");
		mu__dlog(d, 1, "job %s: adopted on %s (generation %u)", j->key, cl, j->gen);
		if (ph && !strcmp(ph, "Withdrawing") && j->preempted)
			reclaim_resume(d, j);
		else if (j->shrinking) /* a shrink recorded, maybe not done */
			d->shrink_settle = true;
	}
}

static void seed_sigs(const mu__dd_t *d, mu__djob_t *j);
static void group_pods(mu__dd_t *d, mu__djob_t *j);

/* A new hub Job: parsed, entered, held suspended. */
static mu__djob_t *job_new(mu__dd_t *d, json_t *o, mu__dkind_t kind, mu_time_t now)
{
	mu__djob_t *j = calloc(1, sizeof *j);
	if (!j)
		return NULL;
	if (d->njobs == d->jobs_cap) {
		int32_t cap = d->jobs_cap ? d->jobs_cap * 2 : 256;
		mu__djob_t **v = realloc(d->jobs, (size_t)cap * sizeof *v);
		if (!v) {
			free(j);
			return NULL;
		}
		d->jobs = v;
		d->jobs_cap = cap;
	}
	j->ns = strdup(mu__jstr(o, "metadata.namespace") ? mu__jstr(o, "metadata.namespace") : "default");
	j->name = strdup(mu__jstr(o, "metadata.name"));
	j->uid = strdup(mu__jstr(o, "metadata.uid") ? mu__jstr(o, "metadata.uid") : "");
	j->kind = kind;
	size_t kl = strlen(j->ns) + strlen(j->name) + 32;
	j->key = malloc(kl);
	if (kind == MU__DK_JOB)
		snprintf(j->key, kl, "%s/%s", j->ns, j->name);
	else
		snprintf(j->key, kl, "%s:%s/%s", mu__dkind_name(kind), j->ns, j->name);
	j->obj = json_incref(o);
	j->fid = -1;
	j->cl = -1;
	mu_specs_init(&j->specs);
	const char *g = mu__dmeta(o, "annotations", MU__D_GEN);
	int64_t gen = 0;
	if (g && mu__parse_int(g, 0, UINT32_MAX - 1, &gen))
		gen = 0;
	j->gen = (uint32_t)gen;
	const char *pre = mu__dmeta(o, "annotations", MU__D_PREEMPTED); /* reclaim.c's record */
	j->preempted = pre && *pre ? strdup(pre) : NULL;
	const char *pfor = mu__dmeta(o, "annotations", MU__D_PREEMPTED_FOR);
	j->preempted_for = pfor && *pfor ? strdup(pfor) : NULL;
	const char *shr = mu__dmeta(o, "annotations", MU__D_SHRUNK); /* round 17 */
	j->shrunk = shr && *shr ? strdup(shr) : NULL;
	const char *shi = mu__dmeta(o, "annotations", MU__D_SHRINKING); /* round 18 */
	j->shrinking = shi && *shi ? strdup(shi) : NULL;
	d->jobs[d->njobs] = j;
	json_object_set_new(d->by_key, j->key, json_integer(d->njobs));
	json_object_set_new(d->by_uid, j->uid, json_integer(d->njobs));
	d->njobs++;
	if (mu__dkind_is_group(kind))
		group_pods(d, j);
	if (job_parse(d, j, now))
		job_enter(d, j, now);
	else /* a group that waits for its pods is no fault */
		mu__dlog(d, j->reason && !strncmp(j->reason, "Waiting", 7) ? 1 : 0, "job %s: %s",
			 j->key, j->msg ? j->msg : "cannot be read");
	mu__dhub_held_read(d, j); /* after job_parse: its read forgets the index */
	seed_sigs(d, j);
	const json_t *susp = json_object_get(mu__dkind_ctl(json_object_get(o, "spec"), kind, false),
					     "suspend");
	/* a kind without suspend is held by what the hub does not run (its
	 * controller; a group's pods are gated, docs/dispatch.md) */
	if (mu__dkind_suspends(kind) && !json_is_true(susp) && j->state != MU__DJ_DISPATCHED &&
	    j->state != MU__DJ_DONE) {
		char path[1024];
		mu__dkind_path(kind, j->ns, j->name, "", path, sizeof path);
		json_t *b = mu__dkind_suspend_patch(kind, true);
		mu__dreq(d, d->hub, "PATCH", path, "application/merge-patch+json", b, NULL);
		json_decref(b);
	}
	return j;
}

void mu__djob_free(mu__djob_t *j)
{
	free(j->key);
	free(j->ns);
	free(j->name);
	free(j->uid);
	json_decref(j->obj);
	mu_specs_release(&j->specs);
	mu__dhdra_clear(j);
	free(j->reason);
	free(j->msg);
	free(j->refused);
	free(j->failed_create);
	free(j->preempted);
	free(j->preempted_for);
	free(j->shrunk);
	free(j->shrinking);
	free(j->shrink_was);
	json_decref(j->wstatus);
	json_decref(j->gpods);
	json_decref(j->sent);
	json_decref(j->held);
	free(j->ann_sig);
	free(j->status_sig);
	free(j->ann_memo);
	free(j->status_memo);
	free(j);
}

void mu__djlist_add(mu__djlist_t *l, mu__djob_t *j, int i)
{
	if (j->marks & (1u << i))
		return;
	j->marks |= (uint8_t)(1u << i);
	j->next[i] = NULL;
	if (l->tail)
		l->tail->next[i] = j;
	else
		l->head = j;
	l->tail = j;
	l->n++;
}

void mu__djlist_clear(mu__djlist_t *l, int i)
{
	for (mu__djob_t *j = l->head, *nx; j; j = nx) {
		nx = j->next[i];
		j->marks &= (uint8_t)~(1u << i);
		j->next[i] = NULL;
	}
	l->head = l->tail = NULL;
	l->n = 0;
}

void mu__djlist_drop(mu__djlist_t *l, mu__djob_t *j, int i)
{
	if (!(j->marks & (1u << i)))
		return;
	mu__djob_t *prev = NULL;
	for (mu__djob_t *x = l->head; x; prev = x, x = x->next[i]) {
		if (x != j)
			continue;
		if (prev)
			prev->next[i] = j->next[i];
		else
			l->head = j->next[i];
		if (l->tail == j)
			l->tail = prev;
		l->n--;
		break;
	}
	j->marks &= (uint8_t)~(1u << i);
	j->next[i] = NULL;
}

void mu__djob_dirty(mu__dd_t *d, mu__djob_t *j)
{
	mu__djlist_add(&d->dirty, j, MU__DM_DIRTY);
}

void mu__djob_touch(mu__dd_t *d, mu__djob_t *j)
{
	mu__djlist_add(&d->dirty, j, MU__DM_DIRTY);
	mu__djlist_add(&d->wdirty, j, MU__DM_WDIRTY);
}

/* Drops the jobs marked gone (seen unset: a complete list did not show
 * them, or their watch said they were deleted on the hub): their quota is
 * freed; their copies are deleted by the next poll of their cluster (no
 * hub Job has their uid any more; d->gone names them for a poll that
 * reads only what changed).  O(jobs). */
static void jobs_gone(mu__dd_t *d, mu_time_t now)
{
	int32_t w = 0;
	for (int32_t i = 0; i < d->njobs; i++) {
		mu__djob_t *j = d->jobs[i];
		if (j->seen) {
			d->jobs[w] = j;
			json_object_set_new(d->by_key, j->key, json_integer(w));
			json_object_set_new(d->by_uid, j->uid, json_integer(w));
			w++;
			continue;
		}
		if (j->fid >= 0 && (j->state == MU__DJ_QUEUED || j->state == MU__DJ_DISPATCHED ||
				    j->state == MU__DJ_WITHDRAWING))
			mu_fleet_job_finish(d->fleet, j->fid, now);
		json_object_del(d->by_key, j->key);
		json_object_del(d->by_uid, j->uid);
		if (j->fid >= 0 && j->fid < d->by_fid_cap)
			d->by_fid[j->fid] = NULL;
		mu__dlog(d, 1, "job %s: deleted on the hub", j->key);
		char key[1200];
		snprintf(key, sizeof key, "%s/%s", j->ns, j->name);
		if (!d->gone)
			d->gone = json_array();
		json_array_append_new(d->gone, json_pack("[i,s]", (int)j->kind, key));
		mu__djlist_drop(&d->dirty, j, MU__DM_DIRTY);
		mu__djlist_drop(&d->wdirty, j, MU__DM_WDIRTY);
		mu__djlist_drop(&d->pend, j, MU__DM_PEND);
		mu__dhdra_forget(d, j);
		mu__djob_free(j);
	}
	d->njobs = w;
}

/* j's pods on the hub (this pass's d->groups) into j->gpods. */
static void group_pods(mu__dd_t *d, mu__djob_t *j)
{
	json_t *a = json_object_get(d->groups, j->key);
	json_decref(j->gpods);
	j->gpods = a ? json_incref(a) : json_array();
}

/* The hub's pods (the watch's snapshot) by the group each names, into
 * d->groups ("KIND:NS/NAME" -> [pods]), when the watch changed (its
 * change count, d->pods_seq).  A pod that is ending (deletionTimestamp)
 * is not sent.  False while the watch has not listed the pods once: a
 * group read then would have none, wait for them (WaitingForPods), and a
 * restarted daemon would not adopt its dispatch (its copy deleted as
 * stale, the group sent again at a new generation); the caller reads
 * nothing that pass.  O(pods) after a change, O(1) without. */
static bool groups_read(mu__dd_t *d)
{
	json_t *l = NULL;
	uint64_t seq = 0;
	/* unchanged since the last pass: the groups stay (O(1)) */
	if (d->groups && d->wpods && mu_kube_watch_items(d->wpods, NULL, &seq) &&
	    seq == d->pods_seq)
		return true;
	if (!d->wpods || !mu_kube_watch_items(d->wpods, &l, &seq)) {
		json_decref(l);
		if (d->groups)
			return true; /* the last snapshot stays */
		if (d->wpods)
			return false; /* not listed yet */
		d->groups = json_object(); /* no watch of pods: no group's pods */
		return true;
	}
	json_t *g = json_object();
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(l, "items"), i, p) {
		if (mu__jget(p, "metadata.deletionTimestamp"))
			continue;
		for (int k = 0; k < MU__DK_COUNT; k++) {
			const char *gn = mu__dkind_pod_group(p, (mu__dkind_t)k);
			if (!gn)
				continue;
			const char *ns = mu__jstr(p, "metadata.namespace");
			char key[600];
			snprintf(key, sizeof key, "%s:%s/%s", mu__dkind_name((mu__dkind_t)k),
				 ns ? ns : "default", gn);
			json_t *a = json_object_get(g, key);
			if (!a) {
				a = json_array();
				json_object_set_new(g, key, a);
			}
			json_array_append(a, p);
		}
	}
	json_decref(l);
	json_decref(d->groups);
	d->groups = g;
	d->pods_seq = seq;
	return true;
}

/* Whether j waits for a ResourceClaimTemplate or ResourceClaim on the
 * hub (hdra.c). */
static bool claims_wait(const mu__djob_t *j)
{
	return j->reason && !strncmp(j->reason, "WaitingForResourceClaim", 23);
}

/* j (waiting for its claims' objects) read again, and entered when they
 * are there now. */
static void claims_again(mu__dd_t *d, mu__djob_t *j, mu_time_t now)
{
	mu_specs_release(&j->specs);
	mu_specs_init(&j->specs);
	if (job_parse(d, j, now)) {
		mu__dlog(d, 1, "job %s: its claims' objects are on the hub now", j->key);
		job_enter(d, j, now);
	}
	mu__djob_touch(d, j);
}

/* j out of the fleet, to be entered again with a new id (NEW).  O(1). */
static void fleet_out(mu__dd_t *d, mu__djob_t *j, mu_time_t now)
{
	if (j->fid >= 0) {
		mu_fleet_job_finish(d->fleet, j->fid, now);
		if (j->fid < d->by_fid_cap)
			d->by_fid[j->fid] = NULL;
	}
	j->fid = -1;
	j->state = MU__DJ_NEW;
}

void mu__dhub_claims_back(mu__dd_t *d, mu__djob_t *j)
{
	mu_time_t now = mu__d_now(d);
	j->dra_stale = false;
	fleet_out(d, j, now);
	mu__djlist_drop(&d->pend, j, MU__DM_PEND);
	j->cl = -1;
	j->why = -1;
	j->phase[0] = j->pods[0] = '\0';
	claims_again(d, j, now);
}

void mu__dhub_readopt(mu__dd_t *d, mu__djob_t *j)
{
	mu_time_t now = mu__d_now(d);
	fleet_out(d, j, now);
	j->fs.shrunk = mu__dreclaim_shrunk(j);
	job_enter(d, j, now);
	mu__djob_touch(d, j);
}

/* The jobs waiting for their claims' objects read again, once a second
 * while one waits and the hub's templates and claims are not watched
 * (hdra.c's watches, round 18, not started or not answering: a GET per
 * object of a waiting job).  O(jobs) then, else O(1). */
static void claims_retry(mu__dd_t *d, mu_time_t now)
{
	int64_t t = mu__d_mono_ms();
	if (!d->claims_waiting || t < d->claims_at || mu__dhdra_watched(d))
		return; /* round 18: watched, their events read them (hdra.c) */
	d->claims_at = t + 1000;
	int n = 0;
	for (int32_t i = 0; i < d->njobs; i++) {
		mu__djob_t *j = d->jobs[i];
		if (j->state != MU__DJ_NEW || !claims_wait(j))
			continue;
		claims_again(d, j, now);
		n += j->state == MU__DJ_NEW && claims_wait(j);
	}
	d->claims_waiting = n;
}

/* Hub object o of kind k (new or changed) into d->jobs: a new one parsed
 * and entered, a known one's object replaced (and read again when it
 * waited for its pods, queue or priority class).  j is marked for the
 * write-back and its copies when its object changed. */
static void job_seen(mu__dd_t *d, mu__dkind_t k, json_t *o, mu_time_t now)
{
	const char *uid = mu__jstr(o, "metadata.uid");
	const char *name = mu__jstr(o, "metadata.name");
	if (!name || !uid)
		return;
	mu__djob_t *j = mu__dhub_job_by_uid(d, uid);
	bool fresh = !j;
	if (!j && !(j = job_new(d, o, k, now)))
		return;
	j->seen = true;
	mu__djstate_t was = j->state;
	bool changed = !fresh && j->obj != o;
	if (fresh || j->obj != o)
		mu__djob_touch(d, j);
	json_decref(j->obj);
	j->obj = json_incref(o);
	json_t *gp = json_incref(j->gpods);
	if (mu__dkind_is_group(k))
		group_pods(d, j);
	if (j->gpods != gp) /* its pods on the hub changed: sent to its cluster */
		mu__djob_touch(d, j);
	json_decref(gp);
	if (j->state == MU__DJ_NEW && j->reason && !strcmp(j->reason, "WaitingForPods") &&
	    json_array_size(j->gpods) != j->gpods_parsed) {
		/* read again with the pods that came */
		mu_specs_release(&j->specs);
		mu_specs_init(&j->specs);
		if (job_parse(d, j, now))
			job_enter(d, j, now);
	} else if (j->state == MU__DJ_NEW && claims_wait(j) && changed) {
		claims_again(d, j, now); /* changed: read again (also once a second) */
	} else if (j->state == MU__DJ_NEW && j->reason && !strcmp(j->reason, "UnknownQueue"))
		job_enter(d, j, now);
	else if (j->state == MU__DJ_NEW && j->reason &&
		 !strcmp(j->reason, "UnknownPriorityClass") && job_priority(d, j))
		job_enter(d, j, now);
	if (j->state != was)
		mu__djob_touch(d, j);
	if (j->state == MU__DJ_DISPATCHED && !j->started)
		mu__djlist_add(&d->pend, j, MU__DM_PEND); /* adopted */
}

/* The hub's list of kind k (the watch's snapshot) into d->jobs; false
 * when it was not read (a kind whose CRD the hub does not have).  Its
 * jobs the list does not show are marked gone.  O(objects). */
static bool jobs_of_kind(mu__dd_t *d, mu__dkind_t k, mu_time_t now)
{
	json_t *l = NULL;
	uint64_t seq = 0;
	if (!d->wjobs[k] || !mu_kube_watch_items(d->wjobs[k], &l, &seq)) {
		json_decref(l);
		return false;
	}
	d->jobs_seq[k] = seq;
	d->nfull++;
	for (int32_t i = 0; i < d->njobs; i++)
		if (d->jobs[i]->kind == k)
			d->jobs[i]->seen = false;
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(l, "items"), i, o)
		job_seen(d, k, o, now);
	json_decref(l);
	return true;
}

/* What the watch of kind k changed since the last read (its change
 * count d->jobs_seq[k]) into d->jobs: changed objects as job_seen, deleted
 * ones marked gone; a list that came between, or changes no longer kept,
 * read as jobs_of_kind.  false when the watch is not healthy.
 * O(changes). */
static bool jobs_changed(mu__dd_t *d, mu__dkind_t k, mu_time_t now, bool *gone)
{
	json_t *ch = NULL;
	uint64_t seq = 0;
	if (!d->wjobs[k] || !mu_kube_watch_changes(d->wjobs[k], d->jobs_seq[k], &ch, &seq)) {
		json_decref(ch);
		return false;
	}
	if (!ch) {
		*gone = true;
		return jobs_of_kind(d, k, now);
	}
	const char *key;
	json_t *o;
	json_object_foreach(ch, key, o) {
		char jk[1200];
		snprintf(jk, sizeof jk, "%s%s%s", k ? mu__dkind_name(k) : "", k ? ":" : "", key);
		json_t *v = json_object_get(d->by_key, jk);
		mu__djob_t *j = v ? d->jobs[json_integer_value(v)] : NULL;
		const char *uid = mu__jstr(o, "metadata.uid");
		/* deleted, or deleted and made again (another uid) */
		if (j && (!json_is_object(o) || !uid || strcmp(uid, j->uid))) {
			j->seen = false;
			*gone = true;
		}
		if (json_is_object(o))
			job_seen(d, k, o, now);
	}
	json_decref(ch);
	d->jobs_seq[k] = seq;
	return true;
}

void mu__dhub_discover(mu__dd_t *d, int64_t now)
{
	int8_t on[MU__DK_COUNT];
	if (!mu__dserved_refresh(d, d->hub, d->hub_serves, &d->hub_disc_at, &d->hub_probe_at,
				 &d->hub_apis, now, on))
		return;
	for (int k = 1; k < MU__DK_COUNT; k++) {
		if (on[k] < 0)
			continue; /* no answer: asked again soon */
		if (on[k] != d->hub_serves[k] && (d->hub_serves[k] >= 0 || on[k]))
			mu__dlog(d, 1, "hub: %s %s (%s)", on[k] ? "serves" : "does not serve",
				 mu__dkind_name((mu__dkind_t)k), mu__dkind_api((mu__dkind_t)k));
		d->hub_serves[k] = on[k];
	}
	mu__dserved_watch(d->o->hub, "labelSelector=muster.io%2Fqueue", on, d->wjobs, d->jobs_seq);
}

int mu__dhub_jobs(mu__dd_t *d)
{
	d->jobs_listed = false;
	/* the watches' snapshots (run.c started them): no request per pass */
	if (!d->wjobs[MU__DK_JOB] || !mu_kube_watch_items(d->wjobs[MU__DK_JOB], NULL, NULL))
		return MU_EIO;
	mu_time_t now = mu__d_now(d);
	uint64_t pseq = d->pods_seq;
	if (!groups_read(d))
		return MU_EIO; /* the hub's pods not listed yet: as the Jobs' above */
	/* the hub's pods changed (groups' members): every kind read whole */
	bool full = d->full || pseq != d->pods_seq, gone = full;
	d->nfull = 0;
	for (int k = 0; k < MU__DK_COUNT; k++) {
		uint64_t x = mu_kube_watch_expired(d->wjobs[k]);
		if (x > d->expired[k]) /* said once per re-list (0: a new watch) */
			mu__dlog(d, 1, "hub %ss: their watch's version expired (410 Gone): listed "
				 "again", mu__dkind_name((mu__dkind_t)k));
		d->expired[k] = x;
		x = mu_kube_watch_resumed(d->wjobs[k]);
		if (x > d->resumed[k]) /* said once per resume */
			mu__dlog(d, 1, "hub %ss: their watch was cut or not answered: resumed from "
				 "the last version seen, not listed again", mu__dkind_name((mu__dkind_t)k));
		d->resumed[k] = x;
		/* not read: its jobs stay as they were */
		d->kind_listed[k] = full ? jobs_of_kind(d, (mu__dkind_t)k, now) :
			jobs_changed(d, (mu__dkind_t)k, now, &gone);
		if (!d->kind_listed[k])
			for (int32_t i = 0; i < d->njobs; i++)
				if ((int)d->jobs[i]->kind == k)
					d->jobs[i]->seen = true;
	}
	if (gone)
		jobs_gone(d, now);
	claims_retry(d, now);
	/* round 18: the jobs the hub's DRA objects' events move */
	json_t *back = mu__dhdra_watch(d);
	const char *bu;
	json_t *bv;
	json_object_foreach(back, bu, bv) {
		mu__djob_t *bj = mu__dhub_job_by_uid(d, bu);
		if (bj && json_is_true(bv))
			mu__dhub_claims_back(d, bj);
		else if (bj) /* round 19: its held late pods, tried again */
			mu__djob_touch(d, bj);
	}
	json_decref(back);
	d->jobs_listed = d->kind_listed[MU__DK_JOB];
	return MU_OK;
}

/* --- writes ----------------------------------------------------------------------- */

long mu__dhub_annotate(mu__dd_t *d, mu__djob_t *j)
{
	return mu__dhub_annotate_on(d, d->hub, j);
}

/* Round 20: group j's late pods held for its generation (worker.c's
 * j->held, without "told") into annotations a under MU__D_HELD (null
 * when none), so that a restart keeps them held (mu__dhub_held_read).
 * O(held pods). */
static void held_of(const mu__djob_t *j, json_t *a)
{
	json_t *keep = json_object();
	const char *name;
	json_t *h;
	json_object_foreach(j->held, name, h) {
		if (json_integer_value(json_object_get(h, "gen")) != (json_int_t)j->gen ||
		    !j->gen)
			continue;
		json_t *c = json_copy(h);
		json_object_del(c, "told");
		json_object_set_new(keep, name, c);
	}
	char *t = json_object_size(keep) ? json_dumps(keep, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_object_set_new(a, MU__D_HELD, t ? json_string(t) : json_null());
	free(t);
	json_decref(keep);
}

/* Round 20: the holds a restart reads back from hub group j's annotation
 * MU__D_HELD (held_of's), told already (their Events were posted before
 * the restart) and entered in the watch index, so that the pod is not
 * tried again until it or an object it names changes (worker.c's
 * held_now, hdra.c's held_release).  O(held pods x their keys). */
void mu__dhub_held_read(mu__dd_t *d, mu__djob_t *j)
{
	const char *t = mu__dmeta(j->obj, "annotations", MU__D_HELD);
	json_t *v = t && mu__dkind_is_group(j->kind) ? json_loads(t, 0, NULL) : NULL;
	const char *name;
	json_t *h;
	json_object_foreach(v, name, h) {
		if (!json_is_object(h) ||
		    json_integer_value(json_object_get(h, "gen")) != (json_int_t)j->gen)
			continue;
		json_object_set_new(h, "told", json_true());
		if (!j->held)
			j->held = json_object();
		json_object_set(j->held, name, h);
		mu__dhdra_held_watch(d, j, json_object_get(h, "keys"));
	}
	json_decref(v);
}

/* j's dispatch annotations (and, under "l", its muster.io/cluster label)
 * as the hub Job should have them, and their text; owned. */
static json_t *ann_of(const mu__dd_t *d, const mu__djob_t *j, char **sig)
{
	const char *phase = j->state == MU__DJ_NEW ? "Invalid" :
		j->state == MU__DJ_QUEUED ? "Queued" :
		j->state == MU__DJ_WITHDRAWING ? "Withdrawing" : j->phase;
	bool where = j->cl >= 0 && j->state >= MU__DJ_DISPATCHED;
	char gen[16];
	snprintf(gen, sizeof gen, "%u", j->gen);
	json_t *a = json_object();
	json_object_set_new(a, MU__D_CLUSTER, where ? json_string(d->cls[j->cl].name) : json_null());
	json_object_set_new(a, MU__D_GEN, j->gen ? json_string(gen) : json_null());
	json_object_set_new(a, MU__D_PHASE, json_string(*phase ? phase : "Dispatched"));
	bool waits = j->state == MU__DJ_QUEUED || j->state == MU__DJ_NEW || mu__dhub_refused(j);
	/* a copy whose pods its worker refuses says why (failcreate.c) */
	bool fc = j->failed_create && j->state == MU__DJ_DISPATCHED && !j->started;
	json_object_set_new(a, MU__D_REASON, fc ? json_string("FailedCreate") :
			    waits && j->reason ? json_string(j->reason) : json_null());
	json_object_set_new(a, MU__D_MSG, fc ? json_string(j->failed_create) :
			    waits && j->msg ? json_string(j->msg) : json_null());
	json_object_set_new(a, MU__D_PODS, where && *j->pods ? json_string(j->pods) : json_null());
	/* a reclaim's victim, kept for a restart (written with the withdraw) */
	json_object_set_new(a, MU__D_PREEMPTED, j->preempted ? json_string(j->preempted) : json_null());
	json_object_set_new(a, MU__D_PREEMPTED_FOR,
			    j->preempted_for ? json_string(j->preempted_for) : json_null());
	json_object_set_new(a, MU__D_SHRUNK, j->shrunk ? json_string(j->shrunk) : json_null());
	json_object_set_new(a, MU__D_SHRINKING,
			    j->shrinking ? json_string(j->shrinking) : json_null());
	/* round 22: a pull agent's answer goes with the intent it answered
	 * (one PATCH: the agent never sees the intent without its answer) */
	if (!j->shrinking && mu__dmeta(j->obj, "annotations", MU__D_SHRINKREP))
		json_object_set_new(a, MU__D_SHRINKREP, json_null());
	held_of(j, a); /* round 20 */
	/* the label is what an agent lists (pull mode): off while withdrawing */
	bool assigned = where && j->state != MU__DJ_WITHDRAWING;
	json_object_set_new(a, "l", assigned ? json_string(d->cls[j->cl].name) : json_null());
	*sig = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
	return a;
}

char *mu__dhub_ann_text(const mu__dd_t *d, const mu__djob_t *j)
{
	char *sig = NULL;
	json_decref(ann_of(d, j, &sig));
	return sig;
}

/* Appends v's decimal digits and then c to b[*n..len); false when they
 * do not fit.  (Not snprintf: this runs for every job in every full
 * pass.) */
static bool key_num(char *b, size_t len, size_t *n, uint64_t v, char c)
{
	char t[24];
	size_t k = 0;
	do
		t[k++] = (char)('0' + v % 10);
	while ((v /= 10));
	if (len - *n < k + 1)
		return false;
	while (k)
		b[(*n)++] = t[--k];
	b[(*n)++] = c;
	return true;
}

/* Appends s to b[*n..len), its length first ("0-" for NULL), so that the
 * inputs' text is read back one way only; false when it does not fit. */
static bool key_put(char *b, size_t len, size_t *n, const char *s)
{
	size_t l = s ? strlen(s) : 0;
	if (!key_num(b, len, n, l, s ? ':' : '-') || len - *n < l)
		return false;
	memcpy(b + *n, s ? s : "", l);
	*n += l;
	return true;
}

/* Round 20: every input of ann_of and of a Job's status_of (with
 * mu__dreclaim_cond and mu__dhub_managed, which they call) as one text
 * in b[0..len), not terminated: the kind, state, cluster (its index and
 * name), generation, whether a pod was bound, phase, pod counts, why it
 * waits, a refused create, the reclaim and shrink records and
 * spec.managedBy; a group with held late pods has none (their record
 * changes without these).  Equal texts give equal annotations and status; a
 * field added to either function must be added here (test_dispatch_pass's
 * test_memo_inputs changes each one).  Its length, 0 when it does not fit
 * (no memo then).  O(the fields' length). */
static size_t memo_key(const mu__dd_t *d, const mu__djob_t *j, char *b, size_t len)
{
	size_t n = 0;
	if (json_object_size(j->held))
		return 0; /* held late pods (held_of's, round 20): no memo while any */
	const uint64_t num[] = {(uint64_t)j->kind, (uint64_t)j->state, (uint64_t)(j->cl + 1), j->gen,
				j->started};
	for (size_t i = 0; i < sizeof num / sizeof num[0]; i++)
		if (!key_num(b, len, &n, num[i], '|'))
			return 0;
	const char *in[] = {j->cl >= 0 && j->cl < d->ncls ? d->cls[j->cl].name : NULL, j->phase,
			    j->pods, j->reason, j->msg, j->failed_create, j->preempted,
			    j->preempted_for, j->shrunk, j->shrinking,
			    mu__dkind_managed_by(j->obj, j->kind)};
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
		if (!key_put(b, len, &n, in[i]))
			return 0;
	return n;
}

/* Whether memo (a memo_key text followed by the signature it gave) holds
 * key[0..n) and sig: the key's text is read one way only, so a memo
 * that starts with it has it as its whole key.  O(n + sig). */
static bool memo_hit(const char *memo, const char *key, size_t n, const char *sig)
{
	return memo && sig && n && !strncmp(memo, key, n) && !strcmp(memo + n, sig);
}

/* *m becomes key[0..n) followed by sig (nothing kept when out of memory). */
static void memo_set(char **m, const char *key, size_t n, const char *sig)
{
	free(*m);
	*m = n ? malloc(n + strlen(sig) + 1) : NULL;
	if (*m) {
		memcpy(*m, key, n);
		strcpy(*m + n, sig);
	}
}

/* mu__dhub_annotate_due with its memo_key text key[0..n) given (round 21:
 * mu__dhub_write_due builds it once for both memos). */
static bool ann_due_k(const mu__dd_t *d, mu__djob_t *j, const char *key, size_t n)
{
	if (memo_hit(j->ann_memo, key, n, j->ann_sig))
		return false;
	char *sig = mu__dhub_ann_text(d, j);
	bool due = !sig || !j->ann_sig || strcmp(sig, j->ann_sig);
	if (!due)
		memo_set(&j->ann_memo, key, n, sig);
	free(sig);
	return due;
}

bool mu__dhub_annotate_due(const mu__dd_t *d, mu__djob_t *j)
{
	char key[8192];
	return ann_due_k(d, j, key, memo_key(d, j, key, sizeof key));
}

/* Whether annotation k of the hub Job goes from had to want only by its
 * copy's pods: the counts, or the phase Dispatched to Running (a pod
 * bound: job_report's "started"). */
static bool pod_event(const char *k, const json_t *want, const json_t *had)
{
	if (!strcmp(k, MU__D_PODS))
		return true;
	return !strcmp(k, MU__D_PHASE) && json_is_string(had) &&
	       !strcmp(json_string_value(had), "Dispatched") && json_is_string(want) &&
	       !strcmp(json_string_value(want), "Running");
}

/* mu__dhub_pod_events_only's comparison of the annotations, its status
 * found not due and j->ann_sig set.  O(annotations). */
static bool pod_only(const mu__dd_t *d, mu__djob_t *j)
{
	char *sig = NULL;
	json_t *want = ann_of(d, j, &sig), *had = json_loads(j->ann_sig, 0, NULL);
	bool only = sig && had && strcmp(sig, j->ann_sig);
	const char *k;
	json_t *v;
	json_object_foreach(want, k, v)
		if (only && !json_equal(v, json_object_get(had, k)) &&
		    !pod_event(k, v, json_object_get(had, k)))
			only = false;
	free(sig);
	json_decref(want);
	json_decref(had);
	return only;
}

bool mu__dhub_pod_events_only(const mu__dd_t *d, mu__djob_t *j)
{
	return j->ann_sig && !mu__dhub_status_due(d, j) && pod_only(d, j);
}

/* The metadata patch of annotations a (ann_of's, taken): the
 * annotations, the muster.io/cluster label, and the lease term (not in
 * the signature: a new leader need not rewrite every job), by which
 * `muster up` refuses the patch once the term is over.  Owned. */
static json_t *ann_meta(const mu__dd_t *d, json_t *a)
{
	json_t *lab = json_pack("{s:O}", MU__D_CLUSTER, json_object_get(a, "l"));
	json_object_del(a, "l");
	if (d->lease)
		json_object_set_new(a, MU__D_TERM, json_string(mu_kube_lease_term(d->lease)));
	return json_pack("{s:o,s:o}", "annotations", a, "labels", lab);
}

static json_t *status_of(const mu__dd_t *d, const mu__djob_t *j);
static void status_times(const mu__djob_t *j, json_t *st);

long mu__dhub_record_on(mu__dd_t *d, mu_kube_client_t *hub, mu__djob_t *j)
{
	json_t *st = j->kind == MU__DK_JOB ? status_of(d, j) : NULL;
	char *ssig = st ? json_dumps(st, JSON_COMPACT) : NULL, *sig = NULL;
	json_t *a = ssig ? ann_of(d, j, &sig) : NULL;
	if (!sig || (j->status_sig && !strcmp(ssig, j->status_sig)) ||
	    (j->ann_sig && !strcmp(sig, j->ann_sig))) {
		/* not a Job, or only one of the two changed */
		free(ssig);
		free(sig);
		json_decref(st);
		json_decref(a);
		return mu__dhub_annotate_on(d, hub, j);
	}
	status_times(j, st);
	json_t *b = json_pack("{s:o,s:o}", "metadata", ann_meta(d, a), "status", st);
	char path[1024];
	mu__dkind_path(j->kind, j->ns, j->name, "/status", path, sizeof path);
	long code = mu__dreq(d, hub, "PATCH", path, "application/strategic-merge-patch+json", b,
			     NULL);
	json_decref(b);
	if (code == 200) {
		free(j->ann_sig);
		j->ann_sig = sig;
		free(j->status_sig);
		j->status_sig = ssig;
	} else {
		free(sig);
		free(ssig);
		mu__dlog(d, 0, "job %s: record: HTTP %ld%s", j->key, code,
			 code == 409 && d->lease ? " (fenced: the lease term is over?)" : "");
	}
	return code;
}

long mu__dhub_annotate_on(mu__dd_t *d, mu_kube_client_t *hub, mu__djob_t *j)
{
	char *sig = NULL;
	json_t *a = ann_of(d, j, &sig);
	if (sig && j->ann_sig && !strcmp(sig, j->ann_sig)) {
		free(sig);
		json_decref(a);
		return 200;
	}
	json_t *b = json_pack("{s:o}", "metadata", ann_meta(d, a));
	char path[1024];
	mu__dkind_path(j->kind, j->ns, j->name, "", path, sizeof path);
	long st = mu__dreq(d, hub, "PATCH", path, "application/merge-patch+json", b, NULL);
	json_decref(b);
	if (st == 200) {
		free(j->ann_sig);
		j->ann_sig = sig;
	} else {
		free(sig);
		mu__dlog(d, 0, "job %s: annotations: HTTP %ld%s", j->key, st,
			 st == 409 && d->lease ? " (fenced: the lease term is over?)" : "");
	}
	return st;
}

long mu__dhub_fence(mu__dd_t *d, mu_kube_client_t *hub, const mu__djob_t *j)
{
	if (!d->lease)
		return 200;
	json_t *b = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", MU__D_TERM,
			      mu_kube_lease_term(d->lease));
	char path[1024];
	mu__dkind_path(j->kind, j->ns, j->name, "", path, sizeof path);
	long st = mu__dreq(d, hub, "PATCH", path, "application/merge-patch+json", b, NULL);
	json_decref(b);
	if (st != 200)
		mu__dlog(d, 0, "job %s: lease term %s not accepted (HTTP %ld): no create",
			 j->key, mu_kube_lease_term(d->lease), st);
	return st;
}

/* --- status: conditions on the hub Job ----------------------------------------- */

bool mu__dhub_refused(const mu__djob_t *j)
{
	return j->state == MU__DJ_DONE && !strcmp(j->phase, "NotAdmitted");
}

bool mu__dhub_managed(const mu__djob_t *j)
{
	const char *m = mu__dkind_managed_by(j->obj, j->kind);
	/* the CRDs of Kubeflow and KubeRay allow only MultiKueue's value
	 * besides their own controller's: for them it means the hub's */
	/* a kind without suspend has no managedBy: the hub runs no
	 * controller of it, so its status is the copy's */
	return !mu__dkind_suspends(j->kind) ||
	       (m && (!strcmp(m, MU__D_MANAGER) ||
		      (j->kind != MU__DK_JOB && !strcmp(m, MU__D_MULTIKUEUE))));
}

/* One condition {type, status, reason, message} appended to a. */
static void cond_add(json_t *a, const char *type, bool on, const char *reason, const char *msg)
{
	json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s}", "type", type, "status",
					   on ? "True" : "False", "reason", reason, "message",
					   msg ? msg : ""));
}

/* j's status as the hub shows it, without times (the caller adds them):
 * the condition Dispatched (True on a cluster, else False with why it
 * waits), and for a Job managed by the dispatcher (spec.managedBy) its
 * copy's pod counts and Complete or Failed.  Owned. */
static json_t *status_of(const mu__dd_t *d, const mu__djob_t *j)
{
	if (j->kind != MU__DK_JOB) { /* its copy's status, when the hub's is ours */
		if (!mu__dhub_managed(j))
			return NULL;
		bool on = j->state == MU__DJ_DISPATCHED || j->state == MU__DJ_DONE;
		json_t *st = j->wstatus && on ? json_deep_copy(j->wstatus) : json_object();
		mu__dreclaim_kind_cond(j, st, on, NULL); /* dutil.c: where its schema allows */
		return st;
	}
	json_t *cs = json_array(), *st = json_pack("{s:o}", "conditions", cs);
	bool on = j->state == MU__DJ_DISPATCHED || j->state == MU__DJ_DONE;
	char m[700];
	if (on && j->cl >= 0)
		snprintf(m, sizeof m, "on cluster %s (generation %u)", d->cls[j->cl].name, j->gen);
	else if (j->state == MU__DJ_WITHDRAWING)
		snprintf(m, sizeof m, "its copy is being withdrawn");
	else
		snprintf(m, sizeof m, "%.690s", j->msg ? j->msg : "queued on the hub");
	const char *why = on ? "Dispatched" : j->state == MU__DJ_WITHDRAWING ? "Withdrawing" :
		j->state == MU__DJ_NEW ? (j->reason ? j->reason : "Invalid") :
		j->reason ? j->reason : "Queued";
	if (on && j->failed_create && j->state == MU__DJ_DISPATCHED && !j->started) { /* failcreate.c */
		why = "FailedCreate";
		snprintf(m, sizeof m, "%.690s", j->failed_create);
	}
	if (mu__dhub_refused(j)) { /* a permanent refusal by the worker */
		on = false;
		why = "NotAdmitted";
		snprintf(m, sizeof m, "%.690s", j->msg ? j->msg : "refused by the worker");
	}
	cond_add(cs, "Dispatched", on, why, m);
	mu__dreclaim_cond(j, cs, on); /* dutil.c, set by reclaim.c */
	if (!mu__dhub_managed(j))
		return st;
	if (mu__dhub_refused(j)) {
		cond_add(cs, "FailureTarget", true, "NotAdmitted", m);
		cond_add(cs, "Failed", true, "NotAdmitted", m);
	}
	int b = 0, r = 0, ok = 0, bad = 0;
	if (on && sscanf(j->pods, "bound=%d,running=%d,succeeded=%d,failed=%d", &b, &r, &ok, &bad) != 4)
		b = r = ok = bad = 0;
	json_object_set_new(st, "active", json_integer(b - ok - bad > 0 ? b - ok - bad : 0));
	json_object_set_new(st, "ready", json_integer(r));
	json_object_set_new(st, "succeeded", json_integer(ok));
	json_object_set_new(st, "failed", json_integer(bad));
	if (on && !strcmp(j->phase, "Succeeded")) {
		cond_add(cs, "SuccessCriteriaMet", true, "CompletionsReached", "its copy completed");
		cond_add(cs, "Complete", true, "CompletionsReached", "its copy completed");
	} else if (on && !strcmp(j->phase, "Failed")) {
		cond_add(cs, "FailureTarget", true, "CopyFailed", "its copy failed on the worker");
		cond_add(cs, "Failed", true, "CopyFailed", "its copy failed on the worker");
	}
	return st;
}

/* What the hub object already shows: j's annotations and status are not
 * written again when they say what this daemon would write (a restarted
 * or new leader does not rewrite every job).  O(annotations +
 * conditions). */
static void seed_sigs(const mu__dd_t *d, mu__djob_t *j)
{
	char *sig = NULL;
	json_t *want = ann_of(d, j, &sig), *have = json_object();
	const char *k;
	json_t *v;
	json_object_foreach(want, k, v) {
		const char *cur = !strcmp(k, "l") ? mu__dmeta(j->obj, "labels", MU__D_CLUSTER) :
			mu__dmeta(j->obj, "annotations", k);
		json_object_set_new(have, k, cur ? json_string(cur) : json_null());
	}
	if (sig && json_equal(want, have)) {
		free(j->ann_sig);
		j->ann_sig = sig;
		sig = NULL;
	}
	free(sig);
	json_decref(want);
	json_decref(have);
	if (j->kind != MU__DK_JOB) { /* another kind's status: written once */
		want = mu__dhub_managed(j) ? status_of(d, j) : NULL;
		if (want &&
		    json_equal(want, json_object_get(j->obj, "status") ?
			       json_object_get(j->obj, "status") : json_null())) {
			free(j->status_sig);
			j->status_sig = json_dumps(want, JSON_COMPACT);
		}
		json_decref(want);
		return;
	}
	want = status_of(d, j);
	have = json_deep_copy(want);
	json_object_foreach(want, k, v) {
		if (strcmp(k, "conditions")) {
			json_t *cur = mu__jget(j->obj, "status");
			json_object_set(have, k, json_object_get(cur, k) ? json_object_get(cur, k) : json_null());
		}
	}
	size_t i, n;
	json_t *c, *o;
	json_array_foreach(json_object_get(have, "conditions"), i, c) {
		bool found = false;
		json_array_foreach(mu__jget(j->obj, "status.conditions"), n, o) {
			if (!json_equal(json_object_get(o, "type"), json_object_get(c, "type")))
				continue;
			found = true;
			static const char *const f[] = {"status", "reason", "message"};
			for (int x = 0; x < 3; x++)
				json_object_set(c, f[x], json_object_get(o, f[x]) ? json_object_get(o, f[x]) :
						json_null());
		}
		if (!found)
			json_object_set_new(c, "status", json_null());
	}
	if (json_equal(want, have)) {
		free(j->status_sig);
		j->status_sig = json_dumps(want, JSON_COMPACT);
	}
	json_decref(want);
	json_decref(have);
}

/* The times of status st of j (status_of's, not in its signature):
 * the conditions' probe and transition times, and for a Job the
 * dispatcher manages its start and completion, now. */
static void status_times(const mu__djob_t *j, json_t *st)
{
	char now[40];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	mu__rfc3339_format((int64_t)ts.tv_sec * 1000000, false, now, sizeof now);
	size_t i;
	json_t *c;
	json_array_foreach(j->kind == MU__DK_JOB ? json_object_get(st, "conditions") : NULL, i, c) {
		json_object_set_new(c, "lastProbeTime", json_string(now));
		json_object_set_new(c, "lastTransitionTime", json_string(now));
	}
	if (j->kind != MU__DK_JOB) /* another kind's Preempted: metav1.Condition's time */
		mu__dreclaim_kind_cond(j, st, j->state == MU__DJ_DISPATCHED || j->state == MU__DJ_DONE,
				       now);
	if (j->kind == MU__DK_JOB && mu__dhub_managed(j) && (j->state == MU__DJ_DISPATCHED || j->state == MU__DJ_DONE) &&
	    !mu__dhub_refused(j)) {
		if (!mu__jget(j->obj, "status.startTime"))
			json_object_set_new(st, "startTime", json_string(now));
		if (!strcmp(j->phase, "Succeeded") && !mu__jget(j->obj, "status.completionTime"))
			json_object_set_new(st, "completionTime", json_string(now));
	}
}

char *mu__dhub_status_text(const mu__dd_t *d, const mu__djob_t *j)
{
	json_t *st = status_of(d, j);
	char *sig = st ? json_dumps(st, JSON_COMPACT) : NULL;
	json_decref(st);
	return sig;
}

/* mu__dhub_status_due with memo_key's text key[0..n) given (n 0: none,
 * no memo). */
static bool status_due_k(const mu__dd_t *d, mu__djob_t *j, const char *key, size_t n)
{
	if (memo_hit(j->status_memo, key, n, j->status_sig))
		return false;
	char *sig = mu__dhub_status_text(d, j);
	if (!sig)
		return false; /* no status of ours (or no memory: the next pass) */
	bool due = !j->status_sig || strcmp(sig, j->status_sig);
	if (!due)
		memo_set(&j->status_memo, key, n, sig);
	free(sig);
	return due;
}

bool mu__dhub_status_due(const mu__dd_t *d, mu__djob_t *j)
{
	/* a Job's status only: another kind's is its copy's (j->wstatus) */
	char key[8192];
	size_t n = j->kind == MU__DK_JOB ? memo_key(d, j, key, sizeof key) : 0;
	return status_due_k(d, j, key, n);
}

/* Round 21: the write-back's one test per job (run.c write_back) built
 * memo_key's text up to three times (in mu__dhub_annotate_due,
 * mu__dhub_status_due and mu__dhub_pod_events_only's own status test);
 * here once, for both memos.  The same answer as
 * (annotate_due || status_due) && (d->full || !pod_events_only), each
 * test made in the same order (so the same memos are set).
 * O(the memo inputs' length) when both memos hold. */
bool mu__dhub_write_due(const mu__dd_t *d, mu__djob_t *j)
{
	char key[8192];
	size_t n = memo_key(d, j, key, sizeof key);
	size_t sn = j->kind == MU__DK_JOB ? n : 0;
	if (!ann_due_k(d, j, key, n))
		return status_due_k(d, j, key, sn);
	return d->full || !j->ann_sig || status_due_k(d, j, key, sn) || !pod_only(d, j);
}

long mu__dhub_status_on(mu__dd_t *d, mu_kube_client_t *hub, mu__djob_t *j)
{
	json_t *st = status_of(d, j);
	if (!st)
		return 200;
	char *sig = json_dumps(st, JSON_COMPACT);
	if (!sig || (j->status_sig && !strcmp(sig, j->status_sig))) {
		free(sig);
		json_decref(st);
		return sig ? 200 : 0;
	}
	status_times(j, st);
	json_t *b = json_pack("{s:o}", "status", st);
	char path[1024];
	mu__dkind_path(j->kind, j->ns, j->name, mu__dkind_status_sub(j->kind) ? "/status" : "", path,
		       sizeof path);
	/* strategic merge: conditions merge by type, so the hub Job
	 * controller's own (Suspended) stay; a custom kind has none (its
	 * status is its copy's, as MultiKueue copies it) */
	long code = mu__dreq(d, hub, "PATCH", path, j->kind == MU__DK_JOB ?
			     "application/strategic-merge-patch+json" : "application/merge-patch+json",
			     b, NULL);
	json_decref(b);
	if (code == 200) {
		free(j->status_sig);
		j->status_sig = sig;
	} else {
		free(sig);
		mu__dlog(d, 0, "job %s: status: HTTP %ld", j->key, code);
	}
	return code;
}

void mu__dhub_event(mu__dd_t *d, mu__djob_t *j, const char *type, const char *reason,
		    const char *msg)
{
	mu__dhub_event_on(d, d->hub, j, type, reason, msg);
}

void mu__dhub_event_on(mu__dd_t *d, mu_kube_client_t *hub, mu__djob_t *j, const char *type,
		       const char *reason, const char *msg)
{
	event_post(d, hub, mu__dkind_api(j->kind), mu__dkind_kind(j->kind), j->ns, j->name, j->uid,
		   ((uint64_t)(uintptr_t)j << 20) ^ j->gen, type, reason, msg);
}

void mu__dhub_pod_event(mu__dd_t *d, const json_t *pod, const char *type, const char *reason,
			const char *msg)
{
	const char *name = mu__jstr(pod, "metadata.name");
	if (name)
		event_post(d, d->hub, "v1", "Pod", mu__jstr(pod, "metadata.namespace"), name,
			   mu__jstr(pod, "metadata.uid"), (uint64_t)(uintptr_t)pod, type, reason, msg);
}

void mu__dhub_cluster_status(mu__dd_t *d)
{
	int64_t t = mu__d_mono_ms();
	if (t - d->last_status < 1000)
		return;
	d->last_status = t;
	int32_t *closest = calloc((size_t)d->ncls + 1, sizeof *closest);
	for (int32_t i = 0; closest && i < d->njobs; i++) {
		mu_fleet_job_info_t fi;
		if (d->jobs[i]->state == MU__DJ_QUEUED &&
		    !mu_fleet_job_info(d->fleet, d->jobs[i]->fid, &fi) && fi.closest >= 0) {
			int32_t c = mu__dhub_cluster_by_fid(d, fi.closest);
			if (c >= 0)
				closest[c]++;
		}
	}
	for (int32_t i = 0; i < d->ncls; i++) {
		mu__dcl_t *c = &d->cls[i];
		if (!c->seen)
			continue;
		mu_res_t alloc, used;
		mu_engine_totals(mu_fleet_cluster_engine(d->fleet, c->fid), &alloc, &used);
		const char *state = c->draining ? "Draining" : c->reachable && (c->kc || c->pull) ? "Ready" :
			"Unreachable";
		json_t *s = json_pack("{s:s,s:I,s:I,s:i,s:i,s:s}", "state", state, "gpus",
				      (json_int_t)c->gpus, "freeGPUs",
				      (json_int_t)((alloc.v[MU_RES_GPU] - used.v[MU_RES_GPU]) / 1000),
				      "running", (int)c->running, "queued", closest ? (int)closest[i] : 0,
				      "message", c->err ? c->err : c->pull && !c->reachable ?
				      "no heartbeat from its agent (muster dispatch agent)" : "");
		char *sig = json_dumps(s, JSON_COMPACT | JSON_SORT_KEYS);
		if (sig && (!c->status_sig || strcmp(sig, c->status_sig))) {
			char path[600];
			snprintf(path, sizeof path, "/apis/muster.io/v1alpha1/clusters/%s/status", c->name);
			json_t *b = json_pack("{s:O}", "status", s);
			long st = mu__dreq(d, d->hub, "PATCH", path, "application/merge-patch+json", b, NULL);
			json_decref(b);
			if (st == 200) {
				free(c->status_sig);
				c->status_sig = sig;
				sig = NULL;
			}
		}
		free(sig);
		json_decref(s);
	}
	free(closest);
}

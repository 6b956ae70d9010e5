/*
 * write.c - the daemon's write path: the two request lists and the worker
 * threads that run them, and the writers every part of the daemon uses
 * (a Binding with the devices as annotations, an Event, a pod's
 * PodScheduled=False condition).
 *
 * Binds, evictions and notes (records that must not be lost: the places
 * held for moved pods) go to a high-priority list that is never dropped;
 * notes run one at a time, in the order queued, and a request may carry
 * a follow-up (`then`: a moved pod's eviction after its note) that the
 * same worker sends only once the first succeeded;
 * status and events to a bounded low-priority list that drops when full
 * (they are rewritten on the next change); at most EV_CAP of its entries
 * are Events, the rest dropped and counted, as client-go's event
 * broadcaster queues at most 1,000 (tools/record/event.go,
 * maxQueuedEvents, watch.DropIfChannelFull): while the binds of a
 * backlog went first, the list held 7.6 MB of writes at 11,600 pods, half
 * of them FailedScheduling Events (docs/evaluation.md, "Seventh round").  Workers (their own kept-alive
 * connections) run the requests; bind and eviction outcomes go back to
 * the main loop through d->results (apply.c reads them).  Stopping drains
 * the high-priority list first.  This file calls no other part of the
 * daemon: decisions (apply.c), Jobs (jobs.c), the view (state.c) and
 * status (metrics.c) all write through it.
 *
 * A Binding and an Event, one of each per bind, are printed as JSON text
 * directly (mu__kjt_t, util.c), the bytes json_dumps would print for the trees
 * json_pack built before, and an Event the list would drop is not built
 * at all: building them was a sixth of the scheduler's instructions per
 * bind in a backlog's drain (docs/evaluation.md, "The scheduler's side
 * of a bind, round 9").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/daemon_int.h"

#define LO_CAP 20000   /* queued status and event writes */
#define EV_CAP 1000    /* ... of which Events (client-go's maxQueuedEvents) */
#define EVICT_TRIES 8  /* tries of an eviction answered 429 */

void mu__kwork_free(mu__kwork_t *w)
{
	if (!w)
		return;
	free(w->method);
	free(w->path);
	free(w->ctype);
	free(w->body);
	free(w->pod_key);
	free(w->node);
	free(w->answer);
	mu__kwork_free(w->then);
	free(w);
}

static char *dup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

mu__kwork_t *mu__kwork_new(mu__kwkind_t kind, const char *method, const char *path,
			   const char *ctype, json_t *body, const char *pod_key, const char *node)
{
	mu__kwork_t *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->kind = kind;
	w->method = dup0(method);
	w->path = dup0(path);
	w->ctype = dup0(ctype);
	w->body = body ? json_dumps(body, JSON_COMPACT) : NULL;
	w->pod_key = dup0(pod_key);
	w->node = dup0(node);
	return w;
}

/* --- request bodies as text ----------------------------------------------- */

char *mu__kd_binding_text(const char *ns, const char *name, const char *uid, const json_t *an,
			  const char *node)
{
	mu__kjt_t b = {0};
	mu__kjt_raw(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":");
	mu__kjt_str(&b, name);
	mu__kjt_raw(&b, ",\"namespace\":");
	mu__kjt_str(&b, ns);
	mu__kjt_raw(&b, ",\"uid\":");
	mu__kjt_str(&b, uid);
	mu__kjt_raw(&b, ",\"annotations\":{");
	const char *k;
	json_t *v;
	bool first = true;
	json_object_foreach((json_t *)an, k, v) {
		if (!first)
			mu__kjt_put(&b, ",", 1);
		first = false;
		mu__kjt_str(&b, k);
		mu__kjt_put(&b, ":", 1);
		mu__kjt_str(&b, json_string_value(v));
	}
	mu__kjt_raw(&b, "}},\"target\":{\"kind\":\"Node\",\"name\":");
	mu__kjt_str(&b, node);
	mu__kjt_raw(&b, "}}");
	return mu__kjt_done(&b);
}

char *mu__kd_event_text(const char *ename, const char *kind, const char *api, const char *ns,
			const char *name, const char *uid, const char *type, const char *reason,
			const char *msg, const char *ts, const char *component, const char *instance)
{
	mu__kjt_t b = {0};
	mu__kjt_raw(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":");
	mu__kjt_str(&b, ename);
	mu__kjt_raw(&b, ",\"namespace\":");
	mu__kjt_str(&b, ns);
	mu__kjt_raw(&b, "},\"involvedObject\":{\"kind\":");
	mu__kjt_str(&b, kind);
	mu__kjt_raw(&b, ",\"apiVersion\":");
	mu__kjt_str(&b, api);
	mu__kjt_raw(&b, ",\"namespace\":");
	mu__kjt_str(&b, ns);
	mu__kjt_raw(&b, ",\"name\":");
	mu__kjt_str(&b, name);
	mu__kjt_raw(&b, ",\"uid\":");
	mu__kjt_str(&b, uid);
	mu__kjt_raw(&b, "},\"reason\":");
	mu__kjt_str(&b, reason);
	mu__kjt_raw(&b, ",\"message\":");
	mu__kjt_str(&b, msg);
	mu__kjt_raw(&b, ",\"type\":");
	mu__kjt_str(&b, type);
	mu__kjt_raw(&b, ",\"source\":{\"component\":");
	mu__kjt_str(&b, component);
	mu__kjt_raw(&b, "},\"firstTimestamp\":");
	mu__kjt_str(&b, ts);
	mu__kjt_raw(&b, ",\"lastTimestamp\":");
	mu__kjt_str(&b, ts);
	mu__kjt_raw(&b, ",\"count\":1,\"reportingComponent\":");
	mu__kjt_str(&b, component);
	mu__kjt_raw(&b, ",\"reportingInstance\":");
	mu__kjt_str(&b, instance);
	mu__kjt_put(&b, "}", 1);
	return mu__kjt_done(&b);
}

/* A request whose body is text (owned, taken; NULL: none). */
static mu__kwork_t *work_text(mu__kwkind_t kind, const char *method, const char *path, char *body,
			      const char *pod_key, const char *node)
{
	mu__kwork_t *w = mu__kwork_new(kind, method, path, "application/json", NULL, pod_key, node);
	if (w)
		w->body = body;
	else
		free(body);
	return w;
}

void mu__kd_queue(mu__kd_t *d, mu__kwork_t *w)
{
	mu__kwq_t *q = &d->wq;
	if (!w)
		return;
	pthread_mutex_lock(&q->mu);
	if (q->closing || (w->kind == MU__KW_WRITE && q->nlo >= q->lo_cap) ||
	    (w->event && q->nev >= q->ev_cap)) {
		q->ev_dropped += w->event && !q->closing;
		pthread_mutex_unlock(&q->mu);
		mu__kwork_free(w);
		return;
	}
	if (w->kind == MU__KW_WRITE) {
		if (q->lo_tail)
			q->lo_tail->next = w;
		else
			q->lo_head = w;
		q->lo_tail = w;
		q->nlo++;
		q->nev += w->event;
	} else {
		if (q->hi_tail)
			q->hi_tail->next = w;
		else
			q->hi_head = w;
		q->hi_tail = w;
		q->nhi++;
	}
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

void mu__kd_write(mu__kd_t *d, mu__kwkind_t kind, const char *method, const char *path,
		  const char *ctype, json_t *body, const char *pod_key, const char *node)
{
	mu__kd_queue(d, mu__kwork_new(kind, method, path, ctype, body, pod_key, node));
}

/* Takes the next request (binds first; a note only while no other note
 * runs, the first one queued first); NULL when closing and empty.
 * O(high-priority list) while a note runs, else O(1). */
static mu__kwork_t *take(mu__kwq_t *q)
{
	pthread_mutex_lock(&q->mu);
	for (;;) {
		mu__kwork_t *w = NULL, *prev = NULL;
		for (w = q->hi_head; w && w->kind == MU__KW_NOTE && q->note_busy; w = w->next)
			prev = w;
		if (w) {
			if (prev)
				prev->next = w->next;
			else
				q->hi_head = w->next;
			if (q->hi_tail == w)
				q->hi_tail = prev;
			q->nhi--;
			q->note_busy |= w->kind == MU__KW_NOTE;
		} else if (q->lo_head && !q->closing) {
			w = q->lo_head;
			q->lo_head = w->next;
			if (!q->lo_head)
				q->lo_tail = NULL;
			q->nlo--;
			q->nev -= w->event;
		}
		if (w) {
			w->next = NULL;
			q->busy++;
			pthread_mutex_unlock(&q->mu);
			return w;
		}
		if (q->closing && !q->hi_head) {
			pthread_mutex_unlock(&q->mu);
			return NULL;
		}
		pthread_cond_wait(&q->cv, &q->mu);
	}
}

/* Runs one request, retrying an eviction refused with 429. */
static void run_one(mu__kd_t *d, mu__kc_t *c, mu__kwork_t *w)
{
	for (;;) {
		mu__kresp_t r;
		int64_t left = atomic_load(&d->lease_until) - mu__k_mono_ms();
		if (left <= 0) { /* not the leader any more: nothing goes out */
			w->status = 0;
			free(w->answer);
			w->answer = strdup("not sent: this replica's lease expired");
			return;
		}
		mu__kc_send(c, w->method, w->path, w->ctype, w->body, left < 30000 ? (long)left : 30000, &r);
		w->status = r.status;
		bool ok = r.status >= 200 && r.status < 300;
		if (!ok) {
			free(w->answer);
			w->answer = r.body;
			r.body = NULL;
		}
		mu__kresp_release(&r);
		if (w->kind != MU__KW_WRITE && w->status == 0 && !atomic_load(&d->stop)) {
			/* No answer: the write may or may not have landed.  Taking
			 * it back as failed could give its room away while it holds
			 * it; all three are idempotent on the server (a bound pod
			 * answers 409 naming its node, a gone one 404, a note is the
			 * whole annotation), so it goes again until the server
			 * answers, while this replica may act. */
			int k = w->tries < 4 ? w->tries : 4;
			w->tries++;
			struct timespec ts = {0, 62500000L << k};
			nanosleep(&ts, NULL);
			continue;
		}
		if (w->kind == MU__KW_EVICT && w->status == 429 && ++w->tries < EVICT_TRIES &&
		    !atomic_load(&d->stop)) {
			struct timespec ts = {0, 250000000L << (w->tries < 3 ? w->tries : 2)};
			nanosleep(&ts, NULL);
			continue;
		}
		if (!ok && (w->kind == MU__KW_WRITE || w->kind == MU__KW_NOTE) && w->status != 409 &&
		    w->status != 404)
			mu__klog(&d->log, 1, "%s %s: HTTP %ld %.200s | status=%ld", w->method, w->path,
				 w->status, w->answer ? w->answer : "", w->status);
		return;
	}
}

/* The fault point "move-stall" (mu_kube_opts_t.fault): w's follow-up is
 * not sent; the worker waits until the daemon stops.  For tests that
 * kill the scheduler between a place's record and its pod's eviction. */
static void stall(mu__kd_t *d, const mu__kwork_t *w)
{
	mu__klog(&d->log, 0, "fault move-stall: %s %s done; the write after it (%s %s) is not sent",
		 w->method, w->path, w->then->method, w->then->path);
	while (!atomic_load(&d->stop)) {
		struct timespec ts = {0, 100000000L};
		nanosleep(&ts, NULL);
	}
}

/* w's follow-up, taken from it: to be sent when w succeeded, else marked
 * failed (not sent) with w's status.  NULL when there is none, or after a
 * stall. */
static mu__kwork_t *follow_up(mu__kd_t *d, mu__kwork_t *w)
{
	mu__kwork_t *t = w->then;
	char why[400];
	if (!t)
		return NULL;
	if (w->status >= 200 && w->status < 300) {
		if (d->o->fault && !strcmp(d->o->fault, "move-stall")) {
			stall(d, w);
			return NULL; /* freed with w */
		}
		w->then = NULL;
		return t;
	}
	w->then = NULL;
	t->status = 424; /* Failed Dependency: neither a success nor a 404 */
	snprintf(why, sizeof why, "not sent: %s %s before it failed: HTTP %ld %.200s", w->method, w->path,
		 w->status, w->answer ? w->answer : "");
	free(t->answer);
	t->answer = strdup(why);
	t->tries = -1; /* not to be run */
	return t;
}

/* A writer thread: its own connection (kept alive), requests from the
 * queue until it closes, each with its follow-ups; bind and eviction
 * outcomes go back to the main loop (which frees them), the rest are
 * freed here. */
static void *worker(void *arg)
{
	mu__kd_t *d = arg;
	mu__kc_t *c = NULL;
	if (mu__kc_new(&d->auth, &c))
		return NULL;
	mu__kwq_t *q = &d->wq;
	for (mu__kwork_t *w; (w = take(q));) {
		bool note = w->kind == MU__KW_NOTE;
		while (w) {
			if (w->tries >= 0)
				run_one(d, c, w);
			mu__kwork_t *t = follow_up(d, w);
			pthread_mutex_lock(&q->mu);
			if (note) { /* the next note may go */
				q->note_busy = false;
				note = false;
				pthread_cond_broadcast(&q->cv);
			}
			if (w->kind == MU__KW_BIND || w->kind == MU__KW_EVICT) {
				w->next = q->done;
				q->done = w;
				w = NULL;
			}
			pthread_mutex_unlock(&q->mu);
			mu__kwork_free(w);
			w = t;
		}
		pthread_mutex_lock(&q->mu);
		q->busy--;
		pthread_mutex_unlock(&q->mu);
	}
	mu__kc_free(c);
	return NULL;
}

void mu__kwq_init(mu__kwq_t *q)
{
	memset(q, 0, sizeof *q);
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	q->lo_cap = LO_CAP;
	q->ev_cap = EV_CAP;
}

int mu__kwq_start(mu__kd_t *d)
{
	mu__kwq_init(&d->wq);
	d->nworkers = d->o->workers > 0 ? d->o->workers : 4;
	d->workers = calloc((size_t)d->nworkers, sizeof *d->workers);
	if (!d->workers)
		return MU_ENOMEM;
	for (int i = 0; i < d->nworkers; i++)
		if (pthread_create(&d->workers[i], NULL, worker, d)) {
			d->nworkers = i;
			return MU_ENOMEM;
		}
	return MU_OK;
}

/* Frees a list of requests that were never run. */
static void free_list(mu__kwork_t *w)
{
	while (w) {
		mu__kwork_t *n = w->next;
		mu__kwork_free(w);
		w = n;
	}
}

void mu__kwq_stop(mu__kd_t *d)
{
	mu__kwq_t *q = &d->wq;
	if (!q->lo_cap) /* never initialized */
		return;
	mu__kd_bind_flush(d, true); /* binds decided are written, as queued ones */
	free(d->bwait);
	d->bwait = NULL;
	d->bw_cap = d->bw_head = 0;
	pthread_mutex_lock(&q->mu);
	q->closing = true;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	for (int i = 0; d->workers && i < d->nworkers; i++)
		pthread_join(d->workers[i], NULL);
	free(d->workers);
	d->workers = NULL;
	free_list(q->hi_head);
	free_list(q->lo_head);
	free_list(q->done);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	memset(q, 0, sizeof *q);
}

void mu__kdev_keep(mu__kdev_t *k, const mu_decision_t *d)
{
	k->gpus = d->gpus;
	if (!mu_cpuset_count(&d->cpus)) {
		free(k->cpus);
		k->cpus = NULL;
	} else if (k->cpus || (k->cpus = malloc(sizeof *k->cpus))) {
		*k->cpus = d->cpus;
	}
	k->gpu_milli = d->gpu_milli;
	k->numa = d->numa;
	k->nic = d->nic;
}

void mu__kdev_give(const mu__kdev_t *k, mu_decision_t *d)
{
	memset(d, 0, sizeof *d);
	d->kind = MU_DEC_BIND;
	d->gpus = k->gpus;
	if (k->cpus)
		d->cpus = *k->cpus;
	d->gpu_milli = k->gpu_milli;
	d->numa = k->numa;
	d->nic = k->nic;
}

/* Renders and queues the Binding of p to node with the devices of dev. */
static void bind_send(mu__kd_t *d, const mu__kpod_t *p, const char *node, const mu_decision_t *dev)
{
	char path[1200];
	json_t *an = mu__kdev_annotations(dev);
	if (*d->lease_term)
		json_object_set_new(an, "muster.io/lease-term", json_string(d->lease_term));
	if (*d->hz_setting) /* muster-horizon: the settings that placed it */
		json_object_set_new(an, "muster.io/policy-setting", json_string(d->hz_setting));
	char *body = mu__kd_binding_text(p->ns, p->name, p->uid, an, node);
	json_decref(an);
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/binding", p->ns, p->name);
	mu__kd_queue(d, work_text(MU__KW_BIND, "POST", path, body, p->key, node));
}

/* Whether an Event may join the low-priority list now; if not, it counts
 * as dropped (as mu__kd_queue would count it), so that it is not built. */
static bool event_room(mu__kwq_t *q)
{
	pthread_mutex_lock(&q->mu);
	bool room = !q->closing && q->nlo < q->lo_cap && q->nev < q->ev_cap;
	q->ev_dropped += !room && !q->closing;
	pthread_mutex_unlock(&q->mu);
	return room;
}

/* Binds, evictions and notes queued and not yet taken by a writer. */
static size_t hi_queued(mu__kd_t *d)
{
	pthread_mutex_lock(&d->wq.mu);
	size_t n = d->wq.nhi;
	pthread_mutex_unlock(&d->wq.mu);
	return n;
}

/* Appends a copy of key to the ring d->bwait; false when out of memory. */
static bool bwait_push(mu__kd_t *d, const char *key)
{
	if (d->bw_n == d->bw_cap) {
		size_t cap = d->bw_cap ? d->bw_cap * 2 : 1024;
		char **nv = malloc(cap * sizeof *nv);
		if (!nv)
			return false;
		for (size_t i = 0; i < d->bw_n; i++)
			nv[i] = d->bwait[(d->bw_head + i) % d->bw_cap];
		free(d->bwait);
		d->bwait = nv;
		d->bw_cap = cap;
		d->bw_head = 0;
	}
	char *k = strdup(key);
	if (!k)
		return false;
	d->bwait[(d->bw_head + d->bw_n++) % d->bw_cap] = k;
	return true;
}

void mu__kd_bind(mu__kd_t *d, mu__kpod_t *p, const char *node, const mu_decision_t *dev)
{
	free(p->an_node);
	p->an_node = strdup(node);
	mu__kdev_keep(&p->dev, dev);
	if (p->bind_wait)
		return; /* its place in the ring sends the latest */
	if ((!d->bw_n && hi_queued(d) < MU__KD_BIND_WINDOW) || !p->an_node || !bwait_push(d, p->key)) {
		bind_send(d, p, node, dev);
		return;
	}
	p->bind_wait = true;
}

void mu__kd_bind_flush(mu__kd_t *d, bool all)
{
	size_t q = all || !d->bw_n ? 0 : hi_queued(d);
	while (d->bw_n && (all || q < MU__KD_BIND_WINDOW)) {
		char *k = d->bwait[d->bw_head];
		d->bw_head = (d->bw_head + 1) % d->bw_cap;
		d->bw_n--;
		mu__kpod_t *p = mu__kmap_get(&d->pods, k);
		free(k);
		if (!p || !p->bind_wait)
			continue; /* gone (a pod of the same name has its own place) */
		p->bind_wait = false;
		if (p->node || !p->an_node)
			continue; /* bound meanwhile, or its bind was taken back */
		mu_decision_t dev;
		mu__kdev_give(&p->dev, &dev);
		bind_send(d, p, p->an_node, &dev);
		q++;
	}
	if (!d->bw_n && d->bw_cap > 1024) { /* a backlog's ring: give it back */
		free(d->bwait);
		d->bwait = NULL;
		d->bw_cap = d->bw_head = 0;
	}
}

void mu__kd_event_write(mu__kd_t *d, const char *kind, const char *api, const char *ns,
			const char *name, const char *uid, const char *type, const char *reason,
			const char *msg)
{
	char ts[40], path[700], ename[400];
	if (!event_room(&d->wq))
		return;
	int64_t now = mu__k_now_ms();
	mu__rfc3339_format(now * 1000, false, ts, sizeof ts);
	snprintf(ename, sizeof ename, "%.250s.%llx%04x", name, (unsigned long long)now,
		 (unsigned)(d->evseq++ & 0xffff));
	char *ev = mu__kd_event_text(ename, kind, api, ns, name, uid, type, reason, msg, ts,
				     d->o->scheduler_name, d->o->id ? d->o->id : "muster");
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/events", ns);
	mu__kwork_t *w = work_text(MU__KW_WRITE, "POST", path, ev, NULL, NULL);
	if (w)
		w->event = true;
	mu__kd_queue(d, w);
}

void mu__kd_pod_pending(mu__kd_t *d, mu__kpod_t *p, const char *msg)
{
	char ts[40], path[1200];
	if (!p->ours || (p->msg && !strcmp(p->msg, msg)))
		return;
	free(p->msg);
	p->msg = strdup(msg);
	mu__rfc3339_format(mu__k_now_ms() * 1000, false, ts, sizeof ts);
	json_t *body = json_pack("{s:{s:[{s:s,s:s,s:s,s:s,s:s}]}}", "status", "conditions", "type",
				 "PodScheduled", "status", "False", "reason", "Unschedulable",
				 "message", msg, "lastTransitionTime", ts);
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/status", p->ns, p->name);
	mu__kd_write(d, MU__KW_WRITE, "PATCH", path, "application/strategic-merge-patch+json", body,
		     NULL, NULL);
	json_decref(body);
	mu__kd_event_write(d, "Pod", "v1", p->ns, p->name, p->uid, "Warning", "FailedScheduling", msg);
}

mu__kwork_t *mu__kd_evict_work(mu__kd_t *d, mu__kpod_t *p, const char *reason, const char *msg)
{
	if (p->evicting)
		return NULL;
	char path[1200];
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/eviction", p->ns, p->name);
	json_t *body = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "policy/v1", "kind", "Eviction",
				 "metadata", "name", p->name, "namespace", p->ns);
	if (*d->lease_term)
		json_object_set_new(json_object_get(body, "metadata"), "annotations",
				    json_pack("{s:s}", "muster.io/lease-term", d->lease_term));
	mu__kwork_t *w = mu__kwork_new(MU__KW_EVICT, "POST", path, "application/json", body, p->key, NULL);
	json_decref(body);
	if (!w)
		return NULL;
	mu__kd_event_write(d, "Pod", "v1", p->ns, p->name, p->uid, "Normal", reason, msg);
	p->evicting = true;
	pthread_mutex_lock(&d->m.mu);
	d->m.evictions++;
	pthread_mutex_unlock(&d->m.mu);
	return w;
}

void mu__kd_evict(mu__kd_t *d, mu__kpod_t *p, const char *reason, const char *msg)
{
	mu__kd_queue(d, mu__kd_evict_work(d, p, reason, msg));
}

/*
 * reflector.c - list, then watch, each resource the daemon needs, and
 * hand every change to the daemon through one bounded queue.
 *
 * One thread per resource, each with its own kept-alive connection:
 *   list (pages of `page` items, following `continue`) -> SYNC_BEGIN, one
 *   SYNC_ITEM per object, SYNC_END (the consumer drops what it did not see);
 *   watch from the list's resourceVersion with bookmarks; ADDED, MODIFIED,
 *   DELETED go to the queue, BOOKMARK only moves the resourceVersion;
 *   an ERROR with 410 (Expired/Gone), or a watch answered 410, re-lists;
 *   other failures back off exponentially (0.2 s doubling to 30 s, with
 *   jitter) and re-list; a full re-list also happens every resync_s.
 * A resource the server does not serve (404, e.g. a CRD that is not
 * installed) or may not be read (403) is retried every 30-60 s and counts
 * as synced (empty), so the daemon can start.  Threads stop within about a
 * second of *stop.  Memory: the queue's bound, plus one page or event.
 * Text is cut (mfstrip.c) and parsed in one pass (util/jparse.c) before
 * it is queued: the parse is most of a watch event's cost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>

#include "kube/kube_int.h"
#include "muster/jpath.h"

static const char *const paths[MU__KR_COUNT] = {
	[MU__KR_NODES] = "/api/v1/nodes",
	[MU__KR_NRTS] = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies",
	[MU__KR_TOPOS] = "/apis/muster.io/v1alpha1/topologies",
	[MU__KR_QUEUES] = "/apis/muster.io/v1alpha1/queues",
	[MU__KR_MPGS] = "/apis/muster.io/v1alpha1/podgroups",
	[MU__KR_XPGS] = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
	[MU__KR_JOBS] = "/apis/batch/v1/jobs",
	[MU__KR_PODS] = "/api/v1/pods",
	[MU__KR_POOLS] = "/apis/muster.io/v1alpha1/nodepools",
	[MU__KR_PDBS] = "/apis/policy/v1/poddisruptionbudgets",
	[MU__KR_NSS] = "/api/v1/namespaces",
	[MU__KR_PCS] = "/apis/scheduling.k8s.io/v1/priorityclasses",
	[MU__KR_WL0] = "/apis/jobset.x-k8s.io/v1alpha2/jobsets",
	[MU__KR_WL0 + 1] = "/apis/leaderworkerset.x-k8s.io/v1/leaderworkersets",
	[MU__KR_WL0 + 2] = "/apis/kubeflow.org/v1/pytorchjobs",
	[MU__KR_WL0 + 3] = "/apis/kubeflow.org/v1/mpijobs",
	[MU__KR_WL0 + 4] = "/apis/ray.io/v1/rayclusters",
	[MU__KR_WL0 + 5] = "/apis/scheduling.volcano.sh/v1beta1/podgroups",
	[MU__KR_WL0 + 6] = "/apis/scheduling.run.ai/v2alpha2/podgroups",
	[MU__KR_WL0 + 7] = "/apis/ray.io/v1/rayjobs",
};

static const char *const names[MU__KR_COUNT] = {
	"nodes", "noderesourcetopologies", "topologies", "queues",
	"podgroups.muster.io", "podgroups.scheduling.x-k8s.io", "jobs", "pods",
	"nodepools",
	"poddisruptionbudgets", "namespaces", "priorityclasses", "jobsets", "leaderworkersets", "pytorchjobs",
	"mpijobs",
	"rayclusters", "podgroups.scheduling.volcano.sh", "podgroups.scheduling.run.ai", "rayjobs",
};

const char *mu__kres_path(mu__kres_t r) { return paths[r]; }
const char *mu__kres_name(mu__kres_t r) { return names[r]; }

/* --- the bounded queue ------------------------------------------------------- */

int mu__kq_init(mu__kq_t *q, size_t cap)
{
	memset(q, 0, sizeof *q);
	q->v = calloc(cap, sizeof *q->v);
	if (!q->v)
		return MU_ENOMEM;
	q->cap = cap;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->nonempty, NULL);
	pthread_cond_init(&q->nonfull, NULL);
	return MU_OK;
}

void mu__kq_release(mu__kq_t *q)
{
	if (!q->v)
		return;
	for (size_t i = 0; i < q->n; i++)
		json_decref(q->v[(q->head + i) % q->cap].obj);
	free(q->v);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->nonempty);
	pthread_cond_destroy(&q->nonfull);
	memset(q, 0, sizeof *q);
}

/* Absolute CLOCK_REALTIME time ms from now, for condition waits. */
static struct timespec deadline(int ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

bool mu__kq_push(mu__kq_t *q, mu__kev_t ev, atomic_int *stop)
{
	pthread_mutex_lock(&q->mu);
	while (q->n == q->cap && !(stop && atomic_load(stop))) {
		struct timespec ts = deadline(200);
		pthread_cond_timedwait(&q->nonfull, &q->mu, &ts);
	}
	if (q->n == q->cap) {
		pthread_mutex_unlock(&q->mu);
		json_decref(ev.obj);
		return false;
	}
	q->v[(q->head + q->n++) % q->cap] = ev;
	pthread_cond_signal(&q->nonempty);
	pthread_mutex_unlock(&q->mu);
	return true;
}

size_t mu__kq_pop(mu__kq_t *q, mu__kev_t *out, size_t max, int wait_ms)
{
	pthread_mutex_lock(&q->mu);
	if (!q->n && wait_ms > 0) {
		struct timespec ts = deadline(wait_ms);
		pthread_cond_timedwait(&q->nonempty, &q->mu, &ts);
	}
	size_t k = 0;
	while (k < max && q->n) {
		out[k++] = q->v[q->head];
		q->head = (q->head + 1) % q->cap;
		q->n--;
	}
	if (k)
		pthread_cond_broadcast(&q->nonfull);
	pthread_mutex_unlock(&q->mu);
	return k;
}

/* --- one resource's thread ---------------------------------------------------- */

typedef struct rthread {
	struct mu__krefl *r;
	mu__kres_t res;
	mu__kc_t *c;
	char rv[64];          /* where the watch resumes; "" = re-list */
	uint64_t rng;
	int64_t listed_ms;
	bool relist;
	pthread_t th;
	bool started;
} rthread_t;

struct mu__krefl {
	mu__krefl_opts_t o;
	mu__knap_t nap; /* the threads' backoff, woken by mu__krefl_stop */
	rthread_t t[MU__KR_COUNT];
};

/* Sleeps ms, returning early on stop (nap.c: woken by mu__krefl_stop,
 * not by polling the flag every 100 ms). */
static void nap(rthread_t *t, int ms)
{
	mu__knap(&t->r->nap, ms, t->r->o.stop);
}

/* Exponential backoff with jitter: base * 2^attempt, capped, +-25%. */
static int backoff_ms(rthread_t *t, int attempt, int base, int cap)
{
	int64_t ms = base;
	for (int i = 0; i < attempt && ms < cap; i++)
		ms *= 2;
	if (ms > cap)
		ms = cap;
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return (int)(ms * 3 / 4 + (int64_t)(t->rng % (uint64_t)(ms / 2 + 1)));
}

static bool push(rthread_t *t, mu__kevt_t type, json_t *obj)
{
	mu__kev_t ev = {t->res, type, obj};
	return mu__kq_push(t->r->o.q, ev, t->r->o.stop);
}

static void mark_synced(rthread_t *t)
{
	if (t->r->o.synced_mask)
		atomic_fetch_or(t->r->o.synced_mask, 1LL << t->res);
}

/* What mfstrip.c cuts out of t's text before it is parsed: managedFields
 * of every resource, and of pods the status lists nothing in the daemon
 * reads (it reads a pod's phase, startTime and resourceClaimStatuses). */
static unsigned cuts(const rthread_t *t)
{
	return MU__KSTRIP_MF | (t->res == MU__KR_PODS ? MU__KSTRIP_POD_STATUS : 0u);
}

/* Lists every object page by page.  Returns the HTTP status of the failing
 * page (or 0 on a transport error), 200 on success. */
static long do_list(rthread_t *t)
{
	char path[4096], cont[2048] = "";
	long status = 0;
	bool begun = false;
	for (int pages = 0; pages < 1000000 && !atomic_load(t->r->o.stop); pages++) {
		char *esc = *cont ? curl_easy_escape(NULL, cont, 0) : NULL;
		snprintf(path, sizeof path, "%s?limit=%d%s%s", paths[t->res],
			 t->r->o.page, esc ? "&continue=" : "", esc ? esc : "");
		curl_free(esc);
		json_t *list = NULL;
		mu__kresp_t r;
		mu__kc_do(t->c, "GET", path, NULL, NULL, 120000, &r);
		status = r.status;
		if (r.body && r.len) /* managedFields not parsed (mfstrip.c) */
			list = mu__json_loadb(r.body, mu__kstrip(r.body, r.len, cuts(t)));
		mu__kresp_release(&r);
		const json_t *items = json_object_get(list, "items");
		if (status != 200 || !json_is_array(items)) {
			json_decref(list);
			return status == 200 ? 0 : status;
		}
		if (!begun && !push(t, MU__KE_SYNC_BEGIN, NULL)) {
			json_decref(list);
			return 0;
		}
		begun = true;
		size_t i;
		json_t *it;
		json_array_foreach(items, i, it)
			if (!push(t, MU__KE_SYNC_ITEM, json_incref(it))) {
				json_decref(list);
				return 0;
			}
		const char *rv = mu__kjs(list, "metadata.resourceVersion");
		const char *c = mu__kjs(list, "metadata.continue");
		snprintf(t->rv, sizeof t->rv, "%s", rv ? rv : "");
		snprintf(cont, sizeof cont, "%s", c ? c : "");
		json_decref(list);
		if (!*cont)
			break;
	}
	if (!begun || !push(t, MU__KE_SYNC_END, NULL))
		return 0;
	t->listed_ms = mu__k_mono_ms();
	mark_synced(t);
	return 200;
}

/* One line of a watch: an event to queue, a bookmark, or an error. */
static int on_line(void *arg, char *line, size_t len)
{
	rthread_t *t = arg;
	/* nothing reads managedFields: not parsed (mfstrip.c) */
	json_t *ev = mu__json_loadb(line, mu__kstrip(line, len, cuts(t)));
	const char *type = mu__kjs(ev, "type");
	json_t *obj = json_object_get(ev, "object");
	int stop = 0;
	if (!type || !json_is_object(obj)) {
		mu__klog(t->r->o.log, 1, "watch %s: a line that is not an event", names[t->res]);
	} else if (!strcmp(type, "ERROR")) {
		long code = (long)mu__kji(obj, "code", 0);
		mu__klog(t->r->o.log, code == 410 ? 2 : 1, "watch %s: error %ld, re-listing | resource=%s code=%ld",
			 names[t->res], code, names[t->res], code);
		t->relist = true;
		stop = 1;
	} else {
		const char *rv = mu__kjs(obj, "metadata.resourceVersion");
		if (rv)
			snprintf(t->rv, sizeof t->rv, "%s", rv);
		mu__kevt_t et = !strcmp(type, "ADDED") ? MU__KE_ADDED :
				!strcmp(type, "MODIFIED") ? MU__KE_MODIFIED :
				!strcmp(type, "DELETED") ? MU__KE_DELETED : MU__KE_SYNC_BEGIN;
		if (et != MU__KE_SYNC_BEGIN && !push(t, et, json_incref(obj)))
			stop = 1;
	}
	json_decref(ev);
	return stop;
}

/* Watches from t->rv until the server ends it; the HTTP status. */
static long do_watch(rthread_t *t)
{
	char path[4096];
	long status = 0;
	snprintf(path, sizeof path, "%s?watch=true&allowWatchBookmarks=true&resourceVersion=%s"
		 "&timeoutSeconds=300", paths[t->res], t->rv);
	int rc = mu__kc_stream(t->c, path, 330000, on_line, t, t->r->o.stop, &status);
	return rc == MU_OK ? status : 0;
}

/* The thread: list, watch, re-list, with backoff; bounded by *stop. */
static void *run(void *arg)
{
	rthread_t *t = arg;
	const mu__krefl_opts_t *o = &t->r->o;
	int fails = 0;
	t->relist = true;
	while (!atomic_load(o->stop)) {
		if (o->resync_s > 0 && mu__k_mono_ms() - t->listed_ms > o->resync_s * 1000LL)
			t->relist = true;
		long st = 200;
		if (t->relist) {
			st = do_list(t);
			if (st == 200)
				t->relist = false;
		}
		if (st == 200) {
			int64_t t0 = mu__k_mono_ms();
			st = do_watch(t);
			if (st == 410)
				t->relist = true;
			if (st == 200 && mu__k_mono_ms() - t0 > 1000) {
				fails = 0;
				continue;
			}
		}
		if (atomic_load(o->stop))
			break;
		if (st == 404 || st == 403) {
			mark_synced(t);
			mu__klog(o->log, 2, "%s: HTTP %ld, retrying later | resource=%s", names[t->res], st, names[t->res]);
			nap(t, backoff_ms(t, 8, 30000, 30000));
		} else if (st != 200) {
			mu__klog(o->log, 1, "%s: list or watch failed (HTTP %ld), backing off | resource=%s status=%ld",
				 names[t->res], st, names[t->res], st);
			t->relist = true;
			nap(t, backoff_ms(t, fails++, 200, 30000));
		} else {
			nap(t, backoff_ms(t, fails++, 50, 5000)); /* a watch that ended at once */
		}
	}
	return NULL;
}

int mu__krefl_start(const mu__krefl_opts_t *o, mu__krefl_t **out)
{
	mu__krefl_t *r = calloc(1, sizeof *r);
	if (!r)
		return MU_ENOMEM;
	r->o = *o;
	if (r->o.page <= 0)
		r->o.page = 500;
	if (mu__knap_init(&r->nap) != MU_OK) {
		free(r);
		return MU_ENOMEM;
	}
	int rc = MU_OK;
	for (int i = 0; i < MU__KR_COUNT && rc == MU_OK; i++) {
		rthread_t *t = &r->t[i];
		t->r = r;
		t->res = (mu__kres_t)i;
		t->rng = (uint64_t)mu__k_now_ms() * 2654435761u + (uint64_t)i * 0x9e3779b97f4a7c15ULL + 1;
		if ((rc = mu__kc_new(o->auth, &t->c)) != MU_OK)
			break;
		if (pthread_create(&t->th, NULL, run, t)) {
			rc = MU_ENOMEM;
			break;
		}
		t->started = true;
	}
	if (rc != MU_OK) {
		atomic_store(o->stop, 1);
		mu__krefl_stop(r);
		return rc;
	}
	*out = r;
	return MU_OK;
}

void mu__krefl_stop(mu__krefl_t *r)
{
	if (!r)
		return;
	mu__knap_wake(&r->nap); /* the caller set the stop flag */
	for (int i = 0; i < MU__KR_COUNT; i++) {
		if (r->t[i].started)
			pthread_join(r->t[i].th, NULL);
		mu__kc_free(r->t[i].c);
	}
	mu__knap_destroy(&r->nap);
	free(r);
}

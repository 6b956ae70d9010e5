/*
 * web.c - the UI object: snapshots on the host's thread, events derived
 * from consecutive snapshots, the history ring, Server-Sent Events, and
 * the request entry point (assets, token check, then api.c).
 *
 * mu_web_tick() takes a snapshot when one is due: while a client asked
 * something in the last 30 s (or holds a stream), at most every
 * refresh_ms after mu_web_poke() said the view changed, and every idle_ms
 * anyway; with no client, only every hist_ms, which is also when a
 * history point is recorded.  Snapshots are spaced at least ten times
 * as far apart as the last one took, so the UI never takes more than a
 * tenth of the host's loop.
 * Events: a job that appears is Submitted; pending -> running Scheduled;
 * running -> pending Preempted; a new pending reason Waiting; a job that
 * disappears or finishes Finished.  The first snapshot makes no events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "web/web_int.h"

void mu_web_opts_defaults(mu_web_opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->refresh_ms = 1000;
	o->idle_ms = 10000;
	o->hist_ms = 60000;
	o->hist_points = 1440;
}

int mu_web_new(const mu_web_provider_t *p, const mu_web_opts_t *o, mu_web_t **out)
{
	*out = NULL;
	if (!p || !p->snapshot || !o || o->refresh_ms < 1 || o->hist_ms < 1 || o->hist_points < 2 ||
	    o->hist_points > 100000 || o->idle_ms < 1)
		return MU_EINVAL;
	mu_web_t *w = calloc(1, sizeof *w);
	if (!w)
		return MU_ENOMEM;
	w->hist = calloc((size_t)o->hist_points, sizeof *w->hist);
	if (!w->hist) {
		free(w);
		return MU_ENOMEM;
	}
	w->p = *p;
	w->o = *o;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	atomic_init(&w->last_req, 0);
	atomic_init(&w->poked, 1);
	*out = w;
	return MU_OK;
}

static void hist_release(mu__whist_t *h)
{
	free(h->qid);
	free(h->qused);
	h->qid = NULL;
	h->qused = NULL;
	h->nq = 0;
}

void mu_web_shutdown(mu_web_t *w)
{
	pthread_mutex_lock(&w->mu);
	w->closing = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void mu_web_free(mu_web_t *w)
{
	if (!w)
		return;
	mu_web_shutdown(w);
	mu__snap_unref(w->cur);
	for (size_t i = 0; i < MU__WEV_CAP; i++) {
		free(w->ev[i].job_key);
		free(w->ev[i].msg);
	}
	for (int i = 0; i < w->o.hist_points; i++)
		hist_release(&w->hist[i]);
	free(w->hist);
	for (int32_t i = 0; i < w->nqnames; i++)
		free(w->qnames[i]);
	free(w->qnames);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

void mu_web_poke(mu_web_t *w)
{
	atomic_store(&w->poked, 1);
}

int32_t mu__web_qname(mu_web_t *w, const char *name)
{
	for (int32_t i = 0; i < w->nqnames; i++)
		if (!strcmp(w->qnames[i], name))
			return i;
	if (w->nqnames >= 4096)
		return -1;
	if (w->nqnames == w->capqnames) {
		int32_t nc = w->capqnames ? w->capqnames * 2 : 32;
		char **nv = realloc(w->qnames, (size_t)nc * sizeof *nv);
		if (!nv)
			return -1;
		w->qnames = nv;
		w->capqnames = nc;
	}
	if (!(w->qnames[w->nqnames] = strdup(name)))
		return -1;
	return w->nqnames++;
}

/* Records one event (under w->mu); the oldest is dropped when full. */
static void event_add(mu_web_t *w, int64_t at, const char *kind, const char *key, const char *msg)
{
	mu__wevent_t *e = &w->ev[w->nev % MU__WEV_CAP];
	free(e->job_key);
	free(e->msg);
	e->at_ms = at;
	snprintf(e->kind, sizeof e->kind, "%s", kind);
	e->job_key = strdup(key);
	e->msg = msg ? strdup(msg) : NULL;
	w->nev++;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Events from prev -> cur (both sealed: jobs sorted by key).  O(jobs). */
static void diff(mu_web_t *w, const mu_web_snap_t *prev, const mu_web_snap_t *cur)
{
	size_t i = 0, k = 0;
	char msg[512];
	while (i < prev->nj || k < cur->nj) {
		int c = i == prev->nj ? 1 : k == cur->nj ? -1 : strcmp(prev->j[i].key, cur->j[k].key);
		if (c < 0) {
			if (prev->j[i].state != MU_WEB_FINISHED)
				event_add(w, cur->at_ms, "Finished", prev->j[i].key, "gone from the scheduler");
			i++;
			continue;
		}
		const mu_web_job_t *n = &cur->j[k];
		if (c > 0) {
			snprintf(msg, sizeof msg, "%d pods in queue %s", (int)n->pods, n->queue);
			event_add(w, cur->at_ms, "Submitted", n->key, msg);
			if (n->state == MU_WEB_RUNNING)
				event_add(w, cur->at_ms, "Scheduled", n->key, "running when first seen");
			else if (n->state == MU_WEB_PENDING && n->reason && *n->reason)
				event_add(w, cur->at_ms, "Waiting", n->key, n->reason);
			k++;
			continue;
		}
		const mu_web_job_t *o = &prev->j[i];
		if (o->state != MU_WEB_RUNNING && n->state == MU_WEB_RUNNING) {
			snprintf(msg, sizeof msg, "%d of %d pods bound", (int)n->bound, (int)n->pods);
			event_add(w, cur->at_ms, "Scheduled", n->key, msg);
		} else if (n->preemptions > o->preemptions ||
			   (o->state == MU_WEB_RUNNING && n->state == MU_WEB_PENDING)) {
			event_add(w, cur->at_ms, "Preempted", n->key,
				  n->reason && *n->reason ? n->reason : "evicted");
		} else if (n->state == MU_WEB_FINISHED && o->state != MU_WEB_FINISHED) {
			event_add(w, cur->at_ms, "Finished", n->key, NULL);
		}
		if (n->state == MU_WEB_PENDING && n->reason && *n->reason && !str_eq(o->reason, n->reason) &&
		    !(o->state == MU_WEB_RUNNING))
			event_add(w, cur->at_ms, "Waiting", n->key, n->reason);
		i++, k++;
	}
}

/* A history point from s (under w->mu). */
static void hist_add(mu_web_t *w, const mu_web_snap_t *s)
{
	mu__whist_t *h = &w->hist[w->nhist % (uint64_t)w->o.hist_points];
	hist_release(h);
	h->at_ms = s->at_ms;
	int64_t total = 0;
	for (int i = 0; i < 5; i++)
		total += s->gpu_state[i];
	h->gpu_total = (float)total;
	h->gpu_used = (float)s->gpu_state[MU_WEB_GPU_USED];
	h->gpu_frag = (float)s->gpu_state[MU_WEB_GPU_FRAG];
	h->gpu_reserved = (float)s->gpu_state[MU_WEB_GPU_RESERVED];
	h->qid = malloc((s->nq ? s->nq : 1) * sizeof *h->qid);
	h->qused = malloc((s->nq ? s->nq : 1) * sizeof *h->qused);
	if (h->qid && h->qused) {
		for (size_t i = 0; i < s->nq; i++) {
			int32_t id = mu__web_qname(w, s->q[i].name);
			if (id < 0)
				continue;
			h->qid[h->nq] = id;
			for (int r = 0; r < MU_WEB_NRES; r++)
				h->qused[h->nq][r] = (float)s->q[i].used[r];
			h->nq++;
		}
	}
	w->nhist++;
}

void mu_web_tick(mu_web_t *w, int64_t now_ms)
{
	bool active = now_ms - atomic_load(&w->last_req) < 30000;
	bool hist_due = !w->last_hist || now_ms - w->last_hist >= w->o.hist_ms;
	int64_t since = now_ms - w->last_snap;
	/* A big view costs the host's loop: keep snapshots to at most a
	 * tenth of its time. */
	int64_t gap = w->o.refresh_ms > 10 * w->snap_cost ? w->o.refresh_ms : 10 * w->snap_cost;
	bool due = !w->cur || hist_due ||
		   (active && since >= gap && (atomic_load(&w->poked) || since >= w->o.idle_ms));
	if (!due)
		return;
	atomic_store(&w->poked, 0);
	mu_web_snap_t *s = mu__snap_new();
	if (!s)
		return;
	s->at_ms = now_ms;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = w->p.snapshot(w->p.ctx, s);
	if (rc == MU_OK && w->p.fleet) {
		rc = w->p.fleet(w->p.ctx, s);
		s->has_fleet = true;
	}
	if (rc == MU_OK)
		mu__snap_seal(s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	w->snap_cost = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	w->last_snap = now_ms;
	if (rc != MU_OK) {
		mu__snap_unref(s);
		return;
	}
	pthread_mutex_lock(&w->mu);
	s->seq = ++w->seq;
	if (w->cur)
		diff(w, w->cur, s);
	if (hist_due) {
		hist_add(w, s);
		w->last_hist = now_ms;
	}
	mu_web_snap_t *old = w->cur;
	w->cur = s;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	mu__snap_unref(old);
}

bool mu_web_auth_ok(const char *token, const char *auth)
{
	if (!token || !*token)
		return true;
	if (!auth || strncmp(auth, "Bearer ", 7))
		return false;
	auth += 7;
	size_t n = strlen(token), m = strlen(auth);
	unsigned char diff = (unsigned char)(n != m);
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(token[i] ^ (i < m ? auth[i] : 0));
	return diff == 0;
}

void mu_web_resp_release(mu_web_resp_t *r)
{
	if (!r->is_static)
		free(r->body);
	r->body = NULL;
}

void mu_web_get(mu_web_t *w, const char *path, mu_web_arg_fn arg, void *ctx, const char *auth,
		mu_web_resp_t *r)
{
	memset(r, 0, sizeof *r);
	if (!strcmp(path, "/ui"))
		path = "/ui/";
	for (size_t i = 0; i < mu__web_nassets; i++)
		if (!strcmp(path, mu__web_assets[i].path)) {
			r->status = 200;
			r->ctype = mu__web_assets[i].ctype;
			r->body = (char *)mu__web_assets[i].data;
			r->len = mu__web_assets[i].len;
			r->is_static = true;
			return;
		}
	if (strncmp(path, "/ui/api/", 8)) {
		mu__api_error(r, 404, "no such page: %.200s", path);
		return;
	}
	if (!mu_web_auth_ok(w->o.token, auth)) {
		mu__api_error(r, 401, "this needs the scheduler's token: Authorization: Bearer TOKEN");
		return;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	atomic_store(&w->last_req, (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	if (!strcmp(path, "/ui/api/stream")) {
		r->status = 200;
		r->ctype = "text/event-stream";
		r->stream = true;
		return;
	}
	pthread_mutex_lock(&w->mu);
	mu_web_snap_t *s = w->cur;
	if (s)
		mu__snap_ref(s);
	pthread_mutex_unlock(&w->mu);
	mu__api_get(w, s, path + 8, arg, ctx, r);
	mu__snap_unref(s);
}

int mu_web_stream_next(mu_web_t *w, uint64_t *seq, int timeout_ms, char *buf, size_t len)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	atomic_store(&w->last_req, (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->mu);
	while (!w->closing && (!w->cur || w->cur->seq <= *seq))
		if (pthread_cond_timedwait(&w->cv, &w->mu, &ts))
			break;
	if (w->closing) {
		pthread_mutex_unlock(&w->mu);
		return -1;
	}
	int n;
	if (w->cur && w->cur->seq > *seq) {
		const mu_web_snap_t *s = w->cur;
		*seq = s->seq;
		n = snprintf(buf, len,
			     "event: tick\ndata: {\"seq\":%llu,\"at\":%lld,\"pending\":%d,\"running\":%d,"
			     "\"gpus\":[%lld,%lld,%lld,%lld,%lld],\"events\":%llu}\n\n",
			     (unsigned long long)s->seq, (long long)s->at_ms, (int)s->pending,
			     (int)s->running, (long long)s->gpu_state[0], (long long)s->gpu_state[1],
			     (long long)s->gpu_state[2], (long long)s->gpu_state[3],
			     (long long)s->gpu_state[4], (unsigned long long)w->nev);
	} else {
		n = snprintf(buf, len, ": ping\n\n");
	}
	pthread_mutex_unlock(&w->mu);
	return n < 0 ? -1 : (size_t)n >= len ? (int)len - 1 : n;
}

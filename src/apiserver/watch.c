/*
 * watch.c - watch streams: `?watch=true` on a collection.
 *
 * A watch is a chunked HTTP answer of newline-separated JSON events
 * ({"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":...}).  It
 * starts from a resourceVersion (replaying the store's ring after it; a
 * version older than the ring gets one ERROR event with a 410 Expired
 * Status) or, without one, with synthetic ADDED events for the current
 * objects.  Filters apply to the versions before and after each change, as
 * Kubernetes does: an object that stops matching is sent as DELETED, one
 * that starts matching as ADDED.  With allowWatchBookmarks a BOOKMARK with
 * the current version goes out after 10 s without events; with
 * sendInitialEvents the initial objects end with a bookmark annotated
 * k8s.io/initial-events-end.
 *
 * A watch belongs to the connection thread that reads it (mu__watch_read);
 * it waits on the store in slices of at most a second, so it notices a
 * server shutdown, its timeout and (plain HTTP) a closed client quickly.
 * Every watch counts against max_watchers until freed.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"

#define BOOKMARK_MS 10000
#define BATCH 64

struct mu__watch {
	mu_apiserver_t *s;
	int rt;
	const mu__rtype_t *t;
	char ns[64];
	mu__filter_t f;
	int64_t cursor;
	bool bookmarks, table, headers_sent, initial_end, done;
	int include_object;
	int64_t deadline, last_send;
	int64_t future_until;    /* a watch from a future version waits until then (ms), or 0 */
	mu__obj_t **init;        /* synthetic ADDED events still to send */
	size_t ninit, init_off;
	char *buf;
	size_t len, off, cap;
	int fd;                  /* the client socket for close checks, or -1 */
	mu__watch_conv_t convert; /* or NULL (events.c) */
	char av[300];             /* apiVersion the objects are sent in, or "" (crd_conv.c) */
	const mu__crdtype_t *hook; /* converts to av through its webhook, or NULL (crd_conv.c) */
};

void mu__watch_set_convert(mu__watch_t *w, mu__watch_conv_t fn)
{
	w->convert = fn;
}

void mu__watch_set_apiversion(mu__watch_t *w, const char *av)
{
	snprintf(w->av, sizeof w->av, "%s", av);
}

void mu__watch_set_webhook(mu__watch_t *w, const struct mu__crdtype *c, const char *av)
{
	snprintf(w->av, sizeof w->av, "%s", av);
	w->hook = c;
}

static int puts_(mu__watch_t *w, const char *s);

/* A conversion that failed ends the watch with a 500 ERROR event, the
 * message kube's converter gives. */
static int conv_error(mu__watch_t *w, const char *msg)
{
	json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion", "v1", "metadata",
			       "status", "Failure", "message", msg, "reason", "InternalError", "code", 500);
	json_t *ev = st ? json_pack("{s:s, s:o}", "type", "ERROR", "object", st) : NULL;
	char *text = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
	json_decref(ev);
	int rc = text ? puts_(w, text) | puts_(w, "\n") : MU_ENOMEM;
	free(text);
	w->done = true;
	return rc ? MU_ENOMEM : MU_OK;
}

/* Object o in apiVersion w->av (a custom resource of another version,
 * converted with strategy None); NULL when it is already. */
static char *with_apiversion(const mu__watch_t *w, const mu__obj_t *o, size_t *n)
{
	json_t *v = json_loadb(o->json, o->len, 0, NULL);
	const char *have = json_string_value(json_object_get(v, "apiVersion"));
	char *text = NULL;
	if (have && strcmp(have, w->av)) {
		json_object_set_new(v, "apiVersion", json_string(w->av));
		text = json_dumps(v, JSON_COMPACT);
		*n = text ? strlen(text) : 0;
	}
	json_decref(v);
	return text;
}

static int put(mu__watch_t *w, const char *s, size_t n)
{
	if (w->len + n + 1 > w->cap) {
		size_t nc = w->cap ? w->cap : 4096;
		while (nc < w->len + n + 1)
			nc *= 2;
		char *nb = realloc(w->buf, nc);
		if (!nb)
			return MU_ENOMEM;
		w->buf = nb;
		w->cap = nc;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	return MU_OK;
}

static int puts_(mu__watch_t *w, const char *s)
{
	return put(w, s, strlen(s));
}

/* Appends one event for object version o. */
static int emit(mu__watch_t *w, const char *type, mu__obj_t *o)
{
	if (w->done)
		return MU_OK;
	char *hooked = NULL, herr[3000] = "";
	size_t hn = 0;
	if (w->hook && !w->table) {
		hooked = mu__crd_conv_event(w->hook, o->json, o->len, w->av, &hn, herr, sizeof herr);
		if (!hooked && herr[0])
			return conv_error(w, herr);
	}
	char head[64];
	snprintf(head, sizeof head, "{\"type\":\"%s\",\"object\":", type);
	int rc = puts_(w, head);
	if (w->table) {
		json_t *tab = mu__table(o->type, &o, 1, w->include_object, !w->headers_sent);
		char *text = tab ? json_dumps(tab, JSON_COMPACT) : NULL;
		json_decref(tab);
		if (!text)
			return MU_ENOMEM;
		w->headers_sent = true;
		rc |= puts_(w, text);
		free(text);
	} else {
		size_t n = hn;
		char *c = hooked ? hooked : w->hook ? NULL : w->convert ? w->convert(o->json, o->len, &n)
			: w->av[0] ? with_apiversion(w, o, &n) : NULL;
		rc |= c ? put(w, c, n) : put(w, o->json, o->len);
		free(c);
	}
	rc |= puts_(w, "}\n");
	w->last_send = mu__mono_ms();
	return rc ? MU_ENOMEM : MU_OK;
}

static void bookmark(mu__watch_t *w, bool initial_end)
{
	const mu__rtype_t *t = w->t;
	char av[300], line[700];
	mu__rtype_apiversion(t, av, sizeof av);
	if (w->av[0])
		snprintf(av, sizeof av, "%s", w->av);
	snprintf(line, sizeof line,
		 "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":"
		 "{\"resourceVersion\":\"%lld\"%s}}}\n", t->kind, av, (long long)w->cursor,
		 initial_end ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}" : "");
	puts_(w, line);
	w->last_send = mu__mono_ms();
}

static void expired(mu__watch_t *w)
{
	char line[512];
	snprintf(line, sizeof line,
		 "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		 "\"status\":\"Failure\",\"message\":\"too old resource version: %lld (%lld)\","
		 "\"reason\":\"Expired\",\"code\":410}}\n",
		 (long long)w->cursor, (long long)mu__store_oldest(w->s->store));
	puts_(w, line);
	w->done = true;
}

/* A watch from a version the store has not reached after 3 s ends with the
 * error kube-apiserver's watch cache gives (waitUntilFreshAndBlock): 504
 * Timeout, "Too large resource version", retry after 1 s. */
static void too_large(mu__watch_t *w)
{
	char line[640];
	snprintf(line, sizeof line,
		 "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		 "\"status\":\"Failure\",\"message\":\"Timeout: Too large resource version: %lld, current: %lld\","
		 "\"reason\":\"Timeout\",\"details\":{\"causes\":[{\"reason\":\"ResourceVersionTooLarge\","
		 "\"message\":\"Too large resource version\"}],\"retryAfterSeconds\":1},\"code\":504}}\n",
		 (long long)w->cursor, (long long)mu__store_rv(w->s->store));
	puts_(w, line);
	w->done = true;
}

/* Turns a change into what this watch sees of it. */
static void deliver(mu__watch_t *w, const mu__wev_t *ev)
{
	if (ev->obj->rt != w->rt)
		return;
	bool now = mu__filter_match(&w->f, ev->obj);
	bool before = ev->prev && mu__filter_match(&w->f, ev->prev);
	if (ev->type == MU__EV_DELETED) {
		if (now)
			emit(w, "DELETED", ev->obj);
	} else if (now && before) {
		emit(w, "MODIFIED", ev->obj);
	} else if (now) {
		emit(w, "ADDED", ev->obj);
	} else if (before) {
		emit(w, "DELETED", ev->obj);
	}
}

/* True when the (plain TCP) client has closed its end. */
static bool client_gone(const mu__watch_t *w)
{
	if (w->fd < 0)
		return false;
	struct pollfd p = {w->fd, POLLIN, 0};
	if (poll(&p, 1, 0) <= 0)
		return false;
	if (p.revents & (POLLHUP | POLLERR))
		return true;
	char c;
	ssize_t n = recv(w->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Fills the buffer with the next events; sets done at the end. */
static void refill(mu__watch_t *w)
{
	w->len = w->off = 0;
	if (w->init_off < w->ninit) {
		size_t end = w->init_off + BATCH < w->ninit ? w->init_off + BATCH : w->ninit;
		for (; w->init_off < end; w->init_off++)
			emit(w, "ADDED", w->init[w->init_off]);
		return;
	}
	if (w->initial_end) {
		w->initial_end = false;
		bookmark(w, true);
		return;
	}
	while (w->len == 0 && !w->done) {
		int64_t now = mu__mono_ms();
		if (now >= w->deadline || atomic_load(&w->s->stopping) || client_gone(w)) {
			w->done = true;
			break;
		}
		int64_t slice = w->deadline - now < 1000 ? w->deadline - now : 1000;
		if (w->future_until) {
			if (mu__store_rv(w->s->store) >= w->cursor) {
				w->future_until = 0;
			} else if (now >= w->future_until) {
				too_large(w);
				break;
			} else if (w->future_until - now < slice) {
				slice = w->future_until - now;
			}
		}
		mu__wev_t evs[BATCH];
		int n = mu__store_wait_rt(w->s->store, w->rt, &w->cursor, evs, BATCH, (int)slice);
		if (n == MU_ERANGE) {
			expired(w);
		} else if (n < 0) {
			w->done = true;
		} else if (n == 0) {
			if (w->bookmarks && mu__mono_ms() - w->last_send >= BOOKMARK_MS)
				bookmark(w, false);
		} else {
			for (int i = 0; i < n; i++)
				deliver(w, &evs[i]);
			mu__wev_release(evs, n);
		}
	}
}

ssize_t mu__watch_read(mu__watch_t *w, char *buf, size_t max)
{
	if (w->off == w->len)
		refill(w);
	if (w->off == w->len)
		return 0;
	size_t n = w->len - w->off < max ? w->len - w->off : max;
	memcpy(buf, w->buf + w->off, n);
	w->off += n;
	return (ssize_t)n;
}

void mu__watch_set_conn(mu__watch_t *w, int fd)
{
	w->fd = fd;
}

void mu__watch_free(mu__watch_t *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->ninit; i++)
		mu__obj_unref(w->init[i]);
	free(w->init);
	mu__filter_release(&w->f);
	free(w->buf);
	atomic_fetch_sub(&w->s->watchers, 1);
	free(w);
}

/* Takes the current matching objects as synthetic ADDED events. */
static int initial_state(mu__watch_t *w)
{
	mu__page_t pg;
	int rc = mu__store_list(w->s->store, w->rt, w->ns, NULL, SIZE_MAX / 2, mu__filter_match, &w->f, &pg);
	if (rc != MU_OK)
		return rc;
	w->init = pg.objs;
	w->ninit = pg.n;
	w->cursor = pg.rv;
	pg.objs = NULL;
	pg.n = 0;
	mu__page_release(&pg);
	return MU_OK;
}

void mu__do_watch(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt)
{
	const mu__rtype_t *t = mu__type(s->types, rt);
	if (atomic_fetch_add(&s->watchers, 1) >= s->o.max_watchers) {
		atomic_fetch_sub(&s->watchers, 1);
		mu__resp_status(rs, 429, "TooManyRequests", "too many watches (at most %d)", s->o.max_watchers);
		return;
	}
	mu__watch_t *w = calloc(1, sizeof *w);
	if (!w) {
		atomic_fetch_sub(&s->watchers, 1);
		mu__resp_status(rs, 500, "InternalError", "out of memory");
		return;
	}
	w->s = s;
	w->rt = rt;
	w->t = t;
	w->fd = -1;
	snprintf(w->ns, sizeof w->ns, "%s", rq->route.ns);
	if (mu__filter_init(&w->f, t, rq, rs) != MU_OK) {
		atomic_fetch_sub(&s->watchers, 1);
		free(w);
		return;
	}
	w->f.ns = w->ns;
	/* a watch on one object by URL: /watch/.../pods/NAME */
	if (rq->route.name[0]) {
		char sel[600];
		snprintf(sel, sizeof sel, "metadata.name=%s", rq->route.name);
		char err[128];
		mu__sel_free(w->f.fs);
		w->f.fs = NULL;
		mu__sel_parse(sel, true, &w->f.fs, err, sizeof err);
	}
	w->bookmarks = rq->q.bookmarks;
	w->table = mu__accept_table(rq->accept);
	w->include_object = rq->q.include_object;
	int64_t tmo = rq->q.timeout_s > 0 ? rq->q.timeout_s : 1800;
	w->deadline = mu__mono_ms() + (tmo > 3600 ? 3600 : tmo) * 1000;
	w->last_send = mu__mono_ms();
	int rc = MU_OK;
	bool from_rv = rq->q.has_rv && strcmp(rq->q.rv, "0") != 0;
	if (from_rv) {
		if (strspn(rq->q.rv, "0123456789") != strlen(rq->q.rv) || strlen(rq->q.rv) > 18) {
			mu__watch_free(w);
			mu__resp_status(rs, 400, "BadRequest", "invalid resource version \"%s\"", rq->q.rv);
			return;
		}
		w->cursor = mu__store_resume(s->store, rt, strtoll(rq->q.rv, NULL, 10));
		if (w->cursor > mu__store_rv(s->store))
			w->future_until = mu__mono_ms() + 3000;
	}
	if (!from_rv || rq->q.send_initial)
		rc = initial_state(w);
	w->initial_end = rq->q.send_initial;
	if (rc != MU_OK) {
		mu__watch_free(w);
		mu__resp_status(rs, 500, "InternalError", "out of memory");
		return;
	}
	rs->code = 200;
	rs->ctype = "application/json";
	rs->watch = w;
}

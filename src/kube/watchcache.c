/*
 * watchcache.c - a watched list for daemons outside the scheduler (the
 * hub daemon, src/dispatch): kube.h's mu_kube_watch_t.  One thread with
 * its own kept-alive connection lists a collection (pages of 500,
 * following `continue`), then watches it from the list's resourceVersion
 * with bookmarks.  As client-go's reflector does (reflector.go: watch()
 * and isWatchErrorRetriable), a watch that ends, is cut (the connection
 * dropped, a server killed or restarted), is not answered, or ends with
 * 429 or 500 is resumed from the last resourceVersion it saw, without a
 * list; only an ERROR event with 410 (Gone/Expired) or a watch answered
 * 410 re-lists, and so does any other HTTP error (403, 404, a 504 "too
 * large resource version" from a server that lost its store).  Objects
 * are kept in a map by "namespace/name" (a watch event's or a list
 * item's object without its metadata.managedFields), replaced whole by
 * each list;
 * readers take a snapshot (mu_kube_watch_items), so no request is made
 * per pass, or only what changed since a change count they last read
 * (mu_kube_watch_changes: a log of the changed keys, cleared by a list).
 * An event is not parsed when it arrives (round 17): its frame (type,
 * key, resourceVersion) is read from the text (mfstrip.c
 * mu__kevent_scan) and its object's text kept, to be parsed when a reader
 * next reads the map, so an object changed several times between two
 * reads is parsed once; an object that then does not parse makes the
 * cache unhealthy and the watch list again.  An event whose frame is not
 * plain (an ERROR, escapes in a name, other members) is parsed at once.
 *
 * Health: the cache is healthy from a successful list until a list or a
 * watch fails (no answer, cut, or an HTTP error), and again once a
 * resumed watch is answered 200; a watch the server ends normally keeps
 * it healthy.  Watches ask for timeoutSeconds=30, so that a server that
 * stops answering without closing the connection is noticed within about
 * 40 s.  A watch cut a second or more after it was answered is resumed
 * at once; other failures back off 0.2 s doubling to 5 s.  The thread stops within about
 * a second of mu_kube_watch_stop() (up to 20 s when a list page is in
 * flight to a server that does not answer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>

#include "kube/kube_int.h"
#include "muster/jpath.h"

/* Changes kept for mu_kube_watch_changes beyond the objects' count. */
#define WLOG_MAX 8192

struct mu_kube_watch {
	mu__kauth_t auth;
	mu__kc_t *c;
	char *path, *query;       /* the collection, its extra query or "" */
	pthread_t th;
	bool started;
	atomic_int stop;
	mu__knap_t nap;           /* the thread's backoff, woken on stop */
	pthread_mutex_t mu;       /* guards what follows */
	json_t *map;              /* "ns/name" -> object */
	/* "ns/name" -> the text of the object of its last event, not parsed
	 * yet (a JSON string): parsed into map when a reader reads it
	 * (materialize), so that an object changed several times between two
	 * reads is parsed once */
	json_t *raw;
	bool relist_due;          /* a deferred object did not parse: list again */
	uint64_t parsed;          /* events' objects parsed (mu_kube_watch_parsed) */
	uint64_t seq;             /* changes applied */
	/* the keys of the changes since seq log_base, in order (change
	 * log_base + i + 1 is log[i]); cleared by a list, and when it grows
	 * past WLOG_MAX (readers further behind take a snapshot) */
	json_t *log;
	uint64_t log_base;
	uint64_t expired;         /* watches answered 410: listed again */
	uint64_t resumed;         /* failed watches resumed without a list */
	bool healthy;
	int64_t ok_ms;            /* mono ms of the last answer */
	char rv[64];              /* where the next watch starts ("" = list) */
	char err[256];            /* the last failure */
};

/* "ns/name" of an object (cluster-scoped: "name") into buf. */
static void key_of(const json_t *o, char *buf, size_t len)
{
	const char *ns = mu__kjs(o, "metadata.namespace");
	const char *n = mu__kjs(o, "metadata.name");
	snprintf(buf, len, "%s%s%s", ns ? ns : "", ns ? "/" : "", n ? n : "");
}

static void set_health(mu_kube_watch_t *w, bool ok, const char *why)
{
	pthread_mutex_lock(&w->mu);
	w->healthy = ok;
	if (ok)
		w->ok_ms = mu__k_mono_ms();
	else
		snprintf(w->err, sizeof w->err, "%s", why);
	pthread_mutex_unlock(&w->mu);
}

/* Lists every page into a new map, which replaces the old one at the end.
 * Returns the HTTP status of the failing page (0: no answer), else 200. */
static long do_list(mu_kube_watch_t *w)
{
	char path[4096], cont[2048] = "", rv[64] = "";
	json_t *map = json_object();
	long st = 0;
	for (int pages = 0; map && pages < 100000 && !atomic_load(&w->stop); pages++) {
		char *esc = *cont ? curl_easy_escape(NULL, cont, 0) : NULL;
		snprintf(path, sizeof path, "%s?limit=500%s%s%s%s", w->path, *w->query ? "&" : "",
			 w->query, esc ? "&continue=" : "", esc ? esc : "");
		curl_free(esc);
		/* each item's managedFields cut out before the one-pass parse,
		 * as from a watch event (on_line): the map holds the same
		 * objects either way, and a list of the hub's Jobs was read by
		 * json_loadb, managedFields and all, in every dispatcher's start */
		mu__kresp_t r;
		json_t *list = NULL;
		if (mu__kc_do(w->c, "GET", path, NULL, NULL, 20000, &r) == MU_OK && r.len)
			list = mu__json_loadb(r.body, mu__kstrip(r.body, r.len, MU__KSTRIP_MF));
		st = r.status;
		mu__kresp_release(&r);
		json_t *items = json_object_get(list, "items");
		if (st != 200 || !json_is_array(items)) {
			json_decref(list);
			json_decref(map);
			return st == 200 ? 0 : st;
		}
		size_t i;
		json_t *it;
		char key[600];
		json_array_foreach(items, i, it) {
			key_of(it, key, sizeof key);
			json_object_set(map, key, it);
		}
		const char *v = mu__kjs(list, "metadata.resourceVersion");
		const char *c = mu__kjs(list, "metadata.continue");
		snprintf(rv, sizeof rv, "%s", v ? v : "");
		snprintf(cont, sizeof cont, "%s", c ? c : "");
		json_decref(list);
		if (!*cont)
			break;
	}
	if (!map || atomic_load(&w->stop)) {
		json_decref(map);
		return 0;
	}
	pthread_mutex_lock(&w->mu);
	json_decref(w->map);
	w->map = map;
	json_object_clear(w->raw);
	w->relist_due = false;
	w->seq++;
	json_array_clear(w->log);
	w->log_base = w->seq; /* a reader from before takes a snapshot */
	snprintf(w->rv, sizeof w->rv, "%s", rv);
	pthread_mutex_unlock(&w->mu);
	return 200;
}

/* One watch: its lines apply changes and bookmarks, or end it with an
 * error (a 410 asks for a re-list through relist).  resuming: it follows
 * a failed watch, and counts in w->resumed once the server accepts its
 * version (an event that is not an ERROR, or a normal end). */
typedef struct wline {
	mu_kube_watch_t *w;
	bool relist;
	long code;
	bool answered;            /* headers in with 200 */
	bool resuming, counted;
} wline_t;

/* Counts a resumed watch once (takes w->mu). */
static void count_resumed(wline_t *l)
{
	if (!l->resuming || l->counted)
		return;
	l->counted = true;
	pthread_mutex_lock(&l->w->mu);
	l->w->resumed++;
	pthread_mutex_unlock(&l->w->mu);
}

/* mu__kc_on_answer's hook: a watch answered 200 makes the cache healthy
 * again (it was listed before any watch, and the watch goes on from what
 * it holds). */
static void on_answer(void *arg, long status)
{
	wline_t *l = arg;
	if (status != 200)
		return;
	l->answered = true;
	set_health(l->w, true, NULL);
}

/* One change of key counted and logged (w->mu held). */
static void log_change(mu_kube_watch_t *w, const char *key)
{
	w->seq++;
	if (json_array_size(w->log) >= WLOG_MAX + json_object_size(w->map)) {
		json_array_clear(w->log);
		w->log_base = w->seq;
	} else if (json_array_append_new(w->log, json_string(key))) {
		json_array_clear(w->log); /* out of memory: a snapshot */
		w->log_base = w->seq;
	}
}

/* One change of w's map (w->mu held): key deleted (del), or its object's
 * text o (o_len bytes) kept to be parsed when read. */
static void apply_frame(mu_kube_watch_t *w, const char *key, bool del, const char *o, size_t o_len)
{
	if (del) {
		json_object_del(w->map, key);
		json_object_del(w->raw, key);
	} else if (json_object_set_new(w->raw, key, json_stringn_nocheck(o, o_len))) {
		json_object_del(w->map, key); /* out of memory: listed again */
		w->relist_due = true;
	}
	log_change(w, key);
}

/* An event whose frame was read without a parse (mu__kevent_scan): an
 * ADDED, MODIFIED or DELETED object by its key, a BOOKMARK's version.
 * Its object is parsed only when a reader reads the map (materialize):
 * of the dispatcher's watch events in bench/dispatch.sh (8 per job: a
 * copy ADDED and MODIFIED twice, its pod the same, the hub Job twice),
 * most change an object that changes again before the next pass reads
 * it, and a parse was about a fifth of the daemon's CPU.  false when the
 * type is another (the caller parses the event). */
static bool on_frame(wline_t *l, const mu__kevent_t *e)
{
	mu_kube_watch_t *w = l->w;
	bool del = e->type_len == 7 && !memcmp(e->type, "DELETED", 7);
	bool mark = e->type_len == 8 && !memcmp(e->type, "BOOKMARK", 8);
	if (!del && !mark && !(e->type_len == 5 && !memcmp(e->type, "ADDED", 5)) &&
	    !(e->type_len == 8 && !memcmp(e->type, "MODIFIED", 8)))
		return false;
	char key[600];
	/* as key_of names it */
	if (e->ns)
		snprintf(key, sizeof key, "%.*s/%.*s", (int)e->ns_len, e->ns, (int)e->name_len, e->name);
	else
		snprintf(key, sizeof key, "%.*s", (int)e->name_len, e->name);
	count_resumed(l);
	pthread_mutex_lock(&w->mu);
	if (e->rv)
		snprintf(w->rv, sizeof w->rv, "%.*s", (int)e->rv_len, e->rv);
	if (!mark)
		apply_frame(w, key, del, e->obj, e->obj_len);
	w->ok_ms = mu__k_mono_ms();
	pthread_mutex_unlock(&w->mu);
	return true;
}

static int on_line(void *arg, char *line, size_t len)
{
	wline_t *l = arg;
	mu_kube_watch_t *w = l->w;
	pthread_mutex_lock(&w->mu);
	bool bad = w->relist_due;
	pthread_mutex_unlock(&w->mu);
	if (bad) { /* an object of an earlier event did not parse */
		l->relist = true;
		return 1;
	}
	/* the event's managedFields cut out (nothing reads them); its frame
	 * read without a parse when it is plain (on_frame), else the whole
	 * parsed in one pass (jparse.c), as the scheduler's reflector does */
	len = mu__kstrip(line, len, MU__KSTRIP_MF);
	mu__kevent_t fr;
	if (mu__kevent_scan(line, len, &fr) && on_frame(l, &fr))
		return 0;
	json_t *ev = mu__json_loadb(line, len);
	const char *type = mu__kjs(ev, "type");
	json_t *obj = json_object_get(ev, "object");
	int stop = 0;
	if (!type || !json_is_object(obj)) {
		stop = 1; /* not an event: start again from the last version */
	} else if (!strcmp(type, "ERROR")) {
		l->code = (long)mu__kji(obj, "code", 0);
		l->relist = l->code == 410;
		stop = 1;
	} else {
		const char *rv = mu__kjs(obj, "metadata.resourceVersion");
		char key[600];
		key_of(obj, key, sizeof key);
		count_resumed(l);
		pthread_mutex_lock(&w->mu);
		if (rv)
			snprintf(w->rv, sizeof w->rv, "%s", rv);
		bool del = !strcmp(type, "DELETED");
		if (del || !strcmp(type, "ADDED") || !strcmp(type, "MODIFIED")) {
			w->parsed++;
			json_object_del(w->raw, key); /* a text deferred before it */
			if (del)
				json_object_del(w->map, key);
			else if (json_object_set(w->map, key, obj))
				w->relist_due = true; /* out of memory: listed again */
			log_change(w, key);
		}
		w->ok_ms = mu__k_mono_ms();
		pthread_mutex_unlock(&w->mu);
	}
	json_decref(ev);
	return stop;
}

/* Watches from w->rv until the server ends it (resuming: after a failed
 * watch).  Returns the HTTP status (0: no answer, or cut; 410 for an
 * expired version, as a status or an event; an ERROR event's code);
 * *answered: the server answered 200 before it ended. */
static long do_watch(mu_kube_watch_t *w, bool resuming, bool *answered)
{
	char path[4096], rv[64];
	pthread_mutex_lock(&w->mu);
	snprintf(rv, sizeof rv, "%s", w->rv);
	pthread_mutex_unlock(&w->mu);
	snprintf(path, sizeof path, "%s?watch=true&allowWatchBookmarks=true&resourceVersion=%s"
		 "&timeoutSeconds=30%s%s", w->path, rv, *w->query ? "&" : "", w->query);
	wline_t l = {w, false, 0, false, resuming, false};
	long st = 0;
	/* no limit on the whole watch (the server ends it after 30 s; a
	 * client paused longer still reads its end and resumes), but 40 s
	 * without a byte (bookmarks come every 10 s) is a dead server */
	mu__kc_on_answer(w->c, on_answer, &l);
	int rc = mu__kc_stream(w->c, path, -40000, on_line, &l, &w->stop, &st);
	mu__kc_on_answer(w->c, NULL, NULL);
	*answered = l.answered;
	if (l.relist)
		return 410;
	if (l.code)
		return l.code;
	if (rc == MU_OK && st == 200)
		count_resumed(&l); /* ended quietly by the server: accepted */
	return rc == MU_OK ? st : 0;
}

/* Sleeps ms, returning early on stop (nap.c: woken by
 * mu_kube_watch_signal and _stop, not by polling the flag every 100 ms). */
static void nap(mu_kube_watch_t *w, int ms)
{
	mu__knap(&w->nap, ms, &w->stop);
}

/* A failed watch that client-go's reflector resumes rather than re-lists:
 * no answer or cut (0), 429 Too Many Requests, 500 Internal Error. */
static bool resumable(long st)
{
	return st == 0 || st == 429 || st == 500;
}

/* The thread: list, watch, resume or re-list, with backoff. */
static void *run(void *arg)
{
	mu_kube_watch_t *w = arg;
	bool relist = true, resuming = false;
	int fails = 0;
	char why[256];
	while (!atomic_load(&w->stop)) {
		long st = 200;
		bool answered = false;
		pthread_mutex_lock(&w->mu);
		if (w->relist_due) /* a deferred object did not parse */
			relist = true;
		pthread_mutex_unlock(&w->mu);
		if (relist && (st = do_list(w)) == 200) {
			relist = resuming = false;
			set_health(w, true, NULL);
		}
		int64_t t0 = mu__k_mono_ms();
		if (st == 200) {
			st = do_watch(w, resuming, &answered);
			/* a cut within a second of the answer backs off, as
			 * client-go's "very short watch" does */
			answered = answered && mu__k_mono_ms() - t0 >= 1000;
			if (st == 200) {
				fails = 0;
				resuming = false;
				continue; /* ended by the server: resume */
			}
			/* 410, or an error client-go re-lists on: list again;
			 * cut, not answered, 429 or 500: watch again from the
			 * last version seen */
			relist = !resumable(st);
			resuming = !relist;
		}
		if (atomic_load(&w->stop))
			break;
		if (st != 410) {
			if (st == 0 && *mu__kc_error(w->c)) /* no answer: libcurl's why */
				snprintf(why, sizeof why, "%s: %s", w->path, mu__kc_error(w->c));
			else
				snprintf(why, sizeof why, "%s: HTTP %ld", w->path, st);
			set_health(w, false, why);
		} else {
			pthread_mutex_lock(&w->mu);
			w->expired++;
			pthread_mutex_unlock(&w->mu);
		}
		if (answered)
			fails = 0; /* it worked for a while until it ended: at once */
		int ms = 200;
		for (int i = 0; i < fails && ms < 5000; i++)
			ms *= 2;
		fails += st != 410 && !answered;
		nap(w, st == 410 || (answered && st == 0) ? 0 : ms > 5000 ? 5000 : ms);
	}
	return NULL;
}

int mu_kube_watch_start(const mu_kube_config_t *cfg, const char *path, const char *query,
			mu_kube_watch_t **out)
{
	mu_kube_watch_t *w = calloc(1, sizeof *w);
	if (!w)
		return MU_ENOMEM;
	if (mu__knap_init(&w->nap) != MU_OK) {
		free(w);
		return MU_ENOMEM;
	}
	pthread_mutex_init(&w->mu, NULL);
	w->path = strdup(path);
	w->query = strdup(query ? query : "");
	w->map = json_object();
	w->raw = json_object();
	w->log = json_array();
	snprintf(w->err, sizeof w->err, "not listed yet");
	int rc = w->path && w->query && w->map && w->raw && w->log ? mu__kauth_init(&w->auth, cfg) : MU_ENOMEM;
	if (rc == MU_OK && (rc = mu__kc_new(&w->auth, &w->c)) != MU_OK)
		mu__kauth_release(&w->auth);
	if (rc == MU_OK && pthread_create(&w->th, NULL, run, w)) {
		mu__kc_free(w->c);
		mu__kauth_release(&w->auth);
		rc = MU_ENOMEM;
	}
	if (rc != MU_OK) {
		free(w->path);
		free(w->query);
		json_decref(w->map);
		json_decref(w->raw);
		json_decref(w->log);
		pthread_mutex_destroy(&w->mu);
		mu__knap_destroy(&w->nap);
		free(w);
		return rc;
	}
	w->started = true;
	*out = w;
	return MU_OK;
}

/* The objects whose events came since the last read, parsed into the map
 * (w->mu held).  One that does not parse (the server sent text that is
 * not JSON inside an event's object) is taken out of the map and the
 * cache is unhealthy until the watch lists again (on its next line, or
 * when it ends): its version was passed already, so resuming would not
 * send it again.  O(bytes of the deferred objects). */
static void materialize(mu_kube_watch_t *w)
{
	if (!json_object_size(w->raw))
		return;
	const char *k;
	json_t *v;
	json_object_foreach(w->raw, k, v) {
		json_t *o = mu__json_loadb(json_string_value(v), json_string_length(v));
		w->parsed++;
		if (json_is_object(o) && !json_object_set_new(w->map, k, o))
			continue;
		if (!json_is_object(o))
			json_decref(o);
		json_object_del(w->map, k);
		w->relist_due = true;
		w->healthy = false;
		snprintf(w->err, sizeof w->err, "%.200s: an event's object did not parse: listing again",
			 w->path);
	}
	json_object_clear(w->raw);
}

bool mu_kube_watch_items(mu_kube_watch_t *w, json_t **list, uint64_t *seq)
{
	pthread_mutex_lock(&w->mu);
	if (list)
		materialize(w);
	bool ok = w->healthy;
	if (seq)
		*seq = w->seq;
	if (list) {
		json_t *a = json_array();
		const char *k;
		json_t *v;
		json_object_foreach(w->map, k, v)
			json_array_append(a, v);
		*list = json_pack("{s:o}", "items", a);
	}
	pthread_mutex_unlock(&w->mu);
	return ok;
}

bool mu_kube_watch_changes(mu_kube_watch_t *w, uint64_t since, json_t **changed, uint64_t *seq)
{
	pthread_mutex_lock(&w->mu);
	materialize(w);
	bool ok = w->healthy;
	*seq = w->seq;
	*changed = NULL;
	if (since >= w->log_base && since <= w->seq && (*changed = json_object())) {
		for (size_t i = (size_t)(since - w->log_base); i < json_array_size(w->log); i++) {
			const char *k = json_string_value(json_array_get(w->log, i));
			json_t *o = json_object_get(w->map, k);
			json_object_set(*changed, k, o ? o : json_null());
		}
	}
	pthread_mutex_unlock(&w->mu);
	return ok;
}

json_t *mu_kube_watch_get(mu_kube_watch_t *w, const char *key)
{
	pthread_mutex_lock(&w->mu);
	materialize(w);
	json_t *o = json_incref(json_object_get(w->map, key));
	pthread_mutex_unlock(&w->mu);
	return o;
}

uint64_t mu_kube_watch_expired(mu_kube_watch_t *w)
{
	if (!w)
		return 0;
	pthread_mutex_lock(&w->mu);
	uint64_t n = w->expired;
	pthread_mutex_unlock(&w->mu);
	return n;
}

uint64_t mu_kube_watch_parsed(mu_kube_watch_t *w)
{
	pthread_mutex_lock(&w->mu);
	uint64_t n = w->parsed;
	pthread_mutex_unlock(&w->mu);
	return n;
}

uint64_t mu_kube_watch_resumed(mu_kube_watch_t *w)
{
	if (!w)
		return 0;
	pthread_mutex_lock(&w->mu);
	uint64_t n = w->resumed;
	pthread_mutex_unlock(&w->mu);
	return n;
}

const char *mu_kube_watch_error(mu_kube_watch_t *w, char *buf, size_t len)
{
	pthread_mutex_lock(&w->mu);
	snprintf(buf, len, "%s", w->healthy ? "" : w->err);
	pthread_mutex_unlock(&w->mu);
	return buf;
}

void mu_kube_watch_signal(mu_kube_watch_t *w)
{
	if (w) {
		atomic_store(&w->stop, 1);
		mu__knap_wake(&w->nap);
	}
}

void mu_kube_watch_stop(mu_kube_watch_t *w)
{
	if (!w)
		return;
	atomic_store(&w->stop, 1);
	mu__knap_wake(&w->nap);
	if (w->started)
		pthread_join(w->th, NULL);
	mu__kc_free(w->c);
	mu__kauth_release(&w->auth);
	json_decref(w->map);
	json_decref(w->raw);
	json_decref(w->log);
	pthread_mutex_destroy(&w->mu);
	mu__knap_destroy(&w->nap);
	free(w->path);
	free(w->query);
	free(w);
}

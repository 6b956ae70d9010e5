/*
 * events_corr.c - the Events of muster up's in-process recorders (the Job
 * controller's, the disruption controller's, the simulated kubelets')
 * correlated as client-go's event recorder correlates a component's Events
 * before it writes them (k8s.io/client-go/tools/record/events_cache.go,
 * EventCorrelator.EventCorrelate), in its three steps and their order:
 *
 * - the aggregator keys an Event by its source, involved object (without
 *   fieldPath), type, reason, reporting controller and instance
 *   (EventAggregatorByReasonFunc) and collects its distinct messages
 *   while they come less than ten minutes apart (maxIntervalInSeconds
 *   600): at the tenth (defaultAggregateMaxEvents 10) and from then on
 *   the Event becomes a new one, OBJECT.<hex of the wall clock in ns>,
 *   with the message "(combined from similar events): MSG", only the
 *   source, object, type and reason of the original, and the aggregate
 *   key as its correlation key;
 * - the logger turns an Event whose correlation key it has seen into an
 *   update of the first one: its name and firstTimestamp, count + 1, and a
 *   patch of count, lastTimestamp and message;
 * - the spam filter, last, keeps a token bucket per source and involved
 *   object (getSpamKey: no fieldPath, type or reason): 25 tokens
 *   (defaultSpamBurst), refilled at 1/300 per second (defaultSpamQPS, as
 *   a float32, as golang.org/x/time/rate refills it); an Event without a
 *   token is dropped, not written, after the aggregator and the logger
 *   have counted it (so the next Event written carries its count).
 *
 * Each of the three caches is an LRU of 4096 keys (maxLruCacheEntries;
 * groupcache's lru: a read or write makes a key the newest, the oldest
 * goes when a new key would make 4097), kept in a jansson object, which
 * iterates in insertion order.  mu__evcorr_correlate is the pure step
 * (client-go's EventCorrelate, times are inputs) and mu__evcorr_update
 * its UpdateState; mu__evcorr_record writes the result as recordToSink
 * does: a count above 1 patches the Event of that name, and one deleted
 * meanwhile (its TTL, evttl.c) is created again whole.  One deliberate
 * difference: client-go joins a key's fields with nothing between them
 * (so "ab"+"c" and "a"+"bc" collide, and an aggregate key can equal an
 * Event key); here each field ends in a byte no field holds and the two
 * kinds of key differ in their first byte.  State is the correlator's
 * own (one per recorder, as each controller of kube-controller-manager
 * has its own broadcaster), used from one thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apiserver/api_int.h"

#define CACHE_MAX 4096       /* maxLruCacheEntries */
#define AGG_MAX 10           /* defaultAggregateMaxEvents */
#define AGG_WINDOW_MS 600000 /* defaultAggregateIntervalInSeconds */
#define SPAM_BURST 25        /* defaultSpamBurst */
#define KEY_MAX 2400

struct mu__evcorr {
	json_t *agg;  /* aggregate key -> {"m": {message -> null}, "t": last ms} */
	json_t *log;  /* correlation key -> {"name", "count", "first"} */
	json_t *spam; /* spam key -> {"tok": tokens, "t": last ms} */
	int burst;
	double qps;
	mu__evcorr_spamkey_fn spam_key;
};

static const char *str(const json_t *e, const char *path)
{
	const char *v = mu__jstr(e, path);
	return v ? v : "";
}

/* The spam key of e (getSpamKey): its source and involved object, without
 * fieldPath.  O(the fields). */
void mu__evcorr_spam_key(const json_t *e, char *buf, size_t len)
{
	snprintf(buf, len, "S\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", str(e, "source.component"),
		 str(e, "source.host"), str(e, "involvedObject.kind"), str(e, "involvedObject.namespace"),
		 str(e, "involvedObject.name"), str(e, "involvedObject.uid"), str(e, "involvedObject.apiVersion"));
}

mu__evcorr_t *mu__evcorr_new_with(const mu__evcorr_opts_t *o)
{
	mu__evcorr_t *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->agg = json_object();
	c->log = json_object();
	c->spam = json_object();
	/* populateDefaults: a zero option is the default */
	c->burst = o && o->burst > 0 ? o->burst : SPAM_BURST;
	c->qps = o && o->qps > 0 ? o->qps : (double)(float)(1.0 / 300.0);
	c->spam_key = o && o->spam_key ? o->spam_key : mu__evcorr_spam_key;
	if (!c->agg || !c->log || !c->spam) {
		mu__evcorr_free(c);
		return NULL;
	}
	return c;
}

mu__evcorr_t *mu__evcorr_new(void)
{
	return mu__evcorr_new_with(NULL);
}

void mu__evcorr_free(mu__evcorr_t *c)
{
	if (!c)
		return;
	json_decref(c->agg);
	json_decref(c->log);
	json_decref(c->spam);
	free(c);
}

/* lru.Get: the value under key in cache (borrowed), made the newest, or
 * NULL.  O(1). */
static json_t *lru_get(json_t *cache, const char *key)
{
	json_t *v = json_object_get(cache, key);
	if (!v)
		return NULL;
	json_incref(v);
	json_object_del(cache, key);
	json_object_set_new(cache, key, v);
	return v;
}

/* lru.Add: v (taken) under key, the newest; the oldest key goes when
 * the cache would exceed CACHE_MAX.  O(1). */
static void lru_add(json_t *cache, const char *key, json_t *v)
{
	if (!v)
		return;
	json_object_del(cache, key);
	json_object_set_new(cache, key, v);
	if (json_object_size(cache) > CACHE_MAX) {
		void *it = json_object_iter(cache);
		if (it)
			json_object_del(cache, json_object_iter_key(it));
	}
}

/* The aggregate key of Event e in buf (EventAggregatorByReasonFunc; its
 * local key is the message).  O(the fields). */
void mu__evcorr_agg_key(const json_t *e, char *buf, size_t len)
{
	snprintf(buf, len, "A\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", str(e, "source.component"),
		 str(e, "source.host"), str(e, "involvedObject.kind"), str(e, "involvedObject.namespace"),
		 str(e, "involvedObject.name"), str(e, "involvedObject.uid"), str(e, "involvedObject.apiVersion"),
		 str(e, "type"), str(e, "reason"), str(e, "reportingComponent"), str(e, "reportingInstance"));
}

/* The event key of e (getEventKey): source, involved object (with its
 * fieldPath), type, reason and message.  O(the fields). */
static void event_key(const json_t *e, char *buf, size_t len)
{
	snprintf(buf, len, "E\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", str(e, "source.component"),
		 str(e, "source.host"), str(e, "involvedObject.kind"), str(e, "involvedObject.namespace"),
		 str(e, "involvedObject.name"), str(e, "involvedObject.fieldPath"), str(e, "involvedObject.uid"),
		 str(e, "involvedObject.apiVersion"), str(e, "type"), str(e, "reason"), str(e, "message"));
}

/* The aggregator's step on e at now (EventAggregate): the Event to go on
 * with (a new reference: e itself, or the combined copy named after
 * wall_ns) and its correlation key in key.  NULL when out of memory.
 * O(1) besides the keys. */
static json_t *aggregate(mu__evcorr_t *c, json_t *e, int64_t now, int64_t wall_ns, char *key, size_t len)
{
	char ak[KEY_MAX];
	mu__evcorr_agg_key(e, ak, sizeof ak);
	json_t *rec = lru_get(c->agg, ak);
	if (rec && now - json_integer_value(json_object_get(rec, "t")) > AGG_WINDOW_MS)
		rec = NULL; /* older than the window: a new record */
	if (!rec) {
		rec = json_pack("{s:{}, s:I}", "m", "t", (json_int_t)now);
		lru_add(c->agg, ak, rec);
		if (!json_object_get(c->agg, ak))
			return NULL;
	}
	json_t *msgs = json_object_get(rec, "m");
	json_object_set_new(msgs, str(e, "message"), json_null());
	json_object_set_new(rec, "t", json_integer(now));
	if (json_object_size(msgs) < AGG_MAX) {
		event_key(e, key, len);
		return json_incref(e);
	}
	/* sets.PopAny: the set stays below the limit, so every new message
	 * from now on is combined */
	void *it = json_object_iter(msgs);
	if (it)
		json_object_del(msgs, json_object_iter_key(it));
	char msg[2100], en[300];
	snprintf(msg, sizeof msg, "(combined from similar events): %s", str(e, "message"));
	snprintf(en, sizeof en, "%.230s.%llx", str(e, "involvedObject.name"), (unsigned long long)wall_ns);
	const char *ts = str(e, "lastTimestamp");
	json_t *cp = json_pack("{s:s, s:s, s:{s:s, s:s}, s:O, s:s, s:s, s:s, s:O, s:s, s:s, s:i}", "apiVersion", "v1",
			       "kind", "Event", "metadata", "name", en, "namespace", str(e, "metadata.namespace"),
			       "involvedObject", json_object_get(e, "involvedObject"), "reason", str(e, "reason"),
			       "message", msg, "type", str(e, "type"), "source", json_object_get(e, "source"),
			       "firstTimestamp", ts, "lastTimestamp", ts, "count", 1);
	snprintf(key, len, "%s", ak);
	return cp;
}

/* The logger's step (eventObserve): e (taken) with the name,
 * firstTimestamp and count + 1 of the Event first seen under key, and the
 * observation recorded.  O(1). */
static json_t *observe(mu__evcorr_t *c, json_t *e, const char *key)
{
	json_t *last = lru_get(c->log, key);
	json_int_t n = last ? json_integer_value(json_object_get(last, "count")) : 0;
	if (n > 0) {
		mu__jset(e, "metadata.name", json_string(str(last, "name")));
		mu__jset(e, "firstTimestamp", json_string(str(last, "first")));
		mu__jset(e, "count", json_integer(n + 1));
	}
	lru_add(c->log, key,
		json_pack("{s:s, s:I, s:s}", "name", str(e, "metadata.name"), "count",
			  json_integer_value(json_object_get(e, "count")), "first", str(e, "firstTimestamp")));
	return e;
}

/* The spam filter (EventSourceObjectSpamFilter.Filter): true when e's
 * source and object have no token left at now; else one is taken.  The
 * bucket starts full and refills continuously, as rate.Limiter.AllowN;
 * a refusal changes nothing.  O(1). */
static bool spam(mu__evcorr_t *c, const json_t *e, int64_t now)
{
	char sk[KEY_MAX];
	c->spam_key(e, sk, sizeof sk);
	json_t *rec = lru_get(c->spam, sk);
	double tok = c->burst;
	int64_t last = now;
	if (rec) {
		tok = json_real_value(json_object_get(rec, "tok"));
		last = json_integer_value(json_object_get(rec, "t"));
		if (now > last)
			tok += (double)(now - last) / 1000.0 * c->qps;
		if (tok > c->burst)
			tok = c->burst;
	}
	bool drop = tok < 1.0;
	if (!drop) {
		tok -= 1.0;
		last = now;
	} else if (rec) {
		return true;
	}
	lru_add(c->spam, sk, json_pack("{s:f, s:I}", "tok", tok, "t", (json_int_t)last));
	return drop;
}

int mu__evcorr_correlate(mu__evcorr_t *c, json_t *e, int64_t now, int64_t wall_ns, mu__evcorr_res_t *r)
{
	char key[KEY_MAX];
	memset(r, 0, sizeof *r);
	json_t *a = aggregate(c, e, now, wall_ns, key, sizeof key);
	json_t *o = a ? json_deep_copy(a) : NULL;
	json_decref(a);
	if (!o)
		return MU_ENOMEM;
	observe(c, o, key);
	if (spam(c, o, now)) {
		json_decref(o);
		r->skip = true;
		return MU_OK;
	}
	r->event = o;
	return MU_OK;
}

void mu__evcorr_update(mu__evcorr_t *c, const json_t *e)
{
	char key[KEY_MAX];
	event_key(e, key, sizeof key);
	lru_add(c->log, key,
		json_pack("{s:s, s:I, s:s}", "name", str(e, "metadata.name"), "count",
			  json_integer_value(json_object_get(e, "count")), "first", str(e, "firstTimestamp")));
}

/* The patch recordToSink sends for a repeat: count, lastTimestamp and
 * message of the Event given. */
static int bump_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	const json_t *e = ctx;
	json_t *o = cur ? mu__obj_parse(cur) : NULL;
	if (!o)
		return cur ? MU_ENOMEM : MU_ENOENT;
	json_object_set_new(o, "count", json_integer(json_integer_value(json_object_get(e, "count"))));
	json_object_set_new(o, "lastTimestamp", json_string(str(e, "lastTimestamp")));
	json_object_set_new(o, "message", json_string(str(e, "message")));
	*out = o;
	return MU__MUT_PUT;
}

void mu__evcorr_record(mu__evcorr_t *c, mu_apiserver_t *s, mu__wtx_t *tx, json_t *e, const char *manager,
		       int64_t now)
{
	mu__evcorr_res_t r;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (!c || mu__evcorr_correlate(c, e, now, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, &r) != MU_OK) {
		mu__create_by(s, tx, MU__RT_EVENTS, e, manager, NULL);
		return;
	}
	if (r.skip)
		return; /* the spam filter's: not written */
	int rc = MU_ENOENT;
	if (json_integer_value(json_object_get(r.event, "count")) > 1)
		rc = mu__store_apply(tx, MU__RT_EVENTS, str(r.event, "metadata.namespace"), str(r.event, "metadata.name"),
				     bump_fn, r.event, false, NULL);
	if (rc == MU_ENOENT) { /* new, or deleted meanwhile: created whole */
		json_object_del(json_object_get(r.event, "metadata"), "resourceVersion");
		rc = mu__create_by(s, tx, MU__RT_EVENTS, r.event, manager, NULL);
	}
	if (rc >= 0) /* written: UpdateState */
		mu__evcorr_update(c, r.event);
	json_decref(r.event);
}

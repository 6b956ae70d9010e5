/*
 * events_corr.c - the Events of muster up's in-process recorders (the Job
 * controller's, the simulated kubelets') correlated as client-go's event
 * recorder correlates a component's Events before it writes them
 * (k8s.io/client-go/tools/record/events_cache.go, EventCorrelator).
 *
 * Two of its three steps: the aggregator, which keys an Event by its
 * source, involved object, type and reason (and reporting controller and
 * instance) and counts the distinct messages seen under that key within
 * ten minutes (maxIntervalInSeconds 600): from the tenth on
 * (defaultAggregateMaxEvents 10) the Event becomes one of that key with
 * the message "(combined from similar events): MSG"; and the logger, which
 * turns an Event whose key (the whole Event: source, object, type,
 * reason, message) it has seen into a patch of the first one's count (+1),
 * lastTimestamp and message rather than a new object.  Its third step,
 * the spam filter (25 Events per source and object, then one per five
 * minutes), is not done: every Event is written (docs/apiserver.md).
 * client-go bounds both caches as LRUs of 4096 keys; here each is
 * cleared when it reaches that size (an Event after the clear is new
 * again, as one evicted from the LRU is).  An Event patched after the
 * stored one was deleted (its TTL, evttl.c) is created again under the
 * same name with the count reached, as recordToSink does.  State is the
 * correlator's own (one per recorder), used from the controller thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"

#define CACHE_MAX 4096     /* maxLruCacheEntries */
#define AGG_MAX 10         /* defaultAggregateMaxEvents */
#define AGG_WINDOW_MS 600000 /* defaultAggregateIntervalInSeconds */

struct mu__evcorr {
	json_t *agg; /* aggregate key -> {"m": {message -> null}, "t": last ms} */
	json_t *log; /* event key -> {"name", "count", "first"} */
};

mu__evcorr_t *mu__evcorr_new(void)
{
	mu__evcorr_t *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->agg = json_object();
	c->log = json_object();
	if (!c->agg || !c->log) {
		mu__evcorr_free(c);
		return NULL;
	}
	return c;
}

void mu__evcorr_free(mu__evcorr_t *c)
{
	if (!c)
		return;
	json_decref(c->agg);
	json_decref(c->log);
	free(c);
}

static const char *str(const json_t *e, const char *path)
{
	const char *v = mu__jstr(e, path);
	return v ? v : "";
}

/* The aggregate key of Event e in buf (EventAggregatorByReasonFunc): its
 * source, involved object, type, reason, reporting controller and
 * instance, each ended by a byte no field holds.  O(the fields). */
static void agg_key(const json_t *e, char *buf, size_t len)
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

/* The aggregator's step on e at now (EventAggregate): true when e is to be
 * combined (its message prefixed, key the aggregate key in key), false
 * when it stays as it is (key its event key).  O(1) besides the keys. */
static bool aggregate(mu__evcorr_t *c, json_t *e, int64_t now, char *key, size_t len)
{
	char ak[2400];
	agg_key(e, ak, sizeof ak);
	json_t *rec = json_object_get(c->agg, ak);
	if (rec && now - json_integer_value(json_object_get(rec, "t")) > AGG_WINDOW_MS)
		rec = NULL; /* older than the window: a new record */
	if (!rec) {
		if (json_object_size(c->agg) >= CACHE_MAX)
			json_object_clear(c->agg);
		rec = json_pack("{s:{}, s:I}", "m", "t", (json_int_t)now);
		if (!rec || json_object_set_new(c->agg, ak, rec)) {
			event_key(e, key, len);
			return false;
		}
	}
	json_t *msgs = json_object_get(rec, "m");
	json_object_set_new(msgs, str(e, "message"), json_null());
	json_object_set_new(rec, "t", json_integer(now));
	if (json_object_size(msgs) < AGG_MAX) {
		event_key(e, key, len);
		return false;
	}
	/* sets.PopAny: the set stays below the limit, so every new message
	 * from now on is combined */
	void *it = json_object_iter(msgs);
	if (it)
		json_object_del(msgs, json_object_iter_key(it));
	char msg[2100];
	snprintf(msg, sizeof msg, "(combined from similar events): %s", str(e, "message"));
	json_object_set_new(e, "message", json_string(msg));
	snprintf(key, len, "%s", ak);
	return true;
}

typedef struct bump {
	json_int_t count;
	const char *ts, *msg;
} bump_t;

/* The logger's patch: count, lastTimestamp and message. */
static int bump_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	const bump_t *b = ctx;
	json_t *o = cur ? mu__obj_parse(cur) : NULL;
	if (!o)
		return cur ? MU_ENOMEM : MU_ENOENT;
	json_object_set_new(o, "count", json_integer(b->count));
	json_object_set_new(o, "lastTimestamp", json_string(b->ts));
	json_object_set_new(o, "message", json_string(b->msg));
	*out = o;
	return MU__MUT_PUT;
}

void mu__evcorr_record(mu__evcorr_t *c, mu_apiserver_t *s, mu__wtx_t *tx, json_t *e, const char *manager,
		       int64_t now)
{
	if (!c) {
		mu__create_by(s, tx, MU__RT_EVENTS, e, manager, NULL);
		return;
	}
	char key[2400];
	char ts[40];
	mu__timestamp(ts, sizeof ts, false);
	if (aggregate(c, e, now, key, sizeof key)) {
		/* the combined Event is a new one of its own name
		 * (OBJECT.<hex ns>), as EventAggregate makes it */
		char en[300], sfx[6];
		mu__name_suffix(s, sfx);
		snprintf(en, sizeof en, "%.230s.%s", str(e, "involvedObject.name"), sfx);
		mu__jset(e, "metadata.name", json_string(en));
	}
	json_t *seen = json_object_get(c->log, key);
	const char *ns = str(e, "metadata.namespace");
	if (seen) {
		bump_t b = {json_integer_value(json_object_get(seen, "count")) + 1, ts, str(e, "message")};
		const char *name = json_string_value(json_object_get(seen, "name"));
		int rc = mu__store_apply(tx, MU__RT_EVENTS, ns, name, bump_fn, &b, false, NULL);
		json_object_set_new(seen, "count", json_integer(b.count));
		if (rc != MU_ENOENT)
			return;
		/* deleted meanwhile: created again with the count reached */
		mu__jset(e, "metadata.name", json_string(name));
		mu__jset(e, "count", json_integer(b.count));
		mu__jset(e, "firstTimestamp", json_string(str(seen, "first")));
		mu__jset(e, "lastTimestamp", json_string(ts));
		mu__create_by(s, tx, MU__RT_EVENTS, e, manager, NULL);
		return;
	}
	if (json_object_size(c->log) >= CACHE_MAX)
		json_object_clear(c->log);
	json_t *rec = json_pack("{s:s, s:i, s:s}", "name", str(e, "metadata.name"), "count", 1, "first",
				str(e, "firstTimestamp"));
	if (rec)
		json_object_set_new(c->log, key, rec);
	mu__create_by(s, tx, MU__RT_EVENTS, e, manager, NULL);
}

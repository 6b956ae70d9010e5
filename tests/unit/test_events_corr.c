/*
 * test_events_corr.c - muster up's Event correlator (src/apiserver/
 * events_corr.c) against client-go's own cases: each test below is one of
 * k8s.io/client-go/tools/record/events_cache_test.go (kubernetes/kubernetes
 * staging/src/k8s.io/client-go/tools/record/, read through the search
 * tool; translated, not copied), named after it, with its helpers
 * (makeObjectReference, makeEvent, makeUniqueEvents, makeSimilarEvents,
 * validateEvent) as C functions on core/v1 Event JSON.  client-go's tests
 * run on an IntervalClock that moves on by the interval at every Now():
 * three times per Event in TestEventCorrelator (the test's timestamps, the
 * aggregator, the spam filter), twice in TestEventSpamFilter; here the
 * correlator takes one time per Event, that many intervals apart, which
 * gives the aggregator and the filter the same spans.  The last tests are
 * muster's own, on what those cases leave open: the token bucket's
 * refill, the count of Events the filter dropped, the LRU's eviction.
 */
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "check.h"

/* makeObjectReference */
static json_t *make_ref(const char *kind, const char *name, const char *ns)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "kind", kind, "name", name, "namespace", ns, "uid",
			 "C934D34AFB20242", "apiVersion", "version", "fieldPath", "spec.containers{mycontainer}");
}

/* makeEvent: ref taken; the timestamps are set when it is correlated. */
static json_t *make_event(const char *reason, const char *message, json_t *ref)
{
	return json_pack("{s:s, s:s, s:o, s:{s:s, s:s}, s:i, s:s}", "reason", reason, "message", message,
			 "involvedObject", ref, "source", "component", "kubelet", "host", "kublet.node1", "count", 1,
			 "type", "Normal");
}

static json_t *with_count(json_t *e, int n) /* setCount, on a copy */
{
	json_t *c = json_deep_copy(e);
	json_object_set_new(c, "count", json_integer(n));
	return c;
}

/* makeEvents: n references to e in a new array. */
static json_t *make_events(int n, json_t *e)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append(a, e);
	return a;
}

static json_t *make_unique_events(int n)
{
	json_t *a = json_array();
	char r[32], m[32], name[32], ns[32];
	for (int i = 0; i < n; i++) {
		snprintf(r, sizeof r, "reason-%d", i);
		snprintf(m, sizeof m, "message-%d", i);
		snprintf(name, sizeof name, "pod-%d", i);
		snprintf(ns, sizeof ns, "ns-%d", i);
		json_array_append_new(a, make_event(r, m, make_ref("Pod", name, ns)));
	}
	return a;
}

/* makeSimilarEvents: PREFIX-i-MESSAGE */
static json_t *make_similar_events(int n, json_t *e, const char *prefix)
{
	json_t *a = json_array();
	char m[512];
	for (int i = 0; i < n; i++) {
		json_t *c = json_deep_copy(e);
		snprintf(m, sizeof m, "%s-%d-%s", prefix, i, mu__jstr(e, "message"));
		json_object_set_new(c, "message", json_string(m));
		json_array_append_new(a, c);
	}
	return a;
}

/* Stamps e (a copy) with the time at sec, as the test's loop does. */
static json_t *stamped(json_t *e, int64_t sec)
{
	char ts[40];
	json_t *c = json_deep_copy(e);
	mu__rfc3339_format((1767225600 + sec) * (int64_t)1000000, false, ts, sizeof ts);
	json_object_set_new(c, "firstTimestamp", json_string(ts));
	json_object_set_new(c, "lastTimestamp", json_string(ts));
	return c;
}

/* validateEvent: timestamps set, equal for a count of 1 and different
 * above; the name starts with the expected one's; the rest equal. */
static void validate_event(mu_t_t *t, const char *what, json_t *got, json_t *want)
{
	const char *f = mu__jstr(got, "firstTimestamp"), *l = mu__jstr(got, "lastTimestamp");
	json_int_t n = json_integer_value(json_object_get(want, "count"));
	if (!f || !l || !*f || !*l || (n > 1) == !strcmp(f, l)) {
		fprintf(stderr, "%s: timestamps %s %s for count %lld\n", what, f ? f : "-", l ? l : "-", (long long)n);
		CHECK(t, 0);
	}
	const char *en = mu__jstr(want, "metadata.name"), *gn = mu__jstr(got, "metadata.name");
	CHECK(t, !en || (gn && !strncmp(gn, en, strlen(en))));
	json_t *a = json_deep_copy(got), *b = json_deep_copy(want);
	const char *drop[] = {"firstTimestamp", "lastTimestamp", "metadata", "apiVersion", "kind"};
	for (size_t i = 0; i < sizeof drop / sizeof *drop; i++) {
		json_object_del(a, drop[i]);
		json_object_del(b, drop[i]);
	}
	if (!json_equal(a, b)) {
		char *x = json_dumps(a, JSON_SORT_KEYS), *y = json_dumps(b, JSON_SORT_KEYS);
		fprintf(stderr, "%s:\n got  %s\n want %s\n", what, x, y);
		free(x);
		free(y);
		CHECK(t, 0);
	}
	json_decref(a);
	json_decref(b);
}

/* TestEventAggregatorByReasonFunc: two Events that differ in their message
 * alone share the aggregate key and differ in the local key (the
 * message); another reason makes another aggregate key. */
static void test_EventAggregatorByReasonFunc(mu_t_t *t)
{
	json_t *e1 = make_event("end-of-world", "it was fun", make_ref("Pod", "pod1", "other"));
	json_t *e2 = make_event("end-of-world", "it was awful", make_ref("Pod", "pod1", "other"));
	json_t *e3 = make_event("nevermind", "it was a bug", make_ref("Pod", "pod1", "other"));
	char k1[2400], k2[2400], k3[2400];
	mu__evcorr_agg_key(e1, k1, sizeof k1);
	mu__evcorr_agg_key(e2, k2, sizeof k2);
	mu__evcorr_agg_key(e3, k3, sizeof k3);
	CHECK(t, !strcmp(k1, k2));
	CHECK(t, strcmp(mu__jstr(e1, "message"), mu__jstr(e2, "message")) != 0);
	CHECK(t, strcmp(k1, k3) != 0);
	json_decref(e1);
	json_decref(e2);
	json_decref(e3);
}

/* One correlation at now_s (seconds) of e (borrowed; stamped at ts_s). */
static mu__evcorr_res_t correlate(mu_t_t *t, mu__evcorr_t *c, json_t *e, int64_t ts_s, int64_t now_s)
{
	mu__evcorr_res_t r;
	json_t *s = stamped(e, ts_s);
	CHECK_EQ_INT(t, mu__evcorr_correlate(c, s, now_s * 1000, now_s * 1000000000, &r), MU_OK);
	json_decref(s);
	return r;
}

/* TestEventAggregatorByReasonMessageFunc: the combined Event's message
 * begins "(combined from similar events): " (here through the
 * aggregator, whose message function it is). */
static void test_EventAggregatorByReasonMessageFunc(mu_t_t *t)
{
	mu__evcorr_t *c = mu__evcorr_new();
	json_t *e = make_event("end-of-world", "it was fun", make_ref("Pod", "pod1", "other"));
	json_t *sim = make_similar_events(9, e, "p");
	mu__evcorr_res_t r;
	for (int i = 0; i < 9; i++) {
		r = correlate(t, c, json_array_get(sim, i), i, i);
		json_decref(r.event);
	}
	r = correlate(t, c, e, 9, 9);
	CHECK(t, r.event && !strcmp(mu__jstr(r.event, "message"), "(combined from similar events): it was fun"));
	json_decref(r.event);
	json_decref(sim);
	json_decref(e);
	mu__evcorr_free(c);
}

/* One scenario of TestEventCorrelator: prev (borrowed) played back
 * (UpdateState after each one not skipped), then ev; interval seconds
 * per Now(), three Now()s per Event. */
static void scenario(mu_t_t *t, const char *what, json_t *prev, json_t *ev, json_t *want, int interval, bool skip)
{
	mu__evcorr_t *c = mu__evcorr_new();
	size_t i;
	mu__evcorr_res_t r;
	for (i = 0; i < json_array_size(prev); i++) {
		r = correlate(t, c, json_array_get(prev, i), (3 * (int64_t)i + 1) * interval,
			      (3 * (int64_t)i + 2) * interval);
		if (!r.skip)
			mu__evcorr_update(c, r.event);
		json_decref(r.event);
	}
	r = correlate(t, c, ev, (3 * (int64_t)i + 1) * interval, (3 * (int64_t)i + 2) * interval);
	if (r.skip != skip) {
		fprintf(stderr, "%s: skip %d, expected %d\n", what, r.skip, skip);
		CHECK(t, 0);
	} else if (!skip) {
		validate_event(t, what, r.event, want);
	}
	json_decref(r.event);
	json_decref(prev);
	json_decref(want);
	mu__evcorr_free(c);
}

/* TestEventCorrelator, its nine scenarios. */
static void test_EventCorrelator(mu_t_t *t)
{
	json_t *first = make_event("first", "i am first", make_ref("Pod", "my-pod", "my-ns"));
	json_t *dup = make_event("duplicate", "me again", make_ref("Pod", "my-pod", "my-ns"));
	json_t *uniq = make_event("unique", "snowflake", make_ref("Pod", "my-pod", "my-ns"));
	json_t *sim = make_event("similar", "similar message", make_ref("Pod", "my-pod", "my-ns"));
	mu__jset(sim, "involvedObject.fieldPath", json_string("spec.containers{container1}"));
	json_t *agg = make_event("similar", "(combined from similar events): similar message",
				 json_deep_copy(json_object_get(sim, "involvedObject")));
	json_t *other = json_deep_copy(sim);
	mu__jset(other, "involvedObject.fieldPath", json_string("spec.containers{container2}"));

	scenario(t, "create-a-single-event", json_array(), first, with_count(first, 1), 5, false);
	scenario(t, "the-same-event-should-just-count", make_events(1, dup), dup, with_count(dup, 2), 5, false);
	scenario(t, "the-same-event-should-just-count-even-if-more-than-aggregate", make_events(10, dup), dup,
		 with_count(dup, 11), 30, false);
	scenario(t, "the-same-event-is-spam-if-happens-too-frequently", make_events(26, dup), dup, json_null(), 1,
		 true);
	scenario(t, "create-many-unique-events", make_unique_events(30), uniq, with_count(uniq, 1), 5, false);
	scenario(t, "similar-events-should-aggregate-event", make_similar_events(9, sim, "similar message"), sim,
		 with_count(agg, 1), 5, false);
	scenario(t, "similar-events-many-times-should-count-the-aggregate",
		 make_similar_events(10, sim, "similar message"), sim, with_count(agg, 2), 5, false);
	scenario(t, "events-from-different-containers-do-not-aggregate", make_events(1, other), sim,
		 with_count(sim, 1), 5, false);
	scenario(t, "similar-events-whose-interval-is-greater-than-aggregate-interval-do-not-aggregate",
		 make_similar_events(9, sim, "similar message"), sim, with_count(sim, 1), 600, false);
	json_decref(first);
	json_decref(dup);
	json_decref(uniq);
	json_decref(sim);
	json_decref(agg);
	json_decref(other);
}

/* TestEventSpamFilter's spamKeyFuncBasedOnObjectsAndReason */
static void spam_key_reason(const json_t *e, char *buf, size_t len)
{
	char k[2400];
	mu__evcorr_spam_key(e, k, sizeof k);
	const char *r = mu__jstr(e, "reason");
	snprintf(buf, len, "%s\x1f%s", k, r ? r : "");
}

static void spam_case(mu_t_t *t, const char *what, json_t *ev, json_t *want, bool skip, mu__evcorr_spamkey_fn fn)
{
	mu__evcorr_opts_t o = {.burst = 1, .spam_key = fn};
	mu__evcorr_t *c = mu__evcorr_new_with(&o);
	json_t *orig = make_event("original", "i am first", make_ref("Pod", "my-pod", "my-ns"));
	mu__evcorr_res_t r = correlate(t, c, orig, 0, 1); /* two Now()s per Event, 1 s apart */
	if (!r.skip)
		mu__evcorr_update(c, r.event);
	json_decref(r.event);
	r = correlate(t, c, ev, 0, 3);
	if (r.skip != skip) {
		fprintf(stderr, "%s: skip %d, expected %d\n", what, r.skip, skip);
		CHECK(t, 0);
	} else if (!skip) {
		json_t *w = stamped(want, 0);
		validate_event(t, what, r.event, w);
		json_decref(w);
	}
	json_decref(r.event);
	json_decref(orig);
	mu__evcorr_free(c);
}

/* TestEventSpamFilter, burst 1, its three cases. */
static void test_EventSpamFilter(mu_t_t *t)
{
	json_t *diff = make_event("duplicate", "me again", make_ref("Pod", "my-pod", "my-ns"));
	json_t *spam = make_event("original", "me again", make_ref("Pod", "my-pod", "my-ns"));
	spam_case(t, "event should be reported as spam if object reference is the same for default spam filter", diff,
		  NULL, true, NULL);
	spam_case(t, "event should not be reported as spam if object reference is the same, but reason is different "
		     "for custom spam filter",
		  diff, diff, false, spam_key_reason);
	spam_case(t, "event should  be reported as spam if object reference and reason is the same, but message is "
		     "different for custom spam filter",
		  spam, NULL, true, spam_key_reason);
	json_decref(diff);
	json_decref(spam);
}

/* muster's own: the bucket holds 25 and refills one token per 300 s (a
 * float32 1/300 per second: 299 s give 0.997 of a token, 300 s 1.00000002),
 * and the logger counts the dropped ones: the Event
 * written after them carries their count, as client-go's (eventObserve
 * runs before the filter). */
static void test_spam_refill_and_count(mu_t_t *t)
{
	mu__evcorr_t *c = mu__evcorr_new();
	json_t *e = make_event("r", "same", make_ref("Pod", "p", "ns"));
	mu__evcorr_res_t r;
	int written = 0;
	for (int i = 0; i < 30; i++) {
		r = correlate(t, c, e, 0, 0);
		written += !r.skip;
		if (!r.skip)
			mu__evcorr_update(c, r.event);
		json_decref(r.event);
	}
	CHECK_EQ_INT(t, written, 25);
	r = correlate(t, c, e, 299, 299);
	CHECK(t, r.skip);
	json_decref(r.event);
	r = correlate(t, c, e, 300, 300);
	CHECK(t, !r.skip && r.event);
	CHECK_EQ_INT(t, json_integer_value(json_object_get(r.event, "count")), 32);
	json_decref(r.event);
	/* another object of the same source has a bucket of its own */
	json_t *o = make_event("r", "same", make_ref("Pod", "q", "ns"));
	r = correlate(t, c, o, 301, 301);
	CHECK(t, !r.skip);
	json_decref(r.event);
	json_decref(o);
	json_decref(e);
	mu__evcorr_free(c);
}

/* muster's own: each cache is an LRU of 4096 keys (groupcache's lru):
 * 4096 other Events after the first evict it from the logger, so the
 * first is new again (count 1); one read in between keeps it. */
static void test_lru(mu_t_t *t)
{
	char m[32];
	for (int keep = 0; keep < 2; keep++) {
		mu__evcorr_t *c = mu__evcorr_new();
		json_t *e0 = make_event("r0", "m", make_ref("Pod", "p0", "ns"));
		mu__evcorr_res_t r = correlate(t, c, e0, 0, 0);
		mu__evcorr_update(c, r.event);
		json_decref(r.event);
		for (int i = 1; i <= 4096; i++) {
			snprintf(m, sizeof m, "p%d", i);
			json_t *e = make_event("r", "m", make_ref("Pod", m, "ns"));
			r = correlate(t, c, e, i, i);
			json_decref(r.event);
			json_decref(e);
			if (keep && i == 4000) { /* read: newest again */
				r = correlate(t, c, e0, i, i);
				json_decref(r.event);
			}
		}
		r = correlate(t, c, e0, 5000, 5000);
		CHECK_EQ_INT(t, r.event ? json_integer_value(json_object_get(r.event, "count")) : -1, keep ? 3 : 1);
		json_decref(r.event);
		json_decref(e0);
		mu__evcorr_free(c);
	}
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_EventAggregatorByReasonFunc);
	MU_RUN(&t, test_EventAggregatorByReasonMessageFunc);
	MU_RUN(&t, test_EventCorrelator);
	MU_RUN(&t, test_EventSpamFilter);
	MU_RUN(&t, test_spam_refill_and_count);
	MU_RUN(&t, test_lru);
	return mu_t_done(&t);
}

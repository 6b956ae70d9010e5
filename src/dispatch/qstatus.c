/*
 * qstatus.c - a hub Queue's condition Active, written on its status by the
 * dispatcher.  kube's own Queue kinds say on their status whether they
 * can take work (Kueue's ClusterQueue: the condition Active, False with
 * the reason while its spec refers to something it cannot use, True
 * "Ready" otherwise); muster's scheduler writes a Queue's fair share,
 * usage and job counts there.  The dispatcher writes the condition
 * Active: False with reason InvalidQueue and the same message as its
 * Warning Event (a bad muster.io/cluster-caps, a spec the loader
 * refuses, a parent that would close a loop), True with reason Ready
 * once the Queue is taken.  The write is a merge patch of the status
 * subresource, made only when the condition on the object differs, with
 * lastTransitionTime moved only when the status flips, and the version
 * read as a precondition; the version it makes is handed back, so that
 * hub.c does not read its own write as a change of the Queue (and say a
 * bad one twice).  Since round 13 it also writes the fleet's fairShare,
 * usage, pendingJobs and runningJobs on each Queue's status, the fields
 * and formats of muster's scheduler (src/kube/metrics.c), at most once a
 * second and only when a value moved; hub.c tells a Queue's change by its
 * spec, labels and annotations, as controllers compare generation and
 * spec, so these writes are not read as one.  Calls only dutil.c; hub.c
 * and run.c call it.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"
#include "muster/util.h"

/* Whether c's string field key is want.  O(1). */
static bool str_is(const json_t *c, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(c, key));
	return v && !strcmp(v, want);
}

/* o's condition of type t, or NULL.  O(conditions). */
static const json_t *cond_of(const json_t *o, const char *t)
{
	size_t i;
	const json_t *c;
	json_array_foreach(mu__jget(o, "status.conditions"), i, c)
		if (str_is(c, "type", t))
			return c;
	return NULL;
}

void mu__dqueue_cond(mu__dd_t *d, const json_t *o, const char *bad, char *rv, size_t rvlen)
{
	if (rvlen)
		rv[0] = '\0';
	const char *name = mu__jstr(o, "metadata.name");
	if (!name)
		return;
	const char *st = bad ? "False" : "True", *reason = bad ? "InvalidQueue" : "Ready";
	const char *msg = bad ? bad : "taken by the dispatcher: its jobs are queued on the hub";
	const json_t *had = cond_of(o, "Active");
	if (had && str_is(had, "status", st) && str_is(had, "reason", reason) &&
	    str_is(had, "message", msg))
		return;
	char now[40], path[600];
	if (had && str_is(had, "status", st) && json_string_value(json_object_get(had, "lastTransitionTime"))) {
		snprintf(now, sizeof now, "%s", json_string_value(json_object_get(had, "lastTransitionTime")));
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		mu__rfc3339_format((int64_t)ts.tv_sec * 1000000, false, now, sizeof now);
	}
	json_t *gen = json_object_get(mu__jget(o, "metadata"), "generation");
	/* the version read is a precondition (409 if the Queue changed
	 * since): the version handed back is then only this write's */
	const char *orv = mu__jstr(o, "metadata.resourceVersion");
	json_t *body = json_pack("{s:{s:s},s:{s:[{s:s,s:s,s:s,s:s,s:s,s:I}]}}", "metadata",
				 "resourceVersion", orv ? orv : "", "status", "conditions",
				 "type", "Active", "status", st, "reason", reason, "message", msg,
				 "lastTransitionTime", now, "observedGeneration",
				 (json_int_t)(json_is_integer(gen) ? json_integer_value(gen) : 0));
	if (body && !orv)
		json_object_del(body, "metadata");
	snprintf(path, sizeof path, "/apis/muster.io/v1alpha1/queues/%.500s/status", name);
	json_t *ans = NULL;
	long code = body ? mu__dreq(d, d->hub, "PATCH", path, "application/merge-patch+json",
				    body, &ans) : 0;
	const char *nrv = mu__jstr(ans, "metadata.resourceVersion");
	if (code == 409) /* changed meanwhile: its next version is read again */
		mu__dlog(d, 2, "queue %s: changed before its condition was written", name);
	else if (code / 100 != 2)
		mu__dlog(d, 0, "queue %s: condition Active=%s not written (HTTP %ld)", name, st, code);
	else if (nrv && rvlen)
		snprintf(rv, rvlen, "%s", nrv);
	json_decref(ans);
	json_decref(body);
}

char *mu__dqueue_sig(const json_t *o)
{
	json_t *what = json_pack("{s:O?,s:O?,s:O?}", "spec", json_object_get(o, "spec"), "labels",
				 mu__jget(o, "metadata.labels"), "annotations",
				 mu__jget(o, "metadata.annotations"));
	char *sig = what ? json_dumps(what, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(what);
	return sig;
}

json_t *mu__dqueue_status_json(const mu_fleet_queue_info_t *qi)
{
	return mu_kube_queue_status(&qi->fair, &qi->used, qi->queued, qi->running);
}

void mu__dqueue_status(mu__dd_t *d)
{
	int64_t t = mu__d_mono_ms();
	if (d->queue_st_at && t - d->queue_st_at < 1000)
		return;
	d->queue_st_at = t;
	if (!d->queue_st && !(d->queue_st = json_object()))
		return;
	for (int32_t q = 0; q < mu_fleet_nqueues(d->fleet); q++) {
		mu_fleet_queue_info_t qi;
		if (mu_fleet_queue_info(d->fleet, q, &qi) || !json_object_get(d->queue_rv, qi.name))
			continue; /* not (or no longer) a Queue of the hub */
		json_t *st = mu__dqueue_status_json(&qi);
		if (!st || json_equal(st, json_object_get(d->queue_st, qi.name))) {
			json_decref(st);
			continue;
		}
		char path[600];
		snprintf(path, sizeof path, "/apis/muster.io/v1alpha1/queues/%.500s/status", qi.name);
		json_t *body = json_pack("{s:O}", "status", st);
		long code = body ? mu__dreq(d, d->hub, "PATCH", path, "application/merge-patch+json",
					    body, NULL) : 0;
		json_decref(body);
		if (code / 100 == 2) {
			json_object_set_new(d->queue_st, qi.name, st);
		} else { /* tried again at the next second */
			mu__dlog(d, code == 404 ? 2 : 0, "queue %s: status not written (HTTP %ld)",
				 qi.name, code);
			json_decref(st);
		}
	}
}

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
 * bad one twice).  Calls only
 * dutil.c; hub.c calls it.
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

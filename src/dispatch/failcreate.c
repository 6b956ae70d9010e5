/*
 * failcreate.c - a copy whose pods its worker refuses.  Kubernetes' Job
 * controller records a Warning Event of reason FailedCreate on a Job
 * whose pod it cannot create ("Error creating: pods "JOB-" is forbidden:
 * no PriorityClass with name X was found"); it has no condition for it.
 * A push worker's Events of that reason are watched (the field selector
 * reason=FailedCreate); one about the current copy of a hub Job (its
 * involvedObject.uid is the copy's), while no pod of it was bound, is
 * what the hub Job's FailedCreate says at once (its dispatch reason and
 * message, the condition Dispatched's reason, a Warning Event on the hub
 * object).  The copy is left to the worker's Job controller, which
 * retries; if no pod of it is bound by --start-timeout the job ends
 * NotAdmitted (run.c) as a copy whose create is refused does, instead of
 * being withdrawn and sent again with a new generation each time.  Pull
 * mode does not report these Events (docs/dispatch.md, Gaps).  Called by
 * worker.c's poll; uses hub.c's lookups.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"

/* Reads c's FailedCreate Events into c->fails (copy uid -> message) when
 * the watch moved.  O(1) when it did not, else O(events). */
static void fails_read(mu__dcl_t *c)
{
	uint64_t seq = 0;
	json_t *l = NULL;
	if (!c->wfail || !mu_kube_watch_items(c->wfail, NULL, &seq) || seq == c->fail_seq ||
	    !mu_kube_watch_items(c->wfail, &l, &seq))
		return;
	c->fail_seq = seq;
	json_t *m = json_object();
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(l, "items"), i, e) {
		const char *r = mu__jstr(e, "reason"), *k = mu__jstr(e, "involvedObject.kind");
		const char *uid = mu__jstr(e, "involvedObject.uid");
		if (r && !strcmp(r, "FailedCreate") && k && !strcmp(k, "Job") && uid && *uid)
			json_object_set_new(m, uid, json_string(mu__jstr(e, "message") ?
								mu__jstr(e, "message") : "FailedCreate"));
	}
	json_decref(l);
	json_decref(c->fails);
	c->fails = m;
}

void mu__dfailed_poll(mu__dd_t *d, mu__dcl_t *c, const json_t *jl)
{
	fails_read(c);
	if (!json_object_size(c->fails))
		return;
	int32_t ci = (int32_t)(c - d->cls);
	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(jl, "items"), i, w) {
		const char *msg = json_string_value(json_object_get(c->fails, mu__jstr(w, "metadata.uid") ?
								     mu__jstr(w, "metadata.uid") : ""));
		if (!msg)
			continue;
		mu__djob_t *j = mu__dhub_job_by_uid(d, mu__dmeta(w, "labels", MU__D_HUBUID));
		const char *gen = mu__dmeta(w, "annotations", MU__D_GEN);
		char g[16];
		if (!j || j->kind != MU__DK_JOB || j->cl != ci || j->state != MU__DJ_DISPATCHED ||
		    j->started || j->failed_create)
			continue;
		snprintf(g, sizeof g, "%u", j->gen);
		if (!gen || strcmp(gen, g))
			continue;
		char m[900];
		snprintf(m, sizeof m, "cluster %s cannot create its pods: %.800s", c->name, msg);
		j->failed_create = strdup(m);
		mu__dlog(d, 0, "job %s: %s", j->key, m);
		mu__dhub_event(d, j, "Warning", "FailedCreate", m);
	}
}

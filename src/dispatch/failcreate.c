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
 * being withdrawn and sent again with a new generation each time.  In
 * pull mode the agent watches its worker's Events of that reason the
 * same way (mu__dfails_read) and reports the message for the current copy
 * of a Job whose pods are all still pending, in the hub object's
 * annotation muster.io/dispatch-copy-failed ("GEN message"), which
 * mu__dfailed_pull reads as push mode reads the Event; since round 16
 * also for a copy of any kind that the agent does not make because the
 * worker refuses the copy of a DRA object its pods name (hdra.c: a
 * same-named object the dispatcher did not make), which push mode
 * refuses at once; since round 17 that refusal is its own annotation
 * (muster.io/dispatch-copy-refused), which ends the hub object
 * NotAdmitted at once too (since round 21 only for the copy of the
 * object itself: a group's pod so refused is held, worker.c's
 * mu__dwork_pull_held).  Called by
 * worker.c's polls and agent.c; uses hub.c's lookups.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"

void mu__dfails_read(mu_kube_watch_t *wf, uint64_t *fail_seq, json_t **fails)
{
	uint64_t seq = 0;
	json_t *l = NULL;
	if (!wf || !mu_kube_watch_items(wf, NULL, &seq) || seq == *fail_seq ||
	    !mu_kube_watch_items(wf, &l, &seq))
		return;
	*fail_seq = seq;
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
	json_decref(*fails);
	*fails = m;
}

/* Marks hub Job j, dispatched to c and not started, as refused by c's
 * Job controller with msg (once per copy): its reason and message, and a
 * Warning Event on the hub object.  O(1). */
static void mark(mu__dd_t *d, const mu__dcl_t *c, mu__djob_t *j, const char *msg)
{
	char m[900];
	snprintf(m, sizeof m, "cluster %s cannot create its pods: %.800s", c->name, msg);
	j->failed_create = strdup(m);
	mu__dlog(d, 0, "job %s: %s", j->key, m);
	mu__dhub_event(d, j, "Warning", "FailedCreate", m);
}

void mu__dfailed_pull(mu__dd_t *d, mu__dcl_t *c, mu__djob_t *j)
{
	/* a refusal (round 17): ends the job at once, as push mode's */
	const char *rf = mu__dmeta(j->obj, "annotations", MU__D_COPYREFUSED);
	unsigned gen = 0;
	int off = 0;
	if (rf && !j->refused && j->cl == (int32_t)(c - d->cls) && j->state == MU__DJ_DISPATCHED &&
	    sscanf(rf, "%u %n", &gen, &off) == 1 && gen == j->gen && off > 0 && rf[off]) {
		j->refused = strdup(rf + off);
		return;
	}
	const char *a = mu__dmeta(j->obj, "annotations", MU__D_COPYFAIL);
	gen = 0;
	off = 0;
	if (!a || j->cl != (int32_t)(c - d->cls) ||
	    j->state != MU__DJ_DISPATCHED || j->started || j->failed_create ||
	    sscanf(a, "%u %n", &gen, &off) != 1 || gen != j->gen || off <= 0 || !a[off])
		return;
	mark(d, c, j, a + off);
}

void mu__dfailed_poll(mu__dd_t *d, mu__dcl_t *c, const json_t *jl)
{
	mu__dfails_read(c->wfail, &c->fail_seq, &c->fails);
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
		mark(d, c, j, msg);
	}
}

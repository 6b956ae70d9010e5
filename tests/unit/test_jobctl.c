/*
 * test_jobctl.c - when muster up's Job controller (src/apiserver/jobctl.c)
 * reconciles, as Kubernetes' Job controller enqueues: a Job added, or
 * changed in its spec (a new metadata.generation), at the next sync; a
 * Job's change that keeps its generation, and a pod's event, one batch
 * period (1 s) after the first such event, folded into one reconcile.
 * The controller runs here on a store of its own, without a server
 * thread: the test hands it events and the clock.  A reconcile shows as
 * the status the controller writes on a suspended Job (the Suspended
 * condition and the counts).  A reconcile that has nothing to write (read
 * from the Job's text and its status alone, quick_keep) leaves the Job's
 * version as it is, and one that has (a status another writer changed)
 * writes it back.  A pod that admission refuses (a PriorityClass that
 * does not exist) is recorded as Kubernetes' Job controller records it:
 * a Warning Event FailedCreate on the Job, written once; a pod it creates
 * is recorded as Kubernetes' pod control records it: a Normal Event
 * SuccessfulCreate "Created pod: POD" on the Job, one per pod.  Its
 * status writes own their fields in managedFields as the real
 * controller's /status updates do, the same entry for each Job, most of
 * them from the controller's memo.  Its other Events are kube's, each on
 * its transition and once: SuccessfulDelete for a pod a suspend or a
 * lowered parallelism deletes, Suspended, Resumed, Completed and
 * BackoffLimitExceeded.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apiserver/api_int.h"
#include "apiserver/apiserver_int.h"
#include "apiserver/crd.h"
#include "check.h"

static char dir[64];

/* Puts a suspended Job ns "default", name ctx, generation gen (no status). */
typedef struct job_put {
	const char *name;
	int gen;
	const char *note; /* an annotation value, to change the text */
} job_put_t;

static int job_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	const job_put_t *p = ctx;
	(void)cur;
	*out = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i, s:{s:s}}, s:{s:b, s:i, s:{s:{s:s}, s:{s:s, s:[{s:s, s:s}]}}}}",
			 "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", p->name, "namespace", "default",
			 "uid", p->name, "generation", p->gen, "annotations", "note", p->note ? p->note : "",
			 "spec", "suspend", 1, "parallelism", 1, "template", "metadata", "labels", "app", "x",
			 "spec", "restartPolicy", "Never", "containers", "name", "c", "image", "x");
	return MU__MUT_PUT;
}

static mu__obj_t *put_job(mu_apiserver_t *s, const char *name, int gen, const char *note)
{
	job_put_t p = {name, gen, note};
	mu__obj_t *o = NULL;
	if (mu__store_mutate(s->store, MU__RT_JOBS, "default", name, job_fn, &p, false, &o) < 0)
		return NULL;
	return o;
}

/* Whether the controller wrote the Job's status (a reconcile ran). */
static bool reconciled(mu_apiserver_t *s, const char *name)
{
	mu__obj_t *o = mu__store_get(s->store, MU__RT_JOBS, "default", name);
	bool yes = o && strstr(o->json, "\"JobSuspended\"") != NULL;
	mu__obj_unref(o);
	return yes;
}

/* Sets the stored Job's status.active to 5 (another writer's change). */
static int active5_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)ctx;
	if (!cur)
		return MU_ENOENT;
	*out = mu__obj_parse(cur);
	mu__jset(*out, "status.active", json_integer(5));
	return MU__MUT_PUT;
}

static int64_t job_rv(mu_apiserver_t *s, const char *name)
{
	mu__obj_t *o = mu__store_get(s->store, MU__RT_JOBS, "default", name);
	int64_t rv = o ? o->rv : -1;
	mu__obj_unref(o);
	return rv;
}

static void event(mu__jobctl_t *jc, int type, mu__obj_t *obj, mu__obj_t *prev, int64_t now)
{
	mu__wev_t ev = {type, obj, prev};
	mu__jobctl_event(jc, &ev, now);
}

/* A store in DIR/sub (dir itself when sub is NULL) and a Job controller
 * on it, as muster up makes them; NULL when either failed (the failure
 * checked in t).  Release with server_close(). */
static mu__jobctl_t *server_open(mu_t_t *t, mu_apiserver_t *s, const char *sub)
{
	memset(s, 0, sizeof *s);
	CHECK_EQ_INT(t, mu__types_new(&s->types), MU_OK);
	char err[256], path[96];
	snprintf(path, sizeof path, "%s%s%s", dir, sub ? "/" : "", sub ? sub : "");
	mu__store_opts_t so = {.dir = path, .ring = 1000, .types = s->types};
	CHECK_EQ_INT(t, mu__store_open(&so, &s->store, err, sizeof err), MU_OK);
	pthread_mutex_init(&s->rnd_mu, NULL);
	mu__jobctl_t *jc = NULL;
	CHECK_EQ_INT(t, mu__jobctl_new(s, &jc), MU_OK);
	return s->store ? jc : NULL;
}

static void server_close(mu_apiserver_t *s, mu__jobctl_t *jc)
{
	mu__jobctl_free(jc);
	mu__store_close(s->store);
	mu__types_free(s->types);
	pthread_mutex_destroy(&s->rnd_mu);
}

static void test_batching(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, NULL);
	if (!jc)
		return;

	/* added: reconciled at the next sync (two jobs, their writes in one
	 * transaction) */
	mu__obj_t *a = put_job(&s, "added", 1, NULL), *a2 = put_job(&s, "added2", 1, NULL);
	event(jc, MU__EV_ADDED, a, NULL, 0);
	event(jc, MU__EV_ADDED, a2, NULL, 0);
	CHECK_EQ_INT(t, (int)mu__jobctl_sync(jc, 0), -1);
	CHECK(t, reconciled(&s, "added") && reconciled(&s, "added2"));

	/* a change that keeps the generation (an annotation, a status
	 * write): batched for 1 s, and a second change within it folds in */
	mu__obj_t *b1 = put_job(&s, "batched", 1, NULL);
	mu__obj_t *b2 = put_job(&s, "batched", 1, "again \"q\" \\"); /* escapes in the text */
	event(jc, MU__EV_MODIFIED, b2, b1, 100);
	CHECK_EQ_INT(t, (int)mu__jobctl_sync(jc, 100), 1000);
	CHECK(t, !reconciled(&s, "batched"));
	event(jc, MU__EV_MODIFIED, b2, b1, 600); /* due at 1100 still */
	CHECK_EQ_INT(t, (int)mu__jobctl_sync(jc, 1099), 1);
	CHECK(t, !reconciled(&s, "batched"));
	CHECK_EQ_INT(t, (int)mu__jobctl_sync(jc, 1100), -1);
	CHECK(t, reconciled(&s, "batched"));

	/* a pod's event names its job (label job-name): batched too */
	mu__obj_t *p1 = put_job(&s, "podded", 1, NULL);
	json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:[{s:s, s:s}]}}", "apiVersion", "v1", "kind",
				"Pod", "metadata", "name", "podded-x", "namespace", "default", "labels",
				"batch.kubernetes.io/job-name", "podded", "spec", "containers", "name", "c", "image", "x");
	mu__obj_t *po = mu__obj_new(MU__RT_PODS, mu__type(s.types, MU__RT_PODS), pod, 1);
	json_decref(pod);
	CHECK(t, po != NULL);
	if (po)
		event(jc, MU__EV_ADDED, po, NULL, 2000);
	CHECK_EQ_INT(t, (int)mu__jobctl_sync(jc, 2000), 1000);
	CHECK(t, !reconciled(&s, "podded"));

	/* a spec change (a new generation) is not batched, and takes a job
	 * out of the batch it waited in (it is reconciled now) */
	mu__obj_t *g1 = put_job(&s, "spec", 1, NULL);
	mu__obj_t *g2 = put_job(&s, "spec", 2, NULL);
	event(jc, MU__EV_MODIFIED, g2, g1, 2500);
	CHECK_EQ_INT(t, (int)mu__jobctl_sync(jc, 2500), 500); /* "podded" waits to 3000 */
	CHECK(t, reconciled(&s, "spec"));
	CHECK(t, !reconciled(&s, "podded"));
	CHECK_EQ_INT(t, (int)mu__jobctl_sync(jc, 3000), -1);
	CHECK(t, reconciled(&s, "podded"));

	/* nothing to write: the version stays; a status another writer
	 * changed is written back */
	int64_t rv = job_rv(&s, "batched");
	mu__obj_t *cur = mu__store_get(s.store, MU__RT_JOBS, "default", "batched");
	event(jc, MU__EV_MODIFIED, cur, cur, 4000);
	CHECK_EQ_INT(t, (int)mu__jobctl_sync(jc, 5000), -1);
	CHECK_EQ_INT(t, (int)job_rv(&s, "batched"), (int)rv);
	mu__obj_t *bad = NULL;
	CHECK(t, mu__store_mutate(s.store, MU__RT_JOBS, "default", "batched", active5_fn, NULL, false, &bad) >= 0);
	if (bad)
		event(jc, MU__EV_MODIFIED, bad, cur, 6000);
	CHECK_EQ_INT(t, (int)mu__jobctl_sync(jc, 7000), -1);
	mu__obj_t *fixed = mu__store_get(s.store, MU__RT_JOBS, "default", "batched");
	CHECK(t, fixed && fixed->rv > bad->rv && strstr(fixed->json, "\"active\":0"));
	mu__obj_unref(fixed);
	mu__obj_unref(bad);
	mu__obj_unref(cur);

	mu__obj_unref(a);
	mu__obj_unref(a2);
	mu__obj_unref(b1);
	mu__obj_unref(b2);
	mu__obj_unref(p1);
	mu__obj_unref(po);
	mu__obj_unref(g1);
	mu__obj_unref(g2);
	server_close(&s, jc);
}

/* The namespace's `default` ServiceAccount, which muster up's
 * serviceaccounts controller (sactl.c) makes and ServiceAccount admission
 * (saadmit.c) looks up for each pod the Job controller creates. */
static int sa_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)ctx;
	(void)cur;
	*out = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind", "ServiceAccount", "metadata",
			 "name", "default", "namespace", "default", "uid", "default-sa-uid");
	return MU__MUT_PUT;
}

static void put_default_sa(mu_t_t *t, mu_apiserver_t *s)
{
	mu__obj_t *o = NULL;
	CHECK(t, mu__store_mutate(s->store, MU__RT_SERVICEACCOUNTS, "default", "default", sa_fn, NULL, false, &o) >= 0);
	mu__obj_unref(o);
}

/* An unsuspended Job whose template names a missing PriorityClass. */
static int refused_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)ctx;
	(void)cur;
	*out = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i}, s:{s:i, s:{s:{s:{s:s}}, s:{s:s, s:s, s:[{s:s, s:s}]}}}}",
			 "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", "refused", "namespace",
			 "default", "uid", "refused-uid", "generation", 1, "spec", "parallelism", 1, "template",
			 "metadata", "labels", "app", "x", "spec", "restartPolicy", "Never",
			 "priorityClassName", "nosuch", "containers", "name", "c", "image", "x");
	return MU__MUT_PUT;
}

static void test_failed_create(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "fc");
	if (!jc)
		return;
	put_default_sa(t, &s);
	mu__obj_t *o = NULL;
	CHECK(t, mu__store_mutate(s.store, MU__RT_JOBS, "default", "refused", refused_fn, NULL, false, &o) >= 0);
	if (o)
		event(jc, MU__EV_ADDED, o, NULL, 0);
	mu__jobctl_sync(jc, 0);
	mu__obj_t *e = mu__store_get(s.store, MU__RT_EVENTS, "default", "refused.failedcreate");
	CHECK(t, e != NULL);
	if (e) {
		CHECK(t, strstr(e->json, "\"reason\":\"FailedCreate\"") != NULL);
		CHECK(t, strstr(e->json, "\"type\":\"Warning\"") != NULL);
		CHECK(t, strstr(e->json, "\"uid\":\"refused-uid\"") != NULL);
		CHECK(t, strstr(e->json, "Error creating: pods \\\"refused-\\\" is forbidden: no PriorityClass "
			  "with name nosuch was found") != NULL);
	}
	/* retried: no second write */
	int64_t rv = e ? e->rv : -1;
	mu__obj_unref(e);
	if (o)
		event(jc, MU__EV_MODIFIED, o, o, 10);
	mu__jobctl_sync(jc, 5000);
	e = mu__store_get(s.store, MU__RT_EVENTS, "default", "refused.failedcreate");
	CHECK(t, e && e->rv == rv);
	mu__obj_unref(e);
	mu__obj_unref(o);
	server_close(&s, jc);
}

/* An unsuspended Job of parallelism 2 (fresh: no status), its template
 * labelled as the API server's Job strategy labels it. */
static int run2_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)ctx;
	(void)cur;
	*out = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i}, s:{s:i, s:{s:{s:{s:s, s:s}}, s:{s:s, s:[{s:s, s:s}]}}}}",
			 "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", "two", "namespace",
			 "default", "uid", "two-uid", "generation", 1, "spec", "parallelism", 2, "template",
			 "metadata", "labels", "batch.kubernetes.io/controller-uid", "two-uid",
			 "batch.kubernetes.io/job-name", "two", "spec", "restartPolicy", "Never",
			 "containers", "name", "c", "image", "x");
	return MU__MUT_PUT;
}

/* Each pod the controller creates is recorded as Kubernetes' pod control
 * records it: a Normal Event SuccessfulCreate "Created pod: POD" on the
 * Job; and a reconcile that creates nothing records nothing. */
static void test_successful_create(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "sc");
	if (!jc)
		return;
	put_default_sa(t, &s);
	mu__obj_t *o = NULL;
	CHECK(t, mu__store_mutate(s.store, MU__RT_JOBS, "default", "two", run2_fn, NULL, false, &o) >= 0);
	if (o)
		event(jc, MU__EV_ADDED, o, NULL, 0);
	mu__jobctl_sync(jc, 0);
	for (int round = 0; round < 2; round++) {
		mu__page_t pods, evs;
		CHECK_EQ_INT(t, mu__store_list(s.store, MU__RT_PODS, "default", NULL, 100, NULL, NULL, &pods), MU_OK);
		CHECK_EQ_INT(t, mu__store_list(s.store, MU__RT_EVENTS, "default", NULL, 100, NULL, NULL, &evs), MU_OK);
		CHECK_EQ_INT(t, (int)pods.n, 2);
		CHECK_EQ_INT(t, (int)evs.n, 2);
		for (size_t i = 0; i < pods.n; i++) {
			char want[400];
			snprintf(want, sizeof want, "\"message\":\"Created pod: %s\"", pods.objs[i]->name);
			int found = 0;
			for (size_t k = 0; k < evs.n; k++)
				found += strstr(evs.objs[k]->json, want) && strstr(evs.objs[k]->json, "\"reason\":\"SuccessfulCreate\"") &&
					 strstr(evs.objs[k]->json, "\"type\":\"Normal\"") &&
					 strstr(evs.objs[k]->json, "\"uid\":\"two-uid\"") &&
					 strstr(evs.objs[k]->json, "\"component\":\"job-controller\"");
			CHECK_EQ_INT(t, found, 1);
		}
		mu__page_release(&pods);
		mu__page_release(&evs);
		/* marked again: nothing more to create, nothing more recorded */
		mu__obj_t *cur = mu__store_get(s.store, MU__RT_JOBS, "default", "two");
		if (cur)
			event(jc, MU__EV_MODIFIED, cur, cur, 10);
		mu__obj_unref(cur);
		mu__jobctl_sync(jc, 5000);
	}
	mu__obj_unref(o);
	server_close(&s, jc);
}

/* An unsuspended Job of parallelism 1 named ctx (fresh: no status). */
static int run1_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	const char *name = ctx;
	char uid[64];
	(void)cur;
	snprintf(uid, sizeof uid, "%s-uid", name);
	*out = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i}, s:{s:i, s:{s:{s:{s:s, s:s}}, s:{s:s, s:[{s:s, s:s}]}}}}",
			 "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", name, "namespace",
			 "default", "uid", uid, "generation", 1, "spec", "parallelism", 1, "template",
			 "metadata", "labels", "batch.kubernetes.io/controller-uid", uid,
			 "batch.kubernetes.io/job-name", name, "spec", "restartPolicy", "Never",
			 "containers", "name", "c", "image", "x");
	return MU__MUT_PUT;
}

/* The stored Job's managedFields entry of the Job controller's status
 * writes, as compact sorted text without its time (owned; NULL when it
 * has none). */
static char *ctl_entry(mu_apiserver_t *s, const char *name)
{
	mu__obj_t *o = mu__store_get(s->store, MU__RT_JOBS, "default", name);
	json_t *j = o ? mu__obj_parse(o) : NULL;
	mu__obj_unref(o);
	char *out = NULL;
	size_t i;
	json_t *e;
	json_array_foreach(mu__jget(j, "metadata.managedFields"), i, e) {
		const char *m = json_string_value(json_object_get(e, "manager"));
		const char *sub = json_string_value(json_object_get(e, "subresource"));
		if (m && sub && !strcmp(m, "kube-controller-manager") && !strcmp(sub, "status")) {
			json_object_del(e, "time");
			out = json_dumps(e, JSON_COMPACT | JSON_SORT_KEYS);
		}
	}
	json_decref(j);
	return out;
}

/* The controller's status writes record in managedFields what Kubernetes'
 * Job controller's /status updates record: an Update entry of
 * kube-controller-manager on the status subresource that owns the status
 * fields it wrote, the same for every Job written the same way; the
 * writes after the first of a shape take it from the memo (round 12:
 * no copy of the whole Job and no record in full each time). */
static void test_status_fields(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "sf");
	if (!jc)
		return;
	put_default_sa(t, &s);
	static const char *const names[] = {"ja", "jb", "jc"};
	for (int k = 0; k < 3; k++) {
		mu__obj_t *o = NULL;
		CHECK(t, mu__store_mutate(s.store, MU__RT_JOBS, "default", names[k], run1_fn, (void *)names[k], false,
					  &o) >= 0);
		if (o)
			event(jc, MU__EV_ADDED, o, NULL, 0);
		mu__obj_unref(o);
	}
	mu__jobctl_sync(jc, 0);
	const char *want = "{\"apiVersion\":\"batch/v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":"
			   "{\"f:active\":{},\"f:failed\":{},\"f:ready\":{},\"f:startTime\":{},\"f:succeeded\":{},\"f:terminating\":{},"
			   "\"f:uncountedTerminatedPods\":{}}},"
			   "\"manager\":\"kube-controller-manager\",\"operation\":\"Update\",\"subresource\":\"status\"}";
	for (int k = 0; k < 3; k++) {
		char *e = ctl_entry(&s, names[k]);
		CHECK_STR(t, e ? e : "(none)", want);
		free(e);
		mu__obj_t *o = mu__store_get(s.store, MU__RT_JOBS, "default", names[k]);
		CHECK(t, o && strstr(o->json, "\"active\":1"));
		mu__obj_unref(o);
	}
	size_t hits, misses;
	mu__jobctl_memo_stats(jc, &hits, &misses);
	CHECK_EQ_INT(t, (int)misses, 1);
	CHECK_EQ_INT(t, (int)hits, 2);
	server_close(&s, jc);
}

/* A Job "name" (uid NAME-uid) of generation gen: suspended or not,
 * parallelism par, completions comp and backoffLimit back (each left out
 * when < 0), its template labelled as the API server's Job strategy
 * labels it. */
typedef struct spec_put {
	const char *name;
	int gen, par, comp, back;
	bool suspend;
	int ads; /* spec.activeDeadlineSeconds when > 0 */
	const char *rpol; /* spec.podReplacementPolicy when not NULL */
	bool pfp;         /* a spec.podFailurePolicy (no rules) */
	const char *rules; /* spec.podFailurePolicy.rules (JSON) when not NULL */
	const char *extra; /* more of the spec (JSON) when not NULL */
} spec_put_t;

static int spec_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	const spec_put_t *p = ctx;
	char uid[64];
	snprintf(uid, sizeof uid, "%s-uid", p->name);
	*out = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i}, s:{s:b, s:i, s:{s:{s:{s:s, s:s}}, s:{s:s, s:[{s:s, s:s}]}}}}",
			 "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", p->name, "namespace",
			 "default", "uid", uid, "generation", p->gen, "spec", "suspend", p->suspend, "parallelism",
			 p->par, "template", "metadata", "labels", "batch.kubernetes.io/controller-uid", uid,
			 "batch.kubernetes.io/job-name", p->name, "spec", "restartPolicy", "Never", "containers",
			 "name", "c", "image", "x");
	if (p->comp >= 0)
		mu__jset(*out, "spec.completions", json_integer(p->comp));
	if (p->back >= 0)
		mu__jset(*out, "spec.backoffLimit", json_integer(p->back));
	if (p->ads > 0)
		mu__jset(*out, "spec.activeDeadlineSeconds", json_integer(p->ads));
	if (p->rpol)
		mu__jset(*out, "spec.podReplacementPolicy", json_string(p->rpol));
	if (p->pfp)
		mu__jset(*out, "spec.podFailurePolicy", json_pack("{s:[]}", "rules"));
	if (p->rules)
		mu__jset(*out, "spec.podFailurePolicy", json_pack("{s:o}", "rules", json_loads(p->rules, 0, NULL)));
	if (p->extra) {
		json_t *x = json_loads(p->extra, 0, NULL);
		json_object_update(json_object_get(*out, "spec"), x);
		json_decref(x);
	}
	if (cur) { /* keep the status the controller wrote */
		json_t *was = mu__obj_parse(cur);
		json_t *st = json_object_get(was, "status");
		if (st)
			json_object_set(*out, "status", st);
		json_decref(was);
	}
	return MU__MUT_PUT;
}

/* Writes the Job of p and hands the controller its event; then a sync
 * at now. */
static void put_spec(mu_t_t *t, mu_apiserver_t *s, mu__jobctl_t *jc, const spec_put_t *p, int64_t now)
{
	mu__obj_t *prev = mu__store_get(s->store, MU__RT_JOBS, "default", p->name), *o = NULL;
	CHECK(t, mu__store_mutate(s->store, MU__RT_JOBS, "default", p->name, spec_fn, (void *)p, false, &o) >= 0);
	if (o)
		event(jc, prev ? MU__EV_MODIFIED : MU__EV_ADDED, o, prev, now);
	mu__obj_unref(o);
	mu__obj_unref(prev);
	mu__jobctl_sync(jc, now);
}

/* How many Events on job "name" have reason and (when not NULL) a
 * message containing msg; each must be the job-controller's, of type. */
static int nevents(mu_t_t *t, mu_apiserver_t *s, const char *name, const char *type, const char *reason,
		   const char *msg)
{
	mu__page_t evs;
	int n = 0;
	char uid[80], r[80], ty[40];
	snprintf(uid, sizeof uid, "\"uid\":\"%s-uid\"", name);
	snprintf(r, sizeof r, "\"reason\":\"%s\"", reason);
	snprintf(ty, sizeof ty, "\"type\":\"%s\"", type);
	CHECK_EQ_INT(t, mu__store_list(s->store, MU__RT_EVENTS, "default", NULL, 1000, NULL, NULL, &evs), MU_OK);
	for (size_t i = 0; i < evs.n; i++) {
		const char *j = evs.objs[i]->json;
		if (!strstr(j, uid) || !strstr(j, r))
			continue;
		CHECK(t, strstr(j, ty) && strstr(j, "\"component\":\"job-controller\""));
		n += !msg || strstr(j, msg);
	}
	mu__page_release(&evs);
	return n;
}

/* The sum of the counts of the Events on job "name" of reason (a
 * correlated Event counts its repeats). */
static int ecount(mu_t_t *t, mu_apiserver_t *s, const char *name, const char *reason)
{
	mu__page_t evs;
	int n = 0;
	char uid[80];
	snprintf(uid, sizeof uid, "%s-uid", name);
	CHECK_EQ_INT(t, mu__store_list(s->store, MU__RT_EVENTS, "default", NULL, 1000, NULL, NULL, &evs), MU_OK);
	for (size_t i = 0; i < evs.n; i++) {
		json_t *j = mu__obj_parse(evs.objs[i]);
		const char *u = mu__jstr(j, "involvedObject.uid"), *r = mu__jstr(j, "reason");
		if (u && r && !strcmp(u, uid) && !strcmp(r, reason))
			n += (int)json_integer_value(json_object_get(j, "count"));
		json_decref(j);
	}
	mu__page_release(&evs);
	return n;
}

/* The number of pods of job "name" (by its label). */
static int npods(mu_t_t *t, mu_apiserver_t *s, const char *name)
{
	mu__page_t pods;
	int n = 0;
	char want[120];
	snprintf(want, sizeof want, "\"batch.kubernetes.io/job-name\":\"%s\"", name);
	CHECK_EQ_INT(t, mu__store_list(s->store, MU__RT_PODS, "default", NULL, 1000, NULL, NULL, &pods), MU_OK);
	for (size_t i = 0; i < pods.n; i++)
		n += strstr(pods.objs[i]->json, want) != NULL;
	mu__page_release(&pods);
	return n;
}

/* Sets the phase of every pod of job "name" to ctx's. */
static int phase_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	if (!cur)
		return MU_ENOENT;
	*out = mu__obj_parse(cur);
	mu__jset(*out, "status.phase", json_string(ctx));
	return MU__MUT_PUT;
}

static void set_phase(mu_t_t *t, mu_apiserver_t *s, const char *name, const char *phase)
{
	mu__page_t pods;
	char want[120];
	snprintf(want, sizeof want, "\"batch.kubernetes.io/job-name\":\"%s\"", name);
	CHECK_EQ_INT(t, mu__store_list(s->store, MU__RT_PODS, "default", NULL, 1000, NULL, NULL, &pods), MU_OK);
	for (size_t i = 0; i < pods.n; i++)
		if (strstr(pods.objs[i]->json, want))
			CHECK(t, mu__store_mutate(s->store, MU__RT_PODS, "default", pods.objs[i]->name, phase_fn,
						  (void *)phase, false, NULL) >= 0);
	mu__page_release(&pods);
}

/* The Events Kubernetes' Job controller records besides SuccessfulCreate,
 * each on its transition and once (round 12): SuccessfulDelete "Deleted
 * pod: POD" for each pod a suspend or a lowered parallelism deletes;
 * Suspended "Job suspended" and Resumed "Job resumed" when the Suspended
 * condition turns; Completed "Job completed" when the Job completes; the
 * Warning BackoffLimitExceeded when it fails.  A reconcile that changes
 * nothing (resync) records none of them again. */
static void test_transition_events(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "tr");
	if (!jc)
		return;
	put_default_sa(t, &s);

	/* created suspended: Suspended at once, no pods */
	spec_put_t sr = {"sr", 1, 2, -1, -1, true, 0, NULL, false, NULL, NULL};
	put_spec(t, &s, jc, &sr, 0);
	CHECK_EQ_INT(t, nevents(t, &s, "sr", "Normal", "Suspended", "\"message\":\"Job suspended\""), 1);
	CHECK_EQ_INT(t, npods(t, &s, "sr"), 0);

	/* resumed: two pods, Resumed once */
	sr.gen = 2;
	sr.suspend = false;
	put_spec(t, &s, jc, &sr, 10);
	CHECK_EQ_INT(t, npods(t, &s, "sr"), 2);
	CHECK_EQ_INT(t, nevents(t, &s, "sr", "Normal", "Resumed", "\"message\":\"Job resumed\""), 1);
	CHECK_EQ_INT(t, nevents(t, &s, "sr", "Normal", "SuccessfulCreate", NULL), 2);

	/* parallelism 2 -> 1: one pod deleted, with its Event */
	sr.gen = 3;
	sr.par = 1;
	put_spec(t, &s, jc, &sr, 20);
	CHECK_EQ_INT(t, npods(t, &s, "sr"), 1);
	CHECK_EQ_INT(t, nevents(t, &s, "sr", "Normal", "SuccessfulDelete", "\"message\":\"Deleted pod: sr-"), 1);

	/* suspended again: the pod deleted (its Event), Suspended again */
	sr.gen = 4;
	sr.suspend = true;
	put_spec(t, &s, jc, &sr, 30);
	CHECK_EQ_INT(t, npods(t, &s, "sr"), 0);
	CHECK_EQ_INT(t, nevents(t, &s, "sr", "Normal", "SuccessfulDelete", NULL), 2);
	/* the same Event again is the first one's count raised, as
	 * client-go's event correlator writes it (round 13) */
	CHECK_EQ_INT(t, nevents(t, &s, "sr", "Normal", "Suspended", NULL), 1);
	CHECK_EQ_INT(t, ecount(t, &s, "sr", "Suspended"), 2);

	/* a reconcile of everything changes nothing and records nothing */
	mu__jobctl_resync(jc);
	mu__jobctl_sync(jc, 5000);
	CHECK_EQ_INT(t, ecount(t, &s, "sr", "Suspended"), 2);
	CHECK_EQ_INT(t, nevents(t, &s, "sr", "Normal", "Resumed", NULL), 1);
	CHECK_EQ_INT(t, nevents(t, &s, "sr", "Normal", "SuccessfulDelete", NULL), 2);

	/* completed: Completed once, however often it is reconciled */
	spec_put_t ok = {"ok", 1, 1, 1, -1, false, 0, NULL, false, NULL, NULL};
	put_spec(t, &s, jc, &ok, 6000);
	CHECK_EQ_INT(t, nevents(t, &s, "ok", "Normal", "Resumed", NULL), 0); /* never suspended */
	CHECK_EQ_INT(t, nevents(t, &s, "ok", "Normal", "Suspended", NULL), 0);
	set_phase(t, &s, "ok", "Succeeded");
	CHECK_EQ_INT(t, nevents(t, &s, "ok", "Normal", "Completed", NULL), 0);
	for (int k = 0; k < 2; k++) {
		mu__jobctl_resync(jc);
		mu__jobctl_sync(jc, 7000 + k);
	}
	CHECK_EQ_INT(t, nevents(t, &s, "ok", "Normal", "Completed", "\"message\":\"Job completed\""), 1);
	/* suspending a finished Job changes nothing (kube's returns early) */
	ok.gen = 2;
	ok.suspend = true;
	put_spec(t, &s, jc, &ok, 8000);
	CHECK_EQ_INT(t, nevents(t, &s, "ok", "Normal", "Suspended", NULL), 0);

	/* failed past backoffLimit 0: the Warning once */
	spec_put_t bad = {"bad", 1, 1, -1, 0, false, 0, NULL, false, NULL, NULL};
	put_spec(t, &s, jc, &bad, 9000);
	set_phase(t, &s, "bad", "Failed");
	for (int k = 0; k < 2; k++) {
		mu__jobctl_resync(jc);
		mu__jobctl_sync(jc, 10000 + k);
	}
	CHECK_EQ_INT(t, nevents(t, &s, "bad", "Warning", "BackoffLimitExceeded",
				"\"message\":\"Job has reached the specified backoff limit\""), 1);
	CHECK_EQ_INT(t, nevents(t, &s, "bad", "Normal", "Completed", NULL), 0);
	server_close(&s, jc);
}

/* Sets the Job's status.startTime to ctx's seconds before now. */
static int start_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	char ts[40];
	if (!cur)
		return MU_ENOENT;
	*out = mu__obj_parse(cur);
	mu__rfc3339_format((mu__now_s() - *(const int *)ctx) * 1000000, false, ts, sizeof ts);
	mu__jset(*out, "status.startTime", json_string(ts));
	return MU__MUT_PUT;
}

/* Moves job "name"'s startTime ago seconds back, as another writer would,
 * and hands the controller the event when tell (else only a requeue of
 * its own reconciles it). */
static void start_ago(mu_t_t *t, mu_apiserver_t *s, mu__jobctl_t *jc, const char *name, int ago, bool tell,
		      int64_t now)
{
	mu__obj_t *prev = mu__store_get(s->store, MU__RT_JOBS, "default", name), *o = NULL;
	CHECK(t, mu__store_mutate(s->store, MU__RT_JOBS, "default", name, start_fn, &ago, false, &o) >= 0);
	if (o && tell)
		event(jc, MU__EV_MODIFIED, o, prev, now);
	mu__obj_unref(o);
	mu__obj_unref(prev);
}

/* Job "name"'s status field (an integer; -1 when absent). */
static long long job_int(mu_apiserver_t *s, const char *name, const char *path)
{
	mu__obj_t *o = mu__store_get(s->store, MU__RT_JOBS, "default", name);
	json_t *j = o ? mu__obj_parse(o) : NULL;
	mu__obj_unref(o);
	const json_t *v = mu__jget(j, path);
	long long n = json_is_integer(v) ? (long long)json_integer_value(v) : -1;
	json_decref(j);
	return n;
}

/* Whether job "name" has condition type True with reason and message. */
static bool has_cond(mu_apiserver_t *s, const char *name, const char *type, const char *reason, const char *msg)
{
	mu__obj_t *o = mu__store_get(s->store, MU__RT_JOBS, "default", name);
	json_t *j = o ? mu__obj_parse(o) : NULL;
	mu__obj_unref(o);
	bool yes = false;
	size_t i;
	json_t *c;
	json_array_foreach(mu__jget(j, "status.conditions"), i, c) {
		const char *ty = mu__jstr(c, "type"), *st = mu__jstr(c, "status"), *r = mu__jstr(c, "reason");
		const char *m = mu__jstr(c, "message");
		yes = yes || (ty && st && r && m && !strcmp(ty, type) && !strcmp(st, "True") && !strcmp(r, reason) &&
			      !strcmp(m, msg));
	}
	json_decref(j);
	return yes;
}

/* Sets the phase of one pod of job "name" (the first listed) to phase. */
static void set_phase_one(mu_t_t *t, mu_apiserver_t *s, const char *name, const char *phase)
{
	mu__page_t pods;
	char want[120];
	snprintf(want, sizeof want, "\"batch.kubernetes.io/job-name\":\"%s\"", name);
	CHECK_EQ_INT(t, mu__store_list(s->store, MU__RT_PODS, "default", NULL, 1000, NULL, NULL, &pods), MU_OK);
	for (size_t i = 0; i < pods.n; i++)
		if (strstr(pods.objs[i]->json, want)) {
			CHECK(t, mu__store_mutate(s->store, MU__RT_PODS, "default", pods.objs[i]->name, phase_fn,
						  (void *)phase, false, NULL) >= 0);
			break;
		}
	mu__page_release(&pods);
}

/* Reconciles job "name" at now (as a spec change does). */
static void poke(mu_apiserver_t *s, mu__jobctl_t *jc, const char *name, int64_t now)
{
	mu__obj_t *o = mu__store_get(s->store, MU__RT_JOBS, "default", name);
	if (o)
		event(jc, MU__EV_ADDED, o, NULL, now);
	mu__obj_unref(o);
	mu__jobctl_sync(jc, now);
}

#define DL_MSG "Job was active longer than specified deadline"

/* spec.activeDeadlineSeconds, as Kubernetes' Job controller enforces it
 * (round 13): the cases of TestSyncJobPastDeadline in
 * pkg/controller/job/job_controller_test.go, translated: a Job whose
 * status.startTime is activeDeadlineSeconds or more ago fails with the
 * FailureTarget and Failed conditions of reason DeadlineExceeded, its
 * active pods deleted (SuccessfulDelete each) and counted as failed, and
 * one Warning Event DeadlineExceeded; backoffLimit is checked first; a
 * suspended Job's deadline does not run, and a resume starts its clock
 * again.  A Job whose deadline is ahead is reconciled again when it
 * passes, with no event from elsewhere (syncJob's queue.AddAfter). */
static void test_active_deadline(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "ad");
	if (!jc)
		return;
	put_default_sa(t, &s);

	/* "activeDeadlineSeconds less than single pod execution": one pod,
	 * the deadline 10 s, started 15 s ago */
	spec_put_t a = {"less", 1, 1, 1, 6, false, 10, NULL, false, NULL, NULL};
	put_spec(t, &s, jc, &a, 0);
	CHECK_EQ_INT(t, npods(t, &s, "less"), 1);
	CHECK_EQ_INT(t, (int)job_int(&s, "less", "status.active"), 1);
	CHECK(t, !has_cond(&s, "less", "Failed", "DeadlineExceeded", DL_MSG));
	start_ago(t, &s, jc, "less", 15, true, 100);
	mu__jobctl_sync(jc, 1100);
	CHECK(t, has_cond(&s, "less", "FailureTarget", "DeadlineExceeded", DL_MSG));
	/* Failed only once its terminating pod is gone (kube 1.31+) */
	CHECK(t, !has_cond(&s, "less", "Failed", "DeadlineExceeded", DL_MSG));
	CHECK_EQ_INT(t, (int)job_int(&s, "less", "status.terminating"), 1);
	CHECK_EQ_INT(t, nevents(t, &s, "less", "Warning", "DeadlineExceeded", DL_MSG), 0);
	poke(&s, jc, "less", 1200);
	CHECK(t, has_cond(&s, "less", "Failed", "DeadlineExceeded", DL_MSG));
	CHECK_EQ_INT(t, (int)job_int(&s, "less", "status.terminating"), 0);
	CHECK_EQ_INT(t, npods(t, &s, "less"), 0);
	CHECK_EQ_INT(t, (int)job_int(&s, "less", "status.active"), 0);
	CHECK_EQ_INT(t, (int)job_int(&s, "less", "status.failed"), 1);
	CHECK_EQ_INT(t, (int)job_int(&s, "less", "status.succeeded"), 0);
	CHECK_EQ_INT(t, nevents(t, &s, "less", "Normal", "SuccessfulDelete", NULL), 1);
	CHECK_EQ_INT(t, nevents(t, &s, "less", "Warning", "DeadlineExceeded", DL_MSG), 1);
	/* finished: reconciled again, nothing changes or is recorded */
	mu__jobctl_resync(jc);
	mu__jobctl_sync(jc, 2000);
	CHECK_EQ_INT(t, (int)job_int(&s, "less", "status.failed"), 1);
	CHECK_EQ_INT(t, nevents(t, &s, "less", "Warning", "DeadlineExceeded", NULL), 1);

	/* "bigger than single pod execution": completions 2, one pod
	 * succeeded, the second active at the deadline */
	spec_put_t b = {"bigger", 1, 1, 2, 6, false, 10, NULL, false, NULL, NULL};
	put_spec(t, &s, jc, &b, 3000);
	set_phase(t, &s, "bigger", "Succeeded");
	poke(&s, jc, "bigger", 3100);
	CHECK_EQ_INT(t, npods(t, &s, "bigger"), 2);
	start_ago(t, &s, jc, "bigger", 15, false, 0);
	poke(&s, jc, "bigger", 3200);
	CHECK(t, !has_cond(&s, "bigger", "Failed", "DeadlineExceeded", DL_MSG));
	poke(&s, jc, "bigger", 3300);
	CHECK(t, has_cond(&s, "bigger", "Failed", "DeadlineExceeded", DL_MSG));
	CHECK_EQ_INT(t, (int)job_int(&s, "bigger", "status.active"), 0);
	CHECK_EQ_INT(t, (int)job_int(&s, "bigger", "status.succeeded"), 1);
	CHECK_EQ_INT(t, (int)job_int(&s, "bigger", "status.failed"), 1);
	CHECK_EQ_INT(t, nevents(t, &s, "bigger", "Normal", "SuccessfulDelete", NULL), 1);

	/* "times-out before any pod starts": no pod made, none counted */
	spec_put_t c = {"before", 1, 1, 1, 6, true, 10, NULL, false, NULL, NULL};
	put_spec(t, &s, jc, &c, 4000);
	start_ago(t, &s, jc, "before", 10, false, 0);
	/* "not triggered when Job is suspended" */
	poke(&s, jc, "before", 4100);
	CHECK(t, !has_cond(&s, "before", "Failed", "DeadlineExceeded", DL_MSG));
	CHECK(t, has_cond(&s, "before", "Suspended", "JobSuspended", "Job suspended"));
	/* resumed after its deadline ran out (the startTime it had): as
	 * syncJob checks pastActiveDeadline before the resume resets
	 * startTime, it fails at once, without a pod */
	c.gen = 2;
	c.suspend = false;
	put_spec(t, &s, jc, &c, 4200);
	CHECK(t, has_cond(&s, "before", "Failed", "DeadlineExceeded", DL_MSG));
	CHECK_EQ_INT(t, npods(t, &s, "before"), 0);
	CHECK_EQ_INT(t, (int)job_int(&s, "before", "status.failed"), 0);
	CHECK_EQ_INT(t, nevents(t, &s, "before", "Normal", "SuccessfulCreate", NULL), 0);

	/* "with backofflimit reach": a failed pod past backoffLimit 0 and
	 * the deadline: BackoffLimitExceeded, checked first */
	spec_put_t d = {"backoff", 1, 1, 1, 0, false, 1, NULL, false, NULL, NULL};
	put_spec(t, &s, jc, &d, 5000);
	set_phase(t, &s, "backoff", "Failed");
	start_ago(t, &s, jc, "backoff", 10, false, 0);
	poke(&s, jc, "backoff", 5100);
	CHECK(t, has_cond(&s, "backoff", "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"));
	CHECK(t, !has_cond(&s, "backoff", "Failed", "DeadlineExceeded", DL_MSG));
	CHECK_EQ_INT(t, (int)job_int(&s, "backoff", "status.failed"), 1);
	CHECK_EQ_INT(t, nevents(t, &s, "backoff", "Warning", "DeadlineExceeded", NULL), 0);

	/* the requeue: a Job started now with a 100 s deadline is due again
	 * in 100 s; its startTime moved back (no event told) is found by
	 * that reconcile alone */
	spec_put_t e = {"later", 1, 1, 1, 6, false, 100, NULL, false, NULL, NULL};
	mu__jobctl_sync(jc, 20000); /* the requeues of the Jobs above, now finished */
	CHECK_EQ_INT(t, (int)mu__jobctl_sync(jc, 20000), -1);
	put_spec(t, &s, jc, &e, 20000);
	CHECK_EQ_INT(t, (int)mu__jobctl_sync(jc, 20000), 100000);
	start_ago(t, &s, jc, "later", 200, false, 0);
	CHECK_EQ_INT(t, (int)mu__jobctl_sync(jc, 119999), 1);
	CHECK(t, !has_cond(&s, "later", "Failed", "DeadlineExceeded", DL_MSG));
	CHECK_EQ_INT(t, (int)mu__jobctl_sync(jc, 120000), -1);
	CHECK(t, has_cond(&s, "later", "FailureTarget", "DeadlineExceeded", DL_MSG));
	poke(&s, jc, "later", 121000);
	CHECK(t, has_cond(&s, "later", "Failed", "DeadlineExceeded", DL_MSG));
	CHECK_EQ_INT(t, (int)job_int(&s, "later", "status.failed"), 1);

	/* a resume restarts the clock: suspended 50 s into a 100 s deadline
	 * and resumed, it is reconciled when the old deadline would have
	 * passed (syncJob requeues from the startTime it read) and then again
	 * 100 s after the resume, not failed (the wall clock may tick a
	 * second meanwhile) */
	spec_put_t f = {"resumed", 1, 1, 1, 6, false, 100, NULL, false, NULL, NULL};
	put_spec(t, &s, jc, &f, 200000);
	f.gen = 2;
	f.suspend = true;
	put_spec(t, &s, jc, &f, 200100);
	CHECK_EQ_INT(t, npods(t, &s, "resumed"), 0);
	start_ago(t, &s, jc, "resumed", 50, false, 0);
	f.gen = 3;
	f.suspend = false;
	put_spec(t, &s, jc, &f, 200200);
	CHECK(t, !has_cond(&s, "resumed", "Failed", "DeadlineExceeded", DL_MSG));
	CHECK_EQ_INT(t, npods(t, &s, "resumed"), 1);
	int64_t next = mu__jobctl_sync(jc, 200200);
	CHECK(t, next >= 48000 && next <= 50000);
	next = mu__jobctl_sync(jc, 200200 + next);
	CHECK(t, next >= 48000 && next <= 100000);
	CHECK(t, !has_cond(&s, "resumed", "Failed", "DeadlineExceeded", DL_MSG));
	CHECK_EQ_INT(t, npods(t, &s, "resumed"), 1);
	server_close(&s, jc);
}

/* A Job that fails counts the active pods it deletes as failed, as
 * Kubernetes' Job controller does (trackJobStatusAndRemoveFinalizers:
 * once the Job is finished every pod not terminated is failed), and its
 * count stays when the pods are gone (round 13). */
static void test_failed_counts(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "fcnt");
	if (!jc)
		return;
	put_default_sa(t, &s);
	spec_put_t p = {"three", 1, 3, -1, 0, false, 0, NULL, false, NULL, NULL};
	put_spec(t, &s, jc, &p, 0);
	CHECK_EQ_INT(t, npods(t, &s, "three"), 3);
	set_phase(t, &s, "three", "Running");
	set_phase_one(t, &s, "three", "Failed");
	poke(&s, jc, "three", 100);
	CHECK(t, has_cond(&s, "three", "FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit"));
	poke(&s, jc, "three", 200); /* its deleted pods gone: Failed */
	CHECK(t, has_cond(&s, "three", "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"));
	CHECK_EQ_INT(t, (int)job_int(&s, "three", "status.active"), 0);
	CHECK_EQ_INT(t, (int)job_int(&s, "three", "status.ready"), 0);
	CHECK_EQ_INT(t, (int)job_int(&s, "three", "status.failed"), 3);
	CHECK_EQ_INT(t, nevents(t, &s, "three", "Normal", "SuccessfulDelete", NULL), 2);
	/* the failed pod removed too (by hand): the count stays */
	mu__page_t pods;
	CHECK_EQ_INT(t, mu__store_list(s.store, MU__RT_PODS, "default", NULL, 100, NULL, NULL, &pods), MU_OK);
	mu__wtx_t *tx;
	mu__store_begin(s.store, &tx);
	for (size_t i = 0; i < pods.n; i++)
		mu__delete_now(tx, MU__RT_PODS, pods.objs[i]->ns, pods.objs[i]->name);
	mu__store_commit(tx);
	mu__page_release(&pods);
	mu__jobctl_resync(jc);
	mu__jobctl_sync(jc, 5000);
	CHECK_EQ_INT(t, (int)job_int(&s, "three", "status.failed"), 3);
	server_close(&s, jc);
}

/* The Events of a Job with twelve pods, as client-go's EventCorrelator
 * aggregates similar ones (events_cache.go, round 13): nine
 * SuccessfulCreate Events of their own ("Created pod: POD"), and from
 * the tenth distinct message on one Event "(combined from similar
 * events): Created pod: POD" whose count is raised by each later one (3),
 * its message the last pod's. */
static void test_event_aggregation(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "agg");
	if (!jc)
		return;
	put_default_sa(t, &s);
	spec_put_t p = {"twelve", 1, 12, -1, -1, false, 0, NULL, false, NULL, NULL};
	put_spec(t, &s, jc, &p, 0);
	CHECK_EQ_INT(t, npods(t, &s, "twelve"), 12);
	CHECK_EQ_INT(t, nevents(t, &s, "twelve", "Normal", "SuccessfulCreate", NULL), 10);
	CHECK_EQ_INT(t, ecount(t, &s, "twelve", "SuccessfulCreate"), 12);
	CHECK_EQ_INT(t, nevents(t, &s, "twelve", "Normal", "SuccessfulCreate",
				"\"message\":\"(combined from similar events): Created pod: twelve-"), 1);
	CHECK_EQ_INT(t, nevents(t, &s, "twelve", "Normal", "SuccessfulCreate", "\"count\":3"), 1);
	server_close(&s, jc);
}

/* One Event of the Job controller on Job "o" (uid o-uid), reason R,
 * message msg, named en, through correlator c at now. */
static void corr_event(mu_apiserver_t *s, mu__evcorr_t *c, const char *en, const char *msg, int64_t now)
{
	char ts[40]; /* the recorder's clock: 2026-01-01 plus now */
	mu__rfc3339_format((1767225600 + now / 1000) * (int64_t)1000000, false, ts, sizeof ts);
	json_t *e = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s}, s:s, s:s, s:s, s:{s:s},"
			      "s:s, s:s, s:i}",
			      "apiVersion", "v1", "kind", "Event", "metadata", "name", en, "namespace", "default",
			      "involvedObject", "kind", "Job", "apiVersion", "batch/v1", "namespace", "default", "name",
			      "o", "uid", "o-uid", "reason", "R", "message", msg, "type", "Normal", "source",
			      "component", "job-controller", "firstTimestamp", ts, "lastTimestamp", ts, "count", 1);
	mu__wtx_t *tx;
	mu__store_begin(s->store, &tx);
	mu__evcorr_record(c, s, tx, e, "kube-controller-manager", now);
	mu__store_commit(tx);
	json_decref(e);
}

/* The name of the stored combined Event on "o" (owned by buf), or "". */
static const char *combined_name(mu_apiserver_t *s, char *buf, size_t len)
{
	mu__page_t evs;
	*buf = 0;
	if (mu__store_list(s->store, MU__RT_EVENTS, "default", NULL, 1000, NULL, NULL, &evs) != MU_OK)
		return buf;
	for (size_t i = 0; i < evs.n; i++)
		if (strstr(evs.objs[i]->json, "(combined from similar events)") && strstr(evs.objs[i]->json, "o-uid"))
			snprintf(buf, len, "%s", evs.objs[i]->name);
	mu__page_release(&evs);
	return buf;
}

/* The correlator alone (events_corr.c), as client-go's: an identical
 * Event raises the stored one's count and lastTimestamp and keeps its
 * name and firstTimestamp; the tenth distinct message of a reason is
 * combined; a record of messages older than ten minutes
 * (maxIntervalInSeconds) starts afresh, while the combined Event's own
 * count goes on; a combined Event deleted meanwhile (its TTL) is written
 * again under its name with the count reached. */
static void test_correlator(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "corr");
	if (!jc)
		return;
	mu__evcorr_t *c = mu__evcorr_new();
	CHECK(t, c != NULL);
	char en[32], msg[16], cn[300];
	corr_event(&s, c, "o.e0", "m0", 0);
	corr_event(&s, c, "o.x", "m0", 1000); /* the same: e0's count 2 */
	for (int k = 1; k < 10; k++) { /* m9, the tenth, is combined */
		snprintf(en, sizeof en, "o.e%d", k);
		snprintf(msg, sizeof msg, "m%d", k);
		corr_event(&s, c, en, msg, 1000);
	}
	CHECK_EQ_INT(t, nevents(t, &s, "o", "Normal", "R", NULL), 10);
	CHECK_EQ_INT(t, nevents(t, &s, "o", "Normal", "R", "\"message\":\"(combined from similar events): m9\""), 1);
	mu__obj_t *e0 = mu__store_get(s.store, MU__RT_EVENTS, "default", "o.e0");
	CHECK(t, e0 && strstr(e0->json, "\"count\":2") && strstr(e0->json, "\"firstTimestamp\":\"2026-01-01T00:00:00Z\"") &&
		     !strstr(e0->json, "\"lastTimestamp\":\"2026-01-01T00:00:00Z\""));
	mu__obj_unref(e0);
	CHECK(t, !mu__store_get(s.store, MU__RT_EVENTS, "default", "o.x") && !mu__store_get(s.store, MU__RT_EVENTS, "default", "o.e9"));
	/* eleven minutes later: nine more alone, the tenth raises the
	 * combined Event's count */
	for (int k = 10; k < 20; k++) {
		snprintf(en, sizeof en, "o.e%d", k);
		snprintf(msg, sizeof msg, "m%d", k);
		corr_event(&s, c, en, msg, 661000);
	}
	CHECK_EQ_INT(t, nevents(t, &s, "o", "Normal", "R", NULL), 19);
	CHECK_EQ_INT(t, ecount(t, &s, "o", "R"), 21);
	CHECK_EQ_INT(t, nevents(t, &s, "o", "Normal", "R", "\"message\":\"(combined from similar events): m19\""), 1);
	/* the combined Event deleted: the next similar one writes it again */
	combined_name(&s, cn, sizeof cn);
	CHECK(t, *cn != 0);
	mu__wtx_t *tx;
	mu__store_begin(s.store, &tx);
	mu__delete_now(tx, MU__RT_EVENTS, "default", cn);
	mu__store_commit(tx);
	corr_event(&s, c, "o.e20", "m20", 662000);
	mu__obj_t *ce = mu__store_get(s.store, MU__RT_EVENTS, "default", cn);
	CHECK(t, ce && strstr(ce->json, "\"count\":3") && strstr(ce->json, "(combined from similar events): m20"));
	mu__obj_unref(ce);
	mu__evcorr_free(c);
	server_close(&s, jc);
}

/* The spam filter through the store: 30 Events of the Job controller on
 * one Job at once, each with a message of its own, write 25 (nine alone
 * and the combined one, created and patched to a count of 16); the five
 * after are not written, but counted, as client-go's logger counts them
 * before its filter: one more 299 s later is dropped too, and at 300 s a
 * new token writes the combined Event's count 23 (16 + 7). */
static void test_correlator_spam(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "spam");
	if (!jc)
		return;
	mu__evcorr_t *c = mu__evcorr_new();
	char en[32], msg[16];
	for (int k = 0; k < 30; k++) {
		snprintf(en, sizeof en, "o.e%d", k);
		snprintf(msg, sizeof msg, "m%d", k);
		corr_event(&s, c, en, msg, 1000);
	}
	CHECK_EQ_INT(t, nevents(t, &s, "o", "Normal", "R", NULL), 10);
	CHECK_EQ_INT(t, ecount(t, &s, "o", "R"), 25);
	CHECK_EQ_INT(t, nevents(t, &s, "o", "Normal", "R", "(combined from similar events): m24\""), 1);
	corr_event(&s, c, "o.e30", "m30", 300000);
	CHECK_EQ_INT(t, ecount(t, &s, "o", "R"), 25);
	corr_event(&s, c, "o.e31", "m31", 301000);
	CHECK_EQ_INT(t, ecount(t, &s, "o", "R"), 9 + 23);
	CHECK_EQ_INT(t, nevents(t, &s, "o", "Normal", "R", "(combined from similar events): m31\""), 1);
	mu__evcorr_free(c);
	server_close(&s, jc);
}

/* Marks n of job "name"'s active pods (not being deleted, not finished):
 * "Failed" sets their phase, "Terminating" their deletionTimestamp (as a
 * graceful delete of a pod on a node leaves it). */
static int mark_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	if (!cur)
		return MU_ENOENT;
	*out = mu__obj_parse(cur);
	if (!strcmp(ctx, "Failed"))
		mu__jset(*out, "status.phase", json_string("Failed"));
	else
		mu__jset(*out, "metadata.deletionTimestamp", json_string("2026-01-01T00:00:00Z"));
	return MU__MUT_PUT;
}

static void mark_pods(mu_t_t *t, mu_apiserver_t *s, const char *name, int n, const char *what)
{
	mu__page_t pods;
	char want[120];
	snprintf(want, sizeof want, "\"batch.kubernetes.io/job-name\":\"%s\"", name);
	CHECK_EQ_INT(t, mu__store_list(s->store, MU__RT_PODS, "default", NULL, 1000, NULL, NULL, &pods), MU_OK);
	for (size_t i = 0; i < pods.n && n > 0; i++) {
		const char *ph = mu__obj_field(pods.objs[i], "status.phase");
		if (!strstr(pods.objs[i]->json, want) || pods.objs[i]->deleting ||
		    (ph && (!strcmp(ph, "Failed") || !strcmp(ph, "Succeeded"))))
			continue;
		CHECK(t, mu__store_mutate(s->store, MU__RT_PODS, "default", pods.objs[i]->name, mark_fn, (void *)what,
					  false, NULL) >= 0);
		n--;
	}
	CHECK_EQ_INT(t, n, 0);
	mu__page_release(&pods);
}

/* One case of TestControllerSyncJob (pkg/controller/job/
 * job_controller_test.go, jobPodReplacementPolicy on): a Job of par
 * pods and policy rpol (NULL: unset), made and synced; then failed of its
 * pods fail and term are terminating, and its spec becomes parallelism
 * par2 and completions comp (-1 none); one reconcile.  The counts it
 * must show. */
typedef struct repl_case {
	const char *name;
	int par, comp;
	const char *rpol;
	bool pfp;
	int failed, term, par2;
	int pods, active, terminating, st_failed; /* expected */
} repl_case_t;

static void repl_case(mu_t_t *t, mu_apiserver_t *s, mu__jobctl_t *jc, const repl_case_t *c, int64_t now)
{
	spec_put_t p = {c->name, 1, c->par, -1, 6, false, 0, c->rpol, c->pfp, NULL, NULL};
	put_spec(t, s, jc, &p, now); /* without completions: par pods */
	mark_pods(t, s, c->name, c->failed, "Failed");
	mark_pods(t, s, c->name, c->term, "Terminating");
	p.gen = 2;
	p.par = c->par2;
	p.comp = c->comp;
	put_spec(t, s, jc, &p, now + 10);
	int np = npods(t, s, c->name);
	long long a = job_int(s, c->name, "status.active"), tm = job_int(s, c->name, "status.terminating");
	long long f = job_int(s, c->name, "status.failed");
	if (np != c->pods || a != c->active || tm != c->terminating || f != c->st_failed) {
		fprintf(stderr, "%s: pods %d active %lld terminating %lld failed %lld, expected %d %d %d %d\n", c->name,
			np, a, tm, f, c->pods, c->active, c->terminating, c->st_failed);
		CHECK(t, 0);
	}
}

/* status.terminating and spec.podReplacementPolicy (round 15), the cases
 * of TestControllerSyncJob that set jobPodReplacementPolicy, translated
 * (kubernetes pkg/controller/job/job_controller_test.go, read with the
 * search tool): the pods being deleted and not finished are counted in
 * status.terminating, those the sync deletes included; with
 * TerminatingOrFailed (the default) a terminating pod is replaced at
 * once, with Failed (or a podFailurePolicy) only once it has failed.  The
 * pods of the kube cases are given here by making the Job's pods and
 * marking some; "indexed job with some pods deleted" is taken as
 * NonIndexed here (kube's terminating pod there has no index and is not
 * counted; a NonIndexed one is).  Since round 16 the counts are kube's
 * expectedFailed: a terminating pod under TerminatingOrFailed is failed
 * (isPodFailed) and counted through its tracking finalizer, one under
 * Failed only once its phase is (here: not yet; PodGC's mark comes in
 * the reconcile's writes, counted by the next). */
static void test_pod_replacement(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "repl");
	if (!jc)
		return;
	put_default_sa(t, &s);
	/* name, par, comp, policy, pfp, failed, terminating, par2; pods,
	 * active, terminating, failed */
	static const repl_case_t cases[] = {
		/* "WQ job: recreate pods when failed": the terminating pod
		 * not replaced (kube: failed 1) */
		{"wq-failed", 3, -1, "Failed", false, 1, 1, 1, 3, 1, 1, 1},
		/* "WQ job: turn on PodReplacementPolicy but not set
		 * PodReplacementPolicy" (kube: failed 2) */
		{"wq-unset", 3, 1, NULL, false, 1, 1, 1, 3, 1, 1, 2},
		/* "WQ job: recreate pods when terminating or failed" (kube:
		 * failed 2) */
		{"wq-tof", 3, -1, "TerminatingOrFailed", false, 1, 1, 1, 3, 1, 1, 2},
		/* "more terminating pods than parallelism": one of the two
		 * active deleted, terminating 4 + 1 */
		{"more-term", 6, 1, "Failed", false, 0, 4, 1, 5, 1, 5, 0},
		/* "too many active pods; PodReplacementPolicy enabled" */
		{"too-many", 3, 5, NULL, false, 0, 0, 2, 2, 2, 1, 0},
		/* "indexed job with some pods deleted, podReplacementPolicy
		 * Failed": parallelism 2, no active pod, one terminating: one
		 * made */
		{"some-del-failed", 1, 5, "Failed", false, 0, 1, 2, 2, 1, 1, 0},
		/* "... TerminatingOrFailed": two made */
		{"some-del-tof", 1, 5, "TerminatingOrFailed", false, 0, 1, 2, 3, 2, 1, 1},
		/* onlyReplaceFailedPods with a podFailurePolicy and no policy
		 * (a Job stored before defaulting): the two terminating pods
		 * count against parallelism 3, none made */
		{"pfp", 3, 5, NULL, true, 0, 2, 3, 3, 1, 2, 0},
		/* the same without: replaced at once */
		{"no-pfp", 3, 5, NULL, false, 0, 2, 3, 5, 3, 2, 2},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		repl_case(t, &s, jc, &cases[i], 1000 * (int64_t)i);
	server_close(&s, jc);
}

/* "count terminating pods when indexed job fails and PodReplacementPolicy
 * enabled" (TestControllerSyncJob), NonIndexed: backoffLimit 0, one pod
 * succeeded, one failed, one running: the Job fails, the running pod is
 * deleted and counted terminating (1) and failed (2); as kube 1.31+
 * (delayTerminalCondition) the Job has FailureTarget while the pod
 * terminates and Failed (with its Warning Event) once it is gone. */
static void test_fail_counts_terminating(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "failterm");
	if (!jc)
		return;
	put_default_sa(t, &s);
	spec_put_t p = {"ix", 1, 3, 3, 0, false, 0, NULL, false, NULL, NULL};
	put_spec(t, &s, jc, &p, 0);
	set_phase_one(t, &s, "ix", "Succeeded");
	mark_pods(t, &s, "ix", 1, "Failed");
	poke(&s, jc, "ix", 100);
	/* kube 1.31+: FailureTarget while the pod terminates, then Failed */
	CHECK(t, has_cond(&s, "ix", "FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit"));
	CHECK(t, !has_cond(&s, "ix", "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"));
	CHECK_EQ_INT(t, (int)job_int(&s, "ix", "status.terminating"), 1);
	CHECK_EQ_INT(t, (int)job_int(&s, "ix", "status.failed"), 2);
	CHECK_EQ_INT(t, (int)job_int(&s, "ix", "status.succeeded"), 1);
	CHECK_EQ_INT(t, (int)job_int(&s, "ix", "status.active"), 0);
	/* the next reconcile: the deleted pod is gone (not on a node), 0 */
	poke(&s, jc, "ix", 2000);
	CHECK_EQ_INT(t, (int)job_int(&s, "ix", "status.terminating"), 0);
	CHECK(t, has_cond(&s, "ix", "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"));
	CHECK_EQ_INT(t, nevents(t, &s, "ix", "Warning", "BackoffLimitExceeded", NULL), 1);
	server_close(&s, jc);
}

/* The API's side (pkg/apis/batch/v1 SetDefaults_Job and
 * pkg/apis/batch/validation validatePodReplacementPolicy): the default is
 * TerminatingOrFailed, or Failed with a podFailurePolicy; the values are
 * Failed and TerminatingOrFailed, and only Failed with a
 * podFailurePolicy. */
static void test_replacement_api(mu_t_t *t)
{
	json_t *j = json_pack("{s:{s:{s:{s:s}}}}", "spec", "template", "spec", "restartPolicy", "Never");
	mu__defaults_job(j);
	CHECK_STR(t, mu__jstr(j, "spec.podReplacementPolicy"), "TerminatingOrFailed");
	json_t *k = json_pack("{s:{s:{s:[]}, s:{s:{s:s}}}}", "spec", "podFailurePolicy", "rules", "template", "spec",
			      "restartPolicy", "Never");
	mu__defaults_job(k);
	CHECK_STR(t, mu__jstr(k, "spec.podReplacementPolicy"), "Failed");
	/* SetDefaults_Job: a pattern of onPodConditions without status is True */
	json_t *d = json_pack("{s:{s:{s:[{s:s, s:[{s:s}]}]}}}", "spec", "podFailurePolicy", "rules", "action", "Ignore",
			      "onPodConditions", "type", "DisruptionTarget");
	mu__defaults_job(d);
	CHECK_STR(t, mu__jstr(json_array_get(json_object_get(json_array_get(mu__jget(d, "spec.podFailurePolicy.rules"), 0),
								 "onPodConditions"), 0), "status"), "True");
	json_decref(d);
	static const struct {
		const char *val;
		bool pfp;
		const char *msg; /* NULL: valid */
	} v[] = {
		{"Failed", false, NULL},
		{"TerminatingOrFailed", false, NULL},
		{"Failed", true, NULL},
		{"Sometimes", false, "Unsupported value: \"Sometimes\": supported values: \"Failed\", \"TerminatingOrFailed\""},
		{"TerminatingOrFailed", true, "Unsupported value: \"TerminatingOrFailed\": supported values: \"Failed\""},
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		json_t *o = json_deep_copy(v[i].pfp ? k : j);
		mu__jset(o, "spec.podReplacementPolicy", json_string(v[i].val));
		mu__verr_t e = {0};
		mu__validate_job(o, NULL, &e);
		int found = -1;
		for (int c = 0; c < e.n; c++)
			if (!strcmp(e.c[c].field, "spec.podReplacementPolicy"))
				found = c;
		if (!v[i].msg)
			CHECK_EQ_INT(t, found, -1);
		else if (found < 0)
			CHECK(t, !"no error on spec.podReplacementPolicy");
		else
			CHECK_STR(t, e.c[found].msg, v[i].msg);
		json_decref(o);
	}
	json_decref(j);
	json_decref(k);
}

/* Whether a pod is active (not being deleted, not finished). */
static bool is_active_pod(const mu__obj_t *p)
{
	const char *ph = mu__obj_field(p, "status.phase");
	return !p->deleting && !(ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed")));
}

/* Sets the phase of one active pod of job "name" to phase. */
static void set_phase_one_active(mu_t_t *t, mu_apiserver_t *s, const char *name, const char *phase)
{
	mu__page_t pods;
	char want[120];
	snprintf(want, sizeof want, "\"batch.kubernetes.io/job-name\":\"%s\"", name);
	CHECK_EQ_INT(t, mu__store_list(s->store, MU__RT_PODS, "default", NULL, 1000, NULL, NULL, &pods), MU_OK);
	for (size_t i = 0; i < pods.n; i++)
		if (strstr(pods.objs[i]->json, want) && is_active_pod(pods.objs[i])) {
			CHECK(t, mu__store_mutate(s->store, MU__RT_PODS, "default", pods.objs[i]->name, phase_fn,
						  (void *)phase, false, NULL) >= 0);
			break;
		}
	mu__page_release(&pods);
}

/* TestMatchPodFailurePolicy (kubernetes pkg/controller/job/
 * pod_failure_policy_test.go, read with the search tool), translated:
 * each case's policy and failed pod ("default/mypod"), and what
 * mu__pfp_match must answer (kube's action, and with FailJob its
 * message); kube's wantCountFailed is false exactly for Ignore. */
static void test_pfp_match(mu_t_t *t)
{
	static const struct {
		const char *name, *rules, *status;
		int want;
		const char *msg;
	} c[] = {
		{"unknown action for rule matching by exit codes - skip rule with unknown action",
		 "[{\"action\":\"UnknownAction\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[1,2]}},"
		 "{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[2,3]}}]",
		 "{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"main-container\",\"state\":{\"terminated\":{\"exitCode\":2}}}]}",
		 MU__PFP_FAILJOB, "Container main-container for pod default/mypod failed with exit code 2 matching FailJob rule at index 1"},
		{"unknown action for rule matching by pod conditions - skip rule with unknown action",
		 "[{\"action\":\"UnkonwnAction\",\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]},"
		 "{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]}]",
		 "{\"phase\":\"Failed\",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]}", MU__PFP_IGNORE, NULL},
		{"unknown operator - rule with unknown action is skipped for onExitCodes",
		 "[{\"action\":\"Ignore\",\"onExitCodes\":{\"operator\":\"UnknownOperator\",\"values\":[1,2]}},"
		 "{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[2,3]}}]",
		 "{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"main-container\",\"state\":{\"terminated\":{\"exitCode\":2}}}]}",
		 MU__PFP_FAILJOB, "Container main-container for pod default/mypod failed with exit code 2 matching FailJob rule at index 1"},
		{"no policy rules", "[]",
		 "{\"phase\":\"Failed\",\"containerStatuses\":[{\"state\":{\"terminated\":{\"exitCode\":2}}}]}", MU__PFP_NONE, NULL},
		{"ignore rule matched for exit codes", "[{\"action\":\"Ignore\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[1,2,3]}}]",
		 "{\"phase\":\"Failed\",\"containerStatuses\":[{\"state\":{\"terminated\":{\"exitCode\":2}}}]}", MU__PFP_IGNORE, NULL},
		{"ignore rule matched on negative exit codes - needed for Windows support",
		 "[{\"action\":\"Ignore\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[-1073741676,-1073741510]}}]",
		 "{\"phase\":\"Failed\",\"containerStatuses\":[{\"state\":{\"terminated\":{\"exitCode\":-1073741510}}}]}",
		 MU__PFP_IGNORE, NULL},
		{"FailJob rule matched for exit codes", "[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[1,2,3]}}]",
		 "{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"main-container\",\"state\":{\"terminated\":{\"exitCode\":2}}}]}",
		 MU__PFP_FAILJOB, "Container main-container for pod default/mypod failed with exit code 2 matching FailJob rule at index 0"},
		{"successful containers are skipped by the rules",
		 "[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"NotIn\",\"values\":[111]}}]",
		 "{\"phase\":\"Failed\",\"initContainerStatuses\":[{\"name\":\"init-container\",\"state\":{\"terminated\":{\"exitCode\":0}}}],"
		 "\"containerStatuses\":[{\"name\":\"main-container\",\"state\":{\"terminated\":{\"exitCode\":111}}},"
		 "{\"name\":\"suppport-container\",\"state\":{\"terminated\":{\"exitCode\":0}}}]}", MU__PFP_NONE, NULL},
		{"FailIndex rule matched for exit codes", "[{\"action\":\"FailIndex\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[1,2,3]}}]",
		 "{\"phase\":\"Failed\",\"containerStatuses\":[{\"state\":{\"terminated\":{\"exitCode\":2}}}]}", MU__PFP_FAILINDEX, NULL},
		{"pod failure policy with NotIn operator and value 0",
		 "[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"NotIn\",\"values\":[0]}}]",
		 "{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"main-container\",\"state\":{\"terminated\":{\"exitCode\":1}}},"
		 "{\"name\":\"suppport-container\",\"state\":{\"terminated\":{\"exitCode\":0}}}]}",
		 MU__PFP_FAILJOB, "Container main-container for pod default/mypod failed with exit code 1 matching FailJob rule at index 0"},
		{"second jobfail rule matched for exit codes",
		 "[{\"action\":\"Count\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[1,2,3]}},"
		 "{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[4,5,6]}}]",
		 "{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"main-container\",\"state\":{\"terminated\":{\"exitCode\":6}}}]}",
		 MU__PFP_FAILJOB, "Container main-container for pod default/mypod failed with exit code 6 matching FailJob rule at index 1"},
		{"count rule matched for exit codes", "[{\"action\":\"Count\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[1,2,3]}}]",
		 "{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"foo\"},{\"name\":\"bar\",\"state\":{\"terminated\":{\"exitCode\":2}}}]}",
		 MU__PFP_COUNT, NULL},
		{"FailIndex rule matched for pod conditions",
		 "[{\"action\":\"FailIndex\",\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]}]",
		 "{\"phase\":\"Failed\",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]}", MU__PFP_FAILINDEX, NULL},
		{"ignore rule matched for pod conditions",
		 "[{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]}]",
		 "{\"phase\":\"Failed\",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]}", MU__PFP_IGNORE, NULL},
		{"ignore rule matches by the status=False",
		 "[{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"False\"}]}]",
		 "{\"phase\":\"Failed\",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"False\"}]}", MU__PFP_IGNORE, NULL},
		{"ignore rule matches by the status=Unknown",
		 "[{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"Unknown\"}]}]",
		 "{\"phase\":\"Failed\",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"Unknown\"}]}", MU__PFP_IGNORE, NULL},
		{"ignore rule does not match when status for pattern is False, but actual True",
		 "[{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"False\"}]}]",
		 "{\"phase\":\"Failed\",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]}", MU__PFP_NONE, NULL},
		/* muster's own: FailJob by condition, kube's message of it */
		{"FailJob rule matched for pod conditions",
		 "[{\"action\":\"FailJob\",\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]}]",
		 "{\"phase\":\"Failed\",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]}", MU__PFP_FAILJOB,
		 "Pod default/mypod has condition DisruptionTarget matching FailJob rule at index 0"},
		/* a containerName restricts the rule to that container */
		{"containerName restriction not matched",
		 "[{\"action\":\"FailJob\",\"onExitCodes\":{\"containerName\":\"other\",\"operator\":\"In\",\"values\":[2]}}]",
		 "{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"main-container\",\"state\":{\"terminated\":{\"exitCode\":2}}}]}",
		 MU__PFP_NONE, NULL},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		json_t *pfp = json_pack("{s:o}", "rules", json_loads(c[i].rules, 0, NULL));
		json_t *pod = json_pack("{s:{s:s, s:s}, s:o}", "metadata", "namespace", "default", "name", "mypod", "status",
					json_loads(c[i].status, 0, NULL));
		char msg[400] = "";
		int got = mu__pfp_match(pfp, pod, msg, sizeof msg);
		if (got != c[i].want || (c[i].msg && strcmp(msg, c[i].msg))) {
			fprintf(stderr, "%s: action %d (%s), expected %d (%s)\n", c[i].name, got, msg, c[i].want,
				c[i].msg ? c[i].msg : "");
			CHECK(t, 0);
		}
		json_decref(pfp);
		json_decref(pod);
	}
}

/* Sets one active pod of job "name" Failed with the status fields of
 * ctx (JSON: containerStatuses, conditions) merged in. */
static int fail_with_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	if (!cur)
		return MU_ENOENT;
	*out = mu__obj_parse(cur);
	json_t *add = json_loads(ctx, 0, NULL);
	json_object_update(json_object_get(*out, "status"), add);
	json_decref(add);
	mu__jset(*out, "status.phase", json_string("Failed"));
	return MU__MUT_PUT;
}

static void fail_one_with(mu_t_t *t, mu_apiserver_t *s, const char *name, const char *st)
{
	mu__page_t pods;
	char want[120];
	snprintf(want, sizeof want, "\"batch.kubernetes.io/job-name\":\"%s\"", name);
	CHECK_EQ_INT(t, mu__store_list(s->store, MU__RT_PODS, "default", NULL, 1000, NULL, NULL, &pods), MU_OK);
	for (size_t i = 0; i < pods.n; i++)
		if (strstr(pods.objs[i]->json, want) && is_active_pod(pods.objs[i])) {
			CHECK(t, mu__store_mutate(s->store, MU__RT_PODS, "default", pods.objs[i]->name, fail_with_fn,
						  (void *)st, false, NULL) >= 0);
			break;
		}
	mu__page_release(&pods);
}

/* The first pod of job "name" that is Failed (its name in out). */
static void failed_pod_name(mu_t_t *t, mu_apiserver_t *s, const char *name, char *out, size_t sz)
{
	mu__page_t pods;
	char want[120];
	*out = 0;
	snprintf(want, sizeof want, "\"batch.kubernetes.io/job-name\":\"%s\"", name);
	CHECK_EQ_INT(t, mu__store_list(s->store, MU__RT_PODS, "default", NULL, 1000, NULL, NULL, &pods), MU_OK);
	for (size_t i = 0; i < pods.n && !*out; i++) {
		const char *ph = mu__obj_field(pods.objs[i], "status.phase");
		if (strstr(pods.objs[i]->json, want) && ph && !strcmp(ph, "Failed"))
			snprintf(out, sz, "%s", pods.objs[i]->name);
	}
	mu__page_release(&pods);
}

#define EXIT(code) "{\"containerStatuses\":[{\"name\":\"c\",\"state\":{\"terminated\":{\"exitCode\":" #code "}}}]}"
#define DISRUPTED "{\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\",\"reason\":\"EvictionByEvictionAPI\"}]}"

/* spec.podFailurePolicy applied by the controller, as syncJob and
 * trackJobStatusAndRemoveFinalizers of kube's Job controller do (the
 * behaviour TestSyncJobWithJobPodFailurePolicy checks, here through
 * muster's store): a failed pod matching a FailJob rule fails the Job at
 * once, through FailureTarget of reason PodFailurePolicy and kube's
 * message, its other pods deleted, Failed once they are gone; a pod an
 * Ignore rule matches (a DisruptionTarget condition, as an eviction sets
 * it) is not counted in status.failed nor against backoffLimit, and is
 * replaced; a Count rule, or no rule, counts it, and past backoffLimit
 * the Job fails with BackoffLimitExceeded. */
static void test_pfp_controller(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "pfp");
	if (!jc)
		return;
	put_default_sa(t, &s);
	const char *rules = "[{\"action\":\"FailJob\",\"onExitCodes\":{\"containerName\":\"c\",\"operator\":\"In\",\"values\":[42]}},"
			    "{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]},"
			    "{\"action\":\"Count\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[7]}}]";
	/* FailJob on exit code 42: parallelism 2, backoffLimit 6 */
	spec_put_t a = {"fj", 1, 2, 4, 6, false, 0, "Failed", false, rules, NULL};
	put_spec(t, &s, jc, &a, 0);
	CHECK_EQ_INT(t, npods(t, &s, "fj"), 2);
	fail_one_with(t, &s, "fj", EXIT(42));
	char pod[128], msg[400];
	failed_pod_name(t, &s, "fj", pod, sizeof pod);
	snprintf(msg, sizeof msg, "Container c for pod default/%s failed with exit code 42 matching FailJob rule at index 0", pod);
	poke(&s, jc, "fj", 100);
	CHECK(t, has_cond(&s, "fj", "FailureTarget", "PodFailurePolicy", msg));
	CHECK(t, !has_cond(&s, "fj", "Failed", "PodFailurePolicy", msg));
	CHECK_EQ_INT(t, (int)job_int(&s, "fj", "status.active"), 0);
	CHECK_EQ_INT(t, (int)job_int(&s, "fj", "status.terminating"), 1);
	CHECK_EQ_INT(t, (int)job_int(&s, "fj", "status.failed"), 2);
	CHECK_EQ_INT(t, nevents(t, &s, "fj", "Normal", "SuccessfulDelete", NULL), 1);
	poke(&s, jc, "fj", 200);
	CHECK(t, has_cond(&s, "fj", "Failed", "PodFailurePolicy", msg));
	CHECK_EQ_INT(t, nevents(t, &s, "fj", "Warning", "PodFailurePolicy", msg), 1);
	CHECK_EQ_INT(t, npods(t, &s, "fj"), 1); /* the failed one; no replacement */

	/* another exit code (no rule): counted, and replaced; backoffLimit 0
	 * then fails it with BackoffLimitExceeded */
	spec_put_t b = {"other", 1, 1, 2, 1, false, 0, "Failed", false, rules, NULL};
	put_spec(t, &s, jc, &b, 1000);
	fail_one_with(t, &s, "other", EXIT(3));
	poke(&s, jc, "other", 1100);
	CHECK_EQ_INT(t, (int)job_int(&s, "other", "status.failed"), 1);
	CHECK_EQ_INT(t, (int)job_int(&s, "other", "status.active"), 1);
	CHECK_EQ_INT(t, npods(t, &s, "other"), 2);
	CHECK(t, !has_cond(&s, "other", "FailureTarget", "PodFailurePolicy", ""));
	/* the Count rule (exit code 7) counts too: 2 > backoffLimit 1 */
	fail_one_with(t, &s, "other", EXIT(7));
	poke(&s, jc, "other", 1200);
	CHECK(t, has_cond(&s, "other", "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"));
	CHECK_EQ_INT(t, (int)job_int(&s, "other", "status.failed"), 2);

	/* Ignore on DisruptionTarget: backoffLimit 0, an evicted pod is not
	 * counted and is replaced; the Job goes on */
	spec_put_t c = {"ign", 1, 1, 1, 0, false, 0, "Failed", false, rules, NULL};
	put_spec(t, &s, jc, &c, 2000);
	fail_one_with(t, &s, "ign", DISRUPTED);
	poke(&s, jc, "ign", 2100);
	CHECK_EQ_INT(t, (int)job_int(&s, "ign", "status.failed"), 0);
	CHECK_EQ_INT(t, (int)job_int(&s, "ign", "status.active"), 1);
	CHECK_EQ_INT(t, npods(t, &s, "ign"), 2);
	CHECK(t, !has_cond(&s, "ign", "FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit"));
	/* the same pod without the policy fails the Job (backoffLimit 0) */
	spec_put_t d = {"noign", 1, 1, 1, 0, false, 0, NULL, false, NULL, NULL};
	put_spec(t, &s, jc, &d, 3000);
	fail_one_with(t, &s, "noign", DISRUPTED);
	poke(&s, jc, "noign", 3100);
	CHECK(t, has_cond(&s, "noign", "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"));
	server_close(&s, jc);
}

/* kube 1.31+'s terminal conditions of a Job that succeeds
 * (enactJobFinished with delayTerminalCondition): SuccessCriteriaMet
 * when enough pods succeeded, Complete (with completionTime and the
 * Completed Event) only once no pod of the Job is terminating.
 * completions 1: a pod made terminating (TerminatingOrFailed: replaced
 * at once), the replacement succeeds while the first still terminates. */
static void test_success_criteria(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "scm");
	if (!jc)
		return;
	put_default_sa(t, &s);
	spec_put_t p = {"ok", 1, 1, 1, 6, false, 0, NULL, false, NULL, NULL};
	put_spec(t, &s, jc, &p, 0);
	mark_pods(t, &s, "ok", 1, "Terminating");
	poke(&s, jc, "ok", 100);
	CHECK_EQ_INT(t, npods(t, &s, "ok"), 2);
	set_phase_one_active(t, &s, "ok", "Succeeded");
	poke(&s, jc, "ok", 200);
	CHECK(t, has_cond(&s, "ok", "SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods"));
	CHECK(t, !has_cond(&s, "ok", "Complete", "CompletionsReached", "Reached expected number of succeeded pods"));
	CHECK_EQ_INT(t, (int)job_int(&s, "ok", "status.terminating"), 1);
	CHECK_EQ_INT(t, nevents(t, &s, "ok", "Normal", "Completed", NULL), 0);
	/* the terminating pod goes */
	mu__page_t pods;
	CHECK_EQ_INT(t, mu__store_list(s.store, MU__RT_PODS, "default", NULL, 100, NULL, NULL, &pods), MU_OK);
	mu__wtx_t *tx;
	mu__store_begin(s.store, &tx);
	for (size_t i = 0; i < pods.n; i++)
		if (pods.objs[i]->deleting && strstr(pods.objs[i]->json, "job-name\":\"ok\""))
			mu__delete_now(tx, MU__RT_PODS, pods.objs[i]->ns, pods.objs[i]->name);
	mu__store_commit(tx);
	mu__page_release(&pods);
	poke(&s, jc, "ok", 300);
	CHECK(t, has_cond(&s, "ok", "Complete", "CompletionsReached", "Reached expected number of succeeded pods"));
	CHECK_EQ_INT(t, (int)job_int(&s, "ok", "status.terminating"), 0);
	CHECK_EQ_INT(t, nevents(t, &s, "ok", "Normal", "Completed", NULL), 1);
	server_close(&s, jc);
}

/* The validation of spec.podFailurePolicy and of the Indexed fields, with
 * the messages of kube's pkg/apis/batch/validation (validation.go:
 * validatePodFailurePolicy, validatePodFailurePolicyRule,
 * ...RuleOnExitCodes, ...RuleOnPodConditions, validateJobSpec; the cases
 * of TestValidateJob's errorCases named by their message where it has
 * them), and muster's refusal of completionMode Indexed. */
static void test_pfp_validation(mu_t_t *t)
{
	static const struct {
		const char *rules;   /* spec.podFailurePolicy.rules (NULL: none) */
		const char *extra;   /* more spec fields (JSON object) or NULL */
		const char *field, *msg; /* NULL: valid */
	} v[] = {
		{"[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[1,2,3]}},"
		 "{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]}]",
		 NULL, NULL, NULL},
		{"[{\"action\":\"Ignore\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[1,0,2]}}]", NULL,
		 "spec.podFailurePolicy.rules[0].onExitCodes.values[1]", "Invalid value: 0: must not be 0 for the In operator"},
		{"[{\"action\":\"Ignore\",\"onExitCodes\":{\"containerName\":\"xyz\",\"operator\":\"In\",\"values\":[1]}}]", NULL,
		 "spec.podFailurePolicy.rules[0].onExitCodes.containerName",
		 "Invalid value: \"xyz\": must be one of the container or initContainer names in the pod template"},
		{"[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[1]},"
		 "\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]}]", NULL,
		 "spec.podFailurePolicy.rules[0]", "Invalid value: specifying both OnExitCodes and OnPodConditions is not supported"},
		{"[{\"action\":\"FailJob\"}]", NULL, "spec.podFailurePolicy.rules[0]",
		 "Invalid value: specifying one of OnExitCodes and OnPodConditions is required"},
		{"[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[1,2,2]}}]", NULL,
		 "spec.podFailurePolicy.rules[0].onExitCodes.values[2]", "Duplicate value: 2"},
		{"[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[3,1]}}]", NULL,
		 "spec.podFailurePolicy.rules[0].onExitCodes.values", "Invalid value: []int32{3, 1}: must be ordered"},
		{"[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[]}}]", NULL,
		 "spec.podFailurePolicy.rules[0].onExitCodes.values", "Invalid value: []int32{}: at least one value is required"},
		{"[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"Between\",\"values\":[1]}}]", NULL,
		 "spec.podFailurePolicy.rules[0].onExitCodes.operator",
		 "Unsupported value: \"Between\": supported values: \"In\", \"NotIn\""},
		{"[{\"action\":\"FailJob\",\"onExitCodes\":{\"values\":[1]}}]", NULL,
		 "spec.podFailurePolicy.rules[0].onExitCodes.operator", "Required value: valid values: [\"In\" \"NotIn\"]"},
		{"[{\"action\":\"UnknownAction\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[1]}}]", NULL,
		 "spec.podFailurePolicy.rules[0].action",
		 "Unsupported value: \"UnknownAction\": supported values: \"Count\", \"FailIndex\", \"FailJob\", \"Ignore\""},
		{"[{\"onExitCodes\":{\"operator\":\"In\",\"values\":[1]}}]", NULL, "spec.podFailurePolicy.rules[0].action",
		 "Required value: valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]"},
		{"[{\"action\":\"FailIndex\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[1]}}]", NULL,
		 "spec.podFailurePolicy.rules[0].action", "Invalid value: \"FailIndex\": requires the backoffLimitPerIndex to be set"},
		{"[{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":\"Disruption Target\",\"status\":\"True\"}]}]", NULL,
		 "spec.podFailurePolicy.rules[0].onPodConditions[0].type", NULL /* checked by prefix below */},
		{"[{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"Yes\"}]}]", NULL,
		 "spec.podFailurePolicy.rules[0].onPodConditions[0].status",
		 "Unsupported value: \"Yes\": supported values: \"False\", \"True\", \"Unknown\""},
		{"[{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":\"DisruptionTarget\"}]}]", NULL,
		 "spec.podFailurePolicy.rules[0].onPodConditions[0].status",
		 "Required value: valid values: [\"False\" \"True\" \"Unknown\"]"},
		{"[]", "{\"template\":{\"spec\":{\"restartPolicy\":\"OnFailure\",\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}}",
		 "spec.template.spec.restartPolicy",
		 "Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified"},
		/* round 16: Indexed Jobs run; kube's validateJobSpec and
		 * validateSuccessPolicyRule cases (TestValidateJob) */
		{NULL, "{\"completions\":3,\"completionMode\":\"Indexed\"}", NULL, NULL},
		{NULL, "{\"completionMode\":\"Indexed\"}", "spec.completions",
		 "Required value: when completion mode is Indexed"},
		{NULL, "{\"completions\":10,\"maxFailedIndexes\":11,\"backoffLimitPerIndex\":1,\"completionMode\":\"Indexed\"}",
		 "spec.maxFailedIndexes", "Invalid value: 11: must be less than or equal to completions"},
		{NULL, "{\"completions\":5,\"backoffLimitPerIndex\":-1,\"completionMode\":\"Indexed\"}",
		 "spec.backoffLimitPerIndex", "Invalid value: -1: must be greater than or equal to 0"},
		{NULL, "{\"completions\":200000,\"backoffLimitPerIndex\":1,\"completionMode\":\"Indexed\"}",
		 "spec.maxFailedIndexes", "Required value: must be specified when completions is above 100000"},
		{NULL, "{\"completions\":5,\"completionMode\":\"Indexed\",\"successPolicy\":{\"rules\":[{\"succeededIndexes\":\"0-2,1\"}]}}",
		 "spec.successPolicy.rules[0].succeededIndexes",
		 "Invalid value: \"0-2,1\": error parsing succeededIndexes: non-increasing order, previous: 2, current: 1"},
		{NULL, "{\"completions\":5,\"completionMode\":\"Indexed\",\"successPolicy\":{\"rules\":[{\"succeededIndexes\":\"0,7\"}]}}",
		 "spec.successPolicy.rules[0].succeededIndexes",
		 "Invalid value: \"0,7\": error parsing succeededIndexes: too large index: \"7\""},
		{NULL, "{\"completions\":5,\"completionMode\":\"Indexed\",\"successPolicy\":{\"rules\":[{\"succeededCount\":6}]}}",
		 "spec.successPolicy.rules[0].succeededCount",
		 "Invalid value: 6: must be less than or equal to 5 (the number of specified completions)"},
		{NULL, "{\"completions\":5,\"completionMode\":\"Indexed\",\"successPolicy\":{\"rules\":[{\"succeededIndexes\":\"0-1\",\"succeededCount\":3}]}}",
		 "spec.successPolicy.rules[0].succeededCount",
		 "Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)"},
		{NULL, "{\"completions\":5,\"completionMode\":\"Indexed\",\"successPolicy\":{\"rules\":[{}]}}",
		 "spec.successPolicy.rules[0]",
		 "Required value: at least one of succeededCount or succeededIndexes must be specified"},
		{NULL, "{\"completions\":5,\"completionMode\":\"Indexed\",\"successPolicy\":{\"rules\":[]}}",
		 "spec.successPolicy.rules",
		 "Required value: at least one rules must be specified when the successPolicy is specified"},
		{NULL, "{\"completions\":5,\"successPolicy\":{\"rules\":[{\"succeededCount\":1}]}}", "spec.successPolicy",
		 "Invalid value: requires indexed completion mode"},
		{NULL, "{\"completions\":5,\"completionMode\":\"Indexed\",\"backoffLimitPerIndex\":1,\"maxFailedIndexes\":2,"
		 "\"successPolicy\":{\"rules\":[{\"succeededIndexes\":\"0,2-4\",\"succeededCount\":2}]}}", NULL, NULL},
		{NULL, "{\"completionMode\":\"Sometimes\"}", "spec.completionMode",
		 "Unsupported value: \"Sometimes\": supported values: \"NonIndexed\", \"Indexed\""},
		{NULL, "{\"backoffLimitPerIndex\":1}", "spec.backoffLimitPerIndex",
		 "Invalid value: 1: requires indexed completion mode"},
		{NULL, "{\"maxFailedIndexes\":1}", "spec.backoffLimitPerIndex", "Required value: when maxFailedIndexes is specified"},
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		json_t *o = json_pack("{s:{s:{s:{s:s, s:[{s:s, s:s}]}}}}", "spec", "template", "spec", "restartPolicy", "Never",
				      "containers", "name", "c", "image", "x");
		if (v[i].extra) {
			json_t *x = json_loads(v[i].extra, 0, NULL);
			json_object_update(json_object_get(o, "spec"), x);
			json_decref(x);
		}
		if (v[i].rules)
			mu__jset(o, "spec.podFailurePolicy", json_pack("{s:o}", "rules", json_loads(v[i].rules, 0, NULL)));
		mu__verr_t e = {0};
		mu__validate_job(o, NULL, &e);
		int found = -1;
		for (int c = 0; c < e.n; c++)
			if (v[i].field && !strcmp(e.c[c].field, v[i].field))
				found = c;
		if (!v[i].field) {
			if (e.n) {
				fprintf(stderr, "case %zu: unexpected %s: %s\n", i, e.c[0].field, e.c[0].msg);
				CHECK(t, 0);
			}
		} else if (found < 0) {
			fprintf(stderr, "case %zu: no error on %s (%d others)\n", i, v[i].field, e.n);
			CHECK(t, 0);
		} else if (v[i].msg) {
			CHECK_STR(t, e.c[found].msg, v[i].msg);
		} else {
			static const char pre[] = "Invalid value: \"Disruption Target\": name part must consist";
			CHECK(t, !strncmp(e.c[found].msg, pre, sizeof pre - 1));
		}
		json_decref(o);
	}
	/* more than 255 values: TooMany, and a 0 among them with In */
	json_t *vals = json_array();
	for (int i = 0; i < 256; i++)
		json_array_append_new(vals, json_integer(i));
	json_t *o = json_pack("{s:{s:{s:[{s:s, s:{s:s, s:o}}]}, s:{s:{s:s, s:[{s:s, s:s}]}}}}", "spec", "podFailurePolicy",
			      "rules", "action", "FailJob", "onExitCodes", "operator", "In", "values", vals, "template", "spec",
			      "restartPolicy", "Never", "containers", "name", "c", "image", "x");
	mu__verr_t e = {0};
	mu__validate_job(o, NULL, &e);
	CHECK(t, e.n >= 2);
	CHECK_STR(t, e.c[0].field, "spec.podFailurePolicy.rules[0].onExitCodes.values");
	CHECK_STR(t, e.c[0].msg, "Too many: 256: must have at most 255 items");
	CHECK_STR(t, e.c[1].msg, "Invalid value: 0: must not be 0 for the In operator");
	json_decref(o);
	/* the annotation muster.io/exit-code of a simulated pod */
	int code = -1;
	CHECK_EQ_INT(t, mu__exit_code("42", "c", &code), 0);
	CHECK_EQ_INT(t, code, 42);
	CHECK_EQ_INT(t, mu__exit_code("main=3,side=0", "main", &code), 0);
	CHECK_EQ_INT(t, code, 3);
	CHECK_EQ_INT(t, mu__exit_code("main=3,side=0", "other", &code), 0);
	CHECK_EQ_INT(t, code, 0);
	CHECK_EQ_INT(t, mu__exit_code("main=x", NULL, &code), -1);
	CHECK_EQ_INT(t, mu__exit_code("99999999999", NULL, &code), -1);
	CHECK_EQ_INT(t, mu__exit_code("", NULL, &code), -1);
}

/* mu__text_at (helpers.c), the scan the controller's no-op check and the
 * garbage collector read a stored object's values with: a key of
 * metadata itself, not one of the same name deeper (a pod template's
 * metadata) or inside a string; a value's whole text (an array with
 * strings holding brackets and escaped quotes, an object, a number); an
 * absent key, and a k1 that is no object, give false. */
static void test_text_at(mu_t_t *t)
{
	const char *x = "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"a\\\"ownerReferences\\\":[1]\","
			"\"labels\":{\"ownerReferences\":\"l\"},\"ownerReferences\":[{\"uid\":\"u]\\\"}\",\"name\":\"o\"}],"
			"\"generation\":12},\"spec\":{\"template\":{\"metadata\":{\"finalizers\":[\"orphan\"]}}},"
			"\"status\":{\"active\":3}}";
	size_t len = strlen(x), n = 0;
	const char *v = NULL;
	CHECK(t, mu__text_at(x, len, "metadata", "ownerReferences", &v, &n));
	CHECK(t, v && n == strlen("[{\"uid\":\"u]\\\"}\",\"name\":\"o\"}]") &&
		 !memcmp(v, "[{\"uid\":\"u]\\\"}\",\"name\":\"o\"}]", n));
	json_t *j = v ? mu__json_parse(v, n) : NULL;
	CHECK(t, json_is_array(j) && !strcmp(json_string_value(json_object_get(json_array_get(j, 0), "uid")), "u]\"}"));
	json_decref(j);
	CHECK(t, mu__text_at(x, len, "metadata", "generation", &v, &n) && n == 2 && !memcmp(v, "12", 2));
	CHECK(t, !mu__text_at(x, len, "metadata", "finalizers", &v, &n)); /* only the template's */
	CHECK(t, mu__text_at(x, len, "status", NULL, &v, &n) && n == strlen("{\"active\":3}"));
	CHECK(t, !mu__text_at(x, len, "kind", "name", &v, &n));
	CHECK(t, !mu__text_at(x, len, "nothing", NULL, &v, &n));
}

/* mu__text_members (helpers.c), the one scan the no-op check reads a
 * Job's members with: for every key the same text as mu__text_at gives
 * (the first member of that name at the top, not one deeper, in an
 * array or inside a string; absent ones NULL), on objects with escaped
 * quotes, duplicate names, nested names and a text cut short; and the
 * count of those found. */
static void test_text_members(mu_t_t *t)
{
	static const char *const texts[] = {
		"{\"managedBy\":\"x\\\"y\",\"suspend\":true,\"template\":{\"spec\":{\"suspend\":false,"
		"\"completions\":9}},\"completions\":3,\"parallelism\":[1,{\"backoffLimit\":2}],\"completions\":4}",
		"{\"a\":\"\\\"suspend\\\":1\",\"list\":[{\"suspend\":true}],\"backoffLimit\":-1,"
		"\"podFailurePolicy\":null,\"activeDeadlineSeconds\":30}",
		"{\"parallelism\":2,\"podReplacementPolicy\":\"Failed\",\"suspend\":{\"x\":[1,2",
		"{}",
		"{\"spec\":{\"suspend\":true},\"status\":{\"active\":1},\"spec\":{}}",
	};
	static const char *const keys[] = {"managedBy", "completions", "parallelism", "backoffLimit", "suspend",
					   "podReplacementPolicy", "podFailurePolicy", "activeDeadlineSeconds",
					   "spec", "status", "template", "x"};
	const int nk = (int)(sizeof keys / sizeof *keys);
	int total = 0;
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
		const char *v[12];
		size_t n[12], len = strlen(texts[i]);
		int found = mu__text_members(texts[i], len, keys, nk, v, n), want = 0;
		for (int q = 0; q < nk; q++) {
			const char *w = NULL;
			size_t wn = 0;
			bool has = mu__text_at(texts[i], len, keys[q], NULL, &w, &wn);
			want += has;
			CHECK(t, has ? v[q] == w && n[q] == wn : v[q] == NULL && n[q] == 0);
		}
		CHECK(t, found == want);
		total += found;
	}
	/* what the texts hold: 5 + 3 (not the suspend in a list or in a
	 * string) + 2 (suspend's object is cut short) + 0 + 2 */
	CHECK(t, total == 12);
	const char *v[12];
	size_t n[12];
	const char *x = texts[0];
	mu__text_members(x, strlen(x), keys, nk, v, n);
	CHECK(t, v[1] && n[1] == 1 && v[1][0] == '3'); /* the first completions, at the top */
	CHECK(t, v[4] && n[4] == 4 && !memcmp(v[4], "true", 4));
	CHECK(t, v[0] && n[0] == 6 && !memcmp(v[0], "\"x\\\"y\"", 6));
	CHECK(t, !v[3]); /* backoffLimit only inside an array */
}

/* Whether job "name"'s stored text holds want. */
static bool job_has(mu_apiserver_t *s, const char *name, const char *want)
{
	mu__obj_t *o = mu__store_get(s->store, MU__RT_JOBS, "default", name);
	bool yes = o && strstr(o->json, want);
	mu__obj_unref(o);
	return yes;
}

/* TestControllerSyncJob's Indexed cases, translated: "indexed job start"
 * (parallelism 2 of 3 completions: indexes 0 and 1 made, each pod with
 * its index annotation and label, hostname and the tracking finalizer),
 * then the pods succeed ("indexed job completed": completedIndexes "0,1",
 * then "0-2", succeeded 3, the finalizers removed, Complete). */
static void test_indexed(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "ix");
	if (!jc)
		return;
	put_default_sa(t, &s);
	spec_put_t p = {"ix", 1, 2, 3, 6, false, 0, NULL, false, NULL, "{\"completionMode\":\"Indexed\"}"};
	put_spec(t, &s, jc, &p, 0);
	CHECK_EQ_INT(t, npods(t, &s, "ix"), 2);
	mu__page_t pods;
	CHECK_EQ_INT(t, mu__store_list(s.store, MU__RT_PODS, "default", NULL, 1000, NULL, NULL, &pods), MU_OK);
	int seen = 0;
	for (size_t i = 0; i < pods.n; i++) {
		const char *j = pods.objs[i]->json;
		if (!strstr(j, "\"batch.kubernetes.io/job-name\":\"ix\""))
			continue;
		CHECK(t, strstr(j, "\"finalizers\":[\"batch.kubernetes.io/job-tracking\"]") != NULL);
		CHECK(t, strstr(j, "JOB_COMPLETION_INDEX") != NULL);
		for (int k = 0; k < 2; k++) {
			char a[120], h[40];
			snprintf(a, sizeof a, "\"batch.kubernetes.io/job-completion-index\":\"%d\"", k);
			snprintf(h, sizeof h, "\"hostname\":\"ix-%d\"", k);
			seen |= (strstr(j, a) && strstr(j, h) && !strncmp(pods.objs[i]->name, k ? "ix-1-" : "ix-0-", 5)) << k;
		}
	}
	mu__page_release(&pods);
	CHECK_EQ_INT(t, seen, 3);
	set_phase(t, &s, "ix", "Succeeded");
	p.gen = 2;
	put_spec(t, &s, jc, &p, 10);
	CHECK(t, job_has(&s, "ix", "\"completedIndexes\":\"0,1\""));
	CHECK_EQ_INT(t, (int)job_int(&s, "ix", "status.succeeded"), 2);
	CHECK_EQ_INT(t, npods(t, &s, "ix"), 3); /* index 2 made */
	set_phase(t, &s, "ix", "Succeeded");
	p.gen = 3;
	put_spec(t, &s, jc, &p, 20);
	CHECK(t, job_has(&s, "ix", "\"completedIndexes\":\"0-2\""));
	CHECK_EQ_INT(t, (int)job_int(&s, "ix", "status.succeeded"), 3);
	CHECK(t, job_has(&s, "ix", "\"type\":\"Complete\""));
	CHECK_EQ_INT(t, mu__store_list(s.store, MU__RT_PODS, "default", NULL, 1000, NULL, NULL, &pods), MU_OK);
	for (size_t i = 0; i < pods.n; i++)
		CHECK(t, !strstr(pods.objs[i]->json, "\"finalizers\":["));
	mu__page_release(&pods);
	server_close(&s, jc);
}

/* A full reconcile of a Job whose stored version is the controller's own
 * last status write reads the tree that write kept (mu__store_apply_keep,
 * round 18) rather than parsing the text, and writes the same: a Job made
 * and reconciled (parsed: no write of the controller's yet), its pod
 * Succeeded and the Job reconciled again (kept: succeeded 1, Complete, the
 * finalizer removed); another writer's version of a Job is parsed. */
static void test_tree_kept(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = server_open(t, &s, "tk");
	if (!jc)
		return;
	put_default_sa(t, &s);
	mu__obj_t *o = NULL;
	size_t kept = 9, parsed = 9;
	CHECK(t, mu__store_mutate(s.store, MU__RT_JOBS, "default", "tk", run1_fn, "tk", false, &o) >= 0);
	if (o)
		event(jc, MU__EV_ADDED, o, NULL, 0);
	mu__obj_unref(o);
	mu__jobctl_sync(jc, 0);
	CHECK_EQ_INT(t, npods(t, &s, "tk"), 1);
	CHECK_EQ_INT(t, (int)job_int(&s, "tk", "status.active"), 1);
	mu__jobctl_tree_stats(jc, &kept, &parsed);
	CHECK_EQ_INT(t, (int)kept, 0);
	CHECK_EQ_INT(t, (int)parsed, 1);
	set_phase(t, &s, "tk", "Succeeded");
	o = mu__store_get(s.store, MU__RT_JOBS, "default", "tk");
	if (o)
		event(jc, MU__EV_MODIFIED, o, o, 10);
	mu__obj_unref(o);
	mu__jobctl_sync(jc, 5000);
	mu__jobctl_tree_stats(jc, &kept, &parsed);
	CHECK_EQ_INT(t, (int)kept, 1);
	CHECK_EQ_INT(t, (int)parsed, 1);
	CHECK_EQ_INT(t, (int)job_int(&s, "tk", "status.succeeded"), 1);
	CHECK_EQ_INT(t, (int)job_int(&s, "tk", "status.active"), 0);
	mu__page_t pods;
	CHECK_EQ_INT(t, mu__store_list(s.store, MU__RT_PODS, "default", NULL, 1000, NULL, NULL, &pods), MU_OK);
	for (size_t i = 0; i < pods.n; i++)
		CHECK(t, !strstr(pods.objs[i]->json, "\"finalizers\":["));
	mu__page_release(&pods);
	mu__jobctl_sync(jc, 10000); /* the Job's own write back: Complete */
	CHECK(t, job_has(&s, "tk", "\"type\":\"Complete\""));
	/* another writer's version is parsed */
	mu__jobctl_tree_stats(jc, &kept, &parsed);
	size_t k0 = kept, p0 = parsed;
	CHECK(t, mu__store_mutate(s.store, MU__RT_JOBS, "default", "tk", active5_fn, NULL, false, &o) >= 0);
	if (o)
		event(jc, MU__EV_MODIFIED, o, o, 20000);
	mu__obj_unref(o);
	mu__jobctl_sync(jc, 30000);
	mu__jobctl_tree_stats(jc, &kept, &parsed);
	CHECK_EQ_INT(t, (int)(kept - k0), 0);
	CHECK_EQ_INT(t, (int)(parsed - p0), 1);
	CHECK_EQ_INT(t, (int)job_int(&s, "tk", "status.active"), 0);
	server_close(&s, jc);
}

/* Puts the Namespace "default" (as muster up's start does). */
static int ns_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)ctx;
	(void)cur;
	*out = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "Namespace", "metadata", "name",
			 "default", "uid", "default-ns-uid");
	return MU__MUT_PUT;
}

/* server_open, with what the API's handlers need for a Job in "default":
 * the Namespace and its default ServiceAccount. */
static mu__jobctl_t *api_open(mu_t_t *t, mu_apiserver_t *s, const char *sub)
{
	mu__jobctl_t *jc = server_open(t, s, sub);
	if (!jc)
		return NULL;
	put_default_sa(t, s);
	CHECK(t, mu__store_mutate(s->store, MU__RT_NAMESPACES, NULL, "default", ns_fn, NULL, false, NULL) >= 0);
	return jc;
}

/* Sends body to the Job handlers of the API as muster up runs them,
 * without a server thread: a POST to mu__do_create (name NULL) or a merge
 * patch of Job name to mu__do_patch; answers the HTTP code. */
static int send_job(mu_apiserver_t *s, const char *name, const char *body)
{
	mu__req_t rq;
	memset(&rq, 0, sizeof rq);
	rq.method = name ? "PATCH" : "POST";
	rq.ctype = name ? "application/merge-patch+json" : "application/json";
	rq.body = body;
	rq.body_len = strlen(body);
	snprintf(rq.route.ns, sizeof rq.route.ns, "default");
	snprintf(rq.route.name, sizeof rq.route.name, "%s", name ? name : "");
	rq.route.kind = MU__RT_JOBS;
	mu__resp_t rs;
	memset(&rs, 0, sizeof rs);
	json_t *b = json_loads(body, 0, NULL);
	if (b && name)
		mu__do_patch(s, &rq, &rs, MU__RT_JOBS, b);
	else if (b)
		mu__do_create(s, &rq, &rs, MU__RT_JOBS, b);
	json_decref(b);
	free(rs.body);
	return rs.code;
}

/* POSTs a Job of one pod named name (send_job) and hands the Job
 * controller its ADDED event; answers the HTTP code. */
static int post_job(mu_apiserver_t *s, mu__jobctl_t *jc, const char *name)
{
	char body[512];
	snprintf(body, sizeof body,
		 "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\"},\"spec\":{"
		 "\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\","
		 "\"image\":\"x\"}]}}}}",
		 name);
	int code = send_job(s, NULL, body);
	mu__obj_t *o = mu__store_get(s->store, MU__RT_JOBS, "default", name);
	if (o)
		event(jc, MU__EV_ADDED, o, NULL, 0);
	mu__obj_unref(o);
	return code;
}

/* A Job created through the API keeps its tree for the controller's first
 * reconcile (round 20: that reconcile parsed the text just written, a
 * third of the full reconciles of bench/dispatch.sh's workers), and the
 * status written from it is the one written from a parse: two Jobs
 * created alike, the second's kept tree taken out before the reconcile,
 * end with the same status and the same managedFields but for their
 * times. */
static void test_create_kept(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = api_open(t, &s, "ck");
	if (!jc)
		return;
	CHECK_EQ_INT(t, post_job(&s, jc, "ck-a"), 201);
	mu__jobctl_sync(jc, 0);
	size_t kept = 9, parsed = 9;
	mu__jobctl_tree_stats(jc, &kept, &parsed);
	CHECK_EQ_INT(t, (int)kept, 1);
	CHECK_EQ_INT(t, (int)parsed, 0);
	CHECK_EQ_INT(t, npods(t, &s, "ck-a"), 1);
	CHECK_EQ_INT(t, (int)job_int(&s, "ck-a", "status.active"), 1);
	/* the second Job's tree taken out: its reconcile parses */
	CHECK_EQ_INT(t, post_job(&s, jc, "ck-b"), 201);
	mu__obj_t *o = mu__store_get(s.store, MU__RT_JOBS, "default", "ck-b");
	bool was = false;
	json_decref(o ? mu__store_take_tree(s.store, o, &was) : NULL);
	mu__obj_unref(o);
	CHECK(t, was);
	mu__jobctl_sync(jc, 10);
	mu__jobctl_tree_stats(jc, &kept, &parsed);
	CHECK_EQ_INT(t, (int)kept, 1);
	CHECK_EQ_INT(t, (int)parsed, 1);
	char *txt[2] = {NULL, NULL};
	const char *names[2] = {"ck-a", "ck-b"};
	for (int i = 0; i < 2; i++) {
		mu__obj_t *j = mu__store_get(s.store, MU__RT_JOBS, "default", names[i]);
		json_t *tree = j ? mu__obj_parse(j) : NULL;
		mu__obj_unref(j);
		json_t *mf = json_deep_copy(mu__jget(tree, "metadata.managedFields"));
		size_t k;
		json_t *e;
		json_array_foreach(mf, k, e)
			json_object_del(e, "time");
		json_t *both = json_pack("{s:O?, s:o?}", "status", mu__jget(tree, "status"), "mf", mf);
		txt[i] = both ? json_dumps(both, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		json_decref(both);
		json_decref(tree);
	}
	CHECK(t, txt[0] && txt[1] && strstr(txt[0], "\"active\":1"));
	CHECK_STR(t, txt[0] ? txt[0] : "", txt[1] ? txt[1] : "-");
	free(txt[0]);
	free(txt[1]);
	server_close(&s, jc);
}

/* Puts ctx (a tree the caller holds) as it is. */
static int same_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)cur;
	*out = json_incref(ctx);
	return MU__MUT_PUT;
}

/* A PATCH of a Job reads the tree the last write kept rather than parsing
 * the stored text, and keeps its own (round 20: the hub's two PATCHes of
 * each dispatched Job parsed it each time).  To see which it read, the
 * kept tree is marked after the store wrote its text: the marker shows
 * in what the PATCH writes only when the PATCH read the tree.  The tree
 * the PATCH keeps is the parse of what it stored. */
static void test_patch_kept(mu_t_t *t)
{
	mu_apiserver_t s;
	mu__jobctl_t *jc = api_open(t, &s, "pk");
	if (!jc)
		return;
	CHECK_EQ_INT(t, post_job(&s, jc, "pk"), 201);
	mu__obj_t *o = mu__store_get(s.store, MU__RT_JOBS, "default", "pk");
	json_t *tree = o ? mu__obj_parse(o) : NULL;
	mu__obj_unref(o);
	CHECK(t, tree != NULL);
	if (!tree) {
		server_close(&s, jc);
		return;
	}
	CHECK(t, mu__store_mutate_keep(s.store, MU__RT_JOBS, "default", "pk", same_fn, tree, false, NULL) >= 0);
	json_object_set_new(mu__jget(tree, "metadata"), "annotations", json_pack("{s:s}", "example.com/marker", "kept"));
	json_decref(tree);
	CHECK_EQ_INT(t, send_job(&s, "pk", "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}"), 200);
	o = mu__store_get(s.store, MU__RT_JOBS, "default", "pk");
	CHECK(t, o && strstr(o->json, "\"example.com/marker\":\"kept\"") && strstr(o->json, "\"a\":\"b\""));
	bool was = false;
	json_t *kept = o ? mu__store_take_tree(s.store, o, &was) : NULL;
	json_t *parsed = o ? mu__obj_parse(o) : NULL;
	CHECK(t, was);
	CHECK(t, kept && parsed && json_equal(kept, parsed));
	json_decref(kept);
	json_decref(parsed);
	mu__obj_unref(o);
	server_close(&s, jc);
}

/* The completion-index intervals of Indexed Jobs, translated from
 * indexed_job_utils_test.go (kubernetes pkg/controller/job):
 * TestCalculateSucceededIndexes (prior completedIndexes and new succeeded
 * indexes merged; a corrupt or out-of-range interval skipped or cut),
 * the String() format ("1,3-5", two neighbours as "5,6"),
 * TestFirstPendingIndexes (the lowest indexes not taken), and
 * validateIndexesFormat's errors (TestValidateJob's successPolicy cases). */
static void test_intervals(mu_t_t *t)
{
	static const struct {
		const char *prev;
		long long comp;
		long long add[6];
		size_t nadd;
		const char *want;
	} c[] = {
		{"", 5, {0}, 0, ""},                       /* "1 new succeeded" of none */
		{"", 5, {1}, 1, "1"},
		{"0-2", 8, {5, 6}, 2, "0-2,5,6"},          /* "5,6": two neighbours */
		{"0,2-4", 8, {1, 7}, 2, "0-4,7"},          /* merge across */
		{"1,x,3-5", 8, {0}, 1, "0,1,3-5"},         /* "corrupted interval" skipped */
		{"0-2,6-9", 8, {0}, 1, "0-2,6,7"},         /* "out of range" cut */
		{"3-5,9", 6, {1}, 1, "1,3-5"},             /* from completions on: dropped */
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		mu__ivls_t prev, out;
		CHECK_EQ_INT(t, mu__ivls_parse(c[i].prev, c[i].comp, &prev), MU_OK);
		CHECK_EQ_INT(t, mu__ivls_with(&prev, c[i].add, c[i].nadd, &out), MU_OK);
		char *str = mu__ivls_str(&out);
		CHECK_STR(t, str ? str : "(null)", c[i].want);
		free(str);
		mu__ivls_release(&prev);
		mu__ivls_release(&out);
	}
	mu__ivls_t s;
	CHECK_EQ_INT(t, mu__ivls_parse("1,3-5", 10, &s), MU_OK);
	CHECK_EQ_INT(t, (int)mu__ivls_total(&s), 4);
	CHECK(t, mu__ivls_has(&s, 4) && !mu__ivls_has(&s, 2) && !mu__ivls_has(&s, 6));
	long long out[8];
	/* TestFirstPendingIndexes: "some succeeded and active": 0, 2, 6 */
	CHECK_EQ_INT(t, (int)mu__ivls_first_free(&s, 3, 10, out), 3);
	CHECK(t, out[0] == 0 && out[1] == 2 && out[2] == 6);
	/* "completions limit": no more than completions */
	CHECK_EQ_INT(t, (int)mu__ivls_first_free(&s, 8, 5, out), 2);
	mu__ivls_release(&s);
	long long total;
	char msg[200];
	CHECK_EQ_INT(t, mu__ivls_check("0,2-4", 5, &total, msg, sizeof msg), MU_OK);
	CHECK_EQ_INT(t, (int)total, 4);
	CHECK_EQ_INT(t, mu__ivls_check("1-3-5", 9, &total, msg, sizeof msg), MU_EINVAL);
	CHECK_STR(t, msg, "the fragment \"1-3-5\" violates the requirement that an index interval can have at most two "
		  "parts separated by '-'");
	CHECK_EQ_INT(t, mu__ivls_check("a", 9, &total, msg, sizeof msg), MU_EINVAL);
	CHECK_STR(t, msg, "cannot convert string to integer for index: \"a\"");
	CHECK_EQ_INT(t, mu__ivls_check("3-2", 9, &total, msg, sizeof msg), MU_EINVAL);
	CHECK_STR(t, msg, "non-increasing order, previous: 3, current: 2");
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	snprintf(dir, sizeof dir, "/tmp/mu-jobctl-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	MU_RUN(&t, test_text_at);
	MU_RUN(&t, test_text_members);
	MU_RUN(&t, test_batching);
	MU_RUN(&t, test_failed_create);
	MU_RUN(&t, test_successful_create);
	MU_RUN(&t, test_status_fields);
	MU_RUN(&t, test_transition_events);
	MU_RUN(&t, test_active_deadline);
	MU_RUN(&t, test_failed_counts);
	MU_RUN(&t, test_event_aggregation);
	MU_RUN(&t, test_correlator);
	MU_RUN(&t, test_correlator_spam);
	MU_RUN(&t, test_pod_replacement);
	MU_RUN(&t, test_fail_counts_terminating);
	MU_RUN(&t, test_replacement_api);
	MU_RUN(&t, test_pfp_match);
	MU_RUN(&t, test_pfp_controller);
	MU_RUN(&t, test_success_criteria);
	MU_RUN(&t, test_tree_kept);
	MU_RUN(&t, test_create_kept);
	MU_RUN(&t, test_patch_kept);
	MU_RUN(&t, test_pfp_validation);
	MU_RUN(&t, test_intervals);
	MU_RUN(&t, test_indexed);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return mu_t_done(&t);
}

/*
 * jobctl.c - a minimal batch/v1 Job controller.
 *
 * For a Job that is not suspended and not finished it keeps `parallelism`
 * pods (fewer when few completions remain) made from the template, with
 * the job-name and controller-uid labels and a controlling owner
 * reference (the Job's muster.io/duration annotation is copied to pods that
 * lack one).  Suspending a Job deletes its active pods, which is how Kueue
 * pauses it.  It counts active, ready, succeeded and failed pods into the
 * status, marks the Job Complete when enough pods succeeded, or Failed past
 * backoffLimit failures, and deletes a deleted Job's pods.  A pod it
 * cannot create (admission refuses it) is recorded as Kubernetes' Job
 * controller records it: a Warning Event FailedCreate on the Job.  Its other
 * Events are Kubernetes' Job controller's too, each in the transaction of
 * the change and only on its transition: SuccessfulDelete for each pod it
 * deletes (a suspend, a lowered parallelism, a failure), Suspended and
 * Resumed when the Suspended condition turns, Completed and
 * BackoffLimitExceeded when the Job ends.  A Job whose
 * spec.managedBy names another controller (not kubernetes.io/job-controller)
 * is left alone, pods and status, as Kubernetes' controller does.
 * spec.activeDeadlineSeconds is enforced as syncJob does (round 13): a Job
 * not finished and not suspended whose status.startTime is that many
 * seconds ago fails (after backoffLimit is checked) with the FailureTarget
 * and Failed conditions of reason DeadlineExceeded and the Warning Event of
 * that reason, and one whose deadline is ahead is reconciled again when
 * it passes (a heap of due times beside the batch queue).  A Job that
 * fails deletes its active pods and counts them as failed, and its failed
 * count does not fall when its pods go.  status.terminating counts the
 * Job's pods being deleted and not yet Succeeded or Failed, those it
 * deletes in the reconcile included, and spec.podReplacementPolicy
 * decides when a replacement is made, as kube's controller does with
 * JobPodReplacementPolicy (on by default since 1.29, round 15):
 * TerminatingOrFailed replaces a pod once it is terminating, Failed (set
 * by default when spec.podFailurePolicy is) only once it has failed, so
 * the terminating pods count against parallelism.  spec.podFailurePolicy
 * is applied as matchPodFailurePolicy (round 15): a failed pod matching a
 * FailJob rule fails the Job (reason PodFailurePolicy, kube's message), one
 * matching Ignore is not counted, Count or no rule counts it.  As kube
 * 1.31+ (enactJobFinished with delayTerminalCondition) a failing Job has
 * FailureTarget and a succeeding one SuccessCriteriaMet until no pod of it
 * is terminating, and only then Failed or Complete.  Indexed Jobs are
 * refused by the API server (validate.c), not modelled here.
 *
 * Level-triggered: changes mark jobs dirty (mu__jobctl_event) and
 * mu__jobctl_sync() reconciles each dirty job from the store.  It runs on
 * the controller thread; a reconcile creates at most MU__TX_MAX / 4 pods
 * (each with the Normal Event SuccessfulCreate on the Job, as Kubernetes'
 * pod control records it) and marks the job dirty again to finish later.
 *
 * A job finds its pods through an index by controller uid (the pods'
 * batch.kubernetes.io/controller-uid label), kept from the pod events and
 * rebuilt from one list of the pods at each resync, as Kubernetes' Job
 * controller reads its pods from an informer's index rather than listing
 * them: a reconcile costs O(its pods), not O(all pods), so N jobs cost
 * O(N) rather than O(N^2) (bench/jobctl.sh).  The pods a reconcile
 * creates enter the index at once (their events come later), so that a
 * job marked again before they arrive does not make them twice; a key
 * whose pod is gone is dropped when next read.  The dirty jobs are a set
 * (a hash), so marking is O(1) however many jobs wait.
 *
 * When a job is reconciled follows Kubernetes' Job controller
 * (pkg/controller/job: enqueueSyncJobImmediately and
 * enqueueSyncJobBatched): a Job added, or changed in its spec (a new
 * metadata.generation, such as a suspend flag flipped), is reconciled at
 * the next sync; a pod's event, and a Job's change that keeps its
 * generation (a status or metadata write, its own included), wait one
 * batch period (syncJobBatchPeriod, 1 s) after the first such event, and
 * every event of that job in the meantime is folded into the one
 * reconcile.  Most of a dispatch's reconciles were these: a copy's pod
 * created, bound and running, each with the Job's own status write coming
 * back, and on the hub every write of the dispatcher to a suspended Job
 * (docs/dispatch.md, round 9).  The waiting jobs are a hash of their due
 * times and a queue in due order (the period is constant, so arrival
 * order is due order).  A reconcile with nothing to write is found from
 * the Job's text and its status alone (quick_keep), and the reconciles of
 * one sync share a write transaction.  A status write keeps its tree in
 * the store (mu__store_apply_keep), and the Job's next full reconcile,
 * when the Job is still that version, reads it instead of parsing the
 * text again (round 18).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"
#include "apiserver/ssa.h"

#define BATCH_MS 1000 /* syncJobBatchPeriod */

typedef struct later {
	char *key;               /* "ns/name" (owned) */
	int64_t due;             /* ms, mu__mono_ms's clock */
} later_t;

struct mu__jobctl {
	mu_apiserver_t *s;
	json_t *dirty;           /* set: "ns/name" -> null, reconciled at the next sync */
	json_t *wait;            /* "ns/name" -> due ms: batched, not yet due */
	later_t *q;              /* ring of the batched marks in due order */
	size_t qhead, qn, qcap;
	bool all;                /* reconcile every job (and rebuild pods) */
	json_t *pods;            /* controller uid -> {pod "ns/name" -> null} */
	char *gone[64];          /* uids of deleted jobs whose pods go */
	int ngone;
	later_t *dl;             /* min-heap by due: active deadlines to reconcile at */
	size_t dln, dlcap;
	json_t *dlwant;          /* "ns/name" -> the due of its live heap entry */
	int64_t now;             /* the sync's now_ms, for reconcile's requeues */
	mu__evcorr_t *events;    /* its Events' correlator (events_corr.c; NULL: none) */
	mu__mf_memo_t *memo;     /* managedFields of the status writes, by shape (ssa.h) */
	size_t kept, parsed;     /* reconciles' Jobs: the tree of its own write, a parse */
};

int mu__jobctl_new(mu_apiserver_t *s, mu__jobctl_t **out)
{
	*out = calloc(1, sizeof **out);
	if (!*out)
		return MU_ENOMEM;
	(*out)->s = s;
	(*out)->dirty = json_object();
	(*out)->wait = json_object();
	(*out)->pods = json_object();
	(*out)->dlwant = json_object();
	(*out)->events = mu__evcorr_new(); /* NULL: every Event new */
	(*out)->memo = mu__mf_memo_new(); /* NULL: every record in full */
	if (!(*out)->dirty || !(*out)->wait || !(*out)->pods || !(*out)->dlwant) {
		mu__jobctl_free(*out);
		*out = NULL;
		return MU_ENOMEM;
	}
	return MU_OK;
}

void mu__jobctl_free(mu__jobctl_t *jc)
{
	if (!jc)
		return;
	json_decref(jc->dirty);
	json_decref(jc->wait);
	json_decref(jc->pods);
	json_decref(jc->dlwant);
	mu__evcorr_free(jc->events);
	for (size_t i = 0; i < jc->dln; i++)
		free(jc->dl[i].key);
	free(jc->dl);
	mu__mf_memo_free(jc->memo);
	for (size_t i = 0; i < jc->qn; i++)
		free(jc->q[(jc->qhead + i) % jc->qcap].key);
	free(jc->q);
	for (int i = 0; i < jc->ngone; i++)
		free(jc->gone[i]);
	free(jc);
}

void mu__jobctl_memo_stats(const mu__jobctl_t *jc, size_t *hits, size_t *misses)
{
	*hits = *misses = 0;
	if (jc->memo)
		mu__mf_memo_stats(jc->memo, hits, misses);
}

void mu__jobctl_tree_stats(const mu__jobctl_t *jc, size_t *kept, size_t *parsed)
{
	*kept = jc->kept;
	*parsed = jc->parsed;
}

/* Marks job ns/name dirty: reconciled at the next sync.  O(1); a failed
 * allocation reconciles all. */
static void mark(mu__jobctl_t *jc, const char *ns, const char *name)
{
	char key[600];
	snprintf(key, sizeof key, "%s/%s", ns, name);
	if (json_object_set_new(jc->dirty, key, json_null()))
		jc->all = true;
}

/* Marks job ns/name for a reconcile one batch period from now, unless it
 * is dirty already or waits (since an earlier time: the period is
 * constant).  O(1) amortised (the ring doubles); a failed allocation
 * marks it dirty instead. */
static void mark_batched(mu__jobctl_t *jc, const char *ns, const char *name, int64_t now)
{
	char key[600];
	snprintf(key, sizeof key, "%s/%s", ns, name);
	if (json_object_get(jc->dirty, key) || json_object_get(jc->wait, key))
		return;
	if (jc->qn == jc->qcap) {
		size_t cap = jc->qcap ? 2 * jc->qcap : 64;
		later_t *q = malloc(cap * sizeof *q);
		if (!q) {
			mark(jc, ns, name);
			return;
		}
		for (size_t i = 0; i < jc->qn; i++)
			q[i] = jc->q[(jc->qhead + i) % jc->qcap];
		free(jc->q);
		jc->q = q;
		jc->qcap = cap;
		jc->qhead = 0;
	}
	later_t *l = &jc->q[(jc->qhead + jc->qn) % jc->qcap];
	if (!(l->key = strdup(key)) || json_object_set_new(jc->wait, key, json_integer(now + BATCH_MS))) {
		free(l->key);
		mark(jc, ns, name);
		return;
	}
	l->due = now + BATCH_MS;
	jc->qn++;
}

/* --- active deadlines ---------------------------------------------------- */

/* Swaps heap entries i and k. */
static void dl_swap(later_t *h, size_t i, size_t k)
{
	later_t x = h[i];
	h[i] = h[k];
	h[k] = x;
}

/* Asks for job key to be reconciled at due (mu__mono_ms's clock), as
 * Kubernetes' Job controller requeues a Job with activeDeadlineSeconds
 * for the moment its deadline passes (queue.AddAfter in syncJob).  A key
 * asked for within a second of the due it has already (the deadline is
 * in whole seconds) is not pushed again; one asked for at another due
 * leaves its old entry, found stale when popped.  O(log n)
 * (the heap doubles); a failed allocation marks the job dirty instead. */
static void dl_push(mu__jobctl_t *jc, const char *key, int64_t due)
{
	json_t *had = json_object_get(jc->dlwant, key);
	if (had && json_integer_value(had) > due - 1000 && json_integer_value(had) < due + 1000)
		return;
	if (jc->dln == jc->dlcap) {
		size_t cap = jc->dlcap ? 2 * jc->dlcap : 16;
		later_t *h = realloc(jc->dl, cap * sizeof *h);
		if (!h) {
			if (json_object_set_new(jc->dirty, key, json_null()))
				jc->all = true;
			return;
		}
		jc->dl = h;
		jc->dlcap = cap;
	}
	char *k = strdup(key);
	if (!k || json_object_set_new(jc->dlwant, key, json_integer(due))) {
		free(k);
		jc->all = true;
		return;
	}
	size_t i = jc->dln++;
	jc->dl[i] = (later_t){k, due};
	while (i > 0 && jc->dl[(i - 1) / 2].due > jc->dl[i].due) {
		dl_swap(jc->dl, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

/* Removes the heap's first entry (its key freed).  O(log n). */
static void dl_pop(mu__jobctl_t *jc)
{
	free(jc->dl[0].key);
	jc->dl[0] = jc->dl[--jc->dln];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < jc->dln && jc->dl[l].due < jc->dl[m].due)
			m = l;
		if (l + 1 < jc->dln && jc->dl[l + 1].due < jc->dl[m].due)
			m = l + 1;
		if (m == i)
			break;
		dl_swap(jc->dl, i, m);
		i = m;
	}
}

/* Moves the jobs whose deadline is due by now to the dirty set, and drops
 * stale entries from the top.  O(those popped * log n). */
static void dl_take(mu__jobctl_t *jc, int64_t now)
{
	while (jc->dln) {
		json_t *want = json_object_get(jc->dlwant, jc->dl[0].key);
		bool live = want && json_integer_value(want) == jc->dl[0].due;
		if (live && jc->dl[0].due > now)
			return;
		if (live) {
			json_object_del(jc->dlwant, jc->dl[0].key);
			if (json_object_set_new(jc->dirty, jc->dl[0].key, json_null()))
				jc->all = true;
		}
		dl_pop(jc);
	}
}

/* metadata.generation of an object's text, or -1.  O(the text before it). */
static long long text_generation(const char *t, size_t len)
{
	const char *v;
	size_t n;
	return mu__text_at(t, len, "metadata", "generation", &v, &n) ? strtoll(v, NULL, 10) : -1;
}

void mu__jobctl_resync(mu__jobctl_t *jc)
{
	jc->all = true;
}

/* --- the pods by controller uid ------------------------------------------ */

/* A pod's controller uid (label), or NULL. */
static const char *pod_uid(const mu__obj_t *o)
{
	const char *v = mu__obj_label(o, "batch.kubernetes.io/controller-uid");
	return v ? v : mu__obj_label(o, "controller-uid");
}

/* Adds pod key to uid's set.  O(1); a failed allocation rebuilds at the
 * next sync. */
static void index_add(mu__jobctl_t *jc, const char *uid, const char *key)
{
	json_t *set = json_object_get(jc->pods, uid);
	if (!set && (!(set = json_object()) || json_object_set_new(jc->pods, uid, set)))
		set = NULL;
	if (!set || json_object_set_new(set, key, json_null()))
		jc->all = true;
}

/* Removes pod key from uid's set (and the set once empty).  O(1). */
static void index_del(mu__jobctl_t *jc, const char *uid, const char *key)
{
	json_t *set = json_object_get(jc->pods, uid);
	if (!set)
		return;
	json_object_del(set, key);
	if (!json_object_size(set))
		json_object_del(jc->pods, uid);
}

static int index_page(void *ctx, mu__page_t *pg)
{
	mu__jobctl_t *jc = ctx;
	for (size_t i = 0; i < pg->n; i++) {
		const char *uid = pod_uid(pg->objs[i]);
		if (uid)
			index_add(jc, uid, pg->objs[i]->key);
	}
	return 0;
}

/* The index again from one walk of every pod.  O(pods). */
static void index_rebuild(mu__jobctl_t *jc)
{
	json_object_clear(jc->pods);
	mu__store_each(jc->s->store, MU__RT_PODS, NULL, 1000, NULL, NULL, index_page, jc);
}

void mu__jobctl_event(mu__jobctl_t *jc, const mu__wev_t *ev, int64_t now_ms)
{
	const mu__obj_t *o = ev->obj;
	if (o->rt == MU__RT_JOBS) {
		if (ev->type == MU__EV_MODIFIED && ev->prev &&
		    text_generation(o->json, o->len) == text_generation(ev->prev->json, ev->prev->len)) {
			mark_batched(jc, o->ns, o->name, now_ms); /* status or metadata */
		} else if (ev->type != MU__EV_DELETED) {
			mark(jc, o->ns, o->name); /* added, or its spec changed */
		} else if (jc->ngone < 64) {
			json_t *j = mu__obj_parse(o);
			const char *uid = mu__jstr(j, "metadata.uid");
			if (uid && (jc->gone[jc->ngone] = strdup(uid)))
				jc->ngone++;
			json_decref(j);
		}
	} else if (o->rt == MU__RT_PODS) {
		const char *uid = pod_uid(o), *was = ev->prev ? pod_uid(ev->prev) : NULL;
		if (was && (ev->type == MU__EV_DELETED || !uid || strcmp(uid, was)))
			index_del(jc, was, ev->prev->key);
		if (uid && ev->type == MU__EV_DELETED)
			index_del(jc, uid, o->key);
		else if (uid)
			index_add(jc, uid, o->key);
		const char *job = mu__obj_label(o, "batch.kubernetes.io/job-name");
		if (!job)
			job = mu__obj_label(o, "job-name");
		if (job)
			mark_batched(jc, o->ns, job, now_ms);
	}
}

/* --- reconcile ---------------------------------------------------------- */

typedef struct counts {
	int active, ready, succeeded, failed;
	int terminating; /* deletionTimestamp set, not Succeeded or Failed (CountTerminatingPods) */
} counts_t;

typedef struct uid_filter {
	const char *uid;
} uid_filter_t;

static bool owned(void *ctx, const mu__obj_t *o)
{
	const char *v = pod_uid(o);
	return v && !strcmp(v, ((uid_filter_t *)ctx)->uid);
}

/* A pod the garbage collector deletes with the job: labelled by it and
 * still listing it among its owner references (an orphaned pod keeps the
 * labels but lost the reference). */
static bool dependent(void *ctx, const mu__obj_t *o)
{
	char needle[128];
	snprintf(needle, sizeof needle, "\"uid\":\"%.80s\"", ((uid_filter_t *)ctx)->uid);
	return owned(ctx, o) && strstr(o->json, needle);
}

/* The job's pods in ns (references, in no order) in *pg, from the index;
 * each is read from the store and checked, and a key whose pod is gone or
 * no longer the job's leaves the index.  O(the job's pods). */
static int job_pods(mu__jobctl_t *jc, const char *ns, const char *uid, mu__page_t *pg)
{
	memset(pg, 0, sizeof *pg);
	json_t *set = json_object_get(jc->pods, uid);
	size_t cap = json_object_size(set);
	if (!cap)
		return MU_OK;
	if (!(pg->objs = malloc(cap * sizeof *pg->objs)))
		return MU_ENOMEM;
	uid_filter_t f = {uid};
	const char *key;
	json_t *v;
	void *tmp;
	json_object_foreach_safe(set, tmp, key, v) {
		const char *slash = strchr(key, '/');
		char pns[256];
		mu__obj_t *o = NULL;
		if (slash && (size_t)(slash - key) < sizeof pns) {
			snprintf(pns, sizeof pns, "%.*s", (int)(slash - key), key);
			o = mu__store_get(jc->s->store, MU__RT_PODS, pns, slash + 1);
		}
		if (o && owned(&f, o) && !strcmp(o->ns, ns)) {
			pg->objs[pg->n++] = o;
			continue;
		}
		if (!o || !owned(&f, o))
			json_object_del(set, key); /* gone, or relabelled */
		mu__obj_unref(o);
	}
	if (!json_object_size(set))
		json_object_del(jc->pods, uid);
	return MU_OK;
}

static bool is_active(const mu__obj_t *p)
{
	const char *ph = mu__obj_field(p, "status.phase");
	return !p->deleting && !(ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed")));
}

static counts_t count(const mu__page_t *pg)
{
	counts_t c = {0, 0, 0, 0, 0};
	for (size_t i = 0; i < pg->n; i++) {
		const char *ph = mu__obj_field(pg->objs[i], "status.phase");
		if (ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed")))
			continue; /* counted through the finalizer, not here */
		else if (pg->objs[i]->deleting) {
			c.terminating++;
		} else {
			c.active++;
			c.ready += ph && !strcmp(ph, "Running");
		}
	}
	return c;
}

/* --- spec.podFailurePolicy ---------------------------------------------- */

/* The first container of statuses (a containerStatuses or
 * initContainerStatuses list) terminated with a non-zero exit code that
 * the onExitCodes requirement req matches (its containerName, if any,
 * and operator), or NULL, as getMatchingContainerFromList.  O(the
 * statuses * the values). */
static const json_t *exit_match(const json_t *statuses, const json_t *req)
{
	const char *cn = json_string_value(json_object_get(req, "containerName"));
	const char *op = json_string_value(json_object_get(req, "operator"));
	const json_t *vals = json_object_get(req, "values");
	size_t i, k;
	json_t *cs, *v;
	if (!op || (strcmp(op, "In") && strcmp(op, "NotIn")))
		return NULL; /* an unknown operator is not satisfied */
	json_array_foreach(statuses, i, cs) {
		const json_t *code = mu__jget(cs, "state.terminated.exitCode");
		const char *name = json_string_value(json_object_get(cs, "name"));
		if (!json_is_integer(code) || json_integer_value(code) == 0 || (cn && (!name || strcmp(cn, name))))
			continue;
		bool in = false;
		json_array_foreach(vals, k, v)
			in |= json_is_integer(v) && json_integer_value(v) == json_integer_value(code);
		if (in == !strcmp(op, "In"))
			return cs;
	}
	return NULL;
}

/* The first condition of pod whose type and status one of the patterns
 * names, or NULL, as matchOnPodConditions.  O(conditions * patterns). */
static const json_t *cond_match(const json_t *pod, const json_t *patterns)
{
	size_t i, k;
	json_t *c, *p;
	json_array_foreach(mu__jget(pod, "status.conditions"), i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));
		const char *st = json_string_value(json_object_get(c, "status"));
		json_array_foreach(patterns, k, p) {
			const char *pt = json_string_value(json_object_get(p, "type"));
			const char *ps = json_string_value(json_object_get(p, "status"));
			if (t && st && pt && ps && !strcmp(t, pt) && !strcmp(st, ps))
				return c;
		}
	}
	return NULL;
}

int mu__pfp_match(const json_t *pfp, const json_t *pod, char *msg, size_t msz)
{
	size_t i;
	json_t *r;
	const char *ns = mu__jstr(pod, "metadata.namespace"), *name = mu__jstr(pod, "metadata.name");
	json_array_foreach(json_object_get(pfp, "rules"), i, r) {
		const char *act = json_string_value(json_object_get(r, "action"));
		const json_t *oec = json_object_get(r, "onExitCodes"), *opc = json_object_get(r, "onPodConditions");
		const json_t *hit = NULL;
		bool by_exit = oec && !json_is_null(oec);
		if (by_exit) {
			if (!(hit = exit_match(mu__jget(pod, "status.containerStatuses"), oec)))
				hit = exit_match(mu__jget(pod, "status.initContainerStatuses"), oec);
		} else if (opc && !json_is_null(opc)) {
			hit = cond_match(pod, opc);
		}
		if (!hit || !act)
			continue;
		if (!strcmp(act, "Ignore"))
			return MU__PFP_IGNORE;
		if (!strcmp(act, "Count"))
			return MU__PFP_COUNT;
		if (!strcmp(act, "FailIndex"))
			return MU__PFP_FAILINDEX;
		if (!strcmp(act, "FailJob")) {
			if (by_exit)
				snprintf(msg, msz, "Container %s for pod %s/%s failed with exit code %lld matching FailJob "
					 "rule at index %zu", json_string_value(json_object_get(hit, "name")) ?
					 json_string_value(json_object_get(hit, "name")) : "", ns ? ns : "", name ? name : "",
					 (long long)json_integer_value(mu__jget(hit, "state.terminated.exitCode")), i);
			else
				snprintf(msg, msz, "Pod %s/%s has condition %s matching FailJob rule at index %zu",
					 ns ? ns : "", name ? name : "", json_string_value(json_object_get(hit, "type")), i);
			return MU__PFP_FAILJOB;
		}
		/* an unknown action: the rule is skipped */
	}
	return MU__PFP_NONE;
}

/* --- the pods as the tracking finalizer counts them ----------------------- */

#define TRACKING "batch.kubernetes.io/job-tracking"
#define INDEX_KEY "batch.kubernetes.io/job-completion-index"
#define FAILCOUNT_KEY "batch.kubernetes.io/job-index-failure-count"
#define IGNORED_KEY "batch.kubernetes.io/job-index-ignored-failure-count"

/* Whether pod o carries the job-tracking finalizer (hasJobTrackingFinalizer),
 * read from its text.  O(the text up to its finalizers). */
static bool has_tracking(const mu__obj_t *o)
{
	const char *v;
	size_t n;
	static const char needle[] = "\"" TRACKING "\"";
	if (!mu__text_at(o->json, o->len, "metadata", "finalizers", &v, &n))
		return false;
	for (size_t i = 0; i + sizeof needle - 1 <= n; i++)
		if (!memcmp(v + i, needle, sizeof needle - 1))
			return true;
	return false;
}

/* A non-negative integer annotation key of pod o (a string of digits, as
 * strconv.Atoi reads it), or -1 (getCompletionIndex: absent, not a
 * number, or negative).  O(the text up to its annotations). */
static long long pod_annotation_int(const mu__obj_t *o, const char *key)
{
	const char *ann, *v;
	size_t an, vn;
	const char *keys[1] = {key};
	if (!mu__text_at(o->json, o->len, "metadata", "annotations", &ann, &an) || ann[0] != '{')
		return -1;
	if (mu__text_members(ann, an, keys, 1, &v, &vn) != 1 || vn < 3 || v[0] != '"' || vn > 20)
		return -1;
	long long x = 0;
	size_t i = 1;
	if (v[1] == '+' || v[1] == '-') {
		if (v[1] == '-')
			return -1;
		i = 2;
	}
	if (i >= vn - 1)
		return -1;
	for (; i < vn - 1; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (v[i] - '0');
	}
	return x;
}

/* What one reconcile knows of one pod of the job. */
typedef struct pinfo {
	const mu__obj_t *o;  /* borrowed from the page */
	long long ix;        /* completion index (Indexed Jobs), or -1 */
	bool fin;            /* carries the tracking finalizer */
	bool succ, fail;     /* phase Succeeded, phase Failed */
	bool failed;         /* isPodFailed (see pods_read) */
	int act;             /* podFailurePolicy's MU__PFP_ action (failed pods), -1 before asked */
	bool stripped;       /* its finalizer removed in this reconcile */
	bool delayed;        /* the failed pod whose count its index's next pod takes (backoffLimitPerIndex) */
	bool unbound;        /* no node runs it */
} pinfo_t;

/* Reads the pods of pg into pi[] (as many), as syncJob sees them: a pod
 * is failed (isPodFailed) when its phase is Failed or, unless only
 * failed pods are replaced (only_failed), when it is being deleted and
 * did not succeed.  The completion index is read for an Indexed Job.
 * O(the pods' texts). */
static void pods_read(const mu__page_t *pg, pinfo_t *pi, bool indexed, bool only_failed)
{
	for (size_t i = 0; i < pg->n; i++) {
		const mu__obj_t *o = pg->objs[i];
		const char *ph = mu__obj_field(o, "status.phase"), *node = mu__obj_field(o, "spec.nodeName");
		pinfo_t *p = &pi[i];
		p->o = o;
		p->ix = indexed ? pod_annotation_int(o, INDEX_KEY) : -1;
		p->fin = has_tracking(o);
		p->succ = ph && !strcmp(ph, "Succeeded");
		p->fail = ph && !strcmp(ph, "Failed");
		p->failed = p->fail || (o->deleting && !p->succ && !only_failed);
		p->unbound = !node || !*node;
		p->act = -1;
		p->stripped = p->delayed = false;
	}
}

/* The podFailurePolicy's action for failed pod p (cached), and with a
 * FailJob rule kube's message in msg.  O(a parse of the pod). */
static int pod_action(const json_t *pfp, pinfo_t *p, char *msg, size_t msz)
{
	char m[700];
	if (p->act < 0 || (p->act == MU__PFP_FAILJOB && msg)) {
		json_t *pod = mu__obj_parse(p->o);
		p->act = pod ? mu__pfp_match(pfp, pod, m, sizeof m) : MU__PFP_NONE;
		json_decref(pod);
		if (p->act == MU__PFP_FAILJOB && msg)
			snprintf(msg, msz, "%s", m);
	}
	return p->act;
}

/* Whether failed pod p counts as a failure (matchPodFailurePolicy's
 * countFailed: every action but Ignore, or no policy). */
static bool pod_counts(const json_t *pfp, pinfo_t *p)
{
	return !json_is_object(pfp) || pod_action(pfp, p, NULL, 0) != MU__PFP_IGNORE;
}

/* Whether a FailJob rule of pfp matches a failed pod of the job, with
 * kube's message of the first in msg (getFailJobMessage: every pod, with
 * the finalizer or not).  O(the pods, a parse of each failed one). */
static bool pfp_failjob(const json_t *pfp, pinfo_t *pi, size_t n, char *msg, size_t msz)
{
	if (!json_is_object(pfp))
		return false;
	for (size_t i = 0; i < n; i++)
		if (pi[i].failed && pod_action(pfp, &pi[i], msg, msz) == MU__PFP_FAILJOB)
			return true;
	return false;
}

/* Whether pod p of an Indexed Job of completions comp may be counted
 * (getValidPodsWithFilter): it carries the finalizer and, for an Indexed
 * Job, an index below completions. */
static bool pod_valid(const pinfo_t *p, bool indexed, long long comp)
{
	return p->fin && (!indexed || (p->ix >= 0 && p->ix < comp));
}

/* Removes the tracking finalizer from a pod (removeTrackingFinalizerPatch);
 * a pod being deleted with a grace period of 0 and no finalizer left
 * goes, as kube-apiserver deletes it on that update. */
static int strip_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)ctx;
	if (!cur)
		return MU_ENOENT;
	json_t *o = mu__obj_parse(cur);
	json_t *fin = mu__jget(o, "metadata.finalizers");
	size_t i;
	json_t *f;
	bool had = false;
	if (!o)
		return MU_ENOMEM;
	json_array_foreach(fin, i, f)
		if (json_is_string(f) && !strcmp(json_string_value(f), TRACKING)) {
			json_array_remove(fin, i);
			had = true;
			break;
		}
	if (!had) {
		json_decref(o);
		return MU__MUT_KEEP;
	}
	bool none = json_array_size(fin) == 0;
	if (none)
		json_object_del(json_object_get(o, "metadata"), "finalizers");
	const json_t *grace = mu__jget(o, "metadata.deletionGracePeriodSeconds");
	if (none && cur->deleting && json_is_integer(grace) && json_integer_value(grace) == 0) {
		json_decref(o);
		return MU__MUT_DEL;
	}
	*out = o;
	return MU__MUT_PUT;
}

/* Sets the phase of an unscheduled pod being deleted to Failed, as
 * kube's PodGC does (gcUnscheduledTerminating, markFailedAndDeletePod):
 * no kubelet ends it, and a Job that replaces only failed pods counts it
 * only then. */
static int podgc_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)ctx;
	const char *ph = cur ? mu__obj_field(cur, "status.phase") : NULL;
	const char *node = cur ? mu__obj_field(cur, "spec.nodeName") : NULL;
	if (!cur || !cur->deleting || (node && *node) || (ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"))))
		return MU__MUT_KEEP;
	if (!(*out = mu__obj_parse(cur)))
		return MU_ENOMEM;
	mu__jset(*out, "status.phase", json_string("Failed"));
	return MU__MUT_PUT;
}

/* Removes pod p's tracking finalizer in tx (one write), noting it. */
static void strip(mu__wtx_t *tx, pinfo_t *p)
{
	if (!p->fin || p->stripped)
		return;
	if (mu__store_apply(tx, MU__RT_PODS, p->o->ns, p->o->name, strip_fn, NULL, false, NULL) >= 0)
		p->stripped = true;
}

/* Adds the JOB_COMPLETION_INDEX variable, from the pod's index label
 * through the downward API, to each container of list (a containers or
 * initContainers array) that has no variable of that name
 * (addCompletionIndexEnvVariable, with PodIndexLabel on: GA in 1.32).
 * O(the containers and their variables). */
static void index_env(json_t *list)
{
	size_t i, k;
	json_t *c, *v;
	json_array_foreach(list, i, c) {
		json_t *env = json_object_get(c, "env");
		bool have = false;
		json_array_foreach(env, k, v) {
			const char *n = json_string_value(json_object_get(v, "name"));
			have |= n && !strcmp(n, "JOB_COMPLETION_INDEX");
		}
		if (have || !json_is_object(c))
			continue;
		if (!json_is_array(env)) {
			env = json_array();
			json_object_set_new(c, "env", env);
		}
		json_array_append_new(env, json_pack("{s:s, s:{s:{s:s}}}", "name", "JOB_COMPLETION_INDEX", "valueFrom",
						     "fieldRef", "fieldPath",
						     "metadata.labels['" INDEX_KEY "']"));
	}
}

/* A metadata map (annotations or labels) of md, made when absent. */
static json_t *md_map(json_t *md, const char *key)
{
	json_t *m = json_object_get(md, key);
	if (!json_is_object(m)) {
		m = json_object();
		json_object_set_new(md, key, m);
	}
	return m;
}

/* A pod from the job's template, with the job-tracking finalizer
 * (appendJobCompletionFinalizerIfNotFound).  For an Indexed Job (ix >= 0)
 * as manageJob makes it: generateName "JOB-IX-" (podGenerateNameWithIndex:
 * the job's name cut so that it fits 58 characters), the index as an
 * annotation and a label, spec.hostname "JOB-IX", JOB_COMPLETION_INDEX in
 * every container and init container, and with backoffLimitPerIndex
 * (fcount >= 0) the index's failure count annotations.  Caller owns. */
static json_t *pod_from(mu__jobctl_t *jc, const json_t *job, long long ix, long long fcount, long long icount)
{
	const char *name = mu__jstr(job, "metadata.name"), *uid = mu__jstr(job, "metadata.uid");
	json_t *tpl = mu__jget(job, "spec.template");
	if (!name || !uid || !json_is_object(tpl))
		return NULL;
	char sfx[6], pre[300], pn[300], app[32] = "-";
	mu__name_suffix(jc->s, sfx);
	if (ix >= 0)
		snprintf(app, sizeof app, "-%lld-", ix);
	/* generateName "JOB-" ("JOB-IX-"), cut to 58 characters as
	 * names.SimpleNameGenerator (and podGenerateNameWithIndex) do */
	size_t al = strlen(app), keep = strlen(name);
	if (keep + al > 58)
		keep = ix >= 0 ? 58 - al : 58;
	snprintf(pre, sizeof pre, "%.*s%s", (int)keep, name, app);
	snprintf(pn, sizeof pn, "%.58s%s", pre, sfx);
	json_t *md = json_deep_copy(json_object_get(tpl, "metadata"));
	if (!json_is_object(md)) {
		json_decref(md);
		md = json_object();
	}
	json_object_set_new(md, "name", json_string(pn));
	json_object_set_new(md, "generateName", json_string(pre));
	json_object_set_new(md, "namespace", json_string(mu__jstr(job, "metadata.namespace")));
	json_object_set_new(md, "ownerReferences",
			    json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion", "batch/v1", "kind", "Job",
				      "name", name, "uid", uid, "controller", 1, "blockOwnerDeletion", 1));
	json_t *fin = json_object_get(md, "finalizers");
	bool have = false;
	size_t i;
	json_t *f;
	json_array_foreach(fin, i, f)
		have |= json_is_string(f) && !strcmp(json_string_value(f), TRACKING);
	if (!json_is_array(fin)) {
		fin = json_array();
		json_object_set_new(md, "finalizers", fin);
	}
	if (!have)
		json_array_append_new(fin, json_string(TRACKING));
	const char *dur = json_string_value(json_object_get(mu__jget(job, "metadata.annotations"), "muster.io/duration"));
	if (dur && !json_object_get(md_map(md, "annotations"), "muster.io/duration"))
		json_object_set_new(md_map(md, "annotations"), "muster.io/duration", json_string(dur));
	json_t *spec = json_object_get(tpl, "spec");
	if (ix >= 0) {
		char v[32];
		snprintf(v, sizeof v, "%lld", ix);
		json_object_set_new(md_map(md, "annotations"), INDEX_KEY, json_string(v));
		json_object_set_new(md_map(md, "labels"), INDEX_KEY, json_string(v));
		if (fcount >= 0) {
			snprintf(v, sizeof v, "%lld", fcount);
			json_object_set_new(md_map(md, "annotations"), FAILCOUNT_KEY, json_string(v));
			if (icount > 0) {
				snprintf(v, sizeof v, "%lld", icount);
				json_object_set_new(md_map(md, "annotations"), IGNORED_KEY, json_string(v));
			}
		}
		spec = json_deep_copy(spec);
		snprintf(pre, sizeof pre, "%s-%lld", name, ix);
		json_object_set_new(spec, "hostname", json_string(pre));
		index_env(json_object_get(spec, "initContainers"));
		index_env(json_object_get(spec, "containers"));
		return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "v1", "kind", "Pod", "metadata", md, "spec", spec);
	}
	return json_pack("{s:s, s:s, s:o, s:O}", "apiVersion", "v1", "kind", "Pod", "metadata", md, "spec", spec);
}

/* job's condition of type that is True (borrowed), or NULL.  O(its
 * conditions). */
static const json_t *true_cond(const json_t *job, const char *type)
{
	size_t i;
	json_t *c;
	json_array_foreach(mu__jget(job, "status.conditions"), i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));
		const char *st = json_string_value(json_object_get(c, "status"));
		if (t && st && !strcmp(t, type) && !strcmp(st, "True"))
			return c;
	}
	return NULL;
}

static bool cond_true(const json_t *job, const char *type)
{
	return true_cond(job, type) != NULL;
}

typedef struct status_ctx {
	const mu__rtype_t *t; /* Job */
	mu__mf_memo_t *memo;  /* the controller's (may be NULL) */
	counts_t c;           /* succeeded and failed: the counters to write */
	bool suspended, complete, failed;
	json_t *job;          /* reconcile's parse of the job (borrowed) */
	int64_t rv;           /* the version it parsed */
	unsigned tr;          /* status_fn's answer: the TR_ transitions it wrote */
	const char *freason;  /* failed: the reason and message of its conditions */
	const char *fmsg;     /* (NULL: BackoffLimitExceeded's) */
	const char *sreason;  /* complete: SuccessCriteriaMet's reason and message */
	const char *smsg;     /* (NULL: CompletionsReached's) */
	bool more;            /* pods left to count: no terminal condition yet */
	const char *completed; /* Indexed: status.completedIndexes (NULL: not Indexed) */
	const char *failedix;  /* with backoffLimitPerIndex: status.failedIndexes (NULL: none) */
} status_ctx_t;

#define BACKOFF_REASON "BackoffLimitExceeded"
#define BACKOFF_MSG "Job has reached the specified backoff limit"
#define DEADLINE_REASON "DeadlineExceeded"
#define DEADLINE_MSG "Job was active longer than specified deadline"
#define PFP_REASON "PodFailurePolicy"

/* The reason (field "reason") or message ("message") of job's condition
 * of type that is True, or NULL.  O(its conditions). */
static const char *cond_text(const json_t *job, const char *type, const char *field)
{
	return json_string_value(json_object_get(true_cond(job, type), field));
}

/* Whether a Job that is not finished fails, as syncJob of Kubernetes' Job
 * controller decides before it looks at completions: a FailureTarget
 * condition already set (its reason and message carried to Failed), a
 * FailJob rule of spec.podFailurePolicy matched by a failed pod (pfp_msg,
 * reason PodFailurePolicy), more
 * failed pods than backoffLimit (BackoffLimitExceeded), or, for a Job not
 * suspended with spec.activeDeadlineSeconds, status.startTime (now when
 * unset: this reconcile sets it) that many seconds ago or more
 * (pastActiveDeadline: DeadlineExceeded).  *left is the milliseconds to
 * the deadline when one is still ahead, else -1.  now_s is wall-clock
 * seconds (status.startTime's clock).  O(its conditions). */
static bool fails(const json_t *job, const counts_t *c, json_int_t backoff, bool suspended, int64_t now_s,
		  const char *pfp_msg, const char **reason, const char **msg, int64_t *left)
{
	*left = -1;
	*reason = cond_text(job, "FailureTarget", "reason");
	*msg = cond_text(job, "FailureTarget", "message");
	if (*reason)
		return true;
	if (pfp_msg) { /* a FailJob rule of spec.podFailurePolicy matched */
		*reason = PFP_REASON;
		*msg = pfp_msg;
		return true;
	}
	*reason = BACKOFF_REASON;
	*msg = BACKOFF_MSG;
	if (c->failed > backoff)
		return true;
	const json_t *ads = mu__jget(job, "spec.activeDeadlineSeconds");
	if (!json_is_integer(ads) || suspended)
		return false;
	const char *st = mu__jstr(job, "status.startTime");
	int64_t start = st ? mu__parse_rfc3339(st) : now_s;
	if (start < 0)
		start = now_s;
	int64_t rest = start + (int64_t)json_integer_value(ads) - now_s;
	if (rest > 0) {
		*left = rest * 1000;
		return false;
	}
	*reason = DEADLINE_REASON;
	*msg = DEADLINE_MSG;
	return true;
}

/* The transitions of a status write that Kubernetes' Job controller
 * records as Events on the Job (syncJob and recordJobFinished of
 * pkg/controller/job): the Suspended condition set True ("Suspended") or
 * turned False ("Resumed"), and the Job finished ("Completed", or the
 * Failed condition's reason). */
enum { TR_SUSPENDED = 1, TR_RESUMED = 2, TR_COMPLETE = 4, TR_FAILED = 8 };

/* Sets the status c computed on job o (an object with at least its
 * status: the whole Job, or {"status": ...} alone), as status_fn writes
 * it, and answers the TR_ transitions it made.  As in Kubernetes' Job
 * controller, the Suspended condition is kept only while the Job is not
 * finished or finishing, and a resume sets startTime anew (the active
 * deadline counts from it).  O(its conditions). */
static unsigned status_set(const status_ctx_t *c, json_t *o)
{
	char ts[40];
	unsigned tr = 0;
	mu__timestamp(ts, sizeof ts, false);
	mu__jset(o, "status.active", json_integer(c->c.active));
	mu__jset(o, "status.ready", json_integer(c->c.ready));
	mu__jset(o, "status.terminating", json_integer(c->c.terminating));
	/* the counters of the pods counted through their finalizers
	 * (trackJobStatusAndRemoveFinalizers); the counting and the
	 * finalizers' removal are one transaction here, so the pods never
	 * wait in uncountedTerminatedPods, which stays empty */
	mu__jset(o, "status.succeeded", json_integer(c->c.succeeded));
	mu__jset(o, "status.failed", json_integer(c->c.failed));
	if (!json_is_object(mu__jget(o, "status.uncountedTerminatedPods")))
		mu__jset(o, "status.uncountedTerminatedPods", json_object());
	if (c->completed && *c->completed)
		mu__jset(o, "status.completedIndexes", json_string(c->completed));
	else if (c->completed)
		json_object_del(json_object_get(o, "status"), "completedIndexes");
	if (c->failedix)
		mu__jset(o, "status.failedIndexes", json_string(c->failedix));
	if (c->suspended && !c->complete && !c->failed) {
		if (!cond_true(o, "Suspended"))
			tr |= TR_SUSPENDED;
		mu__set_condition(o, "Suspended", "True", "JobSuspended", "Job suspended");
	} else if (!c->suspended) {
		if (cond_true(o, "Suspended") && !c->complete && !c->failed) {
			mu__set_condition(o, "Suspended", "False", "JobResumed", "Job resumed");
			mu__jset(o, "status.startTime", json_string(ts));
			tr |= TR_RESUMED;
		}
		if (!mu__jget(o, "status.startTime"))
			mu__jset(o, "status.startTime", json_string(ts));
	}
	/* the interim condition first, the terminal one once no pod of the
	 * Job is terminating and every finished pod is counted
	 * (enactJobFinished with delayTerminalCondition, Kubernetes 1.31+:
	 * JobManagedBy or JobPodReplacementPolicy on); Complete takes the
	 * reason and message of SuccessCriteriaMet */
	if (c->complete && !cond_true(o, "Complete")) {
		if (!cond_true(o, "SuccessCriteriaMet"))
			mu__set_condition(o, "SuccessCriteriaMet", "True", c->sreason ? c->sreason : "CompletionsReached",
					  c->smsg ? c->smsg : "Reached expected number of succeeded pods");
		if (c->c.terminating == 0 && !c->more) {
			char r[128], m[300];
			const char *sr = cond_text(o, "SuccessCriteriaMet", "reason");
			const char *sm = cond_text(o, "SuccessCriteriaMet", "message");
			snprintf(r, sizeof r, "%s", sr ? sr : "CompletionsReached");
			snprintf(m, sizeof m, "%s", sm ? sm : "Reached expected number of succeeded pods");
			mu__set_condition(o, "Complete", "True", r, m);
			mu__jset(o, "status.completionTime", json_string(ts));
			tr |= TR_COMPLETE;
		}
	}
	if (c->failed && !cond_true(o, "Failed")) {
		const char *r = c->freason ? c->freason : BACKOFF_REASON, *m = c->fmsg ? c->fmsg : BACKOFF_MSG;
		if (!cond_true(o, "FailureTarget"))
			mu__set_condition(o, "FailureTarget", "True", r, m);
		if (c->c.terminating == 0 && !c->more) {
			mu__set_condition(o, "Failed", "True", r, m);
			tr |= TR_FAILED;
		}
	}
	return tr;
}

/* Writes the job's status; KEEP when nothing changed.  When cur is the
 * version reconcile parsed, it works on that parse (which reconcile no
 * longer reads) rather than parsing it again, and copies only the status
 * to compare: most reconciles (a pod bound, the job's own status write)
 * change nothing, and parsing and copying the Job twice each time was
 * most of the controller's cost (perf, bench/dispatch.sh's workers). */
static int status_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	status_ctx_t *c = ctx;
	c->tr = 0;
	if (!cur)
		return MU__MUT_KEEP;
	json_t *o = c->job && cur->rv == c->rv ? json_incref(c->job) : mu__obj_parse(cur);
	json_t *st0 = json_object_get(o, "status");
	json_t *before = st0 ? json_deep_copy(st0) : json_object(); /* the status as it was */
	if (!o || !before) {
		json_decref(o);
		json_decref(before);
		return MU_ENOMEM;
	}
	unsigned tr = status_set(c, o);
	/* conditions keep their times unless their status changes; only
	 * the status changed above */
	bool same = json_equal(json_object_get(o, "status"), before);
	if (same) {
		json_decref(before);
		json_decref(o);
		return MU__MUT_KEEP;
	}
	/* the Job controller writes status through /status: its managed
	 * fields compare the status alone with the status as it was (what
	 * mu__mf_before keeps; a copy of the whole Job, and a record in full
	 * of every write, were two thirds of this function's samples in
	 * bench/dispatch.sh's workers, docs/dispatch.md round 12); a write of
	 * a shape seen before takes its entries from the memo */
	json_t *was = json_object();
	if (!was) {
		json_decref(before);
		json_decref(o);
		return MU_ENOMEM;
	}
	if (st0)
		json_object_set(was, "status", before);
	mu__mf_memo_record(c->memo, c->t, was, o, "kube-controller-manager", true);
	json_decref(was);
	json_decref(before);
	c->tr = tr;
	*out = o;
	return MU__MUT_PUT;
}

/* A field of a Job's spec (its text v of n characters, mu__text_members;
 * v NULL when absent) as an integer: 1 and *out when it is a JSON integer,
 * 0 when absent, -1 when it is something else (null, a string, a real).
 * O(n). */
static int text_int(const char *v, size_t n, json_int_t *out)
{
	if (!v)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(v[i] >= '0' && v[i] <= '9') && !(i == 0 && v[i] == '-' && n > 1))
			return -1;
	*out = strtoll(v, NULL, 10);
	return 1;
}

/* The number of active pods a running Job wants, as manageJob of
 * Kubernetes' Job controller computes it: parallelism, no more than the
 * completions left (none below 0); a Job without completions keeps the
 * pods it has once one succeeded.  O(1). */
static json_int_t wanted(json_int_t par, bool has_comp, json_int_t comp, const counts_t *c)
{
	if (!has_comp)
		return c->succeeded > 0 ? c->active : par;
	json_int_t w = comp - c->succeeded < par ? comp - c->succeeded : par;
	return w < 0 ? 0 : w;
}

/* How many pods a running Job makes, as manageJob: the pods it wants
 * less the active ones and, when only failed pods are replaced
 * (only_failed: podReplacementPolicy Failed), the terminating ones too;
 * none below 0.  O(1). */
static json_int_t to_make(json_int_t want, const counts_t *c, bool only_failed)
{
	json_int_t n = want - c->active - (only_failed ? c->terminating : 0);
	return n < 0 ? 0 : n;
}

/* Whether reconciling Job version jo, whose pods are pg, would write
 * nothing: no pod to make or delete and the status as it is (or another
 * controller manages it).  It reads the spec's few fields from the text
 * and parses the status alone, not the whole Job: most reconciles are
 * such, every one of a suspended hub Job the dispatcher writes to among
 * them (docs/dispatch.md, round 9).  The same decisions as reconcile's,
 * on the same fields; false when something is to write, or when the text
 * is not plain enough to read so (reconcile then parses it all).
 * O(the text) and a parse of the status (mu__json_parse, the same tree
 * as json_loadb's at a fraction of its cost). */
static bool quick_keep(mu__jobctl_t *jc, const mu__obj_t *jo, const mu__page_t *pg)
{
	/* the members read, each found in one scan of the object and one of
	 * its spec (mu__text_members) rather than one scan each */
	static const char *const top[] = {"spec", "status"};
	enum { MANAGED_BY, COMPLETIONS, PARALLELISM, BACKOFF, SUSPEND, REPLACEMENT, PFP, DEADLINE, MODE, NSPEC };
	static const char *const keys[NSPEC] = {"managedBy", "completions", "parallelism", "backoffLimit",
						"suspend", "podReplacementPolicy", "podFailurePolicy",
						"activeDeadlineSeconds", "completionMode"};
	const char *tv[2], *f[NSPEC];
	size_t tn[2], fn[NSPEC];
	if (jo->deleting)
		return false;
	mu__text_members(jo->json, jo->len, top, 2, tv, tn);
	const char *sp = tv[0], *stv = tv[1];
	size_t spn = tn[0], stn = tn[1];
	if (!sp || sp[0] != '{')
		return false;
	mu__text_members(sp, spn, keys, NSPEC, f, fn);
	const char *v = f[MANAGED_BY];
	size_t n = fn[MANAGED_BY];
	if (v && !(n == 4 && !memcmp(v, "null", 4))) {
		if (v[0] != '"' || memchr(v, '\\', n))
			return false;
		if (!(n == 30 && !memcmp(v, "\"kubernetes.io/job-controller\"", 30)))
			return true; /* another controller's, as in reconcile */
	}
	if (!stv || stv[0] != '{')
		return false; /* no status yet: reconcile writes one */
	json_int_t comp = 0, par = 0, backoff = 6;
	bool has_comp = text_int(f[COMPLETIONS], fn[COMPLETIONS], &comp) == 1;
	if (text_int(f[PARALLELISM], fn[PARALLELISM], &par) < 0)
		par = 0;      /* json_integer_value of a non-integer */
	if (text_int(f[BACKOFF], fn[BACKOFF], &backoff) < 0)
		backoff = 0;
	bool suspend = f[SUSPEND] && fn[SUSPEND] == 4 && !memcmp(f[SUSPEND], "true", 4);
	/* onlyReplaceFailedPods: podReplacementPolicy Failed, or a
	 * podFailurePolicy (which requires it) */
	bool only_failed = (f[REPLACEMENT] && fn[REPLACEMENT] == 8 && !memcmp(f[REPLACEMENT], "\"Failed\"", 8)) ||
			   (f[PFP] && !(fn[PFP] == 4 && !memcmp(f[PFP], "null", 4)));
	if (f[DEADLINE] && !(fn[DEADLINE] == 4 && !memcmp(f[DEADLINE], "null", 4)))
		return false; /* a deadline to check or requeue: reconcile does */
	if (f[MODE] && !(fn[MODE] == 12 && !memcmp(f[MODE], "\"NonIndexed\"", 12)) &&
	    !(fn[MODE] == 4 && !memcmp(f[MODE], "null", 4)))
		return false; /* Indexed: its indexes are reconcile's */
	bool pfp = f[PFP] && !(fn[PFP] == 4 && !memcmp(f[PFP], "null", 4));
	/* a finished pod still carrying the tracking finalizer is to count,
	 * and with a podFailurePolicy a failed pod may match a FailJob rule
	 * (getFailJobMessage reads every pod): reconcile does both */
	for (size_t i = 0; i < pg->n; i++) {
		const char *ph = mu__obj_field(pg->objs[i], "status.phase");
		bool fail = ph && !strcmp(ph, "Failed"), done = fail || (ph && !strcmp(ph, "Succeeded"));
		if ((pfp && fail) || ((done || pg->objs[i]->deleting) && has_tracking(pg->objs[i])))
			return false;
	}
	json_t *st = NULL, *o = json_object(), *before = NULL;
	if (!o || !(st = mu__json_parse(stv, stn)) ||
	    json_object_set_new(o, "status", st) || !(before = mu__json_copy(st))) {
		json_decref(o);
		return false;
	}
	status_ctx_t sc = {mu__type(jc->s->types, MU__RT_JOBS), jc->memo, count(pg), suspend, false, false, NULL, -1, 0,
			   NULL, NULL, NULL, NULL, false, NULL, NULL};
	/* the counters as they are: no pod is left to count */
	sc.c.succeeded = (int)json_integer_value(json_object_get(st, "succeeded"));
	sc.c.failed = (int)json_integer_value(json_object_get(st, "failed"));
	json_int_t want = wanted(par, has_comp, comp, &sc.c);
	bool finished = cond_true(o, "Complete") || cond_true(o, "Failed");
	/* as reconcile: a Job not finished fails before it completes */
	sc.failed = !cond_true(o, "Complete") &&
		    (cond_true(o, "Failed") || cond_true(o, "FailureTarget") || sc.c.failed > backoff);
	sc.complete = !sc.failed && (cond_true(o, "Complete") || cond_true(o, "SuccessCriteriaMet") ||
				     (has_comp ? sc.c.succeeded >= comp : sc.c.succeeded > 0 && sc.c.active == 0));
	bool keep;
	if (sc.suspended || sc.complete || sc.failed || finished) {
		keep = sc.c.active == 0; /* no active pod to delete */
	} else {
		/* no pod to make or delete */
		keep = sc.c.active <= want && to_make(want, &sc.c, only_failed) == 0;
	}
	if (keep) {
		status_set(&sc, o);
		keep = json_equal(json_object_get(o, "status"), before);
	}
	json_decref(before);
	json_decref(o);
	return keep;
}

/* The write transaction a sync shares between its reconciles: one commit
 * (and one SQLite transaction) for the jobs a sync brings together rather
 * than one each, the worker's largest cost after the parses
 * (docs/dispatch.md, round 9).  Opened by the first reconcile that writes. */
typedef struct shared_tx {
	mu__wtx_t *tx;
	int writes;   /* staged so far (a reconcile's estimate) */
} shared_tx_t;

/* The shared transaction, with room for need more writes: the open one,
 * or, when it holds some and need would take it past half of MU__TX_MAX
 * (what one reconcile alone may stage), a new one after committing it.
 * O(1) besides the commit. */
static mu__wtx_t *tx_room(mu__jobctl_t *jc, shared_tx_t *x, int need)
{
	if (x->tx && x->writes > 0 && x->writes + need > MU__TX_MAX / 2) {
		mu__store_commit(x->tx);
		x->tx = NULL;
	}
	if (!x->tx) {
		mu__store_begin(jc->s->store, &x->tx);
		x->writes = 0;
	}
	x->writes += need;
	return x->tx;
}

/* Commits the shared transaction if one is open. */
static void tx_end(shared_tx_t *x)
{
	if (x->tx)
		mu__store_commit(x->tx);
	x->tx = NULL;
	x->writes = 0;
}

/* An Event of Kubernetes' Job controller on job, named en, in tx (source
 * and reporting component job-controller, recorded as
 * kube-controller-manager's), through the controller's correlator as
 * client-go's recorder writes it: an identical Event again raises the
 * first one's count, the tenth distinct message of a reason within ten
 * minutes is combined (events_corr.c).  One write; nothing for a job
 * without namespace, name or uid. */
static void job_event(mu__jobctl_t *jc, mu__wtx_t *tx, const json_t *job, const char *en, const char *type,
		      const char *reason, const char *msg)
{
	const char *ns = mu__jstr(job, "metadata.namespace"), *name = mu__jstr(job, "metadata.name");
	const char *uid = mu__jstr(job, "metadata.uid");
	char ts[40];
	if (!ns || !name || !uid)
		return;
	mu__timestamp(ts, sizeof ts, false);
	json_t *e = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s}, s:s, s:s, s:s, "
			      "s:{s:s}, s:s, s:s, s:i, s:s}",
			      "apiVersion", "v1", "kind", "Event", "metadata", "name", en, "namespace", ns,
			      "involvedObject", "kind", "Job", "apiVersion", "batch/v1", "namespace", ns,
			      "name", name, "uid", uid, "reason", reason, "message", msg,
			      "type", type, "source", "component", "job-controller", "firstTimestamp", ts,
			      "lastTimestamp", ts, "count", 1, "reportingComponent", "job-controller");
	if (e) /* as client-go's recorder: a repeat raises the first one's count */
		mu__evcorr_record(jc->events, jc->s, tx, e, "kube-controller-manager", jc->now);
	json_decref(e);
}

/* The Warning Event Kubernetes' Job controller records when a pod of
 * job cannot be created (reason FailedCreate, "Error creating: pods
 * "JOB-" is forbidden: WHY"), in tx: one per Job (named
 * JOB.failedcreate), written the first time only, so that a refusal
 * retried at every reconcile does not write again.  O(1) store reads. */
static void failed_create(mu__jobctl_t *jc, mu__wtx_t *tx, const json_t *job, const char *why)
{
	const char *ns = mu__jstr(job, "metadata.namespace"), *name = mu__jstr(job, "metadata.name");
	char en[300], msg[900];
	if (!ns || !name)
		return;
	snprintf(en, sizeof en, "%.230s.failedcreate", name);
	mu__obj_t *had = mu__store_get(jc->s->store, MU__RT_EVENTS, ns, en);
	mu__obj_unref(had);
	if (had)
		return;
	snprintf(msg, sizeof msg, "Error creating: pods \"%.200s-\" is forbidden: %s", name, why);
	job_event(jc, tx, job, en, "Warning", "FailedCreate", msg);
}

/* An Event of Kubernetes' Job controller on job under a name of its own
 * (JOB.xxxxx), in tx.  One write. */
static void note(mu__jobctl_t *jc, mu__wtx_t *tx, const json_t *job, const char *type, const char *reason,
		 const char *msg)
{
	const char *name = mu__jstr(job, "metadata.name");
	char en[300], sfx[6];
	if (!name)
		return;
	mu__name_suffix(jc->s, sfx);
	snprintf(en, sizeof en, "%.230s.%s", name, sfx);
	job_event(jc, tx, job, en, type, reason, msg);
}

/* The Normal Event Kubernetes' Job controller records for each pod it
 * creates or deletes (its pod control, RealPodControl: reason
 * SuccessfulCreate, "Created pod: POD", or SuccessfulDelete, "Deleted
 * pod: POD", on the Job), in tx.  One write. */
static void pod_note(mu__jobctl_t *jc, mu__wtx_t *tx, const json_t *job, bool made, const char *pod)
{
	char msg[400];
	snprintf(msg, sizeof msg, "%s pod: %s", made ? "Created" : "Deleted", pod);
	note(jc, tx, job, "Normal", made ? "SuccessfulCreate" : "SuccessfulDelete", msg);
}

/* The Events Kubernetes' Job controller records on a status write that
 * made transitions tr (TR_), in tx: Normal Suspended "Job suspended",
 * Normal Resumed "Job resumed", Normal Completed "Job completed" (after a
 * Warning TooManySucceededPods when more pods succeeded than completions)
 * and the Warning of the Failed condition's reason and message.  At most
 * three writes. */
static void transition_notes(mu__jobctl_t *jc, mu__wtx_t *tx, const json_t *job, unsigned tr, const counts_t *c,
			     const char *freason, const char *fmsg)
{
	if (tr & TR_SUSPENDED)
		note(jc, tx, job, "Normal", "Suspended", "Job suspended");
	if (tr & TR_RESUMED)
		note(jc, tx, job, "Normal", "Resumed", "Job resumed");
	if (tr & TR_COMPLETE) {
		const json_t *comp = mu__jget(job, "spec.completions");
		if (json_is_integer(comp) && c->succeeded > json_integer_value(comp))
			note(jc, tx, job, "Warning", "TooManySucceededPods",
			     "Too many succeeded pods running after completion count reached");
		note(jc, tx, job, "Normal", "Completed", "Job completed");
	}
	if (tr & TR_FAILED) /* recordJobFinished: the Failed condition's reason and message */
		note(jc, tx, job, "Warning", freason ? freason : BACKOFF_REASON, fmsg ? fmsg : BACKOFF_MSG);
}

/* The finished pods one reconcile counts (removes the finalizer of) at
 * most, as kube's MaxUncountedPods bounds a sync; the pods it deletes at
 * most, each with its Event and the removal of its finalizer. */
#define TRACK_MAX 32
#define DEL_MAX ((MU__TX_MAX - 8 - TRACK_MAX) / 3)

/* Deletes up to n of the job's active pods among pi[np] (those pick[]
 * marks, or any when pick is NULL), in tx, each with its SuccessfulDelete
 * Event; the pods not Running go first (kube's activePodsForRemoval also
 * prefers the unscheduled, the pending and the unready).  With strip_fin
 * each loses its tracking finalizer first and is not counted, as
 * deleteJobPods does for a suspend or a scale-down; without, it keeps it
 * and is counted failed (deleteActivePods, for a Job that fails).
 * Answers how many it deleted, and adds to *ready how many of them were
 * Running (counted ready).  At most 3 * n writes. */
static int delete_active(mu__jobctl_t *jc, mu__wtx_t *tx, const json_t *job, pinfo_t *pi, size_t np,
			 const bool *pick, int n, bool strip_fin, int *ready)
{
	int done = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < np && done < n; i++) {
			const mu__obj_t *p = pi[i].o;
			const char *ph = mu__obj_field(p, "status.phase");
			bool running = ph && !strcmp(ph, "Running");
			if (!is_active(p) || (pick && !pick[i]) || running != (pass == 1))
				continue;
			if (strip_fin)
				strip(tx, &pi[i]);
			if (mu__delete_in(tx, MU__RT_PODS, p->ns, p->name, -1, NULL, NULL, false, NULL) >= 0) {
				pod_note(jc, tx, job, false, p->name);
				done++;
				*ready += running;
			}
		}
	return done;
}

static int ll_cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

/* Sorts ix[n] and drops repeats; answers the new length.  O(n log n). */
static size_t ll_sort_uniq(long long *ix, size_t n)
{
	size_t m = 0;
	qsort(ix, n, sizeof *ix, ll_cmp);
	for (size_t i = 0; i < n; i++)
		if (!m || ix[m - 1] != ix[i])
			ix[m++] = ix[i];
	return m;
}

/* One reconcile's view of a Job and its pods. */
typedef struct rec {
	mu__jobctl_t *jc;
	json_t *job;               /* parsed (owned by reconcile) */
	const char *ns, *name, *uid;
	pinfo_t *pi;               /* the pods */
	size_t np;
	bool indexed, has_comp;
	long long comp;            /* spec.completions (has_comp) */
	json_int_t par, backoff;
	json_int_t bli, mfi;       /* backoffLimitPerIndex, maxFailedIndexes; -1: unset */
	const json_t *pfp;         /* spec.podFailurePolicy, or NULL */
	bool only_failed, finished, leaving;
	long long prev_s, prev_f;  /* the status's counters */
	long long dec_s;           /* succeeded as syncJob decides with it: counted and new */
	mu__ivls_t succ, fail;     /* Indexed: succeeded and (backoffLimitPerIndex) failed indexes */
	status_ctx_t sc;
	char pfmsg[700], spmsg[64];
} rec_t;

/* Whether failed pod p of an Indexed Job fails its index
 * (isIndexFailed): a FailIndex rule matches it, or it counts and its
 * index already failed backoffLimitPerIndex times.  O(a parse). */
static bool index_failed(rec_t *r, pinfo_t *p)
{
	if (!p->failed)
		return false;
	if (json_is_object(r->pfp) && pod_action(r->pfp, p, NULL, 0) == MU__PFP_FAILINDEX)
		return true;
	long long fc = pod_annotation_int(p->o, FAILCOUNT_KEY);
	return pod_counts(r->pfp, p) && (fc < 0 ? 0 : fc) >= r->bli;
}

/* The failure counts (counted, ignored) of the index of pod p as its
 * replacement carries them (getNewIndexFailureCounts).  O(a parse). */
static void index_counts(rec_t *r, pinfo_t *p, long long *fc, long long *ic)
{
	*fc = *ic = 0;
	if (!p)
		return;
	*fc = pod_annotation_int(p->o, FAILCOUNT_KEY);
	*ic = pod_annotation_int(p->o, IGNORED_KEY);
	*fc = *fc < 0 ? 0 : *fc;
	*ic = *ic < 0 ? 0 : *ic;
	if (pod_counts(r->pfp, p))
		++*fc;
	else
		++*ic;
}

/* The indexes of an Indexed Job as syncJob computes them: the succeeded
 * ones (calculateSucceededIndexes: status.completedIndexes and the
 * succeeded pods with the finalizer), with backoffLimitPerIndex the
 * failed ones (calculateFailedIndexes) and, per index neither succeeded,
 * failed nor active, the failed pod whose finalizer waits for its
 * replacement (getPodsWithDelayedDeletionPerIndex: the one with the most
 * failures).  MU_OK or MU_ENOMEM.  O(pods log pods + the intervals). */
static int indexes_eval(rec_t *r)
{
	long long *ix = malloc((r->np + 1) * sizeof *ix);
	mu__ivls_t prev;
	size_t n = 0;
	if (!ix || mu__ivls_parse(mu__jstr(r->job, "status.completedIndexes"), r->comp, &prev) != MU_OK) {
		free(ix);
		return MU_ENOMEM;
	}
	for (size_t i = 0; i < r->np; i++)
		if (pod_valid(&r->pi[i], true, r->comp) && r->pi[i].succ)
			ix[n++] = r->pi[i].ix;
	int rc = mu__ivls_with(&prev, ix, ll_sort_uniq(ix, n), &r->succ);
	mu__ivls_release(&prev);
	if (rc == MU_OK && r->bli >= 0) {
		n = 0;
		rc = mu__ivls_parse(mu__jstr(r->job, "status.failedIndexes"), r->comp, &prev);
		for (size_t i = 0; rc == MU_OK && i < r->np; i++)
			if (pod_valid(&r->pi[i], true, r->comp) && index_failed(r, &r->pi[i]))
				ix[n++] = r->pi[i].ix;
		if (rc == MU_OK)
			rc = mu__ivls_with(&prev, ix, ll_sort_uniq(ix, n), &r->fail);
		mu__ivls_release(&prev);
	}
	if (rc == MU_OK && r->bli >= 0) {
		n = 0;
		for (size_t i = 0; i < r->np; i++)
			if (is_active(r->pi[i].o) && r->pi[i].ix >= 0)
				ix[n++] = r->pi[i].ix;
		n = ll_sort_uniq(ix, n);
		for (size_t i = 0; i < r->np; i++) {
			pinfo_t *p = &r->pi[i];
			if (!pod_valid(p, true, r->comp) || !p->failed || mu__ivls_has(&r->succ, p->ix) ||
			    mu__ivls_has(&r->fail, p->ix) || bsearch(&p->ix, ix, n, sizeof *ix, ll_cmp))
				continue;
			pinfo_t *had = NULL;
			for (size_t k = 0; k < r->np && !had; k++)
				if (r->pi[k].delayed && r->pi[k].ix == p->ix)
					had = &r->pi[k];
			long long a = pod_annotation_int(p->o, FAILCOUNT_KEY) + pod_annotation_int(p->o, IGNORED_KEY);
			long long b = had ? pod_annotation_int(had->o, FAILCOUNT_KEY) +
						    pod_annotation_int(had->o, IGNORED_KEY) : -3;
			if (!had || b <= a) {
				if (had)
					had->delayed = false;
				p->delayed = true;
			}
		}
	}
	free(ix);
	return rc;
}

/* matchSuccessPolicy: the first rule of spec.successPolicy the succeeded
 * indexes meet (all of its succeededIndexes, or succeededCount of them,
 * or succeededCount in all), with kube's message in r->spmsg.
 * O(the rules * the intervals). */
static bool success_policy(rec_t *r)
{
	size_t i;
	json_t *rule;
	if (!r->succ.n)
		return false;
	json_array_foreach(mu__jget(r->job, "spec.successPolicy.rules"), i, rule) {
		const char *si = json_string_value(json_object_get(rule, "succeededIndexes"));
		const json_t *sc = json_object_get(rule, "succeededCount");
		bool met = false;
		if (si) {
			mu__ivls_t want;
			if (mu__ivls_parse(si, r->comp, &want) != MU_OK || !want.n) {
				mu__ivls_release(&want);
				continue;
			}
			long long contains = 0;
			for (size_t a = 0, b = 0; a < want.n && b < r->succ.n;) {
				long long lo = want.v[a].first > r->succ.v[b].first ? want.v[a].first : r->succ.v[b].first;
				long long hi = want.v[a].last < r->succ.v[b].last ? want.v[a].last : r->succ.v[b].last;
				if (hi >= lo)
					contains += hi - lo + 1;
				if (r->succ.v[b].last < want.v[a].last)
					b++;
				else if (r->succ.v[b].last > want.v[a].last)
					a++;
				else
					a++, b++;
			}
			met = contains == mu__ivls_total(&want) ||
			      (json_is_integer(sc) && contains >= json_integer_value(sc));
			mu__ivls_release(&want);
		} else if (json_is_integer(sc)) {
			met = mu__ivls_total(&r->succ) >= json_integer_value(sc);
		}
		if (met) {
			snprintf(r->spmsg, sizeof r->spmsg, "Matched rules at index %zu", i);
			return true;
		}
	}
	return false;
}

/* Decides, as syncJob does before it manages pods, the counters it works
 * with (the status's and the finished pods still carrying the
 * finalizer), whether the Job fails (FailureTarget, FailJob,
 * backoffLimit, the active deadline, then maxFailedIndexes and failed
 * indexes) or meets its success criteria (SuccessCriteriaMet already,
 * its successPolicy, its completions).  A Job already finished stays so.
 * O(the pods, a parse of each failed one with a policy). */
static int decide(rec_t *r)
{
	status_ctx_t *sc = &r->sc;
	long long new_s = 0, new_f = 0;
	for (size_t i = 0; i < r->np; i++) {
		pinfo_t *p = &r->pi[i];
		if (!pod_valid(p, r->indexed, r->comp))
			continue;
		if (p->succ)
			new_s++;
		else if (p->failed && pod_counts(r->pfp, p))
			new_f++;
	}
	if (r->indexed && indexes_eval(r) != MU_OK)
		return MU_ENOMEM;
	r->dec_s = r->indexed ? mu__ivls_total(&r->succ) : r->prev_s + new_s;
	sc->c.succeeded = (int)r->dec_s;
	sc->c.failed = (int)(r->prev_f + new_f);
	if (r->finished) {
		sc->failed = !cond_true(r->job, "Complete");
		sc->complete = !sc->failed;
		return MU_OK;
	}
	if (cond_true(r->job, "SuccessCriteriaMet")) {
		sc->complete = true;
		return MU_OK;
	}
	int64_t left = -1;
	bool failjob = pfp_failjob(r->pfp, r->pi, r->np, r->pfmsg, sizeof r->pfmsg);
	sc->failed = fails(r->job, &sc->c, r->backoff, sc->suspended, mu__now_s(), failjob ? r->pfmsg : NULL,
			   &sc->freason, &sc->fmsg, &left);
	if (left >= 0) {
		char key[600];
		snprintf(key, sizeof key, "%s/%s", r->ns, r->name);
		dl_push(r->jc, key, r->jc->now + left);
	}
	if (!sc->failed && r->indexed && r->bli >= 0) {
		long long ft = mu__ivls_total(&r->fail);
		if (r->mfi >= 0 && ft > r->mfi) {
			sc->failed = true;
			sc->freason = "MaxFailedIndexesExceeded";
			sc->fmsg = "Job has exceeded the specified maximal number of failed indexes";
		} else if (ft > 0 && ft + mu__ivls_total(&r->succ) >= r->comp) {
			sc->failed = true;
			sc->freason = "FailedIndexes";
			sc->fmsg = "Job has failed indexes";
		}
	}
	if (!sc->failed && r->indexed && success_policy(r)) {
		sc->complete = true;
		sc->sreason = "SuccessPolicy";
		sc->smsg = r->spmsg;
	}
	if (!sc->failed && !sc->complete)
		sc->complete = r->has_comp ? r->dec_s >= r->comp : r->dec_s > 0 && sc->c.active == 0;
	return MU_OK;
}

/* The active pods of an Indexed Job to delete (activePodsForRemoval):
 * every one without a valid index, all but one of each index that has
 * several (the Running one kept), and then more, to at least rm in all.
 * Marks them in pick[]; answers how many.  O(pods log pods). */
static int indexed_pick(rec_t *r, long long rm, bool *pick)
{
	long long *key = malloc((r->np + 1) * sizeof *key);
	int n = 0;
	if (!key)
		return 0;
	size_t m = 0;
	for (size_t i = 0; i < r->np; i++) {
		if (!is_active(r->pi[i].o))
			continue;
		if (r->pi[i].ix < 0 || r->pi[i].ix >= r->comp) {
			pick[i] = true;
			n++;
			continue;
		}
		const char *ph = mu__obj_field(r->pi[i].o, "status.phase");
		/* index, then Running last, then the pod: the last of an index stays */
		key[m++] = (r->pi[i].ix * 2 + (ph && !strcmp(ph, "Running"))) * (long long)(r->np + 1) + (long long)i;
	}
	qsort(key, m, sizeof *key, ll_cmp);
	for (size_t k = 0; k + 1 < m; k++)
		if (key[k] / (long long)(r->np + 1) / 2 == key[k + 1] / (long long)(r->np + 1) / 2) {
			pick[key[k] % (long long)(r->np + 1)] = true;
			n++;
		}
	free(key);
	for (int pass = 0; pass < 2 && n < rm; pass++)
		for (size_t i = 0; i < r->np && n < rm; i++) {
			const char *ph = mu__obj_field(r->pi[i].o, "status.phase");
			if (is_active(r->pi[i].o) && !pick[i] && (ph && !strcmp(ph, "Running")) == (pass == 1)) {
				pick[i] = true;
				n++;
			}
		}
	return n;
}

/* The indexes an Indexed Job creates pods for next (firstPendingIndexes):
 * up to want of those below completions neither succeeded, failed, nor
 * held by an active pod (or, when only failed pods are replaced, a
 * terminating one), into out[].  Answers how many.  O(pods log pods). */
static size_t pending_indexes(rec_t *r, size_t want, long long *out)
{
	long long *ix = malloc((r->np + 1) * sizeof *ix);
	mu__ivls_t t1, t2;
	size_t n = 0;
	if (!ix)
		return 0;
	for (size_t i = 0; i < r->np; i++) {
		bool term = r->pi[i].o->deleting && !r->pi[i].succ && !r->pi[i].fail;
		if (r->pi[i].ix >= 0 && (is_active(r->pi[i].o) || (r->only_failed && term)))
			ix[n++] = r->pi[i].ix;
	}
	int rc = mu__ivls_with(&r->succ, ix, ll_sort_uniq(ix, n), &t1);
	free(ix);
	if (rc != MU_OK)
		return 0;
	/* the failed indexes too, one single index at a time */
	n = 0;
	ix = malloc((size_t)(mu__ivls_total(&r->fail) + 1) * sizeof *ix);
	for (size_t i = 0; ix && i < r->fail.n; i++)
		for (long long k = r->fail.v[i].first; k <= r->fail.v[i].last; k++)
			ix[n++] = k;
	rc = ix ? mu__ivls_with(&t1, ix, n, &t2) : MU_ENOMEM;
	free(ix);
	mu__ivls_release(&t1);
	if (rc != MU_OK)
		return 0;
	n = mu__ivls_first_free(&t2, want, r->comp, out);
	mu__ivls_release(&t2);
	return n;
}

/* Creates up to make pods (at most MU__TX_MAX / 4), each with its
 * SuccessfulCreate Event, and a FailedCreate Event for a refusal; for an
 * Indexed Job one for each pending index.  Answers how many it made.  At
 * most 2 * make + 1 writes. */
static int create_pods(rec_t *r, mu__wtx_t *tx, json_int_t make)
{
	char why[600] = "";
	int made_n = 0;
	long long *ix = NULL;
	size_t nix = 0;
	if (make > MU__TX_MAX / 4)
		make = MU__TX_MAX / 4;
	if (r->indexed) {
		if (!(ix = malloc((size_t)make * sizeof *ix)))
			return 0;
		nix = pending_indexes(r, (size_t)make, ix);
		make = (json_int_t)nix;
	}
	for (json_int_t k = 0; k < make; k++) {
		long long fc = -1, ic = 0;
		if (r->indexed && r->bli >= 0) {
			pinfo_t *was = NULL;
			for (size_t i = 0; i < r->np && !was; i++)
				if (r->pi[i].delayed && r->pi[i].ix == ix[k])
					was = &r->pi[i];
			index_counts(r, was, &fc, &ic);
		}
		json_t *pod = pod_from(r->jc, r->job, r->indexed ? ix[k] : -1, fc, ic);
		mu__obj_t *made = NULL;
		if (pod && mu__create_why(r->jc->s, tx, MU__RT_PODS, pod, "kube-controller-manager", &made, why,
					  sizeof why) >= 0) {
			made_n++;
			if (made) { /* in the index before its event */
				index_add(r->jc, r->uid, made->key);
				pod_note(r->jc, tx, r->job, true, made->name);
			}
		}
		mu__obj_unref(made);
		json_decref(pod);
	}
	free(ix);
	if (*why)
		failed_create(r->jc, tx, r->job, why);
	return made_n;
}

/* Deletes or creates pods as syncJob and manageJob do (nothing for a Job
 * being deleted): a Job that stops (suspended, failed, succeeded or
 * finished) deletes its active pods, one that runs deletes the pods over
 * what it wants (and an Indexed Job's repeated or invalid indexes), or
 * else makes the missing ones.  Adjusts the counts.  Within need. */
static void manage(rec_t *r, mu__wtx_t *tx)
{
	status_ctx_t *sc = &r->sc;
	bool stop = sc->suspended || sc->complete || sc->failed || r->finished;
	json_int_t want = wanted(r->par, r->has_comp, r->comp, &sc->c);
	int ready = 0, n;
	if (r->leaving)
		return; /* the garbage collector works on it */
	if (stop) {
		n = delete_active(r->jc, tx, r->job, r->pi, r->np, NULL, DEL_MAX, !sc->failed, &ready);
		if (n == DEL_MAX)
			mark(r->jc, r->ns, r->name); /* more, perhaps, next time */
		sc->c.active -= n;
		sc->c.ready -= ready;
		sc->c.terminating += n; /* manageJob and syncJob: *jobCtx.terminating += removed */
		return;
	}
	bool *pick = NULL;
	long long rm = sc->c.active > want ? sc->c.active - want : 0;
	if (r->indexed && r->np && (pick = calloc(r->np, sizeof *pick)))
		rm = indexed_pick(r, rm, pick);
	if (rm > 0) {
		/* parallelism lowered, fewer completions left, or repeated
		 * indexes: the extra pods go, as manageJob deletes them (and
		 * deleting takes precedence over creating in one sync) */
		n = delete_active(r->jc, tx, r->job, r->pi, r->np, pick, rm < DEL_MAX ? (int)rm : DEL_MAX, true, &ready);
		sc->c.active -= n;
		sc->c.ready -= ready;
		sc->c.terminating += n;
		if (n < rm)
			mark(r->jc, r->ns, r->name);
	} else {
		json_int_t make = to_make(want, &sc->c, r->only_failed);
		if (make > 0) {
			int made = create_pods(r, tx, make);
			sc->c.active += made;
			if (made < make)
				mark(r->jc, r->ns, r->name);
		}
	}
	free(pick);
}

/* Counts the finished pods that still carry the finalizer and removes it
 * (trackJobStatusAndRemoveFinalizers, canRemoveFinalizer): every one when
 * the Job is being deleted or has finished or met a terminal condition,
 * else each that succeeded or failed (a failed one whose index waits for
 * its replacement excepted).  A succeeded pod counts as succeeded (an
 * Indexed Job's by its index), a failed one as failed unless its policy
 * ignores it, and an active one as failed when the Job fails.  At most
 * TRACK_MAX removals (the Job is reconciled again for the rest, and does
 * not finish before).  Sets the counters to write. */
static void track(rec_t *r, mu__wtx_t *tx)
{
	status_ctx_t *sc = &r->sc;
	bool any = r->leaving || sc->failed || sc->complete || r->finished;
	bool failing = sc->failed && !r->finished;
	long long st_s = 0, st_f = 0;
	int n = 0;
	for (size_t i = 0; i < r->np; i++) {
		pinfo_t *p = &r->pi[i];
		if (p->fin && !p->stripped && !any && r->only_failed && p->o->deleting && p->unbound && !p->succ &&
		    !p->fail && n < TRACK_MAX) {
			mu__store_apply(tx, MU__RT_PODS, p->o->ns, p->o->name, podgc_fn, NULL, false, NULL);
			n++; /* counted when it comes back Failed */
			continue;
		}
		if (!p->fin || p->stripped || !(any || p->succ || (p->failed && !p->delayed)))
			continue;
		if (n++ == TRACK_MAX) {
			sc->more = true;
			mark(r->jc, r->ns, r->name);
			break;
		}
		strip(tx, p);
		if (!p->stripped || r->finished)
			continue;
		bool valid = !r->indexed || (p->ix >= 0 && p->ix < r->comp);
		if (p->succ)
			st_s += !r->indexed;
		else if ((p->failed || failing) && valid && pod_counts(r->pfp, p))
			st_f++;
	}
	sc->c.succeeded = (int)(r->indexed ? mu__ivls_total(&r->succ) : r->prev_s + st_s);
	sc->c.failed = (int)(r->prev_f + st_f);
}

/* Reads the Job's spec into r (its pods read already).  O(1). */
static void rec_spec(rec_t *r)
{
	const json_t *job = r->job, *comp = mu__jget(job, "spec.completions");
	const char *mode = mu__jstr(job, "spec.completionMode"), *rp = mu__jstr(job, "spec.podReplacementPolicy");
	const json_t *bl = mu__jget(job, "spec.backoffLimit"), *bli = mu__jget(job, "spec.backoffLimitPerIndex");
	const json_t *mfi = mu__jget(job, "spec.maxFailedIndexes");
	r->has_comp = json_is_integer(comp);
	r->comp = r->has_comp ? json_integer_value(comp) : 0;
	r->indexed = mode && !strcmp(mode, "Indexed") && r->has_comp;
	r->par = json_integer_value(mu__jget(job, "spec.parallelism"));
	r->backoff = bl ? json_integer_value(bl) : 6;
	r->bli = r->indexed && json_is_integer(bli) ? json_integer_value(bli) : -1;
	r->mfi = r->bli >= 0 && json_is_integer(mfi) ? json_integer_value(mfi) : -1;
	r->pfp = json_is_object(mu__jget(job, "spec.podFailurePolicy")) ? mu__jget(job, "spec.podFailurePolicy") : NULL;
	/* onlyReplaceFailedPods: podReplacementPolicy Failed, or a podFailurePolicy */
	r->only_failed = (rp && !strcmp(rp, "Failed")) || r->pfp;
	r->finished = cond_true(job, "Complete") || cond_true(job, "Failed");
	r->leaving = mu__jget(job, "metadata.deletionTimestamp") != NULL;
	r->prev_s = json_integer_value(mu__jget(job, "status.succeeded"));
	r->prev_f = json_integer_value(mu__jget(job, "status.failed"));
}

/* The writes a reconcile of r may stage: the status and its Events, the
 * finalizers it removes, and its pods deleted or made with their Events. */
static int rec_need(const rec_t *r)
{
	const counts_t *c = &r->sc.c;
	int need = 3 + TRACK_MAX;
	bool stop = r->sc.suspended || r->sc.complete || r->sc.failed || r->finished;
	if (r->leaving)
		return need;
	if (stop || r->indexed)
		return need + 3 * (c->active < DEL_MAX ? c->active : DEL_MAX) + (stop ? 0 : 1 + 2 * (MU__TX_MAX / 4));
	json_int_t want = wanted(r->par, r->has_comp, r->comp, c);
	if (want < c->active)
		return need + 3 * (c->active - want < DEL_MAX ? (int)(c->active - want) : DEL_MAX);
	json_int_t make = to_make(want, c, r->only_failed);
	return need + (make > 0 ? 1 + 2 * (make < MU__TX_MAX / 4 ? (int)make : MU__TX_MAX / 4) : 0);
}

/* Brings one job to its desired state, its writes in x's transaction.
 * Bounded: MU__TX_MAX / 4 pods made (each with its Event), DEL_MAX
 * deleted, TRACK_MAX counted. */
static void reconcile(mu__jobctl_t *jc, const char *ns, const char *name, shared_tx_t *x)
{
	mu__obj_t *jo = mu__store_get(jc->s->store, MU__RT_JOBS, ns, name);
	mu__page_t pg;
	if (!jo || !*jo->uid || job_pods(jc, ns, jo->uid, &pg) != MU_OK) {
		mu__obj_unref(jo);
		return;
	}
	if (quick_keep(jc, jo, &pg)) {
		mu__page_release(&pg);
		mu__obj_unref(jo);
		return;
	}
	/* the tree this controller's last status write kept, when jo is that
	 * write (the next reconcile of a Job usually is), else a parse */
	bool kept = false;
	rec_t r = {.jc = jc, .ns = ns, .name = name, .job = mu__store_take_tree(jc->s->store, jo, &kept), .np = pg.n};
	jc->kept += kept;
	jc->parsed += !kept;
	int64_t job_rv = jo->rv;
	mu__obj_unref(jo);
	r.uid = mu__jstr(r.job, "metadata.uid");
	const char *by = mu__jstr(r.job, "spec.managedBy");
	/* another controller owns it (spec.managedBy, as Kubernetes' Job
	 * controller leaves such a Job alone since 1.32) */
	if (!r.job || !r.uid || (by && strcmp(by, "kubernetes.io/job-controller")) ||
	    !(r.pi = calloc(pg.n + 1, sizeof *r.pi))) {
		mu__page_release(&pg);
		json_decref(r.job);
		return;
	}
	rec_spec(&r);
	pods_read(&pg, r.pi, r.indexed, r.only_failed);
	r.sc = (status_ctx_t){mu__type(jc->s->types, MU__RT_JOBS), jc->memo, count(&pg),
			      json_is_true(mu__jget(r.job, "spec.suspend")), false, false, NULL, -1, 0, NULL, NULL, NULL,
			      NULL, false, NULL, NULL};
	char *cs = NULL, *fs = NULL;
	if (decide(&r) == MU_OK) {
		mu__wtx_t *tx = tx_room(jc, x, rec_need(&r));
		manage(&r, tx);
		track(&r, tx);
		if (r.indexed && !(r.sc.completed = cs = mu__ivls_str(&r.succ)))
			r.sc.completed = mu__jstr(r.job, "status.completedIndexes");
		if (r.bli >= 0)
			r.sc.failedix = fs = mu__ivls_str(&r.fail);
		/* status_fn may change job in place: the Events below read its
		 * metadata and spec, which it leaves as they are */
		r.sc.job = r.job;
		r.sc.rv = job_rv;
		/* the version written keeps its tree (r.job, or a parse of a
		 * newer version) for the Job's next reconcile: from here on it
		 * is only read */
		if (mu__store_apply_keep(tx, MU__RT_JOBS, ns, name, status_fn, &r.sc, NULL) == MU__MUT_PUT && r.sc.tr)
			transition_notes(jc, tx, r.job, r.sc.tr, &r.sc.c, r.sc.freason, r.sc.fmsg);
	}
	free(cs);
	free(fs);
	mu__ivls_release(&r.succ);
	mu__ivls_release(&r.fail);
	free(r.pi);
	mu__page_release(&pg);
	json_decref(r.job);
}

/* A pod labelled by the job of uid ctx that is its dependent or still
 * carries the tracking finalizer. */
static bool gone_pod(void *ctx, const mu__obj_t *o)
{
	return dependent(ctx, o) || (owned(ctx, o) && has_tracking(o));
}

/* Deletes the pods of a deleted job (background cascading deletion), and
 * removes the tracking finalizer from those it orphaned, as kube's Job
 * controller does for a pod whose Job is gone (cleanupPodFinalizers). */
static void cascade(mu__jobctl_t *jc, const char *uid)
{
	mu__page_t pg;
	uid_filter_t f = {uid};
	for (int guard = 0; guard < 4096; guard++) {
		if (mu__store_list(jc->s->store, MU__RT_PODS, NULL, NULL, MU__TX_MAX, gone_pod, &f, &pg) != MU_OK)
			return;
		size_t n = pg.n;
		mu__wtx_t *tx;
		mu__store_begin(jc->s->store, &tx);
		for (size_t i = 0; i < pg.n; i++) {
			if (dependent(&f, pg.objs[i]))
				mu__delete_now(tx, MU__RT_PODS, pg.objs[i]->ns, pg.objs[i]->name);
			else
				mu__store_apply(tx, MU__RT_PODS, pg.objs[i]->ns, pg.objs[i]->name, strip_fn, NULL, false,
						NULL);
		}
		mu__store_commit(tx);
		mu__page_release(&pg);
		if (n < MU__TX_MAX)
			return;
	}
}

/* Moves the batched jobs due by now to the dirty set.  O(those due). */
static void take_due(mu__jobctl_t *jc, int64_t now)
{
	while (jc->qn && jc->q[jc->qhead].due <= now) {
		later_t *l = &jc->q[jc->qhead];
		json_t *due = json_object_get(jc->wait, l->key);
		/* a key reconciled since (its wait dropped) or marked again
		 * later has no due entry of this time */
		if (due && json_integer_value(due) <= now) {
			json_object_del(jc->wait, l->key);
			if (json_object_set_new(jc->dirty, l->key, json_null()))
				jc->all = true;
		}
		free(l->key);
		jc->qhead = (jc->qhead + 1) % jc->qcap;
		jc->qn--;
	}
}

int64_t mu__jobctl_sync(mu__jobctl_t *jc, int64_t now_ms)
{
	for (int i = 0; i < jc->ngone; i++) {
		cascade(jc, jc->gone[i]);
		free(jc->gone[i]);
	}
	jc->ngone = 0;
	jc->now = now_ms;
	take_due(jc, now_ms);
	dl_take(jc, now_ms);
	if (jc->all) {
		jc->all = false;
		json_object_clear(jc->dirty);
		json_object_clear(jc->wait); /* the ring's entries find no due time */
		index_rebuild(jc);
		mu__page_t pg;
		if (mu__store_list(jc->s->store, MU__RT_JOBS, NULL, NULL, 1000000, NULL, NULL, &pg) == MU_OK) {
			shared_tx_t x = {NULL, 0};
			for (size_t i = 0; i < pg.n; i++)
				reconcile(jc, pg.objs[i]->ns, pg.objs[i]->name, &x);
			tx_end(&x);
			mu__page_release(&pg);
		}
	}
	/* reconcile may mark jobs again: take the current set first */
	json_t *work = jc->dirty, *fresh = json_object();
	if (!fresh)
		return 0; /* out of memory: the same set next time */
	jc->dirty = fresh;
	const char *key;
	json_t *v;
	shared_tx_t x = {NULL, 0};
	json_object_foreach(work, key, v) {
		const char *slash = strchr(key, '/');
		char ns[256];
		/* this reconcile reads the job as it is now: a batched mark
		 * from before it has nothing left to do */
		json_object_del(jc->wait, key);
		if (slash && (size_t)(slash - key) < sizeof ns) {
			snprintf(ns, sizeof ns, "%.*s", (int)(slash - key), key);
			reconcile(jc, ns, slash + 1, &x);
		}
	}
	tx_end(&x);
	json_decref(work);
	if (json_object_size(jc->dirty))
		return 0;
	dl_take(jc, now_ms); /* stale entries off the top */
	int64_t next = jc->qn ? jc->q[jc->qhead].due - now_ms : -1;
	if (jc->dln && (next < 0 || jc->dl[0].due - now_ms < next))
		next = jc->dl[0].due - now_ms;
	return next;
}


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
 * one sync share a write transaction.
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
		if (ph && !strcmp(ph, "Succeeded"))
			c.succeeded++;
		else if (ph && !strcmp(ph, "Failed"))
			c.failed++;
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

/* Applies spec.podFailurePolicy pfp to the job's failed pods in pg, as
 * Kubernetes' Job controller does (trackJobStatusAndRemoveFinalizers and
 * getFailJobMessage): a pod whose rule is Ignore leaves c's failed count
 * (it does not count against backoffLimit, and is replaced as any pod
 * that is no longer active); answers whether one matched a FailJob rule,
 * with kube's message of the first in msg.  With a podFailurePolicy only
 * a pod whose phase is Failed is failed (onlyReplaceFailedPods).  O(the
 * pods, a parse of each failed one). */
static bool pfp_apply(const json_t *pfp, const mu__page_t *pg, counts_t *c, char *msg, size_t msz)
{
	bool failjob = false;
	for (size_t i = 0; i < pg->n; i++) {
		const char *ph = mu__obj_field(pg->objs[i], "status.phase");
		if (!ph || strcmp(ph, "Failed"))
			continue;
		json_t *pod = mu__obj_parse(pg->objs[i]);
		char m[700];
		int a = pod ? mu__pfp_match(pfp, pod, m, sizeof m) : MU__PFP_NONE;
		json_decref(pod);
		if (a == MU__PFP_IGNORE)
			c->failed--;
		else if (a == MU__PFP_FAILJOB && !failjob) {
			snprintf(msg, msz, "%s", m);
			failjob = true;
		}
	}
	return failjob;
}

/* A pod from the job's template. */
static json_t *pod_from(mu__jobctl_t *jc, const json_t *job)
{
	const char *name = mu__jstr(job, "metadata.name"), *uid = mu__jstr(job, "metadata.uid");
	json_t *tpl = mu__jget(job, "spec.template");
	if (!name || !uid || !json_is_object(tpl))
		return NULL;
	char sfx[6], pre[300], pn[300];
	mu__name_suffix(jc->s, sfx);
	/* generateName "JOB-", cut to 58 characters as names.SimpleNameGenerator does */
	snprintf(pre, sizeof pre, "%s-", name);
	snprintf(pn, sizeof pn, "%.58s%s", pre, sfx);
	json_t *md = json_deep_copy(json_object_get(tpl, "metadata"));
	if (!json_is_object(md)) {
		json_decref(md);
		md = json_object();
	}
	json_object_set_new(md, "name", json_string(pn));
	json_object_set_new(md, "generateName", json_sprintf("%s-", name));
	json_object_set_new(md, "namespace", json_string(mu__jstr(job, "metadata.namespace")));
	json_object_set_new(md, "ownerReferences",
			    json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion", "batch/v1", "kind", "Job",
				      "name", name, "uid", uid, "controller", 1, "blockOwnerDeletion", 1));
	const char *dur = json_string_value(json_object_get(mu__jget(job, "metadata.annotations"), "muster.io/duration"));
	if (dur) {
		if (!json_is_object(json_object_get(md, "annotations")))
			json_object_set_new(md, "annotations", json_object());
		if (!json_object_get(json_object_get(md, "annotations"), "muster.io/duration"))
			json_object_set_new(json_object_get(md, "annotations"), "muster.io/duration", json_string(dur));
	}
	return json_pack("{s:s, s:s, s:o, s:O}", "apiVersion", "v1", "kind", "Pod", "metadata", md, "spec",
			 json_object_get(tpl, "spec"));
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
	counts_t c;
	bool suspended, complete, failed;
	json_t *job;          /* reconcile's parse of the job (borrowed) */
	int64_t rv;           /* the version it parsed */
	unsigned tr;          /* status_fn's answer: the TR_ transitions it wrote */
	const char *freason;  /* failed: the reason and message of its conditions */
	const char *fmsg;     /* (NULL: BackoffLimitExceeded's) */
	int killed;           /* active pods this reconcile deleted because the Job failed */
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
	mu__jset(o, "status.succeeded", json_integer(c->c.succeeded));
	/* a failed Job counts the active pods it deleted as failed (kube's
	 * trackJobStatusAndRemoveFinalizers: once the Job is finished every
	 * pod not terminated counts as failed), and its count does not fall
	 * when its pods go later */
	json_int_t failed = c->c.failed + c->killed;
	const json_t *had = mu__jget(o, "status.failed");
	if (c->failed && json_is_integer(had) && json_integer_value(had) > failed)
		failed = json_integer_value(had);
	mu__jset(o, "status.failed", json_integer(failed));
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
	 * Job is terminating (enactJobFinished with delayTerminalCondition,
	 * Kubernetes 1.31+: JobManagedBy or JobPodReplacementPolicy on) */
	if (c->complete && !cond_true(o, "Complete")) {
		if (!cond_true(o, "SuccessCriteriaMet"))
			mu__set_condition(o, "SuccessCriteriaMet", "True", "CompletionsReached",
					  "Reached expected number of succeeded pods");
		if (c->c.terminating == 0) {
			mu__set_condition(o, "Complete", "True", "CompletionsReached",
					  "Reached expected number of succeeded pods");
			mu__jset(o, "status.completionTime", json_string(ts));
			tr |= TR_COMPLETE;
		}
	}
	if (c->failed && !cond_true(o, "Failed")) {
		const char *r = c->freason ? c->freason : BACKOFF_REASON, *m = c->fmsg ? c->fmsg : BACKOFF_MSG;
		if (!cond_true(o, "FailureTarget"))
			mu__set_condition(o, "FailureTarget", "True", r, m);
		if (c->c.terminating == 0) {
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
	enum { MANAGED_BY, COMPLETIONS, PARALLELISM, BACKOFF, SUSPEND, REPLACEMENT, PFP, DEADLINE, NSPEC };
	static const char *const keys[NSPEC] = {"managedBy", "completions", "parallelism", "backoffLimit",
						"suspend", "podReplacementPolicy", "podFailurePolicy",
						"activeDeadlineSeconds"};
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
	if (f[PFP] && !(fn[PFP] == 4 && !memcmp(f[PFP], "null", 4)))
		return false; /* its rules read the failed pods: reconcile does */
	json_t *st = NULL, *o = json_object(), *before = NULL;
	if (!o || !(st = mu__json_parse(stv, stn)) ||
	    json_object_set_new(o, "status", st) || !(before = mu__json_copy(st))) {
		json_decref(o);
		return false;
	}
	status_ctx_t sc = {mu__type(jc->s->types, MU__RT_JOBS), jc->memo, count(pg), suspend, false, false, NULL, -1, 0,
			   NULL, NULL, 0};
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

/* The pods one reconcile deletes at most, each with its Event. */
#define DEL_MAX ((MU__TX_MAX - 8) / 2)

/* Deletes up to n of job's active pods in pg, in tx, each with its
 * SuccessfulDelete Event; the pods not Running go first (kube's
 * activePodsForRemoval also prefers the unscheduled, the pending and the
 * unready).  Answers how many it deleted, and adds to *ready how many
 * of them were Running (counted ready).  At most 2 * n writes. */
static int delete_active(mu__jobctl_t *jc, mu__wtx_t *tx, const json_t *job, const mu__page_t *pg, int n, int *ready)
{
	int done = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < pg->n && done < n; i++) {
			const mu__obj_t *p = pg->objs[i];
			const char *ph = mu__obj_field(p, "status.phase");
			bool running = ph && !strcmp(ph, "Running");
			if (!is_active(p) || running != (pass == 1))
				continue;
			if (mu__delete_in(tx, MU__RT_PODS, p->ns, p->name, -1, NULL, NULL, false, NULL) >= 0) {
				pod_note(jc, tx, job, false, p->name);
				done++;
				*ready += running;
			}
		}
	return done;
}

/* Brings one job to its desired state, its writes in x's transaction.
 * Bounded: MU__TX_MAX / 4 pods made (each with its Event), MU__TX_MAX - 1
 * deleted. */
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
	json_t *job = mu__obj_parse(jo);
	int64_t job_rv = jo->rv;
	mu__obj_unref(jo);
	const char *uid = mu__jstr(job, "metadata.uid");
	if (!job || !uid) {
		mu__page_release(&pg);
		json_decref(job);
		return;
	}
	const char *by = mu__jstr(job, "spec.managedBy");
	if (by && strcmp(by, "kubernetes.io/job-controller")) {
		/* another controller owns it (spec.managedBy, as Kubernetes'
		 * Job controller leaves such a Job alone since 1.32) */
		mu__page_release(&pg);
		json_decref(job);
		return;
	}
	status_ctx_t sc = {mu__type(jc->s->types, MU__RT_JOBS), jc->memo, count(&pg), json_is_true(mu__jget(job, "spec.suspend")),
			   false, false, NULL, -1, 0, NULL, NULL, 0};
	const json_t *comp = mu__jget(job, "spec.completions");
	json_int_t par = json_integer_value(mu__jget(job, "spec.parallelism"));
	json_int_t backoff = mu__jget(job, "spec.backoffLimit") ? json_integer_value(mu__jget(job, "spec.backoffLimit")) : 6;
	bool finished = cond_true(job, "Complete") || cond_true(job, "Failed");
	/* a Job not finished fails (FailureTarget, backoffLimit, the active
	 * deadline) before it completes, as in syncJob; one whose deadline is
	 * ahead is reconciled again when it passes */
	int64_t left = -1;
	const json_t *pfp = mu__jget(job, "spec.podFailurePolicy");
	char pfmsg[700];
	bool failjob = json_is_object(pfp) && pfp_apply(pfp, &pg, &sc.c, pfmsg, sizeof pfmsg);
	if (finished)
		sc.failed = !cond_true(job, "Complete");
	else
		sc.failed = fails(job, &sc.c, backoff, sc.suspended, mu__now_s(), failjob ? pfmsg : NULL, &sc.freason,
				  &sc.fmsg, &left);
	if (left >= 0) {
		char key[600];
		snprintf(key, sizeof key, "%s/%s", ns, name);
		dl_push(jc, key, jc->now + left);
	}
	sc.complete = !sc.failed && (cond_true(job, "Complete") || cond_true(job, "SuccessCriteriaMet") ||
				     (json_is_integer(comp) ? sc.c.succeeded >= json_integer_value(comp)
							    : sc.c.succeeded > 0 && sc.c.active == 0));
	bool stop = sc.suspended || sc.complete || sc.failed || finished;
	/* a Job being deleted (orphan or foregroundDeletion finalizers, gc.c)
	 * makes no pods and keeps the ones it has */
	bool leaving = mu__jget(job, "metadata.deletionTimestamp") != NULL;
	json_int_t want = wanted(par, json_is_integer(comp), json_integer_value(comp), &sc.c);
	const char *rp = mu__jstr(job, "spec.podReplacementPolicy");
	bool only_failed = (rp && !strcmp(rp, "Failed")) || (pfp && !json_is_null(pfp));
	json_int_t make = to_make(want, &sc.c, only_failed);
	int need = 3; /* the status and its Events */
	if (leaving)
		;
	else if (stop) /* a deletion and its Event each */
		need += 2 * (sc.c.active < DEL_MAX ? sc.c.active : DEL_MAX);
	else if (want < sc.c.active)
		need += 2 * (sc.c.active - want < DEL_MAX ? (int)(sc.c.active - want) : DEL_MAX);
	else if (make > 0) /* a pod and its Event each, and a FailedCreate */
		need += 1 + 2 * (make < MU__TX_MAX / 4 ? (int)make : MU__TX_MAX / 4);
	mu__wtx_t *tx = tx_room(jc, x, need);
	int writes = 0;
	if (leaving) {
		/* nothing to do: the garbage collector works on it */
	} else if (stop) {
		int ready = 0, n = delete_active(jc, tx, job, &pg, DEL_MAX, &ready);
		if (n == DEL_MAX)
			mark(jc, ns, name); /* more, perhaps, next time */
		/* the pods it deletes are terminating in this status
		 * (manageJob and syncJob: *jobCtx.terminating += removed) */
		sc.c.terminating += n;
		if (sc.failed) {
			/* the pods a failure deletes leave active and count as
			 * failed (deleteActivePods, trackJobStatusAndRemoveFinalizers) */
			sc.c.active -= n;
			sc.c.ready -= ready;
			sc.killed = n;
		} else if (sc.suspended) {
			sc.c.active = 0;
		}
	} else if (want < sc.c.active) {
		/* parallelism lowered (or fewer completions left): the extra
		 * pods go, as manageJob deletes them */
		int ready = 0;
		int n = delete_active(jc, tx, job, &pg, sc.c.active - want < DEL_MAX ? (int)(sc.c.active - want) : DEL_MAX,
				      &ready);
		sc.c.active -= n;
		sc.c.terminating += n;
		if (sc.c.active > want)
			mark(jc, ns, name);
	} else if (make > 0) {
		char why[600] = "";
		json_int_t made0 = sc.c.active;
		for (json_int_t k = 0; k < make && writes < MU__TX_MAX / 4; k++) {
			json_t *pod = pod_from(jc, job);
			mu__obj_t *made = NULL;
			if (pod && mu__create_why(jc->s, tx, MU__RT_PODS, pod, "kube-controller-manager", &made,
						  why, sizeof why) >= 0) {
				sc.c.active++;
				writes++;
				if (made) { /* in the index before its event */
					index_add(jc, uid, made->key);
					pod_note(jc, tx, job, true, made->name);
				}
			}
			mu__obj_unref(made);
			json_decref(pod);
		}
		if (*why)
			failed_create(jc, tx, job, why);
		if (sc.c.active - made0 < make)
			mark(jc, ns, name);
	}
	/* status_fn may change job in place: the Events below read its
	 * metadata and spec, which it leaves as they are */
	sc.job = job;
	sc.rv = job_rv;
	if (mu__store_apply(tx, MU__RT_JOBS, ns, name, status_fn, &sc, false, NULL) == MU__MUT_PUT && sc.tr)
		transition_notes(jc, tx, job, sc.tr, &sc.c, sc.freason, sc.fmsg);
	mu__page_release(&pg);
	json_decref(job);
}

/* Deletes the pods of a deleted job (background cascading deletion). */
static void cascade(mu__jobctl_t *jc, const char *uid)
{
	mu__page_t pg;
	uid_filter_t f = {uid};
	for (int guard = 0; guard < 4096; guard++) {
		if (mu__store_list(jc->s->store, MU__RT_PODS, NULL, NULL, MU__TX_MAX, dependent, &f, &pg) != MU_OK)
			return;
		size_t n = pg.n;
		mu__wtx_t *tx;
		mu__store_begin(jc->s->store, &tx);
		for (size_t i = 0; i < pg.n; i++)
			mu__delete_now(tx, MU__RT_PODS, pg.objs[i]->ns, pg.objs[i]->name);
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

/*
 * jobs.c - batch/v1 Jobs: queue admission, and the PodGroup controller.
 *
 * Every Job has a group "j:NS/NAME" holding its latest object, so that its
 * pods (which may be seen before it) know where they belong.
 *
 * Admission (a Job labelled muster.io/queue or kueue.x-k8s.io/queue-name
 * whose pod template names muster's scheduler):
 *   - suspended, without the annotation muster.io/admitted: an engine job
 *     of one pod set, the pod template x the pods it will run
 *     (min(parallelism, completions - succeeded)), read by the cluster-file
 *     loader (so its annotations mean what they mean in files);
 *   - when a cycle binds it (the whole gang, or minMember of it), each
 *     engine pod becomes a slot (planned node and devices) and the Job is
 *     patched {"metadata":{"annotations":{"muster.io/admitted":"true"}},
 *     "spec":{"suspend":false}}; its pods, created by the Job controller,
 *     take free slots and are bound there;
 *   - a pod that ends frees its slot for a replacement; the slots are
 *     released when the Job completes or fails (or is deleted);
 *   - preemption evicts the engine job: the Job is patched back to
 *     suspend: true (its pods are deleted by the Job controller) and waits
 *     in its queue again;
 *   - a queue-labelled Job seen running without the annotation and with no
 *     pods yet is suspended (muster's defaulting step); one that already
 *     runs pods is adopted as admitted;
 *   - after a restart an admitted Job is submitted again with its bound pods
 *     replayed into slots; the engine places whatever is missing.
 * The PodGroup controller: a Job without a queue label whose pods are ours
 * and that runs more than one pod at a time gets a muster PodGroup of the
 * same name (owned by it, minMember the pods it runs at once, or its
 * muster.io/min-member annotation), so that a plain Job is a gang.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"

static const char *queue_label(const json_t *job)
{
	const char *q = mu__kmap(job, "metadata.labels", "muster.io/queue");
	return q ? q : mu__kmap(job, "metadata.labels", "kueue.x-k8s.io/queue-name");
}

/* Whether the Job has a Complete or Failed condition. */
static bool job_done(const json_t *job)
{
	size_t i;
	json_t *c;
	json_array_foreach(mu__kj(job, "status.conditions"), i, c) {
		const char *t = mu__kjs(c, "type"), *s = mu__kjs(c, "status");
		if (t && s && !strcmp(s, "True") && (!strcmp(t, "Complete") || !strcmp(t, "Failed")))
			return true;
	}
	return false;
}

/* Pods the Job runs at once: min(parallelism, completions - succeeded). */
static int32_t job_pods(const json_t *job)
{
	int64_t par = mu__kji(job, "spec.parallelism", 1);
	int64_t comp = mu__kji(job, "spec.completions", -1);
	if (comp >= 0) {
		int64_t left = comp - mu__kji(job, "status.succeeded", 0);
		if (left < par)
			par = left;
	}
	return par < 0 ? 0 : par > 1000000 ? 1000000 : (int32_t)par;
}

/* Drops g's slots (owned node names freed; pods forget theirs).  O(slots). */
static void clear_slots(mu__kgroup_t *g)
{
	for (int32_t i = 0; i < g->nslots; i++) {
		free(g->slots[i].node);
		if (g->slots[i].pod)
			g->slots[i].pod->slot = -1;
	}
	free(g->slots);
	g->slots = NULL;
	g->nslots = 0;
}

void mu__kd_pgctl(mu__kd_t *d, const json_t *job)
{
	const char *ns = mu__kjs(job, "metadata.namespace"), *name = mu__kjs(job, "metadata.name");
	const char *uid = mu__kjs(job, "metadata.uid");
	char key[600], path[700];
	if (!ns || !name)
		return;
	snprintf(key, sizeof key, "m:%s/%s", ns, name);
	mu__kgroup_t *pg = mu__kd_group(d, key, MU__KG_GANG, ns, name);
	if (!pg || pg->has_pg || pg->pg_requested)
		return;
	int64_t mm = job_pods(job);
	const char *a = mu__kmap(job, "metadata.annotations", "muster.io/min-member");
	if (a && atoll(a) > 0 && atoll(a) < mm)
		mm = atoll(a);
	json_t *body = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s},s:[{s:s,s:s,s:s,s:s?,s:b}]},s:{s:I}}",
				 "apiVersion", "muster.io/v1alpha1", "kind", "PodGroup",
				 "metadata", "name", name, "namespace", ns, "labels", "muster.io/job", name,
				 "ownerReferences", "apiVersion", "batch/v1", "kind", "Job", "name", name,
				 "uid", uid, "controller", 0, "spec", "minMember", (json_int_t)(mm < 1 ? 1 : mm));
	snprintf(path, sizeof path, "/apis/muster.io/v1alpha1/namespaces/%s/podgroups", ns);
	mu__kd_write(d, MU__KW_WRITE, "POST", path, "application/json", body, NULL, NULL);
	json_decref(body);
	pg->pg_requested = true;
	mu__klog(&d->log, 1, "pod group %s/%s created for its Job | job=%s/%s", ns, name, ns, name);
}

/* Keeps the Job's latest object in its group (a reference), classifies it
 * (admission, gang, neither) and regroups its pods when that changed:
 * O(pods) then, O(1) otherwise. */
void mu__kd_job_event(mu__kd_t *d, const char *key, json_t *obj, bool deleted)
{
	const char *ns = mu__kjs(obj, "metadata.namespace"), *name = mu__kjs(obj, "metadata.name");
	if (!name)
		return;
	if (!ns)
		ns = "default";
	mu__kgroup_t *g = deleted ? mu__kmap_get(&d->groups, key) : mu__kd_group(d, key, MU__KG_JOB, ns, name);
	if (!g)
		return;
	bool was_admission = g->admission, was_gang = g->gang_job, known = g->job != NULL;
	json_decref(g->job);
	g->job = deleted ? NULL : json_incref(obj);
	const char *sched = mu__kjs(obj, "spec.template.spec.schedulerName");
	/* a queue-labelled Job whose pods another scheduler places is left
	 * to that scheduler (and its admission controller) */
	/* a JobSet's Jobs are parts of the JobSet's gang (kinds.c) */
	bool of_jobset = mu__kmap(obj, "metadata.labels", "jobset.sigs.k8s.io/jobset-name") != NULL;
	g->admission = !deleted && !of_jobset && queue_label(obj) && sched &&
		       !strcmp(sched, d->o->scheduler_name);
	g->gang_job = !deleted && !of_jobset && !g->admission && sched &&
		      !strcmp(sched, d->o->scheduler_name) &&
		      mu__kji(obj, "spec.parallelism", 1) > 1 && !job_done(obj);
	if (g->gang_job)
		mu__kd_pgctl(d, obj);
	if (deleted) {
		char pk[600], path[700];
		snprintf(pk, sizeof pk, "m:%s/%s", ns, name);
		mu__kgroup_t *pg = mu__kmap_get(&d->groups, pk);
		if (pg && pg->pg_requested) {
			snprintf(path, sizeof path, "/apis/muster.io/v1alpha1/namespaces/%s/podgroups/%s", ns, name);
			mu__kd_write(d, MU__KW_WRITE, "DELETE", path, NULL, NULL, NULL, NULL);
			pg->pg_requested = false;
		}
	}
	if (!known || deleted || was_admission != g->admission || was_gang != g->gang_job)
		mu__kd_regroup_owned(d, ns, name);
	mu__kd_mark_dirty(d, g);
}

/* Patches the Job's suspend flag (and muster.io/admitted with it). */
static void patch_suspend(mu__kd_t *d, mu__kgroup_t *g, bool suspend)
{
	char path[700];
	snprintf(path, sizeof path, "/apis/batch/v1/namespaces/%s/jobs/%s", g->ns, g->name);
	json_t *body = suspend ? json_pack("{s:{s:{s:n}},s:{s:b}}", "metadata", "annotations",
					   "muster.io/admitted", "spec", "suspend", 1)
			       : json_pack("{s:{s:{s:s}},s:{s:b}}", "metadata", "annotations",
					   "muster.io/admitted", "true", "spec", "suspend", 0);
	mu__kd_write(d, MU__KW_WRITE, "PATCH", path, "application/merge-patch+json", body, NULL, NULL);
	json_decref(body);
}

/* Whether g's engine job was never placed and has a slot not placed yet:
 * its pods wait for a cycle to place them, not for a slot to free up.
 * O(slots). */
static bool slots_unplaced(const mu__kd_t *d, const mu__kgroup_t *g)
{
	mu_job_info_t ji;
	if (g->ej < 0 || mu_engine_job_info(d->e, g->ej, &ji) != MU_OK || ji.state != MU_JOB_PENDING)
		return false;
	for (int32_t s = 0; s < g->nslots; s++)
		if (!g->slots[s].node && !g->slots[s].pod)
			return true;
	return false;
}

/* Slots of one Job re-planned in a row (without a claim allocated in
 * between) before its pods wait on their slots' nodes: the engine's counts
 * of the devices (dra.c, mu__kd_dra_counts) may lag a device taken
 * meanwhile, so the new place may fail again; the bound stops the loop. */
#define MU__KD_DRA_REPLANS 3

/* Slot s of admitted Job g was planned on a node that cannot take pod p's
 * claims (the devices were taken between the admission and the bind): its
 * engine pod is taken back (mu_engine_pod_unbind, as a failed bind of a
 * single pod is) and the next cycle places it again, on a node whose
 * devices the engine still counts free (mu__kd_job_bind plans the slot
 * there); p waits for it.  Only when p's claims fit on another node now
 * (mu__kd_dra_allocate): not while a claim is still to be made, nor when
 * they fit nowhere.  False when they do not, the Job's re-plans are used
 * up or the engine does not have the pod placed: p then waits on this
 * slot's node with the allocator's reason.  O(one allocation over the
 * nodes + resources). */
static bool replan_slot(mu__kd_t *d, mu__kgroup_t *g, int32_t s, mu__kpod_t *p)
{
	mu__kslot_t *sl = &g->slots[s];
	if (g->dra_replans >= MU__KD_DRA_REPLANS || g->ej < 0 || !sl->node)
		return false;
	/* only when the claims exist and fit on another node now (not while
	 * the claim controller has yet to make them, say) */
	char msg[800], *at = NULL;
	json_t *plan = NULL;
	int rc = mu__kd_dra_allocate(d, p->dra, NULL, NULL, &at, &plan, msg, sizeof msg);
	bool elsewhere = rc == MU_OK && at && strcmp(at, sl->node);
	free(at);
	json_decref(plan);
	if (!elsewhere || mu_engine_pod_unbind(d->e, g->ej, 0, s, mu__k_now_ms()) != MU_OK)
		return false;
	g->dra_replans++;
	mu__klog(&d->log, 1, "job %s/%s: slot %d on %s re-planned (%d of %d): %s | job=%s/%s pod=%s",
		 g->ns, g->name, (int)s, sl->node, (int)g->dra_replans, MU__KD_DRA_REPLANS,
		 p->dra_msg ? p->dra_msg : "", g->ns, g->name, p->key);
	snprintf(msg, sizeof msg, "%s; its Job's slot is placed again", p->dra_msg ? p->dra_msg : "");
	mu__kd_pod_pending(d, p, msg);
	free(sl->node);
	sl->node = NULL;
	memset(&sl->dev, 0, sizeof sl->dev);
	mu__kd_mark_dirty(d, g);
	return true;
}

/* Gives waiting pods of an admitted Job the free placed slots and sends
 * their binds.  A pod left without a slot is told why: all the slots are
 * taken; not while the engine job waits for its first placement (an
 * admitted copy from a hub, say, whose pods arrive before the next cycle),
 * as kube-scheduler writes PodScheduled False only after an attempt
 * failed: a cycle that cannot place it says the engine's reason
 * (apply.c, apply_pending).  O(pods + slots). */
static void fill_slots(mu__kd_t *d, mu__kgroup_t *g)
{
	int32_t s = 0;
	int unplaced = -1; /* slots_unplaced, when first needed */
	for (int32_t i = 0; i < g->npods; i++) {
		mu__kpod_t *p = g->pods[i];
		if (p->slot >= 0 || p->node || p->an_node || p->terminal || p->deleting || p->gated)
			continue;
		while (s < g->nslots && (g->slots[s].pod || !g->slots[s].node))
			s++;
		if (s == g->nslots) {
			if (unplaced < 0)
				unplaced = slots_unplaced(d, g);
			if (!unplaced)
				mu__kd_pod_pending(d, p, "waiting for a slot of its Job: the Job runs all the pods it was admitted for");
			else if (g->msg) /* a cycle said why already */
				mu__kd_pod_pending(d, p, g->msg);
			continue;
		}
		if (p->dra && !mu__kd_dra_bind(d, p, g->slots[s].node)) {
			/* its claims cannot be allocated on the slot's node (dra.c):
			 * never bound with an unallocated claim; the slot is placed
			 * again by the engine (a bounded number of times), else the
			 * pod waits with the allocator's reason, as a single pod
			 * does, and the slot stays free for the next pod */
			if (!replan_slot(d, g, s, p))
				mu__kd_pod_pending(d, p, p->dra_msg);
			continue;
		}
		if (p->dra)
			g->dra_replans = 0; /* its claims fit: progress */
		g->slots[s].pod = p;
		p->slot = s;
		mu__kd_bind_or_hold(d, p, g->slots[s].node, &g->slots[s].dev);
	}
}

/* Releases slots whose pods ended; records pods bound before we knew
 * (after a restart) in free slots, replaying them into the engine job.
 * O(pods x slots) in the worst case, O(pods + slots) usually. */
static void track_pods(mu__kd_t *d, mu__kgroup_t *g, mu_time_t now)
{
	for (int32_t i = 0; i < g->npods; i++) {
		mu__kpod_t *p = g->pods[i];
		if (p->slot >= 0 && (p->terminal || p->deleting)) {
			g->slots[p->slot].pod = NULL;
			p->slot = -1;
		}
	}
	for (int32_t i = 0; i < g->npods; i++) {
		mu__kpod_t *p = g->pods[i];
		const char *node = p->node ? p->node : p->an_node;
		if (p->slot >= 0 || !node || p->terminal || p->deleting)
			continue;
		int32_t s = 0; /* a free slot on its node, else any unplaced one */
		while (s < g->nslots && (g->slots[s].pod || !g->slots[s].node ||
					 strcmp(g->slots[s].node, node)))
			s++;
		if (s == g->nslots) {
			for (s = 0; s < g->nslots && (g->slots[s].pod || g->slots[s].node); s++)
				;
			if (s == g->nslots)
				continue; /* more pods than planned: not muster's to hold */
			mu_id_t nid = mu_engine_node_find(d->e, node);
			if (nid < 0 || mu__kd_pod_bound(d, g->ej, 0, s, nid, p, now))
				continue;
			g->slots[s].node = strdup(node);
			mu__kdev_give(&p->dev, &g->slots[s].dev);
		}
		g->slots[s].pod = p;
		p->slot = s;
	}
}

/* A copy of job whose pod template asks for the counted devices its
 * template claims take (dra.c, mu__kd_dra_counted), so that the engine
 * plans its slots only on nodes with such devices, as a single pod with
 * claims is steered; NULL (a new reference otherwise) when its template
 * names no claims: one test on the fast path.  O(template). */
static json_t *job_dra_counted(mu__kd_t *d, const json_t *job)
{
	json_t *spec = (json_t *)mu__kj(job, "spec.template.spec");
	if (!json_array_size(json_object_get(spec, "resourceClaims")))
		return NULL;
	const char *ns = mu__kjs(job, "metadata.namespace");
	json_t *pod = json_pack("{s:{s:s},s:O}", "metadata", "namespace", ns ? ns : "default", "spec", spec);
	json_t *c = pod ? mu__kd_dra_counted(d, pod) : NULL, *out = c ? json_deep_copy(job) : NULL;
	json_t *tpl = out ? (json_t *)mu__kj(out, "spec.template") : NULL;
	if (json_is_object(tpl))
		json_object_set(tpl, "spec", json_object_get(c, "spec"));
	json_decref(pod);
	json_decref(c);
	return out;
}

/* Submits the Job's engine job (pending, or admitted with pods to
 * replay). */
static void job_submit(mu__kd_t *d, mu__kgroup_t *g, int32_t n, mu_time_t now)
{
	mu_specs_t s;
	char msg[512], name[1100];
	mu_specs_init(&s);
	json_t *counted = job_dra_counted(d, g->job);
	int rc = mu__kjob_spec(counted ? counted : g->job, &s, msg, sizeof msg);
	json_decref(counted);
	if (rc == MU_OK) {
		mu_job_spec_t j = s.jobs[0];
		j.podsets[0].replicas = n;
		if (j.min_member > n)
			j.min_member = n;
		mu__kd_ej_name(d, g, name, sizeof name);
		j.name = name;
		j.duration = 0;
		j.no_move = true; /* slots are planned per Job, not moved (move.c) */
		const char *t = mu__kjs(g->job, "metadata.creationTimestamp");
		if (!t || mu__rfc3339_parse(t, &j.submit))
			j.submit = now;
		mu_id_t ej;
		if (mu_engine_queue_find(d->e, j.queue) < 0) {
			snprintf(msg, sizeof msg, "queue %s does not exist", j.queue);
			rc = MU_ENOENT;
		} else if ((rc = mu_engine_job_submit(d->e, &j, now, &ej)) == MU_OK &&
			   (rc = mu__kd_set_ej(d, g, ej)) == MU_OK) {
			mu__kd_hz_seen(d, g, &j);
			g->slots = calloc((size_t)n, sizeof *g->slots);
			g->nslots = g->slots ? n : 0;
			g->replicas = n;
			g->spec_gen = mu__kji(g->job, "metadata.generation", 0);
		} else {
			snprintf(msg, sizeof msg, "%s", mu_strerror(rc));
		}
	}
	mu_specs_release(&s);
	if (rc && (!g->msg || strcmp(g->msg, msg))) {
		free(g->msg);
		g->msg = strdup(msg);
		mu__kd_event_write(d, "Job", "batch/v1", g->ns, g->name, mu__kjs(g->job, "metadata.uid"),
				   "Warning", "FailedScheduling", msg);
	}
}

/* The Job admission state machine of the file comment, one step per
 * change.  O(pods + slots), plus the loader once per (re)submission. */
void mu__kd_job_sync(mu__kd_t *d, mu__kgroup_t *g, mu_time_t now)
{
	json_t *job = g->job;
	if (!job || !g->admission) {
		for (int32_t i = 0; i < g->npods; i++)
			if (!g->pods[i]->node)
				mu__kd_pod_pending(d, g->pods[i], "waiting for its Job to be seen");
		if (!g->admission) {
			mu__kd_finish(d, g, now, false);
			clear_slots(g);
			g->admitted = false;
		}
		return;
	}
	bool suspend = json_is_true(mu__kj(job, "spec.suspend"));
	const char *ann = mu__kmap(job, "metadata.annotations", "muster.io/admitted");
	bool marked = ann && !strcmp(ann, "true");
	int32_t n = job_pods(job);
	if (job_done(job) || n <= 0) {
		mu__kd_finish(d, g, now, true);
		clear_slots(g);
		return;
	}
	if (!suspend && !marked && !g->admitted) {
		if (mu__kji(job, "status.active", 0) == 0 && g->npods == 0) {
			patch_suspend(d, g, true); /* the defaulting step */
			mu__klog(&d->log, 1, "job %s/%s suspended until admitted | job=%s/%s",
				 g->ns, g->name, g->ns, g->name);
			return;
		}
		g->admitted = true; /* adopted: it already runs */
	}
	if (suspend && g->admitted) { /* paused by someone: wait again */
		g->admitted = false;
		mu__kd_finish(d, g, now, false);
		clear_slots(g);
	}
	if (!suspend)
		g->admitted = true;
	if (g->ej >= 0 && (g->replicas != n || g->spec_gen != mu__kji(job, "metadata.generation", 0)) &&
	    !g->admitted) {
		mu__kd_finish(d, g, now, false); /* re-plan a waiting Job */
		clear_slots(g);
	}
	if (g->ej < 0)
		job_submit(d, g, n, now);
	if (g->ej >= 0 && g->admitted) {
		track_pods(d, g, now);
		fill_slots(d, g);
	}
}

void mu__kd_job_bind(mu__kd_t *d, mu__kgroup_t *g, const mu_decision_t *dec)
{
	if (dec->pod < 0 || dec->pod >= g->nslots)
		return;
	mu__kslot_t *s = &g->slots[dec->pod];
	free(s->node);
	s->node = strdup(mu_engine_node_name(d->e, dec->node));
	s->dev = *dec;
}

void mu__kd_job_evict(mu__kd_t *d, mu__kgroup_t *g, const mu_decision_t *dec)
{
	if (dec->suspend) {
		if (g->admitted) {
			patch_suspend(d, g, true);
			char msg[256];
			snprintf(msg, sizeof msg, "suspended by muster to make room for a job of higher priority "
				 "or a queue below its fair share");
			mu__kd_event_write(d, "Job", "batch/v1", g->ns, g->name, mu__kjs(g->job, "metadata.uid"),
					   "Normal", "Preempted", msg);
			pthread_mutex_lock(&d->m.mu);
			d->m.suspensions++;
			pthread_mutex_unlock(&d->m.mu);
		}
		g->admitted = false;
		clear_slots(g);
		g->slots = calloc((size_t)g->replicas, sizeof *g->slots);
		g->nslots = g->slots ? g->replicas : 0;
		return;
	}
	/* the surplus pod of an elastic Job: evict the pod in that slot */
	if (dec->pod < 0 || dec->pod >= g->nslots)
		return;
	mu__kslot_t *s = &g->slots[dec->pod];
	if (s->pod && !s->pod->evicting) {
		char path[1200];
		mu__kpod_t *p = s->pod;
		snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/eviction", p->ns, p->name);
		json_t *body = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "policy/v1", "kind", "Eviction",
					 "metadata", "name", p->name, "namespace", p->ns);
		mu__kd_write(d, MU__KW_EVICT, "POST", path, "application/json", body, p->key, NULL);
		json_decref(body);
		p->evicting = true;
		p->slot = -1;
	}
	free(s->node);
	s->node = NULL;
	s->pod = NULL;
}

void mu__kd_job_after_cycle(mu__kd_t *d, mu__kgroup_t *g)
{
	if (g->ej < 0)
		return;
	mu_job_info_t ji;
	if (mu_engine_job_info(d->e, g->ej, &ji) || ji.state != MU_JOB_RUNNING)
		return;
	if (!g->admitted) {
		patch_suspend(d, g, false);
		g->admitted = true;
		free(g->msg);
		g->msg = NULL;
		char msg[256];
		snprintf(msg, sizeof msg, "admitted by muster to queue %s: %d pods planned", ji.queue, (int)ji.bound);
		mu__kd_event_write(d, "Job", "batch/v1", g->ns, g->name, mu__kjs(g->job, "metadata.uid"),
				   "Normal", "Admitted", msg);
		mu__klog(&d->log, 1, "job %s/%s admitted | job=%s/%s queue=%s pods=%d", g->ns, g->name,
			 g->ns, g->name, ji.queue, (int)ji.bound);
		pthread_mutex_lock(&d->m.mu);
		d->m.admissions++;
		pthread_mutex_unlock(&d->m.mu);
	}
	fill_slots(d, g);
}

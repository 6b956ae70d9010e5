/*
 * wl.c - the workload objects (JobSet, LeaderWorkerSet, PyTorchJob,
 * MPIJob, RayCluster, Volcano and KAI PodGroups) in the daemon's view.
 *
 * Each watched object is kept ("KIND:ns/name" -> a private copy) so that a
 * group made later finds it; when it changes, every group that belongs to
 * it takes what it says (kinds.c, mu__kw_read): its minimum and parts'
 * minimums, its queue.  Until its object is seen, a workload's group waits
 * ("not found", as a gang waits for its PodGroup).  O(groups) per object
 * event; nothing per cycle.
 *
 * Suspend until admitted, as Kueue does it: a JobSet, PyTorchJob, MPIJob or
 * RayJob created suspended that names a queue (its label muster.io/queue or
 * kueue.x-k8s.io/queue-name, or the Kubeflow queue field) has no pods
 * yet, so its group is made from the object: an engine job of its pod
 * templates (each part's template, replicas x parallelism pods), a gang of
 * its minimum.  While it does not fit, the object stays suspended and gets
 * a FailedScheduling event with the engine's reason; once the cycle places
 * it, muster lifts the suspension (a merge patch) with an Admitted event,
 * and the placed job keeps holding its room until the controller has made
 * minMember pods; then the pods are scheduled as any gang's.  A RayJob's
 * pods are those of the RayCluster it controls (the RayCluster's owner
 * reference): they join the RayJob's group, its head and each worker
 * group's minReplicas (x numOfHosts) being the gang.  In K8sJobMode the
 * pod of its submitter Job (named as the RayJob, made by KubeRay once the
 * cluster is ready) joins the group too, as its part "submitter" of
 * minimum 0, and the admission counts it (its submitterPodTemplate, or
 * KubeRay's default), as Kueue's pod sets do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/daemon_int.h"

/* Keeps the place of one template pod as a slot (dev.podset says its
 * part's pod set).  O(1) amortized. */
static void slot_add(mu__kgroup_t *g, const char *node, const mu_decision_t *dec)
{
	mu__kslot_t *nv = realloc(g->slots, ((size_t)g->nslots + 1) * sizeof *nv);
	if (!nv)
		return; /* that pod is placed by the cycle instead */
	g->slots = nv;
	mu__kslot_t *s = &g->slots[g->nslots];
	memset(s, 0, sizeof *s);
	if (!(s->node = strdup(node)))
		return;
	s->dev = *dec;
	g->nslots++;
}

/* Drops g's slots. */
static void slots_clear(mu__kgroup_t *g)
{
	for (int32_t i = 0; i < g->nslots; i++)
		free(g->slots[i].node);
	free(g->slots);
	g->slots = NULL;
	g->nslots = 0;
}

/* Hands the template's places to g's pods: each unbound pod of a part
 * takes a slot of that part's pod set (part order as in the object,
 * skipping parts of no pods) and is bound there, so the room held since
 * admission goes to the pods without a cycle in between.  O(pods x
 * slots). */
static mu__kshape_t *tmpl_shape(mu__kd_t *d, const mu__kgroup_t *g, const mu__kwtmpl_t *t);

/* A RayJob's submitter slot that no pod took (KubeRay makes the submitter
 * Job only once the cluster runs): kept as a held place for the pod of
 * its Job (move.c), as a moved pod's place is kept for its replacement.
 * O(places). */
static void submitter_keep(mu__kd_t *d, mu__kgroup_t *g, const mu__kwtmpl_t *t, const mu__kslot_t *s)
{
	char ctrl[600];
	mu__kshape_t *shape = tmpl_shape(d, g, t);
	snprintf(ctrl, sizeof ctrl, "Job/%s", g->name);
	if (shape && mu__kshape_job(shape))
		mu__kd_move_reserve(d, g->ns, ctrl, mu__kd_queue_of(d, g), s->node, &s->dev, shape);
	if (shape)
		mu__kshape_put(&d->shapes, shape);
}

static void slots_take(mu__kd_t *d, mu__kgroup_t *g, const json_t *obj, mu__wlkind_t k)
{
	mu__kwtmpl_t t[MU__WL_MAX_PARTS];
	int n = mu__kw_templates(obj, k, t, MU__WL_MAX_PARTS), ps = 0;
	for (int i = 0; i < n; i++) {
		if (t[i].count == 0)
			continue;
		for (int32_t m = 0; m < g->npods; m++) {
			mu__kpod_t *p = g->pods[m];
			if (!p->ours || p->node || p->an_node || p->terminal || p->deleting || !p->wl_part ||
			    strcasecmp(p->wl_part, t[i].part))
				continue;
			for (int32_t s = 0; s < g->nslots; s++)
				if (g->slots[s].node && g->slots[s].dev.podset == ps) {
					mu__kd_bind_or_hold(d, p, g->slots[s].node, &g->slots[s].dev);
					free(g->slots[s].node);
					g->slots[s].node = NULL;
					break;
				}
		}
		for (int32_t s = 0; k == MU__WL_RAYJOB && !strcmp(t[i].part, "submitter") && s < g->nslots; s++)
			if (g->slots[s].node && g->slots[s].dev.podset == ps)
				submitter_keep(d, g, &t[i], &g->slots[s]);
		ps++;
	}
	slots_clear(g);
}

static void wl_patch(mu__kd_t *d, const mu__kgroup_t *g, mu__wlkind_t k, json_t *body);

/* Gives g what obj (kind k) says; an object that cannot be read leaves g
 * waiting, with the reason logged. */
static void wl_apply(mu__kd_t *d, mu__kgroup_t *g, mu__wlkind_t k, const json_t *obj)
{
	mu__kwinfo_t w;
	if (!obj || mu__kw_read(obj, k, &w) != MU_OK) {
		if (obj)
			mu__klog(&d->log, 0, "%s %s: cannot read its parts | group=%s", mu__kw_kind(k),
				 g->wl_key, g->key);
		g->has_pg = false;
		free(g->wl);
		g->wl = NULL;
		mu__kd_mark_dirty(d, g);
		return;
	}
	if (!g->wl && !(g->wl = malloc(sizeof *g->wl)))
		return;
	*g->wl = w;
	g->has_pg = true;
	g->min_member = w.min_member;
	free(g->pg_queue);
	g->pg_queue = w.queue[0] ? strdup(w.queue) : NULL;
	mu__kd_mark_dirty(d, g);
}

/* The kind of a workload key "KIND:...". */
static int key_kind(const char *key)
{
	for (int k = 0; k < MU__WL_COUNT; k++) {
		size_t n = strlen(mu__kw_kind((mu__wlkind_t)k));
		if (!strncmp(key, mu__kw_kind((mu__wlkind_t)k), n) && key[n] == ':')
			return k;
	}
	return -1;
}

void mu__kd_wl_attach(mu__kd_t *d, mu__kgroup_t *g)
{
	int k = g->wl_key ? key_kind(g->wl_key) : -1;
	const json_t *obj = k >= 0 ? mu__kmap_get(&d->wls, g->wl_key) : NULL;
	if (obj)
		wl_apply(d, g, (mu__wlkind_t)k, obj);
}

typedef struct wscan {
	mu__kd_t *d;
	const char *key;
	mu__wlkind_t kind;
	const json_t *obj;
} wscan_t;

static void group_take(void *arg, void *val)
{
	wscan_t *s = arg;
	mu__kgroup_t *g = val;
	if (g->wl_key && !strcmp(g->wl_key, s->key))
		wl_apply(s->d, g, s->kind, s->obj);
}

/* An admitted object that its user suspended again (seen running
 * before): its admission is dropped, the room still held for its pods
 * given back, and it is queued again at once (the caller's wl_susp) once
 * its controller has removed its pods.  O(1) but for the event. */
static void user_suspended(mu__kd_t *d, mu__kgroup_t *g, mu__wlkind_t k, const json_t *obj)
{
	const char *msg = "suspended by its user after muster admitted it: the admission is dropped "
			  "and it is queued again";
	if (g->wl_hold) {
		mu__kd_finish(d, g, mu__k_now_ms(), false);
		slots_clear(g);
		g->wl_hold = false;
	}
	g->wl_admitted = g->wl_running = g->wl_restore = false;
	free(g->msg);
	g->msg = NULL;
	if (mu__kmap(obj, "metadata.annotations", "muster.io/held-places"))
		wl_patch(d, g, k, json_pack("{s:{s:{s:n}}}", "metadata", "annotations", "muster.io/held-places"));
	mu__kd_event_write(d, mu__kw_kind(k), mu__kjs(obj, "apiVersion"), g->ns, g->name,
			   mu__kjs(obj, "metadata.uid"), "Normal", "Requeued", msg);
	mu__klog(&d->log, 1, "%s %s | group=%s", g->wl_key, msg, g->key);
}

/* An object of g made inactive by its user (muster.io/active: "false"),
 * as Kueue's Workload spec.active false: one that runs (admitted, or
 * unsuspended) is suspended again and its pods evicted, with the Evicted
 * condition of reason InactiveWorkload; one that waits leaves its queue
 * (its template job, if placed, gives its room back).  Either way it is
 * not admitted until it is active again.  O(pods). */
static void inactive_note(mu__kd_t *d, mu__kgroup_t *g, mu__wlkind_t k, const json_t *obj)
{
	if (g->wl_hold || (g->ej >= 0 && g->wl_susp)) {
		mu__kd_finish(d, g, mu__k_now_ms(), false);
		slots_clear(g);
		g->wl_hold = false;
	}
	if (g->wl_admitted || !mu__kw_suspended(obj, k)) {
		g->wl_admitted = true; /* it runs: muster suspends it */
		mu__kd_wl_resuspend(d, g, "InactiveWorkload", "The workload is deactivated "
				    "(muster.io/active: \"false\"); it is not admitted again until it is active");
	} else if (!g->wl_inactive) {
		mu__kd_event_write(d, mu__kw_kind(k), mu__kjs(obj, "apiVersion"), g->ns, g->name,
				   mu__kjs(obj, "metadata.uid"), "Normal", "Inactive",
				   "inactive (muster.io/active: \"false\"): not queued until it is active");
	}
	if (!g->wl_inactive)
		mu__klog(&d->log, 1, "%s is inactive: not queued until it is active | group=%s", g->wl_key, g->key);
	g->wl_inactive = true;
}

/* Whether obj is inactive: its annotation muster.io/active is "false". */
static bool inactive(const json_t *obj)
{
	const char *v = obj ? mu__kmap(obj, "metadata.annotations", "muster.io/active") : NULL;
	return v && !strcmp(v, "false");
}

/* A suspendable object: its group made (or told) whether muster is to
 * admit it.  Deleted: a template job holding room goes.  O(1). */
static void wl_suspend_note(mu__kd_t *d, mu__wlkind_t k, const char *key, const char *ns,
			    const char *name, const json_t *obj)
{
	char gkey[700];
	mu__kwinfo_t w;
	snprintf(gkey, sizeof gkey, "w:%s/%s/%s", ns, mu__kw_kind(k), name);
	bool named = obj && mu__kw_read(obj, k, &w) == MU_OK && w.queue[0];
	bool off = named && inactive(obj);
	bool want = named && !off && mu__kw_suspended(obj, k);
	/* admitted by muster before it restarted, its pods not all made yet */
	bool held = named && !want && !mu__kw_suspended(obj, k) &&
		    mu__kmap(obj, "metadata.annotations", "muster.io/held-places");
	mu__kgroup_t *g = mu__kmap_get(&d->groups, gkey);
	if (!g && (want || held || (off && !mu__kw_suspended(obj, k)))) {
		if (!(g = mu__kd_group(d, gkey, MU__KG_GANG, ns, name)))
			return;
		if (held) {
			g->wl_admitted = g->wl_restore = g->wl_hold = true;
		}
	}
	if (!g)
		return;
	if (!g->wl_key)
		g->wl_key = strdup(key);
	if (off) {
		inactive_note(d, g, k, obj);
	} else if (g->wl_inactive && obj) {
		g->wl_inactive = false;
		mu__kd_event_write(d, mu__kw_kind(k), mu__kjs(obj, "apiVersion"), g->ns, g->name,
				   mu__kjs(obj, "metadata.uid"), "Normal", "Reactivated",
				   "The workload was reactivated: queued again");
		mu__klog(&d->log, 1, "%s is active again: queued | group=%s", g->wl_key, g->key);
	}
	/* (inactive: suspended by muster above, or waiting; not its user's) */
	if (!off && obj && g->wl_admitted && !mu__kw_suspended(obj, k))
		g->wl_running = true;
	else if (!off && obj && g->wl_admitted && g->wl_running)
		user_suspended(d, g, k, obj);
	g->wl_susp = want && !g->wl_admitted;
	if (!obj && g->wl_hold) {
		mu__kd_finish(d, g, mu__k_now_ms(), false);
		slots_clear(g);
		g->wl_hold = false;
	}
	mu__kd_mark_dirty(d, g);
}

void mu__kd_wl_event(mu__kd_t *d, mu__wlkind_t k, json_t *obj, bool deleted)
{
	const char *ns = mu__kjs(obj, "metadata.namespace"), *name = mu__kjs(obj, "metadata.name");
	char key[600];
	if (!name)
		return;
	snprintf(key, sizeof key, "%s:%s/%s", mu__kw_kind(k), ns ? ns : "default", name);
	json_decref(mu__kmap_del(&d->wls, key));
	json_t *mine = NULL;
	if (!deleted) {
		/* the map's key lives in the value: a private copy holds it */
		mine = json_deep_copy(obj);
		if (!mine || json_object_set_new(mine, "__key", json_string(key)) ||
		    mu__kmap_put(&d->wls, json_string_value(json_object_get(mine, "__key")), mine)) {
			json_decref(mine);
			mine = NULL;
		}
	}
	if (mu__kw_suspendable(k))
		wl_suspend_note(d, k, key, ns ? ns : "default", name, mine);
	if (k == MU__WL_RAY && mine)
		mu__kd_regroup_wl(d, key); /* its pods may be a RayJob's */
	if (k == MU__WL_RAYJOB)
		mu__kd_regroup_submitter(d, ns ? ns : "default", name); /* its submitter Job's pod */
	wscan_t s = {d, key, k, mine};
	mu__kmap_each(&d->groups, group_take, &s);
	d->changed = true;
}

/* What kube-apiserver's Priority admission plugin gives a pod made from
 * spec (a copy the caller owns) that has no spec.priority: its
 * priorityClassName's value and preemptionPolicy, or the globalDefault
 * class's when it names none (the lowest-valued of several, as kube picks
 * it).  A class muster has not seen leaves spec as it is (kube would refuse
 * the pod; its controller says so).  O(classes). */
static void tmpl_priority(const mu__kd_t *d, json_t *spec)
{
	if (!json_is_object(spec) || json_is_integer(json_object_get(spec, "priority")))
		return;
	const char *name = mu__kjs(spec, "priorityClassName");
	json_t *pc = name ? json_object_get(d->pclasses, name) : NULL;
	if (!name) {
		const char *k;
		json_t *c;
		json_object_foreach(d->pclasses, k, c)
			if (json_is_true(json_object_get(c, "globalDefault")) &&
			    (!pc || json_integer_value(json_object_get(c, "value")) <
				    json_integer_value(json_object_get(pc, "value"))))
				pc = c;
	}
	json_t *v = json_object_get(pc, "value");
	if (!json_is_integer(v))
		return;
	json_object_set(spec, "priority", v);
	json_t *pp = json_object_get(pc, "preemptionPolicy");
	if (json_is_string(pp) && !json_object_get(spec, "preemptionPolicy"))
		json_object_set(spec, "preemptionPolicy", pp);
}

/* The shape of a pod of template t (a reference), NULL when out of
 * memory.  The pod gets the priority admission would give it
 * (tmpl_priority).  O(template + classes). */
static mu__kshape_t *tmpl_shape(mu__kd_t *d, const mu__kgroup_t *g, const mu__kwtmpl_t *t)
{
	json_t *md = json_object_get(t->tmpl, "metadata");
	json_t *dspec = t->submitter_default ? mu__kw_submitter_spec() :
			json_deep_copy(json_object_get(t->tmpl, "spec"));
	tmpl_priority(d, dspec);
	json_t *pod = json_pack("{s:s,s:s,s:{s:s,s:s,s:O?,s:O?},s:O?}", "apiVersion", "v1", "kind", "Pod",
				"metadata", "name", g->name, "namespace", g->ns,
				"labels", json_object_get(md, "labels"),
				"annotations", json_object_get(md, "annotations"),
				"spec", dspec);
	json_decref(dspec);
	mu__kshape_t *s = pod ? mu__kshape_get(&d->shapes, pod, false) : NULL;
	json_decref(pod);
	return s;
}

/* Submits g's engine job made of its object's pod templates: one pod set
 * per part (its template's shape, its count of pods, all needed), a gang
 * of the object's minimum.  The job has no pods in the view: its binds
 * only hold room.  O(parts). */
static int submit_templates(mu__kd_t *d, mu__kgroup_t *g, const json_t *obj, mu__wlkind_t k,
			    mu_time_t now, char *msg, size_t len)
{
	mu__kwtmpl_t t[MU__WL_MAX_PARTS];
	mu_podset_spec_t sets[MU__WL_MAX_PARTS];
	mu__kshape_t *shapes[MU__WL_MAX_PARTS];
	char names[MU__WL_MAX_PARTS][16], jname[1100];
	int n = mu__kw_templates(obj, k, t, MU__WL_MAX_PARTS), ns = 0, rc = MU_OK;
	int32_t sum = 0;
	if (n <= 0) {
		snprintf(msg, len, "%s: its parts' pod templates cannot be read", g->wl_key);
		return n < 0 ? n : MU_EINVAL;
	}
	for (int i = 0; i < n && rc == MU_OK; i++) {
		if (t[i].count == 0)
			continue;
		shapes[ns] = tmpl_shape(d, g, &t[i]);
		if (!shapes[ns]) {
			rc = MU_ENOMEM;
			break;
		}
		ns++;
		if (shapes[ns - 1]->err) {
			snprintf(msg, len, "%s: the pod template of %s: %s", g->wl_key, t[i].part,
				 shapes[ns - 1]->msg ? shapes[ns - 1]->msg : "cannot be read");
			rc = shapes[ns - 1]->err;
			break;
		}
		sets[ns - 1] = mu__kshape_job(shapes[ns - 1])->podsets[0];
		sets[ns - 1].replicas = (int32_t)t[i].count;
		sets[ns - 1].min_member = (int32_t)t[i].count;
		snprintf(names[ns - 1], sizeof names[0], "ps%d", ns - 1);
		sets[ns - 1].name = names[ns - 1];
		sum += (int32_t)t[i].count;
	}
	if (rc == MU_OK && ns == 0) {
		snprintf(msg, len, "%s has no pods to make", g->wl_key);
		rc = MU_EINVAL;
	}
	mu_id_t ej = -1;
	if (rc == MU_OK) {
		mu_job_spec_t j = *mu__kshape_job(shapes[0]);
		mu__kd_ej_name(d, g, jname, sizeof jname);
		j.name = jname;
		j.queue = mu__kd_queue_of(d, g);
		j.namespace = g->ns;
		j.podsets = sets;
		j.npodsets = (size_t)ns;
		j.min_member = g->min_member > sum ? g->min_member : sum;
		if (j.min_member > sum)
			j.min_member = sum;
		j.submit = now;
		j.duration = 0;
		j.no_move = true;
		if (mu_engine_queue_find(d->e, j.queue) < 0) {
			snprintf(msg, len, "queue %s does not exist", j.queue);
			rc = MU_ENOENT;
		} else if ((rc = mu_engine_job_submit(d->e, &j, now, &ej)) == MU_OK &&
			   (rc = mu__kd_set_ej(d, g, ej)) == MU_OK) {
			mu__kd_hz_seen(d, g, &j);
			g->nepods = g->nps = 0; /* no pods: binds hold room */
		} else {
			snprintf(msg, len, "muster cannot schedule it: %s", mu_strerror(rc));
		}
	}
	for (int i = 0; i < ns; i++)
		mu__kshape_put(&d->shapes, shapes[i]);
	return rc;
}

static void wl_restore(mu__kd_t *d, mu__kgroup_t *g, const json_t *obj, mu__wlkind_t k, mu_time_t now);

bool mu__kd_wl_sync(mu__kd_t *d, mu__kgroup_t *g, mu_time_t now)
{
	int k = g->wl_key ? key_kind(g->wl_key) : -1;
	const json_t *obj = k >= 0 ? mu__kmap_get(&d->wls, g->wl_key) : NULL;
	if (g->wl_susp) {
		char msg[700];
		if (g->ej >= 0 && !g->wl_hold)
			mu__kd_finish(d, g, now, false); /* its pods' job: its templates wait instead */
		if (g->ej >= 0 || !obj)
			return true; /* submitted: the cycle decides */
		if (!mu__kw_suspended(obj, (mu__wlkind_t)k))
			return true; /* suspended again: queued once the API shows it so... */
		for (int32_t i = 0; i < g->npods; i++)
			if (g->pods[i]->ours && !g->pods[i]->terminal)
				return true; /* ... and its controller removed its pods */
		if (submit_templates(d, g, obj, (mu__wlkind_t)k, now, msg, sizeof msg) != MU_OK)
			mu__kd_wl_pending(d, g, msg);
		else
			g->wl_hold = true;
		return true;
	}
	int32_t pods = 0; /* admitted: hold the room until its pods exist */
	for (int32_t i = 0; i < g->npods; i++)
		pods += g->pods[i]->ours && !g->pods[i]->terminal && !g->pods[i]->deleting;
	if (g->wl_restore && obj && g->ej < 0 && pods < g->min_member)
		wl_restore(d, g, obj, (mu__wlkind_t)k, now); /* after a restart */
	g->wl_restore = false;
	if (g->ej >= 0 && pods < g->min_member && obj)
		return true;
	mu__kd_finish(d, g, now, false); /* the room goes to the pods at once */
	if (obj)
		slots_take(d, g, obj, (mu__wlkind_t)k);
	slots_clear(g);
	g->wl_hold = false;
	if (obj && mu__kmap(obj, "metadata.annotations", "muster.io/held-places")) /* done with */
		wl_patch(d, g, (mu__wlkind_t)k,
			 json_pack("{s:{s:{s:n}}}", "metadata", "annotations", "muster.io/held-places"));
	return false;
}

void mu__kd_wl_admit(mu__kd_t *d, mu__kgroup_t *g, const mu_decision_t *dec)
{
	int k = g->wl_key ? key_kind(g->wl_key) : -1;
	const json_t *obj = k >= 0 ? mu__kmap_get(&d->wls, g->wl_key) : NULL;
	const char *node = mu_engine_node_name(d->e, dec->node);
	(void)obj;
	if (node)
		slot_add(g, node, dec);
}

/* The places of g's slots as the annotation's value: a JSON array of
 * {"ps": part index, "node": name, "dev": device annotations}; owned, or
 * NULL on out of memory. */
static char *places_json(const mu__kgroup_t *g)
{
	json_t *a = json_array();
	for (int32_t i = 0; a && i < g->nslots; i++)
		if (g->slots[i].node)
			json_array_append_new(a, json_pack("{s:i,s:s,s:o}", "ps", (int)g->slots[i].dev.podset,
							   "node", g->slots[i].node,
							   "dev", mu__kdev_annotations(&g->slots[i].dev)));
	char *s = a ? json_dumps(a, JSON_COMPACT) : NULL;
	json_decref(a);
	return s;
}

/* Patches g's object at its collection path with body (taken). */
static void wl_patch(mu__kd_t *d, const mu__kgroup_t *g, mu__wlkind_t k, json_t *body)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/namespaces/%s/%s/%s", mu__kw_collection(k), g->ns,
		 mu__kw_plural(k), g->name);
	if (body)
		mu__kd_write(d, MU__KW_WRITE, "PATCH", path, "application/merge-patch+json", body, NULL, NULL);
	json_decref(body);
}

void mu__kd_wl_admitted(mu__kd_t *d, mu__kgroup_t *g)
{
	int k = g->wl_key ? key_kind(g->wl_key) : -1;
	const json_t *obj = k >= 0 ? mu__kmap_get(&d->wls, g->wl_key) : NULL;
	if (g->wl_admitted || !obj)
		return;
	char msg[300], *places = places_json(g);
	json_t *body = json_loads(mu__kw_unsuspend_patch((mu__wlkind_t)k), 0, NULL);
	if (body && places) /* out of memory: unsuspended all the same, not kept over a restart */
		json_object_set_new(body, "metadata",
				    json_pack("{s:{s:s}}", "annotations", "muster.io/held-places", places));
	free(places);
	if (!body)
		return;
	wl_patch(d, g, (mu__wlkind_t)k, body);
	g->wl_admitted = true;
	g->wl_susp = false;
	snprintf(msg, sizeof msg, "admitted by muster: its gang of %d pods fits; unsuspended",
		 (int)g->min_member);
	mu__kd_event_write(d, mu__kw_kind((mu__wlkind_t)k), mu__kjs(obj, "apiVersion"), g->ns, g->name,
			   mu__kjs(obj, "metadata.uid"), "Normal", "Admitted", msg);
	mu__klog(&d->log, 1, "%s admitted: unsuspended | group=%s", g->wl_key, g->key);
}

/* After a restart: holds again the places obj's annotation
 * muster.io/held-places records (an engine job of its templates, each pod
 * bound where the annotation says).  A place that cannot be held (its
 * node or room went) is logged, and the pods are then placed by a cycle.
 * O(parts + places). */
static void wl_restore(mu__kd_t *d, mu__kgroup_t *g, const json_t *obj, mu__wlkind_t k, mu_time_t now)
{
	char msg[700];
	json_t *a = json_loads(mu__kmap(obj, "metadata.annotations", "muster.io/held-places"), 0, NULL);
	int32_t next[MU__WL_MAX_PARTS] = {0};
	size_t i;
	json_t *x;
	int rc = json_is_array(a) ? submit_templates(d, g, obj, k, now, msg, sizeof msg) : MU_EPARSE;
	json_array_foreach(rc == MU_OK ? a : NULL, i, x) {
		int ps = (int)json_integer_value(json_object_get(x, "ps"));
		const char *node = json_string_value(json_object_get(x, "node"));
		mu_id_t nid = node ? mu_engine_node_find(d->e, node) : -1;
		json_t *pod = json_pack("{s:{s:O?}}", "metadata", "annotations", json_object_get(x, "dev"));
		mu_decision_t dev;
		memset(&dev, 0, sizeof dev);
		mu__kdev_parse(pod, &dev);
		json_decref(pod);
		dev.podset = ps;
		if (ps < 0 || ps >= MU__WL_MAX_PARTS || nid < 0 ||
		    (rc = mu_engine_pod_bound(d->e, g->ej, ps, next[ps], nid, &dev, now)) != MU_OK) {
			snprintf(msg, sizeof msg, "a place on %s cannot be held again: %s", node ? node : "?",
				 mu_strerror(rc ? rc : MU_ENOENT));
			break;
		}
		dev.pod = next[ps]++;
		slot_add(g, node, &dev);
		rc = MU_OK;
	}
	json_decref(a);
	if (rc != MU_OK) {
		mu__klog(&d->log, 0, "%s: its held places are not held again after the restart: %s | group=%s",
			 g->wl_key, msg, g->key);
		mu__kd_finish(d, g, now, false);
		slots_clear(g);
		g->wl_hold = false;
		return;
	}
	mu__klog(&d->log, 1, "%s: %d places held again after the restart, until its pods come | group=%s",
		 g->wl_key, (int)g->nslots, g->key);
}

void mu__kd_wl_pending(mu__kd_t *d, mu__kgroup_t *g, const char *msg)
{
	int k = g->wl_key ? key_kind(g->wl_key) : -1;
	const json_t *obj = k >= 0 ? mu__kmap_get(&d->wls, g->wl_key) : NULL;
	char text[2200];
	snprintf(text, sizeof text, "suspended until muster admits it: %s", msg);
	if (!obj || (g->msg && !strcmp(g->msg, text)))
		return;
	free(g->msg);
	g->msg = strdup(text);
	mu__kd_event_write(d, mu__kw_kind((mu__wlkind_t)k), mu__kjs(obj, "apiVersion"), g->ns, g->name,
			   mu__kjs(obj, "metadata.uid"), "Warning", "FailedScheduling", text);
}

/* The merge patch that suspends a suspendable kind again. */
static const char *suspend_patch(mu__wlkind_t k)
{
	return k == MU__WL_JOBSET || k == MU__WL_RAYJOB ? "{\"spec\":{\"suspend\":true}}" :
	       "{\"spec\":{\"runPolicy\":{\"suspend\":true}}}";
}

/* The record of a re-suspension, as Kueue's Workload condition Evicted:
 * a JSON object (type, status, reason, message, lastTransitionTime) as
 * the value of the annotation muster.io/evicted; owned, NULL when out of
 * memory. */
static char *evicted_json(const char *reason, const char *msg)
{
	char ts[40];
	mu__rfc3339_format(mu__k_now_ms() * 1000, false, ts, sizeof ts);
	json_t *c = json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", "Evicted", "status", "True", "reason", reason,
			      "message", msg, "lastTransitionTime", ts);
	char *v = c ? json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(c);
	return v;
}

bool mu__kd_wl_resuspend(mu__kd_t *d, mu__kgroup_t *g, const char *reason, const char *why)
{
	int k = g->wl_key ? key_kind(g->wl_key) : -1;
	const json_t *obj = k >= 0 ? mu__kmap_get(&d->wls, g->wl_key) : NULL;
	if (!obj || !g->wl_admitted || g->wl_hold || !mu__kw_suspendable((mu__wlkind_t)k))
		return false;
	char msg[1200];
	json_t *body = json_loads(suspend_patch((mu__wlkind_t)k), 0, NULL);
	if (!body)
		return false;
	if (!strcmp(reason, "InactiveWorkload")) /* not requeued */
		snprintf(msg, sizeof msg, "suspended by muster: %s", why);
	else
		snprintf(msg, sizeof msg, "suspended again by muster and requeued: %s", why);
	char *cond = evicted_json(reason, msg); /* in the same write as the suspension */
	if (cond)
		json_object_set_new(body, "metadata",
				    json_pack("{s:{s:s}}", "annotations", "muster.io/evicted", cond));
	free(cond);
	wl_patch(d, g, (mu__wlkind_t)k, body);
	for (int32_t i = 0; i < g->npods; i++) {
		mu__kpod_t *p = g->pods[i];
		if (!p->terminal && (p->node || p->an_node) && !p->deleting && !p->evicting) {
			mu__kd_evict(d, p, "Evicted", msg);
			mu__kd_leaving_note(d, p);
		}
	}
	mu__kd_event_write(d, mu__kw_kind((mu__wlkind_t)k), mu__kjs(obj, "apiVersion"), g->ns, g->name,
			   mu__kjs(obj, "metadata.uid"), "Warning", "Evicted", msg);
	mu__klog(&d->log, 1, "%s %s | group=%s", g->wl_key, msg, g->key);
	mu__kd_finish(d, g, mu__k_now_ms(), false);
	slots_clear(g);
	g->wl_admitted = g->wl_running = false;
	g->wl_susp = true; /* its templates wait for room again */
	free(g->msg);
	g->msg = NULL;
	mu__kd_mark_dirty(d, g);
	return true;
}

static void wl_free_cb(void *arg, void *val)
{
	(void)arg;
	json_decref(val);
}

void mu__kd_wl_release(mu__kd_t *d)
{
	mu__kmap_each(&d->wls, wl_free_cb, NULL);
	mu__kmap_release(&d->wls);
}

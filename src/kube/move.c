/*
 * move.c - consolidation on Kubernetes: moving a pod is evicting it and
 * binding the pod its controller makes in its place.
 *
 * With --consolidate the engine may move pods to make room for a gang
 * (preempt.c, mu__consolidate_try): it decides an eviction and a bind of
 * the same pod on another node.  On a cluster the evicted pod is gone; its
 * controller (a Job, ReplicaSet, StatefulSet, a Kubeflow job, a
 * RayCluster) makes a new one, under a new name or the same one, with a
 * new UID.  So, as KAI-Scheduler makes sure of a re-placement before it
 * evicts, muster holds the planned place for that replacement:
 *
 *   1. apply.c sees the move's bind of a pod being evicted and calls
 *      mu__kd_move_plan(): a place is noted (controller, namespace, shape,
 *      node, devices).
 *   2. Once the moved pod's group is synced (its engine job re-submitted
 *      without it), mu__kd_move_hold() binds a placeholder engine job of
 *      the pod's shape there, not preemptible and never moved, in the
 *      pod's queue: nothing else takes the room.
 *   3. When a pod of the same controller and shape (and the same index,
 *      where the controller gives its pods one: a Job's completion index,
 *      a Kubeflow job's replica type and index, a StatefulSet's ordinal),
 *      unbound and not the moved pod itself (another UID), joins a group
 *      (or is waiting when the place is first held),
 *      mu__kd_move_claim() withdraws the placeholder and binds the pod
 *      there (held while the pods leaving that node shut down,
 *      release.c).  Only a held place is claimed: its room is known free.
 *   4. A place not claimed within --move-hold is given up.
 *
 * The places are kept over a restart or a leader change in the annotation
 * muster.io/held-places of the node they are on (a JSON array: the moved
 * pod, its UID, controller, index, queue, shape document, devices, when
 * the place was made and the wall-clock end of the hold), written on the
 * high-priority write list BEFORE the eviction: the eviction is the
 * note's follow-up (write.c), sent by the same worker only once the note
 * succeeded, so no kill can leave a pod evicted and its place unrecorded
 * (a failed note leaves the pod where it is: the place is given up,
 * mu__kd_move_forget).  The note is written again whenever a place of
 * that node goes; notes go one at a time, in order.  A scheduler that
 * first sees a node with the annotation (mu__kd_move_restore) takes its
 * places back before its first cycle, so the held room is not given to
 * another pod; a place whose replacement is already bound is given up
 * (the same index, or where the controller gives none, the same requests
 * and created after the move), and so is one whose pod is still bound
 * and not leaving NEVER_EVICTED_MS after the read (recorded, but its
 * eviction never went).
 *
 * The same holds a place admitted for a pod that comes later
 * (mu__kd_move_reserve: a RayJob's submitter Job's pod, wl.c); it has no
 * moved pod ("" as its name and UID).
 *
 * Pods without such a controller (bare pods, pods of other schedulers,
 * Job admission groups, whose slots are planned per Job) are marked
 * no_move in the engine (state.c, jobs.c), so they are never moved.  The
 * budgets (GPUs moved per GPU gained, pods and GPUs moved an hour) are the
 * engine's (mu_engine_config_t move_*).
 *
 * Everything here runs on the main loop; a place is a few strings and a
 * shape reference.  Each function is O(places), plus one pass over the
 * pods when a place is first held; places are bounded by the move budget.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"

/* One held place. */
struct mu__kmove {
	char *ns, *ctrl;        /* the moved pod's namespace and controller */
	char *victim;           /* the moved pod, "ns/name" */
	char *victim_uid;       /* ... its UID: a same-name replacement has another */
	char *index;            /* the index its controller gave it, or NULL */
	char *node;             /* where its replacement goes */
	char *queue;
	mu_decision_t dev;      /* ... on these devices */
	mu__kshape_t *shape;    /* the moved pod's shape (a reference) */
	mu_id_t ej;             /* the placeholder engine job, or -1 */
	int64_t until;          /* mono ms: given up after this */
	int64_t at;             /* wall ms: when the place was made (0: unknown) */
	bool restored;          /* read back from its node's annotation */
	int64_t restored_at;    /* ... at this mono ms */
};

#define HELD_ANN "muster.io/held-places"
/* A place read back whose pod is still bound this long after the read
 * was recorded by a scheduler that stopped before its eviction. */
#define NEVER_EVICTED_MS 5000

/* The kinds whose controllers make a new pod for an evicted one. */
static const char *const recreating[] = {
	"Job", "ReplicaSet", "StatefulSet", "PyTorchJob", "MPIJob", "TFJob",
	"XGBoostJob", "PaddleJob", "JAXJob", "RayCluster",
};

bool mu__kd_move_ctrl(const mu__kpodinfo_t *in, char *buf, size_t len)
{
	if (!in->ctrl_kind || !in->ctrl_name)
		return false;
	for (size_t i = 0; i < sizeof recreating / sizeof *recreating; i++)
		if (!strcmp(in->ctrl_kind, recreating[i])) {
			snprintf(buf, len, "%s/%s", in->ctrl_kind, in->ctrl_name);
			return true;
		}
	return false;
}

bool mu__kd_move_index(const json_t *pod, const mu__kpodinfo_t *in, char *buf, size_t len)
{
	const char *v = NULL, *t = NULL;
	if (!in->ctrl_kind)
		return false;
	if (!strcmp(in->ctrl_kind, "Job")) {
		v = mu__kmap(pod, "metadata.labels", "batch.kubernetes.io/job-completion-index");
		if (!v)
			v = mu__kmap(pod, "metadata.annotations", "batch.kubernetes.io/job-completion-index");
	} else if (!strcmp(in->ctrl_kind, "StatefulSet")) {
		v = mu__kmap(pod, "metadata.labels", "apps.kubernetes.io/pod-index");
		const char *dash = strrchr(in->name, '-');
		if (!v && dash && dash[1] && strspn(dash + 1, "0123456789") == strlen(dash + 1))
			v = dash + 1;
	} else if ((v = mu__kmap(pod, "metadata.labels", "training.kubeflow.org/replica-index"))) {
		t = mu__kmap(pod, "metadata.labels", "training.kubeflow.org/replica-type");
	}
	if (!v)
		return false;
	int n = snprintf(buf, len, "%s%s%s", t ? t : "", t ? "/" : "", v);
	return n > 0 && (size_t)n < len;
}

/* Writes the annotation of node with every place held on it (removed
 * when none is), on the list that is never dropped; `then` (taken, may be
 * NULL) is sent once it succeeded.  O(places). */
static void note(mu__kd_t *d, const char *node, mu__kwork_t *then)
{
	json_t *a = json_array();
	int64_t left_ms, mono = mu__k_mono_ms(), wall = mu__k_now_ms();
	for (int32_t i = 0; a && i < d->nmoves; i++) {
		const struct mu__kmove *m = &d->moves[i];
		if (strcmp(m->node, node))
			continue;
		left_ms = m->until - mono;
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:s?,s:s,s:s,s:o,s:I,s:I}", "pod", m->victim,
						   "uid", m->victim_uid, "ns", m->ns, "ctrl", m->ctrl,
						   "index", m->index, "queue", m->queue, "shape", m->shape->key,
						   "dev", mu__kdev_annotations(&m->dev),
						   "until", (json_int_t)(wall + left_ms), "at", (json_int_t)m->at));
	}
	char *v = a && json_array_size(a) ? json_dumps(a, JSON_COMPACT) : NULL;
	json_decref(a);
	json_t *body = json_pack("{s:{s:{s:s?}}}", "metadata", "annotations", HELD_ANN, v);
	free(v);
	char path[400];
	snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
	mu__kwork_t *w = body ? mu__kwork_new(MU__KW_NOTE, "PATCH", path, "application/merge-patch+json", body,
					       NULL, NULL) : NULL;
	json_decref(body);
	if (w)
		w->then = then;
	mu__kd_queue(d, w ? w : then); /* out of memory: the eviction goes alone */
}

/* Frees place m's strings, gives its placeholder back, and removes it
 * (the last place takes its index); with `keep` false its node's
 * annotation is written without it. */
static void drop(mu__kd_t *d, int32_t i, mu_time_t now, bool keep)
{
	struct mu__kmove *m = &d->moves[i];
	char *node = m->node;
	if (m->ej >= 0)
		mu_engine_job_withdraw(d->e, m->ej, now);
	mu__kshape_put(&d->shapes, m->shape);
	free(m->ns);
	free(m->ctrl);
	free(m->victim);
	free(m->victim_uid);
	free(m->index);
	free(m->queue);
	d->moves[i] = d->moves[--d->nmoves];
	d->changed = true;
	if (!keep)
		note(d, node, NULL);
	free(node);
}

/* A new place (strings copied, a reference to shape taken), or NULL when
 * out of memory. */
static struct mu__kmove *place_new(mu__kd_t *d, const char *ns, const char *ctrl, const char *victim,
				   const char *uid, const char *index, const char *node, const char *queue,
				   mu__kshape_t *shape)
{
	if (d->nmoves == d->moves_cap) {
		int32_t cap = d->moves_cap ? d->moves_cap * 2 : 8;
		struct mu__kmove *nv = realloc(d->moves, (size_t)cap * sizeof *nv);
		if (!nv)
			return NULL;
		d->moves = nv;
		d->moves_cap = cap;
	}
	struct mu__kmove *m = &d->moves[d->nmoves];
	memset(m, 0, sizeof *m);
	m->ns = strdup(ns);
	m->ctrl = strdup(ctrl);
	m->victim = strdup(victim);
	m->node = strdup(node);
	m->queue = strdup(queue);
	m->victim_uid = strdup(uid);
	m->index = index ? strdup(index) : NULL;
	if (!m->ns || !m->ctrl || !m->victim || !m->node || !m->queue || !m->victim_uid ||
	    (index && !m->index)) {
		free(m->ns);
		free(m->ctrl);
		free(m->victim);
		free(m->victim_uid);
		free(m->index);
		free(m->node);
		free(m->queue);
		return NULL;
	}
	m->shape = shape;
	shape->refs++;
	m->ej = -1;
	d->nmoves++;
	return m;
}

void mu__kd_move_plan(mu__kd_t *d, const mu__kpod_t *p, const char *queue, const char *node,
		      const mu_decision_t *dec, mu__kwork_t *evict)
{
	if (!p->ctrl || !p->shape || !node) {
		mu__klog(&d->log, 0, "pod %s: moved to %s but nothing recreates it; no place held | pod=%s",
			 p->key, node ? node : "?", p->key);
		mu__kd_queue(d, evict);
		return;
	}
	for (int32_t i = 0; p->uid && i < d->nmoves; i++)
		if (!strcmp(d->moves[i].victim_uid, p->uid)) { /* an older place of it (read back) */
			mu__klog(&d->log, 1, "the place on %s read back for the replacement of %s (%s) is given "
				 "up: that pod was never evicted; it is moved now | pod=%s node=%s",
				 d->moves[i].node, p->key, p->ctrl, p->key, d->moves[i].node);
			drop(d, i, mu__k_now_ms(), false);
			break;
		}
	struct mu__kmove *m = place_new(d, p->ns, p->ctrl, p->key, p->uid ? p->uid : "", p->ctrl_idx, node,
					queue, p->shape);
	if (!m) {
		mu__kd_queue(d, evict); /* the replacement is placed as any pod */
		return;
	}
	m->dev = *dec;
	m->until = mu__k_mono_ms() + d->o->move_hold_ms;
	m->at = mu__k_now_ms();
	note(d, node, evict); /* the eviction goes once the place is recorded */
	mu__klog(&d->log, 1, "pod %s: moved to %s; the place is held for the pod %s makes next "
		 "| pod=%s node=%s", p->key, node, p->ctrl, p->key, node);
}

void mu__kd_move_forget(mu__kd_t *d, const mu__kpod_t *p, mu_time_t now)
{
	for (int32_t i = 0; p->uid && i < d->nmoves; i++)
		if (!strcmp(d->moves[i].victim_uid, p->uid)) {
			mu__klog(&d->log, 0, "pod %s: not moved (its eviction failed); the place on %s held "
				 "for its replacement is given up | pod=%s node=%s", p->key, d->moves[i].node,
				 p->key, d->moves[i].node);
			drop(d, i, now, false);
			return;
		}
}

void mu__kd_move_reserve(mu__kd_t *d, const char *ns, const char *ctrl, const char *queue,
			 const char *node, const mu_decision_t *dec, mu__kshape_t *shape)
{
	struct mu__kmove *m = place_new(d, ns, ctrl, "", "", NULL, node, queue, shape);
	if (!m)
		return; /* its pod is placed as any pod */
	m->dev = *dec;
	m->until = mu__k_mono_ms() + d->o->move_hold_ms;
	m->at = mu__k_now_ms();
	note(d, node, NULL);
	mu__klog(&d->log, 1, "the place on %s admitted for the pod %s makes next is held until it comes "
		 "| node=%s", node, ctrl, node);
}

/* Reads one place of a node's annotation back; false when an entry
 * lacks a field or its shape does not load (it is then ignored). */
static bool restore_one(mu__kd_t *d, const char *node, const json_t *x, int64_t mono, int64_t wall)
{
	const char *victim = mu__kjs(x, "pod"), *uid = mu__kjs(x, "uid"), *ns = mu__kjs(x, "ns");
	const char *ctrl = mu__kjs(x, "ctrl"), *queue = mu__kjs(x, "queue"), *doc = mu__kjs(x, "shape");
	const json_t *until = json_object_get(x, "until");
	if (!victim || !uid || !ns || !ctrl || !queue || !doc || !json_is_integer(until))
		return false;
	for (int32_t i = 0; i < d->nmoves; i++)
		if (!strcmp(d->moves[i].victim_uid, uid))
			return true; /* known already */
	char *key = strdup(doc);
	mu__kshape_t *shape = key ? mu__kshape_of_doc(&d->shapes, key) : NULL;
	if (!shape || !mu__kshape_job(shape)) {
		if (shape)
			mu__kshape_put(&d->shapes, shape);
		return false;
	}
	struct mu__kmove *m = place_new(d, ns, ctrl, victim, uid, mu__kjs(x, "index"), node, queue, shape);
	mu__kshape_put(&d->shapes, shape); /* the place has its own reference */
	if (!m)
		return false;
	json_t *pod = json_pack("{s:{s:O?}}", "metadata", "annotations", json_object_get(x, "dev"));
	mu__kdev_parse(pod, &m->dev);
	json_decref(pod);
	m->dev.podset = 0;
	m->dev.pod = 0;
	m->until = mono + (json_integer_value(until) - wall);
	m->at = json_is_integer(json_object_get(x, "at")) ? json_integer_value(json_object_get(x, "at")) : 0;
	m->restored = true;
	m->restored_at = mono;
	mu__klog(&d->log, 1, "pod %s: the place on %s held for the pod %s makes next is held again "
		 "after the restart | pod=%s node=%s", victim, node, ctrl, victim, node);
	return true;
}

void mu__kd_move_restore(mu__kd_t *d, const json_t *node)
{
	const char *name = mu__kjs(node, "metadata.name"), *v = mu__kmap(node, "metadata.annotations", HELD_ANN);
	json_t *a = v ? json_loads(v, 0, NULL) : NULL;
	if (!name || !v)
		return;
	size_t i;
	json_t *x;
	bool bad = !json_is_array(a);
	int64_t mono = mu__k_mono_ms(), wall = mu__k_now_ms();
	json_array_foreach(a, i, x)
		bad |= !restore_one(d, name, x, mono, wall);
	json_decref(a);
	if (bad)
		mu__klog(&d->log, 0, "node %s: its annotation %s cannot all be read; the places it does not "
			 "give are not held | node=%s", name, HELD_ANN, name);
}

static bool same_request(const mu_podset_spec_t *a, const mu_podset_spec_t *b);

/* Whether bound pod p is place m's replacement: of m's controller and
 * namespace, not the moved pod (another UID), and, where the controller
 * gives an index, of m's index; where it gives none, asking what the
 * moved pod asked and created at or after the move (creationTimestamp
 * has whole seconds), as a ReplicaSet makes a pod for the one evicted.
 * O(resources). */
static bool replaces(const struct mu__kmove *m, const mu__kpod_t *p)
{
	if (!(p->node || p->an_node) || p->terminal || !p->ctrl || strcmp(p->ctrl, m->ctrl) ||
	    strcmp(p->ns, m->ns) || !p->uid || !strcmp(p->uid, m->victim_uid))
		return false;
	if (m->index)
		return p->ctrl_idx && !strcmp(p->ctrl_idx, m->index);
	const mu_job_spec_t *a = mu__kshape_job(m->shape), *b = mu__kshape_job(p->shape);
	return m->at > 0 && p->created_ms >= m->at / 1000 * 1000 && a && b &&
	       same_request(&a->podsets[0], &b->podsets[0]);
}

/* Whether a pod that replaces place m is already bound (a place read back
 * after a restart whose replacement came meanwhile).  O(pods). */
static bool replaced(const mu__kd_t *d, const struct mu__kmove *m)
{
	for (size_t i = 0; i < d->pods.cap; i++)
		for (mu__kment_t *e = d->pods.tab[i]; e; e = e->next)
			if (replaces(m, e->val))
				return true;
	return false;
}

/* Binds a placeholder job of m's shape on its node, in its queue.
 * MU_OK; otherwise the place cannot be held (the room was taken, the
 * node or queue went). */
static int hold(mu__kd_t *d, struct mu__kmove *m, mu_time_t now)
{
	const mu_job_spec_t *s = mu__kshape_job(m->shape);
	mu_id_t nid = mu_engine_node_find(d->e, m->node);
	if (!s || nid < 0)
		return MU_ENOENT;
	char name[900];
	mu_job_spec_t j = *s;
	mu_podset_spec_t ps = s->podsets[0];
	ps.replicas = 1;
	ps.min_member = 0;
	snprintf(name, sizeof name, "muster.io/move:%s~%llu", m->victim,
		 (unsigned long long)++d->move_seq);
	j.name = name;
	j.queue = mu_engine_queue_find(d->e, m->queue) >= 0 ? m->queue : d->default_queue;
	j.namespace = m->ns;
	j.podsets = &ps;
	j.npodsets = 1;
	j.min_member = 0;
	j.preemptible = false;
	j.no_move = true;
	j.submit = now;
	j.duration = 0;
	memset(&j.topo, 0, sizeof j.topo);
	mu_id_t ej;
	int rc = mu_engine_job_submit(d->e, &j, now, &ej);
	if (rc)
		return rc;
	if ((rc = mu_engine_pod_bound(d->e, ej, 0, 0, nid, &m->dev, now)) != MU_OK) {
		mu_engine_job_withdraw(d->e, ej, now);
		return rc;
	}
	m->ej = ej;
	return MU_OK;
}

bool mu__kd_move_hold(mu__kd_t *d, mu_time_t now)
{
	bool held = false;
	int64_t mono = mu__k_mono_ms();
	for (int32_t i = 0; i < d->nmoves;) {
		struct mu__kmove *m = &d->moves[i];
		if (mono > m->until) {
			mu__klog(&d->log, 1, "the place on %s held for the replacement of %s (%s) is given "
				 "up: no pod came within --move-hold | pod=%s node=%s", m->node, m->victim,
				 m->ctrl, m->victim, m->node);
			drop(d, i, now, false);
			continue;
		}
		/* Held once the moved pod is out of its group's engine job. */
		const mu__kpod_t *v = mu__kmap_get(&d->pods, m->victim);
		bool out = !v || !v->g || v->ps < 0 || !v->uid || strcmp(v->uid, m->victim_uid);
		bool fresh = m->ej < 0 && out;
		if (m->restored && m->ej < 0 && !out && (v->node || v->an_node) && !v->deleting && !v->evicting &&
		    !v->terminal && mono - m->restored_at > NEVER_EVICTED_MS) {
			/* recorded, but the scheduler stopped before the eviction
			 * (it goes only once the record is written); the wait lets
			 * an eviction the stopped scheduler sent just before it
			 * died land first */
			mu__klog(&d->log, 1, "the place on %s read back for the replacement of %s (%s) is "
				 "given up: that pod was never evicted | pod=%s node=%s", m->node, m->victim,
				 m->ctrl, m->victim, m->node);
			drop(d, i, now, false);
			continue;
		}
		if (fresh && m->restored && replaced(d, m)) {
			mu__klog(&d->log, 1, "the place on %s held for the replacement of %s (%s) is given "
				 "up: its replacement is bound | pod=%s node=%s", m->node, m->victim, m->ctrl,
				 m->victim, m->node);
			drop(d, i, now, false);
			continue;
		}
		int rc = fresh ? hold(d, m, now) : MU_OK;
		if (rc) {
			mu__klog(&d->log, 0, "cannot hold the place on %s for the replacement of %s: %s "
				 "| pod=%s node=%s", m->node, m->victim, mu_strerror(rc), m->victim, m->node);
			drop(d, i, now, false);
			continue;
		}
		held |= fresh;
		i++;
	}
	return held;
}

/* Whether two pod sets ask the same resources (a place admitted from a
 * template: the pod its controller makes carries labels the template has
 * not).  O(resources). */
static bool same_request(const mu_podset_spec_t *a, const mu_podset_spec_t *b)
{
	if (memcmp(&a->req, &b->req, sizeof a->req) || a->next != b->next)
		return false;
	for (size_t i = 0; i < a->next; i++)
		if (strcmp(a->ext[i].name, b->ext[i].name) || a->ext[i].qty != b->ext[i].qty)
			return false;
	return true;
}

/* The held place pod p may take, or -1.  O(places). */
static int32_t place_for(const mu__kd_t *d, const mu__kpod_t *p)
{
	const mu_job_spec_t *ps = mu__kshape_job(p->shape);
	if (!ps || !p->ctrl)
		return -1;
	for (int32_t i = 0; i < d->nmoves; i++) {
		const struct mu__kmove *m = &d->moves[i];
		const mu_job_spec_t *ms = mu__kshape_job(m->shape);
		if (m->ej >= 0 && !strcmp(m->ctrl, p->ctrl) && !strcmp(m->ns, p->ns) &&
		    p->uid && strcmp(m->victim_uid, p->uid) && ms &&
		    (!m->index || (p->ctrl_idx && !strcmp(m->index, p->ctrl_idx))) &&
		    (!m->victim[0] || m->shape == p->shape || mu__kpodset_equal(&ms->podsets[0], &ps->podsets[0])))
			return i; /* a place admitted for a Job's pod: its first pod, checked by fits() */
	}
	return -1;
}

/* Whether pod p may take place m, which was admitted for a pod of its
 * Job from a template: it asks the same, or differs only in CPU, memory
 * or pod count and its node has the difference free besides the place.
 * Else what differs goes to why.  O(resources + terms). */
static bool fits(const mu__kd_t *d, const struct mu__kmove *m, const mu__kpod_t *p, char *why, size_t len)
{
	const mu_podset_spec_t *a = &mu__kshape_job(m->shape)->podsets[0], *b = &mu__kshape_job(p->shape)->podsets[0];
	if (m->victim[0] || m->shape == p->shape || same_request(a, b))
		return true;
	const char *diff = mu__kpodset_place_diff(a, b);
	mu_node_info_t ni;
	mu_id_t nid = mu_engine_node_find(d->e, m->node);
	if (!diff && (nid < 0 || mu_engine_node_info(d->e, nid, &ni) != MU_OK))
		diff = "its node is gone";
	static const struct { int r; const char *name; } rs[] = {
		{MU_RES_CPU, "CPU (millicores)"}, {MU_RES_MEM, "memory (bytes)"}, {MU_RES_PODS, "pods"}};
	for (size_t k = 0; !diff && k < sizeof rs / sizeof *rs; k++) {
		int64_t more = b->req.v[rs[k].r] - a->req.v[rs[k].r];
		if (more > 0 && more > ni.free.v[rs[k].r]) {
			snprintf(why, len, "it asks %lld %s where its template asked %lld, and %s has %lld free "
				 "beside the place", (long long)b->req.v[rs[k].r], rs[k].name,
				 (long long)a->req.v[rs[k].r], m->node, (long long)ni.free.v[rs[k].r]);
			return false;
		}
	}
	if (diff)
		snprintf(why, len, "%s from its template's", diff);
	return !diff;
}

bool mu__kd_move_waiting(const mu__kd_t *d, const mu__kpod_t *p)
{
	return p->ours && p->ctrl && !p->node && !p->an_node && p->g && place_for(d, p) >= 0;
}

bool mu__kd_move_claim(mu__kd_t *d, mu__kpod_t *p, mu_time_t now)
{
	int32_t i = place_for(d, p);
	if (i < 0)
		return false;
	struct mu__kmove *m = &d->moves[i];
	char node[300], victim[600], why[400], msg[1200];
	if (!fits(d, m, p, why, sizeof why)) {
		snprintf(msg, sizeof msg, "the place on %s admitted for the pod of %s is not taken by this pod: %s; "
			 "it is given up, and the pod is placed as any pod", m->node, m->ctrl, why);
		mu__klog(&d->log, 0, "pod %s: %s | pod=%s node=%s", p->key, msg, p->key, m->node);
		mu__kd_event_write(d, "Pod", "v1", p->ns, p->name, p->uid, "Warning", "HeldPlaceRefused", msg);
		drop(d, i, now, false);
		return false;
	}
	mu_decision_t dev = m->dev;
	snprintf(node, sizeof node, "%s", m->node);
	snprintf(victim, sizeof victim, "%s", m->victim);
	drop(d, i, now, false); /* the placeholder gives the room back first */
	mu__klog(&d->log, 1, "pod %s takes the place held on %s for %s | pod=%s node=%s", p->key, node,
		 victim, p->key, node);
	mu__kd_bind_or_hold(d, p, node, &dev);
	return true;
}

void mu__kd_move_free(mu__kd_t *d)
{
	while (d->nmoves)
		drop(d, d->nmoves - 1, 0, true); /* kept for the next start */
	free(d->moves);
	d->moves = NULL;
	d->moves_cap = 0;
}

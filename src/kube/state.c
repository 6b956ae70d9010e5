/*
 * state.c - the daemon's view of the cluster and how it feeds the engine.
 *
 * Watch events update the view incrementally: a Node (or its
 * NodeResourceTopology) is upserted into the engine only when what the
 * engine sees of it changed (heartbeats are skipped); Queues and Topologies
 * go straight in; a Pod joins a group:
 *   - `muster.io/pod-group: G` -> the muster PodGroup G ("m:ns/G"),
 *   - `scheduling.x-k8s.io/pod-group: G` -> the coscheduling PodGroup G,
 *   - a controlling batch/v1 Job that carries a queue label -> that Job's
 *     admission group ("j:ns/J", see jobs.c),
 *   - a controlling Job for which the PodGroup controller made a muster
 *     PodGroup J -> that gang,
 *   - else the pod alone ("s:ns/name").
 * Pods of other schedulers that are bound count against their nodes
 * ("e:ns/name", in the hidden queue muster.io/external).
 * Events arrive through events.c.  A group whose members changed is marked
 * dirty; before the next cycle mu__kd_sync() (events.c) has
 * mu__kd_group_sync() bring its engine job up to date: nothing when the members
 * are the ones submitted, else the old job is finished and a new one
 * submitted ("KEY~GEN") with the live members, pods already bound (or with
 * a bind in flight) replayed as bound.  Nothing is rebuilt from scratch:
 * work is proportional to what changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"

#define EXTERNAL_QUEUE "muster.io/external"

/* --- groups ------------------------------------------------------------------ */

mu__kgroup_t *mu__kd_group(mu__kd_t *d, const char *key, mu__kgkind_t kind,
			   const char *ns, const char *name)
{
	mu__kgroup_t *g = mu__kmap_get(&d->groups, key);
	if (g)
		return g;
	/* key, ns and name in one block (key owns it): three small blocks
	 * per group were 96 bytes of a single pod's record */
	size_t kl = strlen(key) + 1, nl = strlen(ns) + 1;
	g = calloc(1, sizeof *g);
	char *blk = g ? malloc(kl + nl + strlen(name) + 1) : NULL;
	if (blk) {
		g->key = memcpy(blk, key, kl);
		g->ns = memcpy(blk + kl, ns, nl);
		g->name = strcpy(blk + kl + nl, name);
	}
	if (!blk || mu__kmap_put(&d->groups, blk, g)) {
		free(blk);
		free(g);
		return NULL;
	}
	g->kind = kind;
	g->ej = -1;
	g->min_member = 1;
	return g;
}

void mu__kd_mark_dirty(mu__kd_t *d, mu__kgroup_t *g)
{
	d->changed = true;
	g->dirty = true;
	if (g->listed_dirty)
		return;
	if (d->ndirty == d->dirty_cap) {
		int32_t cap = d->dirty_cap ? d->dirty_cap * 2 : 256;
		mu__kgroup_t **nv = realloc(d->dirty, (size_t)cap * sizeof *nv);
		if (!nv)
			return;
		d->dirty = nv;
		d->dirty_cap = cap;
	}
	d->dirty[d->ndirty++] = g;
	g->listed_dirty = true;
}

int mu__kd_set_ej(mu__kd_t *d, mu__kgroup_t *g, mu_id_t ej)
{
	if (ej >= d->ej_cap) {
		int32_t cap = d->ej_cap ? d->ej_cap : 1024;
		while (cap <= ej)
			cap *= 2;
		mu__kgroup_t **nv = realloc(d->ej_group, (size_t)cap * sizeof *nv);
		if (!nv)
			return MU_ENOMEM;
		memset(nv + d->ej_cap, 0, (size_t)(cap - d->ej_cap) * sizeof *nv);
		d->ej_group = nv;
		d->ej_cap = cap;
	}
	d->ej_group[ej] = g;
	g->ej = ej;
	g->gen++;
	return MU_OK;
}

void mu__kd_ej_name(mu__kd_t *d, mu__kgroup_t *g, char *buf, size_t len)
{
	/* The engine keeps the names of the jobs it was given; an object
	 * deleted and made again under the same name (a new UID) is a new
	 * group whose generations start again, so skip the names an earlier
	 * incarnation used.  Bounded by that key's earlier submissions. */
	for (;;) {
		if (g->gen)
			snprintf(buf, len, "%s~%d", g->key + 2, g->gen);
		else
			snprintf(buf, len, "%s", g->key + 2);
		if (mu_engine_job_find(d->e, buf) < 0 || g->gen == INT32_MAX)
			return;
		g->gen++;
	}
}

void mu__kd_finish(mu__kd_t *d, mu__kgroup_t *g, mu_time_t now, bool done)
{
	if (g->ej < 0)
		return;
	mu_job_info_t ji;
	if (mu_engine_job_info(d->e, g->ej, &ji) == MU_OK && ji.state != MU_JOB_FINISHED)
		(done ? mu_engine_job_finish : mu_engine_job_withdraw)(d->e, g->ej, now);
	/* Nothing here keeps the id past this point: the engine may give it
	 * to the next job, so its records follow the live pods. */
	mu_engine_job_forget(d->e, g->ej);
	d->ej_group[g->ej] = NULL;
	g->ej = -1;
	for (int32_t i = 0; i < g->nepods; i++)
		if (g->epods[i]) {
			g->epods[i]->ps = -1;
			g->epods[i]->idx = -1;
		}
	g->nepods = 0;
	g->nps = 0;
	free(g->last);
	g->last = NULL;
	d->changed = true;
}

/* Frees g's engine pod map (unless it is the record's own one-pod
 * storage) and leaves it empty.  O(1). */
static void epods_free(mu__kgroup_t *g)
{
	if (g->epods != &g->epod1)
		free(g->epods);
	if (g->ps_first != g->psf1)
		free(g->ps_first);
	g->epods = NULL;
	g->ps_first = NULL;
}

static void group_free(mu__kgroup_t *g)
{
	for (int32_t i = 0; i < g->nslots; i++)
		free(g->slots[i].node);
	free(g->slots);
	json_decref(g->job);
	if (g->pods != &g->pod1)
		free(g->pods);
	epods_free(g);
	free(g->pg_queue);
	free(g->wl_key);
	free(g->wl);
	free(g->msg);
	free(g->last);
	free(g->status_sig);
	free(g->key); /* ns and name too */
	free(g);
}

void mu__kd_group_gc(mu__kd_t *d, mu__kgroup_t *g)
{
	if (g->npods || g->has_pg || g->job || g->ej >= 0 || g->listed_dirty)
		return;
	mu__kmap_del(&d->groups, g->key);
	group_free(g);
}

static void group_add(mu__kgroup_t *g, mu__kpod_t *p)
{
	if (!g->cap) { /* the first member lives in the record */
		g->pods = &g->pod1;
		g->cap = 1;
	}
	if (g->npods == g->cap) {
		int32_t cap = g->cap == 1 ? 4 : g->cap * 2;
		bool inl = g->pods == &g->pod1;
		mu__kpod_t **nv = realloc(inl ? NULL : g->pods, (size_t)cap * sizeof *nv);
		if (!nv)
			return;
		if (inl)
			nv[0] = g->pod1;
		g->pods = nv;
		g->cap = cap;
	}
	g->pods[g->npods++] = p;
	p->g = g;
}

/* Takes p out of its group (and its slot or engine position). */
static void group_remove(mu__kd_t *d, mu__kpod_t *p)
{
	mu__kgroup_t *g = p->g;
	if (!g)
		return;
	for (int32_t i = 0; i < g->npods; i++)
		if (g->pods[i] == p) {
			g->pods[i] = g->pods[--g->npods];
			break;
		}
	if (p->slot >= 0 && p->slot < g->nslots && g->slots[p->slot].pod == p)
		g->slots[p->slot].pod = NULL;
	if (p->ps >= 0 && g->nps > p->ps) {
		int32_t at = g->ps_first[p->ps] + p->idx;
		if (at < g->nepods && g->epods[at] == p)
			g->epods[at] = NULL;
	}
	p->slot = p->ps = p->idx = -1;
	p->g = NULL;
	mu__kd_mark_dirty(d, g);
}

/* --- pods ----------------------------------------------------------------------- */

/* The key of the group pod p belongs to, into buf. */
static mu__kgkind_t pod_group_key(mu__kd_t *d, const mu__kpod_t *p, char *buf, size_t len)
{
	if (!p->ours) {
		snprintf(buf, len, "e:%s", p->key);
		return MU__KG_EXTERNAL;
	}
	if (p->group_label) {
		snprintf(buf, len, "m:%s/%s", p->ns, p->group_label);
		return MU__KG_GANG;
	}
	if (p->wl_group) { /* a workload kind's (kinds.c) */
		snprintf(buf, len, "%s", p->wl_group);
		return MU__KG_GANG;
	}
	if (p->xgroup_label) {
		snprintf(buf, len, "x:%s/%s", p->ns, p->xgroup_label);
		return MU__KG_GANG;
	}
	if (p->owner_job) {
		/* unknown Job: wait for it in its group; admission: there */
		snprintf(buf, len, "j:%s/%s", p->ns, p->owner_job);
		mu__kgroup_t *g = mu__kmap_get(&d->groups, buf);
		if (!g || !g->job || g->admission)
			return MU__KG_JOB;
		if (g->gang_job) {
			snprintf(buf, len, "m:%s/%s", p->ns, p->owner_job);
			return MU__KG_GANG;
		}
	}
	snprintf(buf, len, "s:%s", p->key);
	return MU__KG_SINGLE;
}

/* Replaces *dst with a copy of src (NULL allowed); true if it changed. */
static bool set_str(char **dst, const char *src)
{
	if ((!*dst && !src) || (*dst && src && !strcmp(*dst, src)))
		return false;
	free(*dst);
	*dst = src ? strdup(src) : NULL;
	return true;
}

static void pod_free(mu__kd_t *d, mu__kpod_t *p)
{
	mu__kd_mix_pod(d, p, true); /* out of the demand */
	mu__kshape_put(&d->shapes, p->shape);
	free(p->key); /* ns and name too */
	free(p->uid);
	free(p->node);
	free(p->owner_job);
	free(p->ctrl);
	free(p->ctrl_idx);
	free(p->queue);
	free(p->pclass);
	free(p->group_label);
	free(p->xgroup_label);
	free(p->an_node);
	free(p->msg);
	free(p->dev.cpus);
	json_decref(p->dra);
	json_decref(p->nsobj);
	free(p->dra_msg);
	free(p->wl_group);
	free(p->wl_key);
	free(p->wl_name);
	free(p->wl_part);
	json_decref(p->labels);
	free(p);
}

void mu__kd_pod_delete(mu__kd_t *d, const char *key)
{
	mu__kpod_t *p = mu__kmap_del(&d->pods, key);
	if (!p)
		return;
	mu__kgroup_t *g = p->g;
	group_remove(d, p);
	pod_free(d, p);
	if (g && !g->npods && g->ej < 0)
		mu__kd_group_gc(d, g);
}

/* Places p in the group its labels and owner say (moving it if needed). */
static void pod_regroup(mu__kd_t *d, mu__kpod_t *p)
{
	char key[1024];
	if (p->ours || p->node) {
		mu__kgkind_t kind = pod_group_key(d, p, key, sizeof key);
		if (p->g && !strcmp(p->g->key, key))
			return;
		group_remove(d, p);
		const char *gname = key[0] == 'w' ? p->wl_name :
			kind == MU__KG_GANG || kind == MU__KG_JOB ? strchr(key + 2, '/') + 1 : p->name;
		mu__kgroup_t *g = mu__kd_group(d, key, kind, p->ns, gname);
		if (!g)
			return;
		if (key[0] == 'w' && !g->wl_key && p->wl_key)
			g->wl_key = strdup(p->wl_key); /* wl.c attaches its object */
		if (!g->created_ms || (p->created_ms && p->created_ms < g->created_ms))
			g->created_ms = p->created_ms;
		group_add(g, p);
		mu__kd_mark_dirty(d, g);
	} else {
		group_remove(d, p);
	}
}

void mu__kd_regroup_owned(mu__kd_t *d, const char *ns, const char *job)
{
	for (size_t i = 0; i < d->pods.cap; i++)
		for (mu__kment_t *e = d->pods.tab[i]; e; e = e->next) {
			mu__kpod_t *p = e->val;
			if (p->owner_job && !strcmp(p->owner_job, job) && !strcmp(p->ns, ns))
				pod_regroup(d, p);
		}
}

/* A RayCluster pod's workload reference *w: to the RayJob that controls
 * its RayCluster object when one does.  O(owners). */
static void ray_owner(mu__kd_t *d, mu__kwpod_t *w)
{
	char job[300], ns[300];
	const json_t *rc = mu__kmap_get(&d->wls, w->wl);
	const char *slash = strchr(w->wl, '/');
	if (!rc || !slash || !mu__kw_rayjob_of(rc, job, sizeof job))
		return;
	snprintf(ns, sizeof ns, "%.*s", (int)(slash - w->wl - 11), w->wl + 11); /* "RayCluster:" */
	mu__kwpod_t was = *w;
	if (!mu__kw_to_rayjob(w, ns, job))
		*w = was;
}

/* Whether a pod of the batch/v1 Job `job` in ns is a RayJob's submitter
 * (a RayJob of that name in K8sJobMode is known); if so *w is set to its
 * part "submitter".  O(1). */
static bool submitter_of(mu__kd_t *d, const char *ns, const char *job, mu__kwpod_t *w)
{
	char key[700];
	snprintf(key, sizeof key, "RayJob:%s/%s", ns, job);
	const json_t *rj = mu__kmap_get(&d->wls, key);
	return rj && mu__kw_ray_submitter(rj) && mu__kw_to_submitter(w, ns, job);
}

void mu__kd_regroup_submitter(mu__kd_t *d, const char *ns, const char *job)
{
	for (size_t i = 0; i < d->pods.cap; i++)
		for (mu__kment_t *e = d->pods.tab[i]; e; e = e->next) {
			mu__kpod_t *p = e->val;
			mu__kwpod_t w;
			if (!p->ours || !p->owner_job || strcmp(p->owner_job, job) || strcmp(p->ns, ns))
				continue;
			bool is = submitter_of(d, ns, job, &w);
			if (is == (p->wl_part && !strcmp(p->wl_part, "submitter")))
				continue;
			set_str(&p->wl_group, is ? w.group : NULL);
			set_str(&p->wl_part, is ? w.part : NULL);
			set_str(&p->wl_key, is ? w.wl : NULL);
			set_str(&p->wl_name, is ? w.name : NULL);
			pod_regroup(d, p);
		}
}

void mu__kd_regroup_wl(mu__kd_t *d, const char *wl_key)
{
	for (size_t i = 0; i < d->pods.cap; i++)
		for (mu__kment_t *e = d->pods.tab[i]; e; e = e->next) {
			mu__kpod_t *p = e->val;
			if (!p->wl_key || !p->wl_part || strcmp(p->wl_key, wl_key))
				continue;
			mu__kwpod_t w;
			memset(&w, 0, sizeof w);
			w.kind = MU__WL_RAY;
			snprintf(w.wl, sizeof w.wl, "%s", p->wl_key);
			snprintf(w.group, sizeof w.group, "%s", p->wl_group ? p->wl_group : "");
			snprintf(w.name, sizeof w.name, "%s", p->wl_name ? p->wl_name : "");
			snprintf(w.part, sizeof w.part, "%s", p->wl_part);
			ray_owner(d, &w);
			if (set_str(&p->wl_group, w.group)) {
				set_str(&p->wl_key, w.wl);
				set_str(&p->wl_name, w.name);
				pod_regroup(d, p);
			}
		}
}

static void dra_refeed(mu__kd_t *d);

/* A Pod was added or changed: its facts are copied (the object is not
 * kept), its shape looked up once, its group marked dirty when what the
 * engine sees changed.  O(1) expected, O(pods) when it changes group. */
void mu__kd_pod_upsert(mu__kd_t *d, json_t *obj)
{
	mu__kpodinfo_t in;
	char key[600];
	if (mu__kpod_info(obj, &in))
		return;
	snprintf(key, sizeof key, "%s/%s", in.ns, in.name);
	mu__kpod_t *p = mu__kmap_get(&d->pods, key);
	bool ours = !strcmp(in.scheduler, d->o->scheduler_name);
	bool relevant = ours || (in.node && !in.terminal);
	if (!relevant) {
		if (p)
			mu__kd_pod_delete(d, key);
		return;
	}
	if (p && in.uid && p->uid && strcmp(in.uid, p->uid)) {
		mu__kd_pod_delete(d, key); /* a new pod under an old name */
		p = NULL;
	}
	if (!p) {
		size_t kl = strlen(key) + 1, nl = strlen(in.ns) + 1;
		p = calloc(1, sizeof *p);
		char *blk = p ? malloc(kl + nl + strlen(in.name) + 1) : NULL;
		if (blk) { /* one block for the three */
			p->key = memcpy(blk, key, kl);
			p->ns = memcpy(blk + kl, in.ns, nl);
			p->name = strcpy(blk + kl + nl, in.name);
		}
		if (!blk || mu__kmap_put(&d->pods, blk, p)) {
			free(blk);
			free(p);
			return;
		}
		p->ps = p->idx = p->slot = -1;
		p->dev.numa = p->dev.nic = -1;
		p->pending_since = mu__k_mono_ms();
	}
	mu__kwpod_t wp;
	bool wl = ours && mu__kw_pod(obj, &wp);
	if (wl && wp.kind == MU__WL_RAY)
		ray_owner(d, &wp);
	if (!wl && ours && in.owner_job)
		wl = submitter_of(d, in.ns, in.owner_job, &wp);
	int moved = (int)set_str(&p->wl_group, wl ? wp.group : NULL) +
		    (int)set_str(&p->wl_part, wl ? wp.part : NULL);
	set_str(&p->wl_key, wl ? wp.wl : NULL);
	set_str(&p->wl_name, wl ? wp.name : NULL);
	char ctrl[600];
	set_str(&p->ctrl, mu__kd_move_ctrl(&in, ctrl, sizeof ctrl) ? ctrl : NULL);
	set_str(&p->ctrl_idx, p->ctrl && mu__kd_move_index(obj, &in, ctrl, sizeof ctrl) ? ctrl : NULL);
	moved += (int)set_str(&p->uid, in.uid) + (int)set_str(&p->owner_job, in.owner_job) +
		    (int)set_str(&p->queue, in.queue) + (int)set_str(&p->pclass, in.pclass) +
		    (int)set_str(&p->group_label, in.group_label) +
		    (int)set_str(&p->xgroup_label, in.xgroup_label);
	int live_changed = (int)set_str(&p->node, in.node) + (p->deleting != in.deleting) +
			   (p->gated != in.gated) + (p->terminal != in.terminal) + (p->ours != ours);
	p->ours = ours;
	if (in.deleting && !p->deleting)
		mu__kd_leaving_note(d, p); /* bound: it keeps its node until gone */
	p->deleting = in.deleting;
	p->gated = in.gated;
	p->terminal = in.terminal;
	p->failed = in.failed;
	p->created_ms = in.created_ms;
	p->started_ms = in.started_ms;
	p->seen = true;
	json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
	if (!((!p->labels && !labels) || (p->labels && labels && json_equal(p->labels, labels)))) {
		json_decref(p->labels);
		p->labels = json_incref(labels);
		live_changed += d->pdbs.n > 0; /* its budgets may differ */
	}
	if (p->node) {
		mu_decision_t dv;
		memset(&dv, 0, sizeof dv);
		mu__kdev_parse(obj, &dv);
		mu__kdev_keep(&p->dev, &dv);
		if (p->an_node) { /* our bind went through */
			free(p->an_node);
			p->an_node = NULL;
		}
	}
	if (!p->shape) { /* ours, or bound by another scheduler */
		json_t *pinned = ours && !p->node && mu__kd_dra_wants(obj) ? mu__kd_dra_pin(d, p, obj) :
				 ours && mu__kd_dra_wants(obj) ? mu__kd_dra_counted(d, obj) : NULL;
		if (json_array_size(d->dra_refeed)) /* the shaping read the counts first */
			dra_refeed(d);
		json_t *src = pinned ? pinned : obj, *nsp = NULL;
		if (mu__kd_nssel_wants(src) && (nsp = mu__kd_nssel_pin(d, src))) {
			json_decref(p->nsobj); /* read again when namespaces change */
			p->nsobj = json_incref(src);
		}
		p->shape = mu__kshape_get(&d->shapes, nsp ? nsp : src, !ours);
		json_decref(nsp);
		json_decref(pinned);
		live_changed = 1;
	} else if (ours && !p->node && p->dra && p->dra_msg) {
		/* the claim controller recorded a claim made from a template */
		const json_t *a = mu__kj(obj, "status.resourceClaimStatuses");
		const json_t *b = mu__kj(p->dra, "status.resourceClaimStatuses");
		if ((a || b) && !(a && b && json_equal(a, b))) {
			json_decref(p->dra);
			p->dra = json_deep_copy(obj);
			d->dra_retry_ms = 0; /* at the next pass */
			p->dra_round = 0;    /* whatever the round */
			live_changed = 1;    /* a Job's pod: its slot is tried again */
		}
	}
	mu__kd_mix_pod(d, p, false); /* ended, gated, new: the demand (rechoose.c) */
	if (moved || !p->g)
		pod_regroup(d, p);
	else if (live_changed)
		mu__kd_mark_dirty(d, p->g);
}

/* --- nodes -------------------------------------------------------------------- */

/* Marks the groups with pods on node name dirty (it went away). */
static void node_groups_dirty(void *arg, void *val)
{
	void **a = arg;
	mu__kpod_t *p = val;
	const char *name = a[1];
	if (p->g && ((p->node && !strcmp(p->node, name)) || (p->an_node && !strcmp(p->an_node, name))))
		mu__kd_mark_dirty(a[0], p->g);
}

/* Upserts node n into the engine from its object and topology. */
static void node_feed(mu__kd_t *d, mu__knode_t *n)
{
	mu_arena_t a;
	mu_node_spec_t s;
	char msg[256] = "";
	mu_arena_init(&a);
	json_t *obj = mu__knode_parse(n->text);
	mu_node_topo_spec_t topo;
	if (n->topo)
		mu__knrt_unpack(n->topo, &topo);
	int rc = obj ? mu__knode_spec(obj, n->topo ? &topo : NULL, &a, &s, msg, sizeof msg) :
		MU_ENOMEM;
	json_decref(obj); /* the spec's strings are in the arena */
	size_t base = s.next;
	if (rc == MU_OK)
		mu__kd_dra_node_ext(d, &s);
	if (rc == MU_OK && (rc = mu_engine_node_upsert(d->e, &s, NULL)) == MU_ELIMIT && s.next > base) {
		s.next = base; /* no room for the DRA counts: the node without them */
		rc = mu_engine_node_upsert(d->e, &s, NULL);
	}
	if (rc != MU_OK && !msg[0])
		snprintf(msg, sizeof msg, "%s", mu_strerror(rc));
	mu_arena_release(&a);
	if (rc) {
		mu__klog(&d->log, 0, "node %s: cannot use it: %s | node=%s", n->name, msg, n->name);
		return;
	}
	if (!n->in_engine && d->all_synced) {
		/* pods bound there before it was known (not at start-up, when
		 * every list is in before the first sync) */
		void *arg[2] = {d, n->name};
		mu__kmap_each(&d->pods, node_groups_dirty, arg);
	}
	n->in_engine = true;
	d->changed = true;
}

/* Feeds the nodes whose DRA device counts changed (d->dra_refeed) to the
 * engine again.  O(those nodes). */
static void dra_refeed(mu__kd_t *d)
{
	size_t i;
	json_t *nm;
	json_array_foreach(d->dra_refeed, i, nm) {
		mu__knode_t *n = mu__kmap_get(&d->nodes, json_string_value(nm));
		if (n && n->text && n->in_engine)
			node_feed(d, n);
	}
	json_array_clear(d->dra_refeed);
}

static mu__knode_t *node_get(mu__kd_t *d, const char *name)
{
	mu__knode_t *n = mu__kmap_get(&d->nodes, name);
	if (n)
		return n;
	n = calloc(1, sizeof *n);
	if (!n || !(n->name = strdup(name)) || mu__kmap_put(&d->nodes, n->name, n)) {
		if (n)
			free(n->name);
		free(n);
		return NULL;
	}
	return n;
}

/* A Node changed: kept (a reference) and fed to the engine only when its
 * signature changed; a deleted node's groups are re-synced (O(pods)). */
void mu__kd_node_event(mu__kd_t *d, json_t *obj, bool deleted)
{
	const char *name = mu__kjs(obj, "metadata.name");
	if (!name)
		return;
	mu__knode_t *n = deleted ? mu__kmap_get(&d->nodes, name) : node_get(d, name);
	if (!n)
		return;
	n->seen = true;
	if (deleted) {
		void *arg[2] = {d, (void *)name};
		mu__kmap_each(&d->pods, node_groups_dirty, arg);
		if (n->in_engine)
			mu_engine_node_remove(d->e, n->name, mu__k_now_ms());
		mu__kmap_del(&d->nodes, n->name);
		free(n->text);
		free(n->topo);
		free(n->name);
		free(n);
		d->changed = true;
		return;
	}
	if (!n->text)
		mu__kd_move_restore(d, obj); /* first seen: the places held on it */
	char *text = mu__knode_text(obj); /* not the whole listed Node */
	if (!text) {
		mu__klog(&d->log, 0, "node %s: out of memory | node=%s", n->name, n->name);
		return;
	}
	if (n->text && !strcmp(text, n->text) && n->in_engine) {
		free(text);
		return; /* a heartbeat */
	}
	free(n->text);
	n->text = text;
	node_feed(d, n);
}

void mu__kd_nrt_event(mu__kd_t *d, json_t *obj, bool deleted)
{
	const char *name = mu__kjs(obj, "metadata.name");
	mu__knode_t *n = name ? node_get(d, name) : NULL;
	if (!n)
		return;
	free(n->topo);
	n->topo = NULL;
	if (!deleted) {
		/* Read into a spec, kept packed: the NUMA nodes it has (about a
		 * third of the spec's 1 KB), unpacked when the node is fed. */
		char msg[256];
		mu_arena_t a;
		mu_node_topo_spec_t *t = calloc(1, sizeof *t);
		mu_arena_init(&a);
		if (!t)
			mu__klog(&d->log, 0, "noderesourcetopology %s: out of memory | node=%s", name, name);
		else if (mu__knrt_spec(obj, &a, t, msg, sizeof msg))
			mu__klog(&d->log, 0, "noderesourcetopology %s: %s | node=%s", name, msg, name);
		else if (!(n->topo = mu__knrt_pack(t)))
			mu__klog(&d->log, 0, "noderesourcetopology %s: out of memory | node=%s", name, name);
		free(t);
		mu_arena_release(&a);
	}
	if (n->text)
		node_feed(d, n);
}


/* --- queues, topologies, pod groups ------------------------------------------- */

/* Upserts the queues waiting in d->queue_objs whose parent is known. */
static void queues_feed(mu__kd_t *d)
{
	for (bool progress = true; progress;) {
		progress = false;
		const char *name;
		json_t *q;
		void *tmp;
		json_object_foreach_safe(d->queue_objs, tmp, name, q) {
			mu_specs_t s;
			char msg[512];
			mu_specs_init(&s);
			int rc = mu__kqueue_spec(q, &s, msg, sizeof msg);
			if (rc == MU_OK)
				rc = mu_engine_queue_upsert(d->e, &s.queues[0]);
			if (rc != MU_ENOENT) {
				if (rc)
					mu__klog(&d->log, 0, "queue %s: %s | queue=%s", name,
						 *msg ? msg : mu_strerror(rc), name);
				progress = progress || rc == MU_OK;
				json_object_del(d->queue_objs, name);
				d->changed = true;
			}
			mu_specs_release(&s);
		}
	}
}

void mu__kd_queue_event(mu__kd_t *d, json_t *obj, bool deleted)
{
	const char *name = mu__kjs(obj, "metadata.name");
	if (!name)
		return;
	if (deleted) {
		mu__klog(&d->log, 1, "queue %s deleted: its jobs keep it until they end | queue=%s", name, name);
		json_object_del(d->queue_names, name);
		return;
	}
	if (!json_object_get(d->queue_names, name))
		json_object_set_new(d->queue_names, name, json_null());
	json_object_set(d->queue_objs, name, obj);
	queues_feed(d);
	/* groups waiting for this queue */
	for (size_t i = 0; i < d->groups.cap; i++)
		for (mu__kment_t *e = d->groups.tab[i]; e; e = e->next) {
			mu__kgroup_t *g = e->val;
			if (g->ej < 0 && g->npods)
				mu__kd_mark_dirty(d, g);
		}
}

void mu__kd_pool_event(mu__kd_t *d, json_t *obj, bool deleted)
{
	const char *name = mu__kjs(obj, "metadata.name");
	if (!name)
		return;
	if (deleted) {
		mu__klog(&d->log, 0, "nodepool %s deleted: the scheduler keeps it until "
			 "it restarts | nodepool=%s", name, name);
		return;
	}
	mu_specs_t s;
	char msg[512] = "";
	mu_specs_init(&s);
	int rc = mu__kpool_spec(obj, &s, msg, sizeof msg);
	if (rc == MU_OK && (rc = mu_engine_pool_upsert(d->e, &s.pools[0])) != MU_OK)
		snprintf(msg, sizeof msg, "%s", rc == MU_EINVAL ?
			 "a node would be in two pools (every node is in at most one)" :
			 rc == MU_ESTATE ? "it would move a node that runs pods into or "
			 "out of a pool" : mu_strerror(rc));
	if (rc)
		mu__klog(&d->log, 0, "nodepool %s: %s | nodepool=%s", name, msg, name);
	mu_specs_release(&s);
	queues_feed(d); /* queues that name it */
	d->changed = true;
}

void mu__kd_pc_event(mu__kd_t *d, json_t *obj, bool deleted)
{
	const char *name = mu__kjs(obj, "metadata.name");
	if (!name)
		return;
	if (deleted) {
		json_object_del(d->pclasses, name);
		return;
	}
	const char *w = mu__kmap(obj, "metadata.annotations", "muster.io/max-wait");
	const char *x = mu__kmap(obj, "metadata.annotations", "muster.io/escalation");
	int64_t ms = 0;
	int esc = !x ? 0 : !strcmp(x, "boost") ? MU_ESC_BOOST : !strcmp(x, "reserve") ?
		  MU_ESC_RESERVE : !strcmp(x, "preempt") ? MU_ESC_PREEMPT : -1;
	if ((w && mu__parse_duration(w, &ms) != MU_OK) || esc < 0) {
		mu__klog(&d->log, 0, "priorityclass %s: %s | priorityclass=%s", name,
			 esc < 0 ? "muster.io/escalation: expected boost, reserve or preempt" :
			 "muster.io/max-wait: expected a duration such as 5m", name);
		ms = 0; /* the class's value still counts; its bad annotations do not */
		esc = 0;
	}
	/* Every class is kept: its value and preemption policy stand in for
	 * the priority admission gives pods not yet made (wl.c templates). */
	json_t *e = json_pack("{s:I,s:i,s:O?,s:b,s:O?}", "maxWait", (json_int_t)ms, "escalation",
			      esc, "value", json_object_get(obj, "value"), "globalDefault",
			      json_is_true(json_object_get(obj, "globalDefault")),
			      "preemptionPolicy", json_object_get(obj, "preemptionPolicy"));
	if (e)
		json_object_set_new(d->pclasses, name, e);
	else
		json_object_del(d->pclasses, name);
}

void mu__kd_topo_event(mu__kd_t *d, json_t *obj, bool deleted)
{
	mu_arena_t a;
	mu_topology_spec_t t;
	char msg[256];
	if (deleted)
		return; /* the engine keeps topologies */
	mu_arena_init(&a);
	int rc = mu__ktopo_spec(obj, &a, &t, msg, sizeof msg);
	if (rc == MU_OK && (rc = mu_engine_topology_upsert(d->e, &t)) != MU_OK)
		snprintf(msg, sizeof msg, "%s", mu_strerror(rc));
	if (rc)
		mu__klog(&d->log, 0, "topology: %s", msg);
	mu_arena_release(&a);
	d->changed = true;
}

/* A muster or coscheduling PodGroup changed. */
void mu__kd_pg_event(mu__kd_t *d, json_t *obj, bool deleted, bool muster)
{
	const char *name = mu__kjs(obj, "metadata.name"), *ns = mu__kjs(obj, "metadata.namespace");
	char key[600];
	if (!name)
		return;
	snprintf(key, sizeof key, "%c:%s/%s", muster ? 'm' : 'x', ns ? ns : "default", name);
	mu__kgroup_t *g = mu__kd_group(d, key, MU__KG_GANG, ns ? ns : "default", name);
	if (!g)
		return;
	mu__kmap_t *m = muster ? &d->mpgs : &d->xpgs;
	json_t *old = mu__kmap_del(m, g->key);
	json_decref(old);
	g->has_pg = !deleted;
	g->seen = true;
	if (!deleted) {
		mu__kmap_put(m, g->key, json_incref(obj));
		int64_t mm = mu__kji(obj, "spec.minMember", 1);
		g->min_member = mm < 1 ? 1 : mm > 1000000 ? 1000000 : (int32_t)mm;
		set_str(&g->pg_queue, mu__kjs(obj, "spec.queue"));
		const char *pol = mu__kmap(obj, "metadata.annotations", "muster.io/on-pod-failure");
		g->keep_on_failure = pol && !strcmp(pol, "ignore");
	}
	mu__kd_mark_dirty(d, g);
}

/* --- syncing groups with the engine ---------------------------------------------- */

const char *mu__kd_queue_of(mu__kd_t *d, const mu__kgroup_t *g)
{
	if (g->kind == MU__KG_EXTERNAL)
		return EXTERNAL_QUEUE;
	if (g->pg_queue)
		return g->pg_queue;
	for (int32_t i = 0; i < g->npods; i++)
		if (g->pods[i]->queue)
			return g->pods[i]->queue;
	return d->default_queue;
}

/* Whether p takes part in its group's engine job: not ended, not evicted
 * by us, not gated, readable, and on a node the engine knows.  A bound pod
 * being deleted still holds its room until it is gone. */
static bool pod_live(mu__kd_t *d, const mu__kpod_t *p)
{
	if (p->terminal || p->evicting || p->gated)
		return false;
	if (!p->shape || p->shape->err)
		return false;
	const char *node = p->node ? p->node : p->an_node;
	if (p->deleting && !node)
		return false;
	return !node || mu_engine_node_find(d->e, node) >= 0;
}

/* Whether the engine has live pod p where the cluster (or our bind in
 * flight) has it: bound to the same node, or unbound. */
static bool pod_agrees(mu__kd_t *d, const mu__kgroup_t *g, const mu__kpod_t *p)
{
	const char *node = p->node ? p->node : p->an_node;
	mu_id_t at = mu_engine_pod_node(d->e, g->ej, p->ps, p->idx);
	return node ? at == mu_engine_node_find(d->e, node) : at < 0;
}

static int cmp_pod(const void *a, const void *b)
{
	const mu__kpod_t *x = *(mu__kpod_t *const *)a, *y = *(mu__kpod_t *const *)b;
	if (x->created_ms != y->created_ms)
		return x->created_ms < y->created_ms ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The first of the pods before `upto` in pod set s, or -1. */
static int32_t set_first(const int32_t *set_of, int32_t upto, int32_t s)
{
	for (int32_t i = 0; i < upto; i++)
		if (set_of[i] == s)
			return i;
	return -1;
}

/* Groups the n live pods by shape (and a workload's part) into pod sets: sets[] (copies of the
 * shapes' pod sets, replicas counted) and set_of[i] for pod i.  The caller
 * owns both arrays (n entries each).  O(n x distinct shapes). */
static int32_t plan_podsets(mu__kpod_t **live, int32_t n, mu_podset_spec_t *sets,
			    int32_t *set_of)
{
	int32_t nsets = 0;
	for (int32_t i = 0; i < n; i++) {
		const mu_podset_spec_t *ps = &mu__kshape_job(live[i]->shape)->podsets[0];
		const char *part = live[i]->wl_part ? live[i]->wl_part : "";
		int32_t s = 0;
		while (s < nsets && (!mu__kpodset_equal(&sets[s], ps) ||
				     strcmp(live[set_first(set_of, i, s)]->wl_part ?
					    live[set_first(set_of, i, s)]->wl_part : "", part)))
			s++;
		if (s == nsets) {
			sets[nsets] = *ps;
			sets[nsets++].replicas = 0;
		}
		sets[s].replicas++;
		set_of[i] = s;
	}
	return nsets;
}

/* A workload group's parts: each part's minimum (what its object says)
 * goes to its pod sets in order, as much as each holds.  Returns the sum
 * given.  O(sets x parts). */
static int32_t part_mins(const mu__kgroup_t *g, mu__kpod_t **live, int32_t n,
			 mu_podset_spec_t *sets, int32_t nsets, const int32_t *set_of)
{
	int32_t sum = 0;
	if (!g->wl)
		return 0;
	for (int k = 0; k < g->wl->nparts; k++) {
		int32_t left = g->wl->parts[k].min;
		for (int32_t s = 0; s < nsets && left > 0; s++) {
			int32_t i = set_first(set_of, n, s);
			if (i < 0 || !live[i]->wl_part || strcmp(live[i]->wl_part, g->wl->parts[k].name))
				continue;
			int32_t m = left < sets[s].replicas ? left : sets[s].replicas;
			sets[s].min_member = m;
			left -= m;
			sum += m;
		}
	}
	return sum;
}

int mu__kd_pod_bound(mu__kd_t *d, mu_id_t ej, int32_t ps, int32_t idx, mu_id_t nid,
		     const mu__kpod_t *p, mu_time_t now)
{
	mu_time_t start = p->started_ms ? p->started_ms : now;
	mu_decision_t dv;
	mu__kdev_give(&p->dev, &dv);
	int rc = mu_engine_pod_bound(d->e, ej, ps, idx, nid, &dv, start);
	if (rc != MU_EINVAL && rc != MU_ESTATE)
		return rc;
	/* Devices annotated by an older plan, or by hand: the pod is there
	 * all the same, so it counts, on devices the engine chooses.  When
	 * the devices were not the trouble this fails as before. */
	if (mu_engine_pod_bound(d->e, ej, ps, idx, nid, NULL, start) != MU_OK)
		return rc;
	mu__klog(&d->log, 1, "pod %s: the devices it is annotated with on %s are %s; "
		 "recorded on devices muster chose | pod=%s", p->key, mu_engine_node_name(d->e, nid),
		 rc == MU_ESTATE ? "held by another pod" : "not a pod of its shape's", p->key);
	return MU_OK;
}

/* Maps g's engine pods to its live pods (in order within each pod set)
 * and replays the bound ones into engine job ej.  g owns epods and
 * ps_first.  O(n). */
static int record_pods(mu__kd_t *d, mu__kgroup_t *g, mu_id_t ej, mu__kpod_t **live, int32_t n,
		       const mu_podset_spec_t *sets, int32_t nsets, const int32_t *set_of, mu_time_t now)
{
	epods_free(g);
	if (n <= 1 && nsets <= 1) { /* one pod: in the record, no blocks */
		g->epod1 = NULL;
		memset(g->psf1, 0, sizeof g->psf1);
		g->epods = &g->epod1;
		g->ps_first = g->psf1;
	} else {
		g->epods = calloc((size_t)n, sizeof *g->epods);
		g->ps_first = calloc((size_t)nsets + 1, sizeof *g->ps_first);
	}
	int32_t *count = calloc((size_t)nsets, sizeof *count);
	if (!g->epods || !g->ps_first || !count) {
		free(count);
		return MU_ENOMEM;
	}
	g->nepods = n;
	g->nps = nsets;
	for (int32_t s = 1; s <= nsets; s++)
		g->ps_first[s] = g->ps_first[s - 1] + sets[s - 1].replicas;
	for (int32_t i = 0; i < n; i++) {
		mu__kpod_t *p = live[i];
		p->ps = set_of[i];
		p->idx = count[set_of[i]]++;
		g->epods[g->ps_first[p->ps] + p->idx] = p;
		const char *node = p->node ? p->node : p->an_node;
		if (!node)
			continue;
		int r = mu__kd_pod_bound(d, ej, p->ps, p->idx, mu_engine_node_find(d->e, node), p, now);
		if (r)
			mu__klog(&d->log, 0, "pod %s: cannot record it on %s: %s | pod=%s", p->key, node,
				 mu_strerror(r), p->key);
	}
	free(count);
	return MU_OK;
}

/* Submits the engine job of g's n live pods (sorted), named "KEY~GEN",
 * with the job-level fields of the first pod's shape, the group's queue
 * and minMember, and replays the pods already bound.  The engine copies
 * the spec; the temporary arrays are freed here.  O(n x shapes). */
static int submit_pods(mu__kd_t *d, mu__kgroup_t *g, mu__kpod_t **live, int32_t n,
		       mu_time_t now)
{
	mu_podset_spec_t *sets = calloc((size_t)n, sizeof *sets);
	int32_t *set_of = calloc((size_t)n, sizeof *set_of);
	char (*names)[16] = calloc((size_t)n, sizeof *names);
	char jname[1100];
	int rc = sets && set_of && names ? MU_OK : MU_ENOMEM;
	mu_id_t ej = -1;
	if (rc == MU_OK) {
		int32_t nsets = plan_podsets(live, n, sets, set_of);
		mu_job_spec_t j = *mu__kshape_job(live[0]->shape);
		/* The class of service of its PriorityClass, for what the pod
		 * does not give itself (muster.io/max-wait, -escalation). */
		json_t *pc = live[0]->pclass ? json_object_get(d->pclasses, live[0]->pclass) : NULL;
		if (pc && !j.max_wait)
			j.max_wait = json_integer_value(json_object_get(pc, "maxWait"));
		if (pc && !j.escalation)
			j.escalation = (mu_escalation_t)json_integer_value(json_object_get(pc,
											 "escalation"));
		for (int32_t s = 0; s < nsets; s++) {
			snprintf(names[s], sizeof names[0], "ps%d", (int)s);
			sets[s].name = names[s];
		}
		mu__kd_ej_name(d, g, jname, sizeof jname);
		j.name = jname;
		j.queue = mu__kd_queue_of(d, g);
		j.namespace = live[0]->ns; /* a group's pods share one */
		j.podsets = sets;
		j.npodsets = (size_t)nsets;
		j.min_member = g->kind == MU__KG_GANG ? (g->min_member < n ? g->min_member : n) : 0;
		int32_t own = part_mins(g, live, n, sets, nsets, set_of);
		if (j.min_member && own > j.min_member)
			j.min_member = own;
		g->sub_min = g->min_member;
		j.submit = g->created_ms ? g->created_ms : now;
		j.duration = 0;
		j.no_move = g->kind == MU__KG_EXTERNAL; /* moved only if recreated */
		for (int32_t i = 0; i < n && !j.no_move; i++)
			j.no_move = !live[i]->ctrl;
		if (g->kind == MU__KG_EXTERNAL) {
			j.preemptible = false;
			memset(&j.topo, 0, sizeof j.topo);
		}
		if ((rc = mu_engine_job_submit(d->e, &j, now, &ej)) == MU_OK &&
		    (rc = mu__kd_set_ej(d, g, ej)) == MU_OK) {
			mu__kd_hz_seen(d, g, &j);
			rc = record_pods(d, g, ej, live, n, sets, nsets, set_of, now);
		}
	}
	free(names);
	free(sets);
	free(set_of);
	return rc;
}

/* A workload group's part with fewer live pods than its own minimum (its
 * controller has not made them yet), into msg; false when none.  Such a
 * gang waits as one below its minMember does.  O(parts x n). */
static bool part_short(const mu__kgroup_t *g, mu__kpod_t **live, int32_t n, char *msg, size_t len)
{
	for (int k = 0; g->wl && k < g->wl->nparts; k++) {
		int32_t have = 0;
		for (int32_t i = 0; i < n; i++)
			have += live[i]->wl_part && !strcmp(live[i]->wl_part, g->wl->parts[k].name);
		if (have < g->wl->parts[k].min) {
			snprintf(msg, len, "%s has %d pods of its part %s, less than its minimum %d",
				 g->wl_key, (int)have, g->wl->parts[k].name, (int)g->wl->parts[k].min);
			return true;
		}
	}
	return false;
}

/* The message of a gang that cannot be submitted yet, to its pods. */
static void group_wait(mu__kd_t *d, mu__kgroup_t *g, const char *msg)
{
	for (int32_t i = 0; i < g->npods; i++)
		if (g->pods[i]->ours && !g->pods[i]->node && pod_live(d, g->pods[i]))
			mu__kd_pod_pending(d, g->pods[i], msg);
}

/* Brings one SINGLE, GANG or EXTERNAL group's engine job up to date. */
void mu__kd_group_sync(mu__kd_t *d, mu__kgroup_t *g, mu_time_t now)
{
	mu__kpod_t **live = calloc((size_t)g->npods + 1, sizeof *live);
	int32_t n = 0, placed = 0;
	bool same = g->ej >= 0;
	char msg[512];
	if (!live)
		return;
	for (int32_t i = 0; i < g->npods; i++) {
		mu__kpod_t *p = g->pods[i];
		if (p->ours && p->shape && p->shape->err && !p->node)
			mu__kd_pod_pending(d, p, p->shape->msg ? p->shape->msg : "the pod cannot be read");
		if (d->nmoves && p->ours && p->ctrl && !p->node && !p->an_node && pod_live(d, p))
			mu__kd_move_claim(d, p, now); /* a replacement takes its place */
		if (!pod_live(d, p))
			continue;
		live[n++] = p;
		placed += p->node || p->an_node;
		same = same && p->ps >= 0 && pod_agrees(d, g, p);
	}
	same = same && n == g->nepods && (g->kind != MU__KG_GANG || g->sub_min == g->min_member) &&
	       !g->reshaped;
	g->reshaped = false;
	if (same) {
		free(live);
		return;
	}
	mu__kd_finish(d, g, now, n == 0); /* no live pod left: its work is done */
	const char *q = n ? mu__kd_queue_of(d, g) : NULL;
	if (n == 0) {
		/* nothing to schedule */
	} else if (g->kind == MU__KG_GANG && !g->has_pg) {
		snprintf(msg, sizeof msg, "pod group %s/%s not found: the gang waits for it", g->ns, g->name);
		group_wait(d, g, msg);
	} else if (g->kind == MU__KG_GANG && n < g->min_member && placed == 0) {
		snprintf(msg, sizeof msg, "pod group %s/%s has %d pods, less than its minMember %d",
			 g->ns, g->name, (int)n, (int)g->min_member);
		group_wait(d, g, msg);
	} else if (g->wl && placed == 0 && part_short(g, live, n, msg, sizeof msg)) {
		group_wait(d, g, msg);
	} else if (mu_engine_queue_find(d->e, q) < 0) {
		snprintf(msg, sizeof msg, "queue %s does not exist", q);
		group_wait(d, g, msg);
	} else {
		qsort(live, (size_t)n, sizeof *live, cmp_pod);
		int rc = submit_pods(d, g, live, n, now);
		if (rc) {
			snprintf(msg, sizeof msg, "muster cannot schedule it: %s", mu_strerror(rc));
			group_wait(d, g, msg);
			mu__klog(&d->log, 0, "group %s: submit failed: %s | group=%s", g->key,
				 mu_strerror(rc), g->key);
		}
	}
	free(live);
}

/* --- DRA retries ------------------------------------------------------------------- */

/* One pod's retry (mu__kmap_each callback): unbound pods of ours with
 * claims, at most DRA_RETRY_MAX a pass (dra.c pins).  Those pinned to nodes
 * are pinned again too: the devices of those nodes may have gone to other
 * pods since, and the engine, which counts them, would then leave the pod
 * pending there for good.  The pod is reshaped only when its pin changed.
 * A pod tried in the current round (p->dra_round) waits for the next, so
 * that with more waiting pods than a pass takes, every one gets its turn. */
#define DRA_RETRY_MAX 32
static void retry_one(void *arg, void *val)
{
	void **a = arg;
	mu__kd_t *d = a[0];
	int *budget = a[1];
	mu__kpod_t *p = val;
	if (*budget <= 0 || !p->ours || !p->dra || p->dra_refused || p->node || p->an_node ||
	    p->deleting || p->terminal || p->dra_round == d->dra_round)
		return;
	(*budget)--;
	p->dra_round = d->dra_round;
	bool was_unfit = p->dra_msg != NULL;
	json_t *pinned = mu__kd_dra_pin(d, p, p->dra);
	mu__kshape_t *sh = pinned ? mu__kshape_get(&d->shapes, pinned, false) : NULL;
	json_decref(pinned);
	if (!sh || sh == p->shape) { /* the same pin (or no memory): nothing to redo */
		mu__kshape_put(&d->shapes, sh);
		return;
	}
	mu__kshape_put(&d->shapes, p->shape);
	p->shape = sh;
	mu__kd_mix_pod(d, p, false);
	if (p->g) {
		p->g->reshaped = true;
		mu__kd_mark_dirty(d, p->g);
	}
	if (!p->dra_msg)
		mu__klog(&d->log, 1, "dra %s: its claims can be allocated %s | pod=%s", p->key,
			 was_unfit ? "now" : "on other nodes now", p->key);
}

void mu__kd_dra_retry(mu__kd_t *d, int64_t now_ms)
{
	if (!d->dra_seen || now_ms - d->dra_retry_ms < 2000)
		return;
	d->dra_retry_ms = now_ms;
	mu__kd_dra_counts(d);
	dra_refeed(d);
	int budget = DRA_RETRY_MAX;
	void *arg[2] = {d, &budget};
	mu__kmap_each(&d->pods, retry_one, arg);
	if (budget > 0) /* everyone waiting had a turn: a new round */
		d->dra_round++;
}

/* --- lifecycle --------------------------------------------------------------------- */

int mu__kd_state_init(mu__kd_t *d)
{
	mu_engine_config_t cfg = d->o->engine; /* moves: move.c */
	int rc = mu__kd_hz_init(d, &cfg);
	if (rc == MU_OK)
		rc = mu_engine_new(&cfg, &d->e);
	if (rc)
		return rc;
	d->queue_objs = json_object();
	d->queue_names = json_object();
	d->pclasses = json_object();
	snprintf(d->default_queue, sizeof d->default_queue, "%s",
		 d->o->default_queue ? d->o->default_queue : "default");
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = EXTERNAL_QUEUE;
	q.priority = INT32_MAX;
	if ((rc = mu_engine_queue_upsert(d->e, &q)))
		return rc;
	q.name = d->default_queue;
	q.priority = 0;
	return d->queue_objs && d->queue_names ? mu_engine_queue_upsert(d->e, &q) : MU_ENOMEM;
}

static void free_pod_cb(void *arg, void *val) { pod_free(arg, val); }
static void free_group_cb(void *arg, void *val) { (void)arg; group_free(val); }
static void free_json_cb(void *arg, void *val) { (void)arg; json_decref(val); }

static void free_node_cb(void *arg, void *val)
{
	(void)arg;
	mu__knode_t *n = val;
	free(n->text);
	free(n->topo);
	free(n->name);
	free(n);
}

void mu__kd_state_release(mu__kd_t *d)
{
	mu__kmap_each(&d->pods, free_pod_cb, d);
	mu__kmap_each(&d->groups, free_group_cb, NULL);
	mu__kmap_each(&d->nodes, free_node_cb, NULL);
	mu__kmap_each(&d->mpgs, free_json_cb, NULL);
	mu__kmap_each(&d->xpgs, free_json_cb, NULL);
	mu__kmap_release(&d->pods);
	mu__kmap_release(&d->groups);
	mu__kmap_release(&d->nodes);
	mu__kmap_release(&d->mpgs);
	mu__kd_pdb_release(d);
	mu__kmap_release(&d->xpgs);
	mu__kshapes_release(&d->shapes);
	json_decref(d->queue_objs);
	json_decref(d->queue_names);
	json_decref(d->pclasses);
	json_decref(d->dra_ext);
	json_decref(d->dra_refeed);
	json_decref(d->dra_cache);
	free(d->ej_group);
	free(d->dirty);
	mu_decisions_release(&d->dec);
	mu__kdecs_release(&d->kdec);
	mu_engine_free(d->e);
}

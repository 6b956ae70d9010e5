/*
 * fleet.c - the fleet: clusters and their models, hub queues, and jobs
 * from submit to finish (dispatch itself is place.c).
 *
 * Each cluster's model is an mu_engine_t with one queue, "fleet", with no
 * preemption, reclaim or consolidation: the hub only sends a job where it
 * fits as things are, and the job then runs in the model as it will run
 * on the cluster.  In a model a job is named NAME.jID.gGENERATION: hub
 * names need not be unique, and an engine never reuses a name, so a job
 * sent again after a requeue needs a new one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet_int.h"


void mu_fleet_config_defaults(mu_fleet_config_t *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->burst_after = 10 * 60 * 1000;
	cfg->burst_priority = INT32_MAX;
	cfg->min_runtime = 60 * 1000; /* as the engine's */
	cfg->reclaim_hold = 5 * 60 * 1000; /* the dispatcher's --start-timeout */
}

void mu_fleet_set_burst_priority(mu_fleet_t *f, int32_t p)
{
	if (f->cfg.burst_priority == p)
		return;
	f->cfg.burst_priority = p;
	f->epoch++;
}

const char *mu_tier_name(mu_tier_t t)
{
	switch (t) {
	case MU_TIER_PRIVATE: return "private";
	case MU_TIER_EDGE: return "edge";
	case MU_TIER_PUBLIC: return "public";
	}
	return "?";
}

int mu_tier_parse(const char *s, mu_tier_t *out)
{
	for (int t = MU_TIER_PRIVATE; s && t <= MU_TIER_PUBLIC; t++)
		if (strcmp(s, mu_tier_name((mu_tier_t)t)) == 0) {
			*out = (mu_tier_t)t;
			return MU_OK;
		}
	return MU_EINVAL;
}

const char *mu_cluster_state_name(mu_cluster_state_t s)
{
	switch (s) {
	case MU_CLUSTER_READY: return "Ready";
	case MU_CLUSTER_UNREACHABLE: return "Unreachable";
	case MU_CLUSTER_DRAINING: return "Draining";
	}
	return "?";
}

const char *mu_fleet_why_name(mu_fleet_why_t w)
{
	static const char *const names[MU_FW_COUNT] = {
		"", "New", "NoMatchingCluster", "ClustersNotReady", "QueueLimit",
		"ClusterCap", "NoClusterFits", "LargerThanAnyCluster", "BurstWait",
		"MinResourcesNotFree", "OverQuota",
	};
	return w >= 0 && w < MU_FW_COUNT ? names[w] : "?";
}

int mu_fleet_new(const mu_fleet_config_t *cfg, mu_fleet_t **out)
{
	mu_fleet_t *f = calloc(1, sizeof *f);
	if (!f)
		return MU_ENOMEM;
	if (cfg)
		f->cfg = *cfg;
	else
		mu_fleet_config_defaults(&f->cfg);
	if (f->cfg.burst_after < 0)
		f->cfg.burst_after = 0;
	f->decay_at = MU_TIME_NONE;
	*out = f;
	return MU_OK;
}

/* Frees n owned labels and their array. */
static void labels_free(mu_label_t *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)l[i].key);
		free((char *)l[i].value);
	}
	free(l);
}

static void cluster_release(mu__cluster_t *c)
{
	labels_free(c->labels, c->nlabels);
	free(c->taken);
	free(c->shares);
	free(c->nom);
	free(c->name);
	mu__fleet_dra_release(c);
	mu_engine_free(c->eng);
}

void mu_fleet_free(mu_fleet_t *f)
{
	if (!f)
		return;
	for (int32_t i = 0; i < f->nclusters; i++)
		cluster_release(&f->clusters[i]);
	for (int32_t i = 0; i < f->nqueues; i++) {
		free(f->queues[i].name);
		free(f->queues[i].parent_name);
		free(f->queues[i].line);
		free(f->queues[i].caps);
	}
	for (int32_t j = 0; f->any_dra && j < f->njobs; j++)
		json_decref(f->jobs[j].dra_why);
	for (int32_t j = 0; j < f->njobs; j++)
		free(f->jobs[j].own); /* a shrunk job's spec (one block) */
	free(f->clusters);
	free(f->queues);
	free(f->jobs);
	free(f);
}

static char *dup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

/* Fills c (zeroed) from spec s: copies, and an engine with the one queue. */
static int cluster_init(const mu_fleet_t *f, mu__cluster_t *c,
			const mu_cluster_spec_t *s)
{
	if (!(c->name = dup(s->name)))
		return MU_ENOMEM;
	c->labels = calloc(s->nlabels ? s->nlabels : 1, sizeof *c->labels);
	if (!c->labels)
		return MU_ENOMEM;
	for (size_t i = 0; i < s->nlabels; i++, c->nlabels++) {
		c->labels[i].key = dup(s->labels[i].key);
		c->labels[i].value = dup(s->labels[i].value);
		if (!c->labels[i].key || !c->labels[i].value) {
			c->nlabels++;
			return MU_ENOMEM;
		}
	}
	c->tier = s->tier;
	c->cost_gpu_hour = s->cost_gpu_hour;
	c->no_shrink = s->no_shrink;
	c->hold_job = -1;
	c->nom_job = -1;
	mu_engine_config_t ec;
	mu_engine_config_defaults(&ec);
	ec.score = f->cfg.score;
	ec.preemption = ec.reclaim = ec.consolidate = false;
	ec.backfill = MU_BACKFILL_GREEDY;
	int rc = mu_engine_new(&ec, &c->eng);
	if (rc)
		return rc;
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = MU__FLEET_QUEUE;
	for (int r = 0; r < MU_RES_MAX; r++) /* quotas are the hub's */
		q.deserved.v[r] = INT64_MAX / 4;
	return mu_engine_queue_upsert(c->eng, &q);
}

int mu_fleet_cluster_add(mu_fleet_t *f, const mu_cluster_spec_t *s, int32_t *id)
{
	if (!s || !s->name || !*s->name || (s->nlabels && !s->labels) ||
	    s->tier < MU_TIER_PRIVATE || s->tier > MU_TIER_PUBLIC ||
	    !(s->cost_gpu_hour >= 0))
		return MU_EINVAL;
	for (size_t i = 0; i < s->nlabels; i++)
		if (!s->labels[i].key || !s->labels[i].value)
			return MU_EINVAL;
	if (mu_fleet_cluster_find(f, s->name) >= 0)
		return MU_EEXIST;
	if (f->nclusters >= MU_FLEET_MAX_CLUSTERS)
		return MU_ELIMIT;
	int rc = mu__fleet_grow((void **)&f->clusters, &f->clusters_cap,
				f->nclusters + 1, sizeof *f->clusters);
	if (rc)
		return rc;
	mu__cluster_t *c = &f->clusters[f->nclusters];
	memset(c, 0, sizeof *c);
	if ((rc = cluster_init(f, c, s)) != MU_OK) {
		cluster_release(c);
		return rc;
	}
	if (id)
		*id = f->nclusters;
	f->nclusters++;
	f->epoch++;
	return MU_OK;
}

int mu_fleet_cluster_update(mu_fleet_t *f, int32_t id, const mu_cluster_spec_t *s)
{
	if (id < 0 || id >= f->nclusters)
		return MU_ENOENT;
	if (!s || (s->nlabels && !s->labels) || s->tier < MU_TIER_PRIVATE ||
	    s->tier > MU_TIER_PUBLIC || !(s->cost_gpu_hour >= 0))
		return MU_EINVAL;
	for (size_t i = 0; i < s->nlabels; i++)
		if (!s->labels[i].key || !s->labels[i].value)
			return MU_EINVAL;
	mu_label_t *l = calloc(s->nlabels ? s->nlabels : 1, sizeof *l);
	if (!l)
		return MU_ENOMEM;
	for (size_t i = 0; i < s->nlabels; i++) {
		l[i].key = dup(s->labels[i].key);
		l[i].value = dup(s->labels[i].value);
		if (!l[i].key || !l[i].value) {
			labels_free(l, i + 1);
			return MU_ENOMEM;
		}
	}
	mu__cluster_t *c = &f->clusters[id];
	labels_free(c->labels, c->nlabels);
	c->labels = l;
	c->nlabels = s->nlabels;
	c->tier = s->tier;
	c->cost_gpu_hour = s->cost_gpu_hour;
	c->no_shrink = s->no_shrink;
	f->epoch++; /* a job refused by its labels or tier may fit now */
	return MU_OK;
}

int32_t mu_fleet_cluster_find(const mu_fleet_t *f, const char *name)
{
	for (int32_t i = 0; name && i < f->nclusters; i++)
		if (strcmp(f->clusters[i].name, name) == 0)
			return i;
	return -1;
}

int32_t mu_fleet_nclusters(const mu_fleet_t *f)
{
	return f->nclusters;
}

int mu_fleet_cluster_set_state(mu_fleet_t *f, int32_t c, mu_cluster_state_t s)
{
	if (c < 0 || c >= f->nclusters)
		return MU_ENOENT;
	if (s < MU_CLUSTER_READY || s > MU_CLUSTER_DRAINING)
		return MU_EINVAL;
	if (s == MU_CLUSTER_READY && f->clusters[c].state != s)
		f->epoch++;
	f->clusters[c].state = s;
	return MU_OK;
}

int mu_fleet_cluster_set_label(mu_fleet_t *f, int32_t c, const char *key, const char *value)
{
	if (c < 0 || c >= f->nclusters)
		return MU_ENOENT;
	if (!key || !*key)
		return MU_EINVAL;
	mu__cluster_t *k = &f->clusters[c];
	size_t i = 0;
	while (i < k->nlabels && strcmp(k->labels[i].key, key))
		i++;
	if (i < k->nlabels && value && !strcmp(k->labels[i].value, value))
		return MU_OK; /* as it was */
	if (i == k->nlabels && !value)
		return MU_OK;
	if (!value) { /* removed: the last takes its place */
		free((char *)k->labels[i].key);
		free((char *)k->labels[i].value);
		k->labels[i] = k->labels[--k->nlabels];
	} else {
		char *v = dup(value), *kk = i == k->nlabels ? dup(key) : NULL;
		mu_label_t *l = i == k->nlabels ?
			realloc(k->labels, (k->nlabels + 1) * sizeof *l) : k->labels;
		if (!v || (i == k->nlabels && (!kk || !l))) {
			free(v);
			free(kk);
			if (l)
				k->labels = l;
			return MU_ENOMEM;
		}
		k->labels = l;
		if (i == k->nlabels) {
			k->labels[i].key = kk;
			k->nlabels++;
		} else {
			free((char *)k->labels[i].value);
		}
		k->labels[i].value = v;
	}
	f->epoch++; /* a job its selector kept out may fit now */
	return MU_OK;
}

const mu_engine_t *mu_fleet_cluster_engine(const mu_fleet_t *f, int32_t c)
{
	return c >= 0 && c < f->nclusters ? f->clusters[c].eng : NULL;
}

/* Sets what model node id of k has taken out (NULL: nothing), keeping
 * k->taken_sum.  O(resources). */
static int taken_set(mu__cluster_t *k, mu_id_t id, const mu_res_t *t)
{
	if (id < 0)
		return MU_OK;
	if (id >= k->taken_cap) {
		if (!t)
			return MU_OK;
		int32_t cap = k->taken_cap;
		int rc = mu__fleet_grow((void **)&k->taken, &cap, (int32_t)id + 1, sizeof *k->taken);
		if (rc)
			return rc;
		memset(k->taken + k->taken_cap, 0, (size_t)(cap - k->taken_cap) * sizeof *k->taken);
		k->taken_cap = cap;
	}
	mu_res_t old = mu_res_acct(&k->taken[id]), now = {{0}};
	if (t)
		now = mu_res_acct(t);
	for (int r = 0; r < MU_RES_MAX; r++)
		k->taken_sum.v[r] += now.v[r] - old.v[r];
	if (t)
		k->taken[id] = *t;
	else
		memset(&k->taken[id], 0, sizeof k->taken[id]);
	return MU_OK;
}

int mu_fleet_node_upsert(mu_fleet_t *f, int32_t c, const mu_node_spec_t *n)
{
	if (c < 0 || c >= f->nclusters)
		return MU_ENOENT;
	mu__cluster_t *k = &f->clusters[c];
	mu_id_t id = -1;
	int rc = mu_engine_node_upsert(k->eng, n, &id);
	if (rc)
		return rc;
	if ((rc = taken_set(k, id, NULL)) != MU_OK)
		return rc;
	if (n->alloc.v[MU_RES_GPU] > k->max_node_gpu)
		k->max_node_gpu = n->alloc.v[MU_RES_GPU];
	if (n->alloc.v[MU_RES_CPU] > k->max_node_cpu)
		k->max_node_cpu = n->alloc.v[MU_RES_CPU];
	f->epoch++;
	return MU_OK;
}

int mu_fleet_node_upsert_used(mu_fleet_t *f, int32_t c, const mu_node_spec_t *n,
			      const mu_res_t *used)
{
	if (c < 0 || c >= f->nclusters)
		return MU_ENOENT;
	if (!n || !used)
		return mu_fleet_node_upsert(f, c, n);
	mu_node_spec_t m = *n;
	for (int r = 0; r < MU_RES_NAMED0; r++) {
		if (used->v[r] < 0)
			return MU_ERANGE;
		m.alloc.v[r] = n->alloc.v[r] > used->v[r] ? n->alloc.v[r] - used->v[r] : 0;
	}
	/* the devices the fleet's own jobs hold in the model stay: fewer
	 * GPUs than that is MU_ESTATE, so one more is tried up to all */
	int rc;
	while ((rc = mu_fleet_node_upsert(f, c, &m)) == MU_ESTATE &&
	       m.alloc.v[MU_RES_GPU] < n->alloc.v[MU_RES_GPU])
		m.alloc.v[MU_RES_GPU]++;
	if (rc)
		return rc;
	mu__cluster_t *k = &f->clusters[c];
	if (n->alloc.v[MU_RES_GPU] > k->max_node_gpu)
		k->max_node_gpu = n->alloc.v[MU_RES_GPU];
	if (n->alloc.v[MU_RES_CPU] > k->max_node_cpu)
		k->max_node_cpu = n->alloc.v[MU_RES_CPU];
	mu_res_t t = {{0}};
	for (int r = 0; r < MU_RES_NAMED0; r++)
		t.v[r] = n->alloc.v[r] - m.alloc.v[r];
	return taken_set(k, mu_engine_node_find(k->eng, n->name), &t);
}

/* Takes the shares held on model node id out of k's model (their jobs
 * withdrawn and forgotten: they are no run, and leave no history).
 * O(shares of k). */
static void shares_drop(mu__cluster_t *k, mu_id_t id, mu_time_t now)
{
	for (int32_t i = 0; id >= 0 && i < k->nshares;) {
		if (k->shares[i].node != id) {
			i++;
			continue;
		}
		if (mu_engine_job_withdraw(k->eng, k->shares[i].job, now) == MU_OK)
			mu_engine_job_forget(k->eng, k->shares[i].job);
		k->shares[i] = k->shares[--k->nshares];
	}
}

/* Binds one share (a one-pod job asking its milli-GPU) on model node id
 * of k: on its device when named and it has the room, else where the
 * engine's cycle would put it (no device when none has the room).
 * O(GPUs + resources). */
static int share_bind(mu__cluster_t *k, mu_id_t id, const mu_fleet_share_t *sh, mu_time_t now)
{
	int rc = mu__fleet_grow((void **)&k->shares, &k->shares_cap, k->nshares + 1,
				sizeof *k->shares);
	if (rc)
		return rc;
	char name[64];
	snprintf(name, sizeof name, "~share.%u", k->share_seq++);
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = 1;
	ps.req.v[MU_RES_GPU_MILLI] = sh->milli;
	mu_job_spec_t js;
	memset(&js, 0, sizeof js);
	js.name = name;
	js.queue = MU__FLEET_QUEUE;
	js.podsets = &ps;
	js.npodsets = 1;
	js.submit = now;
	js.never_preempt = js.no_move = true;
	mu_id_t ej;
	if ((rc = mu_engine_job_submit(k->eng, &js, now, &ej)) != MU_OK)
		return rc;
	mu_decision_t dev;
	memset(&dev, 0, sizeof dev);
	dev.numa = dev.nic = -1;
	dev.gpus = sh->device >= 0 ? (uint64_t)1 << sh->device : 0;
	rc = sh->device >= 0 ? mu_engine_pod_bound(k->eng, ej, 0, 0, id, &dev, now) : MU_EINVAL;
	if (rc == MU_EINVAL || rc == MU_ESTATE) /* not there (now): the engine's choice */
		rc = mu_engine_pod_bound(k->eng, ej, 0, 0, id, NULL, now);
	if (rc) {
		if (mu_engine_job_withdraw(k->eng, ej, now) == MU_OK)
			mu_engine_job_forget(k->eng, ej);
		return rc;
	}
	k->shares[k->nshares++] = (struct mu__share_job){id, ej};
	return MU_OK;
}

int mu_fleet_node_upsert_shared(mu_fleet_t *f, int32_t c, const mu_node_spec_t *n,
				const mu_res_t *used, const mu_fleet_share_t *shares,
				int32_t nshares, mu_time_t now)
{
	if (c < 0 || c >= f->nclusters)
		return MU_ENOENT;
	if (!n || nshares < 0 || (nshares && !shares))
		return MU_EINVAL;
	for (int32_t i = 0; i < nshares; i++)
		if (shares[i].milli < 1 || shares[i].milli > 999 || shares[i].device < -1 ||
		    shares[i].device >= MU_MAX_GPUS)
			return MU_EINVAL;
	mu__cluster_t *k = &f->clusters[c];
	shares_drop(k, mu_engine_node_find(k->eng, n->name), now);
	int rc = mu_fleet_node_upsert_used(f, c, n, used);
	if (rc)
		return rc;
	mu_id_t id = mu_engine_node_find(k->eng, n->name);
	for (int32_t i = 0; i < nshares && rc == MU_OK; i++)
		rc = share_bind(k, id, &shares[i], now);
	f->epoch++;
	return rc;
}

int mu_fleet_node_remove(mu_fleet_t *f, int32_t c, const char *name, mu_time_t now)
{
	if (c < 0 || c >= f->nclusters)
		return MU_ENOENT;
	mu__cluster_t *k = &f->clusters[c];
	mu_id_t id = mu_engine_node_find(k->eng, name);
	shares_drop(k, id, now);
	int rc = mu_engine_node_remove(k->eng, name, now);
	if (rc == MU_OK)
		taken_set(k, id, NULL);
	return rc;
}

int mu_fleet_topology_upsert(mu_fleet_t *f, int32_t c, const mu_topology_spec_t *t)
{
	if (c < 0 || c >= f->nclusters)
		return MU_ENOENT;
	f->epoch++;
	return mu_engine_topology_upsert(f->clusters[c].eng, t);
}

int mu_fleet_queue_upsert(mu_fleet_t *f, const mu_queue_spec_t *s)
{
	if (!s || !s->name || !*s->name)
		return MU_EINVAL;
	if (s->parent && (!*s->parent || !strcmp(s->parent, s->name)))
		return MU_EINVAL;
	for (int r = 0; r < MU_RES_MAX; r++)
		if (s->deserved.v[r] < 0 || s->limit.v[r] < 0 || !(s->weight[r] >= 0))
			return MU_ERANGE;
	int32_t i = mu__hubq_find(f, s->name);
	if (i < 0) {
		int rc = mu__fleet_grow((void **)&f->queues, &f->queues_cap,
					f->nqueues + 1, sizeof *f->queues);
		if (rc)
			return rc;
		i = f->nqueues;
		memset(&f->queues[i], 0, sizeof f->queues[i]);
		if (!(f->queues[i].name = dup(s->name)))
			return MU_ENOMEM;
		f->queues[i].sorted = true;
		f->queues[i].parent = -1;
		for (int r = 0; r < MU_RES_MAX; r++)
			f->queues[i].decay_factor[r] = 1.0;
		f->nqueues++;
	}
	mu__hubq_t *q = &f->queues[i];
	char *had = q->parent_name, *pn = s->parent ? dup(s->parent) : NULL;
	if (s->parent && !pn)
		return MU_ENOMEM;
	q->parent_name = pn;
	int rc = mu__hubq_link(f);
	if (rc) { /* a loop: the old parent stays */
		q->parent_name = had;
		free(pn);
		return rc;
	}
	free(had);
	q->priority = s->priority;
	q->deserved = s->deserved;
	q->limit = s->limit;
	memcpy(q->weight, s->weight, sizeof q->weight);
	f->epoch++;
	f->usage_gen++;
	return MU_OK;
}

/* Queue i's cap on cluster c, made (no cap on anything, what already runs
 * there counted) when it has none; NULL without memory.  O(jobs) when
 * made. */
static mu__cap_t *cap_get(mu_fleet_t *f, int32_t i, int32_t c)
{
	mu__hubq_t *q = &f->queues[i];
	for (int32_t k = 0; k < q->ncaps; k++)
		if (q->caps[k].cluster == c)
			return &q->caps[k];
	mu__cap_t *v = realloc(q->caps, (size_t)(q->ncaps + 1) * sizeof *v);
	if (!v)
		return NULL;
	q->caps = v;
	mu__cap_t *k = &v[q->ncaps++];
	*k = (mu__cap_t){.cluster = c, .max_jobs = -1};
	for (int r = 0; r < MU_RES_MAX; r++)
		k->cap.v[r] = MU_RES_UNLIMITED;
	for (int32_t j = 0; j < f->njobs; j++) {
		const mu__fjob_t *fj = &f->jobs[j];
		if (fj->state == MU_FJ_DISPATCHED && fj->queue == i && fj->cluster == c) {
			mu_res_t a = mu__job_acct(fj->spec.job);
			for (int r = 0; r < MU_RES_MAX; r++)
				k->used.v[r] += a.v[r];
			k->jobs++;
		}
	}
	return k;
}

int mu_fleet_queue_cap(mu_fleet_t *f, const char *queue, int32_t c,
		       const mu_res_t *cap)
{
	int32_t i = mu__hubq_find(f, queue);
	if (i < 0 || c < 0 || c >= f->nclusters)
		return MU_ENOENT;
	mu__cap_t *k = cap_get(f, i, c);
	if (!k)
		return MU_ENOMEM;
	k->cap = *cap;
	f->epoch++;
	return MU_OK;
}

int mu_fleet_queue_cap_jobs(mu_fleet_t *f, const char *queue, int32_t c, int64_t max_jobs)
{
	int32_t i = mu__hubq_find(f, queue);
	if (i < 0 || c < 0 || c >= f->nclusters)
		return MU_ENOENT;
	if (max_jobs < -1)
		return MU_EINVAL;
	mu__cap_t *k = cap_get(f, i, c);
	if (!k)
		return MU_ENOMEM;
	k->max_jobs = max_jobs;
	f->epoch++;
	return MU_OK;
}

int32_t mu_fleet_nqueues(const mu_fleet_t *f)
{
	return f->nqueues;
}

int mu_fleet_queue_info(const mu_fleet_t *f, int32_t i, mu_fleet_queue_info_t *out)
{
	if (i < 0 || i >= f->nqueues)
		return MU_ENOENT;
	const mu__hubq_t *q = &f->queues[i];
	*out = (mu_fleet_queue_info_t){.name = q->name, .priority = q->priority,
		.deserved = q->deserved, .limit = q->limit, .used = q->used,
		.fair = q->fair, .demand = q->demand, .used_np = q->used_np,
		.queued = q->queued, .running = q->running};
	memcpy(out->decayed, q->decayed, sizeof out->decayed);
	for (int r = 0; r < MU_RES_MAX; r++)
		out->decay_factor[r] = f->cfg.usage_half_life > 0 ? q->decay_factor[r] : 1.0;
	return MU_OK;
}

int mu_fleet_job_submit(mu_fleet_t *f, const mu_fleet_job_spec_t *s,
			mu_time_t now, mu_id_t *id)
{
	if (!s || !s->job || !s->job->name || !s->job->queue || s->job->npodsets == 0 ||
	    (s->ncluster_selector && !s->cluster_selector) ||
	    (s->nlocality && !s->locality) ||
	    (s->dra && (!json_is_array(s->dra) || json_array_size(s->dra) > s->job->npodsets)))
		return MU_EINVAL;
	int32_t q = mu__hubq_find(f, s->job->queue);
	if (q < 0)
		return MU_ENOENT;
	int rc = mu__fleet_grow((void **)&f->jobs, &f->jobs_cap, f->njobs + 1,
				sizeof *f->jobs);
	if (rc)
		return rc;
	int32_t j = f->njobs;
	mu__fjob_t *fj = &f->jobs[j];
	*fj = (mu__fjob_t){.spec = *s, .queue = q, .state = MU_FJ_QUEUED,
		.why = MU_FW_NEW, .cluster = -1, .closest = -1, .ejob = -1,
		.submit = s->job->submit != MU_TIME_NONE ? s->job->submit : now,
		.dispatched = MU_TIME_NONE, .fail_epoch = UINT64_MAX, .reclaimed_for = -1,
		.rc_epoch = UINT64_MAX, .hold = -1, .disrupt = -1};
	if ((rc = mu__hubq_enqueue(&f->queues[q], fj, j)) != MU_OK)
		return rc;
	f->any_dra |= s->dra != NULL;
	f->queues[q].queued++;
	mu_res_t a;
	mu__job_acct_core(s->job, &a);
	for (int r = 0; r < MU_RES_NAMED0; r++)
		f->queues[q].pend.v[r] += a.v[r];
	f->njobs++;
	if (id)
		*id = j;
	return MU_OK;
}

int32_t mu_fleet_njobs(const mu_fleet_t *f)
{
	return f->njobs;
}

int mu_fleet_job_info(const mu_fleet_t *f, mu_id_t j, mu_fleet_job_info_t *out)
{
	if (j < 0 || j >= f->njobs)
		return MU_ENOENT;
	const mu__fjob_t *fj = &f->jobs[j];
	mu_res_t a = mu__job_acct(fj->spec.job);
	*out = (mu_fleet_job_info_t){.name = fj->spec.job->name,
		.state = (mu_fleet_job_state_t)fj->state, .queue = fj->queue,
		.cluster = fj->state == MU_FJ_DISPATCHED ? fj->cluster : -1,
		.generation = fj->gen, .submit = fj->submit,
		.dispatched = fj->dispatched, .gpu_milli = a.v[MU_RES_GPU],
		.why = fj->state == MU_FJ_QUEUED ? (mu_fleet_why_t)fj->why : MU_FW_NONE,
		.closest = fj->closest, .reclaimed_for = fj->reclaimed_for,
		.victims = fj->victims, .held = fj->hold,
		.shrunk = fj->state == MU_FJ_DISPATCHED ? fj->off : 0,
		.shrinking = fj->reclaim_out ? fj->shrink_out : 0};
	return MU_OK;
}

int mu_fleet_job_disruptions(mu_fleet_t *f, mu_id_t j, int32_t allowed)
{
	if (!f || j < 0 || j >= f->njobs)
		return MU_ENOENT;
	f->jobs[j].disrupt = allowed < 0 ? -1 : allowed;
	return MU_OK;
}

int mu_fleet_job_mark_victim(mu_fleet_t *f, mu_id_t j)
{
	if (!f || j < 0 || j >= f->njobs)
		return MU_ENOENT;
	f->jobs[j].was_victim = true;
	return MU_OK;
}

/* --- Elastic jobs shrunk (round 17) --- */

int32_t mu__fjob_surplus(const mu_fleet_t *f, const mu__fjob_t *fj)
{
	const mu_job_spec_t *s = fj->spec.job;
	if (!fj->spec.shrinkable || s->npodsets != 1 || fj->spec.dra ||
	    fj->state != MU_FJ_DISPATCHED || f->clusters[fj->cluster].no_shrink)
		return 0;
	int32_t floor = s->min_member > 0 ? s->min_member : s->podsets[0].replicas;
	mu_job_info_t ji;
	if (mu_engine_job_info(f->clusters[fj->cluster].eng, fj->ejob, &ji) != MU_OK ||
	    ji.state != MU_JOB_RUNNING)
		return 0;
	return ji.bound > floor ? ji.bound - floor : 0;
}

mu_res_t mu__fjob_pod_acct(const mu__fjob_t *fj)
{
	mu_job_spec_t one = *fj->spec.job;
	mu_podset_spec_t ps = one.podsets[0];
	ps.replicas = 1;
	one.podsets = &ps;
	one.npodsets = 1;
	return mu__job_acct(&one);
}

/* fj's spec with `pods` fewer pods in its pod set: own (one block, the
 * spec and its pod set; the rest the caller's), orig kept.  MU_ENOMEM. */
static int spec_shrink(mu__fjob_t *fj, int32_t pods)
{
	mu_job_spec_t *o = malloc(sizeof *o + sizeof *o->podsets);
	if (!o)
		return MU_ENOMEM;
	*o = *fj->spec.job;
	o->podsets = (mu_podset_spec_t *)(o + 1);
	o->podsets[0] = fj->spec.job->podsets[0];
	o->podsets[0].replicas -= pods;
	if (!fj->orig)
		fj->orig = fj->spec.job;
	free(fj->own);
	fj->own = o;
	fj->spec.job = o;
	fj->off += pods;
	return MU_OK;
}

/* Undoes fj's shrink on its usage and spec (before its release, which
 * charges back the whole job).  O(resources x depth). */
static void unshrink(mu_fleet_t *f, mu__fjob_t *fj)
{
	if (!fj->own)
		return;
	mu_res_t now = mu__job_acct(fj->spec.job), all = mu__job_acct(fj->orig);
	for (int r = 0; r < MU_RES_MAX; r++)
		all.v[r] -= now.v[r];
	mu__hubq_usage(f, fj->queue, fj->cluster, &all, +1, fj->spec.job->preemptible);
	fj->spec.job = fj->orig;
	free(fj->own);
	fj->own = NULL;
	fj->orig = NULL;
	fj->off = 0;
}

/* Replaces fj's model job on its cluster by one of its (shrunk) spec,
 * its first `keep` bound pods bound where they were (the what-if took
 * the last ones off).  O(its pods + one submit). */
static int model_shrink(mu_fleet_t *f, mu__fjob_t *fj, mu_time_t now)
{
	mu__cluster_t *k = &f->clusters[fj->cluster];
	int32_t n = fj->spec.job->podsets[0].replicas;
	mu_id_t *at = malloc((size_t)n * sizeof *at);
	if (!at)
		return MU_ENOMEM;
	int32_t kept = 0;
	for (int32_t p = 0; kept < n && p < n + fj->off; p++) {
		mu_id_t node = mu_engine_pod_node(k->eng, fj->ejob, 0, p);
		if (node >= 0)
			at[kept++] = node;
	}
	mu_job_info_t ji;
	int rc = mu_engine_job_info(k->eng, fj->ejob, &ji);
	mu_time_t start = rc == MU_OK && ji.start != MU_TIME_NONE ? ji.start : now;
	if (rc == MU_OK)
		rc = mu_engine_job_withdraw(k->eng, fj->ejob, now);
	if (rc == MU_OK)
		rc = mu_engine_job_forget(k->eng, fj->ejob);
	mu_job_spec_t s = *fj->spec.job;
	char name[512];
	snprintf(name, sizeof name, "%.400s.j%d.g%u.s%d", s.name, (int)(fj - f->jobs), fj->gen,
		 fj->off);
	s.name = name;
	s.queue = MU__FLEET_QUEUE;
	s.submit = fj->dispatched;
	mu_id_t ej = -1;
	if (rc == MU_OK)
		rc = mu_engine_job_submit(k->eng, &s, now, &ej);
	for (int32_t p = 0; rc == MU_OK && p < kept; p++)
		rc = mu_engine_pod_bound(k->eng, ej, 0, p, at[p], NULL, start);
	free(at);
	fj->ejob = ej;
	return rc;
}

int mu_fleet_job_shrink(mu_fleet_t *f, mu_id_t j, int32_t pods, mu_time_t now)
{
	if (!f || j < 0 || j >= f->njobs)
		return MU_ENOENT;
	mu__fjob_t *fj = &f->jobs[j];
	if (fj->state != MU_FJ_DISPATCHED)
		return MU_ESTATE;
	const mu_job_spec_t *s = fj->spec.job;
	int32_t floor = s->npodsets == 1 && s->min_member > 0 ? s->min_member : INT32_MAX;
	if (pods < 1 || !fj->spec.shrinkable || fj->spec.dra || s->npodsets != 1 ||
	    s->podsets[0].replicas - pods < floor)
		return MU_EINVAL;
	mu_res_t before = mu__job_acct(s);
	int rc = spec_shrink(fj, pods);
	if (rc)
		return rc;
	mu_res_t d = mu__job_acct(fj->spec.job);
	for (int r = 0; r < MU_RES_MAX; r++)
		d.v[r] = before.v[r] - d.v[r];
	mu__hubq_usage(f, fj->queue, fj->cluster, &d, -1, fj->spec.job->preemptible);
	rc = model_shrink(f, fj, now);
	if (fj->reclaim_out && fj->shrink_out > 0) { /* its claimant's room is there */
		f->jobs[fj->reclaimed_for].victims--;
		fj->reclaim_out = false;
		fj->shrink_out = 0;
		fj->reclaimed_for = -1; /* running still: a victim again later */
	}
	f->epoch++;
	f->usage_gen++;
	return rc;
}

/* Frees a dispatched job on its cluster and its queue's usage; finish
 * records the run, else it is withdrawn.  O(pods + queue lines). */
static int job_release(mu_fleet_t *f, mu__fjob_t *fj, mu_time_t now, bool finish)
{
	mu__cluster_t *c = &f->clusters[fj->cluster];
	int rc = finish ? mu_engine_job_finish(c->eng, fj->ejob, now) :
		mu_engine_job_withdraw(c->eng, fj->ejob, now);
	if (rc == MU_OK) /* nothing keeps its id: the next commit takes it */
		rc = mu_engine_job_forget(c->eng, fj->ejob);
	if (rc && rc != MU_ESTATE)
		return rc;
	mu__fleet_dra_drop(f, (int32_t)(fj - f->jobs), fj->cluster); /* its devices are free */
	unshrink(f, fj); /* whole again: charged back below as it was */
	mu_res_t a = mu__job_acct(fj->spec.job);
	mu__hubq_charge(f, fj->queue, fj->cluster, &a, -1, fj->spec.job->preemptible);
	c->running--;
	fj->ejob = -1;
	fj->disrupt = -1; /* its copy's budgets went with it */
	if (fj->reclaim_out) { /* a victim taken back: its claimant's room */
		fj->reclaim_out = false;
		fj->shrink_out = 0;
		f->jobs[fj->reclaimed_for].victims--;
	}
	f->epoch++;
	f->usage_gen++;
	return MU_OK;
}

int mu_fleet_job_started(mu_fleet_t *f, mu_id_t j)
{
	if (!f || j < 0 || j >= f->njobs)
		return MU_ENOENT;
	mu__fjob_t *fj = &f->jobs[j];
	if (fj->state != MU_FJ_DISPATCHED)
		return MU_ESTATE;
	if (fj->spec.dra) {
		mu__fleet_dra_drop(f, (int32_t)j, fj->cluster);
		f->epoch++; /* devices may count once now */
	}
	return MU_OK;
}

int mu_fleet_job_finish(mu_fleet_t *f, mu_id_t j, mu_time_t now)
{
	if (j < 0 || j >= f->njobs)
		return MU_ENOENT;
	mu__fjob_t *fj = &f->jobs[j];
	if (fj->state == MU_FJ_FINISHED)
		return MU_ESTATE;
	mu__fleet_hold_drop(f, (int32_t)j); /* deleted: its room is free */
	if (fj->state == MU_FJ_DISPATCHED) {
		int rc = job_release(f, fj, now, true);
		if (rc)
			return rc; /* charge(-1) counted it queued again */
	}
	f->queues[fj->queue].queued--;
	mu_res_t a;
	mu__job_acct_core(fj->spec.job, &a);
	for (int r = 0; r < MU_RES_NAMED0; r++)
		f->queues[fj->queue].pend.v[r] -= a.v[r];
	fj->state = MU_FJ_FINISHED;
	return MU_OK;
}

int mu_fleet_job_requeue(mu_fleet_t *f, mu_id_t j, mu_time_t now)
{
	if (j < 0 || j >= f->njobs)
		return MU_ENOENT;
	mu__fjob_t *fj = &f->jobs[j];
	if (fj->state != MU_FJ_DISPATCHED)
		return MU_ESTATE;
	int rc = job_release(f, fj, now, false);
	if (rc)
		return rc;
	fj->state = MU_FJ_QUEUED;
	fj->why = MU_FW_NEW;
	fj->fail_epoch = UINT64_MAX;
	return mu__hubq_enqueue(&f->queues[fj->queue], fj, j);
}

int mu_fleet_job_adopt(mu_fleet_t *f, mu_id_t j, int32_t c, uint32_t gen,
		       mu_time_t now)
{
	if (j < 0 || j >= f->njobs || c < 0 || c >= f->nclusters)
		return MU_ENOENT;
	mu__fjob_t *fj = &f->jobs[j];
	if (fj->state != MU_FJ_QUEUED)
		return MU_ESTATE;
	/* a copy shrunk before the restart: placed as it runs (round 17) */
	const mu_job_spec_t *s = fj->spec.job;
	int32_t off = fj->spec.shrunk;
	bool shrunk = off > 0 && fj->spec.shrinkable && !fj->spec.dra && s->npodsets == 1 &&
		      s->min_member > 0 && s->podsets[0].replicas - off >= s->min_member;
	mu_res_t all = mu__job_acct(s);
	if (shrunk) {
		int rc = spec_shrink(fj, off);
		if (rc)
			return rc;
	}
	bool ok;
	int rc = mu__fleet_commit(f, (int32_t)j, c, gen, now, false, &ok);
	if (shrunk && rc == MU_OK && fj->state == MU_FJ_DISPATCHED) {
		/* as if dispatched whole, then shrunk: the whole job off pend */
		mu_res_t now_a = mu__job_acct(fj->spec.job);
		for (int r = 0; r < MU_RES_NAMED0; r++)
			f->queues[fj->queue].pend.v[r] -= all.v[r] - now_a.v[r];
	} else if (shrunk && fj->state != MU_FJ_DISPATCHED) {
		fj->spec.job = fj->orig; /* not placed: whole again */
		free(fj->own);
		fj->own = NULL;
		fj->orig = NULL;
		fj->off = 0;
	}
	return rc;
}

int mu_fleet_cluster_lost(mu_fleet_t *f, int32_t c, mu_time_t now)
{
	if (c < 0 || c >= f->nclusters)
		return MU_ENOENT;
	f->clusters[c].state = MU_CLUSTER_UNREACHABLE;
	int n = 0;
	for (int32_t j = 0; j < f->njobs && f->clusters[c].running > 0; j++) {
		if (f->jobs[j].state != MU_FJ_DISPATCHED || f->jobs[j].cluster != c)
			continue;
		int rc = mu_fleet_job_requeue(f, j, now);
		if (rc)
			return rc;
		n++;
	}
	return n;
}

void mu_fleet_decisions_init(mu_fleet_decisions_t *d)
{
	memset(d, 0, sizeof *d);
}

void mu_fleet_reclaims_release(mu_fleet_reclaims_t *r)
{
	free(r->v);
	memset(r, 0, sizeof *r);
}

void mu_fleet_decisions_release(mu_fleet_decisions_t *d)
{
	free(d->v);
	memset(d, 0, sizeof *d);
}

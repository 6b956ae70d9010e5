/*
 * cluster.c - nodes, their devices, and static classes.
 *
 * A node keeps its labels as sorted interned (key, value) pairs, its taints,
 * its free resources and a free milli-GPU count per device.  A static class
 * is the set of label, taint and model constraints shared by identical pod
 * sets; it caches the ids of nodes that pass them, recomputed only when the
 * nodes' static facts change (node_gen).
 */
#include <errno.h>
#include <stdio.h>

#include "engine/engine_int.h"

static int cmp_pair(const void *a, const void *b)
{
	const int32_t *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The interned value of label `key` on n, -1 if the node lacks it.  Binary
 * search over the sorted pairs. */
int32_t mu__node_label(const mu__node_t *n, int32_t key)
{
	int32_t lo = 0, hi = n->nlabels - 1;
	while (lo <= hi) {
		int32_t mid = (lo + hi) / 2;
		int32_t k = n->labels[2 * mid];
		if (k == key)
			return n->labels[2 * mid + 1];
		if (k < key)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* Copies the spec's labels and taints into n (replacing old ones). */
static int node_set_static(mu_engine_t *e, mu__node_t *n,
			   const mu_node_spec_t *s)
{
	int32_t *labels = malloc((s->nlabels ? s->nlabels : 1) * 2 * sizeof *labels);
	mu__taint_t *taints = malloc((s->ntaints ? s->ntaints : 1) * sizeof *taints);
	if (!labels || !taints)
		goto oom;
	for (size_t i = 0; i < s->nlabels; i++) {
		labels[2 * i] = mu__intern(&e->strs, s->labels[i].key);
		labels[2 * i + 1] = mu__intern(&e->strs, s->labels[i].value ? s->labels[i].value : "");
		if (labels[2 * i] < 0 || labels[2 * i + 1] < 0)
			goto oom;
	}
	qsort(labels, s->nlabels, 2 * sizeof *labels, cmp_pair);
	for (size_t i = 0; i < s->ntaints; i++) {
		taints[i].key = mu__intern(&e->strs, s->taints[i].key);
		taints[i].val = s->taints[i].value && *s->taints[i].value ?
			mu__intern(&e->strs, s->taints[i].value) : -1;
		taints[i].effect = (int)s->taints[i].effect;
		if (taints[i].key < 0)
			goto oom;
	}
	free(n->labels);
	free(n->taints);
	n->labels = labels;
	n->nlabels = (int32_t)s->nlabels;
	n->taints = taints;
	n->ntaints = (int32_t)s->ntaints;
	n->model = s->gpu_model ? mu__intern(&e->strs, s->gpu_model) : -1;
	n->model_name = n->model >= 0 ? e->strs.strs[n->model] : NULL;
	n->unschedulable = s->unschedulable;
	return MU_OK;
oom:
	free(labels);
	free(taints);
	return MU_ENOMEM;
}

/* What node n adds to pool resource k's slot (accounting units). */
static int64_t node_pool_amount(const mu__node_t *n, int k)
{
	int b = mu__pool_base(k);
	return b == MU_RES_GPU ? (int64_t)n->ngpu * 1000 : n->alloc.v[b];
}

/* Accounting vector of a node's allocatable (GPUs in milli; also in its
 * pool's slots). */
static mu_res_t node_acct(const mu_engine_t *e, const mu__node_t *n)
{
	mu_res_t a = n->alloc;
	a.v[MU_RES_GPU] = (int64_t)n->ngpu * 1000;
	a.v[MU_RES_GPU_MILLI] = 0;
	for (int k = 0; n->pool >= 0 && k < MU_POOL_NRES; k++)
		if (e->pools[n->pool].rslot[k] >= 0)
			a.v[e->pools[n->pool].rslot[k]] += node_pool_amount(n, k);
	return a;
}

/* --- Node pools (the object itself is pools.c's) ---------------------------- */

int32_t mu__pool_of(const mu_engine_t *e, const mu__node_t *n)
{
	int32_t found = -1;
	for (int32_t p = 0; p < e->npools; p++) {
		const mu__pool_t *pl = &e->pools[p];
		bool all = pl->nsel + pl->nexprs > 0;
		for (int32_t i = 0; i < pl->nsel && all; i++)
			all = mu__node_label(n, pl->sel[2 * i]) == pl->sel[2 * i + 1];
		for (int32_t i = 0; i < pl->nexprs && all; i++) {
			int32_t v = mu__node_label(n, pl->ekey[i]);
			bool in = false;
			for (int32_t k = pl->eoff[i]; k < pl->eoff[i + 1] && !in; k++)
				in = v >= 0 && pl->eval[k] == v;
			switch (pl->eop[i]) {
			case MU_SEL_IN: all = in; break;
			case MU_SEL_NOT_IN: all = !in; break; /* absent: not in */
			case MU_SEL_EXISTS: all = v >= 0; break;
			default: all = v < 0; break; /* DoesNotExist */
			}
		}
		if (!all)
			continue;
		if (found >= 0)
			return -2;
		found = p;
	}
	return found;
}

void mu__pool_sel_free(mu__pool_t *pl)
{
	for (int32_t i = 0; i < pl->nsel; i++) {
		free(pl->keys[i]);
		free(pl->vals[i]);
	}
	for (int32_t i = 0; i < pl->nexprs; i++) {
		for (size_t k = 0; k < pl->exprs[i].nvalues; k++)
			free((char *)pl->exprs[i].values[k]);
		free((char *)pl->exprs[i].key);
		free(pl->exprs[i].values);
	}
	free(pl->keys);
	free(pl->vals);
	free(pl->sel);
	free(pl->exprs);
	free(pl->ekey);
	free(pl->eop);
	free(pl->eoff);
	free(pl->eval);
	pl->keys = pl->vals = NULL;
	pl->sel = pl->ekey = pl->eop = pl->eoff = pl->eval = NULL;
	pl->exprs = NULL;
	pl->nsel = pl->nexprs = 0;
}

void mu__pool_move(mu_engine_t *e, mu__node_t *n, int32_t np)
{
	if (n->pool == np)
		return;
	for (int k = 0; k < MU_POOL_NRES; k++) {
		int64_t g = n->removed ? 0 : node_pool_amount(n, k);
		if (n->pool >= 0 && e->pools[n->pool].rslot[k] >= 0)
			e->total_alloc.v[e->pools[n->pool].rslot[k]] -= g;
		if (np >= 0 && e->pools[np].rslot[k] >= 0)
			e->total_alloc.v[e->pools[np].rslot[k]] += g;
	}
	if (n->pool >= 0)
		e->pools[n->pool].nodes -= !n->removed;
	n->pool = np;
	if (np >= 0)
		e->pools[np].nodes += !n->removed;
	e->node_gen++;
	e->release_gen++;
}

mu_res_t mu__pod_acct(const mu_engine_t *e, const mu__podset_t *ps, int32_t nid)
{
	mu_res_t a = *ps->acct;
	int32_t p = nid >= 0 ? e->nodes[nid].pool : -1;
	for (int k = 0; p >= 0 && k < MU_POOL_NRES; k++) {
		int sl = e->pools[p].rslot[k];
		if (sl >= 0 && !a.v[sl])
			a.v[sl] = a.v[mu__pool_base(k)];
	}
	return a;
}

mu_res_t mu__job_acct_bound(const mu_engine_t *e, const mu__job_t *j)
{
	mu_res_t sum = {.v = {0}};
	if (!j->nbound)
		return sum;
	for (int32_t i = 0; i < j->npodsets; i++) {
		const mu__podset_t *ps = &j->podsets[i];
		for (int32_t k = 0; k < ps->replicas; k++) {
			int32_t nid = j->pods[ps->first + k].node;
			if (nid < 0)
				continue;
			mu_res_t a = mu__pod_acct(e, ps, nid);
			for (int r = 0; r < MU_RES_MAX; r++)
				sum.v[r] += a.v[r];
		}
	}
	return sum;
}

int mu__dom_slot(const mu_engine_t *e, const mu_res_t *claim)
{
	if (e->npools == 0) /* no pool names a slot: the public rule */
		return mu_quota_dominant(claim);
	if (claim->v[MU_RES_GPU] > 0) {
		for (int32_t p = 0; p < e->npools; p++)
			if (claim->v[e->pools[p].slot] > 0)
				return 1 << e->pools[p].slot;
		return 1 << MU_RES_GPU;
	}
	int cpu = MU_RES_CPU, mem = MU_RES_MEM;
	for (int32_t p = 0; p < e->npools; p++) {
		const int32_t *rs = e->pools[p].rslot;
		bool in = (rs[MU_POOL_CPU] >= 0 && claim->v[rs[MU_POOL_CPU]] > 0) ||
			  (rs[MU_POOL_MEM] >= 0 && claim->v[rs[MU_POOL_MEM]] > 0);
		if (!in)
			continue;
		cpu = rs[MU_POOL_CPU] >= 0 ? rs[MU_POOL_CPU] : cpu;
		mem = rs[MU_POOL_MEM] >= 0 ? rs[MU_POOL_MEM] : mem;
		break;
	}
	return 1 << cpu | 1 << mem;
}

static void res_add(mu_res_t *a, const mu_res_t *b, int sign)
{
	for (int r = 0; r < MU_RES_MAX; r++)
		a->v[r] += sign * b->v[r];
}

/* Applies a new allocatable to n, keeping what pods use.  Devices that are
 * in use cannot disappear. */
static int node_set_alloc(mu_engine_t *e, mu__node_t *n, const mu_res_t *alloc)
{
	int64_t ngpu = alloc->v[MU_RES_GPU];
	if (ngpu < 0 || ngpu > MU_MAX_GPUS)
		return MU_ERANGE;
	for (int g = (int)ngpu; g < n->ngpu; g++)
		if (n->gpu_free[g] != 1000)
			return MU_ESTATE;
	mu_res_t old = node_acct(e, n);
	mu_res_t used;
	for (int r = 0; r < MU_RES_MAX; r++)
		used.v[r] = n->alloc.v[r] - n->free.v[r];
	for (int g = n->ngpu; g < ngpu; g++)
		n->gpu_free[g] = 1000;
	n->ngpu = (int)ngpu;
	n->alloc = *alloc;
	for (int r = 0; r < MU_RES_MAX; r++)
		n->free.v[r] = n->alloc.v[r] - used.v[r];
	int whole = 0, milli = 0;
	for (int g = 0; g < n->ngpu; g++) {
		whole += n->gpu_free[g] == 1000;
		milli += n->gpu_free[g];
	}
	n->free.v[MU_RES_GPU] = whole;
	n->free.v[MU_RES_GPU_MILLI] = milli;
	n->alloc.v[MU_RES_GPU_MILLI] = (int64_t)n->ngpu * 1000;
	mu_res_t now = node_acct(e, n);
	res_add(&e->total_alloc, &old, -1);
	res_add(&e->total_alloc, &now, +1);
	return MU_OK;
}

/* mu_engine_node_upsert without the supply's bookkeeping. */
static int node_upsert(mu_engine_t *e, const mu_node_spec_t *s, mu_id_t *id)
{
	for (int r = 0; r < MU_RES_NAMED0; r++)
		if (s->alloc.v[r] < 0)
			return MU_ERANGE;
	mu_res_t alloc = s->alloc;
	alloc.v[MU_RES_GPU_MILLI] = 0;
	int rc = mu__map_ext(e, s->ext, s->next, &alloc);
	if (rc)
		return rc;
	int32_t nid = mu__strmap_get(&e->node_names, s->name);
	if (nid < 0) {
		rc = mu__grow((void **)&e->nodes, &e->nodes_cap, e->nnodes + 1,
			      sizeof *e->nodes);
		if (rc)
			return rc;
		const char *name = mu__strmap_put(&e->node_names, s->name, e->nnodes);
		if (!name)
			return MU_ENOMEM;
		nid = e->nnodes++;
		memset(&e->nodes[nid], 0, sizeof e->nodes[nid]);
		e->nodes[nid].name = name;
		e->nodes[nid].removed = true;
		e->nodes[nid].pool = -1;
	}
	mu__node_t *n = &e->nodes[nid];
	if (e->npools) {
		/* Its pool, from its new labels: none may hold it twice, and a
		 * node with pods stays where its pods are accounted. */
		mu__node_t probe = {.labels = NULL};
		mu_node_spec_t only = {.name = s->name, .labels = s->labels,
				       .nlabels = s->nlabels};
		if ((rc = node_set_static(e, &probe, &only)) != MU_OK)
			return rc;
		int32_t np = mu__pool_of(e, &probe);
		free(probe.labels);
		free(probe.taints);
		if (np == -2)
			return MU_EINVAL;
		if (np != n->pool && n->npods)
			return MU_ESTATE;
		mu__pool_move(e, n, np);
	}
	rc = node_set_alloc(e, n, &alloc);
	mu__node_touch(e, nid); /* even if a later step fails, free changed */
	if (rc != MU_OK)
		return rc;
	if ((rc = node_set_static(e, n, s)) != MU_OK)
		return rc;
	if ((rc = mu__ntopo_set(e, n, s->topo)) != MU_OK)
		return rc;
	if (n->removed) {
		n->removed = false;
		e->nlive++;
		if (n->pool >= 0)
			e->pools[n->pool].nodes++;
	}
	mu__node_touch(e, nid);
	e->node_gen++;
	e->release_gen++;
	if (id)
		*id = nid;
	return MU_OK;
}

/* The node's supply and devices per model are taken out before any
 * change and added back after, whatever the upsert did: the sums stay
 * those of the nodes as they are. */
int mu_engine_node_upsert(mu_engine_t *e, const mu_node_spec_t *s, mu_id_t *id)
{
	if (!s || !s->name || !*s->name)
		return MU_EINVAL;
	int32_t nid = mu__strmap_get(&e->node_names, s->name);
	if (nid >= 0) {
		mu__supply_node(e, &e->nodes[nid], -1);
		mu__gpu_models_node(e, &e->nodes[nid], -1);
		mu__gpu_mem_node(e, &e->nodes[nid], NULL, -1);
	}
	int rc = node_upsert(e, s, id);
	if (nid < 0)
		nid = mu__strmap_get(&e->node_names, s->name);
	if (nid < 0)
		return rc;
	int grc = mu__gpu_models_node(e, &e->nodes[nid], +1);
	int32_t key = mu__strtab_find(&e->strs, "nvidia.com/gpu.memory");
	int32_t v = key >= 0 ? mu__node_label(&e->nodes[nid], key) : -1;
	if (grc == MU_OK)
		grc = mu__gpu_mem_node(e, &e->nodes[nid], v >= 0 ? e->strs.strs[v] : NULL, +1);
	if (grc != MU_OK && rc == MU_OK)
		rc = grc;
	if (!mu__supply_kept(e))
		return rc;
	int src = mu__supply_slot(e, &e->nodes[nid]);
	if (src == MU_OK)
		mu__supply_node(e, &e->nodes[nid], +1);
	else if (rc == MU_OK)
		rc = src;
	return rc;
}

int mu_engine_node_remove(mu_engine_t *e, const char *name, mu_time_t now)
{
	if (!name)
		return MU_EINVAL;
	e->now = now;
	int32_t nid = mu__strmap_get(&e->node_names, name);
	if (nid < 0 || e->nodes[nid].removed)
		return MU_ENOENT;
	/* Every job with a pod here restarts as a whole. */
	while (e->nodes[nid].npods > 0) {
		int32_t j = e->nodes[nid].refs[0].job;
		mu__job_t *job = &e->jobs[j];
		for (int32_t p = 0; p < job->npods; p++)
			mu__pod_release(e, job, p, true);
		if (job->state == MU_JOB_RUNNING)
			mu__job_set_pending(e, j);
		int rc = mu__queue_pending_insert(e, j);
		if (rc)
			return rc;
	}
	mu__node_t *n = &e->nodes[nid];
	mu__supply_node(e, n, -1);
	mu__gpu_models_node(e, n, -1);
	mu__gpu_mem_node(e, n, NULL, -1);
	mu_res_t zero = {{0}};
	node_set_alloc(e, n, &zero);
	if (n->pool >= 0)
		e->pools[n->pool].nodes--;
	n->removed = true;
	e->nlive--;
	e->node_gen++;
	return MU_OK;
}

/* --- Fit, take and give ---------------------------------------------------- */

mu_filter_t mu__node_fit(const mu_engine_t *e, const mu__node_t *n,
			 const mu__podset_t *ps)
{
	const mu_res_t *req = ps->req;
	if (n->free.v[MU_RES_CPU] < req->v[MU_RES_CPU])
		return MU_F_CPU;
	if (n->free.v[MU_RES_MEM] < req->v[MU_RES_MEM])
		return MU_F_MEM;
	if (req->v[MU_RES_GPU] > n->free.v[MU_RES_GPU])
		return MU_F_GPU;
	if (req->v[MU_RES_GPU_MILLI] > 0) {
		bool ok = false;
		for (int g = 0; g < n->ngpu && !ok; g++)
			ok = n->gpu_free[g] >= req->v[MU_RES_GPU_MILLI];
		if (!ok)
			return MU_F_GPU;
	}
	if (n->free.v[MU_RES_PODS] < req->v[MU_RES_PODS])
		return MU_F_PODS;
	for (int r = MU_RES_NAMED0; r < e->nres; r++)
		if (n->free.v[r] < req->v[r])
			return MU_F_EXT;
	if (ps->aligned && !mu__align_fit(n, ps))
		return MU_F_ALIGN;
	return MU_F_COUNT;
}

/* The device for a share of milli on n: the policy's pick_device when it
 * has one and the answer holds the share, else best fit (the least free
 * device that holds it); -1 if none does.  O(devices) plus the pick. */
static int node_share_device(mu_engine_t *e, const mu__node_t *n,
			     const mu_res_t *req, int16_t milli)
{
	if (e && e->score && e->score->pick_device) {
		mu_node_view_t v;
		mu__node_view(n, &v);
		mu_score_ctx_t ctx = {e->cfg.score_state, mu__random(e),
				      mu__supply_ctx(e), &e->gmodels};
		int g = e->score->pick_device(&ctx, &v, req);
		if (g >= 0 && g < n->ngpu && n->gpu_free[g] >= milli)
			return g;
	}
	int best = -1;
	for (int g = 0; g < n->ngpu; g++)
		if (n->gpu_free[g] >= milli &&
		    (best < 0 || n->gpu_free[g] < n->gpu_free[best]))
			best = g;
	return best;
}

/* Takes the devices of pod->gpus exactly (a restore), or picks them when
 * pod->gpus is 0: lowest free indices for whole GPUs; for a share, the
 * policy's pick or best fit (node_share_device). */
static void node_take_devices(mu_engine_t *e, mu__node_t *n,
			      const mu_res_t *req, mu__pod_t *pod)
{
	int16_t milli = (int16_t)req->v[MU_RES_GPU_MILLI];
	if (pod->gpus) {
		for (int g = 0; g < n->ngpu; g++) {
			if (!(pod->gpus & ((uint64_t)1 << g)))
				continue;
			if (n->gpu_free[g] == 1000)
				n->free.v[MU_RES_GPU]--;
			n->gpu_free[g] -= milli ? milli : 1000;
		}
		pod->milli = milli;
		return;
	}
	int64_t want = req->v[MU_RES_GPU];
	for (int g = 0; g < n->ngpu && want > 0; g++) {
		if (n->gpu_free[g] == 1000) {
			n->gpu_free[g] = 0;
			n->free.v[MU_RES_GPU]--;
			pod->gpus |= (uint64_t)1 << g;
			want--;
		}
	}
	if (milli > 0) {
		int best = node_share_device(e, n, req, milli);
		if (best >= 0) {
			if (n->gpu_free[best] == 1000)
				n->free.v[MU_RES_GPU]--;
			n->gpu_free[best] -= milli;
			pod->gpus = (uint64_t)1 << best;
			pod->milli = milli;
		}
	}
}

/* The gpu_kinds slot of a request: 0 a share, k for k whole GPUs, -1 no
 * GPU. */
static int gpu_kind(const mu_res_t *req)
{
	if (req->v[MU_RES_GPU] > 0 && req->v[MU_RES_GPU] <= MU_MAX_GPUS)
		return (int)req->v[MU_RES_GPU];
	return req->v[MU_RES_GPU] == 0 && req->v[MU_RES_GPU_MILLI] > 0 ? 0 : -1;
}

void mu__node_take(mu_engine_t *e, mu__node_t *n, const mu__podset_t *ps,
		   mu__pod_t *pod, bool exact)
{
	const mu_res_t *req = ps->req;
	mu_res_t before = n->free;
	mu__supply_node(e, n, -1);
	if (!exact) {
		pod->gpus = 0;
		pod->milli = 0;
		pod->numa = pod->nic = -1;
		memset(&pod->cpus, 0, sizeof pod->cpus);
		if (ps->aligned)
			mu__align_choose(n, ps, pod);
	}
	node_take_devices(e, n, req, pod);
	if (gpu_kind(req) >= 0)
		n->gpu_kinds[gpu_kind(req)]++;
	if (ps->aligned)
		mu__align_apply(n, ps, pod, +1);
	for (int r = 0; r < MU_RES_MAX; r++)
		if (r != MU_RES_GPU && r != MU_RES_GPU_MILLI)
			n->free.v[r] -= req->v[r];
	n->free.v[MU_RES_GPU_MILLI] -= req->v[MU_RES_GPU] * 1000 + req->v[MU_RES_GPU_MILLI];
	mu__supply_node(e, n, +1);
	mu__node_touch(e, (int32_t)(n - e->nodes));
	if (e->ntopos)
		mu__topo_node_delta(e, (int32_t)(n - e->nodes), &before);
}

void mu__node_give(mu_engine_t *e, mu__node_t *n, const mu__podset_t *ps,
		   mu__pod_t *pod)
{
	const mu_res_t *req = ps->req;
	mu_res_t before = n->free;
	if (e) /* e is NULL for scratch copies */
		mu__supply_node(e, n, -1);
	if (gpu_kind(req) >= 0)
		n->gpu_kinds[gpu_kind(req)]--;
	if (ps->aligned)
		mu__align_apply(n, ps, pod, -1);
	for (int g = 0; g < n->ngpu; g++) {
		if (!(pod->gpus & ((uint64_t)1 << g)))
			continue;
		if (pod->milli) {
			n->gpu_free[g] += pod->milli;
			if (n->gpu_free[g] == 1000)
				n->free.v[MU_RES_GPU]++;
		} else {
			n->gpu_free[g] = 1000;
			n->free.v[MU_RES_GPU]++;
		}
	}
	for (int r = 0; r < MU_RES_MAX; r++)
		if (r != MU_RES_GPU && r != MU_RES_GPU_MILLI)
			n->free.v[r] += req->v[r];
	n->free.v[MU_RES_GPU_MILLI] += req->v[MU_RES_GPU] * 1000 + req->v[MU_RES_GPU_MILLI];
	pod->gpus = 0;
	pod->milli = 0;
	pod->numa = pod->nic = -1;
	memset(&pod->cpus, 0, sizeof pod->cpus);
	if (e) { /* e is NULL for scratch copies */
		mu__supply_node(e, n, +1);
		mu__node_touch(e, (int32_t)(n - e->nodes));
	}
	if (e && e->ntopos)
		mu__topo_node_delta(e, (int32_t)(n - e->nodes), &before);
}

void mu__node_view(const mu__node_t *n, mu_node_view_t *v)
{
	v->alloc = &n->alloc;
	v->free = &n->free;
	v->ngpu = n->ngpu;
	v->gpu_free = n->gpu_free;
	v->gpu_model = n->model_name;
	v->gpu_kinds = n->gpu_kinds;
}

/* --- Static classes -------------------------------------------------------- */

/* Appends "len:str" to a growable signature buffer. */
static int sig_add(char **buf, size_t *len, size_t *cap, const char *tag,
		   const char *s)
{
	size_t need = *len + strlen(tag) + (s ? strlen(s) : 0) + 24;
	if (need > *cap) {
		size_t ncap = *cap ? *cap : 128;
		while (ncap < need)
			ncap *= 2;
		char *nb = realloc(*buf, ncap);
		if (!nb)
			return MU_ENOMEM;
		*buf = nb;
		*cap = ncap;
	}
	*len += (size_t)sprintf(*buf + *len, "%s%zu:%s", tag, s ? strlen(s) : (size_t)0,
				s ? s : "");
	return MU_OK;
}

static int cmp_label(const void *a, const void *b)
{
	const mu_label_t *x = a, *y = b;
	return strcmp(x->key, y->key);
}

/* The canonical signature of a pod set's static constraints. */
static char *sclass_sig(const mu_podset_spec_t *ps)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = sig_add(&buf, &len, &cap, "", "");
	mu_label_t *sel = NULL;
	if (ps->nnode_selector) {
		sel = malloc(ps->nnode_selector * sizeof *sel);
		if (!sel)
			rc = MU_ENOMEM;
		else
			memcpy(sel, ps->node_selector, ps->nnode_selector * sizeof *sel);
	}
	if (sel)
		qsort(sel, ps->nnode_selector, sizeof *sel, cmp_label);
	for (size_t i = 0; !rc && i < ps->nnode_selector; i++) {
		rc = sig_add(&buf, &len, &cap, "S", sel[i].key);
		rc = rc ? rc : sig_add(&buf, &len, &cap, "=", sel[i].value);
	}
	free(sel);
	for (size_t t = 0; !rc && t < ps->naffinity; t++) {
		rc = sig_add(&buf, &len, &cap, "T", "");
		for (size_t r = 0; !rc && r < ps->affinity[t].nreqs; r++) {
			const mu_sel_req_t *q = &ps->affinity[t].reqs[r];
			char op[8];
			snprintf(op, sizeof op, "R%d", (int)q->op);
			rc = sig_add(&buf, &len, &cap, op, q->key);
			for (size_t v = 0; !rc && v < q->nvalues; v++)
				rc = sig_add(&buf, &len, &cap, "v", q->values[v]);
		}
	}
	for (size_t i = 0; !rc && i < ps->ntolerations; i++) {
		const mu_toleration_t *t = &ps->tolerations[i];
		char tag[24];
		snprintf(tag, sizeof tag, "O%d,%d,%d", (int)t->op, t->effect, t->key != NULL);
		rc = sig_add(&buf, &len, &cap, tag, t->key);
		rc = rc ? rc : sig_add(&buf, &len, &cap, "=", t->value);
	}
	for (size_t i = 0; !rc && i < ps->ngpu_models; i++)
		rc = sig_add(&buf, &len, &cap, "M", ps->gpu_models[i]);
	if (rc) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Parses a whole decimal integer (no trailing junk), as Kubernetes does for
 * Gt and Lt. */
static bool strict_int(const char *s, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end == s || *end || errno)
		return false;
	*out = v;
	return true;
}

int mu__selterm_fill(mu_engine_t *e, mu__selterm_t *ct, const mu_sel_term_t *st)
{
	ct->reqs = calloc(st->nreqs ? st->nreqs : 1, sizeof *ct->reqs);
	if (!ct->reqs)
		return MU_ENOMEM;
	for (size_t r = 0; r < st->nreqs; r++) {
		const mu_sel_req_t *sq = &st->reqs[r];
		mu__selreq_t *cq = &ct->reqs[r];
		cq->key = mu__intern(&e->strs, sq->key);
		cq->op = sq->op;
		cq->vals = calloc(sq->nvalues ? sq->nvalues : 1, sizeof *cq->vals);
		if (!cq->vals)
			return MU_ENOMEM;
		ct->nreqs = (int32_t)r + 1;
		for (size_t v = 0; v < sq->nvalues; v++)
			cq->vals[v] = mu__intern(&e->strs, sq->values[v]);
		cq->nvals = (int32_t)sq->nvalues;
		long long num = 0;
		if ((sq->op == MU_SEL_GT || sq->op == MU_SEL_LT) &&
		    (sq->nvalues != 1 || !strict_int(sq->values[0], &num)))
			return MU_EINVAL;
		cq->num = num;
	}
	return MU_OK;
}

void mu__selterm_free(mu__selterm_t *ct)
{
	for (int32_t r = 0; r < ct->nreqs; r++)
		free(ct->reqs[r].vals);
	free(ct->reqs);
	ct->reqs = NULL;
	ct->nreqs = 0;
}

/* Fills a new class from the spec: interned ids for everything. */
static int sclass_fill(mu_engine_t *e, mu__sclass_t *c, const mu_podset_spec_t *ps)
{
	size_t n = ps->nnode_selector;
	c->sel = calloc(n ? 2 * n : 1, sizeof *c->sel);
	c->terms = calloc(ps->naffinity ? ps->naffinity : 1, sizeof *c->terms);
	c->tols = calloc(ps->ntolerations ? ps->ntolerations : 1, sizeof *c->tols);
	c->models = calloc(ps->ngpu_models ? ps->ngpu_models : 1, sizeof *c->models);
	if (!c->sel || !c->terms || !c->tols || !c->models)
		return MU_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		c->sel[2 * i] = mu__intern(&e->strs, ps->node_selector[i].key);
		c->sel[2 * i + 1] = mu__intern(&e->strs, ps->node_selector[i].value ?
					       ps->node_selector[i].value : "");
	}
	c->nsel = (int32_t)n;
	for (size_t t = 0; t < ps->naffinity; t++) {
		c->nterms = (int32_t)t + 1;
		int rc = mu__selterm_fill(e, &c->terms[t], &ps->affinity[t]);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < ps->ntolerations; i++) {
		const mu_toleration_t *st = &ps->tolerations[i];
		c->tols[i].key = st->key ? mu__intern(&e->strs, st->key) : -1;
		c->tols[i].val = st->value && *st->value ? mu__intern(&e->strs, st->value) : -1;
		c->tols[i].op = st->op;
		c->tols[i].effect = st->effect;
	}
	c->ntols = (int32_t)ps->ntolerations;
	for (size_t i = 0; i < ps->ngpu_models; i++)
		c->models[i] = mu__intern(&e->strs, ps->gpu_models[i]);
	c->nmodels = (int32_t)ps->ngpu_models;
	return MU_OK;
}

int mu__sclass_get(mu_engine_t *e, const mu_podset_spec_t *ps, int32_t *id)
{
	char *sig = sclass_sig(ps);
	if (!sig)
		return MU_ENOMEM;
	int32_t cid = mu__strmap_get(&e->class_sigs, sig);
	if (cid >= 0) {
		free(sig);
		*id = cid;
		return MU_OK;
	}
	int rc = mu__grow((void **)&e->classes, &e->classes_cap, e->nclasses + 1,
			  sizeof *e->classes);
	if (rc) {
		free(sig);
		return rc;
	}
	mu__sclass_t *c = &e->classes[e->nclasses];
	memset(c, 0, sizeof *c);
	c->sig = sig;
	e->nclasses++; /* now owned by the engine, freed on teardown */
	if ((rc = sclass_fill(e, c, ps)) != MU_OK)
		return rc;
	if (!mu__strmap_put(&e->class_sigs, sig, e->nclasses - 1))
		return MU_ENOMEM;
	*id = e->nclasses - 1;
	return MU_OK;
}

static bool in_vals(const mu__selreq_t *q, int32_t v)
{
	for (int32_t i = 0; i < q->nvals; i++)
		if (q->vals[i] == v)
			return true;
	return false;
}

/* One affinity requirement against a node. */
static bool selreq_match(const mu_engine_t *e, const mu__selreq_t *q,
			 const mu__node_t *n)
{
	int32_t v = mu__node_label(n, q->key);
	long long num;
	switch (q->op) {
	case MU_SEL_IN: return v >= 0 && in_vals(q, v);
	case MU_SEL_NOT_IN: return v < 0 || !in_vals(q, v);
	case MU_SEL_EXISTS: return v >= 0;
	case MU_SEL_DOES_NOT_EXIST: return v < 0;
	case MU_SEL_GT:
	case MU_SEL_LT:
		if (v < 0 || !strict_int(e->strs.strs[v], &num))
			return false;
		return q->op == MU_SEL_GT ? num > q->num : num < q->num;
	}
	return false;
}

static bool tolerated(const mu__sclass_t *c, const mu__taint_t *t)
{
	for (int32_t i = 0; i < c->ntols; i++) {
		const mu__tol_t *o = &c->tols[i];
		if (o->effect >= 0 && o->effect != t->effect)
			continue;
		if (o->op == MU_TOL_EXISTS && (o->key < 0 || o->key == t->key))
			return true;
		if (o->op == MU_TOL_EQUAL && o->key == t->key && o->val == t->val)
			return true;
	}
	return false;
}

bool mu__selterm_match(const mu_engine_t *e, const mu__selterm_t *t,
		       const mu__node_t *n)
{
	bool all = t->nreqs > 0; /* an empty term matches nothing */
	for (int32_t r = 0; r < t->nreqs && all; r++)
		all = selreq_match(e, &t->reqs[r], n);
	return all;
}

bool mu__sclass_node_affine(const mu_engine_t *e, const mu__sclass_t *c,
			    const mu__node_t *n)
{
	for (int32_t i = 0; i < c->nsel; i++)
		if (mu__node_label(n, c->sel[2 * i]) != c->sel[2 * i + 1])
			return false;
	bool any = c->nterms == 0;
	for (int32_t t = 0; t < c->nterms && !any; t++)
		any = mu__selterm_match(e, &c->terms[t], n);
	return any;
}

bool mu__sclass_node_tolerates(const mu__sclass_t *c, const mu__node_t *n)
{
	for (int32_t i = 0; i < n->ntaints; i++) {
		const mu__taint_t *t = &n->taints[i];
		if (t->effect != MU_TAINT_PREFER_NO_SCHEDULE && !tolerated(c, t))
			return false;
	}
	return true;
}

/* The first static filter node n fails for class c, or MU_F_COUNT. */
static mu_filter_t sclass_check(const mu_engine_t *e, const mu__sclass_t *c,
				const mu__node_t *n)
{
	if (n->unschedulable)
		return MU_F_UNSCHEDULABLE;
	for (int32_t i = 0; i < c->nsel; i++)
		if (mu__node_label(n, c->sel[2 * i]) != c->sel[2 * i + 1])
			return MU_F_SELECTOR;
	if (c->nterms) {
		bool any = false;
		for (int32_t t = 0; t < c->nterms && !any; t++) {
			const mu__selterm_t *term = &c->terms[t];
			bool all = term->nreqs > 0; /* an empty term matches nothing */
			for (int32_t r = 0; r < term->nreqs && all; r++)
				all = selreq_match(e, &term->reqs[r], n);
			any = all;
		}
		if (!any)
			return MU_F_AFFINITY;
	}
	for (int32_t i = 0; i < n->ntaints; i++) {
		const mu__taint_t *t = &n->taints[i];
		if (t->effect != MU_TAINT_PREFER_NO_SCHEDULE && !tolerated(c, t))
			return MU_F_TAINT;
	}
	if (c->nmodels) {
		bool ok = false;
		for (int32_t i = 0; i < c->nmodels && !ok; i++)
			ok = c->models[i] == n->model;
		if (!ok)
			return MU_F_GPU_MODEL;
	}
	return MU_F_COUNT;
}

mu_filter_t mu__sclass_node_check(const mu_engine_t *e, const mu__sclass_t *c,
				  const mu__node_t *n)
{
	return sclass_check(e, c, n);
}

int mu__sclass_refresh(mu_engine_t *e, mu__sclass_t *c)
{
	if (c->gen == e->node_gen)
		return MU_OK;
	/* Sized to the class, not the cluster: a host-pinned class holds one
	 * node, so its list is grown as nodes pass and trimmed after, and
	 * membership is a bit per node. */
	int rc = MU_OK;
	memset(c->fail, 0, sizeof c->fail);
	c->nnodes = 0;
	for (int32_t i = 0; i < e->nnodes; i++) {
		const mu__node_t *n = &e->nodes[i];
		if (n->removed)
			continue;
		mu_filter_t f = sclass_check(e, c, n);
		if (f == MU_F_COUNT) {
			rc = mu__grow((void **)&c->nodes, &c->nodes_cap, c->nnodes + 1,
				      sizeof *c->nodes);
			if (rc)
				return rc; /* c->gen unchanged: refreshed again */
			c->nodes[c->nnodes++] = i;
		} else
			c->fail[f]++;
	}
	if (c->nnodes <= MU__MEMBER_BITS) { /* searched in c->nodes instead */
		free(c->member);
		c->member = NULL;
		c->member_cap = 0;
	} else {
		int32_t bytes = (e->nnodes + 7) / 8;
		rc = mu__grow((void **)&c->member, &c->member_cap, bytes, sizeof *c->member);
		if (rc)
			return rc;
		memset(c->member, 0, (size_t)c->member_cap);
		for (int32_t k = 0; k < c->nnodes; k++)
			c->member[c->nodes[k] >> 3] |= (uint8_t)(1u << (c->nodes[k] & 7));
	}
	if (c->nodes_cap > 2 * c->nnodes + 16) { /* shrank: give memory back */
		int32_t cap = c->nnodes ? c->nnodes : 1;
		int32_t *nv = realloc(c->nodes, (size_t)cap * sizeof *nv);
		if (nv) {
			c->nodes = nv;
			c->nodes_cap = cap;
		}
	}
	c->gen = e->node_gen;
	return MU_OK;
}

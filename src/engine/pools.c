/*
 * pools.c - node pools as objects: their upsert, what they hold, and why a
 * job that names pools is in none of them.
 *
 * A pool is the set of nodes whose labels match its selector; every node is
 * in at most one.  Each pool takes one named resource slot of the engine
 * ("nvidia.com/gpu@POOL"): a node's GPUs count there as well as in
 * MU_RES_GPU, and so does every pod bound on it (mu__pod_acct, cluster.c),
 * so a queue's usage, deserved quota, limit, weight and fair share in a pool
 * are plain resource figures and the fair-share, reclaim and preemption
 * rules apply per pool unchanged.  The engine's core calls nothing here (the
 * helpers it needs live in cluster.c and queue.c), so this file stays out of
 * its call loop.
 */
#include <stdio.h>

#include "engine/engine_int.h"
#include "muster/util.h"

#define MU__STR2(x) #x
#define MU__STR(x) MU__STR2(x)

/* A malloc'd copy of s (strdup is not C11). */
static char *dup_str(const char *s)
{
	char *c = malloc(strlen(s) + 1);
	if (c)
		strcpy(c, s);
	return c;
}

/* Copies spec p's selector into pl (owned strings, interned pairs). */
static int pool_fill(mu_engine_t *e, mu__pool_t *pl, const mu_pool_spec_t *p)
{
	size_t n = p->nmatch;
	char **keys = calloc(n, sizeof *keys), **vals = calloc(n, sizeof *vals);
	int32_t *sel = calloc(2 * n, sizeof *sel);
	int rc = keys && vals && sel ? MU_OK : MU_ENOMEM;
	for (size_t i = 0; rc == MU_OK && i < n; i++) {
		const char *v = p->match[i].value ? p->match[i].value : "";
		keys[i] = dup_str(p->match[i].key);
		vals[i] = dup_str(v);
		sel[2 * i] = mu__intern(&e->strs, p->match[i].key);
		sel[2 * i + 1] = mu__intern(&e->strs, v);
		if (!keys[i] || !vals[i] || sel[2 * i] < 0 || sel[2 * i + 1] < 0)
			rc = MU_ENOMEM;
	}
	if (rc) {
		for (size_t i = 0; keys && vals && i < n; i++) {
			free(keys[i]);
			free(vals[i]);
		}
		free(keys);
		free(vals);
		free(sel);
		return rc;
	}
	for (int32_t i = 0; i < pl->nsel; i++) {
		free(pl->keys[i]);
		free(pl->vals[i]);
	}
	free(pl->keys);
	free(pl->vals);
	free(pl->sel);
	pl->keys = keys;
	pl->vals = vals;
	pl->sel = sel;
	pl->nsel = (int32_t)n;
	return MU_OK;
}

/* Checks a pool spec: a name, a selector with keys. */
static int pool_check(const mu_pool_spec_t *p)
{
	if (!p || !p->name || !*p->name || strchr(p->name, '@') || !p->nmatch ||
	    !p->match)
		return MU_EINVAL;
	for (size_t i = 0; i < p->nmatch; i++)
		if (!p->match[i].key || !*p->match[i].key)
			return MU_EINVAL;
	return MU_OK;
}

/* A new pool named like p, with its slot; queues get its defaults. */
static int pool_add(mu_engine_t *e, const mu_pool_spec_t *p, int32_t *out)
{
	if (e->nres >= MU_RES_MAX)
		return MU_ELIMIT;
	int rc = mu__grow((void **)&e->pools, &e->pools_cap, e->npools + 1,
			  sizeof *e->pools);
	if (rc)
		return rc;
	size_t len = strlen(p->name);
	char *rname = malloc(len + sizeof "nvidia.com/gpu@");
	char *name = dup_str(p->name);
	if (!rname || !name) {
		free(rname);
		free(name);
		return MU_ENOMEM;
	}
	sprintf(rname, "nvidia.com/gpu@%s", p->name);
	mu__pool_t *pl = &e->pools[e->npools];
	memset(pl, 0, sizeof *pl);
	pl->name = name;
	pl->slot = e->nres++;
	pl->rslot[MU_POOL_GPU] = pl->slot;
	for (int k = 1; k < MU_POOL_NRES; k++)
		pl->rslot[k] = -1;
	e->res_names[pl->slot] = rname;
	e->slot_pool[pl->slot] = e->npools;
	e->slot_base[pl->slot] = MU_RES_GPU;
	for (int32_t q = 0; q < e->nqueues; q++) {
		mu__queue_t *qq = &e->queues[q];
		qq->deserved.v[pl->slot] = 0;
		qq->limit.v[pl->slot] = MU_RES_UNLIMITED;
		qq->weight[pl->slot] = qq->weight[MU_RES_GPU];
	}
	*out = e->npools++;
	return MU_OK;
}

int mu_engine_pool_upsert(mu_engine_t *e, const mu_pool_spec_t *p)
{
	int rc = pool_check(p);
	if (rc)
		return rc;
	int32_t id = -1;
	for (int32_t k = 0; k < e->npools; k++)
		if (!strcmp(e->pools[k].name, p->name))
			id = k;
	/* Try the new selector on a scratch pool first: nothing changes
	 * unless every node ends in at most one pool and no node with pods
	 * changes pool. */
	mu__pool_t scratch = {.nsel = 0};
	if ((rc = pool_fill(e, &scratch, p)) != MU_OK)
		return rc;
	mu__pool_t *saved = NULL;
	int32_t was_n = e->npools;
	rc = MU_OK;
	if (id >= 0) {
		saved = malloc(sizeof *saved);
		if (!saved)
			rc = MU_ENOMEM;
		else {
			*saved = e->pools[id];
			e->pools[id].keys = scratch.keys;
			e->pools[id].vals = scratch.vals;
			e->pools[id].sel = scratch.sel;
			e->pools[id].nsel = scratch.nsel;
		}
	} else {
		/* a provisional entry at the end, dropped on failure */
		if (e->npools + 1 > e->pools_cap &&
		    (rc = mu__grow((void **)&e->pools, &e->pools_cap, e->npools + 1,
				   sizeof *e->pools)) != MU_OK)
			goto out;
		e->pools[e->npools] = scratch;
		e->pools[e->npools].slot = -1;
		for (int k = 0; k < MU_POOL_NRES; k++)
			e->pools[e->npools].rslot[k] = -1;
		e->npools++;
	}
	if (rc)
		goto out;
	int32_t probe = id >= 0 ? id : e->npools - 1;
	for (int32_t n = 0; n < e->nnodes && rc == MU_OK; n++) {
		const mu__node_t *nd = &e->nodes[n];
		int32_t np = mu__pool_of(e, nd);
		if (np == -2)
			rc = MU_EINVAL; /* two pools would hold it */
		else if (nd->npods && np != nd->pool)
			rc = MU_ESTATE; /* its pods are accounted where it is */
		(void)probe;
	}
	/* Put the table back as it was before applying anything. */
	if (id >= 0) {
		e->pools[id].keys = saved->keys;
		e->pools[id].vals = saved->vals;
		e->pools[id].sel = saved->sel;
		e->pools[id].nsel = saved->nsel;
	} else {
		e->npools = was_n;
	}
	if (rc)
		goto out;
	if (id < 0 && (rc = pool_add(e, p, &id)) != MU_OK)
		goto out;
	rc = pool_fill(e, &e->pools[id], p);
	for (int32_t n = 0; rc == MU_OK && n < e->nnodes; n++)
		mu__pool_move(e, &e->nodes[n], mu__pool_of(e, &e->nodes[n]));
out:
	for (int32_t i = 0; i < scratch.nsel; i++) {
		free(scratch.keys[i]);
		free(scratch.vals[i]);
	}
	free(scratch.keys);
	free(scratch.vals);
	free(scratch.sel);
	free(saved);
	return rc;
}

int32_t mu_engine_npools(const mu_engine_t *e)
{
	return e->npools;
}

int mu_engine_pool_info(const mu_engine_t *e, int32_t i, mu_pool_info_t *out)
{
	if (i < 0 || i >= e->npools)
		return MU_ENOENT;
	const mu__pool_t *pl = &e->pools[i];
	*out = (mu_pool_info_t){.name = pl->name, .slot = pl->slot,
				.nodes = pl->nodes,
				.gpus = e->total_alloc.v[pl->slot],
				.used = e->total_used.v[pl->slot]};
	memcpy(out->rslot, pl->rslot, sizeof out->rslot);
	return MU_OK;
}

int32_t mu_engine_node_pool(const mu_engine_t *e, mu_id_t node)
{
	if (node < 0 || node >= e->nnodes || e->nodes[node].removed)
		return -1;
	return e->nodes[node].pool;
}

int mu_engine_pool_explain(const mu_engine_t *e, mu_id_t id, char *buf, size_t len)
{
	if (id < 0 || id >= e->njobs)
		return MU_ENOENT;
	const mu__job_t *j = &e->jobs[id];
	if (len)
		buf[0] = 0;
	if (!j->nflav || !j->flav_tried || j->state != MU_JOB_PENDING)
		return 0;
	size_t off = 0;
	for (int32_t f = 0; f < j->nflav; f++) {
		char why[512];
		mu_reason_format(e, &j->flav_last[f], why, sizeof why);
		int n = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0,
				 "%spool %s: %s", f ? "; " : "",
				 e->pools[j->flav_pool[f]].name, why);
		if (n > 0)
			off += (size_t)n;
	}
	return (int)off;
}

int mu_engine_service_explain(const mu_engine_t *e, mu_id_t id, char *buf, size_t len)
{
	if (id < 0 || id >= e->njobs)
		return MU_ENOENT;
	const mu__job_t *j = &e->jobs[id];
	if (len)
		buf[0] = 0;
	if (!j->max_wait || j->state == MU_JOB_FINISHED)
		return 0;
	static const char *const name[] = {"boost", "boost", "reserve", "preempt"};
	const char *rule = name[j->esc >= MU_ESC_BOOST && j->esc <= MU_ESC_PREEMPT ? j->esc : 1];
	char w[48];
	mu__fmt_duration(w, sizeof w, (double)j->max_wait / 1000.0);
	if (!j->escalated)
		return snprintf(buf, len, "maximum wait %s: escalated if it waits "
				"longer (rule %s)", w, rule);
	const char *what = j->esc == MU_ESC_RESERVE ?
		"it holds a reservation of the nodes it will start on, whatever "
		"the backfill mode (jobs behind it may not delay it); its "
		"priority is unchanged" :
		j->esc == MU_ESC_PREEMPT ?
		"it may preempt any preemptible job of its own queue that is "
		"not escalated, whatever its priority; its priority is unchanged" :
		"its priority was raised by " MU__STR(MU_ESCALATE_BOOST) " (first "
		"in its queue; it may preempt lower priorities there)";
	return snprintf(buf, len, "escalated (%s): waited more than its maximum "
			"wait of %s, so %s", rule, w, what);
}

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

/* Moves the selector of src into dst (dst's own is not freed). */
static void sel_move(mu__pool_t *dst, const mu__pool_t *src)
{
	dst->keys = src->keys;
	dst->vals = src->vals;
	dst->sel = src->sel;
	dst->nsel = src->nsel;
	dst->exprs = src->exprs;
	dst->nexprs = src->nexprs;
	dst->ekey = src->ekey;
	dst->eop = src->eop;
	dst->eoff = src->eoff;
	dst->eval = src->eval;
}

/* Copies spec p's matchExpressions into pl (owned copies, interned). */
static int sel_exprs(mu_engine_t *e, mu__pool_t *pl, const mu_pool_spec_t *p)
{
	size_t n = p->nexprs, nv = 0;
	for (size_t i = 0; i < n; i++)
		nv += p->exprs[i].nvalues;
	pl->exprs = calloc(n ? n : 1, sizeof *pl->exprs);
	pl->ekey = calloc(n ? n : 1, sizeof *pl->ekey);
	pl->eop = calloc(n ? n : 1, sizeof *pl->eop);
	pl->eoff = calloc(n + 1, sizeof *pl->eoff);
	pl->eval = calloc(nv ? nv : 1, sizeof *pl->eval);
	if (!pl->exprs || !pl->ekey || !pl->eop || !pl->eoff || !pl->eval)
		return MU_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const mu_sel_req_t *r = &p->exprs[i];
		mu_sel_req_t *c = &pl->exprs[pl->nexprs++];
		c->op = r->op;
		c->key = dup_str(r->key);
		c->values = calloc(r->nvalues ? r->nvalues : 1, sizeof *c->values);
		if (!c->key || !c->values)
			return MU_ENOMEM;
		pl->ekey[i] = mu__intern(&e->strs, r->key);
		pl->eop[i] = (int32_t)r->op;
		pl->eoff[i + 1] = pl->eoff[i];
		for (size_t k = 0; k < r->nvalues; k++) {
			if (!(((const char **)c->values)[k] = dup_str(r->values[k])))
				return MU_ENOMEM;
			c->nvalues++;
			pl->eval[pl->eoff[i + 1]++] = mu__intern(&e->strs, r->values[k]);
		}
		if (pl->ekey[i] < 0)
			return MU_ENOMEM;
	}
	return MU_OK;
}

/* Fills pl (its selector empty) with spec p's: matchLabels and
 * matchExpressions, owned strings, interned pairs.  On failure pl's
 * selector is empty again. */
static int pool_fill(mu_engine_t *e, mu__pool_t *pl, const mu_pool_spec_t *p)
{
	size_t n = p->nmatch;
	pl->keys = calloc(n ? n : 1, sizeof *pl->keys);
	pl->vals = calloc(n ? n : 1, sizeof *pl->vals);
	pl->sel = calloc(n ? 2 * n : 1, sizeof *pl->sel);
	int rc = pl->keys && pl->vals && pl->sel ? MU_OK : MU_ENOMEM;
	for (size_t i = 0; rc == MU_OK && i < n; i++) {
		const char *v = p->match[i].value ? p->match[i].value : "";
		pl->keys[i] = dup_str(p->match[i].key);
		pl->vals[i] = dup_str(v);
		pl->nsel++;
		pl->sel[2 * i] = mu__intern(&e->strs, p->match[i].key);
		pl->sel[2 * i + 1] = mu__intern(&e->strs, v);
		if (!pl->keys[i] || !pl->vals[i] || pl->sel[2 * i] < 0 || pl->sel[2 * i + 1] < 0)
			rc = MU_ENOMEM;
	}
	if (rc == MU_OK)
		rc = sel_exprs(e, pl, p);
	if (rc)
		mu__pool_sel_free(pl);
	return rc;
}

/* Checks a pool spec: a name, a selector with keys (a label selector's
 * operators only, with the values each needs). */
static int pool_check(const mu_pool_spec_t *p)
{
	if (!p || !p->name || !*p->name || strchr(p->name, '@') ||
	    !(p->nmatch + p->nexprs) || (p->nmatch && !p->match) ||
	    (p->nexprs && !p->exprs))
		return MU_EINVAL;
	for (size_t i = 0; i < p->nmatch; i++)
		if (!p->match[i].key || !*p->match[i].key)
			return MU_EINVAL;
	for (size_t i = 0; i < p->nexprs; i++) {
		const mu_sel_req_t *r = &p->exprs[i];
		bool vals = r->op == MU_SEL_IN || r->op == MU_SEL_NOT_IN;
		if (!r->key || !*r->key || r->op < MU_SEL_IN || r->op > MU_SEL_DOES_NOT_EXIST ||
		    (vals && (!r->nvalues || !r->values)) || (!vals && r->nvalues))
			return MU_EINVAL;
		for (size_t k = 0; k < r->nvalues; k++)
			if (!r->values[k])
				return MU_EINVAL;
	}
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
	mu__pool_t scratch, saved;
	memset(&scratch, 0, sizeof scratch);
	memset(&saved, 0, sizeof saved);
	if ((rc = pool_fill(e, &scratch, p)) != MU_OK)
		return rc;
	int32_t was_n = e->npools;
	if (id >= 0) {
		saved = e->pools[id];
		sel_move(&e->pools[id], &scratch);
	} else {
		/* a provisional entry at the end, dropped after the probe */
		if (e->npools + 1 > e->pools_cap &&
		    (rc = mu__grow((void **)&e->pools, &e->pools_cap, e->npools + 1,
				   sizeof *e->pools)) != MU_OK) {
			mu__pool_sel_free(&scratch);
			return rc;
		}
		e->pools[e->npools] = scratch;
		e->pools[e->npools].slot = -1;
		for (int k = 0; k < MU_POOL_NRES; k++)
			e->pools[e->npools].rslot[k] = -1;
		e->npools++;
	}
	for (int32_t n = 0; n < e->nnodes && rc == MU_OK; n++) {
		const mu__node_t *nd = &e->nodes[n];
		int32_t np = mu__pool_of(e, nd);
		if (np == -2)
			rc = MU_EINVAL; /* two pools would hold it */
		else if (nd->npods && np != nd->pool)
			rc = MU_ESTATE; /* its pods are accounted where it is */
	}
	/* Put the table back as it was before applying anything. */
	if (id >= 0)
		sel_move(&e->pools[id], &saved);
	else
		e->npools = was_n;
	if (rc == MU_OK && id < 0)
		rc = pool_add(e, p, &id);
	if (rc) {
		mu__pool_sel_free(&scratch);
		return rc;
	}
	mu__pool_sel_free(&e->pools[id]); /* the old selector (none for a new pool) */
	sel_move(&e->pools[id], &scratch);
	for (int32_t n = 0; n < e->nnodes; n++)
		mu__pool_move(e, &e->nodes[n], mu__pool_of(e, &e->nodes[n]));
	return MU_OK;
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

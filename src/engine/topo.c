/*
 * topo.c - topologies between nodes: levels, domains and their free
 * capacity.
 *
 * A topology lists node label keys from the outermost level in (zone >
 * block > rack).  A domain is one value path down those levels, so two
 * racks of the same name in different blocks stay apart.  Domains are
 * rebuilt only when the nodes' static facts change; their free vectors
 * (the sum of their nodes' free vectors) follow every bind and release.
 */
#include <stdio.h>

#include "engine/engine_int.h"

void mu__topo_release(mu__topo_t *t)
{
	for (int32_t d = 0; d < t->ndoms; d++)
		free(t->doms[d].nodes);
	free(t->doms);
	free(t->node_dom);
	free(t->name);
	memset(t, 0, sizeof *t);
}

int mu_engine_topology_upsert(mu_engine_t *e, const mu_topology_spec_t *s)
{
	if (!s || !s->name || !*s->name || s->nlevels < 1 || s->nlevels > MU_MAX_LEVELS)
		return MU_EINVAL;
	int32_t keys[MU_MAX_LEVELS];
	for (size_t l = 0; l < s->nlevels; l++) {
		if (!s->levels[l] || !*s->levels[l])
			return MU_EINVAL;
		if ((keys[l] = mu__intern(&e->strs, s->levels[l])) < 0)
			return MU_ENOMEM;
	}
	int32_t id = -1;
	for (int32_t i = 0; i < e->ntopos; i++)
		if (strcmp(e->topos[i].name, s->name) == 0)
			id = i;
	if (id < 0) {
		int rc = mu__grow((void **)&e->topos, &e->topos_cap, e->ntopos + 1,
				  sizeof *e->topos);
		if (rc)
			return rc;
		mu__topo_t *t = &e->topos[e->ntopos];
		memset(t, 0, sizeof *t);
		if (!(t->name = malloc(strlen(s->name) + 1)))
			return MU_ENOMEM;
		strcpy(t->name, s->name);
		id = e->ntopos++;
	}
	mu__topo_t *t = &e->topos[id];
	t->nlevels = (int32_t)s->nlevels;
	memcpy(t->keys, keys, sizeof keys);
	t->gen = 0; /* rebuild on next use */
	return MU_OK;
}

const char *mu_engine_topology_level(const mu_engine_t *e, int32_t topo,
				     int32_t level)
{
	if (topo < 0 || topo >= e->ntopos || level < 0 || level >= e->topos[topo].nlevels)
		return NULL;
	return e->strs.strs[e->topos[topo].keys[level]];
}

/* Finds or creates the domain for (parent, value) at level l, using a
 * temporary map keyed by "parent/value".  Returns its id or a negative
 * error. */
static int32_t topo_domain(mu__topo_t *t, mu__strmap_t *ids, int32_t parent,
			   int32_t value, int32_t l)
{
	char key[48];
	snprintf(key, sizeof key, "%d/%d", parent, value);
	int32_t d = mu__strmap_get(ids, key);
	if (d >= 0)
		return d;
	int rc = mu__grow((void **)&t->doms, &t->doms_cap, t->ndoms + 1, sizeof *t->doms);
	if (rc)
		return rc;
	d = t->ndoms++;
	mu__domain_t *dom = &t->doms[d];
	memset(dom, 0, sizeof *dom);
	dom->level = l;
	for (int32_t k = 0; k < MU_MAX_LEVELS; k++)
		dom->anc[k] = -1;
	if (parent >= 0)
		memcpy(dom->anc, t->doms[parent].anc, sizeof dom->anc);
	dom->anc[l] = d;
	if (!mu__strmap_put(ids, key, d))
		return MU_ENOMEM;
	return d;
}

/* Puts live node nid into its domains at every level it has labels for. */
static int topo_add_node(mu_engine_t *e, mu__topo_t *t, mu__strmap_t *ids,
			 int32_t nid)
{
	const mu__node_t *n = &e->nodes[nid];
	int32_t parent = -1;
	for (int32_t l = 0; l < t->nlevels; l++) {
		int32_t v = mu__node_label(n, t->keys[l]);
		if (v < 0)
			break; /* outside this level and every deeper one */
		int32_t d = topo_domain(t, ids, parent, v, l);
		if (d < 0)
			return d;
		mu__domain_t *dom = &t->doms[d];
		int rc = mu__grow((void **)&dom->nodes, &dom->nodes_cap,
				  dom->nnodes + 1, sizeof *dom->nodes);
		if (rc)
			return rc;
		dom->nodes[dom->nnodes++] = nid;
		for (int r = 0; r < MU_RES_MAX; r++)
			dom->free.v[r] += n->free.v[r];
		t->node_dom[(size_t)nid * MU_MAX_LEVELS + (size_t)l] = d;
		parent = d;
	}
	return MU_OK;
}

int mu__topo_refresh(mu_engine_t *e, mu__topo_t *t)
{
	if (t->gen == e->node_gen)
		return MU_OK;
	for (int32_t d = 0; d < t->ndoms; d++)
		free(t->doms[d].nodes);
	t->ndoms = 0;
	free(t->node_dom);
	size_t cells = (size_t)(e->nnodes ? e->nnodes : 1) * MU_MAX_LEVELS;
	if (!(t->node_dom = malloc(cells * sizeof *t->node_dom)))
		return MU_ENOMEM;
	for (size_t i = 0; i < cells; i++)
		t->node_dom[i] = -1;
	t->node_dom_n = e->nnodes;
	mu__strmap_t ids = {0};
	int rc = MU_OK;
	for (int32_t nid = 0; nid < e->nnodes && rc == MU_OK; nid++)
		if (!e->nodes[nid].removed)
			rc = topo_add_node(e, t, &ids, nid);
	mu__strmap_release(&ids);
	if (rc == MU_OK)
		t->gen = e->node_gen;
	return rc;
}

void mu__topo_node_delta(mu_engine_t *e, int32_t nid, const mu_res_t *before)
{
	const mu__node_t *n = &e->nodes[nid];
	for (int32_t i = 0; i < e->ntopos; i++) {
		mu__topo_t *t = &e->topos[i];
		if (t->gen != e->node_gen || nid >= t->node_dom_n)
			continue; /* stale: rebuilt from scratch when next used */
		for (int32_t l = 0; l < t->nlevels; l++) {
			int32_t d = t->node_dom[(size_t)nid * MU_MAX_LEVELS + (size_t)l];
			if (d < 0)
				break;
			for (int r = 0; r < MU_RES_MAX; r++)
				t->doms[d].free.v[r] += n->free.v[r] - before->v[r];
		}
	}
}

/* The index of level key `name` in t, or -1. */
static int32_t topo_level(const mu_engine_t *e, const mu__topo_t *t, const char *name)
{
	int32_t key = mu__strtab_find(&e->strs, name);
	for (int32_t l = 0; key >= 0 && l < t->nlevels; l++)
		if (t->keys[l] == key)
			return l;
	return -1;
}

int mu__topo_resolve(mu_engine_t *e, const mu_topo_req_t *rq, mu__job_t *j)
{
	j->topo = j->req_level = j->pref_level = j->slice_level = -1;
	j->slice_size = 0;
	if (!rq->required && !rq->preferred && rq->slice_size <= 0)
		return MU_OK;
	int32_t id = rq->topology ? -1 : 0;
	for (int32_t i = 0; rq->topology && i < e->ntopos; i++)
		if (strcmp(e->topos[i].name, rq->topology) == 0)
			id = i;
	if (id < 0 || id >= e->ntopos)
		return MU_ENOENT;
	const mu__topo_t *t = &e->topos[id];
	j->topo = id;
	if (rq->required && (j->req_level = topo_level(e, t, rq->required)) < 0)
		return MU_EINVAL;
	if (rq->preferred && (j->pref_level = topo_level(e, t, rq->preferred)) < 0)
		return MU_EINVAL;
	if (rq->slice_size > 0) {
		if (!rq->slice_level ||
		    (j->slice_level = topo_level(e, t, rq->slice_level)) < 0)
			return MU_EINVAL;
		/* A slice sits inside the gang's domain: deeper or equal. */
		if (j->slice_level < j->req_level)
			return MU_EINVAL;
		j->slice_size = rq->slice_size;
	}
	return MU_OK;
}

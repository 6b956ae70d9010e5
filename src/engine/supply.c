/*
 * supply.c - the cluster's GPU supply, per GPU model, kept incrementally.
 *
 * A policy that places a pod by what the rest of the cluster still offers
 * (muster-supply, score_frag.c) reads, per GPU model, the whole free
 * devices, the nodes with at least k of them and the free share of partly
 * used devices by size class (mu_supply_t).  The engine keeps these sums
 * as part of its cluster state: every change of a node's devices, model or
 * schedulability takes the node's old contribution out and adds its new
 * one, O(devices) each, so a score reads them in O(1) instead of scanning
 * the nodes.  Only policies whose flags carry MU_SCORE_SUPPLY pay for it:
 * for the others every call here returns at once.  The engine frees the
 * model array (mu_engine_free).
 */
#include "engine/engine_int.h"

const mu_supply_t *mu_engine_supply(const mu_engine_t *e)
{
	return mu__supply_ctx(e);
}

/* Adds sign x n's devices to s.  O(devices). */
static void supply_add(mu_supply_model_t *s, const mu__node_t *n, int sign)
{
	int whole = 0;
	for (int g = 0; g < n->ngpu; g++) {
		int16_t f = n->gpu_free[g];
		if (f >= 1000) {
			whole++;
		} else if (f > 0) {
			s->part[f / 100] += sign;
			s->part_milli[f / 100] += sign * f;
		}
	}
	s->nodes += sign;
	s->devices += sign * n->ngpu;
	s->whole += sign * whole;
	for (int k = 0; k <= whole; k++)
		s->nodes_whole[k] += sign;
}

void mu__supply_apply(mu_engine_t *e, const mu__node_t *n, int sign)
{
	if (n->removed || n->unschedulable)
		return;
	if (n->sslot >= 0 && n->sslot < e->supply.nmodels)
		supply_add(&e->supply.models[n->sslot], n, sign);
	supply_add(&e->supply.all, n, sign);
}

int mu__supply_slot(mu_engine_t *e, mu__node_t *n)
{
	if (!mu__supply_kept(e))
		return MU_OK;
	mu_supply_t *s = &e->supply;
	const char *m = n->model_name;
	for (int32_t i = 0; i < s->nmodels; i++) {
		const char *x = s->models[i].model;
		if (x == m || (x && m && strcmp(x, m) == 0)) {
			n->sslot = i;
			return MU_OK;
		}
	}
	int rc = mu__grow((void **)&s->models, &s->cap, s->nmodels + 1,
			  sizeof *s->models);
	if (rc)
		return rc;
	memset(&s->models[s->nmodels], 0, sizeof *s->models);
	s->models[s->nmodels].model = m; /* interned: lives as long as e */
	n->sslot = s->nmodels++;
	return MU_OK;
}

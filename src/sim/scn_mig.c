/*
 * scn_mig.c - MIG layouts in scenario runs (scn_mig.h).
 *
 * Each node that the scenario's migLayouts names gets one layout per
 * physical GPU.  The engine sees a layout the way NVIDIA's device plugin
 * advertises it in the mixed strategy: the GPUs with MIG off as
 * nvidia.com/gpu, each instance as one nvidia.com/mig-PROFILE.  After a
 * step's cycles the runner counts, per node, the instances and whole GPUs
 * that bound pods hold and the pods still waiting, and re-plans the nodes
 * of each GPU model as one pool with mu_mig_replan(); the new layouts
 * reach the engine at the start of the next step.
 *
 * Which instance of a profile a pod holds is the device plugin's choice
 * and not in the pod; the runner holds the first instances of that
 * profile on the node (in GPU and instance order).  A pod holding a whole
 * GPU holds engine device k, which is the k-th GPU with MIG off; a re-plan
 * that turns an earlier idle whole GPU into MIG would renumber it, and the
 * engine then refuses the change (MU_ESTATE, reported with the node).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/error.h"
#include "muster/mig.h"
#include "sim/scn_mig.h"

#define MIG_PREFIX "nvidia.com/mig-"

typedef struct smig_node {
	const mu_node_spec_t *base;   /* the spec's node */
	mu_node_spec_t spec;          /* what the engine gets */
	mu_ext_qty_t *ext;            /* base's other resources, then profiles */
	size_t nbase_ext;
	const mu_mig_model_t *model;
	int ngpu;
	mu_mig_gpu_t cur[MU_MAX_GPUS];  /* given to the engine */
	mu_mig_gpu_t next[MU_MAX_GPUS]; /* re-planned, given at the next step */
	uint8_t held[MU_MAX_GPUS];
	char names[MU_MIG_MAX_PROFILES][48]; /* nvidia.com/mig-PROFILE */
	bool dirty;                   /* next not given to the engine yet */
} smig_node_t;

struct mu__smig {
	const mu_specs_t *s;
	smig_node_t *nodes;
	size_t n;
};

void mu__smig_free(mu__smig_t *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		free(d->nodes[i].ext);
	free(d->nodes);
	free(d);
}

/* The spec node called name, or NULL.  Linear in the nodes. */
static const mu_node_spec_t *spec_node(const mu_specs_t *s, const char *name)
{
	for (size_t i = 0; i < s->nnodes; i++)
		if (!strcmp(s->nodes[i].name, name))
			return &s->nodes[i];
	return NULL;
}

/* Sets up node x from its stated layouts l.  MU_EINVAL with why. */
static int node_init(const mu_specs_t *s, const mu_mig_layout_spec_t *l,
		     smig_node_t *x, char *msg, size_t len)
{
	x->base = spec_node(s, l->node);
	if (!x->base) {
		snprintf(msg, len, "migLayouts: node \"%s\" is not defined", l->node);
		return MU_EINVAL;
	}
	x->model = mu_mig_node_model(x->base);
	if (!x->model) {
		snprintf(msg, len, "migLayouts: node \"%s\": its GPU model has no MIG "
			 "(A100 or H100 by gpuModel or nvidia.com/gpu.product)", l->node);
		return MU_EINVAL;
	}
	x->ngpu = (int)l->ngpus;
	for (int g = 0; g < x->ngpu; g++) {
		char why[160];
		if (mu_mig_parse(x->model, l->gpus[g], &x->cur[g], why, sizeof why)) {
			snprintf(msg, len, "migLayouts: node \"%s\" GPU %d: %s", l->node, g, why);
			return MU_EINVAL;
		}
		x->next[g] = x->cur[g];
	}
	for (int p = 0; p < x->model->nprofiles; p++)
		snprintf(x->names[p], sizeof x->names[p], MIG_PREFIX "%s",
			 x->model->profiles[p].name);
	x->ext = calloc(x->base->next + (size_t)x->model->nprofiles + 1, sizeof *x->ext);
	if (!x->ext)
		return MU_ENOMEM;
	for (size_t k = 0; k < x->base->next; k++)
		if (strncmp(x->base->ext[k].name, MIG_PREFIX, strlen(MIG_PREFIX)))
			x->ext[x->nbase_ext++] = x->base->ext[k];
	x->spec = *x->base;
	x->dirty = true;
	return MU_OK;
}

int mu__smig_new(const mu_specs_t *s, mu__smig_t **out, char *msg, size_t len)
{
	*out = NULL;
	const mu_scenario_spec_t *sc = s->scenario;
	if (!sc || !sc->nmig)
		return MU_OK;
	if (s->ndra) {
		snprintf(msg, len, "migLayouts cannot be used beside DRA objects in one scenario");
		return MU_EINVAL;
	}
	mu__smig_t *d = calloc(1, sizeof *d);
	if (!d || !(d->nodes = calloc(sc->nmig, sizeof *d->nodes))) {
		free(d);
		return MU_ENOMEM;
	}
	d->s = s;
	int rc = MU_OK;
	for (size_t i = 0; rc == MU_OK && i < sc->nmig; i++) {
		for (size_t k = 0; k < i && rc == MU_OK; k++)
			if (!strcmp(sc->mig[k].node, sc->mig[i].node)) {
				snprintf(msg, len, "migLayouts: node \"%s\" is named twice",
					 sc->mig[i].node);
				rc = MU_EINVAL;
			}
		if (rc == MU_OK)
			rc = node_init(s, &sc->mig[i], &d->nodes[d->n++], msg, len);
	}
	for (size_t i = 0; rc == MU_OK && i < sc->nsteps; i++)
		for (size_t k = 0; rc == MU_OK && k < sc->steps[i].nexpect_mig; k++) {
			const mu_mig_layout_spec_t *l = &sc->steps[i].expect_mig[k];
			long n = mu__smig_gpus(d, l->node);
			if (n < 0 || (size_t)n != l->ngpus) {
				snprintf(msg, len, "step %zu: migLayouts: node \"%s\" %s", i + 1,
					 l->node, n < 0 ? "is not in the scenario's migLayouts"
					 : "has another number of GPUs in the scenario's migLayouts");
				rc = MU_EINVAL;
			}
		}
	if (rc != MU_OK) {
		mu__smig_free(d);
		return rc;
	}
	*out = d;
	return MU_OK;
}

int mu__smig_apply(mu__smig_t *d, mu_engine_t *e, char *msg, size_t len)
{
	for (size_t i = 0; i < d->n; i++) {
		smig_node_t *x = &d->nodes[i];
		if (!x->dirty || mu_engine_node_find(e, x->base->name) < 0)
			continue;
		int32_t count[MU_MIG_MAX_PROFILES] = {0};
		int whole = 0;
		for (int g = 0; g < x->ngpu; g++) {
			x->cur[g] = x->next[g];
			if (x->cur[g].enabled)
				mu_mig_count(x->model, &x->cur[g], count);
			else
				whole++;
		}
		size_t n = x->nbase_ext;
		for (int p = 0; p < x->model->nprofiles; p++)
			if (count[p])
				x->ext[n++] = (mu_ext_qty_t){x->names[p], count[p]};
		x->spec.ext = x->ext;
		x->spec.next = n;
		x->spec.alloc.v[MU_RES_GPU] = whole;
		int rc = mu_engine_node_upsert(e, &x->spec, NULL);
		if (rc != MU_OK) {
			snprintf(msg, len, "migLayouts: node \"%s\": the engine refused its "
				 "new layout: %s%s", x->base->name, mu_strerror(rc),
				 rc == MU_ESTATE ? " (a whole GPU in use would be renumbered)" : "");
			return rc;
		}
		x->dirty = false;
	}
	return MU_OK;
}

/* The profile index in m of extended resource name, or -1. */
static int ext_profile(const mu_mig_model_t *m, const char *name)
{
	if (strncmp(name, MIG_PREFIX, strlen(MIG_PREFIX)))
		return -1;
	return mu_mig_profile_index(m, name + strlen(MIG_PREFIX) - 4);
}

/* Marks in x->held what the pods bound to engine node id hold.
 * O(pods x extended resources + GPUs x instances). */
static void node_held(const mu__smig_t *d, smig_node_t *x, const mu_engine_t *e,
		      mu_id_t id, const mu_id_t *ids, const bool *finished)
{
	int32_t count[MU_MIG_MAX_PROFILES] = {0};
	memset(x->held, 0, sizeof x->held);
	for (size_t k = 0; k < d->s->njobs; k++) {
		if (ids[k] < 0 || finished[k])
			continue;
		const mu_job_spec_t *j = &d->s->jobs[k];
		for (size_t p = 0; p < j->npodsets; p++)
			for (int32_t q = 0; q < j->podsets[p].replicas; q++) {
				if (mu_engine_pod_node(e, ids[k], (int32_t)p, q) != id)
					continue;
				for (size_t r = 0; r < j->podsets[p].next; r++) {
					int pi = ext_profile(x->model, j->podsets[p].ext[r].name);
					if (pi >= 0)
						count[pi] += (int32_t)j->podsets[p].ext[r].qty;
				}
			}
	}
	for (int g = 0; g < x->ngpu; g++)
		for (int i = 0; x->cur[g].enabled && i < x->cur[g].n; i++)
			if (count[x->cur[g].prof[i]] > 0) {
				count[x->cur[g].prof[i]]--;
				x->held[g] |= (uint8_t)(1u << i);
			}
	mu_node_info_t in;
	if (mu_engine_node_info(e, id, &in) != MU_OK)
		return;
	for (int g = 0, k = 0; g < x->ngpu; g++)
		if (!x->cur[g].enabled) {
			if (k < in.ngpu && in.gpu_free[k] < 1000)
				x->held[g] = 1;
			k++;
		}
}

/* Adds the waiting pods' demand for model m into demand and *whole.
 * O(pods x extended resources). */
static void pending(const mu__smig_t *d, const mu_mig_model_t *m, const mu_engine_t *e,
		    const mu_id_t *ids, const bool *finished, int32_t *demand,
		    int64_t *whole)
{
	for (size_t k = 0; k < d->s->njobs; k++) {
		if (ids[k] < 0 || finished[k])
			continue;
		const mu_job_spec_t *j = &d->s->jobs[k];
		for (size_t p = 0; p < j->npodsets; p++)
			for (int32_t q = 0; q < j->podsets[p].replicas; q++) {
				if (mu_engine_pod_node(e, ids[k], (int32_t)p, q) >= 0)
					continue;
				*whole += j->podsets[p].req.v[MU_RES_GPU];
				for (size_t r = 0; r < j->podsets[p].next; r++) {
					int pi = ext_profile(m, j->podsets[p].ext[r].name);
					if (pi >= 0 && demand[pi] < INT32_MAX / 2)
						demand[pi] += (int32_t)j->podsets[p].ext[r].qty;
				}
			}
	}
}

int mu__smig_replan(mu__smig_t *d, const mu_engine_t *e, const mu_id_t *ids,
		    const bool *finished, char *msg, size_t len)
{
	int64_t whole_left = -1;
	int rc = MU_OK;
	mu_mig_gpu_t *cur = calloc(d->n * MU_MAX_GPUS + 1, sizeof *cur);
	mu_mig_gpu_t *out = calloc(d->n * MU_MAX_GPUS + 1, sizeof *out);
	uint8_t *held = calloc(d->n * MU_MAX_GPUS + 1, 1);
	bool *done = calloc(d->n + 1, sizeof *done);
	if (!cur || !out || !held || !done)
		rc = MU_ENOMEM;
	for (size_t i = 0; rc == MU_OK && i < d->n; i++) {
		if (done[i])
			continue;
		const mu_mig_model_t *m = d->nodes[i].model;
		int n = 0;
		for (size_t k = i; k < d->n; k++) { /* the pool of model m */
			smig_node_t *x = &d->nodes[k];
			mu_id_t id = mu_engine_node_find(e, x->base->name);
			if (x->model != m || id < 0)
				continue;
			node_held(d, x, e, id, ids, finished);
			memcpy(cur + n, x->cur, (size_t)x->ngpu * sizeof *cur);
			memcpy(held + n, x->held, (size_t)x->ngpu);
			n += x->ngpu;
		}
		int32_t demand[MU_MIG_MAX_PROFILES] = {0};
		int64_t whole = 0;
		pending(d, m, e, ids, finished, demand, &whole);
		if (whole_left < 0)
			whole_left = whole;
		int ws = 0;
		int c = mu_mig_replan(m, n, cur, held,
				      whole_left > INT32_MAX ? INT32_MAX : (int)whole_left,
				      demand, out, NULL, &ws);
		if (c < 0) {
			snprintf(msg, len, "migLayouts: re-planning the %s nodes: %s", m->name,
				 mu_strerror(c));
			rc = c;
			break;
		}
		whole_left -= ws;
		n = 0;
		for (size_t k = i; k < d->n; k++) {
			smig_node_t *x = &d->nodes[k];
			if (x->model != m)
				continue;
			done[k] = true;
			if (mu_engine_node_find(e, x->base->name) < 0)
				continue;
			for (int g = 0; g < x->ngpu; g++) {
				x->next[g] = out[n + g];
				x->dirty |= !mu_mig_same(&x->next[g], &x->cur[g]);
			}
			n += x->ngpu;
		}
	}
	free(cur);
	free(out);
	free(held);
	free(done);
	return rc;
}

/* The node called name, or NULL. */
static const smig_node_t *find(const mu__smig_t *d, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->nodes[i].base->name, name))
			return &d->nodes[i];
	return NULL;
}

long mu__smig_gpus(const mu__smig_t *d, const char *node)
{
	const smig_node_t *x = find(d, node);
	return x ? x->ngpu : -1;
}

void mu__smig_format(const mu__smig_t *d, const char *node, long g, char *buf,
		     size_t len)
{
	const smig_node_t *x = find(d, node);
	if (!x || g < 0 || g >= x->ngpu) {
		snprintf(buf, len, "?");
		return;
	}
	mu_mig_format(x->model, &x->next[g], buf, len);
}

bool mu__smig_canon(const mu__smig_t *d, const char *node, const char *s,
		    char *buf, size_t len)
{
	const smig_node_t *x = find(d, node);
	mu_mig_gpu_t g;
	if (!x) {
		snprintf(buf, len, "node \"%s\" is not in migLayouts", node);
		return false;
	}
	if (mu_mig_parse(x->model, s, &g, buf, len))
		return false;
	mu_mig_format(x->model, &g, buf, len);
	return true;
}

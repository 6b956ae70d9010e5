/*
 * gpumem.c - GPU memory requests: a pod set that asks for an amount of one
 * GPU's memory (KAI-Scheduler's `gpu-memory` annotation, in MiB) instead of
 * a share.
 *
 * A node says how much memory each of its GPUs has with the label
 * nvidia.com/gpu.memory (MiB, as NVIDIA's GPU Feature Discovery writes it).
 * KAI-Scheduler turns a memory request into a share per node: memory over
 * the node's GPU memory.  muster's engine keeps one request per pod set, so
 * it resolves the request once, when the job is built: among the live GPU
 * nodes whose GPUs hold the amount, it takes the smallest GPU memory S, pins
 * the pod set to nodes labelled with exactly S (a node selector), and asks
 * for ceil(memory x 1000 / S) milli-GPU there (a whole GPU when the amount
 * is all of it).  On those nodes the share is the one KAI computes; nodes
 * with bigger GPUs are not used for the pod set (docs/policy.md, "GPU
 * memory requests").  When no node's GPUs hold the amount, the pod set is
 * pinned to a label value no node has, so the job waits and explain says
 * that no node matched its selector.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

#define GPUMEM_LABEL "nvidia.com/gpu.memory"
#define GPUMEM_NONE "none-holds-the-request"

/* A label value as MiB: digits only, 1..2^40; 0 when it is not one. */
static int64_t mib_of(const char *s)
{
	int64_t v = 0;
	if (!s || !*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (INT64_C(1) << 40))
			return 0;
		v = v * 10 + (*s - '0');
	}
	return v;
}

/* Walks every live node once: O(nodes x log labels).  The selector copy
 * *sel is the caller's to free once the class is made. */
int mu__gpumem_resolve(const mu_engine_t *e, const mu_podset_spec_t *ps,
		       mu_podset_spec_t *out, mu_label_t **sel)
{
	*out = *ps;
	*sel = NULL;
	if (ps->gpu_memory <= 0)
		return MU_OK;
	if (ps->req.v[MU_RES_GPU] || ps->req.v[MU_RES_GPU_MILLI])
		return MU_EINVAL; /* memory or a share, not both */
	int32_t key = mu__strtab_find(&e->strs, GPUMEM_LABEL);
	int64_t best = 0;
	const char *best_s = GPUMEM_NONE;
	for (int32_t i = 0; key >= 0 && i < e->nnodes; i++) {
		const mu__node_t *n = &e->nodes[i];
		int32_t v = n->removed || n->ngpu == 0 ? -1 : mu__node_label(n, key);
		int64_t m = v >= 0 ? mib_of(e->strs.strs[v]) : 0;
		if (m >= ps->gpu_memory && (!best || m < best)) {
			best = m;
			best_s = e->strs.strs[v];
		}
	}
	mu_label_t *l = malloc((ps->nnode_selector + 1) * sizeof *l);
	if (!l)
		return MU_ENOMEM;
	if (ps->nnode_selector)
		memcpy(l, ps->node_selector, ps->nnode_selector * sizeof *l);
	l[ps->nnode_selector] = (mu_label_t){GPUMEM_LABEL, best_s};
	out->node_selector = l;
	out->nnode_selector = ps->nnode_selector + 1;
	*sel = l;
	if (!best) {
		out->req.v[MU_RES_GPU_MILLI] = 1; /* never placed: no node matches */
		return MU_OK;
	}
	int64_t milli = (ps->gpu_memory * 1000 + best - 1) / best;
	if (milli >= 1000)
		out->req.v[MU_RES_GPU] = 1;
	else
		out->req.v[MU_RES_GPU_MILLI] = milli;
	return MU_OK;
}

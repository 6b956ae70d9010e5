/*
 * nodeinfo.c - what one node holds, for views of the cluster (the live
 * UI's heat map): its devices' free shares, its free and allocatable
 * resources, and the GPUs the current cycle's backfill reservations hold
 * there.  Read-only; O(devices).
 */
#include <string.h>

#include "engine/engine_int.h"

int mu_engine_node_info(const mu_engine_t *e, mu_id_t node, mu_node_info_t *out)
{
	if (node < 0 || node >= e->nnodes || e->nodes[node].removed)
		return MU_ENOENT;
	const mu__node_t *n = &e->nodes[node];
	memset(out, 0, sizeof *out);
	out->name = n->name;
	out->gpu_model = n->model_name;
	out->unschedulable = n->unschedulable;
	out->ngpu = n->ngpu;
	out->alloc = n->alloc;
	out->free = n->free;
	out->pods = n->npods;
	memcpy(out->gpu_free, n->gpu_free, sizeof out->gpu_free);
	if (n->resv_stamp == e->cycle_stamp && e->nresv) {
		out->reserved_gpus = (int32_t)n->resv_used.v[MU_RES_GPU];
		out->reserved_at = n->resv_at;
	} else {
		out->reserved_at = MU_TIME_NONE;
	}
	return MU_OK;
}

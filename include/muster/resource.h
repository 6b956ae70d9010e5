/*
 * resource.h - resource vectors and Kubernetes quantities.
 *
 * A mu_res_t is a fixed-size vector of int64 amounts, one slot per resource
 * kind.  The first slots are the core kinds below; slots from MU_RES_NAMED0 on
 * hold named extended resources, which an engine interns on first use.
 *
 * Units: CPU in millicores, memory in bytes, pods as a count.  GPUs are split
 * in two slots whose meaning depends on who holds the vector:
 *   - a pod request:  MU_RES_GPU = whole GPUs, MU_RES_GPU_MILLI = a share of
 *     one GPU in milli-GPU (1..999), used only when MU_RES_GPU is 0;
 *   - a node's allocatable: MU_RES_GPU = number of GPU devices (<= MU_MAX_GPUS);
 *   - queue quotas and usage ("accounting" vectors): MU_RES_GPU is in
 *     milli-GPU (8 GPUs = 8000) and MU_RES_GPU_MILLI is unused (0).
 * mu_res_acct() converts a pod request to its accounting vector.
 */
#ifndef MUSTER_RESOURCE_H
#define MUSTER_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	MU_RES_CPU = 0,       /* millicores */
	MU_RES_MEM = 1,       /* bytes */
	MU_RES_GPU = 2,       /* see above */
	MU_RES_GPU_MILLI = 3, /* see above */
	MU_RES_PODS = 4,      /* pod count */
	MU_RES_NAMED0 = 5,    /* first named extended resource */
	MU_RES_MAX = 16,
};

#define MU_MAX_GPUS 64           /* GPU devices per node (fits a uint64 mask) */
#define MU_RES_UNLIMITED INT64_MAX /* "no limit" in quota vectors */

typedef struct mu_res {
	int64_t v[MU_RES_MAX];
} mu_res_t;

/* A named extended resource amount, as given in specs. */
typedef struct mu_ext_qty {
	const char *name;
	int64_t qty;
} mu_ext_qty_t;

/* Kubernetes resource names of the core slots ("cpu", "memory",
 * "nvidia.com/gpu", "muster.io/gpu-milli", "pods"). */
const char *mu_res_name(int slot);

/* The accounting vector of one pod request: GPUs folded into milli-GPU. */
mu_res_t mu_res_acct(const mu_res_t *req);

/*
 * Parses a Kubernetes quantity ("500m", "2", "1.5", "64Gi", "1e3", "2k")
 * into *out, scaled by `scale` (1000 for CPU millicores, 1 for bytes).
 * Rounds up fractions, as Kubernetes does.  Returns MU_OK, MU_EPARSE for
 * malformed text, or MU_ERANGE when the value is negative or overflows.
 */
int mu_quantity_parse(const char *s, int64_t scale, int64_t *out);

#endif

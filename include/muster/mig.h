/*
 * mig.h - NVIDIA Multi-Instance GPU layouts: the profiles of MIG-capable
 * GPU models, whether a layout of one GPU is valid, and a layout for a
 * pending demand (docs/policy.md, "MIG").
 *
 * A MIG-capable GPU (A100, H100) has 7 compute slices and 8 memory slices.
 * A profile such as 3g.40gb takes 3 compute slices and a run of memory
 * slices that may start only at given places (NVIDIA's MIG user guide,
 * "Supported MIG profiles"; `nvidia-smi mig -lgipp` prints the same
 * placements).  A layout is valid when no two instances share a memory
 * slice and their compute slices add up to at most 7.
 */
#ifndef MUSTER_MIG_H
#define MUSTER_MIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MU_MIG_MAX_PROFILES 8
#define MU_MIG_MAX_INST 8   /* instances on one GPU (7 x 1g at most) */
#define MU_MIG_SLOTS 8      /* memory slices */
#define MU_MIG_COMPUTE 7    /* compute slices */

typedef struct mu_mig_profile {
	const char *name;  /* "1g.10gb", as in nvidia.com/mig-1g.10gb */
	int8_t compute;    /* compute slices */
	int8_t size;       /* memory slices */
	uint8_t starts;    /* bit s: the instance may start at memory slice s */
} mu_mig_profile_t;

typedef struct mu_mig_model {
	const char *name;  /* "A100-40GB", "A100-80GB", "H100-80GB" */
	const mu_mig_profile_t *profiles; /* smallest first */
	int nprofiles;
} mu_mig_model_t;

/* One GPU's layout: MIG off (a whole GPU), or a list of instances. */
typedef struct mu_mig_gpu {
	bool enabled;
	int n;                         /* instances */
	int8_t prof[MU_MIG_MAX_INST];  /* profile index in the model */
	int8_t start[MU_MIG_MAX_INST]; /* first memory slice */
} mu_mig_gpu_t;

/* The model named name (case-insensitive; "A100-SXM4-80GB" style product
 * names match by their memory too), or NULL when it has no MIG. */
const mu_mig_model_t *mu_mig_model(const char *name);

/* The index of profile name ("1g.10gb" or "mig-1g.10gb") in m, or -1. */
int mu_mig_profile_index(const mu_mig_model_t *m, const char *name);

/* Whether g is a valid layout of one GPU of model m.  O(instances). */
bool mu_mig_valid(const mu_mig_model_t *m, const mu_mig_gpu_t *g);

/*
 * Decides the layouts of ngpu GPUs of model m for a demand: `whole` pods
 * that want a whole GPU (MIG off) and demand[p] instances of each profile
 * p (m->nprofiles entries).  Whole GPUs are kept first (at most ngpu); the
 * instances are then packed largest first into as few GPUs as possible,
 * each at the highest start that is free, which keeps the low slices for
 * the profiles that may start only there.  GPUs left over stay whole.
 * Writes out[0..ngpu-1] and, when served is not NULL, how many instances
 * of each profile got a place, and *whole_served.  O(ngpu x instances x 8).
 */
void mu_mig_plan(const mu_mig_model_t *m, int ngpu, int whole,
		 const int32_t *demand, mu_mig_gpu_t *out, int32_t *served,
		 int *whole_served);

/* Counts g's instances of each profile into count (m->nprofiles). */
void mu_mig_count(const mu_mig_model_t *m, const mu_mig_gpu_t *g,
		  int32_t *count);

#endif

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

#include "muster/model.h"

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
 * p (m->nprofiles entries).  GPUs for the whole pods are kept first: all
 * they ask for when the demand fits, else their share of the demand's
 * compute slices (so neither kind starves the other); the instances are
 * then packed largest first into as few GPUs as possible, each at the
 * highest start that is free, which keeps the low slices for the profiles
 * that may start only there.  GPUs left over stay whole and serve more
 * whole pods.
 * Writes out[0..ngpu-1] and, when served is not NULL, how many instances
 * of each profile got a place, and *whole_served.  O(ngpu x instances x 8).
 */
void mu_mig_plan(const mu_mig_model_t *m, int ngpu, int whole,
		 const int32_t *demand, mu_mig_gpu_t *out, int32_t *served,
		 int *whole_served);

/* Counts g's instances of each profile into count (m->nprofiles). */
void mu_mig_count(const mu_mig_model_t *m, const mu_mig_gpu_t *g,
		  int32_t *count);

/*
 * Re-plans ngpu GPUs of model m whose current layouts are cur[] while pods
 * run on some of their devices: held[g] has bit i set when instance i of
 * cur[g] is held by a running pod, and any bit set on a GPU with MIG off
 * when a whole-GPU pod holds it.  Nothing held moves: a held whole GPU
 * stays whole, and a GPU with a held instance keeps MIG on and that
 * instance where it is (MIG creates and destroys one GPU instance without
 * touching the others; only switching MIG mode needs the GPU idle).
 * `whole` and demand[] are the pending demand, as for mu_mig_plan().
 *   1. When the free devices of cur already serve all of it, out = cur:
 *      no GPU changes for nothing.
 *   2. Else the GPUs with a held instance keep it, keep their free
 *      instances the demand asks for, drop the rest, and take more of the
 *      demand (largest first, at the highest free start); the GPUs with
 *      nothing held are planned with mu_mig_plan() for what is left, and
 *      each new layout goes to a free GPU whose layout is already that one
 *      when there is such a GPU, so that fewer GPUs change.
 * Writes out[0..ngpu-1] (out may not alias cur) and, when not NULL, the
 * pending instances of each profile and whole pods that the new layout
 * serves (its free devices, matched against the demand).  Returns how many
 * GPUs change layout, MU_EINVAL when a layout of cur is not valid or an
 * argument is out of range, MU_ENOMEM.  O(ngpu^2 + ngpu x instances x 8).
 */
int mu_mig_replan(const mu_mig_model_t *m, int ngpu, const mu_mig_gpu_t *cur,
		  const uint8_t *held, int whole, const int32_t *demand,
		  mu_mig_gpu_t *out, int32_t *served, int *whole_served);

/* Whether two layouts of one GPU hold the same instances at the same
 * places (in any order).  O(instances^2). */
bool mu_mig_same(const mu_mig_gpu_t *a, const mu_mig_gpu_t *b);

/*
 * Parses one GPU's layout as muster writes it in the muster.io/mig-layout
 * annotation and scenario files: "whole" (MIG off), "empty" (MIG on, no
 * instance) or instances "PROFILE@START" joined by '+' (such as
 * "3g.40gb@4+2g.20gb@0"; "@START" may be left out, the instance then
 * takes the highest free start allowed).  With m NULL any known model
 * that accepts it will do.  MU_EINVAL with why (naming the bad part) for
 * an unknown profile, a start the profile may not use, overlapping
 * instances or more than 7 compute slices.  O(length).
 */
int mu_mig_parse(const mu_mig_model_t *m, const char *s, mu_mig_gpu_t *out,
		 char *why, size_t len);

/* Writes g as mu_mig_parse() reads it, instances by start, into buf
 * (NUL-terminated, truncated to len).  Returns the length it needed. */
size_t mu_mig_format(const mu_mig_model_t *m, const mu_mig_gpu_t *g, char *buf,
		     size_t len);

/* A node's layouts as in the muster.io/mig-layout annotation: one
 * mu_mig_parse() text per GPU, joined by ';' ("whole;3g.40gb@4+2g.20gb@0").
 * Parses s into out (at most cap GPUs) and returns how many GPUs, or
 * MU_EINVAL with why (naming the GPU) / MU_ELIMIT past cap.  O(length). */
int mu_mig_parse_node(const mu_mig_model_t *m, const char *s, mu_mig_gpu_t *out,
		      int cap, char *why, size_t len);
/* Writes n layouts as mu_mig_parse_node() reads them into buf (truncated
 * to len, NUL-terminated); returns the length it needed. */
size_t mu_mig_format_node(const mu_mig_model_t *m, const mu_mig_gpu_t *g, int n,
			  char *buf, size_t len);

/* The MIG model of node n: mu_mig_model() of its gpu_model, else of its
 * nvidia.com/gpu.product label; NULL when neither is MIG-capable. */
const mu_mig_model_t *mu_mig_node_model(const mu_node_spec_t *n);

/* The layout muster decides for one node (mu_mig_plan_nodes). */
typedef struct mu_mig_node_plan {
	const char *node;            /* the spec's name */
	const mu_mig_model_t *model;
	int ngpu;                    /* physical GPUs */
	mu_mig_gpu_t gpus[MU_MAX_GPUS];
} mu_mig_node_plan_t;

/*
 * Plans the MIG layouts of every node whose GPU model is MIG-capable
 * (mu_mig_model() of its gpu_model or nvidia.com/gpu.product label) for
 * the demand of jobs: nvidia.com/mig-PROFILE extended requests are
 * instances, nvidia.com/gpu requests whole GPUs (pod count x GPUs).
 * A node's physical GPU count is its nvidia.com/gpu.count label (what GPU
 * Feature Discovery writes when some GPUs are split), else its GPUs.  The
 * nodes of one model form one pool, planned with mu_mig_plan(), in the
 * order of the specs; a profile name is demand for every model that has
 * it (1g.10gb exists on A100-40GB and A100-80GB), and whole GPUs kept on
 * one pool are not asked of the next.  Node constraints of the pods (selectors, gangs) are not looked
 * at.  Writes up to cap plans into out; returns how many, or MU_ELIMIT.
 * O(nodes x GPUs x instances).
 */
int mu_mig_plan_nodes(const mu_node_spec_t *nodes, size_t nnodes,
		      const mu_job_spec_t *jobs, size_t njobs,
		      mu_mig_node_plan_t *out, int cap);

#endif

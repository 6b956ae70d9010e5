/*
 * scn_dra.h - DRA resource claims in scenario runs and simulations
 * (scn_dra.c), for the scenario runner (scenario.c) and the simulator
 * (sim.c) only.
 */
#ifndef MUSTER_SIM_SCN_DRA_H
#define MUSTER_SIM_SCN_DRA_H

#include "muster/engine.h"
#include "muster/load.h"

typedef struct mu__sdra mu__sdra_t;

/* Reads the specs' DRA objects and the pod sets' claims into *out (owned;
 * NULL when the scenario has no DRA at all).  MU_EINVAL with why in msg
 * for an object the runner cannot read.  Linear in the objects. */
int mu__sdra_new(const mu_specs_t *s, mu__sdra_t **out, char *msg, size_t len);
void mu__sdra_free(mu__sdra_t *d);

/* The spec to submit for spec job k: s->jobs[k] itself, or (when its pods
 * have claims) a copy whose claim-bearing pod sets also select the node
 * label that mu__sdra_prepare() puts on the nodes where they fit, and ask
 * for the counted devices (muster.io/dra-CLASS) of their template claims.
 * Owned by d; NULL on OOM. */
const mu_job_spec_t *mu__sdra_job(mu__sdra_t *d, size_t k);

/* Job k was submitted: makes the claims of its pods that come from
 * templates, as the resource claim controller does.  MU_ENOENT with why in
 * msg when a pod names a claim or template that does not exist. */
int mu__sdra_submitted(mu__sdra_t *d, size_t k, char *msg, size_t len);

/* Before a cycle at now: takes back the bound pods whose devices have a
 * NoExecute taint they do not tolerate at now (timeAdded, or 0, plus
 * their tolerationSeconds), then frees the claims of pods that are no
 * longer bound (finished, evicted, lost with their node), then labels every node where
 * the next waiting pod of each claim-bearing pod set can get its devices
 * (for a set whose devices are counted, also where it could once the
 * claims made for running pods are gone: the engine preempts there if it
 * may), updating the nodes in e whose labels changed.  ids and finished
 * are the runner's per spec job.  O(nodes x pod sets x allocation). */
int mu__sdra_prepare(mu__sdra_t *d, mu_engine_t *e, const mu_id_t *ids,
		     const bool *finished, mu_time_t now);

/* After a cycle: allocates the claims of every pod that dec binds, on its
 * node, and reserves them for it, as kube-scheduler does before the bind.
 * A pod whose devices went to another pod of the same cycle is unbound
 * (mu_engine_pod_unbind) and waits.  Returns how many were unbound, or a
 * negative error. */
int mu__sdra_binds(mu__sdra_t *d, mu_engine_t *e, const mu_id_t *ids,
		   const bool *finished, const mu_decisions_t *dec, mu_time_t now);

/* Why job k's claims fit nowhere (or "" when they do). */
const char *mu__sdra_msg(const mu__sdra_t *d, size_t k);

/* The DRA devices of job k's bound pods as malloc'ed strings
 * "NODE:DRIVER/POOL/DEVICE" into *out (the caller frees them and it), a
 * claim shared by several pods once.  Returns the count or -1 on OOM. */
long mu__sdra_devices(const mu__sdra_t *d, const mu_engine_t *e, size_t k, mu_id_t id,
		      char ***out);

/* The DRA devices that count as GPUs: those whose driver's name contains
 * "gpu" in any case (KAI-Scheduler's IsGPUDeviceClass rule, which reads a
 * DeviceClass's name, applied to the driver: a slice's devices name no
 * class).  *total: such devices of the newest generation of each pool;
 * *used: such devices allocated to claims reserved for a pod.
 * O(slices^2 + claims x results). */
void mu__sdra_gpus(const mu__sdra_t *d, int64_t *total, int64_t *used);

#endif

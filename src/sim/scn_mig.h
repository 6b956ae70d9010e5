/*
 * scn_mig.h - MIG layouts in scenario runs (scn_mig.c), for the scenario
 * runner (scenario.c) only: a scenario's migLayouts state the layouts its
 * nodes start with, the runner re-plans them for the pending pods after
 * every step (mu_mig_replan, the running pods' devices held) and applies
 * the re-plan before the next step, as a MIG manager would.
 */
#ifndef MUSTER_SIM_SCN_MIG_H
#define MUSTER_SIM_SCN_MIG_H

#include "muster/engine.h"
#include "muster/load.h"

typedef struct mu__smig mu__smig_t;

/* Reads the scenario's migLayouts into *out (owned; NULL when it has
 * none).  MU_EINVAL with why in msg for a node that does not exist, whose
 * GPU model has no MIG, or a layout its model refuses; MU_EINVAL too beside
 * DRA objects.  O(nodes x GPUs). */
int mu__smig_new(const mu_specs_t *s, mu__smig_t **out, char *msg, size_t len);
void mu__smig_free(mu__smig_t *d);

/* Gives the engine the layouts that changed since the last call (all on
 * the first): each node's whole GPUs as nvidia.com/gpu, its instances as
 * nvidia.com/mig-PROFILE counts, its other resources as stated.  Nodes the
 * engine no longer has are left out.  An engine error with why in msg
 * (MU_ESTATE: a whole GPU that a pod holds would go, see scn_mig.c).
 * O(nodes x GPUs). */
int mu__smig_apply(mu__smig_t *d, mu_engine_t *e, char *msg, size_t len);

/* After a step's cycles: re-plans every stated node for the pods still
 * waiting (of the jobs submitted and not finished; ids and finished are
 * the runner's per spec job), holding the devices that bound pods use.
 * O(pods + GPUs^2). */
int mu__smig_replan(mu__smig_t *d, const mu_engine_t *e, const mu_id_t *ids,
		    const bool *finished, char *msg, size_t len);

/* The GPUs of node (its re-planned layouts), or -1 when migLayouts does
 * not name it. */
long mu__smig_gpus(const mu__smig_t *d, const char *node);

/* GPU g of node's re-planned layout as text (mu_mig_format) into buf. */
void mu__smig_format(const mu__smig_t *d, const char *node, long g, char *buf,
		     size_t len);

/* Canonical text of layout s for node's model (so that expectations
 * compare as the runner writes); false with why in buf when it does not
 * parse for that model. */
bool mu__smig_canon(const mu__smig_t *d, const char *node, const char *s,
		    char *buf, size_t len);

#endif

/*
 * eval_mig.h - MIG layouts decided for the pending demand against a static
 * layout (docs/evaluation.md, "MIG: dynamic layouts").
 *
 * The protocol: a pool of ngpu A100-80GB GPUs and `rounds` snapshots of
 * pending demand.  In each, the share f of the demand's compute that asks
 * for MIG instances is drawn uniformly from [0, 1]; the demand is
 * `load` x the pool's compute slices (7 per GPU), the rest of it whole-GPU
 * pods.  Instances are drawn one by one from 1g.10gb, 2g.20gb, 3g.40gb,
 * 4g.40gb and 7g.80gb with weights 40, 25, 25, 5, 5 until their compute
 * reaches f of the demand.  Two layouts serve each snapshot, each instance
 * only by its own profile (NVIDIA's mixed strategy):
 *   static   half the GPUs whole, half in mig-parted's all-balanced layout
 *            (2 x 1g.10gb, 1 x 2g.20gb, 1 x 3g.40gb);
 *   dynamic  mu_mig_plan() for the snapshot.
 * The figure is the compute served (7 slices per whole GPU, a profile's
 * compute slices per instance) over what could be served, min(demand,
 * capacity), averaged over the rounds.  Reconfiguring a GPU drains it
 * first; that cost is not modelled here.  Deterministic for a seed.
 */
#ifndef MUSTER_EVAL_MIG_H
#define MUSTER_EVAL_MIG_H

#include <stdint.h>

typedef struct mu_mig_eval_result {
	double served_static;   /* mean share of the servable compute */
	double served_dynamic;
	double whole_static;    /* mean share of whole-GPU pods served */
	double whole_dynamic;
	double inst_static;     /* mean share of MIG instances served */
	double inst_dynamic;
	int rounds;
} mu_mig_eval_result_t;

/* Runs the protocol above; MU_EINVAL for ngpu outside 1..100000, rounds
 * outside 1..1000000 or load outside (0, 10].  O(rounds x ngpu x 8). */
int mu_mig_eval(int ngpu, int rounds, double load, uint64_t seed,
		mu_mig_eval_result_t *out);

#endif

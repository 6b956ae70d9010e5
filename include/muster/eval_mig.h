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

/*
 * The same pool with pods that run (docs/evaluation.md, "MIG with running
 * pods").  Time goes in steps; `load` x the pool's compute arrives per
 * mean run time (20 steps), as a Poisson count of pods per step, each
 * running a geometric number of steps (mean 20).  The share of the pods
 * that ask for a MIG instance (profiles weighted as above) is drawn
 * uniformly from [0, 1] for every phase of 100 steps.  Each step: pods
 * end, arrivals join the queue (at most 16 x ngpu wait; more are turned
 * away), and waiting pods start in arrival order on a free device of their
 * kind (a pod that finds none waits, and leaves after 100 steps; those
 * behind it may start).  With
 * the dynamic layout, mu_mig_replan() then re-plans for the queue with the
 * running pods' devices held, the GPUs that change take no pod for one
 * step (the MIG manager's work), and the queue is served again next step.
 * The figure is the allocation: the compute held by running pods over the
 * pool's, averaged over the steps after the first 200.
 */
typedef struct mu_mig_run_result {
	double alloc_static;     /* mean share of the compute held */
	double alloc_dynamic;
	double started_static;   /* pods started per step */
	double started_dynamic;
	double changes;          /* GPUs re-laid per step (dynamic) */
	int steps;
} mu_mig_run_result_t;

/* Runs the protocol above for steps (> 200) steps; MU_EINVAL for ngpu
 * outside 1..4096, steps outside 201..1000000 or load outside (0, 10].
 * O(steps x (queue + ngpu^2)). */
int mu_mig_eval_running(int ngpu, int steps, double load, uint64_t seed,
			mu_mig_run_result_t *out);

#endif

/*
 * eval_queues.h - the evaluation of muster's queueing policy: synthetic
 * clusters and workloads built in memory, and three experiments run in the
 * simulator (fair share between equal queues, over-quota weights, reclaim
 * latency).  `muster eval queues` prints them; docs/evaluation.md gives the
 * protocol.  Everything is deterministic for a seed.
 */
#ifndef MUSTER_SIM_EVAL_QUEUES_H
#define MUSTER_SIM_EVAL_QUEUES_H

#include "muster/sim.h"

/* Jain's fairness index of x[0..n): (sum x)^2 / (n sum x^2).  1 when all
 * are equal, 1/n when one holds everything; 0 when n is 0 or all are 0. */
double mu__jain(const double *x, size_t n);

/* --- Synthetic cluster and workload --------------------------------------- */

/* Appends n nodes "node-NNNN" of 8 GPUs, 64 CPUs and 512 GiB to sp. */
int mu__evq_add_nodes(mu_specs_t *sp, int32_t n);

/* One queue's jobs.  Shapes: 1, 2, 4 and 8-GPU single pods, and with
 * `gangs` 16 and 32-GPU gangs of 8-GPU pods; 4 CPUs and 32 GiB per GPU.
 * Durations are lognormal (median, sigma) clamped to [min_s, max_s]. */
typedef struct mu__evq_gen {
	const char *queue;    /* copied into sp's arena */
	uint64_t seed;
	mu_time_t until;      /* Poisson arrivals in [0, until) */
	double offered_gpus;  /* target load of the arrivals: GPUs kept busy */
	double backlog_gpus;  /* GPUs of extra jobs all submitted at time 0 */
	double median_s, sigma, min_s, max_s;
	bool gangs;
	bool preemptible;
	int32_t priority;
} mu__evq_gen_t;

/* Fills g with the defaults for `queue`: one simulated day, medians of 30
 * minutes (sigma 1, 2 minutes to 6 hours), gangs, preemptible, priority 0;
 * the caller sets the loads. */
void mu__evq_gen_defaults(mu__evq_gen_t *g, const char *queue, uint64_t seed);

/* Appends g's jobs to sp (names "QUEUE-NNNNN"; strings and pod sets in sp's
 * arena).  The arrivals' durations are then scaled by one common factor
 * (a few percent from 1) so that their load is the target; *offered gets
 * the realised load, their GPU-seconds over `until`.  O(jobs); MU_ELIMIT
 * past ten million jobs. */
int mu__evq_gen_jobs(mu_specs_t *sp, const mu__evq_gen_t *g, double *offered);

/* --- Experiments ------------------------------------------------------------ */

typedef struct mu__evq_opts {
	uint64_t seed;
	int32_t nodes;            /* fairness and weighted cluster (64) */
	mu_time_t span;           /* simulated time (24 h) */
	double load;              /* offered load over each queue's share (1.5) */
	int32_t windows;          /* time windows for the windowed Jain (6) */
	mu_time_t cycle_interval; /* reclaim experiment's cycle period (1 s) */
	mu_time_t reclaim_at;     /* when the idle queue submits (30 s) */
} mu__evq_opts_t;

void mu__evq_opts_defaults(mu__evq_opts_t *o);

#define MU__EVQ_MAXQ 8

typedef struct mu__evq_queue {
	char name[16];
	double target;       /* share of GPU time it is entitled to, 0..1 */
	double share;        /* share of all GPU time held that it held */
	double gpu_hours;
	double offered_gpus; /* realised load of its arrivals */
	int32_t min_backlog; /* fewest of its jobs waiting for a first start at
	                      * any moment of the run (0: it ran dry) */
} mu__evq_queue_t;

typedef struct mu__evq_fair {
	int32_t nqueues;
	mu__evq_queue_t q[MU__EVQ_MAXQ];
	double jain;           /* of share/target over the whole run */
	double jain_win_min;   /* the same per window: the worst, and mean */
	double jain_win_mean;
	double max_dev;        /* max over queues of |share/target - 1| */
	double utilization;
	int64_t jobs, completed, preemptions, cycles;
	double engine_s;       /* wall time inside the engine, full run */
} mu__evq_fair_t;

/* Fairness: four queues with equal deserved quotas (a quarter of the
 * cluster each), each offered opts->load times its share plus a backlog,
 * for opts->span.  O(windows x one run). */
int mu__evq_fairness(const mu__evq_opts_t *o, mu__evq_fair_t *out,
		     mu_diag_t *diag);

/* Weighted shares: three queues with no deserved quota and over-quota GPU
 * weights 1:2:3, each offered opts->load times its target share. */
int mu__evq_weighted(const mu__evq_opts_t *o, mu__evq_fair_t *out,
		     mu_diag_t *diag);

typedef struct mu__evq_reclaim {
	int32_t nodes;
	mu_time_t min_runtime, cycle_interval, at;
	double deserved_gpus;  /* what the idle queue A is owed */
	bool held;             /* A came to hold it */
	double latency_s;      /* from A's submission until it held it */
	int64_t cycles;        /* cycles run from A's submission until then */
	double bound_s;        /* min_runtime + one cycle */
	double engine_ms;      /* engine wall time over those cycles: the
	                        * difference of two runs cut before and after
	                        * them (least of 3 each), so indicative */
	int64_t preemptions;   /* pods evicted in the run */
} mu__evq_reclaim_t;

/* Reclaim latency: queue B fills `nodes` nodes with preemptible jobs from
 * time 0; at opts->reclaim_at queue A, idle so far, submits exactly its
 * deserved quota (half the cluster).  With cycles every
 * opts->cycle_interval and the given minimum runtime. */
int mu__evq_reclaim(const mu__evq_opts_t *o, int32_t nodes,
		    mu_time_t min_runtime, mu__evq_reclaim_t *out,
		    mu_diag_t *diag);

#endif

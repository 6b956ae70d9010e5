/*
 * sim.h - the discrete-event simulator and its results.
 *
 * mu_sim_run() drives the same engine the daemon uses: it submits jobs at
 * their submit time, runs scheduling cycles, finishes jobs after their
 * duration, and records metrics.  Runs are deterministic for a given seed.
 * The writers that turn a result into JSON or a self-contained HTML report
 * are in the report room (muster/report.h).
 */
#ifndef MUSTER_SIM_H
#define MUSTER_SIM_H

#include <stdio.h>

#include "muster/engine.h"
#include "muster/load.h"

typedef struct mu_sim_config {
	uint64_t seed;
	mu_time_t cycle_interval;   /* ms between periodic cycles; 0: one cycle
	                             * at every time something happens */
	mu_engine_config_t engine;  /* policy, preemption, reclaim settings */
	mu_time_t checkpoint_cost;  /* work lost by each suspension, ms */
	mu_time_t evict_grace;      /* pods take this long to leave: a job
	                             * placed by evicting others starts running
	                             * this long after the cycle (a Kubernetes
	                             * pod's terminationGracePeriodSeconds is
	                             * 30 s by default); 0 = at once */
	mu_time_t sample_interval;  /* ms between time-series samples; 0: auto
	                             * (about 500 samples over the run) */
	mu_time_t horizon;          /* stop at this time; 0: run to the end */
	/* Called now and then with the fraction done (0..1); may be NULL. */
	void (*progress)(void *ctx, double frac);
	void *progress_ctx;
	/* Called once at the end (or the horizon) with the engine still
	 * alive, for queries such as explain; may be NULL. */
	void (*at_end)(void *ctx, const mu_engine_t *e, mu_time_t now);
	void *at_end_ctx;
	/* Called after every cycle with its decisions, which the engine has
	 * applied and the simulator has not yet; may be NULL.  d is only
	 * valid during the call. */
	void (*on_decisions)(void *ctx, const mu_engine_t *e,
			     const mu_decisions_t *d, mu_time_t now);
	void *on_decisions_ctx;
	/* Called for each job that runs after a cycle changed its pods (it
	 * started, restarted, grew, shrank or moved), before its completion
	 * is scheduled: the job then runs that many times slower until its
	 * pods change again.  Values are clamped to [0.001, 1000]; NaN and
	 * a NULL hook mean 1. */
	double (*slowdown)(void *ctx, const mu_engine_t *e, mu_id_t job);
	void *slowdown_ctx;
	/* Keep every finished job in the engine.  By default the simulator
	 * hands each finished job back (mu_engine_job_forget) and a later
	 * arrival takes its id, so the engine's records follow the live jobs
	 * (the simulator keeps its own per-job results).  Set it when a hook
	 * keeps anything by engine job id across a job's end, or looks up
	 * finished jobs at the end (explain). */
	bool keep_jobs;
	/* muster-horizon (engine.h, mu_horizon_t; the caller's, initialized,
	 * its params the engine's mix's settings): every arriving pod set is
	 * counted as seen, and after each cycle a due choice is made at once
	 * on the simulated clock, and the engine's scores dropped when it
	 * changed the settings; NULL: none. */
	mu_horizon_t *muster_horizon;
	/* Called after each such choice; may be NULL. */
	void (*on_choice)(void *ctx, const mu_horizon_choice_t *c);
	void *on_choice_ctx;
} mu_sim_config_t;

void mu_sim_config_defaults(mu_sim_config_t *c);

typedef struct mu_sim_job {
	char *name;
	char *queue;
	mu_job_type_t type;
	double submit_s;
	double start_s;     /* first start; -1 if it never started */
	double end_s;       /* -1 if it never finished */
	int64_t gpu_milli;  /* accounting GPUs of all its pods */
	int32_t pods;
	int32_t preemptions; /* times it was suspended */
	int32_t moves;       /* times it was moved */
} mu_sim_job_t;

typedef struct mu_sim_sample {
	double t_s;
	double gpu_util;        /* allocated / allocatable GPUs, 0..1 */
	int32_t pending_jobs;
	int32_t running_jobs;
} mu_sim_sample_t;

typedef struct mu_sim_queue {
	char *name;
	double gpu_seconds;     /* GPU time its jobs held */
	double share;           /* of all GPU time held, 0..1 */
	int32_t jobs;
	double deserved_gpus;   /* its deserved GPU quota */
	double fair_gpu_seconds; /* its GPU fair share integrated over time
	                         * (as the engine computed it each cycle) */
} mu_sim_queue_t;

typedef struct mu_sim_summary {
	int64_t jobs, completed;
	double gpu_utilization;  /* time-weighted over [first submit, makespan] */
	double avg_wait_s, p50_wait_s, p95_wait_s, p99_wait_s;
	double avg_jct_s, p50_jct_s, p95_jct_s, p99_jct_s;
	double makespan_s;       /* last end minus first submit */
	int64_t preemptions;     /* pods evicted to suspend or shrink jobs */
	int64_t moves;           /* pods moved to defragment */
	int64_t cycles;
	int64_t total_gpus;
	double engine_s;         /* wall time spent inside mu_engine_cycle */
	bool dra;                /* the input has DRA objects */
	int64_t dra_gpus;        /* of total_gpus, the DRA devices that count as
	                          * GPUs (their driver's name contains "gpu");
	                          * their use is in gpu_utilization too */
} mu_sim_summary_t;

typedef struct mu_sim_result {
	mu_sim_summary_t summary;
	mu_sim_job_t *jobs;
	size_t njobs;
	mu_sim_sample_t *samples;
	size_t nsamples;
	mu_sim_queue_t *queues;
	size_t nqueues;
} mu_sim_result_t;

/* Runs the specs (nodes, queues, jobs) to the end.  The caller releases
 * out with mu_sim_result_release(), also on error. */
int mu_sim_run(const mu_specs_t *specs, const mu_sim_config_t *cfg,
	       mu_sim_result_t *out, mu_diag_t *diag);
void mu_sim_result_release(mu_sim_result_t *r);

/* Percentile (0..100) of n values, linear interpolation; sorts v. */
double mu_percentile(double *v, size_t n, double pct);

/* Builds m (initialized by the caller, released by the caller) from the
 * pod sets of every job in sp, weighted by replicas, and finishes it: the
 * workload that policies with MU_SCORE_MIX (fgd, muster) measure GPU
 * fragmentation against; sp's nodes, if any, give it the cluster's GPUs
 * per model (mu_workload_mix_supply, for muster's press_over in the
 * rollouts, which run without an engine; an engine scores with its own
 * count, mu_gpu_models_t).  MU_ERANGE
 * past MU_MIX_MAX_MODELS GPU models, MU_ENOMEM.  O(pod sets log pod sets
 * + nodes x types x models). */
int mu_sim_workload_mix(const mu_specs_t *sp, mu_workload_mix_t *m);

#endif

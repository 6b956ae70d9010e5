/*
 * eval_fleet.h - the fleet evaluation: where jobs go across clusters
 * (docs/evaluation.md, "Fleet: one job, one cluster").
 *
 * The protocol: the Philly window of mu_philly_build() (its jobs keep their
 * team, the trace's virtual cluster), sized so that the offered load on
 * the private GPUs is `load`; those nodes split into three private
 * clusters of different sizes and GPU models (half, 30% and 20% of the
 * nodes; the big one holds the largest job), plus one public cluster of a
 * quarter as many nodes with a price per GPU-hour.  Four strategies run
 * the same jobs in a discrete-event loop, each cluster's own scheduler
 * modelled by a muster engine (no preemption):
 *   static     every team is assigned one private cluster, by work;
 *   mcad       a job goes, on arrival or as soon as one exists, to a random
 *              cluster with enough free GPUs in aggregate, and waits there;
 *   multikueue copies to every cluster; the first cluster to admit wins and
 *              the other copies are deleted (admissions in the same instant
 *              on other clusters are wasted);
 *   muster     mu_fleet_dispatch(): only where the gang fits now, private
 *              first, public after the burst wait.
 * Deterministic for a seed; no I/O except the writers.
 */
#ifndef MUSTER_EVAL_FLEET_H
#define MUSTER_EVAL_FLEET_H

#include <stdio.h>

#include "muster/eval_philly.h"

#define MU_FLEET_EVAL_CLUSTERS 4
#define MU_FLEET_EVAL_BUCKETS 5 /* gang sizes: 1, 2-4, 5-8, 9-16, >16 GPUs */

typedef enum mu_fleet_strategy {
	MU_FS_STATIC = 0,
	MU_FS_MCAD = 1,
	MU_FS_MULTIKUEUE = 2,
	MU_FS_MUSTER = 3,
	MU_FS_COUNT
} mu_fleet_strategy_t;

/* "static", "mcad", "multikueue", "muster"; NULL if out of range. */
const char *mu_fleet_strategy_name(mu_fleet_strategy_t s);

typedef struct mu_fleet_eval_opts {
	mu_philly_opts_t philly; /* window, load (on private GPUs), cap, seed */
	mu_time_t burst_after;   /* muster: public after this wait (30 min) */
	double public_cost;      /* price of a public GPU-hour (2.5) */
} mu_fleet_eval_opts_t;

void mu_fleet_eval_opts_defaults(mu_fleet_eval_opts_t *o);
void mu_fleet_eval_opts_quick(mu_fleet_eval_opts_t *o);

typedef struct mu_fleet_eval_cluster {
	char name[32];
	char model[16];
	bool public_;
	int32_t nodes, gpus;
	int32_t teams;           /* static: teams assigned here */
} mu_fleet_eval_cluster_t;

typedef struct mu_fleet_eval_run {
	mu_fleet_strategy_t strategy;
	int64_t jobs, completed, never;  /* never: never started */
	double jct_p50_s, jct_p99_s, jct_mean_s;
	double wait_mean_s[MU_FLEET_EVAL_BUCKETS];
	double wait_p99_s[MU_FLEET_EVAL_BUCKETS];
	int64_t bucket_jobs[MU_FLEET_EVAL_BUCKETS];
	double util[MU_FLEET_EVAL_CLUSTERS]; /* GPU-time used / (GPUs x span) */
	double public_gpu_h, cost;
	int64_t misplaced;   /* mcad: sent where the gang did not start */
	int64_t wasted;      /* multikueue: copies admitted, then deleted */
	int64_t duplicates;  /* jobs running on two clusters at once */
	double makespan_s, wall_s;
} mu_fleet_eval_run_t;

typedef struct mu_fleet_eval {
	mu_fleet_eval_opts_t opts;
	const char *trace;   /* the caller's, for the reports */
	mu_philly_window_t win;
	int32_t nteams;
	mu_fleet_eval_cluster_t clusters[MU_FLEET_EVAL_CLUSTERS];
	mu_fleet_eval_run_t runs[MU_FS_COUNT];
	size_t nruns;
	double wall_s;
} mu_fleet_eval_t;

/* Builds the workload from a whole Philly load `all` and runs every
 * strategy into ev (cleared here).  MU_EINVAL with a message for an empty
 * window; MU_ENOMEM.  O(strategies x the simulation). */
int mu_fleet_eval(const mu_specs_t *all, const mu_fleet_eval_opts_t *o,
		  mu_fleet_eval_t *ev, mu_diag_t *diag);

/* Every figure as one JSON object; a self-contained HTML page with tables
 * and charts.  MU_EIO when writing fails. */
int mu_fleet_eval_write_json(const mu_fleet_eval_t *ev, FILE *f);
int mu_fleet_eval_write_html(const mu_fleet_eval_t *ev, FILE *f);

#endif

/*
 * bench_int.h - what the files of `muster bench` share: the thread CPU
 * clock, sample statistics, a seeded random stream, small engine-building
 * helpers, and the shapes' entry points.
 *
 * bench.c holds basic, basic-mixed and gang-topology; bench_cycle.c the
 * cycle, scale and scaling shapes; bench_fleet.c the fleet shape; bench_run.c the
 * registry, the forked children, bench_preempt, JSON and the targets;
 * bench_html.c the report; bench_varied.c and bench_varied2.c the varied shapes;
 * bench_affinity.c the affinity shape.
 */
#ifndef MUSTER_SIM_BENCH_INT_H
#define MUSTER_SIM_BENCH_INT_H

#include "muster/bench.h"
#include "muster/engine.h"
#include "muster/load.h"

/* Thread CPU time in microseconds. */
double mu__bench_cpu_us(void);
/* What one mu__bench_cpu_us() call costs, measured (median of pairs); it
 * is subtracted from every timed interval. */
double mu__bench_clock_cost_us(void);
/* This process's peak resident set, MiB. */
double mu__bench_rss_mb(void);

/* Timed intervals, in microseconds. */
typedef struct mu__bench_samples {
	double *v;
	size_t n, cap;
	double sum;
} mu__bench_samples_t;

/* Appends one interval (clamped at 0); MU_ENOMEM. */
int mu__bench_sample(mu__bench_samples_t *s, double us);
/* Sorts the samples and returns the q-quantile (nearest rank), NaN when
 * empty.  O(n log n) the first time after an append. */
double mu__bench_quantile(mu__bench_samples_t *s, double q);
void mu__bench_samples_release(mu__bench_samples_t *s);

/* splitmix64: the next 64 bits of *state. */
uint64_t mu__bench_rand(uint64_t *state);

/* A new engine with the default configuration and the given seed. */
int mu__bench_engine(uint64_t seed, mu_engine_t **out);
/* Adds queue name with deserved quota (NULL: none) and no limit. */
int mu__bench_queue(mu_engine_t *e, const char *name, const mu_res_t *deserved);
/* Submits job name of `replicas` pods of request req into queue, with an
 * optional node selector (key=value, NULL for none) and topology level. */
typedef struct mu__bench_job {
	const char *name, *queue;
	int32_t replicas;
	mu_res_t req;
	const char *sel_key, *sel_value;
	const char *required;            /* topology level, or NULL */
	const char *const *models;       /* allowed GPU models, or NULL */
	size_t nmodels;
	int32_t priority;
	mu_time_t est;                   /* runtime estimate, 0 none */
} mu__bench_job_t;
int mu__bench_submit(mu_engine_t *e, const mu__bench_job_t *j, mu_time_t now,
		     mu_id_t *id);
/* Counts the MU_DEC_BIND decisions of d. */
int64_t mu__bench_binds(const mu_decisions_t *d);

/* Adds `nodes` openb-shaped nodes drawn from specs (NULL: the built-in
 * rows, weighted); *gpu_milli gets the cluster's GPUs in milli-GPU. */
int mu__bench_mixed_nodes(mu_engine_t *e, const mu_specs_t *specs, int32_t nodes,
			  uint64_t *rng, int64_t *gpu_milli);
/* One pod request drawn from the built-in openb-like rows, weighted. */
void mu__bench_builtin_pod(uint64_t *rng, mu_res_t *req);
/* Loads openb's node list (all 1,523 nodes, or its 1,213 GPU nodes) and
 * default pod list from o->data_dir into specs; false when either is
 * missing or unreadable. */
bool mu__bench_load_openb(const mu_bench_opts_t *o, bool gpu_nodes, mu_specs_t *specs);
/* A new engine with `nodes` 8-GPU nodes in racks of 32 and blocks of 512
 * (topology "net") and queue "q". */
int mu__bench_gang_cluster(uint64_t seed, int32_t nodes, mu_engine_t **out);
/* A full size scaled by o->scale (at least 1), or the quick size. */
int64_t mu__bench_size(const mu_bench_opts_t *o, int64_t full, int64_t quick);
/* Counts the decisions of d that are not MU_DEC_PENDING. */
int64_t mu__bench_real(const mu_decisions_t *d);

/* The shapes.  Each appends its records to out and returns MU_OK or an
 * error; none of them exits or prints. */
int mu__bench_basic(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_basic_mixed(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_gang(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_cycle(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_scale(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_scaling(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_fleet(const mu_bench_opts_t *o, mu_bench_results_t *out); /* bench_fleet.c */
int mu__bench_unique(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_backlog(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_selectors(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_gangs4(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_gang_blocked(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_classes(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_reclaim(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_openb_replay(const mu_bench_opts_t *o, mu_bench_results_t *out);
int mu__bench_affinity(const mu_bench_opts_t *o, mu_bench_results_t *out); /* bench_affinity.c */

#endif

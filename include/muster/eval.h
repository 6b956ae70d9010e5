/*
 * eval.h - external evaluations: the FGD paper's openb experiment.
 *
 * The openb protocol (Weng et al., USENIX ATC'23, and docs/evaluation.md):
 * a cluster of GPU nodes and a list of pods; per seed the pods are
 * shuffled, then "tuned": the shuffled list is extended by pods drawn with
 * replacement (or cut) until the GPU demand that has arrived reaches
 * tune x the cluster's GPUs.  Pods arrive one at a time into a fresh engine
 * and never leave; one that fits nowhere is skipped.  After every arrival
 * the allocated share of the cluster's GPUs and the fragmentation ratio
 * are recorded against the arrived demand (both in % of the cluster's
 * GPUs), and averaged over each 1% of arrived demand: point x holds the
 * arrivals whose demand rounds to x%.
 *
 * GPU demand counts whole GPUs as 1000 milli-GPU each and a share as its
 * milli-GPU (num_gpu x gpu_milli / 1000 GPUs in the paper's simulator).
 * Everything here is deterministic for a seed and does no I/O except the
 * writers and mu_eval_paper_load().
 */
#ifndef MUSTER_EVAL_H
#define MUSTER_EVAL_H

#include <stdio.h>

#include "muster/engine.h"
#include "muster/load.h"

#define MU_EVAL_MAX_CANDS 16 /* muster-rollout's candidate settings */

/* One pod of the evaluation, pointing into the specs it came from. */
typedef struct mu_eval_pod {
	const mu_podset_spec_t *ps; /* request and GPU models */
	int64_t gpu_milli;          /* its GPU demand */
} mu_eval_pod_t;

/* The cluster and pods of an evaluation, and the workload mix of the pods
 * (the state the fgd and muster policies score against).  Owns its arrays
 * and mix; the specs it points into stay with the caller. */
typedef struct mu_eval_input {
	const mu_node_spec_t *nodes; /* the caller's */
	size_t nnodes;
	mu_eval_pod_t *pods;
	size_t npods;
	int64_t gpus;                /* devices of all nodes */
	int64_t pod_gpu_milli;       /* demand of all pods */
	mu_workload_mix_t mix;       /* the FGD artifact's typical pods:
	                              * the shapes covering MU_EVAL_TYPICAL
	                              * of the pods (fgd's state, and the
	                              * fragmentation ratio's) */
	mu_workload_mix_t mix_all;   /* every shape: muster's state */
	mu_rollout_mem_t mem;        /* mix_all's memory requests: the
	                              * rollouts model memory (round 16) */
	bool late_cands;             /* set before choosing: the candidates
	                              * include mu_muster_params_late()'s */
	/* muster-rollout's settings (mu_eval_input_choose): the candidates,
	 * each one's rollout worth, the one chosen and whether one was. */
	mu_muster_params_t cands[MU_EVAL_MAX_CANDS];
	int64_t worth[MU_EVAL_MAX_CANDS];
	size_t ncands, chosen;
	bool have_chosen;
} mu_eval_input_t;

#define MU_EVAL_TYPICAL MU_MIX_TYPICAL /* generate_config_and_run.py's
                                        * --pod-popularity-threshold 95 */

/* Builds an input from nodes and the pods of jobs (every pod of every pod
 * set is one arrival).  MU_EINVAL with a message when there are no GPUs or
 * no pod asks for one; MU_ENOMEM.  Release it with mu_eval_input_release()
 * (also after an error). */
int mu_eval_input_build(const mu_specs_t *nodes, const mu_specs_t *pods,
			mu_eval_input_t *in, mu_diag_t *diag);
void mu_eval_input_release(mu_eval_input_t *in);

/* Chooses muster-rollout's settings for in once, before its runs: among
 * mu_muster_params_candidates() of in->mix_all (and
 * mu_muster_params_late()'s with in->late_cands), by mu_rollout_choose() on
 * the empty cluster with cfg (its seed is the rollouts' own, not an eval
 * seed); or, when force >= 0, candidate force without rollouts (to
 * measure every candidate in hindsight; in->worth is then zero).
 * MU_EINVAL for a force past the candidates, MU_ENOMEM.  O(rollouts, see
 * mu_rollout_choose). */
int mu_eval_input_choose(mu_eval_input_t *in, const mu_rollout_config_t *cfg,
			 int force);

/* The arrival order for a seed: a permutation of 0..npods-1 extended by
 * indices drawn uniformly with replacement, cut at the first arrival that
 * brings the demand to ceil(tune x gpus x 1000) milli-GPU (the whole
 * extended list when no pod asks for GPUs).  *order is malloc'ed, the
 * caller frees it.  MU_EINVAL for tune <= 0 or > 100; MU_ENOMEM.
 * O(arrivals). */
int mu_eval_arrivals(const mu_eval_input_t *in, uint64_t seed, double tune,
		     size_t **order, size_t *n);

/* Points of the x grid for tune: x = 0..floor(100 x tune). */
int32_t mu_eval_npoints(double tune);

/* The bin of an arrival: arrived demand in % of the cluster's GPU
 * capacity (cap_milli), rounded half up.  Exact integer arithmetic. */
int64_t mu_eval_bin(int64_t arrived_milli, int64_t cap_milli);

/* Running means per x bin.  A bin no arrival fell in takes the previous
 * bin's value (the first bins: the empty cluster's). */
typedef struct mu_eval_grid {
	int32_t npoints;
	double *sum_alloc, *sum_frag;
	int64_t *count;
} mu_eval_grid_t;

int mu_eval_grid_init(mu_eval_grid_t *g, int32_t npoints);
void mu_eval_grid_release(mu_eval_grid_t *g);
/* Adds one record (both in %) to bin x; records past the grid are
 * dropped. */
void mu_eval_grid_add(mu_eval_grid_t *g, int64_t x, double alloc_pct,
		      double frag_pct);
/* Writes the per-point means into alloc[npoints] and frag[npoints];
 * empty bins as above, starting from (alloc0, frag0). */
void mu_eval_grid_means(const mu_eval_grid_t *g, double alloc0, double frag0,
			double *alloc, double *frag);

/* Where the free GPU capacity is at the end of a run (milli-GPU), by the
 * free share of each device: partly used devices with 1-99, 100-189,
 * 190-199, 200-499 and 500-999 milli-GPU free, and whole free devices.
 * 190-199 is apart because it is what an 810-milli share, the openb
 * traces' most common, leaves on a device of its own. */
enum {
	MU_EVAL_WASTE_LT100,
	MU_EVAL_WASTE_LT190,
	MU_EVAL_WASTE_LT200,
	MU_EVAL_WASTE_LT500,
	MU_EVAL_WASTE_LT1000,
	MU_EVAL_WASTE_WHOLE,
	MU_EVAL_WASTE_BINS
};

/* The JSON key of waste bin i ("holes_lt100" ... "whole"); NULL out of
 * range. */
const char *mu_eval_waste_name(int i);

/* One run: a policy, a seed, its curves and counts. */
typedef struct mu_eval_run {
	const char *policy;  /* the ops' name, static */
	uint64_t seed;
	int32_t npoints;
	double *alloc;       /* % of the cluster's GPUs allocated, by x */
	double *frag;        /* fragmentation ratio (%), by x */
	int64_t arrivals, placed, skipped;
	int64_t arrived_milli, alloc_milli; /* at the end */
	double frag_milli;   /* the cluster's fragmentation at the end */
	int64_t waste_milli[MU_EVAL_WASTE_BINS]; /* free GPU at the end */
	/* muster-horizon: checkpoints passed (each a choice by rollouts),
	 * how many changed the setting, and the candidate placing at the
	 * end (in->cands); 0 for the other policies.  flat: the choices
	 * where every candidate's worth was the same (the allocation told
	 * the settings nothing apart: the tie's measures decided, or the
	 * first, candidate 0, won); broken: the choices where the tie's
	 * measures (mu_rollout_config_t.tie_fill) chose another candidate
	 * than the first of those with the top worth; last_top: at the last
	 * choice, how many candidates had the winner's worth; last_lead:
	 * then, the winner's worth minus the best worth below it (milli-GPU
	 * summed over the rollouts; 0 when all were equal). */
	int32_t rechoices, changes, flat, broken, last_top;
	size_t last_choice;
	int64_t last_lead;
} mu_eval_run_t;

typedef struct mu_eval_config {
	const mu_score_ops_t *score; /* NULL: mu_score_muster */
	uint64_t seed;
	double tune;                 /* 0: 1.3 */
	/* Called now and then with the fraction done; may be NULL. */
	void (*progress)(void *ctx, double frac);
	void *progress_ctx;
	/* muster-horizon's re-choices (NULL: the defaults): the rollouts'
	 * settings (seed, nodes, rollouts, fill; asked and judge_at are set
	 * per checkpoint) and the checkpoints. */
	const mu_rollout_config_t *rollout;
	const mu_rollout_horizon_t *horizon;
} mu_eval_config_t;

/* Runs the protocol once.  muster gets &in->mix_all as its state
 * (muster-rollout a copy with the settings chosen, which must have been:
 * MU_EINVAL otherwise; muster-horizon starts from them too and, at each
 * checkpoint of cfg->horizon, chooses again among in->cands by
 * mu_rollout_choose() from the mirror's free capacity, with the demand
 * asked so far, then tells the engine (mu_engine_rescore)), every other policy (fgd among them) &in->mix.  The caller releases out with
 * mu_eval_run_release(), also on error.  O(arrivals x nodes x the policy's
 * cost per node). */
int mu_eval_run(const mu_eval_input_t *in, const mu_eval_config_t *cfg,
		mu_eval_run_t *out, mu_diag_t *diag);
void mu_eval_run_release(mu_eval_run_t *r);

/* The cluster's fragmentation ratio (%): the sum of the nodes' expected
 * fragmentation (mu_gpu_frag) over their free GPU capacity; 0 when
 * nothing is free. */
double mu_eval_frag_ratio(double frag_milli, int64_t free_milli);

/* --- The paper's published curves ---------------------------------------- */

/* The mean curve of one (workload, policy) of the paper's CSV. */
typedef struct mu_eval_paper_curve {
	char *workload;      /* "openb_pod_list_default" */
	char *policy;        /* the CSV's sc_policy: "06-FGD" */
	int32_t seeds;       /* rows averaged */
	int32_t npoints;
	double *mean;        /* by x */
} mu_eval_paper_curve_t;

typedef struct mu_eval_paper {
	mu_eval_paper_curve_t *curves;
	size_t ncurves;
} mu_eval_paper_t;

/* Reads fgd_analysis_allo_discrete.csv or ..._frag_ratio_discrete.csv
 * (columns workload,sc_policy,tune,seed[,total_gpus],0,1,...) and averages
 * the rows of each (workload, policy).  MU_EIO / MU_EPARSE with a message;
 * release with mu_eval_paper_release(), also on error. */
int mu_eval_paper_load(const char *path, mu_eval_paper_t *p, mu_diag_t *diag);
void mu_eval_paper_release(mu_eval_paper_t *p);
/* The paper's name for one of muster's policies ("fgd" -> "06-FGD"), or
 * NULL when the paper has no such policy. */
const char *mu_eval_paper_policy(const char *policy);
/* The curve of workload and muster policy name, or NULL. */
const mu_eval_paper_curve_t *mu_eval_paper_find(const mu_eval_paper_t *p,
						const char *workload,
						const char *policy);

/* --- Results and writers ------------------------------------------------- */

/* The runs of one policy over several seeds, and their mean curves. */
typedef struct mu_eval_series {
	const char *policy;
	mu_eval_run_t *runs;
	size_t nruns;
	double *alloc_mean, *frag_mean; /* by x; set by mu_eval_series_mean */
} mu_eval_series_t;

int mu_eval_series_mean(mu_eval_series_t *s);

typedef struct mu_eval_report {
	const char *workload;   /* the pods file's base name without .csv */
	const char *nodes_file, *pods_file;
	double tune;
	int64_t gpus, nodes, pods;
	mu_eval_series_t *series;
	size_t nseries;
	const mu_eval_paper_t *paper_alloc; /* may be NULL */
	const mu_eval_paper_t *paper_frag;  /* may be NULL */
	double run_s;           /* wall time of all runs, for the page */
} mu_eval_report_t;

/* JSON: one object per policy (policy, seed, alloc, frag_ratio; with
 * several seeds, seed and the curves are arrays and alloc_mean and
 * frag_ratio_mean are added); several policies make {"policies": [...]}.
 * MU_EIO when writing fails. */
int mu_eval_write_json(const mu_eval_report_t *r, FILE *f);
/* A self-contained HTML page: allocation curves of every policy next to
 * the paper's, fragmentation curves, and the table at x = 100 and 130. */
int mu_eval_write_html(const mu_eval_report_t *r, FILE *f);

#endif

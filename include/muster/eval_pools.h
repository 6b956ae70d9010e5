/*
 * eval_pools.h - `muster eval pools`: node pools with their own quotas on
 * the openb cluster (its 7 GPU models as pools) with the Philly trace's
 * virtual clusters as teams, run three ways: per-pool quotas with flavor
 * fallback, one pooled quota, and strict per-pool placement.  The protocol
 * is in docs/evaluation.md ("Node pools"); everything is deterministic for
 * a seed.
 */
#ifndef MUSTER_EVAL_POOLS_H
#define MUSTER_EVAL_POOLS_H

#include <stdio.h>

#include "muster/sim.h"

#define MU_EVP_MAXPOOLS 8
#define MU_EVP_MAXTEAMS 6

typedef enum mu_evp_mode {
	MU_EVP_FALLBACK = 0, /* per-pool quotas; jobs name their preferred pool,
	                      * then the others that can hold them */
	MU_EVP_POOLED = 1,   /* one quota per team over all GPUs; jobs go
	                      * anywhere */
	MU_EVP_STRICT = 2,   /* per-pool quotas; jobs name their preferred pool
	                      * only */
	MU_EVP_NMODES
} mu_evp_mode_t;

/* "fallback", "pooled", "strict". */
const char *mu_evp_mode_name(mu_evp_mode_t m);

typedef struct mu_evp_opts {
	double days;          /* Philly window in days, before scaling (7) */
	double load;          /* offered load on the openb GPUs (1.0) */
	double home;          /* share of a team's jobs that prefer its home
	                       * pool; the rest prefer a pool drawn by size (0.6) */
	mu_time_t cap;        /* job durations capped at this (6 h) */
	uint64_t seed;        /* preferences (1) */
	void (*progress)(void *ctx, int mode, double frac);
	void *progress_ctx;
} mu_evp_opts_t;

void mu_evp_opts_defaults(mu_evp_opts_t *o);
/* --quick: a 6-hour window, durations capped at 2 hours. */
void mu_evp_opts_quick(mu_evp_opts_t *o);

typedef struct mu_evp_pool {
	char name[24];
	int64_t gpus;
	int32_t nodes;
} mu_evp_pool_t;

typedef struct mu_evp_team {
	char name[32];
	char home[24];        /* its home pool */
	double share;         /* of the window's GPU work: its quota share */
} mu_evp_team_t;

typedef struct mu_evp_run {
	mu_evp_mode_t mode;
	double util[MU_EVP_MAXPOOLS]; /* per pool, over the arrival window */
	double util_all;
	double wait_mean_s[MU_EVP_MAXTEAMS], wait_p95_s[MU_EVP_MAXTEAMS];
	int64_t jobs[MU_EVP_MAXTEAMS], started[MU_EVP_MAXTEAMS];
	int64_t started_all, fallback; /* jobs started; of them on a fallback
	                                * pool (not their first choice) */
	int64_t off_home;     /* pooled: started outside their preferred pool */
	double engine_s;
} mu_evp_run_t;

typedef struct mu_evp_result {
	mu_evp_pool_t pools[MU_EVP_MAXPOOLS];
	int32_t npools;
	mu_evp_team_t teams[MU_EVP_MAXTEAMS];
	int32_t nteams;
	int64_t jobs, gpus;
	double window_s;      /* the arrival window after scaling */
	double offered;       /* offered load */
	mu_evp_run_t runs[MU_EVP_NMODES];
} mu_evp_result_t;

/* Runs the three modes on the openb node list `nodes` (a loaded openb
 * node CSV) and the Philly load `philly` (loaded with 1 GPU per pod).
 * MU_EINVAL with a message for inputs that do not fit the protocol.
 * O(three simulations). */
int mu_evp_run(const mu_specs_t *nodes, const mu_specs_t *philly,
	       const mu_evp_opts_t *o, mu_evp_result_t *out, mu_diag_t *diag);

/* Writes the figures as text, or an HTML report with bar charts. */
void mu_evp_print(const mu_evp_result_t *r, FILE *f);
int mu_evp_write_html(const mu_evp_result_t *r, FILE *f);

#endif

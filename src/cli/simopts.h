/*
 * simopts.h - the options shared by the commands that run the simulator
 * (simulate, explain, queues): input files, seed, policy and preemption
 * settings, and loading everything into one spec set.
 */
#ifndef MUSTER_CLI_SIMOPTS_H
#define MUSTER_CLI_SIMOPTS_H

#include "muster/sim.h"

#define MU_CLI_MAX_FILES 64

typedef struct mu_simopts {
	const char *cmd; /* for messages: "simulate", "explain"... */
	const char *cluster[MU_CLI_MAX_FILES], *workload[MU_CLI_MAX_FILES];
	int ncluster, nworkload;
	const char *json, *report;
	const char *positional; /* explain: the job name */
	bool quiet;
	mu_sim_config_t cfg;
	mu_load_opts_t load;
	mu_workload_mix_t mix; /* the workload's, for MU_SCORE_MIX policies */
	/* muster-horizon: its options (--horizon-*), whether any was given,
	 * and its state, which o->cfg.horizon points at after load. */
	mu_horizon_config_t hz;
	const char *hz_opt;
	mu_horizon_t horizon;
	bool hz_live;
} mu_simopts_t;

void mu_simopts_init(mu_simopts_t *o, const char *cmd);
/* Parses argv[1..]; returns -1 after printing help, 0, or an exit code.
 * help() prints the command's own usage lines first. */
int mu_simopts_parse(mu_simopts_t *o, int argc, char **argv,
		     void (*help)(FILE *f));
/* The option lines every such command accepts. */
void mu_simopts_help(FILE *f);
/* Loads and validates all files, and builds o->mix from the workload when
 * the policy needs one; returns an exit code (2 on bad input). */
int mu_simopts_load(mu_simopts_t *o, mu_specs_t *sp);
/* Frees what load built (the mix). */
void mu_simopts_release(mu_simopts_t *o);

#endif

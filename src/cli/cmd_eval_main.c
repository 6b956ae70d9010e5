/*
 * cmd_eval_main.c - `muster eval NAME`: one command for the external
 * evaluations, each in its own file (cmd_eval.c for openb, cmd_eval_philly.c,
 * cmd_eval_topo.c, cmd_eval_queues.c, cmd_eval_pools.c, cmd_eval_fleet.c,
 * cmd_eval_slurm.c).  The old spellings `eval-philly`,
 * `eval-topology` and `eval-queues` still work (main.c), with a note on
 * stderr.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

typedef struct eval_cmd {
	const char *name;
	int (*run)(int argc, char **argv); /* gets argv from NAME on */
	const char *help;
} eval_cmd_t;

/* openb's parser wants argv[0] "eval", argv[1] "openb": the rest get NAME
 * as their argv[0]. */
static int run_openb(int argc, char **argv)
{
	return mu_cmd_eval_openb(argc + 1, argv - 1);
}

static const eval_cmd_t evals[] = {
	{"openb", run_openb, "GPU allocation and fragmentation on the FGD paper's openb traces"},
	{"philly", mu_cmd_eval_philly, "backfill, large-job waits and JCT on the Philly trace"},
	{"topology", mu_cmd_eval_topology, "topology-aware gang placement on a real Clos network"},
	{"queues", mu_cmd_eval_queues, "fair share, weighted shares and reclaim latency"},
	{"pools", mu_cmd_eval_pools, "node pools: per-pool quotas with fallback vs pooled vs strict"},
	{"fleet", mu_cmd_eval_fleet, "where jobs go across a fleet of clusters (Philly trace)"},
	{"slurm", mu_cmd_eval_slurm, "the same jobs through a real Slurm's backfill and muster's"},
};

static void eval_list(FILE *f)
{
	fprintf(f, "usage: muster eval NAME [options]\n\n"
		   "Evaluations on work no one here wrote (docs/evaluation.md):\n\n");
	for (size_t i = 0; i < sizeof evals / sizeof *evals; i++)
		fprintf(f, "  %-9s %s\n", evals[i].name, evals[i].help);
	fprintf(f, "\nRun 'muster eval NAME --help' for an evaluation's options.\n");
}

int mu_cmd_eval(int argc, char **argv)
{
	if (argc < 2) {
		eval_list(stderr);
		return MU_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		eval_list(stdout);
		return MU_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof evals / sizeof *evals; i++)
		if (!strcmp(name, evals[i].name))
			return evals[i].run(argc - 1, argv + 1);
	fprintf(stderr, "muster eval: unknown evaluation '%s'; expected one of:", name);
	for (size_t i = 0; i < sizeof evals / sizeof *evals; i++)
		fprintf(stderr, " %s", evals[i].name);
	fprintf(stderr, "\n");
	return MU_EXIT_USAGE;
}

/*
 * main.c - the `muster` command: dispatches to one subcommand per file.
 *
 * Only the CLI exits; every subcommand returns its exit code here.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#ifndef MUSTER_VERSION
#define MUSTER_VERSION "0.1.0"
#endif

typedef struct cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help; /* NULL: an old spelling, not listed */
} cmd_t;

/* The old spellings of `muster eval NAME`: they run it, with a note. */
static int eval_alias(int argc, char **argv, int (*run)(int, char **), const char *name)
{
	fprintf(stderr, "muster: note: '%s' is now 'muster eval %s'\n", argv[0], name);
	return run(argc, argv);
}

static int old_eval_queues(int argc, char **argv)
{
	return eval_alias(argc, argv, mu_cmd_eval_queues, "queues");
}

static int old_eval_topology(int argc, char **argv)
{
	return eval_alias(argc, argv, mu_cmd_eval_topology, "topology");
}

static int old_eval_philly(int argc, char **argv)
{
	return eval_alias(argc, argv, mu_cmd_eval_philly, "philly");
}

static const cmd_t commands[] = {
	{"simulate", mu_cmd_simulate, "run a workload on a simulated cluster and report"},
	{"scenario", mu_cmd_scenario, "check scenario files (cluster, jobs, expected decisions)"},
	{"explain", mu_cmd_explain, "why a job waits (or where it runs) at a moment of a simulation"},
	{"queues", mu_cmd_queues, "the queue tree: quota, fair share, usage, jobs"},
	{"up", mu_cmd_up, "a local control plane (Kubernetes API subset) with simulated nodes"},
	{"node", mu_cmd_node, "fail or recover a simulated node of `muster up`"},
	{"eval", mu_cmd_eval, "evaluations: openb, philly, topology, queues, pools, fleet, slurm (muster eval --help)"},
	{"agent", mu_cmd_agent, "node agent: discover this host's NUMA, GPU and NIC topology"},
	{"bench", mu_cmd_bench, "time the engine at scale: decisions/s, cycle time, memory"},
	{"scheduler", mu_cmd_scheduler, "the Kubernetes scheduler daemon (leader-elected; see docs/kubernetes.md)"},
	{"mig", mu_cmd_mig, "MIG layouts for the pending demand (mig-parted config), and their evaluation"},
	{"dispatch", mu_cmd_dispatch, "the hub daemon: one queue for a fleet of clusters (see docs/dispatch.md)"},
	{"kexplain", mu_cmd_kexplain, "why a pod or Job of a live cluster waits, or where it runs"},
	{"eval-queues", old_eval_queues, NULL},
	{"eval-topology", old_eval_topology, NULL},
	{"eval-philly", old_eval_philly, NULL},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: muster <command> [options]\n\n"
		   "muster is a batch scheduler for AI/ML workloads: job queueing, fair share,\n"
		   "gang scheduling and GPU packing.  Commands:\n\n");
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (commands[i].help)
			fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "  %-10s %s\n", "version", "print the version");
	fprintf(f, "\nRun 'muster <command> --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return MU_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		usage(stdout);
		return MU_EXIT_OK;
	}
	if (!strcmp(name, "version") || !strcmp(name, "--version")) {
		printf("muster %s\n", MUSTER_VERSION);
		return MU_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (!strcmp(name, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "muster: unknown command '%s'\n\n", name);
	usage(stderr);
	return MU_EXIT_USAGE;
}

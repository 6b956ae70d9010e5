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
	const char *help;
} cmd_t;

static const cmd_t commands[] = {
	{"simulate", mu_cmd_simulate, "run a workload on a simulated cluster and report"},
	{"scenario", mu_cmd_scenario, "check scenario files (cluster, jobs, expected decisions)"},
	{"explain", mu_cmd_explain, "why a job waits (or where it runs) at a moment of a simulation"},
	{"queues", mu_cmd_queues, "the queue tree: quota, fair share, usage, jobs"},
	{"up", mu_cmd_up, "a local control plane (Kubernetes API subset) with simulated nodes"},
	{"node", mu_cmd_node, "fail or recover a simulated node of `muster up`"},
	{"eval", mu_cmd_eval, "reproduce the FGD paper's openb experiment (muster eval openb)"},
	{"eval-queues", mu_cmd_eval_queues, "evaluate fair share, weights and reclaim on synthetic loads"},
	{"agent", mu_cmd_agent, "node agent: discover this host's NUMA, GPU and NIC topology"},
	{"bench", mu_cmd_bench, "time the engine at scale: decisions/s, cycle time, memory"},
	{"scheduler", mu_cmd_scheduler, "the Kubernetes scheduler daemon (leader-elected; see docs/kubernetes.md)"},
	{"kexplain", mu_cmd_kexplain, "why a pod or Job of a live cluster waits, or where it runs"},
	{"eval-topology", mu_cmd_eval_topology, "evaluate topology-aware gang placement on a real Clos network"},
	{"eval-philly", mu_cmd_eval_philly, "evaluate backfill, large-job waits and JCT on the Philly trace"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: muster <command> [options]\n\n"
		   "muster is a batch scheduler for AI/ML workloads: job queueing, fair share,\n"
		   "gang scheduling and GPU packing.  Commands:\n\n");
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
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

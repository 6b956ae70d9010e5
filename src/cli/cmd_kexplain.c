/*
 * cmd_kexplain.c - `muster kexplain`: `explain` against a live cluster,
 * through the API (mu_kube_explain): why a pod or a Job waits, or where it
 * runs and on which devices.  `muster explain` (cmd_explain.c) answers the
 * same question at a moment of a simulation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "muster/kube.h"

static void kexplain_usage(FILE *f)
{
	fputs("usage: muster kexplain [--kubeconfig FILE | --in-cluster] [--context NAME]\n"
	      "                       [-n NAMESPACE] [--scheduler http://HOST:PORT]\n"
	      "                       [--token-file FILE] POD | NS/POD | job/NAME | KIND/NAME\n"
	      "\n"
	      "Prints why a pod or a Job of a live cluster is where it is: phase, gang or\n"
	      "queue, node and devices (with muster-horizon also the settings that placed\n"
	      "it), muster's explanation (the PodScheduled message,\n"
	      "as in `kubectl describe pod`) and muster's events.  On a hub (`muster\n"
	      "dispatch`) also for KIND jobset, pytorchjob, mpijob, rayjob,\n"
	      "leaderworkerset (lws), podgroup (muster's), podgroup.scheduling.volcano.sh\n"
	      "and podgroup.scheduling.run.ai: where it went or why it waits.  With --scheduler (a\n"
	      "running scheduler's --metrics address) also the engine's live view: queue,\n"
	      "state, reason and expected start, and muster-horizon's settings now;\n"
	      "--token-file holds the scheduler's token\n"
	      "(its --token-file).\n",
	      f);
}

int mu_cmd_kexplain(int argc, char **argv)
{
	const char *kc = NULL, *ctx = NULL, *ns = NULL, *what = NULL, *sched = NULL;
	bool in_cluster = false;
	char token[256] = "";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			kexplain_usage(stdout);
			return MU_EXIT_OK;
		}
		bool val = !strcmp(a, "--kubeconfig") || !strcmp(a, "--context") || !strcmp(a, "-n") ||
			   !strcmp(a, "--namespace") || !strcmp(a, "--scheduler") ||
			   !strcmp(a, "--token-file");
		if (val && i + 1 >= argc) {
			fprintf(stderr, "muster kexplain: %s needs a value\n", a);
			return MU_EXIT_USAGE;
		}
		if (!strcmp(a, "--kubeconfig"))
			kc = argv[++i];
		else if (!strcmp(a, "--context"))
			ctx = argv[++i];
		else if (!strcmp(a, "--scheduler"))
			sched = argv[++i];
		else if (!strcmp(a, "--token-file")) {
			if (mu_cli_read_token("kexplain", argv[++i], token, sizeof token))
				return MU_EXIT_USAGE;
		}
		else if (val)
			ns = argv[++i];
		else if (!strcmp(a, "--in-cluster"))
			in_cluster = true;
		else if (a[0] == '-' || what) {
			fprintf(stderr, "muster kexplain: unexpected %s\n\n", a);
			kexplain_usage(stderr);
			return MU_EXIT_USAGE;
		} else
			what = a;
	}
	if (!what) {
		kexplain_usage(stderr);
		return MU_EXIT_USAGE;
	}
	mu_kube_config_t cfg;
	char full[1024], err[600] = "";
	if (mu_kube_config_resolve(kc, ctx, in_cluster, &cfg, err, sizeof err)) {
		fprintf(stderr, "muster kexplain: %s\n", err);
		return MU_EXIT_USAGE;
	}
	if (ns && !strchr(what + (strncmp(what, "job/", 4) ? 0 : 4), '/')) {
		bool job = !strncmp(what, "job/", 4);
		snprintf(full, sizeof full, "%s%s/%s", job ? "job/" : "", ns, job ? what + 4 : what);
		what = full;
	}
	int rc = mu_kube_explain(&cfg, what, stdout, err, sizeof err);
	if (rc == MU_OK && sched)
		rc = mu_kube_explain_live(sched, *token ? token : NULL, what, ns ? ns : cfg.ns, stdout, err, sizeof err);
	mu_kube_config_release(&cfg);
	if (rc) {
		fprintf(stderr, "muster kexplain: %s\n", err);
		return MU_EXIT_FAIL;
	}
	return MU_EXIT_OK;
}

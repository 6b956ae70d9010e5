/*
 * cmd_mig.c - `muster mig plan` (the MIG layouts muster decides for a
 * cluster's pending demand, as the config that NVIDIA's MIG manager
 * applies) and `muster mig eval` (dynamic against static layouts).
 *
 * plan prints a mig-parted config (version v1, one mig-config per node
 * named muster-NODE), or with --configmap the same inside a ConfigMap, and
 * the node label that selects each config (nvidia.com/mig.config) as the
 * kubectl line to run: the GPU Operator's mig-manager watches that label,
 * drains the node's GPU pods and applies the named config.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "muster/error.h"
#include "muster/eval_mig.h"
#include "muster/load.h"
#include "muster/mig.h"

#define MIG_MAX_NODES 100000

static void mig_usage(FILE *f)
{
	fprintf(f,
		"usage: muster mig plan --cluster FILE --workload FILE [--configmap NAME]\n"
		"                       [--namespace NS]\n"
		"       muster mig eval [--gpus N] [--rounds N] [--load X] [--seed N]\n"
		"       muster mig eval --running [--gpus N] [--steps N] [--load X] [--seed N]\n\n"
		"plan: the MIG layout of every A100/H100 node for the workload's demand\n"
		"(nvidia.com/mig-PROFILE requests are instances, nvidia.com/gpu whole GPUs),\n"
		"printed as a mig-parted config (version v1, a config muster-NODE per node),\n"
		"or inside a ConfigMap NAME (namespace NS, default gpu-operator), followed by\n"
		"the kubectl lines that label each node nvidia.com/mig.config=muster-NODE.\n\n"
		"eval: layouts decided per snapshot of demand against a static one (half\n"
		"whole GPUs, half all-balanced) on N A100-80GB GPUs (default 64), over\n"
		"rounds snapshots (default 1000) of load x capacity (default 1.2).\n"
		"With --running, pods arrive, run and hold their devices over N steps\n"
		"(default 2000): the static layout against one re-planned every step\n"
		"around the running pods (mu_mig_replan); the figure is the allocation.\n");
}

/* Prints one node's layout as mig-parted entries, indented by ind. */
static void print_node(FILE *f, const mu_mig_node_plan_t *p, const char *ind)
{
	fprintf(f, "%s  muster-%s:\n", ind, p->node);
	for (int g = 0; g < p->ngpu; g++) {
		const mu_mig_gpu_t *x = &p->gpus[g];
		fprintf(f, "%s    - devices: [%d]\n%s      mig-enabled: %s\n", ind, g, ind,
			x->enabled ? "true" : "false");
		if (!x->enabled)
			continue;
		int32_t count[MU_MIG_MAX_PROFILES] = {0};
		mu_mig_count(p->model, x, count);
		fprintf(f, "%s      mig-devices:%s\n", ind, x->n ? "" : " {}");
		for (int k = 0; k < p->model->nprofiles; k++)
			if (count[k])
				fprintf(f, "%s        \"%s\": %d\n", ind, p->model->profiles[k].name,
					(int)count[k]);
	}
}

/* Loads the files into sp; prints why and returns an exit code. */
static int load_all(const char *cluster, const char *workload, mu_specs_t *sp)
{
	mu_load_opts_t o;
	mu_diag_t d = {{0}};
	mu_load_opts_defaults(&o);
	const char *files[2] = {cluster, workload};
	for (int i = 0; i < 2; i++)
		if (mu_load_file(files[i], &o, sp, &d) != MU_OK) {
			fprintf(stderr, "muster mig: %s\n", d.msg);
			return MU_EXIT_USAGE;
		}
	if (mu_specs_validate(sp, &d) != MU_OK) {
		fprintf(stderr, "muster mig: %s\n", d.msg);
		return MU_EXIT_USAGE;
	}
	return MU_EXIT_OK;
}

static int mig_plan(const char *cluster, const char *workload, const char *cm,
		    const char *ns)
{
	mu_specs_t sp;
	mu_specs_init(&sp);
	int rc = load_all(cluster, workload, &sp);
	mu_mig_node_plan_t *plans = NULL;
	int n = 0;
	if (rc == MU_EXIT_OK) {
		int cap = sp.nnodes < MIG_MAX_NODES ? (int)sp.nnodes : MIG_MAX_NODES;
		plans = calloc((size_t)(cap ? cap : 1), sizeof *plans);
		n = plans ? mu_mig_plan_nodes(sp.nodes, sp.nnodes, sp.jobs, sp.njobs, plans, cap)
			  : MU_ENOMEM;
		if (n < 0) {
			fprintf(stderr, "muster mig: %s\n", mu_strerror(n));
			rc = MU_EXIT_FAIL;
		} else if (n == 0) {
			fprintf(stderr, "muster mig: no node has a MIG-capable GPU (A100, "
				"H100 by nvidia.com/gpu.product or gpuModel)\n");
			rc = MU_EXIT_USAGE;
		}
	}
	if (rc == MU_EXIT_OK) {
		const char *ind = cm ? "    " : "";
		if (cm)
			printf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n"
			       "  namespace: %s\ndata:\n  config.yaml: |\n", cm, ns);
		printf("%sversion: v1\n%smig-configs:\n", ind, ind);
		for (int i = 0; i < n; i++)
			print_node(stdout, &plans[i], ind);
		for (int i = 0; i < n; i++)
			printf("# kubectl label node %s nvidia.com/mig.config=muster-%s --overwrite\n",
			       plans[i].node, plans[i].node);
	}
	free(plans);
	mu_specs_release(&sp);
	return rc;
}

static int mig_eval(int gpus, int rounds, double load, unsigned long long seed)
{
	mu_mig_eval_result_t r;
	int rc = mu_mig_eval(gpus, rounds, load, seed, &r);
	if (rc) {
		fprintf(stderr, "muster mig eval: %s: expected --gpus 1..100000, --rounds "
			"1..1000000 and --load in (0, 10]\n", mu_strerror(rc));
		return MU_EXIT_USAGE;
	}
	printf("muster mig eval: %d A100-80GB GPUs, %d snapshots, demand %.2f x capacity, seed %llu\n",
	       gpus, rounds, load, seed);
	printf("  layout    compute served  whole-GPU pods  MIG instances\n");
	printf("  static    %13.1f%%  %13.1f%%  %12.1f%%\n", r.served_static * 100,
	       r.whole_static * 100, r.inst_static * 100);
	printf("  dynamic   %13.1f%%  %13.1f%%  %12.1f%%\n", r.served_dynamic * 100,
	       r.whole_dynamic * 100, r.inst_dynamic * 100);
	return MU_EXIT_OK;
}

static int mig_eval_running(int gpus, int steps, double load, unsigned long long seed)
{
	mu_mig_run_result_t r;
	int rc = mu_mig_eval_running(gpus, steps, load, seed, &r);
	if (rc) {
		fprintf(stderr, "muster mig eval --running: %s: expected --gpus 1..4096, "
			"--steps 201..1000000 and --load in (0, 10]\n", mu_strerror(rc));
		return rc == MU_EINVAL ? MU_EXIT_USAGE : MU_EXIT_FAIL;
	}
	printf("muster mig eval --running: %d A100-80GB GPUs, %d steps, offered load %.2f x "
	       "capacity, seed %llu\n", gpus, steps, load, seed);
	printf("  layout    allocation  pods started/step  GPUs re-laid/step\n");
	printf("  static    %9.1f%%  %17.2f  %17s\n", r.alloc_static * 100,
	       r.started_static, "-");
	printf("  dynamic   %9.1f%%  %17.2f  %17.2f\n", r.alloc_dynamic * 100,
	       r.started_dynamic, r.changes);
	return MU_EXIT_OK;
}

/* Reads a number option value; false (said on stderr) when malformed. */
static bool num_arg(const char *opt, const char *v, double lo, double hi, double *out)
{
	char *end;
	double x = strtod(v, &end);
	if (end == v || *end || !(x >= lo && x <= hi)) {
		fprintf(stderr, "muster mig: %s: expected a number from %g to %g, got '%s'\n",
			opt, lo, hi, v);
		return false;
	}
	*out = x;
	return true;
}

int mu_cmd_mig(int argc, char **argv)
{
	const char *cluster = NULL, *workload = NULL, *cm = NULL, *ns = "gpu-operator";
	double gpus = 64, rounds = 1000, load = 1.2, seed = 42, steps = 2000;
	bool running = false;
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		mig_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? MU_EXIT_USAGE : MU_EXIT_OK;
	}
	bool plan = !strcmp(argv[1], "plan");
	if (!plan && strcmp(argv[1], "eval")) {
		fprintf(stderr, "muster mig: unknown verb '%s' (plan or eval)\n", argv[1]);
		return MU_EXIT_USAGE;
	}
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool ok = v != NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			mig_usage(stdout);
			return MU_EXIT_OK;
		} else if (!plan && !strcmp(a, "--running")) {
			running = true;
			continue;
		} else if (!plan && ok && !strcmp(a, "--steps")) {
			ok = num_arg(a, v, 201, 1000000, &steps);
		} else if (plan && ok && !strcmp(a, "--cluster")) {
			cluster = v;
		} else if (plan && ok && !strcmp(a, "--workload")) {
			workload = v;
		} else if (plan && ok && !strcmp(a, "--configmap")) {
			cm = v;
		} else if (plan && ok && !strcmp(a, "--namespace")) {
			ns = v;
		} else if (!plan && ok && !strcmp(a, "--gpus")) {
			ok = num_arg(a, v, 1, 100000, &gpus);
		} else if (!plan && ok && !strcmp(a, "--rounds")) {
			ok = num_arg(a, v, 1, 1000000, &rounds);
		} else if (!plan && ok && !strcmp(a, "--load")) {
			ok = num_arg(a, v, 0.01, 10, &load);
		} else if (!plan && ok && !strcmp(a, "--seed")) {
			ok = num_arg(a, v, 0, 1e15, &seed);
		} else {
			fprintf(stderr, "muster mig %s: unknown option or missing value '%s'\n",
				argv[1], a);
			return MU_EXIT_USAGE;
		}
		if (!ok)
			return MU_EXIT_USAGE;
		i++;
	}
	if (!plan && running)
		return mig_eval_running((int)gpus, (int)steps, load, (unsigned long long)seed);
	if (!plan)
		return mig_eval((int)gpus, (int)rounds, load, (unsigned long long)seed);
	if (!cluster || !workload) {
		fprintf(stderr, "muster mig plan: --cluster and --workload are required\n");
		return MU_EXIT_USAGE;
	}
	return mig_plan(cluster, workload, cm, ns);
}

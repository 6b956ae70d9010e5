/*
 * cmd_eval_pools.c - `muster eval pools`: node pools with their own quotas
 * on the openb cluster with the Philly trace's teams (src/eval/eval_pools.c;
 * docs/evaluation.md, "Node pools").  Without the data in ../shared/data it
 * says so and skips (exit 0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "muster/eval_pools.h"
#include "muster/util.h"

#define EVPL_NODES "../shared/data/openb/openb_node_list_gpu_node.csv"
#define EVPL_TRACE "../shared/data/philly/philly.csv"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: muster eval pools [options]\n\n"
		"The openb cluster's 7 GPU models as node pools, the busiest window of the\n"
		"Philly trace with its 4 busiest virtual clusters (and the rest) as teams,\n"
		"run three ways (docs/evaluation.md, \"Node pools\"):\n"
		"  fallback  per-pool quotas; jobs name their preferred pool, then the others\n"
		"  pooled    one quota per team over all GPUs; jobs go anywhere\n"
		"  strict    per-pool quotas; jobs name their preferred pool only\n"
		"and prints utilization per pool, wait per team and how often a job ran on\n"
		"a fallback pool.  Skips (exit 0) when the data is not there.\n\n"
		"  --nodes FILE            the openb node list (" EVPL_NODES ")\n"
		"  --trace FILE            the Philly trace (" EVPL_TRACE ")\n"
		"  --days N                Philly window in days, before scaling (7)\n"
		"  --load X                offered load on the openb GPUs (1.0)\n"
		"  --home X                share of a team's jobs preferring its home pool (0.6)\n"
		"  --cap DUR               cap job durations (6h)\n"
		"  --seed N                preferences (1)\n"
		"  --quick                 a 6-hour window, durations capped at 2h\n"
		"  --report FILE           an HTML report with bar charts\n"
		"  -h, --help              this help\n");
}

int mu_cmd_eval_pools(int argc, char **argv)
{
	mu_evp_opts_t o;
	mu_evp_opts_defaults(&o);
	const char *nodes = EVPL_NODES, *trace = EVPL_TRACE, *report = NULL;
	bool quick = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int rc = MU_OK;
		int64_t n;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return MU_EXIT_OK;
		} else if (!strcmp(a, "--quick")) {
			quick = true;
			continue;
		} else if (!v) {
			fprintf(stderr, "muster eval pools: unknown option or missing value: %s "
				"(see --help)\n", a);
			return MU_EXIT_USAGE;
		} else if (!strcmp(a, "--nodes")) {
			nodes = v;
		} else if (!strcmp(a, "--trace")) {
			trace = v;
		} else if (!strcmp(a, "--report")) {
			report = v;
		} else if (!strcmp(a, "--days")) {
			rc = mu__parse_num(v, 0.01, 365, &o.days);
		} else if (!strcmp(a, "--load")) {
			rc = mu__parse_num(v, 0.05, 5, &o.load);
		} else if (!strcmp(a, "--home")) {
			rc = mu__parse_num(v, 0, 1, &o.home);
		} else if (!strcmp(a, "--cap")) {
			rc = mu__parse_duration(v, &o.cap);
		} else if (!strcmp(a, "--seed")) {
			rc = mu__parse_int(v, 0, INT64_MAX, &n);
			o.seed = (uint64_t)n;
		} else {
			fprintf(stderr, "muster eval pools: unknown option %s (see --help)\n", a);
			return MU_EXIT_USAGE;
		}
		if (rc) {
			fprintf(stderr, "muster eval pools: %s: bad value \"%s\"\n", a, v);
			return MU_EXIT_USAGE;
		}
		i++;
	}
	if (quick) {
		double days = o.days;
		mu_evp_opts_quick(&o);
		if (days != 7)
			o.days = days;
	}
	if (access(nodes, R_OK) || access(trace, R_OK)) {
		printf("muster eval pools: skipped: %s not found (the openb node list and the "
		       "Philly trace of ../shared/data; see docs/evaluation.md)\n",
		       access(nodes, R_OK) ? nodes : trace);
		return MU_EXIT_OK;
	}
	mu_specs_t ns, ph;
	mu_diag_t d;
	mu_load_opts_t lo;
	mu_load_opts_defaults(&lo);
	lo.gpus_per_node = 1;
	mu_specs_init(&ns);
	mu_specs_init(&ph);
	int rc = mu_load_file(nodes, NULL, &ns, &d);
	if (rc == MU_OK)
		rc = mu_load_file(trace, &lo, &ph, &d);
	mu_evp_result_t *r = rc == MU_OK ? calloc(1, sizeof *r) : NULL;
	if (rc == MU_OK && !r) {
		rc = MU_ENOMEM;
		snprintf(d.msg, sizeof d.msg, "out of memory");
	}
	if (rc == MU_OK)
		rc = mu_evp_run(&ns, &ph, &o, r, &d);
	int ex = MU_EXIT_OK;
	if (rc) {
		fprintf(stderr, "muster eval pools: %s\n", d.msg);
		ex = MU_EXIT_USAGE;
	} else {
		mu_evp_print(r, stdout);
		if (report) {
			FILE *f = fopen(report, "w");
			if (!f || mu_evp_write_html(r, f) != MU_OK) {
				fprintf(stderr, "muster eval pools: cannot write %s\n", report);
				ex = MU_EXIT_USAGE;
			}
			if (f)
				fclose(f);
		}
	}
	free(r);
	mu_specs_release(&ns);
	mu_specs_release(&ph);
	return ex;
}

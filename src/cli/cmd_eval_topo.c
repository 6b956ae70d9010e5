/*
 * cmd_eval_topo.c - `muster eval topology`: topology-aware gang placement
 * against a topology-blind baseline on the Lingjun Clos network, with the
 * Philly trace's multi-GPU jobs (include/muster/eval_topo.h; protocol in
 * docs/evaluation.md).
 *
 * This file parses options, loads the network and the trace, runs the
 * four policies on the same cluster and jobs, prints one table row per
 * policy, and writes the JSON and HTML reports.  Exit 0 when every run
 * finished, 1 when one failed or a report could not be written, 2 on bad
 * usage or input.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "muster/eval_topo.h"
#include "muster/util.h"
#include "muster/report.h"

#define QUICK_JOBS 1000 /* --quick: the first this many multi-GPU jobs */

typedef struct etopo_cli {
	const char *topology, *trace, *json, *report;
	mu_etopo_opts_t o;
	bool quick, quiet;
} etopo_cli_t;

static void etopo_usage(FILE *f)
{
	fprintf(f,
		"usage: muster eval topology [options]\n\n"
		"Replays the multi-GPU jobs of the Philly trace, arrivals compressed to a\n"
		"target load, on the Lingjun Clos network (one 8-GPU node per host), and\n"
		"compares topology-aware placement with a topology-blind engine:\n"
		"  blind-binpack     no topology, binpack (the baseline)\n"
		"  blind-spread      no topology, spread\n"
		"  muster-preferred  every job prefers one ToR, else one PSW, else anywhere\n"
		"  muster-required   ... and each gang requires its tightest feasible level\n"
		"A job spanning more switch tiers runs slower: x1.1 across ToRs, x1.25\n"
		"across PSWs, x1.5 across cores (docs/evaluation.md).\n\n"
		"  --topology FILE   host,DSW,PSW,ASW CSV\n"
		"                    (../shared/data/topology/lingjun_topo.csv)\n"
		"  --trace FILE      Philly trace (../shared/data/philly/philly.csv)\n"
		"  --load X          offered load on all GPUs (0.8)\n"
		"  --seed N          node order and simulation seed (1)\n"
		"  --max-jobs N      the first N multi-GPU jobs only (0 = all)\n"
		"  --quick           the first %d multi-GPU jobs\n"
		"  --json FILE       write every figure as JSON\n"
		"  --report FILE     write an HTML report\n"
		"  --quiet           print nothing but errors\n"
		"  -h, --help        this help\n", QUICK_JOBS);
}

/* One option with a value; MU_EINVAL if unknown, else a parse result. */
static int etopo_option(void *ctx, const char *a, const char *v)
{
	etopo_cli_t *c = ctx;
	int64_t n;
	int rc = MU_OK;
	if (!strcmp(a, "--topology")) {
		c->topology = v;
	} else if (!strcmp(a, "--trace")) {
		c->trace = v;
	} else if (!strcmp(a, "--json")) {
		c->json = v;
	} else if (!strcmp(a, "--report")) {
		c->report = v;
	} else if (!strcmp(a, "--load")) {
		rc = mu__parse_num(v, 0.01, 10, &c->o.load);
	} else if (!strcmp(a, "--seed")) {
		rc = mu__parse_int(v, 0, INT64_MAX, &n);
		c->o.seed = rc ? c->o.seed : (uint64_t)n;
	} else if (!strcmp(a, "--max-jobs")) {
		rc = mu__parse_int(v, 0, INT64_MAX, &c->o.max_jobs);
	} else {
		rc = MU_EINVAL;
	}
	return rc;
}

/* Parses argv; returns -1 after help, 0, or an exit code. */
static int etopo_parse(etopo_cli_t *c, int argc, char **argv)
{
	c->topology = "../shared/data/topology/lingjun_topo.csv";
	c->trace = "../shared/data/philly/philly.csv";
	mu_etopo_opts_defaults(&c->o);
	const mu_cli_flag_t flags[] = {
		{"--quick", &c->quick},
		{"--quiet", &c->quiet},
	};
	const mu_cli_parser_t parser = {"muster eval topology", etopo_usage, flags,
					 sizeof flags / sizeof *flags, etopo_option, c};
	int rc = mu_cli_parse(&parser, argc, argv);
	if (rc)
		return rc;
	if (c->quick && (c->o.max_jobs == 0 || c->o.max_jobs > QUICK_JOBS))
		c->o.max_jobs = QUICK_JOBS;
	return 0;
}

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Loads the network, the trace and the workload, and builds the cluster
 * into sp; prints what it built.  Returns an exit code. */
static int etopo_setup(const etopo_cli_t *c, mu_etopo_net_t *net, mu_specs_t *sp,
		       mu_etopo_workload_t *w)
{
	mu_diag_t diag = {{0}};
	mu_load_opts_t lo;
	mu_load_opts_defaults(&lo);
	lo.gpus_per_node = c->o.gpus_per_host;
	int rc = mu_etopo_net_load(c->topology, c->o.gpus_per_host, net, &diag);
	if (rc == MU_OK)
		rc = mu_load_file(c->trace, &lo, sp, &diag);
	if (rc == MU_OK)
		rc = mu_etopo_workload(sp, net, &c->o, w, &diag);
	if (rc == MU_OK && (rc = mu_etopo_cluster(net, c->o.seed, sp)) != MU_OK)
		mu__diag(&diag, rc, "eval topology", 0, 0, "%s", mu_strerror(rc));
	if (rc) {
		fprintf(stderr, "muster eval topology: %s\n", diag.msg[0] ? diag.msg :
			mu_strerror(rc));
		return rc == MU_ENOMEM ? MU_EXIT_FAIL : MU_EXIT_USAGE;
	}
	if (c->quiet)
		return MU_EXIT_OK;
	char win[32], span[32];
	mu__fmt_duration(win, sizeof win, w->window_s);
	mu__fmt_duration(span, sizeof span, w->trace_span_s);
	printf("network: %d hosts x %d GPUs; %d DSW, %d PSW, %d ToR domains "
	       "(largest ToR %d hosts, PSW %d)\n", (int)net->nhosts,
	       (int)net->gpus_per_host, (int)net->ndoms[0], (int)net->ndoms[1],
	       (int)net->ndoms[2], (int)net->max_hosts[2], (int)net->max_hosts[1]);
	printf("workload: %lld of %lld trace jobs (>= %d GPUs), %lld multi-node gangs "
	       "(largest %lld GPUs), %.0f GPU-hours\n  arrivals: %s of trace time "
	       "compressed %.2fx into %s: offered load %.1f%%\n  (GPUs they would "
	       "hold in that window if each started on arrival: %.1f%%)\n",
	       (long long)w->jobs, (long long)w->trace_jobs, (int)c->o.min_gpus,
	       (long long)w->gangs, (long long)w->gang_gpus_max, w->gpu_s / 3600, span,
	       w->compress, win, w->load * 100, w->window_load * 100);
	fflush(stdout);
	return MU_EXIT_OK;
}

/* Prints the table header and one row. */
static void print_head(void)
{
	printf("\n%-16s %5s %7s %5s %5s %6s %6s %8s %8s %8s %8s %8s %7s\n", "policy",
	       "gangs", "within", "ToRs", "slow", "util", "useful", "mean JCT",
	       "p99 JCT", "mean wait", "gang JCT", "gang wait", "ms/job");
}

static void print_row(const mu_etopo_result_t *r)
{
	char d[5][32];
	mu__fmt_duration(d[0], sizeof d[0], r->mean_jct_s);
	mu__fmt_duration(d[1], sizeof d[1], r->p99_jct_s);
	mu__fmt_duration(d[2], sizeof d[2], r->mean_wait_s);
	mu__fmt_duration(d[3], sizeof d[3], r->gang_jct_s);
	mu__fmt_duration(d[4], sizeof d[4], r->gang_wait_s);
	printf("%-16s %5lld %6.1f%% %5.2f %5.3f %5.1f%% %5.1f%% %8s %8s %8s %8s %8s %7.3f\n",
	       mu_etopo_policy_name(r->policy), (long long)r->gangs,
	       r->within_share * 100, r->mean_tors, r->mean_slowdown, r->util * 100,
	       r->util_useful * 100, d[0], d[1], d[2], d[3], d[4],
	       r->started ? r->engine_s * 1000 / (double)r->started : NAN);
	fflush(stdout);
}

/* Prints the gangs of each size class under each policy. */
static void print_sizes(const mu_etopo_result_t *res)
{
	printf("\nby gang size (GPUs)\n%-16s %-6s %5s %7s %5s %9s %9s\n", "policy",
	       "size", "gangs", "within", "ToRs", "mean wait", "mean JCT");
	for (int p = 0; p < MU_ETOPO_NPOLICIES; p++)
		for (int c = 0; c < MU_ETOPO_NSIZES; c++) {
			const mu_etopo_size_t *z = &res[p].sizes[c];
			char wt[32], jct[32];
			if (!z->gangs)
				continue;
			mu__fmt_duration(wt, sizeof wt, z->mean_wait_s);
			mu__fmt_duration(jct, sizeof jct, z->mean_jct_s);
			printf("%-16s %-6s %5lld %6.1f%% %5.2f %9s %9s\n",
			       mu_etopo_policy_name(res[p].policy), mu_etopo_size_name(c),
			       (long long)z->gangs, 100.0 * (double)z->within / (double)z->gangs,
			       z->mean_tors, wt, jct);
		}
}

/* Prints each policy's engine figures: the decision-time sanity check. */
static void print_engine(const mu_etopo_result_t *res)
{
	printf("\nengine\n");
	for (int p = 0; p < MU_ETOPO_NPOLICIES; p++) {
		const mu_etopo_result_t *r = &res[p];
		printf("%-16s %lld cycles, %.2f s in the engine: %.3f ms per job started, "
		       "%.3f ms per cycle; %lld pods evicted\n",
		       mu_etopo_policy_name(r->policy), (long long)r->cycles, r->engine_s,
		       r->started ? r->engine_s * 1000 / (double)r->started : NAN,
		       r->cycles ? r->engine_s * 1000 / (double)r->cycles : NAN,
		       (long long)r->preemptions);
	}
}

/* Writes one report with writer w to path; returns an exit code. */
static int write_report(const char *path, const mu_etopo_report_t *r,
			int (*w)(const mu_etopo_report_t *, FILE *))
{
	FILE *f = mu_cli_create(path);
	return f ? mu_cli_finish("muster eval topology", path, f, w(r, f), false) : MU_EXIT_FAIL;
}

/* Runs every policy into res; returns an exit code. */
static int etopo_runs(const etopo_cli_t *c, mu_etopo_net_t *net, mu_specs_t *sp,
		      mu_etopo_result_t *res)
{
	if (!c->quiet)
		print_head();
	for (int p = 0; p < MU_ETOPO_NPOLICIES; p++) {
		mu_diag_t diag = {{0}};
		int rc = mu_etopo_run(sp, net, (mu_etopo_policy_t)p, c->o.seed, &res[p], &diag);
		if (rc) {
			fprintf(stderr, "muster eval topology: %s\n", diag.msg[0] ? diag.msg :
				mu_strerror(rc));
			return MU_EXIT_FAIL;
		}
		if (!c->quiet)
			print_row(&res[p]);
	}
	return MU_EXIT_OK;
}

int mu_cmd_eval_topology(int argc, char **argv)
{
	etopo_cli_t c = {0};
	int rc = etopo_parse(&c, argc, argv);
	if (rc)
		return rc < 0 ? MU_EXIT_OK : rc;
	double t0 = wall_s();
	mu_etopo_net_t net;
	mu_specs_t sp;
	mu_etopo_workload_t w;
	mu_etopo_result_t res[MU_ETOPO_NPOLICIES];
	mu_specs_init(&sp);
	rc = etopo_setup(&c, &net, &sp, &w);
	if (rc == MU_EXIT_OK)
		rc = etopo_runs(&c, &net, &sp, res);
	if (rc == MU_EXIT_OK && !c.quiet) {
		print_sizes(res);
		print_engine(res);
	}
	mu_etopo_report_t r = {c.topology, c.trace, &net, &c.o, &w, res,
			       MU_ETOPO_NPOLICIES, c.quick};
	if (rc == MU_EXIT_OK && c.json)
		rc = write_report(c.json, &r, mu_etopo_write_json);
	if (rc == MU_EXIT_OK && c.report)
		rc = write_report(c.report, &r, mu_etopo_write_html);
	if (rc == MU_EXIT_OK && !c.quiet) {
		printf("\n(%.1f s)%s%s%s%s\n", wall_s() - t0, c.json ? " json: " : "",
		       c.json ? c.json : "", c.report ? " report: " : "",
		       c.report ? c.report : "");
	}
	mu_specs_release(&sp);
	mu_etopo_net_release(&net);
	return rc;
}

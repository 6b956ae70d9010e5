/*
 * cmd_eval_queues.c - `muster eval queues`: the evaluation of the queueing
 * policy (fair share between equal queues, over-quota weights, reclaim
 * latency) on synthetic clusters and workloads built in memory.
 *
 * The experiments live in src/eval/eval_queues.c; this file parses options,
 * prints each experiment's figures with an OK / NOT MET line per target,
 * and writes them all as one JSON object with --json.  Exit 0 when every
 * target is met, 1 when one is not, 2 on bad usage.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "muster/eval_queues.h"
#include "muster/util.h"

#define JAIN_TARGET 0.99  /* fairness: Jain's index of the day's shares */
#define WEIGHT_TOL 0.05   /* weighted: |share / target - 1| at most this */

typedef struct evq_cli {
	mu__evq_opts_t o;
	int64_t big_nodes;   /* the large reclaim run's nodes; 0 = none */
	mu_time_t grace;     /* eviction grace of the odd-claim reclaim runs */
	const char *json;
	const char *only;    /* fairness, weighted or reclaim; NULL = all */
	bool quiet;
} evq_cli_t;

#define EVQ_NREC 6 /* reclaim runs */

/* Everything measured, for the JSON file.  Each figure has its control
 * run beside it: preemption and reclaim off. */
typedef struct evq_all {
	mu__evq_fair_t fair, weighted, fair_ctl, weighted_ctl;
	mu__evq_reclaim_t rec[EVQ_NREC];
	int nrec;
	bool fair_ok, weighted_ok, rec_ok[EVQ_NREC];
	bool ran_fair, ran_weighted;
} evq_all_t;

static void evq_usage(FILE *f)
{
	fprintf(f,
		"usage: muster eval queues [options]\n\n"
		"Evaluates queueing, fair share and preemption on synthetic workloads\n"
		"(protocol and figures in docs/evaluation.md):\n"
		"  fairness   4 queues with equal deserved quotas; q1 is offered --skew\n"
		"             times the others' load and runs alone for the first window:\n"
		"             each one's share of GPU time from then on and Jain's index\n"
		"             (target >= 0.99)\n"
		"  weighted   3 saturated queues, no quota, over-quota weights 1:2:3:\n"
		"             shares against 1/6, 2/6, 3/6 (target within 5%%)\n"
		"  reclaim    an idle queue claims its deserved half of a cluster that\n"
		"             another fills: time and cycles until it holds it\n"
		"             (target <= min-runtime + one cycle + grace)\n"
		"Each experiment also runs as a control with preemption and reclaim off,\n"
		"which must come out measurably worse.\n\n"
		"  --seed N              workload and simulation seed (1)\n"
		"  --nodes N             8-GPU nodes for fairness and weighted (64, even)\n"
		"  --span DUR            simulated time of fairness and weighted (24h)\n"
		"  --load X              offered load over each queue's share (1.5)\n"
		"  --windows N           windows for the per-window Jain index (6)\n"
		"  --cycle-interval DUR  reclaim: cycle period (1s)\n"
		"  --reclaim-at DUR      reclaim: when the idle queue submits (30s)\n"
		"  --reclaim-nodes N     reclaim: nodes of the extra large run (500; 0 = none)\n"
		"  --skew X              fairness: q1's load over the others' (3)\n"
		"  --grace DUR           eviction grace period of the reclaim runs with\n"
		"                        odd-sized claims (30s, Kubernetes' default)\n"
		"  --only NAME           run one experiment: fairness, weighted or reclaim\n"
		"  --json FILE           write every figure as JSON\n"
		"  --quiet               print nothing but errors\n"
		"  -h, --help            this help\n");
}

/* One option with a value; MU_EINVAL if unknown, else a parse result. */
static int evq_option(void *ctx, const char *a, const char *v)
{
	evq_cli_t *c = ctx;
	int64_t n;
	int rc;
	if (!strcmp(a, "--seed")) {
		rc = mu__parse_int(v, 0, INT64_MAX, &n);
		c->o.seed = rc ? c->o.seed : (uint64_t)n;
	} else if (!strcmp(a, "--nodes")) {
		rc = mu__parse_int(v, 4, 100000, &n);
		rc = rc ? rc : n % 2 ? MU_ERANGE : MU_OK;
		c->o.nodes = rc ? c->o.nodes : (int32_t)n;
	} else if (!strcmp(a, "--windows")) {
		rc = mu__parse_int(v, 1, 1000, &n);
		c->o.windows = rc ? c->o.windows : (int32_t)n;
	} else if (!strcmp(a, "--reclaim-nodes")) {
		rc = mu__parse_int(v, 0, 100000, &c->big_nodes);
		rc = rc ? rc : c->big_nodes % 2 ? MU_ERANGE : MU_OK;
	} else if (!strcmp(a, "--skew")) {
		rc = mu__parse_num(v, 1, 100, &c->o.skew);
	} else if (!strcmp(a, "--grace")) {
		rc = mu__parse_duration(v, &c->grace);
	} else if (!strcmp(a, "--load")) {
		rc = mu__parse_num(v, 0.01, 100, &c->o.load);
	} else if (!strcmp(a, "--span")) {
		rc = mu__parse_duration(v, &c->o.span);
		rc = rc ? rc : c->o.span < 60000 ? MU_ERANGE : MU_OK;
	} else if (!strcmp(a, "--cycle-interval")) {
		rc = mu__parse_duration(v, &c->o.cycle_interval);
		rc = rc ? rc : c->o.cycle_interval < 1 ? MU_ERANGE : MU_OK;
	} else if (!strcmp(a, "--reclaim-at")) {
		rc = mu__parse_duration(v, &c->o.reclaim_at);
		rc = rc ? rc : c->o.reclaim_at < 1000 ? MU_ERANGE : MU_OK;
	} else if (!strcmp(a, "--only")) {
		c->only = v;
		rc = !strcmp(v, "fairness") || !strcmp(v, "weighted") ||
		     !strcmp(v, "reclaim") ? MU_OK : MU_ERANGE;
	} else if (!strcmp(a, "--json")) {
		c->json = v;
		rc = MU_OK;
	} else {
		rc = MU_EINVAL;
	}
	return rc;
}

/* Parses argv; returns -1 after help, 0, or an exit code. */
static int evq_parse(evq_cli_t *c, int argc, char **argv)
{
	mu__evq_opts_defaults(&c->o);
	c->o.skew = 3;
	c->big_nodes = 500;
	c->grace = 30000;
	const mu_cli_flag_t flags[] = {
		{"--quiet", &c->quiet},
	};
	const mu_cli_parser_t parser = {"muster eval queues", evq_usage, flags,
					 sizeof flags / sizeof *flags, evq_option, c};
	int rc = mu_cli_parse(&parser, argc, argv);
	if (rc)
		return rc;
	c->o.late = c->o.span / (c->o.windows > 1 ? c->o.windows : 2);
	return 0;
}

static const char *verdict(bool ok)
{
	return ok ? "OK" : "NOT MET";
}

/* Prints one shares experiment. */
static void print_shares(const mu__evq_fair_t *f, const mu__evq_opts_t *o)
{
	printf("  %-6s %8s %8s %10s %13s %12s\n", "queue", "target", "share",
	       "GPU-hours", "offered GPUs", "min backlog");
	for (int32_t i = 0; i < f->nqueues; i++)
		printf("  %-6s %7.2f%% %7.2f%% %10.0f %13.1f %7d jobs\n", f->q[i].name,
		       f->q[i].target * 100, f->q[i].share * 100, f->q[i].gpu_hours,
		       f->q[i].offered_gpus, (int)f->q[i].min_backlog);
	printf("  Jain's index of share/target %.4f; per %.4gh window: min %.4f, mean %.4f\n",
	       f->jain, (double)o->span / o->windows / 3.6e6, f->jain_win_min,
	       f->jain_win_mean);
	printf("  GPU utilization %.1f%%, %lld jobs, %lld completed, %lld pods preempted,\n"
	       "  %lld cycles (engine %.2f s)\n", f->utilization * 100,
	       (long long)f->jobs, (long long)f->completed, (long long)f->preemptions,
	       (long long)f->cycles, f->engine_s);
}

/* Prints one reclaim run. */
static void print_reclaim(const mu__evq_reclaim_t *r, bool ok)
{
	printf("  %4d nodes, min-runtime %3llds%s%s%s: ", (int)r->nodes,
	       (long long)(r->min_runtime / 1000), r->odd ? ", 3-7 GPU pods" : "",
	       r->grace ? ", grace" : "", r->control ? ", CONTROL (no reclaim)" : "");
	if (r->held)
		printf("A holds %.0f GPUs after %.1f s (%lld cycle%s, engine %.2f ms), "
		       "%lld pods evicted; bound %.0f s: %s\n", r->deserved_gpus,
		       r->latency_s, (long long)r->cycles, r->cycles == 1 ? "" : "s",
		       r->engine_ms,
		       (long long)r->preemptions, r->bound_s, verdict(ok));
	else
		printf("A never held its %.0f GPUs within min-runtime + 10 minutes%s: %s\n",
		       r->deserved_gpus, r->control ? " (the control must fail)" : "",
		       verdict(ok));
}

/* Whether the control run is measurably worse than the policy's: a worst
 * window or a largest deviation at least 0.01 (1 point) worse. */
static bool control_worse(const mu__evq_fair_t *f, const mu__evq_fair_t *ctl)
{
	return ctl->jain_win_min <= f->jain_win_min - 0.01 ||
	       ctl->max_dev >= f->max_dev + 0.01;
}

/* Runs one shares experiment and its control; prints both. */
static int shares_pair(const evq_cli_t *c, bool weighted, mu__evq_fair_t *f,
		       mu__evq_fair_t *ctl, mu_diag_t *diag)
{
	mu__evq_opts_t o = c->o;
	if (weighted) {
		o.skew = 1;
		o.late = 0;
	}
	int rc = weighted ? mu__evq_weighted(&o, f, diag) : mu__evq_fairness(&o, f, diag);
	o.control = true;
	if (rc == MU_OK)
		rc = weighted ? mu__evq_weighted(&o, ctl, diag) : mu__evq_fairness(&o, ctl, diag);
	if (rc == MU_OK && !c->quiet) {
		print_shares(f, &o);
		printf("  control, preemption and reclaim off:\n");
		print_shares(ctl, &o);
	}
	return rc;
}

/* Runs the fairness and weighted experiments that were asked for. */
static int run_shares(const evq_cli_t *c, evq_all_t *all)
{
	mu_diag_t diag = {{0}};
	int rc = MU_OK;
	if (!c->only || !strcmp(c->only, "fairness")) {
		if (!c->quiet)
			printf("fairness: 4 queues, deserved %.0f GPUs each; q1 offered %.1fx its share\n"
			       "  from 0, the others %.1fx from %.4gh; shares counted from then\n",
			       2.0 * c->o.nodes, c->o.load * c->o.skew, c->o.load,
			       (double)c->o.late / 3.6e6);
		if ((rc = shares_pair(c, false, &all->fair, &all->fair_ctl, &diag)) != MU_OK)
			goto fail;
		all->ran_fair = true;
		bool worse = control_worse(&all->fair, &all->fair_ctl);
		all->fair_ok = all->fair.jain >= JAIN_TARGET && worse;
		if (!c->quiet) {
			printf("  Jain %.4f >= %.2f, control worst window %.4f against %.4f "
			       "(measurably worse: %s): %s\n", all->fair.jain, JAIN_TARGET,
			       all->fair_ctl.jain_win_min, all->fair.jain_win_min,
			       worse ? "yes" : "no", verdict(all->fair_ok));
			fflush(stdout);
		}
	}
	if (!c->only || !strcmp(c->only, "weighted")) {
		if (!c->quiet)
			printf("weighted: 3 queues, no deserved quota, over-quota weights 1:2:3\n");
		if ((rc = shares_pair(c, true, &all->weighted, &all->weighted_ctl, &diag)) != MU_OK)
			goto fail;
		all->ran_weighted = true;
		bool worse = control_worse(&all->weighted, &all->weighted_ctl);
		all->weighted_ok = all->weighted.max_dev <= WEIGHT_TOL;
		if (!c->quiet) {
			printf("  largest |share/target - 1| %.1f%% <= %.0f%%: %s; control %.1f%% "
			       "(measurably worse: %s)\n", all->weighted.max_dev * 100,
			       WEIGHT_TOL * 100, verdict(all->weighted_ok),
			       all->weighted_ctl.max_dev * 100, worse ? "yes" : "no");
			fflush(stdout);
		}
	}
	return MU_OK;
fail:
	fprintf(stderr, "muster eval queues: %s\n", diag.msg[0] ? diag.msg : mu_strerror(rc));
	return rc;
}

/* Runs the reclaim experiment: min-runtime 0 and 60 s on the fairness
 * cluster's size; 60 s with odd-sized claims and an eviction grace period,
 * and its control (preemption and reclaim off); min-runtime 0 on the large
 * cluster. */
static int run_reclaim(const evq_cli_t *c, evq_all_t *all)
{
	typedef struct { int32_t nodes; mu_time_t minrt; bool odd, control; } run_t;
	const run_t runs[] = {{c->o.nodes, 0, false, false}, {c->o.nodes, 60000, false, false},
			      {c->o.nodes, 60000, true, false}, {c->o.nodes, 60000, true, true},
			      {(int32_t)c->big_nodes, 0, false, false}};
	int n = c->big_nodes ? 5 : 4;
	if (c->only && strcmp(c->only, "reclaim"))
		return MU_OK;
	if (!c->quiet)
		printf("reclaim: queue B fills the cluster; at %.0f s idle queue A submits its\n"
		       "  deserved half; a cycle every %.3g s\n",
		       (double)c->o.reclaim_at / 1000, (double)c->o.cycle_interval / 1000);
	for (int i = 0; i < n; i++) {
		mu_diag_t diag = {{0}};
		mu__evq_reclaim_t *r = &all->rec[i];
		mu__evq_opts_t o = c->o;
		o.odd = runs[i].odd;
		o.control = runs[i].control;
		o.grace = runs[i].odd ? c->grace : 0;
		int rc = mu__evq_reclaim(&o, runs[i].nodes, runs[i].minrt, r, &diag);
		if (rc) {
			fprintf(stderr, "muster eval queues: %s\n",
				diag.msg[0] ? diag.msg : mu_strerror(rc));
			return rc;
		}
		all->nrec = i + 1;
		/* A control passes when it is worse: A does not get its due. */
		bool met = r->held && r->latency_s <= r->bound_s;
		all->rec_ok[i] = runs[i].control ? !met : met;
		if (!c->quiet) {
			print_reclaim(r, all->rec_ok[i]);
			fflush(stdout);
		}
	}
	return MU_OK;
}

/* Writes one shares experiment as a JSON object (names are ours: plain
 * ASCII, no escaping needed). */
static void json_shares(FILE *f, const char *key, const mu__evq_fair_t *s, bool ok)
{
	fprintf(f, "  \"%s\": {\"queues\": [", key);
	for (int32_t i = 0; i < s->nqueues; i++)
		fprintf(f, "%s\n    {\"name\": \"%s\", \"target\": %.6f, \"share\": %.6f, "
			"\"gpu_hours\": %.3f, \"offered_gpus\": %.3f, \"min_backlog\": %d}",
			i ? "," : "", s->q[i].name, s->q[i].target, s->q[i].share,
			s->q[i].gpu_hours, s->q[i].offered_gpus, (int)s->q[i].min_backlog);
	fprintf(f, "],\n    \"jain\": %.6f, \"jain_window_min\": %.6f, "
		"\"jain_window_mean\": %.6f, \"max_deviation\": %.6f,\n"
		"    \"gpu_utilization\": %.6f, \"jobs\": %lld, \"completed\": %lld, "
		"\"preemptions\": %lld, \"cycles\": %lld, \"engine_s\": %.3f, "
		"\"ok\": %s},\n", s->jain, s->jain_win_min, s->jain_win_mean, s->max_dev,
		s->utilization, (long long)s->jobs, (long long)s->completed,
		(long long)s->preemptions, (long long)s->cycles, s->engine_s,
		ok ? "true" : "false");
}

/* Writes every figure that was measured to path; returns an exit code. */
static int write_json(const char *path, const evq_cli_t *c, const evq_all_t *all)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return MU_EXIT_FAIL;
	}
	fprintf(f, "{\n  \"seed\": %llu, \"nodes\": %d, \"span_s\": %.0f, \"load\": %.3f, "
		"\"windows\": %d,\n", (unsigned long long)c->o.seed, (int)c->o.nodes,
		(double)c->o.span / 1000, c->o.load, (int)c->o.windows);
	if (all->ran_fair) {
		json_shares(f, "fairness", &all->fair, all->fair_ok);
		json_shares(f, "fairness_control", &all->fair_ctl, all->fair_ok);
	}
	if (all->ran_weighted) {
		json_shares(f, "weighted", &all->weighted, all->weighted_ok);
		json_shares(f, "weighted_control", &all->weighted_ctl, all->weighted_ok);
	}
	fprintf(f, "  \"reclaim\": [");
	for (int i = 0; i < all->nrec; i++) {
		const mu__evq_reclaim_t *r = &all->rec[i];
		fprintf(f, "%s\n    {\"nodes\": %d, \"min_runtime_s\": %.3f, "
			"\"cycle_interval_s\": %.3f, \"at_s\": %.3f, \"deserved_gpus\": %.0f, "
			"\"held\": %s, \"latency_s\": %.3f, \"cycles\": %lld, "
			"\"engine_ms\": %.3f, \"preemptions\": %lld, \"bound_s\": %.3f, "
			"\"grace_s\": %.3f, \"odd\": %s, \"control\": %s, "
			"\"ok\": %s}", i ? "," : "", (int)r->nodes,
			(double)r->min_runtime / 1000, (double)r->cycle_interval / 1000,
			(double)r->at / 1000, r->deserved_gpus, r->held ? "true" : "false",
			r->latency_s, (long long)r->cycles, r->engine_ms,
			(long long)r->preemptions, r->bound_s, (double)r->grace / 1000,
			r->odd ? "true" : "false", r->control ? "true" : "false",
			all->rec_ok[i] ? "true" : "false");
	}
	fprintf(f, "]\n}\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "muster eval queues: %s: write failed\n", path);
		return MU_EXIT_FAIL;
	}
	return MU_EXIT_OK;
}

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int mu_cmd_eval_queues(int argc, char **argv)
{
	evq_cli_t c = {0};
	int rc = evq_parse(&c, argc, argv);
	if (rc)
		return rc < 0 ? MU_EXIT_OK : rc;
	evq_all_t all;
	memset(&all, 0, sizeof all);
	double t0 = wall_s();
	if (!c.quiet)
		printf("muster eval queues: seed %llu, %d nodes x 8 GPUs, %.4gh simulated\n",
		       (unsigned long long)c.o.seed, (int)c.o.nodes,
		       (double)c.o.span / 3.6e6);
	if (run_shares(&c, &all) != MU_OK || run_reclaim(&c, &all) != MU_OK)
		return MU_EXIT_FAIL;
	bool ok = (!all.ran_fair || all.fair_ok) &&
		  (!all.ran_weighted || all.weighted_ok);
	for (int i = 0; i < all.nrec; i++)
		ok = ok && all.rec_ok[i];
	if (!c.quiet)
		printf("%s (%.1f s)\n", ok ? "all targets met" : "some targets NOT MET",
		       wall_s() - t0);
	if (c.json && (rc = write_json(c.json, &c, &all)) != MU_EXIT_OK)
		return rc;
	if (c.json && !c.quiet)
		printf("json: %s\n", c.json);
	return ok ? MU_EXIT_OK : MU_EXIT_FAIL;
}

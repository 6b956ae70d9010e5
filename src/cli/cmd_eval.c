/*
 * cmd_eval.c - `muster eval openb`: the FGD paper's experiment on the openb
 * trace (protocol in include/muster/eval.h and docs/evaluation.md).
 *
 * Loads the node and pod lists, runs every chosen policy for every chosen
 * seed through src/eval/eval_openb.c, prints a table of the mean allocation
 * at x = 100 and at the end next to the paper's published means, and
 * writes the curves as JSON and an HTML report.  Exit 0 on success, 1 when
 * a run or a write fails, 2 on bad usage or input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "muster/eval.h"
#include "muster/util.h"

#define EVAL_MAX_POLICIES 16
#define EVAL_MAX_SEEDS 1000
#define EVAL_PAPER_DEFAULT "../shared/data/openb/fgd_analysis_allo_discrete.csv"

static const char *const all_policies[] = {
	"random", "dotprod", "clustering", "packing", "bestfit", "fgd", "muster",
};

typedef struct eval_cli {
	const char *nodes, *pods, *json, *report, *paper;
	const mu_score_ops_t *ops[EVAL_MAX_POLICIES];
	size_t nops;
	uint64_t seed0, seed1;
	double tune;
	bool quiet;
	mu_rollout_config_t rollout; /* muster-rollout's and -horizon's */
	mu_rollout_horizon_t horizon; /* muster-horizon's checkpoints */
	int64_t rollout_pick;        /* -1: by rollouts */
	bool late_cands;             /* --late-candidates yes */
} eval_cli_t;

static void eval_usage(FILE *f)
{
	fprintf(f,
		"usage: muster eval openb --nodes FILE --pods FILE\n"
		"           (--policy NAME | --policies A,B,... | --all)\n"
		"           [--seed N | --seeds A-B] [options]\n\n"
		"Reproduces the experiment of the FGD paper (USENIX ATC'23) on the openb\n"
		"trace: per seed the pods are shuffled and resampled up to TUNE x the\n"
		"cluster's GPUs, arrive one at a time and never leave; the allocated share\n"
		"of the GPUs and the fragmentation ratio are recorded at every 1%% of\n"
		"arrived GPU demand.  See docs/evaluation.md.\n\n"
		"  --nodes FILE        openb node list (sn,cpu_milli,memory_mib,gpu,model)\n"
		"  --pods FILE         openb pod list\n"
		"  --policy NAME       one of random, dotprod, clustering, packing,\n"
		"                      bestfit, fgd, muster (muster's default),\n"
		"                      muster-mg (the old name of muster, whose\n"
		"                      rule for large shares it was; not in\n"
		"                      --all), muster-supply (muster with shares\n"
		"                      placed by the cluster's whole free GPUs per\n"
		"                      model; an option, not in --all),\n"
		"                      muster-rollout (muster with its\n"
		"                      settings chosen by rollouts, once per input;\n"
		"                      not in --all), muster-horizon (the same,\n"
		"                      chosen again from the cluster's free\n"
		"                      capacity at checkpoints of the arrivals;\n"
		"                      not in --all)\n"
		"  --policies A,B      several of them\n"
		"  --all               the first seven\n"
		"  --seed N            one seed (default 42)\n"
		"  --seeds A-B         seeds A to B (the paper's: 42-51)\n"
		"  --tune X            arrived demand at the end, x the GPUs (1.3)\n"
		"  --json FILE         write the curves and the free GPUs at the end as JSON\n"
		"  --report FILE       write an HTML report with the curves\n"
		"  --paper FILE        the paper's fgd_analysis_allo_discrete.csv to compare\n"
		"                      with (default %s if it exists;\n"
		"                      its frag_ratio twin is read too)\n"
		"  --rollout-seed N    muster-rollout: the rollouts' own seed (1)\n"
		"  --rollouts N        muster-rollout: rollouts per candidate (8)\n"
		"  --rollout-nodes N   muster-rollout: nodes of a rollout's copy, a\n"
		"                      sample when there are more (2048)\n"
		"  --rollout-pick K    muster-rollout: candidate K (0-9; 0-12 with\n"
		"                      --late-candidates yes) without\n"
		"                      rollouts, to measure each in hindsight\n"
		"  --horizon-from X    muster-horizon: the first checkpoint, arrived\n"
		"                      demand x the GPUs (0.5)\n"
		"  --horizon-every X   muster-horizon: the checkpoints' spacing (0.1)\n"
		"  --judge-at X        muster-horizon: the rollouts' second judgement\n"
		"                      besides the end (1.0; above 1.3: none)\n"
		"  --rollout-tie T     muster-rollout, -horizon: candidates that\n"
		"                      allocate the same are judged by: frag (the\n"
		"                      least fragmentation of the rollouts' end\n"
		"                      state against the mix; the default), a fill\n"
		"                      X above 1.3 (the rollouts go on to X for the\n"
		"                      tie: the most allocated then, then frag), or\n"
		"                      index (the lower candidate: round 14's rule)\n"
		"  --late-candidates yes|no  muster-rollout, -horizon: three more\n"
		"                      candidates (10-12: shares by best fit, the\n"
		"                      large-share rule both ways; whole-GPU pods by\n"
		"                      FGD's points) besides the ten (no)\n"
		"  --quiet             print nothing but errors\n"
		"  -h, --help          this help\n", EVAL_PAPER_DEFAULT);
}

/* Adds the comma-separated policy names of list. */
static int add_policies(eval_cli_t *c, const char *list)
{
	char buf[256];
	if (strlen(list) >= sizeof buf)
		return MU_ERANGE;
	strcpy(buf, list);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		const mu_score_ops_t *ops = mu_score_find(t);
		if (!ops) {
			fprintf(stderr, "muster eval: unknown policy '%s'\n", t);
			return MU_EINVAL;
		}
		if (c->nops == EVAL_MAX_POLICIES)
			return MU_ERANGE;
		c->ops[c->nops++] = ops;
	}
	return MU_OK;
}

/* "A-B" or "A" into the seed range. */
static int parse_seeds(eval_cli_t *c, const char *v)
{
	char a[32];
	const char *dash = strchr(v, '-');
	size_t n = dash ? (size_t)(dash - v) : strlen(v);
	int64_t lo, hi;
	if (n == 0 || n >= sizeof a)
		return MU_EPARSE;
	memcpy(a, v, n);
	a[n] = '\0';
	int rc = mu__parse_int(a, 0, INT64_MAX, &lo);
	if (rc == MU_OK)
		rc = dash ? mu__parse_int(dash + 1, 0, INT64_MAX, &hi) : MU_OK;
	if (rc)
		return rc;
	if (!dash)
		hi = lo;
	if (hi < lo || hi - lo >= EVAL_MAX_SEEDS)
		return MU_ERANGE;
	c->seed0 = (uint64_t)lo;
	c->seed1 = (uint64_t)hi;
	return MU_OK;
}

/* One option with a value; MU_EINVAL for an unknown one. */
static int eval_option(eval_cli_t *c, const char *a, const char *v)
{
	if (!strcmp(a, "--nodes"))
		c->nodes = v;
	else if (!strcmp(a, "--pods"))
		c->pods = v;
	else if (!strcmp(a, "--json"))
		c->json = v;
	else if (!strcmp(a, "--report"))
		c->report = v;
	else if (!strcmp(a, "--paper"))
		c->paper = v;
	else if (!strcmp(a, "--policy") || !strcmp(a, "--policies"))
		return add_policies(c, v);
	else if (!strcmp(a, "--seed") || !strcmp(a, "--seeds"))
		return parse_seeds(c, v);
	else if (!strcmp(a, "--tune"))
		return mu__parse_num(v, 0.01, 10, &c->tune);
	else if (!strcmp(a, "--rollout-seed"))
		return mu__parse_int(v, 0, INT64_MAX, (int64_t *)&c->rollout.seed);
	else if (!strcmp(a, "--rollouts") || !strcmp(a, "--rollout-nodes")) {
		int64_t k;
		int rc = mu__parse_int(v, 1, 1 << 20, &k);
		if (a[9] == 's')
			c->rollout.rollouts = (int32_t)k;
		else
			c->rollout.max_nodes = (int32_t)k;
		return rc;
	} else if (!strcmp(a, "--horizon-from"))
		return mu__parse_num(v, 0, 10, &c->horizon.from);
	else if (!strcmp(a, "--horizon-every"))
		return mu__parse_num(v, 0.001, 10, &c->horizon.every);
	else if (!strcmp(a, "--judge-at"))
		return mu__parse_num(v, 0.01, 100, &c->horizon.judge_at);
	else if (!strcmp(a, "--rollout-tie")) {
		if (!strcmp(v, "index"))
			c->rollout.tie_fill = -1;
		else if (!strcmp(v, "frag"))
			c->rollout.tie_fill = 0;
		else
			return mu__parse_num(v, 1.3001, 100, &c->rollout.tie_fill);
	} else if (!strcmp(a, "--late-candidates")) {
		if (strcmp(v, "yes") && strcmp(v, "no"))
			return MU_EINVAL;
		c->late_cands = !strcmp(v, "yes");
	} else if (!strcmp(a, "--rollout-pick"))
		return mu__parse_int(v, 0, MU_EVAL_MAX_CANDS - 1, &c->rollout_pick);
	else
		return MU_EINVAL;
	return MU_OK;
}

/* Parses argv (argv[0] "eval", argv[1] "openb").  Returns -1 after
 * --help, else an exit code. */
static int eval_parse(eval_cli_t *c, int argc, char **argv)
{
	memset(c, 0, sizeof *c);
	c->seed0 = c->seed1 = 42;
	c->tune = 1.3;
	c->rollout.seed = 1;
	c->rollout_pick = -1;
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		eval_usage(stdout);
		return -1;
	}
	if (argc < 2 || strcmp(argv[1], "openb") != 0) {
		fprintf(stderr, "muster eval: expected 'openb' (see --help)\n");
		return MU_EXIT_USAGE;
	}
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			eval_usage(stdout);
			return -1;
		}
		int rc = MU_OK;
		if (!strcmp(a, "--all")) {
			for (size_t k = 0; k < sizeof all_policies / sizeof *all_policies && !rc; k++)
				rc = add_policies(c, all_policies[k]);
		} else if (!strcmp(a, "--quiet")) {
			c->quiet = true;
		} else if (i + 1 >= argc || strncmp(a, "--", 2) != 0) {
			rc = MU_EINVAL;
		} else {
			rc = eval_option(c, a, argv[++i]);
		}
		if (rc) {
			fprintf(stderr, "muster eval: bad option or value '%s' (see --help)\n", a);
			return MU_EXIT_USAGE;
		}
	}
	if (!c->nodes || !c->pods || c->nops == 0) {
		fprintf(stderr, "muster eval: --nodes, --pods and a policy are required (see --help)\n");
		return MU_EXIT_USAGE;
	}
	return MU_EXIT_OK;
}

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The progress bar's context: which run of how many. */
typedef struct eval_bar {
	const char *policy;
	uint64_t seed;
	size_t run, runs;
} eval_bar_t;

static void eval_progress(void *ctx, double frac)
{
	const eval_bar_t *b = ctx;
	double all = ((double)b->run + frac) / (double)b->runs;
	int width = 30, fill = (int)(all * width + 0.5);
	fprintf(stderr, "\r  [");
	for (int i = 0; i < width; i++)
		fputc(i < fill ? '#' : ' ', stderr);
	fprintf(stderr, "] %3d%%  %-10s seed %-4llu", (int)(all * 100 + 0.5),
		b->policy, (unsigned long long)b->seed);
	fflush(stderr);
}

/* The workload's name: the pods file's base name without ".csv". */
static void workload_name(const char *path, char *buf, size_t len)
{
	const char *b = strrchr(path, '/');
	snprintf(buf, len, "%s", b ? b + 1 : path);
	size_t n = strlen(buf);
	if (n > 4 && !strcmp(buf + n - 4, ".csv"))
		buf[n - 4] = '\0';
}

/* Loads the paper's curves: path (or the default if it exists) and its
 * frag_ratio twin.  A missing default is no error. */
static int load_paper(const eval_cli_t *c, mu_eval_paper_t *alloc,
		      mu_eval_paper_t *frag, bool *have_alloc, bool *have_frag)
{
	const char *path = c->paper;
	*have_alloc = *have_frag = false;
	if (!path && access(EVAL_PAPER_DEFAULT, R_OK) == 0)
		path = EVAL_PAPER_DEFAULT;
	if (!path)
		return MU_EXIT_OK;
	mu_diag_t d = {{0}};
	if (mu_eval_paper_load(path, alloc, &d) != MU_OK) {
		fprintf(stderr, "muster eval: %s\n", d.msg);
		return MU_EXIT_USAGE;
	}
	*have_alloc = true;
	char twin[4096];
	const char *k = strstr(path, "allo_discrete");
	if (!k || strlen(path) + 16 >= sizeof twin)
		return MU_EXIT_OK;
	snprintf(twin, sizeof twin, "%.*sfrag_ratio_discrete%s", (int)(k - path),
		 path, k + strlen("allo_discrete"));
	if (access(twin, R_OK) == 0 && mu_eval_paper_load(twin, frag, &d) == MU_OK)
		*have_frag = true;
	return MU_EXIT_OK;
}

/* Runs every policy for every seed into r->series (allocated here). */
static int run_all(const eval_cli_t *c, const mu_eval_input_t *in,
		   mu_eval_report_t *r)
{
	size_t nseeds = (size_t)(c->seed1 - c->seed0 + 1);
	r->series = calloc(c->nops, sizeof *r->series);
	if (!r->series)
		return MU_EXIT_FAIL;
	eval_bar_t bar = {NULL, 0, 0, c->nops * nseeds};
	bool tty = !c->quiet && isatty(STDERR_FILENO);
	for (size_t p = 0; p < c->nops; p++) {
		mu_eval_series_t *s = &r->series[r->nseries++];
		s->policy = c->ops[p]->name;
		s->runs = calloc(nseeds, sizeof *s->runs);
		if (!s->runs)
			return MU_EXIT_FAIL;
		for (size_t k = 0; k < nseeds; k++, bar.run++) {
			mu_eval_config_t cfg = {.score = c->ops[p],
						.seed = c->seed0 + k,
						.tune = c->tune,
						.rollout = &c->rollout,
						.horizon = &c->horizon};
			bar.policy = s->policy;
			bar.seed = cfg.seed;
			if (tty) {
				cfg.progress = eval_progress;
				cfg.progress_ctx = &bar;
			}
			mu_diag_t d = {{0}};
			int rc = mu_eval_run(in, &cfg, &s->runs[s->nruns++], &d);
			if (rc) {
				fprintf(stderr, "%smuster eval: %s\n", tty ? "\n" : "", d.msg);
				return MU_EXIT_FAIL;
			}
		}
		if (mu_eval_series_mean(s) != MU_OK)
			return MU_EXIT_FAIL;
	}
	if (tty)
		fputc('\n', stderr);
	return MU_EXIT_OK;
}

/* The mean of the paper's curve at x, or NAN. */
static double paper_at(const mu_eval_paper_t *p, const char *w,
		       const char *policy, int32_t x)
{
	const mu_eval_paper_curve_t *pc = mu_eval_paper_find(p, w, policy);
	return pc && x < pc->npoints ? pc->mean[x] : NAN;
}

static void print_num(double v, bool sign)
{
	if (v != v)
		printf("  %7s", "-");
	else
		printf(sign ? "  %+7.2f" : "  %7.2f", v);
}

/* Where the free GPUs are at the end, in GPUs, mean over the seeds: one
 * row per policy ("free POLICY ..."), by the free share of each device
 * (mu_eval_waste_name). */
static void print_waste(const mu_eval_report_t *r)
{
	printf("  free GPUs at the end, by device's free milli-GPU (mean over seeds):\n");
	printf("  %-4s  %-10s  %7s  %7s  %7s  %7s  %7s  %7s\n", "", "policy",
	       "1-99", "100-189", "190-199", "200-499", "500-999", "whole");
	for (size_t i = 0; i < r->nseries; i++) {
		const mu_eval_series_t *s = &r->series[i];
		printf("  free  %-10s", s->policy);
		for (int b = 0; b < MU_EVAL_WASTE_BINS; b++) {
			double sum = 0;
			for (size_t k = 0; k < s->nruns; k++)
				sum += (double)s->runs[k].waste_milli[b];
			print_num(s->nruns ? sum / 1000.0 / (double)s->nruns : 0, false);
		}
		printf("\n");
	}
}

/* The table: mean allocation at x = 100 and at the end, the paper's
 * means and the gaps; then muster's margin over fgd. */
static void print_table(const mu_eval_report_t *r, double secs)
{
	int32_t n = r->series[0].runs[0].npoints, xe = n - 1;
	int32_t xa = xe < 100 ? xe : 100;
	printf("muster eval openb: %s, %lld nodes, %lld GPUs, %lld pods, tune %.2f, %zu seed(s)\n",
	       r->workload, (long long)r->nodes, (long long)r->gpus,
	       (long long)r->pods, r->tune, r->series[0].nruns);
	printf("  %-10s  %7s  %7s  %7s  %7s  %7s  %7s  %7s\n", "policy",
	       "@100", "paper", "gap", "@end", "paper", "gap", "frag");
	const double *fgd = NULL, *mus = NULL;
	for (size_t i = 0; i < r->nseries; i++) {
		const mu_eval_series_t *s = &r->series[i];
		double pa = paper_at(r->paper_alloc, r->workload, s->policy, xa);
		double pe = paper_at(r->paper_alloc, r->workload, s->policy, xe);
		printf("  %-10s", s->policy);
		print_num(s->alloc_mean[xa], false);
		print_num(pa, false);
		print_num(s->alloc_mean[xa] - pa, true);
		print_num(s->alloc_mean[xe], false);
		print_num(pe, false);
		print_num(s->alloc_mean[xe] - pe, true);
		print_num(s->frag_mean[xe], false);
		printf("\n");
		if (!strcmp(s->policy, "fgd"))
			fgd = s->alloc_mean;
		if (!strcmp(s->policy, "muster"))
			mus = s->alloc_mean;
	}
	if (fgd && mus)
		printf("  muster - fgd at x=%d: %+.2f points\n", xe, mus[xe] - fgd[xe]);
	double pf = paper_at(r->paper_alloc, r->workload, "fgd", xe);
	if (mus && pf == pf)
		printf("  muster - the paper's fgd at x=%d: %+.2f points\n", xe, mus[xe] - pf);
	print_waste(r);
	printf("  (x = arrived GPU demand in %% of the cluster's GPUs; runs took %.1f s)\n", secs);
}

/* Writes the report with the JSON or HTML writer; returns an exit code. */
static int write_file(const char *path, const mu_eval_report_t *r, bool html)
{
	FILE *f = mu_cli_create(path);
	return f ? mu_cli_finish("muster eval", path, f, html ? mu_eval_write_html(r, f) : mu_eval_write_json(r, f), false) : MU_EXIT_FAIL;
}

/* Loads the node and pod files into two spec sets and builds the input. */
static int load_input(const eval_cli_t *c, mu_specs_t *ns, mu_specs_t *ps,
		      mu_eval_input_t *in)
{
	mu_diag_t d = {{0}};
	int rc = mu_load_file(c->nodes, NULL, ns, &d);
	if (rc == MU_OK)
		rc = mu_load_file(c->pods, NULL, ps, &d);
	if (rc == MU_OK)
		rc = mu_eval_input_build(ns, ps, in, &d);
	if (rc) {
		fprintf(stderr, "muster eval: %s\n", d.msg);
		return MU_EXIT_USAGE;
	}
	return MU_EXIT_OK;
}

/* Chooses muster-rollout's settings when it is among the policies
 * (mu_eval_input_choose); *secs gets the time it took. */
static int choose_settings(const eval_cli_t *c, mu_eval_input_t *in,
			   double *secs)
{
	bool want = false;
	for (size_t i = 0; i < c->nops; i++)
		want |= c->ops[i] == &mu_score_muster_rollout ||
			c->ops[i] == &mu_score_muster_horizon;
	if (!want)
		return MU_EXIT_OK;
	double t0 = wall_s();
	in->late_cands = c->late_cands;
	int rc = mu_eval_input_choose(in, &c->rollout, (int)c->rollout_pick);
	*secs = wall_s() - t0;
	if (rc) {
		fprintf(stderr, "muster eval: choosing muster-rollout's settings: %s\n",
			mu_strerror(rc));
		return rc == MU_EINVAL ? MU_EXIT_USAGE : MU_EXIT_FAIL;
	}
	return MU_EXIT_OK;
}

/* muster-rollout's candidates, their rollout worth (allocated at the
 * rollouts' end, % of the copies' GPUs, summed over rollouts: only the
 * order matters), the one chosen, and its margin over the paper's fgd. */
static void print_chosen(const eval_cli_t *c, const mu_eval_input_t *in,
			 const mu_eval_report_t *r, double secs)
{
	char buf[96];
	printf("  muster-rollout settings (%s):\n",
	       c->rollout_pick >= 0 ? "picked by --rollout-pick" : "chosen by rollouts");
	for (size_t i = 0; i < in->ncands; i++)
		printf("  %s %2zu  %-56s  %12lld\n", i == in->chosen ? "*" : " ", i,
		       mu_muster_params_format(&in->cands[i], buf, sizeof buf),
		       (long long)in->worth[i]);
	if (c->rollout_pick < 0)
		printf("  (rollout seed %llu, %d rollout(s) of up to %d nodes each, fill 1.3; %.1f s)\n",
		       (unsigned long long)c->rollout.seed,
		       c->rollout.rollouts > 0 ? c->rollout.rollouts : 8,
		       c->rollout.max_nodes > 0 ? c->rollout.max_nodes : 2048, secs);
	int32_t xe = r->series[0].runs[0].npoints - 1;
	double pf = paper_at(r->paper_alloc, r->workload, "fgd", xe);
	for (size_t i = 0; i < r->nseries; i++) {
		const mu_eval_series_t *s = &r->series[i];
		if (!strncmp(s->policy, "muster-", 7) && pf == pf &&
		    (!strcmp(s->policy + 7, "rollout") || !strcmp(s->policy + 7, "horizon")))
			printf("  %s - the paper's fgd at x=%d: %+.2f points\n",
			       s->policy, xe, s->alloc_mean[xe] - pf);
		if (strcmp(s->policy, "muster-horizon"))
			continue;
		char tie_buf[64];
		const char *tie_name = "the lower index";
		if (c->rollout.tie_fill == 0)
			tie_name = "the least fragmentation at the end";
		else if (c->rollout.tie_fill > 0)
			tie_name = (snprintf(tie_buf, sizeof tie_buf,
					     "the most allocated at x=%.0f, then fragmentation",
					     100 * c->rollout.tie_fill), tie_buf);
		printf("  muster-horizon: checkpoints from x=%.0f every %.0f, judged at x=%.0f and the end; per seed: choices/changes, the setting at the end; choices where all candidates tied; at the last choice, candidates tied at the top and the lead over the next worth (milli-GPU over the rollouts); ties judged by %s\n",
		       100 * (c->horizon.from > 0 ? c->horizon.from : 0.5),
		       100 * (c->horizon.every > 0 ? c->horizon.every : 0.1),
		       100 * (c->horizon.judge_at > 0 ? c->horizon.judge_at : 1.0), tie_name);
		for (size_t k = 0; k < s->nruns; k++)
			printf("    seed %llu: %d/%d, %zu; all tied %d, decided by the tie %d; last: top %d, lead %lld\n",
			       (unsigned long long)s->runs[k].seed, s->runs[k].rechoices,
			       s->runs[k].changes, s->runs[k].last_choice, s->runs[k].flat,
			       s->runs[k].broken, s->runs[k].last_top,
			       (long long)s->runs[k].last_lead);
	}
}

static void release_report(mu_eval_report_t *r)
{
	for (size_t i = 0; i < r->nseries; i++) {
		for (size_t k = 0; k < r->series[i].nruns; k++)
			mu_eval_run_release(&r->series[i].runs[k]);
		free(r->series[i].runs);
		free(r->series[i].alloc_mean);
		free(r->series[i].frag_mean);
	}
	free(r->series);
}

int mu_cmd_eval_openb(int argc, char **argv)
{
	eval_cli_t c;
	int rc = eval_parse(&c, argc, argv);
	if (rc)
		return rc < 0 ? MU_EXIT_OK : rc;
	mu_specs_t ns, ps;
	mu_specs_init(&ns);
	mu_specs_init(&ps);
	mu_eval_input_t in;
	memset(&in, 0, sizeof in);
	mu_eval_paper_t pa = {0}, pf = {0};
	bool have_pa = false, have_pf = false;
	char workload[256];
	workload_name(c.pods, workload, sizeof workload);
	mu_eval_report_t r = {.workload = workload, .nodes_file = c.nodes,
			      .pods_file = c.pods, .tune = c.tune};
	rc = load_input(&c, &ns, &ps, &in);
	if (rc == MU_EXIT_OK)
		rc = load_paper(&c, &pa, &pf, &have_pa, &have_pf);
	r.paper_alloc = have_pa ? &pa : NULL;
	r.paper_frag = have_pf ? &pf : NULL;
	r.gpus = in.gpus;
	r.nodes = (int64_t)in.nnodes;
	r.pods = (int64_t)in.npods;
	double choose_s = 0;
	if (rc == MU_EXIT_OK)
		rc = choose_settings(&c, &in, &choose_s);
	double t0 = wall_s();
	if (rc == MU_EXIT_OK)
		rc = run_all(&c, &in, &r);
	r.run_s = wall_s() - t0;
	if (rc == MU_EXIT_OK && !c.quiet) {
		print_table(&r, r.run_s);
		if (in.have_chosen)
			print_chosen(&c, &in, &r, choose_s);
	}
	if (rc == MU_EXIT_OK && c.json && (rc = write_file(c.json, &r, false)) == 0 && !c.quiet)
		printf("json: %s\n", c.json);
	if (rc == MU_EXIT_OK && c.report && (rc = write_file(c.report, &r, true)) == 0 && !c.quiet)
		printf("report: %s\n", c.report);
	release_report(&r);
	mu_eval_paper_release(&pa);
	mu_eval_paper_release(&pf);
	mu_eval_input_release(&in);
	mu_specs_release(&ns);
	mu_specs_release(&ps);
	return rc;
}

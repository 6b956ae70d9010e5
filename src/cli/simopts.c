/*
 * simopts.c - parsing of the simulator options shared by simulate, explain
 * and queues, and loading of their input files.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/simopts.h"
#include "muster/util.h"

void mu_simopts_init(mu_simopts_t *o, const char *cmd)
{
	memset(o, 0, sizeof *o);
	o->cmd = cmd;
	mu_sim_config_defaults(&o->cfg);
	mu_load_opts_defaults(&o->load);
	mu_workload_mix_init(&o->mix);
}

void mu_simopts_help(FILE *f)
{
	fprintf(f,
		"  --cluster FILE          nodes and queues (repeatable)\n"
		"  --workload FILE         jobs, and maybe queues (repeatable)\n"
		"  --seed N                permutes simultaneous arrivals (default 1)\n"
		"  --policy NAME           scoring policy: binpack (default), spread, random,\n"
		"                          dotprod, clustering, packing, bestfit, fgd or\n"
		"                          muster (fgd and muster measure fragmentation\n"
		"                          against the workload's own pod shapes), or\n"
		"                          muster-horizon: muster, its settings chosen again\n"
		"                          by rollouts as the GPUs fill, from the pods that\n"
		"                          arrived so far (docs/policy.md); muster-rollout\n"
		"                          exists only in muster eval openb\n"
		"  --horizon-from SHARE    muster-horizon: the first checkpoint, a share of\n"
		"                          the GPUs allocated (0.5)\n"
		"  --horizon-every SHARE   muster-horizon: the checkpoints' spacing (0.1)\n"
		"  --horizon-min-interval DUR  muster-horizon: at most one choice per DUR of\n"
		"                          simulated time (0)\n"
		"  --horizon-rollouts N    muster-horizon: rollouts per candidate (8)\n"
		"  --cycle-interval DUR    cycle every DUR (e.g. 10s); default: at every event\n"
		"  --no-preemption         higher priorities never evict lower ones\n"
		"  --no-reclaim            queues never take back resources from others\n"
		"  --min-runtime DUR       a job runs this long before it can be preempted (60s)\n"
		"  --reclaim-cooldown DUR  a queue loses jobs to reclaim at most once per DUR (0)\n"
		"  --starvation-after DUR  a queue's head job waiting longer blocks the jobs\n"
		"                          behind it (default 0 = never)\n"
		"  --usage-half-life DUR   time-decayed fairness: queues that used much\n"
		"                          lately get less above their deserved quota\n"
		"                          (default 0 = off)\n"
		"  --checkpoint-cost DUR   work a suspended or moved job loses each time (0)\n"
		"  --backfill MODE         reserve (default): the top blocked jobs hold\n"
		"                          reservations and others start only where they\n"
		"                          cannot delay them; greedy: anything that fits;\n"
		"                          none: strict order (FIFO)\n"
		"  --reservations N        how many blocked jobs get one (4; 1 = EASY)\n"
		"  --order ORDER           jobs in a queue: jct (default: least attained GPU\n"
		"                          time first for preemptible jobs, with a minimum\n"
		"                          run and gangs spared), priority (then age), sjf\n"
		"                          (shortest estimate first), or las (least attained\n"
		"                          GPU time first, preempting, as Tiresias)\n"
		"  --jct-levels GPUH       jct: the first level of attained GPU-hours (100);\n"
		"                          lower favours short jobs more and evicts more\n"
		"  --jct-min-run DUR       jct: a job runs this long after each start before\n"
		"                          its level lets it be preempted (1h)\n"
		"  --default-runtime DUR   estimate when a job declares none and there is\n"
		"                          no history yet (1h)\n"
		"  --no-consolidation      never move pods to make room for a gang\n"
		"  --max-jobs N            Philly: keep the first N jobs of the window\n"
		"  --window FROM:TO        Philly: keep jobs submitted in [FROM, TO) (durations)\n"
		"  --gpus-per-node N       Philly: GPUs per pod when splitting gangs (default 8)\n"
		"  --quiet                 print nothing but errors\n"
		"  -h, --help              this help\n");
}

/* Parses the window "FROM:TO" into the load options. */
static int parse_window(const char *s, mu_load_opts_t *o)
{
	const char *colon = strchr(s, ':');
	if (!colon)
		return MU_EPARSE;
	char from[64];
	size_t n = (size_t)(colon - s);
	if (n == 0 || n >= sizeof from)
		return MU_EPARSE;
	memcpy(from, s, n);
	from[n] = '\0';
	mu_time_t a, b;
	if (mu__parse_duration(from, &a) || mu__parse_duration(colon + 1, &b) || b <= a)
		return MU_EPARSE;
	o->from_s = a / 1000;
	o->to_s = b / 1000;
	return MU_OK;
}

/* Options with a value.  Returns MU_OK, or an error for a bad value; sets
 * *known to false when the option is not one of these. */
static int parse_valued(mu_simopts_t *o, const char *a, const char *v, bool *known)
{
	mu_engine_config_t *ec = &o->cfg.engine;
	int64_t n;
	int rc = MU_OK;
	*known = true;
	if (!strcmp(a, "--cluster") || !strcmp(a, "--workload")) {
		bool cl = a[2] == 'c';
		int *cnt = cl ? &o->ncluster : &o->nworkload;
		if (*cnt == MU_CLI_MAX_FILES)
			return MU_ELIMIT;
		(cl ? o->cluster : o->workload)[(*cnt)++] = v;
	} else if (!strcmp(a, "--seed")) {
		if ((rc = mu__parse_int(v, 0, INT64_MAX, &n)) == MU_OK)
			o->cfg.seed = (uint64_t)n;
	} else if (!strcmp(a, "--policy")) {
		ec->score = mu_score_find(v);
		rc = ec->score ? MU_OK : MU_EINVAL;
	} else if (!strcmp(a, "--cycle-interval")) {
		rc = mu__parse_duration(v, &o->cfg.cycle_interval);
	} else if (!strcmp(a, "--min-runtime")) {
		rc = mu__parse_duration(v, &ec->min_runtime);
	} else if (!strcmp(a, "--reclaim-cooldown")) {
		rc = mu__parse_duration(v, &ec->reclaim_cooldown);
	} else if (!strcmp(a, "--starvation-after")) {
		rc = mu__parse_duration(v, &ec->starvation_after);
	} else if (!strcmp(a, "--usage-half-life")) {
		rc = mu__parse_duration(v, &ec->usage_half_life);
	} else if (!strcmp(a, "--backfill")) {
		if (!strcmp(v, "reserve"))
			ec->backfill = MU_BACKFILL_RESERVE;
		else if (!strcmp(v, "greedy"))
			ec->backfill = MU_BACKFILL_GREEDY;
		else if (!strcmp(v, "none"))
			ec->backfill = MU_BACKFILL_NONE;
		else
			rc = MU_EINVAL;
	} else if (!strcmp(a, "--order")) {
		int ord = mu_order_find(v);
		if (ord >= 0)
			ec->order = (mu_order_t)ord;
		else
			rc = MU_EINVAL;
	} else if (!strcmp(a, "--jct-levels")) {
		rc = mu__parse_num(v, 1e-6, 1e12, &ec->jct_base_gpu_hours);
	} else if (!strcmp(a, "--jct-min-run")) {
		rc = mu__parse_duration(v, &ec->jct_min_run);
	} else if (!strcmp(a, "--reservations")) {
		if ((rc = mu__parse_int(v, 0, 1000, &n)) == MU_OK)
			ec->reservations = (int32_t)n;
	} else if (!strcmp(a, "--default-runtime")) {
		rc = mu__parse_duration(v, &ec->default_runtime);
	} else if (!strcmp(a, "--checkpoint-cost")) {
		rc = mu__parse_duration(v, &o->cfg.checkpoint_cost);
	} else if (!strcmp(a, "--horizon-from") || !strcmp(a, "--horizon-every")) {
		o->hz_opt = a;
		rc = mu__parse_num(v, 0, 1, a[10] == 'f' ? &o->hz.at.from : &o->hz.at.every);
	} else if (!strcmp(a, "--horizon-min-interval")) {
		o->hz_opt = a;
		rc = mu__parse_duration(v, &o->hz.min_interval);
	} else if (!strcmp(a, "--horizon-rollouts")) {
		o->hz_opt = a;
		if ((rc = mu__parse_int(v, 1, 1000, &n)) == MU_OK)
			o->hz.rollout.rollouts = (int32_t)n;
	} else if (!strcmp(a, "--horizon") || !strcmp(a, "--at")) {
		rc = mu__parse_duration(v, &o->cfg.horizon);
	} else if (!strcmp(a, "--max-jobs")) {
		rc = mu__parse_int(v, 1, INT64_MAX, &o->load.max_jobs);
	} else if (!strcmp(a, "--window")) {
		rc = parse_window(v, &o->load);
	} else if (!strcmp(a, "--gpus-per-node")) {
		if ((rc = mu__parse_int(v, 1, MU_MAX_GPUS, &n)) == MU_OK)
			o->load.gpus_per_node = (int32_t)n;
	} else if (!strcmp(a, "--json")) {
		o->json = v;
	} else if (!strcmp(a, "--report")) {
		o->report = v;
	} else {
		*known = false;
	}
	return rc;
}

int mu_simopts_parse(mu_simopts_t *o, int argc, char **argv, void (*help)(FILE *f))
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			help(stdout);
			return -1;
		} else if (!strcmp(a, "--quiet")) {
			o->quiet = true;
		} else if (!strcmp(a, "--no-preemption")) {
			o->cfg.engine.preemption = false;
		} else if (!strcmp(a, "--no-reclaim")) {
			o->cfg.engine.reclaim = false;
		} else if (!strcmp(a, "--no-consolidation")) {
			o->cfg.engine.consolidate = false;
		} else if (a[0] != '-') {
			if (o->positional) {
				fprintf(stderr, "muster %s: unexpected argument '%s' (see --help)\n", o->cmd, a);
				return MU_EXIT_USAGE;
			}
			o->positional = a;
		} else {
			bool known;
			if (i + 1 >= argc) {
				fprintf(stderr, "muster %s: %s needs a value (see --help)\n", o->cmd, a);
				return MU_EXIT_USAGE;
			}
			int rc = parse_valued(o, a, argv[i + 1], &known);
			if (!known) {
				fprintf(stderr, "muster %s: unknown option '%s' (see --help)\n", o->cmd, a);
				return MU_EXIT_USAGE;
			}
			if (rc) {
				fprintf(stderr, "muster %s: bad value for %s: '%s' (see --help)\n",
					o->cmd, a, argv[i + 1]);
				return MU_EXIT_USAGE;
			}
			i++;
		}
	}
	if (!o->ncluster || !o->nworkload) {
		fprintf(stderr, "muster %s: needs --cluster FILE and --workload FILE (see --help)\n", o->cmd);
		return MU_EXIT_USAGE;
	}
	return 0;
}

/* Prints one muster-horizon choice to stderr. */
static void horizon_log(void *ctx, const mu_horizon_choice_t *c)
{
	const mu_simopts_t *o = ctx;
	char line[256];
	if (!o->quiet)
		fprintf(stderr, "muster %s: muster-horizon at %.3fs: %s\n", o->cmd,
			(double)c->at / 1000.0, mu_horizon_format(c, line, sizeof line));
}

/* Refuses muster-rollout and --horizon-* options without muster-horizon;
 * for muster-horizon, starts its state and hands it to the simulator.
 * Returns an exit code. */
static int horizon_setup(mu_simopts_t *o)
{
	const mu_score_ops_t *ops = o->cfg.engine.score;
	if (ops == &mu_score_muster_rollout) {
		fprintf(stderr, "muster %s: --policy muster-rollout chooses muster's settings once "
			"from the whole workload, which only muster eval openb knows in advance; "
			"use muster-horizon (chosen from the pods that arrived so far) or muster\n",
			o->cmd);
		return MU_EXIT_USAGE;
	}
	if (ops != &mu_score_muster_horizon) {
		if (o->hz_opt) {
			fprintf(stderr, "muster %s: %s applies to --policy muster-horizon only\n",
				o->cmd, o->hz_opt);
			return MU_EXIT_USAGE;
		}
		return MU_EXIT_OK;
	}
	char why[160];
	if (mu_horizon_init(&o->horizon, &o->hz, why, sizeof why) != MU_OK) {
		fprintf(stderr, "muster %s: muster-horizon: %s\n", o->cmd, why);
		return MU_EXIT_USAGE;
	}
	o->hz_live = true;
	o->mix.muster = &o->horizon.params;
	return MU_EXIT_OK;
}

int mu_simopts_load(mu_simopts_t *o, mu_specs_t *sp)
{
	mu_diag_t diag = {{0}};
	int rc;
	for (int i = 0; i < o->ncluster + o->nworkload; i++) {
		const char *f = i < o->ncluster ? o->cluster[i] : o->workload[i - o->ncluster];
		if (mu_load_file(f, &o->load, sp, &diag) != MU_OK) {
			fprintf(stderr, "muster %s: %s\n", o->cmd, diag.msg);
			return MU_EXIT_USAGE;
		}
	}
	if (mu_specs_validate(sp, &diag) != MU_OK) {
		fprintf(stderr, "muster %s: %s\n", o->cmd, diag.msg);
		return MU_EXIT_USAGE;
	}
	if (sp->nnodes == 0) {
		fprintf(stderr, "muster %s: no nodes in the cluster files\n", o->cmd);
		return MU_EXIT_USAGE;
	}
	const mu_score_ops_t *ops = o->cfg.engine.score;
	if ((rc = horizon_setup(o)) != MU_EXIT_OK)
		return rc;
	if (ops && (ops->flags & MU_SCORE_MIX)) {
		if ((rc = mu_sim_workload_mix(sp, &o->mix))) {
			fprintf(stderr, "muster %s: the workload's pod shapes for --policy %s: %s\n",
				o->cmd, ops->name, rc == MU_ERANGE ? "more than 63 GPU models" :
				mu_strerror(rc));
			return MU_EXIT_USAGE;
		}
		o->cfg.engine.score_state = &o->mix;
	}
	if (o->hz_live) {
		o->cfg.muster_horizon = &o->horizon;
		o->cfg.on_choice = horizon_log;
		o->cfg.on_choice_ctx = o;
	}
	return MU_EXIT_OK;
}

void mu_simopts_release(mu_simopts_t *o)
{
	if (o->hz_live)
		mu_horizon_release(&o->horizon);
	o->hz_live = false;
	mu_workload_mix_release(&o->mix);
}

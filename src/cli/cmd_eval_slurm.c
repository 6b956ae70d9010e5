/*
 * cmd_eval_slurm.c - `muster eval slurm`: the same Philly-derived jobs
 * through a real Slurm's backfill (on loopback, started and stopped here)
 * and through muster's simulator (protocol in docs/evaluation.md,
 * "Slurm").
 *
 * Loads the trace, lets src/eval build the workload and run muster and
 * each Slurm variant, prints the protocol, the tables and the verdict on
 * the goal; --report writes the HTML page.  A progress line goes to stderr
 * on a terminal.  Exit 0 when the goal is met, 1 when it is not or a run
 * fails, 2 on bad usage or input, 3 when Slurm is not installed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "muster/eval_slurm.h"
#include "muster/util.h"
#include "muster/report.h"

#define EVS_DEFAULT_TRACE "../shared/data/philly/philly.csv"
#define EVS_EXIT_NO_SLURM 3

typedef struct evs_cli {
	mu_slurm_opts_t o;
	const char *trace, *report;
	bool quiet, tty, bf_given;
} evs_cli_t;

static void evs_usage(FILE *f)
{
	fprintf(f,
		"usage: muster eval slurm [options]\n\n"
		"Runs the same Philly-derived jobs through a real Slurm (slurmctld and one\n"
		"slurmd per node on 127.0.0.1, in a temporary directory, stopped at the end)\n"
		"and through muster's simulator, with time compressed, and compares\n"
		"utilization, waits by gang size, JCT, backfilled jobs and start estimates\n"
		"(docs/evaluation.md, \"Slurm\").  Needs Slurm's programs (slurm-wlm).\n\n"
		"  --trace FILE        the trace (" EVS_DEFAULT_TRACE ")\n"
		"  --hours N           trace window in hours (3): the one with the most\n"
		"                      multi-node gangs (ties: most jobs) unless --from\n"
		"  --from DUR          a fixed window start after the trace's first row\n"
		"  --load X            offered load the cluster is sized for (0.9)\n"
		"  --cap DUR           cap job durations at DUR (2h)\n"
		"  --compress X        trace seconds per real second (60)\n"
		"  --bf PARAMS         Slurm SchedulerParameters of one run; repeat for\n"
		"                      several (default: bf_resolution 60 and 1, each\n"
		"                      with bf_interval=1,bf_window=120,bf_continue,\n"
		"                      bf_max_job_test=1000)\n"
		"  --timeout DUR       give up on a Slurm run after DUR of real time\n"
		"                      (default: 3 x the arrival window + 2m)\n"
		"  --muster-only       skip Slurm\n"
		"  --keep              keep Slurm's directory (configuration, logs)\n"
		"  --report FILE       an HTML report with charts\n"
		"  --quiet             print nothing but errors\n"
		"  -h, --help          this help\n\n"
		"Exit: 0 goal met, 1 not met or a run failed, 2 bad usage or input,\n"
		"3 Slurm is not installed.\n");
}

static int evs_option(void *ctx, const char *a, const char *v)
{
	evs_cli_t *c = ctx;
	mu_slurm_opts_t *o = &c->o;
	mu_time_t t;
	int rc = MU_OK;
	if (!strcmp(a, "--trace")) {
		c->trace = v;
	} else if (!strcmp(a, "--report")) {
		c->report = v;
	} else if (!strcmp(a, "--hours")) {
		rc = mu__parse_num(v, 0.01, 24 * 365, &o->hours);
	} else if (!strcmp(a, "--load")) {
		rc = mu__parse_num(v, 0.05, 10, &o->load);
	} else if (!strcmp(a, "--cap")) {
		rc = mu__parse_duration(v, &o->cap);
	} else if (!strcmp(a, "--compress")) {
		rc = mu__parse_num(v, 1, 100000, &o->compress);
	} else if (!strcmp(a, "--from")) {
		if ((rc = mu__parse_duration(v, &t)) == MU_OK)
			o->from_s = t / 1000;
	} else if (!strcmp(a, "--timeout")) {
		if ((rc = mu__parse_duration(v, &t)) == MU_OK)
			o->timeout_s = (double)t / 1000;
	} else if (!strcmp(a, "--bf")) {
		if (!c->bf_given)
			o->nvariants = 0;
		c->bf_given = true;
		if (o->nvariants >= MU_SLURM_MAX_VARIANTS || !*v || strpbrk(v, " \n\t#"))
			return MU_ERANGE;
		o->variants[o->nvariants++] = v;
	} else {
		rc = MU_EINVAL;
	}
	return rc;
}

/* Parses argv; -1 after help, 0, or an exit code. */
static int evs_parse(evs_cli_t *c, int argc, char **argv)
{
	mu_slurm_opts_defaults(&c->o);
	c->trace = EVS_DEFAULT_TRACE;
	const mu_cli_flag_t flags[] = {
		{"--quiet", &c->quiet},
		{"--keep", &c->o.keep},
		{"--muster-only", &c->o.skip_slurm},
	};
	const mu_cli_parser_t parser = {"muster eval slurm", evs_usage, flags,
					 sizeof flags / sizeof *flags, evs_option, c};
	return mu_cli_parse(&parser, argc, argv);
}

static void evs_progress(void *ctx, const char *line, bool final)
{
	(void)ctx;
	fprintf(stderr, "\r  %-110.110s", line);
	if (final)
		fputc('\n', stderr);
	fflush(stderr);
}

/* The goal: muster's default at or above the best Slurm's utilization,
 * multi-node gangs' p99 wait and 1-GPU jobs' p50 and p99 waits no longer,
 * within one real second (Slurm's timestamps have whole seconds; that is a
 * trace minute at 60 to 1).
 * Prints it; true when met. */
static bool evs_goal(const mu_slurm_eval_t *ev, bool quiet)
{
	if (ev->best_slurm < 0 || ev->nsides < 1)
		return false;
	const mu_slurm_side_t *m = &ev->sides[0], *s = &ev->sides[ev->best_slurm];
	double slack = ev->opts.compress; /* one real second, in trace seconds */
	bool util = m->util >= s->util;
	bool big = m->cls[3].started == 0 || m->cls[3].p99_s <= s->cls[3].p99_s + slack;
	bool small = m->cls[0].p50_s <= s->cls[0].p50_s + slack &&
		     m->cls[0].p99_s <= s->cls[0].p99_s + slack;
	char a[32], b[32], c1[32], d[32], e[32], f[32];
	if (!quiet) {
		mu__fmt_duration(a, sizeof a, m->cls[3].p99_s);
		mu__fmt_duration(b, sizeof b, s->cls[3].p99_s);
		mu__fmt_duration(c1, sizeof c1, m->cls[0].p50_s);
		mu__fmt_duration(d, sizeof d, s->cls[0].p50_s);
		mu__fmt_duration(e, sizeof e, m->cls[0].p99_s);
		mu__fmt_duration(f, sizeof f, s->cls[0].p99_s);
		printf("\ngoal (muster default against the best Slurm, %s):\n"
		       "  utilization %.1f%% vs %.1f%%: %s\n"
		       "  multi-node gangs' p99 wait %s vs %s (within Slurm's 1 s): %s\n"
		       "  1-GPU wait p50 %s vs %s, p99 %s vs %s (within Slurm's 1 s): %s\n",
		       s->label, m->util * 100, s->util * 100, util ? "OK" : "NOT MET", a, b,
		       big ? "OK" : "NOT MET", c1, d, e, f, small ? "OK" : "NOT MET");
	}
	return util && big && small;
}

static int evs_write(const char *path, const mu_slurm_eval_t *ev, bool quiet)
{
	FILE *f = mu_cli_create(path);
	return f ? mu_cli_finish("muster eval slurm", path, f, mu_slurm_write_html(ev, f), !quiet) : MU_EXIT_FAIL;
}

/* Builds and runs everything into ev (the caller releases it). */
static int evs_run(evs_cli_t *c, const mu_specs_t *all, mu_slurm_eval_t *ev)
{
	mu_specs_t sp;
	mu_diag_t diag = {{0}};
	mu_specs_init(&sp);
	int rc = mu_slurm_eval_init(ev, all, &c->o, &sp, &diag);
	int code = rc == MU_EINVAL ? MU_EXIT_USAGE : rc ? MU_EXIT_FAIL : MU_EXIT_OK;
	ev->trace = c->trace;
	if (rc == MU_OK) {
		if (!c->quiet) {
			mu_slurm_write_text_protocol(ev, stdout);
			fflush(stdout);
		}
		rc = mu_slurm_eval_muster(ev, &sp, &diag);
		if (rc == MU_OK && !c->o.skip_slurm)
			rc = mu_slurm_eval_slurm(ev, &diag);
		code = rc == MU_ENOENT ? EVS_EXIT_NO_SLURM : rc ? MU_EXIT_FAIL : MU_EXIT_OK;
	}
	if (rc)
		fprintf(stderr, "muster eval slurm: %s\n", diag.msg[0] ? diag.msg : mu_strerror(rc));
	mu_specs_release(&sp);
	return code;
}

int mu_cmd_eval_slurm(int argc, char **argv)
{
	evs_cli_t c;
	memset(&c, 0, sizeof c);
	int rc = evs_parse(&c, argc, argv);
	if (rc)
		return rc < 0 ? MU_EXIT_OK : rc;
	if (!c.quiet && isatty(STDERR_FILENO)) {
		c.o.progress = evs_progress;
		c.o.progress_ctx = &c;
	}
	const char *miss = c.o.skip_slurm ? NULL : mu_slurm_missing();
	if (miss) {
		fprintf(stderr, "muster eval slurm: Slurm is not installed here (%s not found; "
			"scripts/install-deps.sh installs slurm-wlm)\n", miss);
		return EVS_EXIT_NO_SLURM;
	}
	mu_specs_t all;
	mu_load_opts_t lo;
	mu_diag_t diag = {{0}};
	mu_specs_init(&all);
	mu_load_opts_defaults(&lo);
	lo.gpus_per_node = c.o.gpus_per_node;
	if (mu_load_file(c.trace, &lo, &all, &diag) != MU_OK) {
		fprintf(stderr, "muster eval slurm: %s\n", diag.msg);
		mu_specs_release(&all);
		return MU_EXIT_USAGE;
	}
	mu_slurm_eval_t ev;
	int code = evs_run(&c, &all, &ev);
	if (code == MU_EXIT_OK) {
		if (!c.quiet)
			mu_slurm_write_text_tables(&ev, stdout);
		bool ok = c.o.skip_slurm || evs_goal(&ev, c.quiet);
		if (!c.quiet && !c.o.skip_slurm)
			printf("%s\n", ok ? "goal met" : "goal NOT MET");
		code = ok ? MU_EXIT_OK : MU_EXIT_FAIL;
		if (c.report && evs_write(c.report, &ev, c.quiet))
			code = MU_EXIT_FAIL;
	}
	mu_slurm_eval_release(&ev);
	mu_specs_release(&all);
	return code;
}

/*
 * cmd_eval_philly.c - `muster eval philly`: backfill and JCT on the
 * Microsoft Philly trace (protocol in docs/evaluation.md, "Philly:
 * backfill and JCT").
 *
 * Loads the trace, lets src/eval/eval_philly.c pick the window, size the
 * cluster and run every policy, and prints the protocol, one table per
 * experiment and whether issue 5's goal is met; --json and --report write
 * every figure.  A progress line per run goes to stderr on a terminal.
 * Exit 0 when the goal is met, 1 when it is not or a run fails, 2 on bad
 * usage or input.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "muster/eval_philly.h"
#include "muster/util.h"
#include "muster/report.h"

#define EVP_DEFAULT_TRACE "../shared/data/philly/philly.csv"
#define EVP_UTIL_SLACK 0.01 /* goal: utilization within 1 point of EASY's */

typedef struct evp_cli {
	mu_philly_opts_t o;
	const char *trace, *json, *report;
	bool quick, quiet, tty;
} evp_cli_t;

static void evp_usage(FILE *f)
{
	fprintf(f,
		"usage: muster eval philly [options]\n\n"
		"Replays the busiest window of the Microsoft Philly trace on a cluster sized\n"
		"for a target offered load, one queue, and compares (docs/evaluation.md):\n"
		"  1. backfill and large jobs: FIFO, priority without reservations, EASY\n"
		"     backfill and muster's default, with history estimates and with jobs\n"
		"     declaring their true duration;\n"
		"  2. JCT: FIFO, SJF with known durations (a bound), Tiresias-style least\n"
		"     attained service, muster's default and muster with arrival order\n"
		"     (its default before issue 21), and the trade-off curve of muster's\n"
		"     JCT levels (jct_base_gpu_hours from 10 to 1000 GPU-hours).\n"
		"Exits 0 when issue 5's goal (large jobs' waits, utilization) is met.\n\n"
		"  --trace FILE            the trace (" EVP_DEFAULT_TRACE ")\n"
		"  --days N                window length in days (7)\n"
		"  --load X                target offered load (0.9)\n"
		"  --cap DUR               cap job durations at DUR (48h; 0 = no cap)\n"
		"  --from DUR              a fixed window start after the trace's first row\n"
		"                          (default: the busiest window)\n"
		"  --checkpoint-cost DUR   work a suspended or moved job loses (30s)\n"
		"  --seed N                simulation seed (1)\n"
		"  --quick                 a 6-hour window, durations capped at 6h\n"
		"  --json FILE             every figure as JSON\n"
		"  --report FILE           an HTML report with charts\n"
		"  --quiet                 print nothing but errors\n"
		"  -h, --help              this help\n");
}

/* One option with a value; MU_EINVAL if unknown, else a parse result. */
static int evp_option(void *ctx, const char *a, const char *v)
{
	evp_cli_t *c = ctx;
	mu_philly_opts_t *o = &c->o;
	int64_t n;
	mu_time_t t;
	int rc = MU_OK;
	if (!strcmp(a, "--trace")) {
		c->trace = v;
	} else if (!strcmp(a, "--json")) {
		c->json = v;
	} else if (!strcmp(a, "--report")) {
		c->report = v;
	} else if (!strcmp(a, "--days")) {
		rc = mu__parse_num(v, 0.01, 3650, &o->days);
	} else if (!strcmp(a, "--load")) {
		rc = mu__parse_num(v, 0.05, 10, &o->load);
	} else if (!strcmp(a, "--cap")) {
		rc = mu__parse_duration(v, &o->cap);
	} else if (!strcmp(a, "--from")) {
		if ((rc = mu__parse_duration(v, &t)) == MU_OK)
			o->from_s = t / 1000;
	} else if (!strcmp(a, "--checkpoint-cost")) {
		rc = mu__parse_duration(v, &o->checkpoint_cost);
	} else if (!strcmp(a, "--seed")) {
		if ((rc = mu__parse_int(v, 0, INT64_MAX, &n)) == MU_OK)
			o->seed = (uint64_t)n;
	} else {
		rc = MU_EINVAL;
	}
	return rc;
}

/* Parses argv; returns -1 after help, 0, or an exit code.  --quick sets
 * the base protocol first, so that other options refine it. */
static int evp_parse(evp_cli_t *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		c->quick = c->quick || !strcmp(argv[i], "--quick");
	if (c->quick)
		mu_philly_opts_quick(&c->o);
	else
		mu_philly_opts_defaults(&c->o);
	c->trace = EVP_DEFAULT_TRACE;
	const mu_cli_flag_t flags[] = {
		{"--quick", &c->quick},
		{"--quiet", &c->quiet},
	};
	const mu_cli_parser_t parser = {"muster eval philly", evp_usage, flags,
					 sizeof flags / sizeof *flags, evp_option, c};
	return mu_cli_parse(&parser, argc, argv);
}

/* The progress line of run i, rewritten in place on a terminal. */
static void evp_progress(void *ctx, size_t i, size_t n, const char *label, double frac)
{
	(void)ctx;
	fprintf(stderr, "\r  [%2zu/%zu] %-50s %3.0f%%", i + 1, n, label, frac * 100);
	if (frac >= 1)
		fputc('\n', stderr);
	fflush(stderr);
}

static const char *dur(char *buf, size_t n, double s)
{
	mu__fmt_duration(buf, n, s);
	return buf;
}

/* The window, the cluster and the load. */
static void print_protocol(const evp_cli_t *c, const mu_philly_eval_t *ev, size_t loaded)
{
	const mu_philly_window_t *w = &ev->win;
	char a[32], b[32];
	printf("muster eval philly: %s, %zu jobs with GPUs\n", c->trace, loaded);
	printf("window: trace hours %.1f to %.1f (day %.2f to %.2f after the first row)%s\n",
	       w->from_s / 3600.0, w->to_s / 3600.0, w->from_s / 86400.0, w->to_s / 86400.0,
	       c->o.from_s >= 0 ? "" : ", the busiest by capped GPU-hours of arrivals");
	printf("  %lld jobs (%lld durations capped at %s), %lld of >= %d GPUs, "
	       "%lld of 1 GPU, largest %d GPUs\n", (long long)w->jobs, (long long)w->capped,
	       c->o.cap > 0 ? dur(a, sizeof a, (double)c->o.cap / 1000) : "-",
	       (long long)w->large_jobs, MU_PHILLY_LARGE_GPUS, (long long)w->one_gpu_jobs,
	       (int)w->max_gpus);
	printf("  %.0f GPU-hours offered (%.0f before the cap)\n", (double)w->work / 3.6e6,
	       (double)w->raw_work / 3.6e6);
	printf("cluster: %d nodes x %d GPUs = %lld GPUs; offered load %.3f at this size,\n"
	       "  arrival times scaled by %.4f: offered load %.3f over %s\n",
	       (int)w->nodes, (int)c->o.gpus_per_node, (long long)w->gpus, w->offered_raw,
	       w->scale, w->offered, dur(b, sizeof b, (double)w->span / 1000));
	printf("one queue, checkpoint cost %s, seed %llu\n",
	       dur(a, sizeof a, (double)c->o.checkpoint_cost / 1000),
	       (unsigned long long)c->o.seed);
	fflush(stdout);
}

/* Experiment 1: one row per run of the backfill table. */
static void print_backfill(const mu_philly_eval_t *ev)
{
	size_t rows[MU_PHILLY_NRUNS], n = mu_philly_backfill_rows(ev, rows, MU_PHILLY_NRUNS);
	char a[32], b[32], c1[32], d[32];
	printf("\nbackfill and large jobs (utilization while jobs arrive; waits)\n");
	printf("  %-26s %-9s %6s %11s %11s %11s %11s %8s %6s\n", "policy", "estimates",
	       "util", ">=16 mean", ">=16 p99", "1-GPU mean", "all mean", "evicted", "moved");
	for (size_t i = 0; i < n; i++) {
		const mu_philly_run_t *r = &ev->runs[rows[i]];
		printf("  %-26s %-9s %5.1f%% %11s %11s %11s %11s %8lld %6lld\n",
		       mu_philly_policy_label(r->policy), r->declared ? "declared" : "history",
		       r->util_window * 100, dur(a, sizeof a, r->large.mean_s),
		       dur(b, sizeof b, r->large.p99_s), dur(c1, sizeof c1, r->one.mean_s),
		       dur(d, sizeof d, r->wait_mean_s), (long long)r->preemptions,
		       (long long)r->moves);
	}
}

/* Experiment 2: the JCT table. */
static void print_jct(const mu_philly_eval_t *ev)
{
	size_t rows[MU_PHILLY_NRUNS], n = mu_philly_jct_rows(ev, rows, MU_PHILLY_NRUNS);
	char a[32], b[32], c1[32], d[32], e[32];
	printf("\nJCT (all jobs run to completion)\n");
	printf("  %-26s %-9s %9s %9s %9s %9s %9s %6s %7s %6s %5s\n", "policy", "estimates",
	       "mean JCT", "p50 JCT", "p99 JCT", ">=16 p99", ">=16 JCT", "util",
	       "evicted", "jobs", "moved");
	printf("  %-26s %-9s %9s %9s %9s %9s %9s %6s %7s %6s %5s\n", "", "", "", "", "",
	       "wait", "mean", "", "pods", "", "pods");
	for (size_t i = 0; i < n; i++) {
		const mu_philly_run_t *r = &ev->runs[rows[i]];
		printf("  %-26s %-9s %9s %9s %9s %9s %9s %5.1f%% %7lld %6lld %5lld\n",
		       mu_philly_policy_label(r->policy), r->declared ? "declared" : "history",
		       dur(a, sizeof a, r->jct_mean_s), dur(b, sizeof b, r->jct_p50_s),
		       dur(c1, sizeof c1, r->jct_p99_s), dur(d, sizeof d, r->large.p99_s),
		       dur(e, sizeof e, r->large.jct_mean_s), r->util_window * 100,
		       (long long)r->preemptions, (long long)r->jobs_preempted,
		       (long long)r->moves);
	}
}

/* The trade-off curve: muster at each base of its JCT levels. */
static void print_tradeoff(const mu_philly_eval_t *ev)
{
	char a[32], b[32], c1[32], d[32];
	printf("\nJCT trade-off: muster (history estimates) by its first JCT level "
	       "(jct_base_gpu_hours; default 100)\n");
	printf("  %-12s %9s %9s %9s %9s %6s %7s %6s\n", "first level", "mean JCT", "p50 JCT",
	       ">=16 p99", ">=16 JCT", "util", "evicted", "jobs");
	for (size_t i = 0; i < ev->nsweep; i++) {
		const mu_philly_run_t *r = &ev->sweep[i];
		char lv[32];
		snprintf(lv, sizeof lv, "%g GPU-h", r->jct_base_gpu_hours);
		printf("  %-12s %9s %9s %9s %9s %5.1f%% %7lld %6lld\n", lv,
		       dur(a, sizeof a, r->jct_mean_s), dur(b, sizeof b, r->jct_p50_s),
		       dur(c1, sizeof c1, r->large.p99_s), dur(d, sizeof d, r->large.jct_mean_s),
		       r->util_window * 100, (long long)r->preemptions,
		       (long long)r->jobs_preempted);
	}
}

/* Issue 21's goals for muster's default (history estimates), printed for
 * information: they do not decide the exit code. */
static void print_jct_goal(const mu_philly_eval_t *ev)
{
	const mu_philly_run_t *m = mu_philly_find(ev, MU_PHILLY_MUSTER, false);
	const mu_philly_run_t *t = mu_philly_find(ev, MU_PHILLY_TIRESIAS, false);
	const mu_philly_run_t *s = mu_philly_find(ev, MU_PHILLY_SJF, true);
	const mu_philly_run_t *f = mu_philly_find(ev, MU_PHILLY_FIFO, false);
	const mu_philly_run_t *a = mu_philly_find(ev, MU_PHILLY_ARRIVAL, false);
	if (!m || !t || !s || !f || !a)
		return;
	double best = 0;
	for (size_t i = 0; i < ev->nruns; i++)
		if (ev->runs[i].policy != MU_PHILLY_MUSTER && ev->runs[i].policy != MU_PHILLY_ARRIVAL)
			best = fmax(best, ev->runs[i].util_window);
	char x[32], y[32];
	printf("JCT goals (issue 21, muster history): mean JCT %s vs Tiresias %s: %s;",
	       dur(x, sizeof x, m->jct_mean_s), dur(y, sizeof y, t->jct_mean_s),
	       m->jct_mean_s <= t->jct_mean_s ? "OK" : "not met");
	printf(" p50 %s vs SJF %s: %s;\n", dur(x, sizeof x, m->jct_p50_s),
	       dur(y, sizeof y, s->jct_p50_s), m->jct_p50_s <= s->jct_p50_s ? "OK" : "not met");
	printf("  >=16 p99 wait %s vs arrival order %s: %s;", dur(x, sizeof x, m->large.p99_s),
	       dur(y, sizeof y, a->large.p99_s), m->large.p99_s <= a->large.p99_s ? "OK" : "not met");
	printf(" >=16 mean JCT %s vs FIFO %s: %s;\n", dur(x, sizeof x, m->large.jct_mean_s),
	       dur(y, sizeof y, f->large.jct_mean_s),
	       m->large.jct_mean_s <= f->large.jct_mean_s ? "OK" : "not met");
	printf("  utilization %.1f%% vs best baseline %.1f%%: %s; evicted %lld vs Tiresias/10 %.0f: %s\n",
	       m->util_window * 100, best * 100, m->util_window >= best ? "OK" : "not met",
	       (long long)m->preemptions, (double)t->preemptions / 10,
	       (double)m->preemptions * 10 <= (double)t->preemptions ? "OK" : "not met");
}

/* Issue 5's goal for one estimate source: muster's large jobs wait no
 * longer than under FIFO (mean and p99) and its utilization is within
 * EVP_UTIL_SLACK of EASY's.  Prints the verdict; true when met. */
static bool print_goal(const mu_philly_eval_t *ev, bool declared, bool quiet)
{
	const mu_philly_run_t *m = mu_philly_find(ev, MU_PHILLY_MUSTER, declared);
	const mu_philly_run_t *f = mu_philly_find(ev, MU_PHILLY_FIFO, declared);
	const mu_philly_run_t *e = mu_philly_find(ev, MU_PHILLY_EASY, declared);
	if (!m || !f || !e)
		return false;
	bool mean = m->large.mean_s <= f->large.mean_s;
	bool p99 = m->large.p99_s <= f->large.p99_s;
	bool util = m->util_window >= e->util_window - EVP_UTIL_SLACK;
	char a[32], b[32], c1[32], d[32];
	if (!quiet)
		printf("goal (%s): large jobs' mean wait %s vs FIFO %s: %s; p99 %s vs %s: %s;\n"
		       "  utilization %.1f%% vs EASY %.1f%% - 1 point: %s\n",
		       declared ? "declared durations" : "history estimates",
		       dur(a, sizeof a, m->large.mean_s), dur(b, sizeof b, f->large.mean_s),
		       mean ? "OK" : "NOT MET", dur(c1, sizeof c1, m->large.p99_s),
		       dur(d, sizeof d, f->large.p99_s), p99 ? "OK" : "NOT MET",
		       m->util_window * 100, e->util_window * 100, util ? "OK" : "NOT MET");
	return mean && p99 && util;
}

/* Writes path with fn; returns an exit code. */
static int write_out(const char *path, const mu_philly_eval_t *ev,
		     int (*fn)(const mu_philly_eval_t *, FILE *), bool quiet)
{
	FILE *f = mu_cli_create(path);
	return f ? mu_cli_finish("muster eval philly", path, f, fn(ev, f), !quiet) : MU_EXIT_FAIL;
}

/* Builds the workload and runs everything into ev (which the caller
 * releases); the workload's specs live and die here.  Returns an exit
 * code: 2 for a window with no job, 1 when a run fails. */
static int evp_run(evp_cli_t *c, const mu_specs_t *all, mu_philly_eval_t *ev)
{
	mu_specs_t sp;
	mu_diag_t diag = {{0}};
	mu_specs_init(&sp);
	int rc = mu_philly_eval_init(ev, all, &c->o, &sp, &diag);
	int code = rc == MU_EINVAL ? MU_EXIT_USAGE : rc ? MU_EXIT_FAIL : MU_EXIT_OK;
	if (rc == MU_OK) {
		if (!c->quiet)
			print_protocol(c, ev, all->njobs);
		rc = mu_philly_eval_runs(ev, &sp, &diag);
		code = rc ? MU_EXIT_FAIL : MU_EXIT_OK;
	}
	if (rc)
		fprintf(stderr, "muster eval philly: %s\n", diag.msg[0] ? diag.msg : mu_strerror(rc));
	mu_specs_release(&sp);
	return code;
}

int mu_cmd_eval_philly(int argc, char **argv)
{
	evp_cli_t c;
	memset(&c, 0, sizeof c);
	int rc = evp_parse(&c, argc, argv);
	if (rc)
		return rc < 0 ? MU_EXIT_OK : rc;
	if (!c.quiet && isatty(STDERR_FILENO)) {
		c.o.progress = evp_progress;
		c.o.progress_ctx = &c;
	}
	mu_specs_t all;
	mu_load_opts_t lo;
	mu_diag_t diag = {{0}};
	mu_specs_init(&all);
	mu_load_opts_defaults(&lo);
	lo.gpus_per_node = c.o.gpus_per_node;
	if (mu_load_file(c.trace, &lo, &all, &diag) != MU_OK) {
		fprintf(stderr, "muster eval philly: %s\n", diag.msg);
		mu_specs_release(&all);
		return MU_EXIT_USAGE;
	}
	mu_philly_eval_t ev;
	int code = evp_run(&c, &all, &ev);
	ev.trace = c.trace;
	if (code == MU_EXIT_OK) {
		if (!c.quiet) {
			print_backfill(&ev);
			print_jct(&ev);
			print_tradeoff(&ev);
			printf("\n");
			print_jct_goal(&ev);
		}
		bool ok = print_goal(&ev, false, c.quiet);
		ok = print_goal(&ev, true, c.quiet) && ok;
		if (!c.quiet)
			printf("%s (%.1f s)\n", ok ? "goal met" : "goal NOT MET", ev.wall_s);
		code = ok ? MU_EXIT_OK : MU_EXIT_FAIL;
		if (c.json && write_out(c.json, &ev, mu_philly_write_json, c.quiet))
			code = MU_EXIT_FAIL;
		if (c.report && write_out(c.report, &ev, mu_philly_write_html, c.quiet))
			code = MU_EXIT_FAIL;
	}
	mu_philly_eval_release(&ev);
	mu_specs_release(&all);
	return code;
}

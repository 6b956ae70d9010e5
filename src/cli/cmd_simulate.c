/*
 * cmd_simulate.c - `muster simulate`: load a cluster and a workload, run the
 * discrete-event simulator, print a summary, and write JSON and HTML.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "muster/report.h"
#include "muster/sim.h"
#include "cli/simopts.h"

static void simulate_usage(FILE *f)
{
	fprintf(f,
		"usage: muster simulate --cluster FILE --workload FILE [options]\n\n"
		"Runs the workload on the cluster in the discrete-event simulator, with\n"
		"the same engine the scheduler daemon uses, and prints a summary.\n"
		"Formats (YAML documents, muster CSV, openb, Philly) are in docs/formats.md.\n\n"
		"  --json FILE             write summary, jobs, queues and samples as JSON\n"
		"  --report FILE           write a self-contained HTML report with plots\n"
		"  --horizon DUR           stop the simulation at this time\n");
	mu_simopts_help(f);
}

/* Draws a progress bar on stderr; ctx is unused. */
static void progress_bar(void *ctx, double frac)
{
	(void)ctx;
	int width = 40, fill = (int)(frac * width + 0.5);
	fprintf(stderr, "\r  simulating [");
	for (int i = 0; i < width; i++)
		fputc(i < fill ? '#' : ' ', stderr);
	fprintf(stderr, "] %3d%%%s", (int)(frac * 100 + 0.5), frac >= 1.0 ? "\n" : "");
	fflush(stderr);
}

static void fmt_dur(char *buf, size_t len, double s)
{
	if (s < 60)
		snprintf(buf, len, "%.1fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else if (s < 86400 * 3)
		snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)s % 3600 / 60);
	else
		snprintf(buf, len, "%.1fd", s / 86400);
}

static void print_summary(const mu_specs_t *sp, const mu_sim_result_t *r,
			  const mu_simopts_t *o, double load_s, double run_s)
{
	const mu_sim_summary_t *s = &r->summary;
	char a[32], b[32], c[32], d[32];
	printf("muster simulate: %lld jobs, %zu nodes (%lld GPUs), %zu queues, policy %s, seed %llu\n",
	       (long long)s->jobs, sp->nnodes, (long long)s->total_gpus, sp->nqueues,
	       o->cfg.engine.score ? o->cfg.engine.score->name : mu_score_binpack.name,
	       (unsigned long long)o->cfg.seed);
	printf("  completed          %lld of %lld\n", (long long)s->completed, (long long)s->jobs);
	if (s->dra)
		printf("  GPU utilization    %.1f%% (with %lld DRA GPU devices: drivers named *gpu*)\n",
		       s->gpu_utilization * 100, (long long)s->dra_gpus);
	else
		printf("  GPU utilization    %.1f%%\n", s->gpu_utilization * 100);
	fmt_dur(a, sizeof a, s->avg_wait_s);
	fmt_dur(b, sizeof b, s->p50_wait_s);
	fmt_dur(c, sizeof c, s->p95_wait_s);
	fmt_dur(d, sizeof d, s->p99_wait_s);
	printf("  wait               avg %s  p50 %s  p95 %s  p99 %s\n", a, b, c, d);
	fmt_dur(a, sizeof a, s->avg_jct_s);
	fmt_dur(b, sizeof b, s->p50_jct_s);
	fmt_dur(c, sizeof c, s->p95_jct_s);
	fmt_dur(d, sizeof d, s->p99_jct_s);
	printf("  JCT                avg %s  p50 %s  p95 %s  p99 %s\n", a, b, c, d);
	fmt_dur(a, sizeof a, s->makespan_s);
	printf("  makespan           %s\n", a);
	printf("  preemptions        %lld pods evicted, %lld pods moved\n",
	       (long long)s->preemptions, (long long)s->moves);
	for (size_t q = 0; q < r->nqueues; q++)
		if (r->queues[q].jobs)
			printf("  queue %-12s %5d jobs, %5.1f%% of GPU time\n", r->queues[q].name,
			       r->queues[q].jobs, r->queues[q].share * 100);
	printf("  cycles             %lld (engine %.3f s, load %.3f s, run %.3f s)\n",
	       (long long)s->cycles, s->engine_s, load_s, run_s);
}

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Writes the result with writer() to path; returns an exit code. */
static int write_out(const char *path, const mu_sim_result_t *r, bool html)
{
	FILE *f = mu_cli_create(path);
	return f ? mu_cli_finish("muster simulate", path, f, html ? mu_sim_write_html(r, "muster simulation report", f)
				   : mu_sim_write_json(r, f), false) : MU_EXIT_FAIL;
}

int mu_cmd_simulate(int argc, char **argv)
{
	mu_simopts_t o;
	mu_simopts_init(&o, "simulate");
	int rc = mu_simopts_parse(&o, argc, argv, simulate_usage);
	if (rc)
		return rc < 0 ? MU_EXIT_OK : rc;
	if (o.positional) {
		fprintf(stderr, "muster simulate: unexpected argument '%s' (see --help)\n", o.positional);
		return MU_EXIT_USAGE;
	}
	if (!o.quiet && isatty(STDERR_FILENO))
		o.cfg.progress = progress_bar;
	mu_specs_t sp;
	mu_specs_init(&sp);
	double t0 = wall_s();
	rc = mu_simopts_load(&o, &sp);
	double t1 = wall_s();
	mu_sim_result_t r;
	memset(&r, 0, sizeof r);
	if (rc == MU_EXIT_OK) {
		mu_diag_t diag = {{0}};
		if (mu_sim_run(&sp, &o.cfg, &r, &diag) != MU_OK) {
			fprintf(stderr, "muster simulate: %s\n", diag.msg);
			rc = MU_EXIT_USAGE;
		}
	}
	double t2 = wall_s();
	if (rc == MU_EXIT_OK && !o.quiet)
		print_summary(&sp, &r, &o, t1 - t0, t2 - t1);
	if (rc == MU_EXIT_OK && o.json && (rc = write_out(o.json, &r, false)) == 0 && !o.quiet)
		printf("json: %s\n", o.json);
	if (rc == MU_EXIT_OK && o.report && (rc = write_out(o.report, &r, true)) == 0 && !o.quiet)
		printf("report: %s\n", o.report);
	mu_sim_result_release(&r);
	mu_specs_release(&sp);
	mu_simopts_release(&o);
	return rc;
}

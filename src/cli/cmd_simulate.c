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
#include "muster/sim.h"
#include "sim/load_util.h"

#define MAX_FILES 64

typedef struct sim_opts {
	const char *cluster[MAX_FILES], *workload[MAX_FILES];
	int ncluster, nworkload;
	const char *json, *report;
	bool quiet;
	mu_sim_config_t cfg;
	mu_load_opts_t load;
} sim_opts_t;

static void simulate_usage(FILE *f)
{
	fprintf(f,
		"usage: muster simulate --cluster FILE --workload FILE [options]\n\n"
		"Runs the workload on the cluster in the discrete-event simulator, with\n"
		"the same engine the scheduler daemon uses, and prints a summary.\n"
		"Formats (YAML documents, muster CSV, openb, Philly) are in docs/formats.md.\n\n"
		"  --cluster FILE         nodes and queues (repeatable)\n"
		"  --workload FILE        jobs, and maybe queues (repeatable)\n"
		"  --seed N               permutes simultaneous arrivals (default 1)\n"
		"  --policy NAME          scoring policy: binpack (default) or spread\n"
		"  --cycle-interval DUR   cycle every DUR (e.g. 10s); default: at every event\n"
		"  --horizon DUR          stop the simulation at this time\n"
		"  --max-jobs N           Philly: keep the first N jobs of the window\n"
		"  --window FROM:TO       Philly: keep jobs submitted in [FROM, TO) (durations)\n"
		"  --gpus-per-node N      Philly: GPUs per pod when splitting gangs (default 8)\n"
		"  --json FILE            write summary, jobs, queues and samples as JSON\n"
		"  --report FILE          write a self-contained HTML report with plots\n"
		"  --quiet                print nothing but errors\n"
		"  -h, --help             this help\n");
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

/* Parses one option at argv[*i]; returns 0, or an exit code. */
static int simulate_opt(int argc, char **argv, int *i, sim_opts_t *o)
{
	const char *a = argv[*i];
	if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
		simulate_usage(stdout);
		return -1;
	}
	if (!strcmp(a, "--quiet")) {
		o->quiet = true;
		return 0;
	}
	if (*i + 1 >= argc) {
		fprintf(stderr, "muster simulate: %s needs a value (see --help)\n", a);
		return MU_EXIT_USAGE;
	}
	const char *v = argv[++*i];
	int64_t n;
	bool bad = false;
	if (!strcmp(a, "--cluster") || !strcmp(a, "--workload")) {
		bool cl = a[2] == 'c';
		int *cnt = cl ? &o->ncluster : &o->nworkload;
		if (*cnt == MAX_FILES)
			bad = true;
		else
			(cl ? o->cluster : o->workload)[(*cnt)++] = v;
	} else if (!strcmp(a, "--seed")) {
		bad = mu__parse_int(v, 0, INT64_MAX, &n) != MU_OK;
		o->cfg.seed = (uint64_t)n;
	} else if (!strcmp(a, "--policy")) {
		o->cfg.score = mu_score_find(v);
		bad = !o->cfg.score;
	} else if (!strcmp(a, "--cycle-interval")) {
		bad = mu__parse_duration(v, &o->cfg.cycle_interval) != MU_OK;
	} else if (!strcmp(a, "--horizon")) {
		bad = mu__parse_duration(v, &o->cfg.horizon) != MU_OK;
	} else if (!strcmp(a, "--max-jobs")) {
		bad = mu__parse_int(v, 1, INT64_MAX, &o->load.max_jobs) != MU_OK;
	} else if (!strcmp(a, "--window")) {
		bad = parse_window(v, &o->load) != MU_OK;
	} else if (!strcmp(a, "--gpus-per-node")) {
		bad = mu__parse_int(v, 1, MU_MAX_GPUS, &n) != MU_OK;
		o->load.gpus_per_node = (int32_t)n;
	} else if (!strcmp(a, "--json")) {
		o->json = v;
	} else if (!strcmp(a, "--report")) {
		o->report = v;
	} else {
		fprintf(stderr, "muster simulate: unknown option '%s' (see --help)\n", a);
		return MU_EXIT_USAGE;
	}
	if (bad) {
		fprintf(stderr, "muster simulate: bad value for %s: '%s' (see --help)\n", a, v);
		return MU_EXIT_USAGE;
	}
	return 0;
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
			  const sim_opts_t *o, double load_s, double run_s)
{
	const mu_sim_summary_t *s = &r->summary;
	char a[32], b[32], c[32], d[32];
	printf("muster simulate: %lld jobs, %zu nodes (%lld GPUs), %zu queues, policy %s, seed %llu\n",
	       (long long)s->jobs, sp->nnodes, (long long)s->total_gpus, sp->nqueues,
	       o->cfg.score ? o->cfg.score->name : mu_score_binpack.name,
	       (unsigned long long)o->cfg.seed);
	printf("  completed          %lld of %lld\n", (long long)s->completed, (long long)s->jobs);
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
	printf("  preemptions        %lld\n", (long long)s->preemptions);
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
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return MU_EXIT_FAIL;
	}
	int rc = html ? mu_sim_write_html(r, "muster simulation report", f)
		      : mu_sim_write_json(r, f);
	if (fclose(f) != 0 || rc != MU_OK) {
		fprintf(stderr, "muster simulate: %s: write failed\n", path);
		return MU_EXIT_FAIL;
	}
	return MU_EXIT_OK;
}

static int load_all(const sim_opts_t *o, mu_specs_t *sp)
{
	mu_diag_t diag = {{0}};
	for (int i = 0; i < o->ncluster + o->nworkload; i++) {
		const char *f = i < o->ncluster ? o->cluster[i] : o->workload[i - o->ncluster];
		if (mu_load_file(f, &o->load, sp, &diag) != MU_OK) {
			fprintf(stderr, "muster simulate: %s\n", diag.msg);
			return MU_EXIT_USAGE;
		}
	}
	if (mu_specs_validate(sp, &diag) != MU_OK) {
		fprintf(stderr, "muster simulate: %s\n", diag.msg);
		return MU_EXIT_USAGE;
	}
	if (sp->nnodes == 0) {
		fprintf(stderr, "muster simulate: no nodes in %s\n", o->cluster[0]);
		return MU_EXIT_USAGE;
	}
	return MU_EXIT_OK;
}

int mu_cmd_simulate(int argc, char **argv)
{
	sim_opts_t o;
	memset(&o, 0, sizeof o);
	mu_sim_config_defaults(&o.cfg);
	mu_load_opts_defaults(&o.load);
	for (int i = 1; i < argc; i++) {
		int rc = simulate_opt(argc, argv, &i, &o);
		if (rc)
			return rc < 0 ? MU_EXIT_OK : rc;
	}
	if (!o.ncluster || !o.nworkload) {
		fprintf(stderr, "muster simulate: needs --cluster FILE and --workload FILE (see --help)\n");
		return MU_EXIT_USAGE;
	}
	if (!o.quiet && isatty(STDERR_FILENO))
		o.cfg.progress = progress_bar;
	mu_specs_t sp;
	mu_specs_init(&sp);
	double t0 = wall_s();
	int rc = load_all(&o, &sp);
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
	return rc;
}

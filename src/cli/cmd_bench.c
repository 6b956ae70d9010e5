/*
 * cmd_bench.c - `muster bench`: runs the benchmark shapes of
 * src/bench/bench*.c (each in its own child process, for its peak RSS),
 * prints one JSON line per record on stdout and a table of the issue's
 * targets (OK / MISSED) on stderr, and writes the records as a JSON array
 * (--json) and an HTML report (--report).
 *
 * Figures only: missed targets do not change the exit status.  Exit 0 when
 * every shape ran, 1 when one failed, 2 on bad usage.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "muster/bench.h"
#include "muster/error.h"

#define MAX_SHAPES 32

typedef struct bench_cli {
	mu_bench_opts_t o;
	const char *shapes[MAX_SHAPES];
	size_t nshapes;
	const char *json, *report;
	bool quiet;
	char preempt[PATH_MAX];
	char list[1024]; /* --shape's copy, split in place */
} bench_cli_t;

static void bench_usage(FILE *f)
{
	fprintf(f,
		"usage: muster bench [options]\n\n"
		"Times the engine on synthetic clusters (docs/evaluation.md, \"Speed and\n"
		"memory\") with the thread's CPU clock; one JSON line per record:\n"
		"  basic          5,000 nodes, 50,000 one-pod jobs, one cycle per pod\n"
		"  basic-mixed    openb pod shapes on 5,000 openb-shaped nodes\n"
		"  gang-topology  gangs of 8 to 512 8-GPU pods, required rack or block\n"
		"  preempt        bench_preempt: high-priority pods that need victims\n"
		"                 (identical victims in one queue, then varied ones in 4)\n"
		"  cycle          4,000 nodes, 140,000 pods (20,000 pending), 50 queues\n"
		"  scale          10,000 nodes, 150,000 pods: peak RSS\n"
		"  scaling        the cycle shape at 1k, 2k, 5k, 10k, 20k nodes\n"
		"  unique         5,000 nodes, 50,000 pods each with its own request\n"
		"  backlog        5,000 mixed GPU nodes, ~6,000 varied pods pending\n"
		"  blocked-selectors  10,000 pods no node matches among 50,000\n"
		"  gangs4         1,000,000 pods in gangs of 4 on 5,000 nodes\n"
		"  gang-blocked   four 4,096-pod gangs with a required block, blocked\n"
		"  classes        5,000 host-pinned selector classes: RSS vs none\n"
		"  reclaim-queues reclaim refused across 8 queues, 5,000 nodes\n"
		"  openb-replay   the real openb nodes and pods, arrivals and\n"
		"                 departures (skipped without ../shared/data)\n"
		"  affinity       5,000 nodes in 10 zones, 20,000 pods each with a\n"
		"                 required anti-affinity or a zone spread constraint\n"
		"  fleet          100 clusters of 1,000 nodes, 1,000,000 jobs on the hub:\n"
		"                 dispatch decisions/s and hub memory\n\n"
		"  --shape A,B,...     run these shapes only (default: all)\n"
		"  --quick             small sizes (seconds; for tests)\n"
		"  --json FILE         write every record as a JSON array\n"
		"  --report FILE.html  write an HTML report: targets and scaling plot\n"
		"  --data DIR          where openb/ is (../shared/data)\n"
		"  --preempt-bin FILE  the bench_preempt binary (default: found next\n"
		"                      to this muster, in rel/bench/ or bench/)\n"
		"  --seed N            seed of the sampled shapes (1)\n"
		"  --scale X           nodes and backlog of the varied shapes (unique\n"
		"                      to openb-replay) times X (1), for growth tables\n"
		"  --in-process        no child processes (peak RSS is cumulative)\n"
		"  --quiet             only the JSON lines\n"
		"  -h, --help          this help\n");
}

/* Splits a comma-separated list of shapes into c->shapes; false if a
 * name is unknown or there are too many. */
static bool parse_shapes(bench_cli_t *c, const char *arg)
{
	snprintf(c->list, sizeof c->list, "%s", arg);
	c->nshapes = 0;
	for (char *s = strtok(c->list, ","); s; s = strtok(NULL, ",")) {
		if (!mu_bench_shape_known(s) || c->nshapes == MAX_SHAPES) {
			fprintf(stderr, "muster bench: unknown shape '%s' (see --help)\n", s);
			return false;
		}
		c->shapes[c->nshapes++] = s;
	}
	return c->nshapes > 0;
}

/* The default bench_preempt: next to the running executable, in
 * rel/bench/ (build/muster) or bench/ (build/asan/muster). */
static void find_preempt(bench_cli_t *c)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	static const char *const rel[] = {"rel/bench/bench_preempt",
					  "bench/bench_preempt"};
	for (size_t i = 0; i < 2; i++) {
		int w = snprintf(c->preempt, sizeof c->preempt, "%s/%s", exe, rel[i]);
		if (w > 0 && (size_t)w < sizeof c->preempt &&
		    access(c->preempt, X_OK) == 0) {
			c->o.preempt_bin = c->preempt;
			return;
		}
	}
}

/* One option with a value; returns an exit code or -1 if it is fine. */
static int bench_option(bench_cli_t *c, const char *a, const char *v)
{
	if (!strcmp(a, "--shape"))
		return parse_shapes(c, v) ? -1 : MU_EXIT_USAGE;
	if (!strcmp(a, "--json"))
		c->json = v;
	else if (!strcmp(a, "--report"))
		c->report = v;
	else if (!strcmp(a, "--data"))
		c->o.data_dir = v;
	else if (!strcmp(a, "--preempt-bin"))
		c->o.preempt_bin = v;
	else if (!strcmp(a, "--seed")) {
		char *end;
		unsigned long long s = strtoull(v, &end, 10);
		if (!*v || *end || *v == '-') {
			fprintf(stderr, "muster bench: bad value for --seed: '%s'\n", v);
			return MU_EXIT_USAGE;
		}
		c->o.seed = s;
	} else if (!strcmp(a, "--scale")) {
		char *end;
		double x = strtod(v, &end);
		if (!*v || *end || !(x > 0) || x > 64) {
			fprintf(stderr, "muster bench: bad value for --scale: '%s' "
				"(expected a number in (0, 64])\n", v);
			return MU_EXIT_USAGE;
		}
		c->o.scale = x;
	} else {
		fprintf(stderr, "muster bench: unknown option '%s' (see --help)\n", a);
		return MU_EXIT_USAGE;
	}
	return -1;
}

/* Parses argv; returns -1 to go on, or an exit code. */
static int bench_parse(bench_cli_t *c, int argc, char **argv)
{
	mu_bench_opts_defaults(&c->o);
	find_preempt(c);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			bench_usage(stdout);
			return MU_EXIT_OK;
		}
		if (!strcmp(a, "--quick") || !strcmp(a, "--in-process") ||
		    !strcmp(a, "--quiet")) {
			c->o.quick |= !strcmp(a, "--quick");
			c->o.isolate &= !!strcmp(a, "--in-process");
			c->quiet |= !strcmp(a, "--quiet");
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "muster bench: '%s' needs a value or is unknown "
				"(see --help)\n", a);
			return MU_EXIT_USAGE;
		}
		int rc = bench_option(c, a, argv[++i]);
		if (rc >= 0)
			return rc;
	}
	if (!c->nshapes) {
		size_t n;
		const char *const *all = mu_bench_shapes(&n);
		for (size_t i = 0; i < n && i < MAX_SHAPES; i++)
			c->shapes[c->nshapes++] = all[i];
	}
	return -1;
}

/* Prints the targets of every record: figure, target, OK / MISSED. */
static void print_checks(FILE *f, const mu_bench_results_t *rs)
{
	fprintf(f, "%-14s %-7s %-22s %14s %14s  %s\n", "shape", "size",
		"figure", "measured", "target", "");
	for (size_t i = 0; i < rs->n; i++) {
		const mu_bench_result_t *r = &rs->v[i];
		mu_bench_check_t ck[4];
		size_t n = mu_bench_checks(r, ck, 4);
		char size[16];
		snprintf(size, sizeof size, "%d", r->gang_pods > 0 ? r->gang_pods : r->nodes);
		if (r->skipped[0])
			fprintf(f, "%-14s %-7s skipped: %s\n", r->shape, "", r->skipped);
		for (size_t k = 0; k < n; k++)
			fprintf(f, "%-14s %-7s %-22s %14.1f %s%12.0f  %s %s\n", r->shape,
				r->gang_pods > 0 ? size : "", ck[k].what, ck[k].value,
				ck[k].at_most ? "<=" : ">=", ck[k].target,
				mu_bench_check_met(&ck[k]) ? "OK" : "MISSED", ck[k].unit);
	}
}

/* Writes the records as a JSON array to path. */
static int write_json(const char *path, const mu_bench_results_t *rs)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return MU_EIO;
	fputc('[', f);
	for (size_t i = 0; i < rs->n; i++) {
		if (i)
			fputc(',', f);
		mu_bench_json(f, &rs->v[i]);
	}
	fputs("]\n", f);
	bool bad = ferror(f);
	return fclose(f) == 0 && !bad ? MU_OK : MU_EIO;
}

static int write_report(const char *path, const mu_bench_results_t *rs, bool quick)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return MU_EIO;
	int rc = mu_bench_report_html(f, rs, quick);
	if (fclose(f) != 0)
		rc = MU_EIO;
	return rc;
}

int mu_cmd_bench(int argc, char **argv)
{
	bench_cli_t c;
	memset(&c, 0, sizeof c);
	int rc = bench_parse(&c, argc, argv);
	if (rc >= 0)
		return rc;
	mu_bench_results_t rs;
	mu_bench_results_init(&rs);
	int status = MU_EXIT_OK;
	for (size_t i = 0; i < c.nshapes; i++) {
		size_t before = rs.n;
		if (!c.quiet)
			fprintf(stderr, "muster bench: %s%s ...\n", c.shapes[i],
				c.o.quick ? " (quick)" : "");
		rc = mu_bench_run(c.shapes[i], &c.o, &rs);
		if (rc != MU_OK) {
			fprintf(stderr, "muster bench: %s: %s\n", c.shapes[i], mu_strerror(rc));
			status = MU_EXIT_FAIL;
		}
		for (size_t k = before; k < rs.n; k++)
			mu_bench_json(stdout, &rs.v[k]);
		fflush(stdout);
	}
	if (!c.quiet)
		print_checks(stderr, &rs);
	if (c.json && write_json(c.json, &rs) != MU_OK) {
		fprintf(stderr, "muster bench: cannot write %s\n", c.json);
		status = MU_EXIT_FAIL;
	}
	if (c.report && write_report(c.report, &rs, c.o.quick) != MU_OK) {
		fprintf(stderr, "muster bench: cannot write %s\n", c.report);
		status = MU_EXIT_FAIL;
	}
	mu_bench_results_release(&rs);
	return status;
}

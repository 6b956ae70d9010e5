/*
 * cmd_eval_fleet.c - `muster eval fleet`: where jobs go across a fleet of
 * clusters (protocol in docs/evaluation.md, "Fleet: one job, one cluster").
 *
 * Loads the Philly trace, lets src/eval/eval_fleet.c build the window and
 * the fleet and run the four strategies, and prints the protocol and one
 * table; --json and --report write every figure.  Exit 0 when muster sent
 * no job to two clusters and started every job some strategy started,
 * 1 when not or a run fails, 2 on bad usage or input.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "muster/eval_fleet.h"
#include "muster/load.h"
#include "muster/util.h"

#define EVF_DEFAULT_TRACE "../shared/data/philly/philly.csv"

typedef struct evf_cli {
	mu_fleet_eval_opts_t o;
	const char *trace, *json, *report;
	bool quick, quiet;
} evf_cli_t;

static void evf_usage(FILE *f)
{
	fprintf(f,
		"usage: muster eval fleet [options]\n\n"
		"Replays the busiest window of the Microsoft Philly trace, every job keeping\n"
		"its team, over a fleet of three private clusters of different sizes and GPU\n"
		"models and one public cluster with a price, and compares where jobs go\n"
		"(docs/evaluation.md): static team-to-cluster assignment, MCAD-like (a random\n"
		"cluster with enough free GPUs in aggregate), MultiKueue-like (copies to all,\n"
		"the first to admit wins) and muster dispatch.\n\n"
		"  --trace FILE          the trace (" EVF_DEFAULT_TRACE ")\n"
		"  --days N              window length in days (7)\n"
		"  --load X              offered load on the private GPUs (0.9)\n"
		"  --cap DUR             cap job durations at DUR (48h; 0 = no cap)\n"
		"  --from DUR            a fixed window start after the trace's first row\n"
		"  --burst-after DUR     muster: public clusters after this wait (30m; the\n"
		"                        daemon's default is 10m, docs/dispatch.md)\n"
		"  --public-cost X       price of a public GPU-hour (2.5)\n"
		"  --seed N              seed of the random choices (1)\n"
		"  --quick               a 6-hour window, durations capped at 6h\n"
		"  --json FILE           every figure as JSON\n"
		"  --report FILE         an HTML report with charts\n"
		"  --quiet               print nothing but errors\n"
		"  -h, --help            this help\n");
}

static int evf_option(void *ctx, const char *a, const char *v)
{
	evf_cli_t *c = ctx;
	mu_philly_opts_t *o = &c->o.philly;
	int64_t n;
	mu_time_t t;
	int rc = MU_OK;
	if (!strcmp(a, "--trace"))
		c->trace = v;
	else if (!strcmp(a, "--json"))
		c->json = v;
	else if (!strcmp(a, "--report"))
		c->report = v;
	else if (!strcmp(a, "--days"))
		rc = mu__parse_num(v, 0.01, 3650, &o->days);
	else if (!strcmp(a, "--load"))
		rc = mu__parse_num(v, 0.05, 10, &o->load);
	else if (!strcmp(a, "--cap"))
		rc = mu__parse_duration(v, &o->cap);
	else if (!strcmp(a, "--from")) {
		if ((rc = mu__parse_duration(v, &t)) == MU_OK)
			o->from_s = t / 1000;
	} else if (!strcmp(a, "--burst-after"))
		rc = mu__parse_duration(v, &c->o.burst_after);
	else if (!strcmp(a, "--public-cost"))
		rc = mu__parse_num(v, 0, 1e6, &c->o.public_cost);
	else if (!strcmp(a, "--seed")) {
		if ((rc = mu__parse_int(v, 0, INT64_MAX, &n)) == MU_OK)
			o->seed = (uint64_t)n;
	} else
		rc = MU_EINVAL;
	return rc;
}

/* Parses argv; returns -1 after help, 0, or an exit code. */
static int evf_parse(evf_cli_t *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		c->quick = c->quick || !strcmp(argv[i], "--quick");
	if (c->quick)
		mu_fleet_eval_opts_quick(&c->o);
	else
		mu_fleet_eval_opts_defaults(&c->o);
	c->trace = EVF_DEFAULT_TRACE;
	const mu_cli_flag_t flags[] = {
		{"--quick", &c->quick},
		{"--quiet", &c->quiet},
	};
	const mu_cli_parser_t parser = {"muster eval fleet", evf_usage, flags,
					 sizeof flags / sizeof *flags, evf_option, c};
	return mu_cli_parse(&parser, argc, argv);
}

static const char *dur(char *buf, size_t n, double s)
{
	mu__fmt_duration(buf, n, s);
	return buf;
}

static void print_results(const mu_fleet_eval_t *ev)
{
	char a[32], b[32];
	printf("muster eval fleet: %lld jobs of %d teams, trace hours %.1f to %.1f, "
	       "largest %d GPUs, load %.2f on private GPUs\n", (long long)ev->win.jobs,
	       ev->nteams, ev->win.from_s / 3600.0, ev->win.to_s / 3600.0,
	       ev->win.max_gpus, ev->win.offered);
	for (int c = 0; c < MU_FLEET_EVAL_CLUSTERS; c++)
		printf("  %-13s %-7s %-5s %4d nodes %5d GPUs\n", ev->clusters[c].name,
		       ev->clusters[c].public_ ? "public" : "private", ev->clusters[c].model,
		       ev->clusters[c].nodes, ev->clusters[c].gpus);
	printf("\n  %-11s %6s %5s %9s %9s", "strategy", "done", "never", "JCT p50",
	       "JCT p99");
	for (int c = 0; c < MU_FLEET_EVAL_CLUSTERS; c++)
		printf(" %6.6s", ev->clusters[c].name + (c < 3 ? 7 : 0));
	printf(" %9s %9s %6s %6s %4s\n", "public", "cost", "mispl", "wasted", "dup");
	for (size_t i = 0; i < ev->nruns; i++) {
		const mu_fleet_eval_run_t *r = &ev->runs[i];
		printf("  %-11s %6lld %5lld %9s %9s", mu_fleet_strategy_name(r->strategy),
		       (long long)r->completed, (long long)r->never,
		       dur(a, sizeof a, r->jct_p50_s), dur(b, sizeof b, r->jct_p99_s));
		for (int c = 0; c < MU_FLEET_EVAL_CLUSTERS; c++)
			printf(" %5.1f%%", 100 * r->util[c]);
		printf(" %7.0f h %9.0f %6lld %6lld %4lld\n", r->public_gpu_h, r->cost,
		       (long long)r->misplaced, (long long)r->wasted, (long long)r->duplicates);
	}
	printf("\n  mean wait    %9s %9s %9s %9s %9s\n", "1 GPU", "2-4", "5-8", "9-16", ">16");
	for (size_t i = 0; i < ev->nruns; i++) {
		const mu_fleet_eval_run_t *r = &ev->runs[i];
		printf("  %-11s", mu_fleet_strategy_name(r->strategy));
		for (int k = 0; k < MU_FLEET_EVAL_BUCKETS; k++)
			printf(" %9s", dur(a, sizeof a, r->wait_mean_s[k]));
		printf("\n");
	}
}

static int write_out(const char *path, const mu_fleet_eval_t *ev,
		     int (*fn)(const mu_fleet_eval_t *, FILE *), bool quiet)
{
	FILE *f = mu_cli_create(path);
	return f ? mu_cli_finish("muster eval fleet", path, f, fn(ev, f), !quiet) : MU_EXIT_FAIL;
}

int mu_cmd_eval_fleet(int argc, char **argv)
{
	evf_cli_t c;
	memset(&c, 0, sizeof c);
	int code = evf_parse(&c, argc, argv);
	if (code)
		return code < 0 ? MU_EXIT_OK : code;
	mu_specs_t all;
	mu_load_opts_t lo;
	mu_diag_t diag = {{0}};
	mu_specs_init(&all);
	mu_load_opts_defaults(&lo);
	lo.gpus_per_node = c.o.philly.gpus_per_node;
	if (mu_load_file(c.trace, &lo, &all, &diag) != MU_OK) {
		fprintf(stderr, "muster eval fleet: %s\n", diag.msg);
		mu_specs_release(&all);
		return MU_EXIT_USAGE;
	}
	static mu_fleet_eval_t ev; /* large; one per process */
	int rc = mu_fleet_eval(&all, &c.o, &ev, &diag);
	ev.trace = c.trace;
	code = rc == MU_EINVAL ? MU_EXIT_USAGE : rc ? MU_EXIT_FAIL : MU_EXIT_OK;
	if (rc)
		fprintf(stderr, "muster eval fleet: %s\n", diag.msg[0] ? diag.msg : mu_strerror(rc));
	if (code == MU_EXIT_OK && !c.quiet)
		print_results(&ev);
	if (code == MU_EXIT_OK && c.json)
		code = write_out(c.json, &ev, mu_fleet_eval_write_json, c.quiet);
	if (code == MU_EXIT_OK && c.report)
		code = write_out(c.report, &ev, mu_fleet_eval_write_html, c.quiet);
	if (code == MU_EXIT_OK) {
		const mu_fleet_eval_run_t *m = &ev.runs[MU_FS_MUSTER];
		int64_t least_never = m->never;
		for (int s = 0; s < MU_FS_COUNT; s++)
			least_never = ev.runs[s].never < least_never ? ev.runs[s].never : least_never;
		bool ok = m->duplicates == 0 && m->never == least_never;
		if (!c.quiet)
			printf("check: muster dispatch: %lld duplicates, %lld jobs never started "
			       "(fewest of any strategy: %lld): %s\n", (long long)m->duplicates,
			       (long long)m->never, (long long)least_never, ok ? "OK" : "NOT MET");
		code = ok ? MU_EXIT_OK : MU_EXIT_FAIL;
	}
	mu_specs_release(&all);
	return code;
}

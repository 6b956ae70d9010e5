/*
 * cmd_explain.c - `muster explain JOB` and `muster queues`: run the
 * simulator up to a moment (--at, default the end) and show why a job waits,
 * or the queue tree with deserved quota, fair share, usage and jobs.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/simopts.h"

typedef struct explain_ctx {
	const char *job;
	int rc;
} explain_ctx_t;

static void explain_usage(FILE *f)
{
	fprintf(f,
		"usage: muster explain --cluster FILE --workload FILE [--at DUR] [options] JOB\n\n"
		"Simulates up to --at (default: the end) and tells the state of JOB: where it\n"
		"runs, or why it waits, with per-filter node counts, gang fit and the queue\n"
		"numbers (limit, quota, fair share).\n\n"
		"  --at DUR                the moment to look at (e.g. 2h)\n");
	mu_simopts_help(f);
}

static void queues_usage(FILE *f)
{
	fprintf(f,
		"usage: muster queues --cluster FILE --workload FILE [--at DUR] [options]\n\n"
		"Simulates up to --at (default: the end) and prints the queue tree: for\n"
		"GPUs, CPU, memory and pods, what each queue deserves, its fair share,\n"
		"its use and its limit; pending and running jobs; and with\n"
		"--usage-half-life its decayed usage and the factor on its weight, for\n"
		"GPUs, CPU and memory (pods are not divided by the fair share).\n"
		"With node pools, first the same for each pool's GPUs.\n\n"
		"  --at DUR                the moment to look at (e.g. 2h)\n");
	mu_simopts_help(f);
}

static void fmt_dur(char *buf, size_t len, mu_time_t ms)
{
	double s = (double)ms / 1000.0;
	if (s < 60)
		snprintf(buf, len, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)s % 3600 / 60);
}

/* at_end hook: prints the job's state and reason. */
static void explain_at_end(void *vctx, const mu_engine_t *e, mu_time_t now)
{
	explain_ctx_t *ctx = vctx;
	mu_id_t id = mu_engine_job_find(e, ctx->job);
	char at[32], ago[32];
	fmt_dur(at, sizeof at, now);
	if (id < 0) {
		fprintf(stderr, "muster explain: job \"%s\" has not been submitted by %s\n",
			ctx->job, at);
		ctx->rc = MU_EXIT_FAIL;
		return;
	}
	mu_job_info_t ji;
	mu_engine_job_info(e, id, &ji);
	static const char *const states[] = {"pending", "running", "finished"};
	printf("job \"%s\" in queue \"%s\" at %s:\n", ji.name, ji.queue, at);
	printf("  state        %s, %d of %d pods bound (minMember %d)\n",
	       states[ji.state], ji.bound, ji.pods, ji.min_member);
	printf("  priority     %d, %s, preempted %d time(s), moved %d time(s)\n", ji.priority,
	       ji.preemptible ? "preemptible" : "non-preemptible", ji.preemptions, ji.moves);
	fmt_dur(ago, sizeof ago, now - ji.submit);
	printf("  submitted    %s ago\n", ago);
	if (ji.state == MU_JOB_RUNNING) {
		fmt_dur(ago, sizeof ago, now - ji.start);
		printf("  running      for %s\n", ago);
	}
	fmt_dur(ago, sizeof ago, ji.estimate);
	printf("  run time     %s (%s estimate)\n", ago, mu_estimate_src_name(ji.estimate_src));
	if (ji.state == MU_JOB_PENDING && ji.expected_start != MU_TIME_NONE) {
		fmt_dur(ago, sizeof ago, ji.expected_start > now ? ji.expected_start - now : 0);
		printf("  expected     to start in %s (%s)\n", ago,
		       ji.reserved ? "reserved: the nodes are held for it"
				   : "estimate from the capacity running jobs free");
	} else if (ji.state == MU_JOB_PENDING) {
		printf("  expected     start unknown: what it waits for has no end in sight\n");
	}
	if (ji.last.why != MU_WHY_NONE && ji.state != MU_JOB_FINISHED) {
		char msg[1024];
		mu_reason_format(e, &ji.last, msg, sizeof msg);
		printf("  reason       %s\n  message      %s\n", mu_why_name(ji.last.why), msg);
	}
	if (ji.npools && ji.pool) {
		if (ji.state == MU_JOB_RUNNING)
			printf("  pool         %s (%s of the %d it accepts)\n", ji.pool,
			       ji.pool_rank ? "a fallback" : "its preferred", ji.npools);
		char pw[2048];
		if (ji.state == MU_JOB_PENDING &&
		    mu_engine_pool_explain(e, id, pw, sizeof pw) > 0)
			printf("  pools        %s\n", pw);
	}
	char svc[512];
	if (mu_engine_service_explain(e, id, svc, sizeof svc) > 0)
		printf("  service      %s\n", svc);
	if (ji.state != MU_JOB_FINISHED) {
		char ord[1024];
		mu_engine_order_explain(e, id, ord, sizeof ord);
		printf("  order        %s\n", ord);
	}
}

/* Writes an accounting amount of resource r: GPUs and CPUs as numbers,
 * memory in GiB, pods as a count; "-" for no limit. */
static void amount(char *buf, size_t len, int r, int64_t v)
{
	if (v == MU_RES_UNLIMITED)
		snprintf(buf, len, "-");
	else if (r == MU_RES_MEM && v >= (int64_t)1 << 40)
		snprintf(buf, len, "%.1fTi", (double)v / (1024.0 * 1024 * 1024 * 1024));
	else if (r == MU_RES_MEM)
		snprintf(buf, len, "%.1fGi", (double)v / (1024.0 * 1024 * 1024));
	else if (r == MU_RES_PODS)
		snprintf(buf, len, "%lld", (long long)v);
	else
		snprintf(buf, len, "%g", (double)v / 1000.0);
}

/* Prints queue q's row for resource r and its subtree, indented by
 * depth (r a resource or a pool's slot, shown in the units of resource
 * unit); the GPU table also has the jobs; with decay on, the tables of the
 * resources the fair share divides (all but pods) have the decayed usage
 * and the factor on the weight. */
static void print_queue(const mu_engine_t *e, mu_id_t q, int r, int unit, bool decay)
{
	mu_queue_info_t qi;
	mu_engine_queue_info(e, q, &qi);
	char name[64], d[24], f[24], u[24], l[24];
	snprintf(name, sizeof name, "%*s%s", 2 * qi.depth, "", qi.name);
	amount(d, sizeof d, unit, qi.deserved.v[r]);
	amount(f, sizeof f, unit, unit == MU_RES_PODS ? MU_RES_UNLIMITED : qi.fair.v[r]);
	amount(u, sizeof u, unit, qi.used.v[r]);
	amount(l, sizeof l, unit, qi.limit.v[r]);
	char du[24];
	amount(du, sizeof du, unit, (int64_t)qi.decayed[r]);
	if (r != MU_RES_GPU && decay && unit != MU_RES_PODS)
		printf("%-24s %8s %8s %8s %8s %8s %8.3f\n", name, d, f, u, l, du,
		       qi.decay_factors[r]);
	else if (r != MU_RES_GPU) /* also a pool's GPU slot */
		printf("%-24s %8s %8s %8s %8s\n", name, d, f, u, l);
	else if (!decay)
		printf("%-24s %8s %8s %8s %8s %8d %8d %8d\n", name, d, f, u, l, qi.priority,
		       qi.pending_jobs, qi.running_jobs);
	else
		printf("%-24s %8s %8s %8s %8s %8d %8d %8d %8.3g %8.3f\n", name, d, f, u, l,
		       qi.priority, qi.pending_jobs, qi.running_jobs, qi.decayed_gpu / 1000.0,
		       qi.decay_factor);
	for (mu_id_t c = 0; c < mu_engine_nqueues(e); c++) {
		mu_queue_info_t ci;
		mu_engine_queue_info(e, c, &ci);
		if (ci.parent == q)
			print_queue(e, c, r, unit, decay);
	}
}

static void queues_at_end(void *vctx, const mu_engine_t *e, mu_time_t now)
{
	/* The decay columns show when --usage-half-life is on. */
	const mu_simopts_t *o = vctx;
	const bool on = o->cfg.engine.usage_half_life > 0, *decay = &on;
	char at[32];
	fmt_dur(at, sizeof at, now);
	static const int res[] = {MU_RES_GPU, MU_RES_CPU, MU_RES_MEM, MU_RES_PODS};
	static const char *const title[] = {"GPUs", "CPU (cores)", "memory", "pods"};
	printf("queues at %s (fair share as of the last cycle; \"-\": no limit)\n", at);
	for (int32_t p = 0; p < mu_engine_npools(e); p++) {
		mu_pool_info_t pi;
		mu_engine_pool_info(e, p, &pi);
		printf("\nGPUs in pool %s (%d nodes, %g GPUs, %g in use)\n", pi.name, pi.nodes,
		       (double)pi.gpus / 1000.0, (double)pi.used / 1000.0);
		for (int k = 0; k < MU_POOL_NRES; k++) {
			if (pi.rslot[k] < 0)
				continue;
			if (k)
				printf("\n%s in pool %s\n", title[k], pi.name);
			printf("%-24s %8s %8s %8s %8s\n", "QUEUE", "DESERVED", "FAIR", "USED",
			       "LIMIT");
			for (mu_id_t q = 0; q < mu_engine_nqueues(e); q++) {
				mu_queue_info_t qi;
				mu_engine_queue_info(e, q, &qi);
				if (qi.parent < 0)
					print_queue(e, q, pi.rslot[k], res[k], false);
			}
		}
	}
	for (int k = 0; k < 4; k++) {
		printf("\n%s\n", title[k]);
		if (res[k] == MU_RES_GPU && *decay)
			printf("%-24s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "QUEUE", "DESERVED",
			       "FAIR", "USED", "LIMIT", "PRIO", "PENDING", "RUNNING", "DECAYED",
			       "FACTOR");
		else if (res[k] == MU_RES_GPU)
			printf("%-24s %8s %8s %8s %8s %8s %8s %8s\n", "QUEUE", "DESERVED", "FAIR",
			       "USED", "LIMIT", "PRIO", "PENDING", "RUNNING");
		else if (*decay && res[k] != MU_RES_PODS)
			printf("%-24s %8s %8s %8s %8s %8s %8s\n", "QUEUE", "DESERVED", "FAIR",
			       "USED", "LIMIT", "DECAYED", "FACTOR");
		else
			printf("%-24s %8s %8s %8s %8s\n", "QUEUE", "DESERVED", "FAIR", "USED",
			       "LIMIT");
		for (mu_id_t q = 0; q < mu_engine_nqueues(e); q++) {
			mu_queue_info_t qi;
			mu_engine_queue_info(e, q, &qi);
			if (qi.parent < 0)
				print_queue(e, q, res[k], res[k], *decay);
		}
	}
}

/* Shared driver: parse, load, run with the at_end hook. */
static int run_with_hook(mu_simopts_t *o, int argc, char **argv, void (*usage)(FILE *),
			 void (*hook)(void *, const mu_engine_t *, mu_time_t), void *ctx)
{
	int rc = mu_simopts_parse(o, argc, argv, usage);
	if (rc)
		return rc < 0 ? MU_EXIT_OK : rc;
	mu_specs_t sp;
	mu_specs_init(&sp);
	rc = mu_simopts_load(o, &sp);
	if (rc == MU_EXIT_OK) {
		o->cfg.at_end = hook;
		o->cfg.at_end_ctx = ctx;
		o->cfg.keep_jobs = true; /* the hook looks up finished jobs too */
		mu_sim_result_t r;
		mu_diag_t diag = {{0}};
		if (mu_sim_run(&sp, &o->cfg, &r, &diag) != MU_OK) {
			fprintf(stderr, "muster %s: %s\n", o->cmd, diag.msg);
			rc = MU_EXIT_USAGE;
		}
		mu_sim_result_release(&r);
	}
	mu_specs_release(&sp);
	mu_simopts_release(o);
	return rc;
}

int mu_cmd_explain(int argc, char **argv)
{
	mu_simopts_t o;
	mu_simopts_init(&o, "explain");
	explain_ctx_t ctx = {NULL, MU_EXIT_OK};
	for (int i = 1; i < argc; i++) /* the job name is needed before the run */
		if (argv[i][0] != '-' && (i == 1 || argv[i - 1][0] != '-' ||
					  !strcmp(argv[i - 1], "--quiet") ||
					  !strncmp(argv[i - 1], "--no-", 5)))
			ctx.job = argv[i];
	int rc = run_with_hook(&o, argc, argv, explain_usage, explain_at_end, &ctx);
	if (rc == MU_EXIT_OK && !o.positional) {
		fprintf(stderr, "muster explain: which job? (see --help)\n");
		return MU_EXIT_USAGE;
	}
	return rc ? rc : ctx.rc;
}

int mu_cmd_queues(int argc, char **argv)
{
	mu_simopts_t o;
	mu_simopts_init(&o, "queues");
	int rc = run_with_hook(&o, argc, argv, queues_usage, queues_at_end, &o);
	if (rc == MU_EXIT_OK && o.positional) {
		fprintf(stderr, "muster queues: unexpected argument '%s'\n", o.positional);
		return MU_EXIT_USAGE;
	}
	return rc;
}

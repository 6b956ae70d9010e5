/*
 * bench_preempt.c - the cost of a preemption decision on a full cluster.
 *
 * Builds an engine through the public API only: NODES nodes of 8 GPUs and
 * 64 CPUs, filled by running cycles with PODS single-pod preemptible jobs of
 * priority 0 (each 8 x NODES / PODS GPUs, so every GPU is taken).  Then a
 * stream of high-priority jobs (priority 100, same queue) arrives one at a
 * time; each needs victims.  For each, the bench submits it, times one
 * mu_engine_cycle() (wall time, CLOCK_MONOTONIC, and the thread's CPU time,
 * which a loaded machine does not inflate), and checks that the job was
 * bound whole and that pods were evicted.  The victims stay in the engine
 * as pending (suspended) jobs, as they would in a cluster, so later cycles
 * also walk them: the time is that of the whole cycle (fair share, queue
 * walk, placement, victim search).
 *
 * Two shapes: single-pod 8-GPU preemptors, and 4-pod gangs of 8 GPUs per
 * pod; each once as above and once "dropped", where the suspended victims
 * are deleted after each cycle, which isolates the preemption decision
 * from the growing walk over suspended jobs.  A fifth, "preempt-varied",
 * has varied victims in several queues: four queues, each node holding
 * one queue's pods (pinned by hostname) in one of seven splits of its 8
 * GPUs (8; 4+4; 4+2+2; 2+2+2+2; 4+2+1+1; 2+2+2+1+1; eight 1s), of
 * priorities 0 to 3, started at four different times; preemptors come
 * from each queue in turn (--pods does not apply).  One JSON line per run.
 * Figures only; it never fails on time.  Exit 1 if a preemptor was not
 * placed, 2 on bad usage.
 *
 *   bench_preempt [--nodes N] [--pods N] [--preemptors N]
 *                 [--max-victim-nodes N] [--shape NAME[,NAME...]]
 *
 * --max-victim-nodes sets the engine's bound on nodes examined per
 * preempting pod (default 0: all), to measure what it saves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "muster/engine.h"

#define SEC 1000 /* ms */

typedef struct bench_opts {
	int nodes, pods, preemptors;
	int max_victim_nodes; /* mu_engine_config_t's; 0 = all nodes */
	const char *only;     /* one shape's name, or NULL for all */
} bench_opts_t;

typedef struct bench_result {
	double total_s;   /* sum of the timed cycles */
	double p50_us, p99_us;          /* wall (CLOCK_MONOTONIC) */
	double p50_cpu_us, p99_cpu_us;  /* the thread's CPU time: what the
	                                 * cycle costs on a loaded machine */
	int evicted;      /* pods evicted over the whole stream */
} bench_result_t;

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts v[0..n) (n >= 1) and returns its 50th and 99th percentiles
 * (nearest rank). */
static void pcts(double *v, int n, double *p50, double *p99)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	*p50 = v[(size_t)(0.50 * (n - 1) + 0.5)];
	*p99 = v[(size_t)(0.99 * (n - 1) + 0.5)];
}

/* Submits one job of `pods` pods with `gpus` GPUs each, 1 CPU per GPU. */
/* Submits job name of `pods` pods of `gpus` GPUs at priority prio into
 * queue (NULL: "train"), pinned to node `host` when not NULL. */
static int submit_in(mu_engine_t *e, const char *name, int pods, int gpus,
		     int prio, mu_time_t now, const char *queue, const char *host,
		     mu_id_t *id)
{
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	mu_label_t sel = {"kubernetes.io/hostname", host};
	if (host) {
		ps.node_selector = &sel;
		ps.nnode_selector = 1;
	}
	ps.replicas = pods;
	ps.req.v[MU_RES_CPU] = 1000LL * gpus;
	ps.req.v[MU_RES_MEM] = (8LL << 30) * gpus;
	ps.req.v[MU_RES_GPU] = gpus;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = name;
	j.queue = queue ? queue : "train";
	j.priority = prio;
	j.type = MU_JOB_TRAIN;
	j.preemptible = prio < 100;
	j.podsets = &ps;
	j.npodsets = 1;
	j.submit = now;
	return mu_engine_job_submit(e, &j, now, id);
}

static int submit(mu_engine_t *e, const char *name, int pods, int gpus,
		  int prio, mu_time_t now, mu_id_t *id)
{
	return submit_in(e, name, pods, gpus, prio, now, NULL, NULL, id);
}

#define VQ 4 /* queues of preempt-varied */

/* preempt-varied's fill: node i belongs to queue i mod VQ and holds one
 * of seven splits of its GPUs, pods of priorities 0..3, started in four
 * rounds ten seconds apart.  Returns the pods submitted, or an error. */
static int fill_varied(mu_engine_t *e, int nodes)
{
	static const int splits[7][9] = {{8}, {4, 4}, {4, 2, 2}, {2, 2, 2, 2},
					 {4, 2, 1, 1}, {2, 2, 2, 1, 1},
					 {1, 1, 1, 1, 1, 1, 1, 1}};
	int rc = MU_OK, n = 0;
	mu_decisions_t d;
	mu_decisions_init(&d);
	for (int round = 0; rc == MU_OK && round < 4; round++) {
		for (int i = 0; rc == MU_OK && i < nodes; i++) {
			char name[32], host[32], q[8];
			snprintf(host, sizeof host, "node-%05d", i);
			snprintf(q, sizeof q, "q%d", i % VQ);
			const int *sp = splits[i % 7];
			for (int k = 0; rc == MU_OK && k < 8 && sp[k]; k++) {
				if ((i + k) % 4 != round)
					continue;
				snprintf(name, sizeof name, "low-%05d-%d", i, k);
				rc = submit_in(e, name, 1, sp[k], (i * 7 + k) % 4,
					       round * 10 * SEC, q, host, NULL);
				n++;
			}
		}
		d.n = 0;
		if (rc == MU_OK)
			rc = mu_engine_cycle(e, round * 10 * SEC, &d);
	}
	mu_decisions_release(&d);
	return rc == MU_OK ? n : rc;
}

/* A new engine with the nodes, one queue and the low-priority pods all
 * running (placed by cycles at time 0).  The caller frees *out. */
static int build(const bench_opts_t *o, bool varied, mu_engine_t **out)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.max_victim_nodes = o->max_victim_nodes;
	int rc = mu_engine_new(&cfg, out);
	mu_engine_t *e = *out;
	char name[32];
	for (int i = 0; rc == MU_OK && i < o->nodes; i++) {
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		snprintf(name, sizeof name, "node-%05d", i);
		mu_label_t host = {"kubernetes.io/hostname", name};
		n.name = name;
		n.labels = &host;
		n.nlabels = 1;
		n.alloc.v[MU_RES_CPU] = 64000;
		n.alloc.v[MU_RES_MEM] = 1LL << 40;
		n.alloc.v[MU_RES_GPU] = 8;
		n.alloc.v[MU_RES_PODS] = 110;
		rc = mu_engine_node_upsert(e, &n, NULL);
	}
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "train"; /* the team owns the cluster: high jobs are in quota */
	q.deserved.v[MU_RES_GPU] = 8000LL * o->nodes;
	if (rc == MU_OK && !varied)
		rc = mu_engine_queue_upsert(e, &q);
	for (int k = 0; rc == MU_OK && varied && k < VQ; k++) {
		snprintf(name, sizeof name, "q%d", k);
		q.name = name; /* each team owns its quarter */
		q.deserved.v[MU_RES_GPU] = 8000LL * o->nodes / VQ;
		rc = mu_engine_queue_upsert(e, &q);
	}
	int gpus = 8 * o->nodes / o->pods;
	for (int i = 0; rc == MU_OK && !varied && i < o->pods; i++) {
		snprintf(name, sizeof name, "low-%06d", i);
		rc = submit(e, name, 1, gpus, 0, 0, NULL);
	}
	mu_decisions_t d;
	mu_decisions_init(&d);
	if (rc == MU_OK && !varied)
		rc = mu_engine_cycle(e, 0, &d);
	if (rc == MU_OK && varied)
		rc = fill_varied(e, o->nodes) < 0 ? MU_ESTATE : MU_OK;
	mu_res_t alloc, used;
	mu_engine_totals(e, &alloc, &used);
	if (rc == MU_OK && used.v[MU_RES_GPU] != alloc.v[MU_RES_GPU]) {
		fprintf(stderr, "bench_preempt: the fill left GPUs free\n");
		rc = MU_ESTATE;
	}
	mu_decisions_release(&d);
	return rc;
}

/* Whether the cycle's decisions bind all `pods` pods of job id and evict
 * at least one pod; adds the evictions to *evicted. */
static bool placed_by_preemption(const mu_decisions_t *d, mu_id_t id, int pods,
				 int *evicted)
{
	int binds = 0, evicts = 0;
	for (size_t i = 0; i < d->n; i++) {
		binds += d->v[i].kind == MU_DEC_BIND && d->v[i].job == id;
		evicts += d->v[i].kind == MU_DEC_EVICT && d->v[i].by == id;
	}
	*evicted += evicts;
	return binds == pods && evicts > 0;
}

/* Says why job id is not running. */
static void report_failure(const mu_engine_t *e, mu_id_t id)
{
	mu_job_info_t ji;
	char why[512] = "";
	if (mu_engine_job_info(e, id, &ji) == MU_OK)
		mu_reason_format(e, &ji.last, why, sizeof why);
	fprintf(stderr, "bench_preempt: %s was not placed by preemption: %s\n",
		ji.name ? ji.name : "?", why);
}

/* Deletes the jobs the cycle suspended (the "victims dropped" variant),
 * so that no backlog of suspended jobs builds up. */
static int drop_victims(mu_engine_t *e, const mu_decisions_t *d, mu_time_t now)
{
	for (size_t i = 0; i < d->n; i++) {
		if (d->v[i].kind != MU_DEC_EVICT || !d->v[i].suspend)
			continue;
		int rc = mu_engine_job_finish(e, d->v[i].job, now);
		if (rc != MU_OK && rc != MU_ESTATE) /* a gang: already gone */
			return rc;
	}
	return MU_OK;
}

/* Runs the preemptor stream on e: n jobs of `pods` 8-GPU pods, one cycle
 * each, one simulated second apart and an hour after the fill (past the
 * minimum runtime); with `drop`, the suspended victims are deleted after
 * each cycle.  Fills r; returns an error if a job was not placed. */
static int stream(mu_engine_t *e, int n, int pods, bool drop, bool varied,
		  bench_result_t *r)
{
	double *us = malloc((size_t)(n ? n : 1) * sizeof *us);
	double *cpu = malloc((size_t)(n ? n : 1) * sizeof *cpu);
	mu_decisions_t d;
	mu_decisions_init(&d);
	int rc = us && cpu ? MU_OK : MU_ENOMEM;
	memset(r, 0, sizeof *r);
	for (int i = 0; rc == MU_OK && i < n; i++) {
		char name[32];
		mu_id_t id;
		mu_time_t now = 3600 * SEC + (mu_time_t)i * SEC;
		snprintf(name, sizeof name, "high-%06d", i);
		char q[8];
		snprintf(q, sizeof q, "q%d", i % VQ);
		if ((rc = submit_in(e, name, pods, 8, 100, now, varied ? q : NULL, NULL,
				    &id)) != MU_OK)
			break;
		d.n = 0;
		double t0 = clock_s(CLOCK_MONOTONIC);
		double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
		rc = mu_engine_cycle(e, now, &d);
		cpu[i] = (clock_s(CLOCK_THREAD_CPUTIME_ID) - c0) * 1e6;
		double dt = clock_s(CLOCK_MONOTONIC) - t0;
		us[i] = dt * 1e6;
		r->total_s += dt;
		if (rc == MU_OK && !placed_by_preemption(&d, id, pods, &r->evicted)) {
			report_failure(e, id);
			rc = MU_ESTATE;
		}
		if (rc == MU_OK && drop)
			rc = drop_victims(e, &d, now);
	}
	if (rc == MU_OK && n > 0) {
		pcts(us, n, &r->p50_us, &r->p99_us);
		pcts(cpu, n, &r->p50_cpu_us, &r->p99_cpu_us);
	}
	mu_decisions_release(&d);
	free(us);
	free(cpu);
	return rc;
}

static double peak_rss_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
}

/* One shape: a fresh engine, its stream, one JSON line. */
static int run_shape(const bench_opts_t *o, const char *shape, int pods, bool drop,
		     bool varied)
{
	mu_engine_t *e = NULL;
	bench_result_t r;
	int rc = build(o, varied, &e);
	if (rc == MU_OK)
		rc = stream(e, o->preemptors, pods, drop, varied, &r);
	mu_engine_free(e);
	if (rc != MU_OK) {
		fprintf(stderr, "bench_preempt: %s: %s\n", shape, mu_strerror(rc));
		return 1;
	}
	printf("{\"shape\":\"%s\",\"nodes\":%d,\"pods\":%d,\"preemptors\":%d,"
	       "\"preemptor_pods\":%d,\"max_victim_nodes\":%d,\"evicted\":%d,"
	       "\"decisions_per_s\":%.0f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
	       "\"p50_cpu_us\":%.1f,\"p99_cpu_us\":%.1f,"
	       "\"peak_rss_mb\":%.1f}\n",
	       shape, o->nodes, o->pods, o->preemptors, pods, o->max_victim_nodes,
	       r.evicted,
	       r.total_s > 0 ? o->preemptors / r.total_s : 0, r.p50_us, r.p99_us,
	       r.p50_cpu_us, r.p99_cpu_us,
	       peak_rss_mb());
	fflush(stdout);
	return 0;
}

static int parse_args(int argc, char **argv, bench_opts_t *o)
{
	*o = (bench_opts_t){5000, 20000, 200, 0, NULL};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
			o->only = argv[++i];
			continue;
		}
		int *dst = !strcmp(argv[i], "--nodes") ? &o->nodes :
			   !strcmp(argv[i], "--max-victim-nodes") ? &o->max_victim_nodes :
			   !strcmp(argv[i], "--pods") ? &o->pods :
			   !strcmp(argv[i], "--preemptors") ? &o->preemptors : NULL;
		char *end;
		long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
		if (!dst || i + 1 >= argc || *end || v < 1 || v > 10000000)
			return -1;
		*dst = (int)v;
		i++;
	}
	/* Every GPU taken by pods of 1..8 whole GPUs; a gang needs 4 nodes. */
	if (8L * o->nodes % o->pods || o->pods < o->nodes || o->pods > 8L * o->nodes ||
	    4L * o->preemptors > o->nodes)
		return -1;
	return 0;
}

/* Whether name is one of the comma-separated names of list. */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		if (len == n && !strncmp(p, name, n))
			return true;
		p = c ? c + 1 : NULL;
	}
	return false;
}

int main(int argc, char **argv)
{
	bench_opts_t o;
	if (parse_args(argc, argv, &o) != 0) {
		fprintf(stderr, "usage: bench_preempt [--nodes N] [--pods N] [--preemptors N]\n"
			"                     [--max-victim-nodes N] [--shape NAME]\n"
			"  nodes <= pods <= 8 x nodes, pods dividing 8 x nodes (GPUs per low pod);\n"
			"  4 x preemptors <= nodes\n");
		return 2;
	}
	static const struct {
		const char *name;
		int pods;
		bool drop, varied;
	} shapes[] = {{"preempt", 1, false, false}, {"preempt-gang", 4, false, false},
		      {"preempt-dropped", 1, true, false},
		      {"preempt-gang-dropped", 4, true, false},
		      {"preempt-varied", 1, false, true}};
	int rc = 0, ran = 0;
	for (size_t i = 0; rc == 0 && i < sizeof shapes / sizeof *shapes; i++) {
		if (o.only && !listed(o.only, shapes[i].name))
			continue;
		rc = run_shape(&o, shapes[i].name, shapes[i].pods, shapes[i].drop,
			       shapes[i].varied);
		ran++;
	}
	if (!ran)
		fprintf(stderr, "bench_preempt: unknown shape '%s'\n", o.only);
	return ran ? rc : 2;
}

/*
 * bench_fleet_reclaim.c - the cost of one reclaim pass of the hub
 * (mu_fleet_reclaim, docs/dispatch.md round 13) with many jobs waiting.
 *
 * The fleet bench's shape (src/bench/bench_fleet.c; by default its --quick
 * size: 4 clusters of 50 nodes of 8 GPUs, 64 CPUs and 512 Gi, 8 hub queues
 * with equal deserved GPUs) through the public API only.  The first half
 * of the queues fill the fleet with jobs of the bench's mix (one pod of 1,
 * 2, 4 or 8 GPUs, or gangs of 2 and 4 pods of 8 GPUs, 40/15/15/15/10/5%),
 * all preemptible; then --waiting jobs of the same mix arrive for every
 * queue, so the other half are below their deserved quota and may reclaim.
 * One dispatch pass places what fits (at t0), a second one 10 minutes later
 * (past the minimum runtime) finds nothing; then --passes reclaim passes at
 * that time, each timed with the thread's CPU clock.  One JSON line: per
 * pass, its victims and CPU microseconds.  Instruction counts, which the
 * machine's load does not change:
 *
 *   valgrind --tool=callgrind --toggle-collect=mu_fleet_reclaim \
 *       build/rel/bench/bench_fleet_reclaim --passes 1
 *
 * (and --passes 2: the second pass's cost is the difference).
 *
 * --held N (round 23): after the reclaim passes, the clusters now held for
 * claimants get CPU nodes (no GPU: no claimant fits there) with room for
 * N jobs of one CPU, which arrive, and one more dispatch pass at the same
 * time is timed: each of them is placed on a held cluster, with the
 * claimant's nominated room bound as a placeholder and both filter passes
 * (src/fleet/place.c), beside the waiting GPU jobs that fit nowhere.  Its
 * line adds the clusters held, the jobs, the jobs placed, its CPU
 * microseconds and decisions per second.  Its instructions, and the
 * placeholder's share of them:
 *
 *   valgrind --tool=callgrind --toggle-collect=held_pass \
 *       build/rel/bench/bench_fleet_reclaim --held 2000
 *
 * Exit 2 on bad usage, 1 on an error of the fleet.
 *
 *   bench_fleet_reclaim [--clusters N] [--nodes N] [--queues N]
 *                       [--waiting N] [--passes N] [--held N]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "muster/fleet.h"

#define GI (1LL << 30)
#define MIN (60 * 1000LL)
#define NSHAPES 6

static double cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

typedef struct fr {
	int32_t clusters, nodes, queues, passes;
	int64_t waiting;
	mu_podset_spec_t shapes[NSHAPES];
	mu_job_spec_t *specs;
	mu_fleet_job_spec_t *fspecs;
	char (*names)[16];
	char (*qnames)[16];
	int64_t njobs;
	uint64_t rng;
} fr_t;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Submits one job of the bench's mix for queue q at now.  O(1). */
static int submit(fr_t *b, mu_fleet_t *f, int32_t q, mu_time_t now)
{
	static const int32_t pct[NSHAPES] = {40, 15, 15, 15, 10, 5};
	int32_t r = (int32_t)(rnd(&b->rng) % 100), s = 0;
	for (int32_t acc = pct[0]; s < NSHAPES - 1 && r >= acc; acc += pct[++s])
		;
	int64_t k = b->njobs++;
	snprintf(b->names[k], sizeof b->names[k], "j%lld", (long long)k);
	mu_job_spec_t *j = &b->specs[k];
	memset(j, 0, sizeof *j);
	j->name = b->names[k];
	j->queue = b->qnames[q];
	j->podsets = &b->shapes[s];
	j->npodsets = 1;
	j->preemptible = true;
	j->submit = now;
	j->runtime_estimate = 3600 * 1000;
	b->fspecs[k] = (mu_fleet_job_spec_t){.job = j};
	return mu_fleet_job_submit(f, &b->fspecs[k], now, NULL);
}

/* Adds node name to cluster c: 64 CPUs, 512 Gi, 110 pods and gpus H100
 * GPUs (none: a CPU node). */
static int add_node(mu_fleet_t *f, int32_t c, const char *name, int64_t gpus)
{
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = name;
	n.alloc.v[MU_RES_CPU] = 64000;
	n.alloc.v[MU_RES_MEM] = 512 * GI;
	n.alloc.v[MU_RES_GPU] = gpus;
	n.alloc.v[MU_RES_PODS] = 110;
	n.gpu_model = gpus ? "H100" : NULL;
	return mu_fleet_node_upsert(f, c, &n);
}

/* The clusters, queues and jobs, and the two dispatch passes. */
static int build(fr_t *b, mu_fleet_t *f)
{
	static const int32_t gpus[NSHAPES] = {1, 2, 4, 8, 8, 8};
	static const int32_t reps[NSHAPES] = {1, 1, 1, 1, 2, 4};
	for (int s = 0; s < NSHAPES; s++) {
		mu_podset_spec_t *p = &b->shapes[s];
		memset(p, 0, sizeof *p);
		p->name = "main";
		p->replicas = reps[s];
		p->req.v[MU_RES_GPU] = gpus[s];
		p->req.v[MU_RES_CPU] = 4000LL * gpus[s];
		p->req.v[MU_RES_MEM] = 32 * GI * gpus[s];
	}
	int rc = MU_OK;
	char name[48];
	for (int32_t c = 0; rc == MU_OK && c < b->clusters; c++) {
		snprintf(name, sizeof name, "cluster-%03d", c);
		mu_cluster_spec_t cs = {.name = name, .tier = MU_TIER_PRIVATE};
		int32_t id;
		rc = mu_fleet_cluster_add(f, &cs, &id);
		for (int32_t i = 0; rc == MU_OK && i < b->nodes; i++) {
			snprintf(name, sizeof name, "c%03d-n%04d", c, i);
			rc = add_node(f, id, name, 8);
		}
	}
	for (int32_t q = 0; rc == MU_OK && q < b->queues; q++) {
		mu_queue_spec_t qs;
		mu_queue_spec_defaults(&qs);
		snprintf(b->qnames[q], sizeof b->qnames[q], "team%03d", q);
		qs.name = b->qnames[q];
		qs.deserved.v[MU_RES_GPU] = 8000LL * b->nodes * b->clusters / b->queues;
		rc = mu_fleet_queue_upsert(f, &qs);
	}
	/* the first half of the queues fill the fleet (twice its GPUs asked) */
	int64_t fill = 2LL * 8 * b->nodes * b->clusters / 3;
	for (int64_t k = 0; rc == MU_OK && k < fill; k++)
		rc = submit(b, f, (int32_t)(k % (b->queues / 2 ? b->queues / 2 : 1)), 0);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	if (rc == MU_OK)
		rc = mu_fleet_dispatch(f, 0, &d);
	for (int64_t k = 0; rc == MU_OK && k < b->waiting; k++)
		rc = submit(b, f, (int32_t)(k % b->queues), MIN);
	if (rc == MU_OK)
		rc = mu_fleet_dispatch(f, 10 * MIN, &d);
	mu_fleet_decisions_release(&d);
	return rc;
}

/* --held: adds to each cluster held for a claimant (*held of them) CPU
 * nodes (64 CPUs, no GPU: no claimant's pod fits there) for n jobs of
 * one CPU, and submits the n jobs, 1 CPU each, to the first queue at now.
 * O(jobs + n). */
static int held_setup(fr_t *b, mu_fleet_t *f, int64_t n, mu_time_t now, int32_t *held)
{
	bool *h = calloc((size_t)b->clusters, sizeof *h);
	if (!h)
		return MU_ENOMEM;
	mu_fleet_job_info_t ji;
	*held = 0;
	for (int32_t j = 0; j < mu_fleet_njobs(f); j++)
		if (mu_fleet_job_info(f, j, &ji) == MU_OK && ji.held >= 0 && !h[ji.held]) {
			h[ji.held] = true;
			++*held;
		}
	int64_t per = *held ? (n + 64LL * *held - 1) / (64LL * *held) : 0;
	int rc = MU_OK;
	char name[48];
	for (int32_t c = 0; rc == MU_OK && c < b->clusters; c++)
		for (int64_t i = 0; h[c] && rc == MU_OK && i < per; i++) {
			snprintf(name, sizeof name, "c%03d-cpu%04lld", c, (long long)i);
			rc = add_node(f, c, name, 0);
		}
	free(h);
	static mu_podset_spec_t cpu = {.name = "main", .replicas = 1,
				       .req = {.v = {[MU_RES_CPU] = 1000, [MU_RES_MEM] = GI}}};
	for (int64_t k = 0; rc == MU_OK && k < n; k++) {
		int64_t x = b->njobs++;
		snprintf(b->names[x], sizeof b->names[x], "j%lld", (long long)x);
		mu_job_spec_t *j = &b->specs[x];
		*j = (mu_job_spec_t){.name = b->names[x], .queue = b->qnames[0], .podsets = &cpu,
				     .npodsets = 1, .preemptible = true, .submit = now,
				     .runtime_estimate = 3600 * 1000};
		b->fspecs[x] = (mu_fleet_job_spec_t){.job = j};
		rc = mu_fleet_job_submit(f, &b->fspecs[x], now, NULL);
	}
	return rc;
}

/* The timed dispatch pass of --held (its own frame, for callgrind's
 * --toggle-collect: not inlined, and not a tail call). */
__attribute__((noinline)) static int held_pass(mu_fleet_t *f, mu_time_t now,
						mu_fleet_decisions_t *d)
{
	volatile int rc = mu_fleet_dispatch(f, now, d);
	return rc;
}

static int arg(int argc, char **argv, int *i, const char *name, int64_t *v)
{
	if (strcmp(argv[*i], name) || *i + 1 >= argc)
		return 0;
	char *end;
	long long x = strtoll(argv[++*i], &end, 10);
	if (*end || x < 1)
		return -1;
	*v = x;
	return 1;
}

int main(int argc, char **argv)
{
	int64_t clusters = 4, nodes = 50, queues = 8, waiting = 10000, passes = 1, held = 0;
	for (int i = 1; i < argc; i++) {
		int r = 0;
		r = r ? r : arg(argc, argv, &i, "--clusters", &clusters);
		r = r ? r : arg(argc, argv, &i, "--nodes", &nodes);
		r = r ? r : arg(argc, argv, &i, "--queues", &queues);
		r = r ? r : arg(argc, argv, &i, "--waiting", &waiting);
		r = r ? r : arg(argc, argv, &i, "--passes", &passes);
		r = r ? r : arg(argc, argv, &i, "--held", &held);
		if (r != 1) {
			fprintf(stderr, "usage: bench_fleet_reclaim [--clusters N] [--nodes N] "
				"[--queues N] [--waiting N] [--passes N] [--held N]\n");
			return 2;
		}
	}
	fr_t b = {.clusters = (int32_t)clusters, .nodes = (int32_t)nodes,
		  .queues = (int32_t)queues, .passes = (int32_t)passes, .waiting = waiting,
		  .rng = 42};
	int64_t cap = 2LL * 8 * nodes * clusters / 3 + waiting + held;
	b.specs = malloc((size_t)cap * sizeof *b.specs);
	b.fspecs = malloc((size_t)cap * sizeof *b.fspecs);
	b.names = malloc((size_t)cap * sizeof *b.names);
	b.qnames = malloc((size_t)queues * sizeof *b.qnames);
	mu_fleet_t *f = NULL;
	int rc = b.specs && b.fspecs && b.names && b.qnames ? mu_fleet_new(NULL, &f) : MU_ENOMEM;
	if (rc == MU_OK)
		rc = build(&b, f);
	int64_t queued = 0;
	for (int32_t j = 0; rc == MU_OK && j < mu_fleet_njobs(f); j++) {
		mu_fleet_job_info_t ji;
		if (mu_fleet_job_info(f, j, &ji) == MU_OK && ji.state == MU_FJ_QUEUED)
			queued++;
	}
	printf("{\"clusters\": %d, \"nodes\": %d, \"queues\": %d, \"jobs\": %lld, \"queued\": %lld, "
	       "\"passes\": [", b.clusters, b.nodes, b.queues, (long long)b.njobs,
	       (long long)queued);
	for (int32_t p = 0; rc == MU_OK && p < b.passes; p++) {
		mu_fleet_reclaims_t r = {0};
		double t0 = cpu_us();
		rc = mu_fleet_reclaim(f, 10 * MIN, &r);
		double us = cpu_us() - t0;
		printf("%s{\"victims\": %zu, \"cpu_us\": %.0f}", p ? ", " : "", r.n, us);
		mu_fleet_reclaims_release(&r);
	}
	printf("]");
	if (rc == MU_OK && held > 0) {
		int32_t nheld = 0;
		mu_fleet_decisions_t d;
		mu_fleet_decisions_init(&d);
		rc = held_setup(&b, f, held, 10 * MIN, &nheld);
		double t0 = cpu_us();
		if (rc == MU_OK)
			rc = held_pass(f, 10 * MIN, &d);
		double us = cpu_us() - t0;
		printf(", \"held\": {\"clusters\": %d, \"jobs\": %lld, \"placed\": %zu, "
		       "\"cpu_us\": %.0f, \"decisions_per_s\": %.0f}", nheld, (long long)held, d.n,
		       us, us > 0 ? (double)d.n * 1e6 / us : 0.0);
		mu_fleet_decisions_release(&d);
	}
	printf("}\n");
	mu_fleet_free(f);
	free(b.specs);
	free(b.fspecs);
	free(b.names);
	free(b.qnames);
	if (rc) {
		fprintf(stderr, "bench_fleet_reclaim: %s\n", mu_strerror(rc));
		return 1;
	}
	return 0;
}

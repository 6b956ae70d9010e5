/*
 * bench_gang.c - decision time for gangs with a required topology level.
 *
 * 5,000 nodes with 8 GPUs each, in racks of 32 and blocks of 512.  For each
 * gang size (8 to 512 pods of 8 GPUs; required rack up to 32 pods, block
 * beyond) the benchmark submits gangs one at a time and times the cycle
 * that places each, keeping the cluster busy: gangs stay until the cluster
 * is 70% full, then the oldest finish.  Prints one JSON line per size.
 * Times are the thread's CPU time per decision (immune to other load).
 * Usage: bench_gang [--nodes N] [--rounds R]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "muster/engine.h"

/* Thread CPU time: on a shared machine, wall time measures the neighbours. */
static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static mu_engine_t *build(int nodes)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	mu_engine_t *e;
	if (mu_engine_new(&cfg, &e))
		return NULL;
	static const char *levels[] = {"block", "rack"};
	mu_topology_spec_t t = {"net", levels, 2};
	mu_engine_topology_upsert(e, &t);
	for (int i = 0; i < nodes; i++) {
		char name[32], rack[32], block[32];
		snprintf(name, sizeof name, "n%05d", i);
		snprintf(rack, sizeof rack, "r%d", i / 32);
		snprintf(block, sizeof block, "b%d", i / 512);
		mu_label_t labels[] = {{"block", block}, {"rack", rack}};
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		n.name = name;
		n.labels = labels;
		n.nlabels = 2;
		n.alloc.v[MU_RES_CPU] = 128000;
		n.alloc.v[MU_RES_MEM] = 1LL << 40;
		n.alloc.v[MU_RES_GPU] = 8;
		n.alloc.v[MU_RES_PODS] = 110;
		mu_engine_node_upsert(e, &n, NULL);
	}
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(e, &q);
	return e;
}

/* Runs `rounds` gangs of `pods` pods; prints the decision-time figures. */
static int run_size(int nodes, int pods, int rounds)
{
	mu_engine_t *e = build(nodes);
	if (!e)
		return 1;
	const char *level = pods <= 32 ? "rack" : "block";
	double *t = calloc((size_t)rounds, sizeof *t);
	mu_id_t *live = calloc((size_t)rounds, sizeof *live);
	mu_decisions_t d;
	mu_decisions_init(&d);
	int nlive = 0, oldest = 0, placed = 0;
	long long busy = 0, cap = (long long)nodes * 8;
	for (int i = 0; i < rounds; i++) {
		while (busy + pods * 8 > cap * 7 / 10 && oldest < nlive) {
			mu_engine_job_finish(e, live[oldest++], i);
			busy -= pods * 8;
		}
		char name[32];
		snprintf(name, sizeof name, "g%d", i);
		mu_podset_spec_t ps;
		memset(&ps, 0, sizeof ps);
		ps.replicas = pods;
		ps.req.v[MU_RES_CPU] = 8000;
		ps.req.v[MU_RES_GPU] = 8;
		mu_job_spec_t j;
		memset(&j, 0, sizeof j);
		j.name = name;
		j.queue = "q";
		j.preemptible = true;
		j.podsets = &ps;
		j.npodsets = 1;
		j.topo.required = level;
		mu_id_t id;
		if (mu_engine_job_submit(e, &j, i, &id))
			return 1;
		d.n = 0;
		double t0 = now_us();
		mu_engine_cycle(e, i, &d);
		t[i] = now_us() - t0;
		mu_job_info_t info;
		mu_engine_job_info(e, id, &info);
		if (info.bound == pods) {
			live[nlive++] = id;
			busy += pods * 8;
			placed++;
		} else {
			mu_engine_job_finish(e, id, i);
		}
	}
	double sum = 0;
	for (int i = 0; i < rounds; i++)
		sum += t[i];
	qsort(t, (size_t)rounds, sizeof *t, cmp_d);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"shape\": \"gang-topology\", \"nodes\": %d, \"pods\": %d, \"level\": \"%s\", "
	       "\"gangs\": %d, \"placed\": %d, \"decisions_per_s\": %.0f, \"p50_us\": %.1f, "
	       "\"p99_us\": %.1f, \"peak_rss_mb\": %ld}\n",
	       nodes, pods, level, rounds, placed, rounds / (sum / 1e6), t[rounds / 2],
	       t[(rounds * 99) / 100], ru.ru_maxrss / 1024);
	mu_decisions_release(&d);
	mu_engine_free(e);
	free(t);
	free(live);
	return 0;
}

int main(int argc, char **argv)
{
	int nodes = 5000, rounds = 200;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--nodes"))
			nodes = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[i + 1]);
	}
	if (nodes < 512 || rounds < 1) {
		fprintf(stderr, "usage: bench_gang [--nodes N>=512] [--rounds R]\n");
		return 2;
	}
	static const int sizes[] = {8, 16, 32, 64, 128, 256, 512};
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
		if (run_size(nodes, sizes[s], rounds))
			return 1;
	return 0;
}

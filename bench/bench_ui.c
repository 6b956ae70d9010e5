/*
 * bench_ui.c - the live UI's server side at scale, with a synthetic
 * provider: 5,000 nodes of 8 GPUs (40,000 GPUs) in 125 racks, 50,000 pods
 * in 20,000 jobs (8,000 pending) over 40 queues.  It times, with
 * CLOCK_MONOTONIC over 5 runs (median), taking a snapshot
 * (mu_web_tick) and answering the endpoints the first pages read: jobs
 * (first page of 50, sorted by submission), queues (with 24 h of history
 * at one point a minute), heatmap and summary; one JSON line each, with
 * the answer's size.  Figures only; it never fails on time.
 *
 *   bench_ui [--nodes N] [--pods N]
 *   bench_ui --serve SECONDS [--nodes N] [--pods N]
 *
 * --serve also fills the 24 h history (from snapshots without jobs, to
 * be quick), then serves the UI on an ephemeral
 * 127.0.0.1 port for SECONDS, printing "serving http://127.0.0.1:PORT"
 * first, so that a browser can measure the page (bench/ui_page.js;
 * bench/run.sh does both).  No token.
 */
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "muster/web.h"

typedef struct synth {
	int nodes, pods, tick;
	bool light;   /* queues and nodes only: to fill the history fast */
} synth_t;

/* Fills the snapshot: a deterministic cluster that shifts a little with
 * every call (tick), so that events and history have something to show. */
static int synth_snap(void *ctx, mu_web_snap_t *s)
{
	synth_t *y = ctx;
	char a[64], b[64];
	int nq = 40, njobs = y->pods * 2 / 5, rc = mu_web_snap_set_title(s, "bench_ui (synthetic)");
	for (int i = 0; i < nq && !rc; i++) {
		snprintf(a, sizeof a, "team-%02d", i);
		snprintf(b, sizeof b, "org-%d", i % 4);
		mu_web_queue_t q = {.name = a, .parent = b, .deserved = {1000, 8000, 6e13},
				    .limit = {-1, -1, -1}, .fair = {900 + i, 7000, 5e13},
				    .used = {800 + 10 * ((i + y->tick) % 7), 6000, 4e13},
				    .pending = 200, .running = 300};
		rc = mu_web_snap_add_queue(s, &q);
	}
	for (int i = 0; i < 4 && !rc; i++) {
		snprintf(a, sizeof a, "org-%d", i);
		mu_web_queue_t q = {.name = a, .deserved = {10000, 0, 0}, .limit = {-1, -1, -1}};
		rc = mu_web_snap_add_queue(s, &q);
	}
	for (int j = 0, p = 0; j < njobs && !rc && !y->light; j++) {
		int np = j % 4 == 0 ? 8 : 1 + j % 2; /* 8-pod gangs and 1-2 pod jobs */
		bool pending = (j + y->tick) % 5 < 2;
		snprintf(a, sizeof a, "j:team-%02d/job-%06d", j % nq, j);
		mu_web_job_t jb = {.key = a, .name = strchr(a, '/') + 1, .ns = "default", .queue = "team-00",
				   .type = j % 3 ? "train" : "inference", .kind = np > 1 ? "job" : "pod",
				   .state = pending ? MU_WEB_PENDING : MU_WEB_RUNNING, .pods = np,
				   .bound = pending ? 0 : np, .min_member = np, .gpus = np * 2.0,
				   .submitted_ms = 1700000000000LL + j * 1000LL,
				   .reason = pending ? "0/5000 nodes are available: 5000 insufficient nvidia.com/gpu" : NULL,
				   .why = pending ? "Unschedulable" : NULL};
		char qn[16];
		snprintf(qn, sizeof qn, "team-%02d", j % nq);
		jb.queue = qn;
		rc = mu_web_snap_add_job(s, &jb);
		for (int k = 0; k < np && p < y->pods && !rc; k++, p++) {
			snprintf(b, sizeof b, "job-%06d-%d", j, k);
			char node[24];
			snprintf(node, sizeof node, "node-%05d", p % y->nodes);
			mu_web_pod_t pd = {.job_key = a, .name = b, .ns = "default", .node = pending ? NULL : node,
					   .phase = pending ? "Pending" : "Running", .gpus = pending ? 0 : 3u << (2 * (k % 4)),
					   .numa = pending ? -1 : k % 2, .nic = -1};
			rc = mu_web_snap_add_pod(s, &pd);
		}
	}
	for (int n = 0; n < y->nodes && !rc; n++) {
		snprintf(a, sizeof a, "node-%05d", n);
		snprintf(b, sizeof b, "rack-%03d", n / 40);
		mu_web_node_t nd = {.name = a, .rack = b, .levels = "block=b0 rack=r0", .gpu_model = "H100",
				    .ready = n % 97 != 0, .ngpu = 8, .cpu_alloc = 96, .mem_alloc = 1e12, .pods = 4};
		for (int g = 0; g < 8; g++)
			nd.gpu[g] = (uint8_t)((n * 7 + g * 3 + y->tick) % 11 < 6 ? MU_WEB_GPU_USED :
					      (n + g) % 13 == 0 ? MU_WEB_GPU_FRAG :
					      (n + g) % 29 == 0 ? MU_WEB_GPU_RESERVED : MU_WEB_GPU_FREE);
		if (!nd.ready)
			memset(nd.gpu, MU_WEB_GPU_DOWN, sizeof nd.gpu);
		rc = mu_web_snap_add_node(s, &nd);
	}
	y->tick++;
	return rc;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static const char *arg_of(void *ctx, const char *key)
{
	const char *const *kv = ctx;
	size_t n = strlen(key);
	for (; kv && *kv; kv++)
		if (!strncmp(*kv, key, n) && (*kv)[n] == '=')
			return *kv + n + 1;
	return NULL;
}

/* One endpoint, 5 runs; prints a JSON line. */
static void time_get(mu_web_t *w, const char *name, const char *path, const char *const *args)
{
	double t[5];
	size_t len = 0;
	for (int i = 0; i < 5; i++) {
		mu_web_resp_t r;
		double t0 = now_ms();
		mu_web_get(w, path, arg_of, (void *)args, NULL, &r);
		t[i] = now_ms() - t0;
		len = r.len;
		mu_web_resp_release(&r);
	}
	qsort(t, 5, sizeof *t, cmp_d);
	printf("{\"bench\": \"ui-%s\", \"median_ms\": %.2f, \"bytes\": %zu}\n", name, t[2], len);
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	(void)method, (void)version, (void)upload, (void)upload_size, (void)con_cls;
	return (enum MHD_Result)mu_web_mhd_answer(cls, c, url);
}

int main(int argc, char **argv)
{
	synth_t y = {5000, 50000, 0, false};
	int serve = -1;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--nodes"))
			y.nodes = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--pods"))
			y.pods = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--serve"))
			serve = atoi(argv[i + 1]);
		else
			break;
	}
	if (y.nodes < 1 || y.pods < 1 || (argc > 1 && argc % 2 == 0)) {
		fprintf(stderr, "usage: bench_ui [--serve SECONDS] [--nodes N] [--pods N]\n");
		return 2;
	}
	mu_web_provider_t p = {&y, synth_snap, NULL};
	mu_web_opts_t o;
	mu_web_opts_defaults(&o);
	mu_web_t *w = NULL;
	if (mu_web_new(&p, &o, &w))
		return 1;
	int64_t t = 1700000000000LL;
	double ts[5];
	for (int i = 0; i < 5; i++) {
		double t0 = now_ms();
		mu_web_tick(w, t += 60000);
		ts[i] = now_ms() - t0;
	}
	qsort(ts, 5, sizeof *ts, cmp_d);
	printf("{\"bench\": \"ui-snapshot\", \"nodes\": %d, \"pods\": %d, \"median_ms\": %.2f}\n", y.nodes,
	       y.pods, ts[2]);
	const char *jobs[] = {"limit=50", NULL}, *pend[] = {"state=pending", "sort=gpus", "limit=50", NULL};
	time_get(w, "jobs-first-page", "/ui/api/jobs", jobs);
	time_get(w, "jobs-pending-by-gpus", "/ui/api/jobs", pend);
	time_get(w, "queues", "/ui/api/queues", NULL);
	time_get(w, "heatmap", "/ui/api/heatmap", NULL);
	time_get(w, "summary", "/ui/api/summary", NULL);
	if (serve >= 0) {
		y.light = true; /* a full day of history, then one full snapshot */
		for (int i = 0; i < 1434; i++)
			mu_web_tick(w, t += 60000);
		y.light = false;
		mu_web_tick(w, t += 60000);
		struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
							MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL,
							answer, w, MHD_OPTION_END);
		const union MHD_DaemonInfo *inf = d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
		if (!inf) {
			mu_web_free(w);
			return 1;
		}
		printf("serving http://127.0.0.1:%u\n", (unsigned)inf->port);
		fflush(stdout);
		sleep((unsigned)serve);
		mu_web_shutdown(w);
		MHD_stop_daemon(d);
	}
	mu_web_free(w);
	return 0;
}

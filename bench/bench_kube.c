/*
 * bench_kube.c - `muster scheduler` end to end through `muster up`:
 * binds per second and the time from a pod's creation to its bind (p50,
 * p99), for single pods and for gangs.
 *
 * In one process: a `muster up` server (no fsync; --fsync: fsync on every
 * commit, muster up's default) with N simulated nodes
 * (8 GPUs, 64 CPUs each), the scheduler daemon in a thread (no leader
 * election, 4 writers), a watcher that notes when each pod is first seen
 * bound, and 4 creator threads over kept-alive connections that create the
 * single pods (100m CPU) and then the gangs (a muster PodGroup of 16 and
 * its 16 one-GPU pods).  Times are the client's: a pod's latency runs from
 * just before its create request (and, separately, from the server's answer
 * to it) to the watch event that shows it bound.  MUSTER_BENCH_WORKERS and
 * MUSTER_BENCH_LOG set the daemon's writers and log level.
 *
 * With --backlog the scheduler starts only once every pod exists, so its
 * binds per second are measured on their own (draining the backlog), with
 * the CPU time the drain cost per bind: cpu_ms_per_bind (server and
 * daemon), and with --scheduler server_ and scheduler_cpu_ms_per_bind
 * apart; the bench's own watcher (watcher_cpu_ms_per_bind, its thread's
 * CPU clock) is left out of them.  Two cores bound binds/s by 2,000 over
 * cpu_ms_per_bind, a figure the machine's load moves far less than the
 * rate.  The watcher parses only events that name a node, without their
 * managedFields.
 *
 * With --scheduler PATH the daemon is not a thread but its own process,
 * `PATH scheduler --kubeconfig K --no-leader-elect` (PATH is a muster
 * binary, e.g. build/muster), so that its memory can be measured apart
 * from the API server's: once every pod is bound (or the run gives up),
 * the bench prints the process's resident set (VmRSS) and its peak (VmHWM)
 * from /proc/PID/status, then stops it with SIGTERM.
 *
 * --shapes K (the twenty-second round): the single pods are of K shapes,
 * pod i of shape i % K: (100 + i % K)m CPU and a share of one GPU
 * (gpu-fraction 0.1 to 0.9, by i % 9), so that the live mix of
 * `--policy muster` (and fgd, muster-supply) has K shapes to keep.
 * --live L: at most L single pods at once (a busy cluster's churn):
 * before creating pod i >= L a creator waits (5 s at most) until pod
 * i - L is bound and deletes it; a pod deleted counts as bound.  With
 * --scheduler the daemon's CPU per bind is printed without --backlog too.
 *
 * Default: 1,000 nodes, 5,000 pods, 50 gangs (well under 2 minutes).
 * --full: 5,000 nodes, 50,000 pods, 500 gangs.  --nodes/--pods/--gangs N
 * override.  --audit-policy-file F --audit-log-path L give the server an
 * audit log, to weigh its cost.  Every wait is bounded (the run gives up after --timeout s).
 * Prints one JSON line per figure.
 */
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <curl/curl.h>

#include "kube/kube_int.h"
#include "muster/apiserver.h"
#include "muster/kube.h"

#define CREATORS 4
#define GANG 16

typedef struct bench {
	int nodes, pods, gangs, total;
	int fsync;                   /* the server fsyncs every commit */
	int shapes;                  /* --shapes K: single pods of K shapes; 0: one */
	int live;                    /* --live L: at most L single pods at once; 0: all */
	double *t_create, *t_bound;  /* mono seconds; 0 = not yet */
	double *t_ack;               /* when the create was answered */
	atomic_int next;             /* next pod to create */
	atomic_int nbound;
	atomic_int stop;
	mu__kauth_t auth;
	volatile sig_atomic_t dstop;
	mu_kube_opts_t o;
	char err[512];
	const char *exe;             /* --scheduler: a muster binary to spawn */
	const char *audit_policy, *audit_log; /* the server's audit log (round 12); NULL = none */
	const char *kc;              /* the kubeconfig the spawned one reads */
	const char *dir;             /* scratch directory (its log) */
	pid_t pid;                   /* the spawned scheduler; 0 = none */
} bench_t;

extern char **environ;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Pod index from its name: s-N, or gG-K. */
static int pod_index(const bench_t *b, const char *name)
{
	int g, k;
	if (sscanf(name, "s-%d", &k) == 1 && k >= 0 && k < b->pods)
		return k;
	if (sscanf(name, "g%d-%d", &g, &k) == 2 && g >= 0 && g < b->gangs && k >= 0 && k < GANG)
		return b->pods + g * GANG + k;
	return -1;
}

static int on_event(void *arg, char *line, size_t len)
{
	bench_t *b = arg;
	if (!strstr(line, "\"nodeName\"")) /* not bound: nothing to note, unparsed */
		return atomic_load(&b->stop);
	json_t *ev = json_loadb(line, mu__kstrip_mf(line, len), 0, NULL);
	const char *node = mu__kjs(ev, "object.spec.nodeName"), *name = mu__kjs(ev, "object.metadata.name");
	int i = name && node && *node ? pod_index(b, name) : -1;
	if (i >= 0 && b->t_bound[i] == 0) {
		b->t_bound[i] = now_s();
		atomic_fetch_add(&b->nbound, 1);
	}
	json_decref(ev);
	return atomic_load(&b->stop);
}

static void *watcher(void *arg)
{
	bench_t *b = arg;
	mu__kc_t *c;
	if (mu__kc_new(&b->auth, &c))
		return NULL;
	while (!atomic_load(&b->stop)) {
		long st;
		mu__kc_stream(c, "/api/v1/pods?watch=true&timeoutSeconds=3600", 3600000L, on_event, b, &b->stop,
			      &st);
	}
	mu__kc_free(c);
	return NULL;
}

/* --live: waits (5 s at most) until single pod k is bound, then deletes
 * it; counted as bound if it never was, so that the run still ends. */
static void churn(bench_t *b, mu__kc_t *c, int k)
{
	for (int w = 0; w < 500 && b->t_bound[k] == 0 && !atomic_load(&b->stop); w++) {
		struct timespec ts = {0, 10000000L};
		nanosleep(&ts, NULL);
	}
	char path[128];
	snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/s-%d", k);
	mu__kresp_t r;
	mu__kc_do(c, "DELETE", path, NULL, NULL, 30000, &r);
	mu__kresp_release(&r);
	if (b->t_bound[k] == 0) {
		b->t_bound[k] = now_s();
		atomic_fetch_add(&b->nbound, 1);
	}
}

static void *creator(void *arg)
{
	bench_t *b = arg;
	mu__kc_t *c;
	char body[1024];
	if (mu__kc_new(&b->auth, &c))
		return NULL;
	for (int i; !atomic_load(&b->stop) && (i = atomic_fetch_add(&b->next, 1)) < b->total;) {
		if (i < b->pods && b->live > 0 && i >= b->live)
			churn(b, c, i - b->live);
		if (i < b->pods && b->shapes > 0)
			snprintf(body, sizeof body, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
				 "\"s-%d\",\"annotations\":{\"gpu-fraction\":\"0.%d\"}},\"spec\":{\"schedulerName\":"
				 "\"muster\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":"
				 "{\"requests\":{\"cpu\":\"%dm\",\"memory\":\"128Mi\"}}}]}}", i, 1 + i % 9,
				 100 + i % b->shapes);
		else if (i < b->pods)
			snprintf(body, sizeof body, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
				 "\"s-%d\"},\"spec\":{\"schedulerName\":\"muster\",\"containers\":[{\"name\":\"c\","
				 "\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":"
				 "\"128Mi\"}}}]}}", i);
		else
			snprintf(body, sizeof body, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
				 "\"g%d-%d\",\"labels\":{\"muster.io/pod-group\":\"g%d\"}},\"spec\":{\"schedulerName\":"
				 "\"muster\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"limits\":"
				 "{\"nvidia.com/gpu\":\"1\"}}}]}}", (i - b->pods) / GANG, (i - b->pods) % GANG,
				 (i - b->pods) / GANG);
		b->t_create[i] = now_s();
		mu__kresp_t r;
		mu__kc_do(c, "POST", "/api/v1/namespaces/default/pods", "application/json", body, 30000, &r);
		b->t_ack[i] = now_s();
		if (r.status != 201)
			fprintf(stderr, "bench_kube: create %d: HTTP %ld %.200s\n", i, r.status, r.body ? r.body : "");
		mu__kresp_release(&r);
	}
	mu__kc_free(c);
	return NULL;
}

static void *daemon_thread(void *arg)
{
	bench_t *b = arg;
	if (mu_kube_run(&b->o, b->err, sizeof b->err))
		fprintf(stderr, "bench_kube: scheduler: %s\n", b->err);
	return NULL;
}

/* Starts the scheduler: a thread running mu_kube_run(), or with --scheduler
 * the process `EXE scheduler --kubeconfig KC --no-leader-elect`, its output
 * in DIR/scheduler.log.  Returns 0, or -1 when it could not start. */
static int scheduler_start(bench_t *b, pthread_t *th)
{
	if (!b->exe)
		return pthread_create(th, NULL, daemon_thread, b) ? -1 : 0;
	char log[700];
	snprintf(log, sizeof log, "%s/scheduler.log", b->dir);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	char *argv[] = {(char *)b->exe, "scheduler", "--kubeconfig", (char *)b->kc, "--no-leader-elect", NULL};
	int rc = posix_spawn(&b->pid, b->exe, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		fprintf(stderr, "bench_kube: could not start %s: %s\n", b->exe, strerror(rc));
		b->pid = 0;
		return -1;
	}
	return 0;
}

/* The spawned scheduler's VmRSS and VmHWM (kB) from /proc/PID/status;
 * -1 where not found. */
static void scheduler_rss(const bench_t *b, long *rss, long *hwm)
{
	char path[64], line[256];
	*rss = *hwm = -1;
	snprintf(path, sizeof path, "/proc/%d/status", (int)b->pid);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof line, f)) {
		if (!strncmp(line, "VmRSS:", 6))
			*rss = atol(line + 6);
		else if (!strncmp(line, "VmHWM:", 6))
			*hwm = atol(line + 6);
	}
	if (f)
		fclose(f);
}

/* Stops the scheduler (SIGTERM to the process, or the thread's stop flag)
 * and waits for it. */
static void scheduler_stop(bench_t *b, pthread_t th)
{
	if (!b->exe) {
		b->dstop = 1;
		pthread_join(th, NULL);
		return;
	}
	if (b->pid > 0) {
		kill(b->pid, SIGTERM);
		waitpid(b->pid, NULL, 0);
	}
}

/* CPU seconds (user + system) used so far by this process, and by the
 * spawned scheduler (from /proc/PID/stat; 0 when there is none). */
static double cpu_self(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

/* CPU seconds used so far by thread th (the bench's watcher, whose share
 * is not the server's). */
static double cpu_thread(pthread_t th)
{
	clockid_t id;
	struct timespec ts;
	if (pthread_getcpuclockid(th, &id) || clock_gettime(id, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_child(const bench_t *b)
{
	char path[64], buf[1024];
	unsigned long ut = 0, st = 0;
	if (b->pid <= 0)
		return 0;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)b->pid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* fields 14 and 15 follow the name */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* p50 and p99 (ms) of the latencies of pods [from, to): from the create
 * request sent (from[]) to the bind seen. */
static void latency(const bench_t *b, const double *from, int lo, int hi, const char *what)
{
	double *v = malloc((size_t)(hi - lo + 1) * sizeof *v);
	int n = 0;
	for (int i = lo; v && i < hi; i++)
		if (b->t_bound[i] > 0 && from[i] > 0)
			v[n++] = (b->t_bound[i] - from[i]) * 1000;
	if (n) {
		qsort(v, (size_t)n, sizeof *v, cmp_d);
		printf("{\"bench\": \"kube_%s\", \"pods\": %d, \"p50_ms\": %.1f, \"p99_ms\": %.1f, "
		       "\"max_ms\": %.1f}\n", what, n, v[n / 2], v[(int)((double)n * 0.99)], v[n - 1]);
	}
	free(v);
}

/* Writes the cluster file and starts the server. */
static mu_apiserver_t *start_server(const bench_t *b, const char *dir)
{
	char cluster[512], err[512];
	snprintf(cluster, sizeof cluster, "%s/cluster.yaml", dir);
	FILE *f = fopen(cluster, "w");
	if (!f)
		return NULL;
	fprintf(f, "apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: n}\nspec:\n  count: %d\n"
		   "  namePrefix: n-\n  gpuModel: A100\n  allocatable: {cpu: \"64\", memory: 512Gi, "
		   "nvidia.com/gpu: \"8\", pods: \"110\"}\n  topology:\n    - {label: muster.io/rack, every: 16, "
		   "prefix: rack-}\n", b->nodes);
	fclose(f);
	mu_apiserver_opts_t o;
	mu_apiserver_opts_defaults(&o);
	char data[512];
	snprintf(data, sizeof data, "%s/data", dir);
	o.listen = "127.0.0.1:0";
	o.data_dir = data;
	o.cluster_file = cluster;
	o.fsync = b->fsync;
	o.quiet = 1;
	o.watch_cache = 400000;
	o.audit_policy = b->audit_policy; /* --audit-policy-file's cost (both or neither) */
	o.audit_log = b->audit_log;
	mu_apiserver_t *s = NULL;
	if (mu_apiserver_start(&o, &s, err, sizeof err) != MU_OK)
		fprintf(stderr, "bench_kube: server: %s\n", err);
	return s;
}

int main(int argc, char **argv)
{
	bench_t *b = calloc(1, sizeof *b);
	int timeout = 110;
	bool backlog = false;
	b->nodes = 1000, b->pods = 5000, b->gangs = 50;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--full"))
			b->nodes = 5000, b->pods = 50000, b->gangs = 500, timeout = 600;
		else if (!strcmp(argv[i], "--backlog"))
			backlog = true;
		else if (!strcmp(argv[i], "--fsync"))
			b->fsync = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--nodes"))
			b->nodes = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--pods"))
			b->pods = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--gangs"))
			b->gangs = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--shapes"))
			b->shapes = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--live"))
			b->live = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--timeout"))
			timeout = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--audit-policy-file"))
			b->audit_policy = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--audit-log-path"))
			b->audit_log = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--scheduler"))
			b->exe = argv[++i];
		else {
			fprintf(stderr, "usage: bench_kube [--full] [--backlog] [--fsync] [--nodes N] [--pods N] [--gangs N] "
				"[--shapes K] [--live L] [--timeout S] [--scheduler MUSTER] [--audit-policy-file F --audit-log-path F]\n");
			return 2;
		}
	}
	b->total = b->pods + b->gangs * GANG;
	b->t_create = calloc((size_t)b->total + 1, sizeof *b->t_create);
	b->t_bound = calloc((size_t)b->total + 1, sizeof *b->t_bound);
	b->t_ack = calloc((size_t)b->total + 1, sizeof *b->t_ack);
	char dir[] = "/tmp/muster-bench-kube-XXXXXX", kc[600], err[512];
	if (!mkdtemp(dir))
		return 1;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	double t0 = now_s();
	mu_apiserver_t *s = start_server(b, dir);
	if (!s)
		return 1;
	/* the allocator the in-process server runs on (jemalloc in the
	 * release build, with heap.c's settings, as build/muster) */
	printf("{\"bench\": \"kube_setup\", \"nodes\": %d, \"server_start_s\": %.2f, \"allocator\": \"%s\"}\n",
	       b->nodes, now_s() - t0, mu__heap_is_jemalloc() ? "jemalloc" : "glibc");
	snprintf(kc, sizeof kc, "%s/kubeconfig", dir);
	mu_kube_config_t cfg;
	if (mu_apiserver_write_kubeconfig(s, kc) || mu_kube_config_load(kc, NULL, &cfg, err, sizeof err)) {
		fprintf(stderr, "bench_kube: kubeconfig: %s\n", err);
		return 1;
	}
	b->kc = kc;
	b->dir = dir;
	mu__kauth_init(&b->auth, &cfg);
	mu_kube_opts_defaults(&b->o);
	b->o.cfg = &cfg;
	b->o.leader_elect = false;
	b->o.log_level = getenv("MUSTER_BENCH_LOG") ? atoi(getenv("MUSTER_BENCH_LOG")) : 0;
	if (getenv("MUSTER_BENCH_WORKERS"))
		b->o.workers = atoi(getenv("MUSTER_BENCH_WORKERS"));
	b->o.stop = &b->dstop;
	pthread_t dth, wth, cth[CREATORS];
	if (!backlog && scheduler_start(b, &dth))
		return 1;
	pthread_create(&wth, NULL, watcher, b);
	/* the gangs' PodGroups first, so that no gang pod waits for one */
	mu__kc_t *c;
	mu__kc_new(&b->auth, &c);
	for (int g = 0; g < b->gangs; g++) {
		char body[256];
		mu__kresp_t r;
		snprintf(body, sizeof body, "{\"apiVersion\":\"muster.io/v1alpha1\",\"kind\":\"PodGroup\",\"metadata\":"
			 "{\"name\":\"g%d\"},\"spec\":{\"minMember\":%d}}", g, GANG);
		mu__kc_do(c, "POST", "/apis/muster.io/v1alpha1/namespaces/default/podgroups", NULL, body, 30000, &r);
		mu__kresp_release(&r);
	}
	mu__kc_free(c);
	sleep(1); /* the daemon lists the nodes */
	double start = now_s(), dstart = 0, cpu0 = 0, wcpu0 = 0;
	for (int i = 0; i < CREATORS; i++)
		pthread_create(&cth[i], NULL, creator, b);
	if (backlog) {
		for (int i = 0; i < CREATORS; i++)
			pthread_join(cth[i], NULL);
		dstart = now_s();
		cpu0 = cpu_self();
		wcpu0 = cpu_thread(wth);
		if (scheduler_start(b, &dth))
			return 1;
	}
	while (atomic_load(&b->nbound) < b->total && now_s() - start < timeout) {
		struct timespec ts = {0, 50000000L};
		nanosleep(&ts, NULL);
	}
	double cpu_w = cpu_thread(wth) - wcpu0, cpu_srv = cpu_self() - cpu0 - cpu_w, cpu_sch = cpu_child(b);
	double created = 0, first = 1e300, last = 0;
	for (int i = 0; i < b->total; i++) {
		created = b->t_create[i] > created ? b->t_create[i] : created;
		if (b->t_create[i] > 0 && b->t_create[i] < first)
			first = b->t_create[i];
		if (b->t_bound[i] > last)
			last = b->t_bound[i];
	}
	int nb = atomic_load(&b->nbound);
	printf("{\"bench\": \"kube_end_to_end\", \"nodes\": %d, \"pods\": %d, \"gangs\": %d, \"bound\": %d, "
	       "\"create_s\": %.2f, \"creates_per_s\": %.0f, \"bind_span_s\": %.2f, \"binds_per_s\": %.0f}\n",
	       b->nodes, b->pods, b->gangs, nb, created - first, b->total / (created - first), last - first,
	       nb / (last - first));
	if (backlog) {
		/* CPU per bind of the drain: the server and the daemon (a thread
		 * of this process, or the spawned one), the bench's watcher apart */
		double per = nb ? 1000.0 / nb : 0;
		printf("{\"bench\": \"kube_backlog\", \"pods\": %d, \"bound\": %d, \"drain_s\": %.2f, "
		       "\"binds_per_s\": %.0f, \"cpu_ms_per_bind\": %.3f", b->total, nb, last - dstart,
		       nb / (last - dstart), (cpu_srv + cpu_sch) * per);
		if (b->exe)
			printf(", \"server_cpu_ms_per_bind\": %.3f, \"scheduler_cpu_ms_per_bind\": %.3f",
			       cpu_srv * per, cpu_sch * per);
		printf(", \"watcher_cpu_ms_per_bind\": %.3f}\n", cpu_w * per);
	}
	else
		latency(b, b->t_create, 0, b->pods, "single_create_to_bind");
	if (!backlog && b->exe && nb)
		printf("{\"bench\": \"kube_scheduler_cpu\", \"pods\": %d, \"bound\": %d, "
		       "\"scheduler_cpu_ms_per_bind\": %.3f}\n", b->total, nb, cpu_sch * 1000.0 / nb);
	if (!backlog) {
		latency(b, b->t_create, b->pods, b->total, "gang_create_to_bind");
		latency(b, b->t_ack, 0, b->total, "created_to_bind");
	}
	if (b->exe) {
		long rss, hwm;
		scheduler_rss(b, &rss, &hwm);
		printf("{\"bench\": \"kube_scheduler_rss\", \"nodes\": %d, \"pods\": %d, \"bound\": %d, "
		       "\"rss_mb\": %.1f, \"peak_rss_mb\": %.1f}\n", b->nodes, b->total, nb, rss / 1024.0,
		       hwm / 1024.0);
	}
	atomic_store(&b->stop, 1);
	for (int i = 0; i < CREATORS && !backlog; i++)
		pthread_join(cth[i], NULL);
	pthread_join(wth, NULL);
	scheduler_stop(b, dth);
	mu__kauth_release(&b->auth);
	mu_kube_config_release(&cfg);
	mu_apiserver_stop(s);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "bench_kube: could not remove %s\n", dir);
	int rc = nb == b->total ? 0 : 1;
	free(b->t_create);
	free(b->t_bound);
	free(b->t_ack);
	free(b);
	curl_global_cleanup();
	return rc;
}

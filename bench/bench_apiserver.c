/*
 * bench_apiserver.c - figures for `muster up`: pod creates/s and binds/s
 * over HTTP (4 client threads with kept-alive connections), watch fan-out
 * (10 watchers, every pod event delivered to each), and with 5,000
 * simulated nodes and 50,000 pods the resident memory and the time to list
 * every pod (one answer, and pages of 500).
 *
 * It starts its own server in-process on a free loopback port with a
 * temporary data directory and removes it at the end; every loop is
 * bounded by a request count and the whole run by a deadline.  Prints one
 * JSON line per figure.  Last, a second server with fsync on every commit
 * takes 2,000 creates and 2,000 binds; --fsync-only runs only that part.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "apiserver/apiserver_int.h"
#include "muster/apiserver.h"

#define THREADS 4
#define NODES 5000
#define PODS 50000
#define BINDS 5000
#define WATCHERS 10
#define WATCH_PODS 2000

static int g_port;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

/* --- a kept-alive HTTP/1.1 connection ----------------------------------- */

typedef struct conn {
	int fd;
	char *buf;
	size_t len, cap;
} conn_t;

static int conn_open(conn_t *c)
{
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)g_port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct timeval tv = {30, 0};
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	c->cap = 1 << 16;
	c->len = 0;
	c->buf = malloc(c->cap);
	return c->fd >= 0 && c->buf && connect(c->fd, (struct sockaddr *)&sa, sizeof sa) == 0 ? 0 : -1;
}

static void conn_close(conn_t *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
}

/* One request; returns the status (or -1) and leaves the body in c->buf
 * (NUL-terminated), its length in *blen. */
static int conn_do(conn_t *c, const char *method, const char *path, const char *body, size_t *blen)
{
	char head[1024];
	size_t bl = body ? strlen(body) : 0;
	int hl = snprintf(head, sizeof head, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
			  "Content-Length: %zu\r\n\r\n", method, path, bl);
	if (send(c->fd, head, (size_t)hl, MSG_NOSIGNAL) != hl ||
	    (bl && send(c->fd, body, bl, MSG_NOSIGNAL) != (ssize_t)bl))
		return -1;
	c->len = 0;
	mu__head_t h;
	size_t need = 0;
	bool have_head = false;
	for (;;) {
		if (!have_head && mu__parse_head(c->buf, c->len, &h) == MU_OK) {
			have_head = true;
			const char *cl = mu__head_get(&h, "Content-Length");
			need = h.head_len + (cl ? (size_t)atol(cl) : 0);
		}
		if (have_head && c->len >= need)
			break;
		if (c->len + 65536 > c->cap) {
			char *nb = realloc(c->buf, c->cap * 2);
			if (!nb)
				return -1;
			c->buf = nb;
			c->cap *= 2;
		}
		ssize_t r = recv(c->fd, c->buf + c->len, c->cap - c->len - 1, 0);
		if (r <= 0)
			return -1;
		c->len += (size_t)r;
	}
	memmove(c->buf, c->buf + h.head_len, need - h.head_len);
	*blen = need - h.head_len;
	c->buf[*blen] = '\0';
	return atoi(h.start[1]);
}

/* --- load --------------------------------------------------------------- */

typedef struct job {
	int from, to;      /* pod indexes */
	int kind;          /* 0 create, 1 bind */
	int errors;
} job_t;

static void *worker(void *arg)
{
	job_t *j = arg;
	conn_t c;
	if (conn_open(&c) != 0) {
		j->errors = j->to - j->from;
		conn_close(&c);
		return NULL;
	}
	char body[1024], path[256];
	size_t bl;
	for (int i = j->from; i < j->to; i++) {
		int want;
		if (j->kind == 0) {
			snprintf(body, sizeof body,
				 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-%06d\",\"labels\":"
				 "{\"app\":\"bench\",\"shard\":\"s%d\"}},\"spec\":{\"schedulerName\":\"muster\",\"containers\":"
				 "[{\"name\":\"main\",\"image\":\"trainer:1\",\"resources\":{\"requests\":{\"cpu\":\"4\","
				 "\"memory\":\"16Gi\",\"nvidia.com/gpu\":\"1\"},\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
				 i, i % 16);
			snprintf(path, sizeof path, "/api/v1/namespaces/default/pods");
			want = 201;
		} else {
			snprintf(body, sizeof body,
				 "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p-%06d\"},"
				 "\"target\":{\"kind\":\"Node\",\"name\":\"n-%04d\"}}", i, i % NODES);
			snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/p-%06d/binding", i);
			want = 201;
		}
		if (conn_do(&c, "POST", path, body, &bl) != want)
			j->errors++;
	}
	conn_close(&c);
	return NULL;
}

/* Runs pods [from, to) of kind over THREADS connections; returns seconds. */
static double run_load(int from, int to, int kind, int *errors)
{
	pthread_t th[THREADS];
	job_t jobs[THREADS];
	double t0 = now_s();
	int per = (to - from + THREADS - 1) / THREADS;
	for (int i = 0; i < THREADS; i++) {
		jobs[i].from = from + i * per;
		jobs[i].to = from + (i + 1) * per < to ? from + (i + 1) * per : to;
		jobs[i].kind = kind;
		jobs[i].errors = 0;
		pthread_create(&th[i], NULL, worker, &jobs[i]);
	}
	*errors = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		*errors += jobs[i].errors;
	}
	return now_s() - t0;
}

/* --- watchers ----------------------------------------------------------- */

typedef struct watcher {
	int fd, events, target;
	double done_at;
	pthread_t th;
} watcher_t;

/* Reads a chunked watch stream, counting events (one per line), until
 * target events or the socket times out. */
static void *watch_main(void *arg)
{
	watcher_t *w = arg;
	char buf[65536];
	size_t chunk_left = 0;
	int state = 0; /* 0 head, 1 size line, 2 data, 3 data CRLF */
	char line[32];
	size_t ll = 0;
	int head_nl = 0;
	while (w->events < w->target) {
		ssize_t r = recv(w->fd, buf, sizeof buf, 0);
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++) {
			char ch = buf[i];
			if (state == 0) {
				head_nl = ch == '\n' ? head_nl + 1 : ch == '\r' ? head_nl : 0;
				if (head_nl == 2)
					state = 1;
			} else if (state == 1) {
				if (ch == '\n') {
					line[ll] = '\0';
					chunk_left = strtoul(line, NULL, 16);
					ll = 0;
					state = chunk_left ? 2 : 0;
				} else if (ll + 1 < sizeof line) {
					line[ll++] = ch;
				}
			} else if (state == 2) {
				w->events += ch == '\n';
				if (--chunk_left == 0)
					state = 3;
			} else if (ch == '\n') {
				state = 1;
			}
		}
	}
	w->done_at = now_s();
	return NULL;
}

static int watch_open(watcher_t *w, int64_t rv)
{
	conn_t c;
	if (conn_open(&c) != 0) {
		conn_close(&c);
		return -1;
	}
	free(c.buf);
	char req[512];
	int n = snprintf(req, sizeof req, "GET /api/v1/namespaces/default/pods?watch=1&resourceVersion=%lld"
			 "&labelSelector=app%%3Dbench HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", (long long)rv);
	w->fd = c.fd;
	w->events = 0;
	return send(w->fd, req, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -1;
}

/* --- main --------------------------------------------------------------- */

static int64_t current_rv(void)
{
	conn_t c;
	size_t bl;
	int64_t rv = -1;
	if (conn_open(&c) == 0 && conn_do(&c, "GET", "/api/v1/namespaces/kube-system/pods", NULL, &bl) == 200) {
		const char *p = strstr(c.buf, "\"resourceVersion\":\"");
		if (p)
			rv = atoll(p + 19);
	}
	conn_close(&c);
	return rv;
}

static void list_all(const char *name)
{
	conn_t c;
	size_t bl = 0;
	if (conn_open(&c) != 0) {
		conn_close(&c);
		return;
	}
	double t0 = now_s();
	int st = conn_do(&c, "GET", "/api/v1/pods", NULL, &bl);
	double t1 = now_s();
	size_t total = 0;
	int pages = 0;
	char path[1200] = "/api/v1/pods?limit=500";
	double t2 = now_s();
	while (pages < 1000 && conn_do(&c, "GET", path, NULL, &total) == 200) {
		pages++;
		const char *k = strstr(c.buf, "\"continue\":\"");
		if (!k)
			break;
		const char *e = strchr(k + 12, '"');
		snprintf(path, sizeof path, "/api/v1/pods?limit=500&continue=%.*s", (int)(e - k - 12), k + 12);
	}
	double t3 = now_s();
	printf("{\"bench\": \"%s\", \"nodes\": %d, \"pods\": %d, \"status\": %d, \"list_all_s\": %.3f, "
	       "\"list_all_mb\": %.1f, \"list_paged_500_s\": %.3f, \"pages\": %d, \"rss_mb\": %.1f}\n",
	       name, NODES, PODS, st, t1 - t0, (double)bl / 1e6, t3 - t2, pages, (double)rss_kb() / 1024);
	conn_close(&c);
}

int main(int argc, char **argv)
{
	bool fsync_only = argc > 1 && !strcmp(argv[1], "--fsync-only");
	if (argc > 1 && !fsync_only) {
		fprintf(stderr, "usage: bench_apiserver [--fsync-only]\n");
		return 2;
	}
	char dir[] = "/tmp/muster-bench-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char cluster[128], cmd[160];
	snprintf(cluster, sizeof cluster, "%s/cluster.yaml", dir);
	FILE *f = fopen(cluster, "w");
	if (!f)
		return 1;
	fprintf(f, "apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: n}\nspec:\n  count: %d\n"
		   "  namePrefix: n-\n  gpuModel: H100\n  allocatable: {cpu: \"192\", memory: 2Ti, nvidia.com/gpu: \"8\","
		   " pods: \"110\"}\n  topology:\n    - {label: muster.io/rack, every: 16, prefix: rack-}\n", NODES);
	fclose(f);
	mu_apiserver_opts_t o;
	mu_apiserver_opts_defaults(&o);
	char data[128];
	snprintf(data, sizeof data, "%s/data", dir);
	o.listen = "127.0.0.1:0";
	o.data_dir = data;
	o.cluster_file = cluster;
	o.quiet = 1;
	o.fsync = 0;
	o.heartbeat_s = 3600;
	mu_apiserver_t *s;
	char err[512];
	double t0 = now_s();
	if (fsync_only)
		goto fsync_part;
	if (mu_apiserver_start(&o, &s, err, sizeof err) != MU_OK) {
		fprintf(stderr, "bench_apiserver: %s\n", err);
		return 1;
	}
	g_port = mu_apiserver_port(s);
	printf("{\"bench\": \"apiserver_start\", \"nodes\": %d, \"start_s\": %.2f}\n", NODES, now_s() - t0);
	fflush(stdout);

	/* watch fan-out: 10 watchers see every create of WATCH_PODS pods */
	watcher_t w[WATCHERS];
	int64_t rv = current_rv();
	for (int i = 0; i < WATCHERS; i++) {
		w[i].target = WATCH_PODS;
		if (watch_open(&w[i], rv) == 0)
			pthread_create(&w[i].th, NULL, watch_main, &w[i]);
		else
			w[i].fd = -1;
	}
	int errors;
	double ts = now_s();
	double secs = run_load(0, WATCH_PODS, 0, &errors);
	double last = ts;
	int got = 0;
	for (int i = 0; i < WATCHERS; i++) {
		if (w[i].fd < 0)
			continue;
		pthread_join(w[i].th, NULL);
		close(w[i].fd);
		got += w[i].events;
		if (w[i].done_at > last)
			last = w[i].done_at;
	}
	printf("{\"bench\": \"apiserver_create\", \"pods\": %d, \"creates_per_s\": %.0f, \"errors\": %d, \"fsync\": false}\n",
	       WATCH_PODS, WATCH_PODS / secs, errors);
	printf("{\"bench\": \"apiserver_watch_fanout\", \"watchers\": %d, \"events_each\": %d, \"delivered\": %d, "
	       "\"events_per_s\": %.0f, \"lag_after_last_write_ms\": %.0f}\n", WATCHERS, WATCH_PODS, got,
	       got / (last - ts), (last - ts - secs) * 1000);
	fflush(stdout);

	/* up to PODS pods */
	secs = run_load(WATCH_PODS, PODS, 0, &errors);
	printf("{\"bench\": \"apiserver_create_bulk\", \"pods\": %d, \"creates_per_s\": %.0f, \"errors\": %d}\n",
	       PODS - WATCH_PODS, (PODS - WATCH_PODS) / secs, errors);
	fflush(stdout);
	/* binds of the first BINDS pods (the simulated kubelets then start them) */
	secs = run_load(0, BINDS, 1, &errors);
	printf("{\"bench\": \"apiserver_bind\", \"binds\": %d, \"binds_per_s\": %.0f, \"errors\": %d}\n", BINDS,
	       BINDS / secs, errors);
	fflush(stdout);

	list_all("apiserver_list_50k");
	mu_apiserver_stop(s);

fsync_part:
	/* creates and binds with fsync on every commit (the default of muster
	 * up); no nodes, so the binds name a node no kubelet starts pods on */
	snprintf(data, sizeof data, "%s/data2", dir);
	o.cluster_file = NULL;
	o.fsync = 1;
	if (mu_apiserver_start(&o, &s, err, sizeof err) == MU_OK) {
		g_port = mu_apiserver_port(s);
		secs = run_load(0, 2000, 0, &errors);
		printf("{\"bench\": \"apiserver_create\", \"pods\": 2000, \"creates_per_s\": %.0f, \"errors\": %d, \"fsync\": true}\n",
		       2000 / secs, errors);
		secs = run_load(0, 2000, 1, &errors);
		printf("{\"bench\": \"apiserver_bind\", \"binds\": 2000, \"binds_per_s\": %.0f, \"errors\": %d, \"fsync\": true}\n",
		       2000 / secs, errors);
		mu_apiserver_stop(s);
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : 1;
}

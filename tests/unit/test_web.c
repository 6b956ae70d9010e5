/*
 * test_web.c - the live UI's data side (src/web) without HTTP: a
 * synthetic provider, snapshots and their order, the JSON endpoints'
 * filters, sorting, pagination and argument errors, events derived from
 * two snapshots, the history ring, tokens and SSE messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/web.h"

/* The provider: njobs jobs over 2 queues, half pending; 3 nodes. */
typedef struct fake {
	int njobs;
	int running_from;   /* jobs >= this index run */
	int calls;
} fake_t;

static int fake_snap(void *ctx, mu_web_snap_t *s)
{
	fake_t *f = ctx;
	f->calls++;
	mu_web_snap_set_title(s, "test");
	mu_web_queue_t q = {.name = "a", .deserved = {8, 0, 0}, .limit = {-1, -1, -1}, .fair = {6, 0, 0},
			    .used = {4, 1, 0}, .pending = 1, .running = 1};
	mu_web_snap_add_queue(s, &q);
	q.name = "b";
	q.used[0] = 2;
	mu_web_snap_add_queue(s, &q);
	for (int i = 0; i < f->njobs; i++) {
		char key[32], name[32];
		snprintf(key, sizeof key, "j:ns/job-%03d", i);
		snprintf(name, sizeof name, "job-%03d", i);
		mu_web_job_t j = {.key = key, .name = name, .ns = i % 3 ? "ns" : "other",
				  .queue = i % 2 ? "b" : "a", .type = "train", .kind = "job",
				  .state = i >= f->running_from ? MU_WEB_RUNNING : MU_WEB_PENDING,
				  .pods = 2, .gpus = i, .submitted_ms = 1000 + i,
				  .reason = i >= f->running_from ? NULL : "0/3 nodes are available",
				  .why = "Unschedulable"};
		mu_web_snap_add_job(s, &j);
		mu_web_pod_t p = {.job_key = key, .name = name, .ns = "ns", .node = "n1",
				  .phase = "Running", .gpus = 0x6, .numa = 1, .nic = 0};
		mu_web_snap_add_pod(s, &p);
	}
	const char *names[3] = {"n2", "n1", "n0"}, *racks[3] = {"r1", "r0", "r1"};
	for (int i = 0; i < 3; i++) {
		mu_web_node_t n = {.name = names[i], .rack = racks[i], .ready = true, .ngpu = 4};
		n.gpu[0] = MU_WEB_GPU_USED;
		n.gpu[1] = (uint8_t)(i == 0 ? MU_WEB_GPU_FRAG : MU_WEB_GPU_FREE);
		mu_web_snap_add_node(s, &n);
	}
	return MU_OK;
}

/* Query arguments as "k=v" pairs of a NULL-ended list. */
static const char *args_of(void *ctx, const char *key)
{
	const char *const *kv = ctx;
	size_t n = strlen(key);
	for (; kv && *kv; kv++)
		if (!strncmp(*kv, key, n) && (*kv)[n] == '=')
			return *kv + n + 1;
	return NULL;
}

/* GET path with args; the body stays in r (release it). */
static int get(mu_web_t *w, const char *path, const char *const *args, const char *auth,
	       mu_web_resp_t *r)
{
	mu_web_get(w, path, args_of, (void *)args, auth, r);
	return r->status;
}

static mu_web_t *new_ui(fake_t *f, const char *token)
{
	mu_web_provider_t p = {f, fake_snap, NULL};
	mu_web_opts_t o;
	mu_web_opts_defaults(&o);
	o.token = token;
	o.hist_ms = 60000;
	o.hist_points = 3;
	mu_web_t *w = NULL;
	return mu_web_new(&p, &o, &w) == MU_OK ? w : NULL;
}

static void test_jobs_pages(mu_t_t *t)
{
	fake_t f = {120, 60, 0};
	mu_web_t *w = new_ui(&f, NULL);
	CHECK(t, w != NULL);
	mu_web_resp_t r;
	CHECK_EQ_INT(t, get(w, "/ui/api/jobs", NULL, NULL, &r), 503); /* no snapshot yet */
	mu_web_resp_release(&r);
	mu_web_tick(w, 1000000);
	CHECK_EQ_INT(t, f.calls, 1);
	const char *a1[] = {"state=pending", "queue=a", "sort=name", "limit=5", "offset=10", NULL};
	CHECK_EQ_INT(t, get(w, "/ui/api/jobs", a1, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"total\":30,\"offset\":10,\"limit\":5") != NULL);
	CHECK(t, strstr(r.body, "\"items\":[{\"key\":\"j:ns/job-020\"") != NULL);
	mu_web_resp_release(&r);
	const char *a2[] = {"sort=gpus", "order=desc", "limit=1", NULL};
	CHECK_EQ_INT(t, get(w, "/ui/api/jobs", a2, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"key\":\"j:ns/job-119\"") != NULL);
	CHECK(t, strstr(r.body, "\"namespaces\":[\"ns\",\"other\"]") != NULL);
	mu_web_resp_release(&r);
	const char *a3[] = {"q=job-11", "ns=ns", NULL};
	CHECK_EQ_INT(t, get(w, "/ui/api/jobs", a3, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"total\":7,") != NULL); /* 110..119 without 111,114,117 */
	mu_web_resp_release(&r);
	mu_web_free(w);
}

static void test_bad_args(mu_t_t *t)
{
	fake_t f = {4, 2, 0};
	mu_web_t *w = new_ui(&f, NULL);
	mu_web_tick(w, 1000000);
	static const char *const bad[][2] = {
		{"/ui/api/jobs", "limit=501"},  {"/ui/api/jobs", "limit=0"},
		{"/ui/api/jobs", "limit=1x"},   {"/ui/api/jobs", "offset=-3"},
		{"/ui/api/jobs", "state=done"}, {"/ui/api/jobs", "sort=age"},
		{"/ui/api/jobs", "order=down"}, {"/ui/api/queues", "res=gold"},
		{"/ui/api/nodes", "limit=9999"}, {"/ui/api/events", "limit=1001"},
		{"/ui/api/job", "x=1"},         {"/ui/api/node", "name="},
	};
	mu_web_resp_t r;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *a[] = {bad[i][1], NULL};
		int st = get(w, bad[i][0], a, NULL, &r);
		if (st != 400)
			fprintf(stderr, "%s?%s: %d %s\n", bad[i][0], bad[i][1], st, r.body);
		CHECK_EQ_INT(t, st, 400);
		CHECK(t, r.body && strstr(r.body, "\"error\":") != NULL);
		mu_web_resp_release(&r);
	}
	const char *a[] = {"key=j:ns/none", NULL};
	CHECK_EQ_INT(t, get(w, "/ui/api/job", a, NULL, &r), 404);
	mu_web_resp_release(&r);
	CHECK_EQ_INT(t, get(w, "/ui/api/nothing", NULL, NULL, &r), 404);
	mu_web_resp_release(&r);
	CHECK_EQ_INT(t, get(w, "/ui/secret.txt", NULL, NULL, &r), 404);
	mu_web_resp_release(&r);
	mu_web_free(w);
}

static void test_job_nodes_heatmap(mu_t_t *t)
{
	fake_t f = {4, 2, 0};
	mu_web_t *w = new_ui(&f, NULL);
	mu_web_tick(w, 1000000);
	mu_web_resp_t r;
	const char *a[] = {"key=j:ns/job-001", NULL};
	CHECK_EQ_INT(t, get(w, "/ui/api/job", a, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"gpus\":[1,2]") != NULL);
	CHECK(t, strstr(r.body, "\"numa\":1") != NULL);
	CHECK(t, strstr(r.body, "\"reason\":\"0/3 nodes are available\"") != NULL);
	mu_web_resp_release(&r);
	CHECK_EQ_INT(t, get(w, "/ui/api/heatmap", NULL, NULL, &r), 200);
	/* by rack, then name; one digit per GPU */
	CHECK(t, strstr(r.body, "\"racks\":[\"r0\",\"r1\"],\"nodes\":[[\"n1\",0,\"1000\",0],"
			  "[\"n0\",1,\"1000\",0],[\"n2\",1,\"1200\",0]]") != NULL);
	mu_web_resp_release(&r);
	CHECK_EQ_INT(t, get(w, "/ui/api/summary", NULL, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"gpus\":[8,3,1,0,0]") != NULL);
	mu_web_resp_release(&r);
	const char *n[] = {"name=n1", NULL};
	CHECK_EQ_INT(t, get(w, "/ui/api/node", n, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"name\":\"job-003\"") != NULL);
	mu_web_resp_release(&r);
	CHECK_EQ_INT(t, get(w, "/ui/api/fleet", NULL, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"fleet\":false") != NULL);
	mu_web_resp_release(&r);
	mu_web_free(w);
}

static void test_events_history(mu_t_t *t)
{
	fake_t f = {4, 2, 0};
	mu_web_t *w = new_ui(&f, NULL);
	mu_web_tick(w, 1000000);
	mu_web_tick(w, 1000500); /* nothing due: no client, no history point */
	CHECK_EQ_INT(t, f.calls, 1);
	f.running_from = 1; /* job-001 starts */
	f.njobs = 5;        /* job-004 arrives (pending) */
	mu_web_tick(w, 1060000);
	CHECK_EQ_INT(t, f.calls, 2);
	mu_web_resp_t r;
	const char *a[] = {"job=j:ns/job-001", NULL};
	CHECK_EQ_INT(t, get(w, "/ui/api/events", a, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"kind\":\"Scheduled\"") != NULL);
	mu_web_resp_release(&r);
	f.running_from = 5; /* job-001..003 back to pending: preempted */
	mu_web_tick(w, 1120000);
	const char *b[] = {"key=j:ns/job-002", NULL};
	CHECK_EQ_INT(t, get(w, "/ui/api/job", b, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"preemptions\":[{") != NULL);
	mu_web_resp_release(&r);
	CHECK_EQ_INT(t, get(w, "/ui/api/events", NULL, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"kind\":\"Submitted\",\"job\":\"j:ns/job-004\"") != NULL);
	mu_web_resp_release(&r);
	mu_web_tick(w, 1180000); /* a fourth point: the ring keeps 3 */
	const char *c[] = {"res=cpu", NULL};
	CHECK_EQ_INT(t, get(w, "/ui/api/queues", c, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"t\":[1060000,1120000,1180000]") != NULL);
	CHECK(t, strstr(r.body, "\"a\":[1.0,1.0,1.0]") != NULL);
	mu_web_resp_release(&r);
	const char *d[] = {"points=2", NULL}; /* buckets of 2: means, last times */
	CHECK_EQ_INT(t, get(w, "/ui/api/cluster", d, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"t\":[1120000,1180000]") != NULL);
	CHECK(t, strstr(r.body, "\"total\":[12.0,12.0]") != NULL);
	mu_web_resp_release(&r);
	CHECK_EQ_INT(t, get(w, "/ui/api/cluster", NULL, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"used\":[3.0,3.0,3.0]") != NULL);
	mu_web_resp_release(&r);
	mu_web_free(w);
}

/* A dispatcher's provider: the fleet callback's clusters and placements. */
static int fake_fleet(void *ctx, mu_web_snap_t *s)
{
	(void)ctx;
	mu_web_cluster_t c = {.name = "east", .state = "ready", .gpus = 64, .gpus_used = 8,
			      .pending = 1, .running = 2};
	int rc = mu_web_snap_add_cluster(s, &c);
	c.name = "west";
	c.state = "unreachable";
	if (!rc)
		rc = mu_web_snap_add_cluster(s, &c);
	mu_web_placement_t p = {.job_key = "j:ns/job-000", .cluster = "east"};
	if (!rc)
		rc = mu_web_snap_add_placement(s, &p);
	return rc;
}

static void test_fleet(mu_t_t *t)
{
	fake_t f = {2, 1, 0};
	mu_web_provider_t p = {&f, fake_snap, fake_fleet};
	mu_web_opts_t o;
	mu_web_opts_defaults(&o);
	mu_web_t *w = NULL;
	CHECK_EQ_INT(t, mu_web_new(&p, &o, &w), MU_OK);
	mu_web_tick(w, 1000000);
	mu_web_resp_t r;
	CHECK_EQ_INT(t, get(w, "/ui/api/fleet", NULL, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"fleet\":true") != NULL);
	CHECK(t, strstr(r.body, "\"name\":\"west\",\"state\":\"unreachable\"") != NULL);
	CHECK(t, strstr(r.body, "\"placements\":{\"total\":1,\"items\":[{\"job\":\"j:ns/job-000\","
			  "\"cluster\":\"east\"}]}") != NULL);
	mu_web_resp_release(&r);
	CHECK_EQ_INT(t, get(w, "/ui/api/summary", NULL, NULL, &r), 200);
	CHECK(t, strstr(r.body, "\"fleet\":true") != NULL);
	mu_web_resp_release(&r);
	mu_web_free(w);
}

static void test_token_stream(mu_t_t *t)
{
	CHECK(t, mu_web_auth_ok(NULL, NULL));
	CHECK(t, mu_web_auth_ok("abc", "Bearer abc"));
	CHECK(t, !mu_web_auth_ok("abc", "Bearer abcd"));
	CHECK(t, !mu_web_auth_ok("abc", "Bearer ab"));
	CHECK(t, !mu_web_auth_ok("abc", "Basic abc"));
	CHECK(t, !mu_web_auth_ok("abc", NULL));
	fake_t f = {2, 1, 0};
	mu_web_t *w = new_ui(&f, "abc");
	mu_web_tick(w, 1000000);
	mu_web_resp_t r;
	CHECK_EQ_INT(t, get(w, "/ui/api/summary", NULL, "Bearer nope", &r), 401);
	mu_web_resp_release(&r);
	CHECK_EQ_INT(t, get(w, "/ui/", NULL, NULL, &r), 200); /* the page is open */
	CHECK(t, r.is_static && strstr(r.body, "app.js") != NULL);
	mu_web_resp_release(&r);
	CHECK_EQ_INT(t, get(w, "/ui/api/stream", NULL, "Bearer abc", &r), 200);
	CHECK(t, r.stream);
	mu_web_resp_release(&r);
	char buf[512];
	uint64_t seq = 0;
	int n = mu_web_stream_next(w, &seq, 10, buf, sizeof buf);
	CHECK(t, n > 0 && !strncmp(buf, "event: tick\ndata: {\"seq\":1,", 27));
	n = mu_web_stream_next(w, &seq, 10, buf, sizeof buf); /* nothing new: a ping */
	CHECK(t, n > 0 && !strcmp(buf, ": ping\n\n"));
	mu_web_shutdown(w);
	CHECK_EQ_INT(t, mu_web_stream_next(w, &seq, 1000, buf, sizeof buf), -1);
	mu_web_free(w);
	mu_web_provider_t none = {NULL, NULL, NULL};
	mu_web_opts_t o;
	mu_web_opts_defaults(&o);
	CHECK_EQ_INT(t, mu_web_new(&none, &o, &w), MU_EINVAL);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_jobs_pages);
	MU_RUN(&t, test_bad_args);
	MU_RUN(&t, test_job_nodes_heatmap);
	MU_RUN(&t, test_events_history);
	MU_RUN(&t, test_fleet);
	MU_RUN(&t, test_token_stream);
	return mu_t_done(&t);
}

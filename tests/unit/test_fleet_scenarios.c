/*
 * test_fleet_scenarios.c - data-driven tests of the fleet's decision: every
 * tests/fleet/NAME.fleet file is a little story (clusters, hub queues, jobs,
 * passes, finishes) with expectations, replayed against src/fleet.
 *
 * The format is line-based, test-only (never read from users), one
 * command per line, '#' starts a comment:
 *   cluster NAME TIER NODESxGPUS MODEL [cost=X] [LABEL=VALUE...]
 *   queue NAME [deserved=GPUS] [limit=GPUS] [priority=N] [weight=W]
 *   cap QUEUE CLUSTER GPUS
 *   config burst_after=SECONDS burst_priority=N
 *   job NAME QUEUE PODSxGPUS [at=SECONDS] [priority=N] [model=M]
 *       [sel=KEY=VALUE] [loc=KEY=VALUE]
 *   dispatch SECONDS         one pass at that time
 *   finish NAME SECONDS      the job ends
 *   lost CLUSTER SECONDS     the cluster is lost: its jobs requeued
 *   state CLUSTER Ready|Draining|Unreachable
 *   expect NAME CLUSTER      where it runs now
 *   expect NAME - REASON     it waits, for that reason (mu_fleet_why_name)
 *   expect-used QUEUE GPUS   the queue's fleet-wide GPUs in use
 * Each file prints one line; the run ends "unit test_fleet_scenarios.c:
 * N passed, N failed".
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/fleet.h"

#define MAXJ 256
#define MAXW 16

typedef struct sjob {
	char name[64];
	char queue[64];
	char model[64];
	char sk[64], sv[64], lk[64], lv[64];
	const char *models[1];
	mu_label_t sel, loc;
	mu_podset_spec_t ps;
	mu_job_spec_t spec;
	mu_fleet_job_spec_t fs;
	mu_id_t id;
} sjob_t;

typedef struct story {
	const char *file;
	int line;
	mu_fleet_t *f;
	mu_fleet_config_t cfg;
	sjob_t *jobs;
	int njobs;
	char qnames[32][64];
	int nq;
	int failed;
} story_t;

static void fail(story_t *s, const char *what)
{
	fprintf(stderr, "%s:%d: %s\n", s->file, s->line, what);
	s->failed++;
}

/* "KEY=VALUE" into k and v; false if no '='. */
static bool split_kv(const char *w, char *k, char *v, size_t n)
{
	const char *eq = strchr(w, '=');
	if (!eq || (size_t)(eq - w) >= n || strlen(eq + 1) >= n)
		return false;
	memcpy(k, w, (size_t)(eq - w));
	k[eq - w] = 0;
	strcpy(v, eq + 1);
	return true;
}

static mu_fleet_t *fleet_of(story_t *s)
{
	if (!s->f && mu_fleet_new(&s->cfg, &s->f))
		fail(s, "fleet_new");
	return s->f;
}

static sjob_t *job_find(story_t *s, const char *name)
{
	for (int i = 0; i < s->njobs; i++)
		if (!strcmp(s->jobs[i].name, name))
			return &s->jobs[i];
	return NULL;
}

static void cmd_cluster(story_t *s, char **w, int n)
{
	int nodes, gpus;
	if (n < 5 || sscanf(w[3], "%dx%d", &nodes, &gpus) != 2)
		return fail(s, "cluster NAME TIER NODESxGPUS MODEL ...");
	mu_label_t labels[MAXW];
	char keys[MAXW][64], vals[MAXW][64];
	size_t nl = 0;
	mu_cluster_spec_t c = {.name = w[1]};
	if (mu_tier_parse(w[2], &c.tier))
		return fail(s, "bad tier");
	for (int i = 5; i < n; i++) {
		if (!split_kv(w[i], keys[nl], vals[nl], 64))
			return fail(s, "expected KEY=VALUE");
		if (!strcmp(keys[nl], "cost")) {
			c.cost_gpu_hour = atof(vals[nl]);
			continue;
		}
		labels[nl] = (mu_label_t){keys[nl], vals[nl]};
		nl++;
	}
	c.labels = labels;
	c.nlabels = nl;
	int32_t id;
	if (mu_fleet_cluster_add(fleet_of(s), &c, &id))
		return fail(s, "cluster_add");
	for (int i = 0; i < nodes; i++) {
		char nm[96];
		snprintf(nm, sizeof nm, "%s-n%d", w[1], i);
		mu_node_spec_t nd;
		memset(&nd, 0, sizeof nd);
		nd.name = nm;
		nd.alloc.v[MU_RES_CPU] = 64000;
		nd.alloc.v[MU_RES_MEM] = 512LL << 30;
		nd.alloc.v[MU_RES_GPU] = gpus;
		nd.alloc.v[MU_RES_PODS] = 110;
		nd.gpu_model = w[4];
		if (mu_fleet_node_upsert(s->f, id, &nd))
			return fail(s, "node_upsert");
	}
}

static void cmd_queue(story_t *s, char **w, int n)
{
	if (n < 2 || s->nq == 32)
		return fail(s, "queue NAME ...");
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	snprintf(s->qnames[s->nq], 64, "%s", w[1]);
	q.name = s->qnames[s->nq++];
	for (int i = 2; i < n; i++) {
		char k[64], v[64];
		if (!split_kv(w[i], k, v, 64))
			return fail(s, "expected KEY=VALUE");
		if (!strcmp(k, "deserved"))
			q.deserved.v[MU_RES_GPU] = atoll(v) * 1000;
		else if (!strcmp(k, "limit"))
			q.limit.v[MU_RES_GPU] = atoll(v) * 1000;
		else if (!strcmp(k, "priority"))
			q.priority = atoi(v);
		else if (!strcmp(k, "weight"))
			q.weight[MU_RES_GPU] = atof(v);
		else
			return fail(s, "unknown queue field");
	}
	if (mu_fleet_queue_upsert(fleet_of(s), &q))
		fail(s, "queue_upsert");
}

static void cmd_job(story_t *s, char **w, int n)
{
	int pods, gpus;
	if (n < 4 || sscanf(w[3], "%dx%d", &pods, &gpus) != 2 || s->njobs == MAXJ)
		return fail(s, "job NAME QUEUE PODSxGPUS ...");
	sjob_t *j = &s->jobs[s->njobs++];
	memset(j, 0, sizeof *j);
	snprintf(j->name, sizeof j->name, "%s", w[1]);
	snprintf(j->queue, sizeof j->queue, "%s", w[2]);
	j->ps.replicas = pods;
	j->ps.req.v[MU_RES_GPU] = gpus;
	j->ps.req.v[MU_RES_CPU] = 1000;
	j->spec = (mu_job_spec_t){.name = j->name, .queue = j->queue, .podsets = &j->ps,
				  .npodsets = 1, .preemptible = true,
				  .runtime_estimate = 3600 * 1000};
	j->fs.job = &j->spec;
	mu_time_t at = 0;
	for (int i = 4; i < n; i++) {
		char k[64], v[64];
		if (!split_kv(w[i], k, v, 64))
			return fail(s, "expected KEY=VALUE");
		if (!strcmp(k, "at"))
			at = atoll(v) * 1000;
		else if (!strcmp(k, "priority"))
			j->spec.priority = atoi(v);
		else if (!strcmp(k, "model")) {
			snprintf(j->model, sizeof j->model, "%s", v);
			j->models[0] = j->model;
			j->ps.gpu_models = j->models;
			j->ps.ngpu_models = 1;
		} else if (!strcmp(k, "sel") && split_kv(v, j->sk, j->sv, 64)) {
			j->sel = (mu_label_t){j->sk, j->sv};
			j->fs.cluster_selector = &j->sel;
			j->fs.ncluster_selector = 1;
		} else if (!strcmp(k, "loc") && split_kv(v, j->lk, j->lv, 64)) {
			j->loc = (mu_label_t){j->lk, j->lv};
			j->fs.locality = &j->loc;
			j->fs.nlocality = 1;
		} else
			return fail(s, "unknown job field");
	}
	j->spec.submit = at;
	if (mu_fleet_job_submit(fleet_of(s), &j->fs, at, &j->id))
		fail(s, "job_submit");
}

static void cmd_expect(story_t *s, char **w, int n)
{
	sjob_t *j = n >= 3 ? job_find(s, w[1]) : NULL;
	if (!j)
		return fail(s, "expect NAME CLUSTER | expect NAME - REASON (known job)");
	mu_fleet_job_info_t ji;
	mu_fleet_job_info(s->f, j->id, &ji);
	char msg[256];
	if (strcmp(w[2], "-") != 0) {
		int32_t c = mu_fleet_cluster_find(s->f, w[2]);
		if (ji.cluster != c || c < 0) {
			snprintf(msg, sizeof msg, "%s: expected on %s, is on cluster %d (%s)",
				 w[1], w[2], ji.cluster, mu_fleet_why_name(ji.why));
			fail(s, msg);
		}
		return;
	}
	if (ji.cluster != -1 || n < 4 || strcmp(mu_fleet_why_name(ji.why), w[3]) != 0) {
		snprintf(msg, sizeof msg, "%s: expected waiting (%s), is on cluster %d (%s)",
			 w[1], n >= 4 ? w[3] : "?", ji.cluster, mu_fleet_why_name(ji.why));
		fail(s, msg);
	}
}

static void cmd_used(story_t *s, char **w, int n)
{
	for (int32_t q = 0; n >= 3 && q < mu_fleet_nqueues(s->f); q++) {
		mu_fleet_queue_info_t qi;
		mu_fleet_queue_info(s->f, q, &qi);
		if (strcmp(qi.name, w[1]) != 0)
			continue;
		if (qi.used.v[MU_RES_GPU] != atoll(w[2]) * 1000) {
			char msg[160];
			snprintf(msg, sizeof msg, "%s uses %lld GPUs, expected %s", w[1],
				 (long long)(qi.used.v[MU_RES_GPU] / 1000), w[2]);
			fail(s, msg);
		}
		return;
	}
	fail(s, "expect-used QUEUE GPUS (known queue)");
}

/* One command line of story s. */
static void command(story_t *s, char **w, int n)
{
	mu_fleet_decisions_t d;
	const char *c = w[0];
	if (!strcmp(c, "cluster"))
		cmd_cluster(s, w, n);
	else if (!strcmp(c, "queue"))
		cmd_queue(s, w, n);
	else if (!strcmp(c, "job"))
		cmd_job(s, w, n);
	else if (!strcmp(c, "config") && !s->f) {
		for (int i = 1; i < n; i++) {
			char k[64], v[64];
			if (!split_kv(w[i], k, v, 64))
				return fail(s, "config KEY=VALUE...");
			if (!strcmp(k, "burst_after"))
				s->cfg.burst_after = atoll(v) * 1000;
			else if (!strcmp(k, "burst_priority"))
				s->cfg.burst_priority = atoi(v);
			else
				return fail(s, "unknown config");
		}
	} else if (!strcmp(c, "cap") && n == 4) {
		mu_res_t cap;
		for (int r = 0; r < MU_RES_MAX; r++)
			cap.v[r] = MU_RES_UNLIMITED;
		cap.v[MU_RES_GPU] = atoll(w[3]) * 1000;
		if (mu_fleet_queue_cap(fleet_of(s), w[1], mu_fleet_cluster_find(s->f, w[2]), &cap))
			fail(s, "cap QUEUE CLUSTER GPUS");
	} else if (!strcmp(c, "dispatch") && n == 2) {
		mu_fleet_decisions_init(&d);
		if (mu_fleet_dispatch(fleet_of(s), atoll(w[1]) * 1000, &d))
			fail(s, "dispatch");
		mu_fleet_decisions_release(&d);
	} else if (!strcmp(c, "finish") && n == 3 && job_find(s, w[1])) {
		if (mu_fleet_job_finish(s->f, job_find(s, w[1])->id, atoll(w[2]) * 1000))
			fail(s, "finish");
	} else if (!strcmp(c, "lost") && n == 3) {
		if (mu_fleet_cluster_lost(s->f, mu_fleet_cluster_find(s->f, w[1]),
					  atoll(w[2]) * 1000) < 0)
			fail(s, "lost");
	} else if (!strcmp(c, "state") && n == 3) {
		mu_cluster_state_t st = !strcmp(w[2], "Ready") ? MU_CLUSTER_READY :
			!strcmp(w[2], "Draining") ? MU_CLUSTER_DRAINING : MU_CLUSTER_UNREACHABLE;
		if (mu_fleet_cluster_set_state(s->f, mu_fleet_cluster_find(s->f, w[1]), st))
			fail(s, "state");
	} else if (!strcmp(c, "expect"))
		cmd_expect(s, w, n);
	else if (!strcmp(c, "expect-used"))
		cmd_used(s, w, n);
	else
		fail(s, "unknown command");
}

/* Replays one file; returns its failures (a file that cannot be read or
 * checks nothing counts as one). */
static int replay(const char *path)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		perror(path);
		return 1;
	}
	story_t s = {.file = path};
	mu_fleet_config_defaults(&s.cfg);
	s.jobs = calloc(MAXJ, sizeof *s.jobs);
	char line[1024];
	int expects = 0;
	while (s.jobs && fgets(line, sizeof line, fp)) {
		s.line++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *w[MAXW];
		int n = 0;
		for (char *tok = strtok(line, " \t\r\n"); tok && n < MAXW; tok = strtok(NULL, " \t\r\n"))
			w[n++] = tok;
		if (!n)
			continue;
		expects += !strncmp(w[0], "expect", 6);
		command(&s, w, n);
	}
	fclose(fp);
	if (!expects)
		fail(&s, "no expectation");
	mu_fleet_free(s.f);
	free(s.jobs);
	printf("%s %s\n", s.failed ? "FAIL" : "ok  ", path);
	return s.failed;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	const char *dir = "tests/fleet";
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "%s: not found (run from the checkout)\n", dir);
		t.failed++;
		return mu_t_done(&t);
	}
	char *names[256];
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 256) {
		size_t l = strlen(e->d_name);
		if (l > 6 && !strcmp(e->d_name + l - 6, ".fleet")) {
			names[n] = malloc(strlen(dir) + l + 2);
			sprintf(names[n++], "%s/%s", dir, e->d_name);
		}
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof *names, cmp_str);
	for (int i = 0; i < n; i++) {
		if (replay(names[i]))
			t.failed++;
		else
			t.passed++;
		free(names[i]);
	}
	if (!n) {
		fprintf(stderr, "%s: no *.fleet file\n", dir);
		t.failed++;
	}
	return mu_t_done(&t);
}

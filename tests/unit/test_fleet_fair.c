/*
 * test_fleet_fair.c - the hub queues' fair share is the engine's: three
 * cases of KAI-Scheduler's own tests of its proportion plugin
 * (pkg/scheduler/plugins/proportion/resource_division/
 * resource_division_test.go, the "two queues" table: two queues that
 * deserve 2 GPUs each, over-quota weight 2 and 6 GPUs requested, unless a
 * case says otherwise) given both to a fleet of one cluster and to one
 * engine with the same node.  Each checks the fair shares KAI expects,
 * on both sides, and that the hub dispatches the queues' jobs in the very
 * order the engine's cycle binds them (re-evaluated after every job).
 * KAI rounds GPUs to whole ones; these cases have whole answers.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/fleet.h"

#define GI (1024LL * 1024 * 1024)
#define NJOBS 6 /* per queue: KAI's request of 6 GPUs, one GPU a job */

/* One case: the cluster's GPUs, and per queue its limit (-1: none),
 * GPU over-quota weight and priority; the fair shares KAI expects. */
typedef struct fcase {
	const char *name;
	int gpus;
	int limit[2], weight[2], prio[2];
	int64_t fair[2];
} fcase_t;

static void queue_of(const fcase_t *c, int i, mu_queue_spec_t *q)
{
	static const char *const names[2] = {"queue-1", "queue-2"};
	mu_queue_spec_defaults(q);
	q->name = names[i];
	q->priority = c->prio[i];
	q->deserved.v[MU_RES_GPU] = 2000;
	if (c->limit[i] >= 0)
		q->limit.v[MU_RES_GPU] = c->limit[i] * 1000LL;
	q->weight[MU_RES_GPU] = c->weight[i];
}

static mu_node_spec_t node_of(const fcase_t *c)
{
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = "n0";
	n.alloc.v[MU_RES_CPU] = 64000;
	n.alloc.v[MU_RES_MEM] = 512 * GI;
	n.alloc.v[MU_RES_GPU] = c->gpus;
	n.alloc.v[MU_RES_PODS] = 110;
	n.gpu_model = "H100";
	return n;
}

/* The jobs: NJOBS of one GPU per queue, submitted alternately. */
typedef struct jobs {
	mu_podset_spec_t ps[2 * NJOBS];
	mu_job_spec_t js[2 * NJOBS];
	char names[2 * NJOBS][16];
} jobs_t;

static void jobs_make(jobs_t *w, mu_queue_spec_t *qs)
{
	memset(w, 0, sizeof *w);
	for (int i = 0; i < 2 * NJOBS; i++) {
		snprintf(w->names[i], sizeof w->names[i], "j%d", i);
		w->ps[i].name = "main";
		w->ps[i].replicas = 1;
		w->ps[i].req.v[MU_RES_CPU] = 1000;
		w->ps[i].req.v[MU_RES_GPU] = 1;
		w->js[i].name = w->names[i];
		w->js[i].queue = qs[i % 2].name;
		w->js[i].podsets = &w->ps[i];
		w->js[i].npodsets = 1;
		w->js[i].submit = i;
		w->js[i].runtime_estimate = 3600 * 1000LL;
		/* preemptible, as KAI's training jobs: the engine lets only
		 * those run above deserved */
		w->js[i].preemptible = true;
	}
}

/* The engine's side: the queue (0 or 1) of every bind, in order, into
 * seq; their number.  fair gets each queue's GPU fair share. */
static int engine_run(mu_t_t *t, const fcase_t *c, int *seq, int64_t *fair)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.preemption = cfg.reclaim = cfg.consolidate = false;
	mu_engine_t *e;
	CHECK_EQ_INT(t, mu_engine_new(&cfg, &e), MU_OK);
	mu_queue_spec_t qs[2];
	for (int i = 0; i < 2; i++) {
		queue_of(c, i, &qs[i]);
		CHECK_EQ_INT(t, mu_engine_queue_upsert(e, &qs[i]), MU_OK);
	}
	mu_node_spec_t n = node_of(c);
	CHECK_EQ_INT(t, mu_engine_node_upsert(e, &n, NULL), MU_OK);
	jobs_t w;
	jobs_make(&w, qs);
	for (int i = 0; i < 2 * NJOBS; i++)
		CHECK_EQ_INT(t, mu_engine_job_submit(e, &w.js[i], 100, NULL), MU_OK);
	mu_decisions_t d;
	mu_decisions_init(&d);
	CHECK_EQ_INT(t, mu_engine_cycle(e, 100, &d), MU_OK);
	int k = 0;
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].kind == MU_DEC_BIND) {
			mu_job_info_t ji;
			CHECK_EQ_INT(t, mu_engine_job_info(e, d.v[i].job, &ji), MU_OK);
			seq[k++] = strcmp(ji.queue, "queue-1") == 0 ? 0 : 1;
		}
	for (int i = 0; i < 2; i++) {
		mu_queue_info_t qi;
		CHECK_EQ_INT(t, mu_engine_queue_info(e, mu_engine_queue_find(e, qs[i].name), &qi), MU_OK);
		fair[i] = qi.fair.v[MU_RES_GPU];
	}
	mu_decisions_release(&d);
	mu_engine_free(e);
	return k;
}

/* The hub's side: the same, from one dispatch pass over a fleet of one
 * cluster with the same node. */
static int fleet_run(mu_t_t *t, const fcase_t *c, int *seq, int64_t *fair)
{
	mu_fleet_t *f;
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &f), MU_OK);
	mu_cluster_spec_t cs = {.name = "only", .tier = MU_TIER_PRIVATE};
	int32_t cid;
	CHECK_EQ_INT(t, mu_fleet_cluster_add(f, &cs, &cid), MU_OK);
	mu_node_spec_t n = node_of(c);
	CHECK_EQ_INT(t, mu_fleet_node_upsert(f, cid, &n), MU_OK);
	mu_queue_spec_t qs[2];
	for (int i = 0; i < 2; i++) {
		queue_of(c, i, &qs[i]);
		CHECK_EQ_INT(t, mu_fleet_queue_upsert(f, &qs[i]), MU_OK);
	}
	jobs_t w;
	jobs_make(&w, qs);
	mu_fleet_job_spec_t fs[2 * NJOBS];
	for (int i = 0; i < 2 * NJOBS; i++) {
		fs[i] = (mu_fleet_job_spec_t){.job = &w.js[i]};
		CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fs[i], 100, NULL), MU_OK);
	}
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 100, &d), MU_OK);
	int k = 0;
	for (size_t i = 0; i < d.n; i++) {
		mu_fleet_job_info_t ji;
		CHECK_EQ_INT(t, mu_fleet_job_info(f, d.v[i].job, &ji), MU_OK);
		seq[k++] = ji.queue;
	}
	for (int i = 0; i < 2; i++) {
		mu_fleet_queue_info_t qi;
		CHECK_EQ_INT(t, mu_fleet_queue_info(f, i, &qi), MU_OK);
		fair[i] = qi.fair.v[MU_RES_GPU];
	}
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
	return k;
}

static void check_case(mu_t_t *t, const fcase_t *c)
{
	int es[2 * NJOBS], fs[2 * NJOBS];
	int64_t ef[2], ff[2];
	int ne = engine_run(t, c, es, ef);
	int nf = fleet_run(t, c, fs, ff);
	for (int i = 0; i < 2; i++) {
		if (ef[i] != c->fair[i] * 1000 || ff[i] != c->fair[i] * 1000)
			fprintf(stderr, "%s: queue-%d fair: KAI %lld, engine %lld, hub %lld\n",
				c->name, i + 1, (long long)c->fair[i] * 1000,
				(long long)ef[i], (long long)ff[i]);
		CHECK_EQ_INT(t, ef[i], c->fair[i] * 1000);
		CHECK_EQ_INT(t, ff[i], c->fair[i] * 1000);
	}
	CHECK_EQ_INT(t, nf, ne);
	char a[2 * NJOBS + 1] = {0}, b[2 * NJOBS + 1] = {0};
	for (int i = 0; i < ne && i < 2 * NJOBS; i++)
		a[i] = (char)('1' + es[i]);
	for (int i = 0; i < nf && i < 2 * NJOBS; i++)
		b[i] = (char)('1' + fs[i]);
	if (strcmp(a, b))
		fprintf(stderr, "%s: engine binds %s, hub dispatches %s\n", c->name, a, b);
	CHECK(t, strcmp(a, b) == 0);
}

/* KAI: "allocates GPUs proportionally": 8 GPUs, weights 1 and 3: 3 and 5. */
static void test_kai_proportional(mu_t_t *t)
{
	fcase_t c = {"proportional", 8, {-1, -1}, {1, 3}, {0, 0}, {3, 5}};
	check_case(t, &c);
}

/* KAI: "doesn't allocate more than allowed": 12 GPUs, queue-1 at most 5:
 * 5 and 6 (one GPU left). */
static void test_kai_max_allowed(mu_t_t *t)
{
	fcase_t c = {"max allowed", 12, {5, -1}, {2, 2}, {0, 0}, {5, 6}};
	check_case(t, &c);
}

/* KAI: "priority does affect over-quota": 6 GPUs, priorities 1 and 2: 2
 * and 4 (both sides then serve the higher priority first, as the engine
 * does in one cluster; reclaim, not the order, gives queue-1 its 2). */
static void test_kai_priority(mu_t_t *t)
{
	fcase_t c = {"priority", 6, {-1, -1}, {2, 2}, {1, 2}, {2, 4}};
	check_case(t, &c);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_kai_proportional);
	MU_RUN(&t, test_kai_max_allowed);
	MU_RUN(&t, test_kai_priority);
	return mu_t_done(&t);
}

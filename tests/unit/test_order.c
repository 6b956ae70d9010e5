/*
 * test_order.c - job order policies: priority then age, shortest estimate
 * first, and Tiresias-style least attained service with its preemption.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"

#define S 1000

typedef struct ofx {
	mu_engine_t *e;
	mu_decisions_t d;
	mu_podset_spec_t ps[16];
	char names[16][16];
	int n;
} ofx_t;

static void ofx_init(ofx_t *f, mu_order_t order)
{
	memset(f, 0, sizeof *f);
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.order = order;
	cfg.min_runtime = 0;
	cfg.backfill = MU_BACKFILL_GREEDY;
	mu_engine_new(&cfg, &f->e);
	mu_decisions_init(&f->d);
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = "n0";
	n.alloc.v[MU_RES_CPU] = 64000;
	n.alloc.v[MU_RES_GPU] = 8;
	n.alloc.v[MU_RES_PODS] = 110;
	mu_engine_node_upsert(f->e, &n, NULL);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(f->e, &q);
}

static mu_id_t ofx_job(ofx_t *f, int gpus, mu_time_t est, mu_time_t now)
{
	int i = f->n++;
	snprintf(f->names[i], sizeof f->names[i], "j%d", i);
	memset(&f->ps[i], 0, sizeof f->ps[i]);
	f->ps[i].replicas = 1;
	f->ps[i].req.v[MU_RES_GPU] = gpus;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = f->names[i];
	j.queue = "q";
	j.preemptible = true;
	j.podsets = &f->ps[i];
	j.npodsets = 1;
	j.submit = now;
	j.runtime_estimate = est;
	mu_id_t id;
	mu_engine_job_submit(f->e, &j, now, &id);
	return id;
}

static int ofx_bound(ofx_t *f, mu_id_t id)
{
	mu_job_info_t i;
	mu_engine_job_info(f->e, id, &i);
	return i.bound;
}

static void ofx_cycle(ofx_t *f, mu_time_t now)
{
	f->d.n = 0;
	mu_engine_cycle(f->e, now, &f->d);
}

static void test_sjf(mu_t_t *t)
{
	ofx_t f;
	ofx_init(&f, MU_ORDER_SJF);
	mu_id_t blocker = ofx_job(&f, 8, 10 * S, 0);
	ofx_cycle(&f, 0);
	mu_id_t lng = ofx_job(&f, 8, 1000 * S, 1 * S);
	mu_id_t shrt = ofx_job(&f, 8, 5 * S, 2 * S); /* younger, but shorter */
	ofx_cycle(&f, 2 * S);
	mu_engine_job_finish(f.e, blocker, 10 * S);
	ofx_cycle(&f, 10 * S);
	CHECK_EQ_INT(t, ofx_bound(&f, shrt), 1);
	CHECK_EQ_INT(t, ofx_bound(&f, lng), 0);
	mu_decisions_release(&f.d);
	mu_engine_free(f.e);
}

static void test_priority_order_is_fifo(mu_t_t *t)
{
	ofx_t f;
	ofx_init(&f, MU_ORDER_PRIORITY);
	mu_id_t blocker = ofx_job(&f, 8, 10 * S, 0);
	ofx_cycle(&f, 0);
	mu_id_t lng = ofx_job(&f, 8, 1000 * S, 1 * S);
	mu_id_t shrt = ofx_job(&f, 8, 5 * S, 2 * S);
	mu_engine_job_finish(f.e, blocker, 10 * S);
	ofx_cycle(&f, 10 * S);
	CHECK_EQ_INT(t, ofx_bound(&f, lng), 1);
	CHECK_EQ_INT(t, ofx_bound(&f, shrt), 0);
	mu_decisions_release(&f.d);
	mu_engine_free(f.e);
}

static void test_las_preempts_the_served(mu_t_t *t)
{
	ofx_t f;
	ofx_init(&f, MU_ORDER_LAS);
	mu_id_t old = ofx_job(&f, 8, 0, 0);
	ofx_cycle(&f, 0);
	CHECK_EQ_INT(t, ofx_bound(&f, old), 1);
	/* After 10 minutes on 8 GPUs (80 GPU-minutes > 1 GPU-hour) the old
	 * job is a level down: a new job preempts it. */
	mu_id_t fresh = ofx_job(&f, 8, 0, 600 * S);
	ofx_cycle(&f, 600 * S);
	CHECK_EQ_INT(t, ofx_bound(&f, fresh), 1);
	CHECK_EQ_INT(t, ofx_bound(&f, old), 0);
	mu_job_info_t i;
	mu_engine_job_info(f.e, old, &i);
	CHECK(t, i.attained_gpu_s > 4700 && i.attained_gpu_s < 4900);
	CHECK(t, i.effective_priority < 0);
	/* The fresh one is still under the first threshold at 5 minutes: the
	 * old one does not preempt it back (its service is higher). */
	ofx_cycle(&f, 900 * S);
	CHECK_EQ_INT(t, ofx_bound(&f, fresh), 1);
	mu_decisions_release(&f.d);
	mu_engine_free(f.e);
}

/* A job that waited since before the runner dropped a level must not stay
 * cached as failed: it preempts once the runner has had more service. */
static void test_las_waiter_not_starved(mu_t_t *t)
{
	ofx_t f;
	ofx_init(&f, MU_ORDER_LAS);
	mu_id_t a = ofx_job(&f, 8, 0, 0);
	ofx_cycle(&f, 0);
	mu_id_t b = ofx_job(&f, 8, 0, 1 * S);
	ofx_cycle(&f, 1 * S); /* both at level 0: b waits */
	CHECK_EQ_INT(t, ofx_bound(&f, b), 0);
	for (int k = 1; k <= 18 && ofx_bound(&f, b) == 0; k++)
		ofx_cycle(&f, k * 600 * S);
	CHECK_EQ_INT(t, ofx_bound(&f, b), 1);
	CHECK_EQ_INT(t, ofx_bound(&f, a), 0);
	mu_decisions_release(&f.d);
	mu_engine_free(f.e);
}

/* The default order: a job that has had 100 GPU-hours is a level down and
 * a new job preempts it once its minimum run is over; explain says so. */
static void test_jct_default_and_explain(mu_t_t *t)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	CHECK_EQ_INT(t, cfg.order, MU_ORDER_JCT);
	ofx_t f;
	ofx_init(&f, MU_ORDER_JCT);
	mu_id_t old = ofx_job(&f, 8, 0, 0);
	ofx_cycle(&f, 0);
	mu_id_t fresh = ofx_job(&f, 8, 0, 3600 * S);
	mu_id_t later = ofx_job(&f, 8, 0, 7200 * S);
	ofx_cycle(&f, 7200 * S); /* 16 GPU-hours: same level, fresh waits */
	CHECK_EQ_INT(t, ofx_bound(&f, fresh), 0);
	char buf[1024];
	CHECK(t, mu_engine_order_explain(f.e, later, buf, sizeof buf) > 0);
	CHECK(t, strstr(buf, "2 of 2 waiting") != NULL);
	CHECK(t, strstr(buf, "behind \"j1\": same level, submitted 3600 s earlier") != NULL);
	mu_engine_order_explain(f.e, old, buf, sizeof buf);
	CHECK(t, strstr(buf, "level 0, 16 GPU-hours had") != NULL);
	ofx_cycle(&f, 13 * 3600 * S); /* 104 GPU-hours: level 1 */
	CHECK_EQ_INT(t, ofx_bound(&f, fresh), 1);
	CHECK_EQ_INT(t, ofx_bound(&f, old), 0);
	mu_engine_order_explain(f.e, old, buf, sizeof buf);
	CHECK(t, strstr(buf, "1 of 2 waiting") == NULL); /* later is ahead */
	CHECK(t, strstr(buf, "less GPU time had: level 0") != NULL);
	mu_engine_order_explain(f.e, fresh, buf, sizeof buf);
	CHECK(t, strstr(buf, "kept running by its minimum run") != NULL);
	CHECK_EQ_INT(t, mu_engine_order_explain(f.e, 99, buf, sizeof buf), MU_ENOENT);
	CHECK(t, mu_order_find("jct") == MU_ORDER_JCT && mu_order_find("x") < 0);
	CHECK(t, !strcmp(mu_order_name(MU_ORDER_LAS), "las") && !mu_order_name(9));
	mu_decisions_release(&f.d);
	mu_engine_free(f.e);
}

/* A queue with order fifo: levels never apply, nothing is preempted; a
 * bad order value is refused. */
static void test_fifo_queue(mu_t_t *t)
{
	ofx_t f;
	ofx_init(&f, MU_ORDER_JCT);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	q.order = MU_QORDER_FIFO;
	CHECK_EQ_INT(t, mu_engine_queue_upsert(f.e, &q), MU_OK);
	mu_id_t old = ofx_job(&f, 8, 0, 0);
	ofx_cycle(&f, 0);
	mu_id_t fresh = ofx_job(&f, 8, 0, 3600 * S);
	ofx_cycle(&f, 30 * 3600 * S);
	CHECK_EQ_INT(t, ofx_bound(&f, old), 1);
	CHECK_EQ_INT(t, ofx_bound(&f, fresh), 0);
	char buf[256];
	mu_engine_order_explain(f.e, fresh, buf, sizeof buf);
	CHECK(t, strstr(buf, "fifo queue") != NULL);
	q.order = (mu_queue_order_t)7;
	CHECK_EQ_INT(t, mu_engine_queue_upsert(f.e, &q), MU_EINVAL);
	mu_decisions_release(&f.d);
	mu_engine_free(f.e);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_sjf);
	MU_RUN(&t, test_priority_order_is_fifo);
	MU_RUN(&t, test_las_preempts_the_served);
	MU_RUN(&t, test_las_waiter_not_starved);
	MU_RUN(&t, test_jct_default_and_explain);
	MU_RUN(&t, test_fifo_queue);
	return mu_t_done(&t);
}

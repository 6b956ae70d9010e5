/*
 * test_work.c - a little-changed cycle must cost O(what changed), not
 * O(running jobs), under every job order.
 *
 * Speed is not timed here (benchmarks do that); the engine's own count of
 * jobs visited by its walks over a queue's running or pending jobs
 * (e->work: order refresh, lowest victim priority, demand, expected ends,
 * gangs' victims) is read instead.  A cluster with N running one-GPU jobs
 * gets cycles in which one job finishes and one arrives; every such cycle
 * must visit at most a small constant number of jobs, and the same at
 * N = 500 and N = 4,000, for the priority, SJF, LAS and JCT orders and for
 * a FIFO queue.  The JCT order as merged in 4e96a4e walked every running
 * job on every cycle (bench --shape basic fell from 2M to 4,191
 * decisions/s); this test fails on that order.c.
 *
 * The same holds for the reservations' list of expected ends (ends.c),
 * with a blocked 8-GPU job holding a reservation on a full cluster: every
 * finish moves its queue's run-time history, so every entry of the list is
 * re-timed each cycle, and that must be done from the entries alone, not
 * by a look-up of each running job (which made the backlog shape's cycle
 * cost O(running pods) in random reads).
 *
 * Memory follows the live jobs (test_forget): over thousands of job
 * lifetimes, an engine whose finished jobs are handed back with
 * mu_engine_job_forget() keeps as many job records and names as jobs were
 * live at once, and decides exactly as an engine that keeps them all.
 *
 * Pod sets share their resource vectors (test_shared_vectors): 2,000 jobs
 * of 8 shapes hold at most 16 distinct request and accounting vectors in
 * the engine's table, a pod set record is at most 96 bytes (320 when each
 * carried its two 128-byte vectors inline), and the table is empty once
 * every job is forgotten.
 *
 * A job record does not keep its bound pods' accounting vector (128
 * bytes): test_job_record checks the record is at most 344 bytes (456
 * with it) and that the vector computed from the bound pods
 * (mu__job_acct_bound) sums, over the jobs, to the engine's total in use
 * at every step of a churn.
 *
 * A gang's reservation takes its nodes in one pass (test_resv_commit): a
 * blocked gang of N one-GPU pods on N full 8-GPU nodes reserves N/8 of
 * them, and the commit may visit at most 4 shadow slots per node of its
 * class a cycle (e->resv_slots, backfill.c), with the expected start the
 * (N/8)-th end.  The old commit scanned every slot for each node it took:
 * N/8 x N visits (32,768 at 512 nodes), which made gang-blocked's cycle
 * grow 3.2x per doubling of the cluster.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "engine_fixture.h"
#include "engine/engine_int.h"
#include "muster/engine.h"

#define S 1000 /* ms */
#define CHANGES 20 /* little-changed cycles measured */
#define MAX_WORK 16 /* jobs one such cycle may visit */

static int submit_gpus(mu_engine_t *e, int k, mu_time_t now, int gpus, bool preemptible)
{
	char name[16];
	snprintf(name, sizeof name, "j%06d", k);
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = 1;
	ps.req.v[MU_RES_CPU] = 1000;
	ps.req.v[MU_RES_MEM] = 1LL << 30;
	ps.req.v[MU_RES_GPU] = gpus;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = name;
	j.queue = "q";
	j.type = MU_JOB_BATCH;
	j.preemptible = preemptible;
	j.podsets = &ps;
	j.npodsets = 1;
	j.submit = now;
	return mu_engine_job_submit(e, &j, now, NULL);
}

static int submit(mu_engine_t *e, int k, mu_time_t now)
{
	return submit_gpus(e, k, now, 1, true);
}

/* Builds N running jobs under order `order` (FIFO queue when fifo), then
 * runs CHANGES cycles, each after one finish and one arrival; returns the
 * most jobs one of them visited, or -1 when the setup went wrong. */
static long most_work(mu_order_t order, bool fifo, int n)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.order = order;
	mu_engine_t *e = NULL;
	if (mu_engine_new(&cfg, &e) != MU_OK)
		return -1;
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	q.order = fifo ? MU_QORDER_FIFO : MU_QORDER_DEFAULT;
	mu_engine_queue_upsert(e, &q);
	for (int i = 0; i < n / 4; i++) /* room for 2n one-GPU pods */
		add_node(e, i);
	for (int k = 0; k < n; k++)
		submit(e, k, 0);
	mu_decisions_t d;
	mu_decisions_init(&d);
	long most = -1;
	if (mu_engine_cycle(e, 0, &d) == MU_OK && (long)d.n == n) {
		most = 0;
		for (int c = 1; c <= CHANGES + 2 && most >= 0; c++) {
			mu_time_t now = (mu_time_t)c * S;
			if (mu_engine_job_finish(e, c - 1, now) != MU_OK ||
			    submit(e, n + c, now) != MU_OK)
				most = -1;
			uint64_t w0 = e->work;
			d.n = 0;
			if (most >= 0 && mu_engine_cycle(e, now, &d) != MU_OK)
				most = -1;
			long w = (long)(e->work - w0);
			if (most >= 0 && c > 2 && w > most) /* after the first full walks */
				most = w;
		}
	}
	mu_decisions_release(&d);
	mu_engine_free(e);
	return most;
}

static void check_order(mu_t_t *t, mu_order_t order, bool fifo)
{
	long small = most_work(order, fifo, 500), big = most_work(order, fifo, 4000);
	CHECK(t, small >= 0 && big >= 0);
	if (big > MAX_WORK || big > small + 2)
		fprintf(stderr, "order %s%s: a little-changed cycle visited %ld jobs at "
			"500 running, %ld at 4000 (at most %d allowed)\n",
			mu_order_name(order), fifo ? " (fifo queue)" : "", small, big, MAX_WORK);
	CHECK(t, big <= MAX_WORK);
	CHECK(t, big <= small + 2);
}

/* A full cluster of N one-GPU jobs (no preemption or moves) and a
 * blocked 8-GPU job, which holds a reservation every cycle; then
 * CHANGES cycles after one finish and one arrival each.  Returns the most
 * jobs one of them visited, or -1 when the setup went wrong or no list of
 * ends was kept (no reservation). */
static long resv_work(int n)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.preemption = cfg.reclaim = cfg.consolidate = false;
	mu_engine_t *e = NULL;
	if (mu_engine_new(&cfg, &e) != MU_OK)
		return -1;
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(e, &q);
	for (int i = 0; i < n / 8; i++) /* room for exactly n one-GPU pods */
		add_node(e, i);
	for (int k = 0; k < n; k++)
		submit_gpus(e, k, 0, 1, true);
	mu_decisions_t d;
	mu_decisions_init(&d);
	long most = -1;
	if (mu_engine_cycle(e, 0, &d) == MU_OK && (long)d.n == n &&
	    submit_gpus(e, n, S / 2, 8, true) == MU_OK) {
		most = 0;
		for (int c = 1; c <= CHANGES + 2 && most >= 0; c++) {
			mu_time_t now = (mu_time_t)c * S;
			/* one a node (binpacked in order): no node empties */
			if (mu_engine_job_finish(e, (c - 1) * 8, now) != MU_OK ||
			    submit_gpus(e, n + c, now, 1, true) != MU_OK)
				most = -1;
			uint64_t w0 = e->work;
			d.n = 0;
			if (most >= 0 && mu_engine_cycle(e, now, &d) != MU_OK)
				most = -1;
			long w = (long)(e->work - w0);
			if (most >= 0 && c > 2 && w > most)
				most = w;
		}
		if (e->nends < n / 2 || e->jobs[n].state != MU_JOB_PENDING)
			most = -1; /* the reservation was never made */
	}
	mu_decisions_release(&d);
	mu_engine_free(e);
	return most;
}

static void test_resv(mu_t_t *t)
{
	long small = resv_work(512), big = resv_work(4096);
	CHECK(t, small >= 0 && big >= 0);
	if (big > MAX_WORK || big > small + 2)
		fprintf(stderr, "reservation: a little-changed cycle visited %ld jobs at "
			"512 running, %ld at 4096 (at most %d allowed)\n", small, big, MAX_WORK);
	CHECK(t, big <= MAX_WORK);
	CHECK(t, big <= small + 2);
}

/* N nodes each full with one 8-GPU job (ends a minute apart, in a
 * shuffled order), then a gang of N one-GPU pods, which needs N/8 nodes
 * and blocks; its reservation is made in each of 3 cycles (one job
 * finishing before each).  Returns the most shadow slots one cycle's
 * commits visited, or -1 when the setup went wrong or the reservation is
 * not the (N/8 + 1)-th end's (one node is freed before the first cycle). */
static long resv_commit_slots(int n)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.preemption = cfg.reclaim = cfg.consolidate = false;
	mu_engine_t *e = NULL;
	if (mu_engine_new(&cfg, &e) != MU_OK)
		return -1;
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(e, &q);
	for (int i = 0; i < n; i++)
		add_node(e, i);
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = 1;
	ps.req.v[MU_RES_CPU] = 1000;
	ps.req.v[MU_RES_GPU] = 8;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.queue = "q";
	j.type = MU_JOB_BATCH;
	j.preemptible = true; /* no quota needed */
	j.podsets = &ps;
	j.npodsets = 1;
	int rc = MU_OK;
	for (int k = 0; rc == MU_OK && k < n; k++) {
		char name[16];
		snprintf(name, sizeof name, "r%05d", k);
		j.name = name;
		/* k * 7 mod n (n a power of two): every minute from 1 to n once */
		j.runtime_estimate = (mu_time_t)((k * 7) % n + 1) * 60 * S;
		rc = mu_engine_job_submit(e, &j, 0, NULL);
	}
	mu_decisions_t d;
	mu_decisions_init(&d);
	if (rc == MU_OK)
		rc = mu_engine_cycle(e, 0, &d);
	if (rc == MU_OK && (long)d.n != n)
		rc = MU_ESTATE;
	ps.replicas = n;
	ps.req.v[MU_RES_GPU] = 1;
	j.name = "gang";
	j.runtime_estimate = 3600 * S;
	mu_id_t gang = -1;
	if (rc == MU_OK)
		rc = mu_engine_job_submit(e, &j, S, &gang);
	long most = rc == MU_OK ? 0 : -1;
	for (int c = 1; most >= 0 && c <= 3; c++) {
		mu_time_t now = (mu_time_t)c * S;
		/* the job ending last of all goes first: the start stays */
		int k = 0;
		while ((k * 7) % n + 1 != n - c + 1)
			k++;
		uint64_t s0 = e->resv_slots;
		mu_job_info_t ji;
		d.n = 0;
		if (mu_engine_job_finish(e, k, now) != MU_OK ||
		    mu_engine_cycle(e, now, &d) != MU_OK || mu_engine_settle(e) != MU_OK ||
		    mu_engine_job_info(e, gang, &ji) != MU_OK || !ji.reserved ||
		    ji.expected_start != (mu_time_t)(n / 8 - c) * 60 * S) {
			fprintf(stderr, "DBG c=%d reserved=%d start=%lld state=%d dn=%zu\n", c, ji.reserved, (long long)ji.expected_start, (int)ji.state, d.n);
			most = -1;
		}
		else if ((long)(e->resv_slots - s0) > most)
			most = (long)(e->resv_slots - s0);
	}
	mu_decisions_release(&d);
	mu_engine_free(e);
	return most;
}

static void test_resv_commit(mu_t_t *t)
{
	long small = resv_commit_slots(512), big = resv_commit_slots(2048);
	CHECK(t, small > 0 && big > 0);
	if (small > 4 * 512 || big > 4 * 2048)
		fprintf(stderr, "reservation commit: %ld slots visited in a cycle at 512 "
			"nodes, %ld at 2048 (at most 4 a node)\n", small, big);
	CHECK(t, small <= 4 * 512);
	CHECK(t, big <= 4 * 2048);
}

/* --- forget: records follow the live jobs --------------------------------- */

#define CHURN 6000 /* job lifetimes */
#define LIVE 40    /* jobs live at once, at most (plus the one arriving) */

/* The k-th job of the churn: 1 to 3 pods of 1 to 8 GPUs, so that some
 * block and hold reservations while smaller ones go around them. */
static int churn_submit(mu_engine_t *e, int k, mu_time_t now)
{
	char name[16];
	snprintf(name, sizeof name, "c%06d", k);
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = 1 + k % 3;
	ps.req.v[MU_RES_CPU] = 1000;
	ps.req.v[MU_RES_MEM] = 1LL << 30;
	ps.req.v[MU_RES_GPU] = 1 + (k * 7) % 8;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = name;
	j.queue = "q";
	j.type = MU_JOB_BATCH;
	j.runtime_estimate = (mu_time_t)(5 + k % 11) * S;
	j.podsets = &ps;
	j.npodsets = 1;
	j.submit = now;
	return mu_engine_job_submit(e, &j, now, NULL);
}

static mu_engine_t *churn_engine(void)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	mu_engine_t *e = NULL;
	if (mu_engine_new(&cfg, &e) != MU_OK)
		return NULL;
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(e, &q);
	for (int i = 0; i < 16; i++)
		add_node(e, i);
	return e;
}

/* Whether decisions a (of engine ea) and b (of eb) say the same, job
 * names in place of ids. */
static bool same_decisions(const mu_engine_t *ea, const mu_decisions_t *a,
			   const mu_engine_t *eb, const mu_decisions_t *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const mu_decision_t *x = &a->v[i], *y = &b->v[i];
		mu_job_info_t jx, jy;
		if (mu_engine_job_info(ea, x->job, &jx) || mu_engine_job_info(eb, y->job, &jy) ||
		    strcmp(jx.name, jy.name) || x->kind != y->kind || x->podset != y->podset ||
		    x->pod != y->pod || x->node != y->node || x->gpus != y->gpus ||
		    x->reason.why != y->reason.why)
			return false;
	}
	return true;
}

/* CHURN jobs go through two engines, one step each: the oldest live job
 * finishes once LIVE are live, one arrives, a cycle runs.  Engine a
 * forgets every job it finishes; b keeps them.  Their decisions must be
 * the same at every step, and a must end with at most LIVE + 1 records
 * and names while b holds CHURN. */
static void test_forget(mu_t_t *t)
{
	mu_engine_t *a = churn_engine(), *b = churn_engine();
	mu_id_t live_a[CHURN], live_b[CHURN];
	int head = 0, n = 0, same = 1, ok = 1, ran = 0;
	mu_decisions_t da, db;
	mu_decisions_init(&da);
	mu_decisions_init(&db);
	CHECK(t, a && b);
	for (int k = 0; a && b && k < CHURN && ok && same; k++) {
		mu_time_t now = (mu_time_t)k * S;
		if (n - head >= LIVE) {
			ok &= mu_engine_job_finish(a, live_a[head], now) == MU_OK &&
			      mu_engine_job_forget(a, live_a[head]) == MU_OK &&
			      mu_engine_job_finish(b, live_b[head], now) == MU_OK;
			head++;
		}
		ok &= churn_submit(a, k, now) == MU_OK && churn_submit(b, k, now) == MU_OK;
		char name[16];
		snprintf(name, sizeof name, "c%06d", k);
		live_a[n] = mu_engine_job_find(a, name);
		live_b[n] = mu_engine_job_find(b, name);
		n++;
		da.n = db.n = 0;
		ok &= mu_engine_cycle(a, now, &da) == MU_OK && mu_engine_cycle(b, now, &db) == MU_OK;
		same = same_decisions(a, &da, b, &db);
		if (!same)
			fprintf(stderr, "forget: decisions differ at step %d\n", k);
		ran = k + 1;
	}
	CHECK(t, ok && same && ran == CHURN);
	if (a && b) {
		if (a->njobs > LIVE + 1 || (int)a->job_names.n > LIVE + 1)
			fprintf(stderr, "forget: %d job records and %u names kept after %d lifetimes "
				"(at most %d live)\n", a->njobs, a->job_names.n, CHURN, LIVE + 1);
		CHECK(t, a->njobs <= LIVE + 1);
		CHECK(t, (int)a->job_names.n <= LIVE + 1);
		CHECK(t, b->njobs == CHURN); /* without forget, every record stays */
		/* a forgotten name may come again; an unknown or live id may not
		 * be forgotten */
		mu_job_info_t ji;
		CHECK(t, mu_engine_job_find(a, "c000000") < 0);
		CHECK(t, churn_submit(a, 0, (mu_time_t)CHURN * S) == MU_OK);
		CHECK(t, churn_submit(b, 0, (mu_time_t)CHURN * S) == MU_EEXIST);
		CHECK(t, mu_engine_job_forget(a, mu_engine_job_find(a, "c000000")) == MU_ESTATE);
		CHECK(t, mu_engine_job_forget(a, -1) == MU_ENOENT);
		mu_id_t last = live_a[n - 1];
		CHECK(t, mu_engine_job_finish(a, last, (mu_time_t)CHURN * S) == MU_OK);
		CHECK(t, mu_engine_job_forget(a, last) == MU_OK);
		CHECK(t, mu_engine_job_forget(a, last) == MU_ENOENT);
		CHECK(t, mu_engine_job_info(a, last, &ji) == MU_ENOENT);
	}
	mu_decisions_release(&da);
	mu_decisions_release(&db);
	mu_engine_free(a);
	mu_engine_free(b);
}

/* 2,000 churn jobs (GPUs 1 to 8: 8 request vectors, 8 accounting ones)
 * share their vectors; forgetting them all empties the table. */
static void test_shared_vectors(mu_t_t *t)
{
	enum { N = 2000 };
	mu_engine_t *e = churn_engine();
	CHECK(t, e != NULL);
	if (!e)
		return;
	CHECK(t, sizeof(mu__podset_t) <= 96);
	int ok = 1;
	for (int k = 0; k < N; k++)
		ok &= churn_submit(e, k, 0) == MU_OK;
	CHECK(t, ok);
	if (e->rvecs.n > 16)
		fprintf(stderr, "shared vectors: %u distinct for %d jobs of 8 shapes\n",
			e->rvecs.n, N);
	CHECK(t, e->rvecs.n >= 8 && e->rvecs.n <= 16);
	/* jobs 0 and 8 ask for the same GPUs (k * 7 % 8): one vector each */
	CHECK(t, e->jobs[0].podsets[0].req == e->jobs[8].podsets[0].req);
	CHECK(t, e->jobs[0].podsets[0].acct == e->jobs[8].podsets[0].acct);
	CHECK(t, e->jobs[0].podsets[0].req != e->jobs[1].podsets[0].req);
	CHECK_EQ_INT(t, e->jobs[8].podsets[0].req->v[MU_RES_GPU], 1);
	for (int k = 0; k < N; k++) {
		char name[16];
		snprintf(name, sizeof name, "c%06d", k);
		mu_id_t id = mu_engine_job_find(e, name);
		ok &= mu_engine_job_finish(e, id, S) == MU_OK &&
		      mu_engine_job_forget(e, id) == MU_OK;
	}
	CHECK(t, ok);
	CHECK_EQ_INT(t, (int)e->rvecs.n, 0);
	mu_engine_free(e);
}

/* The churn of test_forget on one engine: at every step the bound pods'
 * accounting of all jobs sums to e->total_used. */
static void test_job_record(mu_t_t *t)
{
	CHECK(t, sizeof(mu__job_t) <= 344);
	mu_engine_t *e = churn_engine();
	CHECK(t, e != NULL);
	if (!e)
		return;
	mu_queue_spec_t q; /* room in quota: churn jobs are not preemptible */
	mu_queue_spec_defaults(&q);
	q.name = "q";
	for (int r = 0; r < MU_RES_NAMED0; r++)
		q.deserved.v[r] = 1LL << 50;
	mu_engine_queue_upsert(e, &q);
	mu_decisions_t d;
	mu_decisions_init(&d);
	int ok = 1, same = 1, bound = 0;
	for (int k = 0; k < 600 && ok && same; k++) {
		mu_time_t now = (mu_time_t)k * S;
		if (k >= LIVE) {
			char name[16];
			snprintf(name, sizeof name, "c%06d", k - LIVE);
			ok &= mu_engine_job_finish(e, mu_engine_job_find(e, name), now) == MU_OK;
		}
		ok &= churn_submit(e, k, now) == MU_OK;
		d.n = 0;
		ok &= mu_engine_cycle(e, now, &d) == MU_OK;
		mu_res_t sum = {.v = {0}};
		for (int32_t jid = 0; jid < e->njobs; jid++) {
			const mu__job_t *j = &e->jobs[jid];
			mu_res_t a = mu__job_acct_bound(e, j);
			for (int r = 0; r < MU_RES_MAX; r++)
				sum.v[r] += a.v[r];
			same &= a.v[MU_RES_GPU] == j->bound_gpu && a.v[MU_RES_CPU] == j->bound_cpu;
			bound += j->nbound > 0;
		}
		same &= !memcmp(&sum, &e->total_used, sizeof sum);
		if (!same)
			fprintf(stderr, "job record: bound accounting differs at step %d\n", k);
		if (!ok)
			fprintf(stderr, "job record: step %d failed\n", k);
	}
	if (!(ok && same && bound > 0))
		fprintf(stderr, "job record: ok %d same %d bound %d\n", ok, same, bound);
	CHECK(t, ok && same && bound > 0);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

static void test_priority(mu_t_t *t) { check_order(t, MU_ORDER_PRIORITY, false); }
static void test_sjf(mu_t_t *t) { check_order(t, MU_ORDER_SJF, false); }
static void test_las(mu_t_t *t) { check_order(t, MU_ORDER_LAS, false); }
static void test_jct(mu_t_t *t) { check_order(t, MU_ORDER_JCT, false); }
static void test_fifo(mu_t_t *t) { check_order(t, MU_ORDER_JCT, true); }

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_priority);
	MU_RUN(&t, test_sjf);
	MU_RUN(&t, test_las);
	MU_RUN(&t, test_jct);
	MU_RUN(&t, test_fifo);
	MU_RUN(&t, test_resv);
	MU_RUN(&t, test_resv_commit);
	MU_RUN(&t, test_forget);
	MU_RUN(&t, test_shared_vectors);
	MU_RUN(&t, test_job_record);
	return mu_t_done(&t);
}

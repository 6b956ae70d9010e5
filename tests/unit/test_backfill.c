/*
 * test_backfill.c - runtime estimates, reservations with backfill (a job
 * that ends in time may use the hole, one that would delay the reserved
 * job may not, a preemptible one may and is evicted when due), expected
 * start times, strict FIFO, and consolidation moves with their budget.
 * A finished job handed back with mu_engine_job_forget() leaves entries
 * in the expected-end list and queued bind notes that name its id; a
 * smaller job that reuses the id must not be read past its pods
 * (test_forget_reused_id: an ASan heap-buffer-overflow in the hour soak).
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"

#define S 1000 /* ms */

typedef struct bfx {
	mu_engine_t *e;
	mu_decisions_t d;
	mu_podset_spec_t ps[32];
	char names[32][16];
	int n;
	bool no_move;    /* the next job is never moved */
	int32_t gpus_per_hour; /* the move budget in GPUs an hour (0: none) */
} bfx_t;

static void bfx_init(bfx_t *f, int nodes, mu_backfill_t mode, const mu_score_ops_t *ops)
{
	int32_t gph = f->gpus_per_hour;
	memset(f, 0, sizeof *f);
	f->gpus_per_hour = gph;
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.backfill = mode;
	cfg.min_runtime = 0;
	cfg.score = ops;
	cfg.move_gpus_per_hour = f->gpus_per_hour;
	mu_engine_new(&cfg, &f->e);
	mu_decisions_init(&f->d);
	for (int i = 0; i < nodes; i++) {
		char name[16];
		snprintf(name, sizeof name, "n%d", i);
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		n.name = name;
		n.alloc.v[MU_RES_CPU] = 64000;
		n.alloc.v[MU_RES_GPU] = 8;
		n.alloc.v[MU_RES_PODS] = 110;
		mu_engine_node_upsert(f->e, &n, NULL);
	}
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	q.deserved.v[MU_RES_GPU] = 1000 * 1000; /* non-preemptible jobs need quota */
	q.deserved.v[MU_RES_CPU] = 1000 * 1000;
	mu_engine_queue_upsert(f->e, &q);
}

static mu_id_t bfx_job(bfx_t *f, int pods, int gpus, mu_time_t est, bool preemptible,
		       mu_time_t now)
{
	int i = f->n++;
	snprintf(f->names[i], sizeof f->names[i], "j%d", i);
	memset(&f->ps[i], 0, sizeof f->ps[i]);
	f->ps[i].replicas = pods;
	f->ps[i].req.v[MU_RES_CPU] = 1000;
	f->ps[i].req.v[MU_RES_GPU] = gpus;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = f->names[i];
	j.queue = "q";
	j.preemptible = preemptible;
	j.no_move = f->no_move;
	f->no_move = false;
	j.podsets = &f->ps[i];
	j.npodsets = 1;
	j.submit = now;
	j.runtime_estimate = est;
	mu_id_t id = -1;
	mu_engine_job_submit(f->e, &j, now, &id);
	return id;
}

/* One cycle, then the reservations it owes, so that job infos show
 * reservation-based expected starts (as the simulator's reports do). */
static void bfx_cycle(bfx_t *f, mu_time_t now)
{
	f->d.n = 0;
	mu_engine_cycle(f->e, now, &f->d);
	mu_engine_settle(f->e);
}

static mu_job_info_t bfx_info(const bfx_t *f, mu_id_t id)
{
	mu_job_info_t info;
	mu_engine_job_info(f->e, id, &info);
	return info;
}

static int bfx_count(const bfx_t *f, mu_dec_kind_t k, mu_id_t job)
{
	int n = 0;
	for (size_t i = 0; i < f->d.n; i++)
		n += f->d.v[i].kind == k && (job < 0 || f->d.v[i].job == job);
	return n;
}

static void bfx_free(bfx_t *f)
{
	mu_decisions_release(&f->d);
	mu_engine_free(f->e);
}

static void test_estimates(mu_t_t *t)
{
	bfx_t f = {0};
	bfx_init(&f, 1, MU_BACKFILL_RESERVE, NULL);
	mu_id_t a = bfx_job(&f, 1, 1, 0, true, 0);
	mu_job_info_t i = bfx_info(&f, a);
	CHECK_EQ_INT(t, i.estimate_src, MU_EST_DEFAULT);
	CHECK_EQ_INT(t, i.estimate, 3600 * S);
	bfx_cycle(&f, 0);
	mu_engine_job_finish(f.e, a, 100 * S);
	mu_id_t b = bfx_job(&f, 1, 1, 0, true, 100 * S);
	i = bfx_info(&f, b);
	CHECK_EQ_INT(t, i.estimate_src, MU_EST_HISTORY);
	CHECK_EQ_INT(t, i.estimate, 100 * S);
	mu_id_t c = bfx_job(&f, 1, 1, 42 * S, true, 100 * S);
	CHECK_EQ_INT(t, bfx_info(&f, c).estimate_src, MU_EST_DECLARED);
	/* A job withdrawn to be planned again is not a run: the history
	 * (100 s so far) stays as it was. */
	bfx_cycle(&f, 100 * S);
	CHECK_EQ_INT(t, mu_engine_job_withdraw(f.e, b, 110 * S), MU_OK);
	CHECK_EQ_INT(t, mu_engine_job_withdraw(f.e, b, 110 * S), MU_ESTATE);
	mu_id_t d = bfx_job(&f, 1, 1, 0, true, 110 * S);
	CHECK_EQ_INT(t, bfx_info(&f, d).estimate, 100 * S);
	mu_engine_job_finish(f.e, c, 400 * S); /* a run of 300 s does count */
	CHECK(t, bfx_info(&f, d).estimate > 100 * S);
	CHECK_STR(t, mu_estimate_src_name(MU_EST_HISTORY), "history");
	bfx_free(&f);
}

/* Two nodes; a 2-node gang waits for a job ending at 100 s and one at
 * 1000 s.  Returns the gang's id. */
static mu_id_t setup_reservation(bfx_t *f, mu_id_t *a, mu_id_t *b)
{
	*a = bfx_job(f, 1, 8, 100 * S, false, 0);  /* n0, ends ~100 s */
	*b = bfx_job(f, 1, 4, 1000 * S, false, 0); /* n1, ends ~1000 s */
	bfx_cycle(f, 0);
	mu_id_t g = bfx_job(f, 2, 8, 500 * S, false, 1 * S);
	bfx_cycle(f, 1 * S);
	return g;
}

static void test_reservation_and_backfill(mu_t_t *t)
{
	bfx_t f = {0};
	bfx_init(&f, 2, MU_BACKFILL_RESERVE, NULL);
	mu_id_t a, b;
	mu_id_t g = setup_reservation(&f, &a, &b);
	mu_job_info_t gi = bfx_info(&f, g);
	CHECK_EQ_INT(t, gi.bound, 0);
	CHECK(t, gi.reserved);
	CHECK_EQ_INT(t, gi.expected_start, 1000 * S);
	/* Ends well before 1000 s: may use 2 of n1's 4 free GPUs. */
	mu_id_t quick = bfx_job(&f, 1, 2, 50 * S, false, 2 * S);
	/* Would run past 1000 s and is not preemptible: must wait. */
	mu_id_t slow = bfx_job(&f, 1, 2, 5000 * S, false, 2 * S);
	bfx_cycle(&f, 2 * S);
	CHECK_EQ_INT(t, bfx_info(&f, quick).bound, 1);
	mu_job_info_t si = bfx_info(&f, slow);
	CHECK_EQ_INT(t, si.bound, 0);
	CHECK(t, si.last.fail[MU_F_RESERVED] > 0);
	char msg[256];
	mu_reason_format(f.e, &si.last, msg, sizeof msg);
	CHECK(t, strstr(msg, "reserved for a job ahead") != NULL);
	/* Every pending job has an expected start: after the gang (1000 s +
	 * its 500 s estimate). */
	CHECK_EQ_INT(t, si.expected_start, 1500 * S);
	CHECK(t, !si.reserved);
	bfx_free(&f);
}

/* Submits a job that needs all 3 nodes (blocked behind x, so reserved:
 * the expected-end list is read) and runs a cycle with its reservation. */
static mu_id_t reserve_all(bfx_t *f, mu_time_t now)
{
	mu_id_t g = bfx_job(f, 3, 8, 100 * S, false, now);
	bfx_cycle(f, now);
	return g;
}

/* Finishes and forgets job a, and binds a one-pod job that takes its id
 * in a cycle with no reservation (nothing reads the list).  Returns the
 * new job's id. */
static mu_id_t reuse_id(bfx_t *f, mu_id_t a, mu_time_t now)
{
	mu_engine_job_finish(f->e, a, now);
	mu_engine_job_forget(f->e, a);
	mu_id_t b = bfx_job(f, 1, 1, 50 * S, false, now);
	bfx_cycle(f, now);
	return b;
}

static void test_forget_reused_id(mu_t_t *t)
{
	bfx_t f = {0};
	bfx_init(&f, 3, MU_BACKFILL_RESERVE, NULL);
	mu_id_t x = bfx_job(&f, 1, 8, 1000 * S, false, 0); /* n0 until 1000 s */
	bfx_cycle(&f, 0);
	mu_id_t g = reserve_all(&f, 1 * S);
	CHECK(t, bfx_info(&f, g).reserved);
	/* bind notes: a's 8 binds are queued while no job is reserved, and
	 * read after b took a's id */
	CHECK_EQ_INT(t, mu_engine_job_withdraw(f.e, g, 2 * S), MU_OK);
	mu_id_t a = bfx_job(&f, 8, 1, 50 * S, false, 2 * S);
	bfx_cycle(&f, 2 * S);
	CHECK_EQ_INT(t, bfx_info(&f, a).bound, 8);
	mu_id_t b = reuse_id(&f, a, 3 * S);
	CHECK_EQ_INT(t, b, a);
	CHECK_EQ_INT(t, bfx_info(&f, b).bound, 1);
	g = reserve_all(&f, 4 * S);
	CHECK(t, bfx_info(&f, g).reserved);
	/* list entries: a2's 8 entries are merged while it runs, go stale
	 * when it ends, and are swept after b2 took its id */
	mu_id_t a2 = bfx_job(&f, 8, 1, 50 * S, false, 5 * S);
	bfx_cycle(&f, 5 * S);
	CHECK_EQ_INT(t, bfx_info(&f, a2).bound, 8);
	bfx_cycle(&f, 6 * S);
	CHECK_EQ_INT(t, mu_engine_job_withdraw(f.e, g, 7 * S), MU_OK);
	mu_id_t b2 = reuse_id(&f, a2, 7 * S);
	CHECK_EQ_INT(t, b2, a2);
	g = reserve_all(&f, 8 * S);
	mu_job_info_t gi = bfx_info(&f, g);
	CHECK(t, gi.reserved);
	CHECK_EQ_INT(t, gi.expected_start, 1000 * S);
	CHECK_EQ_INT(t, bfx_info(&f, x).bound, 1);
	bfx_free(&f);
}

static void test_greedy_lets_it_through(mu_t_t *t)
{
	bfx_t f = {0};
	bfx_init(&f, 2, MU_BACKFILL_GREEDY, NULL);
	mu_id_t a, b;
	setup_reservation(&f, &a, &b);
	mu_id_t slow = bfx_job(&f, 1, 4, 5000 * S, false, 2 * S);
	bfx_cycle(&f, 2 * S);
	CHECK_EQ_INT(t, bfx_info(&f, slow).bound, 1); /* and the gang starves */
	bfx_free(&f);
}

/* The last blocked job of a cycle is reserved only on demand, and only
 * while nothing changed since the cycle. */
static void test_settle_lazy(mu_t_t *t)
{
	bfx_t f = {0};
	bfx_init(&f, 2, MU_BACKFILL_RESERVE, NULL);
	mu_id_t a = bfx_job(&f, 1, 8, 100 * S, false, 0);
	mu_id_t b = bfx_job(&f, 1, 4, 1000 * S, false, 0);
	bfx_cycle(&f, 0);
	mu_id_t g = bfx_job(&f, 2, 8, 500 * S, false, 1 * S);
	f.d.n = 0;
	mu_engine_cycle(f.e, 1 * S, &f.d);
	CHECK(t, !bfx_info(&f, g).reserved); /* owed, not made */
	CHECK_EQ_INT(t, mu_engine_settle(f.e), MU_OK);
	CHECK(t, bfx_info(&f, g).reserved);
	CHECK_EQ_INT(t, bfx_info(&f, g).expected_start, 1000 * S);
	f.d.n = 0;
	mu_engine_cycle(f.e, 2 * S, &f.d);
	mu_engine_job_finish(f.e, b, 3 * S); /* things moved: no reservation */
	CHECK_EQ_INT(t, mu_engine_settle(f.e), MU_OK);
	CHECK(t, !bfx_info(&f, g).reserved);
	/* A job owed a reservation that is withdrawn (it never had pods, so
	 * nothing else moved) is skipped. */
	f.d.n = 0;
	mu_engine_cycle(f.e, 4 * S, &f.d);
	CHECK(t, !bfx_info(&f, g).reserved);
	CHECK_EQ_INT(t, mu_engine_job_finish(f.e, g, 4 * S), MU_OK);
	CHECK_EQ_INT(t, mu_engine_settle(f.e), MU_OK);
	(void)a;
	bfx_free(&f);
}

static void test_preemptible_backfill_evicted_when_due(mu_t_t *t)
{
	bfx_t f = {0};
	bfx_init(&f, 2, MU_BACKFILL_RESERVE, NULL);
	mu_id_t a, b;
	mu_id_t g = setup_reservation(&f, &a, &b);
	mu_id_t filler = bfx_job(&f, 1, 4, 5000 * S, true, 2 * S);
	bfx_cycle(&f, 2 * S);
	CHECK_EQ_INT(t, bfx_info(&f, filler).bound, 1); /* preemptible: allowed */
	mu_engine_job_finish(f.e, a, 100 * S);
	mu_engine_job_finish(f.e, b, 1000 * S);
	bfx_cycle(&f, 1000 * S);
	/* Same priority, same queue: only the reservation lets g evict it. */
	CHECK_EQ_INT(t, bfx_count(&f, MU_DEC_EVICT, filler), 1);
	CHECK_EQ_INT(t, bfx_info(&f, g).bound, 2);
	bfx_free(&f);
}

static void test_fifo_blocks_everything(mu_t_t *t)
{
	bfx_t f = {0};
	bfx_init(&f, 2, MU_BACKFILL_NONE, NULL);
	mu_id_t a, b;
	setup_reservation(&f, &a, &b);
	mu_id_t quick = bfx_job(&f, 1, 1, 10 * S, false, 2 * S);
	bfx_cycle(&f, 2 * S);
	mu_job_info_t qi = bfx_info(&f, quick);
	CHECK_EQ_INT(t, qi.bound, 0);
	CHECK_EQ_INT(t, qi.last.why, MU_WHY_BLOCKED);
	bfx_free(&f);
}

static void test_consolidation(mu_t_t *t)
{
	bfx_t f = {0};
	bfx_init(&f, 2, MU_BACKFILL_GREEDY, &mu_score_spread);
	mu_id_t x = bfx_job(&f, 1, 4, 0, true, 0);
	mu_id_t y = bfx_job(&f, 1, 4, 0, true, 0);
	bfx_cycle(&f, 0);
	CHECK(t, mu_engine_pod_node(f.e, x, 0, 0) != mu_engine_pod_node(f.e, y, 0, 0));
	/* 8 GPUs free in total, but 4 per node: move one 4-GPU job. */
	mu_id_t big = bfx_job(&f, 1, 8, 0, true, 10 * S);
	bfx_cycle(&f, 10 * S);
	CHECK_EQ_INT(t, bfx_info(&f, big).bound, 1);
	CHECK_EQ_INT(t, bfx_count(&f, MU_DEC_EVICT, -1), 1);
	CHECK_EQ_INT(t, mu_engine_pod_node(f.e, x, 0, 0), mu_engine_pod_node(f.e, y, 0, 0));
	int moved = 0;
	for (size_t i = 0; i < f.d.n; i++)
		moved += f.d.v[i].move;
	CHECK_EQ_INT(t, moved, 2); /* the eviction and the new bind */
	CHECK_EQ_INT(t, bfx_info(&f, x).moves + bfx_info(&f, y).moves, 1);
	CHECK_EQ_INT(t, bfx_info(&f, x).state, MU_JOB_RUNNING);
	CHECK_EQ_INT(t, bfx_info(&f, y).state, MU_JOB_RUNNING);
	bfx_free(&f);
}

static void test_consolidation_rejected(mu_t_t *t)
{
	bfx_t f = {0};
	bfx_init(&f, 2, MU_BACKFILL_GREEDY, &mu_score_spread);
	mu_id_t x = bfx_job(&f, 1, 4, 0, true, 0);
	mu_id_t y = bfx_job(&f, 1, 6, 0, true, 0);
	bfx_cycle(&f, 0);
	/* 6 GPUs free (4 + 2); an 8-GPU pod needs a node cleared, and the
	 * evicted job would find no room elsewhere: nothing may move. */
	mu_id_t big = bfx_job(&f, 1, 8, 0, true, 10 * S);
	mu_res_t before, after;
	mu_engine_totals(f.e, NULL, &before);
	bfx_cycle(&f, 10 * S);
	mu_engine_totals(f.e, NULL, &after);
	CHECK_EQ_INT(t, bfx_info(&f, big).bound, 0);
	CHECK_EQ_INT(t, bfx_count(&f, MU_DEC_EVICT, -1), 0);
	CHECK(t, memcmp(&before, &after, sizeof before) == 0);
	CHECK_EQ_INT(t, bfx_info(&f, x).bound + bfx_info(&f, y).bound, 2);
	bfx_free(&f);
}

static void test_move_ratio(mu_t_t *t)
{
	bfx_t f = {0};
	bfx_init(&f, 3, MU_BACKFILL_GREEDY, &mu_score_spread);
	/* Each node 6 busy: a 2-GPU pod fits anywhere; consolidation for a
	 * 4-GPU pod would move 6 GPUs to gain 4: over the 1:1 ratio. */
	for (int i = 0; i < 3; i++)
		bfx_job(&f, 1, 6, 0, true, 0);
	bfx_cycle(&f, 0);
	mu_id_t four = bfx_job(&f, 1, 4, 0, true, 10 * S);
	bfx_cycle(&f, 10 * S);
	CHECK_EQ_INT(t, bfx_info(&f, four).bound, 0);
	CHECK_EQ_INT(t, bfx_count(&f, MU_DEC_EVICT, -1), 0);
	bfx_free(&f);
}

/* A job marked no_move (on Kubernetes: a pod nothing recreates) is never
 * moved: the other one is, and when both are, nothing moves. */
static void test_no_move(mu_t_t *t)
{
	for (int both = 0; both < 2; both++) {
		bfx_t f = {0};
		bfx_init(&f, 2, MU_BACKFILL_GREEDY, &mu_score_spread);
		f.no_move = true;
		mu_id_t x = bfx_job(&f, 1, 4, 0, true, 0);
		f.no_move = both;
		mu_id_t y = bfx_job(&f, 1, 4, 0, true, 0);
		bfx_cycle(&f, 0);
		mu_id_t xn = mu_engine_pod_node(f.e, x, 0, 0);
		mu_id_t big = bfx_job(&f, 1, 8, 0, true, 10 * S);
		bfx_cycle(&f, 10 * S);
		CHECK_EQ_INT(t, bfx_info(&f, big).bound, both ? 0 : 1);
		CHECK_EQ_INT(t, bfx_count(&f, MU_DEC_EVICT, x), 0);
		CHECK_EQ_INT(t, bfx_count(&f, MU_DEC_EVICT, y), both ? 0 : 1);
		CHECK_EQ_INT(t, mu_engine_pod_node(f.e, x, 0, 0), xn);
		CHECK_EQ_INT(t, bfx_info(&f, x).moves, 0);
		bfx_free(&f);
	}
}

/* The GPUs-an-hour budget: moving 4 GPUs under a cap of 3 is refused;
 * under a cap of 4 it goes, and a second move within the hour is
 * refused. */
static void test_move_gpus_per_hour(mu_t_t *t)
{
	for (int cap = 3; cap <= 4; cap++) {
		bfx_t f = {.gpus_per_hour = cap};
		bfx_init(&f, 4, MU_BACKFILL_GREEDY, &mu_score_spread);
		for (int i = 0; i < 4; i++)
			bfx_job(&f, 1, 4, 0, true, 0);
		bfx_cycle(&f, 0);
		mu_id_t big = bfx_job(&f, 1, 8, 0, true, 10 * S);
		bfx_cycle(&f, 10 * S);
		CHECK_EQ_INT(t, bfx_info(&f, big).bound, cap == 4);
		CHECK_EQ_INT(t, bfx_count(&f, MU_DEC_EVICT, -1), cap == 4);
		mu_id_t big2 = bfx_job(&f, 1, 8, 0, true, 20 * S);
		bfx_cycle(&f, 20 * S);
		CHECK_EQ_INT(t, bfx_info(&f, big2).bound, 0);
		CHECK_EQ_INT(t, bfx_count(&f, MU_DEC_EVICT, -1), 0);
		bfx_free(&f);
	}
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_estimates);
	MU_RUN(&t, test_reservation_and_backfill);
	MU_RUN(&t, test_forget_reused_id);
	MU_RUN(&t, test_greedy_lets_it_through);
	MU_RUN(&t, test_settle_lazy);
	MU_RUN(&t, test_preemptible_backfill_evicted_when_due);
	MU_RUN(&t, test_fifo_blocks_everything);
	MU_RUN(&t, test_consolidation);
	MU_RUN(&t, test_consolidation_rejected);
	MU_RUN(&t, test_move_ratio);
	MU_RUN(&t, test_no_move);
	MU_RUN(&t, test_move_gpus_per_hour);
	return mu_t_done(&t);
}

/*
 * test_kube_decs.c - the daemon's compact decisions (src/kube/decs.c):
 * two engines given the same nodes and jobs make the same cycle, one into
 * a plain mu_decisions_t and one through the sink into a mu__kdecs_t;
 * every decision read back is the engine's, field by field (binds with
 * GPU devices, pending ones with their reasons), and the compact store
 * holds a quarter of the engine's array (48-byte records against 320).
 * A pinned CPU set and an eviction's fields survive the round trip too.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kube/daemon_int.h"

#define GI (1024LL * 1024 * 1024)

/* 200 nodes of 8 GPUs; 1,400 one-pod jobs of 1 GPU (1,600 fit) and 100
 * of 16 GPUs, which fit nowhere and stay pending with a reason. */
static mu_engine_t *engine(void)
{
	mu_engine_t *e;
	mu_engine_config_t cfg = {0};
	if (mu_engine_new(&cfg, &e))
		return NULL;
	char name[32];
	for (int i = 0; i < 200; i++) {
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		snprintf(name, sizeof name, "n%d", i);
		n.name = name;
		n.alloc.v[MU_RES_CPU] = 64000;
		n.alloc.v[MU_RES_MEM] = 256 * GI;
		n.alloc.v[MU_RES_GPU] = 8;
		n.alloc.v[MU_RES_PODS] = 110;
		mu_engine_node_upsert(e, &n, NULL);
	}
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(e, &q);
	for (int i = 0; i < 1500; i++) {
		mu_podset_spec_t ps;
		memset(&ps, 0, sizeof ps);
		ps.name = "main";
		ps.replicas = 1;
		ps.req.v[MU_RES_CPU] = 1000;
		ps.req.v[MU_RES_GPU] = i < 1400 ? 1 : 16;
		mu_job_spec_t j;
		memset(&j, 0, sizeof j);
		snprintf(name, sizeof name, "j%d", i);
		j.name = name;
		j.queue = "q";
		j.podsets = &ps;
		j.npodsets = 1;
		j.preemptible = true; /* beyond the queue's quota (none) */
		mu_id_t id;
		mu_engine_job_submit(e, &j, 0, &id);
	}
	return e;
}

/* Whether a and b are the same decision, field by field. */
static bool same(const mu_decision_t *a, const mu_decision_t *b)
{
	return a->kind == b->kind && a->job == b->job && a->podset == b->podset && a->pod == b->pod &&
	       a->node == b->node && a->gpus == b->gpus && a->gpu_milli == b->gpu_milli &&
	       a->numa == b->numa && a->nic == b->nic && a->by == b->by && a->suspend == b->suspend &&
	       a->move == b->move && !memcmp(&a->cpus, &b->cpus, sizeof a->cpus) &&
	       !memcmp(&a->reason, &b->reason, sizeof a->reason);
}

static void test_cycle_round_trip(mu_t_t *t)
{
	mu_engine_t *e1 = engine(), *e2 = engine();
	CHECK(t, e1 && e2);
	if (!e1 || !e2)
		return;
	mu_decisions_t whole, through;
	mu_decisions_init(&whole);
	mu_decisions_init(&through);
	mu__kdecs_t k;
	memset(&k, 0, sizeof k);
	through.sink = mu__kdecs_sink;
	through.sink_arg = &k;
	CHECK_EQ_INT(t, mu_engine_cycle(e1, 0, &whole), MU_OK);
	CHECK_EQ_INT(t, mu_engine_cycle(e2, 0, &through), MU_OK);
	CHECK_EQ_INT(t, whole.n, 1500);
	CHECK_EQ_INT(t, through.n, whole.n);
	CHECK_EQ_INT(t, k.n, whole.n);
	CHECK(t, through.v == NULL); /* nothing went to the whole array */
	size_t binds = 0, pending = 0, bad = 0;
	for (size_t i = 0; i < k.n && i < whole.n; i++) {
		mu_decision_t x;
		bad += !same(mu__kdecs_get(&k, i, &x), &whole.v[i]);
		binds += x.kind == MU_DEC_BIND;
		pending += x.kind == MU_DEC_PENDING && x.reason.why != MU_WHY_NONE;
	}
	CHECK_EQ_INT(t, bad, 0);
	CHECK_EQ_INT(t, binds, 1400);
	CHECK_EQ_INT(t, pending, 100);
	CHECK_EQ_INT(t, k.nr, 100); /* reasons only where there is one */
	/* the store: 48 bytes a record, and a quarter of the engine's
	 * array of whole decisions (320 bytes each) with its reasons */
	CHECK(t, sizeof(mu__kdec_t) <= 48);
	CHECK(t, mu__kdecs_bytes(&k) * 4 <= whole.cap * sizeof *whole.v);
	mu__kdecs_clear(&k);
	CHECK_EQ_INT(t, k.n, 0);
	mu__kdecs_release(&k);
	mu_decisions_release(&whole);
	mu_decisions_release(&through);
	mu_engine_free(e1);
	mu_engine_free(e2);
}

/* What the cycle above does not make: a pinned bind's CPU set, a move's
 * eviction (by, suspend, move) and a bind with a reason set. */
static void test_fields_kept(mu_t_t *t)
{
	mu__kdecs_t k;
	memset(&k, 0, sizeof k);
	mu_decision_t a, b, c, x;
	memset(&a, 0, sizeof a);
	a.kind = MU_DEC_BIND;
	a.job = 7;
	a.node = 3;
	a.gpus = 0xf0;
	a.gpu_milli = 0;
	a.numa = 1;
	a.nic = 2;
	a.cpus.w[0] = 0xff00;
	b = a;
	memset(&b.cpus, 0, sizeof b.cpus);
	b.kind = MU_DEC_EVICT;
	b.by = 9;
	b.suspend = true;
	b.move = true;
	b.podset = 1;
	b.pod = 4;
	c = a;
	c.reason.why = MU_WHY_NONE;
	c.reason.nodes_total = 5; /* a reason on a bind is kept too */
	CHECK_EQ_INT(t, mu__kdecs_sink(&k, &a), MU_OK);
	CHECK_EQ_INT(t, mu__kdecs_sink(&k, &b), MU_OK);
	CHECK_EQ_INT(t, mu__kdecs_sink(&k, &c), MU_OK);
	CHECK(t, same(mu__kdecs_get(&k, 0, &x), &a));
	CHECK(t, same(mu__kdecs_get(&k, 1, &x), &b));
	CHECK(t, same(mu__kdecs_get(&k, 2, &x), &c));
	CHECK_EQ_INT(t, k.nc, 2);
	CHECK_EQ_INT(t, k.nr, 1);
	mu__kdecs_release(&k);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_cycle_round_trip);
	MU_RUN(&t, test_fields_kept);
	return mu_t_done(&t);
}

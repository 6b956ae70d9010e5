/*
 * test_eval_queues.c - the queueing-policy evaluation (src/eval/eval_queues.c):
 * Jain's index on known vectors, the workload generator's determinism and
 * offered load, and small versions of the fairness and reclaim experiments
 * (a few hundred jobs on 32 and 8 nodes; no wall-clock assertions).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/eval_queues.h"

#define HOUR (3600 * 1000LL)

static bool near(double a, double b, double eps)
{
	return fabs(a - b) <= eps;
}

static void test_jain(mu_t_t *t)
{
	const double eq[4] = {0.25, 0.25, 0.25, 0.25};
	const double one[4] = {1, 0, 0, 0};
	const double two[2] = {1, 2};
	const double scaled[2] = {10, 20};
	const double zero[3] = {0, 0, 0};
	CHECK(t, near(mu__jain(eq, 4), 1.0, 1e-12));
	CHECK(t, near(mu__jain(one, 4), 0.25, 1e-12));
	CHECK(t, near(mu__jain(one, 1), 1.0, 1e-12));
	CHECK(t, near(mu__jain(two, 2), 0.9, 1e-12)); /* 9 / (2 x 5) */
	CHECK(t, near(mu__jain(scaled, 2), mu__jain(two, 2), 1e-12));
	CHECK(t, mu__jain(zero, 3) == 0);
	CHECK(t, mu__jain(NULL, 0) == 0);
}

/* A generator for queue "q": 4 hours at 64 GPUs, backlog of 32 GPUs. */
static void gen_small(mu__evq_gen_t *g, uint64_t seed, bool gangs)
{
	mu__evq_gen_defaults(g, "q", seed);
	g->until = 4 * HOUR;
	g->offered_gpus = 64;
	g->backlog_gpus = 32;
	g->gangs = gangs;
}

static int64_t job_gpus(const mu_job_spec_t *j)
{
	return j->podsets[0].req.v[MU_RES_GPU] * j->podsets[0].replicas;
}

static void test_gen_deterministic(mu_t_t *t)
{
	mu_specs_t a, b, c;
	mu__evq_gen_t g;
	double oa, ob, oc;
	mu_specs_init(&a);
	mu_specs_init(&b);
	mu_specs_init(&c);
	gen_small(&g, 7, true);
	CHECK_EQ_INT(t, mu__evq_gen_jobs(&a, &g, &oa), MU_OK);
	CHECK_EQ_INT(t, mu__evq_gen_jobs(&b, &g, &ob), MU_OK);
	gen_small(&g, 8, true);
	CHECK_EQ_INT(t, mu__evq_gen_jobs(&c, &g, &oc), MU_OK);
	CHECK(t, a.njobs > 0);
	CHECK_EQ_INT(t, a.njobs, b.njobs);
	CHECK(t, oa == ob);
	bool same = a.njobs == b.njobs, differs = a.njobs != c.njobs;
	for (size_t i = 0; same && i < a.njobs; i++) {
		const mu_job_spec_t *x = &a.jobs[i], *y = &b.jobs[i];
		same = !strcmp(x->name, y->name) && x->submit == y->submit &&
		       x->duration == y->duration && job_gpus(x) == job_gpus(y) &&
		       x->podsets[0].replicas == y->podsets[0].replicas;
	}
	for (size_t i = 0; !differs && i < a.njobs; i++)
		differs = a.jobs[i].submit != c.jobs[i].submit ||
			  a.jobs[i].duration != c.jobs[i].duration;
	CHECK(t, same);
	CHECK(t, differs);
	mu_specs_release(&a);
	mu_specs_release(&b);
	mu_specs_release(&c);
}

/* The load of the arrivals is the target; the backlog is at least what was
 * asked and submitted at 0; arrivals fall in [0, until); gangs only when
 * asked for, and then whole 8-GPU pods. */
static void test_gen_load(mu_t_t *t)
{
	for (int gangs = 0; gangs < 2; gangs++) {
		mu_specs_t s;
		mu__evq_gen_t g;
		double off, work = 0;
		int64_t backlog = 0, big = 0;
		mu_specs_init(&s);
		gen_small(&g, 3, gangs);
		CHECK_EQ_INT(t, mu__evq_gen_jobs(&s, &g, &off), MU_OK);
		CHECK(t, near(off, 64, 0.01));
		for (size_t i = 0; i < s.njobs; i++) {
			const mu_job_spec_t *j = &s.jobs[i];
			CHECK(t, j->submit >= 0 && j->submit < g.until);
			CHECK(t, j->duration > 0 && j->preemptible);
			if (j->podsets[0].replicas > 1) {
				big++;
				CHECK_EQ_INT(t, j->podsets[0].req.v[MU_RES_GPU], 8);
			}
			if (j->submit == 0 && backlog < 32)
				backlog += job_gpus(j);
			else
				work += (double)job_gpus(j) * (double)j->duration / 1000;
		}
		CHECK(t, backlog >= 32 && backlog < 32 + 32);
		CHECK(t, near(work / (4 * 3600.0), 64, 0.01));
		CHECK(t, gangs ? big > 0 : big == 0);
		mu_specs_release(&s);
	}
}

static void test_fairness_small(mu_t_t *t)
{
	mu__evq_opts_t o;
	mu__evq_fair_t f;
	mu_diag_t d = {{0}};
	mu__evq_opts_defaults(&o);
	o.nodes = 32; /* below that, a 32-GPU gang is a whole queue's share */
	o.span = 4 * HOUR;
	o.load = 2.0; /* few jobs: more load keeps the queues from running dry */
	o.windows = 2;
	CHECK_EQ_INT(t, mu__evq_fairness(&o, &f, &d), MU_OK);
	CHECK_EQ_INT(t, f.nqueues, 4);
	CHECK(t, f.jain >= 0.95);
	CHECK(t, f.jain_win_min >= 0.9);
	double sum = 0;
	for (int i = 0; i < f.nqueues; i++) {
		CHECK(t, near(f.q[i].target, 0.25, 1e-12));
		CHECK(t, near(f.q[i].offered_gpus, 2.0 * 64, 0.5));
		sum += f.q[i].share;
	}
	CHECK(t, near(sum, 1, 1e-9));
	CHECK(t, f.completed > 0 && f.utilization > 0.8);
}

/* On 8 nodes A is owed 32 GPUs: four 8-GPU pods.  B's jobs started at 0;
 * A arrives at 30 s. */
static void test_reclaim_small(mu_t_t *t)
{
	mu__evq_opts_t o;
	mu__evq_reclaim_t r;
	mu_diag_t d = {{0}};
	mu__evq_opts_defaults(&o);
	CHECK_EQ_INT(t, mu__evq_reclaim(&o, 8, 0, &r, &d), MU_OK);
	CHECK(t, r.held);
	CHECK(t, near(r.deserved_gpus, 32, 0));
	CHECK(t, r.latency_s <= r.bound_s);
	CHECK(t, r.cycles >= 1 && r.preemptions > 0);
	CHECK_EQ_INT(t, mu__evq_reclaim(&o, 8, 60000, &r, &d), MU_OK);
	CHECK(t, r.held);
	CHECK(t, r.latency_s >= 29 && r.latency_s <= r.bound_s); /* waits for 60 s */
	o.reclaim_at = 0;
	CHECK_EQ_INT(t, mu__evq_reclaim(&o, 8, 0, &r, &d), MU_EINVAL);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_jain);
	MU_RUN(&t, test_gen_deterministic);
	MU_RUN(&t, test_gen_load);
	MU_RUN(&t, test_fairness_small);
	MU_RUN(&t, test_reclaim_small);
	return mu_t_done(&t);
}

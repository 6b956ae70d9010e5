/*
 * bench_varied.h - the harness the varied shapes of `muster bench` share
 * (bench_varied.c, bench_varied2.c): an engine, its decisions buffer, the
 * running jobs to finish in little-changed cycles, and the CPU time spent
 * in the engine.
 */
#ifndef MUSTER_BENCH_BENCH_VARIED_H
#define MUSTER_BENCH_BENCH_VARIED_H

#include "bench/bench_int.h"

typedef struct mu__vb mu__vb_t;

/* Submits one job for a little-changed cycle; q is the queue tag of the
 * job that just finished (-1 untracked). */
typedef int (*mu__vb_arrive_fn)(mu__vb_t *v, void *ctx, int32_t q, mu_time_t now);

struct mu__vb {
	mu_engine_t *e;
	mu_decisions_t d;      /* reused by every cycle */
	uint64_t rng;
	double cost;           /* of one clock read */
	double engine_us;      /* submits and cycles, CPU */
	int64_t njobs;         /* submitted */
	int64_t binds;         /* jobs started */
	int64_t real;          /* real decisions seen */
	mu_id_t *run;          /* started jobs not finished by the bench */
	int32_t *runq;         /* their queue tags */
	int32_t nrun, caprun;
	int32_t (*queue_of)(const mu__vb_t *v, mu_id_t job); /* NULL: -1 */
};

/* A new engine (defaults, o->seed) and an empty harness; MU_ENOMEM. */
int mu__vb_init(mu__vb_t *v, const mu_bench_opts_t *o);
void mu__vb_release(mu__vb_t *v);
/* Adds n CPU nodes named n000000..., labelled with their hostname and,
 * when key is set, key=z<i mod nvals>.  O(n). */
int mu__vb_nodes(mu__vb_t *v, int32_t n, int64_t cpu, int64_t mem, int64_t pods,
		 const char *key, int32_t nvals);
/* Submits b (named j<count> when b->name is NULL), timed into engine_us. */
int mu__vb_submit(mu__vb_t *v, const mu__bench_job_t *b, mu_time_t now);
/* One cycle at now, timed (*us when not NULL, and engine_us); tracks the
 * jobs it started. */
int mu__vb_cycle(mu__vb_t *v, mu_time_t now, double *us);
/* Times a cold cycle, `idles` idle cycles and `changes` little-changed
 * cycles (a random tracked job finishes, arrive() submits one) from *now
 * on (advanced by a second per cycle) into r. */
int mu__vb_measure(mu__vb_t *v, mu_time_t *now, int32_t idles, int32_t changes,
		   mu__vb_arrive_fn arrive, void *ctx, mu_bench_result_t *r);

#endif

/*
 * engine_fixture.h - the node the engine's unit tests of work per cycle
 * (test_expl.c, test_work.c) build their clusters from: 64 CPUs, 512 GiB,
 * 8 GPUs and 110 pods, named n00000, n00001, ...; and, for the tests of
 * the GPU supply and devices per model (test_supply.c, test_gpu_models.c),
 * an engine with one queue and a one-pod-set job's submission.
 * Header-only (static functions), included after check.h by the tests
 * that use it.
 */
#ifndef MUSTER_TEST_ENGINE_FIXTURE_H
#define MUSTER_TEST_ENGINE_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "muster/engine.h"

/* Upserts node "n%05d" (i) of the shape above into e; the name is copied
 * by the engine.  O(1) besides the engine's own work. */
static inline void add_node(mu_engine_t *e, int i)
{
	char name[16];
	snprintf(name, sizeof name, "n%05d", i);
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = name;
	n.alloc.v[MU_RES_CPU] = 64000;
	n.alloc.v[MU_RES_MEM] = 512LL << 30;
	n.alloc.v[MU_RES_GPU] = 8;
	n.alloc.v[MU_RES_PODS] = 110;
	mu_engine_node_upsert(e, &n, NULL);
}

/* Upserts node `name` of 64 CPUs, 256 GiB and 110 pods with gpus devices
 * of model (NULL none), cordoned or not, with the one label (NULL none). */
static inline int fx_node(mu_engine_t *e, const char *name, int gpus,
			  const char *model, bool cordon, mu_label_t *label)
{
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = name;
	n.alloc.v[MU_RES_CPU] = 64000;
	n.alloc.v[MU_RES_MEM] = 256LL << 30;
	n.alloc.v[MU_RES_GPU] = gpus;
	n.alloc.v[MU_RES_PODS] = 110;
	n.gpu_model = model;
	n.unschedulable = cordon;
	n.labels = label;
	n.nlabels = label ? 1 : 0;
	return mu_engine_node_upsert(e, &n, NULL);
}

/* An engine scoring with ops on state (seed its randomness), min_runtime
 * 0, with the one queue "q" (no quota: jobs must be preemptible). */
static inline mu_engine_t *fx_engine(const mu_score_ops_t *ops, const void *state,
				     uint64_t seed)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.score = ops;
	cfg.score_state = state;
	cfg.seed = seed;
	cfg.min_runtime = 0;
	mu_engine_t *e = NULL;
	mu_engine_new(&cfg, &e);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(e, &q);
	return e;
}

/* Submits preemptible batch job `name` to "q" at now: one pod set of
 * replicas pods of req on models (none: any), asking gpu_memory MiB of a
 * GPU's memory (0: none), 600 s estimated. */
static inline int fx_submit(mu_engine_t *e, const char *name, int32_t replicas,
			    const mu_res_t *req, const char **models, size_t nmodels,
			    int64_t gpu_memory, mu_time_t now)
{
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = replicas;
	ps.req = *req;
	ps.gpu_models = models;
	ps.ngpu_models = nmodels;
	ps.gpu_memory = gpu_memory;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = name;
	j.queue = "q";
	j.type = MU_JOB_BATCH;
	j.preemptible = true;
	j.podsets = &ps;
	j.npodsets = 1;
	j.submit = now;
	j.runtime_estimate = 600000;
	return mu_engine_job_submit(e, &j, now, NULL);
}

#endif

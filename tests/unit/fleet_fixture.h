/*
 * fleet_fixture.h - the nodes and queues that the fleet engine's unit
 * tests (test_fleet_engine.c, test_fleet_elastic.c) build their clusters
 * and hub queues from: H100 nodes of 64 CPUs, 512 GiB and 110 pods with a
 * given number of GPUs, and queues deserving a number of GPUs with weight
 * 1 on GPUs.  Header-only (static functions), included after check.h.
 */
#ifndef MUSTER_TEST_FLEET_FIXTURE_H
#define MUSTER_TEST_FLEET_FIXTURE_H

#include <string.h>

#include "muster/fleet.h"

#define GI (1024LL * 1024 * 1024)
#define MIN (60 * 1000LL)
#define HOUR (60 * MIN)

/* Node name (not copied) of gpus GPUs, as above. */
static mu_node_spec_t node_of(const char *name, int gpus)
{
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = name;
	n.alloc.v[MU_RES_CPU] = 64000;
	n.alloc.v[MU_RES_MEM] = 512 * GI;
	n.alloc.v[MU_RES_GPU] = gpus;
	n.alloc.v[MU_RES_PODS] = 110;
	n.gpu_model = "H100";
	return n;
}

/* Queue name (not copied) deserving deserved_gpus GPUs, into *q. */
static void queue_of(mu_queue_spec_t *q, const char *name, int deserved_gpus)
{
	mu_queue_spec_defaults(q);
	q->name = name;
	q->deserved.v[MU_RES_GPU] = deserved_gpus * 1000LL;
	q->weight[MU_RES_GPU] = 1;
}

#endif

/*
 * engine_fixture.h - the node the engine's unit tests of work per cycle
 * (test_expl.c, test_work.c) build their clusters from: 64 CPUs, 512 GiB,
 * 8 GPUs and 110 pods, named n00000, n00001, ...  Header-only (static
 * functions), included after check.h by the tests that use it.
 */
#ifndef MUSTER_TEST_ENGINE_FIXTURE_H
#define MUSTER_TEST_ENGINE_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "muster/engine.h"

/* Upserts node "n%05d" (i) of the shape above into e; the name is copied
 * by the engine.  O(1) besides the engine's own work. */
static void add_node(mu_engine_t *e, int i)
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

#endif

/*
 * specs.c - the arena and the growable spec set that loaders fill.
 *
 * The arena hands out zeroed, aligned memory from big blocks and frees them
 * all at once; a spec set keeps its nested strings and arrays there, and its
 * top-level arrays (nodes, queues, jobs, topologies, priority classes and
 * late references) in realloc'ed memory.
 */
#include <stdlib.h>
#include <string.h>

#include "muster/specs.h"

struct mu_arena_block {
	mu_arena_block_t *next;
	size_t size;         /* of the data (the header's padding anyway) */
	max_align_t align[]; /* the data */
};

/* Blocks start small and double up to MU__ARENA_BLOCK: a spec set of one
 * pod (the scheduler daemon keeps one per pod shape, hundreds of them)
 * holds about a kilobyte, not a 64 KB block. */
#define MU__ARENA_FIRST 1024
#define MU__ARENA_BLOCK (64 * 1024)

void mu_arena_init(mu_arena_t *a)
{
	memset(a, 0, sizeof *a);
}

void mu_arena_release(mu_arena_t *a)
{
	mu_arena_block_t *b = a->head;
	while (b) {
		mu_arena_block_t *next = b->next;
		free(b);
		b = next;
	}
	memset(a, 0, sizeof *a);
}

/* O(1) amortized; a request larger than half the next block gets a block
 * of its own, behind the head (it took the head's place before, and the
 * next block was twice its size: a pod's 6-KB affinity table left each of
 * the daemon's pod shapes a 12-KB block holding 32 bytes).  Each new head
 * is twice the last (MU__ARENA_FIRST to MU__ARENA_BLOCK). */
void *mu_arena_alloc(mu_arena_t *a, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	if (size == 0)
		size = 16;
	size_t next = !a->head ? MU__ARENA_FIRST :
		      a->size >= MU__ARENA_BLOCK / 2 ? MU__ARENA_BLOCK : a->size * 2;
	if (a->head && a->size - a->used < size && size > next / 2) {
		/* a large request gets a block of its own behind the head, so
		 * neither the head's room nor the doubling is lost to it */
		mu_arena_block_t *b = malloc(sizeof *b + size);
		if (!b)
			return NULL;
		b->next = a->head->next;
		b->size = size;
		a->head->next = b;
		memset(b->align, 0, size);
		return b->align;
	}
	if (!a->head || a->size - a->used < size) {
		size_t bsize = size > next ? size : next;
		mu_arena_block_t *b = malloc(sizeof *b + bsize);
		if (!b)
			return NULL;
		b->next = a->head;
		b->size = bsize;
		a->head = b;
		a->size = bsize;
		a->used = 0;
	}
	char *p = (char *)a->head->align + a->used;
	a->used += size;
	memset(p, 0, size);
	return p;
}

char *mu_arena_strndup(mu_arena_t *a, const char *s, size_t n)
{
	char *p = mu_arena_alloc(a, n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

size_t mu_arena_bytes(const mu_arena_t *a)
{
	size_t n = 0;
	for (const mu_arena_block_t *b = a->head; b; b = b->next)
		n += b->size;
	return n;
}

char *mu_arena_strdup(mu_arena_t *a, const char *s)
{
	return s ? mu_arena_strndup(a, s, strlen(s)) : NULL;
}

void mu_specs_init(mu_specs_t *s)
{
	memset(s, 0, sizeof *s);
	mu_arena_init(&s->arena);
}

void mu_specs_release(mu_specs_t *s)
{
	free(s->nodes);
	free(s->queues);
	free(s->jobs);
	free(s->topologies);
	free(s->pools);
	free(s->pclasses);
	free(s->refs);
	free(s->dra);
	mu_arena_release(&s->arena);
	memset(s, 0, sizeof *s);
}

/* Grows *v (elements of size sz) so that one more fits; returns the new
 * zeroed slot or NULL. */
static void *specs_push(void **v, size_t *n, size_t *cap, size_t sz)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		void *nv = realloc(*v, ncap * sz);
		if (!nv)
			return NULL;
		*v = nv;
		*cap = ncap;
	}
	char *slot = (char *)*v + (*n)++ * sz;
	memset(slot, 0, sz);
	return slot;
}

mu_node_spec_t *mu_specs_add_node(mu_specs_t *s)
{
	return specs_push((void **)&s->nodes, &s->nnodes, &s->nodes_cap,
			  sizeof *s->nodes);
}

mu_queue_spec_t *mu_specs_add_queue(mu_specs_t *s)
{
	mu_queue_spec_t *q = specs_push((void **)&s->queues, &s->nqueues,
					&s->queues_cap, sizeof *s->queues);
	if (q)
		mu_queue_spec_defaults(q);
	return q;
}

mu_job_spec_t *mu_specs_add_job(mu_specs_t *s)
{
	return specs_push((void **)&s->jobs, &s->njobs, &s->jobs_cap,
			  sizeof *s->jobs);
}

const mu_queue_spec_t *mu_specs_find_queue(const mu_specs_t *s,
					   const char *name)
{
	for (size_t i = 0; i < s->nqueues; i++)
		if (strcmp(s->queues[i].name, name) == 0)
			return &s->queues[i];
	return NULL;
}

mu_topology_spec_t *mu_specs_add_topology(mu_specs_t *s)
{
	return specs_push((void **)&s->topologies, &s->ntopologies,
			  &s->topologies_cap, sizeof *s->topologies);
}

mu_priority_class_spec_t *mu_specs_add_priority_class(mu_specs_t *s)
{
	return specs_push((void **)&s->pclasses, &s->npclasses,
			  &s->pclasses_cap, sizeof *s->pclasses);
}

mu_pool_spec_t *mu_specs_add_pool(mu_specs_t *s)
{
	return specs_push((void **)&s->pools, &s->npools, &s->pools_cap,
			  sizeof *s->pools);
}

const char **mu_specs_add_dra(mu_specs_t *s)
{
	return specs_push((void **)&s->dra, &s->ndra, &s->dra_cap,
			  sizeof *s->dra);
}

mu_spec_ref_t *mu_specs_add_ref(mu_specs_t *s)
{
	return specs_push((void **)&s->refs, &s->nrefs, &s->refs_cap,
			  sizeof *s->refs);
}

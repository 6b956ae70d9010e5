/*
 * rvec.c - the engine's shared resource vectors.  A pod set's request and
 * accounting vectors (128 bytes each) are the same for every pod set of a
 * shape, and the scheduler daemon holds one single-pod job per pod: so
 * each distinct vector is kept once, in a table of the engine (open
 * addressing, linear probing, backward-shift deletion), with a count of
 * the pod sets and flavors that hold it, and freed when the last lets go.
 * A held vector is never written: who wants another one (a flavor's
 * accounting, a pool's new slot) gets another one (copy-on-write).
 */
#include "engine/engine_int.h"

/* One shared vector: v first, so that a holder's pointer is the entry. */
typedef struct mu__rvec {
	mu_res_t v;
	uint64_t hash;
	int64_t refs;
} mu__rvec_t;

/* A multiplicative hash over the 16 values (one multiply each), mixed at
 * the end so that the low bits, which pick the slot, depend on all. */
static uint64_t rvec_hash(const mu_res_t *v)
{
	uint64_t h = 0;
	for (int r = 0; r < MU_RES_MAX; r++)
		h = (h + (uint64_t)v->v[r]) * 0x9e3779b97f4a7c15u;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9u;
	return h ^ (h >> 32);
}

/* Doubles the table (8 slots at first).  O(entries). */
static int rvec_grow(mu__rvtab_t *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 8;
	mu__rvec_t **s = calloc(cap, sizeof *s);
	if (!s)
		return MU_ENOMEM;
	for (uint32_t i = 0; i < t->cap; i++) {
		mu__rvec_t *x = t->slot[i];
		if (!x)
			continue;
		uint32_t k = (uint32_t)x->hash & (cap - 1);
		while (s[k])
			k = (k + 1) & (cap - 1);
		s[k] = x;
	}
	free(t->slot);
	t->slot = s;
	t->cap = cap;
	return MU_OK;
}

const mu_res_t *mu__rvec_get(mu_engine_t *e, const mu_res_t *v)
{
	mu__rvtab_t *t = &e->rvecs;
	uint64_t h = rvec_hash(v);
	if (t->cap) {
		for (uint32_t k = (uint32_t)h & (t->cap - 1); t->slot[k];
		     k = (k + 1) & (t->cap - 1)) {
			mu__rvec_t *x = t->slot[k];
			if (x->hash == h && !memcmp(&x->v, v, sizeof *v)) {
				x->refs++;
				return &x->v;
			}
		}
	}
	if ((t->n + 1) * 4 > t->cap * 3 && rvec_grow(t))
		return NULL;
	mu__rvec_t *x = malloc(sizeof *x);
	if (!x)
		return NULL;
	x->v = *v;
	x->hash = h;
	x->refs = 1;
	uint32_t k = (uint32_t)h & (t->cap - 1);
	while (t->slot[k])
		k = (k + 1) & (t->cap - 1);
	t->slot[k] = x;
	t->n++;
	return &x->v;
}

const mu_res_t *mu__rvec_ref(const mu_res_t *v)
{
	if (v)
		((mu__rvec_t *)(void *)(uintptr_t)v)->refs++;
	return v;
}

void mu__rvec_put(mu_engine_t *e, const mu_res_t *v)
{
	if (!v)
		return;
	mu__rvec_t *x = (mu__rvec_t *)(void *)(uintptr_t)v;
	if (--x->refs > 0)
		return;
	mu__rvtab_t *t = &e->rvecs;
	uint32_t k = (uint32_t)x->hash & (t->cap - 1);
	while (t->slot[k] != x)
		k = (k + 1) & (t->cap - 1);
	/* Backward-shift: move up each later entry of the run whose home
	 * is not between the hole and it. */
	uint32_t hole = k;
	for (uint32_t j = (k + 1) & (t->cap - 1); t->slot[j]; j = (j + 1) & (t->cap - 1)) {
		uint32_t home = (uint32_t)t->slot[j]->hash & (t->cap - 1);
		bool stays = hole <= j ? (hole < home && home <= j) :
			(hole < home || home <= j);
		if (stays)
			continue;
		t->slot[hole] = t->slot[j];
		hole = j;
	}
	t->slot[hole] = NULL;
	t->n--;
	free(x);
}

void mu__rvec_release(mu__rvtab_t *t)
{
	for (uint32_t i = 0; i < t->cap; i++)
		free(t->slot[i]);
	free(t->slot);
	memset(t, 0, sizeof *t);
}

/*
 * kmap.c - the daemon's string-keyed hash map of pointers (pods, groups,
 * nodes and objects by "ns/name" keys).  Keys are owned by the values;
 * the map owns only its buckets.  Lookups are O(1) expected; the table
 * doubles when it is three-quarters full.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"

static uint64_t khash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

void *mu__kmap_get(const mu__kmap_t *m, const char *key)
{
	if (!m->cap)
		return NULL;
	for (mu__kment_t *e = m->tab[khash(key) & (m->cap - 1)]; e; e = e->next)
		if (!strcmp(e->key, key))
			return e->val;
	return NULL;
}

int mu__kmap_put(mu__kmap_t *m, const char *key, void *val)
{
	if (m->n + 1 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		mu__kment_t **nt = calloc(ncap, sizeof *nt);
		if (!nt)
			return MU_ENOMEM;
		for (size_t i = 0; i < m->cap; i++)
			for (mu__kment_t *e = m->tab[i], *nx; e; e = nx) {
				nx = e->next;
				size_t b = khash(e->key) & (ncap - 1);
				e->next = nt[b];
				nt[b] = e;
			}
		free(m->tab);
		m->tab = nt;
		m->cap = ncap;
	}
	size_t b = khash(key) & (m->cap - 1);
	for (mu__kment_t *e = m->tab[b]; e; e = e->next)
		if (!strcmp(e->key, key)) {
			e->key = key;
			e->val = val;
			return MU_OK;
		}
	mu__kment_t *e = malloc(sizeof *e);
	if (!e)
		return MU_ENOMEM;
	*e = (mu__kment_t){key, val, m->tab[b]};
	m->tab[b] = e;
	m->n++;
	return MU_OK;
}

void *mu__kmap_del(mu__kmap_t *m, const char *key)
{
	if (!m->cap)
		return NULL;
	for (mu__kment_t **pp = &m->tab[khash(key) & (m->cap - 1)]; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->key, key)) {
			mu__kment_t *e = *pp;
			void *v = e->val;
			*pp = e->next;
			free(e);
			m->n--;
			return v;
		}
	return NULL;
}

void mu__kmap_each(const mu__kmap_t *m, void (*fn)(void *arg, void *val), void *arg)
{
	for (size_t i = 0; i < m->cap; i++)
		for (mu__kment_t *e = m->tab[i], *nx; e; e = nx) {
			nx = e->next;
			fn(arg, e->val);
		}
}

void mu__kmap_release(mu__kmap_t *m)
{
	for (size_t i = 0; i < m->cap; i++)
		for (mu__kment_t *e = m->tab[i], *nx; e; e = nx) {
			nx = e->next;
			free(e);
		}
	free(m->tab);
	memset(m, 0, sizeof *m);
}

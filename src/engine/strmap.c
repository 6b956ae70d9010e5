/*
 * strmap.c - a string -> int32 hash map with open addressing and linear
 * probing, and the string interning table built on it.  Keys are copied and
 * owned by the map.  Names of removed nodes and queues stay, which keeps
 * their ids stable; a job's name goes when the job is forgotten
 * (mu__strmap_del, backward-shift deletion).
 */
#include "engine/engine_int.h"

/* FNV-1a; short keys dominate. */
static uint32_t strmap_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

void mu__strmap_release(mu__strmap_t *m)
{
	for (uint32_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

int32_t mu__strmap_get(const mu__strmap_t *m, const char *key)
{
	if (!m->cap)
		return -1;
	uint32_t mask = m->cap - 1;
	for (uint32_t i = strmap_hash(key) & mask;; i = (i + 1) & mask) {
		if (!m->keys[i])
			return -1;
		if (strcmp(m->keys[i], key) == 0)
			return m->vals[i];
	}
}

/* Doubles the table; O(n). */
static int strmap_rehash(mu__strmap_t *m)
{
	uint32_t ncap = m->cap ? m->cap * 2 : 64;
	char **nk = calloc(ncap, sizeof *nk);
	int32_t *nv = calloc(ncap, sizeof *nv);
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return MU_ENOMEM;
	}
	for (uint32_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		uint32_t j = strmap_hash(m->keys[i]) & (ncap - 1);
		while (nk[j])
			j = (j + 1) & (ncap - 1);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return MU_OK;
}

const char *mu__strmap_put(mu__strmap_t *m, const char *key, int32_t val)
{
	if ((m->n + 1) * 2 > m->cap && strmap_rehash(m) != MU_OK)
		return NULL;
	uint32_t mask = m->cap - 1;
	uint32_t i = strmap_hash(key) & mask;
	for (; m->keys[i]; i = (i + 1) & mask) {
		if (strcmp(m->keys[i], key) == 0) {
			m->vals[i] = val;
			return m->keys[i];
		}
	}
	size_t len = strlen(key);
	char *k = malloc(len + 1);
	if (!k)
		return NULL;
	memcpy(k, key, len + 1);
	m->keys[i] = k;
	m->vals[i] = val;
	m->n++;
	return k;
}

bool mu__strmap_del(mu__strmap_t *m, const char *key)
{
	if (!m->cap)
		return false;
	uint32_t mask = m->cap - 1, i = strmap_hash(key) & mask;
	for (; m->keys[i]; i = (i + 1) & mask)
		if (strcmp(m->keys[i], key) == 0)
			break;
	if (!m->keys[i])
		return false;
	free(m->keys[i]);
	/* Shift later entries of the run back into the hole unless their
	 * home slot lies cyclically in (hole, their slot]. */
	for (uint32_t j = i;;) {
		j = (j + 1) & mask;
		if (!m->keys[j])
			break;
		uint32_t k = strmap_hash(m->keys[j]) & mask;
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
	m->keys[i] = NULL;
	m->n--;
	return true;
}

void mu__strtab_release(mu__strtab_t *t)
{
	mu__strmap_release(&t->map);
	free(t->strs);
	memset(t, 0, sizeof *t);
}

int32_t mu__intern(mu__strtab_t *t, const char *s)
{
	if (!s)
		return -1;
	int32_t id = mu__strmap_get(&t->map, s);
	if (id >= 0)
		return id;
	if (mu__grow((void **)&t->strs, &t->cap, t->n + 1, sizeof *t->strs))
		return -1;
	const char *k = mu__strmap_put(&t->map, s, t->n);
	if (!k)
		return -1;
	t->strs[t->n] = k;
	return t->n++;
}

int32_t mu__strtab_find(const mu__strtab_t *t, const char *s)
{
	return s ? mu__strmap_get(&t->map, s) : -1;
}

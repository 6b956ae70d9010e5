/*
 * snap.c - snapshots of a host's view for the UI.
 *
 * A provider fills an empty snapshot with mu_web_snap_add_*(), which copy
 * the structs and every string they point to into the snapshot's pool.
 * mu__snap_seal() then sorts jobs by key, pods by their job's key and
 * nodes by rack then name (so a job's pods and a rack's nodes are
 * contiguous), and counts GPUs per state.  From then on the snapshot is
 * immutable; HTTP threads hold references and the last one frees it.
 */
#include <stdlib.h>
#include <string.h>

#include "web/web_int.h"

struct mu__wpool_block {
	mu__wpool_block_t *next;
	size_t used, cap;
	char data[];
};

/* A copy of str in s's pool; NULL for NULL (and on OOM, *oom set). */
static const char *pool_str(mu_web_snap_t *s, const char *str, bool *oom)
{
	if (!str)
		return NULL;
	size_t n = strlen(str) + 1;
	mu__wpool_block_t *b = s->pool;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		b = malloc(sizeof *b + cap);
		if (!b) {
			*oom = true;
			return NULL;
		}
		b->next = s->pool;
		b->used = 0;
		b->cap = cap;
		s->pool = b;
	}
	char *dst = b->data + b->used;
	memcpy(dst, str, n);
	b->used += n;
	return dst;
}

/* Grows an array of elements of size sz to hold one more. */
static int grow(void **v, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return MU_OK;
	size_t nc = *cap ? *cap * 2 : 64;
	void *nv = realloc(*v, nc * sz);
	if (!nv)
		return MU_ENOMEM;
	*v = nv;
	*cap = nc;
	return MU_OK;
}

mu_web_snap_t *mu__snap_new(void)
{
	mu_web_snap_t *s = calloc(1, sizeof *s);
	if (s)
		atomic_init(&s->refs, 1);
	return s;
}

int mu_web_snap_set_title(mu_web_snap_t *s, const char *title)
{
	bool oom = false;
	s->title = (char *)pool_str(s, title, &oom);
	return oom ? MU_ENOMEM : MU_OK;
}

int mu_web_snap_add_queue(mu_web_snap_t *s, const mu_web_queue_t *q)
{
	if (grow((void **)&s->q, &s->capq, s->nq, sizeof *s->q))
		return MU_ENOMEM;
	bool oom = false;
	mu_web_queue_t *d = &s->q[s->nq];
	*d = *q;
	d->name = pool_str(s, q->name ? q->name : "", &oom);
	d->parent = pool_str(s, q->parent, &oom);
	if (oom)
		return MU_ENOMEM;
	s->nq++;
	return MU_OK;
}

int mu_web_snap_add_pool(mu_web_snap_t *s, const mu_web_pool_t *p)
{
	if (grow((void **)&s->po, &s->cappo, s->npo, sizeof *s->po))
		return MU_ENOMEM;
	bool oom = false;
	mu_web_pool_t *d = &s->po[s->npo];
	*d = *p;
	d->pool = pool_str(s, p->pool ? p->pool : "", &oom);
	d->queue = pool_str(s, p->queue, &oom);
	if (oom)
		return MU_ENOMEM;
	s->npo++;
	return MU_OK;
}

int mu_web_snap_add_job(mu_web_snap_t *s, const mu_web_job_t *j)
{
	if (grow((void **)&s->j, &s->capj, s->nj, sizeof *s->j))
		return MU_ENOMEM;
	bool oom = false;
	mu_web_job_t *d = &s->j[s->nj];
	*d = *j;
	d->key = pool_str(s, j->key ? j->key : "", &oom);
	d->name = pool_str(s, j->name ? j->name : "", &oom);
	d->ns = pool_str(s, j->ns ? j->ns : "", &oom);
	d->queue = pool_str(s, j->queue ? j->queue : "", &oom);
	d->type = pool_str(s, j->type ? j->type : "", &oom);
	d->kind = pool_str(s, j->kind ? j->kind : "", &oom);
	d->expected_from = pool_str(s, j->expected_from, &oom);
	d->why = pool_str(s, j->why, &oom);
	d->reason = pool_str(s, j->reason, &oom);
	if (oom)
		return MU_ENOMEM;
	s->nj++;
	return MU_OK;
}

int mu_web_snap_add_pod(mu_web_snap_t *s, const mu_web_pod_t *p)
{
	if (grow((void **)&s->p, &s->capp, s->np, sizeof *s->p))
		return MU_ENOMEM;
	bool oom = false;
	mu_web_pod_t *d = &s->p[s->np];
	*d = *p;
	d->job_key = pool_str(s, p->job_key ? p->job_key : "", &oom);
	d->name = pool_str(s, p->name ? p->name : "", &oom);
	d->ns = pool_str(s, p->ns ? p->ns : "", &oom);
	d->node = pool_str(s, p->node, &oom);
	d->phase = pool_str(s, p->phase ? p->phase : "", &oom);
	d->cpus = pool_str(s, p->cpus, &oom);
	if (oom)
		return MU_ENOMEM;
	s->np++;
	return MU_OK;
}

int mu_web_snap_add_node(mu_web_snap_t *s, const mu_web_node_t *n)
{
	if (n->ngpu < 0 || n->ngpu > MU_WEB_MAX_GPUS)
		return MU_EINVAL;
	if (grow((void **)&s->n, &s->capn, s->nn, sizeof *s->n))
		return MU_ENOMEM;
	bool oom = false;
	mu_web_node_t *d = &s->n[s->nn];
	*d = *n;
	d->name = pool_str(s, n->name ? n->name : "", &oom);
	d->rack = pool_str(s, n->rack, &oom);
	d->levels = pool_str(s, n->levels, &oom);
	d->gpu_model = pool_str(s, n->gpu_model, &oom);
	if (oom)
		return MU_ENOMEM;
	s->nn++;
	return MU_OK;
}

int mu_web_snap_add_cluster(mu_web_snap_t *s, const mu_web_cluster_t *c)
{
	if (grow((void **)&s->c, &s->capc, s->nc, sizeof *s->c))
		return MU_ENOMEM;
	bool oom = false;
	mu_web_cluster_t *d = &s->c[s->nc];
	*d = *c;
	d->name = pool_str(s, c->name ? c->name : "", &oom);
	d->state = pool_str(s, c->state ? c->state : "", &oom);
	if (oom)
		return MU_ENOMEM;
	s->nc++;
	s->has_fleet = true;
	return MU_OK;
}

int mu_web_snap_add_placement(mu_web_snap_t *s, const mu_web_placement_t *p)
{
	if (grow((void **)&s->pl, &s->cappl, s->npl, sizeof *s->pl))
		return MU_ENOMEM;
	bool oom = false;
	mu_web_placement_t *d = &s->pl[s->npl];
	d->job_key = pool_str(s, p->job_key ? p->job_key : "", &oom);
	d->cluster = pool_str(s, p->cluster ? p->cluster : "", &oom);
	if (oom)
		return MU_ENOMEM;
	s->npl++;
	s->has_fleet = true;
	return MU_OK;
}

static int cmp_job(const void *a, const void *b)
{
	return strcmp(((const mu_web_job_t *)a)->key, ((const mu_web_job_t *)b)->key);
}

static int cmp_pod(const void *a, const void *b)
{
	const mu_web_pod_t *x = a, *y = b;
	int c = strcmp(x->job_key, y->job_key);
	return c ? c : strcmp(x->name, y->name);
}

static int cmp_node(const void *a, const void *b)
{
	const mu_web_node_t *x = a, *y = b;
	int c = strcmp(x->rack ? x->rack : "", y->rack ? y->rack : "");
	return c ? c : strcmp(x->name, y->name);
}

void mu__snap_seal(mu_web_snap_t *s)
{
	if (s->nj)
		qsort(s->j, s->nj, sizeof *s->j, cmp_job);
	if (s->np)
		qsort(s->p, s->np, sizeof *s->p, cmp_pod);
	if (s->nn)
		qsort(s->n, s->nn, sizeof *s->n, cmp_node);
	memset(s->gpu_state, 0, sizeof s->gpu_state);
	for (size_t i = 0; i < s->nn; i++)
		for (int32_t g = 0; g < s->n[i].ngpu; g++)
			s->gpu_state[s->n[i].gpu[g] < 5 ? s->n[i].gpu[g] : MU_WEB_GPU_DOWN]++;
	s->pending = s->running = 0;
	for (size_t i = 0; i < s->nj; i++) {
		s->pending += s->j[i].state == MU_WEB_PENDING;
		s->running += s->j[i].state == MU_WEB_RUNNING;
	}
}

void mu__snap_ref(mu_web_snap_t *s)
{
	atomic_fetch_add(&s->refs, 1);
}

void mu__snap_unref(mu_web_snap_t *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	for (mu__wpool_block_t *b = s->pool, *nb; b; b = nb) {
		nb = b->next;
		free(b);
	}
	free(s->q);
	free(s->po);
	free(s->j);
	free(s->p);
	free(s->n);
	free(s->c);
	free(s->pl);
	free(s);
}

const mu_web_job_t *mu__snap_job(const mu_web_snap_t *s, const char *key)
{
	size_t lo = 0, hi = s->nj;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->j[mid].key, key);
		if (!c)
			return &s->j[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

size_t mu__snap_pods(const mu_web_snap_t *s, const char *key, size_t *first)
{
	size_t lo = 0, hi = s->np;
	while (lo < hi) { /* first pod whose job key >= key */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(s->p[mid].job_key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t n = 0;
	while (lo + n < s->np && !strcmp(s->p[lo + n].job_key, key))
		n++;
	*first = lo;
	return n;
}

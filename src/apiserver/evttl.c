/*
 * evttl.c - Events expire, as kube-apiserver's --event-ttl (default 1h):
 * kube stores every Event under an etcd lease of that TTL, renewed by each
 * write of it (pkg/registry/core/event/storage: the TTL function answers
 * the TTL on create and on update), so an Event goes one TTL after its
 * last write, with a DELETED watch event; muster up kept them forever,
 * and a long-running server's store grew with every pod it scheduled.
 *
 * Each write of an Event (seen by the controller thread, server.c) queues
 * (namespace, name, resourceVersion, deadline).  Deadlines come from the
 * monotonic clock and one TTL, so the queue is in deadline order: a sync
 * pops what is due and deletes the Event if its version is still the one
 * queued (a later write queued a later deadline).  At start (and after the
 * controller missed changes) every stored Event gets a full TTL, as etcd
 * renews every lease when a member becomes leader; a wall-clock jump
 * changes nothing.  Work per sync is bounded by MAX_WORK deletions; a
 * deletion that could not be committed (a full disk) is not tried again
 * before the next start.
 *
 * Ownership: the queue owns its strings; events are borrowed.
 */
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"

#define MAX_WORK 256

typedef struct due {
	char *ns, *name;
	int64_t rv, at;
} due_t;

struct mu__evttl {
	mu_apiserver_t *s;
	int64_t ttl_ms;
	due_t *q;            /* a ring of cap entries, n of them from head */
	size_t cap, head, n;
};

int mu__evttl_new(mu_apiserver_t *s, int64_t ttl_ms, mu__evttl_t **out)
{
	mu__evttl_t *e = calloc(1, sizeof *e);
	if (!e)
		return MU_ENOMEM;
	e->s = s;
	e->ttl_ms = ttl_ms;
	*out = e;
	return MU_OK;
}

static void clear(mu__evttl_t *e)
{
	for (size_t i = 0; i < e->n; i++) {
		due_t *d = &e->q[(e->head + i) % e->cap];
		free(d->ns);
		free(d->name);
	}
	e->head = e->n = 0;
}

void mu__evttl_free(mu__evttl_t *e)
{
	if (!e)
		return;
	clear(e);
	free(e->q);
	free(e);
}

/* Queues one Event version; drops it when out of memory (the Event then
 * lives until the next start). */
static void push(mu__evttl_t *e, const mu__obj_t *o, int64_t at)
{
	if (e->n == e->cap) {
		size_t nc = e->cap ? e->cap * 2 : 256;
		due_t *nq = malloc(nc * sizeof *nq);
		if (!nq)
			return;
		for (size_t i = 0; i < e->n; i++)
			nq[i] = e->q[(e->head + i) % e->cap];
		free(e->q);
		e->q = nq;
		e->cap = nc;
		e->head = 0;
	}
	due_t d = {strdup(o->ns), strdup(o->name), o->rv, at};
	if (!d.ns || !d.name) {
		free(d.ns);
		free(d.name);
		return;
	}
	e->q[(e->head + e->n++) % e->cap] = d;
}

void mu__evttl_event(mu__evttl_t *e, const mu__wev_t *ev, int64_t now)
{
	if (e->ttl_ms > 0 && ev->obj->rt == MU__RT_EVENTS && ev->type != MU__EV_DELETED)
		push(e, ev->obj, now + e->ttl_ms);
}

typedef struct {
	mu__evttl_t *e;
	int64_t at;
} resync_t;

static int resync_page(void *ctx, mu__page_t *pg)
{
	resync_t *r = ctx;
	for (size_t i = 0; i < pg->n; i++)
		push(r->e, pg->objs[i], r->at);
	return 0;
}

void mu__evttl_resync(mu__evttl_t *e, int64_t now)
{
	clear(e);
	if (e->ttl_ms <= 0)
		return;
	resync_t r = {e, now + e->ttl_ms};
	(void)mu__store_each(e->s->store, MU__RT_EVENTS, NULL, 1000, NULL, NULL, resync_page, &r);
}

/* Deletes the Event if it is still at the queued version. */
static int expire_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)out;
	return cur && cur->rv == *(const int64_t *)ctx ? MU__MUT_DEL : MU_ENOENT;
}

void mu__evttl_sync(mu__evttl_t *e, int64_t now)
{
	if (!e->n || e->q[e->head].at > now)
		return;
	mu__wtx_t *tx;
	if (mu__store_begin(e->s->store, &tx) != MU_OK)
		return;
	int work = 0;
	while (e->n && e->q[e->head].at <= now && work < MAX_WORK) {
		due_t *d = &e->q[e->head];
		if (mu__store_apply(tx, MU__RT_EVENTS, d->ns, d->name, expire_fn, &d->rv, false, NULL) == MU__MUT_DEL)
			work++;
		free(d->ns);
		free(d->name);
		e->head = (e->head + 1) % e->cap;
		e->n--;
	}
	mu__store_commit(tx);
}

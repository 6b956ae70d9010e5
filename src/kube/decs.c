/*
 * decs.c - a cycle's decisions as the daemon keeps them: compact records
 * (48 bytes) instead of the engine's mu_decision_t (320 bytes, 208 of them
 * a pending reason and 64 a CPU set that most decisions leave empty).  The
 * engine hands each decision to mu__kdecs_sink() as the cycle makes it
 * (mu_decisions_t.sink), so a cycle that places a 58,000-pod backlog holds
 * 3 MB of records, not a 21-MB array of decisions, at the daemon's memory
 * peak (docs/evaluation.md, "Ninth round").  A reason is kept (in its own
 * array) only for a pending decision or one that has a reason, a CPU set
 * only when not empty; mu__kdecs_get() gives a decision back whole, equal
 * to the one the engine made.  apply.c reads them; this file calls no
 * other part of the daemon.
 */
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"

/* Grows *v (elements of size sz, *cap of them) to hold one more; false
 * when out of memory.  Doubling: O(1) amortized. */
static bool grow(void **v, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return true;
	size_t nc = *cap ? *cap * 2 : 256;
	void *nv = realloc(*v, nc * sz);
	if (!nv)
		return false;
	*v = nv;
	*cap = nc;
	return true;
}

int mu__kdecs_sink(void *arg, const mu_decision_t *d)
{
	static const mu_reason_t none; /* read-only: the all-zero reason */
	mu__kdecs_t *k = arg;
	bool reason = d->kind == MU_DEC_PENDING || memcmp(&d->reason, &none, sizeof none);
	bool cpus = mu_cpuset_count(&d->cpus) > 0;
	if (!grow((void **)&k->v, &k->cap, k->n, sizeof *k->v) ||
	    (reason && !grow((void **)&k->r, &k->rcap, k->nr, sizeof *k->r)) ||
	    (cpus && !grow((void **)&k->c, &k->ccap, k->nc, sizeof *k->c)))
		return MU_ENOMEM;
	mu__kdec_t *x = &k->v[k->n++];
	x->gpus = d->gpus;
	x->job = d->job;
	x->node = d->node;
	x->by = d->by;
	x->podset = d->podset;
	x->pod = d->pod;
	x->gpu_milli = d->gpu_milli;
	x->reason = reason ? (int32_t)k->nr : -1;
	x->cpus = cpus ? (int32_t)k->nc : -1;
	x->kind = (int8_t)d->kind;
	x->numa = d->numa;
	x->nic = d->nic;
	x->suspend = d->suspend;
	x->move = d->move;
	if (reason)
		k->r[k->nr++] = d->reason;
	if (cpus)
		k->c[k->nc++] = d->cpus;
	return MU_OK;
}

const mu_decision_t *mu__kdecs_get(const mu__kdecs_t *k, size_t i, mu_decision_t *out)
{
	const mu__kdec_t *x = &k->v[i];
	memset(out, 0, sizeof *out);
	out->kind = (mu_dec_kind_t)x->kind;
	out->job = x->job;
	out->podset = x->podset;
	out->pod = x->pod;
	out->node = x->node;
	out->gpus = x->gpus;
	out->gpu_milli = x->gpu_milli;
	out->numa = x->numa;
	out->nic = x->nic;
	out->by = x->by;
	out->suspend = x->suspend;
	out->move = x->move;
	if (x->cpus >= 0)
		out->cpus = k->c[x->cpus];
	if (x->reason >= 0)
		out->reason = k->r[x->reason];
	return out;
}

void mu__kdecs_clear(mu__kdecs_t *k)
{
	k->n = k->nr = k->nc = 0;
}

size_t mu__kdecs_bytes(const mu__kdecs_t *k)
{
	return k->cap * sizeof *k->v + k->rcap * sizeof *k->r + k->ccap * sizeof *k->c;
}

void mu__kdecs_release(mu__kdecs_t *k)
{
	free(k->v);
	free(k->r);
	free(k->c);
	memset(k, 0, sizeof *k);
}

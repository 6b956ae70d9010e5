/*
 * cdelta.c - the net changes of a class's nodes over a stretch of the
 * change log, read once and shared.
 *
 * A carried explanation (cycle.c) and a fit count's snapshot (fitcount.c)
 * are brought up to date from the change log: for each class node logged
 * since their position, its record then (the first entry's) against its
 * record now.  Read entry by entry, every pending job paid for every entry
 * of the cycle, and the entries grow with the cluster (a backlog of 28,800
 * jobs re-read about 47 entries each at 20,000 nodes).  Here the class
 * node records that really moved since a position are gathered once per
 * position and log end, and the jobs that share them (carries follow the
 * queue order, so runs of jobs share a position) read only those.  A node
 * whose record came back to what it was (a pod taken and given back)
 * moves no count and is left out.  The caller keeps the mu__cdelta_t;
 * nothing here is global.
 */
#include "engine/engine_int.h"

/* Whether two compact records are equal (every field a filter reads). */
static bool nfree_same(const mu__nfree_t *a, const mu__nfree_t *b)
{
	return a->cpu == b->cpu && a->mem == b->mem && a->gpu == b->gpu &&
	       a->milli == b->milli && a->pods == b->pods;
}

const mu__cdelta_t *mu__cdelta(mu_engine_t *e, const mu__sclass_t *c, mu__cdelta_t *d,
			       uint64_t from)
{
	uint64_t end = e->chlog_base + (uint64_t)e->nchlog;
	if (d->built && d->gen == c->gen && d->from == from && d->to == end)
		return d; /* no entry since: every record is what it was */
	d->built = false;
	d->n = 0;
	if (from < e->chlog_base ||
	    mu__grow((void **)&e->expl_seen, &e->expl_seen_cap, e->nnodes,
		     sizeof *e->expl_seen) != MU_OK)
		return NULL;
	if (e->expl_stamp == 0) /* fresh array: no stamp yet */
		memset(e->expl_seen, 0, (size_t)e->expl_seen_cap * sizeof *e->expl_seen);
	uint64_t stamp = ++e->expl_stamp;
	for (uint64_t k = from - e->chlog_base; k < (uint64_t)e->nchlog; k++) {
		int32_t nid = e->chlog[k];
		if (nid >= e->nfree_cap || !mu__sclass_has(c, nid) || e->expl_seen[nid] == stamp)
			continue;
		e->expl_seen[nid] = stamp; /* its first entry holds its old record */
		if (nfree_same(&e->chlog_prev[k], &e->nfree[nid]))
			continue;
		if (mu__grow((void **)&d->v, &d->cap, d->n + 1, sizeof *d->v) != MU_OK)
			return NULL;
		d->v[d->n].was = e->chlog_prev[k];
		d->v[d->n++].now = e->nfree[nid];
	}
	d->gen = c->gen;
	d->from = from;
	d->to = end;
	d->built = true;
	return d;
}

void mu__cdelta_release(mu__cdelta_t *d)
{
	free(d->v);
	memset(d, 0, sizeof *d);
}

/*
 * elastic.c - elastic jobs grow in turns, by fair share.
 *
 * An elastic job (minMember below its pod count) places only the pods it
 * needs when the cycle tries it: its minMember to start, one more pod to
 * grow.  After the cycle's loop every job that could still grow is handed
 * one more pod at a time, always the one whose queue has the lowest
 * dominant share (usage over fair share), then the earlier in its queue's
 * order, until no pod fits.  Two elastic jobs then share the room the way
 * their queues' shares say, instead of the first one taking everything (as
 * KAI-Scheduler and Volcano hand out an elastic job's extra pods).
 * Cost: O(grown pods x (elastic jobs + class nodes)).
 */
#include "engine/engine_int.h"

int32_t mu__elastic_cap(const mu_engine_t *e, const mu__job_t *j, int32_t need)
{
	(void)e;
	if (j->min_member >= j->npods || j->npodsets != 1)
		return j->npods; /* gangs and multi-set jobs: all their pods */
	int32_t p = 0;
	for (int32_t left = need; p < j->npods && left > 0; p++)
		left -= j->pods[p].node < 0;
	return p;
}

int mu__elastic_note(mu_engine_t *e, int32_t jid)
{
	const mu__job_t *j = &e->jobs[jid];
	if (j->min_member >= j->npods || j->npodsets != 1 || j->topo >= 0 ||
	    j->nbound >= j->npods)
		return MU_OK;
	for (int32_t i = 0; i < e->ngrow; i++)
		if (e->grow[i] == jid)
			return MU_OK;
	int rc = mu__grow((void **)&e->grow, &e->grow_cap, e->ngrow + 1, sizeof *e->grow);
	if (rc == MU_OK)
		e->grow[e->ngrow++] = jid;
	return rc;
}

/* Whether job a grows before job b: its queue's lower dominant share; in
 * one queue, the job with fewer pods bound (turns), then the queue order. */
static bool grows_before(const mu_engine_t *e, int32_t a, int32_t b)
{
	const mu__job_t *x = &e->jobs[a], *y = &e->jobs[b];
	double sx = mu__queue_share(e, &e->queues[x->queue]);
	double sy = mu__queue_share(e, &e->queues[y->queue]);
	if (sx != sy)
		return sx < sy;
	if (x->queue == y->queue && x->nbound != y->nbound)
		return x->nbound < y->nbound;
	return mu__job_before(e, a, b);
}

/* Places one more pod of job jid where it fits, honouring its queue's
 * limits and the reservations; emits the bind.  *placed says whether it
 * did. */
static int grow_one(mu_engine_t *e, int32_t jid, mu_decisions_t *out, bool *placed)
{
	mu__job_t *j = &e->jobs[jid];
	*placed = false;
	int32_t p = 0;
	while (p < j->npods && j->pods[p].node >= 0)
		p++;
	if (p == j->npods || j->state != MU_JOB_RUNNING)
		return MU_OK;
	mu_reason_t r = {.podset = -1, .limit_queue = -1, .limit_res = -1, .fs_queue = -1,
			 .blocked_by = -1};
	if (mu__queue_limit_check(e, j->queue, &j->podsets[0].acct, &r) >= 0)
		return MU_OK;
	e->ntxn = 0;
	e->placing = jid;
	int32_t n = mu__place_range(e, j, p, p + 1, NULL, &r);
	e->placing = -1;
	if (n < 0)
		return n;
	if (n == 0)
		return MU_OK;
	*placed = true;
	return mu__job_commit(e, jid, out);
}

int mu__elastic_grow(mu_engine_t *e, mu_decisions_t *out)
{
	int rc = MU_OK;
	while (rc == MU_OK && e->ngrow > 0) {
		int32_t best = 0;
		for (int32_t i = 1; i < e->ngrow; i++)
			if (grows_before(e, e->grow[i], e->grow[best]))
				best = i;
		bool placed = false;
		rc = grow_one(e, e->grow[best], out, &placed);
		if (rc == MU_OK && !placed) /* it fits no more: done with it */
			e->grow[best] = e->grow[--e->ngrow];
	}
	e->ngrow = 0;
	return rc;
}

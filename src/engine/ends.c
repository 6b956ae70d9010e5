/*
 * ends.c - running pods by expected end, kept sorted across cycles, for the
 * reservations' shadow replay (backfill.c).
 *
 * A pod's expected end is its job's start plus its run-time estimate.  The
 * list is sorted by that time once, then kept: binds are queued and merged
 * in (sorted among themselves) the next time a reservation needs the list;
 * a released pod's entry goes stale (its pod's end_id no longer matches) and
 * is skipped by the reader, then dropped at the first merge after a quarter
 * of the list went stale; when a queue's run-time history moves (every job
 * that finishes), the entries of its jobs that go by history are re-timed
 * from what the entry holds (start, queue, shape), with no look-up of the
 * job.  So a little-changed cycle's reservation costs one sequential pass
 * over the list, not a sort and not a random read per running pod.
 * Entries with the same time are ordered by their tie, given at creation
 * and again, in list order, at each re-timing.
 * Overdue pods (end before now) are treated as ending at now + 1 by the
 * reader: clamping keeps the order.
 */
#include "engine/engine_int.h"

/* Ends by time, then by entry id (a stable, total order). */
static int cmp_end(const void *a, const void *b)
{
	const mu__end_t *x = a, *y = b;
	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	return (x->tie > y->tie) - (x->tie < y->tie);
}

/* Whether ev is still current: its pod is bound, its job running, and the
 * pod's end_id is ev's (a forgotten job's id may have been given to a
 * smaller job since: the pod index is checked too).  O(1). */
bool mu__end_valid(const mu_engine_t *e, const mu__end_t *ev)
{
	const mu__job_t *v = &e->jobs[ev->job];
	return v->state == MU_JOB_RUNNING && v->pods && ev->pod < v->npods &&
	       v->pods[ev->pod].end_id == ev->id &&
	       v->pods[ev->pod].node >= 0;
}

/* Queues a bound pod for the next merge; when the queue grows past twice
 * the current entries, the list is dropped and rebuilt when next needed.
 * O(1). */
void mu__ends_note_bind(mu_engine_t *e, int32_t job, int32_t pod)
{
	if (!e->ends_live)
		return;
	if (e->nends_add > 2 * e->nends_valid + 4096 ||
	    mu__grow((void **)&e->ends_add, &e->ends_add_cap, e->nends_add + 2,
		     sizeof *e->ends_add) != MU_OK) {
		e->ends_live = false; /* rebuild from scratch when needed */
		return;
	}
	e->ends_add[e->nends_add++] = job;
	e->ends_add[e->nends_add++] = pod;
}

/* Marks queue q's entries for re-timing at the next merge.  O(1). */
void mu__ends_history(mu_engine_t *e, int32_t q)
{
	if (e->ends_live && !e->queues[q].ends_retime) {
		e->queues[q].ends_retime = true;
		e->nends_retime++;
	}
}

void mu__ends_restart(mu_engine_t *e, int32_t jid)
{
	if (!e->ends_live)
		return;
	mu_time_t start = e->jobs[jid].start;
	/* Current entries only: a stale one keeps the start its place in
	 * the list was computed from, so re-timing keeps the list ordered. */
	for (int32_t k = 0; k < e->nends; k++)
		if (e->ends[k].job == jid && mu__end_valid(e, &e->ends[k]))
			e->ends[k].start = start;
}

/* An entry for pod of running job jid, with a fresh id and tie. */
static mu__end_t end_new(mu_engine_t *e, int32_t jid, int32_t pod)
{
	mu__job_t *v = &e->jobs[jid];
	uint32_t id = ++e->ends_id;
	e->work++; /* a look-up of the job (test_work.c counts them) */
	v->pods[pod].end_id = id;
	return (mu__end_t){.t = v->start + mu__job_estimate(e, v, NULL), .start = v->start,
			   .tie = ++e->ends_tie, .job = jid, .pod = pod, .id = id,
			   .node = v->pods[pod].node, .queue = v->queue,
			   .bucket = (int16_t)v->bucket,
			   .fixed = v->declared_est > 0 || v->declared_limit > 0};
}

/* Whether ev's job goes by its queue's history, which just moved.  From
 * the entry alone (a job's queue, shape and declarations do not change). */
static bool end_retime(const mu_engine_t *e, const mu__end_t *ev)
{
	return !ev->fixed && e->queues[ev->queue].ends_retime;
}

/* Rebuilds the list from the running jobs.  O(R log R). */
static int ends_full(mu_engine_t *e)
{
	e->nends = 0;
	for (int32_t q = 0; q < e->nqueues; q++) {
		const mu__queue_t *qq = &e->queues[q];
		e->work += (uint64_t)qq->nrunning;
		for (int32_t i = 0; i < qq->nrunning; i++) {
			int32_t vid = qq->running[i];
			const mu__job_t *v = &e->jobs[vid];
			int rc = mu__grow((void **)&e->ends, &e->ends_cap,
					  e->nends + v->nbound, sizeof *e->ends);
			if (rc)
				return rc;
			for (int32_t p = 0; p < v->npods; p++)
				if (v->pods[p].node >= 0)
					e->ends[e->nends++] = end_new(e, vid, p);
		}
	}
	if (e->nends > 1)
		qsort(e->ends, (size_t)e->nends, sizeof *e->ends, cmp_end);
	e->ends_stale = 0;
	e->ends_sweep = false;
	e->nends_valid = e->nends;
	return MU_OK;
}

#define RUNS_MAX 64 /* distinct estimates merged as runs; more: a sort */

/* Sorts the n re-timed entries x, taken from the sorted list in order.
 * Entries with the same estimate moved by the same amount, so each such
 * group is still in order: a stable partition by estimate and a merge of
 * the groups sort them in O(n x groups) instead of O(n log n).  With more
 * than RUNS_MAX estimates it sorts.  est[i] is entry i's estimate
 * (t - start); grp (n) and tmp (n) are scratch. */
static void sort_retimed(mu__end_t *x, const mu_time_t *est, int32_t *grp,
			 mu__end_t *tmp, int32_t n)
{
	mu_time_t key[RUNS_MAX];
	int32_t nk = 0, cnt[RUNS_MAX + 1] = {0}, pos[RUNS_MAX], at[RUNS_MAX];
	for (int32_t i = 0; i < n && nk <= RUNS_MAX; i++) {
		int32_t g = 0;
		while (g < nk && key[g] != est[i])
			g++;
		if (g == nk && nk < RUNS_MAX)
			key[nk++] = est[i];
		else if (g == nk)
			nk = RUNS_MAX + 1; /* too many: sort */
		grp[i] = g;
	}
	if (nk > RUNS_MAX) {
		qsort(x, (size_t)n, sizeof *x, cmp_end);
		return;
	}
	for (int32_t i = 0; i < n; i++)
		cnt[grp[i] + 1]++;
	for (int32_t g = 0; g < nk; g++) {
		cnt[g + 1] += cnt[g];
		pos[g] = at[g] = cnt[g];
	}
	for (int32_t i = 0; i < n; i++) /* stable partition */
		tmp[pos[grp[i]]++] = x[i];
	for (int32_t o = 0; o < n; o++) { /* merge the groups' heads */
		int32_t best = -1;
		for (int32_t g = 0; g < nk; g++)
			if (at[g] < cnt[g + 1] &&
			    (best < 0 || cmp_end(&tmp[at[g]], &tmp[at[best]]) < 0))
				best = g;
		x[o] = tmp[at[best]++];
	}
	/* The groups are in order by construction; checked all the same, in
	 * O(n), so that the list is sorted whatever the estimates did. */
	for (int32_t i = 1; i < n; i++)
		if (cmp_end(&x[i - 1], &x[i]) > 0) {
			qsort(x, (size_t)n, sizeof *x, cmp_end);
			return;
		}
}

/* Drops stale entry ev in a sweep; its pod, if still pointing at it (its
 * job is not running), forgets it for good, as a merge always did. */
static void end_drop(mu_engine_t *e, const mu__end_t *ev)
{
	const mu__job_t *v = &e->jobs[ev->job];
	/* the job's id may have been reused (mu_engine_job_forget) by a job
	 * with fewer pods */
	if (v->pods && ev->pod < v->npods && v->pods[ev->pod].end_id == ev->id)
		v->pods[ev->pod].end_id = 0;
}

/* Entries by tie alone (for a run of equal times). */
static int cmp_tie(const void *a, const void *b)
{
	const mu__end_t *x = a, *y = b;
	return (x->tie > y->tie) - (x->tie < y->tie);
}

/* Puts each run of equal times in the first n entries back in tie order
 * (entries re-timed in place took new, larger ties).  O(n), plus a sort
 * of a run found out of order. */
static void ties_fix(mu__end_t *v, int32_t n)
{
	for (int32_t k = 0; k < n;) {
		int32_t r = k + 1;
		bool sorted = true;
		for (; r < n && v[r].t == v[k].t; r++)
			sorted = sorted && v[r - 1].tie < v[r].tie;
		if (!sorted)
			qsort(v + k, (size_t)(r - k), sizeof *v, cmp_tie);
		k = r;
	}
}

/* Re-times entry ev (stale ones too, skipped by the reader: ties stay in
 * list order among the current ones).  When its time stays, it keeps its
 * place (true); else it goes to e->ends_x[*nx], with its estimate in
 * e->ends_est.  Returns MU_OK or an error. */
static int end_move(mu_engine_t *e, mu__end_t *ev, int32_t *nx, bool *stays)
{
	mu_time_t est = mu__queue_estimate(e, ev->queue, ev->bucket, NULL);
	ev->tie = ++e->ends_tie;
	*stays = ev->start + est == ev->t;
	if (*stays)
		return MU_OK;
	int rc = mu__grow((void **)&e->ends_x, &e->ends_x_cap, *nx + 1, sizeof *e->ends_x);
	if (rc == MU_OK)
		rc = mu__grow((void **)&e->ends_est, &e->ends_est_cap, *nx + 1,
			      sizeof *e->ends_est);
	if (rc)
		return rc;
	e->ends_x[*nx] = *ev;
	e->ends_x[*nx].t = ev->start + est;
	e->ends_est[(*nx)++] = est;
	return MU_OK;
}

/* Takes the entries whose time moved out of the list (in list order, into
 * e->ends_x) and, in a sweep, the stale ones; the rest stay in order at
 * the front, re-timed ones among them with new ties.  Returns the entries
 * taken or a negative error.  One sequential pass (two when ties moved). */
static int32_t ends_take(mu_engine_t *e, bool sweep)
{
	int32_t nx = 0, keep = 0;
	bool tied = false;
	for (int32_t k = 0; k < e->nends; k++) {
		mu__end_t *ev = &e->ends[k];
		if (sweep && !mu__end_valid(e, ev)) {
			end_drop(e, ev);
			continue;
		}
		bool stays = true;
		if (e->nends_retime && end_retime(e, ev)) {
			int rc = end_move(e, ev, &nx, &stays);
			if (rc)
				return rc;
			tied = tied || stays;
		}
		if (stays) {
			if (keep != k)
				e->ends[keep] = *ev;
			keep++;
		}
	}
	e->nends = keep;
	if (tied)
		ties_fix(e->ends, keep);
	return nx;
}

/* Merges the queued binds and the re-timed entries into the list; drops
 * stale entries when a quarter of the list went stale since the last
 * sweep.  O(R) sequential, plus O(A log A) for A entries added, O(T x
 * estimates) for T entries re-timed, and a look-up per entry when it
 * sweeps (amortised over the releases that made them stale).  Scratch
 * arrays are kept in the engine between merges. */
static int ends_merge(mu_engine_t *e)
{
	bool sweep = e->ends_sweep || e->ends_stale > e->nends / 4;
	if (sweep) {
		e->work += (uint64_t)e->nends; /* a look-up per entry */
		e->ends_stale = 0;
		e->ends_sweep = false;
	}
	int32_t nx = ends_take(e, sweep);
	if (nx < 0)
		return nx;
	int32_t keep = e->nends, nre = nx; /* re-timed, in list order */
	int rc = mu__grow((void **)&e->ends_x, &e->ends_x_cap, nx + e->nends_add / 2 + 1,
			  sizeof *e->ends_x);
	if (rc == MU_OK)
		rc = mu__grow((void **)&e->ends_tmp, &e->ends_tmp_cap, nx + 1,
			      sizeof *e->ends_tmp);
	if (rc == MU_OK)
		rc = mu__grow((void **)&e->ends_grp, &e->ends_grp_cap, nx + 1,
			      sizeof *e->ends_grp);
	if (rc)
		return rc;
	mu__end_t *x = e->ends_x;
	for (int32_t k = 0; k < e->nends_add; k += 2) {
		int32_t jid = e->ends_add[k], pod = e->ends_add[k + 1];
		const mu__job_t *v = &e->jobs[jid];
		if (v->state == MU_JOB_RUNNING && v->pods && pod < v->npods && v->pods[pod].node >= 0 &&
		    v->pods[pod].end_id == 0)
			x[nx++] = end_new(e, jid, pod);
	}
	sort_retimed(x, e->ends_est, e->ends_grp, e->ends_tmp, nre);
	if (nx - nre > 1)
		qsort(x + nre, (size_t)(nx - nre), sizeof *x, cmp_end);
	rc = mu__grow((void **)&e->ends, &e->ends_cap, keep + nx, sizeof *e->ends);
	if (rc == MU_OK)
		rc = mu__grow((void **)&e->ends_tmp, &e->ends_tmp_cap, nx, sizeof *e->ends_tmp);
	if (rc)
		return rc;
	/* Merge the added entries into the re-timed ones, through tmp. */
	if (nre && nx > nre) {
		mu__end_t *m = e->ends_tmp;
		int32_t a = 0, b = nre, o = 0;
		while (a < nre || b < nx)
			m[o++] = b >= nx || (a < nre && cmp_end(&x[a], &x[b]) <= 0) ? x[a++] : x[b++];
		memcpy(x, m, (size_t)nx * sizeof *x);
	}
	/* Merge from the back, in place. */
	int32_t i = keep - 1, j = nx - 1, o = keep + nx - 1;
	while (j >= 0) {
		if (i >= 0 && cmp_end(&e->ends[i], &x[j]) > 0)
			e->ends[o--] = e->ends[i--];
		else
			e->ends[o--] = x[j--];
	}
	e->nends = keep + nx;
	e->nends_valid = e->nends - e->ends_stale;
	return MU_OK;
}

/* See engine_int.h: a full build the first time (or after the add queue
 * overflowed), else a merge when anything changed, else nothing. */
int mu__ends_build(mu_engine_t *e)
{
	int rc;
	if (!e->ends_live) {
		for (int32_t jid = 0; jid < e->njobs; jid++) /* forget old ids */
			for (int32_t p = 0; e->jobs[jid].pods && p < e->jobs[jid].npods; p++)
				e->jobs[jid].pods[p].end_id = 0;
		rc = ends_full(e);
	} else if (e->nends_add || e->nends_retime) {
		rc = ends_merge(e);
	} else {
		return MU_OK;
	}
	e->nends_add = 0;
	for (int32_t q = 0; e->nends_retime && q < e->nqueues; q++)
		e->queues[q].ends_retime = false;
	e->nends_retime = 0;
	e->ends_live = rc == MU_OK;
	return rc;
}

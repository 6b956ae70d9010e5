/*
 * order.c - the order of jobs inside a queue.
 *
 * PRIORITY: priority, then submit time, then arrival.  SJF: priority, then
 * the shortest run-time estimate (clairvoyant when jobs declare their real
 * run time: a bound, not a policy).  LAS: Tiresias' discretized
 * two-dimensional least attained service: a job's attained service is the
 * GPU time it has had (GPUs x time), cut into levels at 1x, 10x and 100x a
 * base; a lower level means a higher effective priority, so new and short
 * jobs go first and may preempt jobs that have had much, while jobs within
 * a level keep FIFO order, which bounds the churn.  Service counts a job's
 * full GPU size while it runs (an elastic job running short is charged as
 * if whole: slightly pessimistic for it).
 *
 * JCT (the default) is LAS for preemptible jobs, on levels of
 * jct_base_gpu_hours (100: only jobs that have had much go down), with
 * guards against the thrashing that makes Tiresias slow for big gangs:
 * after every start a job keeps a minimum run (jct_min_run, and at least
 * 20 times the restart cost) before its level lets a job of its own
 * priority preempt it; gangs (more than jct_gang_pods pods) are never
 * victims of the order, since they restart only where all their pods fit
 * at once; and jct_max_preemptions can cap how often one job yields.
 * Non-preemptible jobs, and every job of a FIFO queue, stay at level 0:
 * their order is priority, then arrival.  Priorities always come first:
 * effective priority = priority x levels - level.
 */
#include <stdarg.h>
#include <stdio.h>

#include "engine/engine_int.h"

#define MU__LAS_LEVELS 4
#define MU__JCT_RESTART_FACTOR 20 /* minimum run, in restart costs */

static const char *const order_names[] = {"priority", "sjf", "las", "jct"};

const char *mu_order_name(mu_order_t o)
{
	return o >= MU_ORDER_PRIORITY && o <= MU_ORDER_JCT ? order_names[o] : NULL;
}

int mu_order_find(const char *s)
{
	for (int o = MU_ORDER_PRIORITY; s && o <= MU_ORDER_JCT; o++)
		if (!strcmp(s, order_names[o]))
			return o;
	return -1;
}

/* GPU-ms of service j has had, including its current run. */
static double attained_now(const mu_engine_t *e, const mu__job_t *j)
{
	double a = j->attained;
	if (j->state == MU_JOB_RUNNING && e->now > j->start)
		a += (double)j->acct_gpu_total / 1000.0 * (double)(e->now - j->start);
	return a;
}

/* Whether j's order has levels: LAS for every job; JCT for preemptible
 * jobs of queues that do not ask for FIFO. */
static bool has_levels(const mu_engine_t *e, const mu__job_t *j)
{
	if (e->queues[j->queue].order == MU_QORDER_FIFO)
		return false;
	if (e->cfg.order == MU_ORDER_LAS)
		return true;
	return e->cfg.order == MU_ORDER_JCT && j->preemptible;
}

/* GPU-ms where the first level ends. */
static double level_base(const mu_engine_t *e)
{
	double h = e->cfg.order == MU_ORDER_JCT ? e->cfg.jct_base_gpu_hours :
		   e->cfg.las_base_gpu_hours;
	return (h > 0 ? h : 1) * 3.6e6;
}

int32_t mu__order_level(const mu_engine_t *e, const mu__job_t *j)
{
	if (!has_levels(e, j))
		return 0;
	double base = level_base(e), a = attained_now(e, j);
	int32_t level = 0;
	for (double t = base; level < MU__LAS_LEVELS - 1 && a >= t; t *= 10)
		level++;
	return level;
}

int32_t mu__order_eprio(const mu_engine_t *e, const mu__job_t *j)
{
	if (e->cfg.order != MU_ORDER_LAS && e->cfg.order != MU_ORDER_JCT)
		return j->priority;
	return j->priority * MU__LAS_LEVELS - mu__order_level(e, j);
}

void mu__order_stop(mu_engine_t *e, mu__job_t *j, mu_time_t now)
{
	if (j->state == MU_JOB_RUNNING && now > j->start)
		j->attained += (double)j->acct_gpu_total / 1000.0 * (double)(now - j->start);
	(void)e;
}

/* The minimum run after a start before the JCT order may preempt. */
static mu_time_t jct_min_run(const mu_engine_t *e)
{
	mu_time_t r = e->cfg.jct_min_run, c = e->cfg.restart_cost;
	if (c > 0 && c < INT64_MAX / MU__JCT_RESTART_FACTOR && c * MU__JCT_RESTART_FACTOR > r)
		r = c * MU__JCT_RESTART_FACTOR;
	return r;
}

bool mu__order_victim_ok(const mu_engine_t *e, const mu__job_t *v,
			 const mu__job_t *j, mu_time_t now, mu_time_t *retry)
{
	if (e->cfg.order != MU_ORDER_JCT || v->priority < j->priority)
		return true; /* a real priority, or Tiresias unguarded */
	if (e->cfg.jct_max_preemptions > 0 && v->preemptions >= e->cfg.jct_max_preemptions)
		return false;
	if (v->npods > e->cfg.jct_gang_pods)
		return false; /* a gang restarts only where all its pods fit */
	mu_time_t run = jct_min_run(e);
	if (now - v->start < run) {
		if (v->start + run < *retry)
			*retry = v->start + run;
		return false;
	}
	return true;
}

bool mu__job_before(const mu_engine_t *e, int32_t a, int32_t b)
{
	const mu__job_t *x = &e->jobs[a], *y = &e->jobs[b];
	if (x->eprio != y->eprio)
		return x->eprio > y->eprio;
	if (e->cfg.order == MU_ORDER_SJF) {
		mu_time_t ex = mu__job_estimate(e, x, NULL), ey = mu__job_estimate(e, y, NULL);
		if (ex != ey)
			return ex < ey;
	}
	if (x->submit != y->submit)
		return x->submit < y->submit;
	if (x->seq != y->seq) /* ids are reused: submission order */
		return x->seq < y->seq;
	return a < b;
}

/* qsort_r is not in C11: a small insertion/merge sort over job ids. */
static void sort_jobs(const mu_engine_t *e, int32_t *v, int32_t n, int32_t *tmp)
{
	if (n < 2)
		return;
	if (n <= 16) {
		for (int32_t i = 1; i < n; i++) {
			int32_t x = v[i], k = i;
			while (k > 0 && mu__job_before(e, x, v[k - 1])) {
				v[k] = v[k - 1];
				k--;
			}
			v[k] = x;
		}
		return;
	}
	int32_t h = n / 2;
	sort_jobs(e, v, h, tmp);
	sort_jobs(e, v + h, n - h, tmp);
	int32_t i = 0, k = h, o = 0;
	while (i < h && k < n)
		tmp[o++] = mu__job_before(e, v[k], v[i]) ? v[k++] : v[i++];
	while (i < h)
		tmp[o++] = v[i++];
	while (k < n)
		tmp[o++] = v[k++];
	memcpy(v, tmp, (size_t)n * sizeof *v);
}

/* Re-sorts q's pending list by the effective priorities. */
static void order_resort(const mu_engine_t *e, mu__queue_t *q)
{
	int32_t *tmp = malloc((size_t)(q->npending ? q->npending : 1) * sizeof *tmp);
	if (tmp) /* else (out of memory) the old order stays */
		sort_jobs(e, q->pending, q->npending, tmp);
	free(tmp);
}

/* --- Classes of service: escalation after the maximum wait --------------- */

void mu__order_escalate(mu_engine_t *e, int32_t jid)
{
	mu__job_t *j = &e->jobs[jid];
	if (j->escalated)
		return;
	j->escalated = true;
	if (j->esc == MU_ESC_RESERVE) {
		/* cycle.c owes it a reservation at the start of every cycle
		 * while it is blocked (its last failure stands) */
		if (mu__grow((void **)&e->escres, &e->escres_cap, e->nescres + 1,
			     sizeof *e->escres) == MU_OK)
			e->escres[e->nescres++] = jid;
		return;
	}
	j->failed = false; /* it may preempt differently now */
	if (j->esc == MU_ESC_PREEMPT) { /* preempt.c lets it evict in its queue */
		e->queues[j->queue].mvp_valid = false;
		return;
	}
	j->priority = j->priority > INT32_MAX - MU_ESCALATE_BOOST ? INT32_MAX :
		      j->priority + MU_ESCALATE_BOOST;
	j->eprio = mu__order_eprio(e, j);
	mu__vsum_touch_job(e, j); /* its nodes' victim summaries */
	j->failed = false; /* a higher priority may preempt now */
	mu__queue_t *q = &e->queues[j->queue];
	q->mvp_valid = false;
	if (j->listed)
		order_resort(e, q);
}

int mu__maxwait_note(mu_engine_t *e, int32_t jid)
{
	int rc = mu__grow((void **)&e->maxwait, &e->maxwait_cap, e->nmaxwait + 1,
			  sizeof *e->maxwait);
	if (rc)
		return rc;
	e->maxwait[e->nmaxwait++] = jid;
	return MU_OK;
}

/* Escalates every noted job still pending (never started) whose wait
 * passed its maximum, and forgets the jobs that started, finished or were
 * escalated.  O(noted jobs + re-sorts). */
int mu__maxwait_check(mu_engine_t *e, mu_time_t now)
{
	int32_t k = 0;
	for (int32_t i = 0; i < e->nmaxwait; i++) {
		int32_t jid = e->maxwait[i];
		mu__job_t *j = &e->jobs[jid];
		if (j->state != MU_JOB_PENDING || j->escalated || j->start != MU_TIME_NONE)
			continue; /* started once: its wait is over */
		if (now - j->submit >= j->max_wait) {
			mu__order_escalate(e, jid);
			continue;
		}
		e->maxwait[k++] = jid;
	}
	e->nmaxwait = k;
	return MU_OK;
}

/* When running job j's attained service next crosses a level, or
 * INT64_MAX when it is at the last level already (or has none). */
static mu_time_t las_next_cross(const mu_engine_t *e, const mu__job_t *j)
{
	double base = level_base(e);
	double gpus = (double)j->acct_gpu_total / 1000.0;
	if (gpus <= 0 || !has_levels(e, j))
		return INT64_MAX;
	double a = attained_now(e, j), t = base;
	for (int32_t level = 0; level < MU__LAS_LEVELS - 1; level++, t *= 10)
		if (a < t)
			return e->now + (mu_time_t)((t - a) / gpus) + 1;
	return INT64_MAX;
}

/* Updates the effective priorities of q's jobs, lowering e->order_next to
 * the next moment one changes by itself; re-sorts the pending list when
 * an order changed.  O(q's jobs), plus the sort. */
static void order_refresh_queue(mu_engine_t *e, mu__queue_t *q)
{
	q->mvp_valid = false; /* effective priorities move */
	q->order_moved = false;
	e->work += (uint64_t)q->nrunning + (uint64_t)q->npending;
	for (int32_t i = 0; i < q->nrunning; i++) {
		mu__job_t *j = &e->jobs[q->running[i]];
		if (j->level_start != j->start || e->now >= j->level_until) {
			int32_t ep = mu__order_eprio(e, j); /* a level was crossed */
			if (ep != j->eprio)
				mu__vsum_touch_job(e, j); /* its nodes' victim summaries */
			j->eprio = ep;
			j->level_until = las_next_cross(e, j);
			j->level_start = j->start;
		}
		if (j->level_until < e->order_next)
			e->order_next = j->level_until;
	}
	bool moved = e->cfg.order == MU_ORDER_SJF; /* estimates may have moved */
	for (int32_t i = 0; i < q->npending; i++) {
		mu__job_t *j = &e->jobs[q->pending[i]];
		if (j->state == MU_JOB_PENDING && j->attained <= 0 && !moved)
			continue; /* never ran: level 0 since it was submitted */
		int32_t ep = mu__order_eprio(e, j);
		moved |= ep != j->eprio;
		j->eprio = ep;
	}
	if (moved)
		order_resort(e, q);
}

void mu__order_touch(mu_engine_t *e, int32_t jid)
{
	if (e->order_all || e->cfg.order == MU_ORDER_PRIORITY)
		return;
	if (mu__grow((void **)&e->order_fresh, &e->fresh_cap, e->nfresh + 1,
		     sizeof *e->order_fresh) != MU_OK) {
		e->order_all = true; /* out of memory: the next refresh walks all */
		return;
	}
	e->order_fresh[e->nfresh++] = jid;
}

/* Brings only the jobs touched since the last refresh up to date: a job
 * that started gets its level's end, one that stopped its new level.
 * O(touched jobs), plus a re-sort of each queue where a pending job's
 * effective priority moved.  Every other job's level holds until
 * e->order_next, which only a full walk raises. */
static void order_refresh_fresh(mu_engine_t *e)
{
	e->work += (uint64_t)e->nfresh;
	for (int32_t i = 0; i < e->nfresh; i++) {
		mu__job_t *j = &e->jobs[e->order_fresh[i]];
		mu__queue_t *q = &e->queues[j->queue];
		if (j->state == MU_JOB_RUNNING) {
			if (j->level_start != j->start || e->now >= j->level_until) {
				int32_t ep = mu__order_eprio(e, j);
				if (ep != j->eprio) { /* a start lowers min_victim_prio itself */
					q->mvp_valid = false;
					mu__vsum_touch_job(e, j);
				}
				j->eprio = ep;
				j->level_until = las_next_cross(e, j);
				j->level_start = j->start;
			}
			if (j->level_until < e->order_next)
				e->order_next = j->level_until;
		} else if (j->state == MU_JOB_PENDING) {
			int32_t ep = mu__order_eprio(e, j);
			if (ep != j->eprio) {
				j->eprio = ep;
				q->order_moved = true;
			}
		}
	}
	for (int32_t i = 0; i < e->nfresh; i++) {
		mu__queue_t *q = &e->queues[e->jobs[e->order_fresh[i]].queue];
		if (q->order_moved) {
			q->order_moved = false;
			order_resort(e, q);
		}
	}
	e->nfresh = 0;
}

/* A full walk (every leaf queue's jobs) when a level may have been
 * crossed by time (e->now >= e->order_next) or when a queue's order
 * changed; otherwise only the jobs touched since the last refresh, so
 * that a cycle does not cost O(running jobs).  SJF's estimates move only
 * with their queue's run-time history, which marks the queue
 * (mu__history_add() sets order_moved; the finished job that moved it is
 * among the touched ones), so only such a queue is re-sorted: every other
 * pending list is still in order, as inserts keep it. */
void mu__order_refresh(mu_engine_t *e)
{
	if (e->cfg.order == MU_ORDER_PRIORITY) {
		e->order_next = INT64_MAX;
		return;
	}
	if (!e->order_all && e->now < e->order_next) {
		order_refresh_fresh(e);
		return;
	}
	e->order_next = INT64_MAX;
	for (int32_t q = 0; q < e->nqueues; q++)
		if (!e->queues[q].nchildren)
			order_refresh_queue(e, &e->queues[q]);
	e->nfresh = 0;
	e->order_all = false;
}

/* --- Explain --------------------------------------------------------------- */

/* Appends to buf at *off, never past len; keeps counting as snprintf. */
static void oput(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void oput(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t room = *off < len ? len - *off : 0;
	int n = vsnprintf(room ? buf + *off : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n;
}

/* Why job x is served before job y of its queue. */
static void put_why(const mu_engine_t *e, const mu__job_t *x, const mu__job_t *y,
		    char *buf, size_t len, size_t *off)
{
	if (x->priority != y->priority) {
		oput(buf, len, off, "priority %d > %d", (int)x->priority, (int)y->priority);
	} else if (x->eprio != y->eprio) {
		oput(buf, len, off, "less GPU time had: level %d (%.3g GPU-hours) < level %d (%.3g GPU-hours)",
		     (int)mu__order_level(e, x), attained_now(e, x) / 3.6e6,
		     (int)mu__order_level(e, y), attained_now(e, y) / 3.6e6);
	} else if (e->cfg.order == MU_ORDER_SJF &&
		   mu__job_estimate(e, x, NULL) != mu__job_estimate(e, y, NULL)) {
		oput(buf, len, off, "shorter estimate (%.0f s < %.0f s)",
		     (double)mu__job_estimate(e, x, NULL) / 1000.0,
		     (double)mu__job_estimate(e, y, NULL) / 1000.0);
	} else if (x->submit != y->submit) {
		oput(buf, len, off, "same level, submitted %.0f s earlier",
		     (double)(y->submit - x->submit) / 1000.0);
	} else {
		oput(buf, len, off, "same level and submit time, arrived first");
	}
}

/* The order j's queue uses, and j's level in it. */
static void put_level(const mu_engine_t *e, const mu__job_t *j, char *buf, size_t len,
		      size_t *off)
{
	const mu__queue_t *q = &e->queues[j->queue];
	if (q->order == MU_QORDER_FIFO) {
		oput(buf, len, off, "fifo queue: priority, then arrival");
		return;
	}
	const char *name = mu_order_name(e->cfg.order);
	if (!has_levels(e, j)) {
		oput(buf, len, off, "%s order: %s", name ? name : "?",
		     e->cfg.order == MU_ORDER_SJF ? "priority, then shortest estimate" :
		     j->preemptible ? "priority, then arrival" :
		     "non-preemptible, so no levels: priority, then arrival");
		return;
	}
	double base = level_base(e) / 3.6e6;
	int32_t level = mu__order_level(e, j);
	oput(buf, len, off, "%s order: level %d, %.3g GPU-hours had (levels from %.3g, %.3g, %.3g GPU-hours)",
	     name ? name : "?", (int)level, attained_now(e, j) / 3.6e6, base, base * 10, base * 100);
}

/* Whether the order may preempt running job j now, and if not why. */
static void put_victim(const mu_engine_t *e, const mu__job_t *j, char *buf, size_t len,
		       size_t *off)
{
	if (!j->preemptible || !has_levels(e, j))
		return;
	if (e->cfg.order == MU_ORDER_LAS) {
		oput(buf, len, off, "; a job of a lower level may preempt it");
		return;
	}
	mu_time_t run = jct_min_run(e);
	if (j->npods > e->cfg.jct_gang_pods)
		oput(buf, len, off, "; a gang of %d pods: the order never preempts it", (int)j->npods);
	else if (e->cfg.jct_max_preemptions > 0 && j->preemptions >= e->cfg.jct_max_preemptions)
		oput(buf, len, off, "; preempted %d times already: the order no longer preempts it",
		     (int)j->preemptions);
	else if (e->now - j->start < run)
		oput(buf, len, off, "; kept running by its minimum run for another %.0f s",
		     (double)(j->start + run - e->now) / 1000.0);
	else
		oput(buf, len, off, "; a job of a lower level may preempt it");
}

int mu_engine_order_explain(const mu_engine_t *e, mu_id_t id, char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
	if (id < 0 || id >= e->njobs)
		return MU_ENOENT;
	const mu__job_t *j = &e->jobs[id];
	const mu__queue_t *q = &e->queues[j->queue];
	size_t off = 0;
	if (j->state == MU_JOB_FINISHED) {
		oput(buf, len, &off, "finished");
		return (int)off;
	}
	put_level(e, j, buf, len, &off);
	int32_t pos = -1, waiting = 0;
	for (int32_t i = 0; i < q->npending; i++) {
		if (e->jobs[q->pending[i]].state != MU_JOB_PENDING)
			continue;
		if (q->pending[i] == id)
			pos = waiting;
		waiting++;
	}
	if (j->state == MU_JOB_RUNNING || pos < 0) {
		oput(buf, len, &off, "; running");
		put_victim(e, j, buf, len, &off);
		return (int)off;
	}
	oput(buf, len, &off, "; %d of %d waiting in queue \"%s\"", (int)pos + 1, (int)waiting,
	     q->name);
	int32_t ahead = -1, behind = -1, k = 0;
	for (int32_t i = 0; i < q->npending; i++) {
		if (e->jobs[q->pending[i]].state != MU_JOB_PENDING)
			continue;
		if (k == pos - 1)
			ahead = q->pending[i];
		if (k == pos + 1)
			behind = q->pending[i];
		k++;
	}
	if (ahead >= 0) {
		oput(buf, len, &off, "; behind \"%s\": ", e->jobs[ahead].name);
		put_why(e, &e->jobs[ahead], j, buf, len, &off);
	}
	if (behind >= 0) {
		oput(buf, len, &off, "; ahead of \"%s\": ", e->jobs[behind].name);
		put_why(e, j, &e->jobs[behind], buf, len, &off);
	}
	return (int)off;
}

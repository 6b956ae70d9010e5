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
 */
#include "engine/engine_int.h"

#define MU__LAS_LEVELS 4

/* GPU-ms of service j has had, including its current run. */
static double attained_now(const mu_engine_t *e, const mu__job_t *j)
{
	double a = j->attained;
	if (j->state == MU_JOB_RUNNING && e->now > j->start)
		a += (double)j->acct_gpu_total / 1000.0 * (double)(e->now - j->start);
	return a;
}

static int32_t las_level(const mu_engine_t *e, const mu__job_t *j)
{
	double base = (e->cfg.las_base_gpu_hours > 0 ? e->cfg.las_base_gpu_hours : 1) * 3.6e6;
	double a = attained_now(e, j);
	int32_t level = 0;
	for (double t = base; level < MU__LAS_LEVELS - 1 && a >= t; t *= 10)
		level++;
	return level;
}

int32_t mu__order_eprio(const mu_engine_t *e, const mu__job_t *j)
{
	if (e->cfg.order != MU_ORDER_LAS)
		return j->priority;
	return j->priority * MU__LAS_LEVELS - las_level(e, j);
}

void mu__order_stop(mu_engine_t *e, mu__job_t *j, mu_time_t now)
{
	if (j->state == MU_JOB_RUNNING && now > j->start)
		j->attained += (double)j->acct_gpu_total / 1000.0 * (double)(now - j->start);
	(void)e;
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

/* When running job j's attained service next crosses a level, or
 * INT64_MAX when it is at the last level already. */
static mu_time_t las_next_cross(const mu_engine_t *e, const mu__job_t *j)
{
	double base = (e->cfg.las_base_gpu_hours > 0 ? e->cfg.las_base_gpu_hours : 1) * 3.6e6;
	double gpus = (double)j->acct_gpu_total / 1000.0;
	if (gpus <= 0)
		return INT64_MAX;
	double a = attained_now(e, j), t = base;
	for (int32_t level = 0; level < MU__LAS_LEVELS - 1; level++, t *= 10)
		if (a < t)
			return e->now + (mu_time_t)((t - a) / gpus) + 1;
	return INT64_MAX;
}

void mu__order_refresh(mu_engine_t *e)
{
	e->order_next = INT64_MAX;
	if (e->cfg.order == MU_ORDER_PRIORITY)
		return;
	for (int32_t q = 0; q < e->nqueues; q++) {
		mu__queue_t *qq = &e->queues[q];
		qq->mvp_valid = false; /* effective priorities move */
		for (int32_t i = 0; i < qq->nrunning; i++) {
			mu__job_t *j = &e->jobs[qq->running[i]];
			j->eprio = mu__order_eprio(e, j);
			if (e->cfg.order == MU_ORDER_LAS) {
				mu_time_t t = las_next_cross(e, j);
				if (t < e->order_next)
					e->order_next = t;
			}
		}
		for (int32_t i = 0; i < qq->npending; i++) {
			mu__job_t *j = &e->jobs[qq->pending[i]];
			j->eprio = mu__order_eprio(e, j);
		}
		int32_t *tmp = malloc((size_t)(qq->npending ? qq->npending : 1) * sizeof *tmp);
		if (!tmp)
			continue; /* out of memory: keep the old order */
		sort_jobs(e, qq->pending, qq->npending, tmp);
		free(tmp);
	}
}

/*
 * test_kube_pacing.c - the scheduler daemon's loop paces the retries of a
 * failed bind or eviction by its cycles (src/kube/daemon.c mu__kd_step,
 * apply.c: d->wfailed; docs/dispatch.md, "The workers' side").  Between
 * cycles the loop syncs the groups that changed at once; after a bind or
 * an eviction failed (its outcome applied by mu__kd_outcomes), it does
 * not: the failed bind's group is dirty, and a sync would send the bind
 * again at once, a tight loop against a server that refuses it.  The
 * retry waits for the next cycle (cycle_ms after the last), which clears
 * the mark.  Decisions only: no clock, no server, no thread.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kube/daemon_int.h"

/* A daemon's state with only what the loop's pacing reads: the options
 * (cycle 20 ms, idle cycle 5 s), the locks of the work queue and the
 * metrics, a log that prints nothing, one pod bound (by an earlier
 * bind that got no answer) and one dirty group. */
static mu__kd_t *daemon_state(mu_kube_opts_t *o, mu__kpod_t *p)
{
	mu__kd_t *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	memset(o, 0, sizeof *o);
	o->cycle_ms = 20;
	o->idle_cycle_ms = 5000;
	d->o = o;
	d->log.level = -1;
	pthread_mutex_init(&d->log.mu, NULL);
	pthread_mutex_init(&d->wq.mu, NULL);
	pthread_mutex_init(&d->m.mu, NULL);
	memset(p, 0, sizeof *p);
	p->key = "default/p";
	p->node = "n0";
	mu__kmap_put(&d->pods, p->key, p);
	d->ndirty = 1;
	return d;
}

/* A finished bind (or eviction) of pod key with HTTP status st, queued
 * for the loop as a work-queue thread leaves it. */
static void finished(mu__kd_t *d, mu__kwkind_t kind, const char *key, long st)
{
	mu__kwork_t *w = calloc(1, sizeof *w);
	if (!w)
		return;
	w->kind = kind;
	w->pod_key = strdup(key);
	w->node = strdup("n0");
	w->status = st;
	w->answer = strdup("{\"kind\":\"Status\",\"code\":500}");
	w->next = d->wq.done;
	d->wq.done = w;
}

static void release(mu__kd_t *d)
{
	mu__kmap_release(&d->pods);
	pthread_mutex_destroy(&d->log.mu);
	pthread_mutex_destroy(&d->wq.mu);
	pthread_mutex_destroy(&d->m.mu);
	free(d);
}

static void test_failed_bind_waits_for_the_cycle(mu_t_t *t)
{
	mu_kube_opts_t o;
	mu__kpod_t p;
	mu__kd_t *d = daemon_state(&o, &p);
	CHECK(t, d != NULL);
	if (!d)
		return;
	/* nothing failed: a dirty group is synced between cycles */
	CHECK_EQ_INT(t, mu__kd_step(d, 5), MU__KSTEP_SYNC);
	/* a bind refused (HTTP 500): its outcome marks the loop ... */
	finished(d, MU__KW_BIND, "default/p", 500);
	mu__kd_outcomes(d);
	CHECK(t, d->wfailed);
	CHECK_EQ_INT(t, (long)d->m.bind_errors, 1);
	/* ... which syncs nothing more before the next cycle, however many
	 * times it turns (a pass every few ms while events come) */
	for (int64_t since = 0; since < 20; since++)
		CHECK_EQ_INT(t, mu__kd_step(d, since), MU__KSTEP_NONE);
	/* the cycle, cycle_ms after the last, takes the retry */
	CHECK_EQ_INT(t, mu__kd_step(d, 20), MU__KSTEP_CYCLE);
	/* once the cycle ran (the loop clears the mark), syncs again */
	d->wfailed = false;
	d->changed = false;
	CHECK_EQ_INT(t, mu__kd_step(d, 1), MU__KSTEP_SYNC);
	/* an eviction that finally failed paces the same way */
	finished(d, MU__KW_EVICT, "default/p", 500);
	mu__kd_outcomes(d);
	CHECK(t, d->wfailed);
	CHECK_EQ_INT(t, mu__kd_step(d, 1), MU__KSTEP_NONE);
	/* a bind that succeeded does not */
	d->wfailed = false;
	finished(d, MU__KW_BIND, "default/q", 201);
	mu__kd_outcomes(d);
	CHECK(t, !d->wfailed);
	CHECK_EQ_INT(t, mu__kd_step(d, 1), MU__KSTEP_SYNC);
	/* with nothing dirty, nothing to sync; the idle cycle still comes */
	d->ndirty = 0;
	d->changed = false;
	CHECK_EQ_INT(t, mu__kd_step(d, 1), MU__KSTEP_NONE);
	CHECK_EQ_INT(t, mu__kd_step(d, 5000), MU__KSTEP_CYCLE);
	release(d);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_failed_bind_waits_for_the_cycle);
	return mu_t_done(&t);
}

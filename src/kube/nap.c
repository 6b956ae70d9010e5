/*
 * nap.c - a pause that a stop ends at once (mu__knap_t): the reflectors'
 * and the watch caches' backoff between a failed list or watch and the
 * next try.  They used to sleep in 100 ms slices, testing their stop flag
 * between slices, so that a stop ended a pause within 100 ms: a resource
 * the server does not serve (404: a CRD not installed) naps 30 s between
 * tries, which was 300 wake-ups, each a system call and a context switch
 * (docs/dispatch.md, "Dispatch throughput (issue 18, round 22): the
 * kernel's share": 3.8 to 4.6 per job over three schedulers, and 3.8% of
 * a `muster scheduler`'s CPU, in bench/dispatch.sh).  Here a pause waits on a condition variable
 * that the stopping thread broadcasts after it sets the flag
 * (mu__knap_wake), so it wakes when its time is up or when stopped.
 * Every store of the flags these pauses read is followed by a wake
 * (daemon.c's teardown then mu__krefl_stop; mu_kube_watch_signal and
 * _stop); as a guard for one that some later code sets without a wake, a
 * pause still looks at the flag every NAP_SLICE_MS.  That slice is long
 * (10 s) on purpose: a 1 s slice still woke each of a scheduler's twenty
 * or so pausing reflectors once a second, 1.5 futex calls per job in the
 * bench.
 */
#include <pthread.h>
#include <time.h>

#include "kube/kube_int.h"

/* The longest wait before the flag is looked at again without a wake. */
#define NAP_SLICE_MS 10000

int mu__knap_init(mu__knap_t *n)
{
	pthread_condattr_t ca;
	if (pthread_condattr_init(&ca))
		return MU_ENOMEM;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int rc = pthread_cond_init(&n->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (rc)
		return MU_ENOMEM;
	if (pthread_mutex_init(&n->mu, NULL)) {
		pthread_cond_destroy(&n->cv);
		return MU_ENOMEM;
	}
	return MU_OK;
}

void mu__knap_destroy(mu__knap_t *n)
{
	pthread_cond_destroy(&n->cv);
	pthread_mutex_destroy(&n->mu);
}

/* Waits until ms have passed or *stop is set (seen at a wake or at most
 * NAP_SLICE_MS later).  The flag is read under n->mu, so a wake that
 * follows the flag's store cannot fall between the test and the wait.
 * Returns the waits it made (1 for a pause of up to a slice that nothing
 * woke; tests count them). */
int mu__knap(mu__knap_t *n, int ms, const atomic_int *stop)
{
	int waits = 0;
	int64_t end = mu__k_mono_ms() + (ms > 0 ? ms : 0);
	pthread_mutex_lock(&n->mu);
	for (;;) {
		int64_t now = mu__k_mono_ms();
		if (atomic_load(stop) || now >= end)
			break;
		int64_t until = end - now > NAP_SLICE_MS ? now + NAP_SLICE_MS : end;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		int64_t left = until - now; /* ms, from ts (now, give or take) */
		ts.tv_sec += left / 1000;
		ts.tv_nsec += (long)(left % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&n->cv, &n->mu, &ts);
		waits++;
	}
	pthread_mutex_unlock(&n->mu);
	return waits;
}

/* Ends every pause in progress; the caller set the stop flag first. */
void mu__knap_wake(mu__knap_t *n)
{
	pthread_mutex_lock(&n->mu);
	pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->mu);
}

/*
 * test_kube_nap.c - the reflectors' and watch caches' backoff pause
 * (src/kube/nap.c, mu__knap): it waits on a condition variable, woken by
 * a stop, instead of sleeping in 100 ms slices that test the stop flag
 * (which cost a wake-up, a system call and a context switch every 100 ms
 * of every pause: docs/dispatch.md, "Dispatch throughput (issue 18,
 * round 22): the kernel's share").  Checked: a pause nothing wakes takes
 * its whole time in one wait (the 100 ms slices made 25 of a 2.5 s pause,
 * a 1 s slice 3); a pause stopped (flag, then wake) ends at once,
 * not at its end; a wake reaches a pause in progress (a pause woken
 * without the flag set goes on: it counts the extra waits); a pause of 0
 * or with the flag already set does not wait.  The time checks are lower
 * bounds, or far from the figures (a 30 s pause ended before 15 s).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "check.h"
#include "kube/kube_int.h"

typedef struct {
	mu__knap_t *n;
	atomic_int *stop; /* set before the wake; NULL: wake only */
	int wakes;        /* how many wakes, 50 ms apart */
} waker_t;

static void *waker(void *arg)
{
	waker_t *w = arg;
	for (int i = 0; i < w->wakes; i++) {
		struct timespec ts = {0, 50000000L};
		nanosleep(&ts, NULL);
		if (w->stop && i == w->wakes - 1)
			atomic_store(w->stop, 1);
		mu__knap_wake(w->n);
	}
	return NULL;
}

static void test_no_wait(mu_t_t *t)
{
	mu__knap_t n;
	CHECK_EQ_INT(t, mu__knap_init(&n), MU_OK);
	atomic_int stop = 0;
	CHECK_EQ_INT(t, mu__knap(&n, 0, &stop), 0);
	atomic_store(&stop, 1);
	CHECK_EQ_INT(t, mu__knap(&n, 5000, &stop), 0);
	mu__knap_destroy(&n);
}

static void test_whole_pause_few_waits(mu_t_t *t)
{
	mu__knap_t n;
	CHECK_EQ_INT(t, mu__knap_init(&n), MU_OK);
	atomic_int stop = 0;
	int64_t t0 = mu__k_mono_ms();
	int waits = mu__knap(&n, 2500, &stop);
	CHECK(t, mu__k_mono_ms() - t0 >= 2500);
	/* one wait (and one more for a clock's rounding) */
	CHECK(t, waits >= 1 && waits <= 2);
	mu__knap_destroy(&n);
}

static void test_stop_ends_pause(mu_t_t *t)
{
	mu__knap_t n;
	CHECK_EQ_INT(t, mu__knap_init(&n), MU_OK);
	atomic_int stop = 0;
	waker_t w = {&n, &stop, 2};
	pthread_t th;
	CHECK_EQ_INT(t, pthread_create(&th, NULL, waker, &w), 0);
	int64_t t0 = mu__k_mono_ms();
	int waits = mu__knap(&n, 30000, &stop);
	int64_t took = mu__k_mono_ms() - t0;
	pthread_join(th, NULL);
	CHECK(t, took < 15000);
	CHECK(t, waits <= 3);
	mu__knap_destroy(&n);
}

static void test_wake_reaches_pause(mu_t_t *t)
{
	mu__knap_t n;
	CHECK_EQ_INT(t, mu__knap_init(&n), MU_OK);
	atomic_int stop = 0;
	waker_t w = {&n, NULL, 10}; /* ten wakes over the first 0.5 s */
	pthread_t th;
	CHECK_EQ_INT(t, pthread_create(&th, NULL, waker, &w), 0);
	int64_t t0 = mu__k_mono_ms();
	int waits = mu__knap(&n, 1500, &stop);
	pthread_join(th, NULL);
	CHECK(t, mu__k_mono_ms() - t0 >= 1500); /* not stopped: the whole pause */
	/* the wait to the end, and the wakes that came meanwhile */
	CHECK(t, waits >= 4);
	mu__knap_destroy(&n);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_no_wait);
	MU_RUN(&t, test_whole_pause_few_waits);
	MU_RUN(&t, test_stop_ends_pause);
	MU_RUN(&t, test_wake_reaches_pause);
	return mu_t_done(&t);
}

/*
 * test_kube_write.c - the daemon's write queue (src/kube/write.c) without
 * its workers: Events are capped at 1,000 queued, as client-go's event
 * broadcaster is (maxQueuedEvents), and the ones beyond are dropped and
 * counted; status writes still queue up to the low-priority cap, binds
 * are never dropped, and taking an Event off the queue makes room for
 * another.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kube/daemon_int.h"

/* A daemon with just its options and an initialized queue, no workers. */
static void kd_init(mu__kd_t *d, mu_kube_opts_t *o)
{
	memset(d, 0, sizeof *d);
	mu_kube_opts_defaults(o);
	d->o = o;
	atomic_store(&d->lease_until, INT64_MAX);
	pthread_mutex_init(&d->m.mu, NULL);
	mu__kwq_init(&d->wq);
}

static void kd_release(mu__kd_t *d)
{
	mu__kwq_stop(d);
	pthread_mutex_destroy(&d->m.mu);
}

static size_t count(const mu__kwork_t *w, bool events)
{
	size_t n = 0;
	for (; w; w = w->next)
		n += w->event == events;
	return n;
}

static void test_events_capped(mu_t_t *t)
{
	mu__kd_t d;
	mu_kube_opts_t o;
	kd_init(&d, &o);
	for (int i = 0; i < 1500; i++)
		mu__kd_event_write(&d, "Pod", "v1", "ns", "p", "uid", "Warning", "FailedScheduling", "0/5 nodes");
	CHECK_EQ_INT(t, d.wq.nev, 1000);
	CHECK_EQ_INT(t, d.wq.nlo, 1000);
	CHECK_EQ_INT(t, d.wq.ev_dropped, 500);
	CHECK_EQ_INT(t, count(d.wq.lo_head, true), 1000);
	/* a status write is not an Event: it still queues */
	mu__kd_write(&d, MU__KW_WRITE, "PATCH", "/api/v1/namespaces/ns/pods/p/status",
		     "application/merge-patch+json", NULL, NULL, NULL);
	CHECK_EQ_INT(t, d.wq.nlo, 1001);
	CHECK_EQ_INT(t, count(d.wq.lo_head, false), 1);
	/* nor is a bind, which is never dropped */
	mu__kd_write(&d, MU__KW_BIND, "POST", "/api/v1/namespaces/ns/pods/p/binding", "application/json",
		     NULL, "ns/p", "n1");
	CHECK_EQ_INT(t, d.wq.nhi, 1);
	/* an Event taken off by a writer makes room for one more */
	mu__kwork_t *w = d.wq.lo_head;
	d.wq.lo_head = w->next;
	d.wq.nlo--;
	d.wq.nev -= w->event;
	mu__kwork_free(w);
	mu__kd_event_write(&d, "Pod", "v1", "ns", "p", "uid", "Warning", "FailedScheduling", "again");
	mu__kd_event_write(&d, "Pod", "v1", "ns", "p", "uid", "Warning", "FailedScheduling", "dropped");
	CHECK_EQ_INT(t, d.wq.nev, 1000);
	CHECK_EQ_INT(t, d.wq.ev_dropped, 501);
	CHECK(t, strstr(d.wq.lo_tail->body, "\"again\"") != NULL);
	CHECK(t, strstr(d.wq.lo_tail->path, "/events") != NULL);
	kd_release(&d);
}

/* Status writes fill the low-priority list to its own cap, and Events are
 * dropped then too (counted), without going over either cap. */
static void test_status_cap(mu_t_t *t)
{
	mu__kd_t d;
	mu_kube_opts_t o;
	kd_init(&d, &o);
	size_t cap = d.wq.lo_cap;
	CHECK(t, cap > 1000);
	for (size_t i = 0; i < cap + 10; i++)
		mu__kd_write(&d, MU__KW_WRITE, "PATCH", "/p", "application/json", NULL, NULL, NULL);
	CHECK_EQ_INT(t, d.wq.nlo, cap);
	mu__kd_event_write(&d, "Pod", "v1", "ns", "p", "uid", "Warning", "FailedScheduling", "full");
	CHECK_EQ_INT(t, d.wq.nlo, cap);
	CHECK_EQ_INT(t, d.wq.nev, 0);
	CHECK_EQ_INT(t, d.wq.ev_dropped, 1);
	kd_release(&d);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_events_capped);
	MU_RUN(&t, test_status_cap);
	return mu_t_done(&t);
}

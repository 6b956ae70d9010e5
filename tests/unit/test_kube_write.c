/*
 * test_kube_write.c - the daemon's write queue (src/kube/write.c) without
 * its workers: Events are capped at 1,000 queued, as client-go's event
 * broadcaster is (maxQueuedEvents), and the ones beyond are dropped and
 * counted; status writes still queue up to the low-priority cap, binds
 * are never dropped, and taking an Event off the queue makes room for
 * another.  Binds are rendered and queued only MU__KD_BIND_WINDOW at a
 * time: the rest wait as pod keys and go, oldest first, as the writers
 * take the queued ones; a pod bound meanwhile or gone is not sent.
 */
#include <stdio.h>
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

/* Takes every queued bind off the high-priority list, as writers would;
 * returns how many, and the path of the first in *first (owned). */
static size_t take_all(mu__kd_t *d, char **first)
{
	size_t n = 0;
	*first = NULL;
	while (d->wq.hi_head) {
		mu__kwork_t *w = d->wq.hi_head;
		d->wq.hi_head = w->next;
		if (!n)
			*first = strdup(w->path);
		n++;
		mu__kwork_free(w);
	}
	d->wq.hi_tail = NULL;
	d->wq.nhi = 0;
	return n;
}

#define NB 3000

/* A backlog's binds: at most the window is rendered at once (the old
 * write path queued all 3,000), the rest wait as keys and go in order;
 * one pod bound meanwhile and one deleted are not sent, and a waiting
 * pod decided again is sent once, to its latest node. */
static void test_binds_windowed(mu_t_t *t)
{
	mu__kd_t d;
	mu_kube_opts_t o;
	kd_init(&d, &o);
	static mu__kpod_t pods[NB];
	static char keys[NB][32], names[NB][16];
	mu_decision_t dev;
	memset(&dev, 0, sizeof dev);
	dev.kind = MU_DEC_BIND;
	dev.gpus = 0x3;
	dev.numa = dev.nic = -1;
	for (int i = 0; i < NB; i++) {
		mu__kpod_t *p = &pods[i];
		memset(p, 0, sizeof *p);
		snprintf(names[i], sizeof names[i], "p%d", i);
		snprintf(keys[i], sizeof keys[i], "ns/p%d", i);
		p->key = keys[i];
		p->ns = "ns";
		p->name = names[i];
		p->uid = "u";
		CHECK_EQ_INT(t, mu__kmap_put(&d.pods, p->key, p), 0);
		mu__kd_bind(&d, p, "n1", &dev);
	}
	CHECK_EQ_INT(t, d.wq.nhi, MU__KD_BIND_WINDOW);
	CHECK_EQ_INT(t, d.bw_n, NB - MU__KD_BIND_WINDOW);
	CHECK(t, !pods[MU__KD_BIND_WINDOW - 1].bind_wait && pods[MU__KD_BIND_WINDOW].bind_wait);
	CHECK(t, pods[NB - 1].an_node && !strcmp(pods[NB - 1].an_node, "n1"));
	/* bound meanwhile (the watch shows it), deleted, decided again */
	mu__kpod_t *bound = &pods[1500], *again = &pods[2500];
	bound->node = "n9";
	free(bound->an_node);
	bound->an_node = NULL;
	mu__kpod_t *gone = mu__kmap_del(&d.pods, pods[1600].key);
	CHECK(t, gone == &pods[1600]);
	mu__kd_bind(&d, again, "n2", &dev);
	CHECK_EQ_INT(t, d.bw_n, NB - MU__KD_BIND_WINDOW);
	/* the writers take the window; the next window goes, in order */
	char *first;
	size_t sent = take_all(&d, &first);
	CHECK_EQ_INT(t, sent, MU__KD_BIND_WINDOW);
	CHECK(t, first && strstr(first, "/pods/p0/binding"));
	free(first);
	mu__kd_bind_flush(&d, false);
	CHECK_EQ_INT(t, d.wq.nhi, MU__KD_BIND_WINDOW);
	CHECK(t, strstr(d.wq.hi_head->path, "/pods/p1024/binding") != NULL);
	CHECK(t, strstr(d.wq.hi_head->body, "\"muster.io/gpus\":\"0,1\"") != NULL);
	CHECK(t, !strcmp(d.wq.hi_head->node, "n1"));
	sent += take_all(&d, &first);
	free(first);
	/* the rest, as the daemon stops: all of them, however many */
	mu__kd_bind_flush(&d, true);
	size_t n2 = 0;
	for (mu__kwork_t *w = d.wq.hi_head; w; w = w->next) {
		n2 += strstr(w->path, "/pods/p2500/binding") != NULL;
		CHECK(t, !strstr(w->path, "/pods/p1500/") && !strstr(w->path, "/pods/p1600/"));
		if (strstr(w->path, "/pods/p2500/"))
			CHECK(t, !strcmp(w->node, "n2"));
	}
	CHECK_EQ_INT(t, n2, 1);
	sent += take_all(&d, &first);
	free(first);
	CHECK_EQ_INT(t, sent, NB - 2);
	CHECK_EQ_INT(t, d.bw_n, 0);
	CHECK(t, d.bwait == NULL); /* the backlog's ring is given back */
	for (int i = 0; i < NB; i++)
		free(pods[i].an_node);
	mu__kmap_release(&d.pods);
	kd_release(&d);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_events_capped);
	MU_RUN(&t, test_status_cap);
	MU_RUN(&t, test_binds_windowed);
	return mu_t_done(&t);
}

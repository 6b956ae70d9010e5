/*
 * test_kube_write.c - the daemon's write queue (src/kube/write.c) without
 * its workers: Events are capped at 1,000 queued, as client-go's event
 * broadcaster is (maxQueuedEvents), and the ones beyond are dropped and
 * counted; status writes still queue up to the low-priority cap, binds
 * are never dropped, and taking an Event off the queue makes room for
 * another.  Binds are rendered and queued only MU__KD_BIND_WINDOW at a
 * time: the rest wait as pod keys and go, oldest first, as the writers
 * take the queued ones; a pod bound meanwhile or gone is not sent.
 * The Binding's and the Event's bodies, now printed directly,
 * are byte for byte what json_dumps printed of the json_pack trees they
 * were, for strings with every escape, UTF-8 and null; a string that is
 * not valid UTF-8 gives no body, as json_pack gave no tree.  The shape
 * key's writer (mu__kjt_sorted) prints what json_dumps prints with sorted
 * keys, for the Pod fixture and for every kind of value.
 */
#include <pthread.h>
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

/* Strings with every escape json_dumps makes, and UTF-8 it keeps. */
static const char *const tricky[] = {
	"plain", "", "q\"uote", "back\\slash", "sl/ash", "\b\f\n\r\t", "\x01\x1f\x7f", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	"0/5 nodes are available: 5 Insufficient nvidia.com/gpu.",
};

static void test_bodies(mu_t_t *t)
{
	size_t n = sizeof tricky / sizeof *tricky;
	for (size_t i = 0; i < n; i++) {
		const char *a = tricky[i], *b = tricky[(i + 1) % n], *c = tricky[(i + 2) % n];
		/* the Binding, with annotations and without a uid */
		for (int k = 0; k < 2; k++) {
			json_t *an = json_object();
			if (k)
				json_object_set_new(an, "muster.io/gpus", json_string("0,1"));
			json_object_set_new(an, c, json_string(a));
			const char *uid = k ? b : NULL;
			json_t *old = json_pack("{s:s,s:s,s:{s:s,s:s,s:s?,s:O},s:{s:s,s:s}}", "apiVersion", "v1",
						"kind", "Binding", "metadata", "name", a, "namespace", b, "uid", uid,
						"annotations", an, "target", "kind", "Node", "name", c);
			char *want = json_dumps(old, JSON_COMPACT);
			char *got = mu__kd_binding_text(b, a, uid, an, c);
			CHECK(t, want && got);
			if (want && got)
				CHECK_STR(t, got, want);
			free(want);
			free(got);
			json_decref(old);
			json_decref(an);
		}
		/* the Event */
		json_t *old = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s,s:s?},s:s,s:s,s:s,s:{s:s},"
					"s:s,s:s,s:i,s:s,s:s}",
					"apiVersion", "v1", "kind", "Event", "metadata", "name", c, "namespace", a,
					"involvedObject", "kind", "Pod", "apiVersion", "v1", "namespace", a, "name", b,
					"uid", i % 2 ? NULL : c, "reason", b, "message", a, "type", "Normal",
					"source", "component", c, "firstTimestamp", b, "lastTimestamp", b, "count", 1,
					"reportingComponent", c, "reportingInstance", a);
		char *want = json_dumps(old, JSON_COMPACT);
		char *got = mu__kd_event_text(c, "Pod", "v1", a, b, i % 2 ? NULL : c, "Normal", b, a, b, c, a);
		CHECK(t, want && got);
		if (want && got)
			CHECK_STR(t, got, want);
		free(want);
		free(got);
		json_decref(old);
	}
	/* not UTF-8 (a lone continuation byte, a surrogate, a cut sequence) */
	const char *bad[] = {"x\x80", "\xed\xa0\x80", "\xe2\x82"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		json_t *an = json_object();
		CHECK(t, !json_pack("{s:s}", "m", bad[i]));
		CHECK(t, !mu__kd_binding_text("ns", bad[i], NULL, an, "n"));
		CHECK(t, !mu__kd_event_text("e", "Pod", "v1", "ns", "p", NULL, "Normal", "r", bad[i], "t", "c", "i"));
		json_decref(an);
	}
}

/* A full Event list: further Events are counted dropped and not queued,
 * and the queued ones carry the text of the message. */
static void test_event_body_queued(mu_t_t *t)
{
	mu__kd_t d;
	mu_kube_opts_t o;
	kd_init(&d, &o);
	mu__kd_event_write(&d, "Pod", "v1", "ns", "p", "uid", "Normal", "Scheduled", "to \"n1\"");
	CHECK_EQ_INT(t, d.wq.nev, 1);
	json_t *j = d.wq.lo_tail ? json_loads(d.wq.lo_tail->body, 0, NULL) : NULL;
	CHECK_STR(t, mu__kjs(j, "message"), "to \"n1\"");
	CHECK_STR(t, mu__kjs(j, "involvedObject.uid"), "uid");
	CHECK_STR(t, mu__kjs(j, "reportingComponent"), o.scheduler_name);
	CHECK(t, json_integer_value(json_object_get(j, "count")) == 1);
	json_decref(j);
	CHECK_STR(t, d.wq.lo_tail->ctype, "application/json");
	kd_release(&d);
}

/* v through mu__kjt_sorted and json_dumps with sorted keys: the same bytes. */
static void sorted_same(mu_t_t *t, json_t *v)
{
	mu__kjt_t b = {0};
	mu__kjt_sorted(&b, v);
	char *got = mu__kjt_done(&b), *want = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	CHECK(t, got && want);
	if (got && want)
		CHECK_STR(t, got, want);
	free(got);
	free(want);
}

static void test_sorted(mu_t_t *t)
{
	json_t *v = json_loads("{\"b\":1,\"a\":[true,false,null,-7,9223372036854775807,0.1,1e300,-2.5e-7,3.0],"
			       "\"B\":{\"z\":{},\"y\":[],\"\":\"e\\u00e9\\n\\u0001/\\\"\"},\"\\u00e9\":\"x\","
			       "\"aa\":\"\\ud83d\\ude00\"}", 0, NULL);
	CHECK(t, v != NULL);
	sorted_same(t, v);
	json_decref(v);
	/* more keys than the writer keeps on its stack */
	v = json_object();
	for (int i = 40; i > 0; i--) {
		char k[16];
		snprintf(k, sizeof k, "k%d", i * 7 % 41);
		json_object_set_new(v, k, json_integer(i));
	}
	sorted_same(t, v);
	json_decref(v);
	json_t *pod = json_load_file("../shared/data/k8s/core.v1.Pod.json", 0, NULL);
	if (pod)
		sorted_same(t, pod);
	else
		printf("skipped: ../shared/data not found (fixture)\n");
	json_decref(pod);
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

/* A Job's pod seen before its Job (the Pods' and the Jobs' watches are
 * separate): the sync writes nothing for it, as kube-scheduler writes
 * nothing for a pod a PreEnqueue plugin holds back (events.c
 * job_unseen); before, a PodScheduled=False PATCH and a FailedScheduling
 * Event, two requests per pod that lost the race.  A group that held
 * something of the engine's (admitted: its Job deleted since) is synced
 * as before and its pod told that it waits. */
static void test_unseen_job_silent(mu_t_t *t)
{
	mu__kd_t d;
	mu_kube_opts_t o;
	kd_init(&d, &o);
	d.log.level = -1;
	pthread_mutex_init(&d.log.mu, NULL);
	mu__kpod_t p = {0};
	char key[] = "ns/j-0-abcde";
	p.key = key;
	p.ns = "ns";
	p.name = "j-0-abcde";
	p.uid = "u1";
	p.owner_job = "j-0";
	p.ours = true;
	p.slot = -1;
	mu__kgroup_t g = {0};
	g.key = "j:ns/j-0";
	g.ns = "ns";
	g.name = "j-0";
	g.kind = MU__KG_JOB;
	g.ej = -1;
	g.pods = &g.pod1;
	g.pod1 = &p;
	g.npods = g.cap = 1;
	p.g = &g;
	mu__kd_mark_dirty(&d, &g);
	mu__kd_sync(&d, 1000);
	CHECK_EQ_INT(t, count(d.wq.lo_head, false), 0); /* no PodScheduled PATCH */
	CHECK_EQ_INT(t, count(d.wq.lo_head, true), 0);  /* no FailedScheduling Event */
	CHECK(t, !p.msg);
	CHECK(t, !g.dirty);
	/* it held an admission (its Job since deleted): synced, told why */
	g.admitted = true;
	mu__kd_mark_dirty(&d, &g);
	mu__kd_sync(&d, 1000);
	CHECK_EQ_INT(t, count(d.wq.lo_head, false), 1);
	CHECK_EQ_INT(t, count(d.wq.lo_head, true), 1);
	CHECK(t, !g.admitted);
	free(p.msg);
	free(d.dirty);
	kd_release(&d);
	pthread_mutex_destroy(&d.log.mu);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_events_capped);
	MU_RUN(&t, test_status_cap);
	MU_RUN(&t, test_binds_windowed);
	MU_RUN(&t, test_bodies);
	MU_RUN(&t, test_event_body_queued);
	MU_RUN(&t, test_sorted);
	MU_RUN(&t, test_unseen_job_silent);
	return mu_t_done(&t);
}

/*
 * test_dispatch_pass.c - what the hub daemon's pass keeps between passes
 * so that it walks only what changed (docs/dispatch.md, round 10): the
 * sets of jobs, lists through the job records (mu__djlist_*: each job at
 * most once, taken out from anywhere, emptied with its marks), the
 * marking of a job for the write-back and for its copies
 * (mu__djob_dirty, mu__djob_touch), and which write-backs a pass may
 * leave to the full pass (mu__dhub_pod_events_only: the pod counts alone
 * changed).  Round 13: a hub Queue is loaded again only when what the
 * dispatcher reads of it moved (its spec, labels, annotations), not when
 * its own status write moved its version; that status holds the fleet's
 * fair share, usage and job counts in the scheduler's fields and format
 * (test_queue_status).  Round 20: a job's annotations and status are
 * built and compared again only when an input of theirs moved
 * (mu__dhub_annotate_due's memo): a change of each input is still found
 * due (test_memo_inputs).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"

/* The jobs of set l, by name, joined with spaces, into buf. */
static const char *names(const mu__djlist_t *l, int i, char *buf, size_t len)
{
	buf[0] = '\0';
	for (const mu__djob_t *j = l->head; j; j = j->next[i])
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? " " : "", j->name);
	return buf;
}

static void test_sets(mu_t_t *t)
{
	mu__djob_t a = {0}, b = {0}, c = {0};
	a.name = "a";
	b.name = "b";
	c.name = "c";
	mu__djlist_t l = {0}, m = {0};
	char buf[64];
	mu__djlist_add(&l, &a, MU__DM_DIRTY);
	mu__djlist_add(&l, &b, MU__DM_DIRTY);
	mu__djlist_add(&l, &a, MU__DM_DIRTY); /* already there */
	mu__djlist_add(&l, &c, MU__DM_DIRTY);
	CHECK_EQ_INT(t, l.n, 3);
	CHECK_STR(t, names(&l, MU__DM_DIRTY, buf, sizeof buf), "a b c");
	/* another set through the same jobs, in its own order */
	mu__djlist_add(&m, &c, MU__DM_PEND);
	mu__djlist_add(&m, &a, MU__DM_PEND);
	CHECK_STR(t, names(&m, MU__DM_PEND, buf, sizeof buf), "c a");
	/* out of the middle, then the tail; the tail follows */
	mu__djlist_drop(&l, &b, MU__DM_DIRTY);
	CHECK_STR(t, names(&l, MU__DM_DIRTY, buf, sizeof buf), "a c");
	mu__djlist_drop(&l, &c, MU__DM_DIRTY);
	mu__djlist_drop(&l, &c, MU__DM_DIRTY); /* not there: nothing */
	CHECK_EQ_INT(t, l.n, 1);
	CHECK(t, l.tail == &a);
	mu__djlist_add(&l, &c, MU__DM_DIRTY);
	CHECK_STR(t, names(&l, MU__DM_DIRTY, buf, sizeof buf), "a c");
	CHECK_STR(t, names(&m, MU__DM_PEND, buf, sizeof buf), "c a");
	/* emptied: the marks go, so the jobs can join again */
	mu__djlist_clear(&l, MU__DM_DIRTY);
	CHECK_EQ_INT(t, l.n, 0);
	CHECK(t, !l.head && !l.tail);
	CHECK_EQ_INT(t, a.marks, 1 << MU__DM_PEND);
	CHECK_EQ_INT(t, c.marks, 1 << MU__DM_PEND);
	mu__djlist_add(&l, &b, MU__DM_DIRTY);
	CHECK_STR(t, names(&l, MU__DM_DIRTY, buf, sizeof buf), "b");
	mu__djlist_drop(&m, &c, MU__DM_PEND); /* the head */
	CHECK_STR(t, names(&m, MU__DM_PEND, buf, sizeof buf), "a");
	CHECK(t, m.head == &a && m.tail == &a);
	/* the daemon's marks: the write-back, and its copies too */
	mu__dd_t d;
	memset(&d, 0, sizeof d);
	mu__djob_dirty(&d, &c);
	mu__djob_touch(&d, &a);
	mu__djob_touch(&d, &c);
	CHECK_STR(t, names(&d.dirty, MU__DM_DIRTY, buf, sizeof buf), "c a");
	CHECK_STR(t, names(&d.wdirty, MU__DM_WDIRTY, buf, sizeof buf), "a c");
}

/* A dispatched, unmanaged hub Job on cluster w1 whose annotations and
 * status were last written as a pass would write them with pods "had". */
static void written_as(mu__djob_t *j, const char *phase, const char *had)
{
	char sig[600];
	snprintf(sig, sizeof sig, "{\"l\":\"w1\",\"muster.io/cluster\":\"w1\","
		 "\"muster.io/dispatch-generation\":\"1\",\"muster.io/dispatch-held\":null,"
		 "\"muster.io/dispatch-message\":null,"
		 "\"muster.io/dispatch-phase\":\"%s\",\"muster.io/dispatch-pods\":%s%s%s,"
		 "\"muster.io/dispatch-preempted\":null,\"muster.io/dispatch-preempted-for\":null,"
		 "\"muster.io/dispatch-reason\":null,\"muster.io/dispatch-shrinking\":null,"
		 "\"muster.io/dispatch-shrunk\":null}", phase, had ? "\"" : "", had ? had : "null",
		 had ? "\"" : "");
	free(j->ann_sig);
	j->ann_sig = strdup(sig);
	free(j->status_sig);
	j->status_sig = strdup("{\"conditions\":[{\"type\":\"Dispatched\",\"status\":\"True\","
			       "\"reason\":\"Dispatched\",\"message\":\"on cluster w1 (generation 1)\"}]}");
}

static void written(mu__djob_t *j, const char *had)
{
	written_as(j, "Running", had);
}

/* Round 21: mu__dhub_write_due (one memo_key text for the three tests)
 * against the three tests run.c made before, in a pass that is not full
 * and in one that is; and against what was wanted (-1: not said). */
static void due_as(mu_t_t *t, mu__dd_t *d, mu__djob_t *j, int part, int full)
{
	for (int f = 0; f < 2; f++) {
		d->full = f;
		bool one = mu__dhub_write_due(d, j);
		bool three = (mu__dhub_annotate_due(d, j) || mu__dhub_status_due(d, j)) &&
			     (d->full || !mu__dhub_pod_events_only(d, j));
		CHECK(t, one == three);
		int want = f ? full : part;
		if (want >= 0)
			CHECK(t, one == !!want);
	}
	d->full = false;
}

static void test_pod_events_only(mu_t_t *t)
{
	mu__dcl_t cl;
	memset(&cl, 0, sizeof cl);
	cl.name = "w1";
	mu__dd_t d;
	memset(&d, 0, sizeof d);
	d.cls = &cl;
	d.ncls = 1;
	mu__djob_t j;
	memset(&j, 0, sizeof j);
	j.kind = MU__DK_JOB;
	j.name = "j";
	j.obj = json_loads("{\"metadata\":{\"name\":\"j\"},\"spec\":{}}", 0, NULL);
	j.state = MU__DJ_DISPATCHED;
	j.cl = 0;
	j.gen = 1;
	snprintf(j.phase, sizeof j.phase, "Running");
	snprintf(j.pods, sizeof j.pods, "bound=1,running=1,succeeded=0,failed=0");
	/* as written: nothing due */
	written(&j, "bound=1,running=1,succeeded=0,failed=0");
	due_as(t, &d, &j, 0, 0);
	CHECK(t, !mu__dhub_annotate_due(&d, &j));
	CHECK(t, !mu__dhub_pod_events_only(&d, &j));
	/* the counts alone moved: due, and left to the full pass */
	written(&j, "bound=1,running=0,succeeded=0,failed=0");
	due_as(t, &d, &j, 0, 1);
	CHECK(t, mu__dhub_annotate_due(&d, &j));
	CHECK(t, mu__dhub_pod_events_only(&d, &j));
	/* ... but not with its status written otherwise (round 21) */
	free(j.status_sig);
	j.status_sig = strdup("{}");
	due_as(t, &d, &j, 1, 1);
	written(&j, "bound=1,running=0,succeeded=0,failed=0");
	/* the phase moved too: written at once */
	snprintf(j.phase, sizeof j.phase, "Succeeded");
	due_as(t, &d, &j, 1, 1);
	CHECK(t, !mu__dhub_pod_events_only(&d, &j));
	/* back to the queue: not counts alone either */
	snprintf(j.phase, sizeof j.phase, "Running");
	j.state = MU__DJ_QUEUED;
	CHECK(t, mu__dhub_annotate_due(&d, &j));
	CHECK(t, !mu__dhub_pod_events_only(&d, &j));
	/* never written: at once */
	j.state = MU__DJ_DISPATCHED;
	free(j.ann_sig);
	j.ann_sig = NULL;
	due_as(t, &d, &j, 1, 1);
	CHECK(t, !mu__dhub_pod_events_only(&d, &j));
	/* round 16: recorded (Dispatched, no pods), then its first pod bound
	 * and running: Running with the counts is left to the full pass too,
	 * one write-back for the pod's events of the second */
	written_as(&j, "Dispatched", NULL);
	due_as(t, &d, &j, 0, 1);
	CHECK(t, mu__dhub_annotate_due(&d, &j));
	CHECK(t, mu__dhub_pod_events_only(&d, &j));
	/* ... and when it completed within that second: Succeeded, at once */
	snprintf(j.phase, sizeof j.phase, "Succeeded");
	CHECK(t, !mu__dhub_pod_events_only(&d, &j));
	/* Running back to Dispatched (its pods gone): at once */
	snprintf(j.phase, sizeof j.phase, "Dispatched");
	written_as(&j, "Running", "bound=1,running=1,succeeded=0,failed=0");
	snprintf(j.pods, sizeof j.pods, "bound=0,running=0,succeeded=0,failed=0");
	CHECK(t, mu__dhub_annotate_due(&d, &j));
	CHECK(t, !mu__dhub_pod_events_only(&d, &j));
	/* moved to another cluster while Running was pending: at once */
	snprintf(j.phase, sizeof j.phase, "Running");
	written_as(&j, "Dispatched", NULL);
	j.gen = 2;
	due_as(t, &d, &j, 1, 1);
	CHECK(t, !mu__dhub_pod_events_only(&d, &j));
	free(j.ann_sig);
	free(j.status_sig);
	free(j.ann_memo);
	free(j.status_memo);
	json_decref(j.obj);
}

/* The job of test_memo_inputs: a managed Job dispatched to w1, Running. */
static void memo_job(mu__djob_t *j, json_t *obj)
{
	json_decref(j->obj);
	free(j->ann_sig);
	free(j->status_sig);
	free(j->ann_memo);
	free(j->status_memo);
	free(j->reason);
	free(j->msg);
	free(j->failed_create);
	free(j->preempted);
	free(j->preempted_for);
	free(j->shrunk);
	free(j->shrinking);
	json_decref(j->held);
	memset(j, 0, sizeof *j);
	j->kind = MU__DK_JOB;
	j->name = "j";
	j->obj = json_incref(obj);
	j->state = MU__DJ_DISPATCHED;
	j->cl = 0;
	j->gen = 1;
	snprintf(j->phase, sizeof j->phase, "Running");
	snprintf(j->pods, sizeof j->pods, "bound=1,running=1,succeeded=0,failed=0");
}

/* j as written: its signatures are what it would write; nothing due, and
 * (the memo set by the first look) still nothing due. */
static void memo_written(mu_t_t *t, mu__dd_t *d, mu__djob_t *j)
{
	free(j->ann_sig);
	free(j->status_sig);
	j->ann_sig = mu__dhub_ann_text(d, j);
	j->status_sig = mu__dhub_status_text(d, j);
	for (int k = 0; k < 2; k++) {
		CHECK(t, !mu__dhub_annotate_due(d, j));
		CHECK(t, !mu__dhub_status_due(d, j));
	}
	CHECK(t, j->ann_memo && (j->kind != MU__DK_JOB || j->status_memo));
}

static char *sdup(const char *s) { return strdup(s); }

/* Round 20: every input of a job's annotations and status, changed alone
 * after both were found as written (so the memo is set), makes the one
 * it shows in due; and an ann_sig written from elsewhere is not hidden by
 * the memo.  Fails with any input left out of mu__dhub_memo_key's text. */
static void test_memo_inputs(mu_t_t *t)
{
	mu__dcl_t cl[2];
	memset(cl, 0, sizeof cl);
	char n0[8] = "w1";
	cl[0].name = n0;
	cl[1].name = "w2";
	mu__dd_t d;
	memset(&d, 0, sizeof d);
	d.cls = cl;
	d.ncls = 2;
	json_t *mine = json_loads("{\"metadata\":{\"name\":\"j\"},\"spec\":{\"managedBy\":"
				  "\"muster.io/dispatch\"}}", 0, NULL);
	json_t *plain = json_loads("{\"metadata\":{\"name\":\"j\"},\"spec\":{}}", 0, NULL);
	mu__djob_t j;
	memset(&j, 0, sizeof j);
	enum { ANN = 1, ST = 2 };
	for (int c = 0; c < 18; c++) {
		memo_job(&j, mine);
		int want = ANN | ST;
		if (c == 3 || c == 4) { /* why it waits shows while queued */
			j.state = MU__DJ_QUEUED;
			j.reason = sdup("NoFit");
			j.msg = sdup("no room");
		}
		if (c == 10 || c == 11) /* a refused create shows until a pod is bound */
			j.failed_create = sdup("pods forbidden");
		if (c == 14 || c == 15)
			json_decref(j.obj), j.obj = json_incref(plain);
		memo_written(t, &d, &j);
		switch (c) {
		case 0: j.state = MU__DJ_QUEUED; break;
		case 1: snprintf(j.phase, sizeof j.phase, "Succeeded"); break;
		case 2: snprintf(j.pods, sizeof j.pods, "bound=1,running=0,succeeded=1,failed=0"); break;
		case 3: free(j.reason); j.reason = sdup("NoMatchingCluster"); break;
		case 4: free(j.msg); j.msg = sdup("no room at all"); break;
		case 5: j.preempted = sdup("Reclaimed\tfor a/b"); break;
		case 6: j.preempted_for = sdup("a/b"); want = ANN; break;
		case 7: j.shrunk = sdup("1\t2\tReclaimed\tfor a/b"); break;
		case 8: j.shrinking = sdup("1\t2"); want = ANN; break;
		case 9: j.gen = 2; break;
		case 10: j.started = true; break;
		case 11: free(j.failed_create); j.failed_create = sdup("quota"); break;
		case 12: j.cl = 1; break;
		case 13: snprintf(n0, sizeof n0, "w9"); break; /* its cluster's name */
		case 14: json_decref(j.obj); j.obj = json_incref(mine); want = ST; break;
		case 15: /* ann_sig written elsewhere (a record) */
			free(j.ann_sig);
			j.ann_sig = sdup("{}");
			want = ANN;
			break;
		case 16: /* a late pod held (round 20's MU__D_HELD) */
			j.held = json_pack("{s:{s:i}}", "p0", "gen", 1);
			want = ANN;
			break;
		case 17: /* round 21: status_sig written elsewhere, the
			  * annotations' memo still holding */
			free(j.status_sig);
			j.status_sig = sdup("{}");
			want = ST;
			break;
		}
		/* round 21: the one test of the write-back, in a full pass
		 * (it sets the memos as the two below would) */
		d.full = true;
		CHECK(t, mu__dhub_write_due(&d, &j) == !!want);
		d.full = false;
		CHECK(t, mu__dhub_annotate_due(&d, &j) == !!(want & ANN));
		CHECK(t, mu__dhub_status_due(&d, &j) == !!(want & ST));
		snprintf(n0, sizeof n0, "w1");
	}
	/* another kind's status is its copy's: a new copy status is due */
	memo_job(&j, mine);
	j.kind = MU__DK_JOBSET;
	j.wstatus = json_pack("{s:i}", "restarts", 0);
	memo_written(t, &d, &j);
	json_object_set_new(j.wstatus, "restarts", json_integer(1));
	CHECK(t, mu__dhub_status_due(&d, &j));
	json_decref(j.wstatus);
	j.wstatus = NULL;
	memo_job(&j, plain);
	json_decref(j.obj);
	json_decref(mine);
	json_decref(plain);
}

static void test_queue_status(mu_t_t *t)
{
	json_t *o = json_loads("{\"metadata\":{\"name\":\"team-a\",\"resourceVersion\":\"5\","
			       "\"generation\":1,\"annotations\":{\"muster.io/cluster-caps\":\"big=gpu:8\"}},"
			       "\"spec\":{\"deserved\":{\"nvidia.com/gpu\":4}}}", 0, NULL);
	char *s0 = mu__dqueue_sig(o);
	/* its own status write: a new version, managedFields, a status */
	json_object_set_new((json_t *)mu__jget(o, "metadata"), "resourceVersion", json_string("6"));
	json_object_set_new((json_t *)mu__jget(o, "metadata"), "managedFields", json_pack("[{s:s}]",
			    "manager", "muster-dispatch"));
	json_object_set_new(o, "status", json_pack("{s:i}", "runningJobs", 3));
	char *s1 = mu__dqueue_sig(o);
	CHECK_STR(t, s1, s0);
	/* a spec or a cap that moved is a change */
	json_object_set_new((json_t *)mu__jget(o, "metadata.annotations"), "muster.io/cluster-caps",
			    json_string("big=gpu:4"));
	char *s2 = mu__dqueue_sig(o);
	CHECK(t, strcmp(s2, s0) != 0);
	json_object_set_new((json_t *)mu__jget(o, "metadata.annotations"), "muster.io/cluster-caps",
			    json_string("big=gpu:8"));
	json_object_set_new((json_t *)mu__jget(o, "spec.deserved"), "nvidia.com/gpu", json_integer(2));
	char *s3 = mu__dqueue_sig(o);
	CHECK(t, strcmp(s3, s0) != 0);
	free(s0);
	free(s1);
	free(s2);
	free(s3);
	json_decref(o);
	/* the status: the scheduler's fields and notation */
	mu_fleet_queue_info_t qi;
	memset(&qi, 0, sizeof qi);
	qi.fair.v[MU_RES_GPU] = 6500;
	qi.fair.v[MU_RES_CPU] = 48000;
	qi.fair.v[MU_RES_MEM] = 1LL << 30;
	qi.used.v[MU_RES_GPU] = 2000;
	qi.used.v[MU_RES_CPU] = 1500;
	qi.queued = 1;
	qi.running = 2;
	json_t *st = mu__dqueue_status_json(&qi);
	char *txt = json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(t, txt, "{\"fairShare\":{\"cpu\":\"48000m\",\"memory\":\"1073741824\",\"nvidia.com/gpu\":\"6.5\"},"
		  "\"pendingJobs\":1,\"runningJobs\":2,"
		  "\"usage\":{\"cpu\":\"1500m\",\"memory\":\"0\",\"nvidia.com/gpu\":\"2\"}}");
	free(txt);
	json_decref(st);
}

/* Round 14: the per-job dispatch path's histograms (dutil.c): each leg
 * counted per job, percentiles within a bucket's step (0.1 ms to 100 ms,
 * 10 ms above), the max exact, a job whose stamps are missing or out of
 * order not counted, and the stop line's text. */
static void test_path_times(mu_t_t *t)
{
	mu__dlat_t *h = calloc(1, sizeof *h);
	CHECK(t, h != NULL);
	if (!h)
		return;
	CHECK(t, mu__dlat_pct(h, 0, 50) == -1); /* none yet */
	/* 100 jobs: recorded after i ms (1..100), created 2.5 ms later,
	 * seen bound 200 ms after that */
	for (int i = 1; i <= 100; i++) {
		int64_t d0 = 1000000, r = d0 + i * 1000, c = r + 2500, b = c + 200000;
		mu__dlat_add(h, (int64_t[4]){d0, r, c, b});
	}
	/* not counted: no create stamp; bound before created */
	mu__dlat_add(h, (int64_t[4]){1000, 2000, 0, 5000});
	mu__dlat_add(h, (int64_t[4]){1000, 2000, 3000, 2500});
	CHECK(t, h->count[0] == 100 && h->count[3] == 100);
	CHECK(t, mu__dlat_pct(h, 0, 50) == 50000);
	CHECK(t, mu__dlat_pct(h, 0, 90) == 90000);
	CHECK(t, mu__dlat_pct(h, 0, 100) == 100000);
	CHECK(t, mu__dlat_pct(h, 1, 50) == 2500);
	CHECK(t, mu__dlat_pct(h, 2, 50) == 200000);
	/* the whole: 202.5 + i ms, in 10 ms steps above 100 ms */
	CHECK(t, mu__dlat_pct(h, 3, 50) == 250000);
	CHECK(t, mu__dlat_pct(h, 3, 100) == 302500);
	char line[1024];
	mu__dlat_format(h, line, sizeof line);
	CHECK_STR(t, line, "100 jobs: decided->recorded p50 50.0 p90 90.0 max 100.0 ms, "
		  "recorded->created p50 2.5 p90 2.5 max 2.5 ms, "
		  "created->seen bound p50 200.0 p90 200.0 max 200.0 ms, "
		  "decided->seen bound p50 250.0 p90 290.0 max 302.5 ms");
	/* beyond 60 s: the last bucket, the max still exact */
	mu__dlat_add(h, (int64_t[4]){1, 2, 3, 100000000});
	CHECK(t, mu__dlat_pct(h, 3, 100) == 99999999);
	free(h);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_sets);
	MU_RUN(&t, test_pod_events_only);
	MU_RUN(&t, test_memo_inputs);
	MU_RUN(&t, test_queue_status);
	MU_RUN(&t, test_path_times);
	return mu_t_done(&t);
}

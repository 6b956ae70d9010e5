/*
 * test_fleet.c - unit tests of the second level through its public API:
 * the engine's what-if (nothing left behind), and the fleet's decision:
 * a gang goes only where it fits node by node, the tightest fit, private
 * before public and burst after the wait, selectors and locality, hub
 * queue limits, caps and fair share, jobs that fit nowhere holding no
 * quota, requeue with a new generation, and explain.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/fleet.h"

#define GI (1024LL * 1024 * 1024)
#define MIN (60 * 1000LL)

static mu_node_spec_t node(const char *name, int cpus, int gpus, const char *model)
{
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = name;
	n.alloc.v[MU_RES_CPU] = cpus * 1000LL;
	n.alloc.v[MU_RES_MEM] = 512 * GI;
	n.alloc.v[MU_RES_GPU] = gpus;
	n.alloc.v[MU_RES_PODS] = 110;
	n.gpu_model = model;
	return n;
}

/* A one-podset gang: replicas pods of `gpus` GPUs and 1 CPU each. */
static mu_job_spec_t job(const char *name, const char *q, mu_podset_spec_t *ps,
			 int replicas, int gpus)
{
	memset(ps, 0, sizeof *ps);
	ps->name = "main";
	ps->replicas = replicas;
	ps->req.v[MU_RES_CPU] = 1000;
	ps->req.v[MU_RES_GPU] = gpus;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = name;
	j.queue = q;
	j.podsets = ps;
	j.npodsets = 1;
	j.submit = MU_TIME_NONE;
	j.runtime_estimate = 60 * MIN;
	/* preemptible, as the loader makes a training job: since round 12
	 * the hub keeps non-preemptible jobs within deserved, as the engine
	 * does, and these cases are about placement, limits and caps */
	j.preemptible = true;
	return j;
}

/* Adds cluster `name` with `nodes` nodes of `gpus` GPUs of `model`. */
static int32_t cluster(mu_fleet_t *f, const char *name, mu_tier_t tier,
		       int nodes, int gpus, const char *model,
		       mu_label_t *labels, size_t nlabels)
{
	mu_cluster_spec_t c = {.name = name, .labels = labels, .nlabels = nlabels,
			       .tier = tier, .cost_gpu_hour = tier == MU_TIER_PUBLIC ? 2.5 : 0};
	int32_t id = -1;
	if (mu_fleet_cluster_add(f, &c, &id))
		return -1;
	char nm[64];
	for (int i = 0; i < nodes; i++) {
		snprintf(nm, sizeof nm, "%s-n%d", name, i);
		mu_node_spec_t n = node(nm, 64, gpus, model);
		if (mu_fleet_node_upsert(f, id, &n))
			return -1;
	}
	return id;
}

static void hubq(mu_fleet_t *f, const char *name, int deserved_gpus, int limit_gpus)
{
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = name;
	q.deserved.v[MU_RES_GPU] = deserved_gpus * 1000LL;
	if (limit_gpus >= 0)
		q.limit.v[MU_RES_GPU] = limit_gpus * 1000LL;
	mu_fleet_queue_upsert(f, &q);
}

/* The three-cluster fleet most tests use: small (2 x 8 A100), big
 * (8 x 8 H100), cloud (public, 4 x 8 H100); one hub queue "team". */
static mu_fleet_t *fleet3(const mu_fleet_config_t *cfg)
{
	mu_fleet_t *f;
	if (mu_fleet_new(cfg, &f))
		return NULL;
	cluster(f, "small", MU_TIER_PRIVATE, 2, 8, "A100", NULL, 0);
	cluster(f, "big", MU_TIER_PRIVATE, 8, 8, "H100", NULL, 0);
	cluster(f, "cloud", MU_TIER_PUBLIC, 4, 8, "H100", NULL, 0);
	hubq(f, "team", 0, -1);
	return f;
}

static int32_t where(const mu_fleet_t *f, mu_id_t j)
{
	mu_fleet_job_info_t ji;
	if (mu_fleet_job_info(f, j, &ji))
		return -2;
	return ji.cluster;
}

static mu_fleet_why_t why(const mu_fleet_t *f, mu_id_t j)
{
	mu_fleet_job_info_t ji;
	mu_fleet_job_info(f, j, &ji);
	return ji.why;
}

static void test_whatif_leaves_nothing(mu_t_t *t)
{
	mu_engine_t *e;
	CHECK_EQ_INT(t, mu_engine_new(NULL, &e), MU_OK);
	for (int i = 0; i < 2; i++) {
		char nm[16];
		snprintf(nm, sizeof nm, "n%d", i);
		mu_node_spec_t n = node(nm, 64, 8, NULL);
		mu_engine_node_upsert(e, &n, NULL);
	}
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(e, &q);
	mu_podset_spec_t ps;
	mu_job_spec_t j = job("a", "q", &ps, 2, 8);
	j.preemptible = false;
	mu_whatif_t w;
	/* non-preemptible with no deserved quota: refused as in a cycle */
	CHECK_EQ_INT(t, mu_engine_job_whatif(e, &j, 0, true, &w), MU_OK);
	CHECK(t, !w.fits);
	CHECK_EQ_INT(t, w.reason.why, MU_WHY_OVER_QUOTA);
	j.preemptible = true;
	CHECK_EQ_INT(t, mu_engine_job_whatif(e, &j, 0, true, &w), MU_OK);
	CHECK(t, w.fits);
	mu_res_t alloc, used;
	mu_engine_totals(e, &alloc, &used);
	CHECK_EQ_INT(t, used.v[MU_RES_GPU], 0);
	CHECK_EQ_INT(t, mu_engine_njobs(e), 0);
	/* three pods of 8 GPUs: a gang of which two fit */
	mu_podset_spec_t ps3;
	mu_job_spec_t j3 = job("a", "q", &ps3, 3, 8);
	j3.preemptible = true;
	CHECK_EQ_INT(t, mu_engine_job_whatif(e, &j3, 0, true, &w), MU_OK);
	CHECK(t, !w.fits);
	CHECK_EQ_INT(t, w.reason.why, MU_WHY_GANG);
	CHECK_EQ_INT(t, w.reason.pods_fit, 2);
	CHECK_EQ_INT(t, w.expected_start, MU_TIME_NONE); /* never: too big */
	/* the real job of the same name still goes in and binds both pods */
	mu_id_t id;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &j, 0, &id), MU_OK);
	mu_decisions_t d;
	mu_decisions_init(&d);
	CHECK_EQ_INT(t, mu_engine_cycle(e, 0, &d), MU_OK);
	mu_job_info_t ji;
	mu_engine_job_info(e, id, &ji);
	CHECK_EQ_INT(t, ji.state, MU_JOB_RUNNING);
	/* now full: a one-GPU job does not fit, expected when `a` ends */
	mu_podset_spec_t ps1;
	mu_job_spec_t j1 = job("b", "q", &ps1, 1, 1);
	j1.preemptible = true;
	CHECK_EQ_INT(t, mu_engine_job_whatif(e, &j1, 10, true, &w), MU_OK);
	CHECK(t, !w.fits);
	CHECK_EQ_INT(t, w.expected_start, 60 * MIN);
	/* a bad spec is refused as submit would */
	j1.queue = "nope";
	CHECK_EQ_INT(t, mu_engine_job_whatif(e, &j1, 10, false, &w), MU_ENOENT);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

static void test_gang_goes_where_it_fits(mu_t_t *t)
{
	mu_fleet_t *f = fleet3(NULL);
	mu_podset_spec_t p1, p2, p3;
	mu_job_spec_t a = job("one-gpu", "team", &p1, 1, 1);
	mu_job_spec_t b = job("gang-4x8", "team", &p2, 4, 8);
	mu_job_spec_t c = job("gang-2x8", "team", &p3, 2, 8);
	mu_fleet_job_spec_t fa = {.job = &a}, fb = {.job = &b}, fc = {.job = &c};
	mu_id_t ia, ib, ic;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fa, 0, &ia), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fb, 0, &ib), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fc, 0, &ic), MU_OK);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, d.n, 3);
	/* tightest fit: the small cluster for one GPU */
	CHECK_EQ_INT(t, where(f, ia), mu_fleet_cluster_find(f, "small"));
	/* 32 GPUs in one gang: only the big private cluster holds it */
	CHECK_EQ_INT(t, where(f, ib), mu_fleet_cluster_find(f, "big"));
	/* 2 x 8: small has 15 free GPUs in aggregate but no two free
	 * nodes; it goes to big, never to small */
	CHECK_EQ_INT(t, where(f, ic), mu_fleet_cluster_find(f, "big"));
	for (size_t i = 0; i < d.n; i++)
		CHECK_EQ_INT(t, d.v[i].generation, 1);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

/* Finished jobs leave their cluster's engine for good (forgotten, their
 * ids reused): over 300 job lifetimes with about 10 live at once, no
 * cluster engine holds more than a few dozen job records, where keeping
 * them would hold all 300.  Every job is dispatched and finished. */
static void test_engine_records_follow_live_jobs(mu_t_t *t)
{
	enum { N = 300, LIVE = 10 };
	static mu_podset_spec_t ps[N];
	static mu_job_spec_t js[N];
	static mu_fleet_job_spec_t fs[N];
	static char names[N][24];
	mu_id_t ids[N];
	mu_fleet_t *f = fleet3(NULL);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	int dispatched = 0, finished = 0;
	int32_t most = 0;
	for (int i = 0; i < N + LIVE; i++) {
		mu_time_t now = (mu_time_t)i * MIN;
		if (i < N) {
			snprintf(names[i], sizeof names[i], "churn-%d", i);
			js[i] = job(names[i], "team", &ps[i], 1, 1 + i % 4);
			fs[i] = (mu_fleet_job_spec_t){.job = &js[i]};
			CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fs[i], now, &ids[i]), MU_OK);
		}
		d.n = 0;
		CHECK_EQ_INT(t, mu_fleet_dispatch(f, now, &d), MU_OK);
		dispatched += (int)d.n;
		if (i >= LIVE && mu_fleet_job_finish(f, ids[i - LIVE], now) == MU_OK)
			finished++;
		for (int32_t c = 0; c < 3; c++)
			if (mu_engine_njobs(mu_fleet_cluster_engine(f, c)) > most)
				most = mu_engine_njobs(mu_fleet_cluster_engine(f, c));
	}
	if (most > 4 * LIVE)
		fprintf(stderr, "fleet forget: a cluster engine held %d job records, "
			"%d jobs dispatched\n", (int)most, dispatched);
	CHECK_EQ_INT(t, dispatched, N);
	CHECK_EQ_INT(t, finished, N);
	CHECK(t, most > 0 && most <= 4 * LIVE);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

static void test_fits_nowhere_holds_nothing(mu_t_t *t)
{
	mu_fleet_t *f = fleet3(NULL);
	mu_podset_spec_t p1, p2, p3;
	mu_job_spec_t huge = job("huge", "team", &p1, 9, 8);   /* > any cluster */
	mu_job_spec_t fill = job("fill", "team", &p2, 8, 8);   /* all of big */
	mu_job_spec_t wait = job("wait", "team", &p3, 4, 8);   /* big later, or cloud */
	mu_fleet_job_spec_t fh = {.job = &huge}, ff = {.job = &fill}, fw = {.job = &wait};
	mu_id_t ih, i_f, iw;
	mu_fleet_job_submit(f, &ff, 0, &i_f);
	mu_fleet_job_submit(f, &fh, 0, &ih);
	mu_fleet_job_submit(f, &fw, 0, &iw);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, d.n, 1);
	CHECK_EQ_INT(t, why(f, ih), MU_FW_TOO_BIG);
	CHECK_EQ_INT(t, where(f, ih), -1);
	/* waits: private full, public not yet allowed */
	CHECK_EQ_INT(t, why(f, iw), MU_FW_BURST_WAIT);
	mu_fleet_queue_info_t qi;
	mu_fleet_queue_info(f, 0, &qi);
	CHECK_EQ_INT(t, qi.used.v[MU_RES_GPU], 64000); /* only `fill` counts */
	CHECK_EQ_INT(t, qi.queued, 2);
	/* explain: big says no fit now, expected when `fill` ends */
	mu_fleet_explain_t x[3];
	CHECK_EQ_INT(t, mu_fleet_job_explain(f, iw, 0, x), MU_OK);
	int32_t big = mu_fleet_cluster_find(f, "big");
	CHECK_STR(t, x[big].why, "no fit");
	CHECK_EQ_INT(t, x[big].whatif.expected_start, 60 * MIN);
	CHECK_STR(t, x[mu_fleet_cluster_find(f, "small")].why, "too big");
	CHECK_STR(t, x[mu_fleet_cluster_find(f, "cloud")].why, "burst wait");
	char line[1024];
	int want = mu_fleet_explain_format(f, x, 0, line, sizeof line);
	CHECK(t, want > 0 && (size_t)want < sizeof line);
	CHECK(t, strstr(line, "small: too big; big: no fit (0/8 nodes are available") != NULL);
	CHECK(t, strstr(line, "expected to fit in 1h") != NULL);
	CHECK(t, strstr(line, "cloud: burst wait") != NULL);
	char tiny[8];
	CHECK_EQ_INT(t, mu_fleet_explain_format(f, x, 0, tiny, sizeof tiny), want);
	CHECK_EQ_INT(t, strlen(tiny), 7);
	/* fill ends: wait goes to big (private) */
	CHECK_EQ_INT(t, mu_fleet_job_finish(f, i_f, 30 * MIN), MU_OK);
	d.n = 0;
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 30 * MIN, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, iw), big);
	CHECK_EQ_INT(t, why(f, ih), MU_FW_TOO_BIG);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

static void test_burst_after_wait_or_priority(mu_t_t *t)
{
	mu_fleet_config_t cfg;
	mu_fleet_config_defaults(&cfg);
	cfg.burst_after = 10 * MIN;
	cfg.burst_priority = 100;
	mu_fleet_t *f = fleet3(&cfg);
	mu_podset_spec_t p1, p2, p3, p4, p5;
	mu_job_spec_t fb = job("fill-big", "team", &p1, 8, 8);
	mu_job_spec_t fs = job("fill-small", "team", &p2, 2, 8);
	mu_job_spec_t w = job("waiter", "team", &p3, 1, 8);
	/* the same shape: skipped within a pass, with the same reason */
	mu_job_spec_t w2 = job("waiter-2", "team", &p5, 1, 8);
	mu_fleet_job_spec_t s5 = {.job = &w2};
	mu_id_t i5;
	mu_job_spec_t v = job("vip", "team", &p4, 1, 8);
	v.priority = 100;
	mu_fleet_job_spec_t s1 = {.job = &fb}, s2 = {.job = &fs}, s3 = {.job = &w}, s4 = {.job = &v};
	mu_id_t i3, i4;
	mu_fleet_job_submit(f, &s1, 0, NULL);
	mu_fleet_job_submit(f, &s2, 0, NULL);
	mu_fleet_job_submit(f, &s3, 0, &i3);
	mu_fleet_job_submit(f, &s5, 0, &i5);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, i3), -1);
	CHECK_EQ_INT(t, why(f, i3), MU_FW_BURST_WAIT);
	CHECK_EQ_INT(t, why(f, i5), MU_FW_BURST_WAIT);
	/* a priority class bursts at once */
	mu_fleet_job_submit(f, &s4, MIN, &i4);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, MIN, &d), MU_OK);
	int32_t cloud = mu_fleet_cluster_find(f, "cloud");
	CHECK_EQ_INT(t, where(f, i4), cloud);
	CHECK_EQ_INT(t, where(f, i3), -1);
	/* just before the wait: still waits; at it, goes public */
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 10 * MIN - 1, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, i3), -1);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 10 * MIN, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, i3), cloud);
	CHECK_EQ_INT(t, where(f, i5), cloud);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

/* The daemon lowers the burst priority when it reads the burst
 * PriorityClass's value (--burst-priority-class): a job that waited for
 * the burst wait is tried again at once (the epoch moved). */
static void test_burst_priority_set(mu_t_t *t)
{
	mu_fleet_config_t cfg;
	mu_fleet_config_defaults(&cfg);
	mu_fleet_t *f = fleet3(&cfg);
	mu_podset_spec_t p1, p2, p3;
	mu_job_spec_t fb = job("fill-big", "team", &p1, 8, 8);
	mu_job_spec_t fs = job("fill-small", "team", &p2, 2, 8);
	mu_job_spec_t w = job("waiter", "team", &p3, 1, 8);
	fb.priority = fs.priority = 100; /* the fills go first */
	w.priority = 50;
	mu_fleet_job_spec_t s1 = {.job = &fb}, s2 = {.job = &fs}, s3 = {.job = &w};
	mu_id_t i3;
	mu_fleet_job_submit(f, &s1, 0, NULL);
	mu_fleet_job_submit(f, &s2, 0, NULL);
	mu_fleet_job_submit(f, &s3, 0, &i3);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, why(f, i3), MU_FW_BURST_WAIT);
	mu_fleet_set_burst_priority(f, 51);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 1, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, i3), -1);
	mu_fleet_set_burst_priority(f, 50);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 2, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, i3), mu_fleet_cluster_find(f, "cloud"));
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

static void test_selector_and_locality(mu_t_t *t)
{
	mu_fleet_t *f;
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &f), MU_OK);
	mu_label_t eu[] = {{"region", "eu"}};
	mu_label_t us[] = {{"region", "us"}, {"data.muster.io/imagenet", "true"}};
	int32_t ceu = cluster(f, "eu", MU_TIER_PRIVATE, 2, 8, "A100", eu, 1);
	int32_t cus = cluster(f, "us", MU_TIER_PRIVATE, 4, 8, "A100", us, 2);
	hubq(f, "team", 0, -1);
	mu_podset_spec_t p1, p2, p3, p4;
	mu_job_spec_t a = job("a", "team", &p1, 1, 1);
	mu_job_spec_t b = job("b", "team", &p2, 1, 1);
	mu_job_spec_t c = job("c", "team", &p3, 1, 1);
	mu_job_spec_t dd = job("d", "team", &p4, 1, 1);
	mu_label_t sel_us[] = {{"region", "us"}};
	mu_label_t sel_mars[] = {{"region", "mars"}};
	mu_label_t loc[] = {{"data.muster.io/imagenet", "true"}};
	mu_fleet_job_spec_t fa = {.job = &a};                       /* tightest: eu */
	mu_fleet_job_spec_t fb = {.job = &b, .cluster_selector = sel_us, .ncluster_selector = 1};
	mu_fleet_job_spec_t fc = {.job = &c, .locality = loc, .nlocality = 1};
	mu_fleet_job_spec_t fd = {.job = &dd, .cluster_selector = sel_mars, .ncluster_selector = 1};
	mu_id_t ia, ib, ic, id;
	mu_fleet_job_submit(f, &fa, 0, &ia);
	mu_fleet_job_submit(f, &fb, 0, &ib);
	mu_fleet_job_submit(f, &fc, 0, &ic);
	mu_fleet_job_submit(f, &fd, 0, &id);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, ia), ceu);
	CHECK_EQ_INT(t, where(f, ib), cus);
	CHECK_EQ_INT(t, where(f, ic), cus); /* locality beats tightest fit */
	CHECK_EQ_INT(t, where(f, id), -1);
	CHECK_EQ_INT(t, why(f, id), MU_FW_NO_CLUSTER);
	CHECK_STR(t, mu_fleet_why_name(MU_FW_NO_CLUSTER), "NoMatchingCluster");
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

/* A label set after the cluster was added (the dispatcher's kinds found by
 * discovery): a job whose selector needs it waits NoMatchingCluster, goes
 * once the label is there (the next pass, though its failure was cached),
 * and a removed or changed label keeps the next such job out again. */
static void test_cluster_label_set(mu_t_t *t)
{
	mu_fleet_t *f;
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &f), MU_OK);
	mu_label_t eu[] = {{"region", "eu"}};
	int32_t c = cluster(f, "eu", MU_TIER_PRIVATE, 2, 8, "A100", eu, 1);
	hubq(f, "team", 0, -1);
	mu_podset_spec_t p1, p2;
	mu_job_spec_t a = job("a", "team", &p1, 1, 1), b = job("b", "team", &p2, 1, 1);
	mu_label_t sel[] = {{"kinds.muster.io/JobSet", "true"}, {"region", "eu"}};
	mu_fleet_job_spec_t fa = {.job = &a, .cluster_selector = sel, .ncluster_selector = 2};
	mu_fleet_job_spec_t fb = {.job = &b, .cluster_selector = sel, .ncluster_selector = 2};
	mu_id_t ia, ib;
	mu_fleet_job_submit(f, &fa, 0, &ia);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, why(f, ia), MU_FW_NO_CLUSTER);
	CHECK_EQ_INT(t, mu_fleet_cluster_set_label(f, c, "kinds.muster.io/JobSet", "true"), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 1, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, ia), c);
	/* changed, then removed: the next job is kept out; region stays */
	CHECK_EQ_INT(t, mu_fleet_cluster_set_label(f, c, "kinds.muster.io/JobSet", "false"), MU_OK);
	mu_fleet_job_submit(f, &fb, 2, &ib);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 2, &d), MU_OK);
	CHECK_EQ_INT(t, why(f, ib), MU_FW_NO_CLUSTER);
	CHECK_EQ_INT(t, mu_fleet_cluster_set_label(f, c, "kinds.muster.io/JobSet", NULL), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_cluster_set_label(f, c, "kinds.muster.io/JobSet", NULL), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 3, &d), MU_OK);
	CHECK_EQ_INT(t, why(f, ib), MU_FW_NO_CLUSTER);
	CHECK_EQ_INT(t, mu_fleet_cluster_set_label(f, c, "kinds.muster.io/JobSet", "true"), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 4, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, ib), c);
	CHECK_EQ_INT(t, mu_fleet_cluster_set_label(f, 7, "x", "y"), MU_ENOENT);
	CHECK_EQ_INT(t, mu_fleet_cluster_set_label(f, c, "", "y"), MU_EINVAL);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

/* A Cluster relabelled on the hub (mu_fleet_cluster_update): a job whose
 * selector it did not match goes once it does, though its failure was
 * cached; a tier made public keeps the next job out until it may burst;
 * a bad spec changes nothing. */
static void test_cluster_update(mu_t_t *t)
{
	mu_fleet_t *f;
	mu_fleet_config_t fc;
	mu_fleet_config_defaults(&fc);
	fc.burst_after = 100;
	CHECK_EQ_INT(t, mu_fleet_new(&fc, &f), MU_OK);
	mu_label_t eu[] = {{"region", "eu"}};
	int32_t c = cluster(f, "eu", MU_TIER_PRIVATE, 2, 8, "A100", eu, 1);
	hubq(f, "team", 0, -1);
	mu_podset_spec_t p1, p2;
	mu_job_spec_t a = job("a", "team", &p1, 1, 1), b = job("b", "team", &p2, 1, 1);
	mu_label_t sel[] = {{"region", "us"}};
	mu_fleet_job_spec_t fa = {.job = &a, .cluster_selector = sel, .ncluster_selector = 1};
	mu_fleet_job_spec_t fb = {.job = &b};
	mu_id_t ia, ib;
	mu_fleet_job_submit(f, &fa, 0, &ia);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, why(f, ia), MU_FW_NO_CLUSTER);
	mu_label_t us[] = {{"region", "us"}, {"provider", "onprem"}};
	mu_cluster_spec_t cs = {.name = "ignored", .labels = us, .nlabels = 2,
				.tier = MU_TIER_PRIVATE};
	CHECK_EQ_INT(t, mu_fleet_cluster_update(f, c, &cs), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 1, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, ia), c);
	/* public now: a new job waits for its burst time (100) */
	cs.tier = MU_TIER_PUBLIC;
	cs.cost_gpu_hour = 2.5;
	CHECK_EQ_INT(t, mu_fleet_cluster_update(f, c, &cs), MU_OK);
	mu_fleet_job_submit(f, &fb, 2, &ib);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 3, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, ib), -1);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 200, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, ib), c);
	/* bad specs: refused, nothing changed */
	mu_label_t bad[] = {{"region", NULL}};
	mu_cluster_spec_t bs = {.labels = bad, .nlabels = 1, .tier = MU_TIER_PRIVATE};
	CHECK_EQ_INT(t, mu_fleet_cluster_update(f, c, &bs), MU_EINVAL);
	bs = (mu_cluster_spec_t){.tier = MU_TIER_PRIVATE, .cost_gpu_hour = -1};
	CHECK_EQ_INT(t, mu_fleet_cluster_update(f, c, &bs), MU_EINVAL);
	CHECK_EQ_INT(t, mu_fleet_cluster_update(f, 9, &cs), MU_ENOENT);
	CHECK_EQ_INT(t, mu_fleet_cluster_update(f, c, NULL), MU_EINVAL);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

/* Caps on jobs (muster.io/cluster-caps CL=jobs:N): a cap of one job on
 * big and none on small holds four 1-GPU jobs to one at a time, whatever
 * their pods. */
static void test_queue_cap_jobs(mu_t_t *t)
{
	mu_fleet_t *f;
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &f), MU_OK);
	int32_t small = cluster(f, "small", MU_TIER_PRIVATE, 2, 8, "A100", NULL, 0);
	int32_t big = cluster(f, "big", MU_TIER_PRIVATE, 8, 8, "H100", NULL, 0);
	hubq(f, "team", 0, -1);
	CHECK_EQ_INT(t, mu_fleet_queue_cap_jobs(f, "team", small, 0), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_queue_cap_jobs(f, "team", big, 1), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_queue_cap_jobs(f, "team", big, -2), MU_EINVAL);
	CHECK_EQ_INT(t, mu_fleet_queue_cap_jobs(f, "nope", big, 1), MU_ENOENT);
	mu_podset_spec_t ps[3];
	mu_job_spec_t js[3];
	mu_fleet_job_spec_t fs[3];
	mu_id_t id[3];
	static const char *const names[3] = {"a", "b", "c"};
	for (int i = 0; i < 3; i++) {
		js[i] = job(names[i], "team", &ps[i], 2, 1); /* two pods: a job is one */
		js[i].submit = i;
		fs[i] = (mu_fleet_job_spec_t){.job = &js[i]};
		mu_fleet_job_submit(f, &fs[i], 0, &id[i]);
	}
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, id[0]), big);
	CHECK_EQ_INT(t, where(f, id[1]), -1);
	CHECK_EQ_INT(t, why(f, id[1]), MU_FW_CAP);
	mu_fleet_job_finish(f, id[0], MIN);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, MIN, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, id[1]), big);
	CHECK_EQ_INT(t, where(f, id[2]), -1);
	/* lifted: the third goes too */
	CHECK_EQ_INT(t, mu_fleet_queue_cap_jobs(f, "team", big, -1), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 2 * MIN, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, id[2]), big);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

static void test_queue_limit_cap_and_share(mu_t_t *t)
{
	mu_fleet_t *f = fleet3(NULL);
	hubq(f, "capped", 0, 8);     /* at most 8 GPUs fleet-wide */
	mu_res_t cap;
	for (int r = 0; r < MU_RES_MAX; r++)
		cap.v[r] = MU_RES_UNLIMITED;
	cap.v[MU_RES_GPU] = 0;       /* nothing on small */
	CHECK_EQ_INT(t, mu_fleet_queue_cap(f, "capped", mu_fleet_cluster_find(f, "small"), &cap), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_queue_cap(f, "nope", 0, &cap), MU_ENOENT);
	mu_podset_spec_t p1, p2;
	mu_job_spec_t a = job("a", "capped", &p1, 1, 8);
	mu_job_spec_t b = job("b", "capped", &p2, 1, 8);
	mu_fleet_job_spec_t fa = {.job = &a}, fb = {.job = &b};
	mu_id_t ia, ib;
	mu_fleet_job_submit(f, &fa, 0, &ia);
	mu_fleet_job_submit(f, &fb, 0, &ib);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	/* small would be tighter, but the cap keeps it off */
	CHECK_EQ_INT(t, where(f, ia), mu_fleet_cluster_find(f, "big"));
	CHECK_EQ_INT(t, why(f, ib), MU_FW_QUEUE_LIMIT);
	mu_fleet_job_finish(f, ia, MIN);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, MIN, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, ib), mu_fleet_cluster_find(f, "big"));
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);

	/* fair share: two queues deserving 8 GPUs each share 16 GPUs of the
	 * small cluster, though one submitted all its jobs first */
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &f), MU_OK);
	cluster(f, "small", MU_TIER_PRIVATE, 2, 8, "A100", NULL, 0);
	hubq(f, "x", 8, -1);
	hubq(f, "y", 8, -1);
	mu_podset_spec_t ps[24];
	mu_job_spec_t js[24];
	mu_fleet_job_spec_t fs[24];
	char names[24][16];
	for (int i = 0; i < 24; i++) {
		snprintf(names[i], sizeof names[i], "j%d", i);
		js[i] = job(names[i], i < 12 ? "x" : "y", &ps[i], 1, 1);
		js[i].submit = i;
		fs[i] = (mu_fleet_job_spec_t){.job = &js[i]};
		mu_fleet_job_submit(f, &fs[i], 100, NULL);
	}
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 100, &d), MU_OK);
	CHECK_EQ_INT(t, d.n, 16);
	mu_fleet_queue_info_t qx, qy;
	mu_fleet_queue_info(f, 0, &qx);
	mu_fleet_queue_info(f, 1, &qy);
	CHECK_EQ_INT(t, qx.used.v[MU_RES_GPU], 8000);
	CHECK_EQ_INT(t, qy.used.v[MU_RES_GPU], 8000);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

/* hubq_under: a hub queue NAME under PARENT (NULL: a root). */
static void hubq_under(mu_fleet_t *f, const char *name, const char *parent, int deserved_gpus,
		       int limit_gpus)
{
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = name;
	q.parent = parent;
	q.deserved.v[MU_RES_GPU] = deserved_gpus * 1000LL;
	if (limit_gpus >= 0)
		q.limit.v[MU_RES_GPU] = limit_gpus * 1000LL;
	mu_fleet_queue_upsert(f, &q);
}

/* Hierarchical hub queues, as the engine's tree: a parent's limit holds
 * its children together, and fair share goes to the parents first, then
 * among each parent's children (KAI-Scheduler's and Volcano's hierarchical
 * queues divide the same way). */
static void test_queue_tree(mu_t_t *t)
{
	mu_fleet_t *f;
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &f), MU_OK);
	cluster(f, "big", MU_TIER_PRIVATE, 8, 8, "H100", NULL, 0);
	/* the child comes first: its parent counts once it is defined */
	hubq_under(f, "a", "org", 0, -1);
	hubq_under(f, "org", NULL, 0, 8);
	hubq_under(f, "b", "org", 0, -1);
	mu_podset_spec_t ps[3];
	mu_job_spec_t js[3];
	mu_fleet_job_spec_t fs[3];
	mu_id_t id[3];
	static const char *const nm[3] = {"a0", "a1", "b0"};
	for (int i = 0; i < 3; i++) {
		js[i] = job(nm[i], i < 2 ? "a" : "b", &ps[i], 1, 4);
		fs[i] = (mu_fleet_job_spec_t){.job = &js[i]};
		mu_fleet_job_submit(f, &fs[i], 0, &id[i]);
	}
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	/* 8 GPUs for org as a whole: two of the three 4-GPU jobs */
	CHECK_EQ_INT(t, d.n, 2);
	int limited = 0;
	for (int i = 0; i < 3; i++)
		limited += why(f, id[i]) == MU_FW_QUEUE_LIMIT;
	CHECK_EQ_INT(t, limited, 1);
	mu_fleet_queue_info_t qi;
	CHECK_EQ_INT(t, mu_fleet_queue_info(f, 1, &qi), MU_OK);
	CHECK(t, !strcmp(qi.name, "org"));
	CHECK_EQ_INT(t, qi.used.v[MU_RES_GPU], 8000);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);

	/* fair share by parents: p1 (one child) and p2 (two children) deserve
	 * 8 GPUs each of 16; p2's 8 split 4 and 4, though every child has 12
	 * jobs (flat queues would give each child a third) */
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &f), MU_OK);
	cluster(f, "small", MU_TIER_PRIVATE, 2, 8, "A100", NULL, 0);
	hubq_under(f, "p1", NULL, 8, -1);
	hubq_under(f, "p2", NULL, 8, -1);
	hubq_under(f, "a1", "p1", 0, -1);
	hubq_under(f, "b1", "p2", 0, -1);
	hubq_under(f, "b2", "p2", 0, -1);
	mu_podset_spec_t qs[36];
	mu_job_spec_t ks[36];
	mu_fleet_job_spec_t gs[36];
	char names[36][16];
	static const char *const leaf[3] = {"a1", "b1", "b2"};
	for (int i = 0; i < 36; i++) {
		snprintf(names[i], sizeof names[i], "j%d", i);
		ks[i] = job(names[i], leaf[i / 12], &qs[i], 1, 1);
		ks[i].submit = i;
		gs[i] = (mu_fleet_job_spec_t){.job = &ks[i]};
		mu_fleet_job_submit(f, &gs[i], 100, NULL);
	}
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 100, &d), MU_OK);
	CHECK_EQ_INT(t, d.n, 16);
	int64_t want[5] = {8000, 8000, 8000, 4000, 4000};
	for (int32_t i = 0; i < 5; i++) {
		CHECK_EQ_INT(t, mu_fleet_queue_info(f, i, &qi), MU_OK);
		CHECK_EQ_INT(t, qi.used.v[MU_RES_GPU], want[i]);
	}
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

static void test_requeue_and_lost_cluster(mu_t_t *t)
{
	mu_fleet_t *f = fleet3(NULL);
	mu_podset_spec_t p1;
	mu_job_spec_t a = job("a", "team", &p1, 1, 8);
	mu_fleet_job_spec_t fa = {.job = &a};
	mu_id_t ia;
	mu_fleet_job_submit(f, &fa, 0, &ia);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	mu_fleet_dispatch(f, 0, &d);
	int32_t small = mu_fleet_cluster_find(f, "small");
	CHECK_EQ_INT(t, where(f, ia), small);
	/* the cluster is lost: requeued, sent elsewhere with generation 2 */
	CHECK_EQ_INT(t, mu_fleet_cluster_lost(f, small, MIN), 1);
	CHECK_EQ_INT(t, where(f, ia), -1);
	d.n = 0;
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, MIN, &d), MU_OK);
	CHECK_EQ_INT(t, d.n, 1);
	CHECK_EQ_INT(t, d.v[0].generation, 2);
	CHECK_EQ_INT(t, where(f, ia), mu_fleet_cluster_find(f, "big"));
	/* the small cluster comes back empty; a requeue sends it back there
	 * under a new name in the model (generation 3) */
	CHECK_EQ_INT(t, mu_fleet_cluster_set_state(f, small, MU_CLUSTER_READY), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_requeue(f, ia, 2 * MIN), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_requeue(f, ia, 2 * MIN), MU_ESTATE);
	d.n = 0;
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 2 * MIN, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, ia), small);
	CHECK_EQ_INT(t, d.v[0].generation, 3);
	/* draining: no new jobs there */
	CHECK_EQ_INT(t, mu_fleet_cluster_set_state(f, small, MU_CLUSTER_DRAINING), MU_OK);
	mu_podset_spec_t p2;
	mu_job_spec_t b = job("b", "team", &p2, 1, 1);
	mu_fleet_job_spec_t fb = {.job = &b};
	mu_id_t ib;
	mu_fleet_job_submit(f, &fb, 3 * MIN, &ib);
	mu_fleet_dispatch(f, 3 * MIN, &d);
	CHECK_EQ_INT(t, where(f, ib), mu_fleet_cluster_find(f, "big"));
	CHECK_EQ_INT(t, where(f, ia), small); /* what runs stays */
	CHECK_EQ_INT(t, mu_fleet_job_finish(f, ia, 4 * MIN), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_finish(f, ia, 4 * MIN), MU_ESTATE);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

/* A daemon's record from before a restart: a queued job is adopted on the
 * cluster it names, with its generation, and holds that cluster's room and
 * its queue's quota without a decision; the next dispatch goes on from
 * that generation. */
static void test_adopt(mu_t_t *t)
{
	mu_fleet_t *f = fleet3(NULL);
	int32_t small = mu_fleet_cluster_find(f, "small");
	mu_podset_spec_t p1, p2;
	mu_job_spec_t a = job("a", "team", &p1, 2, 8); /* fills small */
	mu_job_spec_t b = job("b", "team", &p2, 1, 8);
	mu_fleet_job_spec_t fa = {.job = &a}, fb = {.job = &b};
	mu_id_t ia, ib;
	mu_fleet_job_submit(f, &fa, 0, &ia);
	mu_fleet_job_submit(f, &fb, 0, &ib);
	CHECK_EQ_INT(t, mu_fleet_job_adopt(f, ia, small, 4, 0), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_adopt(f, ia, small, 4, 0), MU_ESTATE);
	CHECK_EQ_INT(t, mu_fleet_job_adopt(f, ib, 99, 1, 0), MU_ENOENT);
	mu_fleet_job_info_t ji;
	mu_fleet_job_info(f, ia, &ji);
	CHECK_EQ_INT(t, ji.state, MU_FJ_DISPATCHED);
	CHECK_EQ_INT(t, ji.cluster, small);
	CHECK_EQ_INT(t, (int)ji.generation, 4);
	mu_fleet_queue_info_t qi;
	mu_fleet_queue_info(f, 0, &qi);
	CHECK_EQ_INT(t, qi.used.v[MU_RES_GPU], 16000);
	/* small is full in the model: b goes to big, and no decision names a */
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, MIN, &d), MU_OK);
	CHECK_EQ_INT(t, d.n, 1);
	CHECK_EQ_INT(t, d.v[0].job, ib);
	CHECK_EQ_INT(t, where(f, ib), mu_fleet_cluster_find(f, "big"));
	/* requeued, a goes out again with generation 5 */
	CHECK_EQ_INT(t, mu_fleet_job_requeue(f, ia, 2 * MIN), MU_OK);
	d.n = 0;
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 2 * MIN, &d), MU_OK);
	CHECK_EQ_INT(t, d.n, 1);
	CHECK_EQ_INT(t, (int)d.v[0].generation, 5);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

static void test_bad_input(mu_t_t *t)
{
	mu_fleet_t *f = fleet3(NULL);
	/* two hub jobs of one name (two namespaces, say) both run */
	mu_podset_spec_t pa, pb;
	mu_job_spec_t ja = job("same", "team", &pa, 1, 1), jb = job("same", "team", &pb, 1, 1);
	mu_fleet_job_spec_t fa = {.job = &ja}, fb = {.job = &jb};
	mu_id_t ia, ib;
	mu_fleet_job_submit(f, &fa, 0, &ia);
	mu_fleet_job_submit(f, &fb, 0, &ib);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, d.n, 2);
	CHECK_EQ_INT(t, where(f, ia), where(f, ib));
	mu_fleet_decisions_release(&d);
	mu_cluster_spec_t c = {.name = "small"};
	CHECK_EQ_INT(t, mu_fleet_cluster_add(f, &c, NULL), MU_EEXIST);
	c.name = "";
	CHECK_EQ_INT(t, mu_fleet_cluster_add(f, &c, NULL), MU_EINVAL);
	c.name = "x";
	c.cost_gpu_hour = -1;
	CHECK_EQ_INT(t, mu_fleet_cluster_add(f, &c, NULL), MU_EINVAL);
	mu_tier_t tier;
	CHECK_EQ_INT(t, mu_tier_parse("public", &tier), MU_OK);
	CHECK_EQ_INT(t, tier, MU_TIER_PUBLIC);
	CHECK_EQ_INT(t, mu_tier_parse("moon", &tier), MU_EINVAL);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "child";
	q.parent = "child"; /* itself */
	CHECK_EQ_INT(t, mu_fleet_queue_upsert(f, &q), MU_EINVAL);
	q.parent = "team";
	CHECK_EQ_INT(t, mu_fleet_queue_upsert(f, &q), MU_OK);
	q.name = "team"; /* team under child under team: a loop */
	q.parent = "child";
	CHECK_EQ_INT(t, mu_fleet_queue_upsert(f, &q), MU_EINVAL);
	mu_podset_spec_t p;
	mu_job_spec_t j = job("a", "nope", &p, 1, 1);
	mu_fleet_job_spec_t fj = {.job = &j};
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fj, 0, NULL), MU_ENOENT);
	fj.job = NULL;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fj, 0, NULL), MU_EINVAL);
	CHECK_EQ_INT(t, mu_fleet_job_finish(f, 7, 0), MU_ENOENT);
	CHECK_EQ_INT(t, mu_fleet_node_upsert(f, 9, NULL), MU_ENOENT);
	mu_fleet_free(f);
}

/* Pods the fleet did not send (made on the worker directly) count in its
 * model node by node: small's first node full of them, a 2 x 8 gang that
 * small would take (the tightest fit) goes to big, and one that may use
 * only small waits there "no fit" (not "too big": small empty holds it).
 * When they end (the node upserted with nothing used) small takes it. */
static void test_foreign_pods_count(mu_t_t *t)
{
	mu_fleet_t *f = fleet3(NULL);
	int32_t small = mu_fleet_cluster_find(f, "small");
	int32_t big = mu_fleet_cluster_find(f, "big");
	mu_node_spec_t n0 = node("small-n0", 64, 8, "A100");
	mu_res_t used = {{0}};
	used.v[MU_RES_GPU] = 8;
	used.v[MU_RES_CPU] = 8000;
	used.v[MU_RES_PODS] = 2;
	CHECK_EQ_INT(t, mu_fleet_node_upsert_used(f, small, &n0, &used), MU_OK);
	const mu_engine_t *e = mu_fleet_cluster_engine(f, small);
	mu_res_t alloc;
	mu_engine_totals(e, &alloc, NULL);
	CHECK_EQ_INT(t, alloc.v[MU_RES_GPU], 8000); /* one node's GPUs left */
	mu_podset_spec_t p1, p2;
	mu_job_spec_t a = job("two-nodes", "team", &p1, 2, 8);
	mu_job_spec_t b = job("one-node", "team", &p2, 1, 8);
	mu_fleet_job_spec_t fa = {.job = &a}, fb = {.job = &b};
	mu_id_t ia, ib;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fa, 0, &ia), MU_OK);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, ia), big);
	/* explain: small is not too big (its nodes are 8-GPU nodes), it
	 * does not fit now */
	mu_fleet_explain_t x[3];
	mu_podset_spec_t p3;
	mu_job_spec_t c = job("waits", "team", &p3, 2, 8);
	mu_fleet_job_spec_t fc = {.job = &c, .cluster_selector = NULL};
	mu_label_t only = {"muster.io/cluster-name", "small"};
	mu_fleet_cluster_set_label(f, small, only.key, only.value);
	fc.cluster_selector = &only;
	fc.ncluster_selector = 1;
	mu_id_t ic;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fc, 0, &ic), MU_OK);
	d.n = 0;
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, ic), -1);
	CHECK_EQ_INT(t, why(f, ic), MU_FW_NO_FIT);
	CHECK_EQ_INT(t, mu_fleet_job_explain(f, ic, 0, x), MU_OK);
	CHECK_STR(t, x[small].why, "no fit");
	/* the pods end: the node again with nothing used; the waiting gang
	 * goes to small */
	CHECK_EQ_INT(t, mu_fleet_node_upsert_used(f, small, &n0, NULL), MU_OK);
	d.n = 0;
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, ic), small);
	/* small full with the fleet's own gang: other pods that cannot be
	 * there (the model holds the devices) take what they can, and no
	 * error; one-node waits nowhere else than big */
	CHECK_EQ_INT(t, mu_fleet_node_upsert_used(f, small, &n0, &used), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fb, 0, &ib), MU_OK);
	d.n = 0;
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, ib), big);
	mu_res_t bad = {{0}};
	bad.v[MU_RES_CPU] = -1;
	CHECK_EQ_INT(t, mu_fleet_node_upsert_used(f, small, &n0, &bad), MU_ERANGE);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

/* A group's minResources (the coscheduling PodGroup's) are checked
 * against each cluster's free capacity in aggregate: 20 GPUs of
 * minResources keep a 1-GPU pod off small (16 GPUs) and off cloud's
 * burst, and it goes to big; 100 GPUs keep it everywhere, with the reason
 * MinResourcesNotFree and "min resources not free" per cluster. */
static void test_min_resources(mu_t_t *t)
{
	mu_fleet_t *f = fleet3(NULL);
	mu_podset_spec_t p1, p2;
	mu_job_spec_t a = job("minres-20", "team", &p1, 1, 1);
	mu_job_spec_t b = job("minres-100", "team", &p2, 1, 1);
	mu_res_t m20 = {{0}}, m100 = {{0}};
	m20.v[MU_RES_GPU] = 20000;
	m100.v[MU_RES_GPU] = 100000;
	mu_fleet_job_spec_t fa = {.job = &a, .min_resources = &m20};
	mu_fleet_job_spec_t fb = {.job = &b, .min_resources = &m100};
	mu_id_t ia, ib;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fa, 0, &ia), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fb, 0, &ib), MU_OK);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, where(f, ia), mu_fleet_cluster_find(f, "big"));
	CHECK_EQ_INT(t, where(f, ib), -1);
	CHECK_EQ_INT(t, why(f, ib), MU_FW_MIN_RESOURCES);
	CHECK_STR(t, mu_fleet_why_name(MU_FW_MIN_RESOURCES), "MinResourcesNotFree");
	mu_fleet_explain_t x[3];
	CHECK_EQ_INT(t, mu_fleet_job_explain(f, ib, 0, x), MU_OK);
	CHECK_STR(t, x[mu_fleet_cluster_find(f, "small")].why, "min resources not free");
	CHECK_STR(t, x[mu_fleet_cluster_find(f, "big")].why, "min resources not free");
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

/* Expected starts from node-level reservations (round 13): on a cluster
 * of two 8-GPU nodes, each holds a 4-GPU job ending at 1h and one ending
 * at 3h.  In aggregate 8 GPUs are free at 1h, but on no one node: an
 * 8-GPU pod waits until 3h, as the engine's reservation replay says. */
static void test_expected_node_level(mu_t_t *t)
{
	mu_fleet_t *f;
	mu_fleet_new(NULL, &f);
	mu_cluster_spec_t cs = {.name = "c"};
	int32_t c;
	CHECK_EQ_INT(t, mu_fleet_cluster_add(f, &cs, &c), MU_OK);
	mu_label_t lab[2] = {{"host", "n0"}, {"host", "n1"}};
	for (int i = 0; i < 2; i++) {
		mu_node_spec_t n = node(lab[i].value, 64, 8, NULL);
		n.labels = &lab[i];
		n.nlabels = 1;
		CHECK_EQ_INT(t, mu_fleet_node_upsert(f, c, &n), MU_OK);
	}
	hubq(f, "team", 0, -1);
	mu_podset_spec_t ps[5];
	mu_job_spec_t j[5];
	mu_fleet_job_spec_t fs[5];
	static const char *const names[4] = {"a0", "a1", "c0", "c1"};
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	for (int i = 0; i < 4; i++) {
		j[i] = job(names[i], "team", &ps[i], 1, 4);
		j[i].runtime_estimate = (i < 2 ? 60 : 180) * MIN;
		ps[i].node_selector = &lab[i % 2];
		ps[i].nnode_selector = 1;
		fs[i] = (mu_fleet_job_spec_t){.job = &j[i]};
		mu_id_t id;
		CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fs[i], 0, &id), MU_OK);
	}
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, d.n, 4);
	j[4] = job("big", "team", &ps[4], 1, 8);
	fs[4] = (mu_fleet_job_spec_t){.job = &j[4]};
	mu_id_t ib;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fs[4], 0, &ib), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, why(f, ib), MU_FW_NO_FIT);
	mu_fleet_explain_t x[1];
	CHECK_EQ_INT(t, mu_fleet_job_explain(f, ib, 0, x), MU_OK);
	CHECK_EQ_INT(t, x[0].whatif.expected_start, 180 * MIN);
	char line[512];
	mu_fleet_explain_format(f, x, 0, line, sizeof line);
	CHECK(t, strstr(line, "expected to fit in 3h") != NULL);
	/* a 4-GPU pod fits at 1h, on either node */
	mu_podset_spec_t p4;
	mu_job_spec_t j4 = job("four", "fleet", &p4, 1, 4); /* the model's one queue */
	mu_whatif_t w;
	CHECK_EQ_INT(t, mu_engine_job_whatif((mu_engine_t *)mu_fleet_cluster_engine(f, c), &j4, 0,
					     true, &w), MU_OK);
	CHECK_EQ_INT(t, w.expected_start, 60 * MIN);
	/* nothing was reserved: the fill of one node is still free to others */
	mu_res_t alloc, used;
	mu_engine_totals(mu_fleet_cluster_engine(f, c), &alloc, &used);
	CHECK_EQ_INT(t, used.v[MU_RES_GPU], 16000);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_whatif_leaves_nothing);
	MU_RUN(&t, test_gang_goes_where_it_fits);
	MU_RUN(&t, test_fits_nowhere_holds_nothing);
	MU_RUN(&t, test_burst_after_wait_or_priority);
	MU_RUN(&t, test_burst_priority_set);
	MU_RUN(&t, test_selector_and_locality);
	MU_RUN(&t, test_cluster_label_set);
	MU_RUN(&t, test_cluster_update);
	MU_RUN(&t, test_queue_limit_cap_and_share);
	MU_RUN(&t, test_queue_cap_jobs);
	MU_RUN(&t, test_queue_tree);
	MU_RUN(&t, test_requeue_and_lost_cluster);
	MU_RUN(&t, test_adopt);
	MU_RUN(&t, test_bad_input);
	MU_RUN(&t, test_engine_records_follow_live_jobs);
	MU_RUN(&t, test_foreign_pods_count);
	MU_RUN(&t, test_min_resources);
	MU_RUN(&t, test_expected_node_level);
	return mu_t_done(&t);
}

/*
 * test_affinity.c - the engine's pod affinity, anti-affinity and spread
 * counts against a brute-force scan on random streams.
 *
 * For each seed: a random cluster (6 to 10 nodes over 3 zones and 4 racks,
 * one node without a zone), random jobs (labels app and tier, namespaces
 * ns1 and ns2, random required affinity, anti-affinity and DoNotSchedule
 * spread terms by zone, rack or host, minDomains sometimes) arriving and
 * finishing at random, and probe jobs in a queue whose limit is zero (they
 * never bind, so they only ask).  After every cycle the test asks the
 * engine, for every probe and node, which filter a pod would fail
 * (mu_engine_node_check), and compares it with kube-scheduler's algorithm
 * run from scratch over every bound pod the decisions reported: the
 * PodTopologySpread and InterPodAffinity filters, in their order.  It also
 * checks that no pod bound in a cycle broke the required terms as they
 * stood (anti-affinity both ways).  MUSTER_AFFINITY_SEEDS sets the number
 * of seeds (default 200).  A failure prints the seed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"

#define MAXN 10
#define MAXJ 40
#define NPROBE 6
#define MAXT 3
#define NKEYS 3

static const char *const keys[NKEYS] = {"zone", "rack", "kubernetes.io/hostname"};
static const char *const apps[3] = {"a", "b", "c"};
static const char *const tiers[2] = {"x", "y"};
static const char *const nss[2] = {"ns1", "ns2"};

typedef struct rng {
	uint64_t s;
} rng_t;

static uint32_t rnd(rng_t *r, uint32_t n)
{
	r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(r->s >> 33) % n;
}

/* A selector the test can evaluate: app In (v) | tier Exists | app NotIn (v). */
typedef struct tsel {
	int kind;  /* 0 app In, 1 tier Exists, 2 app NotIn */
	int app;
} tsel_t;

typedef struct tterm {
	int kind;  /* 0 required affinity, 1 anti, 2 spread */
	int key;
	tsel_t sel;
	int skew, min_domains;
} tterm_t;

typedef struct tjob {
	char name[16];
	int app, tier, ns;   /* tier -1: no tier label */
	int nterms;
	tterm_t terms[MAXT];
	int pods;
	mu_id_t id;
	int node[3];         /* bound node per pod, -1 */
	bool in, done, probe;
	/* spec storage */
	mu_label_t labels[2];
	mu_pod_term_t pt[MAXT];
	mu_spread_spec_t sp[MAXT];
	mu_sel_req_t req[MAXT];
	const char *vals[MAXT];
	mu_podset_spec_t ps;
	mu_job_spec_t js;
} tjob_t;

typedef struct world {
	int nn;
	char names[MAXN][16];
	int lab[MAXN][NKEYS];  /* label value per key, -1 none */
	tjob_t jobs[MAXJ + NPROBE];
	int nj;
} world_t;

static bool sel_match(const tsel_t *s, const tjob_t *p)
{
	switch (s->kind) {
	case 0: return p->app == s->app;
	case 1: return p->tier >= 0;
	default: return p->app != s->app;
	}
}

static void spec_sel(tjob_t *j, int t, const tsel_t *s, mu_pod_sel_t *out)
{
	mu_sel_req_t *r = &j->req[t];
	memset(r, 0, sizeof *r);
	if (s->kind == 1) {
		r->key = "tier";
		r->op = MU_SEL_EXISTS;
	} else {
		r->key = "app";
		r->op = s->kind == 0 ? MU_SEL_IN : MU_SEL_NOT_IN;
		j->vals[t] = apps[s->app];
		r->values = &j->vals[t];
		r->nvalues = 1;
	}
	out->reqs = r;
	out->nreqs = 1;
	out->absent = false;
}

static void make_job(rng_t *r, tjob_t *j, int i, bool probe)
{
	memset(j, 0, sizeof *j);
	snprintf(j->name, sizeof j->name, "%s%d", probe ? "p" : "j", i);
	j->probe = probe;
	j->app = (int)rnd(r, 3);
	j->tier = (int)rnd(r, 3) - 1;
	j->ns = (int)rnd(r, 2);
	j->pods = probe ? 1 : 1 + (int)rnd(r, 3);
	j->nterms = (int)rnd(r, MAXT + 1);
	for (int k = 0; k < 3; k++)
		j->node[k] = -1;
	int nl = 0;
	j->labels[nl++] = (mu_label_t){"app", apps[j->app]};
	if (j->tier >= 0)
		j->labels[nl++] = (mu_label_t){"tier", tiers[j->tier]};
	int npt = 0, nsp = 0;
	for (int t = 0; t < j->nterms; t++) {
		tterm_t *tt = &j->terms[t];
		tt->kind = (int)rnd(r, 3);
		tt->key = (int)rnd(r, NKEYS);
		tt->sel.kind = (int)rnd(r, 3);
		tt->sel.app = (int)rnd(r, 3);
		tt->skew = 1 + (int)rnd(r, 2);
		tt->min_domains = rnd(r, 4) == 0 ? 2 + (int)rnd(r, 3) : 0;
		if (tt->kind == 2) {
			mu_spread_spec_t *s = &j->sp[nsp++];
			memset(s, 0, sizeof *s);
			s->max_skew = tt->skew;
			s->topology_key = keys[tt->key];
			s->min_domains = tt->min_domains;
			spec_sel(j, t, &tt->sel, &s->sel);
		} else {
			mu_pod_term_t *p = &j->pt[npt++];
			memset(p, 0, sizeof *p);
			p->anti = tt->kind == 1;
			p->topology_key = keys[tt->key];
			spec_sel(j, t, &tt->sel, &p->sel);
		}
	}
	mu_podset_spec_t *ps = &j->ps;
	ps->replicas = j->pods;
	ps->req.v[MU_RES_CPU] = 1000;
	ps->labels = j->labels;
	ps->nlabels = (size_t)nl;
	ps->pod_terms = j->pt;
	ps->npod_terms = (size_t)npt;
	ps->spread = j->sp;
	ps->nspread = (size_t)nsp;
	j->js.name = j->name;
	j->js.queue = probe ? "probe" : "q";
	j->js.namespace = nss[j->ns];
	j->js.priority = 0;
	j->js.type = MU_JOB_BATCH;
	j->js.preemptible = true;
	j->js.podsets = ps;
	j->js.npodsets = 1;
	j->js.submit = MU_TIME_NONE;
}

/* Bound pods of the world as (job, node) pairs. */
static int bound_pods(const world_t *w, int *bj, int *bn)
{
	int n = 0;
	for (int i = 0; i < w->nj; i++) {
		const tjob_t *j = &w->jobs[i];
		if (!j->in || j->done)
			continue;
		for (int k = 0; k < j->pods; k++)
			if (j->node[k] >= 0) {
				bj[n] = i;
				bn[n++] = j->node[k];
			}
	}
	return n;
}

/* kube-scheduler's filters, from scratch: the first failing one or
 * MU_F_COUNT. */
static mu_filter_t brute(const world_t *w, const tjob_t *p, int node)
{
	int bj[3 * MAXJ], bn[3 * MAXJ];
	int nb = bound_pods(w, bj, bn);
	/* PodTopologySpread (DoNotSchedule): nodes need every key. */
	for (int t = 0; t < p->nterms; t++) {
		const tterm_t *c = &p->terms[t];
		if (c->kind != 2)
			continue;
		if (w->lab[node][c->key] < 0)
			return MU_F_SPREAD_LABEL;
		int64_t cnt[MAXN] = {0};
		bool seen[MAXN] = {false};
		for (int n = 0; n < w->nn; n++) {
			bool all = true;
			for (int u = 0; u < p->nterms; u++)
				if (p->terms[u].kind == 2 && w->lab[n][p->terms[u].key] < 0)
					all = false;
			if (!all)
				continue;
			int v = w->lab[n][c->key];
			seen[v] = true;
			for (int b = 0; b < nb; b++)
				if (bn[b] == n && w->jobs[bj[b]].ns == p->ns &&
				    sel_match(&c->sel, &w->jobs[bj[b]]))
					cnt[v]++;
		}
		int64_t mn = INT64_MAX;
		int nd = 0;
		for (int v = 0; v < MAXN; v++)
			if (seen[v]) {
				nd++;
				if (cnt[v] < mn)
					mn = cnt[v];
			}
		if (mn == INT64_MAX || nd < c->min_domains)
			mn = 0;
		int self = sel_match(&c->sel, p);
		if (cnt[w->lab[node][c->key]] + self - mn > c->skew)
			return MU_F_SPREAD;
	}
	/* InterPodAffinity: required affinity (pods matching all terms). */
	bool any_req = false, exist = true, empty = true, self_all = true;
	for (int t = 0; t < p->nterms; t++) {
		const tterm_t *c = &p->terms[t];
		if (c->kind != 0)
			continue;
		any_req = true;
		self_all = self_all && sel_match(&c->sel, p);
		if (w->lab[node][c->key] < 0)
			return MU_F_POD_AFFINITY;
	}
	if (any_req) {
		for (int t = 0; t < p->nterms; t++) {
			const tterm_t *c = &p->terms[t];
			if (c->kind != 0)
				continue;
			int here = 0;
			for (int b = 0; b < nb; b++) {
				const tjob_t *e = &w->jobs[bj[b]];
				bool all = e->ns == p->ns;
				for (int u = 0; u < p->nterms && all; u++)
					if (p->terms[u].kind == 0)
						all = sel_match(&p->terms[u].sel, e);
				if (!all || w->lab[bn[b]][c->key] < 0)
					continue;
				empty = false;
				if (w->lab[bn[b]][c->key] == w->lab[node][c->key])
					here++;
			}
			if (!here)
				exist = false;
		}
		if (!exist && !(empty && self_all))
			return MU_F_POD_AFFINITY;
	}
	for (int t = 0; t < p->nterms; t++) {
		const tterm_t *c = &p->terms[t];
		if (c->kind != 1 || w->lab[node][c->key] < 0)
			continue;
		for (int b = 0; b < nb; b++)
			if (w->jobs[bj[b]].ns == p->ns && sel_match(&c->sel, &w->jobs[bj[b]]) &&
			    w->lab[bn[b]][c->key] == w->lab[node][c->key])
				return MU_F_POD_ANTI;
	}
	for (int b = 0; b < nb; b++) {
		const tjob_t *e = &w->jobs[bj[b]];
		for (int t = 0; t < e->nterms; t++) {
			const tterm_t *c = &e->terms[t];
			if (c->kind == 1 && e->ns == p->ns && sel_match(&c->sel, p) &&
			    w->lab[bn[b]][c->key] >= 0 &&
			    w->lab[bn[b]][c->key] == w->lab[node][c->key])
				return MU_F_EXISTING_ANTI;
		}
	}
	return MU_F_COUNT;
}

static bool one_seed(mu_t_t *t, uint64_t seed)
{
	rng_t r = {seed * 2654435761u + 7};
	world_t *w = calloc(1, sizeof *w);
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.preemption = cfg.reclaim = cfg.consolidate = false;
	cfg.backfill = MU_BACKFILL_GREEDY;
	mu_engine_t *e = NULL;
	bool ok = w && mu_engine_new(&cfg, &e) == MU_OK;
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	ok = ok && mu_engine_queue_upsert(e, &q) == MU_OK;
	q.name = "probe";
	for (int k = 0; k < MU_RES_MAX; k++)
		q.limit.v[k] = 0;
	ok = ok && mu_engine_queue_upsert(e, &q) == MU_OK;
	w->nn = 6 + (int)rnd(&r, MAXN - 5);
	for (int n = 0; ok && n < w->nn; n++) {
		snprintf(w->names[n], sizeof w->names[n], "n%d", n);
		char zv[16], rv[16];
		w->lab[n][0] = n == 0 ? -1 : (int)rnd(&r, 3);
		w->lab[n][1] = (int)rnd(&r, 4);
		w->lab[n][2] = n;
		snprintf(zv, sizeof zv, "z%d", w->lab[n][0]);
		snprintf(rv, sizeof rv, "r%d", w->lab[n][1]);
		mu_label_t l[2] = {{"rack", rv}, {"zone", zv}};
		mu_node_spec_t ns = {.name = w->names[n], .labels = l, .nlabels = n == 0 ? 1 : 2};
		ns.alloc.v[MU_RES_CPU] = 64000;
		ns.alloc.v[MU_RES_MEM] = 1LL << 36;
		ns.alloc.v[MU_RES_PODS] = 110;
		ok = mu_engine_node_upsert(e, &ns, NULL) == MU_OK;
	}
	for (int i = 0; ok && i < NPROBE; i++) {
		tjob_t *j = &w->jobs[w->nj++];
		make_job(&r, j, i, true);
		ok = mu_engine_job_submit(e, &j->js, 0, &j->id) == MU_OK;
		j->in = true;
	}
	mu_decisions_t d;
	mu_decisions_init(&d);
	int nreal = 0;
	for (int step = 0; ok && step < 30; step++) {
		mu_time_t now = (step + 1) * 1000;
		for (int a = (int)rnd(&r, 3); a > 0 && nreal < MAXJ; a--) {
			tjob_t *j = &w->jobs[w->nj++];
			make_job(&r, j, nreal++, false);
			ok = ok && mu_engine_job_submit(e, &j->js, now, &j->id) == MU_OK;
			j->in = true;
		}
		for (int i = NPROBE; i < w->nj; i++) {
			tjob_t *j = &w->jobs[i];
			if (j->in && !j->done && j->node[0] >= 0 && rnd(&r, 5) == 0) {
				ok = ok && mu_engine_job_finish(e, j->id, now) == MU_OK;
				j->done = true;
			}
		}
		d.n = 0;
		ok = ok && mu_engine_cycle(e, now, &d) == MU_OK;
		for (size_t k = 0; ok && k < d.n; k++) {
			const mu_decision_t *x = &d.v[k];
			CHECK(t, x->kind != MU_DEC_EVICT);
			if (x->kind != MU_DEC_BIND)
				continue;
			for (int i = 0; i < w->nj; i++)
				if (w->jobs[i].id == x->job && w->jobs[i].in && !w->jobs[i].done) {
					CHECK(t, !w->jobs[i].probe);
					w->jobs[i].node[x->pod] = x->node;
				}
		}
		for (int pi = 0; ok && pi < NPROBE; pi++) {
			for (int n = 0; n < w->nn; n++) {
				mu_filter_t f = MU_F_COUNT;
				ok = mu_engine_node_check(e, w->jobs[pi].id, 0, n, &f) == MU_OK;
				mu_filter_t want = brute(w, &w->jobs[pi], n);
				if (f != want) {
					fprintf(stderr, "seed %llu step %d probe %d node %d: "
						"engine %d, brute force %d\n",
						(unsigned long long)seed, step, pi, n, f, want);
					ok = false;
				}
			}
		}
	}
	CHECK(t, ok);
	if (!ok)
		fprintf(stderr, "affinity oracle failed at seed %llu\n", (unsigned long long)seed);
	mu_decisions_release(&d);
	mu_engine_free(e);
	free(w);
	return ok;
}

static void test_random_streams(mu_t_t *t)
{
	const char *s = getenv("MUSTER_AFFINITY_SEEDS");
	int seeds = s ? atoi(s) : 200;
	for (int i = 0; i < seeds; i++)
		if (!one_seed(t, (uint64_t)i + 1))
			break;
}

/* Bad terms are refused at submit, with nothing left behind. */
static void test_bad_terms(mu_t_t *t)
{
	mu_engine_t *e = NULL;
	CHECK(t, mu_engine_new(NULL, &e) == MU_OK);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	CHECK(t, mu_engine_queue_upsert(e, &q) == MU_OK);
	mu_sel_req_t gt = {.key = "app", .op = MU_SEL_GT};
	const char *v1 = "1";
	gt.values = &v1;
	gt.nvalues = 1;
	mu_pod_term_t pt = {.topology_key = "zone", .sel = {.reqs = &gt, .nreqs = 1}};
	mu_spread_spec_t sp = {.max_skew = 0, .topology_key = "zone"};
	mu_podset_spec_t ps = {.replicas = 1};
	ps.req.v[MU_RES_CPU] = 1000;
	mu_job_spec_t js = {.name = "bad", .queue = "q", .podsets = &ps, .npodsets = 1,
			    .submit = MU_TIME_NONE};
	mu_id_t id;
	ps.pod_terms = &pt; /* Gt is not a pod selector operator */
	ps.npod_terms = 1;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &js, 0, &id), MU_EINVAL);
	pt.sel.nreqs = 0;
	pt.topology_key = ""; /* no topology key */
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &js, 0, &id), MU_EINVAL);
	pt.topology_key = "zone";
	pt.weight = 101;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &js, 0, &id), MU_ERANGE);
	ps.npod_terms = 0;
	ps.spread = &sp; /* maxSkew 0 */
	ps.nspread = 1;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &js, 0, &id), MU_ERANGE);
	sp.max_skew = 1;
	sp.min_domains = 2;
	sp.schedule_anyway = true; /* minDomains needs DoNotSchedule */
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &js, 0, &id), MU_ERANGE);
	sp.schedule_anyway = false;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &js, 0, &id), MU_OK);
	mu_engine_free(e);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_bad_terms);
	MU_RUN(&t, test_random_streams);
	return mu_t_done(&t);
}

/*
 * test_eval_topo.c - the topology evaluation (src/eval/eval_topo*.c): the
 * topology CSV reader, the tightest feasible tier, spans of hand-made
 * placements, the JCT model, the cluster and workload builders, a tiny
 * in-memory run where the slowdown hook must show in the JCT, the writers,
 * and, when ../shared/data is there, a quick run on the real network and
 * trace where muster's gangs span no more ToRs than the blind baseline's.
 * No wall-clock assertions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/eval_topo.h"

#define DATA "../shared/data"

/* Two DSWs; ASW names repeat under different PSWs on purpose. */
static const char small_csv[] =
	"ip,DSW,PSW,ASW\n"
	"h0,G1,P1,S1\n"
	"h1,G1,P1,S1\n"
	"h2,G1,P1,S1\n"
	"h3,G1,P1,S2\n"
	"h4,G1,P2,S1\n"
	"h5,G2,P3,S1\n";

static int parse(const char *csv, mu_etopo_net_t *net, mu_diag_t *d)
{
	return mu_etopo_net_parse("t.csv", csv, strlen(csv), 8, net, d);
}

static void test_parse(mu_t_t *t)
{
	mu_etopo_net_t net;
	mu_diag_t d = {{0}};
	CHECK_EQ_INT(t, parse(small_csv, &net, &d), MU_OK);
	CHECK_EQ_INT(t, net.nhosts, 6);
	CHECK_EQ_INT(t, net.gpus_per_host, 8);
	CHECK_EQ_INT(t, net.ndoms[0], 2); /* G1, G2 */
	CHECK_EQ_INT(t, net.ndoms[1], 3); /* P1, P2, P3 */
	CHECK_EQ_INT(t, net.ndoms[2], 4); /* P1/S1, P1/S2, P2/S1, P3/S1 */
	CHECK_EQ_INT(t, net.max_hosts[0], 5);
	CHECK_EQ_INT(t, net.max_hosts[1], 4);
	CHECK_EQ_INT(t, net.max_hosts[2], 3);
	CHECK_STR(t, net.hosts[4].name, "h4");
	CHECK_STR(t, net.hosts[4].sw[2], "S1");
	CHECK(t, net.hosts[4].dom[2] != net.hosts[0].dom[2]);
	CHECK(t, net.hosts[3].dom[1] == net.hosts[0].dom[1]);
	mu_etopo_net_release(&net);

	static const char *const bad[] = {
		"ip,DSW,PSW\nh0,G1,P1\n",           /* a column missing */
		"ip,DSW,ASW,PSW\nh0,G1,S1,P1\n",    /* columns out of order */
		"ip,DSW,PSW,ASW\nh0,G1,P1,S1\nh0,G1,P1,S2\n", /* a host twice */
		"ip,DSW,PSW,ASW\nh0,G1,,S1\n",      /* an empty name */
		"ip,DSW,PSW,ASW\nh0,G1,P 1,S1\n",   /* a blank inside */
		"ip,DSW,PSW,ASW\nh0,G1,P1\n",       /* a short row */
		"",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		d.msg[0] = '\0';
		CHECK_EQ_INT(t, parse(bad[i], &net, &d), MU_EPARSE);
		CHECK(t, strncmp(d.msg, "t.csv:", 6) == 0);
		mu_etopo_net_release(&net);
	}
	CHECK_EQ_INT(t, parse("ip,DSW,PSW,ASW\n", &net, &d), MU_EINVAL);
	mu_etopo_net_release(&net);
	CHECK_EQ_INT(t, mu_etopo_net_parse("t.csv", small_csv, strlen(small_csv), 0,
					   &net, &d), MU_EINVAL);
	mu_etopo_net_release(&net);
	CHECK_EQ_INT(t, mu_etopo_net_load("/nonexistent/topo.csv", 8, &net, &d), MU_ENOENT);
	mu_etopo_net_release(&net);
}

static void test_tightest(mu_t_t *t)
{
	mu_etopo_net_t net;
	mu_diag_t d = {{0}};
	CHECK_EQ_INT(t, parse(small_csv, &net, &d), MU_OK);
	/* host 8 GPUs, ToR 3 hosts (24), PSW 4 (32), DSW 5 (40). */
	const struct { int64_t gpus; mu_etopo_tier_t want; } c[] = {
		{1, MU_ETOPO_HOST}, {8, MU_ETOPO_HOST}, {9, MU_ETOPO_TOR},
		{24, MU_ETOPO_TOR}, {25, MU_ETOPO_PSW}, {32, MU_ETOPO_PSW},
		{33, MU_ETOPO_DSW}, {40, MU_ETOPO_DSW}, {41, MU_ETOPO_ANY},
		{4096, MU_ETOPO_ANY},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++)
		CHECK_EQ_INT(t, mu_etopo_tightest(&net, c[i].gpus), c[i].want);
	CHECK_STR(t, mu_etopo_tier_name(MU_ETOPO_PSW), "psw");
	CHECK_STR(t, mu_etopo_tier_name(MU_ETOPO_NTIERS), "?");
	mu_etopo_net_release(&net);
}

static void test_span(mu_t_t *t)
{
	mu_etopo_net_t net;
	mu_diag_t d = {{0}};
	CHECK_EQ_INT(t, parse(small_csv, &net, &d), MU_OK);
	const struct {
		int32_t hosts[4];
		int32_t n, nhosts, tors;
		mu_etopo_tier_t tier;
	} c[] = {
		{{0}, 0, 0, 0, MU_ETOPO_HOST},
		{{2}, 1, 1, 1, MU_ETOPO_HOST},
		{{2, 2, 2}, 3, 1, 1, MU_ETOPO_HOST},      /* one host, many pods */
		{{0, 1, 2}, 3, 3, 1, MU_ETOPO_TOR},
		{{0, 3}, 2, 2, 2, MU_ETOPO_PSW},
		{{0, 1, 3, 3}, 4, 3, 2, MU_ETOPO_PSW},
		{{0, 4}, 2, 2, 2, MU_ETOPO_DSW},          /* "S1" under P1 and P2 */
		{{4, 0, 1}, 3, 3, 2, MU_ETOPO_DSW},
		{{0, 5}, 2, 2, 2, MU_ETOPO_ANY},
		{{0, 3, 4, 5}, 4, 4, 4, MU_ETOPO_ANY},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		mu_etopo_span_t s;
		CHECK_EQ_INT(t, mu_etopo_span(&net, c[i].hosts, c[i].n, &s), MU_OK);
		CHECK_EQ_INT(t, s.hosts, c[i].nhosts);
		CHECK_EQ_INT(t, s.tors, c[i].tors);
		CHECK_EQ_INT(t, s.tier, c[i].tier);
	}
	mu_etopo_span_t s;
	const int32_t out[2] = {0, 6}, neg[1] = {-1};
	CHECK_EQ_INT(t, mu_etopo_span(&net, out, 2, &s), MU_EINVAL);
	CHECK_EQ_INT(t, mu_etopo_span(&net, neg, 1, &s), MU_EINVAL);
	mu_etopo_net_release(&net);
}

static void test_slowdown(mu_t_t *t)
{
	CHECK(t, mu_etopo_slowdown(MU_ETOPO_HOST) == 1.0);
	CHECK(t, mu_etopo_slowdown(MU_ETOPO_TOR) == 1.0);
	CHECK(t, mu_etopo_slowdown(MU_ETOPO_PSW) == 1.1);
	CHECK(t, mu_etopo_slowdown(MU_ETOPO_DSW) == 1.25);
	CHECK(t, mu_etopo_slowdown(MU_ETOPO_ANY) == 1.5);
	for (int k = 1; k < MU_ETOPO_NTIERS; k++)
		CHECK(t, mu_etopo_slowdown(k) >= mu_etopo_slowdown(k - 1));
	CHECK_EQ_INT(t, mu_etopo_size_class(12), 0);
	CHECK_EQ_INT(t, mu_etopo_size_class(32), 1);
	CHECK_EQ_INT(t, mu_etopo_size_class(64), 2);
	CHECK_EQ_INT(t, mu_etopo_size_class(128), 3);
}

/* A net of 2 PSWs x 4 ToRs x 4 hosts: "n<P>-<T>-<H>". */
static int grid_net(mu_etopo_net_t *net)
{
	char buf[4096];
	size_t n = (size_t)snprintf(buf, sizeof buf, "ip,DSW,PSW,ASW\n");
	for (int p = 0; p < 2; p++)
		for (int r = 0; r < 4; r++)
			for (int h = 0; h < 4; h++)
				n += (size_t)snprintf(buf + n, sizeof buf - n,
						      "n%d-%d-%d,G1,P%d,S%d\n", p, r, h, p, r);
	mu_diag_t d = {{0}};
	return mu_etopo_net_parse("grid.csv", buf, n, 8, net, &d);
}

static void test_cluster(mu_t_t *t)
{
	mu_etopo_net_t net;
	mu_specs_t a, b;
	CHECK_EQ_INT(t, grid_net(&net), MU_OK);
	mu_specs_init(&a);
	mu_specs_init(&b);
	CHECK_EQ_INT(t, mu_etopo_cluster(&net, 1, &a), MU_OK);
	CHECK_EQ_INT(t, mu_etopo_cluster(&net, 1, &b), MU_OK);
	CHECK_EQ_INT(t, a.nnodes, 32);
	CHECK_EQ_INT(t, a.ntopologies, 1);
	CHECK_STR(t, a.topologies[0].name, "lingjun");
	CHECK_EQ_INT(t, a.topologies[0].nlevels, 3);
	CHECK_STR(t, a.topologies[0].levels[2], "lingjun/asw");
	bool same = true, shuffled = false;
	for (size_t i = 0; i < a.nnodes; i++) {
		same = same && !strcmp(a.nodes[i].name, b.nodes[i].name);
		shuffled = shuffled || strcmp(a.nodes[i].name, net.hosts[i].name);
	}
	CHECK(t, same);
	CHECK(t, shuffled);
	const mu_node_spec_t *n = &a.nodes[0];
	CHECK_EQ_INT(t, n->alloc.v[MU_RES_GPU], 8);
	CHECK_EQ_INT(t, n->nlabels, 3);
	CHECK_STR(t, n->labels[1].key, "lingjun/psw");
	CHECK(t, n->labels[1].value[0] == 'P' && n->labels[1].value[1] == n->name[1]);
	mu_specs_release(&a);
	mu_specs_release(&b);
	mu_etopo_net_release(&net);
}

/* Loads a Philly CSV from a string into sp. */
static int load_trace(const char *csv, mu_specs_t *sp)
{
	mu_load_opts_t lo;
	mu_diag_t d = {{0}};
	mu_load_opts_defaults(&lo);
	return mu_load_buffer("trace.csv", csv, strlen(csv), &lo, sp, &d);
}

static const char trace_hdr[] = "timestamp,duration,num_gpus,gpu_time,cluster\n";

static void test_workload(mu_t_t *t)
{
	mu_etopo_net_t net;
	mu_specs_t sp;
	mu_etopo_workload_t w;
	mu_etopo_opts_t o;
	mu_diag_t d = {{0}};
	char csv[1024];
	snprintf(csv, sizeof csv, "%s"
		 "2017-10-01 00:00:00,3600,1,3600,a\n"
		 "2017-10-01 00:00:10,3600,16,57600,a\n"
		 "2017-10-01 01:00:00,7200,4,28800,b\n"
		 "2017-10-01 02:00:00,1800,8,14400,b\n", trace_hdr);
	CHECK_EQ_INT(t, grid_net(&net), MU_OK);
	mu_specs_init(&sp);
	mu_etopo_opts_defaults(&o);
	o.load = 0.5;
	CHECK_EQ_INT(t, load_trace(csv, &sp), MU_OK);
	CHECK_EQ_INT(t, mu_etopo_workload(&sp, &net, &o, &w, &d), MU_OK);
	CHECK_EQ_INT(t, w.trace_jobs, 4);
	CHECK_EQ_INT(t, w.jobs, 3);
	CHECK_EQ_INT(t, w.gangs, 1);
	CHECK_EQ_INT(t, w.gang_gpus_max, 16);
	CHECK(t, fabs(w.gpu_s - (57600 + 28800 + 14400)) < 1e-6);
	CHECK(t, fabs(w.trace_span_s - 7190) < 1e-6);
	CHECK(t, fabs(w.load - 0.5) < 1e-3);
	CHECK(t, fabs(w.window_s - 7190 / w.compress) < 1e-3);
	CHECK(t, w.window_load > 0 && w.window_load <= w.load);
	CHECK_EQ_INT(t, sp.nqueues, 1);
	CHECK_STR(t, sp.queues[0].name, "philly");
	CHECK_EQ_INT(t, sp.jobs[0].submit, 0);
	CHECK_STR(t, sp.jobs[1].queue, "philly");
	CHECK_EQ_INT(t, sp.jobs[1].duration, 7200000);
	CHECK_EQ_INT(t, sp.jobs[2].submit, llround(7190000 / w.compress));
	mu_specs_release(&sp);

	mu_specs_init(&sp);
	o.max_jobs = 1;
	CHECK_EQ_INT(t, load_trace(csv, &sp), MU_OK);
	CHECK_EQ_INT(t, mu_etopo_workload(&sp, &net, &o, &w, &d), MU_EINVAL);
	mu_specs_release(&sp);
	mu_etopo_net_release(&net);
}

/* One 16-GPU gang of 1000 s on three hosts: two under one PSW in two ToRs,
 * one under another PSW.  Required within its tightest level (the PSW),
 * it runs 1.1 x 1000 s; the blind baseline's JCT must match its own
 * placement's slowdown. */
static void test_slowdown_in_sim(mu_t_t *t)
{
	static const char topo[] = "ip,DSW,PSW,ASW\na,G1,P1,S1\nb,G1,P1,S2\nc,G1,P2,S1\n";
	char csv[512];
	snprintf(csv, sizeof csv, "%s2017-10-01 00:00:00,1000,16,16000,a\n"
		 "2017-10-01 00:10:00,500,2,1000,a\n", trace_hdr);
	mu_etopo_net_t net;
	mu_specs_t sp;
	mu_etopo_workload_t w;
	mu_etopo_opts_t o;
	mu_etopo_result_t r;
	mu_diag_t d = {{0}};
	mu_etopo_opts_defaults(&o);
	o.load = 0.1;
	mu_specs_init(&sp);
	CHECK_EQ_INT(t, parse(topo, &net, &d), MU_OK);
	CHECK_EQ_INT(t, load_trace(csv, &sp), MU_OK);
	CHECK_EQ_INT(t, mu_etopo_workload(&sp, &net, &o, &w, &d), MU_OK);
	CHECK_EQ_INT(t, mu_etopo_cluster(&net, 3, &sp), MU_OK);
	CHECK_EQ_INT(t, mu_etopo_run(&sp, &net, MU_ETOPO_REQUIRED, 3, &r, &d), MU_OK);
	CHECK_EQ_INT(t, r.gangs, 1);
	CHECK_EQ_INT(t, r.within, 1);
	CHECK_EQ_INT(t, r.tier_gangs[MU_ETOPO_PSW], 1);
	CHECK_EQ_INT(t, r.tors_hist[2], 1);
	CHECK(t, fabs(r.gang_jct_s - 1100) < 0.01);
	CHECK(t, fabs(r.gang_wait_s) < 0.01);
	CHECK(t, fabs(r.mean_slowdown - 1.1) < 1e-9);
	CHECK_EQ_INT(t, r.completed, 2);
	CHECK_EQ_INT(t, mu_etopo_run(&sp, &net, MU_ETOPO_BLIND_BINPACK, 3, &r, &d), MU_OK);
	CHECK_EQ_INT(t, r.gangs, 1);
	CHECK(t, fabs(r.gang_jct_s - 1000 * r.mean_slowdown) < 0.01);
	CHECK(t, r.mean_slowdown == 1.1 || r.mean_slowdown == 1.25);
	mu_specs_release(&sp);
	mu_etopo_net_release(&net);
}

/* Appends a synthetic Philly trace to buf: n jobs an hour apart cycling
 * through 2, 4, 8, 16 and 32 GPUs, an hour long each. */
static size_t synth_trace(char *buf, size_t cap, int n)
{
	static const int gpus[] = {2, 4, 8, 16, 32};
	size_t k = (size_t)snprintf(buf, cap, "%s", trace_hdr);
	for (int i = 0; i < n && k < cap; i++) {
		int g = gpus[i % 5];
		k += (size_t)snprintf(buf + k, cap - k,
				      "2017-10-%02d %02d:00:00,3600,%d,%d,a\n",
				      1 + i / 24, i % 24, g, 3600 * g);
	}
	return k;
}

/* The grid net and a synthetic trace through every policy and both
 * writers. */
static void test_small_run(mu_t_t *t)
{
	char csv[8192];
	mu_etopo_net_t net;
	mu_specs_t sp;
	mu_etopo_workload_t w;
	mu_etopo_opts_t o;
	mu_etopo_result_t r[MU_ETOPO_NPOLICIES];
	mu_diag_t d = {{0}};
	synth_trace(csv, sizeof csv, 100);
	mu_etopo_opts_defaults(&o);
	o.load = 0.6;
	mu_specs_init(&sp);
	CHECK_EQ_INT(t, grid_net(&net), MU_OK);
	CHECK_EQ_INT(t, load_trace(csv, &sp), MU_OK);
	CHECK_EQ_INT(t, mu_etopo_workload(&sp, &net, &o, &w, &d), MU_OK);
	CHECK_EQ_INT(t, mu_etopo_cluster(&net, 1, &sp), MU_OK);
	for (int p = 0; p < MU_ETOPO_NPOLICIES; p++) {
		CHECK_EQ_INT(t, mu_etopo_run(&sp, &net, p, 1, &r[p], &d), MU_OK);
		CHECK_EQ_INT(t, r[p].policy, p);
		CHECK_EQ_INT(t, r[p].jobs, 100);
		CHECK_EQ_INT(t, r[p].completed, 100);
		CHECK_EQ_INT(t, r[p].gangs, 40);
		CHECK(t, r[p].util > 0 && r[p].util <= 1);
		CHECK(t, r[p].util_useful <= r[p].util + 1e-12);
		int64_t sum = 0;
		for (int k = 1; k < MU_ETOPO_HIST; k++)
			sum += r[p].tors_hist[k];
		CHECK_EQ_INT(t, sum, r[p].gangs);
	}
	CHECK(t, r[MU_ETOPO_PREFERRED].mean_tors <= r[MU_ETOPO_BLIND_BINPACK].mean_tors);
	CHECK(t, r[MU_ETOPO_REQUIRED].within_share == 1.0);
	CHECK(t, r[MU_ETOPO_REQUIRED].mean_tors == 1.0);

	mu_etopo_report_t rep = {"grid.csv", "trace.csv", &net, &o, &w, r,
				 MU_ETOPO_NPOLICIES, false};
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	CHECK(t, f != NULL);
	if (f) {
		CHECK_EQ_INT(t, mu_etopo_write_json(&rep, f), MU_OK);
		CHECK_EQ_INT(t, mu_etopo_write_html(&rep, f), MU_OK);
		fclose(f);
		CHECK(t, strstr(out, "\"within_share\": ") != NULL);
		CHECK(t, strstr(out, "\"policy\": \"muster-required\"") != NULL);
		CHECK(t, strstr(out, "</html>") != NULL);
		CHECK(t, strstr(out, "<svg") != NULL);
	}
	free(out);
	mu_specs_release(&sp);
	mu_etopo_net_release(&net);
}

/* The real network and the first 1000 multi-GPU jobs (--quick) of the real trace. */
static void test_quick_real(mu_t_t *t)
{
	mu_etopo_net_t net;
	mu_specs_t sp;
	mu_etopo_workload_t w;
	mu_etopo_opts_t o;
	mu_etopo_result_t blind, pref;
	mu_diag_t d = {{0}};
	mu_load_opts_t lo;
	FILE *probe = fopen(DATA "/topology/lingjun_topo.csv", "r");
	FILE *probe2 = fopen(DATA "/philly/philly.csv", "r");
	if (probe)
		fclose(probe);
	if (probe2)
		fclose(probe2);
	if (!probe || !probe2) {
		printf("skipped: ../shared/data not found\n");
		return;
	}
	mu_etopo_opts_defaults(&o);
	o.max_jobs = 1000;
	mu_load_opts_defaults(&lo);
	mu_specs_init(&sp);
	CHECK_EQ_INT(t, mu_etopo_net_load(DATA "/topology/lingjun_topo.csv", 8, &net, &d),
		     MU_OK);
	CHECK_EQ_INT(t, net.nhosts, 847);
	CHECK_EQ_INT(t, net.ndoms[2], 119);
	CHECK_EQ_INT(t, net.max_hosts[2], 8);
	CHECK_EQ_INT(t, mu_load_file(DATA "/philly/philly.csv", &lo, &sp, &d), MU_OK);
	CHECK_EQ_INT(t, mu_etopo_workload(&sp, &net, &o, &w, &d), MU_OK);
	CHECK_EQ_INT(t, mu_etopo_cluster(&net, 1, &sp), MU_OK);
	CHECK_EQ_INT(t, w.jobs, 1000);
	CHECK_EQ_INT(t, mu_etopo_run(&sp, &net, MU_ETOPO_BLIND_BINPACK, 1, &blind, &d), MU_OK);
	CHECK_EQ_INT(t, mu_etopo_run(&sp, &net, MU_ETOPO_PREFERRED, 1, &pref, &d), MU_OK);
	CHECK(t, blind.gangs > 0);
	CHECK_EQ_INT(t, pref.gangs, blind.gangs);
	CHECK(t, pref.mean_tors <= blind.mean_tors);
	CHECK(t, pref.within_share >= blind.within_share);
	mu_specs_release(&sp);
	mu_etopo_net_release(&net);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_parse);
	MU_RUN(&t, test_tightest);
	MU_RUN(&t, test_span);
	MU_RUN(&t, test_slowdown);
	MU_RUN(&t, test_cluster);
	MU_RUN(&t, test_workload);
	MU_RUN(&t, test_slowdown_in_sim);
	MU_RUN(&t, test_small_run);
	MU_RUN(&t, test_quick_real);
	return mu_t_done(&t);
}

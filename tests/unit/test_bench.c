/*
 * test_bench.c - `muster bench` as a library: every shape in quick mode
 * (in process, so that the sanitizers see all of it, and one in a forked
 * child), the record structure and its JSON keys, the JSON round trip, the
 * targets and the HTML report.  No timing is asserted: only that decisions
 * happened and the figures are well-formed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "muster/bench.h"
#include "muster/error.h"

/* The JSON line of r, in buf. */
static void json_of(const mu_bench_result_t *r, char *buf, size_t len)
{
	FILE *f = tmpfile();
	buf[0] = '\0';
	if (!f)
		return;
	mu_bench_json(f, r);
	rewind(f);
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* What every record of a shape that ran must have. */
static void check_common(mu_t_t *t, const mu_bench_result_t *r, const char *shape)
{
	char js[4096];
	CHECK_STR(t, r->shape, shape);
	CHECK(t, r->skipped[0] == '\0');
	CHECK(t, r->nodes > 0);
	CHECK(t, r->pods > 0);
	CHECK(t, r->decisions > 0);
	CHECK(t, isfinite(r->decisions_per_s) && r->decisions_per_s > 0);
	CHECK(t, isfinite(r->p50_us) && isfinite(r->p99_us));
	CHECK(t, r->p50_us >= 0 && r->p50_us <= r->p99_us);
	CHECK(t, r->peak_rss_mb > 0);
	json_of(r, js, sizeof js);
	static const char *const keys[] = {"\"shape\": ", "\"nodes\": ", "\"pods\": ",
					   "\"decisions_per_s\": ", "\"p50_us\": ",
					   "\"p99_us\": ", "\"peak_rss_mb\": "};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		CHECK(t, strstr(js, keys[i]) != NULL);
	CHECK(t, js[0] == '{' && strchr(js, '\n') == strrchr(js, '\n'));
}

/* Runs one shape quick and in process; returns its records. */
static int run_quick(const char *shape, mu_bench_results_t *rs)
{
	mu_bench_opts_t o;
	mu_bench_opts_defaults(&o);
	o.quick = true;
	o.isolate = false;
	mu_bench_results_init(rs);
	return mu_bench_run(shape, &o, rs);
}

static void test_shapes(mu_t_t *t)
{
	size_t n;
	const char *const *names = mu_bench_shapes(&n);
	CHECK_EQ_INT(t, n, 17);
	for (size_t i = 0; i < n; i++)
		CHECK(t, mu_bench_shape_known(names[i]));
	CHECK(t, !mu_bench_shape_known("nope"));
	CHECK(t, !mu_bench_shape_known(NULL));
	mu_bench_results_t rs;
	CHECK_EQ_INT(t, run_quick("nope", &rs), MU_ENOENT);
	CHECK_EQ_INT(t, rs.n, 0);
	mu_bench_results_release(&rs);
}

static void test_basic(mu_t_t *t)
{
	mu_bench_results_t rs;
	CHECK_EQ_INT(t, run_quick("basic", &rs), MU_OK);
	CHECK_EQ_INT(t, rs.n, 1);
	if (rs.n == 1) {
		check_common(t, &rs.v[0], "basic");
		CHECK_EQ_INT(t, rs.v[0].placed, rs.v[0].pods); /* all fit */
		CHECK_EQ_INT(t, rs.v[0].decisions, rs.v[0].pods);
		CHECK(t, rs.v[0].submit_us >= 0);
	}
	mu_bench_results_release(&rs);
}

static void test_basic_mixed(mu_t_t *t)
{
	mu_bench_results_t rs;
	CHECK_EQ_INT(t, run_quick("basic-mixed", &rs), MU_OK);
	CHECK_EQ_INT(t, rs.n, 1);
	if (rs.n == 1) {
		const mu_bench_result_t *r = &rs.v[0];
		check_common(t, r, "basic-mixed");
		CHECK(t, !strcmp(r->source, "openb") || !strcmp(r->source, "builtin"));
		CHECK(t, r->placed > 0 && r->placed <= r->pods);
	}
	mu_bench_results_release(&rs);
	/* No data directory: the built-in shapes. */
	mu_bench_opts_t o;
	mu_bench_opts_defaults(&o);
	o.quick = true;
	o.isolate = false;
	o.data_dir = "/nonexistent";
	mu_bench_results_init(&rs);
	CHECK_EQ_INT(t, mu_bench_run("basic-mixed", &o, &rs), MU_OK);
	CHECK(t, rs.n == 1 && !strcmp(rs.v[0].source, "builtin"));
	CHECK(t, rs.n == 1 && rs.v[0].placed > 0);
	mu_bench_results_release(&rs);
}

/* The varied shapes: blocked-selectors times the same blocked pods with
 * half and all of its running pods; classes compares against no classes. */
static void test_varied(mu_t_t *t)
{
	mu_bench_results_t rs;
	CHECK_EQ_INT(t, run_quick("blocked-selectors", &rs), MU_OK);
	CHECK_EQ_INT(t, rs.n, 2);
	if (rs.n == 2) {
		CHECK(t, rs.v[0].pending == 400 && rs.v[1].pending == 400);
		CHECK(t, rs.v[0].running > 0 && rs.v[1].running > rs.v[0].running);
		CHECK(t, rs.v[1].decisions > 0 && isfinite(rs.v[1].cycle_ms));
	}
	mu_bench_results_release(&rs);
	CHECK_EQ_INT(t, run_quick("classes", &rs), MU_OK);
	CHECK(t, rs.n == 1 && rs.v[0].peak_rss_mb > 0 && rs.v[0].rss_base_mb > 0);
	mu_bench_results_release(&rs);
}

static void test_gang(mu_t_t *t)
{
	mu_bench_results_t rs;
	CHECK_EQ_INT(t, run_quick("gang-topology", &rs), MU_OK);
	CHECK(t, rs.n >= 3);
	/* The last record is the blocking phase: four 4,096-pod gangs that
	 * cannot start, timed while reservations are made for them. */
	const mu_bench_result_t *b = &rs.v[rs.n - 1];
	CHECK_STR(t, b->shape, "gang-blocked");
	CHECK(t, b->gang_pods == 4096 && b->pending == 4 * 4096);
	CHECK(t, isfinite(b->cold_cycle_ms) && isfinite(b->cycle_ms));
	for (size_t i = 0; i + 1 < rs.n; i++) {
		const mu_bench_result_t *r = &rs.v[i];
		check_common(t, r, "gang-topology");
		CHECK(t, r->gang_pods >= 8 && r->gang_pods <= 512);
		CHECK_STR(t, r->level, r->gang_pods <= 32 ? "rack" : "block");
		CHECK(t, r->placed > 0);
		char js[4096];
		json_of(r, js, sizeof js);
		CHECK(t, strstr(js, "\"gang_pods\": ") && strstr(js, "\"level\": "));
	}
	mu_bench_results_release(&rs);
}

/* The cycle-like records: build and cycle figures. */
static void check_cycle(mu_t_t *t, const mu_bench_result_t *r, const char *shape)
{
	check_common(t, r, shape);
	CHECK(t, r->pending > 0 && r->pending < r->pods);
	CHECK(t, r->queues > 0);
	CHECK(t, r->build_ms > 0 && r->build_place_ms > 0);
	CHECK(t, r->build_place_ms <= r->build_ms);
	CHECK(t, r->cold_cycle_ms >= 0 && r->idle_cycle_ms >= 0);
	CHECK(t, r->cycle_ms >= 0 && r->cycle_ms <= r->cycle_p99_ms);
	char js[4096];
	json_of(r, js, sizeof js);
	CHECK(t, strstr(js, "\"cycle_ms\": ") && strstr(js, "\"build_ms\": "));
}

static void test_cycle_scale(mu_t_t *t)
{
	static const char *const shapes[] = {"cycle", "scale"};
	for (size_t s = 0; s < 2; s++) {
		mu_bench_results_t rs;
		CHECK_EQ_INT(t, run_quick(shapes[s], &rs), MU_OK);
		CHECK_EQ_INT(t, rs.n, 1);
		if (rs.n == 1)
			check_cycle(t, &rs.v[0], shapes[s]);
		mu_bench_results_release(&rs);
	}
}

/* The fleet shape: the first pass fills the fleet and leaves most jobs
 * queued; refill passes are timed; two targets apply. */
static void test_fleet(mu_t_t *t)
{
	mu_bench_results_t rs;
	CHECK_EQ_INT(t, run_quick("fleet", &rs), MU_OK);
	CHECK_EQ_INT(t, rs.n, 1);
	if (rs.n == 1) {
		const mu_bench_result_t *r = &rs.v[0];
		CHECK_STR(t, r->shape, "fleet");
		CHECK_EQ_INT(t, r->nodes, 200);
		CHECK_EQ_INT(t, r->pods, 20000);
		CHECK(t, r->decisions > 0 && r->decisions < 20000);
		CHECK_EQ_INT(t, r->pending, 20000 - r->decisions);
		CHECK(t, r->decisions_per_s > 0);
		CHECK(t, r->cycle_ms >= 0);
		mu_bench_check_t c[4];
		CHECK_EQ_INT(t, mu_bench_checks(r, c, 4), 2);
	}
	mu_bench_results_release(&rs);
}

static void test_scaling(mu_t_t *t)
{
	mu_bench_results_t rs;
	CHECK_EQ_INT(t, run_quick("scaling", &rs), MU_OK);
	CHECK(t, rs.n >= 3);
	for (size_t i = 0; i < rs.n; i++) {
		check_cycle(t, &rs.v[i], "scaling");
		if (i)
			CHECK(t, rs.v[i].nodes > rs.v[i - 1].nodes);
	}
	FILE *f = tmpfile();
	CHECK(t, f != NULL);
	if (f) {
		CHECK_EQ_INT(t, mu_bench_report_html(f, &rs, true), MU_OK);
		long len = ftell(f);
		char *buf = calloc((size_t)len + 1, 1);
		rewind(f);
		CHECK(t, buf && fread(buf, 1, (size_t)len, f) == (size_t)len);
		CHECK(t, buf && strstr(buf, "<svg") && strstr(buf, "How time grows"));
		CHECK(t, buf && strstr(buf, "</html>"));
		free(buf);
		fclose(f);
	}
	mu_bench_results_release(&rs);
}

/* preempt runs bench_preempt: found next to $MUSTER (tests/run.sh sets
 * it) as bench/bench_preempt; without it the record says skipped. */
static void test_preempt(mu_t_t *t)
{
	char bin[4096] = "";
	const char *m = getenv("MUSTER");
	const char *slash = m ? strrchr(m, '/') : NULL;
	if (slash)
		snprintf(bin, sizeof bin, "%.*s/bench/bench_preempt", (int)(slash - m), m);
	mu_bench_opts_t o;
	mu_bench_opts_defaults(&o);
	o.quick = true;
	o.preempt_bin = bin[0] && access(bin, X_OK) == 0 ? bin : NULL;
	mu_bench_results_t rs;
	mu_bench_results_init(&rs);
	CHECK_EQ_INT(t, mu_bench_run("preempt", &o, &rs), MU_OK);
	CHECK_EQ_INT(t, rs.n, o.preempt_bin ? 2 : 1);
	if (rs.n == 2 && o.preempt_bin) { /* uniform, then varied victims */
		check_common(t, &rs.v[0], "preempt");
		check_common(t, &rs.v[1], "preempt-varied");
		CHECK(t, rs.v[0].evicted > 0 && rs.v[0].preemptors > 0);
		CHECK(t, rs.v[1].evicted > 0 && rs.v[1].preemptors > 0);
	} else if (rs.n == 1 && !o.preempt_bin) {
		printf("test_bench: no bench_preempt next to $MUSTER; skipped record checked\n");
		CHECK(t, rs.v[0].skipped[0] != '\0');
	}
	o.preempt_bin = "/nonexistent/bench_preempt";
	rs.n = 0;
	CHECK_EQ_INT(t, mu_bench_run("preempt", &o, &rs), MU_OK);
	CHECK(t, rs.n == 1 && rs.v[0].skipped[0] && !mu_bench_checks(&rs.v[0], NULL, 0));
	mu_bench_results_release(&rs);
}

/* A shape in a forked child comes back whole through the pipe. */
static void test_isolated(mu_t_t *t)
{
	mu_bench_opts_t o;
	mu_bench_opts_defaults(&o);
	o.quick = true;
	mu_bench_results_t rs;
	mu_bench_results_init(&rs);
	CHECK(t, o.isolate);
	CHECK_EQ_INT(t, mu_bench_run("basic", &o, &rs), MU_OK);
	CHECK_EQ_INT(t, rs.n, 1);
	if (rs.n == 1) {
		check_common(t, &rs.v[0], "basic");
		CHECK_EQ_INT(t, rs.v[0].nodes, 200);
	}
	mu_bench_results_release(&rs);
}

static void test_json(mu_t_t *t)
{
	mu_bench_result_t r, back;
	mu_bench_result_clear(&r, "cycle");
	r.nodes = 4000;
	r.pods = 140000;
	r.decisions_per_s = 1234.4;
	r.p50_us = 1.25;
	r.p99_us = 9.5;
	r.peak_rss_mb = 300.5;
	r.cycle_ms = 4.25;
	snprintf(r.skipped, sizeof r.skipped, "a \"quoted\" \\ reason");
	char js[4096];
	json_of(&r, js, sizeof js);
	CHECK(t, strstr(js, "\"gang_pods\"") == NULL); /* absent figures left out */
	CHECK(t, strstr(js, "\"build_ms\"") == NULL);
	CHECK_EQ_INT(t, mu_bench_parse(js, &back), MU_OK);
	CHECK_STR(t, back.shape, "cycle");
	CHECK_EQ_INT(t, back.nodes, 4000);
	CHECK_EQ_INT(t, back.pods, 140000);
	CHECK(t, back.decisions_per_s == 1234);
	CHECK(t, back.p50_us == 1.25 && back.p99_us == 9.5 && back.cycle_ms == 4.25);
	CHECK(t, back.peak_rss_mb == 300.5);
	CHECK_STR(t, back.skipped, r.skipped);
	CHECK(t, isnan(back.build_ms) && back.gang_pods == -1);
	CHECK_EQ_INT(t, mu_bench_parse("[1]", &back), MU_EPARSE);
	CHECK_EQ_INT(t, mu_bench_parse("{\"nodes\": 3}", &back), MU_EPARSE);
	CHECK_EQ_INT(t, mu_bench_parse("not json", &back), MU_EPARSE);
	/* bench_preempt's own line: unknown keys ignored */
	CHECK_EQ_INT(t, mu_bench_parse("{\"shape\":\"preempt\",\"nodes\":5,"
				       "\"preemptor_pods\":1,\"p99_us\":7.5}", &back), MU_OK);
	CHECK(t, back.nodes == 5 && back.p99_us == 7.5);
}

static void test_checks(mu_t_t *t)
{
	mu_bench_result_t r;
	mu_bench_check_t c[4];
	mu_bench_result_clear(&r, "basic");
	r.decisions_per_s = 2e6;
	CHECK_EQ_INT(t, mu_bench_checks(&r, c, 4), 1);
	CHECK(t, mu_bench_check_met(&c[0]));
	r.decisions_per_s = NAN;
	mu_bench_checks(&r, c, 4);
	CHECK(t, !mu_bench_check_met(&c[0]));
	mu_bench_result_clear(&r, "cycle");
	r.cycle_ms = 20;
	r.build_ms = 100;
	CHECK_EQ_INT(t, mu_bench_checks(&r, c, 4), 2);
	CHECK(t, !mu_bench_check_met(&c[0]) && mu_bench_check_met(&c[1]));
	CHECK_EQ_INT(t, mu_bench_checks(&r, c, 1), 1); /* bounded by max */
	mu_bench_result_clear(&r, "gang-topology");
	r.gang_pods = 128; /* no target of its own */
	CHECK_EQ_INT(t, mu_bench_checks(&r, c, 4), 0);
	r.gang_pods = 512;
	r.p99_us = 15000;
	CHECK_EQ_INT(t, mu_bench_checks(&r, c, 4), 1);
	CHECK(t, mu_bench_check_met(&c[0]) && c[0].target == 20000);
	mu_bench_result_clear(&r, "scaling");
	CHECK_EQ_INT(t, mu_bench_checks(&r, c, 4), 0);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_shapes);
	MU_RUN(&t, test_json);
	MU_RUN(&t, test_checks);
	MU_RUN(&t, test_basic);
	MU_RUN(&t, test_basic_mixed);
	MU_RUN(&t, test_gang);
	MU_RUN(&t, test_varied);
	MU_RUN(&t, test_cycle_scale);
	MU_RUN(&t, test_scaling);
	MU_RUN(&t, test_fleet);
	MU_RUN(&t, test_preempt);
	MU_RUN(&t, test_isolated);
	return mu_t_done(&t);
}

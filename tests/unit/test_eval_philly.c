/*
 * test_eval_philly.c - the Philly evaluation (src/eval/eval_philly.c): the
 * window choice and the cluster sizing on a small Philly-format trace
 * built in memory, each policy's engine config, strict order under FIFO,
 * a whole evaluation of a synthetic trace with its writers, and, when
 * ../shared/data is there, the --quick protocol on the real trace (sane
 * figures only; no timing assertions).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "muster/eval_philly.h"
#include "muster/load.h"

#define HOUR (3600 * 1000LL)
#define TRACE "../shared/data/philly/philly.csv"

static bool near(double a, double b, double eps)
{
	return fabs(a - b) <= eps;
}

/* Hours after 2017-10-01 00:00:00 (0 <= h < 24 x 28) as a Philly
 * timestamp. */
static void stamp(char *buf, size_t n, double h)
{
	unsigned s = (unsigned)lround(h * 3600) % (28 * 86400);
	snprintf(buf, n, "2017-10-%02u %02u:%02u:%02u", 1 + s / 86400,
		 s % 86400 / 3600, s % 3600 / 60, s % 60);
}

/* A trace whose busiest 2-hour window starts at 1 h with durations
 * capped at 2 h (36 GPU-hours: 2 GPUs x 2 h and 16 GPUs x 2 h capped from
 * 10 h), and at 4 h without the cap (8 GPUs x 100000 s, tied with the
 * start at 5 h: the earlier wins).  The 0-GPU row is skipped. */
static const char small_trace[] =
	"timestamp,duration,num_gpus,gpu_time,cluster\n"
	"2017-10-01 00:00:00,3600,1,3600,a\n"
	"2017-10-01 01:00:00,7200,2,14400,b\n"
	"2017-10-01 02:30:00,36000,16,576000,a\n"
	"2017-10-01 03:00:00,600,1,600,b\n"
	"2017-10-01 05:00:00,100000,8,800000,c\n"
	"2017-10-01 06:00:00,50,0,0,c\n"
	"2017-10-01 07:00:00,3600,1,3600,a\n";

static int load_text(const char *text, size_t len, mu_specs_t *sp)
{
	mu_diag_t d = {{0}};
	int rc = mu_load_buffer("mem.csv", text, len, NULL, sp, &d);
	if (rc)
		fprintf(stderr, "load: %s\n", d.msg);
	return rc;
}

static void test_pick(mu_t_t *t)
{
	mu_specs_t all;
	mu_specs_init(&all);
	CHECK_EQ_INT(t, load_text(small_trace, sizeof small_trace - 1, &all), MU_OK);
	CHECK_EQ_INT(t, all.njobs, 6);
	mu_time_t start = -1;
	int64_t work = -1;
	CHECK_EQ_INT(t, mu_philly_pick(&all, 2 * HOUR, HOUR, 2 * HOUR, &start, &work), MU_OK);
	CHECK_EQ_INT(t, start, 1 * HOUR);
	CHECK_EQ_INT(t, work, 36 * HOUR);        /* GPU-ms */
	CHECK_EQ_INT(t, mu_philly_pick(&all, 2 * HOUR, HOUR, 0, &start, &work), MU_OK);
	CHECK_EQ_INT(t, start, 4 * HOUR);
	CHECK_EQ_INT(t, work, 8 * 100000 * 1000LL);
	/* A window longer than the trace: it starts at 0 and holds all. */
	CHECK_EQ_INT(t, mu_philly_pick(&all, 100 * HOUR, HOUR, 0, &start, &work), MU_OK);
	CHECK_EQ_INT(t, start, 0);
	CHECK_EQ_INT(t, mu_philly_pick(&all, 0, HOUR, 0, &start, &work), MU_EINVAL);
	CHECK_EQ_INT(t, mu_philly_pick(&all, HOUR, 0, 0, &start, &work), MU_EINVAL);
	mu_specs_release(&all);
}

static void test_size(mu_t_t *t)
{
	int32_t nodes;
	double scale;
	/* 720 GPU-hours over 100 h at 0.9: 8 GPUs, one node, no scaling. */
	mu_philly_size(720 * HOUR, 100 * HOUR, 0.9, 8, 0, &nodes, &scale);
	CHECK_EQ_INT(t, nodes, 1);
	CHECK(t, near(scale, 1.0, 1e-12));
	/* 82.4 GPUs needed: 10.3 nodes round to 10; arrivals 3% slower. */
	mu_philly_size((int64_t)(82.4 * 90 * HOUR), 100 * HOUR, 0.9, 8, 0, &nodes, &scale);
	CHECK_EQ_INT(t, nodes, 10);
	CHECK(t, near(scale, 1.03, 1e-9));
	/* The largest job sets a floor; arrivals then compress. */
	mu_philly_size(72 * HOUR, 100 * HOUR, 0.9, 8, 4, &nodes, &scale);
	CHECK_EQ_INT(t, nodes, 4);
	CHECK(t, near(scale, 72.0 / (100 * 32 * 0.9), 1e-12));
	mu_philly_size(0, 100 * HOUR, 0.9, 8, 0, &nodes, &scale);
	CHECK_EQ_INT(t, nodes, 1);
	CHECK(t, scale == 1);
}

static void test_build(mu_t_t *t)
{
	mu_specs_t all, sp;
	mu_philly_opts_t o;
	mu_philly_window_t w;
	mu_diag_t d = {{0}};
	mu_specs_init(&all);
	mu_specs_init(&sp);
	CHECK_EQ_INT(t, load_text(small_trace, sizeof small_trace - 1, &all), MU_OK);
	mu_philly_opts_defaults(&o);
	o.days = 2.0 / 24;
	o.load = 0.5;
	o.cap = 2 * HOUR;
	CHECK_EQ_INT(t, mu_philly_build(&all, &o, &sp, &w, &d), MU_OK);
	CHECK_EQ_INT(t, w.from_s, 3600);
	CHECK_EQ_INT(t, w.to_s, 3 * 3600);
	CHECK_EQ_INT(t, w.jobs, 2);
	CHECK_EQ_INT(t, w.capped, 1);
	CHECK_EQ_INT(t, w.large_jobs, 1);
	CHECK_EQ_INT(t, w.one_gpu_jobs, 0);
	CHECK_EQ_INT(t, w.max_gpus, 16);
	CHECK_EQ_INT(t, w.work, 36 * HOUR);
	CHECK_EQ_INT(t, w.raw_work, 164 * HOUR);
	/* 36 GPU-h over 2 h at 0.5 needs 36 GPUs: 4.5 nodes round to 5. */
	CHECK_EQ_INT(t, w.nodes, 5);
	CHECK_EQ_INT(t, w.gpus, 40);
	CHECK(t, near(w.offered_raw, 0.45, 1e-12));
	CHECK(t, near(w.scale, 0.9, 1e-12));
	CHECK(t, near(w.offered, 0.5, 1e-9));
	CHECK_EQ_INT(t, w.span, 108 * 60 * 1000LL);
	CHECK_EQ_INT(t, sp.nnodes, 5);
	CHECK_EQ_INT(t, sp.nqueues, 1);
	CHECK_EQ_INT(t, sp.njobs, 2);
	if (sp.njobs == 2 && sp.nqueues == 1 && sp.nnodes == 5) {
		CHECK_STR(t, sp.queues[0].name, "philly");
		CHECK_STR(t, sp.jobs[1].queue, "philly");
		CHECK_EQ_INT(t, sp.jobs[0].submit, 0);
		CHECK_EQ_INT(t, sp.jobs[1].submit, 81 * 60 * 1000LL); /* 1.5 h x 0.9 */
		CHECK_EQ_INT(t, sp.jobs[1].duration, 2 * HOUR);
		CHECK_EQ_INT(t, sp.jobs[1].runtime_estimate, 0);
		CHECK_EQ_INT(t, sp.nodes[4].alloc.v[MU_RES_GPU], 8);
	}
	mu_specs_release(&sp);
	/* A fixed window with no job is an error with a message. */
	mu_specs_init(&sp);
	o.from_s = 8 * 3600;
	CHECK_EQ_INT(t, mu_philly_build(&all, &o, &sp, &w, &d), MU_EINVAL);
	CHECK(t, strstr(d.msg, "no job") != NULL);
	mu_specs_release(&sp);
	mu_specs_release(&all);
}

static void test_policy_configs(mu_t_t *t)
{
	mu_engine_config_t c, def;
	mu_engine_config_defaults(&def);
	CHECK_EQ_INT(t, mu_philly_policy_config(MU_PHILLY_FIFO, &c), MU_OK);
	CHECK_EQ_INT(t, c.backfill, MU_BACKFILL_NONE);
	CHECK_EQ_INT(t, c.order, MU_ORDER_PRIORITY);
	CHECK(t, !c.consolidate);
	CHECK_EQ_INT(t, mu_philly_policy_config(MU_PHILLY_GREEDY, &c), MU_OK);
	CHECK_EQ_INT(t, c.backfill, MU_BACKFILL_GREEDY);
	CHECK_EQ_INT(t, c.order, MU_ORDER_PRIORITY);
	CHECK(t, !c.consolidate);
	CHECK_EQ_INT(t, mu_philly_policy_config(MU_PHILLY_EASY, &c), MU_OK);
	CHECK_EQ_INT(t, c.backfill, MU_BACKFILL_RESERVE);
	CHECK_EQ_INT(t, c.reservations, 1);
	CHECK(t, !c.consolidate);
	CHECK(t, c.preemption); /* a reservation evicts what started in its hole */
	CHECK_EQ_INT(t, mu_philly_policy_config(MU_PHILLY_MUSTER, &c), MU_OK);
	CHECK(t, memcmp(&c, &def, sizeof c) == 0);
	CHECK_EQ_INT(t, c.backfill, MU_BACKFILL_RESERVE);
	CHECK_EQ_INT(t, c.reservations, 4);
	CHECK(t, c.consolidate);
	CHECK_EQ_INT(t, mu_philly_policy_config(MU_PHILLY_SJF, &c), MU_OK);
	CHECK_EQ_INT(t, c.order, MU_ORDER_SJF);
	CHECK_EQ_INT(t, c.backfill, MU_BACKFILL_GREEDY);
	CHECK_EQ_INT(t, mu_philly_policy_config(MU_PHILLY_TIRESIAS, &c), MU_OK);
	CHECK_EQ_INT(t, c.order, MU_ORDER_LAS);
	CHECK(t, c.preemption);
	CHECK(t, c.las_base_gpu_hours == 1);
	CHECK(t, !c.consolidate);
	CHECK_EQ_INT(t, mu_philly_policy_config(MU_PHILLY_ARRIVAL, &c), MU_OK);
	CHECK_EQ_INT(t, c.order, MU_ORDER_PRIORITY); /* muster before issue 21 */
	CHECK(t, c.consolidate && c.reservations == 4);
	CHECK_EQ_INT(t, mu_philly_policy_config(MU_PHILLY_NPOLICIES, &c), MU_EINVAL);
	CHECK_STR(t, mu_philly_policy_name(MU_PHILLY_TIRESIAS), "tiresias");
	CHECK(t, mu_philly_policy_label(MU_PHILLY_NPOLICIES) == NULL);
}

/* A synthetic trace of n jobs over `hours` hours: sizes 1 (mostly) to 32
 * GPUs, durations from 1 minute to 2 hours, from a fixed LCG.  The caller
 * frees the text. */
static char *synth_trace(int n, double hours, size_t *len)
{
	static const int gpus[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 4, 8, 8, 16, 32};
	size_t cap = 64 + (size_t)n * 64;
	char *s = malloc(cap), ts[48];
	uint64_t x = 12345;
	if (!s)
		return NULL;
	size_t k = (size_t)snprintf(s, cap, "timestamp,duration,num_gpus,gpu_time,cluster\n");
	for (int i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		int g = gpus[(x >> 33) % 16];
		long dur = 60 + (long)((x >> 20) % 7200);
		stamp(ts, sizeof ts, hours * i / n);
		k += (size_t)snprintf(s + k, cap - k, "%s,%ld,%d,%ld,vc%d\n", ts, dur, g,
				      dur * g, i % 3);
	}
	*len = k;
	return s;
}

/* A synthetic trace of n jobs over 6 hours and the specs the Philly
 * evaluation builds from it for a quarter-day window.  The specs borrow
 * from the loaded trace, so the three live and go together. */
typedef struct {
	char *text;
	mu_specs_t all, sp;
} synth_t;

/* Fills y (release it with synth_release, whatever the result); false
 * (after a failed check) when the trace could not be built. */
static bool synth_specs(mu_t_t *t, int n, synth_t *y)
{
	size_t len;
	mu_philly_opts_t o;
	mu_philly_window_t w;
	mu_diag_t d = {{0}};
	y->text = synth_trace(n, 6, &len);
	mu_specs_init(&y->all);
	mu_specs_init(&y->sp);
	int rc = y->text ? load_text(y->text, len, &y->all) : MU_ENOMEM;
	mu_philly_opts_defaults(&o);
	o.days = 0.25;
	if (rc == MU_OK)
		rc = mu_philly_build(&y->all, &o, &y->sp, &w, &d);
	CHECK_EQ_INT(t, rc, MU_OK);
	return rc == MU_OK;
}

static void synth_release(synth_t *y)
{
	mu_specs_release(&y->sp);
	mu_specs_release(&y->all);
	free(y->text);
}

/* FIFO starts jobs in submit order (one queue, equal priorities). */
static void test_fifo_order(mu_t_t *t)
{
	synth_t y;
	mu_diag_t d = {{0}};
	if (!synth_specs(t, 300, &y)) {
		synth_release(&y);
		return;
	}
	const mu_specs_t sp = y.sp;
	mu_sim_config_t sc;
	mu_sim_config_defaults(&sc);
	mu_philly_policy_config(MU_PHILLY_FIFO, &sc.engine);
	mu_sim_result_t r;
	CHECK_EQ_INT(t, mu_sim_run(&sp, &sc, &r, &d), MU_OK);
	bool ordered = r.njobs == sp.njobs, waited = false;
	for (size_t i = 1; i < r.njobs; i++) {
		ordered = ordered && r.jobs[i].start_s >= r.jobs[i - 1].start_s;
		waited = waited || r.jobs[i].start_s > r.jobs[i].submit_s;
	}
	CHECK(t, ordered);
	CHECK(t, waited); /* the load is high enough to queue */
	CHECK_EQ_INT(t, r.summary.preemptions, 0);
	mu_sim_result_release(&r);
	synth_release(&y);
}

/* at_end hook: the engine's job records (ids given) at the end. */
static void count_ids(void *ctx, const mu_engine_t *e, mu_time_t now)
{
	(void)now;
	*(int32_t *)ctx = mu_engine_njobs(e);
}

/* The simulator hands finished jobs back to the engine (keep_jobs off, the
 * default): the engine ends with about as many job records as jobs were
 * live at once, not one per job of the trace, and every policy (FIFO,
 * backfill with reservations, LAS with preemption, ...) decides exactly as
 * with every record kept: the same start, end and preemptions per job. */
static void test_sim_forget(mu_t_t *t)
{
	synth_t y;
	mu_diag_t d = {{0}};
	if (!synth_specs(t, 600, &y)) {
		synth_release(&y);
		return;
	}
	const mu_specs_t sp = y.sp;
	for (int p = 0; p < MU_PHILLY_NPOLICIES; p++) {
		mu_sim_result_t r[2];
		int32_t ids[2] = {-1, -1};
		for (int keep = 0; keep < 2; keep++) {
			mu_sim_config_t sc;
			mu_sim_config_defaults(&sc);
			mu_philly_policy_config((mu_philly_policy_t)p, &sc.engine);
			sc.keep_jobs = keep;
			sc.at_end = count_ids;
			sc.at_end_ctx = &ids[keep];
			CHECK_EQ_INT(t, mu_sim_run(&sp, &sc, &r[keep], &d), MU_OK);
		}
		bool same = r[0].njobs == r[1].njobs && r[0].njobs == sp.njobs;
		for (size_t i = 0; same && i < r[0].njobs; i++)
			same = !strcmp(r[0].jobs[i].name, r[1].jobs[i].name) &&
			       r[0].jobs[i].start_s == r[1].jobs[i].start_s &&
			       r[0].jobs[i].end_s == r[1].jobs[i].end_s &&
			       r[0].jobs[i].preemptions == r[1].jobs[i].preemptions;
		same = same && r[0].summary.completed == r[1].summary.completed &&
		       r[0].summary.preemptions == r[1].summary.preemptions;
		if (!same || ids[1] != (int32_t)sp.njobs || ids[0] * 4 > ids[1])
			fprintf(stderr, "sim forget, %s: same=%d, %d records forgetting, %d keeping, "
				"%zu jobs\n", mu_philly_policy_name((mu_philly_policy_t)p), same, ids[0],
				ids[1], sp.njobs);
		CHECK(t, same);
		CHECK_EQ_INT(t, ids[1], (int)sp.njobs);
		CHECK(t, ids[0] > 0 && ids[0] * 4 <= ids[1]); /* records follow the live jobs */
		mu_sim_result_release(&r[0]);
		mu_sim_result_release(&r[1]);
	}
	synth_release(&y);
}

/* The same on the bundled demo (examples/demo: reclaim, preemption and
 * consolidation among equal jobs): forgetting reuses ids, and a tie that
 * was broken by job id must still go to the earlier job. */
static void test_sim_forget_demo(mu_t_t *t)
{
	static const char *const files[] = {"examples/demo/cluster.yaml",
					    "examples/demo/workload.yaml",
					    "examples/demo/jobs.csv"};
	mu_specs_t sp;
	mu_diag_t d = {{0}};
	mu_specs_init(&sp);
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		CHECK_EQ_INT(t, mu_load_file(files[i], NULL, &sp, &d), MU_OK);
	CHECK_EQ_INT(t, mu_specs_validate(&sp, &d), MU_OK);
	mu_sim_result_t r[2];
	int32_t ids[2] = {-1, -1};
	for (int keep = 0; keep < 2; keep++) {
		mu_sim_config_t sc;
		mu_sim_config_defaults(&sc);
		sc.keep_jobs = keep;
		sc.at_end = count_ids;
		sc.at_end_ctx = &ids[keep];
		CHECK_EQ_INT(t, mu_sim_run(&sp, &sc, &r[keep], &d), MU_OK);
	}
	size_t differ = 0;
	for (size_t i = 0; i < r[0].njobs && i < r[1].njobs; i++)
		differ += r[0].jobs[i].start_s != r[1].jobs[i].start_s ||
			  r[0].jobs[i].end_s != r[1].jobs[i].end_s ||
			  r[0].jobs[i].preemptions != r[1].jobs[i].preemptions ||
			  r[0].jobs[i].moves != r[1].jobs[i].moves;
	if (differ || ids[0] >= ids[1])
		fprintf(stderr, "sim forget, demo: %zu of %zu jobs differ; %d records forgetting, "
			"%d keeping\n", differ, r[0].njobs, ids[0], ids[1]);
	CHECK_EQ_INT(t, (int)r[0].njobs, (int)r[1].njobs);
	CHECK_EQ_INT(t, (int)differ, 0);
	CHECK(t, r[0].summary.preemptions == r[1].summary.preemptions &&
		 r[0].summary.moves == r[1].summary.moves);
	CHECK(t, ids[0] > 0 && ids[0] < ids[1]);
	mu_sim_result_release(&r[0]);
	mu_sim_result_release(&r[1]);
	mu_specs_release(&sp);
}

/* The figures of one run are consistent with the window's jobs. */
static void check_run(mu_t_t *t, const mu_philly_run_t *r, const mu_philly_window_t *w)
{
	CHECK_EQ_INT(t, r->jobs, w->jobs);
	CHECK_EQ_INT(t, r->completed, w->jobs);
	CHECK_EQ_INT(t, r->large.n, w->large_jobs);
	CHECK_EQ_INT(t, r->one.n, w->one_gpu_jobs);
	CHECK_EQ_INT(t, r->large.started, r->large.n);
	CHECK(t, r->util_window > 0 && r->util_window <= 1);
	CHECK(t, r->util_run > 0 && r->util_run <= 1);
	CHECK(t, r->wait_mean_s >= 0 && r->wait_p99_s >= 0);
	CHECK(t, r->jct_mean_s >= r->wait_mean_s);
	CHECK(t, r->jct_p99_s >= r->jct_p50_s);
	CHECK(t, r->large.p99_s >= r->large.p50_s && r->one.p99_s >= r->one.p50_s);
	bool sorted = true;
	for (int64_t i = 1; i < r->one.started; i++)
		sorted = sorted && r->one.waits[i] >= r->one.waits[i - 1];
	CHECK(t, sorted);
	CHECK(t, r->jobs_preempted <= r->jobs);
}

/* Reads a stream written by fn into a string; the caller frees it. */
static char *written(const mu_philly_eval_t *ev, int (*fn)(const mu_philly_eval_t *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	int rc = fn(ev, f);
	fclose(f);
	if (rc != MU_OK) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void test_eval_synthetic(mu_t_t *t)
{
	size_t len;
	char *text = synth_trace(400, 6, &len);
	mu_specs_t all;
	if (!text) {
		CHECK(t, text != NULL);
		return;
	}
	mu_philly_opts_t o;
	mu_philly_eval_t ev;
	mu_diag_t d = {{0}};
	mu_specs_init(&all);
	CHECK_EQ_INT(t, load_text(text, len, &all), MU_OK);
	mu_philly_opts_defaults(&o);
	o.days = 0.25;
	CHECK_EQ_INT(t, mu_philly_eval(&all, &o, &ev, &d), MU_OK);
	ev.trace = "synthetic \"trace\".csv";
	CHECK_EQ_INT(t, ev.nruns, MU_PHILLY_NRUNS);
	CHECK(t, ev.win.large_jobs > 0);
	for (size_t i = 0; i < ev.nruns; i++)
		check_run(t, &ev.runs[i], &ev.win);
	const mu_philly_run_t *fh = mu_philly_find(&ev, MU_PHILLY_FIFO, false);
	const mu_philly_run_t *fd = mu_philly_find(&ev, MU_PHILLY_FIFO, true);
	CHECK(t, fh && fd && fh->jct_mean_s == fd->jct_mean_s); /* no estimates used */
	CHECK(t, fh && fh->preemptions == 0 && fh->moves == 0);
	CHECK(t, mu_philly_find(&ev, MU_PHILLY_SJF, false) == NULL);
	size_t rows[MU_PHILLY_NRUNS];
	CHECK_EQ_INT(t, mu_philly_backfill_rows(&ev, rows, MU_PHILLY_NRUNS), 9);
	CHECK_EQ_INT(t, ev.runs[rows[3]].policy, MU_PHILLY_ARRIVAL);
	CHECK_EQ_INT(t, ev.runs[rows[8]].policy, MU_PHILLY_MUSTER);
	CHECK(t, ev.runs[rows[8]].declared);
	CHECK_EQ_INT(t, mu_philly_jct_rows(&ev, rows, MU_PHILLY_NRUNS), 6);
	CHECK_EQ_INT(t, ev.runs[rows[1]].policy, MU_PHILLY_SJF);
	CHECK_EQ_INT(t, ev.runs[rows[2]].policy, MU_PHILLY_TIRESIAS);
	CHECK_EQ_INT(t, ev.runs[rows[3]].policy, MU_PHILLY_ARRIVAL);
	CHECK_EQ_INT(t, ev.nsweep, MU_PHILLY_NSWEEP);
	for (size_t i = 0; i < ev.nsweep; i++) {
		check_run(t, &ev.sweep[i], &ev.win);
		CHECK(t, ev.sweep[i].jct_base_gpu_hours == mu_philly_sweep_bases[i]);
	}
	char *json = written(&ev, mu_philly_write_json), *html = written(&ev, mu_philly_write_html);
	CHECK(t, json && strstr(json, "\"policy\": \"tiresias\""));
	CHECK(t, json && strstr(json, "synthetic \\\"trace\\\".csv"));
	CHECK(t, json && strstr(json, "\"backfill\": [0, 1, 2, 10, 3, 4, 5, 6, 7]"));
	CHECK(t, json && strstr(json, "\"tradeoff\": [") && strstr(json, "\"jct_base_gpu_hours\": 10,"));
	CHECK(t, html && strstr(html, "Trade-off: mean JCT against evictions"));
	CHECK(t, html && strstr(html, "<svg") && strstr(html, "Wait CDF"));
	CHECK(t, html && strstr(html, "synthetic &quot;trace&quot;.csv"));
	CHECK(t, html && strstr(html, "</html>"));
	free(json);
	free(html);
	mu_philly_eval_release(&ev);
	mu_specs_release(&all);
	free(text);
}

/* The --quick protocol on the real trace: sane figures. */
static void test_quick_real(mu_t_t *t)
{
	if (access(TRACE, R_OK) != 0) {
		printf("skipped: ../shared/data not found\n");
		return;
	}
	mu_specs_t all;
	mu_load_opts_t lo;
	mu_philly_opts_t o;
	mu_philly_eval_t ev;
	mu_diag_t d = {{0}};
	mu_specs_init(&all);
	mu_load_opts_defaults(&lo);
	CHECK_EQ_INT(t, mu_load_file(TRACE, &lo, &all, &d), MU_OK);
	CHECK_EQ_INT(t, all.njobs, 82247);
	mu_philly_opts_quick(&o);
	CHECK_EQ_INT(t, mu_philly_eval(&all, &o, &ev, &d), MU_OK);
	CHECK(t, ev.win.jobs > 100);
	CHECK(t, ev.win.to_s - ev.win.from_s == 6 * 3600);
	CHECK(t, near(ev.win.offered, 0.9, 1e-6));
	CHECK(t, ev.win.scale > 0.9 && ev.win.scale < 1.1);
	CHECK_EQ_INT(t, ev.nruns, MU_PHILLY_NRUNS);
	for (size_t i = 0; i < ev.nruns; i++)
		check_run(t, &ev.runs[i], &ev.win);
	mu_philly_eval_release(&ev);
	mu_specs_release(&all);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_pick);
	MU_RUN(&t, test_size);
	MU_RUN(&t, test_build);
	MU_RUN(&t, test_policy_configs);
	MU_RUN(&t, test_fifo_order);
	MU_RUN(&t, test_sim_forget);
	MU_RUN(&t, test_sim_forget_demo);
	MU_RUN(&t, test_eval_synthetic);
	MU_RUN(&t, test_quick_real);
	return mu_t_done(&t);
}

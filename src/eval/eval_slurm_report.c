/*
 * eval_slurm_report.c - the writers of `muster eval slurm`: text tables and
 * a self-contained HTML page (inline CSS and SVG) with the protocol, the
 * slurm.conf that ran, the tables, a bar chart per figure, the wait CDFs
 * of 1-GPU jobs and of multi-node gangs, and GPUs in use over time for
 * muster and the best Slurm variant.
 *
 * Work is O(sides x jobs) plus O(sides x jobs x samples) for the time
 * series (at most 400 samples); a few arrays are allocated for the
 * CDFs.  Text from outside (the trace path, slurm.conf) is escaped.  Write
 * errors are checked once, at the end.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/slurm_int.h"
#include "muster/report.h"

#define W 1000.0
#define CDF_H 300.0
#define TS_N 400

static const char *dur(char *buf, size_t n, double s)
{
	mu__fmt_duration(buf, n, s);
	return buf;
}

/* --- Text ------------------------------------------------------------------------ */

int mu_slurm_write_text_protocol(const mu_slurm_eval_t *ev, FILE *f)
{
	const mu_philly_window_t *w = &ev->win;
	char a[32], b[32];
	fprintf(f, "workload: %s, trace hours %.1f to %.1f (%s), %lld jobs, largest %d GPUs\n",
		ev->trace ? ev->trace : "-", w->from_s / 3600.0, w->to_s / 3600.0,
		ev->opts.from_s >= 0 ? "fixed" : "the one with the most multi-node gangs", (long long)w->jobs,
		(int)w->max_gpus);
	fprintf(f, "cluster: %d nodes x %d GPUs, offered load %.3f (arrival times x %.4f); "
		"durations capped at %s\n", (int)w->nodes, (int)ev->opts.gpus_per_node,
		w->offered, w->scale, dur(a, sizeof a, (double)ev->opts.cap / 1000));
	fprintf(f, "time: %.0f trace seconds per real second; arrivals over %s real (%s trace)\n",
		ev->opts.compress, dur(a, sizeof a, ev->span_s),
		dur(b, sizeof b, ev->span_s * ev->opts.compress));
	if (ev->slurm_version[0])
		fprintf(f, "Slurm: %s, sched/backfill, select/cons_tres, priority/basic\n",
			ev->slurm_version);
	return ferror(f) ? MU_EIO : MU_OK;
}

int mu_slurm_write_text_tables(const mu_slurm_eval_t *ev, FILE *f)
{
	char a[32], b[32];
	fprintf(f, "\nutilization and waits by gang size (p50 / p99, trace time)\n");
	fprintf(f, "  %-34s %6s", "scheduler", "util");
	for (int k = 0; k < MU_SLURM_NCLASSES; k++)
		fprintf(f, " %21s", mu_slurm_class_label(k));
	fputc('\n', f);
	fprintf(f, "  %-34s %6s", "", "");
	for (int k = 0; k < MU_SLURM_NCLASSES; k++)
		fprintf(f, " %21lld", (long long)ev->sides[0].cls[k].n);
	fprintf(f, "  (jobs)\n");
	for (size_t i = 0; i < ev->nsides; i++) {
		const mu_slurm_side_t *s = &ev->sides[i];
		fprintf(f, "  %-34.34s %5.1f%%", s->label, s->util * 100);
		for (int k = 0; k < MU_SLURM_NCLASSES; k++) {
			char cell[80];
			snprintf(cell, sizeof cell, "%s / %s", dur(a, sizeof a, s->cls[k].p50_s),
				 dur(b, sizeof b, s->cls[k].p99_s));
			fprintf(f, " %21s", s->cls[k].started ? cell : "-");
		}
		fprintf(f, "%s\n", (int)i == ev->best_slurm ? "  (best Slurm)" : "");
	}
	fprintf(f, "\nJCT, backfill and start estimates (trace time)\n");
	fprintf(f, "  %-34s %9s %9s %9s %8s %8s %7s %10s %10s %10s %7s %8s\n", "scheduler",
		"mean JCT", "p50 JCT", "p99 JCT", "out of", "Slurm", "est.", "|err| p50",
		"|err| p90", "mean err", "within", "evicted/");
	fprintf(f, "  %-34s %9s %9s %9s %8s %8s %7s %10s %10s %10s %7s %8s\n", "", "", "", "",
		"order", "bf", "jobs", "", "", "(+ late)", "10 min", "moved");
	for (size_t i = 0; i < ev->nsides; i++) {
		const mu_slurm_side_t *s = &ev->sides[i];
		char c1[32], d1[32], e1[32], g1[40], bf[32], ev_[32];
		g1[0] = s->est_bias_s < 0 ? '-' : '+';
		mu__fmt_duration(g1 + 1, sizeof g1 - 1, fabs(s->est_bias_s));
		snprintf(bf, sizeof bf, "%lld", (long long)s->by_backfill);
		snprintf(ev_, sizeof ev_, "%lld/%lld", (long long)s->preemptions,
			 (long long)s->moves);
		fprintf(f, "  %-34.34s %9s %9s %9s %8lld %8s %7lld %10s %10s %10s %6.0f%% %8s\n",
			s->label, dur(a, sizeof a, s->jct_mean_s), dur(b, sizeof b, s->jct_p50_s),
			dur(c1, sizeof c1, s->jct_p99_s), (long long)s->out_of_order,
			s->is_slurm ? bf : "-", (long long)s->est_n,
			s->est_n ? dur(d1, sizeof d1, s->est_p50_s) : "-",
			s->est_n ? dur(e1, sizeof e1, s->est_p90_s) : "-", s->est_n ? g1 : "-",
			s->est_within * 100,
			s->is_slurm ? "-" : ev_);
	}
	if (ev->slurm_version[0])
		fprintf(f, "\nSlurm: %s, sched/backfill, select/cons_tres, priority/basic\n",
			ev->slurm_version);
	return ferror(f) ? MU_EIO : MU_OK;
}

/* --- HTML ------------------------------------------------------------------------ */

/* Rules of this page beyond the shared ones (src/report/page.c). */
static const char slurm_css[] =
	"pre{font-size:11px;background:#f9fafb;padding:8px;overflow-x:auto}\n";

static void html_protocol(const mu_slurm_eval_t *ev, FILE *f)
{
	const mu_philly_window_t *w = &ev->win;
	fputs("<section>\n<h2>Protocol</h2>\n<p class=\"cap\">Trace ", f);
	mu__html_text(f, ev->trace ? ev->trace : "(unnamed)", 0);
	fprintf(f, ", trace hours %.1f to %.1f: %lld jobs (largest %d GPUs) on %d nodes of "
		"%d GPUs, offered load %.3f.  Durations capped at ", w->from_s / 3600.0,
		w->to_s / 3600.0, (long long)w->jobs, (int)w->max_gpus, (int)w->nodes,
		(int)ev->opts.gpus_per_node, w->offered);
	mu__put_dur(f, (double)ev->opts.cap / 1000);
	fprintf(f, ".  Time compressed %.0f to 1; every figure below is in trace time.  "
		"Each job is <code>sbatch --wrap \"sleep T\"</code> with its nodes and GPUs and "
		"a time limit of T rounded up to whole minutes, which muster also gets as "
		"the job's declared runtime estimate.", ev->opts.compress);
	if (ev->slurm_version[0]) {
		fputs("  Slurm ", f);
		mu__html_text(f, ev->slurm_version, 0);
		fputs(".", f);
	}
	fputs("</p>\n", f);
	if (ev->slurm_conf[0]) {
		fputs("<h3>slurm.conf of the last Slurm run</h3>\n<pre>", f);
		mu__html_text(f, ev->slurm_conf, 0);
		fputs("</pre>\n", f);
	}
	fputs("</section>\n", f);
}

static void html_table(const mu_slurm_eval_t *ev, FILE *f)
{
	fputs("<table>\n<thead><tr><th>scheduler</th><th>GPU util.</th>", f);
	for (int k = 0; k < MU_SLURM_NCLASSES; k++) {
		fputs("<th>", f);
		mu__html_text(f, mu_slurm_class_label(k), 0);
		fputs(" wait p50 / p99</th>", f);
	}
	fputs("<th>mean JCT</th><th>p99 JCT</th><th>out of order</th><th>Slurm "
	      "Scheduler=Backfill</th><th>estimates</th><th>|err| p50</th><th>|err| p90</th>"
	      "<th>mean err (+ late)</th>"
	      "</tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < ev->nsides; i++) {
		const mu_slurm_side_t *s = &ev->sides[i];
		fputs("<tr><td>", f);
		mu__html_text(f, s->label, 0);
		if ((int)i == ev->best_slurm)
			fputs(" (best Slurm)", f);
		fputs("</td><td>", f);
		mu__put_pct(f, s->util);
		for (int k = 0; k < MU_SLURM_NCLASSES; k++) {
			fputs("</td><td>", f);
			mu__put_dur(f, s->cls[k].p50_s);
			fputs(" / ", f);
			mu__put_dur(f, s->cls[k].p99_s);
		}
		fputs("</td><td>", f);
		mu__put_dur(f, s->jct_mean_s);
		fputs("</td><td>", f);
		mu__put_dur(f, s->jct_p99_s);
		fputs("</td><td>", f);
		mu__put_count(f, s->out_of_order);
		fputs("</td><td>", f);
		if (s->is_slurm)
			mu__put_count(f, s->by_backfill);
		else
			fputs("-", f);
		fputs("</td><td>", f);
		mu__put_count(f, s->est_n);
		fputs("</td><td>", f);
		mu__put_dur(f, s->est_p50_s);
		fputs("</td><td>", f);
		mu__put_dur(f, s->est_p90_s);
		fputs(s->est_bias_s < 0 ? "</td><td>&minus;" : "</td><td>+", f);
		mu__put_dur(f, fabs(s->est_bias_s));
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody>\n</table>\n", f);
}

typedef enum metric { M_UTIL, M_P50, M_P99, M_JCT, M_EST } metric_t;

static double value(const mu_slurm_side_t *s, metric_t m, int k)
{
	switch (m) {
	case M_UTIL: return s->util;
	case M_P50: return s->cls[k].p50_s;
	case M_P99: return s->cls[k].p99_s;
	case M_JCT: return s->jct_mean_s;
	case M_EST: return s->est_p50_s;
	}
	return 0;
}

/* One bar per side.  Durations are drawn in minutes or hours. */
static void bars(const mu_slurm_eval_t *ev, FILE *f, metric_t m, int k, const char *title)
{
	mu__svg_bar_t b[MU_SLURM_MAX_VARIANTS + 2];
	char notes[MU_SLURM_MAX_VARIANTS + 2][32];
	double max = 0, unit = 1;
	const char *xt = NULL;
	for (size_t i = 0; i < ev->nsides; i++)
		max = fmax(max, value(&ev->sides[i], m, k));
	if (m != M_UTIL) {
		unit = max < 2 * 3600 ? 60 : 3600;
		xt = max < 2 * 3600 ? "minutes" : "hours";
	}
	for (size_t i = 0; i < ev->nsides; i++) {
		double v = value(&ev->sides[i], m, k);
		if (m == M_UTIL)
			mu__fmt_pct(notes[i], sizeof notes[i], v, 1);
		else
			mu__fmt_duration(notes[i], sizeof notes[i], v);
		b[i] = (mu__svg_bar_t){ev->sides[i].label, v / unit, notes[i]};
	}
	fputs("<h3>", f);
	mu__html_text(f, title, 0);
	fputs("</h3>\n", f);
	mu__svg_hbars(f, W, b, ev->nsides, m == M_UTIL ? MU__SVG_PCT : MU__SVG_NUM, xt, title);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The wait CDF of class k, one line per side.  Allocates the waits of
 * every side (jobs x sides doubles); draws nothing when that fails. */
static void cdf_chart(const mu_slurm_eval_t *ev, FILE *f, int k, const char *title)
{
	size_t n = ev->njobs ? ev->njobs : 1, ns = ev->nsides;
	double *v = malloc(n * ns * sizeof *v);
	mu__svg_cdf_t cd[MU_SLURM_MAX_VARIANTS + 2];
	if (!v)
		return;
	for (size_t s = 0; s < ns; s++) {
		size_t cnt = 0;
		for (size_t i = 0; i < ev->njobs; i++) {
			const mu_slurm_rec_t *r = &ev->sides[s].recs[i];
			if (mu_slurm_class_of(ev->jobs[i].gpus) != k || r->start_s < 0)
				continue;
			v[s * n + cnt++] = fmax(0, r->start_s - r->submit_s) * ev->opts.compress;
		}
		qsort(v + s * n, cnt, sizeof *v, cmp_d);
		cd[s] = (mu__svg_cdf_t){v + s * n, cnt, ev->sides[s].label};
	}
	mu__svg_wait_cdf(f, W, CDF_H, title, cd, ns);
	free(v);
}

/* GPUs in use over time (trace hours) of muster's default and the best
 * Slurm side. */
typedef struct ts {
	double t[TS_N], g[TS_N];
} ts_t;

static void ts_point(const void *ctx, size_t i, double *x, double *y)
{
	const ts_t *t = ctx;
	*x = t->t[i];
	*y = t->g[i];
}

static void ts_fill(const mu_slurm_eval_t *ev, const mu_slurm_side_t *s, double end,
		    ts_t *t)
{
	for (int k = 0; k < TS_N; k++) {
		double at = end * k / (TS_N - 1), g = 0;
		for (size_t i = 0; i < ev->njobs; i++) {
			const mu_slurm_rec_t *r = &s->recs[i];
			if (r->start_s >= 0 && r->start_s <= at && (r->end_s < 0 || r->end_s > at))
				g += ev->jobs[i].gpus;
		}
		t->t[k] = at * ev->opts.compress / 3600;
		t->g[k] = g;
	}
}

static void ts_chart(const mu_slurm_eval_t *ev, FILE *f)
{
	const mu_slurm_side_t *a = &ev->sides[0];
	const mu_slurm_side_t *b = ev->best_slurm >= 0 ? &ev->sides[ev->best_slurm] : NULL;
	double end = 0;
	for (size_t s = 0; s < ev->nsides; s++)
		end = fmax(end, ev->sides[s].makespan_s / ev->opts.compress);
	ts_t *ta = malloc(sizeof *ta), *tb = malloc(sizeof *tb);
	if (!ta || !tb || end <= 0) {
		free(ta);
		free(tb);
		return;
	}
	ts_fill(ev, a, end, ta);
	if (b)
		ts_fill(ev, b, end, tb);
	const char *title = "GPUs in use (the dashed line: the end of arrivals)";
	mu__svg_axis_t ax = {MU__SVG_NUM, "trace hours", 0, NULL, NULL, 0, true};
	mu__svg_axis_t ay = {MU__SVG_NUM, "GPUs", 0, NULL, NULL, 0, true};
	mu__svg_plot_t p;
	mu__svg_plot_init(&p, W, CDF_H, 0, end * ev->opts.compress / 3600, 0,
			  (double)ev->win.gpus);
	fputs("<h3>", f);
	mu__html_text(f, title, 0);
	fputs("</h3>\n", f);
	mu__svg_open(f, W, CDF_H, title);
	mu__svg_axes(f, &p, &ax, &ay);
	mu__svg_series(f, &p, ts_point, ta, TS_N, "s0", false);
	if (b)
		mu__svg_series(f, &p, ts_point, tb, TS_N, "s2", false);
	mu__svg_marker(f, &p, true, ev->span_s * ev->opts.compress / 3600, "arrivals end",
		       "s7", 0);
	const char *names[2] = {a->label, b ? b->label : ""}, *cls[2] = {"s0", "s2"};
	mu__svg_legend(f, p.px + 8, 14, names, cls, b ? 2 : 1);
	mu__svg_close(f);
	free(ta);
	free(tb);
}

int mu_slurm_write_html(const mu_slurm_eval_t *ev, FILE *f)
{
	mu__report_page_open(f, "muster eval slurm", slurm_css);
	fputs("<h1>muster eval slurm</h1>\n"
	      "<p class=\"cap\">The same jobs through Slurm's backfill and through "
	      "muster's (docs/evaluation.md, &ldquo;Slurm&rdquo;).</p>\n", f);
	html_protocol(ev, f);
	fputs("<section>\n<h2>Side by side</h2>\n<p class=\"cap\">GPU utilization while jobs "
	      "arrive; waits are start minus submit; JCT is end minus submit; <em>out of "
	      "order</em> counts jobs that started while a job ahead of them in the queue "
	      "still waited (backfilled, by the same rule for both); <em>estimates</em> are "
	      "each waiting job's first expected start (Slurm: squeue's start time; muster: "
	      "the engine's expected start) against its real start.</p>\n", f);
	html_table(ev, f);
	bars(ev, f, M_UTIL, 0, "GPU utilization while jobs arrive");
	for (int k = 0; k < MU_SLURM_NCLASSES; k++) {
		char t[96];
		snprintf(t, sizeof t, "p99 wait, %s", mu_slurm_class_label(k));
		bars(ev, f, M_P99, k, t);
	}
	bars(ev, f, M_P50, 0, "p50 wait, 1 GPU");
	bars(ev, f, M_JCT, 0, "Mean JCT");
	bars(ev, f, M_EST, 0, "Start estimates: median |estimate - start|");
	cdf_chart(ev, f, 0, "Wait CDF, 1-GPU jobs");
	cdf_chart(ev, f, 3, "Wait CDF, multi-node gangs (>8 GPUs)");
	ts_chart(ev, f);
	fputs("</section>\n", f);
	mu__report_page_close(f);
	return ferror(f) ? MU_EIO : MU_OK;
}

/*
 * eval_philly_report.c - the writers of `muster eval philly`: every figure
 * of an evaluation (mu_philly_eval_t) as one JSON object, and a
 * self-contained HTML page (inline CSS and SVG, nothing fetched) with the
 * protocol, one table per experiment, a bar chart per metric across the
 * policies and the wait-time CDFs of large and 1-GPU jobs.
 *
 * Work is O(runs x jobs) for the CDFs (each series is downsampled by the
 * SVG helpers); nothing is allocated.  The trace path is the only text
 * from outside and is escaped.  Write errors are checked once, at the end.
 */
#include <math.h>
#include <string.h>

#include "muster/eval_philly.h"
#include "muster/report.h"

#define W 1000.0     /* page width of the charts, px */
#define CDF_H 300.0  /* height of a CDF chart, px */

static const char *const short_names[MU_PHILLY_NPOLICIES] = {
	"FIFO", "greedy", "EASY", "muster", "SJF", "Tiresias", "arrival",
};

/* --- JSON ------------------------------------------------------------------ */

static const char *backfill_name(mu_backfill_t b)
{
	return b == MU_BACKFILL_NONE ? "none" : b == MU_BACKFILL_GREEDY ? "greedy" : "reserve";
}

static const char *order_name(mu_order_t o)
{
	const char *n = mu_order_name(o);
	return n ? n : "?";
}

static void json_class(FILE *f, const char *key, const mu_philly_class_t *c)
{
	fprintf(f, "\"%s\": {\"jobs\": %lld, \"started\": %lld, \"mean_wait_s\": %.3f, "
		"\"p50_wait_s\": %.3f, \"p99_wait_s\": %.3f, \"completed\": %lld, "
		"\"mean_jct_s\": %.3f}", key, (long long)c->n, (long long)c->started,
		c->mean_s, c->p50_s, c->p99_s, (long long)c->completed, c->jct_mean_s);
}

/* One run: its policy's engine settings, then its figures. */
static void json_run(FILE *f, const mu_philly_run_t *r)
{
	mu_engine_config_t c;
	mu_philly_policy_config(r->policy, &c);
	fprintf(f, "    {\"policy\": \"%s\", \"label\": \"%s\", \"estimates\": \"%s\",\n"
		"     \"engine\": {\"backfill\": \"%s\", \"reservations\": %d, \"order\": \"%s\", "
		"\"las_base_gpu_hours\": %.3g, \"jct_base_gpu_hours\": %.6g, "
		"\"preemption\": %s, \"consolidate\": %s, "
		"\"min_runtime_s\": %.3f},\n", mu_philly_policy_name(r->policy),
		mu_philly_policy_label(r->policy), r->declared ? "declared" : "history",
		backfill_name(c.backfill), (int)c.reservations, order_name(c.order),
		c.las_base_gpu_hours, r->jct_base_gpu_hours, c.preemption ? "true" : "false",
		c.consolidate ? "true" : "false", (double)c.min_runtime / 1000);
	fprintf(f, "     \"gpu_utilization\": %.6f, \"gpu_utilization_run\": %.6f, "
		"\"makespan_s\": %.3f, \"jobs\": %lld, \"completed\": %lld,\n"
		"     \"mean_wait_s\": %.3f, \"p99_wait_s\": %.3f, \"mean_jct_s\": %.3f, "
		"\"p50_jct_s\": %.3f, \"p99_jct_s\": %.3f,\n     ", r->util_window,
		r->util_run, r->makespan_s, (long long)r->jobs, (long long)r->completed,
		r->wait_mean_s, r->wait_p99_s, r->jct_mean_s, r->jct_p50_s, r->jct_p99_s);
	json_class(f, "large", &r->large);
	fputs(",\n     ", f);
	json_class(f, "one_gpu", &r->one);
	fprintf(f, ",\n     \"preemptions\": %lld, \"moves\": %lld, \"jobs_preempted\": %lld, "
		"\"cycles\": %lld, \"engine_s\": %.3f, \"wall_s\": %.3f}",
		(long long)r->preemptions, (long long)r->moves, (long long)r->jobs_preempted,
		(long long)r->cycles, r->engine_s, r->wall_s);
}

static void json_rows(FILE *f, const size_t *rows, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%zu", i ? ", " : "", rows[i]);
	fputc(']', f);
}

int mu_philly_write_json(const mu_philly_eval_t *ev, FILE *f)
{
	if (!ev || !f)
		return MU_EINVAL;
	const mu_philly_opts_t *o = &ev->opts;
	const mu_philly_window_t *w = &ev->win;
	size_t rows[MU_PHILLY_NRUNS], n;
	fputs("{\n  \"trace\": ", f);
	mu__json_str(f, ev->trace ? ev->trace : "");
	fprintf(f, ",\n  \"protocol\": {\"days\": %.6g, \"load\": %.6g, \"cap_s\": %.3f, "
		"\"step_s\": %.3f, \"fixed_from\": %s, \"checkpoint_cost_s\": %.3f, "
		"\"gpus_per_node\": %d, \"seed\": %llu, \"queues\": 1, \"large_gpus\": %d},\n",
		o->days, o->load, (double)o->cap / 1000, (double)o->step / 1000,
		o->from_s >= 0 ? "true" : "false", (double)o->checkpoint_cost / 1000,
		(int)o->gpus_per_node, (unsigned long long)o->seed, MU_PHILLY_LARGE_GPUS);
	fprintf(f, "  \"window\": {\"from_s\": %lld, \"to_s\": %lld, \"jobs\": %lld, "
		"\"capped\": %lld, \"large_jobs\": %lld, \"one_gpu_jobs\": %lld, "
		"\"max_gpus\": %d,\n    \"gpu_hours\": %.3f, \"raw_gpu_hours\": %.3f, "
		"\"nodes\": %d, \"gpus\": %lld, \"offered_raw\": %.6f, \"scale\": %.6f, "
		"\"offered\": %.6f, \"span_s\": %.3f},\n  \"runs\": [\n",
		(long long)w->from_s, (long long)w->to_s, (long long)w->jobs,
		(long long)w->capped, (long long)w->large_jobs, (long long)w->one_gpu_jobs,
		(int)w->max_gpus, (double)w->work / 3.6e6, (double)w->raw_work / 3.6e6,
		(int)w->nodes, (long long)w->gpus, w->offered_raw, w->scale, w->offered,
		(double)w->span / 1000);
	for (size_t i = 0; i < ev->nruns; i++) {
		json_run(f, &ev->runs[i]);
		fputs(i + 1 < ev->nruns ? ",\n" : "\n", f);
	}
	fputs("  ],\n  \"experiments\": {\"backfill\": ", f);
	n = mu_philly_backfill_rows(ev, rows, MU_PHILLY_NRUNS);
	json_rows(f, rows, n);
	fputs(", \"jct\": ", f);
	n = mu_philly_jct_rows(ev, rows, MU_PHILLY_NRUNS);
	json_rows(f, rows, n);
	fputs("},\n  \"tradeoff\": [\n", f);
	for (size_t i = 0; i < ev->nsweep; i++) {
		json_run(f, &ev->sweep[i]);
		fputs(i + 1 < ev->nsweep ? ",\n" : "\n", f);
	}
	fprintf(f, "  ],\n  \"wall_s\": %.3f\n}\n", ev->wall_s);
	return ferror(f) ? MU_EIO : MU_OK;
}

/* --- HTML: tables ---------------------------------------------------------- */


/* The first cells of a row: the policy and where estimates came from. */
static void row_head(FILE *f, const mu_philly_run_t *r)
{
	fputs("<tr><td>", f);
	mu__html_text(f, mu_philly_policy_label(r->policy), 0);
	fprintf(f, "</td><td class=\"t\">%s</td>", r->declared ? "declared" : "history");
}

static void html_protocol(FILE *f, const mu_philly_eval_t *ev)
{
	const mu_philly_window_t *w = &ev->win;
	const mu_philly_opts_t *o = &ev->opts;
	fputs("<section>\n<h2>Protocol</h2>\n<p class=\"cap\">Trace ", f);
	mu__html_text(f, ev->trace ? ev->trace : "(unnamed)", 0);
	fprintf(f, ".  Window: trace hours %.1f to %.1f after its first row (%s).  "
		"Every job in one queue; gangs above %d GPUs are pods of %d GPUs.  "
		"Durations capped at ", w->from_s / 3600.0, w->to_s / 3600.0,
		o->from_s >= 0 ? "fixed" : "the busiest by capped GPU-hours of arrivals",
		(int)o->gpus_per_node, (int)o->gpus_per_node);
	if (o->cap > 0)
		mu__put_dur(f, (double)o->cap / 1000);
	else
		fputs("nothing", f);
	fputs("; checkpoint cost ", f);
	mu__put_dur(f, (double)o->checkpoint_cost / 1000);
	fprintf(f, " per suspension or move; seed %llu.</p>\n<table>\n<tbody>\n",
		(unsigned long long)o->seed);
	fputs("<tr><td>jobs</td><td>", f);
	mu__put_count(f, w->jobs);
	fprintf(f, " (%lld capped, %lld of &ge; %d GPUs, %lld of 1 GPU, largest %d GPUs)"
		"</td></tr>\n<tr><td>GPU-hours offered</td><td>%.0f (%.0f before the cap)"
		"</td></tr>\n", (long long)w->capped, (long long)w->large_jobs,
		MU_PHILLY_LARGE_GPUS, (long long)w->one_gpu_jobs, (int)w->max_gpus,
		(double)w->work / 3.6e6, (double)w->raw_work / 3.6e6);
	fprintf(f, "<tr><td>cluster</td><td>%d nodes &times; %d GPUs = %lld GPUs</td></tr>\n"
		"<tr><td>offered load</td><td>%.3f at this size; arrival times &times; %.4f "
		"&rarr; %.3f over ", (int)w->nodes, (int)o->gpus_per_node,
		(long long)w->gpus, w->offered_raw, w->scale, w->offered);
	mu__put_dur(f, (double)w->span / 1000);
	fputs("</td></tr>\n</tbody>\n</table>\n</section>\n", f);
}

static void table_backfill(FILE *f, const mu_philly_eval_t *ev, const size_t *rows, size_t n)
{
	fputs("<table>\n<thead><tr><th>Policy</th><th class=\"t\">Estimates</th>"
	      "<th>GPU util.</th><th>wait &ge;16: mean</th><th>p99</th>"
	      "<th>wait 1 GPU: mean</th><th>wait all: mean</th><th>pods evicted</th>"
	      "<th>moved</th></tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < n; i++) {
		const mu_philly_run_t *r = &ev->runs[rows[i]];
		row_head(f, r);
		fputs("<td>", f);
		mu__put_pct(f, r->util_window);
		const double d[] = {r->large.mean_s, r->large.p99_s, r->one.mean_s, r->wait_mean_s};
		for (size_t k = 0; k < sizeof d / sizeof *d; k++) {
			fputs("</td><td>", f);
			mu__put_dur(f, d[k]);
		}
		fputs("</td><td>", f);
		mu__put_count(f, r->preemptions);
		fputs("</td><td>", f);
		mu__put_count(f, r->moves);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody>\n</table>\n", f);
}

static void table_jct(FILE *f, const mu_philly_eval_t *ev, const size_t *rows, size_t n)
{
	fputs("<table>\n<thead><tr><th>Policy</th><th class=\"t\">Estimates</th>"
	      "<th>mean JCT</th><th>p50 JCT</th><th>p99 JCT</th><th>&ge;16 p99 wait</th>"
	      "<th>&ge;16 mean JCT</th><th>GPU util.</th><th>pods evicted</th>"
	      "<th>jobs preempted</th><th>moved</th></tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < n; i++) {
		const mu_philly_run_t *r = &ev->runs[rows[i]];
		row_head(f, r);
		const double d[] = {r->jct_mean_s, r->jct_p50_s, r->jct_p99_s, r->large.p99_s,
				    r->large.jct_mean_s};
		for (size_t k = 0; k < sizeof d / sizeof *d; k++) {
			fputs("<td>", f);
			mu__put_dur(f, d[k]);
			fputs("</td>", f);
		}
		fputs("<td>", f);
		mu__put_pct(f, r->util_window);
		const int64_t c[] = {r->preemptions, r->jobs_preempted, r->moves};
		for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
			fputs("</td><td>", f);
			mu__put_count(f, c[k]);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody>\n</table>\n", f);
}

/* --- HTML: charts ---------------------------------------------------------- */

typedef enum metric {
	M_UTIL, M_LARGE_MEAN, M_LARGE_P99, M_ONE_MEAN, M_JCT_MEAN, M_JCT_P99,
	M_LARGE_JCT, M_EVICTED,
} metric_t;

static double metric_value(const mu_philly_run_t *r, metric_t m)
{
	switch (m) {
	case M_UTIL: return r->util_window;
	case M_LARGE_MEAN: return r->large.mean_s;
	case M_LARGE_P99: return r->large.p99_s;
	case M_ONE_MEAN: return r->one.mean_s;
	case M_JCT_MEAN: return r->jct_mean_s;
	case M_JCT_P99: return r->jct_p99_s;
	case M_LARGE_JCT: return r->large.jct_mean_s;
	case M_EVICTED: return (double)r->preemptions;
	}
	return 0;
}

/* The unit durations up to max_s are best read in: seconds per unit and
 * its axis title. */
static double dur_unit(double max_s, const char **title)
{
	if (max_s < 2 * 3600) {
		*title = "minutes";
		return 60;
	}
	if (max_s < 3 * 86400) {
		*title = "hours";
		return 3600;
	}
	*title = "days";
	return 86400;
}

/* One bar chart: metric m of each row, labelled "POLICY · ESTIMATES".
 * Durations are drawn in minutes, hours or days (whole ticks), with the
 * exact figure as the bar's note. */
static void chart_bars(FILE *f, const mu_philly_eval_t *ev, const size_t *rows,
		       size_t n, metric_t m, mu__svg_fmt_t fmt, const char *title)
{
	mu__svg_bar_t bars[MU_PHILLY_NRUNS];
	char labels[MU_PHILLY_NRUNS][40], notes[MU_PHILLY_NRUNS][32];
	const char *xtitle = NULL;
	double max = 0, unit = 1;
	n = n < MU_PHILLY_NRUNS ? n : MU_PHILLY_NRUNS;
	for (size_t i = 0; i < n; i++)
		max = fmax(max, metric_value(&ev->runs[rows[i]], m));
	if (fmt == MU__SVG_DUR)
		unit = dur_unit(max, &xtitle);
	for (size_t i = 0; i < n; i++) {
		const mu_philly_run_t *r = &ev->runs[rows[i]];
		double v = metric_value(r, m);
		snprintf(labels[i], sizeof labels[i], "%s \xc2\xb7 %s", short_names[r->policy],
			 r->declared ? "declared" : "history");
		if (fmt == MU__SVG_PCT)
			mu__fmt_pct(notes[i], sizeof notes[i], v, 1);
		else if (fmt == MU__SVG_DUR)
			mu__fmt_duration(notes[i], sizeof notes[i], v);
		else
			mu__fmt_count(notes[i], sizeof notes[i], (int64_t)llround(v));
		bars[i] = (mu__svg_bar_t){labels[i], v / unit, notes[i]};
	}
	fputs("<h3>", f);
	mu__html_text(f, title, 0);
	fputs("</h3>\n", f);
	mu__svg_hbars(f, W, bars, n, fmt == MU__SVG_DUR ? MU__SVG_NUM : fmt, xtitle, title);
}

/* The wait CDF of one class (large when `large`) for each row: one line
 * per row, coloured as the row's bars are. */
static void chart_cdf(FILE *f, const mu_philly_eval_t *ev, const size_t *rows,
		      size_t n, bool large, const char *title)
{
	mu__svg_cdf_t cd[MU_PHILLY_NRUNS];
	char nbuf[MU_PHILLY_NRUNS][40];
	if (n > MU_PHILLY_NRUNS)
		n = MU_PHILLY_NRUNS;
	for (size_t i = 0; i < n; i++) {
		const mu_philly_run_t *r = &ev->runs[rows[i]];
		const mu_philly_class_t *c = large ? &r->large : &r->one;
		snprintf(nbuf[i], sizeof nbuf[i], "%s (%lld jobs)", short_names[r->policy],
			 (long long)c->started);
		cd[i] = (mu__svg_cdf_t){c->waits, (size_t)c->started, nbuf[i]};
	}
	mu__svg_wait_cdf(f, W, CDF_H, title, cd, n);
}

/* The trade-off curve: mean JCT against pods evicted, one point per base
 * of muster's JCT levels (joined in base order), with the baselines as
 * single points. */
typedef struct tpts {
	const mu_philly_run_t *r;
	size_t n;
} tpts_t;

static void trade_point(const void *ctx, size_t i, double *x, double *y)
{
	const tpts_t *t = ctx;
	*x = log10(1.0 + (double)t->r[i].preemptions);
	*y = t->r[i].jct_mean_s / 3600;
}

static void chart_tradeoff(FILE *f, const mu_philly_eval_t *ev)
{
	static const double tv[] = {0, 1, 2, 3, 4, 5};
	static const char *const tl[] = {"0", "9", "99", "999", "9,999", "99,999"};
	static const mu_philly_policy_t base[] = {MU_PHILLY_FIFO, MU_PHILLY_SJF,
						  MU_PHILLY_TIRESIAS, MU_PHILLY_ARRIVAL};
	static const char *const cls[] = {"s1", "s2", "s3", "s4", "s0"};
	const char *names[5];
	double xmax = 1, ymax = 0, ymin = INFINITY;
	const mu_philly_run_t *b[4];
	for (size_t i = 0; i < 4; i++) {
		b[i] = mu_philly_find(ev, base[i], base[i] == MU_PHILLY_SJF);
		if (b[i]) {
			xmax = fmax(xmax, log10(1.0 + (double)b[i]->preemptions));
			ymax = fmax(ymax, b[i]->jct_mean_s / 3600);
			ymin = fmin(ymin, b[i]->jct_mean_s / 3600);
		}
	}
	for (size_t i = 0; i < ev->nsweep; i++) {
		xmax = fmax(xmax, log10(1.0 + (double)ev->sweep[i].preemptions));
		ymax = fmax(ymax, ev->sweep[i].jct_mean_s / 3600);
		ymin = fmin(ymin, ev->sweep[i].jct_mean_s / 3600);
	}
	size_t nt = 1;
	while (nt < 6 && tv[nt - 1] < xmax)
		nt++;
	mu__svg_axis_t ax = {MU__SVG_NUM, "pods evicted (log scale)", 0, tv, tl, nt, true};
	mu__svg_axis_t ay = {MU__SVG_NUM, "mean JCT (hours)", 0, NULL, NULL, 0, true};
	mu__svg_plot_t p;
	/* the differences matter here, not the distance from 0 */
	double y0 = isfinite(ymin) ? floor(ymin * 0.9 * 4) / 4 : 0;
	mu__svg_plot_init(&p, W, CDF_H, 0, tv[nt - 1], y0, ymax > y0 ? ymax * 1.05 : y0 + 1);
	const char *title = "Trade-off: mean JCT against evictions, by the first JCT level";
	fputs("<h3>", f);
	mu__html_text(f, title, 0);
	fputs("</h3>\n", f);
	mu__svg_open(f, W, CDF_H, title);
	mu__svg_axes(f, &p, &ax, &ay);
	tpts_t t = {ev->sweep, ev->nsweep};
	if (t.n)
		mu__svg_series(f, &p, trade_point, &t, t.n, cls[4], false);
	for (size_t i = 0; i < ev->nsweep; i++) {
		double x, y;
		char lab[32];
		trade_point(&t, i, &x, &y);
		tpts_t one = {&ev->sweep[i], 1};
		mu__svg_series(f, &p, trade_point, &one, 1, cls[4], false);
		snprintf(lab, sizeof lab, "%g GPU-h", ev->sweep[i].jct_base_gpu_hours);
		mu__svg_text(f, mu__svg_x(&p, x) + 5, mu__svg_y(&p, y) - 5, "lbl", "start", lab);
	}
	for (size_t i = 0; i < 4; i++) {
		names[i] = short_names[base[i]];
		if (b[i]) {
			tpts_t one = {b[i], 1};
			mu__svg_series(f, &p, trade_point, &one, 1, cls[i], false);
		}
	}
	names[4] = "muster, by first level";
	mu__svg_legend(f, p.px + 8, 14, names, cls, 5);
	mu__svg_close(f);
}

/* The trade-off runs as a table: the issue-21 figures at each base. */
static void table_tradeoff(FILE *f, const mu_philly_eval_t *ev)
{
	fputs("<table>\n<tr><th>first level</th><th>mean JCT</th><th>p50 JCT</th>"
	      "<th>&ge;16 p99 wait</th><th>&ge;16 mean JCT</th><th>util</th>"
	      "<th>pods evicted</th><th>jobs preempted</th></tr>\n", f);
	for (size_t i = 0; i < ev->nsweep; i++) {
		const mu_philly_run_t *r = &ev->sweep[i];
		fprintf(f, "<tr><td>%g GPU-h</td><td>", r->jct_base_gpu_hours);
		mu__put_dur(f, r->jct_mean_s);
		fputs("</td><td>", f);
		mu__put_dur(f, r->jct_p50_s);
		fputs("</td><td>", f);
		mu__put_dur(f, r->large.p99_s);
		fputs("</td><td>", f);
		mu__put_dur(f, r->large.jct_mean_s);
		fputs("</td><td>", f);
		mu__put_pct(f, r->util_window);
		fputs("</td><td>", f);
		mu__put_count(f, r->preemptions);
		fputs("</td><td>", f);
		mu__put_count(f, r->jobs_preempted);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void html_tradeoff(FILE *f, const mu_philly_eval_t *ev)
{
	if (!ev->nsweep)
		return;
	fputs("<section>\n<h2>The JCT trade-off</h2>\n<p class=\"cap\">muster's default "
	      "with history estimates, its least-attained-service levels starting at "
	      "each GPU-hours value (<code>jct_base_gpu_hours</code>; the default is "
	      "100): lower levels demote more jobs, so new jobs preempt more and finish "
	      "sooner, at the price of evictions and some utilization.  A large value "
	      "is the arrival order of muster before issue 21.</p>\n", f);
	table_tradeoff(f, ev);
	chart_tradeoff(f, ev);
	fputs("</section>\n", f);
}

/* --- HTML: sections -------------------------------------------------------- */

static void html_backfill(FILE *f, const mu_philly_eval_t *ev)
{
	size_t rows[MU_PHILLY_NRUNS], n = mu_philly_backfill_rows(ev, rows, MU_PHILLY_NRUNS);
	fprintf(f, "<section>\n<h2>Backfill and large jobs</h2>\n<p class=\"cap\">FIFO "
		"(no backfill), priority order without reservations, EASY backfill (one "
		"reservation) and muster's default (four reservations, consolidation), "
		"with runtime estimates from history (jobs declare none) and with jobs "
		"declaring their true duration.  GPU utilization is the mean over the "
		"arrival window; waits are first start minus submit; large jobs ask for "
		"at least %d GPUs.</p>\n", MU_PHILLY_LARGE_GPUS);
	table_backfill(f, ev, rows, n);
	chart_bars(f, ev, rows, n, M_UTIL, MU__SVG_PCT, "GPU utilization while jobs arrive");
	chart_bars(f, ev, rows, n, M_LARGE_MEAN, MU__SVG_DUR, "Mean wait, jobs of 16 GPUs or more");
	chart_bars(f, ev, rows, n, M_LARGE_P99, MU__SVG_DUR, "p99 wait, jobs of 16 GPUs or more");
	chart_bars(f, ev, rows, n, M_ONE_MEAN, MU__SVG_DUR, "Mean wait, 1-GPU jobs");
	size_t hist = n < 5 ? n : 5; /* the history rows come first */
	chart_cdf(f, ev, rows, hist, true, "Wait CDF, jobs of 16 GPUs or more (history estimates)");
	chart_cdf(f, ev, rows, hist, false, "Wait CDF, 1-GPU jobs (history estimates)");
	fputs("</section>\n", f);
}

static void html_jct(FILE *f, const mu_philly_eval_t *ev)
{
	size_t rows[MU_PHILLY_NRUNS], n = mu_philly_jct_rows(ev, rows, MU_PHILLY_NRUNS);
	fputs("<section>\n<h2>Job completion time</h2>\n<p class=\"cap\">FIFO; "
	      "shortest job first with the true durations declared (a clairvoyant bound, "
	      "no reservations); Tiresias-style discretized two-dimensional least "
	      "attained service (levels at 1, 10 and 100 GPU-hours, preempting, no "
	      "estimates, no reservations); muster's default before issue 21 (arrival "
	      "order in the queue) and now.  JCT is end minus "
	      "submit; every job runs to completion.</p>\n", f);
	table_jct(f, ev, rows, n);
	chart_bars(f, ev, rows, n, M_JCT_MEAN, MU__SVG_DUR, "Mean JCT");
	chart_bars(f, ev, rows, n, M_JCT_P99, MU__SVG_DUR, "p99 JCT");
	chart_bars(f, ev, rows, n, M_LARGE_P99, MU__SVG_DUR, "p99 wait, jobs of 16 GPUs or more");
	chart_bars(f, ev, rows, n, M_LARGE_JCT, MU__SVG_DUR, "Mean JCT, jobs of 16 GPUs or more");
	chart_bars(f, ev, rows, n, M_UTIL, MU__SVG_PCT, "GPU utilization while jobs arrive");
	chart_bars(f, ev, rows, n, M_EVICTED, MU__SVG_NUM, "Pods evicted (preemptions)");
	size_t lines = n < 5 ? n : 5; /* one line per policy */
	chart_cdf(f, ev, rows, lines, true, "Wait CDF, jobs of 16 GPUs or more");
	chart_cdf(f, ev, rows, lines, false, "Wait CDF, 1-GPU jobs");
	fputs("</section>\n", f);
}

int mu_philly_write_html(const mu_philly_eval_t *ev, FILE *f)
{
	if (!ev || !f)
		return MU_EINVAL;
	mu__report_page_open(f, "muster eval philly", NULL);
	fputs("<h1>muster eval philly</h1>\n"
	      "<p class=\"cap\">Backfill, large jobs and job completion time on the "
	      "Microsoft Philly trace (docs/evaluation.md, &ldquo;Philly: backfill and "
	      "JCT&rdquo;).", f);
	fprintf(f, "  %zu runs in %.1f s.</p>\n", ev->nruns + ev->nsweep, ev->wall_s);
	html_protocol(f, ev);
	html_backfill(f, ev);
	html_jct(f, ev);
	html_tradeoff(f, ev);
	mu__report_page_close(f);
	return ferror(f) ? MU_EIO : MU_OK;
}

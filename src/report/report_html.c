/*
 * report_html.c - writes a simulation result as one self-contained HTML page.
 *
 * The page has inline CSS and inline SVG only: no scripts, no fonts, no
 * images, nothing fetched (a Content-Security-Policy says so to the
 * browser).  It shows a header with headline figures, the summary tables,
 * GPU utilization and queue length over time, the wait-time and completion
 * time distributions with percentile markers, each queue's share of GPU time
 * (bars and table), a per-job-type table and the longest waits.  Every name
 * from the result is HTML-escaped.  The page is deterministic: the same
 * result gives the same bytes.
 *
 * Work is O(jobs + samples + queues x 200) and nothing is allocated: series
 * are downsampled while they are written, histograms have fixed bins, and
 * tables of queues and jobs keep their top rows in fixed arrays.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "muster/sim.h"
#include "muster/report.h"

#define MU__W 1040.0         /* chart width, pixels */
#define MU__QUEUE_BARS 24    /* queues drawn as bars; the rest are summed */
#define MU__QUEUE_ROWS 200   /* queues listed in the table */
#define MU__LONGEST 10       /* rows of the longest-waits table */
#define MU__HIST_MAX 64      /* histogram bins */
#define MU__HIST_DECADES 10  /* up to 10^10 s */
#define MU__NTYPES 5         /* the four job types and "other" */

/* The simulator report's rules beyond the shared ones (page.c): headline
 * figures, columns, wider table cells, totals, empty charts and the footer. */
static const char mu__sim_css[] =
	"*{box-sizing:border-box}\n"
	"header h1{font-size:26px;line-height:1.2;margin:0 0 6px;font-weight:650;"
	"letter-spacing:-.01em;overflow-wrap:anywhere}\n"
	"header .sub{color:#6b7280;margin:0}\n"
	".kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));"
	"gap:12px;margin:20px 0 8px}\n"
	".kpi{background:#fff;border:1px solid #e5e7eb;border-radius:10px;"
	"padding:12px 16px}\n"
	".kpi .k{color:#6b7280;font-size:11px;text-transform:uppercase;"
	"letter-spacing:.05em}\n"
	".kpi .v{font-size:22px;font-weight:650;font-variant-numeric:tabular-nums}\n"
	".kpi .d{color:#9ca3af;font-size:12px}\n"
	"h2{font-size:17px;margin:0 0 2px;font-weight:620}\n"
	"h3{font-size:13px;margin:0 0 6px;color:#4b5563;font-weight:600}\n"
	".cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));"
	"gap:24px;align-items:start}\n"
	"table{font-size:14px}\n"
	"th,td{padding:6px 10px}\n"
	"td.t{max-width:300px;overflow:hidden;text-overflow:ellipsis}\n"
	"tr.total td{font-weight:600;border-top:2px solid #e5e7eb}\n"
	"tbody tr:hover td{background:#f9fafb}\n"
	".empty{color:#6b7280;padding:28px;text-align:center;"
	"border:1px dashed #d1d5db;border-radius:8px;margin:8px 0}\n"
	".more{color:#6b7280;font-size:12px;margin:6px 0 0}\n"
	"footer{color:#9ca3af;font-size:12px;text-align:center;margin-top:24px}\n";

/* --- small formatting helpers ------------------------------------------ */

/* GPU-hours: whole numbers with separators from 100 up, else 1 decimal
 * (2 below 1). */
static void fmt_gpuh(char *b, size_t n, double h)
{
	if (!isfinite(h))
		snprintf(b, n, "-");
	else if (fabs(h) >= 100 && fabs(h) < 9e15)
		mu__fmt_count(b, n, (int64_t)llround(h));
	else
		snprintf(b, n, "%.*f", fabs(h) < 1 ? 2 : 1, h);
}

/* GPUs of a job: "8", "0.5". */
static void put_gpus(FILE *f, int64_t milli)
{
	if (milli % 1000 == 0)
		mu__put_count(f, milli / 1000);
	else
		fprintf(f, "%.3g", (double)milli / 1000.0);
}

/* The wait of a job that started, else NaN. */
static double job_wait(const mu_sim_job_t *j)
{
	if (!(j->start_s >= 0) || !isfinite(j->submit_s))
		return NAN;
	return fmax(j->start_s - j->submit_s, 0);
}

/* The completion time (end - submit) of a job that finished, else NaN. */
static double job_jct(const mu_sim_job_t *j)
{
	if (!(j->end_s >= 0) || !isfinite(j->submit_s))
		return NAN;
	return fmax(j->end_s - j->submit_s, 0);
}

/* Keeps the k largest keys (non-finite ones skipped) in idx/val, largest
 * first, ties in index order; returns how many were kept.  O(n k). */
static size_t top_k(const void *ctx, size_t n, double (*key)(const void *, size_t),
		    size_t *idx, double *val, size_t k)
{
	size_t cnt = 0;
	for (size_t i = 0; i < n && k > 0; i++) {
		double v = key(ctx, i);
		if (!isfinite(v) || (cnt == k && !(v > val[cnt - 1])))
			continue;
		size_t pos = cnt < k ? cnt++ : k - 1;
		while (pos > 0 && v > val[pos - 1]) {
			val[pos] = val[pos - 1];
			idx[pos] = idx[pos - 1];
			pos--;
		}
		val[pos] = v;
		idx[pos] = i;
	}
	return cnt;
}

static double key_wait(const void *ctx, size_t i)
{
	return job_wait(&((const mu_sim_job_t *)ctx)[i]);
}

static double key_queue(const void *ctx, size_t i)
{
	double v = ((const mu_sim_queue_t *)ctx)[i].gpu_seconds;
	return isfinite(v) ? v : -1;
}

/* --- header and summary ------------------------------------------------ */


/* One headline figure; value and detail are plain text (escaped). */
static void kpi(FILE *f, const char *key, const char *value, const char *detail)
{
	fputs("<div class=\"kpi\"><div class=\"k\">", f);
	mu__html_text(f, key, 0);
	fputs("</div><div class=\"v\">", f);
	mu__html_text(f, value, 0);
	fputs("</div><div class=\"d\">", f);
	mu__html_text(f, detail, 0);
	fputs("</div></div>\n", f);
}

/* The page title, a one-line description and the headline figures. */
static void html_header(FILE *f, const mu_sim_result_t *r, const char *title)
{
	const mu_sim_summary_t *s = &r->summary;
	char a[64], b[64], c[96];

	fputs("<header>\n<h1>", f);
	mu__html_text(f, title, 0);
	fputs("</h1>\n<p class=\"sub\">Simulation of ", f);
	mu__put_count(f, s->jobs);
	fputs(s->jobs == 1 ? " job on " : " jobs on ", f);
	mu__put_count(f, s->total_gpus);
	fputs(s->total_gpus == 1 ? " GPU &middot; " : " GPUs &middot; ", f);
	mu__put_count(f, (int64_t)r->nqueues);
	fputs(r->nqueues == 1 ? " queue &middot; makespan " :
	      " queues &middot; makespan ", f);
	mu__put_dur(f, s->makespan_s);
	fputs("</p>\n</header>\n<div class=\"kpis\">\n", f);

	mu__fmt_pct(a, sizeof a, s->gpu_utilization, 1);
	kpi(f, "GPU utilization", a, "time-weighted");
	mu__fmt_count(a, sizeof a, s->completed);
	mu__fmt_count(b, sizeof b, s->jobs);
	snprintf(c, sizeof c, "of %s jobs", b);
	kpi(f, "Completed", a, c);
	mu__fmt_duration(a, sizeof a, s->avg_wait_s);
	mu__fmt_duration(b, sizeof b, s->p95_wait_s);
	snprintf(c, sizeof c, "p95 %s", b);
	kpi(f, "Mean wait", a, c);
	mu__fmt_duration(a, sizeof a, s->avg_jct_s);
	mu__fmt_duration(b, sizeof b, s->p95_jct_s);
	snprintf(c, sizeof c, "p95 %s", b);
	kpi(f, "Mean JCT", a, c);
	mu__fmt_duration(a, sizeof a, s->makespan_s);
	kpi(f, "Makespan", a, "from first submit");
	mu__fmt_count(a, sizeof a, s->preemptions);
	mu__fmt_count(b, sizeof b, s->cycles);
	snprintf(c, sizeof c, "%s scheduling cycles", b);
	kpi(f, "Preemptions", a, c);
	fputs("</div>\n", f);
}

/* A key/value row; the value is trusted markup built here. */
static void kv_row(FILE *f, const char *key, const char *value)
{
	fprintf(f, "<tr><td>%s</td><td>%s</td></tr>\n", key, value);
}

/* Every summary field, human-formatted, in two tables. */
static void html_summary(FILE *f, const mu_sim_summary_t *s)
{
	char b[96], c[64];
	const struct {
		const char *name;
		double avg, p50, p95, p99;
	} lat[] = {
		{"Wait (start &minus; submit)", s->avg_wait_s, s->p50_wait_s,
		 s->p95_wait_s, s->p99_wait_s},
		{"JCT (end &minus; submit)", s->avg_jct_s, s->p50_jct_s,
		 s->p95_jct_s, s->p99_jct_s},
	};

	fputs("<section>\n<h2>Summary</h2>\n<p class=\"cap\">Simulated times; "
	      "engine time is wall-clock time spent inside scheduling cycles."
	      "</p>\n<div class=\"cols\">\n<table>\n<thead><tr><th>Run</th>"
	      "<th></th></tr></thead>\n<tbody>\n", f);
	mu__fmt_count(b, sizeof b, s->jobs);
	kv_row(f, "Jobs", b);
	mu__fmt_count(b, sizeof b, s->completed);
	if (s->jobs > 0) {
		mu__fmt_pct(c, sizeof c, (double)s->completed / (double)s->jobs, 1);
		snprintf(b + strlen(b), sizeof b - strlen(b), " (%s)", c);
	}
	kv_row(f, "Completed", b);
	mu__fmt_count(b, sizeof b, s->total_gpus);
	kv_row(f, "Total GPUs", b);
	mu__fmt_pct(b, sizeof b, s->gpu_utilization, 1);
	kv_row(f, "GPU utilization", b);
	mu__fmt_duration(b, sizeof b, s->makespan_s);
	kv_row(f, "Makespan", b);
	mu__fmt_count(b, sizeof b, s->preemptions);
	kv_row(f, "Preemptions", b);
	mu__fmt_count(b, sizeof b, s->cycles);
	kv_row(f, "Scheduling cycles", b);
	mu__fmt_duration(b, sizeof b, s->engine_s);
	if (s->cycles > 0 && isfinite(s->engine_s)) {
		mu__fmt_duration(c, sizeof c, s->engine_s / (double)s->cycles);
		snprintf(b + strlen(b), sizeof b - strlen(b), " (%s per cycle)", c);
	}
	kv_row(f, "Engine time", b);
	fputs("</tbody>\n</table>\n<table>\n<thead><tr><th>Latency</th><th>mean"
	      "</th><th>p50</th><th>p95</th><th>p99</th></tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < 2; i++) {
		fprintf(f, "<tr><td>%s</td><td>", lat[i].name);
		mu__put_dur(f, lat[i].avg);
		fputs("</td><td>", f);
		mu__put_dur(f, lat[i].p50);
		fputs("</td><td>", f);
		mu__put_dur(f, lat[i].p95);
		fputs("</td><td>", f);
		mu__put_dur(f, lat[i].p99);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody>\n</table>\n</div>\n</section>\n", f);
}

/* --- time series --------------------------------------------------------- */

static void pt_util(const void *ctx, size_t i, double *x, double *y)
{
	const mu_sim_sample_t *s = ctx;
	*x = s[i].t_s;
	*y = s[i].gpu_util;
}

static void pt_pending(const void *ctx, size_t i, double *x, double *y)
{
	const mu_sim_sample_t *s = ctx;
	*x = s[i].t_s;
	*y = s[i].pending_jobs;
}

static void pt_running(const void *ctx, size_t i, double *x, double *y)
{
	const mu_sim_sample_t *s = ctx;
	*x = s[i].t_s;
	*y = s[i].running_jobs;
}

/* The time window of the samples, at least a minute wide; O(samples). */
static void sample_window(const mu_sim_result_t *r, double *x0, double *x1)
{
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < r->nsamples; i++) {
		double t = r->samples[i].t_s;
		if (isfinite(t)) {
			lo = fmin(lo, t);
			hi = fmax(hi, t);
		}
	}
	if (!isfinite(lo))
		lo = hi = 0;
	if (hi - lo < 60)
		hi = lo + 60;
	*x0 = lo;
	*x1 = hi;
}

/* A placeholder for a chart without data; msg is trusted markup. */
static void empty(FILE *f, const char *msg)
{
	fprintf(f, "<div class=\"empty\">%s</div>\n", msg);
}

/* GPU utilization as an area over time, with its mean; O(samples). */
static void html_util(FILE *f, const mu_sim_result_t *r)
{
	mu__svg_axis_t ax = {MU__SVG_DUR, "simulated time", 0, NULL,
			     NULL, 0, true};
	mu__svg_axis_t ay = {MU__SVG_PCT, "GPUs allocated (%)", 0.2, NULL, NULL,
			     0, true};
	mu__svg_plot_t p;
	double x0, x1;
	char lab[64], pct[32];

	fputs("<section>\n<h2>GPU utilization over time</h2>\n<p class=\"cap\">"
	      "Share of the cluster's GPUs allocated to running pods, sampled "
	      "during the run; the dashed line is the time-weighted mean.</p>\n", f);
	if (r->nsamples == 0) {
		empty(f, "No samples were recorded.");
		fputs("</section>\n", f);
		return;
	}
	sample_window(r, &x0, &x1);
	mu__svg_plot_init(&p, MU__W, 300, x0, x1, 0, 1);
	mu__svg_open(f, MU__W, 300, "GPU utilization over time");
	mu__svg_axes(f, &p, &ax, &ay);
	mu__svg_series(f, &p, pt_util, r->samples, r->nsamples, "s0", true);
	mu__svg_series(f, &p, pt_util, r->samples, r->nsamples, "s0", false);
	if (isfinite(r->summary.gpu_utilization)) {
		mu__fmt_pct(pct, sizeof pct, r->summary.gpu_utilization, 1);
		snprintf(lab, sizeof lab, "mean %s", pct);
		mu__svg_marker(f, &p, false, r->summary.gpu_utilization, lab, "s1", 0);
	}
	mu__svg_close(f);
	fputs("</section>\n", f);
}

/* Pending and running jobs over time, two lines; O(samples). */
static void html_qlen(FILE *f, const mu_sim_result_t *r)
{
	static const char *const names[] = {"pending", "running"};
	static const char *const cls[] = {"s1", "s0"};
	mu__svg_axis_t ax = {MU__SVG_DUR, "simulated time", 0, NULL,
			     NULL, 0, true};
	mu__svg_axis_t ay = {MU__SVG_NUM, "jobs", 0, NULL, NULL, 0, true};
	mu__svg_plot_t p;
	double x0, x1, ymax = 0;

	fputs("<section>\n<h2>Queue length over time</h2>\n<p class=\"cap\">"
	      "Jobs waiting to start (pending) and jobs holding resources "
	      "(running), sampled during the run.</p>\n", f);
	if (r->nsamples == 0) {
		empty(f, "No samples were recorded.");
		fputs("</section>\n", f);
		return;
	}
	for (size_t i = 0; i < r->nsamples; i++) {
		ymax = fmax(ymax, r->samples[i].pending_jobs);
		ymax = fmax(ymax, r->samples[i].running_jobs);
	}
	ymax = fmax(ymax, 5);
	ay.step = fmax(mu__svg_nice_ceil(0, &ymax, 5), 1);
	sample_window(r, &x0, &x1);
	mu__svg_plot_init(&p, MU__W, 300, x0, x1, 0, ymax);
	mu__svg_open(f, MU__W, 300, "Pending and running jobs over time");
	mu__svg_axes(f, &p, &ax, &ay);
	mu__svg_series(f, &p, pt_running, r->samples, r->nsamples, "s0", false);
	mu__svg_series(f, &p, pt_pending, r->samples, r->nsamples, "s1", false);
	mu__svg_legend(f, p.px + 4, 16, names, cls, 2);
	mu__svg_close(f);
	fputs("</section>\n", f);
}

/* --- distributions ------------------------------------------------------ */

/* A histogram on a log10-seconds axis: bin 0 holds values below 1 s and
 * spans [-0.5, 0); bin b >= 1 spans [(b-1)/per, b/per).  The top bin also
 * takes everything beyond the axis. */
typedef struct mu__hist {
	int64_t count[MU__HIST_MAX];
	size_t nb;
	int per;      /* bins per decade */
	double top;   /* log10 of the axis end */
	int64_t n;    /* values counted */
} mu__hist_t;

static double hist_value(const mu_sim_job_t *j, bool jct)
{
	return jct ? job_jct(j) : job_wait(j);
}

/* Two passes over the jobs: the largest value sets the axis, then every
 * value is counted.  O(jobs). */
static void hist_fill(mu__hist_t *h, const mu_sim_result_t *r, bool jct)
{
	double max = 0;
	memset(h, 0, sizeof *h);
	for (size_t i = 0; i < r->njobs; i++) {
		double v = hist_value(&r->jobs[i], jct);
		if (isfinite(v) && v > max)
			max = v;
	}
	h->per = 4;
	h->top = max > 10 ? ceil(log10(max) * h->per) / h->per : 1;
	h->top = fmin(h->top, MU__HIST_DECADES);
	h->nb = 1 + (size_t)llround(h->top * h->per);
	for (size_t i = 0; i < r->njobs; i++) {
		double v = hist_value(&r->jobs[i], jct);
		size_t b = 0;
		if (!isfinite(v))
			continue;
		if (v >= 1)
			b = 1 + (size_t)floor(fmin(log10(v), h->top) * h->per);
		if (b >= h->nb)
			b = h->nb - 1;
		h->count[b]++;
		h->n++;
	}
}

/* Where a value sits on the log axis: values below 1 s in the middle of
 * bin 0. */
static double hist_x(const mu__hist_t *h, double v)
{
	if (!(v >= 1))
		return -0.25;
	return fmin(log10(v), h->top);
}

/* The top of the y axis: the tallest bin plus headroom for the marker
 * labels.  When the "<1s" bin dwarfs all others (over 2.5 times the
 * tallest), the axis follows the others so they stay readable, and bin 0
 * is drawn cut off (see hist_bars). */
static double hist_ymax(const mu__hist_t *h)
{
	double zero = (double)h->count[0], rest = 0;
	for (size_t i = 1; i < h->nb; i++)
		rest = fmax(rest, (double)h->count[i]);
	double m = rest > 0 && zero > 2.5 * rest ? rest : fmax(zero, rest);
	return fmax(m * 1.25, 5);
}

/* One bar per non-empty bin with a tooltip; a bar taller than the axis is
 * cut off with a white gap and labelled with its count. */
static void hist_bars(FILE *f, const mu__svg_plot_t *p, const mu__hist_t *h)
{
	char tip[256], a[48], b[48], c[48], d[48];

	for (size_t i = 0; i < h->nb; i++) {
		double lo = i ? (double)(i - 1) / h->per : -0.5;
		double hi = i ? (double)i / h->per : 0;
		if (!h->count[i])
			continue;
		mu__fmt_count(a, sizeof a, h->count[i]);
		mu__fmt_pct(b, sizeof b, (double)h->count[i] / (double)h->n, 1);
		mu__fmt_duration(c, sizeof c, pow(10, lo));
		mu__fmt_duration(d, sizeof d, pow(10, hi));
		if (i == 0)
			snprintf(tip, sizeof tip, "under 1s: %s jobs (%s)", a, b);
		else if (i + 1 == h->nb)
			snprintf(tip, sizeof tip, "%s and more: %s jobs (%s)", c, a, b);
		else
			snprintf(tip, sizeof tip, "%s to %s: %s jobs (%s)", c, d, a, b);
		mu__svg_rect(f, p, lo + 0.012, 0, hi - 0.012,
			     (double)h->count[i], "bar s3", tip);
		if ((double)h->count[i] <= p->y1)
			continue;
		double x0 = mu__svg_x(p, lo + 0.012), x1 = mu__svg_x(p, hi - 0.012);
		fprintf(f, "<rect class=\"cut\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"4\"/>\n", x0, p->py + 40, x1 - x0);
		mu__svg_text(f, (x0 + x1) / 2, p->py + 60, "inlbl", "middle", a);
	}
}

/* The bars, tooltips and percentile markers of a filled histogram. */
static void hist_draw(FILE *f, const mu__hist_t *h, const double pct[3],
		      const char *xtitle)
{
	static const double tick_s[] = {1, 10, 60, 600, 3600, 21600, 86400,
					604800, 2592000, 31536000, 315360000};
	static const char *const tick_l[] = {"1s", "10s", "1m", "10m", "1h", "6h",
					     "1d", "1w", "30d", "1y", "10y"};
	static const char *const pname[] = {"p50", "p95", "p99"};
	static const char *const pcls[] = {"s2", "s6", "s4"};
	double ticks[1 + sizeof tick_s / sizeof *tick_s], ymax = hist_ymax(h);
	const char *labels[1 + sizeof tick_s / sizeof *tick_s];
	mu__svg_axis_t ax = {MU__SVG_LOGDUR, xtitle, 0, ticks, labels, 0, true};
	mu__svg_axis_t ay = {MU__SVG_NUM, "jobs", 0, NULL, NULL, 0, true};
	mu__svg_plot_t p;
	char lab[3][64], a[48];

	ticks[0] = -0.25;
	labels[ax.nticks++] = "<1s";
	for (size_t i = 0; i < sizeof tick_s / sizeof *tick_s; i++) {
		ticks[ax.nticks] = log10(tick_s[i]);
		labels[ax.nticks++] = tick_l[i];
	}
	ay.step = fmax(mu__svg_nice_ceil(0, &ymax, 5), 1);
	mu__svg_plot_init(&p, MU__W, 310, -0.5, h->top, 0, ymax);
	p.py += 30; /* a band above the bars for the percentile labels */
	p.ph -= 30;
	mu__svg_open(f, MU__W, 310, xtitle);
	mu__svg_axes(f, &p, &ax, &ay);
	hist_bars(f, &p, h);
	double mv[3];
	const char *ml[3], *mc[3];
	int nm = 0;
	for (int i = 0; i < 3; i++) {
		if (!isfinite(pct[i]))
			continue;
		mu__fmt_duration(a, sizeof a, pct[i]);
		snprintf(lab[nm], sizeof lab[nm], "%s %s", pname[i], a);
		mv[nm] = hist_x(h, pct[i]);
		ml[nm] = lab[nm];
		mc[nm++] = pcls[i];
	}
	mu__svg_vmarkers(f, &p, mv, ml, mc, nm);
	mu__svg_close(f);
}

/* The wait (or, with jct, completion time) histogram section; O(jobs). */
static void html_dist(FILE *f, const mu_sim_result_t *r, bool jct)
{
	const mu_sim_summary_t *s = &r->summary;
	double wp[3] = {s->p50_wait_s, s->p95_wait_s, s->p99_wait_s};
	double jp[3] = {s->p50_jct_s, s->p95_jct_s, s->p99_jct_s};
	mu__hist_t h;

	hist_fill(&h, r, jct);
	fprintf(f, "<section>\n<h2>%s distribution</h2>\n<p class=\"cap\">",
		jct ? "Job completion time" : "Wait time");
	mu__put_count(f, h.n);
	fprintf(f, " of ");
	mu__put_count(f, (int64_t)r->njobs);
	fprintf(f, " jobs %s", jct ? "completed" : "started");
	if (h.n && h.count[0]) {
		fputs(", ", f);
		mu__put_count(f, h.count[0]);
		fputs(" (", f);
		mu__put_pct(f, (double)h.count[0] / (double)h.n);
		fputs(") within 1s", f);
	}
	fprintf(f, ". %s Bins are quarter decades on a log scale; dashed lines "
		"mark the percentiles.</p>\n", jct ? "JCT is end minus submit time."
		: "Wait is start minus submit time.");
	if (h.n == 0)
		empty(f, jct ? "No job completed." : "No job started.");
	else
		hist_draw(f, &h, jct ? jp : wp, jct ? "job completion time (log scale)"
						   : "wait time (log scale)");
	fputs("</section>\n", f);
}

/* --- queues ------------------------------------------------------------- */

/* Bars for the largest queues that had jobs or GPU time (parents and
 * unused queues are left out), the rest summed into one more bar; notes
 * hold each bar's text.  Returns the number of bars. */
static size_t queue_bars(const mu_sim_result_t *r, const size_t *idx, size_t n,
			 mu__svg_bar_t *bars, char (*notes)[96], char *other,
			 size_t olen)
{
	size_t nb = 0, shown = 0;
	double rest_share = 0, rest_s = 0;
	char p[32], h[48];

	for (size_t i = 0; i < r->nqueues; i++) {
		const mu_sim_queue_t *q = &r->queues[i];
		rest_share += isfinite(q->share) ? q->share : 0;
		rest_s += isfinite(q->gpu_seconds) ? q->gpu_seconds : 0;
	}
	for (size_t i = 0; i < r->nqueues; i++)
		shown += r->queues[i].jobs > 0 || r->queues[i].gpu_seconds > 0;
	for (size_t i = 0; i < n && nb < MU__QUEUE_BARS; i++) {
		const mu_sim_queue_t *q = &r->queues[idx[i]];
		if (q->jobs <= 0 && !(q->gpu_seconds > 0))
			continue; /* a parent or an unused queue */
		rest_share -= isfinite(q->share) ? q->share : 0;
		rest_s -= isfinite(q->gpu_seconds) ? q->gpu_seconds : 0;
		mu__fmt_pct(p, sizeof p, q->share, 1);
		fmt_gpuh(h, sizeof h, q->gpu_seconds / 3600);
		snprintf(notes[nb], sizeof notes[nb], "%s \xC2\xB7 %s GPU-h", p, h);
		bars[nb] = (mu__svg_bar_t){q->name ? q->name : "", q->share, notes[nb]};
		nb++;
	}
	if (shown > nb) {
		snprintf(other, olen, "(%zu other queues)", shown - nb);
		mu__fmt_pct(p, sizeof p, rest_share, 1);
		fmt_gpuh(h, sizeof h, rest_s / 3600);
		snprintf(notes[nb], sizeof notes[nb], "%s \xC2\xB7 %s GPU-h", p, h);
		bars[nb] = (mu__svg_bar_t){other, fmax(rest_share, 0), notes[nb]};
		nb++;
	}
	return nb;
}

/* One row of the queue table; cls is trusted markup, name is escaped. */
/* One row of the queue table: q's deserved GPUs, mean fair share and
 * mean use over span_s beside its GPU time; q NULL for the total. */
static void queue_row(FILE *f, const char *cls, const char *name, int64_t jobs,
		      double gpu_s, double share, const mu_sim_queue_t *q, double span_s)
{
	char h[48], des[48] = "", fair[48] = "", used[48];
	fmt_gpuh(h, sizeof h, gpu_s / 3600);
	fmt_gpuh(used, sizeof used, span_s > 0 ? gpu_s / span_s : NAN);
	if (q) {
		fmt_gpuh(des, sizeof des, q->deserved_gpus);
		fmt_gpuh(fair, sizeof fair, span_s > 0 ? q->fair_gpu_seconds / span_s : NAN);
	}
	fprintf(f, "<tr%s><td class=\"t\">", cls);
	mu__html_text(f, name, 80);
	fputs("</td><td>", f);
	mu__put_count(f, jobs);
	fprintf(f, "</td><td>%s</td><td>", h);
	mu__put_pct(f, share);
	fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", used, des, fair);
}

/* Bars and a table of the queues, largest GPU time first; O(queues x
 * MU__QUEUE_ROWS). */
static void html_queues(FILE *f, const mu_sim_result_t *r)
{
	size_t idx[MU__QUEUE_ROWS];
	double val[MU__QUEUE_ROWS], tot_s = 0, tot_share = 0;
	mu__svg_bar_t bars[MU__QUEUE_BARS + 1];
	char notes[MU__QUEUE_BARS + 1][96], other[64];
	int64_t tot_jobs = 0;
	size_t n = top_k(r->queues, r->nqueues, key_queue, idx, val, MU__QUEUE_ROWS);

	fputs("<section>\n<h2>GPU time by queue</h2>\n<p class=\"cap\">Each "
	      "queue's share of all GPU time its jobs held; in the table, beside it, the "
	      "GPUs it used on average, its deserved quota, and its fair share (what the "
	      "engine computed at each cycle, averaged over the run).</p>\n", f);
	if (r->nqueues == 0) {
		empty(f, "No queues.");
		fputs("</section>\n", f);
		return;
	}
	size_t nb = queue_bars(r, idx, n, bars, notes, other, sizeof other);
	mu__svg_hbars(f, MU__W, bars, nb, MU__SVG_PCT, "share of GPU time (%)",
		      "GPU time by queue");
	fputs("<table>\n<thead><tr><th>Queue</th><th>Jobs</th><th>GPU-hours</th>"
	      "<th>Share</th><th title=\"GPU-hours over the run's length\">Mean GPUs used</th>"
	      "<th>Deserved GPUs</th><th title=\"The engine's fair share at each cycle, averaged over "
	      "the run\">Mean fair share (GPUs)</th></tr></thead>\n<tbody>\n", f);
	double span = r->summary.makespan_s;
	for (size_t i = 0; i < n; i++) {
		const mu_sim_queue_t *q = &r->queues[idx[i]];
		queue_row(f, "", q->name, q->jobs, q->gpu_seconds, q->share, q, span);
	}
	for (size_t i = 0; i < r->nqueues; i++) {
		tot_jobs += r->queues[i].jobs;
		tot_s += isfinite(r->queues[i].gpu_seconds) ? r->queues[i].gpu_seconds : 0;
		tot_share += isfinite(r->queues[i].share) ? r->queues[i].share : 0;
	}
	queue_row(f, " class=\"total\"", "all queues", tot_jobs, tot_s, tot_share, NULL, span);
	fputs("</tbody>\n</table>\n", f);
	if (r->nqueues > n)
		fprintf(f, "<p class=\"more\">%zu smaller queues are not listed.</p>\n",
			r->nqueues - n);
	fputs("</section>\n", f);
}

/* --- jobs --------------------------------------------------------------- */

typedef struct mu__tstat {
	int64_t n, started, completed, gpu_milli, preemptions;
	double wait, jct; /* sums over started / completed jobs */
} mu__tstat_t;

static void tstat_add(mu__tstat_t *t, const mu_sim_job_t *j)
{
	double w = job_wait(j), c = job_jct(j);
	t->n++;
	t->gpu_milli += j->gpu_milli;
	t->preemptions += j->preemptions;
	if (isfinite(w)) {
		t->started++;
		t->wait += w;
	}
	if (isfinite(c)) {
		t->completed++;
		t->jct += c;
	}
}

/* One row of the job-type table; cls and name are trusted markup. */
static void tstat_row(FILE *f, const char *cls, const char *name,
		      const mu__tstat_t *t)
{
	fprintf(f, "<tr%s><td>%s</td><td>", cls, name);
	mu__put_count(f, t->n);
	fputs("</td><td>", f);
	mu__put_count(f, t->started);
	fputs("</td><td>", f);
	mu__put_count(f, t->completed);
	fprintf(f, "</td><td>%.3g</td><td>",
		t->n ? (double)t->gpu_milli / 1000.0 / (double)t->n : 0.0);
	mu__put_dur(f, t->started ? t->wait / (double)t->started : NAN);
	fputs("</td><td>", f);
	mu__put_dur(f, t->completed ? t->jct / (double)t->completed : NAN);
	fputs("</td><td>", f);
	mu__put_count(f, t->preemptions);
	fputs("</td></tr>\n", f);
}

/* Counts and means per job type; O(jobs). */
static void html_types(FILE *f, const mu_sim_result_t *r)
{
	mu__tstat_t t[MU__NTYPES], all;
	memset(t, 0, sizeof t);
	memset(&all, 0, sizeof all);
	for (size_t i = 0; i < r->njobs; i++) {
		const mu_sim_job_t *j = &r->jobs[i];
		unsigned k = (unsigned)j->type;
		tstat_add(&t[k < MU__NTYPES - 1 ? k : MU__NTYPES - 1], j);
		tstat_add(&all, j);
	}
	fputs("<section>\n<h2>Jobs by type</h2>\n<p class=\"cap\">Mean wait "
	      "over started jobs, mean JCT over completed jobs.</p>\n", f);
	if (r->njobs == 0) {
		empty(f, "No jobs.");
		fputs("</section>\n", f);
		return;
	}
	fputs("<table>\n<thead><tr><th>Type</th><th>Jobs</th><th>Started</th>"
	      "<th>Completed</th><th>GPUs per job</th><th>Mean wait</th>"
	      "<th>Mean JCT</th><th>Preemptions</th></tr></thead>\n<tbody>\n", f);
	for (int k = 0; k < MU__NTYPES; k++)
		if (t[k].n)
			tstat_row(f, "", k < MU__NTYPES - 1 ?
				  mu_job_type_name((mu_job_type_t)k) : "other", &t[k]);
	tstat_row(f, " class=\"total\"", "all", &all);
	fputs("</tbody>\n</table>\n</section>\n", f);
}

/* The started jobs that waited longest; O(jobs x MU__LONGEST). */
static void html_longest(FILE *f, const mu_sim_result_t *r)
{
	size_t idx[MU__LONGEST];
	double val[MU__LONGEST];
	size_t n = top_k(r->jobs, r->njobs, key_wait, idx, val, MU__LONGEST);

	if (n == 0)
		return;
	fputs("<section>\n<h2>Longest waits</h2>\n<p class=\"cap\">The started "
	      "jobs that waited longest.</p>\n<table>\n<thead><tr><th>Job</th>"
	      "<th class=\"t\">Queue</th><th class=\"t\">Type</th><th>GPUs</th>"
	      "<th>Pods</th>"
	      "<th>Submitted</th><th>Wait</th><th>JCT</th></tr></thead>\n"
	      "<tbody>\n", f);
	for (size_t i = 0; i < n; i++) {
		const mu_sim_job_t *j = &r->jobs[idx[i]];
		fputs("<tr><td class=\"t\">", f);
		mu__html_text(f, j->name, 80);
		fputs("</td><td class=\"t\">", f);
		mu__html_text(f, j->queue, 80);
		fprintf(f, "</td><td class=\"t\">%s</td><td>",
			mu_job_type_name(j->type));
		put_gpus(f, j->gpu_milli);
		fputs("</td><td>", f);
		mu__put_count(f, j->pods);
		fputs("</td><td>", f);
		mu__put_dur(f, j->submit_s);
		fputs("</td><td>", f);
		mu__put_dur(f, val[i]);
		fputs("</td><td>", f);
		if (isfinite(job_jct(j)))
			mu__put_dur(f, job_jct(j));
		else
			fputs("not finished", f);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody>\n</table>\n</section>\n", f);
}

/* --- the page ----------------------------------------------------------- */

/* Writes the page section by section, stopping early once the stream has
 * failed; O(jobs + samples + queues x MU__QUEUE_ROWS).  The stream stays
 * the caller's; it is flushed so that late write errors are seen. */
int mu_sim_write_html(const mu_sim_result_t *r, const char *title, FILE *f)
{
	if (!r || !f)
		return MU_EINVAL;
	if (!title || !*title)
		title = "muster simulation report";
	mu__report_page_open(f, title, mu__sim_css);
	html_header(f, r, title);
	if (!ferror(f))
		html_summary(f, &r->summary);
	if (!ferror(f))
		html_util(f, r);
	if (!ferror(f))
		html_qlen(f, r);
	if (!ferror(f))
		html_dist(f, r, false);
	if (!ferror(f))
		html_dist(f, r, true);
	if (!ferror(f))
		html_queues(f, r);
	if (!ferror(f))
		html_types(f, r);
	if (!ferror(f))
		html_longest(f, r);
	fputs("<footer>Generated by muster. A self-contained page: no scripts, "
	      "nothing fetched.</footer>\n", f);
	mu__report_page_close(f);
	if (fflush(f) != 0 || ferror(f))
		return MU_EIO;
	return MU_OK;
}

/*
 * bench_html.c - the HTML report of `muster bench`: one self-contained page
 * (inline CSS and SVG, nothing fetched) with the targets and
 * whether each is met, every figure of every record, and the scaling
 * records as a table and two plots (build time, and cycle times, against
 * nodes).
 *
 * Work is O(records); nothing is allocated.  Text from the records is
 * escaped.  Write errors are checked once, at the end.
 */
#include <math.h>
#include <string.h>

#include "bench/bench_int.h"
#include "muster/report.h"

#define W 1000.0
#define MAX_SCALING 32 /* scaling records drawn */

/* Rules of this page beyond the shared ones (src/report/page.c). */
static const char bench_css[] =
	".ok{color:#047857;font-weight:600}.miss{color:#b91c1c;font-weight:600}\n";

/* A number with thousands separators or a fixed precision; "-" when it
 * does not apply. */
static void put_num(FILE *f, double v, int decimals)
{
	char b[48];
	if (!isfinite(v)) {
		fputs("-", f);
		return;
	}
	if (decimals == 0 && fabs(v) < 9e15) {
		mu__fmt_count(b, sizeof b, (int64_t)llround(v));
		fputs(b, f);
		return;
	}
	fprintf(f, "%.*f", decimals, v);
}

static void put_int(FILE *f, int64_t v)
{
	put_num(f, v < 0 ? NAN : (double)v, 0);
}

/* The targets table: one row per check of every record. */
static void html_targets(FILE *f, const mu_bench_results_t *rs)
{
	fputs("<section>\n<h2>Targets</h2>\n<p class=\"cap\">The issue's targets; "
	      "times are the thread's CPU time per decision.</p>\n<table>\n"
	      "<thead><tr><th>Shape</th><th>Size</th><th class=\"t\">Figure</th>"
	      "<th>Measured</th><th>Target</th><th></th>"
	      "<th class=\"t\">Published</th></tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < rs->n; i++) {
		const mu_bench_result_t *r = &rs->v[i];
		mu_bench_check_t ck[4];
		size_t n = mu_bench_checks(r, ck, 4);
		for (size_t k = 0; k < n; k++) {
			bool ok = mu_bench_check_met(&ck[k]);
			fputs("<tr><td>", f);
			mu__html_text(f, r->shape, 0);
			fputs("</td><td>", f);
			put_int(f, r->gang_pods > 0 ? r->gang_pods : r->nodes);
			fputs(r->gang_pods > 0 ? " pods" : " nodes", f);
			fputs("</td><td class=\"t\">", f);
			mu__html_text(f, ck[k].what, 0);
			fputs("</td><td>", f);
			put_num(f, ck[k].value, ck[k].value < 100 ? 2 : 0);
			fprintf(f, " %s</td><td>%s ", ck[k].unit, ck[k].at_most ? "&le;" : "&ge;");
			put_num(f, ck[k].target, 0);
			fprintf(f, " %s</td><td class=\"%s\">%s</td><td class=\"t\">",
				ck[k].unit, ok ? "ok" : "miss", ok ? "OK" : "MISSED");
			mu__html_text(f, ck[k].versus ? ck[k].versus : "", 0);
			fputs("</td></tr>\n", f);
		}
	}
	fputs("</tbody>\n</table>\n</section>\n", f);
}

/* Every record, one row each, with its shape-specific figures. */
static void html_records(FILE *f, const mu_bench_results_t *rs)
{
	fputs("<section>\n<h2>All figures</h2>\n<p class=\"cap\">p50 and p99 are "
	      "per decision: a pod's cycle (basic), a gang's cycle, a preempting "
	      "pod's cycle, or a little-changed cycle (cycle, scale, scaling).  "
	      "Peak RSS is each shape's own process.</p>\n<table>\n<thead><tr>"
	      "<th>Shape</th><th>Nodes</th><th>Pods</th><th>Decisions/s</th>"
	      "<th>p50 &micro;s</th><th>p99 &micro;s</th><th>RSS MiB</th>"
	      "<th>Build ms</th><th>Cycle ms</th><th class=\"t\">Notes</th>"
	      "</tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < rs->n; i++) {
		const mu_bench_result_t *r = &rs->v[i];
		fputs("<tr><td>", f);
		mu__html_text(f, r->shape, 0);
		fputs("</td><td>", f);
		put_int(f, r->nodes);
		fputs("</td><td>", f);
		put_int(f, r->pods);
		fputs("</td><td>", f);
		put_num(f, r->decisions_per_s, 0);
		fputs("</td><td>", f);
		put_num(f, r->p50_us, 1);
		fputs("</td><td>", f);
		put_num(f, r->p99_us, 1);
		fputs("</td><td>", f);
		put_num(f, r->peak_rss_mb, 1);
		fputs("</td><td>", f);
		put_num(f, r->build_ms, 1);
		fputs("</td><td>", f);
		put_num(f, r->cycle_ms, 2);
		fputs("</td><td class=\"t\">", f);
		char note[160] = "";
		if (r->skipped[0])
			snprintf(note, sizeof note, "skipped: %s", r->skipped);
		else if (r->gang_pods > 0)
			snprintf(note, sizeof note, "gangs of %d, required %s, %lld of %lld placed",
				 r->gang_pods, r->level, (long long)r->placed,
				 (long long)r->decisions);
		else if (r->source[0])
			snprintf(note, sizeof note, "shapes: %s; %lld of %lld placed",
				 r->source, (long long)r->placed, (long long)r->pods);
		else if (r->pending >= 0)
			snprintf(note, sizeof note, "%lld pending, %d queues; idle cycle %.2f ms, "
				 "first cycle %.1f ms", (long long)r->pending, r->queues,
				 r->idle_cycle_ms, r->cold_cycle_ms);
		else if (r->evicted >= 0)
			snprintf(note, sizeof note, "%lld preemptors, %lld evicted",
				 (long long)r->preemptors, (long long)r->evicted);
		mu__html_text(f, note, 0);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody>\n</table>\n</section>\n", f);
}

/* The scaling records to plot, and which figure a series draws. */
typedef struct series {
	const mu_bench_result_t *const *v;
	size_t n;
	size_t off; /* offsetof the double in mu_bench_result_t */
} series_t;

static void series_point(const void *ctx, size_t i, double *x, double *y)
{
	const series_t *s = ctx;
	*x = s->v[i]->nodes;
	*y = *(const double *)((const char *)s->v[i] + s->off);
}

/* One plot of figures (offsets offs, names, in ms) against nodes. */
static void plot_ms(FILE *f, const mu_bench_result_t *const *v, size_t n,
		    const size_t *offs, const char *const *names, size_t nser,
		    const char *title)
{
	static const char *const cls[] = {"s0", "s1", "s2", "s3"};
	double xmax = 1, ymax = 1e-3;
	for (size_t i = 0; i < n; i++) {
		xmax = fmax(xmax, v[i]->nodes);
		for (size_t k = 0; k < nser; k++) {
			double y = *(const double *)((const char *)v[i] + offs[k]);
			if (isfinite(y))
				ymax = fmax(ymax, y);
		}
	}
	mu__svg_axis_t ax = {MU__SVG_NUM, "nodes", 0, NULL, NULL, 0, true};
	mu__svg_axis_t ay = {MU__SVG_NUM, "CPU time (ms)", 0, NULL, NULL, 0, true};
	ay.step = mu__svg_nice_ceil(0, &ymax, 5);
	mu__svg_plot_t p;
	mu__svg_plot_init(&p, W, 280, 0, xmax, 0, ymax);
	mu__svg_open(f, W, 280, title);
	mu__svg_axes(f, &p, &ax, &ay);
	for (size_t k = 0; k < nser; k++) {
		series_t s = {v, n, offs[k]};
		mu__svg_series(f, &p, series_point, &s, n, cls[k], false);
		for (size_t i = 0; i < n; i++) {
			double x, y;
			series_point(&s, i, &x, &y);
			if (isfinite(y))
				fprintf(f, "<circle class=\"dot %s\" cx=\"%.1f\" cy=\"%.1f\" "
					"r=\"3\"/>\n", cls[k], mu__svg_x(&p, x), mu__svg_y(&p, y));
		}
	}
	mu__svg_legend(f, p.px + 8, 14, names, cls, nser);
	mu__svg_close(f);
}

/* The scaling section: a table and the two plots; nothing without
 * scaling records. */
static void html_scaling(FILE *f, const mu_bench_results_t *rs)
{
	const mu_bench_result_t *v[MAX_SCALING];
	size_t n = 0;
	for (size_t i = 0; i < rs->n && n < MAX_SCALING; i++)
		if (!strcmp(rs->v[i].shape, "scaling") && !rs->v[i].skipped[0])
			v[n++] = &rs->v[i];
	if (!n)
		return;
	fputs("<section>\n<h2>How time grows with nodes</h2>\n<p class=\"cap\">The "
	      "cycle shape's cluster at each size, with 10 running pods per node "
	      "and the same 2,000 pending pods in 50 queues at every size.  Build: nodes, queues, submits and the cycles that "
	      "place the running pods.  Cycle: median after one job finishes and "
	      "one arrives; idle: nothing changed; first: every pending job "
	      "tried.</p>\n<table>\n<thead><tr><th>Nodes</th><th>Pods</th>"
	      "<th>Build ms</th><th>of which placing</th><th>First cycle ms</th>"
	      "<th>Idle cycle ms</th><th>Cycle ms</th><th>Cycle p99 ms</th>"
	      "<th>RSS MiB</th></tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < n; i++) {
		const double cols[] = {v[i]->build_ms, v[i]->build_place_ms,
				       v[i]->cold_cycle_ms, v[i]->idle_cycle_ms,
				       v[i]->cycle_ms, v[i]->cycle_p99_ms,
				       v[i]->peak_rss_mb};
		fputs("<tr><td>", f);
		put_int(f, v[i]->nodes);
		fputs("</td><td>", f);
		put_int(f, v[i]->pods);
		for (size_t k = 0; k < sizeof cols / sizeof *cols; k++) {
			fputs("</td><td>", f);
			put_num(f, cols[k], k == 3 ? 2 : 1);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody>\n</table>\n", f);
	static const size_t build[] = {offsetof(mu_bench_result_t, build_ms),
				       offsetof(mu_bench_result_t, build_place_ms)};
	static const char *const bnames[] = {"build", "placing the running pods"};
	plot_ms(f, v, n, build, bnames, 2, "Build time against nodes");
	static const size_t cyc[] = {offsetof(mu_bench_result_t, cold_cycle_ms),
				     offsetof(mu_bench_result_t, cycle_ms),
				     offsetof(mu_bench_result_t, idle_cycle_ms)};
	static const char *const cnames[] = {"first cycle", "cycle, little changed",
					     "idle cycle"};
	plot_ms(f, v, n, cyc, cnames, 3, "Cycle time against nodes");
	fputs("</section>\n", f);
}

int mu_bench_report_html(FILE *f, const mu_bench_results_t *rs, bool quick)
{
	mu__report_page_open(f, "muster bench", bench_css);
	fputs("<h1>muster bench</h1>\n"
	      "<p class=\"cap\">Speed and memory of the scheduling engine on "
	      "synthetic clusters (docs/evaluation.md, &ldquo;Speed and memory"
	      "&rdquo;).", f);
	if (quick)
		fputs(" <b>Quick run: small sizes, not comparable with the "
		      "targets.</b>", f);
	fputs("</p>\n", f);
	html_targets(f, rs);
	html_records(f, rs);
	html_scaling(f, rs);
	mu__report_page_close(f);
	return ferror(f) ? MU_EIO : MU_OK;
}

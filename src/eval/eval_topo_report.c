/*
 * eval_topo_report.c - the writers of `muster eval topology`: one JSON
 * object with every figure, and a self-contained HTML page (inline CSS
 * and SVG, nothing fetched) with the protocol, the table, one bar chart
 * per headline metric and a histogram of ToRs spanned per gang for each
 * policy.
 *
 * Work is O(policies x histogram buckets); nothing is allocated.  File
 * names are escaped; numbers that are not finite print as null or "-".
 * Write errors are checked once, at the end.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "muster/eval_topo.h"
#include "muster/report.h"

#define W 1000.0

/* --- JSON --------------------------------------------------------------------- */

/* "KEY": v with format fmt, or null when v is not finite. */
static void json_num(FILE *f, const char *key, const char *fmt, double v)
{
	fprintf(f, "\"%s\": ", key);
	if (isfinite(v))
		fprintf(f, fmt, v == 0 ? 0.0 : v);
	else
		fputs("null", f);
}

static void json_workload(FILE *f, const mu_etopo_workload_t *w)
{
	fprintf(f, "  \"workload\": {\"trace_jobs\": %lld, \"jobs\": %lld, \"gangs\": %lld, "
		"\"largest_gpus\": %lld, ", (long long)w->trace_jobs, (long long)w->jobs,
		(long long)w->gangs, (long long)w->gang_gpus_max);
	json_num(f, "gpu_hours", "%.1f", w->gpu_s / 3600);
	fputs(", ", f);
	json_num(f, "gang_gpu_hours", "%.1f", w->gang_gpu_s / 3600);
	fputs(",\n    ", f);
	json_num(f, "trace_span_s", "%.0f", w->trace_span_s);
	fputs(", ", f);
	json_num(f, "compress", "%.6g", w->compress);
	fputs(", ", f);
	json_num(f, "window_s", "%.3f", w->window_s);
	fputs(", ", f);
	json_num(f, "offered_load", "%.6g", w->load);
	fputs(", ", f);
	json_num(f, "window_load", "%.6g", w->window_load);
	fputs(", ", f);
	json_num(f, "max_duration_s", "%.0f", w->max_duration_s);
	fputs("},\n", f);
}

/* One policy's object. */
static void json_result(FILE *f, const mu_etopo_result_t *r)
{
	fputs("    {\"policy\": ", f);
	mu__json_str(f, mu_etopo_policy_name(r->policy));
	fprintf(f, ", \"jobs\": %lld, \"started\": %lld, \"completed\": %lld, "
		"\"gangs\": %lld, \"within_tightest\": %lld,\n     ", (long long)r->jobs,
		(long long)r->started, (long long)r->completed, (long long)r->gangs,
		(long long)r->within);
	json_num(f, "within_share", "%.6g", r->within_share);
	fputs(", ", f);
	json_num(f, "mean_tors", "%.6g", r->mean_tors);
	fputs(", ", f);
	json_num(f, "mean_slowdown", "%.6g", r->mean_slowdown);
	fputs(", \"tors_hist\": [", f);
	for (int k = 1; k < MU_ETOPO_HIST; k++)
		fprintf(f, "%s%lld", k > 1 ? ", " : "", (long long)r->tors_hist[k]);
	fputs("], \"tiers\": {", f);
	for (int t = 0; t < MU_ETOPO_NTIERS; t++)
		fprintf(f, "%s\"%s\": %lld", t ? ", " : "", mu_etopo_tier_name(t),
			(long long)r->tier_gangs[t]);
	fputs("},\n     \"sizes\": [", f);
	for (int c = 0; c < MU_ETOPO_NSIZES; c++) {
		const mu_etopo_size_t *z = &r->sizes[c];
		fprintf(f, "%s{\"gpus\": \"%s\", \"gangs\": %lld, \"within\": %lld, ",
			c ? ", " : "", mu_etopo_size_name(c), (long long)z->gangs,
			(long long)z->within);
		json_num(f, "mean_tors", "%.6g", z->mean_tors);
		fputs(", ", f);
		json_num(f, "mean_wait_s", "%.3f", z->mean_wait_s);
		fputs(", ", f);
		json_num(f, "mean_jct_s", "%.3f", z->mean_jct_s);
		fputs("}", f);
	}
	fputs("],\n     ", f);
	const struct { const char *k, *fmt; double v; } nums[] = {
		{"gpu_utilization", "%.6g", r->util},
		{"useful_utilization", "%.6g", r->util_useful},
		{"gpu_utilization_run", "%.6g", r->util_run},
		{"mean_jct_s", "%.3f", r->mean_jct_s}, {"p99_jct_s", "%.3f", r->p99_jct_s},
		{"mean_wait_s", "%.3f", r->mean_wait_s}, {"p99_wait_s", "%.3f", r->p99_wait_s},
		{"gang_mean_jct_s", "%.3f", r->gang_jct_s},
		{"gang_p99_jct_s", "%.3f", r->gang_p99_jct_s},
		{"gang_mean_wait_s", "%.3f", r->gang_wait_s},
		{"makespan_s", "%.3f", r->makespan_s}, {"engine_s", "%.4f", r->engine_s},
		{"engine_ms_per_job", "%.4f",
		 r->started ? r->engine_s * 1000 / (double)r->started : NAN},
	};
	for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
		json_num(f, nums[i].k, nums[i].fmt, nums[i].v);
		fputs(i == 2 || i == 6 || i == 9 ? ",\n     " : ", ", f);
	}
	fprintf(f, "\"cycles\": %lld, \"preemptions\": %lld}", (long long)r->cycles,
		(long long)r->preemptions);
}

int mu_etopo_write_json(const mu_etopo_report_t *r, FILE *f)
{
	const mu_etopo_net_t *n = r->net;
	fputs("{\n  \"topology\": ", f);
	mu__json_str(f, r->topology_file);
	fputs(", \"trace\": ", f);
	mu__json_str(f, r->trace_file);
	fprintf(f, ",\n  \"hosts\": %d, \"gpus_per_host\": %d, \"dsws\": %d, \"psws\": %d, "
		"\"tors\": %d, \"largest\": {\"dsw\": %d, \"psw\": %d, \"tor\": %d},\n",
		(int)n->nhosts, (int)n->gpus_per_host, (int)n->ndoms[0], (int)n->ndoms[1],
		(int)n->ndoms[2], (int)n->max_hosts[0], (int)n->max_hosts[1],
		(int)n->max_hosts[2]);
	fprintf(f, "  \"seed\": %llu, \"min_gpus\": %d, \"max_jobs\": %lld, \"quick\": %s, ",
		(unsigned long long)r->opts->seed, (int)r->opts->min_gpus,
		(long long)r->opts->max_jobs, r->quick ? "true" : "false");
	json_num(f, "load_target", "%.6g", r->opts->load);
	fputs(",\n  \"slowdown\": {", f);
	for (int t = 0; t < MU_ETOPO_NTIERS; t++)
		fprintf(f, "%s\"%s\": %.3g", t ? ", " : "", mu_etopo_tier_name(t),
			mu_etopo_slowdown(t));
	fputs("},\n", f);
	json_workload(f, r->work);
	fputs("  \"policies\": [\n", f);
	for (size_t i = 0; i < r->nres; i++) {
		json_result(f, &r->res[i]);
		fputs(i + 1 < r->nres ? ",\n" : "\n", f);
	}
	fputs("  ]\n}\n", f);
	return ferror(f) ? MU_EIO : MU_OK;
}

/* --- HTML --------------------------------------------------------------------- */

/* Rules of this page beyond the shared ones (src/report/page.c). */
static const char topo_css[] =
	".grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));"
	"gap:8px 20px}\n";

/* A cell with a number (decimals), a percentage, or a duration. */
static void cell_num(FILE *f, double v, int decimals)
{
	if (isfinite(v))
		fprintf(f, "<td>%.*f</td>", decimals, v);
	else
		fputs("<td>-</td>", f);
}

static void cell_pct(FILE *f, double v)
{
	char b[32];
	mu__fmt_pct(b, sizeof b, v, 1);
	fprintf(f, "<td>%s</td>", b);
}

static void cell_dur(FILE *f, double s)
{
	char b[32];
	mu__fmt_duration(b, sizeof b, s);
	fprintf(f, "<td>%s</td>", b);
}

/* The protocol paragraph: network, workload, model. */
static void html_protocol(FILE *f, const mu_etopo_report_t *r)
{
	const mu_etopo_net_t *n = r->net;
	const mu_etopo_workload_t *w = r->work;
	char win[32], span[32];
	mu__fmt_duration(win, sizeof win, w->window_s);
	mu__fmt_duration(span, sizeof span, w->trace_span_s);
	fputs("<section>\n<h2>Protocol</h2>\n<p>Network: <code>", f);
	mu__html_text(f, r->topology_file, 120);
	fprintf(f, "</code>: %d hosts of %d GPUs, %d core (DSW), %d aggregation (PSW) "
		"and %d ToR (ASW within its PSW) domains; the largest ToR has %d hosts, "
		"the largest PSW %d.</p>\n<p>Workload: <code>", (int)n->nhosts,
		(int)n->gpus_per_host, (int)n->ndoms[0], (int)n->ndoms[1], (int)n->ndoms[2],
		(int)n->max_hosts[2], (int)n->max_hosts[1]);
	mu__html_text(f, r->trace_file, 120);
	fprintf(f, "</code>: %lld jobs of %d GPUs or more (%lld multi-node gangs of "
		"%d-GPU pods), real durations; arrivals over %s of trace time "
		"compressed %.2f&times; into %s, an offered load of %.1f%% of the "
		"GPUs (arrival rate &times; mean GPU-work; started on arrival, the jobs "
		"would hold %.1f%% of the GPUs over that window).%s</p>\n",
		(long long)w->jobs, (int)r->opts->min_gpus, (long long)w->gangs,
		(int)n->gpus_per_host, span, w->compress, win, w->load * 100,
		w->window_load * 100,
		r->quick ? " <b>Quick run: a prefix of the trace.</b>" : "");
	fputs("<p>JCT model: a job runs its trace duration &times; 1.0 within one "
	      "host or ToR, 1.1 across ToRs of one PSW, 1.25 across PSWs, 1.5 across "
	      "cores. Utilization is GPU-time held during the window of submits. "
	      "Every run uses the engine's defaults (backfill with reservations, "
	      "preemption when a reservation falls due) but consolidation.</p>\n"
	      "</section>\n", f);
}

/* The table: one row per policy. */
static void html_table(FILE *f, const mu_etopo_report_t *r)
{
	fputs("<section>\n<h2>Results</h2>\n<p class=\"cap\">Gangs: jobs of two "
	      "pods or more (multi-node); their placement is their first.  Useful "
	      "util: GPU-time divided by each job's slowdown.  Engine ms/job: wall "
	      "time in the engine over jobs started.</p>\n"
	      "<table>\n<thead><tr><th>Policy</th><th>Gangs</th><th>Within tightest"
	      "</th><th>ToRs/gang</th><th>Slowdown</th><th>GPU util</th>"
	      "<th>Useful util</th><th>Mean JCT</th><th>p99 JCT</th><th>Mean wait</th>"
	      "<th>Gang JCT</th>"
	      "<th>Gang wait</th><th>Engine ms/job</th></tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < r->nres; i++) {
		const mu_etopo_result_t *x = &r->res[i];
		fputs("<tr><td>", f);
		mu__html_text(f, mu_etopo_policy_name(x->policy), 0);
		fprintf(f, "</td><td>%lld</td>", (long long)x->gangs);
		cell_pct(f, x->within_share);
		cell_num(f, x->mean_tors, 2);
		cell_num(f, x->mean_slowdown, 3);
		cell_pct(f, x->util);
		cell_pct(f, x->util_useful);
		cell_dur(f, x->mean_jct_s);
		cell_dur(f, x->p99_jct_s);
		cell_dur(f, x->mean_wait_s);
		cell_dur(f, x->gang_jct_s);
		cell_dur(f, x->gang_wait_s);
		cell_num(f, x->started ? x->engine_s * 1000 / (double)x->started : NAN, 3);
		fputs("</tr>\n", f);
	}
	fputs("</tbody>\n</table>\n</section>\n", f);
}

/* The gangs of each size class under each policy. */
static void html_sizes(FILE *f, const mu_etopo_report_t *r)
{
	fputs("<section>\n<h2>By gang size</h2>\n<table>\n<thead><tr><th>Policy</th>"
	      "<th>GPUs</th><th>Gangs</th><th>Within tightest</th><th>ToRs/gang</th>"
	      "<th>Mean wait</th><th>Mean JCT</th></tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < r->nres; i++)
		for (int c = 0; c < MU_ETOPO_NSIZES; c++) {
			const mu_etopo_size_t *z = &r->res[i].sizes[c];
			if (!z->gangs)
				continue;
			fputs("<tr><td>", f);
			mu__html_text(f, mu_etopo_policy_name(r->res[i].policy), 0);
			fputs("</td><td>", f);
			mu__html_text(f, mu_etopo_size_name(c), 0);
			fprintf(f, "</td><td>%lld</td>", (long long)z->gangs);
			cell_pct(f, (double)z->within / (double)z->gangs);
			cell_num(f, z->mean_tors, 2);
			cell_dur(f, z->mean_wait_s);
			cell_dur(f, z->mean_jct_s);
			fputs("</tr>\n", f);
		}
	fputs("</tbody>\n</table>\n</section>\n", f);
}

/* One bar chart: metric `off` (a double in mu_etopo_result_t) per policy. */
static void html_bars(FILE *f, const mu_etopo_report_t *r, size_t off,
		      mu__svg_fmt_t fmt, const char *title, const char *xtitle)
{
	mu__svg_bar_t bars[MU_ETOPO_NPOLICIES];
	char notes[MU_ETOPO_NPOLICIES][48];
	size_t n = r->nres < MU_ETOPO_NPOLICIES ? r->nres : MU_ETOPO_NPOLICIES;
	for (size_t i = 0; i < n; i++) {
		double v = *(const double *)((const char *)&r->res[i] + off);
		if (fmt == MU__SVG_PCT)
			mu__fmt_pct(notes[i], sizeof notes[i], v, 1);
		else if (fmt == MU__SVG_DUR)
			mu__fmt_duration(notes[i], sizeof notes[i], v);
		else
			snprintf(notes[i], sizeof notes[i], "%.2f", v);
		bars[i] = (mu__svg_bar_t){mu_etopo_policy_name(r->res[i].policy),
					  isfinite(v) ? v : 0, notes[i]};
	}
	fputs("<h3>", f);
	mu__html_text(f, title, 0);
	fputs("</h3>\n", f);
	mu__svg_hbars(f, W, bars, n, fmt, xtitle, title);
}

/* A histogram of ToRs spanned per gang for result x (class cls), as a
 * share of its gangs, on a y axis up to ymax. */
static void html_hist(FILE *f, const mu_etopo_result_t *x, const char *cls,
		      double ymax)
{
	static const char *const labels[] = {"1", "2", "3", "4", "5", "6", "7", "8",
					     "9", "10", "11", "12", "13", "14", "15", "16+"};
	double ticks[MU_ETOPO_HIST - 1];
	for (int k = 1; k < MU_ETOPO_HIST; k++)
		ticks[k - 1] = k;
	mu__svg_axis_t ax = {MU__SVG_NUM, "ToRs spanned", 0, ticks, labels,
			     MU_ETOPO_HIST - 1, false};
	mu__svg_axis_t ay = {MU__SVG_PCT, "share of gangs", 0, NULL, NULL, 0, true};
	ay.step = mu__svg_nice_ceil(0, &ymax, 4);
	mu__svg_plot_t p;
	char title[96], tip[96];
	snprintf(title, sizeof title, "%s: ToRs per gang (%lld gangs)",
		 mu_etopo_policy_name(x->policy), (long long)x->gangs);
	mu__svg_plot_init(&p, 480, 220, 0.5, MU_ETOPO_HIST - 0.5, 0, ymax);
	fputs("<div><h3>", f);
	mu__html_text(f, title, 0);
	fputs("</h3>\n", f);
	mu__svg_open(f, 480, 220, title);
	mu__svg_axes(f, &p, &ax, &ay);
	for (int k = 1; k < MU_ETOPO_HIST; k++) {
		double share = x->gangs ? (double)x->tors_hist[k] / (double)x->gangs : 0;
		snprintf(tip, sizeof tip, "%s ToR%s: %lld gangs", labels[k - 1],
			 k == 1 ? "" : "s", (long long)x->tors_hist[k]);
		if (x->tors_hist[k])
			mu__svg_rect(f, &p, k - 0.38, 0, k + 0.38, share, cls, tip);
	}
	mu__svg_close(f);
	fputs("</div>\n", f);
}

/* The charts: bars per metric, then the histograms on one y scale. */
static void html_charts(FILE *f, const mu_etopo_report_t *r)
{
	fputs("<section>\n<h2>Per policy</h2>\n", f);
	html_bars(f, r, offsetof(mu_etopo_result_t, within_share), MU__SVG_PCT,
		  "Gangs within their tightest feasible level", "share of gangs");
	html_bars(f, r, offsetof(mu_etopo_result_t, mean_tors), MU__SVG_NUM,
		  "Mean ToR switches a gang spans", "ToRs");
	html_bars(f, r, offsetof(mu_etopo_result_t, util), MU__SVG_PCT,
		  "GPU utilization during the window of submits", "allocated GPUs");
	html_bars(f, r, offsetof(mu_etopo_result_t, gang_jct_s), MU__SVG_DUR,
		  "Mean JCT of the gangs", "seconds");
	html_bars(f, r, offsetof(mu_etopo_result_t, mean_jct_s), MU__SVG_DUR,
		  "Mean JCT of all jobs", "seconds");
	html_bars(f, r, offsetof(mu_etopo_result_t, gang_wait_s), MU__SVG_DUR,
		  "Mean wait of the gangs", "seconds");
	fputs("</section>\n<section>\n<h2>ToRs spanned per gang</h2>\n<p class=\"cap\">"
	      "Share of each policy's multi-node gangs by the number of ToR switches "
	      "their pods sit under.</p>\n<div class=\"grid2\">\n", f);
	double ymax = 0.01;
	for (size_t i = 0; i < r->nres; i++)
		for (int k = 1; k < MU_ETOPO_HIST && r->res[i].gangs; k++)
			ymax = fmax(ymax, (double)r->res[i].tors_hist[k] /
					  (double)r->res[i].gangs);
	for (size_t i = 0; i < r->nres; i++) {
		char cls[16];
		snprintf(cls, sizeof cls, "bar s%zu", i % 8);
		html_hist(f, &r->res[i], cls, ymax);
	}
	fputs("</div>\n</section>\n", f);
}

int mu_etopo_write_html(const mu_etopo_report_t *r, FILE *f)
{
	mu__report_page_open(f, "muster eval topology", topo_css);
	fputs("<h1>Topology on a real Clos network"
	      "</h1>\n<p class=\"cap\">Does topology-aware gang placement pay off? "
	      "muster with topology requests against a topology-blind engine "
	      "(docs/evaluation.md).</p>\n", f);
	html_protocol(f, r);
	html_table(f, r);
	html_charts(f, r);
	html_sizes(f, r);
	mu__report_page_close(f);
	return ferror(f) ? MU_EIO : MU_OK;
}

/*
 * eval_report.c - the openb evaluation's results as JSON and as one
 * self-contained HTML page.
 *
 * The page has inline CSS and SVG only (muster/report.h): the allocation
 * curves of every policy (mean over its seeds) drawn solid, the paper's
 * published curve of the same policy dashed in the same colour, a zoom on
 * the saturated end, the fragmentation-ratio curves the same way, and a
 * table at x = 100 and 130 with the gaps, and where the free GPUs are at
 * the end (holes by size, whole devices).  Output is deterministic for a
 * given report except the run time shown in the header.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "muster/eval.h"
#include "muster/report.h"

#define EV_W 1040.0
#define EV_MAX_CLASSES 8

/* --- Means --------------------------------------------------------------- */

int mu_eval_series_mean(mu_eval_series_t *s)
{
	if (s->nruns == 0)
		return MU_EINVAL;
	int32_t n = s->runs[0].npoints;
	free(s->alloc_mean);
	free(s->frag_mean);
	s->alloc_mean = calloc((size_t)n, sizeof *s->alloc_mean);
	s->frag_mean = calloc((size_t)n, sizeof *s->frag_mean);
	if (!s->alloc_mean || !s->frag_mean)
		return MU_ENOMEM;
	for (size_t r = 0; r < s->nruns; r++)
		for (int32_t x = 0; x < n && x < s->runs[r].npoints; x++) {
			s->alloc_mean[x] += s->runs[r].alloc[x] / (double)s->nruns;
			s->frag_mean[x] += s->runs[r].frag[x] / (double)s->nruns;
		}
	return MU_OK;
}

/* --- JSON ---------------------------------------------------------------- */

static void json_curve(FILE *f, const double *v, int32_t n)
{
	fputc('[', f);
	for (int32_t x = 0; x < n; x++)
		fprintf(f, "%s%.4f", x ? "," : "", isfinite(v[x]) ? v[x] : 0.0);
	fputc(']', f);
}

/* One policy's object; several seeds make arrays of seed and curves. */
static void json_series(FILE *f, const mu_eval_report_t *r,
			const mu_eval_series_t *s)
{
	bool many = s->nruns > 1;
	int32_t n = s->runs[0].npoints;
	fputs("{\"workload\":", f);
	mu__json_str(f, r->workload);
	fputs(",\"policy\":", f);
	mu__json_str(f, s->policy);
	fprintf(f, ",\"tune\":%g,\"gpus\":%lld,\"seed\":%s", r->tune,
		(long long)r->gpus, many ? "[" : "");
	for (size_t i = 0; i < s->nruns; i++)
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)s->runs[i].seed);
	fputs(many ? "],\"alloc\":[" : ",\"alloc\":", f);
	for (size_t i = 0; i < s->nruns; i++) {
		fputs(i ? "," : "", f);
		json_curve(f, s->runs[i].alloc, n);
	}
	fputs(many ? "],\"frag_ratio\":[" : ",\"frag_ratio\":", f);
	for (size_t i = 0; i < s->nruns; i++) {
		fputs(i ? "," : "", f);
		json_curve(f, s->runs[i].frag, n);
	}
	fputs(many ? "],\"pods\":[" : ",\"pods\":", f);
	for (size_t i = 0; i < s->nruns; i++)
		fprintf(f, "%s{\"arrived\":%lld,\"placed\":%lld,\"skipped\":%lld}",
			i ? "," : "", (long long)s->runs[i].arrivals,
			(long long)s->runs[i].placed, (long long)s->runs[i].skipped);
	fputs(many ? "],\"free_milli\":[" : ",\"free_milli\":", f);
	for (size_t i = 0; i < s->nruns; i++) {
		fputs(i ? ",{" : "{", f);
		for (int b = 0; b < MU_EVAL_WASTE_BINS; b++)
			fprintf(f, "%s\"%s\":%lld", b ? "," : "",
				mu_eval_waste_name(b),
				(long long)s->runs[i].waste_milli[b]);
		fputc('}', f);
	}
	if (many) {
		fputs("],\"alloc_mean\":", f);
		json_curve(f, s->alloc_mean, n);
		fputs(",\"frag_ratio_mean\":", f);
		json_curve(f, s->frag_mean, n);
	}
	fputc('}', f);
}

int mu_eval_write_json(const mu_eval_report_t *r, FILE *f)
{
	if (!r || !f || r->nseries == 0)
		return MU_EINVAL;
	if (r->nseries > 1)
		fputs("{\"policies\":[\n", f);
	for (size_t i = 0; i < r->nseries; i++) {
		if (r->series[i].nruns == 0)
			return MU_EINVAL;
		json_series(f, r, &r->series[i]);
		fputs(i + 1 < r->nseries ? ",\n" : "\n", f);
	}
	if (r->nseries > 1)
		fputs("]}\n", f);
	return ferror(f) ? MU_EIO : MU_OK;
}

/* --- HTML ---------------------------------------------------------------- */

static const char ev_css[] =
	"*{box-sizing:border-box}\n"
	"body{margin:0;background:#f4f5f7;color:#1f2937;font:14px/1.5 system-ui,"
	"-apple-system,'Segoe UI',Roboto,Arial,sans-serif}\n"
	"main{max-width:1100px;margin:0 auto;padding:28px 20px 40px}\n"
	"h1{font-size:26px;margin:0 0 6px;font-weight:650}\n"
	".sub{color:#6b7280;margin:0}\n"
	"section{background:#fff;border:1px solid #e5e7eb;border-radius:10px;"
	"padding:18px 20px;margin:16px 0}\n"
	"h2{font-size:17px;margin:0 0 2px;font-weight:620}\n"
	"p.cap{color:#6b7280;margin:0 0 12px;font-size:13px}\n"
	"table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}\n"
	"th,td{padding:6px 10px;border-bottom:1px solid #eef0f3;text-align:right}\n"
	"th:first-child,td:first-child{text-align:left}\n"
	"th{font-weight:600;color:#4b5563;font-size:12px;background:#f9fafb}\n"
	".chart .paper{stroke-dasharray:6 4;stroke-width:1.2;opacity:.85}\n"
	".chart .ours{stroke-width:2}\n";

/* A curve as svg points: x = index, y = value (NAN skips). */
typedef struct ev_curve {
	const double *v;
	double scale; /* values in % are drawn as ratios */
} ev_curve_t;

static void ev_point(const void *ctx, size_t i, double *x, double *y)
{
	const ev_curve_t *c = ctx;
	*x = (double)i;
	*y = c->v[i] * c->scale;
}

static const char *ev_class(size_t i)
{
	static const char *const cls[EV_MAX_CLASSES] = {"s0", "s1", "s2", "s3",
							"s4", "s5", "s6", "s7"};
	return cls[i % EV_MAX_CLASSES];
}

/* The paper's curve of series i for the allocation (frag = false) or the
 * fragmentation ratio, or NULL. */
static const mu_eval_paper_curve_t *ev_paper(const mu_eval_report_t *r,
					     size_t i, bool frag)
{
	return mu_eval_paper_find(frag ? r->paper_frag : r->paper_alloc,
				  r->workload, r->series[i].policy);
}

/* One chart: every series' mean curve of x in [x0, x1], y in [y0, y1]
 * (ratios), and the paper's curves dashed. */
static void ev_chart(FILE *f, const mu_eval_report_t *r, bool frag,
		     double x0, double x1, double y0, double y1,
		     const char *label)
{
	const char *names[EV_MAX_CLASSES + 1], *cls[EV_MAX_CLASSES + 1];
	size_t nl = 0;
	mu__svg_axis_t ax = {MU__SVG_NUM, "arrived GPU demand (% of the cluster's GPUs)",
			     10, NULL, NULL, 0, true};
	mu__svg_axis_t ay = {MU__SVG_PCT, frag ? "fragmentation ratio" :
			     "GPUs allocated", 0, NULL, NULL, 0, true};
	mu__svg_plot_t p;
	mu__svg_plot_init(&p, EV_W, 340, x0, x1, y0, y1);
	mu__svg_open(f, EV_W, 340, label);
	mu__svg_axes(f, &p, &ax, &ay);
	for (size_t i = 0; i < r->nseries; i++) {
		char c[32];
		const mu_eval_paper_curve_t *pc = ev_paper(r, i, frag);
		if (pc) {
			ev_curve_t pcv = {pc->mean, 0.01};
			snprintf(c, sizeof c, "%s paper", ev_class(i));
			mu__svg_series(f, &p, ev_point, &pcv, (size_t)pc->npoints, c, false);
		}
		const mu_eval_series_t *s = &r->series[i];
		ev_curve_t cv = {frag ? s->frag_mean : s->alloc_mean, 0.01};
		snprintf(c, sizeof c, "%s ours", ev_class(i));
		mu__svg_series(f, &p, ev_point, &cv, (size_t)s->runs[0].npoints, c, false);
		if (nl < EV_MAX_CLASSES) {
			names[nl] = s->policy;
			cls[nl++] = ev_class(i);
		}
	}
	mu__svg_legend(f, p.px + 8, p.py + 16, names, cls, nl);
	mu__svg_close(f);
}

/* A table cell with a number, or "-" when not finite. */
static void ev_td(FILE *f, double v, bool sign)
{
	if (isfinite(v))
		fprintf(f, sign ? "<td>%+.2f</td>" : "<td>%.2f</td>", v);
	else
		fputs("<td>-</td>", f);
}

static double ev_at(const double *v, int32_t n, int32_t x)
{
	return v && x < n ? v[x] : NAN;
}

/* The table at x = 100 and 130 (or the grid's end). */
static void ev_table(FILE *f, const mu_eval_report_t *r)
{
	int32_t n = r->series[0].runs[0].npoints, xe = n - 1;
	int32_t xa = 100 < xe ? 100 : xe;
	fprintf(f, "<table><thead><tr><th>policy</th><th>seeds</th>"
		"<th>alloc @%d</th><th>paper</th><th>gap</th>"
		"<th>alloc @%d</th><th>paper</th><th>gap</th>"
		"<th>frag @%d</th><th>paper</th></tr></thead><tbody>\n",
		xa, xe, xe);
	for (size_t i = 0; i < r->nseries; i++) {
		const mu_eval_series_t *s = &r->series[i];
		const mu_eval_paper_curve_t *pa = ev_paper(r, i, false);
		const mu_eval_paper_curve_t *pf = ev_paper(r, i, true);
		fputs("<tr><td>", f);
		mu__html_text(f, s->policy, 40);
		fprintf(f, "</td><td>%zu</td>", s->nruns);
		for (int k = 0; k < 2; k++) {
			int32_t x = k ? xe : xa;
			double a = s->alloc_mean[x];
			double b = pa ? ev_at(pa->mean, pa->npoints, x) : NAN;
			ev_td(f, a, false);
			ev_td(f, b, false);
			ev_td(f, a - b, true);
		}
		ev_td(f, s->frag_mean[xe], false);
		ev_td(f, pf ? ev_at(pf->mean, pf->npoints, xe) : NAN, false);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

/* Where the free GPUs are at the end: per policy, mean over its seeds, in
 * GPUs, by the free share of each device (mu_eval_waste_name). */
static void ev_free_table(FILE *f, const mu_eval_report_t *r)
{
	fputs("<table><thead><tr><th>policy</th><th>1-99</th><th>100-189</th>"
	      "<th>190-199</th><th>200-499</th><th>500-999</th><th>whole</th>"
	      "<th>free</th></tr></thead><tbody>\n", f);
	for (size_t i = 0; i < r->nseries; i++) {
		const mu_eval_series_t *s = &r->series[i];
		fputs("<tr><td>", f);
		mu__html_text(f, s->policy, 40);
		fputs("</td>", f);
		double all = 0;
		for (int b = 0; b < MU_EVAL_WASTE_BINS; b++) {
			double sum = 0;
			for (size_t k = 0; k < s->nruns; k++)
				sum += (double)s->runs[k].waste_milli[b];
			sum /= 1000.0 * (double)s->nruns;
			all += sum;
			ev_td(f, sum, false);
		}
		ev_td(f, all, false);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

static void ev_header(FILE *f, const mu_eval_report_t *r)
{
	char gpus[32], pods[32], run[32];
	mu__fmt_count(gpus, sizeof gpus, r->gpus);
	mu__fmt_count(pods, sizeof pods, r->pods);
	mu__fmt_duration(run, sizeof run, r->run_s);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
	      "'none'; style-src 'unsafe-inline'\">\n<title>muster eval openb: ", f);
	mu__html_text(f, r->workload, 80);
	fprintf(f, "</title>\n<style>\n%s", ev_css);
	mu__svg_css(f);
	fputs("</style></head><body><main>\n<header><h1>openb: ", f);
	mu__html_text(f, r->workload, 80);
	fprintf(f, "</h1><p class=\"sub\">%lld nodes, %s GPUs, %s pods in the "
		"trace, tune %.2f; runs took %s. Protocol of the FGD paper (USENIX "
		"ATC'23); see docs/evaluation.md.</p>\n",
		(long long)r->nodes, gpus, pods, r->tune, run);
	if (r->nodes_file && r->pods_file) {
		fputs("<p class=\"sub\">Nodes: ", f);
		mu__html_text(f, r->nodes_file, 200);
		fputs("; pods: ", f);
		mu__html_text(f, r->pods_file, 200);
		fputs(".</p>\n", f);
	}
	fputs("</header>\n", f);
}

int mu_eval_write_html(const mu_eval_report_t *r, FILE *f)
{
	if (!r || !f || r->nseries == 0)
		return MU_EINVAL;
	for (size_t i = 0; i < r->nseries; i++)
		if (r->series[i].nruns == 0 || !r->series[i].alloc_mean)
			return MU_EINVAL;
	int32_t n = r->series[0].runs[0].npoints;
	double xe = n - 1;
	ev_header(f, r);
	fputs("<section><h2>At the end</h2><p class=\"cap\">Mean over the seeds "
	      "of the share of the cluster's GPUs allocated (%) once 100% and "
	      "all of the demand has arrived, next to the paper's published "
	      "mean; fragmentation ratio (%) at the end.</p>\n", f);
	ev_table(f, r);
	fputs("</section>\n<section><h2>Free GPUs at the end</h2><p class=\"cap\">"
	      "Mean over the seeds, in GPUs, by the free milli-GPU of each "
	      "device: holes on partly used devices (190-199 is what an "
	      "810-milli share leaves alone on a device) and whole free "
	      "devices.</p>\n", f);
	ev_free_table(f, r);
	fputs("</section>\n<section><h2>GPU allocation</h2><p class=\"cap\">Solid: "
	      "muster's runs (mean over seeds). Dashed: the paper's published "
	      "curve of the same policy.</p>\n", f);
	ev_chart(f, r, false, 0, xe, 0, 1, "GPU allocation");
	fputs("<p class=\"cap\">The saturated end, zoomed.</p>\n", f);
	ev_chart(f, r, false, xe * 0.6, xe, 0.8, 1.0, "GPU allocation, zoomed");
	fputs("</section>\n<section><h2>GPU fragmentation ratio</h2><p class=\"cap\">"
	      "Expected fragmentation of the free GPU capacity under the trace's "
	      "pod mix (the paper's measure), over the free capacity.</p>\n", f);
	ev_chart(f, r, true, 0, xe, 0, 1, "GPU fragmentation ratio");
	fputs("</section>\n<footer>muster</footer></main></body></html>\n", f);
	return ferror(f) ? MU_EIO : MU_OK;
}

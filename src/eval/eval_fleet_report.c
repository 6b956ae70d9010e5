/*
 * eval_fleet_report.c - the fleet evaluation's writers: every figure as
 * JSON, and a self-contained HTML page with the protocol, a table per
 * question and a bar chart per metric (docs/evaluation.md, "Fleet").
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "muster/eval_fleet.h"
#include "muster/report.h"
#include "muster/util.h"

#define W 760

static const char *const bucket_names[MU_FLEET_EVAL_BUCKETS] = {
	"1 GPU", "2-4 GPUs", "5-8 GPUs", "9-16 GPUs", ">16 GPUs"};

static void json_run(FILE *f, const mu_fleet_eval_t *ev, const mu_fleet_eval_run_t *r)
{
	fprintf(f, "{\"strategy\":\"%s\",\"jobs\":%lld,\"completed\":%lld,\"never_started\":%lld,"
		"\"jct_p50_s\":%.3f,\"jct_p99_s\":%.3f,\"jct_mean_s\":%.3f,",
		mu_fleet_strategy_name(r->strategy), (long long)r->jobs,
		(long long)r->completed, (long long)r->never, r->jct_p50_s, r->jct_p99_s,
		r->jct_mean_s);
	fputs("\"wait_by_gang\":[", f);
	for (int b = 0; b < MU_FLEET_EVAL_BUCKETS; b++)
		fprintf(f, "%s{\"gang\":\"%s\",\"jobs\":%lld,\"mean_s\":%.3f,\"p99_s\":%.3f}",
			b ? "," : "", bucket_names[b], (long long)r->bucket_jobs[b],
			r->wait_mean_s[b], r->wait_p99_s[b]);
	fputs("],\"utilization\":{", f);
	for (int c = 0; c < MU_FLEET_EVAL_CLUSTERS; c++) {
		fprintf(f, "%s", c ? "," : "");
		mu__json_str(f, ev->clusters[c].name);
		fprintf(f, ":%.4f", r->util[c]);
	}
	fprintf(f, "},\"public_gpu_hours\":%.3f,\"public_cost\":%.2f,\"misplaced\":%lld,"
		"\"wasted_admissions\":%lld,\"duplicates\":%lld,\"makespan_s\":%.3f,"
		"\"wall_s\":%.3f}", r->public_gpu_h, r->cost, (long long)r->misplaced,
		(long long)r->wasted, (long long)r->duplicates, r->makespan_s, r->wall_s);
}

int mu_fleet_eval_write_json(const mu_fleet_eval_t *ev, FILE *f)
{
	if (!ev || !f)
		return MU_EINVAL;
	fputs("{\"eval\":\"fleet\",\"trace\":", f);
	mu__json_str(f, ev->trace ? ev->trace : "");
	fprintf(f, ",\"window\":{\"from_s\":%lld,\"to_s\":%lld,\"jobs\":%lld,"
		"\"max_gpus\":%d,\"private_nodes\":%d,\"load\":%.3f,\"scale\":%.6f},"
		"\"teams\":%d,\"burst_after_s\":%.0f,\"public_price\":%.3f,\"clusters\":[",
		(long long)ev->win.from_s, (long long)ev->win.to_s, (long long)ev->win.jobs,
		ev->win.max_gpus, ev->win.nodes, ev->win.offered, ev->win.scale, ev->nteams,
		(double)ev->opts.burst_after / 1000, ev->opts.public_cost);
	for (int c = 0; c < MU_FLEET_EVAL_CLUSTERS; c++) {
		const mu_fleet_eval_cluster_t *k = &ev->clusters[c];
		fprintf(f, "%s{\"name\":", c ? "," : "");
		mu__json_str(f, k->name);
		fprintf(f, ",\"tier\":\"%s\",\"gpu_model\":", k->public_ ? "public" : "private");
		mu__json_str(f, k->model);
		fprintf(f, ",\"nodes\":%d,\"gpus\":%d,\"static_teams\":%d}", k->nodes,
			k->gpus, k->teams);
	}
	fputs("],\"runs\":[", f);
	for (size_t i = 0; i < ev->nruns; i++) {
		fputs(i ? "," : "", f);
		json_run(f, ev, &ev->runs[i]);
	}
	fprintf(f, "],\"wall_s\":%.3f}\n", ev->wall_s);
	return ferror(f) ? MU_EIO : MU_OK;
}


static void td_dur(FILE *f, double s)
{
	char b[48];
	mu__fmt_duration(b, sizeof b, s);
	fprintf(f, "<td>%s</td>", b);
}

static void html_protocol(FILE *f, const mu_fleet_eval_t *ev)
{
	fputs("<section>\n<h2>Protocol</h2>\n<p class=\"cap\">Trace ", f);
	mu__html_text(f, ev->trace ? ev->trace : "(unnamed)", 0);
	fprintf(f, ": %lld jobs of %d teams from %.1f h to %.1f h after the first row, "
		"the largest asking for %d GPUs; %d private nodes of 8 GPUs sized for an "
		"offered load of %.2f, split into three private clusters, and a public "
		"cluster at %.2f per GPU-hour.  muster bursts to it after %.0f minutes.</p>\n",
		(long long)ev->win.jobs, ev->nteams, ev->win.from_s / 3600.0,
		ev->win.to_s / 3600.0, ev->win.max_gpus, ev->win.nodes, ev->win.offered,
		ev->opts.public_cost, (double)ev->opts.burst_after / 60000.0);
	fputs("<table><tr><th>cluster</th><th>tier</th><th>GPU model</th><th>nodes</th>"
	      "<th>GPUs</th><th>teams (static)</th></tr>\n", f);
	for (int c = 0; c < MU_FLEET_EVAL_CLUSTERS; c++) {
		const mu_fleet_eval_cluster_t *k = &ev->clusters[c];
		fputs("<tr><td>", f);
		mu__html_text(f, k->name, 0);
		fprintf(f, "</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td></tr>\n",
			k->public_ ? "public" : "private", k->model, k->nodes, k->gpus, k->teams);
	}
	fputs("</table>\n</section>\n", f);
}

static void html_table(FILE *f, const mu_fleet_eval_t *ev)
{
	fputs("<section>\n<h2>Results</h2>\n<table><tr><th>strategy</th><th>completed</th>"
	      "<th>never started</th><th>JCT p50</th><th>JCT p99</th>", f);
	for (int c = 0; c < MU_FLEET_EVAL_CLUSTERS; c++)
		fprintf(f, "<th>util %s</th>", ev->clusters[c].name);
	fputs("<th>public GPU-h</th><th>cost</th><th>misplaced</th><th>wasted admissions</th>"
	      "<th>duplicates</th></tr>\n", f);
	for (size_t i = 0; i < ev->nruns; i++) {
		const mu_fleet_eval_run_t *r = &ev->runs[i];
		fprintf(f, "<tr><td>%s</td><td>%lld</td><td>%lld</td>",
			mu_fleet_strategy_name(r->strategy), (long long)r->completed,
			(long long)r->never);
		td_dur(f, r->jct_p50_s);
		td_dur(f, r->jct_p99_s);
		for (int c = 0; c < MU_FLEET_EVAL_CLUSTERS; c++)
			fprintf(f, "<td>%.1f%%</td>", 100 * r->util[c]);
		fprintf(f, "<td>%.1f</td><td>%.2f</td><td>%lld</td><td>%lld</td><td>%lld</td></tr>\n",
			r->public_gpu_h, r->cost, (long long)r->misplaced, (long long)r->wasted,
			(long long)r->duplicates);
	}
	fputs("</table>\n<h3>Mean wait by gang size</h3>\n<table><tr><th>strategy</th>", f);
	for (int b = 0; b < MU_FLEET_EVAL_BUCKETS; b++)
		fprintf(f, "<th>%s</th>", bucket_names[b]);
	fputs("</tr>\n", f);
	for (size_t i = 0; i < ev->nruns; i++) {
		const mu_fleet_eval_run_t *r = &ev->runs[i];
		fprintf(f, "<tr><td>%s</td>", mu_fleet_strategy_name(r->strategy));
		for (int b = 0; b < MU_FLEET_EVAL_BUCKETS; b++)
			td_dur(f, r->wait_mean_s[b]);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

/* One bar per strategy of value v(run), in hours for durations. */
static void chart(FILE *f, const mu_fleet_eval_t *ev, const char *title,
		  double (*v)(const mu_fleet_eval_run_t *, int), int arg,
		  mu__svg_fmt_t fmt, const char *xtitle)
{
	mu__svg_bar_t bars[MU_FS_COUNT];
	char notes[MU_FS_COUNT][48];
	size_t n = ev->nruns < MU_FS_COUNT ? ev->nruns : MU_FS_COUNT;
	for (size_t i = 0; i < n; i++) {
		double x = v(&ev->runs[i], arg);
		if (fmt == MU__SVG_PCT)
			mu__fmt_pct(notes[i], sizeof notes[i], x, 1);
		else
			snprintf(notes[i], sizeof notes[i], "%.2f", x);
		bars[i] = (mu__svg_bar_t){mu_fleet_strategy_name(ev->runs[i].strategy),
					  x > 0 ? x : 0, notes[i]};
	}
	fputs("<h3>", f);
	mu__html_text(f, title, 0);
	fputs("</h3>\n", f);
	mu__svg_hbars(f, W, bars, n, fmt, xtitle, title);
}

static double v_p50(const mu_fleet_eval_run_t *r, int a) { (void)a; return r->jct_p50_s / 3600; }
static double v_p99(const mu_fleet_eval_run_t *r, int a) { (void)a; return r->jct_p99_s / 3600; }
static double v_wait(const mu_fleet_eval_run_t *r, int b) { return r->wait_mean_s[b] / 3600; }
static double v_util(const mu_fleet_eval_run_t *r, int c) { return r->util[c]; }
static double v_pub(const mu_fleet_eval_run_t *r, int a) { (void)a; return r->public_gpu_h; }
static double v_extra(const mu_fleet_eval_run_t *r, int a)
{
	(void)a;
	return (double)(r->misplaced + r->wasted);
}

int mu_fleet_eval_write_html(const mu_fleet_eval_t *ev, FILE *f)
{
	if (!ev || !f)
		return MU_EINVAL;
	mu__report_page_open(f, "muster eval fleet", NULL);
	fprintf(f, "<h1>muster eval fleet</h1>\n"
		"<p class=\"cap\">Where jobs go across a fleet of clusters: static team "
		"assignment, MCAD-like, MultiKueue-like and muster dispatch on the same "
		"jobs (docs/evaluation.md, &ldquo;Fleet&rdquo;).  %zu runs in %.1f s.</p>\n",
		ev->nruns, ev->wall_s);
	html_protocol(f, ev);
	html_table(f, ev);
	fputs("<section>\n<h2>Charts</h2>\n", f);
	chart(f, ev, "JCT p50", v_p50, 0, MU__SVG_NUM, "hours");
	chart(f, ev, "JCT p99", v_p99, 0, MU__SVG_NUM, "hours");
	for (int b = 0; b < MU_FLEET_EVAL_BUCKETS; b++) {
		char t[64];
		snprintf(t, sizeof t, "Mean wait, %s", bucket_names[b]);
		chart(f, ev, t, v_wait, b, MU__SVG_NUM, "hours");
	}
	for (int c = 0; c < MU_FLEET_EVAL_CLUSTERS; c++) {
		char t[80];
		snprintf(t, sizeof t, "GPU utilization, %s", ev->clusters[c].name);
		chart(f, ev, t, v_util, c, MU__SVG_PCT, "utilization");
	}
	chart(f, ev, "Public GPU-hours", v_pub, 0, MU__SVG_NUM, "GPU-hours");
	chart(f, ev, "Gangs misplaced (MCAD) or admissions wasted (MultiKueue)", v_extra, 0,
	      MU__SVG_NUM, "count");
	fputs("</section>\n", f);
	mu__report_page_close(f);
	return ferror(f) ? MU_EIO : MU_OK;
}

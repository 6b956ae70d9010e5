/*
 * eval_pools_report.c - the figures of `muster eval pools` as text and as a
 * self-contained HTML page with bar charts (src/report's SVG helpers):
 * utilization per pool, mean wait per team, and how often a job ran on a
 * fallback pool, for each of the three modes.
 */
#include <stdio.h>
#include <string.h>

#include "muster/eval_pools.h"
#include "muster/report.h"

void mu_evp_print(const mu_evp_result_t *r, FILE *f)
{
	fprintf(f, "node pools: %lld Philly jobs on %lld openb GPUs in %d pools, "
		"a %.1f h arrival window, offered load %.2f\n",
		(long long)r->jobs, (long long)r->gpus, (int)r->npools, r->window_s / 3600,
		r->offered);
	fprintf(f, "\nteams (quota share = share of the window's GPU work; home pool)\n");
	for (int32_t t = 0; t < r->nteams; t++)
		fprintf(f, "  %-12s %5.1f%%  %s\n", r->teams[t].name, 100 * r->teams[t].share,
			r->teams[t].home);
	fprintf(f, "\nutilization per pool over the arrival window\n%-10s %6s", "pool", "GPUs");
	for (int m = 0; m < MU_EVP_NMODES; m++)
		fprintf(f, " %9s", mu_evp_mode_name((mu_evp_mode_t)m));
	fprintf(f, "\n");
	for (int32_t p = 0; p < r->npools; p++) {
		fprintf(f, "%-10s %6lld", r->pools[p].name, (long long)r->pools[p].gpus);
		for (int m = 0; m < MU_EVP_NMODES; m++)
			fprintf(f, " %8.1f%%", 100 * r->runs[m].util[p]);
		fprintf(f, "\n");
	}
	fprintf(f, "%-10s %6lld", "all", (long long)r->gpus);
	for (int m = 0; m < MU_EVP_NMODES; m++)
		fprintf(f, " %8.1f%%", 100 * r->runs[m].util_all);
	fprintf(f, "\n\nwait per team: mean / p95 (minutes), jobs started of jobs\n%-12s", "team");
	for (int m = 0; m < MU_EVP_NMODES; m++)
		fprintf(f, " %26s", mu_evp_mode_name((mu_evp_mode_t)m));
	fprintf(f, "\n");
	for (int32_t t = 0; t < r->nteams; t++) {
		fprintf(f, "%-12s", r->teams[t].name);
		for (int m = 0; m < MU_EVP_NMODES; m++) {
			char b[64];
			snprintf(b, sizeof b, "%.0f / %.0f, %lld/%lld", r->runs[m].wait_mean_s[t] / 60,
				 r->runs[m].wait_p95_s[t] / 60, (long long)r->runs[m].started[t],
				 (long long)r->runs[m].jobs[t]);
			fprintf(f, " %26s", b);
		}
		fprintf(f, "\n");
	}
	const mu_evp_run_t *fb = &r->runs[MU_EVP_FALLBACK], *po = &r->runs[MU_EVP_POOLED];
	fprintf(f, "\nfallback: %lld of %lld started jobs (%.1f%%) ran on a pool that was not "
		"their first choice\npooled: %lld of %lld (%.1f%%) ran outside their preferred pool\n",
		(long long)fb->fallback, (long long)fb->started_all,
		fb->started_all ? 100.0 * (double)fb->fallback / (double)fb->started_all : 0,
		(long long)po->off_home, (long long)po->started_all,
		po->started_all ? 100.0 * (double)po->off_home / (double)po->started_all : 0);
	fprintf(f, "engine time: ");
	for (int m = 0; m < MU_EVP_NMODES; m++)
		fprintf(f, "%s%s %.1f s", m ? ", " : "", mu_evp_mode_name((mu_evp_mode_t)m),
			r->runs[m].engine_s);
	fprintf(f, "\n");
}

/* One bar chart: per mode, one bar per item. */
static void chart(FILE *f, const mu_evp_result_t *r, int n, const char *const *names,
		  double (*value)(const mu_evp_run_t *, int), const char *unit,
		  mu__svg_fmt_t fmt, const char *title)
{
	mu__svg_bar_t bars[MU_EVP_NMODES * (MU_EVP_MAXPOOLS + MU_EVP_MAXTEAMS)];
	char labels[MU_EVP_NMODES * (MU_EVP_MAXPOOLS + MU_EVP_MAXTEAMS)][48];
	char notes[MU_EVP_NMODES * (MU_EVP_MAXPOOLS + MU_EVP_MAXTEAMS)][32];
	size_t k = 0;
	for (int i = 0; i < n; i++)
		for (int m = 0; m < MU_EVP_NMODES; m++, k++) {
			double v = value(&r->runs[m], i);
			snprintf(labels[k], sizeof labels[k], "%s · %s", names[i],
				 mu_evp_mode_name((mu_evp_mode_t)m));
			snprintf(notes[k], sizeof notes[k], "%.1f %s", v, unit);
			bars[k] = (mu__svg_bar_t){labels[k], v, notes[k]};
		}
	fprintf(f, "<h2>%s</h2>\n", title);
	mu__svg_hbars(f, 760, bars, k, fmt, unit, title);
}

static double util_of(const mu_evp_run_t *run, int p) { return 100 * run->util[p]; }
static double wait_of(const mu_evp_run_t *run, int t) { return run->wait_mean_s[t] / 60; }

int mu_evp_write_html(const mu_evp_result_t *r, FILE *f)
{
	const char *pools[MU_EVP_MAXPOOLS], *teams[MU_EVP_MAXTEAMS];
	for (int32_t p = 0; p < r->npools; p++)
		pools[p] = r->pools[p].name;
	for (int32_t t = 0; t < r->nteams; t++)
		teams[t] = r->teams[t].name;
	fprintf(f, "<!doctype html>\n<html><head><meta charset=\"utf-8\">"
		"<title>muster eval pools</title>\n<style>body{font:14px sans-serif;"
		"max-width:820px;margin:2em auto}pre{background:#f6f6f6;padding:1em}");
	mu__svg_css(f);
	fprintf(f, "</style></head><body>\n<h1>Node pools: per-pool quotas with "
		"fallback, one pooled quota, strict per-pool placement</h1>\n"
		"<p>Protocol: docs/evaluation.md, \"Node pools\". Modes: <b>fallback</b> "
		"(per-pool quotas; jobs name their preferred pool, then the others), "
		"<b>pooled</b> (one quota per team; jobs go anywhere), <b>strict</b> "
		"(per-pool quotas; the preferred pool only).</p>\n<pre>");
	/* the text figures, escaped (they hold no markup characters) */
	mu_evp_print(r, f);
	fprintf(f, "</pre>\n");
	chart(f, r, r->npools, pools, util_of, "%", MU__SVG_NUM,
	      "GPU utilization per pool (arrival window)");
	chart(f, r, r->nteams, teams, wait_of, "min", MU__SVG_NUM,
	      "Mean wait per team");
	fprintf(f, "</body></html>\n");
	return ferror(f) ? MU_EIO : MU_OK;
}

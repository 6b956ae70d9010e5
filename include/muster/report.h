/*
 * report.h - the report room (src/report): writers of self-contained HTML
 * reports with inline SVG plots, used by the simulator's report and by the
 * evaluations' and benchmarks' own pages (the text formats they print with
 * are in util.h).
 *
 * Plots: a plot box maps a
 * data window onto pixels; helpers draw axes with "nice" ticks, gridlines and
 * titles, line/area series (downsampled to at most MU__SVG_MAX_POINTS points),
 * rectangles with tooltips, markers, legends and a horizontal bar chart.
 *
 * Everything writes straight to a FILE and ignores write errors: the caller
 * checks ferror() once it is done.  Nothing allocates.  Styling lives in CSS
 * classes; mu__svg_css() writes the rules, to be put inside the page's
 * <style> element.
 */
#ifndef MUSTER_REPORT_H
#define MUSTER_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "muster/sim.h"
#include "muster/util.h"

/* Most points one series is drawn with; longer series are downsampled. */
#define MU__SVG_MAX_POINTS 2000
/* Most ticks one axis draws. */
#define MU__SVG_MAX_TICKS 40
/* Most lines one wait-time CDF draws. */
#define MU__SVG_MAX_CDF 16

/* --- scales and ticks -------------------------------------------------- */

/* A step of 1, 2 or 5 times a power of ten that cuts span into about
 * `target` parts.  span <= 0 or not finite gives 1. */
double mu__svg_nice_step(double span, int target);
/* The same for seconds, on steps people read as times (1s .. 30m, 1h, 2h,
 * 3h, 6h, 12h, 1d, 2d, 7d, ...). */
double mu__svg_nice_dur_step(double span_s, int target);
/* Rounds *hi up to a multiple of a nice step for [lo, *hi] and returns the
 * step.  A window with *hi <= lo becomes [lo, lo + 1]. */
double mu__svg_nice_ceil(double lo, double *hi, int target);

typedef enum mu__svg_fmt {
	MU__SVG_NUM = 0,    /* 1,200 or 0.25, decimals from the step */
	MU__SVG_PCT = 1,    /* a ratio: 0.5 -> "50%" */
	MU__SVG_DUR = 2,    /* seconds: "1h 30m"; 0 -> "0" */
	MU__SVG_LOGDUR = 3, /* log10 of seconds: 2 -> "1m 40s" */
} mu__svg_fmt_t;

/* Formats one tick value; step decides the decimals of MU__SVG_NUM. */
void mu__svg_fmt(char *buf, size_t n, mu__svg_fmt_t fmt, double v, double step);

/* --- plots ------------------------------------------------------------- */

/* A plot box: the pixel rectangle of the plotting area inside an <svg>, and
 * the data window it shows.  Data outside the window is clamped to it. */
typedef struct mu__svg_plot {
	double px, py, pw, ph; /* left, top, width, height in pixels */
	double x0, x1, y0, y1; /* data window, x0 < x1 and y0 < y1 */
} mu__svg_plot_t;

/* One axis: how to pick and label its ticks, and its title. */
typedef struct mu__svg_axis {
	mu__svg_fmt_t fmt;
	const char *title;  /* with its unit, e.g. "time (h)"; NULL: none */
	double step;        /* tick step in data units; 0: a nice one */
	const double *ticks;         /* explicit tick positions, or NULL */
	const char *const *labels;   /* their labels; NULL: formatted */
	size_t nticks;
	bool grid;          /* draw gridlines across the plot */
} mu__svg_axis_t;

/* Sets up a plot box filling a width x height canvas with room for tick
 * labels and axis titles, and data window [x0,x1] x [y0,y1] (widened when
 * empty or not finite). */
void mu__svg_plot_init(mu__svg_plot_t *p, double width, double height,
		       double x0, double x1, double y0, double y1);
/* Pixel coordinates of data values, clamped to the plot box. */
double mu__svg_x(const mu__svg_plot_t *p, double x);
double mu__svg_y(const mu__svg_plot_t *p, double y);

/* <svg viewBox=...> with an accessible label (escaped); and its end. */
void mu__svg_open(FILE *f, double width, double height, const char *label);
void mu__svg_close(FILE *f);

/* Gridlines, axis lines, tick marks and labels, and axis titles.  At most
 * MU__SVG_MAX_TICKS ticks per axis; labels closer than they fit are
 * skipped. */
void mu__svg_axes(FILE *f, const mu__svg_plot_t *p, const mu__svg_axis_t *x,
		  const mu__svg_axis_t *y);

/* Point i of a series, in data units.  A non-finite value skips the point. */
typedef void (*mu__svg_point_fn)(const void *ctx, size_t i, double *x, double *y);

/* Draws points 0..n-1 (ordered by x) as a line of CSS class cls, or, with
 * area set, as a filled area down to y0 under that line.  More than
 * MU__SVG_MAX_POINTS points are reduced to the min and max of equal-count
 * buckets, so peaks survive; O(n) time, no memory.  A single point is
 * drawn as a dot. */
void mu__svg_series(FILE *f, const mu__svg_plot_t *p, mu__svg_point_fn get,
		    const void *ctx, size_t n, const char *cls, bool area);

/* A rectangle from data (x0,y0) to (x1,y1) with class cls and, when tip is
 * not NULL, a hover tooltip (escaped). */
void mu__svg_rect(FILE *f, const mu__svg_plot_t *p, double x0, double y0,
		  double x1, double y1, const char *cls, const char *tip);
/* A dashed vertical (vertical = true, at data x = v) or horizontal (data
 * y = v) marker with a label; row (0, 1, 2...) staggers labels of markers
 * that might overlap. */
/* n vertical markers at v[] (ascending) whose labels sit in a band of
 * up to 3 rows above the plot (p->py is the band's bottom; keep 44 px
 * above it), each in the lowest row where it overlaps no other label, so
 * labels never cover bars or each other.  O(n^2), n small. */
void mu__svg_vmarkers(FILE *f, const mu__svg_plot_t *p, const double *v,
		      const char *const *labels, const char *const *cls, int n);
void mu__svg_marker(FILE *f, const mu__svg_plot_t *p, bool vertical, double v,
		    const char *label, const char *cls, int row);
/* Text at pixel (x, y); anchor is "start", "middle" or "end"; escaped. */
void mu__svg_text(FILE *f, double x, double y, const char *cls,
		  const char *anchor, const char *text);
/* A row of legend entries (a swatch of class classes[i], then names[i])
 * starting at pixel (x, y). */
void mu__svg_legend(FILE *f, double x, double y, const char *const *names,
		    const char *const *classes, size_t n);

/* One bar of a horizontal bar chart. */
typedef struct mu__svg_bar {
	const char *label;  /* left of the bar; truncated to 28 characters */
	double value;       /* in [0, max] of the chart */
	const char *note;   /* right of the bar, e.g. "42% · 1,234 GPU-h" */
} mu__svg_bar_t;

/* One line of a wait-time CDF: n waits in seconds, sorted ascending, and
 * the legend's name (escaped when written). */
typedef struct mu__svg_cdf {
	const double *v;
	size_t n;
	const char *name;
} mu__svg_cdf_t;

/* An <h3> title and a whole <svg> of the share of jobs started against
 * their wait: x on a log scale from 1 s (shorter waits drawn at 1 s) to the
 * first of 1s, 10s, 1m, 10m, 1h, 6h, 1d, 7d, 30d, 1y at or past the
 * longest wait; one line per series (at most MU__SVG_MAX_CDF; colours s0..s7
 * in turn) and a
 * legend.  O(total waits), downsampled as mu__svg_series() does. */
void mu__svg_wait_cdf(FILE *f, double width, double height, const char *title,
		      const mu__svg_cdf_t *series, size_t n);

/* A whole <svg> with one bar per entry, an x axis from 0 to a nice value
 * at or above the largest bar, formatted with fmt and titled xtitle.
 * Bars cycle through the colour classes s0..s7. */
void mu__svg_hbars(FILE *f, double width, const mu__svg_bar_t *bars, size_t n,
		   mu__svg_fmt_t fmt, const char *xtitle, const char *label);

/* The CSS rules for the classes the helpers above use.  Colour classes s0
 * to s7 (blue, orange, green, violet, pink, cyan, amber, slate) set the
 * colour of lines, areas, dots, legend swatches, bars and markers. */
void mu__svg_css(FILE *f);

/* --- the page frame (page.c) ------------------------------------------- */

/* Opens a self-contained page: head with a Content-Security-Policy that
 * allows inline styles only, the title (escaped), the shared style sheet,
 * mu__svg_css(), the caller's extra rules (NULL for none), <body><main>. */
void mu__report_page_open(FILE *f, const char *title, const char *extra_css);
/* Closes <main>, <body> and <html>. */
void mu__report_page_close(FILE *f);

/* --- the simulator's report (report_json.c, report_html.c) ------------- */

/* Write a simulation result as JSON or as a self-contained HTML report.
 * They return MU_OK, MU_EIO when writing fails, or MU_EINVAL for a NULL
 * argument. */
int mu_sim_write_json(const mu_sim_result_t *r, FILE *f);
int mu_sim_write_html(const mu_sim_result_t *r, const char *title, FILE *f);

#endif

/*
 * svg.c - inline-SVG plotting helpers for HTML reports (the text formats
 * they print with are in src/util/fmt.c).
 *
 * The plotting model is deliberately small: a plot box (pixel rectangle plus
 * data window), axes with nice ticks, series drawn as one <path> each, and
 * rectangles and markers for histograms and percentiles.  Colours and fonts
 * come from CSS classes (mu__svg_css), so a page can restyle every chart at
 * once.  No function allocates; write errors are left for the caller's
 * ferror().
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "muster/report.h"

/* Margins of a plot box inside its canvas, pixels. */
#define MU__SVG_ML 66.0
#define MU__SVG_MR 24.0
#define MU__SVG_MT 26.0
#define MU__SVG_MB 48.0

/* --- scales and ticks -------------------------------------------------- */

double mu__svg_nice_step(double span, int target)
{
	if (!isfinite(span) || span <= 0 || target < 1)
		return 1;
	double raw = span / target;
	double mag = pow(10, floor(log10(raw)));
	double r = raw / mag;
	double m = r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10;
	return m * mag;
}

double mu__svg_nice_dur_step(double span_s, int target)
{
	static const double steps[] = {
		1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800,
		3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800,
	};
	if (!isfinite(span_s) || span_s <= 0 || target < 1)
		return 1;
	double raw = span_s / target;
	if (raw < 1)
		return mu__svg_nice_step(span_s, target);
	for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
		if (steps[i] >= raw * 0.75)
			return steps[i];
	return mu__svg_nice_step(span_s / 86400, target) * 86400;
}

double mu__svg_nice_ceil(double lo, double *hi, int target)
{
	if (!isfinite(*hi) || *hi <= lo)
		*hi = lo + 1;
	double step = mu__svg_nice_step(*hi - lo, target);
	*hi = lo + ceil((*hi - lo) / step - 1e-9) * step;
	return step;
}

/* Decimals needed to tell ticks `step` apart: 0 for steps >= 1. */
static int step_decimals(double step)
{
	if (!(step > 0) || step >= 1)
		return 0;
	int d = (int)ceil(-log10(step) - 1e-9);
	return d > 6 ? 6 : d;
}

void mu__svg_fmt(char *buf, size_t n, mu__svg_fmt_t fmt, double v, double step)
{
	if (fabs(v) < fabs(step) * 1e-6)
		v = 0; /* no "-0" */
	switch (fmt) {
	case MU__SVG_PCT:
		mu__fmt_pct(buf, n, v, step_decimals(step * 100));
		return;
	case MU__SVG_DUR:
		if (v == 0)
			snprintf(buf, n, "0");
		else
			mu__fmt_duration(buf, n, v);
		return;
	case MU__SVG_LOGDUR:
		mu__fmt_duration(buf, n, pow(10, v));
		return;
	case MU__SVG_NUM:
	default:
		if (step_decimals(step) == 0 && fabs(v) < 9e15)
			mu__fmt_count(buf, n, (int64_t)llround(v));
		else
			snprintf(buf, n, "%.*f", step_decimals(step), v);
		return;
	}
}

/* --- plots ------------------------------------------------------------- */

void mu__svg_plot_init(mu__svg_plot_t *p, double width, double height,
		       double x0, double x1, double y0, double y1)
{
	p->px = MU__SVG_ML;
	p->py = MU__SVG_MT;
	p->pw = width - MU__SVG_ML - MU__SVG_MR;
	p->ph = height - MU__SVG_MT - MU__SVG_MB;
	if (p->pw < 10)
		p->pw = 10;
	if (p->ph < 10)
		p->ph = 10;
	p->x0 = isfinite(x0) ? x0 : 0;
	p->x1 = isfinite(x1) && x1 > p->x0 ? x1 : p->x0 + 1;
	p->y0 = isfinite(y0) ? y0 : 0;
	p->y1 = isfinite(y1) && y1 > p->y0 ? y1 : p->y0 + 1;
}

double mu__svg_x(const mu__svg_plot_t *p, double x)
{
	double t = (x - p->x0) / (p->x1 - p->x0);
	if (!(t > 0))
		t = 0; /* also NaN */
	if (t > 1)
		t = 1;
	return p->px + t * p->pw;
}

double mu__svg_y(const mu__svg_plot_t *p, double y)
{
	double t = (y - p->y0) / (p->y1 - p->y0);
	if (!(t > 0))
		t = 0;
	if (t > 1)
		t = 1;
	return p->py + p->ph - t * p->ph;
}

void mu__svg_open(FILE *f, double width, double height, const char *label)
{
	fprintf(f, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
		"height=\"%.0f\" role=\"img\" aria-label=\"", width, height,
		width, height);
	mu__html_text(f, label, 0);
	fputs("\">\n", f);
}

void mu__svg_close(FILE *f)
{
	fputs("</svg>\n", f);
}

void mu__svg_text(FILE *f, double x, double y, const char *cls,
		  const char *anchor, const char *text)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"%s\" text-anchor=\"%s\">",
		x, y, cls ? cls : "", anchor ? anchor : "start");
	mu__html_text(f, text, 0);
	fputs("</text>\n", f);
}

/* The ticks of axis a over [lo, hi]: their values into v (at most
 * MU__SVG_MAX_TICKS), the index of each one's explicit label into li (or
 * -1), and the step used for formatting into *step.  Returns the count. */
static size_t axis_ticks(const mu__svg_axis_t *a, double lo, double hi,
			 double *v, long *li, double *step)
{
	size_t n = 0;
	if (a->ticks) {
		*step = a->step > 0 ? a->step : mu__svg_nice_step(hi - lo, 6);
		for (size_t i = 0; i < a->nticks && n < MU__SVG_MAX_TICKS; i++) {
			if (!(a->ticks[i] >= lo && a->ticks[i] <= hi))
				continue;
			li[n] = a->labels ? (long)i : -1;
			v[n++] = a->ticks[i];
		}
		return n;
	}
	double s = a->step;
	if (!(s > 0))
		s = a->fmt == MU__SVG_DUR ? mu__svg_nice_dur_step(hi - lo, 8)
					  : mu__svg_nice_step(hi - lo, 6);
	while ((hi - lo) / s > MU__SVG_MAX_TICKS - 1)
		s *= 2;
	*step = s;
	for (double k = ceil(lo / s - 1e-9); k * s <= hi + s * 1e-9 &&
	     n < MU__SVG_MAX_TICKS; k++) {
		li[n] = -1;
		v[n++] = k * s;
	}
	return n;
}

/* Draws the gridlines, ticks and tick labels of one axis.  Labels are
 * skipped when they would overlap the previous one (a width estimate of
 * 6.5 px per character at 11 px). */
static void axis_draw(FILE *f, const mu__svg_plot_t *p, const mu__svg_axis_t *a,
		      bool horizontal)
{
	double v[MU__SVG_MAX_TICKS], step = 1, last = -1e9;
	long li[MU__SVG_MAX_TICKS];
	double lo = horizontal ? p->x0 : p->y0, hi = horizontal ? p->x1 : p->y1;
	size_t n = axis_ticks(a, lo, hi, v, li, &step);
	char buf[64];

	for (size_t i = 0; i < n; i++) {
		if (li[i] >= 0 && a->labels && a->labels[li[i]])
			snprintf(buf, sizeof buf, "%s", a->labels[li[i]]);
		else
			mu__svg_fmt(buf, sizeof buf, a->fmt, v[i], step);
		double half = 3.25 * (double)mu__utf8_chars(buf, 64);
		if (horizontal) {
			double x = mu__svg_x(p, v[i]), yb = p->py + p->ph;
			if (a->grid)
				fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" "
					"x2=\"%.1f\" y2=\"%.1f\"/>\n", x, p->py, x, yb);
			fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				"y2=\"%.1f\"/>\n", x, yb, x, yb + 4);
			if (x - half < last + 6)
				continue;
			mu__svg_text(f, x, yb + 17, "tick", "middle", buf);
			last = x + half;
		} else {
			double y = mu__svg_y(p, v[i]);
			if (a->grid)
				fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" "
					"x2=\"%.1f\" y2=\"%.1f\"/>\n", p->px, y,
					p->px + p->pw, y);
			if (i > 0 && last - y < 13)
				continue;
			mu__svg_text(f, p->px - 8, y + 4, "tick", "end", buf);
			last = y;
		}
	}
}

void mu__svg_axes(FILE *f, const mu__svg_plot_t *p, const mu__svg_axis_t *x,
		  const mu__svg_axis_t *y)
{
	double xb = p->py + p->ph;
	if (y)
		axis_draw(f, p, y, false);
	if (x)
		axis_draw(f, p, x, true);
	fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		"y2=\"%.1f\"/>\n", p->px, xb, p->px + p->pw, xb);
	if (y)
		fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			"y2=\"%.1f\"/>\n", p->px, p->py, p->px, xb);
	if (x && x->title)
		mu__svg_text(f, p->px + p->pw / 2, xb + 38, "atitle", "middle",
			     x->title);
	if (y && y->title) {
		fprintf(f, "<text class=\"atitle\" text-anchor=\"middle\" "
			"transform=\"translate(16 %.1f) rotate(-90)\">",
			p->py + p->ph / 2);
		mu__html_text(f, y->title, 0);
		fputs("</text>\n", f);
	}
}

/* Where a path being written stands: the last pixel point and how many
 * distinct points went out. */
typedef struct mu__svg_path {
	FILE *f;
	const mu__svg_plot_t *p;
	bool area;
	size_t emitted;
	double lx, ly; /* last point, pixels rounded to 0.1 */
} mu__svg_path_t;

/* Appends one data point to the path; skips non-finite points and repeats
 * of the previous pixel. */
static void path_point(mu__svg_path_t *s, double x, double y)
{
	if (!isfinite(x) || !isfinite(y))
		return;
	double px = round(mu__svg_x(s->p, x) * 10) / 10;
	double py = round(mu__svg_y(s->p, y) * 10) / 10;
	if (s->emitted && px == s->lx && py == s->ly)
		return;
	if (s->emitted)
		fprintf(s->f, "L%.1f %.1f", px, py);
	else if (s->area)
		fprintf(s->f, "M%.1f %.1fL%.1f %.1f", px, mu__svg_y(s->p, s->p->y0),
			px, py);
	else
		fprintf(s->f, "M%.1f %.1f", px, py);
	if (s->emitted % 8 == 7)
		fputc('\n', s->f);
	s->emitted++;
	s->lx = px;
	s->ly = py;
}

/* Emits points [lo, hi) reduced to their minimum and maximum y, in index
 * order. */
static void path_bucket(mu__svg_path_t *s, mu__svg_point_fn get,
			const void *ctx, size_t lo, size_t hi)
{
	double minx = NAN, miny = INFINITY, maxx = NAN, maxy = -INFINITY;
	size_t imin = 0, imax = 0;
	for (size_t i = lo; i < hi; i++) {
		double x, y;
		get(ctx, i, &x, &y);
		if (!isfinite(x) || !isfinite(y))
			continue;
		if (y < miny) {
			miny = y, minx = x, imin = i;
		}
		if (y > maxy) {
			maxy = y, maxx = x, imax = i;
		}
	}
	if (!isfinite(miny))
		return;
	if (imin <= imax) {
		path_point(s, minx, miny);
		path_point(s, maxx, maxy);
	} else {
		path_point(s, maxx, maxy);
		path_point(s, minx, miny);
	}
}

void mu__svg_series(FILE *f, const mu__svg_plot_t *p, mu__svg_point_fn get,
		    const void *ctx, size_t n, const char *cls, bool area)
{
	mu__svg_path_t s = {f, p, area, 0, 0, 0};
	const size_t buckets = MU__SVG_MAX_POINTS / 2;

	if (n == 0)
		return;
	fprintf(f, "<path class=\"%s %s\" d=\"", area ? "area" : "line", cls);
	if (n <= MU__SVG_MAX_POINTS) {
		for (size_t i = 0; i < n; i++) {
			double x, y;
			get(ctx, i, &x, &y);
			path_point(&s, x, y);
		}
	} else {
		for (size_t b = 0; b < buckets; b++) {
			size_t lo = (size_t)((double)n * (double)b / (double)buckets);
			size_t hi = (size_t)((double)n * (double)(b + 1) / (double)buckets);
			path_bucket(&s, get, ctx, lo, b + 1 == buckets ? n : hi);
		}
	}
	if (area && s.emitted)
		fprintf(f, "L%.1f %.1fZ", s.lx, mu__svg_y(p, p->y0));
	fputs("\"/>\n", f);
	if (s.emitted == 1 && !area)
		fprintf(f, "<circle class=\"dot %s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>\n",
			cls, s.lx, s.ly);
}

void mu__svg_rect(FILE *f, const mu__svg_plot_t *p, double x0, double y0,
		  double x1, double y1, const char *cls, const char *tip)
{
	double ax = mu__svg_x(p, x0), bx = mu__svg_x(p, x1);
	double ay = mu__svg_y(p, y0), by = mu__svg_y(p, y1);
	double l = fmin(ax, bx), t = fmin(ay, by);

	fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		"height=\"%.1f\">", cls, l, t, fmax(ax, bx) - l, fmax(ay, by) - t);
	if (tip) {
		fputs("<title>", f);
		mu__html_text(f, tip, 0);
		fputs("</title>", f);
	}
	fputs("</rect>\n", f);
}

void mu__svg_marker(FILE *f, const mu__svg_plot_t *p, bool vertical, double v,
		    const char *label, const char *cls, int row)
{
	char tcls[64];
	snprintf(tcls, sizeof tcls, "mlabel %s", cls);
	if (vertical) {
		double x = mu__svg_x(p, v), ty = p->py + 12 + 14 * row;
		bool right = x > p->px + p->pw - 90;
		fprintf(f, "<line class=\"marker %s\" x1=\"%.1f\" y1=\"%.1f\" "
			"x2=\"%.1f\" y2=\"%.1f\"/>\n", cls, x, p->py, x,
			p->py + p->ph);
		mu__svg_text(f, right ? x - 5 : x + 5, ty, tcls,
			     right ? "end" : "start", label);
	} else {
		double y = mu__svg_y(p, v);
		bool below = y < p->py + 16;
		fprintf(f, "<line class=\"marker %s\" x1=\"%.1f\" y1=\"%.1f\" "
			"x2=\"%.1f\" y2=\"%.1f\"/>\n", cls, p->px, y,
			p->px + p->pw, y);
		mu__svg_text(f, p->px + p->pw - 6 - 80 * row,
			     below ? y + 14 : y - 5, tcls, "end", label);
	}
}

void mu__svg_vmarkers(FILE *f, const mu__svg_plot_t *p, const double *v,
		      const char *const *labels, const char *const *cls, int n)
{
	double x0[16], x1[16];
	int row[16];
	if (n > 16)
		n = 16;
	for (int i = 0; i < n; i++) {
		double x = mu__svg_x(p, v[i]), w = 6.6 * (double)strlen(labels[i]);
		/* left of the line when it would run past the plot's right */
		bool left = x + 5 + w > p->px + p->pw;
		x0[i] = left ? x - 5 - w : x + 5;
		x1[i] = x0[i] + w;
		row[i] = 0;
		for (int r = 0; r < 3; r++) {
			bool clash = false;
			for (int k = 0; k < i; k++)
				clash |= row[k] == r && x0[i] < x1[k] + 6 && x0[k] < x1[i] + 6;
			row[i] = r;
			if (!clash)
				break;
		}
		double ty = p->py - 6 - 14 * row[i];
		char tcls[64];
		snprintf(tcls, sizeof tcls, "mlabel %s", cls[i]);
		fprintf(f, "<line class=\"marker %s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			"y2=\"%.1f\"/>\n", cls[i], x, row[i] ? p->py : ty + 3, x, p->py + p->ph);
		mu__svg_text(f, left ? x1[i] : x0[i], ty, tcls, left ? "end" : "start", labels[i]);
	}
}

void mu__svg_legend(FILE *f, double x, double y, const char *const *names,
		    const char *const *classes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "<rect class=\"sw %s\" x=\"%.1f\" y=\"%.1f\" width=\"12\" "
			"height=\"12\" rx=\"2\"/>\n", classes[i], x, y - 10);
		mu__svg_text(f, x + 17, y, "lbl", "start", names[i]);
		x += 17 + 7.0 * (double)mu__utf8_chars(names[i], 200) + 22;
	}
}

typedef struct cdf_ctx {
	const double *v;
	size_t n;
} cdf_ctx_t;

static void cdf_point(const void *ctx, size_t i, double *x, double *y)
{
	const cdf_ctx_t *c = ctx;
	*x = log10(fmax(c->v[i], 1.0));
	*y = (double)(i + 1) / (double)c->n;
}

void mu__svg_wait_cdf(FILE *f, double width, double height, const char *title,
		      const mu__svg_cdf_t *series, size_t n)
{
	static const double tv[] = {1, 10, 60, 600, 3600, 6 * 3600, 86400, 7 * 86400,
				    30 * 86400, 365 * 86400};
	static const char *const tl[] = {"1s", "10s", "1m", "10m", "1h", "6h", "1d", "7d",
					 "30d", "1y"};
	static const char *const colour[] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"};
	const char *names[MU__SVG_MAX_CDF], *cls[MU__SVG_MAX_CDF];
	double ticks[10], top = 60;
	size_t nt = 0;
	if (n > MU__SVG_MAX_CDF)
		n = MU__SVG_MAX_CDF;
	for (size_t i = 0; i < n; i++)
		if (series[i].n)
			top = fmax(top, series[i].v[series[i].n - 1]);
	while (nt < 10 && (nt == 0 || tv[nt - 1] < top)) {
		ticks[nt] = log10(tv[nt]);
		nt++;
	}
	mu__svg_axis_t ax = {MU__SVG_LOGDUR, "wait (log scale; under 1 s drawn at 1 s)", 0,
			     ticks, tl, nt, true};
	mu__svg_axis_t ay = {MU__SVG_PCT, "jobs started", 0.25, NULL, NULL, 0, true};
	mu__svg_plot_t p;
	mu__svg_plot_init(&p, width, height, 0, ticks[nt - 1], 0, 1);
	fputs("<h3>", f);
	mu__html_text(f, title, 0);
	fputs("</h3>\n", f);
	mu__svg_open(f, width, height, title);
	mu__svg_axes(f, &p, &ax, &ay);
	for (size_t i = 0; i < n; i++) {
		cdf_ctx_t c = {series[i].v, series[i].n};
		if (c.n)
			mu__svg_series(f, &p, cdf_point, &c, c.n, colour[i % 8], false);
		names[i] = series[i].name;
		cls[i] = colour[i % 8];
	}
	mu__svg_legend(f, p.px + 8, 14, names, cls, n);
	mu__svg_close(f);
}

/* Pixel layout of mu__svg_hbars. */
#define MU__HB_LABELS 210.0 /* label column */
#define MU__HB_NOTES 190.0  /* room right of the longest bar */
#define MU__HB_ROW 28.0
#define MU__HB_TOP 8.0

void mu__svg_hbars(FILE *f, double width, const mu__svg_bar_t *bars, size_t n,
		   mu__svg_fmt_t fmt, const char *xtitle, const char *label)
{
	double max = 0, height = MU__HB_TOP + MU__HB_ROW * (double)n + MU__SVG_MB;
	mu__svg_axis_t ax = {fmt, xtitle, 0, NULL, NULL, 0, true};
	mu__svg_plot_t p;
	char tip[512];

	for (size_t i = 0; i < n; i++)
		if (isfinite(bars[i].value) && bars[i].value > max)
			max = bars[i].value;
	ax.step = mu__svg_nice_ceil(0, &max, 5);
	p.px = MU__HB_LABELS;
	p.py = MU__HB_TOP;
	p.pw = fmax(width - MU__HB_LABELS - MU__HB_NOTES, 50);
	p.ph = MU__HB_ROW * (double)(n ? n : 1);
	p.x0 = 0;
	p.x1 = max;
	p.y0 = 0;
	p.y1 = (double)(n ? n : 1);
	if (n == 0)
		height += MU__HB_ROW;

	mu__svg_open(f, width, height, label);
	mu__svg_axes(f, &p, &ax, NULL);
	for (size_t i = 0; i < n; i++) {
		double yc = p.py + MU__HB_ROW * ((double)i + 0.5);
		double v = isfinite(bars[i].value) && bars[i].value > 0 ? bars[i].value : 0;
		char cls[16];
		snprintf(cls, sizeof cls, "bar s%zu", i % 8);
		snprintf(tip, sizeof tip, "%s: %s", bars[i].label ? bars[i].label : "",
			 bars[i].note ? bars[i].note : "");
		mu__svg_rect(f, &p, 0, (double)(n - i) - 0.82, v,
			     (double)(n - i) - 0.18, cls, tip);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"lbl\" "
			"text-anchor=\"end\">", p.px - 10, yc + 4);
		mu__html_text(f, bars[i].label, 28);
		fputs("</text>\n", f);
		if (bars[i].note)
			mu__svg_text(f, mu__svg_x(&p, v) + 6, yc + 4, "note", "start",
				     bars[i].note);
	}
	mu__svg_close(f);
}

void mu__svg_css(FILE *f)
{
	static const char *const css =
		"svg.chart{display:block;max-width:100%;height:auto;"
		"font-family:inherit;font-size:11px;overflow:visible}\n"
		".chart .grid{stroke:#e5e7eb;stroke-width:1}\n"
		".chart .axis{stroke:#9ca3af;stroke-width:1}\n"
		".chart .tick{fill:#6b7280;font-size:11px;"
		"font-variant-numeric:tabular-nums}\n"
		".chart .atitle{fill:#374151;font-size:12px}\n"
		".chart .lbl{fill:#1f2937;font-size:12px}\n"
		".chart .note{fill:#4b5563;font-size:11px;"
		"font-variant-numeric:tabular-nums}\n"
		".chart .line{fill:none;stroke:var(--c);stroke-width:1.6;"
		"stroke-linejoin:round;stroke-linecap:round}\n"
		".chart .area{fill:var(--c);fill-opacity:.14;stroke:none}\n"
		".chart .dot,.chart .sw,.chart .bar{fill:var(--c)}\n"
		".chart .bar:hover{fill-opacity:.75}\n"
		".chart .marker{stroke:var(--c);stroke-width:1.3;"
		"stroke-dasharray:5 3}\n"
		".chart .cut{fill:#fff}\n"
		".chart .inlbl{fill:#fff;font-size:11px;font-weight:600}\n"
		".chart .mlabel{fill:var(--c);font-size:11px;font-weight:600;"
		"paint-order:stroke;stroke:#fff;stroke-width:3px;"
		"stroke-linejoin:round}\n"
		".chart .s0{--c:#2563eb}.chart .s1{--c:#ea580c}"
		".chart .s2{--c:#059669}.chart .s3{--c:#7c3aed}\n"
		".chart .s4{--c:#db2777}.chart .s5{--c:#0891b2}"
		".chart .s6{--c:#ca8a04}.chart .s7{--c:#64748b}\n";
	fputs(css, f);
}

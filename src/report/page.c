/*
 * page.c - the frame every muster HTML page shares: the document head with
 * its Content-Security-Policy (no script, no fetch: inline styles only), the
 * base style sheet of the evaluations' and benchmarks' pages, the SVG plots'
 * classes, and the opening of <body> and <main>.
 *
 * The evaluations (philly, slurm, fleet, topology) and `muster bench` each
 * had a copy of the same head and nearly the same style sheet; they now
 * write it here and add only their own rules.  Nothing allocates; write
 * errors are left for the caller's ferror(), as in svg.c.
 */
#include "muster/report.h"

/* Rules every report page uses: page, headings, captions, sections, tables
 * (first column and class "t" left-aligned, numbers right-aligned). */
static const char mu__report_base_css[] =
	"body{margin:0;background:#f4f5f7;color:#1f2937;font:14px/1.5 system-ui,"
	"-apple-system,'Segoe UI',Roboto,Arial,sans-serif}\n"
	"main{max-width:1100px;margin:0 auto;padding:28px 20px 40px}\n"
	"h1{font-size:26px;margin:0 0 6px;font-weight:650}\n"
	"h2{font-size:17px;margin:0 0 4px;font-weight:620}\n"
	"h3{font-size:14px;margin:14px 0 2px;font-weight:600;color:#374151}\n"
	"p.cap{color:#6b7280;margin:0 0 12px;font-size:13px}\n"
	"section{background:#fff;border:1px solid #e5e7eb;border-radius:10px;"
	"padding:18px 20px;margin:16px 0;overflow-x:auto}\n"
	"table{border-collapse:collapse;width:100%;font-size:13px;"
	"font-variant-numeric:tabular-nums}\n"
	"th,td{padding:4px 7px;border-bottom:1px solid #eef0f3;text-align:right;"
	"white-space:nowrap}\n"
	"th:first-child,td:first-child,td.t,th.t{text-align:left}\n"
	"th{font-weight:600;color:#4b5563;font-size:12px;background:#f9fafb}\n";

/* Writes the head (title HTML-escaped), the base rules, the plots' rules,
 * then extra_css (trusted, written as is; NULL for none), and opens <body>
 * and <main>.  The caller writes the page and closes it with
 * mu__report_page_close().  O(size of the style sheets). */
void mu__report_page_open(FILE *f, const char *title, const char *extra_css)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
	      "'none'; style-src 'unsafe-inline'\">\n<title>", f);
	mu__html_text(f, title, 0);
	fputs("</title>\n<style>\n", f);
	fputs(mu__report_base_css, f);
	mu__svg_css(f);
	if (extra_css)
		fputs(extra_css, f);
	fputs("</style>\n</head>\n<body>\n<main>\n", f);
}

/* Closes what mu__report_page_open() opened. */
void mu__report_page_close(FILE *f)
{
	fputs("</main>\n</body>\n</html>\n", f);
}

/*
 * explain.c - a queued job's explanation as text, one clause per cluster:
 * why each cluster does not take it and, where it does not fit now, the
 * engine's reason on that cluster and when it is expected to start there.
 * Reads what mu_fleet_job_explain() filled; calls no other file of
 * src/fleet.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fleet/fleet_int.h"
#include "muster/util.h"

/* Appends to buf at *off, keeping it NUL-terminated; *off counts what was
 * wanted, as snprintf does. */
static void put(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(*off < len ? buf + *off : NULL, *off < len ? len - *off : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n;
}

int mu_fleet_explain_format(const mu_fleet_t *f, const mu_fleet_explain_t *x,
			    mu_time_t now, char *buf, size_t len)
{
	size_t off = 0;
	if (len)
		buf[0] = '\0';
	for (int32_t c = 0; c < f->nclusters; c++) {
		const mu_fleet_explain_t *e = &x[c];
		put(buf, len, &off, "%s%s: %s", c ? "; " : "", f->clusters[c].name,
		    e->why ? e->why : "?");
		if (e->why && !strcmp(e->why, "held") && e->held_for >= 0 &&
		    e->held_for < f->njobs) /* its claimant's name (round 22) */
			put(buf, len, &off, " for %s", f->jobs[e->held_for].spec.job->name);
		if (e->devices)
			put(buf, len, &off, " (%s)", e->devices);
		if (!e->eligible || e->whatif.fits)
			continue;
		char why[512], at[48];
		mu_reason_format(f->clusters[c].eng, &e->whatif.reason, why, sizeof why);
		put(buf, len, &off, " (%s", why);
		if (e->whatif.expected_start != MU_TIME_NONE) {
			mu_time_t in = e->whatif.expected_start - now;
			mu__fmt_duration(at, sizeof at, (double)(in > 0 ? in : 0) / 1000.0);
			put(buf, len, &off, "; expected to fit in %s", at);
		} else {
			put(buf, len, &off, "; not expected to fit as running jobs end");
		}
		put(buf, len, &off, ")");
	}
	return (int)(off > INT32_MAX ? INT32_MAX : off);
}

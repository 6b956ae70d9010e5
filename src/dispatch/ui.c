/*
 * ui.c - the hub daemon's web page, /ui/ on its --metrics listener
 * (metrics.c serves it behind the bearer token): the fleet's clusters
 * (tier, mode, state, GPUs, free GPUs, running and waiting jobs, why one
 * cannot be used) and the hub's jobs of every kind (queue, phase, cluster
 * and generation, pods there, why it waits).  Server-rendered HTML, no
 * script, refreshed by the browser every 5 s; rendered by the main loop
 * once a pass (mu__dui_render), so the HTTP thread only copies it.  Every
 * name and message is HTML-escaped.  At most MU__DUI_MAX_JOBS rows of
 * jobs (the count says how many there are).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_int.h"
#include "muster/fleet.h"

#define MU__DUI_MAX_JOBS 2000

typedef struct buf {
	char *b;
	size_t n, cap;
	bool oom;
} buf_t;

static void put(buf_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf_t *o, const char *fmt, ...)
{
	for (int pass = 0; pass < 2 && !o->oom; pass++) {
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(o->b ? o->b + o->n : NULL, o->b ? o->cap - o->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		if (o->b && o->n + (size_t)k < o->cap) {
			o->n += (size_t)k;
			return;
		}
		size_t nc = o->cap ? o->cap * 2 : 8192;
		while (nc < o->n + (size_t)k + 1)
			nc *= 2;
		char *nb = realloc(o->b, nc);
		if (!nb) {
			o->oom = true;
			return;
		}
		o->b = nb;
		o->cap = nc;
	}
}

/* s, HTML-escaped (NULL: "-"). */
static void esc(buf_t *o, const char *s)
{
	if (!s || !*s) {
		put(o, "-");
		return;
	}
	for (; *s; s++) {
		switch (*s) {
		case '<': put(o, "&lt;"); break;
		case '>': put(o, "&gt;"); break;
		case '&': put(o, "&amp;"); break;
		case '"': put(o, "&quot;"); break;
		case '\'': put(o, "&#39;"); break;
		default: put(o, "%c", *s);
		}
	}
}

static const char *state_of(const mu__dcl_t *c)
{
	return c->draining ? "Draining" : c->reachable ? "Ready" : "Unreachable";
}

char *mu__dui_render(const mu__dd_t *d)
{
	buf_t o = {0};
	int st[5] = {0};
	for (int32_t i = 0; i < d->njobs; i++)
		st[d->jobs[i]->state]++;
	put(&o, "<!doctype html><html><head><meta charset=\"utf-8\">"
	    "<meta http-equiv=\"refresh\" content=\"5\"><title>muster dispatch</title><style>"
	    "body{font:14px system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse}"
	    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
	    "th{background:#eee}.num{text-align:right}</style></head><body>"
	    "<h1>muster dispatch</h1><p>%d clusters; hub jobs: %d queued, %d dispatched, "
	    "%d withdrawing, %d done, %d not read; %llu dispatches, %llu passes</p>",
	    (int)d->ncls, st[MU__DJ_QUEUED], st[MU__DJ_DISPATCHED], st[MU__DJ_WITHDRAWING],
	    st[MU__DJ_DONE], st[MU__DJ_NEW], (unsigned long long)d->dispatched,
	    (unsigned long long)d->passes);
	put(&o, "<h2>Clusters</h2><table id=\"clusters\"><tr><th>name</th><th>tier</th><th>mode</th>"
	    "<th>state</th><th>GPUs</th><th>running</th><th>waiting</th><th>message</th></tr>");
	for (int32_t i = 0; i < d->ncls; i++) {
		const mu__dcl_t *c = &d->cls[i];
		put(&o, "<tr><td>");
		esc(&o, c->name);
		put(&o, "</td><td>%s</td><td>%s</td><td>%s</td><td class=\"num\">%lld</td>"
		    "<td class=\"num\">%d</td><td class=\"num\">%d</td><td>",
		    c->tier == MU_TIER_PUBLIC ? "public" : c->tier == MU_TIER_EDGE ? "edge" : "private",
		    c->pull ? "pull" : "push", state_of(c), (long long)c->gpus, c->running, c->waiting);
		esc(&o, c->err);
		put(&o, "</td></tr>");
	}
	put(&o, "</table><h2>Hub jobs</h2><table id=\"jobs\"><tr><th>job</th><th>queue</th>"
	    "<th>phase</th><th>cluster</th><th>generation</th><th>pods there</th><th>waits</th></tr>");
	for (int32_t i = 0; i < d->njobs && i < MU__DUI_MAX_JOBS; i++) {
		const mu__djob_t *j = d->jobs[i];
		const char *q = j->specs.njobs == 1 ? j->specs.jobs[0].queue : NULL;
		const char *ph = j->phase[0] ? j->phase : j->state == MU__DJ_QUEUED ? "Queued" :
				 j->state == MU__DJ_NEW ? "Waiting" : "-";
		put(&o, "<tr><td>");
		esc(&o, j->key);
		put(&o, "</td><td>");
		esc(&o, q);
		put(&o, "</td><td>");
		esc(&o, ph);
		put(&o, "</td><td>");
		esc(&o, j->cl >= 0 && j->cl < d->ncls && j->state >= MU__DJ_DISPATCHED ?
			d->cls[j->cl].name : NULL);
		put(&o, "</td><td class=\"num\">");
		if (j->gen)
			put(&o, "%u", j->gen);
		else
			put(&o, "-");
		put(&o, "</td><td>");
		esc(&o, j->pods);
		put(&o, "</td><td>");
		if (j->reason && j->state < MU__DJ_DISPATCHED) {
			esc(&o, j->reason);
			put(&o, ": ");
			esc(&o, j->msg);
		} else {
			put(&o, "-");
		}
		put(&o, "</td></tr>");
	}
	put(&o, "</table>");
	if (d->njobs > MU__DUI_MAX_JOBS)
		put(&o, "<p>the first %d of %d jobs</p>", MU__DUI_MAX_JOBS, (int)d->njobs);
	put(&o, "</body></html>\n");
	if (o.oom) {
		free(o.b);
		return NULL;
	}
	return o.b;
}

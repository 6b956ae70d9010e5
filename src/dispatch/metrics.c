/*
 * metrics.c - the hub daemon's /metrics, /healthz and /readyz (the
 * scheduler's conventions, src/kube/metrics.c): counters of dispatches,
 * copies, withdrawals, requeues and stale copies deleted, the pass time,
 * hub jobs by state and each cluster's state, GPUs, free GPUs and running
 * jobs.  The main loop renders the text once a pass (mu__dmetrics_pass)
 * and the HTTP thread only copies it, under one mutex.  /ui/ is the page
 * of ui.c, rendered the same way, served only with the bearer token
 * (--token-file, else 32 random hex digits logged at the start): the
 * header "Authorization: Bearer TOKEN", or "?token=TOKEN" for a browser;
 * /metrics and the health endpoints stay open, as the scheduler's do.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_int.h"
#include "muster/web.h"

struct mu__dms {
	struct MHD_Daemon *mhd;
	pthread_mutex_t mu;
	char *text;       /* the last rendering, owned */
	char *html;       /* the last /ui/ page, owned */
	bool ready;       /* leading and a pass has run */
	char token[160];  /* /ui/'s bearer token */
};

/* Whether the request carries s's token: the Authorization header, or
 * the query argument token (constant-time comparisons). */
static bool ui_auth(const struct mu__dms *s, struct MHD_Connection *c)
{
	if (mu_web_auth_ok(s->token, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization")))
		return true;
	const char *q = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
	char h[200];
	if (!q || strlen(q) >= sizeof h - 8)
		return false;
	snprintf(h, sizeof h, "Bearer %s", q);
	return mu_web_auth_ok(s->token, h);
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	(void)version, (void)upload, (void)upload_size, (void)con_cls;
	struct mu__dms *s = cls;
	char *body = NULL;
	unsigned code = 200;
	bool ui = !strcmp(url, "/ui") || !strcmp(url, "/ui/");
	pthread_mutex_lock(&s->mu);
	if (strcmp(method, "GET"))
		code = 405;
	else if (ui && !ui_auth(s, c)) {
		code = 401;
		body = strdup("this needs the dispatcher's token: Authorization: Bearer TOKEN, or "
			      "/ui/?token=TOKEN\n");
	} else if (ui)
		body = strdup(s->html ? s->html : "<!doctype html><p>no pass has run yet</p>\n");
	else if (!strcmp(url, "/metrics"))
		body = strdup(s->text ? s->text : "");
	else if (!strcmp(url, "/healthz") || !strcmp(url, "/livez"))
		body = strdup("ok\n");
	else if (!strcmp(url, "/readyz")) {
		code = s->ready ? 200 : 503;
		body = strdup(s->ready ? "ok\n" : "not leading yet\n");
	} else
		code = 404;
	pthread_mutex_unlock(&s->mu);
	if (!body)
		body = strdup(code == 405 ? "method not allowed\n" : "not found\n");
	struct MHD_Response *r = MHD_create_response_from_buffer(body ? strlen(body) : 0, body,
								 MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(r, "Content-Type", !strcmp(url, "/metrics") ?
				"text/plain; version=0.0.4; charset=utf-8" : ui && code == 200 ?
				"text/html; charset=utf-8" : "text/plain; charset=utf-8");
	enum MHD_Result ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

int mu__dms_start(mu__dd_t *d, const char *listen, char *err, size_t errlen)
{
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	const char *colon = strrchr(listen, ':');
	char host[64] = "";
	long port = colon ? strtol(colon + 1, NULL, 10) : -1;
	if (colon && (size_t)(colon - listen) < sizeof host)
		memcpy(host, listen, (size_t)(colon - listen));
	if (!colon || inet_pton(AF_INET, *host ? host : "127.0.0.1", &sa.sin_addr) != 1 ||
	    port < 0 || port > 65535) {
		snprintf(err, errlen, "--metrics: expected an IPv4 HOST:PORT, got %s", listen);
		return MU_EINVAL;
	}
	sa.sin_port = htons((uint16_t)port);
	struct mu__dms *s = calloc(1, sizeof *s);
	if (!s || pthread_mutex_init(&s->mu, NULL)) {
		free(s);
		return MU_ENOMEM;
	}
	/* the token: the one given, else 32 random hex digits */
	if (d->o->token) {
		if (!*d->o->token || strlen(d->o->token) >= sizeof s->token) {
			pthread_mutex_destroy(&s->mu);
			free(s);
			snprintf(err, errlen, "--token-file: 1 to %zu characters", sizeof s->token - 1);
			return MU_EINVAL;
		}
		snprintf(s->token, sizeof s->token, "%s", d->o->token);
	} else {
		unsigned char r[16];
		FILE *f = fopen("/dev/urandom", "rb");
		size_t got = f ? fread(r, 1, sizeof r, f) : 0;
		if (f)
			fclose(f);
		if (got != sizeof r) {
			pthread_mutex_destroy(&s->mu);
			free(s);
			snprintf(err, errlen, "--metrics: cannot read /dev/urandom for the UI's token");
			return MU_EIO;
		}
		for (size_t i = 0; i < sizeof r; i++)
			snprintf(s->token + 2 * i, 3, "%02x", r[i]);
	}
	s->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
				  NULL, NULL, answer, s, MHD_OPTION_SOCK_ADDR, &sa,
				  MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
	if (!s->mhd) {
		pthread_mutex_destroy(&s->mu);
		free(s);
		snprintf(err, errlen, "--metrics: cannot listen on %s", listen);
		return MU_EIO;
	}
	const union MHD_DaemonInfo *inf = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
	mu__dlog(d, 1, "metrics on http://%s:%u/metrics", *host ? host : "127.0.0.1",
		 inf ? (unsigned)inf->port : (unsigned)port);
	mu__dlog(d, 1, "ui on http://%s:%u/ui/%s%s", *host ? host : "127.0.0.1",
		 inf ? (unsigned)inf->port : (unsigned)port, d->o->token ? "" : "?token=",
		 d->o->token ? "" : s->token);
	d->ms = s;
	return MU_OK;
}

void mu__dms_stop(mu__dd_t *d)
{
	if (!d->ms)
		return;
	MHD_stop_daemon(d->ms->mhd);
	pthread_mutex_destroy(&d->ms->mu);
	free(d->ms->text);
	free(d->ms->html);
	free(d->ms);
	d->ms = NULL;
}

/* Appends printf output to the growing text *b (length *n, room *cap). */
static void put(char **b, size_t *n, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(char **b, size_t *n, size_t *cap, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(*b ? *b + *n : NULL, *b ? *cap - *n : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		if (*b && *n + (size_t)k < *cap) {
			*n += (size_t)k;
			return;
		}
		size_t nc = *cap ? *cap * 2 : 4096;
		while (nc < *n + (size_t)k + 1)
			nc *= 2;
		char *nb = realloc(*b, nc);
		if (!nb)
			return;
		*b = nb;
		*cap = nc;
	}
}

void mu__dmetrics_pass(mu__dd_t *d, double pass_ms)
{
	d->passes++;
	d->pass_ms_sum += pass_ms;
	if (!d->ms)
		return;
	char *b = NULL;
	size_t n = 0, cap = 0;
	int st[5] = {0};
	for (int32_t i = 0; i < d->njobs; i++)
		st[d->jobs[i]->state]++;
	put(&b, &n, &cap,
	    "# HELP muster_dispatch_leader 1 if this replica holds the lease.\n"
	    "# TYPE muster_dispatch_leader gauge\nmuster_dispatch_leader 1\n"
	    "# HELP muster_dispatch_dispatched_total Dispatches recorded on the hub.\n"
	    "# TYPE muster_dispatch_dispatched_total counter\nmuster_dispatch_dispatched_total %llu\n"
	    "# HELP muster_dispatch_copies_created_total Copies created on workers (push mode).\n"
	    "# TYPE muster_dispatch_copies_created_total counter\nmuster_dispatch_copies_created_total %llu\n"
	    "# HELP muster_dispatch_withdrawn_total Jobs withdrawn after the start timeout.\n"
	    "# TYPE muster_dispatch_withdrawn_total counter\nmuster_dispatch_withdrawn_total %llu\n"
	    "# HELP muster_dispatch_requeued_total Jobs taken back to the hub.\n"
	    "# TYPE muster_dispatch_requeued_total counter\nmuster_dispatch_requeued_total %llu\n"
	    "# HELP muster_dispatch_stale_copies_deleted_total Copies deleted as not the current dispatch.\n"
	    "# TYPE muster_dispatch_stale_copies_deleted_total counter\n"
	    "muster_dispatch_stale_copies_deleted_total %llu\n"
	    "# HELP muster_dispatch_passes_total Passes (read, poll, dispatch, write).\n"
	    "# TYPE muster_dispatch_passes_total counter\nmuster_dispatch_passes_total %llu\n"
	    "# HELP muster_dispatch_requests_total API requests made (hub and workers; watches not counted).\n"
	    "# TYPE muster_dispatch_requests_total counter\nmuster_dispatch_requests_total %llu\n"
	    "# HELP muster_dispatch_pass_seconds_sum Time in passes.\n"
	    "# TYPE muster_dispatch_pass_seconds_sum counter\nmuster_dispatch_pass_seconds_sum %g\n"
	    "# HELP muster_dispatch_jobs Hub jobs by state.\n# TYPE muster_dispatch_jobs gauge\n"
	    "muster_dispatch_jobs{state=\"invalid\"} %d\nmuster_dispatch_jobs{state=\"queued\"} %d\n"
	    "muster_dispatch_jobs{state=\"dispatched\"} %d\nmuster_dispatch_jobs{state=\"withdrawing\"} %d\n"
	    "muster_dispatch_jobs{state=\"done\"} %d\n",
	    (unsigned long long)d->dispatched, (unsigned long long)d->created,
	    (unsigned long long)d->withdrawn, (unsigned long long)d->requeued,
	    (unsigned long long)d->deleted_stale, (unsigned long long)d->passes,
	    (unsigned long long)__atomic_load_n(d->nreq, __ATOMIC_RELAXED),
	    d->pass_ms_sum / 1000.0, st[0], st[1], st[2], st[3], st[4]);
	put(&b, &n, &cap, "# HELP muster_dispatch_cluster_ready 1 if the cluster takes new jobs.\n"
	    "# TYPE muster_dispatch_cluster_ready gauge\n");
	for (int32_t i = 0; i < d->ncls; i++)
		put(&b, &n, &cap, "muster_dispatch_cluster_ready{cluster=\"%s\"} %d\n", d->cls[i].name,
		    d->cls[i].reachable && !d->cls[i].draining);
	put(&b, &n, &cap, "# HELP muster_dispatch_cluster_gpus GPUs on the cluster's nodes.\n"
	    "# TYPE muster_dispatch_cluster_gpus gauge\n");
	for (int32_t i = 0; i < d->ncls; i++)
		put(&b, &n, &cap, "muster_dispatch_cluster_gpus{cluster=\"%s\"} %lld\n", d->cls[i].name,
		    (long long)d->cls[i].gpus);
	put(&b, &n, &cap, "# HELP muster_dispatch_cluster_running_jobs Hub jobs running there.\n"
	    "# TYPE muster_dispatch_cluster_running_jobs gauge\n");
	for (int32_t i = 0; i < d->ncls; i++)
		put(&b, &n, &cap, "muster_dispatch_cluster_running_jobs{cluster=\"%s\"} %d\n",
		    d->cls[i].name, d->cls[i].running);
	char *html = mu__dui_render(d);
	pthread_mutex_lock(&d->ms->mu);
	free(d->ms->text);
	d->ms->text = b;
	if (html) { /* out of memory: the last page stays */
		free(d->ms->html);
		d->ms->html = html;
	}
	d->ms->ready = true;
	pthread_mutex_unlock(&d->ms->mu);
}

/*
 * metrics.c - what the daemon tells about itself: /metrics (Prometheus
 * text format 0.0.4), /healthz and /readyz over libmicrohttpd, and the
 * status it writes on Queues and PodGroups.
 *
 * The main loop updates d->m (under d->m.mu) after every cycle: counters,
 * the cycle-time histogram, and a preformatted block of per-queue gauges
 * (fair share, usage, pending and running jobs).  The HTTP thread only
 * copies that under the mutex.  /readyz is 200 once the replica leads and
 * has listed everything, 503 before; /healthz is 200 while it runs.
 * /explain and the live UI's /ui/api/ (ui.c, src/web) need the bearer
 * token (d->token); /metrics and the health endpoints stay open.  An
 * empty host binds 127.0.0.1.
 * Status writes are merge patches of the status subresource, sent only
 * when their content changed, at most every 2 s.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/daemon_int.h"
#include "muster/web.h"

struct mu__kmserver {
	struct MHD_Daemon *mhd;
};

static const double buckets[11] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000};

void mu__kd_metrics_hist(uint64_t *h, double ms)
{
	int i = 0;
	while (i < 11 && ms > buckets[i])
		i++;
	h[i]++;
}

/* Appends a histogram in seconds. */
static size_t hist(char *b, size_t at, size_t len, const char *name, const char *help,
		   const uint64_t *h, double sum)
{
	uint64_t cum = 0;
	at += (size_t)snprintf(b + at, at < len ? len - at : 0, "# HELP %s %s\n# TYPE %s histogram\n",
			       name, help, name);
	for (int i = 0; i < 12; i++) {
		cum += h[i];
		if (i < 11)
			at += (size_t)snprintf(b + at, at < len ? len - at : 0, "%s_bucket{le=\"%g\"} %llu\n",
					       name, buckets[i] / 1000.0, (unsigned long long)cum);
		else
			at += (size_t)snprintf(b + at, at < len ? len - at : 0, "%s_bucket{le=\"+Inf\"} %llu\n",
					       name, (unsigned long long)cum);
	}
	at += (size_t)snprintf(b + at, at < len ? len - at : 0, "%s_sum %g\n%s_count %llu\n", name, sum,
			       name, (unsigned long long)cum);
	return at;
}

/* The whole /metrics page; malloc'ed. */
static char *render(mu__kd_t *d)
{
	size_t len = 65536;
	mu__kmetrics_t *m = &d->m;
	pthread_mutex_lock(&d->wq.mu);
	unsigned long long ev_dropped = (unsigned long long)d->wq.ev_dropped;
	pthread_mutex_unlock(&d->wq.mu);
	pthread_mutex_lock(&m->mu);
	size_t ql = (m->queues ? strlen(m->queues) : 0) + (m->policy ? strlen(m->policy) : 0);
	char *b = malloc(len + ql);
	if (!b) {
		pthread_mutex_unlock(&m->mu);
		return NULL;
	}
	len += ql;
	size_t at = 0;
	at += (size_t)snprintf(b + at, len - at,
		"# HELP muster_leader 1 if this replica holds the lease.\n# TYPE muster_leader gauge\nmuster_leader %d\n"
		"# HELP muster_binds_total Pods bound.\n# TYPE muster_binds_total counter\nmuster_binds_total %llu\n"
		"# HELP muster_bind_errors_total Binds the API server refused.\n# TYPE muster_bind_errors_total counter\n"
		"muster_bind_errors_total %llu\n"
		"# HELP muster_evictions_total Pods evicted.\n# TYPE muster_evictions_total counter\nmuster_evictions_total %llu\n"
		"# HELP muster_job_admissions_total Jobs un-suspended.\n# TYPE muster_job_admissions_total counter\n"
		"muster_job_admissions_total %llu\n"
		"# HELP muster_job_suspensions_total Jobs suspended by preemption.\n# TYPE muster_job_suspensions_total counter\n"
		"muster_job_suspensions_total %llu\n"
		"# HELP muster_cycles_total Scheduling cycles.\n# TYPE muster_cycles_total counter\nmuster_cycles_total %llu\n"
		"# HELP muster_cycle_last_seconds Engine time of the last cycle.\n# TYPE muster_cycle_last_seconds gauge\n"
		"muster_cycle_last_seconds %g\n"
		"# HELP muster_dra_list_reads_total Lists of resource.k8s.io objects read for DRA.\n"
		"# TYPE muster_dra_list_reads_total counter\nmuster_dra_list_reads_total %llu\n"
		"# HELP muster_dra_list_objects_total Objects those lists returned.\n"
		"# TYPE muster_dra_list_objects_total counter\nmuster_dra_list_objects_total %llu\n"
		"# HELP muster_events_dropped_total Events not written: 1,000 were queued already.\n"
		"# TYPE muster_events_dropped_total counter\nmuster_events_dropped_total %llu\n",
		m->leader, (unsigned long long)m->binds, (unsigned long long)m->bind_errors,
		(unsigned long long)m->evictions, (unsigned long long)m->admissions,
		(unsigned long long)m->suspensions, (unsigned long long)m->cycles, m->cycle_ms_last / 1000.0,
		(unsigned long long)m->dra_lists, (unsigned long long)m->dra_items, ev_dropped);
	at = hist(b, at, len, "muster_cycle_duration_seconds", "Engine time of a scheduling cycle.",
		  m->cycle_hist, m->cycle_ms_sum / 1000.0);
	at = hist(b, at, len, "muster_pod_scheduling_seconds",
		  "From a pod first seen to its bind confirmed.", m->e2e_hist, m->e2e_sum);
	if (m->queues && at < len)
		at += (size_t)snprintf(b + at, len - at, "%s", m->queues);
	if (m->policy && at < len)
		at += (size_t)snprintf(b + at, len - at, "%s", m->policy);
	pthread_mutex_unlock(&m->mu);
	return b;
}

/* /explain?pod=NS/NAME or ?job=NS/NAME: asks the main loop and waits for
 * its answer (at most 3 s; one question at a time, 429 when busy). */
static char *explain(mu__kd_t *d, struct MHD_Connection *c, unsigned *code)
{
	const char *pod = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pod");
	const char *job = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "job");
	char *ans = NULL;
	if ((!pod && !job) || strlen(pod ? pod : job) > 600) {
		*code = 400;
		return strdup("{\"error\":\"give pod=NS/NAME or job=NS/NAME\"}\n");
	}
	pthread_mutex_lock(&d->ex.mu);
	if (d->ex.asked) {
		pthread_mutex_unlock(&d->ex.mu);
		*code = 429;
		return strdup("{\"error\":\"busy\"}\n");
	}
	snprintf(d->ex.key, sizeof d->ex.key, "%s %s", pod ? "pod" : "job", pod ? pod : job);
	d->ex.asked = true;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 3;
	while (!d->ex.answer && pthread_cond_timedwait(&d->ex.cv, &d->ex.mu, &ts) == 0)
		;
	ans = d->ex.answer;
	d->ex.answer = NULL;
	d->ex.asked = false;
	pthread_mutex_unlock(&d->ex.mu);
	*code = ans ? 200 : 503;
	return ans ? ans : strdup("{\"error\":\"the scheduler did not answer\"}\n");
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	(void)version, (void)upload, (void)upload_size, (void)con_cls;
	mu__kd_t *d = cls;
	char *body = NULL;
	unsigned code = 200;
	const char *ctype = "text/plain; charset=utf-8";
	if (!strcmp(method, "GET") && d->ui && !strncmp(url, "/ui", 3) && (!url[3] || url[3] == '/'))
		return (enum MHD_Result)mu_web_mhd_answer(d->ui, c, url);
	if (strcmp(method, "GET")) {
		code = 405;
	} else if (!strcmp(url, "/explain") &&
		   !mu_web_auth_ok(d->token, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"))) {
		code = 401;
		body = strdup("{\"error\":\"this needs the scheduler's token: Authorization: Bearer TOKEN\"}\n");
		ctype = "application/json";
	} else if (!strcmp(url, "/metrics")) {
		body = render(d);
		ctype = "text/plain; version=0.0.4; charset=utf-8";
	} else if (!strcmp(url, "/healthz") || !strcmp(url, "/livez")) {
		body = strdup("ok\n");
	} else if (!strcmp(url, "/explain")) {
		ctype = "application/json";
		body = explain(d, c, &code);
	} else if (!strcmp(url, "/readyz")) {
		pthread_mutex_lock(&d->m.mu);
		bool ready = d->m.ready && d->m.leader;
		pthread_mutex_unlock(&d->m.mu);
		code = ready ? 200 : 503;
		body = strdup(ready ? "ok\n" : "not leading or not synced\n");
	} else {
		code = 404;
	}
	if (!body)
		body = strdup(code == 404 ? "not found\n" : code == 405 ? "GET only\n" : "");
	struct MHD_Response *r = MHD_create_response_from_buffer(body ? strlen(body) : 0, body,
								MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(r, "Content-Type", ctype);
	enum MHD_Result ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

int mu__kms_start(mu__kd_t *d, const char *listen, char *err, size_t errlen)
{
	char host[64];
	const char *colon = strrchr(listen, ':');
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	if (!colon || (size_t)(colon - listen) >= sizeof host) {
		snprintf(err, errlen, "--metrics: expected HOST:PORT, got %s", listen);
		return MU_EINVAL;
	}
	memcpy(host, listen, (size_t)(colon - listen));
	host[colon - listen] = '\0';
	long port = strtol(colon + 1, NULL, 10);
	if (inet_pton(AF_INET, *host ? host : "127.0.0.1", &sa.sin_addr) != 1 || port < 0 || port > 65535) {
		snprintf(err, errlen, "--metrics: expected an IPv4 HOST:PORT, got %s", listen);
		return MU_EINVAL;
	}
	sa.sin_port = htons((uint16_t)port);
	mu__kmserver_t *s = calloc(1, sizeof *s);
	if (!s)
		return MU_ENOMEM;
	int rc = mu__kui_start(d);
	if (rc) {
		free(s);
		snprintf(err, errlen, "--metrics: cannot start the UI: %s", mu_strerror(rc));
		return rc;
	}
	s->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
				  NULL, NULL, answer, d, MHD_OPTION_SOCK_ADDR, &sa,
				  MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
	if (!s->mhd) {
		free(s);
		mu_web_free(d->ui);
		d->ui = NULL;
		snprintf(err, errlen, "--metrics: cannot listen on %s", listen);
		return MU_EIO;
	}
	d->ms = s;
	const union MHD_DaemonInfo *inf = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
	unsigned bport = inf ? (unsigned)inf->port : (unsigned)port;
	mu__klog(&d->log, 1, "metrics on http://%s:%u/metrics | listen=%s", *host ? host : "127.0.0.1",
		 bport, listen);
	mu__klog(&d->log, 1, "ui on http://%s:%u/ui/%s%s", *host ? host : "127.0.0.1", bport,
		 d->o->token ? "" : "#token=", d->o->token ? "" : d->token);
	return MU_OK;
}

void mu__kms_stop(mu__kd_t *d)
{
	if (!d->ms)
		return;
	mu_web_shutdown(d->ui); /* ends the UI's event streams */
	MHD_stop_daemon(d->ms->mhd);
	free(d->ms);
	d->ms = NULL;
	mu_web_free(d->ui);
	d->ui = NULL;
}

/* --- per cycle --------------------------------------------------------------- */

/* Formats the accounting resources of a queue vector as label lines. */
static size_t qres(char *b, size_t at, size_t len, const char *metric, const char *q,
		   const mu_res_t *r)
{
	at += (size_t)snprintf(b + at, at < len ? len - at : 0,
			       "%s{queue=\"%s\",resource=\"nvidia.com/gpu\"} %g\n"
			       "%s{queue=\"%s\",resource=\"cpu\"} %g\n"
			       "%s{queue=\"%s\",resource=\"memory\"} %lld\n",
			       metric, q, (double)r->v[MU_RES_GPU] / 1000.0, metric, q,
			       (double)r->v[MU_RES_CPU] / 1000.0, metric, q, (long long)r->v[MU_RES_MEM]);
	return at;
}

void mu__kd_metrics_cycle(mu__kd_t *d, double ms)
{
	int32_t nq = mu_engine_nqueues(d->e);
	size_t len = 1024 + (size_t)nq * 1600, at = 0;
	/* A few queues fit on the stack: a heap block of this size every
	 * cycle made malloc consolidate its free small chunks each time (6%
	 * of the daemon's CPU while binding a backlog). */
	char stack[8192];
	char *b = len <= sizeof stack ? stack : malloc(len);
	if (b) {
		at += (size_t)snprintf(b, len, "# HELP muster_queue_fair_share Fair share (accounting units: GPUs, CPUs, bytes).\n"
				       "# TYPE muster_queue_fair_share gauge\n");
		for (int32_t i = 0; i < nq; i++) {
			mu_queue_info_t qi;
			if (mu_engine_queue_info(d->e, i, &qi) == MU_OK)
				at = qres(b, at, len, "muster_queue_fair_share", qi.name, &qi.fair);
		}
		at += (size_t)snprintf(b + at, at < len ? len - at : 0, "# HELP muster_queue_usage Resources in use.\n"
				       "# TYPE muster_queue_usage gauge\n");
		for (int32_t i = 0; i < nq; i++) {
			mu_queue_info_t qi;
			if (mu_engine_queue_info(d->e, i, &qi) == MU_OK)
				at = qres(b, at, len, "muster_queue_usage", qi.name, &qi.used);
		}
		at += (size_t)snprintf(b + at, at < len ? len - at : 0, "# HELP muster_queue_pending_jobs Jobs waiting.\n"
				       "# TYPE muster_queue_pending_jobs gauge\n");
		for (int32_t i = 0; i < nq; i++) {
			mu_queue_info_t qi;
			if (mu_engine_queue_info(d->e, i, &qi) == MU_OK)
				at += (size_t)snprintf(b + at, at < len ? len - at : 0,
						       "muster_queue_pending_jobs{queue=\"%s\"} %d\n", qi.name,
						       (int)qi.pending_jobs);
		}
		at += (size_t)snprintf(b + at, at < len ? len - at : 0, "# HELP muster_queue_running_jobs Jobs admitted.\n"
				       "# TYPE muster_queue_running_jobs gauge\n");
		for (int32_t i = 0; i < nq; i++) {
			mu_queue_info_t qi;
			if (mu_engine_queue_info(d->e, i, &qi) == MU_OK)
				at += (size_t)snprintf(b + at, at < len ? len - at : 0,
						       "muster_queue_running_jobs{queue=\"%s\"} %d\n", qi.name,
						       (int)qi.running_jobs);
		}
	}
	pthread_mutex_lock(&d->m.mu);
	d->m.cycles++;
	d->m.cycle_ms_last = ms;
	d->m.cycle_ms_sum += ms;
	mu__kd_metrics_hist(d->m.cycle_hist, ms);
	if (b == stack) { /* into the kept block, resized in place when the size is the same */
		size_t n = strlen(stack) + 1;
		char *q = realloc(d->m.queues, n);
		if (q) {
			memcpy(q, stack, n);
			d->m.queues = q;
		}
	} else if (b) {
		free(d->m.queues);
		d->m.queues = b;
	}
	pthread_mutex_unlock(&d->m.mu);
}

/* --- status ------------------------------------------------------------------- */

static json_t *res_json(const mu_res_t *r)
{
	char g[32], c[32], m[32];
	snprintf(g, sizeof g, "%g", (double)r->v[MU_RES_GPU] / 1000.0);
	snprintf(c, sizeof c, "%lldm", (long long)r->v[MU_RES_CPU]);
	snprintf(m, sizeof m, "%lld", (long long)r->v[MU_RES_MEM]);
	return json_pack("{s:s,s:s,s:s}", "nvidia.com/gpu", g, "cpu", c, "memory", m);
}

json_t *mu_kube_queue_status(const mu_res_t *fair, const mu_res_t *used, int64_t pending,
			     int64_t running)
{
	return json_pack("{s:o,s:o,s:i,s:i}", "fairShare", res_json(fair), "usage", res_json(used),
			 "pendingJobs", (int)pending, "runningJobs", (int)running);
}

/* A quantity of pool resource k in Kubernetes' notation. */
static json_t *pool_qty(int k, int64_t v)
{
	char b[32];
	if (k == MU_POOL_GPU)
		snprintf(b, sizeof b, "%g", (double)v / 1000.0);
	else if (k == MU_POOL_CPU)
		snprintf(b, sizeof b, "%lldm", (long long)v);
	else
		snprintf(b, sizeof b, "%lld", (long long)v);
	return json_string(b);
}

/* A queue's fair share, usage and deserved quota in one pool, for each
 * resource the pool has a slot of (GPUs always). */
static json_t *pool_status(const mu_queue_info_t *qi, const mu_pool_info_t *pi)
{
	static const char *const rn[MU_POOL_NRES] = {"nvidia.com/gpu", "cpu", "memory",
						     "pods"};
	json_t *f = json_object(), *u = json_object(), *ds = json_object();
	for (int k = 0; k < MU_POOL_NRES; k++) {
		int sl = pi->rslot[k];
		if (sl < 0)
			continue;
		if (k != MU_POOL_PODS)
			json_object_set_new(f, rn[k], pool_qty(k, qi->fair.v[sl]));
		json_object_set_new(u, rn[k], pool_qty(k, qi->used.v[sl]));
		json_object_set_new(ds, rn[k], pool_qty(k, qi->deserved.v[sl]));
	}
	return json_pack("{s:o,s:o,s:o}", "fairShare", f, "usage", u, "deserved", ds);
}

/* Queue status: fair share, usage, jobs; only when changed. */
static void queue_status(mu__kd_t *d)
{
	const char *name;
	json_t *last;
	json_object_foreach(d->queue_names, name, last) {
		mu_queue_info_t qi;
		if (mu_engine_queue_info(d->e, mu_engine_queue_find(d->e, name), &qi))
			continue;
		json_t *st = mu_kube_queue_status(&qi.fair, &qi.used, qi.pending_jobs,
						  qi.running_jobs);
		if (!st)
			continue;
		json_t *pools = json_object();
		for (int32_t p = 0; p < mu_engine_npools(d->e); p++) {
			mu_pool_info_t pi;
			mu_engine_pool_info(d->e, p, &pi);
			json_object_set_new(pools, pi.name, pool_status(&qi, &pi));
		}
		if (json_object_size(pools))
			json_object_set_new(st, "pools", pools);
		else
			json_decref(pools);
		if (json_equal(st, last)) {
			json_decref(st);
			continue;
		}
		char path[600];
		snprintf(path, sizeof path, "/apis/muster.io/v1alpha1/queues/%s/status", name);
		json_t *body = json_pack("{s:O}", "status", st);
		mu__kd_write(d, MU__KW_WRITE, "PATCH", path, "application/merge-patch+json", body, NULL, NULL);
		json_decref(body);
		json_object_set_new(d->queue_names, name, st);
	}
}

/* PodGroup status: phase and counts; only when changed. */
static void pg_status(mu__kd_t *d, mu__kgroup_t *g)
{
	int32_t sched = 0, done = 0;
	for (int32_t i = 0; i < g->npods; i++) {
		sched += g->pods[i]->node != NULL && !g->pods[i]->terminal;
		done += g->pods[i]->terminal;
	}
	mu_job_info_t ji;
	bool running = g->ej >= 0 && mu_engine_job_info(d->e, g->ej, &ji) == MU_OK &&
		       ji.state == MU_JOB_RUNNING;
	const char *phase = running ? (sched >= g->min_member ? "Running" : "Scheduling") :
			    done && !sched ? "Finished" : "Pending";
	char sig[128];
	snprintf(sig, sizeof sig, "%s/%d/%d", phase, (int)sched, (int)done);
	if (g->status_sig && !strcmp(g->status_sig, sig))
		return;
	free(g->status_sig);
	g->status_sig = strdup(sig);
	char path[800];
	snprintf(path, sizeof path, "/apis/%s/namespaces/%s/podgroups/%s/status",
		 g->key[0] == 'm' ? "muster.io/v1alpha1" : "scheduling.x-k8s.io/v1alpha1", g->ns, g->name);
	json_t *body = json_pack("{s:{s:s,s:i,s:i,s:i}}", "status", "phase", phase, "scheduled", (int)sched,
				 "running", (int)sched, "succeeded", (int)done);
	mu__kd_write(d, MU__KW_WRITE, "PATCH", path, "application/merge-patch+json", body, NULL, NULL);
	json_decref(body);
}

void mu__kd_status(mu__kd_t *d)
{
	queue_status(d);
	for (size_t i = 0; i < d->groups.cap; i++)
		for (mu__kment_t *e = d->groups.tab[i]; e; e = e->next) {
			mu__kgroup_t *g = e->val;
			if (g->kind == MU__KG_GANG && g->has_pg && g->key[0] != 'w')
				pg_status(d, g);
		}
}

/* --- /explain ------------------------------------------------------------------ */

/* The engine's view of group g as JSON (owned by the caller). */
static char *explain_group(mu__kd_t *d, const mu__kgroup_t *g)
{
	mu_job_info_t ji;
	if (g->ej < 0 || mu_engine_job_info(d->e, g->ej, &ji)) {
		json_t *o = json_pack("{s:s,s:s,s:s?}", "group", g->key, "state", "not submitted",
				      "message", g->msg);
		char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
		json_decref(o);
		return s;
	}
	static const char *const st[] = {"pending", "running", "finished"};
	char msg[1024] = "", start[40] = "", submit[40], ord[1024];
	if (ji.state == MU_JOB_PENDING || ji.bound < ji.pods)
		mu_reason_format(d->e, &ji.last, msg, sizeof msg);
	mu_engine_order_explain(d->e, g->ej, ord, sizeof ord);
	if (ji.expected_start != MU_TIME_NONE)
		mu__rfc3339_format(ji.expected_start * 1000, false, start, sizeof start);
	mu__rfc3339_format(ji.submit * 1000, false, submit, sizeof submit);
	char pools[2048] = "", service[512] = "";
	if (ji.state == MU_JOB_PENDING)
		mu_engine_pool_explain(d->e, g->ej, pools, sizeof pools);
	mu_engine_service_explain(d->e, g->ej, service, sizeof service);
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:i,s:b,s:i,s:s,s:s,s:s,s:s,s:I,s:s,s:s?,s:s,s:s}",
			      "group", g->key, "job", ji.name, "queue", ji.queue, "state", st[ji.state],
			      "pods", (int)ji.pods, "bound", (int)ji.bound, "minMember", (int)ji.min_member,
			      "priority", (int)ji.priority, "preemptible", ji.preemptible,
			      "preemptions", (int)ji.preemptions, "message", msg, "submitted", submit,
			      "expectedStart", start, "expectedStartFrom",
			      *start ? (ji.reserved ? "reservation" : "aggregate capacity") : "",
			      "estimateSeconds", (json_int_t)(ji.estimate / 1000), "order", ord,
			      "pool", ji.pool, "pools", pools, "service", service);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

void mu__kd_explain_serve(mu__kd_t *d)
{
	pthread_mutex_lock(&d->ex.mu);
	if (!d->ex.asked || d->ex.answer) {
		pthread_mutex_unlock(&d->ex.mu);
		return;
	}
	char key[720];
	const mu__kgroup_t *g = NULL;
	if (!strncmp(d->ex.key, "pod ", 4)) {
		const mu__kpod_t *p = mu__kmap_get(&d->pods, d->ex.key + 4);
		g = p ? p->g : NULL;
	} else {
		snprintf(key, sizeof key, "j:%s", d->ex.key + 4);
		g = mu__kmap_get(&d->groups, key);
	}
	if (g)
		(void)mu_engine_settle(d->e); /* reservation-based starts; else aggregate */
	char *a = g ? explain_group(d, g) : strdup("{\"error\":\"not known to the scheduler\"}");
	if (a) {
		size_t n = strlen(a);
		char *nl = realloc(a, n + 2);
		if (nl) {
			nl[n] = '\n';
			nl[n + 1] = '\0';
			a = nl;
		}
	}
	d->ex.answer = a;
	pthread_cond_broadcast(&d->ex.cv);
	pthread_mutex_unlock(&d->ex.mu);
}

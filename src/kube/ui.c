/*
 * ui.c - the daemon's side of the live web UI (include/muster/web.h): a
 * provider whose snapshot callback copies the daemon's view into a
 * mu_web_snap_t on the main loop thread, which owns the engine, the
 * groups and the pods.  It reads only: queues and jobs from the engine's
 * queries, pods (and their devices) from the view, nodes from the
 * engine's mu_engine_node_info() and their topology labels from the Node
 * objects.  The hook into the rest of the daemon is three calls: create
 * (mu__kui_start, from metrics.c's server start), tick (daemon.c's loop)
 * and stop; metrics.c routes /ui to mu_web_mhd_answer().
 *
 * GPU states for the heat map: a device with no free share is used; one
 * partly shared is fragmented; a free device on a node that also has used
 * ones is fragmented (stranded); free devices up to the count this
 * cycle's backfill reservations hold on the node are reserved; the free
 * devices of a cordoned or not-ready node are down.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"
#include "muster/web.h"

#define EXTERNAL_QUEUE "muster.io/external"

static int add_queues(mu__kd_t *d, mu_web_snap_t *s)
{
	int32_t nq = mu_engine_nqueues(d->e);
	for (int32_t i = 0; i < nq; i++) {
		mu_queue_info_t qi, pi;
		if (mu_engine_queue_info(d->e, i, &qi) || !strcmp(qi.name, EXTERNAL_QUEUE))
			continue;
		mu_web_queue_t q = {0};
		q.name = qi.name;
		q.parent = qi.parent >= 0 && mu_engine_queue_info(d->e, qi.parent, &pi) == MU_OK ? pi.name
											   : NULL;
		q.priority = qi.priority;
		const mu_res_t *v[4] = {&qi.deserved, &qi.limit, &qi.fair, &qi.used};
		double *o[4] = {q.deserved, q.limit, q.fair, q.used};
		static const int slot[MU_WEB_NRES] = {MU_RES_GPU, MU_RES_CPU, MU_RES_MEM};
		static const double unit[MU_WEB_NRES] = {1000.0, 1000.0, 1.0};
		for (int k = 0; k < 4; k++)
			for (int r = 0; r < MU_WEB_NRES; r++) {
				int64_t x = v[k]->v[slot[r]];
				/* "no limit" is a huge number: -1 */
				o[k][r] = x >= INT64_MAX / 4 ? -1 : (double)x / unit[r];
			}
		q.pending = qi.pending_jobs;
		q.running = qi.running_jobs;
		int rc = mu_web_snap_add_queue(s, &q);
		if (rc)
			return rc;
	}
	return MU_OK;
}

/* Each node pool's GPUs, and every queue's GPU quota, fair share and use
 * in it (queues without any there are left out). */
static int add_pools(mu__kd_t *d, mu_web_snap_t *s)
{
	int32_t nq = mu_engine_nqueues(d->e);
	for (int32_t p = 0; p < mu_engine_npools(d->e); p++) {
		mu_pool_info_t pi;
		if (mu_engine_pool_info(d->e, p, &pi))
			continue;
		mu_web_pool_t w = {.pool = pi.name, .nodes = pi.nodes, .gpus = pi.gpus / 1000.0,
				   .used = pi.used / 1000.0, .limit = -1};
		int rc = mu_web_snap_add_pool(s, &w);
		for (int32_t i = 0; rc == MU_OK && i < nq; i++) {
			mu_queue_info_t qi;
			if (mu_engine_queue_info(d->e, i, &qi) || !strcmp(qi.name, EXTERNAL_QUEUE))
				continue;
			int64_t lim = qi.limit.v[pi.slot];
			mu_web_pool_t q = {.pool = pi.name, .queue = qi.name,
					   .used = qi.used.v[pi.slot] / 1000.0,
					   .deserved = qi.deserved.v[pi.slot] / 1000.0,
					   .fair = qi.fair.v[pi.slot] / 1000.0,
					   .limit = lim >= INT64_MAX / 4 ? -1 : lim / 1000.0};
			if (q.used > 0 || q.deserved > 0 || q.fair > 0 || q.limit >= 0)
				rc = mu_web_snap_add_pool(s, &q);
		}
		if (rc)
			return rc;
	}
	return MU_OK;
}

typedef struct walk {
	mu__kd_t *d;
	mu_web_snap_t *s;
	int rc;
} walk_t;

static const char *pod_phase(const mu__kpod_t *p)
{
	return p->terminal ? "Finished" : p->evicting ? "Evicting" : p->node ? "Running" :
	       p->an_node ? "Binding" : p->gated ? "Gated" : "Pending";
}

/* One group: its job and its pods. */
static void add_group(void *arg, void *val)
{
	walk_t *wk = arg;
	mu__kd_t *d = wk->d;
	mu__kgroup_t *g = val;
	if (wk->rc || g->kind == MU__KG_EXTERNAL || (g->kind == MU__KG_JOB && g->ej < 0 && !g->npods))
		return;
	static const char *const kinds[] = {"pod", "gang", "job", "external"};
	mu_web_job_t j = {0};
	j.key = g->key;
	j.name = g->name;
	j.ns = g->ns;
	j.kind = kinds[g->kind & 3];
	j.type = g->job ? mu__kmap(g->job, "metadata.annotations", "muster.io/type") : NULL;
	for (int32_t i = 0; i < g->npods && !j.type; i++)
		if (g->pods[i]->shape && !g->pods[i]->shape->err) {
			j.type = mu_job_type_name(mu__kshape_job(g->pods[i]->shape)->type);
			break;
		}
	if (!j.type)
		j.type = "batch";
	char msg[1024] = "";
	mu_job_info_t ji;
	if (g->ej >= 0 && mu_engine_job_info(d->e, g->ej, &ji) == MU_OK) {
		j.queue = ji.queue;
		j.state = ji.state == MU_JOB_RUNNING ? MU_WEB_RUNNING :
			  ji.state == MU_JOB_FINISHED ? MU_WEB_FINISHED : MU_WEB_PENDING;
		j.pods = ji.pods;
		j.bound = ji.bound;
		j.min_member = ji.min_member;
		j.priority = ji.effective_priority;
		j.preemptible = ji.preemptible;
		j.preemptions = ji.preemptions;
		j.gpus = (double)ji.gpu_milli / 1000.0;
		j.submitted_ms = ji.submit;
		j.started_ms = ji.state == MU_JOB_RUNNING ? ji.start : 0;
		if (ji.state == MU_JOB_PENDING || ji.bound < ji.pods) {
			mu_reason_format(d->e, &ji.last, msg, sizeof msg);
			j.reason = msg;
			j.why = mu_why_name(ji.last.why);
		}
		if (ji.state == MU_JOB_PENDING && ji.expected_start != MU_TIME_NONE) {
			j.expected_ms = ji.expected_start;
			j.expected_from = ji.reserved ? "reservation" : "aggregate capacity";
		}
	} else {
		j.queue = mu__kd_queue_of(d, g);
		j.state = MU_WEB_PENDING;
		j.pods = g->npods;
		j.min_member = g->min_member;
		j.submitted_ms = g->created_ms;
		j.reason = g->msg ? g->msg : "not submitted to the engine yet";
		j.why = "NotSubmitted";
	}
	if ((wk->rc = mu_web_snap_add_job(wk->s, &j)))
		return;
	for (int32_t i = 0; i < g->npods && !wk->rc; i++) {
		const mu__kpod_t *p = g->pods[i];
		mu_web_pod_t wp = {0};
		wp.job_key = g->key;
		wp.name = p->name;
		wp.ns = p->ns;
		wp.node = p->node ? p->node : p->an_node;
		wp.phase = pod_phase(p);
		wp.numa = wp.nic = -1;
		if (wp.node && !p->terminal) {
			wp.gpus = p->dev.gpus;
			wp.gpu_milli = p->dev.gpu_milli;
			wp.numa = p->dev.numa;
			wp.nic = p->dev.nic;
		}
		wk->rc = mu_web_snap_add_pod(wk->s, &wp);
	}
}

/* The heat-map states of a node's devices (see the top of the file). */
static void gpu_states(const mu_node_info_t *ni, mu_web_node_t *n)
{
	int used = 0, resv = ni->reserved_gpus;
	n->ngpu = ni->ngpu < MU_WEB_MAX_GPUS ? ni->ngpu : MU_WEB_MAX_GPUS;
	for (int g = 0; g < n->ngpu; g++) {
		int16_t f = ni->gpu_free[g];
		n->gpu[g] = f <= 0 ? MU_WEB_GPU_USED : f < 1000 ? MU_WEB_GPU_FRAG : MU_WEB_GPU_FREE;
		used += f < 1000;
	}
	for (int g = 0; g < n->ngpu; g++) {
		if (n->gpu[g] != MU_WEB_GPU_FREE)
			continue;
		if (ni->unschedulable)
			n->gpu[g] = MU_WEB_GPU_DOWN;
		else if (resv > 0)
			n->gpu[g] = MU_WEB_GPU_RESERVED, resv--;
		else if (used)
			n->gpu[g] = MU_WEB_GPU_FRAG;
	}
}

static void add_node(void *arg, void *val)
{
	walk_t *wk = arg;
	mu__kd_t *d = wk->d;
	const mu__knode_t *kn = val;
	mu_node_info_t ni;
	if (wk->rc || !kn->in_engine ||
	    mu_engine_node_info(d->e, mu_engine_node_find(d->e, kn->name), &ni))
		return;
	mu_web_node_t n = {0};
	n.name = kn->name;
	n.gpu_model = ni.gpu_model;
	n.ready = !ni.unschedulable;
	n.pods = ni.pods;
	n.cpu_alloc = (double)ni.alloc.v[MU_RES_CPU] / 1000.0;
	n.cpu_used = (double)(ni.alloc.v[MU_RES_CPU] - ni.free.v[MU_RES_CPU]) / 1000.0;
	n.mem_alloc = (double)ni.alloc.v[MU_RES_MEM];
	n.mem_used = (double)(ni.alloc.v[MU_RES_MEM] - ni.free.v[MU_RES_MEM]);
	gpu_states(&ni, &n);
	char levels[512] = "";
	const char *key;
	json_t *obj = mu__knode_parse(kn->text);
	for (int32_t l = 0; (key = mu_engine_topology_level(d->e, 0, l)); l++) {
		const char *v = mu__kmap(obj, "metadata.labels", key);
		if (!v || !strcmp(key, "kubernetes.io/hostname")) /* the node itself */
			continue;
		const char *slash = strrchr(key, '/');
		size_t at = strlen(levels);
		snprintf(levels + at, sizeof levels - at, "%s%s=%s", at ? " " : "", slash ? slash + 1 : key,
			 v);
		n.rack = v; /* the innermost level found */
	}
	n.levels = *levels ? levels : NULL;
	wk->rc = mu_web_snap_add_node(wk->s, &n); /* copies n.rack */
	json_decref(obj);
}

/* mu_web_provider_t.snapshot: the whole view.  O(queues + groups + pods +
 * nodes x devices). */
static int snapshot(void *ctx, mu_web_snap_t *s)
{
	mu__kd_t *d = ctx;
	if (!d->all_synced)
		return MU_ESTATE;
	(void)mu_engine_settle(d->e); /* reservation-based expected starts */
	walk_t wk = {d, s, MU_OK};
	wk.rc = mu_web_snap_set_title(s, "muster scheduler");
	if (!wk.rc)
		wk.rc = add_queues(d, s);
	if (!wk.rc)
		wk.rc = add_pools(d, s);
	if (!wk.rc)
		mu__kmap_each(&d->groups, add_group, &wk);
	if (!wk.rc)
		mu__kmap_each(&d->nodes, add_node, &wk);
	return wk.rc;
}

int mu__kui_start(mu__kd_t *d)
{
	mu_web_provider_t p = {d, snapshot, NULL};
	mu_web_opts_t o;
	mu_web_opts_defaults(&o);
	o.token = d->token;
	if (d->o->ui_history_step_ms > 0)
		o.hist_ms = d->o->ui_history_step_ms;
	return mu_web_new(&p, &o, &d->ui);
}

void mu__kui_tick(mu__kd_t *d, bool changed)
{
	if (!d->ui)
		return;
	if (changed || d->last_cycle != d->ui_cycle) { /* events, or a cycle ran */
		d->ui_cycle = d->last_cycle;
		mu_web_poke(d->ui);
	}
	mu_web_tick(d->ui, mu__k_now_ms());
}

/*
 * explain.c - turns a structured pending reason into one line of text, in
 * the style of kube-scheduler's FailedScheduling messages:
 *   0/64 nodes are available: 40 insufficient nvidia.com/gpu, 24 node(s)
 *   didn't match node selector; gang needs 16 pods, at most 12 fit
 */
#include <stdarg.h>
#include <stdio.h>

#include "engine/engine_int.h"

static const char *filter_text(mu_filter_t f)
{
	switch (f) {
	case MU_F_UNSCHEDULABLE: return "node(s) were unschedulable";
	case MU_F_SELECTOR: return "node(s) didn't match node selector";
	case MU_F_AFFINITY: return "node(s) didn't match node affinity";
	case MU_F_TAINT: return "node(s) had untolerated taint";
	case MU_F_GPU_MODEL: return "node(s) had a GPU model not allowed";
	case MU_F_CPU: return "insufficient cpu";
	case MU_F_MEM: return "insufficient memory";
	case MU_F_GPU: return "insufficient nvidia.com/gpu";
	case MU_F_PODS: return "too many pods";
	case MU_F_EXT: return "insufficient extended resources";
	case MU_F_ALIGN: return "node(s) could not align GPUs, NIC and CPUs";
	case MU_F_RESERVED: return "node(s) reserved for a job ahead that it would delay";
	case MU_F_SPREAD_LABEL: return "node(s) didn't match pod topology spread constraints (missing required label)";
	case MU_F_SPREAD: return "node(s) didn't match pod topology spread constraints";
	case MU_F_POD_AFFINITY: return "node(s) didn't match pod affinity rules";
	case MU_F_POD_ANTI: return "node(s) didn't match pod anti-affinity rules";
	case MU_F_EXISTING_ANTI: return "node(s) didn't satisfy existing pods anti-affinity rules";
	case MU_F_COUNT: break;
	}
	return "unknown filter";
}

/* Prints an accounting amount of slot r in its natural unit (a pool's
 * slot holds the units of its resource, e->slot_base). */
static void fmt_amount(const mu_engine_t *e, char *buf, size_t len, int r, int64_t v)
{
	if (r >= 0 && r < MU_RES_MAX && e->slot_pool[r] >= 0)
		r = e->slot_base[r];
	if (r == MU_RES_GPU)
		snprintf(buf, len, "%g", (double)v / 1000.0);
	else if (r == MU_RES_CPU)
		snprintf(buf, len, "%g", (double)v / 1000.0);
	else if (r == MU_RES_MEM)
		snprintf(buf, len, "%.4gGi", (double)v / (1024.0 * 1024 * 1024));
	else
		snprintf(buf, len, "%lld", (long long)v);
}

/* Appends to buf at *off, never past len; keeps counting as snprintf. */
static void put(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t room = *off < len ? len - *off : 0;
	int n = vsnprintf(room ? buf + *off : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n;
}

/* "queue X is at its fair share of R: U used + Q requested > F (D deserved)" */
static void put_fair(const mu_engine_t *e, const mu_reason_t *r, char *buf,
		     size_t len, size_t *off)
{
	if (r->fs_queue < 0 || r->fs_queue >= e->nqueues || r->fs_res < 0 ||
	    r->fs_res >= e->nres)
		return;
	char used[32], req[32], fair[32], des[32];
	fmt_amount(e, used, sizeof used, r->fs_res, r->fs_used);
	fmt_amount(e, req, sizeof req, r->fs_res, r->fs_req);
	fmt_amount(e, fair, sizeof fair, r->fs_res, r->fs_fair);
	fmt_amount(e, des, sizeof des, r->fs_res, r->fs_deserved);
	if (r->fs_rule == MU_RULE_MIN_RUNTIME)
		put(buf, len, off, "; its victims must run %.0fs first: one may go in %.0fs",
		    (double)r->fs_used / 1000.0, (double)r->fs_req / 1000.0);
	else if (r->fs_rule == MU_RULE_VICTIM_QUOTA)
		put(buf, len, off, "; reclaim refused: queue \"%s\" holds only what protects it: %s %s used <= %s deserved or %s fair share",
		    e->queues[r->fs_queue].name, e->res_names[r->fs_res], used, des, fair);
	else
		put(buf, len, off, "; queue \"%s\" is at its fair share of %s: %s used + %s requested > %s fair share (%s deserved), so it cannot reclaim",
		    e->queues[r->fs_queue].name, e->res_names[r->fs_res], used, req, fair, des);
}

/* Quota reasons: a limit, or no in-quota room for a non-preemptible job. */
static void put_quota(const mu_engine_t *e, const mu_reason_t *r, char *buf,
		      size_t len, size_t *off)
{
	char used[32], req[32], max[32];
	fmt_amount(e, used, sizeof used, r->limit_res, r->limit_used);
	fmt_amount(e, req, sizeof req, r->limit_res, r->limit_req);
	fmt_amount(e, max, sizeof max, r->limit_res, r->limit_max);
	const char *qn = r->limit_queue >= 0 && r->limit_queue < e->nqueues ?
		e->queues[r->limit_queue].name : "?";
	const char *rn = r->limit_res >= 0 && r->limit_res < e->nres ?
		e->res_names[r->limit_res] : "?";
	if (r->why == MU_WHY_QUEUE_LIMIT)
		put(buf, len, off, "queue \"%s\" is at its limit of %s: %s used + %s requested > %s",
		    qn, rn, used, req, max);
	else
		put(buf, len, off, "non-preemptible jobs run only within quota: queue \"%s\" %s: %s used by non-preemptible jobs + %s requested > %s deserved",
		    qn, rn, used, req, max);
}

int mu_reason_format(const mu_engine_t *e, const mu_reason_t *r, char *buf,
		     size_t len)
{
	size_t off = 0;
	if (len)
		buf[0] = '\0';
	const char *other = r->blocked_by >= 0 && r->blocked_by < e->njobs &&
		e->jobs[r->blocked_by].name ? e->jobs[r->blocked_by].name : "?";
	switch (r->why) {
	case MU_WHY_QUEUE_LIMIT:
	case MU_WHY_OVER_QUOTA:
		put_quota(e, r, buf, len, &off);
		return (int)off;
	case MU_WHY_NONE:
		put(buf, len, &off, "not pending");
		return (int)off;
	case MU_WHY_BLOCKED:
		put(buf, len, &off, "waits behind \"%s\", which has waited past the starvation limit; its queue starts nothing else until it runs", other);
		return (int)off;
	case MU_WHY_PREEMPTED:
		put(buf, len, &off, "preempted to make room for \"%s\"; waits to resume", other);
		return (int)off;
	case MU_WHY_TOPOLOGY: {
		const char *lv = mu_engine_topology_level(e, r->topo_id, r->topo_level);
		put(buf, len, &off, "no %s domain can hold the gang: %d of %d have the free capacity in total",
		    lv ? lv : "?", r->topo_tried, r->topo_domains);
		if (r->topo_tried)
			put(buf, len, &off, ", and in those at most %d of the %d pods fit", r->topo_best,
			    r->pods_needed);
		put_fair(e, r, buf, len, &off);
		return (int)off;
	}
	default:
		break;
	}
	int32_t failed = 0;
	for (int f = 0; f < MU_F_COUNT; f++)
		failed += r->fail[f];
	put(buf, len, &off, "%d/%d nodes are available", r->nodes_total - failed,
	    r->nodes_total);
	/* Largest counts first, as a reader scans for the main cause. */
	bool done[MU_F_COUNT] = {false};
	const char *sep = ": ";
	for (;;) {
		int best = -1;
		for (int f = 0; f < MU_F_COUNT; f++)
			if (!done[f] && r->fail[f] > 0 &&
			    (best < 0 || r->fail[f] > r->fail[best]))
				best = f;
		if (best < 0)
			break;
		done[best] = true;
		put(buf, len, &off, "%s%d %s", sep, r->fail[best],
		    filter_text((mu_filter_t)best));
		sep = ", ";
	}
	if (r->why == MU_WHY_GANG && r->part_needed > 0) {
		const mu__job_t *pj = r->part_job >= 0 && r->part_job < e->njobs ?
			&e->jobs[r->part_job] : NULL;
		if (pj && r->part >= 0 && r->part < pj->npodsets)
			put(buf, len, &off, "; gang part \"%s\" needs %d pods, at most %d fit",
			    pj->podsets[r->part].name, r->part_needed, r->part_fit);
		else
			put(buf, len, &off, "; gang part %d needs %d pods, at most %d fit",
			    r->part, r->part_needed, r->part_fit);
	} else if (r->why == MU_WHY_GANG)
		put(buf, len, &off, "; gang needs %d pods, at most %d fit",
		    r->pods_needed, r->pods_fit);
	else if (r->pods_needed > 1)
		put(buf, len, &off, "; %d pods wait", r->pods_needed);
	put_fair(e, r, buf, len, &off);
	return (int)off;
}

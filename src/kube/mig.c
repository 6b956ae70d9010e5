/*
 * mig.c - `muster scheduler --mig-layouts`: the MIG layouts of the
 * cluster's MIG-capable nodes re-planned for the pods that wait, written
 * on each Node as the annotation muster.io/mig-layout (docs/policy.md,
 * "MIG"), for a MIG manager to apply.
 *
 * A node is MIG-capable when its nvidia.com/gpu.product label names an
 * A100 or H100 (mu_mig_model).  Its GPUs: the label nvidia.com/gpu.count,
 * else its allocatable nvidia.com/gpu.  Its layout now: its annotation
 * when that reads for its model and GPU count (the layout last asked
 * for, applied or not, so that a plan is not asked again and again while
 * the manager works), else what its allocatable advertises in NVIDIA's
 * mixed strategy (nvidia.com/gpu whole GPUs first, the
 * nvidia.com/mig-PROFILE counts packed into the rest with mu_mig_plan).
 * The pods bound (or being bound) there hold their devices: whole GPUs
 * and shares hold MIG-off GPUs, a MIG request the first instances of its
 * profile (which instance a pod got is the device plugin's, and not on the
 * pod).  The demand is every pod of ours that waits, by its shape.  The
 * nodes of one model are one pool for mu_mig_replan(); a node whose
 * re-planned layout differs from its annotation gets a merge patch of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"
#include "muster/mig.h"

#define MIG_ANN MU__KNODE_MIG_ANN
#define MIG_PREFIX "nvidia.com/mig-"
#define MIG_EVERY_MS 1000
#define MIG_MAX_NODES 4096

typedef struct kmig_node {
	const char *name;
	const mu_mig_model_t *model;
	int ngpu;
	mu_mig_gpu_t cur[MU_MAX_GPUS];
	uint8_t held[MU_MAX_GPUS];
	int32_t hold[MU_MIG_MAX_PROFILES]; /* instances the pods there hold */
	int whole_held;                    /* MIG-off GPUs they hold */
	char ann[MU_MAX_GPUS * 160];       /* its annotation, "" none */
} kmig_node_t;

typedef struct kmig {
	mu__kd_t *d;
	kmig_node_t *nodes;
	int n, cap;
	int64_t whole;                       /* whole GPUs the waiting pods ask */
	const char **names;                  /* per waiting MIG request: the resource */
	int64_t *qty;
	size_t nreq, reqcap;
} kmig_t;

/* An integer string value of object o at key, or -1. */
static long num_at(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	char *end;
	if (!s)
		return -1;
	long v = strtol(s, &end, 10);
	return end == s || *end || v < 0 ? -1 : v;
}

/* The layout a node advertises: whole GPUs first, then its instance
 * counts packed into the rest.  O(GPUs x instances). */
static void from_alloc(kmig_node_t *x, const json_t *alloc)
{
	long whole = num_at(alloc, "nvidia.com/gpu");
	int32_t count[MU_MIG_MAX_PROFILES] = {0};
	for (int p = 0; p < x->model->nprofiles; p++) {
		char key[64];
		snprintf(key, sizeof key, MIG_PREFIX "%s", x->model->profiles[p].name);
		long v = num_at(alloc, key);
		count[p] = v > 0 && v < 1000 ? (int32_t)v : 0;
	}
	if (whole < 0 || whole > x->ngpu)
		whole = x->ngpu;
	mu_mig_plan(x->model, x->ngpu - (int)whole, 0, count, x->cur + whole, NULL, NULL);
	for (int g = 0; g < whole; g++)
		x->cur[g] = (mu_mig_gpu_t){.enabled = false};
	for (int g = (int)whole; g < x->ngpu; g++)
		x->cur[g].enabled = true;
}

/* add_node() on obj, kn's parsed slim copy (NULL when out of memory:
 * nothing is added). */
static void add_node_obj(kmig_t *m, const mu__knode_t *kn, const json_t *obj)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const json_t *labels = json_object_get(meta, "labels");
	const json_t *alloc = json_object_get(json_object_get(obj, "status"), "allocatable");
	const mu_mig_model_t *model =
		mu_mig_model(json_string_value(json_object_get(labels, "nvidia.com/gpu.product")));
	if (!model || m->n >= m->cap)
		return;
	kmig_node_t *x = &m->nodes[m->n];
	memset(x, 0, sizeof *x);
	x->name = kn->name;
	x->model = model;
	long g = num_at(labels, "nvidia.com/gpu.count");
	x->ngpu = (int)(g > 0 && g <= MU_MAX_GPUS ? g : num_at(alloc, "nvidia.com/gpu"));
	if (x->ngpu <= 0 || x->ngpu > MU_MAX_GPUS)
		return;
	const char *ann = json_string_value(json_object_get(json_object_get(meta, "annotations"),
							    MIG_ANN));
	char why[200];
	if (ann && strlen(ann) < sizeof x->ann &&
	    mu_mig_parse_node(model, ann, x->cur, MU_MAX_GPUS, why, sizeof why) == x->ngpu)
		snprintf(x->ann, sizeof x->ann, "%s", ann);
	else
		from_alloc(x, alloc);
	m->n++;
}

/* Adds node val (a mu__knode_t) to m when it is MIG-capable.  A node
 * without a GPU product label is passed over without parsing; others have
 * their slim copy (objects.c) parsed once: O(its size). */
static void add_node(void *arg, void *val)
{
	kmig_t *m = arg;
	const mu__knode_t *kn = val;
	if (!kn->text || !strstr(kn->text, "\"nvidia.com/gpu.product\""))
		return;
	json_t *obj = mu__knode_parse(kn->text);
	add_node_obj(m, kn, obj);
	json_decref(obj);
}

/* The node of m called name, or NULL.  Linear in the MIG nodes. */
static kmig_node_t *find(kmig_t *m, const char *name)
{
	for (int i = 0; name && i < m->n; i++)
		if (!strcmp(m->nodes[i].name, name))
			return &m->nodes[i];
	return NULL;
}

/* Counts pod p: what it holds on a MIG node, or what it waits for. */
static void add_pod(void *arg, void *val)
{
	kmig_t *m = arg;
	const mu__kpod_t *p = val;
	if (p->terminal || !p->shape || p->shape->err || !p->shape->specs.njobs ||
	    !p->shape->specs.jobs[0].npodsets)
		return;
	const mu_podset_spec_t *ps = &p->shape->specs.jobs[0].podsets[0];
	const char *node = p->node ? p->node : p->an_node;
	kmig_node_t *x = find(m, node);
	if (node && !x)
		return;
	if (!node && (!p->ours || p->deleting || p->gated))
		return;
	int64_t whole = ps->req.v[MU_RES_GPU] + (ps->req.v[MU_RES_GPU_MILLI] > 0);
	if (x)
		x->whole_held += (int)whole;
	else
		m->whole += whole;
	for (size_t r = 0; r < ps->next; r++) {
		const char *nm = ps->ext[r].name;
		if (strncmp(nm, MIG_PREFIX, strlen(MIG_PREFIX)))
			continue;
		if (x) {
			int k = mu_mig_profile_index(x->model, nm + strlen(MIG_PREFIX));
			if (k >= 0)
				x->hold[k] += (int32_t)ps->ext[r].qty;
		} else if (m->nreq < m->reqcap) {
			m->names[m->nreq] = nm;
			m->qty[m->nreq++] = ps->ext[r].qty;
		}
	}
}

/* Marks the devices the pods on x hold: the first instances of each
 * profile, the first MIG-off GPUs.  O(GPUs x instances). */
static void mark_held(kmig_node_t *x)
{
	int whole = x->whole_held;
	for (int g = 0; g < x->ngpu; g++) {
		x->held[g] = 0;
		if (!x->cur[g].enabled) {
			if (whole > 0) {
				x->held[g] = 1;
				whole--;
			}
			continue;
		}
		for (int i = 0; i < x->cur[g].n; i++)
			if (x->hold[x->cur[g].prof[i]] > 0) {
				x->hold[x->cur[g].prof[i]]--;
				x->held[g] |= (uint8_t)(1u << i);
			}
	}
}

/* Writes node x's layout g when it differs from its annotation. */
static void write_node(mu__kd_t *d, const kmig_node_t *x, const mu_mig_gpu_t *g)
{
	char text[MU_MAX_GPUS * 160], path[400];
	if (mu_mig_format_node(x->model, g, x->ngpu, text, sizeof text) >= sizeof text ||
	    !strcmp(text, x->ann))
		return;
	snprintf(path, sizeof path, "/api/v1/nodes/%s", x->name);
	json_t *body = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", MIG_ANN, text);
	if (!body)
		return;
	mu__kd_write(d, MU__KW_WRITE, "PATCH", path, "application/merge-patch+json", body,
		     NULL, NULL);
	json_decref(body);
	mu__klog(&d->log, 1, "mig: node %s: layout %s (was %s)", x->name, text,
		 x->ann[0] ? x->ann : "as advertised");
}

/* Re-plans the pool of model k of m and writes what changed. */
static void plan_pool(kmig_t *m, const mu_mig_model_t *model, int64_t *whole_left)
{
	int n = 0;
	for (int i = 0; i < m->n; i++)
		n += m->nodes[i].model == model ? m->nodes[i].ngpu : 0;
	if (!n)
		return;
	mu_mig_gpu_t *cur = calloc((size_t)n, sizeof *cur), *out = calloc((size_t)n, sizeof *out);
	uint8_t *held = calloc((size_t)n, 1);
	int32_t demand[MU_MIG_MAX_PROFILES] = {0};
	if (!cur || !out || !held)
		goto done;
	for (int i = 0, at = 0; i < m->n; i++) {
		kmig_node_t *x = &m->nodes[i];
		if (x->model != model)
			continue;
		mark_held(x);
		memcpy(cur + at, x->cur, (size_t)x->ngpu * sizeof *cur);
		memcpy(held + at, x->held, (size_t)x->ngpu);
		at += x->ngpu;
	}
	for (size_t r = 0; r < m->nreq; r++) {
		int k = mu_mig_profile_index(model, m->names[r] + strlen(MIG_PREFIX));
		if (k >= 0 && demand[k] < 1000000)
			demand[k] += (int32_t)m->qty[r];
	}
	int ws = 0;
	int rc = mu_mig_replan(model, n, cur, held,
			       *whole_left > 1000000 ? 1000000 : (int)*whole_left, demand,
			       out, NULL, &ws);
	if (rc < 0) {
		mu__klog(&m->d->log, 0, "mig: re-planning the %s nodes: %s", model->name,
			 mu_strerror(rc));
		goto done;
	}
	*whole_left -= ws;
	for (int i = 0, at = 0; i < m->n; i++) {
		kmig_node_t *x = &m->nodes[i];
		if (x->model != model)
			continue;
		if (rc > 0 || x->ann[0])
			write_node(m->d, x, out + at);
		at += x->ngpu;
	}
done:
	free(cur);
	free(out);
	free(held);
}

void mu__kd_mig(mu__kd_t *d)
{
	int64_t now = mu__k_mono_ms();
	if (now - d->last_mig < MIG_EVERY_MS)
		return;
	d->last_mig = now;
	kmig_t m = {.d = d, .cap = d->nodes.n < MIG_MAX_NODES ? (int)d->nodes.n : MIG_MAX_NODES};
	m.reqcap = d->pods.n * 4 + 1;
	m.nodes = calloc((size_t)(m.cap ? m.cap : 1), sizeof *m.nodes);
	m.names = calloc(m.reqcap, sizeof *m.names);
	m.qty = calloc(m.reqcap, sizeof *m.qty);
	if (m.nodes && m.names && m.qty) {
		mu__kmap_each(&d->nodes, add_node, &m);
		if (m.n) {
			mu__kmap_each(&d->pods, add_pod, &m);
			int64_t whole_left = m.whole;
			const mu_mig_model_t *done[4] = {0};
			int ndone = 0;
			for (int i = 0; i < m.n && ndone < 4; i++) {
				bool seen = false;
				for (int k = 0; k < ndone; k++)
					seen = seen || done[k] == m.nodes[i].model;
				if (seen)
					continue;
				done[ndone++] = m.nodes[i].model;
				plan_pool(&m, m.nodes[i].model, &whole_left);
			}
		}
	}
	free(m.nodes);
	free(m.names);
	free(m.qty);
}

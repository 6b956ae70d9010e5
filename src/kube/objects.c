/*
 * objects.c - Kubernetes objects to engine specs.
 *
 * Pods: what the engine needs of a pod (requests computed as Kubernetes
 * does, node selector, required node affinity, tolerations, and muster's
 * annotations) is exactly what the cluster-file loader reads from a
 * batch/v1 Job's pod template.  So the scheduling-relevant fields of a pod
 * are cut into a small canonical Job document (containers' resources, init
 * containers' resources and restartPolicy, its labels, nodeSelector, node
 * affinity, pod affinity and anti-affinity, topology spread constraints,
 * tolerations, preemptionPolicy, muster.io/ annotations the loader reads, and the
 * pod's resolved spec.priority as muster.io/priority), and the document's
 * text keys a cache of shapes: pods of one shape share one loaded spec, so
 * the loader runs once per distinct shape, not once per pod.  Shapes are
 * refcounted by the pods that use them and freed with the last one.
 *
 * Nodes, Topologies and device annotations are read here directly; Queues,
 * NodeResourceTopologies and queue-labelled Jobs go through the loader, so
 * they mean what they mean in cluster files (docs/formats.md).  Unknown
 * fields are ignored everywhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/jpath.h"
#include "muster/load.h"
#include "kube/kube_int.h"

/* --- pods ------------------------------------------------------------------ */

int mu__kpod_info(const json_t *o, mu__kpodinfo_t *p)
{
	memset(p, 0, sizeof *p);
	p->name = mu__kjs(o, "metadata.name");
	p->ns = mu__kjs(o, "metadata.namespace");
	if (!p->name || !*p->name)
		return MU_EPARSE;
	if (!p->ns)
		p->ns = "default";
	p->uid = mu__kjs(o, "metadata.uid");
	p->node = mu__kjs(o, "spec.nodeName");
	if (p->node && !*p->node)
		p->node = NULL;
	p->scheduler = mu__kjs(o, "spec.schedulerName");
	if (!p->scheduler)
		p->scheduler = "default-scheduler";
	p->phase = mu__kjs(o, "status.phase");
	if (!p->phase)
		p->phase = "Pending";
	p->failed = !strcmp(p->phase, "Failed");
	p->terminal = p->failed || !strcmp(p->phase, "Succeeded");
	p->deleting = mu__kj(o, "metadata.deletionTimestamp") &&
		      !json_is_null(mu__kj(o, "metadata.deletionTimestamp"));
	p->gated = json_array_size(mu__kj(o, "spec.schedulingGates")) > 0;
	p->group_label = mu__kmap(o, "metadata.labels", "muster.io/pod-group");
	p->xgroup_label = mu__kmap(o, "metadata.labels", "scheduling.x-k8s.io/pod-group");
	p->pclass = mu__kjs(o, "spec.priorityClassName");
	p->queue = mu__kmap(o, "metadata.labels", "muster.io/queue");
	if (!p->queue)
		p->queue = mu__kmap(o, "metadata.labels", "kueue.x-k8s.io/queue-name");
	size_t i;
	json_t *ref;
	json_array_foreach(mu__kj(o, "metadata.ownerReferences"), i, ref) {
		const char *kind = mu__kjs(ref, "kind"), *api = mu__kjs(ref, "apiVersion");
		if (!json_is_true(json_object_get(ref, "controller")) || !kind || !api)
			continue;
		p->ctrl_kind = kind;
		p->ctrl_name = mu__kjs(ref, "name");
		if (!strcmp(kind, "Job") && !strcmp(api, "batch/v1"))
			p->owner_job = mu__kjs(ref, "name");
	}
	const char *t = mu__kjs(o, "metadata.creationTimestamp");
	if (t && mu__rfc3339_parse(t, &p->created_ms))
		p->created_ms = 0;
	t = mu__kjs(o, "status.startTime");
	if (t && mu__rfc3339_parse(t, &p->started_ms))
		p->started_ms = 0;
	return MU_OK;
}

/* The annotations the loader reads from a Job (the gang-level
 * muster.io/min-member is the pod group's business, not a pod's). */
static const char *const shape_annotations[] = {
	"muster.io/priority", "muster.io/type", "muster.io/preemptible",
	"muster.io/gpu-models", "muster.io/gpu-memory", "gpu-memory",
	"gpu-fraction", "muster.io/align", "muster.io/nic",
	"muster.io/pin-cpus", "muster.io/runtime-estimate",
	"muster.io/runtime-limit", "muster.io/topology",
	"muster.io/topology-required", "muster.io/topology-preferred",
	"muster.io/topology-slice-level", "muster.io/topology-slice-size",
	"muster.io/pools", "muster.io/max-wait", "muster.io/escalation",
};

/* Copies the `keep` fields of each container of list into a new list. */
static json_t *containers(const json_t *list, bool init)
{
	json_t *out = json_array();
	size_t i;
	json_t *c;
	json_array_foreach(list, i, c) {
		json_t *n = json_object();
		json_t *r = json_object_get(c, "resources");
		if (json_is_object(r)) {
			json_t *rr = json_object();
			json_t *v;
			if ((v = json_object_get(r, "requests")))
				json_object_set(rr, "requests", v);
			if ((v = json_object_get(r, "limits")))
				json_object_set(rr, "limits", v);
			json_object_set_new(n, "resources", rr);
		}
		if (init && json_object_get(c, "restartPolicy"))
			json_object_set(n, "restartPolicy", json_object_get(c, "restartPolicy"));
		json_array_append_new(out, n);
	}
	return out;
}

/* The canonical Job document of a pod's scheduling-relevant fields (only
 * its resources when `bound`: a pod another scheduler placed only takes
 * room, its constraints no longer matter).  Returns an owned string. */
static char *shape_doc(const json_t *pod, bool bound)
{
	const json_t *spec = json_object_get(pod, "spec");
	json_t *ps = json_object(), *an = json_object();
	json_t *v;
	json_object_set_new(ps, "containers", containers(json_object_get(spec, "containers"), false));
	if ((v = json_object_get(spec, "initContainers")) && json_array_size(v))
		json_object_set_new(ps, "initContainers", containers(v, true));
	/* Labels and pod (anti-)affinity terms matter bound or not: other
	 * pods' terms select this one, and its anti-affinity keeps others
	 * away (affinity.c). */
	json_t *aff = json_object();
	const char *const pterms[] = {"podAffinity", "podAntiAffinity"};
	for (int i = 0; i < 2; i++)
		if ((v = json_object_get(json_object_get(spec, "affinity"), pterms[i])))
			json_object_set(aff, pterms[i], v);
	if (bound)
		goto doc;
	if ((v = json_object_get(spec, "nodeSelector")) && json_object_size(v))
		json_object_set(ps, "nodeSelector", v);
	if ((v = json_object_get(spec, "tolerations")) && json_array_size(v))
		json_object_set(ps, "tolerations", v);
	if (json_is_string(v = json_object_get(spec, "preemptionPolicy")))
		json_object_set(ps, "preemptionPolicy", v);
	if ((v = mu__kj(spec, "affinity.nodeAffinity")) && json_object_size(v))
		json_object_set(aff, "nodeAffinity", v);
	if ((v = json_object_get(spec, "topologySpreadConstraints")) && json_array_size(v))
		json_object_set(ps, "topologySpreadConstraints", v);
	const json_t *pa = mu__kj(pod, "metadata.annotations");
	for (size_t i = 0; i < sizeof shape_annotations / sizeof *shape_annotations; i++)
		if ((v = json_object_get(pa, shape_annotations[i])))
			json_object_set(an, shape_annotations[i], v);
	v = json_object_get(spec, "priority");
	if (json_is_integer(v) && !json_object_get(an, "muster.io/priority")) {
		char b[32];
		snprintf(b, sizeof b, "%lld", (long long)json_integer_value(v));
		json_object_set_new(an, "muster.io/priority", json_string(b));
	}
doc:;
	if (json_object_size(aff))
		json_object_set(ps, "affinity", aff);
	json_decref(aff);
	/* The labels, but those that name one pod of its controller (an
	 * index or a name): with them every pod of an indexed Job or a
	 * StatefulSet would be a shape, and a gang as many pod sets. */
	static const char *const per_pod[] = {"statefulset.kubernetes.io/pod-name",
		"batch.kubernetes.io/job-completion-index", "apps.kubernetes.io/pod-index"};
	json_t *tmeta = json_object();
	if ((v = mu__kj(pod, "metadata.labels")) && json_object_size(v)) {
		json_t *l = json_deep_copy(v);
		for (size_t i = 0; l && i < sizeof per_pod / sizeof *per_pod; i++)
			json_object_del(l, per_pod[i]);
		if (l && json_object_size(l))
			json_object_set(tmeta, "labels", l);
		json_decref(l);
	}
	json_t *doc = json_pack("{s:s,s:s,s:{s:s,s:{s:s},s:o},s:{s:{s:o,s:o}}}",
				"apiVersion", "batch/v1", "kind", "Job", "metadata",
				"name", "pod", "labels", "muster.io/queue", "q",
				"annotations", an, "spec", "template", "metadata", tmeta,
				"spec", ps);
	if (!doc)
		return NULL;
	mu__kjt_t b = {0};
	mu__kjt_sorted(&b, doc); /* json_dumps' bytes, without its cycle guards */
	json_decref(doc);
	return mu__kjt_done(&b);
}

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Loads a new shape from its document (compact JSON text); err and msg
 * say why not.  The text is read as a tree by jansson's grammar and the
 * tree by the loader (mu_load_json): libyaml's scan of it was 3.7% of a
 * scheduler's samples in bench/dispatch.sh, where every Job's pods are a
 * shape of their own (their labels name the Job; docs/dispatch.md, round
 * 12).  A refusal is read again from the text, for the text's message.
 * Work: O(length of key), twice on a refusal. */
static mu__kshape_t *shape_new(char *key, uint64_t h)
{
	mu__kshape_t *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->key = key;
	s->hash = h;
	s->refs = 1;
	mu_specs_init(&s->specs);
	mu_diag_t d = {""};
	json_t *tree = mu__json_loadb(key, strlen(key));
	s->err = tree ? mu_load_json("pod", tree, &s->specs, &d) : MU_EINVAL;
	json_decref(tree);
	if (s->err) {
		mu_specs_release(&s->specs);
		mu_specs_init(&s->specs);
		d.msg[0] = '\0';
		s->err = mu_load_yaml("pod", key, strlen(key), &s->specs, &d);
	}
	if (s->err == MU_OK && s->specs.njobs != 1)
		s->err = MU_EINVAL;
	if (s->err) {
		/* "pod:LINE:COL: spec.template.spec.x: what" -> "x: what" */
		const char *m = d.msg, *f = strstr(m, "spec.template.spec.");
		if (f)
			m = f + 19;
		else if ((f = strstr(m, ": ")))
			m = f + 2;
		s->msg = strdup(s->err == MU_EINVAL && !*d.msg ? "not a pod" : m);
	}
	return s;
}

mu__kshape_t *mu__kshape_get(mu__kshapes_t *c, const json_t *pod, bool bound)
{
	char *key = shape_doc(pod, bound);
	return key ? mu__kshape_of_doc(c, key) : NULL;
}

mu__kshape_t *mu__kshape_of_doc(mu__kshapes_t *c, char *key)
{
	uint64_t h = fnv(key);
	if (c->cap) {
		for (mu__kshape_t *s = c->tab[h & (c->cap - 1)]; s; s = s->next)
			if (s->hash == h && !strcmp(s->key, key)) {
				free(key);
				s->refs++;
				return s;
			}
	}
	if (c->n + 1 > c->cap) { /* grow to keep chains short */
		size_t ncap = c->cap ? c->cap * 2 : 256;
		mu__kshape_t **nt = calloc(ncap, sizeof *nt);
		if (!nt) {
			free(key);
			return NULL;
		}
		for (size_t i = 0; i < c->cap; i++)
			for (mu__kshape_t *s = c->tab[i], *nx; s; s = nx) {
				nx = s->next;
				s->next = nt[s->hash & (ncap - 1)];
				nt[s->hash & (ncap - 1)] = s;
			}
		free(c->tab);
		c->tab = nt;
		c->cap = ncap;
	}
	mu__kshape_t *s = shape_new(key, h);
	if (!s) {
		free(key);
		return NULL;
	}
	s->next = c->tab[h & (c->cap - 1)];
	c->tab[h & (c->cap - 1)] = s;
	c->n++;
	return s;
}

static void shape_free(mu__kshape_t *s)
{
	mu_specs_release(&s->specs);
	free(s->key);
	free(s->msg);
	free(s);
}

void mu__kshape_put(mu__kshapes_t *c, mu__kshape_t *s)
{
	if (!s || --s->refs > 0)
		return;
	mu__kshape_t **pp = &c->tab[s->hash & (c->cap - 1)];
	while (*pp && *pp != s)
		pp = &(*pp)->next;
	if (*pp)
		*pp = s->next;
	c->n--;
	shape_free(s);
}

void mu__kshapes_release(mu__kshapes_t *c)
{
	for (size_t i = 0; i < c->cap; i++)
		for (mu__kshape_t *s = c->tab[i], *nx; s; s = nx) {
			nx = s->next;
			shape_free(s);
		}
	free(c->tab);
	memset(c, 0, sizeof *c);
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Compares two arrays of strings. */
static bool strs_eq(const char **a, size_t na, const char **b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!str_eq(a[i], b[i]))
			return false;
	return true;
}

/* Node selection of two pod sets: selector, affinity, tolerations. */
static bool sel_eq(const mu_podset_spec_t *a, const mu_podset_spec_t *b)
{
	if (a->nnode_selector != b->nnode_selector || a->naffinity != b->naffinity ||
	    a->ntolerations != b->ntolerations)
		return false;
	for (size_t i = 0; i < a->nnode_selector; i++)
		if (!str_eq(a->node_selector[i].key, b->node_selector[i].key) ||
		    !str_eq(a->node_selector[i].value, b->node_selector[i].value))
			return false;
	for (size_t t = 0; t < a->naffinity; t++) {
		const mu_sel_term_t *x = &a->affinity[t], *y = &b->affinity[t];
		if (x->nreqs != y->nreqs)
			return false;
		for (size_t r = 0; r < x->nreqs; r++)
			if (!str_eq(x->reqs[r].key, y->reqs[r].key) || x->reqs[r].op != y->reqs[r].op ||
			    !strs_eq(x->reqs[r].values, x->reqs[r].nvalues, y->reqs[r].values,
				     y->reqs[r].nvalues))
				return false;
	}
	for (size_t i = 0; i < a->ntolerations; i++) {
		const mu_toleration_t *x = &a->tolerations[i], *y = &b->tolerations[i];
		if (!str_eq(x->key, y->key) || !str_eq(x->value, y->value) || x->op != y->op ||
		    x->effect != y->effect)
			return false;
	}
	return true;
}

bool mu__kpodset_equal(const mu_podset_spec_t *a, const mu_podset_spec_t *b)
{
	if (a == b)
		return true;
	/* Terms between pods: one shape each (the same document). */
	if (a->npod_terms || b->npod_terms || a->nspread || b->nspread ||
	    a->nnode_pref || b->nnode_pref || a->nlabels != b->nlabels)
		return false;
	for (size_t i = 0; i < a->nlabels; i++)
		if (!str_eq(a->labels[i].key, b->labels[i].key) ||
		    !str_eq(a->labels[i].value, b->labels[i].value))
			return false;
	if (memcmp(&a->req, &b->req, sizeof a->req) || a->next != b->next ||
	    a->align != b->align || a->want_nic != b->want_nic || a->pin_cpus != b->pin_cpus ||
	    a->gpu_memory != b->gpu_memory ||
	    !strs_eq(a->gpu_models, a->ngpu_models, b->gpu_models, b->ngpu_models))
		return false;
	for (size_t i = 0; i < a->next; i++)
		if (!str_eq(a->ext[i].name, b->ext[i].name) || a->ext[i].qty != b->ext[i].qty)
			return false;
	return sel_eq(a, b);
}

const char *mu__kpodset_place_diff(const mu_podset_spec_t *a, const mu_podset_spec_t *b)
{
	if (b->npod_terms || b->nspread)
		return "it has pod affinity or spread terms";
	if (!sel_eq(a, b))
		return "its node selector, node affinity or tolerations differ";
	if (a->req.v[MU_RES_GPU] != b->req.v[MU_RES_GPU] || a->req.v[MU_RES_GPU_MILLI] != b->req.v[MU_RES_GPU_MILLI] ||
	    a->gpu_memory != b->gpu_memory || a->align != b->align || a->want_nic != b->want_nic ||
	    a->pin_cpus != b->pin_cpus || !strs_eq(a->gpu_models, a->ngpu_models, b->gpu_models, b->ngpu_models))
		return "its GPUs (count, share, models or alignment) differ";
	if (a->next != b->next)
		return "its extended resources differ";
	for (size_t i = 0; i < a->next; i++)
		if (!str_eq(a->ext[i].name, b->ext[i].name) || a->ext[i].qty != b->ext[i].qty)
			return "its extended resources differ";
	return NULL;
}

/* --- nodes ------------------------------------------------------------------ */

/* Whether the node's Ready condition is True (no conditions: ready). */
static bool node_ready(const json_t *node)
{
	size_t i;
	json_t *c;
	json_array_foreach(mu__kj(node, "status.conditions"), i, c) {
		const char *t = mu__kjs(c, "type");
		if (t && !strcmp(t, "Ready")) {
			const char *s = mu__kjs(c, "status");
			return s && !strcmp(s, "True");
		}
	}
	return true;
}

/* Reads one allocatable entry into the spec. */
static int node_res(const char *k, const json_t *v, mu_arena_t *a, mu_node_spec_t *n,
		    mu_ext_qty_t *ext, char *msg, size_t len)
{
	const char *s = json_string_value(v);
	char num[32];
	if (json_is_integer(v)) {
		snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
		s = num;
	}
	if (!s || !strcmp(k, "ephemeral-storage") || !strncmp(k, "hugepages-", 10) ||
	    !strcmp(k, "muster.io/gpu-milli"))
		return MU_OK;
	int64_t q;
	bool cpu = !strcmp(k, "cpu");
	if (mu_quantity_parse(s, cpu ? 1000 : 1, &q)) {
		snprintf(msg, len, "status.allocatable.%s: not a quantity: \"%.40s\"", k, s);
		return MU_EPARSE;
	}
	if (cpu)
		n->alloc.v[MU_RES_CPU] = q;
	else if (!strcmp(k, "memory"))
		n->alloc.v[MU_RES_MEM] = q;
	else if (!strcmp(k, "pods"))
		n->alloc.v[MU_RES_PODS] = q;
	else if (!strcmp(k, "nvidia.com/gpu"))
		n->alloc.v[MU_RES_GPU] = q > MU_MAX_GPUS ? MU_MAX_GPUS : q;
	else if (n->next < MU_RES_MAX - MU_RES_NAMED0 && q > 0)
		ext[n->next++] = (mu_ext_qty_t){mu_arena_strdup(a, k), q};
	return MU_OK;
}

/* Taints: key and a known effect. */
static int node_taints(const json_t *node, mu_arena_t *a, mu_node_spec_t *n,
		       char *msg, size_t len)
{
	static const char *const eff[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
	const json_t *ts = mu__kj(node, "spec.taints");
	n->taints = mu_arena_alloc(a, (json_array_size(ts) + 1) * sizeof *n->taints);
	if (!n->taints)
		return MU_ENOMEM;
	size_t i;
	json_t *t;
	json_array_foreach(ts, i, t) {
		const char *k = mu__kjs(t, "key"), *e = mu__kjs(t, "effect");
		int ei = -1;
		for (int j = 0; e && j < 3; j++)
			if (!strcmp(e, eff[j]))
				ei = j;
		if (!k || ei < 0) {
			snprintf(msg, len, "spec.taints[%zu]: needs a key and an effect "
				 "(NoSchedule, PreferNoSchedule, NoExecute)", i);
			return MU_EPARSE;
		}
		n->taints[n->ntaints++] = (mu_taint_t){mu_arena_strdup(a, k),
			mu_arena_strdup(a, mu__kjs(t, "value")), (mu_taint_effect_t)ei};
	}
	return MU_OK;
}

int mu__knode_spec(const json_t *node, const mu_node_topo_spec_t *topo,
		   mu_arena_t *a, mu_node_spec_t *n, char *msg, size_t len)
{
	memset(n, 0, sizeof *n);
	n->name = mu_arena_strdup(a, mu__kjs(node, "metadata.name"));
	if (!n->name) {
		snprintf(msg, len, "metadata.name: missing");
		return MU_EPARSE;
	}
	const json_t *labels = mu__kj(node, "metadata.labels");
	n->labels = mu_arena_alloc(a, (json_object_size(labels) + 1) * sizeof *n->labels);
	mu_ext_qty_t *ext = mu_arena_alloc(a, (MU_RES_MAX - MU_RES_NAMED0) * sizeof *ext);
	if (!n->labels || !ext)
		return MU_ENOMEM;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)labels, k, v)
		if (json_is_string(v))
			n->labels[n->nlabels++] = (mu_label_t){mu_arena_strdup(a, k),
				mu_arena_strdup(a, json_string_value(v))};
	const json_t *alloc = mu__kj(node, "status.allocatable");
	if (!json_object_size(alloc))
		alloc = mu__kj(node, "status.capacity");
	n->alloc.v[MU_RES_PODS] = 110;
	n->ext = ext;
	json_object_foreach((json_t *)alloc, k, v) {
		int rc = node_res(k, v, a, n, ext, msg, len);
		if (rc)
			return rc;
	}
	int rc = node_taints(node, a, n, msg, len);
	if (rc)
		return rc;
	const char *model = mu__kmap(node, "metadata.labels", "nvidia.com/gpu.product");
	if (!model)
		model = mu__kmap(node, "metadata.labels", "muster.io/gpu-model");
	if (n->alloc.v[MU_RES_GPU] > 0 && model)
		n->gpu_model = mu_arena_strdup(a, model);
	n->unschedulable = json_is_true(mu__kj(node, "spec.unschedulable")) || !node_ready(node);
	n->topo = topo;
	return MU_OK;
}

json_t *mu__knode_slim(const json_t *node)
{
	/* Only what mu__knode_spec(), mu__knode_sig() and mig.c read.  A listed
	 * Node also carries its images, managedFields, annotations, addresses
	 * and every condition with its messages: as jansson values, tens of
	 * kilobytes a node, which the daemon kept for each node. */
	json_t *ready = json_array();
	size_t i;
	json_t *c;
	json_array_foreach(mu__kj(node, "status.conditions"), i, c) {
		const char *t = mu__kjs(c, "type");
		if (t && !strcmp(t, "Ready"))
			json_array_append_new(ready, json_pack("{s:O?,s:O?}", "type",
				json_object_get(c, "type"), "status", json_object_get(c, "status")));
	}
	json_t *slim = json_pack("{s:{s:O?,s:O?},s:{s:O?,s:O?},s:{s:O?,s:O?,s:o}}",
		"metadata", "name", mu__kj(node, "metadata.name"),
		"labels", mu__kj(node, "metadata.labels"),
		"spec", "taints", mu__kj(node, "spec.taints"),
		"unschedulable", mu__kj(node, "spec.unschedulable"),
		"status", "allocatable", mu__kj(node, "status.allocatable"),
		"capacity", mu__kj(node, "status.capacity"), "conditions", ready);
	/* The one annotation the daemon reads back: the MIG layout that
	 * --mig-layouts wrote (mig.c), so that it is not written again. */
	json_t *mig = json_object_get(mu__kj(node, "metadata.annotations"), MU__KNODE_MIG_ANN);
	if (slim && json_is_string(mig))
		json_object_set_new(json_object_get(slim, "metadata"), "annotations",
				    json_pack("{s:O}", MU__KNODE_MIG_ANN, mig));
	return slim ? slim : json_incref((json_t *)node);
}

char *mu__knode_text(const json_t *node)
{
	json_t *slim = mu__knode_slim(node);
	char *s = slim ? json_dumps(slim, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(slim);
	return s;
}

json_t *mu__knode_parse(const char *text)
{
	return text ? json_loads(text, 0, NULL) : NULL;
}

char *mu__knode_sig(const json_t *node)
{
	json_t *taints = json_array();
	size_t i;
	json_t *t;
	json_array_foreach(mu__kj(node, "spec.taints"), i, t)
		json_array_append_new(taints, json_pack("{s:O?,s:O?,s:O?}", "k", json_object_get(t, "key"),
			"v", json_object_get(t, "value"), "e", json_object_get(t, "effect")));
	json_t *sig = json_pack("{s:O?,s:o,s:b,s:b,s:O?,s:O?}",
				"labels", mu__kj(node, "metadata.labels"), "taints", taints,
				"unsched", json_is_true(mu__kj(node, "spec.unschedulable")),
				"ready", node_ready(node), "alloc", mu__kj(node, "status.allocatable"),
				"cap", mu__kj(node, "status.capacity"));
	char *s = sig ? json_dumps(sig, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(sig);
	return s;
}

/* --- through the loader ------------------------------------------------------ */

/* Loads obj as kind/apiVersion (list items come without them) into specs
 * (a fresh one, the caller's); msg gets the loader's message without its
 * "kind:LINE:COL: " prefix.  The loader reads the tree itself
 * (mu_load_json): through its compact text, libyaml's scan was 15% of a
 * scheduler's samples in bench/dispatch.sh (docs/dispatch.md, round 12);
 * a refusal is read again from the text, so that its message is the
 * text's.  Work: O(size of obj), twice on a refusal. */
static int via_loader(const json_t *obj, const char *api, const char *kind,
		      mu_specs_t *specs, char *msg, size_t len)
{
	json_t *o = json_copy((json_t *)obj);
	if (!o)
		return MU_ENOMEM;
	json_object_set_new(o, "apiVersion", json_string(api));
	json_object_set_new(o, "kind", json_string(kind));
	json_object_del(o, "status");
	mu_diag_t d = {""};
	int rc = mu_load_json(kind, o, specs, &d);
	if (rc) {
		char *text = json_dumps(o, JSON_COMPACT);
		mu_specs_release(specs);
		mu_specs_init(specs);
		d.msg[0] = '\0';
		rc = text ? mu_load_yaml(kind, text, strlen(text), specs, &d) : MU_ENOMEM;
		free(text);
	}
	json_decref(o);
	if (rc) {
		const char *m = d.msg, *p = strchr(m, ' ');
		snprintf(msg, len, "%s", p && p[-1] == ':' ? p + 1 : m);
	}
	return rc;
}

int mu__kqueue_spec(const json_t *q, mu_specs_t *specs, char *msg, size_t len)
{
	int rc = via_loader(q, "muster.io/v1alpha1", "Queue", specs, msg, len);
	if (rc == MU_OK && specs->nqueues < 1) {
		snprintf(msg, len, "not a queue");
		rc = MU_EINVAL;
	}
	return rc;
}

int mu__kpool_spec(const json_t *p, mu_specs_t *specs, char *msg, size_t len)
{
	int rc = via_loader(p, "muster.io/v1alpha1", "NodePool", specs, msg, len);
	if (rc == MU_OK && (specs->npools != 1 || specs->nnodes)) {
		snprintf(msg, len, "a NodePool on Kubernetes selects nodes with "
			 "spec.selector; spec.count (simulated nodes) is "
			 "for cluster files and muster up");
		rc = MU_EINVAL;
	}
	return rc;
}

int mu__kjob_spec(const json_t *job, mu_specs_t *specs, char *msg, size_t len)
{
	int rc = via_loader(job, "batch/v1", "Job", specs, msg, len);
	if (rc == MU_OK && specs->njobs < 1) {
		snprintf(msg, len, "not a job");
		rc = MU_EINVAL;
	}
	return rc;
}

int mu__knrt_spec(const json_t *nrt, mu_arena_t *a, mu_node_topo_spec_t *out,
		  char *msg, size_t len)
{
	mu_specs_t s;
	mu_specs_init(&s);
	int rc = via_loader(nrt, "topology.node.k8s.io/v1alpha2", "NodeResourceTopology",
			    &s, msg, len);
	if (rc == MU_OK) {
		const mu_node_topo_spec_t *t = NULL;
		for (size_t i = 0; i < s.nrefs; i++)
			if (s.refs[i].kind == MU_REF_NODE_TOPO)
				t = s.refs[i].topo;
		if (!t) {
			snprintf(msg, len, "no NUMA zones");
			rc = MU_EINVAL;
		} else {
			*out = *t;
			for (int i = 0; i < out->nnics; i++)
				out->nic_names[i] = mu_arena_strdup(a, t->nic_names[i]);
		}
	}
	mu_specs_release(&s);
	return rc;
}

struct mu__knrt {
	int32_t nnuma, nnics;
	int8_t gpu_numa[MU_MAX_GPUS];
	int8_t gpu_group[MU_MAX_GPUS];
	int8_t nic_numa[MU_MAX_NICS];
	mu_numa_spec_t numa[]; /* nnuma of them, then the NIC names */
};

/* Where k's NIC names start: after its NUMA nodes. */
static char *knrt_names(const mu__knrt_t *k)
{
	return (char *)(uintptr_t)(const void *)(k->numa + k->nnuma);
}

mu__knrt_t *mu__knrt_pack(const mu_node_topo_spec_t *t)
{
	int32_t nnuma = t->nnuma < 0 ? 0 : t->nnuma > MU_MAX_NUMA ? MU_MAX_NUMA : t->nnuma;
	int32_t nnics = t->nnics < 0 ? 0 : t->nnics > MU_MAX_NICS ? MU_MAX_NICS : t->nnics;
	size_t names = 0;
	for (int32_t i = 0; i < nnics; i++)
		names += strlen(t->nic_names[i] ? t->nic_names[i] : "") + 1;
	mu__knrt_t *k = malloc(sizeof *k + (size_t)nnuma * sizeof k->numa[0] + names);
	if (!k)
		return NULL;
	k->nnuma = nnuma;
	k->nnics = nnics;
	memcpy(k->gpu_numa, t->gpu_numa, sizeof k->gpu_numa);
	memcpy(k->gpu_group, t->gpu_group, sizeof k->gpu_group);
	memcpy(k->nic_numa, t->nic_numa, sizeof k->nic_numa);
	if (nnuma)
		memcpy(k->numa, t->numa, (size_t)nnuma * sizeof k->numa[0]);
	char *at = knrt_names(k);
	for (int32_t i = 0; i < nnics; i++) {
		const char *nm = t->nic_names[i] ? t->nic_names[i] : "";
		size_t n = strlen(nm) + 1;
		memcpy(at, nm, n);
		at += n;
	}
	return k;
}

void mu__knrt_unpack(const mu__knrt_t *k, mu_node_topo_spec_t *out)
{
	memset(out, 0, sizeof *out);
	out->nnuma = k->nnuma;
	out->nnics = k->nnics;
	memcpy(out->gpu_numa, k->gpu_numa, sizeof k->gpu_numa);
	memcpy(out->gpu_group, k->gpu_group, sizeof k->gpu_group);
	memcpy(out->nic_numa, k->nic_numa, sizeof k->nic_numa);
	if (k->nnuma)
		memcpy(out->numa, k->numa, (size_t)k->nnuma * sizeof k->numa[0]);
	const char *at = knrt_names(k);
	for (int32_t i = 0; i < k->nnics; i++) {
		out->nic_names[i] = at;
		at += strlen(at) + 1;
	}
}

size_t mu__knrt_bytes(const mu__knrt_t *k)
{
	size_t n = sizeof *k + (size_t)k->nnuma * sizeof k->numa[0];
	const char *at = knrt_names(k);
	for (int32_t i = 0; i < k->nnics; i++) {
		size_t l = strlen(at) + 1;
		n += l;
		at += l;
	}
	return n;
}

int mu__ktopo_spec(const json_t *t, mu_arena_t *a, mu_topology_spec_t *out,
		   char *msg, size_t len)
{
	memset(out, 0, sizeof *out);
	const json_t *lv = mu__kj(t, "spec.levels");
	out->name = mu_arena_strdup(a, mu__kjs(t, "metadata.name"));
	size_t n = json_array_size(lv);
	if (!out->name || n < 1 || n > MU_MAX_LEVELS) {
		snprintf(msg, len, "spec.levels: expected 1 to %d levels", MU_MAX_LEVELS);
		return MU_EPARSE;
	}
	out->levels = mu_arena_alloc(a, n * sizeof *out->levels);
	if (!out->levels)
		return MU_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *l = json_array_get(lv, i);
		const char *k = json_is_string(l) ? json_string_value(l) : mu__kjs(l, "nodeLabel");
		if (!k || !*k) {
			snprintf(msg, len, "spec.levels[%zu].nodeLabel: missing", i);
			return MU_EPARSE;
		}
		out->levels[out->nlevels++] = mu_arena_strdup(a, k);
	}
	return MU_OK;
}

/* --- device annotations ---------------------------------------------------- */

json_t *mu__kdev_annotations(const mu_decision_t *d)
{
	json_t *a = json_object();
	char b[MU_MAX_CPUS * 4];
	if (d->gpus) {
		size_t at = 0;
		b[0] = '\0';
		for (int g = 0; g < MU_MAX_GPUS; g++)
			if (d->gpus & ((uint64_t)1 << g))
				at += (size_t)snprintf(b + at, sizeof b - at, "%s%d", at ? "," : "", g);
		json_object_set_new(a, "muster.io/gpus", json_string(b));
		if (d->gpu_milli > 0) {
			snprintf(b, sizeof b, "%d", d->gpu_milli);
			json_object_set_new(a, "muster.io/gpu-milli", json_string(b));
		}
	}
	if (d->numa >= 0) {
		snprintf(b, sizeof b, "%d", d->numa);
		json_object_set_new(a, "muster.io/numa", json_string(b));
	}
	if (d->nic >= 0) {
		snprintf(b, sizeof b, "%d", d->nic);
		json_object_set_new(a, "muster.io/nic", json_string(b));
	}
	if (mu_cpuset_count(&d->cpus) > 0) {
		mu_cpuset_format(&d->cpus, b, sizeof b);
		json_object_set_new(a, "muster.io/cpus", json_string(b));
	}
	return a;
}

void mu__kdev_parse(const json_t *pod, mu_decision_t *d)
{
	const json_t *an = mu__kj(pod, "metadata.annotations");
	const char *s;
	d->gpus = 0;
	d->gpu_milli = 0;
	d->numa = d->nic = -1;
	memset(&d->cpus, 0, sizeof d->cpus);
	if ((s = json_string_value(json_object_get(an, "muster.io/gpus")))) {
		for (const char *p = s; *p;) {
			char *end;
			long g = strtol(p, &end, 10);
			if (end == p || g < 0 || g >= MU_MAX_GPUS)
				break;
			d->gpus |= (uint64_t)1 << g;
			p = *end == ',' ? end + 1 : end;
			if (*end && *end != ',')
				break;
		}
	}
	if ((s = json_string_value(json_object_get(an, "muster.io/gpu-milli"))))
		d->gpu_milli = (int32_t)strtol(s, NULL, 10);
	if ((s = json_string_value(json_object_get(an, "muster.io/numa"))))
		d->numa = (int8_t)strtol(s, NULL, 10);
	if ((s = json_string_value(json_object_get(an, "muster.io/nic"))))
		d->nic = (int8_t)strtol(s, NULL, 10);
	if ((s = json_string_value(json_object_get(an, "muster.io/cpus"))) &&
	    mu_cpuset_parse(s, &d->cpus))
		memset(&d->cpus, 0, sizeof d->cpus);
}

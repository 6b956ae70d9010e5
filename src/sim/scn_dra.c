/*
 * scn_dra.c - DRA resource claims in scenario runs (docs/scenarios.md,
 * "DRA"): pods whose template names ResourceClaims get devices from the
 * file's ResourceSlices, allocated by the same allocator as muster
 * scheduler's (load/dra.c, Kubernetes' structured allocator).
 *
 * The engine knows nothing of devices, so the runner steers it with node
 * labels, as the daemon (kube/dra.c) steers it with a node selector.  Every
 * pod set whose pods have claims selects a label of its own
 * (muster.io/dra.JOB.SET); before each cycle the runner puts that label on
 * every node where the claims of the set's next waiting pod can be
 * allocated now, and takes it off the others.  After the cycle, for each
 * bind, it allocates the pod's claims on the chosen node and reserves them
 * for the pod (status.allocation and reservedFor, as kube-scheduler writes
 * them); when another pod of the same cycle took the devices first, the
 * bind is taken back and the pod waits for the next cycle.  A pod that is
 * no longer bound (finished, evicted, its node removed) leaves its claims'
 * reservedFor, and a claim reserved for no one is deallocated, as the
 * resource claim controller does.  Claims from a ResourceClaimTemplate are
 * made when the job arrives, named JOB-POD-CLAIM (POD counts the job's
 * pods from 0 across its pod sets), with the controller's
 * resource.kubernetes.io/pod-claim-name annotation.  A bound pod whose
 * device gets a NoExecute taint it does not tolerate (any more) is taken
 * back before the next cycle (taint_evict), as the device taint eviction
 * controller deletes it; the run's clock counts from the Unix epoch for
 * the taints' timeAdded, and a taint without one counts from time 0.
 *
 * So that evicting a pod frees its devices in the engine's eyes, each
 * device class those template claims ask for (when all its devices are
 * node-local, and while the engine has extended-resource slots) is an
 * extended resource muster.io/dra-CLASS: a node has its devices of the
 * class, a pod set asks for what its pods' template claims take.  A set is
 * then also labelled onto the nodes where its claims would fit if the
 * claims made for running pods were deallocated (relaxed_claims), and the
 * engine decides from the counts and priorities whether to preempt there.
 * The scenario runner and the simulator (sim.c) both call this file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "muster/dra.h"
#include "muster/error.h"
#include "muster/jpath.h"
#include "scn_dra.h"

#define POD_NAME 200
#define MAX_RES 8               /* device classes counted as extended resources */
#define RES_PREFIX "muster.io/dra-"
/* the annotation the resource claim controller puts on a claim it makes */
#define POD_CLAIM "resource.kubernetes.io/pod-claim-name"

typedef struct dpod {
	json_t *names;          /* the names of the claims it uses */
	mu_id_t at;             /* the node they are reserved on, or -1 */
	char name[POD_NAME];    /* JOB-N, its name in reservedFor */
} dpod_t;

/* A pod set whose pods have claims. */
typedef struct dset {
	size_t job;
	int32_t ps;
	json_t *entries;        /* its pods' spec.resourceClaims */
	dpod_t *pods;
	int32_t npods;
	char key[64];           /* the node label it selects */
	int64_t want[MAX_RES];  /* devices per counted class its pods' own claims take */
	bool counted;           /* any of want */
	mu_ext_qty_t *ext;      /* the pod set's extended resources, then want's (owned) */
} dset_t;

typedef struct dnode {
	mu_node_spec_t spec;    /* a copy, labels its own */
	mu_ext_qty_t *ext;      /* the node's extended resources, then its devices per counted class (owned) */
	mu_label_t *labels;     /* the node's labels, then the DRA ones */
	size_t nbase, nlab;
	uint64_t sig;           /* a digest of the DRA labels last given */
} dnode_t;

struct mu__sdra {
	const mu_specs_t *s;
	json_t *slices, *classes, *claims, *templates;
	json_t *rules;          /* DeviceTaintRules */
	json_t *knodes;         /* the nodes as Node objects (name, labels), for node selectors */
	dset_t *sets;
	size_t nsets;
	mu_job_spec_t *jobs;    /* per spec job: the spec to submit */
	char **msg;             /* per spec job: why its claims fit nowhere */
	dnode_t *nodes;
	/* the device classes counted: RES_PREFIX CLASS, an extended resource
	 * nodes have (their devices of the class) and pod sets ask for */
	char res[MAX_RES][300];
	const char *rcls[MAX_RES];
	int nres, room;         /* counted; named slots left in the engine */
};

static const char *ns_of(const json_t *o)
{
	const char *n = mu__jstr(o, "metadata.namespace");
	return n ? n : "default";
}

static json_t *find(const json_t *list, const char *ns, const char *name)
{
	size_t i;
	json_t *o;
	json_array_foreach(list, i, o)
		if (!strcmp(ns_of(o), ns) && !strcmp(mu__jstr(o, "metadata.name"), name))
			return o;
	return NULL;
}

static const char *job_ns(const mu_job_spec_t *j)
{
	return j->namespace ? j->namespace : "default";
}

/* Sorts the specs' DRA objects into d's lists; MU_EINVAL for a name twice. */
static int read_objects(mu__sdra_t *d, char *msg, size_t len)
{
	d->slices = json_array();
	d->classes = json_array();
	d->claims = json_array();
	d->templates = json_array();
	d->rules = json_array();
	for (size_t i = 0; i < d->s->ndra; i++) {
		json_t *o = json_loads(d->s->dra[i], 0, NULL);
		const char *k = mu__jstr(o, "kind");
		json_t *to = !k ? NULL : !strcmp(k, "ResourceSlice") ? d->slices :
			     !strcmp(k, "DeviceClass") ? d->classes :
			     !strcmp(k, "DeviceTaintRule") ? d->rules :
			     !strcmp(k, "ResourceClaim") ? d->claims : d->templates;
		if (!o || !to) {
			json_decref(o);
			return MU_ENOMEM;
		}
		const char *name = mu__jstr(o, "metadata.name");
		if (find(to, ns_of(o), name)) {
			snprintf(msg, len, "%s %s is defined twice", k, name);
			json_decref(o);
			return MU_EINVAL;
		}
		json_array_append_new(to, o);
	}
	return MU_OK;
}

/* How many named extended resources the specs leave to the engine (it
 * has MU_RES_MAX - MU_RES_NAMED0 slots), at most MAX_RES. */
static int res_room(const mu_specs_t *s)
{
	json_t *seen = json_object();
	for (size_t i = 0; seen && i < s->nnodes; i++)
		for (size_t k = 0; k < s->nodes[i].next; k++)
			json_object_set_new(seen, s->nodes[i].ext[k].name, json_true());
	for (size_t j = 0; seen && j < s->njobs; j++)
		for (size_t p = 0; p < s->jobs[j].npodsets; p++)
			for (size_t k = 0; k < s->jobs[j].podsets[p].next; k++)
				json_object_set_new(seen, s->jobs[j].podsets[p].ext[k].name, json_true());
	int room = MU_RES_MAX - MU_RES_NAMED0 - (int)json_object_size(seen);
	json_decref(seen);
	return room < 0 ? 0 : room > MAX_RES ? MAX_RES : room;
}

/* The counted resource of class cls (added while there is room), or -1.
 * A class with devices that serve several nodes (allNodes, a
 * nodeSelector) is not counted: one such device would count on each of
 * its nodes, and the engine would think a node has what another took. */
static int res_of(mu__sdra_t *d, const char *cls)
{
	for (int i = 0; i < d->nres; i++)
		if (!strcmp(d->rcls[i], cls))
			return i;
	mu_dra_view_t v = {d->slices, d->classes, d->claims, NULL, d->rules};
	char why[300];
	if (d->nres >= d->room || mu_dra_class_devices(&v, cls, NULL, why, sizeof why) != 0)
		return -1;
	snprintf(d->res[d->nres], sizeof d->res[d->nres], RES_PREFIX "%s", cls);
	d->rcls[d->nres] = cls;
	return d->nres++;
}

/* What the claims a pod of set s makes from templates take, per class:
 * each request's count (ExactCount; the first subrequest of a
 * firstAvailable list), none for All (unknown before allocation) or
 * adminAccess (takes no device).  A named ResourceClaim, which pods may
 * share, is not counted: evicting one of its pods need not free it. */
static void set_wants(mu__sdra_t *d, dset_t *s, const char *ns)
{
	size_t e, r;
	json_t *en, *rq;
	json_array_foreach(s->entries, e, en) {
		const char *tn = mu__jstr(en, "resourceClaimTemplateName");
		const json_t *t = tn ? find(d->templates, ns, tn) : NULL;
		json_array_foreach(mu__jget(t, "spec.spec.devices.requests"), r, rq) {
			const json_t *q = json_array_size(json_object_get(rq, "firstAvailable")) ?
					  json_array_get(json_object_get(rq, "firstAvailable"), 0) : rq;
			const char *cls = mu__jstr(q, "deviceClassName"), *mode = mu__jstr(q, "allocationMode");
			const json_t *c = json_object_get(q, "count");
			int k = cls ? res_of(d, cls) : -1;
			if (k < 0 || json_is_true(json_object_get(q, "adminAccess")) || (mode && !strcmp(mode, "All")))
				continue;
			s->want[k] += json_is_integer(c) && json_integer_value(c) > 0 ? json_integer_value(c) : 1;
			s->counted = true;
		}
	}
}

/* The spec copy of job k with the label of each claim-bearing set. */
static int job_copy(mu__sdra_t *d, size_t k)
{
	const mu_job_spec_t *j = &d->s->jobs[k];
	mu_job_spec_t *c = &d->jobs[k];
	*c = *j;
	c->podsets = calloc(j->npodsets, sizeof *c->podsets);
	if (!c->podsets)
		return MU_ENOMEM;
	memcpy(c->podsets, j->podsets, j->npodsets * sizeof *c->podsets);
	for (size_t i = 0; i < d->nsets; i++) {
		if (d->sets[i].job != k)
			continue;
		mu_podset_spec_t *ps = &c->podsets[d->sets[i].ps];
		mu_label_t *sel = calloc(ps->nnode_selector + 1, sizeof *sel);
		if (!sel)
			return MU_ENOMEM;
		if (ps->nnode_selector)
			memcpy(sel, ps->node_selector, ps->nnode_selector * sizeof *sel);
		sel[ps->nnode_selector++] = (mu_label_t){d->sets[i].key, "true"};
		ps->node_selector = sel;
		if (!d->sets[i].counted)
			continue;
		mu_ext_qty_t *ext = calloc(ps->next + MAX_RES + 1, sizeof *ext);
		if (!ext)
			return MU_ENOMEM;
		if (ps->next)
			memcpy(ext, ps->ext, ps->next * sizeof *ext);
		for (int r = 0; r < d->nres; r++)
			if (d->sets[i].want[r])
				ext[ps->next++] = (mu_ext_qty_t){d->res[r], d->sets[i].want[r]};
		ps->ext = d->sets[i].ext = ext;
	}
	return MU_OK;
}

/* The claim-bearing pod sets, their pods and the jobs' copies. */
static int read_sets(mu__sdra_t *d)
{
	size_t n = 0;
	for (size_t k = 0; k < d->s->njobs; k++)
		for (size_t p = 0; p < d->s->jobs[k].npodsets; p++)
			n += d->s->jobs[k].podsets[p].dra_claims != NULL;
	d->sets = calloc(n + 1, sizeof *d->sets);
	d->jobs = calloc(d->s->njobs + 1, sizeof *d->jobs);
	d->msg = calloc(d->s->njobs + 1, sizeof *d->msg);
	if (!d->sets || !d->jobs || !d->msg)
		return MU_ENOMEM;
	for (size_t k = 0; k < d->s->njobs; k++) {
		const mu_job_spec_t *j = &d->s->jobs[k];
		int32_t pod0 = 0;
		bool any = false;
		for (size_t p = 0; p < j->npodsets; pod0 += j->podsets[p++].replicas) {
			if (!j->podsets[p].dra_claims)
				continue;
			dset_t *s = &d->sets[d->nsets++];
			any = true;
			*s = (dset_t){.job = k, .ps = (int32_t)p, .npods = j->podsets[p].replicas,
				      .entries = json_loads(j->podsets[p].dra_claims, 0, NULL)};
			snprintf(s->key, sizeof s->key, "muster.io/dra.%zu.%zu", k, p);
			s->pods = calloc((size_t)s->npods, sizeof *s->pods);
			if (!s->entries || !s->pods)
				return MU_ENOMEM;
			set_wants(d, s, job_ns(j));
			for (int32_t i = 0; i < s->npods; i++) {
				s->pods[i].at = -1;
				snprintf(s->pods[i].name, POD_NAME, "%s-%d", j->name, (int)(pod0 + i));
			}
		}
		if (!any)
			d->jobs[k] = *j;
		else if (job_copy(d, k))
			return MU_ENOMEM;
	}
	return MU_OK;
}

/* Node i's extended resources with its devices of each counted class. */
static int node_ext(mu__sdra_t *d, size_t i, char *msg, size_t len)
{
	dnode_t *n = &d->nodes[i];
	if (!d->nres)
		return MU_OK;
	n->ext = calloc(n->spec.next + MAX_RES + 1, sizeof *n->ext);
	if (!n->ext)
		return MU_ENOMEM;
	if (n->spec.next)
		memcpy(n->ext, n->spec.ext, n->spec.next * sizeof *n->ext);
	mu_dra_view_t v = {d->slices, d->classes, d->claims, d->knodes, d->rules};
	for (int r = 0; r < d->nres; r++) {
		char why[400];
		long c = mu_dra_class_devices(&v, d->rcls[r], n->spec.name, why, sizeof why);
		if (c < 0) {
			snprintf(msg, len, "DeviceClass %s: %s", d->rcls[r], why);
			return MU_EINVAL;
		}
		n->ext[n->spec.next++] = (mu_ext_qty_t){d->res[r], c};
	}
	n->spec.ext = n->ext;
	return MU_OK;
}

/* Copies of the nodes with room for every set's label, and the nodes as
 * Node objects (their own labels) for the allocator's node selectors. */
static int read_nodes(mu__sdra_t *d)
{
	d->nodes = calloc(d->s->nnodes + 1, sizeof *d->nodes);
	d->knodes = json_array();
	if (!d->nodes || !d->knodes)
		return MU_ENOMEM;
	for (size_t i = 0; i < d->s->nnodes; i++) {
		dnode_t *n = &d->nodes[i];
		json_t *lab = json_object();
		for (size_t k = 0; lab && k < d->s->nodes[i].nlabels; k++)
			json_object_set_new(lab, d->s->nodes[i].labels[k].key,
					    json_string(d->s->nodes[i].labels[k].value));
		if (!lab || json_array_append_new(d->knodes, json_pack("{s:{s:s,s:o}}", "metadata", "name",
								       d->s->nodes[i].name, "labels", lab)))
			return MU_ENOMEM;
		n->spec = d->s->nodes[i];
		n->nbase = n->nlab = n->spec.nlabels;
		n->labels = calloc(n->nbase + d->nsets + 1, sizeof *n->labels);
		if (!n->labels)
			return MU_ENOMEM;
		if (n->nbase)
			memcpy(n->labels, n->spec.labels, n->nbase * sizeof *n->labels);
	}
	return MU_OK;
}

int mu__sdra_new(const mu_specs_t *s, mu__sdra_t **out, char *msg, size_t len)
{
	bool any = s->ndra > 0;
	for (size_t k = 0; k < s->njobs && !any; k++)
		for (size_t p = 0; p < s->jobs[k].npodsets; p++)
			any |= s->jobs[k].podsets[p].dra_claims != NULL;
	*out = NULL;
	if (!any)
		return MU_OK;
	mu__sdra_t *d = calloc(1, sizeof *d);
	if (!d)
		return MU_ENOMEM;
	d->s = s;
	int rc = read_objects(d, msg, len);
	d->room = res_room(s);
	if (!rc)
		rc = read_sets(d);
	if (!rc)
		rc = read_nodes(d);
	for (size_t i = 0; !rc && i < s->nnodes; i++)
		rc = node_ext(d, i, msg, len);
	if (rc == MU_ENOMEM)
		snprintf(msg, len, "out of memory");
	if (rc) {
		mu__sdra_free(d);
		return rc;
	}
	*out = d;
	return MU_OK;
}

void mu__sdra_free(mu__sdra_t *d)
{
	if (!d)
		return;
	json_decref(d->slices);
	json_decref(d->classes);
	json_decref(d->claims);
	json_decref(d->templates);
	json_decref(d->rules);
	json_decref(d->knodes);
	for (size_t i = 0; i < d->nsets; i++) {
		for (int32_t p = 0; d->sets[i].pods && p < d->sets[i].npods; p++)
			json_decref(d->sets[i].pods[p].names);
		free(d->sets[i].pods);
		free(d->sets[i].ext);
		json_decref(d->sets[i].entries);
	}
	for (size_t k = 0; d->jobs && k < d->s->njobs; k++) {
		if (d->jobs[k].podsets == d->s->jobs[k].podsets)
			continue;
		for (size_t i = 0; i < d->nsets; i++)
			if (d->sets[i].job == k)
				free((void *)d->jobs[k].podsets[d->sets[i].ps].node_selector);
		free(d->jobs[k].podsets);
	}
	for (size_t k = 0; d->msg && k < d->s->njobs; k++)
		free(d->msg[k]);
	for (size_t i = 0; d->nodes && i < d->s->nnodes; i++) {
		free(d->nodes[i].labels);
		free(d->nodes[i].ext);
	}
	free(d->sets);
	free(d->jobs);
	free(d->msg);
	free(d->nodes);
	free(d);
}

const mu_job_spec_t *mu__sdra_job(mu__sdra_t *d, size_t k)
{
	return &d->jobs[k];
}

/* Makes the claim of template tn for pod p of set s, named name. */
static int claim_make(mu__sdra_t *d, const dset_t *s, const char *tn, const char *name,
		      const char *pc, char *msg, size_t len)
{
	const char *ns = job_ns(&d->s->jobs[s->job]);
	const json_t *t = find(d->templates, ns, tn);
	if (!t) {
		snprintf(msg, len, "job \"%s\": no ResourceClaimTemplate %s in namespace %s",
			 d->s->jobs[s->job].name, tn, ns);
		return MU_ENOENT;
	}
	if (find(d->claims, ns, name)) {
		snprintf(msg, len, "job \"%s\": the claim %s it makes from template %s exists already",
			 d->s->jobs[s->job].name, name, tn);
		return MU_EINVAL;
	}
	json_t *c = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:O}", "apiVersion", "resource.k8s.io/v1beta1",
			      "kind", "ResourceClaim", "metadata", "name", name, "namespace", ns,
			      "annotations", POD_CLAIM, pc ? pc : "", "spec", mu__jget(t, "spec.spec"));
	return c && !json_array_append_new(d->claims, c) ? MU_OK : MU_ENOMEM;
}

int mu__sdra_submitted(mu__sdra_t *d, size_t k, char *msg, size_t len)
{
	for (size_t i = 0; i < d->nsets; i++) {
		dset_t *s = &d->sets[i];
		if (s->job != k)
			continue;
		const char *ns = job_ns(&d->s->jobs[k]);
		for (int32_t p = 0; p < s->npods; p++) {
			json_t *names = json_array();
			size_t e;
			json_t *en;
			s->pods[p].names = names;
			if (!names)
				return MU_ENOMEM;
			json_array_foreach(s->entries, e, en) {
				const char *cn = mu__jstr(en, "resourceClaimName");
				const char *tn = mu__jstr(en, "resourceClaimTemplateName");
				char made[400];
				int rc = MU_OK;
				if (cn && !find(d->claims, ns, cn)) {
					snprintf(msg, len, "job \"%s\": no ResourceClaim %s in namespace %s",
						 d->s->jobs[k].name, cn, ns);
					return MU_ENOENT;
				}
				if (!cn) {
					snprintf(made, sizeof made, "%s-%s", s->pods[p].name, mu__jstr(en, "name"));
					rc = claim_make(d, s, tn, made, mu__jstr(en, "name"), msg, len);
				}
				if (rc || json_array_append_new(names, json_string(cn ? cn : made)))
					return rc ? rc : MU_ENOMEM;
			}
		}
	}
	return MU_OK;
}

/* The claims of pod p of set s into cl (at most MU_DRA_MAX_CLAIMS). */
static size_t pod_claims(const mu__sdra_t *d, const dset_t *s, int32_t p, const json_t **cl)
{
	size_t n = 0, i;
	json_t *nm;
	const char *ns = job_ns(&d->s->jobs[s->job]);
	json_array_foreach(s->pods[p].names, i, nm) {
		const json_t *c = find(d->claims, ns, json_string_value(nm));
		if (c && n < MU_DRA_MAX_CLAIMS)
			cl[n++] = c;
	}
	return n;
}

/* Allocates pod p's claims on node: 0 with *plan, 1 (not there), -1
 * (refused); why in msg. */
static int pod_on(const mu__sdra_t *d, const dset_t *s, int32_t p, const char *node,
		  const json_t *claims, json_t **plan, char *msg, size_t len)
{
	const json_t *cl[MU_DRA_MAX_CLAIMS];
	size_t n = pod_claims(d, s, p, cl);
	mu_dra_view_t v = {d->slices, d->classes, claims, d->knodes, d->rules};
	int rc = mu_dra_allocate(&v, cl, n, node, plan, msg, len);
	return rc == MU_OK ? 0 : rc == MU_ENOENT ? 1 : -1;
}

/* Pod p of set s leaves its claims' reservedFor; a claim left reserved
 * for no one is deallocated. */
static void pod_release(mu__sdra_t *d, dset_t *s, int32_t p)
{
	const json_t *cl[MU_DRA_MAX_CLAIMS];
	size_t n = pod_claims(d, s, p, cl);
	for (size_t i = 0; i < n; i++) {
		json_t *st = json_object_get(cl[i], "status"), *rf = json_object_get(st, "reservedFor");
		for (size_t k = json_array_size(rf); k-- > 0;) {
			const char *who = mu__jstr(json_array_get(rf, k), "name");
			if (who && !strcmp(who, s->pods[p].name))
				json_array_remove(rf, k);
		}
		if (!json_array_size(rf))
			json_object_clear(st);
	}
	s->pods[p].at = -1;
}

/* Reserves pod p's claims from plan on node id. */
static void pod_reserve(mu__sdra_t *d, dset_t *s, int32_t p, const json_t *plan, mu_id_t id)
{
	const json_t *cl[MU_DRA_MAX_CLAIMS];
	size_t n = pod_claims(d, s, p, cl);
	for (size_t i = 0; i < n; i++) {
		json_t *c = (json_t *)cl[i], *st = json_object_get(c, "status");
		if (!json_is_object(st)) {
			json_object_set_new(c, "status", json_object());
			st = json_object_get(c, "status");
		}
		if (!json_object_get(st, "allocation"))
			json_object_set(st, "allocation", mu__jget(json_array_get(plan, i), "allocation"));
		if (!json_is_array(json_object_get(st, "reservedFor")))
			json_object_set_new(st, "reservedFor", json_array());
		json_array_append_new(json_object_get(st, "reservedFor"),
				      json_pack("{s:s,s:s,s:s}", "resource", "pods", "name", s->pods[p].name,
						"uid", s->pods[p].name));
	}
	s->pods[p].at = id;
}

/* Frees the claims of pods no longer bound where they were reserved. */
static void release_gone(mu__sdra_t *d, const mu_engine_t *e, const mu_id_t *ids, const bool *finished)
{
	for (size_t i = 0; i < d->nsets; i++) {
		dset_t *s = &d->sets[i];
		for (int32_t p = 0; p < s->npods; p++) {
			if (s->pods[p].at < 0)
				continue;
			mu_id_t at = finished[s->job] || ids[s->job] < 0 ? -1 :
				     mu_engine_pod_node(e, ids[s->job], s->ps, p);
			if (at != s->pods[p].at)
				pod_release(d, s, p);
		}
	}
}

/* The first pod of set s that waits for a node, or -1. */
static int32_t next_waiting(const mu__sdra_t *d, const dset_t *s, const mu_engine_t *e,
			    const mu_id_t *ids, const bool *finished)
{
	if (ids[s->job] < 0 || finished[s->job])
		return -1;
	for (int32_t p = 0; p < s->npods; p++)
		if (mu_engine_pod_node(e, ids[s->job], s->ps, p) < 0)
			return p;
	(void)d;
	return -1;
}

/* The claims without those made for pods from templates and reserved
 * now: what the allocator sees if those pods were evicted (the claims go
 * with their pods' eviction).  Borrowed references in a new array. */
static json_t *relaxed_claims(const mu__sdra_t *d)
{
	json_t *out = json_array(), *c;
	size_t i;
	json_array_foreach(out ? d->claims : NULL, i, c)
		if (!json_object_get(mu__jget(c, "metadata.annotations"), POD_CLAIM) ||
		    !json_array_size(mu__jget(c, "status.reservedFor")))
			json_array_append(out, c);
	return out;
}

/* Sets node i's DRA labels from fits (per set) and upserts it when they
 * changed. */
static int node_label(mu__sdra_t *d, mu_engine_t *e, size_t i, const bool *fits)
{
	dnode_t *n = &d->nodes[i];
	uint64_t sig = 1469598103934665603ULL;
	n->nlab = n->nbase;
	for (size_t k = 0; k < d->nsets; k++) {
		sig = (sig ^ (uint64_t)fits[k]) * 1099511628211ULL;
		if (fits[k])
			n->labels[n->nlab++] = (mu_label_t){d->sets[k].key, "true"};
	}
	if (sig == n->sig)
		return MU_OK;
	n->sig = sig;
	n->spec.labels = n->labels;
	n->spec.nlabels = n->nlab;
	return mu_engine_node_upsert(e, &n->spec, NULL);
}

/* Evicts the bound pods whose claims have a device with a NoExecute taint
 * they no longer tolerate at now (mu_dra_eviction_ms, the taint's
 * timeAdded, or time 0 without one, plus the smallest matching
 * tolerationSeconds), as kube-controller-manager's device taint eviction
 * controller deletes them: the pod is taken back (mu_engine_pod_unbind)
 * and waits again, as a controller's replacement would.  Returns how many
 * went, or a negative error.  O(bound pods x claims x devices). */
static int taint_evict(mu__sdra_t *d, mu_engine_t *e, const mu_id_t *ids, const bool *finished,
		       mu_time_t now)
{
	int n = 0;
	mu_dra_view_t v = {d->slices, d->classes, d->claims, d->knodes, d->rules};
	for (size_t i = 0; i < d->nsets; i++) {
		dset_t *s = &d->sets[i];
		if (ids[s->job] < 0 || finished[s->job])
			continue;
		for (int32_t p = 0; p < s->npods; p++) {
			if (s->pods[p].at < 0 || mu_engine_pod_node(e, ids[s->job], s->ps, p) != s->pods[p].at)
				continue;
			const json_t *cl[MU_DRA_MAX_CLAIMS];
			size_t nc = pod_claims(d, s, p, cl);
			bool due = false;
			for (size_t c = 0; c < nc && !due; c++) {
				int64_t when = mu_dra_eviction_ms(&v, cl[c], 0, NULL, 0);
				due = when >= 0 && when <= now;
			}
			if (!due)
				continue;
			int rc = mu_engine_pod_unbind(e, ids[s->job], s->ps, p, now);
			if (rc)
				return rc;
			pod_release(d, s, p);
			n++;
		}
	}
	return n;
}

int mu__sdra_prepare(mu__sdra_t *d, mu_engine_t *e, const mu_id_t *ids, const bool *finished,
		     mu_time_t now)
{
	int ev = taint_evict(d, e, ids, finished, now);
	if (ev < 0)
		return ev;
	release_gone(d, e, ids, finished);
	int32_t *next = calloc(d->nsets + 1, sizeof *next);
	bool *fits = calloc(d->nsets + 1, sizeof *fits), *any = calloc(d->nsets + 1, sizeof *any);
	json_t *relaxed = d->nres ? relaxed_claims(d) : NULL;
	int rc = next && fits && any && (relaxed || !d->nres) ? MU_OK : MU_ENOMEM;
	for (size_t k = 0; !rc && k < d->nsets; k++)
		next[k] = next_waiting(d, &d->sets[k], e, ids, finished);
	char why[600], first[700];
	for (size_t k = 0; !rc && k < d->s->njobs; k++) {
		free(d->msg[k]);
		d->msg[k] = NULL;
	}
	for (size_t i = 0; !rc && i < d->s->nnodes; i++) {
		const char *name = d->s->nodes[i].name;
		if (mu_engine_node_find(e, name) < 0)
			continue; /* removed */
		for (size_t k = 0; k < d->nsets; k++) {
			json_t *plan = NULL;
			fits[k] = next[k] >= 0 && !pod_on(d, &d->sets[k], next[k], name, d->claims, &plan, why,
							   sizeof why);
			json_decref(plan);
			plan = NULL;
			char w2[600];
			/* where evicting pods would free the devices: the engine
			 * decides, from the counted classes, whether to */
			if (next[k] >= 0 && !fits[k] && d->sets[k].counted && relaxed)
				fits[k] = !pod_on(d, &d->sets[k], next[k], name, relaxed, &plan, w2, sizeof w2);
			json_decref(plan);
			any[k] |= fits[k];
			size_t j = d->sets[k].job;
			if (next[k] >= 0 && !fits[k] && !d->msg[j]) {
				snprintf(first, sizeof first, "its resource claims cannot be allocated on "
					 "%s: %s", name, why);
				d->msg[j] = strdup(first);
			}
		}
		rc = node_label(d, e, i, fits);
	}
	for (size_t k = 0; !rc && k < d->nsets; k++) {
		size_t j = d->sets[k].job;
		if (any[k] && d->msg[j]) { /* it fits somewhere: nothing to say */
			free(d->msg[j]);
			d->msg[j] = NULL;
		}
	}
	free(next);
	free(fits);
	free(any);
	json_decref(relaxed);
	return rc;
}

/* The set and pod of a bind decision, or NULL. */
static dset_t *set_of(mu__sdra_t *d, const mu_id_t *ids, const bool *finished, const mu_decision_t *x)
{
	for (size_t i = 0; i < d->nsets; i++) {
		dset_t *s = &d->sets[i];
		if (ids[s->job] == x->job && !finished[s->job] && s->ps == x->podset &&
		    x->pod >= 0 && x->pod < s->npods)
			return s;
	}
	return NULL;
}

int mu__sdra_binds(mu__sdra_t *d, mu_engine_t *e, const mu_id_t *ids,
		   const bool *finished, const mu_decisions_t *dec, mu_time_t now)
{
	int undone = 0;
	release_gone(d, e, ids, finished);
	for (size_t i = 0; i < dec->n; i++) {
		const mu_decision_t *x = &dec->v[i];
		dset_t *s = x->kind == MU_DEC_BIND ? set_of(d, ids, finished, x) : NULL;
		if (!s || s->pods[x->pod].at == x->node ||
		    mu_engine_pod_node(e, x->job, x->podset, x->pod) != x->node)
			continue;
		char why[600];
		json_t *plan = NULL;
		const char *node = mu_engine_node_name(e, x->node);
		int r = pod_on(d, s, x->pod, node ? node : "", d->claims, &plan, why, sizeof why);
		if (!r) {
			pod_reserve(d, s, x->pod, plan, x->node);
		} else {
			int rc = mu_engine_pod_unbind(e, x->job, x->podset, x->pod, now);
			if (rc)
				return rc;
			undone++;
			char full[700];
			snprintf(full, sizeof full, "its resource claims cannot be allocated on %s: %s",
				 node ? node : "?", why);
			free(d->msg[s->job]);
			d->msg[s->job] = strdup(full);
		}
		json_decref(plan);
	}
	return undone;
}

const char *mu__sdra_msg(const mu__sdra_t *d, size_t k)
{
	return d && d->msg[k] ? d->msg[k] : "";
}

long mu__sdra_devices(const mu__sdra_t *d, const mu_engine_t *e, size_t k, mu_id_t id,
		      char ***out)
{
	json_t *seen = json_object();
	size_t n = 0, cap = 8;
	char **v = malloc(cap * sizeof *v);
	bool oom = !v || !seen;
	for (size_t i = 0; !oom && i < d->nsets; i++) {
		const dset_t *s = &d->sets[i];
		for (int32_t p = 0; s->job == k && !oom && p < s->npods; p++) {
			mu_id_t at = mu_engine_pod_node(e, id, s->ps, p);
			const char *node = at >= 0 ? mu_engine_node_name(e, at) : NULL;
			const json_t *cl[MU_DRA_MAX_CLAIMS];
			size_t nc = s->pods[p].at == at && node ? pod_claims(d, s, p, cl) : 0;
			for (size_t c = 0; c < nc && !oom; c++) {
				const char *cn = mu__jstr(cl[c], "metadata.name");
				if (json_object_get(seen, cn))
					continue;
				json_object_set_new(seen, cn, json_true());
				size_t r;
				json_t *res;
				json_array_foreach(mu__jget(cl[c], "status.allocation.devices.results"), r, res) {
					char buf[800];
					snprintf(buf, sizeof buf, "%s:%s/%s/%s", node, mu__jstr(res, "driver"),
						 mu__jstr(res, "pool"), mu__jstr(res, "device"));
					if (n == cap) {
						char **nv = realloc(v, (cap *= 2) * sizeof *v);
						if (!nv) {
							oom = true;
							break;
						}
						v = nv;
					}
					if (!(v[n++] = strdup(buf)))
						oom = true;
				}
			}
		}
	}
	json_decref(seen);
	if (oom) {
		for (size_t i = 0; v && i < n; i++)
			free(v[i]);
		free(v);
		return -1;
	}
	*out = v;
	return (long)n;
}

/* Whether driver name drv marks GPUs: it contains "gpu" in any case. */
static bool gpu_driver(const char *drv)
{
	for (const char *p = drv; p && p[0]; p++)
		if ((p[0] | 32) == 'g' && (p[1] | 32) == 'p' && (p[2] | 32) == 'u')
			return true;
	return false;
}

void mu__sdra_gpus(const mu__sdra_t *d, int64_t *total, int64_t *used)
{
	size_t i, k;
	json_t *sl, *o, *c, *r;
	*total = *used = 0;
	json_array_foreach(d->slices, i, sl) {
		const char *drv = mu__jstr(sl, "spec.driver"), *pool = mu__jstr(sl, "spec.pool.name");
		if (!gpu_driver(drv) || !pool)
			continue;
		json_int_t gen = json_integer_value(mu__jget(sl, "spec.pool.generation")), newest = gen;
		json_array_foreach(d->slices, k, o) { /* the pool's newest generation only */
			const char *d2 = mu__jstr(o, "spec.driver"), *p2 = mu__jstr(o, "spec.pool.name");
			json_int_t g2 = json_integer_value(mu__jget(o, "spec.pool.generation"));
			if (d2 && p2 && !strcmp(d2, drv) && !strcmp(p2, pool) && g2 > newest)
				newest = g2;
		}
		if (gen == newest)
			*total += (int64_t)json_array_size(mu__jget(sl, "spec.devices"));
	}
	json_array_foreach(d->claims, i, c) {
		if (!json_array_size(mu__jget(c, "status.reservedFor")))
			continue;
		json_array_foreach(mu__jget(c, "status.allocation.devices.results"), k, r)
			*used += gpu_driver(mu__jstr(r, "driver"));
	}
}

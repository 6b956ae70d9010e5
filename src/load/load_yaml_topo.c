/*
 * load_yaml_topo.c - topology in YAML: the Topology kind (levels between
 * nodes), scheduling.k8s.io/v1 PriorityClass, a NodePool's compact
 * spec.nodeTopology (NUMA nodes, GPUs, NICs inside every node of the pool),
 * and a job's topology request and alignment as Workload fields or batch/v1
 * Job annotations.
 *
 * Everything here is checked as far as one document allows: level keys
 * non-empty and distinct, indices in range, CPU sets disjoint.  What names
 * another document (a job's topology and its levels, a priority class) is
 * checked by mu_specs_validate() once every file is loaded.
 */
#include <stdio.h>
#include <string.h>

#include "load/load_yaml.h"

/* --- Topology and PriorityClass ------------------------------------------ */

/* Linear in the levels squared, at most MU_MAX_LEVELS. */
int mu__y_topology(mu__yload_t *L, const mu__ynode_t *root)
{
	mu_topology_spec_t t = {0};
	const mu__ynode_t *meta, *spec, *lv;
	int rc;
	if ((rc = mu__y_map_at(L, root, "metadata", true, &meta)) ||
	    (rc = mu__y_name_at(L, meta, "name", true, &t.name)) ||
	    (rc = mu__y_map_at(L, root, "spec", true, &spec)) ||
	    (rc = mu__y_seq_at(L, spec, "levels", true, &lv)))
		return rc;
	if (lv->n < 1 || lv->n > MU_MAX_LEVELS)
		return mu__y_err(L, lv, NULL, MU_ERANGE, "expected 1 to %d "
				 "levels (node label keys, outermost first), "
				 "got %zu", MU_MAX_LEVELS, lv->n);
	if ((rc = mu__y_strs_at(L, spec, "levels", false, &t.levels,
				&t.nlevels)))
		return rc;
	size_t i = 0;
	for (const mu__ynode_t *c = lv->head; c; c = c->next, i++)
		for (size_t k = 0; k < i; k++)
			if (!strcmp(t.levels[k], t.levels[i]))
				return mu__y_err(L, c, NULL, MU_EINVAL,
						 "the level %.80s is given twice",
						 t.levels[i]);
	mu_topology_spec_t *slot = mu_specs_add_topology(L->into);
	if (!slot)
		return mu__y_oom(L);
	*slot = t;
	return MU_OK;
}

int mu__y_priority_class(mu__yload_t *L, const mu__ynode_t *root)
{
	mu_priority_class_spec_t p = {0};
	const mu__ynode_t *meta, *an;
	int64_t v = 0;
	int rc;
	if ((rc = mu__y_map_at(L, root, "metadata", true, &meta)) ||
	    (rc = mu__y_name_at(L, meta, "name", true, &p.name)) ||
	    (rc = mu__y_map_at(L, meta, "annotations", false, &an)) ||
	    (rc = mu__y_dur_at(L, an, "muster.io/max-wait", &p.max_wait)) ||
	    (rc = mu__y_escalation_at(L, an, "muster.io/escalation", &p.escalation)))
		return rc;
	if (!mu__y_get(root, "value"))
		return mu__y_err(L, root, "value", MU_EPARSE,
				 "required field is missing");
	if ((rc = mu__y_int_at(L, root, "value", INT32_MIN, INT32_MAX, &v)) ||
	    (rc = mu__y_bool_at(L, root, "globalDefault", &p.global_default)) ||
	    (rc = mu__y_preemption_policy(L, mu__y_get(root, "preemptionPolicy"), &p.never_preempt)))
		return rc;
	p.value = (int32_t)v;
	mu_priority_class_spec_t *slot = mu_specs_add_priority_class(L->into);
	if (!slot)
		return mu__y_oom(L);
	*slot = p;
	return MU_OK;
}

/* --- NodePool spec.nodeTopology ------------------------------------------ */

/* Reads spec.nodeTopology.numa: each entry's CPUs (disjoint across
 * entries) and memory. */
static int ntopo_numa(mu__yload_t *L, const mu__ynode_t *m,
		      mu_node_topo_spec_t *t)
{
	const mu__ynode_t *seq;
	int rc = mu__y_seq_at(L, m, "numa", true, &seq);
	if (rc)
		return rc;
	if (seq->n < 1 || seq->n > MU_MAX_NUMA)
		return mu__y_err(L, seq, NULL, MU_ERANGE, "expected 1 to %d NUMA "
				 "nodes, got %zu", MU_MAX_NUMA, seq->n);
	mu_cpuset_t all;
	memset(&all, 0, sizeof all);
	for (const mu__ynode_t *c = seq->head; c; c = c->next) {
		mu_numa_spec_t *u = &t->numa[t->nnuma];
		const mu__ynode_t *cpus = mu__y_get(c, "cpus");
		const mu__ynode_t *mem = mu__y_get(c, "memory");
		if ((rc = mu__y_want_map(L, c)) ||
		    (cpus && (rc = mu__y_want_scalar(L, cpus))) ||
		    (mem && (rc = mu__y_qty(L, mem, 1, &u->memory))))
			return rc;
		if (cpus && (rc = mu_cpuset_parse(cpus->s, &u->cpus)) != MU_OK)
			return mu__y_err(L, cpus, NULL, rc, "expected a cpulist "
					 "such as 0-31,64-95 of CPUs 0 to %d, "
					 "got \"%.60s\"", MU_MAX_CPUS - 1,
					 cpus->s);
		for (int w = 0; w < MU_CPUSET_WORDS; w++) {
			if (all.w[w] & u->cpus.w[w])
				return mu__y_err(L, cpus, NULL, MU_EINVAL,
						 "a CPU is in two NUMA nodes");
			all.w[w] |= u->cpus.w[w];
		}
		t->nnuma++;
	}
	return MU_OK;
}

/* Reads one `numa: N` index of a GPU or NIC entry c (required). */
static int ntopo_numa_ref(mu__yload_t *L, const mu__ynode_t *c,
			  const mu_node_topo_spec_t *t, int8_t *out)
{
	int64_t u = -1;
	int rc;
	if ((rc = mu__y_want_map(L, c)))
		return rc;
	if (!mu__y_get(c, "numa"))
		return mu__y_err(L, c, "numa", MU_EPARSE,
				 "required field is missing");
	if ((rc = mu__y_int_at(L, c, "numa", 0, t->nnuma - 1, &u)))
		return rc;
	*out = (int8_t)u;
	return MU_OK;
}

/* Reads gpus (exactly one entry per GPU of the node, when given) and
 * nics. */
static int ntopo_devices(mu__yload_t *L, const mu__ynode_t *m, int64_t gpus,
			 mu_node_topo_spec_t *t)
{
	const mu__ynode_t *gs, *ns;
	int rc;
	if ((rc = mu__y_seq_at(L, m, "gpus", false, &gs)) ||
	    (rc = mu__y_seq_at(L, m, "nics", false, &ns)))
		return rc;
	if (gs && (int64_t)gs->n != gpus)
		return mu__y_err(L, gs, NULL, MU_EINVAL, "expected one entry per "
				 "GPU of the node (%lld), got %zu",
				 (long long)gpus, gs->n);
	int g = 0;
	for (const mu__ynode_t *c = gs ? gs->head : NULL; c; c = c->next, g++) {
		int64_t k = -1;
		if ((rc = ntopo_numa_ref(L, c, t, &t->gpu_numa[g])) ||
		    (rc = mu__y_int_at(L, c, "group", 0, MU_MAX_GPUS - 1, &k)))
			return rc;
		t->gpu_group[g] = (int8_t)k;
	}
	if (ns && ns->n > MU_MAX_NICS)
		return mu__y_err(L, ns, NULL, MU_ERANGE, "at most %d NICs, got %zu",
				 MU_MAX_NICS, ns->n);
	for (const mu__ynode_t *c = ns ? ns->head : NULL; c; c = c->next) {
		int32_t i = t->nnics;
		if ((rc = ntopo_numa_ref(L, c, t, &t->nic_numa[i])) ||
		    (rc = mu__y_str_at(L, c, "name", false, &t->nic_names[i])))
			return rc;
		if (t->nic_names[i] && !*t->nic_names[i])
			return mu__y_err(L, c, "name", MU_EPARSE,
					 "must not be empty");
		t->nnics++;
	}
	return MU_OK;
}

int mu__y_node_topo(mu__yload_t *L, const mu__ynode_t *m, int64_t gpus,
		    const mu_node_topo_spec_t **out)
{
	*out = NULL;
	if (!m)
		return MU_OK;
	mu_node_topo_spec_t *t = mu__y_alloc(L, 1, sizeof *t);
	if (!t)
		return mu__y_oom(L);
	for (int g = 0; g < MU_MAX_GPUS; g++)
		t->gpu_numa[g] = t->gpu_group[g] = -1;
	int rc = mu__y_want_map(L, m);
	if (rc == MU_OK)
		rc = ntopo_numa(L, m, t);
	if (rc == MU_OK)
		rc = ntopo_devices(L, m, gpus, t);
	if (rc == MU_OK)
		*out = t;
	return rc;
}

/* --- Topology requests and alignment ------------------------------------- */

/* Reads a level key at n: a non-empty string. */
static int level_key(mu__yload_t *L, const mu__ynode_t *n, const char **out)
{
	int rc = mu__y_str(L, n, out);
	if (rc == MU_OK && !**out)
		rc = mu__y_err(L, n, NULL, MU_EPARSE, "expected a level (a node "
			       "label key of the topology), got nothing");
	return rc;
}

/* The checks shared by both forms: a slice has a size and a level. */
static int topo_req_check(mu__yload_t *L, const mu__ynode_t *at,
			  const char *size_key, const char *level_key_name,
			  const mu_topo_req_t *r)
{
	if (r->slice_size > 0 && !r->slice_level)
		return mu__y_err(L, at, level_key_name, MU_EPARSE,
				 "a slice needs a level as well as a size");
	if (r->slice_level && r->slice_size <= 0)
		return mu__y_err(L, at, size_key, MU_EPARSE,
				 "a slice needs a size as well as a level");
	return MU_OK;
}

int mu__y_topo_req(mu__yload_t *L, const mu__ynode_t *m, mu_topo_req_t *out)
{
	const mu__ynode_t *v, *slice = NULL;
	int64_t size = 0;
	int rc;
	memset(out, 0, sizeof *out);
	if (!m)
		return MU_OK;
	if ((rc = mu__y_want_map(L, m)) ||
	    (rc = mu__y_name_at(L, m, "name", false, &out->topology)) ||
	    ((v = mu__y_get(m, "required")) && (rc = level_key(L, v, &out->required))) ||
	    ((v = mu__y_get(m, "preferred")) && (rc = level_key(L, v, &out->preferred))) ||
	    (rc = mu__y_map_at(L, m, "slice", false, &slice)))
		return rc;
	if (!slice)
		return MU_OK;
	if ((rc = mu__y_int_at(L, slice, "size", 1, MU__Y_MAX_PODS, &size)) ||
	    ((v = mu__y_get(slice, "level")) && (rc = level_key(L, v, &out->slice_level))))
		return rc;
	out->slice_size = (int32_t)size;
	return topo_req_check(L, slice, "size", "level", out);
}

int mu__y_topo_req_annotations(mu__yload_t *L, const mu__ynode_t *an,
			       mu_topo_req_t *out)
{
	static const char pre[] = "muster.io/topology";
	const mu__ynode_t *v;
	int64_t size = 0;
	int rc;
	memset(out, 0, sizeof *out);
	if (!an)
		return MU_OK;
	if ((rc = mu__y_name_at(L, an, pre, false, &out->topology)) ||
	    ((v = mu__y_get(an, "muster.io/topology-required")) &&
	     (rc = level_key(L, v, &out->required))) ||
	    ((v = mu__y_get(an, "muster.io/topology-preferred")) &&
	     (rc = level_key(L, v, &out->preferred))) ||
	    ((v = mu__y_get(an, "muster.io/topology-slice-level")) &&
	     (rc = level_key(L, v, &out->slice_level))) ||
	    (rc = mu__y_int_at(L, an, "muster.io/topology-slice-size", 1,
			       MU__Y_MAX_PODS, &size)))
		return rc;
	out->slice_size = (int32_t)size;
	return topo_req_check(L, an, "muster.io/topology-slice-size",
			      "muster.io/topology-slice-level", out);
}

int mu__y_align(mu__yload_t *L, const mu__ynode_t *n, mu_align_t *out)
{
	static const char *const names[] = {"none", "numa", "link"};
	int rc = mu__y_want_scalar(L, n);
	if (rc)
		return rc;
	for (int i = 0; i < 3; i++) {
		if (!strcmp(n->s, names[i])) {
			*out = (mu_align_t)i;
			return MU_OK;
		}
	}
	char q[80];
	return mu__y_err(L, n, NULL, MU_EINVAL, "expected none, numa or link, "
			 "got %s", mu__quote(n->s, q, sizeof q));
}

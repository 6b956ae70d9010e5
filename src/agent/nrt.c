/*
 * nrt.c - mu_topo_write(): a mu_topo_t as a topology.node.k8s.io/v1alpha2
 * NodeResourceTopology in JSON or YAML.
 *
 * One zone per NUMA node ("node-N", type "Node") with costs from the
 * distances, resources (cpu, memory, and a GPU count per vendor resource
 * name present on the host; capacity = allocatable = available, since the
 * agent sees hardware, not pods) and muster.io/ attributes for CPUs, GPUs,
 * NICs and link groups.  Top-level attributes say how NUMA was found and
 * hold the host's link groups and any discovery notes.  docs/agent.md has
 * the format.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/sysfs.h"

static const char *const gpu_vendors[] = {"nvidia.com/gpu", "amd.com/gpu"};
enum { N_GPU_VENDORS = sizeof gpu_vendors / sizeof *gpu_vendors };

/* Adds {name, value} to the attribute list. */
static void attr(mu__docb_t *b, mu__doc_t *list, const char *name,
		 const char *value)
{
	mu__doc_t *a = mu__doc_add(b, list, NULL, MU__DOC_MAP);
	mu__doc_str(b, a, "name", name);
	mu__doc_str(b, a, "value", value);
}

/* Adds a resource whose capacity, allocatable and available are v. */
static void resource(mu__docb_t *b, mu__doc_t *list, const char *name,
		     int64_t v)
{
	char s[24];
	snprintf(s, sizeof s, "%lld", (long long)v);
	mu__doc_t *r = mu__doc_add(b, list, NULL, MU__DOC_MAP);
	mu__doc_str(b, r, "name", name);
	mu__doc_str(b, r, "capacity", s);
	mu__doc_str(b, r, "allocatable", s);
	mu__doc_str(b, r, "available", s);
}

/* Appends "KIND<g>:a|b|..." for each group g of devs[0..n) (group taken
 * from the nvlink or pcie field) with members in zone (all zones when
 * zone < 0), ';'-separated after what sb holds.  O(groups * n). */
static void groups_str(mu__sbuf_t *sb, const mu_pci_dev_t *devs, int32_t n,
		       bool nvlink, int32_t ngroups, int32_t zone)
{
	for (int32_t g = 0; g < ngroups; g++) {
		bool first = true;
		for (int32_t i = 0; i < n; i++) {
			const mu_pci_dev_t *v = &devs[i];
			if ((nvlink ? v->nvlink_group : v->pcie_group) != g ||
			    (zone >= 0 && v->zone != zone))
				continue;
			if (first)
				mu__sbuf_printf(sb, "%s%s%d:", sb->n ? ";" : "",
						nvlink ? "nvlink" : "pcie", (int)g);
			mu__sbuf_printf(sb, "%s%s", first ? "" : "|", v->addr);
			first = false;
		}
	}
}

/* The GPU link groups, NVLink islands first, of zone (or all when < 0). */
static void gpu_groups(mu__sbuf_t *sb, const mu_topo_t *t, int32_t zone)
{
	groups_str(sb, t->gpus, t->ngpus, true, t->n_nvlink, zone);
	groups_str(sb, t->gpus, t->ngpus, false, t->n_pcie, zone);
}

/* The zone's attributes: muster.io/cpus, gpus, gpu-link-groups, nics,
 * nic-link-groups (each only when there is something to say but cpus). */
static void zone_attrs(mu__docb_t *b, mu__doc_t *list, const mu_topo_t *t,
		       int32_t z, mu__sbuf_t *sb)
{
	const mu_numa_node_t *node = &t->nodes[z];
	size_t need = mu_cpulist_format(&node->cpus, NULL, 0);
	char *cpus = malloc(need + 1);
	if (!cpus) {
		b->err = MU_ENOMEM;
		return;
	}
	mu_cpulist_format(&node->cpus, cpus, need + 1);
	attr(b, list, "muster.io/cpus", cpus);
	free(cpus);
	mu__sbuf_reset(sb);
	for (int32_t i = 0; i < t->ngpus; i++)
		if (t->gpus[i].zone == z)
			mu__sbuf_printf(sb, "%s%s", sb->n ? "," : "", t->gpus[i].addr);
	if (sb->n) {
		attr(b, list, "muster.io/gpus", mu__sbuf_str(sb));
		mu__sbuf_reset(sb);
		gpu_groups(sb, t, z);
		attr(b, list, "muster.io/gpu-link-groups", mu__sbuf_str(sb));
	}
	mu__sbuf_reset(sb);
	for (int32_t i = 0; i < t->nnics; i++) {
		const mu_pci_dev_t *v = &t->nics[i];
		if (v->zone == z)
			mu__sbuf_printf(sb, "%s%s%s%s", sb->n ? "," : "", v->name,
					v->name[0] ? "@" : "", v->addr);
	}
	if (sb->n)
		attr(b, list, "muster.io/nics", mu__sbuf_str(sb));
	mu__sbuf_reset(sb);
	groups_str(sb, t->nics, t->nnics, false, t->n_pcie, z);
	if (sb->n)
		attr(b, list, "muster.io/nic-link-groups", mu__sbuf_str(sb));
}

/* Adds zone z: name, type, costs, attributes, resources. */
static void zone(mu__docb_t *b, mu__doc_t *zones, const mu_topo_t *t,
		 int32_t z, mu__sbuf_t *sb)
{
	const mu_numa_node_t *node = &t->nodes[z];
	char name[32];
	mu__doc_t *zd = mu__doc_add(b, zones, NULL, MU__DOC_MAP);
	snprintf(name, sizeof name, "node-%d", (int)node->id);
	mu__doc_str(b, zd, "name", name);
	mu__doc_str(b, zd, "type", "Node");
	if (node->dist) {
		mu__doc_t *costs = mu__doc_add(b, zd, "costs", MU__DOC_LIST);
		for (int32_t j = 0; j < t->nnodes; j++) {
			mu__doc_t *c = mu__doc_add(b, costs, NULL, MU__DOC_MAP);
			snprintf(name, sizeof name, "node-%d", (int)t->nodes[j].id);
			mu__doc_str(b, c, "name", name);
			mu__doc_int(b, c, "value", node->dist[j]);
		}
	}
	zone_attrs(b, mu__doc_add(b, zd, "attributes", MU__DOC_LIST), t, z, sb);
	mu__doc_t *res = mu__doc_add(b, zd, "resources", MU__DOC_LIST);
	resource(b, res, "cpu", mu_cpulist_count(&node->cpus));
	if (node->mem_bytes >= 0)
		resource(b, res, "memory", node->mem_bytes);
	for (int k = 0; k < N_GPU_VENDORS; k++) {
		int32_t host = 0, here = 0;
		for (int32_t i = 0; i < t->ngpus; i++) {
			if (strcmp(mu_gpu_resource(t->gpus[i].vendor), gpu_vendors[k]))
				continue;
			host++;
			here += t->gpus[i].zone == z;
		}
		if (host)
			resource(b, res, gpu_vendors[k], here);
	}
}

/* The top-level attributes. */
static void top_attrs(mu__docb_t *b, mu__doc_t *list, const mu_topo_t *t,
		      mu__sbuf_t *sb)
{
	attr(b, list, "muster.io/numa", t->flags & MU_TOPO_NO_NUMA ?
	     "unknown: one zone from devices/system/cpu/online" : "sysfs");
	if (t->flags & MU_TOPO_NUMA_ASSUMED) {
		mu__sbuf_reset(sb);
		for (int32_t k = 0; k < 2; k++) {
			const mu_pci_dev_t *v = k ? t->nics : t->gpus;
			for (int32_t i = 0; i < (k ? t->nnics : t->ngpus); i++)
				if (v[i].numa_node < 0)
					mu__sbuf_printf(sb, "%s%s", sb->n ? "," : "",
							v[i].addr);
		}
		attr(b, list, "muster.io/numa-assumed", mu__sbuf_str(sb));
	}
	if (t->ngpus) {
		mu__sbuf_reset(sb);
		gpu_groups(sb, t, -1);
		attr(b, list, "muster.io/gpu-link-groups", mu__sbuf_str(sb));
	}
	if (t->notes[0])
		attr(b, list, "muster.io/notes", t->notes);
}

/* Builds the whole object into b. */
static void build(mu__docb_t *b, const mu_topo_t *t, const char *node_name,
		  mu__sbuf_t *sb)
{
	mu__doc_t *r = b->root;
	mu__doc_str(b, r, "apiVersion", "topology.node.k8s.io/v1alpha2");
	mu__doc_str(b, r, "kind", "NodeResourceTopology");
	mu__doc_str(b, mu__doc_add(b, r, "metadata", MU__DOC_MAP), "name", node_name);
	mu__doc_str(b, mu__doc_add(b, r, "topologyPolicies", MU__DOC_LIST), NULL,
		    "None");
	mu__doc_t *zones = mu__doc_add(b, r, "zones", MU__DOC_LIST);
	for (int32_t z = 0; z < t->nnodes; z++)
		zone(b, zones, t, z, sb);
	top_attrs(b, mu__doc_add(b, r, "attributes", MU__DOC_LIST), t, sb);
}

int mu_topo_write(const mu_topo_t *t, const char *node_name,
		  mu_topo_format_t fmt, FILE *f)
{
	mu__docb_t b;
	mu__sbuf_t sb;
	memset(&sb, 0, sizeof sb);
	if (mu__docb_init(&b) != MU_OK)
		return MU_ENOMEM;
	build(&b, t, node_name, &sb);
	int rc = b.err ? b.err : sb.err;
	if (rc == MU_OK)
		rc = fmt == MU_TOPO_YAML ? mu__doc_write_yaml(b.root, f)
					 : mu__doc_write_json(b.root, f);
	mu__sbuf_release(&sb);
	mu__docb_release(&b);
	return rc;
}

/*
 * load_yaml_nrt.c - topology.node.k8s.io/v1alpha2 NodeResourceTopology: what
 * a node's agent reports inside the node (docs/agent.md), read into a
 * mu_node_topo_spec_t for the node of the same name.
 *
 * Zones of type Node named node-N are NUMA nodes, taken in the order of N
 * (the k-th by id is NUMA node k).  From a zone muster reads the memory
 * resource (allocatable, else capacity) and the attributes muster's agent
 * writes: muster.io/cpus (a cpulist), muster.io/gpus and muster.io/nics
 * (comma-separated), muster.io/gpu-link-groups ("G:A|B;H:C").  GPUs are
 * named by PCI address, numbered by address over the whole node (so GPU 0
 * has the lowest address, as nvidia-smi numbers them), or by their indices
 * 0..n-1.  A GPU takes the first link group that lists it (the agent lists
 * NVLink islands before PCIe switches).  NICs are numbered in the order
 * listed, zone by zone.  Other zone types, costs and attributes are
 * ignored.  The node may be defined anywhere, before or after: the spec is
 * attached by mu_specs_validate().  Work is linear in the document's size
 * (GPUs are sorted: at most MU_MAX_GPUS).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/load_yaml.h"

#define NRT_MAX_ZONE_ID 1023 /* N of node-N, as the agent accepts */

/* One NUMA zone while reading: its id and the attribute values. */
typedef struct nzone {
	int32_t id;
	const mu__ynode_t *zone, *cpus, *gpus, *groups, *nics;
} nzone_t;

/* A GPU as listed: its sort key (PCI address or index) and zone. */
typedef struct ngpu {
	uint64_t key;
	int32_t numa;
} ngpu_t;

/* The state of one document. */
typedef struct nrt {
	mu__yload_t *L;
	nzone_t zones[MU_MAX_NUMA];
	int32_t nzones;
	ngpu_t gpus[MU_MAX_GPUS];
	int32_t ngpus;
	bool by_index;           /* GPUs named by index, not PCI address */
	const mu__ynode_t *first_gpus; /* the first muster.io/gpus value */
	mu_node_topo_spec_t *t;
} nrt_t;

/* --- Tokens -------------------------------------------------------------- */

/* The next token of s[*i..n) up to sep, blanks trimmed, as [*b, *e);
 * advances *i past the separator.  False at the end. */
static bool next_tok(const char *s, size_t n, size_t *i, char sep,
		     size_t *b, size_t *e)
{
	if (*i > n)
		return false;
	size_t j = *i;
	while (j < n && s[j] != sep)
		j++;
	*b = *i;
	*e = j;
	while (*b < *e && s[*b] == ' ')
		(*b)++;
	while (*e > *b && s[*e - 1] == ' ')
		(*e)--;
	*i = j + 1;
	return true;
}

/* Reads a hex number of 1..maxd digits from s[*i..e). */
static bool hex_part(const char *s, size_t *i, size_t e, int maxd, uint64_t *v)
{
	int d = 0;
	*v = 0;
	for (; *i < e && isxdigit((unsigned char)s[*i]) && d < maxd; (*i)++, d++) {
		char c = (char)tolower((unsigned char)s[*i]);
		*v = *v * 16 + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
	}
	return d > 0;
}

/* A PCI address "DDDD:BB:DD.F" (domain of 1 to 8 hex digits, as sysfs or
 * nvidia-smi write it, any case) in s[b, e) as a number ordered as the
 * addresses are.  False if it is not one. */
static bool pci_key(const char *s, size_t b, size_t e, uint64_t *key)
{
	uint64_t dom, bus, dev, fn;
	size_t i = b;
	if (!hex_part(s, &i, e, 8, &dom) || i >= e || s[i++] != ':' ||
	    !hex_part(s, &i, e, 2, &bus) || i >= e || s[i++] != ':' ||
	    !hex_part(s, &i, e, 2, &dev) || i >= e || s[i++] != '.' ||
	    i + 1 != e || s[i] < '0' || s[i] > '7' || dev > 0x1f)
		return false;
	fn = (uint64_t)(s[i] - '0');
	*key = dom << 16 | bus << 8 | dev << 3 | fn;
	return true;
}

/* A decimal index 0..MU_MAX_GPUS-1 in s[b, e). */
static bool index_key(const char *s, size_t b, size_t e, uint64_t *key)
{
	if (b == e || e - b > 2)
		return false;
	*key = 0;
	for (size_t i = b; i < e; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		*key = *key * 10 + (uint64_t)(s[i] - '0');
	}
	return *key < MU_MAX_GPUS;
}

/* Reports a bad token of attribute value v. */
static int tok_err(nrt_t *R, const mu__ynode_t *v, size_t b, size_t e,
		   const char *what)
{
	return mu__y_err(R->L, v, NULL, MU_EPARSE, "expected %s, got \"%.*s\"",
			 what, (int)(e - b < 60 ? e - b : 60), v->s + b);
}

/* --- Zones --------------------------------------------------------------- */

/* Reads a zone's attributes list into z; a name given twice is an error. */
static int zone_attrs(nrt_t *R, const mu__ynode_t *zone, nzone_t *z)
{
	static const char *const want[] = {"muster.io/cpus", "muster.io/gpus",
					   "muster.io/gpu-link-groups",
					   "muster.io/nics"};
	const mu__ynode_t *seq, **slot[] = {&z->cpus, &z->gpus, &z->groups,
					   &z->nics};
	int rc = mu__y_seq_at(R->L, zone, "attributes", false, &seq);
	for (const mu__ynode_t *a = seq ? seq->head : NULL; a && !rc; a = a->next) {
		const char *name;
		const mu__ynode_t *v;
		if ((rc = mu__y_want_map(R->L, a)) ||
		    (rc = mu__y_str_at(R->L, a, "name", true, &name)))
			break;
		for (size_t k = 0; k < 4; k++) {
			if (strcmp(name, want[k]))
				continue;
			if (*slot[k])
				return mu__y_err(R->L, a, "name", MU_EINVAL,
						 "the attribute %s is given "
						 "twice", name);
			if (!(v = mu__y_get(a, "value")))
				return mu__y_err(R->L, a, "value", MU_EPARSE,
						 "required field is missing");
			if ((rc = mu__y_want_scalar(R->L, v)))
				return rc;
			*slot[k] = v;
		}
	}
	return rc;
}

/* Reads the zone's memory resource: allocatable, else capacity. */
static int zone_memory(nrt_t *R, const mu__ynode_t *zone, int64_t *mem)
{
	const mu__ynode_t *seq, *v;
	const char *name;
	int rc = mu__y_seq_at(R->L, zone, "resources", false, &seq);
	for (const mu__ynode_t *r = seq ? seq->head : NULL; r && !rc; r = r->next) {
		if ((rc = mu__y_want_map(R->L, r)) ||
		    (rc = mu__y_str_at(R->L, r, "name", true, &name)))
			break;
		if (strcmp(name, "memory"))
			continue;
		if (!(v = mu__y_get(r, "allocatable")) &&
		    !(v = mu__y_get(r, "capacity")))
			return mu__y_err(R->L, r, "capacity", MU_EPARSE,
					 "required field is missing");
		return mu__y_qty(R->L, v, 1, mem);
	}
	return rc;
}

/* Reads one zone: NUMA zones (type Node) go to R->zones, others are
 * skipped. */
static int zone_read(nrt_t *R, const mu__ynode_t *zone)
{
	const char *name, *type = "";
	int64_t id;
	int rc;
	if ((rc = mu__y_want_map(R->L, zone)) ||
	    (rc = mu__y_str_at(R->L, zone, "name", true, &name)) ||
	    (rc = mu__y_str_at(R->L, zone, "type", true, &type)))
		return rc;
	if (strcmp(type, "Node"))
		return MU_OK;
	const mu__ynode_t *nn = mu__y_get(zone, "name");
	if (strncmp(name, "node-", 5) ||
	    mu__parse_int(name + 5, 0, NRT_MAX_ZONE_ID, &id) != MU_OK ||
	    !isdigit((unsigned char)name[5]))
		return mu__y_err(R->L, nn, NULL, MU_EINVAL, "a zone of type "
				 "Node must be named node-N, N from 0 to %d, "
				 "got \"%.60s\"", NRT_MAX_ZONE_ID, name);
	for (int32_t i = 0; i < R->nzones; i++)
		if (R->zones[i].id == id)
			return mu__y_err(R->L, nn, NULL, MU_EINVAL, "two "
					 "zones are named %.60s", name);
	if (R->nzones == MU_MAX_NUMA)
		return mu__y_err(R->L, zone, NULL, MU_ELIMIT, "more than %d "
				 "NUMA zones (type Node)", MU_MAX_NUMA);
	nzone_t *z = &R->zones[R->nzones++];
	memset(z, 0, sizeof *z);
	z->id = (int32_t)id;
	z->zone = zone;
	return zone_attrs(R, zone, z);
}

static int cmp_zone(const void *a, const void *b)
{
	const nzone_t *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* --- GPUs, groups, NICs -------------------------------------------------- */

/* Reads zone u's GPU list into R->gpus.  The first GPU of the document
 * decides whether GPUs are named by index or by PCI address. */
static int gpus_read(nrt_t *R, int32_t u, const mu__ynode_t *v)
{
	size_t n = strlen(v->s), i = 0, b, e;
	if (!R->first_gpus)
		R->first_gpus = v;
	while (n && next_tok(v->s, n, &i, ',', &b, &e)) {
		uint64_t key;
		if (R->ngpus == 0)
			R->by_index = index_key(v->s, b, e, &key);
		if (R->by_index ? !index_key(v->s, b, e, &key) :
				  !pci_key(v->s, b, e, &key))
			return tok_err(R, v, b, e, R->by_index ?
				       "GPU indices 0 to 63 separated by commas" :
				       "PCI addresses such as 0000:07:00.0 "
				       "separated by commas");
		for (int32_t k = 0; k < R->ngpus; k++)
			if (R->gpus[k].key == key)
				return tok_err(R, v, b, e, "each GPU once");
		if (R->ngpus == MU_MAX_GPUS)
			return mu__y_err(R->L, v, NULL, MU_ELIMIT, "more than %d "
					 "GPUs in the node", MU_MAX_GPUS);
		R->gpus[R->ngpus++] = (ngpu_t){key, u};
	}
	return MU_OK;
}

static int cmp_gpu(const void *a, const void *b)
{
	const ngpu_t *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

/* Sorts the GPUs and sets their NUMA nodes.  Indices must be 0..n-1. */
static int gpus_place(nrt_t *R)
{
	qsort(R->gpus, (size_t)R->ngpus, sizeof *R->gpus, cmp_gpu);
	for (int32_t g = 0; g < R->ngpus; g++) {
		if (R->by_index && R->gpus[g].key != (uint64_t)g)
			return mu__y_err(R->L, R->first_gpus, NULL, MU_EINVAL,
					 "GPU indices must be 0 to %d, each "
					 "once; %d is missing", (int)R->ngpus - 1,
					 (int)g);
		R->t->gpu_numa[g] = (int8_t)R->gpus[g].numa;
	}
	return MU_OK;
}

/* The device index of the GPU named s[b, e), or -1. */
static int gpu_find(const nrt_t *R, const char *s, size_t b, size_t e)
{
	uint64_t key;
	if (R->by_index ? !index_key(s, b, e, &key) : !pci_key(s, b, e, &key))
		return -1;
	for (int32_t g = 0; g < R->ngpus; g++)
		if (R->gpus[g].key == key)
			return g;
	return -1;
}

/* Group names seen so far that own a GPU: a name is s[b, e) of a value. */
typedef struct gnames {
	const char *s[MU_MAX_GPUS];
	size_t len[MU_MAX_GPUS];
	int32_t n;
} gnames_t;

/* The id of group name s[b, e), made when new; linear in the groups. */
static int32_t group_id(gnames_t *gn, const char *s, size_t b, size_t e)
{
	for (int32_t k = 0; k < gn->n; k++)
		if (gn->len[k] == e - b && !memcmp(gn->s[k], s + b, e - b))
			return k;
	if (gn->n == MU_MAX_GPUS)
		return -1; /* cannot happen: each id owns a distinct GPU */
	gn->s[gn->n] = s + b;
	gn->len[gn->n] = e - b;
	return gn->n++;
}

/* Reads one zone's "G:A|B;H:C" and gives each GPU without a group the
 * first group listing it. */
static int groups_read(nrt_t *R, const mu__ynode_t *v, gnames_t *gn)
{
	const char *s = v->s;
	size_t n = strlen(s), i = 0, b, e;
	while (n && next_tok(s, n, &i, ';', &b, &e)) {
		const char *colon = memchr(s + b, ':', e - b);
		if (!colon || colon == s + b)
			return tok_err(R, v, b, e, "GROUP:GPU|GPU... entries "
				       "separated by ';'");
		size_t ge = (size_t)(colon - s), j = ge + 1, mb, me;
		int32_t id = -1;
		while (next_tok(s, e, &j, '|', &mb, &me)) {
			int g = gpu_find(R, s, mb, me);
			if (g < 0)
				return tok_err(R, v, mb, me, "a GPU of the "
					       "node's muster.io/gpus");
			if (R->t->gpu_group[g] >= 0)
				continue;
			if (id < 0 && (id = group_id(gn, s, b, ge)) < 0)
				return mu__y_err(R->L, v, NULL, MU_ELIMIT,
						 "too many link groups");
			R->t->gpu_group[g] = (int8_t)id;
		}
	}
	return MU_OK;
}

/* Reads zone u's NICs, "IFNAME@ADDR" or "ADDR", named by IFNAME when
 * given. */
static int nics_read(nrt_t *R, int32_t u, const mu__ynode_t *v)
{
	mu_node_topo_spec_t *t = R->t;
	size_t n = strlen(v->s), i = 0, b, e;
	uint64_t key;
	while (n && next_tok(v->s, n, &i, ',', &b, &e)) {
		const char *at = memchr(v->s + b, '@', e - b);
		size_t ab = at ? (size_t)(at - v->s) + 1 : b;
		if (!pci_key(v->s, ab, e, &key) || (at && at == v->s + b))
			return tok_err(R, v, b, e, "NICs as IFNAME@ADDRESS or "
				       "ADDRESS separated by commas");
		if (t->nnics == MU_MAX_NICS)
			return mu__y_err(R->L, v, NULL, MU_ELIMIT, "more than %d "
					 "NICs in the node", MU_MAX_NICS);
		size_t ne = at ? (size_t)(at - v->s) : e;
		t->nic_numa[t->nnics] = (int8_t)u;
		t->nic_names[t->nnics] = mu_arena_strndup(&R->L->into->arena,
							  v->s + b, ne - b);
		if (!t->nic_names[t->nnics++])
			return mu__y_oom(R->L);
	}
	return MU_OK;
}

/* Fills R->t from the zones, in NUMA order. */
static int nrt_build(nrt_t *R)
{
	mu_node_topo_spec_t *t = R->t;
	mu_cpuset_t all;
	int rc = MU_OK;
	memset(&all, 0, sizeof all);
	qsort(R->zones, (size_t)R->nzones, sizeof *R->zones, cmp_zone);
	t->nnuma = R->nzones;
	for (int32_t u = 0; u < R->nzones && !rc; u++) {
		nzone_t *z = &R->zones[u];
		const mu__ynode_t *c = z->cpus;
		if (c && (rc = mu_cpuset_parse(c->s, &t->numa[u].cpus)))
			return mu__y_err(R->L, c, NULL, rc, "expected a cpulist "
					 "such as 0-31,64-95 of CPUs 0 to %d, "
					 "got \"%.60s\"", MU_MAX_CPUS - 1, c->s);
		for (int w = 0; w < MU_CPUSET_WORDS; w++) {
			if (all.w[w] & t->numa[u].cpus.w[w])
				return mu__y_err(R->L, c, NULL, MU_EINVAL,
						 "a CPU is in two NUMA zones");
			all.w[w] |= t->numa[u].cpus.w[w];
		}
		if ((rc = zone_memory(R, z->zone, &t->numa[u].memory)) ||
		    (z->gpus && (rc = gpus_read(R, u, z->gpus))) ||
		    (z->nics && (rc = nics_read(R, u, z->nics))))
			return rc;
	}
	if ((rc = gpus_place(R)))
		return rc;
	gnames_t gn = {.n = 0};
	for (int32_t u = 0; u < R->nzones && !rc; u++)
		if (R->zones[u].groups)
			rc = groups_read(R, R->zones[u].groups, &gn);
	return rc;
}

int mu__y_nrt(mu__yload_t *L, const mu__ynode_t *root)
{
	const mu__ynode_t *meta, *zones;
	const char *name;
	int rc;
	if ((rc = mu__y_map_at(L, root, "metadata", true, &meta)) ||
	    (rc = mu__y_name_at(L, meta, "name", true, &name)) ||
	    (rc = mu__y_seq_at(L, root, "zones", true, &zones)))
		return rc;
	nrt_t *R = calloc(1, sizeof *R);
	if (!R)
		return mu__y_oom(L);
	R->L = L;
	if (!(R->t = mu__y_alloc(L, 1, sizeof *R->t)))
		rc = mu__y_oom(L);
	for (int g = 0; rc == MU_OK && g < MU_MAX_GPUS; g++)
		R->t->gpu_numa[g] = R->t->gpu_group[g] = -1;
	for (const mu__ynode_t *z = zones->head; z && rc == MU_OK; z = z->next)
		rc = zone_read(R, z);
	if (rc == MU_OK && R->nzones == 0)
		rc = mu__y_err(L, zones, NULL, MU_EINVAL, "no zone of type Node "
			       "(a NUMA node named node-N)");
	if (rc == MU_OK)
		rc = nrt_build(R);
	if (rc == MU_OK)
		rc = mu__y_ref(L, mu__y_get(meta, "name"), MU_REF_NODE_TOPO, 0,
			       name, R->t);
	free(R);
	return rc;
}

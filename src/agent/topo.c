/*
 * topo.c - mu_topo_discover(): reads the NUMA nodes of a sysfs tree, then
 * lets pci.c add the GPUs and NICs.
 *
 * NUMA nodes come from devices/system/node/nodeN: cpulist (required),
 * meminfo and distance (optional).  Without devices/system/node the host
 * has no NUMA information and gets one zone, node 0, whose CPUs are
 * devices/system/cpu/online.  Distances are kept only when every node has
 * one entry per node (the kernel lists online nodes in id order); otherwise
 * they are all dropped with a note, because a partial matrix would mislead.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/sysfs.h"

void mu_topo_init(mu_topo_t *t)
{
	memset(t, 0, sizeof *t);
}

void mu_topo_release(mu_topo_t *t)
{
	for (int32_t i = 0; i < t->nnodes; i++) {
		mu_cpulist_release(&t->nodes[i].cpus);
		free(t->nodes[i].dist);
	}
	free(t->nodes);
	free(t->gpus);
	free(t->nics);
	mu_topo_init(t);
}

/* Builds "ROOT/devices/system/node/nodeID/NAME" into path and reads it. */
static int node_file(mu__disc_t *d, int32_t id, const char *name, char *path,
		     size_t len, bool optional)
{
	if (mu__path(path, len, "%s/devices/system/node/node%d/%s", d->root,
		     (int)id, name) != MU_OK)
		return mu__disc_err(d, MU_ELIMIT, d->root, "path too long");
	return mu__disc_read(d, path, optional);
}

/* Reads nodeN's cpulist, meminfo and distance into node (id set); the
 * distances go to dist[0..*ndist), dist holding MU_TOPO_MAX_NODE + 1. */
static int read_node(mu__disc_t *d, mu_numa_node_t *node, int32_t *dist,
		     int32_t *ndist)
{
	char path[4096];
	int rc = node_file(d, node->id, "cpulist", path, sizeof path, false);
	if (rc != MU_OK)
		return rc;
	rc = mu_cpulist_parse(d->buf, d->len, &node->cpus);
	if (rc != MU_OK)
		return mu__disc_bad(d, rc, path, "cpulist");
	node->mem_bytes = -1;
	rc = node_file(d, node->id, "meminfo", path, sizeof path, true);
	if (rc == MU_OK) {
		rc = mu__sysfs_meminfo(d->buf, d->len, node->id, &node->mem_bytes);
		if (rc != MU_OK)
			return mu__disc_bad(d, rc, path, "meminfo (no \"Node N MemTotal: X kB\")");
	} else if (rc != MU_ENOENT) {
		return rc;
	}
	*ndist = 0;
	rc = node_file(d, node->id, "distance", path, sizeof path, true);
	if (rc == MU_OK) {
		rc = mu__sysfs_distance(d->buf, d->len, dist, MU_TOPO_MAX_NODE + 1,
					ndist);
		if (rc != MU_OK)
			return mu__disc_bad(d, rc, path, "distance list");
	} else if (rc != MU_ENOENT) {
		return rc;
	}
	return MU_OK;
}

/* The N of a "nodeN" entry (decimal, no sign, no leading zero), or -1. */
static int32_t node_id(const char *name)
{
	const char *s = name + 4;
	size_t n = strncmp(name, "node", 4) ? 0 : strlen(s);
	int64_t v;
	if (n == 0 || strspn(s, "0123456789") != n || (s[0] == '0' && n > 1) ||
	    mu__sysfs_int(s, n, 0, MU_TOPO_MAX_NODE, &v) != MU_OK)
		return -1;
	return (int32_t)v;
}

static int id_cmp(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

/* Collects the sorted ids of the nodeN entries in names into ids (room for
 * MU_TOPO_MAX_NODE + 1); returns their count. */
static int32_t node_ids(const mu__names_t *names, int32_t *ids)
{
	int32_t n = 0;
	for (int32_t i = 0; i < names->n && n <= MU_TOPO_MAX_NODE; i++) {
		int32_t id = node_id(names->v[i]);
		if (id >= 0)
			ids[n++] = id;
	}
	qsort(ids, (size_t)n, sizeof *ids, id_cmp);
	return n;
}

/* Keeps the distances of node i (dist[0..nd)) when they cover every node;
 * returns false when they do not. */
static bool keep_dist(mu_topo_t *t, int32_t i, const int32_t *dist,
		      int32_t nd)
{
	if (nd != t->nnodes)
		return false;
	t->nodes[i].dist = malloc((size_t)nd * sizeof *dist);
	if (!t->nodes[i].dist)
		return false;
	memcpy(t->nodes[i].dist, dist, (size_t)nd * sizeof *dist);
	return true;
}

/* Reads every nodeN of ids[0..n) into t->nodes, which it allocates.  When
 * a node's distances are missing or do not have one entry per node, all
 * distances are dropped with a note. */
static int read_nodes(mu__disc_t *d, const int32_t *ids, int32_t n,
		      int32_t *dist)
{
	mu_topo_t *t = d->t;
	t->nodes = calloc((size_t)n, sizeof *t->nodes);
	if (!t->nodes)
		return mu__disc_err(d, MU_ENOMEM, d->root, "out of memory");
	t->nnodes = n;
	int32_t bad = -1, bad_n = 0;
	for (int32_t i = 0; i < n; i++) {
		int32_t nd;
		t->nodes[i].id = ids[i];
		int rc = read_node(d, &t->nodes[i], dist, &nd);
		if (rc != MU_OK)
			return rc;
		if (bad < 0 && !keep_dist(t, i, dist, nd)) {
			bad = ids[i];
			bad_n = nd;
		}
	}
	if (bad < 0)
		return MU_OK;
	for (int32_t i = 0; i < n; i++) {
		free(t->nodes[i].dist);
		t->nodes[i].dist = NULL;
	}
	t->flags |= MU_TOPO_NO_COSTS;
	if (bad_n)
		mu__topo_note(t, "node%d/distance has %d entries for %d nodes; "
			      "costs left out", (int)bad, (int)bad_n, (int)n);
	else
		mu__topo_note(t, "node%d/distance is missing; costs left out",
			      (int)bad);
	return MU_OK;
}

/* Fills t->nodes from devices/system/node.  Leaves t->nnodes 0, with no
 * error, when the directory or its nodeN entries are missing. */
static int discover_nodes(mu__disc_t *d)
{
	char path[4096];
	if (mu__path(path, sizeof path, "%s/devices/system/node", d->root))
		return mu__disc_err(d, MU_ELIMIT, d->root, "path too long");
	mu__names_t names = {0};
	int rc = mu__list_dir(path, &names);
	if (rc == MU_ENOENT)
		return MU_OK;
	if (rc != MU_OK)
		return mu__disc_err(d, rc, path, "cannot list: %s", mu_strerror(rc));
	int32_t *ids = malloc((MU_TOPO_MAX_NODE + 1) * sizeof *ids);
	int32_t *dist = malloc((MU_TOPO_MAX_NODE + 1) * sizeof *dist);
	if (!ids || !dist) {
		rc = mu__disc_err(d, MU_ENOMEM, path, "out of memory");
	} else {
		int32_t n = node_ids(&names, ids);
		if (n == 0)
			mu__topo_note(d->t, "devices/system/node has no nodeN entries");
		else
			rc = read_nodes(d, ids, n, dist);
	}
	free(ids);
	free(dist);
	mu__names_release(&names);
	return rc;
}

/* One zone, node 0, with the CPUs of devices/system/cpu/online and no
 * memory size: for kernels without NUMA information. */
static int discover_flat(mu__disc_t *d)
{
	char path[4096];
	mu_topo_t *t = d->t;
	if (mu__path(path, sizeof path, "%s/devices/system/cpu/online", d->root))
		return mu__disc_err(d, MU_ELIMIT, d->root, "path too long");
	int rc = mu__disc_read(d, path, true);
	if (rc == MU_ENOENT)
		return mu__disc_err(d, rc, d->root,
				    "not a sysfs tree: neither devices/system/node "
				    "nor devices/system/cpu/online");
	if (rc != MU_OK)
		return rc;
	t->nodes = calloc(1, sizeof *t->nodes);
	if (!t->nodes)
		return mu__disc_err(d, MU_ENOMEM, d->root, "out of memory");
	t->nnodes = 1;
	t->nodes[0].mem_bytes = -1;
	rc = mu_cpulist_parse(d->buf, d->len, &t->nodes[0].cpus);
	if (rc != MU_OK)
		return mu__disc_bad(d, rc, path, "cpulist");
	t->flags |= MU_TOPO_NO_NUMA;
	return MU_OK;
}

int mu_topo_discover(const char *sysfs_root, mu_topo_t *t, mu_diag_t *diag)
{
	mu__disc_t d = {sysfs_root ? sysfs_root : "/sys", NULL, 0, t, diag};
	struct stat st;
	if (diag)
		diag->msg[0] = '\0';
	if (stat(d.root, &st) != 0 || !S_ISDIR(st.st_mode))
		return mu__disc_err(&d, MU_ENOENT, d.root, "no such directory");
	d.buf = malloc(MU_TOPO_MAX_FILE);
	if (!d.buf)
		return mu__disc_err(&d, MU_ENOMEM, d.root, "out of memory");
	int rc = discover_nodes(&d);
	if (rc == MU_OK && t->nnodes == 0)
		rc = discover_flat(&d);
	if (rc == MU_OK)
		rc = mu__discover_pci(&d);
	free(d.buf);
	if (rc != MU_OK)
		mu_topo_release(t);
	return rc;
}

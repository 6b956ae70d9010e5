/*
 * pci.c - finds the GPUs and NICs of a sysfs tree and how they are linked.
 *
 * Every entry of bus/pci/devices whose name is a PCI address is looked at;
 * its class picks it: 0x0300xx (VGA) and 0x0302xx (3D) from a vendor with a
 * GPU resource name are GPUs, 0x0200xx (Ethernet) and 0x0207xx (InfiniBand)
 * are NICs, everything else (bridges, a BMC's VGA, NVMe) is skipped.
 *
 * Link groups.  On a live host bus/pci/devices/ADDR is a symlink into
 * devices/pciDDDD:BB/ROOTPORT/.../ADDR; the root port below the host bridge
 * is the device's PCIe domain, and GPUs in one domain (behind one PCIe
 * switch tree) form a "pcie" group: peer-to-peer traffic between them does
 * not cross the CPU.  A tree of plain directories has no hierarchy, so each
 * device is its own domain.  NVLink is not visible in sysfs: a recorded tree
 * may hold, in a GPU's directory, muster's nvlink_peers file (the PCI
 * addresses of the GPUs it has NVLinks to); the connected components with
 * two or more GPUs are "nvlink" islands.  A link named on one side counts.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/sysfs.h"

enum { MAX_EDGES = MU_TOPO_MAX_DEVS * 16 };

/* An NVLink named in an nvlink_peers file, by addresses. */
typedef struct edge {
	char a[MU_PCI_ADDR_LEN], b[MU_PCI_ADDR_LEN];
} edge_t;

/* The state of one scan of bus/pci/devices; everything here is owned by
 * mu__discover_pci() and freed before it returns. */
typedef struct scan {
	mu__disc_t *d;
	int32_t capg, capn;             /* room in t->gpus, t->nics */
	edge_t *e;
	int32_t ne, cape;
	char (*peers)[MU_PCI_ADDR_LEN]; /* MU_TOPO_MAX_DEVS, one file's */
} scan_t;

const char *mu_gpu_resource(uint16_t vendor)
{
	switch (vendor) {
	case 0x10de:
		return "nvidia.com/gpu";
	case 0x1002:
		return "amd.com/gpu";
	default:
		return NULL;
	}
}

/* Reads DIR/NAME as a hex value up to max.  MU_ENOENT (no diag) when it is
 * missing and optional. */
static int read_hex(mu__disc_t *d, const char *dir, const char *name,
		    uint32_t max, bool optional, uint32_t *out)
{
	char path[4096];
	if (mu__path(path, sizeof path, "%s/%s", dir, name))
		return mu__disc_err(d, MU_ELIMIT, dir, "path too long");
	int rc = mu__disc_read(d, path, optional);
	if (rc != MU_OK)
		return rc;
	rc = mu__sysfs_hex(d->buf, d->len, max, out);
	return rc == MU_OK ? rc : mu__disc_bad(d, rc, path, "hex value");
}

/* Reads DIR/numa_node: -1 when missing. */
static int read_numa(mu__disc_t *d, const char *dir, int32_t *out)
{
	char path[4096];
	int64_t v;
	if (mu__path(path, sizeof path, "%s/numa_node", dir))
		return mu__disc_err(d, MU_ELIMIT, dir, "path too long");
	int rc = mu__disc_read(d, path, true);
	*out = -1;
	if (rc == MU_ENOENT)
		return MU_OK;
	if (rc != MU_OK)
		return rc;
	rc = mu__sysfs_int(d->buf, d->len, -1, MU_TOPO_MAX_NODE, &v);
	if (rc != MU_OK)
		return mu__disc_bad(d, rc, path, "numa_node");
	*out = (int32_t)v;
	return MU_OK;
}

/* True when c is "pciD:BB", the directory of a PCI host bridge. */
static bool is_host_bridge(const char *c, size_t len)
{
	char tmp[MU_PCI_ADDR_LEN];
	if (len < 4 || len > 3 + 8 + 3 || strncmp(c, "pci", 3) != 0)
		return false;
	/* Reuse the address parser on "D:BB:00.0". */
	char buf[24];
	snprintf(buf, sizeof buf, "%.*s:00.0", (int)(len - 3), c + 3);
	return mu__pci_addr(buf, strlen(buf), tmp) == MU_OK;
}

/* Sets v->pcie_root from the symlink at dev (bus/pci/devices/ADDR ->
 * ../../../devices/pciD:BB/ROOTPORT/.../ADDR): the component after the host
 * bridge's, or v's own address when dev is no symlink or names no host
 * bridge.  The link is only read, never followed. */
static void set_pcie_root(const char *dev, mu_pci_dev_t *v)
{
	char link[4096];
	memcpy(v->pcie_root, v->addr, sizeof v->addr);
	ssize_t n = readlink(dev, link, sizeof link);
	if (n <= 0 || (size_t)n >= sizeof link)
		return;
	link[n] = '\0';
	const char *p = link, *prev = NULL;
	size_t prevlen = 0;
	while (*p) {
		size_t cl = strcspn(p, "/");
		if (prev && is_host_bridge(prev, prevlen)) {
			char a[MU_PCI_ADDR_LEN];
			if (mu__pci_addr(p, cl, a) == MU_OK)
				memcpy(v->pcie_root, a, sizeof a);
			return;
		}
		prev = p;
		prevlen = cl;
		p += cl;
		p += *p == '/';
	}
}

/* Copies the first acceptable interface name in DIR into out; returns
 * MU_ENOMEM only, every other failure leaves out empty. */
static int first_ifname(mu__disc_t *d, const char *dir, const char *addr,
			char out[MU_IFNAME_LEN])
{
	mu__names_t l = {0};
	int rc = mu__list_dir(dir, &l);
	if (rc == MU_ENOMEM)
		return rc;
	for (int32_t i = 0; i < l.n && !out[0]; i++) {
		if (mu__ifname_ok(l.v[i]))
			memcpy(out, l.v[i], strlen(l.v[i]) + 1);
		else
			mu__topo_note(d->t, "%s: interface name %.32s skipped",
				      addr, l.v[i]);
	}
	mu__names_release(&l);
	return MU_OK;
}

/* A NIC's interface name: from DEV/net, or DEV/virtioN/net (virtio-net). */
static int nic_name(mu__disc_t *d, const char *dev, mu_pci_dev_t *v)
{
	char path[4096];
	v->name[0] = '\0';
	if (mu__path(path, sizeof path, "%s/net", dev))
		return MU_OK;
	int rc = first_ifname(d, path, v->addr, v->name);
	if (rc != MU_OK || v->name[0])
		return rc;
	mu__names_t l = {0};
	rc = mu__list_dir(dev, &l);
	for (int32_t i = 0; rc == MU_OK && i < l.n && !v->name[0]; i++)
		if (!strncmp(l.v[i], "virtio", 6) &&
		    !mu__path(path, sizeof path, "%s/%s/net", dev, l.v[i]))
			rc = first_ifname(d, path, v->addr, v->name);
	mu__names_release(&l);
	return rc == MU_ENOMEM ? rc : MU_OK;
}

/* Reads DEV/nvlink_peers, if any, into edges from v. */
static int read_peers(scan_t *s, const char *dev, const mu_pci_dev_t *v)
{
	char path[4096];
	int32_t n;
	if (mu__path(path, sizeof path, "%s/nvlink_peers", dev))
		return mu__disc_err(s->d, MU_ELIMIT, dev, "path too long");
	int rc = mu__disc_read(s->d, path, true);
	if (rc == MU_ENOENT)
		return MU_OK;
	if (rc != MU_OK)
		return rc;
	rc = mu__sysfs_peers(s->d->buf, s->d->len, s->peers, MU_TOPO_MAX_DEVS, &n);
	if (rc != MU_OK)
		return mu__disc_bad(s->d, rc, path,
				    "list of PCI addresses (\"0000:07:00.0 ...\")");
	if (n > MAX_EDGES - s->ne)
		return mu__disc_err(s->d, MU_ELIMIT, path,
				    "more than %d NVLinks in all", MAX_EDGES);
	if (s->ne + n > s->cape) {
		int32_t ncap = s->cape ? s->cape : 64;
		while (ncap < s->ne + n)
			ncap *= 2;
		edge_t *ne = realloc(s->e, (size_t)ncap * sizeof *ne);
		if (!ne)
			return mu__disc_err(s->d, MU_ENOMEM, path, "out of memory");
		s->e = ne;
		s->cape = ncap;
	}
	for (int32_t i = 0; i < n; i++) {
		memcpy(s->e[s->ne].a, v->addr, sizeof v->addr);
		memcpy(s->e[s->ne].b, s->peers[i], sizeof s->peers[i]);
		s->ne++;
	}
	return MU_OK;
}

/* Appends v to *arr (room *cap, count *n), at most MU_TOPO_MAX_DEVS. */
static int push_dev(scan_t *s, mu_pci_dev_t **arr, int32_t *n, int32_t *cap,
		    const mu_pci_dev_t *v)
{
	if (*n == MU_TOPO_MAX_DEVS)
		return mu__disc_err(s->d, MU_ELIMIT, s->d->root,
				    "more than %d GPUs or NICs", MU_TOPO_MAX_DEVS);
	if (*n == *cap) {
		int32_t ncap = *cap ? *cap * 2 : 16;
		mu_pci_dev_t *na = realloc(*arr, (size_t)ncap * sizeof *na);
		if (!na)
			return mu__disc_err(s->d, MU_ENOMEM, s->d->root, "out of memory");
		*arr = na;
		*cap = ncap;
	}
	(*arr)[(*n)++] = *v;
	return MU_OK;
}

/* Looks at bus/pci/devices/NAME (dev is its path, v->addr set): keeps it
 * when it is a GPU or NIC. */
static int scan_dev(scan_t *s, const char *dev, mu_pci_dev_t *v)
{
	mu__disc_t *d = s->d;
	uint32_t cls, vendor, device;
	int rc = read_hex(d, dev, "class", 0xffffff, true, &cls);
	if (rc != MU_OK)
		return rc == MU_ENOENT ? MU_OK : rc;
	uint32_t sub = cls >> 8;
	bool gpu = sub == 0x0300 || sub == 0x0302;
	bool nic = sub == 0x0200 || sub == 0x0207;
	if (!gpu && !nic)
		return MU_OK;
	if ((rc = read_hex(d, dev, "vendor", 0xffff, false, &vendor)) != MU_OK ||
	    (rc = read_hex(d, dev, "device", 0xffff, false, &device)) != MU_OK ||
	    (rc = read_numa(d, dev, &v->numa_node)) != MU_OK)
		return rc;
	if (gpu && !mu_gpu_resource((uint16_t)vendor))
		return MU_OK;
	v->class_code = cls;
	v->vendor = (uint16_t)vendor;
	v->device = (uint16_t)device;
	v->pcie_group = v->nvlink_group = -1;
	set_pcie_root(dev, v);
	if (gpu) {
		rc = read_peers(s, dev, v);
		return rc == MU_OK ? push_dev(s, &d->t->gpus, &d->t->ngpus, &s->capg, v)
				   : rc;
	}
	rc = nic_name(d, dev, v);
	if (rc != MU_OK)
		return mu__disc_err(d, rc, dev, "out of memory");
	return push_dev(s, &d->t->nics, &d->t->nnics, &s->capn, v);
}

static int dev_cmp(const void *a, const void *b)
{
	return strcmp(((const mu_pci_dev_t *)a)->addr,
		      ((const mu_pci_dev_t *)b)->addr);
}

/* Sorts arr[0..n) by address; a duplicate is an error. */
static int sort_devs(scan_t *s, const char *dir, mu_pci_dev_t *arr, int32_t n)
{
	if (n > 1)
		qsort(arr, (size_t)n, sizeof *arr, dev_cmp);
	for (int32_t i = 1; i < n; i++)
		if (!strcmp(arr[i - 1].addr, arr[i].addr))
			return mu__disc_err(s->d, MU_EPARSE, dir,
					    "two entries for PCI address %s",
					    arr[i].addr);
	return MU_OK;
}

/* Walks bus/pci/devices; MU_OK with no devices when it is missing. */
static int scan_all(scan_t *s)
{
	char dir[4096], dev[4096];
	mu__disc_t *d = s->d;
	if (mu__path(dir, sizeof dir, "%s/bus/pci/devices", d->root))
		return mu__disc_err(d, MU_ELIMIT, d->root, "path too long");
	mu__names_t l = {0};
	int rc = mu__list_dir(dir, &l);
	if (rc == MU_ENOENT) {
		mu__topo_note(d->t, "no bus/pci/devices: no GPUs or NICs seen");
		return MU_OK;
	}
	if (rc != MU_OK)
		return mu__disc_err(d, rc, dir, "cannot list: %s", mu_strerror(rc));
	for (int32_t i = 0; rc == MU_OK && i < l.n; i++) {
		mu_pci_dev_t v;
		memset(&v, 0, sizeof v);
		if (mu__pci_addr(l.v[i], strlen(l.v[i]), v.addr) != MU_OK)
			continue;
		if (mu__path(dev, sizeof dev, "%s/%s", dir, l.v[i]))
			rc = mu__disc_err(d, MU_ELIMIT, dir, "path too long");
		else
			rc = scan_dev(s, dev, &v);
	}
	mu__names_release(&l);
	if (rc == MU_OK)
		rc = sort_devs(s, dir, d->t->gpus, d->t->ngpus);
	if (rc == MU_OK)
		rc = sort_devs(s, dir, d->t->nics, d->t->nnics);
	return rc;
}

/* Puts v in the zone of its NUMA node: the first zone when the kernel
 * reported none (-1) or one that has no node directory. */
static void place(mu_topo_t *t, mu_pci_dev_t *v)
{
	v->zone = 0;
	if (v->numa_node < 0) {
		t->flags |= MU_TOPO_NUMA_ASSUMED;
		return;
	}
	for (int32_t i = 0; i < t->nnodes; i++) {
		if (t->nodes[i].id == v->numa_node) {
			v->zone = i;
			return;
		}
	}
	mu__topo_note(t, "%s: numa_node %d has no node directory; placed in node-%d",
		      v->addr, (int)v->numa_node, (int)t->nodes[0].id);
}

/* Numbers the PCIe domains that hold GPUs (pcie0, pcie1, ... in address
 * order of their first GPU) and gives NICs in those domains the same
 * number.  O(devices * GPUs). */
static void group_pcie(mu_topo_t *t)
{
	for (int32_t i = 0; i < t->ngpus; i++) {
		mu_pci_dev_t *g = &t->gpus[i];
		for (int32_t j = 0; j < i && g->pcie_group < 0; j++)
			if (!strcmp(t->gpus[j].pcie_root, g->pcie_root))
				g->pcie_group = t->gpus[j].pcie_group;
		if (g->pcie_group < 0)
			g->pcie_group = t->n_pcie++;
	}
	for (int32_t i = 0; i < t->nnics; i++) {
		mu_pci_dev_t *n = &t->nics[i];
		for (int32_t j = 0; j < t->ngpus && n->pcie_group < 0; j++)
			if (!strcmp(t->gpus[j].pcie_root, n->pcie_root))
				n->pcie_group = t->gpus[j].pcie_group;
	}
}

/* The index of the GPU at addr, or -1. */
static int32_t gpu_index(const mu_topo_t *t, const char *addr)
{
	int32_t a = 0, b = t->ngpus;
	while (a < b) {
		int32_t m = a + (b - a) / 2;
		int c = strcmp(addr, t->gpus[m].addr);
		if (!c)
			return m;
		if (c < 0)
			b = m;
		else
			a = m + 1;
	}
	return -1;
}

static int32_t uf_find(int32_t *up, int32_t x)
{
	while (up[x] != x) {
		up[x] = up[up[x]];
		x = up[x];
	}
	return x;
}

/* Joins GPUs along the NVLink edges (union-find) and numbers the islands
 * of two or more GPUs nvlink0, nvlink1, ... in address order of their
 * first GPU.  O(edges + GPUs); uses up to 3 * ngpus ints. */
static int group_nvlink(scan_t *s)
{
	mu_topo_t *t = s->d->t;
	if (!s->ne)
		return MU_OK;
	int32_t *up = malloc((size_t)t->ngpus * 3 * sizeof *up);
	if (!up)
		return mu__disc_err(s->d, MU_ENOMEM, s->d->root, "out of memory");
	int32_t *size = up + t->ngpus, *gid = size + t->ngpus;
	for (int32_t i = 0; i < t->ngpus; i++) {
		up[i] = i;
		size[i] = 1;
		gid[i] = -1;
	}
	for (int32_t k = 0; k < s->ne; k++) {
		int32_t a = gpu_index(t, s->e[k].a), b = gpu_index(t, s->e[k].b);
		if (b < 0) {
			mu__topo_note(t, "%s/nvlink_peers names %s, not a GPU here",
				      s->e[k].a, s->e[k].b);
			continue;
		}
		a = uf_find(up, a);
		b = uf_find(up, b);
		if (a != b) {
			up[b] = a;
			size[a] += size[b];
		}
	}
	for (int32_t i = 0; i < t->ngpus; i++) {
		int32_t r = uf_find(up, i);
		if (size[r] < 2)
			continue;
		if (gid[r] < 0)
			gid[r] = t->n_nvlink++;
		t->gpus[i].nvlink_group = gid[r];
	}
	free(up);
	return MU_OK;
}

int mu__discover_pci(mu__disc_t *d)
{
	scan_t s;
	memset(&s, 0, sizeof s);
	s.d = d;
	s.peers = malloc(MU_TOPO_MAX_DEVS * sizeof *s.peers);
	int rc = s.peers ? scan_all(&s)
			 : mu__disc_err(d, MU_ENOMEM, d->root, "out of memory");
	if (rc == MU_OK) {
		for (int32_t i = 0; i < d->t->ngpus; i++)
			place(d->t, &d->t->gpus[i]);
		for (int32_t i = 0; i < d->t->nnics; i++)
			place(d->t, &d->t->nics[i]);
		group_pcie(d->t);
		rc = group_nvlink(&s);
	}
	free(s.peers);
	free(s.e);
	return rc;
}

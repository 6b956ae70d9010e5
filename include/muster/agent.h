/*
 * agent.h - the node agent: discovers a host's hardware topology from sysfs
 * and writes it as a topology.node.k8s.io/v1alpha2 NodeResourceTopology.
 *
 * mu_topo_discover() reads, under a sysfs root ("/sys" on a live host, or a
 * recorded tree such as tests/data/sysfs/dgx8):
 *   devices/system/node/nodeN/{cpulist,meminfo,distance}   NUMA nodes
 *   devices/system/cpu/online            CPUs when there is no NUMA info
 *   bus/pci/devices/ADDR/{class,vendor,device,numa_node}   GPUs and NICs
 *   bus/pci/devices/ADDR/net/IFNAME      a NIC's interface names
 *   bus/pci/devices/ADDR/nvlink_peers    muster's own, optional: NVLink
 *                                        peers recorded from the driver
 * and fills a mu_topo_t that it owns until mu_topo_release().  Every file is
 * untrusted: reads are bounded (MU_TOPO_MAX_FILE), ids and counts are
 * capped, malformed content is an error naming the file.  docs/agent.md
 * describes the output and its muster.io/ attributes.
 */
#ifndef MUSTER_AGENT_H
#define MUSTER_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "muster/error.h"
#include "muster/load.h" /* mu_diag_t */

enum {
	MU_TOPO_MAX_CPU = 65535,     /* highest CPU id accepted */
	MU_TOPO_MAX_NODE = 1023,     /* highest NUMA node id accepted */
	MU_TOPO_MAX_FILE = 65536,    /* bytes read from one file, at most */
	MU_TOPO_MAX_DIRENT = 65536,  /* entries read from one directory */
	MU_TOPO_MAX_DEVS = 4096,     /* GPUs, and NICs, kept at most */
	MU_PCI_ADDR_LEN = 20,        /* "dddd:bb:dd.f" (domain up to 8 digits) */
	MU_IFNAME_LEN = 16,          /* a Linux interface name and its NUL */
};

/* A set of CPU ids as sorted, disjoint, non-adjacent ranges [lo, hi]. */
typedef struct mu_cpu_range {
	int32_t lo, hi;
} mu_cpu_range_t;

typedef struct mu_cpulist {
	mu_cpu_range_t *r; /* owned; n used of cap */
	int32_t n, cap;
} mu_cpulist_t;

void mu_cpulist_init(mu_cpulist_t *l);
void mu_cpulist_release(mu_cpulist_t *l);
/* Parses a kernel cpulist ("0-3,8,10-11", maybe ending in a newline; empty
 * is the empty set) of len bytes (no NUL needed) into out, which must be
 * initialised and is replaced.  Ranges may overlap or come in any order; the
 * result is canonical.  MU_EPARSE on anything else, MU_ERANGE on an id above
 * MU_TOPO_MAX_CPU or a range with hi < lo.  Work is O(len log len). */
int mu_cpulist_parse(const char *buf, size_t len, mu_cpulist_t *out);
/* The number of CPUs in l. */
int32_t mu_cpulist_count(const mu_cpulist_t *l);
bool mu_cpulist_has(const mu_cpulist_t *l, int32_t cpu);
/* Writes the canonical text ("0-3,8,10-11", "" for the empty set) into buf
 * like snprintf: returns the length it needs, writes at most len bytes with
 * a NUL when len > 0. */
size_t mu_cpulist_format(const mu_cpulist_t *l, char *buf, size_t len);

/* One NUMA node. */
typedef struct mu_numa_node {
	int32_t id;         /* N of devices/system/node/nodeN */
	mu_cpulist_t cpus;  /* owned */
	int64_t mem_bytes;  /* MemTotal, -1 when unknown */
	int32_t *dist;      /* owned; dist[j] = distance to nodes[j], or NULL */
} mu_numa_node_t;

/* A GPU or NIC on the PCI bus. */
typedef struct mu_pci_dev {
	char addr[MU_PCI_ADDR_LEN];      /* canonical "0000:07:00.0" */
	char pcie_root[MU_PCI_ADDR_LEN]; /* the root port above it, or addr
					  * itself when it sits on a root bus
					  * or the tree has no hierarchy */
	uint16_t vendor, device;
	uint32_t class_code;             /* 24 bits, e.g. 0x030200 */
	int32_t numa_node;               /* as read; -1 = not reported */
	int32_t zone;                    /* index into mu_topo_t.nodes */
	int32_t pcie_group;              /* GPUs: always >= 0; NICs: the group
					  * of GPUs under the same root port,
					  * or -1 */
	int32_t nvlink_group;            /* GPUs: NVLink island, or -1 */
	char name[MU_IFNAME_LEN];        /* NICs: first net/ interface or "" */
} mu_pci_dev_t;

/* Flags in mu_topo_t.flags. */
enum {
	MU_TOPO_NO_NUMA = 1,       /* no devices/system/node: one zone from
				    * devices/system/cpu/online */
	MU_TOPO_NUMA_ASSUMED = 2,  /* some device had numa_node -1 and was put
				    * in the first zone */
	MU_TOPO_NO_COSTS = 4,      /* distances missing or inconsistent */
};

typedef struct mu_topo {
	mu_numa_node_t *nodes;  /* owned, sorted by id; nnodes >= 1 */
	int32_t nnodes;
	mu_pci_dev_t *gpus;     /* owned, sorted by address */
	int32_t ngpus;
	mu_pci_dev_t *nics;     /* owned, sorted by address */
	int32_t nnics;
	int32_t n_pcie, n_nvlink; /* link groups pcie0.., nvlink0.. */
	unsigned flags;
	char notes[1024];       /* "; "-separated oddities that were
				 * tolerated, or "" */
} mu_topo_t;

void mu_topo_init(mu_topo_t *t);
void mu_topo_release(mu_topo_t *t);

/* Reads the topology under sysfs_root (NULL = "/sys") into t, which must be
 * initialised and empty.  On error returns a negative mu_err_t, fills diag
 * (if not NULL) with "PATH: what was wrong" and leaves t empty.  A missing
 * optional file is not an error; a missing root, or a root with neither
 * devices/system/node nor devices/system/cpu/online, is MU_ENOENT. */
int mu_topo_discover(const char *sysfs_root, mu_topo_t *t, mu_diag_t *diag);

/* The resource name GPUs of this vendor are counted under
 * ("nvidia.com/gpu", "amd.com/gpu"), or NULL for vendors that are not
 * counted as GPUs (e.g. a BMC's VGA). */
const char *mu_gpu_resource(uint16_t vendor);

typedef enum mu_topo_format {
	MU_TOPO_JSON,
	MU_TOPO_YAML,
} mu_topo_format_t;

/* Writes t as a NodeResourceTopology named node_name to f.  Returns MU_OK,
 * MU_ENOMEM, or MU_EIO when f reports an error. */
int mu_topo_write(const mu_topo_t *t, const char *node_name,
		  mu_topo_format_t fmt, FILE *f);

#endif

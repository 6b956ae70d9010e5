/*
 * nodes_sim.c - simulated kubelets, like KWOK's.
 *
 * The nodes of the cluster file (mu_load_file: Node, NodePool, CSV node
 * lists) become Node objects that report Ready, their capacity, a
 * NodeResourceTopology with NUMA zones, and heartbeats; the file's queues
 * become muster Queues.  Nodes annotated muster.io/simulated=true that
 * appear later (kubectl apply) are adopted too.
 *
 * A pod bound to a simulated node starts Running (conditions, container
 * statuses, a Started event), and if it has the annotation
 * muster.io/duration it Succeeds that long after it started; otherwise it
 * runs until deleted.  A pod being deleted is removed once its simulated
 * containers stop: at once, or after its muster.io/stop-after duration
 * (at most its grace period), as a real pod that takes time to shut down.  Annotating a node
 * muster.io/node-state=failed (`muster node fail`) makes it NotReady with
 * the unreachable taints and fails its pods (reason NodeLost); removing the
 * annotation recovers it.
 *
 * Work is queued as actions on a time-ordered heap by mu__sim_event() and
 * run by mu__sim_tick() in transactions of at most MU__TX_MAX writes, so a
 * burst of bindings costs few commits.  All of it runs on the controller
 * thread; nothing here is shared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"
#include "apiserver/ssa.h"
#include "muster/load.h"
#include "muster/util.h"

enum { ACT_START, ACT_COMPLETE, ACT_FAIL, ACT_FINALIZE, ACT_NODE_FAIL, ACT_NODE_RECOVER };

typedef struct action {
	int64_t at;       /* monotonic ms */
	int kind;
	char *ns, *name, *uid;
} action_t;

typedef struct simnode {
	char *name;
	bool failed;
} simnode_t;

struct mu__sim {
	mu_apiserver_t *s;
	simnode_t *nodes;   /* sorted by name */
	size_t n, cap;
	action_t *heap;
	size_t nheap, heapcap;
	int64_t next_hb;
	mu__mf_memo_t *memo; /* managedFields of the kubelets' status writes, by shape */
	mu__evcorr_t *events; /* the kubelets' Events' correlator (events_corr.c; NULL: none) */
	int64_t now;          /* the tick's now, for the correlator */
};

/* --- nodes -------------------------------------------------------------- */

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const simnode_t *)a)->name, ((const simnode_t *)b)->name);
}

static simnode_t *node_find(mu__sim_t *sim, const char *name)
{
	simnode_t key = {(char *)name, false};
	return name && sim->n ? bsearch(&key, sim->nodes, sim->n, sizeof key, node_cmp) : NULL;
}

/* Adds a node name (keeping the array sorted); O(n) per insert. */
static int node_add(mu__sim_t *sim, const char *name)
{
	if (node_find(sim, name))
		return MU_OK;
	if (sim->n == sim->cap) {
		size_t nc = sim->cap ? sim->cap * 2 : 64;
		simnode_t *nn = realloc(sim->nodes, nc * sizeof *nn);
		if (!nn)
			return MU_ENOMEM;
		sim->nodes = nn;
		sim->cap = nc;
	}
	size_t i = sim->n;
	while (i > 0 && strcmp(sim->nodes[i - 1].name, name) > 0)
		i--;
	memmove(sim->nodes + i + 1, sim->nodes + i, (sim->n - i) * sizeof *sim->nodes);
	sim->nodes[i].name = strdup(name);
	sim->nodes[i].failed = false;
	sim->n++;
	return sim->nodes[i].name ? MU_OK : MU_ENOMEM;
}

/* --- the action heap ---------------------------------------------------- */

static void heap_swap(action_t *a, action_t *b)
{
	action_t t = *a;
	*a = *b;
	*b = t;
}

static void push(mu__sim_t *sim, int64_t at, int kind, const char *ns, const char *name, const char *uid)
{
	if (sim->nheap == sim->heapcap) {
		size_t nc = sim->heapcap ? sim->heapcap * 2 : 256;
		action_t *nh = realloc(sim->heap, nc * sizeof *nh);
		if (!nh)
			return;
		sim->heap = nh;
		sim->heapcap = nc;
	}
	action_t *a = &sim->heap[sim->nheap];
	a->at = at;
	a->kind = kind;
	a->ns = strdup(ns ? ns : "");
	a->name = strdup(name ? name : "");
	a->uid = strdup(uid ? uid : "");
	for (size_t i = sim->nheap++; i > 0 && sim->heap[(i - 1) / 2].at > sim->heap[i].at; i = (i - 1) / 2)
		heap_swap(&sim->heap[i], &sim->heap[(i - 1) / 2]);
}

static action_t pop(mu__sim_t *sim)
{
	action_t top = sim->heap[0];
	sim->heap[0] = sim->heap[--sim->nheap];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < sim->nheap && sim->heap[l].at < sim->heap[m].at)
			m = l;
		if (r < sim->nheap && sim->heap[r].at < sim->heap[m].at)
			m = r;
		if (m == i)
			break;
		heap_swap(&sim->heap[i], &sim->heap[m]);
		i = m;
	}
	return top;
}

static void action_free(action_t *a)
{
	free(a->ns);
	free(a->name);
	free(a->uid);
}

/* --- building objects --------------------------------------------------- */

static json_t *qty(int64_t v, bool milli)
{
	char b[48];
	if (milli && v % 1000)
		snprintf(b, sizeof b, "%lldm", (long long)v);
	else if (milli)
		snprintf(b, sizeof b, "%lld", (long long)(v / 1000));
	else if (v && v % (1LL << 30) == 0)
		snprintf(b, sizeof b, "%lldGi", (long long)(v >> 30));
	else if (v && v % (1LL << 20) == 0)
		snprintf(b, sizeof b, "%lldMi", (long long)(v >> 20));
	else if (v && v % 1024 == 0)
		snprintf(b, sizeof b, "%lldKi", (long long)(v >> 10));
	else
		snprintf(b, sizeof b, "%lld", (long long)v);
	return json_string(b);
}

static json_t *capacity(const mu_node_spec_t *n)
{
	json_t *c = json_object();
	json_object_set_new(c, "cpu", qty(n->alloc.v[MU_RES_CPU], true));
	json_object_set_new(c, "memory", qty(n->alloc.v[MU_RES_MEM], false));
	json_object_set_new(c, "pods", qty(n->alloc.v[MU_RES_PODS] ? n->alloc.v[MU_RES_PODS] : 110, false));
	json_object_set_new(c, "ephemeral-storage", json_string("100Gi"));
	if (n->alloc.v[MU_RES_GPU])
		json_object_set_new(c, "nvidia.com/gpu", qty(n->alloc.v[MU_RES_GPU], false));
	for (size_t i = 0; i < n->next; i++)
		json_object_set_new(c, n->ext[i].name, qty(n->ext[i].qty, false));
	return c;
}

static json_t *ready_conditions(bool ready)
{
	char ts[40];
	mu__timestamp(ts, sizeof ts, false);
	json_t *a = json_array();
	static const char *const press[][3] = {
		{"MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
		{"DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
		{"PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
	};
	for (int i = 0; i < 3; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", press[i][0], "status",
						   "False", "reason", press[i][1], "message", press[i][2],
						   "lastHeartbeatTime", ts, "lastTransitionTime", ts));
	json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", "Ready", "status",
					   ready ? "True" : "Unknown", "reason",
					   ready ? "KubeletReady" : "NodeStatusUnknown", "message",
					   ready ? "kubelet is posting ready status" : "Kubelet stopped posting node status.",
					   "lastHeartbeatTime", ts, "lastTransitionTime", ts));
	return a;
}

static json_t *node_json(const mu_node_spec_t *n)
{
	json_t *labels = json_object();
	for (size_t i = 0; i < n->nlabels; i++)
		json_object_set_new(labels, n->labels[i].key, json_string(n->labels[i].value));
	json_object_set_new(labels, "kubernetes.io/hostname", json_string(n->name));
	json_object_set_new(labels, "kubernetes.io/os", json_string("linux"));
	json_object_set_new(labels, "kubernetes.io/arch", json_string("amd64"));
	json_object_set_new(labels, "type", json_string("muster-sim"));
	json_t *taints = json_array();
	static const char *const eff[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
	for (size_t i = 0; i < n->ntaints; i++) {
		json_t *t = json_pack("{s:s, s:s}", "key", n->taints[i].key, "effect", eff[n->taints[i].effect]);
		if (n->taints[i].value && *n->taints[i].value)
			json_object_set_new(t, "value", json_string(n->taints[i].value));
		json_array_append_new(taints, t);
	}
	json_t *spec = json_pack("{s:b}", "unschedulable", n->unschedulable);
	if (json_array_size(taints))
		json_object_set(spec, "taints", taints);
	json_decref(taints);
	/* every field of NodeSystemInfo (the official clients require them):
	 * machineID, systemUUID and bootID derive from the name, so they stay
	 * the same across restarts as a real machine's would */
	uint64_t h = 1469598103934665603ull;
	for (const char *p = n->name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	uint64_t h2 = h * 6364136223846793005ull + 1442695040888963407ull;
	char mid[33], suuid[37], boot[37];
	snprintf(mid, sizeof mid, "%016llx%016llx", (unsigned long long)h, (unsigned long long)h2);
	snprintf(suuid, sizeof suuid, "%08llx-%04llx-%04llx-%04llx-%012llx", (unsigned long long)(h >> 32),
		 (unsigned long long)(h >> 16 & 0xffff), (unsigned long long)(h & 0xffff),
		 (unsigned long long)(h2 >> 48), (unsigned long long)(h2 & 0xffffffffffffull));
	snprintf(boot, sizeof boot, "%08llx-%04llx-4%03llx-%04llx-%012llx", (unsigned long long)(h2 >> 32),
		 (unsigned long long)(h2 >> 16 & 0xffff), (unsigned long long)(h2 & 0xfff),
		 (unsigned long long)((h >> 48 & 0x3fff) | 0x8000), (unsigned long long)(h & 0xffffffffffffull));
	json_t *info = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "kubeletVersion",
				 "v1.32.0-muster", "kubeProxyVersion", "v1.32.0-muster", "osImage",
				 "muster simulated node", "kernelVersion", "simulated", "containerRuntimeVersion",
				 "muster://0.1", "architecture", "amd64", "operatingSystem", "linux", "machineID",
				 mid, "systemUUID", suuid, "bootID", boot);
	json_t *status = json_pack("{s:o, s:o, s:o, s:o, s:[{s:s, s:s}]}", "capacity", capacity(n), "allocatable",
				   capacity(n), "conditions", ready_conditions(true), "nodeInfo", info, "addresses",
				   "type", "Hostname", "address", n->name);
	return json_pack("{s:s, s:s, s:{s:s, s:o, s:{s:s}}, s:o, s:o}", "apiVersion", "v1", "kind", "Node",
			 "metadata", "name", n->name, "labels", labels, "annotations", "muster.io/simulated",
			 "true", "spec", spec, "status", status);
}

/* NodeResourceTopology: 2 NUMA zones (1 for small nodes) sharing the node
 * evenly, with SLIT-like costs. */
static json_t *nrt_json(const mu_node_spec_t *n)
{
	int numa = n->alloc.v[MU_RES_CPU] >= 8000 ? 2 : 1;
	json_t *zones = json_array();
	for (int z = 0; z < numa; z++) {
		char zn[32];
		snprintf(zn, sizeof zn, "node-%d", z);
		json_t *res = json_array();
		struct { const char *name; int64_t v; bool milli; } r[] = {
			{"cpu", n->alloc.v[MU_RES_CPU], true},
			{"memory", n->alloc.v[MU_RES_MEM], false},
			{"nvidia.com/gpu", n->alloc.v[MU_RES_GPU], false},
		};
		for (int k = 0; k < 3; k++) {
			if (!r[k].v)
				continue;
			int64_t share = r[k].v / numa + (z == 0 ? r[k].v % numa : 0);
			json_array_append_new(res, json_pack("{s:s, s:o, s:o, s:o}", "name", r[k].name, "capacity",
							     qty(share, r[k].milli), "allocatable", qty(share, r[k].milli),
							     "available", qty(share, r[k].milli)));
		}
		json_t *costs = json_array();
		for (int o = 0; o < numa; o++) {
			char on[32];
			snprintf(on, sizeof on, "node-%d", o);
			json_array_append_new(costs, json_pack("{s:s, s:i}", "name", on, "value", o == z ? 10 : 20));
		}
		json_array_append_new(zones, json_pack("{s:s, s:s, s:o, s:o}", "name", zn, "type", "Node",
						       "costs", costs, "resources", res));
	}
	return json_pack("{s:s, s:s, s:{s:s}, s:[s], s:o, s:[{s:s, s:s}, {s:s, s:s}]}", "apiVersion",
			 "topology.node.k8s.io/v1alpha2", "kind", "NodeResourceTopology", "metadata", "name",
			 n->name, "topologyPolicies", "SingleNUMANodeContainerLevel", "zones", zones, "attributes",
			 "name", "topologyManagerPolicy", "value", "single-numa-node", "name",
			 "topologyManagerScope", "value", "container");
}

/* A muster Queue object from a queue spec. */
static json_t *queue_json(const mu_queue_spec_t *q)
{
	json_t *res = json_object();
	struct { const char *name; int slot; bool milli; } r[] = {
		{"gpu", MU_RES_GPU, true}, {"cpu", MU_RES_CPU, true}, {"memory", MU_RES_MEM, false},
		{"pods", MU_RES_PODS, false},
	};
	for (int i = 0; i < 4; i++) {
		json_t *e = json_object();
		if (q->deserved.v[r[i].slot])
			json_object_set_new(e, "deserved", qty(q->deserved.v[r[i].slot], r[i].milli));
		if (q->limit.v[r[i].slot] != MU_RES_UNLIMITED)
			json_object_set_new(e, "limit", qty(q->limit.v[r[i].slot], r[i].milli));
		if (q->weight[r[i].slot] != 1.0)
			json_object_set_new(e, "overQuotaWeight", json_real(q->weight[r[i].slot]));
		if (json_object_size(e))
			json_object_set_new(res, r[i].name, e);
		else
			json_decref(e);
	}
	json_t *spec = json_pack("{s:i, s:o}", "priority", q->priority, "resources", res);
	if (q->parent)
		json_object_set_new(spec, "parent", json_string(q->parent));
	if (q->order == MU_QORDER_FIFO)
		json_object_set_new(spec, "order", json_string("fifo"));
	if (q->npools) {
		json_t *pools = json_object();
		for (size_t i = 0; i < q->npools; i++) {
			const mu_pool_quota_t *p = &q->pools[i];
			int k = p->res >= 0 && p->res < MU_POOL_NRES ? (int)p->res : 0;
			bool milli = p->res == MU_POOL_GPU || p->res == MU_POOL_CPU;
			static const char *const rn[MU_POOL_NRES] = {"gpu", "cpu", "memory", "pods"};
			json_t *g = json_object();
			json_object_set_new(g, "deserved", qty(p->deserved, milli));
			if (p->limit != MU_RES_UNLIMITED)
				json_object_set_new(g, "limit", qty(p->limit, milli));
			if (p->weight >= 0)
				json_object_set_new(g, "overQuotaWeight", json_real(p->weight));
			json_t *pm = json_object_get(pools, p->pool);
			if (!pm)
				json_object_set_new(pools, p->pool, pm = json_object());
			json_object_set_new(pm, rn[k], g);
		}
		json_object_set_new(spec, "pools", pools);
	}
	if (q->max_wait > 0) {
		char w[32];
		snprintf(w, sizeof w, "%llds", (long long)(q->max_wait / 1000));
		json_object_set_new(spec, "maxWait", json_string(w));
	}
	if (q->escalation >= MU_ESC_BOOST && q->escalation <= MU_ESC_PREEMPT) {
		static const char *const esc[] = {"boost", "reserve", "preempt"};
		json_object_set_new(spec, "escalation",
				    json_string(esc[q->escalation - MU_ESC_BOOST]));
	}
	if (q->borrow_try_next || q->preempt_try_next)
		json_object_set_new(spec, "flavorFungibility", json_pack("{s:s,s:s}",
			"whenCanBorrow", q->borrow_try_next ? "TryNextFlavor" : "MayStopSearch",
			"whenCanPreempt", q->preempt_try_next ? "TryNextFlavor" : "MayStopSearch"));
	return json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", "muster.io/v1alpha1", "kind", "Queue",
			 "metadata", "name", q->name, "spec", spec);
}

/* The Topology "default": the well-known domain labels the nodes carry. */
static json_t *topology_json(const mu_specs_t *sp)
{
	static const char *const keys[] = {"topology.kubernetes.io/region", "topology.kubernetes.io/zone",
					   "muster.io/block", "muster.io/rack"};
	json_t *levels = json_array();
	for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
		bool have = false;
		for (size_t i = 0; i < sp->nnodes && !have; i++)
			for (size_t l = 0; l < sp->nodes[i].nlabels && !have; l++)
				have = !strcmp(sp->nodes[i].labels[l].key, keys[k]);
		if (have)
			json_array_append_new(levels, json_pack("{s:s}", "nodeLabel", keys[k]));
	}
	if (!json_array_size(levels)) {
		json_decref(levels);
		return NULL;
	}
	json_array_append_new(levels, json_pack("{s:s}", "nodeLabel", "kubernetes.io/hostname"));
	return json_pack("{s:s, s:s, s:{s:s}, s:{s:o}}", "apiVersion", "muster.io/v1alpha1", "kind", "Topology",
			 "metadata", "name", "default", "spec", "levels", levels);
}

/* The node's Lease in kube-node-lease, as a kubelet keeps it. */
static json_t *lease_json(const char *node)
{
	char ts[40];
	mu__timestamp(ts, sizeof ts, true);
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i, s:s}}", "apiVersion", "coordination.k8s.io/v1",
			 "kind", "Lease", "metadata", "name", node, "namespace", "kube-node-lease", "spec",
			 "holderIdentity", node, "leaseDurationSeconds", 40, "renewTime", ts);
}

/* Creates obj (stolen) unless rt/name exists; commits every MU__TX_MAX. */
static void ensure(mu__sim_t *sim, mu__wtx_t **tx, int rt, json_t *obj)
{
	if (!obj)
		return;
	const char *name = mu__jstr(obj, "metadata.name");
	mu__obj_t *cur = mu__store_get(sim->s->store, rt, mu__jstr(obj, "metadata.namespace"), name);
	if (!cur) {
		/* the kubelet registers its node and makes its lease */
		const char *by = rt == MU__RT_NODES || rt == MU__RT_LEASES ? "kubelet" : NULL;
		if (mu__create_by(sim->s, *tx, rt, obj, by, NULL) == MU_ELIMIT) {
			mu__store_commit(*tx);
			mu__store_begin(sim->s->store, tx);
			mu__create_by(sim->s, *tx, rt, obj, by, NULL);
		}
	}
	mu__obj_unref(cur);
	json_decref(obj);
}

int mu__sim_new(mu_apiserver_t *s, const char *cluster_file, mu__sim_t **out, char *err, size_t errlen)
{
	*out = NULL;
	mu__sim_t *sim = calloc(1, sizeof *sim);
	if (!sim)
		return MU_ENOMEM;
	sim->s = s;
	sim->memo = mu__mf_memo_new(); /* NULL: records in full */
	sim->events = mu__evcorr_new(); /* NULL: every Event new */
	*out = sim;
	if (!cluster_file)
		return MU_OK;
	mu_specs_t sp;
	mu_diag_t d;
	mu_specs_init(&sp);
	int rc = mu_load_file(cluster_file, NULL, &sp, &d);
	if (rc == MU_OK && sp.ndra) {
		snprintf(d.msg, sizeof d.msg, "%s: DRA objects (ResourceSlice, DeviceClass, "
			 "ResourceClaim, ResourceClaimTemplate, DeviceTaintRule) are not read from a cluster "
			 "file; create them through the API (kubectl apply)", cluster_file);
		rc = MU_EINVAL;
	}
	if (rc != MU_OK) {
		snprintf(err, errlen, "%s", d.msg);
		mu_specs_release(&sp);
		return rc;
	}
	mu__wtx_t *tx;
	mu__store_begin(s->store, &tx);
	for (size_t i = 0; i < sp.nnodes && rc == MU_OK; i++) {
		ensure(sim, &tx, MU__RT_NODES, node_json(&sp.nodes[i]));
		ensure(sim, &tx, MU__RT_NRTS, nrt_json(&sp.nodes[i]));
		ensure(sim, &tx, MU__RT_LEASES, lease_json(sp.nodes[i].name));
		rc = node_add(sim, sp.nodes[i].name);
	}
	for (size_t i = 0; i < sp.nqueues; i++)
		if (!sp.queues[i].auto_created)
			ensure(sim, &tx, MU__RT_QUEUES, queue_json(&sp.queues[i]));
	for (size_t i = 0; i < sp.npools; i++) {
		json_t *ml = json_object();
		for (size_t k = 0; k < sp.pools[i].nmatch; k++)
			json_object_set_new(ml, sp.pools[i].match[k].key,
					    json_string(sp.pools[i].match[k].value ?
							sp.pools[i].match[k].value : ""));
		ensure(sim, &tx, MU__RT_NODEPOOLS, json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:o}}}",
			"apiVersion", "muster.io/v1alpha1", "kind", "NodePool", "metadata", "name",
			sp.pools[i].name, "spec", "selector", "matchLabels", ml));
	}
	ensure(sim, &tx, MU__RT_TOPOLOGIES, topology_json(&sp));
	int crc = mu__store_commit(tx);
	mu_specs_release(&sp);
	if (rc == MU_OK && crc != MU_OK)
		snprintf(err, errlen, "cannot store the cluster's nodes: %s", mu_strerror(crc));
	return rc != MU_OK ? rc : crc;
}

void mu__sim_free(mu__sim_t *sim)
{
	if (!sim)
		return;
	for (size_t i = 0; i < sim->n; i++)
		free(sim->nodes[i].name);
	while (sim->nheap) {
		action_t a = pop(sim);
		action_free(&a);
	}
	free(sim->heap);
	free(sim->nodes);
	mu__mf_memo_free(sim->memo);
	mu__evcorr_free(sim->events);
	free(sim);
}

/* --- reacting to changes ------------------------------------------------ */

static bool node_failed_json(const mu__obj_t *o)
{
	if (!strstr(o->json, "muster.io/node-state"))
		return false; /* no such key anywhere: the heartbeats' common case, unparsed */
	json_t *j = mu__obj_parse(o);
	const char *st = json_string_value(json_object_get(mu__jget(j, "metadata.annotations"), "muster.io/node-state"));
	bool failed = st && !strcmp(st, "failed");
	json_decref(j);
	return failed;
}

static bool simulated_json(const mu__obj_t *o)
{
	json_t *j = mu__obj_parse(o);
	const char *v = json_string_value(json_object_get(mu__jget(j, "metadata.annotations"), "muster.io/simulated"));
	bool sim = v && !strcmp(v, "true");
	json_decref(j);
	return sim;
}

/* The delay until a Running pod completes (ms), or -1 without a duration. */
static int64_t remaining_ms(const mu__obj_t *o)
{
	json_t *j = mu__obj_parse(o);
	const char *d = json_string_value(json_object_get(mu__jget(j, "metadata.annotations"), "muster.io/duration"));
	mu_time_t ms;
	int64_t left = -1;
	if (d && mu__parse_duration(d, &ms) == MU_OK) {
		int64_t start = mu__parse_rfc3339(mu__jstr(j, "status.startTime"));
		left = start < 0 ? ms : ms - (mu__now_s() - start) * 1000;
		if (left < 0)
			left = 0;
	}
	json_decref(j);
	return left;
}

static const char *pod_uid(const mu__obj_t *o, char *buf, size_t len)
{
	snprintf(buf, len, "%s", o->uid ? o->uid : "");
	return buf;
}

/* How long a deleted pod's simulated containers take to stop: its
 * muster.io/stop-after duration, at most its deletion grace period; 0
 * without the annotation. */
static int64_t stop_ms(const mu__obj_t *o)
{
	json_t *j = mu__obj_parse(o);
	const char *d = json_string_value(json_object_get(mu__jget(j, "metadata.annotations"), "muster.io/stop-after"));
	const json_t *g = mu__jget(j, "metadata.deletionGracePeriodSeconds");
	mu_time_t ms = 0;
	if (!d || mu__parse_duration(d, &ms) != MU_OK)
		ms = 0;
	if (json_is_integer(g) && ms > json_integer_value(g) * 1000)
		ms = json_integer_value(g) * 1000;
	json_decref(j);
	return ms;
}

/* Queues what a pod version on a simulated node needs. */
static void pod_seen(mu__sim_t *sim, const mu__obj_t *o, bool resync, int64_t now)
{
	simnode_t *n = node_find(sim, mu__obj_field(o, "spec.nodeName"));
	if (!n)
		return;
	const char *phase = mu__obj_field(o, "status.phase");
	bool terminal = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
	char uid[64];
	pod_uid(o, uid, sizeof uid);
	if (o->deleting)
		push(sim, now + stop_ms(o), ACT_FINALIZE, o->ns, o->name, uid);
	else if (terminal)
		return;
	else if (n->failed)
		push(sim, now, ACT_FAIL, o->ns, o->name, uid);
	else if (!phase || !strcmp(phase, "Pending"))
		push(sim, now, ACT_START, o->ns, o->name, uid);
	else if (resync && !strcmp(phase, "Running")) {
		int64_t left = remaining_ms(o);
		if (left >= 0)
			push(sim, now + left, ACT_COMPLETE, o->ns, o->name, uid);
	}
}

static void node_seen(mu__sim_t *sim, const mu__obj_t *o, int64_t now)
{
	simnode_t *n = node_find(sim, o->name);
	if (!n && simulated_json(o) && node_add(sim, o->name) == MU_OK)
		n = node_find(sim, o->name);
	if (!n)
		return;
	bool failed = node_failed_json(o);
	if (failed != n->failed)
		push(sim, now, failed ? ACT_NODE_FAIL : ACT_NODE_RECOVER, "", o->name, "");
}

void mu__sim_event(mu__sim_t *sim, const mu__wev_t *ev, int64_t now)
{
	if (ev->type == MU__EV_DELETED)
		return;
	if (ev->obj->rt == MU__RT_PODS)
		pod_seen(sim, ev->obj, false, now);
	else if (ev->obj->rt == MU__RT_NODES)
		node_seen(sim, ev->obj, now);
}

typedef struct {
	mu__sim_t *sim;
	void (*fn)(mu__sim_t *, const mu__obj_t *, int64_t);
	int64_t now;
} scan_t;

static int scan_page(void *ctx, mu__page_t *pg)
{
	scan_t *sc = ctx;
	for (size_t i = 0; i < pg->n; i++)
		sc->fn(sc->sim, pg->objs[i], sc->now);
	return 0;
}

/* Calls fn on every object of rt, page by page. */
static void scan(mu__sim_t *sim, int rt, void (*fn)(mu__sim_t *, const mu__obj_t *, int64_t), int64_t now)
{
	scan_t sc = {sim, fn, now};
	(void)mu__store_each(sim->s->store, rt, NULL, 1024, NULL, NULL, scan_page, &sc);
}

static void pod_resync(mu__sim_t *sim, const mu__obj_t *o, int64_t now)
{
	pod_seen(sim, o, true, now);
}

void mu__sim_resync(mu__sim_t *sim, int64_t now)
{
	while (sim->nheap) {
		action_t a = pop(sim);
		action_free(&a);
	}
	scan(sim, MU__RT_NODES, node_seen, now);
	scan(sim, MU__RT_PODS, pod_resync, now);
}

/* --- acting ------------------------------------------------------------- */

typedef struct act_ctx {
	mu__sim_t *sim;
	const action_t *a;
	int64_t complete_ms;  /* out (start): when to complete, or -1 */
	char node[254];       /* out: the pod's node */
} act_ctx_t;

/* The pod's containers' statuses in one state: 0 running, 1 ended at
 * its muster.io/duration (each with the exit code its
 * muster.io/exit-code annotation gives, 0 by default: reason Completed,
 * or Error as the kubelet reports a non-zero one), 2 lost with its node
 * (137, NodeLost), 3 killed as the pod is deleted (137, Error).  *failed (when not NULL) is set when a container
 * ended with a non-zero code.  O(the containers). */
static json_t *container_statuses(const json_t *pod, const char *uid, int state, const char *ts, bool *failed)
{
	const char *xc = json_string_value(json_object_get(mu__jget(pod, "metadata.annotations"), "muster.io/exit-code"));
	json_t *a = json_array();
	size_t i;
	json_t *c;
	json_array_foreach(mu__jget(pod, "spec.containers"), i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		const char *img = json_string_value(json_object_get(c, "image"));
		char cid[160], iid[300];
		snprintf(cid, sizeof cid, "muster://%.8s-%s", uid, name ? name : "");
		snprintf(iid, sizeof iid, "muster://%s", img ? img : "");
		int code = 137;
		if (state == 1 && (!xc || mu__exit_code(xc, name, &code) != 0))
			code = 0;
		if (state == 1 && code && failed)
			*failed = true;
		json_t *st = state == 0 ? json_pack("{s:{s:s}}", "running", "startedAt", ts)
				: json_pack("{s:{s:i, s:s, s:s}}", "terminated", "exitCode", code, "reason",
					    state == 2 ? "NodeLost" : code ? "Error" : "Completed", "finishedAt", ts);
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:i, s:o}", "name", name ? name : "",
						   "image", img ? img : "", "imageID", iid, "containerID", cid, "ready",
						   state == 0, "started", state == 0, "restartCount", 0, "state", st));
	}
	return a;
}

static int pod_act_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	act_ctx_t *c = ctx;
	if (!cur || cur->deleting)
		return MU__MUT_KEEP;
	/* after a bind, the tree the binding kept (no parse) */
	json_t *o = mu__store_take_tree(c->sim->s->store, cur, NULL);
	if (!o)
		return MU_ENOMEM;
	const char *uid = mu__jstr(o, "metadata.uid"), *phase = mu__jstr(o, "status.phase");
	const char *node = mu__jstr(o, "spec.nodeName");
	bool running = phase && !strcmp(phase, "Running");
	bool pending = !phase || !strcmp(phase, "Pending");
	bool ok = uid && !strcmp(uid, c->a->uid) && node_find(c->sim, node) &&
		  (c->a->kind == ACT_START ? pending : c->a->kind == ACT_COMPLETE ? running : pending || running);
	if (!ok) {
		json_decref(o);
		return MU__MUT_KEEP;
	}
	/* what the managedFields record reads of the pod before: its status */
	json_t *before = mu__mf_before(mu__type(c->sim->s->types, MU__RT_PODS), o, true);
	if (!before) {
		json_decref(o);
		return MU_ENOMEM;
	}
	char ts[40];
	mu__timestamp(ts, sizeof ts, false);
	snprintf(c->node, sizeof c->node, "%s", node);
	if (c->a->kind == ACT_START) {
		mu__jset(o, "status.phase", json_string("Running"));
		mu__jset(o, "status.startTime", json_string(ts));
		mu__jset(o, "status.containerStatuses", container_statuses(o, uid, 0, ts, NULL));
		static const char *const conds[] = {"PodReadyToStartContainers", "Initialized", "Ready",
						    "ContainersReady", "PodScheduled"};
		for (int i = 0; i < 5; i++)
			mu__set_condition(o, conds[i], "True", NULL, NULL);
		const char *d = json_string_value(json_object_get(mu__jget(o, "metadata.annotations"), "muster.io/duration"));
		mu_time_t ms;
		c->complete_ms = d && mu__parse_duration(d, &ms) == MU_OK ? ms : -1;
	} else {
		bool done = c->a->kind == ACT_COMPLETE, bad = false;
		mu__jset(o, "status.containerStatuses", container_statuses(o, uid, done ? 1 : 2, ts, &bad));
		/* a container that exited non-zero fails the pod (restartPolicy
		 * Never, as a Job's pods with a podFailurePolicy have it; the
		 * kubelet's reason PodFailed on its conditions) */
		mu__jset(o, "status.phase", json_string(done && !bad ? "Succeeded" : "Failed"));
		const char *why = !done ? "NodeLost" : bad ? "PodFailed" : "PodCompleted";
		mu__set_condition(o, "Ready", "False", why, NULL);
		mu__set_condition(o, "ContainersReady", "False", why, NULL);
		if (!done) {
			char msg[320];
			snprintf(msg, sizeof msg, "Node %s which was running pod %s is unresponsive", node, cur->name);
			mu__jset(o, "status.reason", json_string("NodeLost"));
			mu__jset(o, "status.message", json_string(msg));
			mu__set_condition(o, "DisruptionTarget", "True", "NodeLost", msg);
		}
	}
	/* the kubelet writes a pod's status through /status; a pod of a lost
	 * node is failed by the node lifecycle controller */
	mu__mf_memo_record(c->sim->memo, mu__type(c->sim->s->types, MU__RT_PODS), before, o,
			   c->a->kind == ACT_FAIL ? "kube-controller-manager" : "kubelet", true);
	json_decref(before);
	*out = o;
	return MU__MUT_PUT;
}

/* Writes a core/v1 Event about an object. */
static void event(mu__sim_t *sim, mu__wtx_t *tx, const char *kind, const char *ns, const char *name,
		  const char *uid, const char *type, const char *reason, const char *msg, const char *host)
{
	char ts[40], en[300], sfx[6];
	mu__timestamp(ts, sizeof ts, false);
	mu__name_suffix(sim->s, sfx);
	snprintf(en, sizeof en, "%.200s.%s", name, sfx);
	json_t *io = json_pack("{s:s, s:s, s:s, s:s}", "kind", kind, "name", name, "uid", uid, "apiVersion", "v1");
	if (*ns)
		json_object_set_new(io, "namespace", json_string(ns));
	json_t *e = json_pack("{s:s, s:s, s:{s:s, s:s}, s:o, s:s, s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:i, s:s, s:s}",
			      "apiVersion", "v1", "kind", "Event", "metadata", "name", en, "namespace",
			      *ns ? ns : "default", "involvedObject", io, "reason", reason, "message", msg, "type",
			      type, "source", "component", "kubelet", "host", host, "firstTimestamp", ts,
			      "lastTimestamp", ts, "count", 1, "reportingComponent", "kubelet",
			      "reportingInstance", host);
	if (e) /* as the kubelet's recorder: a repeat raises the first one's count */
		mu__evcorr_record(sim->events, sim->s, tx, e, "kubelet", sim->now);
	json_decref(e);
}

static int node_act_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	act_ctx_t *c = ctx;
	if (!cur)
		return MU__MUT_KEEP;
	json_t *o = mu__obj_parse(cur);
	if (!o)
		return MU_ENOMEM;
	bool fail = c->a->kind == ACT_NODE_FAIL;
	json_t *before = json_deep_copy(o);
	char ts[40];
	mu__timestamp(ts, sizeof ts, false);
	mu__set_condition(o, "Ready", fail ? "Unknown" : "True", fail ? "NodeStatusUnknown" : "KubeletReady",
			  fail ? "Kubelet stopped posting node status." : "kubelet is posting ready status");
	json_t *taints = mu__jget(o, "spec.taints");
	if (!json_is_array(taints)) {
		mu__jset(o, "spec.taints", json_array());
		taints = mu__jget(o, "spec.taints");
	}
	for (size_t i = json_array_size(taints); i-- > 0;)
		if (!strcmp(json_string_value(json_object_get(json_array_get(taints, i), "key")) ?
			    json_string_value(json_object_get(json_array_get(taints, i), "key")) : "",
			    "node.kubernetes.io/unreachable"))
			json_array_remove(taints, i);
	if (fail) {
		json_array_append_new(taints, json_pack("{s:s, s:s, s:s}", "key", "node.kubernetes.io/unreachable",
							"effect", "NoSchedule", "timeAdded", ts));
		json_array_append_new(taints, json_pack("{s:s, s:s, s:s}", "key", "node.kubernetes.io/unreachable",
							"effect", "NoExecute", "timeAdded", ts));
	}
	if (!json_array_size(taints))
		json_object_del(json_object_get(o, "spec"), "taints");
	/* the node lifecycle controller marks a silent node Unknown and
	 * taints it; a kubelet that is back posts Ready, and the controller
	 * lifts the taints */
	const mu__rtype_t *t = mu__type(c->sim->s->types, MU__RT_NODES);
	mu__mf_controller(t, before, o, fail ? "kube-controller-manager" : "kubelet", true);
	json_t *st = json_object_get(o, "status");
	if (before && st)
		json_object_set(before, "status", st); /* the status part is recorded: now the taints */
	mu__mf_controller(t, before, o, "kube-controller-manager", false);
	json_decref(before);
	*out = o;
	return MU__MUT_PUT;
}

static int heartbeat_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	if (!cur)
		return MU__MUT_KEEP;
	mu__sim_t *sim = ctx;
	mu_apiserver_t *s = sim->s;
	bool lease = cur->rt == MU__RT_LEASES;
	json_t *o = mu__obj_parse(cur);
	json_t *before = o ? mu__mf_before(mu__type(s->types, cur->rt), o, !lease) : NULL;
	if (!o || !before) {
		json_decref(o);
		json_decref(before);
		return MU_ENOMEM;
	}
	char ts[40];
	mu__timestamp(ts, sizeof ts, lease);
	if (lease) {
		mu__jset(o, "spec.renewTime", json_string(ts));
	} else {
		size_t i;
		json_t *c;
		json_array_foreach(mu__jget(o, "status.conditions"), i, c)
			json_object_set_new(c, "lastHeartbeatTime", json_string(ts));
	}
	/* the kubelet renews its lease and posts its node's status */
	mu__mf_memo_record(sim->memo, mu__type(s->types, cur->rt), before, o, "kubelet", !lease);
	json_decref(before);
	*out = o;
	return MU__MUT_PUT;
}

/* A pod being deleted that a finalizer keeps (a Job's pod): its
 * containers killed (137, Error) and its phase Failed, unless it ended
 * already.  Others go at once, and are left as they are. */
static int stopped_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	act_ctx_t *c = ctx;
	const char *ph = cur ? mu__obj_field(cur, "status.phase") : NULL;
	if (!cur || !cur->deleting || !strstr(cur->json, "\"finalizers\":[\"") ||
	    (ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"))))
		return MU__MUT_KEEP;
	json_t *o = mu__obj_parse(cur);
	if (!o)
		return MU_ENOMEM;
	char ts[40];
	mu__timestamp(ts, sizeof ts, false);
	mu__jset(o, "status.containerStatuses", container_statuses(o, c->a->uid, 3, ts, NULL));
	mu__jset(o, "status.phase", json_string("Failed"));
	mu__set_condition(o, "Ready", "False", "PodFailed", NULL);
	mu__set_condition(o, "ContainersReady", "False", "PodFailed", NULL);
	*out = o;
	return MU__MUT_PUT;
}

/* Runs one due action inside tx; returns a store code (MU_ELIMIT: the
 * transaction is full, retry in a new one). */
static int run(mu__sim_t *sim, mu__wtx_t *tx, const action_t *a, int64_t now)
{
	act_ctx_t c = {sim, a, -1, ""};
	int rc;
	simnode_t *n;
	switch (a->kind) {
	case ACT_FINALIZE: {
		mu__obj_t *cur = mu__store_get(sim->s->store, MU__RT_PODS, a->ns, a->name);
		char uid[64];
		bool same = cur && !strcmp(pod_uid(cur, uid, sizeof uid), a->uid) && cur->deleting;
		mu__obj_unref(cur);
		/* a pod a finalizer keeps ends Failed, its containers killed, as
		 * the kubelet (1.27+) puts a deleted pod in a terminal phase */
		if (same && (rc = mu__store_apply(tx, MU__RT_PODS, a->ns, a->name, stopped_fn, &c, false, NULL)) < 0)
			return rc == MU_ENOENT ? MU_OK : rc;
		rc = same ? mu__delete_in(tx, MU__RT_PODS, a->ns, a->name, 0, a->uid, NULL, false, NULL) : MU_OK;
		return rc == MU_ENOENT ? MU_OK : rc;
	}
	case ACT_NODE_FAIL:
	case ACT_NODE_RECOVER:
		rc = mu__store_apply(tx, MU__RT_NODES, NULL, a->name, node_act_fn, &c, false, NULL);
		if (rc < 0)
			return rc;
		n = node_find(sim, a->name);
		if (n)
			n->failed = a->kind == ACT_NODE_FAIL;
		if (n && n->failed) {
			event(sim, tx, "Node", "", a->name, a->name, "Normal", "NodeNotReady",
			      "Node is not ready: muster node fail", a->name);
			/* its pods fail: queue them */
			char sel[300];
			snprintf(sel, sizeof sel, "spec.nodeName=%s", a->name);
			mu__sel_t *fs = NULL;
			char err[64];
			if (mu__sel_parse(sel, true, &fs, err, sizeof err) == MU_OK) {
				mu__filter_t f = {NULL, NULL, fs};
				mu__page_t pg;
				if (mu__store_list(sim->s->store, MU__RT_PODS, NULL, NULL, 1000000, mu__filter_match, &f,
						   &pg) == MU_OK) {
					for (size_t i = 0; i < pg.n; i++)
						pod_seen(sim, pg.objs[i], false, now);
					mu__page_release(&pg);
				}
				mu__sel_free(fs);
			}
		}
		return MU_OK;
	default:
		rc = mu__store_apply(tx, MU__RT_PODS, a->ns, a->name, pod_act_fn, &c, false, NULL);
		if (rc == MU__MUT_PUT && a->kind == ACT_START) {
			if (c.complete_ms >= 0)
				push(sim, now + c.complete_ms, ACT_COMPLETE, a->ns, a->name, a->uid);
			event(sim, tx, "Pod", a->ns, a->name, a->uid, "Normal", "Started",
			      "Started simulated containers", c.node);
		}
		return rc < 0 ? rc : MU_OK;
	}
}

/* Node heartbeats: refreshes the lastHeartbeatTime of healthy nodes and
 * renews their leases, MU__TX_MAX / 2 nodes per transaction. */
static void heartbeat(mu__sim_t *sim)
{
	size_t i = 0;
	while (i < sim->n) {
		mu__wtx_t *tx;
		mu__store_begin(sim->s->store, &tx);
		for (int k = 0; k < MU__TX_MAX / 2 && i < sim->n; i++)
			if (!sim->nodes[i].failed) {
				mu__store_apply(tx, MU__RT_NODES, NULL, sim->nodes[i].name, heartbeat_fn, sim, false,
						NULL);
				mu__store_apply(tx, MU__RT_LEASES, "kube-node-lease", sim->nodes[i].name, heartbeat_fn,
						sim, false, NULL);
				k++;
			}
		mu__store_commit(tx);
	}
}

int64_t mu__sim_tick(mu__sim_t *sim, int64_t now)
{
	sim->now = now;
	if (now >= sim->next_hb) {
		if (sim->next_hb)
			heartbeat(sim);
		sim->next_hb = now + (int64_t)sim->s->o.heartbeat_s * 1000;
	}
	while (sim->nheap && sim->heap[0].at <= now) {
		mu__wtx_t *tx;
		mu__store_begin(sim->s->store, &tx);
		/* a start may also write an event: keep room for both */
		for (int k = 0; k < MU__TX_MAX / 3 && sim->nheap && sim->heap[0].at <= now; k++) {
			action_t a = pop(sim);
			run(sim, tx, &a, now);
			action_free(&a);
		}
		mu__store_commit(tx);
	}
	int64_t next = sim->next_hb - now;
	if (sim->nheap && sim->heap[0].at - now < next)
		next = sim->heap[0].at - now;
	return next;
}

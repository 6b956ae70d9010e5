/*
 * dra.h - allocating the devices of DRA ResourceClaims (resource.k8s.io
 * v1beta1, structured parameters) on one node, as the structured allocator
 * of Kubernetes (k8s.io/dynamic-resource-allocation/structured) that
 * kube-scheduler's DynamicResources plugin calls.
 *
 * Inputs are the objects as JSON (borrowed): the ResourceSlices, the
 * DeviceClasses and every ResourceClaim (their status.allocation says which
 * devices are taken).  Pools are read as the real allocator reads them: only
 * a pool's slices of its newest generation count, a pool with fewer slices
 * than its resourceSliceCount is incomplete, and a device name twice in a
 * pool makes it invalid.  The search backtracks over requests and claims
 * (a first choice that starves a later request is undone), within a bound
 * of MU_DRA_MAX_STEPS device tries.
 *
 * Understood: ExactCount (count, default 1) and All allocation modes; CEL
 * selectors of the class and the request (cel.h); constraints with
 * matchAttribute and distinctAttribute; device taints and a request's
 * tolerations, the device's own and those DeviceTaintRules add (DRADeviceTaints:
 * a device with a taint the request does not tolerate is not allocated);
 * adminAccess (DRAAdminAccess: the device may be in use, and the result,
 * marked adminAccess, takes it from no one); device config (the class's,
 * source FromClass, then the claim's, FromClaim, copied into the
 * allocation); firstAvailable (subrequests tried in order, results named
 * REQUEST/SUBREQUEST).  Refused with a reason: other constraints.
 * Slices are read when they are on the node (nodeName), on every node
 * (allNodes) or select the node (nodeSelector, its terms ORed, matched
 * against the node's labels and name from v->nodes: network-attached
 * devices); an allocation gets the node as its nodeSelector when a device
 * is node-local, else the union of its devices' slices' selectors, else
 * none, as kube's allocator builds it; a device of a slice whose selector
 * has several terms (kube-apiserver accepts only one) fails that union
 * with kube's reason, unless a node-local device came first.
 */
#ifndef MUSTER_DRA_H
#define MUSTER_DRA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define MU_DRA_MAX_CLAIMS 16
#define MU_DRA_MAX_STEPS 100000

typedef struct mu_dra_view {
	const json_t *slices;  /* array of ResourceSlice */
	const json_t *classes; /* array of DeviceClass */
	const json_t *claims;  /* array of ResourceClaim: their allocations are taken */
	const json_t *nodes;   /* array of Node (metadata.name, metadata.labels), or
				* NULL: what slices' and allocations' node selectors
				* are matched against */
	const json_t *rules;   /* array of DeviceTaintRule (resource.k8s.io/v1alpha3),
				* or NULL: taints they add to the devices they select */
} mu_dra_view_t;

/* Allocates claims[0..n) on node.  A claim already allocated keeps its
 * allocation (it must be usable on node: its nodeSelector matches it).  *plan (owned by the caller)
 * becomes [{"claim": NAME, "allocation": {...}}], one per claim, each
 * allocation as kube-scheduler writes it: devices.results (request,
 * driver, pool, device, adminAccess when asked), devices.config, and a
 * nodeSelector (on node when a device is node-local; else the union of the
 * selectors of the slices its devices come from).  Returns MU_OK; MU_ENOENT when they do not fit on
 * node; MU_EINVAL when a claim asks for what is not supported or a pool is
 * invalid; why in msg.  Work: at most MU_DRA_MAX_STEPS device tries. */
int mu_dra_allocate(const mu_dra_view_t *v, const json_t *const *claims, size_t n, const char *node,
		    json_t **plan, char *msg, size_t len);

/* How many devices serving node (its slices, allNodes slices and those
 * whose nodeSelector selects it; each pool's newest generation) pass the
 * selectors of DeviceClass cls, taken or not: what the node has of that
 * class.  With node NULL: the devices of slices that serve several nodes
 * (allNodes or a nodeSelector).  0 for an unknown class; -1 with why in
 * msg when a selector is refused.  O(slices x devices x selectors). */
long mu_dra_class_devices(const mu_dra_view_t *v, const char *cls, const char *node, char *msg, size_t len);

/* When the pods using allocated claim must go because of NoExecute taints
 * on its devices, as kube-controller-manager's device taint eviction
 * controller (pkg/controller/devicetainteviction) computes it: over every
 * device of status.allocation.devices.results (found in its pool's newest
 * generation, on any node) and every NoExecute taint of it, its own
 * (basic.taints) or added by a DeviceTaintRule of v->rules: timeAdded plus
 * the smallest tolerationSeconds of the result's NoExecute tolerations that
 * match it (none: at once; a matching one without seconds: never); the
 * earliest of these.  A result without tolerations takes its request's (an
 * allocation written before results carried them); a taint without
 * timeAdded counts from now_ms.  Returns milliseconds since the epoch, or
 * -1 when no taint evicts; the earliest taint's device, key and origin in
 * why.  O(slices x devices + rules x devices x selectors). */
int64_t mu_dra_eviction_ms(const mu_dra_view_t *v, const json_t *claim, int64_t now_ms, char *why, size_t len);

/* The node an allocated claim is fixed to (the first value of its
 * nodeSelector's metadata.name field term), or NULL. */
const char *mu_dra_claim_node(const json_t *claim);

/* Whether core/v1 NodeSelector sel (its terms ORed; a term's matchExpressions
 * on labels and matchFields on metadata.name ANDed; In, NotIn, Exists,
 * DoesNotExist, Gt, Lt) selects the node named name with labels (an object,
 * or NULL).  A NULL sel selects every node; a term without requirements
 * none, as in kube.  Linear in sel. */
bool mu_dra_node_selects(const json_t *sel, const char *name, const json_t *labels);

#endif

/*
 * fuzz_dispatch.c - what the hub daemon (src/dispatch) reads from objects
 * anyone may write on the hub: the kubeconfig a Cluster's Secret holds
 * (mu_kube_config_parse), a hub Job's "KEY=VALUE,..." selector annotation
 * (mu__dlabels) and, read the same way, a pull agent's list of the kinds
 * it serves (mu__dkind_list), and a hub Job (or JobSet, PyTorchJob, MPIJob, RayJob,
 * RayCluster, Volcano Job, LeaderWorkerSet, PodGroup) or
 * Node as JSON turned into a worker's copy (mu__dcopy), a Workload
 * (mu__dkind_workload), an end (mu__dkind_done) and a cut-down Node
 * (mu__dnode_min).  Input: the three
 * parts separated by "\n===\n" (missing parts are empty).  The object is
 * also read as a group's pod (mu__dkind_pod_group, mu__dkind_pod_copy), and
 * its member "pods" as a PodGroup's pods, and checked as each kind's own
 * admission checks it (mu__dkind_check, with the coscheduling
 * minResources) and as a group that may wait for its pods
 * (mu__dkind_group_waits: KAI's sub-groups).  The object is also a pod
 * whose request is summed (mu__dpod_request) and a list of a worker's pods
 * ({"items": its "pods"}) summed per node (mu__dpods_used) and matched
 * against its "pdbs" as a worker's disruption budgets (mu__dpdb_allowances,
 * round 14); the selector
 * part is also read as an agent's report of them (mu__dused_parse, and
 * its named extended resources, mu__dused_ext, and its shares of one
 * GPU, mu__dused_model).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_int.h"

/* The next part of [*p, end) up to the separator; advances *p. */
static char *part(const char **p, const char *end)
{
	const char *sep = "\n===\n";
	const char *q = *p;
	const char *hit = NULL;
	for (const char *s = q; s + 5 <= end; s++)
		if (!memcmp(s, sep, 5)) {
			hit = s;
			break;
		}
	const char *stop = hit ? hit : end;
	char *out = malloc((size_t)(stop - q) + 1);
	if (!out)
		return NULL;
	memcpy(out, q, (size_t)(stop - q));
	out[stop - q] = '\0';
	*p = hit ? hit + 5 : end;
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	char *kc = part(&p, end), *sel = part(&p, end), *obj = part(&p, end);
	if (kc) {
		mu_kube_config_t cfg;
		char err[512];
		if (mu_kube_config_parse("secret ns/name", kc, strlen(kc), NULL, &cfg, err,
					 sizeof err) == MU_OK)
			mu_kube_config_release(&cfg);
	}
	if (sel) {
		mu_specs_t s;
		mu_specs_init(&s);
		mu_label_t *l;
		size_t n;
		mu__dlabels(sel, &s.arena, &l, &n);
		mu_specs_release(&s);
		bool on[MU__DK_COUNT];
		mu__dkind_list(sel, on);
		mu_res_t r;
		(void)mu__dused_parse(sel, &r);
		/* and its named extended resources taken from a node's */
		mu_ext_qty_t x = {"example.com/fpga", 5};
		mu_node_spec_t nd;
		memset(&nd, 0, sizeof nd);
		nd.ext = &x;
		nd.next = 1;
		(void)mu__dused_ext(sel, &nd);
		/* and its shares of one GPU (round 13), as the model takes them */
		mu_fleet_share_t sh[4];
		(void)mu__dused_model(sel, &r, sh, 4);
	}
	json_t *o = obj ? json_loads(obj, 0, NULL) : NULL;
	if (o) {
		/* the object read as each kind: its copy, and as a Workload */
		for (int k = 0; k < MU__DK_COUNT; k++) {
			json_decref(mu__dcopy(o, (mu__dkind_t)k, "uid-1", "ns/name", 1));
			/* a group's pods: the object's "pods" (any JSON) */
			if (k)
				json_decref(mu__dkind_workload(o, (mu__dkind_t)k,
							       json_object_get(o, "pods")));
			(void)mu__dkind_done(o, (mu__dkind_t)k);
			char msg[300];
			(void)mu__dkind_check(o, (mu__dkind_t)k, msg, sizeof msg);
			(void)mu__dkind_group_waits(o, (mu__dkind_t)k, json_object_get(o, "pods"), msg,
						    sizeof msg);
			(void)mu__dkind_pod_group(o, (mu__dkind_t)k);
		}
		(void)mu__dkind_group_min(o);
		mu_res_t r;
		mu__dpod_request(o, &r);
		json_t *l = json_pack("{s:O}", "items", json_object_get(o, "pods") ?
				      json_object_get(o, "pods") : json_null());
		json_decref(mu__dpods_used(l));
		json_decref(l);
		/* its "pdbs" as a worker's budgets over its "pods" (pdbs.c) */
		json_decref(mu__dpdb_allowances(json_object_get(o, "pdbs"), json_object_get(o, "pods")));
		json_decref(mu__dkind_pod_copy(o, "uid-1", "PodGroup:ns/name", 1));
		json_decref(mu__dnode_min(o));
		json_decref(o);
	}
	free(kc);
	free(sel);
	free(obj);
	return 0;
}

/*
 * podcap.c - capacity from pods: what pods the hub did not send take on a
 * worker's nodes.  A push worker's pods are watched as kube-scheduler's
 * informer watches them (the field selector status.phase!=Succeeded,
 * status.phase!=Failed), narrowed to the bound ones (spec.nodeName!=) and
 * to those without the label muster.io/hub-uid (the hub's own copies,
 * already in the worker's model as the jobs the fleet sent: not counted
 * twice).  Their requests are summed per node, as kube-scheduler's
 * NodeInfo sums a pod's effective request (Kubernetes' PodRequests: the
 * containers and sidecars, or the largest init container with the
 * sidecars started before it, whichever is larger, plus the pod's
 * overhead), and the node goes into the fleet with that much less room
 * (mu_fleet_node_upsert_used).  A pod with a share of one GPU (KAI's
 * gpu-fraction or gpu-memory annotations, muster.io/gpu-memory, or the
 * resource muster.io/gpu-milli, as the engine's loader reads them) takes
 * its device from whole-GPU pods: each device such pods hold on a node
 * (muster.io/gpus, which muster's scheduler writes at the bind) counts
 * once in the text's GPUs, and a share pod that names no device counts
 * one device of its own; since round 13 the shares whose size is known
 * (the bind's muster.io/gpu-milli, gpu-fraction, a muster.io/gpu-milli
 * request; not a gpu-memory pod without the bind's record) follow in the
 * text as muster.io/gpu-share entries, and the hub's model takes only
 * that much of the device (mu__dused_model, mu_fleet_node_upsert_shared:
 * the engine's own device accounting), so the room left on a shared
 * device is offered.  A reader of round 12 counts them whole.  Named
 * extended resources (a domain-prefixed name other than kubernetes.io's,
 * nvidia.com/gpu and muster.io's: kube-scheduler's extended resources)
 * are summed the same way, name by name, and taken from the node's named
 * resources in the model (round 12, mu__dused_ext).  In pull mode the
 * agent sums them on its worker the same way and reports them beside its
 * Nodes.  Calls only dutil.c (and the fleet through
 * worker.c); worker.c and agent.c call it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"

/* A container's requests (limits where a request is missing, as the API
 * server defaults them) into r: CPU, memory, whole GPUs.  O(resources). */
static void container_req(const json_t *ctr, mu_res_t *r)
{
	memset(r, 0, sizeof *r);
	static const struct {
		const char *name;
		int slot;
		int64_t scale;
	} want[] = {{"cpu", MU_RES_CPU, 1000}, {"memory", MU_RES_MEM, 1},
		    {"nvidia.com/gpu", MU_RES_GPU, 1}};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const json_t *v = json_object_get(mu__jget(ctr, "resources.requests"), want[i].name);
		if (!v)
			v = json_object_get(mu__jget(ctr, "resources.limits"), want[i].name);
		int64_t q = 0;
		if (json_is_string(v))
			mu_quantity_parse(json_string_value(v), want[i].scale, &q);
		else if (json_is_integer(v)) /* bounded before it is scaled */
			q = json_integer_value(v) > INT64_MAX / want[i].scale ? INT64_MAX :
			    json_integer_value(v) * want[i].scale;
		r->v[want[i].slot] = q > 0 ? q : 0;
	}
}

/* a += b (add) or a = max(a, b), slot by slot, saturating. */
static void combine(mu_res_t *a, const mu_res_t *b, bool add)
{
	for (int s = 0; s < MU_RES_NAMED0; s++) {
		if (!add)
			a->v[s] = a->v[s] > b->v[s] ? a->v[s] : b->v[s];
		else
			a->v[s] = b->v[s] > INT64_MAX - a->v[s] ? INT64_MAX : a->v[s] + b->v[s];
	}
}

void mu__dpod_request(const json_t *pod, mu_res_t *out)
{
	memset(out, 0, sizeof *out);
	mu_res_t c, side = {{0}}, init = {{0}};
	size_t i;
	const json_t *ctr;
	json_array_foreach(mu__jget(pod, "spec.containers"), i, ctr) {
		container_req(ctr, &c);
		combine(out, &c, true);
	}
	json_array_foreach(mu__jget(pod, "spec.initContainers"), i, ctr) {
		container_req(ctr, &c);
		const char *rp = json_string_value(json_object_get(ctr, "restartPolicy"));
		if (rp && !strcmp(rp, "Always")) { /* a sidecar: runs with the rest */
			combine(out, &c, true);
			combine(&side, &c, true);
			combine(&init, &side, false);
		} else {
			combine(&c, &side, true);
			combine(&init, &c, false);
		}
	}
	combine(out, &init, false);
	mu_res_t oh;
	const json_t *ov = mu__jget(pod, "spec.overhead");
	if (json_is_object(ov)) {
		json_t *fake = json_pack("{s:{s:O}}", "resources", "requests", ov);
		container_req(fake, &oh);
		json_decref(fake);
		combine(out, &oh, true);
	}
	out->v[MU_RES_PODS] = 1;
}

/* Whether pod asks for a share of one GPU rather than whole GPUs: KAI's
 * annotations gpu-fraction and gpu-memory, muster.io/gpu-memory, or a
 * container's muster.io/gpu-milli (requests or limits).  O(containers). */
static bool gpu_share(const json_t *pod)
{
	const json_t *an = mu__jget(pod, "metadata.annotations");
	if (json_object_get(an, "gpu-fraction") || json_object_get(an, "gpu-memory") ||
	    json_object_get(an, "muster.io/gpu-memory"))
		return true;
	size_t i;
	const json_t *c;
	json_array_foreach(mu__jget(pod, "spec.containers"), i, c)
		if (json_object_get(mu__jget(c, "resources.requests"), "muster.io/gpu-milli") ||
		    json_object_get(mu__jget(c, "resources.limits"), "muster.io/gpu-milli"))
			return true;
	return false;
}

/* Whether a resource name is a named extended resource, as
 * kube-scheduler's IsExtendedResourceName has it (a domain other than
 * kubernetes.io, not "requests."), less nvidia.com/gpu (a core slot) and
 * muster.io's own (GPU shares, counted by device above).  O(name). */
static bool named_ext(const char *name)
{
	return strchr(name, '/') && strncmp(name, "kubernetes.io/", 14) &&
	       !strstr(name, ".kubernetes.io/") && strncmp(name, "requests.", 9) &&
	       strcmp(name, "nvidia.com/gpu") && strncmp(name, "muster.io/", 10);
}

/* A container's request of name (its limit when no request), or 0. */
static int64_t ctr_named(const json_t *ctr, const char *name)
{
	const json_t *v = json_object_get(mu__jget(ctr, "resources.requests"), name);
	if (!v)
		v = json_object_get(mu__jget(ctr, "resources.limits"), name);
	int64_t q = 0;
	if (json_is_string(v))
		mu_quantity_parse(json_string_value(v), 1, &q);
	else if (json_is_integer(v))
		q = json_integer_value(v);
	return q > 0 ? q : 0;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	return b > INT64_MAX - a ? INT64_MAX : a + b;
}

/* Pod's effective request of name, as mu__dpod_request sums the core
 * slots (Kubernetes' PodRequests).  O(containers). */
static int64_t pod_named(const json_t *pod, const char *name)
{
	int64_t out = 0, side = 0, init = 0;
	size_t i;
	const json_t *ctr;
	json_array_foreach(mu__jget(pod, "spec.containers"), i, ctr)
		out = sat_add(out, ctr_named(ctr, name));
	json_array_foreach(mu__jget(pod, "spec.initContainers"), i, ctr) {
		int64_t c = ctr_named(ctr, name);
		const char *rp = json_string_value(json_object_get(ctr, "restartPolicy"));
		if (rp && !strcmp(rp, "Always")) {
			out = sat_add(out, c);
			side = sat_add(side, c);
			init = side > init ? side : init;
		} else {
			c = sat_add(c, side);
			init = c > init ? c : init;
		}
	}
	out = init > out ? init : out;
	const json_t *ov = json_object_get(mu__jget(pod, "spec.overhead"), name);
	int64_t q = 0;
	if (json_is_string(ov))
		mu_quantity_parse(json_string_value(ov), 1, &q);
	return sat_add(out, q > 0 ? q : 0);
}

/* Adds pod's named extended resources to sums (name -> integer).
 * O(containers x resources). */
static void pod_named_add(const json_t *pod, json_t *sums)
{
	json_t *names = json_object();
	static const char *const where[] = {"spec.containers", "spec.initContainers"};
	for (int w = 0; w < 2; w++) {
		size_t i;
		const json_t *ctr;
		json_array_foreach(mu__jget(pod, where[w]), i, ctr) {
			static const char *const part[] = {"resources.requests", "resources.limits"};
			for (int k = 0; k < 2; k++) {
				const char *n;
				json_t *v;
				json_object_foreach(mu__jget(ctr, part[k]), n, v)
					if (named_ext(n))
						json_object_set_new(names, n, json_true());
			}
		}
	}
	const char *n;
	json_t *v;
	json_object_foreach(names, n, v) {
		int64_t q = pod_named(pod, n);
		if (q <= 0)
			continue;
		int64_t had = json_integer_value(json_object_get(sums, n));
		json_object_set_new(sums, n, json_integer(sat_add(had, q)));
	}
	json_decref(names);
}

/* The share of one GPU a share pod takes, in milli-GPU: the share
 * muster's scheduler recorded at the bind (muster.io/gpu-milli), KAI's
 * gpu-fraction (kept to milli-GPU, as the loader keeps it), or its
 * containers' muster.io/gpu-milli; 0 when not known (a gpu-memory pod
 * without the bind's record: its share depends on its device's memory).
 * O(containers). */
static int64_t share_milli(const json_t *pod)
{
	const char *m = mu__dmeta(pod, "annotations", "muster.io/gpu-milli");
	const char *fr = mu__dmeta(pod, "annotations", "gpu-fraction");
	char *end;
	if (m) {
		long long v = strtoll(m, &end, 10);
		return !*end && v > 0 && v <= 1000 ? v : 0;
	}
	if (fr) {
		double v = strtod(fr, &end);
		return !*end && v > 0 && v <= 1 ? (int64_t)(v * 1000 + 0.5) : 0;
	}
	int64_t v = pod_named(pod, "muster.io/gpu-milli");
	return v > 0 && v <= 1000 ? v : 0;
}

/* Adds a share pod to devs (device -> milli-GPU taken there, -1 when not
 * known: the device counts whole): the device muster.io/gpus names ("3"),
 * or one of its own ("?NAMESPACE/NAME") when it names none; each of
 * several named devices counts whole.  O(devices). */
static void share_devices(const json_t *pod, json_t *devs)
{
	const char *g = mu__dmeta(pod, "annotations", "muster.io/gpus");
	int64_t milli = share_milli(pod);
	char k[300];
	int n_named = 0;
	for (const char *p = g ? g : ""; *p; p += *p == ',') {
		size_t n = strcspn(p, ",");
		n_named += n > 0 && n < 16;
		p += n;
	}
	if (n_named > 1)
		milli = 0;
	for (const char *p = g ? g : ""; *p;) {
		size_t n = strcspn(p, ",");
		if (n > 0 && n < 16) {
			snprintf(k, sizeof k, "%.*s", (int)n, p);
			int64_t had = json_integer_value(json_object_get(devs, k));
			bool known = milli > 0 && had >= 0;
			json_object_set_new(devs, k, json_integer(known ? had + milli : -1));
		}
		p += n;
		if (*p == ',')
			p++;
	}
	if (!n_named) {
		const char *ns = mu__jstr(pod, "metadata.namespace"), *nm = mu__jstr(pod, "metadata.name");
		snprintf(k, sizeof k, "?%.100s/%.150s", ns ? ns : "", nm ? nm : "");
		json_object_set_new(devs, k, json_integer(milli > 0 ? milli : -1));
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends ",NAME=QTY" for each of ext's names, sorted, to t (size n). */
static void named_text(const json_t *ext, char *t, size_t n)
{
	size_t k = json_object_size(ext), m = 0;
	if (!k)
		return;
	const char **keys = malloc(k * sizeof *keys);
	if (!keys)
		return;
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)ext, key, v)
		keys[m++] = key;
	qsort(keys, m, sizeof *keys, cmp_str);
	for (size_t i = 0; i < m; i++) {
		size_t l = strlen(t);
		snprintf(t + l, n - l, ",%s=%" PRId64, keys[i],
			 (int64_t)json_integer_value(json_object_get(ext, keys[i])));
	}
	free(keys);
}

/* Appends ",muster.io/gpu-share.D=M" for each device D of devs (as
 * share_devices fills it) whose shares are known and below a whole GPU,
 * and ",muster.io/gpu-share=M" for each such pod that names no device,
 * sorted, to t (size n).  O(devices log devices). */
static void share_text(const json_t *devs, char *t, size_t n)
{
	size_t k = json_object_size(devs), m = 0;
	const char **keys = k ? malloc(k * sizeof *keys) : NULL;
	if (!keys)
		return;
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)devs, key, v)
		keys[m++] = key;
	qsort(keys, m, sizeof *keys, cmp_str);
	for (size_t i = 0; i < m; i++) {
		int64_t milli = json_integer_value(json_object_get(devs, keys[i]));
		if (milli <= 0 || milli >= 1000)
			continue; /* not known, or whole: counted as a whole GPU */
		size_t l = strlen(t);
		if (keys[i][0] == '?')
			snprintf(t + l, n - l, ",%s=%" PRId64, MU__D_SHARE, milli);
		else
			snprintf(t + l, n - l, ",%s.%s=%" PRId64, MU__D_SHARE, keys[i], milli);
	}
	free(keys);
}

int mu__dused_shares(const char *s, mu_fleet_share_t *out, int32_t max)
{
	int32_t n = 0;
	size_t pl = strlen(MU__D_SHARE);
	for (const char *p = s ? strstr(s, ",pods=") : NULL; p && *p; p += strcspn(p + 1, ",") + 1) {
		if (strncmp(p + 1, MU__D_SHARE, pl) || (p[1 + pl] != '=' && p[1 + pl] != '.'))
			continue;
		const char *q = p + 1 + pl;
		long long dev = -1, milli;
		char *end;
		if (*q == '.') {
			dev = strtoll(q + 1, &end, 10);
			if (end == q + 1 || *end != '=' || dev < 0 || dev >= MU_MAX_GPUS)
				return MU_EPARSE;
			q = end;
		}
		milli = strtoll(q + 1, &end, 10);
		if (end == q + 1 || (*end && *end != ',') || milli < 1 || milli > 999)
			return MU_EPARSE;
		if (n < max)
			out[n++] = (mu_fleet_share_t){(int32_t)dev, (int32_t)milli};
	}
	return n;
}

int mu__dused_model(const char *s, mu_res_t *used, mu_fleet_share_t *sh, int32_t max)
{
	int rc = mu__dused_parse(s, used);
	int32_t n = rc == MU_OK ? mu__dused_shares(s, sh, max) : rc;
	if (n < 0)
		return n;
	/* each share is one of the text's GPUs and pods: in the model it is
	 * a one-pod job holding its milli-GPU instead */
	used->v[MU_RES_GPU] = used->v[MU_RES_GPU] > n ? used->v[MU_RES_GPU] - n : 0;
	used->v[MU_RES_PODS] = used->v[MU_RES_PODS] > n ? used->v[MU_RES_PODS] - n : 0;
	return n;
}

int mu__dused_ext(const char *s, mu_node_spec_t *n)
{
	const char *p = s ? strstr(s, ",pods=") : NULL;
	if (!p)
		return MU_EPARSE;
	p += strcspn(p + 1, ",") + 1; /* past pods=N */
	while (*p == ',') {
		p++;
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		if (!eq || eq == p)
			return MU_EPARSE;
		char val[32];
		size_t vl = len - (size_t)(eq + 1 - p);
		if (vl == 0 || vl >= sizeof val)
			return MU_EPARSE;
		memcpy(val, eq + 1, vl);
		val[vl] = '\0';
		char *end;
		long long q = strtoll(val, &end, 10);
		if (*end || q < 0)
			return MU_EPARSE;
		for (size_t i = 0; i < n->next; i++)
			if (strlen(n->ext[i].name) == (size_t)(eq - p) &&
			    !strncmp(n->ext[i].name, p, (size_t)(eq - p)))
				n->ext[i].qty = n->ext[i].qty > q ? n->ext[i].qty - q : 0;
		p += len;
	}
	return *p ? MU_EPARSE : MU_OK;
}

json_t *mu__dpods_used(const json_t *list)
{
	json_t *shared = json_object(); /* node -> {device: true} of share pods */
	json_t *sums = json_object(); /* node -> [cpu, mem, gpu, pods] */
	json_t *named = json_object(); /* node -> {extended resource: sum} */
	size_t i;
	const json_t *p;
	json_array_foreach(json_object_get(list, "items"), i, p) {
		const char *node = mu__jstr(p, "spec.nodeName");
		const char *ph = mu__jstr(p, "status.phase");
		if (!node || !*node || (ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"))) ||
		    mu__dmeta(p, "labels", MU__D_HUBUID))
			continue;
		mu_res_t r;
		mu__dpod_request(p, &r);
		if (gpu_share(p)) {
			json_t *dv = json_object_get(shared, node);
			if (!dv) {
				dv = json_object();
				json_object_set_new(shared, node, dv);
			}
			share_devices(p, dv);
			r.v[MU_RES_GPU] = 0; /* counted by device, below */
		}
		json_t *nx = json_object_get(named, node);
		if (!nx) {
			nx = json_object();
			json_object_set_new(named, node, nx);
		}
		pod_named_add(p, nx);
		json_t *s = json_object_get(sums, node);
		if (!s) {
			s = json_pack("[IIII]", (json_int_t)0, (json_int_t)0, (json_int_t)0, (json_int_t)0);
			json_object_set_new(sums, node, s);
		}
		static const int slot[4] = {MU_RES_CPU, MU_RES_MEM, MU_RES_GPU, MU_RES_PODS};
		for (size_t k = 0; k < 4; k++) {
			int64_t v = json_integer_value(json_array_get(s, k));
			int64_t a = r.v[slot[k]];
			json_array_set_new(s, k, json_integer(a > INT64_MAX - v ? INT64_MAX : v + a));
		}
	}
	json_t *out = json_object();
	const char *k;
	json_t *v;
	json_object_foreach(sums, k, v) {
		char t[2048];
		snprintf(t, sizeof t, "cpu=%" PRId64 "m,memory=%" PRId64 ",nvidia.com/gpu=%" PRId64
			 ",pods=%" PRId64, (int64_t)json_integer_value(json_array_get(v, 0)),
			 (int64_t)json_integer_value(json_array_get(v, 1)),
			 (int64_t)json_integer_value(json_array_get(v, 2)) +
			 (int64_t)json_object_size(json_object_get(shared, k)),
			 (int64_t)json_integer_value(json_array_get(v, 3)));
		named_text(json_object_get(named, k), t, sizeof t);
		share_text(json_object_get(shared, k), t, sizeof t);
		json_object_set_new(out, k, json_string(t));
	}
	json_decref(named);
	json_decref(sums);
	json_decref(shared);
	return out;
}

int mu__dused_parse(const char *s, mu_res_t *out)
{
	memset(out, 0, sizeof *out);
	long long cpu, mem, gpu, pods;
	if (!s || sscanf(s, "cpu=%lldm,memory=%lld,nvidia.com/gpu=%lld,pods=%lld", &cpu, &mem, &gpu,
			 &pods) != 4 || cpu < 0 || mem < 0 || gpu < 0 || pods < 0)
		return MU_EPARSE;
	out->v[MU_RES_CPU] = cpu;
	out->v[MU_RES_MEM] = mem;
	out->v[MU_RES_GPU] = gpu;
	out->v[MU_RES_PODS] = pods;
	return MU_OK;
}

bool mu__dused_poll(mu__dd_t *d, mu__dcl_t *c)
{
	uint64_t seq = 0;
	json_t *l = NULL;
	if (!c->wused || !mu_kube_watch_items(c->wused, NULL, &seq) || seq == c->used_seq)
		return false;
	if (!mu_kube_watch_items(c->wused, &l, &seq))
		return false;
	json_t *u = mu__dpods_used(l);
	json_decref(l);
	c->used_seq = seq;
	bool changed = !c->used || !json_equal(u, c->used);
	json_decref(c->used);
	c->used = u;
	if (changed)
		mu__dlog(d, 2, "cluster %s: pods it runs beside the hub's on %zu nodes", c->name,
			 json_object_size(u));
	return changed;
}

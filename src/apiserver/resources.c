/*
 * resources.c - the registry of resource types the control plane serves,
 * and their table columns (what `kubectl get` prints).
 *
 * The registry is a constant array; a type's index in it is its `rt`
 * everywhere else (MU__RT_* names the positions).  Adding a type is adding
 * an entry here, its row function, and its validation in validate.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apiserver/apiserver_int.h"
#include "apiserver/crd.h"

/* --- table rows --------------------------------------------------------- */

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* A string cell; "" when the object lacks the field, so that every row has
 * one cell per column whatever the object holds. */
static void cell_str(json_t *cells, const char *s)
{
	json_array_append_new(cells, json_string(s ? s : ""));
}

static void cell_s(json_t *cells, const char *s)
{
	cell_str(cells, s && *s ? s : "<none>");
}

static void cell_i(json_t *cells, json_int_t v)
{
	json_array_append_new(cells, json_integer(v));
}

static void cell_age(json_t *cells, const json_t *obj, const char *path, int64_t now)
{
	char buf[32] = "<unknown>";
	int64_t t = mu__parse_rfc3339(mu__jstr(obj, path));
	if (t >= 0)
		mu__age(now - t, buf, sizeof buf);
	cell_str(cells, buf);
}

static const char *cond_status(const json_t *obj, const char *type)
{
	size_t i;
	json_t *c;
	json_array_foreach(mu__jget(obj, "status.conditions"), i, c)
		if (json_is_string(json_object_get(c, "type")) &&
		    !strcmp(json_string_value(json_object_get(c, "type")), type))
			return json_string_value(json_object_get(c, "status"));
	return NULL;
}

static void row_pod(const json_t *o, int64_t now, json_t *cells)
{
	size_t i, ready = 0, total = json_array_size(mu__jget(o, "spec.containers"));
	json_int_t restarts = 0;
	json_t *cs;
	json_array_foreach(mu__jget(o, "status.containerStatuses"), i, cs) {
		ready += json_is_true(json_object_get(cs, "ready"));
		restarts += json_integer_value(json_object_get(cs, "restartCount"));
	}
	char rd[48];
	snprintf(rd, sizeof rd, "%zu/%zu", ready, total);
	const char *phase = mu__jstr(o, "status.phase");
	const char *reason = mu__jstr(o, "status.reason");
	const char *st = phase ? phase : "Pending";
	if (mu__jget(o, "metadata.deletionTimestamp"))
		st = "Terminating";
	else if (reason && *reason)
		st = reason;
	else if (phase && !strcmp(phase, "Succeeded"))
		st = "Completed";
	else if (phase && !strcmp(phase, "Failed"))
		st = "Error";
	else if (json_array_size(mu__jget(o, "spec.schedulingGates")))
		st = "SchedulingGated";
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_str(cells, rd);
	cell_str(cells, st);
	cell_i(cells, restarts);
	cell_age(cells, o, "metadata.creationTimestamp", now);
	cell_s(cells, mu__jstr(o, "status.podIP"));
	cell_s(cells, mu__jstr(o, "spec.nodeName"));
	cell_s(cells, mu__jstr(o, "status.nominatedNodeName"));
	cell_s(cells, NULL);
}

static void row_node(const json_t *o, int64_t now, json_t *cells)
{
	const char *ready = cond_status(o, "Ready");
	char st[64];
	snprintf(st, sizeof st, "%s%s", ready && !strcmp(ready, "True") ? "Ready" : "NotReady",
		 json_is_true(mu__jget(o, "spec.unschedulable")) ? ",SchedulingDisabled" : "");
	char roles[256] = "";
	const char *k;
	json_t *v;
	json_object_foreach(mu__jget(o, "metadata.labels"), k, v)
		if (!strncmp(k, "node-role.kubernetes.io/", 24) && strlen(roles) + strlen(k) < sizeof roles - 2)
			snprintf(roles + strlen(roles), sizeof roles - strlen(roles), "%s%s",
				 *roles ? "," : "", k + 24);
	const char *ip = NULL;
	size_t i;
	json_array_foreach(mu__jget(o, "status.addresses"), i, v)
		if (!strcmp(nz(json_string_value(json_object_get(v, "type"))), "InternalIP"))
			ip = json_string_value(json_object_get(v, "address"));
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_str(cells, st);
	cell_s(cells, roles);
	cell_age(cells, o, "metadata.creationTimestamp", now);
	cell_s(cells, mu__jstr(o, "status.nodeInfo.kubeletVersion"));
	cell_s(cells, ip);
	cell_s(cells, NULL);
	cell_s(cells, mu__jstr(o, "status.nodeInfo.osImage"));
	cell_s(cells, mu__jstr(o, "status.nodeInfo.kernelVersion"));
	cell_s(cells, mu__jstr(o, "status.nodeInfo.containerRuntimeVersion"));
}

static void row_namespace(const json_t *o, int64_t now, json_t *cells)
{
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_s(cells, mu__jstr(o, "status.phase"));
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_event(const json_t *o, int64_t now, json_t *cells)
{
	const char *last = mu__jstr(o, "lastTimestamp") ? "lastTimestamp"
			   : mu__jstr(o, "eventTime") ? "eventTime" : "metadata.creationTimestamp";
	char obj[600], kind[64];
	snprintf(kind, sizeof kind, "%s", nz(mu__jstr(o, "involvedObject.kind")));
	for (char *p = kind; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	snprintf(obj, sizeof obj, "%s/%s", kind, nz(mu__jstr(o, "involvedObject.name")));
	cell_age(cells, o, last, now);
	cell_s(cells, mu__jstr(o, "type"));
	cell_s(cells, mu__jstr(o, "reason"));
	cell_str(cells, obj);
	cell_str(cells, nz(mu__jstr(o, "message")));
	cell_s(cells, mu__jstr(o, "involvedObject.fieldPath"));
	cell_s(cells, (mu__jstr(o, "source.component") ? mu__jstr(o, "source.component") : mu__jstr(o, "reportingComponent")));
	cell_age(cells, o, mu__jstr(o, "firstTimestamp") ? "firstTimestamp" : last, now);
	cell_i(cells, (json_integer_value(json_object_get(o, "count")) ? json_integer_value(json_object_get(o, "count")) : 1));
	cell_str(cells, mu__jstr(o, "metadata.name"));
}

static void row_lease(const json_t *o, int64_t now, json_t *cells)
{
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_s(cells, mu__jstr(o, "spec.holderIdentity"));
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_configmap(const json_t *o, int64_t now, json_t *cells)
{
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_i(cells, (json_int_t)(json_object_size(json_object_get(o, "data")) +
				   json_object_size(json_object_get(o, "binaryData"))));
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_secret(const json_t *o, int64_t now, json_t *cells)
{
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_str(cells, mu__jstr(o, "type"));
	cell_i(cells, (json_int_t)json_object_size(json_object_get(o, "data")));
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_serviceaccount(const json_t *o, int64_t now, json_t *cells)
{
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_i(cells, (json_int_t)json_array_size(json_object_get(o, "secrets")));
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_priorityclass(const json_t *o, int64_t now, json_t *cells)
{
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_i(cells, json_integer_value(json_object_get(o, "value")));
	json_array_append_new(cells, json_boolean(json_is_true(json_object_get(o, "globalDefault"))));
	cell_age(cells, o, "metadata.creationTimestamp", now);
	cell_str(cells, mu__jstr(o, "preemptionPolicy"));
}

/* Job status word as kubectl 1.32 prints it. */
static const char *job_status(const json_t *o)
{
	static const char *const order[] = {"Failed", "Complete", "Suspended", "FailureTarget", "SuccessCriteriaMet"};
	for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
		const char *s = cond_status(o, order[i]);
		if (s && !strcmp(s, "True"))
			return i == 3 ? "FailureTarget" : i == 4 ? "SuccessCriteriaMet" : order[i];
	}
	return "Running";
}

static void row_job(const json_t *o, int64_t now, json_t *cells)
{
	char comp[64], dur[32] = "", sel[512] = "";
	json_int_t succ = json_integer_value(mu__jget(o, "status.succeeded"));
	const json_t *c = mu__jget(o, "spec.completions");
	json_int_t par = mu__jget(o, "spec.parallelism") ? json_integer_value(mu__jget(o, "spec.parallelism")) : 1;
	if (json_is_integer(c))
		snprintf(comp, sizeof comp, "%lld/%lld", (long long)succ, (long long)json_integer_value(c));
	else if (par > 1)
		snprintf(comp, sizeof comp, "%lld/1 of %lld", (long long)succ, (long long)par);
	else
		snprintf(comp, sizeof comp, "%lld/1", (long long)succ);
	int64_t st = mu__parse_rfc3339(mu__jstr(o, "status.startTime"));
	int64_t ct = mu__parse_rfc3339(mu__jstr(o, "status.completionTime"));
	if (st >= 0)
		mu__age((ct >= 0 ? ct : now) - st, dur, sizeof dur);
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_str(cells, job_status(o));
	cell_str(cells, comp);
	cell_str(cells, dur);
	cell_age(cells, o, "metadata.creationTimestamp", now);
	char names[512] = "", images[1024] = "";
	size_t i;
	json_t *ct2;
	json_array_foreach(mu__jget(o, "spec.template.spec.containers"), i, ct2) {
		size_t ln = strlen(names), li = strlen(images);
		snprintf(names + ln, sizeof names - ln, "%s%s", i ? "," : "",
			 nz(json_string_value(json_object_get(ct2, "name"))));
		snprintf(images + li, sizeof images - li, "%s%s", i ? "," : "",
			 nz(json_string_value(json_object_get(ct2, "image"))));
	}
	const char *k;
	json_t *v;
	json_object_foreach(mu__jget(o, "spec.selector.matchLabels"), k, v) {
		size_t l = strlen(sel);
		snprintf(sel + l, sizeof sel - l, "%s%s=%s", l ? "," : "", k, nz(json_string_value(v)));
	}
	cell_s(cells, names);
	cell_s(cells, images);
	cell_s(cells, sel);
}

static void qty_cell(json_t *cells, const json_t *o, const char *path)
{
	const json_t *v = mu__jget(o, path);
	char buf[64] = "";
	if (json_is_string(v))
		snprintf(buf, sizeof buf, "%s", json_string_value(v));
	else if (json_is_number(v))
		snprintf(buf, sizeof buf, "%g", json_number_value(v));
	cell_s(cells, buf);
}

static void row_queue(const json_t *o, int64_t now, json_t *cells)
{
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_s(cells, mu__jstr(o, "spec.parent"));
	cell_i(cells, json_integer_value(mu__jget(o, "spec.priority")));
	qty_cell(cells, o, "spec.resources.gpu.deserved");
	qty_cell(cells, o, "spec.resources.gpu.limit");
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_podgroup(const json_t *o, int64_t now, json_t *cells)
{
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_s(cells, mu__jstr(o, "spec.queue"));
	cell_i(cells, json_integer_value(mu__jget(o, "spec.minMember")));
	cell_s(cells, mu__jstr(o, "status.phase"));
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_cluster(const json_t *o, int64_t now, json_t *cells)
{
	char cost[32] = "<none>";
	const json_t *c = mu__jget(o, "spec.costPerGPUHour");
	if (json_is_number(c))
		snprintf(cost, sizeof cost, "%g", json_number_value(c));
	const char *mode = mu__jstr(o, "spec.mode");
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_s(cells, mu__jstr(o, "spec.tier"));
	cell_str(cells, mode && *mode ? mode : "push");
	cell_s(cells, mu__jstr(o, "status.state"));
	cell_i(cells, json_integer_value(mu__jget(o, "status.gpus")));
	cell_i(cells, json_integer_value(mu__jget(o, "status.freeGPUs")));
	cell_i(cells, json_integer_value(mu__jget(o, "status.running")));
	cell_i(cells, json_integer_value(mu__jget(o, "status.queued")));
	cell_str(cells, cost);
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_nodepool(const json_t *o, int64_t now, json_t *cells)
{
	char sel[1024] = "";
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)mu__jget(o, "spec.selector.matchLabels"), k, v) {
		size_t n = strlen(sel);
		snprintf(sel + n, sizeof sel - n, "%s%s=%s", n ? "," : "", k, nz(json_string_value(v)));
	}
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_s(cells, sel);
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_topology(const json_t *o, int64_t now, json_t *cells)
{
	char lv[1024] = "";
	size_t i;
	json_t *l;
	json_array_foreach(mu__jget(o, "spec.levels"), i, l) {
		size_t n = strlen(lv);
		snprintf(lv + n, sizeof lv - n, "%s%s", i ? "," : "",
			 nz(json_string_value(json_object_get(l, "nodeLabel"))));
	}
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_s(cells, lv);
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_xpodgroup(const json_t *o, int64_t now, json_t *cells)
{
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_s(cells, mu__jstr(o, "status.phase"));
	cell_i(cells, json_integer_value(mu__jget(o, "spec.minMember")));
	cell_i(cells, json_integer_value(mu__jget(o, "status.running")));
	cell_i(cells, json_integer_value(mu__jget(o, "status.succeeded")));
	cell_i(cells, json_integer_value(mu__jget(o, "status.failed")));
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_nrt(const json_t *o, int64_t now, json_t *cells)
{
	const char *policy = NULL;
	size_t i;
	json_t *a;
	json_array_foreach(json_object_get(o, "attributes"), i, a)
		if (!strcmp(nz(json_string_value(json_object_get(a, "name"))), "topologyManagerPolicy"))
			policy = json_string_value(json_object_get(a, "value"));
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_i(cells, (json_int_t)json_array_size(json_object_get(o, "zones")));
	cell_s(cells, policy);
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_created(const json_t *o, int64_t now, json_t *cells)
{
	(void)now;
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_str(cells, mu__jstr(o, "metadata.creationTimestamp"));
}

static void row_binding(const json_t *o, int64_t now, json_t *cells)
{
	char role[300];
	snprintf(role, sizeof role, "%s/%s", nz(mu__jstr(o, "roleRef.kind")), nz(mu__jstr(o, "roleRef.name")));
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_str(cells, role);
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_pdb(const json_t *o, int64_t now, json_t *cells)
{
	cell_str(cells, mu__jstr(o, "metadata.name"));
	qty_cell(cells, o, "spec.minAvailable");
	qty_cell(cells, o, "spec.maxUnavailable");
	cell_i(cells, json_integer_value(mu__jget(o, "status.disruptionsAllowed")));
	cell_age(cells, o, "metadata.creationTimestamp", now);
}

static void row_crd(const json_t *o, int64_t now, json_t *cells)
{
	(void)now;
	cell_str(cells, mu__jstr(o, "metadata.name"));
	cell_str(cells, mu__jstr(o, "metadata.creationTimestamp"));
}

/* --- the registry ------------------------------------------------------- */

#define NAMECOL {"Name", "string", "name", "Name must be unique within a namespace.", 0}
#define AGECOL {"Age", "string", "", "Time since creation.", 0}
#define N(a) ((int)(sizeof(a) / sizeof *(a)))

static const mu__col_t pod_cols[] = {
	NAMECOL,
	{"Ready", "string", "", "Ready containers of all containers.", 0},
	{"Status", "string", "", "The phase, or why the pod is in it.", 0},
	{"Restarts", "integer", "", "Container restarts.", 0},
	AGECOL,
	{"IP", "string", "", "The pod's IP address.", 1},
	{"Node", "string", "", "The node the pod is bound to.", 1},
	{"Nominated Node", "string", "", "Node nominated by preemption.", 1},
	{"Readiness Gates", "string", "", "Readiness gates.", 1},
};
static const mu__col_t node_cols[] = {
	NAMECOL,
	{"Status", "string", "", "Ready or NotReady, and SchedulingDisabled.", 0},
	{"Roles", "string", "", "node-role.kubernetes.io labels.", 0},
	AGECOL,
	{"Version", "string", "", "Kubelet version.", 0},
	{"Internal-IP", "string", "", "Internal address.", 1},
	{"External-IP", "string", "", "External address.", 1},
	{"OS-Image", "string", "", "OS image.", 1},
	{"Kernel-Version", "string", "", "Kernel version.", 1},
	{"Container-Runtime", "string", "", "Container runtime.", 1},
};
static const mu__col_t ns_cols[] = {
	NAMECOL, {"Status", "string", "", "The namespace phase.", 0}, AGECOL,
};
static const mu__col_t event_cols[] = {
	{"Last Seen", "string", "", "When the event last happened.", 0},
	{"Type", "string", "", "Normal or Warning.", 0},
	{"Reason", "string", "", "Why the event happened.", 0},
	{"Object", "string", "", "The object the event is about.", 0},
	{"Message", "string", "", "What happened.", 0},
	{"Subobject", "string", "", "Field path in the object.", 1},
	{"Source", "string", "", "The component that reported it.", 1},
	{"First Seen", "string", "", "When it first happened.", 1},
	{"Count", "integer", "", "How often it happened.", 1},
	{"Name", "string", "name", "The event's name.", 1},
};
static const mu__col_t configmap_cols[] = {
	NAMECOL, {"Data", "integer", "", "Number of keys.", 0}, AGECOL,
};
static const mu__col_t secret_cols[] = {
	NAMECOL, {"Type", "string", "", "The secret's type.", 0}, {"Data", "integer", "", "Number of keys.", 0},
	AGECOL,
};
static const mu__col_t serviceaccount_cols[] = {
	NAMECOL, {"Secrets", "integer", "", "Number of secrets.", 0}, AGECOL,
};
static const mu__col_t priorityclass_cols[] = {
	NAMECOL, {"Value", "integer", "", "The priority of pods of this class.", 0},
	{"Global-Default", "boolean", "", "Whether pods without a class get this one.", 0}, AGECOL,
	{"PreemptionPolicy", "string", "", "Whether its pods may preempt.", 0},
};
static const mu__col_t lease_cols[] = {
	NAMECOL, {"Holder", "string", "", "Who holds the lease.", 0}, AGECOL,
};
static const mu__col_t job_cols[] = {
	NAMECOL,
	{"Status", "string", "", "Running, Complete, Failed or Suspended.", 0},
	{"Completions", "string", "", "Succeeded of desired completions.", 0},
	{"Duration", "string", "", "How long the job ran.", 0},
	AGECOL,
	{"Containers", "string", "", "Container names.", 1},
	{"Images", "string", "", "Container images.", 1},
	{"Selector", "string", "", "The pod selector.", 1},
};
static const mu__col_t queue_cols[] = {
	NAMECOL,
	{"Parent", "string", "", "The parent queue.", 0},
	{"Priority", "integer", "", "Higher is served first among siblings.", 0},
	{"GPU Deserved", "string", "", "Deserved GPUs.", 0},
	{"GPU Limit", "string", "", "GPU limit.", 0},
	AGECOL,
};
static const mu__col_t podgroup_cols[] = {
	NAMECOL,
	{"Queue", "string", "", "The queue.", 0},
	{"Min Member", "integer", "", "Pods that must start together.", 0},
	{"Phase", "string", "", "The group's phase.", 0},
	AGECOL,
};
static const mu__col_t cluster_cols[] = {
	NAMECOL,
	{"Tier", "string", "", "private, edge or public.", 0},
	{"Mode", "string", "", "push (the hub creates jobs there) or pull (an agent does).", 0},
	{"State", "string", "", "Ready, Unreachable or Draining, as the hub sees it.", 0},
	{"GPUs", "integer", "", "GPUs on the cluster's nodes.", 0},
	{"Free GPUs", "integer", "", "GPUs no pod holds.", 0},
	{"Running", "integer", "", "Jobs the hub sent there that run.", 0},
	{"Queued", "integer", "", "Jobs on the hub that only this cluster could take.", 1},
	{"Cost", "string", "", "Price of one GPU-hour.", 1},
	AGECOL,
};
static const mu__col_t nodepool_cols[] = {
	NAMECOL, {"Selector", "string", "", "The labels its nodes carry.", 0}, AGECOL,
};
static const mu__col_t topology_cols[] = {
	NAMECOL, {"Levels", "string", "", "Node labels, outermost first.", 0}, AGECOL,
};
static const mu__col_t xpodgroup_cols[] = {
	NAMECOL,
	{"Phase", "string", "", "The group's phase.", 0},
	{"MinMember", "integer", "", "Pods that must start together.", 0},
	{"Running", "integer", "", "Running pods.", 0},
	{"Succeeded", "integer", "", "Succeeded pods.", 1},
	{"Failed", "integer", "", "Failed pods.", 1},
	AGECOL,
};
static const mu__col_t nrt_cols[] = {
	NAMECOL,
	{"Zones", "integer", "", "NUMA zones.", 0},
	{"Policy", "string", "", "Topology manager policy.", 0},
	AGECOL,
};

/* kubectl's printCertificateSigningRequest */
static const mu__col_t csr_cols[] = {
	NAMECOL, AGECOL,
	{"SignerName", "string", "", "The signer the request is for.", 0},
	{"Requestor", "string", "", "Who made the request.", 0},
	{"RequestedDuration", "string", "", "The validity asked for (expirationSeconds).", 0},
	{"Condition", "string", "", "Approved, Denied or Pending, then Failed and Issued.", 0},
};
static const char *const csr_fields[] = {"spec.signerName", NULL};

static const mu__col_t crd_cols[] = {
	NAMECOL, {"Created At", "date", "", "When the definition was created.", 0},
};

static const mu__col_t binding_cols[] = {
	NAMECOL, {"Role", "string", "", "The role it grants.", 0}, AGECOL,
};

static const mu__col_t pdb_cols[] = {
	NAMECOL, {"Min Available", "string", "", "Pods that must stay available.", 0},
	{"Max Unavailable", "string", "", "Pods that may be unavailable.", 0},
	{"Allowed Disruptions", "integer", "", "Evictions allowed now (status).", 0}, AGECOL,
};

static const mu__col_t deploy_cols[] = {
	NAMECOL, {"Ready", "string", "", "Ready replicas of the desired.", 0},
	{"Up-to-date", "integer", "", "Replicas updated to the template (status).", 0},
	{"Available", "integer", "", "Available replicas (status).", 0}, AGECOL,
};
static const mu__col_t rs_cols[] = {
	NAMECOL, {"Desired", "integer", "", "spec.replicas.", 0}, {"Current", "integer", "", "status.replicas.", 0},
	{"Ready", "integer", "", "status.readyReplicas.", 0}, AGECOL,
};
static const mu__col_t sts_cols[] = {
	NAMECOL, {"Ready", "string", "", "Ready replicas of the desired.", 0}, AGECOL,
};

static const char *const pod_fields[] = {
	"spec.nodeName", "spec.schedulerName", "status.phase", "spec.restartPolicy",
	"spec.serviceAccountName", "status.podIP", "status.nominatedNodeName",
	"spec.hostNetwork", NULL,
};
static const mu__col_t slice_cols[] = {
	NAMECOL, {"Node", "string", "", "The node the devices are on.", 0},
	{"Driver", "string", "", "The DRA driver.", 0},
	{"Pool", "string", "", "The pool of devices.", 0}, AGECOL,
};
static const mu__col_t dra_named_cols[] = {NAMECOL, AGECOL};
static const mu__col_t claim_cols[] = {
	NAMECOL, {"State", "string", "", "pending, allocated, allocated,reserved or deleted.", 0}, AGECOL,
};
static const char *const node_fields[] = {"spec.unschedulable", NULL};
static const char *const ns_fields[] = {"status.phase", NULL};
static const char *const event_fields[] = {
	"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
	"involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
	"involvedObject.fieldPath", "reason", "reportingComponent", "type", "source.component",
	NULL,
};
static const char *const job_fields[] = {"status.succeeded", NULL};

static const mu__rtype_t types[MU__RT_COUNT] = {
	[MU__RT_NAMESPACES] = {"", "v1", "namespaces", "namespace", "Namespace", {"ns"}, false,
			       true, false, MU__SUB_STATUS, ns_fields, ns_cols, N(ns_cols),
			       row_namespace, mu__validate_namespace, mu__defaults_namespace,
			       .name_rule = MU__NAME_LABEL},
	[MU__RT_NODES] = {"", "v1", "nodes", "node", "Node", {"no"}, false, true, false,
			  MU__SUB_STATUS, node_fields, node_cols, N(node_cols), row_node,
			  mu__validate_node, NULL, MU__NAME_SUBDOMAIN},

	[MU__RT_PODS] = {"", "v1", "pods", "pod", "Pod", {"po"}, true, true, false,
			 MU__SUB_STATUS | MU__SUB_BINDING | MU__SUB_EVICTION, pod_fields, pod_cols,
			 N(pod_cols), row_pod, mu__validate_pod, mu__defaults_pod, MU__NAME_SUBDOMAIN},

	[MU__RT_EVENTS] = {"", "v1", "events", "event", "Event", {"ev"}, true, true, false, 0,
			   event_fields, event_cols, N(event_cols), row_event, mu__validate_event, NULL, MU__NAME_SUBDOMAIN},

	[MU__RT_LEASES] = {"coordination.k8s.io", "v1", "leases", "lease", "Lease", {NULL}, true,
			   true, false, 0, NULL, lease_cols, N(lease_cols), row_lease,
			   mu__validate_lease, NULL, MU__NAME_SUBDOMAIN},

	[MU__RT_JOBS] = {"batch", "v1", "jobs", "job", "Job", {NULL}, true, true, true,
			 MU__SUB_STATUS, job_fields, job_cols, N(job_cols), row_job,
			 mu__validate_job, mu__defaults_job, MU__NAME_SUBDOMAIN},

	[MU__RT_QUEUES] = {"muster.io", "v1alpha1", "queues", "queue", "Queue", {"mq"}, false,
			   false, true, MU__SUB_STATUS, NULL, queue_cols, N(queue_cols), row_queue,
			   mu__validate_queue, NULL, MU__NAME_SUBDOMAIN},

	[MU__RT_PODGROUPS] = {"muster.io", "v1alpha1", "podgroups", "podgroup", "PodGroup", {"mpg"},
			      true, false, true, MU__SUB_STATUS, NULL, podgroup_cols,
			      N(podgroup_cols), row_podgroup, mu__validate_podgroup, NULL, MU__NAME_SUBDOMAIN},

	[MU__RT_TOPOLOGIES] = {"muster.io", "v1alpha1", "topologies", "topology", "Topology",
			       {"mtopo"}, false, false, true, 0, NULL, topology_cols,
			       N(topology_cols), row_topology, mu__validate_topology, NULL, MU__NAME_SUBDOMAIN},

	[MU__RT_XPODGROUPS] = {"scheduling.x-k8s.io", "v1alpha1", "podgroups", "podgroup",
			       "PodGroup", {"pg", "pgs"}, true, false, true, MU__SUB_STATUS, NULL,
			       xpodgroup_cols, N(xpodgroup_cols), row_xpodgroup,
			       mu__validate_podgroup, NULL, MU__NAME_SUBDOMAIN},

	[MU__RT_NRTS] = {"topology.node.k8s.io", "v1alpha2", "noderesourcetopologies",
			 "noderesourcetopology", "NodeResourceTopology", {"node-res-topo"}, false,
			 false, false, 0, NULL, nrt_cols, N(nrt_cols), row_nrt, mu__validate_nrt,
			 NULL, MU__NAME_SUBDOMAIN},
	[MU__RT_CLUSTERS] = {"muster.io", "v1alpha1", "clusters", "cluster", "Cluster",
			     {"mcl"}, false, false, true, MU__SUB_STATUS, NULL, cluster_cols,
			     N(cluster_cols), row_cluster, mu__validate_cluster, NULL, MU__NAME_SUBDOMAIN},
	[MU__RT_CONFIGMAPS] = {"", "v1", "configmaps", "configmap", "ConfigMap", {"cm"}, true, true, false, 0,
			       NULL, configmap_cols, N(configmap_cols), row_configmap, mu__validate_configmap,
			       NULL, MU__NAME_SUBDOMAIN},
	[MU__RT_SECRETS] = {"", "v1", "secrets", "secret", "Secret", {NULL}, true, true, false, 0, NULL,
			    secret_cols, N(secret_cols), row_secret, mu__validate_secret, mu__defaults_secret,
			    MU__NAME_SUBDOMAIN},
	[MU__RT_SERVICEACCOUNTS] = {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", {"sa"}, true,
				    true, false, MU__SUB_TOKEN, NULL, serviceaccount_cols, N(serviceaccount_cols),
				    row_serviceaccount, NULL, NULL, MU__NAME_SUBDOMAIN},
	[MU__RT_PRIORITYCLASSES] = {"scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass",
				    {"pc"}, false, true, false, 0, NULL, priorityclass_cols,
				    N(priorityclass_cols), row_priorityclass, mu__validate_priorityclass,
				    mu__defaults_priorityclass, MU__NAME_SUBDOMAIN},
	[MU__RT_NODEPOOLS] = {"muster.io", "v1alpha1", "nodepools", "nodepool", "NodePool",
			      {"mnp"}, false, false, true, 0, NULL, nodepool_cols,
			      N(nodepool_cols), row_nodepool, mu__validate_nodepool, NULL,
			      MU__NAME_LABEL},
	[MU__RT_RESOURCESLICES] = {"resource.k8s.io", "v1beta1", "resourceslices", "resourceslice",
				   "ResourceSlice", {NULL}, false, true, true, 0, NULL, slice_cols,
				   N(slice_cols), mu__row_resourceslice, mu__validate_resourceslice, NULL,
				   MU__NAME_SUBDOMAIN},
	[MU__RT_DEVICECLASSES] = {"resource.k8s.io", "v1beta1", "deviceclasses", "deviceclass",
				  "DeviceClass", {NULL}, false, true, true, 0, NULL, dra_named_cols,
				  N(dra_named_cols), mu__row_dra_named, mu__validate_deviceclass, NULL,
				  MU__NAME_SUBDOMAIN},
	[MU__RT_RESOURCECLAIMS] = {"resource.k8s.io", "v1beta1", "resourceclaims", "resourceclaim",
				   "ResourceClaim", {NULL}, true, true, true, MU__SUB_STATUS, NULL,
				   claim_cols, N(claim_cols), mu__row_resourceclaim,
				   mu__validate_resourceclaim, NULL, MU__NAME_SUBDOMAIN},
	[MU__RT_RESOURCECLAIMTEMPLATES] = {"resource.k8s.io", "v1beta1", "resourceclaimtemplates",
					   "resourceclaimtemplate", "ResourceClaimTemplate", {NULL}, true,
					   true, true, 0, NULL, dra_named_cols, N(dra_named_cols),
					   mu__row_dra_named, mu__validate_resourceclaimtemplate, NULL,
					   MU__NAME_SUBDOMAIN},
	[MU__RT_DEVICETAINTRULES] = {"resource.k8s.io", "v1alpha3", "devicetaintrules", "devicetaintrule",
				     "DeviceTaintRule", {NULL}, false, true, true, MU__SUB_STATUS, NULL, dra_named_cols,
				     N(dra_named_cols), mu__row_dra_named, mu__validate_devicetaintrule, NULL,
				     MU__NAME_SUBDOMAIN},
	[MU__RT_CRDS] = {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
			 "CustomResourceDefinition", {"crd", "crds"}, false, true, true, MU__SUB_STATUS, NULL, crd_cols,
			 N(crd_cols), row_crd, mu__validate_crd, NULL, MU__NAME_SUBDOMAIN},
	[MU__RT_ROLES] = {"rbac.authorization.k8s.io", "v1", "roles", "role", "Role", {NULL}, true, true, false, 0,
			  NULL, crd_cols, N(crd_cols), row_created, mu__validate_rbac, NULL, MU__NAME_PATH},
	[MU__RT_CLUSTERROLES] = {"rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole",
				 {NULL}, false, true, false, 0, NULL, crd_cols, N(crd_cols), row_created,
				 mu__validate_rbac, NULL, MU__NAME_PATH},
	[MU__RT_ROLEBINDINGS] = {"rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding",
				 {NULL}, true, true, false, 0, NULL, binding_cols, N(binding_cols), row_binding,
				 mu__validate_rbac, NULL, MU__NAME_PATH},
	[MU__RT_CLUSTERROLEBINDINGS] = {"rbac.authorization.k8s.io", "v1", "clusterrolebindings",
					"clusterrolebinding", "ClusterRoleBinding", {NULL}, false, true, false, 0, NULL,
					binding_cols, N(binding_cols), row_binding, mu__validate_rbac, NULL,
					MU__NAME_PATH},
	[MU__RT_PDBS] = {"policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget",
			 {"pdb"}, true, true, true, MU__SUB_STATUS, NULL, pdb_cols, N(pdb_cols), row_pdb,
			 mu__validate_pdb, NULL, MU__NAME_SUBDOMAIN},
	[MU__RT_SSRS] = {"authentication.k8s.io", "v1", "selfsubjectreviews", "", "SelfSubjectReview", {NULL},
			 false, true, false, 0, NULL, crd_cols, 1, row_created, NULL, NULL, MU__NAME_SUBDOMAIN},
	[MU__RT_SSARS] = {"authorization.k8s.io", "v1", "selfsubjectaccessreviews", "", "SelfSubjectAccessReview",
			  {NULL}, false, true, false, 0, NULL, crd_cols, 1, row_created, NULL, NULL,
			  MU__NAME_SUBDOMAIN},
	[MU__RT_SSRRS] = {"authorization.k8s.io", "v1", "selfsubjectrulesreviews", "", "SelfSubjectRulesReview",
			  {NULL}, false, true, false, 0, NULL, crd_cols, 1, row_created, NULL, NULL,
			  MU__NAME_SUBDOMAIN},
	[MU__RT_SARS] = {"authorization.k8s.io", "v1", "subjectaccessreviews", "", "SubjectAccessReview", {NULL},
			 false, true, false, 0, NULL, crd_cols, 1, row_created, NULL, NULL, MU__NAME_SUBDOMAIN},
	[MU__RT_LSARS] = {"authorization.k8s.io", "v1", "localsubjectaccessreviews", "", "LocalSubjectAccessReview",
			  {NULL}, true, true, false, 0, NULL, crd_cols, 1, row_created, NULL, NULL,
			  MU__NAME_SUBDOMAIN},
	[MU__RT_TOKENREVIEWS] = {"authentication.k8s.io", "v1", "tokenreviews", "", "TokenReview", {NULL}, false, true,
				 false, 0, NULL, crd_cols, 1, row_created, NULL, NULL, MU__NAME_SUBDOMAIN},
	[MU__RT_EVENTS_V1] = {"events.k8s.io", "v1", "events", "event", "Event", {"ev"}, true, true, false, 0,
			      event_fields, event_cols, N(event_cols), row_event, mu__validate_event, NULL,
			      MU__NAME_SUBDOMAIN},
	[MU__RT_CSRS] = {"certificates.k8s.io", "v1", "certificatesigningrequests", "certificatesigningrequest",
			 "CertificateSigningRequest", {"csr"}, false, true, true, MU__SUB_STATUS | MU__SUB_APPROVAL,
			 csr_fields, csr_cols, N(csr_cols), mu__row_csr, mu__validate_csr, NULL, MU__NAME_PATH},
	[MU__RT_DEPLOYMENTS] = {"apps", "v1", "deployments", "deployment", "Deployment", {"deploy"}, true, true, true,
				MU__SUB_STATUS | MU__SUB_SCALE, NULL, deploy_cols, N(deploy_cols), mu__row_deployment,
				mu__validate_apps, mu__defaults_apps, MU__NAME_SUBDOMAIN},
	[MU__RT_REPLICASETS] = {"apps", "v1", "replicasets", "replicaset", "ReplicaSet", {"rs"}, true, true, true,
				MU__SUB_STATUS | MU__SUB_SCALE, NULL, rs_cols, N(rs_cols), mu__row_replicaset,
				mu__validate_apps, mu__defaults_apps, MU__NAME_SUBDOMAIN},
	[MU__RT_STATEFULSETS] = {"apps", "v1", "statefulsets", "statefulset", "StatefulSet", {"sts"}, true, true,
				 true, MU__SUB_STATUS | MU__SUB_SCALE, NULL, sts_cols, N(sts_cols),
				 mu__row_statefulset, mu__validate_apps, mu__defaults_apps, MU__NAME_SUBDOMAIN},
};

const mu__rtype_t *mu__rtypes(int *n)
{
	*n = MU__RT_COUNT;
	return types;
}

int mu__rtype_find(const char *group, const char *version, const char *plural)
{
	for (int i = 0; i < MU__RT_COUNT; i++)
		if (!strcmp(types[i].group, group) && !strcmp(types[i].version, version) &&
		    !strcmp(types[i].plural, plural))
			return i;
	return -1;
}

bool mu__rtype_builtin(const mu__rtype_t *t)
{
	uintptr_t p = (uintptr_t)t;
	return p >= (uintptr_t)&types[0] && p < (uintptr_t)&types[MU__RT_COUNT];
}

int mu__rtype_by_kind(const char *group, const char *kind)
{
	for (int i = 0; i < MU__RT_COUNT; i++)
		if (!strcmp(types[i].group, group) && !strcmp(types[i].kind, kind))
			return i;
	return -1;
}

void mu__rtype_apiversion(const mu__rtype_t *t, char *buf, size_t len)
{
	if (*t->group)
		snprintf(buf, len, "%s/%s", t->group, t->version);
	else
		snprintf(buf, len, "%s", t->version);
}

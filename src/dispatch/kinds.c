/*
 * kinds.c - the kinds of job a hub dispatches, as MultiKueue dispatches
 * its supported kinds: batch/v1 Jobs, the suspendable kinds of the
 * workload issue (JobSet, PyTorchJob, MPIJob, RayJob, RayCluster), and
 * the kinds without suspend: LeaderWorkerSets and Volcano Jobs (pod
 * templates in the object) and the PodGroups of muster, Volcano, KAI and
 * the coscheduling plugin, whose pods are separate objects the user
 * creates, which name their group (a label or an annotation) and are sent
 * with it.  For each: its paths on an API server, where its suspend flag
 * and managedBy live, its pod templates or its pods, the gang the fleet
 * places (with its parts' own minimums: a Volcano task's minAvailable, a
 * KAI sub-group's minMember), what its own admission refuses, its end as
 * its controller writes it, the object as a muster Workload the
 * cluster-file loader reads, and (round 23, shrink_ops) the size the hub
 * lowers to shrink an elastic copy, for the kinds whose controller
 * deletes the pods above it.  Pure functions of the JSON: no I/O, no
 * state; at the bottom of src/dispatch (it calls no other file of it).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"

/* name: in keys, fleet labels and agents' reports (unique); kind: the
 * objects' own kind (three PodGroups). */
static const struct {
	const char *name, *kind, *api, *plural;
	bool run_policy; /* suspend and managedBy in spec.runPolicy */
	bool no_suspend; /* held by the hub without a flag (below) */
	bool status_sub; /* its CRD has the status subresource */
	bool conds;      /* status.conditions of any type (metav1.Condition,
	                  * or muster's own schema): Preempted may go there */
} kinds[MU__DK_COUNT] = {
	[MU__DK_JOB] = {"Job", "Job", "batch/v1", "jobs", false, false, true, true},
	[MU__DK_JOBSET] = {"JobSet", "JobSet", "jobset.x-k8s.io/v1alpha2", "jobsets", false, false, true,
			    true},
	[MU__DK_PYTORCH] = {"PyTorchJob", "PyTorchJob", "kubeflow.org/v1", "pytorchjobs", true, false, true,
			     false},
	[MU__DK_MPI] = {"MPIJob", "MPIJob", "kubeflow.org/v1", "mpijobs", true, false, true, false},
	[MU__DK_RAYJOB] = {"RayJob", "RayJob", "ray.io/v1", "rayjobs", false, false, true, false},
	[MU__DK_LWS] = {"LeaderWorkerSet", "LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1",
			"leaderworkersets", false, true, true, true},
	[MU__DK_PODGROUP] = {"PodGroup", "PodGroup", "muster.io/v1alpha1", "podgroups", false, true, true,
			      true},
	/* Volcano's CRD has no status subresource: status is in the object */
	[MU__DK_VOLCANO_PG] = {"VolcanoPodGroup", "PodGroup", "scheduling.volcano.sh/v1beta1",
			       "podgroups", false, true, false, false},
	[MU__DK_KAI_PG] = {"KaiPodGroup", "PodGroup", "scheduling.run.ai/v2alpha2", "podgroups", false,
			   true, true, false},
	[MU__DK_COSCHED_PG] = {"CoschedulingPodGroup", "PodGroup", "scheduling.x-k8s.io/v1alpha1",
			       "podgroups", false, true, true, false},
	/* Volcano has no suspend flag (volcano#3875; Kueue has no Volcano
	 * integration): held by the hub's not running Volcano's controller */
	[MU__DK_VOLCANO_JOB] = {"VolcanoJob", "Job", "batch.volcano.sh/v1alpha1", "jobs", false, true,
				true, false},
	[MU__DK_RAYCLUSTER] = {"RayCluster", "RayCluster", "ray.io/v1", "rayclusters", false, false,
			       true, true},
};

const char *mu__dkind_name(mu__dkind_t k) { return k < MU__DK_COUNT ? kinds[k].name : "?"; }

const char *mu__dkind_kind(mu__dkind_t k) { return k < MU__DK_COUNT ? kinds[k].kind : "?"; }

bool mu__dkind_suspends(mu__dkind_t k) { return k < MU__DK_COUNT && !kinds[k].no_suspend; }

bool mu__dkind_is_group(mu__dkind_t k)
{
	return k == MU__DK_PODGROUP || k == MU__DK_VOLCANO_PG || k == MU__DK_KAI_PG ||
	       k == MU__DK_COSCHED_PG;
}

/* The integer at path in o, or def. */
static int64_t int_at(const json_t *o, const char *path, int64_t def)
{
	const json_t *v = mu__jget(o, path);
	return json_is_integer(v) ? json_integer_value(v) : def;
}

/* Round 23: the kinds whose copy the hub shrinks, one entry each: the
 * size their controller acts on (the object at path `map`, its member
 * `key` matched without case when set, its integer `field`), and what
 * the object must have (`needs`; `only`: `map` holds `key` alone, so that
 * the job is one pod set).  A batch/v1 Job: spec.parallelism (the Job
 * controller deletes the pods above it; its floor muster.io/min-member,
 * read by the loader).  A PyTorchJob with spec.elasticPolicy and only a
 * Worker replica type: the Worker's replicas, the field its scale
 * subresource names (specReplicasPath), which the training operator
 * scales down by deleting the pods whose index is at or above it
 * (ReconcilePods); its floor elasticPolicy.minReplicas.  Every other kind
 * stays whole (docs/dispatch.md, "Twenty-third round"). */
static const struct {
	const char *map, *key, *field, *needs;
	bool only;
	const char *lo, *hi; /* its floor: lo, else hi, else its size (NULL: none here) */
} shrink_ops[MU__DK_COUNT] = {
	[MU__DK_JOB] = {"spec", NULL, "parallelism", NULL, false, NULL, NULL},
	/* the floor as the training operator defaults it (setElasticPolicy) */
	[MU__DK_PYTORCH] = {"spec.pytorchReplicaSpecs", "Worker", "replicas", "spec.elasticPolicy",
			    true, "spec.elasticPolicy.minReplicas", "spec.elasticPolicy.maxReplicas"},
};

/* The member of shrink_ops[k].map in o that holds the size, and its key
 * (as o spells it) in *key; NULL when o is not shrinkable.  O(members). */
static const json_t *size_holder(const json_t *o, mu__dkind_t k, const char **key)
{
	*key = NULL;
	if (k >= MU__DK_COUNT || !shrink_ops[k].field ||
	    (shrink_ops[k].needs && !json_is_object(mu__jget(o, shrink_ops[k].needs))))
		return NULL;
	const json_t *m = mu__jget(o, shrink_ops[k].map);
	if (!shrink_ops[k].key)
		return json_is_object(m) ? m : NULL;
	if (shrink_ops[k].only && json_object_size(m) != 1)
		return NULL;
	const char *mk;
	json_t *v;
	json_object_foreach((json_t *)m, mk, v)
		if (!strcasecmp(mk, shrink_ops[k].key) && json_is_object(v)) {
			*key = mk;
			return v;
		}
	return NULL;
}

bool mu__dkind_shrinks(const json_t *o, mu__dkind_t k)
{
	const char *key;
	return size_holder(o, k, &key) != NULL;
}

int64_t mu__dkind_size(const json_t *o, mu__dkind_t k)
{
	const char *key;
	const json_t *h = size_holder(o, k, &key);
	const json_t *v = h ? json_object_get(h, shrink_ops[k].field) : NULL;
	if (json_is_integer(v))
		return json_integer_value(v);
	/* a replica spec without replicas runs one (the operator's default) */
	return h && shrink_ops[k].key ? 1 : 0;
}

json_t *mu__dkind_size_patch(const json_t *o, mu__dkind_t k, int32_t to)
{
	const char *key;
	if (!size_holder(o, k, &key))
		return NULL;
	json_t *leaf = json_pack("{s:i}", shrink_ops[k].field, (json_int_t)to);
	if (leaf && key)
		leaf = json_pack("{s:o}", key, leaf);
	/* wrapped in each member of the map's path, innermost first */
	char path[64];
	snprintf(path, sizeof path, "%s", shrink_ops[k].map);
	for (char *dot; leaf && (dot = strrchr(path, '.')); *dot = '\0')
		leaf = json_pack("{s:o}", dot + 1, leaf);
	return leaf ? json_pack("{s:o}", path, leaf) : NULL;
}

int64_t mu__dkind_shrink_floor(const json_t *o, mu__dkind_t k)
{
	if (!mu__dkind_shrinks(o, k) || !shrink_ops[k].lo)
		return 0; /* a Job's is muster.io/min-member, the loader's */
	int64_t f = int_at(o, shrink_ops[k].lo, int_at(o, shrink_ops[k].hi, mu__dkind_size(o, k)));
	return f > 0 ? f : 1;
}

bool mu__dkind_status_sub(mu__dkind_t k) { return k < MU__DK_COUNT && kinds[k].status_sub; }

bool mu__dkind_conds(mu__dkind_t k) { return k < MU__DK_COUNT && kinds[k].conds; }

const char *mu__dkind_api(mu__dkind_t k) { return k < MU__DK_COUNT ? kinds[k].api : "?"; }

const char *mu__dkind_plural(mu__dkind_t k) { return k < MU__DK_COUNT ? kinds[k].plural : "?"; }

void mu__dkind_list(const char *s, bool on[MU__DK_COUNT])
{
	for (int k = 0; k < MU__DK_COUNT; k++)
		on[k] = false;
	for (const char *p = s; p && *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		for (int k = 1; k < MU__DK_COUNT; k++)
			if (strlen(kinds[k].name) == l && !strncmp(p, kinds[k].name, l))
				on[k] = true;
		p = e ? e + 1 : NULL;
	}
}

const char *mu__dkind_path(mu__dkind_t k, const char *ns, const char *name, const char *suffix,
			   char *buf, size_t len)
{
	const char *pre = "/apis/";
	if (!ns)
		snprintf(buf, len, "%s%s/%s%s", pre, kinds[k].api, kinds[k].plural, suffix);
	else if (!name)
		snprintf(buf, len, "%s%s/namespaces/%s/%s%s", pre, kinds[k].api, ns, kinds[k].plural,
			 suffix);
	else
		snprintf(buf, len, "%s%s/namespaces/%s/%s/%s%s", pre, kinds[k].api, ns,
			 kinds[k].plural, name, suffix);
	return buf;
}

int mu__dkind_of(const char *api, const char *kind)
{
	for (int k = 0; api && kind && k < MU__DK_COUNT; k++)
		if (!strcmp(api, kinds[k].api) && !strcmp(kind, kinds[k].kind))
			return k;
	return -1;
}

json_t *mu__dkind_ctl(json_t *spec, mu__dkind_t k, bool create)
{
	if (kinds[k].no_suspend)
		return NULL;
	if (!kinds[k].run_policy)
		return spec;
	json_t *rp = json_object_get(spec, "runPolicy");
	if (!rp && create && json_is_object(spec)) {
		rp = json_object();
		json_object_set_new(spec, "runPolicy", rp);
	}
	return rp;
}

const char *mu__dkind_managed_by(const json_t *obj, mu__dkind_t k)
{
	return mu__jstr(obj, kinds[k].run_policy ? "spec.runPolicy.managedBy" : "spec.managedBy");
}

/* A part's name as a pod set name: lower case, at most 63 characters. */
static void part_name(char *out, size_t len, const char *s)
{
	size_t i = 0;
	for (; s && s[i] && i + 1 < len && i < 63; i++)
		out[i] = (char)tolower((unsigned char)s[i]);
	out[i] = '\0';
}

/* The pod templates of a Ray cluster spec rc (a RayCluster's spec, a
 * RayJob's rayClusterSpec): the head, then each worker group's minimum
 * (KubeRay's gang: minReplicas x numOfHosts; none of a suspended group,
 * whose pods KubeRay deletes).  The number, or MU_ELIMIT beyond max. */
static int ray_templates(json_t *rc, mu__dtmpl_t *out, int max)
{
	int n = 0;
	size_t i;
	json_t *x;
	if (max < 1)
		return MU_ELIMIT;
	snprintf(out[n].part, sizeof out[n].part, "head");
	out[n].count = 1;
	out[n].tmpl = (json_t *)mu__jget(rc, "headGroupSpec.template");
	n++;
	json_array_foreach(json_object_get(rc, "workerGroupSpecs"), i, x) {
		if (n >= max)
			return MU_ELIMIT;
		part_name(out[n].part, sizeof out[n].part, mu__jstr(x, "groupName"));
		int64_t m = int_at(x, "minReplicas", 0), h = int_at(x, "numOfHosts", 1);
		/* beyond the bound: refused below, without overflowing */
		out[n].count = json_is_true(json_object_get(x, "suspend")) ? 0 :
			m < 0 || h < 0 ? -1 : m > 100000 || h > 100000 ? 100001 : m * h;
		out[n].tmpl = json_object_get(x, "template");
		n++;
	}
	return n;
}

int mu__dkind_templates(json_t *spec, mu__dkind_t k, mu__dtmpl_t *out, int max)
{
	int n = 0;
	for (int j = 0; j < max; j++)
		out[j].min = 0;
	size_t i;
	json_t *x;
	const char *role;
	if (k == MU__DK_JOBSET) {
		json_array_foreach(json_object_get(spec, "replicatedJobs"), i, x) {
			if (n >= max)
				return MU_ELIMIT;
			part_name(out[n].part, sizeof out[n].part, mu__jstr(x, "name"));
			int64_t r = int_at(x, "replicas", 1), par = int_at(x, "template.spec.parallelism", 1);
			out[n].count = r < 0 || par < 0 ? -1 : r > 100000 || par > 100000 ? 100001 : r * par;
			out[n].tmpl = (json_t *)mu__jget(x, "template.spec.template");
			n++;
		}
	} else if (k == MU__DK_PYTORCH || k == MU__DK_MPI) {
		json_object_foreach(json_object_get(spec, k == MU__DK_MPI ? "mpiReplicaSpecs" :
						    "pytorchReplicaSpecs"), role, x) {
			if (n >= max)
				return MU_ELIMIT;
			part_name(out[n].part, sizeof out[n].part, role);
			out[n].count = int_at(x, "replicas", 1);
			out[n].tmpl = json_object_get(x, "template");
			n++;
		}
	} else if (k == MU__DK_LWS) {
		if (max < 2)
			return MU_ELIMIT;
		/* replicas groups of size pods: a leader (leaderTemplate, or
		 * workerTemplate when it has none, as the LWS controller
		 * makes it) and size - 1 workers */
		json_t *lwt = json_object_get(spec, "leaderWorkerTemplate");
		int64_t r = int_at(spec, "replicas", 1), size = int_at(lwt, "size", 1);
		json_t *wt = json_object_get(lwt, "workerTemplate");
		json_t *lt = json_object_get(lwt, "leaderTemplate");
		if (r < 0 || r > 100000 || size < 1 || size > 100000)
			return MU_EINVAL;
		snprintf(out[n].part, sizeof out[n].part, "leader");
		out[n].count = r;
		out[n].tmpl = lt ? lt : wt;
		n++;
		if (size > 1) {
			snprintf(out[n].part, sizeof out[n].part, "workers");
			out[n].count = r * (size - 1);
			out[n].tmpl = wt;
			n++;
		}
	} else if (k == MU__DK_RAYJOB || k == MU__DK_RAYCLUSTER) {
		n = ray_templates(k == MU__DK_RAYJOB ? json_object_get(spec, "rayClusterSpec") : spec,
				  out, max);
		if (n < 0)
			return n;
	} else if (k == MU__DK_VOLCANO_JOB) {
		/* a part per task: its replicas, and its minAvailable (the
		 * webhook's default: all its replicas) */
		json_array_foreach(json_object_get(spec, "tasks"), i, x) {
			if (n >= max)
				return MU_ELIMIT;
			part_name(out[n].part, sizeof out[n].part, mu__jstr(x, "name"));
			out[n].count = int_at(x, "replicas", 0);
			out[n].min = int_at(x, "minAvailable", out[n].count);
			out[n].tmpl = json_object_get(x, "template");
			n++;
		}
	}
	for (int j = 0; j < n; j++)
		if (!out[j].part[0] || !json_is_object(out[j].tmpl) || out[j].count < 0 ||
		    out[j].min < 0 || out[j].min > out[j].count ||
		    out[j].count > 100000)
			return MU_EINVAL;
	return n;
}

/* A label (map "labels") or annotation of object o, or NULL. */
static const char *meta_of(const json_t *o, const char *map, const char *key)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(o, "metadata"), map),
						 key));
}

const char *mu__dkind_pod_group(const json_t *pod, mu__dkind_t k)
{
	switch (k) {
	case MU__DK_PODGROUP: /* docs/kubernetes.md, "Groups" */
		return meta_of(pod, "labels", "muster.io/pod-group");
	case MU__DK_VOLCANO_PG: /* Volcano's scheduler and job controller */
		return meta_of(pod, "annotations", "scheduling.k8s.io/group-name");
	case MU__DK_KAI_PG: /* KAI's pod grouper */
		return meta_of(pod, "annotations", "pod-group-name");
	case MU__DK_COSCHED_PG: /* the coscheduling plugin of scheduler-plugins */
		return meta_of(pod, "labels", "scheduling.x-k8s.io/pod-group");
	default:
		return NULL;
	}
}

/* The part of group kind k that pod belongs to: Volcano's task
 * (annotation volcano.sh/task-spec), KAI's sub-group (label
 * kai.scheduler/subgroup-name), else "pods"; lower case. */
static void pod_part(const json_t *pod, mu__dkind_t k, char *out, size_t len)
{
	const char *p = k == MU__DK_VOLCANO_PG ? meta_of(pod, "annotations", "volcano.sh/task-spec") :
			k == MU__DK_KAI_PG ? meta_of(pod, "labels", "kai.scheduler/subgroup-name") : NULL;
	part_name(out, len, p && *p ? p : "pods");
}

int64_t mu__dkind_group_min(const json_t *o)
{
	const json_t *m = mu__jget(o, "spec.minMember");
	return json_is_integer(m) && json_integer_value(m) > 0 ? json_integer_value(m) : 0;
}

/* Whether sub-group sg of a KAI PodGroup is a leaf (no sub-group of subs
 * names it its parent): pods name leaves (label
 * kai.scheduler/subgroup-name), and a leaf's minMember is a part of the
 * gang.  Names compare lower-cased, as KAI's scheduler compares them.
 * O(sub-groups). */
static bool kai_leaf(const json_t *subs, const json_t *sg)
{
	char me[64], par[64];
	part_name(me, sizeof me, mu__jstr(sg, "name"));
	size_t i;
	json_t *x;
	json_array_foreach(subs, i, x) {
		const char *pn = mu__jstr(x, "parent");
		if (!pn)
			continue;
		part_name(par, sizeof par, pn);
		if (!strcmp(par, me))
			return false;
	}
	return true;
}

/* The pods of pods in part `part` (lower case) of group kind k. */
static int64_t part_pods(const json_t *pods, mu__dkind_t k, const char *part)
{
	int64_t n = 0;
	size_t i;
	json_t *p;
	json_array_foreach(pods, i, p) {
		char pp[64];
		pod_part(p, k, pp, sizeof pp);
		n += !strcmp(pp, part);
	}
	return n;
}

bool mu__dkind_group_waits(const json_t *o, mu__dkind_t k, const json_t *pods, char *msg,
			   size_t len)
{
	size_t np = json_array_size(pods);
	int64_t min = mu__dkind_group_min(o);
	if (np == 0 || (int64_t)np < min) {
		snprintf(msg, len, "%zu of the %lld pods of spec.minMember are on the hub; the "
			 "group is sent when they are", np, (long long)(min ? min : 1));
		return true;
	}
	const json_t *subs = mu__jget(o, "spec.subGroups");
	size_t i;
	json_t *sg;
	json_array_foreach(k == MU__DK_KAI_PG ? subs : NULL, i, sg) {
		int64_t sm = int_at(sg, "minMember", 0), have;
		char name[64];
		part_name(name, sizeof name, mu__jstr(sg, "name"));
		if (sm <= 0 || !kai_leaf(subs, sg) || (have = part_pods(pods, k, name)) >= sm)
			continue;
		snprintf(msg, len, "%lld of the %lld pods of sub-group %s (spec.subGroups[].minMember) "
			 "are on the hub; the group is sent when they are", (long long)have,
			 (long long)sm, name);
		return true;
	}
	return false;
}

/* Volcano's admission of a Job (its webhook): tasks, their replicas and
 * minAvailable, the job's minAvailable within the replicas. */
static int volcano_check(const json_t *spec, char *msg, size_t len)
{
	const json_t *tasks = json_object_get(spec, "tasks");
	if (!json_array_size(tasks)) {
		snprintf(msg, len, "spec.tasks: a Volcano Job needs at least one task");
		return MU_EINVAL;
	}
	int64_t total = 0, jm = int_at(spec, "minAvailable", 0);
	size_t i, j;
	json_t *x, *y;
	json_array_foreach(tasks, i, x) {
		const char *name = mu__jstr(x, "name");
		int64_t r = int_at(x, "replicas", 0), m = int_at(x, "minAvailable", r);
		if (!name || !*name) {
			snprintf(msg, len, "spec.tasks[%zu]: a task needs a name", i);
			return MU_EINVAL;
		}
		json_array_foreach(tasks, j, y)
			if (j < i && mu__jstr(y, "name") && !strcmp(mu__jstr(y, "name"), name)) {
				snprintf(msg, len, "spec.tasks: task name %.64s is used twice", name);
				return MU_EINVAL;
			}
		if (r < 0 || m < 0 || m > r) {
			snprintf(msg, len, "spec.tasks[%.64s]: minAvailable %lld must be within its "
				 "%lld replicas (and neither below 0)", name, (long long)m, (long long)r);
			return MU_EINVAL;
		}
		total += r < 100000 ? r : 100000; /* bounded: no overflow */
	}
	if (jm < 0 || jm > total) {
		snprintf(msg, len, "spec.minAvailable %lld must be within the %lld replicas of its "
			 "tasks (and not below 0)", (long long)jm, (long long)total);
		return MU_EINVAL;
	}
	return MU_OK;
}

int mu__dkind_check(const json_t *o, mu__dkind_t k, char *msg, size_t len)
{
	const json_t *spec = json_object_get(o, "spec");
	size_t i, j;
	json_t *x, *y;
	if (k == MU__DK_VOLCANO_JOB)
		return volcano_check(spec, msg, len);
	if (k == MU__DK_RAYJOB || k == MU__DK_RAYCLUSTER) { /* KubeRay's validation */
		const json_t *rc = k == MU__DK_RAYJOB ? json_object_get(spec, "rayClusterSpec") : spec;
		json_array_foreach(json_object_get(rc, "workerGroupSpecs"), i, x) {
			int64_t lo = int_at(x, "minReplicas", 0), hi = int_at(x, "maxReplicas", INT32_MAX);
			if (lo > hi || lo < 0) {
				snprintf(msg, len, "workerGroupSpecs[%.64s]: minReplicas %lld must be "
					 "within 0 and its maxReplicas %lld", mu__jstr(x, "groupName") ?
					 mu__jstr(x, "groupName") : "?", (long long)lo, (long long)hi);
				return MU_EINVAL;
			}
		}
	}
	if (k == MU__DK_KAI_PG) { /* names unique, parents that exist */
		const json_t *subs = json_object_get(spec, "subGroups");
		json_array_foreach(subs, i, x) {
			char a[64], b[64];
			part_name(a, sizeof a, mu__jstr(x, "name"));
			bool parent = !mu__jstr(x, "parent");
			if (!a[0]) {
				snprintf(msg, len, "spec.subGroups[%zu]: a sub-group needs a name", i);
				return MU_EINVAL;
			}
			if (strcmp(a, mu__jstr(x, "name") ? mu__jstr(x, "name") : "")) {
				snprintf(msg, len, "spec.subGroups[%.64s]: a sub-group's name must be "
					 "lower case", mu__jstr(x, "name"));
				return MU_EINVAL;
			}
			json_array_foreach(subs, j, y) {
				part_name(b, sizeof b, mu__jstr(y, "name"));
				if (j < i && !strcmp(a, b)) {
					snprintf(msg, len, "spec.subGroups: sub-group %s is named twice", a);
					return MU_EINVAL;
				}
				char p[64];
				part_name(p, sizeof p, mu__jstr(x, "parent"));
				parent |= j != i && !strcmp(p, b); /* not itself */
			}
			if (!parent) {
				snprintf(msg, len, "spec.subGroups[%s]: its parent %.64s is no other "
					 "sub-group of the group", a, mu__jstr(x, "parent"));
				return MU_EINVAL;
			}
		}
		/* no cycle: from each, its parents reach the group within as
		 * many steps as there are sub-groups */
		size_t n = json_array_size(subs);
		json_array_foreach(subs, i, x) {
			const json_t *at = x;
			size_t steps = 0;
			while (at && mu__jstr(at, "parent") && steps <= n) {
				const json_t *up = NULL;
				json_array_foreach(subs, j, y)
					if (!strcmp(mu__jstr(y, "name") ? mu__jstr(y, "name") : "",
						    mu__jstr(at, "parent")))
						up = y;
				at = up;
				steps++;
			}
			if (steps > n) {
				snprintf(msg, len, "spec.subGroups[%.64s]: its parents make a cycle",
					 mu__jstr(x, "name"));
				return MU_EINVAL;
			}
		}
	}
	mu_res_t mr;
	if (mu__dkind_min_resources(o, k, &mr, msg, len) < 0)
		return MU_EINVAL;
	return MU_OK;
}

int mu__dkind_min_resources(const json_t *o, mu__dkind_t k, mu_res_t *out, char *msg, size_t len)
{
	memset(out, 0, sizeof *out);
	const json_t *mr = mu__jget(o, "spec.minResources");
	if (k != MU__DK_COSCHED_PG || !json_is_object(mr))
		return 0;
	static const struct {
		const char *name;
		int slot;
		int64_t scale, acct; /* quantity scale; accounting factor */
	} want[] = {{"cpu", MU_RES_CPU, 1000, 1}, {"memory", MU_RES_MEM, 1, 1},
		    {"nvidia.com/gpu", MU_RES_GPU, 1, 1000}, {"pods", MU_RES_PODS, 1, 1}};
	int n = 0;
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)mr, key, v) {
		for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
			if (strcmp(key, want[i].name))
				continue;
			int64_t q = -1;
			if (json_is_integer(v))
				q = json_integer_value(v) <= INT64_MAX / (want[i].scale * want[i].acct) ?
				    json_integer_value(v) * want[i].scale : -1;
			else if (!json_is_string(v) ||
				 mu_quantity_parse(json_string_value(v), want[i].scale, &q) != MU_OK)
				q = -1;
			if (q < 0 || q > INT64_MAX / want[i].acct) {
				snprintf(msg, len, "spec.minResources[%s]: not a quantity", key);
				return MU_EINVAL;
			}
			out->v[want[i].slot] = q * want[i].acct;
			n += q > 0;
		}
	}
	return n > 0;
}

/* The pod sets of a group's pods: one per part, of as many replicas as
 * the part has pods, with the first pod's labels, annotations and spec
 * as its template (the pods of a part are alike, as a controller makes
 * them).  At most 16 parts; NULL beyond.  Owned. */
static json_t *group_sets(mu__dkind_t k, const json_t *pods)
{
	json_t *sets = json_array();
	size_t i;
	json_t *p;
	json_array_foreach(pods, i, p) {
		char part[64];
		pod_part(p, k, part, sizeof part);
		json_t *ps = NULL, *x;
		size_t j;
		json_array_foreach(sets, j, x)
			if (!strcmp(json_string_value(json_object_get(x, "name")), part))
				ps = x;
		if (ps) {
			json_object_set_new(ps, "replicas", json_integer(json_integer_value(
				json_object_get(ps, "replicas")) + 1));
			continue;
		}
		if (json_array_size(sets) >= 16) {
			json_decref(sets);
			return NULL;
		}
		json_t *spec = json_deep_copy(json_object_get(p, "spec"));
		if (!json_is_object(spec)) {
			json_decref(spec);
			spec = json_object();
		}
		json_object_del(spec, "nodeName");
		json_t *tm = json_pack("{s:{},s:o}", "metadata", "spec", spec);
		const json_t *v;
		if ((v = mu__jget(p, "metadata.labels")))
			json_object_set(json_object_get(tm, "metadata"), "labels", (json_t *)v);
		if ((v = mu__jget(p, "metadata.annotations")))
			json_object_set(json_object_get(tm, "metadata"), "annotations", (json_t *)v);
		json_array_append_new(sets, json_pack("{s:s,s:i,s:o}", "name", part, "replicas", 1,
						       "template", tm));
	}
	return sets;
}

/* Sets the minMember of each pod set of sets (a KAI group's, by
 * sub-group) that is a leaf sub-group of o with a minMember (when its
 * pods reach it: hub.c waits for them first); the group's gang, gm or the
 * sum of those minimums when larger (KAI's scheduler needs every leaf's
 * minimum).  O(sets x sub-groups^2). */
static int64_t kai_parts(const json_t *o, json_t *sets, int64_t gm)
{
	const json_t *subs = mu__jget(o, "spec.subGroups");
	int64_t sum = 0;
	size_t i, j;
	json_t *sg, *ps;
	json_array_foreach(subs, i, sg) {
		int64_t sm = int_at(sg, "minMember", 0);
		char name[64];
		part_name(name, sizeof name, mu__jstr(sg, "name"));
		if (sm <= 0 || !kai_leaf(subs, sg))
			continue;
		json_array_foreach(sets, j, ps)
			if (!strcmp(json_string_value(json_object_get(ps, "name")), name) &&
			    int_at(ps, "replicas", 0) >= sm) {
				json_object_set_new(ps, "minMember", json_integer(sm));
				sum += sm;
			}
	}
	return sum > gm ? sum : gm;
}

json_t *mu__dkind_workload(const json_t *o, mu__dkind_t k, const json_t *pods)
{
	mu__dtmpl_t t[16];
	json_t *spec = json_deep_copy(json_object_get(o, "spec"));
	int n = mu__dkind_is_group(k) ? 0 : spec ? mu__dkind_templates(spec, k, t, 16) : MU_EINVAL;
	json_t *sets = mu__dkind_is_group(k) ? group_sets(k, pods) : json_array(), *pclass = NULL;
	if (!sets)
		n = MU_ELIMIT;
	json_t *gs;
	size_t gi;
	json_array_foreach(mu__dkind_is_group(k) ? sets : NULL, gi, gs) {
		const json_t *pc = mu__jget(gs, "template.spec.priorityClassName");
		if (!pclass && json_is_string(pc))
			pclass = json_incref((json_t *)pc);
	}
	/* a Volcano Job's gang: its minAvailable (the webhook's default: the
	 * sum of its tasks'); the tasks' own minimums bind unless the job's
	 * is below their sum (Volcano's job readiness then counts the job's
	 * alone) */
	int64_t vmin = 0, vjob = k == MU__DK_VOLCANO_JOB ? int_at(spec, "minAvailable", 0) : 0;
	for (int i = 0; k == MU__DK_VOLCANO_JOB && i < n; i++)
		vmin += t[i].count ? t[i].min : 0;
	bool vparts = k == MU__DK_VOLCANO_JOB && (vjob <= 0 || vjob >= vmin);
	for (int i = 0; i < n; i++) {
		if (!t[i].count) /* a group of no pods in the gang (Ray minReplicas 0) */
			continue;
		json_t *tm = json_deep_copy(t[i].tmpl);
		json_t *ps = json_pack("{s:s,s:I,s:o}", "name", t[i].part, "replicas",
				       (json_int_t)t[i].count, "template", tm);
		if (vparts && t[i].min > 0)
			json_object_set_new(ps, "minMember", json_integer(t[i].min));
		json_array_append_new(sets, ps);
		const json_t *pc = mu__jget(tm, "spec.priorityClassName");
		if (!pclass && json_is_string(pc))
			pclass = json_incref((json_t *)pc);
	}
	json_t *meta = json_pack("{s:O*,s:O*}", "name", mu__jget(o, "metadata.name"), "namespace",
				 mu__jget(o, "metadata.namespace"));
	const json_t *v;
	if ((v = mu__jget(o, "metadata.labels")))
		json_object_set(meta, "labels", (json_t *)v);
	if ((v = mu__jget(o, "metadata.annotations")))
		json_object_set(meta, "annotations", (json_t *)v);
	const char *q = json_string_value(json_object_get(mu__jget(o, "metadata.labels"), MU__D_QUEUE));
	/* pod sets the loader refuses (none, or too many) name the fault */
	json_t *ws = json_pack("{s:s,s:o}", "queue", q ? q : "", "podSets", n < 0 ? json_null() : sets);
	if (n < 0)
		json_decref(sets); /* NULL-safe */
	if (k == MU__DK_VOLCANO_JOB && json_is_string(json_object_get(spec, "priorityClassName"))) {
		json_decref(pclass); /* the job's own class (Volcano's PodGroup takes it) */
		pclass = json_incref(json_object_get(spec, "priorityClassName"));
	}
	if (pclass)
		json_object_set_new(ws, "priorityClassName", pclass);
	if (k == MU__DK_VOLCANO_JOB && n > 0)
		json_object_set_new(ws, "minMember", json_integer(vjob > 0 ? vjob : vmin));
	if (k == MU__DK_PYTORCH || k == MU__DK_MPI) {
		json_t *mm = (json_t *)mu__jget(spec, "runPolicy.schedulingPolicy.minAvailable");
		int64_t m = json_is_integer(mm) ? json_integer_value(mm) : 0;
		/* round 23: an elastic PyTorchJob runs with its Worker's
		 * minReplicas (KAI's pod grouper takes that as its gang,
		 * docs/elastic), never fewer: the fleet's floor for its shrink */
		int64_t fl = mu__dkind_shrink_floor(o, k), sz = mu__dkind_size(o, k);
		if (fl > m)
			json_object_set_new(ws, "minMember", json_integer(fl < sz ? fl : sz));
		else if (json_is_integer(mm))
			json_object_set(ws, "minMember", mm);
	}
	/* a group's gang: its minMember (the caller waits until that many
	 * pods exist), else all the pods it has */
	int64_t gm = mu__dkind_is_group(k) ? mu__dkind_group_min(o) : 0;
	if (k == MU__DK_KAI_PG && n >= 0) /* and each leaf sub-group's minMember */
		gm = kai_parts(o, sets, gm);
	if (gm)
		json_object_set_new(ws, "minMember", json_integer(gm));
	json_decref(spec);
	return json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "muster.io/v1alpha1", "kind", "Workload",
			 "metadata", meta, "spec", ws);
}

/* Whether o has a condition of type t with status True. */
static bool cond_true(const json_t *o, const char *t)
{
	size_t i;
	json_t *c;
	json_array_foreach(mu__jget(o, "status.conditions"), i, c) {
		const char *ct = json_string_value(json_object_get(c, "type"));
		const char *cs = json_string_value(json_object_get(c, "status"));
		if (ct && cs && !strcmp(ct, t) && !strcmp(cs, "True"))
			return true;
	}
	return false;
}

const char *mu__dkind_done(const json_t *w, mu__dkind_t k)
{
	switch (k) {
	case MU__DK_JOB: /* the Job controller: Complete or Failed */
		return cond_true(w, "Failed") ? "Failed" : cond_true(w, "Complete") ? "Succeeded" : NULL;
	case MU__DK_JOBSET: /* JobSet's controller: Completed or Failed */
		return cond_true(w, "Failed") ? "Failed" : cond_true(w, "Completed") ? "Succeeded" : NULL;
	case MU__DK_PYTORCH: /* the training operator: Succeeded or Failed */
	case MU__DK_MPI:
		return cond_true(w, "Failed") ? "Failed" : cond_true(w, "Succeeded") ? "Succeeded" : NULL;
	case MU__DK_RAYJOB: { /* KubeRay: jobDeploymentStatus, then jobStatus */
		const char *ds = mu__jstr(w, "status.jobDeploymentStatus");
		const char *js = mu__jstr(w, "status.jobStatus");
		if (ds && !strcmp(ds, "Failed"))
			return "Failed";
		if (ds && !strcmp(ds, "Complete"))
			return js && !strcmp(js, "SUCCEEDED") ? "Succeeded" : "Failed";
		return NULL;
	}
	case MU__DK_VOLCANO_JOB: { /* Volcano's job controller: state.phase */
		const char *ph = mu__jstr(w, "status.state.phase");
		if (ph && !strcmp(ph, "Completed"))
			return "Succeeded";
		/* Volcano's ends other than Completed: Failed (its retries
		 * spent), Terminated (ended by an event), and Aborted (by a
		 * user or the error handling: its pods are released; Volcano
		 * could resume it on the worker, but the hub takes it as ended,
		 * its room freed, as clients of Volcano take it: cancelled).
		 * Aborting, Terminating, Completing and Restarting are on
		 * their way and not ends. */
		if (ph && (!strcmp(ph, "Failed") || !strcmp(ph, "Terminated") || !strcmp(ph, "Aborted")))
			return "Failed";
		return NULL;
	}
	case MU__DK_LWS: /* a serving workload: it runs until deleted */
	case MU__DK_RAYCLUSTER: /* so does a RayCluster */
	case MU__DK_COSCHED_PG:
	case MU__DK_PODGROUP: /* a group ends with its pods (mu__dkind_group_end) */
	case MU__DK_VOLCANO_PG:
	case MU__DK_KAI_PG:
	case MU__DK_COUNT:
		break;
	}
	return NULL;
}

const char *mu__dkind_group_end(int64_t succeeded, int64_t failed, int64_t npods)
{
	if (npods <= 0 || succeeded < 0 || failed < 0 || succeeded + failed < npods)
		return NULL;
	return failed ? "Failed" : "Succeeded";
}

json_t *mu__dkind_pod_copy(const json_t *pod, const char *uid, const char *key, uint32_t g)
{
	char gen[16];
	snprintf(gen, sizeof gen, "%u", g);
	json_t *labels = json_deep_copy(mu__jget(pod, "metadata.labels"));
	if (!json_is_object(labels)) {
		json_decref(labels);
		labels = json_object();
	}
	json_t *ann = json_deep_copy(mu__jget(pod, "metadata.annotations"));
	if (!json_is_object(ann)) {
		json_decref(ann);
		ann = json_object();
	}
	json_object_del(ann, "kubectl.kubernetes.io/last-applied-configuration");
	json_object_set_new(labels, MU__D_HUBUID, json_string(uid));
	json_object_set_new(labels, MU__D_GEN, json_string(gen));
	json_object_set_new(ann, MU__D_GEN, json_string(gen));
	json_object_set_new(ann, MU__D_HUBJOB, json_string(key));
	json_t *spec = json_deep_copy(json_object_get(pod, "spec"));
	if (!json_is_object(spec)) {
		json_decref(spec);
		spec = json_object();
	}
	json_object_del(spec, "nodeName"); /* the worker's scheduler places it */
	/* the gate that held it on the hub (Pod scheduling readiness) */
	json_t *gates = json_object_get(spec, "schedulingGates"), *gk;
	size_t i;
	for (i = json_array_size(gates); i-- > 0;) {
		gk = json_array_get(gates, i);
		const char *gn = json_string_value(json_object_get(gk, "name"));
		if (gn && !strcmp(gn, MU__D_MANAGER))
			json_array_remove(gates, i);
	}
	if (gates && (!json_is_array(gates) || !json_array_size(gates)))
		json_object_del(spec, "schedulingGates");
	const char *ns = mu__jstr(pod, "metadata.namespace");
	return json_pack("{s:s,s:s,s:{s:s?,s:s,s:o,s:o},s:o}", "apiVersion", "v1", "kind", "Pod",
			 "metadata", "name", mu__jstr(pod, "metadata.name"), "namespace",
			 ns ? ns : "default", "labels", labels, "annotations", ann, "spec", spec);
}

json_t *mu__dkind_suspend_patch(mu__dkind_t k, bool on)
{
	if (kinds[k].run_policy)
		return json_pack("{s:{s:{s:b}}}", "spec", "runPolicy", "suspend", on);
	return json_pack("{s:{s:b}}", "spec", "suspend", on);
}

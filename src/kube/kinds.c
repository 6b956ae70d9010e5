/*
 * kinds.c - the workload kinds AI clusters run, grouped as KAI-Scheduler's
 * pod grouper groups them: which workload a pod belongs to (from the labels
 * and annotations its controller writes, and its owner reference), which
 * part of it (a role, a replicated job, a sub-group), and what the
 * workload object says about the gang: its minimum, its parts' minimums
 * and its queue.
 *
 * A pod of a known kind joins the group "w:NS/KIND/NAME" (a LeaderWorkerSet:
 * one group per leader and its workers, "w:NS/LeaderWorkerSet/NAME/GROUP");
 * the object it waits for is "KIND:NS/NAME".  Pure functions of the JSON:
 * no I/O, no state.  Each reads only the fields docs/kubernetes.md lists.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"
#include "muster/jpath.h"

/* The kinds' names in keys, in mu__wlkind_t order (their collections are
 * watched from reflector.c, MU__KR_WL0 on). */
static const struct {
	const char *kind;
} kinds[MU__WL_COUNT] = {
	[MU__WL_JOBSET] = {"JobSet"},
	[MU__WL_LWS] = {"LeaderWorkerSet"},
	[MU__WL_PYTORCH] = {"PyTorchJob"},
	[MU__WL_MPI] = {"MPIJob"},
	[MU__WL_RAY] = {"RayCluster"},
	[MU__WL_VOLCANO_PG] = {"VolcanoPodGroup"},
	[MU__WL_KAI_PG] = {"KaiPodGroup"},
	[MU__WL_RAYJOB] = {"RayJob"},
};

const char *mu__kw_kind(mu__wlkind_t k) { return k < MU__WL_COUNT ? kinds[k].kind : "?"; }

/* Whether pod's controlling owner reference has kind `kind`. */
static bool owned_by(const json_t *pod, const char *kind)
{
	size_t i;
	const json_t *r;
	json_array_foreach(mu__jget(pod, "metadata.ownerReferences"), i, r) {
		const char *k = json_string_value(json_object_get(r, "kind"));
		if (k && !strcmp(k, kind))
			return true;
	}
	return false;
}

/* Fills out for a pod of kind k named `name`, part `part` ("" none), with
 * an extra group suffix sub (NULL none).  Names too long are refused. */
static bool set_ref(mu__kwpod_t *out, mu__wlkind_t k, const char *ns, const char *name,
		    const char *sub, const char *part)
{
	out->kind = k;
	int a = snprintf(out->wl, sizeof out->wl, "%s:%s/%s", kinds[k].kind, ns, name);
	int b = sub ? snprintf(out->group, sizeof out->group, "w:%s/%s/%s/%s", ns, kinds[k].kind, name, sub)
		    : snprintf(out->group, sizeof out->group, "w:%s/%s/%s", ns, kinds[k].kind, name);
	int c = snprintf(out->part, sizeof out->part, "%s", part ? part : "");
	if (a < 0 || (size_t)a >= sizeof out->wl || b < 0 || (size_t)b >= sizeof out->group ||
	    c < 0 || (size_t)c >= sizeof out->part)
		return false;
	for (char *p = out->part; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	snprintf(out->name, sizeof out->name, "%s", sub ? sub : name);
	return true;
}

bool mu__kw_pod(const json_t *pod, mu__kwpod_t *out)
{
	const char *ns = mu__kjs(pod, "metadata.namespace");
	const char *v;
	memset(out, 0, sizeof *out);
	if (!ns)
		ns = "default";
	if ((v = mu__kmap(pod, "metadata.labels", "jobset.sigs.k8s.io/jobset-name")))
		return set_ref(out, MU__WL_JOBSET, ns, v, NULL,
			       mu__kmap(pod, "metadata.labels", "jobset.sigs.k8s.io/replicatedjob-name"));
	if ((v = mu__kmap(pod, "metadata.labels", "leaderworkerset.sigs.k8s.io/name"))) {
		const char *gi = mu__kmap(pod, "metadata.labels", "leaderworkerset.sigs.k8s.io/group-index");
		const char *wi = mu__kmap(pod, "metadata.labels", "leaderworkerset.sigs.k8s.io/worker-index");
		char sub[300];
		snprintf(sub, sizeof sub, "%s", gi ? gi : "0");
		return set_ref(out, MU__WL_LWS, ns, v, sub, wi && strcmp(wi, "0") ? "workers" : "leader");
	}
	if ((v = mu__kmap(pod, "metadata.labels", "training.kubeflow.org/job-name"))) {
		const char *rt = mu__kmap(pod, "metadata.labels", "training.kubeflow.org/replica-type");
		if (owned_by(pod, "PyTorchJob"))
			return set_ref(out, MU__WL_PYTORCH, ns, v, NULL, rt);
		if (owned_by(pod, "MPIJob"))
			return set_ref(out, MU__WL_MPI, ns, v, NULL, rt);
	}
	if ((v = mu__kmap(pod, "metadata.labels", "ray.io/cluster"))) {
		const char *nt = mu__kmap(pod, "metadata.labels", "ray.io/node-type");
		const char *grp = mu__kmap(pod, "metadata.labels", "ray.io/group");
		return set_ref(out, MU__WL_RAY, ns, v, NULL, nt && !strcmp(nt, "head") ? "head" : grp);
	}
	if ((v = mu__kmap(pod, "metadata.annotations", "scheduling.k8s.io/group-name")))
		return set_ref(out, MU__WL_VOLCANO_PG, ns, v, NULL,
			       mu__kmap(pod, "metadata.annotations", "volcano.sh/task-spec"));
	if ((v = mu__kmap(pod, "metadata.annotations", "pod-group-name")))
		return set_ref(out, MU__WL_KAI_PG, ns, v, NULL,
			       mu__kmap(pod, "metadata.labels", "kai.scheduler/subgroup-name"));
	return false;
}

/* Adds part `name` with minimum min to w (lower-cased); false when full. */
static bool add_part(mu__kwinfo_t *w, const char *name, int64_t min)
{
	if (w->nparts >= MU__WL_MAX_PARTS || !name)
		return false;
	snprintf(w->parts[w->nparts].name, sizeof w->parts[0].name, "%s", name);
	for (char *p = w->parts[w->nparts].name; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	w->parts[w->nparts++].min = min < 0 ? 0 : min > 1000000 ? 1000000 : (int32_t)min;
	return true;
}

/* The Kubeflow replica specs at path (a map of role -> {replicas}). */
static int kubeflow_parts(const json_t *obj, const char *path, mu__kwinfo_t *w)
{
	const char *role;
	json_t *spec;
	json_object_foreach(mu__jget(obj, path), role, spec)
		if (!add_part(w, role, mu__kji(spec, "replicas", 1)))
			return MU_ELIMIT;
	return w->nparts ? MU_OK : MU_EINVAL;
}

/* A Ray worker group's gang minimum: minReplicas pods per host of a
 * replica (numOfHosts, 1 by default; multi-host TPU slices have more). */
static int64_t ray_min(const json_t *grp)
{
	int64_t m = mu__kji(grp, "minReplicas", 0), h = mu__kji(grp, "numOfHosts", 1);
	return m < 0 || h < 1 ? 0 : m > 1000000 / h ? 1000000 : m * h;
}

static int read_parts(const json_t *obj, mu__wlkind_t k, mu__kwinfo_t *w)
{
	size_t i;
	const json_t *x;
	const char *key;
	json_t *val;
	switch (k) {
	case MU__WL_JOBSET:
		json_array_foreach(mu__jget(obj, "spec.replicatedJobs"), i, x)
			if (!add_part(w, mu__kjs(x, "name"), mu__kji(x, "replicas", 1) *
				      mu__kji(x, "template.spec.parallelism", 1)))
				return MU_ELIMIT;
		return w->nparts ? MU_OK : MU_EINVAL;
	case MU__WL_LWS: {
		int64_t size = mu__kji(obj, "spec.leaderWorkerTemplate.size", 1);
		add_part(w, "leader", 1);
		if (size > 1)
			add_part(w, "workers", size - 1);
		return MU_OK;
	}
	case MU__WL_PYTORCH:
		return kubeflow_parts(obj, "spec.pytorchReplicaSpecs", w);
	case MU__WL_MPI:
		return kubeflow_parts(obj, "spec.mpiReplicaSpecs", w);
	case MU__WL_RAY:
	case MU__WL_RAYJOB:
		add_part(w, "head", 1);
		json_array_foreach(mu__jget(obj, k == MU__WL_RAY ? "spec.workerGroupSpecs" :
					    "spec.rayClusterSpec.workerGroupSpecs"), i, x)
			if (!add_part(w, mu__kjs(x, "groupName"), ray_min(x)))
				return MU_ELIMIT;
		/* KubeRay makes the submitter once the cluster is ready: the
		 * pods' gang must not wait for it (minimum 0) */
		if (k == MU__WL_RAYJOB && mu__kw_ray_submitter(obj) && !add_part(w, "submitter", 0))
			return MU_ELIMIT;
		return MU_OK;
	case MU__WL_VOLCANO_PG:
		json_object_foreach(mu__jget(obj, "spec.minTaskMember"), key, val)
			if (!add_part(w, key, json_integer_value(val)))
				return MU_ELIMIT;
		return MU_OK;
	case MU__WL_KAI_PG:
		json_array_foreach(mu__jget(obj, "spec.subGroups"), i, x)
			if (!add_part(w, mu__kjs(x, "name"), mu__kji(x, "minMember", 1)))
				return MU_ELIMIT;
		return MU_OK;
	case MU__WL_COUNT:
		break;
	}
	return MU_EINVAL;
}

int mu__kw_read(const json_t *obj, mu__wlkind_t k, mu__kwinfo_t *w)
{
	memset(w, 0, sizeof *w);
	int rc = read_parts(obj, k, w);
	if (rc)
		return rc;
	int64_t sum = 0;
	for (int i = 0; i < w->nparts; i++)
		sum += w->parts[i].min;
	int64_t mm = sum;
	if (k == MU__WL_VOLCANO_PG || k == MU__WL_KAI_PG)
		mm = mu__kji(obj, "spec.minMember", sum ? sum : 1);
	else if (k == MU__WL_PYTORCH || k == MU__WL_MPI)
		mm = mu__kji(obj, "spec.runPolicy.schedulingPolicy.minAvailable", sum);
	if (mm < sum)
		mm = sum; /* never below its parts (KAI asks for equality) */
	w->min_member = mm < 1 ? 1 : mm > 1000000 ? 1000000 : (int32_t)mm;
	const char *q = mu__kmap(obj, "metadata.labels", "muster.io/queue");
	if (!q)
		q = mu__kmap(obj, "metadata.labels", "kueue.x-k8s.io/queue-name");
	if (!q && (k == MU__WL_VOLCANO_PG || k == MU__WL_KAI_PG))
		q = mu__kjs(obj, "spec.queue");
	if (!q && (k == MU__WL_PYTORCH || k == MU__WL_MPI))
		q = mu__kjs(obj, "spec.runPolicy.schedulingPolicy.queue");
	snprintf(w->queue, sizeof w->queue, "%s", q ? q : "");
	return MU_OK;
}

bool mu__kw_suspendable(mu__wlkind_t k)
{
	return k == MU__WL_JOBSET || k == MU__WL_PYTORCH || k == MU__WL_MPI || k == MU__WL_RAYJOB;
}

bool mu__kw_suspended(const json_t *obj, mu__wlkind_t k)
{
	if (k == MU__WL_JOBSET || k == MU__WL_RAYJOB)
		return json_is_true(mu__jget(obj, "spec.suspend"));
	if (k == MU__WL_PYTORCH || k == MU__WL_MPI)
		return json_is_true(mu__jget(obj, "spec.runPolicy.suspend"));
	return false;
}

int mu__kw_templates(const json_t *obj, mu__wlkind_t k, mu__kwtmpl_t *out, int max)
{
	int n = 0;
	if (max > 0)
		memset(out, 0, (size_t)max * sizeof *out);
	size_t i;
	const json_t *x;
	const char *role;
	json_t *spec;
	if (k == MU__WL_JOBSET) {
		json_array_foreach(mu__jget(obj, "spec.replicatedJobs"), i, x) {
			if (n >= max)
				return MU_ELIMIT;
			out[n].part = mu__kjs(x, "name");
			out[n].count = mu__kji(x, "replicas", 1) * mu__kji(x, "template.spec.parallelism", 1);
			out[n].tmpl = mu__jget(x, "template.spec.template");
			n++;
		}
	} else if (k == MU__WL_PYTORCH || k == MU__WL_MPI) {
		json_object_foreach(mu__jget(obj, k == MU__WL_MPI ? "spec.mpiReplicaSpecs" :
						  "spec.pytorchReplicaSpecs"), role, spec) {
			if (n >= max)
				return MU_ELIMIT;
			out[n].part = role;
			out[n].count = mu__kji(spec, "replicas", 1);
			out[n].tmpl = json_object_get(spec, "template");
			n++;
		}
	} else if (k == MU__WL_RAYJOB) {
		/* the head, then each worker group's minimum: the gang */
		out[n].part = "head";
		out[n].count = 1;
		out[n].tmpl = mu__jget(obj, "spec.rayClusterSpec.headGroupSpec.template");
		n++;
		json_array_foreach(mu__jget(obj, "spec.rayClusterSpec.workerGroupSpecs"), i, x) {
			if (n >= max)
				return MU_ELIMIT;
			out[n].part = mu__kjs(x, "groupName");
			out[n].count = ray_min(x);
			out[n].tmpl = json_object_get(x, "template");
			n++;
		}
		if (mu__kw_ray_submitter(obj)) { /* counted at admission, as Kueue does */
			if (n >= max)
				return MU_ELIMIT;
			out[n].part = "submitter";
			out[n].count = 1;
			out[n].tmpl = mu__jget(obj, "spec.submitterPodTemplate");
			out[n].submitter_default = !out[n].tmpl;
			n++;
		}
	}
	for (int j = 0; j < n; j++)
		if (!out[j].part || (!json_is_object(out[j].tmpl) && !out[j].submitter_default) ||
		    out[j].count < 0 || out[j].count > 100000)
			return MU_EINVAL;
	return n;
}

bool mu__kw_ray_submitter(const json_t *rayjob)
{
	const char *m = mu__kjs(rayjob, "spec.submissionMode");
	return !m || !strcmp(m, "K8sJobMode");
}

json_t *mu__kw_submitter_spec(void)
{
	return json_pack("{s:[{s:s,s:{s:{s:s,s:s},s:{s:s,s:s}}}],s:s}", "containers", "name",
			 "ray-job-submitter", "resources", "requests", "cpu", "500m", "memory", "200Mi",
			 "limits", "cpu", "1", "memory", "1Gi", "restartPolicy", "Never");
}

bool mu__kw_to_submitter(mu__kwpod_t *w, const char *ns, const char *job)
{
	memset(w, 0, sizeof *w);
	return set_ref(w, MU__WL_RAYJOB, ns, job, NULL, "submitter");
}

const char *mu__kw_unsuspend_patch(mu__wlkind_t k)
{
	return k == MU__WL_JOBSET || k == MU__WL_RAYJOB ? "{\"spec\":{\"suspend\":false}}" :
	       "{\"spec\":{\"runPolicy\":{\"suspend\":false}}}";
}

const char *mu__kw_collection(mu__wlkind_t k)
{
	return k == MU__WL_JOBSET ? "/apis/jobset.x-k8s.io/v1alpha2" :
	       k == MU__WL_RAYJOB ? "/apis/ray.io/v1" : "/apis/kubeflow.org/v1";
}

const char *mu__kw_plural(mu__wlkind_t k)
{
	return k == MU__WL_JOBSET ? "jobsets" : k == MU__WL_MPI ? "mpijobs" :
	       k == MU__WL_RAYJOB ? "rayjobs" : "pytorchjobs";
}

bool mu__kw_rayjob_of(const json_t *rc, char *name, size_t len)
{
	size_t i;
	const json_t *r;
	json_array_foreach(mu__jget(rc, "metadata.ownerReferences"), i, r) {
		const char *k = json_string_value(json_object_get(r, "kind"));
		const char *n = json_string_value(json_object_get(r, "name"));
		if (k && n && !strcmp(k, "RayJob") && json_is_true(json_object_get(r, "controller")) &&
		    (size_t)snprintf(name, len, "%s", n) < len)
			return true;
	}
	return false;
}

bool mu__kw_to_rayjob(mu__kwpod_t *w, const char *ns, const char *job)
{
	char part[sizeof w->part];
	snprintf(part, sizeof part, "%s", w->part);
	return set_ref(w, MU__WL_RAYJOB, ns, job, NULL, part);
}

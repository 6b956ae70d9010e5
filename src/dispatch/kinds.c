/*
 * kinds.c - the kinds of job a hub dispatches, as MultiKueue dispatches
 * its supported kinds: batch/v1 Jobs, and the suspendable kinds of the
 * workload issue (JobSet, PyTorchJob, MPIJob, RayJob).  For each: its
 * paths on an API server, where its suspend flag and managedBy live, its
 * pod templates (the gang the fleet places), its end as its controller
 * writes it, and the object as a muster Workload the cluster-file loader
 * reads.  Pure functions of the JSON: no I/O, no state; at the bottom of
 * src/dispatch (it calls no other file of it).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"

static const struct {
	const char *kind, *api, *plural;
	bool run_policy; /* suspend and managedBy in spec.runPolicy */
} kinds[MU__DK_COUNT] = {
	[MU__DK_JOB] = {"Job", "batch/v1", "jobs", false},
	[MU__DK_JOBSET] = {"JobSet", "jobset.x-k8s.io/v1alpha2", "jobsets", false},
	[MU__DK_PYTORCH] = {"PyTorchJob", "kubeflow.org/v1", "pytorchjobs", true},
	[MU__DK_MPI] = {"MPIJob", "kubeflow.org/v1", "mpijobs", true},
	[MU__DK_RAYJOB] = {"RayJob", "ray.io/v1", "rayjobs", false},
};

const char *mu__dkind_name(mu__dkind_t k) { return k < MU__DK_COUNT ? kinds[k].kind : "?"; }

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
			if (strlen(kinds[k].kind) == l && !strncmp(p, kinds[k].kind, l))
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

static int64_t int_at(const json_t *o, const char *path, int64_t def)
{
	const json_t *v = mu__jget(o, path);
	return json_is_integer(v) ? json_integer_value(v) : def;
}

int mu__dkind_templates(json_t *spec, mu__dkind_t k, mu__dtmpl_t *out, int max)
{
	int n = 0;
	size_t i;
	json_t *x;
	const char *role;
	if (k == MU__DK_JOBSET) {
		json_array_foreach(json_object_get(spec, "replicatedJobs"), i, x) {
			if (n >= max)
				return MU_ELIMIT;
			part_name(out[n].part, sizeof out[n].part, mu__jstr(x, "name"));
			out[n].count = int_at(x, "replicas", 1) * int_at(x, "template.spec.parallelism", 1);
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
	} else if (k == MU__DK_RAYJOB) {
		/* the head, then each worker group's minimum (KubeRay's gang) */
		snprintf(out[n].part, sizeof out[n].part, "head");
		out[n].count = 1;
		out[n].tmpl = (json_t *)mu__jget(spec, "rayClusterSpec.headGroupSpec.template");
		n++;
		json_array_foreach(mu__jget(spec, "rayClusterSpec.workerGroupSpecs"), i, x) {
			if (n >= max)
				return MU_ELIMIT;
			part_name(out[n].part, sizeof out[n].part, mu__jstr(x, "groupName"));
			out[n].count = int_at(x, "minReplicas", 0) * int_at(x, "numOfHosts", 1);
			out[n].tmpl = json_object_get(x, "template");
			n++;
		}
	}
	for (int j = 0; j < n; j++)
		if (!out[j].part[0] || !json_is_object(out[j].tmpl) || out[j].count < 0 ||
		    out[j].count > 100000)
			return MU_EINVAL;
	return n;
}

json_t *mu__dkind_workload(const json_t *o, mu__dkind_t k)
{
	mu__dtmpl_t t[16];
	json_t *spec = json_deep_copy(json_object_get(o, "spec"));
	int n = spec ? mu__dkind_templates(spec, k, t, 16) : MU_EINVAL;
	json_t *sets = json_array(), *pclass = NULL;
	for (int i = 0; i < n; i++) {
		if (!t[i].count) /* a group of no pods in the gang (Ray minReplicas 0) */
			continue;
		json_t *tm = json_deep_copy(t[i].tmpl);
		json_t *ps = json_pack("{s:s,s:I,s:o}", "name", t[i].part, "replicas",
				       (json_int_t)t[i].count, "template", tm);
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
		json_decref(sets);
	if (pclass)
		json_object_set_new(ws, "priorityClassName", pclass);
	if (k == MU__DK_PYTORCH || k == MU__DK_MPI) {
		json_t *mm = (json_t *)mu__jget(spec, "runPolicy.schedulingPolicy.minAvailable");
		if (json_is_integer(mm))
			json_object_set(ws, "minMember", mm);
	}
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
	case MU__DK_COUNT:
		break;
	}
	return NULL;
}

json_t *mu__dkind_suspend_patch(mu__dkind_t k, bool on)
{
	if (kinds[k].run_policy)
		return json_pack("{s:{s:{s:b}}}", "spec", "runPolicy", "suspend", on);
	return json_pack("{s:{s:b}}", "spec", "suspend", on);
}

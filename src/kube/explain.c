/*
 * explain.c - `muster kexplain`: why a pod or a Job of a live cluster is
 * where it is, read through the API only.
 *
 * For a pod: its phase, scheduler, group (pod group label or Job), node and
 * devices (the annotations the scheduler wrote with the binding; with
 * muster-horizon also the settings that placed it), the
 * PodScheduled condition (whose message is the engine's explanation, as
 * mu_reason_format() prints it) and the scheduler's events.  For a Job:
 * its queue, whether muster admitted it, how many pods run, on a hub where
 * `muster dispatch` sent it or why it waits there, and the events; for the
 * other kinds a hub dispatches (JobSet, PyTorchJob, MPIJob, RayJob,
 * LeaderWorkerSet, the PodGroups of muster, Volcano and KAI) the same hub
 * lines and events
 * (Admitted, Preempted, FailedScheduling with the reason).  Bounded: one
 * GET of the object and one list of its events.  mu_kube_explain_live()
 * adds the engine's view from a running scheduler's /explain (queue,
 * state, reason, expected start), over the daemon's own HTTP client.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "kube/kube_int.h"

/* Prints the events about kind/name in ns, oldest first. */
static void events(mu__kc_t *c, FILE *out, const char *ns, const char *kind, const char *name)
{
	char sel[700], path[1400];
	snprintf(sel, sizeof sel, "involvedObject.kind=%s,involvedObject.name=%s", kind, name);
	char *esc = curl_easy_escape(NULL, sel, 0);
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/events?fieldSelector=%s", ns, esc ? esc : "");
	curl_free(esc);
	long st;
	json_t *list = NULL;
	mu__kc_json(c, "GET", path, NULL, NULL, 15000, &st, &list);
	size_t i, n = 0;
	json_t *ev;
	fprintf(out, "events:\n");
	json_array_foreach(json_object_get(list, "items"), i, ev) {
		const char *t = mu__kjs(ev, "lastTimestamp");
		fprintf(out, "  %-20s %-7s %-17s %s\n", t ? t : "", mu__kjs(ev, "type") ? mu__kjs(ev, "type") : "",
			mu__kjs(ev, "reason") ? mu__kjs(ev, "reason") : "",
			mu__kjs(ev, "message") ? mu__kjs(ev, "message") : "");
		n++;
	}
	if (!n)
		fprintf(out, "  (none)\n");
	json_decref(list);
}

static void explain_pod(mu__kc_t *c, FILE *out, const json_t *pod)
{
	mu__kpodinfo_t in;
	mu__kpod_info(pod, &in);
	fprintf(out, "pod %s/%s\n", in.ns, in.name);
	fprintf(out, "  phase:      %s%s\n", in.phase, in.deleting ? " (being deleted)" : "");
	fprintf(out, "  scheduler:  %s\n", in.scheduler);
	if (in.group_label)
		fprintf(out, "  gang:       pod group %s (muster.io)\n", in.group_label);
	else if (in.xgroup_label)
		fprintf(out, "  gang:       pod group %s (scheduling.x-k8s.io)\n", in.xgroup_label);
	else if (in.owner_job)
		fprintf(out, "  job:        %s\n", in.owner_job);
	if (in.queue)
		fprintf(out, "  queue:      %s\n", in.queue);
	if (in.node) {
		mu_decision_t d;
		char cpus[256] = "";
		mu__kdev_parse(pod, &d);
		fprintf(out, "  node:       %s\n", in.node);
		if (d.gpus) {
			fprintf(out, "  gpus:       %s", json_string_value(json_object_get(mu__kj(pod,
				"metadata.annotations"), "muster.io/gpus")));
			if (d.gpu_milli)
				fprintf(out, " (%d milli-GPU)", (int)d.gpu_milli);
			fprintf(out, "\n");
		}
		if (d.numa >= 0)
			fprintf(out, "  numa:       %d\n", (int)d.numa);
		if (d.nic >= 0)
			fprintf(out, "  nic:        %d\n", (int)d.nic);
		if (mu_cpuset_count(&d.cpus)) {
			mu_cpuset_format(&d.cpus, cpus, sizeof cpus);
			fprintf(out, "  cpus:       %s\n", cpus);
		}
		const char *set = json_string_value(json_object_get(mu__kj(pod,
			"metadata.annotations"), "muster.io/policy-setting"));
		if (set)
			fprintf(out, "  placed by:  %s\n", set);
	}
	size_t i;
	json_t *cond;
	json_array_foreach(mu__kj(pod, "status.conditions"), i, cond) {
		const char *t = mu__kjs(cond, "type");
		if (t && !strcmp(t, "PodScheduled")) {
			const char *m = mu__kjs(cond, "message");
			fprintf(out, "  scheduled:  %s%s%s\n", mu__kjs(cond, "status") ? mu__kjs(cond, "status") : "?",
				m ? ": " : "", m ? m : "");
		}
	}
	events(c, out, in.ns, "Pod", in.name);
}

/* On a hub (`muster dispatch`, docs/dispatch.md): where the Job went,
 * or why it waits there.  Nothing for a Job the hub never saw. */
static void hub_lines(FILE *out, const json_t *job)
{
	const char *ph = mu__kmap(job, "metadata.annotations", "muster.io/dispatch-phase");
	if (!ph)
		return;
	const char *cl = mu__kmap(job, "metadata.annotations", "muster.io/cluster");
	const char *gen = mu__kmap(job, "metadata.annotations", "muster.io/dispatch-generation");
	const char *pods = mu__kmap(job, "metadata.annotations", "muster.io/dispatch-pods");
	const char *why = mu__kmap(job, "metadata.annotations", "muster.io/dispatch-reason");
	const char *msg = mu__kmap(job, "metadata.annotations", "muster.io/dispatch-message");
	fprintf(out, "  hub:        %s", ph);
	if (cl)
		fprintf(out, " on cluster %s (dispatch generation %s)", cl, gen ? gen : "?");
	fprintf(out, "\n");
	if (pods)
		fprintf(out, "  there:      %s\n", pods);
	if (why)
		fprintf(out, "  waits:      %s: %s\n", why, msg ? msg : "");
}

static void explain_job(mu__kc_t *c, FILE *out, const json_t *job)
{
	const char *ns = mu__kjs(job, "metadata.namespace"), *name = mu__kjs(job, "metadata.name");
	const char *q = mu__kmap(job, "metadata.labels", "muster.io/queue");
	const char *adm = mu__kmap(job, "metadata.annotations", "muster.io/admitted");
	fprintf(out, "job %s/%s\n", ns ? ns : "default", name ? name : "?");
	fprintf(out, "  queue:      %s\n", q ? q : "(none: not queued by muster)");
	fprintf(out, "  suspended:  %s\n", json_is_true(mu__kj(job, "spec.suspend")) ? "yes" : "no");
	fprintf(out, "  admitted:   %s\n", adm && !strcmp(adm, "true") ? "yes, by muster" : "no");
	fprintf(out, "  pods:       parallelism %lld, active %lld, succeeded %lld, failed %lld\n",
		(long long)mu__kji(job, "spec.parallelism", 1), (long long)mu__kji(job, "status.active", 0),
		(long long)mu__kji(job, "status.succeeded", 0), (long long)mu__kji(job, "status.failed", 0));
	hub_lines(out, job);
	events(c, out, ns ? ns : "default", "Job", name ? name : "");
}

/* A JobSet, PyTorchJob, MPIJob, RayJob, RayCluster, Volcano Job
 * ("VolcanoJob"), LeaderWorkerSet or PodGroup on a
 * hub: its queue, whether it is held (suspend, where the kind has it),
 * where the hub sent it or why it waits, and its events. */
static void explain_kind(mu__kc_t *c, FILE *out, const json_t *o, const char *kind)
{
	const char *ns = mu__kjs(o, "metadata.namespace"), *name = mu__kjs(o, "metadata.name");
	const char *q = mu__kmap(o, "metadata.labels", "muster.io/queue");
	const json_t *su = mu__kj(o, "spec.suspend") ? mu__kj(o, "spec.suspend") :
			   mu__kj(o, "spec.runPolicy.suspend");
	/* a Volcano Job is named as its group names it, not as batch/v1's */
	fprintf(out, "%s %s/%s\n", strcmp(kind, "VolcanoJob") ? kind : "Job (batch.volcano.sh)",
		ns ? ns : "default", name ? name : "?");
	fprintf(out, "  queue:      %s\n", q ? q : "(none: not queued by muster)");
	if (su)
		fprintf(out, "  suspended:  %s\n", json_is_true(su) ? "yes" : "no");
	else if (!strcmp(kind, "PodGroup") || !strcmp(kind, "LeaderWorkerSet") ||
		 !strcmp(kind, "VolcanoJob"))
		fprintf(out, "  suspended:  (the kind has no suspend: a hub holds it unsent)\n");
	hub_lines(out, o);
	events(c, out, ns ? ns : "default", strcmp(kind, "VolcanoJob") ? kind : "Job",
	       name ? name : "");
}

/* The other kinds a hub dispatches (docs/dispatch.md), by the names
 * kubectl takes for them: where each lives and its objects' kind. */
static const struct {
	const char *prefix, *api, *plural, *kind;
} hub_kinds[] = {
	{"jobset", "jobset.x-k8s.io/v1alpha2", "jobsets", "JobSet"},
	{"pytorchjob", "kubeflow.org/v1", "pytorchjobs", "PyTorchJob"},
	{"mpijob", "kubeflow.org/v1", "mpijobs", "MPIJob"},
	{"rayjob", "ray.io/v1", "rayjobs", "RayJob"},
	{"raycluster", "ray.io/v1", "rayclusters", "RayCluster"},
	{"job.batch.volcano.sh", "batch.volcano.sh/v1alpha1", "jobs", "VolcanoJob"},
	{"vcjob", "batch.volcano.sh/v1alpha1", "jobs", "VolcanoJob"},
	{"podgroup.scheduling.x-k8s.io", "scheduling.x-k8s.io/v1alpha1", "podgroups", "PodGroup"},
	{"leaderworkerset", "leaderworkerset.x-k8s.io/v1", "leaderworkersets", "LeaderWorkerSet"},
	{"lws", "leaderworkerset.x-k8s.io/v1", "leaderworkersets", "LeaderWorkerSet"},
	{"podgroup.scheduling.volcano.sh", "scheduling.volcano.sh/v1beta1", "podgroups", "PodGroup"},
	{"podgroup.scheduling.run.ai", "scheduling.run.ai/v2alpha2", "podgroups", "PodGroup"},
	{"podgroup.muster.io", "muster.io/v1alpha1", "podgroups", "PodGroup"},
	{"podgroup", "muster.io/v1alpha1", "podgroups", "PodGroup"},
};
#define N_HUB_KINDS ((int)(sizeof hub_kinds / sizeof hub_kinds[0]))

/* Whether w starts with "P/" or "Ps/" (P the singular, or P's plural
 * before its group: "podgroups.scheduling.run.ai/"); sets *rest after it. */
static bool kind_prefix(const char *w, const char *p, const char **rest)
{
	size_t l = strlen(p);
	const char *dot = strchr(p, '.');
	size_t base = dot ? (size_t)(dot - p) : l;
	if (!strncmp(w, p, l) && w[l] == '/') {
		*rest = w + l + 1;
		return true;
	}
	/* the plural: "s" after the resource name, then its group */
	if (!strncmp(w, p, base) && w[base] == 's' && !strncmp(w + base + 1, p + base, l - base) &&
	    w[l + 1] == '/') {
		*rest = w + l + 2;
		return true;
	}
	return false;
}

/* Splits "job/NS/NAME", "pod/NAME", "jobset/NAME", "NS/NAME"... into its
 * parts; returns -1 for a Job, -2 for a pod, else the index in hub_kinds. */
static int split_what(const char *what, const char *def_ns, char *ns, size_t nslen, char *name,
		      size_t namelen)
{
	int job = -2;
	const char *w = what, *rest;
	if (!strncmp(w, "job/", 4) || !strncmp(w, "jobs/", 5)) {
		job = -1;
		w = strchr(w, '/') + 1;
	} else if (!strncmp(w, "pod/", 4) || !strncmp(w, "pods/", 5)) {
		w = strchr(w, '/') + 1;
	} else {
		for (int k = 0; k < N_HUB_KINDS; k++)
			if (kind_prefix(w, hub_kinds[k].prefix, &rest)) {
				job = k;
				w = rest;
				break;
			}
	}
	const char *slash = strchr(w, '/');
	if (slash && (size_t)(slash - w) < nslen) {
		snprintf(ns, nslen, "%.*s", (int)(slash - w), w);
		snprintf(name, namelen, "%s", slash + 1);
	} else {
		snprintf(ns, nslen, "%s", def_ns ? def_ns : "default");
		snprintf(name, namelen, "%s", w);
	}
	return job;
}

/* The scheduler's muster-horizon choice as its /metrics say it (the
 * settings, candidate and checkpoint of the last choice, and the counts
 * of choices and changes), into buf; "" when it made none (or runs another
 * policy).  O(the metrics' text). */
static void live_policy(mu__kc_t *c, char *buf, size_t len)
{
	mu__kresp_t r = {0};
	buf[0] = '\0';
	if (mu__kc_do(c, "GET", "/metrics", NULL, NULL, 5000, &r) == MU_OK && r.status == 200 && r.body) {
		const char *ch = strstr(r.body, "\nmuster_policy_choices_total ");
		const char *cg = strstr(r.body, "\nmuster_policy_changes_total ");
		const char *s = strstr(r.body, "\nmuster_policy_choice{policy=\"muster-horizon\",settings=\"");
		if (ch && cg && s) {
			char set[128] = "", cand[16] = "", cp[16] = "";
			s += strlen("\nmuster_policy_choice{policy=\"muster-horizon\",settings=\"");
			if (sscanf(s, "%127[^\"]\",candidate=\"%15[^\"]\",checkpoint=\"%15[^\"]", set, cand, cp) == 3)
				snprintf(buf, len, "muster-horizon: %s (candidate %s, chosen at checkpoint %s; "
					 "%ld choices, %ld changed the settings)", set, cand, cp,
					 strtol(strchr(ch + 1, ' '), NULL, 10), strtol(strchr(cg + 1, ' '), NULL, 10));
		}
	}
	mu__kresp_release(&r);
}

int mu_kube_explain_live(const char *scheduler, const char *token, const char *what,
			 const char *def_ns, FILE *out,
			 char *err, size_t errlen)
{
	char ns[256], name[512], path[1200];
	int kind = split_what(what, def_ns, ns, sizeof ns, name, sizeof name);
	bool job = kind == -1;
	if (kind >= 0) {
		snprintf(err, errlen, "--scheduler: a scheduler explains pods and Jobs, not %s",
			 hub_kinds[kind].plural);
		return MU_EINVAL;
	}
	if (strncmp(scheduler, "http://", 7) && strncmp(scheduler, "https://", 8)) {
		snprintf(err, errlen, "--scheduler: expected http://HOST:PORT, got %s", scheduler);
		return MU_EINVAL;
	}
	snprintf(path, sizeof path, "/explain?%s=%s%%2F%s", job ? "job" : "pod", ns, name);
	/* The scheduler's listener, through the daemon's own client: a config
	 * whose server is that listener, with its bearer token if given. */
	mu_kube_config_t lc = {.server = (char *)scheduler, .token = (char *)token};
	mu__kauth_t auth;
	mu__kc_t *c = NULL;
	long st = 0;
	json_t *o = NULL;
	char policy[400] = "";
	int rc = mu__kauth_init(&auth, &lc);
	if (rc == MU_OK) {
		if ((rc = mu__kc_new(&auth, &c)) == MU_OK)
			rc = mu__kc_json(c, "GET", path, NULL, NULL, 5000, &st, &o);
		if (rc == MU_OK && st == 200)
			live_policy(c, policy, sizeof policy);
		mu__kc_free(c);
		mu__kauth_release(&auth);
	}
	if (rc || st != 200 || !o) {
		const char *m = o && mu__kjs(o, "message") ? mu__kjs(o, "message") :
				o && mu__kjs(o, "error") ? mu__kjs(o, "error") : "no answer";
		snprintf(err, errlen, "the scheduler at %s: %s", scheduler, rc ? mu_strerror(rc) : m);
		json_decref(o);
		return MU_EIO;
	}
	const char *msg = mu__kjs(o, "message"), *start = mu__kjs(o, "expectedStart");
	fprintf(out, "engine (live, from %s):\n", scheduler);
	fprintf(out, "  group:      %s (engine job %s)\n", mu__kjs(o, "group") ? mu__kjs(o, "group") : "?",
		mu__kjs(o, "job") ? mu__kjs(o, "job") : "none");
	if (mu__kjs(o, "queue"))
		fprintf(out, "  queue:      %s, priority %lld%s\n", mu__kjs(o, "queue"),
			(long long)mu__kji(o, "priority", 0),
			json_is_true(json_object_get(o, "preemptible")) ? ", preemptible" : "");
	fprintf(out, "  state:      %s, %lld of %lld pods bound (minMember %lld)\n",
		mu__kjs(o, "state") ? mu__kjs(o, "state") : "?", (long long)mu__kji(o, "bound", 0),
		(long long)mu__kji(o, "pods", 0), (long long)mu__kji(o, "minMember", 0));
	if (msg && *msg)
		fprintf(out, "  why:        %s\n", msg);
	if (mu__kjs(o, "order") && *mu__kjs(o, "order"))
		fprintf(out, "  order:      %s\n", mu__kjs(o, "order"));
	if (mu__kjs(o, "pool"))
		fprintf(out, "  pool:       %s\n", mu__kjs(o, "pool"));
	if (mu__kjs(o, "pools") && *mu__kjs(o, "pools"))
		fprintf(out, "  pools:      %s\n", mu__kjs(o, "pools"));
	if (mu__kjs(o, "service") && *mu__kjs(o, "service"))
		fprintf(out, "  service:    %s\n", mu__kjs(o, "service"));
	if (start && *start)
		fprintf(out, "  expected:   to start at %s (from %s)\n", start, mu__kjs(o, "expectedStartFrom"));
	if (*policy)
		fprintf(out, "  policy now: %s\n", policy);
	json_decref(o);
	return MU_OK;
}

int mu_kube_explain(const mu_kube_config_t *cfg, const char *what, FILE *out, char *err,
		    size_t errlen)
{
	char ns[256], name[512], path[1200];
	int job = split_what(what, cfg->ns, ns, sizeof ns, name, sizeof name);
	mu__kauth_t auth;
	mu__kc_t *c = NULL;
	int rc = mu__kauth_init(&auth, cfg);
	if (rc == MU_OK)
		rc = mu__kc_new(&auth, &c);
	if (rc) {
		snprintf(err, errlen, "%s", mu_strerror(rc));
		return rc;
	}
	if (job >= 0)
		snprintf(path, sizeof path, "/apis/%s/namespaces/%s/%s/%s", hub_kinds[job].api, ns,
			 hub_kinds[job].plural, name);
	else
		snprintf(path, sizeof path, job == -1 ? "/apis/batch/v1/namespaces/%s/jobs/%s" :
			 "/api/v1/namespaces/%s/pods/%s", ns, name);
	long st;
	json_t *obj = NULL;
	rc = mu__kc_json(c, "GET", path, NULL, NULL, 15000, &st, &obj);
	if (rc == MU_OK && st == 200 && obj) {
		if (job >= 0)
			explain_kind(c, out, obj, hub_kinds[job].kind);
		else if (job == -1)
			explain_job(c, out, obj);
		else
			explain_pod(c, out, obj);
	} else if (rc == MU_OK && st == 404) {
		snprintf(err, errlen, "%s %s/%s not found",
			 job >= 0 ? hub_kinds[job].plural : job == -1 ? "job" : "pod", ns, name);
		rc = MU_ENOENT;
	} else {
		snprintf(err, errlen, "GET %s: %s", path, rc ? mu_strerror(rc) : "unexpected answer");
		if (!rc) {
			char tmp[64];
			snprintf(tmp, sizeof tmp, " (HTTP %ld)", st);
			strncat(err, tmp, errlen - strlen(err) - 1);
		}
		rc = MU_EIO;
	}
	json_decref(obj);
	mu__kc_free(c);
	mu__kauth_release(&auth);
	return rc;
}

/*
 * agent.c - `muster dispatch agent`: pull mode, for a worker the hub
 * cannot reach (an edge cluster behind NAT).  The agent runs beside the
 * worker and calls the hub, so the hub holds no credentials for it.
 *
 * Every pass, for each kind the hub dispatches (batch/v1 Jobs, the
 * suspendable kinds of kinds.c, LeaderWorkerSets and PodGroups), from
 * watches (mu_kube_watch_t: the hub's objects of the kind labelled
 * muster.io/cluster=NAME, the worker's copies, their pods and the Nodes;
 * no list per pass): the hub objects labelled
 * muster.io/cluster=NAME are this cluster's current dispatches; a local
 * copy (muster.io/hub-uid and the dispatch generation) that is not one of
 * them is deleted, and its hub object told so ("GEN Deleted -" in
 * muster.io/agent-status); a current dispatch without a copy gets one
 * (mu__dcopy, as push mode creates it); each copy's phase and pods go to
 * its hub object ("GEN PHASE bound=N,..."), and the worker's Nodes, what
 * its pods beside the copies take on each (podcap.c: data.used), the
 * kinds it serves (those whose list it answers: the hub sends a kind only
 * where it is served) and a heartbeat to the ConfigMap
 * muster-system/muster-cluster-NAME, which is what the hub's model of this
 * cluster is built from (worker.c, mu__dpull_poll); with --budgets (for a
 * hub that reclaims) each copy's disruption allowance from a watch of the
 * worker's PodDisruptionBudgets too (data.pdbs; without, no such watch).  A kind whose watch
 * fails on either side (no CRD, no right; retried with backoff) is
 * skipped, its copies left alone.  A copy is created only after a fresh
 * GET of its hub object still shows it assigned here with that
 * generation (a watch may lag).  A PodGroup's pods are
 * created after it from the hub's pods that name it, those that come
 * late too, and its end is its pods' here.  The hub confirms a
 * withdrawal only two heartbeats after it took the label off, so that a
 * pass that listed the job before cannot create a copy after.  A Job
 * copy whose pods are all pending and that its worker's Job controller
 * cannot create pods for (a FailedCreate Event on it, watched as push
 * mode watches them) has the Event's message reported in
 * muster.io/dispatch-copy-failed ("GEN message"), so that the hub ends it
 * NotAdmitted at --start-timeout as in push mode (failcreate.c); the
 * copy of a job the hub ended NotAdmitted is deleted, and not made again.
 *
 * DRA (round 16): while the worker serves resource.k8s.io, its
 * ResourceSlices, DeviceClasses and allocated ResourceClaims, watched and
 * cut to what the allocator reads (wdra.c, mu__ddra_report), go in the
 * heartbeat as data.dra, only when they changed and at most once a
 * second, within MU__DDRA_REPORT_MAX bytes (past it, an error the hub
 * logs, and no DRA there); the hub models them as a push worker's.
 * Before a copy (or a group's pod) whose pods name ResourceClaimTemplates
 * or ResourceClaims, those are read from the hub and copied here as push
 * mode copies them (hdra.c: NAME-UID8-GEN, labelled with the hub uid);
 * a same-named object not made for this dispatch refuses it (reported
 * as a copy whose pods cannot be created: NotAdmitted at the hub's
 * --start-timeout); copied objects whose dispatch is not current are
 * deleted, as stale copies are.  Round 21: a group's pod so refused is
 * held, not the group: reported per pod in muster.io/dispatch-pods-refused
 * on the hub group (the generation, the hub pod's resourceVersion, why),
 * not tried again while that hub pod is unchanged, and dropped (then
 * created) once the worker's watches show the object that held its
 * copy's name gone; the hub counts it against the group's minimum
 * (worker.c's mu__dwork_pull_held).  Round 22: those holds are read
 * back from its own entries after a restart (pods_restore), and a change
 * of a hub object a held pod names, which the hub records in its hold
 * (muster.io/dispatch-held's "orv"), makes it try the pod again
 * (pod_held).  The hub's shrink intent on a Job (muster.io/dispatch-shrinking,
 * an elastic victim's surplus) is made here as push mode makes it: the
 * copy's spec.parallelism PATCHed, the answer in muster.io/agent-shrink
 * (mu__dagent_shrink; reclaim.c); round 23: on an elastic PyTorchJob's
 * copy too, its Worker replicas (the kind's size, kinds.c's shrink_ops).
 * Round 23: that answer carries its time, so a refusal's wait outlives a
 * restart; a held pod whose hub object is deleted stays held until the
 * object is made again (then tried once).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"
#include "muster/util.h"

void mu_dispatch_agent_opts_defaults(mu_dispatch_agent_opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->interval_ms = 200;
	o->request_timeout_ms = 5000;
}

typedef struct agent {
	mu__dd_t d;               /* for mu__dreq and mu__dlog: hub client */
	mu_dispatch_opts_t dopts;
	const mu_dispatch_agent_opts_t *o;
	mu_kube_client_t *w;      /* the worker */
	uint64_t beat;
	bool served[MU__DK_COUNT];     /* this pass: the worker listed the kind */
	/* watched, not listed each pass (src/kube/watchcache.c): the worker's
	 * Nodes, its copies' pods, its copies of each kind, and the hub's
	 * objects of each kind assigned here (label muster.io/cluster=NAME) */
	mu_kube_watch_t *wnodes, *wpods, *wcopies[MU__DK_COUNT], *whub[MU__DK_COUNT];
	/* the kinds each side serves (served.c: 1, 0, -1 not known), and
	 * when they were asked and probed: a kind's watches are made only
	 * where it is served (the hub's only when the worker's is) */
	int8_t wserves[MU__DK_COUNT], hserves[MU__DK_COUNT];
	int64_t wdisc_at, wprobe_at, hdisc_at, hprobe_at;
	uint32_t wapis, hapis;    /* the last /apis answers acted on */
	mu_kube_watch_t *wused;   /* its pods beside the copies (podcap.c) */
	mu_kube_watch_t *wfail;   /* its FailedCreate Events (failcreate.c) */
	mu_kube_watch_t *wpdbs;   /* its PodDisruptionBudgets (pdbs.c) */
	uint64_t fail_seq;
	json_t *fails;            /* copy uid -> the Event's message */
	/* DRA (round 16): while the worker serves resource.k8s.io (dra_on),
	 * watches of its ResourceSlices, DeviceClasses and ResourceClaims
	 * (wdra, by MU__DDRA_*) and of its ResourceClaimTemplates copied
	 * from the hub (wdtpl); the report last built (dra_text, NULL: none)
	 * and whether the hub has it yet (dra_sent), when it was built
	 * (dra_at) and from which changes (dra_seq); for the sweep, the
	 * watches' changes and the current dispatches it last acted on */
	int8_t dra_on;
	mu_kube_watch_t *wdra[MU__DDRA_N], *wdtpl;
	uint64_t dra_seq[MU__DDRA_N], sweep_seq[2];
	char *dra_text;
	bool dra_sent;
	int64_t dra_at;
	json_t *sweep_cur;
	json_t *all;              /* this pass: hub uid -> generation, the
	                           * current dispatches of the kinds listed */
	bool listed[MU__DK_COUNT];
	json_t *drefused;         /* hub uid -> generation refused here */
	/* round 21: a group's pods whose claims' copies the worker refuses,
	 * "UID/GEN/POD" -> {"kind", "uid", "gen", "name", "rv" (the hub
	 * pod's), "msg", "ns", "keys" (the objects it names), "seen" (the
	 * worker's object of a copy's name seen in its watches)}: not tried
	 * while the hub pod is unchanged, reported to the hub group
	 * (MU__D_PODSREFUSED), dropped when that object goes; pheld_seq:
	 * the template and claim watches' counts when last looked at */
	json_t *pheld;
	uint64_t pheld_seq[2];
	/* round 22: the hub's shrink intents answered here, hub uid -> the
	 * answer written (MU__D_SHRINKREP; round 23: its time in it) */
	json_t *shrinks;
	/* round 22: the groups ("UID/GEN" -> kind) whose entries of
	 * MU__D_PODSREFUSED this run has read back into pheld (after a
	 * restart: pods_restore) */
	json_t *prestored;
} agent_t;

/* Writes annotation key of the hub object ns/name of kind k when it
 * differs from cur (the value the hub object has).  One PATCH at most. */
static void report_ann(mu__dd_t *d, mu__dkind_t k, const char *ns, const char *name,
		       const char *key, const char *cur, const char *val)
{
	if (cur && !strcmp(cur, val))
		return;
	char path[1024];
	mu__dkind_path(k, ns, name, "", path, sizeof path);
	json_t *b = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", key, val);
	long st = mu__dreq(d, d->hub, "PATCH", path, "application/merge-patch+json", b, NULL);
	json_decref(b);
	if (st != 200 && st != 404)
		mu__dlog(d, 0, "hub %s %s/%s: report: HTTP %ld", mu__dkind_name(k), ns, name, st);
}

/* Writes muster.io/agent-status ("GEN PHASE PODS") the same way. */
static void report(agent_t *a, mu__dkind_t k, const char *ns, const char *name, const char *cur,
		   const char *val)
{
	report_ann(&a->d, k, ns, name, MU__D_AGENT, cur, val);
}

/* For a Job copy w of generation gen whose pods are all pending: its
 * worker's FailedCreate Event (a->fails, by the copy's uid) goes to its
 * hub object as "GEN message" in MU__D_COPYFAIL, once (failcreate.c reads
 * it on the hub, as push mode reads the Event).  O(1). */
static void copy_failed(agent_t *a, const json_t *hub, const json_t *w, const char *gen)
{
	const char *uid = mu__jstr(w, "metadata.uid");
	const char *msg = json_string_value(json_object_get(a->fails, uid ? uid : ""));
	if (!msg)
		return;
	char val[900];
	snprintf(val, sizeof val, "%s %.800s", gen, msg);
	report_ann(&a->d, MU__DK_JOB, mu__jstr(hub, "metadata.namespace"), mu__jstr(hub, "metadata.name"),
		   MU__D_COPYFAIL, mu__dmeta(hub, "annotations", MU__D_COPYFAIL), val);
}

/* For a kind other than Job whose hub status is its copy's (managedBy
 * the hub, or a kind without suspend), copy w's status goes to its hub
 * object as "GEN {status}" in MU__D_COPYST, when it changed: the hub
 * writes it as push mode writes the status it reads (hub.c). */
static void copy_status(agent_t *a, mu__dkind_t k, const json_t *hub, const json_t *w,
			const char *gen)
{
	const char *m = mu__dkind_managed_by(hub, k);
	if (k == MU__DK_JOB || (mu__dkind_suspends(k) && !(m && (!strcmp(m, MU__D_MANAGER) ||
								    !strcmp(m, MU__D_MULTIKUEUE)))))
		return;
	const json_t *st = json_object_get(w, "status");
	char *txt = json_dumps(st ? st : json_object_get(hub, "no-status"), JSON_COMPACT |
			       JSON_SORT_KEYS | JSON_ENCODE_ANY);
	size_t n = strlen(gen) + (txt ? strlen(txt) : 4) + 2;
	char *val = malloc(n);
	if (val) {
		snprintf(val, n, "%s %s", gen, txt ? txt : "null");
		const char *ns = mu__jstr(hub, "metadata.namespace"), *name = mu__jstr(hub, "metadata.name");
		const char *cur = mu__dmeta(hub, "annotations", MU__D_COPYST);
		if (name && (!cur || strcmp(cur, val))) {
			char path[1024];
			mu__dkind_path(k, ns ? ns : "default", name, "", path, sizeof path);
			json_t *b = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", MU__D_COPYST, val);
			long code = mu__dreq(&a->d, a->d.hub, "PATCH", path, "application/merge-patch+json",
					     b, NULL);
			json_decref(b);
			if (code != 200 && code != 404)
				mu__dlog(&a->d, 0, "hub %s %s: copy status: HTTP %ld", mu__dkind_name(k),
					 name, code);
		}
	}
	free(val);
	free(txt);
}

/* Round 22: the hub's shrink intent MU__D_SHRINKING ("GEN\tTO") on
 * shrinkable copy w's hub object, of w's dispatch gen, made here as push
 * mode makes it (mu__dreclaim_patch: its size lowered, a Job's
 * parallelism or, round 23, an elastic PyTorchJob's Worker replicas; the
 * worker's controller deletes the pods above it) and answered in
 * MU__D_SHRINKREP:
 * "GEN TO was 0 200 PAR AT" when the copy runs at most TO already (a
 * PATCH made before a restart is not made twice), "done" once the worker
 * said 200, "refused TRIES HTTP PAR AT" when it answered otherwise (asked
 * again 1, 2, 4, 8 s later; the MU__D_SHRINK_TRIES-th is the last, the
 * hub gives up).  The answer last written (shrinks: hub uid -> it, the
 * agent's memory; else the hub's, after a restart) decides, so a watch
 * that lags the answer repeats nothing.  Round 23: AT, the wall time of
 * the answer, is what the wait is counted from (mu__dshrinkrep_waits),
 * so a restarted agent waits as the one before it would have; an answer
 * on the hub that is not of the form is said and answered afresh.
 * O(1), or one PATCH on the worker and one on the hub. */
void mu__dagent_shrink(mu__dd_t *d, mu_kube_client_t *wk, json_t *shrinks, mu__dkind_t k,
		       const json_t *hub, const json_t *w, const char *gen)
{
	const char *uid = mu__jstr(hub, "metadata.uid"), *in = mu__dmeta(hub, "annotations",
									  MU__D_SHRINKING);
	const char *hns = mu__jstr(hub, "metadata.namespace"), *hname = mu__jstr(hub, "metadata.name");
	unsigned ig = 0;
	int to = 0;
	if (!uid || !in || sscanf(in, "%u\t%d", &ig, &to) != 2 || ig != (unsigned)atol(gen) ||
	    to < 1) {
		if (uid)
			json_object_del(shrinks, uid); /* none now: forgotten */
		return;
	}
	const char *cur = mu__dmeta(hub, "annotations", MU__D_SHRINKREP);
	const char *last = json_string_value(json_object_get(shrinks, uid));
	if (!last)
		last = cur;
	mu__dshrinkrep_t r;
	char why[200];
	int pr = mu__dshrinkrep_parse(last, &r, why, sizeof why);
	if (pr < 0)
		mu__dlog(d, 0, "hub %s %s/%s: annotation " MU__D_SHRINKREP " \"%.100s\" not read: "
			 "%s (the form: \"" MU__D_SHRINKREP_FORM "\"): answered again", mu__dkind_name(k),
			 hns ? hns : "default", hname ? hname : "?", last, why);
	bool mine = pr > 0 && r.gen == ig && r.to == to;
	int tries = mine ? r.tries : 0;
	if (mine && (strcmp(r.res, "refused") || tries >= MU__D_SHRINK_TRIES)) {
		if (cur && strcmp(cur, last)) /* the hub's lags, or a PATCH failed */
			report_ann(d, k, hns, hname, MU__D_SHRINKREP, cur, last);
		return; /* answered: the hub settles it */
	}
	if (mine && mu__dshrinkrep_waits(&r, mu__d_wall_ms()))
		return; /* a refusal's wait, kept across a restart (round 23) */
	const char *ns = mu__jstr(w, "metadata.namespace"), *name = mu__jstr(w, "metadata.name");
	int64_t par = mu__dkind_size(w, k); /* round 23: the kind's size */
	long st = 200;
	const char *how = "was";
	if (par <= 0 || par > to) {
		st = mu__dreclaim_patch(d, wk, k, w, ns, name, to);
		if (!st)
			return; /* no answer: the next pass asks again */
		how = st == 200 ? "done" : "refused";
		tries += st != 200;
		mu__dlog(d, st == 200 ? 1 : 0, "copy %s/%s: shrunk to %d pods for the hub: HTTP %ld%s",
			 ns, name, to, st, st == 200 ? "" : tries < MU__D_SHRINK_TRIES ?
			 " (asked again)" : " (given up)");
	}
	char val[160], at[48];
	mu__rfc3339_format(mu__d_wall_ms() * 1000, true, at, sizeof at);
	snprintf(val, sizeof val, "%s %d %s %d %ld %lld %s", gen, to, how, tries, st,
		 (long long)(st == 200 ? (par > 0 && par < to ? par : to) : par), at);
	json_object_set_new(shrinks, uid, json_string(val));
	report_ann(d, k, hns, hname, MU__D_SHRINKREP, cur, val);
}

/* The local copies of kind k: stale ones deleted (and reported), current
 * ones reported; marks in `have` the hub uids with a current copy. */
static void copies(agent_t *a, mu__dkind_t k, const json_t *assigned, const json_t *jl,
		   const json_t *pods, json_t *have)
{
	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(jl, "items"), i, w) {
		const char *uid = mu__dmeta(w, "labels", MU__D_HUBUID);
		const char *gen = mu__dmeta(w, "annotations", MU__D_GEN);
		const char *key = mu__dmeta(w, "annotations", MU__D_HUBJOB);
		const char *ns = mu__jstr(w, "metadata.namespace"), *name = mu__jstr(w, "metadata.name");
		const json_t *hub = uid ? json_object_get(assigned, uid) : NULL;
		const char *hgen = mu__dmeta(hub, "annotations", MU__D_GEN);
		if (!uid || !gen || !ns || !name)
			continue;
		char val[160];
		if (!hub || !hgen || strcmp(gen, hgen)) {
			if (mu__jget(w, "metadata.deletionTimestamp"))
				continue;
			char path[1024];
			mu__dkind_path(k, ns, name, "?propagationPolicy=Background", path, sizeof path);
			long st = mu__dreq(&a->d, a->w, "DELETE", path, NULL, NULL, NULL);
			mu__dlog(&a->d, 1, "stale copy %s %s/%s (generation %s) deleted: HTTP %ld",
				 mu__dkind_name(k), ns, name, gen, st);
			/* the copy's hub key: "NS/NAME", or "KIND:NS/NAME" */
			const char *hk = key && strchr(key, ':') ? strchr(key, ':') + 1 : key;
			const char *slash = hk ? strchr(hk, '/') : NULL;
			if ((st == 200 || st == 202 || st == 404) && slash) {
				char hns[300];
				snprintf(hns, sizeof hns, "%.*s", (int)(slash - hk), hk);
				snprintf(val, sizeof val, "%s Deleted -", gen);
				report(a, k, hns, slash + 1, NULL, val);
			}
			continue;
		}
		json_object_set_new(have, uid, json_true());
		/* the hub ended it NotAdmitted (its pods refused here): its
		 * copy goes, as push mode deletes it */
		const char *hph = mu__dmeta(hub, "annotations", MU__D_PHASE);
		if (hph && !strcmp(hph, "NotAdmitted")) {
			if (!mu__jget(w, "metadata.deletionTimestamp")) {
				char path[1024];
				mu__dkind_path(k, ns, name, "?propagationPolicy=Background", path,
					       sizeof path);
				long st = mu__dreq(&a->d, a->w, "DELETE", path, NULL, NULL, NULL);
				mu__dlog(&a->d, 1, "copy %s %s/%s of a job not admitted deleted: HTTP %ld",
					 mu__dkind_name(k), ns, name, st);
			}
			continue;
		}
		char line[96];
		bool started = mu__dpods_line(pods, uid, (uint32_t)atol(gen), line, sizeof line);
		const char *done = k == MU__DK_JOB ? mu__dcopy_done(w) : mu__dkind_done(w, k);
		if (mu__dkind_is_group(k)) { /* a group ends with its pods here */
			int64_t c[5];
			mu__dpods_of(pods, uid, (uint32_t)atol(gen), c);
			done = mu__dkind_group_end(c[2], c[3], c[4]);
		}
		snprintf(val, sizeof val, "%s %s %s", gen, done ? done : started ? "Running" : "Pending",
			 line);
		report(a, k, mu__jstr(hub, "metadata.namespace"), mu__jstr(hub, "metadata.name"),
		       mu__dmeta(hub, "annotations", MU__D_AGENT), val);
		copy_status(a, k, hub, w, gen);
		if (mu__dkind_shrinks(w, k) && !done)
			mu__dagent_shrink(&a->d, a->w, a->shrinks, k, hub, w, gen);
		if (k == MU__DK_JOB && !started && !done)
			copy_failed(a, hub, w, gen);
	}
}

/* The copy of hub object hub (kind k, generation gen) is not made because
 * the worker refuses the copy of a DRA object its pods name (msg): said
 * once per generation in MU__D_COPYREFUSED ("GEN msg") with a status "GEN
 * Pending" and no pod, so that the hub ends it NotAdmitted at once
 * (failcreate.c, round 17; MU__D_COPYFAIL until then, which waited for
 * --start-timeout).  Two PATCHes at most. */
static void dra_refused(agent_t *a, mu__dkind_t k, const json_t *hub, const char *uid,
			const char *gen, const char *msg)
{
	const char *was = json_string_value(json_object_get(a->drefused, uid));
	if (was && !strcmp(was, gen))
		return;
	json_object_set_new(a->drefused, uid, json_string(gen));
	const char *ns = mu__jstr(hub, "metadata.namespace"), *name = mu__jstr(hub, "metadata.name");
	mu__dlog(&a->d, 0, "copy of %s %s/%s not made: %s", mu__dkind_name(k), ns ? ns : "default",
		 name ? name : "?", msg);
	char val[900], line[96];
	snprintf(val, sizeof val, "%s %.800s", gen, msg);
	report_ann(&a->d, k, ns ? ns : "default", name, MU__D_COPYREFUSED,
		   mu__dmeta(hub, "annotations", MU__D_COPYREFUSED), val);
	json_t *none = json_object();
	mu__dpods_line(none, uid, (uint32_t)atol(gen), line, sizeof line);
	json_decref(none);
	snprintf(val, sizeof val, "%s Pending %s", gen, line);
	report(a, k, ns ? ns : "default", name, mu__dmeta(hub, "annotations", MU__D_AGENT), val);
}

/* Creates the copies of kind k of the current dispatches that have none. */
static void create_missing(agent_t *a, mu__dkind_t k, const json_t *assigned, const json_t *have)
{
	const char *uid;
	json_t *hub;
	json_object_foreach((json_t *)assigned, uid, hub) {
		const char *ph = mu__dmeta(hub, "annotations", MU__D_PHASE);
		const char *gen = mu__dmeta(hub, "annotations", MU__D_GEN);
		if (json_object_get(have, uid) || !gen ||
		    (ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed") ||
			    !strcmp(ph, "NotAdmitted"))))
			continue;
		const char *ns = mu__jstr(hub, "metadata.namespace");
		char key[700], path[600];
		/* a fresh read first: the watch may lag a withdrawal, which the
		 * hub confirms two heartbeats after it took the label off; a
		 * create only after this pass saw the label keeps that true */
		json_t *cur = NULL;
		mu__dkind_path(k, ns ? ns : "default", mu__jstr(hub, "metadata.name"), "", path,
			       sizeof path);
		long gst = mu__dreq(&a->d, a->d.hub, "GET", path, NULL, NULL, &cur);
		const char *cl = mu__dmeta(cur, "labels", MU__D_CLUSTER);
		const char *cg = mu__dmeta(cur, "annotations", MU__D_GEN);
		bool still = gst == 200 && cl && !strcmp(cl, a->o->cluster) && cg && !strcmp(cg, gen) &&
			     mu__jstr(cur, "metadata.uid") && !strcmp(mu__jstr(cur, "metadata.uid"), uid);
		json_decref(cur);
		if (!still)
			continue;
		if (k == MU__DK_JOB)
			snprintf(key, sizeof key, "%s/%s", ns ? ns : "default", mu__jstr(hub, "metadata.name"));
		else
			snprintf(key, sizeof key, "%s:%s/%s", mu__dkind_name(k), ns ? ns : "default",
				 mu__jstr(hub, "metadata.name"));
		const char *rg = json_string_value(json_object_get(a->drefused, uid));
		if (rg && !strcmp(rg, gen))
			continue; /* refused here (dra_refused): not tried again */
		json_t *body = mu__dcopy(hub, k, uid, key, (uint32_t)atol(gen));
		/* the DRA objects its pods name first, copied from the hub
		 * (hdra.c; nothing for a job without claims) */
		char dm[800];
		int dr = mu__dhdra_agent_copy(&a->d, a->w, a->o->cluster, k, hub, body, false, dm,
					      sizeof dm);
		if (dr) {
			if (dr < 0)
				dra_refused(a, k, hub, uid, gen, dm);
			else
				mu__dlog(&a->d, 0, "create %s: not yet: %s", key, dm);
			json_decref(body);
			continue;
		}
		mu__dkind_path(k, ns ? ns : "default", NULL, "", path, sizeof path);
		long st = mu__dreq(&a->d, a->w, "POST", path, NULL, body, NULL);
		if (st == 404) {
			json_t *nso = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind",
						"Namespace", "metadata", "name", ns ? ns : "default");
			mu__dreq(&a->d, a->w, "POST", "/api/v1/namespaces", NULL, nso, NULL);
			json_decref(nso);
			st = mu__dreq(&a->d, a->w, "POST", path, NULL, body, NULL);
		}
		json_decref(body);
		if (st != 201 && st != 200 && st != 409)
			mu__dlog(&a->d, 0, "create %s: HTTP %ld", key, st);
	}
}

/* Round 21: whether hub pod p of a group (key "UID/GEN/POD") is held
 * here: refused (pod_refused) and unchanged since (its resourceVersion);
 * a changed one's entry is dropped, so that it is tried again.  Round 22:
 * a change of a hub object its claims name counts too: the hub records
 * the resourceVersions of those objects with its hold (MU__D_HELD, hrec:
 * the group's, parsed; NULL: none), moves them when one changes (hdra.c's
 * held_release), and the entry keeps those it first saw ("orv"); when the
 * hub's differ, it is dropped and tried again.  Round 23: not while one
 * of them is deleted on the hub ("" in the record): held until it is
 * made again, a new version, so that a delete and a create are one
 * change (one try), with no pass where it is tried with nothing to copy
 * and unheld.  O(its keys). */
static bool pod_held(agent_t *a, const char *key, const json_t *p, const json_t *hrec)
{
	json_t *e = json_object_get(a->pheld, key);
	const char *rv = mu__jstr(p, "metadata.resourceVersion");
	const char *erv = json_string_value(json_object_get(e, "rv"));
	if (!e)
		return false;
	if (!rv || !erv || strcmp(rv, erv)) {
		json_object_del(a->pheld, key);
		return false;
	}
	const json_t *h = json_object_get(hrec, json_string_value(json_object_get(e, "name")));
	const json_t *horv = json_object_get(h, "orv"), *eorv = json_object_get(e, "orv");
	const char *hrv = json_string_value(json_object_get(h, "rv"));
	if (!json_is_object(horv) || !hrv || strcmp(hrv, rv))
		return true; /* the hub holds it not yet, or holds the pod as it was */
	if (!eorv) { /* the hub's first record of its hold */
		json_object_set_new(e, "orv", json_deep_copy(horv));
		return true;
	}
	if (mu__dhdra_orv_moved(eorv, horv) <= 0)
		return true; /* the same, or (round 23) one deleted on the hub: held */
	mu__dlog(&a->d, 1, "pod %s/%s of %s: an object its claims name changed on the hub: "
		 "tried again", json_string_value(json_object_get(e, "ns")),
		 json_string_value(json_object_get(e, "name")), json_string_value(json_object_get(e, "uid")));
	json_object_del(a->pheld, key);
	return false;
}

/* Round 22: after a restart (pheld empty), the held pods of group hub
 * (kind k, uid, generation gen; hl its namespace's hub pods) read back
 * from this agent's own entries on it (MU__D_PODSREFUSED, pods_report's),
 * once per group and generation, so that none is tried (nor its refusal
 * logged) again: an entry of this generation whose hub pod is unchanged
 * (its resourceVersion) is held again, with the hub objects' versions it
 * had seen ("orv"), unless it was refused for a worker object of its
 * copy's name ("seen") that the worker's watches no longer show (gone
 * while the agent was down: tried now).  false while that cannot be told
 * (the template and claim watches not listed yet): the group's pods wait
 * this pass.  O(1) once read, else O(entries x the group's hub pods). */
static bool pods_restore(agent_t *a, mu__dkind_t k, const json_t *hub, const char *uid,
			 const char *gen, const json_t *hl)
{
	char gk[300];
	snprintf(gk, sizeof gk, "%s/%s", uid, gen);
	if (json_object_get(a->prestored, gk))
		return true;
	const char *t = mu__dmeta(hub, "annotations", MU__D_PODSREFUSED);
	json_t *v = t ? json_loads(t, 0, NULL) : NULL;
	mu_kube_watch_t *w[2] = {a->wdtpl, a->wdra[MU__DDRA_CLAIMS]};
	uint64_t seq = 0;
	if (json_object_size(v) && a->dra_on == 1)
		for (int r = 0; r < 2; r++)
			if (!w[r] || !mu_kube_watch_items(w[r], NULL, &seq)) {
				json_decref(v);
				return false;
			}
	const char *name;
	json_t *e;
	json_object_foreach(v, name, e) {
		size_t i;
		json_t *p, *pod = NULL;
		json_array_foreach(json_object_get(hl, "items"), i, p)
			if (mu__jstr(p, "metadata.name") && !strcmp(mu__jstr(p, "metadata.name"), name))
				pod = p;
		const char *rv = mu__jstr(pod, "metadata.resourceVersion");
		const char *erv = json_string_value(json_object_get(e, "rv"));
		if (a->dra_on != 1 || !rv || !erv || strcmp(rv, erv) ||
		    json_integer_value(json_object_get(e, "gen")) != (json_int_t)atol(gen))
			continue; /* changed since, or of another dispatch: tried */
		const char *ns = mu__jstr(pod, "metadata.namespace");
		json_t *keys = mu__dhdra_pod_keys(NULL, pod);
		bool seen = mu__dhdra_conflict(w, uid, (uint32_t)atol(gen), ns ? ns : "default", keys);
		if (json_is_true(json_object_get(e, "seen")) && !seen) {
			json_decref(keys);
			continue; /* its worker object gone meanwhile: tried */
		}
		char key[700];
		snprintf(key, sizeof key, "%s/%s", gk, name);
		json_object_set_new(a->pheld, key, json_pack("{s:i,s:s,s:I,s:s,s:s,s:O,s:s,s:o,s:b,s:O?}",
							     "kind", (int)k, "uid", uid, "gen",
							     (json_int_t)atol(gen), "name", name, "rv",
							     rv, "msg", json_object_get(e, "msg"),
							     "ns", ns ? ns : "default", "keys", keys,
							     "seen", seen, "orv",
							     json_object_get(e, "orv")));
		a->pheld_seq[0] = a->pheld_seq[1] = 0; /* looked at by the next pass */
		mu__dlog(&a->d, 1, "pod %s/%s of %s: held as before the restart", ns ? ns : "default",
			 name, uid);
	}
	json_decref(v);
	json_object_set_new(a->prestored, gk, json_integer((json_int_t)k));
	return true;
}

/* Round 21: hub pod p of group (k, uid, gen) not created: the worker
 * refuses the copy of an object its claims name (msg).  Held here (the
 * hub told so by pods_report), and "seen" when the worker's watches show
 * an object of a copy's name that is not this dispatch's (mu__dhdra_conflict),
 * whose going drops it (pods_release).  O(its claims). */
static void pod_refused(agent_t *a, mu__dkind_t k, const char *uid, const char *gen,
			const json_t *p, const char *msg)
{
	const char *ns = mu__jstr(p, "metadata.namespace"), *name = mu__jstr(p, "metadata.name");
	char key[700];
	snprintf(key, sizeof key, "%s/%s/%s", uid, gen, name ? name : "");
	json_t *keys = mu__dhdra_pod_keys(NULL, p);
	mu_kube_watch_t *w[2] = {a->wdtpl, a->wdra[MU__DDRA_CLAIMS]};
	bool seen = mu__dhdra_conflict(w, uid, (uint32_t)atol(gen), ns ? ns : "default", keys);
	json_object_set_new(a->pheld, key, json_pack("{s:i,s:s,s:I,s:s,s:s?,s:s,s:s,s:o,s:b}",
						     "kind", (int)k, "uid", uid, "gen",
						     (json_int_t)atol(gen), "name", name ? name : "",
						     "rv", mu__jstr(p, "metadata.resourceVersion"),
						     "msg", msg, "ns", ns ? ns : "default", "keys",
						     keys, "seen", seen));
	a->pheld_seq[0] = a->pheld_seq[1] = 0; /* looked at by the next pass */
	mu__dlog(&a->d, 0, "pod %s/%s of %s %s not created (held): %s", ns ? ns : "default",
		 name ? name : "?", mu__dkind_name(k), uid, msg);
}

/* Round 21: a's held pods of kind k whose group is no longer a current
 * dispatch here (assigned: hub uid -> hub object) forgotten, and (round
 * 22) the groups whose holds were read back.  O(held + read back). */
static void pods_held_current(agent_t *a, mu__dkind_t k, const json_t *assigned)
{
	const char *key;
	json_t *e, *tmp;
	json_object_foreach_safe(a->pheld, tmp, key, e) {
		const char *uid = json_string_value(json_object_get(e, "uid"));
		const char *g = mu__dmeta(json_object_get(assigned, uid ? uid : ""), "annotations",
					  MU__D_GEN);
		if (json_integer_value(json_object_get(e, "kind")) == (json_int_t)k &&
		    (!g || atol(g) != (long)json_integer_value(json_object_get(e, "gen"))))
			json_object_del(a->pheld, key);
	}
	json_object_foreach_safe(a->prestored, tmp, key, e) { /* round 22: "UID/GEN" */
		char u[300];
		size_t n = strcspn(key, "/");
		snprintf(u, sizeof u, "%.*s", (int)n, key);
		const char *g = mu__dmeta(json_object_get(assigned, u), "annotations", MU__D_GEN);
		if (json_integer_value(e) == (json_int_t)k && (!g || !key[n] || strcmp(g, key + n + 1)))
			json_object_del(a->prestored, key);
	}
}

/* Round 21: the held pods of group hub (kind k, uid, generation gen) told
 * to it in MU__D_PODSREFUSED ({POD: {gen, rv, msg}}; null, which removes
 * it, when none), when that differs from what it has.  O(1) when none is
 * held here and the group has none, else O(held pods); one PATCH at most. */
static void pods_report(agent_t *a, mu__dkind_t k, const json_t *hub, const char *uid,
			const char *gen)
{
	const char *cur = mu__dmeta(hub, "annotations", MU__D_PODSREFUSED);
	if (!cur && !json_object_size(a->pheld))
		return; /* the common case, every group every pass: nothing to tell */
	json_t *m = json_object();
	const char *key;
	json_t *e;
	json_object_foreach(a->pheld, key, e)
		if (!strcmp(json_string_value(json_object_get(e, "uid")), uid) &&
		    json_integer_value(json_object_get(e, "gen")) == (json_int_t)atol(gen))
			json_object_set_new(m, json_string_value(json_object_get(e, "name")),
					    json_pack("{s:O,s:O?,s:O,s:O?,s:O?}", "gen",
						      json_object_get(e, "gen"), "rv",
						      json_object_get(e, "rv"), "msg",
						      json_object_get(e, "msg"), "seen",
						      json_object_get(e, "seen"), "orv",
						      json_object_get(e, "orv")));
	json_t *was = cur ? json_loads(cur, 0, NULL) : NULL;
	char *t = json_object_size(m) ? json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	if (t ? !json_equal(was, m) : cur != NULL) {
		const char *ns = mu__jstr(hub, "metadata.namespace");
		char path[1024];
		mu__dkind_path(k, ns ? ns : "default", mu__jstr(hub, "metadata.name"), "", path,
			       sizeof path);
		json_t *b = json_pack("{s:{s:{s:o}}}", "metadata", "annotations", MU__D_PODSREFUSED,
				      t ? json_string(t) : json_null());
		long st = mu__dreq(&a->d, a->d.hub, "PATCH", path, "application/merge-patch+json", b,
				   NULL);
		json_decref(b);
		if (st != 200 && st != 404)
			mu__dlog(&a->d, 0, "hub %s %s: pods refused: HTTP %ld", mu__dkind_name(k),
				 mu__jstr(hub, "metadata.name"), st);
	}
	free(t);
	json_decref(was);
	json_decref(m);
}

/* Round 21: when the worker's template or claim watch moved, each held
 * pod looked at: "seen" while an object of one of its copies' names is
 * there that is not its dispatch's, dropped once a pod so seen has none
 * (the user's object deleted), so that this pass creates it.  A pod
 * refused otherwise (a 4xx: never seen) stays held until its hub pod
 * changes.  O(1) when neither moved, else O(held pods x their keys). */
static void pods_release(agent_t *a)
{
	mu_kube_watch_t *w[2] = {a->wdtpl, a->wdra[MU__DDRA_CLAIMS]};
	uint64_t seq[2] = {0, 0};
	if (!json_object_size(a->pheld))
		return;
	for (int r = 0; r < 2; r++)
		if (!w[r] || !mu_kube_watch_items(w[r], NULL, &seq[r]))
			return; /* not listed yet: as it was */
	if (seq[0] == a->pheld_seq[0] && seq[1] == a->pheld_seq[1])
		return;
	a->pheld_seq[0] = seq[0];
	a->pheld_seq[1] = seq[1];
	const char *key;
	json_t *e, *tmp;
	json_object_foreach_safe(a->pheld, tmp, key, e) {
		const char *uid = json_string_value(json_object_get(e, "uid"));
		uint32_t gen = (uint32_t)json_integer_value(json_object_get(e, "gen"));
		if (mu__dhdra_conflict(w, uid, gen, json_string_value(json_object_get(e, "ns")),
				       json_object_get(e, "keys"))) {
			json_object_set_new(e, "seen", json_true());
			continue;
		}
		if (!json_is_true(json_object_get(e, "seen")))
			continue;
		mu__dlog(&a->d, 1, "pod %s/%s of %s: the object of its copy's name is gone: "
			 "created again", json_string_value(json_object_get(e, "ns")),
			 json_string_value(json_object_get(e, "name")), uid);
		json_object_del(a->pheld, key);
	}
}

/* Group kind k's pods: the hub pods of each current dispatch that are not
 * here yet (pl: the local pods labelled with a hub uid) are created, as
 * push mode sends them (those that come to the hub late too); local pod
 * copies of a group of kind k that is not a current dispatch here are
 * deleted.  One GET of the hub's pods per namespace with such a group. */
static void group_pods_sync(agent_t *a, mu__dkind_t k, const json_t *assigned, const json_t *pl)
{
	json_t *local = json_object(), *hubpods = json_object();
	size_t i;
	json_t *p;
	size_t kl = strlen(mu__dkind_name(k));
	pods_held_current(a, k, assigned);
	json_array_foreach(json_object_get(pl, "items"), i, p) {
		const char *uid = mu__dmeta(p, "labels", MU__D_HUBUID);
		const char *gen = mu__dmeta(p, "labels", MU__D_GEN);
		const char *hj = mu__dmeta(p, "annotations", MU__D_HUBJOB);
		const char *ns = mu__jstr(p, "metadata.namespace"), *name = mu__jstr(p, "metadata.name");
		if (!uid || !gen || !hj || !ns || !name || strncmp(hj, mu__dkind_name(k), kl) ||
		    hj[kl] != ':')
			continue;
		const json_t *hub = json_object_get(assigned, uid);
		const char *hgen = mu__dmeta(hub, "annotations", MU__D_GEN);
		char key[700];
		snprintf(key, sizeof key, "%s/%s/%s", uid, gen, name);
		json_object_set_new(local, key, json_true());
		if ((!hub || !hgen || strcmp(gen, hgen)) && !mu__jget(p, "metadata.deletionTimestamp")) {
			char path[1024];
			snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", ns, name);
			long st = mu__dreq(&a->d, a->w, "DELETE", path, NULL, NULL, NULL);
			mu__dlog(&a->d, 1, "stale pod %s/%s of %s deleted: HTTP %ld", ns, name, hj, st);
		}
	}
	const char *uid;
	json_t *hub;
	json_object_foreach((json_t *)assigned, uid, hub) {
		const char *gen = mu__dmeta(hub, "annotations", MU__D_GEN);
		const char *ph = mu__dmeta(hub, "annotations", MU__D_PHASE);
		const char *ns = mu__jstr(hub, "metadata.namespace");
		const char *gname = mu__jstr(hub, "metadata.name");
		if (!gen || !gname || (ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"))))
			continue;
		if (!ns)
			ns = "default";
		json_t *hl = json_object_get(hubpods, ns);
		if (!hl) {
			char path[600];
			snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", ns);
			hl = NULL;
			if (mu__dreq(&a->d, a->d.hub, "GET", path, NULL, NULL, &hl) != 200) {
				json_decref(hl);
				hl = json_object();
			}
			json_object_set_new(hubpods, ns, hl);
		}
		char gkey[700];
		snprintf(gkey, sizeof gkey, "%s:%s/%s", mu__dkind_name(k), ns, gname);
		if (!pods_restore(a, k, hub, uid, gen, hl))
			continue; /* round 22: its held pods not known yet */
		const char *ht = json_object_size(a->pheld) ? mu__dmeta(hub, "annotations", MU__D_HELD) :
			NULL;
		json_t *hrec = ht ? json_loads(ht, 0, NULL) : NULL;
		json_array_foreach(json_object_get(hl, "items"), i, p) {
			const char *g = mu__dkind_pod_group(p, k), *name = mu__jstr(p, "metadata.name");
			char key[700];
			if (!g || strcmp(g, gname) || !name || mu__jget(p, "metadata.deletionTimestamp"))
				continue;
			snprintf(key, sizeof key, "%s/%s/%s", uid, gen, name);
			if (json_object_get(local, key) || pod_held(a, key, p, hrec))
				continue;
			json_t *body = mu__dkind_pod_copy(p, uid, gkey, (uint32_t)atol(gen));
			char dm[800];
			int dr = mu__dhdra_agent_copy(&a->d, a->w, a->o->cluster, k, hub, body, true, dm,
						      sizeof dm);
			if (dr) { /* its claims' objects first (hdra.c) */
				if (dr < 0) /* round 21: that pod held, not the group */
					pod_refused(a, k, uid, gen, p, dm);
				else
					mu__dlog(&a->d, 0, "create pod %s/%s of %s: not yet: %s", ns, name,
						 gkey, dm);
				json_decref(body);
				continue;
			}
			char path[600];
			snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", ns);
			long st = mu__dreq(&a->d, a->w, "POST", path, NULL, body, NULL);
			json_decref(body);
			if (st != 201 && st != 200 && st != 409)
				mu__dlog(&a->d, 0, "create pod %s/%s of %s: HTTP %ld", ns, name, gkey, st);
		}
		json_decref(hrec);
		pods_report(a, k, hub, uid, gen);
	}
	json_decref(local);
	json_decref(hubpods);
}

/* The worker's Nodes, what its pods beside the copies take on each (ul:
 * their list), and a heartbeat to the hub's ConfigMap. */
static void heartbeat(agent_t *a, const json_t *nl, const json_t *ul, const json_t *pl)
{
	/* each copy's disruption allowance, by hub uid (pdbs.c): none while
	 * the worker has no budget, or the watch does not answer (403), or
	 * without --budgets (no watch) */
	json_t *bl = NULL, *al = NULL;
	if (a->wpdbs && mu_kube_watch_items(a->wpdbs, &bl, NULL))
		al = mu__dpdb_allowances(json_object_get(bl, "items"), json_object_get(pl, "items"));
	json_decref(bl);
	char *pdbs = al ? json_dumps(al, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(al);
	json_t *usedm = mu__dpods_used(ul);
	char *used = json_dumps(usedm, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(usedm);
	json_t *items = json_array();
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(nl, "items"), i, n)
		json_array_append_new(items, mu__dnode_min(n));
	json_t *wrap = json_pack("{s:o}", "items", items);
	char *text = json_dumps(wrap, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(wrap);
	char beat[24], path[600];
	snprintf(beat, sizeof beat, "%llu", (unsigned long long)++a->beat);
	char kinds[200] = "";
	for (int k = 1; k < MU__DK_COUNT; k++)
		if (a->served[k])
			snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s",
				 *kinds ? "," : "", mu__dkind_name((mu__dkind_t)k));
	json_t *cm = json_pack("{s:s,s:s,s:{s:s+,s:s},s:{s:s,s:s,s:s,s:s,s:s}}", "apiVersion", "v1",
			       "kind", "ConfigMap", "metadata", "name", "muster-cluster-",
			       a->o->cluster, "namespace", MU__D_NS, "data", "nodes", text ? text : "{}",
			       "beat", beat, "kinds", kinds, "used", used ? used : "{}", "pdbs",
			       pdbs ? pdbs : "{}");
	/* without --budgets no data.pdbs (null: merge patch removes one an
	 * earlier run left), which tells a reclaiming hub they are unread */
	if (cm && !a->o->budgets)
		json_object_set_new(json_object_get(cm, "data"), "pdbs", json_null());
	/* the DRA report only when the hub does not have it yet (null: the
	 * worker serves none, and one an earlier run left goes) */
	bool dra = cm && !a->dra_sent;
	if (dra)
		json_object_set_new(json_object_get(cm, "data"), "dra",
				    a->dra_text ? json_string(a->dra_text) : json_null());
	free(text);
	free(used);
	free(pdbs);
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps/muster-cluster-%s", MU__D_NS,
		 a->o->cluster);
	long st = mu__dreq(&a->d, a->d.hub, "PATCH", path, "application/merge-patch+json", cm, NULL);
	if (st == 404) {
		snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", MU__D_NS);
		if (!a->o->budgets) /* created: nothing to remove */
			json_object_del(json_object_get(cm, "data"), "pdbs");
		if (!a->dra_text) {
			json_object_del(json_object_get(cm, "data"), "dra");
		} else if (!dra) { /* a new ConfigMap holds the report too */
			json_object_set_new(json_object_get(cm, "data"), "dra",
					    json_string(a->dra_text));
		}
		st = mu__dreq(&a->d, a->d.hub, "POST", path, NULL, cm, NULL);
	}
	if (st != 200 && st != 201)
		mu__dlog(&a->d, 0, "heartbeat: HTTP %ld", st);
	else if (dra)
		a->dra_sent = true;
	json_decref(cm);
}

/* Kind k's part of a pass: its hub objects assigned here and its local
 * copies listed, stale copies deleted, missing ones created, all
 * reported.  false when the hub or the worker did not answer a Job
 * list; a kind other than Job that either does not list (404: no CRD) is
 * skipped for a minute (a.served says whether the worker has it). */
static bool agent_kind(agent_t *a, mu__dkind_t k, const json_t *pods, const json_t *pl)
{
	/* the watches' snapshots: no request.  A kind either side does not
	 * serve (no CRD, no right) fails its watches, which retry with
	 * backoff: its copies are left alone meanwhile. */
	json_t *hl = NULL, *jl = NULL;
	bool wok = a->wcopies[k] && mu_kube_watch_items(a->wcopies[k], &jl, NULL);
	bool hok = wok && a->whub[k] && mu_kube_watch_items(a->whub[k], &hl, NULL);
	long wst = wok ? 200 : 0, hst = hok ? 200 : 0;
	a->served[k] = wok;
	a->listed[k] = wok && hok;
	bool ok = k != MU__DK_JOB || (wok && hok);
	if (wst == 200 && hst == 200) {
		json_t *assigned = json_object(), *have = json_object();
		size_t i;
		json_t *h;
		json_array_foreach(json_object_get(hl, "items"), i, h)
			if (mu__jstr(h, "metadata.uid")) {
				json_object_set(assigned, mu__jstr(h, "metadata.uid"), h);
				const char *g = mu__dmeta(h, "annotations", MU__D_GEN);
				if (g && a->all) /* for the sweep of copied DRA objects */
					json_object_set_new(a->all, mu__jstr(h, "metadata.uid"),
							    json_string(g));
			}
		copies(a, k, assigned, jl, pods, have);
		create_missing(a, k, assigned, have);
		if (mu__dkind_is_group(k))
			group_pods_sync(a, k, assigned, pl);
		json_decref(assigned);
		json_decref(have);
	}
	json_decref(hl);
	json_decref(jl);
	return ok;
}

/* --- DRA (round 16) --------------------------------------------------------- */

/* Stops a's DRA watches (safe on what is not set); the report becomes
 * none.  O(1). */
static void dra_stop(agent_t *a)
{
	for (int k = 0; k < MU__DDRA_N; k++)
		mu_kube_watch_signal(a->wdra[k]);
	mu_kube_watch_signal(a->wdtpl);
	for (int k = 0; k < MU__DDRA_N; k++) {
		mu_kube_watch_stop(a->wdra[k]);
		a->wdra[k] = NULL;
		a->dra_seq[k] = 0;
	}
	mu_kube_watch_stop(a->wdtpl);
	a->wdtpl = NULL;
	a->sweep_seq[0] = a->sweep_seq[1] = 0;
	if (a->dra_text) {
		free(a->dra_text);
		a->dra_text = NULL;
		a->dra_sent = false;
	}
}

/* Asks the worker whether it serves the DRA kinds (when its kinds are
 * asked: a minute, or a probe that saw a change) and starts or stops
 * their watches.  One request. */
static void dra_discover(agent_t *a)
{
	int on = mu__ddra_serves(&a->d, a->w);
	if (on < 0)
		return; /* no answer: as it was */
	if (on != a->dra_on)
		mu__dlog(&a->d, 1, "worker %s DRA (%s)", on ? "serves" : "does not serve",
			 MU__DDRA_API);
	a->dra_on = (int8_t)on;
	if (!on) {
		dra_stop(a);
		return;
	}
	static const char *const PL[MU__DDRA_N] = {"resourceslices", "deviceclasses",
						   "resourceclaims"};
	for (int k = 0; k < MU__DDRA_N; k++) {
		char path[128];
		snprintf(path, sizeof path, "/apis/%s/%s", MU__DDRA_API, PL[k]);
		if (!a->wdra[k] && mu_kube_watch_start(a->o->worker, path, NULL, &a->wdra[k]) != MU_OK)
			a->wdra[k] = NULL; /* out of memory: at the next discovery */
	}
	/* all its templates (round 21): a user's, which holds a copy's
	 * name, has no label (pods_release); the sweep takes labelled ones */
	if (!a->wdtpl && mu_kube_watch_start(a->o->worker, "/apis/" MU__DDRA_API
					     "/resourceclaimtemplates", NULL, &a->wdtpl) != MU_OK)
		a->wdtpl = NULL;
}

/* The DRA report built again when a watch moved and a second passed
 * since the last (the heartbeat sends it when it changed).  O(1) when
 * nothing moved, else O(objects). */
static void dra_build(agent_t *a)
{
	uint64_t seq[MU__DDRA_N];
	bool moved = false;
	for (int k = 0; k < MU__DDRA_N; k++) {
		if (!a->wdra[k] || !mu_kube_watch_items(a->wdra[k], NULL, &seq[k]))
			return; /* not listed yet, or failing: as it was */
		moved |= seq[k] != a->dra_seq[k];
	}
	int64_t t = mu__d_mono_ms();
	if (!moved || (a->dra_at && t - a->dra_at < 1000))
		return;
	json_t *l[MU__DDRA_N] = {NULL};
	bool ok = true;
	for (int k = 0; k < MU__DDRA_N; k++)
		ok = ok && mu_kube_watch_items(a->wdra[k], &l[k], &seq[k]);
	char *text = ok ? mu__ddra_report((const json_t *const *)l, MU__DDRA_REPORT_MAX) : NULL;
	for (int k = 0; k < MU__DDRA_N; k++)
		json_decref(l[k]);
	if (!text)
		return;
	a->dra_at = t;
	memcpy(a->dra_seq, seq, sizeof seq);
	if (a->dra_text && !strcmp(a->dra_text, text)) {
		free(text);
		return;
	}
	free(a->dra_text);
	a->dra_text = text;
	a->dra_sent = false;
}

/* The worker's copied templates and claims whose dispatch is not
 * current deleted (hdra.c), when their watches or the current dispatches
 * (a->all) changed since the last sweep.  O(1) then, else O(objects). */
static void dra_sweep(agent_t *a)
{
	uint64_t seq[2];
	mu_kube_watch_t *w[2] = {a->wdtpl, a->wdra[MU__DDRA_CLAIMS]};
	for (int r = 0; r < 2; r++)
		if (!w[r] || !mu_kube_watch_items(w[r], NULL, &seq[r]))
			return;
	if (seq[0] == a->sweep_seq[0] && seq[1] == a->sweep_seq[1] && a->sweep_cur &&
	    json_equal(a->sweep_cur, a->all))
		return;
	json_t *l[2] = {NULL, NULL};
	if (mu_kube_watch_items(w[0], &l[0], &seq[0]) && mu_kube_watch_items(w[1], &l[1], &seq[1])) {
		/* a deleted object leaves the watch later, which moves it:
		 * looked at again then */
		mu__dhdra_agent_sweep(&a->d, a->w, (const json_t *const *)l, a->all, a->listed);
		json_decref(a->sweep_cur);
		a->sweep_cur = json_incref(a->all);
		a->sweep_seq[0] = seq[0];
		a->sweep_seq[1] = seq[1];
	}
	json_decref(l[0]);
	json_decref(l[1]);
}

/* Asks the worker (then the hub) which kinds it serves when due
 * (mu__dserved_due), and keeps the watches of each kind where it is
 * served: the worker's copies where the worker serves it, the hub's
 * objects where both do.  At most 2 x MU__DK_COUNT requests. */
static void agent_discover(agent_t *a)
{
	int64_t t = mu__d_mono_ms();
	int8_t on[MU__DK_COUNT];
	if (mu__dserved_refresh(&a->d, a->w, a->wserves, &a->wdisc_at, &a->wprobe_at, &a->wapis, t,
				 on)) {
		for (int k = 1; k < MU__DK_COUNT; k++)
			if (on[k] >= 0) /* no answer: asked again in a second */
				a->wserves[k] = on[k];
		a->hdisc_at = 0; /* the hub's side follows */
		dra_discover(a); /* resource.k8s.io, asked as often */
	}
	if (mu__dserved_refresh(&a->d, a->d.hub, a->hserves, &a->hdisc_at, &a->hprobe_at, &a->hapis, t,
				 on))
		for (int k = 1; k < MU__DK_COUNT; k++)
			if (on[k] >= 0)
				a->hserves[k] = on[k];
	const char *sel = MU__D_COPY_SEL;
	char hsel[400];
	snprintf(hsel, sizeof hsel, "labelSelector=muster.io%%2Fcluster%%3D%s", a->o->cluster);
	mu__dserved_watch(a->o->worker, sel, a->wserves, a->wcopies, NULL);
	for (int k = 1; k < MU__DK_COUNT; k++)
		on[k] = a->wserves[k] == 0 || a->hserves[k] == 0 ? 0 :
			a->wserves[k] == 1 && a->hserves[k] == 1 ? 1 : -1;
	mu__dserved_watch(a->o->hub, hsel, on, a->whub, NULL);
}

/* One pass; false when the hub or the worker did not answer. */
static bool agent_pass(agent_t *a)
{
	agent_discover(a);
	json_t *nl = NULL, *pl = NULL, *ul = NULL;
	bool ok = mu_kube_watch_items(a->wnodes, &nl, NULL) && mu_kube_watch_items(a->wpods, &pl, NULL) &&
		  mu_kube_watch_items(a->wused, &ul, NULL);
	if (ok) {
		/* an agent without the right to watch Events reports none */
		mu__dfails_read(a->wfail, &a->fail_seq, &a->fails);
		json_t *pods = mu__dpods_count(pl);
		json_decref(a->all);
		a->all = json_object();
		memset(a->listed, 0, sizeof a->listed);
		if (a->dra_on == 1)
			pods_release(a); /* round 21: before the pods are created */
		for (int k = 0; ok && k < MU__DK_COUNT; k++)
			ok = agent_kind(a, (mu__dkind_t)k, pods, pl);
		json_decref(pods);
		if (ok && a->dra_on == 1) {
			dra_sweep(a);
			dra_build(a);
		}
		if (ok)
			heartbeat(a, nl, ul, pl);
	}
	json_decref(ul);
	json_decref(nl);
	json_decref(pl);
	return ok;
}

/* Stops a's watches and frees its clients (safe on what is not set). */
static void agent_stop(agent_t *a)
{
	/* all signalled first: their threads end together */
	mu_kube_watch_signal(a->wnodes);
	mu_kube_watch_signal(a->wpods);
	mu_kube_watch_signal(a->wused);
	mu_kube_watch_signal(a->wfail);
	mu_kube_watch_signal(a->wpdbs);
	for (int k = 0; k < MU__DK_COUNT; k++) {
		mu_kube_watch_signal(a->wcopies[k]);
		mu_kube_watch_signal(a->whub[k]);
	}
	dra_stop(a);
	json_decref(a->all);
	json_decref(a->sweep_cur);
	json_decref(a->drefused);
	json_decref(a->pheld);
	json_decref(a->shrinks);
	json_decref(a->prestored);
	mu_kube_watch_stop(a->wnodes);
	mu_kube_watch_stop(a->wpods);
	mu_kube_watch_stop(a->wused);
	mu_kube_watch_stop(a->wfail);
	mu_kube_watch_stop(a->wpdbs);
	json_decref(a->fails);
	for (int k = 0; k < MU__DK_COUNT; k++) {
		mu_kube_watch_stop(a->wcopies[k]);
		mu_kube_watch_stop(a->whub[k]);
	}
	mu_kube_client_free(a->d.hub);
	mu_kube_client_free(a->w);
}

int mu_dispatch_agent_run(const mu_dispatch_agent_opts_t *o, char *err, size_t errlen)
{
	agent_t a;
	memset(&a, 0, sizeof a);
	a.o = o;
	mu_dispatch_opts_defaults(&a.dopts);
	a.dopts.quiet = o->quiet;
	a.dopts.request_timeout_ms = o->request_timeout_ms;
	a.d.o = &a.dopts;
	if (!o->cluster || !*o->cluster) {
		snprintf(err, errlen, "--cluster NAME is required");
		return MU_EINVAL;
	}
	if (mu_kube_client_new(o->hub, &a.d.hub) || mu_kube_client_new(o->worker, &a.w)) {
		mu_kube_client_free(a.d.hub);
		snprintf(err, errlen, "cannot start: out of memory");
		return MU_ENOMEM;
	}
	a.drefused = json_object();
	a.pheld = json_object();
	a.shrinks = json_object();
	a.prestored = json_object();
	const char *sel = "labelSelector=muster.io%2Fhub-uid";
	char hsel[400];
	snprintf(hsel, sizeof hsel, "labelSelector=muster.io%%2Fcluster%%3D%s", o->cluster);
	int rc = mu_kube_watch_start(o->worker, "/api/v1/nodes", NULL, &a.wnodes);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(o->worker, "/api/v1/pods", sel, &a.wpods);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(o->worker, "/api/v1/pods", MU__D_USED_QUERY, &a.wused);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(o->worker, "/api/v1/events", MU__D_FAIL_QUERY, &a.wfail);
	if (rc == MU_OK && o->budgets) /* only a reclaiming hub reads them */
		rc = mu_kube_watch_start(o->worker, "/apis/policy/v1/poddisruptionbudgets", NULL,
					 &a.wpdbs);
	/* the Jobs' watches; the other kinds' as discovery finds them
	 * served (agent_discover, each pass) */
	char path[200];
	mu__dkind_path(MU__DK_JOB, NULL, NULL, "", path, sizeof path);
	memset(a.wserves, -1, sizeof a.wserves);
	memset(a.hserves, -1, sizeof a.hserves);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(o->worker, path, sel, &a.wcopies[MU__DK_JOB]);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(o->hub, path, hsel, &a.whub[MU__DK_JOB]);
	if (rc != MU_OK) {
		agent_stop(&a);
		snprintf(err, errlen, "cannot start its watches: %s", mu_strerror(rc));
		return rc;
	}
	mu__dlog(&a.d, 1, "agent of cluster %s: hub %s, worker %s", o->cluster, o->hub->server,
		 o->worker->server);
	/* -1: not known yet (the watches list first; a failure is said
	 * after 5 s without an answer, or once one answered) */
	int was_ok = -1;
	int64_t t0 = mu__d_mono_ms();
	while (!*o->stop) {
		int64_t t = mu__d_mono_ms();
		bool ok = agent_pass(&a);
		bool starting = was_ok == -1 && !ok && t - t0 < 5000;
		if (!starting && was_ok != (int)ok) {
			if (was_ok != -1 || !ok)
				mu__dlog(&a.d, ok ? 1 : 0, ok ? "hub and worker answer again" :
					 "the hub or the worker did not answer; retrying");
			was_ok = ok;
		}
		int64_t left = t + o->interval_ms - mu__d_mono_ms();
		while (left > 0 && !*o->stop) {
			int64_t s = left < 50 ? left : 50;
			struct timespec ts = {0, (long)s * 1000000L};
			nanosleep(&ts, NULL);
			left -= s;
		}
	}
	agent_stop(&a);
	return MU_OK;
}

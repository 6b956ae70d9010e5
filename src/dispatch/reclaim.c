/*
 * reclaim.c - the dispatcher's side of reclaim across clusters
 * (`muster dispatch --reclaim`).
 *
 * Once a pass, after the dispatch, the fleet names the victims that let a
 * job of a queue below its share fit on one cluster (mu_fleet_reclaim:
 * the engine's reclaim rules, docs/dispatch.md).  Each victim is
 * withdrawn exactly as a copy that did not start in time is: its copy on
 * the worker is deleted (push mode; in pull mode the hub Job's cluster
 * label comes off and the agent deletes it), the hub Job says
 * Withdrawing, and only once the deletion is confirmed does the fleet
 * take it back (requeued, reason Preempted); nothing of it is sent again
 * before that, and the job it made room for is dispatched by a later
 * pass.  The victim's hub Job gets a Warning Event `Preempted` and, as
 * Kueue's Workload, the condition `Preempted` with reason
 * `InCohortReclamation` (the claimant's queue within its deserved quota),
 * `InCohortFairSharing` (within its fair share) or `InClusterQueue` (a
 * lower priority of the claimant's own queue, round 13).  The withdraw also
 * writes the record muster.io/dispatch-preempted ("REASON\tmessage", on
 * every kind), which a restarted daemon reads back (hub.c): the job is
 * never a victim again, keeps its condition, and a withdrawal it finds
 * under way goes on (hub.c's reclaim_resume).  The withdraw also writes
 * the claimant's key (muster.io/dispatch-preempted-for, round 13): after
 * a restart the victims of a withdrawal under way count as leaving for
 * it (relink), so it claims nothing more meanwhile.  The room freed is held for
 * the claimant by the fleet (cfg.reclaim_hold, set to --start-timeout).
 *
 * Round 17: a victim that is an elastic job's surplus pods
 * (mu_fleet_reclaim_t.pods > 0: a batch/v1 Job with muster.io/min-member
 * below its parallelism, on a push cluster) is shrunk instead: the record
 * muster.io/dispatch-shrunk ("GEN\tPODS\tREASON\tmessage", PODS taken
 * off this dispatch) and a Warning Event `Shrunk` on the hub Job, its
 * copy's spec.parallelism lowered by a merge PATCH on the worker (whose
 * Job controller deletes the pods above it), and once the worker said
 * yes the fleet confirms (mu_fleet_job_shrink: the usage and the model's
 * pods released; the job stays dispatched and the claimant goes by a
 * later pass).  The hub Job's status gets the condition Shrunk (True,
 * the reason as Preempted's) while this dispatch runs.  A copy the
 * worker would not shrink is withdrawn whole instead.  (Until round 21
 * pull clusters were never asked to shrink: see round 22 below.)
 *
 * Round 18: the record and the intent muster.io/dispatch-shrinking
 * ("GEN\tTO") are written on the hub before the worker's PATCH (as a
 * dispatch's record precedes its create), and a restarted daemon that
 * reads an intent back reconciles it with the copy's real size
 * (mu__dreclaim_settle: done already, finished now, or dropped).
 * Round 19: a PATCH of that reconciliation the worker refuses is asked
 * again 1, 2, 4 and 8 s later and given up at the MU__D_SHRINK_TRIES-th
 * refusal (the intent dropped, the copy counted at the size it runs, an
 * Event ShrinkFailed), where round 18 asked every pass without end.
 * Round 22: on a pull cluster the intent is the request: the hub writes
 * it as above and stops there; the cluster's agent (agent.c
 * mu__dagent_shrink) makes the same PATCH (mu__dreclaim_patch) and
 * answers in muster.io/agent-shrink ("GEN TO done|was|refused TRIES HTTP
 * PAR", round 23: and the answer's TIME, from which a restarted agent
 * counts a refusal's wait: mu__dshrinkrep_waits), which
 * the settle reads each pass (pull_answer): done (or was, after a
 * restart) confirms it as push mode's 200 does; the 5th refusal (the
 * agent asks again 1, 2, 4, 8 s apart) withdraws a shrink this daemon
 * chose whole, as push mode's refusal does, and gives up a restart's as
 * round 19 does.  The answer is removed with the intent, in one PATCH.
 * Round 23: the size is the kind's (kinds.c's shrink_ops: a Job's
 * spec.parallelism, an elastic PyTorchJob's Worker replicas), PATCHed and
 * read back the same way for every kind; the other kinds stay whole, and
 * the fleet knows it (mu_fleet_job_spec_t.shrinkable from the object).
 * Round 23: an answer that is not of that form (hand-edited, cut,
 * another version's) is said in the log and a Warning Event
 * InvalidShrinkAnswer, and counted as a refusal on the agent's schedule
 * (pull_bad), so a shrink is never left waiting on it without end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_int.h"
#include "muster/util.h"

/* Withdraws victim j for claimant c's job on its cluster (the start
 * timeout's path).  O(one request). */
static void withdraw(mu__dd_t *d, mu__djob_t *j, const mu__djob_t *c,
		     const mu_fleet_reclaim_t *x)
{
	mu__dcl_t *cl = &d->cls[j->cl];
	const char *reason = x->in_queue ? "InClusterQueue" :
		x->fair_sharing ? "InCohortFairSharing" : "InCohortReclamation";
	mu_fleet_job_info_t ci;
	mu_fleet_queue_info_t qi = {0};
	if (mu_fleet_job_info(d->fleet, x->for_job, &ci) == MU_OK)
		mu_fleet_queue_info(d->fleet, ci.queue, &qi);
	char msg[700];
	snprintf(msg, sizeof msg,
		 "Preempted on cluster %s to make room for %.200s of queue %.100s, by %s",
		 cl->name, c ? c->key : "another job", qi.name ? qi.name : "?",
		 x->in_queue ? "prioritization in the queue (a higher priority of the same queue)" :
		 x->fair_sharing ? "fair sharing (it stays within its fair share)" :
		 "reclamation (it stays within its deserved quota)");
	mu__dlog(d, 1, "job %s: %s", j->key, msg);
	mu__dhub_event(d, j, "Warning", "Preempted", msg);
	size_t n = strlen(reason) + 1 + strlen(msg) + 1;
	char *p = malloc(n);
	if (p) {
		snprintf(p, n, "%s\t%s", reason, msg);
		free(j->preempted);
		j->preempted = p;
	}
	free(j->preempted_for); /* the claimant, for a restart (same patch) */
	j->preempted_for = c ? strdup(c->key) : NULL;
	if (!cl->pull)
		mu__dwork_delete(d, cl, j->kind, j->ns, j->name);
	j->withdraw_beat = cl->beats;
	j->state = MU__DJ_WITHDRAWING;
	mu__djob_touch(d, j);
}


long mu__dreclaim_patch(mu__dd_t *d, mu_kube_client_t *kc, mu__dkind_t k, const json_t *o,
			const char *ns, const char *name, int32_t to)
{
	char path[1024];
	mu__dkind_path(k, ns, name, "", path, sizeof path);
	json_t *b = mu__dkind_size_patch(o, k, to); /* round 23: by kind */
	long st = b ? mu__dreq(d, kc, "PATCH", path, "application/merge-patch+json", b, NULL) : 0;
	json_decref(b);
	return st;
}

/* The merge PATCH of j's copy on its push worker to `to` pods (its size
 * spelt as its hub object spells it: the copy is made from it); the HTTP
 * status.  O(one request). */
static long patch_size(mu__dd_t *d, const mu__djob_t *j, int32_t to)
{
	return mu__dreclaim_patch(d, d->cls[j->cl].kc, j->kind, j->obj, j->ns, j->name, to);
}

/* Shrink victim j's copy was refused (HTTP st, or the intent not
 * recorded): its record back as it was (old, owned), the intent cleared,
 * the copy withdrawn whole for claimant c (the round-17 rule).  O(one
 * request). */
static void whole(mu__dd_t *d, mu__djob_t *j, const mu__djob_t *c, const mu_fleet_reclaim_t *x,
		  char *old, long st)
{
	mu__dlog(d, 0, "job %s: its copy on %s not shrunk (HTTP %ld): withdrawn whole", j->key,
		 d->cls[j->cl].name, st);
	if (j->shrunk != old) {
		free(j->shrunk);
		j->shrunk = old;
	}
	free(j->shrinking);
	j->shrinking = NULL;
	withdraw(d, j, c, x);
}

/* Shrink victim j's copy runs `pods` fewer pods now: the fleet told
 * (mu_fleet_job_shrink), the log and the Warning Event Shrunk (msg), the
 * record and condition written back by the pass.  O(fleet shrink). */
static void confirm(mu__dd_t *d, mu__djob_t *j, int32_t pods, const char *msg)
{
	int rc = mu_fleet_job_shrink(d->fleet, j->fid, pods, mu__d_now(d));
	mu__dlog(d, 1, "job %s: %s%s%s", j->key, msg, rc ? "; the fleet: " : "",
		 rc ? mu_strerror(rc) : "");
	mu__dhub_event(d, j, "Warning", "Shrunk", msg);
	mu__djob_touch(d, j); /* the record and the condition written back */
}

/* Shrinks victim j's copy by x->pods pods for claimant c (round 17):
 * the intent recorded on the hub first (round 18: the record
 * muster.io/dispatch-shrunk with the pods it will have taken off, and
 * muster.io/dispatch-shrinking; a synchronous PATCH, fenced by the lease
 * as a dispatch's record is), then the PATCH of its size on the
 * worker, the fleet's confirmation and the Event, the intent cleared by
 * the pass's write-back.  Withdrawn whole when the intent is not recorded
 * or the worker refuses (the record back as it was).  O(two requests). */
static void shrink(mu__dd_t *d, mu__djob_t *j, const mu__djob_t *c,
		   const mu_fleet_reclaim_t *x)
{
	mu__dcl_t *cl = &d->cls[j->cl];
	int32_t had = mu__dreclaim_shrunk(j);
	int32_t all = j->fs.job && j->fs.job->npodsets == 1 ? j->fs.job->podsets[0].replicas : 0;
	int32_t from = all - had, to = from - x->pods;
	if (!mu__dkind_shrinks(j->obj, j->kind) || to < 1) {
		withdraw(d, j, c, x); /* not the fleet's choice: taken whole */
		return;
	}
	const char *reason = x->in_queue ? "InClusterQueue" :
		x->fair_sharing ? "InCohortFairSharing" : "InCohortReclamation";
	mu_fleet_job_info_t ci;
	mu_fleet_queue_info_t qi = {0};
	if (mu_fleet_job_info(d->fleet, x->for_job, &ci) == MU_OK)
		mu_fleet_queue_info(d->fleet, ci.queue, &qi);
	char msg[700], intent[40];
	snprintf(msg, sizeof msg,
		 "Shrunk on cluster %s from %d to %d pods (its surplus above its minimum) to make "
		 "room for %.200s of queue %.100s, by %s", cl->name, (int)from, (int)to,
		 c ? c->key : "another job", qi.name ? qi.name : "?",
		 x->in_queue ? "prioritization in the queue (a higher priority of the same queue)" :
		 x->fair_sharing ? "fair sharing (it stays within its fair share)" :
		 "reclamation (it stays within its deserved quota)");
	char *rec = mu__drec_make(j, (int32_t)(had + x->pods), reason, -1, msg), *old = j->shrunk;
	snprintf(intent, sizeof intent, "%u\t%d", j->gen, (int)to);
	char *in = strdup(intent);
	long st = 0;
	if (rec && in) {
		j->shrunk = rec;
		free(j->shrinking);
		j->shrinking = in;
		rec = in = NULL;
		st = mu__dhub_annotate(d, j); /* the intent before the worker's PATCH */
		if (st == 200 && cl->pull) { /* round 22: its agent makes it */
			mu__dlog(d, 1, "job %s: its shrink to %d pods on pull cluster %s recorded: "
				 "for its agent", j->key, (int)to, cl->name);
			free(j->shrink_was);
			j->shrink_was = old;
			j->shrink_live = true;
			j->shrink_x = *x;
			j->shrink_tries = 0;
			d->shrink_settle = true; /* dropped if its dispatch ends first */
			return;
		}
		if (st == 200)
			st = patch_size(d, j, to);
		else
			mu__dlog(d, 0, "job %s: its shrink not recorded (HTTP %ld)", j->key, st);
	}
	free(rec);
	free(in);
	if (st != 200) {
		whole(d, j, c, x, old, st);
		return;
	}
	free(old);
	free(j->shrinking); /* done: cleared by this pass's write-back */
	j->shrinking = NULL;
	confirm(d, j, x->pods, msg);
}

/* The settle's end for j: the intent cleared, its record written back by
 * the pass (and, when the worker's PATCH was made now, its Event).
 * O(1) and an Event. */
static void settled(mu__dd_t *d, mu__djob_t *j, bool patched)
{
	const char *m = mu__drec_field(j->shrunk, 3); /* its message */
	if (patched && m)
		mu__dhub_event(d, j, "Warning", "Shrunk", m);
	free(j->shrinking);
	j->shrinking = NULL;
	j->shrink_tries = 0;
	j->shrink_at = 0;
	j->shrink_live = false;
	free(j->shrink_was);
	j->shrink_was = NULL;
	mu__djob_touch(d, j);
}

/* Round 19: j's shrink to `to` pods on cluster cl, whose copy runs par
 * pods (round 23: -1, not known), not made (how: "was refused N times by
 * the worker (last HTTP S)", or why else): given up, its record set to
 * the pods the copy really runs without (none: no record), the fleet
 * counting it at that size (mu__dhub_readopt), a Warning Event
 * ShrinkFailed.  O(a fleet re-entry and an Event). */
static void give_up(mu__dd_t *d, mu__djob_t *j, const mu__dcl_t *cl, int32_t to, int64_t par,
		    const char *how)
{
	int32_t all = j->fs.job && j->fs.job->npodsets == 1 ? j->fs.job->podsets[0].replicas : 0;
	int32_t off = par > 0 && par < all ? all - (int32_t)par : 0;
	char m[600], size[80] = "its copy's size not known: counted whole";
	if (par >= 0)
		snprintf(size, sizeof size, "its copy runs %lld pods and counts so", (long long)par);
	snprintf(m, sizeof m, "its shrink to %d pods on cluster %s, read back after a restart, %.300s: "
		 "given up; %s", (int)to, cl->name, how, size);
	const char *why = mu__drec_field(j->shrunk, 2); /* "REASON\tmessage" */
	char *rec = off > 0 ? mu__drec_make(j, off, why ? why : "",
					    why ? (int)strcspn(why, "\t") : 0, m) : NULL;
	free(j->shrunk);
	j->shrunk = rec;
	mu__dlog(d, 0, "job %s: %s", j->key, m);
	mu__dhub_event(d, j, "Warning", "ShrinkFailed", m);
	settled(d, j, false);
	mu__dhub_readopt(d, j); /* counted at its real size */
}

/* "was refused N times by the worker (last HTTP st)" into buf, for j's
 * j->shrink_tries refusals. */
static const char *refused_how(const mu__djob_t *j, long st, char *buf, size_t len)
{
	snprintf(buf, len, "was refused %d times by the worker (last HTTP %ld)", j->shrink_tries,
		 st);
	return buf;
}

/* Round 19: the worker refused (HTTP st) the PATCH that would finish j's
 * shrink to `to` pods on cluster cl, whose copy runs par pods: asked
 * again after 1, 2, 4, 8 s, and at the MU__D_SHRINK_TRIES-th refusal
 * given up (give_up).  Whether it was given up (settled).  O(1), or a
 * fleet re-entry and an Event. */
static bool shrink_refused(mu__dd_t *d, mu__djob_t *j, const mu__dcl_t *cl, int32_t to,
			   int64_t par, long st)
{
	if (++j->shrink_tries < MU__D_SHRINK_TRIES) {
		j->shrink_at = mu__d_mono_ms() + (1000LL << (j->shrink_tries - 1));
		return false;
	}
	char how[120];
	give_up(d, j, cl, to, par, refused_how(j, st, how, sizeof how));
	return true;
}

/* Word w (n bytes) as a decimal in [lo, hi] into *v; false when it is
 * not one.  O(n). */
static bool word_num(const char *w, size_t n, long long lo, long long hi, long long *v)
{
	long long x = 0;
	if (!n || n > 18)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (w[i] < '0' || w[i] > '9')
			return false;
		x = x * 10 + (w[i] - '0');
	}
	*v = x;
	return x >= lo && x <= hi;
}

int mu__dshrinkrep_parse(const char *s, mu__dshrinkrep_t *r, char *why, size_t wl)
{
	static const char *const name[7] = {"GEN", "TO", "OUTCOME", "TRIES", "HTTP", "PAR", "TIME"};
	static const char *const want[7] = {
		"a generation (1 or more)", "a number of pods (1 or more)", "done, was or refused",
		"a count of tries (0 to 1000)", "an HTTP status (0 to 999)",
		"a number of pods (0 or more)", "an RFC 3339 time, or nothing"};
	memset(r, 0, sizeof *r);
	if (!s)
		return 0;
	const char *p = s;
	int k = 0;
	for (; k < 8; k++) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, " ");
		if (!n)
			break; /* the end */
		long long v = 0;
		bool ok = k < 7;
		char tm[48];
		if (k == 2) {
			ok = (n == 4 && !strncmp(p, "done", 4)) || (n == 3 && !strncmp(p, "was", 3)) ||
			     (n == 7 && !strncmp(p, "refused", 7));
			if (ok)
				snprintf(r->res, sizeof r->res, "%.*s", (int)n, p);
		} else if (k == 6) {
			snprintf(tm, sizeof tm, "%.*s", (int)(n < sizeof tm ? n : sizeof tm - 1), p);
			ok = n < sizeof tm && mu__rfc3339_parse(tm, &r->at_ms) == MU_OK;
		} else if (k < 6) {
			static const long long lo[6] = {1, 1, 0, 0, 0, 0};
			static const long long hi[6] = {4294967295LL, 999999, 0, 1000, 999, 999999};
			ok = word_num(p, n, lo[k], hi[k], &v);
		}
		if (!ok) {
			snprintf(why, wl, "%s%s \"%.*s\": expected %s", k < 7 ? "its field " : "",
				 k < 7 ? name[k] : "a word after TIME", (int)(n < 40 ? n : 40), p,
				 k < 7 ? want[k] : "nothing");
			return -1;
		}
		if (k == 0)
			r->gen = (unsigned)v;
		else if (k == 1)
			r->to = (int)v;
		else if (k == 3)
			r->tries = (int)v;
		else if (k == 4)
			r->st = (long)v;
		else if (k == 5)
			r->par = (int)v;
		p += n;
	}
	if (k < 6) {
		snprintf(why, wl, "its field %s missing: expected %s", name[k], want[k]);
		return -1;
	}
	return 1;
}

bool mu__dshrinkrep_waits(const mu__dshrinkrep_t *r, int64_t now_ms)
{
	if (strcmp(r->res, "refused") || !r->at_ms || r->at_ms > now_ms || r->tries < 1)
		return false;
	int sh = r->tries - 1 < 10 ? r->tries - 1 : 10;
	return now_ms < r->at_ms + (1000LL << sh);
}

/* Round 22: j's pull shrink to `to` pods on cluster cl not made (the
 * MU__D_SHRINK_TRIES-th refusal, its copy at par pods, -1 not known;
 * how, as give_up's): a shrink this daemon chose is withdrawn whole (push
 * mode's rule for a refused PATCH), a restart's given up at the copy's
 * real size (give_up).  O(a fleet update, a request and an Event). */
static void pull_failed(mu__dd_t *d, const mu__dcl_t *cl, mu__djob_t *j, int32_t to,
			int64_t par, long st, const char *how)
{
	if (!j->shrink_live) {
		give_up(d, j, cl, to, par, how);
		return;
	}
	mu_fleet_reclaim_t x = j->shrink_x;
	const mu__djob_t *c = x.for_job >= 0 && x.for_job < d->by_fid_cap ?
		d->by_fid[x.for_job] : NULL;
	char *old = j->shrink_was;
	j->shrink_was = NULL;
	j->shrink_live = false;
	j->shrink_tries = 0;
	whole(d, j, c, &x, old, st);
}

/* Round 23: j's agent's answer val on cluster cl is not of the form
 * (why: the field and what it expected): said in the log, in a Warning
 * Event InvalidShrinkAnswer on the hub Job (once per shrink), and
 * counted as a refusal on the agent's schedule (1, 2, 4, 8 s apart,
 * j->shrink_tries, j->shrink_at), so that one left so ends the shrink as
 * MU__D_SHRINK_TRIES refusals do (pull_failed, the copy's size not
 * known) instead of stalling it; the agent, which writes the form,
 * answers over it meanwhile.  Whether settled.  O(1), or an Event. */
static bool pull_bad(mu__dd_t *d, const mu__dcl_t *cl, mu__djob_t *j, int32_t to,
		     const char *val, const char *why)
{
	if (mu__d_mono_ms() < j->shrink_at)
		return false;
	j->shrink_tries++;
	char m[700];
	snprintf(m, sizeof m, "annotation " MU__D_SHRINKREP " \"%.80s\" (cluster %s's agent's "
		 "answer to its shrink to %d pods) not read: %.200s (the form: \""
		 MU__D_SHRINKREP_FORM "\"); counted as refusal %d of %d", val, cl->name, (int)to, why,
		 j->shrink_tries, MU__D_SHRINK_TRIES);
	mu__dlog(d, 0, "job %s: %s", j->key, m);
	if (j->shrink_tries == 1)
		mu__dhub_event(d, j, "Warning", "InvalidShrinkAnswer", m);
	if (j->shrink_tries < MU__D_SHRINK_TRIES) {
		j->shrink_at = mu__d_mono_ms() + (1000LL << (j->shrink_tries - 1));
		return false;
	}
	char how[200];
	snprintf(how, sizeof how, "had no answer of its agent that could be read %d times (last "
		 "\"%.80s\")", j->shrink_tries, val);
	pull_failed(d, cl, j, to, -1, 0, how);
	return true;
}

/* Round 22: job j's intent j->shrinking of its current dispatch (to
 * `to` pods) on pull cluster cl, settled from its agent's answer
 * MU__D_SHRINKREP of this generation and size (j->obj's): done or was
 * (done before) confirm it (a shrink this daemon chose: the fleet told,
 * the Event Shrunk; one read back after a restart: counted so already,
 * the Event when the agent PATCHed after it); refused MU__D_SHRINK_TRIES
 * times, pull_failed.  Round 23: an answer not of the form, pull_bad.
 * Whether settled (false: no answer yet).  O(1), or a fleet update, a
 * request and an Event. */
static bool pull_answer(mu__dd_t *d, const mu__dcl_t *cl, mu__djob_t *j, int32_t to)
{
	mu__dshrinkrep_t a;
	char why[200];
	const char *val = mu__dmeta(j->obj, "annotations", MU__D_SHRINKREP);
	int pr = mu__dshrinkrep_parse(val, &a, why, sizeof why);
	if (pr < 0)
		return pull_bad(d, cl, j, to, val, why);
	if (!pr || a.gen != j->gen || a.to != to)
		return false; /* not answered yet */
	bool done = !strcmp(a.res, "done"), was = !strcmp(a.res, "was");
	if (done || was) {
		const char *m = mu__drec_field(j->shrunk, 3);
		if (j->shrink_live) {
			confirm(d, j, j->shrink_x.pods, m ? m : "shrunk");
		} else {
			mu__dlog(d, 1, "job %s: its shrink to %d pods on %s %s", j->key, (int)to,
				 cl->name, done ? "finished by its agent after the restart" :
				 "was done before the restart");
		}
		settled(d, j, done && !j->shrink_live);
		return true;
	}
	if (a.tries < MU__D_SHRINK_TRIES)
		return false; /* the agent asks again (1, 2, 4, 8 s) */
	j->shrink_tries = a.tries;
	char how[120];
	pull_failed(d, cl, j, to, a.par, a.st, refused_how(j, a.st, how, sizeof how));
	return true;
}

bool mu__dreclaim_settle(mu__dd_t *d, mu__djob_t *j)
{
	int32_t to = mu__drec_count(j, j->shrinking, '\0'); /* "GEN\tTO" */
	if (!to || j->state != MU__DJ_DISPATCHED || j->cl < 0) { /* nothing of now */
		mu__dlog(d, 1, "job %s: a shrink's intent of another dispatch dropped", j->key);
		settled(d, j, false);
		return true;
	}
	if (!mu__dkind_shrinks(j->obj, j->kind)) { /* round 23: its kind's size gone */
		mu__dlog(d, 1, "job %s: a shrink's intent dropped: the %s no longer has a size to "
			 "shrink", j->key, mu__dkind_name(j->kind));
		settled(d, j, false);
		return true;
	}
	mu__dcl_t *cl = &d->cls[j->cl];
	if (cl->pull) /* round 22: its agent's answer settles it, looked at each pass */
		return pull_answer(d, cl, j, to);
	if (!cl->kc || mu__d_mono_ms() < j->shrink_at)
		return false; /* not answering, or a refusal's wait (round 19) */
	char path[1024];
	mu__dkind_path(j->kind, j->ns, j->name, "", path, sizeof path);
	json_t *cur = NULL;
	long st = mu__dreq(d, cl->kc, "GET", path, NULL, NULL, &cur);
	int64_t par = st == 200 ? mu__dkind_size(cur, j->kind) : 0; /* round 23: by kind */
	json_decref(cur);
	if (st == 404) { /* its copy gone: that copy's own path takes it back */
		mu__dlog(d, 1, "job %s: a shrink's intent dropped: no copy on %s", j->key, cl->name);
		settled(d, j, false);
		return true;
	}
	if (st != 200)
		return false; /* the next pass asks again */
	if (par > 0 && par <= to) {
		mu__dlog(d, 1, "job %s: its shrink to %d pods on %s was done before the restart",
			 j->key, (int)to, cl->name);
		settled(d, j, false);
		return true;
	}
	st = patch_size(d, j, to);
	if (st == 200)
		mu__dlog(d, 1, "job %s: its shrink to %d pods on %s finished after the restart",
			 j->key, (int)to, cl->name);
	else
		mu__dlog(d, 0, "job %s: its shrink to %d pods on %s not finished after the restart: "
			 "HTTP %ld", j->key, (int)to, cl->name, st);
	if (st != 200) /* round 19: no answer asked again; a refusal bounded */
		return st && shrink_refused(d, j, cl, to, par, st);
	settled(d, j, true);
	return true;
}

/* The intents read back after a restart, each settled
 * (mu__dreclaim_settle) until none is left.  O(jobs) while one is. */
static void settle_all(mu__dd_t *d)
{
	bool left = false;
	for (int32_t i = 0; i < d->njobs; i++) {
		mu__djob_t *j = d->jobs[i];
		if (j && j->shrinking && !mu__dreclaim_settle(d, j))
			left = true;
	}
	d->shrink_settle = left;
}

/* After a restart: each victim whose withdrawal goes on (hub.c's
 * reclaim_resume) counts as leaving for the job its record names
 * (mu_fleet_job_mark_victim_for), so that job claims nothing more before
 * they are back, and its room is held again.  O(jobs), once after a
 * restart that found one. */
static void relink(mu__dd_t *d)
{
	d->reclaim_relink = false;
	for (int32_t i = 0; i < d->njobs; i++) {
		mu__djob_t *j = d->jobs[i];
		if (!j || j->state != MU__DJ_WITHDRAWING || !j->preempted_for || j->fid < 0)
			continue;
		json_t *v = json_object_get(d->by_key, j->preempted_for);
		mu__djob_t *c = v ? d->jobs[json_integer_value(v)] : NULL;
		int rc = c && c->fid >= 0 ?
			mu_fleet_job_mark_victim_for(d->fleet, j->fid, c->fid, mu__d_now(d)) : MU_ENOENT;
		mu__dlog(d, 1, "job %s: leaving for %s after the restart%s%s", j->key,
			 j->preempted_for, rc ? ": not linked, " : "", rc ? mu_strerror(rc) : "");
	}
}

void mu__dreclaim_intents(mu__dd_t *d)
{
	if (d->shrink_settle) /* a restart's intents (round 18), pull ones (22) */
		settle_all(d);
}

void mu__dreclaim(mu__dd_t *d)
{
	if (!d->o->reclaim)
		return;
	if (d->reclaim_relink)
		relink(d);
	mu_fleet_reclaims_t r = {0};
	int rc = mu_fleet_reclaim(d->fleet, mu__d_now(d), &r);
	if (rc) {
		mu__dlog(d, 0, "reclaim: %s", mu_strerror(rc));
		mu_fleet_reclaims_release(&r);
		return;
	}
	for (size_t i = 0; i < r.n; i++) {
		const mu_fleet_reclaim_t *x = &r.v[i];
		mu__djob_t *j = x->victim < d->by_fid_cap ? d->by_fid[x->victim] : NULL;
		mu__djob_t *c = x->for_job < d->by_fid_cap ? d->by_fid[x->for_job] : NULL;
		/* one being withdrawn already (its start timed out) is taken
		 * back by that path, which frees the claimant's room too */
		if (!j || j->state != MU__DJ_DISPATCHED || j->cl < 0 || j->gen != x->generation ||
		    mu__drec_count(j, j->shrinking, '\0') > 0) /* round 22: not answered yet */
			continue;
		if (x->pods > 0)
			shrink(d, j, c, x); /* an elastic job's surplus (round 17) */
		else
			withdraw(d, j, c, x);
	}
	mu_fleet_reclaims_release(&r);
}

/*
 * run.c - the hub daemon's loop: one pass at least every --interval reads
 * the hub (Clusters, Queues, Jobs), polls every push-mode worker (Nodes,
 * copies), settles what the polls showed (copies to create, starts that
 * timed out, withdrawals confirmed, lost clusters), asks the fleet where
 * the queued jobs go (mu_fleet_dispatch) and writes what changed back.
 *
 * Exactly once.  A dispatch is recorded on the hub Job (cluster and a new
 * generation, muster.io/cluster and muster.io/dispatch-generation) before
 * its copy is created, and a copy is created under the hub Job's own name,
 * so a worker holds at most one copy of a job (a second create answers
 * 409).  A copy whose hub uid, cluster or generation is not the hub Job's
 * current dispatch is deleted whenever its worker answers.  A restarted
 * daemon adopts what the annotations record (mu_fleet_job_adopt) and
 * creates a recorded copy that is missing; it never dispatches a recorded
 * job again.  A job that did not start within --start-timeout is
 * withdrawn: it goes back to the hub only once a poll no longer lists its
 * copy.  A worker unreachable for --cluster-lost-after has its jobs
 * requeued (mu_fleet_cluster_lost); its copies there are stale by then and
 * are deleted when it answers again.  (During a partition such a stale
 * copy may still run on the lost worker: nothing can reach it to stop it,
 * as with MultiKueue's lost workers.)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch/dispatch_int.h"

void mu_dispatch_opts_defaults(mu_dispatch_opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->id = "muster-dispatch";
	o->interval_ms = 100;
	o->start_timeout_ms = 300000;
	o->cluster_lost_ms = 60000;
	o->burst_after_ms = 600000;
	o->burst_priority = INT32_MAX;
	o->request_timeout_ms = 5000;
	o->leader_elect = true;
	o->lease_namespace = "kube-system";
	o->lease_name = "muster-dispatch";
	o->lease_duration_s = 15;
	o->retry_period_s = 2;
	o->min_runtime_ms = 60000; /* as the engine's */
}

/* Back to the hub: the fleet requeues j (its copy is gone or stale). */
static void requeue(mu__dd_t *d, mu__djob_t *j, const char *reason, const char *msg)
{
	if (j->state == MU__DJ_DISPATCHED || j->state == MU__DJ_WITHDRAWING)
		mu_fleet_job_requeue(d->fleet, j->fid, mu__d_now(d));
	mu__dlog(d, 1, "job %s: back to the hub (%s)", j->key, reason);
	mu__dhub_event(d, j, "Warning", reason, msg);
	j->state = MU__DJ_QUEUED;
	j->cl = -1;
	j->why = -1;
	j->phase[0] = j->pods[0] = '\0';
	d->requeued++;
	mu__djob_touch(d, j);
}

/* j's copy was refused for good by its worker (j->refused says why):
 * the job ends NotAdmitted on the hub, as MultiKueue ends a workload
 * its worker rejects, instead of being sent again and again.  Its quota
 * and its cluster's room are freed; nothing was created. */
static void refuse(mu__dd_t *d, mu__djob_t *j)
{
	if (j->kind != MU__DK_JOB && j->cl >= 0)
		d->cls[j->cl].disc_at = 0; /* its CRD may be gone: asked again */
	mu_fleet_job_finish(d->fleet, j->fid, mu__d_now(d));
	j->state = MU__DJ_DONE;
	snprintf(j->phase, sizeof j->phase, "NotAdmitted");
	j->pods[0] = '\0';
	free(j->reason);
	free(j->msg);
	j->reason = strdup("NotAdmitted");
	j->msg = j->refused;
	j->refused = NULL;
	mu__dlog(d, 0, "job %s: not admitted: %s", j->key, j->msg ? j->msg : "");
	mu__dhub_event(d, j, "Warning", "NotAdmitted", j->msg);
	mu__djob_touch(d, j);
}

void mu__drun_created(mu__dd_t *d, mu__djob_t *j, long st)
{
	if (j->dra_stale) { /* round 18: an object its claims name went or
			     * changed on the hub before this create (hdra.c):
			     * nothing made; read again now, as at dispatch */
		mu__dhub_event(d, j, "Warning", "ClaimsChanged", "an object its pods' claims name "
			       "was deleted or changed on the hub before its copy was made: read again");
		d->requeued++;
		mu__dhub_claims_back(d, j);
		return;
	}
	mu__dwork_held_tell(d, j); /* round 19: a group's pods held by the send */
	if (j->refused) {
		if (st == 200 || st == 201) /* made, then a group left below its
					     * minimum by its pods' refusals
					     * (worker.c's hold): it goes */
			mu__dwork_delete(d, &d->cls[j->cl], j->kind, j->ns, j->name);
		refuse(d, j);
	} else if (st == 200 || st == 201) {
		j->fails = 0;
	} else {
		j->fails++;
		j->made = mu__d_mono_ms();
	}
}

/* The wait before j's copy is created again: 2 s for the watch to show a
 * copy just made, then 1 s doubling to 60 s after failures. */
static int64_t retry_ms(const mu__djob_t *j)
{
	int64_t ms = 1000;
	for (int i = 1; i < j->fails && ms < 60000; i++)
		ms *= 2;
	return j->fails ? (ms < 60000 ? ms : 60000) : 2000;
}

/* Cluster c has not answered for --cluster-lost-after: its jobs go back
 * to the hub. */
static void cluster_lost(mu__dd_t *d, mu__dcl_t *c)
{
	int32_t ci = (int32_t)(c - d->cls);
	int n = mu_fleet_cluster_lost(d->fleet, c->fid, mu__d_now(d));
	c->lost = true;
	char msg[600];
	snprintf(msg, sizeof msg, "cluster %s did not answer for %lld ms", c->name,
		 (long long)(mu__d_mono_ms() - c->last_ok));
	for (int32_t i = 0; i < d->njobs; i++) {
		mu__djob_t *j = d->jobs[i];
		if (j->cl != ci || (j->state != MU__DJ_DISPATCHED && j->state != MU__DJ_WITHDRAWING))
			continue;
		j->state = MU__DJ_QUEUED; /* the fleet requeued it already */
		requeue(d, j, "ClusterLost", msg);
	}
	mu__dlog(d, 0, "cluster %s: lost, %d jobs requeued", c->name, n);
}

/* Polls every worker and sets each cluster's state in the fleet. */
static void poll_all(mu__dd_t *d)
{
	int64_t t = mu__d_mono_ms();
	/* the agents' heartbeats: the watch's snapshot when it changed */
	uint64_t seq = 0;
	if (!mu_kube_watch_items(d->wbeats, NULL, &seq)) {
		json_decref(d->beats);
		d->beats = NULL; /* not answering: each pull cluster GETs its own */
	} else if (!d->beats || seq != d->beats_seq) {
		json_decref(d->beats);
		d->beats = NULL;
		if (!mu_kube_watch_items(d->wbeats, &d->beats, &d->beats_seq)) {
			json_decref(d->beats);
			d->beats = NULL;
		}
	}
	for (int32_t i = 0; i < d->ncls; i++) {
		mu__dcl_t *c = &d->cls[i];
		bool ok = c->pull ? mu__dpull_poll(d, c) : c->kc && mu__dwork_poll(d, c);
		if (ok) {
			if (!c->reachable)
				mu__dlog(d, 1, "cluster %s: reachable", c->name);
			c->reachable = true;
			c->last_ok = t;
			c->lost = false;
		} else {
			if (c->reachable)
				mu__dlog(d, 0, "cluster %s: unreachable", c->name);
			c->reachable = false;
			if (!c->lost && t - c->last_ok >= d->o->cluster_lost_ms)
				cluster_lost(d, c);
		}
		mu_fleet_cluster_set_state(d->fleet, c->fid, !ok ? MU_CLUSTER_UNREACHABLE :
					   c->draining ? MU_CLUSTER_DRAINING : MU_CLUSTER_READY);
	}
	/* every worker looked at the jobs changed and deleted since */
	mu__djlist_clear(&d->wdirty, MU__DM_WDIRTY);
	json_decref(d->gone);
	d->gone = NULL;
}

/* Whether j's copy is gone from its worker, asked directly (a watch may
 * not have shown a copy just created): the worker answers 404, or shows
 * a Job of that name that is not this dispatch's.  One request. */
static bool copy_gone(mu__dd_t *d, const mu__djob_t *j)
{
	char path[1024], g[16];
	mu__dkind_path(j->kind, j->ns, j->name, "", path, sizeof path);
	snprintf(g, sizeof g, "%u", j->gen);
	json_t *cur = NULL;
	long st = mu__dreq(d, d->cls[j->cl].kc, "GET", path, NULL, NULL, &cur);
	const char *uid = mu__dmeta(cur, "labels", MU__D_HUBUID);
	const char *gen = mu__dmeta(cur, "annotations", MU__D_GEN);
	bool gone = st == 404 ||
		    (st == 200 && !(uid && gen && !strcmp(uid, j->uid) && !strcmp(gen, g)));
	json_decref(cur);
	return gone;
}

/* What the polls showed of job j: its copy to create (recorded, not
 * there), a start that timed out, a withdrawal confirmed.  Once a pass. */
static void settle_one(mu__dd_t *d, mu__djob_t *j, int64_t t)
{
	if (j->settled == d->pass_no)
		return;
	j->settled = d->pass_no;
	if (j->cl < 0 || !d->cls[j->cl].reachable)
		return;
	mu__dcl_t *c = &d->cls[j->cl];
	if (j->state == MU__DJ_WITHDRAWING && j->delete_again) { /* after a restart */
		j->delete_again = false;
		mu__dwork_delete(d, c, j->kind, j->ns, j->name);
	}
	if (j->state == MU__DJ_WITHDRAWING && !j->listed &&
	    (c->pull ? c->beats >= j->withdraw_beat + 2 : copy_gone(d, j))) {
		requeue(d, j, j->preempted ? "Preempted" : "Withdrawn",
			"its copy's deletion is confirmed");
		return;
	}
	if (j->state != MU__DJ_DISPATCHED)
		return;
	if (j->refused) { /* its agent's refusal (failcreate.c), or a group
			   * left below its minimum by its late pods' refused
			   * claims (worker.c's hold, round 19): its copy goes
			   * (the agent deletes a NotAdmitted one) */
		if (!c->pull)
			mu__dwork_delete(d, c, j->kind, j->ns, j->name);
		refuse(d, j);
		return;
	}
	if (!j->listed && j->copy_seen) {
		requeue(d, j, "CopyDeleted", "its copy was deleted on the worker");
		return;
	}
	/* a copy the watch has not shown 2 s after it was sent (or
	 * after a restart adopted it) is created (again: a 409 for
	 * the same generation counts as made) */
	if (!j->listed && !c->pull && t - j->dispatched >= 2000 && t - j->made >= retry_ms(j) &&
	    mu__dhub_fence(d, d->hub, j) == 200) {
		j->made = t;
		long st = mu__dwork_create(d, j);
		if ((st == 200 || st == 201) && !j->path_us[2])
			j->path_us[2] = mu__d_mono_us();
		mu__drun_created(d, j, st);
		if (j->state != MU__DJ_DISPATCHED)
			return;
	}
	if (!j->started && t - j->dispatched >= d->o->start_timeout_ms && j->failed_create) {
		/* its worker refuses its pods (failcreate.c): it ends
		 * NotAdmitted, not sent again with a new generation */
		if (!c->pull)
			mu__dwork_delete(d, &d->cls[j->cl], j->kind, j->ns, j->name);
		free(j->refused);
		j->refused = j->failed_create;
		j->failed_create = NULL;
		refuse(d, j);
		return;
	}
	if (!j->started && t - j->dispatched >= d->o->start_timeout_ms) {
		char msg[600];
		snprintf(msg, sizeof msg, "no pod of it was bound on %s within %lld ms; "
			 "withdrawing it", d->cls[j->cl].name, (long long)d->o->start_timeout_ms);
		mu__dhub_event(d, j, "Warning", "StartTimeout", msg);
		/* pull mode: the agent deletes it once the label is off, and
		 * two heartbeats later its report is known to be current */
		if (!c->pull)
			mu__dwork_delete(d, &d->cls[j->cl], j->kind, j->ns, j->name);
		j->withdraw_beat = c->beats;
		j->state = MU__DJ_WITHDRAWING;
		d->withdrawn++;
		mu__djob_touch(d, j);
	}
}

/* Whether j has timers a pass checks (MU__DM_PEND): dispatched and not
 * started, or withdrawing. */
static bool pending(const mu__djob_t *j)
{
	return (j->state == MU__DJ_DISPATCHED && !j->started) || j->state == MU__DJ_WITHDRAWING;
}

/* What the polls showed, job by job (settle_one): in a full pass every
 * job (and the set of pending ones made again), else the pending ones and
 * those the pass changed.  O(jobs) in a full pass, else O(pending +
 * changed). */
static void settle(mu__dd_t *d)
{
	int64_t t = mu__d_mono_ms();
	if (d->full) {
		mu__djlist_clear(&d->pend, MU__DM_PEND);
		for (int32_t i = 0; i < d->njobs; i++) {
			settle_one(d, d->jobs[i], t);
			if (pending(d->jobs[i]))
				mu__djlist_add(&d->pend, d->jobs[i], MU__DM_PEND);
		}
		return;
	}
	for (mu__djob_t *j = d->dirty.head; j; j = j->next[MU__DM_DIRTY])
		settle_one(d, j, t);
	/* the pending set, less those no longer pending */
	mu__djob_t *prev = NULL;
	for (mu__djob_t *j = d->pend.head, *nx; j; j = nx) {
		nx = j->next[MU__DM_PEND];
		settle_one(d, j, t);
		if (!(j->marks & (1u << MU__DM_PEND)))
			continue; /* taken off by settle_one (a stale create read
				   * again, mu__drun_created: mu__dhub_claims_back) */
		nx = j->next[MU__DM_PEND];
		if (pending(j)) {
			prev = j;
			continue;
		}
		if (prev)
			prev->next[MU__DM_PEND] = nx;
		else
			d->pend.head = nx;
		if (d->pend.tail == j)
			d->pend.tail = prev;
		d->pend.n--;
		j->marks &= (uint8_t)~(1u << MU__DM_PEND);
		j->next[MU__DM_PEND] = NULL;
	}
}

/* One dispatch's bookkeeping before anything is written: the next
 * generation, the cluster, the state.  NULL (and the fleet's dispatch
 * taken back) when the decision names a job or cluster that is gone. */
static mu__djob_t *prepare(mu__dd_t *d, const mu_fleet_decision_t *x)
{
	mu__djob_t *j = x->job < d->by_fid_cap ? d->by_fid[x->job] : NULL;
	int32_t ci = mu__dhub_cluster_by_fid(d, x->cluster);
	if (!j || ci < 0) {
		mu_fleet_job_requeue(d->fleet, x->job, mu__d_now(d));
		return NULL;
	}
	j->gen++;
	j->cl = ci;
	j->state = MU__DJ_DISPATCHED;
	j->dispatched = mu__d_mono_ms();
	j->path_us[0] = mu__d_mono_us();
	j->path_us[1] = j->path_us[2] = 0;
	j->started = j->copy_seen = j->listed = false;
	j->fails = 0;
	j->made = 0;
	free(j->failed_create); /* a new copy: its own */
	j->failed_create = NULL;
	snprintf(j->phase, sizeof j->phase, "Dispatched");
	j->pods[0] = '\0';
	mu__djob_touch(d, j);
	mu__djlist_add(&d->pend, j, MU__DM_PEND);
	return j;
}

/* A sender: its own connections (slot `first` of the daemon's pools:
 * the hub's and each cluster's, made on first use and kept across
 * passes) and its share of the work (every step-th item from first),
 * done by fn.  It touches only its own jobs, its slots of rec and made,
 * and its slot of the pools. */
typedef struct sender sender_t;
struct sender {
	mu__dd_t *d;
	mu_kube_client_t *hub;
	bool own;               /* its connections are its own (a thread's) */
	mu__djob_t **jobs;
	long *rec, *made;       /* per item: the record's, the create's status */
	size_t n, first, step;
	void (*fn)(sender_t *s, size_t i);
	int64_t rec_us, make_us; /* its time in records and creates */
};

static void *sender_run(void *arg)
{
	sender_t *s = arg;
	for (size_t i = s->first; i < s->n; i += s->step)
		if (s->jobs[i])
			s->fn(s, i);
	return NULL;
}

/* A connection of s to cluster ci: its slot of the cluster's pool, made
 * on first use, or the daemon's own. */
static mu_kube_client_t *sender_kc(sender_t *s, int32_t ci)
{
	mu__dcl_t *c = &s->d->cls[ci];
	if (!s->own)
		return c->kc;
	if (!c->pool[s->first] && c->kc &&
	    mu_kube_client_new(c->cfg, &c->pool[s->first]) != MU_OK)
		return NULL; /* none: the create fails and is retried later */
	return c->pool[s->first];
}

/* Runs fn on jobs[0..n) (NULL entries skipped): on the daemon's own
 * connections when there are few, else through MU__D_SENDERS threads with
 * connections of their own (kept in the pools for the next pass).  false
 * when out of memory (nothing ran). */
static bool par_run(mu__dd_t *d, mu__djob_t **jobs, size_t n, long *rec, long *made,
		    void (*fn)(sender_t *s, size_t i))
{
	int k = n < 16 ? 1 : MU__D_SENDERS;
	sender_t *s = calloc((size_t)k, sizeof *s);
	pthread_t *th = calloc((size_t)k, sizeof *th);
	if (!s || !th) {
		free(s);
		free(th);
		return false;
	}
	for (int t = 0; t < k; t++) {
		s[t] = (sender_t){d, d->hub, false, jobs, rec, made, n, (size_t)t, (size_t)k, fn, 0, 0};
		if (k > 1 && (d->hpool[t] || mu_kube_client_new(d->o->hub, &d->hpool[t]) == MU_OK)) {
			s[t].hub = d->hpool[t];
			s[t].own = true;
		}
		if (!s[t].own || pthread_create(&th[t], NULL, sender_run, &s[t])) {
			/* this share runs here, on the daemon's own connections */
			s[t].hub = d->hub;
			s[t].own = false;
			sender_run(&s[t]);
		}
	}
	for (int t = 0; t < k; t++) {
		if (s[t].own)
			pthread_join(th[t], NULL);
		d->send_us[0] += s[t].rec_us;
		d->send_us[1] += s[t].make_us;
	}
	free(s);
	free(th);
	return true;
}

/* One dispatch: recorded on the hub (cluster and generation, under the
 * lease term, which the hub refuses once the term is over; a Job's
 * condition Dispatched in the same patch), and only then created on the
 * worker (push mode). */
static void send_one(sender_t *s, size_t i)
{
	mu__djob_t *j = s->jobs[i];
	/* its claims' objects as the hub has them now (hdra.c, round 17):
	 * one gone or changed since it was read, it is read again, not sent */
	if (j->dra_src && mu__dhdra_stale(s->d, s->hub, j))
		return;
	int64_t t0 = mu__d_mono_us();
	s->rec[i] = mu__dhub_record_on(s->d, s->hub, j);
	int64_t t1 = mu__d_mono_us();
	s->rec_us += t1 - t0;
	if (s->rec[i] != 200)
		return; /* not recorded (or fenced): nothing may be created */
	j->path_us[1] = t1;
	mu__dcl_t *c = &s->d->cls[j->cl];
	if (!c->pull)
		s->made[i] = mu__dwork_create_on(s->d, sender_kc(s, j->cl), j);
	s->make_us += mu__d_mono_us() - t1;
	if (s->made[i] == 200 || s->made[i] == 201)
		j->path_us[2] = mu__d_mono_us();
}

/* Sends the pass's decisions (par_run; the record-then-create order holds
 * per job).  A job whose record failed goes back to the fleet.
 * O(decisions) requests. */
static void send_all(mu__dd_t *d)
{
	size_t n = d->dec.n;
	if (!n)
		return;
	mu__djob_t **jobs = calloc(n, sizeof *jobs);
	long *rec = calloc(n, sizeof *rec), *made = calloc(n, sizeof *made);
	bool ok = jobs && rec && made;
	for (size_t i = 0; ok && i < n; i++)
		jobs[i] = prepare(d, &d->dec.v[i]);
	int64_t t0 = mu__d_mono_us();
	if (ok && !par_run(d, jobs, n, rec, made, send_one))
		for (size_t i = 0; i < n; i++)
			rec[i] = 0; /* nothing was sent */
	d->send_us[2] += mu__d_mono_us() - t0;
	for (size_t i = 0; i < n; i++) {
		mu__djob_t *j = ok ? jobs[i] : NULL;
		if (!ok) {
			mu_fleet_job_requeue(d->fleet, d->dec.v[i].job, mu__d_now(d));
			continue;
		}
		if (!j)
			continue;
		if (j->dra_stale) { /* not recorded: waits or is placed again */
			mu__dhub_claims_back(d, j);
			continue;
		}
		if (rec[i] != 200) {
			mu_fleet_job_requeue(d->fleet, j->fid, mu__d_now(d));
			j->state = MU__DJ_QUEUED;
			j->cl = -1;
			mu__djob_touch(d, j);
			continue;
		}
		d->dispatched++;
		d->created += made[i] == 200 || made[i] == 201;
		if (!d->cls[j->cl].pull)
			mu__drun_created(d, j, made[i]);
	}
	free(jobs);
	free(rec);
	free(made);
}

/* The annotations and the status (conditions; a managed Job's counts) of
 * one job, each only when it changed: for a Job whose both changed, one
 * PATCH of /status that carries both (mu__dhub_record_on), as the record
 * is written; else one PATCH for the one that changed. */
static void annotate_one(sender_t *s, size_t i)
{
	mu__dhub_record_on(s->d, s->hub, s->jobs[i]);
	mu__dhub_status_on(s->d, s->hub, s->jobs[i]);
}

/* Writes the annotations and statuses that changed (par_run when many
 * did): in a full pass of every job, else of those the pass changed
 * (d->dirty, emptied), less those whose only change is their copy's pod
 * events: the counts, and the phase Running when its first pod is bound
 * (mu__dhub_pod_events_only: the next full pass writes them, at most a
 * second later, each job's pod events folded into one PATCH as kube's
 * Job controller folds a second of pod events into one sync,
 * syncJobBatchPeriod; a copy bound, running and done within the second
 * is one write-back, not two or three).  O(jobs looked at) comparisons,
 * requests only for the changes. */
static void write_back(mu__dd_t *d)
{
	int32_t nj = d->full ? d->njobs : d->dirty.n;
	mu__djob_t **due = calloc((size_t)nj + 1, sizeof *due);
	size_t n = 0;
	mu__djob_t *x = d->dirty.head;
	for (int32_t i = 0; i < nj; i++) {
		mu__djob_t *j = d->full ? d->jobs[i] : x;
		x = x ? x->next[MU__DM_DIRTY] : NULL;
		if (!due) {
			mu__dhub_annotate(d, j);
			mu__dhub_status_on(d, d->hub, j);
		} else if (mu__dhub_write_due(d, j)) {
			due[n++] = j;
		}
	}
	if (due && n && !par_run(d, due, n, NULL, NULL, annotate_one))
		for (size_t i = 0; i < n; i++) {
			mu__dhub_record_on(d, d->hub, due[i]);
			mu__dhub_status_on(d, d->hub, due[i]);
		}
	free(due);
	mu__djlist_clear(&d->dirty, MU__DM_DIRTY);
}

/* Why each queued job waits, explained when the fleet's reason changed. */
static void explain_waiting(mu__dd_t *d)
{
	int32_t nc = mu_fleet_nclusters(d->fleet);
	mu_fleet_explain_t *x = calloc((size_t)nc + 1, sizeof *x);
	if (!x)
		return;
	mu_time_t now = mu__d_now(d);
	for (int32_t i = 0; i < d->njobs; i++) {
		mu__djob_t *j = d->jobs[i];
		mu_fleet_job_info_t fi;
		if (j->state != MU__DJ_QUEUED || mu_fleet_job_info(d->fleet, j->fid, &fi) ||
		    fi.why == MU_FW_NEW || (int)fi.why == j->why)
			continue;
		j->why = (int)fi.why;
		mu__djob_dirty(d, j);
		char line[4096] = "";
		if (nc > 0 && mu_fleet_job_explain(d->fleet, j->fid, now, x) == MU_OK)
			mu_fleet_explain_format(d->fleet, x, now, line, sizeof line);
		free(j->reason);
		free(j->msg);
		j->reason = strdup(mu_fleet_why_name(fi.why));
		if (fi.why == MU_FW_NO_CLUSTER && j->kind != MU__DK_JOB) {
			/* which clusters serve its kind (their discovery) */
			char k[4200];
			snprintf(k, sizeof k, "no cluster serves %s (%s) and matches its selector: %.4000s",
				 mu__dkind_name(j->kind), mu__dkind_api(j->kind), nc ? line : "no clusters");
			j->msg = strdup(k);
		} else {
			j->msg = strdup(nc ? line : "no clusters");
		}
		mu__dhub_event(d, j, "Normal", j->reason, j->msg);
	}
	free(x);
}

/* The first of the hub's watches that the pass needs and that is not
 * healthy, and why ("not listed yet", or the failed request), into buf;
 * "" when all are (the pass then failed on something else).  O(kinds). */
static const char *hub_unhealthy(mu__dd_t *d, char *buf, size_t len)
{
	const struct { mu_kube_watch_t *w; const char *what; } ws[] = {
		{d->wclusters, "Clusters"}, {d->wqueues, "Queues"},
		{d->wjobs[MU__DK_JOB], "Jobs"}, {d->wpods, "pods"}};
	char why[160];
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++)
		if (ws[i].w && !mu_kube_watch_items(ws[i].w, NULL, NULL)) {
			snprintf(buf, len, "the hub's %s: %s", ws[i].what,
				 mu_kube_watch_error(ws[i].w, why, sizeof why));
			break;
		}
	return buf;
}

/* A pass that could not read the hub says why: a watch not listed yet is
 * waited for (info), one that failed is an error; said when the reason
 * changes and every 10 s while it stays, not every pass.  O(kinds). */
static void hub_wait(mu__dd_t *d, int64_t now)
{
	char why[192];
	hub_unhealthy(d, why, sizeof why);
	if (!why[0])
		snprintf(why, sizeof why, "the hub did not answer");
	if (!strcmp(why, d->hub_why) && now - d->hub_why_at < 10000)
		return;
	bool first = strstr(why, "not listed yet") != NULL;
	mu__dlog(d, first ? 1 : 0, "%s; %s", why, first ? "waiting" : "retrying");
	snprintf(d->hub_why, sizeof d->hub_why, "%s", why);
	d->hub_why_at = now;
}

/* One pass: read, poll, settle, dispatch, write back.  The time of each
 * step adds up in d->spent (logged at the stop: where the time goes). */
static void pass(mu__dd_t *d)
{
	int64_t t = mu__d_mono_ms(), u;
	d->pass_no++;
	/* everything at start and once a second; else what changed */
	d->full = !d->full_at || t - d->full_at >= MU__D_FULL_MS;
	if (d->full)
		d->full_at = t;
	mu__dhub_pclasses(d);
	mu__dhub_discover(d, t); /* the kinds it serves, watched (served.c) */
	/* Queues changed: every job looked at again (those waiting for
	 * their queue); a new Cluster's first poll reads it whole */
	uint64_t qseq = d->queues_seq;
	int hrc = mu__dhub_clusters(d);
	if (hrc == MU_OK)
		hrc = mu__dhub_queues(d);
	if (hrc == MU_OK && qseq != d->queues_seq)
		d->full = true;
	if (hrc != MU_OK || mu__dhub_jobs(d)) {
		hub_wait(d, t);
		return;
	}
	if (d->hub_why[0]) {
		mu__dlog(d, 1, "the hub's watches answer again");
		d->hub_why[0] = '\0';
	}
	d->spent[0] += (u = mu__d_mono_ms()) - t;
	poll_all(d);
	settle(d);
	d->spent[1] += (t = mu__d_mono_ms()) - u;
	if (d->lease && !mu_kube_lease_valid(d->lease))
		return; /* no new dispatch once the lease may have passed on */
	mu__dreclaim_intents(d); /* reclaim.c: shrinks read back or in pull mode */
	d->dec.n = 0;
	int rc = mu_fleet_dispatch(d->fleet, mu__d_now(d), &d->dec);
	d->spent[2] += (u = mu__d_mono_ms()) - t;
	if (rc == MU_OK)
		send_all(d);
	if (rc == MU_OK)
		mu__dreclaim(d); /* reclaim.c */
	d->spent[3] += (t = mu__d_mono_ms()) - u;
	explain_waiting(d);
	write_back(d);
	mu__dhub_cluster_status(d);
	mu__dqueue_status(d); /* qstatus.c: hub Queues' fair share and usage */
	d->spent[4] += mu__d_mono_ms() - t;
}

/* Asks every watch of the hub and of each worker to stop, without
 * waiting: each takes up to a second to notice, and dd_release then
 * waits for them together (one at a time, the dozens of watches of a
 * fleet took 13 s and more, and a leader that lost its lease lingered).
 * O(clusters x kinds). */
static void dd_signal_watches(mu__dd_t *d)
{
	for (int32_t i = 0; i < d->ncls; i++)
		mu__dcl_signal(&d->cls[i]);
	for (int k = 0; k < MU__DK_COUNT; k++)
		mu_kube_watch_signal(d->wjobs[k]);
	mu_kube_watch_signal(d->wpods);
	mu_kube_watch_signal(d->wclusters);
	mu_kube_watch_signal(d->wqueues);
	mu_kube_watch_signal(d->wsecrets);
	mu_kube_watch_signal(d->wbeats);
	mu_kube_watch_signal(d->wdhub[0]);
	mu_kube_watch_signal(d->wdhub[1]);
}

/* Frees everything d holds, after the watches were all asked to stop
 * (then each stop waits about a second at most, together). */
static void dd_release(mu__dd_t *d)
{
	dd_signal_watches(d);
	mu__dms_stop(d);
	for (int32_t i = 0; i < d->ncls; i++) {
		mu__dcl_t *c = &d->cls[i];
		mu__dcl_disconnect(c);
		free(c->name);
		free(c->secret_ns);
		free(c->secret_name);
		free(c->secret_rv);
		free(c->err);
		free(c->status_sig);
		free(c->spec_sig);
		free(c->beat_rv);
		json_decref(c->nodes);
	}
	free(d->cls);
	for (int32_t i = 0; i < d->njobs; i++)
		mu__djob_free(d->jobs[i]);
	free(d->jobs);
	free(d->by_fid);
	json_decref(d->by_key);
	json_decref(d->by_uid);
	json_decref(d->queue_rv);
	json_decref(d->queue_st);
	json_decref(d->pcls);
	json_decref(d->pcls_default);
	mu_fleet_decisions_release(&d->dec);
	mu_fleet_free(d->fleet);
	for (int k = 0; k < MU__DK_COUNT; k++)
		mu_kube_watch_stop(d->wjobs[k]);
	mu_kube_watch_stop(d->wpods);
	json_decref(d->groups);
	mu_kube_watch_stop(d->wclusters);
	mu_kube_watch_stop(d->wqueues);
	mu_kube_watch_stop(d->wsecrets);
	mu_kube_watch_stop(d->wbeats);
	mu_kube_watch_stop(d->wdhub[0]);
	mu_kube_watch_stop(d->wdhub[1]);
	json_decref(d->dra_idx);
	json_decref(d->beats);
	json_decref(d->secrets);
	mu_kube_client_free(d->hub);
	for (int t = 0; t < MU__D_SENDERS; t++)
		mu_kube_client_free(d->hpool[t]);
	mu_kube_lease_release(d->lease);
	free(d->lat);
}

int mu_dispatch_run(const mu_dispatch_opts_t *o, char *err, size_t errlen)
{
	mu__dd_t d;
	memset(&d, 0, sizeof d);
	d.o = o;
	d.t0 = mu__d_mono_ms();
	d.nreq = &d.reqs;
	d.lat = calloc(1, sizeof *d.lat); /* none: no path line, nothing else lost */
	mu_fleet_config_t fc;
	mu_fleet_config_defaults(&fc);
	fc.burst_after = o->burst_after_ms;
	fc.burst_priority = o->burst_priority;
	fc.usage_half_life = o->usage_half_life_ms;
	fc.min_runtime = o->min_runtime_ms;
	fc.reclaim_cooldown = o->reclaim_cooldown_ms;
	fc.reclaim_hold = o->start_timeout_ms; /* a withdrawal's bound */
	d.by_key = json_object();
	d.by_uid = json_object();
	d.queue_rv = json_object();
	d.pcls = json_object();
	mu_fleet_decisions_init(&d.dec);
	int rc = mu_fleet_new(&fc, &d.fleet);
	if (rc == MU_OK)
		rc = mu_kube_client_new(o->hub, &d.hub);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(o->hub, "/apis/muster.io/v1alpha1/clusters", NULL, &d.wclusters);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(o->hub, "/apis/muster.io/v1alpha1/queues", NULL, &d.wqueues);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(o->hub, "/api/v1/namespaces/" MU__D_NS "/secrets", NULL,
					 &d.wsecrets);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(o->hub, "/api/v1/namespaces/" MU__D_NS "/configmaps", NULL,
					 &d.wbeats);
	/* the hub's queue-labelled Jobs; the other kinds' once its discovery
	 * says it serves them (mu__dhub_discover: here, then in each pass) */
	char jpath[200];
	mu__dkind_path(MU__DK_JOB, NULL, NULL, "", jpath, sizeof jpath);
	memset(d.hub_serves, -1, sizeof d.hub_serves);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(o->hub, jpath, "labelSelector=muster.io%2Fqueue",
					 &d.wjobs[MU__DK_JOB]);
	if (rc == MU_OK)
		mu__dhub_discover(&d, mu__d_mono_ms());
	/* the hub's pods: the members of its PodGroups (a label or an
	 * annotation names the group, so all of them are watched) */
	if (rc == MU_OK)
		rc = mu_kube_watch_start(o->hub, "/api/v1/pods", NULL, &d.wpods);
	if (rc || !d.by_key || !d.by_uid || !d.queue_rv || !d.pcls) {
		snprintf(err, errlen, "cannot start: %s", mu_strerror(rc ? rc : MU_ENOMEM));
		dd_release(&d);
		return rc ? rc : MU_ENOMEM;
	}
	if (o->metrics_listen && (rc = mu__dms_start(&d, o->metrics_listen, err, errlen)) != MU_OK) {
		dd_release(&d);
		return rc;
	}
	if (o->leader_elect) {
		mu__dlog(&d, 1, "waiting for the lease %s/%s as %s", o->lease_namespace, o->lease_name,
			 o->id);
		mu_kube_lease_opts_t lo = {o->hub, o->lease_namespace, o->lease_name, o->id,
					   o->lease_duration_s, o->retry_period_s, o->stop};
		if (mu_kube_lease_acquire(&lo, &d.lease) != MU_OK) {
			dd_release(&d);
			return MU_OK; /* stopped while waiting */
		}
	}
	/* the hub's Jobs, Clusters and Queues listed once before the first
	 * pass (then watched) */
	for (int64_t t = mu__d_mono_ms(); !*o->stop &&
	     !(mu_kube_watch_items(d.wjobs[MU__DK_JOB], NULL, NULL) &&
	       mu_kube_watch_items(d.wclusters, NULL, NULL) &&
	       mu_kube_watch_items(d.wqueues, NULL, NULL)) &&
	     mu__d_mono_ms() - t < 10000;) {
		struct timespec ts = {0, 20 * 1000000L};
		nanosleep(&ts, NULL);
	}
	mu__dlog(&d, 1, "dispatching for the hub %s as %s", o->hub->server, o->id);
	rc = MU_OK;
	while (!*o->stop) {
		if (d.lease && !mu_kube_lease_valid(d.lease)) {
			mu__dlog(&d, 0, "lost the lease: stopping");
			rc = MU_ESTATE;
			break;
		}
		int64_t t = mu__d_mono_ms();
		pass(&d);
		mu__dmetrics_pass(&d, (double)(mu__d_mono_ms() - t));
		int64_t left = t + o->interval_ms - mu__d_mono_ms();
		while (left > 0 && !*o->stop) {
			int64_t s = left < 50 ? left : 50;
			struct timespec ts = {0, (long)s * 1000000L};
			nanosleep(&ts, NULL);
			left -= s;
		}
	}
	mu__dlog(&d, 1, "stopped: %llu dispatched, %llu copies created, %llu withdrawn, "
		 "%llu requeued, %llu stale copies deleted", (unsigned long long)d.dispatched,
		 (unsigned long long)d.created, (unsigned long long)d.withdrawn,
		 (unsigned long long)d.requeued, (unsigned long long)d.deleted_stale);
	mu__dlog(&d, 1, "time: %llu passes; hub reads %lld ms, worker polls %lld ms, fleet "
		 "decisions %lld ms, sends (record, create) %lld ms, write-back %lld ms; "
		 "%llu requests (watches not counted); senders busy %lld ms in records, "
		 "%lld ms in creates, over %lld ms of sends (%.1f busy on average)",
		 (unsigned long long)d.passes, (long long)d.spent[0], (long long)d.spent[1],
		 (long long)d.spent[2], (long long)d.spent[3], (long long)d.spent[4],
		 (unsigned long long)d.reqs, (long long)(d.send_us[0] / 1000),
		 (long long)(d.send_us[1] / 1000), (long long)(d.send_us[2] / 1000),
		 d.send_us[2] ? (double)(d.send_us[0] + d.send_us[1]) / (double)d.send_us[2] : 0.0);
	if (d.lat) {
		char line[1024];
		mu__dlat_format(d.lat, line, sizeof line);
		mu__dlog(&d, 1, "path: %s", line);
	}
	dd_release(&d);
	return rc;
}

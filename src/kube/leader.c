/*
 * leader.c - leader election with a coordination.k8s.io/v1 Lease, as
 * client-go's leaderelection does it.
 *
 * Every retry period: GET the Lease (404: create it, holding it).  If we
 * hold it, renew it (PUT with the last resourceVersion, renewTime now).  If
 * another replica holds it, take it over only when its record has not
 * changed for leaseDurationSeconds by our own clock (we never compare the
 * other replica's timestamps with ours); a 409 on PUT or POST means another
 * replica was faster.  Once leading, a thread keeps renewing; if no renew
 * succeeds within the renew deadline it sets d->lost and the daemon stops,
 * so two replicas never both schedule.  The deadline is also checked
 * where it matters, not only by this thread (whose requests a hung server
 * can delay): the main loop runs no cycle, and the writers send nothing,
 * once the start of the last successful renew is a renew deadline old
 * (mu__kd_may_act; d->lease_until), which is before another replica can
 * take the lease over (lease duration > renew deadline).
 *
 * Timing alone cannot fence a replica that was paused between its check
 * and its write, or whose write a network held back: binds and evictions
 * also carry the lease term they were decided under (annotation
 * muster.io/lease-term: NS/NAME:HOLDER:TRANSITIONS).  `muster up` refuses
 * a write whose term is no longer the lease's (409); a real kube-apiserver
 * ignores the annotation (docs/kubernetes.md).  On a clean stop the holder is
 * cleared so that a standby takes over at once.
 *
 * The same lease serves other daemons through mu_kube_lease_t (kube.h):
 * the hub daemon (`muster dispatch`) elects its leader with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/daemon_int.h"

/* What a lease needs from its owner: where it is, who we are, its times,
 * when to stop, and where to say until when we may act and that it was
 * lost.  The daemon points these into mu__kd_t; mu_kube_lease_t (for
 * other daemons) into itself. */
typedef struct lcfg {
	const char *ns, *name, *id;
	int duration_s, renew_s, retry_s;
	volatile sig_atomic_t *stop;
	atomic_int *stop2;
	_Atomic int64_t *until;
	atomic_int *lost;
	void (*on_lost)(void *arg);
	void *arg;
} lcfg_t;

struct mu__klease {
	lcfg_t k;
	mu__kc_t *c;
	char path[1024], coll[512];
	char rv[64];
	char seen_rv[64];      /* the other holder's record we watch age */
	int64_t seen_at;       /* mono ms when seen_rv was first seen */
	int64_t renewed_at;    /* mono ms of our last successful renew */
	int32_t transitions;
	char acquired[40];
	bool leading;
	pthread_t th;
	bool started;
	atomic_int quit;       /* set by lease_release: the renew thread ends */
};

/* The Lease object to write. */
static json_t *lease_body(mu__klease_t *l, const char *holder)
{
	char now[40];
	mu__rfc3339_format(mu__k_now_ms() * 1000, true, now, sizeof now);
	if (!*l->acquired)
		snprintf(l->acquired, sizeof l->acquired, "%s", now);
	json_t *o = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:i,s:s,s:s,s:i}}", "apiVersion",
			      "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name",
			      l->k.name, "namespace", l->k.ns, "spec", "holderIdentity",
			      holder, "leaseDurationSeconds", l->k.duration_s, "acquireTime",
			      l->acquired, "renewTime", now, "leaseTransitions", (int)l->transitions);
	if (*l->rv)
		json_object_set_new(json_object_get(o, "metadata"), "resourceVersion", json_string(l->rv));
	return o;
}

/* The timeout of a lease request: while leading, no later than the end
 * of the current lease validity (so that a hung server cannot keep us from
 * noticing that we must stop), at least 200 ms; else 5 s. */
static long lease_timeout(const mu__klease_t *l)
{
	if (!l->leading)
		return 5000;
	int64_t left = atomic_load(l->k.until) - mu__k_mono_ms();
	return left > 5000 ? 5000 : left < 200 ? 200 : (long)left;
}

/* One attempt to get or keep the lease; true when we hold it after.  A
 * success counts from when the attempt began: the server's record cannot
 * be older than that. */
static bool try_lease(mu__klease_t *l)
{
	long st;
	json_t *cur = NULL;
	int64_t t0 = mu__k_mono_ms();
	mu__kc_json(l->c, "GET", l->path, NULL, NULL, lease_timeout(l), &st, &cur);
	const char *id = l->k.id;
	bool ok = false;
	if (st == 404) {
		l->rv[0] = l->acquired[0] = '\0';
		l->transitions = 0;
		json_t *b = lease_body(l, id);
		char *text = json_dumps(b, JSON_COMPACT);
		json_t *ans = NULL;
		mu__kc_json(l->c, "POST", l->coll, "application/json", text, lease_timeout(l), &st, &ans);
		ok = st == 201 || st == 200;
		if (ok)
			snprintf(l->rv, sizeof l->rv, "%s", mu__kjs(ans, "metadata.resourceVersion") ?
				 mu__kjs(ans, "metadata.resourceVersion") : "");
		free(text);
		json_decref(b);
		json_decref(ans);
	} else if (st == 200) {
		const char *holder = mu__kjs(cur, "spec.holderIdentity");
		const char *rv = mu__kjs(cur, "metadata.resourceVersion");
		int64_t dur = mu__kji(cur, "spec.leaseDurationSeconds", l->k.duration_s);
		bool mine = holder && !strcmp(holder, id);
		if (rv && strcmp(rv, l->seen_rv)) {
			snprintf(l->seen_rv, sizeof l->seen_rv, "%s", rv);
			l->seen_at = mu__k_mono_ms();
		}
		bool free_ = !holder || !*holder || mu__k_mono_ms() - l->seen_at >= dur * 1000;
		if (mine || free_) {
			snprintf(l->rv, sizeof l->rv, "%s", rv ? rv : "");
			/* A term goes on only in the process that holds it: a
			 * restarted replica with the same identity starts a new one,
			 * so that writes of its former run are fenced off. */
			bool cont = mine && l->leading;
			l->transitions = (int32_t)mu__kji(cur, "spec.leaseTransitions", 0) + !cont;
			const char *acq = mu__kjs(cur, "spec.acquireTime");
			snprintf(l->acquired, sizeof l->acquired, "%s", cont && acq ? acq : "");
			json_t *b = lease_body(l, id), *ans = NULL;
			char *text = json_dumps(b, JSON_COMPACT);
			mu__kc_json(l->c, "PUT", l->path, "application/json", text, lease_timeout(l), &st, &ans);
			ok = st == 200;
			if (ok && mu__kjs(ans, "metadata.resourceVersion")) {
				snprintf(l->rv, sizeof l->rv, "%s", mu__kjs(ans, "metadata.resourceVersion"));
				snprintf(l->seen_rv, sizeof l->seen_rv, "%s", l->rv);
			}
			free(text);
			json_decref(b);
			json_decref(ans);
		}
	}
	json_decref(cur);
	if (ok) {
		l->renewed_at = t0;
		atomic_store(l->k.until, t0 + l->k.renew_s * 1000LL);
	}
	return ok;
}

static bool stopping(const mu__klease_t *l)
{
	return *l->k.stop || atomic_load(&l->quit) || (l->k.stop2 && atomic_load(l->k.stop2));
}

static void nap_ms(const mu__klease_t *l, int64_t ms)
{
	while (ms > 0 && !stopping(l)) {
		int64_t s = ms < 100 ? ms : 100;
		struct timespec ts = {0, (long)s * 1000000L};
		nanosleep(&ts, NULL);
		ms -= s;
	}
}

/* The renew thread: gives up after the renew deadline.  A deadline that
 * passed before the next attempt (the process was paused or starved) is
 * lost without trying, as client-go's renew loop stops once its deadline
 * context ends: renewing then would race the main loop, which already
 * treats the lease as gone (mu_kube_lease_valid). */
static void *renew(void *arg)
{
	mu__klease_t *l = arg;
	while (!stopping(l)) {
		nap_ms(l, l->k.retry_s * 1000LL);
		if (stopping(l))
			break;
		if (mu__k_mono_ms() >= atomic_load(l->k.until) ||
		    (!try_lease(l) && mu__k_mono_ms() >= atomic_load(l->k.until))) {
			l->leading = false;
			atomic_store(l->k.lost, 1);
			if (l->k.on_lost)
				l->k.on_lost(l->k.arg);
			break;
		}
	}
	return NULL;
}

/* Acquires the lease described by k over auth (blocking until held or
 * stopped) and starts the renew thread; *out gets the lease either way
 * (NULL on out of memory).  MU_ESTATE when stopped first. */
static int lease_acquire(const lcfg_t *k, mu__kauth_t *auth, mu__klease_t **out)
{
	mu__klease_t *l = calloc(1, sizeof *l);
	*out = l;
	if (!l || mu__kc_new(auth, &l->c)) {
		free(l);
		*out = NULL;
		return MU_ENOMEM;
	}
	l->k = *k;
	snprintf(l->coll, sizeof l->coll, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", k->ns);
	snprintf(l->path, sizeof l->path, "%s/%s", l->coll, k->name);
	l->seen_at = mu__k_mono_ms();
	while (!stopping(l)) {
		if (try_lease(l)) {
			l->leading = true;
			if (pthread_create(&l->th, NULL, renew, l))
				return MU_ENOMEM;
			l->started = true;
			return MU_OK;
		}
		nap_ms(l, k->retry_s * 1000LL);
	}
	return MU_ESTATE;
}

/* Stops renewing, clears the holder when still held, frees l. */
static void lease_release(mu__klease_t *l)
{
	if (!l)
		return;
	/* the owner stops, whatever the renew thread thinks: a daemon that
	 * found its lease expired (paused past it) must not be kept alive,
	 * and the lease held, by a renew thread that got it back */
	atomic_store(&l->quit, 1);
	if (l->started)
		pthread_join(l->th, NULL);
	if (l->leading && !atomic_load(l->k.lost)) {
		/* clear the holder so that a standby need not wait */
		json_t *b = lease_body(l, ""), *ans = NULL;
		json_object_set_new(json_object_get(b, "spec"), "leaseDurationSeconds", json_integer(1));
		char *text = json_dumps(b, JSON_COMPACT);
		long st;
		mu__kc_json(l->c, "PUT", l->path, "application/json", text, 5000, &st, &ans);
		free(text);
		json_decref(b);
		json_decref(ans);
	}
	mu__kc_free(l->c);
	free(l);
}

/* --- the scheduler daemon's lease ------------------------------------------ */

static void kd_lost(void *arg)
{
	mu__kd_t *d = arg;
	pthread_mutex_lock(&d->m.mu);
	d->m.leader = false;
	pthread_mutex_unlock(&d->m.mu);
}

int mu__klease_acquire(mu__kd_t *d)
{
	lcfg_t k = {d->o->lease_namespace, d->o->lease_name, d->o->id, d->o->lease_duration_s,
		    d->o->renew_deadline_s, d->o->retry_period_s, d->o->stop, &d->stop,
		    &d->lease_until, &d->lost, kd_lost, d};
	int rc = lease_acquire(&k, &d->auth, &d->lease);
	if (rc == MU_OK)
		snprintf(d->lease_term, sizeof d->lease_term, "%s/%s:%s:%d", d->o->lease_namespace,
			 d->o->lease_name, d->o->id ? d->o->id : "", (int)d->lease->transitions);
	return rc;
}

void mu__klease_release(mu__kd_t *d)
{
	lease_release(d->lease);
	d->lease = NULL;
}

/* --- mu_kube_lease_t: the same for other daemons ----------------------------- */

struct mu_kube_lease {
	mu__kauth_t auth;
	mu__klease_t *l;
	char term[800];         /* NS/NAME:HOLDER:TRANSITIONS while held */
	_Atomic int64_t until;
	atomic_int lost;
};

int mu_kube_lease_acquire(const mu_kube_lease_opts_t *o, mu_kube_lease_t **out)
{
	*out = NULL;
	mu_kube_lease_t *kl = calloc(1, sizeof *kl);
	if (!kl || mu__kauth_init(&kl->auth, o->cfg)) {
		free(kl);
		return MU_ENOMEM;
	}
	atomic_store(&kl->until, 0);
	atomic_store(&kl->lost, 0);
	lcfg_t k = {o->ns, o->name, o->id, o->duration_s, o->duration_s * 2 / 3,
		    o->retry_period_s, o->stop, NULL, &kl->until, &kl->lost, NULL, NULL};
	int rc = lease_acquire(&k, &kl->auth, &kl->l);
	if (rc) {
		mu_kube_lease_release(kl);
		return rc;
	}
	snprintf(kl->term, sizeof kl->term, "%s/%s:%s:%d", o->ns, o->name, o->id ? o->id : "",
		 (int)kl->l->transitions);
	*out = kl;
	return MU_OK;
}

const char *mu_kube_lease_term(const mu_kube_lease_t *kl)
{
	return kl->term;
}

bool mu_kube_lease_valid(const mu_kube_lease_t *kl)
{
	return !atomic_load(&kl->lost) && mu__k_mono_ms() < atomic_load(&kl->until);
}

void mu_kube_lease_release(mu_kube_lease_t *kl)
{
	if (!kl)
		return;
	lease_release(kl->l);
	mu__kauth_release(&kl->auth);
	free(kl);
}

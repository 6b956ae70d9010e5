/*
 * daemon.c - `muster scheduler`: the loop that ties the parts together.
 *
 * Start: credentials, the work queue and its writers, /metrics, then the
 * lease (only the leader goes on), then the reflectors.  The loop:
 *   1. drain watch events (at most BATCH at a time) into the view;
 *   2. apply the outcomes of binds and evictions, and queue the binds
 *      that wait for room in the writers' window (write.c);
 *   3. once every resource has been listed, and at most every cycle_ms
 *      when something changed (at least every idle_cycle_ms anyway): sync
 *      the dirty groups with the engine, run mu_engine_cycle(), turn its
 *      decisions into writes; between cycles, only sync the dirty groups
 *      (a Job's pod takes a slot planned already at once);
 *   4. every 2 s, write Queue and PodGroup status that changed;
 *   5. answer a pending /explain question (metrics.c) from the engine;
 *   6. after the first full list, then at most every TRIM_MS, and when a
 *      cycle gives back a decision buffer far larger than it needed (a
 *      backlog shrank), give the heap's free pages back to the system
 *      (mu__heap_trim: jemalloc's purge in the release builds, glibc's
 *      malloc_trim in the others): the lists' jansson values and a
 *      backlog's pending reasons leave free pages that malloc keeps
 *      otherwise.
 * It stops when *opts->stop is set (SIGTERM) or the lease is lost: the
 * reflectors stop, binds and evictions already decided are written, the
 * lease is released, and everything is freed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "kube/daemon_int.h"

/* Events the loop takes at a time, and the reflectors may queue ahead of
 * it.  A list's pages are parsed faster than the loop takes them in, so
 * while 58,000 pods are listed both are full of parsed pods (about 14 KB
 * of jansson values each as `muster up` fills a pod in).  At 65,536 the
 * list sat in the queue whole; at 4,096 and 4,096 a heap profile still
 * found 118 MB of list pages alive at the daemon's peak.  A reflector
 * waits while the queue is full, so smaller bounds cost only wake-ups
 * (docs/evaluation.md, "Sixth round"). */
#define BATCH 256
#define EVQ_CAP 512
/* At most one mu__heap_trim() per TRIM_MS (it walks the free chunks). */
#define TRIM_MS 30000

void mu_kube_opts_defaults(mu_kube_opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->scheduler_name = "muster";
	o->id = NULL;
	o->lease_namespace = "kube-system";
	o->lease_name = "muster-scheduler";
	o->lease_duration_s = 15;
	o->renew_deadline_s = 10;
	o->retry_period_s = 2;
	o->leader_elect = true;
	o->cycle_ms = 20;
	o->idle_cycle_ms = 5000;
	o->workers = 8;
	o->default_queue = "default";
	o->gang_rollback_ms = 60000;
	o->log_level = 1;
	mu_engine_config_defaults(&o->engine);
	o->engine.consolidate = false; /* --consolidate */
	o->engine.move_gpus_per_hour = 32;
	o->move_hold_ms = 300000;
	o->horizon.min_interval = 60000;
}

/* Runs one cycle: sync, decide, write. */
static void cycle(mu__kd_t *d)
{
	mu_time_t now = mu__k_now_ms();
	int64_t t0 = mu__k_mono_ms();
	mu__kd_hz_before(d);
	mu__kd_sync(d, now);
	d->dec.n = 0;
	d->dec.sink = mu__kdecs_sink; /* compact records, as they are made (decs.c) */
	d->dec.sink_arg = &d->kdec;
	mu__kdecs_clear(&d->kdec);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int rc = mu_engine_cycle(d->e, now, &d->dec);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (rc) {
		mu__klog(&d->log, 0, "cycle failed: %s", mu_strerror(rc));
		return;
	}
	mu__kd_apply(d, &d->kdec, now);
	if (d->o->mig_layouts)
		mu__kd_mig(d);
	mu__kd_hz_after(d);
	double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	mu__kd_metrics_cycle(d, ms);
	size_t binds = 0;
	for (size_t i = 0; i < d->kdec.n; i++)
		binds += d->kdec.v[i].kind == MU_DEC_BIND;
	if (binds)
		mu__klog(&d->log, 2, "cycle: %zu decisions, %zu binds, %.2f ms engine, %lld ms in all",
			 d->kdec.n, binds, ms, (long long)(mu__k_mono_ms() - t0));
	/* Every pending job has a decision per cycle (with its 208-byte
	 * reason): once a backlog has drained, give its buffers back (a
	 * 58,000-pod backlog held 18 MB of whole decisions) rather than keep
	 * its peak. */
	if (d->kdec.cap > 4096 && d->kdec.n * 8 < d->kdec.cap) {
		size_t was = d->kdec.cap;
		mu__kdecs_release(&d->kdec);
		/* the backlog shrank, and its pending reasons and messages
		 * with it: give the pages back now, not at the next TRIM_MS
		 * (at most once a second: a buffer may shrink and grow back
		 * on alternate cycles) */
		if (mu__k_mono_ms() - d->last_trim >= 1000) {
			mu__heap_trim();
			d->last_trim = mu__k_mono_ms();
			size_t in_use, held;
			mu__heap_stats(&in_use, &held);
			mu__klog(&d->log, 1, "decision buffer of %zu given back (%zu binds this cycle): heap "
				 "%.1f MB in use, %.1f MB held | pods=%zu", was, binds,
				 (double)in_use / 1e6, (double)held / 1e6, d->pods.n);
		}
	}
}

mu__kstep_t mu__kd_step(const mu__kd_t *d, int64_t since)
{
	if ((d->changed && since >= d->o->cycle_ms) || since >= d->o->idle_cycle_ms)
		return MU__KSTEP_CYCLE;
	/* Between cycles the groups that changed are synced at once, and
	 * the engine decides at the next cycle: a pod of a Job whose slots a
	 * cycle planned (a dispatcher's admitted copy, whose pod comes a few
	 * ms after the Job and its cycle) takes its slot and is bound now,
	 * as kube-scheduler takes a pod from its queue at once, instead of
	 * waiting for the next cycle (up to cycle_ms: most of a copy's 25 ms
	 * from pod created to bound).  Not after a bind or eviction failed:
	 * the sync would send it again at once (a failed bind's group is
	 * dirty), a storm against a server that is down or restarting; the
	 * cycles pace those retries, one per cycle_ms. */
	if (d->ndirty && !d->wfailed)
		return MU__KSTEP_SYNC;
	return MU__KSTEP_NONE;
}

/* The loop; returns when asked to stop or the lease is lost. */
static void loop(mu__kd_t *d)
{
	mu__kev_t *buf = malloc(BATCH * sizeof *buf);
	const long long all = (1LL << MU__KR_COUNT) - 1;
	if (!buf)
		return;
	while (!*d->o->stop && !atomic_load(&d->lost)) {
		int64_t since = mu__k_mono_ms() - d->last_cycle;
		int wait = d->changed && d->all_synced ? (int)(d->o->cycle_ms - since) : 200;
		if (wait < 0)
			wait = 0;
		/* Read before the pop: a reflector queues a list's events,
		 * then marks it listed; so when the pop drains the queue, the
		 * events of every list marked here are in this batch, and no
		 * cycle runs before them (say, without the nodes). */
		long long listed = atomic_load(&d->synced);
		size_t n = mu__kq_pop(&d->evq, buf, BATCH, wait);
		for (size_t i = 0; i < n; i++)
			mu__kd_event(d, &buf[i]);
		mu__kd_outcomes(d);
		mu__kd_bind_flush(d, false);
		mu__kd_held_release(d);
		mu__kd_explain_serve(d);
		mu__kui_tick(d, n > 0);
		if (!d->all_synced && listed == all && n < BATCH) {
			d->all_synced = true;
			d->changed = true;
			pthread_mutex_lock(&d->m.mu);
			d->m.ready = true;
			pthread_mutex_unlock(&d->m.mu);
			mu__klog(&d->log, 1, "every resource listed: scheduling | pods=%zu nodes=%zu",
				 d->pods.n, d->nodes.n);
		}
		if (!d->all_synced)
			continue;
		if (!mu__kd_may_act(d)) {
			/* the lease thread may still be waiting on the server */
			mu__klog(&d->log, 0, "the lease could not be renewed within the renew deadline: "
					     "stopping before another replica may take it");
			atomic_store(&d->lost, 1);
			break;
		}
		mu__kstep_t step = mu__kd_step(d, mu__k_mono_ms() - d->last_cycle);
		if (step == MU__KSTEP_CYCLE) {
			d->changed = false;
			d->wfailed = false;
			cycle(d);
			d->last_cycle = mu__k_mono_ms();
		} else if (step == MU__KSTEP_SYNC) {
			mu__kd_sync(d, mu__k_now_ms()); /* between cycles (mu__kd_step) */
		}
		mu__kd_gang_rollback(d);
		mu__kd_dra_retry(d, mu__k_mono_ms());
		if (mu__k_mono_ms() - d->last_status >= 2000) {
			mu__kd_status(d);
			d->last_status = mu__k_mono_ms();
		}
		if (!d->last_trim || mu__k_mono_ms() - d->last_trim >= TRIM_MS) {
			mu__heap_trim();
			d->last_trim = mu__k_mono_ms();
		}
	}
	free(buf);
}

/* Everything that stops and frees, in order; safe on a partial start. */
static void teardown(mu__kd_t *d)
{
	atomic_store(&d->stop, 1);
	mu__krefl_stop(d->refl);
	mu__kev_t ev;
	while (mu__kq_pop(&d->evq, &ev, 1, 0))
		json_decref(ev.obj);
	mu__kwq_stop(d);
	mu__klease_release(d);
	mu__kms_stop(d);
	mu__kd_release_free(d);
	mu__kd_move_free(d);
	mu__kd_ns_release(d);
	mu__kd_wl_release(d);
	mu__kd_hz_stop(d);
	mu__kd_state_release(d);
	mu__kq_release(&d->evq);
	mu__kauth_release(&d->auth);
	free(d->m.queues);
	free(d->m.policy);
	free(d->ex.answer);
	pthread_mutex_destroy(&d->m.mu);
	pthread_mutex_destroy(&d->ex.mu);
	pthread_cond_destroy(&d->ex.cv);
	pthread_mutex_destroy(&d->log.mu);
}

/* d->token: the one given, else 32 random hex digits (/dev/urandom). */
static int token_init(mu__kd_t *d)
{
	if (d->o->token) {
		if (strlen(d->o->token) >= sizeof d->token)
			return MU_EINVAL;
		snprintf(d->token, sizeof d->token, "%s", d->o->token);
		return MU_OK;
	}
	unsigned char r[16];
	FILE *f = fopen("/dev/urandom", "rb");
	size_t n = f ? fread(r, 1, sizeof r, f) : 0;
	if (f)
		fclose(f);
	if (n != sizeof r)
		return MU_EIO;
	for (size_t i = 0; i < sizeof r; i++)
		snprintf(d->token + 2 * i, 3, "%02x", r[i]);
	return MU_OK;
}

int mu_kube_run(const mu_kube_opts_t *o, char *err, size_t errlen)
{
	if (o->fault && strcmp(o->fault, "move-stall")) {
		snprintf(err, errlen, "fault point %s: the only one is move-stall", o->fault);
		return MU_EINVAL;
	}
	mu__kd_t *d = calloc(1, sizeof *d);
	if (!d)
		return MU_ENOMEM;
	d->o = o;
	atomic_store(&d->lease_until, o->leader_elect ? 0 : INT64_MAX);
	d->log.json = o->log_json;
	d->log.level = o->log_level;
	pthread_mutex_init(&d->log.mu, NULL);
	pthread_mutex_init(&d->m.mu, NULL);
	pthread_mutex_init(&d->ex.mu, NULL);
	pthread_cond_init(&d->ex.cv, NULL);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int rc = mu__kauth_init(&d->auth, o->cfg);
	if (rc == MU_OK)
		rc = mu__kq_init(&d->evq, EVQ_CAP);
	if (rc == MU_OK)
		rc = mu__kd_state_init(d);
	if (rc == MU_OK)
		rc = mu__kwq_start(d);
	if (rc == MU_OK)
		rc = token_init(d);
	if (rc == MU_OK && o->metrics_listen)
		rc = mu__kms_start(d, o->metrics_listen, err, errlen);
	else if (rc)
		snprintf(err, errlen, "cannot start: %s", mu_strerror(rc));
	if (rc == MU_OK && o->leader_elect) {
		mu__klog(&d->log, 1, "waiting for the lease %s/%s | id=%s", o->lease_namespace,
			 o->lease_name, o->id);
		rc = mu__klease_acquire(d);
		if (rc == MU_OK && *o->stop)
			rc = MU_ESTATE;
		if (rc == MU_ESTATE) { /* stopped while waiting */
			teardown(d);
			free(d);
			curl_global_cleanup();
			return MU_OK;
		}
		if (rc)
			snprintf(err, errlen, "leader election: %s", mu_strerror(rc));
	}
	if (rc == MU_OK) {
		pthread_mutex_lock(&d->m.mu);
		d->m.leader = true;
		pthread_mutex_unlock(&d->m.mu);
		mu__klog(&d->log, 1, "leading: listing and watching %s | id=%s server=%s", o->cfg->server,
			 o->id, o->cfg->server);
		mu__krefl_opts_t ro = {&d->auth, &d->evq, &d->stop, &d->log, NULL, 600, 500, &d->synced};
		rc = mu__krefl_start(&ro, &d->refl);
		if (rc)
			snprintf(err, errlen, "cannot start the watches: %s", mu_strerror(rc));
	}
	if (rc == MU_OK)
		loop(d);
	bool lost = atomic_load(&d->lost);
	if (lost)
		mu__klog(&d->log, 0, "lost the lease: stopping | id=%s", o->id);
	else if (rc == MU_OK)
		mu__klog(&d->log, 1, "stopping: writing the binds in flight");
	teardown(d);
	free(d);
	curl_global_cleanup();
	return rc ? rc : lost ? MU_ESTATE : MU_OK;
}

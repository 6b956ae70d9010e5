/*
 * rechoose.c - `muster scheduler --policy muster-horizon`: muster's
 * settings chosen again by rollouts as the cluster's GPUs fill.
 *
 * The scheduler knows no workload in advance: every job it submits to the
 * engine counts its pods as seen (mu_horizon_seen), and the engine scores
 * with the seen demand as of the last choice (d->hz.mix; before the first
 * choice the mix is empty and muster places as it does without one).
 * After each cycle, when the GPU allocation passed a checkpoint
 * (--horizon-from, --horizon-every) above the last choice's and
 * --horizon-min-interval has gone by since it (the scheduler's monotonic
 * clock), a snapshot of the engine's nodes and of the seen demand is taken
 * (O(nodes)) and the rollouts run on a worker thread, never in the loop: a
 * choice costs about 0.2 s of CPU with 256 nodes (docs/policy.md).  At
 * the start of the first cycle after the thread finished, the winner is
 * applied (mu_horizon_apply, then mu_engine_rescore), logged, and put in
 * /metrics (muster_policy_choices_total, muster_policy_choice{...}).
 * One choice is out at a time; the loop never waits for it but at exit.
 * Every Binding says which settings placed its pod (the annotation
 * muster.io/policy-setting, which `muster kexplain` prints): binds the
 * bind window held back are sent before a new choice takes effect, so
 * that the annotation is the setting the placement was scored with.
 *
 * Plain `--policy muster` (the twenty-first round) scores with a mix too:
 * the demand now, the pods of ours pending and running on the cluster.
 * Each pod is counted at its event (mu__kd_mix_pod: O(models) when its
 * shape changed, else O(1)) and taken out when it ends, is gated or goes,
 * by the index of its shape (mu_horizon_unseen), never by a rebuild over
 * the pods; at a cycle's start the mix is built again (O(shapes log
 * shapes)) when a shape came or left or the pods moved by more than 1/16
 * (mu_horizon_live_mix), and the engine's scores dropped.  A restart lists
 * the pods again, so the demand is rebuilt from them; with no pods the mix
 * is empty and muster places as it did without one.  Rollouts never run
 * for it.
 *
 * `--policy fgd` and `--policy muster-supply` (the twenty-second round)
 * score with the same demand now, by the same path (live_policy): FGD's
 * typical pods are, in the paper's simulator, the most popular of the
 * workload's pod shapes covering 95% of its pods (MU_MIX_TYPICAL, as
 * `muster eval openb` gives fgd); live, the workload is the pods of ours
 * pending and running; muster-supply keeps every shape, as in the eval
 * (docs/evaluation.md, "Twenty-second round: fgd and muster-supply
 * live").  Before, both had no mix at all, so FGD's measure
 * counted one whole-GPU shape (frag_of's NULL mix) and muster-supply
 * placed shares as FGD on that measure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"

/* d->hz_setting from the settings now: the last choice's, with its
 * candidate and checkpoint, or the defaults before any.  Every Binding
 * carries it (write.c); exact for binds the bind window held back, as
 * mu__kd_hz_before sends them before a choice takes effect.  O(1). */
static void hz_setting(mu__kd_t *d)
{
	char p[96];
	const mu_horizon_choice_t *c = &d->hz.last;
	mu_muster_params_format(&d->hz.params, p, sizeof p);
	if (d->hz.choices == 0)
		snprintf(d->hz_setting, sizeof d->hz_setting,
			 "muster-horizon: %s (muster's defaults: no choice yet)", p);
	else
		snprintf(d->hz_setting, sizeof d->hz_setting, "muster-horizon: %s (candidate %d of %d, "
			 "chosen at checkpoint %d, %.0f%% of GPUs allocated; choice %d, %s)", p,
			 (int)c->winner + 1, (int)c->ncands, (int)c->checkpoint, 100 * c->share,
			 (int)d->hz.choices, c->changed ? "changed" : "unchanged");
}

/* Whether policy ops scores live with the demand now as its mix: the
 * policies that read a mix (MU_SCORE_MIX) and have no harness of their own
 * (muster-horizon's rollouts, muster-rollout's whole workload). */
static bool live_policy(const mu_score_ops_t *ops)
{
	return ops == &mu_score_muster || ops == &mu_score_muster_mg ||
	       ops == &mu_score_fgd || ops == &mu_score_muster_supply;
}

/* The live policy's name, for its log lines (d->mix_live).  O(1). */
static const char *live_name(const mu__kd_t *d)
{
	return d->o->engine.score ? d->o->engine.score->name : "muster";
}

int mu__kd_hz_init(mu__kd_t *d, mu_engine_config_t *cfg)
{
	if (cfg->score == &mu_score_muster_rollout) {
		mu__klog(&d->log, 0, "--policy muster-rollout chooses muster's settings once from the "
			 "whole workload, which only muster eval openb knows in advance; use "
			 "muster-horizon or muster");
		return MU_EINVAL;
	}
	bool live = live_policy(cfg->score) && !cfg->score_state;
	if (cfg->score != &mu_score_muster_horizon && !live)
		return MU_OK;
	mu_horizon_config_t hc = d->o->horizon;
	hc.own_mix = true;
	char why[160];
	if (live) { /* the demand now as the mix; never rollouts */
		mu_horizon_config_t none = {.own_mix = true};
		if (mu_horizon_init(&d->hz, &none, NULL, 0))
			return MU_EINVAL;
		d->mix_live = true;
		if (cfg->score == &mu_score_fgd) /* the paper's typical pods */
			d->hz.mix.top = MU_MIX_TYPICAL;
		cfg->score_state = &d->hz.mix;
		return MU_OK;
	}
	if (mu_horizon_init(&d->hz, &hc, why, sizeof why)) {
		mu__klog(&d->log, 0, "muster-horizon: %s", why);
		return MU_EINVAL;
	}
	d->hz_on = true;
	hz_setting(d);
	atomic_store(&d->hz_done, 0);
	cfg->score_state = &d->hz.mix;
	return MU_OK;
}

void mu__kd_hz_seen(mu__kd_t *d, mu__kgroup_t *g, const mu_job_spec_t *j)
{
	if (!d->hz_on)
		return;
	/* the pods counted before are the first ones, pod set by pod set
	 * (a group grows by its last pod set, as its pods arrive) */
	int64_t skip = g->hz_seen, total = 0;
	for (size_t p = 0; p < j->npodsets; p++) {
		const mu_podset_spec_t *ps = &j->podsets[p];
		int64_t r = ps->replicas > 0 ? ps->replicas : 0, old = skip < r ? skip : r;
		skip -= old;
		total += r;
		/* a GPU-memory request is the share the engine gives it, not a
		 * CPU-only shape (none: no GPU holds it, so it is not counted) */
		mu_res_t req = ps->req;
		if (r > old && ps->gpu_memory > 0 &&
		    mu_engine_gpu_memory_req(d->e, ps->gpu_memory, &req) != MU_OK)
			continue;
		int rc = r > old ? mu_horizon_seen(&d->hz, &req, ps->gpu_models, ps->ngpu_models, r - old)
				 : MU_OK;
		if (rc)
			mu__klog(&d->log, 0, "muster-horizon: group %s not counted as seen: %s", g->key,
				 mu_strerror(rc));
	}
	if (total > g->hz_seen)
		g->hz_seen = total;
}

/* The shape p counts as in the demand now, or NULL (see mu__kd_mix_pod). */
static const mu__kshape_t *mix_shape_of(const mu__kpod_t *p, bool gone)
{
	if (gone || !p->ours || p->terminal || p->gated || !p->shape)
		return NULL;
	return mu__kshape_job(p->shape) ? p->shape : NULL;
}

void mu__kd_mix_pod(mu__kd_t *d, mu__kpod_t *p, bool gone)
{
	if (!d->mix_live)
		return;
	const mu__kshape_t *now = mix_shape_of(p, gone);
	if (now == p->mix_shape)
		return; /* counted as it is (p holds the shape: no reuse) */
	if (p->mix_shape && mu_horizon_unseen(&d->hz, p->mix_at, 1) != MU_OK)
		mu__klog(&d->log, 0, "%s: pod %s not taken out of the demand", live_name(d), p->key);
	p->mix_shape = NULL;
	if (!now)
		return;
	const mu_podset_spec_t *ps = &mu__kshape_job(now)->podsets[0];
	mu_res_t req = ps->req; /* a GPU-memory request: the share it gets */
	if (ps->gpu_memory > 0 && mu_engine_gpu_memory_req(d->e, ps->gpu_memory, &req) != MU_OK)
		return; /* no node holds it now: at its next event */
	int32_t at;
	int rc = mu_horizon_seen_at(&d->hz, &req, ps->gpu_models, ps->ngpu_models, 1, &at);
	if (rc)
		mu__klog(&d->log, 0, "%s: pod %s not counted in the demand: %s", live_name(d), p->key,
			 mu_strerror(rc));
	else if (at >= 0) {
		p->mix_shape = now;
		p->mix_at = at;
	}
}

static void *hz_worker(void *arg)
{
	mu__kd_t *d = arg;
	mu_horizon_job_run(d->hz_job);
	atomic_store(&d->hz_done, 1);
	return NULL;
}

/* The /metrics lines of the last choice, under d->m.mu. */
static void hz_metrics(mu__kd_t *d, const mu_horizon_choice_t *c)
{
	char p[96], *b = malloc(2048);
	if (!b)
		return;
	mu_muster_params_format(&c->params, p, sizeof p);
	snprintf(b, 2048,
		 "# HELP muster_policy_choices_total muster-horizon: settings chosen by rollouts.\n"
		 "# TYPE muster_policy_choices_total counter\nmuster_policy_choices_total %d\n"
		 "# HELP muster_policy_changes_total muster-horizon: choices that changed the settings.\n"
		 "# TYPE muster_policy_changes_total counter\nmuster_policy_changes_total %d\n"
		 "# HELP muster_policy_choice The settings now (1), with the last choice's checkpoint.\n"
		 "# TYPE muster_policy_choice gauge\n"
		 "muster_policy_choice{policy=\"muster-horizon\",settings=\"%s\",candidate=\"%d\","
		 "checkpoint=\"%d\"} 1\n"
		 "# HELP muster_policy_choice_lead_milligpu The winner's lead over the next candidate, "
		 "milli-GPU summed over the rollouts.\n"
		 "# TYPE muster_policy_choice_lead_milligpu gauge\nmuster_policy_choice_lead_milligpu %lld\n"
		 "# HELP muster_policy_choice_gpu_share GPUs allocated at the last choice's snapshot.\n"
		 "# TYPE muster_policy_choice_gpu_share gauge\nmuster_policy_choice_gpu_share %.4f\n",
		 (int)d->hz.choices, (int)d->hz.changes, p, (int)c->winner + 1,
		 (int)c->checkpoint, (long long)c->lead, c->share);
	pthread_mutex_lock(&d->m.mu);
	free(d->m.policy);
	d->m.policy = b;
	pthread_mutex_unlock(&d->m.mu);
}

/* --policy muster, fgd, muster-supply: the mix built again when the
 * demand moved. */
static void mix_before(mu__kd_t *d)
{
	int rc = mu_horizon_live_mix(&d->hz);
	if (rc < 0)
		mu__klog(&d->log, 0, "%s: the mix stays: %s", live_name(d), mu_strerror(rc));
	if (rc != 1)
		return;
	mu_engine_rescore(d->e);
	mu__klog(&d->log, 2, "%s: the mix is now %d pod shapes (%lld pods pending and running)",
		 live_name(d), (int)d->hz.mix.ntypes, (long long)d->hz.mix.pods);
}

void mu__kd_hz_before(mu__kd_t *d)
{
	if (d->mix_live)
		mix_before(d);
	if (!d->hz_on || !d->hz_job || !atomic_load(&d->hz_done))
		return;
	pthread_join(d->hz_thread, NULL);
	/* binds decided under the settings now go out with them */
	mu__kd_bind_flush(d, true);
	mu_horizon_choice_t c;
	int rc = mu_horizon_apply(&d->hz, d->hz_job, &c);
	mu_horizon_job_free(d->hz_job);
	d->hz_job = NULL;
	atomic_store(&d->hz_done, 0);
	if (rc) {
		mu__klog(&d->log, 0, "muster-horizon: the rollouts failed; the settings stay");
		return;
	}
	mu_engine_rescore(d->e); /* the mix changed, and maybe the settings */
	hz_setting(d);
	char line[256];
	mu__klog(&d->log, 1, "muster-horizon: %s; %d pod shapes seen (%lld pods), %d nodes",
		 mu_horizon_format(&c, line, sizeof line), (int)c.shapes,
		 (long long)c.pods, (int)c.nodes);
	hz_metrics(d, &c);
}

void mu__kd_hz_after(mu__kd_t *d)
{
	int32_t cp;
	double share;
	if (!d->hz_on || d->hz_job ||
	    !mu_horizon_due(&d->hz, d->e, mu__k_mono_ms(), &cp, &share))
		return;
	int rc = mu_horizon_prepare(&d->hz, d->e, mu__k_mono_ms(), cp, share, &d->hz_job);
	if (rc) {
		if (rc != MU_ENOENT)
			mu__klog(&d->log, 0, "muster-horizon: snapshot: %s", mu_strerror(rc));
		return;
	}
	atomic_store(&d->hz_done, 0);
	if (pthread_create(&d->hz_thread, NULL, hz_worker, d) != 0) {
		mu__klog(&d->log, 0, "muster-horizon: no worker thread; the settings stay");
		mu_horizon_cancel(&d->hz);
		mu_horizon_job_free(d->hz_job);
		d->hz_job = NULL;
		return;
	}
	mu__klog(&d->log, 2, "muster-horizon: checkpoint %d (%.0f%% of GPUs allocated): "
		 "rollouts started", (int)cp, 100 * share);
}

void mu__kd_hz_stop(mu__kd_t *d)
{
	if (d->mix_live) {
		mu_horizon_release(&d->hz);
		d->mix_live = false;
	}
	if (!d->hz_on)
		return;
	if (d->hz_job) {
		pthread_join(d->hz_thread, NULL);
		mu_horizon_cancel(&d->hz);
		mu_horizon_job_free(d->hz_job);
		d->hz_job = NULL;
	}
	mu_horizon_release(&d->hz);
	d->hz_on = false;
	d->hz_setting[0] = '\0';
}

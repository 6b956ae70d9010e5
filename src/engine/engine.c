/*
 * engine.c - the engine object: creation, teardown, the decision buffer,
 * and read-only queries.  Events live in cluster.c (nodes), queue.c
 * (queues, job submission) and cycle.c (scheduling, job completion).
 */
#include "engine/engine_int.h"

void mu_engine_config_defaults(mu_engine_config_t *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->score = &mu_score_binpack;
	cfg->preemption = true;
	cfg->reclaim = true;
	cfg->min_runtime = 60 * 1000;
	cfg->starvation_after = 0;
	cfg->max_victim_nodes = 100;
	cfg->backfill = MU_BACKFILL_RESERVE;
	cfg->reservations = 4;
	cfg->default_runtime = 3600 * 1000;
	cfg->consolidate = true;
	cfg->order = MU_ORDER_JCT;
	cfg->las_base_gpu_hours = 1;
	cfg->jct_base_gpu_hours = 100;
	cfg->jct_min_run = 3600 * 1000;
	cfg->jct_max_preemptions = 0;
	cfg->jct_gang_pods = 1;
	cfg->move_ratio = 1.0;
	cfg->move_pods_per_hour = 64;
	cfg->move_gpu_hours_per_hour = 64;
	cfg->interactive_max_wait = 300 * 1000;
}

int mu_engine_new(const mu_engine_config_t *cfg, mu_engine_t **out)
{
	mu_engine_t *e = calloc(1, sizeof *e);
	if (!e)
		return MU_ENOMEM;
	if (cfg)
		e->cfg = *cfg;
	else
		mu_engine_config_defaults(&e->cfg);
	e->score = e->cfg.score ? e->cfg.score : &mu_score_binpack;
	e->rng = e->cfg.seed;
	for (int r = 0; r < MU_RES_NAMED0; r++)
		e->res_names[r] = mu_res_name(r);
	e->nres = MU_RES_NAMED0;
	for (int r = 0; r < MU_RES_MAX; r++)
		e->slot_pool[r] = e->slot_base[r] = -1;
	e->node_gen = 1;
	e->release_gen = 1;
	e->expl_left = INT64_MAX; /* no budget outside a cycle */
	e->expl_budget = MU__EXPL_BUDGET;
	e->fcount_min = MU__FCOUNT_MIN;
	e->share_epoch = 1;
	e->decay_at = MU_TIME_NONE;
	e->placing = -1;
	*out = e;
	return MU_OK;
}

void mu_engine_free(mu_engine_t *e)
{
	if (!e)
		return;
	for (int32_t i = 0; i < e->nnodes; i++) {
		free(e->nodes[i].labels);
		free(e->nodes[i].taints);
		free(e->nodes[i].refs);
		free(e->nodes[i].topo);
	}
	for (int32_t i = 0; i < e->nqueues; i++) {
		free(e->queues[i].children);
		free(e->queues[i].pending);
		free(e->queues[i].running);
	}
	for (int32_t i = 0; i < e->njobs; i++) {
		mu__job_t *j = &e->jobs[i];
		for (int32_t p = 0; p < j->npodsets; p++)
			mu__aff_podset_free(&j->podsets[p]); /* names: in the array's block */
		free(j->podsets);
		free(j->pods);
		free(j->flav_pool);
		free(j->flav_ps);
		free(j->flav_last);
		free(j->last);
		free(j->expl);
	}
	mu__rvec_release(&e->rvecs); /* the vectors the jobs held */
	for (int32_t i = 0; i < e->nclasses; i++) {
		mu__sclass_t *c = &e->classes[i];
		for (int32_t t = 0; t < c->nterms; t++) {
			for (int32_t r = 0; r < c->terms[t].nreqs; r++)
				free(c->terms[t].reqs[r].vals);
			free(c->terms[t].reqs);
		}
		free(c->sig);
		free(c->sel);
		free(c->terms);
		free(c->tols);
		free(c->models);
		free(c->nodes);
		free(c->member);
		free(c->nomove);
		free(c->memo);
		mu__sclass_index_release(c);
	}
	for (int32_t i = 0; i < e->ntopos; i++)
		mu__topo_release(&e->topos[i]);
	free(e->topos);
	mu__aff_free(e);
	for (int r = MU_RES_NAMED0; r < e->nres; r++)
		free((char *)e->res_names[r]);
	for (int32_t p = 0; p < e->npools; p++) {
		mu__pool_sel_free(&e->pools[p]);
		free(e->pools[p].name);
	}
	free(e->pools);
	free(e->maxwait);
	free(e->free_jobs);
	free(e->escres);
	free(e->nodes);
	free(e->supply.models);
	free(e->gmodels.model);
	free(e->gmodels.devices);
	free(e->gmodels.press);
	free(e->gmem);
	free(e->queues);
	free(e->jobs);
	free(e->classes);
	free(e->txn);
	free(e->evl);
	free(e->vsum);
	free(e->relist);
	free(e->grow);
	free(e->moves);
	free(e->order_fresh);
	free(e->mvl);
	free(e->ends);
	free(e->chlog);
	free(e->chlog_prev);
	free(e->expl_seen);
	free(e->nfree);
	free(e->owed);
	free(e->ends_add);
	free(e->ends_x);
	free(e->ends_tmp);
	free(e->ends_est);
	free(e->ends_grp);
	mu__strtab_release(&e->strs);
	mu__strmap_release(&e->node_names);
	mu__strmap_release(&e->queue_names);
	mu__strmap_release(&e->job_names);
	mu__strmap_release(&e->class_sigs);
	free(e);
}

int mu__map_ext(mu_engine_t *e, const mu_ext_qty_t *ext, size_t n, mu_res_t *r)
{
	for (size_t i = 0; i < n; i++) {
		if (!ext[i].name || ext[i].qty < 0)
			return MU_EINVAL;
		int slot = -1;
		for (int s = MU_RES_NAMED0; s < e->nres; s++)
			if (strcmp(e->res_names[s], ext[i].name) == 0)
				slot = s;
		if (slot < 0) {
			if (e->nres >= MU_RES_MAX)
				return MU_ELIMIT;
			char *copy = malloc(strlen(ext[i].name) + 1);
			if (!copy)
				return MU_ENOMEM;
			strcpy(copy, ext[i].name);
			slot = e->nres++;
			e->res_names[slot] = copy;
		}
		r->v[slot] += ext[i].qty;
	}
	return MU_OK;
}

void mu_decisions_init(mu_decisions_t *d)
{
	memset(d, 0, sizeof *d);
}

void mu_decisions_release(mu_decisions_t *d)
{
	free(d->v);
	memset(d, 0, sizeof *d);
}

int32_t mu_engine_njobs(const mu_engine_t *e) { return e->njobs; }
int32_t mu_engine_nnodes(const mu_engine_t *e) { return e->nnodes; }
int32_t mu_engine_nqueues(const mu_engine_t *e) { return e->nqueues; }

int mu_engine_job_info(const mu_engine_t *e, mu_id_t id, mu_job_info_t *out)
{
	if (id < 0 || id >= e->njobs || e->jobs[id].forgotten)
		return MU_ENOENT;
	const mu__job_t *j = &e->jobs[id];
	memset(out, 0, sizeof *out);
	out->name = j->name;
	out->queue = e->queues[j->queue].name;
	out->state = j->state;
	out->pods = j->npods;
	out->bound = j->nbound;
	out->min_member = j->min_member;
	out->submit = j->submit;
	out->start = j->start;
	out->gpu_milli = j->acct_gpu_total;
	out->priority = j->priority;
	out->effective_priority = j->eprio;
	out->attained_gpu_s = (j->attained + (j->state == MU_JOB_RUNNING && e->now > j->start ?
			       (double)j->acct_gpu_total / 1000.0 * (double)(e->now - j->start) : 0)) / 1000.0;
	out->preemptible = j->preemptible;
	out->preemptions = j->preemptions;
	out->moves = j->moves;
	out->estimate = mu__job_estimate(e, j, &out->estimate_src);
	out->expected_start = mu__expected_start(e, j);
	out->reserved = mu__job_reserved(e, j);
	out->last = mu__job_last(j);
	if (j->nflav && j->flav >= 0) {
		out->pool = e->pools[j->flav_pool[j->flav]].name;
		out->pool_rank = j->flav;
	}
	out->npools = j->nflav;
	out->max_wait = j->max_wait;
	out->escalated = j->escalated;
	out->escalation = j->esc;
	return MU_OK;
}

int mu_engine_queue_info(const mu_engine_t *e, mu_id_t id, mu_queue_info_t *out)
{
	if (id < 0 || id >= e->nqueues)
		return MU_ENOENT;
	const mu__queue_t *q = &e->queues[id];
	memset(out, 0, sizeof *out);
	out->name = q->name;
	out->parent = q->parent;
	out->depth = q->depth;
	out->priority = q->priority;
	out->deserved = q->deserved;
	out->limit = q->limit;
	out->used = q->used;
	out->fair = q->fair;
	out->demand = q->demand;
	out->pending_jobs = q->npending;
	out->running_jobs = q->nrunning;
	out->decayed_gpu = q->decayed[MU_RES_GPU];
	out->decay_factor = e->cfg.usage_half_life > 0 ? q->decay_factor[MU_RES_GPU] : 1.0;
	for (int r = 0; r < MU_RES_MAX; r++) {
		out->decayed[r] = q->decayed[r];
		out->decay_factors[r] = e->cfg.usage_half_life > 0 ? q->decay_factor[r] : 1.0;
	}
	return MU_OK;
}

const char *mu_engine_node_name(const mu_engine_t *e, mu_id_t node)
{
	return node >= 0 && node < e->nnodes ? e->nodes[node].name : NULL;
}

mu_id_t mu_engine_job_find(const mu_engine_t *e, const char *name)
{
	return mu__strmap_get(&e->job_names, name);
}

mu_id_t mu_engine_node_find(const mu_engine_t *e, const char *name)
{
	mu_id_t id = mu__strmap_get(&e->node_names, name);
	return id >= 0 && !e->nodes[id].removed ? id : -1;
}

mu_id_t mu_engine_queue_find(const mu_engine_t *e, const char *name)
{
	return mu__strmap_get(&e->queue_names, name);
}

mu_id_t mu_engine_pod_node(const mu_engine_t *e, mu_id_t job, int32_t podset,
			   int32_t pod)
{
	if (job < 0 || job >= e->njobs)
		return -1;
	const mu__job_t *j = &e->jobs[job];
	if (podset < 0 || podset >= j->npodsets || pod < 0 ||
	    pod >= j->podsets[podset].replicas || !j->pods)
		return -1;
	return j->pods[j->podsets[podset].first + pod].node;
}

void mu_engine_totals(const mu_engine_t *e, mu_res_t *alloc, mu_res_t *used)
{
	if (alloc)
		*alloc = e->total_alloc;
	if (used)
		*used = e->total_used;
}

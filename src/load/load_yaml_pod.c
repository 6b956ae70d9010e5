/*
 * load_yaml_pod.c - the workload-side YAML kinds: muster's Workload
 * (muster.io/v1alpha1) and the plain Kubernetes batch/v1 Job.
 *
 * Both become a mu_job_spec_t with pod sets.  A pod set's request comes
 * either from a `requests` mapping (Workload) or from a core/v1 pod template,
 * whose containers are combined as Kubernetes does: requests fall back to
 * limits, regular containers and sidecars add up, and the pod asks for the
 * larger of that sum and its biggest init container.  Node selectors,
 * required node affinity, tolerations and allowed GPU models come along,
 * and so do alignment inside the node (align, NIC, pinned CPUs), the gang's
 * topology request, run-time estimate and limit, and the priority: given,
 * from a PriorityClass (resolved by mu_specs_validate()), or the job
 * type's default.
 */
#include <stdio.h>
#include <string.h>

#include "load/load_yaml.h"

#define JOB_MAX_PODSETS 1000
#define PODSET_MAX_REPLICAS 1000000

/* --- Requests ------------------------------------------------------------ */

/* The request of one container, or a sum of them, before GPUs are split
 * into whole devices and a share. */
typedef struct req {
	int64_t cpu, mem, gpum;  /* millicores, bytes, milli-GPU */
	unsigned set;            /* REQ_* bits given */
	size_t next;
	const char *ext_name[MU__Y_MAX_EXT];
	int64_t ext_qty[MU__Y_MAX_EXT];
} req_t;

enum { REQ_CPU = 1, REQ_MEM = 2, REQ_GPU = 4 };

/* The slot of extended resource name in r, added when absent; -1 when r
 * is full. */
static int req_ext(req_t *r, const char *name)
{
	for (size_t i = 0; i < r->next; i++)
		if (!strcmp(r->ext_name[i], name))
			return (int)i;
	if (r->next == MU__Y_MAX_EXT)
		return -1;
	r->ext_name[r->next] = name;
	r->ext_qty[r->next] = 0;
	return (int)r->next++;
}

/* Reads one entry of a requests or limits mapping into r. */
static int req_entry(mu__yload_t *L, const mu__ynode_t *c, req_t *r)
{
	const char *k = c->key;
	int64_t v;
	int rc;
	if (!strcmp(k, "ephemeral-storage") || !strncmp(k, "hugepages-", 10))
		return MU_OK;
	if (!strcmp(k, "pods"))
		return mu__y_err(L, c, NULL, MU_EINVAL,
				 "pods is a node resource, not a pod request");
	if (!strcmp(k, "muster.io/gpu-milli")) {
		if ((rc = mu__y_int(L, c, 1, 999, &v)))
			return rc;
	} else if ((rc = mu__y_qty(L, c, !strcmp(k, "cpu") ||
				   !strcmp(k, "nvidia.com/gpu") ? 1000 : 1,
				   &v))) {
		return rc;
	}
	if (!strcmp(k, "cpu")) {
		r->cpu = v;
		r->set |= REQ_CPU;
	} else if (!strcmp(k, "memory")) {
		r->mem = v;
		r->set |= REQ_MEM;
	} else if (!strcmp(k, "nvidia.com/gpu") ||
		   !strcmp(k, "muster.io/gpu-milli")) {
		if (r->set & REQ_GPU)
			return mu__y_err(L, c, NULL, MU_EINVAL,
					 "give either nvidia.com/gpu or "
					 "muster.io/gpu-milli, not both");
		if (v > 1000 && (v % 1000 || v > 1000 * MU_MAX_GPUS))
			return mu__y_err(L, c, NULL, MU_ERANGE,
					 "expected a share of one GPU between 0 "
					 "and 1, or whole GPUs up to %d, got \"%s\"",
					 MU_MAX_GPUS, c->s);
		r->gpum = v;
		r->set |= REQ_GPU;
	} else {
		int i = req_ext(r, k);
		if (i < 0)
			return mu__y_err(L, c, NULL, MU_ELIMIT,
					 "more than %d extended resources",
					 MU__Y_MAX_EXT);
		r->ext_qty[i] = v;
	}
	return MU_OK;
}

/* Reads a requests (or limits) mapping m, which may be NULL. */
static int req_read(mu__yload_t *L, const mu__ynode_t *m, req_t *r)
{
	for (const mu__ynode_t *c = m ? m->head : NULL; c; c = c->next) {
		int rc = req_entry(L, c, r);
		if (rc != MU_OK)
			return rc;
	}
	return MU_OK;
}

/* dst = dst + src (add) or max(dst, src), per resource.  Returns false
 * when a sum overflows or the extended names do not fit. */
static bool req_combine(req_t *dst, const req_t *src, bool add)
{
	const int64_t *s[3] = {&src->cpu, &src->mem, &src->gpum};
	int64_t *d[3] = {&dst->cpu, &dst->mem, &dst->gpum};
	for (int i = 0; i < 3; i++) {
		if (add && *s[i] > INT64_MAX - *d[i])
			return false;
		*d[i] = add ? *d[i] + *s[i] : (*s[i] > *d[i] ? *s[i] : *d[i]);
	}
	for (size_t i = 0; i < src->next; i++) {
		int j = req_ext(dst, src->ext_name[i]);
		if (j < 0 || (add && src->ext_qty[i] > INT64_MAX - dst->ext_qty[j]))
			return false;
		int64_t a = dst->ext_qty[j], b = src->ext_qty[i];
		dst->ext_qty[j] = add ? a + b : (a > b ? a : b);
	}
	return true;
}

/* Whether ps already asks for GPUs or GPU memory. */
static bool podset_has_gpu(const mu_podset_spec_t *ps)
{
	return ps->req.v[MU_RES_GPU] || ps->req.v[MU_RES_GPU_MILLI] || ps->gpu_memory;
}

/* Reads KAI-Scheduler's GPU-sharing annotations from mapping an (may be
 * NULL): gpu-memory (MiB of one GPU, also as muster.io/gpu-memory) and
 * gpu-fraction (a share of one GPU, 0 < f <= 1, kept to milli-GPU).  The
 * pod set must not ask for GPUs another way. */
static int gpu_share_annotations(mu__yload_t *L, const mu__ynode_t *an,
				 mu_podset_spec_t *ps)
{
	static const char *const keys[3] = {"gpu-memory", "muster.io/gpu-memory",
					    "gpu-fraction"};
	for (int k = 0; k < 3; k++) {
		const mu__ynode_t *v = mu__y_get(an, keys[k]);
		int64_t mib;
		double f;
		int rc;
		if (!v)
			continue;
		if (podset_has_gpu(ps))
			return mu__y_err(L, an, keys[k], MU_EINVAL, "the pod already "
					 "asks for GPUs (nvidia.com/gpu, "
					 "muster.io/gpu-milli, gpu-memory or "
					 "gpu-fraction): give one of them");
		if (k < 2) {
			if ((rc = mu__y_int(L, v, 1, INT64_C(1) << 40, &mib)))
				return rc;
			ps->gpu_memory = mib;
			continue;
		}
		if ((rc = mu__y_num(L, v, 0, 1, &f)))
			return rc;
		int64_t m = (int64_t)(f * 1000 + 0.5);
		if (m < 1)
			return mu__y_err(L, an, keys[k], MU_ERANGE, "expected a share "
					 "of one GPU above 0 and at most 1 (kept "
					 "to 0.001), got \"%.60s\"", v->s);
		if (m == 1000)
			ps->req.v[MU_RES_GPU] = 1;
		else
			ps->req.v[MU_RES_GPU_MILLI] = m;
	}
	return MU_OK;
}

/* Reads a container's resources: requests, falling back per resource to
 * limits as Kubernetes defaults them. */
static int req_container(mu__yload_t *L, const mu__ynode_t *c, req_t *r)
{
	const mu__ynode_t *res, *rq, *lm;
	req_t lim = {.set = 0};
	int rc;
	memset(r, 0, sizeof *r);
	if ((rc = mu__y_want_map(L, c)) ||
	    (rc = mu__y_map_at(L, c, "resources", false, &res)) ||
	    (rc = mu__y_map_at(L, res, "requests", false, &rq)) ||
	    (rc = mu__y_map_at(L, res, "limits", false, &lm)) ||
	    (rc = req_read(L, rq, r)) || (rc = req_read(L, lm, &lim)))
		return rc;
	if (!(r->set & REQ_CPU))
		r->cpu = lim.cpu;
	if (!(r->set & REQ_MEM))
		r->mem = lim.mem;
	if (!(r->set & REQ_GPU))
		r->gpum = lim.gpum;
	r->set |= lim.set;
	for (size_t i = 0; i < lim.next; i++) {
		size_t before = r->next;
		int j = req_ext(r, lim.ext_name[i]);
		if (j < 0)
			return mu__y_err(L, lm, NULL, MU_ELIMIT,
					 "more than %d extended resources",
					 MU__Y_MAX_EXT);
		if ((size_t)j >= before)
			r->ext_qty[j] = lim.ext_qty[i];
	}
	return MU_OK;
}

/* Turns r into the pod set's request: whole GPUs or a share of one. */
static int req_final(mu__yload_t *L, const mu__ynode_t *at, const req_t *r,
		     mu_podset_spec_t *ps)
{
	if (r->gpum > 1000 && (r->gpum % 1000 || r->gpum > 1000 * MU_MAX_GPUS))
		return mu__y_err(L, at, NULL, MU_ERANGE,
				 "the containers ask for %lld.%03lld GPUs in all; "
				 "above 1 a request must be whole, at most %d",
				 (long long)(r->gpum / 1000),
				 (long long)(r->gpum % 1000), MU_MAX_GPUS);
	memset(&ps->req, 0, sizeof ps->req);
	ps->req.v[MU_RES_CPU] = r->cpu;
	ps->req.v[MU_RES_MEM] = r->mem;
	if (r->gpum % 1000)
		ps->req.v[MU_RES_GPU_MILLI] = r->gpum;
	else
		ps->req.v[MU_RES_GPU] = r->gpum / 1000;
	ps->next = 0;
	ps->ext = mu__y_alloc(L, r->next, sizeof *ps->ext);
	if (!ps->ext)
		return mu__y_oom(L);
	for (size_t i = 0; i < r->next; i++) {
		ps->ext[i].name = mu_arena_strdup(&L->into->arena, r->ext_name[i]);
		if (!ps->ext[i].name)
			return mu__y_oom(L);
		ps->ext[i].qty = r->ext_qty[i];
	}
	ps->next = r->next;
	return MU_OK;
}

/* The effective request of a pod spec (Kubernetes' PodRequests): the sum
 * of containers plus sidecars (init containers with restartPolicy Always),
 * or the largest init container plus the sidecars started before it,
 * whichever is larger. */
static int req_pod(mu__yload_t *L, const mu__ynode_t *spec, req_t *out)
{
	static const char too_much[] = "the requests add up to too much, or "
				       "name too many extended resources";
	const mu__ynode_t *cs, *ics;
	req_t c, side = {.set = 0}, init = {.set = 0};
	int rc;
	memset(out, 0, sizeof *out);
	if ((rc = mu__y_seq_at(L, spec, "containers", true, &cs)) ||
	    (rc = mu__y_seq_at(L, spec, "initContainers", false, &ics)))
		return rc;
	if (cs->n == 0)
		return mu__y_err(L, cs, NULL, MU_EPARSE,
				 "a pod needs at least one container");
	for (const mu__ynode_t *n = cs->head; n; n = n->next)
		if ((rc = req_container(L, n, &c)) || !req_combine(out, &c, true))
			return rc ? rc : mu__y_err(L, n, NULL, MU_ERANGE,
						   "%s", too_much);
	for (const mu__ynode_t *n = ics ? ics->head : NULL; n; n = n->next) {
		if ((rc = req_container(L, n, &c)))
			return rc;
		const mu__ynode_t *rp = mu__y_get(n, "restartPolicy");
		bool ok;
		if (rp && rp->type == MU__Y_SCALAR && !strcmp(rp->s, "Always"))
			ok = req_combine(out, &c, true) &&
			     req_combine(&side, &c, true) &&
			     req_combine(&init, &side, false);
		else
			ok = req_combine(&c, &side, true) &&
			     req_combine(&init, &c, false);
		if (!ok)
			return mu__y_err(L, n, NULL, MU_ERANGE, "%s", too_much);
	}
	if (!req_combine(out, &init, false))
		return mu__y_err(L, spec, NULL, MU_ERANGE, "%s", too_much);
	return MU_OK;
}

/* --- Node selection ------------------------------------------------------ */

/* Reads affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
 * of mapping m (a pod spec or a Workload pod set); the rest of affinity
 * is ignored. */
static int sel_affinity(mu__yload_t *L, const mu__ynode_t *m,
			mu_podset_spec_t *ps)
{
	const mu__ynode_t *aff, *na, *rq, *terms;
	int rc;
	if ((rc = mu__y_map_at(L, m, "affinity", false, &aff)) ||
	    (rc = mu__y_map_at(L, aff, "nodeAffinity", false, &na)) ||
	    (rc = mu__y_map_at(L, na, "requiredDuringSchedulingIgnoredDuring"
			       "Execution", false, &rq)))
		return rc;
	if (!rq)
		return MU_OK;
	if ((rc = mu__y_seq_at(L, rq, "nodeSelectorTerms", true, &terms)))
		return rc;
	if (!(ps->affinity = mu__y_alloc(L, terms->n, sizeof *ps->affinity)))
		return mu__y_oom(L);
	for (const mu__ynode_t *t = terms->head; t; t = t->next) {
		mu_sel_term_t *st = &ps->affinity[ps->naffinity++];
		const mu__ynode_t *exprs;
		if ((rc = mu__y_want_map(L, t)))
			return rc;
		if (mu__y_get(t, "matchFields"))
			return mu__y_err(L, mu__y_get(t, "matchFields"), NULL,
					 MU_EINVAL, "matchFields is not "
					 "supported; use matchExpressions on "
					 "node labels");
		if ((rc = mu__y_seq_at(L, t, "matchExpressions", true, &exprs)))
			return rc;
		if (exprs->n == 0)
			return mu__y_err(L, exprs, NULL, MU_EINVAL,
					 "a term needs at least one expression");
		if (!(st->reqs = mu__y_alloc(L, exprs->n, sizeof *st->reqs)))
			return mu__y_oom(L);
		for (const mu__ynode_t *e = exprs->head; e; e = e->next)
			if ((rc = mu__y_sel_req(L, e, true, &st->reqs[st->nreqs++])))
				return rc;
	}
	return MU_OK;
}

/* Reads one toleration. */
static int toleration(mu__yload_t *L, const mu__ynode_t *c, mu_toleration_t *t)
{
	const char *op = "Equal", *eff = "";
	int rc;
	if ((rc = mu__y_want_map(L, c)) ||
	    (rc = mu__y_str_at(L, c, "key", false, &t->key)) ||
	    (rc = mu__y_str_at(L, c, "operator", false, &op)) ||
	    (rc = mu__y_str_at(L, c, "value", false, &t->value)) ||
	    (rc = mu__y_str_at(L, c, "effect", false, &eff)))
		return rc;
	if (t->key && !*t->key)
		t->key = NULL;
	if (!strcmp(op, "Exists")) {
		t->op = MU_TOL_EXISTS;
		if (t->value && *t->value)
			return mu__y_err(L, c, "value", MU_EINVAL,
					 "operator Exists takes no value");
	} else if (!strcmp(op, "Equal")) {
		t->op = MU_TOL_EQUAL;
		if (!t->key)
			return mu__y_err(L, c, "key", MU_EINVAL,
					 "operator Equal needs a key");
		if (!t->value)
			t->value = "";
	} else {
		return mu__y_err(L, c, "operator", MU_EINVAL,
				 "expected Equal or Exists, got \"%.60s\"", op);
	}
	t->effect = *eff ? mu__y_effect(eff) : -1;
	if (*eff && t->effect < 0)
		return mu__y_err(L, c, "effect", MU_EINVAL,
				 "expected NoSchedule, PreferNoSchedule, "
				 "NoExecute or nothing, got \"%.60s\"", eff);
	return MU_OK;
}

/* Reads nodeSelector, affinity and tolerations of mapping m. */
static int sel_all(mu__yload_t *L, const mu__ynode_t *m, mu_podset_spec_t *ps)
{
	const mu__ynode_t *tols;
	int rc;
	if ((rc = mu__y_labels_at(L, m, "nodeSelector", &ps->node_selector,
				  &ps->nnode_selector)) ||
	    (rc = sel_affinity(L, m, ps)) ||
	    (rc = mu__y_pod_affinity(L, m, ps)) ||
	    (rc = mu__y_seq_at(L, m, "tolerations", false, &tols)))
		return rc;
	if (!tols)
		return MU_OK;
	if (!(ps->tolerations = mu__y_alloc(L, tols->n, sizeof *ps->tolerations)))
		return mu__y_oom(L);
	for (const mu__ynode_t *c = tols->head; c; c = c->next)
		if ((rc = toleration(L, c, &ps->tolerations[ps->ntolerations++])))
			return rc;
	return MU_OK;
}

/* Reads a core/v1 PodTemplateSpec into the pod set. */
static int pod_template(mu__yload_t *L, const mu__ynode_t *tmpl,
			mu_podset_spec_t *ps)
{
	const mu__ynode_t *spec, *meta, *an = NULL;
	req_t r;
	int rc;
	if ((rc = mu__y_want_map(L, tmpl)) ||
	    (rc = mu__y_map_at(L, tmpl, "metadata", false, &meta)) ||
	    (rc = mu__y_labels_at(L, meta, "labels", &ps->labels, &ps->nlabels)) ||
	    (meta && (rc = mu__y_map_at(L, meta, "annotations", false, &an))) ||
	    (rc = mu__y_map_at(L, tmpl, "spec", true, &spec)) ||
	    (rc = sel_all(L, spec, ps)) || (rc = req_pod(L, spec, &r)) ||
	    (rc = req_final(L, spec, &r, ps)))
		return rc;
	const mu__ynode_t *claims = mu__y_get(spec, "resourceClaims");
	if (claims && !mu__y_null(claims) &&
	    (rc = mu__y_pod_claims(L, claims, &ps->dra_claims)))
		return rc;
	return gpu_share_annotations(L, an, ps);
}

/* --- Jobs ---------------------------------------------------------------- */

/* Reads a job type name at n. */
static int job_type(mu__yload_t *L, const mu__ynode_t *n, mu_job_type_t *t)
{
	int rc = mu__y_want_scalar(L, n);
	if (rc)
		return rc;
	for (int i = MU_JOB_TRAIN; i <= MU_JOB_BATCH; i++) {
		if (!strcmp(n->s, mu_job_type_name((mu_job_type_t)i))) {
			*t = (mu_job_type_t)i;
			return MU_OK;
		}
	}
	return mu__y_err(L, n, NULL, MU_EINVAL, "expected train, inference, "
			 "interactive or batch, got \"%.60s\"", n->s);
}

/* What both kinds read besides the spec, for job_finish(). */
typedef struct jextra {
	const mu__ynode_t *mm;     /* minMember (for messages), or NULL */
	const mu__ynode_t *prio;   /* an explicit priority, or NULL */
	const mu__ynode_t *pclass; /* priorityClassName, or NULL */
	bool pre_given;            /* preemptible was given */
} jextra_t;

/* Reads the priority class name at x->pclass (if any): a job gives a
 * priority or a class, not both. */
static int job_pclass(mu__yload_t *L, const jextra_t *x, const char **name)
{
	*name = NULL;
	if (!x->pclass)
		return MU_OK;
	if (x->prio)
		return mu__y_err(L, x->pclass, NULL, MU_EINVAL, "give a priority "
				 "or a priority class, not both");
	return mu__y_name(L, x->pclass, name);
}

/* The checks and defaults common to both kinds once pod sets are read:
 * minMember within the pods, the load's pod limit, the type's default
 * priority; then appends, with a late reference for the priority when it
 * was not given (a class, or a globalDefault class, may set it). */
static int job_finish(mu__yload_t *L, const mu__ynode_t *meta,
		      mu_job_spec_t *j, const jextra_t *x)
{
	const char *pclass;
	int64_t pods = 0;
	int rc = job_pclass(L, x, &pclass);
	if (rc)
		return rc;
	int64_t parts = 0;
	for (size_t i = 0; i < j->npodsets; i++) {
		pods += j->podsets[i].replicas;
		parts += j->podsets[i].min_member;
	}
	if (j->min_member && j->min_member < parts)
		return mu__y_err(L, x->mm, NULL, MU_ERANGE,
				 "%d is less than the %lld its pod sets' own "
				 "minMember need together", (int)j->min_member,
				 (long long)parts);
	if (!x->pre_given)
		j->preemptible = j->type == MU_JOB_TRAIN || j->type == MU_JOB_BATCH;
	if (!x->prio)
		j->priority = mu__type_priority(j->type);
	if (j->min_member > pods)
		return mu__y_err(L, x->mm, NULL, MU_ERANGE,
				 "%d is more than the job's %lld pods",
				 (int)j->min_member, (long long)pods);
	if (pods > MU__Y_MAX_PODS - L->pods)
		return mu__y_err(L, meta, NULL, MU_ELIMIT,
				 "more than %d pods in all", MU__Y_MAX_PODS);
	if (!x->prio && (rc = mu__y_ref(L, x->pclass ? x->pclass : meta,
					MU_REF_PRIORITY, L->into->njobs,
					pclass, NULL)))
		return rc;
	mu_job_spec_t *slot = mu_specs_add_job(L->into);
	if (!slot) {
		if (!x->prio)
			L->into->nrefs--;
		return mu__y_oom(L);
	}
	*slot = *j;
	L->pods += pods;
	return MU_OK;
}

/* Exclusive CPUs are whole CPUs: checks a pinning pod set's request. */
static int pin_check(mu__yload_t *L, const mu__ynode_t *at,
		     const mu_podset_spec_t *ps)
{
	int64_t cpu = ps->req.v[MU_RES_CPU];
	if (!ps->pin_cpus || (cpu > 0 && cpu % 1000 == 0 &&
			      cpu / 1000 <= MU_MAX_CPUS))
		return MU_OK;
	if (cpu <= 0)
		return mu__y_err(L, at, NULL, MU_EINVAL, "pinned CPUs need a cpu "
				 "request of whole CPUs; the pod asks for none");
	if (cpu % 1000)
		return mu__y_err(L, at, NULL, MU_EINVAL, "pinned CPUs are whole "
				 "CPUs, but the pod asks for %lld.%03lld; ask for "
				 "a multiple of 1000m", (long long)(cpu / 1000),
				 (long long)(cpu % 1000));
	return mu__y_err(L, at, NULL, MU_ERANGE, "at most %d pinned CPUs, the "
			 "pod asks for %lld", MU_MAX_CPUS,
			 (long long)(cpu / 1000));
}

/* Reads a pod set's alignment from mapping m under the given keys (align,
 * NIC, pinned CPUs) and checks the request for pinning. */
static int podset_align(mu__yload_t *L, const mu__ynode_t *m,
			const char *const keys[3], mu_podset_spec_t *ps)
{
	const mu__ynode_t *a = mu__y_get(m, keys[0]);
	int rc;
	if ((a && (rc = mu__y_align(L, a, &ps->align))) ||
	    (rc = mu__y_bool_at(L, m, keys[1], &ps->want_nic)) ||
	    (rc = mu__y_bool_at(L, m, keys[2], &ps->pin_cpus)))
		return rc;
	return pin_check(L, mu__y_get(m, keys[2]), ps);
}

/* Reads a Workload pod set's gpuMemory (MiB of one GPU's memory), which
 * replaces a GPU request. */
static int wl_gpu_memory(mu__yload_t *L, const mu__ynode_t *c,
			 mu_podset_spec_t *ps)
{
	int64_t mib = 0;
	int rc = mu__y_int_at(L, c, "gpuMemory", 1, INT64_C(1) << 40, &mib);
	if (rc || !mib)
		return rc;
	if (podset_has_gpu(ps))
		return mu__y_err(L, c, "gpuMemory", MU_EINVAL, "give either "
				 "gpuMemory or a GPU request, not both");
	ps->gpu_memory = mib;
	return MU_OK;
}

/* Reads a pod set's own minimum (minMember: a part of the gang), which
 * must be within its replicas. */
static int podset_min(mu__yload_t *L, const mu__ynode_t *c, mu_podset_spec_t *ps)
{
	int64_t mm = 0;
	int rc = mu__y_int_at(L, c, "minMember", 0, MU__Y_MAX_PODS, &mm);
	if (rc)
		return rc;
	if (mm > ps->replicas)
		return mu__y_err(L, mu__y_get(c, "minMember"), NULL, MU_ERANGE,
				 "%lld is more than the pod set's %d replicas",
				 (long long)mm, (int)ps->replicas);
	ps->min_member = (int32_t)mm;
	return MU_OK;
}

/* Reads one Workload pod set; i is its index (for the default name). */
static int wl_podset(mu__yload_t *L, const mu__ynode_t *c, size_t i,
		     mu_podset_spec_t *ps)
{
	static const char *const direct[] = {"requests", "nodeSelector",
					     "affinity", "tolerations", "labels",
					     "topologySpreadConstraints"};
	static const char *const akeys[3] = {"align", "nic", "pinCPUs"};
	const mu__ynode_t *tmpl, *rq;
	int64_t replicas = 1;
	char def[32];
	int rc;
	if (i)
		snprintf(def, sizeof def, "main-%zu", i);
	else
		snprintf(def, sizeof def, "main");
	if ((rc = mu__y_want_map(L, c)))
		return rc;
	if (!(ps->name = mu_arena_strdup(&L->into->arena, def)))
		return mu__y_oom(L);
	if ((rc = mu__y_name_at(L, c, "name", false, &ps->name)) ||
	    (rc = mu__y_int_at(L, c, "replicas", 1, PODSET_MAX_REPLICAS,
			       &replicas)) ||
	    (rc = mu__y_strs_at(L, c, "gpuModels", false, &ps->gpu_models,
				&ps->ngpu_models)))
		return rc;
	ps->replicas = (int32_t)replicas;
	if ((rc = podset_min(L, c, ps)))
		return rc;
	if ((tmpl = mu__y_get(c, "template"))) {
		for (size_t k = 0; k < sizeof direct / sizeof *direct; k++)
			if (mu__y_get(c, direct[k]))
				return mu__y_err(L, c, direct[k], MU_EPARSE,
						 "give either template or "
						 "requests, labels, nodeSelector, "
						 "affinity, topologySpreadConstraints "
						 "and tolerations");
		if ((rc = pod_template(L, tmpl, ps)) ||
		    (rc = wl_gpu_memory(L, c, ps)))
			return rc;
		return podset_align(L, c, akeys, ps);
	}
	req_t r = {.set = 0};
	if ((rc = mu__y_map_at(L, c, "requests", false, &rq)) ||
	    (rc = req_read(L, rq, &r)) || (rc = sel_all(L, c, ps)) ||
	    (rc = mu__y_labels_at(L, c, "labels", &ps->labels, &ps->nlabels)) ||
	    (rc = req_final(L, rq ? rq : c, &r, ps)) ||
	    (rc = wl_gpu_memory(L, c, ps)))
		return rc;
	return podset_align(L, c, akeys, ps);
}

/* Reads spec.podSets; pod set names must be unique within the job. */
static int wl_podsets(mu__yload_t *L, const mu__ynode_t *spec, mu_job_spec_t *j)
{
	const mu__ynode_t *seq;
	int rc = mu__y_seq_at(L, spec, "podSets", true, &seq);
	if (rc)
		return rc;
	if (seq->n == 0 || seq->n > JOB_MAX_PODSETS)
		return mu__y_err(L, seq, NULL, seq->n ? MU_ELIMIT : MU_EPARSE,
				 "expected 1 to %d pod sets", JOB_MAX_PODSETS);
	if (!(j->podsets = mu__y_alloc(L, seq->n, sizeof *j->podsets)))
		return mu__y_oom(L);
	for (const mu__ynode_t *c = seq->head; c; c = c->next) {
		mu_podset_spec_t *ps = &j->podsets[j->npodsets];
		if ((rc = wl_podset(L, c, j->npodsets, ps)))
			return rc;
		for (size_t k = 0; k < j->npodsets; k++)
			if (!strcmp(j->podsets[k].name, ps->name))
				return mu__y_err(L, c, "name", MU_EINVAL,
						 "two pod sets are named \"%s\"",
						 ps->name);
		j->npodsets++;
	}
	return MU_OK;
}

static int job_pools_check(mu__yload_t *L, const mu__ynode_t *n,
			   const mu_job_spec_t *j);

/* Reads a Workload's run-time fields: estimate, limit, speed-up. */
static int wl_runtime(mu__yload_t *L, const mu__ynode_t *spec, mu_job_spec_t *j)
{
	const mu__ynode_t *sx = mu__y_get(spec, "speedupExp");
	int rc;
	if ((rc = mu__y_dur_at(L, spec, "runtimeEstimate", &j->runtime_estimate)) ||
	    (rc = mu__y_dur_at(L, spec, "runtimeLimit", &j->runtime_limit)) ||
	    (sx && (rc = mu__y_num(L, sx, 0, 4, &j->speedup_exp))))
		return rc;
	return MU_OK;
}

int mu__y_workload(mu__yload_t *L, const mu__ynode_t *root)
{
	mu_job_spec_t j = {.type = MU_JOB_TRAIN};
	const mu__ynode_t *meta, *spec, *t;
	int64_t prio = 0, mm = 0;
	jextra_t x;
	int rc;
	if ((rc = mu__y_map_at(L, root, "metadata", true, &meta)) ||
	    (rc = mu__y_name_at(L, meta, "name", true, &j.name)) ||
	    (rc = mu__y_name_at(L, meta, "namespace", false, &j.namespace)) ||
	    (rc = mu__y_map_at(L, root, "spec", true, &spec)) ||
	    (rc = mu__y_name_at(L, spec, "queue", true, &j.queue)) ||
	    (rc = mu__y_int_at(L, spec, "priority", INT32_MIN, INT32_MAX, &prio)) ||
	    ((t = mu__y_get(spec, "type")) && (rc = job_type(L, t, &j.type))) ||
	    (rc = mu__y_bool_at(L, spec, "preemptible", &j.preemptible)) ||
	    (rc = mu__y_preemption_policy(L, mu__y_get(spec, "preemptionPolicy"), &j.never_preempt)) ||
	    (rc = mu__y_int_at(L, spec, "minMember", 0, MU__Y_MAX_PODS, &mm)) ||
	    (rc = mu__y_dur_at(L, spec, "submitTime", &j.submit)) ||
	    (rc = mu__y_dur_at(L, spec, "duration", &j.duration)) ||
	    (rc = wl_runtime(L, spec, &j)) ||
	    (rc = mu__y_dur_at(L, spec, "maxWait", &j.max_wait)) ||
	    (rc = mu__y_escalation_at(L, spec, "escalation", &j.escalation)) ||
	    (rc = mu__y_strs_at(L, spec, "pools", true, &j.pools, &j.npools)) ||
	    (j.npools && (rc = job_pools_check(L, mu__y_get(spec, "pools"), &j))) ||
	    (rc = mu__y_topo_req(L, mu__y_get(spec, "topology"), &j.topo)) ||
	    (rc = wl_podsets(L, spec, &j)))
		return rc;
	j.priority = (int32_t)prio;
	j.min_member = (int32_t)mm;
	x.mm = mu__y_get(spec, "minMember");
	x.prio = mu__y_get(spec, "priority");
	x.pclass = mu__y_get(spec, "priorityClassName");
	x.pre_given = mu__y_get(spec, "preemptible") != NULL;
	return job_finish(L, meta, &j, &x);
}

/* Reads a list of `what` separated by commas (an annotation). */
static int comma_list(mu__yload_t *L, const mu__ynode_t *n, const char *what,
		      const char ***out, size_t *nout)
{
	int rc = mu__y_want_scalar(L, n);
	if (rc)
		return rc;
	size_t cap = 1;
	for (const char *p = n->s; *p; p++)
		cap += *p == ',';
	if (!(*out = mu__y_alloc(L, cap, sizeof **out)))
		return mu__y_oom(L);
	for (const char *p = n->s;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		while (len && *p == ' ')
			p++, len--;
		while (len && p[len - 1] == ' ')
			len--;
		if (!len)
			return mu__y_err(L, n, NULL, MU_EPARSE,
					 "expected %s separated by "
					 "commas, got \"%.60s\"", what, n->s);
		const char *s = mu_arena_strndup(&L->into->arena, p, len);
		if (!s)
			return mu__y_oom(L);
		(*out)[(*nout)++] = s;
		if (!e)
			return MU_OK;
		p = e + 1;
	}
}

/* Reads muster.io/gpu-models: names separated by commas. */
static int job_gpu_models(mu__yload_t *L, const mu__ynode_t *n,
			  mu_podset_spec_t *ps)
{
	return comma_list(L, n, "GPU models", &ps->gpu_models, &ps->ngpu_models);
}

/* Checks a job's pool list (flavor fallback): valid names, none twice, at
 * most MU_MAX_JOB_POOLS.  n is where it was read, for messages. */
static int job_pools_check(mu__yload_t *L, const mu__ynode_t *n,
			   const mu_job_spec_t *j)
{
	if (j->npools > MU_MAX_JOB_POOLS)
		return mu__y_err(L, n, NULL, MU_ELIMIT, "at most %d pools",
				 MU_MAX_JOB_POOLS);
	for (size_t i = 0; i < j->npools; i++) {
		if (!mu__valid_name(j->pools[i]))
			return mu__y_err(L, n, NULL, MU_EINVAL, "\"%.60s\" is not "
					 "a valid pool name", j->pools[i]);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(j->pools[i], j->pools[k]))
				return mu__y_err(L, n, NULL, MU_EINVAL, "the pool "
						 "\"%s\" is named twice", j->pools[i]);
	}
	return MU_OK;
}

/* Reads the Job annotations of pools and classes of service:
 * muster.io/pools (comma-separated, preferred first), muster.io/max-wait,
 * muster.io/escalation. */
static int job_pools_ann(mu__yload_t *L, const mu__ynode_t *an, mu_job_spec_t *j)
{
	const mu__ynode_t *p = mu__y_get(an, "muster.io/pools");
	int rc;
	if ((rc = mu__y_dur_at(L, an, "muster.io/max-wait", &j->max_wait)) ||
	    (rc = mu__y_escalation_at(L, an, "muster.io/escalation", &j->escalation)) ||
	    (p && (rc = comma_list(L, p, "pool names", &j->pools, &j->npools))) ||
	    (p && (rc = job_pools_check(L, p, j))))
		return rc;
	return MU_OK;
}

/* Reads the run-time annotations of a batch/v1 Job. */
static int job_runtime(mu__yload_t *L, const mu__ynode_t *an, mu_job_spec_t *j)
{
	const mu__ynode_t *sx = mu__y_get(an, "muster.io/speedup-exp");
	int rc;
	if ((rc = mu__y_dur_at(L, an, "muster.io/runtime-estimate",
			       &j->runtime_estimate)) ||
	    (rc = mu__y_dur_at(L, an, "muster.io/runtime-limit",
			       &j->runtime_limit)) ||
	    (sx && (rc = mu__y_num(L, sx, 0, 4, &j->speedup_exp))))
		return rc;
	return MU_OK;
}

/* Reads the muster.io annotations of a batch/v1 Job. */
static int job_annotations(mu__yload_t *L, const mu__ynode_t *meta,
			   mu_job_spec_t *j, jextra_t *x)
{
	const mu__ynode_t *an, *t, *g;
	int64_t prio = 0, mm = 0;
	int rc;
	if ((rc = mu__y_map_at(L, meta, "annotations", false, &an)) ||
	    (rc = mu__y_int_at(L, an, "muster.io/priority", INT32_MIN,
			       INT32_MAX, &prio)) ||
	    ((t = mu__y_get(an, "muster.io/type")) &&
	     (rc = job_type(L, t, &j->type))) ||
	    (rc = mu__y_bool_at(L, an, "muster.io/preemptible", &j->preemptible)) ||
	    (rc = mu__y_int_at(L, an, "muster.io/min-member", 0, MU__Y_MAX_PODS,
			       &mm)) ||
	    (rc = mu__y_dur_at(L, an, "muster.io/submit-time", &j->submit)) ||
	    (rc = mu__y_dur_at(L, an, "muster.io/duration", &j->duration)) ||
	    (rc = job_runtime(L, an, j)) ||
	    (rc = mu__y_topo_req_annotations(L, an, &j->topo)) ||
	    (rc = job_pools_ann(L, an, j)) ||
	    ((g = mu__y_get(an, "muster.io/gpu-models")) &&
	     (rc = job_gpu_models(L, g, &j->podsets[0]))))
		return rc;
	j->priority = (int32_t)prio;
	j->min_member = (int32_t)mm;
	x->mm = mu__y_get(an, "muster.io/min-member");
	x->prio = mu__y_get(an, "muster.io/priority");
	x->pre_given = mu__y_get(an, "muster.io/preemptible") != NULL;
	return MU_OK;
}

/* Reads the Job's spec: parallelism, activeDeadlineSeconds (a run-time
 * limit; the smaller one wins when an annotation gives one too), the pod
 * template and its priority class. */
static int job_spec(mu__yload_t *L, const mu__ynode_t *spec, mu_job_spec_t *j,
		    jextra_t *x)
{
	const mu__ynode_t *tmpl, *ts;
	int64_t par = 1, ads = 0;
	int rc;
	if ((rc = mu__y_int_at(L, spec, "parallelism", 1, PODSET_MAX_REPLICAS,
			       &par)) ||
	    (rc = mu__y_int_at(L, spec, "activeDeadlineSeconds", 1,
			       INT64_C(3153600000), &ads)) ||
	    (rc = mu__y_map_at(L, spec, "template", true, &tmpl)) ||
	    (rc = pod_template(L, tmpl, &j->podsets[0])))
		return rc;
	j->podsets[0].replicas = (int32_t)par;
	if (ads && (!j->runtime_limit || ads * 1000 < j->runtime_limit))
		j->runtime_limit = ads * 1000;
	ts = mu__y_get(tmpl, "spec");
	x->pclass = mu__y_get(ts, "priorityClassName");
	return mu__y_preemption_policy(L, mu__y_get(ts, "preemptionPolicy"), &j->never_preempt);
}

int mu__y_job(mu__yload_t *L, const mu__ynode_t *root)
{
	static const char *const akeys[3] = {"muster.io/align", "muster.io/nic",
					     "muster.io/pin-cpus"};
	mu_job_spec_t j = {.type = MU_JOB_TRAIN, .npodsets = 1};
	const mu__ynode_t *meta, *labels, *q, *spec;
	jextra_t x = {.mm = NULL};
	int rc;
	if (!(j.podsets = mu__y_alloc(L, 1, sizeof *j.podsets)) ||
	    !(j.podsets[0].name = mu_arena_strdup(&L->into->arena, "main")))
		return mu__y_oom(L);
	if ((rc = mu__y_map_at(L, root, "metadata", true, &meta)) ||
	    (rc = mu__y_name_at(L, meta, "name", true, &j.name)) ||
	    (rc = mu__y_name_at(L, meta, "namespace", false, &j.namespace)) ||
	    (rc = mu__y_map_at(L, meta, "labels", false, &labels)))
		return rc;
	if (!(q = mu__y_get(labels, "muster.io/queue")) &&
	    !(q = mu__y_get(labels, "kueue.x-k8s.io/queue-name")))
		return mu__y_err(L, labels ? labels : meta, labels ? NULL : "labels",
				 MU_EPARSE, "the label muster.io/queue (or "
				 "kueue.x-k8s.io/queue-name) naming the job's "
				 "queue is missing");
	if ((rc = mu__y_name(L, q, &j.queue)) ||
	    (rc = job_annotations(L, meta, &j, &x)) ||
	    (rc = mu__y_map_at(L, root, "spec", true, &spec)) ||
	    (rc = job_spec(L, spec, &j, &x)) ||
	    (rc = gpu_share_annotations(L, mu__y_get(meta, "annotations"),
					&j.podsets[0])) ||
	    (rc = podset_align(L, mu__y_get(meta, "annotations"), akeys,
			       &j.podsets[0])))
		return rc;
	return job_finish(L, meta, &j, &x);
}

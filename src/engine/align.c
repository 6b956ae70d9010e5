/*
 * align.c - topology inside a node: NUMA nodes, GPU link groups, NICs and
 * pinned CPUs, and exact device assignment for pods that ask for alignment.
 *
 * A pod aligned to a NUMA node gets all its GPUs on one NUMA node, and
 * there too its NIC (want_nic) and its exclusive CPUs and memory
 * (pin_cpus).  Aligned to a link group, its GPUs share one NVLink island or
 * PCIe switch, and the NIC and CPUs come from that group's NUMA node.
 * Among the NUMA nodes (or groups) that can hold it, the tightest wins, so
 * that whole NUMA nodes stay free for bigger pods.  A node with no reported
 * topology cannot host an aligned pod: better to say so at scheduling time
 * than to fail on the node.  Work per check: O(NUMA nodes x devices).
 */
#include "engine/engine_int.h"

typedef struct plan {
	int32_t u;           /* NUMA node */
	uint64_t gpus;
	int8_t nic;
	mu_cpuset_t cpus;
	int32_t key;         /* free capacity left where it goes: lower = tighter */
} plan_t;

static int cpus_wanted(const mu__podset_t *ps)
{
	return ps->pin_cpus ? (int)(ps->req->v[MU_RES_CPU] / 1000) : 0;
}

/* The lowest k CPUs of `from`; false if it has fewer. */
static bool cpus_pick(const mu_cpuset_t *from, int k, mu_cpuset_t *out)
{
	memset(out, 0, sizeof *out);
	for (int w = 0; w < MU_CPUSET_WORDS && k > 0; w++) {
		uint64_t bits = from->w[w];
		while (bits && k > 0) {
			uint64_t low = bits & (~bits + 1);
			out->w[w] |= low;
			bits &= bits - 1;
			k--;
		}
	}
	return k == 0;
}

static mu_cpuset_t cpus_and(const mu_cpuset_t *a, const mu_cpuset_t *b)
{
	mu_cpuset_t c;
	for (int w = 0; w < MU_CPUSET_WORDS; w++)
		c.w[w] = a->w[w] & b->w[w];
	return c;
}

static int nic_pick(const mu__ntopo_t *t, int32_t u)
{
	for (int32_t i = 0; i < t->nnics; i++)
		if (t->nic_numa[i] == u && (t->free_nics >> i) & 1)
			return i;
	return -1;
}

/* GPUs for req among devices where match[g] holds: the lowest whole free
 * ones, or the share's best-fit device.  *mask 0 and false if they do not
 * fit; *free_left counts free whole devices matching. */
static bool gpus_pick(const mu__node_t *n, const bool *match, const mu_res_t *req,
		      uint64_t *mask, int32_t *free_left)
{
	int64_t want = req->v[MU_RES_GPU], milli = req->v[MU_RES_GPU_MILLI];
	int best = -1;
	*mask = 0;
	*free_left = 0;
	for (int g = 0; g < n->ngpu; g++) {
		if (!match[g])
			continue;
		*free_left += n->gpu_free[g] == 1000;
		if (want > 0 && n->gpu_free[g] == 1000) {
			*mask |= (uint64_t)1 << g;
			want--;
		}
		if (milli > 0 && n->gpu_free[g] >= milli &&
		    (best < 0 || n->gpu_free[g] < n->gpu_free[best]))
			best = g;
	}
	if (milli > 0) {
		if (best < 0)
			return false;
		*mask = (uint64_t)1 << best;
	}
	return want == 0;
}

/* Completes a plan on NUMA node u: NIC, CPUs, memory.  False if short. */
static bool plan_numa_extras(const mu__ntopo_t *t, const mu__podset_t *ps,
			     int32_t u, plan_t *p)
{
	p->u = u;
	p->nic = -1;
	if (ps->want_nic && (p->nic = (int8_t)nic_pick(t, u)) < 0)
		return false;
	int k = cpus_wanted(ps);
	if (k > 0) {
		mu_cpuset_t avail = cpus_and(&t->numa_cpus[u], &t->free_cpus);
		if (!cpus_pick(&avail, k, &p->cpus) ||
		    t->numa_mem_free[u] < ps->req->v[MU_RES_MEM])
			return false;
	} else {
		memset(&p->cpus, 0, sizeof p->cpus);
	}
	return true;
}

/* The tightest plan over link groups (GPU pods aligned to a group). */
static bool plan_groups(const mu__node_t *n, const mu__podset_t *ps, plan_t *best)
{
	const mu__ntopo_t *t = n->topo;
	bool found = false, seen[MU_MAX_GPUS] = {false};
	for (int g0 = 0; g0 < n->ngpu; g0++) {
		int8_t k = t->gpu_group[g0];
		if (k < 0 || seen[g0])
			continue;
		bool match[MU_MAX_GPUS] = {false};
		for (int g = 0; g < n->ngpu; g++)
			if (t->gpu_group[g] == k)
				match[g] = seen[g] = true;
		plan_t p;
		int32_t left;
		if (!gpus_pick(n, match, ps->req, &p.gpus, &left))
			continue;
		int32_t u = t->gpu_numa[__builtin_ctzll(p.gpus)];
		if ((ps->want_nic || ps->pin_cpus) && u < 0)
			continue;
		if (u >= 0 && !plan_numa_extras(t, ps, u, &p))
			continue;
		p.u = u;
		p.key = left;
		if (!found || p.key < best->key) {
			*best = p;
			found = true;
		}
	}
	return found;
}

/* The tightest plan over NUMA nodes. */
static bool plan_numa(const mu__node_t *n, const mu__podset_t *ps, plan_t *best)
{
	const mu__ntopo_t *t = n->topo;
	bool gpu = ps->req->v[MU_RES_GPU] || ps->req->v[MU_RES_GPU_MILLI];
	bool found = false;
	for (int32_t u = 0; u < t->nnuma; u++) {
		plan_t p;
		int32_t left = 0;
		p.gpus = 0;
		if (gpu) {
			bool match[MU_MAX_GPUS] = {false};
			for (int g = 0; g < n->ngpu; g++)
				match[g] = t->gpu_numa[g] == u;
			if (!gpus_pick(n, match, ps->req, &p.gpus, &left))
				continue;
		} else {
			mu_cpuset_t avail = cpus_and(&t->numa_cpus[u], &t->free_cpus);
			left = mu_cpuset_count(&avail);
		}
		if (!plan_numa_extras(t, ps, u, &p))
			continue;
		p.key = left;
		if (!found || p.key < best->key) {
			*best = p;
			found = true;
		}
	}
	return found;
}

static bool plan(const mu__node_t *n, const mu__podset_t *ps, plan_t *p)
{
	if (!n->topo)
		return false;
	bool gpu = ps->req->v[MU_RES_GPU] || ps->req->v[MU_RES_GPU_MILLI];
	if (ps->align == MU_ALIGN_LINK && gpu)
		return plan_groups(n, ps, p);
	return plan_numa(n, ps, p);
}

bool mu__align_fit(const mu__node_t *n, const mu__podset_t *ps)
{
	plan_t p;
	return plan(n, ps, &p);
}

void mu__align_choose(const mu__node_t *n, const mu__podset_t *ps, mu__pod_t *pod)
{
	plan_t p;
	if (!plan(n, ps, &p))
		return; /* the caller checked the fit: cannot happen */
	pod->gpus = p.gpus;
	pod->numa = (int8_t)p.u;
	pod->nic = p.nic;
	pod->cpus = p.cpus;
}

void mu__align_apply(mu__node_t *n, const mu__podset_t *ps, const mu__pod_t *pod,
		     int sign)
{
	mu__ntopo_t *t = n->topo;
	if (!t)
		return;
	if (pod->nic >= 0 && pod->nic < t->nnics) {
		uint32_t bit = (uint32_t)1 << pod->nic;
		t->free_nics = sign > 0 ? t->free_nics & ~bit : t->free_nics | bit;
	}
	for (int w = 0; w < MU_CPUSET_WORDS; w++)
		t->free_cpus.w[w] = sign > 0 ? t->free_cpus.w[w] & ~pod->cpus.w[w]
					     : t->free_cpus.w[w] | pod->cpus.w[w];
	if (ps->pin_cpus && pod->numa >= 0 && pod->numa < t->nnuma)
		t->numa_mem_free[pod->numa] -= sign * ps->req->v[MU_RES_MEM];
}

/* Checks a spec's ranges. */
static int ntopo_check(const mu_node_topo_spec_t *s)
{
	if (s->nnuma < 0 || s->nnuma > MU_MAX_NUMA || s->nnics < 0 ||
	    s->nnics > MU_MAX_NICS)
		return MU_ERANGE;
	for (int g = 0; g < MU_MAX_GPUS; g++)
		if (s->gpu_numa[g] >= s->nnuma || s->gpu_numa[g] < -1)
			return MU_ERANGE;
	for (int i = 0; i < s->nnics; i++)
		if (s->nic_numa[i] >= s->nnuma || s->nic_numa[i] < -1)
			return MU_ERANGE;
	return MU_OK;
}

int mu__ntopo_set(mu_engine_t *e, mu__node_t *n, const mu_node_topo_spec_t *s)
{
	if (!s) {
		free(n->topo);
		n->topo = NULL;
		return MU_OK;
	}
	int rc = ntopo_check(s);
	if (rc)
		return rc;
	mu__ntopo_t *t = calloc(1, sizeof *t);
	if (!t)
		return MU_ENOMEM;
	t->nnuma = s->nnuma;
	for (int32_t u = 0; u < s->nnuma; u++) {
		t->numa_cpus[u] = s->numa[u].cpus;
		t->numa_mem[u] = t->numa_mem_free[u] = s->numa[u].memory;
		for (int w = 0; w < MU_CPUSET_WORDS; w++)
			t->free_cpus.w[w] |= s->numa[u].cpus.w[w];
	}
	memcpy(t->gpu_numa, s->gpu_numa, sizeof t->gpu_numa);
	memcpy(t->gpu_group, s->gpu_group, sizeof t->gpu_group);
	t->nnics = s->nnics;
	memcpy(t->nic_numa, s->nic_numa, sizeof t->nic_numa);
	t->free_nics = s->nnics >= 32 ? UINT32_MAX : ((uint32_t)1 << s->nnics) - 1;
	free(n->topo);
	n->topo = t;
	/* What bound pods hold stays held. */
	for (int32_t i = 0; i < n->npods; i++) {
		const mu__job_t *j = &e->jobs[n->refs[i].job];
		const mu__pod_t *p = &j->pods[n->refs[i].pod];
		mu__align_apply(n, &j->podsets[mu__pod_podset(j, n->refs[i].pod)], p, +1);
	}
	return MU_OK;
}

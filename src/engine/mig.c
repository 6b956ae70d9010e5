/*
 * mig.c - MIG profiles of the MIG-capable GPU models, layout validity and
 * the layout planner (include/muster/mig.h).
 *
 * The profiles and their placements are those of NVIDIA's MIG user guide
 * ("Supported MIG profiles", and `nvidia-smi mig -lgipp`): memory slices
 * 0..7, a profile's instance starting only where its table allows.  The
 * "+me" (media extension) and "-c" (compute instance) variants are not
 * listed: a layout that asks for them is refused as unknown.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "muster/error.h"
#include "muster/mig.h"

/* Starts as bit masks. */
#define S_ANY1 0x7f  /* 0..6 */
#define S_EVEN 0x55  /* 0,2,4,6 */
#define S_024 0x15   /* 0,2,4 */
#define S_04 0x11    /* 0,4 */
#define S_0 0x01

static const mu_mig_profile_t a100_40[] = {
	{"1g.5gb", 1, 1, S_ANY1}, {"1g.10gb", 1, 2, S_EVEN},
	{"2g.10gb", 2, 2, S_024}, {"3g.20gb", 3, 4, S_04},
	{"4g.20gb", 4, 4, S_0},   {"7g.40gb", 7, 8, S_0},
};
static const mu_mig_profile_t a100_80[] = {
	{"1g.10gb", 1, 1, S_ANY1}, {"1g.20gb", 1, 2, S_EVEN},
	{"2g.20gb", 2, 2, S_024},  {"3g.40gb", 3, 4, S_04},
	{"4g.40gb", 4, 4, S_0},    {"7g.80gb", 7, 8, S_0},
};

static const mu_mig_model_t models[] = {
	{"A100-40GB", a100_40, 6},
	{"A100-80GB", a100_80, 6},
	{"H100-80GB", a100_80, 6}, /* H100 80GB: the same profiles and places */
};

/* Whether hay contains needle, ignoring case. */
static bool has_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++) {
		size_t i = 0;
		while (i < n && hay[i] &&
		       tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return true;
	}
	return false;
}

const mu_mig_model_t *mu_mig_model(const char *name)
{
	if (!name)
		return NULL;
	bool gb80 = has_ci(name, "80GB") || has_ci(name, "80G");
	if (has_ci(name, "H100"))
		return gb80 || !has_ci(name, "GB") ? &models[2] : NULL;
	if (has_ci(name, "A100"))
		return gb80 ? &models[1] : has_ci(name, "40GB") ||
		       !has_ci(name, "GB") ? &models[0] : NULL;
	return NULL;
}

int mu_mig_profile_index(const mu_mig_model_t *m, const char *name)
{
	if (!m || !name)
		return -1;
	if (!strncmp(name, "mig-", 4))
		name += 4;
	for (int i = 0; i < m->nprofiles; i++)
		if (!strcmp(m->profiles[i].name, name))
			return i;
	return -1;
}

/* The memory slices taken by g as a mask, or -1 when two overlap or one is
 * out of place; *compute gets the compute slices used. */
static int used_slots(const mu_mig_model_t *m, const mu_mig_gpu_t *g, int *compute)
{
	int mask = 0;
	*compute = 0;
	for (int i = 0; i < g->n; i++) {
		if (g->prof[i] < 0 || g->prof[i] >= m->nprofiles)
			return -1;
		const mu_mig_profile_t *p = &m->profiles[g->prof[i]];
		int s = g->start[i];
		if (s < 0 || s >= MU_MIG_SLOTS || !(p->starts >> s & 1) ||
		    s + p->size > MU_MIG_SLOTS)
			return -1;
		int bits = ((1 << p->size) - 1) << s;
		if (mask & bits)
			return -1;
		mask |= bits;
		*compute += p->compute;
	}
	return mask;
}

bool mu_mig_valid(const mu_mig_model_t *m, const mu_mig_gpu_t *g)
{
	int c;
	if (!m || !g || g->n < 0 || g->n > MU_MIG_MAX_INST || (!g->enabled && g->n))
		return false;
	return used_slots(m, g, &c) >= 0 && c <= MU_MIG_COMPUTE;
}

/* Adds one instance of profile p to g at the highest free start; false
 * when it does not fit. */
static bool gpu_add(const mu_mig_model_t *m, mu_mig_gpu_t *g, int p)
{
	int c, mask = used_slots(m, g, &c);
	const mu_mig_profile_t *pr = &m->profiles[p];
	if (mask < 0 || g->n >= MU_MIG_MAX_INST || c + pr->compute > MU_MIG_COMPUTE)
		return false;
	for (int s = MU_MIG_SLOTS - 1; s >= 0; s--) {
		int bits = ((1 << pr->size) - 1) << s;
		if (!(pr->starts >> s & 1) || s + pr->size > MU_MIG_SLOTS || (mask & bits))
			continue;
		g->prof[g->n] = (int8_t)p;
		g->start[g->n++] = (int8_t)s;
		return true;
	}
	return false;
}

/* How many GPUs to keep whole first: all that whole pods ask for when the
 * demand fits, else their share of the demand's compute (rounded up). */
static int plan_keep(const mu_mig_model_t *m, int ngpu, int whole,
		     const int32_t *demand)
{
	if (whole <= 0)
		return 0;
	double mig = 0, w = (double)whole * MU_MIG_COMPUTE;
	for (int p = 0; p < m->nprofiles; p++)
		mig += (double)demand[p] * m->profiles[p].compute;
	int keep = whole < ngpu ? whole : ngpu;
	if (w + mig > (double)ngpu * MU_MIG_COMPUTE) {
		int share = (int)((double)ngpu * w / (w + mig) + 0.999999);
		keep = share < keep ? share : keep;
	}
	return keep;
}

void mu_mig_plan(const mu_mig_model_t *m, int ngpu, int whole,
		 const int32_t *demand, mu_mig_gpu_t *out, int32_t *served,
		 int *whole_served)
{
	int keep = plan_keep(m, ngpu, whole, demand);
	for (int i = 0; i < ngpu; i++)
		out[i] = (mu_mig_gpu_t){.enabled = false};
	int opened = keep; /* GPUs keep..opened-1 have MIG on */
	for (int p = m->nprofiles - 1; p >= 0; p--) {
		int32_t got = 0;
		for (int32_t k = 0; k < demand[p]; k++) {
			bool ok = false;
			for (int g = keep; g < opened && !ok; g++)
				ok = gpu_add(m, &out[g], p);
			if (!ok && opened < ngpu) {
				out[opened].enabled = true;
				ok = gpu_add(m, &out[opened++], p);
			}
			if (!ok)
				break; /* no GPU holds one more of this size */
			got++;
		}
		if (served)
			served[p] = got;
	}
	/* GPUs no instance needed serve more whole pods */
	int left = ngpu - opened;
	if (whole_served)
		*whole_served = keep + (whole - keep < left ? whole - keep : left);
}

void mu_mig_count(const mu_mig_model_t *m, const mu_mig_gpu_t *g,
		  int32_t *count)
{
	for (int i = 0; i < g->n; i++)
		if (g->prof[i] >= 0 && g->prof[i] < m->nprofiles)
			count[g->prof[i]]++;
}

/* The node's GPU model as MIG knows it, or NULL. */
static const mu_mig_model_t *node_model(const mu_node_spec_t *n)
{
	const mu_mig_model_t *m = mu_mig_model(n->gpu_model);
	for (size_t i = 0; !m && i < n->nlabels; i++)
		if (!strcmp(n->labels[i].key, "nvidia.com/gpu.product"))
			m = mu_mig_model(n->labels[i].value);
	return m;
}

/* The node's physical GPUs: nvidia.com/gpu.count, else its devices. */
static int node_gpus(const mu_node_spec_t *n)
{
	for (size_t i = 0; i < n->nlabels; i++) {
		if (strcmp(n->labels[i].key, "nvidia.com/gpu.count"))
			continue;
		int v = 0;
		for (const char *p = n->labels[i].value; p && *p >= '0' && *p <= '9' && v <= MU_MAX_GPUS; p++)
			v = v * 10 + (*p - '0');
		if (v > 0 && v <= MU_MAX_GPUS)
			return v;
	}
	return (int)n->alloc.v[MU_RES_GPU];
}

/* Adds the jobs' demand for model m's profiles into demand (nprofiles)
 * and whole GPUs into *whole.  O(pod sets x extended resources). */
static void job_demand(const mu_mig_model_t *m, const mu_job_spec_t *jobs,
		       size_t njobs, int32_t *demand, int64_t *whole)
{
	for (size_t j = 0; j < njobs; j++) {
		for (size_t p = 0; p < jobs[j].npodsets; p++) {
			const mu_podset_spec_t *ps = &jobs[j].podsets[p];
			*whole += ps->req.v[MU_RES_GPU] * ps->replicas;
			for (size_t e = 0; e < ps->next; e++) {
				const char *nm = ps->ext[e].name;
				if (strncmp(nm, "nvidia.com/mig-", 15))
					continue;
				int k = mu_mig_profile_index(m, nm + 11);
				int64_t add = ps->ext[e].qty * ps->replicas; /* both bounded by the loader */
				if (k >= 0)
					demand[k] = add > INT32_MAX - demand[k] ? INT32_MAX
						    : demand[k] + (int32_t)add;
			}
		}
	}
}

int mu_mig_plan_nodes(const mu_node_spec_t *nodes, size_t nnodes,
		      const mu_job_spec_t *jobs, size_t njobs,
		      mu_mig_node_plan_t *out, int cap)
{
	int n = 0;
	for (size_t i = 0; i < nnodes; i++) {
		const mu_mig_model_t *m = node_model(&nodes[i]);
		int g = node_gpus(&nodes[i]);
		if (!m || g <= 0)
			continue;
		if (n == cap)
			return MU_ELIMIT;
		out[n++] = (mu_mig_node_plan_t){.node = nodes[i].name, .model = m, .ngpu = g};
	}
	int64_t whole_left = -1;
	for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
		const mu_mig_model_t *m = &models[k];
		int32_t demand[MU_MIG_MAX_PROFILES] = {0};
		int64_t whole = 0;
		int pool = 0;
		for (int i = 0; i < n; i++)
			pool += out[i].model == m ? out[i].ngpu : 0;
		if (!pool)
			continue;
		job_demand(m, jobs, njobs, demand, &whole);
		if (whole_left < 0)
			whole_left = whole;
		mu_mig_gpu_t *all = calloc((size_t)pool, sizeof *all);
		if (!all)
			return MU_ENOMEM;
		int ws = 0;
		mu_mig_plan(m, pool, whole_left > INT32_MAX ? INT32_MAX : (int)whole_left,
			    demand, all, NULL, &ws);
		whole_left -= ws;
		for (int i = 0, at = 0; i < n; i++) {
			if (out[i].model != m)
				continue;
			memcpy(out[i].gpus, all + at, (size_t)out[i].ngpu * sizeof *all);
			at += out[i].ngpu;
		}
		free(all);
	}
	return n;
}

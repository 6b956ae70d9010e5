/*
 * model.c - small helpers on the public model: names of enums, defaults,
 * resource vector conversions, and mu_strerror().
 */
#include <string.h>

#include "muster/engine.h"


const char *mu_res_name(int slot)
{
	switch (slot) {
	case MU_RES_CPU: return "cpu";
	case MU_RES_MEM: return "memory";
	case MU_RES_GPU: return "nvidia.com/gpu";
	case MU_RES_GPU_MILLI: return "muster.io/gpu-milli";
	case MU_RES_PODS: return "pods";
	default: return "extended";
	}
}

mu_res_t mu_res_acct(const mu_res_t *req)
{
	mu_res_t a = *req;
	a.v[MU_RES_GPU] = req->v[MU_RES_GPU] * 1000 + req->v[MU_RES_GPU_MILLI];
	a.v[MU_RES_GPU_MILLI] = 0;
	return a;
}

void mu_queue_spec_defaults(mu_queue_spec_t *q)
{
	memset(q, 0, sizeof *q);
	for (int r = 0; r < MU_RES_MAX; r++) {
		q->limit.v[r] = MU_RES_UNLIMITED;
		q->weight[r] = 1.0;
	}
}

const char *mu_job_type_name(mu_job_type_t t)
{
	switch (t) {
	case MU_JOB_TRAIN: return "train";
	case MU_JOB_INFERENCE: return "inference";
	case MU_JOB_INTERACTIVE: return "interactive";
	case MU_JOB_BATCH: return "batch";
	}
	return "unknown";
}

int32_t mu_job_spec_pods(const mu_job_spec_t *j)
{
	int64_t n = 0;
	for (size_t i = 0; i < j->npodsets; i++)
		n += j->podsets[i].replicas;
	return n > INT32_MAX ? INT32_MAX : (int32_t)n;
}

const char *mu_why_name(mu_why_t w)
{
	switch (w) {
	case MU_WHY_NONE: return "None";
	case MU_WHY_UNSCHEDULABLE: return "Unschedulable";
	case MU_WHY_GANG: return "Gang";
	case MU_WHY_QUEUE_LIMIT: return "QueueLimit";
	case MU_WHY_OVER_QUOTA: return "OverQuota";
	case MU_WHY_BLOCKED: return "Blocked";
	case MU_WHY_PREEMPTED: return "Preempted";
	case MU_WHY_TOPOLOGY: return "Topology";
	case MU_WHY_COUNT: break;
	}
	return "Unknown";
}

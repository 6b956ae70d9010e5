/*
 * report_json.c - writes a simulation result as one JSON object.
 *
 *   {"summary": {...}, "jobs": [...], "queues": [...], "samples": [...]}
 *
 * One job, queue or sample per line, so the file diffs and greps well.
 * Seconds are printed with millisecond precision (%.3f), ratios with six
 * significant digits (%.6g); a value that is not finite, and a start or end
 * time below zero (never happened), is written as null.  Strings are
 * escaped per RFC 8259; valid UTF-8 passes through and invalid bytes become
 * U+FFFD, so the output is always valid UTF-8.
 */
#include <inttypes.h>
#include <math.h>

#include "muster/sim.h"
#include "muster/report.h"


/* Writes v with printf format fmt, or null when v is not finite. */
static void json_num(FILE *f, const char *fmt, double v)
{
	if (isfinite(v))
		fprintf(f, fmt, v == 0 ? 0.0 : v); /* no "-0.000" */
	else
		fputs("null", f);
}

/* A time that is below zero when the event never happened. */
static void json_time(FILE *f, double v)
{
	if (v < 0)
		fputs("null", f);
	else
		json_num(f, "%.3f", v);
}

static void write_summary(FILE *f, const mu_sim_summary_t *s)
{
	fprintf(f, "  \"summary\": {\"jobs\": %" PRId64 ", \"completed\": %" PRId64
		", \"gpu_utilization\": ", s->jobs, s->completed);
	json_num(f, "%.6g", s->gpu_utilization);
	const struct {
		const char *key;
		double v;
	} secs[] = {
		{"avg_wait_s", s->avg_wait_s}, {"p50_wait_s", s->p50_wait_s},
		{"p95_wait_s", s->p95_wait_s}, {"p99_wait_s", s->p99_wait_s},
		{"avg_jct_s", s->avg_jct_s}, {"p50_jct_s", s->p50_jct_s},
		{"p95_jct_s", s->p95_jct_s}, {"p99_jct_s", s->p99_jct_s},
		{"makespan_s", s->makespan_s},
	};
	for (size_t i = 0; i < sizeof secs / sizeof *secs; i++) {
		fprintf(f, ",%s\"%s\": ", i % 4 == 0 ? "\n    " : " ", secs[i].key);
		json_num(f, "%.3f", secs[i].v);
	}
	fprintf(f, ",\n    \"preemptions\": %" PRId64 ", \"moves\": %" PRId64
		", \"cycles\": %" PRId64 ", \"total_gpus\": %" PRId64 ", \"dra_gpus\": %" PRId64
		", \"engine_s\": ",
		s->preemptions, s->moves, s->cycles, s->total_gpus, s->dra_gpus);
	json_num(f, "%.6f", s->engine_s);
	fputs("},\n", f);
}

/* One line per job; O(njobs), stops early once the stream has failed. */
static void write_jobs(FILE *f, const mu_sim_result_t *r)
{
	fputs("  \"jobs\": [", f);
	for (size_t i = 0; i < r->njobs && !ferror(f); i++) {
		const mu_sim_job_t *j = &r->jobs[i];
		fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
		mu__json_str(f, j->name);
		fputs(", \"queue\": ", f);
		mu__json_str(f, j->queue);
		fputs(", \"type\": ", f);
		mu__json_str(f, mu_job_type_name(j->type));
		fputs(", \"submit_s\": ", f);
		json_num(f, "%.3f", j->submit_s);
		fputs(", \"start_s\": ", f);
		json_time(f, j->start_s);
		fputs(", \"end_s\": ", f);
		json_time(f, j->end_s);
		fputs(", \"gpus\": ", f);
		json_num(f, "%.6g", (double)j->gpu_milli / 1000.0);
		fprintf(f, ", \"pods\": %" PRId32 ", \"preemptions\": %" PRId32
			", \"moves\": %" PRId32 "}", j->pods, j->preemptions, j->moves);
	}
	fputs(r->njobs ? "\n  ],\n" : "],\n", f);
}

static void write_queues(FILE *f, const mu_sim_result_t *r)
{
	fputs("  \"queues\": [", f);
	for (size_t i = 0; i < r->nqueues && !ferror(f); i++) {
		const mu_sim_queue_t *q = &r->queues[i];
		fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
		mu__json_str(f, q->name);
		fputs(", \"gpu_seconds\": ", f);
		json_num(f, "%.3f", q->gpu_seconds);
		fputs(", \"share\": ", f);
		json_num(f, "%.6g", q->share);
		fputs(", \"deserved_gpus\": ", f);
		json_num(f, "%.6g", q->deserved_gpus);
		fputs(", \"fair_gpu_seconds\": ", f);
		json_num(f, "%.3f", q->fair_gpu_seconds);
		fprintf(f, ", \"jobs\": %" PRId32 "}", q->jobs);
	}
	fputs(r->nqueues ? "\n  ],\n" : "],\n", f);
}

static void write_samples(FILE *f, const mu_sim_result_t *r)
{
	fputs("  \"samples\": [", f);
	for (size_t i = 0; i < r->nsamples && !ferror(f); i++) {
		const mu_sim_sample_t *s = &r->samples[i];
		fputs(i ? ",\n    {\"t_s\": " : "\n    {\"t_s\": ", f);
		json_num(f, "%.3f", s->t_s);
		fputs(", \"gpu_util\": ", f);
		json_num(f, "%.6g", s->gpu_util);
		fprintf(f, ", \"pending_jobs\": %" PRId32 ", \"running_jobs\": %"
			PRId32 "}", s->pending_jobs, s->running_jobs);
	}
	fputs(r->nsamples ? "\n  ]\n" : "]\n", f);
}

/* Writes the whole result; O(jobs + queues + samples).  The stream stays
 * the caller's; it is flushed so that late write errors are seen. */
int mu_sim_write_json(const mu_sim_result_t *r, FILE *f)
{
	if (!r || !f)
		return MU_EINVAL;
	fputs("{\n", f);
	write_summary(f, &r->summary);
	write_jobs(f, r);
	write_queues(f, r);
	write_samples(f, r);
	fputs("}\n", f);
	if (fflush(f) != 0 || ferror(f))
		return MU_EIO;
	return MU_OK;
}

/*
 * bench_run.c - running the shapes of `muster bench`: the registry, one
 * forked child per shape (so that each reports its own peak RSS), the
 * preempt shape by running bench/bench_preempt.  The result records, their
 * JSON lines and the targets are in bench_record.c.
 *
 * A child writes its records as JSON lines into a pipe and leaves with
 * _exit(); the parent parses them back (jansson) and turns the child's
 * exit status into an error code.  Nothing here prints.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench_int.h"
#include "muster/report.h"

void mu_bench_opts_defaults(mu_bench_opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->isolate = true;
	o->data_dir = "../shared/data";
	o->seed = 1;
	o->scale = 1;
}

/* --- running ------------------------------------------------------------- */

typedef struct shape {
	const char *name;
	int (*run)(const mu_bench_opts_t *o, mu_bench_results_t *out);
} shape_t;

static int run_preempt(const mu_bench_opts_t *o, mu_bench_results_t *out);

/* gang-topology: the gang sizes, then the blocking phase (huge gangs
 * that cannot start, reservations made for them; its own record, shape
 * gang-blocked). */
static int run_gang_topology(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	int rc = mu__bench_gang(o, out);
	return rc == MU_OK ? mu__bench_gang_blocked(o, out) : rc;
}

static const shape_t shapes[] = {
	{"basic", mu__bench_basic},
	{"basic-mixed", mu__bench_basic_mixed},
	{"gang-topology", run_gang_topology},
	{"preempt", run_preempt},
	{"cycle", mu__bench_cycle},
	{"scale", mu__bench_scale},
	{"scaling", mu__bench_scaling},
	{"fleet", mu__bench_fleet},
	{"unique", mu__bench_unique},
	{"backlog", mu__bench_backlog},
	{"blocked-selectors", mu__bench_selectors},
	{"gangs4", mu__bench_gangs4},
	{"gang-blocked", mu__bench_gang_blocked},
	{"classes", mu__bench_classes},
	{"reclaim-queues", mu__bench_reclaim},
	{"openb-replay", mu__bench_openb_replay},
	{"affinity", mu__bench_affinity},
};

#define NSHAPES (sizeof shapes / sizeof *shapes)

const char *const *mu_bench_shapes(size_t *n)
{
	static const char *const names[NSHAPES] = {
		"basic", "basic-mixed", "gang-topology", "preempt", "cycle",
		"scale", "scaling", "fleet", "unique", "backlog", "blocked-selectors",
		"gangs4", "gang-blocked", "classes", "reclaim-queues", "openb-replay",
		"affinity",
	};
	*n = NSHAPES;
	return names;
}

static const shape_t *shape_find(const char *name)
{
	for (size_t i = 0; name && i < NSHAPES; i++)
		if (!strcmp(shapes[i].name, name))
			return &shapes[i];
	return NULL;
}

bool mu_bench_shape_known(const char *name)
{
	return shape_find(name) != NULL;
}

/* Reads JSON lines from fd (which it closes) into out until EOF.  Lines
 * that are not records are skipped.  MU_ENOMEM. */
static int read_records(int fd, mu_bench_results_t *out)
{
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return MU_EIO;
	}
	char *line = NULL;
	size_t cap = 0;
	int rc = MU_OK;
	while (rc == MU_OK && getline(&line, &cap, f) > 0) {
		mu_bench_result_t r;
		if (mu_bench_parse(line, &r) != MU_OK)
			continue;
		mu_bench_result_t *slot = mu_bench_results_add(out, r.shape);
		if (!slot)
			rc = MU_ENOMEM;
		else
			*slot = r;
	}
	free(line);
	fclose(f);
	return rc;
}

/* Waits for pid; an exit status 1..9 is a negated mu_err_t, anything
 * else but 0 is MU_EIO. */
static int reap(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return MU_EIO;
	if (!WIFEXITED(st))
		return MU_EIO;
	int code = WEXITSTATUS(st);
	return code == 0 ? MU_OK : code <= 9 ? -code : MU_EIO;
}

/* In the child: runs the shape, writes its records to fd, and leaves
 * with the negated error code (its memory goes with the process). */
static void child_main(const shape_t *s, const mu_bench_opts_t *o, int fd)
{
	mu_bench_results_t rs;
	mu_bench_results_init(&rs);
	int rc = s->run(o, &rs);
	FILE *f = fdopen(fd, "w");
	for (size_t i = 0; f && rc == MU_OK && i < rs.n; i++)
		mu_bench_json(f, &rs.v[i]);
	if (!f || fclose(f) != 0)
		rc = rc ? rc : MU_EIO;
	mu_bench_results_release(&rs);
	_exit(rc == MU_OK ? 0 : -rc);
}

/* Runs shape s in a forked child and collects its records. */
static int run_forked(const shape_t *s, const mu_bench_opts_t *o,
		      mu_bench_results_t *out)
{
	int fds[2];
	if (pipe(fds) != 0)
		return MU_EIO;
	fflush(NULL); /* or the child's exit would not, but buffers double */
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return MU_EIO;
	}
	if (pid == 0) {
		close(fds[0]);
		child_main(s, o, fds[1]);
	}
	close(fds[1]);
	int rc = read_records(fds[0], out);
	int st = reap(pid);
	return rc ? rc : st;
}

/* A record of bench_preempt, which exited 0 (every preemptor placed):
 * its thread-CPU percentiles become p50_us and p99_us, like every other
 * shape's, and its wall-clock ones move aside. */
static void preempt_fixup(mu_bench_result_t *r)
{
	r->decisions = r->preemptors;
	r->placed = r->preemptors;
	if (isfinite(r->p50_cpu_us) && isfinite(r->p99_cpu_us)) {
		r->p50_wall_us = r->p50_us;
		r->p99_wall_us = r->p99_us;
		r->p50_us = r->p50_cpu_us;
		r->p99_us = r->p99_cpu_us;
		r->p50_cpu_us = r->p99_cpu_us = NAN;
	}
}

/* The preempt shape: bench_preempt's "preempt" and "preempt-varied" runs
 * (decision time per high-priority pod that needs victims; the second with
 * varied victims in four queues), read from its stdout. */
static int run_preempt(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	const char *bin = o->preempt_bin;
	if (!bin || access(bin, X_OK) != 0) {
		mu_bench_result_t *r = mu_bench_results_add(out, "preempt");
		if (!r)
			return MU_ENOMEM;
		snprintf(r->skipped, sizeof r->skipped, "bench_preempt not found "
			 "(make bench builds it)");
		return MU_OK;
	}
	/* the uniform shape, and varied victims in several queues */
	char *full[] = {(char *)bin, "--shape", "preempt,preempt-varied", NULL};
	char *quick[] = {(char *)bin, "--shape", "preempt,preempt-varied", "--nodes", "100",
			 "--pods", "400", "--preemptors", "10", NULL};
	int fds[2];
	if (pipe(fds) != 0)
		return MU_EIO;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return MU_EIO;
	}
	if (pid == 0) {
		close(fds[0]);
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(127);
		close(fds[1]);
		execv(bin, o->quick ? quick : full);
		_exit(127);
	}
	close(fds[1]);
	size_t before = out->n;
	int rc = read_records(fds[0], out);
	int st = reap(pid);
	rc = rc ? rc : st;
	for (size_t i = before; i < out->n; i++)
		preempt_fixup(&out->v[i]);
	return rc == MU_OK && out->n == before ? MU_EIO : rc;
}

int mu_bench_run(const char *name, const mu_bench_opts_t *o,
		 mu_bench_results_t *out)
{
	const shape_t *s = shape_find(name);
	if (!s)
		return MU_ENOENT;
	if (o->isolate && s->run != run_preempt)
		return run_forked(s, o, out);
	return s->run(o, out);
}

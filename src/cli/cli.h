/*
 * cli.h - the subcommands of the `muster` command, one file each.
 *
 * Each mu_cmd_* takes the arguments after the subcommand name (argv[0] is the
 * subcommand) and returns the process exit code: 0 success, 1 a failed
 * check or run, 2 bad usage or bad input.
 */
#ifndef MUSTER_CLI_H
#define MUSTER_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>

int mu_cmd_simulate(int argc, char **argv);
int mu_cmd_scenario(int argc, char **argv);
int mu_cmd_explain(int argc, char **argv);
int mu_cmd_queues(int argc, char **argv);
int mu_cmd_up(int argc, char **argv);
int mu_cmd_node(int argc, char **argv);
int mu_cmd_eval(int argc, char **argv);
int mu_cmd_eval_openb(int argc, char **argv);
int mu_cmd_eval_queues(int argc, char **argv);
int mu_cmd_eval_pools(int argc, char **argv);
int mu_cmd_agent(int argc, char **argv);
int mu_cmd_bench(int argc, char **argv);
int mu_cmd_scheduler(int argc, char **argv);
int mu_cmd_dispatch(int argc, char **argv);
int mu_cmd_kexplain(int argc, char **argv);
int mu_cmd_mig(int argc, char **argv);
/* Reads a bearer token from a file (surrounding blanks and newlines
 * dropped) into buf; prints why to stderr and returns MU_EXIT_USAGE when
 * it cannot (missing, empty, longer than len - 1). */
int mu_cli_read_token(const char *cmd, const char *path, char *buf, size_t len);
/* A result file: mu_cli_create() opens path for writing (NULL, said on
 * stderr, when it cannot); mu_cli_finish() closes it and turns the
 * writer's code rc into an exit code, saying "CMD: PATH: write failed" on
 * failure and, when say, "wrote PATH" on success (src/cli/output.c). */
FILE *mu_cli_create(const char *path);
int mu_cli_finish(const char *cmd, const char *path, FILE *f, int rc, bool say);
/* A subcommand's arguments (args.c): flags set a bool; any other argument
 * but -h/--help is an option with a value, parsed by option(ctx, name,
 * value), which returns MU_OK, MU_EINVAL when it does not know the name, or
 * another code for a bad value.  mu_cli_parse() returns -1 after printing
 * the usage, 0, or MU_EXIT_USAGE after saying what was wrong on stderr.
 * O(arguments x flags). */
typedef struct mu_cli_flag {
	const char *name;
	bool *set;
} mu_cli_flag_t;
typedef struct mu_cli_parser {
	const char *cmd; /* "muster eval philly", for messages */
	void (*usage)(FILE *f);
	const mu_cli_flag_t *flags;
	size_t nflags;
	int (*option)(void *ctx, const char *name, const char *value);
	void *ctx;
} mu_cli_parser_t;
int mu_cli_parse(const mu_cli_parser_t *p, int argc, char **argv);
int mu_cmd_eval_topology(int argc, char **argv);
int mu_cmd_eval_philly(int argc, char **argv);
int mu_cmd_eval_fleet(int argc, char **argv);
int mu_cmd_eval_slurm(int argc, char **argv);

/* Exit codes. */
enum { MU_EXIT_OK = 0, MU_EXIT_FAIL = 1, MU_EXIT_USAGE = 2 };

/* daemon.c: the stop flag of SIGINT/SIGTERM, and a lease identity. */
volatile sig_atomic_t *mu__cli_stop_on_signals(void);
const char *mu__cli_daemon_id(const char *prefix, char *buf, size_t len);

/* up_certs.c: muster up's CA, serving and client certificates in dir
 * (made at the first start, reused after; the serving ones only when
 * serving), their paths in *p.  MU_EXIT_OK, or MU_EXIT_FAIL with a message
 * on stderr. */
typedef struct mu__up_certs {
	char ca[4096], ca_key[4096], tls_crt[4096], tls_key[4096], admin_crt[4096], admin_key[4096];
	char sa_key[4096]; /* the service account token signing key (kube's sa.key) */
} mu__up_certs_t;
int mu__cli_up_certs(const char *dir, const char *listen, bool serving, mu__up_certs_t *p);

#endif

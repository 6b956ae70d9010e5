/*
 * cli.h - the subcommands of the `muster` command, one file each.
 *
 * Each mu_cmd_* takes the arguments after the subcommand name (argv[0] is the
 * subcommand) and returns the process exit code: 0 success, 1 a failed
 * check or run, 2 bad usage or bad input.
 */
#ifndef MUSTER_CLI_H
#define MUSTER_CLI_H

int mu_cmd_simulate(int argc, char **argv);
int mu_cmd_scenario(int argc, char **argv);
int mu_cmd_explain(int argc, char **argv);
int mu_cmd_queues(int argc, char **argv);
int mu_cmd_up(int argc, char **argv);
int mu_cmd_node(int argc, char **argv);
int mu_cmd_eval(int argc, char **argv);
int mu_cmd_eval_openb(int argc, char **argv);
int mu_cmd_eval_queues(int argc, char **argv);
int mu_cmd_agent(int argc, char **argv);
int mu_cmd_bench(int argc, char **argv);
int mu_cmd_scheduler(int argc, char **argv);
int mu_cmd_kexplain(int argc, char **argv);
/* Reads a bearer token from a file (surrounding blanks and newlines
 * dropped) into buf; prints why to stderr and returns MU_EXIT_USAGE when
 * it cannot (missing, empty, longer than len - 1). */
int mu_cli_read_token(const char *cmd, const char *path, char *buf, size_t len);
int mu_cmd_eval_topology(int argc, char **argv);
int mu_cmd_eval_philly(int argc, char **argv);
int mu_cmd_eval_fleet(int argc, char **argv);
int mu_cmd_eval_slurm(int argc, char **argv);

/* Exit codes. */
enum { MU_EXIT_OK = 0, MU_EXIT_FAIL = 1, MU_EXIT_USAGE = 2 };

#endif

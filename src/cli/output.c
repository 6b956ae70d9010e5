/*
 * output.c - writing a command's result file (JSON, HTML) the same way in
 * every command: the file is created, the command's writer fills it, and
 * a failed open, write or close is said on stderr with the command and the
 * path.  The caller owns nothing after mu_cli_finish().
 */
#include <stdio.h>

#include "cli/cli.h"
#include "muster/error.h"

FILE *mu_cli_create(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		perror(path);
	return f;
}

int mu_cli_finish(const char *cmd, const char *path, FILE *f, int rc, bool say)
{
	if (fclose(f) != 0 || rc != MU_OK) {
		fprintf(stderr, "%s: %s: write failed\n", cmd, path);
		return MU_EXIT_FAIL;
	}
	if (say)
		printf("wrote %s\n", path);
	return MU_EXIT_OK;
}

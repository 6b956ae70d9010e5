/*
 * error.c - the text of muster's error codes, and the one formatter of
 * input diagnostics ("FILE:LINE:COL: what was wrong and what was
 * expected") that loaders and parsers of every layer fill.
 */
#include <stdarg.h>
#include <stdio.h>

#include "muster/error.h"

const char *mu_strerror(int err)
{
	switch (err) {
	case MU_OK: return "success";
	case MU_ENOMEM: return "out of memory";
	case MU_EINVAL: return "invalid argument";
	case MU_ENOENT: return "no such object";
	case MU_EEXIST: return "object already exists";
	case MU_EPARSE: return "malformed input";
	case MU_ERANGE: return "value out of range";
	case MU_EIO: return "input/output error";
	case MU_ESTATE: return "not valid in the current state";
	case MU_ELIMIT: return "a fixed limit of muster was exceeded";
	default: return "unknown error";
	}
}

int mu__diag(mu_diag_t *diag, int err, const char *file, long line, long col,
	     const char *fmt, ...)
{
	if (!diag)
		return err;
	int n;
	if (line > 0 && col > 0)
		n = snprintf(diag->msg, sizeof diag->msg, "%s:%ld:%ld: ", file, line, col);
	else if (line > 0)
		n = snprintf(diag->msg, sizeof diag->msg, "%s:%ld: ", file, line);
	else
		n = snprintf(diag->msg, sizeof diag->msg, "%s: ", file);
	if (n < 0 || (size_t)n >= sizeof diag->msg)
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(diag->msg + n, sizeof diag->msg - (size_t)n, fmt, ap);
	va_end(ap);
	return err;
}

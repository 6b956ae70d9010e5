/*
 * error.h - the one error enum of muster.
 *
 * Every library function that can fail returns an int: MU_OK (0) on success or
 * one of the negative mu_err_t codes below.  mu_strerror() turns a code into a
 * short, static, human-readable string; a mu_diag_t says where in an input
 * and why.  (src/util/error.c)  Only the CLI turns errors into exit
 * codes; the libraries never exit.
 */
#ifndef MUSTER_ERROR_H
#define MUSTER_ERROR_H

typedef enum mu_err {
	MU_OK = 0,
	MU_ENOMEM = -1,  /* out of memory */
	MU_EINVAL = -2,  /* invalid argument or value */
	MU_ENOENT = -3,  /* no such object (node, queue, job, file) */
	MU_EEXIST = -4,  /* object already exists */
	MU_EPARSE = -5,  /* malformed input */
	MU_ERANGE = -6,  /* value out of range */
	MU_EIO = -7,     /* read or write failed */
	MU_ESTATE = -8,  /* operation not valid in the object's current state */
	MU_ELIMIT = -9,  /* a fixed capacity of muster was exceeded */
} mu_err_t;

/* Returns a static string describing err; never NULL. */
const char *mu_strerror(int err);

/* Where and why an input was refused: "FILE:LINE[:COL]: what was wrong and
 * what was expected", filled by the loaders and parsers of every layer. */
typedef struct mu_diag {
	char msg[1024];
} mu_diag_t;

/* Formats "FILE:LINE:COL: msg" (":COL" left out when col <= 0, ":LINE" when
 * line <= 0) into diag, if diag is not NULL.  Returns err for chaining. */
int mu__diag(mu_diag_t *diag, int err, const char *file, long line, long col,
	     const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#endif

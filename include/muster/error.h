/*
 * error.h - the one error enum of muster.
 *
 * Every library function that can fail returns an int: MU_OK (0) on success or
 * one of the negative mu_err_t codes below.  mu_strerror() turns a code into a
 * short, static, human-readable string.  Only the CLI turns errors into exit
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

#endif

/*
 * csr.h - what csr.c (CertificateSigningRequests: the API side and the
 * signer) takes from csr_check.c (their checks).
 */
#ifndef MUSTER_APISERVER_CSR_H
#define MUSTER_APISERVER_CSR_H

#include <gnutls/x509.h>
#include <jansson.h>
#include <stdbool.h>

/* Parses spec.request (base64 of PEM) of obj into *crq (caller deinits);
 * false with a message as Go's x509 parser and kube's ParseCSR word it.
 * Bounded by the request's size. */
bool mu__csr_parse_request(const json_t *obj, gnutls_x509_crq_t *crq, char *msg, size_t len);
/* How many status.conditions of type t obj has. */
int mu__csr_count_cond(const json_t *obj, const char *t);
/* Whether u is a usage kube knows; its key usage bit (GNUTLS_KEY_*, 0 for
 * an extended one) and extended key usage OID (NULL for a key usage). */
bool mu__csr_usage(const char *u, unsigned *key_bit, const char **ext_oid);

#endif

/*
 * fuzz_csr.c - libFuzzer target for what muster up reads of a
 * CertificateSigningRequest's spec.request (src/apiserver/csr_check.c): the
 * input is the PEM text a client sends (base64-encoded into the object
 * here, as the JSON form carries it).  It is validated as kube-apiserver
 * validates a create (PEM block type, the PKCS#10 parse and its signature,
 * through GnuTLS), and the table row is made.  A valid request must give
 * no cause on spec.request; the checks must never crash or leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "apiserver/csr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *b64 = mu__b64enc(data, size);
	if (!b64)
		return 0;
	json_t *o = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:[s, s], s:i}, s:{s:[{s:s, s:s}]}}", "apiVersion",
			      "certificates.k8s.io/v1", "kind", "CertificateSigningRequest", "metadata", "name", "f",
			      "spec", "request", b64, "signerName", "kubernetes.io/kube-apiserver-client", "usages",
			      "client auth", "digital signature", "expirationSeconds", 600, "status", "conditions",
			      "type", "Approved", "status", "True");
	free(b64);
	if (!o)
		return 0;
	mu__verr_t e = {0};
	mu__validate_csr(o, NULL, &e);
	gnutls_x509_crq_t crq;
	char msg[300];
	bool parsed = mu__csr_parse_request(o, &crq, msg, sizeof msg);
	if (parsed)
		gnutls_x509_crq_deinit(crq);
	for (int i = 0; i < e.n; i++)
		if (parsed && !strcmp(e.c[i].field, "spec.request"))
			abort(); /* a request that parses has no cause on it */
	if (mu__csr_count_cond(o, "Approved") != 1)
		abort();
	json_t *cells = json_array();
	mu__row_csr(o, 0, cells);
	if (json_array_size(cells) != 6)
		abort();
	json_decref(cells);
	json_decref(o);
	return 0;
}

/*
 * sysfs.h - internals of the node agent: parsers for the contents of sysfs
 * files, bounded file and directory readers, and the document tree that the
 * NodeResourceTopology writers print.
 *
 * Every parser takes a buffer and its length (no NUL needed, a NUL inside is
 * garbage), accepts trailing whitespace (the kernel ends values with a
 * newline), returns MU_OK, MU_EPARSE or MU_ERANGE, and writes to its outputs
 * only on success.  They are what fuzz/fuzz_sysfs.c exercises.
 */
#ifndef MUSTER_AGENT_SYSFS_H
#define MUSTER_AGENT_SYSFS_H

#include "muster/agent.h"

/* --- parsers (sysfs.c) --- */

/* A decimal integer in [min, max] (min > INT64_MIN), e.g. numa_node
 * ("-1\n"). */
int mu__sysfs_int(const char *buf, size_t len, int64_t min, int64_t max,
		  int64_t *out);
/* "0x" and 1..8 hex digits, at most max, e.g. class ("0x030200\n"). */
int mu__sysfs_hex(const char *buf, size_t len, uint32_t max, uint32_t *out);
/* nodeN/meminfo: the bytes of the one "Node N MemTotal: X kB" line; N must
 * be node.  Other lines are not looked at. */
int mu__sysfs_meminfo(const char *buf, size_t len, int32_t node,
		      int64_t *bytes);
/* nodeN/distance: 1..max numbers in [0, 255] separated by blanks. */
int mu__sysfs_distance(const char *buf, size_t len, int32_t *out, int32_t max,
		       int32_t *n);
/* A PCI address "D:B:S.F" (domain 1..8 hex digits, bus 1..2, slot 1..2 up
 * to 0x1f, function 0..7, either case) written canonically into out
 * ("0000:07:00.0"). */
int mu__pci_addr(const char *s, size_t len, char out[MU_PCI_ADDR_LEN]);
/* nvlink_peers: 0..max PCI addresses separated by blanks, canonical. */
int mu__sysfs_peers(const char *buf, size_t len, char (*out)[MU_PCI_ADDR_LEN],
		    int32_t max, int32_t *n);
/* An interface name the agent reports: 1..15 of [A-Za-z0-9_.-]. */
bool mu__ifname_ok(const char *s);

/* --- files and directories (fsio.c) --- */

/* Reads the regular file at path into buf (cap bytes, cap >= 2), setting
 * *len, and NUL-terminates it.  MU_ENOENT when it does not exist, MU_EINVAL
 * when it is not a regular file (a FIFO would block), MU_ELIMIT when it
 * holds cap bytes or more, MU_EIO on other failures; errno tells more. */
int mu__read_file(const char *path, char *buf, size_t cap, size_t *len);

/* A list of names, each owned. */
typedef struct mu__names {
	char **v;
	int32_t n, cap;
} mu__names_t;

void mu__names_release(mu__names_t *l);
/* Lists the directory at path, without "." and "..", sorted by strcmp,
 * into l (empty on entry).  At most MU_TOPO_MAX_DIRENT entries
 * (MU_ELIMIT beyond).  MU_ENOENT when it does not exist or is not a
 * directory, MU_EIO or MU_ENOMEM otherwise; l is then empty. */
int mu__list_dir(const char *path, mu__names_t *l);
/* snprintf into buf; MU_ELIMIT when it did not fit. */
int mu__path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* --- discovery (topo.c, pci.c) --- */

/* The state of one mu_topo_discover() call. */
typedef struct mu__disc {
	const char *root;  /* the sysfs root, as given */
	char *buf;         /* MU_TOPO_MAX_FILE bytes, owned by the call */
	size_t len;        /* bytes in buf after mu__disc_read() */
	mu_topo_t *t;      /* being filled */
	mu_diag_t *diag;   /* may be NULL */
} mu__disc_t;

/* Formats "PATH: message" into d->diag; returns err. */
int mu__disc_err(mu__disc_t *d, int err, const char *path, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));
/* Reads the file at path into d->buf and d->len.  A missing file returns
 * MU_ENOENT, with a diag only when it is not optional; every other failure
 * fills the diag. */
int mu__disc_read(mu__disc_t *d, const char *path, bool optional);
/* Explains a parser's error for the file at path: returns err. */
int mu__disc_bad(mu__disc_t *d, int err, const char *path, const char *what);
/* Appends a note to t->notes ("; "-separated; dropped when full). */
void mu__topo_note(mu_topo_t *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Scans bus/pci/devices: fills t->gpus and t->nics with their zones and
 * link groups.  Needs t->nodes. */
int mu__discover_pci(mu__disc_t *d);

/* --- growable strings and the output document (emit.c) --- */

/* A string built by appending; err is sticky (MU_ENOMEM). */
typedef struct mu__sbuf {
	char *s;      /* owned, NUL-terminated when n > 0 */
	size_t n, cap;
	int err;
} mu__sbuf_t;

void mu__sbuf_release(mu__sbuf_t *b);
void mu__sbuf_printf(mu__sbuf_t *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Empties b, keeping its memory (and err). */
void mu__sbuf_reset(mu__sbuf_t *b);
/* The text so far ("" when nothing was appended). */
const char *mu__sbuf_str(const mu__sbuf_t *b);

typedef enum mu__doc_kind {
	MU__DOC_MAP,
	MU__DOC_LIST,
	MU__DOC_STR,
	MU__DOC_INT,
} mu__doc_kind_t;

typedef struct mu__doc mu__doc_t;
struct mu__doc {
	mu__doc_kind_t kind;
	const char *key;  /* in a map: a string literal that YAML takes
			   * plain ([A-Za-z0-9_./-]); else NULL */
	char *str;        /* MU__DOC_STR: owned */
	int64_t i;        /* MU__DOC_INT */
	mu__doc_t *head, *tail, *next;
};

/* Builds a tree; every call with a NULL parent does nothing, and the first
 * allocation failure sets err, so a builder checks err once at the end. */
typedef struct mu__docb {
	mu__doc_t *root;  /* a map, owned */
	int err;
} mu__docb_t;

int mu__docb_init(mu__docb_t *b);
void mu__docb_release(mu__docb_t *b);
/* Appends a map or list to parent (key NULL in a list); returns it. */
mu__doc_t *mu__doc_add(mu__docb_t *b, mu__doc_t *parent, const char *key,
		       mu__doc_kind_t kind);
void mu__doc_str(mu__docb_t *b, mu__doc_t *parent, const char *key,
		 const char *s);
void mu__doc_int(mu__docb_t *b, mu__doc_t *parent, const char *key,
		 int64_t v);
/* Writes the tree as JSON (2-space indents; maps and lists holding only
 * scalars on one line) or block YAML (strings double-quoted).  MU_EIO when
 * f reports an error. */
int mu__doc_write_json(const mu__doc_t *d, FILE *f);
int mu__doc_write_yaml(const mu__doc_t *d, FILE *f);

#endif

/*
 * walbuf.c - the store's SQLite VFS shim: one write per commit for the WAL.
 *
 * SQLite writes a WAL frame as two calls to the file's xWrite (the 24-byte
 * frame header, then the page), and a version of an object is several
 * frames (its table leaf, index pages, overflow pages, the meta rows), so a
 * commit of a few versions was some tens of pwrite64 system calls, each a
 * kernel entry that costs dearly on a virtual machine; a checkpoint then
 * read each frame back (pread64) and wrote its page into the database file
 * (pwrite64), one call a page.  This shim is a VFS (sqlite3_vfs_register,
 * not the default: only the store's connection names it) over the default
 * one.  The WAL's and the database file's writes are gathered in memory
 * while they are contiguous and handed to the kernel in one write (per
 * 124 KiB) by mu__walbuf_flush, which the store calls after COMMIT
 * returned and before it acknowledges or publishes anything, by the shim
 * before any other use of the file (a read, sync, truncate, size, file
 * control, mapping or close), and before a write, truncation, sync or
 * deletion of any file, so that the kernel always holds a prefix of
 * SQLite's changes to its files in SQLite's order:
 * what a `kill -9` leaves is what it would leave without the shim at some
 * earlier moment, and every sync covers what SQLite wrote before it
 * (synchronous=FULL: a power cut loses nothing acknowledged).  The WAL's
 * bytes are also kept in memory (up to WALBUF_MIRROR, from its start: the
 * file is only ever changed through the shim, the server holding its
 * exclusive lock), and its reads, a checkpoint's above all, are answered
 * from that copy after the gathered writes were handed over.  In
 * exclusive locking mode the wal-index is in SQLite's heap and holds only
 * frame numbers, and SQLite maps only the database file (and only with
 * mmap_size, which the store leaves at 0), so every read of the WAL goes
 * through xRead.  Temporary files are the default VFS's as they are
 * (xOpen hands them the whole file object).  A gathered run is written
 * early past WALBUF_MAX (frames of a transaction not yet committed may sit
 * in the WAL: recovery ignores frames after the last commit frame).
 *
 * A failed write leaves the file broken: every later call on it fails,
 * SQLite never learns of frames it believes written, and the store opens
 * its connection again (the WAL's valid prefix is what recovery finds,
 * exactly as after a crash).  See docs/apiserver.md, "Twenty-third round:
 * one write per commit for the WAL".
 *
 * Ownership: a mu__walbuf_t owns its VFS registration and the list of its
 * open files; a file's run and copy belong to the file.  The store's
 * committer is the only thread that uses its connection at a time, so the
 * shim takes no lock of its own.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "apiserver/apiserver_int.h"

/* a run longer than this is written at once (1 MiB: a batch of some
 * hundreds of small versions) */
#define WALBUF_MAX (1u << 20)
/* a buffer that grew beyond this is freed after its write */
#define WALBUF_KEEP (256u << 10)
/* the most one xWrite of the unix VFS takes: its seekAndWrite masks the
 * count with 0x1ffff (it expects a page at most, 64 KiB), so a longer
 * write is cut short and fails with SQLITE_FULL (os_unix.c, SQLite 3.40);
 * a run is written in pieces of this size (31 frames of 4 KiB) */
#define WALBUF_PIECE (124u << 10)
/* the most of the WAL copied in memory (its reads, a checkpoint's above
 * all, are answered from the copy): 1,000 frames of 4 KiB, SQLite's
 * checkpoint interval, are 4 MiB */
#define WALBUF_MIRROR (8u << 20)

typedef struct wfile wfile_t;

struct mu__walbuf {
	sqlite3_vfs vfs;   /* registered as name; pAppData is this */
	sqlite3_vfs *base; /* the default VFS when made */
	char name[48];
	wfile_t *wals;     /* the open WAL and database files */
	mu__walbuf_counts_t n; /* what it did so far */
	int inject;        /* tests: the next flush fails with this code */
};

struct wfile {
	sqlite3_file f;     /* pMethods = &wal_methods or &db_methods */
	mu__walbuf_t *wb;
	wfile_t *next;
	sqlite3_file *real; /* the base VFS's file, after this struct */
	unsigned char *buf; /* the gathered run: file bytes [off, off + len) */
	size_t len, cap;
	sqlite3_int64 off;
	int err;            /* a write failed: every call fails with it */
	bool wal;           /* the WAL (else the database file) */
	unsigned char *mir; /* the WAL: a copy of the file's bytes [0, mlen) */
	size_t mlen, mcap;
};

#define REAL_AT ((sizeof(wfile_t) + 15) & ~(size_t)15)

/* Hands over what every open file but `but` gathered (at most one has a
 * run: a write hands over the others'), before a change that SQLite
 * orders after them: a write, truncation, sync or deletion.  Returns
 * SQLITE_OK or the first error. */
static int wal_flush(wfile_t *w);
static int flush_all(mu__walbuf_t *wb, const wfile_t *but)
{
	for (wfile_t *o = wb->wals; o; o = o->next) {
		int rc = o == but ? o->err : wal_flush(o);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

/* Notes that the WAL's bytes [off, off + n) are now p: copied when they
 * start within the copy and end within WALBUF_MIRROR, else the copy ends
 * at off.  O(n). */
static void mirror_put(wfile_t *w, sqlite3_int64 off, const void *p, size_t n)
{
	size_t o = (size_t)off;
	if (!w->wal || o > w->mlen)
		return;
	if (o + n > WALBUF_MIRROR) {
		w->mlen = o;
		return;
	}
	if (o + n > w->mcap) {
		size_t nc = w->mcap ? w->mcap : 256 * 1024;
		while (nc < o + n)
			nc *= 2;
		unsigned char *nm = realloc(w->mir, nc);
		if (!nm) {
			w->mlen = o;
			return;
		}
		w->mir = nm;
		w->mcap = nc;
	}
	memcpy(w->mir + o, p, n);
	if (o + n > w->mlen)
		w->mlen = o + n;
}

/* Writes the gathered run: one call of the base file's xWrite per
 * WALBUF_PIECE bytes (one for a batch of up to 31 frames of 4 KiB).
 * Returns SQLITE_OK or the (sticky) error; the run is dropped either way. */
static int wal_flush(wfile_t *w)
{
	if (w->err)
		return w->err;
	int rc = SQLITE_OK;
	for (size_t at = 0; at < w->len && rc == SQLITE_OK; at += WALBUF_PIECE) {
		size_t n = w->len - at < WALBUF_PIECE ? w->len - at : WALBUF_PIECE;
		rc = w->wb->inject ? w->wb->inject
				   : w->real->pMethods->xWrite(w->real, w->buf + at, (int)n, w->off + (sqlite3_int64)at);
		w->wb->inject = 0;
		if (w->wal)
			w->wb->n.runs++;
		else
			w->wb->n.dbruns++;
		if (rc == SQLITE_OK)
			mirror_put(w, w->off + (sqlite3_int64)at, w->buf + at, n);
	}
	w->len = 0;
	if (w->cap > WALBUF_KEEP) {
		free(w->buf);
		w->buf = NULL;
		w->cap = 0;
	}
	if (rc != SQLITE_OK)
		w->err = rc;
	return rc;
}

static int wal_close(sqlite3_file *f)
{
	wfile_t *w = (wfile_t *)f;
	int rc = wal_flush(w);
	int rc2 = w->real->pMethods ? w->real->pMethods->xClose(w->real) : SQLITE_OK;
	for (wfile_t **p = &w->wb->wals; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	free(w->buf);
	free(w->mir);
	w->buf = w->mir = NULL;
	return rc != SQLITE_OK ? rc : rc2;
}

/* Reads after writing what is gathered (so that the kernel has every
 * write before SQLite acts on what it read: a checkpoint copies into the
 * database file what it reads), from the WAL's copy when it holds the
 * bytes. */
static int wal_read(sqlite3_file *f, void *p, int amt, sqlite3_int64 off)
{
	wfile_t *w = (wfile_t *)f;
	int rc = wal_flush(w);
	if (rc != SQLITE_OK)
		return rc;
	if ((size_t)off + (size_t)amt <= w->mlen) {
		memcpy(p, w->mir + off, (size_t)amt);
		return SQLITE_OK;
	}
	w->wb->n.reads += w->wal;
	return w->real->pMethods->xRead(w->real, p, amt, off);
}

/* Gathers a write: appended to the run when it continues it, copied in
 * place when it lies inside it, else the run is written and a new one
 * starts.  O(amt); the run is written early past WALBUF_MAX bytes. */
static int wal_write(sqlite3_file *f, const void *p, int amt, sqlite3_int64 off)
{
	wfile_t *w = (wfile_t *)f;
	if (w->err)
		return w->err;
	int rc0 = flush_all(w->wb, w);
	if (rc0 != SQLITE_OK)
		return rc0;
	if (w->wal)
		w->wb->n.writes++;
	else
		w->wb->n.dbwrites++;
	size_t n = (size_t)amt;
	if (w->len && off >= w->off && (size_t)(off - w->off) + n <= w->len) {
		memcpy(w->buf + (off - w->off), p, n);
		return SQLITE_OK;
	}
	if (w->len && (off != w->off + (sqlite3_int64)w->len || w->len + n > WALBUF_MAX)) {
		int rc = wal_flush(w);
		if (rc != SQLITE_OK)
			return rc;
	}
	if (n > WALBUF_PIECE) { /* too big to gather: straight through */
		int rc = w->real->pMethods->xWrite(w->real, p, amt, off);
		if (rc == SQLITE_OK)
			mirror_put(w, off, p, n);
		else if (w->mlen > (size_t)off)
			w->mlen = (size_t)off;
		return rc;
	}
	if (w->len + n > w->cap) {
		size_t nc = w->cap ? w->cap : 64 * 1024;
		while (nc < w->len + n)
			nc *= 2;
		unsigned char *nb = realloc(w->buf, nc);
		if (!nb) { /* out of memory: written at once */
			int rc = wal_flush(w);
			if (rc == SQLITE_OK)
				rc = w->real->pMethods->xWrite(w->real, p, amt, off);
			if (rc == SQLITE_OK)
				mirror_put(w, off, p, n);
			else if (w->mlen > (size_t)off)
				w->mlen = (size_t)off;
			return rc;
		}
		w->buf = nb;
		w->cap = nc;
	}
	if (!w->len)
		w->off = off;
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	return SQLITE_OK;
}

static int wal_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	wfile_t *w = (wfile_t *)f;
	int rc = flush_all(w->wb, NULL);
	if (rc == SQLITE_OK && w->mlen > (size_t)size)
		w->mlen = (size_t)size;
	return rc != SQLITE_OK ? rc : w->real->pMethods->xTruncate(w->real, size);
}

static int wal_sync(sqlite3_file *f, int flags)
{
	wfile_t *w = (wfile_t *)f;
	int rc = flush_all(w->wb, NULL);
	return rc != SQLITE_OK ? rc : w->real->pMethods->xSync(w->real, flags);
}

static int wal_size(sqlite3_file *f, sqlite3_int64 *size)
{
	wfile_t *w = (wfile_t *)f;
	int rc = wal_flush(w);
	return rc != SQLITE_OK ? rc : w->real->pMethods->xFileSize(w->real, size);
}

static int wal_lock(sqlite3_file *f, int level)
{
	wfile_t *w = (wfile_t *)f;
	return w->real->pMethods->xLock(w->real, level);
}

static int wal_unlock(sqlite3_file *f, int level)
{
	wfile_t *w = (wfile_t *)f;
	return w->real->pMethods->xUnlock(w->real, level);
}

static int wal_reserved(sqlite3_file *f, int *out)
{
	wfile_t *w = (wfile_t *)f;
	return w->real->pMethods->xCheckReservedLock(w->real, out);
}

static int wal_fcntl(sqlite3_file *f, int op, void *arg)
{
	wfile_t *w = (wfile_t *)f;
	int rc = wal_flush(w);
	return rc != SQLITE_OK ? rc : w->real->pMethods->xFileControl(w->real, op, arg);
}

static int wal_sector(sqlite3_file *f)
{
	wfile_t *w = (wfile_t *)f;
	return w->real->pMethods->xSectorSize(w->real);
}

static int wal_devchar(sqlite3_file *f)
{
	wfile_t *w = (wfile_t *)f;
	return w->real->pMethods->xDeviceCharacteristics(w->real);
}

/* The shared memory and mapping methods (the database file's: in
 * exclusive locking mode SQLite keeps the wal-index in its heap and maps
 * nothing unless mmap_size is set, which the store does not).  A mapping
 * sees the file, so what is gathered is written first. */
static int wal_shmmap(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
	wfile_t *w = (wfile_t *)f;
	return w->real->pMethods->xShmMap(w->real, pg, pgsz, extend, pp);
}

static int wal_shmlock(sqlite3_file *f, int offset, int n, int flags)
{
	wfile_t *w = (wfile_t *)f;
	return w->real->pMethods->xShmLock(w->real, offset, n, flags);
}

static void wal_shmbarrier(sqlite3_file *f)
{
	wfile_t *w = (wfile_t *)f;
	w->real->pMethods->xShmBarrier(w->real);
}

static int wal_shmunmap(sqlite3_file *f, int del)
{
	wfile_t *w = (wfile_t *)f;
	return w->real->pMethods->xShmUnmap(w->real, del);
}

static int wal_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
	wfile_t *w = (wfile_t *)f;
	int rc = wal_flush(w);
	return rc != SQLITE_OK ? rc : w->real->pMethods->xFetch(w->real, off, amt, pp);
}

static int wal_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	wfile_t *w = (wfile_t *)f;
	return w->real->pMethods->xUnfetch(w->real, off, p);
}

/* The WAL's methods (SQLite calls no shared-memory or mapping method on
 * it), and the database file's, the base's version 3 (checked at open). */
static const sqlite3_io_methods wal_methods = {
	1, wal_close, wal_read, wal_write, wal_truncate, wal_sync, wal_size, wal_lock, wal_unlock,
	wal_reserved, wal_fcntl, wal_sector, wal_devchar, NULL, NULL, NULL, NULL, NULL, NULL,
};
static const sqlite3_io_methods db_methods = {
	3, wal_close, wal_read, wal_write, wal_truncate, wal_sync, wal_size, wal_lock, wal_unlock,
	wal_reserved, wal_fcntl, wal_sector, wal_devchar, wal_shmmap, wal_shmlock, wal_shmbarrier,
	wal_shmunmap, wal_fetch, wal_unfetch,
};

/* Opens a file through the base VFS: the WAL and the main database file
 * wrapped, any other (temporary files) as the base's own, in the whole of
 * f. */
static int vfs_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *outflags)
{
	mu__walbuf_t *wb = vfs->pAppData;
	if (!(flags & (SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_DB)))
		return wb->base->xOpen(wb->base, name, f, flags, outflags);
	wfile_t *w = (wfile_t *)f;
	memset(w, 0, sizeof *w);
	w->real = (sqlite3_file *)((char *)f + REAL_AT);
	int rc = wb->base->xOpen(wb->base, name, w->real, flags, outflags);
	if (rc != SQLITE_OK) {
		if (w->real->pMethods)
			w->real->pMethods->xClose(w->real);
		w->f.pMethods = NULL;
		return rc;
	}
	w->wal = (flags & SQLITE_OPEN_WAL) != 0;
	if (!w->wal && w->real->pMethods->iVersion < 3) { /* not the unix VFS */
		w->real->pMethods->xClose(w->real);
		w->f.pMethods = NULL;
		return SQLITE_CANTOPEN;
	}
	w->wb = wb;
	w->next = wb->wals;
	wb->wals = w;
	w->f.pMethods = w->wal ? &wal_methods : &db_methods;
	return SQLITE_OK;
}

/* The rest is the base VFS's. */
#define BASE(v) (((mu__walbuf_t *)(v)->pAppData)->base)

static int vfs_delete(sqlite3_vfs *v, const char *name, int sync)
{
	int rc = flush_all(v->pAppData, NULL); /* the WAL goes after the checkpoint's pages */
	return rc != SQLITE_OK ? rc : BASE(v)->xDelete(BASE(v), name, sync);
}

static int vfs_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
	return BASE(v)->xAccess(BASE(v), name, flags, out);
}

static int vfs_fullpath(sqlite3_vfs *v, const char *name, int n, char *out)
{
	return BASE(v)->xFullPathname(BASE(v), name, n, out);
}

static void *vfs_dlopen(sqlite3_vfs *v, const char *name)
{
	return BASE(v)->xDlOpen(BASE(v), name);
}

static void vfs_dlerror(sqlite3_vfs *v, int n, char *out)
{
	BASE(v)->xDlError(BASE(v), n, out);
}

static void (*vfs_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
	return BASE(v)->xDlSym(BASE(v), h, sym);
}

static void vfs_dlclose(sqlite3_vfs *v, void *h)
{
	BASE(v)->xDlClose(BASE(v), h);
}

static int vfs_random(sqlite3_vfs *v, int n, char *out)
{
	return BASE(v)->xRandomness(BASE(v), n, out);
}

static int vfs_sleep(sqlite3_vfs *v, int us)
{
	return BASE(v)->xSleep(BASE(v), us);
}

static int vfs_time(sqlite3_vfs *v, double *out)
{
	return BASE(v)->xCurrentTime(BASE(v), out);
}

static int vfs_lasterr(sqlite3_vfs *v, int n, char *out)
{
	return BASE(v)->xGetLastError ? BASE(v)->xGetLastError(BASE(v), n, out) : 0;
}

static int vfs_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	return BASE(v)->xCurrentTimeInt64(BASE(v), out);
}

int mu__walbuf_open(mu__walbuf_t **out)
{
	*out = NULL;
	sqlite3_vfs *base = sqlite3_vfs_find(NULL);
	if (!base || base->iVersion < 2 || !base->xCurrentTimeInt64)
		return MU_EIO;
	mu__walbuf_t *wb = calloc(1, sizeof *wb);
	if (!wb)
		return MU_ENOMEM;
	snprintf(wb->name, sizeof wb->name, "muster-walbuf-%p", (void *)wb);
	wb->base = base;
	wb->vfs = (sqlite3_vfs){
		.iVersion = 2,
		.szOsFile = (int)REAL_AT + base->szOsFile,
		.mxPathname = base->mxPathname,
		.zName = wb->name,
		.pAppData = wb,
		.xOpen = vfs_open,
		.xDelete = vfs_delete,
		.xAccess = vfs_access,
		.xFullPathname = vfs_fullpath,
		.xDlOpen = vfs_dlopen,
		.xDlError = vfs_dlerror,
		.xDlSym = vfs_dlsym,
		.xDlClose = vfs_dlclose,
		.xRandomness = vfs_random,
		.xSleep = vfs_sleep,
		.xCurrentTime = vfs_time,
		.xGetLastError = vfs_lasterr,
		.xCurrentTimeInt64 = vfs_time64,
	};
	if (sqlite3_vfs_register(&wb->vfs, 0) != SQLITE_OK) {
		free(wb);
		return MU_EIO;
	}
	*out = wb;
	return MU_OK;
}

const char *mu__walbuf_name(const mu__walbuf_t *wb)
{
	return wb->name;
}

int mu__walbuf_flush(mu__walbuf_t *wb)
{
	int rc = SQLITE_OK;
	for (wfile_t *w = wb->wals; w; w = w->next)
		if (wal_flush(w) != SQLITE_OK)
			rc = SQLITE_IOERR;
	return rc == SQLITE_OK ? MU_OK : MU_EIO;
}

bool mu__walbuf_broken(const mu__walbuf_t *wb)
{
	for (const wfile_t *w = wb->wals; w; w = w->next)
		if (w->err)
			return true;
	return false;
}

mu__walbuf_counts_t mu__walbuf_counts(const mu__walbuf_t *wb)
{
	return wb->n;
}

void mu__walbuf_inject(mu__walbuf_t *wb, int sqlite_err)
{
	wb->inject = sqlite_err;
}

void mu__walbuf_close(mu__walbuf_t *wb)
{
	if (!wb)
		return;
	sqlite3_vfs_unregister(&wb->vfs);
	free(wb);
}

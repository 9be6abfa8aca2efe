// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A memory flight recorder's slabs (see ring-keep.h): made, appended to,
 * dropped and found again after the daemon's death. One CPU's ring owns
 * its keep; the capture worker appends, under the ring's lock, and a
 * snapshot holds slabs through its chunks. Everything read back after a
 * restart is checked: the header against the ring it is for, every
 * record against its slab's committed length, slabs only in an unbroken
 * sequence, so that a history never has a hole nobody reports.
 *
 * A record is written whole before the slab's `used` says so (a release
 * store): the daemon's death at any instant leaves whole records only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/store/ring-keep.h"

_Static_assert(sizeof(struct ring_slab_header) <= RING_SLAB_HDR_SIZE, "slab header past its page");
_Static_assert(sizeof(struct ring_record) % 8 == 0, "records keep 8-byte alignment");

/* "flight-" and a session name. */
#define KEEP_DIR_NAME_MAX (sizeof(RING_KEEP_DIR_PREFIX) + FTRACED_NAME_MAX + 1)

static void slab_name(unsigned cpu, uint64_t seq, char *buf, size_t n)
{
	snprintf(buf, n, "cpu%u-%016" PRIx64, cpu, seq);
}

/* Is @name one of @cpu's slabs? Its sequence number in @ret_seq. */
static bool is_slab_of(const char *name, unsigned cpu, uint64_t *ret_seq)
{
	char prefix[24], *end;
	size_t n = (size_t)snprintf(prefix, sizeof(prefix), "cpu%u-", cpu);

	if (strncmp(name, prefix, n) != 0 || strlen(name + n) != 16)
		return false;
	errno = 0;
	*ret_seq = strtoull(name + n, &end, 16);
	return errno == 0 && *end == '\0';
}

static int open_keep_dir(int hold_dir_fd, const char *session, bool create, int *ret_fd)
{
	char name[KEEP_DIR_NAME_MAX];
	struct stat st;
	int fd;

	if (strlen(session) > FTRACED_NAME_MAX || strchr(session, '/'))
		return -EINVAL;
	snprintf(name, sizeof(name), RING_KEEP_DIR_PREFIX "%s", session);
	if (create && mkdirat(hold_dir_fd, name, 0700) < 0 && errno != EEXIST)
		return negative_errno();
	fd = openat(hold_dir_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return negative_errno();
	/* The holds' directory is ours alone; so is this one. */
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return -EPERM;
	}
	*ret_fd = fd;
	return 0;
}

/**
 * ring_keep_open() - one CPU's kept history of a session, its directory made if need be.
 * @hold_dir_fd: the holds' directory (hold.h)
 * @session: the session's name
 * @cpu: the CPU
 * @subbuf_size: its sub-buffer size (a history of another size is not resumed)
 * @zstd: whether its chunks are compressed (likewise)
 * @budget: the ring's budget: slabs are 1/RING_SLABS of it
 * @ret: the keep, with no slab yet
 *
 * Return: 0, -EINVAL for a name that cannot be a directory's, -EPERM if
 * the directory is not ours alone, or -errno.
 */
int ring_keep_open(int hold_dir_fd, const char *session, unsigned cpu, uint32_t subbuf_size,
		   bool zstd, uint64_t budget, struct ring_keep **ret)
{
	long page = sysconf(_SC_PAGESIZE);
	struct ring_keep *k;
	int r;

	if (subbuf_size == 0 || page <= 0)
		return -EINVAL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	r = open_keep_dir(hold_dir_fd, session, /* create= */ true, &k->dir_fd);
	if (r < 0) {
		free(k);
		return r;
	}
	k->current_fd = -EBADF;
	k->cpu = cpu;
	k->subbuf_size = subbuf_size;
	k->zstd = zstd;
	k->slab_size = (size_t)ALIGN_UP(MAX(budget / RING_SLABS, (uint64_t)RING_SLAB_MIN),
					(uint64_t)page);
	*ret = k;
	return 0;
}

struct ring_slab *ring_slab_ref(struct ring_slab *s)
{
	atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	return s;
}

struct ring_slab *ring_slab_unref(struct ring_slab *s)
{
	if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1) {
		munmap(s->hdr, s->size);
		free(s);
	}
	return NULL;
}

static int map_slab(int fd, size_t size, const char *name, uint64_t seq, struct ring_slab **ret)
{
	struct ring_slab *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->hdr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s->hdr == MAP_FAILED) {
		free(s);
		return negative_errno();
	}
	atomic_init(&s->refs, 1);
	s->size = size;
	s->seq = seq;
	snprintf(s->name, sizeof(s->name), "%s", name);
	*ret = s;
	return 0;
}

/**
 * ring_keep_new_slab() - begin a new slab with room for a chunk of @size bytes at least.
 * @k: keep
 * @size: the chunk's data bytes
 *
 * The pages are tmpfs's from their first touch: an empty slab costs none.
 *
 * Return: 0 or -errno (the current slab is then none).
 */
int ring_keep_new_slab(struct ring_keep *k, size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t need = RING_SLAB_HDR_SIZE + sizeof(struct ring_record) + ALIGN_UP(size, 8);
	size_t slab = MAX(k->slab_size, (size_t)ALIGN_UP(need, (size_t)page));
	struct ring_slab *s;
	char name[32];
	int fd, r;

	k->current = ring_slab_unref(k->current);
	k->current_fd = safe_close(k->current_fd);
	slab_name(k->cpu, k->next_seq, name, sizeof(name));
	fd = openat(k->dir_fd, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return negative_errno();
	/* The header's page now (a store there must not fault on a full tmpfs), records' later. */
	if (ftruncate(fd, (off_t)slab) < 0 || fallocate(fd, 0, 0, RING_SLAB_HDR_SIZE) < 0) {
		r = negative_errno();
		goto fail;
	}
	r = map_slab(fd, slab, name, k->next_seq, &s);
	if (r < 0)
		goto fail;
	k->current_fd = fd;
	*s->hdr = (struct ring_slab_header){
		.magic = RING_SLAB_MAGIC,
		.version = RING_SLAB_VERSION,
		.cpu = k->cpu,
		.subbuf_size = k->subbuf_size,
		.zstd = k->zstd,
		.seq = k->next_seq,
		.size = slab,
	};
	k->next_seq++;
	k->current = s;
	return 0;
fail:
	close(fd);
	(void)unlinkat(k->dir_fd, name, 0);
	return r;
}

/* Does a chunk of @size bytes fit in the current slab? */
bool ring_keep_fits(const struct ring_keep *k, size_t size)
{
	const struct ring_slab *s = k->current;

	return s && RING_SLAB_HDR_SIZE + atomic_load_explicit(&s->hdr->used, memory_order_relaxed) +
			    sizeof(struct ring_record) + size <= s->size;
}

/**
 * ring_keep_append() - a chunk into the current slab (ring_keep_fits() said it fits).
 * @k: keep
 * @data: the chunk's bytes
 * @size: their number
 * @raw_size: the sub-buffer bytes they hold
 * @first_ts: the chunk's first sub-buffer's timestamp
 * @last_ts: its last one's
 *
 * The record's pages are allocated first: a full tmpfs says so here
 * (ENOSPC), where a store into the mapping would be a SIGBUS.
 *
 * Return: where the bytes are now, in the slab (k->current), or NULL
 * (errno set) if there is no room for them.
 */
uint8_t *ring_keep_append(struct ring_keep *k, const void *data, size_t size, uint32_t raw_size,
			  uint64_t first_ts, uint64_t last_ts)
{
	struct ring_slab *s = k->current;
	uint64_t used = atomic_load_explicit(&s->hdr->used, memory_order_relaxed);
	uint8_t *at = (uint8_t *)s->hdr + RING_SLAB_HDR_SIZE + used;

	if (fallocate(k->current_fd, 0, (off_t)(RING_SLAB_HDR_SIZE + used),
		      (off_t)(sizeof(struct ring_record) + size)) < 0)
		return NULL;

	memcpy(at + sizeof(struct ring_record), data, size);
	*(struct ring_record *)at = (struct ring_record){
		.magic = RING_RECORD_MAGIC,
		.size = (uint32_t)size,
		.raw_size = raw_size,
		.first_ts = first_ts,
		.last_ts = last_ts,
	};
	/* The record is whole before the slab says so. */
	atomic_store_explicit(&s->hdr->used,
			      MIN(used + sizeof(struct ring_record) + ALIGN_UP(size, 8),
				  (uint64_t)(s->size - RING_SLAB_HDR_SIZE)),
			      memory_order_release);
	return at + sizeof(struct ring_record);
}

/**
 * ring_keep_drop() - the ring let go of a slab's chunks: its file goes now.
 * @k: keep
 * @slab: the slab; its mapping goes with the last reference
 */
void ring_keep_drop(struct ring_keep *k, struct ring_slab *slab)
{
	if (slab->dropped)
		return;
	(void)unlinkat(k->dir_fd, slab->name, 0);
	slab->dropped = true;
	if (k->current == slab) {
		k->current = ring_slab_unref(k->current);
		k->current_fd = safe_close(k->current_fd);
	}
}

/* Opens, maps and checks one slab file of @k's CPU. */
static int open_slab(struct ring_keep *k, const char *name, uint64_t seq, struct ring_slab **ret)
{
	const struct ring_slab_header *h;
	struct ring_slab *s;
	struct stat st;
	int fd, r;

	fd = openat(k->dir_fd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)RING_SLAB_HDR_SIZE) {
		close(fd);
		return -EBADMSG;
	}
	r = map_slab(fd, (size_t)st.st_size, name, seq, &s);
	close(fd);
	if (r < 0)
		return r;
	h = s->hdr;
	if (h->magic != RING_SLAB_MAGIC || h->version != RING_SLAB_VERSION || h->cpu != k->cpu ||
	    h->subbuf_size != k->subbuf_size || h->zstd != (uint32_t)k->zstd || h->seq != seq ||
	    h->size != (uint64_t)st.st_size ||
	    atomic_load(&h->used) > h->size - RING_SLAB_HDR_SIZE) {
		ring_slab_unref(s);
		return -EBADMSG;
	}
	*ret = s;
	return 0;
}

/*
 * Hands every record of @s to @found: their number. A record that is not
 * whole ends the slab there (its `used` is cut back to it), and *@ret_whole
 * says so: no later slab may follow it.
 */
static int walk_slab(struct ring_keep *k, struct ring_slab *s, ring_keep_found_fn found,
		     void *userdata, bool *ret_whole)
{
	uint8_t *base = (uint8_t *)s->hdr + RING_SLAB_HDR_SIZE;
	uint64_t used = atomic_load(&s->hdr->used), off = 0;
	int n = 0;

	*ret_whole = true;
	while (off < used) {
		const struct ring_record *rec = (const struct ring_record *)(base + off);
		int r;

		if (used - off < sizeof(*rec) || rec->magic != RING_RECORD_MAGIC || rec->size == 0 ||
		    rec->size > used - off - sizeof(*rec) || rec->raw_size == 0 ||
		    rec->raw_size % k->subbuf_size != 0 || (!k->zstd && rec->size != rec->raw_size)) {
			atomic_store(&s->hdr->used, off);
			*ret_whole = false;
			break;
		}
		r = found(s, rec, base + off + sizeof(*rec), userdata);
		if (r < 0)
			return r;
		off += sizeof(*rec) + ALIGN_UP((uint64_t)rec->size, 8);
		n++;
	}
	return n;
}

/* A directory stream on @fd (taken over: closed on failure too), from its start. */
static DIR *dir_stream(int fd)
{
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return NULL;
	}
	rewinddir(d);
	return d;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The sequence numbers of @k's CPU's slab files, sorted. */
static int list_slabs(struct ring_keep *k, uint64_t **ret, size_t *ret_n)
{
	uint64_t *seqs = NULL, seq;
	struct dirent *de;
	size_t n = 0, cap = 0;
	DIR *d;

	d = dir_stream(fcntl(k->dir_fd, F_DUPFD_CLOEXEC, 3));
	if (!d)
		return errno > 0 ? -errno : -EIO;
	while ((de = readdir(d))) {
		uint64_t *more;

		if (!is_slab_of(de->d_name, k->cpu, &seq))
			continue;
		if (n >= RING_SLABS_LOAD_MAX)
			break; /* the rest is removed with what is not resumed */
		if (n == cap) {
			cap = MAX(cap * 2, (size_t)32);
			more = realloc(seqs, cap * sizeof(*seqs));
			if (!more) {
				free(seqs);
				closedir(d);
				return -ENOMEM;
			}
			seqs = more;
		}
		seqs[n++] = seq;
	}
	closedir(d);
	if (n > 1)
		qsort(seqs, n, sizeof(*seqs), cmp_u64);
	*ret = seqs;
	*ret_n = n;
	return 0;
}

/* Removes every slab file of @k's CPU from sequence number @from on. */
static void remove_slabs(struct ring_keep *k, uint64_t from)
{
	for (;;) {
		uint64_t *seqs = NULL;
		size_t n = 0, removed = 0;
		char name[32];

		if (list_slabs(k, &seqs, &n) < 0)
			return;
		for (size_t i = 0; i < n; i++) {
			slab_name(k->cpu, seqs[i], name, sizeof(name));
			if (seqs[i] >= from && unlinkat(k->dir_fd, name, 0) == 0)
				removed++;
		}
		free(seqs);
		/* A list is at most RING_SLABS_LOAD_MAX long: past it, another round. */
		if (n < RING_SLABS_LOAD_MAX || removed == 0)
			return;
	}
}

/**
 * ring_keep_load() - the history an earlier run kept, chunk by chunk, oldest first.
 * @k: keep, with no slab yet
 * @found: called for each chunk; a reference to its slab is the callee's to take
 * @userdata: for @found
 *
 * Slabs come back in sequence from the oldest left, while each follows the
 * one before and checks out; from the first that does not (and every later
 * one), nothing is resumed and their files go: what was kept after a break
 * would be a history with a hole. New chunks go into a new slab after them.
 *
 * Return: the number of chunks resumed, or -errno (nothing resumed, the files gone).
 */
int ring_keep_load(struct ring_keep *k, ring_keep_found_fn found, void *userdata)
{
	uint64_t *seqs = NULL, resumed_to = 0;
	int n_chunks = 0, r;
	size_t n = 0;

	r = list_slabs(k, &seqs, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct ring_slab *s;
		char name[32];
		bool whole;

		if (i > 0 && seqs[i] != seqs[i - 1] + 1)
			break;
		slab_name(k->cpu, seqs[i], name, sizeof(name));
		if (open_slab(k, name, seqs[i], &s) < 0)
			break;
		r = walk_slab(k, s, found, userdata, &whole);
		ring_slab_unref(s); /* the chunks found hold it */
		if (r < 0)
			break;
		resumed_to = seqs[i] + 1;
		n_chunks += r;
		if (!whole)
			break;
	}
	k->next_seq = resumed_to;
	free(seqs);
	remove_slabs(k, resumed_to);
	return n_chunks;
}

/* A new history: whatever an earlier run kept for this CPU goes. */
void ring_keep_discard(struct ring_keep *k)
{
	remove_slabs(k, 0);
	k->next_seq = 0;
}

/*
 * A chunk could not be kept: what is would be a history with a hole after a
 * restart, so it goes, and keeping begins again after that chunk (new
 * slabs go on numbering where these ended; their mappings stay until the
 * ring lets go of their chunks).
 */
void ring_keep_forget(struct ring_keep *k)
{
	k->current = ring_slab_unref(k->current);
	k->current_fd = safe_close(k->current_fd);
	remove_slabs(k, 0);
}

/**
 * ring_keep_free() - close a CPU's keep.
 * @k: keep or NULL
 * @leave_files: the daemon exits and the next start resumes them; else they go
 *
 * Return: NULL.
 */
struct ring_keep *ring_keep_free(struct ring_keep *k, bool leave_files)
{
	if (!k)
		return NULL;
	k->current = ring_slab_unref(k->current);
	k->current_fd = safe_close(k->current_fd);
	if (!leave_files)
		remove_slabs(k, 0);
	close(k->dir_fd);
	free(k);
	return NULL;
}

/* Removes a session's directory and every file in it. */
static void remove_dir(int hold_dir_fd, const char *dir_name)
{
	struct dirent *de;
	DIR *d;
	int fd;

	d = dir_stream(openat(hold_dir_fd, dir_name,
			      O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
	if (!d)
		return;
	fd = dirfd(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			(void)unlinkat(fd, de->d_name, 0);
	closedir(d);
	(void)unlinkat(hold_dir_fd, dir_name, AT_REMOVEDIR);
}

/**
 * ring_keep_dir_remove() - a session is destroyed: its kept history goes.
 * @hold_dir_fd: the holds' directory
 * @session: the session's name
 */
void ring_keep_dir_remove(int hold_dir_fd, const char *session)
{
	char name[KEEP_DIR_NAME_MAX];

	if (hold_dir_fd < 0 || strlen(session) > FTRACED_NAME_MAX)
		return;
	snprintf(name, sizeof(name), RING_KEEP_DIR_PREFIX "%s", session);
	remove_dir(hold_dir_fd, name);
}

/**
 * ring_keep_prune() - at start-up: the kept histories no session resumes go.
 * @hold_dir_fd: the holds' directory
 * @wanted: whether the session of that name exists
 * @userdata: for @wanted
 */
void ring_keep_prune(int hold_dir_fd, bool (*wanted)(const char *session, void *userdata),
		     void *userdata)
{
	const size_t n = strlen(RING_KEEP_DIR_PREFIX);
	struct dirent *de;
	DIR *d;

	d = dir_stream(fcntl(hold_dir_fd, F_DUPFD_CLOEXEC, 3));
	if (!d)
		return;
	while ((de = readdir(d)))
		if (strncmp(de->d_name, RING_KEEP_DIR_PREFIX, n) == 0 &&
		    !wanted(de->d_name + n, userdata))
			remove_dir(hold_dir_fd, de->d_name);
	closedir(d);
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where the v7 writer's bytes go: sequential output to any fd, counted
 * for whoever watches progress, with the writeback of a regular file
 * started as it grows, data from other files copied in the kernel, and
 * direct (O_DIRECT) output for a file whose data is all in memory. Owns
 * the output's position and its staging buffer; knows nothing of the v7
 * layout (v7-writer.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ftraced/macro.h"
#include "lib/io-util.h"
#include "lib/v7-format.h"
#include "lib/v7-out.h"

/* iovecs per writev() of in-memory data (IOV_MAX is 1024 on Linux). */
#define BLOB_IOV_MAX 256
#define WRITEBACK_KICK_BYTES (UINT64_C(8) << 20)

/*
 * Direct output: a file whose data is all in memory (a flight snapshot) is
 * written around the page cache (O_DIRECT) through an aligned staging
 * buffer, when it is a regular file. A file we write once and fsync before
 * calling it complete gains nothing from the cache: buffered, every byte
 * is copied into freshly allocated cache pages (on a VM whose host backs
 * guest memory lazily, about 4 ms per MiB here), and the server's own
 * cache is evicted for a file nobody reads back soon. Data in spool files
 * is copied in the kernel instead (copy_file_range), which measured as
 * fast as direct output and needs no stage.
 * Offsets and lengths stay multiples of V7_DIRECT_ALIGN; the last, partial
 * block goes out buffered once O_DIRECT is cleared again. Any refusal
 * (a file system without O_DIRECT, a device with larger blocks) falls back
 * to buffered writes for the rest of the file.
 */
#define DIRECT_STAGE_BYTES (512u * 1024u)

/*
 * Buffered output into a regular file starts its writeback every
 * WRITEBACK_KICK_BYTES, so the disk works while we write and the caller's
 * final fsync() has less left to wait for.
 */
static void advance(struct v7_out *o, uint64_t n)
{
	o->pos += n;
	if (o->progress)
		atomic_fetch_add_explicit(o->progress, n, memory_order_relaxed);
	if (o->start >= 0 && !o->stage && o->pos - o->kicked >= WRITEBACK_KICK_BYTES) {
		(void)sync_file_range(o->fd, o->start + (off_t)o->kicked, (off_t)(o->pos - o->kicked),
				      SYNC_FILE_RANGE_WRITE);
		o->kicked = o->pos;
	}
}

/* Back to buffered writes: O_DIRECT cleared (the fd may be shared with a client). */
void v7_out_direct_leave(struct v7_out *o)
{
	if (o->saved_flags >= 0)
		(void)fcntl(o->fd, F_SETFL, o->saved_flags);
	o->saved_flags = -1;
}

/*
 * Switches a regular file written from an aligned offset (o->start) to
 * O_DIRECT. Anything else (pipes, O_APPEND, a refusing file system, no
 * memory for the stage) stays buffered: direct output is an optimisation only.
 */
void v7_out_direct_enter(struct v7_out *o)
{
	int flags = fcntl(o->fd, F_GETFL);

	if (o->start < 0 || o->start % V7_DIRECT_ALIGN != 0 || flags < 0 ||
	    (flags & (O_APPEND | O_DIRECT)))
		return;
	if (posix_memalign((void **)&o->stage, V7_DIRECT_ALIGN, DIRECT_STAGE_BYTES) != 0) {
		o->stage = NULL;
		return;
	}
	if (fcntl(o->fd, F_SETFL, flags | O_DIRECT) < 0) {
		o->stage = mfree(o->stage);
		return;
	}
	o->saved_flags = flags;
}

/*
 * Writes the whole blocks staged; a partial block stays staged unless @all.
 * A write refused with EINVAL (the file system or device will not take
 * these alignments) leaves O_DIRECT, and the rest goes out buffered.
 */
static int direct_flush(struct v7_out *o, bool all)
{
	size_t whole = o->n_stage / V7_DIRECT_ALIGN * V7_DIRECT_ALIGN, done = 0;
	int r;

	while (o->saved_flags >= 0 && done < whole) {
		ssize_t k = write(o->fd, o->stage + done, whole - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EINVAL) {
			v7_out_direct_leave(o);
			break;
		}
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO;
		done += (size_t)k;
	}
	memmove(o->stage, o->stage + done, o->n_stage - done);
	o->n_stage -= done;
	if (all || o->saved_flags < 0) {
		v7_out_direct_leave(o);
		r = loop_write(o->fd, o->stage, o->n_stage);
		if (r < 0)
			return r;
		o->n_stage = 0;
		o->stage = mfree(o->stage);
	}
	return 0;
}

int v7_out_write(struct v7_out *o, const void *p, size_t n)
{
	const uint8_t *q = p;
	int r;

	if (!o->stage) {
		r = loop_write(o->fd, p, n);
		if (r >= 0)
			advance(o, n);
		return r;
	}
	while (n > 0) {
		size_t k = MIN(n, DIRECT_STAGE_BYTES - o->n_stage);

		memcpy(o->stage + o->n_stage, q, k);
		o->n_stage += k;
		advance(o, k);
		q += k;
		n -= k;
		if (o->n_stage == DIRECT_STAGE_BYTES) {
			r = direct_flush(o, /* all= */ false);
			if (r < 0)
				return r;
			if (!o->stage)
				return v7_out_write(o, q, n);
		}
	}
	return 0;
}

/* The end of the output: what is staged goes out, the fd's flags as they were. */
int v7_out_finish(struct v7_out *o)
{
	return o->stage ? direct_flush(o, /* all= */ true) : 0;
}

int v7_out_zeros(struct v7_out *o, uint64_t n)
{
	static const uint8_t zeros[4096];

	while (n > 0) {
		size_t k = (size_t)MIN(n, (uint64_t)sizeof(zeros));
		int r = v7_out_write(o, zeros, k);

		if (r < 0)
			return r;
		n -= k;
	}
	return 0;
}

/*
 * Copies a region of @in_fd to the current position of @out_fd. In-kernel
 * copies first (copy_file_range shares extents or at least avoids user
 * space; sendfile works for any output), then plain pread/write.
 */
int v7_out_copy(struct v7_out *o, int in_fd, uint64_t offset, uint64_t n)
{
	bool try_cfr = true, try_sendfile = true;
	off_t off = (off_t)offset;
	uint8_t *bounce = NULL;
	int r = 0;

	while (n > 0) {
		size_t want = (size_t)MIN(n, WRITEBACK_KICK_BYTES);
		ssize_t k;

		if (try_cfr) {
			k = copy_file_range(in_fd, &off, o->fd, NULL, want, 0);
			if (k < 0 && (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP ||
				      errno == ENOSYS || errno == EBADF)) {
				try_cfr = false;
				continue;
			}
		} else if (try_sendfile) {
			k = sendfile(o->fd, in_fd, &off, want);
			if (k < 0 && (errno == EINVAL || errno == ENOSYS)) {
				try_sendfile = false;
				continue;
			}
		} else {
			if (!bounce) {
				bounce = malloc(1u << 16);
				if (!bounce)
					return -ENOMEM;
			}
			k = pread(in_fd, bounce, MIN(want, (size_t)(1u << 16)), off);
			if (k > 0) {
				r = loop_write(o->fd, bounce, (size_t)k);
				if (r < 0)
					break;
				off += k;
			}
		}
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) { /* a FIFO, non-blocking: its reader is behind */
				r = wait_writable(o->fd);
				if (r < 0)
					break;
				continue;
			}
			r = -errno;
			break;
		}
		if (k == 0) {
			r = -ENODATA; /* the spool is shorter than its accounting says */
			break;
		}
		n -= (uint64_t)k;
		advance(o, (uint64_t)k);
	}
	free(bounce);
	return r;
}

/* Writes memory blobs in order, many per system call (through the stage when direct). */
int v7_out_blobs(struct v7_out *o, const struct v7_blob *blobs, size_t n)
{
	struct iovec iov[BLOB_IOV_MAX];

	for (; o->stage && n > 0; blobs++, n--) {
		int r = v7_out_write(o, blobs->data, blobs->size);

		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < n;) {
		size_t k = 0, bytes = 0;
		int r;

		for (; i < n && k < ELEMENTSOF(iov); i++, k++) {
			iov[k] = (struct iovec){ .iov_base = (void *)blobs[i].data,
						 .iov_len = blobs[i].size };
			bytes += blobs[i].size;
		}
		r = loop_writev(o->fd, iov, k);
		if (r < 0)
			return r;
		advance(o, bytes);
	}
	return 0;
}

/*
 * Writes a region of another file: copied in the kernel, or read into the
 * stage when the output is direct (a copy would pass the staged bytes).
 */
int v7_out_region(struct v7_out *o, const struct v7_region *reg)
{
	uint64_t off = reg->offset, n = reg->size;
	int r;

	while (o->stage && n > 0) {
		size_t want = (size_t)MIN(n, (uint64_t)(DIRECT_STAGE_BYTES - o->n_stage));
		ssize_t k = pread(reg->fd, o->stage + o->n_stage, want, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -ENODATA;
		o->n_stage += (size_t)k;
		advance(o, (uint64_t)k);
		off += (uint64_t)k;
		n -= (uint64_t)k;
		if (o->n_stage == DIRECT_STAGE_BYTES) {
			r = direct_flush(o, /* all= */ false);
			if (r < 0)
				return r;
		}
	}
	return n > 0 ? v7_out_copy(o, reg->fd, off, n) : 0;
}


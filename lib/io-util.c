// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * read()/write() until every byte moved: short counts and EINTR are normal
 * (pipes, signals, a file system under pressure), and a short write must
 * never silently drop data. Writes to a non-blocking FIFO wait for its
 * reader, but not for ever. A file replaced whole (replace_file_at()).
 * Thread-safe; no state.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ftraced/macro.h"
#include "lib/io-util.h"

/**
 * line_reader_init() - read @fd from where it is, leaving out what @drop says.
 * @r: the reader (large: keep it off small stacks)
 * @fd: the text
 * @drop: which lines to leave out, or NULL
 */
void line_reader_init(struct line_reader *r, int fd, line_drop_fn drop)
{
	r->fd = fd;
	r->drop = drop;
	r->eof = false;
	r->raw_pos = r->raw_len = r->out_pos = r->out_len = 0;
}

/* Whole lines of raw, the kept ones, into out; a last line without a newline at the end. */
static void line_reader_cook(struct line_reader *r)
{
	r->out_pos = r->out_len = 0;
	while (r->raw_pos < r->raw_len) {
		const char *line = r->raw + r->raw_pos;
		const char *nl = memchr(line, '\n', r->raw_len - r->raw_pos);
		size_t n;

		if (!nl && !r->eof)
			break;
		n = nl ? (size_t)(nl - line) + 1 : r->raw_len - r->raw_pos;
		if (n > sizeof(r->out) - r->out_len)
			break;
		if (!r->drop || !r->drop(line, n)) {
			memcpy(r->out + r->out_len, line, n);
			r->out_len += n;
		}
		r->raw_pos += n;
	}
}

/**
 * line_reader_read() - read() through the filter, retrying EINTR.
 * @r: the reader
 * @buf: where the kept bytes go
 * @n: at most this many
 *
 * Return: bytes given (0 at the end), -EFBIG for a line longer than
 * LINE_READER_BYTES, or a read's -errno.
 */
ssize_t line_reader_read(struct line_reader *r, void *buf, size_t n)
{
	while (r->out_pos == r->out_len) {
		ssize_t k;

		line_reader_cook(r);
		if (r->out_len > 0)
			break;
		if (r->eof && r->raw_pos == r->raw_len)
			return 0;
		/* A partial line is kept for the next read; a line that fills raw is too long. */
		memmove(r->raw, r->raw + r->raw_pos, r->raw_len - r->raw_pos);
		r->raw_len -= r->raw_pos;
		r->raw_pos = 0;
		if (r->raw_len == sizeof(r->raw))
			return -EFBIG;
		k = read(r->fd, r->raw + r->raw_len, sizeof(r->raw) - r->raw_len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		r->eof = k == 0;
		r->raw_len += (size_t)k;
	}
	n = MIN(n, r->out_len - r->out_pos);
	memcpy(buf, r->out + r->out_pos, n);
	r->out_pos += n;
	return (ssize_t)n;
}

/**
 * wait_writable() - wait until a non-blocking fd (a FIFO's reader) takes more.
 * @fd: destination that returned EAGAIN
 *
 * Return: 0, -ETIMEDOUT after OUTPUT_STALL_MS without room, or -errno.
 */
int wait_writable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int n;

	do
		n = poll(&p, 1, OUTPUT_STALL_MS);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ETIMEDOUT;
	if (p.revents & POLLERR)
		return -EPIPE;
	return 0;
}

/**
 * loop_writev() - write all of an iovec array; the array is consumed (modified).
 * @fd: destination
 * @iov: buffers, advanced past what was written
 * @n: how many
 *
 * Return: 0, or -errno of the failing write (-EIO if it wrote nothing).
 */
int loop_writev(int fd, struct iovec *iov, size_t n)
{
	while (n > 0) {
		ssize_t k;

		if (iov->iov_len == 0) {
			iov++;
			n--;
			continue;
		}
		k = writev(fd, iov, (int)n);
		if (k < 0) {
			int r;

			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			r = wait_writable(fd);
			if (r < 0)
				return r;
			continue;
		}
		if (k == 0)
			return -EIO;
		while (n > 0 && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

/**
 * loop_write() - write all of @buf.
 * @fd: destination
 * @buf: bytes
 * @n: how many
 *
 * Return: 0, or -errno of the failing write (-EIO if it wrote nothing).
 */
int loop_write(int fd, const void *buf, size_t n)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = n };

	return loop_writev(fd, &iov, 1);
}

/**
 * loop_read() - read up to @n bytes at @fd's position: fewer only at its end.
 * @fd: source
 * @buf: destination
 * @n: how many
 *
 * Return: bytes read, or -errno.
 */
ssize_t loop_read(int fd, void *buf, size_t n)
{
	uint8_t *p = buf;
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(fd, p + got, n - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/**
 * loop_read_exact() - read exactly @n bytes.
 * @fd: source
 * @buf: destination
 * @n: how many
 *
 * Return: 0, -EIO at an early end of file, or -errno.
 */
int loop_read_exact(int fd, void *buf, size_t n)
{
	ssize_t k = loop_read(fd, buf, n);

	return k < 0 ? (int)k : (size_t)k == n ? 0 : -EIO;
}

/**
 * loop_pread_exact() - read exactly @n bytes at @offset.
 * @fd: source
 * @buf: destination
 * @n: how many
 * @offset: file offset
 *
 * Return: 0, -EBADMSG if the file ends first (it is shorter than it says),
 * or -errno.
 */
int loop_pread_exact(int fd, void *buf, size_t n, uint64_t offset)
{
	uint8_t *p = buf;

	while (n > 0) {
		ssize_t k = pread(fd, p, n, (off_t)offset);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EBADMSG;
		p += k;
		n -= (size_t)k;
		offset += (uint64_t)k;
	}
	return 0;
}

/**
 * loop_pwrite() - write all of @n bytes at @offset (a regular file).
 * @fd: destination
 * @buf: source
 * @n: how many
 * @offset: file offset
 *
 * Return: 0, -ENOSPC if the file system takes only part, or -errno.
 */
int loop_pwrite(int fd, const void *buf, size_t n, uint64_t offset)
{
	const uint8_t *p = buf;

	while (n > 0) {
		ssize_t k = pwrite(fd, p, n, (off_t)offset);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -ENOSPC;
		p += k;
		n -= (size_t)k;
		offset += (uint64_t)k;
	}
	return 0;
}

/**
 * replace_file_at() - make @name in @dir_fd hold @data, whole or not at all.
 * @dir_fd: the directory
 * @name: the file
 * @data: its new contents
 * @n: their length
 * @mode: permissions of a new file
 *
 * Written to ".@name.tmp", synced, renamed over @name, and the directory
 * synced: a crash leaves the old contents or the new. The temporary file
 * is made new (O_EXCL, after removing any left): a link planted under its
 * name, symbolic or hard, is never written through.
 *
 * Return: 0 or -errno.
 */
int replace_file_at(int dir_fd, const char *name, const void *data, size_t n, mode_t mode)
{
	char tmp[NAME_MAX + 1];
	int fd, r;

	if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.tmp", name) >= sizeof(tmp))
		return -ENAMETOOLONG;
	if (unlinkat(dir_fd, tmp, 0) < 0 && errno != ENOENT)
		return -errno;
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	r = loop_write(fd, data, n);
	if (r >= 0 && fsync(fd) < 0)
		r = -errno;
	close(fd);
	if (r >= 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
		r = -errno;
	if (r >= 0 && fsync(dir_fd) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dir_fd, tmp, 0);
	return r;
}

/**
 * memfd_sealed() - a memfd holding @data, sealed against change, at its start.
 * @name: its name (for /proc)
 * @data: the bytes
 * @n: how many
 * @ret_fd: the descriptor (close-on-exec)
 *
 * For text handed to a client over the socket, whatever its size.
 *
 * Return: 0 or -errno.
 */
int memfd_sealed(const char *name, const void *data, size_t n, int *ret_fd)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int r;

	if (fd < 0)
		return -errno;
	r = loop_write(fd, data, n);
	if (r >= 0 && (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK |
			     F_SEAL_SEAL) < 0 || lseek(fd, 0, SEEK_SET) < 0))
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/**
 * memfd_map_sealed() - map a sealed memfd another process passed, read-only.
 * @fd: the descriptor
 * @max: largest size accepted
 * @ret: receives the mapping (munmap() it with *ret_n), NULL when empty
 * @ret_n: receives its size
 *
 * Only a memfd sealed against writing, growing and shrinking is taken:
 * its sender cannot change it under the reader, or cut it to SIGBUS us.
 *
 * Return: 0; -EPERM if it is not such a memfd; -EFBIG beyond @max; -errno.
 */
int memfd_map_sealed(int fd, size_t max, void **ret, size_t *ret_n)
{
	const int need = F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK;
	struct stat st;
	void *p = NULL;
	int seals;

	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0)
		return errno == EINVAL ? -EPERM : -errno;
	if ((seals & need) != need)
		return -EPERM;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EPERM;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	if (st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			return -errno;
	}
	*ret = p;
	*ret_n = (size_t)st.st_size;
	return 0;
}

/**
 * read_file_at() - a small regular file of @dir_fd, whole, NUL-terminated.
 * @dir_fd: the directory
 * @name: the file, never followed if a link
 * @max: most bytes accepted
 * @ret: receives it (free())
 * @ret_n: receives its size, or NULL
 *
 * Return: 0, -EFBIG for what is larger than @max or not a regular file, or -errno.
 */
int read_file_at(int dir_fd, const char *name, size_t max, char **ret, size_t *ret_n)
{
	struct stat st;
	char *buf;
	int fd, r;

	/* O_NONBLOCK: a FIFO planted in the state directory must not hang us. */
	fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	r = loop_pread_exact(fd, buf, (size_t)st.st_size, 0);
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[st.st_size] = '\0';
	*ret = buf;
	if (ret_n)
		*ret_n = (size_t)st.st_size;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Output descriptors from clients. The daemon never opens a path a client
 * named: the client opens its file with its own rights and passes the fd.
 * That fd must be a regular file or FIFO, writable, without O_APPEND, and
 * not on FUSE (its server could stall our writes, or be the writer's own
 * client). A FIFO is made non-blocking, so a reader that stops reading
 * fails the file after OUTPUT_STALL_MS instead of holding a thread for
 * ever. Pure checks on the fd; main thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "daemon/store/output-fd.h"
#include "ftraced/macro.h"

/* A system call on the fd failed: the errno, and a message for the client. */
static int invalid(char *error, size_t n_error)
{
	int r = negative_errno();

	snprintf(error, n_error, "invalid output file descriptor: %s", strerror(-r));
	return r;
}

/**
 * output_fd_check() - may the daemon write a file into this client's fd?
 * @fd: the descriptor the client passed
 * @error: receives the reason for the client when it may not
 * @n_error: its size
 *
 * Return: 0 (a FIFO is now non-blocking), or -errno with @error set.
 */
int output_fd_check(int fd, char *error, size_t n_error)
{
	struct statfs sfs;
	struct stat st;
	int flags, seals;

	if (fstat(fd, &st) < 0) {
		return invalid(error, n_error);
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(error, n_error, "the output is a directory");
		return -EISDIR;
	}
	if (S_ISSOCK(st.st_mode)) {
		snprintf(error, n_error, "the output is a socket: give a regular file or a FIFO");
		return -ENOTSUP;
	}
	if (S_ISCHR(st.st_mode) && isatty(fd)) {
		snprintf(error, n_error, "the output is a terminal: give a regular file or a FIFO");
		return -ENOTTY;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		snprintf(error, n_error, "the output must be a regular file or a FIFO");
		return -EBADF;
	}
	seals = fcntl(fd, F_GET_SEALS);
	if (seals > 0 && (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE | F_SEAL_GROW))) {
		snprintf(error, n_error, "the output is a memfd sealed against writing or growing");
		return -EPERM;
	}
	if (fstatfs(fd, &sfs) < 0) {
		return invalid(error, n_error);
	}
	if (sfs.f_type == FUSE_SUPER_MAGIC) {
		snprintf(error, n_error, "the output is on a FUSE file system, which ftraced does "
			 "not write to");
		return -EXDEV;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0) {
		return invalid(error, n_error);
	}
	if ((flags & O_ACCMODE) != O_WRONLY && (flags & O_ACCMODE) != O_RDWR) {
		snprintf(error, n_error, "the output file is not open for writing");
		return -EBADF;
	}
	if (flags & O_APPEND) {
		snprintf(error, n_error, "the output file must not be opened with O_APPEND");
		return -EBADF;
	}
	if (S_ISFIFO(st.st_mode) && !(flags & O_NONBLOCK) &&
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		int r = negative_errno();

		snprintf(error, n_error, "cannot make the output FIFO non-blocking: %s", strerror(-r));
		return r;
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Output files the client opens itself, with the user's own rights, and
 * passes to the daemon: written as FILE.partial and renamed into place
 * only once the daemon says the file is complete, so a FILE that exists
 * is always whole. An existing FIFO is the exception, for streaming: it is
 * opened as it is (waiting for its reader) and there is nothing to rename.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/ctl.h"
#include "client/output.h"
#include "ftraced/macro.h"

/**
 * output_open() - create OUTPUT.partial for writing, or open the FIFO OUTPUT.
 * @command: for messages
 * @output: the final name
 * @force: overwrite an existing @output
 * @partial: receives the partial name ("" for a FIFO)
 * @n: its size
 *
 * Return: the fd, or -errno after printing why.
 */
int output_open(const char *command, const char *output, bool force, char *partial, size_t n)
{
	struct stat st;
	int fd;

	if (n > 0)
		partial[0] = '\0';
	if (stat(output, &st) == 0 && S_ISFIFO(st.st_mode)) {
		fd = open(output, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			int r = negative_errno();

			print_error(command, "cannot open the FIFO '%s': %s", output, strerror(-r));
			return r;
		}
		return fd;
	}
	if ((size_t)snprintf(partial, n, "%s.partial", output) >= n) {
		print_error(command, "output path is too long");
		return -ENAMETOOLONG;
	}
	if (!force && lstat(output, &st) == 0) {
		print_error(command, "'%s' exists; use --force to overwrite it", output);
		return -EEXIST;
	}
	fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0) {
		int r = negative_errno();

		print_error(command, "cannot create '%s': %s", partial, strerror(-r));
		return r;
	}
	return fd;
}

/**
 * output_open_stdout() - standard output as the trace's output (-o -).
 * @command: for messages
 *
 * A pipe streams the file; a regular file (a shell's "> FILE") is written
 * from its start. A terminal would show binary, a file opened for
 * appending could not be written in place: both are refused.
 *
 * Return: a duplicate of standard output, or -errno after printing why.
 */
int output_open_stdout(const char *command)
{
	struct stat st;
	int flags, fd;

	if (isatty(STDOUT_FILENO)) {
		print_error(command, "-o - writes a binary trace to standard output, which is a "
			    "terminal: redirect it to a file or a pipe, or give -o FILE");
		return -ENOTTY;
	}
	if (fstat(STDOUT_FILENO, &st) < 0 || (flags = fcntl(STDOUT_FILENO, F_GETFL)) < 0) {
		int r = negative_errno();

		print_error(command, "standard output cannot be used: %s", strerror(-r));
		return r;
	}
	if (S_ISREG(st.st_mode) && ((flags & O_APPEND) || lseek(STDOUT_FILENO, 0, SEEK_CUR) != 0)) {
		print_error(command, "-o -: standard output is a file opened for appending or not "
			    "at its start (>>?); use > FILE or -o FILE");
		return -EINVAL;
	}
	fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0) {
		int r = negative_errno();

		print_error(command, "cannot duplicate standard output: %s", strerror(-r));
		return r;
	}
	return fd;
}

/**
 * output_commit() - rename the complete file into place, durably.
 * @command: for messages
 * @partial: the partial name ("": a FIFO, nothing to do)
 * @output: the final name
 *
 * Return: 0, or -errno after printing why.
 */
int output_commit(const char *command, const char *partial, const char *output)
{
	_cleanup_free_ char *copy = NULL;
	int fd, r;

	if (!partial[0])
		return 0;
	if (rename(partial, output) < 0) {
		r = negative_errno();
		print_error(command, "cannot rename '%s' to '%s': %s", partial, output,
			    strerror(-r));
		return r;
	}
	/* Without this a power cut can undo the rename. */
	copy = strdup(output);
	fd = copy ? open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -EBADF;
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return 0;
}

/**
 * output_discard() - remove the partial file of a capture that never started.
 * @partial: the partial name ("" for a FIFO)
 */
void output_discard(const char *partial)
{
	if (partial[0])
		unlink(partial);
}

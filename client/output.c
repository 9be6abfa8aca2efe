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
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/ctl.h"
#include "client/output.h"
#include "ftraced/macro.h"
#include "lib/io-util.h"

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

/* Copies @in (at its start) into a new file @path; a partial copy is removed. */
static int copy_into(int in, const char *path)
{
	_cleanup_close_ int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	char buf[65536];
	ssize_t n;
	int r = 0;

	if (out < 0)
		return negative_errno();
	if (lseek(in, 0, SEEK_SET) < 0)
		r = negative_errno();
	while (r >= 0 && (n = read(in, buf, sizeof(buf))) != 0)
		r = n < 0 ? (errno == EINTR ? 0 : negative_errno()) : loop_write(out, buf, (size_t)n);
	if (r >= 0 && fsync(out) < 0)
		r = negative_errno();
	if (r < 0)
		unlink(path);
	return r;
}

/**
 * output_save_recovered() - a copy of what a failed record recovered, for its user.
 * @fd: the recovered file, as the daemon passed it
 * @output: the record's output name
 * @ret_path: receives where the copy went
 * @n: its size
 *
 * The daemon rebuilt the capture in its state directory, which only root
 * reads: the copy goes beside the output as NAME-recovered.dat or, where
 * that fails (the output's file system is what filled up), into the
 * current directory.
 *
 * Return: 0, or the -errno of the last place tried.
 */
int output_save_recovered(int fd, const char *output, char *ret_path, size_t n)
{
	_cleanup_free_ char *copy = strdup(output);
	size_t len = strlen(output);
	int r;

	if (!copy)
		return -ENOMEM;
	if (len > 4 && strcmp(output + len - 4, ".dat") == 0)
		copy[len - 4] = '\0';
	if ((size_t)snprintf(ret_path, n, "%s-recovered.dat", copy) >= n)
		return -ENAMETOOLONG;
	r = copy_into(fd, ret_path);
	if (r >= 0)
		return 0;
	if ((size_t)snprintf(ret_path, n, "%s-recovered.dat", basename(copy)) >= n)
		return -ENAMETOOLONG;
	if (strcmp(ret_path, output) == 0)
		return r;
	return copy_into(fd, ret_path);
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

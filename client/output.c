// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Output files the client opens itself, with the user's own rights, and
 * passes to the daemon: written as FILE.partial and renamed into place
 * only once the daemon says the file is complete, so a FILE that exists
 * is always whole.
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
 * output_open_partial() - create OUTPUT.partial for writing.
 * @command: for messages
 * @output: the final name
 * @force: overwrite an existing @output
 * @partial: receives the partial name
 * @n: its size
 *
 * Return: the fd, or -errno after printing why.
 */
int output_open_partial(const char *command, const char *output, bool force, char *partial,
			size_t n)
{
	struct stat st;
	int fd;

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
 * output_commit() - rename the complete file into place, durably.
 * @command: for messages
 * @partial: the partial name
 * @output: the final name
 *
 * Return: 0, or -errno after printing why.
 */
int output_commit(const char *command, const char *partial, const char *output)
{
	_cleanup_free_ char *copy = NULL;
	int fd, r;

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

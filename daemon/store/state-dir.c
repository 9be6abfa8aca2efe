// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The state directory at start-up: made if needed, locked for the daemon's
 * life (the lock file names its holder), its instance tag read or made.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/base/log.h"
#include "daemon/kernel/instance.h"
#include "daemon/store/state-dir.h"
#include "lib/io-util.h"

/**
 * state_dir_open() - open (creating it if needed) and lock the state directory.
 * @path: the state directory
 * @ret_dir_fd: its fd, kept for the daemon's life (closed by the caller, also on failure)
 * @ret_lock_fd: its lock file's, held for the daemon's life (likewise)
 * @ret_tag: the instance tag kept in it (made on the first start)
 *
 * One daemon per state directory, which is what makes its instance tag its
 * own; a second one is refused naming the first's pid, which the lock file
 * holds. Logs what went wrong.
 *
 * Return: 0, -EBUSY if another daemon holds it, or -errno.
 */
int state_dir_open(const char *path, int *ret_dir_fd, int *ret_lock_fd, uint32_t *ret_tag)
{
	_cleanup_free_ char *resolved = NULL;
	int r;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return log_error_errno(negative_errno(), "Cannot create state directory '%s': %m",
				       path);
	*ret_dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*ret_dir_fd < 0)
		return log_error_errno(negative_errno(), "Cannot open state directory '%s': %m",
				       path);
	*ret_lock_fd = openat(*ret_dir_fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			    0600);
	if (*ret_lock_fd < 0)
		return log_error_errno(negative_errno(), "Cannot open '%s/lock': %m", path);
	if (flock(*ret_lock_fd, LOCK_EX | LOCK_NB) < 0) {
		char pid[STATE_LOCK_PID_MAX + 1] = "";

		if (errno != EWOULDBLOCK)
			return log_error_errno(negative_errno(), "Cannot lock '%s/lock': %m", path);
		/* The holder wrote its pid in it once it had the lock (below). */
		(void)!pread(*ret_lock_fd, pid, STATE_LOCK_PID_MAX, 0);
		pid[strspn(pid, "0123456789")] = '\0';
		return log_error_errno(-EBUSY, "Another ftraced (pid %s) uses state directory '%s'",
				       pid[0] ? pid : "unknown", path);
	}
	/* So that a second daemon on this state directory can name this one. */
	if (ftruncate(*ret_lock_fd, 0) < 0 || dprintf(*ret_lock_fd, "%d\n", (int)getpid()) < 0)
		log_debug_errno(negative_errno(), "Cannot write the pid into '%s/lock': %m", path);
	resolved = realpath(path, NULL);
	if (!resolved)
		return log_error_errno(negative_errno(), "Cannot resolve '%s': %m", path);
	r = instance_tag_load(*ret_dir_fd, resolved, /* create= */ true, ret_tag);
	if (r < 0)
		return log_error_errno(r, "Cannot read or write '%s/%s': %m", path,
				       INSTANCE_TAG_FILE);
	return 0;
}

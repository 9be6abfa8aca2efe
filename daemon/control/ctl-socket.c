// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket itself: the one systemd passed (socket activation),
 * or one bound here with the group's permissions. ctl-server.c serves it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "daemon/base/log.h"
#include "daemon/control/ctl-socket.h"
#include "lib/io-util.h"

/* The activated socket if systemd passed one for @path, else -ENOENT. Unknown fds are closed. */
int ctl_socket_from_systemd(const char *path)
{
	int n, found = -ENOENT;

	n = sd_listen_fds(1);
	if (n < 0)
		return n;
	for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
		if (found < 0 && sd_is_socket_unix(fd, SOCK_SEQPACKET, 1, path, 0) > 0) {
			found = fd;
			continue;
		}
		log_warning("Closing unexpected file descriptor %d passed by the service manager",
			    fd);
		safe_close(fd);
	}
	return found;
}

/*
 * A socket bound at @path (its directory made), mode 0660, group @group,
 * listening. Return: the fd, -EADDRINUSE if a daemon answers there, or -errno.
 */
int ctl_socket_bind(const char *path, gid_t group)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *dir = NULL;
	char *slash;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);

	dir = strdup(path);
	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return negative_errno();
	}

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return negative_errno();
	/* A socket file is left behind by a daemon that died; one that answers is alive. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return -EADDRINUSE;
	safe_close(fd);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return negative_errno();
	{
		struct stat st;

		if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(path);
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return negative_errno();
	if (chmod(path, 0660) < 0)
		return negative_errno();
	if (group != (gid_t)-1 && chown(path, 0, group) < 0)
		return negative_errno();
	if (listen(fd, 32) < 0)
		return negative_errno();
	return TAKE_FD(fd);
}

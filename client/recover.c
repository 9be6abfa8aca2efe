// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl recover STATE_DIR: what the daemon does at start-up, by hand
 * and without it: every spool a crash left becomes a "...-recovered.dat"
 * file (see daemon/recovery.c), with what its orphaned instance still held.
 * The state directory's lock keeps it away from a running daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <tracefs.h>

#include "client/commands.h"
#include "client/ctl.h"
#include "daemon/instance.h"
#include "daemon/log.h"
#include "daemon/recovery.h"
#include "ftraced/macro.h"

int cmd_recover(const struct client_options *o, int argc, char *argv[])
{
	_cleanup_close_ int dir_fd = -EBADF, lock_fd = -EBADF;
	_cleanup_free_ char *resolved = NULL;
	unsigned recovered, failed;
	char prefix[32];
	int r;

	if (argc != 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		printf("Usage: ftracectl recover STATE_DIR\n\n"
		       "Rebuild readable files from the spools of captures a crash interrupted,\n"
		       "as ftraced does when it starts. Needs root and a mounted tracefs.\n");
		return argc == 2 ? EXIT_OK : EXIT_USAGE;
	}
	log_set_syslog_prefix(false);
	dir_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	resolved = realpath(argv[1], NULL);
	if (dir_fd < 0 || !resolved) {
		print_error("recover", "cannot open '%s': %m", argv[1]);
		return EXIT_FAILED;
	}
	lock_fd = openat(dir_fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) < 0) {
		print_error("recover", errno == EWOULDBLOCK ?
			    "ftraced is running on '%s'; it recovers by itself when it starts" :
			    "cannot lock '%s': %m", argv[1]);
		return EXIT_FAILED;
	}
	if (!tracefs_tracing_dir()) {
		print_error("recover", "tracefs is not mounted (needed for event formats)");
		return EXIT_FAILED;
	}
	snprintf(prefix, sizeof(prefix), "ftraced-%08" PRIx32 "-", instance_tag(resolved));
	r = recovery_recover_all(dir_fd, prefix, &recovered, &failed);
	if (r < 0) {
		print_error("recover", "cannot read '%s/spool': %s", argv[1], strerror(-r));
		return EXIT_FAILED;
	}
	if (o->json)
		printf("{\"recovered\": %u, \"failed\": %u}\n", recovered, failed);
	else
		printf("%u capture(s) recovered, %u could not be\n", recovered, failed);
	return failed > 0 ? EXIT_FAILED : EXIT_OK;
}

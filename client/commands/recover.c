// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl recover STATE_DIR: runs `ftraced --recover STATE_DIR`, the
 * daemon's own start-up recovery without the daemon (see
 * daemon/recovery/recovery.c). Recovery needs root, tracefs and the state
 * directory's lock, which are the daemon's business: the client stays a
 * thin, unprivileged program that links the format library only.
 *
 * The daemon binary is FTRACED_BINARY from the environment, else the one
 * installed beside this client (FTRACED_PATH, set at build time).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/commands/commands.h"
#include "client/ctl.h"
#include "config.h"

int cmd_recover(const struct client_options *o, int argc, char *argv[])
{
	const char *daemon = getenv("FTRACED_BINARY");
	char *args[] = { NULL, (char *)"--recover", NULL, o->json ? (char *)"--json" : NULL, NULL };

	if (argc != 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		printf("Usage: ftracectl recover STATE_DIR\n\n"
		       "Rebuild readable files from the spools of captures a crash interrupted,\n"
		       "as ftraced does when it starts (this runs ftraced's own recovery step).\n"
		       "Needs root and a mounted tracefs.\n");
		return argc == 2 ? EXIT_OK : EXIT_USAGE;
	}
	if (!daemon || !*daemon)
		daemon = FTRACED_PATH;
	args[0] = (char *)daemon;
	args[2] = argv[1];
	(void)fflush(stdout);
	execv(daemon, args);
	print_error("recover", "cannot run '%s': %m", daemon);
	return EXIT_FAILED;
}

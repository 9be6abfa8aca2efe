// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl recover STATE_DIR: runs `ftraced --recover STATE_DIR`, the
 * daemon's own start-up recovery without the daemon (see
 * daemon/recovery/recovery.c). Recovery needs root, tracefs and the state
 * directory's lock, which are the daemon's business: the client stays a
 * thin, unprivileged program that links the format library only.
 *
 * The daemon binary is FTRACED_BINARY from the environment, else the
 * ftraced beside this client (find_beside()), else the installed one
 * (FTRACED_PATH, set at build time).
 */
#include <errno.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/commands/commands.h"
#include "client/ctl.h"
#include "config.h"
#include "ftraced/macro.h"

/*
 * The ftraced that goes with this ftracectl: in its directory, in ../sbin
 * (installed: bin/ftracectl, sbin/ftraced) or in ../daemon (the build
 * tree), from /proc/self/exe's real path, so that a build is recovered by
 * its own daemon and not by whatever is installed.
 */
static bool find_beside(char *buf, size_t n)
{
	static const char *const beside[] = { "ftraced", "../sbin/ftraced", "../daemon/ftraced" };
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len <= 0)
		return false;
	self[len] = '\0';
	dirname(self);
	for (size_t k = 0; k < ELEMENTSOF(beside); k++) {
		if ((size_t)snprintf(buf, n, "%s/%s", self, beside[k]) >= n)
			continue;
		if (access(buf, X_OK) == 0)
			return true;
	}
	return false;
}

int cmd_recover(const struct client_options *o, int argc, char *argv[])
{
	const char *daemon = getenv("FTRACED_BINARY");
	char found[PATH_MAX];
	char *args[] = { NULL, (char *)"--recover", NULL, o->json ? (char *)"--json" : NULL, NULL };

	if (argc != 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		printf("Usage: ftracectl recover STATE_DIR\n\n"
		       "Rebuild readable files from the spools of captures a crash interrupted,\n"
		       "as ftraced does when it starts (this runs ftraced's own recovery step).\n"
		       "Needs root and a mounted tracefs.\n");
		return argc == 2 ? EXIT_OK : EXIT_USAGE;
	}
	if (!daemon || !*daemon)
		daemon = find_beside(found, sizeof(found)) ? found : FTRACED_PATH;
	args[0] = (char *)daemon;
	args[2] = argv[1];
	(void)fflush(stdout);
	execv(daemon, args);
	print_error("recover", "cannot run '%s': %m", daemon);
	return EXIT_FAILED;
}

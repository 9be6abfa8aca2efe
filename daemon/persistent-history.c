// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A persistent flight recorder's history across restarts of the daemon.
 * Its recipe (recovery-recipe.h) names the boot that armed the boot-mapped
 * instance. After a reboot, the next start writes the history into a file
 * (recovery.c). Within the same boot a restarted daemon resumes it: the
 * ring is neither read nor cleared, and the new session takes the place of
 * the old recipe. Not read, because Debian's 6.12.95 does not keep a
 * boot-mapped ring across the next reboot once it has been read (measured:
 * a crash after a read, or after a drain at start-up, came back empty).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/bounds.h"
#include "daemon/clock-anchor.h"
#include "daemon/log.h"
#include "daemon/persistent-history.h"
#include "daemon/recovery-recipe.h"
#include "daemon/spool.h"
#include "lib/io-util.h"

/**
 * persistent_history_of_this_boot() - is this a persistent history armed in this boot?
 * @p: a parsed recipe
 *
 * Return: true if its session, created again, resumes it instead of recovery writing it.
 */
bool persistent_history_of_this_boot(const struct parsed_recipe *p)
{
	char now[40];

	return p->persistent && p->boot[0] && boot_id(now) == 0 && strcmp(now, p->boot) == 0;
}

/* Is the spool @name a persistent history of @instance, armed in this boot? */
static bool resumable(int spool_fd, const char *name, const char *instance)
{
	_cleanup_close_ int dir_fd = openat(spool_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
					    O_NOFOLLOW);
	struct parsed_recipe p = {};
	bool yes;

	if (dir_fd < 0 || recipe_parse(dir_fd, &p) < 0) {
		recipe_done(&p);
		return false;
	}
	yes = persistent_history_of_this_boot(&p) && strcmp(p.instance, instance) == 0;
	recipe_done(&p);
	return yes;
}

/**
 * persistent_history_take() - a session arms @instance again in the same boot.
 * @state_dir_fd: the state directory
 * @instance: the boot-mapped instance
 * @keep_trace_id: the new session's own recipe's spool, which stays
 *
 * The recipes of this boot's earlier sessions on @instance go: the new one
 * covers what the ring holds.
 *
 * Return: how many there were (then the ring is this boot's history, to
 * resume, not to clear), or -errno.
 */
int persistent_history_take(int state_dir_fd, const char *instance, uint64_t keep_trace_id)
{
	char keep[64];
	struct dirent *de;
	int spool_fd, n = 0;
	DIR *d;

	spool_name(keep_trace_id, keep, sizeof(keep));
	spool_fd = openat(state_dir_fd, SPOOL_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (spool_fd < 0)
		return errno == ENOENT ? 0 : negative_errno();
	d = fdopendir(spool_fd);
	if (!d) {
		close(spool_fd);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		if (!spool_name_valid(de->d_name) || strcmp(de->d_name, keep) == 0 ||
		    !resumable(spool_fd, de->d_name, instance))
			continue;
		log_info("Boot-mapped instance '%s' holds the history of this boot: resumed, its "
			 "earlier recipe '%s' replaced", instance, de->d_name);
		spool_remove_dir(spool_fd, de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

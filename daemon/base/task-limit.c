// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which limit on tasks a thread that could not start ran into, said by
 * name: the pids controller of the daemon's cgroup (systemd's TasksMax=),
 * v2 or v1, or the kernel's threads-max. For the message only: read when
 * a thread could not be started. Main thread.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/base/task-limit.h"
#include "ftraced/macro.h"

/* The first line of a small file, without its newline; "" if it cannot be read. */
static void read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)n, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* pids.max and pids.current of the cgroup @dir, said if it has a limit. */
static bool describe_pids(const char *dir, const char *cgroup, char *buf, size_t n)
{
	char path[PATH_MAX], max[32], current[32];

	snprintf(path, sizeof(path), "%s/pids.max", dir);
	read_line(path, max, sizeof(max));
	if (!max[0] || strcmp(max, "max") == 0)
		return false;
	snprintf(path, sizeof(path), "%s/pids.current", dir);
	read_line(path, current, sizeof(current));
	snprintf(buf, n, "pids.max of cgroup %s is %s, %s in use", cgroup, max,
		 current[0] ? current : "?");
	return true;
}

/**
 * task_limit_describe() - the limit on tasks that applies to the daemon, in words.
 * @buf: receives it, e.g. "pids.max of cgroup /system.slice/ftraced.service is 64, 64 in use"
 * @n: its size
 *
 * Return: 0, or -ENOENT if no limit below the kernel's was found (@buf then
 * names kernel.threads-max).
 */
int task_limit_describe(char *buf, size_t n)
{
	char line[PATH_MAX + 64], dir[PATH_MAX + 32], threads[32];
	FILE *f = fopen("/proc/self/cgroup", "re");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *controllers = strchr(line, ':'), *path;

		if (!controllers)
			continue;
		path = strchr(++controllers, ':');
		if (!path)
			continue;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (strcmp(controllers, "") == 0) {
			/* v2: the unified hierarchy, mounted alone or beside v1. */
			snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s", path);
			found = describe_pids(dir, path, buf, n);
			snprintf(dir, sizeof(dir), "/sys/fs/cgroup/unified%s", path);
			found = found || describe_pids(dir, path, buf, n);
		} else if (strstr(controllers, "pids")) {
			snprintf(dir, sizeof(dir), "/sys/fs/cgroup/pids%s", path);
			found = describe_pids(dir, path, buf, n);
		}
	}
	if (f)
		fclose(f);
	if (found)
		return 0;
	read_line("/proc/sys/kernel/threads-max", threads, sizeof(threads));
	snprintf(buf, n, "no cgroup limit found; kernel.threads-max is %s", threads[0] ? threads : "?");
	return -ENOENT;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * record --proc-map: a process's memory maps as trace-cmd stores them in
 * its PROCMAPS option, read here with the user's rights (the daemon keeps
 * no capability to read another process's maps) and sent with the STOP, so that trace-cmd report can name the library of a
 * user-space address. One text per process: "PID COUNT NAME\n" (PID and
 * COUNT in hex, NAME its executable), then "START END FILE\n" (hex) for
 * each file it maps, the consecutive mappings of one file merged into one
 * range. Only file-backed mappings count; anonymous ones name nothing,
 * and a file whose name is not printable ASCII is left out (the protocol
 * carries printable text).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/proc-maps.h"
#include "ftraced/macro.h"
#include "ftraced/proto.h"

struct mapped_file {
	unsigned long long start, end;
	char name[PATH_MAX];
};

static bool printable(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s >= 0x7f)
			return false;
	return true;
}

/* One line of /proc/PID/maps: "START-END PERMS OFFSET DEV INODE [PATH]". Return: has a path. */
static bool parse_line(char *line, struct mapped_file *ret)
{
	int name_at = 0;
	char *name;

	if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &ret->start, &ret->end, &name_at) < 2 ||
	    name_at == 0)
		return false;
	name = line + name_at;
	name[strcspn(name, "\n")] = '\0';
	/* "[heap]", "[stack]", anonymous: no file. */
	if (name[0] != '/')
		return false;
	snprintf(ret->name, sizeof(ret->name), "%s", name);
	return true;
}

/**
 * proc_maps_text() - the PROCMAPS text of process @pid, as trace-cmd writes it.
 * @pid: a live process (its maps go with its memory when it exits)
 * @ret: the text, NUL-terminated (caller frees)
 *
 * Return: 0, -ENOENT if it has no executable or maps any more (gone, a
 * kernel thread), -E2BIG past FTRACED_PROC_MAPS_MAX, or another -errno.
 */
int proc_maps_text(pid_t pid, char **ret)
{
	char path[64], exe[PATH_MAX], line[PATH_MAX + 128];
	_cleanup_free_ struct mapped_file *files = NULL;
	_cleanup_free_ char *text = NULL;
	unsigned n = 0;
	size_t n_text = 0;
	ssize_t len;
	FILE *f, *out;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	len = readlink(path, exe, sizeof(exe) - 1);
	if (len <= 0)
		return len < 0 && errno != ENOENT ? -errno : -ENOENT;
	exe[len] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ENOENT : -errno;
	files = calloc(PROC_MAPS_FILES_MAX, sizeof(*files));
	if (!files) {
		fclose(f);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		struct mapped_file m;

		if (!parse_line(line, &m) || !printable(m.name))
			continue;
		if (n > 0 && strcmp(files[n - 1].name, m.name) == 0) {
			files[n - 1].end = m.end;
			continue;
		}
		if (n == PROC_MAPS_FILES_MAX)
			break;
		files[n++] = m;
	}
	fclose(f);
	if (n == 0)
		return -ENOENT;
	out = open_memstream(&text, &n_text);
	if (!out)
		return -ENOMEM;
	fprintf(out, "%x %x %s\n", (unsigned)pid, n, printable(exe) ? exe : "?");
	for (unsigned k = 0; k < n; k++)
		fprintf(out, "%llx %llx %s\n", files[k].start, files[k].end, files[k].name);
	if (fclose(out) != 0)
		return -ENOMEM;
	if (n_text > FTRACED_PROC_MAPS_MAX)
		return -E2BIG;
	*ret = TAKE_PTR(text);
	return 0;
}

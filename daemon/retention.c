// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Retention of a continuous session's closed segments, in journald's
 * manner: after every close (and at start-up) delete the oldest closed
 * segments until every limit holds - total size, number of files, age and
 * the free space to keep, the strictest winning. Free space is what
 * unprivileged users can get (f_bavail), so a root daemon never eats the
 * file system's reserve. Only files named "<prefix>*.dat" count; the open
 * segment is a hidden temporary file and is never deleted.
 *
 * retention_plan() is pure; retention_apply() does the directory work.
 * Main thread only.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "daemon/log.h"
#include "daemon/retention.h"

#define RETENTION_FILES_MAX 100000

/**
 * retention_plan() - how many of the oldest files must go.
 * @l: the limits
 * @files: closed segments, oldest first
 * @n: how many
 * @fs_avail: bytes available to unprivileged users now
 * @fs_size: size of the file system
 * @now_usec: the current time
 *
 * Return: the number of files, from the oldest, to delete.
 */
size_t retention_plan(const struct retention_limits *l, const struct retention_file *files,
		      size_t n, uint64_t fs_avail, uint64_t fs_size, uint64_t now_usec)
{
	uint64_t total = 0, keep_free = l->keep_free;
	size_t k;

	if (l->keep_free_percent > 0 && fs_size / 100 * l->keep_free_percent > keep_free)
		keep_free = fs_size / 100 * l->keep_free_percent;
	for (size_t i = 0; i < n; i++)
		total += files[i].size;
	for (k = 0; k < n; k++) {
		const struct retention_file *f = &files[k];
		bool too_big = l->max_total > 0 && total > l->max_total;
		bool too_many = l->max_files > 0 && n - k > l->max_files;
		bool too_old = l->max_age_usec > 0 && now_usec > f->mtime_usec &&
			       now_usec - f->mtime_usec > l->max_age_usec;
		bool too_full = keep_free > 0 && fs_avail < keep_free;

		if (!too_big && !too_many && !too_old && !too_full)
			break;
		total -= f->size;
		fs_avail += f->size;
	}
	return k;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct retention_file *)a)->name,
		      ((const struct retention_file *)b)->name);
}

static bool is_segment(const char *name, const char *prefix)
{
	size_t n = strlen(name), p = strlen(prefix);

	return n > p + 4 && strncmp(name, prefix, p) == 0 && strcmp(name + n - 4, ".dat") == 0;
}

/**
 * retention_apply() - delete the oldest closed segments until the limits hold.
 * @dir_fd: the session's directory
 * @prefix: segment names start with it ("<session>-"); they sort by time
 * @l: the limits
 * @ret: what is left on disk, and how many files were deleted
 *
 * Return: 0 or -errno (listing failed; a file that cannot be deleted is
 * logged and kept).
 */
int retention_apply(int dir_fd, const char *prefix, const struct retention_limits *l,
		    struct retention_usage *ret)
{
	struct retention_file *files = NULL;
	struct timespec now;
	struct statvfs sv;
	struct dirent *de;
	size_t n = 0, cap = 0, drop;
	int fd;
	DIR *d;

	fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d)) && n < RETENTION_FILES_MAX) {
		struct stat st;

		if (!is_segment(de->d_name, prefix) ||
		    fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			struct retention_file *f;

			cap = cap ? cap * 2 : 64;
			f = realloc(files, cap * sizeof(*f));
			if (!f) {
				closedir(d);
				free(files);
				return -ENOMEM;
			}
			files = f;
		}
		snprintf(files[n].name, sizeof(files[n].name), "%s", de->d_name);
		files[n].size = (uint64_t)st.st_blocks * 512;
		files[n].mtime_usec = (uint64_t)st.st_mtim.tv_sec * 1000000u +
				      (uint64_t)st.st_mtim.tv_nsec / 1000u;
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(files, n, sizeof(*files), cmp_name);

	if (fstatvfs(dir_fd, &sv) < 0) {
		free(files);
		return negative_errno();
	}
	clock_gettime(CLOCK_REALTIME, &now);
	drop = retention_plan(l, files, n, (uint64_t)sv.f_bavail * sv.f_frsize,
			      (uint64_t)sv.f_blocks * sv.f_frsize,
			      (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u);
	*ret = (struct retention_usage){};
	for (size_t i = 0; i < n; i++) {
		if (i < drop) {
			if (unlinkat(dir_fd, files[i].name, 0) == 0) {
				log_info("Retention: deleted '%s'", files[i].name);
				ret->n_deleted++;
				continue;
			}
			log_warning_errno(negative_errno(), "Retention: cannot delete '%s': %m",
					  files[i].name);
		}
		ret->n_files++;
		ret->bytes += files[i].size;
	}
	if (ret->n_deleted > 0)
		fsync(dir_fd);
	free(files);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Retention of a continuous session's closed segments, in journald's
 * manner: after every close (and at start-up) delete the oldest closed
 * segments until every limit holds - total size, number of files, age and
 * the free space to keep, the strictest winning. Free space is what
 * unprivileged users can get (f_bavail), so a root daemon never eats the
 * file system's reserve. The open segment is a hidden temporary file and
 * is never deleted.
 *
 * Only the daemon's own files count, in the order it wrote them: each file
 * published into a directory is appended to its manifest (RETENTION_MANIFEST)
 * and retention walks the manifest, not the directory's names. A file
 * someone else put there (even one named like ours, "<session>-2099...")
 * is never deleted or counted, and a clock stepping backwards does not
 * reorder anything. A directory without a manifest has nothing of ours to
 * delete. The manifest must be the daemon's own file, no other name
 * linked to it; else it is neither read nor written.
 *
 * retention_plan() is pure; retention_apply() does the directory work.
 * Main thread only.
 */
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

#include "daemon/base/log.h"
#include "daemon/store/retention.h"
#include "ftraced/macro.h"
#include "lib/io-util.h"

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

/*
 * The manifest is the daemon's own file: a regular file no other name
 * links to. A hard link planted under its name would have the daemon
 * append to, or delete what another file lists.
 */
static int manifest_is_ours(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != geteuid()) {
		log_warning("Retention: %s is not the daemon's own file (a link, or another "
			    "owner's): it is left alone, and nothing it lists is deleted",
			    RETENTION_MANIFEST);
		return -EMLINK;
	}
	return 0;
}

/**
 * retention_record() - append a file the daemon just put in place to the manifest.
 * @dir_fd: the directory
 * @name: the file's name in it
 *
 * Return: 0 or -errno (the file is then left out of retention: never deleted).
 */
int retention_record(int dir_fd, const char *name)
{
	char line[NAME_MAX + 2];
	int fd, r;

	if (strlen(name) > NAME_MAX || strchr(name, '\n') || strchr(name, '/'))
		return -EINVAL;
	fd = openat(dir_fd, RETENTION_MANIFEST,
		    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0640);
	if (fd < 0)
		return negative_errno();
	r = manifest_is_ours(fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	snprintf(line, sizeof(line), "%s\n", name);
	r = loop_write(fd, line, strlen(line));
	if (r >= 0 && fdatasync(fd) < 0)
		r = negative_errno();
	close(fd);
	return r;
}

static bool is_segment(const char *name, const char *prefix)
{
	size_t n = strlen(name), p = strlen(prefix);

	return n > p + 4 && strncmp(name, prefix, p) == 0 && strcmp(name + n - 4, ".dat") == 0;
}

/* Grows @files by one; NULL when out of memory. */
static struct retention_file *add_file(struct retention_file **files, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct retention_file *f = realloc(*files, c * sizeof(*f));

		if (!f)
			return NULL;
		*files = f;
		*cap = c;
	}
	return &(*files)[(*n)++];
}

/* Fills in size and time of a regular file (not a link) named @name; false if it is not one. */
static bool stat_file(int dir_fd, const char *name, struct retention_file *f)
{
	struct stat st;

	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return false;
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->size = (uint64_t)st.st_blocks * 512;
	f->mtime_usec = (uint64_t)st.st_mtim.tv_sec * 1000000u + (uint64_t)st.st_mtim.tv_nsec / 1000u;
	return true;
}

/* The manifest's files that still exist, in the order they were written; -ENOENT: none. */
static int read_manifest(int dir_fd, const char *prefix, struct retention_file **files,
			 size_t *n, size_t *cap, bool *ret_stale)
{
	char line[NAME_MAX + 2];
	FILE *f;
	int fd, r;

	fd = openat(dir_fd, RETENTION_MANIFEST, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return negative_errno();
	r = manifest_is_ours(fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	f = fdopen(fd, "re");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while (*n < RETENTION_FILES_MAX && fgets(line, sizeof(line), f)) {
		struct retention_file *rf;
		bool dup = false;

		line[strcspn(line, "\n")] = '\0';
		for (size_t k = 0; k < *n && !dup; k++)
			dup = strcmp((*files)[k].name, line) == 0;
		if (dup || !is_segment(line, prefix)) {
			*ret_stale = true;
			continue;
		}
		rf = add_file(files, n, cap);
		if (!rf) {
			fclose(f);
			return -ENOMEM;
		}
		if (!stat_file(dir_fd, line, rf)) {
			(*n)--; /* gone (deleted by hand): the manifest forgets it */
			*ret_stale = true;
		}
	}
	fclose(f);
	return 0;
}

/* Replaces the manifest with @files (the ones kept), whole. */
static int write_manifest(int dir_fd, const struct retention_file *files, size_t n)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\n", files[i].name);
	if (fclose(f) != 0)
		return -ENOMEM;
	return replace_file_at(dir_fd, RETENTION_MANIFEST, text, len, 0640);
}

/**
 * retention_apply() - delete the oldest closed segments until the limits hold.
 * @dir_fd: the session's directory (or its snapshots')
 * @prefix: segment names start with it ("<session>-")
 * @l: the limits
 * @ret: what is left on disk, and how many files were deleted
 *
 * Return: 0 or -errno (reading the manifest failed; a file that cannot be
 * deleted is logged and kept).
 */
int retention_apply(int dir_fd, const char *prefix, const struct retention_limits *l,
		    struct retention_usage *ret)
{
	struct retention_file *files = NULL;
	size_t n = 0, cap = 0, drop, kept = 0;
	bool rewrite = false;
	struct timespec now;
	struct statvfs sv;
	int r;

	/* No manifest, no file of ours: nothing is deleted, whatever else is there. */
	r = read_manifest(dir_fd, prefix, &files, &n, &cap, &rewrite);
	if (r == -ENOENT) {
		*ret = (struct retention_usage){};
		return 0;
	}
	if (r < 0 || fstatvfs(dir_fd, &sv) < 0) {
		free(files);
		return r < 0 ? r : negative_errno();
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
				ret->bytes_deleted += files[i].size;
				continue;
			}
			log_warning_errno(negative_errno(), "Retention: cannot delete '%s': %m",
					  files[i].name);
		}
		ret->n_files++;
		ret->bytes += files[i].size;
		files[kept++] = files[i];
	}
	if (ret->n_deleted > 0 || rewrite) {
		r = write_manifest(dir_fd, files, kept);
		if (r < 0)
			log_warning_errno(r, "Retention: cannot rewrite the manifest, ignoring: %m");
	}
	if (ret->n_deleted > 0)
		fsync(dir_fd);
	free(files);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * retention_plan(): which of the oldest closed segments go, limit by limit;
 * retention_apply(): in a real directory, only the files the manifest
 * lists, in its order, whatever their names say.
 */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/store/retention.h"

#define MB (UINT64_C(1) << 20)
#define S (UINT64_C(1000000))

static void touch(int dir_fd, const char *name)
{
	int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);

	assert(fd >= 0 && write(fd, "x", 1) == 1);
	close(fd);
}

static bool exists(int dir_fd, const char *name)
{
	return faccessat(dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

static void test_manifest(void)
{
	char dir[] = "/tmp/test-retention-XXXXXX", manifest[256] = "";
	struct retention_limits l = { .max_files = 2 };
	struct retention_usage u;
	int dir_fd, fd;

	assert(mkdtemp(dir));
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert(dir_fd >= 0);
	/* Written in this order; the names sort the other way (a clock that stepped back). */
	touch(dir_fd, "bg-3.dat");
	assert(retention_record(dir_fd, "bg-3.dat") == 0);
	touch(dir_fd, "bg-2.dat");
	assert(retention_record(dir_fd, "bg-2.dat") == 0);
	touch(dir_fd, "bg-1-recovered.dat");
	assert(retention_record(dir_fd, "bg-1-recovered.dat") == 0);
	/* Not ours, though named like ours: never counted, never deleted. */
	touch(dir_fd, "bg-2099.dat");
	touch(dir_fd, "bg-0.dat");

	assert(retention_apply(dir_fd, "bg-", &l, &u) == 0);
	assert(u.n_deleted == 1 && u.n_files == 2);
	assert(!exists(dir_fd, "bg-3.dat")); /* the oldest written, not the first by name */
	assert(exists(dir_fd, "bg-2.dat") && exists(dir_fd, "bg-1-recovered.dat"));
	assert(exists(dir_fd, "bg-2099.dat") && exists(dir_fd, "bg-0.dat"));
	fd = openat(dir_fd, RETENTION_MANIFEST, O_RDONLY | O_CLOEXEC);
	assert(fd >= 0 && read(fd, manifest, sizeof(manifest) - 1) > 0);
	close(fd);
	assert(strcmp(manifest, "bg-2.dat\nbg-1-recovered.dat\n") == 0);

	/* A file deleted by hand leaves the manifest; garbage lines are ignored. */
	assert(unlinkat(dir_fd, "bg-2.dat", 0) == 0);
	assert(retention_record(dir_fd, "../etc/passwd") == -EINVAL);
	assert(retention_apply(dir_fd, "bg-", &l, &u) == 0);
	assert(u.n_files == 1 && u.n_deleted == 0);

	for (const char *const *n = (const char *const[]){ "bg-1-recovered.dat", "bg-2099.dat",
							   "bg-0.dat", RETENTION_MANIFEST, NULL };
	     *n; n++)
		unlinkat(dir_fd, *n, 0);
	close(dir_fd);
	assert(rmdir(dir) == 0);
}

/*
 * Without a manifest nothing is ours: a user's own "bg-mine.dat" in the
 * directory stays whatever the limits. A manifest another name links to
 * (planted to make the daemon write through it, or delete what it lists)
 * is neither written nor read.
 */
static void test_no_manifest_and_linked_manifest(void)
{
	char dir[] = "/tmp/test-retention-XXXXXX", path[PATH_MAX], other[PATH_MAX];
	struct retention_limits l = { .max_files = 1 };
	struct retention_usage u;
	struct stat st;
	int dir_fd, fd;

	assert(mkdtemp(dir));
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert(dir_fd >= 0);
	touch(dir_fd, "bg-mine.dat");
	touch(dir_fd, "bg-yours.dat");
	assert(retention_apply(dir_fd, "bg-", &l, &u) == 0);
	assert(u.n_deleted == 0 && exists(dir_fd, "bg-mine.dat") && exists(dir_fd, "bg-yours.dat"));
	assert(!exists(dir_fd, RETENTION_MANIFEST));

	/* A manifest hard-linked to a file outside: left alone, nothing it lists deleted. */
	snprintf(other, sizeof(other), "%s/elsewhere", dir);
	fd = openat(dir_fd, "elsewhere", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	assert(fd >= 0 && write(fd, "bg-mine.dat\nbg-yours.dat\n", 25) == 25);
	close(fd);
	snprintf(path, sizeof(path), "%s/%s", dir, RETENTION_MANIFEST);
	assert(link(other, path) == 0);
	assert(retention_record(dir_fd, "bg-new.dat") == -EMLINK);
	assert(retention_apply(dir_fd, "bg-", &l, &u) == -EMLINK);
	assert(exists(dir_fd, "bg-mine.dat") && exists(dir_fd, "bg-yours.dat"));
	assert(stat(other, &st) == 0 && st.st_size == 25);

	for (const char *const *n = (const char *const[]){ "bg-mine.dat", "bg-yours.dat",
							   "elsewhere", RETENTION_MANIFEST, NULL };
	     *n; n++)
		unlinkat(dir_fd, *n, 0);
	close(dir_fd);
	assert(rmdir(dir) == 0);
}

int main(void)
{
	/* 5 files of 10 MB, closed at t = 100..500 s. */
	struct retention_file f[5];
	struct retention_limits none = {}, l;

	for (int i = 0; i < 5; i++)
		f[i] = (struct retention_file){ .size = 10 * MB, .mtime_usec = (uint64_t)(i + 1) * 100 * S };

	assert(retention_plan(&none, f, 5, 0, 1000 * MB, 600 * S) == 0);
	assert(retention_plan(&none, f, 0, 0, 1000 * MB, 600 * S) == 0);

	l = (struct retention_limits){ .max_total = 30 * MB };
	assert(retention_plan(&l, f, 5, 500 * MB, 1000 * MB, 600 * S) == 2);
	l = (struct retention_limits){ .max_total = 50 * MB };
	assert(retention_plan(&l, f, 5, 500 * MB, 1000 * MB, 600 * S) == 0);

	l = (struct retention_limits){ .max_files = 1 };
	assert(retention_plan(&l, f, 5, 500 * MB, 1000 * MB, 600 * S) == 4);

	l = (struct retention_limits){ .max_age_usec = 250 * S };
	assert(retention_plan(&l, f, 5, 500 * MB, 1000 * MB, 600 * S) == 3); /* 100,200,300 s */

	/* 25 MB free, keep 40 MB free: two files must go. */
	l = (struct retention_limits){ .keep_free = 40 * MB };
	assert(retention_plan(&l, f, 5, 25 * MB, 1000 * MB, 600 * S) == 2);
	/* 5 % of 1000 MB = 50 MB, stricter than 40 MB: three go. */
	l = (struct retention_limits){ .keep_free = 40 * MB, .keep_free_percent = 5 };
	assert(retention_plan(&l, f, 5, 25 * MB, 1000 * MB, 600 * S) == 3);
	/* The strictest limit wins; files cannot free more than all of them. */
	l = (struct retention_limits){ .max_files = 4, .max_total = 15 * MB };
	assert(retention_plan(&l, f, 5, 500 * MB, 1000 * MB, 600 * S) == 4);
	l = (struct retention_limits){ .keep_free = 900 * MB };
	assert(retention_plan(&l, f, 5, 25 * MB, 1000 * MB, 600 * S) == 5);

	test_manifest();
	test_no_manifest_and_linked_manifest();
	printf("retention: all tests passed\n");
	return 0;
}

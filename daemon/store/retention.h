/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* A continuous session's disk budget; 0 means "no limit" for each. */
struct retention_limits {
	uint64_t max_total;      /* bytes of closed segments */
	uint32_t max_files;
	uint64_t max_age_usec;
	uint64_t keep_free;      /* bytes the file system must keep available */
	uint32_t keep_free_percent;
};

struct retention_file {
	char name[NAME_MAX + 1];
	uint64_t size;       /* allocated bytes: what deleting it frees */
	uint64_t mtime_usec; /* when it was closed */
};

struct retention_usage {
	unsigned n_files;
	uint64_t bytes;
	unsigned n_deleted;
	uint64_t bytes_deleted;
};

size_t retention_plan(const struct retention_limits *l, const struct retention_file *files,
		      size_t n, uint64_t fs_avail, uint64_t fs_size, uint64_t now_usec);
/* The files the daemon published into a directory, one name a line, oldest first. */
#define RETENTION_MANIFEST ".ftraced-files"

int retention_record(int dir_fd, const char *name);
int retention_apply(int dir_fd, const char *prefix, const struct retention_limits *l,
		    struct retention_usage *ret);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct ctl_request;

/* One *.conf of the sessions directory, read and parsed, or why it could not be. */
struct session_file {
	char name[NAME_MAX + 1];
	struct ctl_request *req; /* the CREATE request it stands for; NULL: see error */
	uint64_t hash;           /* tells one version of the file from another */
	char *error;             /* "NAME:LINE: what is wrong"; NULL when req is set */
};

/* The whole directory, in name order. */
struct session_files {
	size_t n;
	struct session_file *files;
	size_t n_bad;            /* files with an error */
	size_t n_ignored;        /* *.conf files beyond max_files, not read */
};

int sessions_dir_read(const char *dir, size_t max_files, struct session_files *ret);
void session_files_done(struct session_files *f);

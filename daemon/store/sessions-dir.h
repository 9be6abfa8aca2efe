/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

struct ctl_request;

#include <stdint.h>

/*
 * A session file, parsed into the CREATE request it stands for; @hash
 * tells one version of the file from another.
 */
typedef void (*session_file_fn)(const char *file, const struct ctl_request *req, uint64_t hash,
				void *userdata);

void sessions_dir_load(const char *dir, size_t max_files, session_file_fn create,
		       void *userdata);
void sessions_dir_load_one(const char *dir, const char *file, session_file_fn create,
			   void *userdata);

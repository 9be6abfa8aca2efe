/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

struct ctl_request;

/* A session file, parsed into the CREATE request it stands for. */
typedef void (*session_file_fn)(const char *file, const struct ctl_request *req,
				void *userdata);

void sessions_dir_load(const char *dir, size_t max_files, session_file_fn create,
		       void *userdata);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

struct ctl_builder;

#define SESSION_FILE_MAX (64u * 1024u)

struct ctl_request;

int session_file_format(const struct ctl_request *req, char *buf, size_t n);
int session_file_parse(const char *text, size_t n, const char *default_name,
		       struct ctl_builder *b, char *error, size_t n_error, unsigned *ret_line);

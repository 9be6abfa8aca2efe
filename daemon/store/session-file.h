/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

struct ctl_builder;

/*
 * A session file may list every event of a kernel, each on its line with
 * its filter: FTRACED_EVENTS_PER_REQUEST_MAX short lines fit many times.
 */
#define SESSION_FILE_MAX (32u * 1024u * 1024u)

struct ctl_request;

int session_file_format(const struct ctl_request *req, char *buf, size_t n);
int session_file_format_new(const struct ctl_request *req, char **ret);
int session_file_parse(const char *text, size_t n, const char *default_name,
		       struct ctl_builder *b, char *error, size_t n_error, unsigned *ret_line);

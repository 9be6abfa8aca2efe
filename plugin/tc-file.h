/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * A trace-cmd v7 file opened to read its events: the lib/ reader, the
 * metadata it carries, and a libtraceevent handle that knows the file's own
 * event formats, symbols, printk formats and comms. Knows nothing about
 * babeltrace2.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"
#include "lib/v7-meta.h"

struct tep_handle;
struct v7_reader;

/* The error texts the plugin hands to babeltrace2. */
#define TC_ERROR_MAX 512

struct tc_file {
	int fd;
	struct v7_reader *reader;
	struct v7_meta meta;
	struct tep_handle *tep;
	bool has_date;
	long long date_us;     /* DATE: µs from the trace clock to the wall clock */
};

int tc_file_open(const char *path, struct tc_file **ret, char *error, size_t n_error);
struct tc_file *tc_file_free(struct tc_file *f);
DEFINE_CLEANUP(struct tc_file *, tc_file_free)

int tc_probe(const char *path);

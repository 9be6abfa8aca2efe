/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/v7-format.h"
#include "lib/v7-writer.h"

struct v7_reader;

/*
 * A v7 file's metadata, read back to be written into another file: the
 * section bodies (decompressed) and the blobs and systems that point into
 * them. Owned by this struct; v7_meta_to_file() lends them to a v7_file.
 */
struct v7_meta {
	uint8_t *body[V7_SEC_LAST_META - V7_SEC_FIRST_META + 1];
	size_t n_body[V7_SEC_LAST_META - V7_SEC_FIRST_META + 1];
	struct v7_blob header_page, header_event, kallsyms, printk, cmdlines;
	struct v7_blob *ftrace_formats;
	size_t n_ftrace_formats;
	struct v7_blob *event_formats; /* every system's, in one array */
	size_t n_event_formats_total;
	struct v7_system *systems;
	size_t n_systems;
};

int v7_meta_read(struct v7_reader *r, struct v7_meta *m, char *error, size_t n_error);
int v7_meta_parse(struct v7_meta *m);
void v7_meta_to_file(const struct v7_meta *m, struct v7_file *f);
void v7_meta_done(struct v7_meta *m);

/* The events a FTRACE_EVENTS or EVENT_FORMATS body describes, by name and id. */
typedef int (*v7_format_fn)(const char *system, const char *name, int id, void *userdata);
int v7_formats_foreach(const uint8_t *formats, size_t n, bool per_system, v7_format_fn fn,
		       void *userdata);
int v7_find_event_id(const uint8_t *formats, size_t n, bool per_system, const char *name,
		     int *ret_id);

uint64_t v7_lost_events(const struct v7_reader *r, uint32_t cpu);

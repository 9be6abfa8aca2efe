/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"

struct v7_reader;
struct v7_cursor;

typedef int (*v7_page_fn)(const uint8_t *page, uint32_t page_size, void *userdata);
typedef int (*v7_chunk_fn)(const uint8_t *record, size_t n_record, const uint8_t *pages,
			   size_t n_pages, uint32_t page_size, void *userdata);
/* An uncompressed file's pages go to a v7_chunk_fn this many bytes at a time. */
#define V7_READER_RAW_RUN (512u * 1024u)

/* Every sub-buffer, or every chunk, of CPU region @i, in order: built on the cursor. */
int v7_reader_foreach_page(struct v7_reader *r, size_t i, v7_page_fn fn, void *userdata);
int v7_reader_foreach_chunk(struct v7_reader *r, size_t i, v7_chunk_fn fn, void *userdata);

int v7_cursor_new(struct v7_reader *r, size_t i, struct v7_cursor **ret);
struct v7_cursor *v7_cursor_free(struct v7_cursor *cur);
DEFINE_CLEANUP(struct v7_cursor *, v7_cursor_free)
int v7_cursor_next(struct v7_cursor *cur, const uint8_t **ret_record, size_t *ret_n_record,
		   const uint8_t **ret_pages, size_t *ret_n_pages);

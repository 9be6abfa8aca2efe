/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"
#include "lib/io-util.h"

struct compressor;

/* compressor_for_chunks(): the window covers chunks of up to 512 KiB (the capture's)... */
#define COMPRESS_CHUNK_WINDOW_LOG 19
/* ... and the tables are those zstd picks for inputs of this size. */
#define COMPRESS_CHUNK_TABLES_FOR (16u * 1024u)

int compressor_new(struct compressor **ret);
int compressor_for_chunks(struct compressor *c);
size_t compressor_memory(const struct compressor *c);
struct compressor *compressor_free(struct compressor *c);
DEFINE_CLEANUP(struct compressor *, compressor_free)

size_t compress_bound(size_t n);
int compress_frame(struct compressor *c, int level, const void *src, size_t n_src,
		   void *dst, size_t n_dst, size_t *ret_size);
int compress_frame2(struct compressor *c, int level, const void *head, size_t n_head,
		    const void *tail, size_t n_tail, void *dst, size_t n_dst, size_t *ret_size);
int decompress_frame(const void *src, size_t n_src, void *dst, size_t n_dst, size_t *ret_size);

int compress_fd(struct compressor *c, int level, unsigned window_log, int in_fd,
		line_drop_fn drop, size_t skip, size_t take, size_t max, int out_fd,
		uint64_t out_offset, size_t *ret_size, size_t *ret_raw);
int frames_equal_fd(int frames_fd, uint64_t offset, uint64_t size, size_t skip, int in_fd,
		    line_drop_fn drop);
const char *compress_version(void);

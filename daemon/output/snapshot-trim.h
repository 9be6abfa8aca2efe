/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct chunk_list;
struct compressor;

/* How a snapshot's chunks are made: as the capture made them. */
struct trim_format {
	uint32_t page_size; /* the capture's sub-buffer size */
	bool zstd;          /* chunk records; false: raw sub-buffers */
	int level;
	struct compressor *zc; /* for a rebuilt first chunk (zstd) */
};

uint64_t snapshot_complete_from(const struct chunk_list *l, bool older_lost);
int snapshot_trim(struct chunk_list *l, uint64_t start, const struct trim_format *fmt);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct compressor;

/*
 * A chunk record, in spools, flight rings and v7 files alike:
 * u32 csize, u32 usize (little-endian), then a zstd frame of csize bytes
 * that decompresses to usize bytes, a whole number of sub-buffers.
 */
#define CHUNK_HDR_SIZE 8u
/* The largest raw size a record may claim: bounds every reader's allocation. */
#define CHUNK_RAW_MAX (64u << 20)

size_t chunk_record_bound(size_t n_raw);
int chunk_record_encode(struct compressor *c, int level, const void *raw, size_t n_raw,
			uint8_t *dst, size_t n_dst, size_t *ret_size);
int chunk_record_check(const uint8_t *hdr, uint64_t n_after, uint32_t page_size,
		       uint32_t *ret_csize, uint32_t *ret_usize);
int chunk_record_decode(const uint8_t *rec, size_t n_rec, uint32_t page_size, void *raw,
			size_t n_raw);

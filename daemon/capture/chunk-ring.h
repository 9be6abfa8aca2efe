/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"

struct ring_keep;
struct ring_slab;

/*
 * One chunk of one CPU's trace data, immutable once made: with zstd a v7
 * chunk record (`u32 csize, u32 usize, frame`), without compression whole
 * raw sub-buffers. Reference-counted so a snapshot can hold chunks the
 * ring has already evicted.
 */
struct chunk {
	_Atomic unsigned refs;
	uint32_t size;     /* bytes at data */
	uint32_t raw_size; /* sub-buffer bytes it holds */
	uint64_t first_ts; /* header timestamp of its first sub-buffer */
	uint64_t last_ts;  /* and of its last one */
	uint8_t *data;     /* bytes[], or in a kept ring's slab */
	struct ring_slab *slab; /* a reference, or NULL */
	bool resumed;      /* kept by the daemon's run before: a gap follows it */
	uint8_t bytes[];
};

struct chunk *chunk_new(size_t size);
struct chunk *chunk_ref(struct chunk *c);
struct chunk *chunk_unref(struct chunk *c);

/* References to a ring's chunks at one moment, oldest first. */
struct chunk_list {
	struct chunk **chunks;
	size_t n;
	uint64_t bytes;     /* sum of sizes */
	uint64_t raw_bytes; /* sum of raw sizes */
	bool evicted;       /* older data of this CPU was dropped to stay in budget */
	uint64_t gap_from_ts; /* a restart's gap: after the last kept chunk (0: none) ... */
	uint64_t gap_to_ts;   /* ... to the first one after it (0: none yet) */
};

void chunk_list_done(struct chunk_list *l);

/* What a ring holds and has dropped; for status. */
struct chunk_ring_stats {
	uint64_t chunks;
	uint64_t bytes;     /* memory charged: chunk headers and data */
	uint64_t raw_bytes;
	uint64_t first_ts;  /* of the oldest chunk held (0: empty) */
	uint64_t last_ts;   /* of the newest chunk's last sub-buffer */
	uint64_t evicted_chunks;
	uint64_t evicted_raw_bytes;
};

struct chunk_ring;

int chunk_ring_new(uint64_t budget, struct chunk_ring **ret);
struct chunk_ring *chunk_ring_free(struct chunk_ring *r);
DEFINE_CLEANUP(struct chunk_ring *, chunk_ring_free)
uint64_t chunk_ring_budget(const struct chunk_ring *r);
int chunk_ring_push(struct chunk_ring *r, struct chunk *c);
int chunk_ring_keep(struct chunk_ring *r, struct ring_keep *k, bool resume);
int chunk_ring_append(struct chunk_ring *r, const void *data, size_t size, uint32_t raw_size,
		      uint64_t first_ts, uint64_t last_ts);
void chunk_ring_leave(struct chunk_ring *r);
int chunk_ring_collect(struct chunk_ring *r, struct chunk_list *ret);
void chunk_ring_stats(struct chunk_ring *r, struct chunk_ring_stats *ret);
void chunk_ring_clear(struct chunk_ring *r);

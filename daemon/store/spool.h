/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Every spool starts with a header: u32 magic "FTSP", u32 version 3, u64
 * the kernel's "read events" counter of that CPU when the spool began
 * receiving data, u64 its "overrun" and u64 its "dropped events" counters
 * then (UINT64_MAX: unknown), u32 the number of chunk records
 * (0 until the file is finished). Recovery uses the counters to count
 * what was lost in flight and in the ring. The records follow at
 * SPOOL_HDR_SIZE, so the last 4 bytes and the records are a v7 CPU data
 * stream where they lie (see spool_create_in_place()). Version 2 had no
 * lost counter (records at SPOOL_HDR_V2_SIZE), version 1 no count either
 * (records at SPOOL_HDR_V1_SIZE).
 */
#define SPOOL_HDR_SIZE 36u
#define SPOOL_HDR_V2_SIZE 20u
#define SPOOL_HDR_V1_SIZE 16u
#define SPOOL_COUNT_OFFSET 32u
#define SPOOL_MAGIC UINT32_C(0x50535446) /* "FTSP" in file order */
#define SPOOL_VERSION 3u

/*
 * An in-place spool is one sparse file, SPOOL_IN_PLACE_NAME, holding each
 * CPU's spool in a region of its own: CPU 0's at SPOOL_IN_PLACE_FIRST
 * (the v7 file header and the flyrecord section header go before it),
 * CPU k's at k * region bytes. A region is at least SPOOL_REGION_MIN,
 * which a segment (at most SEGMENT_SIZE_MAX) never fills, and the regions
 * of all CPUs fit in SPOOL_IN_PLACE_BYTES, well within what ext4 and xfs
 * allow for one file.
 */
#define SPOOL_IN_PLACE_NAME "data"
#define SPOOL_COPY_NAME "file" /* where the regions go where they cannot be collapsed */
#define SPOOL_IN_PLACE_FIRST 128u
#define SPOOL_IN_PLACE_BYTES (UINT64_C(8) << 40)
#define SPOOL_REGION_MIN (UINT64_C(4) << 30)
#define SPOOL_REGION_MAX (UINT64_C(16) << 30)

/* STATE_DIR/spool/<trace id, 16 hex digits>/cpuN */
#define SPOOL_DIR "spool"
#define SPOOL_NAME_SIZE 17u

/* The per-CPU spool files of one capture, in STATE_DIR/spool/<trace id>/. */
struct spool {
	int state_dir_fd; /* borrowed */
	uint64_t trace_id;
	int dir_fd;
	unsigned n_cpus;
	int *fds;
	uint64_t region_bytes; /* in place: each CPU's region; 0: a file per CPU */
};

uint64_t spool_new_id(void);
void spool_name(uint64_t trace_id, char *buf, size_t n);
bool spool_name_valid(const char *name);
int spool_create(struct spool *s, int state_dir_fd, uint64_t trace_id, unsigned n_cpus);
int spool_create_in_place(struct spool *s, int state_dir_fd, uint64_t trace_id, unsigned n_cpus);
uint64_t spool_in_place_region(unsigned n_cpus);
uint64_t spool_region_start(uint64_t region_bytes, unsigned cpu);
void spool_close(struct spool *s);
void spool_remove(struct spool *s);
void spool_remove_dir(int parent_fd, const char *name);
unsigned spool_report_stale(int state_dir_fd);
/* What the kernel had handed out and lost on a CPU when a spool began; UINT64_MAX: unknown. */
struct spool_start {
	uint64_t read;
	uint64_t overrun;
	uint64_t dropped;
};

#define SPOOL_START_UNKNOWN ((struct spool_start){ UINT64_MAX, UINT64_MAX, UINT64_MAX })

int spool_write_header(int fd, const struct spool_start *start, uint64_t *ret_data_pos);
uint64_t spool_region_end(uint64_t region_bytes, uint64_t pos);

/* What the intact part of a spool holds. */
struct spool_scan {
	struct spool_start start; /* the kernel's counters when it began */
	uint64_t data_offset; /* where its records start */
	uint64_t bytes;       /* intact records from there */
	uint64_t chunks;
	uint64_t events;
	uint64_t ignored;     /* bytes after the intact part: torn, damaged, or not records */
};

/* spool_scan()'s @header for a file of records alone, from offset 0 */
#define SPOOL_NO_HEADER UINT64_MAX

void spool_scan(int fd, uint64_t header, bool zstd, uint32_t page_size,
		struct spool_scan *ret);
int spool_collapse_regions(int fd, uint64_t region_bytes, unsigned n, const uint64_t *bytes,
			   uint64_t *ret_data_offsets, uint64_t *ret_end);
int spool_mirror_prepare(int fd, unsigned n_cpus, uint64_t *ret_region);
int spool_split_in_place(int dir_fd, unsigned n_cpus, bool zstd, uint32_t page_size, int *fds);

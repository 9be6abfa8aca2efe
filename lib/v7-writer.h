/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "lib/io-util.h"

#include <stddef.h>
#include <stdint.h>

#include "lib/v7-out.h"

enum v7_compression {
	V7_COMPRESSION_ZSTD,
	V7_COMPRESSION_NONE,
};

struct compressor;

struct v7_system {
	const char *name;
	size_t n_formats;
	const struct v7_blob *formats;
};

/*
 * One CPU's ring-buffer data, held in a file (fd, offset) or in memory
 * (blobs, in order, when n_blobs > 0): with zstd, a chunk stream without
 * its leading count, i.e. n_chunks records `u32 csize, u32 usize, zstd
 * frame` whose usize is a whole number of sub-buffers; with none, whole
 * raw sub-buffers. size is the total either way.
 */
struct v7_cpu_data {
	uint32_t cpu;
	int fd;
	uint64_t offset;
	uint64_t size;
	uint32_t n_chunks;
	const struct v7_blob *blobs;
	size_t n_blobs;
};

struct v7_file {
	uint32_t page_size; /* the captured instance's sub-buffer size */
	enum v7_compression compression;
	/*
	 * With V7_COMPRESSION_NONE: the file still says zstd and its metadata
	 * (symbols above all) is compressed; only the flyrecord section is raw,
	 * as its own flag says, which is how trace-cmd 3.1.6 reads it.
	 */
	bool metadata_zstd;
	int level;

	struct v7_blob header_page;  /* the captured instance's events/header_page */
	struct v7_blob header_event;
	size_t n_ftrace_formats;
	const struct v7_blob *ftrace_formats;
	size_t n_systems;
	const struct v7_system *systems;
	struct v7_blob kallsyms;
	/* With zstd: the KALLSYMS section body made by v7_seal_kallsyms() (then .kallsyms is
	 * not used), so megabytes of symbols are compressed once, not for every file, and
	 * copied into each from a file rather than held in memory. */
	struct v7_region kallsyms_sealed;
	struct v7_blob printk;
	struct v7_blob cmdlines;

	const char *trace_clock; /* the whole trace_clock file, "[local] global ..." */
	const char *clock;       /* the selected clock's name */
	const char *uname;
	const char *date;        /* DATE: "0x..." µs from trace clock to wall clock; NULL: none */
	const char *version;
	uint64_t trace_id;
	uint32_t n_cpus;
	size_t n_cpustat;
	const char *const *cpustat; /* CPUSTAT option texts ("CPU: N\n" + stats); NULLs skipped */
	size_t n_procmaps;
	const char *const *procmaps; /* PROCMAPS option texts, one per process (--proc-map) */

	size_t n_data;
	const struct v7_cpu_data *data;

	_Atomic uint64_t *progress; /* bytes written are added here as they go; may be NULL */

	/*
	 * Non-zero: the data is already in the output, which must be a
	 * regular file (zstd only). Each CPU's records are at data[i].offset
	 * of the output itself, with 4 bytes free before them for the chunk
	 * count, all between V7_IN_PLACE_DATA_MIN and this offset, where the
	 * metadata is appended; the file header and the counts are written
	 * where they belong. The flyrecord section spans everything between.
	 */
	uint64_t in_place_end;
};

/* In place, the file header and the flyrecord section's header come before any data. */
#define V7_IN_PLACE_DATA_MIN 128u

int v7_write(int fd, const struct v7_file *f, uint64_t *ret_size);
int v7_size(const struct v7_file *f, uint64_t *ret_size);
/* v7_seal_kallsyms()'s unchanging first part of the text, in a frame of its own. */
struct v7_seal_head {
	size_t n_text;           /* its bytes (of those kept) */
	int level;               /* its zstd level, when it is compressed */
	struct v7_region reuse;  /* its frame made before (size 0: none); then the new one */
};

int v7_seal_kallsyms(struct compressor *c, int level, unsigned window_log, int text_fd,
		     line_drop_fn drop, size_t max, struct v7_seal_head *head, int out_fd,
		     struct v7_region *ret, size_t *ret_n_text);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/compress.h"
#include "lib/v7-meta.h"

/* Raw bytes per compressed chunk: the daemon's chunk size. */
#define EXTRACT_CHUNK_RAW (512u * 1024u)
#define EXTRACT_ZSTD_LEVEL 3
/* Gap notes kept for the report: more are counted, not listed. */
#define EXTRACT_GAPS_MAX 64u

/* One CPU of the output: its chunks so far, and what it holds. */
struct cpu_out {
	uint32_t cpu;
	uint8_t *raw;             /* pages waiting to be compressed */
	size_t n_raw;
	struct v7_blob *chunks;   /* compressed records, in order */
	size_t n_chunks;
	uint64_t bytes;
	uint64_t events;
	uint64_t missed_pages;    /* pages the kernel flagged: events lost before them */
	uint64_t last_ts;         /* the newest event taken: older ones are duplicates */
	uint64_t copied;          /* chunks copied as they were, not compressed again */
	bool any;
};

/* One extract: the window, and the output being built from the files in turn. */
struct extract {
	bool wall;                /* the window is UTC (else trace-clock ns) */
	long long since_us, until_us;
	uint64_t since_ns, until_ns;
	/* From the first file that contributes: the output's metadata and anchor. */
	struct v7_meta meta;
	bool have_meta;
	char *trace_clock, *clock, *uname_text, *date_text;
	bool has_date;
	long long date_us;
	uint32_t page_size;
	struct cpu_out *cpus;     /* by CPU number */
	size_t n_cpus;
	struct compressor *zstd;
	uint8_t *page;            /* the page being cut */
	char **used;              /* the files that gave events */
	size_t n_used;
	char *gaps[EXTRACT_GAPS_MAX];
	size_t n_gaps, n_gaps_total;
	const char *error_file;
	char error[512];
};

/* The window of one file, on its own trace clock, and how its times move onto the output's. */
struct file_window {
	uint64_t since_ts, until_ts;
	int64_t shift_ns;
	struct extract *x;
	struct cpu_out *cpu;
	bool used;
};

int extract_compress_pending(struct extract *x, struct cpu_out *c);
int extract_on_chunk(const uint8_t *record, size_t n_record, const uint8_t *pages,
		     size_t n_pages, uint32_t page_size, void *userdata);

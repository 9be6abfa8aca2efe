/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"

struct v7_reader;

/* One CPU's data region of one buffer, as its BUFFER option describes it. */
struct v7_reader_cpu {
	char buffer[64]; /* instance name, "" for the top buffer */
	uint32_t cpu;
	uint32_t page_size;
	uint64_t offset;
	uint64_t size;
	bool compressed; /* its flyrecord section's flag: a zstd file may hold raw data */
};


enum v7_reader_option {
	V7_READER_TRACE_CLOCK,
	V7_READER_UNAME,
	V7_READER_VERSION,
	V7_READER_DATE,        /* "0x...": µs from the trace clock to the wall clock (--date) */
};

int v7_reader_open(int fd, struct v7_reader **ret, char *error, size_t n_error);
struct v7_reader *v7_reader_free(struct v7_reader *r);
DEFINE_CLEANUP(struct v7_reader *, v7_reader_free)

int v7_reader_fd(const struct v7_reader *r);
bool v7_reader_in_file(const struct v7_reader *r, uint64_t off, uint64_t n);
int v7_reader_fail(struct v7_reader *r, const char *fmt, ...) _printf_(2, 3);
uint32_t v7_reader_page_size(const struct v7_reader *r);
bool v7_reader_compressed(const struct v7_reader *r);
bool v7_reader_metadata_compressed(const struct v7_reader *r);
const char *v7_reader_clock(const struct v7_reader *r);
size_t v7_reader_n_cpus(const struct v7_reader *r);
const struct v7_reader_cpu *v7_reader_cpu(const struct v7_reader *r, size_t i);
int v7_reader_section(struct v7_reader *r, uint16_t id, uint8_t **ret, size_t *ret_size);
const char *v7_reader_error(const struct v7_reader *r);
bool v7_reader_has_strings(const struct v7_reader *r);
const char *v7_reader_option(const struct v7_reader *r, enum v7_reader_option which);
uint64_t v7_reader_trace_id(const struct v7_reader *r);
uint32_t v7_reader_cpu_count(const struct v7_reader *r);
size_t v7_reader_n_cpustat(const struct v7_reader *r);
const char *v7_reader_cpustat(const struct v7_reader *r, size_t i);

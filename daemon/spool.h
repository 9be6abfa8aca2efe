/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Every spool file starts with a header: u32 magic "FTSP", u32 version 1,
 * u64 the kernel's "read events" counter of that CPU when the spool began
 * receiving data (UINT64_MAX: unknown). Recovery uses it to tell whether
 * anything was lost in flight. The data follows at SPOOL_HDR_SIZE.
 */
#define SPOOL_HDR_SIZE 16u
#define SPOOL_MAGIC UINT32_C(0x50535446) /* "FTSP" in file order */
#define SPOOL_VERSION 1u

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
};

uint64_t spool_new_id(void);
void spool_name(uint64_t trace_id, char *buf, size_t n);
bool spool_name_valid(const char *name);
int spool_create(struct spool *s, int state_dir_fd, uint64_t trace_id, unsigned n_cpus);
void spool_close(struct spool *s);
void spool_remove(struct spool *s);
unsigned spool_report_stale(int state_dir_fd);
int spool_write_header(int fd, uint64_t start_read);

/* What the intact part of a spool holds. */
struct spool_scan {
	uint64_t start_read; /* the kernel's read counter when it began, UINT64_MAX: unknown */
	uint64_t bytes;      /* intact data after the header */
	uint64_t chunks;
	uint64_t events;
};

void spool_scan(int fd, uint64_t data_offset, bool zstd, uint32_t page_size,
		struct spool_scan *ret);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/v7-writer.h"

/* Synthetic ring-buffer pages of our own test event, as the kernel lays them out. */
#define EVENT_ID 1000
#define PAYLOAD_SIZE 24 /* common fields (8) + cpu (4) + seq (4) + value (8) */
#define EVENT_SIZE (4 + PAYLOAD_SIZE)
#define PAGE_HDR_SIZE 16
#define N_CPUS 3
#define DELTA_NS 100

extern const char header_event[];
extern const char event_format[];

struct cpu_pages {
	uint8_t *pages;
	size_t n_pages;
	unsigned n_events;
	uint64_t first_ts;
};

void make_payload(uint8_t *p, unsigned cpu, unsigned seq);
uint64_t event_ts(const struct cpu_pages *c, unsigned seq);
void make_pages(struct cpu_pages *c, unsigned cpu, unsigned n_events, uint32_t page_size);
char *header_page_text(uint32_t page_size);
int make_spool(const struct cpu_pages *c, uint32_t page_size, bool zstd, unsigned pages_per_chunk,
	       uint64_t *ret_size, uint32_t *ret_chunks);

/* A whole test file: pages of N_CPUS CPUs (CPU 1 empty) in spools, and its description. */
struct fixture {
	struct cpu_pages cpus[N_CPUS];
	struct v7_cpu_data data[N_CPUS];
	struct v7_blob formats[1];
	struct v7_system systems[1];
	char *header_page;
	struct v7_file file;
};

void fixture_init(struct fixture *f, uint32_t page_size, bool zstd, unsigned pages_per_chunk);
void fixture_done(struct fixture *f);

/* A snapshot's segment without tracefs: 2 CPUs, zstd, 4 KiB sub-buffers, local clock. */
struct event_list;
struct instance_meta;
struct segment_env;
struct segment_env snapshot_segment_env(int state_dir_fd, struct instance_meta *imeta,
					const struct event_list *events);
void snapshot_meta_done(struct instance_meta *imeta);

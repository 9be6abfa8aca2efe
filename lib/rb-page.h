/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One event of a kernel ring-buffer sub-buffer. */
struct rb_event {
	uint64_t ts;
	const uint8_t *data; /* payload: starts with the u16 event id */
	uint32_t size;
};

/* What a sub-buffer's header says. */
struct rb_page_info {
	uint64_t ts;
	uint32_t data_size;
	bool missed_events;  /* events were lost before this page */
	uint64_t n_missed;   /* how many, when the kernel could store it (else 0) */
};

typedef int (*rb_event_fn)(const struct rb_event *e, void *userdata);

int rb_page_parse(const uint8_t *page, uint32_t page_size, struct rb_page_info *ret);
int rb_page_foreach_event(const uint8_t *page, uint32_t page_size, rb_event_fn fn,
			  void *userdata);
int rb_page_trim(uint8_t *page, uint32_t page_size, uint64_t start);
int rb_page_cut_after(uint8_t *page, uint32_t page_size, uint64_t until, uint64_t *ret_last_ts);
int64_t rb_pages_count_events(const uint8_t *pages, size_t n, uint32_t page_size);

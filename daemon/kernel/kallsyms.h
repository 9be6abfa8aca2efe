/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"
#include "lib/v7-writer.h"

struct kallsyms;

/*
 * The symbols as a zstd file's KALLSYMS section body, immutable and shared
 * by every file being written (and the cache) until the last reference goes.
 * It is in a file of its own (body.fd, closed with the last reference), an
 * unlinked one in the state directory, so its pages are the page cache's
 * to evict, not the daemon's resident memory.
 */
struct kallsyms_section {
	_Atomic unsigned refs;
	struct v7_region body;
};

struct kallsyms_section *kallsyms_section_unref(struct kallsyms_section *sec);

int kallsyms_open(struct kallsyms **ret);
int kallsyms_store_in(struct kallsyms *k, int dir_fd);
struct kallsyms *kallsyms_free(struct kallsyms *k);
DEFINE_CLEANUP(struct kallsyms *, kallsyms_free)
bool kallsyms_has_addresses(const struct kallsyms *k);
bool kallsyms_shown_to_users(void);
int kallsyms_read(struct kallsyms *k, bool any_age, char **ret, size_t *ret_size);
int kallsyms_read_sealed(struct kallsyms *k, bool any_age, struct kallsyms_section **ret);

/* How old a copy is that kallsyms_prefetch() refreshes. */
enum kallsyms_age {
	KALLSYMS_EXPIRED,  /* past its lifetime: a file would read the symbols itself */
	KALLSYMS_EXPIRING, /* within KALLSYMS_REFRESH_LEAD_USEC of that */
};

uint64_t kallsyms_prefetch(struct kallsyms *k, enum kallsyms_age age);
uint64_t kallsyms_stale_at(struct kallsyms *k, enum kallsyms_age age);
void kallsyms_set_lifetime(struct kallsyms *k, uint64_t usec, unsigned growth_max);

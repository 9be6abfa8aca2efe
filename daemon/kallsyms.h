/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"

struct kallsyms;

/*
 * The symbols as a zstd file's KALLSYMS section body, immutable and shared
 * by every file being written (and the cache) until the last reference goes.
 */
struct kallsyms_section {
	_Atomic unsigned refs;
	size_t size;
	uint8_t *data;
};

struct kallsyms_section *kallsyms_section_unref(struct kallsyms_section *sec);

int kallsyms_open(struct kallsyms **ret);
struct kallsyms *kallsyms_free(struct kallsyms *k);
DEFINE_CLEANUP(struct kallsyms *, kallsyms_free)
bool kallsyms_has_addresses(const struct kallsyms *k);
bool kallsyms_shown_to_users(void);
int kallsyms_read(struct kallsyms *k, char **ret, size_t *ret_size);
int kallsyms_read_sealed(struct kallsyms *k, struct kallsyms_section **ret);
void kallsyms_prefetch(struct kallsyms *k, uint64_t max_age_usec);

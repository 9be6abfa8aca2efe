/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"

struct kallsyms;

int kallsyms_open(struct kallsyms **ret);
struct kallsyms *kallsyms_free(struct kallsyms *k);
DEFINE_CLEANUP(struct kallsyms *, kallsyms_free)
bool kallsyms_has_addresses(const struct kallsyms *k);
bool kallsyms_shown_to_users(void);
int kallsyms_read(struct kallsyms *k, char **ret, size_t *ret_size);
int kallsyms_read_sealed(struct kallsyms *k, uint8_t **ret, size_t *ret_size);
void kallsyms_prefetch(struct kallsyms *k);
void kallsyms_keep_fresh(struct kallsyms *k);

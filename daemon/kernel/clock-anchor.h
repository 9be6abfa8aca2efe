/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"

struct clock_anchor;

int clock_anchor_check_tag(uint32_t tag, char *holder, size_t n);
int clock_anchor_new(uint32_t tag, struct clock_anchor **ret);
struct clock_anchor *clock_anchor_free(struct clock_anchor *a);
DEFINE_CLEANUP(struct clock_anchor *, clock_anchor_free)
int clock_anchor_offset_us(struct clock_anchor *a, const char *clock, int64_t *ret);
/* Room for a DATE text: sign, "0x", 16 hex digits, NUL. */
#define CLOCK_ANCHOR_DATE_MAX 20u
int clock_anchor_date(struct clock_anchor *a, const char *clock,
		      char buf[static CLOCK_ANCHOR_DATE_MAX]);
bool clock_anchor_date_valid(const char *text);
int boot_id(char buf[static 40]);

/* Exposed for unit tests: the timestamp of the line holding @stamp in a `trace` text. */
int clock_anchor_parse_trace(const char *text, const char *stamp, uint64_t *ret_us);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

/* The longest duration a user may type: 30 days (the daemon's DURATION_MS_MAX). */
#define DURATION_TEXT_MS_MAX (UINT64_C(30) * 24 * 3600 * 1000)

int parse_size(const char *s, uint64_t *ret);
int parse_duration_ms(const char *s, uint64_t *ret);

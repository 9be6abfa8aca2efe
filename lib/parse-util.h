/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

int parse_size(const char *s, uint64_t *ret);
int parse_duration_ms(const char *s, uint64_t *ret);

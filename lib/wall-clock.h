/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Trace times as people read them: the DATE option (a file's wall-clock
 * anchor, trace-cmd's format) and UTC times of events.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "2026-11-25T13:02:00.123456789Z" and its NUL. */
#define WALL_TEXT_MAX 40

bool wall_date_parse(const char *text, long long *ret_us);
void wall_format(long long date_us, uint64_t ts, char *buf, size_t n);
int wall_time_parse(const char *text, long long now_us, long long *ret_us);

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Trace times on the wall clock. A file's DATE option is the offset, in
 * microseconds, to add to its trace-clock times ("0x..." or "-0x...", as
 * trace-cmd reads it with strtoll(..., 0)); ftracectl info and the
 * daemon's trigger log both say event times in UTC with it. Pure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lib/wall-clock.h"

/**
 * wall_date_parse() - a DATE option's offset.
 * @text: the option's text, or NULL
 * @ret_us: receives the offset in microseconds
 *
 * Return: false if there is none (no option, empty or not a number).
 */
bool wall_date_parse(const char *text, long long *ret_us)
{
	char *end;

	if (!text)
		return false;
	errno = 0;
	*ret_us = strtoll(text, &end, 0);
	return !errno && end != text && (*end == '\0' || *end == '\n');
}

/**
 * wall_format() - trace time @ts (ns) in UTC, "2026-11-25T13:02:00.123456789Z".
 * @date_us: the file's anchor (wall_date_parse())
 * @ts: a trace-clock time in ns
 * @buf: receives the text (WALL_TEXT_MAX is enough)
 * @n: its size
 */
void wall_format(long long date_us, uint64_t ts, char *buf, size_t n)
{
	long long ns = date_us % 1000000 * 1000 + (long long)(ts % 1000000000);
	time_t sec = (time_t)(date_us / 1000000 + (long long)(ts / 1000000000) + ns / 1000000000);
	struct tm tm;
	size_t k = 0;

	if (gmtime_r(&sec, &tm))
		k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + k, n - k, ".%09lldZ", ns % 1000000000);
}

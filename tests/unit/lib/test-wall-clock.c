// SPDX-License-Identifier: GPL-2.0-or-later
/* Times on the wall clock (lib/wall-clock.c): a file's DATE, UTC text, and the times people type. */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "lib/wall-clock.h"

#define S 1000000LL
/* 2026-11-25T13:05:00Z */
#define NOW (1795611900LL * S)

static void test_date_and_format(void)
{
	char text[WALL_TEXT_MAX];
	long long date;

	assert(wall_date_parse("0x6a2d8a3c00000", &date) && date == 0x6a2d8a3c00000LL);
	assert(wall_date_parse("-0x10\n", &date) && date == -16);
	assert(!wall_date_parse("", &date) && !wall_date_parse("x", &date) &&
	       !wall_date_parse(NULL, &date));
	wall_format(NOW, 1500000001, text, sizeof(text));
	assert(strcmp(text, "2026-11-25T13:05:01.500000001Z") == 0);
}

static void test_parse(void)
{
	long long t;

	assert(wall_time_parse("-30s", NOW, &t) == 0 && t == NOW - 30 * S);
	assert(wall_time_parse("-10m", NOW, &t) == 0 && t == NOW - 600 * S);
	assert(wall_time_parse("2026-11-25T13:02:00Z", NOW, &t) == 0 && t == NOW - 180 * S);
	assert(wall_time_parse("2026-11-25 13:02", NOW, &t) == 0 && t == NOW - 180 * S);
	assert(wall_time_parse("2026-11-25T13:02:00.25Z", NOW, &t) == 0 &&
	       t == NOW - 180 * S + S / 4);
	/* A time of day is the last one not after now: today's, or yesterday's. */
	assert(wall_time_parse("13:02", NOW, &t) == 0 && t == NOW - 180 * S);
	assert(wall_time_parse("13:04:59.5", NOW, &t) == 0 && t == NOW - S / 2);
	assert(wall_time_parse("13:06", NOW, &t) == 0 && t == NOW + 60 * S - 86400 * S);
	assert(wall_time_parse("00:00Z", NOW, &t) == 0 && t == NOW - (13 * 3600 + 300) * S);
	/* Not times. */
	assert(wall_time_parse("", NOW, &t) == -EINVAL);
	assert(wall_time_parse("-", NOW, &t) == -EINVAL);
	assert(wall_time_parse("-30x", NOW, &t) == -EINVAL);
	assert(wall_time_parse("25:00", NOW, &t) == -EINVAL);
	assert(wall_time_parse("13:60", NOW, &t) == -EINVAL);
	assert(wall_time_parse("1:02", NOW, &t) == -EINVAL);
	assert(wall_time_parse("13:02:7", NOW, &t) == -EINVAL);
	assert(wall_time_parse("13:02 tomorrow", NOW, &t) == -EINVAL);
	assert(wall_time_parse("2026-11-25", NOW, &t) == -EINVAL);
	assert(wall_time_parse("1969-12-31T23:00Z", NOW, &t) == -EINVAL);
}

int main(void)
{
	test_date_and_format();
	test_parse();
	return 0;
}

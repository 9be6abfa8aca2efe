// SPDX-License-Identifier: GPL-2.0-or-later
/* The wall-clock anchor's pure parts: a marker's time in `trace` text, DATE texts, clocks. */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/kernel/clock-anchor.h"

int main(void)
{
	struct clock_anchor *a;
	char date[CLOCK_ANCHOR_DATE_MAX], boot[40];
	uint64_t us;
	int64_t off;

	assert(clock_anchor_parse_trace(
		"# tracer: nop\n#\n"
		"  memfd:x-1 [000] .....  99.000001: tracing_mark_write: other\n"
		"   ftraced-42 [001] ..... 12345.678901: tracing_mark_write: STAMP\n",
		"STAMP", &us) == 0);
	assert(us == UINT64_C(12345678901));
	assert(clock_anchor_parse_trace("  x-1 [000] 12.5: tracing_mark_write: STAMP\n", "STAMP",
					&us) == -ENOENT);
	assert(clock_anchor_parse_trace("  x-1 [000] 12345: tracing_mark_write: STAMP\n", "STAMP",
					&us) == -ENOENT); /* a counter clock's raw number */
	assert(clock_anchor_parse_trace("", "STAMP", &us) == -ENOENT);
	/* The whole marker only: stamps are numbered and never cleared away. */
	assert(clock_anchor_parse_trace("  x-1 [000] ..... 7.000010: tracing_mark_write: S 10\n"
					"  x-1 [000] ..... 8.000001: tracing_mark_write: S 1\n",
					"S 1", &us) == 0);
	assert(us == UINT64_C(8000001));
	assert(clock_anchor_parse_trace("  x-1 [000] ..... 7.000010: tracing_mark_write: S 10",
					"S 1", &us) == -ENOENT);

	assert(clock_anchor_date_valid("0x66a1b2c3d4e5f") && clock_anchor_date_valid("-0x10"));
	assert(!clock_anchor_date_valid("0x") && !clock_anchor_date_valid("12"));
	assert(!clock_anchor_date_valid("0x12\nx=1") && !clock_anchor_date_valid("0x12345678901234567"));

	/* Clocks user space shares need no instance; a counter has no time. */
	assert(clock_anchor_new(0, &a) == 0);
	assert(clock_anchor_offset_us(a, "mono", &off) == 0 && off > 0);
	assert(clock_anchor_date(a, "boot", date) == 0 && clock_anchor_date_valid(date));
	assert(clock_anchor_date(a, "counter", date) == -EOPNOTSUPP && date[0] == '\0');
	assert(clock_anchor_date(a, "x86-tsc", date) == -EOPNOTSUPP);
	clock_anchor_free(a);
	assert(boot_id(boot) == 0 && strlen(boot) == 36);
	printf("clock-anchor: all tests passed\n");
	return 0;
}

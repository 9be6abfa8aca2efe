// SPDX-License-Identifier: GPL-2.0-or-later
/* retention_plan(): which of the oldest closed segments go, limit by limit. */
#undef NDEBUG
#include <assert.h>
#include <stdio.h>

#include "daemon/retention.h"

#define MB (UINT64_C(1) << 20)
#define S (UINT64_C(1000000))

int main(void)
{
	/* 5 files of 10 MB, closed at t = 100..500 s. */
	struct retention_file f[5];
	struct retention_limits none = {}, l;

	for (int i = 0; i < 5; i++)
		f[i] = (struct retention_file){ .size = 10 * MB, .mtime_usec = (uint64_t)(i + 1) * 100 * S };

	assert(retention_plan(&none, f, 5, 0, 1000 * MB, 600 * S) == 0);
	assert(retention_plan(&none, f, 0, 0, 1000 * MB, 600 * S) == 0);

	l = (struct retention_limits){ .max_total = 30 * MB };
	assert(retention_plan(&l, f, 5, 500 * MB, 1000 * MB, 600 * S) == 2);
	l = (struct retention_limits){ .max_total = 50 * MB };
	assert(retention_plan(&l, f, 5, 500 * MB, 1000 * MB, 600 * S) == 0);

	l = (struct retention_limits){ .max_files = 1 };
	assert(retention_plan(&l, f, 5, 500 * MB, 1000 * MB, 600 * S) == 4);

	l = (struct retention_limits){ .max_age_usec = 250 * S };
	assert(retention_plan(&l, f, 5, 500 * MB, 1000 * MB, 600 * S) == 3); /* 100,200,300 s */

	/* 25 MB free, keep 40 MB free: two files must go. */
	l = (struct retention_limits){ .keep_free = 40 * MB };
	assert(retention_plan(&l, f, 5, 25 * MB, 1000 * MB, 600 * S) == 2);
	/* 5 % of 1000 MB = 50 MB, stricter than 40 MB: three go. */
	l = (struct retention_limits){ .keep_free = 40 * MB, .keep_free_percent = 5 };
	assert(retention_plan(&l, f, 5, 25 * MB, 1000 * MB, 600 * S) == 3);
	/* The strictest limit wins; files cannot free more than all of them. */
	l = (struct retention_limits){ .max_files = 4, .max_total = 15 * MB };
	assert(retention_plan(&l, f, 5, 500 * MB, 1000 * MB, 600 * S) == 4);
	l = (struct retention_limits){ .keep_free = 900 * MB };
	assert(retention_plan(&l, f, 5, 25 * MB, 1000 * MB, 600 * S) == 5);

	printf("retention: all tests passed\n");
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Sizes and durations as people write them ("64M", "10m", "1.5s"), for
 * ftracectl's options and the daemon's session files alike. Pure.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ftraced/macro.h"
#include "lib/parse-util.h"

/**
 * parse_duration_ms() - "10s", "500ms", "2m", "1h", "7d", "1.5s" or a bare number of seconds.
 * @s: text
 * @ret: milliseconds, > 0
 *
 * Return: 0, -EINVAL, or -ERANGE below 1 ms or above DURATION_TEXT_MS_MAX.
 */
int parse_duration_ms(const char *s, uint64_t *ret)
{
	static const struct {
		const char *suffix;
		double ms;
	} units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
		      { "d", 86400000 }, { "", 1000 } };
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || !(v > 0))
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(units); i++) {
		if (strcmp(end, units[i].suffix) == 0) {
			double ms = v * units[i].ms;

			if (ms < 1 || ms > (double)DURATION_TEXT_MS_MAX)
				return -ERANGE;
			*ret = (uint64_t)ms;
			return 0;
		}
	}
	return -EINVAL;
}

/**
 * parse_size() - "4096", "64K", "128M", "2G", "1T" (powers of 1024; "KiB", "MB" also read).
 * @s: text
 * @ret: bytes
 *
 * Return: 0 or -EINVAL (also on overflow).
 */
int parse_size(const char *s, uint64_t *ret)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	uint64_t mult = 1;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end) {
		const char *u = strchr(units, *end == 'k' ? 'K' : *end);

		if (!u || !*u)
			return -EINVAL;
		mult = UINT64_C(1) << (10 * (u - units + 1));
		end++;
		if (strcmp(end, "") != 0 && strcmp(end, "B") != 0 && strcmp(end, "iB") != 0)
			return -EINVAL;
	}
	if (v > UINT64_MAX / mult)
		return -EINVAL;
	*ret = v * mult;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/* /proc/meminfo: what memory checks measure against. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/base/meminfo.h"
#include "ftraced/macro.h"

/**
 * meminfo_kb() - one field of /proc/meminfo.
 * @field: its name, such as "MemTotal" or "MemAvailable"
 *
 * Return: its value in KiB; 0 if unknown.
 */
uint64_t meminfo_kb(const char *field)
{
	_cleanup_free_ char *line = NULL;
	size_t n = 0, len = strlen(field);
	uint64_t kb = 0;
	FILE *f;

	f = fopen("/proc/meminfo", "re");
	if (!f)
		return 0;
	while (getline(&line, &n, f) > 0)
		if (strncmp(line, field, len) == 0 && line[len] == ':' &&
		    sscanf(line + len + 1, "%" SCNu64, &kb) == 1)
			break;
	fclose(f);
	return kb;
}

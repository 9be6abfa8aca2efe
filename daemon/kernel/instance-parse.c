// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The pure parsers behind the instance module: a CPU's stats file and
 * header_page, saved_cmdlines. No I/O; unit-tested (test-instance-parse.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/kernel/instance.h"

static uint64_t field(const char *text, const char *key)
{
	const char *p = text;
	size_t n = strlen(key);

	while (p && *p) {
		if (strncmp(p, key, n) == 0 && p[n] == ':')
			return strtoull(p + n + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

/**
 * instance_parse_cpu_counters() - the counters of a per_cpu/cpuN/stats text.
 * @text: the file's contents
 * @ret: counters; missing fields read as 0
 *
 * Return: 0, or -EINVAL if it does not look like a stats file.
 */
int instance_parse_cpu_counters(const char *text, struct cpu_counters *ret)
{
	if (!strstr(text, "entries:"))
		return -EINVAL;
	*ret = (struct cpu_counters){
		.entries = field(text, "entries"),
		.overrun = field(text, "overrun"),
		.dropped = field(text, "dropped events"),
		.read = field(text, "read events"),
		.bytes = field(text, "bytes"),
	};
	return 0;
}

/**
 * subbuf_size_from_header_page() - the sub-buffer size a header_page text describes.
 * @text: events/header_page of an instance
 * @ret: data offset + data size, i.e. the sub-buffer size in bytes
 *
 * Return: 0, or -EINVAL if the "data" field is missing.
 */
int subbuf_size_from_header_page(const char *text, uint32_t *ret)
{
	const char *p = strstr(text, "field: char data;");
	unsigned long off, size;

	if (!p || sscanf(p, "field: char data;\toffset:%lu;\tsize:%lu;", &off, &size) != 2)
		return -EINVAL;
	if (off + size > UINT32_MAX || off + size == 0)
		return -EINVAL;
	*ret = (uint32_t)(off + size);
	return 0;
}


/**
 * saved_cmdlines_find() - a task's name in the kernel's saved_cmdlines text.
 * @text: "PID COMM" lines
 * @pid: the task
 * @buf: receives the name
 * @n: its size
 *
 * Return: 0, or -ENOENT if @text has no line for @pid.
 */
int saved_cmdlines_find(const char *text, pid_t pid, char *buf, size_t n)
{
	for (const char *line = text, *end; *line; line = *end ? end + 1 : end) {
		char *name;

		end = line + strcspn(line, "\n");
		if (strtol(line, &name, 10) != pid || name == line || name >= end || *name != ' ')
			continue;
		snprintf(buf, n, "%.*s", (int)(end - name - 1), name + 1);
		return 0;
	}
	return -ENOENT;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's own settings, /etc/ftraced/ftraced.conf ("key = value"
 * lines, as session files):
 *
 *   # what all sessions' rings and flight histories may take together
 *   memory-limit = 25%
 *   # kernel symbol addresses in group members' files: auto, yes, no
 *   group-symbols = auto
 *   # task names the kernel keeps (saved_cmdlines_size): raised to this at start
 *   saved-cmdlines = 8192
 *   # node_exporter's textfile-collector directory: ftraced.prom goes there
 *   metrics-directory = /var/lib/prometheus/node-exporter
 *   # how often it is rewritten while a session runs
 *   metrics-interval = 15s
 *   # the highest SCHED_FIFO priority -r may give capture workers (0: -r refused)
 *   rt-priority-max = 0
 *   # the capture workers' nice value, -20 to 0 (read at start)
 *   capture-nice = -5
 *
 * A missing file means the defaults; a malformed one stops the daemon
 * from starting (with its line), rather than run with settings nobody
 * chose, and fails a reload with the settings as they were.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/control/daemon-config.h"
#include "daemon/base/keyfile.h"
#include "daemon/base/log.h"
#include "daemon/base/meminfo.h"
#include "ftraced/macro.h"
#include "ftraced/proto.h"
#include "lib/io-util.h"
#include "lib/parse-util.h"

void daemon_config_defaults(struct daemon_config *c)
{
	*c = (struct daemon_config){
		.memory_limit_percent = MEMORY_LIMIT_PERCENT_DEFAULT,
		.group_symbols = GROUP_SYMBOLS_AUTO,
		.saved_cmdlines = SAVED_CMDLINES_DEFAULT,
		.metrics_interval_ms = METRICS_INTERVAL_DEFAULT_MS,
		.capture_nice = CAPTURE_NICE_DEFAULT,
	};
}

/* A decimal number from 0 to @max, nothing else. */
static int parse_unsigned(const char *v, unsigned max, unsigned *ret)
{
	unsigned long x;
	char *end;

	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-' || x > max)
		return -EINVAL;
	*ret = (unsigned)x;
	return 0;
}

/* A decimal number from @min to @max, nothing else. */
static int parse_int(const char *v, int min, int max, int *ret)
{
	long x;
	char *end;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < min || x > max)
		return -EINVAL;
	*ret = (int)x;
	return 0;
}

static int parse_memory_limit(char *v, struct daemon_config *c, char *error, size_t n_error)
{
	size_t len = strlen(v);
	uint64_t n;

	if (len > 1 && v[len - 1] == '%') {
		v[len - 1] = '\0';
		if (parse_size(keyfile_trim(v), &n) < 0 || n == 0 || n > MEMORY_LIMIT_PERCENT_MAX) {
			snprintf(error, n_error, "memory-limit: a percentage of RAM must be between "
				 "1%% and %u%%", MEMORY_LIMIT_PERCENT_MAX);
			return -EINVAL;
		}
		c->memory_limit = 0;
		c->memory_limit_percent = (unsigned)n;
		return 0;
	}
	if (parse_size(v, &n) < 0 || n == 0) {
		snprintf(error, n_error, "memory-limit: invalid size '%.40s' (e.g. 2G, or 25%%)", v);
		return -EINVAL;
	}
	c->memory_limit = n;
	return 0;
}

/**
 * daemon_config_parse() - settings from the text of ftraced.conf.
 * @text: the file's contents
 * @n: their length (at most DAEMON_CONFIG_MAX)
 * @c: defaults on entry; the settings on success
 * @error: receives the problem
 * @n_error: its size
 * @ret_line: the line of the problem (0: the file as a whole)
 *
 * Return: 0, or -EINVAL with @error and @ret_line set.
 */
int daemon_config_parse(const char *text, size_t n, struct daemon_config *c, char *error,
			size_t n_error, unsigned *ret_line)
{
	struct keyfile k;
	char *key, *v;
	int r;

	*ret_line = 0;
	if (n > DAEMON_CONFIG_MAX) {
		snprintf(error, n_error, "larger than %u bytes", DAEMON_CONFIG_MAX);
		return -EINVAL;
	}
	keyfile_init(&k, text, n);
	while ((r = keyfile_next(&k, &key, &v, error, n_error)) > 0) {
		*ret_line = k.line;
		if (strcmp(key, "memory-limit") == 0) {
			r = parse_memory_limit(v, c, error, n_error);
			if (r < 0)
				return r;
		} else if (strcmp(key, "group-symbols") == 0) {
			if (strcmp(v, "auto") == 0)
				c->group_symbols = GROUP_SYMBOLS_AUTO;
			else if (strcmp(v, "yes") == 0)
				c->group_symbols = GROUP_SYMBOLS_YES;
			else if (strcmp(v, "no") == 0)
				c->group_symbols = GROUP_SYMBOLS_NO;
			else {
				snprintf(error, n_error, "group-symbols: '%.40s' is not auto, yes or no",
					 v);
				return -EINVAL;
			}
		} else if (strcmp(key, "saved-cmdlines") == 0) {
			if (parse_unsigned(v, SAVED_CMDLINES_MAX, &c->saved_cmdlines) < 0) {
				snprintf(error, n_error, "saved-cmdlines: '%.40s' is not a number of "
					 "task names from 0 (leave the kernel's) to %u", v,
					 SAVED_CMDLINES_MAX);
				return -EINVAL;
			}
		} else if (strcmp(key, "metrics-directory") == 0) {
			if (v[0] != '/' || strlen(v) > METRICS_DIRECTORY_MAX) {
				snprintf(error, n_error, "metrics-directory: '%.40s' is not an absolute "
					 "path of at most %u bytes", v, METRICS_DIRECTORY_MAX);
				return -EINVAL;
			}
			snprintf(c->metrics_directory, sizeof(c->metrics_directory), "%s", v);
		} else if (strcmp(key, "metrics-interval") == 0) {
			uint64_t ms;

			if (parse_duration_ms(v, &ms) < 0 || ms < METRICS_INTERVAL_MIN_MS ||
			    ms > METRICS_INTERVAL_MAX_MS) {
				snprintf(error, n_error, "metrics-interval: '%.40s' is not a time from "
					 "%us to %us", v, METRICS_INTERVAL_MIN_MS / 1000,
					 METRICS_INTERVAL_MAX_MS / 1000);
				return -EINVAL;
			}
			c->metrics_interval_ms = ms;
		} else if (strcmp(key, "rt-priority-max") == 0) {
			if (parse_unsigned(v, FTRACED_RT_PRIORITY_MAX, &c->rt_priority_max) < 0) {
				snprintf(error, n_error, "rt-priority-max: '%.40s' is not a priority "
					 "from 0 (-r refused) to %u", v, FTRACED_RT_PRIORITY_MAX);
				return -EINVAL;
			}
		} else if (strcmp(key, "capture-nice") == 0) {
			if (parse_int(v, CAPTURE_NICE_MIN, 0, &c->capture_nice) < 0) {
				snprintf(error, n_error, "capture-nice: '%.40s' is not a nice value from "
					 "%d to 0", v, CAPTURE_NICE_MIN);
				return -EINVAL;
			}
		} else {
			snprintf(error, n_error, "unknown key '%.40s'", key);
			return -EINVAL;
		}
	}
	if (r < 0)
		*ret_line = k.line;
	else
		*ret_line = 0;
	return r;
}

/**
 * daemon_config_read() - read ftraced.conf; a missing file leaves the defaults.
 * @path: the file
 * @c: receives the settings (on success only)
 * @error: receives what is wrong, "PATH:LINE: what"
 * @n_error: its size
 *
 * Logs nothing: at start the daemon refuses to run, at a reload the
 * settings stay as they were; each says so.
 *
 * Return: 0, or -errno with @error set.
 */
int daemon_config_read(const char *path, struct daemon_config *c, char *error, size_t n_error)
{
	_cleanup_close_ int fd = -EBADF;
	char text[DAEMON_CONFIG_MAX], what[256];
	struct daemon_config settings;
	unsigned line;
	struct stat st;
	size_t n;
	int r;

	daemon_config_defaults(&settings);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT) {
		*c = settings;
		return 0;
	}
	if (fd < 0) {
		r = negative_errno();
		snprintf(error, n_error, "cannot open '%s': %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(error, n_error, "'%s' is not a regular file", path);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > sizeof(text)) {
		snprintf(error, n_error, "'%s' is larger than %u bytes (DAEMON_CONFIG_MAX)", path,
			 DAEMON_CONFIG_MAX);
		return -EFBIG;
	}
	n = (size_t)st.st_size;
	r = loop_pread_exact(fd, text, n, 0);
	if (r < 0) {
		snprintf(error, n_error, "cannot read '%s': %s", path, strerror(-r));
		return r;
	}
	r = daemon_config_parse(text, n, &settings, what, sizeof(what), &line);
	if (r < 0 && line)
		snprintf(error, n_error, "%s:%u: %s", path, line, what);
	else if (r < 0)
		snprintf(error, n_error, "%s: %s", path, what);
	if (r < 0)
		return r;
	*c = settings;
	return 0;
}

/**
 * daemon_config_load() - daemon_config_read(), its error logged.
 * @path: the file
 * @c: receives the settings
 *
 * Return: 0, or -errno after logging why (the daemon should not start).
 */
int daemon_config_load(const char *path, struct daemon_config *c)
{
	char error[512];
	int r = daemon_config_read(path, c, error, sizeof(error));

	return r < 0 ? log_error_errno(r, "%s", error) : 0;
}

/**
 * daemon_config_memory_limit() - the memory all sessions may take together.
 * @c: settings
 *
 * Return: bytes; 0 if unknown (a percentage of RAM /proc does not tell).
 */
uint64_t daemon_config_memory_limit(const struct daemon_config *c)
{
	if (c->memory_limit)
		return c->memory_limit;
	return meminfo_kb("MemTotal") * 1024 / 100 * c->memory_limit_percent;
}

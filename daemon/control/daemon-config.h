/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define DAEMON_CONFIG_MAX (16u * 1024u)
#define DAEMON_CONFIG_DEFAULT "/etc/ftraced/ftraced.conf"
/* All sessions' rings and histories together, by default: a quarter of RAM. */
#define MEMORY_LIMIT_PERCENT_DEFAULT 25u
#define MEMORY_LIMIT_PERCENT_MAX 90u
/*
 * Task names the kernel keeps for the files' pid -> name table: the 6.1
 * default (128) shows "<...>" for most tasks of a long capture on a busy
 * server. Raised at start, never lowered; the kernel's limit is PID_MAX_DEFAULT.
 */
#define SAVED_CMDLINES_DEFAULT 8192u
#define SAVED_CMDLINES_MAX 32768u

/*
 * The metrics file (metrics-directory): rewritten this often while a
 * session runs, never when none does.
 */
#define METRICS_FILE_NAME "ftraced.prom"
#define METRICS_INTERVAL_DEFAULT_MS 15000u
#define METRICS_INTERVAL_MIN_MS 1000u
#define METRICS_INTERVAL_MAX_MS 3600000u
#define METRICS_DIRECTORY_MAX 1024u

/*
 * The capture workers' nice value (capture-nice). A worker woken by its
 * ring must run before the tasks filling it overwrite what it has not
 * read: at nice 0 it waits for their slice to end, and flat out with
 * 256 KiB rings half the runs lost events (up to 0.36%); at -5, 1 run in
 * 16, 612 events (bench/README.md). Lower preempts the traced tasks more
 * often for the same CPU. Only the workers run at it; the other threads
 * (files, symbols) stay at 0.
 */
#define CAPTURE_NICE_DEFAULT (-5)
#define CAPTURE_NICE_MIN (-20)

/* Whether files of group members' sessions carry kernel symbol addresses. */
enum group_symbols {
	GROUP_SYMBOLS_AUTO, /* as /proc/kallsyms would show them (kptr_restrict) */
	GROUP_SYMBOLS_YES,
	GROUP_SYMBOLS_NO,
};

/* The daemon's own settings (ftraced.conf). */
struct daemon_config {
	uint64_t memory_limit;          /* bytes; 0: memory_limit_percent of MemTotal */
	unsigned memory_limit_percent;
	enum group_symbols group_symbols;
	unsigned saved_cmdlines;        /* at least this many; 0: left as the kernel has it */
	char metrics_directory[METRICS_DIRECTORY_MAX + 1]; /* "": no metrics file */
	uint64_t metrics_interval_ms;
	unsigned rt_priority_max;       /* the highest -r sessions may ask for; 0: -r refused */
	int capture_nice;               /* the capture workers' nice, CAPTURE_NICE_MIN..0 */
};

void daemon_config_defaults(struct daemon_config *c);
int daemon_config_parse(const char *text, size_t n, struct daemon_config *c, char *error,
			size_t n_error, unsigned *ret_line);
int daemon_config_read(const char *path, struct daemon_config *c, char *error, size_t n_error);
int daemon_config_load(const char *path, struct daemon_config *c);
uint64_t daemon_config_memory_limit(const struct daemon_config *c);

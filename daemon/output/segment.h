/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ftraced/macro.h"

struct proc_maps;

struct capture_mirror;
struct chunk_list;
struct cpu_counters;
struct event_list;
struct instance_meta;
struct segment;

/* What every segment of a session shares; all of it outlives the segments. */
struct segment_env {
	int state_dir_fd;
	int notify_fd; /* eventfd, incremented when an assembly finishes */
	const struct instance_meta *imeta;
	const struct event_list *events;
	const char *instance_name;
	struct kallsyms *kallsyms; /* symbols for the files, thread-safe; NULL: none */
	const char *date;          /* every file's DATE option (the session's anchor); "": none */
	/* record --proc-map: filled at the stop, before the last file is assembled; NULL: none */
	const struct proc_maps *procmaps;
	_Atomic uint64_t *written; /* bytes written to files are added here; may be NULL */
	unsigned n_cpus;
	bool zstd;
	int level;
	bool in_place; /* spool in place, so the spool becomes the file (see spool.c); zstd only */
};

int segment_overhead(const struct segment_env *env, const char *cpustat, uint64_t *ret_size);
int segment_new(const struct segment_env *env, uint32_t seq, const char *target, const char *gap,
		struct segment **ret);
/* What part of the history a snapshot keeps. */
struct snapshot_window {
	bool trim;         /* every CPU from the latest time from which any CPU is complete */
	uint64_t since_ts; /* and nothing before this trace-clock time (ns); 0: no bound */
};

int segment_new_snapshot(const struct segment_env *env, uint32_t seq, const char *target,
			 const struct snapshot_window *window, struct segment **ret);
void segment_set_chunks(struct segment *s, unsigned cpu, struct chunk_list *l,
			bool older_data_lost);
int segment_set_gap(struct segment *s, const char *note);
int segment_set_origin(struct segment *s, const char *text);
struct segment *segment_free(struct segment *s);
DEFINE_CLEANUP(struct segment *, segment_free)

uint32_t segment_seq(const struct segment *s);
uint64_t segment_trace_id(const struct segment *s);
const char *segment_target(const struct segment *s);
int segment_spool_fd(const struct segment *s, unsigned cpu);
int segment_mirror_into(struct segment *s, int fd);
void segment_mirror(struct segment *s, unsigned cpu, struct capture_mirror *ret);
void segment_set_start(struct segment *s, unsigned cpu, const struct cpu_counters *c,
		       const char *text);
const struct cpu_counters *segment_start_counters(const struct segment *s, unsigned cpu);
void segment_close_cpu(struct segment *s, unsigned cpu, uint64_t bytes, uint64_t chunks,
		       const struct cpu_counters *end, char *cpustat);
int segment_assemble(struct segment *s, int out_fd);
bool segment_in_place(const struct segment *s);
int segment_rename_file(struct segment *s, int dir_fd, const char *name);
bool segment_assembled(struct segment *s, int *ret_result, uint64_t *ret_file_bytes);
void segment_keep_spool(struct segment *s);
void segment_complete(struct segment *s);

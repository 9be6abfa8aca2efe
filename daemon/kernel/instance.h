/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"

struct instance;
struct event_id;
struct event_list;

/* One CPU's counters from per_cpu/cpuN/stats. */
struct cpu_counters {
	uint64_t entries;
	uint64_t overrun;
	uint64_t dropped;
	uint64_t read;
	uint64_t bytes;   /* in the ring, not read yet */
};

/* A function tracer in the session's instance (-p, -l, -n, -g, ...). */
struct tracer_config {
	char *name;            /* function or function_graph; NULL: none */
	unsigned n_filter, n_notrace, n_graph;
	char **filter;         /* set_ftrace_filter globs (-l) */
	char **notrace;        /* set_ftrace_notrace (-n) */
	char **graph;          /* set_graph_function (-g), function_graph only */
	uint32_t max_graph_depth; /* 0: the kernel's default */
	bool func_stack;       /* options/func_stack_trace, function only */
};

/* What a session asks of its new instance. */
struct instance_setup {
	uint32_t buffer_kb;              /* per CPU; 0: left as it is (sized on a thread) */
	uint32_t subbuf_kb;              /* 0: the kernel's default */
	uint32_t subbuf_kb_preferred;    /* with subbuf_kb 0: tried; the kernel's default if refused */
	const char *clock;               /* NULL: the default */
	const char *filter;              /* for every event; NULL: none */
	const struct event_list *events;
	bool stacktrace;                 /* options/stacktrace: a kernel stack with each event */
	unsigned n_pids;                 /* set_event_pid; 0: every process */
	const uint32_t *pids;
	bool follow_fork;                /* options/event-fork (and function-fork) */
	const struct tracer_config *tracer; /* NULL, or a tracer without a name: none */
	unsigned n_options;              /* -O: options/NAME set, or cleared for "noNAME" */
	char *const *options;
	const char *cpumask;             /* tracing_cpumask; NULL: every CPU */
	unsigned n_exclude_pids;         /* ftraced's own threads, left out (and their children) */
	const uint32_t *exclude_pids;
};

/* In the state directory: the tag of its daemon's instance names, in hex. */
#define INSTANCE_TAG_FILE "instance-tag"

int instance_tag_load(int state_dir_fd, const char *resolved, bool create, uint32_t *ret);
int instance_new(uint32_t tag, uint64_t id, struct instance **ret);
int instance_adopt_orphan(const char *name, const char *prefix, struct instance **ret);
int instance_boot_last_info(struct instance *i, char **ret);
int instance_adopt_boot_mapped(const char *name, struct instance **ret, char *error,
			       size_t n_error);
struct instance *instance_free(struct instance *i);
int instance_destroy(struct instance *i);
int instance_try_remove(struct instance *i);
bool instance_exists(const struct instance *i);
struct instance *instance_abandon(struct instance *i);
DEFINE_CLEANUP(struct instance *, instance_free)

const char *instance_name(const struct instance *i);
bool instance_is_top_level(const struct instance *i);
bool instance_kernel_refused(const struct instance *i);
int instance_configure(struct instance *i, const struct instance_setup *p, char *error,
		       size_t n_error);
int instance_set_subbuf(struct instance *i, uint32_t subbuf_kb);
int instance_set_buffer_size(struct instance *i, uint32_t buffer_kb);
int instance_set_buffer(struct instance *i, uint32_t buffer_kb, uint32_t subbuf_kb);
int instance_set_clock(struct instance *i, const char *clock);
int instance_enable_event(struct instance *i, const struct event_id *e, const char *filter,
			  char **ret_kernel_error);
int instance_set_buffer_percent(struct instance *i, unsigned percent);
int instance_set_overwrite(struct instance *i, bool on);
int instance_set_tracing(struct instance *i, bool on);
int instance_clear(struct instance *i);
/* What another process did to the instance since the last look (instance_watch_read()). */
struct instance_changes {
	bool control;       /* tracing_on, set_event, an enable or a trace file was written */
	char changed[1024]; /* the settings changed (or pid filters written), "; "-separated */
};

struct instance_watch;
int instance_watch_new(struct instance *i, const struct event_list *events, unsigned n_cpus,
		       bool own_snapshot, struct instance_watch **ret, int *ret_watch_error);
struct instance_watch *instance_watch_free(struct instance_watch *w);
DEFINE_CLEANUP(struct instance_watch *, instance_watch_free)
int instance_watch_fd(const struct instance_watch *w);
void instance_watch_read(struct instance_watch *w, struct instance_changes *ret);
int instance_check(struct instance *i, const struct event_list *events, bool *ret_tracing_off,
		   char *ret_disabled, size_t n_disabled);
int instance_read(struct instance *i, const char *file, char **ret, size_t *ret_size);
int instance_open_cpu_raw(struct instance *i, unsigned cpu, int *ret_fd);
int instance_open_pipe(struct instance *i, int cpu, int *ret_fd);
int instance_open_cpu_snapshot_raw(struct instance *i, unsigned cpu, int *ret_fd);
bool instance_has_snapshot(struct instance *i);
int instance_snapshot_swap(struct instance *i);
int instance_snapshot_clear(struct instance *i);
int instance_write_marker(struct instance *i, const char *text);
int instance_open_cpu_stats(struct instance *i, unsigned cpu, int *ret_fd);
int instance_read_cpu_stats(struct instance *i, unsigned cpu, struct cpu_counters *ret,
			    char **ret_text);
int instance_check_writable(void);
int instance_raise_saved_cmdlines(unsigned n);
int instance_task_comm(pid_t pid, char *buf, size_t n);
bool instance_gets_trace_printk(void);
/* Takes over a busy orphan (see instance_remove_orphans()). */
typedef void (*instance_busy_fn)(struct instance *i, void *userdata);
int instance_remove_orphans(uint32_t tag, instance_busy_fn busy, void *userdata);

int instance_parse_cpu_counters(const char *text, struct cpu_counters *ret);
int subbuf_size_from_header_page(const char *text, uint32_t *ret);
int saved_cmdlines_find(const char *text, pid_t pid, char *buf, size_t n);

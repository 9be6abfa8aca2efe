/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/kernel/instance.h"
#include "daemon/store/retention.h"
#include "ftraced/proto.h"

struct ctl_request;


/*
 * What a session was asked to do, with every default filled in and every
 * value inside bounds.h. Built from a RECORD or CREATE request (session
 * files become requests first); the session keeps it for its lifetime.
 */
struct session_config {
	enum ftraced_mode mode;
	unsigned n_events;
	char **events;         /* the specs as given: SYSTEM[:EVENT|:*], into event_text */
	char *event_text;      /* what they point into: as long as they are, no longer */
	char **event_filters;  /* n_events entries: the filter of each spec (-f); NULL: none */
	char **event_triggers; /* n_events entries: the trigger of each spec (-R); NULL: none */
	unsigned n_excluded;   /* -v: specs whose events are left out of the others' */
	char (*excluded)[FTRACED_EVENT_SPEC_MAX + 1];
	char *filter;          /* for every event; NULL: none */
	char *clock;           /* NULL: the instance's default */
	uint32_t buffer_kb;    /* per CPU */
	uint32_t subbuf_kb;    /* 0: the kernel's default */
	bool zstd;
	int level;
	uint64_t duration_ms;  /* 0: until stopped */
	bool stacktrace;       /* a kernel stack with each event (options/stacktrace) */
	unsigned rt_priority;  /* capture workers run SCHED_FIFO at this while it captures; 0: no */
	uint32_t read_interval_us; /* -s: every CPU read at least this often; 0: watermark only */
	bool proc_map;         /* record --proc-map: the pids' memory maps in the file */
	bool ignore_missing;   /* events this kernel lacks are skipped, not refused */
	unsigned n_pids;       /* only events of these processes (set_event_pid); 0: all */
	uint32_t pids[FTRACED_PIDS_PER_REQUEST_MAX];
	bool follow_fork;      /* and of the children they fork (options/event-fork) */
	struct tracer_config tracer; /* -p and its options; tracer.name NULL: none */
	unsigned n_probes;     /* --probe definitions, as given */
	char **probes;
	unsigned n_trace_options; /* -O: option names, "noNAME" to clear one */
	char **trace_options;
	char *cpumask;         /* -M: tracing_cpumask; NULL: every CPU */
	bool no_filter;        /* --no-filter: the daemon's own threads are traced too */
	bool top_level;        /* --top-level: captures in the top-level buffer, leased */
	uint64_t keep_size;    /* record -m: bytes of trace data kept per CPU, the most
				* recent, in a chunk ring instead of a spool; 0: all of it */

	/* continuous */
	uint64_t segment_size; /* 0: by time only */
	uint64_t segment_time_ms;
	struct retention_limits retention; /* continuous and flight (its snapshots) */
	char *on_segment;      /* command line, root only; NULL: none */

	/* flight */
	enum ftraced_flight_backend backend;
	char boot_instance[FTRACED_NAME_MAX + 1]; /* persistent backend: the instance it adopts */
	uint64_t flight_size;  /* memory backend: the history's budget, all CPUs */
	unsigned n_triggers;
	char (*triggers)[FTRACED_TRIGGER_MAX + 1];
};

/* The memory a new session may take. */
struct memory_budget {
	uint64_t available_kb; /* MemAvailable now; 0: unknown (not checked) */
	uint64_t limit;        /* bytes, all sessions together (memory-limit); 0: none */
	uint64_t committed;    /* bytes the other sessions take */
};

int session_config_from_request(const struct ctl_request *req, uid_t owner, unsigned n_cpus,
				const struct memory_budget *mem, struct session_config *ret,
				char *error, size_t n_error);
uint64_t session_config_memory(const struct session_config *c, unsigned n_cpus);
uint32_t subbuf_kb_preferred(uint32_t buffer_kb);
uint32_t default_buffer_kb(unsigned n_cpus, uint64_t avail_kb);
void session_config_done(struct session_config *c);

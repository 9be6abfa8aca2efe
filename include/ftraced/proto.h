/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control protocol between ftracectl and ftraced, defined once.
 *
 * Transport: an AF_UNIX SOCK_SEQPACKET socket, one message per packet. A
 * message is a fixed 16-byte little-endian header followed by exactly
 * n_payload bytes of attributes. An attribute is `u16 type, u16 length,
 * length bytes`, unaligned, little-endian. Requests carry file descriptors
 * (SCM_RIGHTS): RECORD carries one, SNAPSHOT may carry one, and a request
 * with ATTR_EVENT_LIST carries its event list as the last one.
 *
 * Event lists have no small cap: a session may name every event a kernel
 * has (tens of thousands with many modules). A message's events whose
 * attributes take more than FTRACED_EVENTS_INLINE_SIZE_MAX bytes travel in a
 * sealed memfd instead of the packet, which cannot grow past the socket
 * buffer: the message then holds ATTR_EVENT_LIST, where in that memfd they
 * are. Replies do the same for a session record's events.
 *
 * Every request gets exactly one reply (OK, ERROR, STARTED or SESSIONS). A
 * RECORD connection later also receives one FINISHED message when the file
 * is complete. STOP and DESTROY of a continuous or flight session, and
 * SNAPSHOT and ROTATE, reply once their files are complete. docs/protocol.md describes the same thing in prose.
 */
#pragma once

#include <assert.h>
#include <stdint.h>

#define FTRACED_PROTO_MAGIC   UINT32_C(0x43525446) /* "FTRC" in file order */
#define FTRACED_PROTO_VERSION 1

/* Protocol-level limits: the parser rejects anything beyond them. */
#define FTRACED_MSG_SIZE_MAX           (64u * 1024u)
#define FTRACED_NAME_MAX               64u   /* session and clock names */
#define FTRACED_EVENT_SPEC_MAX         128u  /* "system:event" as typed */
/*
 * Event specs (and globs) of one request or session: far above any kernel's
 * event count (about 2,000 here, 10-20 k with many modules), so that only a
 * runaway list meets it.
 */
/* -v: the specs a request leaves out (each may be a glob): far more than anyone types. */
#define FTRACED_EXCLUDED_PER_REQUEST_MAX 256u
#define FTRACED_EVENTS_PER_REQUEST_MAX 100000u
/* A message's events inline up to this many bytes of attributes, else in a memfd. */
#define FTRACED_EVENTS_INLINE_SIZE_MAX (16u * 1024u)
/*
 * An event list in a memfd: the limit's events with filters of average
 * length. Each event takes at least 5 bytes, so this bounds the count too.
 */
#define FTRACED_EVENT_LIST_SIZE_MAX    (64u * 1024u * 1024u)
#define FTRACED_FILTER_MAX             4096u /* the kernel refuses ~51 KB; we cap far lower */
#define FTRACED_MESSAGE_MAX            4096u /* error text in replies */
#define FTRACED_COMMAND_MAX            1024u /* --on-segment command line */
#define FTRACED_TRIGGER_MAX            512u  /* one --trigger specification */
#define FTRACED_TRIGGERS_PER_REQUEST_MAX 8u
#define FTRACED_EVENT_TRIGGER_MAX      1024u /* one -R, as written to events/S/E/trigger */
#define FTRACED_PIDS_PER_REQUEST_MAX   64u  /* -P, and record -F's command */
#define FTRACED_PATH_MAX               4096u
#define FTRACED_TRACER_MAX             32u   /* -p: function, function_graph, nop */
#define FTRACED_FUNCTION_MAX           256u  /* one -l/-n/-g glob, ":mod:NAME" included */
#define FTRACED_FUNCTIONS_PER_REQUEST_MAX 64u /* -l, -n and -g together */
#define FTRACED_PROBE_MAX              512u  /* one --probe definition */
#define FTRACED_PROBES_PER_REQUEST_MAX 16u
#define FTRACED_RT_PRIORITY_MAX        99u   /* -r: SCHED_FIFO's highest priority */
/*
 * -s: a read of every CPU at least this often. Not below trace-cmd's
 * default of 1 ms: each read is a command to every CPU's worker, and a
 * partly filled sub-buffer read is stored whole. At most an hour.
 */
/*
 * --proc-map: one process's maps as trace-cmd's PROCMAPS text, sent by the
 * client with its STOP (it reads them with the user's rights, the daemon
 * cannot). A process mapping more is left out, said by the client.
 */
#define FTRACED_PROC_MAPS_MAX          32768u
#define FTRACED_READ_INTERVAL_MIN_US   1000u
#define FTRACED_READ_INTERVAL_MAX_US   3600000000u
/*
 * record -m: KiB of trace data kept per CPU. The daemon refuses less than
 * one sub-buffer (known only once the instance is made) and more than its
 * memory allows; this only keeps the number a size (1 TiB per CPU).
 */
#define FTRACED_KEEP_KB_MAX            (UINT64_C(1) << 30)
#define FTRACED_OPTION_MAX             64u   /* one -O option name, "no" included */
#define FTRACED_OPTIONS_PER_REQUEST_MAX 64u
/* -M: hex digits and commas for 8192 CPUs (the kernel's NR_CPUS at most), with room. */
#define FTRACED_CPUMASK_MAX            4096u

struct ftraced_msg_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t flags; /* none defined: must be 0 */
	uint32_t n_payload;
};
static_assert(sizeof(struct ftraced_msg_hdr) == 16, "wire header is 16 bytes");

#define FTRACED_ATTR_HDR_SIZE 4u

enum ftraced_msg_type {
	/* requests */
	FTRACED_MSG_RECORD = 1, /* + one fd: the output file */
	FTRACED_MSG_STOP,       /* ATTR_SESSION */
	FTRACED_MSG_LIST,       /* no attributes */
	FTRACED_MSG_STATUS,     /* optional ATTR_SESSION */
	/* replies */
	FTRACED_MSG_OK,
	FTRACED_MSG_ERROR,    /* ATTR_ERRNO, ATTR_MESSAGE */
	FTRACED_MSG_STARTED,  /* one session record */
	FTRACED_MSG_SESSIONS, /* zero or more session records */
	FTRACED_MSG_FINISHED, /* one session record, sent when a record's file is complete */
	/* requests, continued */
	FTRACED_MSG_CREATE,   /* ATTR_SESSION, ATTR_MODE, capture and segment attributes */
	FTRACED_MSG_START,    /* ATTR_SESSION */
	FTRACED_MSG_DESTROY,  /* ATTR_SESSION */
	FTRACED_MSG_SNAPSHOT, /* ATTR_SESSION, optional ATTR_TRIM, optional fd: the output file;
			       * replied with OK + ATTR_PATH (no fd), ATTR_FILE_BYTES, ATTR_NOTE */
	FTRACED_MSG_SAVE,     /* ATTR_SESSION; replied with OK + one fd: its session file */
	FTRACED_MSG_OFFER,    /* ATTR_OFFER; replied with OK + one fd: what the kernel offers */
	/* 16: unassigned */
	FTRACED_MSG_RELOAD = 17, /* no attributes, root only; replied with OK + ATTR_NOTE (what
				  * changed) once ftraced.conf and sessions.d are applied, or ERROR
				  * (nothing changed) */
	FTRACED_MSG_ROTATE = 18, /* ATTR_SESSION; replied once the closed segment is on disk:
				  * OK + ATTR_PATH, ATTR_FILE_BYTES */
	_FTRACED_MSG_TYPE_MAX,
};

enum ftraced_attr {
	/* request attributes */
	FTRACED_ATTR_EVENT = 1,    /* string, repeated: "sys:event", "sys:*" or "sys" */
	FTRACED_ATTR_FILTER,       /* string, printable ASCII */
	FTRACED_ATTR_BUFFER_KB,    /* u32, per CPU */
	FTRACED_ATTR_SUBBUF_KB,    /* u32 */
	FTRACED_ATTR_CLOCK,        /* name */
	FTRACED_ATTR_COMPRESSION,  /* u32, enum ftraced_compression */
	FTRACED_ATTR_LEVEL,        /* s32 as u32 */
	FTRACED_ATTR_DURATION_MS,  /* u64 */
	FTRACED_ATTR_SESSION,      /* name */
	/* reply attributes */
	FTRACED_ATTR_ERRNO,        /* u32, positive errno */
	FTRACED_ATTR_MESSAGE,      /* string, printable */
	FTRACED_ATTR_SESSION_BEGIN, /* empty: the attributes after it describe one session */
	FTRACED_ATTR_INSTANCE,     /* string */
	FTRACED_ATTR_STATE,        /* string */
	FTRACED_ATTR_OWNER_UID,    /* u32 */
	FTRACED_ATTR_CPU,          /* struct ftraced_cpu_stats */
	FTRACED_ATTR_FILE_BYTES,   /* u64, size of the finished file */
	FTRACED_ATTR_ELAPSED_MS,   /* u64 */
	FTRACED_ATTR_SUBBUF_SIZE,  /* u32, bytes actually used by the kernel */
	/* continuous sessions */
	FTRACED_ATTR_MODE,              /* u32, enum ftraced_mode */
	FTRACED_ATTR_SEGMENT_SIZE,      /* u64, bytes */
	FTRACED_ATTR_SEGMENT_TIME_MS,   /* u64 */
	FTRACED_ATTR_MAX_TOTAL,         /* u64, bytes */
	FTRACED_ATTR_MAX_FILES,         /* u32 */
	FTRACED_ATTR_MAX_AGE_MS,        /* u64 */
	FTRACED_ATTR_KEEP_FREE,         /* u64, bytes */
	FTRACED_ATTR_KEEP_FREE_PERCENT, /* u32, 1..99 */
	FTRACED_ATTR_ON_SEGMENT,        /* string, printable: program and arguments */
	FTRACED_ATTR_SEGMENT_SEQ,       /* u32, the open segment */
	FTRACED_ATTR_SEGMENTS_KEPT,     /* u32, closed segments on disk */
	FTRACED_ATTR_DISK_BYTES,        /* u64, their size */
	FTRACED_ATTR_CPU_SEGMENT,       /* struct ftraced_cpu_stats, since the open segment began */
	FTRACED_ATTR_DIRECTORY,         /* string, where the segments are */
	/* flight recorder */
	FTRACED_ATTR_FLIGHT_BACKEND,    /* u32, enum ftraced_flight_backend */
	FTRACED_ATTR_FLIGHT_SIZE,       /* u64, bytes of memory for the history, all CPUs */
	FTRACED_ATTR_TRIGGER,           /* string, repeated: a --trigger specification */
	FTRACED_ATTR_TRIM,              /* u32, 0 or 1 */
	FTRACED_ATTR_PATH,              /* string: a file the daemon wrote */
	FTRACED_ATTR_NOTE,              /* string, printable: something the user should know */
	FTRACED_ATTR_HISTORY_MS,        /* u64, time span of the history held (all CPUs) */
	FTRACED_ATTR_HISTORY_RAW_BYTES, /* u64, raw trace bytes the history holds */
	FTRACED_ATTR_HISTORY_BYTES,     /* u64, memory it takes */
	FTRACED_ATTR_EVICTED_RAW_BYTES, /* u64, raw bytes evicted from the history so far */
	FTRACED_ATTR_SNAPSHOTS,         /* u32, snapshots written */
	FTRACED_ATTR_TRIGGER_STATUS,    /* string, repeated: a trigger and what it did */
	/* LIST and STATUS replies, before the session records */
	FTRACED_ATTR_PENDING_INSTANCE,  /* string, repeated: an instance waiting to be removed */
	/* a session's STATUS record, added after the attributes above */
	FTRACED_ATTR_WARNING,           /* string: what another process did to the session's instance;
					   retention that cannot count the session's files */
	FTRACED_ATTR_EVENTS_DISCARDED,  /* u64: events ftraced read or left unread and could not store */
	/* capture options of RECORD and CREATE (trace-cmd record's -T and -i) */
	FTRACED_ATTR_STACKTRACE,        /* u32, 0 or 1: a kernel stack with each event */
	FTRACED_ATTR_IGNORE_MISSING,    /* u32, 0 or 1: skip events this kernel lacks */
	/* a session's STATUS record */
	FTRACED_ATTR_SKIPPED_EVENT,     /* string, repeated: an event spec skipped (-i) */
	/* capture options of RECORD and CREATE (trace-cmd record's -P/-F and -c) */
	FTRACED_ATTR_PID,               /* u32, repeated: only events of these processes */
	FTRACED_ATTR_FOLLOW_FORK,       /* u32, 0 or 1: and of the children they fork */
	/* capture options of RECORD and CREATE (trace-cmd record's -f, -p, -l, -n, -g,
	 * --max-graph-depth, --func-stack; --probe is ftraced's) */
	FTRACED_ATTR_EVENT_FILTER,      /* string, repeated: the filter of the EVENT just before */
	FTRACED_ATTR_TRACER,            /* name: function or function_graph */
	FTRACED_ATTR_FTRACE_FILTER,     /* string, repeated: a function glob to trace (-l) */
	FTRACED_ATTR_FTRACE_NOTRACE,    /* string, repeated: a function glob not to trace (-n) */
	FTRACED_ATTR_GRAPH_FUNCTION,    /* string, repeated: a function_graph root (-g) */
	FTRACED_ATTR_MAX_GRAPH_DEPTH,   /* u32, 1..: function_graph's depth */
	FTRACED_ATTR_FUNC_STACK,        /* u32, 0 or 1: a stack with each function event */
	FTRACED_ATTR_PROBE,             /* string, repeated: a kprobe or uprobe definition */
	/* capture options of RECORD and CREATE (trace-cmd record's -r) */
	FTRACED_ATTR_RT_PRIORITY,       /* u32, 1..99: capture workers run SCHED_FIFO at this */

	/* Replies only. */
	FTRACED_ATTR_SESSION_COUNTERS = 64, /* struct ftraced_session_counters */
	FTRACED_ATTR_DAEMON_COUNTERS,       /* struct ftraced_daemon_counters, before the sessions */
	FTRACED_ATTR_DAEMON_CPU,            /* u64: CPU the daemon has used (user + system, every thread), us */

	/* capture options of RECORD and CREATE (trace-cmd record's -O, -M, --no-filter) */
	FTRACED_ATTR_TRACE_OPTION,      /* string, repeated: an instance option, "NAME" or "noNAME" */
	FTRACED_ATTR_CPUMASK,           /* string: tracing_cpumask in hex, commas allowed */
	FTRACED_ATTR_NO_FILTER,         /* u32, 0 or 1: keep the daemon's own threads in the trace */
	/* OFFER */
	FTRACED_ATTR_OFFER,             /* u32, enum ftraced_offer */
	/* a session's STATUS record */
	FTRACED_ATTR_GAP,               /* string: a time it did not capture (the daemon was away) */
	FTRACED_ATTR_HISTORY_FROM,      /* string: UTC time from which every CPU's history is held */
	FTRACED_ATTR_SINCE_US,          /* u64: a snapshot keeps events from this wall-clock time
					   on, in microseconds since the epoch */
	FTRACED_ATTR_RECOVERED,         /* string: a flight session's newest file recovered after a
					   crash, a name in its DIRECTORY */
	FTRACED_ATTR_STARTED_US,        /* u64: when the session last started, wall clock, us */
	FTRACED_ATTR_LAST_SNAPSHOT_US,  /* u64: when its last snapshot was complete, wall clock, us */
	FTRACED_ATTR_LAST_SNAPSHOT,     /* string: that snapshot's file (absent: a client's) */
	/* capture option of RECORD and CREATE */
	FTRACED_ATTR_TOP_LEVEL,         /* u32, 0 or 1: lease the top-level buffer (--top-level) */
	/* Replies only: in SESSIONS, before the first SESSION_BEGIN */
	FTRACED_ATTR_LEASE_HOLDER = 79, /* string: the session that leases the top-level buffer */
	/* ERROR replies */
	FTRACED_ATTR_KERNEL_REFUSED = 82, /* u32, 1: the kernel refused, not ftraced's rules */
	/* capture option of RECORD and CREATE (trace-cmd record -v) */
	FTRACED_ATTR_EXCLUDE_EVENT,     /* string, repeated: an event spec left out of the EVENTs */
	FTRACED_ATTR_EVENT_TRIGGER,     /* string, repeated: the trigger of the EVENT just before (-R) */
	FTRACED_ATTR_READ_INTERVAL_US,  /* u32: every CPU is read at least this often (-s) */
	FTRACED_ATTR_PROC_MAP,          /* u32, 0 or 1: the PIDs' memory maps in the file (RECORD) */
	FTRACED_ATTR_PROC_MAPS,         /* string, repeated, in STOP: one process's PROCMAPS text */

	/*
	 * Requests and session records: struct ftraced_event_list, where the
	 * EVENT, EVENT_FILTER and SKIPPED_EVENT attributes of this request or
	 * record are in the memfd passed with the message (its last fd).
	 */
	FTRACED_ATTR_EVENT_LIST = 90,
	/* capture option of RECORD (trace-cmd record -m) */
	FTRACED_ATTR_KEEP_KB = 91,      /* u64, 1..FTRACED_KEEP_KB_MAX: KiB of trace data kept per
					   CPU, the most recent; older data is dropped */
	_FTRACED_ATTR_MAX,
};
/* Requests' attribute sets are two u64 bitmaps (lib/ctl/ctl-proto.h). */
#define FTRACED_ATTR_SET_MAX 128u
static_assert(_FTRACED_ATTR_MAX <= FTRACED_ATTR_SET_MAX, "attribute sets hold every attribute");

/* A session's INSTANCE when it leases the top-level buffer (--top-level). */
#define FTRACED_TOP_LEVEL_INSTANCE "top-level"

enum ftraced_mode {
	FTRACED_MODE_RECORD = 0,     /* on demand, into the client's fd */
	FTRACED_MODE_CONTINUOUS = 1, /* rotating segments in the state directory */
	FTRACED_MODE_FLIGHT = 2,     /* recent history kept, written by snapshots */
	_FTRACED_MODE_MAX,
};

enum ftraced_flight_backend {
	FTRACED_FLIGHT_MEMORY = 0, /* drained into a ring of compressed chunks */
	FTRACED_FLIGHT_KERNEL = 1, /* kept in the kernel's ring, in overwrite mode */
	FTRACED_FLIGHT_PERSISTENT = 2, /* kept in a ring mapped onto memory reserved at boot */
	_FTRACED_FLIGHT_BACKEND_MAX,
};

/*
 * What an OFFER asks for; the reply's fd holds lines "NAME<TAB>VALUE<TAB>DETAIL"
 * (events: "system:event"; functions: available_filter_functions as it is).
 */
enum ftraced_offer {
	FTRACED_OFFER_EVENTS = 0,
	FTRACED_OFFER_TRACERS = 1,
	FTRACED_OFFER_FUNCTIONS = 2,
	FTRACED_OFFER_OPTIONS = 3,
	FTRACED_OFFER_CAPABILITIES = 4,
	_FTRACED_OFFER_MAX,
};

enum ftraced_compression {
	FTRACED_COMPRESSION_ZSTD = 0,
	FTRACED_COMPRESSION_NONE = 1,
	_FTRACED_COMPRESSION_MAX,
};

/* ATTR_EVENT_LIST (little-endian): a range of the message's memfd. */
struct ftraced_event_list {
	uint64_t offset;
	uint64_t size; /* 1..FTRACED_EVENT_LIST_SIZE_MAX, and offset + size within it */
};
static_assert(sizeof(struct ftraced_event_list) == 16, "event list reference is 16 bytes");

/*
 * Per-CPU counters of one session, as sent in ATTR_CPU (all little-endian).
 * The kernel counters are deltas since the session started.
 */
struct ftraced_cpu_stats {
	uint32_t cpu;
	uint32_t reserved; /* 0 */
	uint64_t bytes_raw;    /* sub-buffer bytes read from the kernel */
	uint64_t bytes_stored; /* bytes written to the spool (compressed in zstd mode) */
	uint64_t chunks;
	uint64_t entries;      /* kernel: events still in the ring buffer */
	uint64_t overrun;      /* kernel: events overwritten */
	uint64_t dropped;      /* kernel: events dropped because the buffer was full */
	uint64_t read;         /* kernel: events handed to readers */
};
static_assert(sizeof(struct ftraced_cpu_stats) == 64, "cpu stats are 64 bytes on the wire");

/* What one session did since it was created, as sent in ATTR_SESSION_COUNTERS (little-endian). */
struct ftraced_session_counters {
	uint64_t files_written;       /* segments or snapshots put in the session's directory */
	uint64_t files_deleted;       /* by retention */
	uint64_t files_failed;        /* segments or snapshots that could not be written */
	uint64_t triggers_fired;
	uint64_t triggers_suppressed; /* by a trigger's min-interval or max */
	uint64_t bytes_deleted;       /* by retention: the files' allocated bytes */
	uint64_t retention_failures;  /* retention runs that could not count the files */
	uint64_t reserved;            /* 0 */
};
static_assert(sizeof(struct ftraced_session_counters) == 64, "session counters are 64 bytes");

/* What the daemon did since it started, as sent in ATTR_DAEMON_COUNTERS (little-endian). */
struct ftraced_daemon_counters {
	uint64_t uptime_ms;
	uint64_t connections;         /* accepted */
	uint64_t connections_refused; /* not allowed, or no room */
	uint64_t requests;
	uint64_t request_errors;      /* requests answered with an error */
	uint64_t hooks_run;           /* on-segment commands run, even if they could not start */
	uint64_t hooks_failed;        /* that could not start, failed, or were killed at their deadline */
	uint64_t sessions_started;
};
static_assert(sizeof(struct ftraced_daemon_counters) == 64, "daemon counters are 64 bytes");

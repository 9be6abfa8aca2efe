/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every limit the daemon enforces, in one place. Protocol-level limits (what
 * the parser accepts) live in ftraced/proto.h; these are the semantic ones:
 * what a client may make the daemon or the kernel allocate.
 */
#pragma once

#include "ftraced/proto.h"
#include "lib/parse-util.h"

#define CTL_MSG_SIZE_MAX          FTRACED_MSG_SIZE_MAX
#define CTL_CONN_MAX              64u
#define CTL_CONN_PER_UID_MAX      16u
/* From accept to the first request (a packet arrives whole, so this is all a slow client gets). */
#define CTL_REQUEST_TIMEOUT_USEC  (UINT64_C(5) * 1000 * 1000)
/* A connection with nothing in progress and no request for this long is closed. */
#define CTL_IDLE_TIMEOUT_USEC     (UINT64_C(60) * 1000 * 1000)
/* How late a connection may be closed after its deadline (sd-event's timer slack). */
#define CTL_SWEEP_ACCURACY_USEC   (UINT64_C(250) * 1000)

/* The state directory's lock file holds its holder's pid: a number, a newline. */
#define STATE_LOCK_PID_MAX        20u
#define SESSION_MAX               16u
#define SESSION_PER_UID_MAX       4u
/* *.conf files a sessions directory is read for: room for renames and disabled copies. */
#define SESSION_FILES_MAX         (SESSION_MAX * 4u)
/*
 * A session's events after expansion, bounded by their names' bytes, not
 * by a count: `-e all` takes every event a kernel has (2,305 here, 60 KB
 * of names). This is the names of about 150,000 events.
 */
#define EVENT_LIST_BYTES_MAX      (4u * 1024u * 1024u)

#define BUFFER_KB_MIN             4u
#define BUFFER_KB_MAX             (1024u * 1024u) /* per CPU; also capped by memory */
#define BUFFER_KB_DEFAULT         4096u
/*
 * Without -b, a machine whose CPUs would take more than BUFFER_MEM_PERCENT_MAX
 * of its memory at the default (64 CPUs and 2 GiB) gets the largest power
 * of two that fits, down to this; -b is refused above the share, as given.
 */
#define BUFFER_KB_DEFAULT_MIN     256u
#define BUFFER_MEM_PERCENT_MAX    10u    /* of MemAvailable, all CPUs together */
#define SUBBUF_KB_MIN             4u
/* The kernel takes sub-buffers of at most 128 pages (order 7): 512 KiB with 4 KiB pages. */
#define SUBBUF_KB_MAX             512u
/*
 * Sub-buffers a session gets when it names no size, where the kernel can
 * change it (6.8 and later; elsewhere, or if it refuses, the kernel's one
 * page). Fewer, larger sub-buffers cost less per byte to splice out and
 * carry fewer page headers: at 1 M markers/s, 32 KiB against 4 KiB took the
 * CPU from 0.58x to 0.54x trace-cmd's and the output from 0.888x to 0.860x,
 * and 64 KiB gained next to nothing more (bench/same-load.py). 32 KiB is
 * order 3, the largest allocation the page allocator still tries hard to
 * satisfy on a fragmented server (PAGE_ALLOC_COSTLY_ORDER).
 */
#define SUBBUF_KB_PREFERRED       32u
/* ... and no larger than this fraction of the ring, so a small ring keeps many of them. */
#define SUBBUFS_PER_RING_MIN      32u
#define ZSTD_LEVEL_MIN            (-7)
#define ZSTD_LEVEL_MAX            19
/* Level 1 beats zstd's default 3 on ring-buffer pages, in size and speed: markers 13.6x
 * against 13.0x, a busy system 10.4x against 9.9x, in 128 KiB chunks (bench/ratio.py). */
#define ZSTD_LEVEL_DEFAULT        1
#define DURATION_MS_MAX           DURATION_TEXT_MS_MAX
#define SEGMENT_SIZE_MIN          (64u * 1024u)
#define SEGMENT_SIZE_MAX          (UINT64_C(1) << 31) /* trace-cmd 3.1.6 misreads larger CPU streams */
#define SEGMENT_SIZE_DEFAULT      (UINT64_C(128) << 20)
#define SEGMENT_TIME_MS_MIN       100u
/* Retention budgets must keep something: --max-age at least this (and the segment time). */
#define RETENTION_AGE_MS_MIN      1000u
/* --keep-free N%: at most this, so segments have some room left. */
#define KEEP_FREE_PERCENT_MAX     90u
/* Worker progress notifications per segment size, per CPU (size-based rotation). */
#define SEGMENT_SIZE_CHECKS       8u

/*
 * Sub-buffers per compressed chunk: a chunk is about CHUNK_TARGET_BYTES raw.
 * zstd's window covers the whole chunk (compressor_for_chunks()), and on
 * ring-buffer pages the window is what sets the ratio: the same marker
 * pages at level 3 took 9.16 MB in 128 KiB chunks, 8.77 MB in 512 KiB,
 * at the same speed (bench/README.md). The cost is the chunk a stream
 * holds while it fills.
 */
#define CHUNK_TARGET_BYTES        (512u * 1024u)
/* A flight ring holds at least this many chunks per CPU even if nothing compresses. */
#define CHUNKS_PER_RING_MIN       16u
/*
 * Raw bytes a stream collects before compressing them, as several chunks in
 * a row while zstd's tables are still in cache. With small ring buffers a
 * wake-up brings only a few sub-buffers, and compressing each chunk with
 * cold tables took 1.5x the CPU (measured, 256 KiB buffers at 1 M events/s).
 * Where each wake-up already brings a batch, it stays in the ring and the
 * stream takes it a chunk at a time (capture_stream_new()). A file's chunk
 * (CHUNK_TARGET_BYTES) is a batch by itself; a flight ring's may be smaller.
 */
#define CAPTURE_BATCH_BYTES       (512u * 1024u)
/*
 * What a worker took from the kernel reaches its spool within this long
 * at any rate: an idle worker writes out a batch that has waited this
 * long (capture_stream_freshen()). The kernel's ring outlives a killed
 * daemon (recovery drains it) and the spool's pages do, the worker's heap
 * does not: at a quiet server's 1 KB/s a batch held hours of trace. The
 * cost is smaller chunks below a batch a second per CPU.
 */
#define CAPTURE_FRESH_USEC        (UINT64_C(1000) * 1000u)
/*
 * A reader wakes once its CPU's ring is this full at most (buffer_percent),
 * earlier when a batch fills less. Measured flat out on 2 CPUs with 256 KiB
 * rings (bench/compare.py, 3 runs each): waking at 50% lost 23-27 k of 4.5 M
 * events a run, at 25% 0-3 k, at 10% 0-612, for the same CPU per event.
 */
#define WAKE_PERCENT_MAX          10u
/*
 * Tasks the daemon may run besides its capture workers (one per CPU): the
 * main thread, and per session a ring being sized, files being assembled
 * (a segment, or snapshots waiting) and instances being removed; and the
 * on-segment commands. The unit's TasksMax= leaves room for this above
 * the CPU count (systemd/ftraced.service.in).
 */
#define TASKS_SPARE               (1u + SESSION_MAX * (3u + SNAPSHOTS_PENDING_MAX) + RUNNER_MAX)
/* A capture worker in one turn for this long (and half the watchdog period) is stuck. */
#define CAPTURE_STALL_USEC        (UINT64_C(2) * 1000 * 1000)

/* Allocations this large get their own mapping, returned when freed (main()). */
#define MALLOC_MMAP_THRESHOLD     (128 * 1024)

/* Bytes one splice() may move: the pipe is grown to this when the kernel lets us. */
#define CAPTURE_PIPE_BYTES        (1024u * 1024u)

/*
 * Session ids are never given out twice by a state directory's daemons (an
 * orphan keeps its instance's name until it goes): the last taken is in
 * STATE_DIR/SESSION_ID_FILE, written a block of this many ids ahead.
 */
#define SESSION_ID_FILE           "last-session-id"
#define SESSION_ID_RESERVE        1024u

/* Flight recorder: memory for the history, all CPUs together. */
#define FLIGHT_SIZE_MIN           (UINT64_C(1) << 20)
#define FLIGHT_SIZE_DEFAULT       (UINT64_C(64) << 20)
/* The persistent backend's instance without --boot-instance: the name the kernel's docs use. */
#define BOOT_INSTANCE_DEFAULT     "boot_map"
#define FLIGHT_MEM_PERCENT_MAX    25u    /* of MemAvailable */
/*
 * A record's or flight recorder's worker tells the session when it first
 * stores bytes and then every this many bytes stored (compressed) per CPU,
 * on which the symbols are kept fresh for the stop or a snapshot (a
 * continuous session's segment checks do the same; session-symbols.c); a
 * session whose events do not fire is not woken by its workers.
 */
#define PROGRESS_NOTIFY_BYTES     (UINT64_C(1) << 20)
/* Snapshots waiting for the workers' flush or the kernel drain, per session. */
#define SNAPSHOTS_PENDING_MAX     8u
/*
 * Clients waiting for a rotation of one continuous session (ftracectl rotate,
 * a live extract): one connection each, so at most CTL_CONN_MAX; more are
 * refused as busy.
 */
#define ROTATIONS_PENDING_MAX     CTL_CONN_MAX

/* Triggers: what one may ask for (how many per session: FTRACED_TRIGGERS_PER_REQUEST_MAX). */
#define TRIGGER_MIN_INTERVAL_MS_DEFAULT (UINT64_C(10) * 1000)
#define TRIGGER_POST_MS_MAX       (UINT64_C(10) * 60 * 1000)
/* pre= bounds what a snapshot keeps before its event; a history longer than a week is not. */
#define TRIGGER_PRE_MS_MAX        (UINT64_C(7) * 24 * 3600 * 1000)
#define TRIGGER_MAX_MAX           1000000u
/* The trigger's own instance: a small ring, read on every event. */
#define TRIGGER_BUFFER_KB         64u

/*
 * A running session looks at its instance this often (and at every status,
 * rotation and stop) for what another process did to it: a clear is only
 * noticed if a look saw the events before it.
 */
#define INTERFERENCE_CHECK_USEC   (UINT64_C(2) * 1000 * 1000)

/* An instance tracefs refused to remove (busy) is tried again this often. */
#define REAPER_RETRY_USEC         (UINT64_C(1000) * 1000)
/* How long `destroy` waits for its session's busy instance to go before it answers. */
#define DESTROY_WAIT_USEC         (UINT64_C(5) * 1000 * 1000)

/* --on-segment commands running at once, and how long each may take. */
#define RUNNER_MAX                16u
#define ON_SEGMENT_TIMEOUT_USEC   (UINT64_C(60) * 1000 * 1000)

/*
 * Shutdown under systemd: while files are still being written (bytes keep
 * moving), ask for this much more time, every STOP_EXTEND_INTERVAL_USEC.
 */
#define STOP_EXTEND_USEC          (UINT64_C(10) * 1000 * 1000)
#define STOP_EXTEND_INTERVAL_USEC (UINT64_C(2) * 1000 * 1000)

/*
 * How long a copy of /proc/kallsyms is reused while /proc/modules is
 * unchanged; each read that finds the text unchanged doubles that for the
 * next, up to KALLSYMS_CACHE_GROWTH_MAX times (8 minutes), and a change
 * brings it back. Each read costs ~50 ms of CPU: at a minute, that was most
 * of what a slow always-on session cost, and more than trace-cmd spends on a
 * long low-rate capture (bench/README.md). What can change without
 * /proc/modules changing (BPF programs, probes' and ftrace's trampolines)
 * shows up in stack traces only.
 */
#define KALLSYMS_CACHE_USEC       (UINT64_C(60) * 1000 * 1000)
#define KALLSYMS_CACHE_GROWTH_MAX 8u
/*
 * While a session captures, the copy is refreshed ahead this long before it
 * expires (half its lifetime at most): a read takes 50-200 ms, and each
 * one costs ~50 ms of CPU, so the later the fewer.
 */
#define KALLSYMS_REFRESH_LEAD_USEC (UINT64_C(10) * 1000 * 1000)
/* A prefetch still running (or one that could not start) is looked at again this soon. */
#define KALLSYMS_PREFETCH_RETRY_USEC (UINT64_C(1000) * 1000)
/*
 * The symbols are compressed once per read and reused by every file: a
 * higher level than the data's pays. 5.4 MB here: level 3 gives 1012 KB,
 * 6 gives 844 KB (measured), at about 60 ms once a minute at most.
 */
#define KALLSYMS_ZSTD_LEVEL       6
/*
 * The kernel's own symbols (all but the modules' and BPF's) do not change
 * while it runs: compressed once at a high level, their frame is reused by
 * every later copy. Level 19 in the 128 KiB window: 2.7 MB of text here
 * (the padding symbols left out) in 496 KB instead of 564 KB at level 6,
 * for about 2.5 s of CPU once (measured with zstd 1.5; 7 MB of memory).
 */
#define KALLSYMS_HEAD_ZSTD_LEVEL  19
/*
 * Streamed, the text's size is unknown to zstd, which then sizes level 6's
 * window and tables for any input: about 5.5 MB, the daemon's peak memory.
 * A 128 KiB window with tables to match takes under 1 MB and gives 852 KB
 * instead of 844 KB (measured).
 */
#define KALLSYMS_ZSTD_WINDOW_LOG  17u
/*
 * The cached symbols go in a file in the state directory only while its
 * file system has this much free: they must never take the room spools
 * need. With less, they are kept in memory (a memfd).
 */
#define KALLSYMS_STORE_FREE_MIN   (UINT64_C(64) << 20)

/*
 * STATE_DIR/recovered/: records whose output could not be written, rebuilt
 * from their spool. Its own budget, oldest deleted first (the manifest
 * lists what the daemon wrote there; nothing else is touched).
 */
#define RECOVERED_DIR             "recovered"
/* sd-event's default accuracy (0) lets a timer fire up to 250 ms late. */
#define TIMER_ACCURACY_USEC 1000
/* STATE_DIR/sessions/NAME/: a continuous or flight session's files. */
#define SESSIONS_DIR              "sessions"
#define RECOVERED_MAX_FILES       100u
#define RECOVERED_MAX_AGE_USEC    (UINT64_C(30) * 24 * 3600 * 1000 * 1000)
#define RECOVERED_KEEP_FREE_PERCENT 5u

/* Metadata files read from tracefs and /proc: refuse anything larger. */
#define METADATA_FILE_MAX         (64u * 1024u * 1024u)

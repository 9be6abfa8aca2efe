/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * A capture stream: one CPU's trace_pipe_raw into a spool or a flight
 * recorder's ring. The session makes and reads it (its config and
 * counters); the worker that holds it drives its data path (the
 * capture_stream_* calls below capture_scratch). The workers are
 * capture.h's.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"

struct chunk_ring;
struct capture_stream;
struct compressor;

/*
 * A record's output file, laid out like an in-place spool
 * (spool_mirror_prepare()): every chunk record stored in the spool is
 * written here too, at @base plus its offset in the spool, so that the
 * file needs no copy at the stop. Best effort: the spool stays the data's
 * safe copy, and the first write that fails sets *broken for every CPU.
 */
struct capture_mirror {
	int fd;         /* borrowed; -EBADF: none */
	uint64_t base;  /* where this CPU's region starts */
	uint64_t end;   /* and where the next one starts */
	_Atomic bool *broken; /* borrowed; NULL: no mirror, whatever fd says */
};

struct capture_stream_config {
	unsigned cpu;
	int trace_fd;     /* per_cpu/cpuN/trace_pipe_raw, O_NONBLOCK; the stream takes it */
	int stats_fd;     /* per_cpu/cpuN/stats; the stream takes it (-EBADF: none) */
	int spool_fd;     /* borrowed: chunks are appended here; with a ring, a copy of
			   * each chunk pushed (a drain that outlives the daemon); -EBADF */
	struct chunk_ring *ring; /* borrowed: flight recorder, chunks are pushed here */
	int notify_fd;    /* borrowed eventfd: incremented when the stream fails, is cut, is
			   * finished, and every notify_bytes stored */
	uint32_t subbuf_size;
	bool zstd;
	int level;
	uint64_t notify_bytes; /* 0: no progress notifications */
	_Atomic uint64_t *progress; /* borrowed: stored bytes are added here too; may be NULL */
	bool drain_only;  /* never polled, only finished: snapshot_raw has no poll */
	unsigned rt_priority; /* its worker runs SCHED_FIFO at least at this while it holds the
			       * stream; 0: no wish (within rt-priority-max, checked already) */
	uint64_t wake_bytes;  /* what the ring holds when the kernel wakes the reader
			       * (buffer_percent); 0: unknown */
	uint64_t spool_region_bytes; /* spools are regions of one file this large each (the
				      * stream stops short of the next one, and starts the
				      * writeback of what it wrote); 0: files of their own */
	struct capture_mirror mirror;
	/*
	 * Compressed into a spool: the pending batch lives in a hold (hold.h)
	 * in this directory, so that it outlives the daemon. Either -EBADF
	 * or 0: none (the batch lives in the heap).
	 */
	int hold_dir_fd;
	uint64_t spool_id; /* the spool's trace id, which the hold names */
};

/* Where the last rotation cut a stream: totals stored before the new spool took over. */
struct capture_cut {
	uint32_t generation; /* number of completed rotations */
	uint64_t bytes_stored;
	uint64_t chunks;
};

/* What a stream has done so far; safe to read from any thread. */
struct capture_counters {
	uint64_t bytes_raw;    /* sub-buffer bytes taken from the kernel */
	uint64_t bytes_stored; /* bytes appended to the spool or pushed to the ring */
	uint64_t chunks;       /* chunk records in the spool (zstd), or chunks pushed */
	uint64_t discarded;    /* events read from the kernel and never stored (after an error) */
	uint32_t clears;       /* times another process cleared this CPU's buffer */
	uint64_t cleared;      /* about the events those clears lost */
	int error;             /* first -errno that stopped the stream, or 0 */
	bool finished;
};

size_t capture_ring_chunk_target(uint64_t budget);
int capture_stream_new(const struct capture_stream_config *c, struct capture_stream **ret);
struct capture_stream *capture_stream_free(struct capture_stream *s);
DEFINE_CLEANUP(struct capture_stream *, capture_stream_free)
void capture_stream_counters(const struct capture_stream *s, struct capture_counters *ret);
void capture_stream_cut(const struct capture_stream *s, struct capture_cut *ret);


/* What a worker lends the streams it serves: buffers and a zstd context (not thread-safe). */
struct capture_scratch {
	struct compressor *zc;
	uint8_t *raw;   /* one sub-buffer of the largest size */
	size_t raw_cap;
	uint8_t *out;   /* one chunk record of the largest size */
	size_t out_cap;
};

int capture_scratch_init(struct capture_scratch *w);
void capture_scratch_done(struct capture_scratch *w);

int capture_stream_trace_fd(const struct capture_stream *s);
unsigned capture_stream_cpu(const struct capture_stream *s);
bool capture_stream_has_ring(const struct capture_stream *s);
bool capture_stream_dead(const struct capture_stream *s);
bool capture_stream_drain_only(const struct capture_stream *s);
unsigned capture_stream_rt_priority(const struct capture_stream *s);
int capture_stream_begin(struct capture_stream *s);
int capture_stream_drain(struct capture_stream *s, struct capture_scratch *w, uint64_t max_bytes);
int capture_stream_freshen(struct capture_stream *s, struct capture_scratch *w, uint64_t now,
			   uint64_t *deadline);
void capture_stream_rotate(struct capture_stream *s, struct capture_scratch *w, int spool_fd,
			   uint64_t spool_id);
void capture_stream_read_now(struct capture_stream *s, struct capture_scratch *w);
void capture_stream_finish(struct capture_stream *s, struct capture_scratch *w);
void capture_stream_fail(struct capture_stream *s, int error);

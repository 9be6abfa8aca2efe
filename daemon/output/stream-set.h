/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "daemon/capture/capture.h"
#include "daemon/kernel/instance.h"

struct chunk_ring;
struct segment;

/* One CPU of a session: its capture stream and the counters kept around it. */
struct cpu_stream {
	struct capture_stream *stream;  /* lent to the CPU's worker while capturing */
	struct capture_counters final;  /* the stream's totals when it was released */
	struct cpu_counters start;      /* kernel counters when capture started */
	struct cpu_counters cut;        /* kernel counters at the last cut, stop or snapshot */
	char *cut_text;                 /* the stats text read with them (CPUSTAT) */
	uint64_t base_bytes;            /* stream totals when the current segment began */
	uint64_t base_chunks;
	struct chunk_ring *ring;        /* flight recorder: the history (or a drain's) */
	uint64_t lost_base;             /* flight, kernel: overrun after the last drain */
	struct cpu_counters seen;       /* the last counters a check saw (a clear resets them) */
	uint32_t clears_seen;           /* the stream's clears already reported */
	uint64_t cleared_seen;
	uint64_t discarded;             /* at stop: events ftraced took or left and never stored */
};

/* How a session's streams capture: the same for every CPU. */
struct stream_params {
	int notify_fd;          /* borrowed: the session's eventfd */
	uint32_t subbuf_size;
	bool zstd;
	int level;
	uint64_t notify_bytes;  /* per CPU; 0: no progress notifications */
	_Atomic uint64_t *progress; /* the daemon's count of bytes written; may be NULL */
	bool snapshot_raw;      /* read the snapshot buffer, not the ring */
	unsigned rt_priority;   /* the workers' SCHED_FIFO priority while they hold it; 0: none */
	uint64_t wake_bytes;    /* what a CPU's ring holds when its reader wakes; 0: unknown */
	uint64_t spool_region_bytes; /* in-place spools: each CPU's region; 0: a file per CPU */
	const int *copy_fds;    /* with rings: per CPU, a file each chunk is also written to; NULL */
	int hold_dir_fd;        /* into spools: where pending batches outlive the daemon; -EBADF */
};

/* All CPUs of one session. */
struct stream_set {
	unsigned n_cpus;
	struct cpu_stream *cpus;
};

int stream_set_init(struct stream_set *set, unsigned n_cpus);
void stream_set_done(struct stream_set *set);
int stream_set_open(struct stream_set *set, struct instance *inst, const struct stream_params *p,
		    struct segment *seg, char *error, size_t n_error);
void stream_set_release(struct stream_set *set, bool all);
int stream_set_read_stats(struct stream_set *set, struct instance *inst, bool start, bool text);
bool stream_set_finished(const struct stream_set *set);
bool stream_set_cut_reached(const struct stream_set *set, uint32_t generation);
uint64_t stream_set_segment_bytes(const struct stream_set *set);
int stream_set_rings_new(struct stream_set *set, uint64_t budget_per_cpu);
void stream_set_rings_free(struct stream_set *set);

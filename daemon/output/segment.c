// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A segment is one v7 file in the making: the per-CPU spools its data goes
 * to while it is open, the kernel counters of each CPU at its start and its
 * end, and, once every CPU's stream is cut, the thread that assembles the
 * file from fresh metadata and the spools.
 *
 * An on-demand record is one segment written into the client's fd; a
 * continuous session is a chain of segments, the next one receiving data
 * while the previous one is assembled. Each file gets its own trace id.
 *
 * A segment whose file goes into the state directory can spool in place:
 * assembling it then collapses the holes between the CPUs' regions and
 * appends the metadata, and the spool file itself is renamed into place.
 * Where the file system cannot collapse, the file is copied from the
 * regions as from spool files.
 *
 * A record keeps a spool file per CPU (recovery needs its data where the
 * daemon can find it), and can have a mirror: the client's file, laid out
 * like an in-place spool, into which the streams write every record as
 * well. Assembling it then only collapses that file and appends the
 * metadata; a mirror some write failed is emptied and the file copied
 * from the spools, as without one.
 *
 * A flight recorder's snapshot is a segment whose data is in memory: the
 * chunks its rings held at the snapshot, by reference, no spool and no
 * recipe (a crash loses nothing that was on disk). Its file records, per
 * CPU, the time from which that CPU's data is complete, and with trim
 * starts every CPU at the latest of those times.
 *
 * Main thread, except the assembler, which between segment_assemble() and
 * a true segment_assembled() owns the spools (read), the output fd and the
 * segment's global metadata, and touches nothing else.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "daemon/base/bounds.h"
#include "daemon/base/proc-maps.h"
#include "daemon/capture/capture.h"
#include "daemon/capture/chunk-ring.h"
#include "daemon/kernel/instance.h"
#include "daemon/base/log.h"
#include "daemon/store/metadata.h"
#include "daemon/recovery/recovery-recipe.h"
#include "daemon/recovery/recovery.h"
#include "daemon/output/segment.h"
#include "daemon/output/snapshot-trim.h"
#include "daemon/store/spool.h"
#include "lib/compress.h"
#include "lib/time-util.h"
#include "lib/v7-writer.h"

struct segment_cpu {
	struct cpu_counters start;
	struct cpu_counters end;
	uint64_t bytes;  /* spooled bytes of this segment */
	uint64_t chunks;
	char *cpustat;   /* "CPU: N\n" + per_cpu/cpuN/stats at the end */
	char *start_stat; /* the same when the segment began */
	/* snapshots */
	struct chunk_list held;
	bool older_lost;  /* data before the first chunk was dropped (ring or kernel) */
	char *flight_stat;
	struct v7_blob *blobs;
};

struct segment {
	struct segment_env env;
	uint32_t seq;
	char *target;
	uint64_t trace_id;
	struct spool spool;
	struct segment_cpu *cpus;

	bool memory; /* a snapshot: data in chunks, no spool */
	char *gap_note; /* a snapshot's: a restart's gap in its history */
	char *origin;   /* why the file was taken (segment_set_origin()), or NULL */
	const char *file_name; /* in place: the finished file, in the spool directory */
	struct snapshot_window window; /* a snapshot's */
	bool keep_spool;
	int out_fd;
	pthread_t assembler;
	bool assembler_started;
	_Atomic bool assembler_done;
	int result;
	uint64_t file_bytes;
	uint64_t collapse_usec; /* in place: how long the holes took to go */
	int mirror_fd;          /* record: the client's file, as the streams write it; or -EBADF */
	uint64_t mirror_region;
	_Atomic bool mirror_broken; /* a stream failed to write it: copy from the spools */
};

/**
 * segment_new() - open a segment: a fresh trace id, empty spools and a recipe.
 * @env: the session's shared parts
 * @seq: the segment's number within its session
 * @target: where its file goes, relative to the state directory (for recovery)
 * @gap: a time the session did not capture before this file; NULL: none
 * @ret: the segment
 *
 * Return: 0 or -errno; nothing is left behind on failure.
 */
static struct segment *segment_alloc(const struct segment_env *env, uint32_t seq,
				      const char *target)
{
	struct segment *s;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->env = *env;
	s->seq = seq;
	s->out_fd = -EBADF;
	s->mirror_fd = -EBADF;
	s->trace_id = spool_new_id();
	s->spool.dir_fd = -EBADF;
	s->cpus = calloc(env->n_cpus, sizeof(*s->cpus));
	s->target = strdup(target);
	if (!s->cpus || !s->target)
		return segment_free(s);
	return s;
}

int segment_new(const struct segment_env *env, uint32_t seq, const char *target, const char *gap,
		struct segment **ret)
{
	struct segment *s;
	int r;

	s = segment_alloc(env, seq, target);
	if (!s)
		return -ENOMEM;
	r = -EOPNOTSUPP;
	if (env->in_place && env->zstd) {
		r = spool_create_in_place(&s->spool, env->state_dir_fd, s->trace_id, env->n_cpus);
		if (r < 0)
			log_debug_errno(r, "Cannot spool in place, using a spool file per CPU: %m");
	}
	if (r < 0)
		r = spool_create(&s->spool, env->state_dir_fd, s->trace_id, env->n_cpus);
	if (r < 0) {
		segment_free(s);
		return r;
	}
	r = recipe_write(s->spool.dir_fd, &(struct recipe){
		.target = target,
		.date = env->date,
		.gap = gap,
		.instance = env->instance_name,
		.zstd = env->zstd,
		.level = env->level,
		.n_cpus = env->n_cpus,
		.events = env->events,
		.imeta = env->imeta,
	});
	if (r < 0) {
		segment_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

/**
 * segment_new_snapshot() - a segment whose data will be chunks held in memory.
 * @env: the session's shared parts
 * @seq: the snapshot's number within its session
 * @target: where its file goes (for messages)
 * @window: what part of the history it keeps
 * @ret: the segment; give each CPU its chunks with segment_set_chunks()
 *
 * Return: 0 or -ENOMEM.
 */
int segment_new_snapshot(const struct segment_env *env, uint32_t seq, const char *target,
			 const struct snapshot_window *window, struct segment **ret)
{
	struct segment *s = segment_alloc(env, seq, target);

	if (!s)
		return -ENOMEM;
	s->memory = true;
	s->window = *window;
	*ret = s;
	return 0;
}

/**
 * segment_set_chunks() - a snapshot's data for one CPU.
 * @s: a snapshot segment
 * @cpu: CPU number
 * @l: the chunks, taken over (@l is emptied)
 * @older_data_lost: whether data before the first chunk was dropped, so
 *	the CPU is complete only from the first chunk on
 */
void segment_set_chunks(struct segment *s, unsigned cpu, struct chunk_list *l,
			bool older_data_lost)
{
	struct segment_cpu *c = &s->cpus[cpu];

	chunk_list_done(&c->held);
	c->held = *l;
	*l = (struct chunk_list){};
	c->older_lost = older_data_lost;
}

/**
 * segment_set_gap() - what a snapshot's CPU statistics say of a gap its chunks span.
 * @s: a snapshot segment
 * @note: the session's gap note (a restart of the daemon), copied
 *
 * Return: 0 or -ENOMEM.
 */
int segment_set_gap(struct segment *s, const char *note)
{
	free(s->gap_note);
	s->gap_note = strdup(note);
	return s->gap_note ? 0 : -ENOMEM;
}

/**
 * segment_set_origin() - what the file says of where it came from and why.
 * @s: segment
 * @text: "ftraced-origin: ...\n" lines (and for a snapshot "ftraced-cause: ...\n"),
 *	copied; a CPU statistics text of its own, so that `trace-cmd report --stat`
 *	shows it and `ftracectl info` finds it
 *
 * Return: 0 or -ENOMEM.
 */
int segment_set_origin(struct segment *s, const char *text)
{
	free(s->origin);
	s->origin = strdup(text);
	return s->origin ? 0 : -ENOMEM;
}

const char *segment_target(const struct segment *s)
{
	return s->target;
}

/**
 * segment_free() - remove the spools and free; waits for a running assembler.
 * @s: segment or NULL
 *
 * Return: NULL.
 */
struct segment *segment_free(struct segment *s)
{
	if (!s)
		return NULL;
	if (s->assembler_started)
		pthread_join(s->assembler, NULL);
	if (s->keep_spool)
		spool_close(&s->spool);
	else
		spool_remove(&s->spool);
	for (unsigned cpu = 0; s->cpus && cpu < s->env.n_cpus; cpu++) {
		free(s->cpus[cpu].cpustat);
		free(s->cpus[cpu].start_stat);
		free(s->cpus[cpu].flight_stat);
		free(s->cpus[cpu].blobs);
		chunk_list_done(&s->cpus[cpu].held);
	}
	free(s->cpus);
	free(s->gap_note);
	free(s->origin);
	free(s->target);
	safe_close(s->out_fd);
	safe_close(s->mirror_fd);
	free(s);
	return NULL;
}

uint64_t segment_trace_id(const struct segment *s)
{
	return s->trace_id;
}

uint32_t segment_seq(const struct segment *s)
{
	return s->seq;
}

int segment_spool_fd(const struct segment *s, unsigned cpu)
{
	return s->spool.fds[cpu];
}

/**
 * segment_mirror_into() - the streams also write the file as they go, into @fd.
 * @s: a record's segment, spooled per CPU, before its streams open (a
 *	record has one segment: its streams never rotate to another spool)
 * @fd: the client's output (borrowed; the segment keeps a duplicate)
 *
 * Return: 0, or -errno when @fd cannot take it (not an empty regular file
 * on a file system that can collapse ranges and hold the size): the file
 * is then written at the stop, from the spools.
 */
int segment_mirror_into(struct segment *s, int fd)
{
	int r;

	if (s->memory || s->spool.region_bytes || !s->env.zstd)
		return -EINVAL;
	r = spool_mirror_prepare(fd, s->env.n_cpus, &s->mirror_region);
	if (r < 0)
		return r;
	s->mirror_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (s->mirror_fd < 0) {
		r = negative_errno();
		(void)!ftruncate(fd, 0);
		return r;
	}
	return 0;
}

/**
 * segment_mirror() - where a CPU's stream writes the mirror.
 * @s: segment
 * @cpu: CPU number
 * @ret: receives it; ret->fd is -EBADF without a mirror
 */
void segment_mirror(struct segment *s, unsigned cpu, struct capture_mirror *ret)
{
	uint64_t base = spool_region_start(s->mirror_region, cpu);

	*ret = (struct capture_mirror){ .fd = -EBADF };
	if (s->mirror_fd < 0)
		return;
	*ret = (struct capture_mirror){
		.fd = s->mirror_fd,
		.base = base,
		.end = spool_region_end(s->mirror_region, base),
		.broken = &s->mirror_broken,
	};
}

/**
 * segment_set_start() - a CPU's kernel counters when the segment began.
 * @s: segment
 * @cpu: CPU number
 * @c: the counters
 * @text: the stats text, copied for a CPUSTAT option (may be NULL)
 */
void segment_set_start(struct segment *s, unsigned cpu, const struct cpu_counters *c,
		       const char *text)
{
	struct segment_cpu *sc = &s->cpus[cpu];

	sc->start = *c;
	free(sc->start_stat);
	sc->start_stat = NULL;
	/* Labelled, and after the end values: readers take the first "CPU: N" as the end. */
	if (text && asprintf(&sc->start_stat, "CPU: %u (when this file began)\n%s", cpu, text) < 0)
		sc->start_stat = NULL;
}

const struct cpu_counters *segment_start_counters(const struct segment *s, unsigned cpu)
{
	return &s->cpus[cpu].start;
}

/**
 * segment_close_cpu() - record what one CPU's stream put into this segment.
 * @s: segment
 * @cpu: CPU number
 * @bytes: spooled bytes (chunk records, or raw sub-buffers)
 * @chunks: number of chunk records
 * @end: kernel counters at the cut
 * @cpustat: the stats text for the CPUSTAT option, taken over (may be NULL)
 */
void segment_close_cpu(struct segment *s, unsigned cpu, uint64_t bytes, uint64_t chunks,
		       const struct cpu_counters *end, char *cpustat)
{
	struct segment_cpu *c = &s->cpus[cpu];
	char *t = NULL;

	c->bytes = bytes;
	c->chunks = chunks;
	c->end = *end;
	free(c->cpustat);
	c->cpustat = NULL;
	if (cpustat && asprintf(&t, "CPU: %u\n%s", cpu, cpustat) >= 0)
		c->cpustat = t;
	free(cpustat);
}

/*
 * A snapshot's data as blobs, after trimming if asked, and the CPUSTAT
 * text saying from when each CPU is complete.
 */
static int prepare_snapshot(struct segment *s, uint32_t page_size)
{
	_cleanup_(compressor_freep) struct compressor *zc = NULL;
	uint64_t start = 0;
	int r;

	if (s->window.trim)
		for (unsigned cpu = 0; cpu < s->env.n_cpus; cpu++)
			start = MAX(start, snapshot_complete_from(&s->cpus[cpu].held,
								  s->cpus[cpu].older_lost));
	start = MAX(start, s->window.since_ts);
	if (start > 0) {
		struct trim_format fmt = { .page_size = page_size, .zstd = s->env.zstd,
					   .level = s->env.level };

		r = compressor_new(&zc);
		if (r >= 0)
			r = compressor_for_chunks(zc); /* chunks as the capture makes them */
		if (r < 0)
			return r;
		fmt.zc = zc;
		for (unsigned cpu = 0; cpu < s->env.n_cpus; cpu++) {
			r = snapshot_trim(&s->cpus[cpu].held, start, &fmt);
			if (r < 0)
				return r;
		}
	}
	for (unsigned cpu = 0; cpu < s->env.n_cpus; cpu++) {
		struct segment_cpu *c = &s->cpus[cpu];
		uint64_t from = MAX(start, snapshot_complete_from(&c->held, c->older_lost));
		/* A restart's gap still inside what is kept: complete only after it. */
		bool gap = c->held.gap_from_ts && c->held.n > 0 &&
			   c->held.chunks[0]->first_ts <= c->held.gap_from_ts;
		char *gap_line = NULL;
		int k;

		if (gap) {
			from = MAX(from, c->held.gap_to_ts ? c->held.gap_to_ts : c->held.gap_from_ts);
			if (asprintf(&gap_line, "ftraced-gap: %s (the history before %" PRIu64 " was "
				     "kept by the daemon's run before)\n", s->gap_note ?: "the daemon "
				     "restarted", c->held.gap_from_ts) < 0)
				return -ENOMEM;
		}

		c->blobs = calloc(MAX(c->held.n, (size_t)1), sizeof(*c->blobs));
		if (!c->blobs)
			return -ENOMEM;
		for (size_t i = 0; i < c->held.n; i++)
			c->blobs[i] = (struct v7_blob){ .data = c->held.chunks[i]->data,
							.size = c->held.chunks[i]->size };
		c->bytes = c->held.bytes;
		c->chunks = c->held.n;
		/* Text, so `trace-cmd report --stat` shows it too; ftracectl info parses it. */
		if (from > 0)
			k = asprintf(&c->flight_stat, "CPU: %u (flight recorder)\n"
				     "complete from: %" PRIu64 "\nolder data dropped: %s\n%s", cpu, from,
				     c->older_lost ? "yes" : "no", gap_line ?: "");
		else
			k = asprintf(&c->flight_stat, "CPU: %u (flight recorder)\n"
				     "complete from: capture start\nolder data dropped: no\n", cpu);
		free(gap_line);
		if (k < 0) {
			c->flight_stat = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

_Static_assert(SPOOL_IN_PLACE_FIRST >= V7_IN_PLACE_DATA_MIN,
	       "the file header goes before CPU 0's region");

/*
 * Collapses the regions of @fd (see spool_collapse_regions()), timed for
 * the debug log; every CPU's data offset is then where its records are,
 * collapsed or not.
 */
static int collapse_regions(struct segment *s, int fd, uint64_t region_bytes,
			    struct v7_cpu_data *data, uint64_t *ret_end)
{
	_cleanup_free_ uint64_t *bytes = NULL, *offsets = NULL;
	unsigned n_cpus = s->env.n_cpus;
	int r;

	bytes = calloc(n_cpus, sizeof(*bytes));
	offsets = calloc(n_cpus, sizeof(*offsets));
	if (!bytes || !offsets)
		return -ENOMEM;
	for (unsigned cpu = 0; cpu < n_cpus; cpu++)
		bytes[cpu] = s->cpus[cpu].bytes;
	s->collapse_usec = monotonic_usec();
	r = spool_collapse_regions(fd, region_bytes, n_cpus, bytes, offsets, ret_end);
	s->collapse_usec = monotonic_usec() - s->collapse_usec;
	for (unsigned cpu = 0; cpu < n_cpus; cpu++)
		data[cpu].offset = offsets[cpu];
	return r;
}

/*
 * An in-place spool becomes the file: the holes go, the metadata is
 * appended. Where the file system cannot collapse, the regions are
 * copied into a file of their own in the spool directory instead.
 */
static int finish_in_place(struct segment *s, struct v7_file *f, struct v7_cpu_data *data)
{
	uint64_t end;
	int r;

	r = collapse_regions(s, s->spool.fds[0], s->spool.region_bytes, data, &end);
	if (r == -ENOMEM)
		return r;
	if (r >= 0) {
		s->file_name = SPOOL_IN_PLACE_NAME;
		f->in_place_end = end;
	} else {
		log_debug_errno(r, "Cannot collapse the spool in place, copying it: %m");
		s->file_name = SPOOL_COPY_NAME;
	}
	s->out_fd = openat(s->spool.dir_fd, s->file_name,
			   O_RDWR | O_CLOEXEC | O_NOFOLLOW | (r < 0 ? O_CREAT | O_TRUNC : 0), 0640);
	if (s->out_fd < 0)
		return negative_errno();
	/* Readers get what a copied file would have: 0640, not the spool's 0600. */
	if (fchmod(s->out_fd, 0640) < 0)
		return negative_errno();
	return v7_write(s->out_fd, f, &s->file_bytes);
}

/*
 * A record with a mirror: its streams wrote the records into the output
 * where an in-place spool would have them. The holes go and the metadata
 * is appended; when a write of the mirror failed, or the collapse does,
 * the file is emptied and written from the spools after all.
 */
static int finish_mirror(struct segment *s, struct v7_file *f, struct v7_cpu_data *data)
{
	uint64_t end;
	int r = -EIO;

	if (!atomic_load_explicit(&s->mirror_broken, memory_order_relaxed)) {
		r = collapse_regions(s, s->out_fd, s->mirror_region, data, &end);
		if (r >= 0) {
			f->in_place_end = end;
			return v7_write(s->out_fd, f, &s->file_bytes);
		}
		log_warning_errno(r, "Cannot collapse the output file, writing it from the spools: "
				  "%m");
	}
	for (unsigned cpu = 0; cpu < s->env.n_cpus; cpu++)
		data[cpu].offset = SPOOL_HDR_SIZE;
	if (ftruncate(s->out_fd, 0) < 0 || lseek(s->out_fd, 0, SEEK_SET) < 0)
		return negative_errno();
	return v7_write(s->out_fd, f, &s->file_bytes);
}

/**
 * segment_overhead() - what a file of this session costs besides its events.
 * @env: the session's segment environment (its instance configured)
 * @cpustat: one CPU's statistics text, as the files' CPUSTAT options carry it
 * @ret_size: receives the bytes
 *
 * The metadata is read and laid out as for a real file (formats, symbols,
 * comms; zstd sections compressed), its size taken without writing it; each
 * CPU adds its CPUSTAT texts, its count and up to a sub-buffer of alignment.
 * Symbols make most of it: megabytes uncompressed. Main thread; it reads
 * tracefs and /proc/kallsyms, so only when a session is created.
 *
 * Return: 0 or -errno.
 */
int segment_overhead(const struct segment_env *env, const char *cpustat, uint64_t *ret_size)
{
	struct global_meta gm = {};
	struct v7_file f = {};
	uint64_t size = 0, text = 0;
	char head[32];
	int r;

	r = global_meta_read(&gm, env->events, env->kallsyms, env->zstd, /* no_events= */ true);
	if (r >= 0) {
		metadata_to_v7(env->imeta, &gm, &f);
		f.compression = env->zstd ? V7_COMPRESSION_ZSTD : V7_COMPRESSION_NONE;
		f.level = env->level;
		f.version = "ftraced " FTRACED_VERSION;
		f.n_cpus = env->n_cpus;
		f.date = env->date && env->date[0] ? env->date : NULL;
		r = v7_size(&f, &size);
	}
	global_meta_done(&gm);
	if (r < 0)
		return r;
	/* Three CPUSTAT options a CPU (end, start, flight): option header, "CPU: N\n", text, NUL. */
	snprintf(head, sizeof(head), "CPU: %u\n", env->n_cpus);
	text = 3 * (6 + strlen(head) + strlen(cpustat ?: "") + 1);
	*ret_size = size + env->n_cpus * (text + 4 + (uint64_t)env->imeta->subbuf_size);
	return 0;
}

/* What the segment holds, all CPUs together: 0 when no event was captured. */
static uint64_t segment_bytes(const struct segment *s)
{
	uint64_t bytes = 0;

	for (unsigned cpu = 0; cpu < s->env.n_cpus; cpu++)
		bytes += s->cpus[cpu].bytes;
	return bytes;
}

static void *assembler_main(void *userdata)
{
	struct segment *s = userdata;
	unsigned n_cpus = s->env.n_cpus;
	struct global_meta gm = {};
	struct v7_cpu_data *data;
	const char **cpustat;
	uint64_t one = 1, t_start = monotonic_usec(), t_meta = 0, t_written = 0;
	struct v7_file f = {};
	struct stat st;
	int r;

	data = calloc(n_cpus, sizeof(*data));
	cpustat = calloc(3 * (size_t)n_cpus + 1, sizeof(*cpustat));
	r = data && cpustat ? 0 : -ENOMEM;
	if (r >= 0 && s->memory)
		r = prepare_snapshot(s, s->env.imeta->subbuf_size);
	if (r >= 0)
		r = global_meta_read(&gm, s->env.events, s->env.kallsyms, s->env.zstd,
				     segment_bytes(s) == 0);
	t_meta = monotonic_usec();
	if (r >= 0) {
		metadata_to_v7(s->env.imeta, &gm, &f);
		f.compression = s->env.zstd ? V7_COMPRESSION_ZSTD : V7_COMPRESSION_NONE;
		f.metadata_zstd = true; /* raw data, compressed symbols: trace-cmd reads both */
		f.level = s->env.level;
		f.progress = s->env.written;
		f.version = "ftraced " FTRACED_VERSION;
		f.trace_id = s->trace_id;
		f.n_cpus = n_cpus;
		for (unsigned cpu = 0; cpu < n_cpus; cpu++) {
			struct segment_cpu *c = &s->cpus[cpu];

			cpustat[cpu] = c->cpustat;
			cpustat[n_cpus + cpu] = c->start_stat;
			cpustat[2 * n_cpus + cpu] = c->flight_stat;
			data[cpu] = (struct v7_cpu_data){
				.cpu = cpu,
				.fd = s->memory ? -EBADF : s->spool.fds[cpu],
				.offset = SPOOL_HDR_SIZE, /* in place: set by finish_in_place() */
				.size = c->bytes,
				.n_chunks = (uint32_t)c->chunks,
				.blobs = c->blobs,
				.n_blobs = s->memory ? c->held.n : 0,
			};
		}
		cpustat[3 * (size_t)n_cpus] = s->origin;
		f.n_cpustat = 3 * (size_t)n_cpus + 1;
		f.cpustat = cpustat;
		f.n_data = n_cpus;
		f.data = data;
		f.date = s->env.date && s->env.date[0] ? s->env.date : NULL;
		if (s->env.procmaps) {
			f.n_procmaps = s->env.procmaps->n;
			f.procmaps = (const char *const *)s->env.procmaps->texts;
		}
		if (s->spool.region_bytes)
			r = finish_in_place(s, &f, data);
		else if (s->mirror_fd >= 0)
			r = finish_mirror(s, &f, data);
		else
			r = v7_write(s->out_fd, &f, &s->file_bytes);
	}
	t_written = monotonic_usec();
	/* An fsync error is final: the pages may be gone, so the file is never called complete. */
	if (r >= 0 && fstat(s->out_fd, &st) >= 0 && S_ISREG(st.st_mode) && fsync(s->out_fd) < 0)
		r = negative_errno();
	/* Where a stop's or a snapshot's time goes, for whoever tunes it (-l debug). */
	log_debug("File of %" PRIu64 " bytes: metadata %" PRIu64 " us, written %" PRIu64
		  " us (of which collapsing %" PRIu64 " us), fsynced %" PRIu64 " us", s->file_bytes,
		  t_meta - t_start, t_written - t_meta, s->collapse_usec,
		  monotonic_usec() - t_written);
	global_meta_done(&gm);
	free(data);
	free(cpustat);
	/* The chunks may be all that keeps evicted history in memory: let it go now. */
	for (unsigned cpu = 0; s->memory && cpu < n_cpus; cpu++)
		chunk_list_done(&s->cpus[cpu].held);
	s->result = r;
	atomic_store_explicit(&s->assembler_done, true, memory_order_release);
	(void)!write(s->env.notify_fd, &one, sizeof(one));
	return NULL;
}

/**
 * segment_assemble() - write the file into @out_fd, in a thread of its own.
 * @s: a segment whose every CPU was closed with segment_close_cpu()
 * @out_fd: the output, taken over; written sequentially and fsynced (-EBADF for an
 *          in-place segment, whose file is finished in its spool directory)
 *
 * Completion is signalled on env.notify_fd; poll segment_assembled().
 *
 * Return: 0, or -errno if the thread could not start (@out_fd is closed).
 */
int segment_assemble(struct segment *s, int out_fd)
{
	int r;

	s->out_fd = out_fd;
	r = -pthread_create(&s->assembler, NULL, assembler_main, s);
	if (r < 0)
		return r;
	s->assembler_started = true;
	return 0;
}

/**
 * segment_in_place() - does the segment's file come out of its spool directory?
 * @s: segment
 *
 * Return: true when segment_assemble() needs no output fd, and the file is
 * put in place with segment_rename_file().
 */
bool segment_in_place(const struct segment *s)
{
	return s->spool.region_bytes > 0;
}

/**
 * segment_rename_file() - move an in-place segment's finished file to its name.
 * @s: an in-place segment, assembled
 * @dir_fd: the directory it goes to (on the state directory's file system)
 * @name: its name there
 *
 * Return: 0 or -errno.
 */
int segment_rename_file(struct segment *s, int dir_fd, const char *name)
{
	if (!s->file_name)
		return -ENOENT;
	return renameat(s->spool.dir_fd, s->file_name, dir_fd, name) < 0 ? negative_errno() : 0;
}

/**
 * segment_assembled() - is the file written? Joins the assembler when it is.
 * @s: segment
 * @ret_result: 0 or the -errno that failed the file
 * @ret_file_bytes: the file's size
 *
 * Return: true once the assembler finished.
 */
bool segment_assembled(struct segment *s, int *ret_result, uint64_t *ret_file_bytes)
{
	if (!s->assembler_started ||
	    !atomic_load_explicit(&s->assembler_done, memory_order_acquire))
		return false;
	pthread_join(s->assembler, NULL);
	s->assembler_started = false;
	s->out_fd = safe_close(s->out_fd);
	*ret_result = s->result;
	*ret_file_bytes = s->file_bytes;
	return true;
}

/**
 * segment_complete() - the file is in place: the spool no longer needs recovering.
 * @s: segment
 */
void segment_complete(struct segment *s)
{
	if (s->spool.dir_fd >= 0)
		recovery_forget(s->spool.dir_fd);
}

/**
 * segment_keep_spool() - keep the spool files when the segment is freed.
 * @s: segment whose file could not be written: its data stays recoverable
 */
void segment_keep_spool(struct segment *s)
{
	s->keep_spool = true;
}

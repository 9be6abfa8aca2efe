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
 * Main thread, except the assembler, which between segment_assemble() and
 * a true segment_assembled() owns the spools (read), the output fd and the
 * segment's global metadata, and touches nothing else.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "daemon/bounds.h"
#include "daemon/instance.h"
#include "daemon/log.h"
#include "daemon/metadata.h"
#include "daemon/recovery.h"
#include "daemon/segment.h"
#include "daemon/spool.h"
#include "daemon/v7-writer.h"

struct segment_cpu {
	struct cpu_counters start;
	struct cpu_counters end;
	uint64_t bytes;  /* spooled bytes of this segment */
	uint64_t chunks;
	char *cpustat;   /* "CPU: N\n" + per_cpu/cpuN/stats at the end */
	char *start_stat; /* the same when the segment began */
};

struct segment {
	struct segment_env env;
	uint32_t seq;
	char *target;
	uint64_t trace_id;
	struct spool spool;
	struct segment_cpu *cpus;

	bool keep_spool;
	int out_fd;
	pthread_t assembler;
	bool assembler_started;
	_Atomic bool assembler_done;
	int result;
	uint64_t file_bytes;
};

static uint64_t random_id(void)
{
	uint64_t id;
	struct timespec ts;

	if (getrandom(&id, sizeof(id), 0) == sizeof(id))
		return id;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)getpid() << 40) ^ (uint64_t)ts.tv_sec << 20 ^ (uint64_t)ts.tv_nsec;
}

/**
 * segment_new() - open a segment: a fresh trace id, empty spools and a recipe.
 * @env: the session's shared parts
 * @seq: the segment's number within its session
 * @target: where its file goes, relative to the state directory (for recovery)
 * @ret: the segment
 *
 * Return: 0 or -errno; nothing is left behind on failure.
 */
int segment_new(const struct segment_env *env, uint32_t seq, const char *target,
		struct segment **ret)
{
	struct segment *s;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->env = *env;
	s->seq = seq;
	s->out_fd = -EBADF;
	s->trace_id = random_id();
	s->spool.dir_fd = -EBADF;
	s->cpus = calloc(env->n_cpus, sizeof(*s->cpus));
	if (!s->cpus) {
		free(s);
		return -ENOMEM;
	}
	s->target = strdup(target);
	if (!s->target) {
		free(s->cpus);
		free(s);
		return -ENOMEM;
	}
	r = spool_create(&s->spool, env->state_dir_fd, s->trace_id, env->n_cpus);
	if (r < 0) {
		free(s->target);
		free(s->cpus);
		free(s);
		return r;
	}
	r = recovery_write_recipe(s->spool.dir_fd, &(struct recipe){
		.target = target,
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
	}
	free(s->cpus);
	free(s->target);
	safe_close(s->out_fd);
	free(s);
	return NULL;
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

static void *assembler_main(void *userdata)
{
	struct segment *s = userdata;
	unsigned n_cpus = s->env.n_cpus;
	struct global_meta gm = {};
	struct v7_cpu_data *data;
	const char **cpustat;
	struct v7_file f = {};
	uint64_t one = 1;
	struct stat st;
	int r;

	data = calloc(n_cpus, sizeof(*data));
	cpustat = calloc(2 * (size_t)n_cpus, sizeof(*cpustat));
	r = data && cpustat ? global_meta_read(&gm, s->env.events) : -ENOMEM;
	if (r >= 0) {
		metadata_to_v7(s->env.imeta, &gm, &f);
		f.compression = s->env.zstd ? V7_COMPRESSION_ZSTD : V7_COMPRESSION_NONE;
		f.level = s->env.level;
		f.version = "ftraced " FTRACED_VERSION;
		f.trace_id = s->trace_id;
		f.n_cpus = n_cpus;
		for (unsigned cpu = 0; cpu < n_cpus; cpu++) {
			cpustat[cpu] = s->cpus[cpu].cpustat;
			cpustat[n_cpus + cpu] = s->cpus[cpu].start_stat;
			data[cpu] = (struct v7_cpu_data){
				.cpu = cpu,
				.fd = s->spool.fds[cpu],
				.offset = SPOOL_HDR_SIZE,
				.size = s->cpus[cpu].bytes,
				.n_chunks = (uint32_t)s->cpus[cpu].chunks,
			};
		}
		f.n_cpustat = 2 * (size_t)n_cpus;
		f.cpustat = cpustat;
		f.n_data = n_cpus;
		f.data = data;
		r = v7_write(s->out_fd, &f, &s->file_bytes);
	}
	/* An fsync error is final: the pages may be gone, so the file is never called complete. */
	if (r >= 0 && fstat(s->out_fd, &st) >= 0 && S_ISREG(st.st_mode) && fsync(s->out_fd) < 0)
		r = negative_errno();
	global_meta_done(&gm);
	free(data);
	free(cpustat);
	s->result = r;
	atomic_store_explicit(&s->assembler_done, true, memory_order_release);
	(void)!write(s->env.notify_fd, &one, sizeof(one));
	return NULL;
}

/**
 * segment_assemble() - write the file into @out_fd, in a thread of its own.
 * @s: a segment whose every CPU was closed with segment_close_cpu()
 * @out_fd: the output, taken over; written sequentially and fsynced
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

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Crash recovery: rebuilding readable v7 files from the spools of captures
 * that never completed (the daemon was killed, or a file could not be
 * written). When a segment opens, its spool directory gets a recipe: the
 * target file, compression, CPU count, events, instance name, and the
 * instance's header_page, header_event and trace_clock, verbatim. After a
 * crash that and the spools are enough: whatever the orphaned instance still
 * holds in its ring buffers is drained into the spools first, each spool is
 * read up to its last intact chunk (sizes checked, every zstd frame
 * decompressed against its checksum; whole pages with "none"), and the file
 * is written next to where it would have gone, as "...-recovered.dat",
 * with formats, symbols and comms read at recovery time.
 *
 * Used by the daemon at start-up, before orphaned instances are removed,
 * and by `ftracectl recover`, with the state directory locked either way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracefs.h>

#include "config.h"
#include "daemon/bounds.h"
#include "daemon/compress.h"
#include "daemon/event-list.h"
#include "daemon/instance.h"
#include "daemon/io-util.h"
#include "daemon/log.h"
#include "daemon/metadata.h"
#include "daemon/rb-page.h"
#include "daemon/recovery.h"
#include "daemon/v7-writer.h"

#define RECIPE "recipe"
#define RECIPE_MAX (64u * 1024u)
#define SPOOL_DIR "spool"
#define CHUNK_HDR_SIZE 8u
#define CHUNK_RAW_MAX (64u << 20)

static int write_file_at(int dir_fd, const char *name, const char *data, size_t n)
{
	int fd, r;

	fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return negative_errno();
	r = loop_write(fd, data, n);
	close(fd);
	return r;
}

/**
 * recovery_write_recipe() - store what recovering this spool would need.
 * @spool_dir_fd: the segment's spool directory
 * @r: the recipe
 *
 * Return: 0 or -errno.
 */
int recovery_write_recipe(int spool_dir_fd, const struct recipe *r)
{
	_cleanup_free_ char *text = NULL;
	size_t n = 0;
	FILE *f;
	int err;

	f = open_memstream(&text, &n);
	if (!f)
		return -ENOMEM;
	fprintf(f, "target=%s\ninstance=%s\ncompression=%s\nlevel=%d\ncpus=%u\n", r->target,
		r->instance, r->zstd ? "zstd" : "none", r->level, r->n_cpus);
	for (size_t i = 0; i < r->events->n; i++)
		fprintf(f, "event=%s:%s\n", r->events->events[i].system, r->events->events[i].event);
	if (fclose(f) != 0)
		return -ENOMEM;
	err = write_file_at(spool_dir_fd, "header_page", r->imeta->header_page,
			    r->imeta->n_header_page);
	if (err >= 0)
		err = write_file_at(spool_dir_fd, "header_event", r->imeta->header_event,
				    r->imeta->n_header_event);
	if (err >= 0)
		err = write_file_at(spool_dir_fd, "trace_clock", r->imeta->trace_clock,
				    strlen(r->imeta->trace_clock));
	/* The recipe last: a spool without one is not worth recovering. */
	if (err >= 0)
		err = write_file_at(spool_dir_fd, RECIPE, text, n);
	return err;
}

static int read_file_at(int dir_fd, const char *name, size_t max, char **ret, size_t *ret_n)
{
	struct stat st;
	char *buf;
	int fd, r;

	fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	r = loop_pread_exact(fd, buf, (size_t)st.st_size, 0);
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[st.st_size] = '\0';
	*ret = buf;
	if (ret_n)
		*ret_n = (size_t)st.st_size;
	return 0;
}

struct parsed_recipe {
	char target[PATH_MAX];
	char instance[64];
	bool zstd;
	int level;
	unsigned n_cpus;
	struct event_list events;
	struct instance_meta imeta;
};

static int parse_recipe(int dir_fd, struct parsed_recipe *p)
{
	_cleanup_free_ char *text = NULL;
	char *save = NULL;
	int r;

	r = read_file_at(dir_fd, RECIPE, RECIPE_MAX, &text, NULL);
	if (r < 0)
		return r;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *v = strchr(line, '=');

		if (!v)
			return -EBADMSG;
		*v++ = '\0';
		if (strcmp(line, "target") == 0 && strlen(v) < sizeof(p->target))
			strcpy(p->target, v);
		else if (strcmp(line, "instance") == 0 && strlen(v) < sizeof(p->instance))
			strcpy(p->instance, v);
		else if (strcmp(line, "compression") == 0)
			p->zstd = strcmp(v, "zstd") == 0;
		else if (strcmp(line, "level") == 0)
			p->level = atoi(v);
		else if (strcmp(line, "cpus") == 0)
			p->n_cpus = (unsigned)strtoul(v, NULL, 10);
		else if (strcmp(line, "event") == 0 &&
			 event_list_expand(&p->events, NULL, v, EVENTS_PER_SESSION_MAX) < 0)
			log_notice("Recovery: event '%s' no longer exists, its format is left out", v);
	}
	/* A target path leaves the state directory neither up nor absolute. */
	if (!p->target[0] || p->target[0] == '/' || strstr(p->target, "..") ||
	    p->n_cpus == 0 || p->n_cpus > 65536)
		return -EBADMSG;
	r = read_file_at(dir_fd, "header_page", METADATA_FILE_MAX, &p->imeta.header_page,
			 &p->imeta.n_header_page);
	if (r >= 0)
		r = read_file_at(dir_fd, "header_event", METADATA_FILE_MAX, &p->imeta.header_event,
				 &p->imeta.n_header_event);
	if (r >= 0)
		r = read_file_at(dir_fd, "trace_clock", METADATA_FILE_MAX, &p->imeta.trace_clock,
				 NULL);
	if (r < 0)
		return r;
	r = subbuf_size_from_header_page(p->imeta.header_page, &p->imeta.subbuf_size);
	if (r < 0)
		return r;
	{
		char *a = strchr(p->imeta.trace_clock, '['), *b = a ? strchr(a, ']') : NULL;

		if (!a || !b || (size_t)(b - a - 1) >= sizeof(p->imeta.clock))
			return -EBADMSG;
		memcpy(p->imeta.clock, a + 1, (size_t)(b - a - 1));
		p->imeta.clock[b - a - 1] = '\0';
	}
	return 0;
}

/* Appends what the orphaned instance still holds for one CPU to its spool. */
static void drain_orphan_cpu(struct tracefs_instance *t, unsigned cpu, int spool_fd,
			     const struct parsed_recipe *p, struct compressor *c)
{
	uint32_t page = p->imeta.subbuf_size;
	size_t cap = MAX((size_t)page, (size_t)CHUNK_TARGET_BYTES), n = 0;
	uint8_t *raw = malloc(cap), *out = malloc(CHUNK_HDR_SIZE + compress_bound(cap));
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "per_cpu/cpu%u/trace_pipe_raw", cpu);
	fd = tracefs_instance_file_open(t, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || !raw || !out)
		goto out;
	if (lseek(spool_fd, 0, SEEK_END) < 0)
		goto out;
	for (bool more = true; more;) {
		ssize_t k = read(fd, raw + n, page);

		more = k > 0;
		if (k > 0) {
			memset(raw + n + k, 0, page - (size_t)k);
			n += page;
		}
		if (n > 0 && (!more || n + page > cap)) {
			size_t csize = n;

			if (p->zstd) {
				if (compress_frame(c, p->level, raw, n, out + CHUNK_HDR_SIZE,
						   compress_bound(cap), &csize) < 0)
					break;
				put_le32(out, (uint32_t)csize);
				put_le32(out + 4, (uint32_t)n);
			}
			if (loop_write(spool_fd, p->zstd ? out : raw,
				       p->zstd ? CHUNK_HDR_SIZE + csize : n) < 0)
				break;
			n = 0;
		}
	}
out:
	safe_close(fd);
	free(raw);
	free(out);
}

/*
 * The orphaned instance's ring buffers may still hold events that were
 * never read: they belong at the end of the spools. Then the instance goes.
 */
static void drain_orphan(const struct parsed_recipe *p, int *spool_fds, const char *prefix)
{
	_cleanup_(compressor_freep) struct compressor *c = NULL;
	struct tracefs_instance *t;

	if (strncmp(p->instance, prefix, strlen(prefix)) != 0 || !tracefs_instance_exists(p->instance))
		return;
	t = tracefs_instance_alloc(NULL, p->instance);
	if (!t)
		return;
	tracefs_trace_off(t);
	if (compressor_new(&c) >= 0)
		for (unsigned cpu = 0; cpu < p->n_cpus; cpu++)
			if (spool_fds[cpu] >= 0)
				drain_orphan_cpu(t, cpu, spool_fds[cpu], p, c);
	if (tracefs_instance_destroy(t) == 0)
		log_notice("Recovery: drained and removed orphaned instance '%s'", p->instance);
	tracefs_instance_free(t);
}

/* How much of a spool is intact: whole chunk records that decompress, or whole pages. */
static void scan_spool(int fd, const struct parsed_recipe *p, uint64_t *ret_bytes,
		       uint64_t *ret_chunks)
{
	uint64_t off = 0, chunks = 0, size;
	uint8_t hdr[CHUNK_HDR_SIZE], *in = NULL, *raw = NULL;
	size_t in_cap = 0, raw_cap = 0;
	struct stat st;

	*ret_bytes = *ret_chunks = 0;
	if (fstat(fd, &st) < 0)
		return;
	size = (uint64_t)st.st_size;
	if (!p->zstd) {
		uint8_t *page = malloc(p->imeta.subbuf_size);
		struct rb_page_info info;

		for (; page && off + p->imeta.subbuf_size <= size; off += p->imeta.subbuf_size)
			if (loop_pread_exact(fd, page, p->imeta.subbuf_size, off) < 0 ||
			    rb_page_parse(page, p->imeta.subbuf_size, &info) < 0)
				break;
		free(page);
		*ret_bytes = off;
		return;
	}
	while (off + CHUNK_HDR_SIZE <= size) {
		uint32_t csize, usize;
		size_t got;

		if (loop_pread_exact(fd, hdr, sizeof(hdr), off) < 0)
			break;
		csize = get_le32(hdr);
		usize = get_le32(hdr + 4);
		if (csize == 0 || csize > size - off - CHUNK_HDR_SIZE || usize == 0 ||
		    usize > CHUNK_RAW_MAX || usize % p->imeta.subbuf_size)
			break;
		if (csize > in_cap || usize > raw_cap) {
			free(in);
			free(raw);
			in_cap = MAX(in_cap, (size_t)csize);
			raw_cap = MAX(raw_cap, (size_t)usize);
			in = malloc(in_cap);
			raw = malloc(raw_cap);
			if (!in || !raw)
				break;
		}
		if (loop_pread_exact(fd, in, csize, off + CHUNK_HDR_SIZE) < 0 ||
		    decompress_frame(in, csize, raw, usize, &got) < 0 || got != usize)
			break;
		off += CHUNK_HDR_SIZE + csize;
		chunks++;
	}
	free(in);
	free(raw);
	*ret_bytes = off;
	*ret_chunks = chunks;
}

/* "dir/name.dat" -> "dir/name-recovered.dat" */
static int recovered_name(const char *target, char *buf, size_t n)
{
	size_t len = strlen(target);

	if (len > 4 && strcmp(target + len - 4, ".dat") == 0)
		len -= 4;
	if ((size_t)snprintf(buf, n, "%.*s-recovered.dat", (int)len, target) >= n)
		return -ENAMETOOLONG;
	return 0;
}

/* Creates the directories of a relative path (sessions/<name>/, recovered/). */
static int open_parent(int state_dir_fd, const char *path, const char **ret_name)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd = -EBADF;

	if (!slash) {
		*ret_name = path;
		return openat(state_dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	for (char *p = dir;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (mkdirat(state_dir_fd, dir, 0750) < 0 && errno != EEXIST)
				return negative_errno();
			*p = c;
			if (!c)
				break;
		}
	}
	fd = openat(state_dir_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	*ret_name = slash + 1;
	return fd < 0 ? negative_errno() : fd;
}

static int recover_one(int state_dir_fd, int spool_dir_fd, const char *prefix, char *out,
		       size_t n_out)
{
	struct parsed_recipe p = {};
	struct v7_cpu_data *data = NULL;
	struct global_meta gm = {};
	int *fds = NULL, dir_fd = -EBADF, fd = -EBADF, r;
	char tmp[NAME_MAX + 1];
	const char *name;
	uint64_t total = 0;
	struct v7_file f;

	r = parse_recipe(spool_dir_fd, &p);
	if (r < 0)
		goto out;
	fds = calloc(p.n_cpus, sizeof(*fds));
	data = calloc(p.n_cpus, sizeof(*data));
	if (!fds || !data) {
		r = -ENOMEM;
		goto out;
	}
	for (unsigned cpu = 0; cpu < p.n_cpus; cpu++) {
		char name_cpu[32];

		snprintf(name_cpu, sizeof(name_cpu), "cpu%u", cpu);
		fds[cpu] = openat(spool_dir_fd, name_cpu, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	}
	/* Cut each spool after its last intact record, so drained data can follow it. */
	for (unsigned cpu = 0; cpu < p.n_cpus; cpu++) {
		uint64_t bytes, chunks;

		if (fds[cpu] < 0)
			continue;
		scan_spool(fds[cpu], &p, &bytes, &chunks);
		if (ftruncate(fds[cpu], (off_t)bytes) < 0)
			log_warning_errno(negative_errno(), "Recovery: cannot trim spool, ignoring: %m");
	}
	drain_orphan(&p, fds, prefix);
	for (unsigned cpu = 0; cpu < p.n_cpus; cpu++) {
		uint64_t chunks = 0;

		data[cpu] = (struct v7_cpu_data){ .cpu = cpu, .fd = fds[cpu] };
		if (fds[cpu] >= 0)
			scan_spool(fds[cpu], &p, &data[cpu].size, &chunks);
		data[cpu].n_chunks = (uint32_t)chunks;
		total += data[cpu].size;
	}
	r = recovered_name(p.target, out, n_out);
	if (r < 0)
		goto out;
	dir_fd = open_parent(state_dir_fd, out, &name);
	if (dir_fd < 0) {
		r = dir_fd;
		goto out;
	}
	snprintf(tmp, sizeof(tmp), ".%.200s.tmp", name);
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (fd < 0) {
		r = negative_errno();
		goto out;
	}
	r = global_meta_read(&gm, &p.events);
	if (r < 0)
		goto out;
	f = (struct v7_file){
		.compression = p.zstd ? V7_COMPRESSION_ZSTD : V7_COMPRESSION_NONE,
		.level = p.level,
		.version = "ftraced " FTRACED_VERSION " (recovered)",
		.n_cpus = p.n_cpus,
		.n_data = p.n_cpus,
		.data = data,
	};
	metadata_to_v7(&p.imeta, &gm, &f);
	if (getrandom(&f.trace_id, sizeof(f.trace_id), 0) != sizeof(f.trace_id))
		f.trace_id = total;
	r = v7_write(fd, &f, NULL);
	if (r >= 0 && fsync(fd) < 0)
		r = negative_errno();
	if (r >= 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
		r = negative_errno();
	if (r >= 0 && fsync(dir_fd) < 0)
		r = negative_errno();
	if (r < 0)
		unlinkat(dir_fd, tmp, 0);
	else
		log_notice("Recovered '%s' (%" PRIu64 " bytes of captured data)", out, total);
out:
	for (unsigned cpu = 0; fds && cpu < p.n_cpus; cpu++)
		safe_close(fds[cpu]);
	free(fds);
	free(data);
	safe_close(fd);
	safe_close(dir_fd);
	global_meta_done(&gm);
	instance_meta_done(&p.imeta);
	event_list_done(&p.events);
	return r;
}

static void remove_spool(int spool_fd, int dir_fd, const char *name)
{
	DIR *d = fdopendir(dup(dir_fd));
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dir_fd, de->d_name, 0);
	if (d)
		closedir(d);
	unlinkat(spool_fd, name, AT_REMOVEDIR);
}

/**
 * recovery_recover_all() - rebuild a file from every stale spool, then remove it.
 * @state_dir_fd: the state directory, locked by the caller
 * @instance_prefix: orphaned instances named with it may be drained ("ftraced-<tag>-")
 * @ret_files: how many files were recovered
 * @ret_failed: how many spools could not be (kept, and logged)
 *
 * A spool that cannot be recovered (no recipe, a write error) is kept and
 * logged. Nothing else must capture into this state directory meanwhile.
 *
 * Return: 0, or -errno if the spool directory cannot be read.
 */
int recovery_recover_all(int state_dir_fd, const char *instance_prefix, unsigned *ret_files,
			 unsigned *ret_failed)
{
	struct dirent *de;
	int spool_fd;
	DIR *d;

	*ret_files = 0;
	*ret_failed = 0;
	spool_fd = openat(state_dir_fd, SPOOL_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (spool_fd < 0)
		return errno == ENOENT ? 0 : negative_errno();
	d = fdopendir(dup(spool_fd));
	if (!d) {
		close(spool_fd);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		char out[PATH_MAX];
		int dir_fd, r;

		if (de->d_name[0] == '.')
			continue;
		dir_fd = openat(spool_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (dir_fd < 0)
			continue;
		r = recover_one(state_dir_fd, dir_fd, instance_prefix, out, sizeof(out));
		if (r < 0) {
			log_warning_errno(r, "Cannot recover spool '%s', keeping it: %m", de->d_name);
			(*ret_failed)++;
		} else {
			remove_spool(spool_fd, dir_fd, de->d_name);
			(*ret_files)++;
		}
		close(dir_fd);
	}
	closedir(d);
	close(spool_fd);
	return 0;
}

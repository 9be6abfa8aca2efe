// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The v7 writer, end to end without a kernel: synthetic ring-buffer pages
 * (our own event format, our own header_page) are put into spool-shaped
 * files, written out with v7_write(), and read back with libtracecmd, the
 * reader trace-cmd report and KernelShark use. Every event must come back
 * on its CPU, in order, with its timestamp and its payload byte for byte.
 *
 * Covered: zstd and none; 4, 8 and 16 KiB sub-buffers; an empty CPU; a
 * partly filled last page; one chunk per sub-buffer (many chunks) and big
 * chunks; output to a pipe giving the same bytes as to a file.
 */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <trace-cmd.h>

#include "ftraced/macro.h"
#include "lib/compress.h"
#include "lib/rb-page.h"
#include "lib/v7-cursor.h"
#include "lib/v7-format.h"
#include "lib/v7-meta.h"
#include "lib/v7-reader.h"
#include "lib/v7-writer.h"
#include "tests/unit/v7-fixture.h"

struct pipe_reader {
	int fd;
	uint8_t *data;
	size_t n;
};

static void *read_pipe(void *userdata)
{
	struct pipe_reader *p = userdata;
	size_t cap = 0;

	for (;;) {
		ssize_t k;

		if (p->n + 65536 > cap) {
			cap = MAX(cap * 2, (size_t)1 << 20);
			p->data = realloc(p->data, cap);
			assert(p->data);
		}
		k = read(p->fd, p->data + p->n, cap - p->n);
		assert(k >= 0);
		if (k == 0)
			break;
		p->n += (size_t)k;
	}
	return NULL;
}

static void check_readback(const char *path, const struct cpu_pages *cpus)
{
	struct tracecmd_input *h;
	struct tep_handle *tep;

	h = tracecmd_open(path, 0);
	assert(h);
	tep = tracecmd_get_tep(h);
	assert(tep);
	assert(tep_find_event(tep, EVENT_ID));
	for (unsigned cpu = 0; cpu < N_CPUS; cpu++) {
		const struct cpu_pages *c = &cpus[cpu];
		struct tep_record *rec;
		unsigned seq = 0;

		while ((rec = tracecmd_read_data(h, (int)cpu))) {
			uint8_t expect[PAYLOAD_SIZE];

			assert(seq < c->n_events);
			make_payload(expect, cpu, seq);
			assert(rec->cpu == (int)cpu);
			assert(rec->size == PAYLOAD_SIZE);
			assert(memcmp(rec->data, expect, PAYLOAD_SIZE) == 0);
			assert(rec->ts == event_ts(c, seq));
			assert(rec->missed_events == 0);
			tracecmd_free_record(rec);
			seq++;
		}
		if (seq != c->n_events)
			fprintf(stderr, "CPU %u: read %u of %u events\n", cpu, seq, c->n_events);
		assert(seq == c->n_events);
	}
	tracecmd_close(h);
}

struct own_check {
	const struct cpu_pages *c;
	unsigned cpu;
	unsigned seq;
};

static int check_own_event(const struct rb_event *e, void *userdata)
{
	struct own_check *k = userdata;
	uint8_t expect[PAYLOAD_SIZE];

	assert(k->seq < k->c->n_events);
	make_payload(expect, k->cpu, k->seq);
	assert(e->size == PAYLOAD_SIZE && memcmp(e->data, expect, PAYLOAD_SIZE) == 0);
	assert(e->ts == event_ts(k->c, k->seq));
	k->seq++;
	return 0;
}

static int check_own_page(const uint8_t *page, uint32_t page_size, void *userdata)
{
	return rb_page_foreach_event(page, page_size, check_own_event, userdata);
}

/* The same file through our own reader (daemon/v7-reader.c, daemon/rb-page.c). */
static void check_own_reader(int fd, const struct cpu_pages *cpus, uint32_t page_size, bool zstd)
{
	_cleanup_(v7_reader_freep) struct v7_reader *r = NULL;
	uint8_t *formats;
	size_t n, seen = 0;
	int id;

	assert(v7_reader_open(fd, &r, NULL, 0) == 0);
	assert(v7_reader_page_size(r) == page_size);
	assert(v7_reader_compressed(r) == zstd);
	assert(strcmp(v7_reader_clock(r), "local") == 0);
	assert(v7_reader_section(r, 18, &formats, &n) == 0);
	assert(v7_find_event_id(formats, n, /* per_system= */ true, "seq", &id) == 0 &&
	       id == EVENT_ID);
	assert(v7_find_event_id(formats, n, true, "nosuch", &id) == -ENOENT);
	free(formats);
	for (size_t i = 0; i < v7_reader_n_cpus(r); i++) {
		const struct v7_reader_cpu *c = v7_reader_cpu(r, i);
		struct own_check k = { .c = &cpus[c->cpu], .cpu = c->cpu };

		assert(c->cpu < N_CPUS);
		assert(v7_reader_foreach_page(r, i, check_own_page, &k) == 0);
		assert(k.seq == cpus[c->cpu].n_events);
		seen += k.seq;
	}
	for (unsigned cpu = 0; cpu < N_CPUS; cpu++)
		seen -= cpus[cpu].n_events;
	assert(seen == 0); /* CPUs without data are simply absent */
}

static int count_event(const struct rb_event *e, void *userdata)
{
	(*(size_t *)userdata)++;
	return 0;
}

static int count_page(const uint8_t *page, uint32_t page_size, void *userdata)
{
	return rb_page_foreach_event(page, page_size, count_event, userdata);
}

/* Opens and walks a damaged copy: any error is fine, a crash or overrun is not. */
static int walk_damaged(const uint8_t *bytes, size_t n)
{
	_cleanup_(v7_reader_freep) struct v7_reader *r = NULL;
	int fd = memfd_create("damaged", MFD_CLOEXEC), err;
	size_t events = 0;

	assert(fd >= 0 && write(fd, bytes, n) == (ssize_t)n);
	err = v7_reader_open(fd, &r, NULL, 0);
	for (size_t i = 0; err == 0 && i < v7_reader_n_cpus(r); i++)
		err = v7_reader_foreach_page(r, i, count_page, &events);
	close(fd);
	return err;
}

static void check_damage(const uint8_t *bytes, size_t n)
{
	uint8_t *copy = malloc(n);
	size_t step = MAX(n / 1500, (size_t)1);

	assert(copy);
	/* Every truncation: the BUFFER option sits near the end, so each one fails to open. */
	for (size_t k = 0; k < n; k += step)
		assert(walk_damaged(bytes, k) < 0);
	for (size_t k = 0; k < n; k += step) {
		memcpy(copy, bytes, n);
		copy[k] ^= 0x5a;
		walk_damaged(copy, n);
	}
	free(copy);
}

/* Does the file system under /var/tmp take O_DIRECT (tmpfs before 6.6 does not)? */
static bool direct_possible(void)
{
	char path[] = "/var/tmp/test-v7-writer-probe-XXXXXX";
	int fd = mkstemp(path), flags;
	bool ok;

	assert(fd >= 0);
	flags = fcntl(fd, F_GETFL);
	ok = fcntl(fd, F_SETFL, flags | O_DIRECT) == 0;
	close(fd);
	unlink(path);
	return ok;
}

/*
 * Every write() in this program goes through here (linked with
 * -Wl,--wrap=write): the bytes written while their fd had O_DIRECT set.
 * Whether a file went around the page cache is then a count, not a probe
 * of the cache (which the kernel may fill for its own reasons: a page in
 * the middle of a file written O_DIRECT was seen cached, now and then).
 */
static uint64_t direct_bytes;

ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	int flags = fcntl(fd, F_GETFL);
	ssize_t k = __real_write(fd, buf, n);

	if (k > 0 && flags >= 0 && (flags & O_DIRECT))
		direct_bytes += (uint64_t)k;
	return k;
}

/*
 * @text sealed as a KALLSYMS section body in a memfd of its own, as the
 * daemon's symbol cache keeps it (the caller closes .fd). The body is not
 * at the file's start: the writer must copy from the region's offset.
 */
static struct v7_region seal_text(const char *text, size_t n)
{
	_cleanup_(compressor_freep) struct compressor *c = NULL;
	struct v7_region body;
	size_t n_text;
	int src = memfd_create("text", MFD_CLOEXEC), out = memfd_create("sealed", MFD_CLOEXEC);

	assert(src >= 0 && out >= 0 && write(src, text, n) == (ssize_t)n);
	assert(compressor_new(&c) == 0);
	assert(v7_seal_kallsyms(c, 6, 17, src, NULL, n, NULL, out, &body, &n_text) == 0);
	assert(n_text == n && body.fd == out && body.offset > 0);
	assert(v7_seal_kallsyms(c, 6, 17, src, NULL, n - 1, NULL, out, &body, &n_text) == -EFBIG);
	assert(v7_seal_kallsyms(c, 6, 17, src, NULL, n, NULL, out, &body, &n_text) == 0);
	close(src);
	return body;
}

/*
 * v7_write() into a new file at offset @skip with @f, whose bytes after
 * @skip must be @want. @direct: the file must have gone around the page
 * cache, all but its last partial block (where the file system allows);
 * otherwise through it.
 */
static void check_written_as(const struct v7_file *f, size_t skip, const uint8_t *want,
			     uint64_t n, bool direct)
{
	char path[] = "/var/tmp/test-v7-writer-direct-XXXXXX";
	uint8_t *got = malloc(n + skip + 1);
	uint64_t size;
	int fd, flags;

	fd = mkstemp(path);
	assert(fd >= 0 && got);
	flags = fcntl(fd, F_GETFL);
	assert(skip == 0 || write(fd, want, skip) == (ssize_t)skip);
	direct_bytes = 0;
	assert(v7_write(fd, f, &size) == 0);
	assert(size == n);
	/* O_DIRECT is the writer's business only: the fd's flags are as they were. */
	assert(fcntl(fd, F_GETFL) == flags);
	/* All but the last partial block went out O_DIRECT, or none of it. */
	if (direct && direct_possible())
		assert(direct_bytes == n / V7_DIRECT_ALIGN * V7_DIRECT_ALIGN);
	else
		assert(direct_bytes == 0);
	assert(pread(fd, got, n + skip + 1, 0) == (ssize_t)(n + skip));
	assert(memcmp(got + skip, want, n) == 0);
	free(got);
	close(fd);
	unlink(path);
}

/* @f with every CPU's data read from its spool into memory, in blobs of odd sizes. */
struct in_memory {
	struct v7_file file;
	struct v7_cpu_data data[N_CPUS];
	struct v7_blob *blobs[N_CPUS];
	uint8_t *bytes[N_CPUS];
};

static void in_memory_init(struct in_memory *m, const struct v7_file *f)
{
	*m = (struct in_memory){ .file = *f };
	memcpy(m->data, f->data, sizeof(m->data));
	for (unsigned cpu = 0; cpu < N_CPUS; cpu++) {
		size_t size = m->data[cpu].size, piece = 1000 + cpu * 4099, n_blobs = 0;

		m->bytes[cpu] = malloc(size + 1);
		assert(m->bytes[cpu] && pread(m->data[cpu].fd, m->bytes[cpu], size,
					      (off_t)m->data[cpu].offset) == (ssize_t)size);
		m->blobs[cpu] = calloc(size / piece + 2, sizeof(**m->blobs));
		assert(m->blobs[cpu]);
		for (size_t off = 0; off < size; off += piece)
			m->blobs[cpu][n_blobs++] = (struct v7_blob){ m->bytes[cpu] + off,
								 MIN(piece, size - off) };
		m->data[cpu].blobs = m->blobs[cpu];
		m->data[cpu].n_blobs = n_blobs;
		m->data[cpu].fd = -EBADF;
	}
	m->file.data = m->data;
}

static void in_memory_done(struct in_memory *m)
{
	for (unsigned cpu = 0; cpu < N_CPUS; cpu++) {
		free(m->bytes[cpu]);
		free(m->blobs[cpu]);
	}
}

/*
 * v7_size() says what v7_write() writes, to the byte: for @f, and for @f
 * without its data (what a budget counts as the metadata's cost).
 */
static void check_sized(const struct v7_file *f, uint64_t written)
{
	struct v7_cpu_data empty[N_CPUS];
	struct v7_file bare = *f;
	uint64_t size = 0, bare_size = 0, bare_written = 0;
	int fd = memfd_create("sized", MFD_CLOEXEC);

	assert(v7_size(f, &size) == 0);
	assert(size == written);
	assert(f->n_data <= N_CPUS);
	for (size_t i = 0; i < f->n_data; i++)
		empty[i] = (struct v7_cpu_data){ .cpu = f->data[i].cpu, .fd = -EBADF };
	bare.data = empty;
	assert(fd >= 0 && v7_size(&bare, &bare_size) == 0);
	assert(v7_write(fd, &bare, &bare_written) == 0);
	assert(bare_size == bare_written && bare_size < written);
	close(fd);
}

/* The bytes v7_write() makes of @f (data in spools: buffered), in a new buffer. */
static uint8_t *written_from_spools(const struct v7_file *f, uint64_t *ret_size)
{
	int fd = memfd_create("from-spools", MFD_CLOEXEC);
	uint8_t *bytes;

	assert(fd >= 0 && v7_write(fd, f, ret_size) == 0);
	bytes = malloc(*ret_size);
	assert(bytes && pread(fd, bytes, *ret_size, 0) == (ssize_t)*ret_size);
	close(fd);
	return bytes;
}

/*
 * A file whose data is all in memory (a snapshot) goes around the page
 * cache (O_DIRECT through the writer's stage) and is byte for byte the
 * one written from spools, which stays buffered: data in blobs of odd
 * sizes (stage boundaries fall inside them), megabytes of symbols (many
 * stage fills, the data starting mid-stage), and an unaligned start
 * (which stays buffered).
 */
static void check_direct(struct fixture *fx, const uint8_t *want, uint64_t n)
{
	size_t n_text = 1800 * 1000 + 123;
	char *text = malloc(n_text);
	struct in_memory m;
	struct v7_file f;
	uint8_t *big;
	uint64_t n_big;

	check_written_as(&fx->file, 0, want, n, /* direct= */ false);
	in_memory_init(&m, &fx->file);
	check_written_as(&m.file, 0, want, n, /* direct= */ true);
	check_written_as(&m.file, 1, want, n, /* direct= */ false);

	assert(text);
	for (size_t i = 0; i < n_text; i++)
		text[i] = (char)('a' + (i * 7919) % 26);
	f = fx->file;
	f.kallsyms = (struct v7_blob){ text, n_text };
	f.kallsyms_sealed = (struct v7_region){};
	big = written_from_spools(&f, &n_big);
	check_sized(&f, n_big);
	m.file.kallsyms = f.kallsyms;
	m.file.kallsyms_sealed = f.kallsyms_sealed;
	check_written_as(&m.file, 0, big, n_big, /* direct= */ true);
	free(big);

	if (f.compression == V7_COMPRESSION_ZSTD) {
		/*
		 * Symbols sealed in a file of their own, about 1 MB after
		 * compression: copied in by the kernel when buffered, read
		 * through the stage (two fills and more) when direct.
		 */
		uint64_t x = 88172645463325252ull;

		for (size_t i = 0; i < n_text; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			text[i] = i % 40 == 39 ? '\n' : (char)('a' + x % 26);
		}
		f.kallsyms = (struct v7_blob){};
		f.kallsyms_sealed = seal_text(text, n_text);
		assert(f.kallsyms_sealed.size > 2 * 512 * 1024);
		big = written_from_spools(&f, &n_big);
		m.file.kallsyms = f.kallsyms;
		m.file.kallsyms_sealed = f.kallsyms_sealed;
		check_written_as(&m.file, 0, big, n_big, /* direct= */ true);
		check_written_as(&m.file, 1, big, n_big, /* direct= */ false);
		free(big);
		close(f.kallsyms_sealed.fd);
	}
	free(text);
	in_memory_done(&m);
}

static void run_case(uint32_t page_size, bool zstd, unsigned pages_per_chunk)
{
	struct fixture fx;
	struct cpu_pages *cpus = fx.cpus;
	struct v7_cpu_data *data = fx.data;
	char path[] = "/tmp/test-v7-writer-XXXXXX";
	struct pipe_reader reader = {};
	uint64_t size, size_pipe;
	pthread_t thread;
	int fd, pipefd[2];
	uint8_t *file_bytes;
	struct v7_file f;

	fixture_init(&fx, page_size, zstd, pages_per_chunk);
	f = fx.file;
	fd = mkstemp(path);
	assert(fd >= 0);
	assert(v7_write(fd, &f, &size) == 0);
	assert((uint64_t)lseek(fd, 0, SEEK_END) == size);
	check_sized(&f, size);
	check_readback(path, cpus);
	check_own_reader(fd, cpus, page_size, zstd);

	/* The same file streamed into a pipe: byte for byte identical. */
	assert(pipe(pipefd) == 0);
	reader.fd = pipefd[0];
	assert(pthread_create(&thread, NULL, read_pipe, &reader) == 0);
	assert(v7_write(pipefd[1], &f, &size_pipe) == 0);
	close(pipefd[1]);
	pthread_join(thread, NULL);
	close(pipefd[0]);
	file_bytes = malloc(size);
	assert(file_bytes && pread(fd, file_bytes, size, 0) == (ssize_t)size);
	assert(size_pipe == size && reader.n == size);
	assert(memcmp(file_bytes, reader.data, size) == 0);
	if (page_size == 4096)
		check_damage(file_bytes, size);
	check_direct(&fx, file_bytes, size);

	/* An inconsistent description is refused before anything is written. */
	if (!zstd) {
		data[0].size -= 1;
		assert(v7_write(fd, &f, NULL) == -EINVAL);
		data[0].size += 1;
	}
	/* A spool shorter than declared is an error, not a silently short file. */
	data[2].size += zstd ? 100 : page_size;
	assert(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0);
	assert(v7_write(fd, &f, NULL) == -ENODATA);

	printf("ok: %5u-byte pages, %-4s, %3u pages per chunk, %8llu bytes\n", page_size,
	       zstd ? "zstd" : "none", pages_per_chunk, (unsigned long long)size);
	free(file_bytes);
	free(reader.data);
	close(fd);
	unlink(path);
	fixture_done(&fx);
}

/*
 * Data already in the output (in-place spools): each CPU's records at an
 * odd offset with a gap of garbage before the next, the count slot free
 * before them. The writer appends the rest and fills in the header and the
 * counts; libtracecmd and our reader see every event, and the gaps are
 * never read.
 */
static void test_in_place(uint32_t page_size)
{
	char path[] = "/tmp/test-v7-writer-XXXXXX";
	uint64_t pos = V7_IN_PLACE_DATA_MIN + 20, size;
	struct fixture fx;
	struct v7_file f;
	uint8_t *buf;
	int fd;

	fixture_init(&fx, page_size, /* zstd= */ true, 4);
	f = fx.file;
	fd = mkstemp(path);
	assert(fd >= 0);
	for (unsigned cpu = 0; cpu < N_CPUS; cpu++) {
		struct v7_cpu_data *d = &fx.data[cpu];
		static const char garbage[] = "not part of any CPU's data";

		if (d->size == 0)
			continue;
		buf = malloc(d->size);
		assert(buf && pread(d->fd, buf, d->size, 0) == (ssize_t)d->size);
		assert(pwrite(fd, buf, d->size, pos) == (ssize_t)d->size);
		free(buf);
		d->offset = pos;
		pos += d->size;
		assert(pwrite(fd, garbage, sizeof(garbage), pos) == sizeof(garbage));
		pos += 65536 + 7 + 4;
	}
	f.in_place_end = pos;
	assert(v7_write(fd, &f, &size) == 0);
	assert((uint64_t)lseek(fd, 0, SEEK_END) == size && size > pos);
	check_readback(path, fx.cpus);
	check_own_reader(fd, fx.cpus, page_size, true);

	/* Nothing in place fits an uncompressed file, or data before the header's end. */
	f.compression = V7_COMPRESSION_NONE;
	assert(v7_write(fd, &f, NULL) == -EINVAL);
	f.compression = V7_COMPRESSION_ZSTD;
	fx.data[0].offset = V7_IN_PLACE_DATA_MIN;
	assert(v7_write(fd, &f, NULL) == -EINVAL);
	printf("ok: %5u-byte pages, data in place, %8llu bytes\n", page_size,
	       (unsigned long long)size);
	close(fd);
	unlink(path);
	fixture_done(&fx);
}

/*
 * A KALLSYMS section compressed once, while its text was read (two frames in
 * one block): libtracecmd resolves its symbols, and our reader agrees.
 */
static void test_sealed_kallsyms(void)
{
	static const char text[] = "ffffffff81000000 T _stext\nffffffff81000100 T do_work\n";
	char path[] = "/tmp/ftraced-test-v7-XXXXXX";
	_cleanup_(compressor_freep) struct compressor *c = NULL;
	size_t n_frame, n_raw;
	struct tracecmd_input *h;
	struct fixture fx;
	const char *name;
	int src, out, fd;

	src = memfd_create("kallsyms", MFD_CLOEXEC);
	out = memfd_create("sealed", MFD_CLOEXEC);
	assert(src >= 0 && out >= 0 && write(src, text, strlen(text)) == (ssize_t)strlen(text));
	assert(compressor_new(&c) == 0);
	assert(compress_fd(c, 6, 17, src, NULL, 0, SIZE_MAX, 10, out, 0, &n_frame, &n_raw) == -EFBIG);
	fixture_init(&fx, 4096, true, 1);
	fx.file.kallsyms = (struct v7_blob){};
	fx.file.kallsyms_sealed = seal_text(text, strlen(text));
	fd = mkstemp(path);
	assert(fd >= 0 && v7_write(fd, &fx.file, NULL) == 0);
	h = tracecmd_open(path, 0);
	assert(h);
	/* An address inside _stext (do_work bounds it) resolves to it. */
	name = tep_find_function(tracecmd_get_tep(h), 0xffffffff81000010ull);
	assert(name && strcmp(name, "_stext") == 0);
	tracecmd_close(h);
	check_readback(path, fx.cpus);
	close(fd);
	unlink(path);
	fixture_done(&fx);
	close(fx.file.kallsyms_sealed.fd);
	close(out);
	close(src);
	printf("ok: kallsyms sealed once, in two frames, read back by libtracecmd\n");
}

/* @text in a memfd of its own, read from its start by frames_equal_fd(). */
static int text_fd(const char *text, size_t n)
{
	int fd = memfd_create("text", MFD_CLOEXEC);

	assert(fd >= 0 && write(fd, text, n) == (ssize_t)n);
	return fd;
}

/*
 * The daemon keeps its symbol copy when /proc/kallsyms still reads the
 * same: frames_equal_fd() streams the sealed body (two frames, the u32
 * size skipped) against the text. Any change, a longer or shorter text
 * and a damaged copy all say "not the same" or an error, never "same".
 */
static void test_sealed_compared(void)
{
	const size_t n = 3u << 20; /* many of its 64 KiB buffers, as /proc/kallsyms */
	char *text = malloc(n), *other = malloc(n + 1);
	struct v7_region body;
	uint64_t frames, size;
	uint8_t byte;
	int fd;

	assert(text && other);
	for (size_t i = 0, line = 0; i < n; line++)
		i += (size_t)snprintf(text + i, n - i, "ffffffff%08zx T symbol_%zu\n", line * 16, line);
	body = seal_text(text, n);
	frames = body.offset + V7_BLOCK_HDR_SIZE;
	size = body.size - V7_BLOCK_HDR_SIZE;
	fd = text_fd(text, n);
	assert(frames_equal_fd(body.fd, frames, size, 4, fd, NULL) == 1);
	/* Read from the start again, whatever the fd's position. */
	assert(frames_equal_fd(body.fd, frames, size, 4, fd, NULL) == 1);
	close(fd);
	memcpy(other, text, n);
	other[n / 2] ^= 1;
	fd = text_fd(other, n);
	assert(frames_equal_fd(body.fd, frames, size, 4, fd, NULL) == 0);
	close(fd);
	other[n / 2] ^= 1;
	other[n] = 'x';
	fd = text_fd(other, n + 1);
	assert(frames_equal_fd(body.fd, frames, size, 4, fd, NULL) == 0);
	close(fd);
	fd = text_fd(text, n - 1);
	assert(frames_equal_fd(body.fd, frames, size, 4, fd, NULL) == 0);
	close(fd);
	/* Frames cut short or damaged (the content checksum catches what zstd does not). */
	fd = text_fd(text, n);
	assert(frames_equal_fd(body.fd, frames, size - 1, 4, fd, NULL) < 0);
	assert(pread(body.fd, &byte, 1, (off_t)(frames + size / 2)) == 1);
	byte ^= 0x40;
	assert(pwrite(body.fd, &byte, 1, (off_t)(frames + size / 2)) == 1);
	assert(frames_equal_fd(body.fd, frames, size, 4, fd, NULL) != 1);
	assert(frames_equal_fd(body.fd, frames, size, 64u * 1024u + 1, fd, NULL) == -EINVAL);
	close(fd);
	close(body.fd);
	free(text);
	free(other);
	printf("ok: a sealed copy compared with its text: same, changed, longer, shorter, damaged\n");
}

static bool drop_pfx(const char *line, size_t n)
{
	const char *name = memchr(line, ' ', n);

	return name && (size_t)(name - line) + 9 <= n && memcmp(name + 3, "__pfx_", 6) == 0;
}

/*
 * Symbols left out as they are read (kallsyms.c leaves out __pfx_*): the
 * section holds the other lines exactly, however lines and the reader's
 * 64 KiB buffers fall, a last line without its newline included; and the
 * comparison leaves out the same lines, so an unchanged text stays "same".
 */
static void test_sealed_filtered(void)
{
	const size_t n = 2u << 20;
	char *text = malloc(n), *kept = malloc(n), *back = malloc(n + 8);
	_cleanup_(compressor_freep) struct compressor *c = NULL;
	size_t used = 0, n_kept = 0, n_text, n_back;
	struct v7_region body;
	uint8_t *sealed;
	int src, out = memfd_create("sealed", MFD_CLOEXEC);

	assert(text && kept && back && out >= 0 && compressor_new(&c) == 0);
	for (size_t line = 0; used + 64 < n; line++) {
		int k = snprintf(text + used, n - used, line % 3 ? "ffffffff%08zx T %s%zu\n" :
				 "ffffffff%08zx t %s%zu\t[mod]\n", line * 16,
				 line % 2 ? "__pfx_f" : "f", line);

		if (line % 2 == 0) {
			memcpy(kept + n_kept, text + used, (size_t)k);
			n_kept += (size_t)k;
		}
		used += (size_t)k;
	}
	memcpy(text + used, "ffffffff00000000 T last", 23); /* no newline at the end */
	memcpy(kept + n_kept, text + used, 23);
	used += 23;
	n_kept += 23;
	src = text_fd(text, used);
	assert(v7_seal_kallsyms(c, 6, 17, src, drop_pfx, used, NULL, out, &body, &n_text) == 0);
	assert(n_text == n_kept);
	sealed = malloc(body.size);
	assert(sealed && pread(out, sealed, body.size, (off_t)body.offset) == (ssize_t)body.size);
	assert(decompress_frame(sealed + V7_BLOCK_HDR_SIZE, body.size - V7_BLOCK_HDR_SIZE, back,
				n + 8, &n_back) == 0);
	assert(n_back == n_kept + 4 && memcmp(back + 4, kept, n_kept) == 0);
	assert(frames_equal_fd(out, body.offset + V7_BLOCK_HDR_SIZE, body.size - V7_BLOCK_HDR_SIZE,
			       4, src, drop_pfx) == 1);
	assert(frames_equal_fd(out, body.offset + V7_BLOCK_HDR_SIZE, body.size - V7_BLOCK_HDR_SIZE,
			       4, src, NULL) == 0);
	close(src);
	/* A line longer than the reader's buffer is refused, not cut. */
	memset(text, 'x', LINE_READER_BYTES + 1);
	src = text_fd(text, LINE_READER_BYTES + 1);
	assert(v7_seal_kallsyms(c, 6, 17, src, drop_pfx, n, NULL, out, &body, &n_text) == -EFBIG);
	close(src);
	close(out);
	free(sealed);
	free(text);
	free(kept);
	free(back);
	printf("ok: symbols left out as they are read, compared the same way\n");
}

int main(void)
{
	static const uint32_t page_sizes[] = { 4096, 8192, 16384 };

	for (size_t i = 0; i < ELEMENTSOF(page_sizes); i++) {
		run_case(page_sizes[i], /* zstd= */ false, 1);
		run_case(page_sizes[i], /* zstd= */ true, 1);
		run_case(page_sizes[i], /* zstd= */ true, 32);
		test_in_place(page_sizes[i]);
	}
	test_sealed_kallsyms();
	test_sealed_compared();
	test_sealed_filtered();
	printf("v7-writer: all tests passed\n");
	return 0;
}

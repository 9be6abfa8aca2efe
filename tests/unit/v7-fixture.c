// SPDX-License-Identifier: GPL-2.0-or-later
/* Test fixtures: synthetic kernel sub-buffers and a v7 file description around them. */
#undef NDEBUG
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ftraced/macro.h"
#include "daemon/store/metadata.h"
#include "daemon/output/segment.h"
#include "lib/chunk-record.h"
#include "lib/compress.h"
#include "tests/unit/v7-fixture.h"

const char header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n"
	"\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

const char event_format[] =
	"name: seq\n"
	"ID: 1000\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:unsigned int cpu;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int seq;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long long value;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"cpu=%u seq=%u value=%llu\", REC->cpu, REC->seq, REC->value\n";


void make_payload(uint8_t *p, unsigned cpu, unsigned seq)
{
	put_le16(p, EVENT_ID);
	p[2] = 0;
	p[3] = 0;
	put_le32(p + 4, (uint32_t)(1000 + cpu));
	put_le32(p + 8, cpu);
	put_le32(p + 12, seq);
	put_le64(p + 16, (uint64_t)seq * 0x9e3779b97f4a7c15ull ^ cpu);
}

uint64_t event_ts(const struct cpu_pages *c, unsigned seq)
{
	return c->first_ts + (uint64_t)seq * DELTA_NS;
}

/* Whole sub-buffers holding n_events; the last page is partly filled. */
void make_pages(struct cpu_pages *c, unsigned cpu, unsigned n_events, uint32_t page_size)
{
	unsigned per_page = (page_size - PAGE_HDR_SIZE) / EVENT_SIZE;
	unsigned seq = 0;

	c->n_events = n_events;
	c->n_pages = (n_events + per_page - 1) / per_page;
	c->first_ts = 1000000000ull * (cpu + 1);
	c->pages = calloc(MAX(c->n_pages, (size_t)1), page_size);
	assert(c->pages);
	for (size_t pg = 0; pg < c->n_pages; pg++) {
		uint8_t *page = c->pages + pg * page_size;
		unsigned k = 0;

		/* The page timestamp is that of its first event: that event's delta is 0. */
		put_le64(page, event_ts(c, seq));
		for (; k < per_page && seq < n_events; k++, seq++) {
			uint8_t *e = page + PAGE_HDR_SIZE + k * EVENT_SIZE;

			put_le32(e, (PAYLOAD_SIZE / 4) | ((k == 0 ? 0u : DELTA_NS) << 5));
			make_payload(e + 4, cpu, seq);
		}
		put_le64(page + 8, (uint64_t)k * EVENT_SIZE);
	}
}

char *header_page_text(uint32_t page_size)
{
	char *s;

	assert(asprintf(&s,
			"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
			"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
			"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
			"\tfield: char data;\toffset:16;\tsize:%u;\tsigned:0;\n",
			page_size - PAGE_HDR_SIZE) > 0);
	return s;
}

/* Puts pages into a spool-shaped memfd, as the capture workers do. */
int make_spool(const struct cpu_pages *c, uint32_t page_size, bool zstd,
		      unsigned pages_per_chunk, uint64_t *ret_size, uint32_t *ret_chunks)
{
	_cleanup_(compressor_freep) struct compressor *comp = NULL;
	size_t bound = chunk_record_bound((size_t)pages_per_chunk * page_size);
	uint8_t *out = malloc(bound);
	uint64_t size = 0;
	uint32_t chunks = 0;
	int fd;

	fd = memfd_create("spool", MFD_CLOEXEC);
	assert(fd >= 0 && out);
	if (!zstd) {
		size = (uint64_t)c->n_pages * page_size;
		assert(write(fd, c->pages, size) == (ssize_t)size);
	} else {
		assert(compressor_new(&comp) == 0);
		for (size_t pg = 0; pg < c->n_pages; pg += pages_per_chunk) {
			size_t n = MIN((size_t)pages_per_chunk, c->n_pages - pg) * page_size, rsize;

			assert(chunk_record_encode(comp, 3, c->pages + pg * page_size, n, out, bound,
						   &rsize) == 0);
			assert(write(fd, out, rsize) == (ssize_t)rsize);
			size += rsize;
			chunks++;
		}
	}
	free(out);
	*ret_size = size;
	*ret_chunks = chunks;
	return fd;
}


static const char cmdlines[] = "1000 seq-writer\n1002 other\n";
static const char *const cpustat[N_CPUS] = { "CPU: 0\nentries: 0\n", NULL, "CPU: 2\nentries: 0\n" };

/**
 * fixture_init() - CPU 0 with 3000 events, CPU 1 empty, CPU 2 with 1234 (a partial last page).
 * @f: the fixture
 * @page_size: sub-buffer size
 * @zstd: compressed spools
 * @pages_per_chunk: sub-buffers per chunk
 */
void fixture_init(struct fixture *f, uint32_t page_size, bool zstd, unsigned pages_per_chunk)
{
	const unsigned n_events[N_CPUS] = { 3000, 0, 1234 };

	*f = (struct fixture){};
	for (unsigned cpu = 0; cpu < N_CPUS; cpu++) {
		make_pages(&f->cpus[cpu], cpu, n_events[cpu], page_size);
		f->data[cpu] = (struct v7_cpu_data){ .cpu = cpu };
		f->data[cpu].fd = make_spool(&f->cpus[cpu], page_size, zstd, pages_per_chunk,
					     &f->data[cpu].size, &f->data[cpu].n_chunks);
	}
	f->formats[0] = (struct v7_blob){ event_format, strlen(event_format) };
	f->systems[0] = (struct v7_system){ "ftraced_test", 1, f->formats };
	f->header_page = header_page_text(page_size);
	f->file = (struct v7_file){
		.page_size = page_size,
		.compression = zstd ? V7_COMPRESSION_ZSTD : V7_COMPRESSION_NONE,
		.level = 3,
		.header_page = { f->header_page, strlen(f->header_page) },
		.header_event = { header_event, strlen(header_event) },
		.ftrace_formats = f->formats,
		.n_systems = 1,
		.systems = f->systems,
		.kallsyms = { "ffffffff81000000 T _stext\n", 26 },
		.cmdlines = { cmdlines, strlen(cmdlines) },
		.trace_clock = "[local] global counter\n",
		.clock = "local",
		.uname = "Linux test 6.0 x86_64",
		.version = "ftraced test",
		.trace_id = 0x1234,
		.n_cpus = N_CPUS,
		.n_cpustat = N_CPUS,
		.cpustat = cpustat,
		.n_data = N_CPUS,
		.data = f->data,
	};
}

void fixture_done(struct fixture *f)
{
	for (unsigned cpu = 0; cpu < N_CPUS; cpu++) {
		close(f->data[cpu].fd);
		free(f->cpus[cpu].pages);
	}
	free(f->header_page);
}

/**
 * snapshot_segment_env() - what segment_new_snapshot() needs, for tests of publishing.
 * @state_dir_fd: the state directory
 * @imeta: filled here (snapshot_meta_done() frees it)
 * @events: the session's events (may be empty)
 *
 * Return: the environment, with a new eventfd as its notify_fd.
 */
struct segment_env snapshot_segment_env(int state_dir_fd, struct instance_meta *imeta,
					const struct event_list *events)
{
	*imeta = (struct instance_meta){ .subbuf_size = 4096 };
	imeta->header_page = header_page_text(4096);
	imeta->n_header_page = strlen(imeta->header_page);
	imeta->header_event = strdup(header_event);
	imeta->n_header_event = strlen(header_event);
	imeta->trace_clock = strdup("[local] global\n");
	snprintf(imeta->clock, sizeof(imeta->clock), "local");
	return (struct segment_env){
		.state_dir_fd = state_dir_fd,
		.notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK),
		.imeta = imeta,
		.events = events,
		.instance_name = "ftraced-test",
		.n_cpus = 2,
		.zstd = true,
		.level = 3,
	};
}

void snapshot_meta_done(struct instance_meta *imeta)
{
	free(imeta->header_page);
	free(imeta->header_event);
	free(imeta->trace_clock);
}

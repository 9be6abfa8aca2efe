// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl info FILE and ftracectl verify FILE: offline, no daemon. Both
 * read the file with ftraced's own v7 reader (daemon/v7-reader.c), which
 * checks every length against the file; they work on trace-cmd's files too.
 *
 * info says what the file holds: format, compression, page size, clock,
 * uname, writer, trace id, per CPU its bytes, chunks, pages, events, time
 * span and losses (kernel counters from CPUSTAT, and pages flagged as
 * having missed events), and the events by type.
 *
 * verify checks every invariant we can and names the first problem: the
 * header, the options chain, the section chain to EOF, offsets inside the
 * file, each metadata section decompressing, chunk framing and zstd
 * checksums, whole pages, page commit sizes, event headers, and timestamps
 * never going back within a CPU. It catches truncation and flipped bytes
 * that `trace-cmd report` silently accepts.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/commands/commands.h"
#include "client/ctl.h"
#include "ftraced/macro.h"
#include "lib/v7-format.h"
#include "lib/v7-meta.h"
#include "lib/v7-reader.h"
#include "lib/v7-verify.h"
#include "lib/wall-clock.h"

#define EVENT_IDS_MAX V7_EVENT_IDS_MAX

struct names {
	char *name[EVENT_IDS_MAX];
};

static void names_free(struct names *n)
{
	for (int id = 0; id < EVENT_IDS_MAX; id++)
		free(n->name[id]);
	free(n);
}
DEFINE_CLEANUP(struct names *, names_free)

static int add_name(const char *system, const char *name, int id, void *userdata)
{
	struct names *n = userdata;

	if (id >= 0 && id < EVENT_IDS_MAX && !n->name[id] &&
	    asprintf(&n->name[id], "%s:%s", system, name) < 0)
		n->name[id] = NULL;
	return 0;
}

/*
 * A flight recorder's snapshot says per CPU from when its data is complete:
 * Return: true with *ret_ts (0: since capture start) if @cpu has that text.
 */
static bool complete_from(const struct v7_reader *r, uint32_t cpu, uint64_t *ret_ts,
			  bool *ret_dropped)
{
	for (size_t i = 0; i < v7_reader_n_cpustat(r); i++) {
		const char *t = v7_reader_cpustat(r, i);
		const char *p = t ? strstr(t, "CPU: ") : NULL, *from;

		if (!p || strtoul(p + 5, NULL, 10) != cpu || !strstr(t, "(flight recorder)"))
			continue;
		from = strstr(t, "complete from: ");
		if (!from)
			return false;
		*ret_ts = strtoull(from + strlen("complete from: "), NULL, 10);
		*ret_dropped = strstr(t, "older data dropped: yes") != NULL;
		return true;
	}
	return false;
}

/*
 * A line ftraced put in the file's CPU statistics (@key is "ftraced-origin: "
 * or "ftraced-cause: "): where the file came from and why it was taken.
 * Return: a copy of its value (without the newline), or NULL.
 */
static char *ftraced_line(const struct v7_reader *r, const char *key)
{
	for (size_t i = 0; i < v7_reader_n_cpustat(r); i++) {
		const char *t = v7_reader_cpustat(r, i), *p = t ? strstr(t, key) : NULL;

		if (p && (p == t || p[-1] == '\n')) {
			p += strlen(key);
			return strndup(p, strcspn(p, "\n"));
		}
	}
	return NULL;
}

/* Where the file came from and why it was taken: into @json, or printed (@json NULL). */
static void put_origin(const struct v7_reader *r, json_t *json)
{
	_cleanup_free_ char *origin = ftraced_line(r, "ftraced-origin: ");
	_cleanup_free_ char *cause = ftraced_line(r, "ftraced-cause: ");

	if (json) {
		if (origin)
			json_put_text(json, "origin", origin);
		if (cause)
			json_put_text(json, "cause", cause);
		return;
	}
	if (origin)
		printf("origin:      %s\n", origin);
	if (cause)
		printf("taken for:   %s\n", cause);
}

/*
 * record -m: the raw bytes of older data @cpu dropped, in its statistics at
 * the end of the file ("CPU: N" alone). Return: 0 if it says none.
 */
static uint64_t evicted_bytes(const struct v7_reader *r, uint32_t cpu)
{
	char head[32];

	snprintf(head, sizeof(head), "CPU: %u\n", cpu);
	for (size_t i = 0; i < v7_reader_n_cpustat(r); i++) {
		const char *t = v7_reader_cpustat(r, i), *p;

		if (!t || strncmp(t, head, strlen(head)) != 0)
			continue;
		p = strstr(t, "\nftraced-evicted-bytes: ");
		return p ? strtoull(p + strlen("\nftraced-evicted-bytes: "), NULL, 10) : 0;
	}
	return 0;
}

static int open_file(const char *command, const char *path, int *ret_fd, struct v7_reader **ret,
		     char *problem, size_t n_problem)
{
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		print_error(command, "cannot open '%s': %m", path);
		return -errno;
	}
	r = v7_reader_open(fd, ret, problem, n_problem);
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

static char *trimmed(const char *s)
{
	char *t = strdup(s ? s : "");
	size_t n;

	if (!t)
		return NULL;
	n = strlen(t);
	while (n > 0 && (t[n - 1] == '\n' || t[n - 1] == ' '))
		t[--n] = '\0';
	return t;
}

/* Where the trace clock stood against the wall clock when the file was written. */
static void print_wall_clock(bool has_date, long long date_us)
{
	char when[WALL_TEXT_MAX];

	if (!has_date) {
		printf("wall clock:  not recorded (times are the trace clock's)\n");
		return;
	}
	wall_format(date_us, 0, when, sizeof(when));
	printf("wall clock:  trace time 0 is %s (trace-cmd report adds it; --nodate does not)\n",
	       when);
}

/* Each CPU's first and last event on the wall clock, and the whole file's span. */
static void print_wall_span(const struct v7_reader *r, const uint64_t (*span)[2], size_t n_cpus,
			    long long date_us)
{
	uint64_t first = UINT64_MAX, last = 0;
	char from[WALL_TEXT_MAX], to[WALL_TEXT_MAX];

	for (size_t i = 0; i < n_cpus; i++) {
		if (span[i][0] == UINT64_MAX)
			continue;
		if (first == UINT64_MAX)
			printf("\nWall clock (UTC), first and last event:\n");
		wall_format(date_us, span[i][0], from, sizeof(from));
		wall_format(date_us, span[i][1], to, sizeof(to));
		printf("  CPU %-4u %s  %s\n", v7_reader_cpu(r, i)->cpu, from, to);
		first = MIN(first, span[i][0]);
		last = MAX(last, span[i][1]);
	}
	if (first == UINT64_MAX)
		return;
	wall_format(date_us, first, from, sizeof(from));
	wall_format(date_us, last, to, sizeof(to));
	printf("  all      %s  %s\n", from, to);
}

/* What info --json says of the whole file; @date_us NULL: no wall-clock anchor. */
static void put_file_json(json_t *json, struct v7_reader *r, const char *clock,
			  const char *uname_text, const char *version, const long long *date_us)
{
	char id[24];

	json_put_u64(json, "version", 7);
	json_put_text(json, "compression", v7_reader_compressed(r) ? "zstd" : "none");
	json_put_text(json, "metadata_compression",
		      v7_reader_metadata_compressed(r) ? "zstd" : "none");
	json_put_u64(json, "page_size", v7_reader_page_size(r));
	json_put_text(json, "clock", v7_reader_clock(r));
	json_put_text(json, "trace_clock", clock);
	json_put_text(json, "uname", uname_text);
	json_put_text(json, "writer", version);
	if (date_us)
		json_put(json, "date_offset_us", json_integer(*date_us));
	snprintf(id, sizeof(id), "%016" PRIx64, v7_reader_trace_id(r));
	json_put_text(json, "trace_id", id);
	json_put_u64(json, "cpu_count", v7_reader_cpu_count(r));
}

/* A CPU's line of info --json. */
static json_t *cpu_json(struct v7_reader *r, const struct v7_reader_cpu *cpu,
			const struct v7_cpu_summary *w, uint32_t chunks, uint64_t lost,
			const long long *date_us)
{
	char wall[WALL_TEXT_MAX];
	json_t *c = json_object();
	uint64_t from_ts = 0;
	bool dropped = false;

	if (!c)
		return NULL;
	json_put_text(c, "buffer", cpu->buffer);
	json_put_u64(c, "cpu", cpu->cpu);
	json_put_u64(c, "bytes", cpu->size);
	json_put_u64(c, "chunks", chunks);
	json_put_u64(c, "pages", w->pages);
	json_put_u64(c, "events", w->events);
	json_put_u64(c, "first_ts", w->first_ts);
	json_put_u64(c, "last_ts", w->last_ts);
	if (date_us && w->events > 0) {
		wall_format(*date_us, w->first_ts, wall, sizeof(wall));
		json_put_text(c, "first_wall", wall);
		wall_format(*date_us, w->last_ts, wall, sizeof(wall));
		json_put_text(c, "last_wall", wall);
	}
	json_put_u64(c, "lost_events", lost);
	json_put_u64(c, "missed_pages", w->missed_pages);
	json_put_u64(c, "missed_events", w->missed_events);
	if (complete_from(r, cpu->cpu, &from_ts, &dropped)) {
		json_put_u64(c, "complete_from_ts", from_ts);
		json_put_bool(c, "older_data_dropped", dropped);
		json_put_u64(c, "evicted_raw_bytes", evicted_bytes(r, cpu->cpu));
	}
	return c;
}

/*
 * A flight recorder snapshot, or a record -m: from when each CPU's data is
 * complete, and (record -m) how much older data it dropped.
 */
static void print_complete_from(struct v7_reader *r, size_t n_cpus)
{
	for (size_t i = 0; i < n_cpus; i++) {
		const struct v7_reader_cpu *cpu = v7_reader_cpu(r, i);
		uint64_t from_ts = 0, evicted = evicted_bytes(r, cpu->cpu);
		bool dropped = false;
		char size[32], what[64] = " (older data was dropped)";

		if (!complete_from(r, cpu->cpu, &from_ts, &dropped))
			continue;
		if (i == 0)
			printf("\nFlight recorder snapshot or record -m: each CPU's data is complete "
			       "from\n");
		if (evicted) {
			print_size(size, sizeof(size), evicted);
			snprintf(what, sizeof(what), " (older data was dropped: %s)", size);
		}
		if (from_ts)
			printf("  CPU %u: %.6f%s\n", cpu->cpu, (double)from_ts / 1e9,
			       dropped ? what : "");
		else
			printf("  CPU %u: the start of capture\n", cpu->cpu);
	}
}

/* Events by type: printed, or into @events_json. */
static void report_events(const uint64_t *by_id, const struct names *names, json_t *events_json)
{
	if (!events_json)
		printf("\nEvents by type:\n");
	for (int id = 0; id < EVENT_IDS_MAX; id++) {
		if (!by_id[id])
			continue;
		if (events_json) {
			char unknown[32];

			snprintf(unknown, sizeof(unknown), "id %d", id);
			json_object_set_new(events_json, names->name[id] ?: unknown,
					    json_u64(by_id[id]));
		} else {
			printf("%10" PRIu64 "  %s", by_id[id], names->name[id] ? names->name[id] : "");
			if (!names->name[id])
				printf("(unknown id %d)", id);
			printf("\n");
		}
	}
}

int cmd_info(const struct client_options *o, int argc, char *argv[])
{
	_cleanup_(v7_reader_freep) struct v7_reader *r = NULL;
	_cleanup_free_ uint64_t *by_id = NULL, (*span)[2] = NULL;
	_cleanup_(names_freep) struct names *names = NULL;
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *clock = NULL, *uname_text = NULL, *version = NULL;
	_cleanup_(json_decrefp) json_t *json = NULL, *cpus_json = NULL, *events_json = NULL;
	char problem[512] = "", size[32];
	long long date_us = 0;
	bool has_date;
	size_t n_cpus;
	struct stat st;
	int err = 0;

	if (argc != 2 || argv[1][0] == '-') {
		printf("Usage: ftracectl info FILE\n\nShow what a trace-cmd v7 file holds.\n");
		return argc == 2 && strcmp(argv[1], "--help") == 0 ? EXIT_OK : EXIT_USAGE;
	}
	if (open_file("info", argv[1], &fd, &r, problem, sizeof(problem)) < 0) {
		if (problem[0])
			print_error("info", "'%s' is not a readable v7 file: %s", argv[1], problem);
		return EXIT_FAILED;
	}
	by_id = calloc(EVENT_IDS_MAX, sizeof(*by_id));
	names = calloc(1, sizeof(*names));
	if (!by_id || !names)
		return EXIT_FAILED;
	for (int sec = V7_SEC_FTRACE_EVENTS; sec <= V7_SEC_EVENT_FORMATS; sec++) {
		uint8_t *body;
		size_t n;

		if (v7_reader_section(r, (uint16_t)sec, &body, &n) == 0) {
			v7_formats_foreach(body, n, sec == V7_SEC_EVENT_FORMATS, add_name, names);
			free(body);
		}
	}
	fstat(fd, &st);
	clock = trimmed(v7_reader_option(r, V7_READER_TRACE_CLOCK));
	uname_text = trimmed(v7_reader_option(r, V7_READER_UNAME));
	version = trimmed(v7_reader_option(r, V7_READER_VERSION));
	n_cpus = v7_reader_n_cpus(r);
	has_date = wall_date_parse(v7_reader_option(r, V7_READER_DATE), &date_us);
	span = calloc(MAX(n_cpus, (size_t)1), sizeof(*span)); /* first, last event per CPU */
	if (!span)
		return EXIT_FAILED;
	if (o->json) {
		json = json_object();
		cpus_json = json_array();
		events_json = json_object();
		if (!json || !cpus_json || !events_json)
			return EXIT_FAILED;
		json_put_text(json, "file", argv[1]);
		json_put_u64(json, "bytes", (uint64_t)st.st_size);
		put_file_json(json, r, clock, uname_text, version, has_date ? &date_us : NULL);
		put_origin(r, json);
	} else {
		print_size(size, sizeof(size), (uint64_t)st.st_size);
		printf("file:        %s (%s)\n", argv[1], size);
		printf("format:      trace-cmd v7, %s, %u-byte pages\n",
		       v7_reader_compressed(r) ? "zstd" : v7_reader_metadata_compressed(r) ?
		       "uncompressed data (zstd metadata)" : "uncompressed", v7_reader_page_size(r));
		printf("clock:       %s\n", v7_reader_clock(r)[0] ? v7_reader_clock(r) : "?");
		printf("uname:       %s\n", uname_text[0] ? uname_text : "?");
		printf("written by:  %s\n", version[0] ? version : "?");
		print_wall_clock(has_date, date_us);
		printf("trace id:    %016" PRIx64 "\n", v7_reader_trace_id(r));
		printf("CPUs:        %u\n", v7_reader_cpu_count(r));
		put_origin(r, NULL);
		printf("\n%-10s %5s %10s %7s %8s %9s %16s %16s %9s %7s\n", "BUFFER", "CPU", "BYTES",
		       "CHUNKS", "PAGES", "EVENTS", "FIRST", "LAST", "LOST", "MISSED");
	}
	for (size_t i = 0; i < n_cpus; i++) {
		const struct v7_reader_cpu *cpu = v7_reader_cpu(r, i);
		uint64_t lost = v7_lost_events(r, cpu->cpu);
		struct v7_cpu_summary w;
		char cpu_problem[512];
		uint32_t chunks = 0;
		uint8_t word[4];

		if (v7_reader_compressed(r) && cpu->size >= 4 &&
		    pread(fd, word, 4, (off_t)cpu->offset) == 4)
			chunks = get_le32(word);
		if (v7_walk_cpu(r, i, by_id, &w, cpu_problem, sizeof(cpu_problem)) < 0 && !err) {
			err = -EBADMSG;
			snprintf(problem, sizeof(problem), "%s", cpu_problem);
		}
		span[i][0] = w.events > 0 ? w.first_ts : UINT64_MAX;
		span[i][1] = w.last_ts;
		if (o->json) {
			json_t *c = cpu_json(r, cpu, &w, chunks, lost, has_date ? &date_us : NULL);

			if (!c)
				return EXIT_FAILED;
			json_array_append_new(cpus_json, c);
		} else {
			print_size(size, sizeof(size), cpu->size);
			printf("%-10s %5u %10s %7u %8" PRIu64 " %9" PRIu64 " %16.6f %16.6f %9" PRIu64
			       " %7" PRIu64 "\n", cpu->buffer[0] ? cpu->buffer : "(top)",
			       cpu->cpu, size, chunks, w.pages, w.events, (double)w.first_ts / 1e9,
			       (double)w.last_ts / 1e9, lost, w.missed_pages);
		}
	}
	if (!o->json && has_date)
		print_wall_span(r, span, n_cpus, date_us);
	if (!o->json)
		print_complete_from(r, n_cpus);
	report_events(by_id, names, events_json);
	if (o->json) {
		json_put(json, "cpus", TAKE_PTR(cpus_json));
		json_put(json, "events", TAKE_PTR(events_json));
		json_print(TAKE_PTR(json));
	}
	if (err < 0) {
		print_error("info", "'%s' is damaged: %s", argv[1], problem[0] ? problem :
			    v7_reader_error(r));
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

int cmd_verify(const struct client_options *o, int argc, char *argv[])
{
	_cleanup_close_ int fd = -EBADF;
	uint64_t events, pages;
	char problem[512];
	int err;

	if (argc != 2 || argv[1][0] == '-') {
		printf("Usage: ftracectl verify FILE\n\nCheck every invariant of a trace-cmd v7 file; "
		       "exit 1 naming the first problem.\n");
		return argc == 2 && strcmp(argv[1], "--help") == 0 ? EXIT_OK : EXIT_USAGE;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		print_error("verify", "cannot open '%s': %m", argv[1]);
		return EXIT_FAILED;
	}
	err = v7_verify(fd, &events, &pages, problem, sizeof(problem));
	if (o->json) {
		json_t *v = json_object();

		if (v) {
			json_put_text(v, "file", argv[1]);
			json_put_bool(v, "valid", err >= 0);
			if (err < 0) {
				json_put_text(v, "problem", problem[0] ? problem : strerror(-err));
			} else {
				json_put_u64(v, "events", events);
				json_put_u64(v, "pages", pages);
			}
		}
		json_print(v);
	}
	if (err < 0) {
		print_error("verify", "%s: invalid: %s", argv[1], problem[0] ? problem :
			    strerror(-err));
		return EXIT_FAILED;
	}
	if (!o->json)
		printf("%s: valid: %" PRIu64 " events in %" PRIu64 " pages\n", argv[1], events,
		       pages);
	return EXIT_OK;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftraced-count FILE...: counts the events of trace-cmd v7 files (ours or
 * trace-cmd's) with ftraced's own reader, which is ~30x faster than
 * libtracecmd, and checks the numbered markers ftraced-loadgen writes
 * ("ftseq=TAG:CPU:N"): per generator CPU, how many arrived, how many were
 * distinct, duplicated or missing, and whether they came in order. Several
 * files are read as one capture (segments, in order). Prints one JSON object.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/rb-page.h"
#include "lib/v7-cursor.h"
#include "lib/v7-format.h"
#include "lib/v7-meta.h"
#include "lib/v7-reader.h"

#define GEN_CPUS_MAX 1024
#define PRINT_BUF_OFFSET 16 /* common fields (8) + unsigned long ip (8) */

struct generator {
	unsigned long long count;
	unsigned long long min;
	unsigned long long max;
	unsigned long long last;
	bool any;
	bool in_order;
	uint8_t *seen; /* bitmap of numbers seen */
	size_t seen_bytes;
	unsigned long long dups;
};

struct counter {
	const char *tag;
	size_t tag_len;
	int print_id;
	unsigned long long events;
	unsigned long long markers;
	unsigned long long pages;
	unsigned long long missed_pages;
	unsigned long long missed_stored;
	struct generator gen[GEN_CPUS_MAX];
};

static void mark(struct generator *g, unsigned long long n)
{
	size_t byte = (size_t)(n / 8);

	if (byte >= g->seen_bytes) {
		size_t size = byte + 1 > g->seen_bytes * 2 ? byte + 1 : g->seen_bytes * 2;
		uint8_t *p = realloc(g->seen, size);

		if (!p) {
			fprintf(stderr, "ftraced-count: out of memory\n");
			exit(1);
		}
		memset(p + g->seen_bytes, 0, size - g->seen_bytes);
		g->seen = p;
		g->seen_bytes = size;
	}
	if (g->seen[byte] & (1u << (n % 8)))
		g->dups++;
	g->seen[byte] |= (uint8_t)(1u << (n % 8));
	if (g->any && n <= g->last)
		g->in_order = false;
	if (!g->any)
		g->in_order = true;
	g->any = true;
	g->last = n;
	if (n > g->max)
		g->max = n;
	if (g->count == 0 || n < g->min)
		g->min = n;
	g->count++;
}

static void parse_marker(struct counter *c, const struct rb_event *e)
{
	const char *p, *end = (const char *)e->data + e->size;
	unsigned long long cpu, n;
	char *q;

	if (e->size <= PRINT_BUF_OFFSET)
		return;
	p = (const char *)e->data + PRINT_BUF_OFFSET;
	if ((size_t)(end - p) < 6 + c->tag_len + 4 || memcmp(p, "ftseq=", 6) != 0)
		return;
	p += 6;
	if (memcmp(p, c->tag, c->tag_len) != 0 || p[c->tag_len] != ':')
		return;
	p += c->tag_len + 1;
	/* The buffer is NUL-terminated by the kernel; strtoull stops at ':' and '\n'. */
	if (!memchr(p, '\0', (size_t)(end - p)))
		return;
	cpu = strtoull(p, &q, 10);
	if (*q != ':' || cpu >= GEN_CPUS_MAX)
		return;
	n = strtoull(q + 1, &q, 10);
	c->markers++;
	mark(&c->gen[cpu], n);
}

static int on_event(const struct rb_event *e, void *userdata)
{
	struct counter *c = userdata;

	c->events++;
	if (e->size >= 2 && c->print_id >= 0 && (e->data[0] | e->data[1] << 8) == c->print_id)
		parse_marker(c, e);
	return 0;
}

static int on_page(const uint8_t *page, uint32_t page_size, void *userdata)
{
	struct counter *c = userdata;
	struct rb_page_info info;

	c->pages++;
	if (rb_page_parse(page, page_size, &info) == 0 && info.missed_events) {
		c->missed_pages++;
		c->missed_stored += info.n_missed;
	}
	return rb_page_foreach_event(page, page_size, on_event, c);
}

static int count_file(struct counter *c, const char *path)
{
	struct v7_reader *r = NULL;
	uint8_t *formats = NULL;
	size_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ftraced-count: %s: %m\n", path);
		return -errno;
	}
	err = v7_reader_open(fd, &r, NULL, 0);
	if (err < 0) {
		fprintf(stderr, "ftraced-count: %s: not a readable v7 file: %s\n", path,
			strerror(-err));
		close(fd);
		return err;
	}
	c->print_id = -1;
	if (v7_reader_section(r, V7_SEC_FTRACE_EVENTS, &formats, &n) == 0)
		v7_find_event_id(formats, n, /* per_system= */ false, "print", &c->print_id);
	free(formats);
	for (size_t i = 0; i < v7_reader_n_cpus(r) && err == 0; i++)
		err = v7_reader_foreach_page(r, i, on_page, c);
	if (err < 0)
		fprintf(stderr, "ftraced-count: %s: damaged data: %s\n", path, strerror(-err));
	v7_reader_free(r);
	close(fd);
	return err;
}

int main(int argc, char *argv[])
{
	static struct counter c;
	bool first = true;
	int opt;

	c.tag = "t";
	while ((opt = getopt(argc, argv, "t:")) >= 0) {
		if (opt != 't') {
			fprintf(stderr, "Usage: ftraced-count [-t TAG] FILE...\n");
			return 2;
		}
		c.tag = optarg;
	}
	c.tag_len = strlen(c.tag);
	if (optind >= argc) {
		fprintf(stderr, "Usage: ftraced-count [-t TAG] FILE...\n");
		return 2;
	}
	for (int i = optind; i < argc; i++)
		if (count_file(&c, argv[i]) < 0)
			return 1;

	printf("{\"events\": %llu, \"markers\": %llu, \"pages\": %llu, \"missed_pages\": %llu, "
	       "\"missed_events_stored\": %llu, \"generators\": {", c.events, c.markers, c.pages,
	       c.missed_pages, c.missed_stored);
	for (unsigned cpu = 0; cpu < GEN_CPUS_MAX; cpu++) {
		struct generator *g = &c.gen[cpu];
		unsigned long long distinct;

		if (!g->any)
			continue;
		distinct = g->count - g->dups;
		printf("%s\"%u\": {\"count\": %llu, \"distinct\": %llu, \"duplicates\": %llu, "
		       "\"min\": %llu, \"max\": %llu, \"missing_below_max\": %llu, \"in_order\": %s}",
		       first ? "" : ", ", cpu, g->count, distinct, g->dups, g->min, g->max,
		       g->max + 1 - distinct, g->in_order ? "true" : "false");
		first = false;
		free(g->seen);
	}
	printf("}}\n");
	return 0;
}

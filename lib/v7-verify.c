// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Checking a v7 file: every invariant the format lets us check, naming the
 * first problem. The header, the options chain, the section chain to EOF
 * and every offset are checked by the reader as it opens the file; here
 * each metadata section is decompressed (one checksummed frame), each CPU
 * region is walked chunk by chunk (framing, zstd checksums, whole pages)
 * and page by page (commit size, event headers), and timestamps may never
 * go back within a CPU. Pure file reading; works on trace-cmd's files too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftraced/macro.h"
#include "lib/rb-page.h"
#include "lib/v7-cursor.h"
#include "lib/v7-format.h"
#include "lib/v7-reader.h"
#include "lib/v7-verify.h"


struct walk {
	const struct v7_reader_cpu *cpu;
	struct v7_cpu_summary *sum;
	uint64_t *by_id;
	char *problem;
	size_t n_problem;
};

static int on_event(const struct rb_event *e, void *userdata)
{
	struct walk *w = userdata;

	if (w->sum->events > 0 && e->ts < w->sum->last_ts) {
		snprintf(w->problem, w->n_problem, "CPU %u: page %" PRIu64 ": timestamp goes back "
			 "(%" PRIu64 " after %" PRIu64 ")", w->cpu->cpu, w->sum->pages, e->ts,
			 w->sum->last_ts);
		return -EBADMSG;
	}
	if (w->sum->events == 0)
		w->sum->first_ts = e->ts;
	w->sum->last_ts = e->ts;
	w->sum->events++;
	if (w->by_id && e->size >= 2)
		w->by_id[get_le16(e->data)]++;
	return 0;
}

static int on_page(const uint8_t *page, uint32_t page_size, void *userdata)
{
	struct walk *w = userdata;
	struct rb_page_info info;
	int r;

	r = rb_page_parse(page, page_size, &info);
	if (r < 0) {
		snprintf(w->problem, w->n_problem, "CPU %u: page %" PRIu64 ": commit size larger "
			 "than the page", w->cpu->cpu, w->sum->pages);
		return r;
	}
	if (info.missed_events) {
		w->sum->missed_pages++;
		w->sum->missed_events += info.n_missed;
	}
	r = rb_page_foreach_event(page, page_size, on_event, w);
	if (r < 0 && !w->problem[0])
		snprintf(w->problem, w->n_problem, "CPU %u: page %" PRIu64 ": malformed event "
			 "header", w->cpu->cpu, w->sum->pages);
	w->sum->pages++;
	return r;
}

/**
 * v7_walk_cpu() - walk one CPU region: chunks, pages, events.
 * @r: reader
 * @i: region index
 * @by_id: V7_EVENT_IDS_MAX counters to add events to by id, or NULL
 * @ret: what was found (also on failure: up to the problem)
 * @problem: receives the first problem
 * @n_problem: its size
 *
 * Return: 0 or -EBADMSG (or -errno).
 */
int v7_walk_cpu(struct v7_reader *r, size_t i, uint64_t *by_id, struct v7_cpu_summary *ret,
		char *problem, size_t n_problem)
{
	struct walk w = { .cpu = v7_reader_cpu(r, i), .sum = ret, .by_id = by_id,
			  .problem = problem, .n_problem = n_problem };
	int err;

	*ret = (struct v7_cpu_summary){};
	problem[0] = '\0';
	err = v7_reader_foreach_page(r, i, on_page, &w);
	if (err < 0 && !problem[0])
		snprintf(problem, n_problem, "%s", v7_reader_error(r)[0] ? v7_reader_error(r) :
			 strerror(-err));
	return err;
}

/**
 * v7_verify() - check a whole file.
 * @fd: the file
 * @ret_events: events found
 * @ret_pages: pages found
 * @problem: receives the first problem
 * @n_problem: its size
 *
 * Return: 0 if valid, -EBADMSG naming the problem, or another -errno.
 */
int v7_verify(int fd, uint64_t *ret_events, uint64_t *ret_pages, char *problem,
	      size_t n_problem)
{
	_cleanup_(v7_reader_freep) struct v7_reader *r = NULL;
	uint64_t events = 0, pages = 0;
	int err;

	problem[0] = '\0';
	err = v7_reader_open(fd, &r, problem, n_problem);
	if (err < 0)
		return err;
	if (!v7_reader_has_strings(r)) {
		snprintf(problem, n_problem, "no STRINGS section: the file ends early (trace-cmd "
			 "and ftraced always write one last)");
		return -EBADMSG;
	}
	for (uint16_t sec = V7_SEC_STRINGS; sec <= V7_SEC_LAST_META; sec++) {
		uint8_t *body;
		size_t n;

		err = v7_reader_section(r, sec, &body, &n);
		if (err == -ENOENT)
			continue;
		if (err < 0) {
			snprintf(problem, n_problem, "%s", v7_reader_error(r));
			return err;
		}
		free(body);
	}
	for (size_t i = 0; i < v7_reader_n_cpus(r); i++) {
		struct v7_cpu_summary sum;

		err = v7_walk_cpu(r, i, NULL, &sum, problem, n_problem);
		if (err < 0)
			return err;
		events += sum.events;
		pages += sum.pages;
	}
	*ret_events = events;
	*ret_pages = pages;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The flight recorder's pure parts: the chunk ring's budget and references,
 * --trigger parsing, and trimming a ring-buffer page at a time.
 */
#undef NDEBUG
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "daemon/base/bounds.h"
#include "daemon/capture/chunk-ring.h"
#include "daemon/flight/trigger-spec.h"
#include "ftraced/macro.h"
#include "lib/rb-page.h"

static struct chunk *make_chunk(size_t size, uint64_t ts)
{
	struct chunk *c = chunk_new(size);

	assert(c);
	memset(c->data, (int)ts, size);
	c->raw_size = (uint32_t)size * 10;
	c->first_ts = ts;
	c->last_ts = ts + 9;
	return c;
}

static void test_ring(void)
{
	/* Room for three chunks of 1000 bytes and their headers, not four. */
	uint64_t budget = 3 * (sizeof(struct chunk) + 1000) + 500;
	struct chunk_ring *r;
	struct chunk_ring_stats st;
	struct chunk_list l, later;

	assert(chunk_ring_new(budget, &r) == 0);
	chunk_ring_stats(r, &st);
	assert(st.chunks == 0 && st.first_ts == 0);
	for (uint64_t i = 1; i <= 3; i++)
		assert(chunk_ring_push(r, make_chunk(1000, i * 100)) == 0);
	chunk_ring_stats(r, &st);
	assert(st.chunks == 3 && st.evicted_chunks == 0 && st.raw_bytes == 30000);
	assert(chunk_ring_collect(r, &l) == 0);
	assert(l.n == 3 && !l.evicted && l.bytes == 3000 && l.chunks[0]->first_ts == 100);

	/* A fourth evicts the oldest; the list taken before still holds it. */
	assert(chunk_ring_push(r, make_chunk(1000, 400)) == 0);
	chunk_ring_stats(r, &st);
	assert(st.chunks == 3 && st.evicted_chunks == 1 && st.evicted_raw_bytes == 10000);
	assert(st.first_ts == 200 && st.last_ts == 409 && st.bytes <= budget);
	assert(l.chunks[0]->first_ts == 100 && l.chunks[0]->data[999] == 100);
	assert(chunk_ring_collect(r, &later) == 0);
	assert(later.n == 3 && later.evicted && later.chunks[0]->first_ts == 200);

	/* A big chunk evicts as many as it takes (here two more), never itself. */
	assert(chunk_ring_push(r, make_chunk(2500, 500)) == 0);
	chunk_ring_stats(r, &st);
	assert(st.chunks == 2 && st.first_ts == 400 && st.evicted_chunks == 3);

	chunk_ring_clear(r);
	chunk_ring_stats(r, &st);
	assert(st.chunks == 0 && st.bytes == 0 && st.evicted_chunks == 0);
	chunk_list_done(&l);
	chunk_list_done(&later);
	chunk_ring_free(r);

	/* Many chunks: the slot array grows past its first size and wraps. */
	assert(chunk_ring_new(200 * (sizeof(struct chunk) + 10), &r) == 0);
	for (uint64_t i = 0; i < 1000; i++)
		assert(chunk_ring_push(r, make_chunk(10, i)) == 0);
	assert(chunk_ring_collect(r, &l) == 0);
	assert(l.n == 200);
	for (size_t i = 0; i < l.n; i++)
		assert(l.chunks[i]->first_ts == 800 + i);
	chunk_list_done(&l);
	chunk_ring_free(r);
}

static void parse_ok(const char *text, const char *event, const char *filter, uint64_t post,
		     uint64_t interval, uint32_t max)
{
	struct trigger_spec t;
	char error[256] = "";

	if (trigger_spec_parse(text, &t, error, sizeof(error)) < 0) {
		fprintf(stderr, "'%s': %s\n", text, error);
		assert(0);
	}
	assert(strcmp(t.event, event) == 0);
	if (strcmp(t.filter, filter) != 0) {
		fprintf(stderr, "'%s': filter '%s', expected '%s'\n", text, t.filter, filter);
		assert(0);
	}
	assert(t.post_ms == post && t.min_interval_ms == interval && t.max == max);
}

static void parse_bad(const char *text, const char *message)
{
	struct trigger_spec t;
	char error[256] = "";

	assert(trigger_spec_parse(text, &t, error, sizeof(error)) == -EINVAL);
	if (!strstr(error, message)) {
		fprintf(stderr, "'%s': '%s' lacks '%s'\n", text, error, message);
		assert(0);
	}
}

static void test_trigger_spec(void)
{
	const uint64_t dflt = TRIGGER_MIN_INTERVAL_MS_DEFAULT;

	parse_ok("oom", "oom:mark_victim", "", 0, dflt, 0);
	parse_ok("hung-task,post=2s,max=3", "sched:sched_process_hang", "", 2000, dflt, 3);
	parse_ok("signal=SIGSEGV", "signal:signal_deliver", "sig == 11 && sa_handler == 0", 0,
		 dflt, 0);
	parse_ok("signal=BUS,min-interval=1m", "signal:signal_deliver",
		 "sig == 7 && sa_handler == 0", 0, 60000, 0);
	/* Commas inside a filter stay there; only a known "key=" starts a new item. */
	parse_ok("event=sched:sched_switch,filter=prev_comm ~ \"a,b*\",post=100ms",
		 "sched:sched_switch", "prev_comm ~ \"a,b*\"", 100, dflt, 0);
	parse_ok("oom,filter=pid == 1", "oom:mark_victim", "pid == 1", 0, dflt, 0);
	parse_ok("warn,filter=common_pid != 0", "printk:console",
		 "(msg ~ \"*WARNING: CPU*\") && (common_pid != 0)", 0, dflt, 0);
	/* post longer than the default interval pushes the interval along. */
	parse_ok("oom,post=30s", "oom:mark_victim", "", 30000, 30000, 0);
	/* pre= bounds what comes before the event; a filter's comma before it stays. */
	{
		struct trigger_spec t;
		char error[256];

		assert(trigger_spec_parse("oom,pre=30s,post=2s", &t, error, sizeof(error)) == 0);
		assert(t.pre_ms == 30000 && t.post_ms == 2000);
		assert(trigger_spec_parse("oom,filter=pid > 1,pre=1m", &t, error,
					  sizeof(error)) == 0);
		assert(t.pre_ms == 60000 && strcmp(t.filter, "pid > 1") == 0);
		assert(trigger_spec_parse("oom", &t, error, sizeof(error)) == 0 && t.pre_ms == 0);
	}

	parse_bad("", "empty trigger");
	parse_bad("nope", "unknown trigger 'nope'");
	parse_bad("post=1s", "must begin with");
	parse_bad("event=sched", "one SYSTEM:EVENT");
	parse_bad("event=sched:*", "one SYSTEM:EVENT");
	parse_bad("signal=SIGNOPE", "dying of a fatal signal");
	parse_bad("signal=SIGUSR1", "event=signal:signal_deliver,filter=sig==N");
	parse_bad("oom,post=11m", "at most 10 minutes");
	parse_bad("oom,pre=0", "bad pre '0'");
	parse_bad("oom,pre=169h", "at most 7 days");
	parse_bad("oom,pre=soon", "bad pre 'soon'");
	parse_bad("oom,post=5s,min-interval=1s", "at least post");
	parse_bad("oom,max=0", "max must be");
	parse_bad("oom,filter=", "empty filter");
	parse_bad("oom,color=red", "unknown key 'color'");
	parse_bad("oom,post=1s,foo=1", "unknown key 'foo'");
	parse_bad("oom,bogus", "not KEY=VALUE");
}

/* A page: header ts 1000, events of 8 bytes of payload at +10 each (ts 1010, 1020, ...). */
static void make_page(uint8_t *page, uint32_t size, unsigned n_events)
{
	uint8_t *p = page + 16;

	memset(page, 0, size);
	put_le64(page, 1000);
	for (unsigned i = 0; i < n_events; i++) {
		put_le32(p, (10u << 5) | 2u); /* delta 10, type_len 2: 8 bytes of data */
		put_le32(p + 4, 0x1234);
		put_le32(p + 8, i);
		p += 12;
	}
	put_le64(page + 8, (uint64_t)(p - page - 16) | (UINT64_C(1) << 31));
}

struct seen {
	uint64_t ts[64];
	uint32_t id[64];
	unsigned n;
};

static int collect(const struct rb_event *e, void *userdata)
{
	struct seen *s = userdata;

	s->ts[s->n] = e->ts;
	s->id[s->n++] = get_le32(e->data + 4);
	return 0;
}

static void test_page_trim(void)
{
	uint8_t page[4096];
	struct rb_page_info info;
	struct seen s = {};

	make_page(page, sizeof(page), 10);
	assert(rb_page_trim(page, sizeof(page), 500) == 120); /* nothing older */
	assert(rb_page_trim(page, sizeof(page), 1010) == 120);
	assert(rb_page_trim(page, sizeof(page), 1035) == 84); /* 1010..1030 go */
	assert(rb_page_parse(page, sizeof(page), &info) == 0);
	assert(info.ts == 1030 && info.data_size == 84 && info.missed_events);
	assert(rb_page_foreach_event(page, sizeof(page), collect, &s) == 0);
	assert(s.n == 7 && s.ts[0] == 1040 && s.id[0] == 3 && s.ts[6] == 1100 && s.id[6] == 9);
	assert(rb_page_trim(page, sizeof(page), 2000) == 0); /* everything older */

	/* A malformed page is an error, not a read past it. */
	make_page(page, sizeof(page), 10);
	put_le64(page + 8, 5000);
	assert(rb_page_trim(page, sizeof(page), 1035) == -EBADMSG);
}

static void test_page_cut_after(void)
{
	uint8_t page[4096];
	struct rb_page_info info;
	struct seen s = {};
	uint64_t last;

	make_page(page, sizeof(page), 10);
	assert(rb_page_cut_after(page, sizeof(page), UINT64_MAX, &last) == 120 && last == 1100);
	assert(rb_page_cut_after(page, sizeof(page), 1100, &last) == 120 && last == 1100);
	assert(rb_page_cut_after(page, sizeof(page), 1045, &last) == 48 && last == 1040);
	assert(rb_page_parse(page, sizeof(page), &info) == 0);
	assert(info.ts == 1000 && info.data_size == 48 && info.missed_events);
	assert(rb_page_foreach_event(page, sizeof(page), collect, &s) == 0);
	assert(s.n == 4 && s.ts[0] == 1010 && s.ts[3] == 1040 && s.id[3] == 3);
	/* What follows the cut is zeroed: the file holds nothing of the events dropped. */
	for (size_t k = 16 + 48; k < sizeof(page); k++)
		assert(page[k] == 0);
	/* Nothing at or before: empty. Both cuts together: a window. */
	assert(rb_page_cut_after(page, sizeof(page), 1005, &last) == 0 && last == 1000);
	make_page(page, sizeof(page), 10);
	assert(rb_page_trim(page, sizeof(page), 1035) == 84);
	assert(rb_page_cut_after(page, sizeof(page), 1070, &last) == 48 && last == 1070);
	s.n = 0;
	assert(rb_page_foreach_event(page, sizeof(page), collect, &s) == 0);
	assert(s.n == 4 && s.ts[0] == 1040 && s.ts[3] == 1070);
	make_page(page, sizeof(page), 10);
	put_le64(page + 8, 5000);
	assert(rb_page_cut_after(page, sizeof(page), 1035, &last) == -EBADMSG);
}

int main(void)
{
	test_ring();
	test_trigger_spec();
	test_page_trim();
	test_page_cut_after();
	printf("flight: OK\n");
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One CPU region as babeltrace2 messages: stream beginning; for each
 * sub-buffer that holds events, a packet (its events, decoded with the
 * file's formats); discarded-events messages where events were lost; stream
 * end. Pulls the region a chunk at a time (lib/v7-cursor.c), so memory is a
 * chunk and a page's events, whatever the file's size.
 *
 * Losses: a sub-buffer the kernel flags as following lost events gets a
 * discarded-events message before its packet, with the count when the kernel
 * stored one. The CPU's statistics (CPUSTAT: what the kernel overwrote or
 * dropped, what ftraced could not store) count them all: what they count
 * beyond the flagged sub-buffers has no known place in time, and goes in one
 * message at the stream's end. Each message's time range is the one CTF
 * gives the count in a packet's context (sink.ctf.fs checks it): from the
 * previous packet's end to the end of the packet that follows; at the end,
 * an empty packet carries the rest.
 *
 * Times: babeltrace2 needs them non-decreasing within a stream; a ring
 * buffer's can step back (a clock adjusted, a time stamp absolute again),
 * so an event is never put before the one it follows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "lib/rb-page.h"
#include "lib/v7-cursor.h"
#include "lib/v7-meta.h"
#include "lib/v7-reader.h"
#include "plugin/bt-fields.h"
#include "plugin/bt-iter.h"
#include "plugin/bt-source.h"

/* The smallest ring-buffer event is 8 bytes (a 4-byte header, a 4-byte word). */
#define RB_EVENT_SIZE_MIN 8u

enum iter_state {
	ITER_BEGIN,
	ITER_PAGES,
	ITER_END,
	ITER_DONE,
};

struct tc_iter {
	struct tc_source *src;
	struct tc_port *port;
	bt_self_message_iterator *self;
	struct v7_cursor *cursor;
	enum iter_state state;
	const uint8_t *pages;      /* the current chunk's sub-buffers */
	size_t n_pages, page_off;
	uint32_t page_size;
	struct rb_event *events;   /* the current sub-buffer's */
	size_t n_events, max_events, next_event;
	bt_packet *packet;         /* open, while its events go out */
	bool have_ts;
	uint64_t last_ts;          /* of the last message with a time */
	uint64_t page_end_ts;      /* the current sub-buffer's last time, once made monotonic */
	bool lost_pending;         /* a discarded-events message due before the next packet */
	bool lost_known;
	uint64_t lost;
	uint64_t lost_unplaced;    /* what CPUSTAT counts beyond the flagged sub-buffers */
	bool tail_packet;          /* the empty packet that carries lost_unplaced */
};

static int collect_event(const struct rb_event *e, void *userdata)
{
	struct tc_iter *it = userdata;

	if (it->n_events >= it->max_events)
		return -EBADMSG;
	it->events[it->n_events++] = *e;
	return 0;
}

/* A flagged sub-buffer's losses; counted ones are part of what CPUSTAT counts. */
static void note_page_losses(struct tc_iter *it, const struct rb_page_info *info)
{
	if (!info->missed_events)
		return;
	/* The kernel counted them only if it had room in the sub-buffer. */
	it->lost_known = (it->lost_pending ? it->lost_known : true) && info->n_missed > 0;
	it->lost_pending = true;
	it->lost += info->n_missed;
	it->lost_unplaced -= MIN(it->lost_unplaced, info->n_missed);
}

static void set_page_end(struct tc_iter *it)
{
	uint64_t end = it->have_ts ? it->last_ts : 0;

	for (size_t i = 0; i < it->n_events; i++)
		end = MAX(end, it->events[i].ts);
	it->page_end_ts = end;
}

/*
 * The next sub-buffer with events into it->events.
 * Return: 1 with one, 0 at the end of the region, -EBADMSG, -ENOMEM or -errno.
 */
static int next_page(struct tc_iter *it)
{
	struct rb_page_info info;
	const uint8_t *record, *page;
	size_t n_record;
	int k;

	for (;;) {
		if (it->page_off >= it->n_pages) {
			k = v7_cursor_next(it->cursor, &record, &n_record, &it->pages, &it->n_pages);
			if (k <= 0)
				return k;
			it->page_off = 0;
		}
		page = it->pages + it->page_off;
		it->page_off += it->page_size;
		k = rb_page_parse(page, it->page_size, &info);
		if (k < 0)
			return k;
		note_page_losses(it, &info);
		it->n_events = it->next_event = 0;
		k = rb_page_foreach_event(page, it->page_size, collect_event, it);
		if (k < 0)
			return k;
		if (it->n_events > 0) {
			set_page_end(it);
			return 1;
		}
	}
}

static uint64_t monotonic_ts(struct tc_iter *it, uint64_t ts)
{
	if (it->have_ts && ts < it->last_ts)
		ts = it->last_ts;
	it->have_ts = true;
	it->last_ts = ts;
	return ts;
}

/* Losses from the previous packet's end (or @begin, before the first) to @until. */
static bt_message *discarded_message(struct tc_iter *it, uint64_t begin, uint64_t until)
{
	bt_message *m;

	m = bt_message_discarded_events_create_with_default_clock_snapshots(
		it->self, it->port->stream, it->have_ts ? it->last_ts : begin, until);
	if (m && it->lost_known)
		bt_message_discarded_events_set_count(m, it->lost);
	it->lost_pending = false;
	it->lost_known = false;
	it->lost = 0;
	return m;
}

static bt_message *packet_begin(struct tc_iter *it, uint64_t ts)
{
	bt_field *ctx;

	it->packet = bt_packet_create(it->port->stream);
	if (!it->packet)
		return NULL;
	ctx = bt_packet_borrow_context_field(it->packet);
	bt_field_integer_unsigned_set_value(bt_field_structure_borrow_member_field_by_index(ctx, 0),
					    it->port->cpu);
	return bt_message_packet_beginning_create_with_default_clock_snapshot(it->self, it->packet,
									      ts);
}

static bt_message *packet_end(struct tc_iter *it)
{
	bt_message *m = bt_message_packet_end_create_with_default_clock_snapshot(
		it->self, it->packet, it->last_ts);

	bt_packet_put_ref(it->packet);
	it->packet = NULL;
	return m;
}

static bt_message *event_message(struct tc_iter *it, const struct rb_event *e)
{
	struct tep_handle *tep = it->src->file->tep;
	/* The id is the record's first u16; a record too short for it is id 0 (no format). */
	uint16_t id = e->size >= 2 ? (uint16_t)tep_read_number(tep, e->data, 2) : 0;
	const bt_event_class *ec = tc_source_event_class(it->src, id);
	const struct tep_event *tev = tep_find_event(tep, id);
	bt_field *common;
	bt_message *m;
	bt_event *ev;
	int pid = 0;

	if (!ec)
		return NULL;
	m = bt_message_event_create_with_packet_and_default_clock_snapshot(
		it->self, ec, it->packet, monotonic_ts(it, e->ts));
	if (!m)
		return NULL;
	ev = bt_message_event_borrow_event(m);
	/* common_pid: 4 bytes at offset 4, after type, flags and preempt count. */
	if (e->size >= 8)
		pid = (int)(int32_t)tep_read_number(tep, e->data + 4, 4);
	common = bt_event_borrow_common_context_field(ev);
	bt_field_integer_signed_set_value(bt_field_structure_borrow_member_field_by_index(common, 0),
					  pid);
	if (bt_field_string_set_value(bt_field_structure_borrow_member_field_by_index(common, 1),
				      tep_data_comm_from_pid(tep, pid)) != 0 ||
	    bt_fields_set_payload(bt_event_borrow_payload_field(ev), tep, tev, e->data, e->size) < 0) {
		bt_message_put_ref(m);
		return NULL;
	}
	return m;
}

/*
 * The next message of the region. Return: 1 with *ret, 0 when there is no
 * more, -ENOMEM, or -EBADMSG with the reader's error.
 */
static int next_message(struct tc_iter *it, bt_message **ret)
{
	int k;

	switch (it->state) {
	case ITER_BEGIN:
		it->state = ITER_PAGES;
		it->lost_unplaced = v7_lost_events(it->src->file->reader, it->port->cpu);
		*ret = bt_message_stream_beginning_create(it->self, it->port->stream);
		return *ret ? 1 : -ENOMEM;
	case ITER_PAGES:
		if (it->packet && it->next_event < it->n_events)
			*ret = event_message(it, &it->events[it->next_event++]);
		else if (it->packet)
			*ret = packet_end(it);
		else if (it->lost_pending && it->n_events > it->next_event)
			*ret = discarded_message(it, it->events[0].ts, it->page_end_ts);
		else if (it->n_events > it->next_event)
			*ret = packet_begin(it, monotonic_ts(it, it->events[0].ts));
		else {
			k = next_page(it);
			if (k < 0)
				return k;
			if (k == 0) {
				it->state = ITER_END;
				if (it->lost_unplaced > 0 && !it->lost_pending)
					it->lost_pending = it->lost_known = true;
				it->lost += it->lost_unplaced;
			}
			return next_message(it, ret);
		}
		return *ret ? 1 : -ENOMEM;
	case ITER_END:
		/* Losses without a place: an empty packet at the last time carries them. */
		if (it->lost_pending) {
			it->tail_packet = true;
			*ret = discarded_message(it, 0, it->have_ts ? it->last_ts : 0);
		} else if (it->tail_packet && !it->packet) {
			*ret = packet_begin(it, monotonic_ts(it, it->have_ts ? it->last_ts : 0));
		} else if (it->tail_packet) {
			it->tail_packet = false;
			*ret = packet_end(it);
		} else {
			it->state = ITER_DONE;
			*ret = bt_message_stream_end_create(it->self, it->port->stream);
		}
		return *ret ? 1 : -ENOMEM;
	case ITER_DONE:
		break;
	}
	return 0;
}

bt_message_iterator_class_next_method_status tc_iter_next(
	bt_self_message_iterator *self, bt_message_array_const msgs, uint64_t capacity,
	uint64_t *count)
{
	struct tc_iter *it = bt_self_message_iterator_get_data(self);
	uint64_t n = 0;
	int k = 0;

	while (n < capacity) {
		bt_message *m = NULL;

		k = next_message(it, &m);
		if (k <= 0)
			break;
		msgs[n++] = m;
	}
	if (n > 0) {
		/* An error after some messages: those go out, the error comes on the next call. */
		*count = n;
		return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_OK;
	}
	if (k == 0)
		return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END;
	if (k == -ENOMEM)
		return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_MEMORY_ERROR;
	BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_MESSAGE_ITERATOR(self,
		"CPU %u: %s", it->port->cpu, v7_reader_error(it->src->file->reader)[0] ?
			v7_reader_error(it->src->file->reader) : "damaged sub-buffer");
	return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_ERROR;
}

/*
 * Back to the stream's beginning: flt.utils.trimmer seeks to its --begin time,
 * and babeltrace2 does that for an iterator that can seek its beginning by
 * reading on from there.
 */
bt_message_iterator_class_can_seek_beginning_method_status tc_iter_can_seek_beginning(
	bt_self_message_iterator *self, bt_bool *can_seek)
{
	*can_seek = BT_TRUE;
	return BT_MESSAGE_ITERATOR_CLASS_CAN_SEEK_BEGINNING_METHOD_STATUS_OK;
}

bt_message_iterator_class_seek_beginning_method_status tc_iter_seek_beginning(
	bt_self_message_iterator *self)
{
	struct tc_iter *it = bt_self_message_iterator_get_data(self);
	struct v7_cursor *cursor;

	if (v7_cursor_new(it->src->file->reader, it->port->region, &cursor) < 0)
		return BT_MESSAGE_ITERATOR_CLASS_SEEK_BEGINNING_METHOD_STATUS_ERROR;
	v7_cursor_free(it->cursor);
	bt_packet_put_ref(it->packet);
	*it = (struct tc_iter){ .src = it->src, .port = it->port, .self = it->self,
				.cursor = cursor, .state = ITER_BEGIN, .page_size = it->page_size,
				.events = it->events, .max_events = it->max_events };
	return BT_MESSAGE_ITERATOR_CLASS_SEEK_BEGINNING_METHOD_STATUS_OK;
}

static void iter_free(struct tc_iter *it)
{
	if (!it)
		return;
	bt_packet_put_ref(it->packet);
	v7_cursor_free(it->cursor);
	free(it->events);
	free(it);
}

bt_message_iterator_class_initialize_method_status tc_iter_init(
	bt_self_message_iterator *self, bt_self_message_iterator_configuration *config,
	bt_self_component_port_output *port)
{
	bt_self_component *comp = bt_self_message_iterator_borrow_component(self);
	struct tc_iter *it = calloc(1, sizeof(*it));

	if (!it)
		return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	it->self = self;
	it->src = bt_self_component_get_data(comp);
	it->port = bt_self_component_port_get_data(
		bt_self_component_port_output_as_self_component_port(port));
	it->page_size = v7_reader_cpu(it->src->file->reader, it->port->region)->page_size;
	it->max_events = it->page_size / RB_EVENT_SIZE_MIN + 1;
	it->events = calloc(it->max_events, sizeof(*it->events));
	if (!it->events || v7_cursor_new(it->src->file->reader, it->port->region, &it->cursor) < 0) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_MESSAGE_ITERATOR(self, "CPU %u: %s",
			it->port->cpu, v7_reader_error(it->src->file->reader));
		iter_free(it);
		return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
	}
	bt_self_message_iterator_set_data(self, it);
	/* Times never go back within a stream: babeltrace2 may seek a time by reading on. */
	bt_self_message_iterator_configuration_set_can_seek_forward(config, BT_TRUE);
	return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

void tc_iter_finalize(bt_self_message_iterator *self)
{
	iter_free(bt_self_message_iterator_get_data(self));
}

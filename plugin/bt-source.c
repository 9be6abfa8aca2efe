// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The source component: opens its one file (parameter `inputs`, as
 * babeltrace2's auto-discovery passes it), describes it in babeltrace2's
 * trace IR and adds a port per CPU region. Events' classes are made when
 * an event of that id first appears, so a file carrying thousands of formats
 * costs only the ones it uses. Also answers `babeltrace.support-info`, so a
 * plain `babeltrace2 FILE` picks this component for v7 files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "lib/v7-meta.h"
#include "lib/v7-reader.h"
#include "plugin/bt-fields.h"
#include "plugin/bt-source.h"

#define NSEC_PER_SEC 1000000000LL
#define USEC_PER_SEC 1000000LL

static void source_free(struct tc_source *src)
{
	if (!src)
		return;
	for (size_t i = 0; i < src->n_ports; i++)
		bt_stream_put_ref(src->ports[i].stream);
	free(src->ports);
	if (src->classes)
		for (size_t i = 0; i < TC_EVENT_IDS; i++)
			bt_event_class_put_ref(src->classes[i]);
	free(src->classes);
	bt_trace_put_ref(src->trace);
	bt_clock_class_put_ref(src->clock_class);
	bt_stream_class_put_ref(src->stream_class);
	bt_trace_class_put_ref(src->trace_class);
	tc_file_free(src->file);
	free(src);
}

/* CTF names clocks with identifiers: "x86-tsc" becomes "x86_tsc". */
static void clock_name(const char *clock, char *buf, size_t n)
{
	size_t i = 0;

	for (; clock && clock[i] && i + 1 < n; i++) {
		char c = clock[i];

		buf[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				 (c >= '0' && c <= '9') || c == '_' ? c : '_';
	}
	buf[i] = '\0';
	if (!buf[0] || (buf[0] >= '0' && buf[0] <= '9'))
		snprintf(buf, n, "trace_clock");
}

/*
 * The file's clock: ns (the trace-cmd clocks are), offset by the file's DATE
 * (a wall-clock anchor) when it has one, so its events sit at their UTC times
 * and merge with other traces on the same clock (LTTng's, on `-C mono`).
 */
static int make_clock(struct tc_source *src)
{
	struct tc_file *f = src->file;
	char name[64];

	src->clock_class = bt_clock_class_create(src->self);
	if (!src->clock_class)
		return -ENOMEM;
	clock_name(v7_reader_clock(f->reader), name, sizeof(name));
	if (bt_clock_class_set_name(src->clock_class, name) != BT_CLOCK_CLASS_SET_NAME_STATUS_OK)
		return -ENOMEM;
	bt_clock_class_set_frequency(src->clock_class, NSEC_PER_SEC);
	if (f->has_date) {
		long long sec = f->date_us / USEC_PER_SEC, us = f->date_us % USEC_PER_SEC;

		if (us < 0)
			sec--, us += USEC_PER_SEC;
		bt_clock_class_set_offset(src->clock_class, sec, (uint64_t)us * 1000);
	}
	bt_clock_class_set_origin_is_unix_epoch(src->clock_class, f->has_date);
	return 0;
}

/* Packet context: the CPU as LTTng names it (cpu_id), which Trace Compass reads. */
static int make_stream_class(struct tc_source *src)
{
	bt_field_class *ctx, *cpu, *common, *pid, *comm;
	int k = -ENOMEM;

	src->stream_class = bt_stream_class_create(src->trace_class);
	if (!src->stream_class)
		return -ENOMEM;
	bt_stream_class_set_assigns_automatic_event_class_id(src->stream_class, false);
	bt_stream_class_set_assigns_automatic_stream_id(src->stream_class, false);
	if (bt_stream_class_set_default_clock_class(src->stream_class, src->clock_class) !=
	    BT_STREAM_CLASS_SET_DEFAULT_CLOCK_CLASS_STATUS_OK)
		return -ENOMEM;
	bt_stream_class_set_supports_packets(src->stream_class, true, true, true);
	bt_stream_class_set_supports_discarded_events(src->stream_class, true, true);
	ctx = bt_field_class_structure_create(src->trace_class);
	cpu = bt_field_class_integer_unsigned_create(src->trace_class);
	common = bt_field_class_structure_create(src->trace_class);
	pid = bt_field_class_integer_signed_create(src->trace_class);
	comm = bt_field_class_string_create(src->trace_class);
	if (ctx && cpu && common && pid && comm) {
		bt_field_class_integer_set_field_value_range(cpu, 32);
		bt_field_class_integer_set_field_value_range(pid, 32);
		if (bt_field_class_structure_append_member(ctx, "cpu_id", cpu) == 0 &&
		    bt_field_class_structure_append_member(common, "pid", pid) == 0 &&
		    bt_field_class_structure_append_member(common, "comm", comm) == 0 &&
		    bt_stream_class_set_packet_context_field_class(src->stream_class, ctx) == 0 &&
		    bt_stream_class_set_event_common_context_field_class(src->stream_class, common) == 0)
			k = 0;
	}
	bt_field_class_put_ref(ctx);
	bt_field_class_put_ref(cpu);
	bt_field_class_put_ref(common);
	bt_field_class_put_ref(pid);
	bt_field_class_put_ref(comm);
	return k;
}

/* What LTTng's traces say about themselves, where the file says it. */
static void set_environment(struct tc_source *src)
{
	const char *uname = v7_reader_option(src->file->reader, V7_READER_UNAME);
	const char *version = v7_reader_option(src->file->reader, V7_READER_VERSION);
	char host[256];

	/* UNAME is "sysname nodename release version machine". */
	if (uname && sscanf(uname, "%*s %255s", host) == 1)
		(void)bt_trace_set_environment_entry_string(src->trace, "hostname", host);
	(void)bt_trace_set_environment_entry_string(src->trace, "domain", "kernel");
	(void)bt_trace_set_environment_entry_string(src->trace, "tracer_name",
						    version && strncmp(version, "ftraced", 7) == 0 ?
							    "ftraced" : "trace-cmd");
	(void)bt_trace_set_environment_entry_string(src->trace, "trace_clock",
						    v7_reader_clock(src->file->reader));
}

static int add_ports(struct tc_source *src, bt_self_component_source *self)
{
	struct v7_reader *r = src->file->reader;
	size_t n = v7_reader_n_cpus(r);

	src->ports = calloc(n ? n : 1, sizeof(*src->ports));
	if (!src->ports)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct v7_reader_cpu *c = v7_reader_cpu(r, i);
		struct tc_port *p = &src->ports[src->n_ports];
		char name[96];

		/* A CPU with neither data nor losses has nothing to say. */
		if (c->size == 0 && v7_lost_events(r, c->cpu) == 0)
			continue;
		p->region = i;
		p->cpu = c->cpu;
		p->stream = bt_stream_create_with_id(src->stream_class, src->trace, i);
		if (!p->stream)
			return -ENOMEM;
		src->n_ports++;
		snprintf(name, sizeof(name), "%s%scpu%u", c->buffer, c->buffer[0] ? "/" : "", c->cpu);
		(void)bt_stream_set_name(p->stream, name);
		if (bt_self_component_source_add_output_port(self, name, p, NULL) !=
		    BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
			return -ENOMEM;
	}
	return 0;
}

/* The one path in `inputs`: Return: it, or NULL with the error appended. */
static const char *input_path(bt_self_component *self, const bt_value *params)
{
	const bt_value *inputs = params ? bt_value_map_borrow_entry_value_const(params, "inputs") :
					  NULL;
	const bt_value *path;

	if (!inputs || !bt_value_is_array(inputs) || bt_value_array_get_length(inputs) != 1) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(self,
			"the `inputs` parameter must be an array of one path (one file per component)");
		return NULL;
	}
	path = bt_value_array_borrow_element_by_index_const(inputs, 0);
	if (!bt_value_is_string(path)) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(self, "`inputs` must hold a path");
		return NULL;
	}
	return bt_value_string_get(path);
}

static int source_build(struct tc_source *src, bt_self_component_source *self, const char *path)
{
	char error[TC_ERROR_MAX] = "";
	int k;

	k = tc_file_open(path, &src->file, error, sizeof(error));
	if (k < 0) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(src->self,
			"cannot read '%s' as a trace-cmd v7 file: %s", path,
			error[0] ? error : strerror(-k));
		return k;
	}
	src->classes = calloc(TC_EVENT_IDS, sizeof(*src->classes));
	src->trace_class = bt_trace_class_create(src->self);
	if (!src->classes || !src->trace_class)
		return -ENOMEM;
	bt_trace_class_set_assigns_automatic_stream_class_id(src->trace_class, true);
	k = make_clock(src);
	if (k >= 0)
		k = make_stream_class(src);
	if (k < 0)
		return k;
	src->trace = bt_trace_create(src->trace_class);
	if (!src->trace)
		return -ENOMEM;
	/* The file's name names the trace, as babeltrace2's messages and CTF's output show it. */
	(void)bt_trace_set_name(src->trace, strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	set_environment(src);
	return add_ports(src, self);
}

bt_component_class_initialize_method_status tc_source_init(
	bt_self_component_source *self, bt_self_component_source_configuration *config,
	const bt_value *params, void *init_data)
{
	bt_self_component *comp = bt_self_component_source_as_self_component(self);
	struct tc_source *src;
	const char *path;
	int k;

	path = input_path(comp, params);
	if (!path)
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
	src = calloc(1, sizeof(*src));
	if (!src)
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	src->self = comp;
	k = source_build(src, self, path);
	if (k < 0) {
		source_free(src);
		return k == -ENOMEM ? BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR :
				      BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
	}
	bt_self_component_set_data(comp, src);
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

void tc_source_finalize(bt_self_component_source *self)
{
	source_free(bt_self_component_get_data(bt_self_component_source_as_self_component(self)));
}

/* An id no format in the file describes: an event without fields, as trace-cmd shows it. */
static bt_event_class *make_event_class(struct tc_source *src, uint16_t id)
{
	const struct tep_event *ev = tep_find_event(src->file->tep, id);
	bt_event_class *ec = bt_event_class_create_with_id(src->stream_class, id);
	bt_field_class *payload;
	char name[256];

	if (!ec)
		return NULL;
	if (ev)
		snprintf(name, sizeof(name), "%s:%s", ev->system, ev->name);
	else
		snprintf(name, sizeof(name), "unknown:%u", id);
	payload = bt_fields_payload_class(src->trace_class, ev);
	if (!payload || bt_event_class_set_name(ec, name) != BT_EVENT_CLASS_SET_NAME_STATUS_OK ||
	    bt_event_class_set_payload_field_class(ec, payload) !=
		    BT_EVENT_CLASS_SET_FIELD_CLASS_STATUS_OK) {
		bt_field_class_put_ref(payload);
		bt_event_class_put_ref(ec);
		return NULL;
	}
	bt_field_class_put_ref(payload);
	return ec;
}

/**
 * tc_source_event_class() - the class of events with ring-buffer id @id.
 *
 * Return: borrowed, or NULL (out of memory).
 */
const bt_event_class *tc_source_event_class(struct tc_source *src, uint16_t id)
{
	if (!src->classes[id])
		src->classes[id] = make_event_class(src, id);
	return src->classes[id];
}

/*
 * `babeltrace.support-info`: weight 1 for a regular file that starts like a
 * v7 file, 0 for anything else, so auto-discovery leaves other files to
 * other components.
 */
bt_component_class_query_method_status tc_source_query(
	bt_self_component_class_source *cls, bt_private_query_executor *exec, const char *object,
	const bt_value *params, void *method_data, const bt_value **result)
{
	const bt_value *type, *input;
	double weight = 0.0;

	if (strcmp(object, "babeltrace.support-info") != 0)
		return BT_COMPONENT_CLASS_QUERY_METHOD_STATUS_UNKNOWN_OBJECT;
	if (!params || !bt_value_is_map(params))
		return BT_COMPONENT_CLASS_QUERY_METHOD_STATUS_ERROR;
	type = bt_value_map_borrow_entry_value_const(params, "type");
	input = bt_value_map_borrow_entry_value_const(params, "input");
	if (!type || !input || !bt_value_is_string(type) || !bt_value_is_string(input))
		return BT_COMPONENT_CLASS_QUERY_METHOD_STATUS_ERROR;
	if (strcmp(bt_value_string_get(type), "file") == 0 &&
	    tc_probe(bt_value_string_get(input)) == 1)
		weight = 1.0;
	*result = bt_value_real_create_init(weight);
	return *result ? BT_COMPONENT_CLASS_QUERY_METHOD_STATUS_OK :
			 BT_COMPONENT_CLASS_QUERY_METHOD_STATUS_MEMORY_ERROR;
}

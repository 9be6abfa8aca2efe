/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The source component class `source.ftraced.tracecmd`: one v7 file per
 * component, one output port (a stream) per CPU region, one packet per
 * sub-buffer. Its methods, for plugin.c's descriptors and for a program
 * that builds the class itself (the fuzz target).
 */
#include <babeltrace2/babeltrace.h>

#include "plugin/tc-file.h"

/* Event ids are u16 in the ring buffer: one lazily made class per id. */
#define TC_EVENT_IDS 65536u

struct tc_port {
	size_t region;        /* index into the reader's CPU regions */
	uint32_t cpu;
	bt_stream *stream;
};

struct tc_source {
	bt_self_component *self;
	struct tc_file *file;
	bt_trace_class *trace_class;
	bt_stream_class *stream_class;
	bt_clock_class *clock_class;
	bt_trace *trace;
	bt_event_class **classes; /* [TC_EVENT_IDS], made on first use */
	size_t n_ports;
	struct tc_port *ports;
};

bt_component_class_initialize_method_status tc_source_init(
	bt_self_component_source *self, bt_self_component_source_configuration *config,
	const bt_value *params, void *init_data);
void tc_source_finalize(bt_self_component_source *self);
bt_component_class_query_method_status tc_source_query(
	bt_self_component_class_source *cls, bt_private_query_executor *exec, const char *object,
	const bt_value *params, void *method_data, const bt_value **result);
const bt_event_class *tc_source_event_class(struct tc_source *src, uint16_t id);

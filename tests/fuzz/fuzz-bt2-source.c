// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The babeltrace2 plugin's source component fed damaged files: the same
 * component class the plugin declares, built here from the same methods, in
 * a graph with a simple sink on every port that takes every message. A
 * damaged file must end in an error, never a crash, a hang or a leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>

#include "plugin/bt-iter.h"
#include "plugin/bt-source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A port's iterator can send a bounded number of messages per input: no hang. */
#define FUZZ_MESSAGES_MAX (1u << 20)

static uint64_t n_messages;

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *it,
								    void *userdata)
{
	bt_message_array_const msgs;
	uint64_t n = 0;

	switch (bt_message_iterator_next(it, &msgs, &n)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		break;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
	default:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	for (uint64_t i = 0; i < n; i++)
		bt_message_put_ref(msgs[i]);
	n_messages += n;
	return n_messages > FUZZ_MESSAGES_MAX ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR :
						BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

static bt_component_class_source *source_class(void)
{
	bt_message_iterator_class *ic = bt_message_iterator_class_create(tc_iter_next);
	bt_component_class_source *cc;

	if (!ic)
		return NULL;
	bt_message_iterator_class_set_initialize_method(ic, tc_iter_init);
	bt_message_iterator_class_set_finalize_method(ic, tc_iter_finalize);
	bt_message_iterator_class_set_seek_beginning_methods(ic, tc_iter_seek_beginning,
							     tc_iter_can_seek_beginning);
	cc = bt_component_class_source_create("tracecmd", ic);
	bt_message_iterator_class_put_ref(ic);
	if (!cc)
		return NULL;
	bt_component_class_source_set_initialize_method(cc, tc_source_init);
	bt_component_class_source_set_finalize_method(cc, tc_source_finalize);
	bt_component_class_source_set_query_method(cc, tc_source_query);
	return cc;
}

/* A graph of the source on @path and a sink per port, run to its end or its error. */
static void run_graph(bt_component_class_source *cc, const char *path)
{
	const bt_component_source *src = NULL;
	bt_value *params = bt_value_map_create(), *inputs = NULL;
	bt_graph *g = bt_graph_create(0);

	if (!params || !g || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) ||
	    bt_value_array_append_string_element(inputs, path))
		goto out;
	/* A file without a CPU that has data or losses has no port: nothing to run. */
	if (bt_graph_add_source_component(g, cc, "src", params, BT_LOGGING_LEVEL_NONE, &src) ||
	    bt_component_source_get_output_port_count(src) == 0)
		goto out;
	for (uint64_t i = 0; i < bt_component_source_get_output_port_count(src); i++) {
		const bt_component_sink *sink;
		char name[32];

		snprintf(name, sizeof(name), "sink%llu", (unsigned long long)i);
		if (bt_graph_add_simple_sink_component(g, name, NULL, consume, NULL, NULL, &sink) ||
		    bt_graph_connect_ports(g, bt_component_source_borrow_output_port_by_index_const(src, i),
					   bt_component_sink_borrow_input_port_by_index_const(sink, 0),
					   NULL))
			goto out;
	}
	n_messages = 0;
	while (bt_graph_run(g) == BT_GRAPH_RUN_STATUS_AGAIN)
		;
out:
	bt_current_thread_clear_error();
	bt_graph_put_ref(g);
	bt_value_put_ref(params);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bt_component_class_source *cc;
	char path[64];
	int fd;

	if (!cc)
		cc = source_class();
	if (!cc)
		return 0;
	fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		run_graph(cc, path);
	}
	close(fd);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The message iterator of one output port: one CPU region's events, in order. */
#include <babeltrace2/babeltrace.h>

bt_message_iterator_class_initialize_method_status tc_iter_init(
	bt_self_message_iterator *self, bt_self_message_iterator_configuration *config,
	bt_self_component_port_output *port);
void tc_iter_finalize(bt_self_message_iterator *self);
bt_message_iterator_class_next_method_status tc_iter_next(
	bt_self_message_iterator *self, bt_message_array_const msgs, uint64_t capacity,
	uint64_t *count);
bt_message_iterator_class_can_seek_beginning_method_status tc_iter_can_seek_beginning(
	bt_self_message_iterator *self, bt_bool *can_seek);
bt_message_iterator_class_seek_beginning_method_status tc_iter_seek_beginning(
	bt_self_message_iterator *self);

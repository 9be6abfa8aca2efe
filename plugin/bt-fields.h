/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * An ftrace event's fields as babeltrace2 fields: the payload's field class,
 * built from the event's format in the file (libtraceevent), and a record's
 * values set into it.
 */
#include <stdint.h>

#include <babeltrace2/babeltrace.h>

struct tep_event;
struct tep_handle;

bt_field_class *bt_fields_payload_class(bt_trace_class *tc, const struct tep_event *ev);
int bt_fields_set_payload(bt_field *payload, struct tep_handle *tep, const struct tep_event *ev,
			  const uint8_t *data, uint32_t size);

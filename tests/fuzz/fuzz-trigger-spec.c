// SPDX-License-Identifier: GPL-2.0-or-later
/* --trigger specifications arrive from clients: any string, parsed within bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/base/bounds.h"
#include "daemon/flight/trigger-spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[FTRACED_TRIGGER_MAX + 1], error[256];
	struct trigger_spec t;

	/* The protocol hands over at most FTRACED_TRIGGER_MAX bytes, NUL-terminated. */
	if (size > FTRACED_TRIGGER_MAX)
		size = FTRACED_TRIGGER_MAX;
	memcpy(text, data, size);
	text[size] = '\0';
	if (trigger_spec_parse(text, &t, error, sizeof(error)) < 0)
		return 0;
	if (!strchr(t.event, ':') || strlen(t.filter) > FTRACED_FILTER_MAX ||
	    t.post_ms > TRIGGER_POST_MS_MAX || t.min_interval_ms < t.post_ms)
		abort();
	return 0;
}

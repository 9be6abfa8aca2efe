/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-event.h>

/**
 * event_timer_set() - set a time source to fire once, at @at.
 * @source: a CLOCK_MONOTONIC time source
 * @at: when, CLOCK_MONOTONIC usec
 *
 * Callers that ask again for the time already set (on every request, every
 * report of the capture workers) cost nothing then: sd-event would mark its
 * timer queue to be reprogrammed even for the same time.
 *
 * Return: 0 or -errno.
 */
static inline int event_timer_set(sd_event_source *source, uint64_t at)
{
	uint64_t armed;
	int enabled = SD_EVENT_OFF, r;

	if (sd_event_source_get_enabled(source, &enabled) >= 0 && enabled != SD_EVENT_OFF &&
	    sd_event_source_get_time(source, &armed) >= 0 && armed == at)
		return 0;
	r = sd_event_source_set_time(source, at);
	return r < 0 ? r : sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
}

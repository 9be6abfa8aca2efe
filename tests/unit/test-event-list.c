// SPDX-License-Identifier: GPL-2.0-or-later
/* Event specifications as typed by users, split without a kernel. */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/event-list.h"

static int split(const char *spec, char *sys, char *ev)
{
	return event_spec_split(spec, sys, FTRACED_NAME_MAX + 1, ev, FTRACED_EVENT_SPEC_MAX + 1);
}

int main(void)
{
	char sys[FTRACED_NAME_MAX + 1], ev[FTRACED_EVENT_SPEC_MAX + 1];
	char long_sys[FTRACED_NAME_MAX + 8];

	assert(split("sched:sched_switch", sys, ev) == 0);
	assert(strcmp(sys, "sched") == 0 && strcmp(ev, "sched_switch") == 0);
	assert(split("irq:*", sys, ev) == 0 && strcmp(sys, "irq") == 0 && strcmp(ev, "*") == 0);
	assert(split("block", sys, ev) == 0 && strcmp(sys, "block") == 0 && strcmp(ev, "*") == 0);

	assert(split("", sys, ev) == -EINVAL);
	assert(split(":x", sys, ev) == -EINVAL);
	assert(split("sched:", sys, ev) == -EINVAL);
	assert(split("a:b:c", sys, ev) == -EINVAL);
	assert(split("*:x", sys, ev) == -EINVAL);
	memset(long_sys, 'a', sizeof(long_sys) - 1);
	long_sys[sizeof(long_sys) - 1] = '\0';
	assert(split(long_sys, sys, ev) == -EINVAL);

	printf("event-list: all tests passed\n");
	return 0;
}

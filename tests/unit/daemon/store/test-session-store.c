// SPDX-License-Identifier: GPL-2.0-or-later
/* A saved session's header and session file, written and read back; bad ones named. */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/store/session-store.h"

static char error[256];

static int parse(const char *text, struct saved_session *s, size_t *off)
{
	return saved_session_parse(text, strlen(text), s, off, error, sizeof(error));
}

int main(void)
{
	static const char conf[] = "name = bg\nmode = continuous\nevent = sched\n";
	struct saved_session s = { .name = "bg", .owner = 1000, .running = true,
				   .stopped_usec = 1764079200123456 }, back;
	char text[1024];
	size_t off;
	int n;

	n = saved_session_format(&s, conf, text, sizeof(text));
	assert(n > 0 && (size_t)n == strlen(text));
	assert(parse(text, &back, &off) == 0);
	assert(back.owner == 1000 && back.running && back.stopped_usec == s.stopped_usec);
	assert(strcmp(text + off, conf) == 0);
	/* Not running, no clean stop: no stop line. */
	s.running = false;
	s.stopped_usec = 0;
	assert(saved_session_format(&s, conf, text, sizeof(text)) > 0);
	assert(!strstr(text, "stopped") && parse(text, &back, &off) == 0 && !back.running);
	/* Too small a buffer says so. */
	assert(saved_session_format(&s, conf, text, 40) == -ENOBUFS);

	/* What is refused, and why. */
	assert(parse("owner = 0\nrunning = yes\n", &back, &off) == -EINVAL);
	assert(strstr(error, "'%%' line"));
	assert(parse("running = yes\n%%\nevent = sched\n", &back, &off) == -EINVAL);
	assert(strstr(error, "no owner line"));
	assert(parse("owner = -1\nrunning = yes\n%%\n", &back, &off) == -EINVAL);
	assert(strstr(error, "invalid owner"));
	assert(parse("owner = 0\nrunning = maybe\n%%\n", &back, &off) == -EINVAL);
	assert(parse("owner = 0\nrunning = no\nstopped = soon\n%%\n", &back, &off) == -EINVAL);
	assert(parse("owner = 0\nrunning = no\ncolour = red\n%%\n", &back, &off) == -EINVAL);
	assert(strstr(error, "unknown line"));
	/* A '%%' inside the session file is its own business. */
	assert(parse("owner = 0\nrunning = no\n%%\nfilter = a %% b\n", &back, &off) == 0);
	printf("session-store: all tests passed\n");
	return 0;
}

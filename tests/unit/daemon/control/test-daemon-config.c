// SPDX-License-Identifier: GPL-2.0-or-later
/* ftraced.conf: defaults, every key, and each mistake reported with its line. */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "daemon/control/daemon-config.h"

static char error[256];

static int parse(const char *text, struct daemon_config *c, unsigned *line)
{
	daemon_config_defaults(c);
	error[0] = '\0';
	return daemon_config_parse(text, strlen(text), c, error, sizeof(error), line);
}

static void expect_refused(const char *text, unsigned expected_line, const char *words)
{
	struct daemon_config c;
	unsigned line;

	assert(parse(text, &c, &line) == -EINVAL);
	if (line != expected_line || !strstr(error, words)) {
		fprintf(stderr, "'%s': line %u, '%s'\n", text, line, error);
		assert(false);
	}
}

int main(void)
{
	struct daemon_config c;
	unsigned line;

	assert(parse("", &c, &line) == 0 && line == 0);
	assert(c.memory_limit == 0 && c.memory_limit_percent == MEMORY_LIMIT_PERCENT_DEFAULT);
	assert(c.group_symbols == GROUP_SYMBOLS_AUTO && c.saved_cmdlines == SAVED_CMDLINES_DEFAULT);
	assert(parse("saved-cmdlines = 0", &c, &line) == 0 && c.saved_cmdlines == 0);
	assert(parse("saved-cmdlines = 32768", &c, &line) == 0 && c.saved_cmdlines == 32768);
	assert(parse("rt-priority-max = 50", &c, &line) == 0 && c.rt_priority_max == 50);
	assert(c.capture_nice == CAPTURE_NICE_DEFAULT);
	assert(parse("capture-nice = -20", &c, &line) == 0 && c.capture_nice == -20);
	assert(parse("capture-nice = 0", &c, &line) == 0 && c.capture_nice == 0);
	assert(parse("metrics-directory = /var/lib/prometheus/node-exporter\nmetrics-interval = 30s",
		     &c, &line) == 0);
	assert(strcmp(c.metrics_directory, "/var/lib/prometheus/node-exporter") == 0);
	assert(c.metrics_interval_ms == 30000);

	assert(parse("# comment\n\n  memory-limit = 2G \ngroup-symbols=no\n", &c, &line) == 0);
	assert(c.memory_limit == UINT64_C(2) << 30 && c.group_symbols == GROUP_SYMBOLS_NO);
	assert(daemon_config_memory_limit(&c) == UINT64_C(2) << 30);
	assert(parse("memory-limit = 40 %\ngroup-symbols = yes", &c, &line) == 0);
	assert(c.memory_limit == 0 && c.memory_limit_percent == 40);
	assert(c.group_symbols == GROUP_SYMBOLS_YES);

	expect_refused("memory-limit = 0", 1, "invalid size");
	expect_refused("\nmemory-limit = 95%", 2, "between 1% and 90%");
	expect_refused("memory-limit = 1G\ngroup-symbols = maybe", 2, "not auto, yes or no");
	expect_refused("colour = blue", 1, "unknown key 'colour'");
	expect_refused("saved-cmdlines = 32769", 1, "from 0 (leave the kernel's) to 32768");
	expect_refused("saved-cmdlines = many", 1, "is not a number of task names");
	expect_refused("rt-priority-max = 100", 1, "is not a priority from 0 (-r refused) to 99");
	expect_refused("rt-priority-max = -1", 1, "is not a priority from 0 (-r refused) to 99");
	expect_refused("capture-nice = 5", 1, "is not a nice value from -20 to 0");
	expect_refused("capture-nice = -21", 1, "is not a nice value from -20 to 0");
	expect_refused("capture-nice = -5x", 1, "is not a nice value from -20 to 0");
	expect_refused("capture-nice = -", 1, "is not a nice value from -20 to 0");
	expect_refused("metrics-directory = textfile", 1, "is not an absolute path");
	expect_refused("metrics-interval = 100ms", 1, "is not a time from 1s to 3600s");
	expect_refused("metrics-interval = 2h", 1, "is not a time from 1s to 3600s");
	expect_refused("\n\nmemory-limit", 3, "expected 'key = value'");
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The Prometheus text: one HELP and TYPE per family with all its samples
 * together, labels escaped, families only for the sessions they describe,
 * optional limits only when set.
 */
#undef NDEBUG
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/prom-metrics.h"

static char *format(const struct reply *rep)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);

	assert(f && prom_metrics_write(f, rep) == 0);
	assert(fclose(f) == 0);
	return text;
}

static unsigned count(const char *text, const char *needle)
{
	unsigned n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

int main(void)
{
	struct ftraced_cpu_stats cpus[2] = {
		{ .cpu = 0, .read = 10, .overrun = 3, .dropped = 1, .bytes_raw = 4096 },
		{ .cpu = 1, .read = 20, .overrun = 0, .dropped = 2, .bytes_raw = 8192 },
	};
	struct session_info s[2] = {
		{ .name = "cont", .state = "running", .mode = FTRACED_MODE_CONTINUOUS,
		  .n_cpus = 2, .cpus = cpus, .max_total = 1 << 20, .disk_bytes = 4096,
		  .segments_kept = 1, .elapsed_ms = 1500,
		  .warning = "retention cannot count its files",
		  .counters = { .files_written = 3, .files_deleted = 2, .bytes_deleted = 8192,
				.retention_failures = 5 } },
		{ .name = "fl", .state = "a\"b\\c\nd", .mode = FTRACED_MODE_FLIGHT,
		  .instance = FTRACED_TOP_LEVEL_INSTANCE,
		  .flight_backend = FTRACED_FLIGHT_MEMORY, .flight_size = 1 << 24,
		  .snapshots = 4, .counters = { .triggers_fired = 5, .triggers_suppressed = 6 } },
	};
	struct reply rep = {
		.type = FTRACED_MSG_SESSIONS,
		.sessions = { .n = 2, .items = s },
		.has_daemon = true,
		.daemon = { .uptime_ms = 2500, .connections = 7, .hooks_failed = 1 },
		.has_daemon_cpu = true,
		.daemon_cpu_usec = 1234567,
	};
	char *text = format(&rep);

	assert(strstr(text, "ftraced_uptime_seconds 2.500\n"));
	assert(strstr(text, "# TYPE ftraced_cpu_seconds_total counter\n"));
	assert(strstr(text, "ftraced_cpu_seconds_total 1.234567\n"));
	assert(strstr(text, "ftraced_connections_total 7\n"));
	assert(strstr(text, "ftraced_hook_failures_total 1\n"));
	assert(strstr(text, "ftraced_sessions 2\n"));
	assert(strstr(text, "ftraced_events_lost_total{session=\"cont\",cpu=\"0\"} 4\n"));
	assert(strstr(text, "ftraced_events_lost_total{session=\"cont\",cpu=\"1\"} 2\n"));
	assert(strstr(text, "ftraced_events_read_total{session=\"cont\",cpu=\"1\"} 20\n"));
	assert(strstr(text, "ftraced_session_elapsed_seconds{session=\"cont\"} 1.5\n"));
	assert(strstr(text, "ftraced_files_written_total{session=\"cont\"} 3\n"));
	assert(strstr(text, "ftraced_files_deleted_total{session=\"cont\"} 2\n"));
	assert(strstr(text, "ftraced_disk_limit_bytes{session=\"cont\"} 1048576\n"));
	/* what retention deleted, and that it could not count: a warning, for alerts */
	assert(strstr(text, "ftraced_deleted_bytes_total{session=\"cont\"} 8192\n"));
	assert(strstr(text, "ftraced_retention_failures_total{session=\"cont\"} 5\n"));
	assert(strstr(text, "ftraced_session_warning{session=\"cont\"} 1\n"));
	assert(strstr(text, "ftraced_session_warning{session=\"fl\"} 0\n"));
	assert(strstr(text, "ftraced_retention_failures_total{session=\"fl\"} 0\n"));
	assert(strstr(text, "ftraced_trigger_firings_total{session=\"fl\"} 5\n"));
	assert(strstr(text, "ftraced_trigger_suppressions_total{session=\"fl\"} 6\n"));
	assert(strstr(text, "ftraced_flight_memory_limit_bytes{session=\"fl\"} 16777216\n"));
	assert(strstr(text, "ftraced_snapshots_total{session=\"fl\"} 4\n"));
	/* label values escaped */
	assert(strstr(text, "state=\"a\\\"b\\\\c\\nd\"} 1\n"));
	/* one HELP and TYPE a family */
	assert(count(text, "# TYPE ftraced_events_lost_total counter\n") == 1);
	assert(count(text, "# HELP ftraced_files_written_total ") == 1);
	/* flight families only for flight recorders; no max-files limit set, none shown */
	assert(!strstr(text, "ftraced_snapshots_total{session=\"cont\"}"));
	assert(strstr(text, "ftraced_top_level_leased{session=\"fl\"} 1\n"));
	assert(!strstr(text, "ftraced_top_level_leased{session=\"cont\"}"));
	assert(!strstr(text, "ftraced_disk_files_limit"));
	/* no history span yet: none shown */
	assert(!strstr(text, "ftraced_flight_history_seconds"));
	free(text);

	/* no daemon record (an older daemon): sessions alone */
	rep.has_daemon = false;
	rep.has_daemon_cpu = false;
	text = format(&rep);
	assert(!strstr(text, "ftraced_uptime_seconds"));
	assert(!strstr(text, "ftraced_cpu_seconds_total"));
	assert(strstr(text, "ftraced_session_info{session=\"cont\",mode=\"continuous\",state=\"running\"} 1\n"));
	free(text);
	printf("prom-metrics: all tests passed\n");
	return 0;
}

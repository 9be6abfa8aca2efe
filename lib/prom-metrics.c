// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's and its sessions' counters in the Prometheus text exposition
 * format (version 0.0.4), from a decoded LIST reply: what the daemon writes
 * into node_exporter's textfile-collector directory and `ftracectl metrics`
 * prints. One HELP and TYPE line a family, then all its samples, as the
 * format requires. Counters end in _total, sizes are bytes and times
 * seconds; every session sample carries session="NAME", per-CPU ones
 * cpu="N" too. Pure: writes only to the FILE it is given.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/prom-metrics.h"

struct family {
	const char *name;
	const char *type;
	const char *help;
};

enum cpu_metric {
	CPU_READ,
	CPU_LOST,
	CPU_OVERRUN,
	CPU_DROPPED,
	CPU_CAPTURED,
	CPU_STORED,
	_CPU_METRIC_MAX,
};

static const struct family cpu_families[_CPU_METRIC_MAX] = {
	[CPU_READ] = { "ftraced_events_read_total", "counter",
		       "Events the kernel handed to ftraced." },
	[CPU_LOST] = { "ftraced_events_lost_total", "counter",
		       "Events the kernel lost before ftraced read them (overrun plus dropped)." },
	[CPU_OVERRUN] = { "ftraced_events_overrun_total", "counter",
			  "Events overwritten in the kernel's ring." },
	[CPU_DROPPED] = { "ftraced_events_dropped_total", "counter",
			  "Events dropped because the kernel's ring was full." },
	[CPU_CAPTURED] = { "ftraced_captured_bytes_total", "counter",
			   "Raw ring-buffer bytes read from the kernel." },
	[CPU_STORED] = { "ftraced_stored_bytes_total", "counter",
			 "Bytes stored after compression." },
};

static void cpu_values(const struct ftraced_cpu_stats *c, uint64_t v[_CPU_METRIC_MAX])
{
	v[CPU_READ] = c->read;
	v[CPU_LOST] = c->overrun + c->dropped;
	v[CPU_OVERRUN] = c->overrun;
	v[CPU_DROPPED] = c->dropped;
	v[CPU_CAPTURED] = c->bytes_raw;
	v[CPU_STORED] = c->bytes_stored;
}

enum session_metric {
	S_ELAPSED,
	S_DISCARDED,
	S_BUFFER,
	S_FILES_WRITTEN,
	S_FILES_DELETED,
	S_BYTES_DELETED,
	S_FILES_FAILED,
	S_RETENTION_FAILURES,
	S_WARNING,
	S_DISK_USED,
	S_DISK_FILES,
	S_DISK_LIMIT,
	S_DISK_FILES_LIMIT,
	S_SNAPSHOTS,
	S_TRIGGER_FIRINGS,
	S_TRIGGER_SUPPRESSIONS,
	S_HISTORY,
	S_MEMORY,
	S_MEMORY_LIMIT,
	S_HISTORY_RAW,
	S_EVICTED,
	S_TOP_LEVEL,
	_SESSION_METRIC_MAX,
};

static const struct family session_families[_SESSION_METRIC_MAX] = {
	[S_ELAPSED] = { "ftraced_session_elapsed_seconds", "gauge",
			"Time the session has captured." },
	[S_DISCARDED] = { "ftraced_events_discarded_total", "counter",
			  "Events ftraced read, or left unread, and could not store." },
	[S_BUFFER] = { "ftraced_buffer_bytes", "gauge",
		       "Size of the kernel's ring buffer for each CPU." },
	[S_FILES_WRITTEN] = { "ftraced_files_written_total", "counter",
			      "Segments or snapshots put in the session's directory." },
	[S_FILES_DELETED] = { "ftraced_files_deleted_total", "counter",
			      "Segments or snapshots retention deleted to keep the disk budget." },
	[S_BYTES_DELETED] = { "ftraced_deleted_bytes_total", "counter",
			      "Bytes of the files retention deleted, with their events." },
	[S_FILES_FAILED] = { "ftraced_files_failed_total", "counter",
			     "Segments or snapshots that could not be written." },
	[S_RETENTION_FAILURES] = { "ftraced_retention_failures_total", "counter",
				   "Retention runs that could not count the session's files "
				   "(nothing deleted: the budget did not hold)." },
	[S_WARNING] = { "ftraced_session_warning", "gauge",
			"1: status shows a warning for the session (retention cannot count its "
			"files, or another process changed its instance)." },
	[S_DISK_USED] = { "ftraced_disk_used_bytes", "gauge",
			  "Bytes of closed files kept in the directory." },
	[S_DISK_FILES] = { "ftraced_disk_files", "gauge", "Closed files kept in the directory." },
	[S_DISK_LIMIT] = { "ftraced_disk_limit_bytes", "gauge", "The disk budget (max-total)." },
	[S_DISK_FILES_LIMIT] = { "ftraced_disk_files_limit", "gauge",
				 "The most files kept (max-files)." },
	[S_SNAPSHOTS] = { "ftraced_snapshots_total", "counter", "Snapshots written." },
	[S_TRIGGER_FIRINGS] = { "ftraced_trigger_firings_total", "counter",
				"Times a trigger asked for a snapshot." },
	[S_TRIGGER_SUPPRESSIONS] = { "ftraced_trigger_suppressions_total", "counter",
				     "Trigger events ignored by min-interval or max." },
	[S_HISTORY] = { "ftraced_flight_history_seconds", "gauge",
			"Time span of the history held, complete on every CPU." },
	[S_MEMORY] = { "ftraced_flight_memory_bytes", "gauge", "Memory the history takes." },
	[S_MEMORY_LIMIT] = { "ftraced_flight_memory_limit_bytes", "gauge",
			     "Memory the history may take." },
	[S_HISTORY_RAW] = { "ftraced_flight_history_raw_bytes", "gauge",
			    "Raw trace bytes the history holds." },
	[S_EVICTED] = { "ftraced_flight_evicted_bytes_total", "counter",
			"Raw trace bytes evicted from the history to stay in its memory." },
	[S_TOP_LEVEL] = { "ftraced_top_level_leased", "gauge",
			  "1: the session holds the lease of the top-level buffer." },
};

/*
 * Which families describe @s (@has) and their values (@v): files for
 * sessions with a directory, snapshots and triggers for flight recorders,
 * memory for those that keep their history in ours, limits only when set.
 */
static void session_values(const struct session_info *s, bool has[_SESSION_METRIC_MAX],
			   double v[_SESSION_METRIC_MAX])
{
	bool files = s->mode == FTRACED_MODE_CONTINUOUS || s->mode == FTRACED_MODE_FLIGHT;
	bool flight = s->mode == FTRACED_MODE_FLIGHT;
	bool memory = flight && s->flight_backend == FTRACED_FLIGHT_MEMORY;

	v[S_ELAPSED] = (double)s->elapsed_ms / 1000;
	v[S_DISCARDED] = (double)s->discarded;
	v[S_BUFFER] = (double)s->buffer_kb * 1024;
	v[S_WARNING] = s->warning[0] ? 1 : 0;
	has[S_ELAPSED] = has[S_DISCARDED] = has[S_BUFFER] = has[S_WARNING] = true;
	v[S_TOP_LEVEL] = 1;
	has[S_TOP_LEVEL] = strcmp(s->instance, FTRACED_TOP_LEVEL_INSTANCE) == 0;

	v[S_FILES_WRITTEN] = (double)s->counters.files_written;
	v[S_FILES_DELETED] = (double)s->counters.files_deleted;
	v[S_BYTES_DELETED] = (double)s->counters.bytes_deleted;
	v[S_FILES_FAILED] = (double)s->counters.files_failed;
	v[S_RETENTION_FAILURES] = (double)s->counters.retention_failures;
	v[S_DISK_USED] = (double)s->disk_bytes;
	v[S_DISK_FILES] = s->segments_kept;
	v[S_DISK_LIMIT] = (double)s->max_total;
	v[S_DISK_FILES_LIMIT] = s->max_files;
	has[S_FILES_WRITTEN] = has[S_FILES_DELETED] = has[S_FILES_FAILED] = files;
	has[S_BYTES_DELETED] = has[S_RETENTION_FAILURES] = files;
	has[S_DISK_USED] = has[S_DISK_FILES] = files;
	has[S_DISK_LIMIT] = files && s->max_total > 0;
	has[S_DISK_FILES_LIMIT] = files && s->max_files > 0;

	v[S_SNAPSHOTS] = s->snapshots;
	v[S_TRIGGER_FIRINGS] = (double)s->counters.triggers_fired;
	v[S_TRIGGER_SUPPRESSIONS] = (double)s->counters.triggers_suppressed;
	has[S_SNAPSHOTS] = has[S_TRIGGER_FIRINGS] = has[S_TRIGGER_SUPPRESSIONS] = flight;

	v[S_HISTORY] = (double)s->history_ms / 1000;
	v[S_MEMORY] = (double)s->history_bytes;
	v[S_MEMORY_LIMIT] = (double)s->flight_size;
	v[S_HISTORY_RAW] = (double)s->history_raw_bytes;
	v[S_EVICTED] = (double)s->evicted_raw_bytes;
	has[S_HISTORY] = memory && s->has_history_ms;
	has[S_MEMORY] = has[S_MEMORY_LIMIT] = has[S_HISTORY_RAW] = has[S_EVICTED] = memory;
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: backslash, double quote and newline escaped, as the format says. */
static void label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void session_label(FILE *f, const char *name, const struct session_info *s)
{
	fprintf(f, "%s{session=\"", name);
	label_value(f, s->name);
	fputc('"', f);
}

static void write_daemon(FILE *f, const struct reply *rep)
{
	const struct ftraced_daemon_counters *d = &rep->daemon;
	const struct {
		const char *name, *type, *help;
		uint64_t value;
	} rows[] = {
		{ "ftraced_connections_total", "counter", "Control connections accepted.",
		  d->connections },
		{ "ftraced_connections_refused_total", "counter",
		  "Control connections refused: not allowed, or no room.", d->connections_refused },
		{ "ftraced_requests_total", "counter", "Control requests received.", d->requests },
		{ "ftraced_request_errors_total", "counter", "Control requests answered with an error.",
		  d->request_errors },
		{ "ftraced_hook_runs_total", "counter", "On-segment commands run, counting those that could not start.", d->hooks_run },
		{ "ftraced_hook_failures_total", "counter",
		  "On-segment commands that could not start, failed, or outlived their deadline.",
		  d->hooks_failed },
		{ "ftraced_sessions_started_total", "counter", "Sessions that started capturing.",
		  d->sessions_started },
		{ "ftraced_sessions", "gauge", "Sessions that exist.", rep->sessions.n },
		{ "ftraced_instances_pending_removal", "gauge",
		  "Instances of finished sessions tracefs would not remove yet.", rep->n_pending },
	};

	family(f, "ftraced_uptime_seconds", "gauge", "Time since the daemon started.");
	fprintf(f, "ftraced_uptime_seconds %.3f\n", (double)d->uptime_ms / 1000);
	if (rep->has_daemon_cpu) {
		family(f, "ftraced_cpu_seconds_total", "counter",
		       "CPU time the daemon has used, user and system, all its threads.");
		fprintf(f, "ftraced_cpu_seconds_total %.6f\n", (double)rep->daemon_cpu_usec / 1e6);
	}
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		family(f, rows[k].name, rows[k].type, rows[k].help);
		fprintf(f, "%s %llu\n", rows[k].name, (unsigned long long)rows[k].value);
	}
}

static void write_info(FILE *f, const struct reply *rep)
{
	family(f, "ftraced_session_info", "gauge", "A session: its mode and state as labels.");
	for (size_t i = 0; i < rep->sessions.n; i++) {
		const struct session_info *s = &rep->sessions.items[i];

		session_label(f, "ftraced_session_info", s);
		fprintf(f, ",mode=\"%s\",state=\"", ctl_mode_name(s->mode));
		label_value(f, s->state);
		fputs("\"} 1\n", f);
	}
}

static void write_cpu_family(FILE *f, const struct reply *rep, enum cpu_metric m)
{
	family(f, cpu_families[m].name, cpu_families[m].type, cpu_families[m].help);
	for (size_t i = 0; i < rep->sessions.n; i++) {
		const struct session_info *s = &rep->sessions.items[i];

		for (unsigned k = 0; k < s->n_cpus; k++) {
			uint64_t v[_CPU_METRIC_MAX];

			cpu_values(&s->cpus[k], v);
			session_label(f, cpu_families[m].name, s);
			fprintf(f, ",cpu=\"%u\"} %llu\n", s->cpus[k].cpu, (unsigned long long)v[m]);
		}
	}
}

static void write_session_family(FILE *f, const struct reply *rep, enum session_metric m)
{
	bool any = false;

	for (size_t i = 0; i < rep->sessions.n; i++) {
		const struct session_info *s = &rep->sessions.items[i];
		bool has[_SESSION_METRIC_MAX];
		double v[_SESSION_METRIC_MAX];

		session_values(s, has, v);
		if (!has[m])
			continue;
		if (!any)
			family(f, session_families[m].name, session_families[m].type,
			       session_families[m].help);
		any = true;
		session_label(f, session_families[m].name, s);
		fprintf(f, "} %.15g\n", v[m]);
	}
}

/**
 * prom_metrics_write() - format a LIST reply as Prometheus text.
 * @f: where to write
 * @rep: a decoded SESSIONS reply to LIST, with the daemon's counters
 *
 * Return: 0, or -EIO if writing to @f failed.
 */
int prom_metrics_write(FILE *f, const struct reply *rep)
{
	if (rep->has_daemon)
		write_daemon(f, rep);
	write_info(f, rep);
	for (int m = 0; m < _CPU_METRIC_MAX; m++)
		write_cpu_family(f, rep, m);
	for (int m = 0; m < _SESSION_METRIC_MAX; m++)
		write_session_family(f, rep, m);
	return ferror(f) ? -EIO : 0;
}

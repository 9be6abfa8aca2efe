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

#include "lib/prom-metrics.h"

/* Which sessions a family describes. */
enum applies {
	ALL,
	WITH_FILES,      /* continuous sessions and flight recorders: a directory */
	FLIGHT,
	FLIGHT_MEMORY,   /* flight recorders keeping their history in our memory */
};

struct cpu_family {
	const char *name;
	const char *help;
	uint64_t (*value)(const struct ftraced_cpu_stats *c);
};

struct session_family {
	const char *name;
	const char *type;
	const char *help;
	enum applies applies;
	double (*value)(const struct session_info *s);
	/* NULL: always present; else only when it says so (an optional limit) */
	int (*present)(const struct session_info *s);
};

static uint64_t cpu_read(const struct ftraced_cpu_stats *c) { return c->read; }
static uint64_t cpu_lost(const struct ftraced_cpu_stats *c) { return c->overrun + c->dropped; }
static uint64_t cpu_overrun(const struct ftraced_cpu_stats *c) { return c->overrun; }
static uint64_t cpu_dropped(const struct ftraced_cpu_stats *c) { return c->dropped; }
static uint64_t cpu_raw(const struct ftraced_cpu_stats *c) { return c->bytes_raw; }
static uint64_t cpu_stored(const struct ftraced_cpu_stats *c) { return c->bytes_stored; }

static const struct cpu_family cpu_families[] = {
	{ "ftraced_events_read_total", "Events the kernel handed to ftraced.", cpu_read },
	{ "ftraced_events_lost_total",
	  "Events the kernel lost before ftraced read them (overrun plus dropped).", cpu_lost },
	{ "ftraced_events_overrun_total", "Events overwritten in the kernel's ring.", cpu_overrun },
	{ "ftraced_events_dropped_total", "Events dropped because the kernel's ring was full.",
	  cpu_dropped },
	{ "ftraced_captured_bytes_total", "Raw ring-buffer bytes read from the kernel.", cpu_raw },
	{ "ftraced_stored_bytes_total", "Bytes stored after compression.", cpu_stored },
};

static double s_elapsed(const struct session_info *s) { return (double)s->elapsed_ms / 1000; }
static double s_discarded(const struct session_info *s) { return (double)s->discarded; }
static double s_buffer(const struct session_info *s) { return (double)s->buffer_kb * 1024; }
static double s_written(const struct session_info *s) { return (double)s->counters.files_written; }
static double s_deleted(const struct session_info *s) { return (double)s->counters.files_deleted; }
static double s_failed(const struct session_info *s) { return (double)s->counters.files_failed; }
static double s_disk(const struct session_info *s) { return (double)s->disk_bytes; }
static double s_files(const struct session_info *s) { return (double)s->segments_kept; }
static double s_max_total(const struct session_info *s) { return (double)s->max_total; }
static double s_max_files(const struct session_info *s) { return (double)s->max_files; }
static double s_snapshots(const struct session_info *s) { return (double)s->snapshots; }
static double s_fired(const struct session_info *s) { return (double)s->counters.triggers_fired; }
static double s_suppressed(const struct session_info *s)
{
	return (double)s->counters.triggers_suppressed;
}
static double s_history(const struct session_info *s) { return (double)s->history_ms / 1000; }
static double s_memory(const struct session_info *s) { return (double)s->history_bytes; }
static double s_memory_limit(const struct session_info *s) { return (double)s->flight_size; }
static double s_history_raw(const struct session_info *s) { return (double)s->history_raw_bytes; }
static double s_evicted(const struct session_info *s) { return (double)s->evicted_raw_bytes; }

static int has_max_total(const struct session_info *s) { return s->max_total > 0; }
static int has_max_files(const struct session_info *s) { return s->max_files > 0; }
static int has_history(const struct session_info *s) { return s->has_history_ms; }

static const struct session_family session_families[] = {
	{ "ftraced_session_elapsed_seconds", "gauge", "Time the session has captured.",
	  ALL, s_elapsed, NULL },
	{ "ftraced_events_discarded_total", "counter",
	  "Events ftraced read, or left unread, and could not store.", ALL, s_discarded, NULL },
	{ "ftraced_buffer_bytes", "gauge", "Size of the kernel's ring buffer for each CPU.",
	  ALL, s_buffer, NULL },
	{ "ftraced_files_written_total", "counter",
	  "Segments or snapshots put in the session's directory.", WITH_FILES, s_written, NULL },
	{ "ftraced_files_deleted_total", "counter",
	  "Segments or snapshots retention deleted to keep the disk budget.", WITH_FILES,
	  s_deleted, NULL },
	{ "ftraced_files_failed_total", "counter",
	  "Segments or snapshots that could not be written.", WITH_FILES, s_failed, NULL },
	{ "ftraced_disk_used_bytes", "gauge", "Bytes of closed files kept in the directory.",
	  WITH_FILES, s_disk, NULL },
	{ "ftraced_disk_files", "gauge", "Closed files kept in the directory.",
	  WITH_FILES, s_files, NULL },
	{ "ftraced_disk_limit_bytes", "gauge", "The disk budget (max-total).",
	  WITH_FILES, s_max_total, has_max_total },
	{ "ftraced_disk_files_limit", "gauge", "The most files kept (max-files).",
	  WITH_FILES, s_max_files, has_max_files },
	{ "ftraced_snapshots_total", "counter", "Snapshots written.", FLIGHT, s_snapshots, NULL },
	{ "ftraced_trigger_firings_total", "counter", "Times a trigger asked for a snapshot.",
	  FLIGHT, s_fired, NULL },
	{ "ftraced_trigger_suppressions_total", "counter",
	  "Trigger events ignored by min-interval or max.", FLIGHT, s_suppressed, NULL },
	{ "ftraced_flight_history_seconds", "gauge",
	  "Time span of the history held, complete on every CPU.", FLIGHT_MEMORY, s_history,
	  has_history },
	{ "ftraced_flight_memory_bytes", "gauge", "Memory the history takes.",
	  FLIGHT_MEMORY, s_memory, NULL },
	{ "ftraced_flight_memory_limit_bytes", "gauge", "Memory the history may take.",
	  FLIGHT_MEMORY, s_memory_limit, NULL },
	{ "ftraced_flight_history_raw_bytes", "gauge", "Raw trace bytes the history holds.",
	  FLIGHT_MEMORY, s_history_raw, NULL },
	{ "ftraced_flight_evicted_bytes_total", "counter",
	  "Raw trace bytes evicted from the history to stay in its memory.", FLIGHT_MEMORY,
	  s_evicted, NULL },
};

static bool applies(enum applies a, const struct session_info *s)
{
	switch (a) {
	case WITH_FILES:
		return s->mode == FTRACED_MODE_CONTINUOUS || s->mode == FTRACED_MODE_FLIGHT;
	case FLIGHT:
		return s->mode == FTRACED_MODE_FLIGHT;
	case FLIGHT_MEMORY:
		return s->mode == FTRACED_MODE_FLIGHT && s->flight_backend == FTRACED_FLIGHT_MEMORY;
	default:
		return true;
	}
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
		{ "ftraced_hook_runs_total", "counter", "On-segment commands started.", d->hooks_run },
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
		fprintf(f, ",mode=\"%s\",state=\"", mode_name(s->mode));
		label_value(f, s->state);
		fputs("\"} 1\n", f);
	}
}

static void write_cpu_family(FILE *f, const struct reply *rep, const struct cpu_family *cf)
{
	family(f, cf->name, "counter", cf->help);
	for (size_t i = 0; i < rep->sessions.n; i++) {
		const struct session_info *s = &rep->sessions.items[i];

		for (unsigned k = 0; k < s->n_cpus; k++) {
			session_label(f, cf->name, s);
			fprintf(f, ",cpu=\"%u\"} %llu\n", s->cpus[k].cpu,
				(unsigned long long)cf->value(&s->cpus[k]));
		}
	}
}

static void write_session_family(FILE *f, const struct reply *rep, const struct session_family *sf)
{
	bool any = false;

	for (size_t i = 0; i < rep->sessions.n; i++) {
		const struct session_info *s = &rep->sessions.items[i];

		if (!applies(sf->applies, s) || (sf->present && !sf->present(s)))
			continue;
		if (!any)
			family(f, sf->name, sf->type, sf->help);
		any = true;
		session_label(f, sf->name, s);
		fprintf(f, "} %.15g\n", sf->value(s));
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
	for (size_t k = 0; k < sizeof(cpu_families) / sizeof(cpu_families[0]); k++)
		write_cpu_family(f, rep, &cpu_families[k]);
	for (size_t k = 0; k < sizeof(session_families) / sizeof(session_families[0]); k++)
		write_session_family(f, rep, &session_families[k]);
	return ferror(f) ? -EIO : 0;
}

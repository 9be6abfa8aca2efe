// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl list and status: what exists, and in how much detail.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client/commands/commands.h"
#include "client/ctl.h"

static int call_sessions(const struct client_options *o, const char *command, uint16_t type,
			 const char *session, struct reply *rep)
{
	static struct ctl_builder b;
	int r;

	ctl_builder_init(&b, type);
	if (session)
		ctl_put_string(&b, FTRACED_ATTR_SESSION, session);
	r = ctl_call(o, &b, rep);
	if (r < 0)
		return exit_code_for_call(r);
	if (rep->type == FTRACED_MSG_ERROR) {
		print_error_reply(command, rep);
		return exit_code_for_reply(rep);
	}
	return EXIT_OK;
}

static void print_limit(const char *what, bool set, const char *value)
{
	printf("  %-13s %s\n", what, set ? value : "none");
}

static void print_continuous(const struct session_info *s)
{
	char a[32], b[32];

	print_size(a, sizeof(a), s->disk_bytes);
	if (s->has_segment_seq)
		printf("  segment:      %06u open, %u closed on disk (%s)\n", s->segment_seq,
		       s->segments_kept, a);
	else
		printf("  segments:     %u closed on disk (%s)\n", s->segments_kept, a);
	if (s->directory[0])
		printf("  directory:    %s\n", s->directory);
	print_size(a, sizeof(a), s->segment_size);
	snprintf(b, sizeof(b), "%.1f s", (double)s->segment_time_ms / 1000);
	printf("  rotate at:    %s%s%s\n", s->segment_size ? a : "",
	       s->segment_size && s->segment_time_ms ? " or " : "", s->segment_time_ms ? b : "");
	print_size(a, sizeof(a), s->max_total);
	print_limit("max total:", s->max_total, a);
	snprintf(b, sizeof(b), "%u", s->max_files);
	print_limit("max files:", s->max_files, b);
	snprintf(b, sizeof(b), "%.0f s", (double)s->max_age_ms / 1000);
	print_limit("max age:", s->max_age_ms, b);
	if (s->keep_free_percent)
		snprintf(b, sizeof(b), "%u%%", s->keep_free_percent);
	else
		print_size(b, sizeof(b), s->keep_free);
	print_limit("keep free:", s->keep_free || s->keep_free_percent, b);
}

/* record -m: what its rings hold, and the older data they dropped. */
static void print_keep(const struct session_info *s)
{
	char a[32], b[32];

	print_size(a, sizeof(a), s->history_raw_bytes);
	print_size(b, sizeof(b), s->evicted_raw_bytes);
	printf("  kept (-m):    at most %llu KiB per CPU, the most recent: %s of trace kept, "
	       "%s older dropped\n", (unsigned long long)s->keep_kb, a, b);
}

static void print_flight(const struct session_info *s)
{
	char a[32], b[32], c[32], path[2 * sizeof(s->directory)];

	if (s->flight_backend == FTRACED_FLIGHT_KERNEL) {
		printf("  flight:       kernel backend (history in the kernel's ring)\n");
	} else if (s->flight_backend == FTRACED_FLIGHT_PERSISTENT) {
		printf("  flight:       persistent backend (history in the ring mapped onto memory "
		       "reserved at boot, instance %s)\n", s->instance);
	} else {
		print_size(a, sizeof(a), s->history_bytes);
		print_size(b, sizeof(b), s->flight_size);
		print_size(c, sizeof(c), s->history_raw_bytes);
		printf("  flight:       memory backend, %s of %s holding %s of trace", a, b, c);
		if (s->history_bytes > 0)
			printf(" (%.1fx)", (double)s->history_raw_bytes / (double)s->history_bytes);
		printf("\n");
		if (s->has_history_ms)
			printf("  history:      %.1f s complete on every CPU%s%s\n",
			       (double)s->history_ms / 1000, s->history_from[0] ? ", from " : "",
			       s->history_from);
		print_size(a, sizeof(a), s->evicted_raw_bytes);
		printf("  evicted:      %s (oldest history, to stay in budget)\n", a);
	}
	print_size(a, sizeof(a), s->disk_bytes);
	printf("  snapshots:    %u taken, %u kept (%s)%s%s\n", s->snapshots, s->segments_kept, a,
	       s->directory[0] ? " in " : "", s->directory);
	if (s->last_snapshot_us)
		printf("  last one:     %s, %s\n", utc_seconds(b, sizeof(b), s->last_snapshot_us),
		       s->last_snapshot[0] ? s->last_snapshot : "into the client's file");
	if (s->recovered[0])
		printf("  recovered:    %s (what a crash left, written at the daemon's start)\n",
		       session_recovered_path(s, path, sizeof(path)));
	for (unsigned k = 0; k < s->n_triggers; k++)
		printf("  trigger:      %s\n", s->triggers[k]);
	if (s->note[0])
		printf("  note:         %s\n", s->note);
}

/* A session's record; the one that leases the top-level buffer says so. */
static json_t *record_json(const struct reply *rep, const struct session_info *s)
{
	json_t *o = session_json(s);

	if (o && rep->lease_holder[0] && strcmp(rep->lease_holder, s->name) == 0)
		json_object_set_new(o, "leases_top_level", json_true());
	return o;
}

static void print_json(const struct reply *rep)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < rep->sessions.n; i++)
		json_array_append_new(a, record_json(rep, &rep->sessions.items[i]));
	json_print(a);
}

/* Why a session failed, below the table (status shows it too), so a failed one is no mystery. */
static void print_errors(const struct reply *rep)
{
	bool first = true;

	for (size_t i = 0; i < rep->sessions.n; i++) {
		const struct session_info *s = &rep->sessions.items[i];

		if (s->error >= 0)
			continue;
		printf("%sSession %s failed: %s\n", first ? "\n" : "", s->name, s->message);
		first = false;
	}
}

/* Instances of finished sessions that tracefs would not remove yet (a process holds them). */
static void print_pending(const struct reply *rep)
{
	for (size_t i = 0; i < rep->n_pending; i++)
		printf("%sWaiting for removal: instance %s\n", i ? "" : "\n", rep->pending[i]);
}

int cmd_list(const struct client_options *o, int argc, char *argv[])
{
	struct reply rep;
	const char *unused;
	int r;

	if (list_offer(o, argc, argv, &r))
		return r;
	if (parse_session_arg("list", argc, argv, false, &unused) < 0 || unused) {
		if (unused)
			print_error("list", "unexpected argument '%s'", unused);
		return EXIT_USAGE;
	}
	r = call_sessions(o, "list", FTRACED_MSG_LIST, NULL, &rep);
	if (r != EXIT_OK)
		return r;
	if (o->json) {
		print_json(&rep);
	} else if (rep.sessions.n == 0) {
		printf("No sessions.\n");
	} else {
		printf("%-16s %-11s %-20s %-14s %6s %10s %10s %10s %8s  %s\n", "SESSION", "STATE",
		       "STARTED (UTC)", "INSTANCE", "OWNER", "ELAPSED", "CAPTURED", "STORED", "LOST",
		       "EVENTS");
		for (size_t i = 0; i < rep.sessions.n; i++) {
			const struct session_info *s = &rep.sessions.items[i];
			char raw[32], stored[32], elapsed[32], started[32] = "-";

			print_size(raw, sizeof(raw), session_bytes_raw(s));
			print_size(stored, sizeof(stored), session_bytes_stored(s));
			snprintf(elapsed, sizeof(elapsed), "%.1fs", (double)s->elapsed_ms / 1000);
			if (s->started_us)
				utc_seconds(started, sizeof(started), s->started_us);
			printf("%-16s %-11s %-20s %-14s %6u %10s %10s %10s %8llu  ", s->name, s->state,
			       started, s->instance[0] ? s->instance : "-", s->owner, elapsed, raw,
			       stored, (unsigned long long)session_lost(s));
			for (unsigned k = 0; k < s->n_events; k++)
				printf("%s%s", k ? "," : "", s->events[k]);
			printf("\n");
		}
		print_errors(&rep);
	}
	if (!o->json)
		print_pending(&rep);
	ctl_reply_done(&rep);
	return EXIT_OK;
}

int cmd_status(const struct client_options *o, int argc, char *argv[])
{
	char *args[3] = { argv[0] };
	const char *session;
	bool watch = false;
	struct reply rep;
	int n = 1, r;

	/* status [--watch|-w] [SESSION], in either order */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--watch") == 0 || strcmp(argv[i], "-w") == 0) {
			watch = true;
		} else if (n < 3) {
			args[n++] = argv[i];
		} else {
			print_error("status", "unexpected argument '%s'", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (n == 2 && (strcmp(args[1], "--help") == 0 || strcmp(args[1], "-h") == 0)) {
		printf("Usage: ftracectl status [SESSION] [--watch]\n\n"
		       "Show sessions in detail.\n\n"
		       "  -w, --watch   a live view refreshed every second (q or Ctrl-C quits);\n"
		       "                one line per refresh when the output is not a terminal\n");
		return EXIT_OK;
	}
	if (parse_session_arg("status", n, args, false, &session) < 0)
		return EXIT_USAGE;
	if (watch && o->json) {
		print_error("status", "--watch draws for people; use --json without it");
		return EXIT_USAGE;
	}
	if (watch)
		return watch_status(o, session);
	r = call_sessions(o, "status", FTRACED_MSG_STATUS, session, &rep);
	if (r != EXIT_OK)
		return r;
	if (o->json) {
		if (session && rep.sessions.n == 1) {
			json_print(record_json(&rep, &rep.sessions.items[0]));
		} else {
			print_json(&rep);
		}
		ctl_reply_done(&rep);
		return EXIT_OK;
	}
	if (rep.lease_holder[0])
		printf("Top-level buffer leased by session %s (put back as it was found when it "
		       "ends)\n\n", rep.lease_holder);
	if (rep.sessions.n == 0)
		printf("No sessions.\n");
	for (size_t i = 0; i < rep.sessions.n; i++) {
		const struct session_info *s = &rep.sessions.items[i];
		char a[32], b[32], when[32];

		printf("%sSession %s (%s)\n", i ? "\n" : "", s->name, s->state);
		printf("  instance:     %s\n", s->instance[0] ? s->instance : "- (released)");
		printf("  owner uid:    %u\n", s->owner);
		printf("  events:      ");
		for (unsigned k = 0; k < s->n_events; k++)
			printf(" %s%s", s->events[k], s->skipped[k] ? " (skipped: not in this kernel)" :
			       "");
		printf("\n  compression:  %s, sub-buffer %u bytes\n",
		       s->compression == FTRACED_COMPRESSION_NONE ? "none" : "zstd", s->subbuf_size);
		if (s->rt_priority)
			printf("  scheduling:   capture workers SCHED_FIFO %u\n", s->rt_priority);
		print_size(a, sizeof(a), session_bytes_raw(s));
		print_size(b, sizeof(b), session_bytes_stored(s));
		if (s->started_us)
			printf("  started:      %s\n", utc_seconds(when, sizeof(when), s->started_us));
		printf("  elapsed:      %.1f s\n  captured:     %s (stored %s)\n",
		       (double)s->elapsed_ms / 1000, a, b);
		printf("  lost events:  %llu since start", (unsigned long long)session_lost(s));
		if (s->mode == FTRACED_MODE_CONTINUOUS && s->n_cpus_segment)
			printf(", %llu in the open segment",
			       (unsigned long long)session_lost_segment(s));
		printf("\n");
		/* The kernel's loss says nothing of what retention took off the disk since. */
		if (s->counters.files_deleted > 0) {
			print_size(a, sizeof(a), s->counters.bytes_deleted);
			printf("  deleted:      %llu files (%s) by retention, with their events\n",
			       (unsigned long long)s->counters.files_deleted, a);
		}
		if (s->mode == FTRACED_MODE_CONTINUOUS)
			print_continuous(s);
		if (s->mode == FTRACED_MODE_FLIGHT)
			print_flight(s);
		if (s->keep_kb)
			print_keep(s);
		if (s->error < 0)
			printf("  error:        %s\n", s->message);
		if (s->warning[0])
			printf("  warning:      %s\n", s->warning);
		if (s->gap[0])
			printf("  gap:          %s\n", s->gap);
		printf("  %-4s %12s %12s %8s %10s %10s %10s\n", "CPU", "CAPTURED", "STORED", "CHUNKS",
		       "READ", "OVERRUN", "DROPPED");
		for (unsigned k = 0; k < s->n_cpus; k++) {
			const struct ftraced_cpu_stats *c = &s->cpus[k];

			print_size(a, sizeof(a), c->bytes_raw);
			print_size(b, sizeof(b), c->bytes_stored);
			printf("  %-4u %12s %12s %8llu %10llu %10llu %10llu\n", c->cpu, a, b,
			       (unsigned long long)c->chunks, (unsigned long long)c->read,
			       (unsigned long long)c->overrun, (unsigned long long)c->dropped);
		}
	}
	print_pending(&rep);
	ctl_reply_done(&rep);
	return EXIT_OK;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl snapshot NAME [-o FILE] [--trim] [--since TIME]: write a flight
 * recorder's history (or its last part) as a v7 file while it keeps
 * recording. With -o the client opens the file (as FILE.partial, renamed
 * when complete) and passes it; without, the daemon writes it into the
 * session's snapshots directory and replies with its path.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client/commands/commands.h"
#include "client/ctl.h"
#include "client/output.h"
#include "ftraced/macro.h"
#include "lib/time-util.h"
#include "lib/wall-clock.h"

#define SNAPSHOT_TIMEOUT_MS (10 * 60 * 1000) /* a large history to a slow disk */

static void snapshot_help(void)
{
	printf("Usage: ftracectl snapshot SESSION [-o FILE] [--trim] [--since TIME] [--force]\n\n"
	       "Write what a flight recorder holds as a trace-cmd v7 file; recording goes on.\n"
	       "Without -o the file goes to STATE_DIR/sessions/SESSION/snapshots/ and its path\n"
	       "is printed.\n\n"
	       "  -o, --output FILE  write here (as FILE.partial until complete)\n"
	       "      --force        overwrite FILE if it exists\n"
	       "      --trim         start every CPU at the latest time from which any CPU's\n"
	       "                     data is complete, so no CPU is missing events in the file\n"
	       "      --since TIME   keep only the events from TIME on: -30s, -10m (before\n"
	       "                     now), 13:02[:05] (UTC, the last such time) or\n"
	       "                     2026-11-25T13:02:00Z\n"
	       "  -h, --help         show this help\n");
}

int cmd_snapshot(const struct client_options *o, int argc, char *argv[])
{
	enum { ARG_TRIM = 0x100, ARG_FORCE, ARG_SINCE };
	/* --force has no letter: -f is trace-cmd's filter, as in record. */
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, ARG_FORCE },
		{ "trim", no_argument, NULL, ARG_TRIM },
		{ "since", required_argument, NULL, ARG_SINCE },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static struct ctl_builder b;
	_cleanup_close_ int sock = -EBADF, out = -EBADF;
	const char *output = NULL;
	char partial[PATH_MAX] = "";
	bool force = false, trim = false, has_since = false;
	long long since_us = 0;
	struct reply rep;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:h", options, NULL)) >= 0) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case ARG_FORCE:
			force = true;
			break;
		case ARG_TRIM:
			trim = true;
			break;
		case ARG_SINCE:
			if (wall_time_parse(optarg, (long long)realtime_usec(), &since_us) < 0) {
				print_error("snapshot", "invalid --since '%s' (e.g. -30s, -10m, 13:02, "
					    "2026-11-25T13:02:00Z; times are UTC)", optarg);
				return EXIT_USAGE;
			}
			has_since = true;
			break;
		case 'h':
			snapshot_help();
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		print_error("snapshot", optind >= argc ? "which session? (ftracectl snapshot NAME)" :
			    "unexpected argument '%s'", argv[optind + 1 < argc ? optind + 1 : 0]);
		return EXIT_USAGE;
	}
	if (!ctl_name_valid(argv[optind])) {
		print_error("snapshot", "invalid session name '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	ctl_builder_init(&b, FTRACED_MSG_SNAPSHOT);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, argv[optind]);
	if (trim)
		ctl_put_u32(&b, FTRACED_ATTR_TRIM, 1);
	if (has_since)
		ctl_put_u64(&b, FTRACED_ATTR_SINCE_US, (uint64_t)since_us);
	if (output) {
		out = output_open("snapshot", output, force, partial, sizeof(partial));
		if (out < 0)
			return EXIT_FAILED;
	}
	r = ctl_connect(o, &sock);
	if (r < 0) {
		output_discard(partial);
		return r == -EACCES || r == -EPERM ? EXIT_DENIED : EXIT_NO_DAEMON;
	}
	r = ctl_send_and_receive(sock, &b, out, SNAPSHOT_TIMEOUT_MS, &rep);
	out = safe_close(out);
	if (r < 0 || rep.type == FTRACED_MSG_ERROR || rep.type != FTRACED_MSG_OK) {
		if (r < 0)
			print_error("snapshot", "talking to the daemon failed: %s", strerror(-r));
		else if (rep.type == FTRACED_MSG_ERROR)
			print_error("snapshot", "%s",
				    rep.message[0] ? rep.message : strerror(-rep.error));
		else
			print_error("snapshot", "unexpected reply from the daemon");
		output_discard(partial);
		ctl_reply_done(&rep);
		return r < 0 ? EXIT_FAILED : rep.type == FTRACED_MSG_ERROR ?
			exit_code_for_reply(&rep) : EXIT_FAILED;
	}
	if (output && output_commit("snapshot", partial, output) < 0)
		return EXIT_FAILED;
	if (o->json) {
		json_t *v = json_object();

		if (v) {
			json_put_text(v, "file", output ? output : rep.path);
			json_put_u64(v, "bytes", rep.file_bytes);
			if (rep.note[0])
				json_put_text(v, "note", rep.note);
		}
		json_print(v);
	} else {
		printf("%s\n", output ? output : rep.path);
		if (rep.note[0])
			fprintf(stderr, "Note: %s\n", rep.note);
	}
	ctl_reply_done(&rep);
	return EXIT_OK;
}

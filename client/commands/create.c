// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl create: define a named session. A continuous one records, once
 * started, into rotating segments in the daemon's state directory, kept
 * within a disk budget; a flight recorder keeps recent history and writes
 * it on `ftracectl snapshot` or when one of its triggers fires.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "client/capture-options.h"
#include "client/commands/commands.h"
#include "client/ctl.h"

static void create_help(void)
{
	printf("Usage: ftracectl create NAME [--mode continuous|flight] -e EVENT... [OPTIONS]\n\n"
	       "Create a continuous session: once started it records into rotating, self-\n"
	       "contained v7 files (segments) in STATE_DIR/sessions/NAME/, within a budget.\n"
	       "Or a flight recorder: it keeps the recent past and writes it as a v7 file in\n"
	       "STATE_DIR/sessions/NAME/snapshots/ on 'ftracectl snapshot' or a trigger.\n\n"
	       CAPTURE_OPTIONS_HELP
	       "      --mode MODE        continuous (the default) or flight\n"
	       "Continuous sessions:\n"
	       "      --segment-size SIZE  close a segment at this size (default 128M)\n"
	       "      --segment-time TIME  close a segment after this long (e.g. 10m)\n"
	       "Flight recorders:\n"
	       "      --flight-backend B   memory (default): compressed history in the daemon;\n"
	       "                           kernel: history in the kernel's ring (-b), no\n"
	       "                           cost while idle; persistent: in a ring mapped\n"
	       "                           onto memory reserved at boot (Linux 6.12), which\n"
	       "                           a crash and reboot keep\n"
	       "      --boot-instance NAME  the persistent backend's instance, named by the\n"
	       "                           kernel command line's trace_instance= (boot_map)\n"
	       "      --flight-size SIZE   memory for the history, all CPUs (default 64M)\n"
	       "      --trigger SPEC       snapshot when an event happens (repeatable):\n"
	       "                           event=SYSTEM:EVENT[,filter=EXPR] or a preset: oom,\n"
	       "                           warn, bug, error-report, hung-task, signal=SIGSEGV;\n"
	       "                           then [,pre=TIME][,post=TIME][,min-interval=TIME]\n"
	       "                           [,max=N]\n"
	       "Both, for their closed files (segments or snapshots):\n"
	       "      --max-total SIZE     keep at most this much\n"
	       "      --max-files N        keep at most N files\n"
	       "      --max-age TIME       delete files older than this\n"
	       "      --keep-free SIZE|N%% leave this much of the file system free\n"
	       "      --on-segment CMD     run CMD with each new file's path (root only)\n"
	       "\nSIZE takes K, M, G or T (powers of 1024); TIME takes ms, s, m, h or d.\n");
}

/* Create's own options, outside the capture options. */
enum {
	ARG_MODE = _OPT_CAPTURE_END, ARG_SEGMENT_SIZE, ARG_SEGMENT_TIME, ARG_MAX_TOTAL,
	ARG_MAX_FILES, ARG_MAX_AGE, ARG_KEEP_FREE, ARG_ON_SEGMENT, ARG_FLIGHT_BACKEND,
	ARG_FLIGHT_SIZE, ARG_TRIGGER, ARG_BOOT_INSTANCE,
};

/* One of create's own options into the request. Return: 0, or -1 after saying why not. */
static int create_option(int c, const char *arg, struct ctl_builder *b, uint32_t *mode)
{
	uint64_t v;
	int backend;

	switch (c) {
	case ARG_MODE:
		if (strcmp(arg, "continuous") == 0) {
			*mode = FTRACED_MODE_CONTINUOUS;
		} else if (strcmp(arg, "flight") == 0) {
			*mode = FTRACED_MODE_FLIGHT;
		} else {
			print_error("create", "unknown mode '%s' (continuous, flight)", arg);
			return -1;
		}
		break;
	case ARG_FLIGHT_BACKEND:
		backend = ctl_flight_backend_parse(arg);
		if (backend < 0) {
			print_error("create", "unknown flight backend '%s' (memory, kernel, "
				    "persistent)", arg);
			return -1;
		}
		ctl_put_u32(b, FTRACED_ATTR_FLIGHT_BACKEND, (uint32_t)backend);
		break;
	case ARG_BOOT_INSTANCE:
		if (!ctl_string_valid(FTRACED_ATTR_INSTANCE, arg, FTRACED_NAME_MAX)) {
			print_error("create", "invalid --boot-instance '%s' (1 to %u letters, "
				    "digits, _ and -)", arg, FTRACED_NAME_MAX);
			return -1;
		}
		ctl_put_string(b, FTRACED_ATTR_INSTANCE, arg);
		break;
	case ARG_FLIGHT_SIZE:
		if (parse_size(arg, &v) < 0 || v == 0) {
			print_error("create", "invalid size '%s' (e.g. 64M, 1G)", arg);
			return -1;
		}
		ctl_put_u64(b, FTRACED_ATTR_FLIGHT_SIZE, v);
		break;
	case ARG_TRIGGER:
		if (!ctl_string_valid(FTRACED_ATTR_TRIGGER, arg, FTRACED_TRIGGER_MAX)) {
			print_error("create", "--trigger is empty, too long (at most %u) or "
				    "not printable ASCII", FTRACED_TRIGGER_MAX);
			return -1;
		}
		ctl_put_string(b, FTRACED_ATTR_TRIGGER, arg);
		break;
	case ARG_SEGMENT_SIZE:
	case ARG_MAX_TOTAL:
		if (parse_size(arg, &v) < 0 || v == 0) {
			print_error("create", "invalid size '%s' (e.g. 64M, 2G)", arg);
			return -1;
		}
		ctl_put_u64(b, c == ARG_SEGMENT_SIZE ? FTRACED_ATTR_SEGMENT_SIZE :
			    FTRACED_ATTR_MAX_TOTAL, v);
		break;
	case ARG_SEGMENT_TIME:
	case ARG_MAX_AGE:
		if (parse_duration_ms(arg, &v) < 0) {
			print_error("create", "invalid duration '%s' (e.g. 30s, 10m, 24h)",
				    arg);
			return -1;
		}
		ctl_put_u64(b, c == ARG_SEGMENT_TIME ? FTRACED_ATTR_SEGMENT_TIME_MS :
			    FTRACED_ATTR_MAX_AGE_MS, v);
		break;
	case ARG_MAX_FILES:
		if (parse_size(arg, &v) < 0 || v == 0 || v > UINT32_MAX) {
			print_error("create", "invalid number of files '%s'", arg);
			return -1;
		}
		ctl_put_u32(b, FTRACED_ATTR_MAX_FILES, (uint32_t)v);
		break;
	case ARG_KEEP_FREE: {
		size_t n = strlen(arg);

		if (n > 1 && arg[n - 1] == '%') {
			char digits[8];

			if (n > sizeof(digits) || (snprintf(digits, sizeof(digits), "%.*s",
					(int)(n - 1), arg), parse_size(digits, &v) < 0) ||
			    v == 0 || v > 99) {
				print_error("create", "invalid percentage '%s' (1%%-99%%)", arg);
				return -1;
			}
			ctl_put_u32(b, FTRACED_ATTR_KEEP_FREE_PERCENT, (uint32_t)v);
		} else if (parse_size(arg, &v) < 0) {
			print_error("create", "invalid size '%s' (e.g. 10G or 15%%)", arg);
			return -1;
		} else {
			ctl_put_u64(b, FTRACED_ATTR_KEEP_FREE, v);
		}
		break;
	}
	case ARG_ON_SEGMENT:
		if (strlen(arg) == 0 || strlen(arg) > FTRACED_COMMAND_MAX) {
			print_error("create", "--on-segment command is empty or too long");
			return -1;
		}
		ctl_put_string(b, FTRACED_ATTR_ON_SEGMENT, arg);
		break;
	default:
		return -1;
	}
	return 0;
}

int cmd_create(const struct client_options *o, int argc, char *argv[])
{
	static const struct option options[] = {
		CAPTURE_LONG_OPTIONS,
		{ "mode", required_argument, NULL, ARG_MODE },
		{ "segment-size", required_argument, NULL, ARG_SEGMENT_SIZE },
		{ "segment-time", required_argument, NULL, ARG_SEGMENT_TIME },
		{ "max-total", required_argument, NULL, ARG_MAX_TOTAL },
		{ "max-files", required_argument, NULL, ARG_MAX_FILES },
		{ "max-age", required_argument, NULL, ARG_MAX_AGE },
		{ "keep-free", required_argument, NULL, ARG_KEEP_FREE },
		{ "on-segment", required_argument, NULL, ARG_ON_SEGMENT },
		{ "flight-backend", required_argument, NULL, ARG_FLIGHT_BACKEND },
		{ "boot-instance", required_argument, NULL, ARG_BOOT_INSTANCE },
		{ "flight-size", required_argument, NULL, ARG_FLIGHT_SIZE },
		{ "trigger", required_argument, NULL, ARG_TRIGGER },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static struct ctl_builder b;
	uint32_t mode = FTRACED_MODE_CONTINUOUS;
	struct capture_state st = {};
	struct reply rep;
	int c, r;

	ctl_builder_init(&b, FTRACED_MSG_CREATE);
	optind = 0; /* 0, not 1: re-initialise getopt fully (main used "+") */
	while ((c = getopt_long(argc, argv, CAPTURE_SHORT_OPTIONS "h", options, NULL)) >= 0) {
		r = capture_option("create", c, optarg, &b, &st);
		if (r < 0)
			return EXIT_USAGE;
		if (r > 0)
			continue;
		if (c == 'h') {
			create_help();
			return EXIT_OK;
		}
		if (create_option(c, optarg, &b, &mode) < 0)
			return EXIT_USAGE;
	}
	if (optind + 1 != argc) {
		print_error("create", optind >= argc ? "which name? (ftracectl create NAME ...)" :
			    "unexpected argument '%s'", argv[optind + 1 < argc ? optind + 1 : 0]);
		return EXIT_USAGE;
	}
	if (!ctl_name_valid(argv[optind])) {
		print_error("create", "invalid session name '%s' (1-%u of A-Z a-z 0-9 _ -)",
			    argv[optind], FTRACED_NAME_MAX);
		return EXIT_USAGE;
	}
	if (capture_finish("create", &b, &st) < 0)
		return EXIT_USAGE;
	if (!st.has_source) {
		print_error("create", "no events given; use -e SYSTEM:EVENT (e.g. -e sched) or -p "
			    "TRACER");
		return EXIT_USAGE;
	}
	ctl_put_string(&b, FTRACED_ATTR_SESSION, argv[optind]);
	ctl_put_u32(&b, FTRACED_ATTR_MODE, mode);
	if (b.error) {
		print_error("create", "too many events or options for one request");
		return EXIT_USAGE;
	}
	r = ctl_call_timeout(o, &b, CTL_LONG_TIMEOUT_MS, &rep);
	if (r < 0)
		return exit_code_for_call(r);
	if (rep.type == FTRACED_MSG_ERROR) {
		print_error_reply("create", &rep);
		return exit_code_for_reply(&rep);
	}
	ctl_reply_done(&rep);
	if (o->json) {
		json_t *done = json_object();

		if (done)
			json_put_text(done, "created", argv[optind]);
		json_print(done);
	}
	return EXIT_OK;
}

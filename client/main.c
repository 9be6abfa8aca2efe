// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl: global options, then one subcommand per file (record.c,
 * create.c, control.c, list.c). Exit codes are in client/ctl.h.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands/commands.h"
#include "client/ctl.h"
#include "config.h"

#define DEFAULT_SOCKET "/run/ftraced/control"

static void help(void)
{
	printf("Usage: ftracectl [--socket PATH] [--json] COMMAND [ARGS]\n\n"
	       "Control the ftraced kernel trace daemon.\n\n"
	       "Commands:\n"
	       "  record -e EVENT... [-o FILE] [CMD...]   record into a trace-cmd v7 file\n"
	       "  create NAME -e EVENT... [OPTIONS]       define a continuous or flight session\n"
	       "  start SESSION                           start capturing\n"
	       "  stop SESSION                            stop capturing (files are complete on return)\n"
	       "  snapshot SESSION [-o FILE] [--trim]     write a flight recorder's history\n"
	       "  rotate SESSION                          close a continuous session's open segment\n"
	       "  destroy SESSION                         stop and forget a session (files stay)\n"
	       "  list [-e [REGEX]|-t|-f [REGEX]|-o|--kernel]  list sessions, or what the\n"
	       "                                          kernel offers (events, tracers, ...)\n"
	       "  save SESSION                            print a session's sessions.d file\n"
	       "  reload                                  read ftraced.conf and sessions.d again\n"
	       "  status [SESSION] [--watch]              show sessions in detail, or a live view\n"
	       "  metrics [-o FILE]                       counters in the Prometheus text format\n"
	       "  recover STATE_DIR                       rebuild files a crash left unfinished\n"
	       "  info FILE                               what a v7 file holds (offline)\n"
	       "  extract SESSION|FILE... -o OUT          one file of a time window\n"
	       "  verify FILE                             check a v7 file, name the first problem\n\n"
	       "Options:\n"
	       "  -s, --socket PATH   control socket (default $FTRACED_SOCKET or " DEFAULT_SOCKET ")\n"
	       "  -j, --json          machine-readable output\n"
	       "  -h, --help          show this help ('ftracectl COMMAND --help' for a command)\n"
	       "      --version       show the version\n");
}

int main(int argc, char *argv[])
{
	static const struct {
		const char *name;
		int (*run)(const struct client_options *o, int argc, char *argv[]);
		bool runs_command; /* its arguments end with a command of their own */
	} commands[] = {
		{ "record", cmd_record, true },
		{ "create", cmd_create },
		{ "start", cmd_start },
		{ "stop", cmd_stop },
		{ "destroy", cmd_destroy },
		{ "snapshot", cmd_snapshot },
		{ "rotate", cmd_rotate },
		{ "list", cmd_list },
		{ "status", cmd_status },
		{ "metrics", cmd_metrics },
		{ "recover", cmd_recover },
		{ "info", cmd_info },
		{ "extract", cmd_extract },
		{ "verify", cmd_verify },
		{ "save", cmd_save },
		{ "reload", cmd_reload },
	};
	static const struct option options[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	struct client_options o = { .socket_path = getenv("FTRACED_SOCKET") };
	int c, r;

	if (!o.socket_path || !*o.socket_path)
		o.socket_path = DEFAULT_SOCKET;
	/* '+': stop at the command name, its options are its own. */
	while ((c = getopt_long(argc, argv, "+s:jh", options, NULL)) >= 0) {
		switch (c) {
		case 's':
			o.socket_path = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			help();
			return EXIT_OK;
		case 'V':
			printf("ftracectl " FTRACED_VERSION "\n");
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		help();
		return EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); k++) {
		if (strcmp(argv[0], commands[k].name) != 0)
			continue;
		/*
		 * --json is also accepted after the command, where scripts tend to
		 * put it; a command that runs another parses its own, which must
		 * never take the other command's arguments.
		 */
		for (int i = 1; i < argc && !commands[k].runs_command; i++) {
			if (strcmp(argv[i], "--") == 0)
				break;
			if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-j") == 0) {
				o.json = true;
				memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof(*argv));
				argc--;
				i--;
			}
		}
		json_want(o.json);
		r = commands[k].run(&o, argc, argv);
		/* With --json, a failure is a JSON document too. */
		json_finish(r);
		return r;
	}
	print_error(NULL, "unknown command '%s' (see 'ftracectl --help')", argv[0]);
	return EXIT_USAGE;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl metrics [-o FILE]: the daemon's and every session's counters in
 * the Prometheus text format, for node_exporter's textfile collector or any
 * scraper that runs a command. With -o the file is replaced atomically
 * (FILE.partial, then a rename), so the collector never reads half of it,
 * and made world-readable, since node_exporter runs as its own user.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/commands/commands.h"
#include "client/ctl.h"
#include "client/output.h"
#include "ftraced/macro.h"
#include "lib/prom-metrics.h"

static void metrics_help(void)
{
	printf("Usage: ftracectl metrics [-o FILE]\n\n"
	       "Print the daemon's and every session's counters in the Prometheus text format.\n\n"
	       "  -o, --output FILE  replace FILE atomically instead (for node_exporter's\n"
	       "                     textfile collector: a name ending in .prom)\n"
	       "  -h, --help         show this help\n");
}

/* Writes @rep into @output through FILE.partial. */
static int write_file(const struct reply *rep, const char *output)
{
	char partial[PATH_MAX] = "";
	FILE *f;
	int fd, r;

	fd = output_open("metrics", output, /* force= */ true, partial, sizeof(partial));
	if (fd < 0)
		return EXIT_FAILED;
	if ((partial[0] && fchmod(fd, 0644) < 0) || !(f = fdopen(fd, "w"))) {
		print_error("metrics", "cannot write '%s': %m", partial[0] ? partial : output);
		close(fd);
		output_discard(partial);
		return EXIT_FAILED;
	}
	r = prom_metrics_write(f, rep);
	if (fclose(f) != 0 || r < 0) {
		print_error("metrics", "cannot write '%s': %m", partial[0] ? partial : output);
		output_discard(partial);
		return EXIT_FAILED;
	}
	return output_commit("metrics", partial, output) < 0 ? EXIT_FAILED : EXIT_OK;
}

int cmd_metrics(const struct client_options *o, int argc, char *argv[])
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static struct ctl_builder b;
	const char *output = NULL;
	struct reply rep;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:h", options, NULL)) >= 0) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'h':
			metrics_help();
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		print_error("metrics", "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	ctl_builder_init(&b, FTRACED_MSG_LIST);
	r = ctl_call(o, &b, &rep);
	if (r < 0)
		return exit_code_for_call(r);
	if (rep.type == FTRACED_MSG_ERROR) {
		print_error_reply("metrics", &rep);
		return exit_code_for_reply(&rep);
	}
	if (output) {
		r = write_file(&rep, output);
	} else {
		r = prom_metrics_write(stdout, &rep) < 0 || fflush(stdout) != 0 ?
			EXIT_FAILED : EXIT_OK;
	}
	ctl_reply_done(&rep);
	return r;
}

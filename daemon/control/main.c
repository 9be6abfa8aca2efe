// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftraced: argv -> configuration, start-up checks, the manager, exit code.
 * No logic of its own.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracefs.h>

#include "config.h"
#include "daemon/base/bounds.h"
#include "daemon/control/daemon-config.h"
#include "daemon/base/log.h"
#include "daemon/control/manager.h"
#include "daemon/recovery/recovery.h"

#define DEFAULT_SOCKET "/run/ftraced/control"
#define DEFAULT_STATE_DIR "/var/lib/ftraced"
#define DEFAULT_GROUP "tracing"
#define DEFAULT_SESSIONS_DIR "/etc/ftraced/sessions.d"

static const char *arg_socket = DEFAULT_SOCKET;
static const char *arg_state_dir = DEFAULT_STATE_DIR;
static const char *arg_group = DEFAULT_GROUP;
static const char *arg_sessions_dir = DEFAULT_SESSIONS_DIR;
static const char *arg_config = DAEMON_CONFIG_DEFAULT;
static const char *arg_recover;
static bool arg_json;

static void help(void)
{
	printf("Usage: ftraced [OPTIONS]\n\n"
	       "Kernel trace capture daemon: writes trace-cmd v7 files.\n\n"
	       "  -s, --socket PATH      control socket (default " DEFAULT_SOCKET ")\n"
	       "  -d, --state-dir DIR    spools and session files (default " DEFAULT_STATE_DIR ")\n"
	       "  -c, --sessions-dir DIR sessions to create and start (default "
	       DEFAULT_SESSIONS_DIR ")\n"
	       "      --config FILE      the daemon's settings (default " DAEMON_CONFIG_DEFAULT
	       "; none if missing)\n"
	       "  -g, --group NAME       group allowed to use the socket besides root\n"
	       "                         (default " DEFAULT_GROUP "; \"\" for root only)\n"
	       "  -l, --log-level LEVEL  err, warning, notice, info (default), debug\n"
	       "      --recover DIR      rebuild the files of captures a crash interrupted in the\n"
	       "                         state directory DIR, then exit (no daemon may use DIR)\n"
	       "      --json             with --recover: print the counts as JSON\n"
	       "  -h, --help             show this help\n"
	       "      --version          show the version\n");
}

static int parse_argv(int argc, char *argv[])
{
	enum { ARG_VERSION = 0x100, ARG_RECOVER, ARG_JSON, ARG_CONFIG };
	static const struct option options[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "group", required_argument, NULL, 'g' },
		{ "sessions-dir", required_argument, NULL, 'c' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "recover", required_argument, NULL, ARG_RECOVER },
		{ "json", no_argument, NULL, ARG_JSON },
		{ "config", required_argument, NULL, ARG_CONFIG },
		{}
	};
	int c, level;

	while ((c = getopt_long(argc, argv, "s:d:g:c:l:h", options, NULL)) >= 0) {
		switch (c) {
		case 's':
			arg_socket = optarg;
			break;
		case 'd':
			arg_state_dir = optarg;
			break;
		case 'g':
			arg_group = optarg;
			break;
		case 'c':
			arg_sessions_dir = optarg;
			break;
		case 'l':
			level = log_parse_level(optarg);
			if (level < 0)
				return log_error_errno(level, "Unknown log level '%s'", optarg);
			log_set_max_level(level);
			break;
		case 'h':
			help();
			return 0;
		case ARG_RECOVER:
			arg_recover = optarg;
			break;
		case ARG_JSON:
			arg_json = true;
			break;
		case ARG_CONFIG:
			arg_config = optarg;
			break;
		case ARG_VERSION:
			printf("ftraced " FTRACED_VERSION "\n");
			return 0;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc)
		return log_error_errno(-EINVAL, "Unexpected argument '%s'", argv[optind]);
	if (arg_json && !arg_recover)
		return log_error_errno(-EINVAL, "--json goes with --recover");
	return 1;
}

int main(int argc, char *argv[])
{
	_cleanup_(manager_freep) struct manager *m = NULL;
	const char *hooks = secure_getenv("FTRACED_TEST_HOOKS");
	const char *lifetime = secure_getenv("FTRACED_TEST_SYMBOLS_LIFETIME_MS");
	const char *growth = secure_getenv("FTRACED_TEST_SYMBOLS_GROWTH_MAX");
	struct manager_config config;
	struct daemon_config settings;
	int r;

	/*
	 * Blocks of 128 KiB and more (chunks, zstd contexts, a symbol read's
	 * buffers, a file's metadata) are mapped, and unmapped when freed.
	 * glibc would otherwise raise this threshold to the size of the first
	 * such block freed and serve the next ones from arenas that keep their
	 * pages: measured, +0.5-0.9 MiB of resident memory after the first
	 * symbol read, for good (bench/README.md).
	 */
	mallopt(M_MMAP_THRESHOLD, MALLOC_MMAP_THRESHOLD);
	log_open();
	r = parse_argv(argc, argv);
	if (r <= 0)
		return r < 0 ? 2 : 0;

	/* libtracefs caches the tracing directory in a static: find it before any thread runs. */
	tracefs_set_loglevel(log_get_max_level() >= LOG_DEBUG ? TEP_LOG_ALL : TEP_LOG_WARNING);
	if (arg_recover) {
		log_set_syslog_prefix(false);
		return recovery_run_offline(arg_recover, arg_json) == 0 ? 0 : 1;
	}
	if (!tracefs_tracing_dir()) {
		log_error("tracefs is not mounted: mount it on /sys/kernel/tracing "
			  "(sys-kernel-tracing.mount, or 'mount -t tracefs nodev /sys/kernel/tracing')");
		return 1;
	}

	r = daemon_config_load(arg_config, &settings);
	if (r < 0)
		return 1;
	config = (struct manager_config){
		.settings = &settings,
		.config_path = arg_config,
		.socket_path = arg_socket,
		.state_dir = arg_state_dir,
		.group = arg_group,
		.sessions_dir = arg_sessions_dir,
		/* Watchdog tests need a worker that stops; never set it in production. */
		.test_hooks = hooks && strcmp(hooks, "1") == 0,
	};
	/*
	 * Tests of the symbols' refresh cannot wait minutes, and bench/symbols.py
	 * needs a fixed lifetime; never set them in production.
	 */
	if (config.test_hooks && lifetime)
		config.test_symbols_lifetime_usec = strtoull(lifetime, NULL, 10) * 1000;
	if (config.test_hooks && growth)
		config.test_symbols_growth_max = (unsigned)MIN(strtoul(growth, NULL, 10),
							      (unsigned long)KALLSYMS_CACHE_GROWTH_MAX);
	r = manager_new(&config, &m);
	if (r < 0)
		return 1;
	r = manager_run(m);
	if (r < 0) {
		log_error_errno(r, "Event loop failed: %m");
		return 1;
	}
	log_info("ftraced exiting");
	return 0;
}

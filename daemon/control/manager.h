/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "ftraced/macro.h"

struct manager;

struct daemon_config;

struct manager_config {
	const char *socket_path;
	const char *state_dir;
	const char *group; /* may be NULL or name a missing group: then root only */
	const char *sessions_dir; /* *.conf files of sessions to start, or NULL */
	const struct daemon_config *settings; /* ftraced.conf */
	const char *config_path;  /* ftraced.conf's path, read again at SIGHUP */
	bool test_hooks;          /* FTRACED_TEST_HOOKS=1: SIGUSR2 blocks a capture worker */
	uint64_t test_symbols_lifetime_usec; /* and FTRACED_TEST_SYMBOLS_LIFETIME_MS; 0: normal */
	unsigned test_symbols_growth_max;    /* and FTRACED_TEST_SYMBOLS_GROWTH_MAX; 0: normal */
};

int manager_new(const struct manager_config *c, struct manager **ret);
struct manager *manager_free(struct manager *m);
DEFINE_CLEANUP(struct manager *, manager_free)
int manager_run(struct manager *m);

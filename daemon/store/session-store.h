/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/store/session-file.h"
#include "ftraced/proto.h"

#define SESSION_STORE_DIR "saved"
/* A saved session: its header and its session file. */
#define SAVED_SESSION_MAX (SESSION_FILE_MAX + 1024u)

/* What the daemon keeps of a session created over the socket, besides its session file. */
struct saved_session {
	char name[FTRACED_NAME_MAX + 1];
	uid_t owner;
	bool running;          /* it was capturing: it is started again */
	uint64_t stopped_usec; /* CLOCK_REALTIME of a clean daemon stop while it ran; 0: none */
};

int saved_session_format(const struct saved_session *s, const char *conf, char *buf, size_t n);
int saved_session_parse(const char *text, size_t n, struct saved_session *ret,
			size_t *ret_conf_offset, char *error, size_t n_error);

typedef void (*saved_session_fn)(const struct saved_session *s, const char *conf, size_t n_conf,
				 void *userdata);

int session_store_write(int state_dir_fd, const struct saved_session *s, const char *conf);
int session_store_remove(int state_dir_fd, const char *name);
int session_store_load(int state_dir_fd, saved_session_fn fn, void *userdata);

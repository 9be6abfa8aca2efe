/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client/json.h"
#include "ftraced/proto.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/ctl/ctl-reply.h"
#include "lib/parse-util.h"

/* Exit codes of ftracectl, documented in ftracectl(1). */
enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,       /* the daemon refused or the operation failed */
	EXIT_USAGE = 2,        /* bad command line */
	EXIT_NO_DAEMON = 3,    /* cannot reach ftraced */
	EXIT_DENIED = 4,       /* not allowed to talk to ftraced, or to that session */
	EXIT_KERNEL = 5,       /* this kernel refuses what was asked (the daemon said so) */
};

struct client_options {
	const char *socket_path;
	bool json;
};


int ctl_connect_quiet(const struct client_options *o, int *ret_fd);
int ctl_connect(const struct client_options *o, int *ret_fd);
int ctl_send(int fd, struct ctl_builder *b, int pass_fd);
/*
 * For replies that wait on the kernel or the disk: a large ring's
 * allocation (create, record) or a large last segment (stop, destroy).
 */
#define CTL_LONG_TIMEOUT_MS (10 * 60 * 1000)

int ctl_receive(int fd, int timeout_ms, struct reply *ret);
int ctl_receive_sigmask(int fd, int timeout_ms, const sigset_t *wait_mask, struct reply *ret);
int ctl_send_and_receive(int fd, struct ctl_builder *b, int pass_fd, int timeout_ms,
			 struct reply *ret);
int ctl_call(const struct client_options *o, struct ctl_builder *b, struct reply *ret);
int ctl_call_timeout(const struct client_options *o, struct ctl_builder *b, int timeout_ms,
		     struct reply *ret);
int exit_code_for_error(int error);
int exit_code_for_reply(const struct reply *rep);
int exit_code_for_call(int error);
int parse_session_arg(const char *command, int argc, char *argv[], bool required,
		      const char **ret);

uint64_t session_lost(const struct session_info *s);
uint64_t session_lost_segment(const struct session_info *s);
uint64_t session_bytes_raw(const struct session_info *s);
uint64_t session_bytes_stored(const struct session_info *s);

void print_size(char *buf, size_t n, uint64_t bytes);
const char *session_recovered_path(const struct session_info *s, char *buf, size_t n);
const char *utc_seconds(char *buf, size_t n, uint64_t us);
void print_skipped(const char *command, const struct session_info *s);
json_t *session_json(const struct session_info *s);

void print_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void print_error_reply(const char *command, const struct reply *rep);

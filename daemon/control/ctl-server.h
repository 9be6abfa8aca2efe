/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "ftraced/macro.h"

struct ctl_builder;
struct ctl_conn;
struct ctl_request;
struct ctl_server;

struct ctl_server_handlers {
	/* A valid request from an authorised peer; @fd is -EBADF or taken over by the handler. */
	void (*request)(void *userdata, struct ctl_conn *c, const struct ctl_request *req, int fd);
	/* The connection is going away; forget every pointer to it. */
	void (*closed)(void *userdata, struct ctl_conn *c);
	/* An operation of @c is in progress: it is neither timed out nor closed for room. */
	bool (*busy)(void *userdata, const struct ctl_conn *c);
	void *userdata;
};

/* What the socket saw since the daemon started. */
struct ctl_server_counters {
	uint64_t connections;         /* accepted */
	uint64_t connections_refused; /* not allowed, or no room */
	uint64_t requests;
	uint64_t request_errors;      /* answered with an error */
};

int ctl_server_new(sd_event *e, const char *path, gid_t group,
		   const struct ctl_server_handlers *h, struct ctl_server **ret);
struct ctl_server *ctl_server_free(struct ctl_server *s);
DEFINE_CLEANUP(struct ctl_server *, ctl_server_free)
const struct ctl_server_counters *ctl_server_counters(const struct ctl_server *s);

uid_t ctl_conn_uid(const struct ctl_conn *c);
pid_t ctl_conn_pid(const struct ctl_conn *c);
int ctl_conn_send(struct ctl_conn *c, struct ctl_builder *b);
int ctl_conn_send_fd(struct ctl_conn *c, struct ctl_builder *b, int fd);
int ctl_conn_send_error(struct ctl_conn *c, int error, const char *fmt, ...) _printf_(3, 4);
int ctl_conn_send_kernel_refusal(struct ctl_conn *c, int error, const char *fmt, ...)
	_printf_(3, 4);
int ctl_conn_send_error_fd(struct ctl_conn *c, int error, int fd, const char *fmt, ...)
	_printf_(4, 5);

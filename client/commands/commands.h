/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct client_options;

int cmd_record(const struct client_options *o, int argc, char *argv[]);
int cmd_create(const struct client_options *o, int argc, char *argv[]);
int cmd_start(const struct client_options *o, int argc, char *argv[]);
int cmd_stop(const struct client_options *o, int argc, char *argv[]);
int cmd_destroy(const struct client_options *o, int argc, char *argv[]);
int cmd_snapshot(const struct client_options *o, int argc, char *argv[]);
int cmd_list(const struct client_options *o, int argc, char *argv[]);
int cmd_status(const struct client_options *o, int argc, char *argv[]);
int cmd_metrics(const struct client_options *o, int argc, char *argv[]);
int watch_status(const struct client_options *o, const char *session);
int cmd_recover(const struct client_options *o, int argc, char *argv[]);
int cmd_info(const struct client_options *o, int argc, char *argv[]);
int cmd_extract(const struct client_options *o, int argc, char *argv[]);
int cmd_rotate(const struct client_options *o, int argc, char *argv[]);
int live_session_dir(const struct client_options *o, const char *session, char *dir,
		     size_t n_dir, char *rotated, size_t n_rotated);
int cmd_verify(const struct client_options *o, int argc, char *argv[]);
int cmd_reload(const struct client_options *o, int argc, char *argv[]);
int cmd_save(const struct client_options *o, int argc, char *argv[]);
bool list_offer(const struct client_options *o, int argc, char *argv[], int *ret_exit);

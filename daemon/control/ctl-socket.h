/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/types.h>

int ctl_socket_from_systemd(const char *path);
int ctl_socket_bind(const char *path, gid_t group);

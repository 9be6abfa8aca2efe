/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/types.h>

/* Mapped files kept per process: a process maps a few hundred; more are cut, not failed. */
#define PROC_MAPS_FILES_MAX 4096u

int proc_maps_text(pid_t pid, char **ret);

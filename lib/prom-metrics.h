/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdio.h>

#include "lib/ctl/ctl-reply.h"

int prom_metrics_write(FILE *f, const struct reply *rep);

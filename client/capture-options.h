/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <getopt.h>
#include <stdbool.h>

struct ctl_builder;

/* Options every capturing command takes (record, create); long-only ones count from here. */
enum {
	OPT_FILTER = 0x200,
	OPT_SUBBUF,
	OPT_CLOCK,
	OPT_LEVEL,
	_OPT_CAPTURE_END,
};

#define CAPTURE_SHORT_OPTIONS "e:b:C:TiP:c"
#define CAPTURE_LONG_OPTIONS \
	{ "event", required_argument, NULL, 'e' }, \
	{ "filter", required_argument, NULL, OPT_FILTER }, \
	{ "buffer-kb", required_argument, NULL, 'b' }, \
	{ "subbuf-kb", required_argument, NULL, OPT_SUBBUF }, \
	{ "clock", required_argument, NULL, OPT_CLOCK }, \
	{ "compression", required_argument, NULL, 'C' }, \
	{ "level", required_argument, NULL, OPT_LEVEL }, \
	{ "stacktrace", no_argument, NULL, 'T' }, \
	{ "ignore-missing", no_argument, NULL, 'i' }, \
	{ "pid", required_argument, NULL, 'P' }, \
	{ "children", no_argument, NULL, 'c' }

#define CAPTURE_OPTIONS_HELP \
	"  -e, --event EVENT      SYSTEM:EVENT, SYSTEM:* or SYSTEM (repeatable)\n" \
	"      --filter EXPR      kernel filter applied to every event\n" \
	"  -b, --buffer-kb KB     ring buffer per CPU in KiB (default 4096)\n" \
	"      --subbuf-kb N      ring-buffer sub-buffer size in KiB (power of two)\n" \
	"      --clock NAME       trace clock (default local)\n" \
	"  -C, --compression ALG  zstd (default) or none\n" \
	"      --level N          zstd level (default 3)\n" \
	"  -T, --stacktrace       record a kernel stack trace with each event\n" \
	"  -i, --ignore-missing   skip events this kernel lacks (with a warning)\n" \
	"  -P, --pid PID          only events of process PID (repeatable, at most 64)\n" \
	"  -c, --children         and of the processes they fork from then on\n"

int capture_option(const char *command, int c, const char *arg, struct ctl_builder *b,
		   bool *has_event);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "ftraced/proto.h"

struct ctl_builder;

/* Options every capturing command takes (record, create); long-only ones count from here. */
enum {
	OPT_FILTER = 0x200,
	OPT_SUBBUF,
	OPT_COMPRESSION,
	OPT_LEVEL,
	OPT_MAX_GRAPH_DEPTH,
	OPT_FUNC_STACK,
	OPT_PROBE,
	OPT_NO_FILTER,
	OPT_TOP_LEVEL,
	OPT_DATE,
	OPT_MODULE,
	/* trace-cmd record's long options ftraced has no use for (capture_foreign_option()) */
	OPT_FOREIGN_PROFILE,
	OPT_FOREIGN_BY_COMM,
	OPT_FOREIGN_TEMP,
	OPT_FOREIGN_CMDLINES_SIZE,
	OPT_FOREIGN_TSC2NSEC,
	OPT_FOREIGN_TS_OFFSET,
	OPT_FOREIGN_TSYNC_INTERVAL,
	OPT_FOREIGN_POLL,
	OPT_FOREIGN_NAME,
	OPT_FOREIGN_FILE_VERSION,
	OPT_FOREIGN_PROXY,
	OPT_FOREIGN_STDERR,
	OPT_FOREIGN_VERBOSE,
	_OPT_CAPTURE_END,
};

/*
 * Every letter is trace-cmd record's, with its meaning. The letters of the
 * second string are trace-cmd's options ftraced does not have: taken only to say so
 * and what to use instead (capture_foreign_option()), so that none can
 * ever mean something else here.
 */
#define CAPTURE_SHORT_OPTIONS "e:f:R:ab:C:TiP:cp:l:n:g:r:O:M:vs:m:" "dDSN:V:A:tB:kGH:"
#define CAPTURE_LONG_OPTIONS \
	{ "event", required_argument, NULL, 'e' }, \
	{ "event-filter", required_argument, NULL, 'f' }, \
	{ "event-trigger", required_argument, NULL, 'R' }, \
	{ "all-events", no_argument, NULL, 'a' }, \
	{ "filter", required_argument, NULL, OPT_FILTER }, \
	{ "buffer-kb", required_argument, NULL, 'b' }, \
	{ "subbuf-kb", required_argument, NULL, OPT_SUBBUF }, \
	{ "clock", required_argument, NULL, 'C' }, \
	{ "compression", required_argument, NULL, OPT_COMPRESSION }, \
	{ "level", required_argument, NULL, OPT_LEVEL }, \
	{ "option", required_argument, NULL, 'O' }, \
	{ "cpumask", required_argument, NULL, 'M' }, \
	{ "no-filter", no_argument, NULL, OPT_NO_FILTER }, \
	{ "top-level", no_argument, NULL, OPT_TOP_LEVEL }, \
	{ "stacktrace", no_argument, NULL, 'T' }, \
	{ "ignore-missing", no_argument, NULL, 'i' }, \
	{ "pid", required_argument, NULL, 'P' }, \
	{ "children", no_argument, NULL, 'c' }, \
	{ "tracer", required_argument, NULL, 'p' }, \
	{ "function-filter", required_argument, NULL, 'l' }, \
	{ "function-notrace", required_argument, NULL, 'n' }, \
	{ "graph-function", required_argument, NULL, 'g' }, \
	{ "max-graph-depth", required_argument, NULL, OPT_MAX_GRAPH_DEPTH }, \
	{ "func-stack", no_argument, NULL, OPT_FUNC_STACK }, \
	{ "probe", required_argument, NULL, OPT_PROBE }, \
	{ "rt-priority", required_argument, NULL, 'r' }, \
	{ "read-interval", required_argument, NULL, 's' }, \
	{ "date", no_argument, NULL, OPT_DATE }, \
	{ "module", required_argument, NULL, OPT_MODULE }, \
	{ "profile", no_argument, NULL, OPT_FOREIGN_PROFILE }, \
	{ "by-comm", no_argument, NULL, OPT_FOREIGN_BY_COMM }, \
	{ "temp", required_argument, NULL, OPT_FOREIGN_TEMP }, \
	{ "cmdlines-size", required_argument, NULL, OPT_FOREIGN_CMDLINES_SIZE }, \
	{ "tsc2nsec", no_argument, NULL, OPT_FOREIGN_TSC2NSEC }, \
	{ "ts-offset", required_argument, NULL, OPT_FOREIGN_TS_OFFSET }, \
	{ "tsync-interval", required_argument, NULL, OPT_FOREIGN_TSYNC_INTERVAL }, \
	{ "poll", no_argument, NULL, OPT_FOREIGN_POLL }, \
	{ "name", required_argument, NULL, OPT_FOREIGN_NAME }, \
	{ "file-version", required_argument, NULL, OPT_FOREIGN_FILE_VERSION }, \
	{ "proxy", required_argument, NULL, OPT_FOREIGN_PROXY }, \
	{ "stderr", no_argument, NULL, OPT_FOREIGN_STDERR }, \
	{ "verbose", optional_argument, NULL, OPT_FOREIGN_VERBOSE }

#define CAPTURE_OPTIONS_HELP \
	"  -e, --event EVENT      SYSTEM, SYSTEM:EVENT, EVENT or all; globs allowed\n" \
	"                         (e.g. 'syscalls:sys_enter_open*'; repeatable)\n" \
	"  -a, --all-events       every event the kernel has (-e all)\n" \
	"  -v                     the -e after it are left out of the events the -e\n" \
	"                         before it give (e.g. -e sched -v -e '*stat*')\n" \
	"  -f, --event-filter EXPR  kernel filter for the -e just before it\n" \
	"  -R, --event-trigger TRIGGER  trigger for the -e just before it, in the\n" \
	"                         session's instance (stacktrace, traceoff if EXPR,\n" \
	"                         hist:keys=FIELD...)\n" \
	"      --filter EXPR      kernel filter applied to every event\n" \
	"  -b, --buffer-kb KB     ring buffer per CPU in KiB (default 4096)\n" \
	"      --subbuf-kb N      ring-buffer sub-buffer size in KiB (power of two)\n" \
	"  -C, --clock NAME       trace clock (default local)\n" \
	"      --compression ALG  zstd (default) or none\n" \
	"      --level N          zstd level (default 1)\n" \
	"  -O, --option NAME      set a trace option in the session's instance, or\n" \
	"                         clear it with noNAME (repeatable; 'ftracectl list -o')\n" \
	"  -M, --cpumask MASK     trace only the CPUs in this hex mask (e.g. 3, ff,ff)\n" \
	"      --no-filter        keep ftraced's own threads in the trace\n" \
	"      --top-level        capture in the top-level buffer, leased (root; for\n" \
	"                         what instances lack, e.g. -g): put back as found\n" \
	"  -T, --stacktrace       record a kernel stack trace with each event\n" \
	"  -i, --ignore-missing   skip events this kernel lacks (with a warning)\n" \
	"  -P, --pid PID          only events of process PID (repeatable, at most 64)\n" \
	"  -c, --children         and of the processes they fork from then on\n" \
	"  -p, --tracer TRACER    run a tracer: function or function_graph\n" \
	"  -l, --function-filter FUNC  trace only functions matching FUNC (glob,\n" \
	"                         FUNC:mod:MODULE; repeatable)\n" \
	"  -n, --function-notrace FUNC  do not trace functions matching FUNC\n" \
	"      --module MOD       the function tracer in module MOD only: each -l and -n\n" \
	"                         becomes FUNC:mod:MOD; without -l, -l '*:mod:MOD'\n" \
	"  -g, --graph-function FUNC  function_graph: graph only calls under FUNC\n" \
	"      --max-graph-depth N  function_graph: at most N calls deep\n" \
	"      --func-stack       function: a stack trace with each function\n" \
	"      --probe DEF        a kprobe or uprobe for the session:\n" \
	"                         'p|r:NAME SYMBOL[+OFF] [ARGS]' or\n" \
	"                         'p|r:NAME /PATH:SYMBOL|0xOFF [ARGS]'\n" \
	"  -r, --rt-priority PRIO  capture workers run SCHED_FIFO at PRIO (1-99)\n" \
	"  -s, --read-interval USECS  read every CPU at least every USECS (1000 or\n" \
	"                         more), partly filled sub-buffers too: no event waits\n" \
	"                         longer in the kernel (default: read when a CPU's ring\n" \
	"                         reaches its watermark, and at the stop)\n" \
	"      --date             accepted, as trace-cmd's: every file already has its\n" \
	"                         wall-clock anchor (trace-cmd report shows the dates)\n"

/* What the capture options said so far, for checks across options. */
struct capture_state {
	bool has_event;        /* -e given */
	bool has_source;       /* something to record: -e, -p or --probe */
	bool event_filtered;   /* the last -e already has its -f */
	unsigned n_events;     /* -e and -a given */
	bool negate;           /* -v given: the -e from here on are excluded */
	bool event_triggered;  /* the last -e already has its -R */
	/* -l and -n, sent by capture_finish() once --module, wherever it is, is known */
	const char *functions[FTRACED_FUNCTIONS_PER_REQUEST_MAX];
	bool notrace[FTRACED_FUNCTIONS_PER_REQUEST_MAX];
	unsigned n_functions;
	const char *module;    /* --module; NULL: none */
	uint32_t pids[FTRACED_PIDS_PER_REQUEST_MAX]; /* -P, for record --proc-map */
	unsigned n_pids;
};

int capture_option(const char *command, int c, const char *arg, struct ctl_builder *b,
		   struct capture_state *st);
int capture_finish(const char *command, struct ctl_builder *b, const struct capture_state *st);

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The trace-cmd version 7 file format as trace-cmd 3.1.6 reads it: the
 * magic, the section and option ids, and the sizes of the fixed headers.
 * Every id and constant of the format is defined here and nowhere else;
 * the writer, the reader, verify, info and the event counter all use these.
 */
#pragma once

/* "\x17\x08\x44tracing" then the version as a NUL-terminated string "7". */
#define V7_MAGIC "\x17\x08\x44tracing"
#define V7_MAGIC_SIZE (sizeof(V7_MAGIC) - 1)
#define V7_VERSION_STRING "7"

/* Section header: u16 id, u16 flags, u32 description string offset, u64 size. */
#define V7_SECTION_HDR_SIZE 16u
#define V7_FLAG_COMPRESSED 1u
/* A compressed section body starts with u32 compressed size, u32 raw size. */
#define V7_BLOCK_HDR_SIZE 8u

/* Option ids (inside OPTIONS sections) and section ids share one space. */
enum v7_id {
	V7_OPT_DONE = 0,
	V7_OPT_DATE = 1,
	V7_OPT_CPUSTAT = 2,
	V7_OPT_BUFFER = 3,
	V7_OPT_TRACECLOCK = 4,
	V7_OPT_UNAME = 5,
	V7_OPT_CPUCOUNT = 8,
	V7_OPT_VERSION = 9,
	V7_OPT_PROCMAPS = 10,
	V7_OPT_TRACEID = 11,
	V7_SEC_STRINGS = 15,
	V7_SEC_HEADER_INFO = 16,
	V7_SEC_FTRACE_EVENTS = 17,
	V7_SEC_EVENT_FORMATS = 18,
	V7_SEC_KALLSYMS = 19,
	V7_SEC_PRINTK = 20,
	V7_SEC_CMDLINES = 21,
};

/* The metadata sections, a contiguous range of ids. */
#define V7_SEC_FIRST_META V7_SEC_HEADER_INFO
#define V7_SEC_LAST_META V7_SEC_CMDLINES

/* Event ids are u16 in the ring buffer. */
#define V7_EVENT_IDS_MAX 65536

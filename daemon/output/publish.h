/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/store/retention.h"
#include "ftraced/proto.h"

struct runner;
struct segment;

/* "<name>-YYYYmmddTHHMMSS.mmmZ-NNNNNN.dat" and ".<that>.tmp" */
#define PUBLISH_NAME_MAX (FTRACED_NAME_MAX + 48)

/* The owner's data about a file, handed back with its outcome. */
struct publish_ticket {
	bool snapshot;
	void *waiter;  /* a client waiting for the file; cleared by publisher_forget_waiter() */
	void *cookie;  /* anything else of the owner's (the trigger that asked for it) */
};

/* A file is complete (result 0) or failed; the segment is freed by publisher_release(). */
struct publish_outcome {
	struct segment *segment;
	struct publish_ticket ticket;
	int result;
	uint64_t bytes;
	const char *name;  /* the final name in the directory, or NULL (the client's fd) */
	const char *path;  /* its absolute path, or NULL */
};

typedef void (*publish_done_fn)(const struct publish_outcome *o, void *userdata);

struct publish_item;

/*
 * Where a session's files go and what follows each: the directory (the
 * session's, or its snapshots'), its retention budget and the on-segment
 * command. Everything borrowed outlives the publisher.
 */
struct publisher {
	struct runner *runner;                     /* for the on-segment command */
	const char *session;                       /* for messages and the retention prefix */
	int dir_fd;                                /* -EBADF: files go to client fds only */
	const struct retention_limits *retention;
	const char *on_segment;                    /* NULL: none */
	publish_done_fn done;
	void *userdata;

	struct publish_item *items;
	size_t n_items;
	/* Files done, their segments (spools) kept until the owner answered: publisher_release(). */
	struct segment **finished;
	size_t n_finished;
	struct retention_usage usage;
	uint64_t files_written;                    /* put in the directory */
	uint64_t files_deleted;                    /* by retention */
	uint64_t bytes_deleted;                    /* their allocated bytes */
	uint64_t files_failed;                     /* could not be written, here or to a client */
	/* Retention that could not count the files (a linked or unreadable manifest). */
	uint64_t retention_failures;               /* runs that gave up */
	uint64_t files_uncounted;                  /* put in place but not in the manifest */
	int retention_error;                       /* the last run's -errno; 0: it counted */
};

void publisher_done(struct publisher *p);
void publisher_release(struct publisher *p);
int publisher_add(struct publisher *p, struct segment *seg, int out_fd,
		  const struct publish_ticket *ticket);
void publisher_poll(struct publisher *p);
void publisher_retention(struct publisher *p);
int publisher_warning(const struct publisher *p, char *buf, size_t n);
void publisher_forget_waiter(struct publisher *p, const void *waiter);
bool publisher_has_waiter(const struct publisher *p, const void *waiter);
int publish_path(int dir_fd, const char *name, char *buf, size_t n);
void publish_utc_stamp(char *buf, size_t size);

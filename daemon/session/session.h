/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "ftraced/macro.h"
#include "ftraced/proto.h"

struct capture_pool;
struct instance;
struct kallsyms;
struct clock_anchor;
struct runner;
struct ctl_builder;
struct ctl_request;
struct session;

enum session_state {
	SESSION_ALLOCATING, /* the ring is being allocated on a thread; the instance is its */
	SESSION_CREATED,
	SESSION_RUNNING,
	SESSION_STOPPING,   /* tracing off, workers draining */
	SESSION_ASSEMBLING, /* record: writing the v7 file */
	SESSION_STOPPED,    /* continuous: not capturing; can start again */
	SESSION_DONE,
	SESSION_FAILED,
	_SESSION_STATE_MAX,
};

typedef void (*session_done_fn)(struct session *s, void *userdata);
/*
 * A snapshot asked for with @waiter is complete (@result 0) or failed:
 * @path is the file in the state directory (NULL when written into the
 * client's fd), @note something the user should know, or NULL.
 */
typedef void (*session_snapshot_fn)(struct session *s, void *waiter, int result,
				    const char *path, uint64_t bytes, const char *note,
				    void *userdata);

/* Everything a session needs from its owner. */
struct session_env {
	sd_event *event;
	struct capture_pool *pool;
	int state_dir_fd;
	int hold_dir_fd;             /* holds (hold.h) of compressed streams; -EBADF or 0: none */
	uint32_t instance_tag;
	struct kallsyms *kallsyms;   /* symbols for the session's files; NULL: none */
	struct clock_anchor *clock_anchor; /* wall-clock anchors for its files; NULL: none */
	uint64_t memory_limit;       /* bytes, all sessions together; 0: none */
	uint64_t memory_committed;   /* bytes the other sessions take */
	unsigned rt_priority_max;    /* the highest -r allowed (rt-priority-max); 0: -r refused */
	struct runner *runner;       /* runs on-segment commands */
	_Atomic uint64_t *written;   /* every byte written to spools and files is added here */
	/* Takes an instance the session is done with: removed now, or as soon as tracefs lets. */
	/* @now: removed before returning (or left pending if busy), not on a thread */
	void (*retire_instance)(struct instance *i, bool now, void *userdata);
	/* The ring is allocated (0) or could not be (-errno, session_error() says why). */
	void (*on_ready)(struct session *s, int result, void *userdata); /* may free it */
	session_done_fn on_done;     /* may free the session */
	session_done_fn on_stopped;  /* continuous: stopped, last segment on disk */
	session_snapshot_fn on_snapshot;
	session_snapshot_fn on_rotated; /* a rotation asked for is on disk: the closed segment */
	void *userdata;
};

int session_new(const struct session_env *env, uint32_t id, const char *name, uid_t owner,
		const struct ctl_request *req, int out_fd, struct session **ret, char *error,
		size_t n_error, bool *ret_kernel_refused);
int session_check_request(const struct session_env *env, uid_t owner,
			  const struct ctl_request *req, char *error, size_t n_error);
struct session *session_free(struct session *s);
DEFINE_CLEANUP(struct session *, session_free)

int session_start(struct session *s);
int session_stop(struct session *s);
int session_set_proc_maps(struct session *s, const char *const *texts, unsigned n);
void session_destroy(struct session *s);
void session_set_gap(struct session *s, const char *note);
void session_resume_history(struct session *s);
void session_leave_history(struct session *s);
const char *session_recovered_file(const struct session *s);
struct session *session_leave_armed(struct session *s);
int session_snapshot(struct session *s, void *waiter, int out_fd, bool trim, uint64_t since_us,
		     const char *cause, char *error, size_t n_error);
int session_rotate_request(struct session *s, void *waiter, char *error, size_t n_error);
void session_forget_waiter(struct session *s, void *waiter);
bool session_has_waiter(const struct session *s, const void *waiter);

uint32_t session_id(const struct session *s);
const char *session_name(const struct session *s);
const char *session_instance_name(const struct session *s);
uid_t session_owner(const struct session *s);
enum session_state session_state(const struct session *s);
uint64_t session_memory(const struct session *s);
enum ftraced_mode session_mode(const struct session *s);
const char *session_state_to_string(enum session_state st);
int session_error(const struct session *s, const char **ret_message);
void session_describe(struct session *s, struct ctl_builder *b);
void session_check(struct session *s);

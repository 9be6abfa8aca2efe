// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What every part of a session uses, and calls nothing of theirs: its
 * state's names, waking its event loop, failing it, asking its event loop
 * for a stop (a timer, a failed rotation), its streams' parameters, and
 * retiring its instance. Main thread only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/kernel/probe.h"
#include "daemon/session/session-internal.h"
#include "daemon/store/spool.h"

static const char *const state_names[_SESSION_STATE_MAX] = {
	[SESSION_ALLOCATING] = "allocating",
	[SESSION_CREATED] = "created",
	[SESSION_RUNNING] = "running",
	[SESSION_STOPPING] = "stopping",
	[SESSION_ASSEMBLING] = "assembling",
	[SESSION_STOPPED] = "stopped",
	[SESSION_DONE] = "done",
	[SESSION_FAILED] = "failed",
};

const char *session_state_to_string(enum session_state st)
{
	return st < _SESSION_STATE_MAX ? state_names[st] : "unknown";
}

/**
 * session_wake() - have the event loop look at the session.
 * @s: session
 */
void session_wake(struct session *s)
{
	uint64_t one = 1;

	(void)!write(s->event_fd, &one, sizeof(one));
}

/**
 * session_stopped() - the session's mode ended its stop (or a pause it made): STOPPED.
 * @s: session
 */
void session_stopped(struct session *s)
{
	s->state = SESSION_STOPPED;
}

/**
 * session_set_error() - fail the session (the first error wins).
 * @s: session
 * @error: -errno
 * @fmt: the message for the client and status
 */
void session_set_error(struct session *s, int error, const char *fmt, ...)
{
	va_list ap;

	if (s->error != 0)
		return;
	s->error = error;
	va_start(ap, fmt);
	vsnprintf(s->error_message, sizeof(s->error_message), fmt, ap);
	va_end(ap);
}

/**
 * session_request_stop() - have the event loop stop the session (it is running).
 * @s: session
 *
 * For the parts that cannot stop it themselves: the duration timer, a
 * failed rotation.
 */
void session_request_stop(struct session *s)
{
	s->stop_requested = true;
	session_wake(s);
}

/* The session is done with its instance: the owner removes it (or keeps trying to). */
void session_retire_instance(struct session *s)
{
	/*
	 * Removed on a thread, but here and now for one that never ran (no ring
	 * worth a thread, and a refused request should leave nothing behind by
	 * the time its client hears of it) and for one with probes (they can
	 * only go once their events are gone from the instance, and go before
	 * the client is answered).
	 */
	if (s->instance && s->env.retire_instance)
		s->env.retire_instance(TAKE_PTR(s->instance), s->start_usec == 0 || s->probes,
				       s->env.userdata);
	s->probes = probe_set_free(s->probes);
	s->instance = instance_free(s->instance);
	/* The top level's settings go back once nothing of the session changes them. */
	s->lease = instance_lease_release(s->lease);
}

/**
 * session_stream_params() - how this session's streams capture.
 * @s: session with its instance
 * @ret: the parameters
 */
void session_stream_params(const struct session *s, struct stream_params *ret)
{
	uint64_t step = session_segment_limit(s) / s->cpus.n_cpus / SEGMENT_SIZE_CHECKS;

	*ret = (struct stream_params){
		.notify_fd = s->event_fd,
		.subbuf_size = s->imeta.subbuf_size,
		.zstd = s->config.zstd,
		.level = s->config.level,
		.notify_bytes = s->config.mode == FTRACED_MODE_CONTINUOUS ?
				MIN(MAX(step, (uint64_t)1), PROGRESS_NOTIFY_BYTES) : PROGRESS_NOTIFY_BYTES,
		.progress = s->env.written,
		.rt_priority = s->config.rt_priority,
		.wake_bytes = s->wake_bytes,
		.hold_dir_fd = s->env.hold_dir_fd,
		.spool_region_bytes = s->segment_env.in_place ?
			spool_in_place_region(s->cpus.n_cpus) : 0,
	};
}

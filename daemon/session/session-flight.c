// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A flight session's side of its mode: the host the flight recorder
 * (flight.c) works through, so that the recorder never sees struct
 * session and the session changes its own state.
 */
#include "daemon/flight/flight.h"
#include "daemon/session/session-internal.h"
#include "daemon/output/session-mode.h"

/*
 * The flight recorder's host (session-mode.h): what it may ask of its
 * session. Its stop and its pauses end in session_stopped(): only
 * session.c changes a session's state.
 */
static enum mode_phase host_phase(const void *session)
{
	const struct session *s = session;

	return s->state == SESSION_RUNNING ? MODE_RUNNING :
	       s->state == SESSION_STOPPING ? MODE_STOPPING : MODE_IDLE;
}

static void host_wake(void *session)
{
	session_wake(session);
}

static void host_set_error(void *session, int error, const char *message)
{
	session_set_error(session, error, "%s", message);
}

static int host_begin_running(void *session)
{
	return session_begin_running(session);
}

static void host_stopped(void *session)
{
	session_stopped(session);
}

static void host_stream_params(void *session, struct stream_params *ret)
{
	session_stream_params(session, ret);
}

static const char *host_gap(const void *session)
{
	const struct session *s = session;

	return s->gap_in_next_file ? s->gap : NULL;
}

static void host_snapshot_done(void *session, void *waiter, int error, const char *path,
			       uint64_t bytes, const char *note)
{
	struct session *s = session;

	s->env.on_snapshot(s, waiter, error, path, bytes, note, s->env.userdata);
}

static const struct mode_host_ops flight_host_ops = {
	.phase = host_phase,
	.wake = host_wake,
	.set_error = host_set_error,
	.begin_running = host_begin_running,
	.stopped = host_stopped,
	.stream_params = host_stream_params,
	.gap = host_gap,
	.snapshot_done = host_snapshot_done,
};

/**
 * session_new_flight() - a flight session's mode, given the parts it works with.
 * @s: a flight session with its instance configured and its directory open
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Snapshots without a client file go to the mode's own directory.
 *
 * Return: 0, or -errno with @error set.
 */
int session_new_flight(struct session *s, char *error, size_t n_error)
{
	struct mode_host host = {
		.name = s->name,
		.id = s->id,
		.instance = s->instance,
		.cpus = &s->cpus,
		.publisher = &s->publisher,
		.segment_env = &s->segment_env,
		.config = &s->config,
		.events = &s->events,
		.imeta = &s->imeta,
		.date = s->date,
		.dir_fd = s->dir_fd,
		.event = s->env.event,
		.pool = s->env.pool,
		.kallsyms = s->env.kallsyms,
		.instance_tag = s->env.instance_tag,
		.hold_dir_fd = s->env.hold_dir_fd,
		.ops = &flight_host_ops,
		.session = s,
	};
	int r;

	r = flight_new(&host, &s->flight, error, n_error);
	if (r < 0)
		return r;
	s->publisher.dir_fd = flight_snapshot_dir(s->flight);
	return 0;
}

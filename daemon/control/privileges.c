// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Least privilege: once started, ftraced holds no capabilities at all and
 * cannot gain any (no-new-privs). The only file includes <sys/capability.h>.
 *
 * Kept capabilities: none. Why none is enough, verified on the target
 * kernel (../shared/docs/reliability.md section 1):
 *   - tracefs (control files, instances, trace_pipe_raw) is gated by plain
 *     file permissions, and uid 0 owns it: no capability needed;
 *   - real addresses in /proc/kallsyms need CAP_SYSLOG, but only at open():
 *     the fd, opened during start-up, keeps showing them;
 *   - the state directory and its files belong to uid 0;
 *   - output files arrive as fds the clients opened themselves;
 *   - the socket is bound (and chowned to the group, CAP_CHOWN) before the drop.
 * So the bounding set is emptied, the ambient set cleared, and the
 * permitted, effective and inheritable sets set to empty.
 *
 * The one exception is chosen by the admin: with rt-priority-max set and
 * RLIMIT_RTPRIO too low for it (started by hand as root), CAP_SYS_NICE
 * stays, for the capture workers' SCHED_FIFO (-r) and nothing else. The
 * workers' nice value (capture-nice) needs none kept: it is set before the
 * drop, on the thread that creates them.
 *
 * Called once, from the main thread, before any other thread exists:
 * capabilities and no-new-privs are per thread, inherited at creation.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "daemon/base/log.h"
#include "daemon/control/privileges.h"

/* The capabilities kept: none, or CAP_SYS_NICE alone. */
static cap_t kept_caps(bool keep_nice)
{
	cap_value_t nice = CAP_SYS_NICE;
	cap_t caps = cap_init();

	if (caps && keep_nice &&
	    (cap_set_flag(caps, CAP_PERMITTED, 1, &nice, CAP_SET) < 0 ||
	     cap_set_flag(caps, CAP_EFFECTIVE, 1, &nice, CAP_SET) < 0)) {
		cap_free(caps);
		return NULL;
	}
	return caps;
}

/* Can this thread take SCHED_FIFO at @priority now? Tried, then undone. */
static int try_fifo(unsigned priority)
{
	struct sched_param fifo = { .sched_priority = (int)priority }, other = {};
	int r = -pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo);

	if (r >= 0)
		(void)pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
	return r;
}

/**
 * priv_realtime_allowed() - the highest -r priority the capture workers will be able to take.
 * @wanted: ftraced.conf's rt-priority-max (0: -r is off)
 * @ret_keep_nice: set when only CAP_SYS_NICE allows it: priv_drop() must keep it
 *
 * RLIMIT_RTPRIO (LimitRTPRIO= in a unit) allows it without a capability;
 * otherwise CAP_SYS_NICE, if this process has it. Tried for real, so a
 * seccomp filter (RestrictRealtime=yes) is found too. Before priv_drop().
 *
 * Return: @wanted, or 0 (logged) if neither allows it.
 */
unsigned priv_realtime_allowed(unsigned wanted, bool *ret_keep_nice)
{
	struct rlimit lim = {};
	cap_flag_value_t nice = CAP_CLEAR;
	cap_t now;
	int r;

	*ret_keep_nice = false;
	if (wanted == 0)
		return 0;
	(void)getrlimit(RLIMIT_RTPRIO, &lim);
	if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= wanted) {
		r = try_fifo(wanted);
	} else {
		now = cap_get_proc();
		if (now)
			(void)cap_get_flag(now, CAP_SYS_NICE, CAP_PERMITTED, &nice);
		cap_free(now);
		r = nice == CAP_SET ? try_fifo(wanted) : -EPERM;
		*ret_keep_nice = r >= 0;
	}
	if (r < 0) {
		log_warning_errno(r, "rt-priority-max = %u, but real-time scheduling is not allowed "
				  "here (%m): under systemd, add LimitRTPRIO=%u and "
				  "RestrictRealtime=no to ftraced.service. -r is refused", wanted,
				  wanted);
		return 0;
	}
	log_info("Capture workers may run SCHED_FIFO up to priority %u (-r)%s", wanted,
		 *ret_keep_nice ? ", with CAP_SYS_NICE kept for it" : "");
	return wanted;
}

/**
 * priv_drop() - give up every capability, for good.
 * @keep_nice: but CAP_SYS_NICE (see priv_realtime_allowed())
 *
 * Return: 0, or -errno (the daemon then refuses to run).
 */
int priv_drop(bool keep_nice)
{
	cap_t kept;
	int r = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return log_error_errno(negative_errno(), "Cannot set no-new-privs: %m");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return log_error_errno(negative_errno(), "Cannot clear ambient capabilities: %m");
	/* The bounding set needs CAP_SETPCAP to shrink: before the effective set goes. */
	for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++)
		if (!(keep_nice && c == CAP_SYS_NICE) && prctl(PR_CAPBSET_READ, c, 0, 0, 0) > 0 &&
		    prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EPERM)
			return log_error_errno(negative_errno(), "Cannot drop capability %d from the "
					       "bounding set: %m", (int)c);
	kept = kept_caps(keep_nice);
	if (!kept)
		return -ENOMEM;
	if (cap_set_proc(kept) < 0)
		r = log_error_errno(negative_errno(), "Cannot drop capabilities: %m");
	cap_free(kept);
	if (r >= 0)
		r = priv_assert_dropped(keep_nice);
	if (r >= 0)
		log_info("Capabilities dropped%s, no-new-privs set",
			 keep_nice ? " but CAP_SYS_NICE (rt-priority-max)" : "");
	return r;
}

/**
 * priv_assert_dropped() - check that no capability is left and none can come back.
 * @keep_nice: CAP_SYS_NICE alone is expected (see priv_realtime_allowed())
 *
 * Return: 0, or -EPERM naming what is left (an effective, permitted,
 * inheritable or ambient capability, or no-new-privs unset).
 */
int priv_assert_dropped(bool keep_nice)
{
	cap_t now = cap_get_proc();
	cap_t kept = kept_caps(keep_nice);
	int differ;

	if (!now || !kept) {
		cap_free(now);
		cap_free(kept);
		return -ENOMEM;
	}
	differ = cap_compare(now, kept);
	cap_free(now);
	cap_free(kept);
	if (differ)
		return log_error_errno(-EPERM, "Capabilities are still held after dropping them");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return log_error_errno(-EPERM, "no-new-privs is not set");
	/*
	 * Without CAP_SETPCAP (a unit's CapabilityBoundingSet=CAP_SYSLOG) the
	 * bounding set keeps what the unit allowed. With nothing permitted and
	 * no-new-privs, no execve() can bring it back, so that is fine.
	 */
	for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++)
		if (!(keep_nice && c == CAP_SYS_NICE) && prctl(PR_CAPBSET_READ, c, 0, 0, 0) > 0)
			log_debug("Capability %d stays in the bounding set (no CAP_SETPCAP to drop "
				  "it); unusable with no-new-privs", (int)c);
	return 0;
}

/*
 * This thread's nice value now (getpriority() may return -1 as a value).
 * Linux keeps a nice value per thread, and PRIO_PROCESS with 0 is the
 * calling thread.
 */
static int thread_nice(void)
{
	int nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	return errno ? 0 : nice;
}

/**
 * priv_nice_for_workers() - give the threads this one creates next the nice value @wanted.
 * @wanted: ftraced.conf's capture-nice (CAPTURE_NICE_MIN..0)
 * @ret_before: this thread's nice value before, for priv_nice_restore()
 *
 * A thread starts with its creator's nice value. So the main thread
 * lowers its own before it creates the capture workers, and takes it back
 * after (priv_nice_restore()): no capability is kept for it. Lowering
 * needs CAP_SYS_NICE (root started by hand), an RLIMIT_NICE that allows
 * it, or a unit's Nice= that already did (the shipped unit's Nice=-5).
 * Before priv_drop(). Logged either way.
 */
void priv_nice_for_workers(int wanted, int *ret_before)
{
	int before = thread_nice();

	*ret_before = before;
	/* Raising it (capture-nice = 0 under a unit's Nice=) needs no privilege. */
	if (wanted != before && setpriority(PRIO_PROCESS, 0, wanted) < 0)
		log_warning_errno(negative_errno(), "capture-nice = %d, but the nice value cannot "
				  "be lowered to it here (%m): under systemd, Nice=%d in ftraced.service. "
				  "The capture workers run at %d", wanted, wanted, before);
	log_info("Capture workers run at nice %d", thread_nice());
}

/**
 * priv_nice_restore() - after the workers: this thread goes back to where it was.
 * @before: priv_nice_for_workers()'s @ret_before
 *
 * But never below 0: a unit's Nice= is there for the capture workers,
 * and the main thread's work (files, symbols) need not preempt the
 * traced programs. Raising a nice value needs no privilege.
 */
void priv_nice_restore(int before)
{
	int want = before > 0 ? before : 0;

	if (thread_nice() != want && setpriority(PRIO_PROCESS, 0, want) < 0)
		log_warning_errno(negative_errno(), "Cannot set the main thread's nice value back "
				  "to %d: %m", want);
}

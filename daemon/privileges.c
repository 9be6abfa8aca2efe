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
 * Called once, from the main thread, before any worker starts.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "daemon/log.h"
#include "daemon/privileges.h"

/**
 * priv_drop() - give up every capability, for good.
 *
 * Return: 0, or -errno (the daemon then refuses to run).
 */
int priv_drop(void)
{
	cap_t empty;
	int r = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return log_error_errno(negative_errno(), "Cannot set no-new-privs: %m");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return log_error_errno(negative_errno(), "Cannot clear ambient capabilities: %m");
	/* The bounding set needs CAP_SETPCAP to shrink: before the effective set goes. */
	for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++)
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) > 0 &&
		    prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EPERM)
			return log_error_errno(negative_errno(), "Cannot drop capability %d from the "
					       "bounding set: %m", (int)c);
	empty = cap_init();
	if (!empty)
		return -ENOMEM;
	if (cap_set_proc(empty) < 0)
		r = log_error_errno(negative_errno(), "Cannot drop capabilities: %m");
	cap_free(empty);
	if (r >= 0)
		r = priv_assert_dropped();
	if (r >= 0)
		log_info("Capabilities dropped, no-new-privs set");
	return r;
}

/**
 * priv_assert_dropped() - check that no capability is left and none can come back.
 *
 * Return: 0, or -EPERM naming what is left (an effective, permitted,
 * inheritable or ambient capability, or no-new-privs unset).
 */
int priv_assert_dropped(void)
{
	cap_t now = cap_get_proc();
	cap_t empty = cap_init();
	int differ;

	if (!now || !empty) {
		cap_free(now);
		cap_free(empty);
		return -ENOMEM;
	}
	differ = cap_compare(now, empty);
	cap_free(now);
	cap_free(empty);
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
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) > 0)
			log_debug("Capability %d stays in the bounding set (no CAP_SETPCAP to drop "
				  "it); unusable with no-new-privs", (int)c);
	return 0;
}

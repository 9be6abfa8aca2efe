// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A persistent flight recorder's history across restarts of the daemon.
 * Its recipe (recovery-recipe.h) names the boot that armed the boot-mapped
 * instance. After a reboot, the next start writes the history into a file
 * (recovery.c). Within the same boot a restarted daemon resumes it: the
 * ring is neither read nor cleared, and the new session takes the place of
 * the old recipe. Not read, because Debian's 6.12.95 does not keep a
 * boot-mapped ring across the next reboot once it has been read (measured:
 * a crash after a read, or after a drain at start-up, came back empty).
 * The file of an earlier boot gets symbols that resolve that boot's
 * addresses (kallsyms-text.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/kernel/clock-anchor.h"
#include "daemon/kernel/instance.h"
#include "daemon/kernel/kallsyms.h"
#include "daemon/kernel/kallsyms-text.h"
#include "daemon/base/log.h"
#include "daemon/store/metadata.h"
#include "daemon/recovery/persistent-history.h"
#include "daemon/recovery/recovery-recipe.h"
#include "daemon/store/spool.h"
#include "lib/io-util.h"

/**
 * persistent_history_of_this_boot() - is this a persistent history armed in this boot?
 * @p: a parsed recipe
 *
 * Return: true if its session, created again, resumes it instead of recovery writing it.
 */
bool persistent_history_of_this_boot(const struct parsed_recipe *p)
{
	char now[40];

	return p->persistent && p->boot[0] && boot_id(now) == 0 && strcmp(now, p->boot) == 0;
}

/* Is the spool @name a persistent history of @instance, armed in this boot? */
static bool resumable(int spool_fd, const char *name, const char *instance)
{
	_cleanup_close_ int dir_fd = openat(spool_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
					    O_NOFOLLOW);
	struct parsed_recipe p = {};
	bool yes;

	if (dir_fd < 0 || recipe_parse(dir_fd, &p) < 0) {
		recipe_done(&p);
		return false;
	}
	yes = persistent_history_of_this_boot(&p) && strcmp(p.instance, instance) == 0;
	recipe_done(&p);
	return yes;
}

/**
 * persistent_history_take() - a session arms @instance again in the same boot.
 * @state_dir_fd: the state directory
 * @instance: the boot-mapped instance
 * @keep_trace_id: the new session's own recipe's spool, which stays
 *
 * The recipes of this boot's earlier sessions on @instance go: the new one
 * covers what the ring holds.
 *
 * Return: how many there were (then the ring is this boot's history, to
 * resume, not to clear), or -errno.
 */
int persistent_history_take(int state_dir_fd, const char *instance, uint64_t keep_trace_id)
{
	char keep[64];
	struct dirent *de;
	int spool_fd, n = 0;
	DIR *d;

	spool_name(keep_trace_id, keep, sizeof(keep));
	spool_fd = openat(state_dir_fd, SPOOL_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (spool_fd < 0)
		return errno == ENOENT ? 0 : negative_errno();
	d = fdopendir(spool_fd);
	if (!d) {
		close(spool_fd);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		if (!spool_name_valid(de->d_name) || strcmp(de->d_name, keep) == 0 ||
		    !resumable(spool_fd, de->d_name, instance))
			continue;
		log_info("Boot-mapped instance '%s' holds the history of this boot: resumed, its "
			 "earlier recipe '%s' replaced", instance, de->d_name);
		spool_remove_dir(spool_fd, de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/**
 * persistent_history_adopt() - take the boot-mapped instance a recipe armed, to write its history.
 * @p: the recipe
 * @ret: the instance, tracing off
 * @ret_last_boot_info: its last_boot_info (for the symbols), for the caller to free; NULL
 *                      if unreadable
 *
 * Drained only where the kernel that wrote it is the kernel now, for the
 * event formats are this kernel's.
 *
 * Return: 0, or -ESRCH (logged) if there is no such history to write.
 */
int persistent_history_adopt(const struct parsed_recipe *p, struct instance **ret,
			     char **ret_last_boot_info)
{
	char now[RECIPE_KERNEL_MAX], error[512];
	int r;

	*ret_last_boot_info = NULL;
	r = recipe_kernel_identity(now, sizeof(now));
	if (r < 0)
		return r;
	if (strcmp(now, p->kernel) != 0) {
		log_error("Recovery: the history in boot-mapped instance '%s' was recorded by "
			  "kernel '%s', and this is '%s': its event formats may differ, so it is "
			  "not recovered", p->instance, p->kernel, now);
		return -ESRCH;
	}
	r = instance_adopt_boot_mapped(p->instance, ret, error, sizeof(error));
	if (r < 0) {
		log_warning("Recovery: the history of boot-mapped instance '%s' is gone: %s",
			    p->instance, error);
		return -ESRCH;
	}
	/* What it holds goes into the file, and nothing else: tracing stays off meanwhile. */
	instance_set_tracing(*ret, false);
	/* Before the drain: a ring emptied no longer speaks for the earlier boot. */
	r = instance_boot_last_info(*ret, ret_last_boot_info);
	if (r < 0)
		log_warning_errno(r, "Recovery: cannot read last_boot_info of '%s', the history's "
				  "symbols will be this boot's: %m", p->instance);
	return 0;
}

/**
 * persistent_history_symbols() - symbols that resolve the addresses of the boot a history is from.
 * @gm: the recovered file's metadata, read in this boot: its symbols are replaced
 * @ks: this boot's symbols
 * @last_boot_info: the boot-mapped instance's, read before its drain
 * @how: receives how the file's symbols were made, for its writer string
 * @n_how: its size
 *
 * KASLR put the earlier boot's kernel elsewhere, and the ring's stacks and
 * function addresses are that boot's: this boot's kernel symbols, moved
 * back by the kernel's text delta, resolve them. Modules' symbols stay this
 * boot's (6.12 does not say where the last boot loaded them).
 *
 * Return: 0, or -errno (the file keeps this boot's symbols, and @how says so).
 */
int persistent_history_symbols(struct global_meta *gm, struct kallsyms *ks,
			       const char *last_boot_info, char *how, size_t n_how)
{
	_cleanup_free_ char *text = NULL;
	uint64_t text_now;
	size_t n, n_moved;
	int64_t delta;
	char *moved;
	int r;

	snprintf(how, n_how, "symbols: this boot's, not moved for KASLR");
	r = kallsyms_read(ks, /* any_age= */ true, &text, &n);
	if (r >= 0 && !text)
		r = -ENOENT;
	if (r >= 0)
		r = kallsyms_text_address(text, n, "_text", &text_now);
	if (r >= 0 && text_now == 0)
		r = -EPERM;  /* addresses hidden (kptr_restrict): nothing to move */
	if (r >= 0)
		r = last_boot_text_delta(last_boot_info, text_now, &delta);
	if (r >= 0 && delta != 0)
		r = kallsyms_text_shift(text, n, text_now, delta, &moved, &n_moved);
	if (r < 0)
		return log_warning_errno(r, "Recovery: the symbols of the earlier boot cannot be "
					 "made; the file has this boot's: %m");
	if (delta == 0) {
		snprintf(how, n_how, "symbols: this boot's, KASLR put the kernel where the crashed "
			 "boot's was");
		return 0;
	}
	free(gm->kallsyms);
	gm->kallsyms = moved;
	gm->n_kallsyms = n_moved;
	gm->kallsyms_sealed = kallsyms_section_unref(gm->kallsyms_sealed);
	snprintf(how, n_how, "symbols: this boot's, the kernel's moved by %s0x%" PRIx64 " to where "
		 "KASLR put the crashed boot's, modules' as they are", delta > 0 ? "-" : "+",
		 delta > 0 ? (uint64_t)delta : -(uint64_t)delta);
	return 0;
}

/**
 * persistent_history_cpustat() - how a recovered history's CPU begins, for its statistics.
 * @i: the boot-mapped instance, drained
 * @cpu: the CPU
 * @d: what the drain read from it
 * @page_size: the sub-buffer size
 *
 * A flight recorder's history is the end of what was recorded; the file
 * says per CPU from when it is complete and whether older events were
 * overwritten. The kernel does not carry the ring's overrun counter across
 * a reboot (6.12: "overrun: 0" after one, measured), so a ring that was
 * full, all its sub-buffers but the one being written read back, is taken
 * to have overwritten its oldest events; how many is not known.
 *
 * Return: the text (ftracectl info reads it), or NULL if out of memory.
 */
char *persistent_history_cpustat(struct instance *i, unsigned cpu, const struct ring_drained *d,
				 uint32_t page_size)
{
	_cleanup_free_ char *size = NULL;
	uint64_t ring_pages = 0;
	bool full;
	char *text;

	if (instance_read(i, "buffer_size_kb", &size, NULL) >= 0 && page_size > 0)
		ring_pages = strtoull(size, NULL, 10) * 1024 / page_size;
	full = ring_pages > 0 && d->pages + 2 >= ring_pages;
	if (d->pages == 0)
		return asprintf(&text, "CPU: %u (flight recorder)\ncomplete from: capture start\n"
				"older data dropped: no\n", cpu) < 0 ? NULL : text;
	if (asprintf(&text, "CPU: %u (flight recorder)\ncomplete from: %" PRIu64 "\nolder data "
		     "dropped: %s\n%s", cpu, d->first_ts, full ? "yes" : "no",
		     full ? "ftraced-warning: the ring was full when the kernel stopped: its "
			    "oldest events were overwritten, how many is not known (the kernel's "
			    "overrun counter does not survive a reboot)\n" : "") < 0)
		return NULL;
	return text;
}

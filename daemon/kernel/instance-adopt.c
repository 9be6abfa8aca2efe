// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Instances that exist already, taken over rather than created: the orphans
 * an earlier run of the daemon left (crash recovery drains and removes
 * them), and instances the kernel mapped at boot onto reserved memory (Linux 6.12:
 * reserve_mem=SIZE:ALIGN:LABEL trace_instance=NAME^traceoff@LABEL): their
 * ring survives a panic and a warm reset, which is what the persistent
 * flight backend keeps its history in. The kernel owns them: ftraced adopts
 * one by name, never creates, resizes or removes it (instance.c refuses
 * those on it), and releasing it turns tracing and its events off and
 * leaves what the ring holds. Main thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracefs.h>

#include "daemon/base/bounds.h"
#include "daemon/kernel/instance-internal.h"
#include "daemon/base/log.h"
#include "lib/io-util.h"

/*
 * An object for an instance that exists already (an orphan, a boot-mapped
 * one). Return: 0, -ENOENT if there is none by that name, or -errno.
 */
static int instance_open_existing(const char *name, struct instance **ret)
{
	struct instance *i;

	if (strlen(name) >= sizeof(i->name) || !tracefs_instance_exists(name))
		return -ENOENT;
	i = calloc(1, sizeof(*i));
	if (!i)
		return -ENOMEM;
	snprintf(i->name, sizeof(i->name), "%s", name);
	i->tfs = tracefs_instance_alloc(NULL, name);
	if (!i->tfs) {
		free(i);
		return negative_errno();
	}
	*ret = i;
	return 0;
}

/**
 * instance_adopt_orphan() - take over an instance an earlier run of the daemon left.
 * @name: its name, as a crash recipe recorded it (not trusted)
 * @prefix: what our own instances' names start with ("ftraced-<tag>-")
 * @ret: the instance, tracing turned off; freeing it removes it
 *
 * Crash recovery drains what its ring buffers still hold, then frees it.
 *
 * Return: 0, -ENOENT if there is no such instance of ours, or -errno.
 */
int instance_adopt_orphan(const char *name, const char *prefix, struct instance **ret)
{
	struct instance *i;
	int r;

	if (strncmp(name, prefix, strlen(prefix)) != 0)
		return -ENOENT;
	r = instance_open_existing(name, &i);
	if (r < 0)
		return r;
	if (tracefs_trace_off(i->tfs) < 0)
		log_warning_errno(negative_errno(), "Cannot turn tracing off in orphaned instance "
				  "'%s', draining anyway: %m", name);
	*ret = i;
	return 0;
}

/*
 * The boot-mapped instances this daemon holds: one session each, for two
 * would arm and drain each other's history. Main thread only.
 */
static struct instance *adopted[SESSION_MAX];

static bool is_adopted(const char *name)
{
	for (size_t k = 0; k < SESSION_MAX; k++)
		if (adopted[k] && strcmp(adopted[k]->name, name) == 0)
			return true;
	return false;
}

static void set_adopted(struct instance *i, bool on)
{
	for (size_t k = 0; k < SESSION_MAX; k++)
		if (on ? !adopted[k] : adopted[k] == i) {
			adopted[k] = on ? i : NULL;
			return;
		}
}

/* What the admin adds to the kernel command line, for messages. */
#define BOOT_CMDLINE_HINT "reserve_mem=64M:4096:trace trace_instance=%s^traceoff@trace"

/**
 * instance_adopt_boot_mapped() - take an instance the kernel mapped at boot.
 * @name: its name, as trace_instance= on the kernel command line gave it
 * @ret: the instance; freeing it releases it (tracing and events off), never removes it
 * @error: receives what is missing and how to set it up, on failure
 * @n_error: its size
 *
 * Return: 0, -ENOENT if there is no such instance, -ENOTSUP if it is not
 * mapped onto reserved memory (or the kernel is older than 6.12), or -errno.
 */
int instance_adopt_boot_mapped(const char *name, struct instance **ret, char *error,
			       size_t n_error)
{
	struct instance *i;
	int r;

	if (is_adopted(name)) {
		snprintf(error, n_error, "boot-mapped instance '%s' holds the history of another "
			 "session already ('ftracectl list' shows which)", name);
		return -EBUSY;
	}
	r = instance_open_existing(name, &i);
	if (r == -ENOENT) {
		snprintf(error, n_error, "there is no tracefs instance '%s'. The persistent "
			 "backend needs Linux 6.12 or later with an instance mapped at boot onto "
			 "reserved memory: add '" BOOT_CMDLINE_HINT "' to GRUB_CMDLINE_LINUX in "
			 "/etc/default/grub, run update-grub and reboot", name, name);
		return -ENOENT;
	}
	if (r < 0) {
		snprintf(error, n_error, "cannot open instance '%s': %s", name, strerror(-r));
		return r;
	}
	/* Only a mapped instance has it (6.12 and later). */
	if (!tracefs_file_exists(i->tfs, "last_boot_info")) {
		tracefs_instance_free(i->tfs);
		free(i);
		snprintf(error, n_error, "instance '%s' is not mapped onto memory reserved at boot "
			 "(it has no last_boot_info; Linux 6.12 or later maps one with '"
			 BOOT_CMDLINE_HINT "' on the kernel command line)", name, name);
		return -ENOTSUP;
	}
	i->boot_mapped = true;
	set_adopted(i, true);
	*ret = i;
	return 0;
}

/**
 * instance_boot_last_info() - what the kernel says of the boot a mapped ring was written in.
 * @i: a boot-mapped instance
 * @ret: its last_boot_info text (KASLR's text delta), for the caller to free
 *
 * Return: 0 or -errno.
 */
int instance_boot_last_info(struct instance *i, char **ret)
{
	*ret = tracefs_instance_file_read(i->tfs, "last_boot_info", NULL);
	return *ret ? 0 : -EIO;
}

/* instance_destroy() of a boot-mapped instance: what ftraced turned on goes off; its ring stays. */
int instance_boot_release(struct instance *i)
{
	int r = 0;

	if (tracefs_trace_off(i->tfs) < 0)
		r = negative_errno();
	if (tracefs_event_disable(i->tfs, NULL, NULL) < 0 && r == 0 && errno != ENOENT)
		r = negative_errno();
	if (r < 0)
		log_warning_errno(r, "Releasing boot-mapped instance '%s' left something on: %m",
				  i->name);
	instance_boot_forget(i);
	tracefs_instance_free(i->tfs);
	free(i);
	return r;
}

/* The object goes (released, or abandoned to go on tracing): another may adopt the instance. */
void instance_boot_forget(struct instance *i)
{
	set_adopted(i, false);
}

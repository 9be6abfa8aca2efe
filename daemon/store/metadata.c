// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Gathers the metadata a v7 file carries, from tracefs and /proc, into
 * plain buffers for the writer (which knows nothing of tracefs). Two parts:
 * header_page/header_event and the clock of the captured instance (its
 * sub-buffer size may differ from the top level's), the formats of the
 * ftrace system and of every event the session enabled, kallsyms,
 * printk_formats, saved_cmdlines and uname.
 *
 * saved_tgids has no section or option that trace-cmd 3.1.6 reads, so it
 * is not stored.
 *
 * Symbols come from a struct kallsyms (kallsyms.c) that the caller owns.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <tracefs.h>

#include "daemon/base/bounds.h"
#include "daemon/kernel/event-list.h"
#include "daemon/kernel/instance.h"
#include "daemon/kernel/kallsyms.h"
#include "daemon/base/log.h"
#include "daemon/store/metadata.h"

static int read_top(const char *file, char **ret, size_t *ret_size)
{
	int size = 0;
	char *s;

	errno = 0;
	s = tracefs_instance_file_read(NULL, file, &size);
	/* libtracefs returns NULL for an empty file (saved_cmdlines before any task was seen). */
	if (!s && size == 0 && tracefs_file_exists(NULL, file))
		s = strdup("");
	if (!s)
		return errno ? negative_errno() : -ENOMEM;
	*ret = s;
	*ret_size = (size_t)size;
	return 0;
}

/**
 * metadata_read() - read what belongs to the captured instance.
 * @m: metadata, zero-initialised
 * @i: the session's instance, configured (sub-buffer size and clock set)
 *
 * Return: 0 or -errno.
 */
int metadata_read(struct instance_meta *m, struct instance *i)
{
	char *p, *q;
	int r;

	r = instance_read(i, "events/header_page", &m->header_page, &m->n_header_page);
	if (r < 0)
		return r;
	r = instance_read(i, "events/header_event", &m->header_event, &m->n_header_event);
	if (r < 0)
		return r;
	r = subbuf_size_from_header_page(m->header_page, &m->subbuf_size);
	if (r < 0)
		return r;
	r = instance_read(i, "trace_clock", &m->trace_clock, NULL);
	if (r < 0)
		return r;
	p = strchr(m->trace_clock, '[');
	q = p ? strchr(p, ']') : NULL;
	if (!p || !q || (size_t)(q - p - 1) >= sizeof(m->clock))
		return -EINVAL;
	memcpy(m->clock, p + 1, (size_t)(q - p - 1));
	m->clock[q - p - 1] = '\0';
	return 0;
}

static int add_format(struct v7_blob **blobs, size_t *n, const char *system, const char *event)
{
	char path[sizeof("events///format") + FTRACED_NAME_MAX + FTRACED_EVENT_SPEC_MAX];
	struct v7_blob *b;
	size_t size;
	char *text;
	int r;

	snprintf(path, sizeof(path), "events/%s/%s/format", system, event);
	r = read_top(path, &text, &size);
	if (r < 0)
		return r;
	b = realloc(*blobs, (*n + 1) * sizeof(*b));
	if (!b) {
		free(text);
		return -ENOMEM;
	}
	*blobs = b;
	b[(*n)++] = (struct v7_blob){ .data = text, .size = size };
	return 0;
}

/**
 * global_meta_read() - read formats, symbols, comms and uname.
 * @m: metadata, zero-initialised
 * @events: the session's events (sorted by system), which must outlive @m
 * @ks: where symbols come from (NULL: none)
 * @zstd: for a compressed file: symbols as their compressed section
 * @no_events: the file holds no event, so no address: the symbols' cached
 *             copy will do however old it is (a session whose events never
 *             fired is not kept waiting at its stop for /proc/kallsyms)
 *
 * Return: 0 or -errno. A missing kallsyms or printk_formats is not an
 * error (both sections may be empty).
 */
int global_meta_read(struct global_meta *m, const struct event_list *events,
		     struct kallsyms *ks, bool zstd, bool no_events)
{
	struct utsname u;
	char **ftrace;
	size_t k = 0;
	int r;

	ftrace = tracefs_system_events(NULL, "ftrace");
	for (size_t i = 0; ftrace && ftrace[i]; i++) {
		r = add_format((struct v7_blob **)&m->ftrace_formats, &m->n_ftrace_formats,
			       "ftrace", ftrace[i]);
		if (r == -ENOMEM) {
			tracefs_list_free(ftrace);
			return r;
		}
	}
	tracefs_list_free(ftrace);

	for (size_t i = 0; i < events->n; i++) {
		r = add_format(&m->event_formats, &m->n_event_formats, events->events[i].system,
			       events->events[i].event);
		if (r < 0)
			return log_error_errno(r, "Reading the format of %s:%s failed: %m",
					       events->events[i].system, events->events[i].event);
	}
	/* Events are sorted by system: one v7 system entry per run of equal names. */
	m->systems = calloc(MAX(events->n, (size_t)1), sizeof(*m->systems));
	if (!m->systems)
		return -ENOMEM;
	for (size_t i = 0; i < events->n; i++) {
		if (i == 0 || strcmp(events->events[i].system, events->events[i - 1].system) != 0) {
			m->systems[m->n_systems++] = (struct v7_system){
				.name = events->events[i].system,
				.formats = &m->event_formats[k],
			};
		}
		m->systems[m->n_systems - 1].n_formats++;
		k++;
	}

	/* Uncompressed files too carry the compressed copy (v7_file.metadata_zstd). */
	(void)zstd;
	r = kallsyms_read_sealed(ks, no_events, &m->kallsyms_sealed);
	if (r < 0)
		log_warning_errno(r, "Reading /proc/kallsyms failed, writing no symbols: %m");
	r = read_top("printk_formats", &m->printk, &m->n_printk);
	if (r < 0)
		log_debug_errno(r, "Reading printk_formats failed, ignoring: %m");
	r = read_top("saved_cmdlines", &m->cmdlines, &m->n_cmdlines);
	if (r < 0)
		log_warning_errno(r, "Reading saved_cmdlines failed, ignoring: %m");

	if (uname(&u) < 0)
		return negative_errno();
	snprintf(m->uname, sizeof(m->uname), "%s %s %s %s", u.sysname, u.nodename, u.release,
		 u.machine);
	return 0;
}

/**
 * metadata_to_v7() - point a v7_file's metadata fields at @im and @gm.
 * @im: instance part, which must outlive @f
 * @gm: global part, which must outlive @f
 * @f: file description to fill in
 */
void metadata_to_v7(const struct instance_meta *im, const struct global_meta *gm,
		    struct v7_file *f)
{
	f->page_size = im->subbuf_size;
	f->header_page = (struct v7_blob){ im->header_page, im->n_header_page };
	f->header_event = (struct v7_blob){ im->header_event, im->n_header_event };
	f->trace_clock = im->trace_clock;
	f->clock = im->clock;
	f->n_ftrace_formats = gm->n_ftrace_formats;
	f->ftrace_formats = gm->ftrace_formats;
	f->n_systems = gm->n_systems;
	f->systems = gm->systems;
	f->kallsyms = (struct v7_blob){ gm->kallsyms, gm->n_kallsyms };
	if (gm->kallsyms_sealed)
		f->kallsyms_sealed = gm->kallsyms_sealed->body;
	f->printk = (struct v7_blob){ gm->printk, gm->n_printk };
	f->cmdlines = (struct v7_blob){ gm->cmdlines, gm->n_cmdlines };
	f->uname = gm->uname;
}

static void blobs_free(struct v7_blob *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((void *)b[i].data);
	free(b);
}

void metadata_done(struct instance_meta *m)
{
	free(m->header_page);
	free(m->header_event);
	free(m->trace_clock);
	*m = (struct instance_meta){};
}

void global_meta_done(struct global_meta *m)
{
	blobs_free(m->ftrace_formats, m->n_ftrace_formats);
	blobs_free(m->event_formats, m->n_event_formats);
	free(m->systems);
	free(m->kallsyms);
	kallsyms_section_unref(m->kallsyms_sealed);
	free(m->printk);
	free(m->cmdlines);
	*m = (struct global_meta){};
}

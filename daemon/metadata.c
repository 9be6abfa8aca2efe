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
 * /proc/kallsyms is read through one fd opened at start-up while the
 * daemon still held CAP_SYSLOG (the kernel decides at open() whether
 * addresses are shown). It may be read from several assembler threads,
 * hence the lock around its file position. The kernel takes ~80 ms to
 * generate it, most of a snapshot's latency, so the last copy is kept
 * and reused while /proc/modules is unchanged and the copy is younger
 * than KALLSYMS_CACHE_USEC (symbols of BPF programs loaded since may be
 * missing from a file for that long).
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

#include "daemon/bounds.h"
#include "daemon/event-list.h"
#include "daemon/instance.h"
#include "daemon/log.h"
#include "daemon/metadata.h"

static int kallsyms_fd = -EBADF;
static pthread_mutex_t kallsyms_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under kallsyms_lock: the last kallsyms read, and /proc/modules then. */
static struct {
	char *text;
	size_t n_text;
	char *modules;
	size_t n_modules;
	uint64_t read_usec;
} kallsyms_cache;

/**
 * metadata_set_kallsyms_fd() - the /proc/kallsyms fd to read symbols from.
 * @fd: opened with CAP_SYSLOG held; owned by the caller for the process lifetime
 */
void metadata_set_kallsyms_fd(int fd)
{
	kallsyms_fd = fd;
}

/**
 * metadata_kallsyms_has_addresses() - does the kallsyms fd show real addresses?
 *
 * Without CAP_SYSLOG at open time (a unit whose bounding set lacks it, or
 * ProtectKernelLogs=yes, which removes it) every address reads as zero.
 *
 * Return: true if the first symbols have non-zero addresses.
 */
bool metadata_kallsyms_has_addresses(void)
{
	char head[256];
	ssize_t n;

	if (kallsyms_fd < 0)
		return false;
	n = pread(kallsyms_fd, head, sizeof(head) - 1, 0);
	if (n <= 0)
		return false;
	head[n] = '\0';
	for (char *p = head; *p && *p != ' '; p++)
		if (*p != '0')
			return true;
	return false;
}

/* Reads a whole file through @fd from its start; *ret is NUL-terminated. */
static int read_whole_fd(int fd, char **ret, size_t *ret_size)
{
	size_t n = 0, cap = 0;
	char *buf = NULL;
	int r = 0;

	if (lseek(fd, 0, SEEK_SET) < 0)
		r = negative_errno();
	while (r >= 0) {
		ssize_t k;

		if (n + 65536 > cap) {
			char *p;

			if (cap >= METADATA_FILE_MAX) {
				r = -EFBIG;
				break;
			}
			cap = MAX(cap * 2, (size_t)1 << 16);
			p = realloc(buf, cap);
			if (!p) {
				r = -ENOMEM;
				break;
			}
			buf = p;
		}
		k = read(fd, buf + n, cap - n - 1);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			r = negative_errno();
		} else if (k == 0) {
			break;
		} else {
			n += (size_t)k;
		}
	}
	if (r < 0) {
		free(buf);
		return r;
	}
	if (buf)
		buf[n] = '\0';
	*ret = buf;
	*ret_size = n;
	return 0;
}

static uint64_t monotonic_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int read_modules(char **ret, size_t *ret_size)
{
	int fd = open("/proc/modules", O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return negative_errno();
	r = read_whole_fd(fd, ret, ret_size);
	close(fd);
	return r;
}

static int read_kallsyms(char **ret, size_t *ret_size)
{
	char *modules = NULL, *text = NULL;
	size_t n_modules = 0, n_text = 0;
	uint64_t now = monotonic_usec();
	int r;

	*ret = NULL;
	*ret_size = 0;
	if (kallsyms_fd < 0)
		return 0;
	pthread_mutex_lock(&kallsyms_lock);
	r = read_modules(&modules, &n_modules);
	if (r == -ENOENT) {
		modules = strdup(""); /* a kernel without modules: they never change */
	} else if (r < 0) {
		free(modules);
		modules = NULL; /* no way to tell: never reuse */
	}
	if (kallsyms_cache.text && modules && kallsyms_cache.modules &&
	    now - kallsyms_cache.read_usec < KALLSYMS_CACHE_USEC &&
	    n_modules == kallsyms_cache.n_modules &&
	    memcmp(modules, kallsyms_cache.modules, n_modules) == 0) {
		text = malloc(kallsyms_cache.n_text + 1);
		r = text ? 0 : -ENOMEM;
		if (text) {
			memcpy(text, kallsyms_cache.text, kallsyms_cache.n_text + 1);
			n_text = kallsyms_cache.n_text;
		}
		free(modules);
		pthread_mutex_unlock(&kallsyms_lock);
		*ret = text;
		*ret_size = n_text;
		return r;
	}
	r = read_whole_fd(kallsyms_fd, &text, &n_text);
	if (r >= 0 && text) {
		char *copy = malloc(n_text + 1);

		free(kallsyms_cache.text);
		free(kallsyms_cache.modules);
		kallsyms_cache.text = copy;
		kallsyms_cache.n_text = copy ? n_text : 0;
		if (copy)
			memcpy(copy, text, n_text + 1);
		kallsyms_cache.modules = TAKE_PTR(modules);
		kallsyms_cache.n_modules = n_modules;
		kallsyms_cache.read_usec = now;
	}
	free(modules);
	pthread_mutex_unlock(&kallsyms_lock);
	if (r < 0)
		return r;
	*ret = text;
	*ret_size = n_text;
	return 0;
}

static int read_top(const char *file, char **ret, size_t *ret_size)
{
	int size = 0;
	char *s;

	s = tracefs_instance_file_read(NULL, file, &size);
	if (!s)
		return negative_errno();
	*ret = s;
	*ret_size = (size_t)size;
	return 0;
}

/**
 * instance_meta_read() - read what belongs to the captured instance.
 * @m: metadata, zero-initialised
 * @i: the session's instance, configured (sub-buffer size and clock set)
 *
 * Return: 0 or -errno.
 */
int instance_meta_read(struct instance_meta *m, struct instance *i)
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
 *
 * Return: 0 or -errno. A missing kallsyms or printk_formats is not an
 * error (both sections may be empty).
 */
int global_meta_read(struct global_meta *m, const struct event_list *events)
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

	r = read_kallsyms(&m->kallsyms, &m->n_kallsyms);
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

void instance_meta_done(struct instance_meta *m)
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
	free(m->printk);
	free(m->cmdlines);
	*m = (struct global_meta){};
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A spool's recipe: what a spool needs besides its data to become a file
 * again (the target, compression, CPU count, events, the instance and its
 * header_page, header_event and trace_clock, the DATE anchor, the gap
 * before it). Written when a segment opens (recipe_write()),
 * read back and checked by recovery (recipe_parse()). Owns the recipe's
 * format and nothing else.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/kernel/clock-anchor.h"
#include "daemon/kernel/event-list.h"
#include "daemon/kernel/instance.h"
#include "daemon/base/log.h"
#include "daemon/store/metadata.h"
#include "daemon/recovery/recovery-recipe.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/io-util.h"

/* An "event=SYSTEM:EVENT" line per event: at most 4 bytes for each byte of the list's names. */
#define RECIPE_MAX (4 * EVENT_LIST_BYTES_MAX + 64u * 1024u)
/* A recipe's events were checked when the session began: any ftrace event it names was delivered. */
static const char *const RECIPE_FTRACE_EVENTS[] = {
	"print", "raw_data", "bprint", "function", "funcgraph_entry", "funcgraph_exit",
	"kernel_stack", NULL,
};
static const struct ftrace_offer RECIPE_FTRACE = { .events = RECIPE_FTRACE_EVENTS };

static int write_file_at(int dir_fd, const char *name, const char *data, size_t n)
{
	int fd, r;

	fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return negative_errno();
	r = loop_write(fd, data, n);
	close(fd);
	return r;
}

/**
 * recipe_kernel_identity() - which kernel this is, as precisely as uname says.
 * @buf: receives "RELEASE VERSION" (the version names the build: "#1 SMP ... 2026")
 * @n: its size (RECIPE_KERNEL_MAX)
 *
 * Return: 0, or -errno.
 */
int recipe_kernel_identity(char *buf, size_t n)
{
	struct utsname u;

	if (uname(&u) < 0)
		return negative_errno();
	snprintf(buf, n, "%s %s", u.release, u.version);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/**
 * recipe_write() - store what recovering this spool would need.
 * @spool_dir_fd: the segment's spool directory
 * @r: the recipe
 *
 * Return: 0 or -errno.
 */
int recipe_write(int spool_dir_fd, const struct recipe *r)
{
	_cleanup_free_ char *text = NULL;
	char boot[40], kernel[RECIPE_KERNEL_MAX];
	size_t n = 0;
	FILE *f;
	int err;

	f = open_memstream(&text, &n);
	if (!f)
		return -ENOMEM;
	fprintf(f, "target=%s\ninstance=%s\ncompression=%s\nlevel=%d\ncpus=%u\n", r->target,
		r->instance, r->zstd ? "zstd" : "none", r->level, r->n_cpus);
	if (r->kernel_history)
		fprintf(f, "history=%s\n", r->persistent ? "persistent" : "kernel");
	if (r->persistent && recipe_kernel_identity(kernel, sizeof(kernel)) == 0)
		fprintf(f, "kernel=%s\n", kernel);
	/* The boot, with a DATE measured in it; and always for a history that outlives it. */
	if (((r->date && r->date[0]) || r->persistent) && boot_id(boot) == 0) {
		if (r->date && r->date[0])
			fprintf(f, "date=%s\n", r->date);
		fprintf(f, "boot=%s\n", boot);
	}
	/* One line: the note is ours, made without line breaks. */
	if (r->gap && r->gap[0] && !strchr(r->gap, '\n'))
		fprintf(f, "gap=%s\n", r->gap);
	for (size_t i = 0; i < r->events->n; i++)
		fprintf(f, "event=%s:%s\n", r->events->events[i].system, r->events->events[i].event);
	if (fclose(f) != 0)
		return -ENOMEM;
	err = write_file_at(spool_dir_fd, "header_page", r->imeta->header_page,
			    r->imeta->n_header_page);
	if (err >= 0)
		err = write_file_at(spool_dir_fd, "header_event", r->imeta->header_event,
				    r->imeta->n_header_event);
	if (err >= 0)
		err = write_file_at(spool_dir_fd, "trace_clock", r->imeta->trace_clock,
				    strlen(r->imeta->trace_clock));
	/*
	 * The recipe last, and whole (renamed into place): a spool without one
	 * never held data no file has, so recovery may drop it.
	 */
	if (err >= 0)
		err = write_file_at(spool_dir_fd, "." RECIPE ".tmp", text, n);
	if (err >= 0 && renameat(spool_dir_fd, "." RECIPE ".tmp", spool_dir_fd, RECIPE) < 0)
		err = negative_errno();
	return err;
}

/*
 * A recipe's target as the daemon writes it: "recovered/NAME-...dat" or
 * "sessions/NAME/NAME-...dat". Anything else (absolute, "..", empty
 * components, characters a name of ours never has) was not written by us.
 */
static bool target_valid(const char *t)
{
	const char *c = t;

	if (!*t || *t == '/' || strstr(t, "..") || strstr(t, "//") || t[strlen(t) - 1] == '/')
		return false;
	for (; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || strchr("._-/", *c)))
			return false;
	return true;
}

/**
 * recipe_instance() - the instance a spool's recipe names, without the rest.
 * @dir_fd: the spool directory
 * @buf: receives the name
 * @n: its size
 *
 * For ordering the spools of one instance before any is recovered (a
 * session's closed segment may still have had its spool at a crash).
 *
 * Return: 0, -ENOENT without a recipe, -EBADMSG without a valid name, or -errno.
 */
int recipe_instance(int dir_fd, char *buf, size_t n)
{
	_cleanup_free_ char *text = NULL;
	char *save = NULL;
	int r;

	r = read_file_at(dir_fd, RECIPE, RECIPE_MAX, &text, NULL);
	if (r < 0)
		return r;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "instance=", 9) == 0 && strlen(line + 9) < n &&
		    ctl_name_valid(line + 9)) {
			strcpy(buf, line + 9);
			return 0;
		}
	return -EBADMSG;
}

/**
 * recipe_parse() - read a spool's recipe and the instance metadata kept beside it.
 * @dir_fd: the spool directory
 * @p: zeroed by the caller, filled in; recipe_done() frees it, whatever the result
 *
 * Nothing in it is trusted: the target must stay inside the state
 * directory, names must be ours, every length is bounded.
 *
 * Return: 0, -ENOENT without a recipe, or -errno (-EBADMSG: not one of ours).
 */
int recipe_parse(int dir_fd, struct parsed_recipe *p)
{
	_cleanup_(event_catalog_freep) struct event_catalog *cat = NULL;
	_cleanup_free_ char *text = NULL;
	char *save = NULL;
	int r;

	r = read_file_at(dir_fd, RECIPE, RECIPE_MAX, &text, NULL);
	if (r < 0)
		return r;
	r = event_catalog_new(NULL, &cat);
	if (r < 0)
		return r;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *v = strchr(line, '=');

		if (!v)
			return -EBADMSG;
		*v++ = '\0';
		if (strcmp(line, "target") == 0 && strlen(v) < sizeof(p->target))
			strcpy(p->target, v);
		else if (strcmp(line, "instance") == 0 && strlen(v) < sizeof(p->instance))
			strcpy(p->instance, v);
		else if (strcmp(line, "compression") == 0)
			p->zstd = strcmp(v, "zstd") == 0;
		else if (strcmp(line, "level") == 0)
			p->level = atoi(v);
		else if (strcmp(line, "cpus") == 0)
			p->n_cpus = (unsigned)strtoul(v, NULL, 10);
		else if (strcmp(line, "history") == 0) {
			p->persistent = strcmp(v, "persistent") == 0;
			p->kernel_history = p->persistent || strcmp(v, "kernel") == 0;
		} else if (strcmp(line, "kernel") == 0)
			snprintf(p->kernel, sizeof(p->kernel), "%s", v);
		else if (strcmp(line, "date") == 0 && clock_anchor_date_valid(v))
			strcpy(p->date, v);
		else if (strcmp(line, "boot") == 0 && strlen(v) < sizeof(p->boot))
			strcpy(p->boot, v);
		else if (strcmp(line, "gap") == 0)
			snprintf(p->gap, sizeof(p->gap), "%s", v);
		else if (strcmp(line, "event") == 0 &&
			 !ctl_string_valid(FTRACED_ATTR_EVENT, v, FTRACED_EVENT_SPEC_MAX))
			return -EBADMSG;
		else if (strcmp(line, "event") == 0 &&
			 event_list_expand(&p->events, cat, v, NULL, &RECIPE_FTRACE,
					   EVENT_LIST_BYTES_MAX, NULL, 0) < 0)
			log_notice("Recovery: event '%s' no longer exists, its format is left out", v);
	}
	/* A DATE holds within the boot it was measured in: after a reboot the file has none. */
	{
		char now[40];

		if (!p->persistent &&
		    (!p->boot[0] || boot_id(now) < 0 || strcmp(now, p->boot) != 0))
			p->date[0] = '\0';
	}
	/* A target path stays inside the state directory; names are what we write. */
	if (!target_valid(p->target) || !ctl_name_valid(p->instance) ||
	    p->n_cpus == 0 || p->n_cpus > 65536)
		return -EBADMSG;
	r = read_file_at(dir_fd, "header_page", METADATA_FILE_MAX, &p->imeta.header_page,
			 &p->imeta.n_header_page);
	if (r >= 0)
		r = read_file_at(dir_fd, "header_event", METADATA_FILE_MAX, &p->imeta.header_event,
				 &p->imeta.n_header_event);
	if (r >= 0)
		r = read_file_at(dir_fd, "trace_clock", METADATA_FILE_MAX, &p->imeta.trace_clock,
				 NULL);
	if (r < 0)
		return r;
	r = subbuf_size_from_header_page(p->imeta.header_page, &p->imeta.subbuf_size);
	if (r < 0)
		return r;
	{
		char *a = strchr(p->imeta.trace_clock, '['), *b = a ? strchr(a, ']') : NULL;

		if (!a || !b || (size_t)(b - a - 1) >= sizeof(p->imeta.clock))
			return -EBADMSG;
		memcpy(p->imeta.clock, a + 1, (size_t)(b - a - 1));
		p->imeta.clock[b - a - 1] = '\0';
	}
	return 0;
}


void recipe_done(struct parsed_recipe *p)
{
	metadata_done(&p->imeta);
	event_list_done(&p->events);
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What this kernel offers a session, for `ftracectl list -e/-t/-f/-o` and
 * `--kernel`: its events, the tracers and trace options an instance has,
 * its functions, and the features ftraced uses (a snapshot buffer, a
 * tracer in an instance, probes, copied markers, boot-mapped buffers, the
 * largest sub-buffer). Each answer is a file descriptor the client reads:
 * a sealed memfd of lines "NAME<TAB>VALUE<TAB>DETAIL", or, for the
 * functions, available_filter_functions itself, opened here (names only;
 * never the file with addresses).
 *
 * What an instance has is found in a short-lived instance of the daemon's
 * own, tried for real (a tracer it refuses is refused here too), once per
 * daemon: the answer is kept. Main thread.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <tracefs.h>

#include "daemon/kernel/event-list.h"
#include "daemon/kernel/instance-internal.h"
#include "daemon/kernel/instance-offer.h"
#include "daemon/base/log.h"
#include "lib/io-util.h"

/* The instance that is looked at, as the clock anchor's is: an id no session takes. */
#define OFFER_INSTANCE_ID UINT64_C(4294967296)

/* Does the instance take @tracer? Tried, and put back to nop. */
static const char *tracer_runs(struct instance *i, const char *tracer)
{
	int r = instance_write_file(i, "current_tracer", tracer);

	(void)instance_write_file(i, "current_tracer", "nop");
	return r >= 0 ? "yes" : r == -EPERM ? "refused (EPERM: kernel lockdown or ftrace_enabled=0)" :
	       r == -EINVAL ? "no" : strerror(-r);
}

/* Instances on the kernel command line, mapped onto memory kept across reboots (6.12+). */
static void persistent_instances(FILE *f)
{
	char **names = tracefs_instances(NULL);
	size_t n = 0;

	fprintf(f, "persistent-buffers\t");
	for (size_t k = 0; names && names[k]; k++) {
		char rel[300];

		snprintf(rel, sizeof(rel), "instances/%s/last_boot_info", names[k]);
		if (tracefs_file_exists(NULL, rel))
			fprintf(f, "%s%s", n++ ? "," : "", names[k]);
	}
	fprintf(f, "%s\t%s\n", n ? "" : "none",
		"boot-mapped instances (reserve_mem= and trace_instance=NAME@... on the kernel "
		"command line, Linux 6.12 and later)");
	tracefs_list_free(names);
}

/* Tracers: those an instance runs, and those only the top level has. */
static void write_tracers(FILE *f, struct instance *i)
{
	_cleanup_free_ char *inst = NULL, *top = NULL;
	int size = 0;

	instance_read(i, "available_tracers", &inst, NULL);
	top = tracefs_instance_file_read(NULL, "available_tracers", &size);
	for (const char *p = top ?: inst; p && *p; p += strspn(p, " \n")) {
		size_t n = strcspn(p, " \n");
		char name[64];
		bool here;

		if (n == 0 || n >= sizeof(name)) {
			p += n;
			continue;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		p += n;
		here = instance_word_in(inst, name);
		fprintf(f, "%s\t%s\t%s\n", name, here ? "instance" : "top-level",
			here ? "runs in a session's own instance" :
			"only in the top-level buffer, which ftraced does not take");
	}
}

/* Options of an instance, with their default and the ftraced option that sets them. */
static void write_options(FILE *f, struct instance *i)
{
	static const struct {
		const char *name, *by;
	} managed[] = {
		{ "overwrite", "--flight-backend kernel" }, { "stacktrace", "-T" },
		{ "event-fork", "-c" }, { "function-fork", "-c" },
		{ "func_stack_trace", "--func-stack" }, { "copy_trace_marker", "-e ftrace:print" },
		{ "trace_printk_dest", "-e ftrace:bprint" },
	};
	_cleanup_free_ char *dir = tracefs_instance_get_file(i->tfs, "options");
	struct dirent **list = NULL;
	int n = dir ? scandir(dir, &list, NULL, alphasort) : -1;

	for (int k = 0; k < n; k++) {
		_cleanup_free_ char *value = NULL;
		const char *by = NULL;
		char rel[300];

		if (list[k]->d_name[0] != '.') {
			snprintf(rel, sizeof(rel), "options/%s", list[k]->d_name);
			instance_read(i, rel, &value, NULL);
			for (size_t m = 0; m < ELEMENTSOF(managed); m++)
				if (strcmp(managed[m].name, list[k]->d_name) == 0)
					by = managed[m].by;
			fprintf(f, "%s\t%c\t%s%s\n", list[k]->d_name, value ? value[0] : '?',
				by ? "set by ftraced: use " : "-O ", by ?: list[k]->d_name);
		}
		free(list[k]);
	}
	free(list);
}

/* What ftraced uses of the kernel, each "yes", "no" or what it is. */
static void write_capabilities(FILE *f, struct instance *i)
{
	_cleanup_free_ char *tracers = NULL;
	struct utsname u;

	instance_read(i, "available_tracers", &tracers, NULL);
	if (uname(&u) == 0)
		fprintf(f, "kernel\t%s\t%s\n", u.release, u.version);
	fprintf(f, "snapshot-buffer\t%s\tflight recorder's kernel backend swaps its ring "
		"(CONFIG_TRACER_SNAPSHOT)\n", instance_has_snapshot(i) ? "yes" : "no");
	fprintf(f, "function-in-instance\t%s\t-p function\n",
		instance_word_in(tracers, "function") ? tracer_runs(i, "function") : "no");
	fprintf(f, "function-graph-in-instance\t%s\t-p function_graph\n",
		instance_word_in(tracers, "function_graph") ? tracer_runs(i, "function_graph") : "no");
	fprintf(f, "graph-roots-in-instance\t%s\t-g and --max-graph-depth (set_graph_function)\n",
		tracefs_file_exists(i->tfs, "set_graph_function") ? "yes" : "no");
	fprintf(f, "kprobes\t%s\t--probe 'p:NAME SYMBOL'\n",
		tracefs_file_exists(NULL, "kprobe_events") ? "yes" : "no");
	fprintf(f, "uprobes\t%s\t--probe 'p:NAME /PATH:SYMBOL'\n",
		tracefs_file_exists(NULL, "uprobe_events") ? "yes" : "no");
	fprintf(f, "copy-trace-marker\t%s\t-e ftrace:print also gets the top level's markers\n",
		tracefs_file_exists(i->tfs, "options/copy_trace_marker") ? "yes" : "no");
	fprintf(f, "trace-printk-to-instance\t%s\t-e ftrace:bprint\n",
		tracefs_file_exists(i->tfs, "options/trace_printk_dest") ? "yes" : "no");
	fprintf(f, "notrace-pid\t%s\tftraced's own threads left out (--no-filter keeps them)\n",
		tracefs_file_exists(i->tfs, "set_event_notrace_pid") ? "yes" : "no");
	fprintf(f, "largest-sub-buffer-kb\t%s\t--subbuf-kb (buffer_subbuf_size_kb)\n",
		tracefs_file_exists(i->tfs, "buffer_subbuf_size_kb") ? "512" : "page size only");
	persistent_instances(f);
}

/*
 * The instance's part (tracers, options, capabilities), found once in an
 * instance made for it and removed again.
 */
static int instance_part(uint32_t tag, enum ftraced_offer what, char **ret, size_t *ret_n)
{
	_cleanup_(instance_freep) struct instance *i = NULL;
	char *text = NULL;
	size_t n = 0;
	FILE *f;
	int r;

	r = instance_new(tag, OFFER_INSTANCE_ID, &i);
	if (r < 0)
		return r;
	f = open_memstream(&text, &n);
	if (!f)
		return -ENOMEM;
	if (what == FTRACED_OFFER_TRACERS)
		write_tracers(f, i);
	else if (what == FTRACED_OFFER_OPTIONS)
		write_options(f, i);
	else
		write_capabilities(f, i);
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	*ret = text;
	*ret_n = n;
	return 0;
}

static int print_event(const char *system, const char *event, void *userdata)
{
	return fprintf(userdata, "%s:%s\n", system, event) < 0 ? -ENOMEM : 0;
}

/* Every event, "system:event", one a line. */
static int events_text(char **ret, size_t *ret_n)
{
	_cleanup_(event_catalog_freep) struct event_catalog *cat = NULL;
	char *text = NULL;
	size_t n = 0;
	FILE *f;
	int r;

	r = event_catalog_new(NULL, &cat);
	if (r < 0)
		return r;
	f = open_memstream(&text, &n);
	if (!f)
		return -ENOMEM;
	r = event_catalog_walk(cat, print_event, f);
	if (fclose(f) != 0 || r < 0) {
		free(text);
		return -ENOMEM;
	}
	*ret = text;
	*ret_n = n;
	return 0;
}

/**
 * instance_offer_open() - what the kernel offers, as a file for the client to read.
 * @o: where answers about instances are kept between requests
 * @what: events, tracers, functions, options or capabilities
 * @ret_fd: a descriptor open for reading at its start
 *
 * Return: 0 or -errno.
 */
int instance_offer_open(struct instance_offer *o, enum ftraced_offer what, int *ret_fd)
{
	char *text = NULL;
	size_t n = 0;
	int fd, r;

	switch (what) {
	case FTRACED_OFFER_FUNCTIONS:
		fd = tracefs_instance_file_open(NULL, "available_filter_functions",
						O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return negative_errno();
		*ret_fd = fd;
		return 0;
	case FTRACED_OFFER_EVENTS:
		r = events_text(&text, &n);
		if (r < 0)
			return r;
		r = memfd_sealed("ftraced-events", text, n, ret_fd);
		free(text);
		return r;
	case FTRACED_OFFER_TRACERS:
	case FTRACED_OFFER_OPTIONS:
	case FTRACED_OFFER_CAPABILITIES:
		if (!o->text[what]) {
			r = instance_part(o->tag, what, &o->text[what], &o->n_text[what]);
			if (r < 0)
				return r;
		}
		return memfd_sealed("ftraced-offer", o->text[what], o->n_text[what], ret_fd);
	default:
		return -EINVAL;
	}
}

void instance_offer_done(struct instance_offer *o)
{
	for (size_t k = 0; k < ELEMENTSOF(o->text); k++)
		free(o->text[k]);
	*o = (struct instance_offer){ .tag = o->tag };
}

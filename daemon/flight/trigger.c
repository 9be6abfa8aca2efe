// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A flight recorder's trigger: a small tracefs instance of its own with
 * only the trigger event enabled, filtered in the kernel, so the main
 * capture path never parses anything. Its buffer_percent is 0, so the
 * kernel wakes us on every event; the main thread reads the few pages
 * with read() (partial sub-buffers included), counts the events and
 * applies the rate limits (min-interval, max) before telling the session.
 *
 * Main thread only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/kernel/event-list.h"
#include "daemon/kernel/instance.h"
#include "daemon/base/log.h"
#include "daemon/store/metadata.h"
#include "daemon/flight/trigger.h"
#include "lib/rb-page.h"
#include "lib/time-util.h"
#include "lib/wall-clock.h"

#define TRIGGER_RESULT_MAX 256u
/* A task's name as the kernel keeps it (TASK_COMM_LEN, with its NUL). */
#define TASK_COMM_MAX 16u

struct trigger {
	struct trigger_env env;
	char text[FTRACED_TRIGGER_MAX + 1];
	struct trigger_spec spec;
	struct instance *instance;
	uint32_t page_size;
	uint8_t *page;
	int *fds;
	sd_event_source **sources;

	uint64_t seen;       /* events the kernel passed through the filter */
	uint64_t fired;
	uint64_t suppressed; /* by min-interval or max */
	uint64_t last_fire_usec;
	char result[TRIGGER_RESULT_MAX];
	bool has_date;       /* the session's wall-clock anchor, for times people read */
	long long date_us;
	char last_wall[WALL_TEXT_MAX]; /* the last firing's event, UTC; "" */
	char cause[TRIGGER_CAUSE_MAX]; /* the last firing: event, task, time */
};

struct trigger *trigger_free(struct trigger *t)
{
	if (!t)
		return NULL;
	for (unsigned cpu = 0; t->sources && cpu < t->env.n_cpus; cpu++)
		sd_event_source_disable_unref(t->sources[cpu]);
	for (unsigned cpu = 0; t->fds && cpu < t->env.n_cpus; cpu++)
		safe_close(t->fds[cpu]);
	free(t->sources);
	free(t->fds);
	free(t->page);
	instance_free(t->instance);
	free(t);
	return NULL;
}

/* Sets up the trigger's instance: one event, its filter, a small buffer, wake on any data. */
static int setup_instance(struct trigger *t, char *error, size_t n_error)
{
	_cleanup_free_ char *kernel_error = NULL;
	char system[FTRACED_NAME_MAX + 1], event[FTRACED_EVENT_SPEC_MAX + 1];
	struct event_id e = { .system = system, .event = event };
	struct instance_meta meta = {};
	int r;

	r = event_spec_split(t->spec.event, system, sizeof(system), event, sizeof(event));
	if (r < 0) {
		snprintf(error, n_error, "trigger '%s': malformed event '%s'", t->text,
			 t->spec.event);
		return r;
	}
	r = instance_new(t->env.instance_tag, t->env.instance_id, &t->instance);
	if (r >= 0)
		r = instance_set_buffer(t->instance, TRIGGER_BUFFER_KB, 0);
	if (r >= 0 && t->env.clock)
		r = instance_set_clock(t->instance, t->env.clock);
	if (r >= 0)
		r = instance_set_buffer_percent(t->instance, 0);
	if (r < 0) {
		snprintf(error, n_error, "trigger '%s': cannot set up its instance: %s", t->text,
			 strerror(-r));
		return r;
	}
	r = instance_enable_event(t->instance, &e, t->spec.filter[0] ? t->spec.filter : NULL,
				  &kernel_error);
	if (r < 0) {
		const char *msg = kernel_error ? strchr(kernel_error, ']') : NULL;

		msg = msg ? msg + 1 + strspn(msg + 1, " ") : kernel_error;
		if (t->spec.filter[0] && r != -ENOENT)
			snprintf(error, n_error, "trigger '%s': filter rejected by the kernel: %s",
				 t->text, msg ? msg : strerror(-r));
		else
			snprintf(error, n_error, "trigger '%s': event %s is not available on this "
				 "kernel (%s)", t->text, t->spec.event, strerror(-r));
		return r;
	}
	r = metadata_read(&meta, t->instance);
	t->page_size = meta.subbuf_size;
	metadata_done(&meta);
	if (r < 0) {
		snprintf(error, n_error, "trigger '%s': cannot read its header_page: %s", t->text,
			 strerror(-r));
		return r;
	}
	return 0;
}

/**
 * trigger_new() - parse a --trigger specification and set up its instance.
 * @env: event loop, instance naming, clock, CPUs and the fire callback
 * @text: the specification
 * @ret: the trigger, not armed
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Return: 0, or -errno with @error set; nothing is left in the kernel.
 */
int trigger_new(const struct trigger_env *env, const char *text, struct trigger **ret,
		char *error, size_t n_error)
{
	_cleanup_(trigger_freep) struct trigger *t = NULL;
	int r;

	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	t->env = *env;
	t->env.date = NULL; /* borrowed: parsed now */
	t->has_date = wall_date_parse(env->date, &t->date_us);
	snprintf(t->text, sizeof(t->text), "%s", text);
	r = trigger_spec_parse(text, &t->spec, error, n_error);
	if (r < 0)
		return r;
	t->fds = calloc(env->n_cpus, sizeof(*t->fds));
	t->sources = calloc(env->n_cpus, sizeof(*t->sources));
	if (!t->fds || !t->sources) {
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	for (unsigned cpu = 0; cpu < env->n_cpus; cpu++)
		t->fds[cpu] = -EBADF;
	r = setup_instance(t, error, n_error);
	if (r < 0)
		return r;
	t->page = malloc(t->page_size);
	if (!t->page) {
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	for (unsigned cpu = 0; cpu < env->n_cpus; cpu++) {
		r = instance_open_cpu_raw(t->instance, cpu, &t->fds[cpu]);
		if (r < 0) {
			snprintf(error, n_error, "trigger '%s': cannot open CPU %u: %s", text, cpu,
				 strerror(-r));
			return r;
		}
	}
	*ret = TAKE_PTR(t);
	return 0;
}

/*
 * Says what fired: the event, the task it happened in (its common_pid, the
 * payload's bytes 4-7 in every event, and that task's name if it is still
 * there to ask) and when.
 */
static void describe_firing(struct trigger *t, const struct rb_event *e)
{
	char comm[TASK_COMM_MAX + 8] = "?", path[48], when[WALL_TEXT_MAX + 48];
	int32_t pid = e->size >= 8 ? (int32_t)get_le32(e->data + 4) : -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%" PRId32 "/comm", pid);
	if (pid > 0 && (f = fopen(path, "re"))) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	} else if (pid > 0) {
		(void)instance_task_comm(pid, comm, sizeof(comm)); /* it is gone: the kernel's name */
	}
	if (t->last_wall[0])
		snprintf(when, sizeof(when), "%s", t->last_wall);
	else
		snprintf(when, sizeof(when), "trace clock %" PRIu64 ".%06" PRIu64, e->ts / 1000000000,
			 e->ts / 1000 % 1000000);
	snprintf(t->cause, sizeof(t->cause), "trigger '%s' fired: %s in pid %" PRId32 " (%s) at %s",
		 t->text, t->spec.event, pid, comm, when);
}

/* One event passed the kernel's filter: fire unless a rate limit says no. */
static int on_trigger_event(const struct rb_event *e, void *userdata)
{
	struct trigger *t = userdata;
	uint64_t now = monotonic_usec();

	t->seen++;
	if ((t->spec.max && t->fired >= t->spec.max) ||
	    (t->fired > 0 && now - t->last_fire_usec < t->spec.min_interval_ms * 1000)) {
		t->suppressed++;
		return 0;
	}
	t->fired++;
	t->last_fire_usec = now;
	if (t->has_date) {
		wall_format(t->date_us, e->ts, t->last_wall, sizeof(t->last_wall));
		log_info("Trigger '%s' fired (event at %s, trace clock %" PRIu64 ".%06" PRIu64 ")",
			 t->text, t->last_wall, e->ts / 1000000000, e->ts / 1000 % 1000000);
	} else {
		log_info("Trigger '%s' fired (event at trace clock %" PRIu64 ".%06" PRIu64 ")",
			 t->text, e->ts / 1000000000, e->ts / 1000 % 1000000);
	}
	describe_firing(t, e);
	t->env.fire(t, e->ts, t->env.userdata);
	return 0;
}

static int on_readable(sd_event_source *source, int fd, uint32_t revents, void *userdata)
{
	struct trigger *t = userdata;

	for (;;) {
		ssize_t k = read(fd, t->page, t->page_size);
		int r;

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno != EAGAIN)
			log_warning_errno(negative_errno(), "Trigger '%s': read failed: %m", t->text);
		if (k <= 0)
			return 0;
		if ((size_t)k < t->page_size)
			memset(t->page + k, 0, t->page_size - (size_t)k);
		r = rb_page_foreach_event(t->page, t->page_size, on_trigger_event, t);
		if (r < 0)
			log_warning_errno(r, "Trigger '%s': malformed page, ignoring: %m", t->text);
	}
}

/**
 * trigger_arm() - start watching: tracing on in the trigger's instance.
 * @t: trigger
 *
 * Return: 0 or -errno.
 */
int trigger_arm(struct trigger *t)
{
	int r;

	for (unsigned cpu = 0; cpu < t->env.n_cpus; cpu++) {
		if (t->sources[cpu])
			continue;
		r = sd_event_add_io(t->env.event, &t->sources[cpu], t->fds[cpu], EPOLLIN,
				    on_readable, t);
		if (r < 0)
			return r;
	}
	return instance_set_tracing(t->instance, true);
}

/**
 * trigger_disarm() - stop watching; events still in the buffer are dropped.
 * @t: trigger
 */
void trigger_disarm(struct trigger *t)
{
	instance_set_tracing(t->instance, false);
	for (unsigned cpu = 0; cpu < t->env.n_cpus; cpu++)
		t->sources[cpu] = sd_event_source_disable_unref(t->sources[cpu]);
}

const struct trigger_spec *trigger_spec(const struct trigger *t)
{
	return &t->spec;
}

/* What the last firing was, for the snapshot it takes: "trigger '...' fired: ...". */
const char *trigger_cause(const struct trigger *t)
{
	return t->cause;
}

/**
 * trigger_set_result() - what the last firing produced, for status.
 * @t: trigger
 * @result: a file name, or why there is none
 */
void trigger_set_result(struct trigger *t, const char *result)
{
	snprintf(t->result, sizeof(t->result), "%s", result);
}

/* Adds this trigger's firings and suppressions to @fired and @suppressed. */
void trigger_add_counts(const struct trigger *t, uint64_t *fired, uint64_t *suppressed)
{
	*fired += t->fired;
	*suppressed += t->suppressed;
}

/**
 * trigger_describe() - one line for status: the trigger, its counts, its last result.
 * @t: trigger
 * @buf: receives the line
 * @n: its size
 *
 * The last firing's event time is in UTC where the session has a wall-clock anchor.
 */
void trigger_describe(const struct trigger *t, char *buf, size_t n)
{
	snprintf(buf, n, "%s: fired %" PRIu64 ", suppressed %" PRIu64 "%s%s%s%s", t->text,
		 t->fired, t->suppressed, t->last_wall[0] ? ", last at " : "", t->last_wall,
		 t->result[0] ? ", last: " : "", t->result);
}

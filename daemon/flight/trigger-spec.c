// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --trigger specifications:
 *
 *   event=SYSTEM:EVENT[,filter=EXPR][,pre=DURATION][,post=DURATION][,min-interval=DURATION]
 *         [,max=N]
 *   PRESET[,filter=EXPR][,pre=...][,post=...][,min-interval=...][,max=N]
 *
 * A filter is a kernel filter expression and may itself contain commas,
 * so within a filter a comma only ends it when a known "key=" follows. The
 * presets name the kernel events behind common incidents; a filter given
 * with a preset narrows the preset's own. Pure: no kernel access (whether
 * the event exists is checked when the trigger's instance is set up).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/base/bounds.h"
#include "daemon/flight/trigger-spec.h"
#include "ftraced/macro.h"
#include "lib/parse-util.h"

static const char *const keys[] = { "event", "filter", "pre", "post", "min-interval", "max",
				    "signal" };

static const struct {
	const char *name;
	const char *event;
	const char *filter;
} presets[] = {
	{ "oom", "oom:mark_victim", "" },
	/* WARN() and BUG()/oops reports reach the console as these lines. */
	{ "warn", "printk:console", "msg ~ \"*WARNING: CPU*\"" },
	{ "bug", "printk:console", "msg ~ \"*BUG: *\" || msg ~ \"*Oops*\"" },
	{ "error-report", "error_report:error_report_end", "" },
	{ "hung-task", "sched:sched_process_hang", "" },
};

static const struct {
	const char *name;
	int number;
} signals[] = {
	{ "SIGILL", 4 }, { "SIGTRAP", 5 }, { "SIGABRT", 6 }, { "SIGBUS", 7 }, { "SIGFPE", 8 },
	{ "SIGKILL", 9 }, { "SIGSEGV", 11 }, { "SIGSYS", 31 },
};

/*
 * Length of the item starting at @p: up to the next comma, except for a
 * filter, which goes on up to a comma that begins a known key.
 */
static size_t item_len(const char *p)
{
	if (strncmp(p, "filter=", strlen("filter=")) != 0)
		return strcspn(p, ",");
	for (const char *c = strchr(p, ','); c; c = strchr(c + 1, ',')) {
		for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
			size_t n = strlen(keys[k]);

			if (strncmp(c + 1, keys[k], n) == 0 && c[1 + n] == '=')
				return (size_t)(c - p);
		}
	}
	return strlen(p);
}

static int signal_number(const char *v)
{
	char *end;
	long n;

	for (size_t i = 0; i < ELEMENTSOF(signals); i++)
		if (strcmp(v, signals[i].name) == 0 || strcmp(v, signals[i].name + 3) == 0)
			return signals[i].number;
	n = strtol(v, &end, 10);
	if (end == v || *end || n < 1 || n > 64)
		return -EINVAL;
	return (int)n;
}

/* A trigger's first item, what fires it: a preset, signal=SIG or event=SYSTEM:EVENT. */
static int parse_what_fires(const char *item, const char *v, size_t klen, struct trigger_spec *t,
			    char *error, size_t n_error)
{
	if (!v) {
		size_t i;

		for (i = 0; i < ELEMENTSOF(presets); i++)
			if (strcmp(item, presets[i].name) == 0)
				break;
		if (i == ELEMENTSOF(presets)) {
			snprintf(error, n_error, "unknown trigger '%s' (presets: oom, warn, "
				 "bug, error-report, hung-task, signal=SIG; or "
				 "event=SYSTEM:EVENT)", item);
			return -EINVAL;
		}
		snprintf(t->event, sizeof(t->event), "%s", presets[i].event);
		snprintf(t->filter, sizeof(t->filter), "%s", presets[i].filter);
	} else if (strcmp(item, "signal") == 0) {
		int sig = signal_number(v);

		if (sig < 0) {
			snprintf(error, n_error, "trigger: signal=%.32s: only a process dying "
				 "of a fatal signal (ILL TRAP ABRT BUS FPE KILL SEGV SYS, or "
				 "1-64); for another, event=signal:signal_deliver,filter=sig==N",
				 v);
			return -EINVAL;
		}
		/* Delivered with the default action: the process dies of it. */
		snprintf(t->event, sizeof(t->event), "signal:signal_deliver");
		snprintf(t->filter, sizeof(t->filter), "sig == %d && sa_handler == 0", sig);
	} else if (strcmp(item, "event") == 0) {
		if (!*v || strlen(v) > FTRACED_EVENT_SPEC_MAX || !strchr(v, ':') ||
		    strchr(v, '*')) {
			snprintf(error, n_error, "trigger: event must be one SYSTEM:EVENT");
			return -EINVAL;
		}
		snprintf(t->event, sizeof(t->event), "%s", v);
	} else {
		snprintf(error, n_error, "trigger must begin with event=SYSTEM:EVENT or a "
			 "preset, not '%.*s'", (int)klen, item);
		return -EINVAL;
	}
	return 0;
}

/**
 * trigger_spec_parse() - parse one --trigger specification.
 * @text: the specification, NUL-terminated
 * @ret: the result
 * @error: receives a message on failure
 * @n_error: its size
 *
 * Return: 0 or -EINVAL.
 */
int trigger_spec_parse(const char *text, struct trigger_spec *ret, char *error, size_t n_error)
{
	struct trigger_spec t = { .min_interval_ms = TRIGGER_MIN_INTERVAL_MS_DEFAULT };
	bool interval_given = false;
	char user_filter[FTRACED_FILTER_MAX + 1] = "";
	const char *p = text;
	bool first = true;

	while (*p) {
		size_t n = item_len(p), klen;
		char item[FTRACED_TRIGGER_MAX + 1], *v;

		if (n > FTRACED_TRIGGER_MAX) {
			snprintf(error, n_error, "trigger is too long");
			return -EINVAL;
		}
		memcpy(item, p, n);
		item[n] = '\0';
		p += n + (p[n] == ',');
		v = strchr(item, '=');
		klen = v ? (size_t)(v - item) : n;
		if (v)
			*v++ = '\0';

		if (first) {
			int r = parse_what_fires(item, v, klen, &t, error, n_error);

			if (r < 0)
				return r;
		} else if (!v) {
			snprintf(error, n_error, "trigger: '%s' is not KEY=VALUE", item);
			return -EINVAL;
		} else if (strcmp(item, "filter") == 0) {
			if (!*v) {
				snprintf(error, n_error, "trigger: empty filter");
				return -EINVAL;
			}
			snprintf(user_filter, sizeof(user_filter), "%s", v);
		} else if (strcmp(item, "pre") == 0) {
			uint64_t ms;

			if (parse_duration_ms(v, &ms) < 0 || ms == 0 || ms > TRIGGER_PRE_MS_MAX) {
				snprintf(error, n_error, "trigger: bad pre '%s' (a duration of at most "
					 "%" PRIu64 " days)", v, TRIGGER_PRE_MS_MAX / 86400000);
				return -EINVAL;
			}
			t.pre_ms = ms;
		} else if (strcmp(item, "post") == 0 || strcmp(item, "min-interval") == 0) {
			uint64_t ms;
			bool post = item[0] == 'p';

			if (parse_duration_ms(v, &ms) < 0 ||
			    (post && ms > TRIGGER_POST_MS_MAX)) {
				snprintf(error, n_error, "trigger: bad %s '%s' (a duration%s)", item, v,
					 post ? " of at most 10 minutes" : "");
				return -EINVAL;
			}
			if (post) {
				t.post_ms = ms;
			} else {
				t.min_interval_ms = ms;
				interval_given = true;
			}
		} else if (strcmp(item, "max") == 0) {
			char *end;
			unsigned long long m = strtoull(v, &end, 10);

			if (end == v || *end || m == 0 || m > TRIGGER_MAX_MAX) {
				snprintf(error, n_error, "trigger: max must be between 1 and %u",
					 TRIGGER_MAX_MAX);
				return -EINVAL;
			}
			t.max = (uint32_t)m;
		} else {
			snprintf(error, n_error, "trigger: unknown key '%s'", item);
			return -EINVAL;
		}
		first = false;
	}
	if (first) {
		snprintf(error, n_error, "empty trigger");
		return -EINVAL;
	}
	/* One snapshot at a time per trigger: the next firing comes after this one's. */
	if (t.post_ms > t.min_interval_ms) {
		if (interval_given) {
			snprintf(error, n_error, "trigger: min-interval must be at least post");
			return -EINVAL;
		}
		t.min_interval_ms = t.post_ms;
	}
	if (user_filter[0] && t.filter[0]) {
		char both[2 * FTRACED_FILTER_MAX + 8];

		snprintf(both, sizeof(both), "(%s) && (%s)", t.filter, user_filter);
		if (strlen(both) > FTRACED_FILTER_MAX) {
			snprintf(error, n_error, "trigger: filter is too long");
			return -EINVAL;
		}
		memcpy(t.filter, both, strlen(both) + 1);
	} else if (user_filter[0]) {
		memcpy(t.filter, user_filter, sizeof(user_filter));
	}
	*ret = t;
	return 0;
}

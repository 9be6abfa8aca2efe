/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <syslog.h>

#include "ftraced/macro.h"
#include "ftraced/proto.h"

void log_set_max_level(int level);
void log_set_syslog_prefix(bool on);
void log_open(void);

/*
 * The session a thread is working for: its messages carry SESSION= and
 * INSTANCE= fields in the journal. Set for a scope with LOG_CONTEXT();
 * the names are copied, so the session may go within the scope.
 */
struct log_context {
	char session[FTRACED_NAME_MAX + 1];
	char instance[FTRACED_NAME_MAX + 1];
};

struct log_context log_context_swap(const char *session, const char *instance);
void log_context_restore(struct log_context *previous);
#define LOG_CONTEXT(session, instance)                                               \
	_cleanup_(log_context_restore) struct log_context _log_previous =            \
		log_context_swap((session), (instance))
int log_get_max_level(void);
int log_parse_level(const char *s);

int log_internal(int level, int error, const char *format, ...) _printf_(3, 4);
int log_internalv(int level, int error, const char *format, va_list ap) _printf_(3, 0);
/* Like log_internal, but at most a burst of messages per interval (client-triggered input). */
int log_ratelimited(int level, int error, const char *format, ...) _printf_(3, 4);

#define log_debug(...)   log_internal(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...)    log_internal(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...)  log_internal(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...)   log_internal(LOG_ERR, 0, __VA_ARGS__)

/* The _errno variants take a negative errno, make %m print it, and return it. */
#define log_debug_errno(r, ...)   log_internal(LOG_DEBUG, (r), __VA_ARGS__)
#define log_info_errno(r, ...)    log_internal(LOG_INFO, (r), __VA_ARGS__)
#define log_warning_errno(r, ...) log_internal(LOG_WARNING, (r), __VA_ARGS__)
#define log_error_errno(r, ...)   log_internal(LOG_ERR, (r), __VA_ARGS__)

#define log_ratelimit_debug_errno(r, ...) log_ratelimited(LOG_DEBUG, (r), __VA_ARGS__)
#define log_ratelimit_info(...) log_ratelimited(LOG_INFO, 0, __VA_ARGS__)
#define log_ratelimit_warning_errno(r, ...) log_ratelimited(LOG_WARNING, (r), __VA_ARGS__)

const char *log_escape(const char *in, char *buf, size_t n);

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Logging, one message at a time, to wherever stderr leads:
 *  - the journal (systemd's JOURNAL_STREAM names our stderr): sent with
 *    sd_journal_sendv(), with PRIORITY= and, inside a LOG_CONTEXT(), the
 *    SESSION= and INSTANCE= a message is about, for journalctl SESSION=bg;
 *  - a terminal: the text alone, "warning: " or "error: " before those;
 *  - anything else (a file, a pipe): one line prefixed with "<N>", the
 *    syslog priority, which journald and syslog daemons parse.
 * Any thread may log; a line is written with one write() so lines never
 * interleave.
 *
 * libtraceevent declares tep_vprint() weak and libtracefs routes its
 * warnings through it; defining it here pulls both libraries into our log.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include <event-parse.h>
#include <event-utils.h>

#include "daemon/base/log.h"
#include "ftraced/proto.h"

#define LOG_LINE_MAX 2048
#define RATELIMIT_INTERVAL_NS (5ull * 1000 * 1000 * 1000)
#define RATELIMIT_BURST 20

static int max_level = LOG_INFO;
static bool syslog_prefix = true;
static enum { TARGET_STREAM, TARGET_TERMINAL, TARGET_JOURNAL } target = TARGET_STREAM;
static __thread struct log_context context;

/**
 * log_open() - find where stderr leads: the journal, a terminal or a stream.
 *
 * Called once from main(), before any thread starts.
 */
void log_open(void)
{
	const char *stream = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (isatty(STDERR_FILENO))
		target = TARGET_TERMINAL;
	else if (stream && sscanf(stream, "%llu:%llu", &dev, &ino) == 2 &&
		 fstat(STDERR_FILENO, &st) == 0 && (unsigned long long)st.st_dev == dev &&
		 (unsigned long long)st.st_ino == ino)
		target = TARGET_JOURNAL;
}

/**
 * log_context_swap() - the session messages are about from now on, in this thread.
 * @session: its name, or NULL
 * @instance: its instance's, or NULL
 *
 * Return: the context it replaces, for log_context_restore().
 */
struct log_context log_context_swap(const char *session, const char *instance)
{
	struct log_context previous = context;

	snprintf(context.session, sizeof(context.session), "%s", session ?: "");
	snprintf(context.instance, sizeof(context.instance), "%s", instance ?: "");
	return previous;
}

void log_context_restore(struct log_context *previous)
{
	context = *previous;
}

/* One message to the journal, with the thread's context as fields. */
static void send_to_journal(int level, const char *message)
{
	char priority[16], session[FTRACED_NAME_MAX + 16], instance[FTRACED_NAME_MAX + 16];
	struct iovec iov[5];
	size_t n = 0;
	char *text;

	if (asprintf(&text, "MESSAGE=%s", message) < 0)
		return;
	snprintf(priority, sizeof(priority), "PRIORITY=%d", level);
	iov[n++] = (struct iovec){ text, strlen(text) };
	iov[n++] = (struct iovec){ priority, strlen(priority) };
	iov[n++] = (struct iovec){ (char *)"SYSLOG_IDENTIFIER=ftraced", 25 };
	if (context.session[0]) {
		snprintf(session, sizeof(session), "SESSION=%s", context.session);
		iov[n++] = (struct iovec){ session, strlen(session) };
	}
	if (context.instance[0]) {
		snprintf(instance, sizeof(instance), "INSTANCE=%s", context.instance);
		iov[n++] = (struct iovec){ instance, strlen(instance) };
	}
	(void)sd_journal_sendv(iov, (int)n);
	free(text);
}

/* The "<N>" prefix is for journald; tools run by hand (ftracectl) turn it off. */
void log_set_syslog_prefix(bool on)
{
	syslog_prefix = on;
}

void log_set_max_level(int level)
{
	max_level = level;
}

int log_get_max_level(void)
{
	return max_level;
}

/**
 * log_parse_level() - map "debug", "info", ... to a syslog level.
 * @s: level name
 *
 * Return: the level, or -EINVAL for an unknown name.
 */
int log_parse_level(const char *s)
{
	static const char *const names[] = {
		[LOG_ERR] = "err", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
		[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
	};

	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (names[i] && strcmp(s, names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

/**
 * log_internalv() - format and write one log line.
 * @level: syslog priority
 * @error: negative errno for %m, or 0
 * @format: printf format
 * @ap: arguments
 *
 * Return: @error, so callers can `return log_error_errno(r, ...)`.
 */
int log_internalv(int level, int error, const char *format, va_list ap)
{
	char line[LOG_LINE_MAX];
	int saved = errno;
	int n;

	if (level > max_level)
		return error;

	if (error != 0)
		errno = -error;
	if (target == TARGET_JOURNAL) {
		vsnprintf(line, sizeof(line), format, ap);
		send_to_journal(level, line);
		errno = saved;
		return error;
	}
	if (target == TARGET_TERMINAL)
		n = snprintf(line, sizeof(line), "%s", level <= LOG_ERR ? "error: " :
			     level == LOG_WARNING ? "warning: " : "");
	else
		n = syslog_prefix ? snprintf(line, sizeof(line), "<%d>", level) : 0;
	n += vsnprintf(line + n, sizeof(line) - (size_t)n, format, ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, (size_t)n);
	errno = saved;
	return error;
}

int log_internal(int level, int error, const char *format, ...)
{
	va_list ap;
	int r;

	va_start(ap, format);
	r = log_internalv(level, error, format, ap);
	va_end(ap);
	return r;
}

/**
 * log_ratelimited() - log, unless more than a burst came in the interval.
 * @level: syslog priority
 * @error: negative errno for %m, or 0
 * @format: printf format
 *
 * A client can trigger these messages at will, so it must not be able to
 * flood the journal through us. Suppressed lines are counted and the count
 * is reported with the next line that gets through.
 *
 * Return: @error.
 */
int log_ratelimited(int level, int error, const char *format, ...)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static unsigned long long window_start;
	static unsigned n_in_window, n_suppressed;
	struct timespec ts;
	unsigned long long now;
	unsigned suppressed = 0;
	bool emit;
	va_list ap;

	if (level > max_level)
		return error;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
	pthread_mutex_lock(&lock);
	if (now - window_start > RATELIMIT_INTERVAL_NS) {
		window_start = now;
		n_in_window = 0;
	}
	emit = n_in_window++ < RATELIMIT_BURST;
	if (emit) {
		suppressed = n_suppressed;
		n_suppressed = 0;
	} else {
		n_suppressed++;
	}
	pthread_mutex_unlock(&lock);

	if (!emit)
		return error;
	if (suppressed > 0)
		log_internal(level, 0, "(%u similar messages suppressed)", suppressed);
	va_start(ap, format);
	log_internalv(level, error, format, ap);
	va_end(ap);
	return error;
}

/* Overrides the weak symbol in libtraceevent; libtracefs logs through it too. */
int tep_vprint(const char *name, enum tep_loglevel level, bool print_err,
	       const char *fmt, va_list ap)
{
	static const int map[] = {
		[TEP_LOG_NONE] = LOG_DEBUG, [TEP_LOG_CRITICAL] = LOG_ERR,
		[TEP_LOG_ERROR] = LOG_WARNING, [TEP_LOG_WARNING] = LOG_NOTICE,
		[TEP_LOG_INFO] = LOG_DEBUG, [TEP_LOG_DEBUG] = LOG_DEBUG,
		[TEP_LOG_ALL] = LOG_DEBUG,
	};
	char msg[LOG_LINE_MAX];
	int l = (unsigned)level < ELEMENTSOF(map) ? map[level] : LOG_DEBUG;

	/* The libraries' own format strings: the declaration in event-utils.h has no attribute. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	vsnprintf(msg, sizeof(msg), fmt, ap);
#pragma GCC diagnostic pop
	msg[strcspn(msg, "\n")] = '\0';
	log_ratelimited(l, 0, "%s: %s", name ?: "libtraceevent", msg);
	return 0;
}

/**
 * log_escape() - a name taken from a file or directory, safe to log.
 * @in: the name
 * @buf: receives it with every control or non-ASCII byte as \xNN
 * @n: its size (4 * strlen(@in) + 1 always suffices; longer names are cut)
 *
 * A name planted in the state directory must not forge log lines.
 *
 * Return: @buf.
 */
const char *log_escape(const char *in, char *buf, size_t n)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)in; *p && o + 5 < n; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			buf[o++] = (char)*p;
		else
			o += (size_t)snprintf(buf + o, n - o, "\\x%02x", *p);
	}
	if (n > 0)
		buf[o < n ? o : n - 1] = '\0';
	return buf;
}

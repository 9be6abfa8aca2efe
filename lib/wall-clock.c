// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Trace times on the wall clock. A file's DATE option is the offset, in
 * microseconds, to add to its trace-clock times ("0x..." or "-0x...", as
 * trace-cmd reads it with strtoll(..., 0)); ftracectl info and the
 * daemon's trigger log both say event times in UTC with it. And the times
 * people type for a window (wall_time_parse()). Pure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/parse-util.h"
#include "lib/wall-clock.h"

#define USEC_PER_SEC  1000000LL
#define SEC_PER_DAY   86400LL

/**
 * wall_date_parse() - a DATE option's offset.
 * @text: the option's text, or NULL
 * @ret_us: receives the offset in microseconds
 *
 * Return: false if there is none (no option, empty or not a number).
 */
bool wall_date_parse(const char *text, long long *ret_us)
{
	char *end;

	if (!text)
		return false;
	errno = 0;
	*ret_us = strtoll(text, &end, 0);
	return !errno && end != text && (*end == '\0' || *end == '\n');
}

/**
 * wall_format() - trace time @ts (ns) in UTC, "2026-11-25T13:02:00.123456789Z".
 * @date_us: the file's anchor (wall_date_parse())
 * @ts: a trace-clock time in ns
 * @buf: receives the text (WALL_TEXT_MAX is enough)
 * @n: its size
 */
void wall_format(long long date_us, uint64_t ts, char *buf, size_t n)
{
	long long ns = date_us % 1000000 * 1000 + (long long)(ts % 1000000000);
	time_t sec = (time_t)(date_us / 1000000 + (long long)(ts / 1000000000) + ns / 1000000000);
	struct tm tm;
	size_t k = 0;

	if (gmtime_r(&sec, &tm))
		k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + k, n - k, ".%09lldZ", ns % 1000000000);
}

/* "SS" or "SS.fraction" (up to microseconds): Return: false if it is not. */
static bool parse_seconds(const char *text, int *sec, long long *us)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || end - text != 2 || v < 0 || v > 60)
		return false;
	*sec = (int)v;
	*us = 0;
	if (*end == '.') {
		long long scale = USEC_PER_SEC / 10;

		for (end++; *end >= '0' && *end <= '9'; end++, scale /= 10)
			*us += (*end - '0') * scale;
	}
	return *end == '\0' || (*end == 'Z' && end[1] == '\0');
}

/*
 * "HH:MM[:SS[.frac]]" into @tm's time of day, and
 * "YYYY-MM-DD[T ]HH:MM[:SS[.frac]][Z]" whole. Return: false if it is neither.
 */
static bool parse_clock_time(const char *text, struct tm *tm, bool *has_date, long long *us)
{
	int n = 0;

	*has_date = false;
	*us = 0;
	tm->tm_sec = 0;
	if (sscanf(text, "%4d-%2d-%2d%*1[T ]%n", &tm->tm_year, &tm->tm_mon, &tm->tm_mday, &n) == 3 &&
	    n > 0) {
		tm->tm_year -= 1900;
		tm->tm_mon -= 1;
		*has_date = true;
		text += n;
	}
	n = 0;
	if (sscanf(text, "%2d:%2d%n", &tm->tm_hour, &tm->tm_min, &n) != 2 || n != 5 ||
	    tm->tm_hour > 23 || tm->tm_min > 59)
		return false;
	text += n;
	if (*text == ':')
		return parse_seconds(text + 1, &tm->tm_sec, us);
	return *text == '\0' || strcmp(text, "Z") == 0;
}

/**
 * wall_time_parse() - a time as people type it, in UTC.
 * @text: "-30s" or "-10m" (before @now_us; any duration ftracectl takes),
 *        "13:02" or "13:02:30.5" (the last such time of day, UTC, not after @now_us),
 *        "2026-11-25T13:02:00Z" (a space may stand for the T; Z is optional)
 * @now_us: the wall clock now, in microseconds since the epoch
 * @ret_us: receives the time, in microseconds since the epoch
 *
 * Return: 0, or -EINVAL if @text is none of these.
 */
int wall_time_parse(const char *text, long long now_us, long long *ret_us)
{
	long long day_us = SEC_PER_DAY * USEC_PER_SEC, us;
	struct tm tm = {};
	uint64_t ms;
	bool has_date;
	time_t t;

	if (text[0] == '-') {
		if (parse_duration_ms(text + 1, &ms) < 0 || ms > (uint64_t)now_us / 1000)
			return -EINVAL;
		*ret_us = now_us - (long long)ms * 1000;
		return 0;
	}
	if (!parse_clock_time(text, &tm, &has_date, &us))
		return -EINVAL;
	if (has_date) {
		t = timegm(&tm);
		if (t == (time_t)-1 || tm.tm_year < 70)
			return -EINVAL;
		*ret_us = (long long)t * USEC_PER_SEC + us;
		return 0;
	}
	/* A time of day: today's, or yesterday's if today's is still to come. */
	*ret_us = now_us - now_us % day_us +
		((long long)tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec) * USEC_PER_SEC + us;
	if (*ret_us > now_us)
		*ret_us -= day_us;
	return 0;
}

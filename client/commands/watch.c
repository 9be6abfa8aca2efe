// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl status --watch [SESSION]: a live view, refreshed every second,
 * for watching a long capture the way one watches top.
 *
 * On a terminal it takes the whole screen (the alternate one, restored on
 * exit) and draws pictures that fit its width, 40 columns or more (the
 * sparklines and bars shrink; a line that would not fit is cut, never
 * wrapped): per CPU, the event rate of the
 * last minute as a sparkline and the ring's fill as a bar; losses, bright
 * when not zero; bytes captured and stored and their ratio; a continuous
 * session's disk budget as a bar; a flight recorder's history span and
 * memory; trigger firings. 'q' or Ctrl-C quits. When the output is not a
 * terminal, each refresh is one line per session, for logs and pipes.
 *
 * Everything comes from STATUS replies: rates are differences between two
 * of them, a second apart.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "client/commands/commands.h"
#include "client/ctl.h"

#define HISTORY 60        /* seconds of rates the sparklines show */
#define WATCH_CPUS_MAX 64 /* CPUs shown per session; more are summed up in one line */
#define SESSION_WATCH_MAX 16 /* the daemon's own limit on sessions */
#define SPARK_WIDTH_MAX 30
#define BAR_WIDTH_MAX 20
#define WIDTH_MIN 40      /* narrower terminals get lines cut at 40 columns */
#define LINE_MAX 1024

/* The screen's width, and what the pictures take of it. */
static struct {
	unsigned width;
	unsigned spark;
	unsigned bar;
} layout = { 80, SPARK_WIDTH_MAX, BAR_WIDTH_MAX };

/*
 * Fits the pictures to the terminal: a CPU line is "  CPU%-3u " (9), the
 * sparkline, " %8s ring " (15) and the bar with its brackets.
 */
static void fit_to_terminal(bool tty)
{
	struct winsize ws;
	unsigned w = 80;

	if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		w = ws.ws_col;
	w = w < WIDTH_MIN ? WIDTH_MIN : w;
	layout.width = w;
	layout.bar = w >= 80 ? BAR_WIDTH_MAX : w >= 60 ? 12 : 6;
	layout.spark = w - 9 - 15 - (layout.bar + 2) - 1;
	if (layout.spark > SPARK_WIDTH_MAX)
		layout.spark = SPARK_WIDTH_MAX;
}

/* The line being drawn, cut at the screen's width when printed. */
static char line[LINE_MAX];
static size_t line_n;

_printf_(1, 2)
static void put(const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(line + line_n, sizeof(line) - line_n, fmt, ap);
	va_end(ap);
	if (k > 0)
		line_n = MIN(line_n + (size_t)k, sizeof(line) - 1);
}

/*
 * Prints the line, at most the screen's width in columns: escape sequences
 * take none, a UTF-8 character (the sparkline's blocks) one. A line cut
 * inside a colour gets it reset.
 */
static void end_line(void)
{
	unsigned cols = 0;
	size_t i = 0;
	bool cut = false;

	while (i < line_n) {
		size_t n = 1;

		if (line[i] == '\033') {
			while (i + n < line_n && !((line[i + n] >= 'A' && line[i + n] <= 'Z') ||
						   (line[i + n] >= 'a' && line[i + n] <= 'z')))
				n++;
			n++;
		} else {
			if (cols == layout.width) {
				cut = true;
				break;
			}
			while (i + n < line_n && (line[i + n] & 0xc0) == 0x80)
				n++;
			cols++;
		}
		fwrite(line + i, 1, MIN(n, line_n - i), stdout);
		i += n;
	}
	fputs(cut ? "\033[0m\n" : "\n", stdout);
	line_n = 0;
}

/* What the view remembers of one session between refreshes. */
struct watched {
	char name[FTRACED_NAME_MAX + 1];
	unsigned n_cpus;
	uint64_t last_events[WATCH_CPUS_MAX];
	double rates[WATCH_CPUS_MAX][HISTORY]; /* events/s, newest last */
	unsigned n_rates;
	bool seen;
};

static volatile sig_atomic_t quit;
static bool on_screen; /* the alternate screen is up */

/* Back to the normal screen and cursor (before any message, or it is lost with the screen). */
static void leave_screen(void)
{
	if (on_screen)
		printf("\033[?25h\033[?1049l");
	fflush(stdout);
	on_screen = false;
}

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

/* Events the kernel took on a CPU so far: read by us, waiting, or overwritten. */
static uint64_t cpu_events(const struct ftraced_cpu_stats *c)
{
	return c->read + c->entries + c->overrun;
}

static struct watched *find_watched(struct watched *w, size_t *n, size_t max, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(w[i].name, name) == 0)
			return &w[i];
	if (*n >= max)
		return NULL;
	w[*n] = (struct watched){};
	snprintf(w[*n].name, sizeof(w[*n].name), "%s", name);
	return &w[(*n)++];
}

/* Takes this refresh's counters into the session's rate history. */
static void update(struct watched *w, const struct session_info *s, double seconds)
{
	unsigned n = s->n_cpus < WATCH_CPUS_MAX ? s->n_cpus : WATCH_CPUS_MAX;
	bool shift = w->seen && seconds > 0;

	if (shift && w->n_rates == HISTORY)
		for (unsigned c = 0; c < n; c++)
			memmove(w->rates[c], w->rates[c] + 1, (HISTORY - 1) * sizeof(double));
	for (unsigned c = 0; c < n; c++) {
		uint64_t now = cpu_events(&s->cpus[c]);

		if (shift) {
			/* Counters go back when a capture restarts: no rate for that second. */
			double rate = now >= w->last_events[c] ?
				(double)(now - w->last_events[c]) / seconds : 0;

			w->rates[c][w->n_rates < HISTORY ? w->n_rates : HISTORY - 1] = rate;
		}
		w->last_events[c] = now;
	}
	if (shift && w->n_rates < HISTORY)
		w->n_rates++;
	w->n_cpus = n;
	w->seen = true;
}

static void rate_text(char *buf, size_t n, double rate)
{
	if (rate >= 1e6)
		snprintf(buf, n, "%.1fM/s", rate / 1e6);
	else if (rate >= 1e3)
		snprintf(buf, n, "%.1fk/s", rate / 1e3);
	else
		snprintf(buf, n, "%.0f/s", rate);
}

/* The last layout.spark rates as block characters scaled to their maximum. */
static void sparkline(const double *rates, unsigned n)
{
	static const char *const blocks[] = { " ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	unsigned from = n > layout.spark ? n - layout.spark : 0;
	double max = 0;

	for (unsigned i = from; i < n; i++)
		if (rates[i] > max)
			max = rates[i];
	for (unsigned i = n - from; i < layout.spark; i++)
		put(" ");
	for (unsigned i = from; i < n; i++) {
		unsigned level = max > 0 ? (unsigned)(rates[i] / max * 8 + 0.5) : 0;

		put("%s", blocks[level > 8 ? 8 : level]);
	}
}

/* [#####.....] with @fraction filled (0..1). */
static void bar(double fraction)
{
	unsigned fill = fraction <= 0 ? 0 : fraction >= 1 ? layout.bar :
		(unsigned)(fraction * layout.bar + 0.5);

	put("[");
	for (unsigned i = 0; i < layout.bar; i++)
		put(i < fill ? "#" : ".");
	put("]");
}

/*
 * How full a CPU's ring is: the events waiting in it, at the session's
 * average raw bytes per event, against its size.
 */
static double ring_fill(const struct session_info *s, const struct ftraced_cpu_stats *c)
{
	double per_event = c->read > 0 ? (double)c->bytes_raw / (double)c->read : 64;

	if (s->buffer_kb == 0)
		return 0;
	return (double)c->entries * per_event / ((double)s->buffer_kb * 1024);
}

static void draw_session(const struct session_info *s, const struct watched *w, bool tty)
{
	uint64_t lost = session_lost(s), raw = session_bytes_raw(s), stored = session_bytes_stored(s);
	char a[32], b[32], rate[16];
	double total = 0;

	for (unsigned c = 0; c < w->n_cpus; c++)
		total += w->n_rates ? w->rates[c][w->n_rates - 1] : 0;
	rate_text(rate, sizeof(rate), total);
	print_size(a, sizeof(a), raw);
	print_size(b, sizeof(b), stored);
	if (!tty) {
		printf(" | %s %s %s captured %s stored %s (%.1fx) lost %llu", s->name, s->state, rate,
		       a, b, stored ? (double)raw / (double)stored : 0.0, (unsigned long long)lost);
		return;
	}
	put("\033[1m%-16s\033[0m %-10s %-8s %6.0f s  %s", s->name,
	    s->mode == FTRACED_MODE_FLIGHT ? "flight" :
	    s->mode == FTRACED_MODE_CONTINUOUS ? "continuous" : "record", s->state,
	    (double)s->elapsed_ms / 1000, rate);
	end_line();
	put("  captured %s  stored %s  (%.1fx)  lost: %s%llu%s", a, b,
	    stored ? (double)raw / (double)stored : 0.0, lost ? "\033[1;31m" : "",
	    (unsigned long long)lost, lost ? " events\033[0m" : "");
	end_line();
	for (unsigned c = 0; c < w->n_cpus; c++) {
		rate_text(rate, sizeof(rate), w->n_rates ? w->rates[c][w->n_rates - 1] : 0);
		put("  CPU%-3u ", s->cpus[c].cpu);
		sparkline(w->rates[c], w->n_rates);
		put(" %8s ring ", rate);
		bar(ring_fill(s, &s->cpus[c]));
		end_line();
	}
	if (s->mode == FTRACED_MODE_CONTINUOUS) {
		print_size(a, sizeof(a), s->disk_bytes);
		print_size(b, sizeof(b), s->max_total);
		put("  disk   ");
		bar(s->max_total ? (double)s->disk_bytes / (double)s->max_total : 0);
		put(" %s of %s, %u files", a, s->max_total ? b : "no limit", s->segments_kept);
		if (s->keep_free_percent) {
			put(", keep %u%% free", s->keep_free_percent);
		} else if (s->keep_free) {
			print_size(a, sizeof(a), s->keep_free);
			put(", keep %s free", a);
		}
		end_line();
	}
	if (s->mode == FTRACED_MODE_FLIGHT) {
		if (s->flight_backend != FTRACED_FLIGHT_MEMORY) {
			put("  history in the kernel's %sring; %u snapshots",
			    s->flight_backend == FTRACED_FLIGHT_PERSISTENT ? "boot-mapped " : "",
			    s->snapshots);
		} else {
			print_size(a, sizeof(a), s->history_bytes);
			print_size(b, sizeof(b), s->flight_size);
			put("  memory ");
			bar(s->flight_size ? (double)s->history_bytes / (double)s->flight_size : 0);
			put(" %s of %s, history %.1f s, %u snapshots", a, b,
			    (double)s->history_ms / 1000, s->snapshots);
		}
		end_line();
		for (unsigned k = 0; k < s->n_triggers; k++) {
			put("  trigger %s", s->triggers[k]);
			end_line();
		}
	}
	if (s->warning[0]) {
		put("  \033[1;33mwarning: %s\033[0m", s->warning);
		end_line();
	}
}

static int refresh(const struct client_options *o, const char *session, struct watched *w,
		   size_t *n_w, double seconds, bool tty)
{
	static struct ctl_builder b;
	struct reply rep;
	char stamp[16];
	time_t now = time(NULL);
	int r;

	ctl_builder_init(&b, FTRACED_MSG_STATUS);
	if (session)
		ctl_put_string(&b, FTRACED_ATTR_SESSION, session);
	if (quit)
		return EXIT_OK;
	r = ctl_call(o, &b, &rep);
	if (r < 0 && quit)
		return EXIT_OK; /* Ctrl-C during the call */
	if (r < 0) {
		leave_screen();
		return exit_code_for_call(r);
	}
	if (rep.type == FTRACED_MSG_ERROR) {
		leave_screen();
		print_error("status", "%s", rep.message[0] ? rep.message : strerror(-rep.error));
		return exit_code_for_reply(&rep);
	}
	strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime(&now));
	if (tty) {
		fit_to_terminal(tty);
		printf("\033[H\033[2J");
		put("\033[1mftraced\033[0m  %zu session(s)  %s%*s", rep.sessions.n, stamp,
		    (int)layout.width - 31, "q: quit");
		end_line();
		end_line();
	} else
		printf("%s %zu session(s)", stamp, rep.sessions.n);
	/* Sessions that went (records get a new name each time) make room for new ones. */
	for (size_t i = 0; i < *n_w;) {
		bool found = false;

		for (size_t k = 0; k < rep.sessions.n && !found; k++)
			found = strcmp(rep.sessions.items[k].name, w[i].name) == 0;
		if (found) {
			i++;
			continue;
		}
		memmove(&w[i], &w[i + 1], (*n_w - i - 1) * sizeof(*w));
		(*n_w)--;
	}
	for (size_t i = 0; i < rep.sessions.n; i++) {
		const struct session_info *s = &rep.sessions.items[i];
		struct watched *ws = find_watched(w, n_w, SESSION_WATCH_MAX, s->name);

		if (!ws)
			continue;
		update(ws, s, seconds);
		draw_session(s, ws, tty);
		if (tty)
			printf("\n");
	}
	if (!tty)
		printf("\n");
	fflush(stdout);
	ctl_reply_done(&rep);
	return EXIT_OK;
}

/**
 * watch_status() - refresh the sessions' status every second until told to quit.
 * @o: client options (socket)
 * @session: one session, or NULL for all
 *
 * Return: an exit code.
 */
int watch_status(const struct client_options *o, const char *session)
{
	static struct watched w[SESSION_WATCH_MAX];
	struct sigaction sa = { .sa_handler = on_signal };
	bool tty = isatty(STDOUT_FILENO), keys = tty && isatty(STDIN_FILENO);
	struct termios saved, raw;
	struct timespec last = {}, now;
	size_t n_w = 0;
	int r = EXIT_OK;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (keys && tcgetattr(STDIN_FILENO, &saved) == 0) {
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	} else {
		keys = false;
	}
	if (tty) {
		printf("\033[?1049h\033[?25l"); /* the alternate screen, no cursor */
		on_screen = true;
	}
	while (!quit) {
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		double seconds;
		char c;

		clock_gettime(CLOCK_MONOTONIC, &now);
		seconds = last.tv_sec ? (double)(now.tv_sec - last.tv_sec) +
			(double)(now.tv_nsec - last.tv_nsec) / 1e9 : 0;
		last = now;
		r = refresh(o, session, w, &n_w, seconds, tty);
		if (r != EXIT_OK)
			break;
		if (poll(&p, keys ? 1 : 0, 1000) > 0 && read(STDIN_FILENO, &c, 1) == 1 &&
		    (c == 'q' || c == 'Q'))
			break;
	}
	leave_screen();
	if (keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return r;
}

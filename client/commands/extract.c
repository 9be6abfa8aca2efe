// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl extract SESSION|FILE... [--since TIME] [--until TIME] -o OUT:
 * one complete v7 file holding exactly the events of a time window, from
 * every file that overlaps it, read with the user's own rights. A session's
 * files are found through the daemon when one answers (rotate.c's
 * live_session_dir(): its directory, and a running continuous session
 * rotated first so that its open segment's events are in), else offline in
 * the state directory.
 *
 * A session's files are its segments (the .dat files of
 * STATE_DIR/sessions/NAME, in the order their UTC names give), or, for a flight recorder, its
 * snapshots. TIME is UTC (-10m, 13:02, 2026-11-25T13:02:00Z), placed on
 * each file's trace clock by the file's own wall-clock anchor, or plain
 * trace-clock seconds (1214.442394). Each CPU's pages are taken in file
 * order and cut at the event (lib/rb-page.c): nothing before --since or
 * after --until, everything between. Files that overlap (snapshots of one
 * history) give each event once: a CPU's page is cut after the newest
 * event already taken. A file of another boot (its anchor an hour away)
 * has its times moved onto the first file's anchor. The gaps the daemon
 * noted in a file (a restart) are printed and go into the output's CPU
 * statistics; pages flagged as having lost events keep their flags.
 *
 * The metadata (formats, symbols, comms) is the first contributing file's,
 * written again unchanged (lib/v7-meta.c). A compressed chunk whose events
 * all lie inside the window (and after what its CPU has) is copied as it
 * is; the pages around the window's edges are cut and compressed anew. The
 * window's compressed data is held in memory until written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "client/commands/commands.h"
#include "client/commands/extract.h"
#include "client/ctl.h"
#include "client/output.h"
#include "config.h"
#include "ftraced/macro.h"
#include "lib/chunk-record.h"
#include "lib/compress.h"
#include "lib/rb-page.h"
#include "lib/time-util.h"
#include "lib/v7-cursor.h"
#include "lib/v7-meta.h"
#include "lib/v7-reader.h"
#include "lib/wall-clock.h"

#define EXTRACT_STATE_DIR_DEFAULT "/var/lib/ftraced"
/* A session's files: a year of segments rotated every 30 s is about a million. */
#define EXTRACT_FILES_MAX (4u << 20)
/* Files whose anchors differ by more than this are of different boots or clocks. */
#define EXTRACT_ANCHOR_SLACK_US 1000000ll

static struct cpu_out *cpu_out(struct extract *x, uint32_t cpu)
{
	if (cpu >= x->n_cpus) {
		struct cpu_out *grown = reallocarray(x->cpus, (size_t)cpu + 1, sizeof(*grown));

		if (!grown)
			return NULL;
		for (size_t k = x->n_cpus; k <= cpu; k++)
			grown[k] = (struct cpu_out){ .cpu = (uint32_t)k };
		x->cpus = grown;
		x->n_cpus = (size_t)cpu + 1;
	}
	if (!x->cpus[cpu].raw)
		x->cpus[cpu].raw = malloc(EXTRACT_CHUNK_RAW);
	return x->cpus[cpu].raw ? &x->cpus[cpu] : NULL;
}

static char *dup_option(const struct v7_reader *r, enum v7_reader_option which)
{
	const char *v = v7_reader_option(r, which);

	return v ? strdup(v) : NULL;
}

/* The first file's metadata, clock and anchor become the output's. */
static int adopt_first(struct extract *x, struct v7_reader *r, const char *path)
{
	int k;

	k = v7_meta_read(r, &x->meta, x->error, sizeof(x->error));
	if (k < 0) {
		x->error_file = path;
		return k;
	}
	x->have_meta = true;
	x->page_size = v7_reader_page_size(r);
	x->page = malloc(MAX(x->page_size, 1u));
	x->trace_clock = dup_option(r, V7_READER_TRACE_CLOCK);
	x->clock = strdup(v7_reader_clock(r) ?: "local");
	x->uname_text = dup_option(r, V7_READER_UNAME);
	x->date_text = dup_option(r, V7_READER_DATE);
	x->has_date = x->date_text && wall_date_parse(x->date_text, &x->date_us);
	return x->page && x->clock ? 0 : -ENOMEM;
}

/*
 * The output carries the first file's formats and clock: every other file
 * must have the same (one session's files do; another session's may
 * number other events, or count time on another clock).
 */
static int same_session(struct extract *x, struct v7_reader *r)
{
	static const int ids[] = { V7_SEC_FTRACE_EVENTS, V7_SEC_EVENT_FORMATS };
	const char *clock = v7_reader_clock(r) ?: "local";

	if (strcmp(clock, x->clock) != 0) {
		snprintf(x->error, sizeof(x->error), "it was recorded with clock %s, the first file "
			 "with %s: not one session's files", clock, x->clock);
		return -EINVAL;
	}
	for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
		size_t k = (size_t)(ids[i] - V7_SEC_FIRST_META), n = 0;
		_cleanup_free_ uint8_t *body = NULL;
		int r2 = v7_reader_section(r, (uint16_t)ids[i], &body, &n);

		if (r2 < 0 && r2 != -ENOENT) {
			snprintf(x->error, sizeof(x->error), "cannot read its event formats: %s",
				 strerror(-r2));
			return r2;
		}
		if (n != x->meta.n_body[k] || (n > 0 && memcmp(body, x->meta.body[k], n) != 0)) {
			snprintf(x->error, sizeof(x->error), "its event formats differ from the first "
				 "file's: not one session's files (another session, or another "
				 "kernel)");
			return -EINVAL;
		}
	}
	return 0;
}

/* The window on @r's trace clock; -ERANGE: the file cannot hold any of it. */
static int file_window(struct extract *x, struct v7_reader *r, const char *path,
		       struct file_window *w)
{
	long long date_us = 0;
	bool has_date = wall_date_parse(v7_reader_option(r, V7_READER_DATE), &date_us);

	*w = (struct file_window){ .x = x, .since_ts = x->since_ns, .until_ts = x->until_ns };
	if (x->wall) {
		if (!has_date) {
			x->error_file = path;
			snprintf(x->error, sizeof(x->error), "it has no wall-clock anchor (clock %s): "
				 "give the window in trace-clock seconds", v7_reader_clock(r) ?: "?");
			return -EINVAL;
		}
		if (x->until_us < date_us)
			return -ERANGE;
		w->since_ts = x->since_us > date_us ? (uint64_t)(x->since_us - date_us) * 1000 : 0;
		w->until_ts = x->until_us == LLONG_MAX ? UINT64_MAX :
			      (uint64_t)(x->until_us - date_us) * 1000;
	}
	/*
	 * A later boot's trace clock started later: its times move onto the
	 * output's (the first file's) anchor. An earlier one's would land before
	 * the output's time 0, and each CPU's events must go forward in time.
	 */
	if (has_date && x->has_date && x->date_us - date_us > EXTRACT_ANCHOR_SLACK_US) {
		x->error_file = path;
		snprintf(x->error, sizeof(x->error), "its trace clock started %.1f s before the "
			 "first file's (an earlier boot): give the files in time order",
			 (double)(x->date_us - date_us) / 1e6);
		return -EINVAL;
	}
	if (has_date && x->has_date && date_us - x->date_us > EXTRACT_ANCHOR_SLACK_US) {
		w->shift_ns = (date_us - x->date_us) * 1000;
		w->since_ts = w->since_ts + (uint64_t)w->shift_ns;
		w->until_ts = w->until_ts == UINT64_MAX ? UINT64_MAX :
			      w->until_ts + (uint64_t)w->shift_ns;
	}
	return 0;
}

static void note_gaps(struct extract *x, const struct v7_reader *r)
{
	for (size_t i = 0; i < v7_reader_n_cpustat(r); i++) {
		const char *t = v7_reader_cpustat(r, i), *g = t ? strstr(t, "ftraced-gap: ") : NULL;
		size_t len;
		bool seen = false;

		if (!g)
			continue;
		g += strlen("ftraced-gap: ");
		len = strcspn(g, "\n");
		for (size_t k = 0; k < x->n_gaps && !seen; k++)
			seen = strlen(x->gaps[k]) == len && strncmp(x->gaps[k], g, len) == 0;
		if (seen)
			continue;
		x->n_gaps_total++;
		if (x->n_gaps < EXTRACT_GAPS_MAX) {
			x->gaps[x->n_gaps] = strndup(g, len);
			if (x->gaps[x->n_gaps])
				x->n_gaps++;
		}
	}
}

static int extract_file(struct extract *x, const char *path)
{
	_cleanup_(v7_reader_freep) struct v7_reader *r = NULL;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct file_window w;
	bool used = false;
	int k;

	x->error_file = path;
	if (fd < 0) {
		snprintf(x->error, sizeof(x->error), "%s", strerror(errno));
		return -errno;
	}
	k = v7_reader_open(fd, &r, x->error, sizeof(x->error));
	if (k < 0)
		return k;
	if (!x->have_meta) {
		k = adopt_first(x, r, path);
		if (k < 0)
			return k;
	}
	if (v7_reader_page_size(r) != x->page_size) {
		snprintf(x->error, sizeof(x->error), "its sub-buffers are %u bytes, the first "
			 "file's %u: not one session's files", v7_reader_page_size(r), x->page_size);
		return -EINVAL;
	}
	k = same_session(x, r);
	if (k < 0)
		return k;
	k = file_window(x, r, path, &w);
	if (k == -ERANGE)
		return 0;
	if (k < 0)
		return k;
	for (size_t i = 0; i < v7_reader_n_cpus(r); i++) {
		w.cpu = cpu_out(x, v7_reader_cpu(r, i)->cpu);
		if (!w.cpu)
			return -ENOMEM;
		w.used = false;
		k = v7_reader_foreach_chunk(r, i, extract_on_chunk, &w);
		if (k < 0) {
			snprintf(x->error, sizeof(x->error), "CPU %u's data is damaged: %s",
				 v7_reader_cpu(r, i)->cpu, v7_reader_error(r) ?: strerror(-k));
			return k;
		}
		used |= w.used;
	}
	if (used) {
		char **grown = reallocarray(x->used, x->n_used + 1, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		x->used = grown;
		x->used[x->n_used] = strdup(path);
		if (!x->used[x->n_used++])
			return -ENOMEM;
		note_gaps(x, r);
	}
	x->error_file = NULL;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A session's files, in time order (their names start with the UTC time); none: 0 files. */
static int session_files(const char *dir, char ***ret, size_t *n_ret)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **files = NULL;
	size_t n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char **grown;

		if (de->d_name[0] == '.' || len < 5 || strcmp(de->d_name + len - 4, ".dat") != 0)
			continue;
		if (n >= EXTRACT_FILES_MAX) {
			closedir(d);
			return -E2BIG;
		}
		grown = reallocarray(files, n + 1, sizeof(*files));
		if (!grown || asprintf(&grown[n], "%s/%s", dir, de->d_name) < 0) {
			files = grown ?: files;
			while (n > 0)
				free(files[--n]);
			free(files);
			closedir(d);
			return -ENOMEM;
		}
		files = grown;
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(files, n, sizeof(*files), by_name);
	*ret = files;
	*n_ret = n;
	return 0;
}

/* TIME as UTC (µs) or, a bare number of seconds, on the trace clock (ns). */
static int parse_time(const char *text, bool *ret_wall, long long *ret_us, uint64_t *ret_ns)
{
	char *end;
	double s;

	if (text[0] >= '0' && text[0] <= '9' && !strchr(text, ':')) {
		errno = 0;
		s = strtod(text, &end);
		if (errno || *end || s < 0 || s > 1e9)
			return -EINVAL;
		*ret_wall = false;
		*ret_ns = (uint64_t)(s * 1e9 + 0.5);
		return 0;
	}
	*ret_wall = true;
	return wall_time_parse(text, (long long)realtime_usec(), ret_us);
}

static void extract_help(void)
{
	printf("Usage: ftracectl extract SESSION|FILE... [--since TIME] [--until TIME] -o OUT\n\n"
	       "Write one trace-cmd v7 file with exactly the events of a time window, from\n"
	       "every file of a session (its segments, or a flight recorder's snapshots) or\n"
	       "the FILEs given that overlap it. The daemon, if one answers, says where\n"
	       "SESSION's files are and rotates a running continuous session first, so the\n"
	       "output holds its events up to now; without one, the state directory is read.\n\n"
	       "  -o, --output FILE     write here (as FILE.partial until complete)\n"
	       "      --force           overwrite FILE if it exists\n"
	       "      --since TIME      the window's start (default: the first event)\n"
	       "      --until TIME      its end (default: the last event)\n"
	       "      --state-dir DIR   read SESSION's files here, without asking the daemon\n"
	       "                        (default $FTRACED_STATE_DIR; with neither, the daemon's\n"
	       "                        answer, else " EXTRACT_STATE_DIR_DEFAULT ")\n"
	       "  -h, --help            show this help\n\n"
	       "TIME: -10m, -30s (before now), 13:02[:05] (UTC, the last such time),\n"
	       "2026-11-25T13:02:00Z, or trace-clock seconds (1214.442394) as report prints them.\n");
}

struct extract_args {
	const char *output, *state_dir;
	bool offline;             /* --state-dir or $FTRACED_STATE_DIR: the daemon is not asked */
	char rotated[PATH_MAX];   /* the segment a rotation closed for this extract, or "" */
	bool force;
	char **files;
	size_t n_files;
};

static void extract_done(struct extract *x, struct extract_args *a)
{
	for (size_t i = 0; i < x->n_cpus; i++) {
		for (size_t k = 0; k < x->cpus[i].n_chunks; k++)
			free((void *)x->cpus[i].chunks[k].data);
		free(x->cpus[i].chunks);
		free(x->cpus[i].raw);
	}
	free(x->cpus);
	for (size_t i = 0; i < x->n_used; i++)
		free(x->used[i]);
	free(x->used);
	for (size_t i = 0; i < x->n_gaps; i++)
		free(x->gaps[i]);
	if (x->have_meta)
		v7_meta_done(&x->meta);
	free(x->trace_clock);
	free(x->clock);
	free(x->uname_text);
	free(x->date_text);
	free(x->page);
	compressor_free(x->zstd);
	for (size_t i = 0; i < a->n_files; i++)
		free(a->files[i]);
	free(a->files);
}

/* Writes the output file: the first file's metadata, each CPU's chunks, the gaps noted. */
static int write_output(struct extract *x, int fd)
{
	_cleanup_free_ struct v7_cpu_data *data = calloc(MAX(x->n_cpus, (size_t)1), sizeof(*data));
	_cleanup_free_ char **stats = calloc(MAX(x->n_cpus, (size_t)1), sizeof(*stats));
	char version[128];
	struct v7_file f;
	int r = data && stats ? 0 : -ENOMEM;

	for (size_t i = 0; r >= 0 && i < x->n_cpus; i++) {
		struct cpu_out *c = &x->cpus[i];
		char gaps[2048] = "";

		r = extract_compress_pending(x, c);
		data[i] = (struct v7_cpu_data){ .cpu = c->cpu, .fd = -EBADF, .size = c->bytes,
						.n_chunks = (uint32_t)c->n_chunks,
						.blobs = c->chunks, .n_blobs = c->n_chunks };
		for (size_t k = 0; k < x->n_gaps; k++)
			snprintf(gaps + strlen(gaps), sizeof(gaps) - strlen(gaps),
				 "ftraced-gap: %s\n", x->gaps[k]);
		if (r >= 0 && asprintf(&stats[i], "CPU: %u\nentries: %" PRIu64 "\n%s", c->cpu,
				       c->events, gaps) < 0) {
			stats[i] = NULL;
			r = -ENOMEM;
		}
	}
	snprintf(version, sizeof(version), "ftracectl " FTRACED_VERSION " extract");
	f = (struct v7_file){
		.page_size = x->page_size,
		.compression = V7_COMPRESSION_ZSTD,
		.level = EXTRACT_ZSTD_LEVEL,
		.trace_clock = x->trace_clock ?: x->clock,
		.clock = x->clock,
		.uname = x->uname_text ?: "",
		.date = x->has_date ? x->date_text : NULL,
		.version = version,
		.n_cpus = (uint32_t)x->n_cpus,
		.n_cpustat = x->n_cpus,
		.cpustat = (const char *const *)stats,
		.n_data = x->n_cpus,
		.data = data,
	};
	v7_meta_to_file(&x->meta, &f);
	if (getrandom(&f.trace_id, sizeof(f.trace_id), 0) != sizeof(f.trace_id))
		f.trace_id = (uint64_t)time(NULL);
	if (r >= 0)
		r = v7_write(fd, &f, NULL);
	for (size_t i = 0; stats && i < x->n_cpus; i++)
		free(stats[i]);
	return r;
}

static void report_result(const struct client_options *o, const struct extract *x,
			  const char *output)
{
	uint64_t events = 0, missed = 0, copied = 0;

	for (size_t i = 0; i < x->n_cpus; i++) {
		events += x->cpus[i].events;
		missed += x->cpus[i].missed_pages;
		copied += x->cpus[i].copied;
	}
	if (o->json) {
		json_t *v = json_object(), *files = json_array(), *gaps = json_array(),
		       *cpus = json_array();

		json_put_text(v, "file", output);
		json_put_u64(v, "events", events);
		json_put_u64(v, "pages_after_lost_events", missed);
		json_put_u64(v, "chunks_copied", copied);
		for (size_t i = 0; files && i < x->n_used; i++)
			json_array_append_new(files, json_text(x->used[i]));
		for (size_t i = 0; gaps && i < x->n_gaps; i++)
			json_array_append_new(gaps, json_text(x->gaps[i]));
		for (size_t i = 0; cpus && i < x->n_cpus; i++) {
			json_t *c = json_object();

			json_put_u64(c, "cpu", x->cpus[i].cpu);
			json_put_u64(c, "events", x->cpus[i].events);
			json_put_u64(c, "pages_after_lost_events", x->cpus[i].missed_pages);
			json_array_append_new(cpus, c);
		}
		json_put(v, "files", files);
		json_put(v, "gaps", gaps);
		json_put(v, "cpus", cpus);
		json_print(v);
		return;
	}
	printf("%s: %" PRIu64 " events from %zu file(s), %" PRIu64 " chunk(s) copied as they "
	       "were\n", output, events, x->n_used, copied);
	for (size_t i = 0; i < x->n_used; i++)
		printf("  from %s\n", x->used[i]);
	for (size_t i = 0; i < x->n_gaps; i++)
		printf("  gap: %s\n", x->gaps[i]);
	if (x->n_gaps_total > x->n_gaps)
		printf("  and %zu more gaps\n", x->n_gaps_total - x->n_gaps);
	if (missed > 0)
		printf("  events were lost before %" PRIu64 " of its pages (the kernel's ring "
		       "overwrote them): ftracectl info counts them\n", missed);
}

static int parse_window(struct extract *x, const char *since, const char *until)
{
	bool wall_since = false, wall_until = false;

	x->since_us = 0;
	x->until_us = LLONG_MAX;
	x->since_ns = 0;
	x->until_ns = UINT64_MAX;
	if (since && parse_time(since, &wall_since, &x->since_us, &x->since_ns) < 0) {
		print_error("extract", "invalid --since '%s' (e.g. -10m, 13:02, "
			    "2026-11-25T13:02:00Z, or trace-clock seconds)", since);
		return -EINVAL;
	}
	if (until && parse_time(until, &wall_until, &x->until_us, &x->until_ns) < 0) {
		print_error("extract", "invalid --until '%s' (e.g. -5m, 13:05, "
			    "2026-11-25T13:05:00Z, or trace-clock seconds)", until);
		return -EINVAL;
	}
	if (since && until && wall_since != wall_until) {
		print_error("extract", "--since and --until must both be UTC times or both "
			    "trace-clock seconds");
		return -EINVAL;
	}
	x->wall = since ? wall_since : wall_until;
	if (x->wall ? x->since_us > x->until_us : x->since_ns > x->until_ns) {
		print_error("extract", "--until is before --since");
		return -EINVAL;
	}
	return 0;
}

/*
 * SESSION's files: in the directory the daemon names (after a rotation if
 * it runs), unless --state-dir says to read one offline; with no daemon to
 * ask, or one that does not know it, in the state directory.
 */
static int session_inputs(const struct client_options *o, struct extract_args *a,
			  const char *session)
{
	char dir[PATH_MAX], live[PATH_MAX], shown[PATH_MAX];
	int r;

	if (!ctl_name_valid(session)) {
		print_error("extract", "invalid session name '%s'", session);
		return -EINVAL;
	}
	r = a->offline ? 0 : live_session_dir(o, session, live, sizeof(live), a->rotated,
					       sizeof(a->rotated));
	if (r < 0)
		return r;
	if (r > 0) {
		snprintf(shown, sizeof(shown), "%s", live);
		r = session_files(live, &a->files, &a->n_files);
	} else {
		snprintf(shown, sizeof(shown), "%s/sessions/%s", a->state_dir, session);
		snprintf(dir, sizeof(dir), "%s/sessions/%s", a->state_dir, session);
		r = session_files(dir, &a->files, &a->n_files);
		if (r >= 0 && a->n_files == 0) {
			free(a->files);
			a->files = NULL;
			snprintf(dir, sizeof(dir), "%s/sessions/%s/snapshots", a->state_dir, session);
			r = session_files(dir, &a->files, &a->n_files);
		}
	}
	if (r < 0 || a->n_files == 0) {
		print_error("extract", "session '%s' has no files in %s%s%s", session, shown,
			    r < 0 ? ": " : "", r < 0 ? strerror(-r) : "");
		return r < 0 ? r : -ENOENT;
	}
	return 0;
}

/* SESSION (a name) or FILE...: the files to read, in order. */
static int resolve_inputs(const struct client_options *o, struct extract_args *a, int argc,
			  char *argv[])
{
	if (argc == 1 && !strchr(argv[0], '/') && !strstr(argv[0], ".dat"))
		return session_inputs(o, a, argv[0]);
	if ((size_t)argc > EXTRACT_FILES_MAX) {
		print_error("extract", "%d files: at most %u", argc, EXTRACT_FILES_MAX);
		return -E2BIG;
	}
	a->files = calloc((size_t)argc, sizeof(*a->files));
	if (!a->files)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		a->files[i] = strdup(argv[i]);
		if (!a->files[i])
			return -ENOMEM;
		a->n_files++;
	}
	return 0;
}

int cmd_extract(const struct client_options *o, int argc, char *argv[])
{
	enum { ARG_FORCE = 0x100, ARG_SINCE, ARG_UNTIL, ARG_STATE_DIR };
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, ARG_FORCE },
		{ "since", required_argument, NULL, ARG_SINCE },
		{ "until", required_argument, NULL, ARG_UNTIL },
		{ "state-dir", required_argument, NULL, ARG_STATE_DIR },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct extract_args a = { .state_dir = getenv("FTRACED_STATE_DIR") };
	const char *since = NULL, *until = NULL;
	struct extract x = {};
	_cleanup_close_ int out = -EBADF;
	char partial[PATH_MAX] = "";
	uint64_t events = 0;
	int c, r, code = EXIT_FAILED;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:h", options, NULL)) >= 0) {
		switch (c) {
		case 'o':
			a.output = optarg;
			break;
		case ARG_FORCE:
			a.force = true;
			break;
		case ARG_SINCE:
			since = optarg;
			break;
		case ARG_UNTIL:
			until = optarg;
			break;
		case ARG_STATE_DIR:
			a.state_dir = optarg;
			break;
		case 'h':
			extract_help();
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	a.offline = a.state_dir && a.state_dir[0];
	if (!a.offline)
		a.state_dir = EXTRACT_STATE_DIR_DEFAULT;
	if (optind >= argc || !a.output) {
		print_error("extract", optind >= argc ? "which session or files? (ftracectl extract "
			    "SESSION|FILE... -o OUT)" : "where to? (-o OUT)");
		return EXIT_USAGE;
	}
	if (parse_window(&x, since, until) < 0)
		return EXIT_USAGE;
	r = resolve_inputs(o, &a, argc - optind, argv + optind);
	if (r < 0) {
		extract_done(&x, &a);
		return r == -EINVAL ? EXIT_USAGE : EXIT_FAILED;
	}
	r = compressor_new(&x.zstd);
	if (r >= 0)
		r = compressor_for_chunks(x.zstd);
	for (size_t i = 0; r >= 0 && i < a.n_files; i++)
		r = extract_file(&x, a.files[i]);
	if (r < 0) {
		if (x.error_file)
			print_error("extract", "%s: %s", x.error_file, x.error[0] ? x.error :
				    strerror(-r));
		else
			print_error("extract", "%s", strerror(-r));
		goto out;
	}
	for (size_t i = 0; i < x.n_cpus; i++)
		events += x.cpus[i].events;
	if (events == 0) {
		print_error("extract", "no event in the window in %zu file(s)", a.n_files);
		goto out;
	}
	out = output_open("extract", a.output, a.force, partial, sizeof(partial));
	if (out < 0)
		goto out;
	r = write_output(&x, out);
	if (r >= 0 && fsync(out) < 0)
		r = -errno;
	out = safe_close(out);
	if (r < 0) {
		print_error("extract", "writing '%s' failed: %s", a.output, strerror(-r));
		output_discard(partial);
		goto out;
	}
	if (output_commit("extract", partial, a.output) < 0)
		goto out;
	report_result(o, &x, a.output);
	code = EXIT_OK;
out:
	extract_done(&x, &a);
	return code;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The controller's reply routing (daemon/control/reply-route.c): for every kind of
 * reply a slot may wait for and every piece of news from its session, who
 * hears what, and what waits afterwards.
 */
#undef NDEBUG
#include <assert.h>
#include <stdio.h>

#include "daemon/control/reply-route.h"

/* Any non-NULL pointer: the routing only asks whether a client is still there. */
#define CLIENT ((struct ctl_conn *)&client)
static int client;

static void expect(enum reply_kind kind, bool conn, enum session_news news,
		   enum reply_answer answer, enum reply_kind then, bool drop)
{
	struct pending_reply p = { .kind = kind, .conn = conn ? CLIENT : NULL };
	struct reply_route r = reply_route(&p, news);

	if (r.answer != answer || r.then != then || r.drop != drop) {
		fprintf(stderr, "kind %d conn %d news %d: answer %d then %d drop %d, expected "
			"%d %d %d\n", kind, conn, news, r.answer, r.then, r.drop, answer, then, drop);
		assert(false);
	}
}

/* A record: STARTED when its ring is there, then FINISHED or the error at the end. */
static void test_record(void)
{
	expect(REPLY_RECORD, true, NEWS_READY, ANSWER_STARTED, REPLY_RECORD, false);
	expect(REPLY_RECORD, true, NEWS_NOT_STARTED, ANSWER_ERROR, REPLY_NONE, true);
	/* Its client went away before the start: the record never starts. */
	expect(REPLY_RECORD, false, NEWS_READY, ANSWER_NONE, REPLY_NONE, true);
	expect(REPLY_RECORD, false, NEWS_NOT_STARTED, ANSWER_NONE, REPLY_NONE, true);
	/* A stop does not answer the record's client: it waits for the file. */
	expect(REPLY_RECORD, true, NEWS_STOPPED, ANSWER_NONE, REPLY_RECORD, false);
	expect(REPLY_RECORD, true, NEWS_DONE, ANSWER_FINISHED, REPLY_NONE, false);
	expect(REPLY_RECORD, true, NEWS_FAILED, ANSWER_ERROR, REPLY_NONE, false);
	expect(REPLY_RECORD, false, NEWS_DONE, ANSWER_NONE, REPLY_NONE, false);
	expect(REPLY_RECORD, false, NEWS_FAILED, ANSWER_NONE, REPLY_NONE, false);
}

/* A create, stop or destroy: one OK or one error, and nothing after it. */
static void test_ok(void)
{
	expect(REPLY_OK, true, NEWS_READY, ANSWER_OK, REPLY_NONE, false);
	expect(REPLY_OK, true, NEWS_NOT_STARTED, ANSWER_ERROR, REPLY_NONE, true);
	expect(REPLY_OK, true, NEWS_STOPPED, ANSWER_OK, REPLY_NONE, false);
	expect(REPLY_OK, true, NEWS_DONE, ANSWER_OK, REPLY_NONE, false);
	/* The destroy or stop asked for the end, and got it: the session's error is its own. */
	expect(REPLY_OK, true, NEWS_FAILED, ANSWER_OK, REPLY_NONE, false);
}

/* A session from a file or a saved copy: it starts, or the log says why not. */
static void test_log(void)
{
	expect(REPLY_LOG, false, NEWS_READY, ANSWER_START, REPLY_NONE, false);
	expect(REPLY_LOG, false, NEWS_NOT_STARTED, ANSWER_LOG_ERROR, REPLY_NONE, true);
	expect(REPLY_LOG, false, NEWS_STOPPED, ANSWER_NONE, REPLY_LOG, false);
	expect(REPLY_LOG, false, NEWS_DONE, ANSWER_NONE, REPLY_NONE, false);
}

/* Nobody waits: nothing is sent, and a session that cannot start still goes. */
static void test_none(void)
{
	expect(REPLY_NONE, false, NEWS_READY, ANSWER_NONE, REPLY_NONE, false);
	expect(REPLY_NONE, false, NEWS_NOT_STARTED, ANSWER_NONE, REPLY_NONE, true);
	expect(REPLY_NONE, false, NEWS_STOPPED, ANSWER_NONE, REPLY_NONE, false);
	expect(REPLY_NONE, false, NEWS_FAILED, ANSWER_NONE, REPLY_NONE, false);
}

static void test_busy(void)
{
	struct pending_reply p = {};

	assert(!reply_blocks_changes(&p));
	p.kind = REPLY_OK;
	assert(reply_blocks_changes(&p));
	p.kind = REPLY_LOG;
	assert(reply_blocks_changes(&p));
	/* A record's client may stop or destroy its own record while it waits. */
	p.kind = REPLY_RECORD;
	assert(!reply_blocks_changes(&p));
}

int main(void)
{
	test_record();
	test_ok();
	test_log();
	test_none();
	test_busy();
	return 0;
}

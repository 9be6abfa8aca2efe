// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The controller's reply routing (reply-route.h): for each kind of reply a
 * slot waits for and each piece of news from its session, the answer and
 * what waits afterwards. Pure; the controller sends.
 */
#include "daemon/control/reply-route.h"

static struct reply_route on_ready(const struct pending_reply *p)
{
	switch (p->kind) {
	case REPLY_RECORD:
		/* A record whose client went away before its start is not started. */
		if (!p->conn)
			return (struct reply_route){ ANSWER_NONE, REPLY_NONE, .drop = true };
		return (struct reply_route){ ANSWER_STARTED, REPLY_RECORD };
	case REPLY_OK:
		return (struct reply_route){ ANSWER_OK, REPLY_NONE };
	case REPLY_LOG:
		return (struct reply_route){ ANSWER_START, REPLY_NONE };
	case REPLY_NONE:
		break;
	}
	return (struct reply_route){ ANSWER_NONE, REPLY_NONE };
}

static struct reply_route on_not_started(const struct pending_reply *p)
{
	if (p->kind == REPLY_LOG)
		return (struct reply_route){ ANSWER_LOG_ERROR, REPLY_NONE, .drop = true };
	if (p->kind != REPLY_NONE && p->conn)
		return (struct reply_route){ ANSWER_ERROR, REPLY_NONE, .drop = true };
	return (struct reply_route){ ANSWER_NONE, REPLY_NONE, .drop = true };
}

static struct reply_route on_end(const struct pending_reply *p, bool failed)
{
	switch (p->kind) {
	case REPLY_RECORD:
		if (!p->conn)
			break;
		return (struct reply_route){ failed ? ANSWER_ERROR : ANSWER_FINISHED, REPLY_NONE };
	case REPLY_OK:
		/* A stop or destroy asked for the end: it came, whatever the session's error. */
		return (struct reply_route){ ANSWER_OK, REPLY_NONE };
	case REPLY_LOG:
	case REPLY_NONE:
		break;
	}
	return (struct reply_route){ ANSWER_NONE, REPLY_NONE };
}

/**
 * reply_route() - what a session's news means for the reply its slot waits for.
 * @p: the pending reply
 * @news: what happened
 *
 * Return: the answer to give and the kind of reply that waits afterwards.
 */
struct reply_route reply_route(const struct pending_reply *p, enum session_news news)
{
	switch (news) {
	case NEWS_READY:
		return on_ready(p);
	case NEWS_NOT_STARTED:
		return on_not_started(p);
	case NEWS_STOPPED:
		/* Only a stop waits for it; a record's client waits on for FINISHED. */
		if (p->kind == REPLY_OK)
			return (struct reply_route){ ANSWER_OK, REPLY_NONE };
		return (struct reply_route){ ANSWER_NONE, p->kind };
	case NEWS_DONE:
		return on_end(p, false);
	case NEWS_FAILED:
		return on_end(p, true);
	}
	return (struct reply_route){ ANSWER_NONE, p->kind };
}

/**
 * reply_blocks_changes() - is a change to the session refused as busy while @p waits?
 * @p: the pending reply
 *
 * A create, stop or destroy (or a file's session starting) has its answer
 * still to come; a record's client waits for the whole capture, and may
 * stop or destroy it meanwhile.
 */
bool reply_blocks_changes(const struct pending_reply *p)
{
	return p->kind == REPLY_OK || p->kind == REPLY_LOG;
}

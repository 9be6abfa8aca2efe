/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Who hears of a session's news, and what: the controller's reply routing
 * as a pure table (reply-route.c), so that its rules sit in one place and
 * are tested without a daemon. Each session's slot waits for at most one
 * reply, of one kind; a piece of news gives the answer to send and the
 * kind that waits afterwards. The controller carries the answer out.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>

struct ctl_conn;

enum reply_kind {
	REPLY_NONE,
	REPLY_RECORD,  /* the record's client: STARTED, then FINISHED */
	REPLY_OK,      /* a create, stop or destroy: OK or ERROR */
	REPLY_LOG,     /* a session file's or saved session's: said in the log */
};

struct pending_reply {
	enum reply_kind kind;
	struct ctl_conn *conn;   /* RECORD, OK; NULL once the client went away */
	char origin[PATH_MAX];   /* LOG: where the session came from, for the log */
};

/* What happened to the session. */
enum session_news {
	NEWS_READY,        /* its ring is allocated: it may start */
	NEWS_NOT_STARTED,  /* its ring was refused, or it cannot start now: it goes */
	NEWS_STOPPED,      /* a continuous or flight session stopped, its last file on disk */
	NEWS_DONE,         /* its files are written: it goes */
	NEWS_FAILED,       /* it ended with an error: it goes */
};

enum reply_answer {
	ANSWER_NONE,
	ANSWER_OK,         /* to the client waiting */
	ANSWER_ERROR,      /* to the client waiting, with the session's message */
	ANSWER_STARTED,    /* to a record's client: the record starts now */
	ANSWER_FINISHED,   /* to a record's client, with the session's description */
	ANSWER_START,      /* to nobody: a session from a file starts now */
	ANSWER_LOG_ERROR,  /* in the log, naming where the session came from */
};

struct reply_route {
	enum reply_answer answer;
	enum reply_kind then;      /* what waits afterwards */
	bool drop;                 /* the session goes now, never started */
};

struct reply_route reply_route(const struct pending_reply *p, enum session_news news);
bool reply_blocks_changes(const struct pending_reply *p);

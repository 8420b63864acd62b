#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Pidgin/Finch chat logs as libpurple's log reader returns them, parsed into messages. Pure text in,
 * messages out (no libpurple), so it can be tested and fuzzed on its own.
 */

/* The messages of one log's text: html TRUE for the HTML logger's markup (one line per message, no newlines
 * of its own), FALSE for the text logger's escaped, linkified lines. start is the log's start (lines with a
 * bare time are placed after it), zone the offset the log was written in. Returns a GPtrArray of
 * CatchupMessage without ids (derived when stored), in log order; lines that are not messages (system lines,
 * unreadable stamps) are skipped. Never fails. */
GPtrArray *catchup_chatlog_parse (const char *text, gboolean html, gint64 start, GTimeZone *zone);

/* Markup as plain text: tags dropped (a link's address kept after its text when it differs), <br> and block
 * tags as newlines, entities decoded, other white space as a space, <script> and <style> content dropped. */
char *catchup_chatlog_strip_markup (const char *html);

G_END_DECLS

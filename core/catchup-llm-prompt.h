#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * Prompt templates and the quoting of chat text for models. Chat text is untrusted input: every turn goes
 * into a data block as one line, "[id Fri 08:50] speaker: text" (time in UTC), with line breaks, control
 * characters and backslashes in it escaped, fenced by marker lines that carry a random nonce. So a message
 * can never start a line of its own, pose as another turn or forge the end of the block.
 */

/* Override for tests and uninstalled runs: prompts are read from $CATCHUP_DATA_DIR/prompts. */
#define CATCHUP_DATA_DIR_ENV "CATCHUP_DATA_DIR"

/* The template NAME ("gaps.txt"): the user's own copy in g_get_user_config_dir()/purple-catchup/prompts
 * first, then $CATCHUP_DATA_DIR/prompts, then the copy compiled into the library (data/prompts/ as a
 * GResource), so that no installed data file is needed. CATCHUP_ERROR_NOT_FOUND for a name none of them has. */
char *catchup_llm_prompt_load (const char *name, GError **error);

/* Replaces each {{key}} of template with its value, in one pass (values are never expanded again, so chat
 * text holding "{{window}}" stays as it is). Arguments: key, value pairs ending with NULL. Unknown
 * placeholders are left as they are. */
char *catchup_llm_prompt_fill (const char *template_text, ...) G_GNUC_NULL_TERMINATED;

/* A fresh random nonce for the data block markers. */
char *catchup_llm_prompt_nonce (void);

/* messages (CatchupMessage) as a data block labelled label ("WINDOW", "MEMORY"):
 *   <<<BEGIN WINDOW DATA nonce>>>
 *   [s0345 Fri 08:50] maren: text, with \n \r \t \\ and \uXXXX escapes
 *   <<<END WINDOW DATA nonce>>>
 * In the id, a space or ']' is escaped with a backslash; in the speaker, a ':'.
 * A turn longer than max_turn_tokens (0: no limit) is cut, visibly, with a marker inside its text. */
char *catchup_llm_prompt_data_block (const char *label, GPtrArray *messages, const char *nonce,
                                     guint max_turn_tokens);

/* One turn's line of a data block, without its line break ("[s0345 Fri 08:50] maren: text"), cut as there;
 * untimed, "[s0345] maren: text" (for lists that give the day in lines of their own). */
char *catchup_llm_prompt_turn_line (gconstpointer message, guint max_turn_tokens, gboolean timed);
/* "-- Fri 2026-03-06 --": the line that opens a day of untimed turns (UTC). */
char *catchup_llm_prompt_day_line (gint64 ts);
/* text escaped as a turn's text is in a data block: it cannot break the line. */
char *catchup_llm_prompt_escape (const char *text);

/* Tokens one turn's line costs inside a data block, frame included, by the library's counter (the one the
 * client counts the prompts it sends with), and the sum over messages (NULL: 0). */
guint catchup_llm_prompt_turn_cost (gconstpointer message);
guint catchup_llm_prompt_messages_cost (GPtrArray *messages);

/* Tokens a data block labelled label costs with no turn in it: its two marker lines. */
guint catchup_llm_prompt_block_cost (const char *label);

/* Splits messages into consecutive runs that cost at most budget tokens each (a run holds at least one
 * turn). Returns a GPtrArray of GPtrArray views: the messages themselves are not copied. */
GPtrArray *catchup_llm_prompt_segments (GPtrArray *messages, guint budget);

/* reply without the reasoning a reasoning model put before its answer: a leading <think>…</think> or
 * <thinking>…</thinking> block, or everything up to a bare </think> (when the chat template opened the block);
 * an unclosed block leaves no answer (""). reasoning (may be NULL) gets the block's text, or NULL. */
char *catchup_llm_split_reasoning (const char *reply, char **reasoning);

/* The JSON a model's reply holds: the whole reply, or else the body of its first code fence, or else the first
 * object or array (of objects) found in it, after dropping a reasoning block; prose around it is ignored and
 * trailing commas ("[1, 2,]") are forgiven. CATCHUP_ERROR_MODEL when there is none. */
JsonNode *catchup_llm_reply_json (const char *reply, GError **error);

/* A string member of a model's JSON (a number is taken too: models write numeric ids as numbers), trimmed
 * and cut to max_chars; NULL when absent or empty. */
char *catchup_llm_json_text (JsonObject *obj, const char *name, guint max_chars);

G_END_DECLS

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Text for retrieval: Unicode-correct terms (NFKC, casefolded, diacritics kept), a light English stemmer,
 * stop words, and a token counter that approximates a BPE count.
 */

/* Terms of text for retrieval: casefolded, NFKC-normalised words (letters/digits, CJK split per character),
 * stemmed; stop words dropped when drop_stop. Never fails: any UTF-8 (invalid bytes are replaced). */
GPtrArray *catchup_text_terms (const char *text, gboolean drop_stop);
/* The same terms joined by spaces (what goes into an FTS5 column). */
char *catchup_text_terms_joined (const char *text, gboolean drop_stop);
char *catchup_text_join (GPtrArray *terms);
gboolean catchup_text_is_stop_word (const char *casefolded_word);
/* Words and punctuation marks, as a BPE tokenizer would roughly count them ("speaker: text" style). */
guint catchup_text_count_tokens (const char *text);
/* tokens of "speaker: text" */
guint catchup_text_count_turn (const char *speaker, const char *text);
/* An FTS5 MATCH expression OR-ing the retrieval terms of text (stemmed, as the chunk index holds them), each
 * quoted; NULL when text has no terms. Safe for any text: quotes, operators, parentheses, '*', '^', emoji, CJK,
 * huge lines. At most max_terms distinct terms. */
char *catchup_text_fts_query (const char *text, guint max_terms);
/* The same over terms already cut: the first max_terms distinct ones, each a quoted phrase, OR-ed. */
char *catchup_text_fts_or (GPtrArray *terms, guint max_terms);

/* Text safe to write into a conversation or a terminal and to send to a room, whoever wrote it (chat, model,
 * file): valid UTF-8 (invalid bytes replaced), without control characters (C0, DEL, C1: escape sequences,
 * IRC colour and CTCP codes), bidi overrides and isolates, or zero-width and format characters that terminals
 * count differently; a tab becomes a space. Line breaks are kept when keep_newlines, else each becomes a space. */
char *catchup_text_sanitize (const char *text, gboolean keep_newlines);

G_END_DECLS

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

/* Whether phrase occurs in text as whole words: "now" is not in "know", "sent" not in "present", "ta" not in
 * "data". Both are compared casefolded; a phrase that starts or ends with a non-word character ("+1", "o/",
 * "ot:") needs no boundary on that side. */
gboolean catchup_text_has_phrase (const char *text, const char *phrase);
/* The same on text and phrase already casefolded (g_utf8_casefold), for matching many phrases on one text. */
gboolean catchup_text_has_folded_phrase (const char *folded_text, const char *folded_phrase);

G_END_DECLS

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

/* How catchup_text_clean treats line breaks. */
typedef enum {
  CATCHUP_TEXT_ONE_LINE,   /* names, ids, log lines: every line break and tab becomes a space */
  CATCHUP_TEXT_MULTI_LINE, /* message bodies: CR LF, CR, VT, FF, NEL, LS and PS become LF; tabs stay */
} CatchupTextLines;

/* Text entering the store (files, chat, model replies): valid UTF-8 (each invalid byte becomes U+FFFD), no
 * NUL (the text after it is kept), no other control character (C0, DEL, C1). len -1 for a NUL-terminated
 * text; NULL gives "". */
char *catchup_text_clean (const char *text, gssize len, CatchupTextLines lines);
/* One field of chat, model or file text as it may be printed to a terminal or written into a conversation:
 * what catchup_text_clean does on one line, and no bidi embedding, override or isolate either, which would make
 * the line read as something else. NULL gives "". */
char *catchup_text_sanitize (const char *text);
/* Whether phrase occurs in text as whole words: "now" is not in "know", "sent" not in "present", "ta" not in
 * "data". Both are compared casefolded; a phrase that starts or ends with a non-word character ("+1", "o/",
 * "ot:") needs no boundary on that side. */
gboolean catchup_text_has_phrase (const char *text, const char *phrase);
/* The same on text and phrase already casefolded (g_utf8_casefold), for matching many phrases on one text. */
gboolean catchup_text_has_folded_phrase (const char *folded_text, const char *folded_phrase);

G_END_DECLS

#include "config.h"

#include <string.h>

#include "catchup-summary-private.h"
#include "catchup-text.h"

/*
 * Excerpts: the part of a message a summary line shows. The clause that carries the claim is kept, trimmed at a
 * clause boundary; a greeting or a reaction that opens the message ("Thanks, Mel!", "Wow, that's great!") and a
 * photo caption that names nothing asked for are what goes first.
 */

/* ---- terms ---- */

GPtrArray *
catchup_summary_terms (const char *text)
{
  GPtrArray *terms = catchup_text_terms (text ? text : "", TRUE);
  return terms ? terms : g_ptr_array_new_with_free_func (g_free);
}

GHashTable *
catchup_summary_term_set (GPtrArray *terms)
{
  GHashTable *set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; terms && i < terms->len; i++)
    g_hash_table_add (set, g_strdup (terms->pdata[i]));
  return set;
}

guint
catchup_summary_overlap (GPtrArray *terms, GHashTable *set)
{
  guint n = 0;
  if (!terms || !set)
    return 0;
  for (guint i = 0; i < terms->len; i++)
    n += g_hash_table_contains (set, terms->pdata[i]);
  return n;
}

/* ---- cleaning ---- */

static gboolean
is_url_word (const char *w, gsize len)
{
  return (len > 8 && g_ascii_strncasecmp (w, "https://", 8) == 0) ||
         (len > 7 && g_ascii_strncasecmp (w, "http://", 7) == 0);
}

/* Links at the end of a message ("... https://ci.example/run/5012") are noise in a catch-up; links inside a
 * sentence are part of what was said and stay. */
static void
strip_trailing_urls (char *text)
{
  for (;;) {
    char *space = strrchr (text, ' ');
    char *word = space ? space + 1 : text;
    if (!is_url_word (word, strlen (word)) || word == text)
      return;
    *space = '\0';
  }
}

/* A line shows at most a few hundred characters of a message, but the excerpt and the cleaning look at its whole
 * text, once per reference tried: a message of 100 KB (a pasted log, a flood) made a catch-up take a minute.
 * Only the start of such a message is read, cut at a character boundary; NULL when the text is short enough. */
#define TEXT_READ_MAX 4096

static char *
bounded_copy (const char *text)
{
  gsize len = text ? strlen (text) : 0;

  if (len <= TEXT_READ_MAX)
    return NULL;
  const char *end = g_utf8_find_prev_char (text, text + TEXT_READ_MAX + 1);
  return g_strndup (text, end ? (gsize) (end - text) : TEXT_READ_MAX);
}

guint
catchup_summary_count_words (const char *text)
{
  guint n = 0;
  gboolean in_word = FALSE;
  for (const char *p = text; *p; p++) {
    gboolean space = *p == ' ';
    n += !space && !in_word;
    in_word = !space;
  }
  return n;
}

char *
catchup_summary_clean (const char *text)
{
  g_autofree char *bounded = bounded_copy (text);
  char *clean = catchup_summary_sanitize (bounded ? bounded : text);
  strip_trailing_urls (clean);
  return clean;
}

/* ---- sentences ---- */

char *
catchup_summary_said (const char *text)
{
  char *said = g_strdup (text ? text : "");
  char *caption = strstr (said, "[shares ");
  if (caption)
    *caption = '\0';
  return said;
}

const char *
catchup_summary_opening_word (const char *folded, const char *const *words)
{
  for (guint i = 0; words[i]; i++)
    if (g_str_has_prefix (folded, words[i]) && !g_ascii_isalnum (folded[strlen (words[i])]))
      return words[i];
  return NULL;
}

gboolean
catchup_summary_after_any (const char *folded, const char *phrase, const char *const *before)
{
  for (guint i = 0; before[i]; i++) {
    g_autofree char *joined = g_strconcat (before[i], " ", phrase, NULL);
    if (catchup_text_has_folded_phrase (folded, joined))
      return TRUE;
  }
  return FALSE;
}

/* "J.K. Rowling", "Dr. Who", "e.g. this": a period after an initial or a short abbreviation ends no sentence. */
static gboolean
abbreviation_before (const char *start, const char *dot)
{
  static const char *const short_forms[] = { "mr", "mrs", "ms", "dr", "st", "vs", "jr", "sr", "no", "e.g", "i.e",
                                             "etc", NULL };
  const char *w = dot;
  while (w > start && g_ascii_isalpha (w[-1]))
    w--;
  if (dot - w == 1 && g_ascii_isupper (*w) && (w == start || w[-1] == ' ' || w[-1] == '.'))
    return TRUE;
  while (w > start && w[-1] != ' ')
    w--;
  g_autofree char *word = g_ascii_strdown (w, dot - w);
  return g_strv_contains (short_forms, word) && dot[1] != '\0';
}

gboolean
catchup_summary_ends_sentence (const char *text, const char *p)
{
  return (*p == '.' || *p == '!' || *p == '?') && (p[1] == ' ' || p[1] == '\0') &&
         !(*p == '.' && abbreviation_before (text, p));
}


typedef struct {
  gsize start, end;  /* byte offsets into the text, end exclusive */
  gboolean caption;  /* "[shares a photo: …]" */
  gboolean social;   /* a greeting or a reaction that says nothing of its own */
} Span;

static const char *const openers[] = {
  "thanks", "thank", "wow", "hey", "hi", "hello", "oh", "aw", "aww", "awww", "omg", "haha", "hahaha", "lol", "yay",
  "congrats", "congratulations", "cool", "nice", "great", "awesome", "amazing", "yes", "yeah", "yep", "ok", "okay",
  "sure", "hmm", "ah", "ahh", "morning", "good", "sounds", "that's", "thats", "glad", "so", "love", "wonderful",
  NULL,
};

/* "Thanks, Melanie!", "Wow, that's great!", "Hey Mel!": short, opened by a stock word, no claim of its own. */
static gboolean
is_social_sentence (const char *text, gsize len)
{
  g_autofree char *s = g_utf8_casefold (text, len);
  g_autoptr (GPtrArray) terms = catchup_summary_terms (s);
  guint words = catchup_summary_count_words (s);

  return words <= 6 && terms->len <= 3 && catchup_summary_opening_word (s, openers) != NULL;
}

static void
add_span (GArray *spans, const char *text, gsize start, gsize end, gboolean caption)
{
  while (start < end && text[start] == ' ')
    start++;
  while (end > start && text[end - 1] == ' ')
    end--;
  if (end <= start)
    return;
  Span s = { start, end, caption, !caption && is_social_sentence (text + start, end - start) };
  g_array_append_val (spans, s);
}

/* Sentences end at . ! ? … before a space; a bracketed caption is a span of its own. */
static GArray *
split_sentences (const char *text)
{
  GArray *spans = g_array_new (FALSE, FALSE, sizeof (Span));
  gsize start = 0;

  for (const char *p = text; *p;) {
    if (*p == '[' && g_str_has_prefix (p, "[shares ")) {
      const char *close = strchr (p, ']');
      gsize end = close ? (gsize) (close + 1 - text) : strlen (text);
      add_span (spans, text, start, p - text, FALSE);
      add_span (spans, text, p - text, end, TRUE);
      start = end;
      p = text + end;
      continue;
    }
    gunichar c = g_utf8_get_char (p);
    const char *next = g_utf8_next_char (p);
    if ((c == 0x2026 && (*next == ' ' || *next == '\0')) || catchup_summary_ends_sentence (text, p)) {
      add_span (spans, text, start, next - text, FALSE);
      start = next - text;
    }
    p = next;
  }
  add_span (spans, text, start, strlen (text), FALSE);
  return spans;
}

/* ---- cutting ---- */

static guint
chars (const char *from, gsize len)
{
  return (guint) g_utf8_strlen (from, len);
}

/* At most max_chars characters of text[start, end), cut at the last clause boundary (", " "; " " - " " — ")
 * that keeps most of the room, else at a word boundary; never inside a UTF-8 sequence. */
static char *
cut_clause (const char *text, gsize start, gsize end, guint max_chars, gboolean *cut)
{
  const char *from = text + start;
  const char *limit = text + end;
  const char *p = from;
  const char *last_space = NULL, *last_clause = NULL;
  guint n = 0;

  while (p < limit && n < max_chars) {
    if (*p == ' ') {
      last_space = p;
      if (p > from && strchr (",;:", p[-1]))
        last_clause = p - 1;
      else if (p + 2 < limit && (p[1] == '-' || g_str_has_prefix (p + 1, "—")))
        last_clause = p;
    }
    p = g_utf8_next_char (p);
    n++;
  }
  *cut = p < limit;
  if (*cut && last_clause && chars (from, last_clause - from) > max_chars * 3 / 5)
    p = last_clause;
  else if (*cut && last_space && chars (from, last_space - from) > max_chars / 2)
    p = last_space;
  char *body = g_strndup (from, p - from);
  g_strchomp (body);
  /* "touch,…" reads as a typo; the ellipsis alone says that text was left out. */
  for (gsize len = strlen (body); *cut && len > 0 && strchr (",;:-", body[len - 1]); len--)
    body[len - 1] = '\0';
  return body;
}

/* ---- excerpts ---- */

static guint
focus_hits (const char *text, const Span *s, GHashTable *focus)
{
  g_autofree char *sentence = g_strndup (text + s->start, s->end - s->start);
  g_autoptr (GPtrArray) terms = catchup_summary_terms (sentence);
  return catchup_summary_overlap (terms, focus);
}

typedef enum { SPAN_SAID, SPAN_CAPTION, SPAN_SOCIAL } SpanKind;

static SpanKind
kind_of (const Span *s)
{
  return s->caption ? SPAN_CAPTION : s->social ? SPAN_SOCIAL : SPAN_SAID;
}

/* The span of a kind that best matches focus; G_MAXUINT when none does. */
static guint
best_span (const char *text, GArray *spans, GHashTable *focus, SpanKind kind, guint *hits)
{
  guint best = G_MAXUINT;
  *hits = 0;
  for (guint i = 0; focus && i < spans->len; i++) {
    const Span *s = &g_array_index (spans, Span, i);
    guint h = kind_of (s) == kind ? focus_hits (text, s, focus) : 0;
    if (h > *hits) {
      *hits = h;
      best = i;
    }
  }
  return best;
}

/* The first span to show: the one that best matches focus among what was said, else a caption, else a greeting
 * ("my clothing store" before a photo "of a clothing store", "I'm inspired by your drive" before "Hey Maria,
 * that's awesome!"); without focus (or no match) the first that is neither a greeting nor a caption. */
static guint
first_span (const char *text, GArray *spans, GHashTable *focus, guint *hits)
{
  guint best = G_MAXUINT;
  for (SpanKind kind = SPAN_SAID; kind <= SPAN_SOCIAL && best == G_MAXUINT; kind++)
    best = best_span (text, spans, focus, kind, hits);
  if (best != G_MAXUINT)
    return best;
  for (guint i = 0; i < spans->len; i++) {
    const Span *s = &g_array_index (spans, Span, i);
    if (!s->caption && !s->social)
      return i;
  }
  return 0;
}

char *
catchup_summary_excerpt (const char *text, GHashTable *focus, guint max_chars)
{
  g_autofree char *bounded = bounded_copy (text);
  if (bounded)
    text = bounded;
  g_autoptr (GArray) spans = split_sentences (text ? text : "");
  g_autoptr (GString) out = g_string_new (NULL);
  guint hits = 0;
  gboolean cut = FALSE, more_after = FALSE;

  if (spans->len == 0)
    return g_strdup ("");
  guint first = first_span (text, spans, focus, &hits);
  /* a caption is shown only when it is what names the thing asked for */
  gboolean captions = g_array_index (spans, Span, first).caption && hits > 0;

  gsize before_last = 0;
  gboolean last_leads = FALSE;
  for (guint i = first; i < spans->len && !cut; i++) {
    const Span *s = &g_array_index (spans, Span, i);
    guint used = chars (out->str, out->len);
    if (s->caption && !captions && i != first)
      continue;
    /* a next sentence that does not fit is left out, unless what is shown is only a short opening
     * ("tomorrow's the day. …"): then it is cut at a clause, so the line says something */
    if (out->len > 0 && used + 1 + chars (text + s->start, s->end - s->start) > max_chars &&
        used >= max_chars / 3) {
      more_after = TRUE;
      /* "My advice? …" leads into what is left out: without it, it says nothing */
      if (last_leads && before_last > 0)
        g_string_truncate (out, before_last);
      break;
    }
    g_autofree char *piece = cut_clause (text, s->start, s->end, out->len ? max_chars - used - 1 : max_chars, &cut);
    before_last = out->len;
    last_leads = g_str_has_suffix (piece, "?") && catchup_summary_count_words (piece) <= 3;
    g_string_append_printf (out, "%s%s", out->len ? " " : "", piece);
  }
  /* a greeting or caption left out before or after is no text missing from the claim */
  gboolean text_before = FALSE;
  for (guint i = 0; i < first; i++)
    text_before |= !g_array_index (spans, Span, i).social && !g_array_index (spans, Span, i).caption;
  if (text_before)
    g_string_prepend (out, "…");
  if (cut)
    g_string_append (out, "…");
  else if (more_after)
    g_string_append (out, " …");
  return g_string_free (g_steal_pointer (&out), FALSE);
}

GHashTable *
catchup_summary_question_focus (const char *text)
{
  g_autoptr (GArray) spans = split_sentences (text ? text : "");
  GHashTable *focus = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < spans->len; i++) {
    const Span *s = &g_array_index (spans, Span, i);
    if (s->caption || s->end == 0 || text[s->end - 1] != '?')
      continue;
    g_autofree char *sentence = g_strndup (text + s->start, s->end - s->start);
    g_autoptr (GPtrArray) terms = catchup_summary_terms (sentence);
    for (guint t = 0; t < terms->len; t++)
      g_hash_table_add (focus, g_strdup (terms->pdata[t]));
    break;
  }
  return focus;
}

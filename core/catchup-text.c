#include "config.h"

#include <string.h>

#include "catchup-text.h"

/* English function words and chat filler: they carry no evidence for retrieval. */
static const char *const stop_words[] = {
  "a", "about", "above", "after", "again", "against", "ah", "all", "also", "am", "an", "and", "any", "are",
  "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can",
  "could", "did", "do", "does", "doing", "don", "down", "during", "each", "else", "even", "ever", "few",
  "for", "from", "further", "get", "got", "had", "has", "have", "having", "he", "her", "here", "hers",
  "herself", "hey", "hi", "him", "himself", "his", "how", "i", "if", "im", "in", "into", "is", "it", "its",
  "itself", "ive", "just", "ll", "lol", "me", "more", "most", "much", "my", "myself", "no", "nor", "not",
  "now", "of", "off", "oh", "ok", "okay", "on", "once", "only", "or", "other", "our", "ours", "ourselves",
  "out", "over", "own", "re", "really", "s", "same", "she", "should", "so", "some", "such", "t", "than",
  "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this",
  "those", "through", "to", "too", "um", "under", "until", "up", "us", "ve", "very", "was", "we", "were",
  "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "yeah", "yes",
  "you", "your", "yours", "yourself", "yourselves",
};

/* The longest of stop_words: a longer word needs no look-up. */
#define STOP_WORD_MAX 10

gboolean
catchup_text_is_stop_word (const char *word)
{
  static GHashTable *set;

  if (strnlen (word, STOP_WORD_MAX + 1) > STOP_WORD_MAX)
    return FALSE;

  /* asked for every word of every message: a hash set, filled once (GHashTable lookups are thread-safe) */
  if (g_once_init_enter (&set))
    {
      GHashTable *s = g_hash_table_new (g_str_hash, g_str_equal);

      for (guint i = 0; i < G_N_ELEMENTS (stop_words); i++)
        {
          g_warn_if_fail (strlen (stop_words[i]) <= STOP_WORD_MAX);
          g_hash_table_add (s, (gpointer) stop_words[i]);
        }
      g_once_init_leave (&set, s);
    }
  return g_hash_table_contains (set, word);
}

static gboolean
is_vowel (char c)
{
  return strchr ("aeiou", c) != NULL;
}

/* A light English suffix stripper: plurals, -ing, -ed. Conservative on short words, where stripping
 * merges unrelated words ("bed", "sing"); ASCII words only, other scripts are left as they are. */
/* Whether the n bytes at s end in the literal suffix (its length known at compile time). */
#define HAS_SUFFIX(s, n, suffix) \
  ((n) >= sizeof (suffix) - 1 && memcmp ((s) + (n) - (sizeof (suffix) - 1), suffix, sizeof (suffix) - 1) == 0)

static void
stem_in_place (GString *w)
{
  gsize n = w->len;
  char *s = w->str;

  for (gsize i = 0; i < n; i++)
    if ((guchar) s[i] >= 0x80 || g_ascii_isdigit (s[i]))
      return;
  if (n > 4 && HAS_SUFFIX (s, n, "ies"))
    g_string_truncate (g_string_overwrite (w, n - 3, "y"), n - 2);
  else if (n > 4 && HAS_SUFFIX (s, n, "sses"))
    g_string_truncate (w, n - 2);
  else if (n > 3 && s[n - 1] == 's' && !strchr ("sui", s[n - 2]))
    g_string_truncate (w, n - 1);
  else if ((n > 5 && HAS_SUFFIX (s, n, "ing")) || (n > 4 && HAS_SUFFIX (s, n, "ed")))
    {
      gsize cut = s[n - 1] == 'g' ? 3 : 2;
      gboolean has_vowel = FALSE;

      for (gsize i = 0; i < n - cut; i++)
        has_vowel |= is_vowel (s[i]) || s[i] == 'y';
      if (!has_vowel)
        return;
      g_string_truncate (w, n - cut);
      n = w->len;
      /* running -> runn -> run; but keep "fall", "pass", "buzz" */
      if (n > 2 && s[n - 1] == s[n - 2] && !is_vowel (s[n - 1]) && !strchr ("lsz", s[n - 1]))
        g_string_truncate (w, n - 1);
    }
  /* decide/decided/decides all meet at "decid" */
  if (w->len > 3 && w->str[w->len - 1] == 'e')
    g_string_truncate (w, w->len - 1);
}

static gboolean
is_cjk (gunichar c)
{
  GUnicodeScript script = g_unichar_get_script (c);

  return script == G_UNICODE_SCRIPT_HAN || script == G_UNICODE_SCRIPT_HIRAGANA ||
         script == G_UNICODE_SCRIPT_KATAKANA || script == G_UNICODE_SCRIPT_HANGUL;
}

static void
emit (GString *word, gboolean stem, gboolean drop_stop, GPtrArray *out)
{
  if (word->len == 0)
    return;
  if (!(drop_stop && catchup_text_is_stop_word (word->str)))
    {
      if (stem)
        stem_in_place (word);
      g_ptr_array_add (out, g_strndup (word->str, word->len));
    }
  g_string_truncate (word, 0);
}

/* Words of text: NFKC + casefold, runs of letters/digits; CJK characters are words of their own (no
 * segmenter is available, and single ideographs are what FTS5's unicode61 would index too). */
/* Most chat is ASCII: NFKC and casefolding leave it as it is but for case, and they cost more than the rest
 * of the tokenising together. */
static char *
fold (const char *text)
{
  g_autofree char *valid = NULL, *norm = NULL;

  text = text ? text : "";
  for (const char *p = text; *p; p++)
    if ((guchar) *p >= 0x80)
      {
        valid = g_utf8_make_valid (text, -1);
        norm = g_utf8_normalize (valid, -1, G_NORMALIZE_NFKC);
        return g_utf8_casefold (norm ? norm : valid, -1);
      }
  return g_ascii_strdown (text, -1);
}

static GPtrArray *
text_words (const char *text, gboolean stem, gboolean drop_stop)
{
  g_autofree char *folded = fold (text);
  /* The word buffer's GString lives on the stack with a g_malloc'd string: GLib's slice allocator, which
   * g_string_new uses, hands memory between threads under locks ThreadSanitizer cannot see, and this runs on
   * every thread. The struct's fields are public and g_string_append_* grow str with g_realloc; freed below. */
  GString word_struct = { g_malloc0 (32), 0, 32 };
  GString *word = &word_struct;
  /* about one term in six bytes of chat: sized once instead of grown step by step */
  GPtrArray *out = g_ptr_array_new_full ((guint) MIN (strlen (folded) / 6 + 1, 4096), g_free);

  for (const char *p = folded; *p; p = g_utf8_next_char (p))
    {
      gunichar c;

      if ((guchar) *p < 0x80)
        {
          /* ASCII needs no Unicode tables */
          if (g_ascii_isalnum (*p))
            g_string_append_c (word, *p);
          else
            emit (word, stem, drop_stop, out);
          continue;
        }
      c = g_utf8_get_char (p);
      if (is_cjk (c))
        {
          emit (word, stem, drop_stop, out);
          g_string_append_unichar (word, c);
          emit (word, FALSE, FALSE, out);
        }
      else if (g_unichar_isalnum (c) || g_unichar_ismark (c))
        g_string_append_unichar (word, c);
      else
        emit (word, stem, drop_stop, out);
    }
  emit (word, stem, drop_stop, out);
  g_free (word->str);
  return out;
}

GPtrArray *
catchup_text_terms (const char *text, gboolean drop_stop)
{
  return text_words (text, TRUE, drop_stop);
}

char *
catchup_text_join (GPtrArray *terms)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < terms->len; i++)
    {
      if (i)
        g_string_append_c (s, ' ');
      g_string_append (s, terms->pdata[i]);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

char *
catchup_text_terms_joined (const char *text, gboolean drop_stop)
{
  g_autoptr (GPtrArray) terms = catchup_text_terms (text, drop_stop);

  return catchup_text_join (terms);
}

/* The reference counter's notion of a word character (Python's \w): letters, numbers, underscore. */
static gboolean
is_word_char (gunichar c)
{
  switch (g_unichar_type (c))
    {
    case G_UNICODE_DECIMAL_NUMBER:
    case G_UNICODE_LETTER_NUMBER:
    case G_UNICODE_OTHER_NUMBER:
      return TRUE;
    default:
      return c == '_' || g_unichar_isalpha (c);
    }
}

guint
catchup_text_count_tokens (const char *text)
{
  g_autofree char *valid = NULL;
  guint n = 0;
  gboolean in_word = FALSE;

  if (text == NULL)
    return 0;
  /* an invalid byte becomes U+FFFD, a mark of its own, as the reference counter would see it */
  if (!g_utf8_validate (text, -1, NULL))
    text = valid = g_utf8_make_valid (text, -1);
  for (const char *p = text; *p; p = g_utf8_next_char (p))
    {
      gunichar c = (guchar) *p < 0x80 ? (gunichar) *p : g_utf8_get_char (p);
      gboolean word = c < 0x80 ? (g_ascii_isalnum (c) || c == '_') : is_word_char (c);

      if (word)
        {
          n += !in_word;
          in_word = TRUE;
        }
      else
        {
          in_word = FALSE;
          n += !g_unichar_isspace (c);
        }
    }
  return n;
}

guint
catchup_text_count_turn (const char *speaker, const char *text)
{
  /* "speaker: text" = speaker's tokens + the colon + text's tokens */
  return catchup_text_count_tokens (speaker) + 1 + catchup_text_count_tokens (text);
}

char *
catchup_text_fts_or (GPtrArray *terms, guint max_terms)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GString) q = g_string_new (NULL);
  guint n = 0;

  for (guint i = 0; i < terms->len && n < max_terms; i++)
    {
      const char *w = terms->pdata[i];

      if (!g_hash_table_add (seen, (gpointer) w))
        continue;
      if (n++ > 0)
        g_string_append (q, " OR ");
      /* A quoted string is always a phrase to FTS5: operators, '*', '^' lose their meaning inside it. */
      g_string_append_c (q, '"');
      for (const char *p = w; *p; p++)
        {
          if (*p == '"')
            g_string_append_c (q, '"');
          g_string_append_c (q, *p);
        }
      g_string_append_c (q, '"');
    }
  return n ? g_string_free (g_steal_pointer (&q), FALSE) : NULL;
}

char *
catchup_text_fts_query (const char *text, guint max_terms)
{
  g_autoptr (GPtrArray) words = text_words (text, TRUE, TRUE);

  return catchup_text_fts_or (words, max_terms);
}

/* ---------- cleaning what comes in and what goes out ---------- */

typedef enum { KEEP, DROP, SPACE, NEWLINE } CharFate;

static gboolean
is_bidi_control (gunichar c)
{
  return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

static CharFate
char_fate (gunichar c, CatchupTextLines lines, gboolean display)
{
  gboolean multi = lines == CATCHUP_TEXT_MULTI_LINE;

  if (c == '\t')
    return multi ? KEEP : SPACE;
  if (c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x85 || c == 0x2028 || c == 0x2029)
    return multi ? NEWLINE : SPACE;
  if (c < 0x20 || (c >= 0x7F && c <= 0x9F))
    return DROP;
  if (display && is_bidi_control (c))
    return DROP;
  return KEEP;
}

/* Whether text is printable ASCII throughout: most chat lines are, and need no copy by character. */
static gboolean
is_plain_ascii (const char *text, const char *end)
{
  for (const char *p = text; p < end; p++)
    if ((guchar) *p < 0x20 || (guchar) *p >= 0x7F)
      return FALSE;
  return TRUE;
}

static char *
clean (const char *text, gssize len, CatchupTextLines lines, gboolean display)
{
  const char *p, *end, *run;
  GString *out;

  if (text == NULL)
    return g_strdup ("");
  end = text + (len < 0 ? strlen (text) : (gsize) len);
  if (is_plain_ascii (text, end))
    return g_strndup (text, end - text);
  out = g_string_sized_new (end - text);
  /* characters kept are copied in runs, up to the next one that is not */
  for (p = run = text; p < end;)
    {
      gunichar c = (guchar) *p;
      const char *next = p + 1;
      CharFate fate;

      if (c >= 0x80)
        {
          c = g_utf8_get_char_validated (p, end - p);
          next = c == (gunichar) -1 || c == (gunichar) -2 ? p + 1 : g_utf8_next_char (p);
        }
      fate = c == (gunichar) -1 || c == (gunichar) -2 ? DROP : char_fate (c, lines, display);
      if (fate == KEEP)
        {
          p = next;
          continue;
        }
      g_string_append_len (out, run, p - run);
      if (c == (gunichar) -1 || c == (gunichar) -2)
        g_string_append_unichar (out, 0xFFFD);
      else if (fate == SPACE)
        g_string_append_c (out, ' ');
      /* CR LF is one line end */
      else if (fate == NEWLINE && !(c == '\r' && next < end && *next == '\n'))
        g_string_append_c (out, '\n');
      p = run = next;
    }
  g_string_append_len (out, run, p - run);
  return g_string_free (out, FALSE);
}

char *
catchup_text_clean (const char *text, gssize len, CatchupTextLines lines)
{
  return clean (text, len, lines, FALSE);
}

char *
catchup_text_sanitize (const char *text)
{
  return clean (text, -1, CATCHUP_TEXT_ONE_LINE, TRUE);
}

/* ---- phrases on word boundaries ---- */

static gboolean
is_word_at (const char *p)
{
  gunichar c = g_utf8_get_char_validated (p, -1);
  return *p && (c < 0x80 ? (g_ascii_isalnum (c) || c == '_') : is_word_char (c));
}

gboolean
catchup_text_has_folded_phrase (const char *folded_text, const char *folded_phrase)
{
  gsize len;

  if (!folded_text || !folded_phrase || !*folded_phrase)
    return FALSE;
  len = strlen (folded_phrase);
  gboolean need_left = is_word_at (folded_phrase);
  gboolean need_right = is_word_at (g_utf8_find_prev_char (folded_phrase, folded_phrase + len));
  for (const char *p = strstr (folded_text, folded_phrase); p; p = strstr (p + 1, folded_phrase)) {
    const char *before = p > folded_text ? g_utf8_find_prev_char (folded_text, p) : NULL;
    gboolean left = !need_left || !before || !is_word_at (before);
    gboolean right = !need_right || !is_word_at (p + len);
    if (left && right)
      return TRUE;
  }
  return FALSE;
}

gboolean
catchup_text_has_phrase (const char *text, const char *phrase)
{
  g_autofree char *t = g_utf8_casefold (text ? text : "", -1);
  g_autofree char *ph = g_utf8_casefold (phrase ? phrase : "", -1);
  return catchup_text_has_folded_phrase (t, ph);
}

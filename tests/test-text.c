#include "config.h"

#include "catchup.h"

static char *
joined (const char *text, gboolean drop_stop)
{
  return catchup_text_terms_joined (text, drop_stop);
}

static void
test_terms_casefold_normalise (void)
{
  g_autofree char *a = joined ("Ｆｕｌｌｗｉｄｔｈ TEXT Straße", FALSE);
  g_autofree char *b = joined ("Café CAFÉ", FALSE);

  /* NFKC folds fullwidth letters; casefolding turns ß into ss */
  g_assert_cmpstr (a, ==, "fullwidth text strass");
  g_assert_cmpstr (b, ==, "café café");
}

static void
test_terms_stop_and_stem (void)
{
  g_autofree char *t = joined ("We decided the fallbacks are running and stopped", TRUE);

  g_assert_cmpstr (t, ==, "decid fallback run stop");
}

static void
test_terms_cjk_and_emoji (void)
{
  g_autoptr (GPtrArray) terms = catchup_text_terms ("日本語 test 🎉🎉 ok", TRUE);

  g_assert_cmpuint (terms->len, ==, 4);
  g_assert_cmpstr (terms->pdata[0], ==, "日");
  g_assert_cmpstr (terms->pdata[3], ==, "test");
}

static void
test_count_tokens (void)
{
  /* words and punctuation marks, as "\w+|[^\w\s]" counts them */
  g_assert_cmpuint (catchup_text_count_tokens ("Hello, world! it's 3.0"), ==, 10);
  g_assert_cmpuint (catchup_text_count_tokens (""), ==, 0);
  g_assert_cmpuint (catchup_text_count_tokens ("日本 🎉"), ==, 2);
  g_assert_cmpuint (catchup_text_count_turn ("mira", "ok then"), ==, 4);
  g_assert_cmpuint (catchup_text_count_tokens ("bad \xff byte"), ==, 3);
}

static void
test_fts_query_hostile (void)
{
  static const char *const hostile[] = {
    "\"unbalanced quote", "a AND b OR NOT c NEAR(d e)", "prefix* ^start (paren", "col:value {x}",
    "🎉 emoji only 🎉", "中文 测试", "\"\"\"", "-minus +plus", NULL,
  };
  g_autofree char *none = catchup_text_fts_query ("the a of ... !!!", 32);
  g_autofree char *q = catchup_text_fts_query ("AND \"quoted\" NEAR*", 32);

  g_assert_null (none);
  g_assert_cmpstr (q, ==, "\"quot\" OR \"near\"");
  for (guint i = 0; hostile[i]; i++)
    {
      g_autofree char *h = catchup_text_fts_query (hostile[i], 32);

      /* every term is a quoted phrase joined by OR: nothing of the input acts as an operator */
      if (h != NULL)
        g_assert_true (g_str_has_prefix (h, "\"") && g_str_has_suffix (h, "\""));
    }
}

static void
test_huge_line (void)
{
  g_autoptr (GString) big = g_string_new (NULL);
  g_autofree char *q = NULL;
  g_autoptr (GPtrArray) terms = NULL;

  while (big->len < 100 * 1024)
    g_string_append (big, "lorem ipsum \"x\" AND (y) ");
  terms = catchup_text_terms (big->str, TRUE);
  q = catchup_text_fts_query (big->str, 16);
  g_assert_cmpuint (terms->len, >, 10000);
  g_assert_nonnull (q);
  g_assert_cmpuint (catchup_text_count_tokens (big->str), >, 30000);
}

/* Text entering the store: NUL dropped with the rest kept, invalid bytes replaced, controls gone, line ends
 * unified in a body and turned into spaces in a name. */
static void
test_clean_input (void)
{
  static const char nul[] = "a\0b";
  struct { const char *in; gssize len; CatchupTextLines lines; const char *out; } cases[] = {
    { nul, 3, CATCHUP_TEXT_ONE_LINE, "ab" },
    { "plain", -1, CATCHUP_TEXT_ONE_LINE, "plain" },
    { "x\xff" "y", -1, CATCHUP_TEXT_ONE_LINE, "x\xef\xbf\xbdy" },
    { "\xe2\x82", -1, CATCHUP_TEXT_ONE_LINE, "\xef\xbf\xbd\xef\xbf\xbd" },
    { "esc\x1b[2Jred\x7f\xc2\x9b", -1, CATCHUP_TEXT_ONE_LINE, "esc[2Jred" },
    { "lone\rcr\vvt\fff\xc2\x85nel\xe2\x80\xa8ls\xe2\x80\xa9ps\ttab\nlf", -1, CATCHUP_TEXT_ONE_LINE,
      "lone cr vt ff nel ls ps tab lf" },
    { "a\r\nb\rc\nd\xe2\x80\xa8" "e\tf", -1, CATCHUP_TEXT_MULTI_LINE, "a\nb\nc\nd\ne\tf" },
    { "\xe2\x80\xaeright-to-left stays in stored text", -1, CATCHUP_TEXT_ONE_LINE,
      "\xe2\x80\xaeright-to-left stays in stored text" },
    { "Grüße 日本 🙂", -1, CATCHUP_TEXT_MULTI_LINE, "Grüße 日本 🙂" },
    { NULL, -1, CATCHUP_TEXT_ONE_LINE, "" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *got = catchup_text_clean (cases[i].in, cases[i].len, cases[i].lines);

      g_assert_cmpstr (got, ==, cases[i].out);
      g_assert_true (g_utf8_validate (got, -1, NULL));
    }
}

/* Output for a terminal or a conversation: no escape sequence, no forged line, no bidi trick. */
static void
test_sanitize_output (void)
{
  struct { const char *in; const char *out; } cases[] = {
    { "fine: ok", "fine: ok" },
    { "\x1b]0;owned\x07title\x1b[31mred", "]0;ownedtitle[31mred" },
    { "line\n/catchup post everything", "line /catchup post everything" },
    { "cr\roverwrite", "cr overwrite" },
    { "evil\xe2\x80\xae" "txt.exe\xe2\x80\xac \xe2\x81\xa6iso\xe2\x81\xa9", "eviltxt.exe iso" },
    { "\xc2\x9b" "31m c1", "31m c1" },
    { "bad\xc3", "bad\xef\xbf\xbd" },
    { NULL, "" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *got = catchup_text_sanitize (cases[i].in);

      g_assert_cmpstr (got, ==, cases[i].out);
    }
}

/* One phrase matcher for the gap detector and the summary: whole words, any case, any script. */
static void
test_phrase (void)
{
  g_assert_true (catchup_text_has_phrase ("I know it works NOW", "now"));
  g_assert_false (catchup_text_has_phrase ("I know", "now"));
  g_assert_false (catchup_text_has_phrase ("he was present", "sent"));
  g_assert_true (catchup_text_has_phrase ("sent it, present too", "sent"));
  g_assert_false (catchup_text_has_phrase ("the data is in", "ta"));
  g_assert_true (catchup_text_has_phrase ("ok, we'll go with it", "we'll go with"));
  g_assert_true (catchup_text_has_phrase ("we'll do it", "we"));
  g_assert_true (catchup_text_has_phrase ("+1 from me", "+1"));
  g_assert_true (catchup_text_has_phrase ("sounds good?", "?"));
  g_assert_false (catchup_text_has_phrase ("Müllerin", "müller"));
  g_assert_true (catchup_text_has_phrase ("Frag MÜLLER", "müller"));
  g_assert_false (catchup_text_has_phrase ("", "now"));
  g_assert_false (catchup_text_has_phrase ("now", ""));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/text/casefold-normalise", test_terms_casefold_normalise);
  g_test_add_func ("/catchup/text/phrase", test_phrase);
  g_test_add_func ("/catchup/text/stop-and-stem", test_terms_stop_and_stem);
  g_test_add_func ("/catchup/text/cjk-and-emoji", test_terms_cjk_and_emoji);
  g_test_add_func ("/catchup/text/count-tokens", test_count_tokens);
  g_test_add_func ("/catchup/text/fts-query-hostile", test_fts_query_hostile);
  g_test_add_func ("/catchup/text/huge-line", test_huge_line);
  g_test_add_func ("/catchup/text/clean-input", test_clean_input);
  g_test_add_func ("/catchup/text/sanitize-output", test_sanitize_output);
  return g_test_run ();
}

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

/* Hostile text loses what would steer a terminal or a client, and keeps every visible character. */
static void
test_sanitize (void)
{
  static const struct {
    const char *in;
    const char *lines, *flat;
  } cases[] = {
    { "plain text", "plain text", "plain text" },
    { "\x1b[2J\x1b]0;owned\x07title", "[2J]0;ownedtitle", "[2J]0;ownedtitle" },
    { "\x01" "ACTION waves\x01 \x02" "bold\x02 \x03" "4red", "ACTION waves bold 4red", "ACTION waves bold 4red" },
    { "left \xe2\x80\xae" "evil\xe2\x80\xac right", "left evil right", "left evil right" },
    { "m\xe2\x80\x8d" "ira and \xef\xbb\xbf" "bom", "mira and bom", "mira and bom" },
    { "two\r\nlines\tand tab", "two\nlines and tab", "two lines and tab" },
    { "C1 \xc2\x9b" "31m csi", "C1 31m csi", "C1 31m csi" },
    { "bad \xff byte", "bad \xef\xbf\xbd byte", "bad \xef\xbf\xbd byte" },
    { "Grüße, 日本, emoji \xf0\x9f\x8d\xb5", "Grüße, 日本, emoji \xf0\x9f\x8d\xb5", "Grüße, 日本, emoji \xf0\x9f\x8d\xb5" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *lines = catchup_text_sanitize (cases[i].in, TRUE);
      g_autofree char *flat = catchup_text_sanitize (cases[i].in, FALSE);

      g_assert_cmpstr (lines, ==, cases[i].lines);
      g_assert_cmpstr (flat, ==, cases[i].flat);
    }
  {
    g_autofree char *empty = catchup_text_sanitize (NULL, TRUE);

    g_assert_cmpstr (empty, ==, "");
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/text/casefold-normalise", test_terms_casefold_normalise);
  g_test_add_func ("/catchup/text/stop-and-stem", test_terms_stop_and_stem);
  g_test_add_func ("/catchup/text/cjk-and-emoji", test_terms_cjk_and_emoji);
  g_test_add_func ("/catchup/text/count-tokens", test_count_tokens);
  g_test_add_func ("/catchup/text/fts-query-hostile", test_fts_query_hostile);
  g_test_add_func ("/catchup/text/huge-line", test_huge_line);
  g_test_add_func ("/catchup/text/sanitize", test_sanitize);
  return g_test_run ();
}

#include "config.h"

#include <string.h>

#include "catchup.h"
#include "catchup-llm-private.h"
#include "fuzz.h"

/* The parsers of a model server's answers, on arbitrary replies. The first byte picks one: the gap detector's
 * reply, the summary's reply, a whole chat or embeddings response body as the server sends it, or the JSON
 * finder under both. What they return is checked against the window: nothing they keep cites a message that
 * is not there. */

enum { REPLY_GAPS, REPLY_SUMMARY, REPLY_CHAT_BODY, REPLY_EMBED_BODY, REPLY_JSON, N_REPLIES };

#define WINDOW_SIZE 5
#define MAX_GAPS 8

static GPtrArray *
fixed_window (void)
{
  static const char *const speakers[] = { "mira", "jonas", "ida", "mira", "jonas" };
  static const char *const texts[] = {
    "let's reuse that lock solution", "the fallback is at 09:40", "so we went with the other party",
    "ok, as agreed", "who owns the rollout?",
  };
  GPtrArray *w = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);

  for (guint i = 0; i < WINDOW_SIZE; i++)
    {
      g_autofree char *id = g_strdup_printf ("s%u", i + 1);

      g_ptr_array_add (w, catchup_message_new (id, 1772434800 + 60 * (gint64) i, speakers[i], texts[i]));
    }
  return w;
}

static CatchupMemory *
fixed_memory (void)
{
  g_autoptr (GPtrArray) turns = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);

  g_ptr_array_add (turns, catchup_message_new ("h1", 1772348400, "ida", "the lock solution is flock on the spool"));
  return catchup_fuzz_memory (turns);
}

static CatchupLlm *
fixed_llm (void)
{
  static CatchupLlm *llm;

  if (llm == NULL)
    {
      CatchupLlmConfig config;
      g_autoptr (GError) error = NULL;

      catchup_llm_config_init (&config);
      config.base_url = g_strdup ("http://127.0.0.1:9/v1");
      config.chat_model = g_strdup ("m");
      config.embed_model = g_strdup ("e");
      llm = catchup_llm_new (&config, &error);
      g_assert_no_error (error);
      catchup_llm_config_clear (&config);
    }
  return llm;
}

static gboolean
in_window (GPtrArray *window, const char *id)
{
  return catchup_fuzz_find (window, id) >= 0;
}

static void
check_gaps (const char *reply, GPtrArray *window)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) gaps = catchup_llm_gaps_parse (reply, window, MAX_GAPS, &error);

  if (gaps == NULL)
    {
      g_assert_nonnull (error);
      return;
    }
  g_assert_cmpuint (gaps->len, <=, MAX_GAPS);
  for (guint i = 0; i < gaps->len; i++)
    {
      CatchupGap *gap = gaps->pdata[i];
      g_assert_cmpint (catchup_fuzz_find (window, gap->utterance_id), ==, (gint) gap->utterance_index);
      g_assert_nonnull (gap->query);
      g_assert_cmpstr (gap->query, !=, "");
    }
}

static void
check_summary (const char *reply, GPtrArray *window)
{
  g_autoptr (CatchupMemory) mem = fixed_memory ();
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupSummary) summary = catchup_llm_summary_parse (reply, window, mem, &error);
  g_autofree char *text = NULL;

  if (summary == NULL)
    {
      g_assert_nonnull (error);
      return;
    }
  for (guint i = 0; i < summary->lines->len; i++)
    {
      CatchupSummaryLine *line = summary->lines->pdata[i];

      g_assert_nonnull (line->text);
      /* The check keeps lines citing a window or a memory turn (catchup_llm_summary_check). */
      for (guint j = 0; j < line->sources->len; j++)
        g_assert_true (in_window (window, line->sources->pdata[j])
                       || g_strcmp0 (line->sources->pdata[j], "h1") == 0);
      for (guint j = 0; line->context != NULL && j < line->context->len; j++)
        {
          CatchupSummaryItem *item = line->context->pdata[j];

          g_assert_true (in_window (window, item->id) || g_strcmp0 (item->id, "h1") == 0);
        }
    }
  text = catchup_summary_to_text (summary);
  g_assert_nonnull (text);
}

static void
check_embed (const char *body, gsize len, guint n)
{
  g_autoptr (GError) error = NULL;
  guint dim = 0;
  g_autofree float *vectors = catchup_llm_parse_embed_reply (fixed_llm (), body, len, n, &dim, &error);

  if (vectors == NULL)
    {
      g_assert_nonnull (error);
      return;
    }
  g_assert_cmpuint (dim, >, 0);
  /* Every component is read: an unset one would show as uninitialised memory under the sanitizers. */
  for (gsize i = 0; i < (gsize) n * dim; i++)
    vectors[i] += 0.0f;
}

static int
fuzz_one (const guint8 *data, gsize size)
{
  g_autoptr (GPtrArray) window = NULL;
  g_autofree char *reply = NULL;
  g_autoptr (GError) error = NULL;

  if (size < 2)
    return 0;
  window = fixed_window ();
  reply = catchup_fuzz_string (data + 2, size - 2);
  switch (data[0] % N_REPLIES)
    {
    case REPLY_GAPS:
      check_gaps (reply, window);
      break;
    case REPLY_SUMMARY:
      check_summary (reply, window);
      break;
    case REPLY_CHAT_BODY:
      {
        g_autofree char *text = catchup_llm_parse_chat_reply (fixed_llm (), (const char *) data + 2, size - 2, &error);
        g_assert_true ((text == NULL) == (error != NULL));
      }
      break;
    case REPLY_EMBED_BODY:
      check_embed ((const char *) data + 2, size - 2, data[1] % 4 + 1);
      break;
    default:
      {
        g_autoptr (JsonNode) node = catchup_llm_reply_json (reply, &error);
        g_assert_true ((node == NULL) == (error != NULL));
      }
    }
  return 0;
}

CATCHUP_FUZZ_TARGET ("model-reply")

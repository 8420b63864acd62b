#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

char *
catchup_fuzz_string (const guint8 *data, gsize size)
{
  return g_strndup ((const char *) data, size);
}

GPtrArray *
catchup_fuzz_split (const guint8 *data, gsize size, char sep, guint max)
{
  GPtrArray *pieces = g_ptr_array_new_with_free_func (g_free);
  const char *p = (const char *) data, *end = p + size;

  while (p <= end && pieces->len + 1 < max)
    {
      const char *stop = memchr (p, sep, end - p);

      if (stop == NULL)
        break;
      g_ptr_array_add (pieces, g_strndup (p, stop - p));
      p = stop + 1;
    }
  g_ptr_array_add (pieces, g_strndup (p, end - p));
  return pieces;
}

gint
catchup_fuzz_find (GPtrArray *msgs, const char *id)
{
  for (guint i = 0; i < msgs->len; i++)
    if (g_strcmp0 (((CatchupMessage *) msgs->pdata[i])->id, id) == 0)
      return (gint) i;
  return -1;
}

CatchupMemory *
catchup_fuzz_memory (GPtrArray *turns)
{
  CatchupMemory *mem = g_new0 (CatchupMemory, 1);

  mem->turns = g_ptr_array_ref (turns);
  mem->gaps = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_gap_free);
  mem->gap_of = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < turns->len; i++)
    {
      CatchupMessage *m = turns->pdata[i];

      g_hash_table_insert (mem->gap_of, g_strdup (m->id), GINT_TO_POINTER (0));
      mem->tokens += catchup_text_count_turn (m->speaker, m->text);
    }
  return mem;
}

#define REOPEN_EVERY 500

CatchupStore *
catchup_fuzz_store (void)
{
  static CatchupStore *store;
  static guint uses;
  g_autoptr (GError) error = NULL;

  if (store != NULL && ++uses % REOPEN_EVERY == 0)
    g_clear_pointer (&store, catchup_store_close);
  if (store == NULL)
    store = catchup_store_open (":memory:", &error);
  g_assert_no_error (error);
  return store;
}

#ifdef CATCHUP_FUZZING
int LLVMFuzzerInitialize (int *argc, char ***argv);

/* As under g_test_init, a critical (a g_return_if_fail reached) or a warning is a finding; it aborts rather
 * than trapping, so that libFuzzer keeps the input. */
static GLogWriterOutput
fatal_writer (GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
  GLogWriterOutput out = g_log_writer_standard_streams (level, fields, n_fields, user_data);

  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
    abort ();
  return out;
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  g_log_set_writer_func (fatal_writer, NULL, NULL);
  return 0;
}
#else
typedef struct {
  const char *name;
  CatchupFuzzFunc func;
} Replay;

/* Every file of the target's corpus once; an input that crashes fails the test run with its name. */
static void
replay_corpus (gconstpointer data)
{
  const Replay *replay = data;
  g_autofree char *dir_path = g_test_build_filename (G_TEST_DIST, "fuzz", "corpus", replay->name, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GDir) dir = g_dir_open (dir_path, 0, &error);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_assert_no_error (error);
  while ((name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);
  g_assert_cmpuint (names->len, >, 0);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir_path, names->pdata[i], NULL);
      g_autofree char *contents = NULL;
      gsize len = 0;

      g_file_get_contents (path, &contents, &len, &error);
      g_assert_no_error (error);
      g_test_message ("%s", (const char *) names->pdata[i]);
      g_assert_cmpint (replay->func ((const guint8 *) contents, len), ==, 0);
    }
}

int
catchup_fuzz_replay (int argc, char **argv, const char *name, CatchupFuzzFunc func)
{
  static Replay replay;
  g_autofree char *path = g_strdup_printf ("/catchup/fuzz-%s/corpus", name);

  replay.name = name;
  replay.func = func;
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func (path, &replay, replay_corpus);
  return g_test_run ();
}
#endif

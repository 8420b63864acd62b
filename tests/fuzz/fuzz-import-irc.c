#include "config.h"

#include <gio/gio.h>

#include "catchup.h"
#include "fuzz.h"

/* The IRC log importer on arbitrary bytes. Every line it reads is a message (inserted or a duplicate), an
 * event or a reported problem. */
static int
fuzz_one (const guint8 *data, gsize size)
{
  CatchupStore *store = catchup_fuzz_store ();
  g_autoptr (GInputStream) input = g_memory_input_stream_new_from_data (g_memdup2 (data, size), size, g_free);
  g_autoptr (CatchupImportResult) result = catchup_import_result_new ();
  g_autoptr (GError) error = NULL;
  gint64 room = catchup_store_ensure_room (store, "irc", "fuzz", "#c", &error);

  g_assert_no_error (error);
  if (!catchup_import_irc_stream (store, input, room, "2026-03-02", result, NULL, &error))
    g_error ("the import failed on an in-memory store: %s", error->message);
  g_assert_cmpuint (result->inserted + result->duplicates + result->events + result->malformed, ==, result->read);
  g_assert_cmpuint (result->problems->len, ==, result->malformed);
  return 0;
}

CATCHUP_FUZZ_TARGET ("import-irc")

#include "config.h"

#include <gio/gio.h>

#include "catchup.h"
#include "fuzz.h"

/* The JSON Lines importer on arbitrary bytes, into an in-memory store. Every non-blank line is one record,
 * and each record is inserted, a duplicate or reported malformed: nothing is counted twice or lost. */

static int
fuzz_one (const guint8 *data, gsize size)
{
  g_autoptr (GInputStream) input = g_memory_input_stream_new_from_data (g_memdup2 (data, size), size, g_free);
  g_autoptr (CatchupImportResult) result = catchup_import_result_new ();
  g_autoptr (GError) error = NULL;

  if (!catchup_import_jsonl_stream (catchup_fuzz_store (), input, 0, result, NULL, &error))
    g_error ("the import failed on an in-memory store: %s", error->message);
  g_assert_cmpuint (result->inserted + result->duplicates + result->malformed, ==, result->read);
  g_assert_cmpuint (result->problems->len, ==, result->malformed);
  return 0;
}

CATCHUP_FUZZ_TARGET ("import-jsonl")

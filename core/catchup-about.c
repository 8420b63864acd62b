#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-about.h"
#include "catchup-error.h"

void
catchup_about_free (CatchupAbout *about)
{
  if (about == NULL)
    return;
  g_free (about->person);
  g_clear_pointer (&about->said, g_ptr_array_unref);
  g_clear_pointer (&about->asked, g_ptr_array_unref);
  g_clear_pointer (&about->decided, g_ptr_array_unref);
  g_clear_pointer (&about->committed, g_ptr_array_unref);
  g_clear_pointer (&about->open, g_ptr_array_unref);
  g_free (about);
}

char *
catchup_about_resolve (CatchupStore *store, gint64 room, const char *person, GError **error)
{
  g_auto (GStrv) roster = catchup_records_roster (store, room, error);
  const char *name = person && person[0] == '@' ? person + 1 : person;
  g_autofree char *trimmed = g_strstrip (g_strdup (name ? name : ""));
  g_autofree char *want = NULL;

  if (roster == NULL)
    return NULL;
  want = catchup_records_fold (trimmed);
  for (guint i = 0; roster[i]; i++)
    {
      g_autofree char *folded = catchup_records_fold (roster[i]);

      if (*want != '\0' && strcmp (folded, want) == 0)
        return g_strdup (roster[i]);
    }
  g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND, _("Nobody called “%s” has written in this room"),
               name ? name : "");
  return NULL;
}

static GPtrArray *
records_array (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_record_free);
}

/* The window's records sorted by what they say about the person. */
static void
sort_records (CatchupAbout *about, GPtrArray *records, GHashTable *in_window)
{
  for (guint i = 0; i < records->len; i++)
    {
      const CatchupRecord *r = records->pdata[i];
      gboolean here = g_hash_table_contains (in_window, &r->row);
      gboolean own = g_strcmp0 (r->owner, about->person) == 0;
      gboolean request = (r->flags & CATCHUP_RECORD_FLAG_REQUEST) != 0;

      if (here && r->kind == CATCHUP_RECORD_DECISION && g_strcmp0 (r->source, about->person) == 0)
        g_ptr_array_add (about->decided, catchup_record_copy (r));
      if (here && own && r->kind == CATCHUP_RECORD_COMMITMENT && !request)
        g_ptr_array_add (about->committed, catchup_record_copy (r));
      if (own && r->kind == CATCHUP_RECORD_COMMITMENT && r->superseded_by == 0)
        g_ptr_array_add (about->open, catchup_record_copy (r));
    }
}

static void
sort_turns (CatchupAbout *about, GPtrArray *window)
{
  g_autofree char *nick = catchup_records_fold (about->person);

  for (guint i = 0; i < window->len; i++)
    {
      const CatchupMessage *m = window->pdata[i];
      g_autofree char *folded = NULL;

      if (m->flags & CATCHUP_MESSAGE_EVENT)
        continue;
      if (g_strcmp0 (m->speaker, about->person) == 0)
        {
          g_ptr_array_add (about->said, catchup_message_copy (m));
          continue;
        }
      folded = catchup_records_fold (m->text);
      if (catchup_records_has_phrase (folded, nick))
        g_ptr_array_add (about->asked, catchup_message_copy (m));
    }
}

CatchupAbout *
catchup_about_build (CatchupStore *store, gint64 room, GPtrArray *window, const char *person, GError **error)
{
  g_autoptr (CatchupAbout) about = g_new0 (CatchupAbout, 1);
  g_autoptr (GHashTable) in_window = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GPtrArray) records = NULL;

  about->person = catchup_about_resolve (store, room, person, error);
  if (about->person == NULL)
    return NULL;
  /* the window's records must exist before they are read: building is incremental and cheap when current */
  if (!catchup_records_update (store, room, 0, NULL, error) ||
      (records = catchup_records_list (store, room, NULL, FALSE, error)) == NULL)
    return NULL;
  about->said = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  about->asked = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  about->decided = records_array ();
  about->committed = records_array ();
  about->open = records_array ();
  for (guint i = 0; i < window->len; i++)
    g_hash_table_add (in_window, &((CatchupMessage *) window->pdata[i])->row);
  sort_turns (about, window);
  sort_records (about, records, in_window);
  return g_steal_pointer (&about);
}

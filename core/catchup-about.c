#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-about.h"
#include "catchup-error.h"
#include "catchup-nicks.h"

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

/* The window's records sorted by what they say about the person, under any nick they went by. */
static void
sort_records (CatchupAbout *about, GPtrArray *records, GHashTable *in_window, const CatchupNicks *nicks)
{
  for (guint i = 0; i < records->len; i++)
    {
      const CatchupRecord *r = records->pdata[i];
      gboolean here = g_hash_table_contains (in_window, &r->row);
      gboolean own = catchup_nicks_same (nicks, r->owner, about->person);
      gboolean request = (r->flags & CATCHUP_RECORD_FLAG_REQUEST) != 0;

      if (here && r->kind == CATCHUP_RECORD_DECISION && catchup_nicks_same (nicks, r->source, about->person))
        g_ptr_array_add (about->decided, catchup_record_copy (r));
      if (here && own && r->kind == CATCHUP_RECORD_COMMITMENT && !request)
        g_ptr_array_add (about->committed, catchup_record_copy (r));
      if (own && r->kind == CATCHUP_RECORD_COMMITMENT && r->superseded_by == 0)
        g_ptr_array_add (about->open, catchup_record_copy (r));
    }
}

/* Whether folded text names one of the person's nicks. */
static gboolean
names_person (const char *folded, char **folded_nicks)
{
  for (guint i = 0; folded_nicks[i] != NULL; i++)
    if (catchup_records_has_phrase (folded, folded_nicks[i]))
      return TRUE;
  return FALSE;
}

static void
sort_turns (CatchupAbout *about, GPtrArray *window, const CatchupNicks *nicks)
{
  g_auto (GStrv) folded_nicks = catchup_nicks_aliases (nicks, about->person);

  for (guint i = 0; folded_nicks[i] != NULL; i++)
    {
      char *folded = catchup_records_fold (folded_nicks[i]);

      g_free (folded_nicks[i]);
      folded_nicks[i] = folded;
    }

  for (guint i = 0; i < window->len; i++)
    {
      const CatchupMessage *m = window->pdata[i];
      g_autofree char *folded = NULL;

      if (catchup_nicks_same (nicks, m->speaker, about->person))
        {
          g_ptr_array_add (about->said, catchup_message_copy (m));
          continue;
        }
      folded = catchup_records_fold (m->text);
      if (names_person (folded, folded_nicks))
        g_ptr_array_add (about->asked, catchup_message_copy (m));
    }
}

CatchupAbout *
catchup_about_build (CatchupStore *store, gint64 room, GPtrArray *window, const char *person, GError **error)
{
  g_autoptr (CatchupAbout) about = g_new0 (CatchupAbout, 1);
  g_autoptr (GHashTable) in_window = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GPtrArray) records = NULL;
  g_autoptr (CatchupNicks) nicks = NULL;

  about->person = catchup_about_resolve (store, room, person, error);
  if (about->person == NULL || (nicks = catchup_nicks_load (store, room, error)) == NULL)
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
  sort_turns (about, window, nicks);
  sort_records (about, records, in_window, nicks);
  return g_steal_pointer (&about);
}

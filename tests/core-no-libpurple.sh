#!/bin/sh
# core/ is the UI-independent library: no file in it may include a libpurple header.
# Fails, naming the file and line, when one does.
srcdir=${top_srcdir:-$(dirname "$0")/..}
core=$srcdir/core
if [ ! -d "$core" ]; then
  echo "core/ not found under $srcdir" >&2
  exit 99
fi
# libpurple headers: <purple.h>, <libpurple/...>, and the bare names its pkg-config include path allows.
purple_headers='account|accountopt|blist|cmds|connection|conversation|core|debug|eventloop|notify|plugin|pluginpref|prefs|privacy|prpl|purple|request|server|signals|util|version|xmlnode|status|savedstatuses|sound|imgstore|dnsquery|proxy|network|roomlist|ft|whiteboard|idle|log'
hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]((libpurple|purple)/[^>\"]*|($purple_headers)\.h)[>\"]" \
         "$core" --include='*.c' --include='*.h' 2>/dev/null)
if [ -n "$hits" ]; then
  echo "libpurple include(s) in core/:" >&2
  echo "$hits" >&2
  exit 1
fi
n=$(find "$core" -name '*.[ch]' | wc -l)
echo "ok: $n files in core/, none includes libpurple"
exit 0

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Item 5 of issue 22: no built program or library may search an empty or relative
# RUNPATH/RPATH entry, which the dynamic linker resolves against the current directory
# (an empty entry is "."). Entries starting with $ORIGIN are anchored to the file, not
# to the current directory, and are allowed.
#   runpath_check.sh DIR...   checks every ELF file directly in each DIR
command -v readelf >/dev/null 2>&1 || { echo "readelf not found: cannot check"; exit 77; }
checked=0
problems=$(
  for dir in "$@"; do
    for file in "$dir"/*; do
      [ -f "$file" ] || continue
      [ "$(head -c 4 "$file" | od -An -c | tr -d ' \n')" = "177ELF" ] || continue
      readelf -d "$file" 2>/dev/null | sed -n 's/.*Library \(runpath\|rpath\): \[\(.*\)\]$/\1 \2/p' |
        while read -r kind value; do
          rest="$value:" # one ':' more, so that every entry, empty ones too, ends in ':'
          while [ -n "$rest" ]; do
            entry="${rest%%:*}"
            rest="${rest#*:}"
            case "$entry" in
              /* | '$ORIGIN'* | '${ORIGIN}'*) ;;
              "") echo "$file: empty $kind entry in [$value]" ;;
              *) echo "$file: relative $kind entry '$entry' in [$value]" ;;
            esac
          done
        done
    done
  done
)
for dir in "$@"; do
  for file in "$dir"/*; do
    [ -f "$file" ] && [ "$(head -c 4 "$file" | od -An -c | tr -d ' \n')" = "177ELF" ] && checked=$((checked + 1))
  done
done
echo "checked $checked ELF files in: $*"
[ -z "$problems" ] && exit 0
echo "$problems"
exit 1

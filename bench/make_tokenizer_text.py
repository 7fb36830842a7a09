#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the tokenizer benchmark's text: about 1 MiB of many scripts, from what a Debian machine set up by
scripts/setup.sh has (nothing is downloaded). Round-robin over languages, a translated string of GTK 3's catalogue
(/usr/share/locale/LANG/LC_MESSAGES/gtk30.mo: ~118 languages, Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari,
Bengali, Tamil, Thai, CJK, Hangul, ...) at a time, with a slice of C++ source (libstdc++'s <algorithm> internals)
every 64 KiB: prose, UI strings with format codes, code, whitespace runs and digits. The same packages give the
same bytes (its sha256 is printed on stderr, for the README's figures).

usage: make_tokenizer_text.py OUT [BYTES]"""
import gettext
import glob
import hashlib
import os
import sys


def catalogue(path):
    with open(path, "rb") as f:
        strings = gettext.GNUTranslations(f)._catalog
    out = []
    for key in sorted(strings, key=lambda k: k if isinstance(k, str) else k[0]):
        value = strings[key]
        if key and isinstance(value, str) and value and value != key:
            out.append(value)
    return out


def main():
    out_path = sys.argv[1]
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 20
    languages = []
    for path in sorted(glob.glob("/usr/share/locale/*/LC_MESSAGES/gtk30.mo")):
        strings = catalogue(path)
        if strings:
            languages.append(strings)
    if not languages:
        sys.exit("no /usr/share/locale/*/LC_MESSAGES/gtk30.mo: install chromium (scripts/setup.sh), which brings GTK 3")
    code_path = "/usr/include/c++/12/bits/stl_algo.h"
    code = open(code_path, encoding="utf-8").read() if os.path.exists(code_path) else ""
    text = []
    total = 0
    next_code = 1 << 16
    code_at = 0
    i = 0
    while total < size:
        strings = languages[i % len(languages)]
        piece = strings[(i // len(languages)) % len(strings)] + ("\n" if i % 7 == 6 else " ")
        i += 1
        text.append(piece)
        total += len(piece.encode("utf-8"))
        if code and total >= next_code:
            chunk = code[code_at:code_at + 4096] + "\n"
            code_at = (code_at + 4096) % max(1, len(code) - 4096)
            text.append(chunk)
            total += len(chunk.encode("utf-8"))
            next_code += 1 << 16
    data = "".join(text).encode("utf-8")
    with open(out_path, "wb") as f:
        f.write(data)
    print(f"{out_path}: {len(data)} bytes, {len(languages)} languages, sha256 {hashlib.sha256(data).hexdigest()}",
          file=sys.stderr)


if __name__ == "__main__":
    main()

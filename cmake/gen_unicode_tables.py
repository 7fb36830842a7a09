#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates core/unicode's tables (unicode_tables.cpp) from the Unicode Character Database files that
Debian's unicode-data package installs in /usr/share/unicode (15.0.0 on Debian 12). Run by CMake at build
time (core/CMakeLists.txt); nothing it writes is committed.

Inputs: UnicodeData.txt (general category, simple case mappings, combining classes, decompositions),
PropList.txt (White_Space), CaseFolding.txt (simple case folding, for case-insensitive regex matching),
Scripts.txt (\\p{Han} ...), DerivedNormalizationProps.txt (Full_Composition_Exclusion), DerivedAge.txt (the
version that assigned each code point), auxiliary/GraphemeBreakProperty.txt and emoji/emoji-data.txt
(Extended_Pictographic): UAX #29's grapheme clusters.

Outputs (see unicode_tables.h for the declarations):
  kUnicodeStage1 / kUnicodeStage2  two-stage table, one byte per code point: the general category
                                   (UnicodeCategory's order, low 5 bits) | 0x20 when White_Space
  kUnicodeLower / Upper / Title    sorted (code point, mapping) pairs: UnicodeData.txt fields 13, 12, 14
  kUnicodeFold                     sorted (code point, folded) pairs: CaseFolding.txt statuses C and S
  kUnicodeScriptNames, kUnicodeScriptRanges  sorted (first, last, script index) from Scripts.txt
  kUnicodeAgeAtMost9Ranges         sorted (first, last), adjacent ones merged: the code points DerivedAge.txt dates
                                   9.0 or earlier (Hugging Face's UnicodeScripts knows Unicode 9.0's scripts only)
  kGraphemeRanges                  sorted (first, last, GraphemeBreak) from GraphemeBreakProperty.txt, with
                                   Extended_Pictographic as one more value (no code point has both)
and, in the second output (--norm-out, unicode_norm_tables.cpp: only what normalizes links it):
  kCccRanges                       (first, last, canonical combining class) where it is not 0
  kDecompositions / kDecompositionPool  per code point with a decomposition, its full (recursive) canonical and
                                   compatibility decompositions (Hangul syllables are algorithmic, not listed)
  kCompositions                    sorted (first, second, composite): the primary composites
"""
import argparse
import os
import sys

# The order of ws::UnicodeCategory (include/weightstream/unicode.h); Cn (unassigned) is 0.
CATEGORIES = ["Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe",
              "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"]
# The order of ws::GraphemeBreak (include/weightstream/unicode.h); Other (0) is not listed in the ranges.
GRAPHEME_BREAKS = ["Other", "CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator", "Prepend", "SpacingMark",
                   "L", "V", "T", "LV", "LVT", "Extended_Pictographic"]
WHITE_SPACE = 0x20
MAX_CP = 0x110000
BLOCK = 128  # code points per stage-2 block


def data_lines(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                yield [field.strip() for field in line.split(";")]


def cp_range(text):
    if ".." in text:
        a, b = text.split("..")
        return int(a, 16), int(b, 16)
    return int(text, 16), int(text, 16)


def value_ranges(values):
    """{code point: value} -> sorted [first, last, value] rows, each a run of consecutive code points of one value."""
    ranges = []
    for cp in sorted(values):
        if ranges and ranges[-1][1] == cp - 1 and ranges[-1][2] == values[cp]:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp, values[cp]])
    return ranges


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True, help="the UCD folder (/usr/share/unicode)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--norm-out", required=True)
    args = parser.parse_args()
    ucd = lambda name: os.path.join(args.data, name)

    cat = bytearray(MAX_CP)  # 0 = Cn
    lower, upper, title = [], [], []
    ccc = {}
    decomp = {}  # cp -> (compat, [cps])
    first = None
    with open(ucd("UnicodeData.txt"), encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(";")
            if len(fields) != 15:
                continue
            cp = int(fields[0], 16)
            c = CATEGORIES.index(fields[2])
            if fields[1].endswith(", First>"):
                first = cp
                continue
            if fields[1].endswith(", Last>"):
                for x in range(first, cp + 1):
                    cat[x] = c
                continue
            cat[cp] = c
            if int(fields[3]):
                ccc[cp] = int(fields[3])
            if fields[5]:
                parts = fields[5].split()
                compat = parts[0].startswith("<")
                decomp[cp] = (compat, [int(x, 16) for x in (parts[1:] if compat else parts)])
            if fields[12]:
                upper.append((cp, int(fields[12], 16)))
            if fields[13]:
                lower.append((cp, int(fields[13], 16)))
            if fields[14]:
                title.append((cp, int(fields[14], 16)))

    ws_count = 0
    for fields in data_lines(ucd("PropList.txt")):
        if fields[1] == "White_Space":
            a, b = cp_range(fields[0])
            for x in range(a, b + 1):
                cat[x] |= WHITE_SPACE
                ws_count += 1
    if ws_count != 25:  # the 25 of llama.cpp's unicode_set_whitespace and Unicode 15
        sys.exit("gen_unicode_tables: expected 25 White_Space code points, found %d" % ws_count)

    fold = []
    for fields in data_lines(ucd("CaseFolding.txt")):
        if fields[1] in ("C", "S"):
            fold.append((int(fields[0], 16), int(fields[2], 16)))

    script_names = []
    script_ranges = []
    for fields in data_lines(ucd("Scripts.txt")):
        a, b = cp_range(fields[0])
        if fields[1] not in script_names:
            script_names.append(fields[1])
        script_ranges.append((a, b, script_names.index(fields[1])))
    script_ranges.sort()

    # Ages never change once given, so a later DerivedAge.txt gives the same ranges.
    age9_ranges = []
    for fields in sorted(data_lines(ucd("DerivedAge.txt")), key=lambda f: cp_range(f[0])):
        a, b = cp_range(fields[0])
        if tuple(int(x) for x in fields[1].split(".")) > (9, 0):
            continue
        if age9_ranges and age9_ranges[-1][1] == a - 1:
            age9_ranges[-1][1] = b
        else:
            age9_ranges.append([a, b])
    grapheme = {}
    for fields in data_lines(ucd("auxiliary/GraphemeBreakProperty.txt")):
        a, b = cp_range(fields[0])
        for x in range(a, b + 1):
            grapheme[x] = GRAPHEME_BREAKS.index(fields[1])
    for fields in data_lines(ucd("emoji/emoji-data.txt")):
        if fields[1] != "Extended_Pictographic":
            continue
        a, b = cp_range(fields[0])
        for x in range(a, b + 1):
            if x in grapheme:
                sys.exit("gen_unicode_tables: U+%04X has a Grapheme_Cluster_Break and Extended_Pictographic" % x)
            grapheme[x] = GRAPHEME_BREAKS.index("Extended_Pictographic")
    grapheme_ranges = value_ranges(grapheme)

    exclusions = set()
    for fields in data_lines(ucd("DerivedNormalizationProps.txt")):
        if fields[1] == "Full_Composition_Exclusion":
            a, b = cp_range(fields[0])
            exclusions.update(range(a, b + 1))

    def full(cp, compat):
        if cp not in decomp or (decomp[cp][0] and not compat):
            return [cp]
        out = []
        for x in decomp[cp][1]:
            out += full(x, compat)
        return out

    decomp_rows = []
    pool = []  # < 65536 entries (the offsets are 16 bits; checked below)
    for cp in sorted(decomp):
        canon = full(cp, False)
        compat = full(cp, True)
        row = [cp]
        for seq in (canon, compat):
            if seq == [cp]:
                row += [0, 0]
            elif seq == canon and len(row) == 3:  # the compatibility decomposition is the canonical one
                row += [row[1], row[2]]
            else:
                row += [len(pool), len(seq)]
                pool += seq
        decomp_rows.append(tuple(row))
    if len(pool) >= 65536 or max(len(full(cp, True)) for cp in decomp) > 255:
        sys.exit("gen_unicode_tables: the decomposition pool outgrew its 16-bit offsets")
    compositions = sorted((d[1][0], d[1][1], cp) for cp, d in decomp.items()
                          if not d[0] and len(d[1]) == 2 and cp not in exclusions)
    ccc_ranges = value_ranges(ccc)

    # Two stages: identical blocks of BLOCK bytes are stored once.
    blocks = {}
    stage1 = []
    stage2 = bytearray()
    for start in range(0, MAX_CP, BLOCK):
        block = bytes(cat[start:start + BLOCK])
        if block not in blocks:
            blocks[block] = len(blocks)
            stage2 += block
        stage1.append(blocks[block])

    def rows(values, per_line, fmt):
        out = []
        for i in range(0, len(values), per_line):
            out.append("    " + ", ".join(fmt(v) for v in values[i:i + per_line]) + ",")
        return "\n".join(out)

    pair = lambda p: "{0x%x, 0x%x}" % p
    out = []
    out.append("// Generated by cmake/gen_unicode_tables.py from %s (do not edit; not committed)." %
               os.path.abspath(args.data))
    out.append('#include "unicode/unicode_tables.h"\n')
    out.append("namespace ws {\nnamespace unicode_tables {\n")
    out.append("static_assert(kBlockSize == %d, \"the generator's block size\");" % BLOCK)
    out.append("static_assert(kCategoryCount == %d, \"the generator's category list\");" % len(CATEGORIES))
    out.append("const uint16_t kStage1[%d] = {\n%s\n};" % (len(stage1), rows(stage1, 24, str)))
    out.append("const uint8_t kStage2[%d] = {\n%s\n};" % (len(stage2), rows(list(stage2), 32, str)))
    for name, table in (("kLower", lower), ("kUpper", upper), ("kTitle", title), ("kFold", fold)):
        out.append("const CodePointPair %s[%d] = {\n%s\n};" % (name, len(table), rows(table, 6, pair)))
        out.append("const size_t %sSize = %d;" % (name, len(table)))
    out.append("const char* const kScriptNames[%d] = {\n%s\n};" %
               (len(script_names), rows(script_names, 8, lambda s: '"%s"' % s)))
    out.append("const size_t kScriptCount = %d;" % len(script_names))
    out.append("const ScriptRange kScriptRanges[%d] = {\n%s\n};" %
               (len(script_ranges), rows(script_ranges, 4, lambda r: "{0x%x, 0x%x, %d}" % r)))
    out.append("const size_t kScriptRangeCount = %d;" % len(script_ranges))
    out.append("const CodePointRange kAgeAtMost9Ranges[%d] = {\n%s\n};" %
               (len(age9_ranges), rows(age9_ranges, 6, lambda r: "{0x%x, 0x%x}" % tuple(r))))
    out.append("const size_t kAgeAtMost9RangeCount = %d;" % len(age9_ranges))
    out.append("static_assert(kGraphemeBreakCount == %d, \"the generator's grapheme break list\");" %
               len(GRAPHEME_BREAKS))
    out.append("const GraphemeRange kGraphemeRanges[%d] = {\n%s\n};" %
               (len(grapheme_ranges), rows(grapheme_ranges, 4, lambda r: "{0x%x, 0x%x, %d}" % tuple(r))))
    out.append("const size_t kGraphemeRangeCount = %d;" % len(grapheme_ranges))
    out.append("\n}  // namespace unicode_tables\n}  // namespace ws")
    write(args.out, "\n".join(out) + "\n")

    out = []
    out.append("// Generated by cmake/gen_unicode_tables.py from %s (do not edit; not committed)." %
               os.path.abspath(args.data))
    out.append('#include "unicode/unicode_tables.h"\n')
    out.append("namespace ws {\nnamespace unicode_tables {\n")
    out.append("const CccRange kCccRanges[%d] = {\n%s\n};" %
               (len(ccc_ranges), rows(ccc_ranges, 4, lambda r: "{0x%x, 0x%x, %d}" % tuple(r))))
    out.append("const size_t kCccRangeCount = %d;" % len(ccc_ranges))
    out.append("const Decomposition kDecompositions[%d] = {\n%s\n};" %
               (len(decomp_rows), rows(decomp_rows, 3, lambda r: "{0x%x, %d, %d, %d, %d}" % r)))
    out.append("const size_t kDecompositionCount = %d;" % len(decomp_rows))
    out.append("const uint32_t kDecompositionPool[%d] = {\n%s\n};" % (len(pool), rows(pool, 10, hex)))
    out.append("const Composition kCompositions[%d] = {\n%s\n};" %
               (len(compositions), rows(compositions, 3, lambda r: "{0x%x, 0x%x, 0x%x}" % r)))
    out.append("const size_t kCompositionCount = %d;" % len(compositions))
    out.append("\n}  // namespace unicode_tables\n}  // namespace ws")
    write(args.norm_out, "\n".join(out) + "\n")


def write(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()

// SPDX-License-Identifier: MIT
// The scripts of Hugging Face's UnicodeScripts pre-tokenizer (the Rust crate's pre_tokenizers/unicode_scripts/:
// scripts.rs's get_script and pre_tokenizer.rs's fixed_script). scripts.rs is a table generated from Unicode 9.0's
// Scripts.txt; every code point it leaves out is Script::Any, which never starts a piece. Compared with the
// Scripts.txt 15.0 that core/unicode's tables come from, code point by code point over all of them, it differs
// only where
//   - DerivedAge.txt dates the code point after 9.0 (Han extensions F to H, the emoji of Unicode 10 to 15, whole
//     scripts such as Nushu and Kawi): scripts.rs says Any;
//   - Unicode changed the script since 9.0: U+0589 (Armenian, was Common), U+061C (Arabic, was Common), U+0953 and
//     U+0954 (Inherited, were Devanagari): scripts.rs says the old value.
// So the script here is Scripts.txt's for the code points of age 9.0 or older, those four as in 9.0, and Any
// otherwise. The four are what Scripts.txt 15.0 (Debian 12's unicode-data) changed since 9.0: when the data moves
// to a later version, compare scripts.rs with the new table again, as was done for this one.
#include "text/hf_components.h"
#include "weightstream/unicode.h"

namespace ws {
namespace hf {
namespace {

int script_named(const char* name) {
    return unicode_script_from_name(name, std::char_traits<char>::length(name));
}

}  // namespace

int unicode_scripts_script(uint32_t cp) {
    static const struct {
        int han, hiragana, katakana, common, devanagari;
    } s = {script_named("Han"), script_named("Hiragana"), script_named("Katakana"), script_named("Common"),
           script_named("Devanagari")};
    // fixed_script(): the prolonged sound mark (Common) as Han, the space as Any.
    if (cp == 0x30FC) return s.han;
    if (cp == ' ' || !unicode_age_at_most_9_0(cp)) return -1;
    if (cp == 0x0589 || cp == 0x061C) return s.common;
    if (cp == 0x0953 || cp == 0x0954) return s.devanagari;
    const int script = unicode_script(cp);
    // fixed_script(): Hiragana and Katakana as Han (SentencePiece's IsValidSentencePiece does the same).
    return script == s.hiragana || script == s.katakana ? s.han : script;
}

}  // namespace hf
}  // namespace ws

"""When two names look alike: the confusables skeleton that ``arena.models.bot_name_key``
compares bots' and accounts' names by, so that ``alice`` written with a Cyrillic a
(U+0430), in fullwidth letters (U+FF41...) or in mathematical bold (U+1D41A...) is one
name with ``alice``.

The recipe is Unicode TR39's skeleton on a compatibility-decomposed, case-folded name:
NFKD folds the fullwidth, mathematical, circled and ligature forms into their letters;
then each letter that looks like another is replaced by the one it looks like.  No
well-kept, small library computes TR39 skeletons in Python (ICU's needs the C library),
so the replacements are a table of our own, and it covers only the look-alikes that
matter for names written in the Latin alphabet: Cyrillic and Greek letters drawn like
Latin ones (capitals and small letters apart: the Cyrillic capital Ve looks like ``B``,
its small form does not look like ``b``), and the few Latin letters drawn like others
(the dotless i).  Letters that TR39 also equates within ASCII (``I``/``l``, ``0``/``O``,
``rn``/``m``) are kept apart: every name written in ASCII keeps the key it always had.
Invisible format characters (zero-width spaces and joiners, direction marks) are
dropped: they change nothing one sees.
"""

from __future__ import annotations

import unicodedata

# fmt: off
# letters drawn like a Latin capital, replaced before case folding (their small forms
# may look like nothing Latin); code points, the letters themselves being
# indistinguishable here by design
_CAPITALS = str.maketrans({
    # Cyrillic
    0x0410: "A", 0x0412: "B", 0x0415: "E", 0x041A: "K", 0x041C: "M", 0x041D: "H", 0x041E: "O",
    0x0420: "P", 0x0421: "C", 0x0422: "T", 0x0425: "X", 0x0423: "Y", 0x0405: "S", 0x0406: "I",
    0x0408: "J", 0x051A: "Q", 0x051C: "W", 0x04AE: "Y", 0x04BA: "H", 0x04C0: "I", 0x0474: "V",
    # Greek
    0x0391: "A", 0x0392: "B", 0x0395: "E", 0x0396: "Z", 0x0397: "H", 0x0399: "I", 0x039A: "K",
    0x039C: "M", 0x039D: "N", 0x039F: "O", 0x03A1: "P", 0x03A4: "T", 0x03A5: "Y", 0x03A7: "X",
})
# letters drawn like a small Latin letter, replaced after case folding
_SMALL = str.maketrans({
    # Cyrillic
    0x0430: "a", 0x0435: "e", 0x043E: "o", 0x0440: "p", 0x0441: "c", 0x0443: "y", 0x0445: "x",
    0x0455: "s", 0x0456: "i", 0x0458: "j", 0x051B: "q", 0x051D: "w", 0x04BB: "h", 0x04CF: "l",
    0x04AF: "y", 0x0501: "d", 0x0475: "v",
    # Greek
    0x03B1: "a", 0x03BF: "o", 0x03B9: "i", 0x03BD: "v", 0x03C1: "p", 0x03C5: "u", 0x03B3: "y",
    0x03F2: "c", 0x03F3: "j",
    # Latin: dotless i and j, alpha, script g
    0x0131: "i", 0x0237: "j", 0x0251: "a", 0x0261: "g",
})
# fmt: on


def skeleton(text: str) -> str:
    """``text`` as it looks: compatibility forms folded, case folded, look-alike letters
    replaced by the Latin ones, invisible characters dropped, composed again (NFC)."""
    text = unicodedata.normalize("NFKD", text).translate(_CAPITALS)
    text = unicodedata.normalize("NFKD", text.casefold()).translate(_SMALL)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return unicodedata.normalize("NFC", text)

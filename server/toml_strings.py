"""TOML basic strings: any Python text as a double-quoted TOML value that parses back unchanged."""

from __future__ import annotations

_SHORT_ESCAPES = {
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
    '"': '\\"',
    "\\": "\\\\",
}


def toml_basic_string(value: str) -> str:
    """`value` as a TOML basic string (quotes included), e.g. `a"b` -> `"a\\"b"`.

    Quotes, backslashes and every control character (U+0000-U+001F, U+007F) are escaped, so the
    result is always one line and one value. ValueError for surrogate code points, which TOML
    (UTF-8 text of Unicode scalar values) cannot hold.
    """
    out = ['"']
    for char in value:
        code = ord(char)
        if char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        elif 0xD800 <= code <= 0xDFFF:
            raise ValueError(
                f"{value!r} holds the surrogate U+{code:04X}, which TOML cannot represent; "
                "use valid Unicode text"
            )
        else:
            out.append(char)
    out.append('"')
    return "".join(out)

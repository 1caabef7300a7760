"""A backend's error message as a short, stable key (which findings share a fault, which
refusals are one reason): names, quoted values and numbers dropped."""
from __future__ import annotations

import re


def numbers_out(text: str) -> str:
    """`text` with its free-standing numbers as '#' (decimals and exponents included). Digits
    that belong to an identifier stay: after a letter (`Col2Im`, `int32`, `dim0`) or before a
    letter or an underscore (`int32_t`, `2d`); a counter after an underscore (`Loop_3`) is
    a number."""
    text = re.sub(r"(?<![A-Za-z_\d.])\d+(?:\.\d*)?[eE][-+]?\d+(?![A-Za-z_\d])", "#", text)
    return re.sub(r"(?<![A-Za-z\d])\d+(?![A-Za-z_\d])", "#", text)


def _error_key(message: str) -> str:
    """A short, stable summary of an error message: where it happened (node names, graph
    nesting), numbers and quoted names are dropped, so that one fault met in different
    programs gives one key."""
    text = " ".join(message.strip().split())
    head = text.split(":")[0]
    if "Status Message:" in text:  # onnxruntime: the reason follows the node's name
        text = head + ": " + text.split("Status Message:", 1)[1]
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'…'", text)  # `x:0` too
    text = re.sub(r"\[[^\]]*\]", "[…]", text)  # lists of types, shapes, attributes
    text = re.sub(r"\b(in (body of|graph) [^:]*?)(?=:)", "", text)
    text = re.sub(r"(Name|node|layer|stream|tensor)\s*:?\s*'…'", r"\1", text)
    text = numbers_out(text)
    return text[:120]

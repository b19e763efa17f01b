"""Risk flags computed at ingest, per chunk and per document. Pure functions; see RISK_RULES.md.

A chunk's level is the highest level among its flags (`RiskLevel.NONE` without flags). Code
(fenced blocks, inline code spans and, in chunks with code, indented lines) is not scanned for
links or plain-word role headers: it is not clickable and often quotes configs or transcripts.
"""

from __future__ import annotations

import html
import ipaddress
import re
from urllib.parse import urlsplit

from core.ingest.html_parser import extract_hidden_text, html_to_markdown
from core.ingest.packing import split_sentences
from core.models import RiskLevel, SourceType

OVERSIZED_PARAGRAPH = "oversized_paragraph"
OVERSIZED_CODE_BLOCK = "oversized_code_block"
SUSPICIOUS_LINKS = "suspicious_links"
PROMPT_INJECTION = "prompt_injection"
DOCUMENT_BLOCKED = "document_blocked"

FLAG_LEVELS: dict[str, RiskLevel] = {
    OVERSIZED_PARAGRAPH: RiskLevel.LOW,
    OVERSIZED_CODE_BLOCK: RiskLevel.LOW,
    SUSPICIOUS_LINKS: RiskLevel.MEDIUM,
    PROMPT_INJECTION: RiskLevel.HIGH,
    DOCUMENT_BLOCKED: RiskLevel.HIGH,
}
BLOCKED_SHARE = 0.5
"""A document is blocked when at least this share of its words lies in injection sentences."""

_I = re.IGNORECASE
_M = re.IGNORECASE | re.MULTILINE
_INJECTION_PHRASES = (
    # Override: "ignore all previous instructions", "disregard the above rules".
    re.compile(
        r"\b(?:ignore|ignoring|disregard|disregarding|forget|forgetting)\s+(?:all\s+|any\s+)?"
        r"(?:of\s+)?(?:the\s+|your\s+|these\s+|those\s+|my\s+)?"
        r"(?:previous|prior|above|earlier|preceding|foregoing|original)\s+"
        r"(?:instructions?|prompts?|rules|directions|directives|guidelines|context)\b",
        _I,
    ),
    re.compile(
        r"\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:of\s+)?your\s+(?:instructions|"
        r"programming|guidelines|rules|guardrails|system\s+prompt)\b",
        _I,
    ),
    # Role reassignment aimed at the model: "you are now DAN", "you are now an unrestricted AI".
    re.compile(
        r"\b(?:you\s+are\s+now|from\s+now\s+on,?\s+you\s+are)\s+(?:in\s+)?(?:an?\s+|the\s+|my\s+)?"
        r"(?:(?:unrestricted|unfiltered|uncensored|jailbroken|evil|new|different)\s+)?"
        r"(?:DAN|AI|assistant|chatbot|language\s+model|LLM|developer\s+mode|jailbreak)\b",
        _I,
    ),
    # System prompt exfiltration or replacement: "print your system prompt", "new system prompt:".
    re.compile(
        r"\b(?:reveal|print|show|repeat|output|display|leak|disclose|ignore|override|replace)\s+"
        r"(?:me\s+)?(?:your|the)\s+(?:system\s+prompt|initial\s+instructions|hidden\s+instructions)"
        r"|\bnew\s+system\s+prompt\s*:",
        _I,
    ),
    # Chat-template control tokens: never legitimate in retrieved text.
    re.compile(
        r"<\|(?:im_start|im_end|system|user|assistant|endoftext|start_header_id|eot_id)\|>"
        r"|\[/?INST\]|<</?SYS>>"
    ),
)
_ROLE_HEADERS = (
    re.compile(
        r"^[ \t]*(?:system|assistant)[ \t]*:[ \t]*(?:you|your|you're|i|i'm|i'll|sure|as\s+an\s+ai)\b",
        _M,
    ),
    re.compile(r"^[ \t]*#{1,6}[ \t]*(?:instruction[ \t]*:?|system[ \t]*:)[ \t]*$", _M),
)
_AI_ADDRESSEE = re.compile(
    r"\b(?:AI|LLMs?|GPT(?:-?\d\w*)?|ChatGPT|(?i:language\s+models?|chatbots?))\b"
)
_IMPERATIVE_CUE = re.compile(
    r"\b(?:you\s+(?:must|should|will|are)|always|never|do\s+not|don't|make\s+sure|recommend"
    r"|respond|reply|answer|say|tell|include|mention|ignore|summari[sz]e)\b",
    _I,
)
_FENCED_CODE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S)
_INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1", re.DOTALL)
_INDENTED_LINE = re.compile(r"^(?: {4}|\t).*$", re.MULTILINE)
_MARKDOWN_LINK = re.compile(r"!?\[((?:\\.|[^\]\\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\)")
_ATTRIBUTE_VALUE = r"\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+))"
_HTML_ANCHOR = re.compile(rf"<a\s[^>]*?\bhref{_ATTRIBUTE_VALUE}[^>]*>(.*?)</a\s*>", _I | re.S)
_HTML_URL_ATTRIBUTE = re.compile(rf"\b(?:href|src|action){_ATTRIBUTE_VALUE}", _I)
_BARE_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://(?:\[[\da-f:.]+\])?[^\s<>\"'`)\]]*", _I)
_DANGEROUS_SCHEME = re.compile(r"^(?:javascript|vbscript|data):", _I)
_RASTER_DATA_URL = re.compile(r"^data:image/(?:png|gif|jpe?g|webp|avif);", _I)
_URL_CONTROL = re.compile(r"[\s\x00-\x1f]+")
_NUMERIC_HOST = re.compile(r"^(?:0x[0-9a-f]+|\d+)$", _I)
_COMMON_TLDS = (
    "com|org|net|io|dev|ai|app|co|edu|gov|info|biz|me|us|uk|de|fr|ru|cn|jp|in|br|es|it|nl|ca|au"
)
_DOMAIN_TEXT = re.compile(
    rf"^(?:(?:https?://)(?:[\w-]+\.)*[\w-]+|(?:www\.)?(?:[\w-]+\.)+(?:{_COMMON_TLDS}))"
    r"(?::\d+)?(?:[/?#]\S*)?$",
    _I,
)


def assess_chunk(
    text: str, has_code: bool, token_estimate: int, max_tokens: int
) -> tuple[tuple[str, ...], RiskLevel]:
    """The flags of one chunk and their level."""
    flags: list[str] = []
    if token_estimate > max_tokens:
        flags.append(OVERSIZED_CODE_BLOCK if has_code else OVERSIZED_PARAGRAPH)
    prose = strip_code(text, has_code)
    if any(is_suspicious_link(target, label) for target, label in links_in(prose)):
        flags.append(SUSPICIOUS_LINKS)
    hidden = extract_hidden_text(prose) if "<" in prose else []
    if has_injection(text, prose) or any(hidden_text_is_injection(part) for part in hidden):
        flags.append(PROMPT_INJECTION)
    return with_level(flags)


def assess_document(raw_text: str, source_type: SourceType) -> tuple[tuple[str, ...], RiskLevel]:
    """Document-level flags: instructions in hidden HTML, and a document that is mostly injection.

    `raw_text` is the document as sent (HTML markup included; for PDF the page texts).
    """
    hidden: list[str] = []
    visible = raw_text
    if source_type is SourceType.HTML:
        hidden, visible = extract_hidden_text(raw_text), html_to_markdown(raw_text)
    elif source_type is SourceType.MARKDOWN and "<" in raw_text:
        hidden = extract_hidden_text(raw_text)
    flagged_hidden = [part for part in hidden if hidden_text_is_injection(part)]
    flags = [PROMPT_INJECTION] if flagged_hidden else []
    injected, total = _injection_words(visible)
    injected += sum(len(part.split()) for part in flagged_hidden)
    total += sum(len(part.split()) for part in hidden)
    if injected and injected >= BLOCKED_SHARE * total:
        flags = [PROMPT_INJECTION, DOCUMENT_BLOCKED]
    return with_level(flags)


def with_level(flags: list[str] | tuple[str, ...]) -> tuple[tuple[str, ...], RiskLevel]:
    """Flags deduplicated in canonical order, with the highest of their levels."""
    ordered = tuple(flag for flag in FLAG_LEVELS if flag in flags)
    return ordered, max((FLAG_LEVELS[flag] for flag in ordered), default=RiskLevel.NONE)


def strip_code(text: str, has_code: bool) -> str:
    """`text` without fenced code, inline code spans and (when `has_code`) indented lines."""
    prose = _INLINE_CODE.sub(" ", _FENCED_CODE.sub("", text))
    return _INDENTED_LINE.sub("", prose) if has_code else prose


def has_injection(text: str, prose: str | None = None) -> bool:
    """True when `text` holds an injection phrase, or `prose` (text without code) a role header."""
    if any(pattern.search(text) for pattern in _INJECTION_PHRASES):
        return True
    return any(pattern.search(text if prose is None else prose) for pattern in _ROLE_HEADERS)


def hidden_text_is_injection(text: str) -> bool:
    """Hidden text is injection when it has an injection phrase or gives an AI model orders."""
    if has_injection(text):
        return True
    return bool(_AI_ADDRESSEE.search(text)) and bool(_IMPERATIVE_CUE.search(text))


def links_in(prose: str) -> list[tuple[str, str]]:
    """(target, label) of each Markdown link, HTML anchor, URL attribute and bare URL."""
    found = [(target, label) for label, target in _MARKDOWN_LINK.findall(prose)]
    for *values, label in _HTML_ANCHOR.findall(prose):
        found.append(("".join(values), re.sub(r"<[^>]+>", "", label)))
    found += [("".join(values), "") for values in _HTML_URL_ATTRIBUTE.findall(prose)]
    found += [(url.rstrip(".,;:!?"), "") for url in _BARE_URL.findall(prose)]
    return found


def is_suspicious_link(target: str, label: str = "") -> bool:
    """True for a dangerous scheme, an IP-literal or punycode host, or a label naming another host."""
    compact = _URL_CONTROL.sub("", html.unescape(target))
    if _DANGEROUS_SCHEME.match(compact):
        return not _RASTER_DATA_URL.match(compact)
    host = _host(compact)
    if not host:
        return False
    if _is_ip_literal(host) or _is_punycode(host):
        return True
    shown = label.strip().strip("<>")
    if shown and _DOMAIN_TEXT.match(shown):
        shown_host = _host(shown if "://" in shown else f"http://{shown}")
        return bool(shown_host) and not _same_site(shown_host, host)
    return False


def _host(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.rstrip(".").lower()


def _is_ip_literal(host: str) -> bool:
    if _NUMERIC_HOST.match(host):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return not (address.is_loopback or address.is_unspecified)


def _is_punycode(host: str) -> bool:
    return not host.isascii() or any(label.startswith("xn--") for label in host.split("."))


def _same_site(shown: str, actual: str) -> bool:
    """Equal hosts (ignoring "www."), or one a subdomain of the other."""
    shown, actual = shown.removeprefix("www."), actual.removeprefix("www.")
    return shown == actual or shown.endswith("." + actual) or actual.endswith("." + shown)


def _injection_words(text: str) -> tuple[int, int]:
    """(words in lines or sentences that are injection, all words) of `text`.

    Role headers count whole lines; phrases count whole sentences of each blank-line paragraph.
    """
    injected = total = 0
    for paragraph in re.split(r"\n[ \t]*\n", text):
        rest: list[str] = []
        for line in paragraph.splitlines():
            if any(pattern.search(line) for pattern in _ROLE_HEADERS):
                injected += len(line.split())
                total += len(line.split())
            else:
                rest.append(line)
        for sentence in split_sentences(" ".join(rest)):
            total += len(sentence.split())
            injected += len(sentence.split()) if has_injection(sentence, "") else 0
    return injected, total

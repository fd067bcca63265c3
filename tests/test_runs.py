"""ingest.runs on real documents: what the prose around a record says of its variant and date."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from ingest import runs
from ingest.parsers import scan
from tests.conftest import ROOT, ingest

THREAD = ROOT / "tests" / "fixtures" / "tester_variants"


@pytest.mark.parametrize(
    "name",
    ["benchmark-275_ernie-int8-cpu-thread.md", "benchmark-275_ernie-int8-cpu-thread-as-copied.md"],
)
def test_variant_labels_and_comment_dates_of_a_pasted_thread(name: str, tmp_path: Path) -> None:
    # PaddlePaddle/benchmark#275: "FP32: `Run 2490 samples ... 92.2313ms`" and "QAT INT8:
    # `Run 2490 samples ... 49.1309ms`" under "(20 threads, bs 1, CLX 6248):" on
    # 2019-11-21; the next day "FP32 results with @GaoWei8's fix (...):" over a bare line.
    store = tmp_path / "thread.duckdb"
    assert ingest("auto", str(THREAD / name), "--db", str(store), "--no-detect") == 0
    conn = duckdb.connect(str(store), read_only=True)
    stored = conn.execute(
        "SELECT s.params, m.value, m.measured_at FROM measurements m JOIN series s"
        " USING (series_id) ORDER BY m.line"
    ).fetchall()
    conn.close()
    qat_int8 = '{"batch_size":1,"precision":"int8","quantization":"qat"}'
    assert stored == [
        ('{"batch_size":1,"precision":"fp32"}', 92.2313, datetime(2019, 11, 21)),
        (qat_int8, 49.1309, datetime(2019, 11, 21)),
        ('{"precision":"fp32"}', 54.6457, datetime(2019, 11, 22)),
    ]


def test_comment_dates_of_a_thread_inside_a_log_read_through_the_compiled_gate(
    tmp_path: Path,
) -> None:
    # Past 64 KiB the gate is hyperscan's, and it, not a search of its own, tells the
    # reader that a comment's header is there (ingest.gate.MARKER_ANCHORS).
    noise = "".join(
        f"I0719 10:14:50.{i:06d} 70931 operator.cc:169] Op(fc_{i})\n" for i in range(3000)
    )
    assert len(noise) > 2**16 and "commented" not in noise and "·" not in noise
    thread = (THREAD / "benchmark-275_ernie-int8-cpu-thread.md").read_text(encoding="utf-8")
    log = tmp_path / "session.log"
    log.write_text(noise + "\n" + thread, encoding="utf-8")
    store = tmp_path / "log.duckdb"
    assert ingest("auto", str(log), "--db", str(store), "--no-detect") == 0
    conn = duckdb.connect(str(store), read_only=True)
    stored = conn.execute(
        "SELECT m.value, m.measured_at FROM measurements m ORDER BY m.line"
    ).fetchall()
    conn.close()
    assert stored == [
        (92.2313, datetime(2019, 11, 21)),
        (49.1309, datetime(2019, 11, 21)),
        (54.6457, datetime(2019, 11, 22)),
    ]


def test_model_names_are_found_where_the_engine_finds_them() -> None:
    # runs._model_matches tries _MODELS only where a name's first letters are (str.find in
    # the lowered text); the matches must be finditer's, in real documents and in texts
    # whose lower() moves offsets or hides a case-insensitive match.
    texts = [
        path.read_text(encoding="utf-8") for path in sorted((ROOT / "data/samples").glob("*.md"))
    ]
    texts += [
        "ERNIE-tiny beside Transformer_big and transformer big, resnet50, ResNet-50, gpt 2",
        "xbert bertbert ernie_ seq2seq yolov3 deeplabv3 pyramid_dnn vgg16 LSTM",
        "İ ernie ERNİE bert",  # lower() makes İ two characters
        "ERNıE erNie reſnet50",  # "ı" and "ſ" match "i" and "s" case-insensitively
    ]
    # Texts of 64 KiB and more: the stems found by one hyperscan pass (scan.literal_starts),
    # in ASCII and where characters beyond it move the bytes' offsets from the text's.
    samples = "\n".join(texts[:-4])
    large = [samples * (2**16 // len(samples) + 1), ("… " + samples) * (2**17 // len(samples))]
    assert all(scan.literal_starts(text.lower(), runs._STEMS) is not None for text in large)
    texts = large + texts
    for text in texts:
        for limit in (len(text), len(text) // 2, 20):
            expected = [(m.start(), m.group(1)) for m in runs._MODELS.finditer(text, 0, limit)]
            found = [(m.start(), m.group(1)) for m in runs._model_matches(text, limit)]
            assert found == expected
    assert runs.dominant_model(texts[-2]) == "ernie"
    assert runs.dominant_model(large[1]) == runs.dominant_model(samples)
    folded = [m.group(1) for m in runs._model_matches(texts[-1], len(texts[-1]))]
    assert folded == ["ERNıE", "erNie", "reſnet50"]

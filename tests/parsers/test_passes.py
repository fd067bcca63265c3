"""IR pass / analysis logs: real samples and malformed variants."""

from __future__ import annotations

import time

from ingest.parsers import passes
from perfboard.model import PassApplied, Problem
from tests.conftest import sample_doc, text_doc


def _parse(doc) -> tuple[list[PassApplied], list[Problem]]:
    items = list(passes.parse(doc))
    found = [i for i in items if isinstance(i, PassApplied)]
    problems = [i for i in items if isinstance(i, Problem)]
    assert len(found) + len(problems) == len(items)
    return found, problems


def test_contract() -> None:
    assert passes.NAME == "passes"
    assert all(isinstance(a, str) and a for a in passes.ANCHORS)


def test_fc_elementwise_layernorm_sample() -> None:
    found, problems = _parse(
        sample_doc("benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md")
    )
    assert problems == []
    assert len(found) == 1
    p = found[0]
    assert (p.name, p.kind, p.order, p.subgraphs, p.line) == (
        "fc_elementwise_layernorm_fuse_pass",
        "ir",
        0,
        24,
        3,
    )
    assert p.raw == (
        "--- Running IR pass [fc_elementwise_layernorm_fuse_pass]\n---  detected 24 subgraphs"
    )


def test_fuse_elewise_add_act_sample_full_sequence() -> None:
    found, problems = _parse(sample_doc("benchmark-165_2019-08-28_xreki_fuse-elewise-add-act.md"))
    assert problems == []
    assert [p.name for p in found] == [
        "ir_graph_build_pass",
        "ir_graph_clean_pass",
        "ir_analysis_pass",
        "is_test_pass",
        "simplify_with_basic_ops_pass",
        "fuse_elewise_add_act_pass",
        "conv_affine_channel_fuse_pass",
        "conv_eltwiseadd_affine_channel_fuse_pass",
        "conv_bn_fuse_pass",
        "conv_eltwiseadd_bn_fuse_pass",
        "conv_elementwise_add_act_fuse_pass",
        "conv_elementwise_add2_act_fuse_pass",
        "conv_elementwise_add_fuse_pass",
        "transpose_flatten_concat_fuse_pass",
        "runtime_context_cache_pass",
        "ir_params_sync_among_devices_pass",
    ]
    assert [p.kind for p in found[:4]] == ["analysis", "analysis", "analysis", "ir"]
    assert found[-1].kind == "analysis"
    assert [p.order for p in found] == list(range(16))
    assert [p.line for p in found] == [8, 9, 10, 11, 12, 13, *range(15, 25)]
    fused = {p.name: p.subgraphs for p in found if p.subgraphs is not None}
    assert fused == {"fuse_elewise_add_act_pass": 14}


def test_mkldnn_sample_trailing_spaces_and_cut_last_line() -> None:
    items = list(passes.parse(sample_doc("paddle-16841_2019-04-24_jczaja_ir-pass-log.md")))
    found = [i for i in items if isinstance(i, PassApplied)]
    by_name = {p.name: p for p in found}
    assert found[0].name == "ir_graph_build_pass" and found[0].line == 5
    assert by_name["mkldnn_placement_pass"].kind == "ir"
    assert by_name["mkldnn_placement_pass"].order == 2
    fc = by_name["fc_fuse_pass"]
    assert (fc.subgraphs, fc.line, fc.order) == (12, 16, 11)
    assert [p.name for p in found if p.subgraphs is not None] == ["fc_fuse_pass"]
    assert isinstance(items[-1], Problem)
    assert items[-1].line == 18
    assert items[-1].raw == "--- Running IR pa"
    assert "cut" in items[-1].reason
    assert items[-1].parser == "passes"


def test_glog_detected_line_belongs_to_pass_above() -> None:
    doc = text_doc(
        "I0718 10:11:43.1 2153053 analysis_predictor.cc:1] ir_optim is turned on\n"
        "--- Running IR pass [multihead_matmul_fuse_pass_v2]\n"
        "I0718 10:11:44.254137 2153053 fuse_pass_base.cc:59] ---  detected 26 subgraphs\n"
        "--- Running IR pass [fc_fuse_pass]\n"
    )
    found, problems = _parse(doc)
    assert problems == []
    assert [(p.name, p.subgraphs, p.line) for p in found] == [
        ("multihead_matmul_fuse_pass_v2", 26, 2),
        ("fc_fuse_pass", None, 4),
    ]


def test_new_sequence_restarts_order() -> None:
    doc = text_doc(
        "--- Running analysis [ir_graph_build_pass]\n"
        "--- Running IR pass [fc_fuse_pass]\n"
        "---  detected 3 subgraphs\n"
        "some output of the first run\n"
        "--- Running analysis [ir_graph_build_pass]\n"
        "--- Running IR pass [fc_fuse_pass]\n"
    )
    found, _ = _parse(doc)
    assert [(p.name, p.order, p.subgraphs) for p in found] == [
        ("ir_graph_build_pass", 0, None),
        ("fc_fuse_pass", 1, 3),
        ("ir_graph_build_pass", 0, None),
        ("fc_fuse_pass", 1, None),
    ]


def test_orphan_detected_line_is_a_problem() -> None:
    doc = text_doc("log starts here\n---  detected 5 subgraphs\n--- Running IR pass [a_pass]\n")
    items = list(passes.parse(doc))
    assert isinstance(items[0], Problem)
    assert items[0].line == 2
    assert "no pass above" in items[0].reason
    assert isinstance(items[1], PassApplied) and items[1].order == 0


def test_several_detected_lines_are_summed() -> None:
    doc = text_doc(
        "--- Running IR pass [conv_elementwise_add_act_fuse_pass]\n"
        "---  detected 2 subgraphs\n"
        "---  detected 3 subgraphs\n"
    )
    found, _ = _parse(doc)
    assert found[0].subgraphs == 5
    assert found[0].raw.count("\n") == 2


def test_cut_lines_are_problems_and_reading_goes_on() -> None:
    doc = text_doc(
        "--- Running IR pass [fc_fu\n"
        "--- Running analysis [ir_analysis_pass]\n"
        "---  detected 1\n"
        "--- Running IR pass [fc_fuse_pass]\n"
        "--- Run"
    )
    items = list(passes.parse(doc))
    kinds = [(type(i).__name__, i.line) for i in items]
    assert kinds == [
        ("Problem", 1),
        ("PassApplied", 2),
        ("Problem", 3),
        ("PassApplied", 4),
        ("Problem", 5),
    ]
    # The cut count is not guessed: the pass above keeps subgraphs None.
    assert items[1].subgraphs is None


def test_other_dash_lines_yield_nothing() -> None:
    doc = text_doc(
        "---\n"
        "--- a/paddle/fluid/framework/ir/fc_fuse_pass.cc\n"
        "--- done\n"
        "------------------------- Running report -------------------------\n"
        "--- Reading data\n"
        "prose mentioning Running IR pass [x] without the marker\n"
    )
    assert list(passes.parse(doc)) == []


def test_line_numbers_in_a_chunk() -> None:
    from ingest.text import DocText

    doc = DocText("noise\n--- Running IR pass [fc_fuse_pass]\n", first_line=1001)
    (p,) = passes.parse(doc)
    assert p.line == 1002


def test_large_text_without_the_format_is_cheap() -> None:
    noise = "I0911 06:41:55.494792  7238 operator.cc:100] Run op mul, --- not a pass\n"
    doc = text_doc(noise * 100_000)  # ~7 MB
    start = time.perf_counter()
    assert list(passes.parse(doc)) == []
    assert time.perf_counter() - start < 2.0

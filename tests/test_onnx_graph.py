"""The export's graph surgery (`embedders/onnx.py`), on small graphs built here: what it drops, and that
the values it leaves are the traced graph's, bit for bit, on batches padded as `OnnxModel.encode` pads them."""

import numpy as np
from conftest import skip_without

skip_without("onnx", "onnxruntime", allow_module_level=True)

import onnx  # noqa: E402
import onnxruntime  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from oncall_memory.embedders.onnx import _drop_nan_guards  # noqa: E402

HEADS, WIDTH, DEPTH = 2, 6, 4


def attention(*, guard_read_elsewhere: bool = False) -> onnx.ModelProto:
    """Scores masked per key as PyTorch traces a BERT's attention: Where(mask, 0, -inf) added, softmax, the
    NaN guard, then the values. With `guard_read_elsewhere`, the guard's test is also a graph output."""
    scores = helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", HEADS, WIDTH, WIDTH])
    mask = helper.make_tensor_value_info("mask", TensorProto.BOOL, ["batch", 1, 1, WIDTH])
    values = helper.make_tensor_value_info("values", TensorProto.FLOAT, ["batch", HEADS, WIDTH, DEPTH])
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", HEADS, WIDTH, DEPTH])
    nodes = [
        helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", TensorProto.FLOAT, [1], [0.0])),
        helper.make_node("Constant", [], ["minus"], value=helper.make_tensor("m", TensorProto.FLOAT, [1], [-np.inf])),
        helper.make_node("Where", ["mask", "zero", "minus"], ["bias"]),
        helper.make_node("Add", ["scores", "bias"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
        helper.make_node("IsNaN", ["probs"], ["nan"]),
        helper.make_node("Where", ["nan", "zero", "probs"], ["guarded"]),
        helper.make_node("MatMul", ["guarded", "values"], ["out"]),
    ]
    outputs = [out]
    if guard_read_elsewhere:
        outputs.append(helper.make_tensor_value_info("nan", TensorProto.BOOL, ["batch", HEADS, WIDTH, WIDTH]))
    graph = helper.make_graph(nodes, "attention", [scores, mask, values], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def run(path, feeds) -> np.ndarray:
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(["out"], feeds)[0]


def padded_batch(lengths: list[int]) -> dict[str, np.ndarray]:
    """Texts of these lengths padded to one width, as `encode` runs them: every text keeps its own pieces."""
    rng = np.random.default_rng(7)
    mask = np.array([[[[k < n for k in range(WIDTH)]]] for n in lengths])
    return {
        "scores": rng.normal(size=(len(lengths), HEADS, WIDTH, WIDTH)).astype(np.float32),
        "mask": mask,
        "values": rng.normal(size=(len(lengths), HEADS, WIDTH, DEPTH)).astype(np.float32),
    }


def test_the_guard_goes_and_every_value_stays_the_same_on_padded_batches(tmp_path):
    traced, target = tmp_path / "traced.onnx", tmp_path / "model.onnx"
    onnx.save(attention(), str(traced))
    assert _drop_nan_guards(traced, target) == 1
    left = [n.op_type for n in onnx.load(str(target)).graph.node]
    assert "IsNaN" not in left and left.count("Where") == 1  # the mask's own Where stays
    feeds = padded_batch([2, 6, 3, 1])  # every text holds at least one piece ([CLS] at the least)
    assert np.array_equal(run(target, feeds), run(traced, feeds))


def test_what_the_guard_was_for_a_text_with_no_pieces_at_all_which_encode_never_sends(tmp_path):
    # Why it may go only where no row is empty: a row with every key masked is all -inf, whose softmax is
    # NaN; the guard made it 0. The tokenizer adds [CLS] and [SEP] to every text, so no row is.
    traced, target = tmp_path / "traced.onnx", tmp_path / "model.onnx"
    onnx.save(attention(), str(traced))
    _drop_nan_guards(traced, target)
    feeds = padded_batch([0, 4])
    assert np.isnan(run(target, feeds)[0]).all() and (run(traced, feeds)[0] == 0).all()
    assert np.array_equal(run(target, feeds)[1], run(traced, feeds)[1])


def test_a_guard_whose_test_is_read_elsewhere_stays(tmp_path):
    traced, target = tmp_path / "traced.onnx", tmp_path / "model.onnx"
    onnx.save(attention(guard_read_elsewhere=True), str(traced))
    assert _drop_nan_guards(traced, target) == 0
    assert [n.op_type for n in onnx.load(str(target)).graph.node].count("IsNaN") == 1

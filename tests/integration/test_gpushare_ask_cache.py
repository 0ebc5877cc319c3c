"""A pod's GPU ask is parsed once per distinct annotations and shared: what every plugin reads
(``gpu_ask_of``) must be what parsing the annotations anew gives, errors included, whatever was
asked before — values that read alike but differ (``1``, ``1.0``, ``True``, ``" 1 "``) never
share an entry they should not."""

from __future__ import annotations

from typing import Any

from fuzzing import fuzz_settings
from gpushare_builders import gs
from hypothesis import example, given
from hypothesis import strategies as st
from kubesched_gpushare import gpu

# Small pools, so that asks meet again often: alike but for one annotation, or for a value's type.
MILLI = st.sampled_from([None, "500", " 500 ", "1000", "0", "1001", "x", 1, 500, 1000, 1.0, True])
COUNT = st.sampled_from([None, "1", "2", "0", "-1", 1, 2, True])
MODEL = st.one_of(st.sampled_from([None, "V100M16", "V100M16|T4", "", 1]), st.text(max_size=3))


def outcome(fn: Any, arg: Any) -> Any:
    try:
        return ("ask", fn(arg))
    except gs.GpuAskError as exc:
        return ("error", str(exc))


@fuzz_settings(400)
@given(st.lists(st.tuples(MILLI, COUNT, MODEL), min_size=1, max_size=12))
# Equal keys that read differently: 1 reads "1", True reads "True" (not a number).
@example([("500", 1, None), ("500", True, None)])
@example([(1, None, None), (True, None, None)])
# Alike but for the model.
@example([("500", None, "V100M16"), ("500", None, None)])
def test_a_kept_ask_is_the_ask_parsed_anew(asks: list[tuple[Any, Any, Any]]) -> None:
    gpu._ASKS.clear()
    for _ in range(2):  # the second round reads what the first kept
        for milli, count, model in asks:
            annotations = {
                key: value
                for key, value in (
                    (gs.GPU_MILLI_ANNOTATION, milli),
                    (gs.GPU_COUNT_ANNOTATION, count),
                    (gs.GPU_MODEL_ANNOTATION, model),
                )
                if value is not None
            }
            pod = {"metadata": {"name": "p", "annotations": annotations}}
            assert outcome(gs.gpu_ask_of, pod) == outcome(gpu.parse_gpu_ask, annotations), annotations

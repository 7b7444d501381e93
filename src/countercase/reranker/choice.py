"""The reranker's choice: on or off, and its blend weight, by a rule applied on the citation
collection's dev third before any test query sees the model (``configs/reranker_choice.yaml``,
written by stage train_reranker and read by every stage that retrieves)."""

from __future__ import annotations

from typing import Any

MARGIN = 0.001
RULE = ("On the citation collection's dev third, the served reranker blended at the "
        "first-stage weight chosen there (metrics/reranker.json "
        "validation.best_first_stage_weight) must beat no_rerank by more than "
        f"{MARGIN} MAP; then use_rerank is on and that weight is rerank_first_stage_weight. "
        "Applied before any test query sees the model.")


def decide(validation: dict[str, Any], select_by: str = "MAP") -> dict[str, Any]:
    """The choice :data:`RULE` makes of ``validation`` (the report's ``validation`` part)."""
    weight = validation["best_first_stage_weight"]
    blended = validation["first_stage_weight"][str(weight)][select_by]
    no_rerank = validation["no_rerank"][select_by]
    on = blended > no_rerank + MARGIN
    return {"rule": RULE, "use_rerank": on, "first_stage_weight": float(weight),
            "dataset": validation["dataset"],
            f"dev_{select_by}": {"no_rerank": no_rerank, "blended": blended},
            "decision": (f"{'on' if on else 'off'}: blended at w {weight} {blended} against "
                         f"no_rerank {no_rerank} ({blended - no_rerank:+.4f})")}

"""VolumeBinding's args: the bind timeout and the ``shape`` of StorageCapacityScoring, checked as
upstream checks them, and the shape taken when the gate is on and none is given."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kubesched.plugins.noderesources.fit import UtilizationShapePoint, shape_errors
from kubesched.plugins.noderesources.resource_allocation import MAX_CUSTOM_PRIORITY_SCORE

STORAGE_CAPACITY_SCORING_GATE = "StorageCapacityScoring"
#: ``shape`` when the StorageCapacityScoring gate is on and none is given (upstream's defaults):
#: the least utilized node (most free storage) scores highest.
DEFAULT_SHAPE = ((0, MAX_CUSTOM_PRIORITY_SCORE), (100, 0))


class VolumeBindingArgs(BaseModel):
    """``VolumeBindingArgs``. ``shape`` is the scoring function of StorageCapacityScoring
    (utilization of the storage a class offers on the node → score); ``None`` takes
    :data:`DEFAULT_SHAPE` when the gate is on, and must stay unset when it is off."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    bindTimeoutSeconds: int = 600
    shape: list[UtilizationShapePoint] | None = Field(default=None)

    @field_validator("bindTimeoutSeconds")
    @classmethod
    def _non_negative(cls, v: int) -> int:
        if v < 0:
            raise ValueError(
                "bindTimeoutSeconds: Invalid value: invalid BindTimeoutSeconds, should not be a negative value"
            )
        return v

    @field_validator("shape")
    @classmethod
    def _check_shape(cls, shape: list[UtilizationShapePoint] | None) -> list[UtilizationShapePoint] | None:
        if not shape:
            return shape
        errs = shape_errors(shape)
        if errs:
            raise ValueError("; ".join(errs))
        return shape

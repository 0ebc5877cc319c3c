"""``pluginConfig`` args: scheduler-plugins' ``SySchedArgs`` (``kubescheduler.config.k8s.io/v1``),
field for field.

* ``defaultProfileNamespace`` (default ``default``) and ``defaultProfileName`` (default
  ``all-syscalls``; ``null`` is the default too, as upstream's pointer fields): the SeccompProfile whose system calls a pod is taken to make when none of
  its own profiles gives any (a pod without a profile is unconfined: it may make them all).

Upstream does not validate them; here a value that is not a string, or a field that is not one
of these two, is refused, naming the field.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr, field_validator

DEFAULT_PROFILE_NAMESPACE = "default"
DEFAULT_PROFILE_NAME = "all-syscalls"


class SySchedArgs(BaseModel):
    """The args of SySched, defaults applied (see the module doc)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    default_profile_namespace: StrictStr = Field(DEFAULT_PROFILE_NAMESPACE, alias="defaultProfileNamespace")
    default_profile_name: StrictStr = Field(DEFAULT_PROFILE_NAME, alias="defaultProfileName")

    @field_validator("default_profile_namespace", "default_profile_name", mode="before")
    @classmethod
    def _null_is_default(cls, v: Any, info: Any) -> Any:
        if v is None:
            return DEFAULT_PROFILE_NAMESPACE if info.field_name == "default_profile_namespace" else DEFAULT_PROFILE_NAME
        return v

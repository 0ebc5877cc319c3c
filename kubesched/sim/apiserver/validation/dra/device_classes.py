"""DeviceClass as kube-apiserver v1.37 validates the share of it the scheduler reads:
``spec.extendedResourceName``."""

from __future__ import annotations

from kubesched.framework.resources import is_extended_resource
from kubesched.objects import Obj
from kubesched.sim.apiserver.validation.dra.fields import as_obj, as_str
from kubesched.sim.apiserver.validation.meta import Cause, invalid_cause, validate_label_name


def validate_device_class(cls: Obj) -> list[Cause]:
    """``spec.extendedResourceName`` (DRAExtendedResource, GA in 1.37): an extended resource
    name, as a pod's containers would ask for it."""
    spec = as_obj(cls.get("spec"))
    name = spec.get("extendedResourceName")
    if name is None:
        return []
    text = as_str(name)
    if not text or not is_extended_resource(text) or validate_label_name(f"requests.{text}", ""):
        return [invalid_cause("spec.extendedResourceName", text, "must be a valid extended resource name")]
    return []

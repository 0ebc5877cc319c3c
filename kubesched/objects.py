"""What a Kubernetes object is to kubesched before it is read into a typed view: its JSON, a
``dict`` by field name. The one definition of the alias every module uses."""

from typing import Any

Obj = dict[str, Any]

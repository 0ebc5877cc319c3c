"""Object metadata as apimachinery validates it (v1.37): names, label keys and values,
annotation keys and their total size.

Every check returns a list of causes ``(field, reason, message)`` worded as kube-apiserver words
them, so that :func:`kubesched.sim.apiserver.errors.invalid` turns them into the same 422 Status.
"""

from __future__ import annotations

from typing import Any

from kubesched.framework.names import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
)

Cause = tuple[str, str, str]

#: ``metadata.annotations``: keys and values together (apimachinery TotalAnnotationSizeLimitB)
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
#: The most of a bad value a field error shows. kube-apiserver's field errors echo the value
#: whole (``field.Error.ErrorBody``: ``%q``), once in the Status message and again in its cause,
#: so a 1 MiB label value made a 2 MB answer; apimachinery has no rule for long values there.
#: This one is kube-apiserver's own for a long string it shows (the user agent in its traces,
#: ``endpoints/handlers/helpers.go``): the first 1024 characters, then ``...TRUNCATED`` (here
#: after the closing quote, so the quoted part is exactly the value's start).
MAX_SHOWN_VALUE = 1024
TRUNCATED = "...TRUNCATED"
_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(text: str) -> str:
    """``text`` as Go's ``%q`` prints it: quotes and backslashes escaped, control characters as
    escapes — so that it is also safe in an HTTP header."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def quote(value: Any) -> str:
    """A value as Go's ``%q`` (strings) or ``%v`` prints it in field errors; one longer than
    :data:`MAX_SHOWN_VALUE` characters shown by its start and :data:`TRUNCATED`."""
    if isinstance(value, str):
        if len(value) > MAX_SHOWN_VALUE:
            return go_quote(value[:MAX_SHOWN_VALUE]) + TRUNCATED
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return text if len(text) <= MAX_SHOWN_VALUE else text[:MAX_SHOWN_VALUE] + TRUNCATED


def invalid_cause(path: str, value: Any, detail: str) -> Cause:
    return (path, "FieldValueInvalid", f"Invalid value: {quote(value)}: {detail}")


def required_cause(path: str, detail: str = "") -> Cause:
    return (path, "FieldValueRequired", f"Required value: {detail}" if detail else "Required value")


def forbidden_cause(path: str, detail: str) -> Cause:
    return (path, "FieldValueForbidden", f"Forbidden: {detail}")


def not_supported_cause(path: str, value: Any, supported: tuple[str, ...]) -> Cause:
    listed = ", ".join(f'"{s}"' for s in supported)
    return (path, "FieldValueNotSupported", f"Unsupported value: {quote(value)}: supported values: {listed}")


# --- metadata -----------------------------------------------------------------------------------


def validate_label_name(key: str, path: str) -> list[Cause]:
    return [invalid_cause(path, key, m) for m in qualified_name_errors(key)]


def validate_labels(labels: Any, path: str) -> list[Cause]:
    """Label keys are qualified names, values at most 63 characters of the label alphabet."""
    causes: list[Cause] = []
    if not isinstance(labels, dict):
        return causes
    for key, value in labels.items():
        causes += validate_label_name(str(key), path)
        if isinstance(value, str):
            causes += [invalid_cause(path, value, m) for m in label_value_errors(value)]
    return causes


def validate_annotations(annotations: Any, path: str) -> list[Cause]:
    """Annotation keys are qualified names (case-insensitive); keys and values together at most 256 KiB."""
    causes: list[Cause] = []
    if not isinstance(annotations, dict):
        return causes
    total = 0
    for key, value in annotations.items():
        key = str(key)
        causes += [invalid_cause(path, key, m) for m in qualified_name_errors(key.lower())]
        total += len(key.encode()) + len(str(value or "").encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        causes.append(
            (path, "FieldValueTooLong", f"Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes")
        )
    return causes


def validate_name(meta: dict[str, Any], subdomain: bool = True) -> list[Cause]:
    """``metadata.name`` (or ``generateName``) as an RFC 1123 subdomain, or label for namespaces."""
    check = dns1123_subdomain_errors if subdomain else dns1123_label_errors
    causes: list[Cause] = []
    generate = meta.get("generateName")
    if isinstance(generate, str) and generate:
        # A generated name gets random characters appended, so a trailing dash is fine (upstream masks it).
        masked = generate[:-2] + "a" if len(generate) > 1 and generate.endswith("-") else generate
        causes += [invalid_cause("metadata.generateName", generate, m) for m in check(masked)]
    name = meta.get("name")
    if not name:
        if not generate:
            causes.append(required_cause("metadata.name", "name or generateName is required"))
        return causes
    return causes + [invalid_cause("metadata.name", name, m) for m in check(str(name))]


def validate_object_meta(meta: dict[str, Any], subdomain_name: bool = True) -> list[Cause]:
    """ValidateObjectMeta on create: the name, labels, annotations and finalizers."""
    causes = validate_name(meta, subdomain_name)
    causes += validate_labels(meta.get("labels"), "metadata.labels")
    causes += validate_annotations(meta.get("annotations"), "metadata.annotations")
    for finalizer in meta.get("finalizers") or ():
        if isinstance(finalizer, str):
            causes += [invalid_cause("metadata.finalizers", finalizer, m) for m in qualified_name_errors(finalizer)]
    return causes


def validate_object_meta_update(meta: dict[str, Any]) -> list[Cause]:
    """ValidateObjectMetaUpdate's share that does not compare with the old object."""
    causes = validate_labels(meta.get("labels"), "metadata.labels")
    return causes + validate_annotations(meta.get("annotations"), "metadata.annotations")

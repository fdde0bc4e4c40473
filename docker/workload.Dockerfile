# The workload image: probe, static analysis and sweep (reprokit/workloads) on a CUDA devel base.
#
# Build it with `invoke build --host NAME`: that passes the base as tag@digest from docker/images.lock.yml,
# the kit's pins and the git revision, and the host's CA bundle as a build secret (never baked in).
# By hand, from the repository root:
#   DOCKER_BUILDKIT=1 docker build -f docker/workload.Dockerfile \
#     --build-arg CUDA_DEVEL_IMAGE=<tag@digest from docker/images.lock.yml> \
#     --secret id=ca_bundle,src=/etc/ssl/certs/ca-certificates.crt -t reprokit-workload .
#
# REQUIREMENTS names the hash-pinned requirements file to install (torch, flashinfer-python, flashinfer-cubin at
# the kit's pins and their dependencies); the tests pass a tiny one so that CI does not download CUDA wheels.

# CUDA 12.8 or newer: the first toolkit that compiles for Blackwell (sm_100, sm_120).
ARG CUDA_DEVEL_IMAGE
FROM ${CUDA_DEVEL_IMAGE}

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# Python for the workloads; its headers and g++ for FlashInfer's JIT (nvcc comes with the base).
# Versions come from the base's distribution release, which the base digest fixes.
# hadolint ignore=DL3008
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates python3 python3-venv python3-dev g++ \
 && rm -rf /var/lib/apt/lists/*

RUN python3 -m venv /opt/venv
# `python3` is the venv's: the executors run `python3 -m reprokit.workloads.<name>`.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1

ARG REQUIREMENTS=docker/requirements-workload.lock
COPY ${REQUIREMENTS} /opt/reprokit/requirements.lock
# The CA bundle is a secret mount: present during this RUN only, in no layer.
RUN --mount=type=secret,id=ca_bundle \
    if [ -s /run/secrets/ca_bundle ]; then export PIP_CERT=/run/secrets/ca_bundle; fi \
 && pip install --no-cache-dir --disable-pip-version-check --require-hashes --no-deps --only-binary=:all: \
      -r /opt/reprokit/requirements.lock

# The same uid as the host's reprokit user (ansible role `reprokit`), so run directories mounted in are writable.
ARG REPROKIT_UID=10001
RUN useradd --create-home --uid "${REPROKIT_UID}" --shell /bin/bash reprokit

COPY reprokit/__init__.py /opt/reprokit/reprokit/__init__.py
COPY reprokit/workloads /opt/reprokit/reprokit/workloads
ENV PYTHONPATH=/opt/reprokit

# Last, so that a new commit only changes metadata and the layers above stay cached.
ARG CUDA_DEVEL_IMAGE
ARG GIT_REVISION=unknown
ARG KIT=""
ARG PINS=""
LABEL org.opencontainers.image.title="reprokit workload" \
      org.opencontainers.image.description="reprokit workloads (probe, static analysis, sweep) on CUDA, torch and FlashInfer at the kit's pins" \
      org.opencontainers.image.revision="${GIT_REVISION}" \
      org.opencontainers.image.base.name="${CUDA_DEVEL_IMAGE}" \
      io.reprokit.image="workload" \
      io.reprokit.kit="${KIT}" \
      io.reprokit.pins="${PINS}" \
      io.reprokit.requirements="${REQUIREMENTS}"

# Numeric, so that a runtime can tell it is not root without reading /etc/passwd.
USER ${REPROKIT_UID}
WORKDIR /home/reprokit
CMD ["python3", "-m", "reprokit.workloads.fingerprint", "--out-dir", "/tmp/fingerprint"]

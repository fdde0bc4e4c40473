# The serve image: the pinned sglang release image plus the kit's helpers (reprokit/workloads).
#
# Build it with `invoke build --host NAME`: that passes the base as tag@digest from docker/images.lock.yml.
# By hand, from the repository root:
#   DOCKER_BUILDKIT=1 docker build -f docker/serve.Dockerfile \
#     --build-arg SGLANG_IMAGE=<tag@digest from docker/images.lock.yml> -t reprokit-serve .
#
# sglang, torch and FlashInfer are the release image's own: its sglang wheel pins them (`invoke check-pins`).

ARG SGLANG_IMAGE
FROM ${SGLANG_IMAGE}

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# The same uid as the host's reprokit user (ansible role `reprokit`), so run directories mounted in are writable.
ARG REPROKIT_UID=10001
RUN useradd --create-home --uid "${REPROKIT_UID}" --shell /bin/bash reprokit

COPY reprokit/__init__.py /opt/reprokit/reprokit/__init__.py
COPY reprokit/workloads /opt/reprokit/reprokit/workloads
ENV PYTHONPATH=/opt/reprokit \
    PYTHONUNBUFFERED=1

ARG SGLANG_IMAGE
ARG GIT_REVISION=unknown
ARG KIT=""
ARG PINS=""
LABEL org.opencontainers.image.title="reprokit serve" \
      org.opencontainers.image.description="the pinned sglang release image with reprokit's serve helpers" \
      org.opencontainers.image.revision="${GIT_REVISION}" \
      org.opencontainers.image.base.name="${SGLANG_IMAGE}" \
      io.reprokit.image="serve" \
      io.reprokit.kit="${KIT}" \
      io.reprokit.pins="${PINS}"

# Numeric, so that a runtime can tell it is not root without reading /etc/passwd.
USER ${REPROKIT_UID}
WORKDIR /home/reprokit

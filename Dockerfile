# One image for every mini-k8s component: the API server, controller-manager, scheduler and
# kubelets all run from it; docker-compose.yml picks the program with `command:`.
#
#   docker build -t mini-k8s .
#   docker run --rm -p 8080:8080 mini-k8s mini-apiserver --bind-address 0.0.0.0
#
# Why python:3.11-slim: the project needs Python 3.11 and nothing compiled that slim lacks
# (the dependencies ship wheels). No curl in it: healthchecks use Python's urllib instead.
#
# Without a registry or PyPI (a classroom behind a firewall), both are build inputs:
#   pip wheel --wheel-dir wheelhouse . setuptools     # where there is internet: every wheel we need
#   docker build --build-arg BASE_IMAGE=<a local image with python3.11, pip and `python`> -t mini-k8s .
# With a ./wheelhouse directory pip installs from it alone (--no-index); without one, from PyPI.
# tests/cluster/test_docker_engine.py builds that way from a Debian base made by debootstrap.
ARG BASE_IMAGE=python:3.11-slim

# Stage 1 installs into /staging; stage 2 copies only what was installed, so the sources and the
# wheelhouse (~30 MB) never become a layer of the image.
FROM ${BASE_IMAGE} AS install
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore
WORKDIR /src
# Sources only: .dockerignore keeps out the virtualenv, tests, local data and caches.
COPY . .
# A regular install (not editable): the console scripts mini-apiserver, mini-controller-manager,
# mini-scheduler, mini-kubelet, mini-kubectl and mini-k8s land on PATH. The project itself is always
# built from these sources (a wheelhouse supplies dependencies and the build backend, setuptools).
# --no-compile: pip would write bytecode for every installed file (27 MB, most of it modules no
# component imports, such as pygments' hundreds of lexers); the final stage compiles what is used.
# Swagger UI's source maps and ES-module bundles (7.6 MB) are left out: /docs loads only
# swagger-ui-bundle.js, swagger-ui.css and the favicon (apiserver/openapi/docs_page.py).
RUN if [ -d wheelhouse ]; then set -- --no-index --find-links wheelhouse; fi; \
    pip install --no-compile --root /staging "$@" . \
    && find /staging -path '*/swagger_ui_bundle/vendor/*' \( -name '*.map' -o -name '*es-bundle*' \) -delete

FROM ${BASE_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
COPY --from=install /staging/ /
# Bytecode for all of mini-k8s and for the dependency modules its programs import when they start:
# importing, with bytecode writing on, each program's main module and the modules its run() imports
# late (the API server's app and serving, the controller-manager's manager, the kubelet, `up`); a
# module imported later still, or a dependency's module no program uses, is compiled in memory when
# it is needed. The image's user cannot write next to the sources: what is not made here is never cached.
RUN PYTHONDONTWRITEBYTECODE= python -c "import compileall, importlib, pathlib; \
programs = 'apiserver controller_manager scheduler kubelet kubectl cluster cluster_dns metrics_server kube_proxy'; \
late = 'apiserver.app apiserver.serving controller_manager.manager kubelet.kubelet kubelet.server cluster.up'; \
packages = ['api', 'client', *programs.split()]; \
[compileall.compile_dir(str(pathlib.Path(importlib.import_module(p).__file__).parent), quiet=1) for p in packages]; \
[importlib.import_module(m) for m in [p + '.main' for p in programs.split()] + late.split()]"

# Components need no privileges; the API server's embedded store (when no etcd is given) lives
# in /var/lib/mini-k8s, owned by this user. /var/lib/mini-k8s/cluster is where docker-compose.yml
# mounts its `pki` volume (the certificates and kubeconfigs `mini-k8s certs` makes): a new named
# volume takes the owner of the directory it is mounted on, so this user can write it.
# nft, for mini-kube-proxy (docker-compose.yml's kube-proxy service): from the base image when it
# has it (the offline base does), else from Debian's archive (python:3.11-slim is Debian).
RUN command -v nft >/dev/null || { apt-get update && apt-get install -y --no-install-recommends nftables \
    && rm -rf /var/lib/apt/lists/*; }
RUN useradd --system --create-home --home-dir /var/lib/mini-k8s mini \
    && install -d -o mini -g mini -m 0755 /var/lib/mini-k8s/cluster
USER mini
WORKDIR /var/lib/mini-k8s

# The kubelet's port (logs, /healthz), the controller-manager's and scheduler's /healthz ports,
# and the API server's ports (plain and HTTPS).
EXPOSE 6443 8080 10250 10251 10252

CMD ["mini-apiserver", "--help"]

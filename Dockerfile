# One image for every mini-k8s component: the API server, controller-manager, scheduler and
# kubelets all run from it; docker-compose.yml picks the program with `command:`.
#
#   docker build -t mini-k8s .
#   docker run --rm -p 8080:8080 mini-k8s mini-apiserver --bind-address 0.0.0.0
#
# Why python:3.11-slim: the project needs Python 3.11 and nothing compiled that slim lacks
# (the dependencies ship wheels). No curl in it: healthchecks use Python's urllib instead.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src

# Sources only: .dockerignore keeps out the virtualenv, tests, local data and caches.
COPY . .

# A regular install (not editable): the console scripts mini-apiserver, mini-controller-manager,
# mini-scheduler, mini-kubelet, mini-kubectl and mini-k8s land on PATH.
RUN pip install . && rm -rf /src

# Components need no privileges; the API server's embedded store (when no etcd is given) lives
# in /var/lib/mini-k8s, owned by this user.
RUN useradd --system --create-home --home-dir /var/lib/mini-k8s mini
USER mini
WORKDIR /var/lib/mini-k8s

# The kubelet's port (logs, /healthz), the controller-manager's and scheduler's /healthz ports,
# and the API server's port.
EXPOSE 8080 10250 10251 10252

CMD ["mini-apiserver", "--help"]

# The two commands a newcomer needs: `make up` and `make test`.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: up down test lint bench clean etcd-cluster bytecode

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

# Where Python may not write bytecode (PYTHONDONTWRITEBYTECODE is set on some machines, this
# project's CI among them), every process compiles each module of ours again as it imports it:
# ~0.15 s of CPU per API server started. A test run and a cluster start hundreds of processes, so
# the bytecode is written once, explicitly, first (__pycache__/ is ignored by git).
PACKAGES := api apiserver client cluster cluster_dns controller_manager kube_proxy kubectl kubelet \
	metrics_server scheduler tests bench
# Best effort: a checkout where __pycache__ cannot be written still runs, only slower.
bytecode: $(STAMP)
	-$(BIN)/python -m compileall -q -j0 $(PACKAGES)

up: $(STAMP) bytecode
	$(BIN)/mini-k8s up --classroom --secure --data-dir .mini-k8s

down: $(STAMP)
	$(BIN)/mini-k8s down --data-dir .mini-k8s

lint: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check .
	$(BIN)/mypy

# Three workers on a two-core machine: with two, a quarter of the CPU sat idle while tests waited on
# their components' timers (16 min quiet, 20 beside a running `make up`); with three, the longest
# files first (tests/conftest.py), the CPU is 90-99 % busy and a run takes about 14 min.
test: lint bytecode
	$(BIN)/pytest -q -n 3 --dist loadfile --durations=25

# A three-member etcd cluster on this machine (client ports 2379, 22379, 32379; data in
# .etcd-cluster/), in the foreground: Ctrl-C stops all three. In another terminal:
#   mini-k8s up --etcd-servers http://127.0.0.1:2379,http://127.0.0.1:22379,http://127.0.0.1:32379
# Kill any one member (its pid is printed) and the cluster goes on; start it again with `make etcd-cluster`.
ETCD ?= etcd
ETCD_MEMBERS := m0=2379:2380 m1=22379:22380 m2=32379:32380
ETCD_PEERS := m0=http://127.0.0.1:2380,m1=http://127.0.0.1:22380,m2=http://127.0.0.1:32380
etcd-cluster:
	@mkdir -p .etcd-cluster; trap 'kill $$(jobs -p) 2>/dev/null; exit 0' INT TERM; \
	for m in $(ETCD_MEMBERS); do \
	  name=$${m%%=*}; ports=$${m#*=}; client=$${ports%%:*}; peer=$${ports#*:}; \
	  pgrep -f -- "--name $$name --data-dir .etcd-cluster/$$name " >/dev/null && { echo "$$name already running"; continue; }; \
	  $(ETCD) --name $$name --data-dir .etcd-cluster/$$name \
	    --listen-client-urls http://127.0.0.1:$$client --advertise-client-urls http://127.0.0.1:$$client \
	    --listen-peer-urls http://127.0.0.1:$$peer --initial-advertise-peer-urls http://127.0.0.1:$$peer \
	    --initial-cluster $(ETCD_PEERS) --initial-cluster-token mini-k8s-etcd3 --initial-cluster-state new \
	    --log-level warn --logger zap >.etcd-cluster/$$name.log 2>&1 & \
	  echo "$$name pid $$! on http://127.0.0.1:$$client (log .etcd-cluster/$$name.log)"; \
	done; \
	echo "--etcd-servers http://127.0.0.1:2379,http://127.0.0.1:22379,http://127.0.0.1:32379"; wait

bench: $(STAMP)
	$(BIN)/python bench/storage.py

clean:
	rm -rf $(VENV) .mini-k8s .etcd-cluster .pytest_cache .ruff_cache .hypothesis
